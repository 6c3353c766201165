/* test-runner.c — rewrites and the runner: the standard saturation
 * workload at small k with its exact node counts (both schedulers), the
 * iteration / node / time limits and their environment overrides, backoff
 * bans, appliers and computed attributes, a constrained rule that would
 * explode without its requires pattern, and an unsound rule caught by the
 * analysis as a conflict carrying the rule's id. */
#include "shardcheck/runner.h"

#include <sys/resource.h>

#include <string.h>

enum { OP_ADD = 1, OP_MUL, OP_VAR, OP_F, OP_G, OP_VIEW, OP_A, OP_B };

static void assert_check(sc_egraph *eg) {
  g_autoptr(GError) err = NULL;
  gboolean ok = sc_egraph_check(eg, &err);
  g_assert_no_error(err);
  g_assert_true(ok);
}

static sc_pat_id pbin(sc_pattern *p, uint32_t op, sc_pat_id x, sc_pat_id y) {
  sc_pat_id k[2] = {x, y};
  return sc_pattern_node(p, op, sc_attr_exact(0), k, 2);
}

static sc_rewrite *rule(const char *name, sc_pattern *lhs, sc_pattern *rhs) {
  g_autoptr(GError) err = NULL;
  sc_rewrite *rw = sc_rewrite_new(name, lhs, NULL, 0, rhs, &err);
  g_assert_no_error(err);
  sc_pattern_free(lhs);
  sc_pattern_free(rhs);
  return rw;
}

static sc_rewrite *comm(uint32_t op, const char *name) {
  sc_pattern *l = sc_pattern_new(), *r = sc_pattern_new();
  pbin(l, op, sc_pattern_var(l, "a"), sc_pattern_var(l, "b"));
  pbin(r, op, sc_pattern_var(r, "b"), sc_pattern_var(r, "a"));
  return rule(name, l, r);
}

static sc_rewrite *assoc(uint32_t op, const char *name) {
  sc_pattern *l = sc_pattern_new(), *r = sc_pattern_new();
  pbin(l, op, sc_pattern_var(l, "a"),
       pbin(l, op, sc_pattern_var(l, "b"), sc_pattern_var(l, "c")));
  pbin(r, op, pbin(r, op, sc_pattern_var(r, "a"), sc_pattern_var(r, "b")),
       sc_pattern_var(r, "c"));
  return rule(name, l, r);
}

static sc_rewrite *distrib(void) {
  sc_pattern *l = sc_pattern_new(), *r = sc_pattern_new();
  pbin(l, OP_MUL, sc_pattern_var(l, "a"),
       pbin(l, OP_ADD, sc_pattern_var(l, "b"), sc_pattern_var(l, "c")));
  sc_pat_id a = sc_pattern_var(r, "a");
  pbin(r, OP_ADD, pbin(r, OP_MUL, a, sc_pattern_var(r, "b")),
       pbin(r, OP_MUL, a, sc_pattern_var(r, "c")));
  return rule("distrib", l, r);
}

static void workload_rules(sc_rewrite **rules) {
  rules[0] = comm(OP_ADD, "comm-add");
  rules[1] = comm(OP_MUL, "comm-mul");
  rules[2] = assoc(OP_ADD, "assoc-add");
  rules[3] = assoc(OP_MUL, "assoc-mul");
  rules[4] = distrib();
}

static sc_id workload_term(sc_egraph *eg, uint32_t k) {
  sc_id sum = SC_ID_NONE;
  for (uint32_t i = 0; i < k; i++) {
    sc_id x[2] = {sc_egraph_add(eg, OP_VAR, 2 * i, NULL, 0),
                  sc_egraph_add(eg, OP_VAR, 2 * i + 1, NULL, 0)};
    sc_id prod = sc_egraph_add(eg, OP_MUL, 0, x, 2);
    if (sum == SC_ID_NONE) {
      sum = prod;
    } else {
      sc_id s[2] = {sum, prod};
      sum = sc_egraph_add(eg, OP_ADD, 0, s, 2);
    }
  }
  return sum;
}

