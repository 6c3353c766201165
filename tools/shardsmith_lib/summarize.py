"""summarize.py -- figures of one or more shardsmith runs (manifest.jsonl or
manifest.json of each --out DIR), as the markdown tables of
docs/shardsmith.md: totals, per family, misses grouped by cause, times.

A seed recorded twice (a resumed or repeated run) counts once: its last
record.  A record of a --recheck run names the directory of its bundles
(bundle_dir); the others' bundles are beside their manifest.
"""

import collections
import json
import os
import statistics

from .cli import _stop_node, at_first_divergence, report_at_first_divergence


def load(dirs):
    """The records of dirs, each seed once (the last record of it)."""
    cases = []
    for d in dirs:
        path = os.path.join(d, "manifest.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    if line.strip():
                        c = json.loads(line)
                        c["_dir"] = d
                        cases.append(c)
        else:
            with open(os.path.join(d, "manifest.json")) as f:
                for c in json.load(f)["cases"]:
                    c["_dir"] = d
                    cases.append(c)
    last = {}
    for c in cases:
        c["_dir"] = c.get("bundle_dir") or c["_dir"]
        for k in ("check_correct", "check_mutant"):
            r = c.get(k)
            if r and r.get("verdict") == "error" and r.get("exit") == 3:
                r["verdict"] = "limit"      # recorded before cli.py said so itself
        last[c["seed"]] = c
    return [last[s] for s in sorted(last)]


def _spec_order(case):
    path = os.path.join(case["_dir"], case["files"]["mutant"])
    with open(path) as f:
        b = json.load(f)
    return [e["name"] for e in b["spec"]["nodes"]], b


def mutant_outcome(c):
    res = c.get("check_mutant")
    if res is None:
        return None
    if res["verdict"] == "refines":
        return "FALSE PROOF"
    if res["verdict"] != "fails":
        return f"no verdict ({res['verdict']})"
    exp = c.get("first_diverging_node")
    if exp is None:
        return "no ground truth"
    order, b = _spec_order(c)
    if at_first_divergence(res, exp, c.get("unmatched_in_correct", []), b):
        return "at first diverging node"
    got = _stop_node(res, b)
    if got in order and exp in order:
        return "stopped before it" if order.index(got) < order.index(exp) else "stopped after it"
    return "stopped elsewhere"


KEYS = ("check_correct", "check_mutant")


def _kind(res):
    """The failure kind of a check result, with the limit reached if any."""
    kd = res.get("kind") or "-"
    return f"{kd}, {res['limit']}" if res.get("limit") else kd


def _stats(xs):
    return (f"median {statistics.median(xs):.3f} s, mean {statistics.mean(xs):.3f} s, "
            f"max {max(xs):.3f} s") if xs else "-"


def times(ok):
    """The time lines: CPU (user + sys) of the checks per program, the
    generation's CPU per seed; wall times beside (the machine is shared)."""
    out = []
    checks = [c[k] for c in ok for k in ("check_correct", "check_mutant") if k in c]
    cpu = [r["cpu_seconds"] for r in checks if "cpu_seconds" in r]
    wall = [r["seconds"] for r in checks if "seconds" in r]
    gcpu = [c["generate_cpu_seconds"] for c in ok if "generate_cpu_seconds" in c]
    gwall = [c["generate_seconds"] for c in ok if "generate_seconds" in c]
    pair = [sum(c[k]["cpu_seconds"] for k in KEYS if k in c) for c in ok
            if all("cpu_seconds" in c[k] for k in KEYS if k in c)]
    out.append(f"CPU time of the check per program ({len(cpu)} of {len(checks)} checks "
               f"recorded it): {_stats(cpu)}; per seed (correct + mutant) {_stats(pair)}.")
    slow = sorted(((c[k]["cpu_seconds"], c["seed"], k) for c in ok
                   for k in ("check_correct", "check_mutant") if "cpu_seconds" in c.get(k, {})),
                  reverse=True)[:3]
    if slow:
        out.append("Slowest checks (CPU): " + ", ".join(
            f"{s}{'m' if k == 'check_mutant' else ''} {t:.2f} s" for t, s, k in slow) + ".")
    out.append(f"Wall time of the check per program: {_stats(wall)}.")
    out.append(f"Generation, validation and ground truth per seed: CPU {_stats(gcpu)} "
               f"({len(gcpu)} of {len(ok)} seeds recorded it); wall {_stats(gwall)}.")
    timeouts = [c["seed"] for c in ok for k in ("check_correct", "check_mutant")
                if c.get(k, {}).get("verdict") == "timeout"]
    if timeouts:
        out.append(f"Checks stopped by the --timeout: {len(timeouts)} (seeds "
                   f"{', '.join(map(str, timeouts[:8]))}).")
    return out


def pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "-"


def report(dirs):
    cases = load(dirs)
    ok = [c for c in cases if not c.get("error") and "check_correct" in c]
    errs = [c for c in cases if c.get("error")]
    muts = [c for c in ok if "check_mutant" in c]
    outcome = {c["seed"]: mutant_outcome(c) for c in muts}
    proved = [c for c in ok if c["check_correct"]["verdict"] == "refines"]
    at = [c for c in muts if outcome[c["seed"]] == "at first diverging node"]
    fp = [c for c in muts if outcome[c["seed"]] == "FALSE PROOF"]
    out = []
    out.append(f"{len(ok) + len(muts)} programs ({len(ok)} correct, {len(muts)} mutants): "
               f"proved {len(proved)}/{len(ok)}, false proofs {len(fp)}, mutants at the first "
               f"diverging node {len(at)}/{len(muts)}  ({len(errs)} generator errors)")
    rep = []
    for c in muts:
        if c["check_mutant"]["verdict"] != "fails" or c.get("first_diverging_node") is None:
            continue
        _, b = _spec_order(c)
        if report_at_first_divergence(c["check_mutant"], c["first_diverging_node"],
                                      c.get("unmatched_in_correct", []), b):
            rep.append(c)
    if any("values_differ_at" in c["check_mutant"] for c in muts):
        out.append(f"The report (the failure node, or where its value diagnosis finds the values "
                   f"first differ after a node only not proved) at the first diverging node: "
                   f"{len(rep)}/{len(muts)}")
    out.append("")
    out.append("| family | programs | proved | mutants | at first diverging node |")
    out.append("|---|---|---|---|---|")
    fams = sorted({f for c in ok for f in c["families"]})
    for f in fams:
        cs = [c for c in ok if f in c["families"]]
        ms = [c for c in cs if "check_mutant" in c]
        p = sum(1 for c in cs if c["check_correct"]["verdict"] == "refines")
        a = sum(1 for c in ms if outcome[c["seed"]] == "at first diverging node")
        out.append(f"| {f} | {len(cs)} | {p} ({pct(p, len(cs))}) | {len(ms)} | {a} ({pct(a, len(ms))}) |")
    for label, sel in (("forward only", lambda c: not c["backward"]),
                       ("forward + backward", lambda c: c["backward"]),
                       ("1-D mesh", lambda c: len(c["mesh"]) == 1),
                       ("2-D mesh", lambda c: len(c["mesh"]) == 2)):
        cs = [c for c in ok if sel(c)]
        ms = [c for c in cs if "check_mutant" in c]
        p = sum(1 for c in cs if c["check_correct"]["verdict"] == "refines")
        a = sum(1 for c in ms if outcome[c["seed"]] == "at first diverging node")
        out.append(f"| *{label}* | {len(cs)} | {p} ({pct(p, len(cs))}) | {len(ms)} | {a} ({pct(a, len(ms))}) |")
    out.append("")
    out.append("| degree (ranks) | programs | proved | mutants | at first diverging node |")
    out.append("|---|---|---|---|---|")
    for d in sorted({c["degree"] for c in ok}):
        cs = [c for c in ok if c["degree"] == d]
        ms = [c for c in cs if "check_mutant" in c]
        p = sum(1 for c in cs if c["check_correct"]["verdict"] == "refines")
        a = sum(1 for c in ms if outcome[c["seed"]] == "at first diverging node")
        out.append(f"| {d} | {len(cs)} | {p} ({pct(p, len(cs))}) | {len(ms)} | {a} ({pct(a, len(ms))}) |")
    sizes = sorted(c["ops"] for c in ok)
    if sizes:
        out.append("")
        out.append(f"Operators per program (those that reach an output; the bundles hold "
                   f"their ATen expansion): min {sizes[0]}, median "
                   f"{sizes[len(sizes) // 2]}, max {sizes[-1]}; forward + backward: "
                   f"{sum(1 for c in ok if c['backward'])} of {len(ok)}.")
    out.append("")
    out.append("Correct programs not proved, by verdict, failure kind and the operator where "
               "the check stopped (seeds: up to four of each):")
    out.append("")
    groups = collections.defaultdict(list)
    for c in ok:
        r = c["check_correct"]
        if r["verdict"] != "refines":
            groups[(r["verdict"], _kind(r),
                    r.get("op") or (r.get("stderr") or "")[:60] or "-")].append(c)
    out.append("| verdict | kind | stopped at operator | programs | 2-D mesh | seeds |")
    out.append("|---|---|---|---|---|---|")
    for (v, kd, op), cs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"| {v} | {kd} | {op} | {len(cs)} | "
                   f"{sum(1 for c in cs if len(c['mesh']) == 2)} | "
                   f"{', '.join(str(c['seed']) for c in cs[:4])} |")
    out.append("")
    out.append("Mutants not located at the first diverging node, by outcome, failure kind "
               "and operator (seeds: up to four of each; m = the mutant bundle):")
    out.append("")
    groups = collections.defaultdict(list)
    for c in muts:
        o = outcome[c["seed"]]
        if o == "at first diverging node":
            continue
        r = c["check_mutant"]
        groups[(o, _kind(r), r.get("op") or "-")].append(c)
    out.append("| outcome | kind | stopped at operator | mutants | correct one proved | seeds |")
    out.append("|---|---|---|---|---|---|")
    for (o, kd, op), cs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"| {o} | {kd} | {op} | {len(cs)} | "
                   f"{sum(1 for c in cs if c['check_correct']['verdict'] == 'refines')} | "
                   f"{', '.join(str(c['seed']) + 'm' for c in cs[:4])} |")
    out.append("")
    out.append("Mutants, by mutation and outcome:")
    out.append("")
    kinds = sorted({c["mutation"]["name"] for c in muts})
    outs = ["at first diverging node", "stopped before it", "stopped after it",
            "stopped elsewhere", "no ground truth", "FALSE PROOF"]
    extra = sorted({o for o in outcome.values() if o not in outs})
    outs += extra
    out.append("| mutation | " + " | ".join(outs) + " |")
    out.append("|---|" + "---|" * len(outs))
    for kd in kinds:
        row = [sum(1 for c in muts if c["mutation"]["name"] == kd and outcome[c["seed"]] == o)
               for o in outs]
        out.append(f"| {kd} | " + " | ".join(str(x) for x in row) + " |")
    out.append("")
    unmatched = sum(1 for c in muts if c.get("unmatched_in_correct"))
    out.append(f"Ground truth: {unmatched} of {len(muts)} correct implementations have spec "
               f"nodes for which the value search found no clean expression (those nodes are "
               f"never chosen as the first diverging node).")
    out.append("")
    out.extend(times(ok))
    if errs:
        out.append("")
        out.append("Generator errors:")
        for c in errs[:20]:
            out.append(f"- seed {c['seed']}: {c['error'].splitlines()[0][:200]}")
    return "\n".join(out)
