/* test-seminaive.c — semi-naive search of guarded, constrained and
 * bare-variable rewrites (runner.h): a rule declared pure with
 * sc_rewrite_set_pure finds each match once across iterations and across
 * runs of one runner; a required node that appears after the left side
 * still makes the old left side fire (a requires stage may bind the new
 * node); a bare-variable left side ?x is matched from its requires
 * pattern, rooted at ?x's class, with the same applications as a search
 * over every class; the search of a rule whose operators did not change is
 * skipped; a rule one of whose operators is absent is not searched until
 * the operator appears, and then finds its matches; a change as deep in a
 * match as its pattern reaches is found although the classes of the match's
 * upper nodes did not change (the changed-classes cone of machine.c). */
#include "shardcheck/runner.h"

#include <string.h>

enum { OP_VAR = 1, OP_F, OP_G, OP_H, OP_K };

typedef struct {
  uint32_t calls; /* guard calls */
} counts;

static gboolean count_guard(const sc_egraph *eg, sc_id root, const uint32_t *subst,
                            void *user) {
  (void)eg, (void)root, (void)subst;
  ((counts *)user)->calls++;
  return TRUE;
}

static sc_id leaf(sc_egraph *eg, uint32_t i) { return sc_egraph_add(eg, OP_VAR, i, NULL, 0); }

static sc_id un(sc_egraph *eg, uint32_t op, sc_id x) { return sc_egraph_add(eg, op, 0, &x, 1); }

static sc_pat_id pun(sc_pattern *p, uint32_t op, sc_pat_id x) {
  return sc_pattern_node(p, op, sc_attr_exact(0), &x, 1);
}

static void limits(sc_runner_limits *lim) {
  sc_runner_limits_init(lim);
  lim->iter_limit = 20;
  lim->node_limit = 100000;
  lim->time_limit = 30;
  lim->scheduler = SC_SCHED_SIMPLE;
}

/* f(?x) => g(?x), guarded: pure, the guard sees each f node once. */
static sc_rewrite *f_to_g(counts *c, gboolean pure) {
  g_autoptr(sc_pattern) l = sc_pattern_new();
  g_autoptr(sc_pattern) r = sc_pattern_new();
  pun(l, OP_F, sc_pattern_var(l, "x"));
  pun(r, OP_G, sc_pattern_var(r, "x"));
  g_autoptr(GError) err = NULL;
  sc_rewrite *rw = sc_rewrite_new("f-to-g", l, NULL, 0, r, &err);
  g_assert_no_error(err);
  sc_rewrite_set_guard(rw, count_guard, c);
  sc_rewrite_set_pure(rw, pure);
  return rw;
}

static void test_pure_guard(void) {
  for (int pure = 0; pure < 2; pure++) {
    counts c = {0};
    sc_rewrite *rw = f_to_g(&c, pure);
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    for (uint32_t i = 0; i < 4; i++)
      un(eg, OP_F, leaf(eg, i));
    sc_runner_limits lim;
    limits(&lim);
    g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
    g_assert_cmpint(sc_runner_run(r, &rw, 1), ==, SC_STOP_SATURATED);
    /* two iterations: one applies, one finds nothing new */
    g_assert_cmpuint(sc_runner_n_iterations(r), ==, 2);
    g_assert_cmpuint(c.calls, ==, pure ? 4 : 8);
    /* a second run of the same rules, after a new f node from outside */
    un(eg, OP_F, leaf(eg, 9));
    g_assert_cmpint(sc_runner_run(r, &rw, 1), ==, SC_STOP_SATURATED);
    g_assert_cmpuint(c.calls, ==, pure ? 5 : 8 + 10);
    sc_id g9 = sc_egraph_lookup(eg, OP_G, 0, (sc_id[]){sc_egraph_find(eg, leaf(eg, 9))}, 1);
    g_assert_cmpuint(g9, !=, SC_ID_NONE);
    g_assert_cmpuint(sc_egraph_find(eg, g9), ==,
                     sc_egraph_find(eg, un(eg, OP_F, leaf(eg, 9))));
    sc_rewrite_free(rw);
  }
}

