/* test-symbolic-check.c — symbolic sizes through the check pipeline, with
 * cvc5 as the oracle: a bundle whose declared shapes the normal form
 * cannot prove (a chain of three assumptions) loads only when the oracle
 * is given as a load option, and the oracle stays plugged in after the
 * load; the answers of a bundle that needs no oracle are unchanged by one;
 * a side condition that no engine can decide (S*T against U, nothing
 * linking them) gives a conservative FAILS whose report names the lemma,
 * its condition as written and the undecided comparison instantiated,
 * while the same bundle with the assumption refines; assumptions that
 * contradict each other only nonlinearly are refused at load, by cvc5. */
#include "shardcheck/infer.h"
#include "smt/smt.h"

#include <string.h>

/* ---- a bundle that loads only with the oracle ---- */

/* x [V] sliced to [0:S]: ATen's slice clamps the end to V, and the
 * declared [S] equals min(S, V) only through S <= T <= U <= V. */
static const char *chain_bundle =
    "{\"format\": \"shardcheck-bundle/1\", \"name\": \"chain\",\n"
    " \"symbols\": {\"S\": {\"min\": 1}, \"T\": {\"min\": 1}, \"U\": {\"min\": 1},"
    " \"V\": {\"min\": 1}},\n"
    " \"assume\": [\"S <= T\", \"T <= U\", \"U <= V\"],\n"
    " \"spec\": {\"inputs\": [{\"name\": \"x\", \"shape\": [\"V\"]}],\n"
    "  \"nodes\": [{\"name\": \"head\", \"op\": \"aten.slice.Tensor\", \"args\": [\"x\", 0, 0, "
    "\"S\"],\n"
    "    \"outputs\": [{\"name\": \"h\", \"shape\": [\"S\"]}]}],\n"
    "  \"outputs\": [\"h\"]},\n"
    " \"impl\": {\"inputs\": [{\"name\": \"x_0\", \"shape\": [\"V\"]}],\n"
    "  \"nodes\": [{\"name\": \"head_0\", \"op\": \"aten.slice.Tensor\", \"args\": [\"x_0\", 0, 0, "
    "\"S\"],\n"
    "    \"outputs\": [{\"name\": \"h_0\", \"shape\": [\"S\"]}]}],\n"
    "  \"outputs\": [\"h_0\"]},\n"
    " \"input_relation\": {\"x\": [\"x_0\"]}}\n";

static void test_load_needs_oracle(void) {
  GError *err = NULL;
  /* without an oracle: the normal form cannot follow the chain */
  sc_bundle_diag diag = {0};
  sc_bundle *none = sc_bundle_load_string_opts(chain_bundle, strlen(chain_bundle), "chain.json",
                                               NULL, &diag, &err);
  g_assert_null(none);
  g_assert_error(err, SC_BUNDLE_ERROR, SC_BUNDLE_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "chain.json: spec.nodes[0]: node 'head'"));
  g_assert_nonnull(strstr(err->message, "declared [S] f32 but aten.slice.Tensor gives "
                                        "[min(S, V)] f32 (cannot prove them equal)"));
  g_assert_cmpstr(diag.path, ==, "spec.nodes[0]");
  g_clear_error(&err);
  sc_bundle_diag_clear(&diag);

  /* an options struct without an oracle is the plain load */
  sc_bundle_load_options empty = {NULL, NULL};
  g_assert_null(sc_bundle_load_string_opts(chain_bundle, strlen(chain_bundle), "chain.json",
                                           &empty, NULL, &err));
  g_assert_error(err, SC_BUNDLE_ERROR, SC_BUNDLE_ERROR_INVALID);
  g_clear_error(&err);

  /* with cvc5 as the oracle from the start of the load */
  sc_smt *smt = sc_smt_new();
  sc_bundle_load_options opts = {sc_smt_oracle(), smt};
  sc_bundle *b =
      sc_bundle_load_string_opts(chain_bundle, strlen(chain_bundle), "chain.json", &opts, NULL,
                                 &err);
  g_assert_no_error(err);
  g_assert_nonnull(b);
  sc_sym_stats st;
  sc_symtab_stats(sc_bundle_symtab(b), &st);
  g_assert_cmpuint(st.oracle_calls, >=, 1);
  g_assert_cmpuint(st.oracle_yes, >=, 1);
  sc_smt_stats ss;
  sc_smt_get_stats(smt, &ss);
  g_assert_cmpuint(ss.queries, ==, st.oracle_calls);
  g_assert_cmpuint(ss.yes, ==, st.oracle_yes);
  g_assert_cmpuint(ss.errors, ==, 0);
  /* the slice keeps the shape rule's form, proved equal to the declared
   * one; the oracle stays plugged in and says so again */
  sc_symtab *sym = sc_bundle_symtab(b);
  const sc_graph *spec = sc_bundle_spec(b);
  sc_id h = sc_graph_find_tensor(spec, "h");
  g_assert_cmpuint(h, !=, SC_ID_NONE);
  const sc_ttype *t = sc_graph_type_of((void *)spec, h);
  g_assert_cmpuint(t->shape.rank, ==, 1);
  g_autofree char *dim = sc_dim_to_string(sym, t->shape.dims[0]);
  g_assert_cmpstr(dim, ==, "min(S, V)");
  sc_dim s, v;
  g_assert_true(sc_dim_symbol(sym, "S", &s, NULL));
  g_assert_true(sc_dim_symbol(sym, "V", &v, NULL));
  g_assert_cmpint(sc_dim_eq(sym, t->shape.dims[0], s), ==, SC_YES);
  g_assert_cmpint(sc_dim_le(sym, s, v), ==, SC_YES);
  sc_symtab_set_oracle(sym, NULL, NULL);
  g_assert_cmpint(sc_dim_le(sym, s, v), ==, SC_UNKNOWN);
  sc_bundle_free(b);
  sc_smt_free(smt);
}