static uint64_t expected_nodes(uint32_t k) {
  uint64_t p3 = 1, p2 = 1;
  for (uint32_t i = 0; i < k; i++)
    p3 *= 3;
  for (uint32_t i = 0; i < k + 1; i++)
    p2 *= 2;
  return p3 - p2 + 1 + 4 * k;
}

static void free_rules(sc_rewrite **rules, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    sc_rewrite_free(rules[i]);
}

static void base_limits(sc_runner_limits *lim, sc_scheduler_kind s) {
  sc_runner_limits_init(lim);
  lim->iter_limit = 10;
  lim->node_limit = 200000;
  lim->time_limit = 30;
  lim->scheduler = s;
}

static void run_workload(uint32_t k, sc_scheduler_kind sched,
                         uint32_t match_limit, uint32_t *banned) {
  sc_rewrite *rules[5];
  workload_rules(rules);
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  workload_term(eg, k);
  sc_runner_limits lim;
  base_limits(&lim, sched);
  lim.iter_limit = 30;
  if (match_limit)
    lim.match_limit = match_limit;
  g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
  sc_stop_reason why = sc_runner_run(r, rules, 5);
  g_assert_cmpstr(sc_stop_reason_name(why), ==, "saturated");
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, expected_nodes(k));
  const sc_iteration *last =
      sc_runner_iteration(r, sc_runner_n_iterations(r) - 1);
  g_assert_cmpuint(last->applied, ==, 0);
  g_assert_cmpuint(last->nodes, ==, expected_nodes(k));
  assert_check(eg);
  if (banned) {
    *banned = 0;
    for (uint32_t i = 0; i < 5; i++)
      *banned += sc_runner_times_banned(r, i);
  }
  free_rules(rules, 5);
}

static void test_workload_simple(void) {
  for (uint32_t k = 2; k <= 6; k++)
    run_workload(k, SC_SCHED_SIMPLE, 0, NULL);
}

static void test_workload_backoff(void) {
  for (uint32_t k = 2; k <= 5; k++)
    run_workload(k, SC_SCHED_BACKOFF, 0, NULL);
  /* a tiny match limit bans rules; bans are fast-forwarded, never
   * mistaken for saturation, and the count is still exact */
  uint32_t banned = 0;
  run_workload(5, SC_SCHED_BACKOFF, 8, &banned);
  g_assert_cmpuint(banned, >=, 1);
}

static void test_workload_k2_exact(void) {
  /* k = 2: x0*x1 + x2*x3.  Iteration 1 adds the commuted sum and both
   * commuted products (3 unions); iteration 2 changes nothing. */
  sc_rewrite *rules[5];
  workload_rules(rules);
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id root = workload_term(eg, 2);
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 7);
  sc_runner_limits lim;
  base_limits(&lim, SC_SCHED_SIMPLE);
  g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
  g_assert_cmpint(sc_runner_run(r, rules, 5), ==, SC_STOP_SATURATED);
  g_assert_cmpuint(sc_runner_n_iterations(r), ==, 2);
  g_assert_cmpuint(sc_runner_iteration(r, 0)->applied, ==, 3);
  g_assert_cmpuint(sc_runner_iteration(r, 0)->nodes, ==, 10);
  g_assert_cmpuint(sc_runner_iteration(r, 1)->applied, ==, 0);
  g_assert_cmpuint(sc_egraph_n_classes(eg), ==, 7);
  uint32_t n;
  sc_egraph_class_nodes(eg, sc_egraph_find(eg, root), &n);
  g_assert_cmpuint(n, ==, 2);
  free_rules(rules, 5);
}

