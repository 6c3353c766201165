"""export.py -- from a user's sequential and distributed code to a bundle.

The user describes one export with an Export: the sequential function
(spec), the distributed one with simulated ranks (impl: every argument is
the list of per-rank tensors, every result a list of per-rank tensors), the
inputs with their shapes and placements (the input relation), and the
placement of every output (the expected output relation).  build_bundle()
then
  1. makes example values, cuts them with the placements, runs both
     functions eagerly (with gradients of every Param in backward mode);
  2. captures both at ATen level (capture.py), with readable names:
     spec inputs are the user's names, impl inputs NAME_RANK, tangents
     grad_OUT, gradients grad_PARAM;
  3. writes input_relation and expect_output_relation from the placements:
     each output where the user said it lives, each Param's gradient laid
     out like the Param (replicated -> whole on every rank);
  4. confirms on numbers that the input relation rebuilds every input, that
     every expected output relation holds, and that both captured graphs,
     run with torch (interp.py), compute what the eager code computed.
Anything that fails in 4 is an ExportError (or, with allow_mismatch, a
warning: a model that is wrong on purpose).
"""

import os

import torch

from . import capture as cap
from . import expr as rexpr
from . import interp
from .placement import Placement, Replicate

FORMAT = "shardcheck-bundle/1"


class ExportError(Exception):
    """The export cannot be done as described (a user error)."""


class NumericMismatch(ExportError):
    """A relation or a captured graph does not hold on numbers."""


class Input:
    """A tensor the functions take.  placement says how impl holds it.
    values=(lo, hi) gives the value range of an integer input (token ids);
    init(shape, generator) -> tensor overrides the random example."""
    requires_grad = False

    def __init__(self, shape, placement=None, dtype=torch.float32, values=None,
                 init=None, scale=1.0):
        self.shape = tuple(int(s) for s in shape)
        self.placement = placement if placement is not None else Replicate()
        self.dtype = dtype
        self.values = values
        self.init = init
        self.scale = scale
        if not isinstance(self.placement, Placement):
            raise TypeError(f"placement must be a Placement, not {self.placement!r}")

    def example(self, gen):
        if self.init is not None:
            t = self.init(self.shape, gen)
        elif self.dtype.is_floating_point:
            t = torch.randn(self.shape, generator=gen, dtype=self.dtype) * self.scale
        elif self.dtype == torch.bool:
            t = torch.randint(0, 2, self.shape, generator=gen).bool()
        else:
            lo, hi = self.values if self.values is not None else (0, 9)
            t = torch.randint(int(lo), int(hi) + 1, self.shape, generator=gen, dtype=self.dtype)
        if tuple(t.shape) != self.shape or t.dtype != self.dtype:
            raise ExportError(f"example has shape {tuple(t.shape)} {t.dtype}, "
                              f"declared {self.shape} {self.dtype}")
        return t


class Param(Input):
    """A trainable tensor: in backward mode its gradient is an output, and
    it is expected laid out like the parameter."""
    requires_grad = True


class Export:
    """One bundle to write.  The bundle is named NAME-fwd / NAME-fwdbwd and
    written to that name + ".json", unless bundle_name (the bundle's "name",
    as it stands) or filename (the file in the output directory) say
    otherwise: a model whose bundles are already known by other names."""

    def __init__(self, name, spec, impl, degree, inputs, outputs, description="",
                 rtol=1e-4, atol=1e-5, expect_mismatch=False, bundle_name=None,
                 filename=None):
        self.name, self.spec, self.impl, self.degree = name, spec, impl, int(degree)
        self.bundle_name, self.filename = bundle_name, filename
        if filename is not None and (os.sep in filename or not filename.endswith(".json")):
            raise ExportError(f"filename {filename!r}: expected a NAME.json in the output "
                              f"directory")
        # a model wrong on purpose: some expected relation must fail on numbers
        self.expect_mismatch = expect_mismatch
        self.inputs, self.outputs = dict(inputs), dict(outputs)
        self.description, self.rtol, self.atol = description, rtol, atol
        if self.degree < 1:
            raise ExportError("degree must be at least 1")
        for k, p in self.outputs.items():
            if not isinstance(p, Placement):
                raise TypeError(f"output {k}: placement must be a Placement")


