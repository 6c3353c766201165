#!/usr/bin/env python3
"""run-prove.py -- the tests of `shardcheck lemmas prove` (suite lemcheck).

    run-prove.py SHARDCHECK PLANTED_DIR planted
        The planted lemmas of PLANTED_DIR: lemprove_true_transpose proved,
        lemprove_planted_slice refuted with a concrete instance that really
        breaks it (?e >= 9 and dim 0 of ?x larger than ?e), and
        lemprove_outside_scalar not provable (a condition on a Scalar's
        magnitude: refuted without it, no concrete witness with it),
        lemprove_scalar_condition proved (its Scalar conjunct dropped);
        values: lemprove_values_cat_slice's, lemprove_values_view_rows's
        (a view splitting a dim), lemprove_values_flatten_cat's (a view
        merging dims: quotient and remainder), lemprove_values_roll_cat's
        (roll), lemprove_values_interleave_cat's (repeat_interleave) and
        lemprove_values_chunk_half's (chunk; its typing needs a split on a
        modulo the solver leaves undecided) proved for all sizes, the
        three planted wrong index maps (lemprove_values_planted_swap,
        _shift, _roll) refuted with an instance whose sides the
        interpreter finds different (the instance is read back and checked
        to satisfy the lemma's condition), lemprove_true_transpose's
        proved; lemprove_pruned_add_cat proved in under 1,000 of its 93,312
        configurations (the rest pruned: prove-configs.c), its planted
        twin lemprove_pruned_planted_dim refuted with an instance where
        ?c has the higher rank; lemprove_mixed_masked_fill (a bool mask
        beside non-bool data: typed with no shared dtype) proved with a
        dtype per tensor, its planted twin lemprove_mixed_planted_mask
        refuted with ?x not bool; lemprove_boollist_mask (a bool[3]
        attribute, each of its 8 values) proved; lemprove_rank3_bmm_transpose (typed at
        no rank <= 2) proved at rank <= 3, and not provable with
        --max-rank-bound 2; with a wall time of 1 ms per query,
        lemprove_values_view_rows "over budget (time)".
    run-prove.py SHARDCHECK STATUS_JSON library [PREFIX...]
        The library's lemmas whose names start with a PREFIX (all when none
        is given) proved again: no lemma refuted, and each status (typing,
        and values for layout lemmas) equal to the one recorded in
        STATUS_JSON (docs/lemma-proofs.json, from which
        docs/lemmas.md is generated), so the page cannot claim a proof that
        the prover no longer gives.

Prints "N passed, M failed" and exits 1 on a failure.  Standard library only.
"""
import json
import os
import re
import subprocess
import sys


def prove(exe, args, env_extra=None):
    # the command's own limits: cvc5's resource limit decides (deterministic),
    # its wall time per query is a safety net (docs/lemmas.md); the
    # environment's SC_SMT_TLIMIT_MS / SC_SMT_RLIMIT (meson's) do not apply
    env = {k: v for k, v in os.environ.items() if k not in ("SC_SMT_TLIMIT_MS", "SC_SMT_RLIMIT")}
    env.update(env_extra or {})
    r = subprocess.run([exe, "lemmas", "prove", "--format", "json"] + args,
                       capture_output=True, text=True, env=env)
    prove.stderr = r.stderr
    if "Sanitizer" in r.stderr or "runtime error" in r.stderr:
        print(r.stderr[-3000:])
        return 99, None
    if r.returncode not in (0, 1):
        print(r.stdout[-3000:], r.stderr[-3000:])
        return r.returncode, None
    return r.returncode, json.loads(r.stdout)


def refuted_with(by, name, va, vb, breaks):
    """The failure (None: none) of planted lemma NAME, which must be refuted
    with an instance whose types of ?VA and ?VB (dtype, sizes text) BREAKS
    says break it."""
    t = by.get(name, {})
    why = t.get("why") or ""
    a = re.search(rf"\?{va}: (\w+)\[([^\]]*)\]", why)
    b = re.search(rf"\?{vb}: (\w+)\[([^\]]*)\]", why)
    if t.get("status") != "refuted" or not a or not b:
        return f"{name} not refuted with an instance: {t}"
    if not breaks(a.groups(), b.groups()):
        return f"{name}: the instance does not break it: {why}"
    return None


