/* walk.c — the walk (sc_infer_run): the relation seeded from the bundle,
 * the checked outputs and the spec nodes they need, each needed node
 * visited in topological order (visit.c) until one stops the walk, then
 * the output relations of outputs given by the bundle and the verdict of
 * the expectations.  The context lives here, one per run. */
#include "infer/infer-private.h"

#include <string.h>

void sc_infer_options_init(sc_infer_options *opts) {
  memset(opts, 0, sizeof *opts);
  sc_runner_limits_init(&opts->limits);
  opts->max_terms = 24;
  opts->max_term_size = 64;
  opts->max_rounds = 64;
  opts->explain_max_steps = 40;
}

/* The largest term enumerated for relations: opts->max_term_size, or more
 * with many ranks.  A relation names every rank's shard, and a fused
 * q|k|v block is three slices per rank, so its smallest clean term has
 * about 9 nodes per rank (leaf, slice and cat for each block): 72 at
 * degree 8, past the default 64.  16 nodes per rank leave room for a view
 * on each part. */
static uint32_t term_size_for(const sc_graph *impl, uint32_t base) {
  int32_t max_rank = -1;
  for (uint32_t t = 0; t < sc_graph_n_tensors(impl); t++)
    max_rank = MAX(max_rank, sc_graph_tensor(impl, t)->rank);
  uint64_t per_rank = 16 * (uint64_t)(max_rank + 1);
  return (uint32_t)MIN(MAX((uint64_t)base, per_rank), 4096);
}

/* --- the walk --- */

static void collect_checked(sc_rel_ctx *c) {
  const sc_bundle *b = c->bundle;
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  if (sc_bundle_check_outputs_given(b)) {
    for (uint32_t i = 0; i < sc_bundle_n_check_outputs(b); i++) {
      sc_id t = sc_bundle_check_output(b, i);
      if (g_hash_table_add(seen, GUINT_TO_POINTER(t + 1)))
        g_array_append_val(c->res->checked, t);
    }
  } else {
    for (uint32_t i = 0; i < sc_graph_n_outputs(c->spec); i++) {
      sc_id t = sc_graph_output(c->spec, i);
      if (g_hash_table_add(seen, GUINT_TO_POINTER(t + 1)))
        g_array_append_val(c->res->checked, t);
    }
  }
  g_hash_table_unref(seen);
}

/* Which spec nodes the checked outputs depend on (stopping at tensors with
 * a relation given: inputs and assumptions). */
static gboolean *needed_nodes(sc_rel_ctx *c) {
  uint32_t nn = sc_graph_n_nodes(c->spec);
  gboolean *need = g_new0(gboolean, nn ? nn : 1);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint i = 0; i < c->res->checked->len; i++)
    g_array_append_val(stack, g_array_index(c->res->checked, sc_id, i));
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  while (stack->len) {
    sc_id t = g_array_index(stack, sc_id, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    if (!g_hash_table_add(seen, GUINT_TO_POINTER(t + 1)))
      continue;
    if (c->rel[t])
      continue;
    sc_id p = sc_graph_tensor(c->spec, t)->producer;
    if (p == SC_ID_NONE || need[p])
      continue;
    need[p] = TRUE;
    const sc_node *n = sc_graph_node(c->spec, p);
    for (uint32_t i = 0; i < n->n_inputs; i++)
      g_array_append_val(stack, n->inputs[i]);
  }
  g_hash_table_unref(seen);
  g_array_free(stack, TRUE);
  return need;
}

static void seed_relation(sc_rel_ctx *c, const sc_relation *r) {
  if (!r)
    return;
  for (uint32_t i = 0; i < r->n_entries; i++) {
    const sc_relation_entry *e = &r->entries[i];
    GPtrArray *a = g_ptr_array_new();
    for (uint32_t j = 0; j < e->n_exprs; j++)
      g_ptr_array_add(a, e->exprs[j]);
    if (c->rel[e->tensor])
      g_ptr_array_unref(c->rel[e->tensor]);
    c->rel[e->tensor] = a;
    if (!c->res->tensor_texts[e->tensor]) {
      GPtrArray *texts = g_ptr_array_new_with_free_func(g_free);
      for (uint32_t j = 0; j < e->n_exprs; j++)
        g_ptr_array_add(texts, g_strdup(e->texts[j]));
      c->res->tensor_texts[e->tensor] = texts;
    }
  }
}

