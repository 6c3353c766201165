/* test-report.c — the report writers (report.h): impl tensor labels and
 * the legend, the JSON extension impl_tensors (existing keys unchanged),
 * colour, and the DOT and HTML pictures of the failing neighbourhood, on
 * models of the repository checked with the lemma library. */
#include "report/report-private.h"
#include "check-fixture.h"

#include <glib/gstdio.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The lemma library, loaded once for every test (loading it is most of
 * a small check's time, under the sanitizers). */
static sc_lemma_set *library;

static void check_model(checked *c, const char *rel) {
  GError *err = NULL;
  g_autofree char *path = g_build_filename(SC_TEST_SRCDIR, rel, NULL);
  if (library == NULL) {
    g_autofree char *lemmas = g_build_filename(SC_TEST_SRCDIR, "lemmas", NULL);
    library = sc_lemma_set_new();
    g_assert_true(sc_lemma_set_load_dir(library, lemmas, &err));
    g_assert_no_error(err);
  }
  c->set = NULL; /* borrowed: the library */
  c->b = sc_bundle_load(path, &err);
  g_assert_no_error(err);
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.lemmas = library;
  c->r = sc_infer_run(c->b, &opts, &err);
  g_assert_no_error(err);
}

#define EXTRA_SCALING "models/mlp-tp2-bugs/extra-scaling.json"

static void test_mark(void) {
  checked c;
  check_model(&c, EXTRA_SCALING);
  g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g_autofree char *a = sc_report_mark_expr(c.b, "slice(mm_1, dim=0, start=0, end=4)", seen);
  g_assert_cmpstr(a, ==, "slice(r0:mm_1, dim=0, start=0, end=4)");
  /* an operator named like a tensor is a call; keywords and quoted text
   * are no tensors; numbers keep their letters */
  g_autofree char *b2 = sc_report_mark_expr(c.b, "gelu(gelu, mm_3=\"mm_3\", eps=1e-05)", seen);
  g_assert_cmpstr(b2, ==, "gelu(r0:gelu, mm_3=\"mm_3\", eps=1e-05)");
  g_assert_cmpuint(seen->len, ==, 2);
  /* the spec's own names are not the impl's: no rank, not listed */
  g_autofree char *s = sc_report_mark_expr(c.b, "cat(w2, x)", seen);
  g_assert_cmpstr(s, ==, "cat(w2, x)");
  g_assert_cmpuint(seen->len, ==, 2);
  g_autofree char *where = sc_report_impl_where(c.b, g_array_index(seen, sc_id, 1));
  g_assert_cmpstr(where, ==, "rank 0, aten.gelu.default at model.py:42, f32[4, 8]");
  checked_clear(&c);
}

static void test_text_names(void) {
  checked c;
  check_model(&c, EXTRA_SCALING);
  g_autofree char *text = checked_write(sc_report_text, &c, NULL);
  g_assert_nonnull(strstr(text, "    gelu = cat(r0:gelu, r1:gelu_1, dim=1)\n"));
  g_assert_nonnull(strstr(text, "impl tensors named above"));
  g_assert_nonnull(strstr(text, "  r1:gelu_1  rank 1, aten.gelu.default at model.py:42, f32[4, 8]\n"));
  g_assert_nonnull(strstr(text, "  r0:w2_0  rank 0, impl input, f32[8, 8]\n"));
  g_assert_null(strstr(text, "\033["));
  checked_clear(&c);
}

static void test_json_names(void) {
  checked c;
  check_model(&c, EXTRA_SCALING);
  g_autofree char *js = sc_report_json(c.b, c.r, NULL);
  json_error_t je;
  json_t *o = json_loads(js, 0, &je);
  g_assert_nonnull(o);
  /* the spec's keys are as before: expressions over the names as written */
  json_t *f = json_object_get(o, "failure");
  g_assert_cmpstr(json_string_value(json_object_get(f, "node")), ==, "mm_1");
  json_t *gelu = json_object_get(json_object_get(f, "input_relation"), "gelu");
  g_assert_cmpstr(json_string_value(json_array_get(gelu, 0)), ==, "cat(gelu, gelu_1, dim=1)");
  /* the extension: what each impl tensor named is */
  json_t *it = json_object_get(o, "impl_tensors");
  g_assert_true(json_is_object(it));
  json_t *g = json_object_get(it, "gelu");
  g_assert_cmpstr(json_string_value(json_object_get(g, "label")), ==, "r0:gelu");
  g_assert_cmpint(json_integer_value(json_object_get(g, "rank")), ==, 0);
  g_assert_cmpstr(json_string_value(json_object_get(g, "src")), ==, "model.py:42");
  g_assert_cmpstr(json_string_value(json_object_get(g, "op")), ==, "aten.gelu.default");
  g_assert_true(json_is_true(json_object_get(json_object_get(it, "w2_0"), "input")));
  g_assert_null(json_object_get(it, "w2")); /* a spec name */
  json_decref(o);
  checked_clear(&c);
}

