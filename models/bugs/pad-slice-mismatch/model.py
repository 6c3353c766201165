"""A token-wise layer, y = gelu(linear(x, w, b)), over a sequence of 7
tokens run sequence-parallel on 2 ranks, and ONE planted bug: pad and slice
bounds that disagree around the all-gather.

x is [7, D] (one sequence, tokens along dim 0).  7 tokens do not split in 2: rank 0 takes tokens 0:4 and rank 1 tokens 4:7
of the (replicated) input and runs the layer on them.  all_gather needs
equal sizes, so rank 1 pads its 3 output tokens to 4 with a zero token,
the outputs are all-gathered along the sequence (8 tokens) and the padding
is sliced off ([:7]).  The buggy code pads rank 1 at the FRONT
(F.pad(..., (0, 0, 1, 0))) but slices off the END: the output holds the pad
token at position 4 and loses the last real token.

Variants: bug (pad front, slice end), fixed (pad end, slice end).

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/pad-slice-mismatch/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, comm

BUNDLES = [(2, False, "bug"), (2, False, "fixed")]

SEQ, HIDDEN, OUT = 7, 8, 8


def layer(x, w, b):
    return {"y": F.gelu(F.linear(x, w, b))}


def _layer_sp(bug, x, w, b):
    n = len(x)
    t = x[0].shape[0]
    per = -(-t // n)                              # tokens per rank, the last has fewer
    out = []
    for r in range(n):
        lo, hi = r * per, min(t, (r + 1) * per)
        o = F.gelu(F.linear(x[r][lo:hi], w[r], b[r]))
        missing = per - (hi - lo)
        if missing:
            o = F.pad(o, (0, 0, missing, 0) if bug else (0, 0, 0, missing))   # BUG: front
        out.append(o)
    h = comm.gather_from_sp(out, dim=0)
    return {"y": [h[r][:t] for r in range(n)]}


def layer_sp_bug(**kw):
    return _layer_sp(True, **kw)


def layer_sp_fixed(**kw):
    return _layer_sp(False, **kw)


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    return Export(
        name=f"pad-slice-mismatch-sp{degree}" + ("" if bug else "-fixed"),
        description="Token-wise linear+GELU, 7 tokens padded to 8 for sequence parallelism. " + (
            "BUG ON PURPOSE: padded at the front, sliced at the end." if bug else
            "The fixed twin: padded and sliced at the end."),
        spec=layer, impl=layer_sp_bug if bug else layer_sp_fixed, degree=degree,
        expect_mismatch=bug,
        inputs={
            "x": Input((SEQ, HIDDEN), Replicate()),
            "w": Param((OUT, HIDDEN), Replicate(), scale=0.3),
            "b": Param((OUT,), Replicate(), scale=0.1),
        },
        outputs={"y": Replicate()},
    )
