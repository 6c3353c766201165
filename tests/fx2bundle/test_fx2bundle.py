"""test_fx2bundle.py -- tests of tools/fx2bundle.py (real TorchDynamo/AOTAutograd
dumps to bundles with per-rank impl graphs).

    python3 test_fx2bundle.py snippets      hand-written tiny dumps, one per quirk (TAP)
    python3 test_fx2bundle.py real CASE     convert one case of shared/real-graphs
    python3 test_fx2bundle.py ops           ops of the real bundles the registry lacks

`real` and `ops` read the real-graphs folder at test time: $SC_REAL_GRAPHS, or
../shared/real-graphs next to the source root; they exit 77 (skipped) with a
message when it is absent.  Nothing they produce is written into the tree.
"""

import contextlib
import glob
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.environ.get("SC_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "tools", "fx2bundle.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import fx2bundle  # noqa: E402

CASES = {
    "gpt": "gpt-paral2_layer1",
    "qwen2": "qwen2-paral2_layer1",
    "grad_accumulation": "bug_grad_accumulation",
    "wrong_config": "bug_missing_allreduce_under_wrong_config",
    "layernorm": "bug_missing_layernorm_allreduce",
    "switchmlp": "bug_missing_switchmlp_allreduce",
}
# cases whose checked cone needs the sheet's assumed intermediates
NEEDS_ASSUME = {"layernorm"}


def real_graphs_dir():
    d = os.environ.get("SC_REAL_GRAPHS") or os.path.join(ROOT, "..", "shared", "real-graphs")
    return os.path.abspath(d)


def run(args, input_text=None):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, TOOL] + args, capture_output=True, text=True,
                       input=input_text)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


# ---------------------------------------------------------------------------
# structural checks shared by real cases and snippets
# ---------------------------------------------------------------------------

def tensor_strings(v, out):
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, list):
        for x in v:
            tensor_strings(x, out)
    return out


def check_graph(g, what, input_names_only=False):
    """Every tensor a node reads is defined earlier; names unique; shapes on
    every input and every non-null result; no getitem or lift_fresh_copy."""
    defined = {}
    for i in g["inputs"]:
        assert i["name"] not in defined, f"{what}: input {i['name']} twice"
        assert isinstance(i.get("shape"), list) and i.get("dtype"), f"{what}: {i} lacks shape"
        defined[i["name"]] = "input"
    all_names = set(defined)
    for n in g["nodes"]:
        for o in n["outputs"]:
            if o is not None:
                all_names.add(o["name"])
    node_names = set()
    for n in g["nodes"]:
        assert n["name"] not in node_names, f"{what}: node {n['name']} twice"
        node_names.add(n["name"])
        assert "getitem" not in n["op"] and n["op"] != "aten.lift_fresh_copy.default", \
            f"{what}: {n['op']} left in node {n['name']}"
        assert not n["op"].startswith(("torch.", "higher_order.")), f"{what}: op {n['op']}"
        reads = tensor_strings(n["args"], []) + tensor_strings(list(n["kwargs"].values()), [])
        for r in reads:
            if r in all_names:
                assert r in defined, f"{what}: node {n['name']} reads {r} before it is defined"
        assert n["outputs"], f"{what}: node {n['name']} has no outputs"
        assert any(o is not None for o in n["outputs"]), f"{what}: {n['name']} all-null"
        for o in n["outputs"]:
            if o is None:
                continue
            assert o["name"] not in defined, f"{what}: tensor {o['name']} defined twice"
            assert isinstance(o.get("shape"), list) and o.get("dtype"), \
                f"{what}: result {o['name']} of {n['name']} lacks shape/dtype"
            defined[o["name"]] = n["name"]
    for o in g["outputs"]:
        assert o in defined, f"{what}: output {o} is not defined"
    return defined


NODE_LINE = re.compile(r'^        ([A-Za-z_]\w*)(?:: "([^"]*)")? = torch\.ops\.([\w.]+)')
GETITEM_LINE = re.compile(r'^        ([A-Za-z_]\w*): "[^"]*" = ([A-Za-z_]\w*)\[(\d+)\]')


def count_node_lines(path):
    """Node lines of a dump, counted independently of the converter: every
    torch.ops call except _assert_scalar and SymInt-valued calls."""
    n = 0
    getitems = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = NODE_LINE.match(line)
            if m:
                if m.group(3).startswith("aten._assert_scalar") or \
                        (m.group(2) or "").startswith("Sym("):
                    continue
                n += 1
            g = GETITEM_LINE.match(line)
            if g:
                getitems.append((g.group(1), g.group(2), int(g.group(3))))
    return n, getitems


