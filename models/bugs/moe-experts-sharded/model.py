"""A data-parallel mixture-of-experts layer (the router and expert MLPs of
models/moe-ep, every rank running all the experts on its own tokens), and
ONE planted bug: the expert weights are sharded where they must be
replicated.

Data parallelism replicates the experts: w1 [E, D, F] and w2 [E, F, D] whole
on every rank.  The buggy configuration places them Shard(2) / Shard(1), the
expert-FFN split of expert tensor parallelism, as a wrong parallel plan or
checkpoint loader would: every rank then holds [E, D, F/n] and [E, F/n, D].
The shapes still fit (bmm contracts over F/n), so the code runs unchanged,
but each rank's experts compute only a partial sum over F/n hidden units
and nothing sums them.

Variants: bug (Shard(2) / Shard(1)), fixed (Replicate()).  The model code
is the same; only the placement differs.

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/moe-experts-sharded/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False, "bug"), (2, False, "fixed")]

TOKENS, D_MODEL, D_FF, N_EXPERTS, TOP_K = 16, 8, 16, 4, 2


def route(x, w_router):
    probs = F.softmax(torch.matmul(x, w_router), dim=-1)
    _, idx = torch.topk(probs, TOP_K, dim=-1)
    experts = torch.arange(probs.shape[-1])
    selected = (idx.unsqueeze(-1) == experts).to(probs.dtype).sum(dim=1)
    gate = probs * selected
    return gate / gate.sum(dim=-1, keepdim=True), selected


def experts_mlp(tokens, w1, w2):
    return torch.bmm(F.gelu(torch.bmm(tokens, w1)), w2)


def moe(x, w_router, w1, w2):
    gate, selected = route(x, w_router)
    dispatched = x.unsqueeze(0) * selected.t().unsqueeze(-1)
    out = experts_mlp(dispatched, w1, w2)
    return {"y": (out * gate.t().unsqueeze(-1)).sum(dim=0)}


def moe_dp(x, w_router, w1, w2):
    n = len(x)
    w_router = comm.copy_to_tp(w_router)
    w1, w2 = comm.copy_to_tp(w1), comm.copy_to_tp(w2)     # data parallel: grads all-reduced
    ys = []
    for r in range(n):
        gate, selected = route(x[r], w_router[r])
        out = experts_mlp(x[r].unsqueeze(0) * selected.t().unsqueeze(-1), w1[r], w2[r])
        ys.append((out * gate.t().unsqueeze(-1)).sum(dim=0))
    return {"y": ys}


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    return Export(
        name=f"moe-experts-sharded-dp{degree}" + ("" if bug else "-fixed"),
        description="MoE layer, data parallel (experts replicated). " + (
            "BUG ON PURPOSE: the expert weights are sharded along the FFN dim."
            if bug else "The fixed twin: expert weights replicated."),
        spec=moe, impl=moe_dp, degree=degree, expect_mismatch=bug,
        inputs={
            "x": Input((TOKENS, D_MODEL), Shard(0)),
            "w_router": Param((D_MODEL, N_EXPERTS), Replicate()),
            "w1": Param((N_EXPERTS, D_MODEL, D_FF), Shard(2) if bug else Replicate(), scale=0.3),   # BUG
            "w2": Param((N_EXPERTS, D_FF, D_MODEL), Shard(1) if bug else Replicate(), scale=0.3),   # BUG
        },
        outputs={"y": Shard(0)},
    )
