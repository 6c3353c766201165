"""bundle.py -- a program, its plan and an optional mutation, exported with
the project's exporter (tools/export, shardcheck_export.build_bundle).

Two things the exporter does not do yet are added here, around it:
  * ranks of collectives over a sub-group (2-D meshes): result i of a
    collective is on the rank of input i (the exporter numbers them 0..m-1,
    which is right only for a group of all ranks); this module installs that
    rule in the exporter's rank pass for the duration of a capture;
  * point-to-point moves: plan.send_recv traces as one node of our own
    namespace, rewritten here to the bundle's `comm.send_recv.default`
    (bundle-format.md, "Collectives"), its one result on rank dst.
"""

import contextlib
import copy


from shardcheck_export import Export, Input, Param, build_bundle
from shardcheck_export import capture as cap

from . import layout as L
from .plan import SR_NAMESPACE


def _assign_ranks(entry, n, reads, rank_of, qual, where):
    if qual.startswith("comm.") or qual.startswith(SR_NAMESPACE + "."):
        ins = entry["args"][0] if entry["args"] else []
        if qual.startswith(SR_NAMESPACE):
            dsts = [entry["args"][2]]
        else:
            dsts = [rank_of.get(a) for a in ins]
        for o, r in zip(entry["outputs"], dsts):
            if o is not None and r is not None:
                o["rank"] = r
                rank_of[o["name"]] = r
        return
    return _ORIG_ASSIGN(entry, n, reads, rank_of, qual, where)


_ORIG_ASSIGN = cap._assign_ranks


@contextlib.contextmanager
def _subgroup_ranks():
    cap._assign_ranks = _assign_ranks
    try:
        yield
    finally:
        cap._assign_ranks = _ORIG_ASSIGN


def _rewrite_send_recv(graph):
    for e in graph["nodes"]:
        if e["op"] == f"{SR_NAMESPACE}.send_recv.default":
            e["op"] = "comm.send_recv.default"
            e["args"] = [e["args"][0]]
            e["kwargs"] = {}


def make_export(prog, plan, name, mutation=None):
    mesh = plan.mesh
    inputs = {}
    for d in prog.inputs:
        cls = Param if d.param and plan.backward else Input
        inputs[d.name] = cls(d.shape, L.MeshPlacement(d.layout, mesh, prog.seed),
                             dtype=d.dtype, values=d.values, init=d.init)
    outputs = {k: L.MeshPlacement(plan.output_layouts[k], mesh, prog.seed) for k in prog.outputs}
    keys = [d.name for d in prog.inputs]

    def spec(**kw):
        return prog.spec(**kw)

    def impl(**kw):
        return plan.run({k: kw[k] for k in keys}, mutation)

    return Export(name=name, spec=spec, impl=impl, degree=L.nranks(mesh), inputs=inputs,
                  outputs=outputs, rtol=1e-6, atol=1e-8, expect_mismatch=mutation is not None,
                  bundle_name=name, description=f"shardsmith seed {prog.seed}")


_ORIG_CAPTURE = cap.capture


@contextlib.contextmanager
def _spec_once(prog):
    """The spec graph of a program is the same for its correct bundle and
    its mutants: trace it once per program."""
    cache = prog.__dict__.setdefault("_spec_capture", {})

    def capture(fn, args, input_names, output_names, **kw):
        if getattr(fn, "__name__", "") != "_sc_spec_call":
            return _ORIG_CAPTURE(fn, args, input_names, output_names, **kw)
        key = (tuple(input_names), tuple(output_names))
        if key not in cache:
            cache[key] = _ORIG_CAPTURE(fn, args, input_names, output_names, **kw)
        graph, outs = cache[key]
        return copy.deepcopy(graph), list(outs)
    cap.capture = capture
    try:
        yield
    finally:
        cap.capture = _ORIG_CAPTURE


def export(prog, plan, name, mutation=None, seed=0):
    exp = make_export(prog, plan, name, mutation)
    with _subgroup_ranks(), _spec_once(prog):
        bundle, lines = build_bundle(exp, backward=plan.backward, seed=seed)
    _rewrite_send_recv(bundle["impl"])
    return bundle, exp
