"""ops.py -- the operator families of random programs, and how each one runs
on shards.

Every operator is an Op with
  spec(*xs)              the sequential code (plain torch; make_fx traces it)
  strategy(k, ps, shapes, out_shape)
                         for mesh dim k, given the placements ps of the inputs
                         on that mesh dim: a list of options
                         (required input placements, output placement); the
                         planner picks one and converts the inputs with
                         collectives.  The option with every input "R" and
                         output "R" is always valid and is tried last.
  local(xs, ctx)         what one rank runs on its local tensors (default:
                         spec); ctx says the layouts, the rank's coordinates,
                         the global shapes and the mutation in force.
Rules are stated for a class of operators (elementwise, reductions over any
dims, any view whose cut dim is outermost in its group, ...), never for one
program.  A rule that is not sound would be caught by the planner's value
check (plan.py) before any bundle is written.
"""


import torch
import torch.nn.functional as F

from .layout import is_shard


def S(d):
    return ("S", d)




class Ctx:
    """What a rank knows when it runs an operator locally."""

    def __init__(self, rank, coords, mesh, in_layouts, out_layout, in_shapes, out_shape,
                 mutation=None):
        self.rank, self.coords, self.mesh = rank, coords, mesh
        self.in_layouts, self.out_layout = in_layouts, out_layout
        self.in_shapes, self.out_shape = in_shapes, out_shape
        self.mutation = mutation or {}

    def local_out_shape(self):
        s = list(self.out_shape)
        for k, p in enumerate(self.out_layout):
            if is_shard(p):
                s[p[1]] //= self.mesh[k]
        return s

    def offset(self, layout, d, size):
        """Offset of this rank's chunk along dim d of a tensor of global size
        `size` (0 when dim d is not cut)."""
        for k, p in enumerate(layout):
            if is_shard(p) and p[1] == d:
                off = self.coords[k] * (size // self.mesh[k])
                if self.mutation.get("offset_rank") == self.rank:
                    off = 0 if off else (size // self.mesh[k])
                return off
        return 0

    def partial_lead(self, layout=None):
        """True on the ranks that add a replicated term to a partial output:
        coordinate 0 of every mesh dim where the output is partial."""
        layout = self.out_layout if layout is None else layout
        if self.mutation.get("bias_everywhere"):
            return True
        return all(self.coords[k] == 0 for k, p in enumerate(layout) if p == "P")


class Op:
    family = "?"
    name = "?"
    nondiff = False            # output carries no gradient

    def spec(self, *xs):
        raise NotImplementedError

    def strategy(self, k, ps, shapes, out_shape):
        return []

    def local(self, xs, ctx):
        return self.spec(*xs)

    def has_rank_offset(self):
        return False

    def describe(self):
        return self.name


# --- elementwise ---------------------------------------------------------------

UNARY = {
    "neg": (lambda x: -x, True),
    "mul_scalar": (lambda x: x * 1.5, True),
    "div_scalar": (lambda x: x / 3.0, True),
    "add_scalar": (lambda x: x + 0.5, False),
    "tanh": (torch.tanh, False),
    "sigmoid": (torch.sigmoid, False),
    "relu": (torch.relu, False),
    "gelu": (F.gelu, False),
    "silu": (F.silu, False),
    "abs": (torch.abs, False),
    "sin": (torch.sin, False),
    "exp": (lambda x: torch.exp(torch.tanh(x)), False),
    "square": (lambda x: x * x, False),
    "rsqrt": (lambda x: torch.rsqrt(x * x + 1.0), False),
    "log": (lambda x: torch.log(x * x + 1.0), False),
}


class Unary(Op):
    family = "elementwise"

    def __init__(self, fn):
        self.name = fn
        self.fn, self.linear = UNARY[fn]

    def spec(self, x):
        return self.fn(x)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")] if self.linear else []
        if p == "R":
            return []
        return [([p], p)]          # shards, uneven shards: any elementwise op


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (torch.sigmoid(b) + 0.5),
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}


def aligned(in_shape, out_shape, d):
    """The output dim of input dim d under broadcasting."""
    return d + len(out_shape) - len(in_shape)


def in_dim(in_shape, out_shape, od):
    """The input dim that feeds output dim od unbroadcast, or None."""
    d = od - (len(out_shape) - len(in_shape))
    if d < 0 or in_shape[d] != out_shape[od]:
        return None
    return d


def broadcast_options(ps, shapes, out_shape):
    """Options that keep one output dim cut: inputs holding that dim whole
    are cut the same way, inputs broadcast along it are replicated."""
    opts, seen = [], set()
    for i, p in enumerate(ps):
        if not is_shard(p):
            continue
        od = aligned(shapes[i], out_shape, p[1])
        if od in seen:
            continue
        seen.add(od)
        req = []
        for j, sh in enumerate(shapes):
            d = in_dim(sh, out_shape, od)
            req.append(S(d) if d is not None else "R")
        opts.append((req, S(od)))
    return opts


class Binary(Op):
    family = "elementwise"

    def __init__(self, fn):
        self.name = fn
        self.fn = BINARY[fn]

    def spec(self, a, b):
        return self.fn(a, b)

    def strategy(self, k, ps, shapes, out_shape):
        opts = broadcast_options(ps, shapes, out_shape)
        if "P" in ps:
            if self.name in ("add", "sub"):
                # partial + partial, or partial + a replicated term added once
                opts.append((["P", "P"], "P"))
                opts.append((["P", "R"], "P") if ps[0] == "P" else (["R", "P"], "P"))
            elif self.name == "mul":
                opts.append((["P", "R"], "P") if ps[0] == "P" else (["R", "P"], "P"))
            elif self.name == "div" and ps[0] == "P":
                opts.append((["P", "R"], "P"))
        return opts

    def local(self, xs, ctx):
        a, b = xs
        if self.name in ("add", "sub") and any(p == "P" for p in ctx.out_layout) \
                and not ctx.partial_lead():
            # the replicated operand is added on one rank of the partial group
            la = [lay for lay in ctx.in_layouts]
            for k, p in enumerate(ctx.out_layout):
                if p != "P":
                    continue
                if la[0][k] == "R":
                    a = torch.zeros_like(a)
                if la[1][k] == "R":
                    b = torch.zeros_like(b)
        return self.fn(a, b)


# --- reductions ------------------------------------------------------------------

class Reduce(Op):
    family = "reduction"

    def __init__(self, kind, dims, keepdim, rank):
        self.kind, self.dims, self.keepdim = kind, list(dims), keepdim
        self.pos = sorted(d % rank for d in dims)
        self.name = f"{kind}(dims={self.dims}, keepdim={keepdim})"

    def spec(self, x):
        if self.kind == "sum":
            return x.sum(self.dims, keepdim=self.keepdim)
        if self.kind == "mean":
            return x.mean(self.dims, keepdim=self.keepdim)
        if self.kind == "amax":
            return x.amax(self.dims, keepdim=self.keepdim)
        if self.kind == "logsumexp":
            return torch.logsumexp(x, self.dims, keepdim=self.keepdim)
        raise AssertionError(self.kind)

    def out_dim(self, d):
        if self.keepdim:
            return d
        return d - sum(1 for r in self.pos if r < d)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")] if self.kind in ("sum", "mean") else []
        if is_shard(p):
            if p[1] not in self.pos:
                return [([p], S(self.out_dim(p[1])))]
            if self.kind in ("sum", "mean"):
                return [([p], "P")]
        return []

    def local(self, xs, ctx):
        x = xs[0]
        if self.kind == "mean":
            cut = any(is_shard(p) and p[1] in self.pos for p in ctx.in_layouts[0])
            if cut:
                count = 1
                for d in self.pos:
                    count *= ctx.in_shapes[0][d]
                if ctx.mutation.get("local_count"):
                    count = 1
                    for d in self.pos:
                        count *= x.shape[d]
                return x.sum(self.dims, keepdim=self.keepdim) / count
        return self.spec(x)


class Softmax(Op):
    family = "softmax"

    def __init__(self, log, dim):
        self.log, self.dim = log, dim
        self.name = f"{'log_' if log else ''}softmax(dim={dim})"

    def spec(self, x):
        return (F.log_softmax if self.log else F.softmax)(x, self.dim)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if is_shard(p) and p[1] != self.dim % len(out_shape):
            return [([p], p)]
        return []


class Norm(Op):
    """layer_norm over the last `nd` dims (weight and bias optional), or RMS
    norm over the last dim; inputs: x, then the affine tensors."""
    family = "norm"

    def __init__(self, kind, nd, affine, eps=1e-5):
        self.kind, self.nd, self.affine, self.eps = kind, nd, affine, eps
        self.name = f"{kind}(last {nd}, affine={affine})"

    def spec(self, x, *wb):
        if self.kind == "layer_norm":
            shape = list(x.shape[-self.nd:])
            w = wb[0] if self.affine else None
            b = wb[1] if self.affine else None
            return F.layer_norm(x, shape, w, b, self.eps)
        y = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.eps)
        return y * wb[0] if self.affine else y

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if is_shard(p) and p[1] < len(out_shape) - self.nd:
            return [([p] + ["R"] * (len(ps) - 1), p)]
        return []


