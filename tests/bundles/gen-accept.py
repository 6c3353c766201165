#!/usr/bin/env python3
"""gen-accept.py — writes accept/*.json: valid edge cases of the format (symbolic
shapes, null results, negative dims, kwargs, bare op names, float args, ...)."""
import json, os
from bundlejson import N, R, T
OUT=os.path.join(os.path.dirname(os.path.abspath(__file__)), "accept")
os.makedirs(OUT, exist_ok=True)
def identity_impl(spec, suffix="_0"):
    """the spec graph renamed, as a one-rank implementation"""
    ren=lambda s: s+suffix
    def rarg(a):
        if isinstance(a,str) and a in names: return ren(a)
        if isinstance(a,list): return [rarg(x) for x in a]
        return a
    names=set(t["name"] for t in spec["inputs"])
    for n in spec["nodes"]:
        for o in n["outputs"]:
            if o: names.add(o["name"])
    impl={"inputs":[dict(t,name=ren(t["name"])) for t in spec["inputs"]],"nodes":[],"outputs":[ren(o) for o in spec["outputs"]]}
    for n in spec["nodes"]:
        m=dict(n); m["name"]=n["name"]+suffix; m["args"]=[rarg(a) for a in n["args"]]
        if "kwargs" in n: m["kwargs"]={k:rarg(v) for k,v in n["kwargs"].items()}
        m["outputs"]=[dict(o,name=ren(o["name"])) if o else None for o in n["outputs"]]
        impl["nodes"].append(m)
    rel={t["name"]:[ren(t["name"])] for t in spec["inputs"]}
    exp={o:[ren(o)] for o in spec["outputs"]}
    return impl, rel, exp
def write(name, b):
    open(f"{OUT}/{name}.json","w").write(json.dumps(b, indent=1)+"\n")
def simple(name, spec, **extra):
    impl, rel, exp = identity_impl(spec)
    b={"format":"shardcheck-bundle/1","name":name,"spec":spec,"impl":impl,"input_relation":rel,"expect_output_relation":exp}
    b.update(extra); write(name,b)

# 1. symbolic shapes: sequence parallel relu, x split along S
write("symbolic-split", {
 "format":"shardcheck-bundle/1","name":"symbolic-split",
 "symbols":{"S":{"min":2,"max":65536},"H":{"min":1}},
 "assume":["S % 2 == 0"],
 "spec":{"inputs":[T("x",["S","H"])],
         "nodes":[N("act","aten.relu.default",["x"],[R("y",["S","H"],"f32")])],"outputs":["y"]},
 "impl":{"inputs":[T("x_0",["S/2","H"],rank=0),T("x_1",["S/2","H"],rank=1)],
         "nodes":[N("act_0","aten.relu.default",["x_0"],[R("y_0",["S/2","H"])]),
                  N("act_1","aten.relu.default",["x_1"],[R("y_1",["S/2","H"])]),
                  N("gather","comm.all_gather",[["y_0","y_1"]],[R("z_0",["S","H"]),R("z_1",["S","H"])],kwargs={"dim":0}),
                  N("half","aten.slice.Tensor",["z_0",0,"S/2","9223372036854775807"],[R("zh_0",["S/2","H"])]),
                  N("flat","aten.view.default",["zh_0",["(S/2)*H"]],[R("zf_0",["S*H/2"])])],
         "outputs":["y_0","y_1","z_0","z_1","zf_0"]},
 "input_relation":{"x":["cat(x_0, x_1, dim=0)"]},
 "expect_output_relation":{"y":["cat(y_0, y_1, dim=0)","z_0","z_1","slice(cat(z_0, z_1, dim=1), dim=1, start=0, end=\"H\")"]}})

# 2. multi-output nodes with null results (layer norm backward with output_mask) and split
spec={"inputs":[T("x",[4,8]),T("w",[8]),T("b",[8]),T("dy",[4,8])],
      "nodes":[N("ln","aten.native_layer_norm.default",["x",[8],"w","b",1e-5],[R("out",[4,8]),R("mean",[4,1]),R("rstd",[4,1])]),
               N("ln_bwd","aten.native_layer_norm_backward.default",["dy","x",[8],"mean","rstd","w","b",[True,False,False]],[R("dx",[4,8]),None,None]),
               N("halves","aten.split.Tensor",["dx",2],[R("dx_a",[2,8]),R("dx_b",[2,8])]),
              ],
      "outputs":["out","dx_a","dx_b"]}
simple("multi-output-null", spec)

# 3. negative dims
spec={"inputs":[T("x",[2,3,4])],
      "nodes":[N("tr","aten.transpose.int",["x",-2,-1],[R("xt",[2,4,3])]),
               N("sl","aten.slice.Tensor",["xt",-1,0,2],[R("xs",[2,4,2])]),
               N("sm","aten._softmax.default",["xs",-1,False],[R("p",[2,4,2])])],
      "outputs":["p"]}
