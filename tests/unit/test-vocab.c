/* test-vocab.c — vocabulary-parallel lookups proved from their masks,
 * through the whole check: value ranges derived by the driver from the
 * spec (an embedding's ids), declared in the bundle, or assumed (aten.index
 * ids non-negative), and the assumption lines of the report (text and
 * JSON).  Bundles: tests/models/captures/vocab-parallel-embedding/ (Megatron's aten.index
 * form over 3 and 4 ranks, and a planted wrong offset) and small inline
 * ones (the exporter's masked_fill form under aten.embedding).  Lemmas:
 * the source tree's embedding.lemma only, so that the test does not depend
 * on the rest of the library. */
#include "check-fixture.h"
#include "shardcheck/report.h"
#include "sc-config.h"

#include <string.h>

static sc_lemma_set *vocab_lemmas(void) {
  g_autoptr(GError) err = NULL;
  sc_lemma_set *set = sc_lemma_set_new();
  g_autofree char *p = g_build_filename(SC_LEMMA_SOURCE_DIR, "embedding.lemma", NULL);
  if (!sc_lemma_set_load_file(set, p, &err))
    g_error("%s", err->message);
  return set;
}


static void check_bundle(checked *c, sc_bundle *b) {
  g_autoptr(GError) err = NULL;
  g_assert_no_error(err);
  g_assert_nonnull(b);
  c->b = b;
  c->set = vocab_lemmas();
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.lemmas = c->set;
  c->r = sc_infer_run(b, &opts, &err);
  g_assert_no_error(err);
  g_assert_nonnull(c->r);
}

static void check_model(checked *c, const char *name) {
  g_autoptr(GError) err = NULL;
  g_autofree char *p =
      g_build_filename(SC_TEST_SRCDIR, "tests", "models", "captures", "vocab-parallel-embedding",
                       name, NULL);
  sc_bundle *b = sc_bundle_load(p, &err);
  g_assert_no_error(err);
  check_bundle(c, b);
}



static const char *index_assumption =
    "x >= 0, ids of aten.index at layers.py:260; negative ids would wrap";

/* 4 ranks, ids without a declared range: derived [-16, 15] from
 * aten.index, the lower bound assumed; the proof uses the assumption and
 * the report says so. */
static void test_assumed(void) {
  checked c;
  check_model(&c, "megatron-index-tp4.json");
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_REFINES);
  g_assert_cmpuint(sc_infer_n_assumptions(c.r), ==, 1);
  const sc_infer_assumption *a = sc_infer_assumption_at(c.r, 0);
  g_assert_cmpstr(a->text, ==, index_assumption);
  g_assert_cmpstr(a->tensor, ==, "x");
  g_assert_cmpstr(a->node, ==, "index");
  g_assert_cmpstr(a->used_by, ==, "vp_entry_index at index");
  g_autofree char *text = text_report(&c);
  g_assert_nonnull(strstr(text, "megatron-index-tp4: refines\n"));
  g_assert_nonnull(strstr(text, "assumed: x >= 0, ids of aten.index at layers.py:260; negative "
                                "ids would wrap (used by vp_entry_index at index)\n"));
  g_autofree char *json = sc_report_json(c.b, c.r, NULL);
  g_assert_nonnull(strstr(json, "\"assumed_ranges\":[{\"text\":\"x >= 0, ids of aten.index at "
                                "layers.py:260; negative ids would wrap\",\"tensor\":\"x\","
                                "\"node\":\"index\",\"used_by\":\"vp_entry_index at index\"}]"));
  /* every rank's output is the lookup */
  sc_id y = sc_graph_find_tensor(sc_bundle_spec(c.b), "y");
  const GPtrArray *outs = sc_infer_output_exprs(c.r, y);
  g_assert_nonnull(outs);
  g_assert_cmpuint(outs->len, ==, 4);
  for (guint i = 0; i < outs->len; i++) {
    g_autofree char *want = g_strdup_printf("r%u.y", i);
    g_assert_cmpstr(g_ptr_array_index(outs, i), ==, want);
  }
  checked_clear(&c);
}

