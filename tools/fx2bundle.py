#!/usr/bin/env python3
"""fx2bundle.py -- turn printed TorchDynamo/AOTAutograd graphs (torch.fx
GraphModule dumps, one per rank) plus a relation sheet into a shardcheck
bundle with per-rank implementation graphs.  See docs/real-captures.md.

    python3 tools/fx2bundle.py --spec SPEC.py --impl R0.py R1.py ... \
        --relation SHEET.json -o OUT.json
    python3 tools/fx2bundle.py --sheet-only SHEET.json --root DIR -o OUT.json

Python 3 standard library only (no torch): the dumps are not importable
Python, so they are read line by line with a small tokenizer for the subset
of Python that torch.fx prints.

Invariants of the output:
  - every graph lists its nodes in dump (program) order, and every tensor a
    node reads is a graph input or an output of an earlier node;
  - getitem lines are folded into the multi-output node they read (one node,
    its results in index order, null for results nobody reads);
  - nothing of Python's reference bookkeeping (`;  a = b = None`) survives;
  - the same inputs always give byte-identical output.
Errors in the input never raise a traceback: they print `FILE:LINE: what`
(or `SHEET: what`) on stderr and exit 2.
"""

import argparse
import json
import math
import os
import re
import sys

EXIT_OK = 0
EXIT_INPUT = 2
EXIT_INTERNAL = 3

# dtype codes of the shape annotations -> bundle dtype strings
ANN_DTYPES = {"f64": "f64", "f32": "f32", "f16": "f16", "bf16": "bf16",
              "i64": "i64", "i32": "i32", "i8": "i8", "u8": "u8", "b8": "bool"}
# torch dtype names as FX prints them (and their aliases) -> bundle dtype strings
TORCH_DTYPES = {"float64": "f64", "double": "f64", "float32": "f32", "float": "f32",
                "float16": "f16", "half": "f16", "bfloat16": "bf16",
                "int64": "i64", "long": "i64", "int32": "i32", "int": "i32",
                "int8": "i8", "uint8": "u8", "bool": "bool"}
# keyword arguments that carry no meaning for the check (device placement etc.)
DROPPED_KWARGS = {"device", "layout", "memory_format", "pin_memory", "non_blocking"}

# Which arguments a custom op writes, in schema order, for the ops that
# appear inside higher_order.auto_functionalized (v1 does not say which).
# Extend on the command line with --mutates OP=arg,arg.
KNOWN_MUTATED = {
    "_C.rms_norm.default": ["result"],
    "_C.fused_add_rms_norm.default": ["input", "residual"],
    "_C.rotary_embedding.default": ["query", "key"],
    "_C.silu_and_mul.default": ["out"],
    "vllm.unified_attention_with_output.default": ["output"],
    "tg.inplace_log_tensor.default": ["t"],
}

# Results of multi-output operators whose count is fixed by the schema, so
# that a result nobody reads still gets its null slot at the end.
FIXED_ARITY = {
    "aten.native_dropout.default": 2, "aten.max.dim": 2, "aten.min.dim": 2,
    "aten.sort.default": 2, "aten.topk.default": 2, "aten.var_mean.correction": 2,
    "aten.native_layer_norm.default": 3, "aten.native_layer_norm_backward.default": 3,
    "aten.native_batch_norm.default": 3, "aten.native_group_norm.default": 3,
    "apex.fused_layer_norm_affine_fwd.default": 3,
    "apex.fused_layer_norm_affine_bwd.default": 3,
}

# Operators whose result aliases their first argument: an in-place write into
# such a result would also change the base, which renaming cannot express.
VIEW_OPS = {"view", "_unsafe_view", "_reshape_alias", "reshape", "t", "transpose",
            "permute", "slice", "select", "expand", "unsqueeze", "squeeze", "as_strided",
            "detach", "alias", "diagonal", "narrow", "unfold", "split", "split_with_sizes",
            "chunk", "unbind", "view_as", "expand_as", "unflatten", "flatten"}

SYM_OPS = {"+", "-", "*", "//", "%"}
CMP_OPS = {">=", "<=", ">", "<", "==", "!="}


class ConvertError(Exception):
    """An input error: where (file and line, or file alone) and what."""

    def __init__(self, where, msg):
        super().__init__(f"{where}: {msg}")


# ---------------------------------------------------------------------------
# Tokenizer and parser for the Python subset torch.fx prints
# ---------------------------------------------------------------------------

TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t]+)
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<op>//|>=|<=|==|!=|\*\*|[-+*/%<>()\[\],=:;.])
""", re.VERBOSE)

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}


def unquote(lit):
    body, out, i = lit[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(ESCAPES.get(body[i + 1], "\\" + body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokenize(text, where):
    toks, pos = [], 0
    while pos < len(text):
        if text[pos] == "#":
            break
        m = TOKEN_RE.match(text, pos)
        if m is None:
            raise ConvertError(where, f"cannot read {text[pos:pos + 20]!r} (column {pos + 1})")
        kind = m.lastgroup
        if kind != "ws":
            val = m.group(kind)
            if kind == "str":
                val = unquote(val)
            toks.append((kind, val, pos + 1))
        pos = m.end()
    toks.append(("end", "", len(text) + 1))
    return toks


class Parser:
    """Recursive descent over one line's tokens.  AST nodes are tuples:
    ('name', s) ('attr', base, s) ('call', f, args, kwargs) ('index', base, e)
    ('num', v) ('str', s) ('list', [..]) ('tuple', [..]) ('neg', e)
    ('bin', op, l, r)."""

    def __init__(self, text, where):
        self.toks = tokenize(text, where)
        self.i = 0
        self.where = where

    def peek(self, k=0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, val, k=0):
        t = self.peek(k)
        return t[0] in ("op", "name") and t[1] == val

    def take(self):
        t = self.toks[self.i]
        if t[0] != "end":
            self.i += 1
        return t

    def fail(self, what):
        t = self.peek()
        found = "end of line" if t[0] == "end" else repr(t[1])
        raise ConvertError(self.where, f"{what}, found {found} (column {t[2]})")

    def expect(self, val):
        if not self.at(val):
            self.fail(f"expected {val!r}")
        return self.take()

    def expect_name(self):
        t = self.peek()
        if t[0] != "name":
            self.fail("expected a name")
        return self.take()[1]

    def at_end(self):
        return self.peek()[0] == "end"

    # expr := sum [CMP sum]
    def expr(self):
        left = self.arith()
        t = self.peek()
        if t[0] == "op" and t[1] in CMP_OPS:
            self.take()
            return ("bin", t[1], left, self.arith())
        return left

    # arith := term {(+|-) term}
    def arith(self):
        left = self.term()
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            left = ("bin", op, left, self.term())
        return left

    # term := unary {(*|//|%|/) unary}
    def term(self):
        left = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "//", "%", "/"):
            op = self.take()[1]
            left = ("bin", op, left, self.unary())
        return left

    # unary := '-' unary | primary
    def unary(self):
        if self.at("-"):
            self.take()
            return ("neg", self.unary())
        return self.primary()

    # primary := atom { '.' NAME | '(' arglist ')' | '[' expr ']' }
    def primary(self):
        node = self.atom()
        while True:
            if self.at("."):
                self.take()
                node = ("attr", node, self.expect_name())
            elif self.at("("):
                self.take()
                args, kwargs = self.arglist(")")
                node = ("call", node, args, kwargs)
            elif self.at("["):
                self.take()
                idx = self.expr()
                self.expect("]")
                node = ("index", node, idx)
            else:
                return node

    def atom(self):
        t = self.peek()
        if t[0] == "name":
            self.take()
            return ("name", t[1])
        if t[0] == "num":
            self.take()
            s = t[1]
            if re.fullmatch(r"\d+", s):
                return ("num", int(s))
            return ("num", float(s))
        if t[0] == "str":
            self.take()
            return ("str", t[1])
        if self.at("["):
            self.take()
            items = self.items("]")
            return ("list", items)
        if self.at("("):
            self.take()
            items, trailing = self.items(")", want_trailing=True)
            if len(items) == 1 and not trailing:
                return items[0]
            return ("tuple", items)
        self.fail("expected a value")

    def items(self, close, want_trailing=False):
        items, trailing = [], False
        while not self.at(close):
            items.append(self.expr())
            trailing = False
            if self.at(","):
                self.take()
                trailing = True
            elif not self.at(close):
                self.fail(f"expected ',' or {close!r}")
        self.take()
        return (items, trailing) if want_trailing else items

    # arglist := [ (expr | NAME '=' expr) {',' ...} ] close
    def arglist(self, close):
        args, kwargs = [], []
        while not self.at(close):
            if self.peek()[0] == "name" and self.at("=", 1):
                key = self.take()[1]
                self.take()
                if any(k == key for k, _ in kwargs):
                    self.fail(f"keyword {key!r} given twice")
                kwargs.append((key, self.expr()))
            else:
                if kwargs:
                    self.fail("positional argument after a keyword argument")
                args.append(self.expr())
            if self.at(","):
                self.take()
            elif not self.at(close):
                self.fail(f"expected ',' or {close!r}")
        self.take()
        return args, kwargs


def dotted(node):
    """'torch.ops.aten.mm.default' for an attribute chain, else None."""
    parts = []
    while node[0] == "attr":
        parts.append(node[2])
        node = node[1]
    if node[0] != "name":
        return None
    parts.append(node[1])
    return ".".join(reversed(parts))


# ---------------------------------------------------------------------------
# Annotations
# ---------------------------------------------------------------------------

ANN_RE = re.compile(r"^([a-z0-9]+)\[(.*)\]$")
SYMDIM_RE = re.compile(r"^[A-Za-z0-9_ +\-*/%()]+$")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_tensor_ann(ann, where):
    """'f32[8, 1536]' -> (shape list, dtype).  Dims are ints or symbolic
    expression strings ('u0', '2*u0')."""
    m = ANN_RE.match(ann.strip())
    if m is None:
        raise ConvertError(where, f"cannot read the shape annotation {ann!r}")
    code, dims = m.group(1), m.group(2).strip()
    if code not in ANN_DTYPES:
        raise ConvertError(where, f"unsupported dtype {code!r} in annotation {ann!r} "
                           f"(known: {', '.join(sorted(ANN_DTYPES))})")
    shape = []
    if dims:
        for d in dims.split(","):
            d = d.strip()
            if re.fullmatch(r"\d+", d):
                shape.append(int(d))
            elif d and SYMDIM_RE.match(d) and IDENT_RE.search(d):
                shape.append(d.replace(" ", ""))
            else:
                raise ConvertError(where, f"cannot read dimension {d!r} of annotation {ann!r}")
    return shape, ANN_DTYPES[code]


def symbols_in(shape):
    out = []
    for d in shape:
        if isinstance(d, str):
            for s in IDENT_RE.findall(d):
                if s not in out and s not in ("Max", "Min", "FloorDiv", "Mod"):
                    out.append(s)
    return out


SIMPLE_CMP_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|>|<|==)\s*(-?\d+)\s*$")


# ---------------------------------------------------------------------------
# One dump -> one graph
# ---------------------------------------------------------------------------

HEADER_RE = re.compile(r"^# Graph\[rank=(\d+)\]\((\w+), gid=(\d+)\)")
FILE_RE = re.compile(r"^#\s*File:\s*(.*?):(\d+) in ([^,]*), code:")
DEF_RE = re.compile(r"^    def forward\((.*)\):\s*$")
CLASS_RE = re.compile(r"^class ([A-Za-z_<>][A-Za-z0-9_<>]*)\(.*\):\s*$")
PRELUDE_RE = re.compile(r"^(import [\w.]+( as \w+)?|from [\w.]+ import [\w, ]+|"
                        r"[A-Za-z_]\w*: type)\s*$")


class Multi:
    """A call whose results are read through getitem: its node object is
    already in the node list; getitem lines fill its outputs."""

    def __init__(self, node, arity, kind, line):
        self.node = node
        self.arity = arity          # fixed number of results, or None
        self.kind = kind            # 'plain' | 'af' (auto_functionalized: index 0 is None)
        self.results = {}           # index -> output dict
        self.line = line


class GraphReader:
    def __init__(self, path, display, constants, mutated, role):
        self.path = path
        self.display = display
        self.constants = constants      # _tensor_constantN -> value (sheet)
        self.mutated = mutated          # op -> mutated arg names (v1 auto_functionalized)
        self.role = role                # 'spec' or 'rank k'
        self.header = None              # (rank, kind, gid)
        self.inputs = []
        self.nodes = []
        self.outputs = []
        self.tensors = {}               # name -> (shape, dtype) or None when unknown
        self.alias = {}                 # renames after in-place writes: old -> new
        self.views = {}                 # tensor -> base it aliases (view-op results)
        self.sym = {}                   # SymInt/SymBool node -> expression text
        self.multi = {}                 # name -> Multi
        self.get_attrs = {}             # _tensor_constantN -> (line, annotation or None)
        self.node_names = set()
        self.assume = []
        self.sym_bounds = {}            # symbol -> {'min': , 'max': }
        self.collectives = []           # (node name, group) in program order
        self.line = 0
        self.src = None

    # -- errors -----------------------------------------------------------
    def where(self, line=None):
        return f"{self.display}:{self.line if line is None else line}"

    def fail(self, msg, line=None):
        raise ConvertError(self.where(line), msg)

    # -- driver -----------------------------------------------------------
    def read(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise ConvertError(self.display, f"cannot read: {e.strerror}")
        except UnicodeDecodeError as e:
            raise ConvertError(self.display, f"not UTF-8 text ({e.reason})")
        state = "prelude"
        joint_pending = None        # 'decl' then 'flatten' for joint graphs
        for no, raw in enumerate(lines, 1):
            self.line = no
            line = raw.rstrip()
            stripped = line.strip()
            if state == "prelude":
                m = HEADER_RE.match(stripped)
                if m:
                    self.header = (int(m.group(1)), m.group(2), int(m.group(3)))
                    continue
                if not stripped or stripped.startswith("#") or PRELUDE_RE.match(stripped):
                    continue
                if CLASS_RE.match(line):
                    state = "class"
                    continue
                self.fail(f"expected a GraphModule class, found {stripped[:60]!r}")
            elif state == "class":
                if not stripped or stripped.startswith("#"):
                    continue
                m = DEF_RE.match(line)
                if m is None:
                    self.fail(f"expected 'def forward(self, ...):', found {stripped[:60]!r}")
                joint_pending = self.read_params(m.group(1))
                state = "body"
            elif state == "body":
                if not stripped:
                    self.src = None
                    continue
                if stripped.startswith("#"):
                    fm = FILE_RE.match(stripped)
                    if fm:
                        self.src = f"{fm.group(1)}:{fm.group(2)}"
                    continue
                if not line.startswith("        ") or line.startswith("         "):
                    self.fail("expected a statement of forward's body (8 spaces of indent); "
                              "nested GraphModules are not supported")
                if joint_pending == "decl":
                    self.read_declarations(stripped)
                    joint_pending = "flatten"
                    continue
                if joint_pending == "flatten":
                    self.read_flatten(stripped)
                    joint_pending = None
                    continue
                if stripped.startswith("return ") or stripped == "return":
                    self.read_return(stripped)
                    state = "done"
                    continue
                self.read_statement(stripped)
            else:  # done
                if not stripped or stripped.startswith("#"):
                    continue
                self.fail(f"unexpected text after forward's return: {stripped[:60]!r}")
        if state != "done":
            self.line = len(lines)
            what = {"prelude": "no GraphModule class", "class": "no forward method",
                    "body": "forward has no return statement"}[state]
            self.fail(what)
        self.finish()
        return self

    # -- inputs -----------------------------------------------------------
    def add_input(self, name, ann):
        if name in self.tensors:
            self.fail(f"input {name!r} is declared twice")
        shape, dtype = parse_tensor_ann(ann, self.where())
        self.tensors[name] = (shape, dtype)
        self.inputs.append({"name": name, "shape": shape, "dtype": dtype})

    def read_params(self, text):
        p = Parser(text, self.where())
        if p.expect_name() != "self":
            self.fail("forward's first parameter is not self")
        bare = []
        while not p.at_end():
            p.expect(",")
            if p.at_end():
                break
            name = p.expect_name()
            if p.at(":"):
                p.take()
                t = p.peek()
                if t[0] != "str":
                    p.fail("expected a shape annotation string")
                p.take()
                if bare:
                    self.fail("annotated and bare parameters mixed in forward's signature")
                self.add_input(name, t[1])
            else:
                if self.inputs:
                    self.fail("annotated and bare parameters mixed in forward's signature")
                bare.append(name)
        if bare:
            if bare != ["primals", "tangents"] and bare != ["primals"]:
                self.fail(f"parameter {bare[0]!r} has no shape annotation")
            return "decl"
        return None

    def read_declarations(self, text):
        p = Parser(text, self.where())
        while not p.at_end():
            name = p.expect_name()
            p.expect(":")
            t = p.peek()
            if t[0] != "str":
                p.fail("expected a shape annotation string")
            p.take()
            self.add_input(name, t[1])
            if not p.at_end():
                p.expect(";")
        if not self.inputs:
            self.fail("expected the joint graph's input declarations (name: \"f32[...]\"; ...)")

    def read_flatten(self, text):
        p = Parser(text, self.where())
        names = []
        while not p.at("="):
            names.append(p.expect_name())
            if p.at(","):
                p.take()
            elif not p.at("="):
                p.fail("expected ',' or '='")
        p.take()
        rhs = p.expr()
        if rhs[0] != "call" or dotted(rhs[1]) != "fx_pytree.tree_flatten_spec":
            self.fail("expected 'NAMES = fx_pytree.tree_flatten_spec(...)' after the "
                      "joint graph's declarations")
        if names != [i["name"] for i in self.inputs]:
            self.fail("tree_flatten_spec unpacks other names than the declarations list")

    # -- values -----------------------------------------------------------
    def resolve(self, name):
        while name in self.alias:
            name = self.alias[name]
        return name

    def tensor_ref(self, node, what):
        if node[0] != "name":
            self.fail(f"{what} must name a tensor")
        name = self.resolve(node[1])
        if name not in self.tensors:
            if name in self.multi:
                self.fail(f"{name!r} has several results: read them with {name}[i]")
            self.fail(f"{what} {name!r} is not defined before this line")
        return name

    def value(self, node, key=None):
        """JSON value of an argument.  Returns (drop?, value)."""
        kind = node[0]
        if kind == "name":
            n = node[1]
            if n in ("None",):
                return None
            if n == "True":
                return True
            if n == "False":
                return False
            r = self.resolve(n)
            if r in self.tensors:
                return r
            if r in self.sym:
                text = self.sym[r]
                return int(text) if re.fullmatch(r"-?\d+", text) else text
            if r in self.multi:
                self.fail(f"{r!r} has several results: read them with {r}[i]")
            if r in self.get_attrs:
                return self.materialize_attr(r)
            if n in ("inf", "nan"):
                return n
            self.fail(f"{n!r} is not defined before this line")
        if kind == "num":
            v = node[1]
            if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
                return "nan" if math.isnan(v) else "inf"
            return v
        if kind == "str":
            return node[1]
        if kind == "neg":
            inner = node[1]
            if inner[0] == "num":
                return -inner[1]
            if inner[0] == "name" and inner[1] == "inf":
                return "-inf"
            v = self.value(inner)
            if isinstance(v, str) and self.is_sym_text(v):
                return f"-({v})"
            self.fail("cannot negate this argument")
        if kind in ("list", "tuple"):
            return [self.value(x) for x in node[1]]
        if kind == "attr":
            d = dotted(node)
            if d is not None and d.startswith("torch."):
                tail = d[len("torch."):]
                if tail in TORCH_DTYPES:
                    return TORCH_DTYPES[tail]
                if tail in ("strided", "sparse_coo", "contiguous_format", "channels_last",
                            "preserve_format", "channels_last_3d"):
                    return tail
                self.fail(f"unsupported constant {d!r}")
            self.fail(f"unsupported argument {d or 'expression'!r}")
        if kind == "call":
            f = dotted(node[1])
            if f == "device":
                return self.device_text(node)
            if f == "float" and len(node[2]) == 1 and node[2][0][0] == "str":
                s = node[2][0][1].strip().lower()
                if s in ("inf", "+inf", "-inf", "nan"):
                    return s.lstrip("+")
            self.fail(f"unsupported call {f or 'expression'!r} inside an argument")
        if kind == "bin":
            return self.sym_expr(node)
        if kind == "index":
            self.fail("a tuple index inside an argument is not supported; FX prints it on "
                      "its own line")
        self.fail("unsupported argument")

    def device_text(self, node):
        kw = dict(node[3])
        t = kw.get("type", node[2][0] if node[2] else ("str", "cpu"))
        s = t[1] if t[0] == "str" else "cpu"
        idx = kw.get("index")
        if idx is not None and idx[0] == "num":
            s = f"{s}:{idx[1]}"
        return s

    @staticmethod
    def is_sym_text(v):
        return bool(IDENT_RE.search(v)) and SYMDIM_RE.match(v) is not None

    def sym_expr(self, node):
        """Text of a SymInt expression built from sym nodes and ints."""
        kind = node[0]
        if kind == "num" and isinstance(node[1], int):
            return str(node[1])
        if kind == "name":
            r = self.resolve(node[1])
            if r in self.sym:
                return self.sym[r]
            self.fail(f"{node[1]!r} is not a SymInt defined before this line")
        if kind == "neg":
            return f"-({self.sym_expr(node[1])})"
        if kind == "bin" and (node[1] in SYM_OPS or node[1] in CMP_OPS):
            op = "/" if node[1] == "//" else node[1]
            return f"({self.sym_expr(node[2])}) {op} ({self.sym_expr(node[3])})"
        self.fail("unsupported SymInt expression")

    def materialize_attr(self, name):
        """A get_attr read by something else than lift_fresh_copy: only an
        annotated one can become a constant node."""
        line, ann = self.get_attrs[name]
        if ann is None:
            self.fail(f"{name} (a get_attr without annotation) is read directly; only "
                      f"lift_fresh_copy({name}) is supported")
        shape, dtype = parse_tensor_ann(ann, self.where(line))
        self.emit_constant(name, name, shape, dtype, line)
        del self.get_attrs[name]
        return name

    def constant_value(self, attr, dtype):
        if attr not in self.constants:
            self.fail(f"no value for {attr} (not in the dump): give it in the sheet's "
                      f"lift_fresh_copy_constants")
        v = self.constants[attr]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(f"lift_fresh_copy_constants[{attr}] must be a number, found {v!r}")
        if dtype == "bool":
            return bool(v)
        if dtype.startswith(("i", "u")):
            if float(v) != int(v):
                self.fail(f"lift_fresh_copy_constants[{attr}] = {v} is not an integer but "
                          f"the tensor is {dtype}")
            return int(v)
        return float(v)

    def emit_constant(self, node_name, tensor, shape, dtype, line, attr=None):
        if any(isinstance(d, str) for d in shape):
            self.fail("a constant with a symbolic shape is not supported", line)
        value = self.constant_value(attr or node_name, dtype)
        node = {"name": node_name, "op": "aten.full.default", "args": [shape, value],
                "kwargs": {"dtype": dtype},
                "outputs": [{"name": tensor, "shape": shape, "dtype": dtype}]}
        if self.src:
            node["src"] = self.src
        self.add_node(node)

    # -- statements -------------------------------------------------------
    def add_node(self, node):
        if node["name"] in self.node_names:
            self.fail(f"node name {node['name']!r} is used twice")
        self.node_names.add(node["name"])
        for o in node["outputs"]:
            if o is not None:
                self.define(o["name"], (o.get("shape"), o.get("dtype")))
        self.nodes.append(node)

    def define(self, name, typ):
        if name in self.tensors or name in self.sym or name in self.multi:
            self.fail(f"{name!r} is defined twice")
        self.tensors[name] = typ

    def read_statement(self, text):
        p = Parser(text, self.where())
        target = p.expect_name()
        ann = None
        if p.at(":"):
            p.take()
            t = p.peek()
            if t[0] != "str":
                p.fail("expected an annotation string")
            ann = p.take()[1]
        p.expect("=")
        rhs = p.expr()
        if not p.at_end():
            p.expect(";")
            self.check_tail(p)
        self.statement(target, ann, rhs)

    def check_tail(self, p):
        """`a = b = None` (and more such, separated by ';'): reference drops."""
        while not p.at_end():
            t = p.take()
            if t[0] == "name" or (t[0] == "op" and t[1] in ("=", ";")):
                continue
            p.i -= 1
            p.fail("expected only 'name = ... = None' after ';'")

    def statement(self, target, ann, rhs):
        kind = rhs[0]
        # self._tensor_constantN
        if kind == "attr" and rhs[1] == ("name", "self"):
            if target in self.get_attrs or target in self.tensors:
                self.fail(f"{target!r} is defined twice")
            self.get_attrs[target] = (self.line, ann)
            return
        # x[i]
        if kind == "index":
            self.getitem(target, ann, rhs)
            return
        # SymInt arithmetic and comparisons written as Python operators
        if kind in ("bin", "neg"):
            self.sym_node(target, ann, rhs)
            return
        if kind != "call":
            self.fail("expected a call of torch.ops.*, a tuple index or a SymInt expression")
        f = dotted(rhs[1])
        if f is None or not f.startswith("torch.ops."):
            self.fail(f"unsupported call {f or 'expression'!r} (only torch.ops.* is supported)")
        op = f[len("torch.ops."):]
        if op in ("higher_order.auto_functionalized", "higher_order.auto_functionalized_v2"):
            self.auto_functionalized(target, ann, op.endswith("_v2"), rhs)
            return
        if op == "aten.lift_fresh_copy.default":
            self.lift_fresh_copy(target, ann, rhs)
            return
        if op == "aten._assert_scalar.default":
            self.assert_scalar(rhs)
            return
        if ann is not None and ann.startswith("Sym("):
            self.sym_node(target, ann, rhs, op=op)
            return
        self.call(target, ann, op, rhs)

    def convert_args(self, rhs):
        args = [self.value(a) for a in rhs[2]]
        kwargs = {}
        for k, v in rhs[3]:
            if k in DROPPED_KWARGS:
                continue
            kwargs[k] = self.value(v, key=k)
        return args, kwargs

    def call(self, target, ann, op, rhs):
        inplace = self.inplace_base(op)
        args, kwargs = self.convert_args(rhs)
        node = {"name": target, "op": op, "args": args, "kwargs": kwargs}
        if ann is None:
            node["outputs"] = []
            if self.src:
                node["src"] = self.src
            self.node_names_check(target)
            self.nodes.append(node)
            self.node_names.add(target)
            arity = FIXED_ARITY.get(op)
            if op in ("aten.split_with_sizes.default", "aten.split_with_sizes_copy.default"):
                sizes = args[1] if len(args) > 1 else kwargs.get("split_sizes")
                if isinstance(sizes, list):
                    arity = len(sizes)
            self.multi[target] = Multi(node, arity, "plain", self.line)
            return
        shape, dtype = parse_tensor_ann(ann, self.where())
        if inplace is not None:
            node["op"] = inplace
            self.functionalize(target, rhs)
        node["outputs"] = [{"name": target, "shape": shape, "dtype": dtype}]
        if self.src:
            node["src"] = self.src
        self.add_node(node)
        base = op.split(".")[1] if op.count(".") >= 2 else op
        if base in VIEW_OPS and rhs[2] and rhs[2][0][0] == "name":
            src = self.resolve(rhs[2][0][1])
            self.views[target] = self.views.get(src, src)
        if op.startswith("_c10d_functional.") and op != "_c10d_functional.wait_tensor.default":
            if args and isinstance(args[-1], str):
                self.collectives.append((target, args[-1]))

    def node_names_check(self, name):
        if name in self.node_names or name in self.tensors or name in self.multi:
            self.fail(f"{name!r} is defined twice")

    @staticmethod
    def inplace_base(op):
        """'aten.add.Tensor' for 'aten.add_.Tensor'; None for a functional op."""
        parts = op.split(".")
        if len(parts) != 3 or parts[0] != "aten":
            return None
        b = parts[1]
        if b.endswith("_") and not b.startswith("__") and len(b) > 1:
            return f"{parts[0]}.{b[:-1]}.{parts[2]}"
        return None

    def functionalize(self, target, rhs):
        """An in-place ATen op writes its first argument: later reads of that
        tensor read the new value `target` instead."""
        if not rhs[2] or rhs[2][0][0] != "name":
            self.fail("an in-place operator without a tensor as first argument")
        dst = self.resolve(rhs[2][0][1])
        if dst in self.views:
            self.fail(f"in-place write into {dst!r}, a view of {self.views[dst]!r}: "
                      f"functionalize the graph before dumping it")
        if any(b == dst for b in self.views.values()):
            self.fail(f"in-place write into {dst!r}, which has views: functionalize the "
                      f"graph before dumping it")
        self.alias[dst] = target

    def getitem(self, target, ann, rhs):
        base, idx = rhs[1], rhs[2]
        if base[0] != "name" or idx[0] != "num" or not isinstance(idx[1], int):
            self.fail("expected NAME[INT] (a result of a multi-output call)")
        name, i = base[1], idx[1]
        m = self.multi.get(name)
        if m is None:
            if name in self.tensors:
                self.fail(f"{name!r} is a tensor, not a tuple of results")
            self.fail(f"{name!r} is not defined before this line")
        if ann is None:
            self.fail(f"{target} = {name}[{i}] has no shape annotation")
        shape, dtype = parse_tensor_ann(ann, self.where())
        if m.kind == "af":
            if i == 0:
                self.fail(f"{name}[0] is the custom op's own return value; only the new "
                          f"values of mutated arguments ([1], [2], ...) are supported")
            slot = i - 1
        else:
            slot = i
        if m.arity is not None and slot >= m.arity:
            self.fail(f"{name}[{i}] is out of range: {m.node['op']} has {m.arity} results")
        if slot in m.results:
            self.fail(f"{name}[{i}] is read twice ({m.results[slot]['name']} and {target})")
        self.define(target, (shape, dtype))
        m.results[slot] = {"name": target, "shape": shape, "dtype": dtype}

    def sym_node(self, target, ann, rhs, op=None):
        if ann is None or not (ann.startswith("Sym(") and ann.endswith(")")):
            self.fail(f"{target}: a SymInt expression needs a \"Sym(...)\" annotation")
        text = ann[4:-1].strip()
        if not text:
            self.fail("empty Sym() annotation")
        if op is not None:
            # aten.sym_size.int(t, dim) and friends: read its tensor arguments so that
            # undefined names are still caught, then keep the annotation's text.
            for a in rhs[2]:
                if a[0] == "name" and self.resolve(a[1]) not in self.sym:
                    self.tensor_ref(a, "argument")
        else:
            self.sym_expr(rhs)
        if target in self.tensors or target in self.sym or target in self.multi:
            self.fail(f"{target!r} is defined twice")
        self.sym[target] = text

    def assert_scalar(self, rhs):
        if not rhs[2] or rhs[2][0][0] != "name":
            self.fail("_assert_scalar without a SymBool argument")
        n = self.resolve(rhs[2][0][1])
        if n not in self.sym:
            self.fail(f"_assert_scalar({n}): {n!r} is not a SymBool defined before this line")
        text = self.sym[n]
        m = SIMPLE_CMP_RE.match(text)
        if m is None:
            return  # not simple: dropped (recorded nowhere)
        s, op, c = m.group(1), m.group(2), int(m.group(3))
        norm = f"{s} {op} {c}"
        if norm not in self.assume:
            self.assume.append(norm)
        b = self.sym_bounds.setdefault(s, {})
        if op in (">=", ">"):
            lo = c if op == ">=" else c + 1
            b["min"] = max(b.get("min", lo), lo)
        elif op in ("<=", "<"):
            hi = c if op == "<=" else c - 1
            b["max"] = min(b.get("max", hi), hi)
        else:
            b["min"] = b["max"] = c

    def lift_fresh_copy(self, target, ann, rhs):
        if len(rhs[2]) != 1 or rhs[2][0][0] != "name" or rhs[3]:
            self.fail("expected lift_fresh_copy(_tensor_constantN)")
        attr = rhs[2][0][1]
        if attr in self.get_attrs:
            del self.get_attrs[attr]
        elif self.resolve(attr) in self.tensors:
            # In bw graphs the constant arrives as a graph input (saved by the forward):
            # lift_fresh_copy is then a plain copy of that input.
            self.call(target, ann, "aten.clone.default", rhs)
            return
        else:
            self.fail(f"{attr!r} is not defined before this line")
        if ann is None:
            self.fail(f"{target} = lift_fresh_copy({attr}) has no shape annotation")
        shape, dtype = parse_tensor_ann(ann, self.where())
        self.node_names_check(target)
        self.emit_constant(target, target, shape, dtype, self.line, attr=attr)

    def auto_functionalized(self, target, ann, v2, rhs):
        if ann is not None:
            self.fail("auto_functionalized with a shape annotation: expected a tuple of results")
        args, kwlist = rhs[2], rhs[3]
        if len(args) != 1:
            self.fail("auto_functionalized takes the op, then keyword arguments only")
        f = dotted(args[0])
        if f is None or not f.startswith("torch.ops."):
            self.fail("auto_functionalized's first argument must be torch.ops.NS.op.overload")
        op = f[len("torch.ops."):]
        kw = dict(kwlist)
        kwargs, outputs_of = {}, []
        if v2:
            if "_all_bases" not in kw or kw["_all_bases"][0] not in ("list", "tuple"):
                self.fail("auto_functionalized_v2 without _all_bases = [...]")
            bases = [self.tensor_ref(b, "_all_bases entry") for b in kw["_all_bases"][1]]
            used = {}
            for k, v in kwlist:
                if k == "_all_bases":
                    continue
                m = re.fullmatch(r"_(.+)_base_index", k)
                if m:
                    arg = m.group(1)
                    for extra in ("size", "stride", "storage_offset", "length"):
                        if f"_{arg}_{extra}" in kw:
                            self.fail(f"auto_functionalized_v2: argument {arg!r} is a view of "
                                      f"its base (_{arg}_{extra}); only whole bases are "
                                      f"supported")
                    if v[0] == "name" and v[1] == "None":
                        kwargs[arg] = None
                        continue
                    if v[0] != "num" or not isinstance(v[1], int) or not 0 <= v[1] < len(bases):
                        self.fail(f"{k} must index _all_bases (0..{len(bases) - 1})")
                    if v[1] in used:
                        self.fail(f"arguments {used[v[1]]!r} and {arg!r} share base "
                                  f"{bases[v[1]]!r}: not supported")
                    used[v[1]] = arg
                    kwargs[arg] = bases[v[1]]
                    continue
                if re.fullmatch(r"_.+_(size|stride|storage_offset|alias|length)", k):
                    continue  # checked above with its _base_index
                if k in DROPPED_KWARGS:
                    continue
                kwargs[k] = self.value(v, key=k)
            outputs_of = [used.get(i, f"_all_bases[{i}]") for i in range(len(bases))]
            if len(used) != len(bases):
                self.fail("auto_functionalized_v2: a base that no argument uses")
        else:
            names = self.mutated.get(op)
            if names is None:
                self.fail(f"auto_functionalized({op}): which arguments {op} writes is not "
                          f"known; give --mutates {op}=arg,arg (in schema order)")
            for k, v in kwlist:
                if k in DROPPED_KWARGS:
                    continue
                kwargs[k] = self.value(v, key=k)
            for n in names:
                if n not in kwargs:
                    self.fail(f"auto_functionalized({op}) has no argument {n!r} "
                              f"(the mutated arguments of {op} are {', '.join(names)})")
                if not isinstance(kwargs[n], str) or kwargs[n] not in self.tensors:
                    self.fail(f"auto_functionalized({op}): mutated argument {n!r} is not a "
                              f"tensor")
            outputs_of = list(names)
        node = {"name": target, "op": op, "args": [], "kwargs": kwargs, "outputs": []}
        if self.src:
            node["src"] = self.src
        self.node_names_check(target)
        self.nodes.append(node)
        self.node_names.add(target)
        m = Multi(node, len(outputs_of), "af", self.line)
        m.mutated = outputs_of
        self.multi[target] = m

    def read_return(self, text):
        p = Parser(text[len("return"):], self.where())
        if p.at_end():
            self.outputs = []
            return
        e = p.expr()
        if not p.at_end():
            p.fail("expected the end of the return statement")
        if e[0] == "call" and dotted(e[1]) == "pytree.tree_unflatten":
            if not e[2] or e[2][0][0] not in ("list", "tuple"):
                self.fail("expected pytree.tree_unflatten([...], self._out_spec)")
            items = e[2][0][1]
        elif e[0] in ("list", "tuple"):
            items = e[1]
        else:
            items = [e]
        outs = []
        for it in items:
            if it == ("name", "None"):
                continue
            outs.append(self.tensor_ref(it, "returned value"))
        self.outputs = outs

    # -- end of graph -----------------------------------------------------
    def finish(self):
        for name, m in self.multi.items():
            if m.arity is not None:
                n = m.arity
            else:
                n = max(m.results) + 1 if m.results else 0
            if n == 0:
                self.fail(f"{name}: a call without shape annotation whose results nobody "
                          f"reads (the number of its results is unknown)", m.line)
            m.node["outputs"] = [m.results.get(i) for i in range(n)]
        # get_attrs nobody read vanish (FX keeps none in practice)
        if not self.outputs:
            self.fail("forward returns no tensor")

    def graph(self):
        g = {"inputs": self.inputs, "nodes": self.nodes, "outputs": self.outputs}
        syms = []
        for i in self.inputs:
            syms += [s for s in symbols_in(i["shape"]) if s not in syms]
        for n in self.nodes:
            for o in n["outputs"]:
                if o is not None:
                    syms += [s for s in symbols_in(o.get("shape") or []) if s not in syms]
        for s in self.sym_bounds:
            if s not in syms:
                syms.append(s)
        if syms:
            g["symbols"] = {s: dict(sorted(self.sym_bounds.get(s, {}).items()))
                            for s in sorted(syms)}
        if self.assume:
            g["assume"] = list(self.assume)
        return g


# ---------------------------------------------------------------------------
# Sheet, relations, pruning, the bundle
# ---------------------------------------------------------------------------

RANKREF_RE = re.compile(r"(?<![A-Za-z0-9_.])r(\d+)\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)")


def load_sheet(path):
    try:
        with open(path, encoding="utf-8") as f:
            sheet = json.load(f)
    except OSError as e:
        raise ConvertError(path, f"cannot read: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ConvertError(path, f"not a JSON relation sheet: {e}")
    if not isinstance(sheet, dict):
        raise ConvertError(path, "a relation sheet is a JSON object")
    for key, typ in (("case", str), ("input_relation", dict)):
        if not isinstance(sheet.get(key), typ):
            raise ConvertError(path, f"the sheet needs {key!r} ({typ.__name__})")
    for key, typ in (("groups", dict), ("spec_groups", dict), ("check_outputs", list),
                     ("expect_output_relation", dict), ("lift_fresh_copy_constants", dict),
                     ("inexpressible_inputs", list), ("inputs_outside_focus", list),
                     ("entangle_assumed_intermediates", list), ("spec", list),
                     ("impl", list)):
        if key in sheet and not isinstance(sheet[key], typ):
            kind = "object" if typ is dict else "array"
            raise ConvertError(path, f"{key!r} must be a JSON {kind}")
    for key in ("input_relation", "expect_output_relation"):
        for k, v in sheet.get(key, {}).items():
            if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
                raise ConvertError(path, f"{key}[{k!r}] must be a non-empty array of "
                                   f"expression strings")
    for a in sheet.get("entangle_assumed_intermediates", []):
        if not (isinstance(a, dict) and isinstance(a.get("spec"), str) and
                isinstance(a.get("impl_exprs"), list) and a["impl_exprs"] and
                all(isinstance(x, str) for x in a["impl_exprs"])):
            raise ConvertError(path, "entangle_assumed_intermediates entries need 'spec' and "
                               "a non-empty 'impl_exprs' array")
    if not all(isinstance(x, str) for x in sheet.get("check_outputs", [])):
        raise ConvertError(path, "check_outputs must list tensor names")
    return sheet


def check_rank_refs(sheet_path, key, spec_name, exprs, ranks, kind):
    """kind: 'input' (leaves must be rank inputs), 'output' (rank outputs),
    'any' (any tensor of the rank)."""
    for e in exprs:
        refs = RANKREF_RE.findall(e)
        if not refs:
            raise ConvertError(sheet_path, f"{key}[{spec_name!r}]: {e!r} names no rank "
                               f"tensor (write rK.name)")
        for rk, name in refs:
            k = int(rk)
            if k >= len(ranks):
                raise ConvertError(sheet_path, f"{key}[{spec_name!r}]: r{k}.{name}: there are "
                                   f"only {len(ranks)} rank graph(s)")
            rd = ranks[k]
            if kind == "input":
                ok = any(i["name"] == name for i in rd.inputs)
                what = "an input"
            elif kind == "output":
                ok = name in rd.outputs
                what = "an output"
            else:
                ok = name in rd.tensors
                what = "a tensor"
            if not ok:
                raise ConvertError(sheet_path, f"{key}[{spec_name!r}]: r{k}.{name} is not "
                                   f"{what} of rank {k} ({rd.display})")


def derive_groups(readers):
    groups = {}
    for k, rd in enumerate(readers):
        for _n, g in rd.collectives:
            members = groups.setdefault(g, [])
            if k not in members:
                members.append(k)
    return {g: sorted(m) for g, m in sorted(groups.items())}


def node_inputs(node):
    """Tensor names a node reads (strings among its args/kwargs that are tensors)."""
    out = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    for a in node["args"]:
        walk(a)
    for v in node["kwargs"].values():
        walk(v)
    return out


def ancestors(graph, roots, stop=()):
    """Node indices and input names in the cone of `roots` (tensor names);
    traversal does not go past tensors in `stop`."""
    producer = {}
    for idx, n in enumerate(graph["nodes"]):
        for o in n["outputs"]:
            if o is not None:
                producer[o["name"]] = idx
    input_names = {i["name"] for i in graph["inputs"]}
    nodes, inputs, seen = set(), set(), set()
    work = list(roots)
    while work:
        t = work.pop()
        if t in seen:
            continue
        seen.add(t)
        if t in input_names:
            inputs.add(t)
        elif t in producer and t not in stop:
            idx = producer[t]
            if idx not in nodes:
                nodes.add(idx)
                work.extend(x for x in node_inputs(graph["nodes"][idx])
                            if x in producer or x in input_names)
    return nodes, inputs


def convert(spec_path, impl_paths, sheet_path, assume_intermediates=False,
            extra_mutated=None, display=None):
    display = display or (lambda p: p)
    sheet = load_sheet(sheet_path)
    constants = sheet.get("lift_fresh_copy_constants", {})
    mutated = dict(KNOWN_MUTATED)
    mutated.update(extra_mutated or {})

    spec_rd = GraphReader(spec_path, display(spec_path), constants, mutated, "spec").read()
    ranks = []
    for k, p in enumerate(impl_paths):
        rd = GraphReader(p, display(p), constants, mutated, f"rank {k}").read()
        if rd.header is not None and rd.header[0] != k:
            raise ConvertError(f"{rd.display}:1", f"its header says rank={rd.header[0]} but it "
                               f"is given as rank {k} (--impl lists ranks in order)")
        ranks.append(rd)

    spec = spec_rd.graph()
    notes = []
    spec_inputs = [i["name"] for i in spec["inputs"]]
    spec_tensors = set(spec_rd.tensors)

    # --- check outputs ---
    # Entangle's filter_output may name intermediates (mm_7 of a joint graph): they
    # become outputs of the spec, and same-named tensors of the ranks become rank
    # outputs, so that the output relation can use them.
    check = list(sheet.get("check_outputs", []))
    exposed_spec, exposed_rank = [], []
    for c in check:
        if c in spec_rd.sym or c not in spec_tensors:
            raise ConvertError(sheet_path, f"check_outputs: {c!r} is not a tensor of the spec "
                               f"graph ({spec_rd.display})")
        if c not in spec["outputs"]:
            spec["outputs"].append(c)
            exposed_spec.append(c)
    for k, rd in enumerate(ranks):
        wanted = [c for c in exposed_spec if c in rd.tensors]
        for v in sheet.get("expect_output_relation", {}).values():
            for e in v:
                wanted += [n for rk, n in RANKREF_RE.findall(e) if int(rk) == k]
        for n in wanted:
            if n in rd.tensors and n not in rd.outputs:
                rd.outputs.append(n)
                exposed_rank.append(f"r{k}.{n}")
    if exposed_spec or exposed_rank:
        notes.append("Tensors the sheet checks but the dumps do not return were added to the "
                     "graphs' outputs (Entangle's filter_output): "
                     + ", ".join(exposed_spec + exposed_rank) + ".")
    input_rel = {}
    for k, v in sheet["input_relation"].items():
        if k not in spec_inputs:
            raise ConvertError(sheet_path, f"input_relation: {k!r} is not an input of the spec "
                               f"graph ({spec_rd.display})")
        check_rank_refs(sheet_path, "input_relation", k, v, ranks, "input")
        input_rel[k] = list(v)
    expect = {}
    for k, v in sheet.get("expect_output_relation", {}).items():
        if k not in spec["outputs"]:
            raise ConvertError(sheet_path, f"expect_output_relation: {k!r} is not an output of "
                               f"the spec graph ({spec_rd.display})")
        check_rank_refs(sheet_path, "expect_output_relation", k, v, ranks, "output")
        expect[k] = list(v)
    assumed = {}
    if assume_intermediates:
        for a in sheet.get("entangle_assumed_intermediates", []):
            if a["spec"] not in spec_tensors or a["spec"] in spec_inputs:
                raise ConvertError(sheet_path, f"entangle_assumed_intermediates: {a['spec']!r} "
                                   f"is not an intermediate tensor of the spec graph")
            check_rank_refs(sheet_path, "entangle_assumed_intermediates", a["spec"],
                            a["impl_exprs"], ranks, "any")
            assumed[a["spec"]] = list(a["impl_exprs"])

    # --- unmapped inputs and pruning ---
    excused = set(sheet.get("inputs_outside_focus", []))
    for e in sheet.get("inexpressible_inputs", []):
        if isinstance(e, dict) and isinstance(e.get("spec"), str):
            excused.add(e["spec"])
        elif isinstance(e, str):
            excused.add(e)
    unmapped = [n for n in spec_inputs if n not in input_rel]
    for n in unmapped:
        if n not in excused:
            raise ConvertError(sheet_path, f"spec input {n!r} has no input_relation entry and "
                               f"the sheet does not list it under inexpressible_inputs or "
                               f"inputs_outside_focus")
    behind = []
    if unmapped:
        if not check:
            raise ConvertError(sheet_path, "spec inputs without relation "
                               f"({', '.join(unmapped)}) and no check_outputs to prune to")
        keep_nodes, keep_inputs = ancestors(spec, check)
        left = [n for n in unmapped if n in keep_inputs]
        if left:
            _cut_nodes, cut_inputs = ancestors(spec, check, stop=set(assumed))
            blocked = [n for n in left if n in cut_inputs]
            if blocked or not assumed:
                offered = [a["spec"] for a in sheet.get("entangle_assumed_intermediates", [])]
                hint = ("; give --assume-intermediates to trust the sheet's "
                        f"entangle_assumed_intermediates ({', '.join(offered) or 'none'})"
                        if not assumed else "")
                raise ConvertError(sheet_path, "spec inputs without relation remain in the cone "
                                   f"of check_outputs ({', '.join(check)}): "
                                   f"{', '.join(blocked or left)}{hint}")
            behind = left
        n_before, i_before = len(spec["nodes"]), len(spec["inputs"])
        spec["nodes"] = [n for idx, n in enumerate(spec["nodes"]) if idx in keep_nodes]
        spec["inputs"] = [i for i in spec["inputs"] if i["name"] in keep_inputs]
        defined = {i["name"] for i in spec["inputs"]}
        for n in spec["nodes"]:
            defined.update(o["name"] for o in n["outputs"] if o is not None)
        outs_before = len(spec["outputs"])
        spec["outputs"] = [o for o in spec["outputs"] if o in defined]
        pruned_inputs = [n for n in spec_inputs if n not in keep_inputs]
        dropped_rel = [k for k in input_rel if k not in keep_inputs]
        for k in dropped_rel:
            del input_rel[k]
        for k in [k for k in assumed if k not in defined]:
            del assumed[k]
        if "symbols" in spec:
            used = []
            for t in spec["inputs"] + [o for n in spec["nodes"] for o in n["outputs"] if o]:
                used += symbols_in(t.get("shape") or [])
            spec["symbols"] = {s: v for s, v in spec["symbols"].items() if s in used}
            if not spec["symbols"]:
                del spec["symbols"]
                spec.pop("assume", None)
            elif "assume" in spec:
                spec["assume"] = [a for a in spec["assume"]
                                  if IDENT_RE.findall(a)[0] in spec["symbols"]]
        notes.append(
            f"Spec pruned to the ancestors of {', '.join(check)}: kept {len(spec['nodes'])} of "
            f"{n_before} nodes, {len(spec['inputs'])} of {i_before} inputs, "
            f"{len(spec['outputs'])} of {outs_before} outputs; pruned inputs without relation: "
            f"{', '.join(n for n in pruned_inputs if n in unmapped) or 'none'}"
            + (f"; input relations of pruned inputs dropped: {', '.join(dropped_rel)}"
               if dropped_rel else "") + ".")
        if behind:
            notes.append(f"Spec inputs without relation that reach the checked outputs only "
                         f"through assume_relation tensors: {', '.join(behind)} (listed under "
                         f"inputs_behind_assumptions).")
    if assumed:
        notes.append(f"assume_relation filled from the sheet's entangle_assumed_intermediates "
                     f"(--assume-intermediates, a fallback): {', '.join(assumed)}.")

    if "spec_groups" in sheet:
        spec["groups"] = sheet["spec_groups"]
    groups = sheet["groups"] if "groups" in sheet else derive_groups(ranks)
    impl = {"ranks": [rd.graph() for rd in ranks], "groups": groups}

    desc = sheet.get("model") or sheet["case"]
    desc = f"{desc}. Converted by tools/fx2bundle.py from {os.path.basename(spec_path)} " \
           f"(spec) and {len(ranks)} rank graph(s)."
    if notes:
        desc += " " + " ".join(notes)
    bundle = {"format": "shardcheck-bundle/1", "name": sheet["case"], "description": desc,
              "spec": spec, "impl": impl, "input_relation": input_rel}
    if expect:
        bundle["expect_output_relation"] = expect
    if check:
        bundle["check_outputs"] = check
    if assumed:
        bundle["assume_relation"] = assumed
    if behind:
        bundle["inputs_behind_assumptions"] = behind
    return bundle


def dump_json(bundle):
    """Indented, but with short leaf lists (shapes, args) on one line."""
    def enc(v, ind):
        pad = "  " * ind
        if isinstance(v, dict):
            if not v:
                return "{}"
            if all(not isinstance(x, (dict, list)) or is_flat(x) for x in v.values()) and \
                    len(json.dumps(v)) <= 100:
                return json.dumps(v, ensure_ascii=False)
            items = [f"{pad}  {json.dumps(k, ensure_ascii=False)}: {enc(x, ind + 1)}"
                     for k, x in v.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(v, list):
            if is_flat(v) or len(json.dumps(v)) <= 100:
                return json.dumps(v, ensure_ascii=False)
            items = [f"{pad}  {enc(x, ind + 1)}" for x in v]
            return "[\n" + ",\n".join(items) + "\n" + pad + "]"
        return json.dumps(v, ensure_ascii=False, allow_nan=False)

    def is_flat(v):
        if isinstance(v, list):
            return all(not isinstance(x, (dict, list)) or (isinstance(x, list) and is_flat(x))
                       for x in v)
        return False
    return enc(bundle, 0) + "\n"


def parse_mutates(specs):
    out = {}
    for s in specs or []:
        if "=" not in s:
            raise ConvertError("--mutates", f"expected OP=arg,arg, found {s!r}")
        op, names = s.split("=", 1)
        op = op.strip()
        if op.startswith("torch.ops."):
            op = op[len("torch.ops."):]
        lst = [n.strip() for n in names.split(",") if n.strip()]
        if not op or not lst:
            raise ConvertError("--mutates", f"expected OP=arg,arg, found {s!r}")
        out[op] = lst
    return out


class ArgParser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write(f"fx2bundle: {message}\n")
        sys.exit(EXIT_INPUT)


def main(argv=None):
    ap = ArgParser(prog="fx2bundle.py",
                   description="Convert printed TorchDynamo/AOTAutograd graphs (one per rank) "
                   "and a relation sheet into a shardcheck bundle with per-rank impl graphs.")
    ap.add_argument("--spec", help="the sequential (spec) graph dump")
    ap.add_argument("--impl", nargs="+", help="the implementation dumps, rank 0 first")
    ap.add_argument("--relation", help="relation sheet (format of real-graphs/relations/*.json)")
    ap.add_argument("--sheet-only", metavar="SHEET",
                    help="take spec and impl files from the sheet's 'spec'/'impl' keys")
    ap.add_argument("--root", help="folder the sheet's file names are relative to (with "
                    "--sheet-only; default: the sheet's folder's parent)")
    ap.add_argument("--assume-intermediates", action="store_true",
                    help="fill assume_relation from the sheet's entangle_assumed_intermediates "
                    "(a fallback: those relations are trusted, not proved)")
    ap.add_argument("--mutates", action="append", metavar="OP=ARG,ARG",
                    help="arguments a custom op inside auto_functionalized writes, in schema "
                    "order (repeatable)")
    ap.add_argument("-o", "--output", required=True, help="bundle to write ('-' for stdout)")
    a = ap.parse_args(argv)
    try:
        if a.sheet_only:
            if a.relation and a.relation != a.sheet_only:
                ap.error("--sheet-only and --relation name different sheets")
            sheet_path = a.sheet_only
            sheet = load_sheet(sheet_path)
            root = a.root or os.path.dirname(os.path.dirname(os.path.abspath(sheet_path)))
            if a.spec:
                spec = a.spec
            else:
                if len(sheet.get("spec", [])) != 1 or not isinstance(sheet["spec"][0], str):
                    raise ConvertError(sheet_path, "'spec' must list exactly one file")
                spec = os.path.join(root, sheet["spec"][0])
            if a.impl:
                impl = a.impl
            else:
                if not sheet.get("impl") or not all(isinstance(x, str) for x in sheet["impl"]):
                    raise ConvertError(sheet_path, "'impl' must list the rank files")
                impl = [os.path.join(root, x) for x in sheet["impl"]]
        else:
            if not (a.spec and a.impl and a.relation):
                ap.error("give --spec, --impl and --relation (or --sheet-only SHEET --root DIR)")
            if a.root:
                ap.error("--root goes with --sheet-only")
            sheet_path, spec, impl = a.relation, a.spec, a.impl
        bundle = convert(spec, impl, sheet_path, a.assume_intermediates,
                         parse_mutates(a.mutates))
        text = dump_json(bundle)
        if a.output == "-":
            sys.stdout.write(text)
        else:
            try:
                tmp = a.output + ".tmp"
                with open(tmp, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(tmp, a.output)
            except OSError as e:
                raise ConvertError(a.output, f"cannot write: {e.strerror}")
    except ConvertError as e:
        sys.stderr.write(f"fx2bundle: {e}\n")
        return EXIT_INPUT
    except RecursionError:
        sys.stderr.write("fx2bundle: input nested too deeply\n")
        return EXIT_INPUT
    except Exception as e:  # a bug here, never the user's input: say so, no traceback
        sys.stderr.write(f"fx2bundle: internal error ({type(e).__name__}: {e}); "
                         f"please report it with the input files\n")
        return EXIT_INTERNAL
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
