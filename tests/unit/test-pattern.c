/* test-pattern.c — patterns, the compiled matcher and constrained queries:
 * plain and nested matching, repeated class and attribute variables,
 * attribute predicates, guards, match limits, the op index (a rule only
 * visits classes with its root operator), requires patterns that bind new
 * variables, a requires pattern whose roots are found by walking up from a
 * bound variable (the same matches in the same order as a scan of the root
 * operator's classes), and the compile errors with their codes and key
 * words. */
#include "shardcheck/pattern.h"

#include <string.h>

enum { OP_A = 1, OP_B, OP_C, OP_F, OP_G, OP_CAT, OP_SLICE, OP_VIEW };

static sc_id leaf(sc_egraph *eg, uint32_t op) {
  return sc_egraph_add(eg, op, 0, NULL, 0);
}
static sc_id node1(sc_egraph *eg, uint32_t op, uint32_t attr, sc_id x) {
  return sc_egraph_add(eg, op, attr, &x, 1);
}
static sc_id node2(sc_egraph *eg, uint32_t op, uint32_t attr, sc_id x,
                   sc_id y) {
  sc_id k[2] = {x, y};
  return sc_egraph_add(eg, op, attr, k, 2);
}
static sc_pat_id pnode2(sc_pattern *p, uint32_t op, sc_attr_pat a,
                        sc_pat_id x, sc_pat_id y) {
  sc_pat_id k[2] = {x, y};
  return sc_pattern_node(p, op, a, k, 2);
}
static sc_pat_id pnode1(sc_pattern *p, uint32_t op, sc_attr_pat a,
                        sc_pat_id x) {
  return sc_pattern_node(p, op, a, &x, 1);
}

static sc_query *compile(sc_pattern *lhs) {
  g_autoptr(GError) err = NULL;
  sc_query *q = sc_query_new(lhs, NULL, 0, &err);
  g_assert_no_error(err);
  g_assert_nonnull(q);
  return q;
}

/* Matches as "root:v0,v1,..." strings, sorted, joined by ' '. */
static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *search_sorted(const sc_query *q, const sc_egraph *eg,
                           uint64_t limit, sc_guard_fn guard, void *user) {
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  uint64_t n = sc_query_search(q, eg, limit, guard, user, out);
  uint32_t w = 1 + sc_query_n_vars(q);
  g_assert_cmpuint(out->len, ==, n * w);
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < out->len; i += w) {
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "%u:", g_array_index(out, uint32_t, i));
    for (uint32_t v = 0; v + 1 < w; v++)
      g_string_append_printf(s, "%s%u", v ? "," : "",
                             g_array_index(out, uint32_t, i + 1 + v));
    g_ptr_array_add(items, g_string_free(s, FALSE));
  }
  g_ptr_array_sort(items, cmp_str);
  GString *all = g_string_new(NULL);
  for (guint i = 0; i < items->len; i++)
    g_string_append_printf(all, "%s%s", i ? " " : "",
                           (char *)g_ptr_array_index(items, i));
  return g_string_free(all, FALSE);
}

static void test_match_simple(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A), b = leaf(eg, OP_B), c = leaf(eg, OP_C);
  sc_id fab = node2(eg, OP_F, 0, a, b);   /* 3 */
  sc_id fcc = node2(eg, OP_F, 0, c, c);   /* 4 */
  node1(eg, OP_G, 0, a);
  g_assert_cmpuint(fab, ==, 3);
  g_assert_cmpuint(fcc, ==, 4);
  g_autoptr(sc_pattern) p = sc_pattern_new();
  pnode2(p, OP_F, sc_attr_any(), sc_pattern_var(p, "x"),
         sc_pattern_var(p, "y"));
  g_autoptr(sc_query) q = compile(p);
  g_assert_cmpuint(sc_query_n_vars(q), ==, 2);
  g_assert_cmpstr(sc_query_var_name(q, 0), ==, "x");
  g_assert_cmpuint(sc_query_var_index(q, "y"), ==, 1);
  g_assert_cmpuint(sc_query_root_op(q), ==, OP_F);
  g_autofree char *s = search_sorted(q, eg, 0, NULL, NULL);
  g_assert_cmpstr(s, ==, "3:0,1 4:2,2");
}

