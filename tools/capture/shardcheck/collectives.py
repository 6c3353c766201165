"""collectives.py -- torch.distributed calls as the bundle's functional
per-rank collectives (bundle-format.md, "Per-rank implementation graphs").

Torch 1.13's process groups dispatch in-place `c10d.*` operators
(`c10d.allreduce_`, `allgather_`, `reduce_scatter_`, `alltoall_`,
`broadcast_`, `send`, `recv_`), which the recorder (record.py) sees.  They
do not say which group, reduction or peer; the ProcessGroup methods that
torch.distributed calls do, so while a capture runs those methods are
wrapped: each leaves a context (group, options, peer, tag) that the c10d
operator it dispatches consumes.  A c10d operator without a context, or a
context that no operator consumes (a call that bypasses the dispatcher,
such as 1.13's all_to_all_single), is a CaptureError: nothing is guessed.

Each call is written functionally, its results new names:
  allreduce_   -> _c10d_functional.all_reduce(x, op, group)
  allgather_   -> _c10d_functional.all_gather_into_tensor(x, n, group),
                  then output k = slice k of n along dim 0
  reduce_scatter_ -> cat(inputs, 0), _c10d_functional.reduce_scatter_tensor
  alltoall_    -> cat(inputs, 0), _c10d_functional.all_to_all_single,
                  then output k = slice k
  broadcast_   -> _c10d_functional.broadcast(x, src, group) (src global)
  send         -> comm.send(x, dst, tag)           (dst global, no result)
  recv_        -> comm.recv(src, tag), the result with x's shape and dtype
  barrier      -> nothing (no data moves)
Torch 2.x traces `_c10d_functional.*` itself; this module is for 1.x's
in-place operators (docs/capture.md).  Only all_reduce, all_gather,
broadcast, send and recv run under gloo, so reduce_scatter_ and alltoall_
are written by the same rules but untested here.
"""

import torch
import torch.distributed as dist

from .record import CaptureError, TRef, ttype

_REDUCE = None


def _reduce_name(op):
    global _REDUCE
    if _REDUCE is None:
        R = dist.ReduceOp
        _REDUCE = [(R.SUM, "sum"), (R.MAX, "max"), (R.MIN, "min"), (R.PRODUCT, "product")]
        if hasattr(R, "AVG"):
            _REDUCE.append((R.AVG, "avg"))
    for k, v in _REDUCE:
        if op == k:
            return v
    raise CaptureError(f"reduction {op} has no bundle name")


_METHODS = ("allreduce", "allgather", "broadcast", "send", "recv", "reduce_scatter",
            "alltoall", "alltoall_base", "barrier", "allreduce_coalesced",
            "allgather_coalesced", "reduce", "gather", "scatter", "recv_anysource",
            "monitored_barrier")
# c10d operator -> the ProcessGroup method that dispatches it
_OP_METHOD = {"allreduce_": "allreduce", "allgather_": "allgather",
              "broadcast_": "broadcast", "send": "send", "recv_": "recv",
              "reduce_scatter_": "reduce_scatter", "alltoall_": "alltoall",
              "barrier": "barrier"}


