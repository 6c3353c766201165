/* test-bundle.c — the bundle loader (bundle.h) and bound relation
 * expressions (texpr.h): loading from strings and files, every relation
 * field, error messages with file, JSON path and column, the diag, texpr
 * binding, types, errors and the print / re-bind round trip. */
#include "shardcheck/bundle.h"

#include <string.h>

/* A small valid bundle (the Megatron MLP on 2 ranks), with a placeholder
 * %s for extra top-level fields. */
static const char base_json[] =
    "{\"format\": \"shardcheck-bundle/1\", \"name\": \"mlp\", \"description\": \"d\",%s\n"
    " \"spec\": {\"inputs\": [{\"name\": \"x\", \"shape\": [4, 8]},\n"
    "   {\"name\": \"w1\", \"shape\": [8, 16], \"dtype\": \"f32\"},\n"
    "   {\"name\": \"w2\", \"shape\": [16, 8]}],\n"
    "  \"nodes\": [{\"name\": \"fc1\", \"op\": \"aten.mm.default\", \"args\": [\"x\", \"w1\"],\n"
    "              \"outputs\": [{\"name\": \"h\", \"shape\": [4, 16]}], \"src\": \"m.py:1\"},\n"
    "   {\"name\": \"act\", \"op\": \"aten.gelu.default\", \"args\": [\"h\"], \"outputs\": [{\"name\": \"g\"}]},\n"
    "   {\"name\": \"fc2\", \"op\": \"aten.mm.default\", \"args\": [\"g\", \"w2\"], \"outputs\": [{\"name\": \"y\"}]}],\n"
    "  \"outputs\": [\"y\", \"h\"]},\n"
    " \"impl\": {\"inputs\": [{\"name\": \"x_0\", \"shape\": [4, 8], \"rank\": 0},\n"
    "   {\"name\": \"x_1\", \"shape\": [4, 8], \"rank\": 1},\n"
    "   {\"name\": \"w1_0\", \"shape\": [8, 8]}, {\"name\": \"w1_1\", \"shape\": [8, 8]},\n"
    "   {\"name\": \"w2_0\", \"shape\": [8, 8]}, {\"name\": \"w2_1\", \"shape\": [8, 8]}],\n"
    "  \"nodes\": [\n"
    "   {\"name\": \"fc1_0\", \"op\": \"aten.mm.default\", \"args\": [\"x_0\", \"w1_0\"], \"outputs\": [{\"name\": \"h_0\", \"rank\": 0}]},\n"
    "   {\"name\": \"fc1_1\", \"op\": \"aten.mm.default\", \"args\": [\"x_1\", \"w1_1\"], \"outputs\": [{\"name\": \"h_1\"}]},\n"
    "   {\"name\": \"act_0\", \"op\": \"aten.gelu.default\", \"args\": [\"h_0\"], \"outputs\": [{\"name\": \"g_0\"}]},\n"
    "   {\"name\": \"act_1\", \"op\": \"aten.gelu.default\", \"args\": [\"h_1\"], \"outputs\": [{\"name\": \"g_1\"}]},\n"
    "   {\"name\": \"fc2_0\", \"op\": \"aten.mm.default\", \"args\": [\"g_0\", \"w2_0\"], \"outputs\": [{\"name\": \"p_0\"}]},\n"
    "   {\"name\": \"fc2_1\", \"op\": \"aten.mm.default\", \"args\": [\"g_1\", \"w2_1\"], \"outputs\": [{\"name\": \"p_1\"}]},\n"
    "   {\"name\": \"ar\", \"op\": \"comm.all_reduce\", \"args\": [[\"p_0\", \"p_1\"]], \"kwargs\": {\"op\": \"sum\"},\n"
    "    \"outputs\": [{\"name\": \"y_0\"}, {\"name\": \"y_1\"}]}],\n"
    "  \"outputs\": [\"y_0\", \"y_1\", \"h_0\", \"h_1\"]},\n"
    " \"input_relation\": {\"x\": [\"x_0\", \"x_1\"], \"w1\": [\"cat(w1_0, w1_1, dim=1)\"],\n"
    "   \"w2\": [\"cat(w2_0, w2_1, dim=0)\"]}%s}\n";

static char *make_json(const char *head, const char *tail) {
  return g_strdup_printf(base_json, head ? head : "", tail ? tail : "");
}

static sc_bundle *load_ok(const char *head, const char *tail) {
  g_autofree char *json = make_json(head, tail);
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(json, "t.json", &err);
  g_assert_no_error(err);
  g_assert_nonnull(b);
  return b;
}

/* Loading must fail with a message containing every phrase. */
static void load_fails(const char *json, int code, const char *const *phrases) {
  GError *err = NULL;
  sc_bundle_diag diag = {0};
  sc_bundle *b = sc_bundle_load_string_diag(json, strlen(json), "t.json", &diag, &err);
  g_assert_null(b);
  g_assert_error(err, SC_BUNDLE_ERROR, code);
  for (const char *const *p = phrases; *p; p++) {
    if (strstr(err->message, *p) == NULL)
      g_error("message '%s' lacks '%s'", err->message, *p);
  }
  g_assert_cmpstr(diag.file, ==, "t.json");
  g_assert_nonnull(diag.path);
  g_assert_nonnull(diag.what);
  g_assert_nonnull(strstr(err->message, diag.what));
  sc_bundle_diag_clear(&diag);
  g_error_free(err);
}

