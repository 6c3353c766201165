/* test-egraph.c — the e-graph core: hash-consing, union-find, deferred
 * rebuild and congruence, the analysis seam (make/merge/modify, conflicts,
 * upward propagation), the merge listener, the proof forest, and a seeded
 * random differential test against a naive congruence closure, with
 * sc_egraph_check() after every rebuild; proof terms (add_exact, aliases)
 * and flat explanations of equalities made by rules, facts and
 * congruence, with exact steps. */
#include "shardcheck/egraph.h"
#include "shardcheck/extract.h"
#include "shardcheck/runner.h"

#include <string.h>

enum { OP_A = 1, OP_B, OP_C, OP_F, OP_G, OP_ADD, OP_NUM, OP_VAR };

static sc_id leaf(sc_egraph *eg, uint32_t op, uint32_t attr) {
  return sc_egraph_add(eg, op, attr, NULL, 0);
}
static sc_id un(sc_egraph *eg, uint32_t op, sc_id x) {
  return sc_egraph_add(eg, op, 0, &x, 1);
}
static sc_id bin(sc_egraph *eg, uint32_t op, sc_id x, sc_id y) {
  sc_id k[2] = {x, y};
  return sc_egraph_add(eg, op, 0, k, 2);
}

static void assert_check(sc_egraph *eg) {
  g_autoptr(GError) err = NULL;
  gboolean ok = sc_egraph_check(eg, &err);
  g_assert_no_error(err);
  g_assert_true(ok);
}

static void test_hashcons(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A, 0), a2 = leaf(eg, OP_A, 0), a7 = leaf(eg, OP_A, 7);
  g_assert_cmpuint(a, ==, a2);
  g_assert_cmpuint(a, !=, a7);
  sc_id fa = un(eg, OP_F, a);
  g_assert_cmpuint(un(eg, OP_F, a), ==, fa);
  g_assert_cmpuint(sc_egraph_lookup(eg, OP_F, 0, &a, 1), ==, fa);
  g_assert_cmpuint(sc_egraph_lookup(eg, OP_G, 0, &a, 1), ==, SC_ID_NONE);
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 3);
  g_assert_cmpuint(sc_egraph_n_classes(eg), ==, 3);
  g_assert_true(sc_egraph_is_clean(eg));
  assert_check(eg);
}

static void test_congruence(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A, 0), b = leaf(eg, OP_B, 0);
  sc_id fa = un(eg, OP_F, a), fb = un(eg, OP_F, b);
  sc_id gfa = un(eg, OP_G, fa), gfb = un(eg, OP_G, fb);
  sc_id hab = bin(eg, OP_ADD, fa, gfb);
  sc_id hba = bin(eg, OP_ADD, fb, gfa);
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 8);
  g_assert_true(sc_egraph_union(eg, a, b, SC_JUST_ASSERTED));
  g_assert_false(sc_egraph_union(eg, b, a, SC_JUST_ASSERTED));
  g_assert_false(sc_egraph_is_clean(eg));
  /* deferred: parents are not merged until rebuild */
  g_assert_cmpuint(sc_egraph_find(eg, fa), !=, sc_egraph_find(eg, fb));
  uint32_t n = sc_egraph_rebuild(eg);
  g_assert_cmpuint(n, ==, 3); /* f, g, add */
  g_assert_true(sc_egraph_is_clean(eg));
  g_assert_cmpuint(sc_egraph_find(eg, fa), ==, sc_egraph_find(eg, fb));
  g_assert_cmpuint(sc_egraph_find(eg, gfa), ==, sc_egraph_find(eg, gfb));
  g_assert_cmpuint(sc_egraph_find(eg, hab), ==, sc_egraph_find(eg, hba));
  /* a, b stay two nodes of one class; f, g, add each collapse to one */
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 5);
  g_assert_cmpuint(sc_egraph_n_classes(eg), ==, 4);
  uint32_t nn;
  const sc_id *nodes = sc_egraph_class_nodes(eg, sc_egraph_find(eg, a), &nn);
  g_assert_cmpuint(nn, ==, 2);
  g_assert_cmpuint(sc_egraph_node_op(eg, nodes[0]), ==, OP_A);
  g_assert_cmpuint(sc_egraph_node_op(eg, nodes[1]), ==, OP_B);
  /* adding f(b) now finds the merged class */
  g_assert_cmpuint(un(eg, OP_F, b), ==, sc_egraph_find(eg, fa));
  assert_check(eg);
}

