"""bundle.py -- one bundle from the one-process run (the spec) and the
N-process run (the per-rank impl), with the relations read from values.

    assemble(spec_dir, ranks_dir, n, name, given_relation) -> (bundle, report lines)

  * spec: the world-size-1 graph; its process groups have one member each,
    so its collectives are identities (bundle-format.md);
  * impl: {"ranks": [graph of rank k], "groups": every group's global ranks};
  * input_relation: per spec input, relation.find on the values (exact),
    else the --relation file's entry, else a CaptureError naming the input;
  * expect_output_relation: grad.P and updated.P are expected laid out like
    P; the step's own outputs where their values lie, or, when the values
    match no layout, whole on every rank that returns them (the check then
    fails on them, and the report says that the values already differ).
Every expected relation is also evaluated on the run's values, and the
report says which hold.
"""

import json
import os
import re

import torch

from shardcheck_export import expr as rexpr

from . import relation, replay
from .record import CaptureError

FORMAT = "shardcheck-bundle/1"


def load_run(d, rank, label):
    js, pt = os.path.join(d, f"rank{rank}.json"), os.path.join(d, f"rank{rank}.pt")
    if not os.path.exists(js) or not os.path.exists(pt):
        raise CaptureError(f"{label}: rank {rank} finished without calling capture_step "
                           f"(nothing was recorded)")
    with open(js) as f:
        meta = json.load(f)
    vals = torch.load(pt)
    return meta, vals


def _substitute(exprs, old, new):
    pat = re.compile(r"\b(r\d+)\." + re.escape(old) + r"(?![A-Za-z0-9_.])")
    return [pat.sub(lambda m: f"{m.group(1)}.{new}", e) for e in exprs]


def _holds(e, env, want):
    try:
        got = rexpr.evaluate(rexpr.parse_expr(e), env)
    except Exception as ex:            # noqa: BLE001 - reported, not raised
        return False, f"cannot evaluate: {ex}"
    if not torch.is_tensor(got) or got.shape != want.shape:
        return False, f"shape {list(getattr(got, 'shape', []))} vs {list(want.shape)}"
    ok = relation.close(got, want, exact=False)
    err = (got.double() - want.double()).abs().max().item() if want.numel() else 0.0
    return ok, f"max abs err {err:.3g}"


def check_structure(spec_meta, metas):
    spec_in = {t["name"] for t in spec_meta["graph"]["inputs"]}
    spec_out = list(spec_meta["graph"]["outputs"])
    rank_out = set()
    for k, m in enumerate(metas):
        for t in m["graph"]["inputs"]:
            if t["name"] not in spec_in:
                raise CaptureError(
                    f"structure: rank {k} has input {t['name']} that the 1-process run does "
                    f"not have (the runs captured different programs)")
        for o in m["graph"]["outputs"]:
            if o not in spec_out:
                raise CaptureError(
                    f"structure: rank {k} returns {o}, which the 1-process run does not "
                    f"(the runs captured different programs)")
            rank_out.add(o)
    missing = [o for o in spec_out if o not in rank_out]
    if missing:
        raise CaptureError(f"structure: no rank returns {', '.join(missing)}, which the "
                           f"1-process run returns")