static const sc_relation_entry *entry(const sc_bundle *b, const sc_relation *r, const char *n) {
  sc_id t = sc_graph_find_tensor(sc_bundle_spec(b), n);
  g_assert_cmpuint(t, !=, SC_ID_NONE);
  return sc_relation_find(r, t);
}

/* ---- loading ---- */

static void test_load_basic(void) {
  g_autoptr(sc_bundle) b = load_ok(NULL, NULL);
  g_assert_cmpstr(sc_bundle_name(b), ==, "mlp");
  g_assert_cmpstr(sc_bundle_description(b), ==, "d");
  g_assert_cmpstr(sc_bundle_file(b), ==, "t.json");
  sc_graph *spec = sc_bundle_spec(b), *impl = sc_bundle_impl(b);
  g_assert_cmpuint(sc_graph_n_inputs(spec), ==, 3);
  g_assert_cmpuint(sc_graph_n_nodes(spec), ==, 3);
  g_assert_cmpuint(sc_graph_n_tensors(spec), ==, 6);
  g_assert_cmpuint(sc_graph_n_nodes(impl), ==, 7);
  g_assert_cmpuint(sc_graph_n_outputs(impl), ==, 4);
  g_assert_true(sc_graph_is_finished(spec));
  g_assert_cmpstr(sc_graph_node(spec, 0)->src, ==, "m.py:1");
  g_assert_null(sc_graph_node(spec, 1)->src);
  /* Types: declared or inferred. */
  const sc_tensor *y = sc_graph_tensor(spec, sc_graph_find_tensor(spec, "y"));
  g_autofree char *ys = sc_shape_to_string(&y->type.shape);
  g_assert_cmpstr(ys, ==, "[4, 8]");
  const sc_tensor *y1 = sc_graph_tensor(impl, sc_graph_find_tensor(impl, "y_1"));
  g_assert_cmpuint(y1->result_index, ==, 1);
  /* "rank" kept. */
  g_assert_cmpint(sc_graph_tensor(impl, sc_graph_find_tensor(impl, "x_1"))->rank, ==, 1);
  g_assert_cmpint(sc_graph_tensor(impl, sc_graph_find_tensor(impl, "h_0"))->rank, ==, 0);
  g_assert_cmpint(sc_graph_tensor(impl, sc_graph_find_tensor(impl, "h_1"))->rank, ==, -1);
  /* Both graphs share the symtab. */
  g_assert_true(sc_graph_symtab(spec) == sc_bundle_symtab(b));
  g_assert_true(sc_graph_symtab(impl) == sc_bundle_symtab(b));
  /* check_outputs defaults to every spec output. */
  g_assert_false(sc_bundle_check_outputs_given(b));
  g_assert_cmpuint(sc_bundle_n_check_outputs(b), ==, 2);
  g_assert_cmpuint(sc_bundle_check_output(b, 0), ==, y - sc_graph_tensor(spec, 0));
  g_assert_false(sc_bundle_has_expect_output_relation(b));
  g_assert_cmpuint(sc_bundle_expect_output_relation(b)->n_entries, ==, 0);
  g_assert_cmpuint(sc_bundle_assume_relation(b)->n_entries, ==, 0);
}

static void test_input_relation(void) {
  g_autoptr(sc_bundle) b = load_ok(NULL, NULL);
  const sc_relation *r = sc_bundle_input_relation(b);
  g_assert_cmpuint(r->n_entries, ==, 3);
  /* File order. */
  g_assert_cmpstr(sc_graph_tensor(sc_bundle_spec(b), r->entries[0].tensor)->name, ==, "x");
  g_assert_cmpstr(sc_graph_tensor(sc_bundle_spec(b), r->entries[2].tensor)->name, ==, "w2");
  const sc_relation_entry *x = entry(b, r, "x");
  g_assert_cmpuint(x->n_exprs, ==, 2);
  g_assert_cmpint(sc_texpr_get_kind(x->exprs[0]), ==, SC_TEXPR_TENSOR);
  g_assert_cmpuint(sc_texpr_tensor(x->exprs[1]), ==,
                   sc_graph_find_tensor(sc_bundle_impl(b), "x_1"));
  g_assert_cmpstr(x->texts[1], ==, "x_1");
  const sc_relation_entry *w1 = entry(b, r, "w1");
  g_assert_cmpuint(w1->n_exprs, ==, 1);
  g_autofree char *s = sc_texpr_to_string(w1->exprs[0]);
  g_assert_cmpstr(s, ==, "cat(w1_0, w1_1, dim=1)");
  g_autofree char *shape = sc_shape_to_string(&sc_texpr_type(w1->exprs[0])->shape);
  g_assert_cmpstr(shape, ==, "[8, 16]");
  g_assert_cmpstr(sc_texpr_op(w1->exprs[0])->qualname, ==, "sc.cat.default");
  g_assert_cmpuint(sc_texpr_n_children(w1->exprs[0]), ==, 2);
  g_assert_null(entry(b, r, "h"));
}