static void test_match_repeated(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A), b = leaf(eg, OP_B), c = leaf(eg, OP_C);
  node2(eg, OP_F, 0, a, b); /* 3 */
  node2(eg, OP_F, 0, c, c); /* 4 */
  g_autoptr(sc_pattern) p = sc_pattern_new();
  sc_pat_id x = sc_pattern_var(p, "x");
  pnode2(p, OP_F, sc_attr_any(), x, x);
  g_autoptr(sc_query) q = compile(p);
  g_autofree char *d = sc_query_disassemble(q);
  g_assert_nonnull(strstr(d, "check  r2 == ?x"));
  g_autofree char *s1 = search_sorted(q, eg, 0, NULL, NULL);
  g_assert_cmpstr(s1, ==, "4:2");
  /* after a == b, f(a, b) matches f(?x, ?x) too */
  sc_egraph_union(eg, a, b, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  g_autofree char *s2 = search_sorted(q, eg, 0, NULL, NULL);
  sc_id ab = sc_egraph_find(eg, a);
  g_autofree char *want = g_strdup_printf("3:%u 4:2", ab);
  g_assert_cmpstr(s2, ==, want);
}

static void test_match_nested(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A), b = leaf(eg, OP_B);
  sc_id ga = node1(eg, OP_G, 0, a);       /* 2 */
  sc_id f1 = node2(eg, OP_F, 0, ga, a);   /* 3: f(g(a), a) */
  sc_id f2 = node2(eg, OP_F, 0, ga, b);   /* 4: f(g(a), b) */
  g_assert_cmpuint(f1, ==, 3);
  g_assert_cmpuint(f2, ==, 4);
  g_autoptr(sc_pattern) p = sc_pattern_new();
  sc_pat_id x = sc_pattern_var(p, "x");
  sc_pat_id g = pnode1(p, OP_G, sc_attr_any(), x);
  pnode2(p, OP_F, sc_attr_any(), g, x);
  g_autoptr(sc_query) q = compile(p);
  g_autofree char *s = search_sorted(q, eg, 0, NULL, NULL);
  g_assert_cmpstr(s, ==, "3:0");
}

typedef struct {
  int calls;
} pred_ctx;

static gboolean attr_is_even(uint32_t attr, void *user) {
  ((pred_ctx *)user)->calls++;
  return attr % 2 == 0;
}

static void test_match_attr(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A), b = leaf(eg, OP_B), c = leaf(eg, OP_C);
  sc_id ab0 = node2(eg, OP_CAT, 0, a, b);      /* 3: cat(a,b; 0) */
  node2(eg, OP_CAT, 1, a, b);                  /* 4: cat(a,b; 1) */
  node2(eg, OP_CAT, 0, ab0, c);                /* 5: cat(cat(a,b;0),c;0) */
  node2(eg, OP_CAT, 1, ab0, c);                /* 6: cat(cat(a,b;0),c;1) */
  for (int i = 0; i < 5; i++)
    node1(eg, OP_G, (uint32_t)i, a);           /* not visited by cat rules */

  /* exact attribute */
  g_autoptr(sc_pattern) p1 = sc_pattern_new();
  pnode2(p1, OP_CAT, sc_attr_exact(1), sc_pattern_var(p1, "x"),
         sc_pattern_var(p1, "y"));
  g_autoptr(sc_query) q1 = compile(p1);
  g_autofree char *s1 = search_sorted(q1, eg, 0, NULL, NULL);
  g_assert_cmpstr(s1, ==, "4:0,1 6:3,2");

  /* repeated attribute variable: cat(cat(?x, ?y; ?d), ?z; ?d) */
  g_autoptr(sc_pattern) p2 = sc_pattern_new();
  sc_pat_id in = pnode2(p2, OP_CAT, sc_attr_var("d"), sc_pattern_var(p2, "x"),
                        sc_pattern_var(p2, "y"));
  pnode2(p2, OP_CAT, sc_attr_var("d"), in, sc_pattern_var(p2, "z"));
  g_autoptr(sc_query) q2 = compile(p2);
  g_assert_cmpuint(sc_query_n_vars(q2), ==, 4);
  uint32_t dv = sc_query_var_index(q2, "d");
  g_assert_true(sc_query_var_is_attr(q2, dv));
  g_assert_false(sc_query_var_is_attr(q2, sc_query_var_index(q2, "z")));
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_assert_cmpuint(sc_query_search(q2, eg, 0, NULL, NULL, out), ==, 1);
  g_assert_cmpuint(g_array_index(out, uint32_t, 0), ==, 5);
  g_assert_cmpuint(g_array_index(out, uint32_t, 1 + dv), ==, 0);

  /* predicate, and the op index: only cat nodes are offered to it */
  pred_ctx pc = {0};
  g_autoptr(sc_pattern) p3 = sc_pattern_new();
  pnode2(p3, OP_CAT, sc_attr_pred(attr_is_even, &pc), sc_pattern_var(p3, "x"),
         sc_pattern_var(p3, "y"));
  g_autoptr(sc_query) q3 = compile(p3);
  g_autofree char *s3 = search_sorted(q3, eg, 0, NULL, NULL);
  g_assert_cmpstr(s3, ==, "3:0,1 5:3,2");
  g_assert_cmpint(pc.calls, ==, 4);
}

