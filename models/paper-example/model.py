"""GraphGuard's running example (Figures 1 and 2 of the paper):

    C = matmul(A, B)        A [4, 8], B [8, 6]
    F = C - E               E [4, 6]

Distributed on two ranks: rank r holds a column block of A and the matching
row block of B, so its product C_r is a partial sum of C; a reduce_scatter
along the rows sums the partials and leaves each rank half of the rows of
C (the paper's D_r); E is split by rows and each rank computes
F_r = D_r - E_r.  The checker must find C = sum(C_0, C_1) and
C = cat(D_0, D_1, dim=0) on the way (the paper's R_C).

Export: /usr/bin/python3 tools/shardcheck-export models/paper-example/model.py
"""

import torch

from shardcheck_export import Export, Input, Shard, comm

BUNDLES = [(2, False)]


def figure1(A, B, E):
    """G_s: the sequential graph."""
    C = torch.matmul(A, B)
    return {"F": C - E}


def figure1_distributed(A, B, E):
    """G_d: every argument is the list of the ranks' blocks."""
    n = len(A)
    C = [torch.matmul(A[r], B[r]) for r in range(n)]      # partial sums of C
    D = comm.reduce_scatter(C, 0)                          # rank r: rows r of sum(C)
    return {"F": [D[r] - E[r] for r in range(n)]}


def export(degree=2):
    return Export(
        name="paper-example", bundle_name="paper-example", filename="bundle.json",
        description="GraphGuard Figure 1/2: C = matmul(A, B); F = C - E. Rank r holds A_r "
                    "(A split along dim 1) and B_r (B split along dim 0); the partial products "
                    "are reduce-scattered along dim 0; F_r = D_r - E_r with E split along dim 0.",
        spec=figure1, impl=figure1_distributed, degree=degree,
        inputs={
            "A": Input((4, 8), Shard(1)),
            "B": Input((8, 6), Shard(0)),
            "E": Input((4, 6), Shard(0)),
        },
        outputs={"F": Shard(0)},
    )