/* A bundle the normal form settles alone: the oracle is never asked, and
 * the load gives the same shapes with and without it. */
static const char *easy_bundle =
    "{\"format\": \"shardcheck-bundle/1\", \"name\": \"easy\",\n"
    " \"symbols\": {\"S\": {\"min\": 2}}, \"assume\": [\"S % 2 == 0\"],\n"
    " \"spec\": {\"inputs\": [{\"name\": \"x\", \"shape\": [\"S\", 4]}],\n"
    "  \"nodes\": [{\"name\": \"v\", \"op\": \"aten.view.default\", \"args\": [\"x\", [2, "
    "\"S/2\", 4]],\n"
    "    \"outputs\": [{\"name\": \"y\", \"shape\": [2, \"S/2\", 4]}]}],\n"
    "  \"outputs\": [\"y\"]},\n"
    " \"impl\": {\"inputs\": [{\"name\": \"a\", \"shape\": [\"S/2\", 4]},"
    " {\"name\": \"b\", \"shape\": [\"S/2\", 4]}],\n"
    "  \"nodes\": [{\"name\": \"c\", \"op\": \"aten.cat.default\", \"args\": [[\"a\", \"b\"]],\n"
    "    \"outputs\": [{\"name\": \"x2\", \"shape\": [\"S\", 4]}]}],\n"
    "  \"outputs\": [\"x2\"]},\n"
    " \"input_relation\": {\"x\": [\"cat(a, b, dim=0)\"]}}\n";

