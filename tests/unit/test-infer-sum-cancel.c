/* test-infer-sum-cancel.c — cancellation (src/infer/sum-cancel.c, run by
 * sc_rel_cat_equal_parts on a class and the classes it merges): two sums
 * of one class that differ in one part each make those parts equal
 * (a + b = a + c gives b = c), also under an injective view and along a
 * chain (the copies of two partials on a 2-D mesh); sums that differ in
 * two parts, or views of inputs of other shapes, say nothing. */
#include "infer-fixture.h"

/* a, b, c, e: [2, 3] f32; r: [3, 2] f32 */
static void setup(ifx *f) {
  ifx_init(f);
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
  ifx_input(f, "a", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "b", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "c", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "e", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "r", SC_DTYPE_F32, 2, s32);
  ifx_finish(f);
}

/* X and Y made one class, then cancellation run on it. */
static gboolean merge_and_cancel(ifx *f, const char *x, const char *y) {
  sc_id kx = ifx_add(f, x), ky = ifx_add(f, y);
  sc_egraph_union(ifx_eg(f), kx, ky, SC_JUST_ASSERTED);
  return sc_rel_cat_equal_parts(&f->c, kx);
}

static void test_one_apart(void) {
  ifx f;
  setup(&f);
  g_assert_true(merge_and_cancel(&f, "sum(a, b)", "sum(c, a)"));
  g_assert_true(ifx_same(&f, ifx_add(&f, "b"), ifx_add(&f, "c")));
  g_assert_false(ifx_same(&f, ifx_add(&f, "a"), ifx_add(&f, "b")));
  ifx_clear(&f);
}

/* a + b = c + e: no part is shared, nothing follows. */
static void test_two_apart(void) {
  ifx f;
  setup(&f);
  g_assert_false(merge_and_cancel(&f, "sum(a, b)", "sum(c, e)"));
  g_assert_false(ifx_same(&f, ifx_add(&f, "a"), ifx_add(&f, "c")));
  g_assert_false(ifx_same(&f, ifx_add(&f, "a"), ifx_add(&f, "e")));
  ifx_clear(&f);
}

/* a + a = a + b: the multiset difference is {a} against {b}. */
static void test_repeated_part(void) {
  ifx f;
  setup(&f);
  g_assert_true(merge_and_cancel(&f, "sum(a, a)", "sum(a, b)"));
  g_assert_true(ifx_same(&f, ifx_add(&f, "a"), ifx_add(&f, "b")));
  ifx_clear(&f);
}

/* sum(a, b) = sum(a, c) = sum(e, b): b = c and a = e, the copies of two
 * partials picked in three ways (shardsmith 29022's forms). */
static void test_chain(void) {
  ifx f;
  setup(&f);
  sc_id x = ifx_add(&f, "sum(a, b)"), y = ifx_add(&f, "sum(a, c)"), z = ifx_add(&f, "sum(e, b)");
  sc_egraph_union(ifx_eg(&f), x, y, SC_JUST_ASSERTED);
  sc_egraph_union(ifx_eg(&f), x, z, SC_JUST_ASSERTED);
  g_assert_true(sc_rel_cat_equal_parts(&f.c, x));
  g_assert_true(ifx_same(&f, ifx_add(&f, "b"), ifx_add(&f, "c")));
  g_assert_true(ifx_same(&f, ifx_add(&f, "a"), ifx_add(&f, "e")));
  g_assert_false(ifx_same(&f, ifx_add(&f, "a"), ifx_add(&f, "b")));
  ifx_clear(&f);
}

/* view(sum(a, b)) = view(sum(a, c)), the same view of equal shapes: the
 * view is injective (cat-parts.c), the sums are equal, b = c. */
static void test_under_view(void) {
  ifx f;
  setup(&f);
  g_assert_true(merge_and_cancel(&f, "view(sum(a, b), shape=[3, 2])", "view(sum(a, c), shape=[3, 2])"));
  g_assert_true(ifx_same(&f, ifx_add(&f, "b"), ifx_add(&f, "c")));
  ifx_clear(&f);
}

/* view(a, [6]) = view(r, [6]) with a: [2, 3], r: [3, 2]: views of inputs
 * of other shapes may coincide, so nothing is merged. */
static void test_view_other_shapes(void) {
  ifx f;
  setup(&f);
  g_assert_false(merge_and_cancel(&f, "view(a, shape=[6])", "view(r, shape=[6])"));
  ifx_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/sum-cancel/one-apart", test_one_apart);
  g_test_add_func("/infer/sum-cancel/two-apart", test_two_apart);
  g_test_add_func("/infer/sum-cancel/repeated-part", test_repeated_part);
  g_test_add_func("/infer/sum-cancel/chain", test_chain);
  g_test_add_func("/infer/sum-cancel/under-view", test_under_view);
  g_test_add_func("/infer/sum-cancel/view-other-shapes", test_view_other_shapes);
  return g_test_run();
}