def assemble(spec_dir, ranks_dir, n, name, given=None, description=""):
    spec_meta, spec_vals = load_run(spec_dir, 0, "the 1-process run")
    metas, vals = [], []
    for k in range(n):
        m, v = load_run(ranks_dir, k, f"the {n}-process run")
        metas.append(m)
        vals.append(v)
    check_structure(spec_meta, metas)
    replay.check_run(spec_meta["graph"], spec_vals, "the 1-process run")
    for k in range(n):
        replay.check_run(metas[k]["graph"], vals[k], f"the {n}-process run, rank {k}")
    report = []
    given = given or {}

    # input relation
    input_rel = {}
    for t in spec_meta["graph"]["inputs"]:
        nm = t["name"]
        pieces = {k: v["inputs"][nm] for k, v in enumerate(vals) if nm in v["inputs"]}
        if nm in given:
            input_rel[nm] = given[nm]
            report.append(f"input  {nm}: {' | '.join(given[nm])}   (given, --relation)")
            continue
        f = relation.find(spec_vals["inputs"][nm], pieces, nm, exact=True)
        if f is None:
            held = ", ".join(f"rank {k} {list(p.shape)}" for k, p in pieces.items()) or \
                "no rank"
            raise CaptureError(
                f"input {nm} {list(spec_vals['inputs'][nm].shape)}: its values match no "
                f"layout over the ranks' {nm} ({held}): not replicated, not split along a "
                f"dim; give its relation with --relation FILE")
        input_rel[nm] = f.exprs
        amb = "  (values repeat: the rank-order placement was chosen; review it)" \
            if f.ambiguous else ""
        report.append(f"input  {nm}: {' | '.join(f.exprs)}   ({f.kind}){amb}")

    # expected output relation
    env = {}
    for k, v in enumerate(vals):
        for nm, t in list(v["inputs"].items()) + list(v["outputs"].items()):
            env[f"r{k}.{nm}"] = t
    expect = {}
    for o in spec_meta["graph"]["outputs"]:
        holders = [k for k, m in enumerate(metas) if o in m["graph"]["outputs"]]
        m = re.match(r"(grad|updated)\.(.*)$", o)
        exprs = None
        why = ""
        if m and m.group(2) in input_rel:
            exprs = _substitute(input_rel[m.group(2)], m.group(2), o)
            bad = [e for e in exprs if not all(
                f"r{k}.{o}" in env for k in map(int, re.findall(r"\br(\d+)\." + re.escape(o), e)))]
            if bad:
                exprs = None
            else:
                why = f"laid out like {m.group(2)}"
        if exprs is None:
            f = relation.find(spec_vals["outputs"][o],
                              {k: vals[k]["outputs"][o] for k in holders}, o, exact=False,
                              some=False)
            if f is not None:
                exprs, why = f.exprs, f"from values: {f.kind}"
            else:
                exprs = [f"r{k}.{o}" for k in holders]
                why = "whole on every rank that returns it (its values match no layout)"
        expect[o] = exprs
        for e in exprs:
            ok, detail = _holds(e, env, spec_vals["outputs"][o])
            report.append(f"output {o}: {e}   ({why}; values {'agree' if ok else 'DIFFER'}, "
                          f"{detail})")

    groups = {}
    for m in metas:
        for g, members in m["groups"].items():
            groups[g] = members
    spec_graph = dict(spec_meta["graph"])
    spec_groups = {g: [0] for g in spec_meta["groups"]}
    if spec_groups:
        spec_graph["groups"] = spec_groups
    ranks = [m["graph"] for m in metas]
    impl = {"ranks": ranks}
    if groups:
        impl["groups"] = groups
    bundle = {
        "format": FORMAT,
        "name": name,
        "description": (description + " " if description else "") +
        f"Captured by shardcheck-capture: 1 process (spec) and {n} processes (impl), "
        f"torch {spec_meta['torch']}.",
        "spec": spec_graph,
        "impl": impl,
        "input_relation": input_rel,
        "expect_output_relation": expect,
    }
    return bundle, report



def _one(v):
    return json.dumps(v, allow_nan=False, separators=(", ", ": "))


def _graph(g, pad):
    parts = []
    for key in ("inputs", "nodes"):
        body = ",\n".join(f"{pad}    {_one(x)}" for x in g[key])
        parts.append(f'{pad}  "{key}": [\n{body}\n{pad}  ]' if g[key] else f'{pad}  "{key}": []')
    parts.append(f'{pad}  "outputs": {_one(g["outputs"])}')
    for key in g:
        if key not in ("inputs", "nodes", "outputs"):
            parts.append(f'{pad}  "{key}": {_one(g[key])}')
    return "{\n" + ",\n".join(parts) + f"\n{pad}}}"


def dumps(bundle):
    """Bundle text with one tensor or node per line (as shardcheck_export's
    writer), per-rank impl graphs included, so that bundles diff by line."""
    parts = []
    for k, v in bundle.items():
        if k == "spec" or (k == "impl" and "ranks" not in v):
            parts.append(f'  "{k}": {_graph(v, "  ")}')
        elif k == "impl":
            ranks = ",\n".join("      " + _graph(g, "      ") for g in v["ranks"])
            body = f'{{\n    "ranks": [\n{ranks}\n    ]'
            if v.get("groups"):
                body += f',\n    "groups": {_one(v["groups"])}'
            parts.append(f'  "impl": {body}\n  }}')
        elif isinstance(v, dict) and v:
            body = ",\n".join(f"    {_one(kk)}: {_one(vv)}" for kk, vv in v.items())
            parts.append(f'  "{k}": {{\n{body}\n  }}')
        else:
            parts.append(f'  "{k}": {_one(v)}')
    return "{\n" + ",\n".join(parts) + "\n}\n"
