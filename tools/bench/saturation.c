/* saturation.c — the equality-saturation benchmark of
 * shared/bench/saturation-workload.md, plus a tensor workload.
 *
 * arith: binary add and mul over variables x0..x(2k-1); rules a+b => b+a,
 *   a*b => b*a, a+(b+c) => (a+b)+c, a*(b*c) => (a*b)*c,
 *   a*(b+c) => a*b + a*c; start term ((x0*x1 + x2*x3) + ...) + x(2k-2)*x(2k-1);
 *   limits 10 iterations, 200,000 e-nodes, 30 s.  When saturated the
 *   e-graph must hold exactly 3^k - 2^(k+1) + 1 + 4k e-nodes (checked; the
 *   program exits 1 on a mismatch).
 * tensor: A = cat(A0..A(n-1); dim 0) of (4 x 8) blocks, B = cat(B0..B(n-1);
 *   dim 1) of (8 x 4) blocks, terms mm(A, B), mm(B, A) and the row slices
 *   S_i = slice(mm(A, B); rows [4i, 4i+4)); rules: mm over a row-cat,
 *   mm over a column-cat, the block rule mm(cat(a,b;1), cat(c,d;0)) =>
 *   add(mm(a,c), mm(b,d)) (guarded by matching inner sizes), cat
 *   associativity both ways, slice into the left / right part of a cat
 *   (the right one with a computed, shifted slice attribute), a slice
 *   covering its whole input, and add commutativity.  A shape analysis
 *   (rows, cols) runs on every class; a conflict would abort the run.  The
 *   check: every S_i is proven equal to mm(A_i, B).
 *
 * Each row: median seconds of --runs runs (e-graph creation and start term
 * insertion included), and the iterations, live e-nodes and e-classes of
 * the last run (runs are deterministic). */
#include "shardcheck/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_ADD = 1, OP_MUL, OP_VAR, OP_CAT, OP_SLICE, OP_MM };

static sc_pat_id pbin(sc_pattern *p, uint32_t op, sc_attr_pat a, sc_pat_id x,
                      sc_pat_id y) {
  sc_pat_id k[2] = {x, y};
  return sc_pattern_node(p, op, a, k, 2);
}

static sc_rewrite *mk_rule(const char *name, sc_pattern *lhs, sc_pattern *rhs,
                           sc_guard_fn guard, void *user) {
  GError *err = NULL;
  sc_rewrite *rw = sc_rewrite_new(name, lhs, NULL, 0, rhs, &err);
  if (!rw) {
    fprintf(stderr, "saturation: %s\n", err->message);
    exit(2);
  }
  if (guard)
    sc_rewrite_set_guard(rw, guard, user);
  sc_pattern_free(lhs);
  sc_pattern_free(rhs);
  return rw;
}

#define V(p, n) sc_pattern_var(p, n)
#define E0 sc_attr_exact(0)

/* ---- arith ------------------------------------------------------------- */

static uint32_t arith_rules(sc_rewrite **r) {
  sc_pattern *l, *h;
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_ADD, E0, V(l, "a"), V(l, "b"));
  pbin(h, OP_ADD, E0, V(h, "b"), V(h, "a"));
  r[0] = mk_rule("comm-add", l, h, NULL, NULL);
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_MUL, E0, V(l, "a"), V(l, "b"));
  pbin(h, OP_MUL, E0, V(h, "b"), V(h, "a"));
  r[1] = mk_rule("comm-mul", l, h, NULL, NULL);
  for (int i = 0; i < 2; i++) {
    uint32_t op = i == 0 ? OP_ADD : OP_MUL;
    l = sc_pattern_new(), h = sc_pattern_new();
    pbin(l, op, E0, V(l, "a"), pbin(l, op, E0, V(l, "b"), V(l, "c")));
    pbin(h, op, E0, pbin(h, op, E0, V(h, "a"), V(h, "b")), V(h, "c"));
    r[2 + i] = mk_rule(i == 0 ? "assoc-add" : "assoc-mul", l, h, NULL, NULL);
  }
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_MUL, E0, V(l, "a"), pbin(l, OP_ADD, E0, V(l, "b"), V(l, "c")));
  sc_pat_id a = V(h, "a");
  pbin(h, OP_ADD, E0, pbin(h, OP_MUL, E0, a, V(h, "b")),
       pbin(h, OP_MUL, E0, a, V(h, "c")));
  r[4] = mk_rule("distrib", l, h, NULL, NULL);
  return 5;
}