static gboolean guard_x_not_a(const sc_egraph *eg, sc_id root,
                              const uint32_t *subst, void *user) {
  sc_id a = *(sc_id *)user;
  return subst[0] != a;
}

static void test_guard_and_limit(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A), b = leaf(eg, OP_B), c = leaf(eg, OP_C);
  node1(eg, OP_G, 0, a); /* 3 */
  node1(eg, OP_G, 0, b); /* 4 */
  node1(eg, OP_G, 0, c); /* 5 */
  g_autoptr(sc_pattern) p = sc_pattern_new();
  pnode1(p, OP_G, sc_attr_any(), sc_pattern_var(p, "x"));
  g_autoptr(sc_query) q = compile(p);
  g_autofree char *s = search_sorted(q, eg, 0, guard_x_not_a, &a);
  g_assert_cmpstr(s, ==, "4:1 5:2");
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_assert_cmpuint(sc_query_search(q, eg, 2, NULL, NULL, out), ==, 2);
  g_assert_cmpuint(out->len, ==, 4);
  g_array_set_size(out, 0);
  g_assert_cmpuint(sc_query_search(q, eg, 1, guard_x_not_a, &a, out), ==, 1);
  g_assert_cmpuint(g_array_index(out, uint32_t, 1), ==, b);
}

/* Slices with attribute ids that index a table of [start, end). */
static const int slice_tab[][2] = {{0, 8}, {0, 4}, {4, 8}, {0, 2}, {2, 8}};

static gboolean split_guard(const sc_egraph *eg, sc_id root,
                            const uint32_t *subst, void *user) {
  const sc_query *q = user;
  uint32_t r = subst[sc_query_var_index(q, "r")];
  uint32_t r1 = subst[sc_query_var_index(q, "r1")];
  uint32_t r2 = subst[sc_query_var_index(q, "r2")];
  return slice_tab[r1][0] == slice_tab[r][0] &&
         slice_tab[r1][1] == slice_tab[r2][0] &&
         slice_tab[r2][1] == slice_tab[r][1];
}