class Context:
    """Wraps the ProcessGroup methods while active (`with Context():`)."""

    def __init__(self):
        self.pending = []       # [method, pg, args], innermost last
        self.saved = {}
        self.groups = {}        # group name -> global ranks
        self.failure = None
        self.snaps = []         # (recorder, name, tensor): values to take (flush)

    # -- groups -------------------------------------------------------------------
    def group_name(self, pg):
        c10d = dist.distributed_c10d
        ranks_of = c10d._pg_group_ranks
        if pg not in ranks_of:
            raise CaptureError("a collective on a process group torch.distributed does "
                               "not know")
        if pg is c10d._get_default_group():
            name = "world"
        else:
            name = f"group{list(ranks_of).index(pg)}"
        self.groups[name] = sorted(ranks_of[pg])
        return name

    @staticmethod
    def global_rank(pg, group_rank):
        for g, l in dist.distributed_c10d._pg_group_ranks[pg].items():
            if l == group_rank:
                return g
        raise CaptureError(f"rank {group_rank} is not in the group")

    # -- wrapping -------------------------------------------------------------------
    def __enter__(self):
        PG = dist.ProcessGroup
        for m in _METHODS:
            if m not in PG.__dict__:
                continue
            orig = PG.__dict__[m]
            self.saved[m] = orig
            setattr(PG, m, self._wrap(m, orig))
        return self

    def __exit__(self, *exc):
        PG = dist.ProcessGroup
        for m, orig in self.saved.items():
            setattr(PG, m, orig)
        self.saved = {}
        return False

    def _wrap(self, method, orig):
        ctx = self

        def wrapped(pg, *args, **kwargs):
            entry = [method, pg, args, False]
            ctx.pending.append(entry)
            try:
                work = orig(pg, *args, **kwargs)
            finally:
                ctx.pending.pop()
            if not entry[3] and ctx.failure is None and method != "barrier":
                ctx.failure = CaptureError(
                    f"ProcessGroup.{method} ran without dispatching a c10d operator in "
                    f"torch {torch.__version__} (e.g. all_to_all_single): the recorder "
                    f"cannot see which tensors it reads and writes")
                raise ctx.failure
            return work
        wrapped.__name__ = method
        return wrapped

    def flush(self):
        """Take the values of the collectives recorded so far (replay.py).
        Gloo finishes a collective in a worker thread, and only the wait
        that torch.distributed makes after the ProcessGroup call (which
        may not be repeated: a recv waited twice waits for a second
        message) makes its result final; so the values are taken at the
        next operator the program runs, or at the end of the step."""
        snaps, self.snaps = self.snaps, []
        for rec, name, value in snaps:
            rec.note_moved(name, value)

    def note_functional(self, func, args):
        """torch 2.x's _c10d_functional ops name their group (last string
        argument); record its members (documented API: get_process_group_ranks
        of the group _resolve_process_group gives).  Untested here (torch 1.13)."""
        name = next((a for a in reversed(args) if isinstance(a, str)), None)
        if name is None or name in self.groups:
            return
        c10d = dist.distributed_c10d
        resolve = getattr(c10d, "_resolve_process_group", None)
        if resolve is None or not hasattr(dist, "get_process_group_ranks"):
            raise CaptureError(f"{func}: this torch cannot tell the members of group {name!r}")
        self.groups[name] = sorted(dist.get_process_group_ranks(resolve(name)))

    # -- recording ------------------------------------------------------------------
    def record(self, rec, func, args, kwargs):
        opname = func._schema.name.split("::")[1]
        method = _OP_METHOD.get(opname)
        if method is None:
            raise CaptureError(f"c10d.{opname}: a collective shardcheck-capture does not "
                               f"write yet")
        entry = next((e for e in reversed(self.pending) if e[0] == method and not e[3]), None)
        if entry is None:
            raise CaptureError(f"c10d.{opname} dispatched outside the ProcessGroup.{method} "
                               f"call that torch.distributed makes: its group is unknown")
        entry[3] = True
        _, pg, pargs, _ = entry
        note = lambda name, value: self.snaps.append((rec, name, value))  # noqa: E731
        # read the inputs' names before the call writes into them
        out = func(*args, **kwargs)
        if opname == "barrier":
            return out
        group = self.group_name(pg)
        n = len(self.groups[group])
        where = f"c10d.{opname}"
        if opname == "allreduce_":
            op = _reduce_name(pargs[1].reduceOp if len(pargs) > 1 else dist.ReduceOp.SUM)
            for t in args[0]:
                x = rec.name(t, where)
                rec.mutated(t, where)
                res = rec.new_result(t, "all_reduce", where)
                note(res["name"], t)
                rec.add_node("_c10d_functional.all_reduce.default", [TRef(x), op, group], {}, [res])
        elif opname == "allgather_":
            outs, ins = args[0], args[1]
            for lst, x in zip(outs, ins):
                self._gather(rec, lst, x, n, group, where, note)
        elif opname == "broadcast_":
            root = pargs[1].rootRank if len(pargs) > 1 else 0
            src = self.global_rank(pg, root)
            for t in args[0]:
                x = rec.name(t, where)
                rec.mutated(t, where)
                res = rec.new_result(t, "broadcast", where)
                note(res["name"], t)
                rec.add_node("_c10d_functional.broadcast.default", [TRef(x), src, group], {}, [res])
        elif opname == "send":
            dst = self.global_rank(pg, pargs[1])
            tag = pargs[2] if len(pargs) > 2 else 0
            for t in args[0]:
                rec.add_node("comm.send.default", [TRef(rec.name(t, where))],
                             {"dst": dst, "tag": tag}, [], label="send")
        elif opname == "recv_":
            src = self.global_rank(pg, pargs[1])
            tag = pargs[2] if len(pargs) > 2 else 0
            for t in args[0]:
                rec.mutated(t, where)
                res = rec.new_result(t, "recv", where)
                note(res["name"], t)
                rec.add_node("comm.recv.default", [], {"src": src, "tag": tag}, [res],
                             label="recv")
        elif opname == "reduce_scatter_":
            op = _reduce_name(pargs[2].reduceOp if len(pargs) > 2 else dist.ReduceOp.SUM)
            for t, lst in zip(args[0], args[1]):
                cat = self._cat(rec, lst, where)
                rec.mutated(t, where)
                res = rec.new_result(t, "reduce_scatter", where)
                note(res["name"], t)
                rec.add_node("_c10d_functional.reduce_scatter_tensor.default",
                             [TRef(cat), op, n, group], {}, [res])
        elif opname == "alltoall_":
            cat = self._cat(rec, args[1], where)
            moved = rec.fresh(*self._cat_type(args[0], where), "all_to_all")
            note(moved["name"], list(args[0]))
            rec.add_node("_c10d_functional.all_to_all_single.default",
                         [TRef(cat), None, None, group], {}, [moved])
            self._slices(rec, moved["name"], args[0], where)
        return out

    def _cat(self, rec, tensors, where):
        names = [rec.name(t, where) for t in tensors]
        res = rec.fresh(*self._cat_type(tensors, where), "cat")
        rec.add_node("aten.cat.default", [[TRef(x) for x in names], 0], {}, [res])
        return res["name"]

    @staticmethod
    def _cat_type(tensors, where):
        shape, dtype = ttype(tensors[0], where)
        shape[0] = sum(int(t.shape[0]) for t in tensors)
        return shape, dtype

    def _gather(self, rec, outs, x, n, group, where, note):
        xt = x
        if xt.dim() == 0:
            raise CaptureError(f"{where}: all_gather of a 0-dim tensor")
        xn = rec.name(xt, where)
        res = rec.fresh(*self._cat_type(outs, where), "all_gather")
        note(res["name"], list(outs))
        rec.add_node("_c10d_functional.all_gather_into_tensor.default", [TRef(xn), n, group], {},
                     [res])
        self._slices(rec, res["name"], outs, where)

    def _slices(self, rec, whole, outs, where):
        start = 0
        for t in outs:
            rec.mutated(t, where)
            d0 = int(t.shape[0])
            res = rec.new_result(t, "chunk", where)
            rec.add_node("aten.slice.Tensor", [TRef(whole), 0, start, start + d0], {}, [res])
            start += d0
