"""A mixture-of-experts layer (softmax router, top-2 routing, GELU expert
MLPs) with expert parallelism.

Expert parallelism: the tokens are split over the ranks (data parallel) and
so are the experts (each rank owns E/n of them, Shard(0) of the stacked
expert weights).  A rank routes its own tokens with the replicated router,
builds the per-expert dispatch buffer [E, T/n, D] (every token zeroed for
the experts that did not select it: capacity T/n, so no token is dropped),
and an all_to_all sends each expert group its rows (split along experts,
concatenated along tokens).  Each rank runs its experts on the tokens of
every rank, a second all_to_all returns the results (split along tokens,
concatenated along experts), and each rank combines them with its gate
weights.  The router weight sees only the rank's tokens, so its gradient
is all-reduced (comm.copy_to_tp: identity forward, all-reduce backward),
as data parallelism does.

Export: /usr/bin/python3 tools/shardcheck-export models/moe-ep/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False), (2, True), (4, False), (4, True)]

TOKENS, D_MODEL, D_FF, N_EXPERTS, TOP_K = 16, 8, 16, 4, 2


def route(x, w_router):
    """Gate weights [T, E]: softmax probabilities of the top-k experts of
    every token, renormalized; zero for the experts not selected."""
    probs = F.softmax(torch.matmul(x, w_router), dim=-1)
    _, idx = torch.topk(probs, TOP_K, dim=-1)
    experts = torch.arange(probs.shape[-1])
    selected = (idx.unsqueeze(-1) == experts).to(probs.dtype).sum(dim=1)
    gate = probs * selected
    return gate / gate.sum(dim=-1, keepdim=True), selected


def experts_mlp(tokens, w1, w2):
    """tokens [E', T, D] through E' expert MLPs [E', D, F], [E', F, D]."""
    return torch.bmm(F.gelu(torch.bmm(tokens, w1)), w2)


def moe(x, w_router, w1, w2):
    """The sequential layer: every expert on its selected tokens."""
    gate, selected = route(x, w_router)
    dispatched = x.unsqueeze(0) * selected.t().unsqueeze(-1)           # [E, T, D]
    out = experts_mlp(dispatched, w1, w2)                              # [E, T, D]
    return {"y": (out * gate.t().unsqueeze(-1)).sum(dim=0)}


def moe_ep(x, w_router, w1, w2):
    n = len(x)
    w_router = comm.copy_to_tp(w_router)
    routed = [route(x[r], w_router[r]) for r in range(n)]
    dispatched = [x[r].unsqueeze(0) * routed[r][1].t().unsqueeze(-1) for r in range(n)]
    received = comm.all_to_all(dispatched, split_dim=0, concat_dim=1)   # [E/n, T, D]
    out = [experts_mlp(received[r], w1[r], w2[r]) for r in range(n)]
    returned = comm.all_to_all(out, split_dim=1, concat_dim=0)          # [E, T/n, D]
    return {"y": [(returned[r] * routed[r][0].t().unsqueeze(-1)).sum(dim=0)
                  for r in range(n)]}


def export(degree):
    return Export(
        name=f"moe-ep{degree}",
        description="Mixture-of-experts layer, top-2 routing, expert parallelism "
                    "with all_to_all dispatch and combine.",
        spec=moe, impl=moe_ep, degree=degree,
        inputs={
            "x": Input((TOKENS, D_MODEL), Shard(0)),
            "w_router": Param((D_MODEL, N_EXPERTS), Replicate()),
            "w1": Param((N_EXPERTS, D_MODEL, D_FF), Shard(0), scale=0.3),
            "w2": Param((N_EXPERTS, D_FF, D_MODEL), Shard(0), scale=0.3),
        },
        outputs={"y": Shard(0)},
    )