def _rank_name(name, r):
    return f"{name}_{r}"


def _close(a, b, rtol, atol):
    if a.shape != b.shape:
        return False, float("inf")
    if not a.dtype.is_floating_point:
        return bool(torch.equal(a, b)), 0.0
    a, b = a.double(), b.double()
    err = (a - b).abs().max().item() if a.numel() else 0.0
    scale = b.abs().max().item() if b.numel() else 0.0
    return err <= atol + rtol * scale, err


def _as_list(v, n, what):
    if isinstance(v, torch.Tensor) or not isinstance(v, (list, tuple)) or len(v) != n:
        raise ExportError(f"{what}: expected a list of {n} per-rank tensors")
    return list(v)


class _Plan:
    """Everything about one export that both capture and numerics need."""

    def __init__(self, exp, backward, seed):
        self.exp, self.backward, self.n = exp, backward, exp.degree
        gen = torch.Generator().manual_seed(seed)
        self.full = {k: spec.example(gen) for k, spec in exp.inputs.items()}
        try:
            self.shards = {k: exp.inputs[k].placement.shards(v, self.n)
                           for k, v in self.full.items()}
        except ValueError as e:
            raise ExportError(f"cannot place the inputs on {self.n} ranks: {e}") from None
        self.params = [k for k, s in exp.inputs.items() if s.requires_grad]
        if backward and not self.params:
            raise ExportError("backward export: no Param among the inputs")
        # forward values (eager) decide which outputs get tangents
        outs = self.call_spec(self.full, grad=backward)
        self.out_names = list(exp.outputs)
        self.grad_outs = [k for k in self.out_names
                          if backward and outs[k].requires_grad]
        self.tangents = {k: torch.randn(outs[k].shape, generator=gen, dtype=outs[k].dtype)
                         for k in self.grad_outs}
        self.tangent_shards = {k: exp.outputs[k].grad_placement().shards(v, self.n)
                               for k, v in self.tangents.items()}

    # -- the user's functions, flat --------------------------------------------
    def call_spec(self, values, grad):
        vals = {k: (v.detach().requires_grad_(grad and k in self.params)
                    if isinstance(v, torch.Tensor) else v) for k, v in values.items()}
        outs = self.exp.spec(**vals)
        if not isinstance(outs, dict) or set(outs) != set(self.exp.outputs):
            raise ExportError(f"spec must return a dict with keys "
                              f"{sorted(self.exp.outputs)}, got {outs!r:.200}")
        return outs

    def spec_fn(self):
        keys, params = list(self.exp.inputs), self.params

        def _sc_spec_call(*flat):
            vals = dict(zip(keys, flat[:len(keys)]))
            tang = flat[len(keys):]
            outs = self.exp.spec(**vals)
            if not isinstance(outs, dict) or set(outs) != set(self.exp.outputs):
                raise ExportError(f"spec must return a dict with keys {sorted(self.exp.outputs)}")
            res = [outs[k] for k in self.out_names]
            if self.backward:
                gs = torch.autograd.grad([outs[k] for k in self.grad_outs],
                                         [vals[p] for p in params], list(tang),
                                         allow_unused=True)
                for p, g in zip(params, gs):
                    if g is None:
                        raise ExportError(f"spec: parameter {p} gets no gradient")
                res += list(gs)
            return res
        return _sc_spec_call

    def impl_fn(self):
        keys, params, n = list(self.exp.inputs), self.params, self.n

        def _sc_impl_call(*flat):
            vals = {k: list(flat[i * n:(i + 1) * n]) for i, k in enumerate(keys)}
            rest = flat[len(keys) * n:]
            tang = {k: list(rest[i * n:(i + 1) * n]) for i, k in enumerate(self.grad_outs)}
            outs = self.exp.impl(**vals)
            if not isinstance(outs, dict) or set(outs) != set(self.exp.outputs):
                raise ExportError(f"impl must return a dict with keys {sorted(self.exp.outputs)}")
            outs = {k: _as_list(v, n, f"impl output {k}") for k, v in outs.items()}
            res = [t for k in self.out_names for t in outs[k]]
            if self.backward:
                ys, gys = [], []
                for k in self.grad_outs:
                    for r in range(n):
                        if outs[k][r].requires_grad:
                            ys.append(outs[k][r])
                            gys.append(tang[k][r])
                xs = [vals[p][r] for p in params for r in range(n)]
                gs = torch.autograd.grad(ys, xs, gys, allow_unused=True)
                for i, g in enumerate(gs):
                    if g is None:
                        raise ExportError(f"impl: parameter {params[i // n]} gets no "
                                          f"gradient on rank {i % n}")
                res += list(gs)
            return res
        return _sc_impl_call

    # -- flat argument lists and names -----------------------------------------
    def spec_args(self):
        args = [self.full[k].clone().requires_grad_(self.backward and k in self.params)
                for k in self.exp.inputs]
        args += [self.tangents[k].clone() for k in self.grad_outs]
        return args

    def spec_input_names(self):
        return list(self.exp.inputs) + [f"grad_{k}" for k in self.grad_outs]

    def spec_output_names(self):
        return self.out_names + ([f"grad_{p}" for p in self.params] if self.backward else [])

    def impl_args(self):
        args = [s.clone().requires_grad_(self.backward and k in self.params)
                for k in self.exp.inputs for s in self.shards[k]]
        args += [t.clone() for k in self.grad_outs for t in self.tangent_shards[k]]
        return args

    def impl_input_names(self):
        return [_rank_name(k, r) for k in self.exp.inputs for r in range(self.n)] + \
               [_rank_name(f"grad_{k}", r) for k in self.grad_outs for r in range(self.n)]

    def impl_input_ranks(self):
        return [r for _ in range(len(self.exp.inputs) + len(self.grad_outs))
                for r in range(self.n)]

    def impl_output_names(self):
        names = [_rank_name(k, r) for k in self.out_names for r in range(self.n)]
        if self.backward:
            names += [_rank_name(f"grad_{p}", r) for p in self.params for r in range(self.n)]
        return names


