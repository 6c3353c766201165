/* sum-cancel.c — cancellation: two sums of one class whose parts are the
 * same multiset but for one part each have those parts equal
 * (a + b = a + b' gives b = b', the parts of equal shapes).  Lemmas rewrite
 * one term at a time and cannot state it (it reads two e-nodes of one
 * class).  On a 2-D mesh a tensor partial over one mesh dim and replicated
 * over the other is named by sums that pick one copy of each partial,
 * sum(r0:p, r2:q) = sum(r0:p, r3:q') = sum(r1:p', r2:q) (shardsmith
 * 29022, 27005): cancellation makes the copies of each partial one class,
 * as cat-parts.c does for the copies of a block, so that every rank's
 * product reads the same partial.  Run with cat-parts.c on the class a
 * visit seeds from a spec tensor's relation (its worklist: the classes
 * merged are examined again), never after saturation.  Sound in the
 * exact arithmetic the e-graph reasons in. */
#include "infer/infer-private.h"

#include <string.h>

/* At most this many sums of one class are compared pairwise (a relation
 * has at most a few dozen forms). */
#define SUM_CANCEL_MAX 64

/* Do classes A and B have the same dtype and shape? */
static gboolean same_type(sc_rel_ctx *c, sc_id a, sc_id b) {
  const sc_ttype *ta = sc_lang_class_type(c->lang, a), *tb = sc_lang_class_type(c->lang, b);
  if (!ta || !tb || ta->dtype != tb->dtype || ta->shape.rank != tb->shape.rank)
    return FALSE;
  for (uint32_t d = 0; d < ta->shape.rank; d++)
    if (sc_dim_eq(c->st, ta->shape.dims[d], tb->shape.dims[d]) != SC_YES)
      return FALSE;
  return TRUE;
}

/* The one part of sum X and the one part of sum Y (same arity) left when
 * their common parts are cancelled, or FALSE when more or none are left. */
static gboolean one_apart(sc_egraph *eg, sc_id x, sc_id y, sc_id *px, sc_id *py) {
  uint32_t ar = sc_egraph_node_arity(eg, x);
  const sc_id *kx = sc_egraph_node_children(eg, x), *ky = sc_egraph_node_children(eg, y);
  gboolean used[SUM_CANCEL_MAX];
  if (ar > SUM_CANCEL_MAX)
    return FALSE;
  memset(used, 0, sizeof(gboolean) * ar);
  uint32_t left = 0;
  for (uint32_t i = 0; i < ar; i++) {
    sc_id r = sc_egraph_find(eg, kx[i]);
    uint32_t j = 0;
    while (j < ar && (used[j] || sc_egraph_find(eg, ky[j]) != r))
      j++;
    if (j < ar) {
      used[j] = TRUE;
      continue;
    }
    if (++left > 1)
      return FALSE;
    *px = kx[i];
  }
  if (left != 1)
    return FALSE;
  for (uint32_t j = 0; j < ar; j++)
    if (!used[j])
      *py = ky[j];
  return TRUE;
}

void sc_rel_sum_cancel_pairs(sc_rel_ctx *c, sc_id cls, GArray *pairs) {
  const sc_op *sum = sc_ops_lookup("sc.sum.default", NULL);
  if (!sum)
    return;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  uint32_t n = 0;
  const sc_id *ss = sc_egraph_class_nodes_with_op(eg, cls, sum->id, &n);
  n = MIN(n, SUM_CANCEL_MAX);
  for (uint32_t j = 1; j < n; j++)
    for (uint32_t i = 0; i < j; i++) {
      sc_id px, py;
      if (sc_egraph_node_attr(eg, ss[i]) != sc_egraph_node_attr(eg, ss[j]) ||
          sc_egraph_node_arity(eg, ss[i]) != sc_egraph_node_arity(eg, ss[j]) ||
          !one_apart(eg, ss[i], ss[j], &px, &py) || !same_type(c, px, py))
        continue;
      g_array_append_val(pairs, px);
      g_array_append_val(pairs, py);
    }
}
