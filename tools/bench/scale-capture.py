#!/usr/bin/env python3
"""scale-capture.py -- SYNTHETIC Megatron GPT captures at any tensor-parallel
degree and depth, generated from the two real one-layer GPT dumps.

    python3 tools/bench/scale-capture.py --real-graphs DIR --tp N --layers L
        [--heads H] -o OUTDIR

writes OUTDIR/spec.py (TP=1, L layers), OUTDIR/r0.py ... OUTDIR/r{N-1}.py
(TP=N, L layers) in exactly the printed-GraphModule format of the real dumps
(tools/fx2bundle.py reads them unchanged), and OUTDIR/sheet.json, a relation
sheet in the format of real-graphs/relations/ whose file names are relative
to OUTDIR (convert with `fx2bundle.py --sheet-only OUTDIR/sheet.json --root
OUTDIR`).

THESE FILES ARE SYNTHETIC: nothing here was captured from a run of
Megatron-LM.  They are what the real TP=1 and TP=2 dumps of
entangle-data/gpt/paral{1,2}_layer1 (Megatron-LM examples/simple_gpt.py,
forward, TP = SP = vocabulary parallel) become when every rank-dependent
feature learnt from those dumps is generalised to rank k of N, and their
transformer layer is repeated L times.  The operators and their order are
the real dumps' own; nothing is tuned to what shardcheck proves.

What is learnt, and how:
  * Shapes.  The TP=2 rank-0 graph is walked with shape rules for each
    operator it contains; every dimension is kept as a list of factors
    ("atoms"), each with its full (TP=1) size and whether it is split across
    the ranks.  The inputs' split dimensions come from the sheet's input
    relation (`cat(r0.x, r1.x, dim=D)`); the split then follows the data:
    views regroup atoms (a split atom cut in two keeps the split on its outer
    part, the layout of a concatenation), collectives gather (all_gather:
    dim 0 whole) or scatter (reduce_scatter: dim 0 split), and a slice whose
    bounds differ between r0 and r1 splits its dimension (the
    sequence-parallel scatter).  Buffers (`empty`) take the shape of what is
    written into them.  Printing at degree N divides every split atom by N.
    Consistency checks: printing the walk at N = 2 must give back every
    annotation of the real dump; every generated graph is walked again
    before anything is written (spec.py with nothing split, r0.py as a
    template of degree N against r1.py), so each annotation follows from
    the inputs and the size arguments; and the generator at N = 2, L = 1
    reproduces the real rank dumps and the spec dump byte for byte
    (tests/scale, scale-reproduce-real).
  * Rank-dependent constants.  Every numeric argument that differs between
    the r0 and r1 dumps (the vocabulary range of the vocabulary-parallel
    embedding and cross entropy: lt/ge/sub scalars; the sequence-parallel
    slice bounds) is fitted as (c + k) * step with step = v1 - v0 and
    c = v0 / step, i.e. a multiple of one rank's share of a size 2 * step;
    at rank k of N it becomes (c + k) * (2 * step / N).  The device index
    and the `# Graph[rank=R]` header become k.  Any other difference between
    r0 and r1 is refused.
  * Collectives.  Group sizes (all_gather_into_tensor, reduce_scatter_tensor)
    become N.  The TP group's name is fitted linearly to the two dumps
    ('7' at TP=1, '12' at TP=2: 5 N + 2, the count of process groups Megatron's
    initialize_model_parallel creates before the TP group, for world size N =
    TP: data-parallel and data-parallel-with-context groups, each with a
    gloo twin, context-parallel groups, the model-parallel group).  This name
    is a label only: it is a guess for N > 2, flagged in the sheet's notes.
    Members: ranks 0 .. N-1.
  * Layers.  The transformer layer is the run of nodes from the first one
    that reads a "layer 0" parameter (sheet input_roles) to the last one
    before the first node that reads a later parameter (final_layernorm).
    It is repeated L times on the spec and on every rank alike: layer i's
    nodes are renamed as torch.fx would number them (each name base_c of the
    block becomes base_{c + i * span}, span = how many names of that base one
    layer uses; the nodes after the layer shift by (L - 1) * span), layer
    i's parameters are new inputs inserted after layer i-1's (all primals_j
    renumbered by position, as AOTAutograd numbers them), and the layer's
    hidden-state input (the one tensor from before the block that has the
    block output's shape) is the previous layer's output.  Tensors of the
    layer that the forward returns (saved for backward) are returned for
    every layer, in layer order.  The new parameters get input-relation
    entries of the same form as layer 0's.

  * Width (--heads H, default 24: the dumps' own).  The dumps' GPT has 24
    attention heads of 32 channels: hidden 768, fused QKV 2304 (24 x 96),
    MLP 3072.  Megatron splits the heads, so the degree must divide 24 (TP
    16 and 32 are refused).  --heads H keeps the head size and widens every
    atom of those sizes (hidden 32 H, QKV 96 H, MLP 128 H, heads H: the
    same model at a larger width, as Megatron would build it with
    num_attention_heads = H and hidden_size = 32 H); every size printed
    (annotations, view and empty sizes, layer norm's normalized_shape, a
    whole-dimension slice's end) comes from the widened atoms, and the
    spec, printed verbatim otherwise, is then printed through its own walk.
    The generated graphs are walked again as above, so a size left at the
    old width is refused.  The sheet's case gets `-headsH` and `"heads": H`.
    The vocabulary (98304) and sequence (1536) are kept: both divide by 32.

Errors in the input never raise a traceback: they print `scale-capture:
what` on stderr and exit 2.  Python 3 standard library only.
"""

import argparse
import json
import os
import re
import sys

EXIT_INPUT = 2

SPEC_DUMP = "entangle-data/gpt/paral1_layer1/fw.g0.r0.py"
RANK_DUMPS = ["entangle-data/gpt/paral2_layer1/fw.g0.r0.py",
              "entangle-data/gpt/paral2_layer1/fw.g0.r1.py"]
SHEET = "relations/gpt-paral2_layer1.json"
TEMPLATE_TP = 2          # the degree of the real rank dumps
# The real dumps' width: 24 attention heads of 32 channels, hidden 768,
# fused QKV 3 x 768, MLP 4 x 768.  --heads H keeps the head size and scales
# every size that is a multiple of the head count: full size -> size at H.
TEMPLATE_HEADS = 24


def width_map(heads):
    """Full sizes of the template's width atoms -> their sizes at `heads`
    heads (head size 32 kept), or None for the template's own width."""
    if heads == TEMPLATE_HEADS:
        return None
    return {24: heads, 768: 32 * heads, 2304: 96 * heads, 3072: 128 * heads}


def check_width_atoms(walker, where):
    """The atoms --heads widens must all be in the walk (else the dumps are
    not the ones the width map was read off)."""
    seen = set()
    for v in walker.env.values():
        for s in (v if isinstance(v, tuple) else (v,)):
            if isinstance(s, Shape) and s.dims:
                seen |= {full for d in s.dims for full, _ in d}
    missing = sorted(set(width_map(TEMPLATE_HEADS + 1)) - seen)
    if missing:
        fail(f"{where}: --heads: the template has no dimension of size {missing}: "
             "its width is not 24 heads x 32, hidden 768, MLP 3072")