/* f(?x) => h(?x) requires k(?x): k arrives after f was searched. */
static void test_requires_late(void) {
  g_autoptr(sc_pattern) l = sc_pattern_new();
  g_autoptr(sc_pattern) q = sc_pattern_new();
  g_autoptr(sc_pattern) r = sc_pattern_new();
  pun(l, OP_F, sc_pattern_var(l, "x"));
  pun(q, OP_K, sc_pattern_var(q, "x"));
  pun(r, OP_H, sc_pattern_var(r, "x"));
  const sc_pattern *reqs[1] = {q};
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_rewrite) rw = sc_rewrite_new("f-to-h", l, reqs, 1, r, &err);
  g_assert_no_error(err);
  counts c = {0};
  sc_rewrite_set_guard(rw, count_guard, &c);
  sc_rewrite_set_pure(rw, TRUE);
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, 0);
  sc_id fx = un(eg, OP_F, x);
  sc_runner_limits lim;
  limits(&lim);
  g_autoptr(sc_runner) run = sc_runner_new(eg, &lim);
  sc_rewrite *rules[1] = {rw};
  sc_runner_run(run, rules, 1);
  g_assert_cmpuint(c.calls, ==, 0);
  un(eg, OP_K, x); /* only the required node is new */
  sc_runner_run(run, rules, 1);
  g_assert_cmpuint(c.calls, ==, 1);
  sc_id hx = sc_egraph_lookup(eg, OP_H, 0, (sc_id[]){sc_egraph_find(eg, x)}, 1);
  g_assert_cmpuint(hx, !=, SC_ID_NONE);
  g_assert_cmpuint(sc_egraph_find(eg, hx), ==, sc_egraph_find(eg, fx));
}

/* ?x => g(g(?x)) requires f(?x): the matches of a bare left side come from
 * the requires pattern, rooted at ?x, pure or not. */
static void test_bare_variable(void) {
  for (int pure = 0; pure < 2; pure++) {
    g_autoptr(sc_pattern) l = sc_pattern_new();
    g_autoptr(sc_pattern) q = sc_pattern_new();
    g_autoptr(sc_pattern) r = sc_pattern_new();
    sc_pattern_var(l, "x");
    pun(q, OP_F, sc_pattern_var(q, "x"));
    pun(r, OP_G, pun(r, OP_G, sc_pattern_var(r, "x")));
    const sc_pattern *reqs[1] = {q};
    g_autoptr(GError) err = NULL;
    g_autoptr(sc_rewrite) rw = sc_rewrite_new("x-gg", l, reqs, 1, r, &err);
    g_assert_no_error(err);
    sc_rewrite_set_pure(rw, pure);
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    sc_id a = leaf(eg, 0), b = leaf(eg, 1), c = leaf(eg, 2);
    un(eg, OP_F, a);
    un(eg, OP_F, b);
    sc_runner_limits lim;
    limits(&lim);
    g_autoptr(sc_runner) run = sc_runner_new(eg, &lim);
    sc_rewrite *rules[1] = {rw};
    g_assert_cmpint(sc_runner_run(run, rules, 1), ==, SC_STOP_SATURATED);
    /* a = g(g(a)), b = g(g(b)); c has no f: untouched */
    sc_id ga = sc_egraph_lookup(eg, OP_G, 0, (sc_id[]){sc_egraph_find(eg, a)}, 1);
    g_assert_cmpuint(ga, !=, SC_ID_NONE);
    sc_id gga = sc_egraph_lookup(eg, OP_G, 0, (sc_id[]){sc_egraph_find(eg, ga)}, 1);
    g_assert_cmpuint(gga, !=, SC_ID_NONE);
    g_assert_cmpuint(sc_egraph_find(eg, gga), ==, sc_egraph_find(eg, a));
    g_assert_cmpuint(sc_egraph_find(eg, gga), !=, sc_egraph_find(eg, b));
    g_assert_cmpuint(sc_egraph_lookup(eg, OP_G, 0, (sc_id[]){sc_egraph_find(eg, c)}, 1), ==,
                     SC_ID_NONE);
    /* 3 leaves, 2 f, g(a), g(b): g(g(a)) merged into a, likewise b */
    g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 9);
  }
}

/* A pure rule whose operators did not change is not searched: its guard
 * is not called when only other operators change. */
static void test_skip_unchanged_ops(void) {
  counts c = {0};
  sc_rewrite *rw = f_to_g(&c, TRUE);
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  un(eg, OP_F, leaf(eg, 0));
  sc_runner_limits lim;
  limits(&lim);
  g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
  sc_runner_run(r, &rw, 1);
  g_assert_cmpuint(c.calls, ==, 1);
  uint32_t it0 = sc_runner_n_iterations(r);
  un(eg, OP_K, leaf(eg, 5)); /* neither f nor a class of an f's child */
  sc_runner_run(r, &rw, 1);
  g_assert_cmpuint(c.calls, ==, 1);
  g_assert_cmpuint(sc_runner_iteration(r, it0)->matches, ==, 0);
  sc_rewrite_free(rw);
}

/* The operator-indexed schedule: f(?x) => h(?x) requires k(?x) is not
 * searched while no k node exists; g(?x) => k(?x) adds one in the first
 * iteration, and in the second the rule is searched and fires on the old
 * f node through the new k node, pure (semi-naive) or not. */
