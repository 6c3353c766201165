/* test-expr.c — GTest suite of the expression language (src/expr/).
 *
 * Pins the canonical printer on a table of relations, lemma patterns and
 * spec examples (each parsed, printed, re-parsed and compared), the exact
 * column and key words of every syntax error in a must-reject table, the
 * int64 limits, float round-trips (fixed cases and random bit patterns),
 * spans of sub-expressions, the nesting limit, equality, copy, constructors
 * and keyword lookup. */
#include "shardcheck/expr.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */

/* TEXT escaped and shortened for a one-line test message (TAP). */
static char *show(const char *text) {
  g_autofree char *head = g_strndup(text, 60);
  g_autofree char *esc = g_strescape(head, NULL);
  return g_strconcat(esc, strlen(text) > 60 ? "..." : "", NULL);
}

static sc_expr *parse_ok(const char *text) {
  g_autoptr(GError) error = NULL;
  sc_expr *e = sc_expr_parse(text, &error);
  if (e == NULL) {
    g_autofree char *t = show(text);
    g_test_message("parsing <%s>: %s", t, error->message);
  }
  g_assert_no_error(error);
  g_assert_nonnull(e);
  return e;
}

/* Parse TEXT, expect the canonical form CANON, and check that CANON parses
 * to an equal tree that prints identically. */
static void check_roundtrip(const char *text, const char *canon) {
  g_autoptr(sc_expr) e = parse_ok(text);
  g_autofree char *printed = sc_expr_to_string(e);
  g_assert_cmpstr(printed, ==, canon);
  g_autoptr(sc_expr) again = parse_ok(printed);
  g_assert_true(sc_expr_equal(e, again));
  g_autofree char *printed2 = sc_expr_to_string(again);
  g_assert_cmpstr(printed2, ==, printed);
  g_autoptr(sc_expr) copy = sc_expr_copy(e);
  g_assert_true(sc_expr_equal(copy, again));
}

/* The source text of E's span. */
static char *span_text(const char *src, const sc_expr *e) {
  g_assert_cmpuint(e->start, <=, e->end);
  g_assert_cmpuint(e->end, <=, strlen(src));
  return g_strndup(src + e->start, e->end - e->start);
}

/* ---------------------------------------------------------------------------
 * Round trips
 * ------------------------------------------------------------------------- */

typedef struct {
  const char *text;
  const char *canon; /* NULL: same as text */
} roundtrip_case;

static const roundtrip_case roundtrip_cases[] = {
  /* relations from the bundle spec */
  {"cat(r0.x, r1.x, dim=0)", NULL},
  {"cat(w1_0, w1_1, dim=1)", NULL},
  {"cat(w2_0, w2_1, dim=0)", NULL},
  {"y_0", NULL},
  {"r0.y", NULL},
  {"sum(y_0, y_1)", NULL},
  {"cat(r0.layers.0.weight, r1.layers.0.weight, dim=0)", NULL},
  {"slice(x_1, dim=0, start=\"S/2\", end=\"S\")", NULL},
  {"slice(t, dim=-1, start=0, end=128, step=2)", NULL},
  {"transpose(t, dim0=0, dim1=1)", NULL},
  {"permute(t, dims=[0, 2, 1])", NULL},
  {"view(t, shape=[2, -1])", NULL},
  {"full(shape=[2, 3], value=-inf)", NULL},
  {"full(shape=[\"S\", \"S\"], value=0.0)", NULL},
  {"arange(start=0, end=\"V-1\")", NULL},
  {"empty(shape=[4, 1024])", NULL},
  {"empty(shape=[])", NULL},
  /* relations of the real-graph sheets */
  {"cat(r0.primals_10, r1.primals_10, dim=1)", NULL},
  {"cat(r0.getitem_29, r1.getitem_29, dim=0)", NULL},
  {"cat(cat(slice(r0.arg9_1, dim=0, start=0, end=4480), slice(r1.arg9_1, "
   "dim=0, start=0, end=4480), dim=0), cat(slice(r0.arg9_1, dim=0, "
   "start=4480, end=8960), slice(r1.arg9_1, dim=0, start=4480, end=8960), "
   "dim=0), dim=0)",
   NULL},
  {"sum(r0.mm_3, r1.mm_3)", NULL},
  /* operator names with namespaces and overloads */
  {"aten.add.Tensor(x, y)", NULL},
  {"add.Tensor(x, y, alpha=1)", NULL},
  {"comm.all_reduce([r0.x, r1.x], op=\"sum\")", NULL},
  {"comm.all_gather([r0.x, r1.x], dim=0, ranks=[0, 1])", NULL},
  {"_c10d_functional.wait_tensor.default(x)", NULL},
  /* lemma patterns */
  {"mm(cat(?a, ?b, dim=1), ?c)", NULL},
  {"slice(?x, dim=?d, start=?s, end=?e)", NULL},
  {"sum(mm(?a, ?c), mm(?b, ?d))", NULL},
  {"cat(slice(?x, dim=?d, start=0, end=?m), slice(?x, dim=?d, start=?m, "
   "end=?n), dim=?d)",
   NULL},
  {"?x", NULL},
  {"?_tmp9", NULL},
  /* atoms */
  {"0", NULL},
  {"-0", "0"},
  {"007", "7"},
  {"-42", NULL},
  {"9223372036854775807", NULL},
  {"-9223372036854775808", NULL},
  {"1.5", NULL},
  {"1e-5", "1e-05"},
  {"1E+20", "1e+20"},
  {"2.50", "2.5"},
  {"100000.0", NULL},
  {"1e5", "100000.0"},
  {"inf", NULL},
  {"-inf", NULL},
  {"nan", NULL},
  {"\"inf\"", NULL},
  {"\"\"", NULL},
  {"\"a\\\"b\\\\c\"", NULL},
  {"\"S*2 + 1\"", NULL},
  {"[]", NULL},
  {"[[1, 2], [], [?x]]", NULL},
  {"[inf, -inf, nan, 0.5]", NULL},
  {"f()", NULL},
  {"inf(x)", NULL},
  {"f(inf=1, nan=2)", NULL},
  {"inf.x", NULL},
  {"a.b.c", NULL},
  {"_", NULL},
  /* whitespace anywhere between tokens */
  {"  cat( r0.x ,r1.x,dim = 0 )  ", "cat(r0.x, r1.x, dim=0)"},
  {"\tsum(\n y_0,\r\n y_1\n)\n", "sum(y_0, y_1)"},
  {"view ( t , shape = [ 2 , -1 ] )", "view(t, shape=[2, -1])"},
  {"f(x, k=[ ])", "f(x, k=[])"},
};