static void arith_term(sc_egraph *eg, uint32_t k) {
  sc_id sum = SC_ID_NONE;
  for (uint32_t i = 0; i < k; i++) {
    sc_id x[2] = {sc_egraph_add(eg, OP_VAR, 2 * i, NULL, 0),
                  sc_egraph_add(eg, OP_VAR, 2 * i + 1, NULL, 0)};
    sc_id prod = sc_egraph_add(eg, OP_MUL, 0, x, 2);
    if (sum == SC_ID_NONE) {
      sum = prod;
    } else {
      sc_id s[2] = {sum, prod};
      sum = sc_egraph_add(eg, OP_ADD, 0, s, 2);
    }
  }
}

static uint64_t arith_expected(uint32_t k) {
  uint64_t p3 = 1;
  for (uint32_t i = 0; i < k; i++)
    p3 *= 3;
  return p3 - ((uint64_t)1 << (k + 1)) + 1 + 4 * (uint64_t)k;
}

/* ---- tensor ------------------------------------------------------------ */

typedef struct {
  int64_t rows, cols; /* -1: ill-shaped */
} shape;

typedef struct {
  GArray *leaf_shapes;    /* shape, by VAR attr */
  GArray *slices;         /* int64_t[3] = dim, start, end, by SLICE attr */
  GHashTable *slice_ids;  /* "d:s:e" -> id + 1 */
  const sc_query *q_left, *q_right;
  uint64_t conflicts;
} tensor_ctx;

static uint32_t slice_attr(tensor_ctx *t, int64_t d, int64_t s, int64_t e) {
  char key[64];
  g_snprintf(key, sizeof key, "%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT
             ":%" G_GINT64_FORMAT, d, s, e);
  gpointer v = g_hash_table_lookup(t->slice_ids, key);
  if (v)
    return GPOINTER_TO_UINT(v) - 1;
  int64_t tup[3] = {d, s, e};
  g_array_append_vals(t->slices, tup, 3);
  uint32_t id = t->slices->len / 3 - 1;
  g_hash_table_insert(t->slice_ids, g_strdup(key), GUINT_TO_POINTER(id + 1));
  return id;
}

static const int64_t *slice_tuple(const tensor_ctx *t, uint32_t id) {
  return &g_array_index(t->slices, int64_t, 3 * (size_t)id);
}

static void t_make(const sc_egraph *eg, uint32_t op, uint32_t attr,
                   const sc_id *children, uint32_t n,
                   const void *const *cd, void *out, void *user) {
  tensor_ctx *t = user;
  shape *s = out;
  const shape *a = n > 0 ? cd[0] : NULL, *b = n > 1 ? cd[1] : NULL;
  s->rows = s->cols = -1;
  switch (op) {
  case OP_VAR:
    *s = g_array_index(t->leaf_shapes, shape, attr);
    break;
  case OP_CAT:
    if (attr == 0 && a->cols == b->cols) {
      s->rows = a->rows + b->rows;
      s->cols = a->cols;
    } else if (attr == 1 && a->rows == b->rows) {
      s->rows = a->rows;
      s->cols = a->cols + b->cols;
    }
    break;
  case OP_MM:
    if (a->cols == b->rows) {
      s->rows = a->rows;
      s->cols = b->cols;
    }
    break;
  case OP_ADD:
    if (a->rows == b->rows && a->cols == b->cols)
      *s = *a;
    break;
  case OP_SLICE: {
    const int64_t *tup = slice_tuple(t, attr);
    *s = *a;
    if (tup[0] == 0)
      s->rows = tup[2] - tup[1];
    else
      s->cols = tup[2] - tup[1];
    break;
  }
  default:
    break;
  }
}

static sc_merge_result t_merge(void *a, const void *b, void *user) {
  const shape *x = a, *y = b;
  return (x->rows == y->rows && x->cols == y->cols) ? SC_MERGE_NONE
                                                    : SC_MERGE_CONFLICT;
}

static void t_conflict(const sc_egraph *eg, sc_id a, sc_id b, uint32_t just,
                       void *user) {
  ((tensor_ctx *)user)->conflicts++;
  if (g_getenv("SC_BENCH_TRACE")) {
    const shape *x = sc_egraph_class_data(eg, a), *y = sc_egraph_class_data(eg, b);
    fprintf(stderr, "conflict rule %u: %u (%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ") vs %u (%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ")\n", just, a, x->rows, x->cols, b, y->rows, y->cols);
  }
}

