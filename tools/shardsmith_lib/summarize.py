"""summarize.py -- figures of one or more shardsmith runs (manifest.jsonl or
manifest.json of each --out DIR), as the markdown tables of
docs/shardsmith.md: totals, per family, misses grouped by cause, times.
"""

import collections
import json
import os
import statistics

from .cli import _stop_node, at_first_divergence


def load(dirs):
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
    return cases


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
    out.append("Degrees: " + ", ".join(
        f"{d}: {sum(1 for c in ok if c['degree'] == d)} programs, "
        f"{sum(1 for c in proved if c['degree'] == d)} proved"
        for d in sorted({c['degree'] for c in ok})))
    sizes = sorted(c["ops"] for c in ok)
    if sizes:
        out.append("")
        out.append(f"Operators per program (those that reach an output; the bundles hold "
                   f"their ATen expansion): min {sizes[0]}, median "
                   f"{sizes[len(sizes) // 2]}, max {sizes[-1]}; forward + backward: "
                   f"{sum(1 for c in ok if c['backward'])} of {len(ok)}.")
    out.append("")
    out.append("Correct programs not proved, by verdict and the operator where the check stopped:")
    out.append("")
    cnt = collections.Counter()
    for c in ok:
        r = c["check_correct"]
        if r["verdict"] != "refines":
            cnt[(r["verdict"], r.get("op") or r.get("kind") or (r.get("stderr") or "")[:60])] += 1
    out.append("| verdict | stopped at operator | programs |")
    out.append("|---|---|---|")
    for (v, op), k in cnt.most_common():
        out.append(f"| {v} | {op} | {k} |")
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
    secs = [c["seconds"] for c in ok if "seconds" in c]
    gens = [c["generate_seconds"] for c in ok]
    chk = [c["check_correct"].get("seconds", 0) for c in ok]
    if secs:
        out.append(f"Time per program (one correct bundle and its mutant): mean {statistics.mean(secs):.1f} s, "
                   f"median {statistics.median(secs):.1f} s; generation and ground truth mean "
                   f"{statistics.mean(gens):.1f} s; check of the correct bundle mean "
                   f"{statistics.mean(chk):.2f} s, max {max(chk):.1f} s.")
    if errs:
        out.append("")
        out.append("Generator errors:")
        for c in errs[:20]:
            out.append(f"- seed {c['seed']}: {c['error'].splitlines()[0][:200]}")
    return "\n".join(out)