static void test_limits(void) {
  sc_rewrite *rules[5];
  workload_rules(rules);
  sc_runner_limits lim;
  {
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    workload_term(eg, 8);
    base_limits(&lim, SC_SCHED_SIMPLE);
    lim.iter_limit = 3;
    g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
    g_assert_cmpint(sc_runner_run(r, rules, 5), ==, SC_STOP_ITERATION_LIMIT);
    g_assert_cmpuint(sc_runner_n_iterations(r), ==, 3);
    g_assert_true(sc_egraph_is_clean(eg));
    assert_check(eg);
  }
  {
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    workload_term(eg, 8);
    base_limits(&lim, SC_SCHED_SIMPLE);
    lim.node_limit = 500;
    g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
    g_assert_cmpint(sc_runner_run(r, rules, 5), ==, SC_STOP_NODE_LIMIT);
    g_assert_cmpstr(sc_stop_reason_name(sc_runner_stop_reason(r)), ==,
                    "node limit");
    g_assert_cmpuint(sc_egraph_n_nodes(eg), >, 500);
    g_assert_true(sc_egraph_is_clean(eg));
    assert_check(eg);
  }
  {
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    workload_term(eg, 8);
    base_limits(&lim, SC_SCHED_SIMPLE);
    lim.time_limit = 1e-9;
    g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
    g_assert_cmpint(sc_runner_run(r, rules, 5), ==, SC_STOP_TIME_LIMIT);
    g_assert_cmpuint(sc_runner_n_iterations(r), <=, 1); /* same microsecond */
  }
  free_rules(rules, 5);
}

/* Peak resident set of this process in MiB (what the budget measures). */
static uint64_t test_peak_mib(void) {
  struct rusage ru;
  g_assert_cmpint(getrusage(RUSAGE_SELF, &ru), ==, 0);
  return (uint64_t)ru.ru_maxrss / 1024u;
}

/* Issue 19: the memory budget (--memory-limit) is consulted while one
 * rule's matches are applied, not only between rules or iterations: one
 * rule that adds eight nodes per match over 100,000 matches (~800,000
 * nodes, tens of MiB) stops within its first iteration, part way through
 * its matches, when the peak passes the limit set 8 MiB above the peak at
 * the start; the e-graph is left clean and consistent. */
static void test_budget_mid_iteration(void) {
  enum { K = 100000, DEPTH = 8 };
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  for (uint32_t i = 0; i < K; i++) {
    sc_id v = sc_egraph_add(eg, OP_VAR, i, NULL, 0);
    sc_egraph_add(eg, OP_F, 0, &v, 1);
  }
  sc_pattern *l = sc_pattern_new(), *rp = sc_pattern_new();
  sc_pat_id x = sc_pattern_var(l, "x");
  sc_pattern_node(l, OP_F, sc_attr_exact(0), &x, 1);
  sc_pat_id t = sc_pattern_var(rp, "x");
  for (uint32_t d = 0; d < DEPTH; d++)
    t = sc_pattern_node(rp, OP_G, sc_attr_exact(d), &t, 1);
  sc_rewrite *rules[1] = {rule("deep", l, rp)};
  sc_egraph_rebuild(eg);
  uint32_t nodes0 = sc_egraph_n_nodes(eg);

  g_autoptr(sc_budget) budget = sc_budget_new(0, test_peak_mib() + 8, 0);
  sc_runner_limits lim;
  base_limits(&lim, SC_SCHED_SIMPLE);
  lim.node_limit = 100 * K;
  lim.budget = budget;
  g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
  g_assert_cmpint(sc_runner_run(r, rules, 1), ==, SC_STOP_TIME_LIMIT);
  g_assert_nonnull(strstr(sc_budget_spent(budget), "memory limit (--memory-limit"));
  g_assert_cmpuint(sc_runner_n_iterations(r), ==, 1);
  /* part way through the one rule's matches, not after all of them */
  g_assert_cmpuint(sc_egraph_n_nodes(eg), >, nodes0);
  g_assert_cmpuint(sc_egraph_n_nodes(eg), <, nodes0 + (uint32_t)K * DEPTH);
  g_assert_true(sc_egraph_is_clean(eg));
  assert_check(eg);
  free_rules(rules, 1);
}