static void test_all_relation_fields(void) {
  g_autoptr(sc_bundle) b = load_ok(
      NULL, ",\n \"expect_output_relation\": {\"y\": [\"y_0\", \"y_1\"],"
            " \"h\": [\"cat(h_0, h_1, dim=1)\"]},\n"
            " \"assume_relation\": {\"g\": [\"cat(g_0, g_1, dim=-1)\"]},\n"
            " \"check_outputs\": [\"y\"]");
  const sc_relation *e = sc_bundle_expect_output_relation(b);
  g_assert_true(sc_bundle_has_expect_output_relation(b));
  g_assert_cmpuint(e->n_entries, ==, 2);
  g_assert_cmpuint(entry(b, e, "y")->n_exprs, ==, 2);
  g_autofree char *hs = sc_texpr_to_string(entry(b, e, "h")->exprs[0]);
  g_assert_cmpstr(hs, ==, "cat(h_0, h_1, dim=1)");
  const sc_relation *a = sc_bundle_assume_relation(b);
  g_assert_cmpuint(a->n_entries, ==, 1);
  g_autofree char *gs = sc_texpr_to_string(entry(b, a, "g")->exprs[0]);
  g_assert_cmpstr(gs, ==, "cat(g_0, g_1, dim=-1)");
  g_assert_true(sc_bundle_check_outputs_given(b));
  g_assert_cmpuint(sc_bundle_n_check_outputs(b), ==, 1);
  g_assert_cmpuint(sc_bundle_check_output(b, 0), ==,
                   sc_graph_find_tensor(sc_bundle_spec(b), "y"));
}

static void test_symbols(void) {
  const char *json =
      "{\"format\": \"shardcheck-bundle/1\",\n"
      " \"symbols\": {\"S\": {\"min\": 2, \"max\": 64}, \"V\": {}},\n"
      " \"assume\": [\"S % 2 == 0\"],\n"
      " \"spec\": {\"inputs\": [{\"name\": \"x\", \"shape\": [\"S\", 4]},\n"
      "   {\"name\": \"ids\", \"shape\": [\"S\"], \"dtype\": \"i64\", \"values\": {\"min\": 0, \"max\": \"V-1\"}}],\n"
      "  \"nodes\": [{\"name\": \"r\", \"op\": \"aten.relu.default\", \"args\": [\"x\"],\n"
      "              \"outputs\": [{\"name\": \"y\", \"shape\": [\"S\", 4]}]}], \"outputs\": [\"y\"]},\n"
      " \"impl\": {\"inputs\": [{\"name\": \"a\", \"shape\": [\"S/2\", 4]}, {\"name\": \"b\", \"shape\": [\"S/2\", 4]},\n"
      "   {\"name\": \"ids0\", \"shape\": [\"S\"], \"dtype\": \"int64\"}],\n"
      "  \"nodes\": [{\"name\": \"r\", \"op\": \"aten.relu\", \"args\": [\"a\"], \"outputs\": [{\"name\": \"ya\"}]}],\n"
      "  \"outputs\": [\"ya\"]},\n"
      " \"input_relation\": {\"x\": [\"cat(a, b, dim=0)\", \"cat(slice(cat(a, b), dim=0, start=0, end=\\\"S/2\\\"), b)\"],\n"
      "                    \"ids\": [\"ids0\"]}}";
  GError *err = NULL;
  g_autoptr(sc_bundle) b = sc_bundle_load_string(json, "sym.json", &err);
  g_assert_no_error(err);
  sc_symtab *st = sc_bundle_symtab(b);
  g_assert_cmpuint(sc_symtab_n_symbols(st), ==, 2);
  g_assert_cmpuint(sc_symtab_n_assumptions(st), ==, 1);
  /* The name defaults to the file's basename. */
  g_assert_cmpstr(sc_bundle_name(b), ==, "sym");
  const sc_tensor *ids = sc_graph_tensor(sc_bundle_spec(b), 1);
  g_assert_true(ids->has_values);
  g_autofree char *hi = sc_dim_to_string(st, ids->values_max);
  g_assert_cmpstr(hi, ==, "V-1");
  const sc_relation_entry *x = entry(b, sc_bundle_input_relation(b), "x");
  g_autofree char *s = sc_texpr_to_string(x->exprs[1]);
  g_assert_cmpstr(s, ==, "cat(slice(cat(a, b, dim=0), dim=0, start=0, end=\"S/2\"), b, dim=0)");
  g_autofree char *shape = sc_shape_to_string(&sc_texpr_type(x->exprs[1])->shape);
  g_assert_cmpstr(shape, ==, "[S, 4]");
}

static void test_models(void) {
  static const char *const models[] = {"paper-example", "mlp-tp2", "mlp-tp2-symbolic"};
  for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
    g_autofree char *path =
        g_build_filename(SC_TEST_SRCDIR, "models", models[i], "bundle.json", NULL);
    GError *err = NULL;
    g_autoptr(sc_bundle) b = sc_bundle_load(path, &err);
    g_assert_no_error(err);
    g_assert_cmpstr(sc_bundle_name(b), ==, models[i]);
    g_assert_true(sc_bundle_has_expect_output_relation(b));
  }
  g_autofree char *path = g_build_filename(SC_TEST_SRCDIR, "models", "paper-example",
                                           "bundle.json", NULL);
  g_autoptr(sc_bundle) b = sc_bundle_load(path, NULL);
  sc_graph *impl = sc_bundle_impl(b);
  const sc_tensor *d1 = sc_graph_tensor(impl, sc_graph_find_tensor(impl, "reduce_scatter_1"));
  g_autofree char *s = sc_shape_to_string(&d1->type.shape);
  g_assert_cmpstr(s, ==, "[2, 6]");
  g_assert_cmpint(d1->rank, ==, 1);
}

