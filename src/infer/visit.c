/* visit.c — one spec node's visit (GraphGuard's Listing 2 with Listing
 * 3's exploration): a fresh e-graph holding the node applied to its
 * inputs' classes (classes.c), exploration and saturation (trel.c,
 * hooks.c), widening when an output is left unmapped, the expectations
 * proved in the same e-graph, the relations extracted (relation.c), and
 * an unmapped result deferred (defer.c) or recorded as the failure
 * (result.c). */
#include "infer/infer-private.h"

#include <string.h>

/* Unions refused for a type conflict are recorded by lang; they are named
 * after the next rebuild (sc_rel_conflict_text), since naming needs a clean
 * e-graph. */
static void sc_rel_on_conflict(sc_lang *lang, sc_id a, sc_id b, uint32_t just, void *user) {
  (void)lang, (void)a, (void)b, (void)just, (void)user;
}

/* The first recorded conflict, with the rule that caused it, into
 * c->conflict (empty when there is none). */
static void sc_rel_conflict_text(sc_rel_ctx *c) {
  uint32_t n = 0;
  const sc_lang_conflict *cf = sc_lang_get_conflicts(c->lang, &n);
  g_string_truncate(c->conflict, 0);
  if (n == 0)
    return;
  sc_egraph_rebuild(sc_lang_egraph(c->lang));
  uint32_t just = cf[0].just;
  const char *rule = (just < c->n_rewrites) ? sc_rewrite_name(c->rewrites[just])
                     : SC_JUST_IS_ASSERTED(just) ? "an asserted fact (a relation or an impl node)"
                                               : "congruence";
  g_autofree char *msg = sc_lang_conflict_message(c->lang, &cf[0]);
  g_string_append_printf(c->conflict, "%s: %s", rule, msg);
}
/* Expectations on the outputs of node V, proved in V's e-graph. */
static gboolean sc_rel_check_expectations(sc_rel_ctx *c, sc_runner *runner, const sc_node *n,
                                   const sc_id *out_cls, GArray *expected,
                                   const char **limit_hit, GError **error) {
  const sc_relation *exp = sc_bundle_expect_output_relation(c->bundle);
  if (!exp)
    return TRUE;
  GArray *pending = g_array_new(FALSE, FALSE, sizeof(sc_id) * 2);
  for (uint32_t k = 0; k < n->n_results; k++) {
    if (n->results[k] == SC_ID_NONE)
      continue;
    const sc_relation_entry *e = sc_relation_find(exp, n->results[k]);
    if (!e)
      continue;
    for (uint32_t j = 0; j < e->n_exprs; j++) {
      sc_id cls = sc_rel_add_related_texpr(c, e->exprs[j], error);
      if (cls == SC_ID_NONE) {
        g_array_free(pending, TRUE);
        return FALSE;
      }
      sc_id pair[2] = {cls, (sc_id)k};
      g_array_append_vals(pending, pair, 1);
    }
  }
  if (pending->len == 0) {
    g_array_free(pending, TRUE);
    return TRUE;
  }
  sc_egraph_rebuild(sc_lang_egraph(c->lang));
  if (!sc_rel_explore(c, runner, out_cls, n->n_results, limit_hit, error)) {
    g_array_free(pending, TRUE);
    return FALSE;
  }
  sc_egraph *eg = sc_lang_egraph(c->lang);
  /* pending is in the order of the expectation list per tensor */
  guint p = 0;
  for (uint32_t k = 0; k < n->n_results; k++) {
    if (n->results[k] == SC_ID_NONE)
      continue;
    const sc_relation_entry *e = sc_relation_find(exp, n->results[k]);
    if (!e)
      continue;
    for (uint32_t j = 0; j < e->n_exprs; j++, p++) {
      sc_id *pair = &g_array_index(pending, sc_id, p * 2);
      gboolean found = sc_egraph_find(eg, pair[0]) == sc_egraph_find(eg, out_cls[pair[1]]);
      for (guint x = 0; x < c->res->expectations->len; x++) {
        const sc_infer_expectation *ie =
            &g_array_index(c->res->expectations, sc_infer_expectation, x);
        if (ie->tensor == n->results[k] && ie->text == e->texts[j]) {
          guint decided[2] = {x, (guint)found};
          g_array_append_vals(expected, decided, 1);
        }
      }
    }
  }
  g_array_free(pending, TRUE);
  return TRUE;
}