# --- contractions ----------------------------------------------------------------

class MM(Op):
    family = "matmul"

    def __init__(self, kind, bias=False):
        self.kind, self.bias = kind, bias
        self.name = kind + ("+bias" if bias else "")

    def spec(self, a, b, *bias):
        if self.kind == "mm":
            return torch.mm(a, b)
        if self.kind == "bmm":
            return torch.bmm(a, b)
        if self.kind in ("matmul", "bmatmul"):
            return torch.matmul(a, b)
        return F.linear(a, b, bias[0] if bias else None)

    def strategy(self, k, ps, shapes, out_shape):
        ra = len(shapes[0])
        o = len(out_shape)
        if self.kind == "mm":
            opts = [([S(0), "R"], S(0)), (["R", S(1)], S(1)), ([S(1), S(0)], "P"),
                    (["P", "R"], "P"), (["R", "P"], "P")]
        elif self.kind == "bmm":
            opts = [([S(0), S(0)], S(0)), ([S(1), "R"], S(1)), (["R", S(2)], S(2)),
                    ([S(2), S(1)], "P"), (["P", "R"], "P"), (["R", "P"], "P")]
        elif self.kind == "bmatmul":         # a: [..., M, K], b: [..., K, N]
            opts = [([S(d), S(d)], S(d)) for d in range(ra - 2)]
            opts += [([S(ra - 2), "R"], S(o - 2)), (["R", S(ra - 1)], S(o - 1)),
                     ([S(ra - 1), S(ra - 2)], "P"), (["P", "R"], "P"), (["R", "P"], "P")]
        elif self.kind == "matmul":          # a: [..., M, K], b: [K, N]
            opts = [([S(d), "R"], S(d)) for d in range(ra - 1)]
            opts += [(["R", S(1)], S(o - 1)), ([S(ra - 1), S(0)], "P"),
                     (["P", "R"], "P"), (["R", "P"], "P")]
        else:                                # linear: x [..., K], w [N, K], bias [N]
            extra = ["R"] if self.bias else []
            opts = [([S(d), "R"] + extra, S(d)) for d in range(ra - 1)]
            opts += [(["R", S(0)] + ([S(0)] if self.bias else []), S(o - 1)),
                     ([S(ra - 1), S(1)] + extra, "P"), (["P", "R"] + extra, "P")]
        return opts

    def local(self, xs, ctx):
        if self.kind == "linear" and self.bias and any(p == "P" for p in ctx.out_layout):
            y = F.linear(xs[0], xs[1])
            return y + xs[2] if ctx.partial_lead() else y
        return self.spec(*xs)