static void test_load_oracle_not_needed(void) {
  GError *err = NULL;
  sc_smt *smt = sc_smt_new();
  sc_bundle_load_options opts = {sc_smt_oracle(), smt};
  g_autoptr(sc_bundle) with =
      sc_bundle_load_string_opts(easy_bundle, strlen(easy_bundle), "easy.json", &opts, NULL, &err);
  g_assert_no_error(err);
  g_autoptr(sc_bundle) without = sc_bundle_load_string(easy_bundle, "easy.json", &err);
  g_assert_no_error(err);
  sc_sym_stats a, b;
  sc_symtab_stats(sc_bundle_symtab(with), &a);
  sc_symtab_stats(sc_bundle_symtab(without), &b);
  g_assert_cmpuint(a.comparisons, >, 0);
  g_assert_cmpuint(a.comparisons, ==, b.comparisons);
  g_assert_cmpuint(a.nf_unknown, ==, 0);
  g_assert_cmpuint(a.oracle_calls, ==, 0);
  for (const char *name = "y"; name; name = strcmp(name, "y") == 0 ? "x" : NULL) {
    sc_id t1 = sc_graph_find_tensor(sc_bundle_spec(with), name);
    sc_id t2 = sc_graph_find_tensor(sc_bundle_spec(without), name);
    g_assert_cmpuint(t1, !=, SC_ID_NONE);
    g_assert_cmpuint(t2, !=, SC_ID_NONE);
    g_autofree char *s1 = sc_shape_to_string(&sc_graph_type_of(sc_bundle_spec(with), t1)->shape);
    g_autofree char *s2 =
        sc_shape_to_string(&sc_graph_type_of(sc_bundle_spec(without), t2)->shape);
    g_assert_cmpstr(s1, ==, s2);
  }
  sc_smt_stats ss;
  sc_smt_get_stats(smt, &ss);
  g_assert_cmpuint(ss.queries, ==, 0);
  g_clear_pointer(&with, sc_bundle_free);
  sc_smt_free(smt);
}

/* ---- an undecidable side condition ---- */

/* The lemmas this check needs, as in lemmas/slice-cat.lemma and
 * lemmas/elementwise.lemma (copied, so that the test does not depend on
 * the library's other lemmas). */
static const char *split_lemmas =
    "lemma cat_adjacent_slices: cat(slice(?x, dim=?d, start=?s, end=?m),\n"
    "                               slice(?x, dim=?d, start=?m, end=?e), dim=?d)\n"
    "    => slice(?x, dim=?d, start=?s, end=?e)\n"
    "  where 0 <= ?s and ?s <= ?m and ?m <= ?e\n"
    "lemma whole_split: ?x\n"
    "    => cat(slice(?x, dim=?d, start=0, end=?m), slice(?x, dim=?d, start=?m, end=size(?x, "
    "?d)), dim=?d)\n"
    "  where 0 <= ?d and 0 < ?m and ?m < size(?x, ?d)\n"
    "  requires slice(?x, dim=?d, start=0, end=?m)\n"
    "lemma relu_cat: relu(cat(?a, ?b, dim=?d)) <=> cat(relu(?a), relu(?b), dim=?d)\n";

/* y = relu(x), x [U]; the impl applies relu to x[0:S*T] and x[S*T:U] and
 * concatenates.  True for all sizes, but the proof splits x at S*T. */
#define SPLIT_FMT                                                                            \
  "{\"format\": \"shardcheck-bundle/1\", \"name\": \"split\",\n"                             \
  " \"symbols\": {\"S\": {\"min\": 1}, \"T\": {\"min\": 1}, \"U\": {\"min\": 1}},\n"         \
  " \"assume\": [%s],\n"                                                                     \
  " \"spec\": {\"inputs\": [{\"name\": \"x\", \"shape\": [\"U\"]}],\n"                       \
  "  \"nodes\": [{\"name\": \"relu\", \"op\": \"aten.relu.default\", \"args\": [\"x\"],\n"    \
  "    \"outputs\": [{\"name\": \"y\", \"shape\": [\"U\"]}]}],\n"                            \
  "  \"outputs\": [\"y\"]},\n"                                                               \
  " \"impl\": {\"inputs\": [{\"name\": \"x_0\", \"shape\": [\"U\"]}],\n"                     \
  "  \"nodes\": [\n"                                                                         \
  "   {\"name\": \"lo\", \"op\": \"aten.slice.Tensor\", \"args\": [\"x_0\", 0, 0, \"S*T\"],\n" \
  "    \"outputs\": [{\"name\": \"a\"}]},\n"                                                 \
  "   {\"name\": \"hi\", \"op\": \"aten.slice.Tensor\", \"args\": [\"x_0\", 0, \"S*T\", "     \
  "\"U\"],\n"                                                                                \
  "    \"outputs\": [{\"name\": \"b\"}]},\n"                                                 \
  "   {\"name\": \"ra\", \"op\": \"aten.relu.default\", \"args\": [\"a\"], \"outputs\": "     \
  "[{\"name\": \"ya\"}]},\n"                                                                 \
  "   {\"name\": \"rb\", \"op\": \"aten.relu.default\", \"args\": [\"b\"], \"outputs\": "     \
  "[{\"name\": \"yb\"}]},\n"                                                                 \
  "   {\"name\": \"c\", \"op\": \"aten.cat.default\", \"args\": [[\"ya\", \"yb\"]], "         \
  "\"outputs\": [{\"name\": \"y_0\"}]}],\n"                                                  \
  "  \"outputs\": [\"y_0\"]},\n"                                                             \
  " \"input_relation\": {\"x\": [\"x_0\"]},\n"                                               \
  " \"expect_output_relation\": {\"y\": [\"y_0\"]}}\n"

