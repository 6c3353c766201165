/* test-search-budget.c — the overall budget stops one search in time.
 *
 * Budgets (budget.h) used to be consulted between the searches of a
 * runner iteration and every 256 matches of the apply phase, so the
 * matches of one search were all collected first: a pattern over classes
 * of many nodes has the product of their sizes as matches (here 4000
 * g-nodes in one class and f(g(?a), g(?b)): 16 million matches, 190 MB and
 * more of match buffer) however low --memory-limit is.  A search now
 * checks the budget every SC_EG_BUDGET_MATCHES matches: the run stops with
 * the budget spent on memory, and the peak resident memory grows by little
 * more than the limit's headroom.  Fails without the check (the peak grows
 * by the whole buffer). */
#include "shardcheck/budget.h"
#include "shardcheck/runner.h"

#include <string.h>
#include <sys/resource.h>

enum { OP_LEAF = 1, OP_G, OP_F };

static uint64_t peak_mib(void) {
  struct rusage ru;
  g_assert_cmpint(getrusage(RUSAGE_SELF, &ru), ==, 0);
  return (uint64_t)ru.ru_maxrss / 1024u;
}

static sc_pat_id node2(sc_pattern *p, uint32_t op, sc_pat_id x, sc_pat_id y) {
  sc_pat_id k[2] = {x, y};
  return sc_pattern_node(p, op, sc_attr_exact(0), k, 2);
}

static sc_pat_id node1(sc_pattern *p, uint32_t op, sc_pat_id x) {
  return sc_pattern_node(p, op, sc_attr_exact(0), &x, 1);
}

static void test_search_stops_on_memory(void) {
  const uint32_t n = 4000;
  sc_egraph *eg = sc_egraph_new(NULL, NULL);
  sc_id x = SC_ID_NONE;
  for (uint32_t i = 0; i < n; i++) {
    sc_id leaf = sc_egraph_add(eg, OP_LEAF, i, NULL, 0);
    sc_id g = sc_egraph_add(eg, OP_G, 0, &leaf, 1);
    if (x == SC_ID_NONE)
      x = g;
    else
      sc_egraph_union(eg, x, g, 0);
  }
  sc_egraph_rebuild(eg);
  sc_id xx[2] = {sc_egraph_find(eg, x), sc_egraph_find(eg, x)};
  (void)sc_egraph_add(eg, OP_F, 0, xx, 2);
  sc_egraph_rebuild(eg);

  sc_pattern *l = sc_pattern_new(), *r = sc_pattern_new();
  node2(l, OP_F, node1(l, OP_G, sc_pattern_var(l, "a")), node1(l, OP_G, sc_pattern_var(l, "b")));
  node2(r, OP_F, node1(r, OP_G, sc_pattern_var(r, "b")), node1(r, OP_G, sc_pattern_var(r, "a")));
  g_autoptr(GError) err = NULL;
  sc_rewrite *rw = sc_rewrite_new("swap-g", l, NULL, 0, r, &err);
  g_assert_no_error(err);
  sc_pattern_free(l);
  sc_pattern_free(r);

  uint64_t peak0 = peak_mib();
  const uint64_t headroom = 24;
  g_autoptr(sc_budget) budget = sc_budget_new(0, peak0 + headroom, 0);
  sc_runner_limits lim;
  sc_runner_limits_init(&lim);
  lim.scheduler = SC_SCHED_SIMPLE; /* no per-rule match limit: the search is whole */
  lim.node_limit = 1000000;
  lim.time_limit = 600;
  lim.budget = budget;
  sc_runner *run = sc_runner_new(eg, &lim);
  sc_stop_reason stop = sc_runner_run(run, &rw, 1);
  uint64_t grown = peak_mib() - peak0;
  g_test_message("stop %s, peak %" G_GUINT64_FORMAT " MiB before, grown %" G_GUINT64_FORMAT
                 " MiB; budget: %s",
                 sc_stop_reason_name(stop), peak0, grown,
                 sc_budget_spent(budget) ? sc_budget_spent(budget) : "not spent");
  g_assert_nonnull(sc_budget_spent(budget));
  g_assert_nonnull(strstr(sc_budget_spent(budget), "memory limit"));
  g_assert_cmpint(stop, !=, SC_STOP_SATURATED);
  /* the whole search holds 16e6 matches of 12 bytes (192 MB, more while
   * the buffer doubles): stopped, it passes the headroom by at most one
   * buffer doubling */
  g_assert_cmpuint(grown, <, 3 * headroom);
  sc_runner_free(run);
  sc_rewrite_free(rw);
  sc_egraph_free(eg);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/limits/search-budget/memory", test_search_stops_on_memory);
  return g_test_run();
}