impl={"inputs":[T("x_0",[2,3,2],rank=0),T("x_1",[2,3,2],rank=1)],
      "nodes":[N("cat","aten.cat.default",[["x_0","x_1"],-1],[R("xx",[2,3,4])]),
               N("tr","aten.transpose.int",["xx",-2,-1],[R("xt",[2,4,3])]),
               N("sl","aten.slice.Tensor",["xt",-1,0,2],[R("xs",[2,4,2])]),
               N("sm","aten._softmax.default",["xs",-1,False],[R("p",[2,4,2])])],
      "outputs":["p"]}
write("negative-dims", {"format":"shardcheck-bundle/1","name":"negative-dims","spec":spec,"impl":impl,
  "input_relation":{"x":["cat(x_0, x_1, dim=-1)","transpose(transpose(cat(x_0, x_1, dim=-1), dim0=-1, dim1=0), dim0=0, dim1=-1)"]},
  "expect_output_relation":{"p":["p"]}})

# 4. kwargs, ignored kwargs, dtype arguments
spec={"inputs":[T("x",[4,8])],
      "nodes":[N("s","aten.sum.dim_IntList",["x",[-1]],[R("s",[4,1],"f64")],kwargs={"keepdim":True,"dtype":"f64"}),
               N("c","aten._to_copy.default",["x"],[R("xh",[4,8],"f16")],kwargs={"dtype":"torch.float16","layout":"torch.strided","device":"cuda:0","pin_memory":False}),
               N("z","aten.zeros.default",[[4,8]],[R("zero",[4,8],"f32")],kwargs={"dtype":"f32","device":"cpu","pin_memory":False,"layout":None}),
               N("a","aten.add.Tensor",["x","zero"],[R("xa",[4,8])],kwargs={"alpha":2}),
               N("g","aten.gelu.default",["xa"],[R("ga",[4,8])],kwargs={"approximate":"tanh"})],
      "outputs":["s","xh","ga"]}
simple("kwargs", spec)

# 5. bare op names (single overload)
spec={"inputs":[T("x",[4,8]),T("w",[8,2])],
      "nodes":[N("mm","aten.mm",["x","w"],[R("h",[4,2])]),
               N("act","aten.gelu",["h"],[R("g",[4,2])])],
      "outputs":["g"]}
impl={"inputs":[T("x_0",[4,8]),T("w_0",[8,1]),T("w_1",[8,1])],
      "nodes":[N("mm_0","aten.mm",["x_0","w_0"],[R("h_0",[4,1])]),
               N("mm_1","aten.mm",["x_0","w_1"],[R("h_1",[4,1])]),
               N("ag","comm.all_gather",[["h_0","h_1"]],[R("a_0",[4,2]),R("a_1",[4,2])],kwargs={"dim":1}),
               N("act","aten.gelu",["a_0"],[R("g_0",[4,2])])],
      "outputs":["g_0"]}
write("bare-op-names", {"format":"shardcheck-bundle/1","name":"bare-op-names","spec":spec,"impl":impl,
  "input_relation":{"x":["x_0"],"w":["cat(w_0, w_1, dim=1)"]},"expect_output_relation":{"g":["g_0"]}})

# 6. float arguments "-inf", "inf", "nan"
spec={"inputs":[T("x",[4,4]),T("m",[4,4],"bool")],
      "nodes":[N("mf","aten.masked_fill.Scalar",["x","m","-inf"],[R("xm",[4,4])]),
               N("cl","aten.clamp.default",["xm"],[R("xc",[4,4])],kwargs={"min":"-inf","max":"inf"}),
               N("sm","aten._softmax.default",["xc",-1,False],[R("p",[4,4])])],
      "outputs":["p"]}
simple("float-inf-args", spec)

# 7. nodes listed out of topological order
spec={"inputs":[T("x",[4,8]),T("w1",[8,16]),T("w2",[16,8])],
      "nodes":[N("fc2","aten.mm.default",["g","w2"],[R("y",[4,8])]),
               N("act","aten.gelu.default",["h"],[R("g",[4,16])]),
               N("fc1","aten.mm.default",["x","w1"],[R("h",[4,16])])],
      "outputs":["y"]}
simple("non-topological-order", spec)

