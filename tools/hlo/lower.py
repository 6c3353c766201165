"""lower.py -- one HLO module (parse.py's tree) as one bundle graph, run
by rank k of N (or as the spec: rank None, one device).

Every HLO instruction becomes the ATen/sc operators that compute exactly
the same values (docs/hlo.md, "Operator rows"), so that the lemma library
written for ATen applies unchanged: add -> aten.add.Tensor, dot ->
permute/view + mm/bmm/matmul, broadcast -> permute + unsqueeze + expand,
reduce with an add reducer -> aten.sum.dim_IntList, ...  The last node of
an instruction's lowering carries the instruction's name (`dot.52`); the
steps before it are named `NAME/1`, `NAME/2`, ...

Collectives (comm.py) become PyTorch's per-rank functional collectives on
the group of the rank (named by its members, `{0,1}`); the loader
stitches them into comm.* nodes.  Calls, fusions and custom calls are in
calls.py.  replica-id and partition-id are the rank's number, and
scalar integer arithmetic on constants is folded, so that GSPMD's
dynamic-slice at `partition-id * 512` becomes a static slice per rank.

Invariants: nodes are emitted in the module's order; every tensor a node
reads was defined before; every emitted tensor carries the shape and dtype
the lowering computed, checked against the instruction's declared type
here and against the operators' shape rules by the loader, so that a
lowering mistake is an input error, never a silent one.
"""

import math
import re

from fx2bundle import ConvertError
from hlo import parse as P
from hlo.calls import CallLowering
from hlo.comm import CommLowering
from hlo.shapes import T, numel

