"""parse.py -- read HLO module text as XLA prints it (HloModule::ToString,
`jax.jit(f).lower(...).as_text(dialect="hlo")`, PyTorch/XLA's
`_get_xla_tensors_hlo`, Neuron's dumps) into a small syntax tree.

    module  := "HloModule" NAME { "," ATTR } { computation }
    computation := [ "ENTRY" ] NAME "(" params ")" "->" TYPE "{" { instr } "}"
    instr   := [ "ROOT" ] NAME "=" TYPE OPCODE "(" operands ")" { "," KEY "=" VALUE }
    TYPE    := DTYPE "[" dims "]" [ LAYOUT ] | "(" TYPE { "," TYPE } ")"

Names may carry XLA's `%` sigil or not (both print styles).  Layouts
(`{1,0}`, `{2,1,0:T(8,128)}`) do not change an instruction's values, except
through bitcast: each instruction keeps its layout aside (Instr.layout)
for that.  `/*index=5*/` comments are ignored.
Operands may be printed with their types (`f32[4]{0} %x`) or without.
Attribute values are kept as raw text with their column; the lowering
interprets the keys it knows.  Every error is a ConvertError whose place is
`FILE:LINE:COL`.

Standard library only.
"""

import re

from fx2bundle import ConvertError

DTYPES = {"pred", "s4", "s8", "s16", "s32", "s64", "u4", "u8", "u16", "u32", "u64",
          "f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2", "c64", "c128", "token"}


class Instr:
    """One instruction.  `type` is ("array", dtype, [dims]) or ("tuple", [types]).
    `operands` are names (without sigil); `literal` is the raw text inside
    constant(...) and `param` the number inside parameter(...).  `attrs`
    maps a key to (raw value text, column)."""

    def __init__(self, name, typ, opcode, line, col, root):
        self.name = name
        self.type = typ
        self.opcode = opcode
        self.line = line
        self.col = col
        self.root = root
        self.operands = []
        self.operand_cols = []
        self.literal = None
        self.param = None
        self.attrs = {}
        self.src = None
        self.layout = None      # minor-to-major dims as printed; None: not printed
        self.opcode_col = col


class Computation:
    def __init__(self, name, entry, line):
        self.name = name
        self.entry = entry
        self.line = line
        self.instrs = []
        self.by_name = {}
        self.root = None


class Module:
    def __init__(self, path, display):
        self.path = path
        self.display = display
        self.name = None
        self.computations = {}
        self.entry = None


def strip_comments(text):
    """Blank out /* ... */ comments, keeping every column in place."""
    return re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), text)


class Line:
    """A cursor over one line of the module, for error columns."""

    def __init__(self, text, lineno, display):
        self.text = text
        self.pos = 0
        self.lineno = lineno
        self.display = display

    def fail(self, msg, pos=None):
        col = (self.pos if pos is None else pos) + 1
        raise ConvertError(f"{self.display}:{self.lineno}:{col}", msg)

    def ws(self):
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r":
            self.pos += 1

    def at(self, s):
        self.ws()
        return self.text.startswith(s, self.pos)

    def eat(self, s):
        if self.at(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s, what=None):
        if not self.eat(s):
            self.fail(f"expected {what or repr(s)}, found {self.found()}")

    def found(self):
        self.ws()
        if self.pos >= len(self.text):
            return "end of line"
        return repr(self.text[self.pos:self.pos + 12])

    def name(self, what="a name"):
        self.ws()
        m = re.compile(r"%?([A-Za-z_][A-Za-z0-9_.\-]*)").match(self.text, self.pos)
        if not m:
            self.fail(f"expected {what}, found {self.found()}")
        self.pos = m.end()
        return m.group(1)

    def integer(self, what="an integer"):
        self.ws()
        m = re.compile(r"-?\d+").match(self.text, self.pos)
        if not m:
            self.fail(f"expected {what}, found {self.found()}")
        self.pos = m.end()
        return int(m.group(0))

    def balanced(self, stops=","):
        """Raw text up to a top-level character of `stops` (or the end),
        balancing (), [], {} and skipping quoted strings."""
        self.ws()
        start = self.pos
        depth = []
        close = {"(": ")", "[": "]", "{": "}"}
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c == '"':
                self.pos += 1
                while self.pos < len(t) and t[self.pos] != '"':
                    self.pos += 2 if t[self.pos] == "\\" else 1
                if self.pos >= len(t):
                    self.fail("unterminated string", start)
            elif c in close:
                depth.append(close[c])
            elif c in ")]}":
                if not depth:
                    if c in stops:
                        break
                    self.fail(f"unbalanced {c!r}")
                if depth.pop() != c:
                    self.fail(f"unbalanced {c!r}")
            elif c in stops and not depth:
                break
            self.pos += 1
        if depth:
            self.fail(f"missing {depth[-1]!r}", start)
        return t[start:self.pos].strip(), start

    def type(self):
        """TYPE, layouts skipped."""
        self.ws()
        if self.eat("("):
            elems = []
            if not self.eat(")"):
                while True:
                    elems.append(self.type())
                    if self.eat(")"):
                        break
                    self.expect(",", "',' or ')' in a tuple type")
            return ("tuple", elems)
        start = self.pos
        m = re.compile(r"([a-z][a-z0-9]*)\[").match(self.text, self.pos)
        if not m:
            self.fail(f"expected a shape such as f32[4,8], found {self.found()}")
        dt = m.group(1)
        if dt not in DTYPES:
            self.fail(f"unknown element type {dt!r}", start)
        self.pos = m.end()
        dims = []
        if not self.eat("]"):
            while True:
                self.ws()
                if self.at("<=") or self.at("?"):
                    self.fail("dynamic (bounded) dimensions are not supported")
                dims.append(self.integer("a dimension size"))
                if self.eat("]"):
                    break
                self.expect(",", "',' or ']' in a shape")
        self.last_layout = None
        if self.text.startswith("{", self.pos):      # layout: kept aside (bitcast)
            self.pos += 1
            text, _ = self.balanced(stops="}")
            self.expect("}")
            m = re.match(r"\s*([\d,\s]*)", text)
            try:
                self.last_layout = [int(x) for x in m.group(1).replace(" ", "").split(",") if x]
            except ValueError:
                self.last_layout = None
            if ":" in text or not self.last_layout and dims:
                self.last_layout = "other"
        return ("array", dt, dims)


