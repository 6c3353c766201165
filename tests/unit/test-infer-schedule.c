/* test-infer-schedule.c — the parallel schedule of `check --jobs N`
 * (src/infer/schedule.c): the plan (each visiting position's ready point,
 * the window of positions that may be proved while the walk waits at one)
 * on a small graph with independent branches and a node not needed; and a
 * check with --jobs 1 and --jobs 2 giving the same verdict, failure,
 * relations and counters, on a model with repeated layers (carried) and on
 * bug models.  (Every model of models/ and tests/models is compared the
 * same way through the JSON report by tests/models/jobs-same.py.)  And the
 * renaming thread of the carries (src/infer/carry-rename.c): its arrays
 * hold what the main thread's renaming gives, in order, and expressions
 * dropped on the starting thread are freed by it. */
#include "infer/infer-private.h"
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

/* No proof made ahead is thrown away for a template committed after it
 * was dispatched: at --jobs 2 these models each had a node proved ahead
 * and then carried at its turn from a node of its own kind visited just
 * before it (schedule.c, template_pending).  The schedule's trace says
 * how many proofs were made ahead and dropped. */
static void test_no_dropped(void) {
  if (g_test_subprocess()) {
    g_setenv("SC_SCHEDULE_TRACE", "1", TRUE);
    check_same("models/gqa-tp/gqa-tp2-shard.json");
    check_same("models/causal-mask/causal-mask-tril-dp2-fwd.json");
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  g_test_trap_assert_stderr("*schedule: * proofs made ahead: * 0 dropped;*"
                            "schedule: * proofs made ahead: * 0 dropped;*");
}

static sc_id leaf_to(sc_id t, void *user) {
  const sc_id *map = user; /* pairs from, to; ended by SC_ID_NONE */
  for (; map[0] != SC_ID_NONE; map += 2)
    if (map[0] == t)
      return map[1];
  return t;
}

static void test_carry_rename(void) {
  GError *err = NULL;
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  int64_t sizes[2] = {4, 8};
  sc_ttype t = {sc_shape_of(2, sizes), SC_DTYPE_F32};
  const char *names[6] = {"x_0", "x_1", "y_0", "y_1", "z_0", "z_1"};
  for (guint i = 0; i < 6; i++)
    g_assert_true(sc_graph_add_input(g, names[i], &t, NULL, &err));
  g_assert_true(sc_graph_finish(g, &err));
  g_assert_no_error(err);
  const char *texts[3] = {"cat(x_1, x_0, dim=0)", "sum(x_0, slice(cat(x_0, x_1), dim=0, start=4, end=8))",
                          "transpose(x_1, dim0=0, dim1=1)"};
  GPtrArray *rel = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  for (guint j = 0; j < 3; j++) {
    g_ptr_array_add(rel, sc_texpr_parse(texts[j], g, TRUE, &err));
    g_assert_no_error(err);
  }
  sc_rel_text_source *src = sc_rel_text_source_new(rel);
  g_assert_cmpuint(sc_rel_text_source_n_leaves(src), ==, 2); /* x_0, x_1, sorted */
  g_assert_cmpuint(sc_rel_text_source_n_exprs(src), ==, 3);
  sc_id x0 = sc_graph_find_tensor(g, "x_0"), x1 = sc_graph_find_tensor(g, "x_1");
  g_assert_cmpuint(sc_rel_text_source_leaf(src, 0), ==, MIN(x0, x1));
  /* images: to y (even jobs) or z (odd) */
  sc_id images[2][2], maps[2][5];
  for (guint k = 0; k < 2; k++) {
    sc_id a = sc_graph_find_tensor(g, k ? "z_0" : "y_0"), b = sc_graph_find_tensor(g, k ? "z_1" : "y_1");
    images[k][0] = x0 < x1 ? a : b;
    images[k][1] = x0 < x1 ? b : a;
    sc_id m[5] = {x0, a, x1, b, SC_ID_NONE};
    memcpy(maps[k], m, sizeof m);
  }
  sc_rel_renamer *r = sc_rel_renamer_new();
  enum { N = 64 };
  GPtrArray *out[N];
  for (guint i = 0; i < N; i++) {
    out[i] = g_ptr_array_new_full(3, sc_rel_renamer_dispose);
    g_ptr_array_set_size(out[i], 3);
    sc_rel_renamer_push(r, out[i], src, images[i % 2]);
  }
  sc_rel_renamer_sync(r);
  for (guint i = 0; i < N; i++)
    for (guint j = 0; j < 3; j++) {
      sc_texpr *want = sc_texpr_rename(g_ptr_array_index(rel, j), leaf_to, maps[i % 2]);
      g_autofree char *a = sc_texpr_to_string(g_ptr_array_index(out[i], j));
      g_autofree char *b = sc_texpr_to_string(want);
      g_assert_cmpstr(a, ==, b);
      sc_texpr_free(want);
    }
  /* dropped here (the starting thread): freed by the renaming thread, at
   * the latest when it ends (a leak or a double free shows under ASan) */
  for (guint i = 0; i < N; i++)
    g_ptr_array_unref(out[i]);
  sc_rel_renamer_free(r);
  /* no renamer on this thread now: freed at once */
  GPtrArray *late = g_ptr_array_new_full(1, sc_rel_renamer_dispose);
  g_ptr_array_add(late, sc_rel_text_source_rename(src, 0, images[0]));
  g_autofree char *late_text = sc_texpr_to_string(g_ptr_array_index(late, 0));
  g_assert_cmpstr(late_text, ==, "cat(y_1, y_0, dim=0)");
  g_ptr_array_unref(late);
  sc_rel_text_source_unref(src);
  g_ptr_array_unref(rel);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/schedule/plan", test_plan);
  g_test_add_func("/infer/schedule/layers-jobs-1-2", test_layers);
  g_test_add_func("/infer/schedule/bugs-jobs-1-2", test_bugs);
  g_test_add_func("/infer/schedule/carry-rename", test_carry_rename);
  g_test_add_func("/infer/schedule/no-dropped-proofs", test_no_dropped);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
