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
 * before the values diverge (shardsmith 14013).  Here the identity is
 * asserted for the visited spec node only, only when its output is still
 * unmapped (a visit that maps costs nothing more), and only from a form
 * of its input that the consumers can read:
 *   - a clean form with no sum in it (a copy held by a rank, or the
 *     blocks of several ranks put together, as a GQA expand of keys
 *     gathered from every rank, 21011): the cat of copies of the input's
 *     class (has_sum_free_form);
 *   - else a partial sum, under structural operators L (view, transpose,
 *     ...): expand is linear, so expand(L(sum(p_1..p_k))) is
 *     sum(cat(L(p_1) copies), ..., cat(L(p_k) copies)), the sum of what
 *     each rank's expand of its partial is (partial_sum_form; a bias
 *     added on every rank before the reduction, 28022).  Never the cat
 *     of copies of the sum itself: clean, but not what the consumers
 *     read, where the deferral carries the sum's structure to the
 *     reduction that completes it (shardsmith 13035). */
#include "infer/infer-private.h"

#include <string.h>

/* The largest number of copies (as expand_unit_peel). */
#define EXPAND_MAX_COPIES 8

/* Does T contain a sum (sc.sum) anywhere? */
static gboolean has_sum(const sc_texpr *t) {
  if (sc_texpr_get_kind(t) != SC_TEXPR_CALL)
    return FALSE;
  if (g_str_has_prefix(sc_texpr_op(t)->qualname, "sc.sum."))
    return TRUE;
  for (uint32_t i = 0; i < sc_texpr_n_children(t); i++)
    if (has_sum(sc_texpr_child(t, i)))
      return TRUE;
  return FALSE;
}

/* Has spec tensor U, not deferred, a clean relation with no sum in it
 * (impl tensors under cat, slice, view, transpose: a copy held by one
 * rank, or the blocks of many ranks put together)?  A partial sum's
 * expand is left to the deferral, which carries the sum's structure to
 * the reduction that completes it; the cat of copies of the sum is clean
 * but not what the consumers read (shardsmith 13035).  The input of a
 * GQA expand gathered from every rank's key block (21011) has only forms
 * over many ranks, none of them a sum. */
static gboolean has_sum_free_form(sc_rel_ctx *c, sc_id u) {
  const GPtrArray *rel = c->rel[u];
  if (rel == NULL || c->defer_depth[u] > 0)
    return FALSE;
  for (guint i = 0; i < rel->len; i++)
    if (!has_sum(g_ptr_array_index(rel, i)))
      return TRUE;
  return FALSE;
}

/* The cat of COPIES copies of class X along dim D. */
static sc_id copies_of(sc_rel_ctx *c, sc_id x, uint32_t copies, int32_t d) {
  sc_id parts[EXPAND_MAX_COPIES];
  for (uint32_t i = 0; i < copies; i++)
    parts[i] = x;
  sc_dim dim = sc_dim_const(d);
  GError *err = NULL;
  sc_id cat = sc_rel_add_variadic(c, "cat", parts, copies, &dim, &err);
  g_clear_error(&err);
  return cat;
}

/* The longest chain of one-operand clean operators above a sum. */
#define MAX_CHAIN 16

/* A partial-sum form of spec tensor U (not deferred): a chain of
 * one-operand clean operators (view, transpose, slice, ...: structural,
 * so linear) over a sum of 2..EXPAND_MAX_COPIES terms none of which has
 * a sum in it (the ranks' partials).  The sum, with the chain from the
 * root down in CHAIN[0..*N_CHAIN), or NULL.  (Clean and a view: a
 * structural operator, linear; a pad with a value would not be.) */
static const sc_texpr *partial_sum_form(sc_rel_ctx *c, sc_id u, const sc_texpr **chain,
                                        uint32_t *n_chain) {
  const GPtrArray *rel = c->rel[u];
  if (rel == NULL || c->defer_depth[u] > 0)
    return NULL;
  for (guint i = 0; i < rel->len; i++) {
    const sc_texpr *t = g_ptr_array_index(rel, i);
    *n_chain = 0;
    while (sc_texpr_get_kind(t) == SC_TEXPR_CALL && sc_texpr_n_children(t) == 1 &&
           (sc_texpr_op(t)->flags & SC_OP_CLEAN) && (sc_texpr_op(t)->flags & SC_OP_VIEW) &&
           *n_chain < MAX_CHAIN) {
      chain[(*n_chain)++] = t;
      t = sc_texpr_child(t, 0);
    }
    if (sc_texpr_get_kind(t) != SC_TEXPR_CALL ||
        strcmp(sc_texpr_op(t)->qualname, "sc.sum.default") != 0 ||
        sc_texpr_n_children(t) < 2 || sc_texpr_n_children(t) > EXPAND_MAX_COPIES)
      continue;
    const sc_shape *ss = &sc_texpr_type(t)->shape;
    gboolean ok = TRUE;
    for (uint32_t j = 0; j < sc_texpr_n_children(t) && ok; j++) {
      const sc_texpr *ch = sc_texpr_child(t, j);
      ok = !has_sum(ch) && sc_shape_equal(&sc_texpr_type(ch)->shape, ss);
    }
    if (ok)
      return t;
  }
  return NULL;
}

/* expand(L(sum(p_1, ..., p_k))) = sum(cat(L(p_1) copies), ..., cat(L(p_k)
 * copies)) for the chain L of structural operators over the sum S: the
 * class of the right side, or SC_ID_NONE. */
static sc_id sum_of_copies(sc_rel_ctx *c, const sc_texpr *s, const sc_texpr *const *chain,
                           uint32_t n_chain, uint32_t copies, int32_t d) {
  uint32_t k = sc_texpr_n_children(s);
  sc_id terms[EXPAND_MAX_COPIES];
  for (uint32_t j = 0; j < k; j++) {
    GError *err = NULL;
    sc_id p = sc_rel_add_related_texpr(c, sc_texpr_child(s, j), &err);
    for (uint32_t q = n_chain; q-- > 0 && p != SC_ID_NONE;)
      p = sc_lang_add_call(c->lang, sc_texpr_op(chain[q]), sc_texpr_args(chain[q]), &p, 1, 0,
                           &err);
    g_clear_error(&err);
    terms[j] = p == SC_ID_NONE ? SC_ID_NONE : copies_of(c, p, copies, d);
    if (terms[j] == SC_ID_NONE)
      return SC_ID_NONE;
  }
  GError *err = NULL;
  sc_id sum = sc_rel_add_variadic(c, "sum", terms, k, NULL, &err);
  g_clear_error(&err);
  return sum;
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
  if (d < 0 || !sc_rel_some_output_unmapped(c, n, out_cls))
    return FALSE;
  uint32_t copies = (uint32_t)os->dims[d].value;
  sc_id cat = SC_ID_NONE;
  const sc_texpr *partials = NULL, *chain[MAX_CHAIN];
  uint32_t n_chain = 0;
  if (has_sum_free_form(c, n->inputs[0]))
    cat = copies_of(c, g_array_index(c->in_cls, sc_id, 0), copies, d);
  else if ((partials = partial_sum_form(c, n->inputs[0], chain, &n_chain)) != NULL)
    cat = sum_of_copies(c, partials, chain, n_chain, copies, d);
  if (cat == SC_ID_NONE)
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_union(eg, out_cls[0], cat,
                  SC_EXPLAIN_JUST(c->ex, SC_FACT_EXPAND_COPIES, n->results[0]));
  sc_egraph_rebuild(eg);
  return TRUE;
}
