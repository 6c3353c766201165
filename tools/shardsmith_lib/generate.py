"""generate.py -- one seed, start to end: the program, a correct
implementation, one mutant, both exported as bundles, and the ground truth
(where a checker should stop on the mutant).

Case.error is set when the generator's own check failed (a planner rule
that is wrong on values, an export whose numbers disagree): that is a bug
of this tool, reported apart from shardcheck's results.
"""

import random
import time
import traceback

import torch

from shardcheck_export.export import ExportError

from . import bundle as B
from . import layout as L
from . import truth
from .plan import Planner, PlanError
from .program import Generator


class Case:
    def __init__(self, seed):
        self.seed = seed
        self.error = None
        self.correct = self.mutant = None          # bundle dicts
        self.mutation = None                       # (step, name, dict, description)
        self.expected_node = None
        self.expected_how = None
        self.unmatched_correct = []
        self.families = []
        self.mesh = None
        self.backward = False
        self.n_ops = 0
        self.seconds = 0.0

    def summary(self):
        return {
            "seed": self.seed, "mesh": list(self.mesh or []),
            "degree": L.nranks(self.mesh) if self.mesh else None,
            "backward": self.backward, "ops": self.n_ops, "families": self.families,
            "mutation": None if self.mutation is None else
            {"name": self.mutation[1], "step": self.mutation[3]},
            "first_diverging_node": self.expected_node, "divergence": self.expected_how,
            "unmatched_in_correct": self.unmatched_correct, "error": self.error,
            "generate_seconds": round(self.seconds, 3),
        }


def _plan(prog, g, seed):
    rng = random.Random(seed * 1_000_003 + 17)
    pl = Planner(prog, g.mesh, g.backward, rng, prog.values)
    gen = torch.Generator().manual_seed(seed)
    for d in prog.inputs:
        full = prog.values[d.name]
        pl.add_input(d.name, full, d.layout, L.cut(full, d.layout, g.mesh, gen))
    for nd in prog.nodes:
        pl.node(nd)
    return pl.finish(prog.outputs), pl


def _detectable(prog, plan, pl, mutation):
    """Does the mutation change a program output on values?"""
    inputs = {d.name: pl.env[d.name] for d in prog.inputs}
    try:
        outs = plan.run(inputs, mutation)
    except (RuntimeError, ValueError, IndexError):
        return False
    for k, vid in prog.outputs.items():
        try:
            got = L.rebuild(outs[k], plan.output_layouts[k], plan.mesh,
                            list(prog.values[vid].shape))
        except (RuntimeError, ValueError, IndexError):
            return False
        want = prog.values[vid]
        if got.shape != want.shape:
            return True
        if not torch.allclose(got, want, rtol=1e-6, atol=1e-8):
            return True
    if not plan.backward:
        return False
    return _grads_differ(prog, plan, pl, mutation)


def _grads(prog, plan, pl, mutation):
    gen = torch.Generator().manual_seed(prog.seed + 99)
    params = [d.name for d in prog.inputs if d.param]
    inputs = {}
    for d in prog.inputs:
        inputs[d.name] = [t.detach().clone().requires_grad_(d.name in params)
                          for t in pl.env[d.name]]
    outs = plan.run(inputs, mutation)
    ys, gys = [], []
    for k, vid in prog.outputs.items():
        full = prog.values[vid]
        if not full.dtype.is_floating_point:
            continue
        tan = L.cut(torch.randn(full.shape, generator=gen, dtype=full.dtype),
                    L.grad_layout(plan.output_layouts[k]), plan.mesh, gen)
        for y, t in zip(outs[k], tan):
            if y.requires_grad:
                ys.append(y)
                gys.append(t)
    xs = [t for p in params for t in inputs[p]]
    if not ys or not xs:
        return [], []
    gs = torch.autograd.grad(ys, xs, gys, allow_unused=True)
    return xs, [g if g is not None else torch.zeros_like(x) for g, x in zip(gs, xs)]


def _grads_differ(prog, plan, pl, mutation):
    try:
        _, want = _grads(prog, plan, pl, None)
        _, got = _grads(prog, plan, pl, mutation)
    except (RuntimeError, ValueError, IndexError):
        return False
    return any(a.shape != b.shape or not torch.allclose(a, b, rtol=1e-6, atol=1e-8)
               for a, b in zip(got, want))


def retruth(entry, correct, mutant):
    """Recompute the ground truth of a recorded case from its bundles (the
    program and plan are regenerated from the seed; nothing is traced)."""
    seed = entry["seed"]
    g = Generator(seed)
    prog = g.build()
    plan, _ = _plan(prog, g, seed)
    cexp = B.make_export(prog, plan, "c")
    mexp = B.make_export(prog, plan, "m")
    node, how, unmatched = truth.first_divergence(correct, cexp, mutant, mexp, plan.mesh)
    entry["first_diverging_node"], entry["divergence"] = node, how
    entry["unmatched_in_correct"] = unmatched
    return entry


def make_case(seed, with_mutant=True):
    t0 = time.time()
    case = Case(seed)
    try:
        g = Generator(seed)
        prog = g.build()
        case.mesh, case.backward = g.mesh, g.backward
        live = prog.live_nodes()
        case.families = sorted({nd.family for nd in live})
        case.n_ops = len(live)
        plan, pl = _plan(prog, g, seed)
        case.correct, cexp = B.export(prog, plan, f"shardsmith-{seed}-correct", seed=seed)
        if with_mutant:
            rng = random.Random(seed * 7_777_777 + 3)
            # a kind of mutation first (each kind equally likely), then one
            # of its places: collectives outnumber the other places
            by_kind = {}
            for step, name, m in plan.mutations():
                by_kind.setdefault(name, []).append((step, name, m))
            kinds = sorted(by_kind)
            rng.shuffle(kinds)
            muts = []
            for kd in kinds:
                places = by_kind[kd]
                rng.shuffle(places)
                muts += places[:4]
            for step, name, m in muts:
                if not _detectable(prog, plan, pl, (step, m)):
                    continue
                try:
                    mb, mexp = B.export(prog, plan, f"shardsmith-{seed}-mutant",
                                        mutation=(step, m), seed=seed)
                except ExportError:
                    continue        # equivalent on the exporter's numbers, or not traceable
                except (RuntimeError, ValueError, IndexError):
                    continue
                case.mutant = mb
                case.mutation = (step, name, m, plan.steps[step].describe())
                node, how, unmatched = truth.first_divergence(case.correct, cexp, mb, mexp,
                                                              plan.mesh)
                case.expected_node, case.expected_how = node, how
                case.unmatched_correct = unmatched
                break
    except (PlanError, ExportError) as e:
        case.error = f"{type(e).__name__}: {e}"
    except Exception as e:      # a generator bug: say where
        case.error = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}"
    case.seconds = time.time() - t0
    return case
