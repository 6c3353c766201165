"""layout.py -- meshes and per-mesh-dim placements of a distributed tensor.

A mesh is a tuple of sizes (1-D: (n,), 2-D: (a, b)); rank r has the
coordinates of r in row-major order over the mesh.  A layout gives, for
every mesh dim k, one placement:
  "R"         replicated over mesh dim k
  "P"         partial sums over mesh dim k (the value is their sum)
  ("S", d)    tensor dim d cut into mesh[k] equal chunks, chunk c_k on coord c_k
  ("U", d)    tensor dim d cut into chunks of ceil(size/mesh[k]), the last
              ones padded with zeros (an uneven split)
Invariant: a tensor dim is cut by at most one mesh dim, so gathering over
one mesh dim never reorders another's chunks.

MeshPlacement is an exporter Placement (tools/export): it cuts a full tensor
into per-rank tensors and writes the clean expressions that rebuild it.
"""

import itertools

import torch

from shardcheck_export.placement import Placement


def coords(mesh, r):
    out = []
    for m in reversed(mesh):
        out.append(r % m)
        r //= m
    return tuple(reversed(out))


def rank_of(mesh, c):
    r = 0
    for m, ci in zip(mesh, c):
        r = r * m + ci
    return r


def nranks(mesh):
    n = 1
    for m in mesh:
        n *= m
    return n


def groups(mesh, k):
    """The groups of mesh dim k: lists of ranks (coordinate k varying)."""
    others = [range(m) for j, m in enumerate(mesh) if j != k]
    out = []
    for rest in itertools.product(*others):
        g = []
        for ck in range(mesh[k]):
            c = list(rest)
            c.insert(k, ck)
            g.append(rank_of(mesh, c))
        out.append(g)
    return out


def is_shard(p):
    return isinstance(p, tuple) and p[0] == "S"


def is_uneven(p):
    return isinstance(p, tuple) and p[0] == "U"


def cut_dim(p):
    return p[1] if isinstance(p, tuple) else None


