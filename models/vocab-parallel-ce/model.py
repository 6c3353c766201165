"""GPT-2's input and output ends: token embedding, final layer norm, tied LM
head and cross-entropy loss, with Megatron-LM's vocabulary parallelism.

VocabParallelEmbedding: each rank holds V/n rows of the embedding table.
A rank looks up the ids that fall in its range (others are clamped to row 0
and their result zeroed) and g (all-reduce forward) sums the ranks'
lookups.  The LM head reuses the same table (tied weights), so each rank
computes the logits of its V/n vocabulary entries.  _VocabParallelCrossEntropy
then needs three all-reduces: the max logit (for stability; no gradient),
the logit of the target (held by exactly one rank) and the sum of the
exponentials.

Export: /usr/bin/python3 tools/shardcheck-export models/vocab-parallel-ce/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False), (2, True), (4, False), (4, True)]

BATCH, SEQ, D_MODEL, VOCAB = 2, 4, 16, 64
EPS = 1e-5


def lm_loss(ids, targets, wte, lnf_w, lnf_b):
    """The sequential model: embed, normalize, tied LM head, mean cross-entropy."""
    h = F.embedding(ids, wte)
    h = F.layer_norm(h, (h.shape[-1],), lnf_w, lnf_b, EPS)
    logits = F.linear(h, wte)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
    return {"loss": loss}


def vocab_parallel_embedding(ids, wte):
    """megatron.core.tensor_parallel.layers.VocabParallelEmbedding.forward."""
    n = len(ids)
    part = []
    for r in range(n):
        size = wte[r].shape[0]
        start, end = r * size, (r + 1) * size
        outside = (ids[r] < start) | (ids[r] >= end)
        local = (ids[r] - start).masked_fill(outside, 0)
        part.append(F.embedding(local, wte[r]).masked_fill(outside.unsqueeze(-1), 0.0))
    return comm.reduce_from_tp(part)


def vocab_parallel_cross_entropy(logits, targets):
    """megatron.core.tensor_parallel.cross_entropy, forward; its backward is
    what autograd derives through the collectives' backward rules."""
    n = len(logits)
    size = logits[0].shape[-1]
    lmax = comm.all_reduce([lg.detach().amax(dim=-1) for lg in logits], op="max")
    shifted = [logits[r] - lmax[r].unsqueeze(-1) for r in range(n)]
    picked = []
    for r in range(n):
        start, end = r * size, (r + 1) * size
        outside = (targets[r] < start) | (targets[r] >= end)
        local = (targets[r] - start).masked_fill(outside, 0)
        p = torch.gather(shifted[r], -1, local.unsqueeze(-1)).squeeze(-1)
        picked.append(p.masked_fill(outside, 0.0))
    picked = comm.reduce_from_tp(picked)
    sum_exp = comm.reduce_from_tp([torch.exp(s).sum(dim=-1) for s in shifted])
    return [(torch.log(sum_exp[r]) - picked[r]).mean() for r in range(n)]


def lm_loss_vp(ids, targets, wte, lnf_w, lnf_b):
    n = len(ids)
    h = vocab_parallel_embedding(ids, wte)
    h = comm.copy_to_tp([F.layer_norm(h[r], (h[r].shape[-1],), lnf_w[r], lnf_b[r], EPS)
                         for r in range(n)])
    logits = [F.linear(h[r], wte[r]).view(-1, wte[r].shape[0]) for r in range(n)]
    return {"loss": vocab_parallel_cross_entropy(logits, [t.view(-1) for t in targets])}


def export(degree):
    tokens = dict(dtype=torch.int64, values=(0, VOCAB - 1))
    return Export(
        name=f"vocab-parallel-ce-tp{degree}",
        description="Embedding, final layer norm, tied LM head and cross-entropy; "
                    "Megatron vocabulary-parallel embedding and cross-entropy.",
        spec=lm_loss, impl=lm_loss_vp, degree=degree,
        inputs={
            "ids": Input((BATCH, SEQ), Replicate(), **tokens),
            "targets": Input((BATCH, SEQ), Replicate(), **tokens),
            "wte": Param((VOCAB, D_MODEL), Shard(0), scale=0.5),
            "lnf_w": Param((D_MODEL,), Replicate(), init=lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)),
            "lnf_b": Param((D_MODEL,), Replicate(), scale=0.1),
        },
        outputs={"loss": Replicate()},
    )