/* A congruence duplicate whose class already holds its twin: the rebuild
 * must still drop it from the class's node list (found by the random
 * rewrite test of test-runner.c). */
static void test_dup_same_class(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A, 0), b = leaf(eg, OP_B, 0);
  sc_id fa = un(eg, OP_F, a), fb = un(eg, OP_F, b);
  g_assert_true(sc_egraph_union(eg, fa, fb, SC_JUST_ASSERTED));
  g_assert_cmpuint(sc_egraph_rebuild(eg), ==, 0);
  assert_check(eg);
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 4);
  g_assert_true(sc_egraph_union(eg, a, b, SC_JUST_ASSERTED));
  g_assert_cmpuint(sc_egraph_rebuild(eg), ==, 0); /* no new union needed */
  assert_check(eg);
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, 3);
  uint32_t n;
  sc_egraph_class_nodes(eg, sc_egraph_find(eg, fa), &n);
  g_assert_cmpuint(n, ==, 1);
}

static void test_op_index(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A, 0), b = leaf(eg, OP_B, 0), c = leaf(eg, OP_C, 0);
  sc_id fa = un(eg, OP_F, a), fb = un(eg, OP_F, b);
  un(eg, OP_G, c);
  uint32_t n;
  const sc_id *cls = sc_egraph_classes_with_op(eg, OP_F, &n);
  g_assert_cmpuint(n, ==, 2);
  g_assert_cmpuint(cls[0], ==, fa);
  g_assert_cmpuint(cls[1], ==, fb);
  sc_egraph_union(eg, a, b, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  cls = sc_egraph_classes_with_op(eg, OP_F, &n);
  g_assert_cmpuint(n, ==, 1);
  g_assert_cmpuint(cls[0], ==, sc_egraph_find(eg, fa));
  cls = sc_egraph_classes_with_op(eg, 999, &n);
  g_assert_cmpuint(n, ==, 0);
  const sc_id *with_op =
      sc_egraph_class_nodes_with_op(eg, sc_egraph_find(eg, a), OP_B, &n);
  g_assert_cmpuint(n, ==, 1);
  g_assert_cmpuint(with_op[0], ==, b);
}

/* ---- analysis: constant folding over OP_ADD / OP_NUM, "shape" in attr --- */

typedef struct {
  int64_t shape;     /* every node carries a shape: conflicts when differ */
  gboolean known;
  int64_t value;
} cdata;

typedef struct {
  int modify_calls;
  int conflicts;
  sc_id conflict_a, conflict_b;
  uint32_t conflict_just;
  int merges;
  sc_id last_root, last_absorbed;
  uint32_t last_just;
} ctx;

static void c_make(const sc_egraph *eg, uint32_t op, uint32_t attr,
                   const sc_id *children, uint32_t n,
                   const void *const *child_data, void *out, void *user) {
  cdata *d = out;
  d->shape = op == OP_VAR || op == OP_NUM ? (int64_t)(attr >> 16) : 0;
  if (n > 0)
    d->shape = ((const cdata *)child_data[0])->shape;
  d->known = FALSE;
  d->value = 0;
  if (op == OP_NUM) {
    d->known = TRUE;
    d->value = attr & 0xffff;
  } else if (op == OP_ADD && n == 2) {
    const cdata *x = child_data[0], *y = child_data[1];
    if (x->known && y->known) {
      d->known = TRUE;
      d->value = x->value + y->value;
    }
  }
}

static sc_merge_result c_merge(void *a, const void *b, void *user) {
  cdata *x = a;
  const cdata *y = b;
  if (x->shape != y->shape)
    return SC_MERGE_CONFLICT;
  if (x->known && y->known)
    return x->value == y->value ? SC_MERGE_NONE : SC_MERGE_CONFLICT;
  if (!x->known && y->known) {
    *x = *y;
    return SC_MERGE_A_CHANGED;
  }
  if (x->known && !y->known)
    return SC_MERGE_B_CHANGED;
  return SC_MERGE_NONE;
}

static void c_modify(sc_egraph *eg, sc_id cls, void *user) {
  ctx *c = user;
  c->modify_calls++;
  const cdata *d = sc_egraph_class_data(eg, cls);
  if (d->known && d->value >= 0 && d->value < 0xffff) {
    sc_id num = sc_egraph_add(eg, OP_NUM,
                              (uint32_t)(d->shape << 16) | (uint32_t)d->value,
                              NULL, 0);
    sc_egraph_union(eg, cls, num, SC_JUST_ASSERTED);
  }
}

