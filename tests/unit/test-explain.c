/* test-explain.c — explanations of relations through the check pipeline:
 * the chain of each output relation, step by step (lang's canonical form
 * of the spec call, input and earlier relations, lemma applications, impl
 * nodes, a collective by its semantics), exact for a small bundle with
 * its own two lemmas; the cap and the count of the steps left out; the
 * chains of intermediate relations (explain_all); the same verdict,
 * relations and counters with explanations on as off; the text and JSON
 * reports; and models/mlp-tp2 with the lemma library: y's chain goes
 * through the input relation of w2, the split-contraction lemma and the
 * all_reduce's semantics. */
#include "shardcheck/infer.h"
#include "shardcheck/report.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* y = x @ t(w) with w split by rows over two ranks, x replicated; each
 * rank computes its column block of y and an all_gather joins them. */
static const char *t_bundle =
    "{\"format\": \"shardcheck-bundle/1\", \"name\": \"t-tp2\",\n"
    " \"spec\": {\"inputs\": [{\"name\": \"x\", \"shape\": [4, 8]}, {\"name\": \"w\", \"shape\": [6, 8]}],\n"
    "  \"nodes\": [{\"name\": \"wt\", \"op\": \"aten.t.default\", \"args\": [\"w\"],"
    " \"outputs\": [{\"name\": \"w_t\", \"shape\": [8, 6]}], \"src\": \"m.py:3\"},\n"
    "   {\"name\": \"lin\", \"op\": \"aten.mm.default\", \"args\": [\"x\", \"w_t\"],"
    " \"outputs\": [{\"name\": \"y\", \"shape\": [4, 6]}], \"src\": \"m.py:4\"}],\n"
    "  \"outputs\": [\"y\"]},\n"
    " \"impl\": {\"inputs\": [{\"name\": \"x_0\", \"shape\": [4, 8], \"rank\": 0},"
    " {\"name\": \"w_0\", \"shape\": [3, 8], \"rank\": 0},\n"
    "   {\"name\": \"x_1\", \"shape\": [4, 8], \"rank\": 1}, {\"name\": \"w_1\", \"shape\": [3, 8], \"rank\": 1}],\n"
    "  \"nodes\": [{\"name\": \"wt_0\", \"op\": \"aten.t.default\", \"args\": [\"w_0\"],"
    " \"outputs\": [{\"name\": \"wt0\", \"shape\": [8, 3], \"rank\": 0}], \"src\": \"p.py:10\"},\n"
    "   {\"name\": \"lin_0\", \"op\": \"aten.mm.default\", \"args\": [\"x_0\", \"wt0\"],"
    " \"outputs\": [{\"name\": \"y_0\", \"shape\": [4, 3], \"rank\": 0}], \"src\": \"p.py:11\"},\n"
    "   {\"name\": \"wt_1\", \"op\": \"aten.t.default\", \"args\": [\"w_1\"],"
    " \"outputs\": [{\"name\": \"wt1\", \"shape\": [8, 3], \"rank\": 1}], \"src\": \"p.py:10\"},\n"
    "   {\"name\": \"lin_1\", \"op\": \"aten.mm.default\", \"args\": [\"x_1\", \"wt1\"],"
    " \"outputs\": [{\"name\": \"y_1\", \"shape\": [4, 3], \"rank\": 1}], \"src\": \"p.py:11\"},\n"
    "   {\"name\": \"gather\", \"op\": \"comm.all_gather\", \"args\": [[\"y_0\", \"y_1\"]],"
    " \"kwargs\": {\"dim\": 1}, \"outputs\": [{\"name\": \"g_0\", \"shape\": [4, 6], \"rank\": 0},"
    " {\"name\": \"g_1\", \"shape\": [4, 6], \"rank\": 1}], \"src\": \"p.py:12\"}],\n"
    "  \"outputs\": [\"g_0\", \"g_1\"]},\n"
    " \"input_relation\": {\"x\": [\"x_0\", \"x_1\"], \"w\": [\"cat(w_0, w_1, dim=0)\"]}}\n";

/* Just the two identities the bundle needs (one way each), so that the
 * chains do not depend on the library. */
static const char *t_lemmas =
    "lemma t_cat: transpose(cat(?a, ?b, dim=0), dim0=0, dim1=1)\n"
    "    => cat(transpose(?a, dim0=0, dim1=1), transpose(?b, dim0=0, dim1=1), dim=1)\n"
    "  where dtype(?a) == dtype(?b)\n"
    "lemma mm_cols: mm(?x, cat(?a, ?b, dim=1)) => cat(mm(?x, ?a), mm(?x, ?b), dim=1)\n"
    "  where dtype(?a) == dtype(?b)\n";