# 8. integer inputs with a value range, check_outputs, assume_relation, creation ops
spec={"inputs":[T("ids",["B",16],"i64",values={"min":0,"max":"V-1"}),T("emb",["V",32])],
      "nodes":[N("e","aten.embedding.default",["emb","ids"],[R("h",["B",16,32])]),
               N("pos","aten.arange.default",[16],[R("pos",[16],"i64")],kwargs={"dtype":"i64","device":"cpu","pin_memory":False}),
               N("mask","aten.full.default",[[16,16],"-inf"],[R("mask",[16,16])],kwargs={"dtype":"f32"}),
               N("tri","aten.triu.default",["mask",1],[R("causal",[16,16])]),
               N("s","aten.sum.dim_IntList",["h",[1]],[R("hs",["B",32])])],
      "outputs":["hs","pos","causal"]}
impl, rel, exp = identity_impl(spec, "_r0")
write("values-and-check-outputs", {"format":"shardcheck-bundle/1","name":"values-and-check-outputs",
  "description":"embedding lookup with token ids in [0, V); only hs is checked",
  "symbols":{"B":{"min":1},"V":{"min":2,"max":1000000}},
  "spec":spec,"impl":impl,"input_relation":rel,
  "assume_relation":{"h":["h_r0"],"pos":["arange(start=0, end=16)"]},
  "check_outputs":["hs"],"expect_output_relation":{"hs":["hs_r0"]}})

# 9. dotted per-rank style names, relation with slices and sums, src fields, extension field
spec={"inputs":[T("a",[4,6]),T("b",[6,3])],
      "nodes":[dict(N("mm","aten.mm.default",["a","b"],[R("c",[4,3])]),src="model.py:41")],
      "outputs":["c"]}
impl={"inputs":[T("r0.a",[4,3],rank=0),T("r1.a",[4,3],rank=1),T("r0.b",[3,3],rank=0),T("r1.b",[3,3],rank=1)],
      "nodes":[N("r0.mm","aten.mm.default",["r0.a","r0.b"],[R("r0.c",[4,3])]),
               N("r1.mm","aten.mm.default",["r1.a","r1.b"],[R("r1.c",[4,3])]),
               N("ar","comm.all_reduce",[["r0.c","r1.c"]],[R("r0.y",[4,3]),R("r1.y",[4,3])],kwargs={"op":"sum","ranks":[0,1]})],
      "outputs":["r0.y","r1.y"]}
write("dotted-names", {"format":"shardcheck-bundle/1","name":"dotted-names","x-exporter":{"version":"test"},
  "spec":spec,"impl":impl,
  "input_relation":{"a":["cat(r0.a, r1.a, dim=1)"],"b":["cat(r0.b, r1.b, dim=0)","cat(slice(cat(r0.b, r1.b, dim=0), dim=0, start=0, end=3), slice(cat(r0.b, r1.b, dim=0), dim=0, start=3, end=6))"]},
  "expect_output_relation":{"c":["r0.y","r1.y"]}})

# 10. empty graph parts: no nodes in spec (output is an input)
write("passthrough", {"format":"shardcheck-bundle/1",
  "spec":{"inputs":[T("x",[3])],"nodes":[],"outputs":["x"]},
  "impl":{"inputs":[T("x_0",[3])],"nodes":[],"outputs":["x_0"]},
  "input_relation":{"x":["x_0"]},"expect_output_relation":{"x":["x_0"]}})
# ---- per-rank implementation graphs (impl.ranks), stitched by the loader
def mlp_rank(pre=None, post=None, coll_op="all_reduce", coll_args=None, xshape=(4,8), yshape=(4,8)):
    """one rank of a TP=2 MLP: column-parallel fc1, row-parallel fc2, then a collective"""
    nodes=list(pre or [])
    xin = "xg" if pre else "x"
    nodes += [N("fc1","aten.mm.default",[xin,"w1"],[R("h",[4,8])]),
              N("act","aten.gelu.default",["h"],[R("g",[4,8])]),
              N("fc2","aten.mm.default",["g","w2"],[R("p",[4,8])]),
              N("c","_c10d_functional.%s.default" % coll_op, ["p"]+(coll_args or ["sum","12"]),[R("c",list(yshape))]),
              N("wait","_c10d_functional.wait_tensor.default",["c"],[R("y",list(yshape))])]
    nodes += list(post or [])
    return {"inputs":[T("x",list(xshape)),T("w1",[8,8]),T("w2",[8,8])],"nodes":nodes,"outputs":["y"]}
mlp_spec={"inputs":[T("x",[4,8]),T("w1",[8,16]),T("w2",[16,8])],
          "nodes":[N("fc1","aten.mm.default",["x","w1"],[R("h",[4,16])]),
                   N("act","aten.gelu.default",["h"],[R("g",[4,16])]),
                   N("fc2","aten.mm.default",["g","w2"],[R("y",[4,8])])],
          "outputs":["y"]}
mlp_rel={"x":["r0.x","r1.x"],"w1":["cat(r0.w1, r1.w1, dim=1)"],"w2":["cat(r0.w2, r1.w2, dim=0)"]}

