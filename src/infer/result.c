/* result.c — the result of a check (infer.h): verdict, relations found,
 * the failure sub-structure (sc_rel_failure: recorded at the first
 * unmapped node, cleared while a deferred failure is forgotten), and the
 * accessors.  Everything in it is owned by it; names borrow the bundle. */
#include "infer/infer-private.h"

#include <string.h>

G_DEFINE_QUARK(sc-infer-error-quark, sc_infer_error)

const char *sc_verdict_name(sc_verdict v) {
  switch (v) {
#define SC_X_VERDICT(sym, word) case sym: return word;
    SC_VERDICTS(SC_X_VERDICT)
#undef SC_X_VERDICT
  }
  return "?";
}

const char *sc_failure_kind_name(sc_failure_kind k) {
  switch (k) {
#define SC_X_FAILURE(sym, word) case sym: return word;
    SC_FAILURE_KINDS(SC_X_FAILURE)
#undef SC_X_FAILURE
  }
  return "?";
}
void sc_rel_record_failure(sc_rel_ctx *c, sc_id v, const sc_id *out_cls, GArray *unmapped,
                           const char *limit_hit) {
  sc_infer_result *res = c->res;
  res->verdict = limit_hit ? SC_VERDICT_LIMIT : SC_VERDICT_FAILS;
  res->failure.kind = SC_FAILURE_UNMAPPED;
  res->failure.node = v;
  res->failure.limit_reason = limit_hit ? g_strdup(limit_hit) : NULL;
  const sc_node *n = sc_graph_node(c->spec, v);
  for (guint i = 0; i < unmapped->len; i++) {
    uint32_t k = g_array_index(unmapped, uint32_t, i);
    g_array_append_val(res->failure.unmapped, n->results[k]);
  }
  /* Conditions the normal form and cvc5 could not decide at this node:
   * those lemmas did not fire, and the user should know which. */
  for (uint32_t i = 0; c->rules && i < sc_lemma_set_n_lemmas(c->opts->lemmas); i++) {
    sc_lemma_counters k;
    sc_lemma_rules_counters(c->rules, i, &k);
    if (k.undecided == 0)
      continue;
    const sc_lemma_info *li = sc_lemma_set_lemma(c->opts->lemmas, i);
    const char *cond, *inst;
    sc_lemma_rules_undecided(c->rules, i, &cond, &inst);
    g_ptr_array_add(res->failure.undecided,
                    g_strdup_printf("%s (%s:%u): its condition was undecided %" G_GUINT64_FORMAT
                                    " times: where %s%s%s",
                                    li->name, li->file, li->line, k.undecided,
                                    cond ? cond : "?", inst ? "; undecided: " : "",
                                    inst ? inst : ""));
  }
  sc_rel_add_nearest_terms(c, out_cls[g_array_index(unmapped, uint32_t, 0)], res->failure.nearest);
  /* a checked output with clean relations, none over impl outputs: they
   * are listed (bundle-format.md, "The check's results") */
  for (guint i = 0; i < unmapped->len; i++) {
    sc_id t = n->results[g_array_index(unmapped, uint32_t, i)];
    const GPtrArray *texts = sc_infer_tensor_exprs(res, t);
    for (guint j = 0; texts != NULL && res->output_texts[t] != NULL && j < texts->len; j++)
      g_ptr_array_add(res->failure.over_intermediates, g_strdup(g_ptr_array_index(texts, j)));
  }
}

/* The node where the walk stopped, when the failure is reported at an
 * earlier, deferred node: a user reads both (the deferred node is where
 * the impl first differs, the stop node where that difference could not
 * be absorbed). */
void sc_rel_record_stop(sc_rel_ctx *c, sc_id v, const sc_id *out_cls, GArray *unmapped) {
  sc_infer_result *res = c->res;
  if (res->failure.node == v || res->failure.stop != SC_ID_NONE)
    return;
  res->failure.stop = v;
  sc_rel_add_nearest_terms(c, out_cls[g_array_index(unmapped, uint32_t, 0)], res->failure.stop_nearest);
}

/* Forget a recorded failure (the first deferred node's, once the check
 * has gone on to map every checked output). */
