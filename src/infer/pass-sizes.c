/* pass-sizes.c — hook: congruence modulo a data-dependent size
 * (ops.h, SC_OP_DATA_DEPENDENT). */
#include "infer/infer-private.h"

#include <string.h>

/* The registry's data-dependent operators (aten.nonzero), found once. */
static gpointer find_dd_ops(gpointer unused) {
  (void)unused;
  GArray *ops = g_array_new(FALSE, FALSE, sizeof(const sc_op *));
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    if ((op->flags & SC_OP_DATA_DEPENDENT) && sc_ops_arg_index(op, "size") >= 0)
      g_array_append_val(ops, op);
  }
  return ops;
}

/* Do the attribute records A and B agree in every argument but `size`? */
static gboolean dd_same_but_size(const sc_lang *lang, uint32_t a, uint32_t b, int32_t k) {
  const sc_op *op = sc_lang_attr_op(lang, a);
  if (op != sc_lang_attr_op(lang, b) || sc_lang_attr_result(lang, a) != sc_lang_attr_result(lang, b))
    return FALSE;
  const sc_value *va = sc_lang_attr_args(lang, a), *vb = sc_lang_attr_args(lang, b);
  for (uint32_t i = 0; i < op->n_args; i++)
    if ((int32_t)i != k && !sc_value_equal(&va[i], &vb[i]))
      return FALSE;
  return va[k].kind == SC_VAL_INT && vb[k].kind == SC_VAL_INT;
}

/* Congruence modulo a data-dependent size.  nonzero(m){size=u0} (the
 * spec's) and nonzero(m){size=r0.u0} (a rank's) are different e-nodes:
 * the size is an attribute, the symbol each graph declared for the count
 * it computes.  Once their inputs are one class, they compute the same
 * tensor (an operator is a function of its inputs' values), so they are
 * equal and so are their sizes: u0 == r0.u0 holds in every run in which
 * the equalities this e-graph was built from hold, which is what every
 * relation of the check assumes.  It is learned into the bundle's symtab
 * (sc_symtab_assume, kept for the rest of the walk: later nodes' shapes
 * [u0, 1536] and [r0.u0, 1536] are then equal) and the classes are
 * merged.  Two sizes that the symtab proves different (or whose equality
 * contradicts the bundle's bounds and assumptions) mean that the e-graph
 * equates tensors of different sizes: an unsound lemma or relation.  The
 * union is attempted all the same, so that the shape analysis refuses it
 * and the check stops with its internal error naming both terms.  Returns
 * TRUE when classes were merged. */
gboolean sc_rel_dd_merge_sizes(sc_rel_ctx *c) {
  static GOnce once = G_ONCE_INIT;
  const GArray *ops = g_once(&once, find_dd_ops, NULL);
  if (ops->len == 0)
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  GArray *nodes = g_array_new(FALSE, FALSE, sizeof(sc_id));
  GArray *pairs = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint o = 0; o < ops->len; o++) {
    const sc_op *op = g_array_index(ops, const sc_op *, o);
    int32_t k = sc_ops_arg_index(op, "size");
    uint32_t n_cls = 0;
    const sc_id *cls = sc_egraph_classes_with_op(eg, op->id, &n_cls);
    g_array_set_size(nodes, 0);
    for (uint32_t i = 0; i < n_cls; i++) {
      uint32_t nn = 0;
      const sc_id *ns = sc_egraph_class_nodes_with_op(eg, cls[i], op->id, &nn);
      g_array_append_vals(nodes, ns, nn);
    }
    for (guint i = 0; i < nodes->len; i++) {
      for (guint j = i + 1; j < nodes->len; j++) {
        sc_id x = g_array_index(nodes, sc_id, i), y = g_array_index(nodes, sc_id, j);
        uint32_t ar = sc_egraph_node_arity(eg, x);
        if (ar != sc_egraph_node_arity(eg, y) ||
            sc_egraph_find(eg, x) == sc_egraph_find(eg, y) ||
            !dd_same_but_size(c->lang, sc_egraph_node_attr(eg, x), sc_egraph_node_attr(eg, y), k))
          continue;
        const sc_id *kx = sc_egraph_node_children(eg, x), *ky = sc_egraph_node_children(eg, y);
        gboolean same = TRUE;
        for (uint32_t q = 0; q < ar && same; q++)
          same = sc_egraph_find(eg, kx[q]) == sc_egraph_find(eg, ky[q]);
        if (!same)
          continue;
        sc_dim a = sc_lang_attr_args(c->lang, sc_egraph_node_attr(eg, x))[k].u.i;
        sc_dim b = sc_lang_attr_args(c->lang, sc_egraph_node_attr(eg, y))[k].u.i;
        if (sc_dim_eq(c->st, a, b) == SC_UNKNOWN) {
          g_autofree char *sa = sc_dim_to_string(c->st, a);
          g_autofree char *sb = sc_dim_to_string(c->st, b);
          g_autofree char *fact = g_strdup_printf("%s == %s", sa, sb);
          GError *err = NULL;
          if (sc_symtab_assume(c->st, fact, &err))
            g_ptr_array_add(c->res->learned, g_strdup_printf(
                "%s (%s results proved equal at spec node '%s')", fact, op->qualname,
                c->visiting ? c->visiting->name : "?"));
          g_clear_error(&err); /* a contradiction: the union below is refused */
        }
        g_array_append_val(pairs, x);
        g_array_append_val(pairs, y);
      }
    }
  }
  gboolean merged = FALSE;
  for (guint i = 0; i + 1 < pairs->len; i += 2) {
    sc_id x = g_array_index(pairs, sc_id, i), y = g_array_index(pairs, sc_id, i + 1);
    if (sc_egraph_find(eg, x) != sc_egraph_find(eg, y))
      merged |= sc_egraph_union(eg, x, y, SC_JUST_ASSERTED);
  }
  g_array_free(pairs, TRUE);
  g_array_free(nodes, TRUE);
  return merged;
}

