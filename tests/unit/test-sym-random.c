/* test-sym-random.c — the symbolic sizes module against independent
 * judges, on random inputs: normal forms, printing and decisions against a
 * direct evaluator over concrete values (every YES/NO must hold there; with
 * no assumptions, with assumptions, with substitutions), and decisions
 * under random sets of assumptions against enumeration of a box (every
 * YES/NO must hold at each solution; a refused set has none).  The seeds
 * are fixed; SC_SYM_FUZZ_SEEDS raises how many are drawn (docs/fuzzing.md).
 * The case-by-case tests are test-sym.c. */
#include "shardcheck/sym.h"
#include "sym-fixture.h"

#include <glib.h>
#include <string.h>

/* ---- randomized: normal forms, printing and decisions vs. a direct
 * evaluator over concrete values ------------------------------------ */

typedef struct node {
  int kind; /* 0 const, 1 sym, 2 + , 3 -, 4 *, 5 / const, 6 % const, 7 neg, 8 / sym, 9 min, 10 max */
  int64_t v;
  struct node *l, *r;
} node;

static const char *const fuzz_syms[] = {"S", "T", "B", "H", "N"};

/* A random expression of DEPTH over the symbols SYMS (indices into
 * fuzz_syms; NULL: all of them). */
static node *gen_over(GRand *rng, int depth, const int *syms, int n_syms) {
  node *n = g_new0(node, 1);
  int k = depth <= 0 ? g_rand_int_range(rng, 0, 2) : g_rand_int_range(rng, 0, 11);
  n->kind = k;
  if (k == 0) {
    n->v = g_rand_int_range(rng, -5, 10);
  } else if (k == 1) {
    n->v = syms ? syms[g_rand_int_range(rng, 0, n_syms)]
                : g_rand_int_range(rng, 0, G_N_ELEMENTS(fuzz_syms));
  } else if (k == 5 || k == 6) {
    n->l = gen_over(rng, depth - 1, syms, n_syms);
    do
      n->v = g_rand_int_range(rng, -4, 7);
    while (n->v == 0);
  } else if (k == 7) {
    n->l = gen_over(rng, depth - 1, syms, n_syms);
  } else {
    n->l = gen_over(rng, depth - 1, syms, n_syms);
    n->r = gen_over(rng, depth - 1, syms, n_syms);
  }
  return n;
}

static node *gen(GRand *rng, int depth) {
  return gen_over(rng, depth, NULL, 0);
}

static void node_free(node *n) {
  if (!n)
    return;
  node_free(n->l);
  node_free(n->r);
  g_free(n);
}

static node *node_copy(const node *n) {
  if (!n)
    return NULL;
  node *c = g_new(node, 1);
  *c = *n;
  c->l = node_copy(n->l);
  c->r = node_copy(n->r);
  return c;
}

static void node_print(GString *g, const node *n) {
  switch (n->kind) {
  case 0: g_string_append_printf(g, "(%" G_GINT64_FORMAT ")", n->v); break;
  case 1: g_string_append(g, fuzz_syms[n->v]); break;
  case 7: g_string_append(g, "-("); node_print(g, n->l); g_string_append(g, ")"); break;
  case 5:
  case 6:
    g_string_append_c(g, '(');
    node_print(g, n->l);
    g_string_append_printf(g, ")%c(%" G_GINT64_FORMAT ")", n->kind == 5 ? '/' : '%', n->v);
    break;
  case 9:
  case 10:
    g_string_append(g, n->kind == 9 ? "min(" : "max(");
    node_print(g, n->l);
    g_string_append(g, ", ");
    node_print(g, n->r);
    g_string_append(g, ")");
    break;
  default: {
    char op = n->kind == 2 ? '+' : n->kind == 3 ? '-' : n->kind == 4 ? '*' : '/';
    g_string_append_c(g, '(');
    node_print(g, n->l);
    g_string_append_printf(g, ")%c(", op);
    node_print(g, n->r);
    g_string_append_c(g, ')');
  }
  }
}

