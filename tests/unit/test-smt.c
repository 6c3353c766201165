/* test-smt.c — the cvc5 bridge on hand-built solver-neutral queries: single
 * checks (sat / unsat), decisions (yes / no / unknown, inconsistent
 * contexts), linear and nonlinear logics, disjunctions and divisibility,
 * the time and resource limits on a query cvc5 cannot settle, invalid
 * queries (errors, never crashes), the statistics and the limits read from
 * the environment.  Queries are written in a small text form (see qt_poly)
 * so that each test reads like the constraint it states. */
#include "smt/smt.h"

#include <glib.h>
#include <string.h>

/* ---- a tiny query builder -------------------------------------------- */

typedef struct {
  GPtrArray *allocs;   /* everything below, freed together */
  GArray *vars;        /* sc_sym_qvar */
  GArray *clauses;     /* sc_sym_qclause */
  sc_sym_query q;
} qt;

static qt *qt_new(void) {
  qt *t = g_new0(qt, 1);
  t->allocs = g_ptr_array_new_with_free_func(g_free);
  t->vars = g_array_new(FALSE, FALSE, sizeof(sc_sym_qvar));
  t->clauses = g_array_new(FALSE, FALSE, sizeof(sc_sym_qclause));
  return t;
}

static void qt_free(qt *t) {
  g_ptr_array_free(t->allocs, TRUE);
  g_array_free(t->vars, TRUE);
  g_array_free(t->clauses, TRUE);
  g_free(t);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(qt, qt_free)

static void qt_var(qt *t, const char *name, gboolean has_lo, int64_t lo, gboolean has_hi,
                   int64_t hi) {
  char *n = g_strdup(name);
  g_ptr_array_add(t->allocs, n);
  sc_sym_qvar v = {n, has_lo, has_hi, lo, hi};
  g_array_append_val(t->vars, v);
}

static uint32_t qt_lookup(qt *t, const char *name) {
  for (uint32_t i = 0; i < t->vars->len; i++)
    if (strcmp(g_array_index(t->vars, sc_sym_qvar, i).name, name) == 0)
      return i;
  g_error("no variable %s", name);
}

/* "3 x y; -1 z z z; 5" is 3*x*y - z^3 + 5: terms separated by ';', each a
 * coefficient followed by its factors (a repeated name is a power). */
static sc_sym_qpoly qt_poly(qt *t, const char *text) {
  g_auto(GStrv) terms = g_strsplit(text, ";", -1);
  uint32_t n = g_strv_length(terms);
  sc_sym_qterm *qt_terms = g_new0(sc_sym_qterm, n ? n : 1);
  g_ptr_array_add(t->allocs, qt_terms);
  for (uint32_t i = 0; i < n; i++) {
    g_auto(GStrv) tok = g_strsplit_set(g_strstrip(terms[i]), " ", -1);
    uint32_t nt = g_strv_length(tok);
    g_assert_cmpuint(nt, >=, 1);
    qt_terms[i].coeff = g_ascii_strtoll(tok[0], NULL, 10);
    sc_sym_qfactor *f = g_new0(sc_sym_qfactor, nt);
    g_ptr_array_add(t->allocs, f);
    uint32_t nf = 0;
    for (uint32_t j = 1; j < nt; j++) {
      uint32_t v = qt_lookup(t, tok[j]);
      if (nf > 0 && f[nf - 1].var == v)
        f[nf - 1].exp++;
      else
        f[nf++] = (sc_sym_qfactor){v, 1};
    }
    qt_terms[i].n_factors = nf;
    qt_terms[i].factors = nf ? f : NULL;
  }
  return (sc_sym_qpoly){n, qt_terms};
}

static sc_sym_qlit qt_lit(qt *t, sc_sym_rel rel, int64_t k, const char *poly) {
  sc_sym_qlit l = {rel, k, qt_poly(t, poly)};
  return l;
}

/* A clause of one literal, or two when POLY2 is not NULL. */
static void qt_assert(qt *t, sc_sym_rel rel, const char *poly, sc_sym_rel rel2,
                      const char *poly2) {
  sc_sym_qlit *lits = g_new0(sc_sym_qlit, 2);
  g_ptr_array_add(t->allocs, lits);
  lits[0] = qt_lit(t, rel, 0, poly);
  uint32_t n = 1;
  if (poly2)
    lits[n++] = qt_lit(t, rel2, 0, poly2);
  sc_sym_qclause c = {n, lits};
  g_array_append_val(t->clauses, c);
}

static const sc_sym_query *qt_goal(qt *t, sc_sym_rel rel, int64_t k, const char *poly) {
  t->q.goal = qt_lit(t, rel, k, poly);
  t->q.n_vars = t->vars->len;
  t->q.vars = (const sc_sym_qvar *)(void *)t->vars->data;
  t->q.n_clauses = t->clauses->len;
  t->q.clauses = (const sc_sym_qclause *)(void *)t->clauses->data;
  t->q.key = "";
  return &t->q;
}

#define GE SC_SYM_REL_GE
#define EQ SC_SYM_REL_EQ
#define NE SC_SYM_REL_NE
#define DIV SC_SYM_REL_DIV

/* x in [0, 10], x >= 5 */
static qt *ctx_x_ge5(void) {
  qt *t = qt_new();
  qt_var(t, "x", TRUE, 0, TRUE, 10);
  qt_assert(t, GE, "1 x; -5", GE, NULL);
  return t;
}

/* ---- tests ----------------------------------------------------------- */

static void test_smt_selftest(void) {
  g_assert_cmpint(sc_smt_selftest(), ==, 1);
  g_assert_nonnull(sc_smt_version());
  g_assert_cmpstr(sc_smt_version(), !=, "unknown");
}

static void test_smt_check(void) {
  sc_smt *smt = sc_smt_new();
  g_autoptr(qt) t = ctx_x_ge5();
  const sc_sym_query *q = qt_goal(t, GE, 0, "1 x; -3"); /* x >= 3 */
  g_assert_cmpint(sc_smt_check(smt, q, SC_SMT_CONTEXT), ==, SC_SMT_SAT);
  g_assert_cmpint(sc_smt_check(smt, q, SC_SMT_WITH_GOAL), ==, SC_SMT_SAT);
  g_assert_cmpint(sc_smt_check(smt, q, SC_SMT_WITH_NEGATION), ==, SC_SMT_UNSAT);
  /* x >= 11 contradicts the bound x <= 10 */
  q = qt_goal(t, GE, 0, "1 x; -11");
  g_assert_cmpint(sc_smt_check(smt, q, SC_SMT_WITH_GOAL), ==, SC_SMT_UNSAT);
  sc_smt_stats s;
  sc_smt_get_stats(smt, &s);
  g_assert_cmpuint(s.checks, ==, 4);
  g_assert_cmpuint(s.sat, ==, 2);
  g_assert_cmpuint(s.unsat, ==, 2);
  g_assert_cmpuint(s.unknown, ==, 0);
  g_assert_cmpuint(s.errors, ==, 0);
  g_assert_cmpuint(s.queries, ==, 0);
  sc_smt_free(smt);
}

static void test_smt_decide(void) {
  sc_smt *smt = sc_smt_new();
  g_autoptr(qt) t = ctx_x_ge5();
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "1 x; -3")), ==, SC_YES);  /* x >= 3 */
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "-1 x; 2")), ==, SC_NO);   /* x <= 2 */
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "1 x; -7")), ==, SC_UNKNOWN);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, NE, 0, "1 x; -4")), ==, SC_YES);  /* x != 4 */
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, EQ, 0, "1 x; -4")), ==, SC_NO);
  sc_smt_stats s;
  sc_smt_get_stats(smt, &s);
  g_assert_cmpuint(s.queries, ==, 5);
  g_assert_cmpuint(s.yes, ==, 2);
  g_assert_cmpuint(s.no, ==, 2);
  g_assert_cmpuint(s.undecided, ==, 1);
  g_assert_cmpuint(s.inconsistent, ==, 0);
  /* yes: negation unsat, context sat; no: negation sat, goal unsat;
   * unknown: both sat */
  g_assert_cmpuint(s.checks, ==, 10);
  g_assert_cmpuint(s.sat, ==, 6);
  g_assert_cmpuint(s.unsat, ==, 4);
  g_assert_cmpuint(s.errors, ==, 0);
  sc_smt_free(smt);
}