HEADER_RE = re.compile(r"^\s*(ENTRY\s+)?%?[A-Za-z_][A-Za-z0-9_.\-]*\s*(\(|\{)")
INSTR_RE = re.compile(r"^\s*(ROOT\s+)?%?[A-Za-z_][A-Za-z0-9_.\-]*\s*=")


def parse_module(path, display, text=None):
    if text is None:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ConvertError(display, f"cannot read: {e.strerror}")
        except UnicodeDecodeError:
            raise ConvertError(display, "not UTF-8 text (an HLO proto? print it as text)")
    mod = Module(path, display)
    comp = None
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = strip_comments(raw)
        s = line.strip()
        if not s or s.startswith("//") or s.startswith("#"):
            continue
        ln = Line(line, lineno, display)
        if mod.name is None:
            if not ln.eat("HloModule"):
                ln.fail("expected 'HloModule NAME' on the first line (is this HLO text?)")
            mod.name = ln.name("the module's name")
            continue
        if comp is None:
            if s == "}":
                ln.fail("'}' outside a computation")
            if not (HEADER_RE.match(line) and s.endswith("{")) or INSTR_RE.match(line):
                ln.fail("expected a computation header 'NAME (PARAMS) -> TYPE {'")
            entry = ln.eat("ENTRY")
            name = ln.name("a computation name")
            if name in mod.computations:
                ln.fail(f"computation {name!r} is defined twice")
            comp = Computation(name, entry, lineno)
            if entry:
                if mod.entry is not None:
                    ln.fail("a second ENTRY computation")
                mod.entry = comp
            continue
        if s == "}":
            if comp.root is None and comp.instrs:
                comp.root = comp.instrs[-1]
            if not comp.instrs:
                ln.fail(f"computation {comp.name!r} is empty")
            mod.computations[comp.name] = comp
            comp = None
            continue
        ins = parse_instr(ln)
        if ins.name in comp.by_name:
            ln.fail(f"instruction {ins.name!r} is defined twice in {comp.name!r}", ins.col - 1)
        for o, c in zip(ins.operands, ins.operand_cols):
            if o not in comp.by_name:
                ln.fail(f"operand %{o} is not defined before its use in {comp.name!r}", c)
        if ins.root:
            if comp.root is not None:
                ln.fail(f"a second ROOT in {comp.name!r}", ins.col - 1)
            comp.root = ins
        comp.instrs.append(ins)
        comp.by_name[ins.name] = ins
    if mod.name is None:
        raise ConvertError(f"{display}:1:1", "empty file: expected 'HloModule NAME'")
    if comp is not None:
        raise ConvertError(f"{display}:{comp.line}:1",
                           f"computation {comp.name!r} is not closed with '}}'")
    if mod.entry is None:
        raise ConvertError(display, "no ENTRY computation")
    return mod


