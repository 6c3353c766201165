#!/usr/bin/env python3
"""gen-p2p.py -- writes the point-to-point cases of the bundle corpus
(bundle-format.md, "Per-rank implementation graphs": comm.send/comm.recv
paired by source, destination, tag and order into comm.send_recv):
accept/ranks-p2p-*.json and reject/ranks-p2p-*.json with .expect sidecars.
The base is a two-stage pipeline: rank 0 computes h = gelu(x @ w1) and
sends it, in two micro-batches, to rank 1, which computes y = h @ w2.
Re-run after editing; the files it writes are committed."""
import copy
import json
import os

from bundlejson import N, T

OUT = os.path.dirname(os.path.abspath(__file__))


def base():
    spec_nodes, r0, r1 = [], [], []
    for m in (0, 1):
        spec_nodes += [N(f"fc1_{m}", "aten.mm.default", [f"x{m}", "w1"], [T(f"h{m}", [4, 16])]),
                       N(f"act_{m}", "aten.gelu.default", [f"h{m}"], [T(f"g{m}", [4, 16])]),
                       N(f"fc2_{m}", "aten.mm.default", [f"g{m}", "w2"], [T(f"y{m}", [4, 8])])]
        r0 += [N(f"fc1_{m}", "aten.mm.default", [f"x{m}", "w1"], [T(f"h{m}", [4, 16])]),
               N(f"act_{m}", "aten.gelu.default", [f"h{m}"], [T(f"g{m}", [4, 16])]),
               N(f"send_{m}", "comm.send", [f"g{m}", 1], [])]
        r1 += [N(f"recv_{m}", "comm.recv", [0], [T(f"g{m}", [4, 16])]),
               N(f"fc2_{m}", "aten.mm.default", [f"g{m}", "w2"], [T(f"y{m}", [4, 8])])]
    return {
        "format": "shardcheck-bundle/1", "name": "p2p-pipeline",
        "description": "two pipeline stages, two micro-batches, comm.send/comm.recv",
        "spec": {"inputs": [T("x0", [4, 8]), T("x1", [4, 8]), T("w1", [8, 16]), T("w2", [16, 8])],
                 "nodes": spec_nodes, "outputs": ["y0", "y1"]},
        "impl": {"ranks": [
            {"inputs": [T("x0", [4, 8]), T("x1", [4, 8]), T("w1", [8, 16])], "nodes": r0,
             "outputs": []},
            {"inputs": [T("w2", [16, 8])], "nodes": r1, "outputs": ["y0", "y1"]}]},
        "input_relation": {"x0": ["r0.x0"], "x1": ["r0.x1"], "w1": ["r0.w1"], "w2": ["r1.w2"]},
        "expect_output_relation": {"y0": ["r1.y0"], "y1": ["r1.y1"]},
    }


def write(kind, name, bundle, expect=None):
    with open(os.path.join(OUT, kind, name + ".json"), "w") as f:
        json.dump(bundle, f, indent=1)
        f.write("\n")
    if expect is not None:
        code, phrases = expect
        with open(os.path.join(OUT, kind, name + ".expect"), "w") as f:
            f.write(f"{code}\n" + "".join(p + "\n" for p in phrases))


def r(b, k):
    return b["impl"]["ranks"][k]["nodes"]


write("accept", "ranks-p2p-pipeline", base())

b = base()                        # tags given: both micro-batches on tag 7, by name
for k in (0, 1):
    for n in r(b, k):
        if n["op"] == "comm.send":
            n["args"] = [n["args"][0]]
            n["kwargs"] = {"dst": 1, "tag": 7}
        elif n["op"] == "comm.recv":
            n["args"] = []
            n["kwargs"] = {"src": 0, "tag": 7}
write("accept", "ranks-p2p-tags", b)

b = base()                        # the second send is missing
del r(b, 0)[5]
write("reject", "ranks-p2p-unmatched-recv", b, (2, [
    "impl.ranks[1].nodes[2]: recv #1 from rank 0 to rank 1 with tag 0 has no matching send: "
    "rank 0 makes only 1 send to rank 1 with that tag (the program would hang)"]))

b = base()                        # the second recv is missing
del r(b, 1)[2]
r(b, 1)[2]["args"][0] = "g0"
write("reject", "ranks-p2p-unmatched-send", b, (2, [
    "impl.ranks[0].nodes[5]: send #1 from rank 0 to rank 1 with tag 0 has no matching recv: "
    "rank 1 makes only 1 recv from rank 0 with that tag (the program would hang)"]))

b = base()                        # tags differ: no pairing at all
r(b, 1)[2]["args"] = [0, 3]
write("reject", "ranks-p2p-tag", b, (2, [
    "send #1 from rank 0 to rank 1 with tag 0 has no matching recv"]))

b = base()                        # the sender sends another shape
r(b, 0)[2]["args"][0] = "x0"
write("reject", "ranks-p2p-shape", b, (2, [
    "impl.ranks[1].nodes[0]: send #0 from rank 0 to rank 1 with tag 0 sends f32 [4, 8] "
    "but rank 1's recv #0 receives f32 [4, 16]"]))

b = base()                        # the sender sends another dtype
r(b, 0).insert(2, N("cast_0", "aten._to_copy.default", ["g0"], [T("g0_64", [4, 16], "f64")],
                    kwargs={"dtype": "f64"}))
r(b, 0)[3]["args"][0] = "g0_64"
write("reject", "ranks-p2p-dtype", b, (2, [
    "impl.ranks[1].nodes[0]: send #0 from rank 0 to rank 1 with tag 0 sends f64 [4, 16] "
    "but rank 1's recv #0 receives f32 [4, 16]"]))

b = base()                        # a send to itself
r(b, 0)[2]["args"][1] = 0
write("reject", "ranks-p2p-self", b, (2, [
    "impl.ranks[0].nodes[2]: comm.send.default on rank 0 sends to itself"]))

b = base()                        # a recv from a rank that does not exist
r(b, 1)[0]["args"] = [5]
write("reject", "ranks-p2p-range", b, (2, [
    "impl.ranks[1].nodes[0]: comm.recv.default on rank 1 receives from rank 5, which does "
    "not exist (there are 2 ranks)"]))

b = base()                        # a recv without its shape
del r(b, 1)[0]["outputs"][0]["shape"]
write("reject", "ranks-p2p-undeclared", b, (2, [
    "the result of comm.recv.default must be declared with its shape"]))

b = base()                        # send in the spec
b["spec"]["nodes"].append(N("stray", "comm.send", ["y0", 1], []))
write("reject", "ranks-p2p-in-spec", b, (2, [
    "spec.nodes[6]: comm.send.default in a graph of one rank"]))