/* Contradictory facts entail everything: the bridge says UNKNOWN. */
static void test_smt_inconsistent(void) {
  sc_smt *smt = sc_smt_new();
  g_autoptr(qt) t = ctx_x_ge5();
  qt_assert(t, GE, "-1 x; 2", GE, NULL); /* x <= 2 */
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "1 x; -3")), ==, SC_UNKNOWN);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, EQ, 0, "1 x; -100")), ==, SC_UNKNOWN);
  sc_smt_stats s;
  sc_smt_get_stats(smt, &s);
  g_assert_cmpuint(s.undecided, ==, 2);
  g_assert_cmpuint(s.inconsistent, ==, 2);
  g_assert_cmpuint(s.yes + s.no, ==, 0);
  sc_smt_free(smt);
}

/* Clauses are disjunctions; divisibility is floor modulo. */
static void test_smt_disjunction_div(void) {
  sc_smt *smt = sc_smt_new();
  g_autoptr(qt) t = qt_new();
  qt_var(t, "x", FALSE, 0, FALSE, 0);
  qt_assert(t, EQ, "1 x; -1", EQ, "1 x; 3"); /* x == 1 or x == -3 */
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, DIV, 2, "1 x")), ==, SC_NO);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, DIV, 2, "1 x; 1")), ==, SC_YES);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, DIV, 3, "1 x")), ==, SC_UNKNOWN);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, DIV, 4, "1 x; -1")), ==, SC_YES);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, DIV, 4, "1 x; 1")), ==, SC_NO);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, DIV, 1, "1 x")), ==, SC_YES);
  sc_smt_free(smt);
}