static int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* FALSE on division by zero or overflow */
static gboolean node_eval(const node *n, const int64_t *v, int64_t *out) {
  int64_t a, b;
  switch (n->kind) {
  case 0: *out = n->v; return TRUE;
  case 1: *out = v[n->v]; return TRUE;
  case 7:
    if (!node_eval(n->l, v, &a))
      return FALSE;
    return !__builtin_sub_overflow((int64_t)0, a, out);
  case 5:
  case 6:
    if (!node_eval(n->l, v, &a))
      return FALSE;
    *out = n->kind == 5 ? fdiv(a, n->v) : a - n->v * fdiv(a, n->v);
    return TRUE;
  default:
    if (!node_eval(n->l, v, &a) || !node_eval(n->r, v, &b))
      return FALSE;
    switch (n->kind) {
    case 2: return !__builtin_add_overflow(a, b, out);
    case 3: return !__builtin_sub_overflow(a, b, out);
    case 4: return !__builtin_mul_overflow(a, b, out);
    case 8:
      if (b == 0)
        return FALSE;
      *out = fdiv(a, b);
      return TRUE;
    case 9: *out = MIN(a, b); return TRUE;
    case 10: *out = MAX(a, b); return TRUE;
    }
  }
  return FALSE;
}

#define N_SAMPLES 24

/* Samples satisfy the declarations (S, T, B >= 1, H >= 0, -5 <= N <= 20)
 * and the assumptions of the mode (see run_fuzz). */
static gboolean sample_ok(int mode, const int64_t *v) {
  if (mode >= 1 && (v[0] % 2 != 0 || v[1] > v[0]))
    return FALSE;
  if (mode >= 2 && (v[2] != 2 * v[3] + 1 || v[3] + v[0] / v[1] > 30 || v[4] == 0))
    return FALSE;
  return TRUE;
}

static void fill_samples(GRand *rng, int mode, int64_t vals[N_SAMPLES][6]) {
  for (int i = 0; i < N_SAMPLES; i++) {
    do {
      vals[i][0] = g_rand_int_range(rng, 1, 30);
      if (mode >= 1)
        vals[i][0] = 2 * g_rand_int_range(rng, 1, 15);
      vals[i][1] = g_rand_int_range(rng, 1, mode >= 1 ? (gint32)vals[i][0] + 1 : 30);
      vals[i][3] = g_rand_int_range(rng, 0, 30);
      vals[i][2] = mode >= 2 ? 2 * vals[i][3] + 1 : g_rand_int_range(rng, 1, 30);
      vals[i][4] = g_rand_int_range(rng, -5, 21);
      vals[i][5] = 0;
    } while (!sample_ok(mode, vals[i]));
  }
  /* the corners */
  int64_t lo[6] = {mode >= 1 ? 2 : 1, 1, 1, 0, -5, 0}, hi[6] = {mode >= 1 ? 2 : 1, 1, 1, 0, 20, 0};
  if (sample_ok(mode, lo))
    memcpy(vals[0], lo, sizeof lo);
  if (sample_ok(mode, hi))
    memcpy(vals[1], hi, sizeof hi);
}

/* mode 0: declarations only; 1: S even and T <= S; 2: also a substitution
 * (B == 2*H+1), a fact over a symbolic quotient and a disequality. */
