"""The expert-parallel MoE layer of models/moe-ep plus a router auxiliary
loss, and ONE planted bug: the auxiliary loss is not divided by the number
of ranks.

The auxiliary loss is a router regularizer averaged over the tokens,
aux = sum_t sum_e probs[t, e]^2 / T (the sum of squared router
probabilities; like the router z-loss, a mean over tokens, so the mean
over all tokens is the average of the ranks' means over their T/n tokens).
Each rank sums over its tokens, the sums are all-reduced, and the total
must be divided by the global token count T.  The buggy code divides by the
rank's own token count T/n (the division by the data/expert-parallel size
forgotten): the aux loss, and the weight it gets in the training loss, is n
times too large.

Variants: bug (divided by T/n), fixed (divided by T = n * T/n).

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/moe-aux-loss-unscaled/model.py
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
    return gate / gate.sum(dim=-1, keepdim=True), selected, probs


def experts_mlp(tokens, w1, w2):
    return torch.bmm(F.gelu(torch.bmm(tokens, w1)), w2)


def aux_sum(probs):
    return (probs * probs).sum(dim=(0, 1))


def moe(x, w_router, w1, w2):
    gate, selected, probs = route(x, w_router)
    dispatched = x.unsqueeze(0) * selected.t().unsqueeze(-1)
    out = experts_mlp(dispatched, w1, w2)
    return {"y": (out * gate.t().unsqueeze(-1)).sum(dim=0), "aux": aux_sum(probs) / x.shape[0]}


def _moe_ep(bug, x, w_router, w1, w2):
    n = len(x)
    w_router = comm.copy_to_tp(w_router)
    routed = [route(x[r], w_router[r]) for r in range(n)]
    dispatched = [x[r].unsqueeze(0) * routed[r][1].t().unsqueeze(-1) for r in range(n)]
    received = comm.all_to_all(dispatched, split_dim=0, concat_dim=1)
    out = [experts_mlp(received[r], w1[r], w2[r]) for r in range(n)]
    returned = comm.all_to_all(out, split_dim=1, concat_dim=0)
    total = comm.all_reduce([aux_sum(routed[r][2]) for r in range(n)])
    tokens = x[0].shape[0] if bug else n * x[0].shape[0]   # BUG: the local token count
    aux = [total[r] / tokens for r in range(n)]
    return {"y": [(returned[r] * routed[r][0].t().unsqueeze(-1)).sum(dim=0)
                  for r in range(n)],
            "aux": aux}


def moe_ep_bug(**kw):
    return _moe_ep(True, **kw)


def moe_ep_fixed(**kw):
    return _moe_ep(False, **kw)


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    return Export(
        name=f"moe-aux-loss-unscaled-ep{degree}" + ("" if bug else "-fixed"),
        description="MoE layer, expert parallel, with a router auxiliary loss. " + (
            "BUG ON PURPOSE: the all-reduced auxiliary loss is divided by the local "
            "token count, not the global one (n times too large)."
            if bug else "The fixed twin: divided by the global token count."),
        spec=moe, impl=moe_ep_bug if bug else moe_ep_fixed, degree=degree,
        expect_mismatch=bug,
        inputs={
            "x": Input((TOKENS, D_MODEL), Shard(0)),
            "w_router": Param((D_MODEL, N_EXPERTS), Replicate()),
            "w1": Param((N_EXPERTS, D_MODEL, D_FF), Shard(0), scale=0.3),
            "w2": Param((N_EXPERTS, D_FF, D_MODEL), Shard(0), scale=0.3),
        },
        outputs={"y": Shard(0), "aux": Replicate()},
    )