typedef struct {
  sc_bundle *b;
  sc_lemma_set *lemmas;
} fixture;

static void fixture_t(fixture *f) {
  GError *err = NULL;
  f->b = sc_bundle_load_string(t_bundle, "t.json", &err);
  g_assert_no_error(err);
  f->lemmas = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_string(f->lemmas, "explain-test.lemma", t_lemmas, &err));
  g_assert_no_error(err);
}

static void fixture_clear(fixture *f) {
  sc_lemma_set_free(f->lemmas);
  sc_bundle_free(f->b);
}

static sc_infer_result *run(const fixture *f, gboolean explain, gboolean all, uint32_t cap) {
  sc_infer_options o;
  sc_infer_options_init(&o);
  o.lemmas = f->lemmas;
  o.explain = explain;
  o.explain_all = all;
  if (cap)
    o.explain_max_steps = cap;
  GError *err = NULL;
  sc_infer_result *r = sc_infer_run(f->b, &o, &err);
  g_assert_no_error(err);
  g_assert_nonnull(r);
  return r;
}

/* "TERM | REASON" per step, the start first. */
static char *chain_text(const sc_relation_explanation *e) {
  GString *s = g_string_new(e->start);
  for (uint32_t i = 0; i < e->n_steps; i++)
    g_string_append_printf(s, "\n%s | %s", e->steps[i].term, e->steps[i].reason);
  return g_string_free(s, FALSE);
}

static const sc_relation_explanation *find_chain(const sc_infer_result *r, const sc_bundle *b,
                                                 const char *tensor, const char *relation) {
  sc_id t = sc_graph_find_tensor(sc_bundle_spec(b), tensor);
  for (uint32_t i = 0; i < sc_infer_n_relation_explanations(r); i++) {
    const sc_relation_explanation *e = sc_infer_relation_explanation(r, i);
    if (e->tensor == t && strcmp(e->relation, relation) == 0)
      return e;
  }
  return NULL;
}

static void test_exact(void) {
  fixture f;
  fixture_t(&f);
  sc_infer_result *r = run(&f, TRUE, TRUE, 0);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  /* an output relation per impl output, and the intermediate w_t */
  g_assert_cmpuint(sc_infer_n_relation_explanations(r), ==, 3);

  const sc_relation_explanation *wt = find_chain(r, f.b, "w_t", "cat(wt0, wt1, dim=1)");
  g_assert_nonnull(wt);
  g_assert_false(wt->output);
  g_assert_cmpstr(sc_graph_node(sc_bundle_spec(f.b), wt->node)->name, ==, "wt");
  g_autofree char *wt_text = chain_text(wt);
  g_assert_cmpstr(wt_text, ==,
                  "t(w)\n"
                  "transpose(w, dim0=0, dim1=1) | lang's canonical form of aten.t.default\n"
                  "transpose(cat(w_0, w_1, dim=0), dim0=0, dim1=1) | input relation of w\n"
                  "cat(transpose(w_0, dim0=0, dim1=1), transpose(w_1, dim0=0, dim1=1), dim=1)"
                  " | lemma t_cat (explain-test.lemma:1)\n"
                  "cat(wt0, transpose(w_1, dim0=0, dim1=1), dim=1) | impl node wt_0 at p.py:10\n"
                  "cat(wt0, wt1, dim=1) | impl node wt_1 at p.py:10");
  g_assert_cmpuint(wt->total_steps, ==, 5);

  const sc_relation_explanation *y = find_chain(r, f.b, "y", "g_0");
  g_assert_nonnull(y);
  g_assert_true(y->output);
  g_autofree char *y_text = chain_text(y);
  /* x's relation has two expressions: a step from x_0 to x_1 goes
   * through x (x_0 = x = x_1) */
  g_assert_cmpstr(y_text, ==,
                  "mm(x, w_t)\n"
                  "mm(x_0, w_t) | input relation of x\n"
                  "mm(x_0, cat(wt0, wt1, dim=1)) | relation of w_t found at spec node wt\n"
                  "cat(mm(x_0, wt0), mm(x_0, wt1), dim=1) | lemma mm_cols (explain-test.lemma:4)\n"
                  "cat(y_0, mm(x_0, wt1), dim=1) | impl node lin_0 at p.py:11\n"
                  "cat(y_0, mm(x, wt1), dim=1) | input relation of x\n"
                  "cat(y_0, mm(x_1, wt1), dim=1) | input relation of x\n"
                  "cat(y_0, y_1, dim=1) | impl node lin_1 at p.py:11\n"
                  "g_0 | comm.all_gather along dim 1 over ranks 0, 1 (impl node gather at p.py:12)");
  g_assert_cmpuint(y->total_steps, ==, 8);
  g_assert_nonnull(find_chain(r, f.b, "y", "g_1"));
  sc_infer_result_free(r);
  fixture_clear(&f);
}