static void run_fuzz(int mode, guint32 seed) {
  g_autoptr(sc_symtab) st = new_st();
  if (mode >= 1)
    assume(st, "S % 2 == 0 && T <= S");
  if (mode >= 2)
    assume(st, "B == 2*H + 1 and H + S/T <= 30 && N != 0");
  GRand *rng = g_rand_new_with_seed(seed);
  int64_t vals[N_SAMPLES][6];
  fill_samples(rng, mode, vals);
  sc_dim prev = sc_dim_const(0);
  node *prev_node = NULL;
  guint decided = 0;
  for (int iter = 0; iter < 400; iter++) {
    node *n = gen(rng, g_rand_int_range(rng, 1, 5));
    GString *text = g_string_new(NULL);
    node_print(text, n);
    sc_dim d;
    g_autoptr(GError) error = NULL;
    if (!sc_dim_parse(st, text->str, &d, &error)) {
      /* only a divisor that is 0 everywhere may be refused */
      g_assert_error(error, SC_SYM_ERROR, SC_SYM_ERROR_INVALID);
      g_assert_nonnull(strstr(error->message, "division by zero"));
      for (int i = 0; i < N_SAMPLES; i++) {
        int64_t want;
        g_assert_false(node_eval(n, vals[i], &want));
      }
      node_free(n);
      g_string_free(text, TRUE);
      continue;
    }
    g_autofree char *printed = sc_dim_to_string(st, d);
    sc_dim again = P(st, printed);
    if (!sc_dim_identical(d, again))
      g_error("'%s' printed as '%s' does not parse back identically", text->str, printed);
    for (int i = 0; i < N_SAMPLES; i++) {
      int64_t want, got;
      if (!node_eval(n, vals[i], &want))
        continue;
      if (!sc_dim_eval(st, d, vals[i], &got))
        continue; /* a divisor that the normal form kept and is 0 here */
      if (want != got)
        g_error("'%s' (normal form '%s') at S=%" G_GINT64_FORMAT " T=%" G_GINT64_FORMAT
                " B=%" G_GINT64_FORMAT " H=%" G_GINT64_FORMAT " N=%" G_GINT64_FORMAT
                ": want %" G_GINT64_FORMAT ", got %" G_GINT64_FORMAT,
                text->str, printed, vals[i][0], vals[i][1], vals[i][2], vals[i][3], vals[i][4],
                want, got);
    }
    /* d against d + c is always decided */
    int64_t c = g_rand_int_range(rng, -2, 3);
    sc_dim dc = sc_dim_add(st, d, sc_dim_const(c));
    g_assert_cmpint(sc_dim_le(st, d, dc), ==, c >= 0 ? SC_YES : SC_NO);
    g_assert_cmpint(sc_dim_lt(st, d, dc), ==, c > 0 ? SC_YES : SC_NO);
    g_assert_cmpint(sc_dim_eq(st, dc, d), ==, c == 0 ? SC_YES : SC_NO);
    /* decisions between this and a related expression must hold */
    if (prev_node && g_rand_boolean(rng)) {
      node *m = g_new0(node, 1);
      m->kind = g_rand_int_range(rng, 2, 11);
      if (m->kind == 7)
        m->kind = 2;
      m->l = prev_node;
      if (m->kind == 5 || m->kind == 6)
        m->v = g_rand_int_range(rng, 1, 5);
      else
        m->r = gen(rng, 1);
      GString *mt = g_string_new(NULL);
      node_print(mt, m);
      sc_dim md;
      g_autoptr(GError) merr = NULL;
      if (sc_dim_parse(st, mt->str, &md, &merr)) {
        node_free(n);
        n = m;
        d = md;
      } else {
        m->l = NULL;
        node_free(m);
      }
      g_string_free(mt, TRUE);
    }
    /* decisions between this and the previous expression must hold */
    if (prev_node) {
      sc_truth le = sc_dim_le(st, prev, d), lt = sc_dim_lt(st, prev, d), eq = sc_dim_eq(st, prev, d);
      decided += (le != SC_UNKNOWN) + (lt != SC_UNKNOWN) + (eq != SC_UNKNOWN);
      for (int i = 0; i < N_SAMPLES; i++) {
        int64_t x, y;
        if (!node_eval(prev_node, vals[i], &x) || !node_eval(n, vals[i], &y))
          continue;
        if ((le == SC_YES && !(x <= y)) || (le == SC_NO && x <= y) ||
            (lt == SC_YES && !(x < y)) || (lt == SC_NO && x < y) ||
            (eq == SC_YES && x != y) || (eq == SC_NO && x == y)) {
          g_autofree char *sp = sc_dim_to_string(st, prev);
          g_error("wrong decision le=%d lt=%d eq=%d for '%s' vs '%s' at sample %d (%" G_GINT64_FORMAT
                  " vs %" G_GINT64_FORMAT ")", le, lt, eq, sp, printed, i, x, y);
        }
      }
    }
    if (n->l != prev_node)
      node_free(prev_node);
    else
      n->l = node_copy(prev_node), node_free(prev_node);
    prev_node = n;
    prev = d;
    g_string_free(text, TRUE);
  }
  node_free(prev_node);
  g_rand_free(rng);
  g_test_message("seed %u: %u decided comparisons", seed, decided);
  g_assert_cmpuint(decided, >, 0);
}

