#!/usr/bin/env python3
"""symbolize.py -- a bundle with symbolic sizes, made from concrete exports.

shardcheck-export traces concrete sizes.  To check a model for every batch
and sequence length, export it at several sizes (the same code, only the
sizes differ) and give the exports to this module with the symbol values
of each: every integer that differs between the exports is replaced by an
expression over the symbols, and every other value is kept as it is.

    python3 tools/export/symbolize.py --symbol B:1 --symbol S:2 \\
        --assume "S % 2 == 0" -o sym.json \\
        B=2,S=8:a.json B=3,S=8:b.json B=4,S=8:c.json \\
        B=2,S=12:d.json B=2,S=16:e.json B=3,S=12:f.json

How a size is replaced (never by guessing from one value):
  * an integer equal in every export is a constant, kept;
  * an integer that varies must be c*M + d for exactly one monomial M over
    the symbols (each exponent 0..2, not all 0), a rational c != 0 and an
    integer d, on every export.  c's denominator must divide what the
    assumptions make M divisible by ("S % 4 == 0": S/2, 3*S/4); d is
    free (an off-by-one slice is S/2 - 1).  When no candidate fits, or more
    than one does (S and S*S both fit two points along S; 16*S and 2*S*S +
    ... fit badly chosen sizes), it is an error naming the JSON path and
    the values: export at more sizes (three values per symbol separate the
    degrees; a point where all symbols change separates B*S from B + S);
  * integers inside relation strings ("slice(y_0, dim=1, start=4, end=8)")
    are treated the same way, position by position, and written quoted
    (start="S/2");
  * anything else that differs (a float, a name, the structure of a graph)
    is an error: the exports are not the same code at other sizes.
Finally every expression is evaluated at every export's symbol values and
must give back that export's number (a self-check of this module).

The result carries "symbols" and "assume" as given; "name" and
"description" come from the caller (the first export's otherwise).

Standard library only; the output is written with the exporter's layout
(one tensor or node per line, shardcheck_export/writer.py).
"""

import argparse
import itertools
import json
import os
import re
import sys
from fractions import Fraction

_IDENT = r"[A-Za-z_][A-Za-z0-9_.]*"
# an integer token in an expression string, not part of a name (x_10, r1.y)
_INT_IN_TEXT = re.compile(r"(?<![A-Za-z0-9_.\"])-?\d+(?![A-Za-z0-9_.\"])")
_RELATION_KEYS = ("input_relation", "expect_output_relation", "assume_relation")


class SymbolizeError(ValueError):
    """The exports cannot be merged into one symbolic bundle (says where)."""


# --- assumptions ---------------------------------------------------------------

def divisibility(assume):
    """{symbol: k} from assumptions "S % k == 0" (the largest k per symbol)."""
    out = {}
    for a in assume:
        for part in re.split(r"\s*(?:&&|\band\b)\s*", a):
            m = re.fullmatch(rf"\s*({_IDENT})\s*%\s*(\d+)\s*==\s*0\s*", part)
            if m:
                k = int(m.group(2))
                s = m.group(1)
                out[s] = out.get(s, 1) * k // _gcd(out.get(s, 1), k)
    return out


def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


# --- candidate expressions -------------------------------------------------------

class Expr:
    """c * M + d, M a monomial (tuple of exponents, one per symbol)."""

    def __init__(self, symbols, exps, c, d):
        self.symbols, self.exps, self.c, self.d = symbols, exps, c, d

    def monomial_value(self, values):
        v = 1
        for s, e in zip(self.symbols, self.exps):
            v *= values[s] ** e
        return v

    def evaluate(self, values):
        return self.c * self.monomial_value(values) + self.d

    def monomial_text(self):
        parts = []
        for s, e in zip(self.symbols, self.exps):
            parts += [s] * e
        return "*".join(parts)

    def __str__(self):
        m = self.monomial_text()
        c, d = self.c, self.d
        sign = "-" if c < 0 else ""
        p, q = abs(c.numerator), c.denominator
        head = m if p == 1 else f"{p}*{m}"
        if q != 1:
            head = f"{head}/{q}"
        text = sign + head
        if d > 0:
            text += f"+{d}"
        elif d < 0:
            text += f"-{-d}"
        return text


def _monomials(symbols, max_exp):
    for exps in itertools.product(range(max_exp + 1), repeat=len(symbols)):
        if any(exps):
            yield exps