void sc_rel_clear_failure(sc_infer_result *res) {
  res->verdict = SC_VERDICT_REFINES;
  res->failure.kind = SC_FAILURE_UNMAPPED;
  res->failure.node = SC_ID_NONE;
  g_array_set_size(res->failure.unmapped, 0);
  g_ptr_array_set_size(res->failure.nearest, 0);
  g_clear_pointer(&res->failure.limit_reason, g_free);
  res->failure.explored = 0;
  res->failure.stop = SC_ID_NONE;
  g_ptr_array_set_size(res->failure.stop_nearest, 0);
  g_ptr_array_set_size(res->failure.over_intermediates, 0);
}

void sc_rel_failure_init(sc_rel_failure *f) {
  memset(f, 0, sizeof *f);
  f->kind = SC_FAILURE_UNMAPPED;
  f->node = SC_ID_NONE;
  f->unmapped = g_array_new(FALSE, FALSE, sizeof(sc_id));
  f->nearest = g_ptr_array_new_with_free_func(g_free);
  f->stop = SC_ID_NONE;
  f->stop_nearest = g_ptr_array_new_with_free_func(g_free);
  f->undecided = g_ptr_array_new_with_free_func(g_free);
  f->over_intermediates = g_ptr_array_new_with_free_func(g_free);
}

void sc_rel_failure_free(sc_rel_failure *f) {
  g_array_free(f->unmapped, TRUE);
  g_ptr_array_unref(f->nearest);
  g_ptr_array_unref(f->stop_nearest);
  g_free(f->limit_reason);
  g_free(f->refuted);
  g_ptr_array_unref(f->undecided);
  g_ptr_array_unref(f->over_intermediates);
  memset(f, 0, sizeof *f);
}

sc_infer_result *sc_rel_result_new(const sc_bundle *b) {
  uint32_t n_st = sc_graph_n_tensors(sc_bundle_spec(b));
  sc_infer_result *res = g_new0(sc_infer_result, 1);
  res->bundle = b;
  res->verdict = SC_VERDICT_REFINES;
  res->tensor_texts = g_new0(GPtrArray *, n_st ? n_st : 1);
  res->deferred_texts = g_new0(GPtrArray *, n_st ? n_st : 1);
  res->output_texts = g_new0(GPtrArray *, n_st ? n_st : 1);
  res->checked = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_rel_failure_init(&res->failure);
  res->expectations = g_array_new(FALSE, FALSE, sizeof(sc_infer_expectation));
  res->explanations = g_ptr_array_new_with_free_func(g_free);
  res->relexp = g_ptr_array_new_with_free_func(sc_relation_explanation_free);
  res->assumptions = g_array_new(FALSE, FALSE, sizeof(sc_infer_assumption));
  res->learned = g_ptr_array_new_with_free_func(g_free);
  res->stats.spec_nodes = sc_graph_n_nodes(sc_bundle_spec(b));
  res->stats.impl_nodes = sc_graph_n_nodes(sc_bundle_impl(b));
  res->stats.slowest_node = SC_ID_NONE;
  uint32_t n_sn = sc_graph_n_nodes(sc_bundle_spec(b));
  res->carried_from = g_new(sc_id, n_sn ? n_sn : 1);
  for (uint32_t v = 0; v < n_sn; v++)
    res->carried_from[v] = SC_ID_NONE;
  res->carried_blocks = g_array_new(FALSE, FALSE, sizeof(sc_infer_carried_block));
  return res;
}

void sc_infer_result_free(sc_infer_result *r) {
  if (!r)
    return;
  uint32_t n_st = sc_graph_n_tensors(sc_bundle_spec(r->bundle));
  for (uint32_t t = 0; t < n_st; t++) {
    if (r->tensor_texts[t])
      g_ptr_array_unref(r->tensor_texts[t]);
    if (r->output_texts[t])
      g_ptr_array_unref(r->output_texts[t]);
    if (r->deferred_texts[t])
      g_ptr_array_unref(r->deferred_texts[t]);
    if (r->carried_texts)
      sc_rel_carried_text_free(r->carried_texts[t]);
  }
  g_free(r->carried_texts);
  g_free(r->tensor_texts);
  g_free(r->deferred_texts);
  g_free(r->output_texts);
  g_array_free(r->checked, TRUE);
  sc_rel_failure_free(&r->failure);
  g_array_free(r->expectations, TRUE);
  g_ptr_array_unref(r->explanations);
  g_ptr_array_unref(r->relexp);
  for (guint i = 0; i < r->assumptions->len; i++) {
    sc_infer_assumption *a = &g_array_index(r->assumptions, sc_infer_assumption, i);
    g_free(a->text);
    g_free(a->used_by);
  }
  g_array_free(r->assumptions, TRUE);
  g_ptr_array_unref(r->learned);
  g_free(r->carried_from);
  g_array_free(r->carried_blocks, TRUE);
  g_free(r);
}

