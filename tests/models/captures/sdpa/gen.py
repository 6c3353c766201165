#!/usr/bin/env python3
"""gen.py — writes the hand-written attention bundles of this directory
(python3 gen.py; deterministic, stdlib only).

One attention block as TorchDynamo/AOTAutograd captures HF Llama-style
attention with the fused operators (torch.nn.functional.
scaled_dot_product_attention, tensor parallelism as Megatron / HF TP plans
do it: q, k, v projections column-parallel by heads, o_proj row-parallel
with an all-reduce), at tiny sizes, written from the structure of the model
code and NOT from captured data:

  spec (B batch, T tokens, H hidden, NH query heads, NKV kv heads, D head size):
    h = view(x, [B*T, H])
    q = transpose(view(mm(h, t(wq)), [B, T, NH, D]), 1, 2)      [B, NH, T, D]
    k, v likewise with NKV heads
    (GQA: k, v = repeat_interleave(k, NH/NKV, dim=1), or enable_gqa=True)
    a = ATTENTION(q, k, v, causal)                             [B, NH, T, D]
    y = view(mm(view(transpose(a, 1, 2), [B*T, NH*D]), t(wo)), [B, T, H])
  rank r of N: wq, wk, wv rows and wo columns of its heads; its partial y
  all-reduced (sum).

Bundles (expected: y = y_r on every rank):
  flash-tp2.json            _scaled_dot_product_flash_attention (#0), TP=2: refines;
  flash-tp4.json            the same at TP=4 (generic in ranks): refines;
  flash-tp2-fwdbwd.json     flash forward and backward (grad_wq/wk/wv = cat of
                            the ranks' along dim 0, grad_wo along dim 1): refines;
  cpu-flash-tp2-fwdbwd.json the same with the CPU flash operators: refines;
  flash-tp2-fwdbwd-lseswap.json
                            BUG ON PURPOSE: each rank's backward reads the other
                            rank's logsumexp: fails at 'attn_bwd';
  efficient-tp2-fwdbwd.json the same with the efficient operators: refines;
  flash-tp2-fwdbwd-symbolic.json, sdpa-gqa-ri-tp2-symbolic.json
                            the same with a symbolic token count T (B = 1):
                            refines, as their concrete twins;
  flash-tp2-kvswap.json     BUG ON PURPOSE: rank 0 attends with rank 1's key
                            heads and rank 1 with rank 0's: fails at 'attn_op';
  efficient-tp2.json        _scaled_dot_product_efficient_attention: refines;
  cpu-flash-tp2.json        _scaled_dot_product_flash_attention_for_cpu: refines;
  sdpa-gqa-ri-tp2.json      pre-dispatch scaled_dot_product_attention with
                            GQA by repeat_interleave of the kv heads: refines;
  sdpa-gqa-tp2.json         the same with enable_gqa=True: refines;
  sdpa-gqa-ri-tp2-badrep.json
                            BUG ON PURPOSE: the ranks repeat their kv heads
                            with repeat() (tiles) instead of
                            repeat_interleave (which the spec uses), a
                            wrong head grouping: fails at 'rep_k' (the spec's
                            repeated kv heads are no cat of the ranks').
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = "transformers/models/llama/modeling_llama.py"
B, T, H, D = 1, 4, 16, 4


def node(name, op, args, shape, dtype="f32", kwargs=None, outputs=None):
    n = {"name": name, "op": op, "args": args, "kwargs": kwargs or {}}
    n["outputs"] = outputs or [{"name": name, "shape": shape, "dtype": dtype}]
    n["src"] = SRC
    return n


def proj(nodes, name, w, rows, nh):
    """name = transpose(view(_unsafe_view(mm(h, t(w)), [B, T, rows]), [B, T, nh, D]), 1, 2)."""
    nodes += [
        node("t_" + name, "aten.t.default", [w], [H, rows]),
        node("mm_" + name, "aten.mm.default", ["h", "t_" + name], [B * T, rows]),
        node("uv_" + name, "aten._unsafe_view.default", ["mm_" + name, [B, T, rows]], [B, T, rows]),
        node("view_" + name, "aten.view.default", ["uv_" + name, [B, T, nh, D]], [B, T, nh, D]),
        node(name, "aten.transpose.int", ["view_" + name, 1, 2], [B, nh, T, D]),
    ]


def attention(kind, nodes, nh, nkv, bug=None):
    """Nodes computing 'attn' [B, nh, T, D] from q, k, v."""
    k, v = "k", "v"
    if kind in ("ri", "ri-badrep"):
        r = nh // nkv
        if bug == "badrep":
            nodes += [node("rep_k", "aten.repeat.default", ["k", [1, r, 1, 1]], [B, nh, T, D]),
                      node("rep_v", "aten.repeat.default", ["v", [1, r, 1, 1]], [B, nh, T, D])]
        else:
            nodes += [node("rep_k", "aten.repeat_interleave.self_int", ["k", r], [B, nh, T, D],
                           kwargs={"dim": 1}),
                      node("rep_v", "aten.repeat_interleave.self_int", ["v", r], [B, nh, T, D],
                           kwargs={"dim": 1})]
        k, v = "rep_k", "rep_v"
    out = [B, nh, T, D]
    if kind == "flash":
        nodes.append(node("attn_op", "aten._scaled_dot_product_flash_attention.default",
                          ["q", k, v, 0.0, True], None, kwargs={"scale": 0.5}, outputs=[
                              {"name": "attn", "shape": out, "dtype": "f32"},
                              {"name": "lse", "shape": [B, nh, T], "dtype": "f32"},
                              {"name": "cum_q", "shape": [0], "dtype": "i64"},
                              {"name": "cum_k", "shape": [0], "dtype": "i64"},
                              {"name": "max_q", "shape": [], "dtype": "i64"},
                              {"name": "max_k", "shape": [], "dtype": "i64"},
                              {"name": "rng", "shape": [], "dtype": "i64"},
                              {"name": "unused", "shape": [], "dtype": "i64"},
                              {"name": "dbg", "shape": [0], "dtype": "f32"}]))
    elif kind == "efficient":
        nodes.append(node("attn_op", "aten._scaled_dot_product_efficient_attention.default",
                          ["q", k, v, None, True, 0.0, True], None, outputs=[
                              {"name": "attn", "shape": out, "dtype": "f32"},
                              {"name": "lse", "shape": [B, nh, 32], "dtype": "f32"},
                              {"name": "seed", "shape": [], "dtype": "i64"},
                              {"name": "offset", "shape": [], "dtype": "i64"}]))
    elif kind == "cpu":
        nodes.append(node("attn_op", "aten._scaled_dot_product_flash_attention_for_cpu.default",
                          ["q", k, v, 0.0, True], None, outputs=[
                              {"name": "attn", "shape": out, "dtype": "f32"},
                              {"name": "lse", "shape": [B, nh, T], "dtype": "f32"}]))
    else:
        kw = {"is_causal": True}
        if kind == "gqa":
            kw["enable_gqa"] = True
        nodes.append(node("attn", "aten.scaled_dot_product_attention.default", ["q", k, v],
                          out, kwargs=kw))


def backward(kind, g, nh, spec):
    """The backward of the block for a given grad_y 'gy': grad_wo, and
    through the attention backward grad_wq, grad_wk, grad_wv."""
    g += [
        node("g_mm_o", "aten.view.default", ["gy", [B * T, H]], [B * T, H]),
        node("t_g", "aten.t.default", ["g_mm_o"], [H, B * T]),
        node("grad_wo" if spec else "grad_wo_p", "aten.mm.default", ["t_g", "flat"], [H, nh * D]),
        node("g_flat", "aten.mm.default", ["g_mm_o", "wo"], [B * T, nh * D]),
        node("g_uv", "aten.view.default", ["g_flat", [B, T, nh * D]], [B, T, nh * D]),
        node("g_tr", "aten.view.default", ["g_uv", [B, T, nh, D]], [B, T, nh, D]),
        node("g_attn", "aten.transpose.int", ["g_tr", 1, 2], [B, nh, T, D]),
    ]
    grads = [{"name": n, "shape": [B, nh, T, D], "dtype": "f32"} for n in ("gq", "gk", "gv")]
    if kind == "flash":
        g.append(node("attn_bwd", "aten._scaled_dot_product_flash_attention_backward.default",
                      ["g_attn", "q", "k", "v", "attn", "lse", None, None, T, T, 0.0, True,
                       "rng", "unused"], None, kwargs={"scale": 0.5}, outputs=grads))
    elif kind == "efficient":
        g.append(node("attn_bwd", "aten._scaled_dot_product_efficient_attention_backward.default",
                      ["g_attn", "q", "k", "v", None, "attn", "lse", "seed", "offset", 0.0,
                       [True, True, True, False], True], None, outputs=grads + [None]))
    else:
        g.append(node("attn_bwd", "aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
                      ["g_attn", "q", "k", "v", "attn", "lse", 0.0, True], None, outputs=grads))
    for w in ("q", "k", "v"):
        g += [
            node("g%s_t" % w, "aten.transpose.int", ["g" + w, 1, 2], [B, T, nh, D]),
            node("g%s_c" % w, "aten.clone.default", ["g%s_t" % w], [B, T, nh, D],
                 kwargs={"memory_format": "torch.contiguous_format"}),
            node("g%s_u" % w, "aten._unsafe_view.default", ["g%s_c" % w, [B, T, nh * D]], [B, T, nh * D]),
            node("g%s_v" % w, "aten.view.default", ["g%s_u" % w, [B * T, nh * D]], [B * T, nh * D]),
            node("g%s_tt" % w, "aten.t.default", ["g%s_v" % w], [nh * D, B * T]),
            node("grad_w" + w, "aten.mm.default", ["g%s_tt" % w, "h"], [nh * D, H]),
        ]


def graph(kind, nh, nkv, tp=None, bug=None, bwd=False):
    """Inputs, nodes and outputs of the spec (tp None) or of each rank."""
    ranks = [None] if tp is None else list(range(tp))
    inputs, nodes, outputs = [], [], []
    for r in ranks:
        lnh, lnkv = (nh, nkv) if r is None else (nh // tp, nkv // tp)
        sfx = "" if r is None else "_%d" % r
        kr = r if bug != "kvswap" or r is None else (r + 1) % tp
        g = []
        g.append(node("h", "aten.view.default", ["x", [B * T, H]], [B * T, H]))
        proj(g, "q", "wq", lnh * D, lnh)
        proj(g, "k", "wk" + ("" if r is None else "_%d" % kr if False else ""), lnkv * D, lnkv)
        proj(g, "v", "wv", lnkv * D, lnkv)
        attention(kind, g, lnh, lnkv, bug)
        g += [
            node("tr_a", "aten.transpose.int", ["attn", 1, 2], [B, T, lnh, D]),
            node("cl_a", "aten.clone.default", ["tr_a"], [B, T, lnh, D],
                 kwargs={"memory_format": "torch.contiguous_format"}),
            node("uv_a", "aten._unsafe_view.default", ["cl_a", [B, T, lnh * D]], [B, T, lnh * D]),
            node("flat", "aten.view.default", ["uv_a", [B * T, lnh * D]], [B * T, lnh * D]),
            node("t_o", "aten.t.default", ["wo"], [lnh * D, H]),
            node("mm_o", "aten.mm.default", ["flat", "t_o"], [B * T, H]),
            node("y" if r is None else "part", "aten.view.default", ["mm_o", [B, T, H]], [B, T, H]),
        ]
        if bwd:
            backward(kind, g, lnh, r is None)
        inp = [("x", [B, T, H]), ("wq", [lnh * D, H]), ("wk", [lnkv * D, H]),
               ("wv", [lnkv * D, H]), ("wo", [H, lnh * D])]
        if bwd:
            inp.append(("gy", [B, T, H]))
        if r is None:
            inputs += [{"name": n, "shape": s, "dtype": "f32"} for n, s in inp]
            nodes += g
            outputs.append("y")
            if bwd:
                outputs += ["grad_wq", "grad_wk", "grad_wv", "grad_wo"]
            continue
        ren = {n: n + sfx for n, _ in inp}
        ren["wk"] = "wk_%d" % kr
        ren["wv"] = "wv_%d" % kr if bug == "kvswap" else "wv" + sfx
        inputs += [{"name": n + sfx, "shape": s, "dtype": "f32", "rank": r} for n, s in inp]
        for n in g:
            n = json.loads(json.dumps(n))
            n["name"] += sfx

            def rn(a):
                if isinstance(a, str):
                    return ren.get(a, a + sfx if a in local else a)
                if isinstance(a, list):
                    return [rn(b) for b in a]
                return a
            n["args"] = [rn(a) for a in n["args"]]
            if bug == "lseswap" and n["name"] == "attn_bwd" + sfx:
                n["args"][5] = "lse_%d" % ((r + 1) % tp)
            for o in n["outputs"]:
                if o is not None:
                    o["name"] += sfx
                    o["rank"] = r
            nodes.append(n)
    if tp is not None:
        nodes.append({"name": "all_reduce", "op": "comm.all_reduce.default",
                      "args": [["part_%d" % r for r in ranks]], "kwargs": {},
                      "outputs": [{"name": "y_%d" % r, "shape": [B, T, H], "dtype": "f32",
                                   "rank": r} for r in ranks], "src": SRC})
        outputs = ["y_%d" % r for r in ranks]
        if bwd:
            outputs += ["grad_w%s_%d" % (w, r) for w in "qkv" for r in ranks]
            outputs += ["grad_wo_p_%d" % r for r in ranks]
    return {"inputs": inputs, "nodes": nodes, "outputs": outputs}


local = set()


def bundle(name, desc, kind, nh, nkv, tp, bug=None, bwd=False, symbolic=False):
    """Write NAME.json; SYMBOLIC: the token count is the symbol T (B = 1,
    so that B*T is T)."""
    global local, T
    concrete_t = T
    if symbolic:
        T = "T"
    spec = graph(kind, nh, nkv, bwd=bwd)
    local = {o["name"] for n in spec["nodes"] for o in n["outputs"] if o} | {"part", "y"}
    impl = graph(kind, nh, nkv, tp, bug, bwd)
    rel = {"x": ["x_%d" % r for r in range(tp)]}
    expect = {"y": ["y_%d" % r for r in range(tp)]}
    if bwd:
        rel["gy"] = ["gy_%d" % r for r in range(tp)]
        for w in "qkv":
            expect["grad_w" + w] = ["cat(%s, dim=0)" % ", ".join("grad_w%s_%d" % (w, r)
                                                             for r in range(tp))]
        expect["grad_wo"] = ["cat(%s, dim=1)" % ", ".join("grad_wo_p_%d" % r for r in range(tp))]
    for w, d in (("wq", 0), ("wk", 0), ("wv", 0), ("wo", 1)):
        parts = ", ".join("%s_%d" % (w, r) for r in range(tp))
        rel[w] = ["cat(%s, dim=%d)" % (parts, d)]
    T = concrete_t
    b = {"format": "shardcheck-bundle/1", "name": name, "description": desc,
         "symbols": {"T": {"min": 1}} if symbolic else {},
         "assume": [], "input_relation": rel,
         "expect_output_relation": expect,
         "spec": spec, "impl": impl}
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(b, f, indent=1)
        f.write("\n")


def main():
    common = ("One HF Llama-style attention block (q/k/v column-parallel by heads, o_proj "
              "row-parallel + all_reduce), hand-written at tiny sizes by "
              "tests/models/captures/sdpa/gen.py; ")
    bundle("flash-tp2", common + "_scaled_dot_product_flash_attention, causal, TP=2.",
           "flash", 4, 4, 2)
    bundle("flash-tp4", common + "_scaled_dot_product_flash_attention, causal, TP=4.",
           "flash", 4, 4, 4)
    bundle("flash-tp2-kvswap", common + "_scaled_dot_product_flash_attention, TP=2. BUG ON "
           "PURPOSE: each rank attends with the other rank's key and value heads.",
           "flash", 4, 4, 2, bug="kvswap")
    bundle("flash-tp2-fwdbwd", common + "_scaled_dot_product_flash_attention and its "
           "backward, causal, TP=2 (gradients of wq, wk, wv, wo for a given grad_y).",
           "flash", 4, 4, 2, bwd=True)
    bundle("cpu-flash-tp2-fwdbwd", common + "_scaled_dot_product_flash_attention_for_cpu and "
           "its backward, causal, TP=2.", "cpu", 4, 4, 2, bwd=True)
    bundle("flash-tp2-fwdbwd-symbolic", common + "_scaled_dot_product_flash_attention and "
           "its backward, causal, TP=2, with a symbolic token count T.", "flash", 4, 4, 2,
           bwd=True, symbolic=True)
    bundle("sdpa-gqa-ri-tp2-symbolic", common + "scaled_dot_product_attention with 4 query and "
           "2 kv heads repeated by repeat_interleave, TP=2, with a symbolic token count T.",
           "ri", 4, 2, 2, symbolic=True)
    bundle("flash-tp2-fwdbwd-lseswap", common + "_scaled_dot_product_flash_attention and its "
           "backward, TP=2. BUG ON PURPOSE: each rank's backward reads the other rank's "
           "logsumexp.", "flash", 4, 4, 2, bug="lseswap", bwd=True)
    bundle("efficient-tp2-fwdbwd", common + "_scaled_dot_product_efficient_attention and "
           "its backward (grad_attn_bias not computed: null), causal, TP=2.", "efficient", 4, 4,
           2, bwd=True)
    bundle("efficient-tp2", common + "_scaled_dot_product_efficient_attention, TP=2.",
           "efficient", 4, 4, 2)
    bundle("cpu-flash-tp2", common + "_scaled_dot_product_flash_attention_for_cpu, TP=2.",
           "cpu", 4, 4, 2)
    bundle("sdpa-gqa-ri-tp2", common + "scaled_dot_product_attention with 4 query and 2 kv "
           "heads repeated by repeat_interleave, TP=2.", "ri", 4, 2, 2)
    bundle("sdpa-gqa-tp2", common + "scaled_dot_product_attention(enable_gqa=True) with 4 "
           "query and 2 kv heads, TP=2.", "gqa", 4, 2, 2)
    bundle("sdpa-gqa-ri-tp2-badrep", common + "scaled_dot_product_attention, 8 query and 4 "
           "kv heads, TP=2. BUG ON PURPOSE: the ranks tile their kv heads with repeat() where "
           "the spec interleaves them with repeat_interleave.", "ri", 8, 4, 2, bug="badrep")


if __name__ == "__main__":
    main()