static void c_conflict(const sc_egraph *eg, sc_id a, sc_id b, uint32_t just,
                       void *user) {
  ctx *c = user;
  c->conflicts++;
  c->conflict_a = a;
  c->conflict_b = b;
  c->conflict_just = just;
}

static void c_listen(const sc_egraph *eg, sc_id root, sc_id absorbed,
                     uint32_t just, void *user) {
  ctx *c = user;
  c->merges++;
  c->last_root = root;
  c->last_absorbed = absorbed;
  c->last_just = just;
}

static const sc_analysis const_analysis = {sizeof(cdata), c_make, c_merge,
                                           c_modify};

static sc_egraph *new_const_graph(ctx *c) {
  sc_egraph *eg = sc_egraph_new(&const_analysis, c);
  sc_egraph_set_conflict_handler(eg, c_conflict, c);
  sc_egraph_set_merge_listener(eg, c_listen, c);
  return eg;
}

static void test_analysis_propagate(void) {
  ctx c = {0};
  g_autoptr(sc_egraph) eg = new_const_graph(&c);
  uint32_t shape = 3u << 16;
  sc_id x = leaf(eg, OP_VAR, shape | 1);
  sc_id one = leaf(eg, OP_NUM, shape | 1);
  sc_id sum = bin(eg, OP_ADD, x, one);
  sc_id sum2 = bin(eg, OP_ADD, sum, one);
  g_assert_false(((const cdata *)sc_egraph_class_data(eg, sum2))->known);
  sc_id two = leaf(eg, OP_NUM, shape | 2);
  g_assert_true(sc_egraph_union(eg, x, two, 77));
  g_assert_cmpint(c.merges, ==, 1);
  g_assert_cmpuint(c.last_just, ==, 77);
  sc_egraph_rebuild(eg);
  assert_check(eg);
  const cdata *d = sc_egraph_class_data(eg, sum2);
  g_assert_true(d->known);
  g_assert_cmpint(d->value, ==, 4);
  /* modify() folded: the class of sum2 now holds num 4 */
  sc_id four = sc_egraph_lookup(eg, OP_NUM, shape | 4, NULL, 0);
  g_assert_cmpuint(four, !=, SC_ID_NONE);
  g_assert_cmpuint(sc_egraph_find(eg, four), ==, sc_egraph_find(eg, sum2));
  g_assert_cmpuint(sc_egraph_find(eg, sum), ==,
                   sc_egraph_find(eg, sc_egraph_lookup(eg, OP_NUM, shape | 3,
                                                       NULL, 0)));
  g_assert_cmpint(c.modify_calls, >, 0);
  g_assert_cmpint(c.conflicts, ==, 0);
}

