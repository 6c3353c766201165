/* test-infer-expand-copies.c — an unmapped spec expand of a size-1 dim
 * gets the cat of copies of its input as its relation
 * (src/infer/expand-copies.c):
 *   spec    e = expand(x, [2, 2, 3]) (x: [2, 1, 3]); y = neg(e)
 *   rank r  a_r = neg(x_r); y_r = expand(a_r, [2, 2, 3])   (x replicated)
 * The impl never computes the expand of x: without the candidate, e has
 * no clean relation (it is deferred); with it, e = cat(x_r, x_r, dim=1)
 * for each rank's copy, and the check still refines.  A mutant that
 * negates on one rank only (y_1 = expand(x_1)) fails at y, where its
 * values diverge, not at e.
 * The same over blocks of two ranks (x cut along dim 2, no rank holds
 * all of it; shardsmith 21011's keys gathered from every rank):
 *   rank r  a_r = neg(x_r); y_r = expand(a_r, [2, 2, 2])  (x_r: [2, 1, 2])
 * e = cat(cat(x_0, x_1, dim=2), cat(x_0, x_1, dim=2), dim=1), and the
 * mutant that takes abs on rank 1 fails at y.
 * And over a partial sum under a view (x = view(sum(x_0, x_1)), x_r:
 * [2, 3]; shardsmith 28022's bias added on every rank):
 *   rank r  a_r = neg(x_r); y_r = expand(view(a_r, [2, 1, 3]), [2, 2, 3])
 *   y = sum(y_0, y_1)
 * e = sum(cat(view(x_0), view(x_0), dim=1), cat(view(x_1), view(x_1),
 * dim=1)) (expand is linear; the view is carried to each partial), and
 * the mutant that takes abs on rank 1 fails at y. */
#include "bundle-text.h"
#include "infer-fixture.h"

/* One shape of case: the spec e = expand(x, E); y = neg(e) (x: X) over
 * two ranks whose inputs x_0, x_1 have shape XR, in bundle NAME; X_REL
 * and Y_REL are the members of x's and y's relation lists. */
typedef struct {
  const char *name, *x, *e, *xr, *x_rel, *y_rel;
} copies_case;

static const copies_case replicated = {"expand-copies", "[2, 1, 3]", "[2, 2, 3]", "[2, 1, 3]",
                                       "\"x_0\", \"x_1\"", "\"y_0\", \"y_1\""};
/* x: [2, 1, 4] cut along dim 2 over two ranks. */
static const copies_case cut = {"expand-copies-cut", "[2, 1, 4]", "[2, 2, 4]", "[2, 1, 2]",
                                "\"cat(x_0, x_1, dim=2)\"", "\"cat(y_0, y_1, dim=2)\""};
/* x: [2, 1, 3], the view of a partial sum of two ranks' [2, 3]. */
static const copies_case partial = {"expand-copies-sum", "[2, 1, 3]", "[2, 2, 3]", "[2, 3]",
                                    "\"view(sum(x_0, x_1), shape=[2, 1, 3])\"",
                                    "\"sum(y_0, y_1)\""};

static char *bundle(const copies_case *c, const char *rank0, const char *rank1) {
  g_autofree char *spec_inputs = g_strdup_printf(T("x", "%s", ""), c->x);
  g_autofree char *spec_nodes = g_strdup_printf(
      NODE("e", "aten.expand.default", "[\"x\", %s]", "e", "%s", "")
      ", " NODE("y", "aten.neg.default", "[\"e\"]", "y", "%s", ""),
      c->e, c->e, c->e);
  g_autofree char *impl_inputs =
      g_strdup_printf(T("x_0", "%s", R0) ", " T("x_1", "%s", R1), c->xr, c->xr);
  g_autofree char *x_rel = g_strdup_printf("\"x\": [%s]", c->x_rel);
  g_autofree char *y_rel = g_strdup_printf("\"y\": [%s]", c->y_rel);
  return bt_two_ranks(c->name, spec_inputs, spec_nodes, impl_inputs, rank0, rank1, x_rel, y_rel);
}

/* Rank r: a_r = F(x_r) (shape XR); y_r = expand(a_r, E). */
#define PART(r, R, f, xr, e)                                                            \
  NODE("a_" r, f, "[\"x_" r "\"]", "a_" r, xr, R) ", "                                 \
  NODE("y_" r, "aten.expand.default", "[\"a_" r "\", " e "]", "y_" r, e, R)
#define CORRECT(r, R) PART(r, R, "aten.neg.default", "[2, 1, 3]", "[2, 2, 3]")
#define NO_NEG(r, R) PART(r, R, "aten.abs.default", "[2, 1, 3]", "[2, 2, 3]")
#define CUT_CORRECT(r, R) PART(r, R, "aten.neg.default", "[2, 1, 2]", "[2, 2, 2]")
#define CUT_NO_NEG(r, R) PART(r, R, "aten.abs.default", "[2, 1, 2]", "[2, 2, 2]")