static void test_colour(void) {
  sc_report_colour m;
  GError *err = NULL;
  g_assert_true(sc_report_parse_colour("always", &m, &err) && m == SC_COLOUR_ALWAYS);
  g_assert_true(sc_report_parse_colour(NULL, &m, &err) && m == SC_COLOUR_AUTO);
  g_assert_false(sc_report_parse_colour("sometimes", &m, &err));
  g_assert_error(err, SC_REPORT_ERROR, SC_REPORT_ERROR_USAGE);
  g_assert_cmpstr(err->message, ==, "--color: expected auto, always or never, found 'sometimes'");
  g_clear_error(&err);
  g_assert_true(sc_report_colour_enabled(SC_COLOUR_ALWAYS, -1));
  g_assert_false(sc_report_colour_enabled(SC_COLOUR_NEVER, -1));
  g_assert_false(sc_report_colour_enabled(SC_COLOUR_AUTO, -1)); /* not a terminal */
  g_setenv("NO_COLOR", "1", TRUE);
  g_assert_false(sc_report_colour_enabled(SC_COLOUR_AUTO, 1));
  g_unsetenv("NO_COLOR");

  checked c;
  check_model(&c, EXTRA_SCALING);
  sc_report_options o = {.colour = TRUE};
  g_autofree char *text = checked_write(sc_report_text, &c, &o);
  g_assert_true(g_str_has_prefix(text, "mlp-tp2-extra-scaling: \033[1;31mfails\033[0m\n"));
  g_assert_nonnull(strstr(text, "first unmapped spec node: \033[1;31mmm_1\033[0m"));
  checked_clear(&c);
}

static void test_dot(void) {
  checked c;
  check_model(&c, EXTRA_SCALING);
  g_autofree char *dot = checked_write(sc_report_dot, &c, NULL);
  g_assert_true(g_str_has_prefix(dot, "digraph shardcheck {"));
  g_assert_true(g_str_has_suffix(dot, "}\n"));
  /* the failing node, its inputs with their relations, the impl side */
  g_assert_nonnull(strstr(dot, "label=\"spec node mm_1\\naten.mm.default at model.py:38\""));
  g_assert_nonnull(strstr(dot, "label=\"spec gelu\\n= cat(r0:gelu, r1:gelu_1, dim=1)\""));
  g_assert_nonnull(strstr(dot, "label=\"spec y\\nno clean expression\""));
  g_assert_nonnull(strstr(dot, "subgraph cluster_impl"));
  g_assert_nonnull(strstr(dot, "label=\"impl node all_reduce\\ncomm.all_reduce.default at model.py:60\""));
  g_assert_nonnull(strstr(dot, "style=dashed"));
  int depth = 0;
  for (const char *p = dot; *p; p++)
    depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
  g_assert_cmpint(depth, ==, 0);
  checked_clear(&c);

  check_model(&c, "models/mlp-tp2/bundle.json");
  g_autofree char *ok = checked_write(sc_report_dot, &c, NULL);
  g_assert_nonnull(strstr(ok, "no failure to draw"));
  checked_clear(&c);
}