static void test_analysis_conflict(void) {
  ctx c = {0};
  g_autoptr(sc_egraph) eg = new_const_graph(&c);
  sc_id x = leaf(eg, OP_VAR, (2u << 16) | 1);
  sc_id y = leaf(eg, OP_VAR, (5u << 16) | 1);
  sc_id fx = un(eg, OP_F, x);
  sc_id fy = un(eg, OP_F, y);
  int merges0 = c.merges;
  g_assert_false(sc_egraph_union(eg, fx, fy, 12));
  g_assert_cmpint(c.conflicts, ==, 1);
  g_assert_cmpuint(c.conflict_a, ==, fx);
  g_assert_cmpuint(c.conflict_b, ==, fy);
  g_assert_cmpuint(c.conflict_just, ==, 12);
  g_assert_cmpuint(sc_egraph_n_conflicts(eg), ==, 1);
  g_assert_cmpint(c.merges, ==, merges0);
  g_assert_cmpuint(sc_egraph_find(eg, fx), !=, sc_egraph_find(eg, fy));
  g_assert_true(sc_egraph_is_clean(eg));
  /* two known constants that differ also conflict */
  sc_id n1 = leaf(eg, OP_NUM, (2u << 16) | 1);
  sc_id n2 = leaf(eg, OP_NUM, (2u << 16) | 2);
  g_assert_false(sc_egraph_union(eg, n1, n2, SC_JUST_ASSERTED));
  g_assert_cmpint(c.conflicts, ==, 2);
  g_assert_cmpuint(c.conflict_just, ==, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  assert_check(eg);
}

static void test_proof_forest(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_egraph_enable_proofs(eg);
  sc_id a = leaf(eg, OP_A, 0), b = leaf(eg, OP_B, 0), c = leaf(eg, OP_C, 0);
  sc_id fa = un(eg, OP_F, a), fc = un(eg, OP_F, c);
  sc_egraph_union(eg, a, b, 5);
  sc_egraph_union(eg, c, b, SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  g_assert_cmpuint(sc_egraph_find(eg, fa), ==, sc_egraph_find(eg, fc));
  /* walk from a and from c to their roots: both reach the same root and the
   * edges carry the justifications given */
  sc_id root_a = a, root_c = c, nx;
  uint32_t just, seen_5 = 0, seen_asserted = 0;
  while (sc_egraph_proof_edge(eg, root_a, &nx, &just)) {
    seen_5 += just == 5;
    seen_asserted += just == SC_JUST_ASSERTED;
    root_a = nx;
  }
  while (sc_egraph_proof_edge(eg, root_c, &nx, &just))
    root_c = nx;
  g_assert_cmpuint(root_a, ==, root_c);
  g_assert_cmpuint(seen_5 + seen_asserted, >=, 1);
  /* f(a) and f(c) are linked by a congruence edge */
  sc_id f1 = fa, f2 = fc;
  gboolean congruence = FALSE;
  if (sc_egraph_proof_edge(eg, f1, &nx, &just) && nx == f2)
    congruence = just == SC_JUST_CONGRUENCE;
  if (sc_egraph_proof_edge(eg, f2, &nx, &just) && nx == f1)
    congruence = just == SC_JUST_CONGRUENCE;
  g_assert_true(congruence);

  /* paths: a ~ c is a then c's edges, in order, ending at c */
  g_autoptr(GArray) steps = g_array_new(FALSE, FALSE, sizeof(sc_proof_step));
  g_assert_true(sc_egraph_proof_path(eg, a, c, steps));
  g_assert_cmpuint(steps->len, ==, 2);
  sc_proof_step s0 = g_array_index(steps, sc_proof_step, 0);
  sc_proof_step s1 = g_array_index(steps, sc_proof_step, 1);
  g_assert_cmpuint(s0.from, ==, a);
  g_assert_cmpuint(s0.to, ==, s1.from);
  g_assert_cmpuint(s1.to, ==, c);
  g_assert_true((s0.just == 5 && s1.just == SC_JUST_ASSERTED) ||
                (s0.just == SC_JUST_ASSERTED && s1.just == 5));
  g_array_set_size(steps, 0);
  g_assert_true(sc_egraph_proof_path(eg, fc, fa, steps));
  g_assert_cmpuint(steps->len, ==, 1);
  g_assert_cmpuint(g_array_index(steps, sc_proof_step, 0).just, ==,
                   SC_JUST_CONGRUENCE);
  g_assert_cmpuint(g_array_index(steps, sc_proof_step, 0).from, ==, fc);
  g_array_set_size(steps, 0);
  g_assert_true(sc_egraph_proof_path(eg, b, b, steps));
  g_assert_cmpuint(steps->len, ==, 0);
  sc_id d = leaf(eg, OP_A, 9);
  g_assert_false(sc_egraph_proof_path(eg, a, d, steps));
  g_assert_cmpuint(steps->len, ==, 0);
}

/* ---- random differential test ----------------------------------------- */

typedef struct {
  uint32_t op, attr, n;
  uint32_t kid[3]; /* indices of earlier adds */
} radd;

static uint32_t rfind(uint32_t *uf, uint32_t x) {
  while (uf[x] != x)
    x = uf[x] = uf[uf[x]];
  return x;
}

/* Naive congruence closure over the recorded adds: repeat until no two
 * adds with equal (op, attr, canonical kids) are in different classes. */
static void naive_close(GArray *adds, uint32_t *uf) {
  gboolean changed = TRUE;
  while (changed) {
    changed = FALSE;
    GHashTable *sig = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                            NULL);
    for (guint i = 0; i < adds->len; i++) {
      radd *r = &g_array_index(adds, radd, i);
      char key[96];
      g_snprintf(key, sizeof key, "%u/%u/%u/%u/%u/%u", r->op, r->attr, r->n,
                 r->n > 0 ? rfind(uf, r->kid[0]) : 0,
                 r->n > 1 ? rfind(uf, r->kid[1]) : 0,
                 r->n > 2 ? rfind(uf, r->kid[2]) : 0);
      gpointer prev;
      if (g_hash_table_lookup_extended(sig, key, NULL, &prev)) {
        uint32_t p = rfind(uf, GPOINTER_TO_UINT(prev)), q = rfind(uf, i);
        if (p != q) {
          uf[q] = p;
          changed = TRUE;
        }
      } else {
        g_hash_table_insert(sig, g_strdup(key), GUINT_TO_POINTER(i));
      }
    }
    g_hash_table_unref(sig);
  }
}

static void compare_partitions(sc_egraph *eg, GArray *adds, GArray *handles,
                               uint32_t *uf) {
  naive_close(adds, uf);
  GHashTable *ref_to_eg = g_hash_table_new(NULL, NULL);
  GHashTable *eg_to_ref = g_hash_table_new(NULL, NULL);
  for (guint i = 0; i < adds->len; i++) {
    uint32_t r = rfind(uf, i);
    sc_id c = sc_egraph_find(eg, g_array_index(handles, sc_id, i));
    gpointer v;
    if (g_hash_table_lookup_extended(ref_to_eg, GUINT_TO_POINTER(r + 1), NULL,
                                     &v))
      g_assert_cmpuint(GPOINTER_TO_UINT(v) - 1, ==, c);
    else
      g_hash_table_insert(ref_to_eg, GUINT_TO_POINTER(r + 1),
                          GUINT_TO_POINTER(c + 1));
    if (g_hash_table_lookup_extended(eg_to_ref, GUINT_TO_POINTER(c + 1), NULL,
                                     &v))
      g_assert_cmpuint(GPOINTER_TO_UINT(v) - 1, ==, r);
    else
      g_hash_table_insert(eg_to_ref, GUINT_TO_POINTER(c + 1),
                          GUINT_TO_POINTER(r + 1));
  }
  g_assert_cmpuint(g_hash_table_size(ref_to_eg), ==, sc_egraph_n_classes(eg));
  g_hash_table_unref(ref_to_eg);
  g_hash_table_unref(eg_to_ref);
}

static void random_run(uint32_t seed, uint32_t n_ops, gboolean with_an,
                       uint32_t n_leaves, uint32_t n_attrs, uint32_t max_arity) {
  GRand *rng = g_rand_new_with_seed(seed);
  ctx c = {0};
  sc_egraph *eg = with_an ? new_const_graph(&c) : sc_egraph_new(NULL, NULL);
  if (with_an)
    sc_egraph_enable_proofs(eg);
  GArray *adds = g_array_new(FALSE, FALSE, sizeof(radd));
  GArray *handles = g_array_new(FALSE, FALSE, sizeof(sc_id));
  uint32_t *uf = g_new(uint32_t, n_ops + 16);
  uint32_t rebuilds = 0;
  for (uint32_t step = 0; step < n_ops; step++) {
    uint32_t what = g_rand_int_range(rng, 0, 100);
    if (adds->len < 8 || what < 75) {
      radd r = {0};
      r.n = adds->len < 4 ? 0
                          : (uint32_t)g_rand_int_range(rng, 0,
                                                       (gint32)max_arity + 1);
      r.op = OP_F + (uint32_t)g_rand_int_range(rng, 0, 2);
      r.attr = (uint32_t)g_rand_int_range(rng, 0, (gint32)n_attrs);
      if (r.n == 0) {
        r.op = OP_VAR;
        r.attr = (1u << 16) |
                 (uint32_t)g_rand_int_range(rng, 0, (gint32)n_leaves);
      }
      sc_id kids[3];
      for (uint32_t i = 0; i < r.n; i++) {
        r.kid[i] = (uint32_t)g_rand_int_range(rng, 0, (gint32)adds->len);
        kids[i] = g_array_index(handles, sc_id, r.kid[i]);
      }
      sc_id h = with_an && g_rand_boolean(rng)
                    ? sc_egraph_add_exact(eg, r.op, r.attr, kids, r.n)
                    : sc_egraph_add(eg, r.op, r.attr, kids, r.n);
      uf[adds->len] = adds->len;
      g_array_append_val(adds, r);
      g_array_append_val(handles, h);
    } else if (what < 85) {
      uint32_t i = (uint32_t)g_rand_int_range(rng, 0, (gint32)adds->len);
      uint32_t j = (uint32_t)g_rand_int_range(rng, 0, (gint32)adds->len);
      sc_egraph_union(eg, g_array_index(handles, sc_id, i),
                      g_array_index(handles, sc_id, j), SC_JUST_ASSERTED);
      uint32_t p = rfind(uf, i), q = rfind(uf, j);
      if (p != q)
        uf[q] = p;
    } else {
      sc_egraph_rebuild(eg);
      rebuilds++;
      assert_check(eg);
      if (rebuilds % 8 == 0)
        compare_partitions(eg, adds, handles, uf);
    }
  }
  sc_egraph_rebuild(eg);
  assert_check(eg);
  compare_partitions(eg, adds, handles, uf);
  g_assert_cmpuint(sc_egraph_n_conflicts(eg), ==, 0);
  if (with_an) {
    /* the proof forest connects exactly the ids of each class */
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(sc_proof_step));
    for (int t = 0; t < 300; t++) {
      sc_id x = g_array_index(handles, sc_id,
                              g_rand_int_range(rng, 0, (gint32)handles->len));
      sc_id y = g_array_index(handles, sc_id,
                              g_rand_int_range(rng, 0, (gint32)handles->len));
      g_array_set_size(steps, 0);
      gboolean same = sc_egraph_find(eg, x) == sc_egraph_find(eg, y);
      g_assert_cmpint(sc_egraph_proof_path(eg, x, y, steps), ==, same);
      sc_id at = x;
      for (guint i = 0; i < steps->len; i++) {
        sc_proof_step st = g_array_index(steps, sc_proof_step, i);
        g_assert_cmpuint(st.from, ==, at);
        at = st.to;
      }
      if (same)
        g_assert_cmpuint(at, ==, y);
      /* the flat explanation ends at y's proof term, and its count is
       * the number of steps built when nothing is capped */
      g_autoptr(sc_explanation) ex = sc_egraph_explain(eg, x, y, 100000);
      g_assert_true((ex != NULL) == same);
      if (!ex)
        continue;
      uint32_t ns = sc_explanation_n_steps(ex);
      g_assert_cmpuint(sc_explanation_total(ex), ==, ns);
      g_autoptr(sc_term) ty = sc_egraph_proof_term(eg, y);
      g_autofree char *want = sc_term_to_string(ty, NULL, NULL);
      g_autofree char *got = sc_term_to_string(
          ns ? sc_explanation_step(ex, ns - 1)->term : sc_explanation_start(ex), NULL, NULL);
      g_assert_cmpstr(got, ==, want);
      g_autoptr(sc_explanation) capped = sc_egraph_explain(eg, x, y, 1);
      g_assert_cmpuint(sc_explanation_total(capped), ==, ns);
      g_assert_cmpuint(sc_explanation_n_steps(capped), ==, MIN(ns, 1u));
    }
    g_array_unref(steps);
  }
  g_free(uf);
  g_array_unref(adds);
  g_array_unref(handles);
  sc_egraph_free(eg);
  g_rand_free(rng);
}