static void test_roundtrip_table(void) {
  g_assert_cmpuint(G_N_ELEMENTS(roundtrip_cases), >=, 40);
  for (size_t i = 0; i < G_N_ELEMENTS(roundtrip_cases); i++) {
    const roundtrip_case *c = &roundtrip_cases[i];
    check_roundtrip(c->text, c->canon != NULL ? c->canon : c->text);
  }
}

static void test_roundtrip_kinds(void) {
  g_autoptr(sc_expr) e =
      parse_ok("f(a.b, ?v, 3, 2.5, \"s\", [1], g(), k=inf)");
  g_assert_cmpint(e->kind, ==, SC_EXPR_CALL);
  g_assert_cmpstr(e->text, ==, "f");
  g_assert_cmpuint(e->n_args, ==, 8);
  static const sc_expr_kind kinds[] = {
    SC_EXPR_NAME, SC_EXPR_VAR, SC_EXPR_INT, SC_EXPR_FLOAT,
    SC_EXPR_STRING, SC_EXPR_LIST, SC_EXPR_CALL, SC_EXPR_FLOAT,
  };
  for (uint32_t i = 0; i < e->n_args; i++)
    g_assert_cmpint(e->args[i]->kind, ==, kinds[i]);
  g_assert_cmpstr(e->args[0]->text, ==, "a.b");
  g_assert_cmpstr(e->args[1]->text, ==, "v");
  g_assert_cmpint(e->args[2]->ival, ==, 3);
  g_assert_cmpfloat(e->args[3]->fval, ==, 2.5);
  g_assert_cmpstr(e->args[4]->text, ==, "s");
  g_assert_cmpuint(e->args[6]->n_args, ==, 0);
  g_assert_true(isinf(e->args[7]->fval) && e->args[7]->fval > 0);
  for (uint32_t i = 0; i < 7; i++)
    g_assert_null(e->keys[i]);
  g_assert_cmpstr(e->keys[7], ==, "k");
  /* a quoted "inf" stays a string; a bare one is a float */
  g_autoptr(sc_expr) s = parse_ok("\"inf\"");
  g_assert_cmpint(s->kind, ==, SC_EXPR_STRING);
  g_assert_cmpstr(s->text, ==, "inf");
  g_autoptr(sc_expr) n = parse_ok("nan");
  g_assert_cmpint(n->kind, ==, SC_EXPR_FLOAT);
  g_assert_true(isnan(n->fval));
  /* a name followed by '(' is a call, even inf */
  g_autoptr(sc_expr) c = parse_ok("inf (x)");
  g_assert_cmpint(c->kind, ==, SC_EXPR_CALL);
  g_assert_cmpstr(c->text, ==, "inf");
  /* escapes are decoded */
  g_autoptr(sc_expr) esc = parse_ok("\"a\\\"b\\\\c\"");
  g_assert_cmpstr(esc->text, ==, "a\"b\\c");
}

