#!/usr/bin/env python3
"""gen-reject.py — writes reject/*.json and their .expect sidecars: the base bundle
(a Megatron MLP on 2 ranks) with one mistake each.  Re-run after editing; the
files it writes are committed, so the tests do not need this script."""
import json, copy, os
from bundlejson import N, R, T
OUT=os.path.dirname(os.path.abspath(__file__))
def base():
    ins=[]; nodes=[]
    for r in (0,1):
        ins += [T(f"x_{r}",[4,8]),T(f"w1_{r}",[8,8]),T(f"w2_{r}",[8,8])]
        nodes += [N(f"fc1_{r}","aten.mm.default",[f"x_{r}",f"w1_{r}"],[R(f"h_{r}",[4,8])]),
                  N(f"act_{r}","aten.gelu.default",[f"h_{r}"],[R(f"g_{r}")]),
                  N(f"fc2_{r}","aten.mm.default",[f"g_{r}",f"w2_{r}"],[R(f"p_{r}")])]
    nodes.append(N("allreduce","comm.all_reduce",[["p_0","p_1"]],[R("y_0"),R("y_1")],kwargs={"op":"sum"}))
    return {"format":"shardcheck-bundle/1","name":"base",
      "spec":{"inputs":[T("x",[4,8]),T("w1",[8,16]),T("w2",[16,8])],
              "nodes":[N("fc1","aten.mm.default",["x","w1"],[R("h",[4,16],"f32")]),
                       N("act","aten.gelu.default",["h"],[R("g",[4,16])]),
                       N("fc2","aten.mm.default",["g","w2"],[R("y",[4,8])])],
              "outputs":["y"]},
      "impl":{"inputs":ins,"nodes":nodes,"outputs":["y_0","y_1"]},
      "input_relation":{"x":["x_0","x_1"],"w1":["cat(w1_0, w1_1, dim=1)"],"w2":["cat(w2_0, w2_1, dim=0)"]},
      "expect_output_relation":{"y":["y_0","y_1"]}}

cases=[]
def case(name, phrases, mut=None, raw=None):
    cases.append((name, phrases, mut, raw))