static void test_random(void) {
  /* sparse: many distinct keys, few congruences */
  for (uint32_t seed = 1; seed <= 6; seed++)
    random_run(seed, 3000, FALSE, 40, 3, 3);
  /* dense: few leaves and keys, so congruences (and duplicates inside one
   * class) are frequent */
  for (uint32_t seed = 101; seed <= 110; seed++)
    random_run(seed, 2000, FALSE, 6, 1, 2);
}

static void test_random_analysis(void) {
  /* same shapes everywhere (1 << 16), constants never appear: no conflict */
  for (uint32_t seed = 11; seed <= 13; seed++)
    random_run(seed, 3000, TRUE, 12, 2, 2);
}

/* ---- explanations ------------------------------------------------------- */

enum { OP_H = 20, OP_Y };

static void name_op(GString *out, uint32_t op, uint32_t attr, void *user) {
  (void)user, (void)attr;
  const char *n = op == OP_A ? "a" : op == OP_B ? "b" : op == OP_C ? "c" : op == OP_F ? "f"
                  : op == OP_G ? "g" : op == OP_H ? "h" : op == OP_Y ? "y" : "?";
  g_string_append(out, n);
}

static char *term_text(const sc_term *t) {
  return sc_term_to_string(t, name_op, NULL);
}

