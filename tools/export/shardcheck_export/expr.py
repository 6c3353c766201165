"""expr.py -- the bundle's clean expression language, in Python.

Parses and evaluates (with torch) the expressions that relations are
written in (bundle-format.md, "Expressions"):

    expr   := NAME | FUNC "(" [ item { "," item } ] ")"
    item   := expr | KEY "=" value
    value  := INT | "SYMEXPR" | "[" INT { "," INT } "]" | expr

Only the clean operators are accepted (cat, slice, transpose, permute,
view, sum, full, arange, empty).  The exporter evaluates every relation it
writes with this module, so that what the bundle states was checked on
numbers.  Symbolic sizes (quoted strings) are evaluated against a dict of
symbol values when one is given.

Invariant: parse(format(e)) == e for every tree this module builds.
"""

import re

CLEAN_OPS = ("cat", "slice", "transpose", "permute", "view", "sum", "full",
             "arange", "empty")


class ExprError(ValueError):
    """A syntax or evaluation error; the message carries the column."""


class Name:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Name) and other.name == self.name

    def __repr__(self):
        return self.name


class Call:
    __slots__ = ("func", "args", "kwargs")

    def __init__(self, func, args, kwargs):
        self.func, self.args, self.kwargs = func, list(args), dict(kwargs)

    def __eq__(self, other):
        return (isinstance(other, Call) and other.func == self.func
                and other.args == self.args and other.kwargs == self.kwargs)

    def __repr__(self):
        return format_expr(self)


_TOKEN = re.compile(r"\s*(?:(?P<int>-?\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
                    r"|(?P<str>\"[^\"]*\")|(?P<punct>[(),=\[\]]))")


def _tokens(text):
    pos, out = 0, []
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise ExprError(f"col {pos + 1}: unexpected character {text[pos]!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind), m.start(kind) + 1))
        pos = m.end()
    out.append(("end", "", len(text) + 1))
    return out


class _Parser:
    def __init__(self, text):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self):
        return self.toks[self.i]

    def take(self, kind=None, value=None):
        tok = self.toks[self.i]
        if (kind and tok[0] != kind) or (value is not None and tok[1] != value):
            want = value or kind
            raise ExprError(f"col {tok[2]}: expected {want!r}, found {tok[1] or 'end'!r}")
        self.i += 1
        return tok

    def expr(self):
        kind, text, col = self.take("name")
        if self.peek()[1] != "(":
            return Name(text)
        if text not in CLEAN_OPS:
            raise ExprError(f"col {col}: {text} is not a clean operator; relations "
                            f"may use {', '.join(CLEAN_OPS)}")
        self.take("punct", "(")
        args, kwargs = [], {}
        if self.peek()[1] != ")":
            while True:
                tok = self.peek()
                # the token after; at the end there is none (fuzz-readers.py: "cat(")
                nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else tok
                if tok[0] == "name" and nxt[1] == "=":
                    self.i += 2
                    kwargs[tok[1]] = self.value()
                else:
                    if kwargs:
                        raise ExprError(f"col {tok[2]}: positional argument after keyword")
                    args.append(self.expr())
                if self.peek()[1] == ",":
                    self.i += 1
                    continue
                break
        self.take("punct", ")")
        return Call(text, args, kwargs)

    def value(self):
        kind, text, col = self.peek()
        if kind == "int":
            self.i += 1
            return int(text)
        if kind == "str":
            self.i += 1
            return text[1:-1]
        if text == "[":
            self.i += 1
            items = []
            while self.peek()[1] != "]":
                items.append(int(self.take("int")[1]))
                if self.peek()[1] == ",":
                    self.i += 1
            self.take("punct", "]")
            return items
        return self.expr()


def parse_expr(text):
    p = _Parser(text)
    e = p.expr()
    tok = p.peek()
    if tok[0] != "end":
        raise ExprError(f"col {tok[2]}: unexpected {tok[1]!r} after the expression")
    return e


def _fmt_value(v):
    if isinstance(v, bool):
        raise ExprError("booleans are not expression values")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(str(int(x)) for x in v) + "]"
    return format_expr(v)


def format_expr(e):
    if isinstance(e, Name):
        return e.name
    parts = [format_expr(a) for a in e.args]
    parts += [f"{k}={_fmt_value(v)}" for k, v in e.kwargs.items()]
    return f"{e.func}({', '.join(parts)})"


def _int(v, symbols):
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        if not re.fullmatch(r"[A-Za-z0-9_+\-*/%() ]+", v):
            raise ExprError(f"bad symbolic size {v!r}")
        env = dict(symbols or {})
        try:
            return int(eval(v.replace("/", "//"), {"__builtins__": {}}, env))
        except Exception as exc:  # an unknown symbol
            raise ExprError(f"cannot evaluate size {v!r}: {exc}") from None
    raise ExprError(f"expected an integer, found {v!r}")


def evaluate(e, env, symbols=None):
    """Value of expression e (tree or text) with env: name -> torch.Tensor."""
    import torch

    if isinstance(e, str):
        e = parse_expr(e)
    if isinstance(e, Name):
        if e.name not in env:
            raise ExprError(f"unknown tensor {e.name!r}")
        return env[e.name]
    kw = e.kwargs
    args = [evaluate(a, env, symbols) for a in e.args]
    f = e.func
    if f == "cat":
        return torch.cat(args, _int(kw.get("dim", 0), symbols))
    if f == "sum":
        acc = args[0]
        for a in args[1:]:
            acc = acc + a
        return acc
    if f == "slice":
        (t,) = args
        dim = _int(kw.get("dim", 0), symbols)
        start = _int(kw.get("start", 0), symbols)
        end = _int(kw.get("end", t.shape[dim]), symbols)
        step = _int(kw.get("step", 1), symbols)
        idx = [slice(None)] * t.dim()
        idx[dim] = slice(start, end, step)
        return t[tuple(idx)]
    if f == "transpose":
        (t,) = args
        return t.transpose(_int(kw["dim0"], symbols), _int(kw["dim1"], symbols))
    if f == "permute":
        (t,) = args
        return t.permute(*[_int(d, symbols) for d in kw["dims"]])
    if f == "view":
        (t,) = args
        return t.reshape([_int(d, symbols) for d in kw["shape"]])
    if f == "full":
        return torch.full([_int(d, symbols) for d in kw["shape"]], float(kw["value"]))
    if f == "arange":
        return torch.arange(_int(kw.get("start", 0), symbols), _int(kw["end"], symbols))
    if f == "empty":
        return torch.empty([_int(d, symbols) for d in kw["shape"]])
    raise ExprError(f"{f} is not a clean operator")
