/* test-infer-schedule.c — the parallel schedule of `check --jobs N`
 * (src/infer/schedule.c): the plan (each visiting position's ready point,
 * the window of positions that may be proved while the walk waits at one)
 * on a small graph with independent branches and a node not needed; and a
 * check with --jobs 1 and --jobs 2 giving the same verdict, failure,
 * relations and counters, on a model with repeated layers (carried) and on
 * bug models.  (Every model of models/ and tests/models is compared the
 * same way through the JSON report by tests/models/jobs-same.py.) */
#include "infer/schedule.h"
#include "shardcheck/bundle.h"
#include "infer-fixture.h"
#include "shardcheck/infer.h"
#include "shardcheck/ops.h"

#include <string.h>

static gboolean resolve(void *env, const char *name, sc_id *out) {
  sc_id id = sc_graph_find_tensor(env, name);
  if (id == SC_ID_NONE)
    return FALSE;
  *out = id;
  return TRUE;
}

/* NODE = OP(IN...) -> OUT */
static void add(sc_graph *g, const char *node, const char *qualname, const char *a, const char *b,
                const char *out) {
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup(qualname, &err);
  g_assert_no_error(err);
  sc_value raw[2] = {sc_value_str(a), b ? sc_value_str(b) : sc_value_str(a)};
  uint32_t n = b ? 2 : 1;
  sc_value *bound = g_new0(sc_value, op->n_args ? op->n_args : 1);
  sc_bind_loc loc;
  g_assert_true(sc_ops_bind(op, sc_graph_symtab(g), raw, n, NULL, NULL, 0, resolve, g, bound,
                            &loc, &err));
  g_assert_no_error(err);
  for (uint32_t i = 0; i < 2; i++)
    sc_value_clear(&raw[i]);
  const char *names[1] = {out};
  g_assert_true(sc_graph_add_node(g, node, op, bound, names, 1, NULL, NULL, NULL, &err));
  g_assert_no_error(err);
}

static void assert_window(const sc_rel_plan *p, uint32_t at, uint32_t window,
                          const uint32_t *want, guint n_want) {
  g_autoptr(GArray) w = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  sc_rel_plan_window(p, at, window, w);
  g_assert_cmpuint(w->len, ==, n_want);
  for (guint i = 0; i < n_want; i++)
    g_assert_cmpuint(g_array_index(w, uint32_t, i), ==, want[i]);
}

static void test_plan(void) {
  GError *err = NULL;
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  int64_t sizes[2] = {4, 4};
  sc_ttype t = {sc_shape_of(2, sizes), SC_DTYPE_F32};
  g_assert_true(sc_graph_add_input(g, "x", &t, NULL, &err));
  add(g, "a", "aten.relu.default", "x", NULL, "ta");   /* 0: reads x */
  add(g, "b", "aten.neg.default", "x", NULL, "tb");    /* 1: reads x */
  add(g, "dead", "aten.neg.default", "tb", NULL, "td"); /* not needed */
  add(g, "c", "aten.add.Tensor", "ta", "tb", "tc");    /* 2: after a, b */
  add(g, "d", "aten.relu.default", "tc", NULL, "tdd"); /* 3: after c */
  add(g, "e", "aten.neg.default", "x", NULL, "te");    /* 4: reads x */
  add(g, "f", "aten.add.Tensor", "tdd", "te", "tf");   /* 5: after d, e */
  g_assert_true(sc_graph_finish(g, &err));
  g_assert_no_error(err);
  uint32_t n_order = 0;
  const sc_id *order = sc_graph_topo_order(g, &n_order);
  g_assert_cmpuint(n_order, ==, 7);
  gboolean need[7];
  for (uint32_t v = 0; v < 7; v++)
    need[v] = strcmp(sc_graph_node(g, v)->name, "dead") != 0;
  sc_rel_plan p;
  sc_rel_plan_init(&p, g, order, n_order, need);
  g_assert_cmpuint(p.n, ==, 6);
  const char *names[6] = {"a", "b", "c", "d", "e", "f"};
  const uint32_t ready[6] = {0, 0, 2, 3, 0, 5};
  for (uint32_t i = 0; i < 6; i++) {
    g_assert_cmpstr(sc_graph_node(g, p.node[i])->name, ==, names[i]);
    g_assert_cmpuint(p.pos[p.node[i]], ==, i);
    g_assert_cmpuint(p.ready[i], ==, ready[i]);
  }
  g_assert_cmpuint(p.pos[sc_graph_find_node(g, "dead")], ==, UINT32_MAX);
  /* at 0: a, b and e need nothing uncommitted; c, d, f wait */
  const uint32_t w0[] = {0, 1, 4};
  assert_window(&p, 0, 32, w0, G_N_ELEMENTS(w0));
  /* a window of 2 looks no further than b */
  const uint32_t w0s[] = {0, 1};
  assert_window(&p, 0, 2, w0s, G_N_ELEMENTS(w0s));
  /* at 2 (a, b committed): c and e */
  const uint32_t w2[] = {2, 4};
  assert_window(&p, 2, 32, w2, G_N_ELEMENTS(w2));
  /* at 3: d, e; at 5: f */
  const uint32_t w3[] = {3, 4};
  assert_window(&p, 3, 32, w3, G_N_ELEMENTS(w3));
  const uint32_t w5[] = {5};
  assert_window(&p, 5, 32, w5, G_N_ELEMENTS(w5));
  sc_rel_plan_clear(&p);
}

