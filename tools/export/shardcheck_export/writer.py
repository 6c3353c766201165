"""writer.py -- bundle JSON text: stable key order, one tensor or node per
line, so that a regenerated bundle diffs line by line against the
committed one.  Floats are written by json (repr, round-trips exactly); a
non-finite float never reaches here (capture writes "inf"/"-inf"/"nan")."""

import json


def _one(v):
    return json.dumps(v, allow_nan=False, separators=(", ", ": "))


def _graph(g, ind):
    pad = " " * ind
    out = ["{"]
    parts = []
    for key in ("inputs", "nodes"):
        items = g[key]
        if items:
            body = (",\n").join(f"{pad}    {_one(x)}" for x in items)
            parts.append(f'{pad}  "{key}": [\n{body}\n{pad}  ]')
        else:
            parts.append(f'{pad}  "{key}": []')
    parts.append(f'{pad}  "outputs": {_one(g["outputs"])}')
    out.append(",\n".join(parts))
    out.append(f"{pad}}}")
    return "\n".join(out)


def dumps(bundle):
    parts = []
    for k, v in bundle.items():
        if k in ("spec", "impl"):
            parts.append(f'  "{k}": {_graph(v, 2)}')
        elif isinstance(v, dict) and v:
            body = ",\n".join(f"    {_one(kk)}: {_one(vv)}" for kk, vv in v.items())
            parts.append(f'  "{k}": {{\n{body}\n  }}')
        else:
            parts.append(f'  "{k}": {_one(v)}')
    return "{\n" + ",\n".join(parts) + "\n}\n"