/* The context of one run over bundle B, with a new result. */
static void ctx_init(sc_rel_ctx *c, const sc_bundle *b, const sc_infer_options *opts) {
  memset(c, 0, sizeof *c);
  c->bundle = b;
  c->opts = opts;
  c->spec = sc_bundle_spec(b);
  c->impl = sc_bundle_impl(b);
  c->st = sc_bundle_symtab(b);
  uint32_t n_st = sc_graph_n_tensors(c->spec), n_it = sc_graph_n_tensors(c->impl);
  uint32_t n_in = sc_graph_n_nodes(c->impl);
  c->res = sc_rel_result_new(b);
  c->rel = g_new0(GPtrArray *, n_st ? n_st : 1);
  /* allocated up front: the slots of --jobs share the pointer (schedule.c) */
  c->rel_main = g_new0(uint32_t, n_st ? n_st : 1);
  c->owned = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  c->impl_is_output = g_new0(gboolean, n_it ? n_it : 1);
  for (uint32_t i = 0; i < sc_graph_n_outputs(c->impl); i++)
    c->impl_is_output[sc_graph_output(c->impl, i)] = TRUE;
  c->trel_stamp = g_new0(uint32_t, n_it ? n_it : 1);
  c->node_stamp = g_new0(uint32_t, n_in ? n_in : 1);
  c->node_ready = g_new0(uint32_t, n_in ? n_in : 1);
  c->node_explored = g_new0(uint32_t, n_in ? n_in : 1);
  c->frontier = g_array_new(FALSE, FALSE, sizeof(sc_id));
  c->in_cls = g_array_new(FALSE, FALSE, sizeof(sc_id));
  c->defer_depth = g_new0(uint32_t, n_st ? n_st : 1);
  c->explored_list = g_array_new(FALSE, FALSE, sizeof(sc_id));
  c->conflict = g_string_new(NULL);
  c->term_size = term_size_for(c->impl, opts->max_term_size);
  c->compiled = NULL;
  c->hooks = g_array_new(FALSE, FALSE, sizeof(sc_rel_hook));
  sc_rel_register_hooks(c);
  sc_rel_dups_init(c);
  c->sourceless = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                        (GDestroyNotify)g_array_unref);
  for (uint32_t w = 0; w < n_in; w++) {
    const sc_node *n = sc_graph_node(c->impl, w);
    if (n->n_inputs > 0)
      continue;
    gpointer key = GUINT_TO_POINTER(n->op->id + 1);
    GArray *a = g_hash_table_lookup(c->sourceless, key);
    if (!a) {
      a = g_array_new(FALSE, FALSE, sizeof(sc_id));
      g_hash_table_insert(c->sourceless, key, a);
    }
    g_array_append_val(a, w);
  }
  sc_rel_trel_init(c);
  c->held = sc_rel_held_new();
}

/* Frees what the context owns (not the result). */
static void ctx_clear(sc_rel_ctx *c) {
  uint32_t n_st = sc_graph_n_tensors(c->spec);
  g_free(c->live_uses);
  for (uint32_t t = 0; t < n_st; t++)
    if (c->rel[t])
      g_ptr_array_unref(c->rel[t]);
  g_free(c->rel);
  g_ptr_array_unref(c->owned);
  g_free(c->impl_is_output);
  g_free(c->trel_stamp);
  g_free(c->node_stamp);
  g_free(c->node_ready);
  g_free(c->node_explored);
  g_array_free(c->frontier, TRUE);
  g_array_free(c->in_cls, TRUE);
  g_free(c->defer_depth);
  g_array_free(c->explored_list, TRUE);
  g_string_free(c->conflict, TRUE);
  sc_lemma_rules_free(c->compiled);
  g_hash_table_unref(c->sourceless);
  sc_rel_trel_free(c);
  g_array_free(c->hooks, TRUE);
  sc_rel_replicas_free(c);
  sc_rel_vr_free(c);
  sc_rel_memo_free(c);
  sc_rel_dups_free(c);
  sc_rel_release_free(c);
  sc_rel_cut_forms_free(c);
  sc_rel_held_free(c->held);
}

/* The expectations of the bundle, in file order, none found yet. */
/* Position of an expectation's tensor in the walk: its producer's place in
 * the topological order, after every node for a spec input. */