static int64_t dim_size(const sc_egraph *eg, sc_id c, int64_t d) {
  const shape *s = sc_egraph_class_data(eg, c);
  return d == 0 ? s->rows : s->cols;
}

static gboolean g_inner_match(const sc_egraph *eg, sc_id root,
                              const uint32_t *subst, void *user) {
  const sc_query *q = user;
  return dim_size(eg, subst[sc_query_var_index(q, "a")], 1) ==
         dim_size(eg, subst[sc_query_var_index(q, "c")], 0);
}

/* slice(cat(?a, ?b; ?d); ?s): the slice lies in ?a */
static gboolean g_slice_left(const sc_egraph *eg, sc_id root,
                             const uint32_t *subst, void *user) {
  tensor_ctx *t = user;
  const sc_query *q = t->q_left;
  const int64_t *s = slice_tuple(t, subst[sc_query_var_index(q, "s")]);
  int64_t d = subst[sc_query_var_index(q, "d")];
  return s[0] == d &&
         s[2] <= dim_size(eg, subst[sc_query_var_index(q, "a")], d);
}

static gboolean g_slice_right(const sc_egraph *eg, sc_id root,
                              const uint32_t *subst, void *user) {
  tensor_ctx *t = user;
  const sc_query *q = t->q_right;
  const int64_t *s = slice_tuple(t, subst[sc_query_var_index(q, "s")]);
  int64_t d = subst[sc_query_var_index(q, "d")];
  return s[0] == d &&
         s[1] >= dim_size(eg, subst[sc_query_var_index(q, "a")], d);
}

static uint32_t shifted_slice(const sc_egraph *eg, const uint32_t *subst,
                              void *user) {
  tensor_ctx *t = user;
  const sc_query *q = t->q_right;
  const int64_t *s = slice_tuple(t, subst[sc_query_var_index(q, "s")]);
  int64_t off = dim_size(eg, subst[sc_query_var_index(q, "a")], s[0]);
  int64_t d = s[0], st = s[1] - off, en = s[2] - off;
  return slice_attr(t, d, st, en);
}

typedef struct {
  tensor_ctx *t;
  uint32_t svar, xvar;
} full_ctx;

static gboolean g_slice_full(const sc_egraph *eg, sc_id root,
                             const uint32_t *subst, void *user) {
  full_ctx *f = user;
  const int64_t *s = slice_tuple(f->t, subst[f->svar]);
  return s[1] == 0 && s[2] == dim_size(eg, subst[f->xvar], s[0]);
}

static full_ctx full_user;