/* The same with x declared in [0, 15]: no assumption. */
static void test_declared(void) {
  checked c;
  check_model(&c, "megatron-index-tp4-values.json");
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_REFINES);
  g_assert_cmpuint(sc_infer_n_assumptions(c.r), ==, 0);
  g_autofree char *text = text_report(&c);
  g_assert_null(strstr(text, "assumed:"));
  g_autofree char *json = sc_report_json(c.b, c.r, NULL);
  g_assert_null(strstr(json, "assumed_ranges"));
  checked_clear(&c);
}

/* 3 ranks of 5 rows: the split applies twice, at offsets 5 and 10. */
static void test_three_ranks(void) {
  checked c;
  check_model(&c, "megatron-index-tp3.json");
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_REFINES);
  g_assert_cmpuint(sc_infer_n_assumptions(c.r), ==, 1);
  checked_clear(&c);
}

/* Rank 1 shifts its ids by 5 instead of 4: the lookup is not the spec's. */
static void test_wrong_offset(void) {
  checked c;
  check_model(&c, "megatron-index-tp4-wrong-offset.json");
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_FAILS);
  g_assert_cmpint(sc_infer_failure_kind(c.r), ==, SC_FAILURE_UNMAPPED);
  g_assert_cmpstr(sc_graph_node(sc_bundle_spec(c.b), sc_infer_failure_node(c.r))->name, ==,
                  "index");
  /* no prover limit is blamed: the entry lemmas lacked no decision */
  g_assert_cmpuint(sc_infer_failure_undecided(c.r)->len, ==, 0);
  checked_clear(&c);
}

/* One node of a rank: NAME = OP(ARGS) with result SHAPE (JSON) and DTYPE. */
static void add_node(GString *s, const char *name, const char *op, const char *args,
                     const char *shape, const char *dtype) {
  g_string_append_printf(s,
                         "   {\"name\": \"%s\", \"op\": \"%s\", \"args\": [%s], \"outputs\": "
                         "[{\"name\": \"%s\", \"shape\": %s, \"dtype\": \"%s\"}]},\n",
                         name, op, args, name, shape, dtype);
}

/* The exporter's form under aten.embedding, 2 ranks of 4 rows: the ids'
 * range [0, 7] is derived from the spec's embedding (it raises on other
 * ids), so no assumption is needed.  LO1 is rank 1's offset (4: correct). */