# --- views and shapes --------------------------------------------------------------

def reshape_groups(a, b):
    """Factor a reshape into groups: list of (input dims, output dims) whose
    products agree, in order.  Size-1 dims join the following group."""
    groups, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        gi, gj = [], []
        pa = pb = 1
        while True:
            if pa == pb and gi and gj and (i >= len(a) or a[i] != 1) and \
                    (j >= len(b) or b[j] != 1):
                break
            if (pa <= pb and i < len(a)) or j >= len(b):
                if i >= len(a):
                    break
                pa *= a[i]
                gi.append(i)
                i += 1
            else:
                pb *= b[j]
                gj.append(j)
                j += 1
        groups.append((gi, gj))
    return groups


def _viewable(old, stride, new):
    """Whether a tensor of shape OLD and strides STRIDE has a view of
    shape NEW (ATen's computeStride, in Python: checked outside the trace,
    so that a refused view leaves no node behind)."""
    new = list(new)
    if not old or 0 in old:
        return True
    view_d = len(new) - 1
    base = stride[-1]
    t_numel = v_numel = 1
    for d in range(len(old) - 1, -1, -1):
        t_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and stride[d - 1] != t_numel * base):
            while view_d >= 0 and (v_numel < t_numel or new[view_d] == 1):
                v_numel *= new[view_d]
                view_d -= 1
            if v_numel != t_numel:
                return False
            if d > 0:
                base = stride[d - 1]
                t_numel = v_numel = 1
    return view_d == -1