/* With --explain: the lemmas that changed this node's e-graph (with their
 * application counts) and the impl nodes asserted into it.  This is the
 * set of facts the node's relation was derived from, not a minimal proof. */
static void sc_rel_record_explanation(sc_rel_ctx *c, const sc_node *n) {
  GString *line = g_string_new(NULL);
  g_string_append_printf(line, "%s (%s): lemmas", n->name, n->op->qualname);
  uint32_t used = 0;
  for (uint32_t i = 0; c->rules && i < sc_lemma_set_n_lemmas(c->opts->lemmas); i++) {
    sc_lemma_counters k;
    sc_lemma_rules_counters(c->rules, i, &k);
    if (k.applications == 0)
      continue;
    g_string_append_printf(line, "%s %s x%" G_GUINT64_FORMAT, used++ ? "," : "",
                           sc_lemma_set_lemma(c->opts->lemmas, i)->name, k.applications);
  }
  if (used == 0)
    g_string_append(line, " none");
  g_string_append(line, "; impl nodes");
  used = 0;
  for (guint i = 0; i < c->explored_list->len; i++) {
    sc_id w = g_array_index(c->explored_list, sc_id, i);
    g_string_append_printf(line, "%s %s", used++ ? "," : "", sc_graph_node(c->impl, w)->name);
  }
  if (used == 0)
    g_string_append(line, " none");
  g_ptr_array_add(c->res->explanations, g_string_free(line, FALSE));
}

/* Random operators (SC_OP_RANDOM: native_dropout).  No refinement can hold
 * for them literally: the captures carry no RNG state and the spec and the
 * ranks draw from different streams.  shardcheck treats them as
 * elementwise, with a random decision that follows the element (the same
 * element is kept or dropped alike wherever it is computed; the reference
 * interpreter draws it that way, docs/interpreter.md), which is what the
 * dropout lemmas (lemmas/real-megatron.lemma) say.  So a relation for a
 * random node's result is an assumption of the proof, whatever lemma gave
 * it: each such node that got one is listed with the value-range
 * assumptions (sc_infer_assumption_at), once.  A dropout with train=False
 * draws nothing and is not listed. */
void sc_rel_note_random_assumption(sc_rel_ctx *c, const sc_node *n) {
  if (!(n->op->flags & SC_OP_RANDOM))
    return;
  /* train=False draws nothing (the identity with an all-true mask) */
  const sc_value *train = sc_rel_node_arg(n, "train");
  if (train && train->kind == SC_VAL_BOOL && !train->u.b)
    return;
  GString *related = g_string_new(NULL);
  const char *first = NULL;
  for (uint32_t k = 0; k < n->n_results; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE || c->rel[t] == NULL || c->rel[t]->len == 0)
      continue;
    const char *name = sc_graph_tensor(c->spec, t)->name;
    g_string_append_printf(related, "%s%s", related->len ? ", " : "", name);
    if (first == NULL)
      first = name;
  }
  if (first != NULL) {
    g_autofree char *where = n->src ? g_path_get_basename(n->src) : NULL;
    char *text = g_strdup_printf(
        "%s (%s)%s%s: its random decision follows the element (the capture has no RNG state; "
        "the spec and every rank are assumed to decide alike for the same element)",
        n->name, n->op->qualname, where ? " at " : "", where ? where : "");
    sc_infer_assumption z = {text, first, n->name,
                             g_strdup_printf("relations of %s at %s", related->str, n->name)};
    g_array_append_val(c->res->assumptions, z);
  }
  g_string_free(related, TRUE);
}