def check_getitems_folded(g, getitems, what):
    by_name = {n["name"]: n for n in g["nodes"]}
    for name, base, idx in getitems:
        node = by_name.get(base)
        if node is None:
            continue  # pruned spec
        af = not node["op"].startswith(("aten.", "apex.", "_c10d_functional."))
        slot = idx - 1 if af else idx
        outs = node["outputs"]
        assert slot < len(outs) and outs[slot] is not None and outs[slot]["name"] == name, \
            f"{what}: {name} = {base}[{idx}] not folded as result {slot} of {base}: {outs}"


def rank_refs(expr):
    return [(int(k), n) for k, n in fx2bundle.RANKREF_RE.findall(expr)]


# ---------------------------------------------------------------------------
# real cases
# ---------------------------------------------------------------------------

def real(case_key):
    rg = real_graphs_dir()
    if not os.path.isdir(os.path.join(rg, "relations")):
        print(f"SKIP: real graphs not found at {rg} (set SC_REAL_GRAPHS)")
        return 77
    case = CASES[case_key]
    sheet_path = os.path.join(rg, "relations", case + ".json")
    with open(sheet_path, encoding="utf-8") as f:
        sheet = json.load(f)
    spec_path = os.path.join(rg, sheet["spec"][0])
    impl_paths = [os.path.join(rg, p) for p in sheet["impl"]]
    extra = ["--assume-intermediates"] if case_key in NEEDS_ASSUME else []
    failures = 0

    def step(name, fn):
        nonlocal failures
        try:
            fn()
            print(f"ok - {case_key}: {name}")
        except AssertionError as e:
            failures += 1
            print(f"not ok - {case_key}: {name}: {e}")

    with tempfile.TemporaryDirectory() as tmp:
        out1, out2, out3 = (os.path.join(tmp, f"b{i}.json") for i in (1, 2, 3))
        rc, _o, err, secs = run(["--spec", spec_path, "--impl", *impl_paths,
                                 "--relation", sheet_path, "-o", out1] + extra)
        if rc != 0:
            print(f"not ok - {case_key}: conversion failed rc={rc}: {err}")
            return 1
        nfiles = 1 + len(impl_paths)
        step(f"time {secs:.2f}s for {nfiles} files",
             lambda: _assert(secs < 0.9 * nfiles + 0.3, f"{secs:.2f}s is too slow"))

        def idem():
            rc2, _, err2, _ = run(["--spec", spec_path, "--impl", *impl_paths,
                                   "--relation", sheet_path, "-o", out2] + extra)
            assert rc2 == 0, err2
            rc3, _, err3, _ = run(["--sheet-only", sheet_path, "--root", rg, "-o", out3] + extra)
            assert rc3 == 0, err3
            b1, b2, b3 = (open(p, "rb").read() for p in (out1, out2, out3))
            assert b1 == b2, "two runs differ"
            assert b1 == b3, "--sheet-only differs from the explicit command line"
        step("idempotent, --sheet-only agrees", idem)
        with open(out1, encoding="utf-8") as f:
            b = json.load(f)

    def top():
        assert b["format"] == "shardcheck-bundle/1"
        assert b["name"] == sheet["case"]
        assert set(b["impl"]) == {"ranks", "groups"}
        assert len(b["impl"]["ranks"]) == len(impl_paths)
        assert b["impl"]["groups"] == sheet["groups"]
        assert b["spec"].get("groups") == sheet["spec_groups"]
        assert b["check_outputs"] == sheet["check_outputs"]
        assert b.get("expect_output_relation", {}) == sheet.get("expect_output_relation", {})
        if case_key in NEEDS_ASSUME:
            want = {a["spec"]: a["impl_exprs"] for a in sheet["entangle_assumed_intermediates"]}
            assert b["assume_relation"] == want, b.get("assume_relation")
        else:
            assert "assume_relation" not in b
    step("top-level keys", top)

    ranks = b["impl"]["ranks"]
    defined = {}

    def graphs():
        defined["spec"] = check_graph(b["spec"], "spec")
        for k, g in enumerate(ranks):
            defined[k] = check_graph(g, f"rank {k}")
    step("tensors defined before use, shapes present, no getitem/lift_fresh_copy", graphs)

    def counts():
        n, gi = count_node_lines(spec_path)
        full = fx2bundle.GraphReader(spec_path, spec_path, sheet.get(
            "lift_fresh_copy_constants", {}), fx2bundle.KNOWN_MUTATED, "spec").read().graph()
        assert len(full["nodes"]) == n, f"spec: {len(full['nodes'])} nodes, {n} node lines"
        check_getitems_folded(full, gi, "spec")
        if len(b["spec"]["nodes"]) != n:
            assert f"kept {len(b['spec']['nodes'])} of {n} nodes" in b["description"], \
                "pruned spec without a description of it"
        for k, p in enumerate(impl_paths):
            n, gi = count_node_lines(p)
            assert len(ranks[k]["nodes"]) == n, f"rank {k}: {len(ranks[k]['nodes'])} nodes, " \
                f"{n} node lines"
            check_getitems_folded(ranks[k], gi, f"rank {k}")
    step("node counts match node lines, every getitem folded", counts)

    def relations():
        spec_inputs = {i["name"] for i in b["spec"]["inputs"]}
        behind = set(b.get("inputs_behind_assumptions", []))
        for name in spec_inputs:
            assert name in b["input_relation"] or name in behind, f"spec input {name} unmapped"
        for k, exprs in b["input_relation"].items():
            assert k in spec_inputs, f"input_relation key {k} is not a spec input"
            for e in exprs:
                for r, n in rank_refs(e):
                    assert n in {i["name"] for i in ranks[r]["inputs"]}, \
                        f"{e}: r{r}.{n} is not an input of rank {r}"
        for k, exprs in b.get("expect_output_relation", {}).items():
            assert k in b["spec"]["outputs"]
            for e in exprs:
                for r, n in rank_refs(e):
                    assert n in ranks[r]["outputs"], f"{e}: r{r}.{n} not an output of rank {r}"
        for c in b["check_outputs"]:
            assert c in b["spec"]["outputs"], f"check output {c} not a spec output"
        for k, exprs in b.get("assume_relation", {}).items():
            assert k in defined["spec"] and k not in spec_inputs
            for e in exprs:
                for r, n in rank_refs(e):
                    assert n in defined[r], f"{e}: r{r}.{n} is no tensor of rank {r}"
    step("relation names exist in the right rank", relations)

    if case_key == "switchmlp":
        def symbols():
            for g, what in [(b["spec"], "spec")] + [(r, f"rank {k}") for k, r in enumerate(ranks)]:
                assert g.get("symbols") == {"u0": {"min": 0, "max": 32768}}, \
                    f"{what}: {g.get('symbols')}"
                assert g.get("assume") == ["u0 >= 0", "u0 <= 32768"], g.get("assume")
                text = json.dumps(g["nodes"])
                assert "sym_size" not in text and "_assert_scalar" not in text
        step("symbolic u0 declared per graph", symbols)
    if case_key == "qwen2":
        def custom():
            ops = {n["op"]: n for n in ranks[0]["nodes"]}
            af = ops["_C.fused_add_rms_norm.default"]
            assert set(af["kwargs"]) == {"input", "residual", "weight", "epsilon"}
            assert len(af["outputs"]) == 2
            att = ops["vllm.unified_attention_with_output.default"]
            assert att["kwargs"]["layer_name"] == "model.layers.0.self_attn.attn"
            assert [o["name"] for o in att["outputs"]] == ["getitem_27"]
        step("auto_functionalized custom ops unwrapped", custom)
    if case_key == "layernorm":
        def needs_assume():
            rc, _, err, _ = run(["--sheet-only", sheet_path, "-o", os.devnull])
            assert rc == 2, rc
            assert "bitwise_or, view_26" in err and "--assume-intermediates" in err, err
            assert b["inputs_behind_assumptions"] == ["bitwise_or", "view_26"]
            assert "Traceback" not in err
        step("without --assume-intermediates: exit 2 naming the inexpressible inputs",
             needs_assume)
    return 1 if failures else 0


