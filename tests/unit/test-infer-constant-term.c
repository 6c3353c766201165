/* test-infer-constant-term.c — constant spec tensors (src/infer/constant.c):
 * a spec tensor that depends on no graph input and maps to no impl tensor
 * has the term that recomputes it as its relation, so a rank that builds
 * another constant fails at the node that reads it, not at the constant.
 *   spec    o = ones([3]); e = neg(o); y = mul(x, e)
 *   rank r  o_r = ones([3]); e_r = neg(o_r); y_r = mul(x_r, e_r)   (correct)
 *   rank r  o_r = ones([3]);                 y_r = mul(x_r, o_r)   (bug: no neg)
 * The correct impl refines (e maps to the impl's e_r); the bug fails at y
 * (e's relation is its constant term neg(ones(...))), not at e. */
#include "bundle-text.h"
#include "infer-fixture.h"

static sc_infer_result *run(const char *json, sc_bundle **bp) {
  return ifx_run_json(json, "constant", NULL, bp);
}

/* RANK0 / RANK1: each rank's nodes (its y_r last). */
static char *bundle(const char *rank0, const char *rank1) {
  return bt_two_ranks(
      "constant", T("x", "[4, 3]", ""),
      NODE("o", "aten.ones.default", "[[3]]", "o", "[3]", "") ", "
      NODE("e", "aten.neg.default", "[\"o\"]", "e", "[3]", "") ", "
      NODE("y", "aten.mul.Tensor", "[\"x\", \"e\"]", "y", "[4, 3]", ""),
      T("x_0", "[2, 3]", R0) ", " T("x_1", "[2, 3]", R1), rank0, rank1,
      "\"x\": [\"cat(x_0, x_1, dim=0)\"]",
      "\"y\": [\"cat(y_0, y_1, dim=0)\"]");
}

#define CORRECT(r, R)                                                                   \
  NODE("o_" r, "aten.ones.default", "[[3]]", "o_" r, "[3]", R) ", "                   \
  NODE("e_" r, "aten.neg.default", "[\"o_" r "\"]", "e_" r, "[3]", R) ", "            \
  NODE("y_" r, "aten.mul.Tensor", "[\"x_" r "\", \"e_" r "\"]", "y_" r, "[2, 3]", R)
#define BUGGY(r, R)                                                                     \
  NODE("o_" r, "aten.ones.default", "[[3]]", "o_" r, "[3]", R) ", "                   \
  NODE("y_" r, "aten.mul.Tensor", "[\"x_" r "\", \"o_" r "\"]", "y_" r, "[2, 3]", R)

static const char *node_name(const sc_bundle *b, sc_id v) {
  return v == SC_ID_NONE ? "(none)" : sc_graph_node(sc_bundle_spec(b), v)->name;
}

static void test_correct(void) {
  g_autofree char *json = bundle(CORRECT("0", R0), CORRECT("1", R1));
  sc_bundle *b = NULL;
  sc_infer_result *r = run(json, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

static void test_bug_at_reader(void) {
  g_autofree char *json = bundle(BUGGY("0", R0), BUGGY("1", R1));
  sc_bundle *b = NULL;
  sc_infer_result *r = run(json, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_FAILS);
  g_assert_cmpstr(node_name(b, sc_infer_failure_node(r)), ==, "y");
  /* e (spec tensor 2: x, o, e, y) got its constant term */
  const GPtrArray *e = sc_infer_tensor_exprs(r, 2);
  g_assert_nonnull(e);
  g_assert_cmpuint(e->len, ==, 1);
  g_assert_nonnull(strstr(g_ptr_array_index(e, 0), "neg"));
  g_assert_nonnull(strstr(g_ptr_array_index(e, 0), "ones"));
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/constant-term/correct", test_correct);
  g_test_add_func("/infer/constant-term/bug-at-reader", test_bug_at_reader);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