# 11. Megatron TP=2 MLP, one graph per rank, all_reduce + wait_tensor
write("ranks-mlp-tp2", {"format":"shardcheck-bundle/1","name":"ranks-mlp-tp2",
  "spec":mlp_spec,"impl":{"ranks":[mlp_rank(),mlp_rank()],"groups":{"12":[0,1]}},
  "input_relation":mlp_rel,"expect_output_relation":{"y":["r0.y","r1.y"]}})

# 12. sequence parallel: all_gather the row-split input, reduce_scatter the
# partial sums (groups absent: every rank), with wait_tensor(wait_tensor(x))
def sp_rank():
    pre=[N("ag","_c10d_functional.all_gather_into_tensor.default",["x",2,"12"],[R("ag",[4,8])]),
         N("w0","_c10d_functional.wait_tensor.default",["ag"],[R("ag2",[4,8])]),
         N("w00","_c10d_functional.wait_tensor.default",["ag2"],[R("xg",[4,8])])]
    return mlp_rank(pre=pre, coll_op="reduce_scatter_tensor", coll_args=["sum",2,"12"], xshape=(2,8), yshape=(2,8))
write("ranks-sequence-parallel", {"format":"shardcheck-bundle/1","name":"ranks-sequence-parallel",
  "spec":mlp_spec,"impl":{"ranks":[sp_rank(),sp_rank()]},
  "input_relation":{"x":["cat(r0.x, r1.x, dim=0)"],"w1":["cat(r0.w1, r1.w1, dim=1)"],"w2":["cat(r0.w2, r1.w2, dim=0)"]},
  "expect_output_relation":{"y":["cat(r0.y, r1.y, dim=0)"]}})

# 13. one-member groups in spec and impl (logging all-reduces), vllm.all_reduce,
# a dead collective, a broadcast of the data from rank 0
def misc_rank(k):
    pre=[N("bc","_c10d_functional.broadcast.default",["x",0,"12"],[R("bc",[4,8])]),
         N("wbc","_c10d_functional.wait_tensor.default",["bc"],[R("xg",[4,8])])]
    r=mlp_rank(pre=pre)
    r["nodes"][-2]=N("c","vllm.all_reduce.default",["p","12"],[R("y",[4,8])])
    r["nodes"].pop()
    r["nodes"]+= [N("log","_c10d_functional.all_reduce.default",["y","sum",str(1+2*k)],[R("log")]),
                  N("dead","_c10d_functional.all_reduce.default",["h","max","12"],[R("dead")])]
    return r
spec13=json.loads(json.dumps(mlp_spec))
spec13["groups"]={"7":[0]}
spec13["nodes"].append(N("slog","_c10d_functional.all_reduce.default",["y","sum","7"],[R("slog")]))
spec13["nodes"].append(N("swait","_c10d_functional.wait_tensor.default",["slog"],[R("sy")]))
spec13["outputs"]=["y","sy"]
write("ranks-one-member-groups", {"format":"shardcheck-bundle/1","name":"ranks-one-member-groups",
  "spec":spec13,"impl":{"ranks":[misc_rank(0),misc_rank(1)],"groups":{"12":[0,1],"1":[0],"3":[1]}},
  "input_relation":{"x":["r0.x"],"w1":["cat(r0.w1, r1.w1, dim=1)"],"w2":["cat(r0.w2, r1.w2, dim=0)"]},
  "expect_output_relation":{"y":["r0.y","r1.y"]},"check_outputs":["y"]})

# 14. rank-local symbols (data-dependent u0 per rank, as fx2bundle writes
# them), graph-level symbols/assume in the spec, an unknown top-level field
# (a warning); inputs_behind_assumptions is pinned in tests/unit/test-ranks.c
def sym_rank(k):
    r=mlp_rank()
    r["symbols"]={"u0":{"min":0,"max":32768}}
    r["assume"]=["u0 >= 0","u0 <= 32768"]
    r["inputs"].append(T("idx",["u0",1],"i64"))
    r["nodes"].append(N("v","aten.view.default",["idx",["u0"]],[R("flat",["u0"],"i64")]))
    return r
spec14=json.loads(json.dumps(mlp_spec))
spec14["symbols"]={"u0":{"min":0,"max":32768}}
spec14["assume"]=["u0 >= 0"]
write("ranks-symbols-extensions", {"format":"shardcheck-bundle/1","name":"ranks-symbols-extensions",
  "x-note":"extension fields start with x-","converter":{"tool":"test"},
  "spec":spec14,"impl":{"ranks":[sym_rank(0),sym_rank(1)],"groups":{"12":[0,1]}},
  "input_relation":mlp_rel,"expect_output_relation":{"y":["r0.y","r1.y"]}})

print("ok")
