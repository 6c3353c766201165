/* test-infer-replica-sums.c — src/infer/pass-replica-sums.c: a class
 * holding div.Scalar(S, n) and n distinct impl tensors (each rank's copy
 * of an average) makes S = sum(A, ..., A), named sum(a0, a1) with
 * distinct tensors of distinct ranks, also when the lemmas regrouped the
 * sum as binary sums (sum(A, sum(A, A))); two names of one rank's copy
 * are no two copies; fewer copies than n, or a divisor that is no
 * integer, change nothing. */
#include "infer-fixture.h"

/* a0, a1, a2: [4] f32 (copies of an average, on ranks 0, 1, 2); s0, s1:
 * [4] f32 (partials); d0: [4] f32, a second name of a0 on rank 0 */
static void setup(ifx *f) {
  ifx_init(f);
  int64_t s4[1] = {4};
  ifx_input(f, "a0", SC_DTYPE_F32, 1, s4);
  ifx_input(f, "a1", SC_DTYPE_F32, 1, s4);
  ifx_input(f, "a2", SC_DTYPE_F32, 1, s4);
  ifx_input(f, "s0", SC_DTYPE_F32, 1, s4);
  ifx_input(f, "s1", SC_DTYPE_F32, 1, s4);
  ifx_input(f, "d0", SC_DTYPE_F32, 1, s4);
  ifx_finish(f);
  f->c.owned = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  /* a0 on rank 0, a1 on rank 1, a2 on rank 2 (each rank's copy) */
  for (int r = 0; r < 3; r++) {
    char name[4];
    g_snprintf(name, sizeof name, "a%d", r);
    sc_graph_tensor(f->g, sc_graph_find_tensor(f->g, name))->rank = r;
  }
}

static void clear(ifx *f) {
  g_ptr_array_unref(f->c.owned);
  ifx_clear(f);
}

static void test_two_copies(void) {
  ifx f;
  setup(&f);
  sc_id s = ifx_add(&f, "sum(s0, s1)");
  sc_id avg = ifx_add(&f, "div.Scalar(sum(s0, s1), other=2)");
  sc_id a0 = ifx_add(&f, "a0"), a1 = ifx_add(&f, "a1");
  sc_egraph_union(ifx_eg(&f), avg, a0, SC_JUST_ASSERTED);
  sc_egraph_union(ifx_eg(&f), avg, a1, SC_JUST_ASSERTED);
  sc_id twice = ifx_add(&f, "sum(a0, a0)");
  g_assert_false(ifx_same(&f, s, twice));
  g_assert_true(sc_rel_replica_sums(&f.c));
  g_assert_true(ifx_same(&f, s, twice));
  GPtrArray *out = g_ptr_array_new();
  sc_rel_replica_sum_exprs(&f.c, s, out);
  g_assert_cmpuint(out->len, ==, 1);
  g_autofree char *text = sc_texpr_to_string(g_ptr_array_index(out, 0));
  g_assert_true(strcmp(text, "sum(a0, a1)") == 0 || strcmp(text, "sum(a1, a0)") == 0);
  g_ptr_array_unref(out);
  g_assert_false(sc_rel_replica_sums(&f.c)); /* done */
  clear(&f);
}

/* The sum of n copies named when the class holds it only as nested
 * binary sums (accum.lemma and the AC pass regroup sums so): seed 13030,
 * where mm_6 = sum(A, sum(A, ...)) of the six ranks' copies was left
 * unnamed and the failure stopped before the node whose values diverge. */