static sc_infer_result *run(const sc_bundle *b, uint32_t jobs) {
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.jobs = jobs;
  return ifx_run(b, &opts);
}

/* --jobs 1 and --jobs 2 agree on model REL; returns the nodes carried. */
static uint32_t check_same(const char *rel) {
  GError *err = NULL;
  g_autofree char *path = g_build_filename(SC_TEST_SRCDIR, rel, NULL);
  sc_bundle *b = sc_bundle_load(path, &err);
  g_assert_no_error(err);
  sc_infer_result *one = run(b, 1), *two = run(b, 2);
  g_assert_cmpint(sc_infer_verdict(one), ==, sc_infer_verdict(two));
  g_assert_cmpint(sc_infer_failure_kind(one), ==, sc_infer_failure_kind(two));
  g_assert_cmpuint(sc_infer_failure_node(one), ==, sc_infer_failure_node(two));
  const sc_graph *spec = sc_bundle_spec(b);
  for (sc_id t = 0; t < sc_graph_n_tensors(spec); t++) {
    ifx_assert_same_texts(sc_infer_tensor_exprs(one, t), sc_infer_tensor_exprs(two, t));
    ifx_assert_same_texts(sc_infer_output_exprs(one, t), sc_infer_output_exprs(two, t));
  }
  for (sc_id v = 0; v < sc_graph_n_nodes(spec); v++)
    g_assert_cmpuint(sc_infer_carried_from(one, v), ==, sc_infer_carried_from(two, v));
  const sc_infer_stats *s1 = sc_infer_get_stats(one), *s2 = sc_infer_get_stats(two);
  g_assert_cmpuint(s1->visited, ==, s2->visited);
  g_assert_cmpuint(s1->explored, ==, s2->explored);
  g_assert_cmpuint(s1->enodes, ==, s2->enodes);
  g_assert_cmpuint(s1->max_enodes, ==, s2->max_enodes);
  g_assert_cmpuint(s1->applied, ==, s2->applied);
  g_assert_cmpuint(s1->carried, ==, s2->carried);
  uint32_t carried = s1->carried;
  sc_infer_result_free(one);
  sc_infer_result_free(two);
  sc_bundle_free(b);
  return carried;
}

static void test_layers(void) {
  g_assert_cmpuint(check_same("models/gpt2-block/gpt2-block-tp2-2layers-fwd.json"), >, 20);
}

static void test_bugs(void) {
  check_same("models/mlp-tp2-bugs/extra-scaling.json");
  check_same("models/ddp-sgd/ddp-sgd-sum-not-avg-dp2-fwd.json");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/schedule/plan", test_plan);
  g_test_add_func("/infer/schedule/layers-jobs-1-2", test_layers);
  g_test_add_func("/infer/schedule/bugs-jobs-1-2", test_bugs);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
