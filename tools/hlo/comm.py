"""comm.py -- the collectives of an SPMD module as rank k's per-rank
functional collectives (a mixin of lower.Lowering; docs/hlo.md, "How an
SPMD module becomes rank graphs").

Each rank calls the collective on the replica group it belongs to, named
by its members (`{0,1}`); the bundle loader stitches the ranks' calls.  A
group of one rank, and every collective of the spec, is an identity.
"""

from hlo import parse as P
from hlo.shapes import numel


class CommLowering:
    # --- collectives ---------------------------------------------------------------

    def group(self):
        """The replica group of this rank: (name, members); None on a
        group of one (an identity)."""
        ins = self.ins
        groups = P.groups_attr(self.mod, ins, "replica_groups")
        if self.rank is None:
            if any(len(g) > 1 for g in groups):
                self.fail(f"{ins.opcode} on groups {groups} in the spec, which runs on one "
                          f"device")
            return None
        if not groups:
            groups = [list(range(self.nranks))]
        seen = set()
        for g in groups:
            for r in g:
                if r < 0 or r >= self.nranks or r in seen:
                    self.fail(f"replica_groups {groups} do not partition ranks 0..{self.nranks - 1}"
                              f" (--ranks {self.nranks})", col=ins.attrs["replica_groups"][1])
                seen.add(r)
        mine = [g for g in groups if self.rank in g]
        if not mine:
            self.fail(f"rank {self.rank} is in none of the replica_groups {groups}",
                      col=ins.attrs["replica_groups"][1])
        g = sorted(mine[0])
        if len(g) == 1:
            return None
        name = "{" + ",".join(str(r) for r in g) + "}"
        self.collectives.append((name, g))
        return name, g

    def coll_op(self):
        comp = P.comp_attr(self.mod, self.ins, "to_apply")
        kind = self.reducer_kind(comp)
        if kind not in ("sum", "max", "min"):
            self.fail(f"{self.ins.opcode}: reducer {comp.name!r} is not add, maximum or minimum",
                      col=self.ins.attrs["to_apply"][1])
        return kind

    def op_all_reduce(self):
        kind = self.coll_op()
        g = self.group()
        outs = []
        for i in range(len(self.ins.operands)):
            x = self.operand(i)
            if g is None:
                outs.append(self.emit("aten.alias.default", [x.name], x.shape, x.dtype))
            else:
                outs.append(self.emit("_c10d_functional.all_reduce.default",
                                      [x.name, kind, g[0]], x.shape, x.dtype))
        if self.ins.type[0] == "tuple":
            return outs
        if len(outs) != 1:
            self.fail("all-reduce of several operands returns a tuple")
        return outs[0]

    def op_all_reduce_start(self):
        """The async form (scheduled modules): the start does the reduction,
        the done hands its value on."""
        return self.op_all_reduce()

    def op_all_reduce_done(self):
        self.arity(1)
        v = self.env[self.ins.operands[0]]
        if isinstance(v, list):
            return [self.emit("aten.alias.default", [x.name], x.shape, x.dtype) for x in v]
        return self.emit("aten.alias.default", [v.name], v.shape, v.dtype)

    def move_first(self, x, d):
        perm = [d] + [j for j in range(len(x.shape)) if j != d]
        return self.permute(x, perm), perm

    def move_back(self, t, perm):
        inv = [perm.index(j) for j in range(len(perm))]
        return self.permute(t, inv)

    def gather_like(self, what):
        self.arity(1)
        x = self.operand(0)
        dims = P.int_list(self.mod, self.ins, "dimensions")
        if len(dims) != 1 or not 0 <= dims[0] < len(x.shape):
            self.fail(f"{self.ins.opcode} needs dimensions={{d}} within rank {len(x.shape)}")
        return x, dims[0], self.group()

    def op_all_gather(self):
        x, d, g = self.gather_like("all-gather")
        shape, dtype = self.out_type()
        if g is None:
            return self.emit("aten.alias.default", [x.name], shape, dtype)
        n = len(g[1])
        y, perm = self.move_first(x, d)
        r = self.emit("_c10d_functional.all_gather_into_tensor.default", [y.name, n, g[0]],
                      [y.shape[0] * n] + y.shape[1:], dtype)
        return self.move_back(r, perm)

    def op_reduce_scatter(self):
        kind = self.coll_op()
        x, d, g = self.gather_like("reduce-scatter")
        shape, dtype = self.out_type()
        if g is None:
            return self.emit("aten.alias.default", [x.name], shape, dtype)
        n = len(g[1])
        if x.shape[d] % n:
            self.fail(f"reduce-scatter: dim {d} of size {x.shape[d]} does not split {n} ways")
        y, perm = self.move_first(x, d)
        r = self.emit("_c10d_functional.reduce_scatter_tensor.default", [y.name, kind, n, g[0]],
                      [y.shape[0] // n] + y.shape[1:], dtype)
        return self.move_back(r, perm)

    def op_all_to_all(self):
        if self.ins.type[0] == "tuple" or len(self.ins.operands) != 1:
            self.fail("tuple all-to-all is not supported yet; only the array form with "
                      "dimensions={d}")
        x, d, g = self.gather_like("all-to-all")
        shape, dtype = self.out_type()
        if g is None:
            return self.emit("aten.alias.default", [x.name], shape, dtype)
        y, perm = self.move_first(x, d)
        r = self.emit("_c10d_functional.all_to_all_single.default", [y.name, None, None, g[0]],
                      y.shape, dtype)
        return self.move_back(r, perm)

    def op_collective_permute(self):
        """Rank t receives the operand of rank s for each pair {s,t}, zeros
        when it is no target.  Written as an all-gather over every rank and
        the slice of the source's block: the same values (docs/hlo.md)."""
        self.arity(1)
        x = self.operand(0)
        shape, dtype = self.out_type()
        pairs = P.groups_attr(self.mod, self.ins, "source_target_pairs")
        if any(len(p) != 2 for p in pairs):
            self.fail("source_target_pairs must be pairs {source,target}")
        targets = [t for _s, t in pairs]
        if len(set(targets)) != len(targets):
            self.fail("source_target_pairs names a target twice")
        if self.rank is None:
            if any(s != 0 or t != 0 for s, t in pairs):
                self.fail("collective-permute between devices in the spec, which runs on one "
                          "device")
            if not pairs:
                return self.emit("aten.zeros.default", [shape], shape, dtype, {"dtype": dtype})
            return self.emit("aten.alias.default", [x.name], shape, dtype)
        for s, t in pairs:
            if not (0 <= s < self.nranks and 0 <= t < self.nranks):
                self.fail(f"source_target_pairs {pairs} name a rank outside 0..{self.nranks - 1}")
        src = [s for s, t in pairs if t == self.rank]
        everyone = list(range(self.nranks))
        name = "{" + ",".join(str(r) for r in everyone) + "}"
        self.collectives.append((name, everyone))
        flat = self.view(x, [max(1, numel(x.shape))]) if len(x.shape) == 0 else x
        n0 = flat.shape[0]
        g = self.emit("_c10d_functional.all_gather_into_tensor.default",
                      [flat.name, self.nranks, name], [n0 * self.nranks] + flat.shape[1:], dtype)
        if not src:
            return self.emit("aten.zeros.default", [shape], shape, dtype, {"dtype": dtype})
        s = src[0]
        part = self.emit("aten.slice.Tensor", [g.name, 0, s * n0, (s + 1) * n0], flat.shape, dtype)
        return self.view(part, shape)

