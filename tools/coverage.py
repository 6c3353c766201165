#!/usr/bin/python3
"""coverage.py — measures the operator registry (`shardcheck ops`) against

  1. the ATen operators that torch 1.13's make_fx emits, forward and
     backward, for a corpus of common transformer, MoE, loss and optimizer
     code written here (CORPUS below: each entry is a small function in the
     style such code is usually written);
  2. PyTorch's Core ATen operator set (tools/core-aten-ops.txt, one
     overload a line; see docs/coverage.md for where the list comes from).

Usage (torch is needed for part 1 only; Debian's /usr/bin/python3 has it):
  /usr/bin/python3 tools/coverage.py build/src/cli/shardcheck [--core-only]

Prints, per part, the number of operators covered and the missing ones;
exits 1 when an operator of the corpus is missing from the registry (the
corpus is the list of operators the registry promises to cover).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def registry(binary):
    out = subprocess.run([binary, "ops"], check=True, capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def core_list():
    ops = []
    with open(os.path.join(HERE, "core-aten-ops.txt")) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                ops.append(line if "." in line[len("aten."):] else line + ".default")
    return ops


# --- the corpus ----------------------------------------------------------------

def corpus():
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(0)

    def r(*s, grad=True):
        return torch.randn(*s, generator=g).requires_grad_(grad)

    def fwd_bwd(fn, *args):
        def run(*a):
            out = fn(*a)
            outs = out if isinstance(out, tuple) else (out,)
            leaves = [x for x in a if isinstance(x, torch.Tensor) and x.requires_grad]
            loss = sum(o.float().sum() for o in outs if o.is_floating_point())
            grads = torch.autograd.grad(loss, leaves, allow_unused=True)
            return outs + tuple(x for x in grads if x is not None)
        return run, args

    B, S, H, NH, KV, F_ = 2, 4, 8, 4, 2, 16
    hd = H // NH

    def rmsnorm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def rope(x, cos, sin):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def gqa_block(x, wq, wk, wv, wo, w, cos, sin):
        h = rmsnorm(x, w)
        q = (h @ wq).view(B, S, NH, hd).transpose(1, 2)
        k = (h @ wk).view(B, S, KV, hd).transpose(1, 2)
        v = (h @ wv).view(B, S, KV, hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        k = k[:, :, None].expand(B, KV, NH // KV, S, hd).reshape(B, NH, S, hd)
        v = torch.repeat_interleave(v, NH // KV, dim=1)
        s = q @ k.transpose(-1, -2) / hd ** 0.5
        mask = torch.tril(torch.ones(S, S, dtype=torch.bool))
        s = s.masked_fill(~mask, float("-inf"))
        o = torch.softmax(s, dim=-1) @ v
        return x + o.transpose(1, 2).reshape(B, S, H) @ wo

    def gpt_block(x, w1, b1, w2, b2, lw, lb):
        h = F.layer_norm(x, (H,), lw, lb)
        h = F.gelu(F.linear(h, w1, b1), approximate="tanh")
        h = F.dropout(h, 0.0, training=True)
        return x + F.linear(h, w2, b2)

    def mlps(x, w1, w2, w3):
        a = F.silu(x @ w1) * (x @ w3)
        b = F.gelu(x @ w1) + F.relu(x @ w3) + torch.tanh(x @ w1) + torch.sigmoid(x @ w3)
        c = F.logsigmoid(x @ w1) + F.softplus(x @ w3) + F.elu(x @ w1) + F.leaky_relu(x @ w3)
        d = F.hardtanh(x @ w1) + F.mish(x @ w3) + F.hardswish(x @ w1) + F.relu6(x @ w3)
        return (a + b + c + d) @ w2

    def sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True) \
            if hasattr(F, "scaled_dot_product_attention") else torch.softmax(q @ k.transpose(-1, -2), -1) @ v

    def moe(x, wg, w1, w2):
        logits = x @ wg
        probs = torch.softmax(logits, dim=-1)
        topv, topi = torch.topk(probs, 2, dim=-1)
        topv = topv / topv.sum(-1, keepdim=True)
        mask = (topi[..., None] == torch.arange(wg.shape[1])).long().sum(1)
        counts = torch.cumsum(mask, dim=0) * mask
        order = torch.argsort(topi.view(-1), stable=True)
        sv, si = torch.sort(topi.view(-1))
        aux = (probs.mean(0) * mask.float().mean(0)).sum() + torch.logsumexp(logits, -1).pow(2).mean()
        out = torch.zeros_like(x)
        for e in range(wg.shape[1]):
            sel = (topi == e).any(-1)
            w = (topv * (topi == e)).sum(-1, keepdim=True)
            out = out + torch.where(sel[:, None], F.silu(x @ w1[e]) @ w2[e] * w, torch.zeros_like(x))
        z = torch.zeros(x.shape[0], wg.shape[1]).scatter(1, topi, topv)
        zs = torch.zeros(x.shape[0], wg.shape[1]).scatter_add(1, topi, topv)
        gathered = torch.gather(probs, 1, topi)
        picked = torch.index_select(x, 0, order[: x.shape[0]] % x.shape[0])
        return out, aux, z.sum() + zs.sum() + gathered.sum() + picked.sum() \
            + sv.float().sum() + si.float().sum() + counts.float().sum()

    def losses(x, t, y, lbl):
        return (F.cross_entropy(x, lbl) + F.cross_entropy(x, lbl, label_smoothing=0.1)
                + F.mse_loss(x, y) + F.l1_loss(x, y) + F.smooth_l1_loss(x, y) + F.huber_loss(x, y)
                + F.binary_cross_entropy_with_logits(x, t) + F.binary_cross_entropy(torch.sigmoid(x), t)
                + F.kl_div(F.log_softmax(x, -1), F.softmax(y, -1), reduction="batchmean")
                + F.nll_loss(F.log_softmax(x, -1), lbl) + F.cosine_similarity(x, y).mean())

    def adamw(p, g_, m, v):
        opt = torch.optim.AdamW([p], lr=1e-3, foreach=False)
        p.grad = g_
        opt.state[p] = {"step": torch.tensor(3.0), "exp_avg": m, "exp_avg_sq": v}
        opt.step()
        return p

    def sgd_clip(p, g_, buf):
        opt = torch.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, foreach=False)
        p.grad = g_ * torch.clamp(1.0 / (torch.linalg.vector_norm(g_) + 1e-6), max=1.0)
        opt.state[p] = {"momentum_buffer": buf}
        opt.step()
        return p

    def embed(ids, w, pos):
        h = F.embedding(ids, w) + F.embedding(torch.arange(ids.shape[1]).expand_as(ids), pos)
        return h @ w.t()

    x = r(B, S, H)
    xs = r(B * S, H)
    ids = torch.randint(0, 16, (B, S), generator=g)
    lbl = torch.randint(0, H, (B * S,), generator=g)
    cos, sin = r(S, hd, grad=False), r(S, hd, grad=False)
    return {
        "gqa-llama-block": fwd_bwd(gqa_block, x, r(H, H), r(H, KV * hd), r(H, KV * hd), r(H, H), r(H),
                                   cos, sin),
        "gpt-block": fwd_bwd(gpt_block, x, r(F_, H), r(F_), r(H, F_), r(H), r(H), r(H)),
        "activations": fwd_bwd(mlps, xs, r(H, F_), r(F_, H), r(H, F_)),
        "sdpa": fwd_bwd(sdpa, r(B, NH, S, hd), r(B, NH, S, hd), r(B, NH, S, hd)),
        "moe-top2": fwd_bwd(moe, xs, r(H, 4), r(4, H, F_), r(4, F_, H)),
        "losses": fwd_bwd(losses, xs, torch.rand(B * S, H, generator=g), r(B * S, H), lbl),
        "embedding": fwd_bwd(embed, ids, r(16, H), r(S, H)),
        "adamw": (adamw, (r(H, H, grad=False), r(H, H, grad=False), r(H, H, grad=False),
                          torch.rand(H, H, generator=g))),
        "sgd-clip": (sgd_clip, (r(H, H, grad=False), r(H, H, grad=False), r(H, H, grad=False))),
    }


def functional(name):
    """The exporter writes an in-place overload as its out-of-place one
    (docs/exporter.md): add_.Tensor is recorded as add.Tensor."""
    ns, op, ov = name.split(".", 2)
    return f"{ns}.{op[:-1]}.{ov}" if op.endswith("_") and not op.endswith("__") else name


def traced_ops():
    sys.path.insert(0, os.path.join(HERE, "export"))
    from torch.fx.experimental.proxy_tensor import make_fx
    from shardcheck_export.capture import op_name
    import torch
    seen = {}
    for name, (fn, args) in corpus().items():
        gm = make_fx(fn)(*args)
        for n in gm.graph.nodes:
            if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
                seen.setdefault(functional(op_name(n)), set()).add(name)
    return seen


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    reg = registry(argv[1])
    core = core_list()
    have = [op for op in core if op in reg]
    print(f"core ATen operators: {len(have)} of {len(core)} in the registry")
    print("  missing: " + " ".join(sorted(set(core) - reg)))
    if "--core-only" in argv:
        return 0
    seen = traced_ops()
    missing = sorted(op for op in seen if op not in reg)
    print(f"make_fx corpus (torch 1.13): {len(seen) - len(missing)} of {len(seen)} operators "
          f"in the registry")
    for op in missing:
        print(f"  missing: {op}  ({', '.join(sorted(seen[op]))})")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