/* A fresh e-graph for this visit, with the rules bound to it. */
gboolean sc_rel_visit_begin(sc_rel_ctx *c, GError **error) {
  c->visit++;
  c->lang = sc_lang_new(c->st, c->impl);
  c->ex = c->opts->explain ? sc_explain_begin(c->lang, c->bundle, c->opts->lemmas) : NULL;
  sc_lang_set_conflict_handler(c->lang, sc_rel_on_conflict, c);
  g_string_truncate(c->conflict, 0);
  c->rules = NULL;
  c->rewrites = NULL;
  c->n_rewrites = 0;
  g_array_set_size(c->frontier, 0);
  g_array_set_size(c->group_queue, 0); /* groups queued after the last round */
  c->explored_now = 0;
  g_array_set_size(c->explored_list, 0);
  if (c->opts->lemmas) {
    /* compiled once: the rewrites do not depend on the e-graph */
    if (c->compiled == NULL)
      c->compiled = sc_lemma_compile(c->opts->lemmas, c->lang, error);
    else
      sc_lemma_rules_rebind(c->compiled, c->lang);
    c->rules = c->compiled;
    if (!c->rules)
      return FALSE;
    c->rewrites = sc_lemma_rules_array(c->rules, &c->n_rewrites);
  }
  return TRUE;
}

/* The spec node N applied to its inputs' classes: OUT_CLS[k] the class of
 * result k (SC_ID_NONE for an unused result); the input classes into
 * c->in_cls. */
static gboolean add_spec_call(sc_rel_ctx *c, const sc_node *n, sc_id *out_cls, GError **error) {
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  gboolean any_deferred = FALSE;
  for (uint32_t i = 0; i < n->n_inputs; i++)
    any_deferred = any_deferred || c->defer_depth[n->inputs[i]] > 0;
  sc_value *args = sc_rel_args_to_children(
      c, n, any_deferred ? sc_rel_structured_class : sc_rel_spec_input_class, children, error);
  gboolean ok = args != NULL;
  if (ok) {
    g_array_set_size(c->in_cls, 0);
    g_array_append_vals(c->in_cls, children->data, children->len);
  }
  for (uint32_t k = 0; k < n->n_results && ok; k++) {
    out_cls[k] = SC_ID_NONE;
    if (n->results[k] == SC_ID_NONE)
      continue;
    GError *local = NULL;
    out_cls[k] = sc_lang_add_call(c->lang, n->op, args, (const sc_id *)children->data,
                                  children->len, k, &local);
    if (out_cls[k] == SC_ID_NONE) {
      g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                  "internal error: spec node '%s' cannot be applied to its inputs' "
                  "relations: %s", n->name, local->message);
      g_error_free(local);
      ok = FALSE;
    }
  }
  sc_rel_free_args(args, n->op->n_args);
  g_array_free(children, TRUE);
  return ok;
}

/* Is a result of N a checked output?  (The replica sums are for
 * intermediates: an output's relation is what the impl returns.) */
static gboolean has_checked_result(const sc_rel_ctx *c, const sc_node *n) {
  for (uint32_t k = 0; k < n->n_results; k++)
    for (guint i = 0; n->results[k] != SC_ID_NONE && i < c->res->checked->len; i++)
      if (g_array_index(c->res->checked, sc_id, i) == n->results[k])
        return TRUE;
  return FALSE;
}

/* Exploration (widened when it leaves an output unmapped), the replica
 * sums when it still does (intermediates only), the expectations, and the
 * check that no union was refused. */