def planted(exe, planted_dir):
    rc, rep = prove(exe, ["--lemmas", planted_dir, "--only", "lemprove_"])
    failures = []
    if rep is None:
        return ["lemmas prove failed to run"]
    by = {l["name"]: l for l in rep["lemmas"]}
    if rc != 1:
        failures.append(f"exit {rc}, expected 1 (a refuted lemma)")
    t = by.get("lemprove_true_transpose", {})
    if t.get("status") != "proved" or t.get("typed", 0) == 0:
        failures.append(f"lemprove_true_transpose: {t}")
    s = by.get("lemprove_planted_slice", {})
    why = s.get("why") or ""
    m = re.search(r"\?x: \w+\[(\d+)[^\]]*\], \?e = (-?\d+)", why)
    if s.get("status") != "refuted" or not m:
        failures.append(f"lemprove_planted_slice not refuted with an instance: {s}")
    else:
        size, e = int(m.group(1)), int(m.group(2))
        # the instance must satisfy the condition and break the rewrite
        if not (e >= 9 and size > e):
            failures.append(f"lemprove_planted_slice: the instance does not break it: {why}")
    for name in ("lemprove_true_transpose", "lemprove_values_cat_slice",
                 "lemprove_values_view_rows", "lemprove_values_roll_cat",
                 "lemprove_values_interleave_cat", "lemprove_values_flatten_cat",
                 "lemprove_values_chunk_half"):
        v = by.get(name, {})
        if v.get("values") != "proved":
            failures.append(f"{name}: values not proved: {v}")
    for name in ("lemprove_values_planted_swap", "lemprove_values_planted_shift"):
        v = by.get(name, {})
        vw = v.get("values_why") or ""
        if v.get("status") != "proved" or v.get("values") != "refuted" or \
                "the interpreter finds the sides' values differ" not in vw:
            failures.append(f"{name}: values not refuted with an interpreter witness: {v}")
            continue
        a = re.search(r"\?a: \w+\[([^\]]*)\]", vw)
        b = re.search(r"\?b: \w+\[([^\]]*)\]", vw)
        if not a or not b or a.group(1) != b.group(1):
            failures.append(f"{name}: the instance breaks the condition shape(?a) == shape(?b): {vw}")
        if name.endswith("_shift"):
            e = re.search(r"\?e = (-?\d+)", vw)
            if not e or int(e.group(1)) != int(a.group(1).split(",")[0]) + 1:
                failures.append(f"{name}: the instance breaks ?e == size(?a, 0) + 1: {vw}")
    v = by.get("lemprove_values_planted_roll", {})
    vw = v.get("values_why") or ""
    m = re.search(r"\?a: \w+\[(\d+)\], \?b: \w+\[(\d+)\], \?sh = \[(-?\d+)\], \?ds = \[0\]", vw)
    if v.get("status") != "proved" or v.get("values") != "refuted" or \
            "the interpreter finds the sides' values differ" not in vw or not m:
        failures.append(f"lemprove_values_planted_roll: values not refuted with an interpreter "
                        f"witness: {v}")
    elif int(m.group(3)) != int(m.group(1)) or m.group(1) == m.group(2):
        # the instance must satisfy the condition (shift = |a|) and break
        # the law (which holds when |a| == |b|)
        failures.append(f"lemprove_values_planted_roll: the instance does not break it: {vw}")
    o = by.get("lemprove_outside_scalar", {})
    if o.get("status") != "not_provable" or "no concrete instance" not in (o.get("why") or "") \
            or "?s = 0.5" not in (o.get("why") or ""):
        failures.append(f"lemprove_outside_scalar: {o}")
    o = by.get("lemprove_scalar_condition", {})
    if o.get("status") != "proved" or o.get("typed", 0) == 0:
        failures.append(f"lemprove_scalar_condition: {o}")
    # pruning (prove-configs.c): proved where the blind product of 93,312
    # configurations was over the budget of runs; the planted twin refuted
    # in a configuration it must not skip (?c of a higher rank than ?a)
    t = by.get("lemprove_pruned_add_cat", {})
    if t.get("status") != "proved" or t.get("typed", 0) == 0 or t.get("configs", 0) > 1000:
        failures.append(f"lemprove_pruned_add_cat not proved by pruning: {t}")
    failures.append(refuted_with(by, "lemprove_pruned_planted_dim", "a", "c",
                                 lambda a, c: len(c[1].split(",")) > len(a[1].split(","))))
    # the rank fallback (prove.c): typed at no rank <= 2, proved at rank <= 3;
    # not provable when the fallback stops at 2
    t = by.get("lemprove_rank3_bmm_transpose", {})
    if t.get("status") != "proved" or t.get("rank_bound") != 3 or t.get("typed", 0) == 0:
        failures.append(f"lemprove_rank3_bmm_transpose not proved at rank <= 3: {t}")
    rc3, rep3 = prove(exe, ["--lemmas", planted_dir, "--only", "lemprove_rank3_",
                            "--max-rank-bound", "2"])
    t = rep3["lemmas"][0] if rep3 and rep3["lemmas"] else {}
    if t.get("status") != "not_provable" or t.get("rank_bound") != 2 or \
            "well-typed in no configuration at rank <= 2" not in (t.get("why") or ""):
        failures.append(f"--max-rank-bound 2: lemprove_rank3_bmm_transpose {t}")
    # a dtype per tensor (prove.c): typed with no shared dtype, proved with
    # one per tensor; its planted twin refuted with ?x not bool
    t = by.get("lemprove_mixed_masked_fill", {})
    if t.get("status") != "proved" or t.get("dtypes") != "per tensor" or t.get("typed", 0) == 0:
        failures.append(f"lemprove_mixed_masked_fill not proved with a dtype per tensor: {t}")
    failures.append(refuted_with(by, "lemprove_mixed_planted_mask", "x", "m",
                                 lambda x, m: m[0] == "bool" and x[0] != "bool"))
    # a bool[3] attribute: each of its 8 values enumerated (prove-vars.c)
    t = by.get("lemprove_boollist_mask", {})
    if t.get("status") != "proved" or t.get("typed", 0) == 0 or t.get("configs", 0) < 8:
        failures.append(f"lemprove_boollist_mask not proved over every mask: {t}")
    for name, t in by.items():
        if not name.startswith("lemprove_mixed_") and t.get("dtypes") != "shared":
            failures.append(f"{name}: dtypes {t.get('dtypes')}, expected shared")
    for name in sorted(by):
        print(f"{by[name]['status']:13} {name}: {by[name].get('why') or ''}")
    # the wall-time safety net, hit on purpose (1 ms per query): the lemma it
    # cuts short says so, and so does stderr
    rc, rep = prove(exe, ["--lemmas", planted_dir, "--only", "lemprove_values_view_rows"],
                    {"SC_SMT_TLIMIT_MS": "1"})
    t = rep["lemmas"][0] if rep and rep["lemmas"] else {}
    if "over budget (time)" not in ((t.get("why") or "") + (t.get("values_why") or "")) or \
            "wall-time limit per query ran out" not in prove.stderr:
        failures.append(f"SC_SMT_TLIMIT_MS=1: not reported over budget (time): {t} {prove.stderr}")
    return [f for f in failures if f]