/* ---- errors ---- */

static void test_error_syntax(void) {
  const char *const p[] = {"t.json:2:", NULL};
  load_fails("{\"format\": 1,\n ]", SC_BUNDLE_ERROR_SYNTAX, p);
  GError *err = NULL;
  sc_bundle_diag diag = {0};
  g_assert_null(sc_bundle_load_string_diag("{\n\n  x", 5, "t.json", &diag, &err));
  g_assert_cmpint(diag.line, ==, 3);
  g_assert_cmpint(diag.column, >, 0);
  sc_bundle_diag_clear(&diag);
  g_clear_error(&err);
}

static void test_error_io(void) {
  GError *err = NULL;
  g_assert_null(sc_bundle_load("/nonexistent/b.json", &err));
  g_assert_error(err, SC_BUNDLE_ERROR, SC_BUNDLE_ERROR_IO);
  g_assert_true(g_str_has_prefix(err->message, "/nonexistent/b.json: cannot read"));
  g_error_free(err);
}

static void test_error_paths(void) {
  struct {
    const char *from, *to;
    const char *phrase;
  } cases[] = {
      {"\"shardcheck-bundle/1\"", "\"v2\"", "t.json: format: expected \"shardcheck-bundle/1\""},
      {"\"args\": [\"x\", \"w1\"]", "\"args\": [\"x\", \"w9\"]",
       "t.json: spec.nodes[0].args[1]: undefined tensor 'w9'"},
      {"\"op\": \"aten.gelu.default\", \"args\": [\"h_0\"]",
       "\"op\": \"aten.gelu_.default\", \"args\": [\"h_0\"]",
       "t.json: impl.nodes[2].op: in-place operator 'aten.gelu_.default'"},
      {"\"shape\": [4, 16]", "\"shape\": [4, 17]",
       "t.json: spec.nodes[0]: node 'fc1': result 'h' declared [4, 17] f32 but aten.mm.default gives [4, 16] f32"},
      {"\"cat(w1_0, w1_1, dim=1)\"", "\"cat(w1_0, w1_1, dim=1\"",
       "t.json: input_relation.w1[0]: col 22: expected"},
      {"\"cat(w1_0, w1_1, dim=1)\"", "\"cat(w1_0, mm(w1_1, w2_0), dim=1)\"",
       "t.json: input_relation.w1[0]: col 11: mm is not a clean operator; relations may use cat, slice"},
      {"\"cat(w1_0, w1_1, dim=1)\"", "\"cat(w1_0, w1_1, dim=0)\"",
       "input_relation.w1[0]: cat(w1_0, w1_1, dim=0) has type [16, 8] f32 but spec tensor 'w1' is [8, 16] f32"},
      {"\"w2\": [\"cat(w2_0, w2_1, dim=0)\"]", "\"w3\": [\"w2_0\"]",
       "input_relation.w3: spec has no tensor 'w3'"},
      {"\"outputs\": [\"y\", \"h\"]", "\"outputs\": [\"y\", \"q\"]",
       "spec.outputs[1]: unknown tensor 'q'"},
      {"{\"name\": \"g_1\"}", "null", "impl.nodes[3].outputs:"},
      {"\"shape\": [4, 8], \"rank\": 0", "\"shape\": [4, 8], \"rank\": -1",
       "impl.inputs[0].rank: rank -1 is out of range"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *json = make_json(NULL, NULL);
    char *at = strstr(json, cases[i].from);
    g_assert_nonnull(at);
    GString *s = g_string_new_len(json, at - json);
    g_string_append(s, cases[i].to);
    g_string_append(s, at + strlen(cases[i].from));
    const char *const p[] = {cases[i].phrase, NULL};
    load_fails(s->str, SC_BUNDLE_ERROR_INVALID, p);
    g_string_free(s, TRUE);
  }
}

/* Paths of fields deep in a long graph (indices of two digits), made by
 * the loader only when a field is missing or of the wrong type. */
static void test_error_paths_long(void) {
  struct {
    guint node;
    const char *field, *phrase;
  } cases[] = {
      {11, "\"name\": \"n11\", ", "t.json: spec.nodes[11].name: required field is missing"},
      {10, "\"op\": 3, ", "t.json: spec.nodes[10].op: expected an operator name string, found number 3"},
      {12, "\"args\": {}, ", "t.json: spec.nodes[12].args: expected an array"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GString *s = g_string_new("{\"format\": \"shardcheck-bundle/1\", \"spec\": {\"inputs\": "
                              "[{\"name\": \"t0\", \"shape\": [4]}], \"nodes\": [");
    for (guint k = 0; k < 13; k++) {
      g_string_append(s, k ? ", {" : "{");
      if (k == cases[i].node) {
        if (!g_str_has_prefix(cases[i].field, "\"name\""))
          g_string_append_printf(s, "\"name\": \"n%u\", ", k);
        if (g_str_has_prefix(cases[i].field, "\"op\""))
          g_string_append(s, cases[i].field);
        else
          g_string_append(s, "\"op\": \"aten.gelu.default\", ");
        if (g_str_has_prefix(cases[i].field, "\"args\""))
          g_string_append(s, cases[i].field);
        else
          g_string_append_printf(s, "\"args\": [\"t%u\"], ", k);
      } else {
        g_string_append_printf(s, "\"name\": \"n%u\", \"op\": \"aten.gelu.default\", "
                               "\"args\": [\"t%u\"], ", k, k);
      }
      g_string_append_printf(s, "\"outputs\": [{\"name\": \"t%u\"}]}", k + 1);
    }
    g_string_append(s, "], \"outputs\": [\"t13\"]}, \"impl\": {\"inputs\": [], \"nodes\": [], "
                       "\"outputs\": []}}");
    const char *const p[] = {cases[i].phrase, NULL};
    load_fails(s->str, SC_BUNDLE_ERROR_INVALID, p);
    g_string_free(s, TRUE);
  }
}

static void test_error_diag(void) {
  g_autofree char *json = make_json(" \"assume\": [\"4 % 3 == 0\"],", NULL);
  GError *err = NULL;
  sc_bundle_diag diag = {0};
  g_assert_null(sc_bundle_load_string_diag(json, strlen(json), "d.json", &diag, &err));
  g_assert_cmpstr(diag.file, ==, "d.json");
  g_assert_cmpstr(diag.path, ==, "assume[0]");
  g_assert_cmpint(diag.line, ==, 0);
  g_autofree char *want = g_strdup_printf("d.json: assume[0]: %s", diag.what);
  g_assert_cmpstr(err->message, ==, want);
  sc_bundle_diag_clear(&diag);
  g_assert_null(diag.file);
  g_error_free(err);
}

static void test_error_expectations(void) {
  const char *const p1[] = {"expect_output_relation.h[0]: 'p_0' is not an output of impl", NULL};
  g_autofree char *j1 = make_json(NULL, ", \"expect_output_relation\": {\"h\": [\"p_0\"]}");
  load_fails(j1, SC_BUNDLE_ERROR_INVALID, p1);
  const char *const p2[] = {"expect_output_relation.g: 'g' is not an output of spec", NULL};
  g_autofree char *j2 = make_json(NULL, ", \"expect_output_relation\": {\"g\": [\"g_0\"]}");
  load_fails(j2, SC_BUNDLE_ERROR_INVALID, p2);
  const char *const p3[] = {"check_outputs[1]: 'y' is listed twice", NULL};
  g_autofree char *j3 = make_json(NULL, ", \"check_outputs\": [\"y\", \"y\"]");
  load_fails(j3, SC_BUNDLE_ERROR_INVALID, p3);
  const char *const p4[] = {"assume_relation.x: 'x' is an input of spec", NULL};
  g_autofree char *j4 = make_json(NULL, ", \"assume_relation\": {\"x\": [\"x_0\"]}");
  load_fails(j4, SC_BUNDLE_ERROR_INVALID, p4);
  const char *const p5[] = {"impl.ranks: expected at least one rank graph",
                            NULL};
  load_fails("{\"format\": \"shardcheck-bundle/1\", \"spec\": {\"inputs\": [], \"nodes\": [],"
             " \"outputs\": []}, \"impl\": {\"ranks\": []}, \"input_relation\": {}}",
             SC_BUNDLE_ERROR_INVALID, (const char *const[]){"spec.outputs: a graph needs", NULL});
  load_fails("{\"format\": \"shardcheck-bundle/1\", \"spec\": {\"inputs\": [], \"nodes\": [],"
             " \"outputs\": [\"x\"]}, \"impl\": {\"ranks\": []}, \"input_relation\": {}}",
             SC_BUNDLE_ERROR_INVALID, (const char *const[]){"spec.outputs[0]: unknown tensor 'x'", NULL});
  load_fails("{\"format\": \"shardcheck-bundle/1\", \"spec\": {\"inputs\": [{\"name\": \"x\", "
             "\"shape\": []}], \"nodes\": [], \"outputs\": [\"x\"]}, \"impl\": {\"ranks\": []},"
             " \"input_relation\": {}}",
             SC_BUNDLE_ERROR_INVALID, p5);
}

/* ---- texpr ---- */

static void test_texpr_roundtrip(void) {
  g_autoptr(sc_bundle) b = load_ok(NULL, NULL);
  sc_graph *impl = sc_bundle_impl(b);
  static const struct {
    const char *in, *canon, *shape;
  } cases[] = {
      {"x_0", "x_0", "[4, 8]"},
      {"cat(w1_0, w1_1, dim=1)", "cat(w1_0, w1_1, dim=1)", "[8, 16]"},
      {"cat(w1_0,w1_1)", "cat(w1_0, w1_1, dim=0)", "[16, 8]"},
      {"cat(w1_0, w1_1, dim=-1)", "cat(w1_0, w1_1, dim=-1)", "[8, 16]"},
      {"slice(x_0, 0, 0, 2)", "slice(x_0, dim=0, start=0, end=2)", "[2, 8]"},
      {"slice(x_0, dim=1, start=0, end=8, step=2)", "slice(x_0, dim=1, start=0, end=8, step=2)",
       "[4, 4]"},
      {"transpose(x_0, 0, 1)", "transpose(x_0, dim0=0, dim1=1)", "[8, 4]"},
      {"permute(x_0, dims=[1, 0])", "permute(x_0, dims=[1, 0])", "[8, 4]"},
      {"view(x_0, shape=[32])", "view(x_0, shape=[32])", "[32]"},
      {"view(x_0, [2, 16])", "view(x_0, shape=[2, 16])", "[2, 16]"},
      {"sum(y_0, y_1)", "sum(y_0, y_1)", "[4, 8]"},
      {"sum(p_0, slice(cat(p_0, p_1), dim=0, start=4, end=8))",
       "sum(p_0, slice(cat(p_0, p_1, dim=0), dim=0, start=4, end=8))", "[4, 8]"},
      {"full(shape=[4, 8], value=0.0)", "full(shape=[4, 8], value=0.0)", "[4, 8]"},
      {"full(shape=[2], value=-inf)", "full(shape=[2], value=-inf)", "[2]"},
      {"arange(start=0, end=4)", "arange(start=0, end=4)", "[4]"},
      {"empty(shape=[3, 3])", "empty(shape=[3, 3])", "[3, 3]"},
      {"transpose(cat(x_0, x_1, dim=1), dim0=-1, dim1=-2)",
       "transpose(cat(x_0, x_1, dim=1), dim0=-1, dim1=-2)", "[16, 4]"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *err = NULL;
    g_autoptr(sc_texpr) t = sc_texpr_parse(cases[i].in, impl, TRUE, &err);
    if (err != NULL)
      g_error("%s: %s", cases[i].in, err->message);
    g_autofree char *s = sc_texpr_to_string(t);
    g_assert_cmpstr(s, ==, cases[i].canon);
    g_autofree char *shape = sc_shape_to_string(&sc_texpr_type(t)->shape);
    g_assert_cmpstr(shape, ==, cases[i].shape);
    /* Round trip: the canonical text binds to an equal tree. */
    g_autoptr(sc_texpr) t2 = sc_texpr_parse(s, impl, TRUE, &err);
    g_assert_no_error(err);
    g_assert_true(sc_texpr_equal(t, t2));
    g_autofree char *s2 = sc_texpr_to_string(t2);
    g_assert_cmpstr(s2, ==, s);
  }
}

static void test_texpr_structure(void) {
  g_autoptr(sc_bundle) b = load_ok(NULL, NULL);
  sc_graph *impl = sc_bundle_impl(b);
  GError *err = NULL;
  g_autoptr(sc_texpr) t = sc_texpr_parse("cat(w1_0, slice(w1_1, dim=0, start=0, end=8), dim=1)",
                                         impl, TRUE, &err);
  g_assert_no_error(err);
  g_assert_true(sc_texpr_graph(t) == impl);
  g_assert_cmpint(sc_texpr_get_kind(t), ==, SC_TEXPR_CALL);
  g_assert_cmpuint(sc_texpr_tensor(t), ==, SC_ID_NONE);
  g_assert_cmpuint(sc_texpr_n_children(t), ==, 2);
  const sc_texpr *c0 = sc_texpr_child(t, 0), *c1 = sc_texpr_child(t, 1);
  g_assert_cmpint(sc_texpr_get_kind(c0), ==, SC_TEXPR_TENSOR);
  g_assert_cmpuint(sc_texpr_tensor(c0), ==, sc_graph_find_tensor(impl, "w1_0"));
  g_assert_cmpstr(sc_texpr_op(c1)->name, ==, "slice");
  uint32_t start, end;
  sc_texpr_span(c1, &start, &end);
  g_assert_cmpuint(start, ==, 10);
  g_assert_cmpuint(end, ==, 44);
  sc_texpr_span(c0, &start, &end);
  g_assert_cmpuint(start, ==, 4);
  g_assert_cmpuint(end, ==, 8);
  /* The Tensor[] argument holds child indices. */
  const sc_value *args = sc_texpr_args(t);
  g_assert_cmpint(args[0].kind, ==, SC_VAL_TENSOR_LIST);
  g_assert_cmpuint(args[0].u.list.n, ==, 2);
  g_assert_cmpuint(args[0].u.list.ids[0], ==, 0);
  g_assert_cmpuint(args[0].u.list.ids[1], ==, 1);
  g_autoptr(GArray) leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_texpr_collect_leaves(t, leaves);
  g_assert_cmpuint(leaves->len, ==, 2);
  g_assert_cmpuint(g_array_index(leaves, sc_id, 1), ==, sc_graph_find_tensor(impl, "w1_1"));
}

static void test_texpr_errors(void) {
  g_autoptr(sc_bundle) b = load_ok(NULL, NULL);
  sc_graph *impl = sc_bundle_impl(b);
  static const struct {
    const char *in;
    GQuark domain;
    int code;
    const char *phrase;
  } cases[] = {
      {"cat(w1_0, nope, dim=1)", 0, SC_TEXPR_ERROR_UNKNOWN_TENSOR, "col 11: unknown tensor 'nope'"},
      {"nope", 0, SC_TEXPR_ERROR_UNKNOWN_TENSOR, "col 1: unknown tensor 'nope'"},
      {"cat(w1_0, slice(zz, dim=0, start=0, end=1), dim=1)", 0, SC_TEXPR_ERROR_UNKNOWN_TENSOR,
       "col 17: unknown tensor 'zz'"},
      {"mm(x_0, w1_0)", 0, SC_TEXPR_ERROR_NOT_CLEAN,
       "col 1: mm is not a clean operator; relations may use cat, slice, transpose, permute, "
       "view, sum, full, arange, empty"},
      {"sum(x_0, x_0)", 0, SC_TEXPR_ERROR_NOT_CLEAN, "col 10: sum repeats the argument x_0"},
      {"cat(x_0, w1_0, dim=1)", 0, SC_TEXPR_ERROR_INVALID,
       "col 1: sc.cat: tensor 1 has shape [8, 8] but tensor 0 has [4, 8]"},
      {"?v", 0, SC_TEXPR_ERROR_INVALID, "col 1: pattern variable '?v'"},
      {"3", 0, SC_TEXPR_ERROR_INVALID, "col 1: expected a tensor name or an operator call"},
      {"slice(x_0, dim=\"Q\")", 0, SC_TEXPR_ERROR_INVALID, "col 16:"},
      {"transpose(x_0, dim0=cat(x_0, x_1), dim1=0)", 0, SC_TEXPR_ERROR_INVALID,
       "col 21: argument 'dim0' of sc.transpose.default expects int, found a tensor expression"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *err = NULL;
    sc_texpr *t = sc_texpr_parse(cases[i].in, impl, TRUE, &err);
    g_assert_null(t);
    g_assert_nonnull(err);
    g_assert_true(err->domain == SC_TEXPR_ERROR);
    if (err->code != cases[i].code || strstr(err->message, cases[i].phrase) == NULL)
      g_error("%s: got '%s' (code %d)", cases[i].in, err->message, err->code);
    g_error_free(err);
  }
  /* Syntax errors keep the expression module's domain and column. */
  GError *err = NULL;
  g_assert_null(sc_texpr_parse("cat(x_0,, x_1)", impl, TRUE, &err));
  g_assert_error(err, SC_EXPR_ERROR, SC_EXPR_ERROR_SYNTAX);
  g_assert_true(g_str_has_prefix(err->message, "col 9:"));
  g_error_free(err);
}

/* sc_texpr_rename: leaves renamed, arguments (shared with the source, a
 * reference-counted block) and types kept; a copy outlives its source,
 * and a copy of a copy is one too.  Under ASan a wrong count is a
 * use-after-free or a leak here. */
static sc_id swap_ranks(sc_id t, void *user) {
  sc_graph *g = user;
  const char *name = sc_graph_tensor(g, t)->name;
  if (strcmp(name, "w1_0") == 0)
    return sc_graph_find_tensor(g, "w1_1");
  if (strcmp(name, "w1_1") == 0)
    return sc_graph_find_tensor(g, "w1_0");
  return t;
}

static void test_texpr_rename(void) {
  g_autoptr(sc_bundle) b = load_ok(NULL, NULL);
  sc_graph *impl = sc_bundle_impl(b);
  GError *err = NULL;
  sc_texpr *t = sc_texpr_parse("cat(w1_0, slice(w1_1, dim=0, start=0, end=8), dim=1)", impl,
                               TRUE, &err);
  g_assert_no_error(err);
  sc_texpr *c1 = sc_texpr_rename(t, swap_ranks, impl);
  g_assert_true(sc_texpr_args(c1) == sc_texpr_args(t)); /* shared, not copied */
  g_autofree char *s1 = sc_texpr_to_string(c1);
  g_assert_cmpstr(s1, ==, "cat(w1_1, slice(w1_0, dim=0, start=0, end=8), dim=1)");
  sc_texpr_free(t); /* the copy outlives its source */
  sc_texpr *c2 = sc_texpr_rename(c1, swap_ranks, impl);
  g_autofree char *s2 = sc_texpr_to_string(c2);
  g_assert_cmpstr(s2, ==, "cat(w1_0, slice(w1_1, dim=0, start=0, end=8), dim=1)");
  g_autofree char *shape1 = sc_shape_to_string(&sc_texpr_type(c1)->shape);
  g_autofree char *shape2 = sc_shape_to_string(&sc_texpr_type(c2)->shape);
  g_assert_cmpstr(shape1, ==, shape2);
  sc_texpr_free(c1);
  g_autofree char *s3 = sc_texpr_to_string(c2);
  g_assert_cmpstr(s3, ==, s2);
  sc_texpr_free(c2);
}

static void test_texpr_unclean(void) {
  /* Without clean_only any operator binds, printed by qualified name. */
  g_autoptr(sc_bundle) b = load_ok(NULL, NULL);
  sc_graph *impl = sc_bundle_impl(b);
  GError *err = NULL;
  g_autoptr(sc_texpr) t = sc_texpr_parse("mm(x_0, cat(w1_0, w1_1, dim=1))", impl, FALSE, &err);
  g_assert_no_error(err);
  g_autofree char *s = sc_texpr_to_string(t);
  g_assert_cmpstr(s, ==, "aten.mm.default(x_0, cat(w1_0, w1_1, dim=1))");
  g_autofree char *shape = sc_shape_to_string(&sc_texpr_type(t)->shape);
  g_assert_cmpstr(shape, ==, "[4, 16]");
  g_autoptr(sc_texpr) t2 = sc_texpr_parse(s, impl, FALSE, &err);
  g_assert_no_error(err);
  g_assert_true(sc_texpr_equal(t, t2));
  g_autoptr(sc_texpr) t3 = sc_texpr_parse("gelu(x_0, approximate=\"tanh\")", impl, FALSE, &err);
  g_assert_no_error(err);
  g_autofree char *s3 = sc_texpr_to_string(t3);
  g_assert_cmpstr(s3, ==, "aten.gelu.default(x_0, approximate=\"tanh\")");
  g_autoptr(sc_texpr) t4 = sc_texpr_parse("gelu(x_0)", impl, FALSE, &err);
  g_autofree char *s4 = sc_texpr_to_string(t4);
  g_assert_cmpstr(s4, ==, "aten.gelu.default(x_0)");
  g_assert_false(sc_texpr_equal(t3, t4));
  /* None, True/False and lists of tensors with holes print back. */
  g_autoptr(sc_texpr) t5 = sc_texpr_parse("index.Tensor(x_0, [None, arange(start=0, end=2)])",
                                          impl, FALSE, &err);
  g_assert_no_error(err);
  g_autofree char *s5 = sc_texpr_to_string(t5);
  g_assert_cmpstr(s5, ==, "aten.index.Tensor(x_0, indices=[None, arange(start=0, end=2)])");
  g_autofree char *sh5 = sc_shape_to_string(&sc_texpr_type(t5)->shape);
  g_assert_cmpstr(sh5, ==, "[4, 2]");
  g_autoptr(sc_texpr) t6 = sc_texpr_parse(s5, impl, FALSE, &err);
  g_assert_no_error(err);
  g_assert_true(sc_texpr_equal(t5, t6));
  g_autoptr(sc_texpr) t7 = sc_texpr_parse("aten.cat.default([x_0, x_1], 1)", impl, FALSE, &err);
  g_assert_no_error(err);
  g_autofree char *s7 = sc_texpr_to_string(t7);
  g_assert_cmpstr(s7, ==, "aten.cat.default(tensors=[x_0, x_1], dim=1)");
  g_assert_null(sc_texpr_parse("comm.all_reduce([x_0, x_1])", impl, FALSE, &err));
  g_assert_nonnull(strstr(err->message, "gives 2 results; an expression must give one tensor"));
  g_clear_error(&err);
}

static void test_texpr_odd_names(void) {
  /* Tensor names that are not NAME tokens are written and printed quoted. */
  const char *json =
      "{\"format\": \"shardcheck-bundle/1\",\n"
      " \"spec\": {\"inputs\": [{\"name\": \"x\", \"shape\": [4]}], \"nodes\": [], \"outputs\": [\"x\"]},\n"
      " \"impl\": {\"inputs\": [{\"name\": \"a-b\", \"shape\": [2]}, {\"name\": \"inf\", \"shape\": [2]},\n"
      "   {\"name\": \"0x\", \"shape\": [4]}, {\"name\": \"layers.0.w\", \"shape\": [4]}],\n"
      "  \"nodes\": [], \"outputs\": [\"0x\"]},\n"
      " \"input_relation\": {\"x\": [\"cat(\\\"a-b\\\", \\\"inf\\\", dim=0)\", \"\\\"0x\\\"\", \"layers.0.w\"]}}";
  GError *err = NULL;
  g_autoptr(sc_bundle) b = sc_bundle_load_string(json, "odd.json", &err);
  g_assert_no_error(err);
  const sc_relation_entry *x = entry(b, sc_bundle_input_relation(b), "x");
  g_assert_cmpuint(x->n_exprs, ==, 3);
  static const char *const want[] = {"cat(\"a-b\", \"inf\", dim=0)", "\"0x\"", "layers.0.w"};
  for (uint32_t i = 0; i < 3; i++) {
    g_autofree char *s = sc_texpr_to_string(x->exprs[i]);
    g_assert_cmpstr(s, ==, want[i]);
    g_autoptr(sc_texpr) t = sc_texpr_parse(s, sc_bundle_impl(b), TRUE, &err);
    g_assert_no_error(err);
    g_assert_true(sc_texpr_equal(t, x->exprs[i]));
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  sc_ops_init();
  g_test_add_func("/bundle/load/basic", test_load_basic);
  g_test_add_func("/bundle/load/input-relation", test_input_relation);
  g_test_add_func("/bundle/load/all-relation-fields", test_all_relation_fields);
  g_test_add_func("/bundle/load/symbols", test_symbols);
  g_test_add_func("/bundle/load/models", test_models);
  g_test_add_func("/bundle/error/syntax", test_error_syntax);
  g_test_add_func("/bundle/error/io", test_error_io);
  g_test_add_func("/bundle/error/paths", test_error_paths);
  g_test_add_func("/bundle/error/paths-long", test_error_paths_long);
  g_test_add_func("/bundle/error/diag", test_error_diag);
  g_test_add_func("/bundle/error/expectations", test_error_expectations);
  g_test_add_func("/texpr/bind/roundtrip", test_texpr_roundtrip);
  g_test_add_func("/texpr/bind/structure", test_texpr_structure);
  g_test_add_func("/texpr/bind/errors", test_texpr_errors);
  g_test_add_func("/texpr/rename/shared-args", test_texpr_rename);
  g_test_add_func("/texpr/bind/unclean", test_texpr_unclean);
  g_test_add_func("/texpr/bind/odd-names", test_texpr_odd_names);
  return g_test_run();
}
