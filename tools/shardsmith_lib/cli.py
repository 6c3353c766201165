"""cli.py -- tools/shardsmith's command line.

  shardsmith --seeds A:B --out DIR          write bundles and DIR/manifest.json
  shardsmith --check SHARDCHECK --seeds A:B [--out DIR]
                                            generate, check, print one line
                                            per miss, then the summary line

Exit status: 0; 1 when a check made a false proof (a mutant proved) or the
generator's own check failed; 2 on a usage error.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

from .generate import make_case


def parse_seeds(text):
    try:
        a, b = text.split(":")
        a, b = int(a), int(b)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds {text!r}: expected A:B (integers, A < B)")
    if a < 0 or b <= a:
        raise argparse.ArgumentTypeError(f"--seeds {text!r}: expected 0 <= A < B")
    return a, b


def run_check(shardcheck, path, timeout):
    t0 = time.time()
    try:
        p = subprocess.run([shardcheck, "check", "--format", "json", path],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"verdict": "timeout", "seconds": timeout}
    res = {"exit": p.returncode, "seconds": round(time.time() - t0, 3)}
    try:
        out = json.loads(p.stdout)
    except ValueError:
        res["verdict"] = "error"
        res["stderr"] = (p.stderr or p.stdout).strip()[:300]
        return res
    res["verdict"] = out.get("verdict")
    f = out.get("failure") or {}
    res["kind"] = f.get("kind")
    res["node"] = f.get("node")
    res["op"] = f.get("op")
    res["stopped_at"] = f.get("stopped_at")
    res["tensor"] = f.get("tensor")
    if res["verdict"] == "error":
        res["stderr"] = (p.stderr or "").strip()[:300]
    return res


def _stop_node(res, bundle):
    """The spec node where the check stopped: the failure's node, or the
    producer of the output whose expected relation was not found."""
    if res.get("node"):
        return res["node"]
    if res.get("tensor"):
        for e in bundle["spec"]["nodes"]:
            if any(o is not None and o["name"] == res["tensor"] for o in e["outputs"]):
                return e["name"]
        return res["tensor"]  # an output no spec node produces (a spec input)
    return None


def at_first_divergence(res, expected, unmatched_in_correct, bundle):
    """The check stopped where the values say it should: at the first
    diverging node; or, when the failure's node is one that has no clean
    expression even in the correct implementation (a node the checker may
    defer), where the walk finally stopped (stopped_at)."""
    if res.get("verdict") != "fails" or expected is None:
        return False
    if _stop_node(res, bundle) == expected:
        return True
    return res.get("node") in unmatched_in_correct and res.get("stopped_at") == expected


def retruth_dirs(dirs):
    from .generate import retruth
    for d in dirs:
        path = os.path.join(d, "manifest.jsonl")
        with open(path) as f:
            entries = [json.loads(line) for line in f if line.strip()]
        for e in entries:
            files = e.get("files", {})
            if "mutant" not in files:
                continue
            with open(os.path.join(d, files["correct"])) as f:
                correct = json.load(f)
            with open(os.path.join(d, files["mutant"])) as f:
                mutant = json.load(f)
            retruth(e, correct, mutant)
        with open(path + ".tmp", "w") as f:
            for e in entries:
                f.write(json.dumps(e) + "\n")
        os.replace(path + ".tmp", path)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="shardsmith", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=parse_seeds, help="A:B, seeds A..B-1")
    ap.add_argument("--retruth", nargs="+", metavar="DIR",
                    help="recompute the ground truth of finished runs from their bundles")
    ap.add_argument("--summarize", nargs="+", metavar="DIR",
                    help="print the figures of finished runs (their --out DIRs)")
    ap.add_argument("--out", help="directory for the bundles and manifest.json")
    ap.add_argument("--check", metavar="SHARDCHECK", help="check every bundle with this CLI")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per check")
    ap.add_argument("--no-mutants", action="store_true", help="correct programs only")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.retruth:
        return retruth_dirs(args.retruth)
    if args.summarize:
        from .summarize import report
        print(report(args.summarize))
        return 0
    if args.seeds is None:
        ap.error("--seeds A:B is required")
    if not args.out and not args.check:
        ap.error("give --out DIR, --check SHARDCHECK, or both")
    out_dir = args.out
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="shardsmith-")
        out_dir = tmp.name
    os.makedirs(out_dir, exist_ok=True)
    a, b = args.seeds
    manifest = {"format": "shardsmith-manifest/1", "seeds": [a, b], "cases": []}
    n_correct = n_mut = proved = false_proofs = at_first = gen_errors = 0
    # one line per case as it is done, for long runs read before they end
    jsonl = open(os.path.join(out_dir, "manifest.jsonl"), "w")

    def record(entry):
        manifest["cases"].append(entry)
        jsonl.write(json.dumps(entry) + "\n")
        jsonl.flush()

    for seed in range(a, b):
        case = make_case(seed, not args.no_mutants)
        entry = case.summary()
        if case.error:
            gen_errors += 1
            print(f"seed {seed}: generator self-check FAILED: {case.error.splitlines()[0]}",
                  flush=True)
            record(entry)
            continue
        files = {}
        for kind, bun in (("correct", case.correct), ("mutant", case.mutant)):
            if bun is None:
                continue
            path = os.path.join(out_dir, f"seed-{seed:06d}-{kind}.json")
            with open(path, "w") as f:
                json.dump(bun, f, indent=1)
            files[kind] = path
        entry["files"] = {k: os.path.basename(v) for k, v in files.items()}
        fam = ",".join(sorted(set(case.families)))
        where = f"seed {seed} ({'fwd+bwd' if case.backward else 'fwd'}, mesh " \
                f"{'x'.join(map(str, case.mesh))}, {case.n_ops} ops: {fam})"
        n_correct += 1
        if case.mutant is not None:
            n_mut += 1
        if args.check:
            res = run_check(args.check, files["correct"], args.timeout)
            entry["check_correct"] = res
            if res["verdict"] == "refines":
                proved += 1
            else:
                print(f"miss {where} correct: {res['verdict']} at {res.get('node') or res.get('tensor')}"
                      f" ({res.get('op') or res.get('kind') or res.get('stderr', '')})", flush=True)
            if case.mutant is not None:
                res = run_check(args.check, files["mutant"], args.timeout)
                entry["check_mutant"] = res
                mname = f"{case.mutation[1]} at {case.mutation[3]}"
                if res["verdict"] == "refines":
                    false_proofs += 1
                    print(f"FALSE PROOF {where} mutant {mname}: {files['mutant']}", flush=True)
                elif at_first_divergence(res, case.expected_node, case.unmatched_correct,
                                         case.mutant):
                    at_first += 1
                else:
                    print(f"miss {where} mutant {mname}: {res['verdict']} at "
                          f"{_stop_node(res, case.mutant)}, first diverging node "
                          f"{case.expected_node} ({case.expected_how})", flush=True)
        entry["seconds"] = round(case.seconds + sum(
            entry.get(k, {}).get("seconds", 0) for k in ("check_correct", "check_mutant")), 3)
        record(entry)
    jsonl.close()
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    if args.check:
        total = n_correct + n_mut
        print(f"{total} programs ({n_correct} correct, {n_mut} mutants): proved "
              f"{proved}/{n_correct}, false proofs {false_proofs}, mutants at the first "
              f"diverging node {at_first}/{n_mut}")
    elif not args.quiet:
        print(f"wrote {n_correct} correct and {n_mut} mutant bundles to {out_dir}"
              f" ({gen_errors} generator errors)")
    if tmp is not None:
        tmp.cleanup()
    return 1 if false_proofs or gen_errors else 0
