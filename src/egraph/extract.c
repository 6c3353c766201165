/* extract.c — cheapest-term extraction and smallest-terms enumeration.
 *
 * Extraction (egg's Extractor): costs start at +infinity and a bottom-up
 * fixpoint over all live nodes lowers a class's cost when one of its nodes,
 * all of whose children have finite costs, is strictly cheaper.  Only
 * strict improvements are taken, so for a monotone cost function the chosen
 * nodes form an acyclic graph; a cycle (non-monotone cost) makes term
 * building return NULL rather than loop.
 *
 * Enumeration counts, for every class reachable from the root through
 * nodes of non-zero weight, N(c, s) = the number of distinct terms of c of
 * size s, size by size (a node of weight w with children needs children
 * sizes summing to s - w, each >= 1, so size s only needs sizes < s and
 * cycles in the e-graph are harmless).  Distinct nodes of a class, or
 * distinct child terms, give distinct terms (a term is represented in at
 * most one class of a congruence-closed e-graph), so counts are exact.  It
 * stops at the first size where the root has k terms in total, then builds
 * each term by unranking: the j-th term of (c, s) is found by walking the
 * nodes of c in order and the children's size splits in order, with the
 * rank split in mixed radix.  Counts saturate at CAP, above any rank asked
 * for, which keeps every comparison and division exact where it matters.
 * The reachable classes and their nodes of non-zero weight are listed once
 * per enumeration (children as local indices, no lookup in the loops), and
 * each node keeps its table of children's split counts, extended as sizes
 * grow and read again when terms are built (enode, extend).
 *
 * Sizes are counted up to max_size only while terms of larger sizes can
 * exist (size_bound): a class none of whose nodes has all its children
 * with a term has no term (the productive classes are a least fixpoint);
 * when the productive nodes reachable from the root form no cycle, the
 * root has no term larger than the largest sum of weights down that
 * graph, and every count past it is 0.  A relation's enumeration over
 * fresh leaves often has no term at all, or a handful: without the bound
 * it counted all max_size sizes to find that out. */
#include "shardcheck/extract.h"
#include "egraph-private.h"

#include <math.h>

/* ---- extraction -------------------------------------------------------- */

struct sc_extractor {
  const sc_egraph *eg;
  double *cost;  /* by class id (canonical ids only meaningful) */
  sc_id *best;   /* chosen node by class id */
};

double sc_cost_ast_size(const sc_egraph *eg, sc_id node,
                        const double *child_costs, uint32_t n_children,
                        void *user) {
  double s = 1;
  for (uint32_t i = 0; i < n_children; i++)
    s += child_costs[i];
  return s;
}

sc_extractor *sc_extractor_new(const sc_egraph *eg, sc_cost_fn cost,
                               void *user) {
  g_return_val_if_fail(eg->clean, NULL);
  if (!cost)
    cost = sc_cost_ast_size;
  sc_extractor *ex = g_new0(sc_extractor, 1);
  ex->eg = eg;
  uint32_t n = eg->n_ids;
  ex->cost = g_new(double, n ? n : 1);
  ex->best = g_new(sc_id, n ? n : 1);
  for (uint32_t i = 0; i < n; i++) {
    ex->cost[i] = INFINITY;
    ex->best[i] = SC_ID_NONE;
  }
  double buf[16];
  gboolean changed = TRUE;
  while (changed) {
    changed = FALSE;
    for (sc_id node = 0; node < n; node++) {
      if (!eg->live[node])
        continue;
      uint32_t a = eg->node[node].arity;
      const sc_id *k = sc_eg_kids(eg, node);
      double *cc = a <= 16 ? buf : g_new(double, a);
      gboolean finite = TRUE;
      for (uint32_t i = 0; i < a && finite; i++) {
        cc[i] = ex->cost[k[i]];
        finite = isfinite(cc[i]);
      }
      if (finite) {
        double c = cost(eg, node, cc, a, user);
        sc_id cls = sc_egraph_find_const(eg, node);
        if (c < ex->cost[cls]) {
          ex->cost[cls] = c;
          ex->best[cls] = node;
          changed = TRUE;
        }
      }
      if (cc != buf)
        g_free(cc);
    }
  }
  return ex;
}

void sc_extractor_free(sc_extractor *ex) {
  if (!ex)
    return;
  g_free(ex->cost);
  g_free(ex->best);
  g_free(ex);
}