static void test_limits_env(void) {
  sc_runner_limits lim;
  g_setenv("SC_NODE_LIMIT", "1234", TRUE);
  g_setenv("SC_ITER_LIMIT", "7", TRUE);
  g_setenv("SC_TIME_LIMIT", "2.5", TRUE);
  sc_runner_limits_init(&lim);
  g_assert_cmpuint(lim.node_limit, ==, 1234);
  g_assert_cmpuint(lim.iter_limit, ==, 7);
  g_assert_cmpfloat(lim.time_limit, ==, 2.5);
  g_setenv("SC_NODE_LIMIT", "12abc", TRUE);
  g_setenv("SC_ITER_LIMIT", "-3", TRUE);
  g_setenv("SC_TIME_LIMIT", "soon", TRUE);
  sc_runner_limits_init(&lim);
  g_assert_cmpuint(lim.node_limit, ==, 10000);
  g_assert_cmpuint(lim.iter_limit, ==, 30);
  g_assert_cmpfloat(lim.time_limit, ==, 5.0);
  g_unsetenv("SC_NODE_LIMIT");
  g_unsetenv("SC_ITER_LIMIT");
  g_unsetenv("SC_TIME_LIMIT");
  g_assert_cmpstr(sc_stop_reason_name(SC_STOP_SATURATED), ==, "saturated");
  g_assert_cmpstr(sc_stop_reason_name(SC_STOP_TIME_LIMIT), ==, "time limit");
  g_assert_cmpstr(sc_stop_reason_name(SC_STOP_ITERATION_LIMIT), ==,
                  "iteration limit");
}

/* f(?x; ?d) => f(?x; d + 1) while d < 3: a computed attribute. */
static uint32_t next_d(const sc_egraph *eg, const uint32_t *subst,
                       void *user) {
  const sc_query *q = *(const sc_query **)user;
  uint32_t d = subst[sc_query_var_index(q, "d")];
  return d < 3 ? d + 1 : SC_ID_NONE;
}

/* g(?x) => the applier adds var 99 and returns it */
static sc_id apply_var99(sc_egraph *eg, sc_id root, const uint32_t *subst,
                         uint32_t just, void *user) {
  (*(int *)user)++;
  return sc_egraph_add(eg, OP_VAR, 99, NULL, 0);
}

static void test_applier_and_computed(void) {
  g_autoptr(GError) err = NULL;
  const sc_query *q_ref = NULL;
  g_autoptr(sc_pattern) l = sc_pattern_new();
  sc_pattern_node(l, OP_F, sc_attr_var("d"),
                  (sc_pat_id[]){sc_pattern_var(l, "x")}, 1);
  g_autoptr(sc_pattern) rp = sc_pattern_new();
  sc_pattern_node(rp, OP_F, sc_attr_compute(next_d, &q_ref),
                  (sc_pat_id[]){sc_pattern_var(rp, "x")}, 1);
  g_autoptr(sc_rewrite) step = sc_rewrite_new("step", l, NULL, 0, rp, &err);
  g_assert_no_error(err);
  q_ref = sc_rewrite_query(step);
  int calls = 0;
  g_autoptr(sc_pattern) gl = sc_pattern_new();
  sc_pattern_node(gl, OP_G, sc_attr_exact(0),
                  (sc_pat_id[]){sc_pattern_var(gl, "x")}, 1);
  g_autoptr(sc_rewrite) app =
      sc_rewrite_new_applier("g-is-99", gl, NULL, 0, apply_var99, &calls, &err);
  g_assert_no_error(err);

  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = sc_egraph_add(eg, OP_A, 0, NULL, 0);
  sc_id f0 = sc_egraph_add(eg, OP_F, 0, &a, 1);
  sc_id ga = sc_egraph_add(eg, OP_G, 0, &a, 1);
  sc_rewrite *rules[2] = {step, app};
  sc_runner_limits lim;
  base_limits(&lim, SC_SCHED_SIMPLE);
  g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
  g_assert_cmpint(sc_runner_run(r, rules, 2), ==, SC_STOP_SATURATED);
  /* a, f(a;0..3), g(a), var 99 */
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 7);
  g_assert_cmpuint(sc_egraph_n_classes(eg), ==, 3);
  sc_id f3 = sc_egraph_lookup(eg, OP_F, 3, &a, 1);
  g_assert_cmpuint(sc_egraph_find(eg, f3), ==, sc_egraph_find(eg, f0));
  g_assert_cmpuint(sc_egraph_lookup(eg, OP_F, 4, &a, 1), ==, SC_ID_NONE);
  sc_id v99 = sc_egraph_lookup(eg, OP_VAR, 99, NULL, 0);
  g_assert_cmpuint(sc_egraph_find(eg, v99), ==, sc_egraph_find(eg, ga));
  g_assert_cmpint(calls, >=, 1);
  assert_check(eg);

  /* rhs variable not bound on the left */
  g_autoptr(sc_pattern) bad = sc_pattern_new();
  sc_pattern_node(bad, OP_G, sc_attr_exact(0),
                  (sc_pat_id[]){sc_pattern_var(bad, "z")}, 1);
  g_assert_null(sc_rewrite_new("bad", gl, NULL, 0, bad, &err));
  g_assert_error(err, SC_PATTERN_ERROR, SC_PATTERN_ERROR_UNBOUND_VAR);
  g_assert_nonnull(strstr(err->message, "rewrite bad"));
  g_assert_nonnull(strstr(err->message, "?z"));
}