def _assert(cond, msg):
    assert cond, msg


# ---------------------------------------------------------------------------
# ops the registry lacks (informational)
# ---------------------------------------------------------------------------

def ops():
    rg = real_graphs_dir()
    if not os.path.isdir(os.path.join(rg, "relations")):
        print(f"SKIP: real graphs not found at {rg} (set SC_REAL_GRAPHS)")
        return 77
    bins = sorted(glob.glob(os.path.join(ROOT, "build*", "src", "cli", "shardcheck")),
                  key=os.path.getmtime, reverse=True)
    if not bins:
        print("SKIP: no build*/src/cli/shardcheck to ask for its operator registry")
        return 77
    registry, used = None, None
    for exe in bins:  # newest first; another engineer's build may be mid-edit
        try:
            p = subprocess.run([exe, "ops", "--format", "json"], capture_output=True,
                               text=True, timeout=60)
            registry = {o["name"] for o in json.loads(p.stdout)}
            used = exe
            break
        except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError) as e:
            print(f"note: {exe} ops --format json did not answer usable JSON ({e})")
    if registry is None:
        print("SKIP: no shardcheck build answered `ops --format json`")
        return 77
    missing = {}
    with tempfile.TemporaryDirectory() as tmp:
        for key, case in CASES.items():
            out = os.path.join(tmp, case + ".json")
            extra = ["--assume-intermediates"] if key in NEEDS_ASSUME else []
            rc, _, err, _ = run(["--sheet-only", os.path.join(rg, "relations", case + ".json"),
                                 "-o", out] + extra)
            if rc != 0:
                print(f"FAIL: {case}: {err}")
                return 1
            with open(out, encoding="utf-8") as f:
                b = json.load(f)
            for g in [b["spec"]] + b["impl"]["ranks"]:
                for n in g["nodes"]:
                    if n["op"] not in registry:
                        missing.setdefault(n["op"], set()).add(key)
    print(f"registry of {used}: {len(registry)} ops")
    print(f"ops of the real bundles it lacks ({len(missing)}; informational, not a failure):")
    for op in sorted(missing):
        print(f"  {op:48s} {', '.join(sorted(missing[op]))}")
    return 0