static sc_infer_result *run_split(const char *assume, sc_bundle **out_b, sc_smt **out_smt,
                                  sc_lemma_set **out_set) {
  GError *err = NULL;
  g_autofree char *json = g_strdup_printf(SPLIT_FMT, assume);
  *out_smt = sc_smt_new();
  sc_bundle_load_options opts = {sc_smt_oracle(), *out_smt};
  *out_b = sc_bundle_load_string_opts(json, strlen(json), "split.json", &opts, NULL, &err);
  g_assert_no_error(err);
  *out_set = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_string(*out_set, "split.lemma", split_lemmas, &err));
  g_assert_no_error(err);
  sc_infer_options io;
  sc_infer_options_init(&io);
  io.lemmas = *out_set;
  sc_infer_result *r = sc_infer_run(*out_b, &io, &err);
  g_assert_no_error(err);
  g_assert_nonnull(r);
  return r;
}

static void test_undecided_named(void) {
  sc_bundle *b;
  sc_smt *smt;
  sc_lemma_set *set;
  sc_infer_result *r = run_split("", &b, &smt, &set);
  /* conservative: never refines */
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_FAILS);
  g_assert_cmpint(sc_infer_failure_kind(r), ==, SC_FAILURE_UNMAPPED);
  g_assert_cmpstr(sc_graph_node(sc_bundle_spec(b), sc_infer_failure_node(r))->name, ==, "relu");
  const GPtrArray *und = sc_infer_failure_undecided(r);
  const char *split = NULL;
  for (guint i = 0; i < und->len; i++)
    if (g_str_has_prefix(g_ptr_array_index(und, i), "whole_split (split.lemma:5): "))
      split = g_ptr_array_index(und, i);
  g_assert_nonnull(split);
  g_assert_nonnull(strstr(split, "its condition was undecided "));
  g_assert_nonnull(strstr(split, "where 0 <= ?d and 0 < ?m and ?m < size(?x, ?d); "
                                 "undecided: S*T < U"));
  /* only the comparison that was UNKNOWN is named, not 0 < S*T */
  g_assert_null(strstr(split, "0 < S*T"));
  /* cvc5 was asked and could not decide */
  sc_smt_stats ss;
  sc_smt_get_stats(smt, &ss);
  g_assert_cmpuint(ss.undecided, >=, 1);
  g_assert_cmpuint(ss.yes + ss.no, ==, 0);
  sc_infer_result_free(r);
  sc_bundle_free(b);
  sc_smt_free(smt);
  sc_lemma_set_free(set);

  /* with the assumption that links them, the same bundle refines */
  r = run_split("\"S*T < U\"", &b, &smt, &set);
  g_assert_cmpint(sc_infer_verdict(r), ==, SC_VERDICT_REFINES);
  g_assert_cmpuint(sc_infer_failure_undecided(r)->len, ==, 0);
  sc_id y = sc_graph_find_tensor(sc_bundle_spec(b), "y");
  const GPtrArray *ex = sc_infer_output_exprs(r, y);
  g_assert_nonnull(ex);
  g_assert_cmpstr(g_ptr_array_index(ex, 0), ==, "y_0");
  sc_infer_result_free(r);
  sc_bundle_free(b);
  sc_smt_free(smt);
  sc_lemma_set_free(set);
}

/* ---- assumptions that contradict each other only nonlinearly ---- */

