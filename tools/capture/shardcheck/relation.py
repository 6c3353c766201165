"""relation.py -- how a tensor of the one-process run lies in the ranks'
tensors of the same name, read from their values (bundle-format.md,
"Expressions").

find(whole, pieces) -> Found or None, where pieces maps rank -> value:
  * replicated: every rank holding a tensor of the whole's shape holds the
    whole (equal values) -> one expression per replica, "rk.NAME";
  * split along a dim: each rank's tensor, cut into m equal blocks along
    dim d (m = 1, 2, 3, ...), is found block by block in the whole, and the
    blocks cover the whole exactly -> "cat(r0.NAME, r1.NAME, dim=d)" (even
    or uneven), or with m > 1 (fused blocks, such as a fused QKV weight)
    "cat(slice(r0.NAME, dim=d, start=.., end=..), slice(r1.NAME, ...), ...,
    dim=d)"; when several ranks hold the same block (a replicated split,
    as data parallelism over tensor parallelism gives), one expression per
    replica.
Inputs compare exactly (the program copies them); outputs within a
tolerance (sums in another order round differently).  Where values repeat
(a zero bias), several placements fit; the rank-order one is preferred and
Found.ambiguous says so, for the report.
"""

import torch


MAX_BLOCKS = 8      # fused blocks per rank tried (QKV: 3, gate/up: 2)


class Found:
    def __init__(self, exprs, kind, ambiguous=False):
        self.exprs, self.kind, self.ambiguous = exprs, kind, ambiguous


def close(a, b, exact):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if exact or not a.dtype.is_floating_point:
        return bool(torch.equal(a, b))
    a, b = a.double(), b.double()
    scale = max(b.abs().max().item() if b.numel() else 0.0, 1.0)
    return bool(((a - b).abs() <= 1e-5 * scale + 1e-4 * b.abs()).all())


def _ref(rank, name):
    return f"r{rank}.{name}"


def _offsets(whole, block, d, exact, prefer):
    """Offsets along d where block sits in whole; prefer first."""
    L, l = whole.shape[d], block.shape[d]
    cands = list(range(0, L - l + 1))
    if prefer in cands:
        cands.remove(prefer)
        cands.insert(0, prefer)
    return [o for o in cands if close(whole.narrow(d, o, l), block, exact)]


def _split(whole, pieces, name, d, exact):
    """The cover of whole along d by the ranks' blocks, or None."""
    L = whole.shape[d]
    found = {}               # (offset, length) -> [(rank, block start, block length)]
    ambiguous = False
    ranks = sorted(pieces)
    for pos, k in enumerate(ranks):
        v = pieces[k]
        if v.dim() != whole.dim() or any(v.shape[i] != whole.shape[i]
                                         for i in range(v.dim()) if i != d):
            return None
        lk = v.shape[d]
        if lk == 0 or lk > L:
            return None
        placed = None
        for m in range(1, min(lk, MAX_BLOCKS) + 1):
            if lk % m or L % m:
                continue
            b = lk // m
            blocks = []
            for j in range(m):
                # rank-order guess: block j of rank pos in slab j of the whole
                prefer = j * (L // m) + pos * b
                offs = _offsets(whole, v.narrow(d, j * b, b), d, exact, prefer)
                if not offs:
                    break
                ambiguous |= len(offs) > 1
                blocks.append((offs[0], b, j * b))
            if len(blocks) == m:
                placed = blocks
                break
        if placed is None:
            return None
        for off, b, start in placed:
            found.setdefault((off, b), []).append((k, start, b, lk))
    # an exact cover, in order
    spans = sorted(found)
    at = 0
    for off, b in spans:
        if off != at:
            return None
        at = off + b
    if at != L:
        return None
    replicas = max(len(v) for v in found.values())
    exprs = []
    for rep in range(replicas):
        parts = []
        for span in spans:
            holders = found[span]
            k, start, b, lk = holders[min(rep, len(holders) - 1)]
            if b == lk:
                parts.append(_ref(k, name))
            else:
                parts.append(f"slice({_ref(k, name)}, dim={d}, start={start}, end={start + b})")
        exprs.append(parts[0] if len(parts) == 1 else f"cat({', '.join(parts)}, dim={d})")
    kind = "fused blocks" if any(b != lk for v in found.values() for _, _, b, lk in v) else (
        "split evenly" if len({v[0][3] for v in found.values()}) == 1 else "split unevenly")
    return Found(exprs, f"{kind} along dim {d}", ambiguous)


def find(whole, pieces, name, exact=True, some=True):
    """How whole (the one-process value) lies in pieces {rank: value}.
    some: accept "whole on some ranks" when the others hold something else
    (right for an input, which the ranks may hold or not; never for an
    output, where every rank that returns it must hold it rightly)."""
    if not pieces:
        return None
    same = [k for k, v in sorted(pieces.items()) if v.shape == whole.shape]
    if same and all(close(pieces[k], whole, exact) for k in same) and len(same) == len(pieces):
        return Found([_ref(k, name) for k in same], "replicated")
    for d in range(whole.dim()):
        f = _split(whole, pieces, name, d, exact)
        if f is not None:
            return f
    # some ranks hold it whole: a replica is enough for an input
    good = [k for k in same if close(pieces[k], whole, exact)]
    if good and some:
        return Found([_ref(k, name) for k in good], "replicated on some ranks")
    return None