/* Degree 2 terms switch to QF_NIA. */
static void test_smt_nonlinear(void) {
  sc_smt *smt = sc_smt_new();
  g_autoptr(qt) t = qt_new();
  qt_var(t, "B", TRUE, 1, TRUE, G_MAXINT64);
  qt_var(t, "S", TRUE, 0, TRUE, G_MAXINT64);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "1 B S; -1 S")), ==, SC_YES);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "1 S S; -1 S")), ==, SC_YES);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "1 B S; -2 S")), ==, SC_UNKNOWN);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "-1 B B; -1")), ==, SC_NO);
  sc_smt_free(smt);
}

/* x^3 + y^3 == z^3 has no positive solution, which no solver shows: under
 * a tiny limit the bridge must come back quickly, with UNKNOWN. */
static qt *fermat3(void) {
  qt *t = qt_new();
  qt_var(t, "x", TRUE, 1, FALSE, 0);
  qt_var(t, "y", TRUE, 1, FALSE, 0);
  qt_var(t, "z", TRUE, 1, FALSE, 0);
  qt_assert(t, EQ, "1 x x x; 1 y y y; -1 z z z", EQ, NULL);
  return t;
}

static void test_smt_timeout(void) {
  sc_smt *smt = sc_smt_new();
  sc_smt_set_limits(smt, 50, 0); /* 50 ms, no resource limit: time binds */
  g_autoptr(qt) t = fermat3();
  const sc_sym_query *q = qt_goal(t, GE, 0, "1 x; -1000000");
  gint64 t0 = g_get_monotonic_time();
  g_assert_cmpint(sc_smt_check(smt, q, SC_SMT_CONTEXT), ==, SC_SMT_UNKNOWN);
  g_assert_cmpint(sc_smt_decide(smt, q), ==, SC_UNKNOWN);
  gint64 us = g_get_monotonic_time() - t0;
  g_assert_cmpint(us, <, 600000); /* 2 x 50 ms of budget, and cvc5's setup */
  sc_smt_stats s;
  sc_smt_get_stats(smt, &s);
  g_assert_cmpuint(s.limit_hits, >=, 2);
  g_assert_cmpuint(s.unknown, <=, s.limit_hits);
  g_assert_cmpuint(s.time_hits, ==, s.limit_hits); /* every hit is the wall time's */
  g_assert_cmpuint(s.errors, ==, 0);
  g_assert_cmpuint(s.undecided, ==, 1);

  /* a resource limit alone binds too, deterministically */
  sc_smt_set_limits(smt, 100000, 2000);
  t0 = g_get_monotonic_time();
  g_assert_cmpint(sc_smt_check(smt, q, SC_SMT_CONTEXT), ==, SC_SMT_UNKNOWN);
  g_assert_cmpint(g_get_monotonic_time() - t0, <, 5000000);
  sc_smt_stats s2;
  sc_smt_get_stats(smt, &s2);
  g_assert_cmpuint(s2.limit_hits, ==, s.limit_hits + 1);
  g_assert_cmpuint(s2.time_hits, ==, s.time_hits); /* the resource limit's, not the time's */
  sc_smt_free(smt);
}

