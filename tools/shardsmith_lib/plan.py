"""plan.py -- sharding propagation: from a sequential program, a mesh and
input layouts, the steps of a correct distributed implementation (local
operators on shards and the collectives between them), and the mutations
that make it wrong.

The planner runs on numbers as it goes: after every step it rebuilds the
full value from the per-rank pieces (layout.rebuild) and compares it with
the sequential value, so a wrong rule is a PlanError at the step that broke,
never a bundle.  Gradients are made right by construction (the exporter's
numeric check confirms them): every conversion uses a collective whose
backward is its adjoint in a real SPMD run (Megatron's conjugate pairs), and
a replicated input consumed by an operator whose output is not replicated
is passed through copy_to_tp, whose backward sums the ranks' partial
gradients.

Steps replay on any per-rank values (Plan.run), with at most one mutation
in force; the exporter traces that replay.
"""

import torch

from shardcheck_export import comm

from . import layout as L
from .ops import Ctx


class PlanError(Exception):
    """The planner broke its own invariant (a generator bug)."""


# --- send_recv: a point-to-point move, as a custom op of our own namespace ---------

SR_NAMESPACE = "shardsmith_comm"
_SR_LIB = None


def _sr_op():
    global _SR_LIB
    if _SR_LIB is None:
        lib = torch.library.Library(SR_NAMESPACE, "DEF")
        lib.define("send_recv(Tensor[] inputs, int src, int dst) -> Tensor[]")
        lib.impl("send_recv", lambda inputs, src, dst: [inputs[0].clone()],
                 "CompositeExplicitAutograd")
        _SR_LIB = lib
    return getattr(torch.ops, SR_NAMESPACE).send_recv.default


def send_recv(x, src, dst):
    return _sr_op()([x], src, dst)[0]


# --- steps -------------------------------------------------------------------------------

def _close(a, b, tol=1e-7):
    if a.shape != b.shape:
        return False
    if not a.dtype.is_floating_point:
        return bool(torch.equal(a, b))
    if not a.numel():
        return True
    return bool(((a - b).abs() <= tol + tol * b.abs().max()).all())


class LocalStep:
    kind = "local"

    def __init__(self, op, ins, out, in_layouts, out_layout, in_shapes, out_shape, node):
        self.op, self.ins, self.out = op, ins, out
        self.in_layouts, self.out_layout = in_layouts, out_layout
        self.in_shapes, self.out_shape, self.node = in_shapes, out_shape, node

    def mutations(self, mesh, backward):
        out = []
        n = L.nranks(mesh)
        cut_offset = self.op.has_rank_offset() and (
            any(L.is_shard(p) for lay in self.in_layouts for p in lay) or
            any(L.is_shard(p) for p in self.out_layout))
        if cut_offset:
            for r in range(1, n):
                out.append(("mask_offset", {"offset_rank": r}))
        if any(p == "P" for p in self.out_layout):
            name = self.op.name
            if name.startswith("linear+bias") or name in ("add", "sub"):
                out.append(("bias_everywhere", {"bias_everywhere": True}))
            if self.op.family == "loss" or name.startswith("mean"):
                out.append(("wrong_scale", {"local_count": True}))
        return out

    def run(self, env, mesh, mut=None):
        n = L.nranks(mesh)
        res = []
        for r in range(n):
            ctx = Ctx(r, L.coords(mesh, r), mesh, self.in_layouts, self.out_layout,
                      self.in_shapes, self.out_shape, mut)
            res.append(self.op.local([env[i][r] for i in self.ins], ctx))
        env[self.out] = res

    def describe(self):
        return f"{self.op.name} {[L.describe(x) for x in self.in_layouts]} -> " \
               f"{L.describe(self.out_layout)}"


