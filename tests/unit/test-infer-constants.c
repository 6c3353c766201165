/* test-infer-constants.c — the post-saturation hook "constant parts"
 * (src/infer/pass-constants.c): a class holding both full(s, v) and
 * cat(a, b) makes a = full(shape(a), v) and b = full(shape(b), v); a
 * class with a cat and no constant is left alone; a part of another dtype
 * is left alone (a cat of mixed dtypes promotes its parts). */
#include "infer-fixture.h"

/* x0, x1: [2] f32; x2: [2] i64; y: [4] f32 */
static void setup(ifx *f) {
  ifx_init(f);
  int64_t s2[1] = {2}, s4[1] = {4};
  ifx_input(f, "x0", SC_DTYPE_F32, 1, s2);
  ifx_input(f, "x1", SC_DTYPE_F32, 1, s2);
  ifx_input(f, "x2", SC_DTYPE_I64, 1, s2);
  ifx_input(f, "y", SC_DTYPE_F32, 1, s4);
  ifx_finish(f);
}

static void test_parts_of_constant(void) {
  ifx f;
  setup(&f);
  sc_id whole = ifx_add(&f, "full(shape=[4], value=0.0)");
  sc_id cat = ifx_add(&f, "cat(x0, x1, dim=0)");
  sc_id x0 = ifx_add(&f, "x0"), x1 = ifx_add(&f, "x1");
  sc_egraph_union(ifx_eg(&f), whole, cat, SC_JUST_ASSERTED);
  sc_id part = ifx_add(&f, "full(shape=[2], value=0.0)");
  sc_id other = ifx_add(&f, "full(shape=[2], value=1.0)");
  g_assert_false(ifx_same(&f, x0, part));
  g_assert_true(sc_rel_cat_constant_parts(&f.c));
  g_assert_true(ifx_same(&f, x0, part));
  g_assert_true(ifx_same(&f, x1, part));
  g_assert_false(ifx_same(&f, x0, other));
  g_assert_false(sc_rel_cat_constant_parts(&f.c)); /* done */
  ifx_clear(&f);
}

static void test_no_constant(void) {
  ifx f;
  setup(&f);
  sc_id y = ifx_add(&f, "y");
  sc_id cat = ifx_add(&f, "cat(x0, x1, dim=0)");
  sc_egraph_union(ifx_eg(&f), y, cat, SC_JUST_ASSERTED);
  g_assert_false(sc_rel_cat_constant_parts(&f.c));
  ifx_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/constants/parts-of-constant", test_parts_of_constant);
  g_test_add_func("/infer/constants/no-constant", test_no_constant);
  return g_test_run();
}
