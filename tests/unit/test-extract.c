/* test-extract.c — terms, extraction and enumeration: cheapest term under
 * AST size and under a cost function with infinities (clean-only), classes
 * with no finite term, the k smallest distinct terms of a class in exact
 * order (also through a cycle, with weights), clean-only enumeration with weights,
 * the size bound (no term, a finite set of terms beside a cycle with no
 * term, a productive cycle), and a term round trip through the e-graph. */
#include "shardcheck/extract.h"

#include <math.h>
#include <string.h>

enum { OP_X = 1, OP_Y, OP_Z, OP_ADD, OP_F, OP_DIRTY, OP_ZERO };

static const char *const names[] = {"?", "x", "y", "z", "add", "f", "dirty",
                                    "0"};

static void name_fn(GString *out, uint32_t op, uint32_t attr, void *user) {
  g_string_append(out, op < G_N_ELEMENTS(names) ? names[op] : "?");
}

static sc_id leaf(sc_egraph *eg, uint32_t op) {
  return sc_egraph_add(eg, op, 0, NULL, 0);
}
static sc_id un(sc_egraph *eg, uint32_t op, sc_id x) {
  return sc_egraph_add(eg, op, 0, &x, 1);
}
static sc_id bin(sc_egraph *eg, uint32_t op, sc_id x, sc_id y) {
  sc_id k[2] = {x, y};
  return sc_egraph_add(eg, op, 0, k, 2);
}

static char *str(const sc_term *t) {
  return sc_term_to_string(t, name_fn, NULL);
}

static void test_best(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X), zero = leaf(eg, OP_ZERO);
  sc_id x0 = bin(eg, OP_ADD, x, zero);
  sc_id fx0 = un(eg, OP_F, x0);
  sc_egraph_union(eg, x0, x, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  g_autoptr(sc_extractor) ex = sc_extractor_new(eg, NULL, NULL);
  g_assert_cmpfloat(sc_extractor_cost(ex, x0), ==, 1.0);
  g_assert_cmpfloat(sc_extractor_cost(ex, fx0), ==, 2.0);
  g_autoptr(sc_term) t = sc_extractor_term(ex, fx0);
  g_autofree char *s = str(t);
  g_assert_cmpstr(s, ==, "(f x)");
  g_assert_cmpuint(sc_term_tree_size(t), ==, 2);
  g_assert_cmpuint(sc_egraph_node_op(eg, sc_extractor_best_node(ex, x0)), ==,
                   OP_X);
}

/* dirty nodes cost infinity; others 1 + children */
static double clean_cost(const sc_egraph *eg, sc_id node, const double *cc,
                         uint32_t n, void *user) {
  if (sc_egraph_node_op(eg, node) == OP_DIRTY)
    return INFINITY;
  double s = 1;
  for (uint32_t i = 0; i < n; i++)
    s += cc[i];
  return s;
}

static void test_infinite(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X), y = leaf(eg, OP_Y);
  sc_id d = un(eg, OP_DIRTY, x);               /* only dirty */
  sc_id fd = un(eg, OP_F, d);                  /* depends on dirty only */
  sc_id d2 = un(eg, OP_DIRTY, y);              /* dirty, but equal to ... */
  sc_id big = bin(eg, OP_ADD, un(eg, OP_F, y), un(eg, OP_F, x)); /* size 5 */
  sc_egraph_union(eg, d2, big, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  g_autoptr(sc_extractor) ex = sc_extractor_new(eg, clean_cost, NULL);
  g_assert_true(isinf(sc_extractor_cost(ex, d)));
  g_assert_true(isinf(sc_extractor_cost(ex, fd)));
  g_assert_null(sc_extractor_term(ex, fd));
  g_assert_cmpuint(sc_extractor_best_node(ex, d), ==, SC_ID_NONE);
  g_assert_cmpfloat(sc_extractor_cost(ex, d2), ==, 5.0);
  g_autoptr(sc_term) t = sc_extractor_term(ex, d2);
  g_autofree char *s = str(t);
  g_assert_cmpstr(s, ==, "(add (f y) (f x))");
  /* with AST size the dirty one is smaller */
  g_autoptr(sc_extractor) ex2 = sc_extractor_new(eg, sc_cost_ast_size, NULL);
  g_autoptr(sc_term) t2 = sc_extractor_term(ex2, d2);
  g_autofree char *s2 = str(t2);
  g_assert_cmpstr(s2, ==, "(dirty y)");
}

