"""cli.py -- tools/shardsmith's command line.

  shardsmith --seeds A:B --out DIR          write bundles and DIR/manifest.jsonl
  shardsmith --check SHARDCHECK --seeds A:B [--out DIR] [--jobs N] [--cpu-limit S]
                                            generate, check, print one line
                                            per miss, then the summary line
  shardsmith --recheck DIR --check SHARDCHECK --out DIR2 [--jobs N]
                                            check DIR's bundles again (another
                                            binary), no generation
  shardsmith --summarize DIR...             the figures of finished runs

Runs are resumable: DIR/manifest.jsonl gets one line per seed as the seed is
done; a run given an --out that already holds some seeds of its range does
only the others (a stopped run loses at most the seeds in flight).  The
manifest is a record of finished seeds: a line that does not parse (the run
was killed while writing it) is dropped when the run resumes.  --jobs N
runs N seeds at a time in worker processes; a seed's program, bundles and
truth do not depend on N (each seed is made from its own seed alone).

Times in the manifest: "seconds" (wall) and "cpu_seconds" (user + sys of the
shardcheck process, from getrusage of the children, one child at a time per
worker) for each check; generate_seconds (wall) and generate_cpu_seconds
(this process's CPU) for generation, validation and ground truth.

Exit status: 0; 1 when a check made a false proof (a mutant proved) or the
generator's own check failed; 2 on a usage error.
"""

import argparse
import json
import os
import resource
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


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_check(shardcheck, path, timeout, cpu_limit=None):
    """Check one bundle; the result dict of the manifest.  The CPU time is
    the difference of RUSAGE_CHILDREN around the check: exact while this
    process runs one child at a time (each worker checks serially)."""
    t0, c0 = time.time(), _children_cpu()
    try:
        extra = [] if cpu_limit is None else ["--time-limit", f"{cpu_limit:g}"]
        p = subprocess.run([shardcheck, "check", "--format", "json"] + extra + [path],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"verdict": "timeout", "seconds": timeout,
                "cpu_seconds": round(_children_cpu() - c0, 3)}
    res = {"exit": p.returncode, "seconds": round(time.time() - t0, 3),
           "cpu_seconds": round(_children_cpu() - c0, 3)}
    try:
        out = json.loads(p.stdout)
    except ValueError:
        # exit 3 is a limit even when it came with no report on stdout (a
        # CPU budget passed in a step that does not check it says so on
        # stderr only)
        res["verdict"] = "limit" if p.returncode == 3 else "error"
        res["stderr"] = (p.stderr or p.stdout).strip()[:300]
        return res
    res["verdict"] = out.get("verdict")
    f = out.get("failure") or {}
    res["kind"] = f.get("kind")
    res["node"] = f.get("node")
    res["op"] = f.get("op")
    res["stopped_at"] = f.get("stopped_at")
    res["tensor"] = f.get("tensor")
    if f.get("limit"):
        res["limit"] = f["limit"]       # which limit, for verdict "limit"
    # the report's value diagnosis: the failure's node was only not proved
    # (its values agree with a clean expression) and the values first
    # differ at a later node of the deferred chain
    dg = f.get("diagnosis") or {}
    if dg.get("kind") == "values_differ" and dg.get("not_proved"):
        res["values_differ_at"] = dg.get("node")
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


def report_at_first_divergence(res, expected, unmatched_in_correct, bundle):
    """What the report tells the user: the walk's failure node, or the node
    where its value diagnosis finds the values first differ after a failure
    node that was only not proved (values_differ_at), is the first
    diverging node."""
    if at_first_divergence(res, expected, unmatched_in_correct, bundle):
        return True
    return (res.get("verdict") == "fails" and expected is not None and
            res.get("values_differ_at") == expected)


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



# the environment a check's verdict depends on, recorded with it
ENV = ("SC_LEMMA_DIR", "SC_TIME_LIMIT", "SC_NODE_LIMIT", "SC_ITER_LIMIT")


def _where(entry):
    fam = ",".join(sorted(set(entry.get("families") or [])))
    return (f"seed {entry['seed']} ({'fwd+bwd' if entry.get('backward') else 'fwd'}, mesh "
            f"{'x'.join(map(str, entry.get('mesh') or []))}, {entry.get('ops')} ops: {fam})")