class View(Op):
    family = "view"

    def __init__(self, kind, shape=None, start=0, end=-1):
        self.kind, self.shape, self.start, self.end = kind, shape, start, end
        self.name = f"{kind}({shape if shape is not None else (start, end)})"

    def target(self, in_shape):
        if self.kind == "flatten":
            return list(torch.empty(in_shape, device="meta").flatten(self.start, self.end).shape)
        return list(self.shape)

    def spec(self, x):
        if self.kind == "view":
            return x.view(self.shape)
        if self.kind == "reshape":
            return x.reshape(self.shape)
        return x.flatten(self.start, self.end)

    def map_dim(self, in_shape, out_shape, d, m):
        for gi, gj in reshape_groups(list(in_shape), list(out_shape)):
            if d in gi:
                real = [x for x in gi if in_shape[x] != 1]
                oreal = [x for x in gj if out_shape[x] != 1]
                if not real or real[0] != d or not oreal or out_shape[oreal[0]] % m:
                    return None
                return oreal[0]
        return None

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")]
        if is_shard(p):
            od = self.map_dim(shapes[0], out_shape, p[1], 1)
            if od is not None:
                return [([p], S(od))]
        return []

    def local(self, xs, ctx):
        shape = ctx.local_out_shape()
        if self.kind == "flatten":
            return xs[0].flatten(self.start, self.end)
        # a rank's piece need not be laid out as the whole is (a chunk of
        # an all_to_all, a narrow of a replicated tensor): where view cannot
        # (it would raise), a real implementation writes reshape
        if self.kind == "view" and _viewable(list(xs[0].shape), list(xs[0].stride()), shape):
            return xs[0].view(shape)
        return xs[0].reshape(shape)


class Unsqueeze(Op):
    family = "view"

    def __init__(self, dim):
        self.dim = dim
        self.name = f"unsqueeze({dim})"

    def spec(self, x):
        return x.unsqueeze(self.dim)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")]
        if is_shard(p):
            pos = self.dim % len(out_shape)
            return [([p], S(p[1] + (1 if pos <= p[1] else 0)))]
        return []


class Expand(Op):
    family = "view"

    def __init__(self, shape):
        self.shape = list(shape)
        self.name = f"expand({shape})"

    def spec(self, x):
        return x.expand(self.shape)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")]
        if is_shard(p):
            return [([p], S(aligned(shapes[0], out_shape, p[1])))]
        return []

    def local(self, xs, ctx):
        return xs[0].expand(ctx.local_out_shape())


class Repeat(Op):
    family = "view"

    def __init__(self, reps):
        self.reps = list(reps)
        self.name = f"repeat({reps})"

    def spec(self, x):
        return x.repeat(self.reps)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")]
        if is_shard(p):
            od = aligned(shapes[0], out_shape, p[1])
            if self.reps[od] == 1:
                return [([p], S(od))]
        return []


class Permute(Op):
    family = "view"

    def __init__(self, perm, transpose=None):
        self.perm, self.transpose = list(perm), transpose
        self.name = f"transpose{transpose}" if transpose else f"permute({perm})"

    def spec(self, x):
        if self.transpose:
            return x.transpose(*self.transpose)
        return x.permute(self.perm)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")]
        if is_shard(p):
            return [([p], S(self.perm.index(p[1])))]
        return []


# --- cat / split / slice / pad ------------------------------------------------------

