#!/usr/bin/env python3
"""gen-llama.py -- write a transformers-neuronx-style Llama HLO pair (the
spec on one device, the tensor-parallel SPMD module of N ranks) and its
relation sheet, with any depth and degree.

    gen-llama.py OUTDIR --layers L --ranks N [--bug drop-allreduce|shift-k]

The modules follow the real one-layer TP 2 capture of shared/real-graphs
(aws_llama/, GraphGuard's Llama-3 on AWS Neuron) instruction by
instruction -- [hidden, seq, batch] activations, AwsNeuronRmsNorm and
AwsNeuronTransferWithStaticRing custom calls, one fused QKV weight whose
columns are [q_r | k_r | v_r] per rank, rotary halves, grouped-query
repeat by broadcast + reshape, the causal and padding mask as a select,
softmax by reduce max / reduce add, all-reduces after the attention and
MLP output projections, the last token's logits gathered and projected on
a vocabulary shard -- at small sizes, so that the same lemma files can be
run on deeper and wider captures of the same program than the one that
shared/real-graphs holds (tests/hlo/meson.build, `scale-*`).

Sizes: hidden 64, 8 query heads and 4 kv heads of 8, MLP 128, vocab 96,
8 tokens x batch 2 (N must divide 4).  Standard library only.
"""

import argparse
import json
import os
import sys

H, NH, NKV, HD, F, V, S, B = 64, 8, 4, 8, 128, 96, 8, 2


class Module:
    def __init__(self, name):
        self.name = name
        self.lines = []
        self.params = []
        self.n = 100
        self.reducers = []

    def fresh(self, base):
        self.n += 1
        return f"{base}.{self.n}"

    def ins(self, base, typ, text, root=False):
        name = self.fresh(base)
        self.lines.append(f"  {'ROOT ' if root else ''}%{name} = {typ} {text}")
        return name

    def param(self, typ):
        k = len(self.params)
        name = f"p{k}.{k + 1}"
        self.params.append((name, typ))
        self.lines.append(f"  %{name} = {typ} parameter({k})")
        return name

    def reducer(self, op):
        name = self.fresh(f"{op}.Reducer")
        self.reducers.append(
            f"%{name} (a.1: f16[], b.2: f16[]) -> f16[] {{\n  %a.1 = f16[] parameter(0)\n"
            f"  %b.2 = f16[] parameter(1)\n  ROOT %r.3 = f16[] {op}(%a.1, %b.2)\n}}\n")
        return name

    def text(self):
        sig = ", ".join(f"{n}: {t}" for n, t in self.params)
        return (f"HloModule {self.name}\n\n" + "\n".join(self.reducers) +
                f"\nENTRY %{self.name} ({sig}) -> () {{\n" + "\n".join(self.lines) + "\n}\n")


def t(dt, *dims):
    return f"{dt}[{','.join(str(d) for d in dims)}]"