static char *enum_str(const sc_egraph *eg, sc_id cls, uint32_t k,
                      uint32_t max_size, sc_weight_fn w, GArray *sizes) {
  g_autoptr(GPtrArray) ts = sc_egraph_enumerate(eg, cls, k, max_size, w, NULL,
                                                sizes);
  GString *all = g_string_new(NULL);
  for (guint i = 0; i < ts->len; i++) {
    g_autofree char *s = str(g_ptr_array_index(ts, i));
    g_string_append_printf(all, "%s%s", i ? " | " : "", s);
  }
  return g_string_free(all, FALSE);
}

static void test_enumerate_order(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X), y = leaf(eg, OP_Y), z = leaf(eg, OP_Z);
  sc_id xy = bin(eg, OP_ADD, x, y);
  sc_id fz = un(eg, OP_F, z);
  /* class R = { add(x,y), f(z) }, x = { x, add(y, z) } */
  sc_egraph_union(eg, xy, fz, SC_JUST_ASSERTED);
  sc_id yz = bin(eg, OP_ADD, y, z);
  sc_egraph_union(eg, x, yz, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autofree char *s = enum_str(eg, xy, 10, 20, NULL, sizes);
  /* size 2: f z; size 3: add x y; size 5: add (add y z) y */
  g_assert_cmpstr(s, ==, "(f z) | (add x y) | (add (add y z) y)");
  g_assert_cmpuint(sizes->len, ==, 3);
  g_assert_cmpuint(g_array_index(sizes, uint32_t, 0), ==, 2);
  g_assert_cmpuint(g_array_index(sizes, uint32_t, 1), ==, 3);
  g_assert_cmpuint(g_array_index(sizes, uint32_t, 2), ==, 5);
  g_autofree char *s2 = enum_str(eg, xy, 2, 20, NULL, NULL);
  g_assert_cmpstr(s2, ==, "(f z) | (add x y)");
  g_autofree char *s3 = enum_str(eg, xy, 10, 3, NULL, NULL);
  g_assert_cmpstr(s3, ==, "(f z) | (add x y)");
}

static void test_enumerate_cycle(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X);
  sc_id fx = un(eg, OP_F, x);
  sc_egraph_union(eg, x, fx, SC_JUST_ASSERTED); /* x = f(x) */
  sc_id y = leaf(eg, OP_Y);
  sc_id add = bin(eg, OP_ADD, x, y);
  sc_egraph_rebuild(eg);
  g_autofree char *s = enum_str(eg, x, 4, 50, NULL, NULL);
  g_assert_cmpstr(s, ==, "x | (f x) | (f (f x)) | (f (f (f x)))");
  g_autofree char *s2 = enum_str(eg, add, 3, 50, NULL, NULL);
  g_assert_cmpstr(s2, ==, "(add x y) | (add (f x) y) | (add (f (f x)) y)");
}

static uint32_t clean_weight(const sc_egraph *eg, sc_id node, void *user) {
  uint32_t op = sc_egraph_node_op(eg, node);
  return op == OP_DIRTY ? 0 : op == OP_F ? 3 : 1;
}

static void test_enumerate_clean(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X), y = leaf(eg, OP_Y);
  sc_id d = un(eg, OP_DIRTY, x);
  sc_id fy = un(eg, OP_F, y);
  sc_id xy = bin(eg, OP_ADD, x, y);
  sc_egraph_union(eg, d, fy, SC_JUST_ASSERTED);
  sc_egraph_union(eg, d, xy, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autofree char *s = enum_str(eg, d, 10, 10, clean_weight, sizes);
  /* add(x,y) weighs 3, f(y) weighs 4, dirty(x) is excluded */
  g_assert_cmpstr(s, ==, "(add x y) | (f y)");
  g_assert_cmpuint(g_array_index(sizes, uint32_t, 0), ==, 3);
  g_assert_cmpuint(g_array_index(sizes, uint32_t, 1), ==, 4);
  /* nothing clean at all */
  sc_id only = un(eg, OP_DIRTY, y);
  sc_egraph_rebuild(eg);
  g_autofree char *s2 = enum_str(eg, only, 10, 10, clean_weight, NULL);
  g_assert_cmpstr(s2, ==, "");
}