/* SC_SYM_FUZZ_SEEDS=n runs n seeds (default 6) */
static guint32 fuzz_seeds(void) {
  const char *env = g_getenv("SC_SYM_FUZZ_SEEDS");
  guint64 n = env ? g_ascii_strtoull(env, NULL, 10) : 6;
  return n > 0 && n < 1000000 ? (guint32)n : 6;
}

static void test_fuzz_plain(void) {
  for (guint32 seed = 1; seed <= fuzz_seeds(); seed++)
    run_fuzz(0, seed);
}

static void test_fuzz_assumptions(void) {
  for (guint32 seed = 1; seed <= fuzz_seeds(); seed++)
    run_fuzz(1, 1000000 + seed);
}

static void test_fuzz_substitution(void) {
  for (guint32 seed = 1; seed <= fuzz_seeds(); seed++)
    run_fuzz(2, 2000000 + seed);
}

/* ---- decisions against brute force ------------------------------------ *
 *
 * Random sets of one to three assumptions over two or three of the
 * symbols, then random comparisons; every symbol used is enumerated over a
 * small box (S, T, B in [1, 9], H in [0, 9], N in [-5, 9]).  A point is a
 * solution when every side of every assumption is defined there (no
 * division by zero, no overflow) and the relations hold.  Whatever the
 * symtab decides must hold at every solution in the box: a set it refuses
 * as false or contradictory has none, and a YES or NO of le, lt or eq holds
 * at each one (where both operands are defined).  Half of the assumptions
 * are made true at a random point of the box, so that most sets have
 * solutions; the others are random relations.  le(a, b) and lt(b, a) are
 * never both YES, solutions or not (sym-decide.c, "contradictions"). */

#define BF_HI 9
#define BF_MAX_ASSUME 3
#define BF_MAX_POINTS ((BF_HI + 1) * (BF_HI + 1) * (BF_HI + 6)) /* S*H*N: 10*10*15 */

typedef struct {
  node *a, *b;
  int op; /* 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >= */
} bf_rel;

static const char *const bf_ops[] = {"==", "!=", "<", "<=", ">", ">="};

static gboolean bf_holds(int op, int64_t x, int64_t y) {
  switch (op) {
  case 0: return x == y;
  case 1: return x != y;
  case 2: return x < y;
  case 3: return x <= y;
  case 4: return x > y;
  default: return x >= y;
  }
}

/* The points of the box over the used symbols, unused ones at their
 * lowest value; returns how many (at most BF_MAX_POINTS). */
static guint bf_points(const int *syms, int n_syms, int64_t (*pts)[6]) {
  static const int64_t lo[6] = {1, 1, 1, 0, -5, 0};
  guint n = 0;
  int64_t v[6];
  memcpy(v, lo, sizeof v);
  for (;;) {
    memcpy(pts[n++], v, sizeof v);
    int i = 0;
    for (; i < n_syms; i++) {
      int s = syms[i];
      if (v[s] < BF_HI) {
        v[s]++;
        break;
      }
      v[s] = lo[s];
    }
    if (i == n_syms)
      return n;
  }
}