/* ---------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------- */

typedef struct {
  const char *text;
  unsigned col;
  const char *expected; /* the "expected ..." part, exactly */
  const char *found;    /* a key word of the "found ..." part */
} error_case;

static const error_case error_cases[] = {
  {"", 1, "expression", "end of input"},
  {"   ", 4, "expression", "end of input"},
  {"cat(r0.x, r1.w", 15, "')' or ','", "end of input"},
  {"mm(r0.x, r1.w", 14, "')' or ','", "end of input"},
  {"cat(a, b,)", 10, "expression", "')'"},
  {"cat(a b)", 7, "')' or ','", "name 'b'"},
  {"[1, 2", 6, "']' or ','", "end of input"},
  {"[1 2]", 4, "']' or ','", "integer 2"},
  {"[1,,2]", 4, "expression", "','"},
  {"[a=1]", 3, "']' or ','", "'='"},
  {"f(dim=0, x)", 10, "keyword item after a keyword item", "positional name 'x'"},
  {"f(dim=0, 5)", 10, "keyword item after a keyword item", "positional integer 5"},
  {"f(x, dim=0, dim=1)", 13, "a keyword not given before in this call",
   "duplicate keyword 'dim'"},
  {"f(a.b=1)", 3, "plain identifier as keyword", "name 'a.b'"},
  {"f(=1)", 3, "expression", "'='"},
  {"f(x=)", 5, "expression", "')'"},
  {"f(,)", 3, "expression", "','"},
  {"9223372036854775808", 1, "integer in int64 range", "9223372036854775808"},
  {"-9223372036854775809", 1, "integer in int64 range", "-9223372036854775809"},
  {"f(x, n=99999999999999999999)", 8, "integer in int64 range", "99999999999999999999"},
  {"1e999", 1, "float in double range", "1e999"},
  {"-1e400", 1, "float in double range", "-1e400"},
  {"1.", 3, "digit after '.'", "end of input"},
  {"1.e5", 3, "digit after '.'", "character 'e'"},
  {"1e", 3, "digit in exponent", "end of input"},
  {"1e+", 4, "digit in exponent", "end of input"},
  {"-", 2, "digit or 'inf' after '-'", "end of input"},
  {"-x", 2, "digit or 'inf' after '-'", "name 'x'"},
  {"-nan", 2, "digit or 'inf' after '-'", "name 'nan'"},
  {"-inf.x", 2, "digit or 'inf' after '-'", "name 'inf.x'"},
  {"- 1", 2, "digit or 'inf' after '-'", "character ' '"},
  {"\"abc", 5, "closing '\"'", "end of input"},
  {"\"a\\nb\"", 4, "'\"' or '\\' after '\\'", "character 'n'"},
  {"\"a\\", 4, "'\"' or '\\' after '\\'", "end of input"},
  {"a..b", 3, "identifier after '.'", "character '.'"},
  {"a.", 3, "identifier after '.'", "end of input"},
  {"r1.-x", 4, "identifier after '.'", "character '-'"},
  {"?", 2, "variable name after '?'", "end of input"},
  {"? x", 2, "variable name after '?'", "character ' '"},
  {"?1x", 2, "variable name after '?'", "character '1'"},
  {"f(x, ?=1)", 7, "variable name after '?'", "character '='"},
  {"cat(a)b", 7, "end of input", "name 'b'"},
  {"x y", 3, "end of input", "name 'y'"},
  {"x = 1", 3, "end of input", "'='"},
  {"f(x)(y)", 5, "end of input", "'('"},
  {"?x(1)", 3, "end of input", "'('"},
  {"-inf(x)", 5, "end of input", "'('"},
  {"1.5.2", 4, "end of input", "character '.'"},
  {"12abc", 3, "end of input", "name 'abc'"},
  {"#", 1, "expression", "character '#'"},
  {"f(x) # c", 6, "end of input", "character '#'"},
  {"\x01", 1, "expression", "byte 0x01"},
  {"f(\"a\" \"b\")", 7, "')' or ','", "string \"b\""},
  {"((x))", 1, "expression", "'('"},
  {")", 1, "expression", "')'"},
};

