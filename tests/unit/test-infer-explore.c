/* test-infer-explore.c — the order of exploration and saturation
 * (trel.c, sc_rel_explore): exploring until nothing joins before
 * saturating gives the same explored impl nodes, the same final e-graphs
 * and the same relations as saturating after every batch of impl nodes
 * (the order before session 31), with fewer lemma applications where a
 * chain of layout operators joins one node per round. */
#include "infer-fixture.h"

static sc_infer_result *run(const sc_bundle *b, gboolean per_batch) {
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.saturate_per_batch = per_batch;
  return ifx_run(b, &opts);
}

/* Both orders on model REL: the same results; returns the applications
 * of the per-batch order and, into *ONCE, of the default one. */
static uint64_t check_orders(const char *rel, uint64_t *once) {
  GError *err = NULL;
  g_autofree char *path = g_build_filename(SC_TEST_SRCDIR, rel, NULL);
  sc_bundle *b = sc_bundle_load(path, &err);
  g_assert_no_error(err);
  sc_infer_result *a = run(b, FALSE), *p = run(b, TRUE);
  g_assert_cmpint(sc_infer_verdict(a), ==, sc_infer_verdict(p));
  g_assert_cmpint(sc_infer_failure_kind(a), ==, sc_infer_failure_kind(p));
  g_assert_cmpuint(sc_infer_failure_node(a), ==, sc_infer_failure_node(p));
  const sc_graph *spec = sc_bundle_spec(b);
  for (sc_id t = 0; t < sc_graph_n_tensors(spec); t++) {
    ifx_assert_same_texts(sc_infer_tensor_exprs(a, t), sc_infer_tensor_exprs(p, t));
    ifx_assert_same_texts(sc_infer_output_exprs(a, t), sc_infer_output_exprs(p, t));
  }
  const sc_infer_stats *sa = sc_infer_get_stats(a), *sp = sc_infer_get_stats(p);
  g_assert_cmpuint(sa->visited, ==, sp->visited);
  g_assert_cmpuint(sa->explored, ==, sp->explored);
  /* the same final e-graph of every visit */
  g_assert_cmpuint(sa->enodes, ==, sp->enodes);
  g_assert_cmpuint(sa->max_enodes, ==, sp->max_enodes);
  g_assert_cmpuint(sa->carried, ==, sp->carried);
  g_assert_cmpuint(sa->applied, <=, sp->applied);
  *once = sa->applied;
  uint64_t per_batch = sp->applied;
  sc_infer_result_free(a);
  sc_infer_result_free(p);
  sc_bundle_free(b);
  return per_batch;
}

/* GPT-2 blocks at TP 2: the attention's views and transposes join the
 * e-graph one per round; saturating each partial block costs more than
 * half again of the applications. */
static void test_attention(void) {
  uint64_t once = 0;
  uint64_t per_batch = check_orders("models/gpt2-block/gpt2-block-tp2-2layers-fwd.json", &once);
  g_test_message("applications: %" G_GUINT64_FORMAT " per batch, %" G_GUINT64_FORMAT " once",
                 per_batch, once);
  g_assert_cmpuint(once * 3, <, per_batch * 2);
}

/* Failing models: the same failure, node and relations in both orders. */
static void test_bugs(void) {
  uint64_t once = 0;
  check_orders("models/mlp-tp2-bugs/extra-scaling.json", &once);
  check_orders("models/ddp-sgd/ddp-sgd-sum-not-avg-dp2-fwd.json", &once);
  check_orders("models/gqa-tp/gqa-tp2-shard.json", &once);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/explore/attention", test_attention);
  g_test_add_func("/infer/explore/bugs", test_bugs);
  int rc = g_test_run();
  ifx_library_free();
  return rc;
}