def build(layers, n, bug=None):
    m = Module(f"Llama.{layers}x{n}")
    nh, nkv, f, v = NH // n, NKV // n, F // n, V // n
    qw, kw = nh * HD, nkv * HD
    transfer = 'custom_call_target="AwsNeuronTransferWithStaticRing"'

    def staged(typ):
        p = m.param(typ)
        return m.ins("custom-call", typ, f"custom-call(%{p}), {transfer}")

    def rms(x, dims):
        w = staged(t("f32", H))
        x32 = m.ins("convert", t("f32", *dims), f"convert(%{x})")
        eps = m.ins("constant", "f32[]", "constant(1e-05)")
        return m.ins("custom-call", t("f16", *dims),
                     f"custom-call(%{x32}, %{w}, %{eps}), "
                     f'custom_call_target="AwsNeuronRmsNorm", backend_config="0"')

    def allreduce(x, dims):
        if n == 1:
            return x
        red = m.reducer("add")
        groups = "{{" + ",".join(str(r) for r in range(n)) + "}}"
        return m.ins("all-reduce", t("f16", *dims),
                     f"all-reduce(%{x}), replica_groups={groups}, to_apply=%{red}")

    h = m.param(t("f16", H, S, B))
    cache_ids = m.param(t("s32", S))
    start_ids = m.param(t("s32", B))
    last = m.param(t("s32", 1))
    m.param(t("s32", 1))
    m.param(t("s32", 1))
    # masks: causal (position <= cache_id) and padding (position >= start_id)
    iota = m.ins("iota", t("s32", S), "iota(), iota_dimension=0")
    a = m.ins("broadcast", t("s32", S, S), f"broadcast(%{iota}), dimensions={{1}}")
    c = m.ins("broadcast", t("s32", S, S), f"broadcast(%{cache_ids}), dimensions={{0}}")
    causal = m.ins("compare", t("pred", S, S), f"compare(%{a}, %{c}), direction=LE")
    causal3 = m.ins("broadcast", t("pred", B, S, S), f"broadcast(%{causal}), dimensions={{1,2}}")
    a2 = m.ins("broadcast", t("s32", B, S), f"broadcast(%{iota}), dimensions={{1}}")
    s2 = m.ins("broadcast", t("s32", B, S), f"broadcast(%{start_ids}), dimensions={{0}}")
    pad = m.ins("compare", t("pred", B, S), f"compare(%{a2}, %{s2}), direction=GE")
    pad3 = m.ins("broadcast", t("pred", B, S, S), f"broadcast(%{pad}), dimensions={{0,2}}")
    mask = m.ins("and", t("pred", B, S, S), f"and(%{causal3}, %{pad3})")
    # rotary tables
    pos = m.ins("convert", t("f32", S), f"convert(%{cache_ids})")
    pos2 = m.ins("reshape", t("f32", S, 1), f"reshape(%{pos})")
    inv = m.ins("constant", t("f32", HD // 2), "constant({...})")
    inv2 = m.ins("reshape", t("f32", 1, HD // 2), f"reshape(%{inv})")
    ang = m.ins("dot", t("f32", S, HD // 2),
                f"dot(%{pos2}, %{inv2}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}")
    cos = m.ins("convert", t("f16", S, HD // 2),
                f"convert(%{m.ins('cosine', t('f32', S, HD // 2), f'cosine(%{ang})')})")
    sin = m.ins("convert", t("f16", S, HD // 2),
                f"convert(%{m.ins('sine', t('f32', S, HD // 2), f'sine(%{ang})')})")
    outs_k, outs_v = [], []

    def rope(x, heads):
        half = t("f16", S, B, heads, HD // 2)
        cb = m.ins("broadcast", half, f"broadcast(%{cos}), dimensions={{0,3}}")
        sb = m.ins("broadcast", half, f"broadcast(%{sin}), dimensions={{0,3}}")
        x1 = m.ins("slice", half, f"slice(%{x}), slice={{[0:{S}], [0:{B}], [0:{heads}], [0:{HD // 2}]}}")
        x2 = m.ins("slice", half,
                   f"slice(%{x}), slice={{[0:{S}], [0:{B}], [0:{heads}], [{HD // 2}:{HD}]}}")
        r1 = m.ins("subtract", half, f"subtract(%{m.ins('multiply', half, f'multiply(%{cb}, %{x1})')}, "
                   f"%{m.ins('multiply', half, f'multiply(%{sb}, %{x2})')})")
        r2 = m.ins("add", half, f"add(%{m.ins('multiply', half, f'multiply(%{cb}, %{x2})')}, "
                   f"%{m.ins('multiply', half, f'multiply(%{sb}, %{x1})')})")
        return m.ins("concatenate", t("f16", S, B, heads, HD),
                     f"concatenate(%{r1}, %{r2}), dimensions={{3}}")

    def repeat(x):
        x = m.ins("reshape", t("f16", S, B, nkv, HD), f"reshape(%{x})")
        x = m.ins("broadcast", t("f16", S, B, nkv, NH // NKV, HD),
                  f"broadcast(%{x}), dimensions={{0,1,2,4}}")
        return m.ins("reshape", t("f16", S, B, nh, HD), f"reshape(%{x})")

    for layer in range(layers):
        staged(t("f16", S, B, nkv, HD))
        staged(t("f16", S, B, nkv, HD))
        x = rms(h, [H, S, B])
        x2 = m.ins("reshape", t("f16", H, S * B), f"reshape(%{x})")
        wqkv = staged(t("f16", H, qw + 2 * kw))
        qkv = m.ins("dot", t("f16", S * B, qw + 2 * kw),
                    f"dot(%{x2}, %{wqkv}), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}")
        q = m.ins("slice", t("f16", S * B, qw), f"slice(%{qkv}), slice={{[0:{S * B}], [0:{qw}]}}")
        q = rope(m.ins("reshape", t("f16", S, B, nh, HD), f"reshape(%{q})"), nh)
        scale = m.ins("constant", "f16[]", f"constant({int(HD ** 0.5) if HD in (4, 16, 64) else 2.828125})")
        qs = m.ins("divide", t("f16", S, B, nh, HD),
                   f"divide(%{q}, %{m.ins('broadcast', t('f16', S, B, nh, HD), f'broadcast(%{scale}), dimensions={{}}')})")
        if bug == "shift-k" and layer == layers - 1:
            pid = m.ins("partition-id", "u32[]", "partition-id()")
            off = m.ins("multiply", "s32[]", f"multiply(%{m.ins('convert', 's32[]', f'convert(%{pid})')}, "
                        f"%{m.ins('constant', 's32[]', 'constant(2)')})")
            col = m.ins("add", "s32[]", f"add(%{off}, %{m.ins('constant', 's32[]', f'constant({qw})')})")
            zero = m.ins("constant", "s32[]", "constant(0)")
            k = m.ins("dynamic-slice", t("f16", S * B, kw),
                      f"dynamic-slice(%{qkv}, %{zero}, %{col}), dynamic_slice_sizes={{{S * B},{kw}}}")
        else:
            k = m.ins("slice", t("f16", S * B, kw),
                      f"slice(%{qkv}), slice={{[0:{S * B}], [{qw}:{qw + kw}]}}")
        k = rope(m.ins("reshape", t("f16", S, B, nkv, HD), f"reshape(%{k})"), nkv)
        outs_k.append(k)
        scores = m.ins("dot", t("f16", B, nh, S, S),
                       f"dot(%{qs}, %{repeat(k)}), lhs_batch_dims={{1,2}}, lhs_contracting_dims={{3}}, "
                       f"rhs_batch_dims={{1,2}}, rhs_contracting_dims={{3}}")
        mb = m.ins("broadcast", t("pred", B, nh, S, S), f"broadcast(%{mask}), dimensions={{0,2,3}}")
        neg = m.ins("broadcast", t("f16", B, nh, S, S),
                    f"broadcast(%{m.ins('constant', 'f16[]', 'constant(-30000)')}), dimensions={{}}")
        sel = m.ins("select", t("f16", B, nh, S, S), f"select(%{mb}, %{scores}, %{neg})")
        mx = m.ins("reduce", t("f16", B, nh, S),
                   f"reduce(%{sel}, %{m.ins('constant', 'f16[]', 'constant(-inf)')}), dimensions={{3}}, "
                   f"to_apply=%{m.reducer('maximum')}")
        mx = m.ins("broadcast", t("f16", B, nh, S, S), f"broadcast(%{mx}), dimensions={{0,1,2}}")
        e = m.ins("exponential", t("f16", B, nh, S, S),
                  f"exponential(%{m.ins('subtract', t('f16', B, nh, S, S), f'subtract(%{sel}, %{mx})')})")
        sm = m.ins("reduce", t("f16", B, nh, S),
                   f"reduce(%{e}, %{m.ins('constant', 'f16[]', 'constant(0)')}), dimensions={{3}}, "
                   f"to_apply=%{m.reducer('add')}")
        sm = m.ins("broadcast", t("f16", B, nh, S, S), f"broadcast(%{sm}), dimensions={{0,1,2}}")
        probs = m.ins("divide", t("f16", B, nh, S, S), f"divide(%{e}, %{sm})")
        vv = m.ins("slice", t("f16", S * B, kw),
                   f"slice(%{qkv}), slice={{[0:{S * B}], [{qw + kw}:{qw + 2 * kw}]}}")
        vv = m.ins("reshape", t("f16", S, B, nkv, HD), f"reshape(%{vv})")
        outs_v.append(vv)
        ctx = m.ins("dot", t("f16", B, nh, S, HD),
                    f"dot(%{probs}, %{repeat(vv)}), lhs_batch_dims={{0,1}}, lhs_contracting_dims={{3}}, "
                    f"rhs_batch_dims={{1,2}}, rhs_contracting_dims={{0}}")
        ctx = m.ins("transpose", t("f16", S, B, nh, HD), f"transpose(%{ctx}), dimensions={{2,0,1,3}}")
        ctx = m.ins("reshape", t("f16", S * B, qw), f"reshape(%{ctx})")
        wo = staged(t("f16", H, qw))
        o = m.ins("dot", t("f16", S * B, H),
                  f"dot(%{ctx}, %{wo}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}")
        o = m.ins("transpose", t("f16", H, S * B), f"transpose(%{o}), dimensions={{1,0}}")
        o = m.ins("reshape", t("f16", H, S, B), f"reshape(%{o})")
        if not (bug == "drop-allreduce" and layer == layers - 1):
            o = allreduce(o, [H, S, B])
        h = m.ins("add", t("f16", H, S, B), f"add(%{o}, %{h})")
        x = rms(h, [H, S, B])
        x2 = m.ins("reshape", t("f16", H, S * B), f"reshape(%{x})")
        wg, wu, wd = staged(t("f16", H, f)), staged(t("f16", H, f)), staged(t("f16", H, f))
        g = m.ins("dot", t("f16", S * B, f),
                  f"dot(%{x2}, %{wg}), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}")
        g = m.ins("multiply", t("f16", S * B, f),
                  f"multiply(%{g}, %{m.ins('logistic', t('f16', S * B, f), f'logistic(%{g})')})")
        u = m.ins("dot", t("f16", S * B, f),
                  f"dot(%{x2}, %{wu}), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}")
        a = m.ins("multiply", t("f16", S * B, f), f"multiply(%{g}, %{u})")
        d = m.ins("dot", t("f16", S * B, H),
                  f"dot(%{a}, %{wd}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}")
        d = m.ins("transpose", t("f16", H, S * B), f"transpose(%{d}), dimensions={{1,0}}")
        d = allreduce(m.ins("reshape", t("f16", H, S, B), f"reshape(%{d})"), [H, S, B])
        h = m.ins("add", t("f16", H, S, B), f"add(%{d}, %{h})")
    ht = m.ins("transpose", t("f16", S, H, B), f"transpose(%{h}), dimensions={{1,0,2}}")
    g = m.ins("gather", t("f16", 1, H, B),
              f"gather(%{ht}, %{last}), offset_dims={{1,2}}, collapsed_slice_dims={{0}}, "
              f"start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,{H},{B}}}")
    g = m.ins("transpose", t("f16", H, 1, B), f"transpose(%{g}), dimensions={{1,0,2}}")
    x = rms(g, [H, 1, B])
    x = m.ins("reshape", t("f16", H, B), f"reshape(%{x})")
    head = staged(t("f16", H, v))
    lg = m.ins("dot", t("f16", v, B),
               f"dot(%{head}, %{x}), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}")
    logits = m.ins("reshape", t("f16", v, 1, B), f"reshape(%{lg})")
    outs = [logits] + [x for kv in zip(outs_k, outs_v) for x in kv]
    types = ", ".join([t("f16", v, 1, B)] + [t("f16", S, B, nkv, HD)] * (2 * layers))
    m.ins("tuple", f"({types})", f"tuple({', '.join('%' + o for o in outs)})", root=True)
    return m, logits


def sheet(layers, n, spec_mod, impl_mod, logits_spec, logits_impl):
    rel = {}
    ranks = range(n)
    qw, kw = NH * HD // n, NKV * HD // n
    for name, typ in spec_mod.params:
        idx = int(name.split(".")[0][1:])
        if idx < 6 or typ.startswith("f32"):
            rel[name] = [f"r{r}.{name}" for r in ranks]
            continue
        k = (idx - 6) % 9 if idx - 6 < 9 * layers else None
        cat = lambda d: "cat(" + ", ".join(f"r{r}.{name}" for r in ranks) + f", dim={d})"
        if k is None:                                   # lm_head
            rel[name] = [cat(1) if n > 1 else f"r0.{name}"]
        elif k in (0, 1):                               # K, V caches: kv heads
            rel[name] = [cat(2) if n > 1 else f"r0.{name}"]
        elif k == 3:                                    # fused QKV: [q_r | k_r | v_r]
            parts = []
            for lo, hi in ((0, qw), (qw, qw + kw), (qw + kw, qw + 2 * kw)):
                parts.append("cat(" + ", ".join(f"slice(r{r}.{name}, dim=1, start={lo}, end={hi})"
                                                for r in ranks) + ", dim=1)")
            rel[name] = ["cat(" + ", ".join(parts) + ", dim=1)"]
        else:                                           # o, gate, up, down: dim 1
            rel[name] = [cat(1) if n > 1 else f"r0.{name}"]
    expect = "cat(" + ", ".join(f"r{r}.{logits_impl}" for r in ranks) + ", dim=0)" \
        if n > 1 else f"r0.{logits_impl}"
    return {"case": f"gen-llama-{layers}x{n}", "format": "hlo", "ranks": n,
            "model": f"generated transformers-neuronx-style Llama, {layers} layer(s), TP {n}",
            "spec": ["spec.hlo"], "impl": ["impl.hlo"], "input_relation": rel,
            "expect_output_relation": {logits_spec: [expect]}, "check_outputs": [logits_spec]}


def main(argv):
    ap = argparse.ArgumentParser(prog="gen-llama.py")
    ap.add_argument("outdir")
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--bug", choices=["drop-allreduce", "shift-k"])
    a = ap.parse_args(argv)
    if a.ranks < 1 or NKV % a.ranks or a.layers < 1:
        ap.error(f"--ranks must divide {NKV}, --layers at least 1")
    spec, ls = build(a.layers, 1)
    impl, li = build(a.layers, a.ranks, a.bug)
    os.makedirs(a.outdir, exist_ok=True)
    for name, mod in (("spec.hlo", spec), ("impl.hlo", impl)):
        with open(os.path.join(a.outdir, name), "w") as f:
            f.write(mod.text())
    with open(os.path.join(a.outdir, "sheet.json"), "w") as f:
        json.dump(sheet(a.layers, a.ranks, spec, impl, ls, li), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
