"""test_symbolize.py -- tests of tools/export/symbolize.py (concrete exports
at several sizes -> one bundle with symbolic sizes).  Standard library
only: runs with any python3.  Each test is a function named test_*; the
script prints one line per test and exits 1 if any failed.
"""

import copy
import json
import os
import sys
import tempfile
import traceback

ROOT = os.environ.get("SC_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))

import symbolize as sz  # noqa: E402

POINTS = [dict(B=2, S=8), dict(B=3, S=8), dict(B=5, S=8), dict(B=2, S=12), dict(B=2, S=20),
          dict(B=3, S=12)]


def expect_raises(fn, *words):
    try:
        fn()
    except sz.SymbolizeError as e:
        msg = str(e)
        for w in words:
            assert w in msg, f"message {msg!r} lacks {w!r}"
        return msg
    raise AssertionError("no SymbolizeError")


def fits(f, divisors=None, points=POINTS):
    vals = [f(**p) for p in points]
    return [str(e) for e in sz.fit(vals, points, list(points[0]), divisors or {})]


# --- fitting ----------------------------------------------------------------------

def test_fit_exact_forms():
    div = {"S": 4}
    assert fits(lambda B, S: S, div) == ["S"]
    assert fits(lambda B, S: B, div) == ["B"]
    assert fits(lambda B, S: B * S, div) == ["B*S"]
    assert fits(lambda B, S: 4 * B, div) == ["4*B"]
    assert fits(lambda B, S: S // 2, div) == ["S/2"]
    assert fits(lambda B, S: S // 2 - 1, div) == ["S/2-1"]
    assert fits(lambda B, S: S // 2 + 1, div) == ["S/2+1"]
    assert fits(lambda B, S: 3 * S // 4, div) == ["3*S/4"]
    assert fits(lambda B, S: 2 * S * S, div) == ["2*S*S"]
    assert fits(lambda B, S: 16 * S, div) == ["16*S"]
    assert fits(lambda B, S: 8 * B * S * S, div) == ["8*B*S*S"]
    assert fits(lambda B, S: S - 1, div) == ["S-1"]
    assert fits(lambda B, S: 7 - S, div) == ["-S+7"]


def test_fit_refuses_what_is_not_one_monomial():
    assert fits(lambda B, S: B + S, {"S": 4}) == []
    assert fits(lambda B, S: B * S + S, {"S": 4}) == []


def test_fit_fraction_needs_an_assumption():
    assert fits(lambda B, S: S // 2) == []                 # no S % 2 == 0
    assert fits(lambda B, S: S // 2, {"S": 2}) == ["S/2"]
    assert fits(lambda B, S: S // 4, {"S": 2}) == []       # S % 2 does not make S/4 exact
    assert fits(lambda B, S: B * S // 4, {"S": 4}) == ["B*S/4"]


def test_fit_two_points_are_ambiguous():
    pts = [dict(S=8), dict(S=12)]
    vals = [2 * p["S"] * p["S"] for p in pts]
    got = sorted(str(e) for e in sz.fit(vals, pts, ["S"], {}))
    assert got == ["2*S*S", "40*S-192"], got
    # a third size separates them
    pts3 = pts + [dict(S=20)]
    vals3 = [2 * p["S"] * p["S"] for p in pts3]
    assert [str(e) for e in sz.fit(vals3, pts3, ["S"], {})] == ["2*S*S"]


def test_divisibility_from_assumptions():
    assert sz.divisibility(["S % 2 == 0", "B >= 1"]) == {"S": 2}
    assert sz.divisibility(["S % 2 == 0 && S % 3 == 0"]) == {"S": 6}
    assert sz.divisibility(["H % T == 0"]) == {}


def test_eval_dim():
    v = dict(B=3, S=12)
    assert sz.eval_dim("S/2-1", v) == 5
    assert sz.eval_dim("3*S/4", v) == 9
    assert sz.eval_dim("-S+7", v) == -5
    assert sz.eval_dim("8*B*S*S", v) == 3456
    assert sz.eval_dim("(B+1)*S", v) == 48


# --- whole bundles -------------------------------------------------------------------

def concrete(B, S, start_shift=0):
    """A small bundle as the exporter writes it, at sizes B, S."""
    return {
        "format": "shardcheck-bundle/1", "name": f"toy-{B}-{S}",
        "description": f"toy at {B}x{S}", "symbols": {}, "assume": [],
        "spec": {"inputs": [{"name": "x", "shape": [B, S, 4], "dtype": "f32"}],
                 "nodes": [{"name": "v", "op": "aten.view.default", "args": ["x", [B * S, 4]],
                            "kwargs": {}, "outputs": [{"name": "y", "shape": [B * S, 4],
                                                       "dtype": "f32"}],
                            "src": "model.py:3"},
                           {"name": "m", "op": "aten.mul.Scalar", "args": ["y", 0.5],
                            "kwargs": {}, "outputs": [{"name": "z", "shape": [B * S, 4],
                                                       "dtype": "f32"}]}],
                 "outputs": ["z"]},
        "impl": {"inputs": [{"name": "x_0", "shape": [B, S // 2, 4], "dtype": "f32", "rank": 0},
                            {"name": "x_1", "shape": [B, S // 2, 4], "dtype": "f32", "rank": 1}],
                 "nodes": [{"name": "s", "op": "aten.slice.Tensor",
                            "args": ["x_1", 1, start_shift, S // 2 + start_shift],
                            "kwargs": {}, "outputs": [{"name": "t", "rank": 1}]}],
                 "outputs": ["t"]},
        "input_relation": {"x": ["cat(x_0, x_1, dim=1)"]},
        "expect_output_relation": {"z": [f"slice(t, dim=0, start=0, end={B * S // 2})"]},
    }


def test_symbolize_bundle():
    exports = [(p, concrete(**p)) for p in POINTS]
    b, n = sz.symbolize(exports, {"B": {"min": 1}, "S": {"min": 2}}, ["S % 2 == 0"],
                        name="toy-symbolic", description="toy, symbolic")
    assert b["name"] == "toy-symbolic" and b["description"] == "toy, symbolic"
    assert b["symbols"] == {"B": {"min": 1}, "S": {"min": 2}}
    assert b["assume"] == ["S % 2 == 0"]
    assert list(b)[:5] == ["format", "name", "description", "symbols", "assume"]
    spec = b["spec"]
    assert spec["inputs"][0]["shape"] == ["B", "S", 4]
    assert spec["nodes"][0]["args"] == ["x", ["B*S", 4]]
    assert spec["nodes"][0]["outputs"][0]["shape"] == ["B*S", 4]
    assert spec["nodes"][1]["args"] == ["y", 0.5]           # floats kept
    assert spec["nodes"][0]["src"] == "model.py:3"          # strings kept
    impl = b["impl"]
    assert impl["inputs"][1]["shape"] == ["B", "S/2", 4]
    assert impl["inputs"][1]["rank"] == 1                  # equal ints kept
    assert impl["nodes"][0]["args"] == ["x_1", 1, 0, "S/2"]
    # integers in relations: quoted expressions, names untouched
    assert b["input_relation"] == {"x": ["cat(x_0, x_1, dim=1)"]}
    assert b["expect_output_relation"] == {"z": ['slice(t, dim=0, start=0, end="B*S/2")']}
    assert n == 11, n    # 5 in spec, 5 in impl, 1 in a relation
    # the result is JSON and the writer's layout parses back to it
    assert json.loads(sz.dumps(b)) == b


def test_symbolize_off_by_one():
    exports = [(p, concrete(p["B"], p["S"], start_shift=-1 if p else 0)) for p in POINTS]
    b, _ = sz.symbolize(exports, {"B": {"min": 1}, "S": {"min": 2}}, ["S % 2 == 0"])
    assert b["impl"]["nodes"][0]["args"] == ["x_1", 1, -1, "S/2-1"]
    assert b["name"] == "toy-2-8"                         # the first export's


def test_symbolize_refusals():
    syms = {"B": {"min": 1}, "S": {"min": 2}}
    exports = [(p, concrete(**p)) for p in POINTS]
    expect_raises(lambda: sz.symbolize(exports[:1], syms), "at least two exports")
    expect_raises(lambda: sz.symbolize([(dict(B=2, S=8), concrete(2, 8)),
                                        (dict(B=2, S=12), concrete(2, 12))], syms),
                  "symbol B has the same value in every export")
    expect_raises(lambda: sz.symbolize([(dict(S=8), concrete(2, 8)),
                                        (dict(S=12), concrete(2, 12))], syms),
                  "give a value for each of B, S")
    # S/2 without S % 2 == 0: no expression fits
    expect_raises(lambda: sz.symbolize(exports, syms), "$.impl.inputs[0].shape[1]",
                  "no expression c*M+d over B, S", "4 at B=2,S=8")
    # a float that varies
    bad = copy.deepcopy(exports)
    bad[1][1]["spec"]["nodes"][1]["args"][1] = 0.25
    expect_raises(lambda: sz.symbolize(bad, syms, ["S % 2 == 0"]),
                  "$.spec.nodes[1].args[1]", "a float differs", "only integer sizes")
    # another structure
    bad = copy.deepcopy(exports)
    bad[2][1]["spec"]["nodes"].pop()
    expect_raises(lambda: sz.symbolize(bad, syms, ["S % 2 == 0"]),
                  "$.spec.nodes", "lists of different lengths")
    bad = copy.deepcopy(exports)
    bad[2][1]["spec"]["nodes"][0]["op"] = "aten.reshape.default"
    expect_raises(lambda: sz.symbolize(bad, syms, ["S % 2 == 0"]),
                  "$.spec.nodes[0].op", "a string differs")
    bad = copy.deepcopy(exports)
    bad[3][1]["input_relation"]["x"] = ["cat(x_1, x_0, dim=1)"]
    expect_raises(lambda: sz.symbolize(bad, syms, ["S % 2 == 0"]),
                  "$.input_relation.x[0]", "differ in more than sizes")
    # a size that two expressions fit, from two exports
    two = [(dict(S=8), {"a": [2 * 64]}), (dict(S=12), {"a": [2 * 144]})]
    expect_raises(lambda: sz.symbolize(two, {"S": {}}), "$.a[0]", "ambiguous",
                  "2*S*S", "40*S-192", "export at more sizes")


def test_cli():
    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for p in POINTS[:6]:
            path = os.path.join(tmp, f"{p['B']}-{p['S']}.json")
            with open(path, "w") as f:
                json.dump(concrete(**p), f)
            args.append(f"B={p['B']},S={p['S']}:{path}")
        out = os.path.join(tmp, "sym.json")
        rc = sz.main(["--symbol", "B:1", "--symbol", "S:2", "--assume", "S % 2 == 0",
                      "--name", "toy-sym", "-o", out] + args)
        assert rc == 0
        b = json.load(open(out))
        assert b["name"] == "toy-sym" and b["symbols"] == {"B": {"min": 1}, "S": {"min": 2}}
        assert b["spec"]["inputs"][0]["shape"] == ["B", "S", 4]
        rc = sz.main(["--symbol", "B:1", "--symbol", "S:2", "-o", out] + args)
        assert rc == 1                                    # S/2 without the assumption


def main():
    tests = [(k, v) for k, v in sorted(globals().items()) if k.startswith("test_")]
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print(f"ok   {name}")
        except Exception:  # noqa: BLE001
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"{len(tests) - failed} of {len(tests)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
