"""Ring attention (context parallelism): the sequence of q, k and v split
over the ranks (dim 2 of [B, H, S, HD]); rank r holds the query block r
and meets every key/value block, the blocks' partial attentions merged by
the online softmax (lemmas/online-softmax.lemma).  The key/value blocks
come round by an all_gather of k and v (the all-gather form of context
parallelism); rank r visits them in ring order r, r-1, r-2, ... as the
send/recv ring delivers them.  Written twice, as two authors would:

  style "online":  flash-attention's running statistics: a running max m,
                   a running sum l and an unnormalized accumulator acc;
                   each block rescales them by exp(m_old - m_new),
                   m_new = maximum(m_old, amax(s_j)); the output is acc / l.
  style "lse":     each block's normalized output o_j = softmax(s_j) v_j
                   and its log-sum-exp lse_j; merged once at the end:
                   lse = logsumexp(cat(lse_0 .. lse_{n-1}, -1), -1),
                   o = sum_j exp(lse_j - lse) * o_j.
  "-causal":        the causal mask of the whole sequence (online style):
                   each block's mask built from the global positions of
                   its rows and columns (float aranges offset by the
                   blocks' starts, compared); every block is visited, a
                   block above the diagonal being masked whole (its
                   exp(-inf - m) is 0: the rank's own block, met first,
                   makes m finite).
  "lse-causal":    the causal mask, lse style: the blocks above the
                   diagonal are masked whole (their softmax alone is NaN),
                   so rank r visits the key blocks 0..r only; the spec's
                   masked blocks are -inf constants that contribute
                   nothing (models/ring-attention-lse-causal: its
                   masked-blocks.lemma, not in the library).
  "-bug":          BUG ON PURPOSE (must fail), on the last rank:
                   online-bug:        the rescale is inverted, exp(m_new - m_old);
                   online-nomax-bug:  the running max is not updated (each
                                      block is shifted by its own max, the
                                      accumulator never rescaled);
                   online-causal-bug: the keys' positions start at the
                                      query block's start, not the key
                                      block's (a wrong block offset);
                   lse-bug:           the merge weights are exp(lse - lse_j);
                   lse-causal-bug:    the last rank stops before its own
                                      diagonal block (skips one block too many).

Not in BUNDLES (they do not prove yet; README.md says why):
  "online" at 6 ranks: the running state of a rank (acc, l, m after
                   k < n blocks) carries the partial maximum, which no spec
                   term holds, so the chain (2 operators per block) is
                   explored by the widened exploration, whose depth is
                   2n + 2 (src/infer/trel.c sc_rel_widen_hops: 10 at 4
                   ranks, which proves); at 6 ranks the deferred walk then
                   stops at the e-node limit (README.md).
  "lse-causal" at 3 and 4: with masked-blocks.lemma the laws hold (3
                   refines with 60000 e-nodes) but the grid of masked
                   blocks passes the default 10000-e-node limit.

Export: /usr/bin/python3 tools/shardcheck-export models/ring-attention/model.py
"""

import torch

from shardcheck_export import Export, Input, Replicate, Shard, comm

B, H, S, HD = 1, 2, 12, 4

BUNDLES = [(2, False, "online"), (3, False, "online"), (4, False, "online"),
           (3, False, "online-bug"), (3, False, "online-nomax-bug"),
           (4, False, "online-bug"), (4, False, "online-nomax-bug"),
           (2, False, "online-causal"), (3, False, "online-causal"), (3, False, "online-causal-bug"),
           (2, False, "lse"), (3, False, "lse"), (4, False, "lse"), (3, False, "lse-bug"),
           (4, False, "lse-bug")]
# The causal lse form proves with masked-blocks.lemma, which stays out of
# the library (models/ring-attention-lse-causal/README.md says why):
# models/ring-attention-lse-causal/gen.py exports them there.


def causal_mask(q_start, rows, k_start, cols):
    """True where the key lies after the query (global positions)."""
    qpos = torch.arange(q_start, q_start + rows, dtype=torch.float32)
    kpos = torch.arange(k_start, k_start + cols, dtype=torch.float32)
    return kpos.view(1, cols) > qpos.view(rows, 1)


def scores(q, k, mask):
    s = (q @ k.transpose(-1, -2)) / HD ** 0.5
    if mask is not None:
        s = s.masked_fill(mask, float("-inf"))
    return s


def attention(q, k, v, causal):
    mask = causal_mask(0, S, 0, S) if causal else None
    return {"o": torch.softmax(scores(q, k, mask), dim=-1) @ v}


def ring_order(r, n):
    """The blocks rank r meets, as a ring delivers them: its own first."""
    return [(r - step) % n for step in range(n)]


