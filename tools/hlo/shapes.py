"""shapes.py -- the lowered value type shared by the lowering's parts."""


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class T:
    """A lowered array value: bundle tensor name, shape, bundle dtype."""
    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, list(shape), dtype
