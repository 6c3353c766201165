"""record.py -- record what one process computes, op by op, as a bundle graph
(bundle-format.md, "Graphs" and "Per-rank implementation graphs").

Mechanism: a TorchDispatchMode (torch.utils._python_dispatch) sees every
ATen operator the process runs below autograd -- the forward, the backward
the autograd engine runs, and the `c10d.*` operators that torch 1.13's
process groups dispatch -- with real tensors.  The recorder runs each
operator for real (so collectives really communicate and every value is
the program's own) and writes a node for it.  make_fx is not used: in torch
1.13 it cannot trace `c10d.allgather_` (its nested list result), and it
traces on fake values, while the relations here are read from real ones.

What the dispatcher cannot say (which process group, which reduction, the
source or destination rank) the ProcessGroup methods that torch.distributed
calls say: while recording, they are wrapped (collectives.py) to leave that
context for the c10d operator they dispatch.

Invariants of the graph returned by Recorder.graph():
  * node order is program order; every argument is defined before use;
  * graphs are functional: an in-place operator becomes its out-of-place
    overload and the mutated tensor a new name from then on; a tensor
    that shares storage with a mutated one (a view, or the base of a
    mutated view) and is read afterwards is refused (CaptureError), never
    silently read at its old value;
  * every tensor carries its shape and dtype; tensor names are unique.
"""

import os
import threading
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from shardcheck_export.capture import (DTYPES, IGNORED_KWARGS, Names,
                                       _scalar_overload, _is_inplace, constant_arg)


class TRef(str):
    """A tensor name in a node's arguments (so that renaming a tensor never
    touches a string argument that happens to read the same, such as the
    reduction "sum")."""


class CaptureError(Exception):
    """The program cannot be recorded as a bundle graph (message says why)."""


_PKG = os.path.dirname(os.path.abspath(__file__))
_SKIP = (os.sep + "torch" + os.sep, os.sep + "functorch" + os.sep, _PKG)


def user_src(root=None):
    """file:line of the innermost frame of the user's code."""
    for fr in reversed(traceback.extract_stack()):
        f = os.path.abspath(fr.filename)
        if f.startswith("<") or any(s in f for s in _SKIP) or f.startswith(_PKG):
            continue
        rel = os.path.relpath(f, root) if root else os.path.basename(f)
        return f"{rel}:{fr.lineno}"
    return None


def _storage_key(t):
    try:
        return t.storage().data_ptr() if t.numel() else None
    except (RuntimeError, NotImplementedError):
        return None


def ttype(t, where):
    if t.dtype not in DTYPES:
        raise CaptureError(f"{where}: dtype {t.dtype} has no bundle name")
    return [int(d) for d in t.shape], DTYPES[t.dtype]


