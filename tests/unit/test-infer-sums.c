/* test-infer-sums.c — the post-saturation hook "sums as multisets"
 * (src/infer/pass-sums.c): sums of three or more parts equal as multisets
 * are merged whatever their association and order; a sum whose parts are
 * partitioned by a sum the impl computes gains the sum over that impl
 * tensor; two-part sums and different multisets are left alone. */
#include "infer-fixture.h"

/* a .. e: [4] f32 impl tensors */
static void setup(ifx *f) {
  ifx_init(f);
  int64_t s4[1] = {4};
  const char *names[] = {"a", "b", "c", "d", "e"};
  for (int i = 0; i < 5; i++)
    ifx_input(f, names[i], SC_DTYPE_F32, 1, s4);
  ifx_finish(f);
}

static void test_association_and_order(void) {
  ifx f;
  setup(&f);
  sc_id x = ifx_add(&f, "sum(sum(a, b), c)");
  sc_id y = ifx_add(&f, "sum(c, sum(b, a))");
  sc_id z = ifx_add(&f, "sum(a, sum(c, b))");
  sc_id w = ifx_add(&f, "sum(a, sum(d, b))"); /* another multiset */
  g_assert_false(ifx_same(&f, x, y));
  g_assert_false(ifx_same(&f, x, z));
  g_assert_true(sc_rel_ac_merge_sums(&f.c));
  g_assert_true(ifx_same(&f, x, y));
  g_assert_true(ifx_same(&f, x, z));
  g_assert_false(ifx_same(&f, x, w));
  /* nothing left to merge */
  g_assert_false(sc_rel_ac_merge_sums(&f.c));
  ifx_clear(&f);
}

static void test_two_parts_left_alone(void) {
  ifx f;
  setup(&f);
  sc_id x = ifx_add(&f, "sum(a, b)");
  sc_id y = ifx_add(&f, "sum(b, a)");
  if (!ifx_same(&f, x, y)) /* unless lang orders them already */
    g_assert_false(sc_rel_ac_merge_sums(&f.c));
  ifx_clear(&f);
}

/* The spec's sum(a, b, c, d) against an impl tensor e = sum(a, c): the
 * spec's class gains sum(e, b, d). */
static void test_regroup_by_impl_sum(void) {
  ifx f;
  setup(&f);
  sc_id k = ifx_add(&f, "sum(sum(sum(a, b), c), d)");
  sc_id e = ifx_add(&f, "e");
  sc_id ac = ifx_add(&f, "sum(a, c)");
  sc_egraph_union(ifx_eg(&f), e, ac, SC_JUST_ASSERTED);
  sc_id t = ifx_add(&f, "sum(sum(e, b), d)");
  g_assert_false(ifx_same(&f, k, t));
  g_assert_true(sc_rel_ac_merge_sums(&f.c));
  g_assert_true(ifx_same(&f, k, t));
  ifx_clear(&f);
}

/* Multiplicity counts: a + a + b is not a + b + b. */
static void test_multiplicity(void) {
  ifx f;
  setup(&f);
  sc_id x = ifx_add(&f, "sum(sum(a, a), b)");
  sc_id y = ifx_add(&f, "sum(a, sum(b, b))");
  sc_id z = ifx_add(&f, "sum(a, sum(b, a))");
  sc_rel_ac_merge_sums(&f.c);
  g_assert_false(ifx_same(&f, x, y));
  g_assert_true(ifx_same(&f, x, z));
  ifx_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/sums/association-and-order", test_association_and_order);
  g_test_add_func("/infer/sums/two-parts", test_two_parts_left_alone);
  g_test_add_func("/infer/sums/regroup-by-impl-sum", test_regroup_by_impl_sum);
  g_test_add_func("/infer/sums/multiplicity", test_multiplicity);
  return g_test_run();
}