case("not-json", ["not-json.json:3:"], raw='{\n  "format": "shardcheck-bundle/1",\n  "spec": {,\n}\n')
case("not-object", ["expected a bundle object at the top level, found an array"], raw='[1, 2]\n')
case("duplicate-key", ["duplicate-key.json:", "duplicate"], raw='{"format": "shardcheck-bundle/1", "format": "x"}\n')
def m(b): b["format"]="shardcheck-bundle/2"
case("wrong-format", ["format: expected \"shardcheck-bundle/1\", found \"shardcheck-bundle/2\""], m)
def m(b): del b["format"]
case("missing-format", ["format: required field is missing"], m)
def m(b): b["format"]=1
case("format-not-string", ["format: expected a string, found number 1"], m)
def m(b): del b["spec"]
case("missing-spec", ["spec: required field is missing"], m)
def m(b): del b["impl"]
case("missing-impl", ["impl: required field is missing"], m)
def m(b): del b["input_relation"]
case("missing-input-relation", ["input_relation: required field is missing"], m)
def m(b): b["name"]=3
case("name-not-string", ["name: expected a string, found number 3"], m)
def m(b): b["description"]=["a"]
case("description-not-string", ["description: expected a string, found an array"], m)
def m(b): b["spec"]=[]
case("spec-not-object", ["spec: expected a graph object, found an array"], m)
def m(b): b["spec"]["inputs"]={}
case("inputs-not-array", ["spec.inputs: expected an array of tensors, found an object"], m)
def m(b): del b["impl"]["nodes"]
case("missing-nodes", ["impl.nodes: required field is missing"], m)
def m(b): b["spec"]["nodes"][0]["args"]="x"
case("args-not-array", ["spec.nodes[0].args: expected an array, found string \"x\""], m)
def m(b): b["spec"]["nodes"][1]["kwargs"]=["approximate"]
case("kwargs-not-object", ["spec.nodes[1].kwargs: expected an object, found an array"], m)
def m(b): b["spec"]["outputs"]="y"
case("outputs-not-array", ["spec.outputs: expected an array of tensor names, found string \"y\""], m)
def m(b): b["spec"]["outputs"]=[3]
case("output-not-string", ["spec.outputs[0]: expected a tensor name, found number 3"], m)
def m(b): b["spec"]["inputs"][0]["shape"]=[True,8]
case("shape-entry-bool", ["spec.inputs[0].shape[0]: expected an integer or a size expression string, found boolean true"], m)
def m(b): del b["spec"]["inputs"][1]["shape"]
case("input-missing-shape", ["spec.inputs[1].shape: required field is missing"], m)
def m(b): b["spec"]["inputs"][0]["name"]=7
case("tensor-name-not-string", ["spec.inputs[0].name: expected a string, found number 7"], m)
def m(b): b["spec"]["nodes"][0]["op"]=["aten.mm"]
case("op-not-string", ["spec.nodes[0].op: expected an operator name string, found an array"], m)
def m(b): b["spec"]["nodes"][0]["outputs"][0]["shape"]="4,16"
case("result-shape-not-array", ["spec.nodes[0].outputs[0].shape: expected an array of sizes, found string"], m)
def m(b): b["symbols"]=["S"]
case("symbols-not-object", ["symbols: expected an object, found an array"], m)
def m(b): b["symbols"]={"S":{"min":"1"}}
case("symbol-min-not-int", ["symbols.S.min: expected an integer, found string \"1\""], m)
def m(b): b["assume"]="S > 0"
case("assume-not-array", ["assume: expected an array of strings, found string"], m)
def m(b): b["check_outputs"]="y"
case("check-outputs-not-array", ["check_outputs: expected an array of tensor names, found string"], m)
def m(b): b["input_relation"]["x"]="x_0"
case("relation-not-array", ["input_relation.x: expected an array of expression strings, found string \"x_0\""], m)
def m(b): b["input_relation"]["x"]=[3]
case("relation-item-not-string", ["input_relation.x[0]: expected an expression string, found number 3"], m)
def m(b): b["spec"]["nodes"][1]["kwarg"]={}
case("unknown-field", ["spec.nodes[1].kwarg: unknown field 'kwarg'"], m)
def m(b): b["spec"]["nodes"][0]["op"]="aten.mn.default"
case("unknown-op", ["spec.nodes[0].op:", "unknown operator", "aten.mn.default", "did you mean", "aten.mm.default"], m)
def m(b): b["impl"]["nodes"][1]["op"]="aten.add_.Tensor"; b["impl"]["nodes"][1]["args"]=["h_0","h_0"]
case("inplace-op", ["impl.nodes[1].op:", "in-place operator 'aten.add_.Tensor'", "graphs must be functional", "functionalize it (use aten.add.Tensor)"], m)
def m(b): b["spec"]["nodes"][1]["op"]="aten.add.Tensor"; b["spec"]["nodes"][1]["args"]=["h",[1,2]]
case("wrong-arg-type", ["spec.nodes[1].args[1]:", "'other'", "aten.add.Tensor", "Tensor"], m)
def m(b): b["spec"]["nodes"][0]["args"]=["x"]
case("missing-arg", ["spec.nodes[0]", "mat2", "missing"], m)
def m(b): b["spec"]["nodes"][1]["kwargs"]={"approximat":"tanh"}
case("unknown-kwarg", ["spec.nodes[1].kwargs.approximat:", "approximat"], m)
def m(b): b["spec"]["nodes"][0]["args"]=["x","w3"]
case("undefined-tensor", ["spec.nodes[0].args[1]: undefined tensor 'w3'"], m)
def m(b): b["impl"]["nodes"][0]["outputs"][0]["name"]="x_1"
case("duplicate-tensor", ["impl.nodes[0].outputs[0].name: duplicate tensor 'x_1'"], m)
def m(b): b["impl"]["inputs"][1]["name"]="x_0"
case("duplicate-input", ["impl.inputs[1].name: duplicate tensor 'x_0'"], m)
def m(b): b["impl"]["nodes"][4]["name"]="fc1_0"
case("duplicate-node", ["impl.nodes[4].name: duplicate node name 'fc1_0'"], m)
def m(b): b["spec"]["nodes"][0]["args"]=["g","w1"]
case("cycle", ["spec.nodes[0]", "cycle", "'fc1' -> 'act' -> 'fc1'"], m)
def m(b): b["spec"]["nodes"][0]["outputs"][0]["shape"]=[4,32]
case("declared-shape", ["spec.nodes[0]:", "declared [4, 32] f32 but aten.mm.default gives [4, 16] f32"], m)
def m(b): b["spec"]["nodes"][0]["outputs"][0]["dtype"]="f16"
case("declared-dtype", ["spec.nodes[0]:", "declared [4, 16] f16 but aten.mm.default gives [4, 16] f32"], m)
def m(b): b["spec"]["inputs"][1]["shape"]=[6,16]
case("shape-rule", ["spec.nodes[0]:", "node 'fc1'", "[4, 8]", "[6, 16]"], m)
def m(b): b["spec"]["inputs"][0]["shape"]=[1]*9
case("rank-too-big", ["spec.inputs[0].shape: rank 9 exceeds the maximum rank 8"], m)
def m(b): b["spec"]["inputs"][0]["shape"]=[-4,8]
case("negative-size", ["spec.inputs[0].shape[0]: size -4 is negative"], m)
def m(b): b["symbols"]={"S":{"min":1}}; b["spec"]["inputs"][0]["shape"]=["-S",8]
case("negative-symbolic-size", ["spec.inputs[0].shape[0]: size -S is negative"], m)
def m(b): b["spec"]["inputs"][0]["dtype"]="f33"
case("bad-dtype", ["spec.inputs[0].dtype: unknown dtype \"f33\""], m)
def m(b): b["spec"]["inputs"][0]["shape"]=["T",8]
case("unknown-symbol", ["spec.inputs[0].shape[0]:", "T"], m)
def m(b): b["symbols"]={"S":{"min":1}}; b["spec"]["inputs"][0]["shape"]=["S+*2",8]
case("bad-symbol-expr", ["spec.inputs[0].shape[0]: col 3"], m)
def m(b): b["symbols"]={"S":{"min":1}}; b["assume"]=["S %% 2 == 0"]
case("assume-syntax", ["assume[0]: col"], m)
def m(b): b["assume"]=["4 % 3 == 0"]
case("assume-false", ["assume[0]:", "false"], m)
def m(b): b["symbols"]={"S":{"min":4,"max":2}}
case("symbol-bad-bounds", ["symbols.S:"], m)
def m(b): del b["input_relation"]["w2"]
case("unmapped-input", ["input_relation: spec input 'w2' is not mapped"], m)
def m(b): b["input_relation"]["h"]=["h_0"]
case("relation-key-not-input", ["input_relation.h: 'h' is not an input of spec"], m)
def m(b): b["input_relation"]["zz"]=["x_0"]
case("relation-key-unknown", ["input_relation.zz: spec has no tensor 'zz'"], m)
def m(b): b["input_relation"]["w1"]=["cat(w1_0, w1_1,, dim=1)"]
case("relation-syntax", ["input_relation.w1[0]: col 16: expected"], m)
def m(b): b["input_relation"]["w1"]=["mm(w1_0, w1_1)"]
case("relation-not-clean", ["input_relation.w1[0]: col 1: mm is not a clean operator; relations may use cat, slice"], m)
def m(b): b["input_relation"]["w1"]=["cat(w1_0, w1_9, dim=1)"]
case("relation-unknown-tensor", ["input_relation.w1[0]: col 11: unknown tensor 'w1_9'"], m)
def m(b): b["input_relation"]["w1"]=["cat(w1_0, w1_1, dim=0)"]
case("relation-shape", ["input_relation.w1[0]:", "has type [16, 8] f32 but spec tensor 'w1' is [8, 16] f32"], m)
def m(b): b["input_relation"]["x"]=["x_0","h_0"]
case("relation-not-impl-input", ["input_relation.x[1]: 'h_0' is not an input of impl"], m)
def m(b): b["input_relation"]["x"]=["sum(x_0, x_0)"]
case("relation-sum-repeated", ["input_relation.x[0]:", "sum repeats the argument x_0", "scaling"], m)
def m(b): b["input_relation"]["x"]=[]
case("relation-empty", ["input_relation.x: expected at least one expression"], m)
def m(b): b["input_relation"]["x"]=["?a"]
case("relation-pattern-var", ["input_relation.x[0]: col 1: pattern variable"], m)
def m(b): b["expect_output_relation"]={"h":["y_0"]}
case("expect-non-output", ["expect_output_relation.h: 'h' is not an output of spec"], m)
def m(b): b["expect_output_relation"]={"y":["p_0"]}
case("expect-not-impl-output", ["expect_output_relation.y[0]: 'p_0' is not an output of impl"], m)
def m(b): b["check_outputs"]=["h"]
case("check-outputs-non-output", ["check_outputs[0]: 'h' is not an output of spec"], m)
def m(b): b["assume_relation"]={"x":["x_0"]}
case("assume-relation-input", ["assume_relation.x: 'x' is an input of spec"], m)
def m(b): b["spec"]["outputs"]=["y","z"]
case("outputs-unknown", ["spec.outputs[1]: unknown tensor 'z'"], m)
def m(b): b["spec"]["nodes"][0]["outputs"].append(R("h2"))
case("wrong-result-count", ["spec.nodes[0].outputs: aten.mm.default gives 1 result but 2 are listed"], m)
def m(b): b["impl"]["nodes"][-1]["outputs"].append(R("y_2"))
case("wrong-result-count-collective", ["impl.nodes[6]:", "comm.all_reduce", "gives 2 results but 3 are listed"], m)
def m(b): b["spec"]["nodes"][0]["outputs"]=[None]
case("null-result", ["spec.nodes[0].outputs:", "result 0 is null but is required"], m)
def m(b): b["impl"]={"ranks":[]}
case("impl-ranks", ["impl.ranks: expected at least one rank graph"], m)
def m(b): b["spec"]["inputs"][0]["shape"]=[4294967296,4294967296]
case("numel-overflow", ["more elements than int64"], m)
def m(b): b["spec"]["inputs"][0]["values"]={"min":0,"max":10}
case("values-on-float", ["spec.inputs[0].values: only integer tensors may declare a value range"], m)
def m(b): b["spec"]["inputs"][0]["name"]="x\u0001"
case("control-char-name", ["spec.inputs[0].name: tensor name contains a control character"], m)
def m(b): b["spec"]["outputs"]=[]
case("no-outputs", ["spec.outputs: a graph needs at least one output"], m)