# ---------------------------------------------------------------------------
# snippets: one tiny dump per quirk
# ---------------------------------------------------------------------------

HEAD = '''import torch
from torch import device
f32: type
Sym: type


# Graph[rank={rank}](fw, gid=0)
class GraphModule(torch.nn.Module):
'''


def dump(body, params='x: "f32[4, 8]"', rank=0):
    text = HEAD.format(rank=rank) + f"    def forward(self, {params}):\n"
    for line in body.strip("\n").splitlines():
        text += ("        " + line.strip() if line.strip() else "") + "\n"
    return text


class Case:
    def __init__(self, tmp):
        self.tmp = tmp
        self.n = 0

    def file(self, text, name=None):
        self.n += 1
        p = os.path.join(self.tmp, name or f"g{self.n}.py")
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
        return p

    def sheet(self, **kw):
        s = {"case": "snippet", "input_relation": {}, "groups": {}}
        s.update(kw)
        return self.file(json.dumps(s), name=f"sheet{self.n}.json")

    def convert(self, spec_text, impl_texts=None, sheet=None, extra=(), expect_rc=0):
        spec = self.file(spec_text)
        impls = [self.file(t) for t in (impl_texts or [spec_text])]
        if sheet is None:
            names = re.findall(r"(\w+): \"", spec_text.split("def forward", 1)[1].split("\n")[0])
            sheet = self.sheet(input_relation={n: [f"r0.{n}"] for n in names})
        out = os.path.join(self.tmp, f"out{self.n}.json")
        rc, _o, err, _t = run(["--spec", spec, "--impl", *impls, "--relation", sheet,
                               "-o", out, *extra])
        assert "Traceback" not in err, err
        assert rc == expect_rc, f"rc={rc}, expected {expect_rc}: {err}"
        if rc != 0:
            return err, spec
        with open(out, encoding="utf-8") as f:
            b = json.load(f)
        check_graph(b["spec"], "spec")
        for k, g in enumerate(b["impl"]["ranks"]):
            check_graph(g, f"rank {k}")
        return b


def t_basic_node(c):
    b = c.convert(dump('''
        # File: /m/model.py:41 in forward, code: y = x @ x.t()
        t: "f32[8, 4]" = torch.ops.aten.t.default(x)
        mm: "f32[4, 4]" = torch.ops.aten.mm.default(x, t);  t = None

        to: "f16[4, 4]" = torch.ops.aten._to_copy.default(mm, dtype = torch.float16, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        fill: "f32[4, 4]" = torch.ops.aten.masked_fill.Scalar(mm, mm, -inf)
        return [to, fill]
    '''))
    n = {x["name"]: x for x in b["spec"]["nodes"]}
    assert n["mm"] == {"name": "mm", "op": "aten.mm.default", "args": ["x", "t"], "kwargs": {},
                       "outputs": [{"name": "mm", "shape": [4, 4], "dtype": "f32"}],
                       "src": "/m/model.py:41"}, n["mm"]
    assert n["to"]["kwargs"] == {"dtype": "f16"}, n["to"]
    assert "src" not in n["to"], "src must reset at a blank line"
    assert n["fill"]["args"][2] == "-inf"
    assert b["spec"]["inputs"] == [{"name": "x", "shape": [4, 8], "dtype": "f32"}]
    assert b["spec"]["outputs"] == ["to", "fill"]


