#!/usr/bin/env python3
"""run-scale.py: check one SYNTHETIC GPT capture of tools/bench/scale-capture.py
end to end, or the generator's fidelity to the real dumps.

    run-scale.py SHARDCHECK SOURCE_ROOT check TP LAYERS [HEADS]
    run-scale.py SHARDCHECK SOURCE_ROOT reproduce
    run-scale.py SHARDCHECK SOURCE_ROOT refuse TP
    run-scale.py SHARDCHECK SOURCE_ROOT plant-layer TP LAYERS K NODE
    run-scale.py SHARDCHECK SOURCE_ROOT plant TP LAYERS NODE

check:     generate TP ranks and LAYERS layers into a temporary directory,
           convert the sheet with tools/fx2bundle.py (--sheet-only, --root
           that directory), run `SHARDCHECK check --quiet --format json`;
           pass iff exit 0, verdict "refines", every expectation found, and
           the output relation of each expect_output_relation tensor holds
           exactly the sheet's expressions (one per rank: r0 .. r{TP-1}).
           HEADS: the capture widened to HEADS attention heads
           (scale-capture.py --heads; e.g. TP 16 needs a multiple of 16).
reproduce: at TP=2 and 1 layer the generator must give back the real dumps
           (spec, r0, r1) byte for byte, and the sheet's relations must be
           the real sheet's.
plant:     as check, with a bug planted in rank 1: its sequence-parallel
           scatter keeps rank 0's chunk of the sequence (slice bounds of
           rank 0), so the ranks' chunks no longer tile the sequence; the
           check must fail with kind "unmapped" at spec node NODE (the first
           spec node that needs the chunks).  Shows the synthetic checks are
           not vacuous at that degree.
plant-layer: as plant, the bug in one late layer only: rank 1's K-th
           attention scores (aten.baddbmm) scaled by twice the alpha; the
           check must fail at spec node NODE (that layer's baddbmm) both
           with layer memoization and with --no-memo (a layer carried from
           an earlier one must not hide a bug of its own).
refuse:    a degree that does not divide the model's split sizes must be
           refused: exit 2, "does not divide" on stderr, nothing written.

The temporary directory is deleted afterwards: neither the data nor files
made from it enter the tree.  The data is $SC_REAL_GRAPHS, else
../shared/real-graphs next to the source root; without it: exit 77.
Exit 0 pass, 1 fail (reason on stdout), 77 skipped.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

SPEC = "entangle-data/gpt/paral1_layer1/fw.g0.r0.py"
RANKS = ["entangle-data/gpt/paral2_layer1/fw.g0.r0.py",
         "entangle-data/gpt/paral2_layer1/fw.g0.r1.py"]
SHEET = "relations/gpt-paral2_layer1.json"


def real_graphs(root):
    d = os.environ.get("SC_REAL_GRAPHS") or os.path.join(root, "..", "shared", "real-graphs")
    need = [SHEET, SPEC] + RANKS
    return d if all(os.path.isfile(os.path.join(d, x)) for x in need) else None


def generate(root, rg, tp, layers, out, heads=None):
    return subprocess.run([sys.executable, os.path.join(root, "tools", "bench", "scale-capture.py"),
                           "--real-graphs", rg, "--tp", str(tp), "--layers", str(layers),
                           "-o", out] + (["--heads", str(heads)] if heads else []),
                          capture_output=True, text=True, timeout=300)


SP_SLICE = re.compile(r"aten\.slice\.Tensor\((\w+), 0, (\d+), (\d+)\)")


def plant_bug(gen):
    """Rank 1's sequence-parallel slice takes rank 0's bounds; True if done."""
    path = os.path.join(gen, "r1.py")
    with open(path) as f:
        text = f.read()
    hits = [m for m in SP_SLICE.finditer(text) if int(m.group(2)) > 0]
    if len(hits) != 1:
        return False
    m = hits[0]
    share = int(m.group(3)) - int(m.group(2))
    text = text[:m.start()] + f"aten.slice.Tensor({m.group(1)}, 0, 0, {share})" + text[m.end():]
    with open(path, "w") as f:
        f.write(text)
    return True


BADDBMM_ALPHA = re.compile(r"(aten\.baddbmm\.default\([^)]*alpha = )([0-9.e-]+)\)")


def plant_layer_bug(gen, k):
    """Rank 1's K-th baddbmm (layer K's attention scores) gets twice its
    alpha; True if done."""
    path = os.path.join(gen, "r1.py")
    with open(path) as f:
        text = f.read()
    hits = list(BADDBMM_ALPHA.finditer(text))
    if len(hits) < k:
        return False
    m = hits[k - 1]
    text = text[:m.start()] + f"{m.group(1)}{2 * float(m.group(2))})" + text[m.end():]
    with open(path, "w") as f:
        f.write(text)
    return True


def check(exe, root, rg, tp, layers, planted=None, layer_bug=None, extra=(), heads=None):
    with tempfile.TemporaryDirectory(prefix="sc-scale-") as tmp:
        gen = os.path.join(tmp, "gen")
        g = generate(root, rg, tp, layers, gen, heads)
        if g.returncode != 0:
            print(f"FAIL: scale-capture exited {g.returncode}: {g.stderr.strip()}")
            return 1
        if planted is not None and layer_bug is None and not plant_bug(gen):
            print("FAIL: cannot find rank 1's sequence-parallel slice to plant the bug")
            return 1
        if layer_bug is not None and not plant_layer_bug(gen, layer_bug):
            print(f"FAIL: rank 1 has fewer than {layer_bug} baddbmm nodes to plant the bug")
            return 1
        with open(os.path.join(gen, "sheet.json")) as f:
            sheet = json.load(f)
        if sheet.get("impl") != [f"r{k}.py" for k in range(tp)] or sheet.get("spec") != ["spec.py"]:
            print(f"FAIL: the sheet lists {sheet.get('spec')} / {sheet.get('impl')}")
            return 1
        if "SYNTHETIC" not in sheet.get("notes", ""):
            print("FAIL: the sheet's notes must say the capture is synthetic")
            return 1
        bundle = os.path.join(tmp, "bundle.json")
        c = subprocess.run([sys.executable, os.path.join(root, "tools", "fx2bundle.py"),
                            "--sheet-only", os.path.join(gen, "sheet.json"), "--root", gen,
                            "-o", bundle], capture_output=True, text=True, timeout=300)
        if c.returncode != 0:
            print(f"FAIL: fx2bundle exited {c.returncode}: {c.stderr.strip()}")
            return 1
        r = subprocess.run([exe, "check", "--quiet", "--format", "json", *extra, bundle],
                           capture_output=True, text=True, timeout=550)
    print(f"# TP={tp} layers={layers}: shardcheck exit {r.returncode}")
    # under the sanitizers a report on stderr is a failure whatever the exit
    for mark in ("runtime error:", "AddressSanitizer", "LeakSanitizer: detected"):
        if mark in r.stderr:
            print(f"FAIL: sanitizer report on stderr: {r.stderr.strip()[:3000]}")
            return 1
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        print(f"FAIL: no JSON report; stderr: {r.stderr.strip()[:2000]}")
        return 1
    print("# stats: " + json.dumps(rep.get("stats"))[:1000])
    fail = rep.get("failure") or {}
    if planted is not None:
        if r.returncode != 1 or rep.get("verdict") != "fails" or \
                fail.get("kind") != "unmapped" or fail.get("node") != planted:
            print(f"FAIL: planted bug: expected fails, unmapped at {planted}; got "
                  f"{rep.get('verdict')} (exit {r.returncode}), {fail.get('kind')} at "
                  f"{fail.get('node')} ({fail.get('op')})")
            return 1
        print(f"# planted bug caught: unmapped at {planted}")
        return 0
    if r.returncode != 0 or rep.get("verdict") != "refines":
        print(f"FAIL: expected refines, got {rep.get('verdict')} (exit {r.returncode}) at "
              f"{fail.get('node')} ({fail.get('op')}), kind {fail.get('kind')}: "
              + json.dumps(fail)[:3000])
        return 1
    exps = rep.get("expectations", [])
    want = sheet.get("expect_output_relation", {})
    if not want or len(exps) != sum(len(v) for v in want.values()) or \
            not all(e.get("found") for e in exps):
        print(f"FAIL: expectations not all found: {exps}")
        return 1
    for tensor, exprs in want.items():
        if exprs != [f"r{k}.{tensor}" for k in range(tp)]:
            print(f"FAIL: the sheet expects {tensor} = {exprs}, not one replica per rank")
            return 1
        got = (rep.get("output_relation") or {}).get(tensor, [])
        if sorted(got) != sorted(exprs):
            print(f"FAIL: output relation of {tensor} is {got}, expected {exprs}")
            return 1
    return 0


def reproduce(root, rg):
    with tempfile.TemporaryDirectory(prefix="sc-scale-") as tmp:
        g = generate(root, rg, 2, 1, tmp)
        if g.returncode != 0:
            print(f"FAIL: scale-capture exited {g.returncode}: {g.stderr.strip()}")
            return 1
        for mine, real in [("spec.py", SPEC), ("r0.py", RANKS[0]), ("r1.py", RANKS[1])]:
            with open(os.path.join(tmp, mine), "rb") as f:
                a = f.read()
            with open(os.path.join(rg, real), "rb") as f:
                b = f.read()
            if a != b:
                al, bl = a.split(b"\n"), b.split(b"\n")
                i = next((i for i, (x, y) in enumerate(zip(al, bl)) if x != y), min(len(al), len(bl)))
                print(f"FAIL: {mine} differs from {real} at line {i + 1}:\n  "
                      f"{al[i][:200] if i < len(al) else b'<end>'}\n  "
                      f"{bl[i][:200] if i < len(bl) else b'<end>'}")
                return 1
        with open(os.path.join(tmp, "sheet.json")) as f:
            mine = json.load(f)
        with open(os.path.join(rg, SHEET)) as f:
            real = json.load(f)
        for key in ["input_relation", "input_roles", "input_shapes", "groups", "spec_groups",
                    "check_outputs", "expect_output_relation", "expected_verdict",
                    "lift_fresh_copy_constants"]:
            if mine.get(key) != real.get(key):
                print(f"FAIL: sheet key {key}: {mine.get(key)} != {real.get(key)}")
                return 1
    print("# TP=2, 1 layer: spec.py, r0.py, r1.py identical to the real dumps")
    return 0


def refuse(root, rg, tp):
    with tempfile.TemporaryDirectory(prefix="sc-scale-") as tmp:
        out = os.path.join(tmp, "out")
        g = generate(root, rg, tp, 1, out)
        if g.returncode != 2 or "does not divide" not in g.stderr or "Traceback" in g.stderr:
            print(f"FAIL: TP={tp}: expected exit 2 and 'does not divide', got exit "
                  f"{g.returncode}: {g.stderr.strip()[:500]}")
            return 1
        if os.path.exists(out):
            print(f"FAIL: TP={tp} was refused but files were written")
            return 1
    print(f"# TP={tp} refused: {g.stderr.strip()}")
    return 0


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    exe, root, mode = argv[1], argv[2], argv[3]
    rg = real_graphs(root)
    if rg is None:
        print("SKIP: real graphs (GPT paral1/paral2 dumps) not found (set SC_REAL_GRAPHS)")
        return 77
    try:
        if mode == "check" and len(argv) in (6, 7):
            return check(exe, root, rg, int(argv[4]), int(argv[5]),
                         heads=int(argv[6]) if len(argv) == 7 else None)
        if mode == "plant" and len(argv) == 7:
            return check(exe, root, rg, int(argv[4]), int(argv[5]), planted=argv[6])
        if mode == "plant-layer" and len(argv) == 8:
            args = (exe, root, rg, int(argv[4]), int(argv[5]))
            return check(*args, planted=argv[7], layer_bug=int(argv[6])) or \
                check(*args, planted=argv[7], layer_bug=int(argv[6]), extra=("--no-memo",))
        if mode == "reproduce" and len(argv) == 4:
            return reproduce(root, rg)
        if mode == "refuse" and len(argv) == 5:
            return refuse(root, rg, int(argv[4]))
    except subprocess.TimeoutExpired as e:
        print(f"FAIL: timed out: {e}")
        return 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