class Recorder(TorchDispatchMode):
    """Records every operator run while it is active (`with recorder:`)."""

    def __init__(self, src_root=None, collectives=None):
        super().__init__()
        self.src_root = src_root
        self.names = Names()
        self.name_of = {}        # id(tensor) -> current graph name
        self.keep = []           # strong refs: ids stay unique while recording
        self.by_storage = {}     # storage address -> ids of the tensors on it
        self.moved = {}          # result name of a collective -> its value (or pieces)
        self.stale = {}          # id(tensor) -> why it may not be read
        self.inputs = []         # graph input entries
        self.input_values = {}   # name -> tensor (a copy, as it was when first read)
        self.nodes = []
        self.values = {}         # graph name -> value, for outputs (filled by caller)
        self.collectives = collectives   # collectives.Context, or None
        self.n_const = 0
        self._lock = threading.Lock()

    # -- names ------------------------------------------------------------------
    def _bind(self, t, name):
        if id(t) not in self.name_of:
            self.keep.append(t)
            key = _storage_key(t)
            if key is not None:
                self.by_storage.setdefault(key, []).append(id(t))
        self.name_of[id(t)] = name
        self.stale.pop(id(t), None)

    def add_input(self, t, name):
        """Declare tensor t a graph input named name (before recording)."""
        if id(t) in self.name_of:
            return self.name_of[id(t)]       # the same tensor passed twice
        name = self.names.take(name)
        shape, dtype = ttype(t, f"input {name}")
        self.inputs.append({"name": name, "shape": shape, "dtype": dtype})
        self.input_values[name] = t.detach().clone()
        self._bind(t, name)
        return name

    def name(self, t, where):
        """The graph name of tensor t, read by `where`."""
        why = self.stale.get(id(t))
        if why is not None:
            raise CaptureError(f"{where} reads {why}: the recorder cannot write that as "
                               f"a functional graph (clone the view before the write, or "
                               f"take it after)")
        n = self.name_of.get(id(t))
        if n is None:
            # a tensor made outside the step (a global constant, a buffer
            # reached another way): an input of its own, related by value
            n = self.add_input(t, f"const{self.n_const}")
            self.n_const += 1
        return n

    def has(self, t):
        return id(t) in self.name_of

    def new_result(self, t, want, where):
        shape, dtype = ttype(t, where)
        nm = self.names.alloc(want)
        self._bind(t, nm)
        return {"name": nm, "shape": shape, "dtype": dtype}

    def note_moved(self, name, value):
        """The value a collective (or recv) produced under NAME, for replay.py;
        a list of tensors stands for their concatenation along dim 0."""
        if isinstance(value, (list, tuple)):
            self.moved[name] = [v.detach().clone() for v in value]
        else:
            self.moved[name] = value.detach().clone()

    def fresh(self, shape, dtype, want):
        """A result that no Python tensor holds (an intermediate the recorder
        adds, such as the gathered whole of an all_gather)."""
        return {"name": self.names.alloc(want), "shape": list(shape), "dtype": dtype}

    def mutated(self, t, where):
        """t was written in place: its aliases hold values no name stands for."""
        key = _storage_key(t)
        if key is None:
            return
        for tid in self.by_storage.get(key, ()):
            if tid != id(t) and tid in self.name_of:
                self.stale[tid] = (f"{self.name_of[tid]}, which shares storage with "
                                   f"{self.name_of.get(id(t), 'a tensor')}, written in place "
                                   f"by {where}")

    # -- nodes ------------------------------------------------------------------------
    def arg(self, a, where):
        if isinstance(a, torch.Tensor):
            return TRef(self.name(a, where))
        if isinstance(a, (list, tuple)):
            return [self.arg(x, where) for x in a]
        return constant_arg(a, where, CaptureError)

    def add_node(self, op, args, kwargs, outputs, label=None):
        entry = {"name": self.names.alloc(label or op.split(".")[1]), "op": op,
                 "args": args, "kwargs": kwargs, "outputs": outputs}
        src = user_src(self.src_root)
        if src:
            entry["src"] = src
        self.nodes.append(entry)
        return entry

    # -- the dispatch hook ----------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.collectives is not None and self.collectives.snaps:
            self.collectives.flush()
        sch = func._schema
        ns = sch.name.split("::")[0]
        if ns == "profiler":        # record_function markers: no data
            return func(*args, **kwargs)
        if ns == "_c10d_functional":   # torch 2.x: already the bundle's form
            if self.collectives is not None:
                self.collectives.note_functional(func, args)
            out = func(*args, **kwargs)
            self._record_aten(func, sch, args, kwargs, out)
            return out
        if ns == "c10d":
            if self.collectives is None:
                raise CaptureError(f"{sch.name}: a collective outside a capture")
            return self.collectives.record(self, func, args, kwargs)
        out = func(*args, **kwargs)
        self._record_aten(func, sch, args, kwargs, out)
        return out

    def _record_aten(self, func, sch, args, kwargs, out):
        ns, name = sch.name.split("::")
        overload = sch.overload_name or "default"
        where = f"{ns}.{name}.{overload}"
        results = out if isinstance(out, (list, tuple)) else [out]
        if not any(isinstance(r, torch.Tensor) for r in results):
            # .item(), is_same_size, equal: a Python value the program reads;
            # the graph holds the path it took (as any trace does)
            return
        target = func
        inplace = _is_inplace(sch)
        if inplace:
            packet = getattr(getattr(torch.ops, ns), name[:-1], None)
            target = getattr(packet, overload, None) if packet is not None else None
            if target is None:
                raise CaptureError(f"in-place {where} has no out-of-place overload")
            sch = target._schema
        for a in sch.arguments[1 if inplace else 0:]:
            if a.alias_info is not None and a.alias_info.is_write:
                raise CaptureError(f"{where} writes into its argument {a.name}: "
                                   f"not supported (functional graphs only)")
        # Python numbers where the schema says Tensor: the Scalar overload
        bad = [a.name for i, a in enumerate(sch.arguments)
               if str(a.type) == "Tensor" and isinstance(
                   args[i] if i < len(args) else kwargs.get(a.name), (bool, int, float))]
        if bad:
            alt = _scalar_overload(sch, bad)
            if alt is None:
                raise CaptureError(f"{where}: a number where a tensor is expected "
                                   f"({', '.join(bad)}) and no Scalar overload")
            target, sch = alt, alt._schema
        opname = f"{ns}.{sch.name.split('::')[1]}.{sch.overload_name or 'default'}"
        node_args = [self.arg(a, opname) for a in args]
        node_kwargs = {k: self.arg(v, opname) for k, v in kwargs.items()
                       if k not in IGNORED_KWARGS}
        results = out if isinstance(out, (list, tuple)) else [out]
        if inplace:
            self.mutated(args[0], opname)
        outputs = []
        for i, r in enumerate(results):
            if r is None:
                outputs.append(None)
            elif isinstance(r, torch.Tensor):
                label = name.rstrip("_") + ("" if len(results) == 1 else f"_{i}")
                if not inplace and self.has(r) and r is not args[0]:
                    # an op that returns one of its inputs (a no-op view)
                    pass
                outputs.append(self.new_result(r, label, opname))
            else:
                raise CaptureError(f"{opname} returns {type(r).__name__}, which a bundle "
                                   f"cannot hold")
        self.add_node(opname, node_args, node_kwargs, outputs, label=name.rstrip("_"))

    # -- the result ---------------------------------------------------------------------
    def graph(self, outputs):
        return {"inputs": list(self.inputs), "nodes": list(self.nodes), "outputs": outputs}