def t_getitem_unread(c):
    b = c.convert(dump('''
        native_dropout = torch.ops.aten.native_dropout.default(x, 0.1, True)
        getitem: "f32[4, 8]" = native_dropout[0];  native_dropout = None
        max_1 = torch.ops.aten.max.dim(x, -1)
        getitem_2: "i64[4]" = max_1[1];  max_1 = None
        split_with_sizes = torch.ops.aten.split_with_sizes.default(x, [2, 3, 3], 1)
        getitem_4: "f32[4, 3]" = split_with_sizes[1];  split_with_sizes = None
        return (getitem, getitem_2, getitem_4)
    '''))
    n = {x["name"]: x for x in b["spec"]["nodes"]}
    assert len(b["spec"]["nodes"]) == 3
    assert n["native_dropout"]["outputs"] == [
        {"name": "getitem", "shape": [4, 8], "dtype": "f32"}, None]
    assert n["max_1"]["outputs"] == [None, {"name": "getitem_2", "shape": [4], "dtype": "i64"}]
    assert n["split_with_sizes"]["outputs"] == [
        None, {"name": "getitem_4", "shape": [4, 3], "dtype": "f32"}, None]
    assert n["split_with_sizes"]["args"] == ["x", [2, 3, 3], 1]


def t_auto_functionalized_v2(c):
    b = c.convert(dump('''
        clone: "f32[4, 8]" = torch.ops.aten.clone.default(x)
        auto_functionalized_v2 = torch.ops.higher_order.auto_functionalized_v2(torch.ops.tg.inplace_log_tensor.default, s = 'layers.0.weight', _t_base_index = 0, _all_bases = [clone]);  clone = None
        getitem_1: "f32[4, 8]" = auto_functionalized_v2[1];  auto_functionalized_v2 = None
        return [getitem_1]
    '''))
    node = b["spec"]["nodes"][1]
    assert node == {"name": "auto_functionalized_v2", "op": "tg.inplace_log_tensor.default",
                    "args": [], "kwargs": {"s": "layers.0.weight", "t": "clone"},
                    "outputs": [{"name": "getitem_1", "shape": [4, 8], "dtype": "f32"}]}, node


def t_auto_functionalized_v1(c):
    b = c.convert(dump('''
        auto_functionalized_3 = torch.ops.higher_order.auto_functionalized(torch.ops._C.fused_add_rms_norm.default, input = x, residual = y, weight = w, epsilon = 1e-06);  x = None
        getitem_30: "f32[4, 8]" = auto_functionalized_3[2];  auto_functionalized_3 = None
        return (getitem_30,)
    ''', params='x: "f32[4, 8]", y: "f32[4, 8]", w: "f32[8]"'))
    node = b["spec"]["nodes"][0]
    assert node["op"] == "_C.fused_add_rms_norm.default"
    assert node["kwargs"] == {"input": "x", "residual": "y", "weight": "w", "epsilon": 1e-06}
    assert node["outputs"] == [None, {"name": "getitem_30", "shape": [4, 8], "dtype": "f32"}]


def t_auto_functionalized_unknown(c):
    text = dump('''
        auto_functionalized = torch.ops.higher_order.auto_functionalized(torch.ops.my.scale_.default, out = x, k = 2)
        getitem_1: "f32[4, 8]" = auto_functionalized[1]
        return [getitem_1]
    ''')
    err, spec = c.convert(text, expect_rc=2)
    assert f"{spec}:10:" in err and "--mutates my.scale_.default=" in err, err
    b = c.convert(text, extra=["--mutates", "my.scale_.default=out"])
    assert b["spec"]["nodes"][0]["outputs"][0]["name"] == "getitem_1"
    err, _ = c.convert(text.replace("[1]", "[0]"), extra=["--mutates", "my.scale_.default=out"],
                       expect_rc=2)
    assert "own return value" in err, err


