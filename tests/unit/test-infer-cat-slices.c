/* test-infer-cat-slices.c — the copies in a named cat are its slices
 * (src/infer/pass-cat-slices.c, run by a visit that leaves an output
 * unmapped): a class holding an impl tensor y
 * and a cat chain along d in which a part with no tensor leaf stands at
 * two places or more (copies) makes that part a slice of y at its first
 * place; parts that stand once, named parts, cats of no tensor, and
 * parts of another dtype are left alone. */
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

/* y = cat(tanh(x0), tanh(x0), dim=1): tanh(x0) = y[:, 0:3] (its first place) */
static void test_unnamed_part(void) {
  ifx f;
  setup(&f);
  sc_id y = ifx_add(&f, "y");
  sc_id cat = ifx_add(&f, "cat(tanh(x0), tanh(x0), dim=1)");
  sc_id part = ifx_add(&f, "tanh(x0)");
  sc_egraph_union(ifx_eg(&f), y, cat, SC_JUST_ASSERTED);
  sc_id first = ifx_add(&f, "slice(y, dim=1, start=0, end=3)");
  g_assert_false(ifx_same(&f, part, first));
  g_assert_true(sc_rel_cat_part_slices(&f.c));
  sc_egraph_rebuild(ifx_eg(&f));
  g_assert_true(ifx_same(&f, part, first));
  g_assert_false(sc_rel_cat_part_slices(&f.c)); /* done */
  ifx_clear(&f);
}

/* z [4, 3] = cat(x0, tanh(x1), dim=0): tanh(x1) stands once (a block no
 * copy repeats), so nothing is named. */
static void test_single_part_alone(void) {
  ifx f;
  setup(&f);
  sc_id z = ifx_add(&f, "z");
  sc_id cat = ifx_add(&f, "cat(x0, tanh(x1), dim=0)");
  sc_egraph_union(ifx_eg(&f), z, cat, SC_JUST_ASSERTED);
  g_assert_false(sc_rel_cat_part_slices(&f.c));
  ifx_clear(&f);
}

/* a chain of three parts, copies at the first and the last place:
 * w [2, 9] = cat(cat(tanh(x0), tanh(x1)), tanh(x0)) gives tanh(x0) =
 * w[:, 0:3] (the middle part stands once) */
static void test_chain_copies(void) {
  ifx f;
  ifx_init(&f);
  int64_t s23[2] = {2, 3}, s29[2] = {2, 9};
  ifx_input(&f, "x0", SC_DTYPE_F32, 2, s23);
  ifx_input(&f, "x1", SC_DTYPE_F32, 2, s23);
  ifx_input(&f, "w", SC_DTYPE_F32, 2, s29);
  ifx_finish(&f);
  sc_id w = ifx_add(&f, "w");
  sc_id cat = ifx_add(&f, "cat(tanh(x0), tanh(x1), tanh(x0), dim=1)");
  sc_egraph_union(ifx_eg(&f), w, cat, SC_JUST_ASSERTED);
  sc_id t0 = ifx_add(&f, "tanh(x0)"), t1 = ifx_add(&f, "tanh(x1)");
  g_assert_true(sc_rel_cat_part_slices(&f.c));
  sc_egraph_rebuild(ifx_eg(&f));
  g_assert_true(ifx_same(&f, t0, ifx_add(&f, "slice(w, dim=1, start=0, end=3)")));
  g_assert_false(ifx_same(&f, t1, ifx_add(&f, "slice(w, dim=1, start=3, end=6)")));
  ifx_clear(&f);
}

/* a cat that no tensor names, and copies of another dtype, are left alone */
static void test_left_alone(void) {
  ifx f;
  setup(&f);
  ifx_add(&f, "cat(tanh(x0), tanh(x0), dim=1)");
  g_assert_false(sc_rel_cat_part_slices(&f.c));
  sc_id y = ifx_add(&f, "y");
  sc_id mixed = ifx_add(&f, "cat(neg(xi), neg(xi), dim=1)");
  sc_egraph_union(ifx_eg(&f), y, mixed, SC_JUST_ASSERTED);
  sc_egraph_rebuild(ifx_eg(&f));
  g_assert_false(sc_rel_cat_part_slices(&f.c));
  ifx_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/cat-slices/unnamed-part", test_unnamed_part);
  g_test_add_func("/infer/cat-slices/single-part-alone", test_single_part_alone);
  g_test_add_func("/infer/cat-slices/chain-copies", test_chain_copies);
  g_test_add_func("/infer/cat-slices/left-alone", test_left_alone);
  return g_test_run();
}