INT64_MAX = 9223372036854775807


class InputError(Exception):
    pass


def fail(msg):
    raise InputError(msg)


# ---------------------------------------------------------------- tokens

TOKEN_RE = re.compile(r"""\s+|'[^']*'|"[^"]*"|-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+|-?\d+|"""
                      r"""[A-Za-z_][\w.]*|.""")


def tokenize(text):
    toks = TOKEN_RE.findall(text)
    if "".join(toks) != text:
        fail(f"cannot tokenize: {text[:80]}")
    return toks


def is_int(tok):
    return re.fullmatch(r"-?\d+", tok) is not None


def is_name(tok):
    return re.fullmatch(r"[A-Za-z_]\w*", tok) is not None


class Call:
    """The right-hand side of a node line as tokens, with for each token its
    position: (top-level argument index, keyword or None, index inside a list
    argument or None, depth).  Printing joins the tokens: exact round trip."""

    def __init__(self, text):
        self.toks = tokenize(text)
        self.pos = []
        depth, arg, elem, key = 0, 0, None, None
        pending_name = None
        for i, t in enumerate(self.toks):
            if t in "([":
                self.pos.append((arg, key, elem, depth))
                depth += 1
                if depth == 2 and t == "[":
                    elem = 0
                continue
            if t in ")]":
                depth -= 1
                if depth == 1:
                    elem = None
                self.pos.append((arg, key, elem, depth))
                continue
            if t == "," and depth == 1:
                arg += 1
                key = None
                self.pos.append((arg, key, elem, depth))
                continue
            if t == "," and depth == 2 and elem is not None:
                elem += 1
            if depth == 1 and t == "=":
                key = pending_name
            if not t.isspace():
                pending_name = t if depth == 1 else pending_name
            self.pos.append((arg, key, elem, depth))
        # the operator: the text before the first '(' (or the whole text)
        self.target = self.toks[0] if self.toks else ""

    def text(self):
        return "".join(self.toks)

    def args(self):
        """Positional arguments at depth 1 as lists of token indices."""
        out = {}
        for i, (a, k, e, d) in enumerate(self.pos):
            if d >= 1 and k is None and not self.toks[i].isspace() and \
                    not (d == 1 and self.toks[i] in ",()"):
                out.setdefault(a, []).append(i)
        return out

    def arg_tokens(self, a):
        return [i for i in self.args().get(a, [])]

    def list_elems(self, a):
        """Token indices of the integer elements of list argument a."""
        idx = [i for i in self.arg_tokens(a) if self.pos[i][3] == 2 and
               self.toks[i] not in "[],"]
        return idx

    def scalar(self, a):
        idx = [i for i in self.arg_tokens(a) if self.toks[i] not in "[],()"]
        if len(idx) != 1:
            return None
        return idx[0]

    def names(self):
        """Token indices of the values read: names, not keywords (`k = v`)."""
        out = []
        for i, t in enumerate(self.toks):
            if not is_name(t):
                continue
            nxt = next((x for x in self.toks[i + 1:] if not x.isspace()), None)
            if nxt != "=":
                out.append(i)
        return out


# ---------------------------------------------------------------- dumps

NODE_RE = re.compile(r'^        (\w+)(?:: "([^"]*)")? = (.*?)(;  .*)?$')
PARAM_RE = re.compile(r'(\w+): "([^"]*)"')


class Line:
    """One body line: kind 'node', 'comment', 'blank', 'return' or 'other'."""

    def __init__(self, raw, lineno):
        self.raw, self.lineno = raw, lineno
        self.kind = "other"
        self.name = self.ann = self.call = self.free = None
        s = raw.strip()
        if s.startswith("#"):
            self.kind = "comment"
        elif s == "":
            self.kind = "blank"
        elif s.startswith("return "):
            self.kind = "return"
            body = s[len("return "):]
            if not (body.startswith("[") and body.endswith("]")):
                fail(f"line {lineno}: unsupported return form")
            self.items = [x.strip() for x in body[1:-1].split(",") if x.strip()]
        else:
            m = NODE_RE.match(raw)
            if not m:
                fail(f"line {lineno}: not a node line: {raw.strip()[:80]}")
            self.kind = "node"
            self.name, self.ann = m.group(1), m.group(2)
            self.call = Call(m.group(3))
            self.free = Call(m.group(4)[3:]) if m.group(4) else None

    def render(self):
        if self.kind == "return":
            return "        return [" + ", ".join(self.items) + "]"
        if self.kind != "node":
            return self.raw
        s = "        " + self.name
        if self.ann is not None:
            s += ': "' + self.ann + '"'
        s += " = " + self.call.text()
        if self.free is not None:
            s += ";  " + self.free.text()
        return s

    def refs(self):
        """Names this node reads (not its own name)."""
        if self.kind == "return":
            return list(self.items)
        if self.kind != "node":
            return []
        return [self.call.toks[i] for i in self.call.names()]


class Dump:
    def __init__(self, path):
        self.path = path
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            fail(f"cannot read {path}: {e}")
        self.trailing_nl = text.endswith("\n")
        lines = text.split("\n")
        if self.trailing_nl:
            lines = lines[:-1]
        try:
            d = next(i for i, l in enumerate(lines) if l.startswith("    def forward(self"))
        except StopIteration:
            fail(f"{path}: no `def forward(self, ...)` line")
        self.head = lines[:d]
        sig = lines[d]
        m = re.fullmatch(r"    def forward\(self, (.*)\):", sig)
        if not m:
            fail(f"{path}:{d + 1}: unsupported forward signature (joint graphs are not)")
        self.params = PARAM_RE.findall(m.group(1))
        if ", ".join(f'{n}: "{a}"' for n, a in self.params) != m.group(1):
            fail(f"{path}:{d + 1}: cannot parse the parameters")
        try:
            body = [Line(l, d + 2 + i) for i, l in enumerate(lines[d + 1:])]
        except InputError as e:
            fail(f"{path}: {e}")
        self.body = body
        rets = [l for l in body if l.kind == "return"]
        if len(rets) != 1:
            fail(f"{path}: expected one return line")

    def render(self):
        out = list(self.head)
        out.append("    def forward(self, " +
                   ", ".join(f'{n}: "{a}"' for n, a in self.params) + "):")
        out += [l.render() for l in self.body]
        return "\n".join(out) + ("\n" if self.trailing_nl else "")

    def nodes(self):
        return [l for l in self.body if l.kind == "node"]

    def ret(self):
        return next(l for l in self.body if l.kind == "return")


# ---------------------------------------------------------------- shapes

def parse_ann(ann):
    """'f32[8, 1536]' -> ('f32', [8, 1536]); None for other annotations."""
    m = re.fullmatch(r"(\w+)\[([\d, ]*)\]", ann or "")
    if not m:
        return None
    dims = [int(x) for x in m.group(2).split(",") if x.strip()]
    return m.group(1), dims