def t_wait_of_wait_and_copy(c):
    text = dump('''
        all_reduce: "f32[4, 8]" = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '12')
        wait_tensor: "f32[4, 8]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
        wait_tensor_1: "f32[4, 8]" = torch.ops._c10d_functional.wait_tensor.default(wait_tensor);  wait_tensor = None
        empty: "f32[4, 8]" = torch.ops.aten.empty.memory_format([4, 8], dtype = torch.float32, device = device(type='cuda', index=0), pin_memory = False)
        copy: "f32[4, 8]" = torch.ops.aten.copy.default(empty, wait_tensor_1);  empty = wait_tensor_1 = None
        exp: "f32[4, 8]" = torch.ops.aten.exp.default(copy)
        copy_: "f32[4, 8]" = torch.ops.aten.copy_.default(copy, exp)
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(copy, x)
        return [add]
    ''')
    b = c.convert(text, impl_texts=[text, text.replace("rank=0", "rank=1")],
                  sheet=c.sheet(input_relation={"x": ["r0.x", "r1.x"]}, groups={"12": [0, 1]}))
    for g in [b["spec"]] + b["impl"]["ranks"]:
        ops = [(n["name"], n["op"], n["args"]) for n in g["nodes"]]
        assert ops == [
            ("all_reduce", "_c10d_functional.all_reduce.default", ["x", "sum", "12"]),
            ("wait_tensor", "_c10d_functional.wait_tensor.default", ["all_reduce"]),
            ("wait_tensor_1", "_c10d_functional.wait_tensor.default", ["wait_tensor"]),
            ("empty", "aten.empty.memory_format", [[4, 8]]),
            ("copy", "aten.copy.default", ["empty", "wait_tensor_1"]),
            ("exp", "aten.exp.default", ["copy"]),
            ("copy_", "aten.copy.default", ["copy", "exp"]),
            ("add", "aten.add.Tensor", ["copy_", "x"]),   # reads the written value
        ], ops
    assert b["impl"]["groups"] == {"12": [0, 1]}
    no_groups = c.file(json.dumps({"case": "snippet", "input_relation": {"x": ["r0.x", "r1.x"]}}),
                       name="nogroups.json")
    b = c.convert(text, impl_texts=[text, text.replace("rank=0", "rank=1")], sheet=no_groups)
    assert b["impl"]["groups"] == {"12": [0, 1]}, "groups read off the dumps"
    assert "groups" not in b["spec"]
    err, _ = c.convert(dump('''
        v: "f32[32]" = torch.ops.aten.view.default(x, [32])
        add_: "f32[32]" = torch.ops.aten.add_.Tensor(v, 1)
        return [x]
    '''), expect_rc=2)
    assert "in-place write into 'v', a view of 'x'" in err, err


def t_joint_inputs_and_pytree_return(c):
    text = HEAD.format(rank=0) + '''    def forward(self, primals, tangents):
        primals_1: "f32[4, 8]"; primals_2: "f32[8]"; tangents_1: "f32[4, 8]";

        primals_1, primals_2, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(primals_1, primals_2)
        mul: "f32[4, 8]" = torch.ops.aten.mul.Tensor(tangents_1, add)
        return pytree.tree_unflatten([add, None, mul, add, None], self._out_spec)
'''
    sheet = c.sheet(input_relation={n: [f"r0.{n}"] for n in ("primals_1", "primals_2",
                                                             "tangents_1")})
    b = c.convert(text, sheet=sheet)
    assert [i["name"] for i in b["spec"]["inputs"]] == ["primals_1", "primals_2", "tangents_1"]
    assert b["spec"]["inputs"][1] == {"name": "primals_2", "shape": [8], "dtype": "f32"}
    assert b["spec"]["outputs"] == ["add", "mul", "add"]
    err, spec = c.convert(text.replace("primals_1, primals_2, tangents_1, =",
                                       "primals_2, primals_1, tangents_1, ="),
                           sheet=sheet, expect_rc=2)
    assert f"{spec}:12:" in err and "tree_flatten_spec" in err, err


def t_symbolic(c):
    text = dump('''
        eq: "b8[4, 8]" = torch.ops.aten.eq.Scalar(x, 0)
        nonzero: "i64[u0, 2]" = torch.ops.aten.nonzero.default(eq);  eq = None
        sym_size_int: "Sym(u0)" = torch.ops.aten.sym_size.int(nonzero, 0)
        ge_1: "Sym(u0 >= 0)" = sym_size_int >= 0
        _assert_scalar = torch.ops.aten._assert_scalar.default(ge_1, "Runtime assertion failed for expression u0 >= 0 on node 'ge'");  ge_1 = _assert_scalar = None
        le: "Sym(u0 <= 32)" = sym_size_int <= 32
        _assert_scalar_1 = torch.ops.aten._assert_scalar.default(le, "Runtime assertion failed for expression u0 <= 32 on node 'le'");  le = _assert_scalar_1 = None
        mul: "Sym(2*u0)" = sym_size_int * 2
        view: "i64[2*u0]" = torch.ops.aten.view.default(nonzero, [mul])
        view_1: "i64[u0, 2]" = torch.ops.aten.view.default(view, [sym_size_int, 2])
        return [view_1]
    ''')
    b = c.convert(text, impl_texts=[text, text.replace("rank=0", "rank=1")],
                  sheet=c.sheet(input_relation={"x": ["r0.x", "r1.x"]}))
    for g in [b["spec"]] + b["impl"]["ranks"]:
        assert g["symbols"] == {"u0": {"min": 0, "max": 32}}, g.get("symbols")
        assert g["assume"] == ["u0 >= 0", "u0 <= 32"], g.get("assume")
        n = {x["name"]: x for x in g["nodes"]}
        assert list(n) == ["eq", "nonzero", "view", "view_1"], list(n)
        assert n["view_1"]["args"] == ["view", ["u0", 2]], n["view_1"]
        assert n["view"]["args"] == ["nonzero", ["2*u0"]], n["view"]
        assert n["view"]["outputs"][0]["shape"] == ["2*u0"], n["view"]


