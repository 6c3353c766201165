/* given.c — output relations of checked outputs whose relation the bundle
 * gives: a spec input (the gradient seed grad_out returned as the gradient
 * of a tensor that is itself an output: out = x, so grad_x = grad_out) or
 * an assumed tensor.  No spec node produces such a tensor, so the walk
 * never visits it, yet the impl returns it through its own operators (each
 * rank's piece of grad_out sliced, copied or viewed into grad_x_r).  Its
 * output relation is found as a visited node's is: an e-graph holding the
 * tensor's relation (every expression unioned), Listing 3's exploration
 * from the impl tensors it reads, widened when no clean term over impl
 * outputs appears, and the tensor's expectations proved in the same
 * e-graph.  Like every visit, exploration only decides which impl nodes
 * are asserted; what is extracted is a proved equality. */
#include "infer/infer-private.h"

/* The expressions of T's relation that read impl outputs only (the
 * relation itself is the output relation: out = x with x_r returned). */
static GPtrArray *relation_over_outputs(sc_rel_ctx *c, sc_id t) {
  GPtrArray *outs = g_ptr_array_new();
  for (guint j = 0; j < c->rel[t]->len; j++) {
    sc_texpr *e = g_ptr_array_index(c->rel[t], j);
    GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
    sc_texpr_collect_leaves(e, leaves);
    gboolean all_out = TRUE;
    for (guint l = 0; l < leaves->len; l++)
      all_out = all_out && c->impl_is_output[g_array_index(leaves, sc_id, l)];
    g_array_free(leaves, TRUE);
    if (all_out)
      g_ptr_array_add(outs, e);
  }
  return outs;
}

/* The expectations of T, proved in this e-graph against CLS (T's class):
 * each expected expression added, its leaves in T_rel, exploration again,
 * then the classes compared. */
static gboolean given_expectations(sc_rel_ctx *c, sc_runner *runner, sc_id t, sc_id cls,
                                   const char **limit_hit, GError **error) {
  const sc_relation *exp = sc_bundle_expect_output_relation(c->bundle);
  const sc_relation_entry *e = exp ? sc_relation_find(exp, t) : NULL;
  if (!e || e->n_exprs == 0)
    return TRUE;
  sc_id *ecls = g_new(sc_id, e->n_exprs);
  for (uint32_t j = 0; j < e->n_exprs; j++) {
    ecls[j] = sc_rel_add_related_texpr(c, e->exprs[j], error);
    if (ecls[j] == SC_ID_NONE) {
      g_free(ecls);
      return FALSE;
    }
  }
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  if (!sc_rel_explore(c, runner, &cls, 1, limit_hit, error)) {
    g_free(ecls);
    return FALSE;
  }
  for (uint32_t j = 0; j < e->n_exprs; j++) {
    gboolean found = sc_egraph_find(eg, ecls[j]) == sc_egraph_find(eg, cls);
    for (guint x = 0; x < c->res->expectations->len; x++) {
      sc_infer_expectation *ie = &g_array_index(c->res->expectations, sc_infer_expectation, x);
      if (ie->tensor == t && ie->text == e->texts[j]) {
        ie->found = found;
        ie->decided = TRUE;
      }
    }
  }
  g_free(ecls);
  return TRUE;
}

/* T's output relation (and expectations) from a visit of T alone. */
static gboolean visit_given(sc_rel_ctx *c, sc_id t, GError **error) {
  gboolean ok = sc_rel_visit_begin(c, error);
  sc_runner *runner = NULL;
  const char *limit_hit = NULL;
  GPtrArray *outs = g_ptr_array_new();
  sc_id cls = SC_ID_NONE;
  if (ok) {
    runner = sc_runner_new(sc_lang_egraph(c->lang), &c->opts->limits);
    cls = sc_rel_spec_input_class(c, t, error);
    ok = cls != SC_ID_NONE;
  }
  if (ok) {
    g_array_set_size(c->in_cls, 0);
    g_array_append_val(c->in_cls, cls);
    sc_egraph_rebuild(sc_lang_egraph(c->lang));
    ok = sc_rel_explore(c, runner, &cls, 1, &limit_hit, error);
  }
  if (ok) {
    sc_rel_clean_exprs(c, cls, c->impl_is_output, outs);
    if (outs->len == 0 && !limit_hit) {
      ok = sc_rel_widen(c, runner, &cls, 1, &limit_hit, error);
      if (ok)
        sc_rel_clean_exprs(c, cls, c->impl_is_output, outs);
    }
  }
  if (ok)
    ok = given_expectations(c, runner, t, cls, &limit_hit, error);
  if (ok)
    c->res->output_texts[t] = sc_rel_texts_of(outs); /* the terms are in c->owned */
  g_ptr_array_unref(outs);
  if (runner)
    sc_runner_free(runner);
  sc_rel_visit_release(c);
  return ok;
}

gboolean sc_rel_outputs_given(sc_rel_ctx *c, GError **error) {
  sc_infer_result *res = c->res;
  const sc_relation *exp = sc_bundle_expect_output_relation(c->bundle);
  for (guint i = 0; i < res->checked->len; i++) {
    sc_id t = g_array_index(res->checked, sc_id, i);
    if (res->output_texts[t] || !c->rel[t])
      continue;
    GPtrArray *outs = relation_over_outputs(c, t);
    gboolean expected = exp && sc_relation_find(exp, t) != NULL;
    if (outs->len > 0 && !expected)
      res->output_texts[t] = sc_rel_texts_of(outs);
    g_ptr_array_unref(outs);
    if (!res->output_texts[t] && !visit_given(c, t, error))
      return FALSE;
  }
  return TRUE;
}