def check_entry(entry, bundle_dir, shardcheck, timeout, cpu_limit=None, mutant=None):
    """Check the bundles an entry names (in bundle_dir) and record the
    results in it; the lines to print (misses, false proofs).  `mutant` is
    the mutant bundle when the caller has it (else it is read when needed)."""
    lines = []
    files = entry["files"]
    where = _where(entry)
    res = run_check(shardcheck, os.path.join(bundle_dir, files["correct"]), timeout, cpu_limit)
    entry["check_correct"] = res
    if res["verdict"] != "refines":
        lines.append(f"miss {where} correct: {res['verdict']} at "
                     f"{res.get('node') or res.get('tensor')} "
                     f"({res.get('op') or res.get('kind') or res.get('stderr', '')})")
    if "mutant" in files:
        path = os.path.join(bundle_dir, files["mutant"])
        res = run_check(shardcheck, path, timeout, cpu_limit)
        entry["check_mutant"] = res
        m = entry.get("mutation") or {}
        mname = f"{m.get('name')} at {m.get('step')}"
        if res["verdict"] == "refines":
            res["at_first_diverging_node"] = False
            lines.append(f"FALSE PROOF {where} mutant {mname}: {path}")
        else:
            if mutant is None:
                with open(path) as f:
                    mutant = json.load(f)
            exp = entry.get("first_diverging_node")
            at = at_first_divergence(res, exp, entry.get("unmatched_in_correct") or [], mutant)
            res["at_first_diverging_node"] = at
            if not at:
                lines.append(f"miss {where} mutant {mname}: {res['verdict']} at "
                             f"{_stop_node(res, mutant)}, first diverging node {exp} "
                             f"({entry.get('divergence')})")
    entry["seconds"] = round(entry.get("generate_seconds", 0) + sum(
        entry.get(k, {}).get("seconds", 0) for k in ("check_correct", "check_mutant")), 3)
    return lines


def do_seed(job):
    """One seed, start to end (a worker's task): generate, write the
    bundles, check them when asked.  Returns (entry, lines to print)."""
    seed, out_dir, shardcheck, timeout, cpu_limit, with_mutants = job
    c0 = time.process_time()
    case = make_case(seed, with_mutants)
    entry = case.summary()
    entry["generate_cpu_seconds"] = round(time.process_time() - c0, 3)
    if case.error:
        return entry, [f"seed {seed}: generator self-check FAILED: {case.error.splitlines()[0]}"]
    files = {}
    for kind, bun in (("correct", case.correct), ("mutant", case.mutant)):
        if bun is None:
            continue
        name = f"seed-{seed:06d}-{kind}.json"
        with open(os.path.join(out_dir, name) + ".tmp", "w") as f:
            json.dump(bun, f, indent=1)
        os.replace(os.path.join(out_dir, name) + ".tmp", os.path.join(out_dir, name))
        files[kind] = name
    entry["files"] = files
    lines = []
    if shardcheck:
        lines = check_entry(entry, out_dir, shardcheck, timeout, cpu_limit, case.mutant)
    else:
        entry["seconds"] = round(case.seconds, 3)
    return entry, lines


def do_recheck(job):
    """One recorded seed checked again from its bundles (a worker's task)."""
    entry, bundle_dir, shardcheck, timeout, cpu_limit = job
    if entry.get("error") or "files" not in entry:
        return entry, []
    return entry, check_entry(entry, bundle_dir, shardcheck, timeout, cpu_limit)


def read_manifest(path):
    """The entries of a manifest.jsonl (none when it does not exist); a line
    that does not parse is dropped and the file rewritten without it."""
    if not os.path.exists(path):
        return []
    entries, bad = [], 0
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            try:
                entries.append(json.loads(line))
            except ValueError:
                bad += 1
    if bad:
        with open(path + ".tmp", "w") as f:
            for e in entries:
                f.write(json.dumps(e) + "\n")
        os.replace(path + ".tmp", path)
    return entries


def _map(fn, jobs, n):
    """fn over jobs, results as they are done: in this process for n = 1,
    else in n forked worker processes (the parent has run no torch code,
    so forking it is safe)."""
    if n <= 1:
        for j in jobs:
            yield fn(j)
        return
    import multiprocessing
    with multiprocessing.get_context("fork").Pool(n) as pool:
        yield from pool.imap_unordered(fn, jobs, chunksize=1)


def _mutant_at(entry, bundle_dir):
    res = entry["check_mutant"]
    if "at_first_diverging_node" in res:
        return res["at_first_diverging_node"]
    with open(os.path.join(bundle_dir, entry["files"]["mutant"])) as f:
        mutant = json.load(f)
    return at_first_divergence(res, entry.get("first_diverging_node"),
                               entry.get("unmatched_in_correct") or [], mutant)