/* A node whose children's sizes are split many ways, through a cycle and
 * weights: each size's split tables are built as the sizes grow and read
 * again when the terms are built (extract.c keeps them per node). */
static void test_enumerate_weighted_cycle(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X);
  sc_id fx = un(eg, OP_F, x);
  sc_egraph_union(eg, x, fx, SC_JUST_ASSERTED); /* x = f(x), f weighs 3 */
  sc_id add = bin(eg, OP_ADD, x, x);
  sc_egraph_rebuild(eg);
  g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autofree char *s = enum_str(eg, add, 6, 50, clean_weight, sizes);
  g_assert_cmpstr(s, ==,
                  "(add x x) | (add x (f x)) | (add (f x) x) | (add x (f (f x))) | "
                  "(add (f x) (f x)) | (add (f (f x)) x)");
  static const uint32_t want[] = {3, 6, 6, 9, 9, 9};
  g_assert_cmpuint(sizes->len, ==, G_N_ELEMENTS(want));
  for (guint i = 0; i < sizes->len; i++)
    g_assert_cmpuint(g_array_index(sizes, uint32_t, i), ==, want[i]);
  /* the 7th term is the first of size 12: (add x (f (f (f x)))) */
  g_autofree char *s7 = enum_str(eg, add, 7, 50, clean_weight, NULL);
  g_assert_true(g_str_has_suffix(s7, " | (add x (f (f (f x))))"));
  /* capped below 12: six terms only */
  g_autofree char *s6 = enum_str(eg, add, 7, 11, clean_weight, NULL);
  g_assert_cmpstr(s6, ==, s);
}

/* extract.c counts sizes only while a larger term may exist: the answers
 * with max_size 4096 (the cap) are those of a max_size just large enough. */
static void test_enumerate_size_bound(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X), y = leaf(eg, OP_Y);
  /* C = { dirty, f(C) }: a cycle with no clean term */
  sc_id d = leaf(eg, OP_DIRTY);
  sc_id fd = un(eg, OP_F, d);
  sc_egraph_union(eg, d, fd, SC_JUST_ASSERTED);
  /* R = { add(x, y), add(C, x) }: one term, beside the cycle */
  sc_id r = bin(eg, OP_ADD, x, y);
  sc_id rc = bin(eg, OP_ADD, d, x);
  sc_egraph_union(eg, r, rc, SC_JUST_ASSERTED);
  /* E = { add(C, y) }: no term at all */
  sc_id e = bin(eg, OP_ADD, d, y);
  /* L = { z, f(L) }: a productive cycle, terms of every size 1 + 3i */
  sc_id z = leaf(eg, OP_Z);
  sc_id fz = un(eg, OP_F, z);
  sc_egraph_union(eg, z, fz, SC_JUST_ASSERTED);
  /* S = { add(R, L) } */
  sc_id top = bin(eg, OP_ADD, r, z);
  sc_egraph_rebuild(eg);
  g_autofree char *sr = enum_str(eg, r, 10, 4096, clean_weight, NULL);
  g_assert_cmpstr(sr, ==, "(add x y)");
  g_autofree char *sr3 = enum_str(eg, r, 10, 3, clean_weight, NULL);
  g_assert_cmpstr(sr3, ==, sr);
  g_autofree char *se = enum_str(eg, e, 10, 4096, clean_weight, NULL);
  g_assert_cmpstr(se, ==, "");
  g_autofree char *sc = enum_str(eg, d, 10, 4096, clean_weight, NULL);
  g_assert_cmpstr(sc, ==, "");
  g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autofree char *st = enum_str(eg, top, 3, 4096, clean_weight, sizes);
  g_assert_cmpstr(st, ==, "(add (add x y) z) | (add (add x y) (f z)) | (add (add x y) (f (f z)))");
  g_assert_cmpuint(g_array_index(sizes, uint32_t, 2), ==, 11);
  g_autofree char *st2 = enum_str(eg, top, 3, 8, clean_weight, NULL);
  g_assert_cmpstr(st2, ==, "(add (add x y) z) | (add (add x y) (f z))");
}

