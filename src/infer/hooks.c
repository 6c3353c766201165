/* hooks.c — saturation, and the passes the runner calls after it.
 *
 * As egg's Runner::with_hook: the driver registers a list of hook
 * functions (sc_rel_add_hook), and after each saturation every hook runs
 * in order on the clean e-graph; when one of them changed it, the e-graph
 * is rebuilt and saturated again, at most MAX_HOOK_ROUNDS times.  A hook
 * adds only equalities that hold (each pass says why); what it merges the
 * lemmas then see.  The passes: pass-sums.c (sums as multisets),
 * pass-sizes.c (data-dependent sizes), pass-constants.c (constant parts). */
#include "infer/infer-private.h"

#include "shardcheck/budget.h"

/* How many times the hooks may make the runner saturate again. */
#define MAX_HOOK_ROUNDS 4

void sc_rel_add_hook(sc_rel_ctx *c, const char *name, sc_rel_hook_fn fn) {
  sc_rel_hook h = {name, fn};
  g_array_append_val(c->hooks, h);
}

void sc_rel_register_hooks(sc_rel_ctx *c) {
  sc_rel_add_hook(c, "sums as multisets", sc_rel_ac_merge_sums);
  sc_rel_add_hook(c, "data-dependent sizes", sc_rel_dd_merge_sizes);
  sc_rel_add_hook(c, "constant parts", sc_rel_cat_constant_parts);
}

static const char *runner_limit_word(sc_stop_reason r) {
  return (r == SC_STOP_NODE_LIMIT || r == SC_STOP_TIME_LIMIT || r == SC_STOP_ITERATION_LIMIT)
             ? sc_stop_reason_name(r)
             : NULL;
}

/* Saturate; remember a limit that stopped it. */
static void saturate(sc_rel_ctx *c, sc_runner *runner, const char **limit_hit) {
  sc_stop_reason r = sc_runner_run(runner, c->rewrites, c->n_rewrites);
  for (uint32_t i = 0; i < sc_runner_n_iterations(runner); i++)
    c->res->stats.applied += sc_runner_iteration(runner, i)->applied;
  const char *w = runner_limit_word(r);
  if (w && r != SC_STOP_ITERATION_LIMIT)
    *limit_hit = w;
}

/* Every hook, in order (all of them, whatever the first ones did); TRUE
 * when one changed the e-graph. */
static gboolean run_hooks(sc_rel_ctx *c) {
  gboolean changed = FALSE;
  for (guint i = 0; i < c->hooks->len; i++)
    changed |= g_array_index(c->hooks, sc_rel_hook, i).fn(c);
  return changed;
}

/* The overall budget (budget.h) is spent: the hooks do not run, since
 * the runner they would hand a changed e-graph to stops at once, and a
 * hook's pass over a large e-graph is work no limit of the runner's
 * bounds. */
static gboolean budget_spent(const sc_rel_ctx *c) {
  return c->opts != NULL && sc_budget_check(c->opts->limits.budget, 0) != NULL;
}

void sc_rel_saturate_ac(sc_rel_ctx *c, sc_runner *runner, const char **limit_hit) {
  saturate(c, runner, limit_hit);
  for (int i = 0; i < MAX_HOOK_ROUNDS && !budget_spent(c) && run_hooks(c); i++) {
    sc_egraph_rebuild(sc_lang_egraph(c->lang));
    saturate(c, runner, limit_hit);
  }
}