static void test_requires(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id X = leaf(eg, OP_A), Y = leaf(eg, OP_B);
  sc_id full = node1(eg, OP_SLICE, 0, X);   /* X[0:8] */
  node1(eg, OP_SLICE, 1, X);                /* X[0:4] */
  node1(eg, OP_SLICE, 2, X);                /* X[4:8] */
  node1(eg, OP_SLICE, 3, X);                /* X[0:2] */
  node1(eg, OP_SLICE, 0, Y);                /* Y[0:8], no pieces */
  node1(eg, OP_SLICE, 2, Y);                /* Y[4:8] */
  /* slice(?X; ?r) requires slice(?X; ?r1), slice(?X; ?r2) */
  g_autoptr(sc_pattern) lhs = sc_pattern_new();
  pnode1(lhs, OP_SLICE, sc_attr_var("r"), sc_pattern_var(lhs, "X"));
  g_autoptr(sc_pattern) req1 = sc_pattern_new();
  pnode1(req1, OP_SLICE, sc_attr_var("r1"), sc_pattern_var(req1, "X"));
  g_autoptr(sc_pattern) req2 = sc_pattern_new();
  pnode1(req2, OP_SLICE, sc_attr_var("r2"), sc_pattern_var(req2, "X"));
  const sc_pattern *reqs[2] = {req1, req2};
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_query) q = sc_query_new(lhs, reqs, 2, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(sc_query_n_vars(q), ==, 4);
  g_autofree char *d = sc_query_disassemble(q);
  g_assert_nonnull(strstr(d, "driven by parents of ?X at child 0"));
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  uint64_t n = sc_query_search(q, eg, 0, split_guard, q, out);
  /* X[0:8] = X[0:4] ++ X[4:8] only (X[0:2] has no partner; Y has none) */
  g_assert_cmpuint(n, ==, 1);
  g_assert_cmpuint(g_array_index(out, uint32_t, 0), ==, full);
  g_assert_cmpuint(g_array_index(out, uint32_t, 1 + sc_query_var_index(q, "r1")),
                   ==, 1);
  g_assert_cmpuint(g_array_index(out, uint32_t, 1 + sc_query_var_index(q, "r2")),
                   ==, 2);
  /* without the guard: every (r, r1, r2) over X's 4 slices and Y's 2 */
  g_array_set_size(out, 0);
  g_assert_cmpuint(sc_query_search(q, eg, 0, NULL, NULL, out), ==,
                   4 * 4 * 4 + 2 * 2 * 2);

  /* a bare-variable lhs with a requires: ?x requires view(?x) */
  sc_id vY = node1(eg, OP_VIEW, 0, Y);
  sc_egraph_rebuild(eg);
  g_autoptr(sc_pattern) bare = sc_pattern_new();
  sc_pattern_var(bare, "x");
  g_autoptr(sc_pattern) rv = sc_pattern_new();
  pnode1(rv, OP_VIEW, sc_attr_any(), sc_pattern_var(rv, "x"));
  const sc_pattern *r1[1] = {rv};
  g_autoptr(sc_query) qv = sc_query_new(bare, r1, 1, &err);
  g_assert_no_error(err);
  g_autofree char *sv = search_sorted(qv, eg, 0, NULL, NULL);
  g_autofree char *want = g_strdup_printf("%u:%u", Y, Y);
  g_assert_cmpstr(sv, ==, want);
  (void)vY;
}

/* f(?x) requires h(?s, g(?x)): ?x sits two operators below the root, so the
 * roots are found from ?x's class up through g and h.  On random e-graphs
 * with random unions, the ordered matches equal those of a scan of every h
 * class in increasing order, done here by hand in the machine's order
 * (lhs matches in order; per h class its h nodes by id, ?s first, then the
 * g nodes of the child class by id, checking ?x). */
static void test_requires_path(void) {
  g_autoptr(sc_pattern) lhs = sc_pattern_new();
  pnode1(lhs, OP_F, sc_attr_any(), sc_pattern_var(lhs, "x"));
  g_autoptr(sc_pattern) req = sc_pattern_new();
  pnode2(req, OP_CAT, sc_attr_any(), sc_pattern_var(req, "s"),
         pnode1(req, OP_G, sc_attr_any(), sc_pattern_var(req, "x")));
  const sc_pattern *reqs[1] = {req};
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_query) q = sc_query_new(lhs, reqs, 1, &err);
  g_assert_no_error(err);
  g_autofree char *d = sc_query_disassemble(q);
  g_assert_nonnull(strstr(d, "roots found up from ?x through"));
  g_autoptr(sc_query) lq = compile(lhs);
  uint32_t vx = sc_query_var_index(q, "x"), vs = sc_query_var_index(q, "s");
  GRand *rng = g_rand_new_with_seed(18);
  uint64_t total = 0;
  for (int round = 0; round < 200; round++) {
    g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (uint32_t i = 0; i < 4; i++) {
      sc_id l = leaf(eg, OP_A + i % 3);
      g_array_append_val(ids, l);
    }
    int n_ops = g_rand_int_range(rng, 5, 40);
    for (int i = 0; i < n_ops; i++) {
      sc_id a = g_array_index(ids, sc_id, g_rand_int_range(rng, 0, (gint32)ids->len));
      sc_id b = g_array_index(ids, sc_id, g_rand_int_range(rng, 0, (gint32)ids->len));
      sc_id n;
      switch (g_rand_int_range(rng, 0, 4)) {
      case 0: n = node1(eg, OP_F, 0, a); break;
      case 1: n = node1(eg, OP_G, (uint32_t)g_rand_int_range(rng, 0, 2), a); break;
      case 2: n = node2(eg, OP_CAT, 0, a, b); break;
      default: sc_egraph_union(eg, a, b, 0); n = a; break;
      }
      g_array_append_val(ids, n);
    }
    sc_egraph_rebuild(eg);
    g_autoptr(GArray) got = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    sc_query_search(q, eg, 0, NULL, NULL, got);
    g_autoptr(GArray) lm = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    sc_query_search(lq, eg, 0, NULL, NULL, lm);
    g_autoptr(GArray) want = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    uint32_t n_cat, w = 1 + sc_query_n_vars(q);
    const sc_id *cats = sc_egraph_classes_with_op(eg, OP_CAT, &n_cat);
    for (guint i = 0; i < lm->len; i += 2) {
      sc_id root = g_array_index(lm, uint32_t, i), x = g_array_index(lm, uint32_t, i + 1);
      for (uint32_t c = 0; c < n_cat; c++) {
        uint32_t nh, ng;
        const sc_id *hs = sc_egraph_class_nodes_with_op(eg, cats[c], OP_CAT, &nh);
        for (uint32_t j = 0; j < nh; j++) {
          const sc_id *hk = sc_egraph_node_children(eg, hs[j]);
          const sc_id *gs = sc_egraph_class_nodes_with_op(eg, hk[1], OP_G, &ng);
          for (uint32_t k = 0; k < ng; k++) {
            if (sc_egraph_node_children(eg, gs[k])[0] != x)
              continue;
            uint32_t m[3];
            m[0] = root;
            m[1 + vx] = x;
            m[1 + vs] = hk[0];
            g_array_append_vals(want, m, w);
          }
        }
      }
    }
    g_assert_cmpuint(w, ==, 3);
    g_assert_cmpuint(got->len, ==, want->len);
    total += got->len / w;
    g_assert_cmpmem(got->data, got->len * sizeof(uint32_t), want->data,
                    want->len * sizeof(uint32_t));
    g_array_free(ids, TRUE);
  }
  g_rand_free(rng);
  g_assert_cmpuint(total, >=, 200); /* not a test of empty results */
}

