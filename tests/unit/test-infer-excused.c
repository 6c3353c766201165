/* test-infer-excused.c — a deferred node that is a broadcast sum is not
 * where a failing walk is reported (src/infer/localize.c, "A deferred
 * node that is a broadcast sum"):
 *   spec    x = OP(s, m); y = exp(x); o = tanh(y)    (output o;
 *           s [2, 4], m [4] broadcast over the rows)
 *   rank r  x_r = OP(S_r, m_r); y_r = exp(x_r); o_r = tanh(y_r)
 *           (replicated; S_r = s_r, or neg(s_r) in the mutants)
 * In the mutants the impl never computes OP(s, m): x is deferred, y (an
 * exp of it) is deferred, and the checked output o fails.  With OP = add
 * the spec's x is s_r plus two copies of m_r, clean up to the broadcast
 * (sum(s_r, cat(m_r, m_r))): the failure is y's, stopped at o (before:
 * x, stopped at o).  With OP = mul it is x's, stopped at o, as before.
 * The correct bundles refine.  Each with --jobs 1 and 2. */
#include "localize-fixture.h"

#define INPUTS(r) T("s_" r, "[2, 4]", RANK(r)) ", " T("m_" r, "[4]", RANK(r))

/* rank R's nodes: the scores S (s_R or its negation), then x, y, o */
static char *rank_nodes(const char *r, const char *op, gboolean bug) {
  char *pre = bug ? g_strdup_printf("{\"name\": \"n_%s\", \"op\": \"aten.neg.default\", \"args\": "
                                    "[\"s_%s\"], \"kwargs\": {}, \"outputs\": [{\"name\": \"n_%s\", "
                                    "\"shape\": [2, 4], \"dtype\": \"f32\", \"rank\": %s}]},",
                                    r, r, r, r)
                  : g_strdup("");
  char *out = g_strdup_printf(
      "%s{\"name\": \"x_%s\", \"op\": \"%s\", \"args\": [\"%s_%s\", \"m_%s\"], \"kwargs\": {},"
      " \"outputs\": [{\"name\": \"x_%s\", \"shape\": [2, 4], \"dtype\": \"f32\", \"rank\": %s}]},"
      "{\"name\": \"y_%s\", \"op\": \"aten.exp.default\", \"args\": [\"x_%s\"], \"kwargs\": {},"
      " \"outputs\": [{\"name\": \"y_%s\", \"shape\": [2, 4], \"dtype\": \"f32\", \"rank\": %s}]},"
      "{\"name\": \"o_%s\", \"op\": \"aten.tanh.default\", \"args\": [\"y_%s\"], \"kwargs\": {},"
      " \"outputs\": [{\"name\": \"o_%s\", \"shape\": [2, 4], \"dtype\": \"f32\", \"rank\": %s}]}",
      pre, r, op, bug ? "n" : "s", r, r, r, r, r, r, r, r, r, r, r, r);
  g_free(pre);
  return out;
}

static char *bundle(const char *op, gboolean bug) {
  char *r0 = rank_nodes("0", op, bug), *r1 = rank_nodes("1", op, bug);
  char *json = g_strdup_printf(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"excused\", \"symbols\": {}, \"assume\": [],"
      " \"spec\": {\"inputs\": [" T("s", "[2, 4]", "") ", " T("m", "[4]", "") "],"
      "  \"nodes\": [{\"name\": \"x\", \"op\": \"%s\", \"args\": [\"s\", \"m\"], \"kwargs\": {},"
      "   \"outputs\": [" T("x", "[2, 4]", "") "]}, "
      NODE("y", "aten.exp.default", "[\"x\"]", "y", "[2, 4]", "") ", "
      NODE("o", "aten.tanh.default", "[\"y\"]", "o", "[2, 4]", "") "],"
      "  \"outputs\": [\"o\"]},"
      " \"impl\": {\"inputs\": [" INPUTS("0") ", " INPUTS("1") "], \"nodes\": [%s, %s],"
      "  \"outputs\": [\"o_0\", \"o_1\"]},"
      " \"input_relation\": {\"s\": [\"s_0\", \"s_1\"], \"m\": [\"m_0\", \"m_1\"]},"
      " \"expect_output_relation\": {\"o\": [\"o_0\", \"o_1\"]}}",
      op, r0, r1);
  g_free(r0);
  g_free(r1);
  return json;
}

static void test_add_correct(void) {
  lfx_run_case(bundle("aten.add.Tensor", FALSE), "excused", SC_VERDICT_REFINES, NULL, NULL);
}

static void test_mul_correct(void) {
  lfx_run_case(bundle("aten.mul.Tensor", FALSE), "excused", SC_VERDICT_REFINES, NULL, NULL);
}

static void test_add_excused(void) {
  lfx_run_case(bundle("aten.add.Tensor", TRUE), "excused", SC_VERDICT_FAILS, "y", "o");
}

static void test_mul_not_excused(void) {
  lfx_run_case(bundle("aten.mul.Tensor", TRUE), "excused", SC_VERDICT_FAILS, "x", "o");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/localize/excused/add-correct", test_add_correct);
  g_test_add_func("/infer/localize/excused/mul-correct", test_mul_correct);
  g_test_add_func("/infer/localize/excused/add", test_add_excused);
  g_test_add_func("/infer/localize/excused/mul", test_mul_not_excused);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