def ceil_div(a, b):
    return -(-a // b)


def local_shape(shape, layout, mesh):
    s = list(shape)
    for k, p in enumerate(layout):
        if is_shard(p):
            assert s[p[1]] % mesh[k] == 0, (shape, layout, mesh)
            s[p[1]] //= mesh[k]
        elif is_uneven(p):
            s[p[1]] = ceil_div(s[p[1]], mesh[k])
    return s


def valid(layout, shape, mesh):
    """Can a tensor of this global shape hold this layout?"""
    dims = [cut_dim(p) for p in layout if cut_dim(p) is not None]
    if len(set(dims)) != len(dims):
        return False
    for k, p in enumerate(layout):
        if is_shard(p) and (p[1] >= len(shape) or shape[p[1]] % mesh[k]):
            return False
        if is_uneven(p) and (p[1] >= len(shape) or shape[p[1]] < 2):
            return False
    return True


def _uneven_bounds(size, m, c):
    w = ceil_div(size, m)
    lo = min(size, c * w)
    hi = min(size, (c + 1) * w)
    return lo, hi, w


def cut(full, layout, mesh, gen=None):
    """Per-rank tensors of `full` (partials are random splits, from gen)."""
    n = nranks(mesh)
    pieces = []
    partial_parts = {}
    assert sum(1 for p in layout if p == "P") <= 1, "one partial mesh dim per input"

    for k, p in enumerate(layout):
        if p == "P":
            m = mesh[k]
            parts = [torch.randn(full.shape, generator=gen, dtype=full.dtype)
                     for _ in range(m - 1)] if full.dtype.is_floating_point else \
                [torch.zeros_like(full) for _ in range(m - 1)]
            parts.append(full - sum(parts))
            partial_parts[k] = parts
    for r in range(n):
        c = coords(mesh, r)
        t = full
        for k in partial_parts:          # at most one partial mesh dim
            t = partial_parts[k][c[k]]
        for k, p in enumerate(layout):
            if is_shard(p):
                t = torch.chunk(t, mesh[k], p[1])[c[k]]
            elif is_uneven(p):
                lo, hi, w = _uneven_bounds(full.shape[p[1]], mesh[k], c[k])
                piece = t.narrow(p[1], lo, hi - lo)
                if hi - lo < w:
                    padshape = list(piece.shape)
                    padshape[p[1]] = w - (hi - lo)
                    piece = torch.cat([piece, torch.zeros(padshape, dtype=t.dtype)], p[1])
                t = piece
        pieces.append(t.clone().contiguous())
    return pieces


def rebuild(pieces, layout, mesh, shape):
    """The full tensor from per-rank pieces (the inverse of cut)."""
    return _rebuild(pieces, layout, mesh, shape, 0, [])


def _rebuild(pieces, layout, mesh, shape, k, prefix):
    if k == len(mesh):
        return pieces[rank_of(mesh, prefix)]
    subs = [_rebuild(pieces, layout, mesh, shape, k + 1, prefix + [c]) for c in range(mesh[k])]
    p = layout[k]
    if p == "R":
        return subs[0]
    if p == "P":
        out = subs[0]
        for s in subs[1:]:
            out = out + s
        return out
    if is_shard(p):
        return torch.cat(subs, p[1])
    d = p[1]
    parts = []
    for c, s in enumerate(subs):
        lo, hi, _ = _uneven_bounds(shape[d], mesh[k], c)
        if hi > lo:
            parts.append(s.narrow(d, 0, hi - lo))
    return torch.cat(parts, d)


def exprs(names, layout, mesh, shape):
    """Clean expressions over per-rank names that rebuild the full tensor;
    one expression per replica choice."""
    return _exprs(names, layout, mesh, shape, 0, [])


def _exprs(names, layout, mesh, shape, k, prefix):
    if k == len(mesh):
        return [names[rank_of(mesh, prefix)]]
    subs = [_exprs(names, layout, mesh, shape, k + 1, prefix + [c]) for c in range(mesh[k])]
    p = layout[k]
    if p == "R":
        out = []
        for s in subs:
            out += s
        return out
    # one representative per sub-choice: the i-th alternative of every coord
    width = min(len(s) for s in subs)
    out = []
    for i in range(width):
        items = [s[i] for s in subs]
        if p == "P":
            out.append(f"sum({', '.join(items)})")
        elif is_shard(p):
            out.append(f"cat({', '.join(items)}, dim={p[1]})")
        else:
            d = p[1]
            parts = []
            for c, it in enumerate(items):
                # a rank past the last block holds an empty piece: it is
                # named all the same (start=0, end=0), so that the relation
                # says what every rank holds and a checker relates each
                # rank's piece (a gather reads them all)
                lo, hi, _ = _uneven_bounds(shape[d], mesh[k], c)
                parts.append(f"slice({it}, dim={d}, start=0, end={max(hi - lo, 0)})")
            out.append(parts[0] if len(parts) == 1 else f"cat({', '.join(parts)}, dim={d})")
    return out


def grad_layout(layout):
    """Placement of the tangent of an output placed like this."""
    return tuple("R" if p == "P" else p for p in layout)


def describe(layout):
    out = []
    for p in layout:
        if p in ("R", "P"):
            out.append(p)
        else:
            out.append(f"{p[0]}{p[1]}")
    return "[" + ",".join(out) + "]"


class MeshPlacement(Placement):
    """An exporter placement for a layout on a mesh (any number of dims)."""

    def __init__(self, layout, mesh, seed=0):
        self.layout, self.mesh, self.seed = tuple(layout), tuple(mesh), seed

    def shards(self, full, n):
        assert n == nranks(self.mesh)
        gen = torch.Generator().manual_seed(self.seed)
        return cut(full, self.layout, self.mesh, gen)

    def exprs(self, names, shape):
        return exprs(list(names), self.layout, self.mesh, list(shape))

    def grad_placement(self):
        return MeshPlacement(grad_layout(self.layout), self.mesh, self.seed)

    def __repr__(self):
        return f"MeshPlacement({describe(self.layout)}, mesh={self.mesh})"