class Cat(Op):
    family = "cat_split"

    def __init__(self, dim, n):
        self.dim, self.n = dim, n
        self.name = f"cat(dim={dim})"

    def spec(self, *xs):
        return torch.cat(xs, self.dim)

    def strategy(self, k, ps, shapes, out_shape):
        c = self.dim % len(out_shape)
        opts = []
        if all(p == "P" for p in ps):
            opts.append((list(ps), "P"))
        for p in ps:
            if is_shard(p) and p[1] != c:
                opts.append(([p] * len(ps), p))
        return opts


class SplitTake(Op):
    """split / chunk along a dim, keeping piece `index`."""
    family = "cat_split"

    def __init__(self, kind, arg, dim, index):
        self.kind, self.arg, self.dim, self.index = kind, arg, dim, index
        self.name = f"{kind}({arg}, dim={dim})[{index}]"

    def spec(self, x):
        if self.kind == "split":
            return torch.split(x, self.arg, self.dim)[self.index]
        return torch.chunk(x, self.arg, self.dim)[self.index]

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")]
        if is_shard(p) and p[1] != self.dim % len(out_shape):
            return [([p], p)]
        return []


class Slice(Op):
    family = "cat_split"

    def __init__(self, dim, start, end, step):
        self.dim, self.start, self.end, self.step = dim, start, end, step
        self.name = f"slice(dim={dim}, {start}:{end}:{step})"

    def spec(self, x):
        idx = [slice(None)] * x.dim()
        idx[self.dim] = slice(self.start, self.end, self.step)
        return x[tuple(idx)]

    strategy = SplitTake.strategy