static gint expectation_order(gconstpointer a, gconstpointer b, gpointer user) {
  const uint32_t *pos = user;
  uint32_t pa = pos[((const sc_infer_expectation *)a)->tensor];
  uint32_t pb = pos[((const sc_infer_expectation *)b)->tensor];
  return pa < pb ? -1 : pa > pb;
}

/* The bundle's expectations, in the order of the walk (stable: the
 * bundle's order among the expectations of one node), so that the first
 * one not found (judge_expectations, the reports) is the output that
 * diverges first, as the first unmapped node is: shardsmith 31386's
 * mutant returns out2 and out3 wrong, and out3's producer comes first. */
static void collect_expectations(sc_rel_ctx *c) {
  const sc_relation *exp = sc_bundle_expect_output_relation(c->bundle);
  if (!exp)
    return;
  for (uint32_t i = 0; i < exp->n_entries; i++)
    for (uint32_t j = 0; j < exp->entries[i].n_exprs; j++) {
      sc_infer_expectation ie = {exp->entries[i].tensor, exp->entries[i].texts[j], FALSE, FALSE};
      g_array_append_val(c->res->expectations, ie);
    }
  uint32_t n_order = 0, nt = sc_graph_n_tensors(c->spec);
  const sc_id *order = sc_graph_topo_order(c->spec, &n_order);
  g_autofree uint32_t *pos = g_new(uint32_t, nt ? nt : 1);
  for (sc_id t = 0; t < nt; t++)
    pos[t] = n_order;
  for (uint32_t i = 0; i < n_order; i++) {
    const sc_node *n = sc_graph_node(c->spec, order[i]);
    for (uint32_t k = 0; k < n->n_results; k++)
      if (n->results[k] != SC_ID_NONE)
        pos[n->results[k]] = i;
  }
  g_array_sort_with_data(c->res->expectations, expectation_order, pos);
}

/* Visit every needed spec node in topological order until one stops the
 * walk; *STOP tells whether one did.  FALSE on an error. */
static gboolean walk(sc_rel_ctx *c, gboolean *stop, GError **error) {
  const sc_infer_options *opts = c->opts;
  uint32_t n_order = 0, total = 0;
  const sc_id *order = sc_graph_topo_order(c->spec, &n_order);
  for (uint32_t i = 0; i < n_order; i++)
    total += c->need[order[i]] ? 1 : 0;
  sc_rel_release_init(c, order, n_order);
  /* with --jobs N, nodes proved ahead on other threads (schedule.c) */
  sc_rel_sched *sched = sc_rel_sched_new(c, order, n_order);
  gboolean ok = TRUE;
  uint32_t done = 0;
  for (uint32_t i = 0; i < n_order && ok && !*stop; i++) {
    sc_id v = order[i];
    if (!c->need[v])
      continue;
    const sc_node *n = sc_graph_node(c->spec, v);
    if (opts->progress)
      opts->progress(done, total, n->name, opts->progress_user);
    guint owned_before = c->owned->len;
    if (sc_rel_held_skip(c, v)) {
      /* a failure is held: only the pending chains are visited
       * (localize.c) */
      if (sched)
        sc_rel_sched_drop(sched, done);
      sc_rel_release_mark(c, v, owned_before);
      done++;
      continue;
    }
    /* nothing is proved ahead while a failure is held: a later node may
     * read a result of the failed node */
    if (sched && !sc_rel_held_active(c))
      sc_rel_sched_dispatch(sched, done);
    if (!sc_rel_memo_carry(c, v)) {
      sc_rel_memo_begin(c);
      if (sched)
        ok = sc_rel_sched_visit(sched, done, stop, error);
      else {
        ok = sc_rel_visit_node(c, v, stop, error);
        if (ok && !*stop)
          sc_rel_memo_record(c, v);
      }
    } else if (sched)
      sc_rel_sched_drop(sched, done);
    sc_rel_release_mark(c, v, owned_before);
    if (ok && !*stop)
      sc_rel_release_after(c, done);
    done++;
    c->res->stats.visited++;
    if (ok && !*stop && sc_rel_held_settled(c))
      *stop = TRUE; /* the held failure is the result (localize.c) */
    /* The overall budget (budget.h), after each node: a spent budget ends
     * the check as a limit at the node being visited (while a failure is
     * held: the result without holding, a failure). */
    const char *spent = ok ? sc_budget_check(opts->limits.budget, 0) : NULL;
    if (spent != NULL && sc_rel_held_active(c))
      *stop = TRUE;
    else if (spent != NULL) {
      sc_infer_result *res = c->res;
      if (res->verdict != SC_VERDICT_LIMIT) {
        sc_rel_clear_failure(res);
        res->verdict = SC_VERDICT_LIMIT;
        res->failure.kind = SC_FAILURE_UNMAPPED;
        res->failure.node = v;
      }
      g_free(res->failure.limit_reason);
      res->failure.limit_reason = g_strdup(spent);
      *stop = TRUE;
    }
  }
  sc_rel_sched_free(sched);
  /* a held failure whose chains never settled (a reader of them needs a
   * result of the failed node): the result without holding */
  if (ok && sc_rel_held_active(c))
    *stop = TRUE;
  if (opts->progress)
    opts->progress(done, total, NULL, opts->progress_user);
  return ok;
}