static void test_enumerate_distinct_many(void) {
  /* x = x + x: the terms of x of size s are the full binary trees, counted
   * by Catalan numbers: sizes 1, 3, 5, 7 hold 1, 1, 2, 5 terms */
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X);
  sc_id xx = bin(eg, OP_ADD, x, x);
  sc_egraph_union(eg, x, xx, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autoptr(GPtrArray) ts = sc_egraph_enumerate(eg, x, 9, 100, NULL, NULL,
                                                sizes);
  g_assert_cmpuint(ts->len, ==, 9);
  static const uint32_t want[] = {1, 3, 5, 5, 7, 7, 7, 7, 7};
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal,
                                                     g_free, NULL);
  for (guint i = 0; i < ts->len; i++) {
    g_assert_cmpuint(g_array_index(sizes, uint32_t, i), ==, want[i]);
    g_assert_cmpuint(sc_term_tree_size(g_ptr_array_index(ts, i)), ==, want[i]);
    char *s = str(g_ptr_array_index(ts, i));
    g_assert_false(g_hash_table_contains(seen, s));
    g_hash_table_add(seen, s);
  }
  /* 1430 = C(8) terms of size 17; enumerate up to 2000 and check all are
   * distinct */
  g_autoptr(GPtrArray) many = sc_egraph_enumerate(eg, x, 2000, 100, NULL,
                                                  NULL, NULL);
  g_assert_cmpuint(many->len, ==, 2000);
  g_autoptr(GHashTable) seen2 = g_hash_table_new_full(g_str_hash, g_str_equal,
                                                      g_free, NULL);
  for (guint i = 0; i < many->len; i++)
    g_hash_table_add(seen2, str(g_ptr_array_index(many, i)));
  g_assert_cmpuint(g_hash_table_size(seen2), ==, 2000);
}

static void test_term_roundtrip(void) {
  g_autoptr(sc_term) t = sc_term_new();
  uint32_t x = sc_term_add(t, OP_X, 0, NULL, 0);
  uint32_t y = sc_term_add(t, OP_Y, 0, NULL, 0);
  uint32_t k[2] = {x, y};
  uint32_t a = sc_term_add(t, OP_ADD, 0, k, 2);
  uint32_t k2[2] = {a, a};
  sc_term_add(t, OP_ADD, 0, k2, 2);
  g_assert_cmpuint(sc_term_tree_size(t), ==, 7);
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id c = sc_egraph_add_term(eg, t);
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 4);
  g_autoptr(sc_extractor) ex = sc_extractor_new(eg, NULL, NULL);
  g_autoptr(sc_term) back = sc_extractor_term(ex, c);
  g_autofree char *s1 = str(t), *s2 = str(back);
  g_assert_cmpstr(s1, ==, "(add (add x y) (add x y))");
  g_assert_cmpstr(s2, ==, s1);
  g_assert_cmpuint(sc_term_n_nodes(back), ==, 4); /* shared subterm */
  g_autofree char *raw = sc_term_to_string(t, NULL, NULL);
  g_assert_cmpstr(raw, ==, "(op4[0] (op4[0] op1[0] op2[0]) (op4[0] op1[0] "
                           "op2[0]))");
}

/* Weights by operator for the count below: x 1, y 2, z 3, f 2, add 1. */
static uint32_t op_weight(const sc_egraph *eg, sc_id node, void *user) {
  static const uint32_t w[] = {1, 1, 2, 3, 1, 2, 0, 1};
  uint32_t op = sc_egraph_node_op(eg, node);
  return op < G_N_ELEMENTS(w) ? w[op] : 1;
}

/* Terms of class CLS of size S, counted the plain way (a child's sizes
 * tried one by one), the reference for extract.c's convolution tables
 * and their bounds (each child at least its smallest size). */