def figure_line(entries, out_dir):
    """The summary line over entries (each seed once, the last record)."""
    ok = [e for e in entries if not e.get("error") and "check_correct" in e]
    muts = [e for e in ok if "check_mutant" in e]
    proved = sum(1 for e in ok if e["check_correct"]["verdict"] == "refines")
    fp = sum(1 for e in muts if e["check_mutant"]["verdict"] == "refines")
    at = sum(1 for e in muts if e["check_mutant"]["verdict"] != "refines" and
             _mutant_at(e, e.get("bundle_dir") or out_dir))
    return (f"{len(ok) + len(muts)} programs ({len(ok)} correct, {len(muts)} mutants): proved "
            f"{proved}/{len(ok)}, false proofs {fp}, mutants at the first diverging node "
            f"{at}/{len(muts)}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="shardsmith", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=parse_seeds, help="A:B, seeds A..B-1")
    ap.add_argument("--retruth", nargs="+", metavar="DIR",
                    help="recompute the ground truth of finished runs from their bundles")
    ap.add_argument("--summarize", nargs="+", metavar="DIR",
                    help="print the figures of finished runs (their --out DIRs)")
    ap.add_argument("--recheck", metavar="DIR",
                    help="check the bundles of a finished run (DIR) again with --check, "
                         "results to --out (bundles stay in DIR); --seeds filters")
    ap.add_argument("--out", help="directory for the bundles and manifest.jsonl")
    ap.add_argument("--check", metavar="SHARDCHECK", help="check every bundle with this CLI")
    ap.add_argument("--jobs", type=int, default=1, help="seeds at a time (worker processes)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="wall-clock seconds per check (then verdict 'timeout')")
    ap.add_argument("--cpu-limit", type=float, metavar="SECONDS",
                    help="shardcheck check --time-limit SECONDS: a CPU budget per check "
                         "(verdict 'limit'), the same on a loaded machine as on an idle one")
    ap.add_argument("--no-mutants", action="store_true", help="correct programs only")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.retruth:
        return retruth_dirs(args.retruth)
    if args.summarize:
        from .summarize import report
        print(report(args.summarize))
        return 0
    if args.jobs < 1:
        ap.error("--jobs N: N >= 1")
    if args.recheck:
        if not args.check or not args.out:
            ap.error("--recheck DIR needs --check SHARDCHECK and --out DIR2")
        if os.path.abspath(args.recheck) == os.path.abspath(args.out):
            ap.error("--recheck DIR: --out must be another directory")
        src = {e["seed"]: e for e in read_manifest(os.path.join(args.recheck, "manifest.jsonl"))}
        if not src:
            ap.error(f"--recheck {args.recheck}: no manifest.jsonl with seeds there")
        seeds = sorted(s for s in src if args.seeds is None or
                       args.seeds[0] <= s < args.seeds[1])
    else:
        if args.seeds is None:
            ap.error("--seeds A:B is required")
        if not args.out and not args.check:
            ap.error("give --out DIR, --check SHARDCHECK, or both")
        seeds = list(range(*args.seeds))
    out_dir = args.out
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="shardsmith-")
        out_dir = tmp.name
    os.makedirs(out_dir, exist_ok=True)
    mpath = os.path.join(out_dir, "manifest.jsonl")
    done = {e["seed"]: e for e in read_manifest(mpath)}
    todo = [s for s in seeds if s not in done]
    if done and not args.quiet:
        print(f"{len(seeds) - len(todo)} of {len(seeds)} seeds already in {mpath}; "
              f"doing {len(todo)}", flush=True)
    if args.recheck:
        jobs = []
        for s in todo:
            e = {k: v for k, v in src[s].items() if not k.startswith("check_")}
            e["bundle_dir"] = os.path.abspath(e.get("bundle_dir") or args.recheck)
            jobs.append((e, e["bundle_dir"], args.check, args.timeout, args.cpu_limit))
        fn = do_recheck
    else:
        jobs = [(s, out_dir, args.check, args.timeout, args.cpu_limit, not args.no_mutants)
                for s in todo]
        fn = do_seed
    false_proofs = gen_errors = 0
    with open(mpath, "a") as jsonl:
        for entry, lines in _map(fn, jobs, args.jobs):
            for ln in lines:
                print(ln, flush=True)
            if args.check:
                entry["checked_with"] = {
                    "shardcheck": os.path.abspath(args.check), "cpu_limit": args.cpu_limit,
                    "timeout": args.timeout,
                    "env": {k: os.environ[k] for k in ENV if k in os.environ}}
            jsonl.write(json.dumps(entry) + "\n")
            jsonl.flush()
            done[entry["seed"]] = entry
    entries = [done[s] for s in seeds if s in done]
    gen_errors = sum(1 for e in entries if e.get("error"))
    false_proofs = sum(1 for e in entries if (e.get("check_mutant") or {}).get("verdict")
                       == "refines")
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"format": "shardsmith-manifest/1",
                   "seeds": [seeds[0], seeds[-1] + 1] if seeds else [],
                   "cases": entries}, f, indent=1)
    if args.check:
        print(figure_line(entries, out_dir))
    elif not args.quiet:
        n_c = sum(1 for e in entries if "correct" in e.get("files", {}))
        n_m = sum(1 for e in entries if "mutant" in e.get("files", {}))
        print(f"wrote {n_c} correct and {n_m} mutant bundles to {out_dir}"
              f" ({gen_errors} generator errors)")
    if tmp is not None:
        tmp.cleanup()
    return 1 if false_proofs or gen_errors else 0