class CommStep:
    """One conversion on mesh dim k, for every group of that mesh dim.
    kind: reduce_from_tp (P->R), all_reduce (P->R, forward only),
    reduce_scatter (P->S), gather_from_tp (S->R), all_gather (S->R, forward
    only), gather_uneven (U->R), scatter_to_tp (R->S), narrow (R->S, local
    narrow after copy_to_tp), all_to_all (S->S), copy_to_tp (R->R),
    send_recv_gather (S->R with point-to-point moves, forward only)."""

    def __init__(self, kind, src, dst, k, shape, in_layout, out_layout, dim=None, dim2=None,
                 backward=False):
        self.kind, self.src, self.dst, self.k = kind, src, dst, k
        self.shape, self.in_layout, self.out_layout = shape, in_layout, out_layout
        self.dim, self.dim2, self.backward = dim, dim2, backward

    def describe(self):
        extra = f" dim={self.dim}" if self.dim is not None else ""
        extra += f"->{self.dim2}" if self.dim2 is not None else ""
        return f"{self.kind}{extra} over mesh dim {self.k}"

    def mutations(self, mesh, backward):
        out = []
        kind = self.kind
        if kind in ("reduce_from_tp", "all_reduce"):
            out.append(("drop", {"drop": True}))
            out.append(("duplicate", {"duplicate": True}))
            out.append(("replace_avg", {"avg": True}))
            if kind == "reduce_from_tp" and backward:
                out.append(("replace_all_reduce", {"plain": True}))
        if kind == "copy_to_tp" and backward:
            out.append(("drop", {"drop": True}))
        if kind in ("gather_from_tp", "all_gather", "gather_uneven", "send_recv_gather"):
            out.append(("drop", {"drop": True}))
            out.append(("rank_order", {"rotate": True}))
            if len(self.shape) > 1:
                out.append(("wrong_dim", {"wrong_dim": True}))
        if kind == "reduce_scatter":
            out.append(("drop", {"drop": True}))
            out.append(("rank_order", {"rotate": True}))
        if kind in ("narrow", "scatter_to_tp"):
            out.append(("shard_offset", {"shift": True}))
        if kind == "all_to_all":
            out.append(("rank_order", {"rotate": True}))
        if len(mesh) > 1 and kind in ("reduce_from_tp", "all_reduce", "copy_to_tp"):
            out.append(("wrong_group", {"group": True}))
        if len(mesh) > 1 and kind in ("gather_from_tp", "all_gather") and \
                mesh[0] == mesh[1]:
            out.append(("wrong_group", {"group": True}))
        return out

    def run(self, env, mesh, mut=None):
        mut = mut or {}
        xs = env[self.src]
        k = self.k
        if mut.get("group"):
            k = 1 - k
        out = list(xs)
        for g in L.groups(mesh, k):
            if mut.get("rotate"):
                gi = g[1:] + g[:1]
            else:
                gi = g
            ys = self._apply([xs[r] for r in gi], gi, mesh, mut)
            for r, y in zip(gi, ys):
                out[r] = y
        env[self.dst] = out

    def _apply(self, xs, g, mesh, mut):
        kind, d = self.kind, self.dim
        m = len(xs)
        bwd = self.backward
        if mut.get("drop"):
            if kind in ("reduce_from_tp", "all_reduce", "copy_to_tp"):
                return [x * 1.0 for x in xs]
            if kind == "reduce_scatter":
                return [torch.chunk(x, m, d)[i] for i, x in enumerate(xs)]
            if kind in ("gather_from_tp", "all_gather", "send_recv_gather", "gather_uneven"):
                ys = [torch.cat([x] * m, d) for x in xs]
                if kind == "gather_uneven":
                    ys = [y.narrow(d, 0, self.shape[d]) for y in ys]
                return ys
        if kind == "reduce_from_tp":
            if mut.get("avg"):
                return comm.all_reduce(xs, "avg")
            if mut.get("plain"):
                return comm.all_reduce(xs)
            ys = comm.reduce_from_tp(xs)
            if mut.get("duplicate"):
                ys = comm.reduce_from_tp(ys)
            return ys
        if kind == "all_reduce":
            ys = comm.all_reduce(xs, "avg" if mut.get("avg") else "sum")
            if mut.get("duplicate"):
                ys = comm.all_reduce(ys)
            return ys
        if kind == "copy_to_tp":
            return comm.copy_to_tp(xs)
        if kind == "reduce_scatter":
            return comm.reduce_scatter(xs, d)
        if kind in ("gather_from_tp", "all_gather", "gather_uneven"):
            gd = d
            if mut.get("wrong_dim"):
                gd = (d + 1) % len(self.shape)
            ys = comm.gather_from_tp(xs, gd) if (bwd and kind != "all_gather") else \
                comm.all_gather(xs, gd)
            if gd != d:
                want = list(xs[0].shape)
                want[d] *= m
                ys = [y.reshape(want) for y in ys]
            if kind == "gather_uneven":
                ys = [y.narrow(d, 0, self.shape[d]) for y in ys]
            return ys
        if kind == "send_recv_gather":
            ys = []
            for i in range(m):
                parts = [xs[j] if j == i else send_recv(xs[j], g[j], g[i]) for j in range(m)]
                ys.append(torch.cat(parts, d))
            return ys
        if kind == "scatter_to_tp":
            if mut.get("shift"):
                return self._narrow(comm.copy_to_tp(xs) if bwd else xs, m, d, True)
            return comm.scatter_to_tp(xs, d)
        if kind == "narrow":
            src = comm.copy_to_tp(xs) if bwd and xs[0].dtype.is_floating_point else xs
            return self._narrow(src, m, d, mut.get("shift"))
        if kind == "all_to_all":
            return comm.all_to_all(xs, self.dim2, d)
        raise PlanError(f"unknown conversion {kind}")

    @staticmethod
    def _narrow(xs, m, d, shift):
        out = []
        for i, x in enumerate(xs):
            w = x.shape[d] // m
            j = (i + 1) % m if shift and i == m - 1 else i
            out.append(x.narrow(d, j * w, w))
        return out


