"""comm.py -- simulated collectives for distributed code written in one process.

A distributed program is simulated by holding, for every tensor, the list of
its per-rank values (rank order).  Each collective here takes that list and
returns the list of per-rank results, and traces (make_fx, torch 1.13 and
2.x) as ONE node of a torch.library custom op in namespace
``shardcheck_comm``; the exporter renames those nodes to the bundle's
``comm.*`` operators (bundle-format.md, "Collectives").

Invariants:
  * every custom op returns fresh tensors (never an input), so that the
    graph stays functional;
  * each autograd-aware wrapper states its backward explicitly, as a real
    distributed program computes it rank by rank.  Two families exist:
      - plain collectives (all_reduce, all_gather, reduce_scatter,
        all_to_all, broadcast) whose backward is the adjoint collective, as
        torch.distributed.nn.functional defines it;
      - Megatron-LM's mappings (copy_to_tp / reduce_from_tp, the f/g pair;
        scatter_to_tp / gather_from_tp; scatter_to_sp / gather_from_sp /
        reduce_scatter_to_sp), whose forward and backward are conjugate and
        which give correct gradients only when used in their pairs.
"""

import torch

NAMESPACE = "shardcheck_comm"

# bundle op name for every custom op of the namespace
BUNDLE_OPS = {
    "all_reduce": "comm.all_reduce.default",
    "all_gather": "comm.all_gather.default",
    "reduce_scatter": "comm.reduce_scatter.default",
    "all_to_all": "comm.all_to_all.default",
    "broadcast": "comm.broadcast.default",
}

_REDUCE_OPS = ("sum", "avg", "max", "min")


def _reduce(inputs, op):
    if op not in _REDUCE_OPS:
        raise ValueError(f"unknown reduction {op!r}; expected one of {_REDUCE_OPS}")
    acc = inputs[0]
    for t in inputs[1:]:
        if op in ("sum", "avg"):
            acc = acc + t
        elif op == "max":
            acc = torch.maximum(acc, t)
        else:
            acc = torch.minimum(acc, t)
    if op == "avg":
        acc = acc / len(inputs)
    return acc


def _k_all_reduce(inputs, op="sum"):
    r = _reduce(list(inputs), op)
    return [r.clone() for _ in inputs]


def _k_all_gather(inputs, dim):
    r = torch.cat(list(inputs), dim)
    return [r.clone() for _ in inputs]


def _k_reduce_scatter(inputs, dim, op="sum"):
    r = _reduce(list(inputs), op)
    n = len(inputs)
    if r.shape[dim] % n:
        raise ValueError(f"reduce_scatter: size {r.shape[dim]} of dim {dim} "
                         f"does not split into {n} equal parts")
    return [c.clone() for c in torch.chunk(r, n, dim)]


def _k_all_to_all(inputs, split_dim, concat_dim):
    n = len(inputs)
    for t in inputs:
        if t.shape[split_dim] % n:
            raise ValueError(f"all_to_all: size {t.shape[split_dim]} of dim "
                             f"{split_dim} does not split into {n} equal parts")
    chunks = [torch.chunk(t, n, split_dim) for t in inputs]
    return [torch.cat([chunks[j][i] for j in range(n)], concat_dim)
            for i in range(n)]


def _k_broadcast(inputs, src=0):
    return [inputs[src].clone() for _ in inputs]


_SCHEMAS = {
    "all_reduce": ("all_reduce(Tensor[] inputs, str op=\"sum\") -> Tensor[]", _k_all_reduce),
    "all_gather": ("all_gather(Tensor[] inputs, int dim) -> Tensor[]", _k_all_gather),
    "reduce_scatter": ("reduce_scatter(Tensor[] inputs, int dim, str op=\"sum\") -> Tensor[]",
                       _k_reduce_scatter),
    "all_to_all": ("all_to_all(Tensor[] inputs, int split_dim, int concat_dim) -> Tensor[]",
                   _k_all_to_all),
    "broadcast": ("broadcast(Tensor[] inputs, int src=0) -> Tensor[]", _k_broadcast),
}

