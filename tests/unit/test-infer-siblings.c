/* test-infer-siblings.c — collectives over the same inputs
 * (src/infer/siblings.c): an all_reduce's siblings are the collectives
 * that read the same tensors in the same order (a reduce_scatter and an
 * all_gather of its list), not one over the list reversed, nor a
 * non-collective consumer.  The law end to end (trel.c explores the
 * siblings of a related collective result): tests/models/mesh2d's
 * shardsmith-20003, which fails at mm_4 without it. */
#include "bundle-text.h"
#include "infer-fixture.h"

#define COLL(name, op, args, out0, out1, shape)                                         \
  "{\"name\": \"" name "\", \"op\": \"" op "\", \"args\": " args ", \"kwargs\": {},"   \
  " \"outputs\": [" T(out0, shape, R0) ", " T(out1, shape, R1) "]}"

/* spec y = mm(neg(x), w); x the sum of the ranks' partials p_r, w
 * replicated.  Each rank negates its partial; the negated partials are
 * all-reduced (ar), reduce-scattered along rows (rs), reduce-scattered in
 * the other order (rv) and all-gathered (ag); each rank multiplies its
 * scatter piece by its copy of w; OUT_REL: the expected relation of y. */
static char *bundle(const char *out_rel) {
  return g_strdup_printf(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"siblings\", \"symbols\": {},"
      " \"assume\": [],"
      " \"spec\": {\"inputs\": [" T("x", "[4, 2]", "") ", " T("w", "[2, 2]", "") "],"
      "  \"nodes\": [" NODE("neg", "aten.neg.default", "[\"x\"]", "a", "[4, 2]", "") ", "
      NODE("mm", "aten.mm.default", "[\"a\", \"w\"]", "y", "[4, 2]", "") "],"
      "  \"outputs\": [\"y\"]},"
      " \"impl\": {\"inputs\": [" T("p_0", "[4, 2]", R0) ", " T("p_1", "[4, 2]", R1) ", "
      T("w_0", "[2, 2]", R0) ", " T("w_1", "[2, 2]", R1) "],"
      "  \"nodes\": [" NODE("neg_0", "aten.neg.default", "[\"p_0\"]", "q_0", "[4, 2]", R0) ", "
      NODE("neg_1", "aten.neg.default", "[\"p_1\"]", "q_1", "[4, 2]", R1) ", "
      COLL("ar", "comm.all_reduce.default", "[[\"q_0\", \"q_1\"]]", "ar_0", "ar_1", "[4, 2]") ", "
      COLL("rs", "comm.reduce_scatter.default", "[[\"q_0\", \"q_1\"], 0]", "rs_0", "rs_1", "[2, 2]") ", "
      COLL("rv", "comm.reduce_scatter.default", "[[\"q_1\", \"q_0\"], 0]", "rv_0", "rv_1", "[2, 2]") ", "
      COLL("ag", "comm.all_gather.default", "[[\"q_0\", \"q_1\"], 0]", "ag_0", "ag_1", "[8, 2]") ", "
      NODE("mm_0", "aten.mm.default", "[\"rs_0\", \"w_0\"]", "y_0", "[2, 2]", R0) ", "
      NODE("mm_1", "aten.mm.default", "[\"rs_1\", \"w_1\"]", "y_1", "[2, 2]", R1) "],"
      "  \"outputs\": [\"y_0\", \"y_1\"]},"
      " \"input_relation\": {\"x\": [\"sum(p_0, p_1)\"], \"w\": [\"w_0\", \"w_1\"]},"
      " \"expect_output_relation\": {\"y\": [\"%s\"]}}",
      out_rel);
}

static void test_siblings_of(void) {
  g_autofree char *json = bundle("cat(y_0, y_1, dim=0)");
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(json, "siblings", &err);
  g_assert_no_error(err);
  sc_rel_ctx c;
  memset(&c, 0, sizeof c);
  c.impl = sc_bundle_impl(b);
  sc_id ar = sc_graph_find_node(c.impl, "ar"), rs = sc_graph_find_node(c.impl, "rs");
  sc_id ag = sc_graph_find_node(c.impl, "ag"), neg = sc_graph_find_node(c.impl, "neg_0");
  uint32_t cursor = 0;
  GArray *seen = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (sc_id w; (w = sc_rel_collective_sibling(&c, ar, &cursor)) != SC_ID_NONE;)
    g_array_append_val(seen, w);
  g_assert_cmpuint(seen->len, ==, 2); /* rs and ag; not rv (other order) */
  g_assert_true(g_array_index(seen, sc_id, 0) == rs || g_array_index(seen, sc_id, 1) == rs);
  g_assert_true(g_array_index(seen, sc_id, 0) == ag || g_array_index(seen, sc_id, 1) == ag);
  cursor = 0;
  g_assert_cmpuint(sc_rel_collective_sibling(&c, neg, &cursor), ==, SC_ID_NONE);
  g_array_free(seen, TRUE);
  sc_bundle_free(b);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/siblings/of", test_siblings_of);
  return g_test_run();
}
