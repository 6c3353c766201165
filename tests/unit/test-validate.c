/* test-validate.c — `check --validate` as a library (validate.h): impl
 * inputs solved from input relations (cat of a transpose, a sum, a view,
 * a slice, replicas, a conflict), the validation of a model whose
 * relations hold, a planted false assume_relation caught, counterexamples
 * of failing models (expected expression and nearest term), the skip when
 * tensors are too large, and the JSON object. */
#include "shardcheck/validate.h"

#include <string.h>

#define BUNDLE_FMT \
    "{\"format\": \"shardcheck-bundle/1\", \"name\": \"solve\",\n" \
    " \"spec\": {\"inputs\": [\n" \
    "   {\"name\": \"x\", \"shape\": [4, 6], \"dtype\": \"f32\"},\n" \
    "   {\"name\": \"y\", \"shape\": [4], \"dtype\": \"f32\"},\n" \
    "   {\"name\": \"z\", \"shape\": [2, 3], \"dtype\": \"f32\"},\n" \
    "   {\"name\": \"w\", \"shape\": [3], \"dtype\": \"f32\"}],\n" \
    "  \"nodes\": [\n" \
    "   {\"name\": \"n1\", \"op\": \"aten.neg.default\", \"args\": [\"x\"],\n" \
    "    \"outputs\": [{\"name\": \"nx\", \"shape\": [4, 6], \"dtype\": \"f32\"}]}],\n" \
    "  \"outputs\": [\"nx\"]},\n" \
    " \"impl\": {\"inputs\": [\n" \
    "   {\"name\": \"a\", \"shape\": [2, 6], \"dtype\": \"f32\"},\n" \
    "   {\"name\": \"b\", \"shape\": [6, 2], \"dtype\": \"f32\"},\n" \
    "   {\"name\": \"p\", \"shape\": [4], \"dtype\": \"f32\"},\n" \
    "   {\"name\": \"q\", \"shape\": [4], \"dtype\": \"f32\"},\n" \
    "   {\"name\": \"c\", \"shape\": [6], \"dtype\": \"f32\"},\n" \
    "   {\"name\": \"d\", \"shape\": [5], \"dtype\": \"f32\"}],\n" \
    "  \"nodes\": [\n" \
    "   {\"name\": \"m1\", \"op\": \"aten.neg.default\", \"args\": [\"a\"],\n" \
    "    \"outputs\": [{\"name\": \"na\", \"shape\": [2, 6], \"dtype\": \"f32\"}]}],\n" \
    "  \"outputs\": [\"na\"]},\n" \
    " \"input_relation\": {%s}}\n"

static sc_bundle *make_bundle(const char *relations) {
  g_autofree char *json = g_strdup_printf(BUNDLE_FMT, relations);
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(json, "solve.json", &err);
  if (b == NULL)
    g_error("%s", err->message);
  return b;
}

static double at(const sc_tvalue *v, int64_t i) { return v->data[i]; }

static void test_inputs_solved(void) {
  g_autoptr(sc_bundle) b = make_bundle(
      "\"x\": [\"cat(a, transpose(b, dim0=0, dim1=1), dim=0)\"], \"y\": [\"sum(p, q)\"],"
      " \"z\": [\"view(c, shape=[2, 3])\"], \"w\": [\"slice(d, dim=0, start=1, end=4)\"]");
  sc_rng rng;
  sc_rng_seed(&rng, 5);
  sc_tvalue **sv = NULL, **iv = NULL;
  GError *err = NULL;
  g_assert_true(sc_validate_make_inputs(b, NULL, &rng, 0, &sv, &iv, &err));
  g_assert_no_error(err);
  /* spec inputs: x y z w; impl inputs: a b p q c d */
  const sc_tvalue *x = sv[0], *y = sv[1], *z = sv[2], *w = sv[3];
  const sc_tvalue *a = iv[0], *bb = iv[1], *p = iv[2], *q = iv[3], *c = iv[4], *d = iv[5];
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 6; j++) {
      g_assert_cmpfloat(at(a, i * 6 + j), ==, at(x, i * 6 + j));
      g_assert_cmpfloat(at(bb, j * 2 + i), ==, at(x, (2 + i) * 6 + j));
    }
  for (int64_t i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon(at(p, i) + at(q, i), at(y, i), 1e-15);
  g_assert_cmpfloat(at(p, 0), !=, at(y, 0)); /* a real split, not y + 0 */
  for (int64_t i = 0; i < 6; i++)
    g_assert_cmpfloat(at(c, i), ==, at(z, i));
  for (int64_t i = 0; i < 3; i++)
    g_assert_cmpfloat(at(d, i + 1), ==, at(w, i));
  sc_interp_values_free(sv, 4);
  sc_interp_values_free(iv, 6);
}

