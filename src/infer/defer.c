/* defer.c — deferral: an unmapped intermediate node keeps a non-clean
 * relation and the walk goes on; its failure is reported only if a later
 * node cannot be mapped either. */
#include "infer/infer-private.h"

#include <string.h>

/* The class of a deferred spec tensor U (sc_rel_defer_outputs): its producer
 * applied to its inputs' classes, so that the consumer's e-graph holds
 * the deferred node itself, with everything known of its inputs (a
 * replicated bias is one class of all its copies, which the deferred
 * relation's terms, over single copies, cannot say). */
sc_id sc_rel_deferred_class(sc_rel_ctx *c, sc_id u, GError **error) {
  const sc_tensor *ten = sc_graph_tensor(c->spec, u);
  const sc_node *pn = sc_graph_node(c->spec, ten->producer);
  uint32_t k = 0;
  while (k < pn->n_results && pn->results[k] != u)
    k++;
  g_assert(k < pn->n_results);
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_value *args = sc_rel_args_to_children(c, pn, sc_rel_structured_class, children, error);
  sc_id cls = SC_ID_NONE;
  if (args) {
    GError *local = NULL;
    cls = sc_lang_add_call(c->lang, pn->op, args, (const sc_id *)children->data, children->len,
                           k, &local);
    if (cls == SC_ID_NONE) {
      g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                  "internal error: deferred spec node '%s' cannot be applied to its inputs' "
                  "relations: %s", pn->name, local->message);
      g_error_free(local);
    }
    sc_rel_free_args(args, pn->op->n_args);
  }
  g_array_free(children, TRUE);
  return cls;
}

/* Deferral.  GraphGuard assumes that every spec tensor is materialized in
 * the impl (section 3.1: no reordering).  Megatron's row-parallel layers
 * break that on purpose: the bias of the attention projection is added
 * after the residual add (bias-dropout-add), so the spec's addmm(b, h, w)
 * and its view exist nowhere in the impl, while the residual sum that
 * follows does.  An unmapped output that is not a checked output
 * therefore keeps, as its relation, its smallest expressions over impl
 * tensors with any operators (equalities proved in this e-graph like
 * every other: sound), and the walk goes on.  The failure is recorded at
 * the first deferred node; it is reported if a later node cannot be
 * mapped even so (or a chain of deferred nodes grows longer than
 * MAX_DEFER_DEPTH), and forgotten if every checked output maps cleanly in
 * the end.  So a bug is still reported at the node where GraphGuard
 * reports it.  Returns FALSE (nothing deferred) when some output cannot
 * be deferred. */
/* The largest weighted size of a deferred relation's term.  Non-clean
 * nodes weigh 8 (sc_rel_nearest_weight), and a deferred chain inlines its
 * producers' terms: Megatron's cross-entropy backward reads the label mask
 * twice through five deferred nodes (about 70 at degree 2), past the
 * clean relations' bound. */
static uint32_t sc_rel_defer_term_size(const sc_rel_ctx *c) {
  return MIN(4 * c->term_size, 4096);
}