def fit(values, points, symbols, divisors, max_exp=2):
    """All c*M + d that give values[i] at points[i] (see the module doc)."""
    found = []
    for exps in _monomials(symbols, max_exp):
        probe = Expr(symbols, exps, Fraction(1), 0)
        ms = [probe.monomial_value(p) for p in points]
        pair = next(((i, j) for i in range(len(ms)) for j in range(i + 1, len(ms))
                     if ms[i] != ms[j]), None)
        if pair is None:
            continue        # M does not vary over these points
        i, j = pair
        c = Fraction(values[j] - values[i], ms[j] - ms[i])
        if c == 0:
            continue
        d = values[i] - c * ms[i]
        if d.denominator != 1:
            continue
        allowed = 1
        for s, e in zip(symbols, exps):
            allowed *= divisors.get(s, 1) ** e
        if allowed % c.denominator:
            continue
        if all(c * m + d == v for m, v in zip(ms, values)):
            found.append(Expr(symbols, exps, c, int(d)))
    return found


# --- merging --------------------------------------------------------------------------

class _Merger:
    def __init__(self, points, symbols, divisors, max_exp):
        self.points, self.symbols = points, symbols
        self.divisors, self.max_exp = divisors, max_exp
        self.replaced = 0

    def size(self, values, path):
        if all(v == values[0] for v in values):
            return values[0]
        cands = fit(values, self.points, self.symbols, self.divisors, self.max_exp)
        at = ", ".join(f"{v} at {_point_text(p)}" for v, p in zip(values, self.points))
        if not cands:
            raise SymbolizeError(f"{path}: {at}: no expression c*M+d over "
                                 f"{', '.join(self.symbols)} gives these values")
        if len(cands) > 1:
            raise SymbolizeError(f"{path}: {at}: ambiguous, fits "
                                 f"{' and '.join(str(e) for e in cands)}; export at "
                                 f"more sizes to separate them")
        e = cands[0]
        for v, p in zip(values, self.points):
            if e.evaluate(p) != v or eval_dim(str(e), p) != v:
                raise SymbolizeError(f"{path}: internal error: {e} does not give {v} at "
                                     f"{_point_text(p)}")
        self.replaced += 1
        return str(e)

    def text(self, texts, path, quote):
        if all(t == texts[0] for t in texts):
            return texts[0]
        skeletons = [_INT_IN_TEXT.split(t) for t in texts]
        if any(s != skeletons[0] for s in skeletons):
            raise SymbolizeError(f"{path}: the exports differ in more than sizes: "
                                 f"{texts[0]!r} vs {next(t for t in texts if t != texts[0])!r}")
        nums = [[int(x) for x in _INT_IN_TEXT.findall(t)] for t in texts]
        out = [skeletons[0][0]]
        for k in range(len(nums[0])):
            vals = [n[k] for n in nums]
            v = self.size(vals, f"{path} (integer {k + 1})")
            out.append(f'"{v}"' if isinstance(v, str) and quote else str(v))
            out.append(skeletons[0][k + 1])
        return "".join(out)

    def merge(self, items, path, in_relation=False):
        first = items[0]
        kinds = {type(x) for x in items}
        if kinds == {bool}:
            if any(x != first for x in items):
                raise SymbolizeError(f"{path}: a boolean differs between the exports")
            return first
        if kinds <= {int} and bool not in kinds:
            return self.size(list(items), path)
        if len(kinds) != 1:
            raise SymbolizeError(f"{path}: the exports differ in kind: "
                                 f"{', '.join(sorted(k.__name__ for k in kinds))}")
        if isinstance(first, dict):
            keys = list(first)
            for x in items[1:]:
                if list(x) != keys:
                    raise SymbolizeError(f"{path}: the exports have different keys")
            return {k: self.merge([x[k] for x in items], f"{path}.{k}",
                                  in_relation or (path == "$" and k in _RELATION_KEYS))
                    for k in keys}
        if isinstance(first, list):
            if any(len(x) != len(first) for x in items):
                raise SymbolizeError(f"{path}: the exports have lists of different "
                                     f"lengths ({', '.join(str(len(x)) for x in items)})")
            return [self.merge([x[i] for x in items], f"{path}[{i}]", in_relation)
                    for i in range(len(first))]
        if isinstance(first, str):
            if in_relation:
                return self.text(list(items), path, quote=True)
            if any(x != first for x in items):
                raise SymbolizeError(f"{path}: a string differs between the exports: "
                                     f"{first!r} vs "
                                     f"{next(x for x in items if x != first)!r}")
            return first
        if any(x != first for x in items):
            raise SymbolizeError(f"{path}: a {type(first).__name__} differs between the "
                                 f"exports ({first!r} vs "
                                 f"{next(x for x in items if x != first)!r}): only "
                                 f"integer sizes may depend on the symbols")
        return first


def _point_text(p):
    return ",".join(f"{k}={v}" for k, v in p.items())


