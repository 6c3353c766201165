/* test-infer-cat-parts.c — equal cats have equal parts (src/infer/cat-parts.c,
 * run on the classes of the input relation's groups): a class holding
 * cat(a, b, dim=d) and cat(c, e, dim=d) with parts of equal shapes makes
 * a = c and b = e (the
 * input relation of TP x DP: w = cat(w_0, w_1) = cat(w_2, w_3)); cats
 * along different dims, or with parts of different shapes, are left
 * alone; equal transposes of inputs of one shape have equal inputs. */
#include "infer-fixture.h"

/* a, b, c, e: [2, 3] f32; p: [1, 3], q: [3, 3] f32 */
static void setup(ifx *f) {
  ifx_init(f);
  int64_t s23[2] = {2, 3}, s13[2] = {1, 3}, s33[2] = {3, 3};
  ifx_input(f, "a", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "b", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "c", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "e", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "p", SC_DTYPE_F32, 2, s13);
  ifx_input(f, "q", SC_DTYPE_F32, 2, s33);
  ifx_finish(f);
}

static void test_equal_parts(void) {
  ifx f;
  setup(&f);
  sc_id x = ifx_add(&f, "cat(a, b, dim=1)"), y = ifx_add(&f, "cat(c, e, dim=1)");
  sc_id a = ifx_add(&f, "a"), b = ifx_add(&f, "b"), c = ifx_add(&f, "c"), e = ifx_add(&f, "e");
  sc_egraph_union(ifx_eg(&f), x, y, SC_JUST_ASSERTED);
  g_assert_false(ifx_same(&f, a, c));
  g_assert_true(sc_rel_cat_equal_parts(&f.c, x));
  g_assert_true(ifx_same(&f, a, c));
  g_assert_true(ifx_same(&f, b, e));
  g_assert_false(ifx_same(&f, a, b));
  g_assert_false(sc_rel_cat_equal_parts(&f.c, x)); /* done */
  ifx_clear(&f);
}

/* cat(p, q) = cat(a, a): parts of other shapes say nothing part-wise. */
static void test_other_shapes(void) {
  ifx f;
  setup(&f);
  sc_id x = ifx_add(&f, "cat(p, q, dim=0)"), y = ifx_add(&f, "cat(a, a, dim=0)");
  sc_egraph_union(ifx_eg(&f), x, y, SC_JUST_ASSERTED);
  g_assert_false(sc_rel_cat_equal_parts(&f.c, x));
  ifx_clear(&f);
}

/* Equal transposes (views, permutes) of inputs of one shape have equal
 * inputs: each moves every element to one place. */
static void test_transposes(void) {
  ifx f;
  setup(&f);
  sc_id x = ifx_add(&f, "transpose(a, dim0=0, dim1=1)");
  sc_id y = ifx_add(&f, "transpose(c, dim0=0, dim1=1)");
  sc_egraph_union(ifx_eg(&f), x, y, SC_JUST_ASSERTED);
  g_assert_true(sc_rel_cat_equal_parts(&f.c, x));
  g_assert_true(ifx_same(&f, ifx_add(&f, "a"), ifx_add(&f, "c")));
  g_assert_false(ifx_same(&f, ifx_add(&f, "a"), ifx_add(&f, "b")));
  ifx_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/cat-parts/equal-parts", test_equal_parts);
  g_test_add_func("/infer/cat-parts/other-shapes", test_other_shapes);
  g_test_add_func("/infer/cat-parts/transposes", test_transposes);
  return g_test_run();
}