class Shape:
    """dims: list of dims, each a list of atoms (full size, split?); None
    while a buffer's shape waits for what is written into it."""

    def __init__(self, dims):
        self.dims = dims

    def local(self, n, width=None):
        return [dim_local(d, n, width) for d in self.dims]


def dim_local(dim, n, width=None):
    """The local size of one dimension at degree n; width (--heads): full
    size -> widened full size of the atoms that grow with the head count."""
    v = 1
    for full, split in dim:
        if width:
            full = width.get(full, full)
        if split:
            if full % n:
                raise InputError(f"size {full} is not divisible by the degree {n}")
            v *= full // n
        else:
            v *= full
    return v


def dim_sig(dim):
    full = 1
    for f, _ in dim:
        full *= f
    return full, sum(1 for _, s in dim if s)


def plain(sizes):
    return Shape([[(s, False)] if s != 1 else [(1, False)] for s in sizes])


class Walker:
    """Shape propagation over one rank graph of the template (degree T)."""

    def __init__(self, dump, T, split_inputs, rank_dependent, where):
        self.T, self.where = T, where
        self.env = {}
        self.rank_dependent = rank_dependent     # line index -> set of token indices
        for name, ann in dump.params:
            pa = parse_ann(ann)
            if pa is None:
                fail(f"{where}: input {name}: unsupported annotation {ann}")
            dims = []
            for i, s in enumerate(pa[1]):
                if split_inputs.get(name) == i:
                    dims.append([(s * T, True)])
                else:
                    dims.append([(s, False)])
            self.env[name] = Shape(dims)

    def err(self, line, msg):
        fail(f"{self.where}:{line.lineno}: {line.name}: {msg}")

    def get(self, line, tok):
        if tok not in self.env:
            self.err(line, f"reads unknown value {tok}")
        return self.env[tok]

    def tensor_args(self, line):
        c = line.call
        out = []
        for a, idx in sorted(c.args().items()):
            names = [c.toks[i] for i in idx if is_name(c.toks[i]) and c.toks[i] in self.env]
            out.append(names)
        return out

    def int_arg(self, line, a):
        i = line.call.scalar(a)
        if i is None or not is_int(line.call.toks[i]):
            self.err(line, f"argument {a} is not an integer")
        return int(line.call.toks[i])

    def int_list(self, line, a):
        return [int(line.call.toks[i]) for i in line.call.list_elems(a)]

    def unify(self, line, a, b):
        """a := b if a is a pending buffer, else check a and b agree."""
        if a.dims is None:
            a.dims = [list(d) for d in b.dims]
            return
        if b.dims is None:
            b.dims = [list(d) for d in a.dims]
            return
        if len(a.dims) != len(b.dims) or \
                any(dim_sig(x) != dim_sig(y) for x, y in zip(a.dims, b.dims)):
            self.err(line, "operands' shapes disagree")

    def broadcast(self, line, shapes):
        shapes = [s for s in shapes if s is not None]
        for s in shapes:
            if s.dims is None:
                self.err(line, "reads a buffer whose shape is still unknown")
        rank = max(len(s.dims) for s in shapes)
        out = []
        for i in range(rank):
            pick = None
            for s in shapes:
                j = i - (rank - len(s.dims))
                if j < 0:
                    continue
                d = s.dims[j]
                if dim_sig(d) == (1, 0):
                    continue
                if pick is None:
                    pick = d
                elif dim_sig(pick) != dim_sig(d):
                    self.err(line, "cannot broadcast the operands' shapes")
            out.append(list(pick) if pick is not None else [(1, False)])
        return Shape(out)

    def regroup(self, line, src, target):
        """A view: the atoms of src regrouped into the local sizes target."""
        T = self.T
        atoms = [a for d in src.dims for a in d if not (a == (1, False))]
        total = 1
        for d in src.dims:
            total *= dim_local(d, T)
        if target.count(-1) > 1:
            self.err(line, "view with two -1")
        known = 1
        for t in target:
            if t != -1:
                known *= t
        if -1 in target:
            if known == 0 or total % known:
                self.err(line, "view size does not divide")
            target = [total // known if t == -1 else t for t in target]
        elif known != total:
            self.err(line, f"view of {total} elements as {target}")
        out = []
        q = list(atoms)
        for t in target:
            dim, have = [], 1
            while have < t:
                if not q:
                    self.err(line, "view regrouping ran out of factors")
                full, split = q.pop(0)
                loc = full // T if split else full
                need = t // have
                if t % have:
                    self.err(line, "view regrouping does not divide")
                if loc <= need:
                    if need % loc:
                        self.err(line, "view regrouping does not divide")
                    dim.append((full, split))
                    have *= loc
                else:
                    if loc % need:
                        self.err(line, "view regrouping splits a factor unevenly")
                    dim.append((need * T, True) if split else (need, False))
                    q.insert(0, (loc // need, False))
                    have *= need
            out.append(dim if dim else [(1, False)])
        if q:
            self.err(line, "view regrouping left factors over")
        return Shape(out)

    def step(self, li, line):
        c, T = line.call, self.T
        tgt = c.target
        op = tgt[len("torch.ops."):] if tgt.startswith("torch.ops.") else tgt
        targs = self.tensor_args(line)

        def t(a):
            if a >= len(targs) or len(targs[a]) != 1:
                self.err(line, f"argument {a} is not one tensor")
            return self.get(line, targs[a][0])

        def need(s):
            if s.dims is None:
                self.err(line, "reads a buffer whose shape is still unknown")
            return s

        # getitem: x[i]
        if len(c.toks) >= 4 and c.toks[1] == "[" and is_name(c.toks[0]) and \
                c.toks[0] in self.env:
            tup = self.env[c.toks[0]]
            if not isinstance(tup, tuple):
                self.err(line, "indexes a value that is not a tuple")
            k = int(c.toks[2])
            if k >= len(tup) or tup[k] is None:
                self.err(line, "tuple index out of range")
            return tup[k]
        if tgt.startswith("self."):
            return None
        if op in ("aten.zeros.default",):
            return plain(self.int_list(line, 0))
        if op in ("aten.empty.memory_format",):
            return Shape(None)
        if op == "aten.arange.start":
            return plain([self.int_arg(line, 1) - self.int_arg(line, 0)])
        if op in ("aten._to_copy.default", "aten.lt.Scalar", "aten.ge.Scalar",
                  "aten.clone.default", "aten.exp.default", "aten.log.default",
                  "aten.gelu.default", "aten._softmax.default",
                  "_c10d_functional.all_reduce.default",
                  "_c10d_functional.wait_tensor.default",
                  "aten.index_put.default", "aten.slice_scatter.default",
                  "aten.masked_fill.Scalar"):
            return Shape([list(d) for d in need(t(0)).dims])
        if op == "aten.lift_fresh_copy.default":
            pa = parse_ann(line.ann)
            if pa is None:
                self.err(line, "no annotation")
            return plain(pa[1])
        if op in ("aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
                  "aten.div.Tensor", "aten.bitwise_or.Tensor"):
            return self.broadcast(line, [self.get(line, n) for a in targs for n in a])
        if op == "aten.copy.default":
            dst, src = t(0), need(t(1))
            self.unify(line, dst, src)
            return Shape([list(d) for d in src.dims])
        if op == "aten.native_dropout.default":
            s = need(t(0))
            return (Shape([list(d) for d in s.dims]), Shape([list(d) for d in s.dims]))
        if op == "aten.index.Tensor":
            base = need(t(0))
            idx = [self.get(line, n) for n in targs[1]] if len(targs) > 1 else []
            if not idx:
                self.err(line, "index without indices")
            b = self.broadcast(line, idx)
            return Shape(b.dims + [list(d) for d in base.dims[len(idx):]])
        if op == "aten.embedding.default":
            w, i = need(t(0)), need(t(1))
            return Shape([list(d) for d in i.dims] + [list(d) for d in w.dims[1:]])
        if op == "aten.view.default":
            return self.regroup(line, need(t(0)), self.int_list(line, 1))
        if op == "aten.t.default":
            s = need(t(0))
            return Shape(list(reversed([list(d) for d in s.dims])))
        if op == "aten.transpose.int":
            s = need(t(0))
            a, b = self.int_arg(line, 1), self.int_arg(line, 2)
            n = len(s.dims)
            a, b = a % n, b % n
            d = [list(x) for x in s.dims]
            d[a], d[b] = d[b], d[a]
            return Shape(d)
        if op == "aten.permute.default":
            s = need(t(0))
            perm = self.int_list(line, 1)
            return Shape([list(s.dims[p % len(s.dims)]) for p in perm])
        if op == "aten.unsqueeze.default":
            s = need(t(0))
            k = self.int_arg(line, 1) % (len(s.dims) + 1)
            d = [list(x) for x in s.dims]
            d.insert(k, [(1, False)])
            return Shape(d)
        if op == "aten.mm.default":
            a, b = need(t(0)), need(t(1))
            if dim_sig(a.dims[1]) != dim_sig(b.dims[0]):
                self.err(line, "mm inner sizes disagree")
            return Shape([list(a.dims[0]), list(b.dims[1])])
        if op in ("aten.bmm.default", "aten.baddbmm.default"):
            o = 1 if op == "aten.baddbmm.default" else 0
            a, b = need(t(o)), need(t(o + 1))
            if dim_sig(a.dims[2]) != dim_sig(b.dims[1]) or dim_sig(a.dims[0]) != dim_sig(b.dims[0]):
                self.err(line, "bmm sizes disagree")
            r = Shape([list(a.dims[0]), list(a.dims[1]), list(b.dims[2])])
            if o:
                self.unify(line, t(0), r)
            return r
        if op == "aten.split_with_sizes.default":
            s = need(t(0))
            sizes = self.int_list(line, 1)
            d = self.int_arg(line, 2) % len(s.dims)
            if any(sp for _, sp in s.dims[d]):
                self.err(line, "split of a dimension that is split across ranks")
            return tuple(Shape([list(x) if i != d else [(z, False)]
                                for i, x in enumerate(s.dims)]) for z in sizes)
        if op == "apex.fused_layer_norm_affine_fwd.default":
            s = need(t(0))
            ns = self.int_list(line, 3)
            k = len(s.dims) - len(ns)
            if k < 0 or [dim_local(x, T) for x in s.dims[k:]] != ns or \
                    any(sp for x in s.dims[k:] for _, sp in x):
                self.err(line, "normalized_shape does not match the input")
            lead = [a for x in s.dims[:k] for a in x]
            st = Shape([lead if lead else [(1, False)]])
            return (Shape([list(x) for x in s.dims]), st,
                    Shape([list(x) for x in st.dims]))
        if op == "_c10d_functional.all_gather_into_tensor.default":
            s = need(t(0))
            if self.int_arg(line, 1) != T:
                self.err(line, "group size is not the template's degree")
            d0 = s.dims[0]
            if not d0 or not d0[0][1]:
                self.err(line, "all_gather of a dimension 0 that is not split")
            return Shape([[(d0[0][0], False)] + d0[1:]] + [list(x) for x in s.dims[1:]])
        if op == "_c10d_functional.reduce_scatter_tensor.default":
            s = need(t(0))
            if self.int_arg(line, 2) != T:
                self.err(line, "group size is not the template's degree")
            d0 = s.dims[0]
            if not d0 or d0[0][1]:
                self.err(line, "reduce_scatter of a dimension 0 that is already split")
            return Shape([[(d0[0][0], True)] + d0[1:]] + [list(x) for x in s.dims[1:]])
        if op == "aten.slice.Tensor":
            s = need(t(0))
            d = self.int_arg(line, 1) % len(s.dims)
            start, end = self.int_arg(line, 2), self.int_arg(line, 3)
            dims = [list(x) for x in s.dims]
            size = dim_local(dims[d], T)
            if start == 0 and end >= size:
                return Shape(dims)
            if self.rank_dependent.get(li):
                # the sequence-parallel scatter: each rank keeps its share
                if dim_sig(dims[d])[1] or (end - start) * T != size:
                    self.err(line, "rank-dependent slice that is not one rank's share")
                dims[d] = [(dim_sig(dims[d])[0], True)]
                return Shape(dims)
            if dim_sig(dims[d])[1]:
                self.err(line, "partial slice of a dimension split across ranks")
            dims[d] = [(min(end, size) - start, False)]
            return Shape(dims)
        if op == "aten.max.dim":
            s = need(t(0))
            d = self.int_arg(line, 1) % len(s.dims)
            r = Shape([list(x) for i, x in enumerate(s.dims) if i != d])
            return (r, Shape([list(x) for x in r.dims]))
        if op == "aten.sum.dim_IntList":
            s = need(t(0))
            ds = {x % len(s.dims) for x in self.int_list(line, 1)}
            return Shape([list(x) for i, x in enumerate(s.dims) if i not in ds])
        if op == "aten.sum.default":
            need(t(0))
            return Shape([])
        self.err(line, f"operator {op} has no shape rule here")

    def run(self, dump):
        for li, line in enumerate(dump.body):
            if line.kind != "node":
                continue
            self.env[line.name] = self.step(li, line)
        for li, line in enumerate(dump.body):
            if line.kind == "node":
                v = self.env[line.name]
                if isinstance(v, Shape) and v.dims is None:
                    self.err(line, "buffer nobody writes into: shape unknown")
        # the annotations printed at degree T must be the dump's own
        for line in dump.nodes():
            v = self.env[line.name]
            if line.ann is None or not isinstance(v, Shape):
                continue
            pa = parse_ann(line.ann)
            if pa is None or pa[1] != v.local(self.T):
                self.err(line, f"shape rules give {v.local(self.T)}, "
                         f"the dump says {line.ann}")


# ---------------------------------------------------------------- layers

NAME_RE = re.compile(r"^(.*?)(?:_(\d+))?$")


def split_name(name):
    m = NAME_RE.match(name)
    base, num = m.group(1), m.group(2)
    if not base:
        return name, 0
    return base, int(num) if num is not None else 0


def join_name(base, c):
    return base if c == 0 else f"{base}_{c}"


class Layout:
    """Where the transformer layer is in one dump, and its renaming plan."""

    def __init__(self, dump, layer_params, later_params, where):
        self.where = where
        body = dump.body
        nodes = [(i, l) for i, l in enumerate(body) if l.kind == "node"]
        lp, later = set(layer_params), set(later_params)
        first = next((i for i, l in nodes if lp & set(l.refs())), None)
        if first is None:
            fail(f"{where}: no node reads a layer-0 parameter")
        last = next((i for i, l in nodes if i > first and later & set(l.refs())), None)
        if last is None:
            fail(f"{where}: no node after the layer reads final_layernorm's parameters")
        # widen to whole chunks (# File comment + its nodes + blank line)
        s = first
        while s > 0 and body[s - 1].kind == "comment":
            s -= 1
        e = last
        while e > 0 and body[e - 1].kind == "comment":
            e -= 1
        self.start, self.end = s, e       # body[start:end] is the layer
        block = [l for l in body[s:e] if l.kind == "node"]
        if not block:
            fail(f"{where}: empty layer block")
        self.block_names = [l.name for l in block]
        bset = set(self.block_names)
        pre = {l.name for l in body[:s] if l.kind == "node"}
        post = [l for l in body[e:] if l.kind == "node"]
        params = {n for n, _ in dump.params}
        for p in lp:
            for l in body[:s] + body[e:]:
                if l.kind == "node" and p in l.refs():
                    fail(f"{where}:{l.lineno}: layer parameter {p} read outside the layer")
        # the block's output: the one block tensor read after the block
        outs = sorted({r for l in post for r in l.refs() if r in bset},
                      key=self.block_names.index)
        if len(outs) != 1:
            fail(f"{where}: the layer must hand exactly one tensor on, found {outs}")
        self.output = outs[0]
        ann_of = {l.name: l.ann for l in body if l.kind == "node"}
        reads_pre = []
        for l in block:
            for r in l.refs():
                if r in pre and r not in reads_pre:
                    reads_pre.append(r)
        hidden = [r for r in reads_pre if ann_of.get(r) == ann_of.get(self.output)]
        if len(hidden) != 1:
            fail(f"{where}: cannot tell the layer's hidden-state input among {reads_pre}")
        self.hidden = hidden[0]
        for l in block:
            if l.call.target.startswith("self."):
                fail(f"{where}:{l.lineno}: get_attr inside the layer is not supported")
        # name counters: span per base
        self.span = {}
        bases = {}
        for n in self.block_names:
            b, c = split_name(n)
            bases.setdefault(b, []).append(c)
        post_c = {}
        for l in post:
            b, c = split_name(l.name)
            post_c.setdefault(b, []).append(c)
        for b, cs in bases.items():
            if b in post_c and min(post_c[b]) > max(cs):
                self.span[b] = min(post_c[b]) - min(cs)
            else:
                self.span[b] = max(cs) - min(cs) + 1
        self.post_names = [l.name for l in post]
        self.layer_params = [p for p in layer_params]
        self.pre_names = pre
        self.params = params


def plan_params(params, layer_params, L):
    """New signature order and renaming of the primals: layer i's parameters
    follow layer i-1's; everything is renumbered primals_1.. by position.
    Returns (new param list [(name, ann)], map old->new for layer 0 and the
    rest, and per layer i >= 1 a map layer-0 name -> new name)."""
    names = [n for n, _ in params]
    if not all(re.fullmatch(r"primals_\d+", n) for n in names) or \
            names != [f"primals_{i + 1}" for i in range(len(names))]:
        fail("the inputs must be primals_1 .. primals_N in order")
    lp = [n for n in names if n in set(layer_params)]
    last = max(names.index(n) for n in lp)
    order = []                              # (layer, old name, ann)
    for i, (n, a) in enumerate(params):
        order.append((0, n, a))
        if i == last:
            for layer in range(1, L):
                order += [(layer, p, dict(params)[p]) for p in lp]
    base_map, layer_maps = {}, [dict() for _ in range(L)]
    newp = []
    for j, (layer, n, a) in enumerate(order):
        nn = f"primals_{j + 1}"
        newp.append((nn, a))
        if layer == 0:
            base_map[n] = nn
            if n in set(layer_params):
                layer_maps[0][n] = nn
        else:
            layer_maps[layer][n] = nn
    return newp, base_map, layer_maps


def rename_call(call, m):
    for i in call.names():
        if call.toks[i] in m:
            call.toks[i] = m[call.toks[i]]


def clone_line(l, m):
    n = Line.__new__(Line)
    n.raw, n.lineno, n.kind = l.raw, l.lineno, l.kind
    n.name, n.ann = (m.get(l.name, l.name) if l.name else l.name), l.ann
    n.call = n.free = None
    if l.kind == "node":
        n.call = Call(l.call.text())
        rename_call(n.call, m)
        if l.free is not None:
            n.free = Call(l.free.text())
            for i, t in enumerate(n.free.toks):
                if is_name(t) and t in m:
                    n.free.toks[i] = m[t]
    if l.kind == "return":
        n.items = [m.get(x, x) for x in l.items]
    return n


def replicate(dump, layout, L, param_plan):
    """The dump with its layer repeated L times.  Returns (new dump, map of
    names for the layer copies: list per layer {layer-0 name: new name}, map
    for names outside the layer {old: new})."""
    newp, base_map, layer_pmaps = param_plan
    maps = []
    for i in range(L):
        m = dict(layer_pmaps[i])
        for n in layout.block_names:
            b, c = split_name(n)
            m[n] = join_name(b, c + i * layout.span[b])
        if i > 0:
            m[layout.hidden] = maps[i - 1][layout.output]
        maps.append(m)
    outside = dict(base_map)
    for n in layout.post_names:
        b, c = split_name(n)
        if b in layout.span:
            outside[n] = join_name(b, c + (L - 1) * layout.span[b])
    # what reads the layer's output after the block reads the last layer's
    outside[layout.output] = maps[L - 1][layout.output]
    # layer 0 keeps the names outside too (hidden input = pre-block node)
    for k, v in outside.items():
        maps[0].setdefault(k, v)
    for i in range(1, L):
        for k, v in outside.items():
            maps[i].setdefault(k, v)
    body = dump.body
    out = [clone_line(l, outside) for l in body[:layout.start]]
    for i in range(L):
        out += [clone_line(l, maps[i]) for l in body[layout.start:layout.end]]
    for l in body[layout.end:]:
        if l.kind == "return":
            out.append(replicate_return(l, layout, maps, outside))
        else:
            out.append(clone_line(l, outside))
    nd = Dump.__new__(Dump)
    nd.path, nd.trailing_nl, nd.head = dump.path, dump.trailing_nl, list(dump.head)
    nd.params, nd.body = newp, out
    seen = set()
    for l in nd.nodes():
        if l.name in seen:
            fail(f"{dump.path}: renaming the layers made the name {l.name} twice")
        seen.add(l.name)
    return nd, maps, outside


def replicate_return(l, layout, maps, outside):
    """Runs of returned layer tensors (layer nodes or layer parameters) are
    repeated for every layer, in layer order."""
    layer0 = set(layout.block_names) | set(layout.layer_params)
    out, run = [], []

    def flush():
        for i in range(len(maps)):
            out.extend(maps[i][x] for x in run)
        run.clear()
    for x in l.items:
        if x in layer0:
            run.append(x)
        else:
            flush()
            out.append(outside.get(x, x))
    flush()
    n = Line.__new__(Line)
    n.raw, n.lineno, n.kind, n.items = l.raw, l.lineno, "return", out
    n.name = n.ann = n.call = n.free = None
    return n


def refree(dump):
    """Recompute the `;  a = b = None` suffixes as torch.fx prints them: after
    the node that uses a value last, every value it reads for the last time,
    in the order it reads them (returned values are never freed).  Needed
    after the layers are repeated, since layer 0's last uses move."""
    defined = {n for n, _ in dump.params} | {l.name for l in dump.nodes()}
    last = {}
    for li, l in enumerate(dump.body):
        if l.kind in ("node", "return"):
            for r in l.refs():
                if r in defined:
                    last[r] = li
    for li, l in enumerate(dump.body):
        if l.kind != "node":
            continue
        frees = []
        for r in l.refs():
            if r in defined and last.get(r) == li and r not in frees:
                frees.append(r)
        if l.name not in last:        # nobody reads it: freed at once
            frees.append(l.name)
        l.free = Call(" = ".join(frees) + " = None") if frees else None


# ---------------------------------------------------------------- ranks

def rank_diffs(d0, d1):
    """Token positions that differ between the r0 and r1 dumps:
    {line index: {token index: (v0, v1)}}; also checks the dumps agree
    everywhere else."""
    if d0.params != d1.params or len(d0.body) != len(d1.body):
        fail("the r0 and r1 dumps differ in their inputs or length")
    diffs = {}
    for li, (a, b) in enumerate(zip(d0.body, d1.body)):
        if a.kind != b.kind:
            fail(f"r0/r1 line {a.lineno}: different kinds of line")
        if a.kind == "node":
            if a.name != b.name or a.ann != b.ann or len(a.call.toks) != len(b.call.toks) or \
                    a.render().split(";  ")[1:] != b.render().split(";  ")[1:]:
                fail(f"r0/r1 line {a.lineno}: {a.name}: the ranks differ beyond constants")
            for ti, (x, y) in enumerate(zip(a.call.toks, b.call.toks)):
                if x != y:
                    diffs.setdefault(li, {})[ti] = (x, y)
        elif a.raw != b.raw and a.kind != "comment":
            fail(f"r0/r1 line {a.lineno}: the ranks differ")
        elif a.raw != b.raw:
            fail(f"r0/r1 line {a.lineno}: the ranks' source comments differ")
    return diffs


def fit_constant(line, ti, v0, v1, T):
    """A numeric constant that differs between ranks, as (c, step): value at
    rank k of T is (c + k) * step."""
    if not (is_int(v0) and is_int(v1)):
        fail(f"line {line.lineno}: {line.name}: rank-dependent non-integer {v0} / {v1}")
    a, b = int(v0), int(v1)
    step = b - a
    if step <= 0 or a % step:
        fail(f"line {line.lineno}: {line.name}: rank-dependent constant {a}, {b} is not "
             "a multiple of one rank's share")
    return a // step, step


def group_name(g_spec, g_rank, n):
    """TP group name at degree n, linear in n through the two dumps."""
    a, b = int(g_spec), int(g_rank)           # at degree 1 and TEMPLATE_TP
    slope = (b - a) // (TEMPLATE_TP - 1)
    if (b - a) % (TEMPLATE_TP - 1):
        fail("cannot fit the group names")
    return str(a + slope * (n - 1))


def render_rank(dump, walker, diffs, T, n, k, gname_map, width=None):
    """Rank k of n of the template dump (degree T) walked by walker: shapes
    and size arguments at degree n, widened by width (--heads) if given."""
    out = []
    for li, l in enumerate(dump.body):
        if l.kind != "node":
            out.append(l)
            continue
        c = clone_line(l, {})
        call = c.call
        op = call.target[len("torch.ops."):] if call.target.startswith("torch.ops.") else call.target
        v = walker.env[l.name]
        if isinstance(v, Shape):
            pa = parse_ann(l.ann) if l.ann else None
            if l.ann is not None:
                if pa is None:
                    fail(f"line {l.lineno}: unsupported annotation {l.ann}")
                c.ann = f"{pa[0]}[{', '.join(str(x) for x in v.local(n, width))}]"
        handled = set()
        if op == "aten.view.default" or op == "aten.empty.memory_format":
            a = 1 if op == "aten.view.default" else 0
            els = call.list_elems(a)
            loc = v.local(n, width)
            if len(els) != len(loc):
                fail(f"line {l.lineno}: {l.name}: size list and shape disagree")
            for i, ti in enumerate(els):
                if call.toks[ti] != "-1":
                    call.toks[ti] = str(loc[i])
                handled.add(ti)
        elif op == "aten.arange.start":
            ti = call.scalar(1)
            s = int(call.toks[call.scalar(0)])
            call.toks[ti] = str(s + v.local(n, width)[0])
            handled.add(ti)
        elif op == "_c10d_functional.all_gather_into_tensor.default":
            ti = call.scalar(1)
            call.toks[ti] = str(n)
            handled.add(ti)
        elif op == "_c10d_functional.reduce_scatter_tensor.default":
            ti = call.scalar(2)
            call.toks[ti] = str(n)
            handled.add(ti)
        elif op == "apex.fused_layer_norm_affine_fwd.default":
            # normalized_shape: the input's trailing sizes (never split:
            # checked by the walk); they change only when widened
            inp = walker.env[walker.tensor_args(l)[0][0]]
            els = call.list_elems(3)
            loc = inp.local(n, width)[len(inp.dims) - len(els):]
            for i, ti in enumerate(els):
                call.toks[ti] = str(loc[i])
                handled.add(ti)
        elif op == "aten.slice.Tensor" and width and li not in diffs:
            # a whole-dimension slice written with the size itself: widened
            inp = walker.env[walker.tensor_args(l)[0][0]]
            d = int(call.toks[call.scalar(1)]) % len(inp.dims)
            ts, te = call.scalar(2), call.scalar(3)
            if int(call.toks[ts]) == 0 and \
                    int(call.toks[te]) == dim_local(inp.dims[d], T):
                call.toks[te] = str(dim_local(inp.dims[d], n, width))
                handled.add(te)
        if op.startswith("_c10d_functional.") and op != "_c10d_functional.wait_tensor.default":
            gi = [i for i, t in enumerate(call.toks) if t.startswith("'") and t != "'sum'" and
                  t != "'max'" and t != "'min'" and t != "'avg'"]
            if len(gi) != 1:
                fail(f"line {l.lineno}: {l.name}: cannot find the group name")
            g = call.toks[gi[0]][1:-1]
            if g not in gname_map:
                fail(f"line {l.lineno}: {l.name}: unknown group {g}")
            call.toks[gi[0]] = "'" + gname_map[g] + "'"
        for ti, (v0, v1) in diffs.get(li, {}).items():
            if ti in handled:
                continue
            arg, key, elem, depth = call.pos[ti]
            before = [t for t in call.toks[:ti] if not t.isspace()][-2:]
            if key == "device" and depth == 2 and before == ["index", "="]:
                call.toks[ti] = str(k)
                continue
            cst, step = fit_constant(l, ti, v0, v1, T)
            if (step * T) % n:
                fail(f"line {l.lineno}: {l.name}: {step * T} is not divisible by TP={n}")
            call.toks[ti] = str((cst + k) * (step * T // n))
        out.append(c)
    nd = Dump.__new__(Dump)
    nd.path, nd.trailing_nl, nd.params, nd.body = dump.path, dump.trailing_nl, [], out
    nd.head = [re.sub(r"# Graph\[rank=\d+\]", f"# Graph[rank={k}]", h) for h in dump.head]
    ps = []
    for name, ann in dump.params:
        pa = parse_ann(ann)
        ps.append((name, f"{pa[0]}[{', '.join(str(x) for x in walker.env[name].local(n, width))}]"))
    nd.params = ps
    return nd


# ---------------------------------------------------------------- sheet

CAT_RE = re.compile(r"^cat\((.*), dim=(-?\d+)\)$")
RANK_RE = re.compile(r"^r(\d+)\.(\w+)$")


def generalize_exprs(exprs, T, n, m, where):
    """Relation entries of the template's form at degree n, with impl names
    renamed through m: [r0.x, r1.x] (replicas) -> [r0.x .. r{n-1}.x];
    [cat(r0.x, r1.x, dim=D)] -> [cat(r0.x, ..., r{n-1}.x, dim=D)]."""
    if not isinstance(exprs, list) or not exprs:
        fail(f"sheet: {where}: relation must be a non-empty list")
    reps = [RANK_RE.match(e) for e in exprs]
    if len(exprs) == T and all(reps) and \
            [int(r.group(1)) for r in reps] == list(range(T)) and \
            len({r.group(2) for r in reps}) == 1:
        x = m.get(reps[0].group(2), reps[0].group(2))
        return [f"r{k}.{x}" for k in range(n)]
    if len(exprs) == 1:
        c = CAT_RE.match(exprs[0])
        if c:
            parts = [RANK_RE.match(p.strip()) for p in c.group(1).split(",")]
            if len(parts) == T and all(parts) and \
                    [int(p.group(1)) for p in parts] == list(range(T)) and \
                    len({p.group(2) for p in parts}) == 1:
                x = m.get(parts[0].group(2), parts[0].group(2))
                return [f"cat({', '.join(f'r{k}.{x}' for k in range(n))}, dim={c.group(2)})"]
    fail(f"sheet: {where}: relation form {exprs} is not one the generator knows "
         "(replicas or one concatenation over all ranks)")


def split_inputs_of(sheet, T):
    """Input -> split dimension, read off the sheet's cat(...) relations."""
    out = {}
    for k, v in sheet["input_relation"].items():
        if len(v) == 1:
            c = CAT_RE.match(v[0])
            if c:
                parts = [RANK_RE.match(p.strip()) for p in c.group(1).split(",")]
                if len(parts) == T and all(parts):
                    out[parts[0].group(2)] = int(c.group(2))
    return out


def build_sheet(sheet, T, n, L, spec_d, rank_ds, smaps, soutside, rmaps, routside,
                groups_new, layer_params, notes_extra):
    s = {}
    s["case"] = f"gpt/synthetic-tp{n}-layers{L}"
    s["model"] = (f"SYNTHETIC Megatron-LM GPT (examples/simple_gpt.py), {L} transformer "
                  f"layer(s), TP=SP=VP={n}: generated by tools/bench/scale-capture.py "
                  "from the real TP=1/TP=2 one-layer dumps")
    s["synthetic"] = True
    s["spec"] = ["spec.py"]
    s["impl"] = [f"r{k}.py" for k in range(n)]
    s["groups"] = groups_new
    s["spec_groups"] = sheet.get("spec_groups", {})

    rel, roles = {}, {}
    lset = set(layer_params)
    for k, v in sheet["input_relation"].items():
        if k in lset:
            targets = [(i, smaps[i][k], rmaps[i]) for i in range(L)]
        else:
            targets = [(None, soutside.get(k, k), routside)]
        for layer, nk, rm in targets:
            rel[nk] = generalize_exprs(v, T, n, rm, f"input_relation[{k}]")
            role = sheet.get("input_roles", {}).get(k)
            if role is not None:
                roles[nk] = role.replace("layer 0 ", f"layer {layer} ") if layer is not None else role
    order = [p for p, _ in spec_d.params]
    rel = {k: rel[k] for k in sorted(rel, key=lambda x: order.index(x) if x in order else len(order))}
    roles = {k: roles[k] for k in rel if k in roles}
    s["input_relation"] = rel
    s["input_roles"] = roles
    spec_ann = dict(spec_d.params)
    r0_ann = dict(rank_ds[0].params)
    s["input_shapes"] = {k: {"spec": spec_ann[k], "impl": r0_ann[k]}
                         for k in sorted(rel, key=lambda x: int(x.split("_")[1]))
                         if k in spec_ann and k in r0_ann}
    if "expect_output_relation" in sheet:
        s["expect_output_relation"] = {
            soutside.get(k, k): generalize_exprs(v, T, n, routside, f"expect_output_relation[{k}]")
            for k, v in sheet["expect_output_relation"].items()}
    s["check_outputs"] = [soutside.get(x, x) for x in sheet.get("check_outputs", [])]
    s["expected_verdict"] = sheet.get("expected_verdict", "refines")
    ai = []
    for a in sheet.get("entangle_assumed_intermediates", []):
        name = a["spec"]
        if name in smaps[0] and name not in soutside:
            for i in range(L):
                ai.append({"spec": smaps[i][name],
                           "impl_exprs": generalize_exprs(a["impl_exprs"], T, n, rmaps[i],
                                                          "entangle_assumed_intermediates"),
                           "what": a.get("what", "").replace("layer 0", f"layer {i}")})
        else:
            ai.append({"spec": soutside.get(name, name),
                       "impl_exprs": generalize_exprs(a["impl_exprs"], T, n, routside,
                                                      "entangle_assumed_intermediates"),
                       "what": a.get("what", "")})
    if ai:
        s["entangle_assumed_intermediates"] = ai
    if "lift_fresh_copy_constants" in sheet:
        s["lift_fresh_copy_constants"] = sheet["lift_fresh_copy_constants"]
    s["notes"] = (
        "SYNTHETIC capture: not recorded from a Megatron-LM run.  Generated by "
        "tools/bench/scale-capture.py from the real dumps entangle-data/gpt/paral1_layer1 "
        "(spec) and paral2_layer1 (TP=2 ranks) and their sheet relations/gpt-paral2_layer1.json: "
        f"shapes divided by TP={n} along the dimensions the walk of the TP=2 graph finds split, "
        "vocabulary-range and sequence-parallel slice constants refitted to rank k of N, "
        f"the transformer layer repeated {L} time(s) with torch.fx-style renaming and new "
        "parameters (inputs) per layer; same operators in the same order as the real dumps.  "
        + notes_extra +
        " Relations of the new layers' parameters have the form of layer 0's.  The "
        "_tensor_constantN values are Entangle's (0), as in the source sheet.")
    return s


# ---------------------------------------------------------------- main

def divisors_ok(walker, n, width=None):
    """Every split size (widened by width) divisible by n?"""
    bad = set()
    for v in walker.env.values():
        shapes = v if isinstance(v, tuple) else (v,)
        for s in shapes:
            if isinstance(s, Shape) and s.dims:
                for d in s.dims:
                    for full, split in d:
                        full = width.get(full, full) if width else full
                        if split and full % n:
                            bad.add(full)
    return sorted(bad)


def generate(rg, n, L, outdir, heads=TEMPLATE_HEADS):
    sheet_path = os.path.join(rg, SHEET)
    try:
        with open(sheet_path) as f:
            sheet = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read the sheet {sheet_path}: {e}")
    if not isinstance(sheet, dict) or not isinstance(sheet.get("input_relation"), dict):
        fail(f"{sheet_path}: not a relation sheet")
    T = TEMPLATE_TP
    spec = Dump(os.path.join(rg, SPEC_DUMP))
    r0 = Dump(os.path.join(rg, RANK_DUMPS[0]))
    r1 = Dump(os.path.join(rg, RANK_DUMPS[1]))
    roles = sheet.get("input_roles", {})
    layer_params = [k for k, v in roles.items() if v.startswith("layer 0 ")]
    later = [k for k, v in roles.items() if v.startswith("final_layernorm")]
    if not layer_params or not later:
        fail(f"{sheet_path}: input_roles must name the layer-0 and final_layernorm parameters")
    layer_params = [p for p, _ in spec.params if p in set(layer_params)]

    # groups: the template's TP group and the spec's one-member group
    groups = sheet.get("groups", {})
    sgroups = sheet.get("spec_groups", {})
    if len(groups) != 1 or list(groups.values())[0] != list(range(T)) or len(sgroups) != 1:
        fail(f"{sheet_path}: expected one TP group of ranks 0..{T - 1} and one spec group")
    g_rank, g_spec = list(groups)[0], list(sgroups)[0]
    g_new = group_name(g_spec, g_rank, n)

    # layers
    lay_s = Layout(spec, layer_params, later, spec.path)
    lay_r = Layout(r0, layer_params, later, r0.path)
    pplan_s = plan_params(spec.params, layer_params, L)
    pplan_r = plan_params(r0.params, layer_params, L)
    spec_L, smaps, sout = replicate(spec, lay_s, L, pplan_s)
    r0_L, rmaps, rout = replicate(r0, lay_r, L, pplan_r)
    r1_L, _, _ = replicate(r1, Layout(r1, layer_params, later, r1.path), L, pplan_r)
    for d in (spec_L, r0_L, r1_L):
        refree(d)

    diffs = rank_diffs(r0_L, r1_L)
    split = {pplan_r[1].get(k, k): d for k, d in split_inputs_of(sheet, T).items()}
    for i in range(1, L):
        for k, d in split_inputs_of(sheet, T).items():
            if k in pplan_r[2][i]:
                split[pplan_r[2][i][k]] = d
    w = Walker(r0_L, T, split, diffs, "r0")
    w.run(r0_L)
    width = width_map(heads)
    if width:
        check_width_atoms(w, "r0")
    bad = divisors_ok(w, n, width)
    if bad:
        fail(f"TP={n} does not divide the split sizes {bad} of the model "
             f"(TP must divide each of them)" +
             ("" if width else f"; --heads H with H divisible by {n} widens the model"))
    ranks = [render_rank(r0_L, w, diffs, T, n, k, {g_rank: g_new}, width) for k in range(n)]
    if width:  # the spec's sizes widened too: walked and printed like a rank
        ws = Walker(spec_L, 1, {}, {}, "spec")
        ws.run(spec_L)
        spec_L = render_rank(spec_L, ws, {}, 1, 1, 0, {g_spec: g_spec}, width)
    # every generated graph must be consistent again: the spec walked with
    # nothing split, rank 0 walked as a template of degree n
    Walker(spec_L, 1, {}, {}, "spec.py").run(spec_L)
    if n > 1:
        Walker(ranks[0], n, split, rank_diffs(ranks[0], ranks[1]), "r0.py").run(ranks[0])

    notes_extra = (f"The TP process group's name '{g_new}' is fitted linearly to the two "
                   f"dumps ('{g_spec}' at TP=1, '{g_rank}' at TP=2) and is a guess for TP>2.")
    if width:
        notes_extra += (f" WIDENED: {heads} attention heads of 32 (the dumps: 24), hidden "
                        f"{32 * heads}, fused QKV {96 * heads}, MLP {128 * heads} "
                        "(scale-capture.py --heads).")
    sh = build_sheet(sheet, T, n, L, spec_L, ranks, smaps, sout, rmaps, rout,
                     {g_new: list(range(n))}, layer_params, notes_extra)
    if width:
        sh["case"] += f"-heads{heads}"
        sh["model"] += f", widened to {heads} heads (hidden {32 * heads})"
        sh["heads"] = heads
    try:
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, "spec.py"), "w") as f:
            f.write(spec_L.render())
        for k, d in enumerate(ranks):
            with open(os.path.join(outdir, f"r{k}.py"), "w") as f:
                f.write(d.render())
        with open(os.path.join(outdir, "sheet.json"), "w") as f:
            json.dump(sh, f, indent=1)
            f.write("\n")
    except OSError as e:
        fail(f"cannot write into {outdir}: {e}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--real-graphs", required=True, help="the real-graphs folder")
    ap.add_argument("--tp", type=int, required=True, help="tensor-parallel degree N (>= 2)")
    ap.add_argument("--layers", type=int, required=True, help="transformer layers L (>= 1)")
    ap.add_argument("--heads", type=int, default=TEMPLATE_HEADS,
                    help="attention heads (default 24, the dumps'); head size 32 kept, so "
                    "hidden = 32 H, QKV = 96 H, MLP = 128 H; TP must divide H")
    ap.add_argument("-o", "--output", required=True, help="output folder")
    a = ap.parse_args(argv)
    try:
        if a.tp < 2:
            fail(f"--tp {a.tp}: the degree must be at least 2 (TP=1 is the spec itself)")
        if a.layers < 1 or a.layers > 1024:
            fail(f"--layers {a.layers}: must be between 1 and 1024")
        if a.heads < 1 or a.heads > 4096:
            fail(f"--heads {a.heads}: must be between 1 and 4096")
        generate(a.real_graphs, a.tp, a.layers, a.output, a.heads)
    except InputError as e:
        print(f"scale-capture: {e}", file=sys.stderr)
        return EXIT_INPUT
    except (ValueError, IndexError, KeyError, TypeError, AttributeError, ZeroDivisionError) as e:
        # a dump or sheet outside what the walk understands: no traceback
        print(f"scale-capture: unsupported input ({type(e).__name__}: {e})", file=sys.stderr)
        return EXIT_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
