#!/usr/bin/env python3
"""gen-vllm-layer.py — write the hand-written vLLM-style decoder layer bundles.

usage: gen-vllm-layer.py OUTDIR

Writes vllm-layer-tp2.json and vllm-layer-tp4.json: one Qwen2/Llama-style
decoder layer as vLLM's TorchDynamo capture shows it (docs/real-captures.md:
custom kernels unwrapped from auto_functionalized, one graph per rank,
vllm.all_reduce(x, 'tp:0') after the row-parallel layers), at tiny sizes,
written from the structure of vLLM's model code and NOT from any captured
data.  The spec is the same code at TP=1 (no all-reduce: vLLM skips it on one
rank).  Tensor parallelism as vLLM does it:

  - qkv_proj: QKVParallelLinear, [q | k | v] rows, each of q, k and v split
    by heads across the ranks (grouped-query: every rank keeps the query
    heads of its kv heads), bias split alike;
  - rotary embedding per token (positions replicated), NeoX style;
  - attention over the rank's heads; o_proj row-parallel + all-reduce;
  - gate_up_proj: MergedColumnParallelLinear, [gate | up], each half split;
    silu_and_mul; down_proj row-parallel + all-reduce;
  - RMSNorm weights, positions, the rotary cache and the hidden states
    replicated.

The layer input is the hidden state (replicated), so no relation is
assumed.  Two planted bugs at degree 2, BUG ON PURPOSE (their descriptions
say so), must fail at the node named in verdicts.json:

  - vllm-layer-tp2-noreduce.json: down_proj's all-reduce is missing, so
    each rank adds its partial sum to the residual (fails at the final
    fused add + RMSNorm, auto_functionalized_5);
  - vllm-layer-tp2-kvswap.json: the kv heads are sharded in the other rank
    order than the query heads, so rank 0's query heads attend with rank
    1's kv head (fails at attention, auto_functionalized_2).

Deterministic: running it twice writes the same bytes."""
import json
import os
import sys

T = 4           # tokens
H = 32          # hidden size
HQ, HKV = 8, 4  # query and kv heads (GQA ratio 2)
HS = 4          # head size (NeoX rotation over the whole head)
I = 24          # intermediate size
P = 16          # rotary cache rows (max position)
EPS = 1e-06
DT = "f32"


def t(name, shape, dtype=DT):
    return {"name": name, "shape": shape, "dtype": dtype}