_LIB = None


def _library():
    """Define the custom ops once per process (torch refuses a second DEF)."""
    global _LIB
    if _LIB is None:
        lib = torch.library.Library(NAMESPACE, "DEF")
        for name, (schema, kernel) in _SCHEMAS.items():
            lib.define(schema)
            lib.impl(name, kernel, "CompositeExplicitAutograd")
        _LIB = lib
    return getattr(torch.ops, NAMESPACE)


def _op(name):
    return getattr(_library(), name).default


def _check(xs, what):
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{what}: expected a non-empty list of per-rank tensors")
    for t in xs:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{what}: expected tensors, found {type(t).__name__}")
    return list(xs)


# --- raw collectives, no autograd (used by backward formulas) --------------

def _raw_all_reduce(xs, op="sum"):
    return list(_op("all_reduce")(list(xs), op))


def _raw_all_gather(xs, dim):
    return list(_op("all_gather")(list(xs), dim))


def _raw_reduce_scatter(xs, dim, op="sum"):
    return list(_op("reduce_scatter")(list(xs), dim, op))


def _raw_all_to_all(xs, split_dim, concat_dim):
    return list(_op("all_to_all")(list(xs), split_dim, concat_dim))


def _raw_broadcast(xs, src=0):
    return list(_op("broadcast")(list(xs), src))


def _local_split(xs, dim):
    """Rank i keeps the i-th of n equal chunks of its own tensor (no comm)."""
    n = len(xs)
    out = []
    for i, t in enumerate(xs):
        if t.shape[dim] % n:
            raise ValueError(f"split: size {t.shape[dim]} of dim {dim} does not "
                             f"split into {n} equal parts")
        size = t.shape[dim] // n
        out.append(t.narrow(dim, i * size, size))
    return out


def _apply(fn_class, xs, *params):
    return list(fn_class.apply(len(xs), params, *xs))


