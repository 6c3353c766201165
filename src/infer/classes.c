/* classes.c — the classes a visit starts from: a spec tensor's class (every
 * expression of its relation unioned, the parts of its equal cats unioned
 * (cat-parts.c), its value range seeded; a deferred
 * tensor's producer over its inputs), the structured class of an input of
 * a deferred node, an impl tensor's leaf; and a node's arguments turned
 * into child indices over such classes. */
#include "infer/infer-private.h"

#include <string.h>

/* Copy ARGS, replacing tensor ids by child indices and appending the
 * classes CLASS_OF gives for them to CHILDREN.  Returns a g_new'd array of
 * op->n_args values (free with sc_rel_free_args). */

void sc_rel_free_args(sc_value *args, uint32_t n) {
  if (!args)
    return;
  for (uint32_t i = 0; i < n; i++)
    sc_value_clear(&args[i]);
  g_free(args);
}

sc_value *sc_rel_args_to_children(sc_rel_ctx *c, const sc_node *n, class_of_fn class_of,
                                  GArray *children, GError **error) {
  uint32_t na = n->op->n_args;
  sc_value *args = g_new0(sc_value, na ? na : 1);
  for (uint32_t i = 0; i < na; i++) {
    sc_value_copy(&args[i], &n->args[i]);
    if (args[i].kind == SC_VAL_TENSOR) {
      sc_id cls = class_of(c, args[i].u.tensor, error);
      if (cls == SC_ID_NONE) {
        sc_rel_free_args(args, na);
        return NULL;
      }
      args[i].u.tensor = children->len;
      g_array_append_val(children, cls);
    } else if (args[i].kind == SC_VAL_TENSOR_LIST) {
      for (uint32_t j = 0; j < args[i].u.list.n; j++) {
        if (args[i].u.list.ids[j] == SC_ID_NONE)
          continue;
        sc_id cls = class_of(c, args[i].u.list.ids[j], error);
        if (cls == SC_ID_NONE) {
          sc_rel_free_args(args, na);
          return NULL;
        }
        args[i].u.list.ids[j] = children->len;
        g_array_append_val(children, cls);
      }
    }
  }
  return args;
}

sc_id sc_rel_add_related_texpr(sc_rel_ctx *c, const sc_texpr *t, GError **error) {
  sc_id k = sc_lang_add_texpr(c->lang, t, error);
  if (k == SC_ID_NONE)
    return SC_ID_NONE;
  GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_texpr_collect_leaves(t, leaves);
  for (guint j = 0; j < leaves->len; j++)
    sc_rel_trel_add(c, g_array_index(leaves, sc_id, j));
  g_array_free(leaves, TRUE);
  return k;
}

/* The class of spec tensor u: all its known expressions, unioned (and,
 * for a deferred tensor, its producer over its inputs' classes). */
sc_id sc_rel_spec_input_class(sc_rel_ctx *c, sc_id u, GError **error) {
  GPtrArray *exprs = c->rel[u];
  if (!exprs || exprs->len == 0) {
    g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                "internal error: spec tensor '%s' has no relation when it is used",
                sc_graph_tensor(c->spec, u)->name);
    return SC_ID_NONE;
  }
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_id cls = SC_ID_NONE;
  uint32_t n_read = sc_rel_cut_forms_main(c, u, exprs->len); /* cut-forms.c */
  for (guint i = 0; i < n_read; i++) {
    sc_id k = sc_rel_add_related_texpr(c, g_ptr_array_index(exprs, i), error);
    if (k == SC_ID_NONE)
      return SC_ID_NONE;
    if (cls == SC_ID_NONE)
      cls = c->ex ? sc_explain_spec_leaf(c->ex, u, k) : k;
    else
      sc_egraph_union(eg, cls, k, SC_EXPLAIN_JUST(c->ex, SC_FACT_RELATION, u));
  }
  /* equal cats have equal parts (cat-parts.c): a block replicated over
   * one mesh dim of a 2-D mesh is one class on all its ranks */
  if (n_read > 1)
    sc_rel_cat_equal_parts(c, cls);
  if (c->defer_depth[u] > 0) {
    sc_id k = sc_rel_deferred_class(c, u, error);
    if (k == SC_ID_NONE)
      return SC_ID_NONE;
    sc_egraph_union(eg, cls, k, SC_EXPLAIN_JUST(c->ex, SC_FACT_DEFERRED, u));
  }
  sc_rel_vr_seed(c, u, cls);
  return c->ex ? cls : sc_egraph_find(eg, cls); /* explain: u's leaf */
}

/* The class of spec tensor U as an input of a deferred node (or of a node
 * that reads a deferred tensor): its relation and, when U maps cleanly,
 * also its producer applied to its inputs' relations (one level), so that
 * lemmas see the structure of the clean tensors a deferred chain is built
 * from (the label masks of a vocabulary-parallel cross entropy).  That is
 * the spec's own definition of U: sound. */
sc_id sc_rel_structured_class(sc_rel_ctx *c, sc_id u, GError **error) {
  sc_id cls = sc_rel_spec_input_class(c, u, error);
  if (cls == SC_ID_NONE || c->defer_depth[u] > 0)
    return cls;
  const sc_tensor *ten = sc_graph_tensor(c->spec, u);
  if (ten->producer == SC_ID_NONE)
    return cls;
  const sc_node *pn = sc_graph_node(c->spec, ten->producer);
  for (uint32_t i = 0; i < pn->n_inputs; i++)
    if (!c->rel[pn->inputs[i]] || c->rel[pn->inputs[i]]->len == 0)
      return cls;
  uint32_t k = 0;
  while (k < pn->n_results && pn->results[k] != u)
    k++;
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_value *args = sc_rel_args_to_children(c, pn, sc_rel_spec_input_class, children, error);
  if (args) {
    GError *local = NULL;
    sc_id s2 = sc_lang_add_call(c->lang, pn->op, args, (const sc_id *)children->data,
                                children->len, k, &local);
    g_clear_error(&local);
    if (s2 != SC_ID_NONE)
      sc_egraph_union(sc_lang_egraph(c->lang), cls, s2, SC_JUST_ASSERTED);
    sc_rel_free_args(args, pn->op->n_args);
  }
  g_array_free(children, TRUE);
  return cls;
}

sc_id sc_rel_impl_leaf_class(sc_rel_ctx *c, sc_id t, GError **error) {
  (void)error;
  return sc_lang_add_tensor(c->lang, t);
}