static char *embedding_bundle(int lo1) {
  GString *s = g_string_new(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"emb\",\n"
      " \"spec\": {\"inputs\": [{\"name\": \"W\", \"shape\": [8, 4]},"
      " {\"name\": \"x\", \"shape\": [3], \"dtype\": \"i64\"}],\n"
      "  \"nodes\": [{\"name\": \"e\", \"op\": \"aten.embedding.default\", \"args\": [\"W\", \"x\"],"
      " \"outputs\": [{\"name\": \"e\", \"shape\": [3, 4]}]}],\n"
      "  \"outputs\": [\"e\"]},\n"
      " \"impl\": {\"inputs\": [{\"name\": \"W_0\", \"shape\": [4, 4]},"
      " {\"name\": \"W_1\", \"shape\": [4, 4]},"
      " {\"name\": \"x_0\", \"shape\": [3], \"dtype\": \"i64\"},"
      " {\"name\": \"x_1\", \"shape\": [3], \"dtype\": \"i64\"}],\n"
      "  \"nodes\": [\n");
  for (int k = 0; k < 2; k++) {
    int lo = k == 0 ? 0 : lo1, hi = 4 * (k + 1);
    g_autofree char *lt = g_strdup_printf("lt_%d", k), *ge = g_strdup_printf("ge_%d", k);
    g_autofree char *m = g_strdup_printf("m_%d", k), *sb = g_strdup_printf("s_%d", k);
    g_autofree char *i = g_strdup_printf("i_%d", k), *e = g_strdup_printf("e_%d", k);
    g_autofree char *u = g_strdup_printf("u_%d", k), *f = g_strdup_printf("f_%d", k);
    g_autofree char *a_lt = g_strdup_printf("\"x_%d\", %d", k, lo);
    g_autofree char *a_ge = g_strdup_printf("\"x_%d\", %d", k, hi);
    g_autofree char *a_m = g_strdup_printf("\"%s\", \"%s\"", lt, ge);
    g_autofree char *a_i = g_strdup_printf("\"%s\", \"%s\", 0", sb, m);
    g_autofree char *a_e = g_strdup_printf("\"W_%d\", \"%s\"", k, i);
    g_autofree char *a_u = g_strdup_printf("\"%s\", -1", m);
    g_autofree char *a_f = g_strdup_printf("\"%s\", \"%s\", 0.0", e, u);
    add_node(s, lt, "aten.lt.Scalar", a_lt, "[3]", "bool");
    add_node(s, ge, "aten.ge.Scalar", a_ge, "[3]", "bool");
    add_node(s, m, "aten.bitwise_or.Tensor", a_m, "[3]", "bool");
    add_node(s, sb, "aten.sub.Scalar", a_lt, "[3]", "i64");
    add_node(s, i, "aten.masked_fill.Scalar", a_i, "[3]", "i64");
    add_node(s, e, "aten.embedding.default", a_e, "[3, 4]", "f32");
    add_node(s, u, "aten.unsqueeze.default", a_u, "[3, 1]", "bool");
    add_node(s, f, "aten.masked_fill.Scalar", a_f, "[3, 4]", "f32");
  }
  g_string_append(
      s, "   {\"name\": \"ar\", \"op\": \"comm.all_reduce.default\", \"args\": [[\"f_0\", \"f_1\"]],"
         " \"outputs\": [{\"name\": \"ar_0\", \"shape\": [3, 4], \"rank\": 0},"
         " {\"name\": \"ar_1\", \"shape\": [3, 4], \"rank\": 1}]}],\n"
         "  \"outputs\": [\"ar_0\", \"ar_1\"]},\n"
         " \"input_relation\": {\"W\": [\"cat(W_0, W_1, dim=0)\"], \"x\": [\"x_0\", \"x_1\"]},\n"
         " \"expect_output_relation\": {\"e\": [\"ar_0\", \"ar_1\"]}}\n");
  return g_string_free(s, FALSE);
}

static void test_embedding_derived(void) {
  g_autoptr(GError) err = NULL;
  g_autofree char *json = embedding_bundle(4);
  checked c;
  check_bundle(&c, sc_bundle_load_string(json, "emb.json", &err));
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_REFINES);
  g_assert_cmpuint(sc_infer_n_assumptions(c.r), ==, 0);
  sc_id e = sc_graph_find_tensor(sc_bundle_spec(c.b), "e");
  const GPtrArray *outs = sc_infer_output_exprs(c.r, e);
  g_assert_nonnull(outs);
  g_assert_cmpuint(outs->len, ==, 2);
  g_assert_cmpstr(g_ptr_array_index(outs, 0), ==, "ar_0");
  checked_clear(&c);
}

static void test_embedding_wrong_offset(void) {
  g_autoptr(GError) err = NULL;
  g_autofree char *json = embedding_bundle(3);
  checked c;
  check_bundle(&c, sc_bundle_load_string(json, "emb.json", &err));
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_FAILS);
  g_assert_cmpstr(sc_graph_node(sc_bundle_spec(c.b), sc_infer_failure_node(c.r))->name, ==, "e");
  checked_clear(&c);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vocab/index/assumed", test_assumed);
  g_test_add_func("/vocab/index/declared", test_declared);
  g_test_add_func("/vocab/index/three-ranks", test_three_ranks);
  g_test_add_func("/vocab/index/wrong-offset", test_wrong_offset);
  g_test_add_func("/vocab/embedding/derived", test_embedding_derived);
  g_test_add_func("/vocab/embedding/wrong-offset", test_embedding_wrong_offset);
  return g_test_run();
}