static gboolean prove(sc_rel_ctx *c, sc_runner *runner, const sc_node *n, const sc_id *out_cls,
                      GArray *expected, const char **limit_hit, gboolean *replica_limit,
                      GError **error) {
  sc_egraph_rebuild(sc_lang_egraph(c->lang));
  if (!sc_rel_explore(c, runner, out_cls, n->n_results, limit_hit, error))
    return FALSE;
  if (!*limit_hit &&
      (sc_rel_some_output_unmapped(c, n, out_cls) || sc_rel_outputs_lost_impl(c, n, out_cls)) &&
      !sc_rel_widen(c, runner, out_cls, n->n_results, limit_hit, error))
    return FALSE;
  /* an expand of a size-1 dim: the cat of copies (expand-copies.c) */
  if (!*limit_hit)
    sc_rel_expand_copies(c, n, out_cls);
  /* still unmapped: the copies in a named cat are its slices
   * (pass-cat-slices.c) */
  if (!*limit_hit && sc_rel_some_output_unmapped(c, n, out_cls) && sc_rel_cat_part_slices(c)) {
    sc_egraph_rebuild(sc_lang_egraph(c->lang));
    sc_rel_saturate_ac(c, runner, limit_hit);
  }
  if (!*limit_hit && !c->no_replica_sums && !has_checked_result(c, n) &&
      sc_rel_some_output_unmapped(c, n, out_cls))
    *replica_limit = sc_rel_replica_sums_prove(c, limit_hit);
  if (!sc_rel_check_expectations(c, runner, n, out_cls, expected, limit_hit, error))
    return FALSE;
  if (c->opts->explain)
    sc_rel_record_explanation(c, n);
  sc_rel_conflict_text(c);
  if (c->conflict->len) {
    g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                "internal error at spec node '%s' (%s): %s — an unsound lemma or "
                "relation", n->name, n->op->qualname, c->conflict->str);
    return FALSE;
  }
  return TRUE;
}

/* The relation of each result of N (and the output relation of a checked
 * one); the results that needed one and found none into UNMAPPED. */
static void record_relations(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls,
                             GArray *unmapped) {
  for (uint32_t k = 0; k < n->n_results; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE)
      continue;
    GPtrArray *exprs = g_ptr_array_new(), *cuts = g_ptr_array_new();
    sc_rel_clean_exprs_cuts(c, out_cls[k], exprs, cuts);
    sc_rel_cut_forms_set(c, t, exprs, cuts); /* cut-forms.c */
    gboolean is_checked = FALSE;
    for (guint i = 0; i < c->res->checked->len && !is_checked; i++)
      is_checked = g_array_index(c->res->checked, sc_id, i) == t;
    if (is_checked) {
      GPtrArray *outs = g_ptr_array_new();
      sc_rel_clean_exprs(c, out_cls[k], c->impl_is_output, outs);
      c->res->output_texts[t] = sc_rel_texts_of(outs);
      if (outs->len == 0)
        g_array_append_val(unmapped, k);
      g_ptr_array_unref(outs);
    }
    if (exprs->len == 0)
      sc_rel_replica_sum_exprs(c, out_cls[k], exprs); /* pass-replica-sums.c */
    if (exprs->len == 0 && !is_checked) {
      /* a constant: the term that recomputes it (constant.c) */
      sc_texpr *ke = sc_rel_constant_expr(c, t);
      if (ke)
        g_ptr_array_add(exprs, ke);
    }
    if (exprs->len == 0) {
      if (!is_checked && sc_rel_result_is_read(c, t))
        g_array_append_val(unmapped, k);
      g_ptr_array_unref(exprs);
      continue;
    }
    c->res->tensor_texts[t] = sc_rel_texts_of(exprs);
    c->rel[t] = exprs;
  }
}

/* Unmapped results: deferred, or the failure (the first one, or a limit)
 * and the end of the walk (*STOP).  Returns whether they were deferred. */