# --- the plan -------------------------------------------------------------------------------

class Plan:
    def __init__(self, mesh, backward):
        self.mesh, self.backward = tuple(mesh), backward
        self.steps = []
        self.input_layouts = {}       # input name -> layout
        self.output_layouts = {}      # program output name -> layout
        self.output_values = {}       # program output name -> impl value id

    def run(self, inputs, mutation=None):
        """inputs: name -> per-rank list.  Returns name -> per-rank list of
        every program output.  mutation: (step index, dict) or None."""
        env = dict(inputs)
        for i, st in enumerate(self.steps):
            mut = mutation[1] if mutation is not None and mutation[0] == i else None
            st.run(env, self.mesh, mut)
        return {k: env[v] for k, v in self.output_values.items()}

    def live_steps(self):
        """Indices of the steps whose result reaches a program output."""
        need = set(self.output_values.values())
        live = set()
        for i in range(len(self.steps) - 1, -1, -1):
            st = self.steps[i]
            out = st.out if st.kind == "local" else st.dst
            if out in need:
                live.add(i)
                need.update(st.ins if st.kind == "local" else [st.src])
        return live

    def mutations(self):
        """(step, name, mutation) for every place of every kind of bug, on
        the steps that reach an output."""
        out = []
        live = self.live_steps()
        for i, st in enumerate(self.steps):
            if i not in live:
                continue
            for name, m in st.mutations(self.mesh, self.backward):
                out.append((i, name, m))
        return out