double sc_extractor_cost(const sc_extractor *ex, sc_id cls) {
  g_return_val_if_fail(cls < ex->eg->n_ids, INFINITY);
  return ex->cost[sc_egraph_find_const(ex->eg, cls)];
}

sc_id sc_extractor_best_node(const sc_extractor *ex, sc_id cls) {
  g_return_val_if_fail(cls < ex->eg->n_ids, SC_ID_NONE);
  return ex->best[sc_egraph_find_const(ex->eg, cls)];
}

/* state: 0 unvisited, 1 in progress, 2 done (index in at[]) */
static gboolean build(const sc_extractor *ex, sc_id cls, uint8_t *state,
                      uint32_t *at, sc_term *t) {
  if (state[cls] == 2)
    return TRUE;
  if (state[cls] == 1)
    return FALSE;
  state[cls] = 1;
  sc_id node = ex->best[cls];
  if (node == SC_ID_NONE)
    return FALSE;
  const sc_egraph *eg = ex->eg;
  uint32_t a = eg->node[node].arity;
  const sc_id *k = sc_eg_kids(eg, node);
  uint32_t *kid_at = g_new(uint32_t, a ? a : 1);
  gboolean ok = TRUE;
  for (uint32_t i = 0; i < a && ok; i++) {
    ok = build(ex, k[i], state, at, t);
    if (ok)
      kid_at[i] = at[k[i]];
  }
  if (ok) {
    at[cls] = sc_term_add(t, eg->node[node].op, eg->node[node].attr, kid_at, a);
    state[cls] = 2;
  }
  g_free(kid_at);
  return ok;
}

sc_term *sc_extractor_term(const sc_extractor *ex, sc_id cls) {
  g_return_val_if_fail(cls < ex->eg->n_ids, NULL);
  cls = sc_egraph_find_const(ex->eg, cls);
  if (!isfinite(ex->cost[cls]))
    return NULL;
  uint8_t *state = g_new0(uint8_t, ex->eg->n_ids);
  uint32_t *at = g_new(uint32_t, ex->eg->n_ids);
  sc_term *t = sc_term_new();
  if (!build(ex, cls, state, at, t)) {
    sc_term_free(t);
    t = NULL;
  }
  g_free(state);
  g_free(at);
  return t;
}

/* ---- enumeration ------------------------------------------------------- */

#define CAP ((uint64_t)1 << 62)

static inline uint64_t sat_add(uint64_t a, uint64_t b) {
  return (a >= CAP - b) ? CAP : a + b;
}

static inline uint64_t sat_mul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0)
    return 0;
  if (a >= CAP / b)
    return CAP;
  return a * b;
}

/* One node of a reachable class with a non-zero weight, in the class's
 * node order.  Its children are local class indices (lkids[kid_off..]).
 * Its convolution table holds, for every total x < dlen, D_j(x) = the
 * number of ways children j..arity-1 have sizes (each >= 1) summing to x,
 * at d[x * (arity + 1) + j] (D_arity(x) = [x == 0]).  Column x only
 * reads the counts of sizes <= x, all known once sizes up to x are
 * counted, so a column, once computed, never changes: each is computed
 * once per enumeration instead of once per use. */
typedef struct {
  sc_id n;
  uint32_t w, arity, kid_off;
  uint64_t *d;
  uint32_t dlen, dcap; /* columns computed, allocated */
} enode;

typedef struct {
  const sc_egraph *eg;
  GArray *classes;    /* local index -> class */
  GArray *first;      /* local index -> first enode (uint32_t), one more at the end */
  GArray *enodes;     /* enode, grouped by class in local order */
  GArray *lkids;      /* uint32_t: local index of each enode's children */
  GPtrArray *rows;    /* rows[s][local] = N(class, s); row 0 unused */
} enumer;

static inline uint64_t N(const enumer *e, uint32_t li, uint32_t s) {
  if (s == 0 || s >= e->rows->len)
    return 0;
  const uint64_t *row = g_ptr_array_index(e->rows, s);
  return row[li];
}

/* Computes the columns of X's table up to total T (every count of a size
 * <= T must be known). */