def _make(name, fwd, bwd):
    """Build an autograd.Function from forward/backward list -> list maps."""

    def forward(ctx, n, params, *xs):
        ctx.params = params
        return tuple(fwd(list(xs), *params))

    def backward(ctx, *gs):
        # autograd materializes the gradient of an unused output as zeros
        return (None, None) + tuple(bwd(list(gs), *ctx.params))

    return type(name, (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


_AllReduce = _make("AllReduce",
                   lambda xs, op: _raw_all_reduce(xs, op),
                   lambda gs, op: _raw_all_reduce(gs, op)
                   if op in ("sum", "avg") else _no_grad("all_reduce", op))
_AllGather = _make("AllGather",
                   lambda xs, dim: _raw_all_gather(xs, dim),
                   lambda gs, dim: _raw_reduce_scatter(gs, dim, "sum"))
_ReduceScatter = _make("ReduceScatter",
                       lambda xs, dim: _raw_reduce_scatter(xs, dim, "sum"),
                       lambda gs, dim: _raw_all_gather(gs, dim))
_AllToAll = _make("AllToAll",
                  lambda xs, s, c: _raw_all_to_all(xs, s, c),
                  lambda gs, s, c: _raw_all_to_all(gs, c, s))
_CopyToTP = _make("CopyToTP",
                  lambda xs: [x.view_as(x) for x in xs],
                  lambda gs: _raw_all_reduce(gs, "sum"))
_ReduceFromTP = _make("ReduceFromTP",
                      lambda xs: _raw_all_reduce(xs, "sum"),
                      lambda gs: [g.view_as(g) for g in gs])
_ScatterToTP = _make("ScatterToTP",
                     lambda xs, dim: _local_split(xs, dim),
                     lambda gs, dim: _raw_all_gather(gs, dim))
_GatherFromTP = _make("GatherFromTP",
                      lambda xs, dim: _raw_all_gather(xs, dim),
                      lambda gs, dim: _local_split(gs, dim))
_GatherFromSP = _make("GatherFromSP",
                      lambda xs, dim: _raw_all_gather(xs, dim),
                      lambda gs, dim: _raw_reduce_scatter(gs, dim, "sum"))
_ReduceScatterToSP = _make("ReduceScatterToSP",
                           lambda xs, dim: _raw_reduce_scatter(xs, dim, "sum"),
                           lambda gs, dim: _raw_all_gather(gs, dim))


def _no_grad(what, op):
    raise RuntimeError(f"{what}(op={op!r}) has no backward in the simulated world")


def _broadcast_bwd(gs, src):
    total = _raw_all_reduce(gs, "sum")
    return [total[i] if i == src else torch.zeros_like(gs[i]) for i in range(len(gs))]


_Broadcast = _make("Broadcast",
                   lambda xs, src: _raw_broadcast(xs, src),
                   _broadcast_bwd)


# --- public API --------------------------------------------------------------

def all_reduce(xs, op="sum"):
    """Every rank gets the reduction of all ranks' tensors.
    Backward (op sum/avg): the same all_reduce of the gradients, as in
    torch.distributed.nn.functional.all_reduce."""
    xs = _check(xs, "all_reduce")
    return _apply(_AllReduce, xs, op)


def all_gather(xs, dim):
    """Every rank gets cat(xs, dim).  Backward: reduce_scatter along dim."""
    return _apply(_AllGather, _check(xs, "all_gather"), dim)


def reduce_scatter(xs, dim):
    """Rank i gets chunk i of sum(xs) along dim.  Backward: all_gather."""
    return _apply(_ReduceScatter, _check(xs, "reduce_scatter"), dim)


def all_to_all(xs, split_dim, concat_dim):
    """Rank i gets cat(chunk_i(xs[0]), ..., chunk_i(xs[n-1]), concat_dim),
    chunks along split_dim.  Backward: all_to_all with the dims swapped."""
    return _apply(_AllToAll, _check(xs, "all_to_all"), split_dim, concat_dim)


def broadcast(xs, src=0):
    """Every rank gets xs[src].  Backward: the summed gradient, on src."""
    return _apply(_Broadcast, _check(xs, "broadcast"), src)


def copy_to_tp(xs):
    """Megatron's f: identity forward, all_reduce backward.  Use it where a
    replicated activation enters column-parallel layers."""
    return _apply(_CopyToTP, _check(xs, "copy_to_tp"))


def reduce_from_tp(xs):
    """Megatron's g: all_reduce forward, identity backward.  Use it where the
    partial sums of row-parallel layers are combined."""
    return _apply(_ReduceFromTP, _check(xs, "reduce_from_tp"))


def scatter_to_tp(xs, dim=-1):
    """Rank i keeps chunk i of its replicated tensor (no communication);
    backward all_gather along dim."""
    return _apply(_ScatterToTP, _check(xs, "scatter_to_tp"), dim)


def gather_from_tp(xs, dim=-1):
    """all_gather forward, keep-own-chunk backward (Megatron's
    gather_from_tensor_model_parallel_region)."""
    return _apply(_GatherFromTP, _check(xs, "gather_from_tp"), dim)


def scatter_to_sp(xs, dim=0):
    """Sequence parallelism: rank i keeps chunk i along the sequence dim;
    backward all_gather."""
    return _apply(_ScatterToTP, _check(xs, "scatter_to_sp"), dim)


def gather_from_sp(xs, dim=0):
    """Sequence parallelism: all_gather forward, reduce_scatter backward
    (the gathered activation feeds tensor-parallel layers)."""
    return _apply(_GatherFromSP, _check(xs, "gather_from_sp"), dim)


def reduce_scatter_to_sp(xs, dim=0):
    """Sequence parallelism: reduce_scatter forward, all_gather backward
    (the partial sums of row-parallel layers, scattered along the sequence)."""
    return _apply(_ReduceScatterToSP, _check(xs, "reduce_scatter_to_sp"), dim)


__all__ = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
           "broadcast", "copy_to_tp", "reduce_from_tp", "scatter_to_tp",
           "gather_from_tp", "scatter_to_sp", "gather_from_sp",
           "reduce_scatter_to_sp", "NAMESPACE", "BUNDLE_OPS"]