def online(q, kb, vb, order, mask_of, bug, nomax):
    acc = m = l = None
    for j in order:
        s = scores(q, kb[j], mask_of(j))
        mb = s.amax(dim=-1, keepdim=True)
        if m is None:
            p = torch.exp(s - mb)
            acc, m, l = p @ vb[j], mb, p.sum(dim=-1, keepdim=True)
            continue
        if nomax:
            p = torch.exp(s - mb)
            acc, l = acc + p @ vb[j], l + p.sum(dim=-1, keepdim=True)
            continue
        m_new = torch.maximum(m, mb)
        scale = torch.exp(m_new - m) if bug else torch.exp(m - m_new)
        p = torch.exp(s - m_new)
        acc = acc * scale + p @ vb[j]
        l = l * scale + p.sum(dim=-1, keepdim=True)
        m = m_new
    return acc / l


def lse_merge(q, kb, vb, order, mask_of, bug):
    outs, lses = [], []
    for j in order:
        s = scores(q, kb[j], mask_of(j))
        outs.append(torch.softmax(s, dim=-1) @ vb[j])
        lses.append(torch.logsumexp(s, dim=-1, keepdim=True))
    lse = torch.logsumexp(torch.cat(lses, dim=-1), dim=-1, keepdim=True)
    o = None
    for o_j, lse_j in zip(outs, lses):
        w = torch.exp(lse - lse_j) if bug else torch.exp(lse_j - lse)
        o = o_j * w if o is None else o + o_j * w
    return o


def ring_attention(q, k, v, style):
    n = len(q)
    sb = S // n
    causal = "causal" in style
    ks, vs = comm.all_gather(k, dim=2), comm.all_gather(v, dim=2)
    out = []
    for r in range(n):
        bug = style.endswith("-bug") and r == n - 1
        if style.startswith("online"):
            kb = [ks[r].narrow(2, j * sb, sb) for j in range(n)]
            vb = [vs[r].narrow(2, j * sb, sb) for j in range(n)]
        else:
            kb, vb = ks[r].chunk(n, dim=2), vs[r].chunk(n, dim=2)
        if causal:
            # the keys' global positions start at the key block's start
            # (the bug: at the query block's)
            offset = (lambda j: r * sb) if bug and style.startswith("online") else (lambda j: j * sb)
            mask_of = (lambda j, offset=offset: causal_mask(r * sb, sb, offset(j), sb))
        else:
            mask_of = (lambda j: None)
        if style.startswith("online"):
            # causal: a block above the diagonal is masked whole; its
            # exp(-inf - m) is 0 (the own block, met first, makes m finite)
            rescale_bug = bug and not causal and "nomax" not in style
            out.append(online(q[r], kb, vb, ring_order(r, n), mask_of, rescale_bug,
                              bug and "nomax" in style))
        elif causal:
            # the blocks above the diagonal are masked whole (their
            # softmax would be NaN): skipped, only blocks 0..r visited
            # (the bug: the last rank stops before its own diagonal block)
            out.append(lse_merge(q[r], kb, vb, range(r if bug else r + 1), mask_of, False))
        else:
            out.append(lse_merge(q[r], kb, vb, range(n), mask_of, bug))
    return {"o": out}


def export(degree, variant):
    bug = variant.endswith("-bug")
    causal = "causal" in variant
    name = f"ring-attention-{variant}-{degree}"
    what = {"online-bug": "the last rank's rescale is inverted, exp(m_new - m_old)",
            "online-nomax-bug": "the last rank never updates its running max",
            "lse-bug": "the last rank's merge weights are exp(lse - lse_j)",
            "online-causal-bug": "the last rank's mask offsets the keys by the query block's start",
            "lse-causal-bug": "the last rank skips its own diagonal block, not only the blocks above it"}
    desc = f" BUG ON PURPOSE: {what[variant]}." if bug else ""
    return Export(
        name=name, bundle_name=name, filename=name + ".json", degree=degree, expect_mismatch=bug,
        description=f"Ring attention ({'causal, ' if causal else ''}sequence split over {degree} ranks, "
                    f"k and v all-gathered), merged by the {variant.split('-')[0]} form of the online "
                    "softmax." + desc,
        spec=lambda q, k, v: attention(q, k, v, causal),
        impl=lambda q, k, v: ring_attention(q, k, v, variant),
        inputs={"q": Input((B, H, S, HD), Shard(2)),
                "k": Input((B, H, S, HD), Shard(2)),
                "v": Input((B, H, S, HD), Shard(2))},
        outputs={"o": Shard(2)})
