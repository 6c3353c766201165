/* test-random.c — random operators (SC_OP_RANDOM: native_dropout) through
 * the whole check: a dropout on sequence shards refines only under the
 * assumption that the random decision follows the element
 * (lemmas/real-megatron.lemma), and every visited random node that gets a
 * relation is listed as an assumption of the proof (infer.h,
 * sc_infer_assumption), in the text and JSON reports.  A dropout with
 * train=False draws nothing and is not listed; one that does not map is
 * not listed either.  Lemmas: the source tree's real-megatron.lemma only,
 * so that the test does not depend on the rest of the library.
 *
 * The bundle is inline: spec `drop = native_dropout(x, 0.1, train)` over
 * x [4, 3], impl two ranks with x's row halves, each its own dropout
 * (probability P1 on rank 1). */
#include "check-fixture.h"
#include "shardcheck/report.h"
#include "sc-config.h"

#include <stdio.h>
#include <string.h>

static char *dropout_bundle(double p1, gboolean train) {
  const char *t = train ? "true" : "false";
  return g_strdup_printf(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"drop\",\n"
      " \"spec\": {\"inputs\": [{\"name\": \"x\", \"shape\": [4, 3]}],\n"
      "  \"nodes\": [{\"name\": \"drop\", \"op\": \"aten.native_dropout.default\","
      " \"args\": [\"x\", 0.1, %s], \"src\": \"/m/model.py:3\","
      " \"outputs\": [{\"name\": \"y\", \"shape\": [4, 3]},"
      " {\"name\": \"m\", \"shape\": [4, 3], \"dtype\": \"bool\"}]}],\n"
      "  \"outputs\": [\"y\", \"m\"]},\n"
      " \"impl\": {\"inputs\": [{\"name\": \"x_0\", \"shape\": [2, 3], \"rank\": 0},"
      " {\"name\": \"x_1\", \"shape\": [2, 3], \"rank\": 1}],\n"
      "  \"nodes\": [{\"name\": \"drop_0\", \"op\": \"aten.native_dropout.default\","
      " \"args\": [\"x_0\", 0.1, %s],"
      " \"outputs\": [{\"name\": \"y_0\", \"shape\": [2, 3], \"rank\": 0},"
      " {\"name\": \"m_0\", \"shape\": [2, 3], \"dtype\": \"bool\", \"rank\": 0}]},\n"
      "   {\"name\": \"drop_1\", \"op\": \"aten.native_dropout.default\","
      " \"args\": [\"x_1\", %.1f, %s],"
      " \"outputs\": [{\"name\": \"y_1\", \"shape\": [2, 3], \"rank\": 1},"
      " {\"name\": \"m_1\", \"shape\": [2, 3], \"dtype\": \"bool\", \"rank\": 1}]}],\n"
      "  \"outputs\": [\"y_0\", \"y_1\", \"m_0\", \"m_1\"]},\n"
      " \"input_relation\": {\"x\": [\"cat(x_0, x_1, dim=0)\"]},\n"
      " \"expect_output_relation\": {\"y\": [\"cat(y_0, y_1, dim=0)\"],"
      " \"m\": [\"cat(m_0, m_1, dim=0)\"]}}\n",
      t, t, p1, t);
}


/* Checks the bundle with real-megatron.lemma (WITH_LEMMAS) or no lemma. */
static void check(checked *c, double p1, gboolean train, gboolean with_lemmas) {
  g_autoptr(GError) err = NULL;
  g_autofree char *json = dropout_bundle(p1, train);
  c->b = sc_bundle_load_string(json, "drop.json", &err);
  g_assert_no_error(err);
  g_assert_nonnull(c->b);
  c->set = sc_lemma_set_new();
  if (with_lemmas) {
    g_autofree char *p = g_build_filename(SC_LEMMA_SOURCE_DIR, "real-megatron.lemma", NULL);
    if (!sc_lemma_set_load_file(c->set, p, &err))
      g_error("%s", err->message);
  }
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.lemmas = c->set;
  c->r = sc_infer_run(c->b, &opts, &err);
  g_assert_no_error(err);
  g_assert_nonnull(c->r);
}



