"""capture.py -- trace a Python function to ATen level and write it as a
bundle graph (bundle-format.md, "Graphs").

Pipeline: make_fx(tracing_mode="fake") with every tensor passed as an input
(torch 1.13 and 2.x) -> functionalize in place (in-place ATen ops become
their out-of-place overloads; refused when a mutated tensor is aliased by a
view that is read afterwards) -> dead-code elimination -> a JSON-ready graph
whose tensors carry readable names (the caller's input and output names;
multi-output results named after the schema's return names), shapes and
dtypes, whose simulated collectives are `comm.*` nodes, and whose nodes
carry `src` (file:line of the innermost frame of the user's code).

Invariants of the graph returned by capture():
  * tensor names are unique; node names are unique (fx's names);
  * every node's args name only tensors defined before it (program order);
  * no in-place operator remains;
  * with `ranks` given, every tensor whose rank is determined carries it,
    and no node mixes tensors of two ranks except a collective.
"""

import math
import operator
import os
import re

import inspect

import torch
import torch.fx as fx

from . import comm

# Version guards.  Known to work: torch 1.13 (Debian's python3-torch).
# torch 2.x is untested here; where the two are known to differ the code
# asks the installed torch instead of assuming one of them:
#   * make_fx lives in torch.fx.experimental.proxy_tensor (1.13 and 2.x);
#     functorch.make_fx is the fallback of older layouts;
#   * stack traces: a make_fx that takes record_stack_traces (newer 2.x)
#     gets it as an argument, else PythonKeyTracer's class attribute is set
#     for the duration of the trace (1.13).
try:
    from torch.fx.experimental import proxy_tensor
    from torch.fx.experimental.proxy_tensor import make_fx
except ImportError:  # pragma: no cover - layouts before 1.13
    proxy_tensor = None
    from functorch import make_fx

_MAKE_FX_PARAMS = set(inspect.signature(make_fx).parameters)

DTYPES = {
    torch.float64: "f64", torch.float32: "f32", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
    torch.int8: "i8", torch.uint8: "u8", torch.bool: "bool",
}
DTYPE_OF_NAME = {v: k for k, v in DTYPES.items()}

# kwargs the bundle format accepts and ignores: left out of the bundle
IGNORED_KWARGS = ("device", "layout", "pin_memory", "memory_format")

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class CaptureError(Exception):
    """The function cannot be written as a bundle graph (message says why)."""


# --- tracing ----------------------------------------------------------------

def trace(fn, args):
    """make_fx(fn, fake) with stack traces recorded; returns the GraphModule."""
    if "record_stack_traces" in _MAKE_FX_PARAMS:     # newer torch 2.x (untested)
        return make_fx(fn, tracing_mode="fake", record_stack_traces=True)(*args)
    tracer = getattr(proxy_tensor, "PythonKeyTracer", None)
    if tracer is None:                               # no known way: no src fields
        return make_fx(fn, tracing_mode="fake")(*args)
    had = "record_stack_traces" in tracer.__dict__
    old = tracer.__dict__.get("record_stack_traces")
    tracer.record_stack_traces = True
    try:
        return make_fx(fn, tracing_mode="fake")(*args)
    finally:
        if had:
            tracer.record_stack_traces = old
        else:
            del tracer.record_stack_traces


def _schema(node):
    t = node.target
    return t._schema if isinstance(t, torch._ops.OpOverload) else None


def _is_inplace(schema):
    if not schema.arguments or schema.overload_name.endswith("out"):
        return False
    a0 = schema.arguments[0]
    return (a0.alias_info is not None and a0.alias_info.is_write
            and schema.name.endswith("_"))