/* cvc5's oracle, counting the satisfiability checks (the loader's). */
static int sat_calls;
static sc_truth counted_decide(void *user, const sc_sym_query *q) {
  return sc_smt_oracle()->decide(user, q);
}
static sc_truth counted_satisfiable(void *user, const sc_sym_query *q) {
  sat_calls++;
  return sc_smt_oracle()->satisfiable(user, q);
}
static const sc_sym_oracle counted_oracle = {counted_decide, counted_satisfiable};

/* Loads the split bundle with ASSUME under cvc5; returns the bundle or
 * NULL with *err set. */
static sc_bundle *load_split(const char *assume, sc_smt *smt, sc_bundle_diag *diag,
                             GError **err) {
  g_autofree char *json = g_strdup_printf(SPLIT_FMT, assume);
  sc_bundle_load_options opts = {&counted_oracle, smt};
  sat_calls = 0;
  return sc_bundle_load_string_opts(json, strlen(json), "split.json", &opts, diag, err);
}

/* S*S == T*T + 2 (no two squares are 2 apart) passes the linear reasoning
 * of sc_symtab_assume; the loader asks cvc5 once whether the set can hold
 * and refuses it (exit 2 through the CLI), naming the assumptions at
 * "assume".  A satisfiable nonlinear set loads, and so does one cvc5
 * cannot settle (x^3 + y^3 == z^3: no solution, beyond cvc5): UNKNOWN is
 * taken as before the check existed. */
static void test_load_assumptions_unsat(void) {
  GError *err = NULL;
  sc_bundle_diag diag = {0};
  sc_smt *smt = sc_smt_new();
  g_assert_null(load_split("\"S*S == T*T + 2\", \"U >= 4\"", smt, &diag, &err));
  g_assert_error(err, SC_BUNDLE_ERROR, SC_BUNDLE_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "split.json: assume: the assumptions contradict each "
                                        "other"));
  g_assert_nonnull(strstr(err->message, ": S*S == T*T + 2; U >= 4"));
  g_assert_cmpstr(diag.path, ==, "assume");
  g_clear_error(&err);
  sc_bundle_diag_clear(&diag);
  g_assert_cmpint(sat_calls, ==, 1);
  sc_smt_stats ss;
  sc_smt_get_stats(smt, &ss);
  g_assert_cmpuint(ss.checks, ==, 1);
  g_assert_cmpuint(ss.unsat, ==, 1);
  sc_smt_free(smt);

  /* without the oracle the same bundle loads (today's behaviour) */
  g_autofree char *json = g_strdup_printf(SPLIT_FMT, "\"S*S == T*T + 2\"");
  sc_bundle *b = sc_bundle_load_string_opts(json, strlen(json), "split.json", NULL, NULL, &err);
  g_assert_no_error(err);
  sc_bundle_free(b);

  static const char *const taken[] = {"\"S*T == 6\", \"S >= 2\", \"T >= 2\"",
                                      "\"S*S*S + T*T*T == U*U*U\""};
  for (guint i = 0; i < G_N_ELEMENTS(taken); i++) {
    smt = sc_smt_new();
    b = load_split(taken[i], smt, NULL, &err);
    g_assert_no_error(err);
    g_assert_nonnull(b);
    g_assert_cmpint(sat_calls, ==, 1);
    sc_bundle_free(b);
    sc_smt_free(smt);
  }

  /* no assumption, or only bounds and substitutions: cvc5 is not asked */
  static const char *const decided[] = {"", "\"S % 4 == 0\", \"T == 2*S + 1\", \"U >= 3\""};
  for (guint i = 0; i < G_N_ELEMENTS(decided); i++) {
    smt = sc_smt_new();
    b = load_split(decided[i], smt, NULL, &err);
    g_assert_no_error(err);
    g_assert_nonnull(b);
    g_assert_cmpint(sat_calls, ==, 0);
    sc_bundle_free(b);
    sc_smt_free(smt);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/symbolic-check/load/needs-oracle", test_load_needs_oracle);
  g_test_add_func("/symbolic-check/load/oracle-not-needed", test_load_oracle_not_needed);
  g_test_add_func("/symbolic-check/undecided/named", test_undecided_named);
  g_test_add_func("/symbolic-check/load/assumptions-unsat", test_load_assumptions_unsat);
  return g_test_run();
}
