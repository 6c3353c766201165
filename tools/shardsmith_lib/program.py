"""program.py -- random sequential programs: DAGs of 5 to 60 operators
drawn from the families of ops.py and from model-shaped templates
(attention with masks, biases and GQA; MLP and gated MLP; norms; MoE
routing; embedding plus loss), composed at random.

Everything is decided by one random.Random(seed): the same seed gives the
same program, mesh, layouts and mutation on any machine (no set or dict
iteration order is used to decide anything).  Values are float64 and are
computed as the program grows, so that an operator whose result is not
finite or explodes is redrawn.
"""

import math
import random

import torch

from . import layout as L
from . import ops as O


class Node:
    def __init__(self, op, ins, out):
        self.op, self.ins, self.out = op, list(ins), out
        self.family = op.family


class InputDecl:
    def __init__(self, name, shape, dtype, param, layout, values=None, init=None):
        self.name, self.shape, self.dtype = name, list(shape), dtype
        self.param, self.layout, self.values, self.init = param, tuple(layout), values, init

    def example(self, gen):
        if self.init is not None:
            return self.init(self.shape, gen)
        if self.dtype.is_floating_point:
            return torch.randn(self.shape, generator=gen, dtype=self.dtype)
        lo, hi = self.values
        return torch.randint(lo, hi + 1, self.shape, generator=gen, dtype=self.dtype)


def unique_index_init(dim, src_size):
    """Scatter indices with no repeat along `dim` (a deterministic scatter):
    every slice along dim is a prefix of a permutation of range(src_size)."""
    def init(shape, gen):
        out = torch.empty(shape, dtype=torch.int64)
        moved = out.movedim(dim, -1)
        flat = moved.reshape(-1, shape[dim])
        for i in range(flat.shape[0]):
            flat[i] = torch.randperm(src_size, generator=gen)[:shape[dim]]
        return flat.reshape(moved.shape).movedim(-1, dim).contiguous()
    return init


class Program:
    def __init__(self, seed):
        self.seed = seed
        self.inputs = []            # InputDecl, in creation order
        self.nodes = []
        self.values = {}            # value id -> full float64 tensor
        self.outputs = {}           # output name -> value id
        self.families = []          # family of every operator or template drawn
        self.consumed = {}

    def live_nodes(self):
        need = set(self.outputs.values())
        live = []
        for nd in reversed(self.nodes):
            if nd.out in need:
                live.append(nd)
                need.update(nd.ins)
        return live[::-1]

    def spec(self, **kw):
        env = dict(kw)
        for nd in self.nodes:
            env[nd.out] = nd.op.spec(*[env[i] for i in nd.ins])
        return {k: env[v] for k, v in self.outputs.items()}


FAMILY_WEIGHTS = [
    ("elementwise", 14), ("binary", 12), ("reduction", 8), ("softmax", 5), ("norm", 4),
    ("matmul", 9), ("view", 10), ("cat_split", 8), ("indexing", 6), ("loss", 3),
    ("t_attention", 3), ("t_mlp", 3), ("t_norms", 2), ("t_moe", 2), ("t_embed_loss", 2),
]


