"""bundlejson.py -- the JSON builders shared by the corpus generators
(gen-accept.py, gen-reject.py, gen-p2p.py): a tensor, a node, a node's
result."""


def T(name, shape, dtype="f32", **kw):
    """a tensor: name, shape, dtype and any other member (rank, values, ...)"""
    d = {"name": name, "shape": shape, "dtype": dtype}
    d.update(kw)
    return d


def N(name, op, args, outs, kwargs=None):
    """a node; kwargs only when given"""
    d = {"name": name, "op": op, "args": args}
    if kwargs is not None:
        d["kwargs"] = kwargs
    d["outputs"] = outs
    return d


def R(name, shape=None, dtype=None):
    """a node's result (None: a null result); shape and dtype only when given"""
    if name is None:
        return None
    d = {"name": name}
    if shape is not None:
        d["shape"] = shape
    if dtype is not None:
        d["dtype"] = dtype
    return d