static gboolean fail_or_defer(sc_rel_ctx *c, sc_id v, const sc_node *n, const sc_id *out_cls,
                              GArray *unmapped, const char *limit_hit, gboolean *stop) {
  gboolean deferred = sc_rel_defer_outputs(c, n, out_cls, unmapped, limit_hit);
  /* a broadcast sum deferred: pending but excused (localize.c) */
  gboolean excused = deferred && sc_rel_defer_excused(c, n, out_cls, unmapped);
  if (c->pending && c->pending_excused && !limit_hit && !(deferred && excused)) {
    /* the excused pending failure gives way to this node's */
    sc_rel_clear_failure(c->res);
    c->pending = FALSE;
  }
  if (limit_hit && sc_rel_held_active(c)) {
    /* a limit while a failure is held: the result without holding
     * (localize.c) */
    *stop = TRUE;
    return FALSE;
  }
  if (!deferred && !limit_hit && sc_rel_held_may_hold(c, n)) {
    /* a failure no pending chain explains: held while they settle
     * (localize.c) */
    sc_rel_held_begin(c, v, out_cls, unmapped);
    return FALSE;
  }
  if (sc_rel_limit_in_deferred_chain(c, n, limit_hit)) {
    /* the chain of the pending failure reached a limit (localize.c) */
    g_free(c->res->failure.limit_reason);
    c->res->failure.limit_reason = g_strdup(limit_hit);
    sc_rel_record_stop(c, v, out_cls, unmapped);
    *stop = TRUE;
    return FALSE;
  }
  if (!c->pending || limit_hit) {
    /* the first failure (a limit overrides a deferred failure: the
     * verdict is then "limit") */
    sc_rel_clear_failure(c->res);
    sc_rel_record_failure(c, v, out_cls, unmapped, limit_hit);
    c->res->failure.explored = c->explored_now;
  }
  if (deferred) {
    if (!c->pending)
      c->pending_excused = excused;
    c->pending = TRUE;
    sc_rel_held_deferred(c, v);
  } else {
    sc_rel_record_stop(c, v, out_cls, unmapped);
    *stop = TRUE;
  }
  return deferred;
}

/* What a visit leaves behind once its relations are recorded. */
static void visit_end(sc_rel_ctx *c, sc_id v, const sc_node *n, double t0) {
  double dt = (double)g_get_monotonic_time() / 1e6 - t0;
  if (dt > c->res->stats.slowest_seconds) {
    c->res->stats.slowest_seconds = dt;
    c->res->stats.slowest_node = v;
  }
  sc_rel_vr_collect_used(c, n);
  sc_rel_visit_release(c);
}

/* The visit's e-graph and explanation freed; the rules kept. */
void sc_rel_visit_release(sc_rel_ctx *c) {
  c->rules = NULL; /* c->compiled keeps them for the next visit */
  c->rewrites = NULL;
  c->n_rewrites = 0;
  sc_explain_free(c->ex);
  c->ex = NULL;
  sc_rel_exprs_memo_reset(c);
  sc_lang_free(c->lang);
  c->lang = NULL;
}

/* The proof of spec node V (a fresh e-graph, exploration, saturation),
 * into P; its e-graph stays in c->lang for sc_rel_visit_finish.  A visit
 * of `check --jobs N` runs this part on a worker thread (schedule.c). */
void sc_rel_visit_prove(sc_rel_ctx *c, sc_id v, sc_rel_proof *p) {
  const sc_node *n = sc_graph_node(c->spec, v);
  memset(p, 0, sizeof *p);
  p->v = v;
  c->visiting = n;
  p->t0 = (double)g_get_monotonic_time() / 1e6;
  p->out_cls = g_new(sc_id, n->n_results ? n->n_results : 1);
  p->expected = g_array_new(FALSE, FALSE, 2 * sizeof(guint));
  gboolean replica_limit = FALSE;
  p->ok = sc_rel_visit_begin(c, &p->error);
  if (p->ok) {
    p->runner = sc_runner_new(sc_lang_egraph(c->lang), &c->opts->limits);
    p->ok = add_spec_call(c, n, p->out_cls, &p->error) &&
            prove(c, p->runner, n, p->out_cls, p->expected, &p->limit_hit, &replica_limit,
                  &p->error);
  }
  if (p->ok && p->limit_hit && sc_rel_cut_forms_read(c, n) &&
      sc_rel_some_output_unmapped(c, n, p->out_cls)) {
    /* the cut forms of its inputs made the e-graph too large: again
     * without them (cut-forms.c) */
    sc_runner_free(p->runner);
    sc_rel_visit_release(c);
    p->limit_hit = NULL;
    c->no_cuts = TRUE;
    p->ok = sc_rel_visit_begin(c, &p->error);
    p->runner = p->ok ? sc_runner_new(sc_lang_egraph(c->lang), &c->opts->limits) : NULL;
    p->ok = p->ok && add_spec_call(c, n, p->out_cls, &p->error) &&
            prove(c, p->runner, n, p->out_cls, p->expected, &p->limit_hit, &replica_limit,
                  &p->error);
    c->no_cuts = FALSE;
  }
  if (p->ok && p->limit_hit && replica_limit) {
    /* the replica sums made the e-graph too large: again without them
     * (pass-replica-sums.c) */
    sc_runner_free(p->runner);
    sc_rel_visit_release(c);
    p->limit_hit = NULL;
    replica_limit = FALSE;
    c->no_replica_sums = TRUE;
    p->ok = sc_rel_visit_begin(c, &p->error);
    p->runner = p->ok ? sc_runner_new(sc_lang_egraph(c->lang), &c->opts->limits) : NULL;
    p->ok = p->ok && add_spec_call(c, n, p->out_cls, &p->error) &&
            prove(c, p->runner, n, p->out_cls, p->expected, &p->limit_hit, &replica_limit,
                  &p->error);
    c->no_replica_sums = FALSE;
  }
  p->seconds = (double)g_get_monotonic_time() / 1e6 - p->t0;
}