/* "TERM by JUST" for each step, joined by "; " */
static char *steps_text(const sc_explanation *ex) {
  GString *s = g_string_new(NULL);
  g_autofree char *start = term_text(sc_explanation_start(ex));
  g_string_append(s, start);
  for (uint32_t i = 0; i < sc_explanation_n_steps(ex); i++) {
    const sc_explain_step *st = sc_explanation_step(ex, i);
    g_autofree char *t = term_text(st->term);
    if (SC_JUST_IS_FACT(st->just))
      g_string_append_printf(s, "; %s by fact %u", t, st->just - SC_JUST_FACT_BASE);
    else
      g_string_append_printf(s, "; %s by r%u%s", t, st->just, st->forward ? "" : " backwards");
  }
  return g_string_free(s, FALSE);
}

static sc_rewrite *rule(const char *name, sc_pattern *lhs, sc_pattern *rhs) {
  g_autoptr(GError) err = NULL;
  sc_rewrite *rw = sc_rewrite_new(name, lhs, NULL, 0, rhs, &err);
  g_assert_no_error(err);
  sc_pattern_free(lhs);
  sc_pattern_free(rhs);
  return rw;
}

/* f(?x) => g(?x) */
static sc_rewrite *rule_fg(void) {
  sc_pattern *l = sc_pattern_new(), *r = sc_pattern_new();
  sc_pat_id lx = sc_pattern_var(l, "x");
  sc_pattern_set_root(l, sc_pattern_node(l, OP_F, sc_attr_exact(0), &lx, 1));
  sc_pat_id rx = sc_pattern_var(r, "x");
  sc_pattern_set_root(r, sc_pattern_node(r, OP_G, sc_attr_exact(0), &rx, 1));
  return rule("fg", l, r);
}

