#!/usr/bin/python3
"""fuzz-readers.py — mutation fuzzing of the Python readers (issue 19).

usage: fuzz-readers.py SRCDIR [SECONDS] [--seed N]

Two readers of text that comes from outside:
  fx2bundle   tools/fx2bundle.py reads printed TorchDynamo dumps (one per
              rank) and a relation sheet (JSON).  Seeds: a two-rank MLP
              with an all_reduce and a reshape, and its sheet.  Each run
              mutates one of the three files (bit flips, interesting tokens
              inserted, lines deleted, duplicated or swapped, truncation)
              and converts in-process: the only allowed outcomes are a
              bundle (exit 0) or an input error (exit 2, "fx2bundle: ..."
              on stderr); an internal error (exit 3) or an exception is a
              finding.
  export-expr the exporter's relation-expression parser
              (tools/export/shardcheck_export/expr.py, no torch needed):
              mutated expressions either parse, and then their printed form
              parses back to the same printed form, or raise ExprError.

Runs SECONDS (default 20) split between the two, seeded (default: 1).
Findings are written to $FUZZ_WORK/py-findings (default a temporary
directory) and make the exit code 1.  Executions are printed per reader.
"""
import contextlib
import io
import os
import random
import sys
import tempfile
import time

HEAD = '''import torch
from torch import device
f32: type
Sym: type


# Graph[rank={rank}](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[8, {n}]"):
'''

SPEC_BODY = '''        # File: /m/model.py:41 in forward, code: y = x @ w
        mm: "f32[4, 16]" = torch.ops.aten.mm.default(x, w);  x = w = None
        relu: "f32[4, 16]" = torch.ops.aten.relu.default(mm);  mm = None
        view: "f32[64]" = torch.ops.aten.view.default(relu, [64]);  relu = None
        return [view]
'''

IMPL_BODY = '''        # File: /m/model.py:41 in forward, code: y = x @ w
        mm: "f32[4, 8]" = torch.ops.aten.mm.default(x, w);  x = w = None
        relu: "f32[4, 8]" = torch.ops.aten.relu.default(mm);  mm = None
        all_gather_into_tensor: "f32[8, 8]" = torch.ops._c10d_functional.all_gather_into_tensor.default(relu, 2, '0');  relu = None
        wait_tensor: "f32[8, 8]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None
        all_reduce: "f32[8, 8]" = torch.ops._c10d_functional.all_reduce.default(wait_tensor, 'sum', '0')
        wait_tensor_1: "f32[8, 8]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
        return [wait_tensor_1]
'''

SHEET = '''{"case": "fuzz", "groups": {"0": [0, 1]},
 "input_relation": {"x": ["r0.x", "r1.x"], "w": ["cat(r0.w, r1.w, dim=1)"]},
 "check_outputs": ["view"]}
'''

TOKENS = ["(", ")", "[", "]", ":", '"', "'", "=", ",", "\n", " ", "None", "-1", "0",
          "99999999999999999999", "torch.ops.aten.", "f32[", "f16[", "Sym(s0)", "#", "\\",
          "{", "}", "r0.", "r1.", "cat(", "dim=", "1e308", "nan", "inf", ";", "= None",
          "torch.ops._c10d_functional.", "def forward(self", "\x00", "\u00e9", "    "]

EXPRS = ["cat(x_0, x_1, dim=0)", "sum(r0.a, r1.a)", "slice(x, 1, 0, 4)",
         "transpose(cat(a, b, dim=1), 0, 1)", "view(x, [4, -1])", "x", "permute(x, [1, 0])"]


def mutate(rng, text):
    b = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        if not b:
            b = list(rng.choice(TOKENS))
            continue
        i = rng.randrange(len(b) + 1)
        if op == 0 and i < len(b):
            b[i] = chr(ord(b[i]) ^ (1 << rng.randrange(7)))
        elif op == 1:
            b[i:i] = list(rng.choice(TOKENS))
        elif op == 2:
            j = min(len(b), i + rng.randint(1, 40))
            del b[i:j]
        elif op == 3:
            del b[i:]
        else:
            lines = "".join(b).split("\n")
            k = rng.randrange(len(lines))
            if op == 4:
                del lines[k]
            elif op == 5:
                lines.insert(k, lines[rng.randrange(len(lines))])
            else:
                m = rng.randrange(len(lines))
                lines[k], lines[m] = lines[m], lines[k]
            b = list("\n".join(lines))
    return "".join(b)


