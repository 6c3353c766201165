/* test-infer-vrange.c — value ranges of spec tensors (src/infer/vrange.c):
 * a declared range spreads both ways over the operators the operator
 * table says keep the values (sc_ops_values_relation SAME: view,
 * transpose), forward over those that select some of them (SUBSET:
 * slice), and over nothing else (arithmetic: mul.Scalar). */
#include "infer/infer-private.h"

#include <string.h>

/* ids [4] i64 in [0, 9]; v = view(ids, [2, 2]); t = transpose(v);
 * s = slice(t, 0, 0, 1); m = mul.Scalar(ids, 2); and w, an input without
 * a range whose view u is read by nothing that bounds it. */
static const char *const BUNDLE =
    "{\"format\": \"shardcheck-bundle/1\", \"name\": \"vr\", \"symbols\": {}, \"assume\": [],"
    " \"spec\": {\"inputs\": ["
    "  {\"name\": \"ids\", \"shape\": [4], \"dtype\": \"i64\", \"values\": {\"min\": 0, \"max\": 9}},"
    "  {\"name\": \"w\", \"shape\": [4], \"dtype\": \"i64\"}],"
    " \"nodes\": ["
    "  {\"name\": \"v\", \"op\": \"aten.view.default\", \"args\": [\"ids\", [2, 2]], \"kwargs\": {},"
    "   \"outputs\": [{\"name\": \"v\", \"shape\": [2, 2], \"dtype\": \"i64\"}]},"
    "  {\"name\": \"t\", \"op\": \"aten.transpose.int\", \"args\": [\"v\", 0, 1], \"kwargs\": {},"
    "   \"outputs\": [{\"name\": \"t\", \"shape\": [2, 2], \"dtype\": \"i64\"}]},"
    "  {\"name\": \"s\", \"op\": \"aten.slice.Tensor\", \"args\": [\"t\", 0, 0, 1], \"kwargs\": {},"
    "   \"outputs\": [{\"name\": \"s\", \"shape\": [1, 2], \"dtype\": \"i64\"}]},"
    "  {\"name\": \"m\", \"op\": \"aten.mul.Scalar\", \"args\": [\"ids\", 2], \"kwargs\": {},"
    "   \"outputs\": [{\"name\": \"m\", \"shape\": [4], \"dtype\": \"i64\"}]},"
    "  {\"name\": \"u\", \"op\": \"aten.view.default\", \"args\": [\"w\", [2, 2]], \"kwargs\": {},"
    "   \"outputs\": [{\"name\": \"u\", \"shape\": [2, 2], \"dtype\": \"i64\"}]}],"
    " \"outputs\": [\"s\", \"m\", \"u\"]},"
    " \"impl\": {\"inputs\": ["
    "  {\"name\": \"ids_0\", \"shape\": [4], \"dtype\": \"i64\", \"rank\": 0},"
    "  {\"name\": \"w_0\", \"shape\": [4], \"dtype\": \"i64\", \"rank\": 0}],"
    " \"nodes\": [], \"outputs\": [\"ids_0\", \"w_0\"]},"
    " \"input_relation\": {\"ids\": [\"ids_0\"], \"w\": [\"w_0\"]}}";

static sc_id tensor(const sc_graph *g, const char *name) {
  for (sc_id t = 0; t < sc_graph_n_tensors(g); t++)
    if (strcmp(sc_graph_tensor(g, t)->name, name) == 0)
      return t;
  g_assert_not_reached();
}

static void assert_range(const sc_rel_ctx *c, const char *name, int64_t lo, int64_t hi) {
  const sc_vrange *r = &c->vrange[tensor(c->spec, name)];
  g_assert_cmpuint(r->lo_src, ==, SC_VRANGE_FACT);
  g_assert_cmpuint(r->hi_src, ==, SC_VRANGE_FACT);
  g_assert_true(sc_dim_is_const(r->lo) && sc_dim_is_const(r->hi));
  g_assert_cmpint(r->lo.value, ==, lo);
  g_assert_cmpint(r->hi.value, ==, hi);
}

static void test_spread(void) {
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(BUNDLE, "vr.json", &err);
  g_assert_no_error(err);
  sc_rel_ctx c;
  memset(&c, 0, sizeof c);
  c.spec = sc_bundle_spec(b);
  c.st = sc_bundle_symtab(b);
  sc_rel_vr_analyze(&c);
  assert_range(&c, "ids", 0, 9);
  assert_range(&c, "v", 0, 9); /* SAME: view */
  assert_range(&c, "t", 0, 9); /* SAME: transpose */
  assert_range(&c, "s", 0, 9); /* SUBSET: slice */
  g_assert_true(sc_vrange_is_unbounded(&c.vrange[tensor(c.spec, "m")])); /* arithmetic */
  g_assert_true(sc_vrange_is_unbounded(&c.vrange[tensor(c.spec, "u")])); /* no fact */
  g_assert_true(sc_vrange_is_unbounded(&c.vrange[tensor(c.spec, "w")]));
  sc_rel_vr_free(&c);
  sc_bundle_free(b);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/vrange/spread", test_spread);
  return g_test_run();
}
