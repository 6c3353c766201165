#!/usr/bin/env python3
"""run_capture.py CASE -- run one case of tests/capture through
tools/shardcheck-capture and judge its exit code and output.

The cases (CASES below) run the example programs of models/capture-* at
the degrees and with the planted bugs the suite pins, and the small
programs of tests/capture/programs/ that exercise the command's errors.
Each case gives the expected exit code and phrases the output must (and
must not) contain.  Needs torch: exits 77 (skipped) without it, or 1 when
the environment says CI=true (a CI machine must have python3-torch).
SHARDCHECK names the shardcheck binary for --check."""
import os
import subprocess
import sys
import tempfile

ROOT = os.environ.get("SC_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CMD = os.path.join(ROOT, "tools", "shardcheck-capture")
PROG = os.path.join(ROOT, "tests", "capture", "programs")


def model(name, script):
    return os.path.join(ROOT, "models", name, script)


TP, SP = model("capture-tp-block", "tp_block.py"), model("capture-sp-block", "sp_block.py")
DDP, PIPE = model("capture-ddp", "ddp.py"), model("capture-pipeline", "pipeline.py")

# name: (script, nproc, BUG, extra args, exit code, must contain, must not contain
#        [, more environment variables])
CASES = {
    "tp-block-tp2": (TP, 2, "", ["--check"], 0,
                     ["tp_block: refines", "expectations: 11 of 11 found",
                      "fc1.weight: cat(r0.fc1.weight, r1.fc1.weight, dim=0)   (split evenly",
                      "fc2.weight: cat(r0.fc2.weight, r1.fc2.weight, dim=1)"], ["DIFFER"]),
    "tp-block-tp4": (TP, 4, "", ["--check"], 0,
                     ["tp_block: refines",
                      "cat(r0.fc1.weight, r1.fc1.weight, r2.fc1.weight, r3.fc1.weight, dim=0)"],
                     ["DIFFER"]),
    "tp-block-no-allreduce": (TP, 2, "no-allreduce", ["--check"], 1,
                              ["tp_block: fails", "(aten.add.Tensor) at tp_block.py:77",
                               "values DIFFER"], ["refines"]),
    "tp-block-shard-offset": (TP, 2, "shard-offset", ["--check"], 1,
                              ["tp_block: fails", "(aten.addmm.default) at tp_block.py:65",
                               "fc1.weight: cat(r1.fc1.weight, r0.fc1.weight, dim=0)"],
                              ["refines"]),
    "tp-block-tp4-shard-offset": (TP, 4, "shard-offset", ["--check"], 1,
                                  ["tp_block: fails", "(aten.addmm.default) at tp_block.py:65"],
                                  ["refines"]),
    "sp-block-tp2": (SP, 2, "", ["--check"], 0, ["sp_block: refines"], ["DIFFER"]),
    "sp-block-tp4": (SP, 4, "", ["--check"], 0, ["sp_block: refines"], ["DIFFER"]),
    "sp-block-no-ln-grad-allreduce": (SP, 2, "no-ln-grad-allreduce", ["--check"], 1,
                                      ["sp_block: fails", "MISSING  grad.ln.weight",
                                       "grad.ln.weight = sum(r0.grad.ln.weight, "
                                       "r1.grad.ln.weight)"], ["refines"]),
    "sp-block-seq-offset": (SP, 2, "seq-offset", ["--check"], 1, ["sp_block: fails"],
                            ["refines"]),
    # The DDP step refines: the 1/n of each rank's mean loss is carried
    # through the backward to the gradient average (lemmas/accum.lemma,
    # lemmas/scale.lemma); the planted bug's values differ.
    "ddp-2": (DDP, 2, "", ["--check"], 0, ["ddp: refines"], ["DIFFER", "error"]),
    "ddp-2-no-average": (DDP, 2, "no-average", ["--check"], 1,
                         ["ddp: fails", "values DIFFER"], ["refines"]),
    "pipeline-2": (PIPE, 2, "", ["--check"], 0,
                   ["pipeline: refines", "stage0.weight: r0.stage0.weight",
                    "stage1.weight: r1.stage1.weight"], ["DIFFER"]),
    "pipeline-2-stale-activation": (PIPE, 2, "stale-activation", ["--check"], 1,
                                    ["pipeline: fails", "(aten.addmm.default) at pipeline.py:"],
                                    ["refines"]),
    # Four micro-batches; each bug fails at the spec node where the values
    # first differ: micro-batch 0's loss (met with another micro-batch's
    # targets), or micro-batch 0's loss divided by the micro-batch count.
    "pipeline-4": (PIPE, 2, "", ["--check"], 0,
                   ["pipeline: refines", "stage0.weight: r0.stage0.weight",
                    "stage1.weight: r1.stage1.weight"], ["DIFFER"], {"MICRO": "4"}),
    "pipeline-4-microbatch-order": (PIPE, 2, "microbatch-order", ["--check"], 1,
                                    ["pipeline: fails", "first unmapped spec node: mse_loss_1 "
                                     "(aten.mse_loss.default) at pipeline.py:"],
                                    ["refines"], {"MICRO": "4"}),
    "pipeline-4-no-scale": (PIPE, 2, "no-scale", ["--check"], 1,
                            ["pipeline: fails", "first unmapped spec node: div_1 "
                             "(aten.div.Scalar) at pipeline.py:"],
                            ["refines"], {"MICRO": "4"}),
    "error-crash": (os.path.join(PROG, "crash.py"), 2, "", [], 2,
                    ["2-process run: rank 1 exited with status 1",
                     "RuntimeError: planted crash on rank 1"], []),
    "abort-after-capture": (os.path.join(PROG, "abort-after.py"), 2, "", [], 0,
                            ["2-process run: rank 1 exited with status -6 after its capture "
                             "was written"], []),
    "error-hang": (os.path.join(PROG, "hang.py"), 2, "", ["--timeout", "90"], 3,
                   ["2-process run: ranks 0, 1 did not finish within 90 s"], []),
    "error-mismatch": (os.path.join(PROG, "mismatch.py"), 2, "", [], 2,
                       ["structure: rank 0 has input 0.weight that the 1-process run does "
                        "not have"], []),
    "error-unrelated": (os.path.join(PROG, "unrelated.py"), 2, "", [], 2,
                        ["input noise [4]: its values match no layout",
                         "give its relation with --relation FILE"], []),
    "relation-given": (os.path.join(PROG, "unrelated.py"), 2, "",
                       ["--relation", os.path.join(PROG, "unrelated-relation.json")], 0,
                       ["input  noise: r0.noise   (given, --relation)"], []),
}


def main():
    try:
        import torch  # noqa: F401
    except ImportError:
        ci = os.environ.get("CI", "").lower() == "true"
        print(f"{'FAIL' if ci else 'SKIP'}: torch is not importable by {sys.executable} "
              f"(Debian: apt-get install python3-torch; tools/setup.sh installs it)")
        return 1 if ci else 77
    case = sys.argv[1]
    if case == "outside":
        env = dict(os.environ)
        env.pop("SHARDCHECK_CAPTURE_DIR", None)
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "tools", "capture"),
                                             os.path.join(ROOT, "tools", "export")])
        p = subprocess.run([sys.executable, os.path.join(PROG, "outside.py")], env=env,
                           capture_output=True, text=True, timeout=120)
        print(p.stdout, p.stderr)
        return 0 if p.returncode == 0 and "result 42 1" in p.stdout else 1
    script, nproc, bug, extra, code, must, must_not = CASES[case][:7]
    env = dict(os.environ)
    env.pop("BUG", None)
    env.pop("MICRO", None)
    env.update(CASES[case][7] if len(CASES[case]) > 7 else {})
    if bug:
        env["BUG"] = bug
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bundle.json")
        cmd = [sys.executable, CMD, "--nproc", str(nproc), "-o", out] + extra + [script]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        text = p.stdout + p.stderr
        print("$ " + " ".join(cmd) + (f"   (BUG={bug})" if bug else ""))
        print(text)
        ok = True
        if code is not None and p.returncode != code:
            print(f"FAIL: exit {p.returncode}, expected {code}")
            ok = False
        if code is None and p.returncode not in (0, 1):
            print(f"FAIL: exit {p.returncode}, expected a verdict (0 or 1)")
            ok = False
        for m in must:
            if m not in text:
                print(f"FAIL: output lacks {m!r}")
                ok = False
        for m in must_not:
            if m in text:
                print(f"FAIL: output contains {m!r}")
                ok = False
        if code == 0 and not os.path.exists(out):
            print("FAIL: no bundle written")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