BUNDLE_DTYPES = {"pred": "bool", "s8": "i8", "u8": "u8", "s32": "i32", "s64": "i64",
                 "u32": "i64", "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}
FLOAT = {"f16", "bf16", "f32", "f64"}

UNARY = {"abs": "aten.abs.default", "negate": "aten.neg.default",
         "exponential": "aten.exp.default", "log": "aten.log.default",
         "log-plus-one": "aten.log1p.default", "logistic": "aten.sigmoid.default",
         "tanh": "aten.tanh.default", "sine": "aten.sin.default", "cosine": "aten.cos.default",
         "sqrt": "aten.sqrt.default", "rsqrt": "aten.rsqrt.default", "erf": "aten.erf.default",
         "copy": "aten.alias.default"}
BINARY = {"add": "aten.add.Tensor", "subtract": "aten.sub.Tensor",
          "multiply": "aten.mul.Tensor", "maximum": "aten.maximum.default",
          "minimum": "aten.minimum.default", "power": "aten.pow.Tensor_Tensor"}
LOGICAL = {"and": ("aten.logical_and.default", "aten.bitwise_and.Tensor"),
           "or": ("aten.logical_or.default", "aten.bitwise_or.Tensor"),
           "xor": ("aten.logical_xor.default", "aten.bitwise_xor.Tensor")}
COMPARE = {"EQ": "aten.eq.Tensor", "NE": "aten.ne.Tensor", "LT": "aten.lt.Tensor",
           "LE": "aten.le.Tensor", "GT": "aten.gt.Tensor", "GE": "aten.ge.Tensor"}
# reducer computations recognized by their root: (root opcode) -> kind
REDUCERS = {"add": "sum", "maximum": "max", "minimum": "min", "and": "and", "or": "or"}

class Lowering(CommLowering, CallLowering):
    def __init__(self, mod, rank, nranks, custom=None, role=None, opaque_calls=False):
        self.mod = mod
        self.rank = rank                  # None: the spec (one device)
        self.nranks = nranks
        self.custom = dict(custom or {})  # extra custom-call target -> op name
        self.opaque_calls = opaque_calls  # unknown targets as hlo.custom_call
        self.opaque = []                  # (target, line) of those
        self.role = role or ("spec" if rank is None else f"rank {rank}")
        self.inputs = []
        self.nodes = []
        self.outputs = []
        self.env = {}                     # instr name -> T or list (tuple)
        self.instrs = {}                  # instr name -> its Instr (layouts, opcodes)
        self.cval = {}                    # instr name -> folded python value
        self.constants = {}               # input name -> literal text (array constants)
        self.collectives = []             # (group name, members)
        self.tensors = set()
        self.fills = {}                   # tensor name -> fill value of an aten.full
        self.ins = None
        self.depth = 0
        self.step = 0

    # --- errors and emission -------------------------------------------

    def fail(self, msg, col=None, ins=None):
        ins = ins or self.ins
        c = col if col is not None else ins.opcode_col
        raise ConvertError(f"{self.mod.display}:{ins.line}:{c}", msg)

    def dtype_of(self, typ, ins=None):
        if typ[0] != "array":
            self.fail("a tuple where an array is needed", ins=ins)
        dt = BUNDLE_DTYPES.get(typ[1])
        if dt is None:
            self.fail(f"element type {typ[1]} is not supported (supported: "
                      f"{', '.join(sorted(BUNDLE_DTYPES))})", ins=ins)
        return dt

    def emit(self, op, args, shape, dtype, kwargs=None):
        self.step += 1
        name = f"{self.ins.name}/{self.step}"
        node = {"name": name, "op": op, "args": args,
                "outputs": [{"name": name, "shape": list(shape), "dtype": dtype}]}
        if kwargs:
            node["kwargs"] = kwargs
        if self.ins.src:
            node["src"] = self.ins.src
        self.nodes.append(node)
        self.tensors.add(name)
        return T(name, shape, dtype)

    def finish(self, t):
        """Give the instruction's name to its value t (renaming the node
        just emitted for it, or adding an alias)."""
        want = self.ins.name
        if t.name == want:
            return t
        last = self.nodes[-1] if self.nodes else None
        if last is not None and last["outputs"][0]["name"] == t.name and \
                t.name.startswith(want + "/") and len(last["outputs"]) == 1:
            self.tensors.discard(t.name)
            if t.name in self.fills:
                self.fills[want] = self.fills.pop(t.name)
            last["name"] = want
            last["outputs"][0]["name"] = want
            self.tensors.add(want)
            return T(want, t.shape, t.dtype)
        a = self.emit("aten.alias.default", [t.name], t.shape, t.dtype)
        return self.finish(a)

    def operand(self, i):
        ins = self.ins
        if i >= len(ins.operands):
            self.fail(f"{ins.opcode} needs at least {i + 1} operand(s)")
        v = self.env[ins.operands[i]]
        if not isinstance(v, T):
            self.fail(f"operand {i} (%{ins.operands[i]}) is a tuple; {ins.opcode} needs an array",
                      col=ins.operand_cols[i] + 1)
        return v

    def arity(self, n):
        if len(self.ins.operands) != n:
            self.fail(f"{self.ins.opcode} takes {n} operand(s), found {len(self.ins.operands)}")

    def out_type(self):
        typ = self.ins.type
        return typ[2] if typ[0] == "array" else None, \
            self.dtype_of(typ) if typ[0] == "array" else None

    # --- layout helpers -------------------------------------------------

    def permute(self, t, perm):
        if perm == list(range(len(perm))):
            return t
        return self.emit("aten.permute.default", [t.name, perm],
                         [t.shape[p] for p in perm], t.dtype)

    def view(self, t, shape):
        if list(shape) == t.shape:
            return t
        return self.emit("aten.view.default", [t.name, list(shape)], shape, t.dtype)

    def broadcast_to(self, t, dims, shape):
        """HLO broadcast: operand dim i becomes output dim dims[i]."""
        if len(dims) != len(t.shape) or len(set(dims)) != len(dims) or \
                any(d < 0 or d >= len(shape) for d in dims):
            self.fail(f"broadcast dimensions {dims} do not fit operand rank {len(t.shape)} "
                      f"and result rank {len(shape)}")
        for i, d in enumerate(dims):
            if t.shape[i] not in (1, shape[d]):
                self.fail(f"broadcast: operand dim {i} has size {t.shape[i]} but result dim "
                          f"{d} has size {shape[d]}")
        order = sorted(range(len(dims)), key=lambda i: dims[i])
        t = self.permute(t, order)
        kept = sorted(dims)
        for j in range(len(shape)):
            if j not in kept:
                t = self.emit("aten.unsqueeze.default", [t.name, j],
                              t.shape[:j] + [1] + t.shape[j:], t.dtype)
        if t.shape != list(shape):
            t = self.emit("aten.expand.default", [t.name, list(shape)], shape, t.dtype)
        return t

    def to_dtype(self, t, dtype):
        if t.dtype == dtype:
            return t
        return self.emit("aten._to_copy.default", [t.name], t.shape, dtype, {"dtype": dtype})

    # --- the module ---------------------------------------------------------

    def run(self):
        entry = self.mod.entry
        params = [i for i in entry.instrs if i.opcode == "parameter"]
        seen = {}
        for p in params:
            if p.param in seen:
                self.ins = p
                self.fail(f"parameter({p.param}) is also %{seen[p.param]}")
            seen[p.param] = p.name
        if sorted(seen) != list(range(len(seen))):
            missing = [k for k in range(len(seen)) if k not in seen]
            raise ConvertError(self.mod.display, f"ENTRY parameters are not numbered 0..N-1 "
                               f"(no parameter({missing[0]}))")
        for p in sorted(params, key=lambda p: p.param):
            self.ins = p
            if p.type[0] != "array":
                self.fail("tuple-shaped parameters are not supported; flatten them")
            dt = self.dtype_of(p.type)
            self.inputs.append({"name": p.name, "shape": p.type[2], "dtype": dt})
            self.tensors.add(p.name)
            self.env[p.name] = T(p.name, p.type[2], dt)
            self.instrs[p.name] = p
        for ins in entry.instrs:
            if ins.opcode == "parameter":
                continue
            self.lower(ins)
        root = self.env[entry.root.name]
        flat = []

        def walk(v):
            if isinstance(v, T):
                flat.append(v.name)
            else:
                for x in v:
                    walk(x)
        walk(root)
        for n in flat:
            if n not in self.outputs:
                self.outputs.append(n)
        return self

    def graph(self):
        return {"inputs": self.inputs, "nodes": self.nodes, "outputs": self.outputs}

    def lower(self, ins):
        self.instrs[ins.name] = ins
        self.ins = ins
        self.step = 0
        op = ins.opcode
        h = getattr(self, "op_" + op.replace("-", "_"), None)
        if op in UNARY:
            h = self.op_unary
        elif op in BINARY:
            h = self.op_binary
        elif op in LOGICAL:
            h = self.op_logical
        if h is None:
            self.fail(f"HLO instruction {op!r} is not supported (docs/hlo.md lists the "
                      f"supported ones)")
        v = h()
        if isinstance(v, T):
            if ins.type[0] == "array" and (v.shape != ins.type[2] or
                                           v.dtype != self.dtype_of(ins.type)):
                self.fail(f"{op} gives {v.dtype}"
                          f"{v.shape} for these operands, but the instruction declares "
                          f"{ins.type[1]}{ins.type[2]}", col=ins.col)
            v = self.finish(v)
        self.env[ins.name] = v

    # --- constants and folding ---------------------------------------------

    def literal_values(self, ins, dt):
        text = ins.literal.strip()
        if text in ("{...}", "..."):
            return None
        toks = re.findall(r"-?inf|nan|true|false|-?[0-9.]+(?:e[-+]?\d+)?", text.lower())
        vals = []
        for tok in toks:
            if tok in ("true", "false"):
                vals.append(tok == "true")
            elif dt in FLOAT:
                vals.append(float(tok))
            else:
                try:
                    vals.append(int(tok))
                except ValueError:
                    self.fail(f"constant: {tok!r} is not an integer", col=ins.opcode_col)
        return vals

    def scalar_json(self, v, dt):
        if isinstance(v, bool):
            return v
        if dt in FLOAT:
            if math.isinf(v):
                return "inf" if v > 0 else "-inf"
            if math.isnan(v):
                return "nan"
            return float(v)
        return int(v)

    def full(self, shape, value, dtype):
        t = self.emit("aten.full.default", [list(shape), value], shape, dtype, {"dtype": dtype})
        self.fills[t.name] = value
        return t

    def scalar_const(self, v, dt):
        dtype = BUNDLE_DTYPES[dt]
        return self.emit("aten.scalar_tensor.default", [self.scalar_json(v, dt)], [], dtype,
                         {"dtype": dtype})

    def op_constant(self):
        ins = self.ins
        shape, dtype = self.out_type()
        if shape is None:
            self.fail("tuple constants are not supported")
        dt = ins.type[1]
        vals = self.literal_values(ins, dt)
        n = numel(shape)
        if vals is not None and len(vals) != n:
            self.fail(f"constant has {len(vals)} values for shape {shape}")
        if vals is not None and n <= 64:
            self.cval[ins.name] = vals[0] if shape == [] else vals
        if vals is not None and shape == []:
            return self.scalar_const(vals[0], dt)
        if vals is not None and all(v == vals[0] for v in vals):
            return self.full(shape, self.scalar_json(vals[0], dt), dtype)
        if vals is not None and n <= 64:
            parts = []
            for v in vals:
                s = self.scalar_const(v, dt)
                parts.append(self.view(s, [1]).name)
            flat = self.emit("aten.cat.default", [parts, 0], [n], dtype)
            return self.view(flat, shape)
        # a large literal or one whose value the printer elided: an input of
        # the graph, related to the other side's constant of the same name
        # and text by hlo2bundle (docs/hlo.md, "Constants").
        self.inputs.append({"name": ins.name, "shape": shape, "dtype": dtype})
        self.tensors.add(ins.name)
        self.constants[ins.name] = (ins.literal.strip(), shape, dtype, ins.line)
        return T(ins.name, shape, dtype)

    def fold_scalar(self, i):
        """The folded value of operand i if it is a known scalar (or [v])."""
        v = self.cval.get(self.ins.operands[i]) if i < len(self.ins.operands) else None
        if isinstance(v, list) and len(v) == 1:
            v = v[0]
        return v if isinstance(v, (int, float, bool)) else None

    def rank_number(self):
        k = 0 if self.rank is None else self.rank
        shape, dtype = self.out_type()
        if shape != []:
            self.fail(f"{self.ins.opcode} returns a scalar, not {shape}")
        self.cval[self.ins.name] = k
        return self.emit("aten.scalar_tensor.default", [k], [], dtype, {"dtype": dtype})

    op_replica_id = rank_number
    op_partition_id = rank_number

    # --- elementwise ----------------------------------------------------------

    def fold2(self, f):
        a, b = self.fold_scalar(0), self.fold_scalar(1)
        if a is not None and b is not None and self.ins.type[0] == "array" and \
                numel(self.ins.type[2]) == 1:
            try:
                self.cval[self.ins.name] = f(a, b)
            except (ZeroDivisionError, OverflowError, ValueError):
                pass

    def op_unary(self):
        self.arity(1)
        x = self.operand(0)
        if self.ins.opcode == "copy":
            self.cval[self.ins.name] = self.cval.get(self.ins.operands[0])
        return self.emit(UNARY[self.ins.opcode], [x.name], x.shape, x.dtype)

    def same_shapes(self, ts):
        shape, _ = self.out_type()
        for i, t in enumerate(ts):
            if t.shape != shape and t.shape != []:
                self.fail(f"operand {i} has shape {t.shape} but the result has {shape} "
                          f"(HLO elementwise operands have the result's shape)",
                          col=self.ins.operand_cols[i] + 1)

    def op_binary(self):
        self.arity(2)
        a, b = self.operand(0), self.operand(1)
        self.same_shapes([a, b])
        op = self.ins.opcode
        f = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y,
             "multiply": lambda x, y: x * y, "maximum": max, "minimum": min}.get(op)
        if f:
            self.fold2(f)
        shape, dtype = self.out_type()
        return self.emit(BINARY[op], [a.name, b.name], shape, dtype)

    def op_divide(self):
        self.arity(2)
        a, b = self.operand(0), self.operand(1)
        self.same_shapes([a, b])
        shape, dtype = self.out_type()
        if dtype in ("f16", "bf16", "f32", "f64"):
            return self.emit("aten.div.Tensor", [a.name, b.name], shape, dtype)
        self.fold2(lambda x, y: int(x / y))
        return self.emit("aten.div.Tensor_mode", [a.name, b.name], shape, dtype,
                         {"rounding_mode": "trunc"})

    def op_logical(self):
        self.arity(2)
        a, b = self.operand(0), self.operand(1)
        self.same_shapes([a, b])
        shape, dtype = self.out_type()
        op = LOGICAL[self.ins.opcode][0 if dtype == "bool" else 1]
        return self.emit(op, [a.name, b.name], shape, dtype)

    def op_not(self):
        self.arity(1)
        x = self.operand(0)
        op = "aten.logical_not.default" if x.dtype == "bool" else "aten.bitwise_not.default"
        return self.emit(op, [x.name], x.shape, x.dtype)

    def op_compare(self):
        self.arity(2)
        a, b = self.operand(0), self.operand(1)
        self.same_shapes([a, b])
        d = P.string_attr(self.mod, self.ins, "direction")
        if d not in COMPARE:
            self.fail(f"compare needs direction=EQ|NE|LT|LE|GT|GE, found {d!r}")
        shape, dtype = self.out_type()
        f = {"EQ": lambda x, y: x == y, "NE": lambda x, y: x != y, "LT": lambda x, y: x < y,
             "LE": lambda x, y: x <= y, "GT": lambda x, y: x > y, "GE": lambda x, y: x >= y}[d]
        self.fold2(f)
        return self.emit(COMPARE[d], [a.name, b.name], shape, dtype)

    def op_select(self):
        self.arity(3)
        p, a, b = self.operand(0), self.operand(1), self.operand(2)
        self.same_shapes([p, a, b])
        c = self.fold_scalar(0)
        if c is not None and self.ins.operands[1] in self.cval and \
                self.ins.operands[2] in self.cval:
            self.cval[self.ins.name] = self.cval[self.ins.operands[1 if c else 2]]
        shape, dtype = self.out_type()
        return self.emit("aten.where.self", [p.name, a.name, b.name], shape, dtype)

    def op_clamp(self):
        self.arity(3)
        lo, x, hi = self.operand(0), self.operand(1), self.operand(2)
        self.same_shapes([lo, x, hi])
        a, v, b = self.fold_scalar(0), self.fold_scalar(1), self.fold_scalar(2)
        if None not in (a, v, b):
            self.cval[self.ins.name] = min(max(v, a), b)
        shape, dtype = self.out_type()
        return self.emit("aten.clamp.Tensor", [x.name, lo.name, hi.name], shape, dtype)

    def op_convert(self):
        self.arity(1)
        x = self.operand(0)
        shape, dtype = self.out_type()
        v = self.fold_scalar(0)
        if v is not None:
            self.cval[self.ins.name] = float(v) if dtype in FLOAT else \
                (bool(v) if dtype == "bool" else int(v))
        if dtype == x.dtype:
            return self.emit("aten.alias.default", [x.name], shape, dtype)
        return self.emit("aten._to_copy.default", [x.name], shape, dtype, {"dtype": dtype})

    # --- layout ----------------------------------------------------------------

    def op_reshape(self):
        self.arity(1)
        x = self.operand(0)
        shape, dtype = self.out_type()
        if numel(shape) != numel(x.shape):
            self.fail(f"reshape from {x.shape} to {shape} changes the element count")
        if self.ins.operands[0] in self.cval:
            self.cval[self.ins.name] = self.cval[self.ins.operands[0]]
        if shape == x.shape:
            return self.emit("aten.alias.default", [x.name], shape, dtype)
        return self.reshape(x, shape)

    def reshape(self, x, shape):
        """x viewed as shape, one block at a time: the dims of x and of
        shape fall into the smallest runs of equal element count (blocks),
        and each view changes one block, last block first.  The views
        compose to the same row-major view; written so, each step either
        keeps every dim before a split dim or every dim from it on, the two
        forms the view-over-cat laws speak of (docs/hlo.md, "reshape")."""
        if 0 in x.shape or 0 in shape:
            return self.view(x, shape)
        cuts_x, cuts_y, px, py = [0], [0], 1, 1
        i = j = 0
        while i < len(x.shape) or j < len(shape):
            if px <= py and i < len(x.shape):
                px *= x.shape[i]
                i += 1
            elif j < len(shape):
                py *= shape[j]
                j += 1
            else:
                px *= x.shape[i]
                i += 1
            if px == py and (i == len(x.shape) or x.shape[i] != 1 or
                             j == len(shape) or shape[j] != 1):
                cuts_x.append(i)
                cuts_y.append(j)
        if cuts_x[-1] != len(x.shape) or cuts_y[-1] != len(shape):
            return self.view(x, shape)
        t = x
        for b in range(len(cuts_x) - 1, 0, -1):
            lo_x, hi_x = cuts_x[b - 1], cuts_x[b]
            lo_y, hi_y = cuts_y[b - 1], cuts_y[b]
            if x.shape[lo_x:hi_x] == shape[lo_y:hi_y]:
                continue
            cur = list(x.shape[:lo_x]) + shape[lo_y:]
            t = self.view(t, cur)
        return self.view(t, shape)

    def op_bitcast(self):
        """A bitcast reinterprets the bytes: the same row-major values only
        when operand and result have the default layout (minor-to-major
        n-1..0); with other layouts it is a transpose in disguise, which is
        refused rather than guessed."""
        self.arity(1)
        src = self.instrs.get(self.ins.operands[0])
        for what, i in (("result", self.ins), ("operand", src)):
            lay = i.layout if i is not None else None
            rank = len(i.type[2]) if i is not None and i.type[0] == "array" else 0
            if lay is not None and lay != list(range(rank - 1, -1, -1)):
                self.fail(f"bitcast with a non-default {what} layout {lay} reorders elements; "
                          f"print the module before layout assignment")
        return self.op_reshape()

    def op_transpose(self):
        self.arity(1)
        x = self.operand(0)
        perm = P.int_list(self.mod, self.ins, "dimensions")
        if sorted(perm) != list(range(len(x.shape))):
            self.fail(f"transpose dimensions {perm} are not a permutation of {len(x.shape)} dims")
        t = self.permute(x, perm)
        return t if t is not x else self.emit("aten.alias.default", [x.name], x.shape, x.dtype)

    def op_broadcast(self):
        self.arity(1)
        x = self.operand(0)
        shape, dtype = self.out_type()
        dims = P.int_list(self.mod, self.ins, "dimensions", default=[])
        v = self.fold_scalar(0)
        if v is not None and numel(shape) == 1:
            self.cval[self.ins.name] = v
        src = self.instrs.get(self.ins.operands[0])
        if v is not None and x.shape == [] and src is not None and src.opcode == "constant":
            # a constant broadcast is a constant: full, as XLA folds it
            return self.full(shape, self.scalar_json(v, src.type[1]), dtype)
        t = self.broadcast_to(x, dims, shape)
        return t if t is not x else self.emit("aten.alias.default", [x.name], shape, dtype)

    def op_iota(self):
        shape, dtype = self.out_type()
        d = P.int_attr(self.mod, self.ins, "iota_dimension")
        if not 0 <= d < len(shape):
            self.fail(f"iota_dimension={d} outside the result's {len(shape)} dims")
        if shape == [shape[d]] and shape[d] <= 64:
            self.cval[self.ins.name] = list(range(shape[d]))
        a = self.emit("aten.arange.default", [shape[d]], [shape[d]], dtype, {"dtype": dtype})
        return self.broadcast_to(a, [d], shape)

    def op_slice(self):
        self.arity(1)
        x = self.operand(0)
        sl = P.slice_attr(self.mod, self.ins)
        if len(sl) != len(x.shape):
            self.fail(f"slice gives {len(sl)} ranges for an operand of rank {len(x.shape)}")
        t = x
        for d, (a, b, s) in enumerate(sl):
            if not (0 <= a <= b <= x.shape[d]) or s < 1:
                self.fail(f"slice [{a}:{b}:{s}] outside dim {d} of size {x.shape[d]}",
                          col=self.ins.attrs["slice"][1])
            if (a, b, s) == (0, x.shape[d], 1):
                continue
            n = (b - a + s - 1) // s
            args = [t.name, d, a, b] + ([s] if s != 1 else [])
            t = self.emit("aten.slice.Tensor", args, t.shape[:d] + [n] + t.shape[d + 1:], t.dtype)
        v = self.cval.get(self.ins.operands[0])
        if isinstance(v, list) and len(x.shape) == 1:
            a, b, s = sl[0]
            self.cval[self.ins.name] = v[a:b:s]
        return t if t is not x else self.emit("aten.alias.default", [x.name], x.shape, x.dtype)

    def op_concatenate(self):
        ts = [self.operand(i) for i in range(len(self.ins.operands))]
        if not ts:
            self.fail("concatenate needs operands")
        dims = P.int_list(self.mod, self.ins, "dimensions")
        if len(dims) != 1:
            self.fail(f"concatenate needs one dimension, found {dims}")
        shape, dtype = self.out_type()
        if len(ts) == 1:
            return self.emit("aten.alias.default", [ts[0].name], shape, dtype)
        return self.emit("aten.cat.default", [[t.name for t in ts], dims[0]], shape, dtype)

    def op_pad(self):
        self.arity(2)
        x = self.operand(0)
        v = self.fold_scalar(1)
        if v is None:
            self.fail("pad: the padding value must be a constant scalar")
        text = P.string_attr(self.mod, self.ins, "padding")
        if text is None:
            self.fail("pad needs attribute padding=")
        parts = text.split("x")
        if len(parts) != len(x.shape):
            self.fail(f"padding {text!r} has {len(parts)} dims, the operand {len(x.shape)}",
                      col=self.ins.attrs["padding"][1])
        pads = []
        for part in parts:
            nums = part.split("_")
            try:
                nums = [int(n) for n in nums]
            except ValueError:
                nums = []
            if len(nums) not in (2, 3):
                self.fail(f"padding {part!r} is not LOW_HIGH[_INTERIOR]",
                          col=self.ins.attrs["padding"][1])
            if len(nums) == 3 and nums[2] != 0:
                self.fail("pad with interior padding is not supported yet",
                          col=self.ins.attrs["padding"][1])
            pads.append(nums[:2])
        flat = []
        for lo, hi in reversed(pads):
            flat += [lo, hi]
        shape, dtype = self.out_type()
        if not any(flat):
            return self.emit("aten.alias.default", [x.name], shape, dtype)
        return self.emit("aten.constant_pad_nd.default",
                         [x.name, flat, self.scalar_json(v, self.ins.type[1])], shape, dtype)

    # --- dot ---------------------------------------------------------------------

    def op_dot(self):
        self.arity(2)
        lhs, rhs = self.operand(0), self.operand(1)
        m, ins = self.mod, self.ins
        lb = P.int_list(m, ins, "lhs_batch_dims", default=[])
        rb = P.int_list(m, ins, "rhs_batch_dims", default=[])
        lc = P.int_list(m, ins, "lhs_contracting_dims", default=[])
        rc = P.int_list(m, ins, "rhs_contracting_dims", default=[])
        if len(lb) != len(rb) or len(lc) != len(rc):
            self.fail("dot: batch and contracting dims of lhs and rhs differ in number")
        for dims, t, what in ((lb + lc, lhs, "lhs"), (rb + rc, rhs, "rhs")):
            if len(set(dims)) != len(dims) or any(not 0 <= d < len(t.shape) for d in dims):
                self.fail(f"dot: {what} batch/contracting dims {dims} do not fit rank "
                          f"{len(t.shape)}")
        for a, b in zip(lb + lc, rb + rc):
            if lhs.shape[a] != rhs.shape[b]:
                self.fail(f"dot: lhs dim {a} ({lhs.shape[a]}) and rhs dim {b} "
                          f"({rhs.shape[b]}) are paired but differ in size")
        lf = [d for d in range(len(lhs.shape)) if d not in lb + lc]
        rf = [d for d in range(len(rhs.shape)) if d not in rb + rc]
        batch = [lhs.shape[d] for d in lb]
        nm = numel([lhs.shape[d] for d in lf])
        nk = numel([lhs.shape[d] for d in lc])
        nn = numel([rhs.shape[d] for d in rf])
        a = self.permute(lhs, lb + lf + lc)
        a = self.view(a, batch + [nm, nk])
        b = self.permute(rhs, rb + rc + rf)
        b = self.view(b, batch + [nk, nn])
        op = {0: "aten.mm.default", 1: "aten.bmm.default"}.get(len(batch), "aten.matmul.default")
        shape, dtype = self.out_type()
        out = self.emit(op, [a.name, b.name], batch + [nm, nn], lhs.dtype)
        want = batch + [lhs.shape[d] for d in lf] + [rhs.shape[d] for d in rf]
        if want != shape:
            self.fail(f"dot: the result's shape is {shape}, but batch, lhs free and rhs free "
                      f"dims give {want}")
        out = self.view(out, shape)
        return self.to_dtype(out, dtype)

    # --- reductions ----------------------------------------------------------------

    def reducer_kind(self, comp, key="to_apply"):
        """sum/max/min/and/or for a computation f(p0, p1) = p0 OP p1 (either
        order); None otherwise."""
        params = [i for i in comp.instrs if i.opcode == "parameter"]
        r = comp.root
        if len(params) != 2 or r is None or r.opcode not in REDUCERS or \
                sorted(r.operands) != sorted(p.name for p in params) or \
                len(comp.instrs) != 3 or r.operands[0] == r.operands[1]:
            return None
        return REDUCERS[r.opcode]

    REDUCER_BINARY = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "and",
                      "or", "power"}
    REDUCER_UNARY = {"negate", "abs", "exponential", "log"}

    def reducer_text(self, comp):
        """The reducer as hlo.reduce's expression over the accumulator a
        (parameter 0) and the element b (parameter 1): `multiply(a,b)`."""
        params = {i.name: i.param for i in comp.instrs if i.opcode == "parameter"}
        if sorted(params.values()) != [0, 1]:
            self.fail(f"reduce: the reducer {comp.name!r} must take two scalar parameters",
                      col=self.ins.attrs["to_apply"][1])

        def text(name, depth=0):
            ins = comp.by_name[name]
            if ins.type != ("array", ins.type[1], []) or depth > 64:
                self.fail(f"reduce: the reducer {comp.name!r} computes on non-scalars",
                          col=self.ins.attrs["to_apply"][1])
            if ins.opcode == "parameter":
                return "a" if ins.param == 0 else "b"
            if ins.opcode == "constant":
                vals = self.literal_values(ins, ins.type[1])
                if vals and len(vals) == 1 and not isinstance(vals[0], bool) and \
                        math.isfinite(vals[0]):
                    return repr(float(vals[0]))
            if ins.opcode in self.REDUCER_BINARY and len(ins.operands) == 2:
                return f"{ins.opcode}({text(ins.operands[0], depth + 1)},{text(ins.operands[1], depth + 1)})"
            if ins.opcode in self.REDUCER_UNARY and len(ins.operands) == 1:
                return f"{ins.opcode}({text(ins.operands[0], depth + 1)})"
            self.fail(f"reduce: the reducer {comp.name!r} uses {ins.opcode!r}; reducers of "
                      f"{', '.join(sorted(self.REDUCER_BINARY | self.REDUCER_UNARY))}, the two "
                      f"parameters and finite constants are supported",
                      col=self.ins.attrs["to_apply"][1])
        return text(comp.root.name)

    def identity_of(self, kind, dt):
        if kind == "sum":
            return 0
        if kind == "and":
            return True
        if kind == "or":
            return False
        if dt in FLOAT:
            return -math.inf if kind == "max" else math.inf
        bits = {"s8": 8, "s32": 32, "s64": 64, "u8": 8, "u32": 32}.get(dt)
        if bits is None:
            return None
        if dt.startswith("u"):
            return 0 if kind == "max" else (1 << bits) - 1
        return -(1 << (bits - 1)) if kind == "max" else (1 << (bits - 1)) - 1

    def op_reduce(self):
        ins = self.ins
        if len(ins.operands) != 2:
            self.fail("variadic reduce (several operands) is not supported yet")
        x = self.operand(0)
        init = self.operand(1)
        comp = P.comp_attr(self.mod, ins, "to_apply")
        kind = self.reducer_kind(comp)
        dims = P.int_list(self.mod, ins, "dimensions")
        shape, dtype = self.out_type()
        if kind is None:         # any other reducer: the opaque hlo row
            text = self.reducer_text(comp)
            if sorted(set(dims)) != sorted(dims) or any(not 0 <= d < len(x.shape) for d in dims):
                self.fail(f"reduce dimensions {dims} do not fit rank {len(x.shape)}")
            return self.emit("hlo.reduce.default", [x.name, init.name, sorted(dims), text],
                             shape, dtype)
        if sorted(set(dims)) != sorted(dims) or any(not 0 <= d < len(x.shape) for d in dims):
            self.fail(f"reduce dimensions {dims} do not fit rank {len(x.shape)}")
        if dims:
            dims = sorted(dims)
            if kind == "sum":
                kw = {"dtype": dtype} if dtype not in FLOAT else None
                r = self.emit("aten.sum.dim_IntList", [x.name, dims], shape, dtype, kw)
            elif kind in ("max", "min"):
                r = self.emit("aten.amax.default" if kind == "max" else "aten.amin.default",
                              [x.name, dims], shape, dtype)
            else:
                r = self.emit("aten.all.dims" if kind == "and" else "aten.any.dims",
                              [x.name, dims], shape, dtype)
        else:
            r = x
        v = self.fold_scalar(1)
        ident = self.identity_of(kind, ins.type[1])
        if dims and v is not None and ident is not None and v == ident:
            return r
        op = {"sum": "aten.add.Tensor", "max": "aten.maximum.default",
              "min": "aten.minimum.default", "and": "aten.logical_and.default",
              "or": "aten.logical_or.default"}[kind]
        return self.emit(op, [r.name, init.name], shape, dtype)

    # --- gather and dynamic slices ---------------------------------------------------

    def op_gather(self):
        self.arity(2)
        x, idx = self.operand(0), self.operand(1)
        m, ins = self.mod, self.ins
        offset = P.int_list(m, ins, "offset_dims")
        collapsed = P.int_list(m, ins, "collapsed_slice_dims")
        sim = P.int_list(m, ins, "start_index_map")
        ivd = P.int_attr(m, ins, "index_vector_dim")
        sizes = P.int_list(m, ins, "slice_sizes")
        shape, dtype = self.out_type()
        # the form of x[idx] along one dim a (jnp.take, embedding lookups):
        # one start index per element of idx, whole slices elsewhere.
        ok = len(sim) == 1 and collapsed == sim and len(sizes) == len(x.shape)
        if ok:
            a = sim[0]
            ok = all(sizes[j] == (1 if j == a else x.shape[j]) for j in range(len(x.shape)))
        ishape = list(idx.shape)
        if ok and ivd < len(ishape):
            ok = ishape[ivd] == 1
            ishape = ishape[:ivd] + ishape[ivd + 1:]
        if ok:
            ok = len(ishape) == 1 and offset == [d for d in range(len(shape)) if d != a]
        if not ok:
            self.fail("gather is supported in the form x[idx] along one dim (start_index_map="
                      "collapsed_slice_dims={a}, whole slices elsewhere, batch dim at a); "
                      "this one is more general")
        i = self.view(idx, ishape)
        return self.emit("aten.index_select.default", [x.name, a, i.name], shape, dtype)

    def static_starts(self, first, n):
        """The start operands first.. as ints if all fold to constants
        (constants, replica-id, partition-id), else None."""
        starts = []
        for i in range(first, first + n):
            self.operand(i)
            v = self.fold_scalar(i)
            if v is None or isinstance(v, float):
                return None
            starts.append(int(v))
        return starts

    def op_dynamic_slice(self):
        x = self.operand(0)
        sizes = P.int_list(self.mod, self.ins, "dynamic_slice_sizes")
        if len(sizes) != len(x.shape) or len(self.ins.operands) != 1 + len(x.shape):
            self.fail("dynamic-slice needs one start per dim and dynamic_slice_sizes of the "
                      "operand's rank")
        starts = self.static_starts(1, len(x.shape))
        if starts is None:       # data-dependent: the hlo row
            shape, dtype = self.out_type()
            return self.emit("hlo.dynamic_slice.default",
                             [x.name, [self.operand(i).name for i in range(1, 1 + len(x.shape))],
                              sizes], shape, dtype)
        t = x
        for d, (s, z) in enumerate(zip(starts, sizes)):
            s = min(max(s, 0), x.shape[d] - z)      # HLO clamps the start
            if (s, z) != (0, x.shape[d]):
                t = self.emit("aten.slice.Tensor", [t.name, d, s, s + z],
                              t.shape[:d] + [z] + t.shape[d + 1:], t.dtype)
        v = self.cval.get(self.ins.operands[0])
        if isinstance(v, list) and len(x.shape) == 1:
            s = min(max(starts[0], 0), x.shape[0] - sizes[0])
            self.cval[self.ins.name] = v[s:s + sizes[0]]
        return t if t is not x else self.emit("aten.alias.default", [x.name], x.shape, x.dtype)

    def op_dynamic_update_slice(self):
        x, u = self.operand(0), self.operand(1)
        if len(self.ins.operands) != 2 + len(x.shape) or len(u.shape) != len(x.shape):
            self.fail("dynamic-update-slice needs an update of the operand's rank and one "
                      "start per dim")
        starts = self.static_starts(2, len(x.shape))
        if starts is None:       # data-dependent: the hlo row
            return self.emit("hlo.dynamic_update_slice.default",
                             [x.name, u.name,
                              [self.operand(i).name for i in range(2, 2 + len(x.shape))]],
                             x.shape, x.dtype)
        starts = [min(max(s, 0), n - z) for s, n, z in zip(starts, x.shape, u.shape)]
        return self.scatter_into(x, u, starts, 0)

    def scatter_into(self, x, u, starts, d):
        """x with u written at starts, from dim d on: along the first dim
        where u does not cover x, the cat of x's part before, the update
        (itself written into x's part if u leaves other dims uncovered)
        and x's part after -- the same values as a slice_scatter, in the
        operators the cat/slice laws speak of."""
        while d < len(x.shape) and (starts[d], u.shape[d]) == (0, x.shape[d]):
            d += 1
        if d == len(x.shape):
            return u
        s, z, n = starts[d], u.shape[d], x.shape[d]

        def part(a, b):
            shape = x.shape[:d] + [b - a] + x.shape[d + 1:]
            if x.name in self.fills:      # a part of a constant is a constant
                return self.full(shape, self.fills[x.name], x.dtype)
            return self.emit("aten.slice.Tensor", [x.name, d, a, b],
                             x.shape[:d] + [b - a] + x.shape[d + 1:], x.dtype)
        if any((starts[j], u.shape[j]) != (0, x.shape[j]) for j in range(d + 1, len(x.shape))):
            mid = self.scatter_into(part(s, s + z), u, starts, d + 1)
        else:
            mid = u
        parts = ([part(0, s)] if s > 0 else []) + [mid] + ([part(s + z, n)] if s + z < n else [])
        if len(parts) == 1:
            return mid
        return self.emit("aten.cat.default", [[p.name for p in parts], d], x.shape, x.dtype)

    # --- tuples ---------------------------------------------------------------------

    def op_tuple(self):
        return [self.env[o] for o in self.ins.operands]

    def op_get_tuple_element(self):
        self.arity(1)
        v = self.env[self.ins.operands[0]]
        i = P.int_attr(self.mod, self.ins, "index")
        if isinstance(v, T) or not 0 <= i < len(v):
            self.fail(f"get-tuple-element index={i} of a value that is not a tuple with that "
                      f"many elements")
        e = v[i]
        if isinstance(e, T):
            return self.emit("aten.alias.default", [e.name], e.shape, e.dtype)
        return e