static void test_inputs_replica_and_conflict(void) {
  /* y and w both name d's elements 1..3 (w is a replica through a slice of
   * the same range): the second one takes the first's values */
  g_autoptr(sc_bundle) ok = make_bundle(
      "\"x\": [\"cat(a, transpose(b, dim0=0, dim1=1), dim=0)\"], \"y\": [\"p\", \"q\"],"
      " \"z\": [\"view(c, shape=[2, 3])\"], \"w\": [\"slice(d, dim=0, start=1, end=4)\","
      " \"slice(d, dim=0, start=1, end=4)\"]");
  sc_rng rng;
  sc_rng_seed(&rng, 1);
  sc_tvalue **sv = NULL, **iv = NULL;
  GError *err = NULL;
  g_assert_true(sc_validate_make_inputs(ok, NULL, &rng, 0, &sv, &iv, &err));
  for (int64_t i = 0; i < 4; i++)
    g_assert_cmpfloat(at(iv[2], i), ==, at(iv[3], i)); /* p and q replicas */
  sc_interp_values_free(sv, 4);
  sc_interp_values_free(iv, 6);
  /* z reads a, which x fixed entirely: z takes a's values, no conflict;
   * y and w overlap on c's elements 2 and 3, which stay partly free: two
   * random values for one element */
  g_autoptr(sc_bundle) bad = make_bundle(
      "\"x\": [\"cat(a, transpose(b, dim0=0, dim1=1), dim=0)\"],"
      " \"y\": [\"slice(c, dim=0, start=0, end=4)\"],"
      " \"z\": [\"view(slice(a, dim=0, start=0, end=1), shape=[2, 3])\"],"
      " \"w\": [\"slice(c, dim=0, start=2, end=5)\"]");
  g_assert_false(sc_validate_make_inputs(bad, NULL, &rng, 0, &sv, &iv, &err));
  g_assert_error(err, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_CONFLICT);
  g_assert_nonnull(strstr(err->message, "impl input 'c'"));
  g_assert_null(sv);
  g_assert_null(iv);
  g_clear_error(&err);
}

static sc_infer_result *check(sc_bundle *b, sc_lemma_set **set_out) {
  sc_lemma_set *set = sc_lemma_set_new();
  GError *err = NULL;
  g_assert_true(sc_lemma_set_load_dir(set, SC_TEST_SRCDIR "/lemmas", &err));
  sc_infer_options o;
  sc_infer_options_init(&o);
  o.lemmas = set;
  sc_infer_result *r = sc_infer_run(b, &o, &err);
  g_assert_no_error(err);
  *set_out = set;
  return r;
}

static sc_bundle *load(const char *rel) {
  g_autofree char *p = g_build_filename(SC_TEST_SRCDIR, rel, NULL);
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load(p, &err);
  g_assert_no_error(err);
  return b;
}

static void test_validate_holds(void) {
  g_autoptr(sc_bundle) b = load("models/mlp-tp2/bundle.json");
  sc_lemma_set *set = NULL;
  g_autoptr(sc_infer_result) r = check(b, &set);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  g_autoptr(sc_validation) v = sc_validate_run(b, r, NULL);
  g_assert_true(v->ran);
  g_assert_cmpuint(v->n_failed, ==, 0);
  g_assert_cmpuint(v->n_evaluated, >=, 4);
  g_assert_false(sc_validation_unsound(v));
  g_assert_cmpfloat(v->max_rel, <, 1e-12);
  gboolean saw_output = FALSE;
  for (uint32_t i = 0; i < v->n_checks; i++)
    saw_output = saw_output || (strcmp(v->checks[i].tensor, "y") == 0 &&
                                strcmp(v->checks[i].expr, "y_0") == 0 && v->checks[i].holds);
  g_assert_true(saw_output);
  g_autofree char *js = sc_validation_json(v);
  g_assert_nonnull(strstr(js, "{\"status\":\"validated\",\"seed\":1,"));
  g_assert_nonnull(strstr(js, "\"failed\":0,"));
  sc_lemma_set_free(set);
}