static uint32_t tensor_rules(sc_rewrite **r, tensor_ctx *t) {
  sc_pattern *l, *h;
  uint32_t n = 0;
  /* mm(cat(a, b; 0), c) => cat(mm(a, c), mm(b, c); 0) */
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_MM, E0, pbin(l, OP_CAT, sc_attr_exact(0), V(l, "a"), V(l, "b")),
       V(l, "c"));
  sc_pat_id c = V(h, "c");
  pbin(h, OP_CAT, sc_attr_exact(0), pbin(h, OP_MM, E0, V(h, "a"), c),
       pbin(h, OP_MM, E0, V(h, "b"), c));
  r[n++] = mk_rule("mm-cat-rows", l, h, NULL, NULL);
  /* mm(a, cat(b, c; 1)) => cat(mm(a, b), mm(a, c); 1) */
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_MM, E0, V(l, "a"),
       pbin(l, OP_CAT, sc_attr_exact(1), V(l, "b"), V(l, "c")));
  sc_pat_id a = V(h, "a");
  pbin(h, OP_CAT, sc_attr_exact(1), pbin(h, OP_MM, E0, a, V(h, "b")),
       pbin(h, OP_MM, E0, a, V(h, "c")));
  r[n++] = mk_rule("mm-cat-cols", l, h, NULL, NULL);
  /* mm(cat(a, b; 1), cat(c, d; 0)) => add(mm(a, c), mm(b, d)) */
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_MM, E0, pbin(l, OP_CAT, sc_attr_exact(1), V(l, "a"), V(l, "b")),
       pbin(l, OP_CAT, sc_attr_exact(0), V(l, "c"), V(l, "d")));
  pbin(h, OP_ADD, E0, pbin(h, OP_MM, E0, V(h, "a"), V(h, "c")),
       pbin(h, OP_MM, E0, V(h, "b"), V(h, "d")));
  r[n] = mk_rule("mm-block", l, h, NULL, NULL);
  sc_rewrite_set_guard(r[n], g_inner_match, (void *)sc_rewrite_query(r[n]));
  n++;
  /* cat(cat(a, b; d), c; d) <=> cat(a, cat(b, c; d); d) */
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_CAT, sc_attr_var("d"),
       pbin(l, OP_CAT, sc_attr_var("d"), V(l, "a"), V(l, "b")), V(l, "c"));
  pbin(h, OP_CAT, sc_attr_var("d"), V(h, "a"),
       pbin(h, OP_CAT, sc_attr_var("d"), V(h, "b"), V(h, "c")));
  r[n++] = mk_rule("cat-assoc-r", l, h, NULL, NULL);
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_CAT, sc_attr_var("d"), V(l, "a"),
       pbin(l, OP_CAT, sc_attr_var("d"), V(l, "b"), V(l, "c")));
  pbin(h, OP_CAT, sc_attr_var("d"),
       pbin(h, OP_CAT, sc_attr_var("d"), V(h, "a"), V(h, "b")), V(h, "c"));
  r[n++] = mk_rule("cat-assoc-l", l, h, NULL, NULL);
  /* slice(cat(a, b; d); s) => slice(a; s) when s lies in a */
  l = sc_pattern_new(), h = sc_pattern_new();
  sc_pat_id cat = pbin(l, OP_CAT, sc_attr_var("d"), V(l, "a"), V(l, "b"));
  sc_pattern_node(l, OP_SLICE, sc_attr_var("s"), &cat, 1);
  sc_pat_id ha = V(h, "a");
  sc_pattern_node(h, OP_SLICE, sc_attr_var("s"), &ha, 1);
  r[n] = mk_rule("slice-cat-left", l, h, g_slice_left, t);
  t->q_left = sc_rewrite_query(r[n]);
  n++;
  /* slice(cat(a, b; d); s) => slice(b; s - size(a, d)) when s lies in b */
  l = sc_pattern_new(), h = sc_pattern_new();
  cat = pbin(l, OP_CAT, sc_attr_var("d"), V(l, "a"), V(l, "b"));
  sc_pattern_node(l, OP_SLICE, sc_attr_var("s"), &cat, 1);
  sc_pat_id hb = V(h, "b");
  sc_pattern_node(h, OP_SLICE, sc_attr_compute(shifted_slice, t), &hb, 1);
  r[n] = mk_rule("slice-cat-right", l, h, g_slice_right, t);
  t->q_right = sc_rewrite_query(r[n]);
  n++;
  /* slice(x; s) => x when s covers x */
  l = sc_pattern_new(), h = sc_pattern_new();
  sc_pat_id x = V(l, "x");
  sc_pattern_node(l, OP_SLICE, sc_attr_var("s"), &x, 1);
  V(h, "x");
  full_user.t = t;
  r[n] = mk_rule("slice-full", l, h, g_slice_full, &full_user);
  full_user.svar = sc_query_var_index(sc_rewrite_query(r[n]), "s");
  full_user.xvar = sc_query_var_index(sc_rewrite_query(r[n]), "x");
  n++;
  l = sc_pattern_new(), h = sc_pattern_new();
  pbin(l, OP_ADD, E0, V(l, "a"), V(l, "b"));
  pbin(h, OP_ADD, E0, V(h, "b"), V(h, "a"));
  r[n++] = mk_rule("comm-add", l, h, NULL, NULL);
  return n;
}

typedef struct {
  sc_id *slices, *a_parts;
  sc_id b;
} tensor_roots;

static void tensor_term(sc_egraph *eg, tensor_ctx *t, uint32_t n,
                        tensor_roots *roots) {
  sc_id A = SC_ID_NONE, B = SC_ID_NONE;
  g_array_set_size(t->leaf_shapes, 0);
  for (uint32_t i = 0; i < n; i++) {
    shape sa = {4, 8}, sb = {8, 4};
    g_array_append_val(t->leaf_shapes, sa);
    sc_id ai = sc_egraph_add(eg, OP_VAR, t->leaf_shapes->len - 1, NULL, 0);
    g_array_append_val(t->leaf_shapes, sb);
    sc_id bi = sc_egraph_add(eg, OP_VAR, t->leaf_shapes->len - 1, NULL, 0);
    roots->a_parts[i] = ai;
    if (i == 0) {
      A = ai;
      B = bi;
    } else {
      sc_id ka[2] = {A, ai}, kb[2] = {B, bi};
      A = sc_egraph_add(eg, OP_CAT, 0, ka, 2);
      B = sc_egraph_add(eg, OP_CAT, 1, kb, 2);
    }
  }
  sc_id ab[2] = {A, B}, ba[2] = {B, A};
  sc_id T = sc_egraph_add(eg, OP_MM, 0, ab, 2);
  sc_egraph_add(eg, OP_MM, 0, ba, 2);
  for (uint32_t i = 0; i < n; i++)
    roots->slices[i] = sc_egraph_add(
        eg, OP_SLICE, slice_attr(t, 0, 4 * (int64_t)i, 4 * (int64_t)i + 4), &T,
        1);
  roots->b = B;
}

