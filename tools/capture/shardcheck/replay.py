"""replay.py -- run a recorded graph again with torch, on the recorded
inputs, and compare its outputs with what the program computed: the
recorder's independent judge (as shardcheck_export checks its captures).

The collectives and recvs of a rank cannot run alone; their results are
the values recorded when they ran (record.Recorder.moved).  Every other
node runs its ATen operator.  An output that differs means something
changed a tensor without the recorder seeing it (a collective launched
from C++, such as DistributedDataParallel's reducer, or a write through a
path the dispatcher does not show), and the graph must not be checked.
"""

import torch

from shardcheck_export import interp

from . import relation
from .record import CaptureError


def replay(graph, inputs, moved, label):
    env = dict(inputs)
    for e in graph["nodes"]:
        op = e["op"]
        if op.startswith("_c10d_functional.") or op.startswith("comm."):
            for o in e["outputs"]:
                if o is None:
                    continue
                v = moved.get(o["name"])
                if v is None:
                    raise CaptureError(f"{label}: no recorded value for {o['name']} ({op})")
                env[o["name"]] = torch.cat(v, 0) if isinstance(v, list) else v
            continue
        try:
            env.update(interp.run_graph({"nodes": [e]}, env))
        except (interp.InterpError, RuntimeError, TypeError) as ex:
            raise CaptureError(f"{label}: replaying node {e['name']} ({op}) failed: {ex}") \
                from None
    return env


def check_run(graph, vals, label):
    """Raise CaptureError when the graph does not recompute the outputs."""
    with torch.no_grad():
        env = replay(graph, vals["inputs"], vals.get("moved", {}), label)
    for o in graph["outputs"]:
        got, want = env.get(o), vals["outputs"][o]
        if got is None or not relation.close(got, want, exact=False):
            err = "missing" if got is None else \
                f"max abs err {(got.double() - want.double()).abs().max().item():.3g}"
            raise CaptureError(
                f"{label}: the recorded graph does not recompute output {o} ({err}): "
                f"something changed it without the recorder seeing it (a collective "
                f"launched from C++, such as DistributedDataParallel's reducer?)")
