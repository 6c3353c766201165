#!/usr/bin/env python3
"""Unit tests of tools/capture/shardcheck/relation.py: how a one-process
tensor lies in the ranks' tensors, read from values.  Needs torch (skipped
with 77 without it, failed under CI=true)."""
import os
import sys

ROOT = os.environ.get("SC_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "tools", "capture"), os.path.join(ROOT, "tools", "export")]

try:
    import torch
except ImportError:
    ci = os.environ.get("CI", "").lower() == "true"
    print(f"{'FAIL' if ci else 'SKIP'}: torch is not importable by {sys.executable}")
    sys.exit(1 if ci else 77)

from shardcheck import relation  # noqa: E402
from shardcheck_export import expr as rexpr  # noqa: E402

failures = []


def check(label, cond):
    print(("ok   " if cond else "FAIL ") + label)
    if not cond:
        failures.append(label)


def holds(found, whole, pieces, name):
    env = {f"r{k}.{name}": v for k, v in pieces.items()}
    return all(torch.equal(rexpr.evaluate(e, env), whole) for e in found.exprs)


g = torch.Generator().manual_seed(0)
w = torch.randn(12, 6, generator=g)

f = relation.find(w, {0: w.clone(), 1: w.clone()}, "w")
check("replicated", f.kind == "replicated" and f.exprs == ["r0.w", "r1.w"])

p = {k: c.clone() for k, c in enumerate(w.chunk(3, 0))}
f = relation.find(w, p, "w")
check("even split dim 0", f.exprs == ["cat(r0.w, r1.w, r2.w, dim=0)"] and holds(f, w, p, "w"))

p = {k: c.clone() for k, c in enumerate(w.chunk(2, 1))}
f = relation.find(w, p, "w")
check("even split dim 1", f.exprs == ["cat(r0.w, r1.w, dim=1)"] and "evenly" in f.kind)

p = {0: w[:5].clone(), 1: w[5:].clone()}
f = relation.find(w, p, "w")
check("uneven split", f.exprs == ["cat(r0.w, r1.w, dim=0)"] and "unevenly" in f.kind)

p = {0: w[6:].clone(), 1: w[:6].clone()}
f = relation.find(w, p, "w")
check("permuted split (reported as found)", f.exprs == ["cat(r1.w, r0.w, dim=0)"])

# fused blocks: [q; k; v] each split over 2 ranks, rank r holds [q_r; k_r; v_r]
q, k, v = w[:4], w[4:8], w[8:]
p = {r: torch.cat([t.chunk(2, 0)[r] for t in (q, k, v)]) for r in range(2)}
f = relation.find(w, p, "w")
check("fused blocks", f is not None and "fused" in f.kind and holds(f, w, p, "w"))

# data parallel x tensor parallel: ranks 0,1 and 2,3 each split the tensor
p = {0: w[:6].clone(), 1: w[6:].clone(), 2: w[:6].clone(), 3: w[6:].clone()}
f = relation.find(w, p, "w")
check("replicated split", f.exprs == ["cat(r0.w, r1.w, dim=0)", "cat(r2.w, r3.w, dim=0)"])

f = relation.find(w, {0: torch.randn(6, 6, generator=g), 1: torch.randn(6, 6, generator=g)},
                  "w")
check("unrelated -> None", f is None)

f = relation.find(w, {0: w[:6].clone()}, "w")
check("a missing piece -> None", f is None)

z = torch.zeros(8)
f = relation.find(z, {0: torch.zeros(4), 1: torch.zeros(4)}, "b")
check("repeated values: rank order, flagged", f.exprs == ["cat(r0.b, r1.b, dim=0)"] and
      f.ambiguous)

f = relation.find(w, {0: w + 1e-7}, "w", exact=True)
check("inputs compare exactly", f is None)
f = relation.find(w, {0: w + 1e-7}, "w", exact=False)
check("outputs compare within a tolerance", f is not None and f.exprs == ["r0.w"])

p = {0: w.clone(), 1: w + 1}
f = relation.find(w, p, "w")
check("some ranks hold an input whole", f.exprs == ["r0.w"])
f = relation.find(w, p, "w", exact=False, some=False)
check("an output wrong on one rank matches nothing", f is None)

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