#define SUM_PART(r, R, f)                                                               \
  NODE("a_" r, f, "[\"x_" r "\"]", "a_" r, "[2, 3]", R) ", "                          \
  NODE("v_" r, "aten.view.default", "[\"a_" r "\", [2, 1, 3]]", "v_" r, "[2, 1, 3]", R) ", " \
  NODE("y_" r, "aten.expand.default", "[\"v_" r "\", [2, 2, 3]]", "y_" r, "[2, 2, 3]", R)

static const char *node_name(const sc_bundle *b, sc_id v) {
  return v == SC_ID_NONE ? "(none)" : sc_graph_node(sc_bundle_spec(b), v)->name;
}

/* e (spec tensor 1: x, e, y) is related as WANT or as ALSO (NULL: none);
 * prints e's relations when neither. */
static void assert_e(sc_infer_result *r, const char *want, const char *also) {
  const GPtrArray *e = sc_infer_tensor_exprs(r, 1);
  g_assert_nonnull(e);
  gboolean found = FALSE;
  for (guint i = 0; e != NULL && i < e->len && !found; i++)
    found = strcmp(g_ptr_array_index(e, i), want) == 0 ||
            (also != NULL && strcmp(g_ptr_array_index(e, i), also) == 0);
  if (!found)
    for (guint i = 0; e != NULL && i < e->len; i++)
      g_printerr("e = %s\n", (const char *)g_ptr_array_index(e, i));
  g_assert_true(found);
}

/* e related as the cat of a rank's copies. */
static void assert_copies(sc_infer_result *r) {
  assert_e(r, "cat(x_0, x_0, dim=1)", "cat(x_1, x_1, dim=1)");
}

/* e related as the cat of copies of the two ranks' blocks. */
static void assert_block_copies(sc_infer_result *r) {
  assert_e(r, "cat(cat(x_0, x_1, dim=2), cat(x_0, x_1, dim=2), dim=1)", NULL);
}

/* e related as the sum of the cats of copies of the partials' views. */
static void assert_sum_copies(sc_infer_result *r) {
  assert_e(r,
           "sum(cat(view(x_0, shape=[2, 1, 3]), view(x_0, shape=[2, 1, 3]), dim=1), "
           "cat(view(x_1, shape=[2, 1, 3]), view(x_1, shape=[2, 1, 3]), dim=1))",
           NULL);
}

/* Run case C with the ranks' nodes RANK0 and RANK1; it refines, or fails
 * at y when BUG; e's expected relation holds either way (CHECK_E). */
static void run_case(const copies_case *c, const char *rank0, const char *rank1, gboolean bug,
                     void (*check_e)(sc_infer_result *)) {
  g_autofree char *json = bundle(c, rank0, rank1);
  sc_bundle *b = NULL;
  sc_infer_result *r = ifx_run_json(json, c->name, NULL, &b);
  if (bug) {
    g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_FAILS);
    g_assert_cmpstr(node_name(b, sc_infer_failure_node(r)), ==, "y");
  } else {
    g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  }
  check_e(r);
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

static void test_correct(void) {
  run_case(&replicated, CORRECT("0", R0), CORRECT("1", R1), FALSE, assert_copies);
}

static void test_bug_after(void) {
  run_case(&replicated, CORRECT("0", R0), NO_NEG("1", R1), TRUE, assert_copies);
}

static void test_cut_correct(void) {
  run_case(&cut, CUT_CORRECT("0", R0), CUT_CORRECT("1", R1), FALSE, assert_block_copies);
}

static void test_cut_bug_after(void) {
  run_case(&cut, CUT_CORRECT("0", R0), CUT_NO_NEG("1", R1), TRUE, assert_block_copies);
}

static void test_sum_correct(void) {
  run_case(&partial, SUM_PART("0", R0, "aten.neg.default"), SUM_PART("1", R1, "aten.neg.default"),
           FALSE, assert_sum_copies);
}

static void test_sum_bug_after(void) {
  run_case(&partial, SUM_PART("0", R0, "aten.neg.default"), SUM_PART("1", R1, "aten.abs.default"),
           TRUE, assert_sum_copies);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/expand-copies/correct", test_correct);
  g_test_add_func("/infer/expand-copies/bug-after", test_bug_after);
  g_test_add_func("/infer/expand-copies/cut-correct", test_cut_correct);
  g_test_add_func("/infer/expand-copies/cut-bug-after", test_cut_bug_after);
  g_test_add_func("/infer/expand-copies/sum-correct", test_sum_correct);
  g_test_add_func("/infer/expand-copies/sum-bug-after", test_sum_bug_after);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