static uint64_t naive_count(const sc_egraph *eg, sc_id cls, uint32_t s);

static uint64_t naive_kids(const sc_egraph *eg, const sc_id *kids, uint32_t n, uint32_t s) {
  if (n == 0)
    return s == 0;
  uint64_t total = 0;
  for (uint32_t y = 1; y <= s; y++) {
    uint64_t a = naive_count(eg, kids[0], y);
    if (a)
      total += a * naive_kids(eg, kids + 1, n - 1, s - y);
  }
  return total;
}

static uint64_t naive_count(const sc_egraph *eg, sc_id cls, uint32_t s) {
  uint32_t n = 0;
  const sc_id *nodes = sc_egraph_class_nodes(eg, sc_egraph_find_const(eg, cls), &n);
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t w = op_weight(eg, nodes[i], NULL);
    if (w > s)
      continue;
    total += naive_kids(eg, sc_egraph_node_children(eg, nodes[i]),
                        sc_egraph_node_arity(eg, nodes[i]), s - w);
  }
  return total;
}

/* Nodes of three and four children over classes of different smallest
 * sizes (1, 2, 3, through a cycle): every term up to size 20, counted per
 * size, equals the plain count, and no term repeats. */
static void test_enumerate_counts(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id x = leaf(eg, OP_X), y = leaf(eg, OP_Y), z = leaf(eg, OP_Z);
  sc_id fy = un(eg, OP_F, y);
  sc_egraph_union(eg, z, fy, SC_JUST_ASSERTED); /* {z, f(y)}: smallest 3 */
  sc_id fx = un(eg, OP_F, x);
  sc_egraph_union(eg, y, un(eg, OP_F, fx), SC_JUST_ASSERTED); /* {y, f(f(x))}: 2 */
  sc_egraph_union(eg, x, bin(eg, OP_ADD, x, x), SC_JUST_ASSERTED); /* x = x + x: a cycle */
  sc_id k3[3] = {z, x, y}, k4[4] = {y, z, x, z};
  sc_id t = sc_egraph_add(eg, OP_ADD, 0, k3, 3);
  sc_id t4 = sc_egraph_add(eg, OP_ADD, 1, k4, 4);
  sc_egraph_union(eg, t, t4, SC_JUST_ASSERTED);
  sc_id k3b[3] = {x, t, z};
  sc_id top = sc_egraph_add(eg, OP_ADD, 2, k3b, 3);
  sc_egraph_union(eg, top, sc_egraph_add(eg, OP_F, 0, &t, 1), SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  const uint32_t max = 20;
  g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autoptr(GPtrArray) ts = sc_egraph_enumerate(eg, top, 100000, max, op_weight, NULL, sizes);
  uint64_t want_total = 0;
  for (uint32_t s = 1; s <= max; s++) {
    uint64_t got = 0;
    for (guint i = 0; i < sizes->len; i++)
      got += g_array_index(sizes, uint32_t, i) == s;
    uint64_t want = naive_count(eg, top, s);
    g_assert_cmpuint(got, ==, want);
    want_total += want;
  }
  g_assert_cmpuint(ts->len, ==, want_total);
  g_assert_cmpuint(want_total, >, 500);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < ts->len; i++)
    g_assert_true(g_hash_table_add(seen, str(g_ptr_array_index(ts, i))));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/extract/best/ast-size", test_best);
  g_test_add_func("/extract/best/infinite", test_infinite);
  g_test_add_func("/extract/enumerate/order", test_enumerate_order);
  g_test_add_func("/extract/enumerate/cycle", test_enumerate_cycle);
  g_test_add_func("/extract/enumerate/clean-only", test_enumerate_clean);
  g_test_add_func("/extract/enumerate/distinct", test_enumerate_distinct_many);
  g_test_add_func("/extract/enumerate/weighted-cycle", test_enumerate_weighted_cycle);
  g_test_add_func("/extract/enumerate/size-bound", test_enumerate_size_bound);
  g_test_add_func("/extract/enumerate/counts", test_enumerate_counts);
  g_test_add_func("/extract/term/roundtrip", test_term_roundtrip);
  return g_test_run();
}