static const char *drop_assumption =
    "drop (aten.native_dropout.default) at model.py:3: its random decision follows the element "
    "(the capture has no RNG state; the spec and every rank are assumed to decide alike for the "
    "same element)";

/* Both results map, through the dropout lemmas; the proof lists the
 * assumption once, in text and JSON. */
static void test_assumed(void) {
  checked c;
  check(&c, 0.1, TRUE, TRUE);
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_REFINES);
  for (uint32_t i = 0; i < sc_infer_n_expectations(c.r); i++)
    g_assert_true(sc_infer_expectation_at(c.r, i)->found);
  g_assert_cmpuint(sc_infer_n_expectations(c.r), ==, 2);
  g_assert_cmpuint(sc_infer_n_assumptions(c.r), ==, 1);
  const sc_infer_assumption *a = sc_infer_assumption_at(c.r, 0);
  g_assert_cmpstr(a->text, ==, drop_assumption);
  g_assert_cmpstr(a->tensor, ==, "y");
  g_assert_cmpstr(a->node, ==, "drop");
  g_assert_cmpstr(a->used_by, ==, "relations of y, m at drop");
  g_autofree char *text = text_report(&c);
  g_assert_nonnull(strstr(text, "drop: refines\n"));
  g_autofree char *line =
      g_strdup_printf("assumed: %s (used by relations of y, m at drop)\n", drop_assumption);
  g_assert_nonnull(strstr(text, line));
  g_autofree char *json = sc_report_json(c.b, c.r, NULL);
  g_autofree char *entry = g_strdup_printf(
      "{\"text\":\"%s\",\"tensor\":\"y\",\"node\":\"drop\",\"used_by\":\"relations of y, m at "
      "drop\"}",
      drop_assumption);
  g_assert_nonnull(strstr(json, entry));
  sc_id y = sc_graph_find_tensor(sc_bundle_spec(c.b), "y");
  const GPtrArray *outs = sc_infer_output_exprs(c.r, y);
  g_assert_nonnull(outs);
  g_assert_cmpuint(outs->len, ==, 1);
  g_assert_cmpstr(g_ptr_array_index(outs, 0), ==, "cat(y_0, y_1, dim=0)");
  checked_clear(&c);
}

/* train=False: the identity, nothing drawn, nothing assumed. */
static void test_eval_mode(void) {
  checked c;
  check(&c, 0.1, FALSE, TRUE);
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_REFINES);
  g_assert_cmpuint(sc_infer_n_assumptions(c.r), ==, 0);
  g_autofree char *text = text_report(&c);
  g_assert_null(strstr(text, "assumed:"));
  checked_clear(&c);
}

/* Rank 1 drops with another probability: no relation, so the check fails
 * at the dropout, and no assumption is listed (nothing was related). */
static void test_other_probability(void) {
  checked c;
  check(&c, 0.2, TRUE, TRUE);
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_FAILS);
  g_assert_cmpint(sc_infer_failure_kind(c.r), ==, SC_FAILURE_UNMAPPED);
  g_assert_cmpstr(sc_graph_node(sc_bundle_spec(c.b), sc_infer_failure_node(c.r))->name, ==,
                  "drop");
  g_assert_cmpuint(sc_infer_n_assumptions(c.r), ==, 0);
  checked_clear(&c);
}

/* Without the dropout lemmas a sharded dropout does not map. */
static void test_no_lemma(void) {
  checked c;
  check(&c, 0.1, TRUE, FALSE);
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_FAILS);
  g_assert_cmpstr(sc_graph_node(sc_bundle_spec(c.b), sc_infer_failure_node(c.r))->name, ==,
                  "drop");
  g_assert_cmpuint(sc_infer_n_assumptions(c.r), ==, 0);
  checked_clear(&c);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/random/dropout/assumed", test_assumed);
  g_test_add_func("/random/dropout/eval-mode", test_eval_mode);
  g_test_add_func("/random/dropout/other-probability", test_other_probability);
  g_test_add_func("/random/dropout/no-lemma", test_no_lemma);
  return g_test_run();
}
