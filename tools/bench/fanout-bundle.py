#!/usr/bin/env python3
"""fanout-bundle.py — a bundle whose impl has one widely shared tensor: a
chain of N adds that all read one input (issue 18, "no quadratic fan-out").

usage: tools/bench/fanout-bundle.py [--nodes N] [--ranks R] [--via-view] [-o FILE]

The spec is y_1 = x + c, y_i = y_{i-1} + c (i = 2..N), output y_N, where c
is one input read by every add.  The impl runs the same chain on each of R
ranks (data parallel: x and c replicated), so each rank's c is consumed by
N nodes.  A check visits N spec nodes; exploring T_rel around each must
not visit every consumer of c (which would cost N * N).  Expected verdict:
refines, output relation y_N = [r0.y_N, ..., r{R-1}.y_N].

--via-view: each add reads c through a view of its own (v_i = view(c);
y_i = y_{i-1} + v_i, in the spec and on every rank), as traced graphs
often do.  Every view of c is then ready as soon as c is related, so each
visit explores all N views of each rank: the quadratic case.

Written to FILE (default: stdout).  Deterministic: the same arguments give
the same bytes."""
import argparse
import json
import sys


def bundle(n, ranks, via_view=False, shape=(4, 8)):
    shp = list(shape)

    def t(name, rank=None):
        d = {"name": name, "shape": shp, "dtype": "f32"}
        if rank is not None:
            d["rank"] = rank
        return d

    def chain(prefix, rank):
        nodes, prev = [], f"{prefix}x"
        for i in range(1, n + 1):
            out, other = f"{prefix}y_{i}", f"{prefix}c"
            if via_view:
                other = f"{prefix}v_{i}"
                nodes.append({"name": f"{prefix}view_{i}", "op": "aten.view.default",
                              "args": [f"{prefix}c", shp], "kwargs": {},
                              "outputs": [t(other, rank)]})
            nodes.append({"name": f"{prefix}add_{i}", "op": "aten.add.Tensor",
                          "args": [prev, other], "kwargs": {},
                          "outputs": [t(out, rank)]})
            prev = out
        return nodes

    impl_inputs, impl_nodes = [], []
    for r in range(ranks):
        impl_inputs += [t(f"r{r}.x", r), t(f"r{r}.c", r)]
        impl_nodes += chain(f"r{r}.", r)
    return {
        "format": "shardcheck-bundle/1",
        "name": f"fanout-add-chain-{n}",
        "description": (f"A chain of {n} adds that all read one input c, replicated on "
                        f"{ranks} ranks (tools/bench/fanout-bundle.py): each rank's c has "
                        f"{n} consumers."),
        "spec": {"inputs": [t("x"), t("c")], "nodes": chain("", None),
                 "outputs": [f"y_{n}"]},
        "impl": {"inputs": impl_inputs, "nodes": impl_nodes,
                 "outputs": [f"r{r}.y_{n}" for r in range(ranks)]},
        "input_relation": {"x": [f"r{r}.x" for r in range(ranks)],
                           "c": [f"r{r}.c" for r in range(ranks)]},
        "expect_output_relation": {f"y_{n}": [f"r{r}.y_{n}" for r in range(ranks)]},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--via-view", action="store_true")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    if a.nodes < 1 or a.ranks < 1:
        print("fanout-bundle.py: --nodes and --ranks must be at least 1", file=sys.stderr)
        return 2
    text = json.dumps(bundle(a.nodes, a.ranks, a.via_view), indent=1) + "\n"
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
