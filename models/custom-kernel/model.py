"""A SwiGLU MLP whose activation is a fused custom kernel, with Megatron-LM
tensor parallelism: the worked example of docs/custom-kernels.md.

The model calls two custom operators, registered with torch.library in
namespace `mylib` as a user's fused CUDA kernels would be (here their
kernels are written in PyTorch, so that the exporter can confirm the
relations on numbers):

    mylib::rms_norm(Tensor x, Tensor w, float eps) -> Tensor
        x * rsqrt(mean(x^2, -1) + eps) * w
    mylib::silu_and_mul(Tensor x) -> Tensor
        for x [.., 2f]: silu(x[.., :f]) * x[.., f:]      (vLLM's fused SwiGLU)

y = down(silu_and_mul(cat(gate(h), up(h), -1))) with h = rms_norm(x, g).
Under TP the gate and up projections are column-parallel (each rank holds
its slices of both), the kernel runs on each rank's [gate_r | up_r], and the
down projection is row-parallel with an all-reduce.  shardcheck knows
nothing of `mylib`: models/custom-kernel/mylib.lemma declares the two
operators and states how silu_and_mul splits.

Export: /usr/bin/python3 tools/shardcheck-export models/custom-kernel/model.py
Check:  build/src/cli/shardcheck check --lemmas models/custom-kernel \
            models/custom-kernel/custom-kernel-tp2-fwd.json
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False), (4, False)]

TOKENS, HIDDEN, FFN = 4, 8, 16
EPS = 1e-6

_LIB = None


def _rms_norm_kernel(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _silu_and_mul_kernel(x):
    f = x.shape[-1] // 2
    return F.silu(x[..., :f]) * x[..., f:]


def mylib():
    """Register the custom operators once per process."""
    global _LIB
    if _LIB is None:
        lib = torch.library.Library("mylib", "DEF")
        lib.define("rms_norm(Tensor x, Tensor w, float eps) -> Tensor")
        lib.impl("rms_norm", _rms_norm_kernel, "CompositeExplicitAutograd")
        lib.define("silu_and_mul(Tensor x) -> Tensor")
        lib.impl("silu_and_mul", _silu_and_mul_kernel, "CompositeExplicitAutograd")
        _LIB = lib
    return torch.ops.mylib


def swiglu_mlp(x, g, w_gate, w_up, w_down):
    """The sequential model."""
    ops = mylib()
    h = ops.rms_norm(x, g, EPS)
    a = ops.silu_and_mul(torch.cat((F.linear(h, w_gate), F.linear(h, w_up)), dim=-1))
    return {"y": F.linear(a, w_down)}


def swiglu_mlp_tp(x, g, w_gate, w_up, w_down):
    """Every argument is the list of per-rank tensors."""
    ops = mylib()
    n = len(x)
    xs = comm.copy_to_tp(x)                                       # f
    part = []
    for r in range(n):
        h = ops.rms_norm(xs[r], g[r], EPS)
        a = ops.silu_and_mul(torch.cat((F.linear(h, w_gate[r]), F.linear(h, w_up[r])), dim=-1))
        part.append(F.linear(a, w_down[r]))
    return {"y": comm.reduce_from_tp(part)}                       # g


def export(degree):
    return Export(
        name=f"custom-kernel-tp{degree}",
        description="SwiGLU MLP with fused custom kernels mylib::rms_norm and "
                    "mylib::silu_and_mul, Megatron column- then row-parallel; "
                    "check with --lemmas models/custom-kernel.",
        spec=swiglu_mlp, impl=swiglu_mlp_tp, degree=degree,
        inputs={
            "x": Input((TOKENS, HIDDEN), Replicate()),
            "g": Param((HIDDEN,), Replicate()),
            "w_gate": Param((FFN, HIDDEN), Shard(0)),
            "w_up": Param((FFN, HIDDEN), Shard(0)),
            "w_down": Param((HIDDEN, FFN), Shard(1)),
        },
        outputs={"y": Replicate()},
    )