def layer(tp, bug=None):
    """Nodes, inputs and outputs of one rank's graph at degree TP (tp=1: spec)."""
    q, kv, inter = HQ * HS // tp, HKV * HS // tp, I // tp
    qkv = q + 2 * kv
    heads, kv_heads = HQ // tp, HKV // tp
    inputs = [t("hidden", [T, H]), t("ln1_w", [H]), t("qkv_b", [qkv]), t("qkv_w", [qkv, H]),
              t("cos_sin_cache", [P, HS]), t("positions", [T], "i64"), t("o_w", [H, q]),
              t("ln2_w", [H]), t("gate_up_w", [2 * inter, H]), t("down_w", [H, inter]),
              t("norm_w", [H])]
    inputs[5]["values"] = {"min": 0, "max": P - 1}
    nodes = []

    def node(name, op, args, outs, kwargs=None):
        nodes.append({"name": name, "op": op, "args": args, "kwargs": kwargs or {},
                      "outputs": outs})

    def reduce(name, x):
        """vLLM's tensor_model_parallel_all_reduce (skipped on one rank)."""
        if tp == 1:
            return x
        node(name, "vllm.all_reduce.default", [x, "tp:0"], [t(name, [T, H])])
        return name

    # input_layernorm: out = torch.empty_like(x); _C.rms_norm(out, x, w, eps)
    node("empty_like", "aten.empty_like.default", ["hidden"], [t("empty_like", [T, H])])
    node("detach", "aten.detach.default", ["ln1_w"], [t("detach", [H])])
    node("auto_functionalized", "_C.rms_norm.default", [],
         [t("getitem_1", [T, H])],
         {"result": "empty_like", "input": "hidden", "weight": "detach", "epsilon": EPS})
    # qkv_proj and q, k, v = qkv.split([q_size, kv_size, kv_size], dim=-1)
    node("t", "aten.t.default", ["qkv_w"], [t("t", [H, qkv])])
    node("addmm", "aten.addmm.default", ["qkv_b", "getitem_1", "t"], [t("addmm", [T, qkv])])
    node("split_with_sizes", "aten.split_with_sizes.default", ["addmm", [q, kv, kv], -1],
         [t("getitem_2", [T, q]), t("getitem_3", [T, kv]), None])
    # rotary_emb(positions, q, k): in place, functionalized into slice_scatter
    node("auto_functionalized_1", "_C.rotary_embedding.default", [],
         [t("getitem_6", [T, q]), t("getitem_7", [T, kv])],
         {"positions": "positions", "query": "getitem_2", "key": "getitem_3", "head_size": HS,
          "cos_sin_cache": "cos_sin_cache", "is_neox": True})
    node("slice_scatter", "aten.slice_scatter.default", ["addmm", "getitem_6", 1, 0, q],
         [t("slice_scatter", [T, qkv])])
    node("slice_scatter_1", "aten.slice_scatter.default",
         ["slice_scatter", "getitem_7", 1, q, q + kv], [t("slice_scatter_1", [T, qkv])])
    # Attention.forward: output = torch.empty_like(query).view(-1, heads, hs)
    node("split_with_sizes_3", "aten.split_with_sizes.default", ["slice_scatter_1", [q, kv, kv], -1],
         [t("getitem_14", [T, q]), None, None])
    node("empty_like_1", "aten.empty_like.default", ["getitem_14"], [t("empty_like_1", [T, q])])
    node("view_1", "aten.view.default", ["empty_like_1", [-1, heads, HS]],
         [t("view_1", [T, heads, HS])])
    for k, (res, width, nh, vname) in enumerate([("getitem_17", q, heads, "view_4"),
                                                 ("getitem_21", kv, kv_heads, "view_5"),
                                                 ("getitem_25", kv, kv_heads, "view_6")]):
        outs = [None, None, None]
        outs[k] = t(res, [T, width])
        node("split_with_sizes_%d" % (4 + k), "aten.split_with_sizes.default",
             ["slice_scatter_1", [q, kv, kv], -1], outs)
        node(vname, "aten.view.default", [res, [-1, nh, HS]], [t(vname, [T, nh, HS])])
    node("auto_functionalized_2", "vllm.unified_attention_with_output.default", [],
         [t("getitem_27", [T, heads, HS])],
         {"query": "view_4", "key": "view_5", "value": "view_6", "output": "view_1",
          "layer_name": "model.layers.0.self_attn.attn"})
    node("view_7", "aten.view.default", ["getitem_27", [T, q]], [t("view_7", [T, q])])
    # o_proj (row-parallel) and its all-reduce
    node("t_1", "aten.t.default", ["o_w"], [t("t_1", [q, H])])
    node("mm", "aten.mm.default", ["view_7", "t_1"], [t("mm", [T, H])])
    attn = reduce("all_reduce_1", "mm")
    # post_attention_layernorm(hidden, residual): _C.fused_add_rms_norm
    node("detach_1", "aten.detach.default", ["ln2_w"], [t("detach_1", [H])])
    node("auto_functionalized_3", "_C.fused_add_rms_norm.default", [],
         [t("getitem_29", [T, H]), t("getitem_30", [T, H])],
         {"input": attn, "residual": "hidden", "weight": "detach_1", "epsilon": EPS})
    # mlp: gate_up_proj, silu_and_mul into torch.empty, down_proj + all-reduce
    node("t_2", "aten.t.default", ["gate_up_w"], [t("t_2", [H, 2 * inter])])
    node("mm_1", "aten.mm.default", ["getitem_29", "t_2"], [t("mm_1", [T, 2 * inter])])
    node("empty", "aten.empty.memory_format", [[T, inter]], [t("empty", [T, inter])],
         {"dtype": DT})
    node("auto_functionalized_4", "_C.silu_and_mul.default", [], [t("getitem_32", [T, inter])],
         {"out": "empty", "input": "mm_1"})
    node("t_3", "aten.t.default", ["down_w"], [t("t_3", [inter, H])])
    node("mm_2", "aten.mm.default", ["getitem_32", "t_3"], [t("mm_2", [T, H])])
    mlp = "mm_2" if bug == "noreduce" else reduce("all_reduce_2", "mm_2")
    # the model's final norm
    node("detach_2", "aten.detach.default", ["norm_w"], [t("detach_2", [H])])
    node("auto_functionalized_5", "_C.fused_add_rms_norm.default", [],
         [t("getitem_34", [T, H]), None],
         {"input": mlp, "residual": "getitem_30", "weight": "detach_2", "epsilon": EPS})
    return {"inputs": inputs, "nodes": nodes, "outputs": ["getitem_34"]}