static void extend(const enumer *e, enode *x, uint32_t t) {
  uint32_t h = x->arity + 1;
  if (x->dlen > t)
    return;
  if (x->dcap <= t) {
    uint32_t cap = x->dcap ? x->dcap : 16;
    while (cap <= t)
      cap *= 2;
    x->d = g_renew(uint64_t, x->d, (gsize)cap * h);
    x->dcap = cap;
  }
  const uint32_t *kids = &g_array_index(e->lkids, uint32_t, x->kid_off);
  /* rows[y][li] = N(li, y) for 1 <= y < n_rows (row 0 unused) */
  const uint64_t *const *rows = (const uint64_t *const *)e->rows->pdata;
  uint32_t n_rows = e->rows->len;
  for (uint32_t c = x->dlen; c <= t; c++) {
    uint64_t *col = x->d + (gsize)c * h;
    col[x->arity] = c == 0;
    if (x->arity == 0)
      continue;
    /* the last child alone: D_{arity-1}(c) = N(kid, c), the only y with
     * D_arity(c - y) != 0 */
    col[x->arity - 1] = c >= 1 && c < n_rows ? rows[c][kids[x->arity - 1]] : 0;
    for (uint32_t j = x->arity - 1; j-- > 0;) {
      /* children j+1.. have sizes >= 1 each, so D_{j+1}(c - y) is 0 for
       * c - y < arity - 1 - j; and N(kid, y) is 0 for y >= n_rows */
      uint32_t rest_min = x->arity - 1 - j;
      uint64_t s = 0;
      uint32_t ymax = c > rest_min ? MIN(c - rest_min, n_rows - 1) : 0;
      for (uint32_t y = 1; y <= ymax; y++) {
        uint64_t rest = x->d[(gsize)(c - y) * h + j + 1];
        if (rest)
          s = sat_add(s, sat_mul(rows[y][kids[j]], rest));
      }
      col[j] = s;
    }
  }
  x->dlen = t + 1;
}

/* D_i(t) of X: ways children i.. have sizes summing to t. */
static inline uint64_t conv(enumer *e, enode *x, uint32_t i, uint32_t t) {
  extend(e, x, t);
  return x->d[(gsize)t * (x->arity + 1) + i];
}

static void count_size(enumer *e, uint32_t s, uint64_t *row) {
  for (guint li = 0; li < e->classes->len; li++) {
    uint32_t a = g_array_index(e->first, uint32_t, li);
    uint32_t b = g_array_index(e->first, uint32_t, li + 1);
    uint64_t total = 0;
    for (uint32_t i = a; i < b; i++) {
      enode *x = &g_array_index(e->enodes, enode, i);
      if (x->w > s)
        continue;
      if (x->arity == 0)
        total = sat_add(total, s == x->w);
      else
        total = sat_add(total, conv(e, x, 0, s - x->w));
    }
    row[li] = total;
  }
}

static uint32_t unrank(enumer *e, uint32_t li, uint32_t s, uint64_t j,
                       sc_term *t);

static void unrank_seq(enumer *e, enode *x, uint32_t i, uint32_t t,
                       uint64_t j, sc_term *term, uint32_t *out) {
  uint32_t m = x->arity;
  const uint32_t *kids = &g_array_index(e->lkids, uint32_t, x->kid_off);
  if (i == m - 1) {
    out[i] = unrank(e, kids[i], t, j, term);
    return;
  }
  for (uint32_t s1 = 1; s1 + (m - 1 - i) <= t; s1++) {
    uint64_t a = N(e, kids[i], s1);
    if (!a)
      continue;
    uint64_t b = conv(e, x, i + 1, t - s1);
    uint64_t block = sat_mul(a, b);
    if (j < block) {
      out[i] = unrank(e, kids[i], s1, j / b, term);
      unrank_seq(e, x, i + 1, t - s1, j % b, term, out);
      return;
    }
    j -= block;
  }
  g_assert_not_reached();
}

static uint32_t unrank(enumer *e, uint32_t li, uint32_t s, uint64_t j,
                       sc_term *t) {
  const sc_egraph *eg = e->eg;
  uint32_t a = g_array_index(e->first, uint32_t, li);
  uint32_t b = g_array_index(e->first, uint32_t, li + 1);
  for (uint32_t i = a; i < b; i++) {
    enode *x = &g_array_index(e->enodes, enode, i);
    if (x->w > s)
      continue;
    uint64_t cnt = x->arity == 0 ? (s == x->w) : conv(e, x, 0, s - x->w);
    if (j >= cnt) {
      j -= cnt;
      continue;
    }
    sc_id n = x->n;
    if (x->arity == 0)
      return sc_term_add(t, eg->node[n].op, eg->node[n].attr, NULL, 0);
    uint32_t buf[16];
    uint32_t *kid_at = x->arity <= G_N_ELEMENTS(buf) ? buf : g_new(uint32_t, x->arity);
    unrank_seq(e, x, 0, s - x->w, j, t, kid_at);
    uint32_t r = sc_term_add(t, eg->node[n].op, eg->node[n].attr, kid_at, x->arity);
    if (kid_at != buf)
      g_free(kid_at);
    return r;
  }
  g_assert_not_reached();
  return SC_ID_NONE;
}