/* Explanations change nothing that is proved, and cost nothing when off. */
static void test_off_same(void) {
  fixture f;
  fixture_t(&f);
  sc_infer_result *off = run(&f, FALSE, FALSE, 0);
  sc_infer_result *on = run(&f, TRUE, TRUE, 0);
  g_assert_cmpuint(sc_infer_n_relation_explanations(off), ==, 0);
  g_assert_cmpint(sc_infer_verdict(off), ==, sc_infer_verdict(on));
  sc_id y = sc_graph_find_tensor(sc_bundle_spec(f.b), "y");
  const GPtrArray *a = sc_infer_output_exprs(off, y), *b = sc_infer_output_exprs(on, y);
  g_assert_cmpuint(a->len, ==, b->len);
  for (guint i = 0; i < a->len; i++)
    g_assert_cmpstr(g_ptr_array_index(a, i), ==, g_ptr_array_index(b, i));
  const sc_infer_stats *sa = sc_infer_get_stats(off), *sb = sc_infer_get_stats(on);
  g_assert_cmpuint(sa->applied, ==, sb->applied);
  g_assert_cmpuint(sa->explored, ==, sb->explored);
  sc_infer_result_free(off);
  sc_infer_result_free(on);
  fixture_clear(&f);
}

static void test_cap(void) {
  fixture f;
  fixture_t(&f);
  sc_infer_result *full = run(&f, TRUE, FALSE, 0);
  sc_infer_result *cap = run(&f, TRUE, FALSE, 3);
  /* without explain_all: only the output relations */
  g_assert_cmpuint(sc_infer_n_relation_explanations(cap), ==, 2);
  const sc_relation_explanation *a = find_chain(full, f.b, "y", "g_0");
  const sc_relation_explanation *c = find_chain(cap, f.b, "y", "g_0");
  g_assert_cmpuint(c->n_steps, ==, 3);
  g_assert_cmpuint(c->total_steps, ==, 8);
  for (uint32_t i = 0; i < 3; i++) {
    g_assert_cmpstr(c->steps[i].term, ==, a->steps[i].term);
    g_assert_cmpstr(c->steps[i].reason, ==, a->steps[i].reason);
  }
  sc_infer_result_free(full);
  sc_infer_result_free(cap);
  fixture_clear(&f);
}

static char *text_report(const sc_bundle *b, const sc_infer_result *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  sc_report_options ro = {.explain = TRUE, .n_lemmas = 2, .lemma_dirs = "test"};
  sc_report_text(out, b, r, &ro);
  fclose(out);
  return buf;
}