static gboolean bf_solution(const bf_rel *rels, guint n_rels, const int64_t *v) {
  for (guint i = 0; i < n_rels; i++) {
    int64_t x, y;
    if (!node_eval(rels[i].a, v, &x) || !node_eval(rels[i].b, v, &y) ||
        !bf_holds(rels[i].op, x, y))
      return FALSE;
  }
  return TRUE;
}

static char *bf_text(const bf_rel *r) {
  GString *g = g_string_new(NULL);
  node_print(g, r->a);
  g_string_append_printf(g, " %s ", bf_ops[r->op]);
  node_print(g, r->b);
  return g_string_free(g, FALSE);
}

typedef struct {
  guint sets, refused, with_solutions, decided, checked;
} bf_stats;

/* Queries on a symtab that took every assumption; SOL: its solutions. */
static void bf_queries(GRand *rng, sc_symtab *st, const int *syms, int n_syms,
                       int64_t (*sol)[6], guint n_sol, const char *set_text, bf_stats *stats) {
  for (int q = 0; q < 24; q++) {
    node *na = gen_over(rng, g_rand_int_range(rng, 0, 4), syms, n_syms);
    node *nb = gen_over(rng, g_rand_int_range(rng, 0, 4), syms, n_syms);
    GString *ta = g_string_new(NULL), *tb = g_string_new(NULL);
    node_print(ta, na);
    node_print(tb, nb);
    sc_dim a, b;
    g_autoptr(GError) ea = NULL;
    g_autoptr(GError) eb = NULL;
    if (sc_dim_parse(st, ta->str, &a, &ea) && sc_dim_parse(st, tb->str, &b, &eb)) {
      sc_truth le = sc_dim_le(st, a, b), lt = sc_dim_lt(st, a, b), eq = sc_dim_eq(st, a, b);
      sc_truth rle = sc_dim_le(st, b, a), rlt = sc_dim_lt(st, b, a);
      if ((le == SC_YES && rlt == SC_YES) || (rle == SC_YES && lt == SC_YES))
        g_error("under %s: %s vs %s: le %d, lt %d, reversed le %d, lt %d", set_text, ta->str,
                tb->str, le, lt, rle, rlt);
      stats->decided += (le != SC_UNKNOWN) + (lt != SC_UNKNOWN) + (eq != SC_UNKNOWN);
      for (guint i = 0; i < n_sol; i++) {
        int64_t x, y;
        if (!node_eval(na, sol[i], &x) || !node_eval(nb, sol[i], &y))
          continue;
        stats->checked++;
        if ((le != SC_UNKNOWN && (le == SC_YES) != (x <= y)) ||
            (lt != SC_UNKNOWN && (lt == SC_YES) != (x < y)) ||
            (eq != SC_UNKNOWN && (eq == SC_YES) != (x == y)))
          g_error("under %s: %s vs %s decided le %d, lt %d, eq %d; at S=%" G_GINT64_FORMAT
                  " T=%" G_GINT64_FORMAT " B=%" G_GINT64_FORMAT " H=%" G_GINT64_FORMAT
                  " N=%" G_GINT64_FORMAT " they are %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
                  set_text, ta->str, tb->str, le, lt, eq, sol[i][0], sol[i][1], sol[i][2],
                  sol[i][3], sol[i][4], x, y);
      }
    }
    g_string_free(ta, TRUE);
    g_string_free(tb, TRUE);
    node_free(na);
    node_free(nb);
  }
}

