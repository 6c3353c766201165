/* test-infer-memo.c — layer memoization (src/infer/memo.c): a check with
 * memoization gives the same verdict, failure and relations (every spec
 * tensor's, and the output relations) as the check that proves every node
 * (opts.no_memo), on a model with repeated layers and on bug models; and
 * the model with repeated layers carries most of its second layer.  The
 * carried texts are rendered when first read, and kept.  (Every
 * model of models/ is compared the same way by tests/models/memo-same.py,
 * through the JSON report.) */
#include "infer-fixture.h"
#include "shardcheck/infer.h"

#include <string.h>

static sc_infer_result *run(const sc_bundle *b, gboolean no_memo) {
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.no_memo = no_memo;
  return ifx_run(b, &opts);
}

/* Both runs of model REL agree; returns the nodes carried. */
static uint32_t check_same(const char *rel) {
  GError *err = NULL;
  g_autofree char *path = g_build_filename(SC_TEST_SRCDIR, rel, NULL);
  sc_bundle *b = sc_bundle_load(path, &err);
  g_assert_no_error(err);
  sc_infer_result *m = run(b, FALSE), *p = run(b, TRUE);
  g_assert_cmpint(sc_infer_verdict(m), ==, sc_infer_verdict(p));
  g_assert_cmpint(sc_infer_failure_kind(m), ==, sc_infer_failure_kind(p));
  g_assert_cmpuint(sc_infer_failure_node(m), ==, sc_infer_failure_node(p));
  const sc_graph *spec = sc_bundle_spec(b);
  for (sc_id t = 0; t < sc_graph_n_tensors(spec); t++) {
    /* a carried relation's texts are rendered at the first read
     * (carried-texts.c), then kept */
    const GPtrArray *first = sc_infer_tensor_exprs(m, t);
    g_assert_true(sc_infer_tensor_exprs(m, t) == first);
    ifx_assert_same_texts(first, sc_infer_tensor_exprs(p, t));
    ifx_assert_same_texts(sc_infer_output_exprs(m, t), sc_infer_output_exprs(p, t));
  }
  for (uint32_t i = 0; i < sc_infer_n_expectations(m); i++)
    g_assert_cmpint(sc_infer_expectation_at(m, i)->found, ==,
                    sc_infer_expectation_at(p, i)->found);
  uint32_t carried = sc_infer_get_stats(m)->carried;
  g_assert_cmpuint(sc_infer_get_stats(p)->carried, ==, 0);
  g_assert_cmpuint(sc_infer_n_carried_blocks(p), ==, 0);
  /* the blocks add up to the nodes carried; each carried node names the
   * proved node it was carried from, a proved node none */
  uint32_t in_blocks = 0, named = 0;
  for (uint32_t i = 0; i < sc_infer_n_carried_blocks(m); i++) {
    const sc_infer_carried_block *cb = sc_infer_carried_block_at(m, i);
    in_blocks += cb->n_nodes;
    g_assert_cmpuint(sc_infer_carried_from(m, cb->first), !=, SC_ID_NONE);
    g_assert_cmpuint(sc_infer_carried_from(m, cb->last), !=, SC_ID_NONE);
    g_assert_cmpuint(cb->from_first, !=, cb->first);
  }
  for (sc_id v = 0; v < sc_graph_n_nodes(spec); v++) {
    sc_id from = sc_infer_carried_from(m, v);
    if (from == SC_ID_NONE)
      continue;
    named++;
    g_assert_cmpuint(sc_infer_carried_from(m, from), ==, SC_ID_NONE);
  }
  g_assert_cmpuint(in_blocks, ==, carried);
  g_assert_cmpuint(named, ==, carried);
  sc_infer_result_free(m);
  sc_infer_result_free(p);
  sc_bundle_free(b);
  return carried;
}

static void test_layers(void) {
  /* two identical GPT-2 layers: most of the second carried */
  g_assert_cmpuint(check_same("models/gpt2-block/gpt2-block-tp2-2layers-fwd.json"), >, 20);
}

static void test_bugs(void) {
  check_same("models/mlp-tp2-bugs/extra-scaling.json");
  check_same("models/ddp-sgd/ddp-sgd-sum-not-avg-dp2-fwd.json");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/memo/layers-same-as-proved", test_layers);
  g_test_add_func("/infer/memo/bugs-same-as-proved", test_bugs);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