/* The default limits keep a hopeless query under a second. */
static void test_smt_default_limits(void) {
  g_unsetenv("SC_SMT_TLIMIT_MS");
  g_unsetenv("SC_SMT_RLIMIT");
  sc_smt *smt = sc_smt_new();
  uint32_t ms;
  uint64_t rl;
  sc_smt_get_limits(smt, &ms, &rl);
  g_assert_cmpuint(ms, ==, SC_SMT_DEFAULT_TLIMIT_MS);
  g_assert_cmpuint(rl, ==, SC_SMT_DEFAULT_RLIMIT);
  g_autoptr(qt) t = fermat3();
  gint64 t0 = g_get_monotonic_time();
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t, GE, 0, "1 x; -1000000")), ==, SC_UNKNOWN);
  g_assert_cmpint(g_get_monotonic_time() - t0, <, 1000000);
  sc_smt_free(smt);

  g_setenv("SC_SMT_TLIMIT_MS", "123", TRUE);
  g_setenv("SC_SMT_RLIMIT", "4567", TRUE);
  smt = sc_smt_new();
  sc_smt_get_limits(smt, &ms, &rl);
  g_assert_cmpuint(ms, ==, 123);
  g_assert_cmpuint(rl, ==, 4567);
  sc_smt_free(smt);
  g_setenv("SC_SMT_TLIMIT_MS", "0", TRUE);    /* out of range: ignored */
  g_setenv("SC_SMT_RLIMIT", "lots", TRUE);    /* not a number: ignored */
  smt = sc_smt_new();
  sc_smt_get_limits(smt, &ms, &rl);
  g_assert_cmpuint(ms, ==, SC_SMT_DEFAULT_TLIMIT_MS);
  g_assert_cmpuint(rl, ==, SC_SMT_DEFAULT_RLIMIT);
  sc_smt_free(smt);
  g_unsetenv("SC_SMT_TLIMIT_MS");
  g_unsetenv("SC_SMT_RLIMIT");
}