def m(b): b["spec"]["nodes"][0]["src"]=41
case("src-not-string", ["spec.nodes[0].src: expected a string, found number 41"], m)
def m(b): b["impl"]["inputs"][0]["rank"]="0"
case("rank-not-int", ["impl.inputs[0].rank: expected an integer, found string \"0\""], m)
def m(b): b["spec"]["nodes"][0]["outputs"][0]=["h"]
case("result-not-object", ["spec.nodes[0].outputs[0]: expected a result object or null, found an array"], m)
def m(b): b["spec"]["inputs"][0]["dtype"]="i64"; b["spec"]["inputs"][0]["values"]={"max":10}
case("values-missing-min", ["spec.inputs[0].values.min: required field is missing"], m)
def m(b): b["symbols"]={"S-1":{"min":1}}
case("symbol-bad-name", ["symbols[\"S-1\"]"], m)
def m(b): b["expect_output_relation"]=["y_0"]
case("expect-not-object", ["expect_output_relation: expected an object, found an array"], m)
def m(b): b["spec"]["nodes"][0]["kwargs"]={"mat2":{"name":"w1"}}; b["spec"]["nodes"][0]["args"]=["x"]
case("arg-object", ["spec.nodes[0].kwargs.mat2: expected an argument value, found an object"], m)
def m(b): b["spec"]["nodes"][0]["op"]="aten.mm.out"
case("out-overload", ["spec.nodes[0].op: out= operator 'aten.mm.out' writes into its out= argument", "functionalize it (use aten.mm.default)"], m)

