"""The operators of src/ops/ops-extra.def against independent formulas: the
spec calls PyTorch's activations, losses and functions (make_fx emits
log_sigmoid_forward / _backward, elu / elu_backward, hardtanh, leaky_relu,
hardswish, mish, softplus_backward, smooth_l1 / binary cross
entropy and their backward operators, linalg_vector_norm, prod, sign,
floor, round, ...); every rank computes the same values with elementary
operators (exp, log1p, where, abs, ...), forward and backward.  Run by
tests/unit/test-interp-models (every bundle under models/): the
interpreter's evaluators of the new operators must agree with the older
evaluators of the formulas.  shardcheck does not prove it (no lemma
relates an activation to its formula), so it is not in verdicts.json.

Export: /usr/bin/python3 tools/shardcheck-export models/ops-extra/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate

BUNDLES = [(2, True)]
N, H = 4, 6


def spec(x, y, t):
    h = x * y
    acts = (F.logsigmoid(h) + F.elu(h, alpha=0.7) + F.hardtanh(h, -0.5, 0.8)
            + F.leaky_relu(h, 0.05) + F.hardswish(h) + F.mish(h) + F.softplus(h, beta=2.0))
    p = torch.sigmoid(h)
    losses = (F.smooth_l1_loss(h, t, beta=0.5)
              + F.binary_cross_entropy(p, torch.sigmoid(t))
              + F.binary_cross_entropy_with_logits(h, torch.sigmoid(t)))
    misc = (torch.linalg.vector_norm(h, dim=-1).sum() + torch.prod(y, dim=0).sum()
            + (torch.sign(h) * torch.floor(h * 3) + torch.round(h * 2) + torch.trunc(h * 3)).sum()
            + torch.expm1(h).sum() + torch.atan(h).sum() + torch.log2(p).sum())
    u = torch.tanh(h) * 0.9
    fns = (torch.ceil(h * 3) + torch.tan(u) + torch.asin(u) + torch.acos(u) + torch.sinh(h)
           + torch.cosh(h) + torch.asinh(h) + torch.acosh(1 + h * h) + torch.atanh(u)
           + torch.log10(p) + torch.atan2(h, 1 + p) + torch.fmod(h * 5, 1.5)
           + torch.xlogy(p, 1 + h * h) + torch.logical_xor(h > 0, u > 0.3).float()
           + torch.isnan(h).float() + torch.isinf(h / 0.0).float()
           + torch.argsort(h, dim=-1, stable=True).float())
    return {"acts": acts, "loss": losses + misc, "fns": fns}


def manual(x, y, t):
    h = x * y
    sp = lambda v: torch.where(v > 20, v, torch.log1p(torch.exp(torch.clamp(v, max=20))))
    logsig = -sp(-h)
    elu = torch.where(h > 0, h, 0.7 * (torch.exp(h) - 1))
    ht = torch.clamp(h, -0.5, 0.8)
    lr = torch.where(h > 0, h, 0.05 * h)
    hs = h * torch.clamp(h + 3, 0, 6) / 6
    mish = h * torch.tanh(sp(h))
    spb = sp(2.0 * h) / 2.0
    acts = logsig + elu + ht + lr + hs + mish + spb
    d = h - t
    a = d.abs()
    sl1 = torch.where(a < 0.5, 0.5 * d * d / 0.5, a - 0.25).mean()
    hub = 0.0   # huber_loss: torch 1.13 cannot trace its backward with fake tensors
    p, q = torch.sigmoid(h), torch.sigmoid(t)
    bce = -(q * torch.log(p) + (1 - q) * torch.log(1 - p)).mean()
    bcel = ((1 - q) * h + sp(-h)).mean()
    norm = (h * h).sum(-1).sqrt().sum()
    prod = (y[0] * y[1] * y[2] * y[3]).sum()
    rnd = (torch.sign(h) * torch.floor(h * 3) + torch.round(h * 2) + torch.trunc(h * 3)).sum()
    misc = (norm + prod + rnd + (torch.exp(h) - 1).sum() + torch.atan(h).sum()
            + (torch.log(p) / 0.6931471805599453).sum())
    u = torch.tanh(h) * 0.9
    c = torch.floor(h * 3)
    ceil = torch.where(c == h * 3, c, c + 1)
    eh, emh = torch.exp(h), torch.exp(-h)
    y2 = 1 + h * h
    fm = h * 5 - torch.where(h * 5 >= 0, torch.floor(h * 5 / 1.5), -torch.floor(-h * 5 / 1.5)) * 1.5
    fns = (ceil + torch.sin(u) / torch.cos(u) + torch.atan(u / torch.sqrt(1 - u * u))
           + (1.5707963267948966 - torch.atan(u / torch.sqrt(1 - u * u)))
           + (eh - emh) / 2 + (eh + emh) / 2 + torch.log(h + torch.sqrt(h * h + 1))
           + torch.log(y2 + torch.sqrt(y2 * y2 - 1)) + 0.5 * torch.log((1 + u) / (1 - u))
           + torch.log(p) / 2.302585092994046 + torch.atan(h / (1 + p)) + fm
           + p * torch.log(1 + h * h) + ((h > 0) != (u > 0.3)).float()
           + (h != h).float() + (h != 0).float()
           + torch.sort(h, dim=-1, stable=True)[1].float())
    return {"acts": acts, "loss": sl1 + hub + bce + bcel + misc, "fns": fns}


def impl(x, y, t):
    outs = [manual(x[r], y[r], t[r]) for r in range(len(x))]
    return {k: [o[k] for o in outs] for k in ("acts", "loss", "fns")}


def export(degree):
    return Export(
        name=f"ops-extra-{degree}", description="New operators against their formulas "
        "(tests the interpreter; not a parallel model).",
        spec=spec, impl=impl, degree=degree,
        inputs={"x": Param((N, H), Replicate()), "y": Param((N, H), Replicate()),
                "t": Input((N, H), Replicate())},
        outputs={"acts": Replicate(), "loss": Replicate(), "fns": Replicate()})