def parse_instr(ln):
    root = ln.eat("ROOT")
    ln.ws()
    col = ln.pos + 1
    name = ln.name("an instruction name")
    ln.expect("=", "'=' after the instruction name")
    typ = ln.type()
    layout = getattr(ln, "last_layout", None) if typ[0] == "array" else None
    ln.ws()
    opcode_pos = ln.pos
    m = re.compile(r"[a-z][a-z0-9\-]*").match(ln.text, ln.pos)
    if not m:
        ln.fail(f"expected an opcode, found {ln.found()}")
    ins = Instr(name, typ, m.group(0), ln.lineno, col, root)
    ins.layout = layout
    ins.opcode_col = opcode_pos + 1
    ln.pos = m.end()
    ln.expect("(", "'(' after the opcode")
    if ins.opcode == "constant":
        ins.literal, _ = ln.balanced(stops=")")
        ln.expect(")")
    elif ins.opcode == "parameter":
        ins.param = ln.integer("the parameter number")
        ln.expect(")")
    elif not ln.eat(")"):
        while True:
            ln.ws()
            if re.compile(r"[a-z][a-z0-9]*\[|\(").match(ln.text, ln.pos):
                ln.type()                       # typed operand: "f32[4]{0} %x"
            ln.ws()
            ins.operand_cols.append(ln.pos)
            ins.operands.append(ln.name("an operand"))
            if ln.eat(")"):
                break
            ln.expect(",", "',' or ')' after an operand")
    while ln.eat(","):
        ln.ws()
        kpos = ln.pos
        km = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(ln.text, ln.pos)
        if not km:
            ln.fail(f"expected an attribute name, found {ln.found()}")
        ln.pos = km.end()
        ln.expect("=", f"'=' after attribute {km.group(0)!r}")
        val, vpos = ln.balanced(stops=",")
        if km.group(0) in ins.attrs:
            ln.fail(f"attribute {km.group(0)!r} given twice", kpos)
        ins.attrs[km.group(0)] = (val, vpos + 1)
    ln.ws()
    if ln.pos < len(ln.text):
        ln.fail(f"unexpected {ln.found()} after the instruction")
    if "metadata" in ins.attrs:
        ins.src = metadata_src(ins.attrs["metadata"][0])
    return ins


FRAME_RE = re.compile(r"'([^']+):(\d+)'")
TOOLCHAIN = ("site-packages/", "dist-packages/", "/jax/_src/", "/torch_xla/", "/torch_neuronx/")


def metadata_src(text):
    """`src` from metadata={... source_file="F" source_line=N}.  Neuron's
    source_file is a whole stack ("test.py\\n----\\n['a.py:1', ...]"): the
    last frame outside the toolchain (site-packages, jax, torch_xla,
    torch_neuronx) is the useful one."""
    fm = re.search(r'source_file="((?:[^"\\]|\\.)*)"', text)
    lm = re.search(r"source_line=(\d+)", text)
    if not fm:
        return None
    f = fm.group(1)
    if "\\n----\\n[" in f:
        frames = FRAME_RE.findall(f.replace("\\'", "'"))
        user = [(p, n) for p, n in frames if not any(t in p for t in TOOLCHAIN)]
        if user:
            p, n = user[-1]
            return f"{short_path(p)}:{n}"
        f = f.split("\\n", 1)[0]
    return f"{short_path(f)}:{lm.group(1)}" if lm else short_path(f)


def short_path(p):
    """The part of a path from its package on (.../src/pkg/a.py -> pkg/a.py)."""
    if "/src/" in p:
        return p.rsplit("/src/", 1)[1]
    return "/".join(p.split("/")[-2:])


# --- attribute values ---------------------------------------------------

def attr_fail(mod, ins, key, msg):
    val, col = ins.attrs[key]
    raise ConvertError(f"{mod.display}:{ins.line}:{col}", f"{key}: {msg}")


def int_list(mod, ins, key, default=None):
    """`{1,2}` -> [1, 2]."""
    if key not in ins.attrs:
        if default is None:
            raise ConvertError(f"{mod.display}:{ins.line}:{ins.opcode_col}",
                               f"{ins.opcode} needs attribute {key}=")
        return list(default)
    val = ins.attrs[key][0].replace(" ", "")
    if not (val.startswith("{") and val.endswith("}")):
        attr_fail(mod, ins, key, f"expected {{i,j,...}}, found {val!r}")
    body = val[1:-1]
    try:
        return [int(x) for x in body.split(",")] if body else []
    except ValueError:
        attr_fail(mod, ins, key, f"expected integers, found {val!r}")