/* The relations of P's node recorded into the context and the result
 * (failure or deferral, *STOP), and the visit's e-graph freed.  Returns
 * FALSE (the error into ERROR) when the proof stopped on one. */
gboolean sc_rel_visit_finish(sc_rel_ctx *c, sc_rel_proof *p, gboolean *stop, GError **error) {
  sc_id v = p->v;
  const sc_node *n = sc_graph_node(c->spec, v);
  /* the node's time: its proof's, without the wait for its turn */
  double t0 = (double)g_get_monotonic_time() / 1e6 - p->seconds;
  gboolean ok = p->ok;
  const sc_id *out_cls = p->out_cls;
  /* the expectations decided by the proof (a retry's after the first's) */
  for (guint i = 0; p->expected && i < p->expected->len; i++) {
    const guint *decided = &g_array_index(p->expected, guint, 2 * i);
    sc_infer_expectation *ie = &g_array_index(c->res->expectations, sc_infer_expectation, decided[0]);
    ie->found = decided[1] != 0;
    ie->decided = TRUE;
  }
  GArray *unmapped = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  if (ok) {
    record_relations(c, n, out_cls, unmapped);
    uint32_t nodes_now = sc_egraph_n_nodes(sc_lang_egraph(c->lang));
    c->res->stats.enodes += nodes_now;
    if (nodes_now > c->res->stats.max_enodes)
      c->res->stats.max_enodes = nodes_now;
    if (c->ex)
      sc_explain_node(c->ex, v, out_cls, c->rules, c->res->output_texts, c->res->tensor_texts,
                      c->impl_is_output, c->opts, c->res->relexp);
    gboolean deferred = unmapped->len &&
                        fail_or_defer(c, v, n, out_cls, unmapped, p->limit_hit, stop);
    if (!*stop)
      sc_rel_settle_deferred(c, n, deferred);
    sc_rel_note_random_assumption(c, n);
  } else {
    g_propagate_error(error, p->error);
    p->error = NULL;
  }
  g_array_free(unmapped, TRUE);
  visit_end(c, v, n, t0);
  sc_rel_proof_clear(p);
  return ok;
}

/* What a proof holds, freed (its e-graph is the context's). */
void sc_rel_proof_clear(sc_rel_proof *p) {
  g_clear_pointer(&p->out_cls, g_free);
  g_clear_pointer(&p->expected, g_array_unref);
  g_clear_pointer(&p->runner, sc_runner_free);
  g_clear_error(&p->error);
}

/* One spec node: Listing 2 with Listing 3's exploration.  Returns FALSE on
 * an error; a node that fails to map sets the result's failure and
 * *stop. */
gboolean sc_rel_visit_node(sc_rel_ctx *c, sc_id v, gboolean *stop, GError **error) {
  sc_rel_proof p;
  sc_rel_visit_prove(c, v, &p);
  return sc_rel_visit_finish(c, &p, stop, error);
}