static uint32_t tensor_proven(sc_egraph *eg, const tensor_roots *roots,
                              uint32_t n) {
  uint32_t ok = 0;
  for (uint32_t i = 0; i < n; i++) {
    sc_id k[2] = {roots->a_parts[i], roots->b};
    sc_id m = sc_egraph_lookup(eg, OP_MM, 0, k, 2);
    ok += m != SC_ID_NONE &&
          sc_egraph_find(eg, m) == sc_egraph_find(eg, roots->slices[i]);
  }
  return ok;
}

/* ---- driver ------------------------------------------------------------ */

typedef struct {
  uint32_t iterations, nodes, classes;
  sc_stop_reason stop;
  double seconds;
  uint32_t proven;
  uint64_t conflicts;
} result;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static result run_once(gboolean tensor, uint32_t k, sc_scheduler_kind sched,
                       sc_rewrite **rules, uint32_t n_rules, tensor_ctx *t) {
  result res = {0};
  sc_runner_limits lim;
  sc_runner_limits_init(&lim);
  lim.iter_limit = 10;
  lim.node_limit = 200000;
  lim.time_limit = 30;
  lim.scheduler = sched;
  static const sc_analysis shape_an = {sizeof(shape), t_make, t_merge, NULL};
  tensor_roots roots = {g_new(sc_id, k), g_new(sc_id, k), 0};
  gint64 t0 = g_get_monotonic_time();
  sc_egraph *eg = sc_egraph_new(tensor ? &shape_an : NULL, t);
  if (tensor) {
    sc_egraph_set_conflict_handler(eg, t_conflict, t);
    t->conflicts = 0;
    tensor_term(eg, t, k, &roots);
  } else {
    arith_term(eg, k);
  }
  sc_runner *r = sc_runner_new(eg, &lim);
  res.stop = sc_runner_run(r, rules, n_rules);
  gint64 t1 = g_get_monotonic_time();
  res.seconds = (double)(t1 - t0) / 1e6;
  res.iterations = sc_runner_n_iterations(r);
  if (g_getenv("SC_BENCH_TRACE"))
    for (uint32_t i = 0; i < res.iterations; i++) {
      const sc_iteration *it = sc_runner_iteration(r, i);
      fprintf(stderr, "  iter %u: matches %" G_GUINT64_FORMAT " applied %" G_GUINT64_FORMAT " nodes %u classes %u search %.4f apply %.4f rebuild %.4f\n", i, it->matches, it->applied, it->nodes, it->classes, it->search_s, it->apply_s, it->rebuild_s);
    }
  res.nodes = sc_egraph_n_nodes(eg);
  res.classes = sc_egraph_n_classes(eg);
  if (tensor) {
    res.proven = tensor_proven(eg, &roots, k);
    res.conflicts = t->conflicts;
  }
  sc_runner_free(r);
  sc_egraph_free(eg);
  g_free(roots.slices);
  g_free(roots.a_parts);
  return res;
}