def int_attr(mod, ins, key, default=None):
    if key not in ins.attrs:
        if default is None:
            raise ConvertError(f"{mod.display}:{ins.line}:{ins.opcode_col}",
                               f"{ins.opcode} needs attribute {key}=")
        return default
    try:
        return int(ins.attrs[key][0])
    except ValueError:
        attr_fail(mod, ins, key, f"expected an integer, found {ins.attrs[key][0]!r}")


def groups_attr(mod, ins, key):
    """`{{0,1},{2,3}}` -> [[0, 1], [2, 3]]; `{}` -> []; iota form
    `[2,2]<=[4]` (XLA's compact print) -> its groups."""
    if key not in ins.attrs:
        return []
    val = ins.attrs[key][0].replace(" ", "")
    m = re.fullmatch(r"\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", val)
    if m:
        return iota_groups(mod, ins, key, val, int(m.group(1)), int(m.group(2)),
                           [int(x) for x in m.group(3).split(",")],
                           [int(x) for x in m.group(4).split(",")] if m.group(4) else None)
    if not (val.startswith("{") and val.endswith("}")):
        attr_fail(mod, ins, key, f"expected {{{{i,j}},...}}, found {val!r}")
    body = val[1:-1]
    if not body:
        return []
    out = []
    for g in re.findall(r"\{([^{}]*)\}", body):
        try:
            out.append([int(x) for x in g.split(",")] if g else [])
        except ValueError:
            attr_fail(mod, ins, key, f"expected integers, found {val!r}")
    if re.sub(r"\{[^{}]*\}", "", body).replace(",", ""):
        attr_fail(mod, ins, key, f"expected {{{{i,j}},...}}, found {val!r}")
    return out


def iota_groups(mod, ins, key, val, g, n, dims, perm):
    """XLA's compact groups `[G,N]<=[d0,d1,...]T(p0,p1,...)`: the device
    ids 0..prod(d)-1 laid out as an array of shape d, transposed by p,
    read in row-major order and cut into G groups of N."""
    tot = 1
    for d in dims:
        tot *= d
    perm = perm if perm is not None else list(range(len(dims)))
    if g * n != tot or sorted(perm) != list(range(len(dims))):
        attr_fail(mod, ins, key, f"iota groups {val!r} do not cover {tot} devices")
    tdims = [dims[p] for p in perm]
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    ids = []
    idx = [0] * len(tdims)
    for _ in range(tot):
        ids.append(sum(idx[j] * strides[perm[j]] for j in range(len(tdims))))
        for j in range(len(tdims) - 1, -1, -1):
            idx[j] += 1
            if idx[j] < tdims[j]:
                break
            idx[j] = 0
    return [ids[i * n:(i + 1) * n] for i in range(g)]


def slice_attr(mod, ins, key="slice"):
    """`{[0:256], [0:2048:2]}` -> [(0, 256, 1), (0, 2048, 2)]."""
    val = ins.attrs.get(key, (None, None))[0]
    if val is None:
        raise ConvertError(f"{mod.display}:{ins.line}:{ins.opcode_col}",
                           f"{ins.opcode} needs attribute {key}=")
    v = val.replace(" ", "")
    if not (v.startswith("{") and v.endswith("}")):
        attr_fail(mod, ins, key, f"expected {{[a:b],...}}, found {val!r}")
    out = []
    for part in re.findall(r"\[([^\]]*)\]", v):
        bits = part.split(":")
        try:
            nums = [int(b) for b in bits]
        except ValueError:
            attr_fail(mod, ins, key, f"expected [start:limit:stride], found [{part}]")
        if len(nums) == 2:
            nums.append(1)
        if len(nums) != 3:
            attr_fail(mod, ins, key, f"expected [start:limit:stride], found [{part}]")
        out.append(tuple(nums))
    return out


def string_attr(mod, ins, key, default=None):
    if key not in ins.attrs:
        return default
    v = ins.attrs[key][0]
    if v.startswith('"') and v.endswith('"'):
        return v[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return v


def comp_attr(mod, ins, key):
    if key not in ins.attrs:
        raise ConvertError(f"{mod.display}:{ins.line}:{ins.opcode_col}",
                           f"{ins.opcode} needs attribute {key}=")
    name = ins.attrs[key][0].lstrip("%")
    if name not in mod.computations:
        attr_fail(mod, ins, key, f"no computation named {name!r} (computations are defined "
                  "before their use)")
    return mod.computations[name]