sc_verdict sc_infer_verdict(const sc_infer_result *r) { return r->verdict; }
const GPtrArray *sc_infer_tensor_exprs(const sc_infer_result *r, sc_id t) {
  if (r->carried_texts != NULL) /* a cache: rendering changes no answer */
    sc_rel_render_carried_texts((sc_infer_result *)r, t);
  return r->tensor_texts[t];
}
const GPtrArray *sc_infer_tensor_deferred_exprs(const sc_infer_result *r, sc_id t) {
  return r->deferred_texts[t];
}
const GPtrArray *sc_infer_output_exprs(const sc_infer_result *r, sc_id t) {
  return r->output_texts[t];
}
uint32_t sc_infer_n_checked(const sc_infer_result *r) { return r->checked->len; }
sc_id sc_infer_checked(const sc_infer_result *r, uint32_t i) {
  return g_array_index(r->checked, sc_id, i);
}
sc_failure_kind sc_infer_failure_kind(const sc_infer_result *r) { return r->failure.kind; }
sc_id sc_infer_failure_node(const sc_infer_result *r) { return r->failure.node; }
const GArray *sc_infer_failure_unmapped(const sc_infer_result *r) { return r->failure.unmapped; }
const GPtrArray *sc_infer_failure_nearest(const sc_infer_result *r) { return r->failure.nearest; }
uint32_t sc_infer_failure_explored(const sc_infer_result *r) { return r->failure.explored; }
sc_id sc_infer_failure_stop_node(const sc_infer_result *r) { return r->failure.stop; }
const GPtrArray *sc_infer_failure_stop_nearest(const sc_infer_result *r) { return r->failure.stop_nearest; }
const char *sc_infer_limit_reason(const sc_infer_result *r) { return r->failure.limit_reason; }
uint32_t sc_infer_n_expectations(const sc_infer_result *r) { return r->expectations->len; }
const sc_infer_expectation *sc_infer_expectation_at(const sc_infer_result *r, uint32_t i) {
  return &g_array_index(r->expectations, sc_infer_expectation, i);
}
const sc_infer_expectation *sc_infer_first_unfound_expectation(const sc_infer_result *r) {
  for (guint i = 0; i < r->expectations->len; i++) {
    const sc_infer_expectation *e = &g_array_index(r->expectations, sc_infer_expectation, i);
    if (!e->found)
      return e;
  }
  return NULL;
}
const sc_infer_stats *sc_infer_get_stats(const sc_infer_result *r) { return &r->stats; }
const GPtrArray *sc_infer_explanations(const sc_infer_result *r) { return r->explanations; }
uint32_t sc_infer_n_relation_explanations(const sc_infer_result *r) { return r->relexp->len; }
const sc_relation_explanation *sc_infer_relation_explanation(const sc_infer_result *r, uint32_t i) {
  g_return_val_if_fail(i < r->relexp->len, NULL);
  return g_ptr_array_index(r->relexp, i);
}
const GPtrArray *sc_infer_failure_undecided(const sc_infer_result *r) { return r->failure.undecided; }
const GPtrArray *sc_infer_failure_found_over_intermediates(const sc_infer_result *r) {
  return r->failure.over_intermediates;
}
const GPtrArray *sc_infer_learned_sizes(const sc_infer_result *r) { return r->learned; }
uint32_t sc_infer_n_assumptions(const sc_infer_result *r) { return r->assumptions->len; }
const sc_infer_assumption *sc_infer_assumption_at(const sc_infer_result *r, uint32_t i) {
  g_return_val_if_fail(i < r->assumptions->len, NULL);
  return &g_array_index(r->assumptions, sc_infer_assumption, i);
}
uint32_t sc_infer_n_carried_blocks(const sc_infer_result *r) { return r->carried_blocks->len; }
const sc_infer_carried_block *sc_infer_carried_block_at(const sc_infer_result *r, uint32_t i) {
  g_return_val_if_fail(i < r->carried_blocks->len, NULL);
  return &g_array_index(r->carried_blocks, sc_infer_carried_block, i);
}
sc_id sc_infer_carried_from(const sc_infer_result *r, sc_id v) {
  g_return_val_if_fail(v < sc_graph_n_nodes(sc_bundle_spec(r->bundle)), SC_ID_NONE);
  return r->carried_from[v];
}