static void test_nested_sums(void) {
  ifx f;
  setup(&f);
  sc_id s = ifx_add(&f, "sum(s0, s1)");
  sc_id a0 = ifx_add(&f, "a0"), a1 = ifx_add(&f, "a1"), a2 = ifx_add(&f, "a2");
  sc_egraph_union(ifx_eg(&f), a0, a1, SC_JUST_ASSERTED);
  sc_egraph_union(ifx_eg(&f), a0, a2, SC_JUST_ASSERTED);
  sc_id nested = ifx_add(&f, "sum(a0, sum(a0, a0))");
  sc_egraph_union(ifx_eg(&f), s, nested, SC_JUST_ASSERTED);
  GPtrArray *out = g_ptr_array_new();
  sc_rel_replica_sum_exprs(&f.c, s, out);
  g_assert_cmpuint(out->len, >=, 1);
  for (guint i = 0; i < out->len; i++) {
    g_autofree char *text = sc_texpr_to_string(g_ptr_array_index(out, i));
    /* three distinct tensors, each once */
    g_assert_true(g_str_has_prefix(text, "sum("));
    g_assert_nonnull(strstr(text, "a0"));
    g_assert_nonnull(strstr(text, "a1"));
    g_assert_nonnull(strstr(text, "a2"));
  }
  g_ptr_array_unref(out);
  clear(&f);
}

/* Two names of one rank's tensor (a0 and its alias d0, both on rank 0)
 * are one copy: their sum is a scaling, never named (bug_grad_accumulation:
 * one rank's loss added four times, under four detached names). */
static void test_one_rank_aliases(void) {
  ifx f;
  setup(&f);
  sc_graph_tensor(f.g, sc_graph_find_tensor(f.g, "d0"))->rank = 0;
  sc_id s = ifx_add(&f, "sum(s0, s1)");
  sc_id a0 = ifx_add(&f, "a0"), d0 = ifx_add(&f, "d0");
  sc_egraph_union(ifx_eg(&f), a0, d0, SC_JUST_ASSERTED);
  sc_id twice = ifx_add(&f, "sum(a0, a0)");
  sc_egraph_union(ifx_eg(&f), s, twice, SC_JUST_ASSERTED);
  GPtrArray *out = g_ptr_array_new();
  sc_rel_replica_sum_exprs(&f.c, s, out);
  g_assert_cmpuint(out->len, ==, 0);
  g_ptr_array_unref(out);
  clear(&f);
}

static void test_too_few_copies(void) {
  ifx f;
  setup(&f);
  sc_id s = ifx_add(&f, "sum(s0, s1)");
  sc_id avg = ifx_add(&f, "div.Scalar(sum(s0, s1), other=3)");
  sc_id a0 = ifx_add(&f, "a0"), a1 = ifx_add(&f, "a1");
  sc_egraph_union(ifx_eg(&f), avg, a0, SC_JUST_ASSERTED);
  sc_egraph_union(ifx_eg(&f), avg, a1, SC_JUST_ASSERTED);
  g_assert_false(sc_rel_replica_sums(&f.c));
  GPtrArray *out = g_ptr_array_new();
  sc_rel_replica_sum_exprs(&f.c, s, out);
  g_assert_cmpuint(out->len, ==, 0);
  g_ptr_array_unref(out);
  clear(&f);
}

static void test_not_an_integer(void) {
  ifx f;
  setup(&f);
  sc_id avg = ifx_add(&f, "div.Scalar(sum(s0, s1), other=2.5)");
  sc_id a0 = ifx_add(&f, "a0"), a1 = ifx_add(&f, "a1"), a2 = ifx_add(&f, "a2");
  sc_egraph_union(ifx_eg(&f), avg, a0, SC_JUST_ASSERTED);
  sc_egraph_union(ifx_eg(&f), avg, a1, SC_JUST_ASSERTED);
  sc_egraph_union(ifx_eg(&f), avg, a2, SC_JUST_ASSERTED);
  g_assert_false(sc_rel_replica_sums(&f.c));
  clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/replica-sums/two-copies", test_two_copies);
  g_test_add_func("/infer/replica-sums/nested-sums", test_nested_sums);
  g_test_add_func("/infer/replica-sums/one-rank-aliases", test_one_rank_aliases);
  g_test_add_func("/infer/replica-sums/too-few-copies", test_too_few_copies);
  g_test_add_func("/infer/replica-sums/not-an-integer", test_not_an_integer);
  return g_test_run();
}