def _is_view(schema):
    return bool(schema.returns) and all(
        r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def _describe(node):
    return f"{node.target} ({node.name}{_src_suffix(node)})"


def _src_suffix(node):
    s = getattr(node, "_sc_src", None)
    return f" at {s}" if s else ""


def functionalize(gm):
    """Rewrite in-place ATen ops to out-of-place ones, in the fx graph.

    `y = a.op_(...)` becomes `y = op(a, ...)`, and every later reader of `a`
    reads `y`.  That is exact unless another alias of `a`'s storage (a view
    of it, or the tensor it is a view of) is read after the mutation; such a
    graph is refused rather than rewritten wrongly."""
    graph = gm.graph
    order = {n: i for i, n in enumerate(graph.nodes)}
    base = {}
    for n in list(graph.nodes):
        sch = _schema(n) if n.op == "call_function" else None
        if sch is None:
            base[n] = n
            continue
        if _is_inplace(sch):
            mutated = n.args[0]
            if not isinstance(mutated, fx.Node):
                raise CaptureError(f"in-place {_describe(n)} mutates a non-tensor")
            ns, name = sch.name.split("::")
            packet = getattr(getattr(torch.ops, ns), name[:-1], None)
            overload = sch.overload_name or "default"
            functional = getattr(packet, overload, None) if packet is not None else None
            if functional is None:
                raise CaptureError(f"in-place {_describe(n)} has no out-of-place "
                                   f"overload {ns}.{name[:-1]}.{overload}")
            b = base.get(mutated, mutated)
            for other, ob in base.items():
                if ob is not b or other is mutated:
                    continue
                late = [u for u in other.users if order.get(u, 1 << 60) > order[n]]
                if late:
                    raise CaptureError(
                        f"cannot functionalize {_describe(n)}: it mutates "
                        f"{mutated.name}, which shares storage with {other.name}, "
                        f"read afterwards by {late[0].name}")
            n.target = functional
            for u in list(mutated.users):
                if u is not n and order.get(u, 1 << 60) > order[n]:
                    u.replace_input_with(mutated, n)
            base[n] = n
        elif _is_view(sch) and n.args and isinstance(n.args[0], fx.Node):
            base[n] = base.get(n.args[0], n.args[0])
        else:
            base[n] = n
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    return gm


def _scalar_overload(sch, bad):
    """The overload of the same operator that takes a Scalar where `sch`
    takes the Tensor arguments listed in `bad` (div.Tensor -> div.Scalar)."""
    ns, name = sch.name.split("::")
    packet = getattr(getattr(torch.ops, ns), name)
    want = [a.name for a in sch.arguments]
    for ov in packet.overloads():
        cand = getattr(packet, ov)._schema
        if [a.name for a in cand.arguments] != want or ov.endswith("out"):
            continue
        ok = True
        for a, c in zip(sch.arguments, cand.arguments):
            if a.name in bad:
                ok = ok and str(c.type) == "number"
            else:
                ok = ok and str(c.type) == str(a.type)
        if ok and [str(r.type) for r in cand.returns] == [str(r.type) for r in sch.returns]:
            return getattr(packet, ov)
    return None


def scalar_args(gm):
    """torch passes Python numbers where a schema says Tensor (aten.div.Tensor
    (x, 2.0): a "wrapped number").  A bundle names a tensor there, so use the
    Scalar overload (div.Scalar) when the operator has one, else a 0-dim
    aten.full for the number."""
    graph = gm.graph
    for n in list(graph.nodes):
        sch = _schema(n) if n.op == "call_function" else None
        if sch is None:
            continue
        pos = {a.name: i for i, a in enumerate(sch.arguments)}
        bad = []
        for a in sch.arguments:
            if str(a.type) != "Tensor":
                continue
            i = pos[a.name]
            v = n.args[i] if i < len(n.args) else n.kwargs.get(a.name)
            if isinstance(v, (bool, int, float)):
                bad.append(a.name)
        if not bad:
            continue
        alt = _scalar_overload(sch, bad)
        if alt is not None:
            n.target = alt
            continue
        args, kwargs = list(n.args), dict(n.kwargs)
        for name in bad:
            i = pos[name]
            v = args[i] if i < len(args) else kwargs[name]
            dtype = (torch.bool if isinstance(v, bool) else
                     torch.int64 if isinstance(v, int) else torch.get_default_dtype())
            with graph.inserting_before(n):
                c = graph.call_function(torch.ops.aten.full.default, ([], v),
                                        {"dtype": dtype})
            c.meta["val"] = torch.empty((), dtype=dtype)
            c.stack_trace = getattr(n, "stack_trace", None)
            if i < len(args):
                args[i] = c
            else:
                kwargs[name] = c
        n.args, n.kwargs = tuple(args), kwargs
    graph.lint()
    gm.recompile()
    return gm


# --- source locations ---------------------------------------------------------

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def _user_frames(stack_trace):
    """(file, line) of the frames of user code, innermost first."""
    if not stack_trace:
        return []
    frames = _FRAME.findall(stack_trace)
    # fx prints innermost-first (1.13) or outermost-first; the user's code
    # runs inside the exporter's wrapper (_sc_*_call), which runs inside
    # trace(): keep the frames on the inner side of the wrapper, innermost
    # first.
    wrap = [i for i, f in enumerate(frames) if f[2] in ("_sc_spec_call", "_sc_impl_call")]
    outer = [i for i, f in enumerate(frames) if f[2] == "trace" and
             os.path.abspath(f[0]).startswith(_PKG_DIR)]
    if not wrap and outer:      # capture() called directly: the traced
        # function itself runs inside torch's tracer, inside trace()
        wrap = outer
    if not wrap and not outer:
        return []
    w = wrap[0] if wrap else outer[0]
    if outer and outer[0] < w:
        frames = frames[w + 1:][::-1]
    else:
        frames = frames[:w]
    out = []
    for path, line, _ in frames:
        ap = os.path.abspath(path)
        if ap.startswith(_PKG_DIR) or os.sep + "torch" + os.sep in ap or \
                os.sep + "functorch" + os.sep in ap or ap.startswith("<"):
            continue
        out.append((ap, int(line)))
    return out


def _src(node, src_root):
    frames = _user_frames(getattr(node, "stack_trace", None))
    if not frames:
        return None
    path, line = frames[0]
    rel = os.path.relpath(path, src_root) if src_root else os.path.basename(path)
    return f"{rel}:{line}"


# --- names ----------------------------------------------------------------------

class Names:
    """Allocates unique tensor names: reserved ones first, then fx's."""

    def __init__(self):
        self.used = set()

    def take(self, name):
        if name in self.used:
            raise CaptureError(f"tensor name {name!r} is used twice")
        self.used.add(name)
        return name

    def alloc(self, want):
        want = re.sub(r"[^A-Za-z0-9_]", "_", want) or "t"
        if want[0].isdigit():
            want = "t" + want
        name, k = want, 1
        while name in self.used:
            name = f"{want}_{k}"
            k += 1
        self.used.add(name)
        return name


# --- conversion ---------------------------------------------------------------------

def op_name(node):
    sch = _schema(node)
    ns, name = sch.name.split("::")
    if ns == comm.NAMESPACE:
        return comm.BUNDLE_OPS[name]
    return f"{ns}.{name}.{sch.overload_name or 'default'}"


def _val(node):
    v = node.meta.get("val")
    if v is None:
        tm = node.meta.get("tensor_meta")
        if tm is not None and hasattr(tm, "shape"):
            return tm
    return v


def _ttype(v):
    if v is None or not hasattr(v, "shape") or not hasattr(v, "dtype"):
        return None
    if v.dtype not in DTYPES:
        raise CaptureError(f"dtype {v.dtype} has no bundle name")
    return [int(d) for d in v.shape], DTYPES[v.dtype]


def _rerun_results(node):
    """Results of a multi-output node, recomputed on its inputs' fake values
    (1.13 keeps no value on the node itself, only on its getitem children)."""
    vals = []

    def val_of(a):
        if isinstance(a, fx.Node):
            v = a.meta.get("val")
            vals.append(v)
            return v
        return a

    args = fx.node.map_aggregate(node.args, val_of)
    kwargs = fx.node.map_aggregate(node.kwargs, val_of)
    mode = next((getattr(v, "fake_mode", None) for v in vals if v is not None), None)
    if mode is None:
        return None
    try:
        with mode:
            return node.target(*args, **kwargs)
    except Exception:
        return None


def _arg(a, tensor_name, where, reads):
    if isinstance(a, fx.Node):
        if a not in tensor_name:
            raise CaptureError(f"{where}: argument {a.name} is not a tensor")
        reads.append(tensor_name[a])
        return tensor_name[a]
    if isinstance(a, (list, tuple)):
        return [_arg(x, tensor_name, where, reads) for x in a]
    return constant_arg(a, where)


def constant_arg(a, where, error=CaptureError):
    """A non-tensor argument A as the bundle writes it (dtype names, "nan"
    and "inf" for special floats, None for devices and layouts); ERROR
    (the caller's exception class) for anything else."""
    if isinstance(a, torch.dtype):
        if a not in DTYPES:
            raise error(f"{where}: dtype {a} has no bundle name")
        return DTYPES[a]
    if a is None or isinstance(a, (bool, int, str)):
        return a
    if isinstance(a, float):
        if math.isnan(a):
            return "nan"
        if math.isinf(a):
            return "inf" if a > 0 else "-inf"
        return a
    if isinstance(a, (torch.device, torch.layout, torch.memory_format)):
        return None
    raise error(f"{where}: cannot write argument {a!r} of type {type(a).__name__}")


def capture(fn, args, input_names, output_names, src_root=None, ranks=None,
            values=None):
    """Trace fn(*args) and return a bundle graph dict.

    input_names[i] names args[i]; output_names[k] names the k-th tensor of
    fn's (flat list) result.  ranks: optional list, ranks[i] the rank of
    args[i] (impl graphs).  values: optional dict input name -> {"min","max"}.
    Returns (graph, output_tensor_names): the second maps position k to the
    tensor name that holds output k (usually output_names[k])."""
    gm = trace(fn, args)
    for n in gm.graph.nodes:
        n._sc_src = _src(n, src_root)
    functionalize(gm)
    scalar_args(gm)
    nodes = list(gm.graph.nodes)
    for n in nodes:
        if not hasattr(n, "_sc_src"):
            n._sc_src = _src(n, src_root)
    placeholders = [n for n in nodes if n.op == "placeholder"]
    if len(placeholders) != len(input_names):
        raise CaptureError(f"traced {len(placeholders)} inputs, expected {len(input_names)}")
    out_node = next(n for n in nodes if n.op == "output")
    results = out_node.args[0]
    if not isinstance(results, (list, tuple)):
        results = [results]
    if len(results) != len(output_names):
        raise CaptureError(f"traced {len(results)} outputs, expected {len(output_names)}")

    names = Names()
    for nm in list(input_names) + list(output_names):
        if nm in names.used:
            raise CaptureError(f"name {nm!r} is used twice among inputs and outputs")
        names.used.add(nm)
    tensor_name = {}
    for ph, nm in zip(placeholders, input_names):
        tensor_name[ph] = nm
    out_names = []
    for r, nm in zip(results, output_names):
        if not isinstance(r, fx.Node):
            raise CaptureError(f"output {nm} is not a tensor of the graph")
        if r not in tensor_name:
            tensor_name[r] = nm
        out_names.append(tensor_name[r])

    # children of multi-output nodes
    children = {}
    for n in nodes:
        if n.op == "call_function" and n.target is operator.getitem:
            children.setdefault(n.args[0], {})[n.args[1]] = n

    graph = {"inputs": [], "nodes": [], "outputs": out_names}
    rank_of = {}
    reads_of = {}
    for ph, nm in zip(placeholders, input_names):
        tt = _ttype(_val(ph))
        if tt is None:
            raise CaptureError(f"input {nm} is not a tensor")
        entry = {"name": nm, "shape": tt[0], "dtype": tt[1]}
        if values and nm in values:
            entry["values"] = values[nm]
        if ranks is not None:
            entry["rank"] = ranks[input_names.index(nm)]
            rank_of[nm] = entry["rank"]
        graph["inputs"].append(entry)

    for n in nodes:
        if n.op != "call_function" or n.target is operator.getitem:
            continue
        sch = _schema(n)
        if sch is None:
            raise CaptureError(f"node {n.name} calls {n.target}, not an ATen operator")
        qual = op_name(n)
        where = f"node {n.name} ({qual})"
        rets = sch.returns
        multi = len(rets) != 1 or str(rets[0].type) != "Tensor"
        if multi and not all(str(r.type) in ("Tensor", "List[Tensor]") for r in rets):
            raise CaptureError(f"{where}: returns {[str(r.type) for r in rets]}, "
                               f"which a bundle cannot hold")
        outputs = []
        if not multi:
            nm = tensor_name.get(n) or names.alloc(n.name)
            tensor_name[n] = nm
            out = {"name": nm}
            tt = _ttype(_val(n))
            if tt:
                out["shape"], out["dtype"] = tt
            outputs.append(out)
        else:
            kids = children.get(n, {})
            res = None
            if len(rets) == 1:        # -> Tensor[]
                res = _rerun_results(n)
                count = len(res) if res is not None else (max(kids) + 1 if kids else 0)
                labels = [str(i) for i in range(count)]
            else:
                labels = [r.name or str(i) for i, r in enumerate(rets)]
                if len(kids) < len(rets):
                    res = _rerun_results(n)
            for i, label in enumerate(labels):
                kid = kids.get(i)
                if kid is not None:
                    nm = tensor_name.get(kid) or names.alloc(f"{n.name}_{label}")
                    tensor_name[kid] = nm
                    tt = _ttype(_val(kid))
                else:
                    v = res[i] if res is not None and i < len(res) else None
                    if res is not None and v is None:
                        outputs.append(None)      # a result the op does not produce
                        continue
                    nm = names.alloc(f"{n.name}_{label}")
                    tt = _ttype(v)
                out = {"name": nm}
                if tt:
                    out["shape"], out["dtype"] = tt
                outputs.append(out)
        reads = []
        node_args = _arg(list(n.args), tensor_name, where, reads)
        kwargs = {k: _arg(v, tensor_name, where, reads) for k, v in n.kwargs.items()
                  if k not in IGNORED_KWARGS}
        reads_of[n.name] = reads
        entry = {"name": n.name, "op": qual, "args": node_args, "kwargs": kwargs,
                 "outputs": outputs}
        if n._sc_src:
            entry["src"] = n._sc_src
        if ranks is not None:
            _assign_ranks(entry, n, reads, rank_of, qual, where)
        graph["nodes"].append(entry)
    if ranks is not None:
        _backfill_ranks(graph, rank_of, reads_of)
    return graph, out_names


def _assign_ranks(entry, n, reads, rank_of, qual, where):
    if qual.startswith("comm."):
        for i, o in enumerate(entry["outputs"]):
            if o is not None:
                o["rank"] = i
                rank_of[o["name"]] = i
        return
    rs = {rank_of[a] for a in reads if a in rank_of}
    if len(rs) > 1:
        raise CaptureError(f"{where}{_src_suffix(n)} reads tensors of ranks "
                           f"{sorted(rs)} without a collective: no real rank could run it")
    if rs:
        r = rs.pop()
        for o in entry["outputs"]:
            if o is not None:
                o["rank"] = r
                rank_of[o["name"]] = r


def _backfill_ranks(graph, rank_of, reads_of):
    """Creation nodes (full, arange, ...) read no tensor: give their results
    the rank of their readers when all readers have one and agree."""
    changed = True
    while changed:
        changed = False
        readers = {}
        for e in graph["nodes"]:
            outs = [o for o in e["outputs"] if o is not None]
            r = outs[0].get("rank") if outs else None
            if e["op"].startswith("comm."):
                r = "comm"
            for a in reads_of[e["name"]]:
                readers.setdefault(a, set()).add(r)
        for e in graph["nodes"]:
            for o in e["outputs"]:
                if o is None or "rank" in o:
                    continue
                rs = readers.get(o["name"], set())
                if len(rs) == 1 and isinstance(next(iter(rs)), int):
                    o["rank"] = rank_of[o["name"]] = next(iter(rs))
                    changed = True