/* x => view(view(x)) requires view(x) (GraphGuard 4.3.2) */
static void test_constrained(void) {
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_pattern) l = sc_pattern_new();
  sc_pattern_var(l, "x");
  g_autoptr(sc_pattern) req = sc_pattern_new();
  sc_pattern_node(req, OP_VIEW, sc_attr_exact(0),
                  (sc_pat_id[]){sc_pattern_var(req, "x")}, 1);
  g_autoptr(sc_pattern) rp = sc_pattern_new();
  sc_pat_id v1 = sc_pattern_node(rp, OP_VIEW, sc_attr_exact(0),
                                 (sc_pat_id[]){sc_pattern_var(rp, "x")}, 1);
  sc_pattern_node(rp, OP_VIEW, sc_attr_exact(0), (sc_pat_id[]){v1}, 1);
  const sc_pattern *reqs[1] = {req};
  g_autoptr(sc_rewrite) rw = sc_rewrite_new("view-view", l, reqs, 1, rp, &err);
  g_assert_no_error(err);
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = sc_egraph_add(eg, OP_A, 0, NULL, 0);
  sc_id b = sc_egraph_add(eg, OP_B, 0, NULL, 0);
  sc_id vb = sc_egraph_add(eg, OP_VIEW, 0, &b, 1);
  sc_runner_limits lim;
  base_limits(&lim, SC_SCHED_SIMPLE);
  g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
  sc_rewrite *rules[1] = {rw};
  g_assert_cmpint(sc_runner_run(r, rules, 1), ==, SC_STOP_SATURATED);
  /* a, b, view(b), view(view(b)) == b; nothing for a */
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 4);
  g_assert_cmpuint(sc_egraph_n_classes(eg), ==, 3);
  uint32_t n;
  sc_egraph_class_nodes(eg, sc_egraph_find(eg, a), &n);
  g_assert_cmpuint(n, ==, 1);
  sc_egraph_class_nodes(eg, sc_egraph_find(eg, b), &n);
  g_assert_cmpuint(n, ==, 2);
  g_assert_cmpuint(sc_egraph_lookup(eg, OP_VIEW, 0, &a, 1), ==, SC_ID_NONE);
  g_assert_cmpuint(sc_egraph_find(eg, vb), !=, sc_egraph_find(eg, b));
  assert_check(eg);
}

/* shape analysis: leaves carry their shape in attr; f doubles it */
static void s_make(const sc_egraph *eg, uint32_t op, uint32_t attr,
                   const sc_id *children, uint32_t n,
                   const void *const *child_data, void *out, void *user) {
  int64_t *s = out;
  *s = n == 0 ? (int64_t)attr : 2 * *(const int64_t *)child_data[0];
}

static sc_merge_result s_merge(void *a, const void *b, void *user) {
  return *(int64_t *)a == *(const int64_t *)b ? SC_MERGE_NONE
                                              : SC_MERGE_CONFLICT;
}

typedef struct {
  int n;
  uint32_t just;
  sc_id a, b;
} conflicts;

static void on_conflict(const sc_egraph *eg, sc_id a, sc_id b, uint32_t just,
                        void *user) {
  conflicts *c = user;
  c->n++;
  c->just = just;
  c->a = a;
  c->b = b;
}