static void test_validate_wrong_assume(void) {
  g_autoptr(sc_bundle) b = load("tests/lemcheck/wrong-assume.json");
  sc_lemma_set *set = NULL;
  g_autoptr(sc_infer_result) r = check(b, &set);
  g_autoptr(sc_validation) v = sc_validate_run(b, r, NULL);
  g_assert_true(v->ran);
  g_assert_true(sc_validation_unsound(v));
  g_assert_cmpuint(v->n_failed_assumed, ==, 1);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  sc_validation_text(f, v);
  fclose(f);
  g_assert_nonnull(strstr(buf, "SOUNDNESS BUG: the assumed relation h = cat(h_1, h_0, dim=1) "
                               "does not hold on concrete values (the check trusted it): "));
  free(buf);
  sc_lemma_set_free(set);
}

static void test_counterexample(void) {
  g_autoptr(sc_bundle) b = load("models/mlp-tp2-bugs/missing-allreduce.json");
  sc_lemma_set *set = NULL;
  g_autoptr(sc_infer_result) r = check(b, &set);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_FAILS);
  g_autoptr(sc_validation) v = sc_validate_run(b, r, NULL);
  g_assert_false(sc_validation_unsound(v));
  g_assert_cmpuint(v->n_counterexamples, ==, 2);
  const sc_counterexample *c = &v->counterexamples[0];
  g_assert_cmpstr(c->tensor, ==, "y");
  g_assert_cmpstr(c->candidate, ==, "y_0");
  g_assert_cmpstr(c->source, ==, "expected");
  g_assert_true(c->differs);
  g_assert_nonnull(c->index);
  g_assert_cmpfloat(c->spec_value, !=, c->impl_value);
  sc_lemma_set_free(set);

  /* unmapped: the nearest term is shown (it agrees: a true term over
   * operators the impl does not compute), the expected one differs */
  g_autoptr(sc_bundle) b2 = load("models/mlp-tp2-bugs/sharded-input.json");
  g_autoptr(sc_infer_result) r2 = check(b2, &set);
  g_assert_cmpint(sc_infer_failure_kind(r2), ==, SC_FAILURE_UNMAPPED);
  g_autoptr(sc_validation) v2 = sc_validate_run(b2, r2, NULL);
  g_assert_cmpuint(v2->n_counterexamples, >=, 2);
  g_assert_cmpstr(v2->counterexamples[0].source, ==, "nearest term");
  g_assert_cmpstr(v2->counterexamples[0].tensor, ==, "mm");
  g_assert_cmpstr(v2->counterexamples[0].node, ==, "mm");
  const sc_counterexample *last = &v2->counterexamples[v2->n_counterexamples - 1];
  g_assert_cmpstr(last->candidate, ==, "cat(y_0, y_1, dim=0)");
  g_assert_true(last->differs);
  sc_lemma_set_free(set);
}

static void test_too_large_skipped(void) {
  g_autoptr(sc_bundle) b = load("models/mlp-tp2/bundle.json");
  sc_lemma_set *set = NULL;
  g_autoptr(sc_infer_result) r = check(b, &set);
  sc_validate_options o;
  sc_validate_options_init(&o);
  o.max_elements = 40; /* w1 has 128 */
  g_autoptr(sc_validation) v = sc_validate_run(b, r, &o);
  g_assert_false(v->ran);
  g_assert_false(sc_validation_unsound(v));
  g_assert_nonnull(strstr(v->skip_reason, "above the interpreter's limit of 40"));
  g_assert_nonnull(strstr(v->skip_reason, "shape reduction"));
  g_autofree char *js = sc_validation_json(v);
  g_assert_nonnull(strstr(js, "{\"status\":\"skipped\",\"reason\":"));
  sc_lemma_set_free(set);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  sc_ops_init();
  g_test_add_func("/validate/inputs/solved", test_inputs_solved);
  g_test_add_func("/validate/inputs/replica-conflict", test_inputs_replica_and_conflict);
  g_test_add_func("/validate/run/holds", test_validate_holds);
  g_test_add_func("/validate/run/wrong-assume", test_validate_wrong_assume);
  g_test_add_func("/validate/counterexample", test_counterexample);
  g_test_add_func("/validate/too-large-skipped", test_too_large_skipped);
  return g_test_run();
}