def library(exe, status_json, prefixes):
    with open(status_json, encoding="utf-8") as f:
        rec = json.load(f)["lemmas"]
    recorded = {l["name"]: l["status"] for l in rec}
    recorded_values = {l["name"]: l.get("values") for l in rec}
    failures = []
    runs = prefixes or [None]
    for p in runs:
        rc, rep = prove(exe, ["--only", p] if p else [])
        if rep is None:
            failures.append(f"lemmas prove --only {p} failed to run")
            continue
        for l in rep["lemmas"]:
            if l["status"] == "refuted":
                failures.append(f"{l['name']} refuted: {l['why']}")
            elif l.get("values") == "refuted":
                failures.append(f"{l['name']} values refuted: {l['values_why']}")
            elif recorded.get(l["name"]) != l["status"]:
                failures.append(f"{l['name']}: {l['status']} now, {recorded.get(l['name'])} in "
                                f"{status_json} (regenerate it and docs/lemmas.md)")
            elif recorded_values.get(l["name"]) != l.get("values"):
                failures.append(f"{l['name']}: values {l.get('values')} now, "
                                f"{recorded_values.get(l['name'])} in {status_json} "
                                "(regenerate it and docs/lemmas.md)")
        print(f"--only {p}: {rep['proved']} proved, {rep['refuted']} refuted, "
              f"{rep['not_provable']} not provable")
    return failures


def main():
    exe, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    failures = planted(exe, path) if mode == "planted" else library(exe, path, sys.argv[4:])
    for f in failures:
        print("FAIL", f)
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