def t_lift_fresh_copy(c):
    text = dump('''
        _tensor_constant0 = self._tensor_constant0
        lift_fresh_copy: "i64[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0);  _tensor_constant0 = None
        _tensor_constant1: "f32[]" = self._tensor_constant1
        lift_fresh_copy_1: "f32[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant1)
        index_put: "f32[4, 8]" = torch.ops.aten.index_put.default(x, [lift_fresh_copy], lift_fresh_copy_1)
        return [index_put]
    ''')
    sheet = c.sheet(input_relation={"x": ["r0.x"]},
                    lift_fresh_copy_constants={"_tensor_constant0": 0, "_tensor_constant1": -1.5})
    b = c.convert(text, sheet=sheet)
    n = b["spec"]["nodes"]
    assert n[0] == {"name": "lift_fresh_copy", "op": "aten.full.default", "args": [[], 0],
                    "kwargs": {"dtype": "i64"},
                    "outputs": [{"name": "lift_fresh_copy", "shape": [], "dtype": "i64"}]}, n[0]
    assert n[1]["args"] == [[], -1.5] and n[1]["kwargs"] == {"dtype": "f32"}
    assert n[2]["args"] == ["x", ["lift_fresh_copy"], "lift_fresh_copy_1"]
    err, spec = c.convert(text, sheet=c.sheet(input_relation={"x": ["r0.x"]}), expect_rc=2)
    assert f"{spec}:11:" in err and "_tensor_constant0" in err and \
        "lift_fresh_copy_constants" in err, err


def t_pruning(c):
    text = dump('''
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(x, 1)
        mul: "f32[4, 8]" = torch.ops.aten.mul.Tensor(y, y)
        return [add, mul]
    ''', params='x: "f32[4, 8]", y: "f32[4, 8]"')
    sheet = c.sheet(input_relation={"x": ["r0.x"]}, check_outputs=["add"],
                    inputs_outside_focus=["y"])
    b = c.convert(text, sheet=sheet)
    assert [i["name"] for i in b["spec"]["inputs"]] == ["x"]
    assert [n["name"] for n in b["spec"]["nodes"]] == ["add"]
    assert b["spec"]["outputs"] == ["add"] and b["check_outputs"] == ["add"]
    assert "kept 1 of 2 nodes, 1 of 2 inputs, 1 of 2 outputs" in b["description"], b["description"]
    assert len(b["impl"]["ranks"][0]["nodes"]) == 2, "impl graphs are never pruned"
    err, _ = c.convert(text, sheet=c.sheet(input_relation={"x": ["r0.x"]},
                                           check_outputs=["add"]), expect_rc=2)
    assert "spec input 'y' has no input_relation entry" in err, err


def t_relation_names(c):
    text = dump('''
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(x, 1)
        return [add]
    ''')
    err, _ = c.convert(text, sheet=c.sheet(input_relation={"x": ["r1.x"]}), expect_rc=2)
    assert "r1.x: there are only 1 rank graph(s)" in err, err
    err, _ = c.convert(text, sheet=c.sheet(input_relation={"x": ["r0.add"]}), expect_rc=2)
    assert "r0.add is not an input of rank 0" in err, err
    b = c.convert(text, sheet=c.sheet(input_relation={"x": ["r0.x"]},
                                      expect_output_relation={"add": ["r0.x"]}))
    assert b["impl"]["ranks"][0]["outputs"] == ["add", "x"], "expected leaf exposed as output"


def t_errors(c):
    cases = [
        ("mm: \"f32[4, 4]\" = torch.ops.aten.mm.default(x, nope)", "'nope' is not defined"),
        ("mm: \"f32[4, 4]\" = torch.ops.aten.mm.default(x, x", "expected ',' or ')'"),
        ("mm: \"q9[4]\" = torch.ops.aten.t.default(x)", "unsupported dtype 'q9'"),
        ("mm: \"f32[4, 4]\" = foo.bar(x)", "unsupported call 'foo.bar'"),
        ("mm: \"f32[4, 4]\" = torch.ops.aten.t.default(x);  x = 3", "expected only 'name = "),
        ("mm: \"f32[4, 4]\" = x[0]", "'x' is a tensor, not a tuple"),
        ("mm: \"f32[4, 4]\" = torch.ops.aten.t.default(x) $", "cannot read '$'"),
    ]
    for line, words in cases:
        err, spec = c.convert(dump(line + "\nreturn [x]"), expect_rc=2)
        assert err.startswith(f"fx2bundle: {spec}:10: ") and words in err, (line, err)
    err, spec = c.convert(dump("t: \"f32[8, 4]\" = torch.ops.aten.t.default(x)"), expect_rc=2)
    assert "forward has no return statement" in err, err
    err, spec = c.convert(dump("return [x]", rank=1), expect_rc=2)
    assert "header says rank=1 but it is given as rank 0" in err, err
    bad = c.file("{not json")
    rc, _, err, _ = run(["--spec", bad, "--impl", bad, "--relation", bad, "-o", os.devnull])
    assert rc == 2 and "not a JSON relation sheet" in err and "Traceback" not in err, err
    rc, _, err, _ = run(["--spec", "/nonexistent.py", "--impl", "/nonexistent.py",
                         "--relation", c.sheet(), "-o", os.devnull])
    assert rc == 2 and "/nonexistent.py: cannot read" in err, err
    rc, _, err, _ = run(["--spec", "a.py", "-o", os.devnull])
    assert rc == 2 and "give --spec, --impl and --relation" in err, err


