/* test-infer-driver.c — four parts of the driver:
 *  - given.c: a checked output that is a spec input (a gradient seed
 *    returned as a gradient) gets its output relation from a visit of its
 *    own, and its expectation is proved there (a swapped one is not);
 *  - cut-forms.c / relation.c: past max_terms families of single names, the
 *    cut form (a cat of every rank's piece) is kept aside by
 *    sc_rel_clean_exprs_cuts and not by sc_rel_clean_exprs, with the same
 *    answer whether it goes on from sc_rel_clean_exprs's call or not;
 *  - localize.c: a limit at a node that reads a deferred relation, while
 *    the first deferred node's failure is pending, gives way to that failure;
 *    anywhere else it does not;
 *  - walk.c: an expectation not found at a node before the one the walk
 *    fails at is the failure (unexpected_relation at its producer); one
 *    after it leaves the earlier failure;
 *  - trel.c: a rank's zero term x + detach(zeros_like(b)), where another
 *    rank adds the bias b before the all_reduce, joins the exploration (a
 *    creation node that reads only its input's shape is a constant); a
 *    ones_like there is no proof. */
#include "infer-fixture.h"

static sc_infer_result *run(const char *json, sc_bundle **bp) {
  return ifx_run_json(json, "given", NULL, bp);
}

#define T(name, shape, extra) "{\"name\": \"" name "\", \"shape\": " shape ", \"dtype\": \"f32\"" extra "}"

/* spec: y = neg(x), outputs y and g (a spec input); impl: 2 ranks, each
 * negates its rows of x and returns a clone of its rows of g. */
static char *given_bundle(const char *expect_g) {
  return g_strdup_printf(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"given\", \"symbols\": {}, \"assume\": [],"
      " \"spec\": {\"inputs\": [" T("x", "[4, 2]", "") ", " T("g", "[4, 2]", "") "],"
      "  \"nodes\": [{\"name\": \"neg\", \"op\": \"aten.neg.default\", \"args\": [\"x\"],"
      "   \"kwargs\": {}, \"outputs\": [" T("y", "[4, 2]", "") "]}],"
      "  \"outputs\": [\"y\", \"g\"]},"
      " \"impl\": {\"inputs\": [" T("x_0", "[2, 2]", ", \"rank\": 0") ", "
      T("x_1", "[2, 2]", ", \"rank\": 1") ", " T("g_0", "[2, 2]", ", \"rank\": 0") ", "
      T("g_1", "[2, 2]", ", \"rank\": 1") "],"
      "  \"nodes\": ["
      "   {\"name\": \"neg\", \"op\": \"aten.neg.default\", \"args\": [\"x_0\"], \"kwargs\": {},"
      "    \"outputs\": [" T("y_0", "[2, 2]", ", \"rank\": 0") "]},"
      "   {\"name\": \"neg_1\", \"op\": \"aten.neg.default\", \"args\": [\"x_1\"], \"kwargs\": {},"
      "    \"outputs\": [" T("y_1", "[2, 2]", ", \"rank\": 1") "]},"
      "   {\"name\": \"clone\", \"op\": \"aten.clone.default\", \"args\": [\"g_0\"], \"kwargs\": {},"
      "    \"outputs\": [" T("gc_0", "[2, 2]", ", \"rank\": 0") "]},"
      "   {\"name\": \"clone_1\", \"op\": \"aten.clone.default\", \"args\": [\"g_1\"], \"kwargs\": {},"
      "    \"outputs\": [" T("gc_1", "[2, 2]", ", \"rank\": 1") "]}],"
      "  \"outputs\": [\"y_0\", \"y_1\", \"gc_0\", \"gc_1\"]},"
      " \"input_relation\": {\"x\": [\"cat(x_0, x_1, dim=0)\"], \"g\": [\"cat(g_0, g_1, dim=0)\"]},"
      " \"expect_output_relation\": {\"y\": [\"cat(y_0, y_1, dim=0)\"], \"g\": [\"%s\"]}}",
      expect_g);
}