static void test_errors(void) {
  g_autoptr(GError) err = NULL;
  /* a requires pattern that is a bare variable */
  g_autoptr(sc_pattern) lhs = sc_pattern_new();
  pnode1(lhs, OP_G, sc_attr_any(), sc_pattern_var(lhs, "x"));
  g_autoptr(sc_pattern) bare = sc_pattern_new();
  sc_pattern_var(bare, "x");
  const sc_pattern *reqs[1] = {bare};
  g_assert_null(sc_query_new(lhs, reqs, 1, &err));
  g_assert_error(err, SC_PATTERN_ERROR, SC_PATTERN_ERROR_BAD_REQUIRES);
  g_assert_nonnull(strstr(err->message, "?x"));
  g_clear_error(&err);
  /* ?x as class and as attribute */
  g_autoptr(sc_pattern) mixed = sc_pattern_new();
  pnode1(mixed, OP_G, sc_attr_var("x"), sc_pattern_var(mixed, "x"));
  g_assert_null(sc_query_new(mixed, NULL, 0, &err));
  g_assert_error(err, SC_PATTERN_ERROR, SC_PATTERN_ERROR_VAR_KIND);
  g_assert_nonnull(strstr(err->message, "?x"));
  g_clear_error(&err);
  /* empty */
  g_autoptr(sc_pattern) empty = sc_pattern_new();
  g_assert_null(sc_query_new(empty, NULL, 0, &err));
  g_assert_error(err, SC_PATTERN_ERROR, SC_PATTERN_ERROR_EMPTY);
  g_clear_error(&err);
  /* a computed attribute on the left */
  g_autoptr(sc_pattern) comp = sc_pattern_new();
  pnode1(comp, OP_G, sc_attr_compute(NULL, NULL), sc_pattern_var(comp, "x"));
  g_assert_null(sc_query_new(comp, NULL, 0, &err));
  g_assert_error(err, SC_PATTERN_ERROR, SC_PATTERN_ERROR_BAD_ATTR);
  g_assert_nonnull(strstr(err->message, "right-hand side"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/pattern/match/simple", test_match_simple);
  g_test_add_func("/pattern/match/repeated", test_match_repeated);
  g_test_add_func("/pattern/match/nested", test_match_nested);
  g_test_add_func("/pattern/match/attr", test_match_attr);
  g_test_add_func("/pattern/match/guard-limit", test_guard_and_limit);
  g_test_add_func("/pattern/requires/bind", test_requires);
  g_test_add_func("/pattern/requires/path", test_requires_path);
  g_test_add_func("/pattern/errors", test_errors);
  return g_test_run();
}