static void test_unsound_rule(void) {
  static const sc_analysis shape = {sizeof(int64_t), s_make, s_merge, NULL};
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_pattern) l = sc_pattern_new();
  sc_pattern_node(l, OP_F, sc_attr_exact(0),
                  (sc_pat_id[]){sc_pattern_var(l, "x")}, 1);
  g_autoptr(sc_pattern) rp = sc_pattern_new();
  sc_pattern_var(rp, "x");
  g_autoptr(sc_rewrite) ok_rule = comm(OP_ADD, "comm-add");
  g_autoptr(sc_rewrite) bad = sc_rewrite_new("f-is-id", l, NULL, 0, rp, &err);
  g_assert_no_error(err);
  conflicts c = {0};
  g_autoptr(sc_egraph) eg = sc_egraph_new(&shape, NULL);
  sc_egraph_set_conflict_handler(eg, on_conflict, &c);
  sc_id a = sc_egraph_add(eg, OP_A, 4, NULL, 0);
  sc_id fa = sc_egraph_add(eg, OP_F, 0, &a, 1);
  sc_runner_limits lim;
  base_limits(&lim, SC_SCHED_SIMPLE);
  g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
  sc_rewrite *rules[2] = {ok_rule, bad};
  g_assert_cmpint(sc_runner_run(r, rules, 2), ==, SC_STOP_SATURATED);
  g_assert_cmpint(c.n, >=, 1);
  g_assert_cmpuint(c.just, ==, 1); /* the index of f-is-id */
  g_assert_true((c.a == fa && c.b == a) || (c.a == a && c.b == fa));
  g_assert_cmpuint(sc_egraph_find(eg, a), !=, sc_egraph_find(eg, fa));
  assert_check(eg);
}

static gboolean always(const sc_egraph *eg, sc_id root, const uint32_t *subst,
                       void *user) {
  return TRUE;
}

/* Semi-naive search (rules without guard are searched only for matches
 * binding a node changed since their last search) must reach exactly the
 * e-graph that full searches reach: same node and class counts in every
 * iteration, here through two runs with nodes added in between. */
static void test_semi_naive(void) {
  sc_rewrite *inc[5], *full[5];
  workload_rules(inc);
  workload_rules(full);
  for (uint32_t i = 0; i < 5; i++)
    sc_rewrite_set_guard(full[i], always, NULL); /* forces full search */
  g_autoptr(sc_egraph) e1 = sc_egraph_new(NULL, NULL);
  g_autoptr(sc_egraph) e2 = sc_egraph_new(NULL, NULL);
  sc_runner_limits lim;
  base_limits(&lim, SC_SCHED_SIMPLE);
  lim.iter_limit = 4; /* stop half way, then continue */
  workload_term(e1, 7);
  workload_term(e2, 7);
  for (int round = 0; round < 3; round++) {
    g_autoptr(sc_runner) r1 = sc_runner_new(e1, &lim);
    g_autoptr(sc_runner) r2 = sc_runner_new(e2, &lim);
    sc_stop_reason s1 = sc_runner_run(r1, inc, 5);
    sc_stop_reason s2 = sc_runner_run(r2, full, 5);
    g_assert_cmpint(s1, ==, s2);
    g_assert_cmpuint(sc_runner_n_iterations(r1), ==,
                     sc_runner_n_iterations(r2));
    for (uint32_t i = 0; i < sc_runner_n_iterations(r1); i++) {
      const sc_iteration *a = sc_runner_iteration(r1, i);
      const sc_iteration *b = sc_runner_iteration(r2, i);
      g_assert_cmpuint(a->applied, ==, b->applied);
      g_assert_cmpuint(a->nodes, ==, b->nodes);
      g_assert_cmpuint(a->classes, ==, b->classes);
      g_assert_cmpuint(a->matches, <=, b->matches);
    }
    /* new terms between runs: x0 * (x2 + x4) */
    sc_id x[3] = {sc_egraph_add(e1, OP_VAR, 0, NULL, 0),
                  sc_egraph_add(e1, OP_VAR, 2, NULL, 0),
                  sc_egraph_add(e1, OP_VAR, 4 + (uint32_t)round, NULL, 0)};
    sc_id s[2] = {x[1], x[2]};
    sc_id p[2] = {x[0], sc_egraph_add(e1, OP_ADD, 0, s, 2)};
    sc_egraph_add(e1, OP_MUL, 0, p, 2);
    sc_id y[3] = {sc_egraph_add(e2, OP_VAR, 0, NULL, 0),
                  sc_egraph_add(e2, OP_VAR, 2, NULL, 0),
                  sc_egraph_add(e2, OP_VAR, 4 + (uint32_t)round, NULL, 0)};
    sc_id t[2] = {y[1], y[2]};
    sc_id q[2] = {y[0], sc_egraph_add(e2, OP_ADD, 0, t, 2)};
    sc_egraph_add(e2, OP_MUL, 0, q, 2);
    lim.iter_limit = 30;
  }
  g_assert_cmpuint(sc_egraph_n_nodes(e1), ==, sc_egraph_n_nodes(e2));
  g_assert_cmpuint(sc_egraph_n_classes(e1), ==, sc_egraph_n_classes(e2));
  sc_egraph_rebuild(e1);
  assert_check(e1);
  free_rules(inc, 5);
  free_rules(full, 5);
}

