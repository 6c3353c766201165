/* expand-copies.c — a candidate relation for a spec expand of one size-1
 * dim that exploration left unmapped: the cat of n copies of its input
 * along that dim (n <= 8).
 *
 * expand(x, s) with size(x, d) == 1 and s[d] == n equals cat(x, ..., x,
 * dim=d) (n copies) for any x: an identity, so the union is sound like
 * every other fact of a visit.  The lemma library states it only where a
 * cat already splits that dim (layout-repeat.lemma's expand_unit_peel,
 * constrained so that XLA graphs do not pay for it at every expand), so a
 * GQA expand of a key/value head over the query heads of one rank
 * ([B, 1, 1, S, D] -> [B, 1, 2, S, D]) had no clean form: the walk
 * deferred it, and a bug after it was reported at the expand, one node
 * before the values diverge (shardsmith 14013; 21011 still, whose input
 * has no one-rank form).  Here the
 * identity is asserted for the visited spec node only, only when its
 * output is still unmapped (a visit that maps costs nothing more), and
 * only when its input has a form over one rank's tensors (a copy held by
 * a rank, not a partial sum: has_one_rank_form). */
#include "infer/infer-private.h"

#include <string.h>

/* The largest number of copies (as expand_unit_peel). */
#define EXPAND_MAX_COPIES 8

/* Does some expression of spec tensor U's relation read one rank's
 * tensors only?  (A partial sum's expressions read every rank of its
 * group: its expand is left to the deferral, which carries the sum's
 * structure to the reduction that completes it; the cat of copies of the
 * sum is clean but not what the consumers read, shardsmith 13035.) */
static gboolean has_one_rank_form(sc_rel_ctx *c, sc_id u) {
  const GPtrArray *rel = c->rel[u];
  GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  gboolean found = FALSE;
  for (guint i = 0; rel != NULL && i < rel->len && !found; i++) {
    g_array_set_size(leaves, 0);
    sc_texpr_collect_leaves(g_ptr_array_index(rel, i), leaves);
    found = leaves->len > 0;
    int32_t r0 = found ? sc_graph_tensor(c->impl, g_array_index(leaves, sc_id, 0))->rank : -1;
    for (guint j = 1; j < leaves->len && found; j++)
      found = sc_graph_tensor(c->impl, g_array_index(leaves, sc_id, j))->rank == r0;
  }
  g_array_free(leaves, TRUE);
  return found;
}

gboolean sc_rel_expand_copies(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls) {
  if (strcmp(n->op->qualname, "aten.expand.default") != 0 || n->n_inputs < 1 ||
      n->n_results != 1 || n->results[0] == SC_ID_NONE || out_cls[0] == SC_ID_NONE ||
      c->in_cls->len < 1)
    return FALSE;
  const sc_shape *xs = &sc_graph_tensor(c->spec, n->inputs[0])->type.shape;
  const sc_shape *os = &sc_graph_tensor(c->spec, n->results[0])->type.shape;
  if (xs->rank != os->rank || xs->rank == 0)
    return FALSE;
  int32_t d = -1;
  for (uint32_t j = 0; j < xs->rank; j++) {
    sc_dim a = xs->dims[j], b = os->dims[j];
    if (!sc_dim_is_const(a) || !sc_dim_is_const(b))
      return FALSE;
    if (a.value == b.value)
      continue;
    if (d >= 0 || a.value != 1 || b.value < 2 || b.value > EXPAND_MAX_COPIES)
      return FALSE;
    d = (int32_t)j;
  }
  if (d < 0 || !has_one_rank_form(c, n->inputs[0]) || !sc_rel_some_output_unmapped(c, n, out_cls))
    return FALSE;
  sc_id x = g_array_index(c->in_cls, sc_id, 0);
  uint32_t copies = (uint32_t)os->dims[d].value;
  sc_id parts[EXPAND_MAX_COPIES];
  for (uint32_t i = 0; i < copies; i++)
    parts[i] = x;
  sc_dim dim = sc_dim_const(d);
  GError *err = NULL;
  sc_id cat = sc_rel_add_variadic(c, "cat", parts, copies, &dim, &err);
  if (cat == SC_ID_NONE) {
    g_clear_error(&err);
    return FALSE;
  }
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_union(eg, out_cls[0], cat,
                  SC_EXPLAIN_JUST(c->ex, SC_FACT_EXPAND_COPIES, n->results[0]));
  sc_egraph_rebuild(eg);
  return TRUE;
}
