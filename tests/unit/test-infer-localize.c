/* test-infer-localize.c — where a failure is reported when the walk
 * carried a deferred relation (src/infer/localize.c, "A failure that no
 * pending chain explains"):
 *   spec    d = mm(a, w); z = neg(u); y = add(d, c)   (outputs y, z)
 *   rank r  y_r = addmm(c_r, a_r, w_r); z_r = neg(u_r)   (all replicated)
 * The impl never computes mm(a, w): d has no clean relation and is
 * deferred; y reads it and maps (addmm_to_add), so the correct bundle
 * refines.  Mutants:
 *   z-bug   z_r = abs(u_r): z fails while d is pending; z reads no deferred
 *           relation and d's chain settles at y, so the failure is z
 *           (before: d, stopped at z);
 *   y-bug   y_r = neg(addmm(...)): y, d's reader, fails: d is reported,
 *           stopped at y (the chain does not settle);
 *   both    z and y: z is held, then y fails: d, stopped at z (the result
 *           without holding).
 * The same with --jobs 2 (proofs made ahead, schedule.c).  And with every
 * node mapped but both outputs' expectations wrong, the failure names the
 * output that comes first in the walk (z), not in the bundle (y). */
#include "localize-fixture.h"

#define INPUTS(r)                                                                       \
  T("a_" r, "[2, 3]", RANK(r)) ", " T("w_" r, "[3, 4]", RANK(r)) ", "                   \
  T("c_" r, "[2, 4]", RANK(r)) ", " T("u_" r, "[4]", RANK(r))
/* rank R's nodes: y_R (addmm, then Y_OP when not NULL) and z_R (Z_OP) */
#define Y_PLAIN(r) NODE("y_" r, "aten.addmm.default", "[\"c_" r "\", \"a_" r "\", \"w_" r "\"]", "y_" r, "[2, 4]", RANK(r))
#define Y_NEG(r)                                                                        \
  NODE("p_" r, "aten.addmm.default", "[\"c_" r "\", \"a_" r "\", \"w_" r "\"]", "p_" r, "[2, 4]", RANK(r)) ", " \
  NODE("q_" r, "aten.neg.default", "[\"p_" r "\"]", "y_" r, "[2, 4]", RANK(r))
#define Z(r, op) NODE("z_" r, op, "[\"u_" r "\"]", "z_" r, "[4]", RANK(r))

#define EXPECT_RIGHT "{\"y\": [\"y_0\", \"y_1\"], \"z\": [\"z_0\", \"z_1\"]}"
/* y's and z's expectations both wrong (twice each replica), y first */
#define EXPECT_WRONG "{\"y\": [\"sum(y_0, y_1)\"], \"z\": [\"sum(z_0, z_1)\"]}"

static char *bundle_expect(const char *rank0, const char *rank1, const char *expect) {
  return g_strdup_printf(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"held\", \"symbols\": {}, \"assume\": [],"
      " \"spec\": {\"inputs\": [" T("a", "[2, 3]", "") ", " T("w", "[3, 4]", "") ", "
      T("c", "[2, 4]", "") ", " T("u", "[4]", "") "],"
      "  \"nodes\": [" NODE("d", "aten.mm.default", "[\"a\", \"w\"]", "d", "[2, 4]", "") ", "
      NODE("z", "aten.neg.default", "[\"u\"]", "z", "[4]", "") ", "
      NODE("y", "aten.add.Tensor", "[\"d\", \"c\"]", "y", "[2, 4]", "") "],"
      "  \"outputs\": [\"y\", \"z\"]},"
      " \"impl\": {\"inputs\": [" INPUTS("0") ", " INPUTS("1") "], \"nodes\": [%s, %s],"
      "  \"outputs\": [\"y_0\", \"y_1\", \"z_0\", \"z_1\"]},"
      " \"input_relation\": {\"a\": [\"a_0\", \"a_1\"], \"w\": [\"w_0\", \"w_1\"],"
      "  \"c\": [\"c_0\", \"c_1\"], \"u\": [\"u_0\", \"u_1\"]},"
      " \"expect_output_relation\": %s}",
      rank0, rank1, expect);
}

static char *bundle(const char *rank0, const char *rank1) {
  return bundle_expect(rank0, rank1, EXPECT_RIGHT);
}

static void test_correct(void) {
  lfx_run_case(bundle(Y_PLAIN("0") ", " Z("0", "aten.neg.default"),
                      Y_PLAIN("1") ", " Z("1", "aten.neg.default")),
               "held", SC_VERDICT_REFINES, NULL, NULL);
}

static void test_independent(void) {
  lfx_run_case(bundle(Y_PLAIN("0") ", " Z("0", "aten.abs.default"),
                      Y_PLAIN("1") ", " Z("1", "aten.abs.default")),
               "held", SC_VERDICT_FAILS, "z", NULL);
}

static void test_chain_fails(void) {
  lfx_run_case(bundle(Y_NEG("0") ", " Z("0", "aten.neg.default"),
                      Y_NEG("1") ", " Z("1", "aten.neg.default")),
               "held", SC_VERDICT_FAILS, "d", "y");
}

static void test_both(void) {
  lfx_run_case(bundle(Y_NEG("0") ", " Z("0", "aten.abs.default"),
                      Y_NEG("1") ", " Z("1", "aten.abs.default")),
               "held", SC_VERDICT_FAILS, "d", "z");
}

/* Every node maps but no expectation is found: the first in the walk's
 * order is reported (z's producer comes before y's), not the bundle's
 * first (y); src/infer/walk.c, collect_expectations. */
static void test_first_wrong_output(void) {
  lfx_run_case(bundle_expect(Y_PLAIN("0") ", " Z("0", "aten.neg.default"),
                             Y_PLAIN("1") ", " Z("1", "aten.neg.default"), EXPECT_WRONG),
               "held", SC_VERDICT_FAILS, "z", NULL);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/localize/held/correct", test_correct);
  g_test_add_func("/infer/localize/held/independent", test_independent);
  g_test_add_func("/infer/localize/held/chain-fails", test_chain_fails);
  g_test_add_func("/infer/localize/held/both", test_both);
  g_test_add_func("/infer/localize/first-wrong-output", test_first_wrong_output);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