def blocks(name, sizes, tp, dim, reversed_parts=()):
    """The spec tensor from each rank's row blocks: every part of SIZES (in
    the spec's order, e.g. q | k | v) is the cat of the ranks' shards of it
    (in reversed rank order for the parts in REVERSED_PARTS)."""
    parts, off = [], 0
    for k, size in enumerate(sizes):
        shard = size // tp
        ranks = range(tp - 1, -1, -1) if k in reversed_parts else range(tp)
        parts.append("cat(%s, dim=%d)" % (", ".join(
            "slice(r%d.%s, dim=%d, start=%d, end=%d)" % (r, name, dim, off, off + shard)
            for r in ranks), dim))
        off += shard
    return "cat(%s, dim=%d)" % (", ".join(parts), dim)


def bundle(tp, bug=None):
    replicated = ["hidden", "ln1_w", "cos_sin_cache", "positions", "ln2_w", "norm_w"]
    rel = {x: ["r%d.%s" % (r, x) for r in range(tp)] for x in replicated}
    swap = (1, 2) if bug == "kvswap" else ()
    rel["qkv_w"] = [blocks("qkv_w", [HQ * HS, HKV * HS, HKV * HS], tp, 0, swap)]
    rel["qkv_b"] = [blocks("qkv_b", [HQ * HS, HKV * HS, HKV * HS], tp, 0, swap)]
    rel["gate_up_w"] = [blocks("gate_up_w", [I, I], tp, 0)]
    rel["o_w"] = ["cat(%s, dim=1)" % ", ".join("r%d.o_w" % r for r in range(tp))]
    rel["down_w"] = ["cat(%s, dim=1)" % ", ".join("r%d.down_w" % r for r in range(tp))]
    what = {None: "",
            "noreduce": " BUG ON PURPOSE: down_proj's all-reduce is missing.",
            "kvswap": " BUG ON PURPOSE: the kv heads are sharded in the reverse rank order "
                      "of the query heads."}[bug]
    return {
        "format": "shardcheck-bundle/1",
        "name": "vllm-layer-tp%d%s" % (tp, "-" + bug if bug else ""),
        "description": ("A vLLM Qwen2/Llama-style decoder layer (RMSNorm, fused qkv with "
                        "GQA %d/%d heads, NeoX rotary, attention, o_proj, fused add+RMSNorm, "
                        "gated MLP, final norm) as vLLM's capture shows it, TP=%d. "
                        "Hand-written by tests/models/gen-vllm-layer.py (not from captured "
                        "data).%s" % (HQ, HKV, tp, what)),
        "spec": layer(1),
        "impl": {"ranks": [layer(tp, bug) for _ in range(tp)],
                 "groups": {"tp:0": list(range(tp))}},
        "input_relation": rel,
        "expect_output_relation": {"getitem_34": ["r%d.getitem_34" % r for r in range(tp)]},
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    for tp, bug in ((2, None), (4, None), (2, "noreduce"), (2, "kvswap")):
        b = bundle(tp, bug)
        with open(os.path.join(sys.argv[1], b["name"] + ".json"), "w") as f:
            json.dump(b, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