def m(b):
    b["symbols"]={"S":{"min":1},"T":{"min":1}}
    for t in b["spec"]["inputs"]:
        if t["name"]=="x": t["shape"]=["S",8]
    for n in b["spec"]["nodes"]:
        for o in n["outputs"]:
            if o and "shape" in o: o["shape"][0]="S"
    for t in b["impl"]["inputs"]:
        if t["name"].startswith("x_"): t["shape"]=["T",8]
    for n in b["impl"]["nodes"]:
        for o in n["outputs"]:
            if o and "shape" in o: o["shape"][0]="T"
case("relation-shape-unprovable", ["input_relation.x[0]: x_0 has type [T, 8] f32 but spec tensor 'x' is [S, 8] f32", "cannot be proved equal"], m)

# ---- per-rank implementation graphs (impl.ranks): the same MLP, one graph
# per rank with PyTorch's functional collectives, stitched by the loader.
def rank_graph(r, coll=None):
    """rank r: column-parallel fc1, row-parallel fc2, all_reduce + wait."""
    nodes=[N("fc1","aten.mm.default",["x","w1"],[R("h",[4,8])]),
           N("act","aten.gelu.default",["h"],[R("g")]),
           N("fc2","aten.mm.default",["g","w2"],[R("p",[4,8])]),
           coll or N("ar","_c10d_functional.all_reduce.default",["p","sum","12"],[R("ar",[4,8])]),
           N("wait","_c10d_functional.wait_tensor.default",["ar"],[R("y",[4,8])])]
    return {"inputs":[T("x",[4,8]),T("w1",[8,8]),T("w2",[8,8])],"nodes":nodes,"outputs":["y"]}