static void check_error(const char *text, unsigned col, const char *expected,
                        const char *found) {
  g_autoptr(GError) error = NULL;
  g_autoptr(sc_expr) e = sc_expr_parse(text, &error);
  if (e != NULL) {
    g_autofree char *s = sc_expr_to_string(e);
    g_autofree char *t = show(text), *ts = show(s);
    g_test_message("<%s> parsed as %s", t, ts);
  }
  g_assert_null(e);
  g_assert_error(error, SC_EXPR_ERROR, SC_EXPR_ERROR_SYNTAX);
  g_autofree char *prefix =
      g_strdup_printf("col %u: expected %s, found ", col, expected);
  if (!g_str_has_prefix(error->message, prefix) ||
      strstr(error->message + strlen(prefix), found) == NULL) {
    g_autofree char *t = show(text);
    g_test_message("<%s>: got \"%s\", wanted \"%s...%s...\"", t,
                   error->message, prefix, found);
  }
  g_assert_true(g_str_has_prefix(error->message, prefix));
  g_assert_nonnull(strstr(error->message + strlen(prefix), found));
}

static void test_errors_table(void) {
  g_assert_cmpuint(G_N_ELEMENTS(error_cases), >=, 25);
  for (size_t i = 0; i < G_N_ELEMENTS(error_cases); i++) {
    const error_case *c = &error_cases[i];
    check_error(c->text, c->col, c->expected, c->found);
  }
}

static void test_errors_exact_text(void) {
  /* the whole message, pinned for a few representative cases */
  static const struct {
    const char *text, *message;
  } cases[] = {
    {"cat(a, b, d=0", "col 14: expected ')' or ',', found end of input"},
    {"", "col 1: expected expression, found end of input"},
    {"f(x, dim=0, dim=1)", "col 13: expected a keyword not given before in "
                           "this call, found duplicate keyword 'dim'"},
    {"9223372036854775808",
     "col 1: expected integer in int64 range, found 9223372036854775808"},
    {"sum(y_0 y_1)", "col 9: expected ')' or ',', found name 'y_1'"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(sc_expr) e = sc_expr_parse(cases[i].text, &error);
    g_assert_null(e);
    g_assert_error(error, SC_EXPR_ERROR, SC_EXPR_ERROR_SYNTAX);
    g_assert_cmpstr(error->message, ==, cases[i].message);
  }
  /* long offending text is truncated in the message */
  g_autofree char *longname = g_strnfill(200, 'z');
  g_autofree char *text = g_strconcat("x ", longname, NULL);
  g_autoptr(GError) error = NULL;
  g_assert_null(sc_expr_parse(text, &error));
  g_assert_error(error, SC_EXPR_ERROR, SC_EXPR_ERROR_SYNTAX);
  g_assert_true(g_str_has_prefix(error->message, "col 3: expected end of input"));
  g_assert_cmpuint(strlen(error->message), <, 120);
  g_assert_nonnull(strstr(error->message, "..."));
  /* non-UTF-8 input yields a UTF-8 message */
  g_clear_error(&error);
  g_assert_null(sc_expr_parse("f(\"\xff\xfe\" \"x\")", &error));
  g_assert_true(g_utf8_validate(error->message, -1, NULL));
}

/* ---------------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------------- */

static void test_int64_limits(void) {
  g_autoptr(sc_expr) max = parse_ok("9223372036854775807");
  g_assert_cmpint(max->kind, ==, SC_EXPR_INT);
  g_assert_cmpint(max->ival, ==, INT64_MAX);
  g_autoptr(sc_expr) min = parse_ok("-9223372036854775808");
  g_assert_cmpint(min->kind, ==, SC_EXPR_INT);
  g_assert_cmpint(min->ival, ==, INT64_MIN);
  g_autoptr(sc_expr) l = parse_ok("[9223372036854775807, -9223372036854775808, "
                                  "-9223372036854775807, 922337203685477580]");
  g_assert_cmpint(l->args[2]->ival, ==, -INT64_MAX);
  g_assert_cmpint(l->args[3]->ival, ==, INT64_MAX / 10);
  g_autofree char *s = sc_expr_to_string(l);
  g_assert_cmpstr(s, ==, "[9223372036854775807, -9223372036854775808, "
                         "-9223372036854775807, 922337203685477580]");
  g_autoptr(sc_expr) c = sc_expr_new_int(INT64_MIN);
  g_autofree char *cs = sc_expr_to_string(c);
  g_assert_cmpstr(cs, ==, "-9223372036854775808");
  check_error("9223372036854775808", 1, "integer in int64 range", "9223372036854775808");
  check_error("-9223372036854775809", 1, "integer in int64 range", "-9223372036854775809");
  check_error("f(18446744073709551616)", 3, "integer in int64 range", "18446744073709551616");
  check_error("[0, 1, 92233720368547758070]", 8, "integer in int64 range", "9223372036");
}

static gboolean same_double(double a, double b) {
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b);
  return memcmp(&a, &b, sizeof a) == 0;
}

