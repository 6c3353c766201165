"""capture.py -- capture_step: record one step of the user's program as this
process's graph (docs/capture.md).

    from shardcheck.capture import capture_step
    loss = capture_step(train_step, model, batch)

Outside shardcheck-capture (no SHARDCHECK_CAPTURE_DIR in the environment)
capture_step(fn, ...) is fn(...).  Under the command, the first call runs fn
while record.Recorder and collectives.Context watch, and writes
    DIR/rank{R}.json  the graph, its process groups, the input and output names
    DIR/rank{R}.pt    the inputs' values (as first read) and the outputs' values
Later calls just run fn.  Inputs are named: the parameters and buffers of
nn.Module arguments by their qualified names (`layers.0.attn.wq.weight`),
other tensor arguments by fn's parameter names (`x`, `batch.0`; `arg2`
where fn takes *args).  Outputs:
fn's tensors `out` (one) or `out.0`, `out.1`, ...; each parameter's
gradient when fn made or changed it, `grad.NAME`; each parameter or buffer
fn wrote in place (an optimizer step), `updated.NAME`.
"""

import inspect
import json
import os

import torch

ENV_DIR = "SHARDCHECK_CAPTURE_DIR"
_done = False


def _flat(value, prefix, out):
    """(name, tensor) pairs and (prefix, module) pairs of an argument."""
    if isinstance(value, torch.nn.Module):
        out.append(("module", prefix, value))
    elif isinstance(value, torch.Tensor):
        out.append(("tensor", prefix, value))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flat(v, f"{prefix}.{i}", out)
    elif isinstance(value, dict):
        for k, v in value.items():
            _flat(v, f"{prefix}.{k}", out)


def _arg_names(fn, args):
    """fn's parameter names for the positional args (arg0, ... where unknown)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(len(args)):
        p = params[i] if i < len(params) else None
        ok = p is not None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        names.append(p.name if ok else f"arg{i}")
    return names


def _named_inputs(fn, args, kwargs):
    items = []
    for nm, a in zip(_arg_names(fn, args), args):
        _flat(a, nm, items)
    for k, v in kwargs.items():
        _flat(v, k, items)
    modules = [it for it in items if it[0] == "module"]
    named = []          # (name, tensor, is_param)
    for kind, prefix, v in items:
        if kind == "tensor":
            named.append((prefix, v, False))
        else:
            pre = "" if len(modules) == 1 else prefix + "."
            for n, p in v.named_parameters():
                named.append((pre + n, p, True))
            for n, b in v.named_buffers():
                named.append((pre + n, b, False))
    return named


def _rename(graph, mapping):
    from .record import TRef
    """Rename tensors of graph (inputs, results, arguments) by mapping."""
    def sub(a):
        if isinstance(a, TRef):
            return mapping.get(a, a)
        if isinstance(a, list):
            return [sub(x) for x in a]
        return a
    for t in graph["inputs"]:
        t["name"] = mapping.get(t["name"], t["name"])
    for n in graph["nodes"]:
        n["args"] = sub(n["args"])
        n["kwargs"] = {k: sub(v) for k, v in n["kwargs"].items()}
        for o in n["outputs"]:
            if o is not None:
                o["name"] = mapping.get(o["name"], o["name"])
    graph["outputs"] = [mapping.get(o, o) for o in graph["outputs"]]


def capture_step(fn, *args, **kwargs):
    """Run fn(*args, **kwargs); under shardcheck-capture, record it (first call)."""
    global _done
    out_dir = os.environ.get(ENV_DIR)
    if not out_dir or _done:
        return fn(*args, **kwargs)
    _done = True
    from .collectives import Context
    from .record import CaptureError, Recorder, TRef, ttype

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rec = Recorder(src_root=os.environ.get("SHARDCHECK_SRC_ROOT"),
                   collectives=Context())
    named = _named_inputs(fn, args, kwargs)
    params = [(n, t) for n, t, is_p in named if is_p]
    for n, t, _ in named:
        rec.add_input(t, n)
    grads_before = {}
    for n, p in params:
        if p.grad is not None:
            rec.add_input(p.grad, f"grad_in.{n}")
            grads_before[n] = p.grad
    initial = {n: rec.name_of[id(t)] for n, t, _ in named}
    with rec.collectives, rec:
        result = fn(*args, **kwargs)
    if rec.collectives.failure is not None:
        raise rec.collectives.failure
    rec.collectives.flush()

    outputs, values = [], {}
    want = []           # (wanted output name, tensor)
    res = []
    _flat(result, "out", res)
    res = [(p, t) for kind, p, t in res if kind == "tensor"]
    if len(res) == 1:
        res = [("out", res[0][1])]
    want += res
    for n, p in params:
        g = p.grad
        if g is not None and rec.has(g) and rec.name_of[id(g)] != f"grad_in.{n}":
            want.append((f"grad.{n}", g))
    for n, t, _ in named:
        if rec.has(t) and rec.name_of[id(t)] != initial[n]:
            want.append((f"updated.{n}", t))
    mapping = {}
    input_names = {t["name"] for t in rec.inputs}
    for name, t in want:
        if not rec.has(t):
            raise CaptureError(f"output {name} was not computed by the recorded step")
        cur = rec.name_of[id(t)]
        if cur in input_names or cur in mapping:
            # an input returned as it is, or one tensor under two names
            shape, dtype = ttype(t, name)
            rec.nodes.append({"name": rec.names.alloc("alias"), "op": "aten.alias.default",
                              "args": [TRef(cur)], "kwargs": {},
                              "outputs": [{"name": name, "shape": shape, "dtype": dtype}]})
        else:
            mapping[cur] = name
        outputs.append(name)
        values[name] = t.detach().clone()
    graph = rec.graph(outputs)
    _rename(graph, mapping)
    meta = {"rank": rank, "world_size": world, "torch": torch.__version__,
            "graph": graph, "groups": rec.collectives.groups,
            "params": [n for n, _ in params]}
    os.makedirs(out_dir, exist_ok=True)
    moved = {mapping.get(k, k): v for k, v in rec.moved.items()}
    torch.save({"inputs": rec.input_values, "outputs": values, "moved": moved},
               os.path.join(out_dir, f"rank{rank}.pt"))
    # the .json last and whole (written aside, then renamed): the runner
    # reads its presence as "this rank's capture is complete"
    done = os.path.join(out_dir, f"rank{rank}.json")
    with open(done + ".part", "w") as f:
        json.dump(meta, f)
    os.replace(done + ".part", done)
    return result