/* a => b */
static sc_rewrite *rule_ab(void) {
  sc_pattern *l = sc_pattern_new(), *r = sc_pattern_new();
  sc_pattern_set_root(l, sc_pattern_node(l, OP_A, sc_attr_exact(0), NULL, 0));
  sc_pattern_set_root(r, sc_pattern_node(r, OP_B, sc_attr_exact(0), NULL, 0));
  return rule("ab", l, r);
}

/* f(g(?x)) => ?x (a nested left side: its instance is rebuilt from the
 * e-nodes matched) */
static sc_rewrite *rule_fg_cancel(void) {
  sc_pattern *l = sc_pattern_new(), *r = sc_pattern_new();
  sc_pat_id lx = sc_pattern_var(l, "x");
  sc_pat_id lg = sc_pattern_node(l, OP_G, sc_attr_any(), &lx, 1);
  sc_pattern_set_root(l, sc_pattern_node(l, OP_F, sc_attr_any(), &lg, 1));
  sc_pattern_set_root(r, sc_pattern_var(r, "x"));
  return rule("cancel", l, r);
}

static sc_id ex_add(sc_egraph *eg, uint32_t op, const sc_id *k, uint32_t n) {
  return sc_egraph_add_exact(eg, op, 0, k, n);
}

/* h(f(a)) = h(g(b)) through two rules and a congruence: fg rewrites f(a)
 * to g(a), ab rewrites a to b, and congruence lifts both under h.  The
 * flat explanation rewrites positions of the whole term in place. */
static void test_explain_two_rules(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_egraph_enable_proofs(eg);
  sc_id a = ex_add(eg, OP_A, NULL, 0), b = ex_add(eg, OP_B, NULL, 0);
  sc_id fa = ex_add(eg, OP_F, &a, 1), gb = ex_add(eg, OP_G, &b, 1);
  sc_id t1 = ex_add(eg, OP_H, &fa, 1), t2 = ex_add(eg, OP_H, &gb, 1);
  sc_rewrite *rules[2] = {rule_fg(), rule_ab()};
  sc_runner_limits lim;
  sc_runner_limits_init(&lim);
  lim.scheduler = SC_SCHED_SIMPLE;
  g_autoptr(sc_runner) run = sc_runner_new(eg, &lim);
  g_assert_cmpint(sc_runner_run(run, rules, 2), ==, SC_STOP_SATURATED);
  assert_check(eg);
  g_assert_cmpuint(sc_egraph_find(eg, t1), ==, sc_egraph_find(eg, t2));

  g_autoptr(sc_explanation) ex = sc_egraph_explain(eg, t1, t2, 40);
  g_assert_nonnull(ex);
  g_autofree char *fwd = steps_text(ex);
  g_assert_cmpstr(fwd, ==, "(h (f a)); (h (g a)) by r0; (h (g b)) by r1");
  g_assert_cmpuint(sc_explanation_total(ex), ==, 2);
  g_assert_cmpuint(sc_explanation_step(ex, 0)->depth, ==, 1);
  g_assert_cmpuint(sc_explanation_step(ex, 1)->depth, ==, 2);

  /* the other way round: the same rules, used right to left */
  g_autoptr(sc_explanation) back = sc_egraph_explain(eg, t2, t1, 40);
  g_autofree char *bwd = steps_text(back);
  g_assert_cmpstr(bwd, ==, "(h (g b)); (h (g a)) by r1 backwards; (h (f a)) by r0 backwards");

  /* capped at one step: the second is counted, not built */
  g_autoptr(sc_explanation) cap = sc_egraph_explain(eg, t1, t2, 1);
  g_assert_cmpuint(sc_explanation_n_steps(cap), ==, 1);
  g_assert_cmpuint(sc_explanation_total(cap), ==, 2);

  /* an id explained against itself: no step; other classes: none */
  g_autoptr(sc_explanation) same = sc_egraph_explain(eg, t1, t1, 40);
  g_assert_cmpuint(sc_explanation_n_steps(same), ==, 0);
  sc_id c = ex_add(eg, OP_C, NULL, 0);
  g_assert_null(sc_egraph_explain(eg, t1, c, 40));
  for (int i = 0; i < 2; i++)
    sc_rewrite_free(rules[i]);
}

