"""interp.py -- run a bundle graph with torch (an independent judge of capture).

Given a graph dict as written in a bundle and values for its inputs, calls
every node's ATen overload (torch.ops.<ns>.<name>.<overload>) or, for
`comm.*`, the simulated collective, and returns every tensor's value.  The
exporter runs each captured graph this way on the numbers it ran eagerly,
so that a graph that does not compute what the user's code computed is
never written.  Arguments are decoded with the operator's own schema:
strings name tensors only where the schema says Tensor.
"""

import torch

from . import comm
from .capture import DTYPE_OF_NAME

_FLOAT_WORDS = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


class InterpError(Exception):
    pass


def resolve(op):
    """The torch OpOverload for a bundle op name."""
    parts = op.split(".")
    if parts[0] == "comm" and len(parts) in (2, 3):
        name = parts[1]
        if name not in comm.BUNDLE_OPS:
            raise InterpError(f"unknown collective {op}")
        comm._library()
        return getattr(getattr(torch.ops, comm.NAMESPACE), name).default
    if len(parts) == 2:
        parts.append("default")
    if len(parts) != 3:
        raise InterpError(f"cannot read operator name {op!r}")
    ns, name, overload = parts
    try:
        return getattr(getattr(getattr(torch.ops, ns), name), overload)
    except (AttributeError, RuntimeError):
        raise InterpError(f"torch has no operator {op}") from None


def _decode(value, typ, env, where):
    t = str(typ)
    if "Tensor" in t:
        if value is None:
            return None
        if isinstance(value, list):
            return [_decode(v, t.replace("List[", "", 1)[:-1], env, where) for v in value]
        if value not in env:
            raise InterpError(f"{where}: unknown tensor {value!r}")
        return env[value]
    if isinstance(value, str) and value in DTYPE_OF_NAME and ("int" in t):
        return DTYPE_OF_NAME[value]
    if isinstance(value, str) and value in _FLOAT_WORDS and t in (
            "float", "Optional[float]", "number", "Optional[number]"):
        return _FLOAT_WORDS[value]
    return value


# the bundle reads these as one row-major reshape (strides are not kept)
_RESHAPES = ("aten.view.default", "aten._unsafe_view.default",
             "aten._reshape_alias.default", "aten.reshape.default")


def run_graph(graph, inputs):
    """inputs: name -> tensor.  Returns name -> tensor for every tensor."""
    env = dict(inputs)
    for e in graph["nodes"]:
        where = f"node {e['name']} ({e['op']})"
        op = resolve(e["op"])
        sch = op._schema
        args = []
        for i, v in enumerate(e["args"]):
            if i >= len(sch.arguments):
                raise InterpError(f"{where}: too many arguments")
            args.append(_decode(v, sch.arguments[i].type, env, where))
        by_name = {a.name: a for a in sch.arguments}
        kwargs = {}
        for k, v in e.get("kwargs", {}).items():
            if k not in by_name:
                raise InterpError(f"{where}: unknown argument {k}")
            kwargs[k] = _decode(v, by_name[k].type, env, where)
        if e["op"] in _RESHAPES:
            out = torch.reshape(args[0], args[1])
        else:
            out = op(*args, **kwargs)
        outs = e["outputs"]
        if isinstance(out, (list, tuple)):
            if len(out) != len(outs):
                raise InterpError(f"{where}: {len(out)} results, bundle lists {len(outs)}")
            for o, val in zip(outs, out):
                if o is not None:
                    env[o["name"]] = val
        else:
            if len(outs) != 1:
                raise InterpError(f"{where}: one result, bundle lists {len(outs)}")
            env[outs[0]["name"]] = out
        for o, val in zip(outs, out if isinstance(out, (list, tuple)) else [out]):
            if o is not None and "shape" in o and list(val.shape) != o["shape"]:
                raise InterpError(f"{where}: result {o['name']} has shape "
                                  f"{list(val.shape)}, bundle says {o['shape']}")
    return env
