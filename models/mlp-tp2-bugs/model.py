"""The Megatron MLP of models/mlp-tp2 (y = gelu(x @ w1) @ w2, two ranks,
fc1 column-parallel, fc2 row-parallel, all_reduce of the partial sums),
each variant with one bug planted on purpose, and one correct twin.

Variants (one bundle each, VARIANT.json, bundle name mlp-tp2-VARIANT):
  sharded-input            x split along the batch where column-parallel
                           fc1 needs it whole on every rank
  missing-allreduce        no all_reduce: each rank returns its partial sum
  allgather-for-allreduce  the partial sums all-gathered instead of reduced;
                           the author expects y in the first rows
  extra-scaling            the all-reduced sum divided by the TP size
  slice-offset             w1 replicated, both ranks slice its columns 0:8
                           (rank 1 should take 8:16)
  slice-correct            the correct twin of slice-offset

Every bug is confirmed on numbers at export time (expect_mismatch: an
expected output relation must fail); tests/models/verdicts.json pins what
shardcheck reports.

Export: /usr/bin/python3 tools/shardcheck-export models/mlp-tp2-bugs/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, Slice, comm

VARIANTS = ("sharded-input", "missing-allreduce", "allgather-for-allreduce",
            "extra-scaling", "slice-offset", "slice-correct")
BUNDLES = [(2, False, v) for v in VARIANTS]

BATCH, HIDDEN, FFN = 4, 8, 16


def mlp(x, w1, w2):
    """The sequential model."""
    h = x @ w1
    g = F.gelu(h)
    return {"y": g @ w2}


def partial_products(x, w1, w2):
    return [F.gelu(x[r] @ w1[r]) @ w2[r] for r in range(len(x))]


def sharded_input(x, w1, w2):
    # the code is right for a replicated x; the bug is that x is sharded
    return {"y": comm.all_reduce(partial_products(x, w1, w2))}


def missing_allreduce(x, w1, w2):
    return {"y": partial_products(x, w1, w2)}


def allgather_for_allreduce(x, w1, w2):
    return {"y": comm.all_gather(partial_products(x, w1, w2), 0)}


def extra_scaling(x, w1, w2):
    n = len(x)
    s = comm.all_reduce(partial_products(x, w1, w2))
    return {"y": [s[r] / n for r in range(n)]}


def slicing(offset1):
    def impl(x, w1, w2):
        n = len(x)
        cols = FFN // n
        start = [0 if r == 0 else offset1 for r in range(n)]
        mine = [w1[r][:, start[r]:start[r] + cols] for r in range(n)]
        return {"y": comm.all_reduce(partial_products(x, mine, w2))}
    return impl


IMPLS = {
    "sharded-input": sharded_input,
    "missing-allreduce": missing_allreduce,
    "allgather-for-allreduce": allgather_for_allreduce,
    "extra-scaling": extra_scaling,
    "slice-offset": slicing(0),
    "slice-correct": slicing(FFN // 2),
}

DESCRIPTIONS = {
    "sharded-input": "BUG ON PURPOSE: x is split along the batch where Megatron's "
                     "column-parallel fc1 needs it replicated; fc1 cannot be mapped.",
    "missing-allreduce": "BUG ON PURPOSE: the all_reduce after the row-parallel fc2 is "
                         "missing; y is only the sum of the ranks' outputs, not on each rank "
                         "as expected.",
    "allgather-for-allreduce": "BUG ON PURPOSE: the partial sums are all-gathered instead of "
                               "all-reduced; y is not on any rank.",
    "extra-scaling": "BUG ON PURPOSE: the all-reduced output is divided by the TP size, as if "
                     "it were an average; y is not on any rank.",
    "slice-offset": "BUG ON PURPOSE: both ranks slice columns 0:8 of the replicated w1 (rank 1 "
                    "should take 8:16); fc1 cannot be mapped.",
    "slice-correct": "Correct: w1 replicated, each rank slices its own 8 columns.",
}


def export(degree=2, variant="slice-correct"):
    if variant not in IMPLS:
        raise ValueError(f"unknown variant {variant!r}; one of {', '.join(VARIANTS)}")
    x = Shard(0) if variant == "sharded-input" else Replicate()
    w1 = Replicate() if variant.startswith("slice-") else Shard(1)
    y = {"sharded-input": Shard(0),
         "allgather-for-allreduce": Slice(0, 0, BATCH)}.get(variant, Replicate())
    return Export(
        name=f"mlp-tp2-{variant}", bundle_name=f"mlp-tp2-{variant}",
        filename=f"{variant}.json",
        description=DESCRIPTIONS[variant],
        spec=mlp, impl=IMPLS[variant], degree=degree,
        expect_mismatch=variant != "slice-correct",
        inputs={
            "x": Input((BATCH, HIDDEN), x),
            "w1": Param((HIDDEN, FFN), w1),
            "w2": Param((FFN, HIDDEN), Shard(0)),
        },
        outputs={"y": y},
    )