/* A nested left side matched through an asserted fact: y = g(a) (fact 7),
 * so f(g(?x)) => ?x matches f(y).  The rule's edge links the exact
 * instance f(g(a)), an alias of f(y) in its class, to a; the alias's
 * congruence edge is explained by the fact. */
static void test_explain_alias(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_egraph_enable_proofs(eg);
  sc_id a = ex_add(eg, OP_A, NULL, 0), y = ex_add(eg, OP_Y, NULL, 0);
  sc_id fy = ex_add(eg, OP_F, &y, 1), ga = ex_add(eg, OP_G, &a, 1);
  g_assert_true(sc_egraph_union(eg, y, ga, SC_JUST_FACT(7)));
  sc_egraph_rebuild(eg);
  uint32_t ids_before = sc_egraph_n_ids(eg), nodes_before = sc_egraph_n_nodes(eg);
  sc_rewrite *rw = rule_fg_cancel();
  g_autoptr(sc_runner) run = sc_runner_new(eg, NULL);
  g_assert_cmpint(sc_runner_run(run, &rw, 1), ==, SC_STOP_SATURATED);
  assert_check(eg);
  /* one alias id, no new e-node */
  g_assert_cmpuint(sc_egraph_n_ids(eg), ==, ids_before + 1);
  g_assert_cmpuint(sc_egraph_n_nodes(eg), ==, nodes_before);
  sc_id alias = ids_before;
  g_assert_false(sc_egraph_node_is_live(eg, alias));
  g_assert_cmpuint(sc_egraph_find(eg, alias), ==, sc_egraph_find(eg, fy));
  g_autoptr(sc_term) at = sc_egraph_proof_term(eg, alias);
  g_autofree char *atext = term_text(at);
  g_assert_cmpstr(atext, ==, "(f (g a))");
  /* adding the same exact term again finds the alias */
  g_assert_cmpuint(ex_add(eg, OP_F, &ga, 1), ==, alias);
  /* and sc_egraph_add still answers the class */
  g_assert_cmpuint(sc_egraph_add(eg, OP_F, 0, &ga, 1), ==, sc_egraph_find(eg, fy));

  g_autoptr(sc_explanation) ex = sc_egraph_explain(eg, fy, a, 40);
  g_autofree char *text = steps_text(ex);
  g_assert_cmpstr(text, ==, "(f y); (f (g a)) by fact 7; a by r0");
  sc_rewrite_free(rw);
}

static void test_check_detects(void) {
  g_autoptr(sc_egraph) eg = sc_egraph_new(NULL, NULL);
  sc_id a = leaf(eg, OP_A, 0), b = leaf(eg, OP_B, 0);
  un(eg, OP_F, a);
  un(eg, OP_F, b);
  sc_egraph_union(eg, a, b, SC_JUST_ASSERTED);
  g_autoptr(GError) err = NULL;
  g_assert_false(sc_egraph_check(eg, &err));
  g_assert_error(err, SC_EGRAPH_ERROR, SC_EGRAPH_ERROR_INVARIANT);
  g_assert_nonnull(strstr(err->message, "dirty"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/egraph/add/hashcons", test_hashcons);
  g_test_add_func("/egraph/rebuild/congruence", test_congruence);
  g_test_add_func("/egraph/rebuild/dup-same-class", test_dup_same_class);
  g_test_add_func("/egraph/index/op", test_op_index);
  g_test_add_func("/egraph/analysis/propagate", test_analysis_propagate);
  g_test_add_func("/egraph/analysis/conflict", test_analysis_conflict);
  g_test_add_func("/egraph/proof/forest", test_proof_forest);
  g_test_add_func("/egraph/explain/two-rules", test_explain_two_rules);
  g_test_add_func("/egraph/explain/alias", test_explain_alias);
  g_test_add_func("/egraph/check/dirty", test_check_detects);
  g_test_add_func("/egraph/random/differential", test_random);
  g_test_add_func("/egraph/random/analysis", test_random_analysis);
  return g_test_run();
}
