/* test-infer-dups.c — duplicate impl nodes (src/infer/dups.c, trel.c): a
 * duplicate whose inputs are not related at a visit still counts as
 * related wherever a member of its set is, and is explored (with that
 * member) when a consumer needs it.  Autograd computes a product twice
 * (a layer-norm backward's mul(d, xhat)); the spec's copy carries the
 * representative's relation, and the impl's add reads the duplicate:
 *   spec    m = mul(x, w); s = neg(m); m2 = mul(x, w); n = neg(v); y = add(n, m2)
 *   rank r  m_r = mul(x_r, w_r); s_r = neg(m_r); d_r = mul(x_r, w_r);
 *           n_r = neg(v_r); y_r = add(n_r, d_r)
 * At m's and m2's visits y_r is not ready (n_r is not related), so d_r
 * stays dormant and m2's relation names only m_r; at y's visit d_r's
 * inputs are not related.  Refines, y = cat(y_0, y_1), with and without
 * the memo. */
#include "infer-fixture.h"

static sc_infer_result *run(const char *json, gboolean no_memo, sc_bundle **bp) {
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.no_memo = no_memo;
  return ifx_run_json(json, "dups", &opts, bp);
}

#define T(name, shape, extra) "{\"name\": \"" name "\", \"shape\": " shape ", \"dtype\": \"f32\"" extra "}"
#define NODE(name, op, a, b, rank)                                                      \
  "{\"name\": \"" name "\", \"op\": \"" op "\", \"args\": [\"" a "\"" b "], \"kwargs\": {},"   \
  " \"outputs\": [" T(name, "[2, 3]", rank) "]}"
#define SNODE(name, op, a, b)                                                           \
  "{\"name\": \"" name "\", \"op\": \"" op "\", \"args\": [\"" a "\"" b "], \"kwargs\": {},"   \
  " \"outputs\": [" T(name, "[4, 3]", "") "]}"
#define RANK(r)                                                                         \
  NODE("m_" r, "aten.mul.Tensor", "x_" r, ", \"w_" r "\"", ", \"rank\": " r) ", "        \
  NODE("s_" r, "aten.neg.default", "m_" r, "", ", \"rank\": " r) ", "                  \
  NODE("d_" r, "aten.mul.Tensor", "x_" r, ", \"w_" r "\"", ", \"rank\": " r) ", "        \
  NODE("n_" r, "aten.neg.default", "v_" r, "", ", \"rank\": " r) ", "                  \
  NODE("y_" r, "aten.add.Tensor", "n_" r, ", \"d_" r "\"", ", \"rank\": " r)
#define IN(a) T(a "_0", "[2, 3]", ", \"rank\": 0") ", " T(a "_1", "[2, 3]", ", \"rank\": 1")

static const char *bundle =
    "{\"format\": \"shardcheck-bundle/1\", \"name\": \"dups\", \"symbols\": {}, \"assume\": [],"
    " \"spec\": {\"inputs\": [" T("x", "[4, 3]", "") ", " T("w", "[4, 3]", "") ", "
    T("v", "[4, 3]", "") "],"
    "  \"nodes\": [" SNODE("m", "aten.mul.Tensor", "x", ", \"w\"") ", "
    SNODE("s", "aten.neg.default", "m", "") ", " SNODE("m2", "aten.mul.Tensor", "x", ", \"w\"") ", "
    SNODE("n", "aten.neg.default", "v", "") ", " SNODE("y", "aten.add.Tensor", "n", ", \"m2\"") "],"
    "  \"outputs\": [\"s\", \"y\"]},"
    " \"impl\": {\"inputs\": [" IN("x") ", " IN("w") ", " IN("v") "],"
    "  \"nodes\": [" RANK("0") ", " RANK("1") "],"
    "  \"outputs\": [\"s_0\", \"s_1\", \"y_0\", \"y_1\"]},"
    " \"input_relation\": {\"x\": [\"cat(x_0, x_1, dim=0)\"], \"w\": [\"cat(w_0, w_1, dim=0)\"],"
    "  \"v\": [\"cat(v_0, v_1, dim=0)\"]},"
    " \"expect_output_relation\": {\"s\": [\"cat(s_0, s_1, dim=0)\"],"
    "  \"y\": [\"cat(y_0, y_1, dim=0)\"]}}";

static void check(gboolean no_memo) {
  sc_bundle *b = NULL;
  sc_infer_result *r = run(bundle, no_memo, &b);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  g_assert_cmpuint(sc_infer_n_expectations(r), ==, 2);
  for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++)
    g_assert_true(sc_infer_expectation_at(r, i)->found);
  sc_infer_result_free(r);
  sc_bundle_free(b);
}

static void test_dormant_duplicate_read(void) {
  check(FALSE);
}

static void test_dormant_duplicate_read_no_memo(void) {
  check(TRUE);
}

/* sc_rel_dups_member: the members of a duplicate set, the same list from
 * any member (the representative's duplicates, then the representative),
 * and a node of no set alone.  In the bundle above d_r duplicates m_r. */
static void test_members(void) {
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(bundle, "dups", &err);
  g_assert_no_error(err);
  sc_graph *impl = sc_bundle_impl(b);
  sc_rel_ctx c;
  memset(&c, 0, sizeof c);
  c.impl = impl;
  c.impl_is_output = g_new0(gboolean, sc_graph_n_tensors(impl));
  sc_rel_dups_init(&c);
  sc_id m0 = sc_graph_find_node(impl, "m_0"), d0 = sc_graph_find_node(impl, "d_0");
  sc_id s0 = sc_graph_find_node(impl, "s_0");
  g_assert_cmpuint(c.dup_rep[d0], ==, m0);
  sc_id from[2] = {m0, d0};
  for (guint k = 0; k < 2; k++) {
    g_assert_cmpuint(sc_rel_dups_member(&c, from[k], 0), ==, d0);
    g_assert_cmpuint(sc_rel_dups_member(&c, from[k], 1), ==, m0);
    g_assert_cmpuint(sc_rel_dups_member(&c, from[k], 2), ==, SC_ID_NONE);
  }
  g_assert_cmpuint(sc_rel_dups_member(&c, s0, 0), ==, s0);
  g_assert_cmpuint(sc_rel_dups_member(&c, s0, 1), ==, SC_ID_NONE);
  sc_rel_dups_free(&c);
  g_free(c.impl_is_output);
  sc_bundle_free(b);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/dups/duplicate-read", test_dormant_duplicate_read);
  g_test_add_func("/infer/dups/duplicate-read-no-memo", test_dormant_duplicate_read_no_memo);
  g_test_add_func("/infer/dups/members", test_members);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