static void test_html(void) {
  checked c;
  check_model(&c, EXTRA_SCALING);
  sc_report_options o = {.colour = TRUE}; /* colour never reaches HTML */
  g_autofree char *html = checked_write(sc_report_html, &c, &o);
  g_assert_true(g_str_has_prefix(html, "<!DOCTYPE html>"));
  g_assert_nonnull(strstr(html, "<span class=\"verdict v-fails\" id=\"verdict\">fails</span>"));
  g_assert_nonnull(strstr(html, "id=\"failing-node\">mm_1</code>"));
  g_assert_nonnull(strstr(html, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  g_assert_nonnull(strstr(html, "<code>r0:gelu</code></td><td>0</td><td>gelu (aten.gelu.default)"
                                "</td><td class=\"src\">model.py:42</td>"));
  g_assert_null(strstr(html, "\033["));
  /* self-contained: no script, and the only URL is the SVG namespace */
  g_assert_null(strstr(html, "<script"));
  const char *p = html;
  int urls = 0;
  while ((p = strstr(p, "http")) != NULL) {
    g_assert_true(g_str_has_prefix(p, "http://www.w3.org/2000/svg"));
    urls++;
    p += 4;
  }
  g_assert_cmpint(urls, ==, 1);
  checked_clear(&c);

  check_model(&c, "models/mlp-tp2/bundle.json");
  g_autofree char *ok = checked_write(sc_report_html, &c, NULL);
  g_assert_nonnull(strstr(ok, "id=\"verdict\">refines</span>"));
  g_assert_null(strstr(ok, "<svg"));
  g_assert_nonnull(strstr(ok, "<code>r0:y_0</code>"));
  checked_clear(&c);
}

/* The SVG drawing: every vertex is drawn once, inside the picture, and
 * vertices of one layer do not overlap. */
static void test_svg_layout(void) {
  checked c;
  check_model(&c, EXTRA_SCALING);
  g_autoptr(sc_picture) p = sc_picture_build(c.b, c.r);
  g_assert_cmpstr(p->failing, ==, "mm_1");
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  sc_picture_write_svg(f, p);
  fclose(f);
  double w = 0, h = 0;
  g_assert_cmpint(sscanf(strstr(buf, "width=\""), "width=\"%lf\" height=\"%lf\"", &w, &h), ==, 2);
  typedef struct {
    double x, y, w, h;
  } box;
  GArray *boxes = g_array_new(FALSE, FALSE, sizeof(box));
  const char *q = buf;
  guint groups = 0;
  while ((q = strstr(q, "<g id=\"")) != NULL) {
    box r;
    g_assert_cmpint(sscanf(strstr(q, "<rect"), "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"",
                           &r.x, &r.y, &r.w, &r.h), ==, 4);
    g_assert_cmpfloat(r.x, >=, 0);
    g_assert_cmpfloat(r.x + r.w, <=, w);
    g_assert_cmpfloat(r.y + r.h, <=, h);
    for (guint i = 0; i < boxes->len; i++) {
      const box *o = &g_array_index(boxes, box, i);
      gboolean apart = o->x + o->w <= r.x || r.x + r.w <= o->x || o->y + o->h <= r.y ||
                       r.y + r.h <= o->y;
      g_assert_true(apart);
    }
    g_array_append_val(boxes, r);
    groups++;
    q++;
  }
  g_assert_cmpuint(groups, ==, p->vertices->len);
  g_array_unref(boxes);
  free(buf);
  checked_clear(&c);
}

/* ---- "not proved" vs "the values differ" (diagnose.h) ---- */

static sc_diagnosis *diagnose(const checked *c) {
  sc_diagnose_options o;
  sc_diagnose_options_init(&o);
  o.lemmas = c->set != NULL ? c->set : library;
  return sc_diagnose(c->b, c->r, &o);
}

/* A real bug: y is divided by the TP size on every rank. */
static void test_diagnose_differ(void) {
  checked c;
  check_model(&c, EXTRA_SCALING);
  g_autoptr(sc_diagnosis) d = diagnose(&c);
  g_assert_nonnull(d);
  g_assert_cmpint(d->kind, ==, SC_DIAGNOSIS_VALUES_DIFFER);
  g_assert_cmpstr(d->node, ==, "mm_1");
  g_assert_cmpstr(d->tensor, ==, "y");
  g_assert_cmpstr(d->candidate, ==, "y_0"); /* the expected relation, evaluated */
  g_assert_cmpstr(d->index, ==, "[0, 0]");
  g_assert_cmpfloat(fabs(d->impl_value * 2 - d->spec_value), <, 1e-9);
  /* y = y_0 + y_1 does hold, but is not what the bundle expects */
  g_assert_cmpstr(d->other_match, ==, "sum(y_0, y_1)");
  sc_report_options o = {.diagnosis = d};
  g_autofree char *text = checked_write(sc_report_text, &c, &o);
  g_assert_nonnull(strstr(text, "  the values differ: on related random inputs (seed 1), mm_1 is "
                                "the first spec node whose values no clean expression tried "
                                "matches\n  counterexample: at [0, 0], spec y = "));
  g_autofree char *js = sc_report_json(c.b, c.r, &o);
  json_t *root = json_loads(js, 0, NULL);
  json_t *dj = json_object_get(json_object_get(root, "failure"), "diagnosis");
  g_assert_cmpstr(json_string_value(json_object_get(dj, "kind")), ==, "values_differ");
  g_assert_cmpstr(json_string_value(json_object_get(json_object_get(dj, "counterexample"),
                                                    "candidate")), ==, "y_0");
  g_assert_cmpstr(json_string_value(json_object_get(json_object_get(root, "failure"), "kind")), ==,
                  "unmapped"); /* the spec's key is unchanged */
  json_decref(root);
  g_autofree char *html = checked_write(sc_report_html, &c, &o);
  g_assert_nonnull(strstr(html, "id=\"diagnosis\">The values differ"));
  checked_clear(&c);
}

/* Rank 1 rotates its tokens with the table rows of rank 0: the first half
 * of the spec's product is rank 0's, the second half no rank computes. */
static void test_diagnose_partial(void) {
  checked c;
  check_model(&c, "models/bugs/rope-sp-offset/rope-sp-offset-sp2-fwd.json");
  g_autoptr(sc_diagnosis) d = diagnose(&c);
  g_assert_cmpint(d->kind, ==, SC_DIAGNOSIS_VALUES_DIFFER);
  g_assert_cmpstr(d->node, ==, "mul");
  g_assert_cmpuint(d->partial_dim, ==, 0);
  g_assert_cmpuint(d->partial_chunks, ==, 2);
  g_assert_cmpstr(d->partial_tensors[0], ==, "mul");
  g_assert_null(d->partial_tensors[1]);
  g_assert_cmpstr(d->index, ==, "[4, 0]");
  sc_report_options o = {.diagnosis = d};
  g_autofree char *text = checked_write(sc_report_text, &c, &o);
  g_assert_nonnull(strstr(text, "  spec mul along dim 0 in 2 chunks: [0, 4) = r0:mul, [4, 8) "
                                "matches no impl tensor\n"));
  checked_clear(&c);
}

/* A bug that random inputs in [-1, 1] do not show (rank 1 clamps at 0
 * where the spec clamps at 6): the run with inputs scaled by 16 does. */
static void test_diagnose_scaled(void) {
  checked c;
  check_model(&c, "tests/models/captures/aten-extra/mlp-tp2-clampbug.json");
  g_autoptr(sc_diagnosis) d = diagnose(&c);
  g_assert_cmpint(d->kind, ==, SC_DIAGNOSIS_VALUES_DIFFER);
  g_assert_cmpstr(d->node, ==, "clamp_max");
  g_assert_cmpuint(d->seed, ==, 2);
  g_assert_nonnull(strstr(d->detail, "agree with cat(g_0, g_1, dim=1) on the first inputs but not "
                                     "on these"));
  checked_clear(&c);
}

/* The walk stops first at a mask that is all false for every valid label
 * (only a lemma is missing there) and goes on to the node where rank 2's
 * wrong label offset shows: that is the first diverging node. */
static void test_diagnose_deferred(void) {
  checked c;
  check_model(&c, "tests/models/captures/vocab-parallel-ce-backward/"
                  "megatron-ce-backward-tp4-wrong-offset.json");
  g_autoptr(sc_diagnosis) d = diagnose(&c);
  g_assert_cmpint(d->kind, ==, SC_DIAGNOSIS_VALUES_DIFFER);
  g_assert_cmpstr(d->node, ==, "out");
  g_assert_cmpstr(d->not_proved_node, ==, "bitwise_or");
  g_assert_cmpstr(d->not_proved_expression, ==, "r0.lt");
  g_assert_cmpstr(d->candidate, ==, "cat(r0.out, r1.out, r2.out, r3.out, dim=2)");
  checked_clear(&c);
}

/* Shardsmith 31626's mutant (a dropped gather): each rank's bmm is a cat
 * of copies of its block, so the spec's bmm is a cat of an aligned chunk
 * of each rank's bmm (slice(bmm_r, ...)), which the hook "parts of named
 * cats" (pass-cat-slices.c) proves, and the next node, sum_2, reduces
 * each chunk as the rank's sum_4 reduces its block (class-reduce.lemma's
 * reduce_slice_other).  The check stops at _softmax_1, where the values
 * differ, with no node before it only not proved (it stopped at bmm
 * before them). */
static void test_diagnose_chunk_slices(void) {
  checked c;
  check_model(&c, "tests/models/locate/shardsmith-31626-bug.json");
  g_autoptr(sc_diagnosis) d = diagnose(&c);
  g_assert_cmpint(d->kind, ==, SC_DIAGNOSIS_VALUES_DIFFER);
  g_assert_cmpstr(d->node, ==, "_softmax_1");
  g_assert_null(d->not_proved_node);
  checked_clear(&c);
}

/* A correct model whose proof needs a lemma that is not loaded: mlp-tp2
 * with every lemma file but matmul.lemma.  The column-parallel matmul's
 * values agree with cat(mm, mm_2, dim=1). */
static void test_diagnose_not_proved(void) {
  g_autofree char *src = g_build_filename(SC_TEST_SRCDIR, "lemmas", NULL);
  g_autofree char *tmp = g_dir_make_tmp("sc-lemmas-XXXXXX", NULL);
  g_assert_nonnull(tmp);
  GDir *dir = g_dir_open(src, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name(dir)) != NULL) {
    if (!g_str_has_suffix(name, ".lemma") || strcmp(name, "matmul.lemma") == 0)
      continue;
    g_autofree char *from = g_build_filename(src, name, NULL);
    g_autofree char *to = g_build_filename(tmp, name, NULL);
    g_autofree char *text = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(from, &text, &len, NULL));
    g_assert_true(g_file_set_contents(to, text, (gssize)len, NULL));
  }
  g_dir_close(dir);

  checked c;
  GError *err = NULL;
  g_autofree char *path = g_build_filename(SC_TEST_SRCDIR, "models", "mlp-tp2", "bundle.json", NULL);
  c.set = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_dir(c.set, tmp, &err));
  c.b = sc_bundle_load(path, &err);
  g_assert_no_error(err);
  sc_infer_options io;
  sc_infer_options_init(&io);
  io.lemmas = c.set;
  c.r = sc_infer_run(c.b, &io, &err);
  g_assert_no_error(err);
  g_assert_cmpint(sc_infer_verdict(c.r), ==, SC_VERDICT_FAILS);
  g_autoptr(sc_diagnosis) d = diagnose(&c);
  g_assert_cmpint(d->kind, ==, SC_DIAGNOSIS_NOT_PROVED);
  g_assert_cmpstr(d->node, ==, "mm");
  g_assert_cmpstr(d->expression, ==, "cat(mm, mm_2, dim=1)");
  g_assert_cmpuint(d->confirmations, ==, 2);
  sc_report_options o = {.diagnosis = d};
  g_autofree char *text = checked_write(sc_report_text, &c, &o);
  g_assert_nonnull(strstr(text, "    mm = cat(r0:mm, r1:mm_2, dim=1)\n  a lemma is probably "
                                "missing for the step aten.mm.default(x, w1) = cat(r0:mm, r1:mm_2, "
                                "dim=1)"));
  g_autofree char *js = sc_report_json(c.b, c.r, &o);
  g_assert_nonnull(strstr(js, "\"diagnosis\":{\"kind\":\"not_proved\""));
  checked_clear(&c);

  /* a correct model the prover cannot do (docs: undecided split) */
  check_model(&c, "tests/models/symbolic/undecided-split.json");
  g_autoptr(sc_diagnosis) u = diagnose(&c);
  g_assert_cmpint(u->kind, ==, SC_DIAGNOSIS_NOT_PROVED);
  g_assert_nonnull(u->symbols);
  checked_clear(&c);

  dir = g_dir_open(tmp, 0, NULL);
  while ((name = g_dir_read_name(dir)) != NULL) {
    g_autofree char *f = g_build_filename(tmp, name, NULL);
    g_remove(f);
  }
  g_dir_close(dir);
  g_rmdir(tmp);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_setenv("SC_LEMMA_DIR", SC_TEST_SRCDIR "/lemmas", TRUE);
  g_test_add_func("/report/names/mark", test_mark);
  g_test_add_func("/report/names/text", test_text_names);
  g_test_add_func("/report/names/json", test_json_names);
  g_test_add_func("/report/colour", test_colour);
  g_test_add_func("/report/dot", test_dot);
  g_test_add_func("/report/html", test_html);
  g_test_add_func("/report/svg/layout", test_svg_layout);
  g_test_add_func("/report/diagnose/values-differ", test_diagnose_differ);
  g_test_add_func("/report/diagnose/values-differ-scaled", test_diagnose_scaled);
  g_test_add_func("/report/diagnose/values-differ-partial", test_diagnose_partial);
  g_test_add_func("/report/diagnose/values-differ-after-deferral", test_diagnose_deferred);
  g_test_add_func("/report/diagnose/chunk-slices", test_diagnose_chunk_slices);
  g_test_add_func("/report/diagnose/not-proved", test_diagnose_not_proved);
  int status = g_test_run();
  if (library != NULL)
    sc_lemma_set_free(library);
  return status;
}