def save(finddir, name, files):
    os.makedirs(finddir, exist_ok=True)
    d = tempfile.mkdtemp(prefix=name + "-", dir=finddir)
    for fname, text in files.items():
        with open(os.path.join(d, fname), "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
    return d


def fuzz_fx2bundle(src, rng, deadline, tmp, finddir):
    sys.path.insert(0, os.path.join(src, "tools"))
    import fx2bundle
    seeds = {"spec.py": HEAD.format(rank=0, n=16) + SPEC_BODY,
             "r0.py": HEAD.format(rank=0, n=8) + IMPL_BODY,
             "r1.py": HEAD.format(rank=1, n=8) + IMPL_BODY,
             "sheet.json": SHEET}
    execs, findings, ok = 0, 0, 0
    while time.monotonic() < deadline:
        files = dict(seeds)
        victim = rng.choice(sorted(files))
        files[victim] = mutate(rng, files[victim])
        for fname, text in files.items():
            with open(os.path.join(tmp, fname), "w", encoding="utf-8", errors="surrogatepass") as f:
                f.write(text)
        args = ["--spec", os.path.join(tmp, "spec.py"), "--impl", os.path.join(tmp, "r0.py"),
                os.path.join(tmp, "r1.py"), "--relation", os.path.join(tmp, "sheet.json"),
                "-o", os.path.join(tmp, "out.json")]
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = fx2bundle.main(args)
        except SystemExit as e:
            rc = e.code
        except BaseException as e:  # noqa: BLE001 - any escape is a finding
            rc = f"exception {type(e).__name__}: {e}"
        execs += 1
        if rc == 0:
            ok += 1
        elif rc != 2 or not err.getvalue().startswith("fx2bundle: "):
            findings += 1
            if findings <= 5:
                d = save(finddir, "fx2bundle", files)
                print(f"fx2bundle finding: rc={rc!r} {err.getvalue()[:300]!r} -> {d}")
    return execs, findings, ok


# Findings, fixed: each must be a clean ExprError (an IndexError escaped).
EXPR_REGRESSIONS = ["cat(", "sum(r0.a,", "view(x, ", "transpose(cat(a, b, dim=1),", "permute(\n"]


def load_expr_module(src):
    """expr.py alone: the package's __init__ imports torch, the parser does not."""
    import importlib.util
    path = os.path.join(src, "tools", "export", "shardcheck_export", "expr.py")
    spec = importlib.util.spec_from_file_location("sc_export_expr", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fuzz_expr(src, rng, secs, finddir):
    ex = load_expr_module(src)
    for text in EXPR_REGRESSIONS:
        try:
            ex.parse_expr(text)
            raise AssertionError(f"{text!r} parsed")
        except ex.ExprError:
            pass
    deadline = time.monotonic() + secs
    execs, findings, ok = 0, 0, 0
    while time.monotonic() < deadline:
        text = mutate(rng, rng.choice(EXPRS))
        execs += 1
        try:
            e = ex.parse_expr(text)
        except ex.ExprError:
            continue
        except RecursionError:
            continue
        except BaseException as e2:  # noqa: BLE001
            findings += 1
            if findings <= 5:
                print(f"export-expr finding: {type(e2).__name__}: {e2} on {text!r} -> "
                      f"{save(finddir, 'expr', {'input.txt': text})}")
            continue
        ok += 1
        try:
            printed = ex.format_expr(e)
            again = ex.format_expr(ex.parse_expr(printed))
            if again != printed:
                raise AssertionError(f"round trip: {printed!r} -> {again!r}")
        except ex.ExprError:
            pass  # a value the printer refuses (e.g. a boolean): a clean error
        except BaseException as e2:  # noqa: BLE001
            findings += 1
            if findings <= 5:
                print(f"export-expr finding: {type(e2).__name__}: {e2} on {text!r} -> "
                      f"{save(finddir, 'expr', {'input.txt': text})}")
    return execs, findings, ok


def main():
    src = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 and not sys.argv[2].startswith("--") else 20.0
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    rng = random.Random(seed)
    sys.setrecursionlimit(2000)
    work = os.environ.get("FUZZ_WORK")
    with tempfile.TemporaryDirectory() as tmp:
        finddir = os.path.join(work, "py-findings") if work else os.path.join(tmp, "findings")
        t0 = time.monotonic()
        e1, f1, ok1 = fuzz_fx2bundle(src, rng, t0 + secs * 0.7, tmp, finddir)
        e2, f2, ok2 = fuzz_expr(src, rng, secs * 0.3, finddir)
    print(f"fx2bundle: {e1} executions ({ok1} converted), {f1} findings")
    print(f"export-expr: {e2} executions ({ok2} parsed), {f2} findings")
    if e1 == 0 or ok1 == 0 or ok2 == 0:
        print("FAIL: the seeds do not convert/parse: the fuzzer tests nothing")
        return 1
    return 1 if f1 + f2 else 0


if __name__ == "__main__":
    sys.exit(main())