/* Random e-graphs of add / mul over a few variables, random unions, then a
 * few iterations of the workload rules: the invariants hold after every
 * run, and the runner leaves the e-graph clean. */
static void test_random_rewrites(void) {
  sc_rewrite *rules[5];
  workload_rules(rules);
  for (uint32_t seed = 1; seed <= 20; seed++) {
    GRand *rng = g_rand_new_with_seed(seed);
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (uint32_t step = 0; step < 300; step++) {
      int what = g_rand_int_range(rng, 0, 10);
      if (ids->len < 4 || what < 6) {
        sc_id id;
        if (ids->len < 4 || what < 2) {
          id = sc_egraph_add(eg, OP_VAR, (uint32_t)g_rand_int_range(rng, 0, 6),
                             NULL, 0);
        } else {
          sc_id k[2] = {
              g_array_index(ids, sc_id, g_rand_int_range(rng, 0, (gint32)ids->len)),
              g_array_index(ids, sc_id, g_rand_int_range(rng, 0, (gint32)ids->len))};
          id = sc_egraph_add(eg, what % 2 ? OP_ADD : OP_MUL, 0, k, 2);
        }
        g_array_append_val(ids, id);
      } else if (what < 8) {
        sc_egraph_union(
            eg, g_array_index(ids, sc_id, g_rand_int_range(rng, 0, (gint32)ids->len)),
            g_array_index(ids, sc_id, g_rand_int_range(rng, 0, (gint32)ids->len)),
            SC_JUST_ASSERTED);
      } else {
        sc_egraph_rebuild(eg);
        assert_check(eg);
        if (step % 50 == 0) {
          sc_runner_limits lim;
          base_limits(&lim, seed % 2 ? SC_SCHED_SIMPLE : SC_SCHED_BACKOFF);
          lim.iter_limit = 3;
          lim.node_limit = 5000;
          g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
          sc_runner_run(r, rules, 5);
          g_assert_true(sc_egraph_is_clean(eg));
          assert_check(eg);
        }
      }
    }
    sc_egraph_rebuild(eg);
    assert_check(eg);
    g_array_unref(ids);
    g_rand_free(rng);
  }
  free_rules(rules, 5);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_setenv("SC_EGRAPH_CHECK", "1", TRUE); /* check after every rebuild */
  g_test_add_func("/runner/workload/k2-exact", test_workload_k2_exact);
  g_test_add_func("/runner/workload/simple", test_workload_simple);
  g_test_add_func("/runner/workload/backoff", test_workload_backoff);
  g_test_add_func("/runner/limits/stop", test_limits);
  g_test_add_func("/runner/limits/env", test_limits_env);
  g_test_add_func("/runner/limits/budget-mid-iteration", test_budget_mid_iteration);
  g_test_add_func("/runner/apply/applier-computed", test_applier_and_computed);
  g_test_add_func("/runner/constrained/view-view", test_constrained);
  g_test_add_func("/runner/analysis/unsound-rule", test_unsound_rule);
  g_test_add_func("/runner/semi-naive/equivalent", test_semi_naive);
  g_test_add_func("/runner/random/rewrites", test_random_rewrites);
  return g_test_run();
}