static void test_reports(void) {
  fixture f;
  fixture_t(&f);
  sc_infer_result *r = run(&f, TRUE, FALSE, 3);
  g_autofree char *text = text_report(f.b, r);
  g_assert_nonnull(strstr(text, "  y = r0:g_0   (spec node lin at m.py:4)\n"
                                "        mm(x, w_t)\n"
                                "     1. = mm(r0:x_0, w_t)   by input relation of x\n"));
  g_assert_nonnull(strstr(text, "     3. = cat(mm(r0:x_0, r0:wt0), mm(r0:x_0, r1:wt1), dim=1)   by lemma mm_cols "
                                "(explain-test.lemma:4)\n"
                                "        ... 5 more steps\n"));
  sc_report_options ro = {.explain = TRUE, .n_lemmas = 2, .lemma_dirs = "test"};
  g_autofree char *js = sc_report_json(f.b, r, &ro);
  json_error_t je;
  json_t *o = json_loads(js, 0, &je);
  g_assert_nonnull(o);
  json_t *ex = json_object_get(o, "explanations");
  g_assert_true(json_is_array(ex));
  g_assert_cmpuint(json_array_size(ex), ==, 2);
  json_t *e0 = json_array_get(ex, 0);
  g_assert_cmpstr(json_string_value(json_object_get(e0, "tensor")), ==, "y");
  g_assert_cmpstr(json_string_value(json_object_get(e0, "node")), ==, "lin");
  g_assert_cmpstr(json_string_value(json_object_get(e0, "relation")), ==, "g_0");
  g_assert_cmpstr(json_string_value(json_object_get(e0, "start")), ==, "mm(x, w_t)");
  g_assert_true(json_is_true(json_object_get(e0, "output")));
  g_assert_cmpint(json_integer_value(json_object_get(e0, "total_steps")), ==, 8);
  json_t *steps = json_object_get(e0, "steps");
  g_assert_cmpuint(json_array_size(steps), ==, 3);
  g_assert_cmpstr(json_string_value(json_object_get(json_array_get(steps, 1), "reason")), ==,
                  "relation of w_t found at spec node wt");
  json_decref(o);
  /* without --explain the key is absent */
  sc_report_options quiet = {.explain = FALSE, .n_lemmas = 2, .lemma_dirs = "test"};
  g_autofree char *js2 = sc_report_json(f.b, r, &quiet);
  g_assert_null(strstr(js2, "\"explanations\""));
  sc_infer_result_free(r);
  fixture_clear(&f);
}

/* models/mlp-tp2 with the lemma library: y = y_0 rests on the input
 * relation of w2, the split contraction of the row-parallel matmul, and
 * the all_reduce summing the partials. */
static void test_mlp(void) {
  GError *err = NULL;
  g_autofree char *path = g_build_filename(SC_TEST_SRCDIR, "models", "mlp-tp2", "bundle.json", NULL);
  fixture f;
  f.b = sc_bundle_load(path, &err);
  g_assert_no_error(err);
  f.lemmas = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_dir(f.lemmas, sc_lemma_builtin_dir(), &err));
  g_assert_no_error(err);
  sc_infer_result *off = run(&f, FALSE, FALSE, 0);
  sc_infer_result *r = run(&f, TRUE, FALSE, 0);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  g_assert_cmpuint(sc_infer_get_stats(r)->applied, ==, sc_infer_get_stats(off)->applied);
  sc_id y = sc_graph_find_tensor(sc_bundle_spec(f.b), "y");
  const GPtrArray *outs = sc_infer_output_exprs(r, y);
  g_assert_cmpuint(outs->len, >=, 1);
  /* one chain per output relation of y, ending at it */
  g_assert_cmpuint(sc_infer_n_relation_explanations(r), ==, outs->len);
  for (guint k = 0; k < outs->len; k++) {
    const char *rel = g_ptr_array_index(outs, k);
    const sc_relation_explanation *e = find_chain(r, f.b, "y", rel);
    g_assert_nonnull(e);
    g_assert_true(e->output);
    g_assert_cmpuint(e->n_steps, ==, e->total_steps);
    g_assert_cmpuint(e->n_steps, >=, 3);
    g_assert_cmpstr(e->steps[e->n_steps - 1].term, ==, rel);
    g_assert_true(g_str_has_prefix(e->start, "mm("));
    int w2 = -1, contract = -1, reduce = -1;
    for (uint32_t i = 0; i < e->n_steps; i++) {
      const char *why = e->steps[i].reason;
      if (strcmp(why, "input relation of w2") == 0)
        w2 = (int)i;
      if (g_str_has_prefix(why, "lemma mm_cat_contract (matmul.lemma:"))
        contract = (int)i;
      if (g_str_has_prefix(why, "comm.all_reduce 'sum' over ranks 0, 1 (impl node "))
        reduce = (int)i;
    }
    /* w2 is split before the contraction splits, and the all_reduce
     * sums the partials last */
    g_assert_cmpint(w2, >=, 0);
    g_assert_cmpint(contract, >, w2);
    g_assert_cmpint(reduce, ==, (int)e->n_steps - 1);
    g_assert_true(g_str_has_prefix(e->steps[contract].term, "sum(mm("));
  }
  sc_infer_result_free(off);
  sc_infer_result_free(r);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/explain/chain/exact", test_exact);
  g_test_add_func("/explain/chain/off-same", test_off_same);
  g_test_add_func("/explain/chain/cap", test_cap);
  g_test_add_func("/explain/report/text-json", test_reports);
  g_test_add_func("/explain/model/mlp-tp2", test_mlp);
  return g_test_run();
}
