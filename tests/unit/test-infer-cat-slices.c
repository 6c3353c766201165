/* test-infer-cat-slices.c — the post-saturation hook "parts of named
 * cats" (src/infer/pass-cat-slices.c): a class holding an impl tensor y
 * and cat(a, b, dim=d) makes each part that has no name of its own (no
 * tensor leaf, no cat) a slice of y at its offset; named parts, cats of
 * no tensor, and parts of another dtype are left alone. */
#include "infer-fixture.h"

/* x0, x1: [2, 3] f32; xi: [2, 3] i64; y: [2, 6] f32; z: [4, 3] f32 */
static void setup(ifx *f) {
  ifx_init(f);
  int64_t s23[2] = {2, 3}, s26[2] = {2, 6}, s43[2] = {4, 3};
  ifx_input(f, "x0", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "x1", SC_DTYPE_F32, 2, s23);
  ifx_input(f, "xi", SC_DTYPE_I64, 2, s23);
  ifx_input(f, "y", SC_DTYPE_F32, 2, s26);
  ifx_input(f, "z", SC_DTYPE_F32, 2, s43);
  ifx_finish(f);
}

/* y = cat(tanh(x0), tanh(x0), dim=1): tanh(x0) = y[:, 0:3] (and y[:, 3:6]) */
static void test_unnamed_part(void) {
  ifx f;
  setup(&f);
  sc_id y = ifx_add(&f, "y");
  sc_id cat = ifx_add(&f, "cat(tanh(x0), tanh(x0), dim=1)");
  sc_id part = ifx_add(&f, "tanh(x0)");
  sc_egraph_union(ifx_eg(&f), y, cat, SC_JUST_ASSERTED);
  sc_id first = ifx_add(&f, "slice(y, dim=1, start=0, end=3)");
  sc_id second = ifx_add(&f, "slice(y, dim=1, start=3, end=6)");
  g_assert_false(ifx_same(&f, part, first));
  g_assert_true(sc_rel_cat_part_slices(&f.c));
  sc_egraph_rebuild(ifx_eg(&f));
  g_assert_true(ifx_same(&f, part, first));
  g_assert_true(ifx_same(&f, part, second));
  g_assert_false(sc_rel_cat_part_slices(&f.c)); /* done */
  ifx_clear(&f);
}

/* z = cat(x0, tanh(x1), dim=0): x0 keeps its name alone, tanh(x1) = z[2:4] */
static void test_named_part_alone(void) {
  ifx f;
  setup(&f);
  sc_id z = ifx_add(&f, "z");
  sc_id cat = ifx_add(&f, "cat(x0, tanh(x1), dim=0)");
  sc_id x0 = ifx_add(&f, "x0"), part = ifx_add(&f, "tanh(x1)");
  sc_egraph_union(ifx_eg(&f), z, cat, SC_JUST_ASSERTED);
  sc_id head = ifx_add(&f, "slice(z, dim=0, start=0, end=2)");
  sc_id tail = ifx_add(&f, "slice(z, dim=0, start=2, end=4)");
  g_assert_true(sc_rel_cat_part_slices(&f.c));
  sc_egraph_rebuild(ifx_eg(&f));
  g_assert_true(ifx_same(&f, part, tail));
  g_assert_false(ifx_same(&f, x0, head));
  ifx_clear(&f);
}

/* a cat that no tensor names, and a part of another dtype, are left alone */
static void test_left_alone(void) {
  ifx f;
  setup(&f);
  ifx_add(&f, "cat(tanh(x0), tanh(x1), dim=1)");
  g_assert_false(sc_rel_cat_part_slices(&f.c));
  sc_id y = ifx_add(&f, "y");
  sc_id mixed = ifx_add(&f, "cat(tanh(x0), neg(xi), dim=1)");
  sc_egraph_union(ifx_eg(&f), y, mixed, SC_JUST_ASSERTED);
  sc_egraph_rebuild(ifx_eg(&f));
  sc_id part = ifx_add(&f, "neg(xi)");
  g_assert_true(sc_rel_cat_part_slices(&f.c)); /* tanh(x0) only */
  sc_egraph_rebuild(ifx_eg(&f));
  sc_id first = ifx_add(&f, "slice(y, dim=1, start=0, end=3)");
  sc_id t0 = ifx_add(&f, "tanh(x0)");
  g_assert_true(ifx_same(&f, t0, first));
  uint32_t n = 0;
  sc_egraph_class_nodes_with_op(ifx_eg(&f), sc_egraph_find(ifx_eg(&f), part),
                                sc_ops_lookup("sc.slice.default", NULL)->id, &n);
  g_assert_cmpuint(n, ==, 0);
  ifx_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/cat-slices/unnamed-part", test_unnamed_part);
  g_test_add_func("/infer/cat-slices/named-part-alone", test_named_part_alone);
  g_test_add_func("/infer/cat-slices/left-alone", test_left_alone);
  return g_test_run();
}