def base_ranks():
    b=base()
    b["impl"]={"ranks":[rank_graph(0),rank_graph(1)],"groups":{"12":[0,1]}}
    b["input_relation"]={"x":["r0.x","r1.x"],"w1":["cat(r0.w1, r1.w1, dim=1)"],"w2":["cat(r0.w2, r1.w2, dim=0)"]}
    b["expect_output_relation"]={"y":["r0.y","r1.y"]}
    return b
def rcase(name, phrases, mut):
    def full(b):
        nb=base_ranks(); b.clear(); b.update(nb); mut(b)
    case(name, phrases, full)
def coll(op, args, name="ar"):
    return N(name,"_c10d_functional."+op+".default",args,[R(name)])

def m(b): b["impl"]["groups"]={"12":[0,2]}
rcase("ranks-group-rank-range", ["impl.groups.12: rank 2 of group '12' does not exist (there are 2 ranks)"], m)
def m(b): b["impl"]["groups"]={"12":[1,1]}
rcase("ranks-group-duplicate", ["impl.groups.12: rank 1 is listed twice in group '12'"], m)
def m(b): b["impl"]["ranks"][1]["nodes"][3]=coll("all_gather_into_tensor",["p",2,"12"]); b["impl"]["ranks"][1]["nodes"][4]["outputs"]=[R("y")]
rcase("ranks-mismatch-op", ["impl.ranks[1].nodes[3]: collective #0 on group '12' is all_gather_into_tensor but rank 0's is all_reduce"], m)
def m(b):
    r=b["impl"]["ranks"][1]; r["nodes"]=r["nodes"][:3]; r["outputs"]=["p"]
rcase("ranks-missing-call", ["impl.ranks[0].nodes[3]: collective #0 on group '12' (all_reduce) has no partner on rank 1", "the program would hang"], m)
def m(b): b["impl"]["ranks"][1]["nodes"][3]["args"][1]="max"
rcase("ranks-mismatch-reduce-op", ["impl.ranks[1].nodes[3]: collective #0 on group '12' (all_reduce) reduces with 'max' but rank 0's with 'sum'"], m)
def m(b):
    r=b["impl"]["ranks"][1]; r["inputs"][2]=T("w2",[8,4])
    r["nodes"][2]["outputs"]=[R("p")]; r["nodes"][3]["outputs"]=[R("ar")]; r["nodes"][4]["outputs"]=[R("y")]
rcase("ranks-mismatch-size", ["impl.ranks[1].nodes[3]: collective #0 on group '12' (all_reduce) sends f32 [4, 4] but rank 0's sends f32 [4, 8]"], m)
def m(b): b["impl"]["groups"]={"12":[0,1],"3":[1]}; b["impl"]["ranks"][0]["nodes"][3]["args"][2]="3"
rcase("ranks-not-member", ["impl.ranks[0].nodes[3]: all_reduce on group '3', but rank 0 is not a member of that group (ranks 1)"], m)
def m(b):
    for r in b["impl"]["ranks"]:
        r["nodes"][3]=coll("all_gather_into_tensor",["p",4,"12"]); r["nodes"][4]["outputs"]=[R("y")]