class Planner:
    """Walks the program in order, deciding each operator's layouts."""

    def __init__(self, prog, mesh, backward, rng, values):
        self.prog, self.mesh, self.backward, self.rng = prog, tuple(mesh), backward, rng
        self.plan = Plan(mesh, backward)
        self.values = values                  # value id -> full tensor (sequential)
        self.env = {}                         # impl value id -> per-rank tensors
        self.layout = {}                      # impl value id -> layout
        self.home = {}                        # program value id -> impl value id
        self.conv = {}                        # (impl id, layout) -> impl id
        self.counter = 0

    def fresh(self, base):
        self.counter += 1
        return f"{base}~{self.counter}"

    # -- conversions --------------------------------------------------------------------
    def can_convert(self, shape, lay, k, want):
        cur = lay[k]
        if cur == want:
            return True
        m = self.mesh[k]
        loc = L.local_shape(shape, lay, self.mesh)
        if want == "R":
            return True
        if want == "P":
            return False
        if L.is_uneven(want):
            return False
        d = want[1]
        other = [L.cut_dim(p) for j, p in enumerate(lay) if j != k and L.cut_dim(p) is not None]
        if d in other or d >= len(shape) or shape[d] % m:
            return False
        if cur == "R":
            return loc[d] % m == 0
        if cur == "P":
            return loc[d] % m == 0
        if L.is_shard(cur):
            return loc[d] % m == 0
        return False

    def convert(self, vid, shape, k, want, dtype_float):
        lay = self.layout[vid]
        cur = lay[k]
        if cur == want:
            return vid
        key = (vid, k, want)
        if key in self.conv:
            return self.conv[key]
        new = list(lay)
        new[k] = want
        new = tuple(new)
        fwd_only = not self.backward
        if want == "R":
            if cur == "P":
                kind = "reduce_from_tp" if self.backward or self.rng.random() < 0.5 else "all_reduce"
                dim = None
            elif L.is_shard(cur):
                r = self.rng.random()
                if fwd_only and r < 0.2:
                    kind = "send_recv_gather"
                elif fwd_only and r < 0.5:
                    kind = "all_gather"
                else:
                    kind = "gather_from_tp"
                dim = cur[1]
            else:
                kind, dim = "gather_uneven", cur[1]
            step = CommStep(kind, vid, None, k, shape, lay, new, dim=dim, backward=self.backward)
        elif cur == "R":
            kind = "scatter_to_tp" if self.rng.random() < 0.5 else "narrow"
            step = CommStep(kind, vid, None, k, shape, lay, new, dim=want[1], backward=self.backward)
        elif cur == "P":
            step = CommStep("reduce_scatter", vid, None, k, shape, lay, new, dim=want[1],
                            backward=self.backward)
        else:
            step = CommStep("all_to_all", vid, None, k, shape, lay, new, dim=cur[1], dim2=want[1],
                            backward=self.backward)
        if not dtype_float and step.kind in ("reduce_from_tp", "all_reduce", "reduce_scatter"):
            raise PlanError("partial integer tensor")
        out = self.fresh(vid.split("~")[0])
        step.dst = out
        self.emit(step, out, new, shape)
        self.conv[key] = out
        return out

    def emit(self, step, out, lay, shape, full=None):
        step.run(self.env, self.mesh)
        self.plan.steps.append(step)
        self.layout[out] = lay
        want = full
        if want is None:
            want = self.values[out.split("~")[0]]
        got = L.rebuild(self.env[out], lay, self.mesh, list(shape))
        if not _close(got, want):
            raise PlanError(f"step {step.describe()} gives a wrong value for {out} "
                            f"({L.describe(lay)})")

    def to_layout(self, vid, shape, want, is_float):
        """Convert value vid to layout `want`, mesh dim by mesh dim: first the
        dims that go to R, then the others (so no two mesh dims cut one dim
        on the way)."""
        lay = self.layout[vid]
        order = [k for k in range(len(want)) if want[k] == "R"] + \
                [k for k in range(len(want)) if want[k] != "R"]
        for k in order:
            if self.layout[vid][k] == want[k]:
                continue
            if not self.can_convert(shape, self.layout[vid], k, want[k]):
                # through R
                vid = self.convert(vid, shape, k, "R", is_float)
                if want[k] == "R":
                    continue
                if not self.can_convert(shape, self.layout[vid], k, want[k]):
                    raise PlanError(f"cannot reach {want} from {lay}")
            vid = self.convert(vid, shape, k, want[k], is_float)
        return vid

    # -- inputs ------------------------------------------------------------------------------
    def add_input(self, name, full, lay, per_rank):
        self.env[name] = per_rank
        self.layout[name] = tuple(lay)
        self.home[name] = name
        self.plan.input_layouts[name] = tuple(lay)

    # -- operators ---------------------------------------------------------------------------
    def options_for(self, op, k, ps, shapes, out_shape):
        opts = list(op.strategy(k, ps, shapes, out_shape))
        opts.append((["R"] * len(ps), "R"))
        return opts

    def node(self, nd):
        op = nd.op
        ins = [self.home[i] for i in nd.ins]
        shapes = [list(self.values[i].shape) for i in nd.ins]
        floats = [self.values[i].dtype.is_floating_point for i in nd.ins]
        out_shape = list(self.values[nd.out].shape)
        cur = [self.layout[v] for v in ins]
        nmesh = len(self.mesh)
        req = [[None] * nmesh for _ in ins]
        out_lay = [None] * nmesh
        for k in range(nmesh):
            ps = [lay[k] for lay in cur]
            opts = self.options_for(op, k, ps, shapes, out_shape)
            good = []
            for rq, o in opts:
                if len(rq) != len(ins):
                    continue
                ok = True
                for j, p in enumerate(rq):
                    test = list(req[j])
                    test[k] = p
                    if not L.valid(tuple(x if x is not None else "R" for x in test),
                                   shapes[j], self.mesh):
                        ok = False
                    if p != ps[j] and not self._reachable(shapes[j], cur[j], k, p):
                        ok = False
                    if p == "P" and ps[j] != "P":
                        ok = False
                    if L.is_uneven(p) and ps[j] != p:
                        ok = False
                ot = list(out_lay)
                ot[k] = o
                if not L.valid(tuple(x if x is not None else "R" for x in ot), out_shape,
                               self.mesh):
                    ok = False
                if o == "P" and nd.op.nondiff:
                    ok = False
                if sum(1 for x in ot if x == "P") > 1 and o == "P":
                    ok = False
                if ok:
                    cost = sum(1 for j, p in enumerate(rq) if p != ps[j])
                    good.append((cost, rq, o))
            if self.rng.random() < 0.2:
                cost, rq, o = self.rng.choice(good)
            else:
                best = min(c for c, _, _ in good)
                cost, rq, o = self.rng.choice([g for g in good if g[0] == best])
            for j, p in enumerate(rq):
                req[j][k] = p
            out_lay[k] = o
        out_lay = tuple(out_lay)
        # convert the inputs
        new_ins = []
        for j, v in enumerate(ins):
            want = tuple(req[j])
            v = self.to_layout(v, shapes[j], want, floats[j])
            # replicated operands of a non-replicated result: sum their gradients
            if self.backward and floats[j]:
                for k in range(nmesh):
                    if want[k] == "R" and out_lay[k] != "R":
                        st = CommStep("copy_to_tp", v, None, k, shapes[j], want, want,
                                      backward=True)
                        nv = self.fresh(v.split("~")[0])
                        st.dst = nv
                        self.emit(st, nv, want, shapes[j])
                        v = nv
            new_ins.append(v)
        in_lays = [self.layout[v] for v in new_ins]
        st = LocalStep(op, new_ins, nd.out, in_lays, out_lay, shapes, out_shape, nd)
        self.emit(st, nd.out, out_lay, out_shape)
        self.home[nd.out] = nd.out
        # sometimes move the result to another layout right away
        if self.rng.random() < 0.15:
            self.reshard(nd.out, out_shape, self.values[nd.out].dtype.is_floating_point)

    def _reachable(self, shape, lay, k, p):
        if p == "R":
            return True
        if self.can_convert(shape, lay, k, p):
            return True
        via = list(lay)
        via[k] = "R"
        return self.can_convert(shape, tuple(via), k, p)

    def reshard(self, vid, shape, is_float):
        lay = self.layout[vid]
        k = self.rng.randrange(len(self.mesh))
        cands = ["R"] + [("S", d) for d in range(len(shape))]
        self.rng.shuffle(cands)
        for c in cands:
            if c == lay[k]:
                continue
            test = list(lay)
            test[k] = c
            if L.valid(tuple(test), shape, self.mesh) and self._reachable(shape, lay, k, c):
                if not is_float and c != "R" and lay[k] == "P":
                    continue
                nv = self.to_layout(vid, shape, tuple(test), is_float)
                self.home[vid.split("~")[0]] = nv
                return

    def finish(self, outputs):
        for name, vid in outputs.items():
            v = self.home[vid]
            shape = list(self.values[vid].shape)
            lay = self.layout[v]
            if self.rng.random() < 0.5 and any(p != "R" for p in lay):
                v = self.to_layout(v, shape, tuple("R" for _ in lay),
                                   self.values[vid].dtype.is_floating_point)
            self.plan.output_layouts[name] = self.layout[v]
            self.plan.output_values[name] = v
        return self.plan