/* The largest size of a term of local class LI (0 for none), or
 * UINT32_MAX when a cycle of productive nodes is reachable from it (terms
 * of unbounded size).  STATE: 0 unvisited, 1 on the path, 2 done (its size
 * in MAXSZ).  Only productive nodes (every child productive) count. */
static uint32_t max_term_size(const enumer *e, const gboolean *productive, uint8_t *state,
                              uint32_t *maxsz, uint32_t li) {
  if (state[li] == 2)
    return maxsz[li];
  if (state[li] == 1)
    return UINT32_MAX;
  state[li] = 1;
  uint32_t best = 0;
  uint32_t a = g_array_index(e->first, uint32_t, li);
  uint32_t b = g_array_index(e->first, uint32_t, li + 1);
  for (uint32_t i = a; i < b && best != UINT32_MAX; i++) {
    const enode *x = &g_array_index(e->enodes, enode, i);
    const uint32_t *kids = &g_array_index(e->lkids, uint32_t, x->kid_off);
    gboolean ok = TRUE;
    for (uint32_t j = 0; j < x->arity && ok; j++)
      ok = productive[kids[j]];
    if (!ok)
      continue;
    uint64_t sz = x->w;
    for (uint32_t j = 0; j < x->arity && sz < UINT32_MAX; j++) {
      uint32_t m = max_term_size(e, productive, state, maxsz, kids[j]);
      sz = m == UINT32_MAX ? UINT32_MAX : sz + m;
    }
    best = (uint32_t)MIN(MAX(best, sz), (uint64_t)UINT32_MAX);
  }
  state[li] = 2;
  maxsz[li] = best;
  return best;
}

/* The largest size at which the root (local class 0) may have a term:
 * 0 when it has none, MAX_SIZE when a productive cycle makes sizes
 * unbounded; exact otherwise (see the header). */
static uint32_t size_bound(const enumer *e, uint32_t max_size) {
  guint nc = e->classes->len, nn = e->enodes->len;
  gboolean *productive = g_new0(gboolean, nc);
  uint32_t *pending = g_new(uint32_t, nn ? nn : 1);  /* children not yet productive */
  uint32_t *owner = g_new(uint32_t, nn ? nn : 1);    /* local class of each enode */
  uint32_t *occ_first = g_new0(uint32_t, nc + 1);    /* enodes by child class (CSR) */
  uint32_t *occ = g_new(uint32_t, e->lkids->len ? e->lkids->len : 1);
  GArray *queue = g_array_new(FALSE, FALSE, sizeof(uint32_t)); /* productive classes */
  for (guint li = 0; li < nc; li++)
    for (uint32_t i = g_array_index(e->first, uint32_t, li);
         i < g_array_index(e->first, uint32_t, li + 1); i++)
      owner[i] = li;
  for (guint q = 0; q < e->lkids->len; q++)
    occ_first[g_array_index(e->lkids, uint32_t, q) + 1]++;
  for (guint li = 0; li < nc; li++)
    occ_first[li + 1] += occ_first[li];
  uint32_t *fill = g_memdup2(occ_first, (nc + 1) * sizeof(uint32_t));
  for (guint i = 0; i < nn; i++) {
    const enode *x = &g_array_index(e->enodes, enode, i);
    pending[i] = x->arity;
    for (uint32_t j = 0; j < x->arity; j++)
      occ[fill[g_array_index(e->lkids, uint32_t, x->kid_off + j)]++] = i;
    if (x->arity == 0 && !productive[owner[i]]) {
      productive[owner[i]] = TRUE;
      g_array_append_val(queue, owner[i]);
    }
  }
  for (guint q = 0; q < queue->len; q++) {
    uint32_t li = g_array_index(queue, uint32_t, q);
    for (uint32_t o = occ_first[li]; o < occ_first[li + 1]; o++) {
      uint32_t i = occ[o];
      if (--pending[i] == 0 && !productive[owner[i]]) {
        productive[owner[i]] = TRUE;
        g_array_append_val(queue, owner[i]);
      }
    }
  }
  uint32_t bound = 0;
  if (nc > 0 && productive[0]) {
    uint8_t *state = g_new0(uint8_t, nc);
    uint32_t *maxsz = g_new0(uint32_t, nc);
    bound = MIN(max_term_size(e, productive, state, maxsz, 0), max_size);
    g_free(state);
    g_free(maxsz);
  }
  g_array_unref(queue);
  g_free(fill);
  g_free(occ);
  g_free(occ_first);
  g_free(owner);
  g_free(pending);
  g_free(productive);
  return bound;
}