rcase("ranks-group-size", ["impl.ranks[0].nodes[3]: all_gather_into_tensor on group '12' has group_size 4 but the group has 2 members (ranks 0, 1)"], m)
def m(b):
    for r in b["impl"]["ranks"]:
        r["nodes"][3]=coll("all_to_all_single",["p",[1,3],[1,3],"12"]); r["nodes"][4]["outputs"]=[R("y")]
rcase("ranks-unequal-splits", ["impl.ranks[0].nodes[3]: all_to_all_single on group '12' with unequal input_split_sizes [1, 3] is not supported yet"], m)
def m(b):
    for r in b["impl"]["ranks"]:
        r["nodes"][3]=coll("broadcast",["p",5,"12"])
rcase("ranks-broadcast-src", ["impl.ranks[0].nodes[3]: broadcast on group '12' from src 5, which is not a member of the group (ranks 0, 1; src is a global rank)"], m)
def m(b):
    b["impl"]["groups"]={"A":[0,1],"B":[0,1]}
    for k,r in enumerate(b["impl"]["ranks"]):
        first,second=("A","B") if k==0 else ("B","A")
        r["nodes"][3]=coll("all_reduce",["p","sum",first],"a1")
        r["nodes"][4]=coll("all_reduce",["a1","sum",second],"y")
rcase("ranks-deadlock", ["impl.ranks: the ranks' collective calls cannot be ordered (the program would deadlock)"], m)
def m(b):
    b["spec"]["groups"]={"7":[0,1]}
rcase("spec-group-two-members", ["spec.groups.7: spec group '7' has 2 members, but the spec is one rank"], m)
def m(b): b["impl"]["ranks"][1]["nodes"][0]["args"][0]="r0.x"
rcase("ranks-cross-rank-name", ["impl.ranks[1].nodes[0].args[0]: undefined tensor 'r0.x' (no input or node result of impl.ranks[1] has that name)"], m)
def m(b):
    b["impl"]["ranks"][0]["symbols"]={"u0":{"min":1}}
    b["impl"]["ranks"][1]["inputs"].append(T("e",["u0",2]))
rcase("ranks-symbol-of-other-rank", ["impl.ranks[1].inputs[3].shape[0]:", "u0"], m)
def m(b): b["impl"]["ranks"][0]["nodes"][0]["outputs"][0]["rank"]=1
rcase("ranks-tensor-rank", ["impl.ranks[0].nodes[0].outputs[0].rank: rank 1 in the graph of rank 0"], m)
def m(b): b["impl"]["ranks"][0]["group"]={}
rcase("ranks-unknown-field", ["impl.ranks[0].group: unknown field 'group' (expected one of: inputs, nodes, outputs, symbols, assume)"], m)
def m(b):
    for r in b["impl"]["ranks"]: r["nodes"][3]["args"][1]="product"
rcase("ranks-reduce-product", ["impl.ranks[0].nodes[3]: all_reduce on group '12' reduces with 'product', which cannot be stitched yet"], m)
def m(b): b["input_relation"]["x"]=["x_0"]
rcase("ranks-relation-old-names", ["input_relation.x[0]: col 1: unknown tensor 'x_0'"], m)
def m(b): b["inputs_behind_assumptions"]=["h"]
rcase("behind-not-input", ["inputs_behind_assumptions[0]: 'h' is not an input of spec (node 'fc1' produces it)"], m)
def m(b):
    b["assume_relation"]={"g":["cat(r0.g, r1.g, dim=1)"]}
    del b["input_relation"]["w2"]; b["inputs_behind_assumptions"]=["w2"]
rcase("behind-reachable", ["inputs_behind_assumptions[0]: 'w2' reaches the checked output 'y' without passing a tensor of assume_relation"], m)

os.makedirs(OUT+"/reject", exist_ok=True)
for name, phrases, mut, raw in cases:
    p=f"{OUT}/reject/{name}.json"
    if raw is not None:
        open(p,"w").write(raw)
    else:
        b=base(); mut(b)
        open(p,"w").write(json.dumps(b, indent=1)+"\n")
    open(f"{OUT}/reject/{name}.expect","w").write("2\n"+"\n".join(phrases)+"\n")
print(len(cases))