class Generator:
    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)
        self.prog = Program(seed)
        self.gen = torch.Generator().manual_seed(seed)
        rng = self.rng
        self.n = rng.choice([2, 2, 3, 4, 4, 6, 8])
        if self.n in (4, 6, 8) and rng.random() < 0.35:
            a = rng.choice([x for x in (2, 3, 4) if self.n % x == 0 and x < self.n])
            self.mesh = (a, self.n // a)
        else:
            self.mesh = (self.n,)
        self.backward = rng.random() < 0.5
        self.counter = 0
        ms = sorted(set(self.mesh) | {self.n})
        self.sizes = ms + [2 * m for m in ms] + [3, 5]

    # -- values and inputs ------------------------------------------------------------
    def name(self, base):
        self.counter += 1
        return f"{base}{self.counter}"

    def size(self):
        return self.rng.choice(self.sizes)

    def random_layout(self, shape, floating, param):
        rng = self.rng
        lay = []
        for k, m in enumerate(self.mesh):
            opts = ["R"] * 3
            for d, s in enumerate(shape):
                if s % m == 0:
                    opts += [("S", d)] * 2
                elif floating and s >= m and len(self.mesh) == 1:
                    opts.append(("U", d))
            if floating and not param and "P" not in lay:
                opts.append("P")
            for _ in range(6):
                p = rng.choice(opts)
                test = lay + [p] + ["R"] * (len(self.mesh) - k - 1)
                if L.valid(tuple(test), shape, self.mesh):
                    break
                p = "R"
            lay.append(p)
        return tuple(lay)

    def new_input(self, base, shape, param=None, dtype=torch.float64, values=None, init=None,
                  layout=None):
        floating = dtype.is_floating_point
        if param is None:
            param = floating and self.backward and self.rng.random() < 0.6
        if layout is None:
            layout = self.random_layout(shape, floating, param)
        decl = InputDecl(self.name(base), shape, dtype, param, layout, values, init)
        self.prog.inputs.append(decl)
        self.prog.values[decl.name] = decl.example(self.gen)
        return decl.name

    def pick(self, pred=lambda t: True, floating=True):
        vals = [v for v, t in self.prog.values.items()
                if (t.dtype.is_floating_point or not floating) and pred(t)]
        if not vals:
            return None
        recent = vals[-4:]
        if self.rng.random() < 0.65:
            return self.rng.choice(recent)
        return self.rng.choice(vals)

    def shape(self, v):
        return list(self.prog.values[v].shape)

    def add(self, op, ins):
        vals = [self.prog.values[i] for i in ins]
        out = op.spec(*vals)
        if out.dtype.is_floating_point:
            if not torch.isfinite(out).all() or (out.numel() and out.abs().max() > 1e5):
                raise ValueError("not finite")
        if out.numel() == 0 or out.dim() == 0 and any(v.dim() == 0 for v in vals):
            pass
        oid = self.name("v")
        self.prog.values[oid] = out
        self.prog.nodes.append(Node(op, ins, oid))
        for i in ins:
            self.prog.consumed[i] = True
        return oid

    def x(self, min_rank=1, max_rank=4):
        v = self.pick(lambda t: min_rank <= t.dim() <= max_rank and t.numel() > 1)
        if v is None or self.rng.random() < 0.1:
            r = self.rng.randint(max(min_rank, 2), min(max(min_rank, 3), max_rank))
            v = self.new_input("x", [self.size() for _ in range(r)], param=None)
        return v

    # -- families -------------------------------------------------------------------------
    def f_elementwise(self):
        return self.add(O.Unary(self.rng.choice(sorted(O.UNARY))), [self.x()])

    def f_binary(self):
        rng = self.rng
        a = self.x()
        sa = self.shape(a)
        r = rng.random()
        if r < 0.3:
            b = self.pick(lambda t: list(t.shape) == sa and True)
            if b is None:
                b = self.new_input("y", sa)
        else:
            keep = rng.randint(0, len(sa))
            sb = [s if rng.random() < 0.6 else 1 for s in sa[len(sa) - keep:]]
            b = self.pick(lambda t: list(t.shape) == sb) if rng.random() < 0.3 else None
            if b is None:
                b = self.new_input("b", sb)
        ins = [a, b] if rng.random() < 0.8 else [b, a]
        return self.add(O.Binary(rng.choice(sorted(O.BINARY))), ins)

    def f_reduction(self):
        rng = self.rng
        x = self.x()
        r = len(self.shape(x))
        nd = rng.randint(1, min(2, r))
        dims = rng.sample(range(r), nd)
        dims = [d - r if rng.random() < 0.5 else d for d in dims]
        kind = rng.choice(["sum", "sum", "mean", "mean", "amax", "logsumexp"])
        return self.add(O.Reduce(kind, dims, rng.random() < 0.5, r), [x])

    def f_softmax(self):
        x = self.x()
        r = len(self.shape(x))
        d = self.rng.randrange(r)
        if self.rng.random() < 0.5:
            d -= r
        return self.add(O.Softmax(self.rng.random() < 0.4, d), [x])

    def f_norm(self, x=None, kind=None):
        rng = self.rng
        x = x or self.x(2)
        sh = self.shape(x)
        kind = kind or rng.choice(["layer_norm", "rms_norm"])
        nd = 1 if kind == "rms_norm" or len(sh) < 3 or rng.random() < 0.7 else 2
        affine = rng.random() < 0.7
        ins = [x]
        if affine:
            ins.append(self.new_input("nw", sh[-nd:], param=None))
            if kind == "layer_norm":
                ins.append(self.new_input("nb", sh[-nd:], param=None))
        return self.add(O.Norm(kind, nd, affine), ins)

    def linear(self, x, n_out, bias=None):
        k = self.shape(x)[-1]
        bias = self.rng.random() < 0.4 if bias is None else bias
        ins = [x, self.new_input("w", [n_out, k])]
        if bias:
            ins.append(self.new_input("bias", [n_out]))
        return self.add(O.MM("linear", bias), ins)

    def f_matmul(self):
        rng = self.rng
        kind = rng.choice(["mm", "bmm", "matmul", "linear", "bmatmul"])
        if kind == "mm":
            a = self.x(2, 2)
            b = self.new_input("w", [self.shape(a)[1], self.size()])
            return self.add(O.MM("mm"), [a, b])
        if kind == "bmm":
            a = self.x(3, 3)
            sa = self.shape(a)
            b = self.new_input("w", [sa[0], sa[2], self.size()])
            return self.add(O.MM("bmm"), [a, b])
        if kind == "matmul":
            a = self.x(2)
            b = self.new_input("w", [self.shape(a)[-1], self.size()])
            return self.add(O.MM("matmul"), [a, b])
        if kind == "bmatmul":
            a = self.x(3)
            sa = self.shape(a)
            b = self.pick(lambda t: list(t.shape[:-2]) == sa[:-2] and t.shape[-2] == sa[-1]
                          and t.dim() == len(sa))
            if b is None:
                b = self.new_input("y", sa[:-1] + [self.size()])
            return self.add(O.MM("bmatmul"), [a, b])
        return self.linear(self.x(2), self.size())

    def f_view(self):
        rng = self.rng
        x = self.x()
        sh = self.shape(x)
        r = rng.random()
        if r < 0.3:
            # merge two adjacent dims or split one
            if len(sh) >= 2 and rng.random() < 0.5:
                i = rng.randrange(len(sh) - 1)
                new = sh[:i] + [sh[i] * sh[i + 1]] + sh[i + 2:]
            else:
                cands = [i for i, s in enumerate(sh) if s > 1 and any(s % f == 0 for f in (2, 3))]
                if not cands:
                    raise ValueError("nothing to split")
                i = rng.choice(cands)
                f = rng.choice([f for f in (2, 3) if sh[i] % f == 0])
                new = sh[:i] + [sh[i] // f, f] + sh[i + 1:] if rng.random() < 0.5 else \
                    sh[:i] + [f, sh[i] // f] + sh[i + 1:]
            return self.add(O.View(rng.choice(["view", "reshape"]), new), [x])
        if r < 0.4 and len(sh) >= 2:
            s = rng.randrange(len(sh) - 1)
            return self.add(O.View("flatten", start=s, end=rng.randrange(s + 1, len(sh))), [x])
        if r < 0.5:
            return self.add(O.Unsqueeze(rng.randint(-len(sh) - 1, len(sh))), [x])
        if r < 0.6:
            ones = [i for i, s in enumerate(sh) if s == 1]
            if ones:
                new = list(sh)
                new[rng.choice(ones)] = self.size()
            else:
                new = [rng.choice([2, 3])] + sh
            return self.add(O.Expand(new), [x])
        if r < 0.7:
            reps = [1] * len(sh)
            reps[rng.randrange(len(sh))] = 2
            if rng.random() < 0.3:
                reps = [2] + reps
            return self.add(O.Repeat(reps), [x])
        if len(sh) < 2:
            return self.add(O.Unsqueeze(0), [x])
        if r < 0.85:
            perm = list(range(len(sh)))
            rng.shuffle(perm)
            return self.add(O.Permute(perm), [x])
        a, b = rng.sample(range(len(sh)), 2)
        perm = list(range(len(sh)))
        perm[a], perm[b] = perm[b], perm[a]
        if rng.random() < 0.5:
            a -= len(sh)
        return self.add(O.Permute(perm, (a, b)), [x])

    def f_cat_split(self):
        rng = self.rng
        x = self.x()
        sh = self.shape(x)
        d = rng.randrange(len(sh))
        dn = d - len(sh) if rng.random() < 0.5 else d
        r = rng.random()
        if r < 0.3:
            parts = [x]
            for _ in range(rng.randint(1, 2)):
                want = list(sh)
                want[d] = self.size()
                y = self.pick(lambda t: list(t.shape) == list(sh))
                if y is None or rng.random() < 0.5:
                    y = self.new_input("c", want)
                parts.append(y)
            rng.shuffle(parts)
            return self.add(O.Cat(dn, len(parts)), parts)
        if sh[d] < 2:
            raise ValueError("too small to split")
        if r < 0.5:
            size = rng.randint(1, sh[d] - 1)
            pieces = math.ceil(sh[d] / size)
            return self.add(O.SplitTake("split", size, dn, rng.randrange(pieces)), [x])
        if r < 0.65:
            c = rng.randint(2, sh[d])
            pieces = len(torch.chunk(torch.empty(sh[d]), c))
            return self.add(O.SplitTake("chunk", c, dn, rng.randrange(pieces)), [x])
        if r < 0.85:
            start = rng.randrange(sh[d] - 1)
            end = rng.randint(start + 1, sh[d])
            return self.add(O.Slice(d, start, end, rng.choice([1, 1, 2])), [x])
        pads = [rng.randint(0, 2) for _ in range(2 * rng.randint(1, min(2, len(sh))))]
        if not any(pads):
            pads[0] = 1
        return self.add(O.Pad(pads), [x])

    def f_indexing(self):
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            v = self.size() * 2
            h = self.size()
            idx = self.new_input("idx", [self.size()] + ([self.size()] if rng.random() < 0.5 else []),
                                 dtype=torch.int64, values=(0, v - 1))
            return self.add(O.Embedding(), [idx, self.new_input("emb", [v, h])])
        x = self.x()
        sh = self.shape(x)
        d = rng.randrange(len(sh))
        dn = d - len(sh) if rng.random() < 0.5 else d
        if r < 0.55:
            idx = self.new_input("idx", [rng.randint(1, 2 * sh[d])], dtype=torch.int64,
                                 values=(0, sh[d] - 1))
            return self.add(O.IndexSelect(dn), [x, idx])
        ish = list(sh)
        ish[d] = rng.randint(1, sh[d])
        if r < 0.8:
            idx = self.new_input("idx", ish, dtype=torch.int64, values=(0, sh[d] - 1))
            return self.add(O.Gather(dn), [x, idx])
        idx = self.new_input("idx", ish, dtype=torch.int64, values=(0, sh[d] - 1),
                             init=unique_index_init(d, sh[d]))
        src = self.pick(lambda t: list(t.shape) == ish)
        if src is None:
            src = self.new_input("src", ish)
        return self.add(O.Scatter(dn), [x, idx, src])

    def f_loss(self):
        rng = self.rng
        if rng.random() < 0.5:
            a = self.x()
            b = self.pick(lambda t: list(t.shape) == self.shape(a))
            if b is None or b == a or rng.random() < 0.5:
                b = self.new_input("target", self.shape(a), param=False)
            return self.add(O.MSE(), [a, b])
        a = self.x(2, 2)
        n, c = self.shape(a)
        t = self.new_input("label", [n], dtype=torch.int64, values=(0, c - 1))
        return self.add(O.CrossEntropy(), [a, t])

    # -- templates -------------------------------------------------------------------------
    def t_attention(self):
        rng = self.rng
        nkv = rng.choice([1, 2])
        g = rng.choice([1, 2]) if nkv else 1
        nh = nkv * g
        hd = rng.choice([2, 4])
        hsize = nh * hd
        b, s = rng.choice([1, 2]), self.size()
        x = self.pick(lambda t: t.dim() == 3 and t.shape[2] == hsize)
        if x is None:
            x = self.new_input("x", [b, s, hsize])
        b, s, _ = self.shape(x)
        bias = rng.random() < 0.4
        q = self.linear(x, nh * hd, bias)
        k = self.linear(x, nkv * hd, bias)
        v = self.linear(x, nkv * hd, bias)

        def heads(t, n):
            t = self.add(O.View("view", [b, s, n, hd]), [t])
            return self.add(O.Permute([0, 2, 1, 3], (1, 2)), [t])
        q, k, v = heads(q, nh), heads(k, nkv), heads(v, nkv)
        if g > 1:        # grouped-query attention: every kv head serves g query heads
            def rep(t):
                t = self.add(O.Unsqueeze(2), [t])
                t = self.add(O.Expand([b, nkv, g, s, hd]), [t])
                return self.add(O.View("reshape", [b, nh, s, hd]), [t])
            k, v = rep(k), rep(v)
        kt = self.add(O.Permute([0, 1, 3, 2], (-2, -1)), [k])
        sc = self.add(O.MM("bmatmul"), [q, kt])
        sc = self.add(O.Unary("mul_scalar"), [sc])
        r = rng.random()
        if r < 0.5:
            m = self.add(O.CausalMask(s, torch.float64), [])
            sc = self.add(O.Binary("add"), [sc, m])
        elif r < 0.8:
            ab = self.new_input("attn_bias", [nh, s, s] if rng.random() < 0.5 else [s, s],
                                param=None)
            sc = self.add(O.Binary("add"), [sc, ab])
        p = self.add(O.Softmax(False, -1), [sc])
        o = self.add(O.MM("bmatmul"), [p, v])
        o = self.add(O.Permute([0, 2, 1, 3], (1, 2)), [o])
        o = self.add(O.View("reshape", [b, s, hsize]), [o])
        return self.linear(o, hsize, rng.random() < 0.5)

    def t_mlp(self):
        rng = self.rng
        x = self.x(2)
        h = self.shape(x)[-1]
        f = self.size() * 2
        if rng.random() < 0.5:
            a = self.linear(x, f)
            a = self.add(O.Unary(rng.choice(["gelu", "relu", "silu"])), [a])
        else:
            a = self.add(O.Unary("silu"), [self.linear(x, f, False)])
            a = self.add(O.Binary("mul"), [a, self.linear(x, f, False)])
        return self.linear(a, h)

    def t_norms(self):
        x = self.f_norm(kind="layer_norm")
        return self.f_norm(x, "rms_norm")

    def t_moe(self):
        rng = self.rng
        x = self.x(2, 2)
        t, h = self.shape(x)
        e = rng.choice(sorted(set([self.n, 2, 4])))
        f = self.size()
        logits = self.linear(x, e, False)
        probs = self.add(O.Softmax(False, -1), [logits])
        mask = self.add(O.ArgmaxOneHot(), [logits])
        gate = self.add(O.Binary("mul"), [probs, mask])
        xe = self.add(O.Unsqueeze(0), [x])
        xe = self.add(O.Expand([e, t, h]), [xe])
        hh = self.add(O.MM("bmm"), [xe, self.new_input("w_exp", [e, h, f])])
        hh = self.add(O.Unary("gelu"), [hh])
        y = self.add(O.MM("bmm"), [hh, self.new_input("w_exp", [e, f, h])])
        gt = self.add(O.Permute([1, 0], (0, 1)), [gate])
        gt = self.add(O.Unsqueeze(-1), [gt])
        y = self.add(O.Binary("mul"), [y, gt])
        return self.add(O.Reduce("sum", [0], False, 3), [y])

    def t_embed_loss(self):
        rng = self.rng
        v = self.size() * 2
        h = self.size()
        b, s = rng.choice([1, 2]), self.size()
        idx = self.new_input("tokens", [b, s], dtype=torch.int64, values=(0, v - 1))
        e = self.add(O.Embedding(), [idx, self.new_input("emb", [v, h])])
        if rng.random() < 0.5:
            e = self.f_norm(e)
        logits = self.linear(e, v, False)
        logits = self.add(O.View("view", [b * s, v]), [logits])
        lab = self.new_input("label", [b * s], dtype=torch.int64, values=(0, v - 1))
        return self.add(O.CrossEntropy(), [logits, lab])

    # -- the program -------------------------------------------------------------------------
    def build(self):
        rng = self.rng
        target = rng.randint(5, 60)
        names = [f for f, _ in FAMILY_WEIGHTS]
        weights = [w for _, w in FAMILY_WEIGHTS]
        tries = 0
        while len(self.prog.nodes) < target and tries < 400:
            tries += 1
            fam = rng.choices(names, weights)[0]
            if fam.startswith("t_") and len(self.prog.nodes) + 26 > 60:
                continue          # a template would pass 60 operators
            snap = (len(self.prog.nodes), len(self.prog.inputs), dict(self.prog.values),
                    dict(self.prog.consumed), self.counter)
            try:
                getattr(self, "f_" + fam if not fam.startswith("t_") else fam)()
                self.prog.families.append(fam)
                for nd in self.prog.nodes[snap[0]:]:
                    nd.family = fam
            except (ValueError, RuntimeError, IndexError):
                n, ni, vals, cons, cnt = snap
                del self.prog.nodes[n:]
                del self.prog.inputs[ni:]
                self.prog.values, self.prog.consumed = vals, cons
        if not self.prog.nodes:
            raise ValueError("no operator could be drawn")
        self.choose_outputs()
        return self.prog

    def choose_outputs(self):
        prog = self.prog
        # the last value and up to three other values that nothing reads;
        # the operators that reach none of them are dead code, left out of
        # the bundles (and of the family counts: Program.live_nodes)
        last = prog.nodes[-1].out
        leaves = [nd.out for nd in prog.nodes if nd.out not in prog.consumed and nd.out != last
                  and prog.values[nd.out].dtype.is_floating_point]
        outs = [last] + self.rng.sample(leaves, min(len(leaves), 3))
        prog.outputs = {f"out{i}": v for i, v in enumerate(outs)}
        if self.backward:
            self.fix_params()

    def fix_params(self):
        """Keep as Params only the inputs that get a gradient; without any,
        the program is forward only."""
        prog = self.prog
        vals = {}
        for d in prog.inputs:
            t = prog.values[d.name].clone()
            if d.param:
                t.requires_grad_(True)
            vals[d.name] = t
        outs = prog.spec(**vals)
        ys = [y for y in outs.values() if y.requires_grad]
        params = [d for d in prog.inputs if d.param]
        if ys and params:
            gs = torch.autograd.grad(ys, [vals[d.name] for d in params],
                                     [torch.ones_like(y) for y in ys], allow_unused=True)
            for d, g in zip(params, gs):
                if g is None:
                    d.param = False
        else:
            for d in params:
                d.param = False
        if not any(d.param for d in prog.inputs):
            self.backward = False