static void test_absent_op(void) {
  for (int pure = 0; pure < 2; pure++) {
    g_autoptr(sc_pattern) l = sc_pattern_new();
    g_autoptr(sc_pattern) q = sc_pattern_new();
    g_autoptr(sc_pattern) r = sc_pattern_new();
    pun(l, OP_F, sc_pattern_var(l, "x"));
    pun(q, OP_K, sc_pattern_var(q, "x"));
    pun(r, OP_H, sc_pattern_var(r, "x"));
    const sc_pattern *reqs[1] = {q};
    g_autoptr(GError) err = NULL;
    g_autoptr(sc_rewrite) fh = sc_rewrite_new("f-to-h", l, reqs, 1, r, &err);
    g_assert_no_error(err);
    counts c = {0};
    sc_rewrite_set_guard(fh, count_guard, &c);
    sc_rewrite_set_pure(fh, pure);
    g_autoptr(sc_pattern) gl = sc_pattern_new();
    g_autoptr(sc_pattern) gr = sc_pattern_new();
    pun(gl, OP_G, sc_pattern_var(gl, "x"));
    pun(gr, OP_K, sc_pattern_var(gr, "x"));
    g_autoptr(sc_rewrite) gk = sc_rewrite_new("g-to-k", gl, NULL, 0, gr, &err);
    g_assert_no_error(err);
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    sc_id x = leaf(eg, 0);
    sc_id fx = un(eg, OP_F, x);
    un(eg, OP_G, leaf(eg, 1));
    sc_runner_limits lim;
    limits(&lim);
    g_autoptr(sc_runner) run = sc_runner_new(eg, &lim);
    sc_rewrite *rules[2] = {fh, gk};
    g_assert_cmpint(sc_runner_run(run, rules, 2), ==, SC_STOP_SATURATED);
    /* no k yet, so no h: and k(1) does not make f(0) match */
    g_assert_cmpuint(sc_runner_iteration(run, 0)->skipped, ==, 1);
    g_assert_cmpuint(sc_runner_iteration(run, 1)->skipped, ==, 0);
    g_assert_cmpuint(c.calls, ==, 0);
    g_assert_cmpuint(sc_egraph_lookup(eg, OP_H, 0, (sc_id[]){sc_egraph_find(eg, x)}, 1), ==,
                     SC_ID_NONE);
    /* g(0) from outside: g-to-k adds k(0), then f-to-h fires on f(0) */
    un(eg, OP_G, x);
    uint32_t it0 = sc_runner_n_iterations(run);
    g_assert_cmpint(sc_runner_run(run, rules, 2), ==, SC_STOP_SATURATED);
    g_assert_cmpuint(sc_runner_iteration(run, it0)->skipped, ==, 0);
    g_assert_cmpuint(c.calls, >=, 1);
    sc_id hx = sc_egraph_lookup(eg, OP_H, 0, (sc_id[]){sc_egraph_find(eg, x)}, 1);
    g_assert_cmpuint(hx, !=, SC_ID_NONE);
    g_assert_cmpuint(sc_egraph_find(eg, hx), ==, sc_egraph_find(eg, fx));
  }
}

/* Within one run: the operator a rule lacks is added by another rule's
 * first iteration, and the rule fires in the second. */
static void test_absent_op_same_run(void) {
  for (int pure = 0; pure < 2; pure++) {
    g_autoptr(sc_pattern) l = sc_pattern_new();
    g_autoptr(sc_pattern) q = sc_pattern_new();
    g_autoptr(sc_pattern) r = sc_pattern_new();
    pun(l, OP_F, sc_pattern_var(l, "x"));
    pun(q, OP_K, sc_pattern_var(q, "x"));
    pun(r, OP_H, sc_pattern_var(r, "x"));
    const sc_pattern *reqs[1] = {q};
    g_autoptr(GError) err = NULL;
    g_autoptr(sc_rewrite) fh = sc_rewrite_new("f-to-h", l, reqs, 1, r, &err);
    g_assert_no_error(err);
    sc_rewrite_set_pure(fh, pure);
    g_autoptr(sc_pattern) gl = sc_pattern_new();
    g_autoptr(sc_pattern) gr = sc_pattern_new();
    pun(gl, OP_G, sc_pattern_var(gl, "x"));
    pun(gr, OP_K, sc_pattern_var(gr, "x"));
    g_autoptr(sc_rewrite) gk = sc_rewrite_new("g-to-k", gl, NULL, 0, gr, &err);
    g_assert_no_error(err);
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    sc_id x = leaf(eg, 0);
    sc_id fx = un(eg, OP_F, x);
    un(eg, OP_G, x);
    sc_runner_limits lim;
    limits(&lim);
    g_autoptr(sc_runner) run = sc_runner_new(eg, &lim);
    sc_rewrite *rules[2] = {fh, gk};
    g_assert_cmpint(sc_runner_run(run, rules, 2), ==, SC_STOP_SATURATED);
    g_assert_cmpuint(sc_runner_iteration(run, 0)->skipped, ==, 1);
    g_assert_cmpuint(sc_runner_iteration(run, 1)->skipped, ==, 0);
    g_assert_cmpuint(sc_runner_iteration(run, 1)->applied, ==, 1);
    sc_id hx = sc_egraph_lookup(eg, OP_H, 0, (sc_id[]){sc_egraph_find(eg, x)}, 1);
    g_assert_cmpuint(hx, !=, SC_ID_NONE);
    g_assert_cmpuint(sc_egraph_find(eg, hx), ==, sc_egraph_find(eg, fx));
  }
}