static gboolean has_text(const GPtrArray *a, const char *s) {
  for (guint i = 0; a != NULL && i < a->len; i++)
    if (strcmp(g_ptr_array_index(a, i), s) == 0)
      return TRUE;
  return FALSE;
}

static void test_given_output(void) {
  g_autofree char *json = given_bundle("cat(gc_0, gc_1, dim=0)");
  sc_bundle *b = NULL;
  sc_infer_result *r = run(json, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  /* g is spec tensor 1 (inputs first) */
  g_assert_true(has_text(sc_infer_output_exprs(r, 1), "cat(gc_0, gc_1, dim=0)"));
  for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++)
    g_assert_true(sc_infer_expectation_at(r, i)->found);
  g_assert_null(sc_infer_first_unfound_expectation(r));
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

static void test_given_swapped(void) {
  g_autofree char *json = given_bundle("cat(gc_1, gc_0, dim=0)");
  sc_bundle *b = NULL;
  sc_infer_result *r = run(json, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_FAILS);
  g_assert_cmpint(sc_infer_failure_kind(r), ==, SC_FAILURE_UNEXPECTED_RELATION);
  const sc_infer_expectation *e = sc_infer_first_unfound_expectation(r);
  g_assert_nonnull(e);
  g_assert_cmpstr(e->text, ==, "cat(gc_1, gc_0, dim=0)");
  g_assert_true(e->decided);
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

/* spec: y = neg(x) and w = exp(y), both outputs; impl: 2 ranks, each
 * negates its rows of x (y_r) and returns exp of its rows of x (w_r:
 * wrong, so the walk fails at exp).  With EXP_FIRST, spec: w = exp(x),
 * y = neg(w); impl: w_r = neg(x_r) (wrong: the walk fails at exp, before
 * neg), y_r = neg(w_r).  y is expected as EXPECT_Y. */
static char *order_bundle(const char *expect_y, gboolean exp_first) {
  const char *spec_nodes =
      exp_first
          ? "{\"name\": \"exp\", \"op\": \"aten.exp.default\", \"args\": [\"x\"], \"kwargs\": {},"
            " \"outputs\": [" T("w", "[4, 2]", "") "]},"
            "{\"name\": \"neg\", \"op\": \"aten.neg.default\", \"args\": [\"w\"], \"kwargs\": {},"
            " \"outputs\": [" T("y", "[4, 2]", "") "]}"
          : "{\"name\": \"neg\", \"op\": \"aten.neg.default\", \"args\": [\"x\"], \"kwargs\": {},"
            " \"outputs\": [" T("y", "[4, 2]", "") "]},"
            "{\"name\": \"exp\", \"op\": \"aten.exp.default\", \"args\": [\"y\"], \"kwargs\": {},"
            " \"outputs\": [" T("w", "[4, 2]", "") "]}";
  const char *w_op = exp_first ? "neg" : "exp";
  return g_strdup_printf(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"order\", \"symbols\": {}, \"assume\": [],"
      " \"spec\": {\"inputs\": [" T("x", "[4, 2]", "") "],"
      "  \"nodes\": [%s], \"outputs\": [\"y\", \"w\"]},"
      " \"impl\": {\"inputs\": [" T("x_0", "[2, 2]", ", \"rank\": 0") ", "
      T("x_1", "[2, 2]", ", \"rank\": 1") "],"
      "  \"nodes\": ["
      "   {\"name\": \"w\", \"op\": \"aten.%s.default\", \"args\": [\"x_0\"], \"kwargs\": {},"
      "    \"outputs\": [" T("w_0", "[2, 2]", ", \"rank\": 0") "]},"
      "   {\"name\": \"w_1\", \"op\": \"aten.%s.default\", \"args\": [\"x_1\"], \"kwargs\": {},"
      "    \"outputs\": [" T("w_1", "[2, 2]", ", \"rank\": 1") "]},"
      "   {\"name\": \"neg\", \"op\": \"aten.neg.default\", \"args\": [\"%s\"], \"kwargs\": {},"
      "    \"outputs\": [" T("y_0", "[2, 2]", ", \"rank\": 0") "]},"
      "   {\"name\": \"neg_1\", \"op\": \"aten.neg.default\", \"args\": [\"%s\"], \"kwargs\": {},"
      "    \"outputs\": [" T("y_1", "[2, 2]", ", \"rank\": 1") "]}],"
      "  \"outputs\": [\"y_0\", \"y_1\", \"w_0\", \"w_1\"]},"
      " \"input_relation\": {\"x\": [\"cat(x_0, x_1, dim=0)\"]},"
      " \"expect_output_relation\": {\"y\": [\"%s\"]}}",
      spec_nodes, w_op, w_op, exp_first ? "w_0" : "x_0", exp_first ? "w_1" : "x_1", expect_y);
}

/* The failure of the order bundle: its kind and node's name. */
static void assert_order_failure(const char *expect_y, gboolean exp_first, sc_failure_kind kind,
                                 const char *node) {
  g_autofree char *json = order_bundle(expect_y, exp_first);
  sc_bundle *b = NULL;
  sc_infer_result *r = run(json, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_FAILS);
  g_assert_cmpint(sc_infer_failure_kind(r), ==, kind);
  g_assert_cmpstr(sc_graph_node(sc_bundle_spec(b), sc_infer_failure_node(r))->name, ==, node);
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

static void test_expectation_before_failure(void) {
  /* the right expectation: the walk's failure at exp stands */
  assert_order_failure("cat(y_0, y_1, dim=0)", FALSE, SC_FAILURE_UNMAPPED, "exp");
  /* a swapped one is decided at neg, before exp: the failure is there */
  assert_order_failure("cat(y_1, y_0, dim=0)", FALSE, SC_FAILURE_UNEXPECTED_RELATION, "neg");
  /* neg reads exp's output: the walk stops at exp and never decides y's
   * expectation, so exp's failure stands */
  assert_order_failure("cat(y_1, y_0, dim=0)", TRUE, SC_FAILURE_UNMAPPED, "exp");
}

/* spec: z = neg(x + b); impl: x a sum of 2 partials, rank 0 adds b, rank
 * 1 adds detach(LIKE(b)), all_reduce, rank 0 negates. */
static char *bias_bundle(const char *like) {
  return g_strdup_printf(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"bias\", \"symbols\": {}, \"assume\": [],"
      " \"spec\": {\"inputs\": [" T("x", "[4, 2]", "") ", " T("b", "[2]", "") "],"
      "  \"nodes\": [{\"name\": \"add\", \"op\": \"aten.add.Tensor\", \"args\": [\"x\", \"b\"],"
      "   \"kwargs\": {}, \"outputs\": [" T("y", "[4, 2]", "") "]},"
      "   {\"name\": \"neg\", \"op\": \"aten.neg.default\", \"args\": [\"y\"],"
      "   \"kwargs\": {}, \"outputs\": [" T("z", "[4, 2]", "") "]}],"
      "  \"outputs\": [\"z\"]},"
      " \"impl\": {\"inputs\": [" T("x_0", "[4, 2]", ", \"rank\": 0") ", "
      T("x_1", "[4, 2]", ", \"rank\": 1") ", " T("b_0", "[2]", ", \"rank\": 0") ", "
      T("b_1", "[2]", ", \"rank\": 1") "],"
      "  \"nodes\": ["
      "   {\"name\": \"add\", \"op\": \"aten.add.Tensor\", \"args\": [\"x_0\", \"b_0\"], \"kwargs\": {},"
      "    \"outputs\": [" T("y_0", "[4, 2]", ", \"rank\": 0") "]},"
      "   {\"name\": \"like\", \"op\": \"aten.%s.default\", \"args\": [\"b_1\"], \"kwargs\": {},"
      "    \"outputs\": [" T("zb_1", "[2]", ", \"rank\": 1") "]},"
      "   {\"name\": \"detach\", \"op\": \"aten.detach.default\", \"args\": [\"zb_1\"], \"kwargs\": {},"
      "    \"outputs\": [" T("zd_1", "[2]", ", \"rank\": 1") "]},"
      "   {\"name\": \"add_1\", \"op\": \"aten.add.Tensor\", \"args\": [\"x_1\", \"zd_1\"], \"kwargs\": {},"
      "    \"outputs\": [" T("y_1", "[4, 2]", ", \"rank\": 1") "]},"
      "   {\"name\": \"all_reduce\", \"op\": \"comm.all_reduce.default\", \"args\": [[\"y_0\", \"y_1\"]],"
      "    \"kwargs\": {}, \"outputs\": [" T("s_0", "[4, 2]", ", \"rank\": 0") ", "
      T("s_1", "[4, 2]", ", \"rank\": 1") "]},"
      "   {\"name\": \"neg\", \"op\": \"aten.neg.default\", \"args\": [\"s_0\"], \"kwargs\": {},"
      "    \"outputs\": [" T("z_0", "[4, 2]", ", \"rank\": 0") "]}],"
      "  \"outputs\": [\"z_0\"]},"
      " \"input_relation\": {\"x\": [\"sum(x_0, x_1)\"], \"b\": [\"b_0\", \"b_1\"]},"
      " \"expect_output_relation\": {\"z\": [\"z_0\"]}}",
      like);
}

static void test_zero_term(void) {
  g_autofree char *json = bias_bundle("zeros_like");
  sc_bundle *b = NULL;
  sc_infer_result *r = run(json, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  sc_infer_result_free(r);
  sc_bundle_free(b);
  g_autofree char *ones = bias_bundle("ones_like");
  r = run(ones, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_FAILS);
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

/* 24 replicas a0..a23 [8] of one tensor, and its 8 pieces p0..p7 [1]. */
static void test_cut_forms(void) {
  ifx f;
  ifx_init(&f);
  int64_t s8[1] = {8}, s1[1] = {1};
  for (int i = 0; i < 24; i++) {
    g_autofree char *n = g_strdup_printf("a%d", i);
    ifx_input(&f, n, SC_DTYPE_F32, 1, s8);
  }
  for (int i = 0; i < 8; i++) {
    g_autofree char *n = g_strdup_printf("p%d", i);
    ifx_input(&f, n, SC_DTYPE_F32, 1, s1);
  }
  ifx_finish(&f);
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  f.c.opts = &opts;
  f.c.term_size = 64;
  f.c.owned = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  sc_id cls = ifx_add(&f, "cat(p0, p1, p2, p3, p4, p5, p6, p7, dim=0)");
  for (int i = 0; i < 24; i++) {
    g_autofree char *n = g_strdup_printf("a%d", i);
    sc_egraph_union(ifx_eg(&f), cls, ifx_add(&f, n), SC_JUST_ASSERTED);
  }
  sc_egraph_rebuild(ifx_eg(&f));
  GPtrArray *plain = g_ptr_array_new(), *out = g_ptr_array_new(), *cuts = g_ptr_array_new();
  sc_rel_clean_exprs(&f.c, cls, NULL, plain);
  g_assert_cmpuint(plain->len, ==, opts.max_terms);
  GPtrArray *ptexts = sc_rel_texts_of(plain);
  g_assert_false(has_text(ptexts, "cat(p0, p1, p2, p3, p4, p5, p6, p7, dim=0)"));
  sc_rel_clean_exprs_cuts(&f.c, cls, out, cuts);
  g_assert_cmpuint(out->len, ==, opts.max_terms);
  GPtrArray *ctexts = sc_rel_texts_of(cuts);
  g_assert_cmpuint(ctexts->len, ==, 1);
  g_assert_true(has_text(ctexts, "cat(p0, p1, p2, p3, p4, p5, p6, p7, dim=0)"));
  /* that call went on from where sc_rel_clean_exprs stopped (relation.c's
   * resume); the same call again (the resume is used once) and one on an
   * empty memo give the same relation and cut forms */
  GPtrArray *otexts = sc_rel_texts_of(out);
  for (int round = 0; round < 2; round++) {
    if (round == 1)
      sc_rel_exprs_memo_reset(&f.c);
    GPtrArray *out2 = g_ptr_array_new(), *cuts2 = g_ptr_array_new();
    sc_rel_clean_exprs_cuts(&f.c, cls, out2, cuts2);
    GPtrArray *o2 = sc_rel_texts_of(out2), *c2 = sc_rel_texts_of(cuts2);
    g_assert_cmpuint(o2->len, ==, otexts->len);
    for (guint i = 0; i < o2->len; i++)
      g_assert_cmpstr(g_ptr_array_index(o2, i), ==, g_ptr_array_index(otexts, i));
    g_assert_cmpuint(c2->len, ==, ctexts->len);
    for (guint i = 0; i < c2->len; i++)
      g_assert_cmpstr(g_ptr_array_index(c2, i), ==, g_ptr_array_index(ctexts, i));
    g_ptr_array_unref(o2);
    g_ptr_array_unref(c2);
    g_ptr_array_unref(out2);
    g_ptr_array_unref(cuts2);
  }
  g_ptr_array_unref(otexts);
  g_ptr_array_unref(ptexts);
  g_ptr_array_unref(ctexts);
  g_ptr_array_unref(plain);
  g_ptr_array_unref(out);
  g_ptr_array_unref(cuts);
  sc_rel_exprs_memo_reset(&f.c); /* sc_rel_clean_exprs's memo (relation.c) */
  g_ptr_array_unref(f.c.owned);
  ifx_clear(&f);
}

static void test_limit_in_deferred_chain(void) {
  sc_rel_ctx c;
  memset(&c, 0, sizeof c);
  sc_infer_result res;
  memset(&res, 0, sizeof res);
  c.res = &res;
  uint32_t depth[3] = {0, 1, 0};
  c.defer_depth = depth;
  sc_id reads_deferred[2] = {0, 1}, reads_clean[2] = {0, 2};
  sc_node n;
  memset(&n, 0, sizeof n);
  n.n_inputs = 2;
  n.inputs = reads_deferred;
  res.verdict = SC_VERDICT_FAILS;
  c.pending = TRUE;
  g_assert_true(sc_rel_limit_in_deferred_chain(&c, &n, "node limit"));
  g_assert_false(sc_rel_limit_in_deferred_chain(&c, &n, NULL)); /* no limit */
  n.inputs = reads_clean;
  g_assert_false(sc_rel_limit_in_deferred_chain(&c, &n, "node limit")); /* not in the chain */
  n.inputs = reads_deferred;
  c.pending = FALSE;
  g_assert_false(sc_rel_limit_in_deferred_chain(&c, &n, "node limit")); /* nothing pending */
  c.pending = TRUE;
  res.verdict = SC_VERDICT_LIMIT;
  g_assert_false(sc_rel_limit_in_deferred_chain(&c, &n, "node limit"));
}

/* The widened exploration's depth grows with the ranks (trel.c): a rank
 * merging n blocks one by one (ring attention's running max) chains two
 * operators per block; ring-attention-online-4 needs 10 hops. */
static void test_widen_hops(void) {
  for (uint32_t n = 0; n <= 3; n++)
    g_assert_cmpuint(sc_rel_widen_hops(n), ==, WIDEN_HOPS);
  g_assert_cmpuint(sc_rel_widen_hops(4), ==, 10);
  g_assert_cmpuint(sc_rel_widen_hops(6), ==, 14);
  for (uint32_t n = 1; n < 64; n++)
    g_assert_cmpuint(sc_rel_widen_hops(n + 1), >=, sc_rel_widen_hops(n));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/given/output", test_given_output);
  g_test_add_func("/infer/given/swapped", test_given_swapped);
  g_test_add_func("/infer/expectations/before-failure", test_expectation_before_failure);
  g_test_add_func("/infer/cut-forms/kept-aside", test_cut_forms);
  g_test_add_func("/infer/localize/limit-in-deferred-chain", test_limit_in_deferred_chain);
  g_test_add_func("/infer/trel/zero-term", test_zero_term);
  g_test_add_func("/infer/trel/widen-hops", test_widen_hops);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