gboolean sc_rel_defer_outputs(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls,
                              GArray *unmapped, const char *limit_hit) {
  if (limit_hit || unmapped->len == 0)
    return FALSE;
  uint32_t depth = 0;
  for (uint32_t i = 0; i < n->n_inputs; i++)
    depth = MAX(depth, c->defer_depth[n->inputs[i]]);
  if (++depth > MAX_DEFER_DEPTH)
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  weight_ctx wc = {c->lang, NULL};
  GPtrArray *found = g_ptr_array_new();  /* GPtrArray* per unmapped output */
  gboolean ok = TRUE;
  for (guint i = 0; i < unmapped->len && ok; i++) {
    uint32_t k = g_array_index(unmapped, uint32_t, i);
    sc_id t = n->results[k];
    for (guint j = 0; j < c->res->checked->len && ok; j++)
      ok = g_array_index(c->res->checked, sc_id, j) != t;
    if (!ok)
      break;
    /* the smallest terms, and then terms that read an impl tensor none of
     * the kept ones reads (the relation names every rank, so that the
     * consumers explore every rank's nodes) */
    GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, out_cls[k]),
                                           4 * MAX_DEFER_TERMS, sc_rel_defer_term_size(c),
                                           sc_rel_nearest_weight, &wc, NULL);
    GPtrArray *exprs = g_ptr_array_new();
    GHashTable *covered = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint j = 0; j < terms->len && exprs->len < 2 * MAX_DEFER_TERMS; j++) {
      const sc_term *term = g_ptr_array_index(terms, j);
      gboolean fresh = exprs->len < MAX_DEFER_TERMS;
      for (uint32_t q = 0; q < sc_term_n_nodes(term); q++) {
        const sc_term_node *tn = sc_term_node_at(term, q);
        if (tn->op == SC_LANG_OP_TENSOR &&
            g_hash_table_add(covered, GUINT_TO_POINTER(tn->attr + 1)))
          fresh = TRUE;
      }
      if (!fresh)
        continue;
      sc_expr *e = sc_lang_term_to_expr(c->lang, term);
      if (!e)
        continue;
      sc_texpr *te = sc_texpr_bind(e, c->impl, FALSE, NULL);
      sc_expr_free(e);
      if (!te)
        continue;
      g_ptr_array_add(c->owned, te);
      g_ptr_array_add(exprs, te);
    }
    g_hash_table_unref(covered);
    g_ptr_array_unref(terms);
    g_ptr_array_add(found, exprs);
    ok = exprs->len > 0;
  }
  if (!ok) {
    for (guint i = 0; i < found->len; i++)
      g_ptr_array_unref(g_ptr_array_index(found, i));
    g_ptr_array_unref(found);
    return FALSE;
  }
  for (guint i = 0; i < unmapped->len; i++) {
    sc_id t = n->results[g_array_index(unmapped, uint32_t, i)];
    GPtrArray *exprs = g_ptr_array_index(found, i);
    if (c->rel[t])
      g_ptr_array_unref(c->rel[t]);
    c->rel[t] = exprs;
    c->defer_depth[t] = depth;
    if (c->res->deferred_texts[t])
      g_ptr_array_unref(c->res->deferred_texts[t]);
    c->res->deferred_texts[t] = sc_rel_texts_of(exprs);
  }
  g_ptr_array_unref(found);
  return TRUE;
}

/* Does a node of the walk read spec tensor T?  A result that no needed
 * node reads and that is not checked (max.dim's indices when only the
 * values are used, a dropout mask of a graph without backward) needs no
 * relation: no checked output depends on it. */
gboolean sc_rel_result_is_read(sc_rel_ctx *c, sc_id t) {
  const sc_tensor *ten = sc_graph_tensor(c->spec, t);
  for (uint32_t j = 0; j < ten->n_consumers; j++)
    if (c->need[ten->consumers[j]])
      return TRUE;
  return FALSE;
}

/* Deferred relations that every reader has absorbed.  After node N is
 * visited: each deferred input of N has one reader fewer; N's outputs that
 * were just deferred (DEFERRED) become live with one use per needed
 * consumer.  When no deferred tensor is live any more and N itself mapped,
 * the pending failure is forgotten: every node that read a deferred
 * relation mapped cleanly, so the deferred node does not explain any later
 * failure (Megatron's attention scores written into an uninitialised
 * buffer: the spec's empty() maps to nothing, the baddbmm with beta=0 that
 * reads it maps cleanly, and a missing all-reduce in the backward must be
 * reported where it is, not at the empty()). */
void sc_rel_settle_deferred(sc_rel_ctx *c, const sc_node *n, gboolean deferred) {
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    sc_id t = n->inputs[i];
    if (c->live_uses[t] > 0 && --c->live_uses[t] == 0)
      c->n_live--;
  }
  for (uint32_t k = 0; deferred && k < n->n_results; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE || c->defer_depth[t] == 0 || c->live_uses[t] > 0)
      continue;
    const sc_tensor *ten = sc_graph_tensor(c->spec, t);
    uint32_t uses = 0;
    for (uint32_t j = 0; j < ten->n_consumers; j++)
      uses += c->need[ten->consumers[j]] ? 1 : 0;
    if (uses > 0) {
      c->live_uses[t] = uses;
      c->n_live++;
    }
  }
  if (!deferred && c->pending && c->n_live == 0 && c->res->verdict == SC_VERDICT_FAILS) {
    sc_rel_clear_failure(c->res);
    g_ptr_array_set_size(c->res->failure.undecided, 0);
    c->pending = FALSE;
    c->pending_excused = FALSE;
  }
}

