/* constant.c — constant spec tensors: a spec tensor that depends on no
 * graph input (a causal mask `tril(ones(S, S)) == 0`, a comparison of two
 * `arange`s, a `zeros_like`) is clean as the term that recomputes it from
 * creation operators (bundle-format.md, "Expressions"), whatever operators
 * build it.  When a visit finds no clean expression over impl tensors for
 * such a tensor (the ranks build another mask, or none at all), its class
 * still holds that term: the spec node applied to its inputs' classes,
 * which are constants themselves.  Its relation is then the smallest term
 * of the class built from operators alone (no impl tensor, no opaque
 * node, no random operator: `rand` has no input yet is no constant), so
 * the walk goes on and a bug is reported where the values first differ
 * (the `masked_fill` that reads the wrong mask), not at the constant.
 * The term is an equality proved in the e-graph like every other, and
 * reads no impl tensor: it states the spec's own definition of the value. */
#include "infer/infer-private.h"

/* The largest constant looked for, in spec tensors and term nodes (a mask
 * of a few operators, its cast and comparison). */
#define MAX_CONSTANT_SIZE 32

/* Does spec tensor U depend on no graph input: made by a non-random
 * operator all of whose tensor inputs are such tensors?  *BUDGET bounds
 * the tensors looked at (a DAG of shared constants is walked as a tree):
 * past it, U counts as no constant. */
static gboolean is_constant(const sc_rel_ctx *c, sc_id u, uint32_t *budget) {
  const sc_tensor *ten = sc_graph_tensor(c->spec, u);
  if (ten->producer == SC_ID_NONE || *budget == 0)
    return FALSE;
  (*budget)--;
  const sc_node *pn = sc_graph_node(c->spec, ten->producer);
  if (pn->op->flags & (SC_OP_RANDOM | SC_OP_COLLECTIVE | SC_OP_DATA_DEPENDENT))
    return FALSE;
  for (uint32_t i = 0; i < pn->n_inputs; i++)
    if (!is_constant(c, pn->inputs[i], budget))
      return FALSE;
  return TRUE;
}

/* The class of constant spec tensor U built from the spec's own nodes:
 * its producer over its inputs' such classes (a class_of_fn). */
static sc_id constant_class(sc_rel_ctx *c, sc_id u, GError **error) {
  const sc_tensor *ten = sc_graph_tensor(c->spec, u);
  const sc_node *pn = sc_graph_node(c->spec, ten->producer);
  uint32_t k = 0;
  while (k < pn->n_results && pn->results[k] != u)
    k++;
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_value *args = sc_rel_args_to_children(c, pn, constant_class, children, error);
  sc_id cls = SC_ID_NONE;
  if (args) {
    cls = sc_lang_add_call(c->lang, pn->op, args, (const sc_id *)children->data, children->len,
                           k, error);
    sc_rel_free_args(args, pn->op->n_args);
  }
  g_array_free(children, TRUE);
  return cls;
}

/* A term node a constant may hold: an operator that is no random one. */
static uint32_t constant_weight(const sc_egraph *eg, sc_id node, void *user) {
  (void)user;
  uint32_t op = sc_egraph_node_op(eg, node);
  if (op == SC_LANG_OP_TENSOR || op == SC_LANG_OP_OPAQUE)
    return 0;
  return (sc_ops_at(op)->flags & SC_OP_RANDOM) ? 0 : 1;
}

sc_texpr *sc_rel_constant_expr(sc_rel_ctx *c, sc_id u) {
  uint32_t budget = MAX_CONSTANT_SIZE;
  if (!is_constant(c, u, &budget))
    return NULL;
  GError *local = NULL;
  sc_id cls = constant_class(c, u, &local);
  if (cls == SC_ID_NONE) {
    g_clear_error(&local);
    return NULL;
  }
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, cls), 1, MAX_CONSTANT_SIZE,
                                         constant_weight, NULL, NULL);
  sc_texpr *te = NULL;
  if (terms->len > 0) {
    sc_expr *e = sc_lang_term_to_expr(c->lang, g_ptr_array_index(terms, 0));
    te = e ? sc_texpr_bind(e, c->impl, FALSE, NULL) : NULL;
    if (e)
      sc_expr_free(e);
    if (te)
      g_ptr_array_add(c->owned, te);
  }
  g_ptr_array_unref(terms);
  return te;
}