/* V's place in the walking order. */
static uint32_t topo_position(const sc_rel_ctx *c, sc_id v) {
  uint32_t n_order = 0;
  const sc_id *order = sc_graph_topo_order(c->spec, &n_order);
  for (uint32_t i = 0; i < n_order; i++)
    if (order[i] == v)
      return i;
  return n_order;
}

/* The first expectation not found (the expectations are in walking order)
 * makes the verdict FAILS (unexpected_relation) at its producer: when the
 * walk refined, and also when it failed at a later node, provided the
 * producer's visit decided the expectation.  An output the walk got wrong
 * before the node it stopped at is the first place the implementation
 * diverges (a rank that keeps its own part of an output it should gather
 * gets a true relation, not the expected one, and the values first go
 * wrong downstream only later).  A limit stays a limit. */
static void judge_expectations(sc_rel_ctx *c, gboolean stopped) {
  sc_infer_result *res = c->res;
  const sc_infer_expectation *first = sc_infer_first_unfound_expectation(res);
  if (first == NULL)
    return;
  sc_id v = sc_graph_tensor(c->spec, first->tensor)->producer;
  if (res->verdict == SC_VERDICT_FAILS) {
    if (!first->decided || v == SC_ID_NONE || res->failure.kind != SC_FAILURE_UNMAPPED ||
        res->failure.node == SC_ID_NONE ||
        topo_position(c, v) >= topo_position(c, res->failure.node))
      return;
    sc_rel_clear_failure(res);
  } else if (res->verdict != SC_VERDICT_REFINES || stopped)
    return;
  res->verdict = SC_VERDICT_FAILS;
  res->failure.kind = SC_FAILURE_UNEXPECTED_RELATION;
  res->failure.node = v;
}

sc_infer_result *sc_infer_run(const sc_bundle *b, const sc_infer_options *opts,
                              GError **error) {
  double t0 = (double)g_get_monotonic_time() / 1e6;
  sc_rel_ctx c;
  ctx_init(&c, b, opts);
  sc_infer_result *res = c.res;
  seed_relation(&c, sc_bundle_input_relation(b));
  seed_relation(&c, sc_bundle_assume_relation(b));
  sc_rel_vr_analyze(&c);
  sc_rel_replicas_init(&c);
  sc_rel_memo_init(&c);
  collect_checked(&c);
  collect_expectations(&c);

  gboolean *need = needed_nodes(&c);
  c.need = need;
  c.live_uses = g_new0(uint32_t, sc_graph_n_tensors(c.spec) ? sc_graph_n_tensors(c.spec) : 1);
  gboolean stop = FALSE;
  gboolean ok = walk(&c, &stop, error);
  /* every checked output mapped: the deferred nodes were not materialized,
   * which is no failure */
  if (ok && !stop && c.pending)
    sc_rel_clear_failure(res);
  if (ok && !stop)
    ok = sc_rel_outputs_given(&c, error); /* given.c */
  sc_rel_memo_finish(&c);
  if (ok && res->expectations->len)
    judge_expectations(&c, stop);

  g_free(need);
  ctx_clear(&c);
  res->stats.seconds = (double)g_get_monotonic_time() / 1e6 - t0;
  if (!ok) {
    sc_infer_result_free(res);
    return NULL;
  }
  return res;
}