def t_fuzz(c):
    """Random damage to a dump never yields a traceback or an internal error."""
    base = dump('''
        # File: /m/model.py:41 in forward, code: y = x @ x.t()
        t: "f32[8, 4]" = torch.ops.aten.t.default(x)
        native_dropout = torch.ops.aten.native_dropout.default(x, 0.1, True)
        getitem: "f32[4, 8]" = native_dropout[0];  native_dropout = None
        auto_functionalized = torch.ops.higher_order.auto_functionalized(torch.ops._C.rms_norm.default, result = getitem, input = x, weight = x, epsilon = 1e-06)
        getitem_1: "f32[4, 8]" = auto_functionalized[1]
        nonzero: "i64[u0, 2]" = torch.ops.aten.nonzero.default(x)
        sym_size_int: "Sym(u0)" = torch.ops.aten.sym_size.int(nonzero, 0)
        ge_1: "Sym(u0 >= 0)" = sym_size_int >= 0
        _assert_scalar = torch.ops.aten._assert_scalar.default(ge_1, "u0 >= 0 on node 'ge'")
        mm: "f32[4, 4]" = torch.ops.aten.mm.default(getitem_1, t);  t = None
        return pytree.tree_unflatten([mm, None], self._out_spec)
    ''')
    sheet = c.sheet(input_relation={"x": ["r0.x"]})
    rnd = random.Random(20251122)
    alphabet = "()[]{},.:;=\"' -_0123456789abcxyz#\\\n"
    for _ in range(120):
        chars = list(base)
        for _k in range(rnd.randint(1, 4)):
            pos = rnd.randrange(len(chars))
            op = rnd.random()
            if op < 0.4:
                del chars[pos]
            elif op < 0.8:
                chars[pos] = rnd.choice(alphabet)
            else:
                chars.insert(pos, rnd.choice(alphabet))
        p = c.file("".join(chars))
        buf = io.StringIO()
        with contextlib.redirect_stderr(buf):   # in-process: 120 runs stay fast
            rc = fx2bundle.main(["--spec", p, "--impl", p, "--relation", sheet,
                                 "-o", os.devnull])
        err = buf.getvalue()
        assert rc in (0, 2), f"rc={rc}: {err}"
        assert "Traceback" not in err and "internal error" not in err, err
        if rc == 2:
            assert re.search(r"^fx2bundle: \S+(:\d+)?: ", err), err


SNIPPETS = [t_basic_node, t_getitem_unread, t_auto_functionalized_v2, t_auto_functionalized_v1,
            t_auto_functionalized_unknown, t_wait_of_wait_and_copy,
            t_joint_inputs_and_pytree_return, t_symbolic, t_lift_fresh_copy, t_pruning,
            t_relation_names, t_errors, t_fuzz]


def snippets():
    print(f"1..{len(SNIPPETS)}")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, fn in enumerate(SNIPPETS, 1):
            try:
                fn(Case(tmp))
                print(f"ok {i} - {fn.__name__[2:]}")
            except Exception as e:  # noqa: BLE001 -- report every failure as TAP
                failed += 1
                print(f"not ok {i} - {fn.__name__[2:]}")
                msg = str(e) if isinstance(e, AssertionError) else f"{type(e).__name__}: {e}"
                for line in msg.splitlines() or [""]:
                    print(f"# {line}")
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "snippets":
        return snippets()
    if len(argv) == 3 and argv[1] == "real" and argv[2] in CASES:
        return real(argv[2])
    if len(argv) == 2 and argv[1] == "ops":
        return ops()
    sys.stderr.write(f"usage: {argv[0]} snippets | real {{{','.join(CASES)}}} | ops\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