def build_bundle(exp, backward=False, seed=0, src_root=None, allow_mismatch=False,
                 log=None):
    """Capture exp and return (bundle dict, list of numeric-check lines)."""
    log = log or (lambda msg: None)
    plan = _Plan(exp, backward, seed)
    n = plan.n
    for nm in list(exp.inputs) + list(exp.outputs):
        for other in list(exp.inputs) + list(exp.outputs):
            if other != nm and any(other == _rank_name(nm, r) for r in range(n)):
                raise ExportError(f"names {nm!r} and {other!r} collide once per-rank "
                                  f"names are formed")
    values = {}
    for k, s in exp.inputs.items():
        if s.values is not None:
            values[k] = {"min": int(s.values[0]), "max": int(s.values[1])}
    impl_values = {_rank_name(k, r): v for k, v in values.items() for r in range(n)}

    spec_graph, spec_outs = cap.capture(plan.spec_fn(), plan.spec_args(),
                                        plan.spec_input_names(), plan.spec_output_names(),
                                        src_root=src_root, values=values)
    impl_graph, impl_outs = cap.capture(plan.impl_fn(), plan.impl_args(),
                                        plan.impl_input_names(), plan.impl_output_names(),
                                        src_root=src_root, ranks=plan.impl_input_ranks(),
                                        values=impl_values)

    # relations
    input_relation = {}
    for k, s in exp.inputs.items():
        input_relation[k] = s.placement.exprs([_rank_name(k, r) for r in range(n)],
                                              list(plan.full[k].shape))
    for k in plan.grad_outs:
        input_relation[f"grad_{k}"] = exp.outputs[k].grad_placement().exprs(
            [_rank_name(f"grad_{k}", r) for r in range(n)], list(plan.tangents[k].shape))
    expect = {}
    spec_out_names = plan.spec_output_names()
    for i, k in enumerate(plan.out_names):
        names = impl_outs[i * n:(i + 1) * n]
        shape = spec_graph_shape(spec_graph, spec_outs[i])
        expect[spec_outs[i]] = exp.outputs[k].exprs(names, shape)
    if backward:
        base = len(plan.out_names)
        for j, p in enumerate(plan.params):
            names = impl_outs[(base + j) * n:(base + j + 1) * n]
            expect[spec_outs[base + j]] = exp.inputs[p].placement.exprs(
                names, list(plan.full[p].shape))

    # numbers
    lines, bad, bad_rel = [], [], []

    def check(label, got, want, relation=False):
        ok, err = _close(got, want, exp.rtol, exp.atol)
        lines.append(f"{'ok  ' if ok else 'FAIL'} {label}  (max abs err {err:.3g})")
        if not ok:
            (bad_rel if relation else bad).append(label)

    spec_in = dict(zip(plan.spec_input_names(), plan.spec_args()))
    impl_in = dict(zip(plan.impl_input_names(), plan.impl_args()))
    for k, exprs in input_relation.items():
        for e in exprs:
            check(f"input {k} = {e}", rexpr.evaluate(e, impl_in), spec_in[k])
    spec_eager = plan.spec_fn()(*plan.spec_args())
    impl_eager = plan.impl_fn()(*plan.impl_args())
    spec_env = dict(zip(spec_outs, [t.detach() for t in spec_eager]))
    impl_env = dict(zip(impl_outs, [t.detach() for t in impl_eager]))
    for k, exprs in expect.items():
        for e in exprs:
            check(f"output {k} = {e}", rexpr.evaluate(e, impl_env), spec_env[k], True)
    with torch.no_grad():
        spec_run = interp.run_graph(spec_graph, spec_in)
        impl_run = interp.run_graph(impl_graph, impl_in)
    for nm in spec_outs:
        check(f"captured spec graph computes {nm}", spec_run[nm], spec_env[nm])
    for nm in impl_outs:
        check(f"captured impl graph computes {nm}", impl_run[nm], impl_env[nm])
    for line in lines:
        log(line)
    if exp.expect_mismatch:
        if not bad_rel:
            bad.append("the model is marked expect_mismatch (wrong on purpose) "
                       "but every expected output relation held")
        else:
            log(f"expected mismatch found ({len(bad_rel)} relation(s) fail on numbers, "
                f"as this model intends)")
    else:
        bad += bad_rel
    if bad:
        msg = f"{exp.name}: {len(bad)} numeric check(s) failed: " + "; ".join(bad[:5])
        if not allow_mismatch:
            raise NumericMismatch(msg)
        log("warning: " + msg + " (written anyway: --allow-mismatch)")

    mode = "forward and backward" if backward else "forward"
    desc = exp.description.strip()
    desc = (desc + " " if desc else "") + (
        f"Degree {n}, {mode}; captured at ATen level by shardcheck-export "
        f"with torch {torch.__version__}.")
    bundle = {
        "format": FORMAT,
        "name": bundle_name(exp, backward),
        "description": desc,
        "symbols": {},
        "assume": [],
        "spec": spec_graph,
        "impl": impl_graph,
        "input_relation": input_relation,
        "expect_output_relation": expect,
    }
    return bundle, lines


def spec_graph_shape(graph, name):
    for t in graph["inputs"]:
        if t["name"] == name:
            return t["shape"]
    for e in graph["nodes"]:
        for o in e["outputs"]:
            if o is not None and o["name"] == name:
                return o.get("shape")
    raise ExportError(f"spec output {name} not found in the graph")


def bundle_name(exp, backward):
    if getattr(exp, "bundle_name", None):
        return exp.bundle_name
    return f"{exp.name}-{'fwdbwd' if backward else 'fwd'}"