GPtrArray *sc_egraph_enumerate(const sc_egraph *eg, sc_id cls, uint32_t k,
                               uint32_t max_size, sc_weight_fn weight,
                               void *user, GArray *sizes) {
  GPtrArray *res = g_ptr_array_new_with_free_func((GDestroyNotify)sc_term_free);
  g_return_val_if_fail(eg->clean, res);
  g_return_val_if_fail(cls < eg->n_ids, res);
  g_return_val_if_fail(sizes == NULL ||
                           g_array_get_element_size(sizes) == sizeof(uint32_t),
                       res);
  if (k == 0)
    return res;
  max_size = MIN(max_size, 4096u);
  cls = sc_egraph_find_const(eg, cls);
  enumer e = {eg, g_array_new(FALSE, FALSE, sizeof(sc_id)),
              g_array_new(FALSE, FALSE, sizeof(uint32_t)),
              g_array_new(FALSE, FALSE, sizeof(enode)),
              g_array_new(FALSE, FALSE, sizeof(uint32_t)),
              g_ptr_array_new_with_free_func(g_free)};
  /* reachable classes through nodes of non-zero weight, breadth first;
   * each class's nodes of non-zero weight, with local children */
  GHashTable *local = g_hash_table_new(NULL, NULL); /* class + 1 -> local + 1 */
  g_hash_table_insert(local, GUINT_TO_POINTER(cls + 1), GUINT_TO_POINTER(1));
  g_array_append_val(e.classes, cls);
  for (guint q = 0; q < e.classes->len; q++) {
    sc_id c = g_array_index(e.classes, sc_id, q);
    g_array_append_val(e.first, e.enodes->len);
    const sc_vec *v = &eg->nodes[c];
    for (uint32_t i = 0; i < v->len; i++) {
      sc_id n = v->v[i];
      uint32_t w = weight ? weight(eg, n, user) : 1;
      if (w == 0)
        continue;
      enode x = {n, w, eg->node[n].arity, e.lkids->len, NULL, 0, 0};
      const sc_id *kids = sc_eg_kids(eg, n);
      for (uint32_t j = 0; j < x.arity; j++) {
        gpointer key = GUINT_TO_POINTER(kids[j] + 1);
        uint32_t lk = GPOINTER_TO_UINT(g_hash_table_lookup(local, key));
        if (lk == 0) {
          g_array_append_val(e.classes, kids[j]);
          lk = e.classes->len;
          g_hash_table_insert(local, key, GUINT_TO_POINTER(lk));
        }
        lk--;
        g_array_append_val(e.lkids, lk);
      }
      g_array_append_val(e.enodes, x);
    }
  }
  g_array_append_val(e.first, e.enodes->len);
  g_hash_table_unref(local);
  g_ptr_array_add(e.rows, NULL); /* size 0 */
  uint64_t total = 0;
  uint32_t last = 0;
  max_size = size_bound(&e, max_size);
  for (uint32_t s = 1; s <= max_size && total < k; s++) {
    uint64_t *row = g_new0(uint64_t, e.classes->len);
    count_size(&e, s, row);
    g_ptr_array_add(e.rows, row);
    total = sat_add(total, row[0]);
    last = s;
  }
  uint32_t got = 0;
  for (uint32_t s = 1; s <= last && got < k; s++) {
    uint64_t n = ((uint64_t *)g_ptr_array_index(e.rows, s))[0];
    for (uint64_t j = 0; j < n && got < k; j++, got++) {
      sc_term *t = sc_term_new();
      /* a term of size s has at most s nodes (every node listed weighs at
       * least 1), so at most s - 1 child references */
      sc_term_reserve(t, s, s);
      unrank(&e, 0, s, j, t);
      g_ptr_array_add(res, t);
      if (sizes)
        g_array_append_val(sizes, s);
    }
  }
  for (guint i = 0; i < e.enodes->len; i++)
    g_free(g_array_index(e.enodes, enode, i).d);
  g_array_unref(e.classes);
  g_array_unref(e.first);
  g_array_unref(e.enodes);
  g_array_unref(e.lkids);
  g_ptr_array_unref(e.rows);
  return res;
}