static void test_float_roundtrip(void) {
  static const struct {
    const char *text;
    double value;
    const char *canon;
  } cases[] = {
    {"0.1", 0.1, "0.1"},
    {"1e-5", 1e-5, "1e-05"},
    {"1e-05", 1e-5, "1e-05"},
    {"0.0001", 1e-4, "0.0001"},
    {"1.0", 1.0, "1.0"},
    {"-0.0", -0.0, "-0.0"},
    {"0.0", 0.0, "0.0"},
    {"-2.5", -2.5, "-2.5"},
    {"1e16", 1e16, "1e+16"},
    {"1e15", 1e15, "1000000000000000.0"},
    {"123456789012345678.0", 123456789012345678.0, "1.2345678901234568e+17"},
    {"3.141592653589793", 3.141592653589793, "3.141592653589793"},
    {"0.30000000000000004", 0.1 + 0.2, "0.30000000000000004"},
    {"5e-324", 5e-324, "5e-324"},
    {"2.2250738585072014e-308", 2.2250738585072014e-308, "2.2250738585072014e-308"},
    {"1.7976931348623157e308", 1.7976931348623157e308, "1.7976931348623157e+308"},
    {"1e-400", 0.0, "0.0"},
    {"inf", INFINITY, "inf"},
    {"-inf", -INFINITY, "-inf"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(sc_expr) e = parse_ok(cases[i].text);
    g_assert_cmpint(e->kind, ==, SC_EXPR_FLOAT);
    g_assert_true(same_double(e->fval, cases[i].value));
    g_autofree char *s = sc_expr_to_string(e);
    g_assert_cmpstr(s, ==, cases[i].canon);
    g_autoptr(sc_expr) again = parse_ok(s);
    g_assert_true(same_double(again->fval, cases[i].value));
  }
  /* -0.0 keeps its sign and differs from 0.0 */
  g_autoptr(sc_expr) nz = parse_ok("-0.0");
  g_assert_true(signbit(nz->fval));
  g_autoptr(sc_expr) pz = parse_ok("0.0");
  g_assert_false(sc_expr_equal(nz, pz));
  /* nan equals nan */
  g_autoptr(sc_expr) n1 = parse_ok("nan");
  g_autoptr(sc_expr) n2 = sc_expr_new_float(NAN);
  g_assert_true(sc_expr_equal(n1, n2));
  /* a float never prints as an int */
  g_autoptr(sc_expr) one = sc_expr_new_float(1.0);
  g_autoptr(sc_expr) ione = sc_expr_new_int(1);
  g_autofree char *s1 = sc_expr_to_string(one);
  g_assert_cmpstr(s1, ==, "1.0");
  g_assert_false(sc_expr_equal(one, ione));

  /* random bit patterns: every double prints and reads back exactly */
  GRand *rand = g_rand_new_with_seed(20240601);
  for (int i = 0; i < 20000; i++) {
    uint64_t bits = ((uint64_t)g_rand_int(rand) << 32) | g_rand_int(rand);
    double v;
    memcpy(&v, &bits, sizeof v);
    if (i % 4 == 0) /* also ordinary magnitudes */
      v = g_rand_double_range(rand, -1e6, 1e6);
    g_autoptr(sc_expr) e = sc_expr_new_float(v);
    g_autofree char *s = sc_expr_to_string(e);
    g_autoptr(GError) error = NULL;
    g_autoptr(sc_expr) back = sc_expr_parse(s, &error);
    g_assert_no_error(error);
    g_assert_cmpint(back->kind, ==, SC_EXPR_FLOAT);
    if (!same_double(back->fval, v))
      g_test_message("%.17g printed as %s", v, s);
    g_assert_true(same_double(back->fval, v));
    g_assert_true(sc_expr_equal(e, back));
    g_assert_cmpuint(strlen(s), <=, 24);
  }
  g_rand_free(rand);
}

/* ---------------------------------------------------------------------------
 * Spans, nesting
 * ------------------------------------------------------------------------- */

static void test_spans(void) {
  const char *src =
      "  cat(r0.x, slice(x_1, dim=0, start=\"S/2\", end = \"S\"),dim=-1, "
      "k=[ 1, ?v ], f=-inf) ";
  g_autoptr(sc_expr) e = parse_ok(src);
  g_autofree char *root = span_text(src, e);
  g_assert_cmpstr(root, ==,
                  "cat(r0.x, slice(x_1, dim=0, start=\"S/2\", end = \"S\"),dim=-1, "
                  "k=[ 1, ?v ], f=-inf)");
  g_assert_cmpuint(e->start, ==, 2);
  g_autofree char *a0 = span_text(src, e->args[0]);
  g_assert_cmpstr(a0, ==, "r0.x");
  g_assert_cmpuint(e->args[0]->start, ==, 6);
  g_assert_cmpuint(e->args[0]->end, ==, 10);
  const sc_expr *sl = e->args[1];
  g_autofree char *a1 = span_text(src, sl);
  g_assert_cmpstr(a1, ==, "slice(x_1, dim=0, start=\"S/2\", end = \"S\")");
  g_autofree char *sl0 = span_text(src, sl->args[0]);
  g_assert_cmpstr(sl0, ==, "x_1");
  g_autofree char *sl1 = span_text(src, sl->args[1]);
  g_assert_cmpstr(sl1, ==, "0");
  g_autofree char *sl2 = span_text(src, sc_expr_get_kwarg(sl, "start"));
  g_assert_cmpstr(sl2, ==, "\"S/2\"");
  g_autofree char *sl3 = span_text(src, sc_expr_get_kwarg(sl, "end"));
  g_assert_cmpstr(sl3, ==, "\"S\"");
  g_autofree char *a2 = span_text(src, e->args[2]);
  g_assert_cmpstr(a2, ==, "-1");
  const sc_expr *k = sc_expr_get_kwarg(e, "k");
  g_autofree char *ks = span_text(src, k);
  g_assert_cmpstr(ks, ==, "[ 1, ?v ]");
  g_autofree char *k1 = span_text(src, k->args[1]);
  g_assert_cmpstr(k1, ==, "?v");
  g_autofree char *fs = span_text(src, sc_expr_get_kwarg(e, "f"));
  g_assert_cmpstr(fs, ==, "-inf");
  /* bare inf / nan words and empty calls */
  const char *src2 = "g( inf ,nan, h( ) )";
  g_autoptr(sc_expr) g = parse_ok(src2);
  g_autofree char *g0 = span_text(src2, g->args[0]);
  g_autofree char *g1 = span_text(src2, g->args[1]);
  g_autofree char *g2 = span_text(src2, g->args[2]);
  g_assert_cmpstr(g0, ==, "inf");
  g_assert_cmpstr(g1, ==, "nan");
  g_assert_cmpstr(g2, ==, "h( )");
  g_assert_cmpuint(g->end, ==, strlen(src2));
}

static char *nested(unsigned depth, const char *open, const char *inner,
                    const char *close) {
  GString *s = g_string_new(NULL);
  for (unsigned i = 0; i < depth; i++)
    g_string_append(s, open);
  g_string_append(s, inner);
  for (unsigned i = 0; i < depth; i++)
    g_string_append(s, close);
  return g_string_free(s, FALSE);
}

static void test_depth(void) {
  /* 256 levels parse and round-trip */
  g_autofree char *lists = nested(SC_EXPR_MAX_DEPTH, "[", "1", "]");
  check_roundtrip(lists, lists);
  g_autofree char *calls = nested(SC_EXPR_MAX_DEPTH, "f(", "x", ")");
  check_roundtrip(calls, calls);
  g_autofree char *mixed = nested(SC_EXPR_MAX_DEPTH / 2, "g(k=[", "?x", "])");
  check_roundtrip(mixed, mixed);
  /* 257 are refused at the 257th opening bracket */
  g_autofree char *lists1 = nested(SC_EXPR_MAX_DEPTH + 1, "[", "1", "]");
  check_error(lists1, SC_EXPR_MAX_DEPTH + 1, "at most 256 nested calls and lists",
              "'['");
  g_autofree char *calls1 = nested(SC_EXPR_MAX_DEPTH + 1, "f(", "x", ")");
  check_error(calls1, 2 * SC_EXPR_MAX_DEPTH + 2,
              "at most 256 nested calls and lists", "'('");
  /* adversarial: a million brackets, unclosed, closed and interleaved */
  g_autofree char *deep = g_strnfill(1000000, '[');
  check_error(deep, SC_EXPR_MAX_DEPTH + 1, "at most 256 nested calls and lists",
              "'['");
  g_autofree char *deep2 = nested(500000, "f(a, ", "1", ")");
  check_error(deep2, 5 * SC_EXPR_MAX_DEPTH + 2,
              "at most 256 nested calls and lists", "'('");
  /* depth is restored after each item: many shallow siblings are fine */
  GString *wide = g_string_new("[");
  for (int i = 0; i < 10000; i++)
    g_string_append(wide, i ? ", [[1]]" : "[[1]]");
  g_string_append(wide, "]");
  g_autoptr(sc_expr) w = parse_ok(wide->str);
  g_assert_cmpuint(w->n_args, ==, 10000);
  g_autofree char *ws = sc_expr_to_string(w);
  g_assert_cmpstr(ws, ==, wide->str);
  g_string_free(wide, TRUE);
  /* many keywords: duplicate detection stays fast and exact */
  GString *kw = g_string_new("f(");
  for (int i = 0; i < 20000; i++)
    g_string_append_printf(kw, "%sk%d=%d", i ? ", " : "", i, i);
  g_string_append(kw, ")");
  g_autoptr(sc_expr) k = parse_ok(kw->str);
  g_assert_cmpint(sc_expr_get_kwarg(k, "k19999")->ival, ==, 19999);
  g_string_truncate(kw, kw->len - 1);
  size_t col = kw->len + 3;
  g_string_append(kw, ", k7=1)");
  check_error(kw->str, (unsigned)col, "a keyword not given before in this call",
              "duplicate keyword 'k7'");
  g_string_free(kw, TRUE);
}

/* ---------------------------------------------------------------------------
 * Equality, copy, constructors
 * ------------------------------------------------------------------------- */

static void test_equal(void) {
  static const struct {
    const char *a, *b;
    gboolean equal;
  } cases[] = {
    {"cat( a ,b )", "cat(a, b)", TRUE},
    {"cat(a, b, dim=0)", "cat(a, b, dim=0)", TRUE},
    {"cat(a, b, dim=0)", "cat(a, b, dim=1)", FALSE},
    {"cat(a, b, dim=0)", "cat(a, b, axis=0)", FALSE},
    {"cat(a, b, dim=0)", "cat(a, b, 0)", FALSE},
    {"cat(a, b)", "cat(b, a)", FALSE},
    {"cat(a, b)", "cat(a, b, c)", FALSE},
    {"cat(a)", "sum(a)", FALSE},
    {"f(x=1, y=2)", "f(y=2, x=1)", FALSE},
    {"1", "1.0", FALSE},
    {"1e0", "1.0", TRUE},
    {"a", "\"a\"", FALSE},
    {"a", "?a", FALSE},
    {"\"inf\"", "inf", FALSE},
    {"[1, 2]", "[1,2]", TRUE},
    {"[1, 2]", "f(1, 2)", FALSE},
    {"[]", "[[]]", FALSE},
    {"nan", "nan", TRUE},
    {"0.0", "-0.0", FALSE},
    {"r0.x", "r0.y", FALSE},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(sc_expr) a = parse_ok(cases[i].a);
    g_autoptr(sc_expr) b = parse_ok(cases[i].b);
    g_assert_cmpint(sc_expr_equal(a, b), ==, cases[i].equal);
    g_assert_cmpint(sc_expr_equal(b, a), ==, cases[i].equal);
    g_assert_true(sc_expr_equal(a, a));
  }
  g_assert_true(sc_expr_equal(NULL, NULL));
  g_autoptr(sc_expr) x = parse_ok("x");
  g_assert_false(sc_expr_equal(x, NULL));
  g_assert_false(sc_expr_equal(NULL, x));
}

static void test_copy(void) {
  const char *src = "cat(slice(?x, dim=?d, start=0, end=\"S/2\"), [1, 2.5, nan], "
                    "f(), dim=-inf)";
  sc_expr *e = parse_ok(src);
  sc_expr *c = sc_expr_copy(e);
  g_assert_true(sc_expr_equal(e, c));
  g_assert_true(c != e);
  g_assert_true(c->args[0] != e->args[0]);
  g_assert_true(c->text != e->text);
  g_assert_true(c->keys[3] != e->keys[3]);
  g_assert_cmpuint(c->args[0]->start, ==, e->args[0]->start);
  g_autofree char *before = sc_expr_to_string(e);
  sc_expr_free(e); /* the copy owns nothing of the original */
  g_autofree char *after = sc_expr_to_string(c);
  g_assert_cmpstr(after, ==, before);
  /* mutating the copy does not touch a second copy */
  sc_expr *d = sc_expr_copy(c);
  sc_expr_add_arg(c->args[1], NULL, sc_expr_new_int(3));
  g_assert_false(sc_expr_equal(c, d));
  g_assert_cmpuint(d->args[1]->n_args, ==, 3);
  sc_expr_free(c);
  sc_expr_free(d);
  g_assert_null(sc_expr_copy(NULL));
  sc_expr_free(NULL);
}

static void test_constructors(void) {
  g_autoptr(sc_expr) cat = sc_expr_new_call("cat");
  sc_expr_add_arg(cat, NULL, sc_expr_new_name("r0.x"));
  sc_expr_add_arg(cat, NULL, sc_expr_new_name("r1.x"));
  sc_expr_add_arg(cat, "dim", sc_expr_new_int(0));
  g_autofree char *s = sc_expr_to_string(cat);
  g_assert_cmpstr(s, ==, "cat(r0.x, r1.x, dim=0)");
  g_autoptr(sc_expr) parsed = parse_ok("cat(r0.x, r1.x, dim=0)");
  g_assert_true(sc_expr_equal(cat, parsed));
  g_assert_cmpuint(cat->start, ==, 0);
  g_assert_cmpuint(cat->end, ==, 0);

  g_autoptr(sc_expr) full = sc_expr_new_call("full");
  sc_expr *shape = sc_expr_new_list();
  sc_expr_add_arg(shape, NULL, sc_expr_new_int(2));
  sc_expr_add_arg(shape, NULL, sc_expr_new_string("S/2"));
  sc_expr_add_arg(full, "shape", shape);
  sc_expr_add_arg(full, "value", sc_expr_new_float(-INFINITY));
  sc_expr_add_arg(full, "tag", sc_expr_new_string("a\"b\\"));
  sc_expr_add_arg(full, "p", sc_expr_new_var("v"));
  g_autofree char *fs = sc_expr_to_string(full);
  g_assert_cmpstr(fs, ==,
                  "full(shape=[2, \"S/2\"], value=-inf, tag=\"a\\\"b\\\\\", p=?v)");
  g_autoptr(sc_expr) fp = parse_ok(fs);
  g_assert_true(sc_expr_equal(full, fp));
  g_assert_null(shape->keys[0]);
  g_assert_null(shape->keys[1]);

  /* sc_expr_append appends */
  GString *out = g_string_new("relation: ");
  sc_expr_append(out, cat);
  g_assert_cmpstr(out->str, ==, "relation: cat(r0.x, r1.x, dim=0)");
  g_string_free(out, TRUE);

  /* constructors copy their strings */
  char buf[8] = "abc";
  g_autoptr(sc_expr) n = sc_expr_new_name(buf);
  buf[0] = 'z';
  g_assert_cmpstr(n->text, ==, "abc");

  /* a keyword in a list is a programmer error: refused, child not taken */
  g_autoptr(sc_expr) list = sc_expr_new_list();
  g_autoptr(sc_expr) child = sc_expr_new_int(1);
  g_test_expect_message("sc-expr", G_LOG_LEVEL_CRITICAL, "*key == NULL*");
  sc_expr_add_arg(list, "k", child);
  g_test_assert_expected_messages();
  g_assert_cmpuint(list->n_args, ==, 0);
}

static void test_get_kwarg(void) {
  g_autoptr(sc_expr) e =
      parse_ok("slice(x_1, dim=0, start=\"S/2\", end=\"S\")");
  const sc_expr *dim = sc_expr_get_kwarg(e, "dim");
  g_assert_nonnull(dim);
  g_assert_cmpint(dim->kind, ==, SC_EXPR_INT);
  g_assert_cmpint(dim->ival, ==, 0);
  const sc_expr *start = sc_expr_get_kwarg(e, "start");
  g_assert_cmpint(start->kind, ==, SC_EXPR_STRING);
  g_assert_cmpstr(start->text, ==, "S/2");
  g_assert_null(sc_expr_get_kwarg(e, "step"));
  g_assert_null(sc_expr_get_kwarg(e, "x_1")); /* positional, not a keyword */
  g_autoptr(sc_expr) l = parse_ok("[1, 2]");
  g_assert_null(sc_expr_get_kwarg(l, "dim"));
  g_autoptr(sc_expr) name = parse_ok("dim");
  g_assert_null(sc_expr_get_kwarg(name, "dim"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/expr/roundtrip/table", test_roundtrip_table);
  g_test_add_func("/expr/roundtrip/kinds", test_roundtrip_kinds);
  g_test_add_func("/expr/parse/errors", test_errors_table);
  g_test_add_func("/expr/parse/error-text", test_errors_exact_text);
  g_test_add_func("/expr/parse/int64-limits", test_int64_limits);
  g_test_add_func("/expr/float/roundtrip", test_float_roundtrip);
  g_test_add_func("/expr/parse/spans", test_spans);
  g_test_add_func("/expr/parse/depth", test_depth);
  g_test_add_func("/expr/equal", test_equal);
  g_test_add_func("/expr/copy", test_copy);
  g_test_add_func("/expr/constructors", test_constructors);
  g_test_add_func("/expr/get-kwarg", test_get_kwarg);
  return g_test_run();
}