/* Malformed queries are errors answered UNKNOWN, never crashes. */
static void test_smt_invalid(void) {
  sc_smt *smt = sc_smt_new();
  g_assert_cmpstr(sc_smt_last_error(smt), ==, "");
  g_autoptr(qt) t = ctx_x_ge5();
  const sc_sym_query *q = qt_goal(t, GE, 0, "1 x");
  sc_sym_qfactor bad = {7, 1};
  sc_sym_qterm term = {1, 1, &bad};
  sc_sym_query copy = *q;
  copy.goal.p = (sc_sym_qpoly){1, &term};
  g_assert_cmpint(sc_smt_decide(smt, &copy), ==, SC_UNKNOWN);
  g_assert_nonnull(strstr(sc_smt_last_error(smt), "variable index 7 out of range"));
  copy.goal = qt_lit(t, DIV, 0, "1 x");
  g_assert_cmpint(sc_smt_check(smt, &copy, SC_SMT_WITH_GOAL), ==, SC_SMT_UNKNOWN);
  g_assert_nonnull(strstr(sc_smt_last_error(smt), "divisor 0"));
  bad = (sc_sym_qfactor){0, 0};
  copy.goal.rel = GE;
  copy.goal.p = (sc_sym_qpoly){1, &term};
  g_assert_cmpint(sc_smt_decide(smt, &copy), ==, SC_UNKNOWN);
  g_assert_nonnull(strstr(sc_smt_last_error(smt), "exponent 0"));
  bad = (sc_sym_qfactor){0, 1u << 20};
  g_assert_cmpint(sc_smt_decide(smt, &copy), ==, SC_UNKNOWN);
  g_assert_nonnull(strstr(sc_smt_last_error(smt), "too large"));
  g_assert_cmpint(sc_smt_decide(smt, NULL), ==, SC_UNKNOWN);
  g_assert_nonnull(strstr(sc_smt_last_error(smt), "NULL"));
  /* a variable whose bounds are inverted makes an inconsistent context */
  g_autoptr(qt) t2 = qt_new();
  qt_var(t2, "x", TRUE, 5, TRUE, 1);
  g_assert_cmpint(sc_smt_decide(smt, qt_goal(t2, GE, 0, "1 x")), ==, SC_UNKNOWN);
  sc_smt_stats s;
  sc_smt_get_stats(smt, &s);
  g_assert_cmpuint(s.errors, ==, 5);
  g_assert_cmpuint(s.inconsistent, ==, 1);
  g_assert_cmpuint(s.queries, ==, 5);
  sc_smt_free(smt);
}

static void test_smt_stats_text(void) {
  sc_smt_stats s = {.queries = 3, .yes = 2, .no = 1, .checks = 5, .sat = 2, .unsat = 3,
                    .time_us = 31000};
  g_autofree char *text = sc_smt_stats_to_string(&s);
  g_assert_cmpstr(text, ==,
                  "cvc5 queries 3 (yes 2, no 1, unknown 0, inconsistent 0), checks 5 (sat 2, "
                  "unsat 3, unknown 0, limit hits 0), errors 0, time 0.031 s");
  s.unknown = 2;
  s.limit_hits = 2;
  s.time_hits = 1;
  g_autofree char *text2 = sc_smt_stats_to_string(&s);
  g_assert_nonnull(strstr(text2, "unknown 2, limit hits 2 (time 1)), errors 0"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/smt/selftest", test_smt_selftest);
  g_test_add_func("/smt/check/sat-unsat", test_smt_check);
  g_test_add_func("/smt/decide/yes-no-unknown", test_smt_decide);
  g_test_add_func("/smt/decide/inconsistent", test_smt_inconsistent);
  g_test_add_func("/smt/decide/disjunction-div", test_smt_disjunction_div);
  g_test_add_func("/smt/decide/nonlinear", test_smt_nonlinear);
  g_test_add_func("/smt/limits/timeout", test_smt_timeout);
  g_test_add_func("/smt/limits/default", test_smt_default_limits);
  g_test_add_func("/smt/errors/invalid", test_smt_invalid);
  g_test_add_func("/smt/stats/text", test_smt_stats_text);
  return g_test_run();
}