static int bench(gboolean tensor, sc_scheduler_kind sched, uint32_t kmin,
                 uint32_t kmax, uint32_t runs, tensor_ctx *t) {
  sc_rewrite *rules[16];
  uint32_t n_rules = tensor ? tensor_rules(rules, t) : arith_rules(rules);
  int status = 0;
  printf("\n%s workload, %s scheduler (median of %u runs)\n\n",
         tensor ? "tensor" : "arith",
         sched == SC_SCHED_SIMPLE ? "simple" : "backoff", runs);
  printf("| %2s | iters | e-nodes | e-classes | seconds | e-nodes/s | stop "
         "| check |\n", tensor ? "n" : "k");
  printf("|---:|---:|---:|---:|---:|---:|---|---|\n");
  for (uint32_t k = kmin; k <= kmax; k++) {
    double *secs = g_new(double, runs);
    result res = {0};
    for (uint32_t i = 0; i < runs; i++) {
      res = run_once(tensor, k, sched, rules, n_rules, t);
      secs[i] = res.seconds;
    }
    qsort(secs, runs, sizeof(double), cmp_double);
    double med = runs % 2 ? secs[runs / 2]
                          : (secs[runs / 2 - 1] + secs[runs / 2]) / 2;
    g_free(secs);
    char check[96];
    if (tensor) {
      g_snprintf(check, sizeof check, "%u/%u slices proven%s", res.proven, k,
                 res.conflicts ? ", SHAPE CONFLICT" : "");
      if (res.conflicts || (res.stop == SC_STOP_SATURATED && res.proven != k))
        status = 1;
    } else if (res.stop == SC_STOP_SATURATED) {
      uint64_t want = arith_expected(k);
      gboolean ok = want == res.nodes;
      g_snprintf(check, sizeof check, "%s (3^k-2^(k+1)+1+4k = %" G_GUINT64_FORMAT
                 ")", ok ? "ok" : "MISMATCH", want);
      if (!ok)
        status = 1;
    } else {
      g_snprintf(check, sizeof check, "-");
    }
    printf("| %2u | %u | %u | %u | %.4f | %.0f | %s | %s |\n", k,
           res.iterations, res.nodes, res.classes, med,
           med > 0 ? res.nodes / med : 0.0, sc_stop_reason_name(res.stop),
           check);
    fflush(stdout);
  }
  for (uint32_t i = 0; i < n_rules; i++)
    sc_rewrite_free(rules[i]);
  return status;
}

int main(int argc, char **argv) {
  gint kmin = 2, kmax = 12, runs = 5;
  g_autofree char *sched = NULL, *workload = NULL;
  GOptionEntry entries[] = {
      {"k-min", 0, 0, G_OPTION_ARG_INT, &kmin, "smallest k (2)", "K"},
      {"k-max", 0, 0, G_OPTION_ARG_INT, &kmax, "largest k (12)", "K"},
      {"runs", 0, 0, G_OPTION_ARG_INT, &runs, "runs per row, median (5)", "N"},
      {"scheduler", 0, 0, G_OPTION_ARG_STRING, &sched,
       "simple, backoff or both (both)", "S"},
      {"workload", 0, 0, G_OPTION_ARG_STRING, &workload,
       "arith, tensor or all (all)", "W"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("- equality-saturation benchmark");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "saturation: %s\n", err->message);
    return 2;
  }
  if (kmin < 1 || kmax > 20 || kmin > kmax || runs < 1 || runs > 100) {
    fprintf(stderr, "saturation: need 1 <= k-min <= k-max <= 20 and "
                    "1 <= runs <= 100\n");
    return 2;
  }
  const char *s = sched ? sched : "both", *w = workload ? workload : "all";
  gboolean do_simple = !strcmp(s, "simple") || !strcmp(s, "both");
  gboolean do_backoff = !strcmp(s, "backoff") || !strcmp(s, "both");
  gboolean do_arith = !strcmp(w, "arith") || !strcmp(w, "all");
  gboolean do_tensor = !strcmp(w, "tensor") || !strcmp(w, "all");
  if ((!do_simple && !do_backoff) || (!do_arith && !do_tensor)) {
    fprintf(stderr, "saturation: unknown --scheduler or --workload\n");
    return 2;
  }
  tensor_ctx t = {g_array_new(FALSE, FALSE, sizeof(shape)),
                  g_array_new(FALSE, FALSE, sizeof(int64_t)),
                  g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
                  NULL, NULL, 0};
  int status = 0;
  for (int wi = 0; wi < 2; wi++) {
    if ((wi == 0 && !do_arith) || (wi == 1 && !do_tensor))
      continue;
    if (do_simple)
      status |= bench(wi == 1, SC_SCHED_SIMPLE, (uint32_t)kmin,
                      (uint32_t)kmax, (uint32_t)runs, &t);
    if (do_backoff)
      status |= bench(wi == 1, SC_SCHED_BACKOFF, (uint32_t)kmin,
                      (uint32_t)kmax, (uint32_t)runs, &t);
  }
  g_array_unref(t.leaf_shapes);
  g_array_unref(t.slices);
  g_hash_table_unref(t.slice_ids);
  return status;
}
