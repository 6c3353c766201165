/* test-infer-expand-copies.c — an unmapped spec expand of a size-1 dim
 * gets the cat of copies of its input as its relation
 * (src/infer/expand-copies.c):
 *   spec    e = expand(x, [2, 2, 3]) (x: [2, 1, 3]); y = neg(e)
 *   rank r  a_r = neg(x_r); y_r = expand(a_r, [2, 2, 3])   (x replicated)
 * The impl never computes the expand of x: without the candidate, e has
 * no clean relation (it is deferred); with it, e = cat(x_r, x_r, dim=1)
 * for each rank's copy, and the check still refines.  A mutant that
 * negates on one rank only (y_1 = expand(x_1)) fails at y, where its
 * values diverge, not at e. */
#include "bundle-text.h"
#include "infer-fixture.h"

static char *bundle(const char *rank0, const char *rank1) {
  return bt_two_ranks(
      "expand-copies", T("x", "[2, 1, 3]", ""),
      NODE("e", "aten.expand.default", "[\"x\", [2, 2, 3]]", "e", "[2, 2, 3]", "")
      ", " NODE("y", "aten.neg.default", "[\"e\"]", "y", "[2, 2, 3]", ""),
      T("x_0", "[2, 1, 3]", R0) ", " T("x_1", "[2, 1, 3]", R1), rank0, rank1,
      "\"x\": [\"x_0\", \"x_1\"]", "\"y\": [\"y_0\", \"y_1\"]");
}

#define CORRECT(r, R)                                                                   \
  NODE("a_" r, "aten.neg.default", "[\"x_" r "\"]", "a_" r, "[2, 1, 3]", R) ", "      \
  NODE("y_" r, "aten.expand.default", "[\"a_" r "\", [2, 2, 3]]", "y_" r, "[2, 2, 3]", R)
#define NO_NEG(r, R)                                                                    \
  NODE("a_" r, "aten.abs.default", "[\"x_" r "\"]", "a_" r, "[2, 1, 3]", R) ", "      \
  NODE("y_" r, "aten.expand.default", "[\"a_" r "\", [2, 2, 3]]", "y_" r, "[2, 2, 3]", R)

static const char *node_name(const sc_bundle *b, sc_id v) {
  return v == SC_ID_NONE ? "(none)" : sc_graph_node(sc_bundle_spec(b), v)->name;
}

/* e (spec tensor 1: x, e, y) related as the cat of a rank's copies. */
static void assert_copies(sc_infer_result *r) {
  const GPtrArray *e = sc_infer_tensor_exprs(r, 1);
  g_assert_nonnull(e);
  gboolean found = FALSE;
  for (guint i = 0; e != NULL && i < e->len && !found; i++)
    found = strcmp(g_ptr_array_index(e, i), "cat(x_0, x_0, dim=1)") == 0 ||
            strcmp(g_ptr_array_index(e, i), "cat(x_1, x_1, dim=1)") == 0;
  if (!found)
    for (guint i = 0; e != NULL && i < e->len; i++)
      g_printerr("e = %s\n", (const char *)g_ptr_array_index(e, i));
  g_assert_true(found);
}

static void test_correct(void) {
  g_autofree char *json = bundle(CORRECT("0", R0), CORRECT("1", R1));
  sc_bundle *b = NULL;
  sc_infer_result *r = ifx_run_json(json, "expand-copies", NULL, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  assert_copies(r);
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

static void test_bug_after(void) {
  g_autofree char *json = bundle(CORRECT("0", R0), NO_NEG("1", R1));
  sc_bundle *b = NULL;
  sc_infer_result *r = ifx_run_json(json, "expand-copies", NULL, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_FAILS);
  g_assert_cmpstr(node_name(b, sc_infer_failure_node(r)), ==, "y");
  assert_copies(r);
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/expand-copies/correct", test_correct);
  g_test_add_func("/infer/expand-copies/bug-after", test_bug_after);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