static void bf_set(guint32 seed, int64_t (*pts)[6], int64_t (*sol)[6], bf_stats *stats) {
  static const int subsets[][3] = {{0, 1, -1}, {0, 4, -1}, {1, 3, -1}, {0, 1, 4}, {0, 3, 4}};
  GRand *rng = g_rand_new_with_seed(seed);
  const int *syms = subsets[g_rand_int_range(rng, 0, G_N_ELEMENTS(subsets))];
  int n_syms = syms[2] < 0 ? 2 : 3;
  guint n_pts = bf_points(syms, n_syms, pts);
  g_autoptr(sc_symtab) st = new_st();
  bf_rel rels[BF_MAX_ASSUME];
  guint n_rels = 0, want = (guint)g_rand_int_range(rng, 1, BF_MAX_ASSUME + 1);
  GString *set_text = g_string_new(NULL);
  gboolean refused = FALSE, skipped = FALSE;
  while (n_rels < want && !refused && !skipped) {
    bf_rel *r = &rels[n_rels];
    r->a = gen_over(rng, g_rand_int_range(rng, 0, 4), syms, n_syms);
    r->b = gen_over(rng, g_rand_int_range(rng, 0, 3), syms, n_syms);
    r->op = g_rand_int_range(rng, 0, 6);
    const int64_t *w = pts[g_rand_int_range(rng, 0, (gint32)n_pts)];
    int64_t x, y;
    if (g_rand_boolean(rng) && node_eval(r->a, w, &x) && node_eval(r->b, w, &y))
      while (!bf_holds(r->op, x, y))
        r->op = g_rand_int_range(rng, 0, 6);
    n_rels++;
    g_autofree char *text = bf_text(r);
    g_string_append_printf(set_text, "%s%s", n_rels > 1 ? " && " : "", text);
    g_autoptr(GError) error = NULL;
    if (!sc_symtab_assume(st, text, &error)) {
      refused = strstr(error->message, "contradicts") || strstr(error->message, "is false");
      skipped = !refused; /* a divisor that is 0, an overflow */
    }
  }
  guint n_sol = 0;
  for (guint i = 0; i < n_pts; i++)
    if (bf_solution(rels, n_rels, pts[i]))
      memcpy(sol[n_sol++], pts[i], sizeof pts[i]);
  stats->sets++;
  if (refused) {
    stats->refused++;
    if (n_sol > 0)
      g_error("seed %u: '%s' refused, but S=%" G_GINT64_FORMAT " T=%" G_GINT64_FORMAT
              " B=%" G_GINT64_FORMAT " H=%" G_GINT64_FORMAT " N=%" G_GINT64_FORMAT " solves it",
              seed, set_text->str, sol[0][0], sol[0][1], sol[0][2], sol[0][3], sol[0][4]);
  } else if (!skipped) {
    stats->with_solutions += n_sol > 0;
    bf_queries(rng, st, syms, n_syms, sol, n_sol, set_text->str, stats);
  }
  for (guint i = 0; i < n_rels; i++) {
    node_free(rels[i].a);
    node_free(rels[i].b);
  }
  g_string_free(set_text, TRUE);
  g_rand_free(rng);
}

/* SC_SYM_FUZZ_SEEDS=n runs 100*n sets (default 600) */
static void test_brute_force(void) {
  int64_t(*pts)[6] = g_malloc(sizeof(int64_t[6]) * BF_MAX_POINTS);
  int64_t(*sol)[6] = g_malloc(sizeof(int64_t[6]) * BF_MAX_POINTS);
  bf_stats stats = {0};
  guint32 n = 100 * fuzz_seeds();
  for (guint32 seed = 1; seed <= n; seed++)
    bf_set(3000000 + seed, pts, sol, &stats);
  g_test_message("%u sets: %u refused, %u with solutions in the box; %u decisions, %u checked "
                 "at solutions",
                 stats.sets, stats.refused, stats.with_solutions, stats.decided, stats.checked);
  g_assert_cmpuint(stats.with_solutions, >, stats.sets / 4);
  g_assert_cmpuint(stats.checked, >, 0);
  g_free(pts);
  g_free(sol);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sym/fuzz/plain", test_fuzz_plain);
  g_test_add_func("/sym/fuzz/assumptions", test_fuzz_assumptions);
  g_test_add_func("/sym/fuzz/substitution", test_fuzz_substitution);
  g_test_add_func("/sym/fuzz/brute-force", test_brute_force);
  return g_test_run();
}