class Pad(Op):
    family = "cat_split"

    def __init__(self, pads):
        self.pads = list(pads)
        self.name = f"pad({pads})"

    def spec(self, x):
        return F.pad(x, self.pads)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if p == "P":
            return [(["P"], "P")]
        if is_shard(p):
            padded = {len(out_shape) - 1 - i // 2 for i, v in enumerate(self.pads) if v}
            if p[1] not in padded:
                return [([p], p)]
        return []


# --- indexing -----------------------------------------------------------------------------

class Embedding(Op):
    """F.embedding(idx, weight): inputs (idx, weight)."""
    family = "indexing"

    name = "embedding"

    def spec(self, idx, w):
        return F.embedding(idx, w)

    def strategy(self, k, ps, shapes, out_shape):
        o = len(out_shape)
        opts = [(["R", S(1)], S(o - 1)), (["R", S(0)], "P")]
        opts += [([S(d), "R"], S(d)) for d in range(len(shapes[0]))]
        return opts

    def has_rank_offset(self):
        return True

    def local(self, xs, ctx):
        idx, w = xs
        if any(is_shard(p) and p[1] == 0 for p in ctx.in_layouts[1]):
            # vocabulary-parallel: this rank holds rows off..off+V_l
            vl = w.shape[0]
            off = ctx.offset(ctx.in_layouts[1], 0, ctx.in_shapes[1][0])
            li = idx - off
            mask = (li < 0) | (li >= vl)
            li = li.masked_fill(mask, 0)
            return F.embedding(li, w).masked_fill(mask.unsqueeze(-1), 0.0)
        return F.embedding(idx, w)


class IndexSelect(Op):
    family = "indexing"

    def __init__(self, dim):
        self.dim = dim
        self.name = f"index_select(dim={dim})"

    def spec(self, x, idx):
        return torch.index_select(x, self.dim, idx)

    def strategy(self, k, ps, shapes, out_shape):
        d = self.dim % len(out_shape)
        opts = []
        p = ps[0]
        if p == "P":
            opts.append((["P", "R"], "P"))
        if is_shard(p) and p[1] != d:
            opts.append(([p, "R"], p))
        opts.append(([S(d), "R"], "P"))      # rows held elsewhere are masked
        return opts

    def has_rank_offset(self):
        return True

    def local(self, xs, ctx):
        x, idx = xs
        d = self.dim % x.dim()
        if any(is_shard(p) and p[1] == d for p in ctx.in_layouts[0]):
            n = x.shape[d]
            off = ctx.offset(ctx.in_layouts[0], d, ctx.in_shapes[0][d])
            li = idx - off
            mask = (li < 0) | (li >= n)
            y = torch.index_select(x, d, li.masked_fill(mask, 0))
            shape = [1] * y.dim()
            shape[d] = -1
            return y.masked_fill(mask.view(shape), 0.0)
        return torch.index_select(x, self.dim, idx)


class Gather(Op):
    family = "indexing"

    def __init__(self, dim):
        self.dim = dim
        self.name = f"gather(dim={dim})"

    def spec(self, x, idx):
        return torch.gather(x, self.dim, idx)

    def strategy(self, k, ps, shapes, out_shape):
        d = self.dim % len(out_shape)
        opts = []
        for e in range(len(out_shape)):
            if e != d and shapes[0][e] == shapes[1][e]:
                opts.append(([S(e), S(e)], S(e)))
        return opts


class Scatter(Op):
    family = "indexing"

    def __init__(self, dim):
        self.dim = dim
        self.name = f"scatter(dim={dim})"

    def spec(self, x, idx, src):
        return torch.scatter(x, self.dim, idx, src)

    def strategy(self, k, ps, shapes, out_shape):
        d = self.dim % len(out_shape)
        opts = []
        for e in range(len(out_shape)):
            if e != d and shapes[0][e] == shapes[1][e] == shapes[2][e]:
                opts.append(([S(e), S(e), S(e)], S(e)))
        return opts


class ArgmaxOneHot(Op):
    """one_hot(argmax(x, -1)) as floats: the top-1 routing mask of a MoE."""
    family = "moe"
    nondiff = True
    name = "argmax_onehot"

    def spec(self, x):
        return (x.argmax(-1, keepdim=True) ==
                torch.arange(x.shape[-1])).to(x.dtype)

    def strategy(self, k, ps, shapes, out_shape):
        p = ps[0]
        if is_shard(p) and p[1] != len(out_shape) - 1:
            return [([p], p)]
        return []


class CausalMask(Op):
    """Additive causal mask built from positions: 0 where key <= query, -1e4
    elsewhere ([Sq, Sk], Sq == Sk), made from aranges (no input).  Cut along
    the query dim, rank r builds its rows from its position offset."""
    family = "attention"
    nondiff = True

    def __init__(self, s, dtype):
        self.s, self.dtype = s, dtype
        self.name = f"causal_mask({s})"

    def spec(self):
        q = torch.arange(self.s).unsqueeze(-1)
        kk = torch.arange(self.s).unsqueeze(0)
        return (kk > q).to(self.dtype) * -1e4

    def strategy(self, k, ps, shapes, out_shape):
        return [([], S(0))]

    def has_rank_offset(self):
        return True

    def local(self, xs, ctx):
        rows = ctx.local_out_shape()[0]
        off = ctx.offset(ctx.out_layout, 0, self.s)
        q = torch.arange(off, off + rows).unsqueeze(-1)
        kk = torch.arange(self.s).unsqueeze(0)
        return (kk > q).to(self.dtype) * -1e4


# --- losses ------------------------------------------------------------------------------

class MSE(Op):
    family = "loss"
    name = "mse_loss"

    def spec(self, a, b):
        return F.mse_loss(a, b)

    def strategy(self, k, ps, shapes, out_shape):
        opts = []
        for p in ps:
            if is_shard(p):
                opts.append(([p, p], "P"))
        return opts

    def local(self, xs, ctx):
        a, b = xs
        if any(p == "P" for p in ctx.out_layout):
            n = 1
            for s in ctx.in_shapes[0]:
                n *= s
            if ctx.mutation.get("local_count"):
                n = a.numel()
            return ((a - b) ** 2).sum() / n
        return F.mse_loss(a, b)


class CrossEntropy(Op):
    """F.cross_entropy(logits [N, C], target [N])."""
    family = "loss"
    name = "cross_entropy"

    def spec(self, logits, target):
        return F.cross_entropy(logits, target)

    def strategy(self, k, ps, shapes, out_shape):
        return [([S(0), S(0)], "P")]

    def local(self, xs, ctx):
        logits, target = xs
        if any(p == "P" for p in ctx.out_layout):
            n = ctx.in_shapes[0][0]
            if ctx.mutation.get("local_count"):
                n = logits.shape[0]
            return F.cross_entropy(logits, target, reduction="sum") / n
        return F.cross_entropy(logits, target)