/* f(g(...g(h(?x)))) => k(?x), pure, with DEPTH levels (f, DEPTH - 2 g,
 * h).  The e-graph has f(g(...g(w))) and twenty like it over other
 * leaves, none with an h; after a saturated run, h(a) is added and merged
 * into w's class (w stays the class id: it has a parent, so the classes
 * above it are not touched).  The only changed class is w's, DEPTH - 1
 * child edges below f's class: the match binds the new h node at the
 * pattern's deepest level, and the next run of the same runner
 * (semi-naive) must find it; the other f classes are farther from any
 * change than the pattern reaches.  A cone one level short skips f's
 * class and this test fails. */
static void test_deep_change(void) {
  for (uint32_t depth = 2; depth <= 5; depth++) {
    g_autoptr(sc_pattern) l = sc_pattern_new();
    g_autoptr(sc_pattern) r = sc_pattern_new();
    sc_pat_id x = pun(l, OP_H, sc_pattern_var(l, "x"));
    for (uint32_t i = 2; i < depth; i++)
      x = pun(l, OP_G, x);
    pun(l, OP_F, x);
    pun(r, OP_K, sc_pattern_var(r, "x"));
    g_autoptr(GError) err = NULL;
    g_autoptr(sc_rewrite) rw = sc_rewrite_new("deep", l, NULL, 0, r, &err);
    g_assert_no_error(err);
    counts c = {0};
    sc_rewrite_set_guard(rw, count_guard, &c);
    sc_rewrite_set_pure(rw, TRUE);
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    /* every operator of the rule is there from the start */
    un(eg, OP_H, leaf(eg, 100));
    un(eg, OP_K, leaf(eg, 101));
    sc_id w = leaf(eg, 2);
    sc_id top = w;
    for (uint32_t i = 2; i < depth; i++)
      top = un(eg, OP_G, top);
    sc_id f = un(eg, OP_F, top);
    for (uint32_t i = 0; i < 20; i++) {
      sc_id t = leaf(eg, 10 + i);
      for (uint32_t j = 2; j < depth; j++)
        t = un(eg, OP_G, t);
      un(eg, OP_F, t);
    }
    sc_runner_limits lim;
    limits(&lim);
    g_autoptr(sc_runner) run = sc_runner_new(eg, &lim);
    sc_rewrite *rules[1] = {rw};
    g_assert_cmpint(sc_runner_run(run, rules, 1), ==, SC_STOP_SATURATED);
    g_assert_cmpuint(c.calls, ==, 0);
    sc_id a = leaf(eg, 0);
    sc_egraph_union(eg, w, un(eg, OP_H, a), SC_JUST_ASSERTED);
    sc_egraph_rebuild(eg);
    g_assert_cmpuint(sc_egraph_find(eg, w), ==, w);
    g_assert_cmpint(sc_runner_run(run, rules, 1), ==, SC_STOP_SATURATED);
    g_assert_cmpuint(c.calls, ==, 1);
    sc_id k = sc_egraph_lookup(eg, OP_K, 0, (sc_id[]){sc_egraph_find(eg, a)}, 1);
    g_assert_cmpuint(k, !=, SC_ID_NONE);
    g_assert_cmpuint(sc_egraph_find(eg, k), ==, sc_egraph_find(eg, f));
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/seminaive/pure-guard", test_pure_guard);
  g_test_add_func("/seminaive/requires-late", test_requires_late);
  g_test_add_func("/seminaive/bare-variable", test_bare_variable);
  g_test_add_func("/seminaive/skip-unchanged-ops", test_skip_unchanged_ops);
  g_test_add_func("/seminaive/absent-op", test_absent_op);
  g_test_add_func("/seminaive/absent-op-same-run", test_absent_op_same_run);
  g_test_add_func("/seminaive/deep-change", test_deep_change);
  return g_test_run();
}