def symbolize(exports, symbols, assume=(), name=None, description=None, max_exp=2):
    """exports: [(values {symbol: int}, bundle dict)], at least two;
    symbols: {name: {"min": .., "max": ..}} as written into the bundle.
    Returns (bundle, number of integers replaced)."""
    if len(exports) < 2:
        raise SymbolizeError("need at least two exports at different sizes")
    names = list(symbols)
    points = []
    for values, _ in exports:
        if set(values) != set(names):
            raise SymbolizeError(f"export at {_point_text(values)}: give a value for each "
                                 f"of {', '.join(names)}")
        points.append(dict(values))
    if len({tuple(sorted(p.items())) for p in points}) != len(points):
        raise SymbolizeError("two exports at the same sizes")
    for s in names:
        if len({p[s] for p in points}) < 2:
            raise SymbolizeError(f"symbol {s} has the same value in every export")
    merger = _Merger(points, names, divisibility(assume), max_exp)
    bundles = [dict(b) for _, b in exports]
    for b in bundles:
        b.pop("name", None)
        b.pop("description", None)
        b.pop("symbols", None)
        b.pop("assume", None)
    merged = merger.merge(bundles, "$")
    first = exports[0][1]
    out = {"format": first.get("format", "shardcheck-bundle/1"),
           "name": name if name is not None else first.get("name", "symbolic"),
           "description": description if description is not None
           else first.get("description", ""),
           "symbols": symbols, "assume": list(assume)}
    for k, v in merged.items():
        if k != "format":
            out[k] = v
    return out, merger.replaced


# --- evaluating a size expression (self-check) -----------------------------------------

_DIM_TOKEN = re.compile(rf"\s*(?:(\d+)|({_IDENT})|(.))")


def eval_dim(text, values):
    """Evaluate a size expression of +, -, *, / (floor), parentheses."""
    toks = []
    for m in _DIM_TOKEN.finditer(text):
        if m.group(1):
            toks.append(int(m.group(1)))
        elif m.group(2):
            toks.append(values[m.group(2)])
        elif m.group(3).strip():
            toks.append(m.group(3))
    pos = 0

    def atom():
        nonlocal pos
        t = toks[pos]
        pos += 1
        if t == "(":
            v = expr()
            pos += 1
            return v
        if t == "-":
            return -atom()
        return t

    def term():
        nonlocal pos
        v = atom()
        while pos < len(toks) and toks[pos] in ("*", "/"):
            op = toks[pos]
            pos += 1
            r = atom()
            v = v * r if op == "*" else v // r
        return v

    def expr():
        nonlocal pos
        v = term()
        while pos < len(toks) and toks[pos] in ("+", "-"):
            op = toks[pos]
            pos += 1
            r = term()
            v = v + r if op == "+" else v - r
        return v

    return expr()


# --- output -------------------------------------------------------------------------------

def dumps(bundle):
    """The exporter's layout (shardcheck_export/writer.py, which needs only
    json; loaded by path so that the package, which imports torch, is not)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shardcheck_export",
                        "writer.py")
    if os.path.isfile(path):
        spec = importlib.util.spec_from_file_location("_sc_writer", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.dumps(bundle)
    return json.dumps(bundle, indent=1) + "\n"


def generator_main(generate, doc, default_out_dir):
    """The command line of a model folder's gen.py: `gen.py [--out-dir DIR]`
    runs GENERATE(DIR); a SymbolizeError is reported on stderr, exit 1."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out-dir", default=default_out_dir)
    args = ap.parse_args()
    try:
        generate(args.out_dir)
    except SymbolizeError as e:
        print(f"gen.py: {e}", file=sys.stderr)
        return 1
    return 0


def _parse_point(text):
    vals, _, path = text.partition(":")
    if not path:
        raise SymbolizeError(f"{text!r}: expected VALUES:FILE, e.g. B=2,S=8:a.json")
    point = {}
    for kv in vals.split(","):
        k, _, v = kv.partition("=")
        point[k.strip()] = int(v)
    return point, path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="symbolize", description=__doc__.split("\n\n")[0])
    ap.add_argument("exports", nargs="+", help="VALUES:FILE, e.g. B=2,S=8:a.json")
    ap.add_argument("--symbol", action="append", default=[],
                    help="NAME or NAME:MIN or NAME:MIN:MAX (repeatable, in order)")
    ap.add_argument("--assume", action="append", default=[])
    ap.add_argument("--name")
    ap.add_argument("--description")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    symbols = {}
    for s in args.symbol:
        parts = s.split(":")
        spec = {}
        if len(parts) > 1 and parts[1]:
            spec["min"] = int(parts[1])
        if len(parts) > 2 and parts[2]:
            spec["max"] = int(parts[2])
        symbols[parts[0]] = spec
    try:
        exports = []
        for e in args.exports:
            point, path = _parse_point(e)
            with open(path) as f:
                exports.append((point, json.load(f)))
        bundle, n = symbolize(exports, symbols, args.assume, args.name, args.description)
    except (SymbolizeError, OSError, ValueError) as exc:
        print(f"symbolize: {exc}", file=sys.stderr)
        return 1
    with open(args.output, "w") as f:
        f.write(dumps(bundle))
    print(f"wrote {args.output} ({n} integers made symbolic)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
