/* egraph.c — e-nodes, hash-cons, union-find, classes, deferred rebuild,
 * the analysis seam, the op index, the proof forest and the invariant
 * checker.  See egraph.h for the contract and invariants I1-I5,
 * egraph-private.h for the table layout.
 *
 * Rebuild (egg's): a union merges the two classes' node and parent lists at
 * once (the larger class survives), and queues the absorbed class's parents,
 * whose stored keys now name a non-canonical child.  rebuild() pops them,
 * re-files each under its canonical key and, when that key is already taken
 * by another live node, marks the popped node dead and unions the two
 * classes (congruence), which may queue more.  Then the analysis of parents
 * whose children's data changed is re-made and merged upwards, and finally
 * the node lists of every class touched are filtered of dead nodes and
 * sorted by (op, node id).
 *
 * Proofs (egg's explain.rs, only when enabled): every union links the two
 * ids it was given in the proof forest; every id records its original
 * children (its proof term) and is filed in the exact memo; an exact add
 * of a node whose canonical key exists with other original children
 * makes an alias id (dead, in no list) joined to that node by a
 * congruence edge, so exact adds create no e-node that a plain add would
 * not.  I6 (sc_egraph_check): proof terms lie in their ids' classes. */
#include "egraph-private.h"

#include "shardcheck/extract.h"

#include <stdlib.h>

G_DEFINE_QUARK(sc-egraph-error-quark, sc_egraph_error)

/* A memo slot holds (hash << 32 | node id), so probes compare hashes
 * without touching the node tables; the load factor stays <= 1/2. */
#define MEMO_EMPTY UINT64_MAX
#define SLOT(h, n) (((uint64_t)(h) << 32) | (n))

/* ---- hashing ----------------------------------------------------------- */

static inline uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

static inline uint32_t key_hash(uint32_t op, uint32_t attr, const sc_id *kids,
                                uint32_t n) {
  uint32_t h = mix32(op * 0x9e3779b1u + 0x632be5abu);
  h = mix32(h ^ (attr + 0x85ebca77u));
  for (uint32_t i = 0; i < n; i++)
    h = mix32(h ^ (kids[i] + 0x27d4eb2fu * (i + 1)));
  return h;
}

static inline gboolean key_equal(const sc_egraph *eg, sc_id node, uint32_t op,
                                 uint32_t attr, const sc_id *kids,
                                 uint32_t n) {
  if (eg->node[node].op != op || eg->node[node].attr != attr || eg->node[node].arity != n)
    return FALSE;
  const sc_id *nk = sc_eg_kids(eg, node);
  for (uint32_t i = 0; i < n; i++)
    if (nk[i] != kids[i])
      return FALSE;
  return TRUE;
}

/* ---- memo -------------------------------------------------------------- */

static sc_id memo_find(const sc_egraph *eg, uint32_t h, uint32_t op,
                       uint32_t attr, const sc_id *kids, uint32_t n) {
  uint32_t i = h & eg->memo_mask;
  for (;;) {
    uint64_t m = eg->memo[i];
    if (m == MEMO_EMPTY)
      return SC_ID_NONE;
    if ((uint32_t)(m >> 32) == h &&
        key_equal(eg, (sc_id)m, op, attr, kids, n))
      return (sc_id)m;
    i = (i + 1) & eg->memo_mask;
  }
}

static void memo_insert_raw(sc_egraph *eg, uint64_t slot) {
  uint32_t i = (uint32_t)(slot >> 32) & eg->memo_mask;
  while (eg->memo[i] != MEMO_EMPTY)
    i = (i + 1) & eg->memo_mask;
  eg->memo[i] = slot;
}

static void memo_insert(sc_egraph *eg, sc_id node) {
  if ((uint64_t)(eg->memo_count + 1) * 2 > (uint64_t)(eg->memo_mask + 1)) {
    uint32_t old_cap = eg->memo_mask + 1;
    uint64_t *old = eg->memo;
    g_assert(old_cap <= (UINT32_MAX >> 1));
    eg->memo_mask = old_cap * 2 - 1;
    eg->memo = g_new(uint64_t, (size_t)old_cap * 2);
    memset(eg->memo, 0xff, sizeof(uint64_t) * old_cap * 2);
    for (uint32_t i = 0; i < old_cap; i++)
      if (old[i] != MEMO_EMPTY)
        memo_insert_raw(eg, old[i]);
    g_free(old);
  }
  memo_insert_raw(eg, SLOT(eg->node[node].hash, node));
  eg->memo_count++;
}

static void memo_remove(sc_egraph *eg, sc_id node) {
  uint32_t mask = eg->memo_mask;
  uint64_t want = SLOT(eg->node[node].hash, node);
  uint32_t i = eg->node[node].hash & mask;
  while (eg->memo[i] != want) {
    g_assert(eg->memo[i] != MEMO_EMPTY);
    i = (i + 1) & mask;
  }
  /* backward-shift deletion keeps probe sequences unbroken */
  uint32_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    uint64_t m = eg->memo[j];
    if (m == MEMO_EMPTY)
      break;
    uint32_t k = (uint32_t)(m >> 32) & mask;
    gboolean move = (j > i) ? (k <= i || k > j) : (k <= i && k > j);
    if (move) {
      eg->memo[i] = m;
      i = j;
    }
  }
  eg->memo[i] = MEMO_EMPTY;
  eg->memo_count--;
}

uint32_t sc_eg_advance_epoch(sc_egraph *eg) {
  return ++eg->epoch;
}

/* Prefetch for a lookup that will come soon (the runner's apply phase is
 * bound by cache misses on the memo and the node records).  Stage 0 pulls
 * the memo slot; stage 1 reads it (by then cached) and pulls the record of
 * the node found there.  Purely a hint: stale ids only waste the fetch. */
void sc_eg_prefetch_key(const sc_egraph *eg, uint32_t op, uint32_t attr,
                        const sc_id *kids, uint32_t n, int stage) {
#if defined(__GNUC__)
  uint32_t h = key_hash(op, attr, kids, n);
  uint32_t i = h & eg->memo_mask;
  if (stage == 0) {
    __builtin_prefetch(&eg->memo[i]);
    return;
  }
  for (int probe = 0; probe < 4; probe++) {
    uint64_t m = eg->memo[i];
    if (m == MEMO_EMPTY)
      return;
    if ((uint32_t)(m >> 32) == h) {
      __builtin_prefetch(&eg->node[(uint32_t)m]);
      return;
    }
    i = (i + 1) & eg->memo_mask;
  }
#else
  (void)eg, (void)op, (void)attr, (void)kids, (void)n, (void)stage;
#endif
}

/* ---- tables ------------------------------------------------------------ */

static void grow_ids(sc_egraph *eg) {
  uint32_t cap = eg->cap_ids ? eg->cap_ids * 2 : 64;
  g_assert(cap > eg->cap_ids && cap < SC_ID_NONE - 4);
  eg->node = g_renew(sc_node, eg->node, cap);
  eg->live = g_renew(uint8_t, eg->live, cap);
  eg->stamp = g_renew(uint32_t, eg->stamp, cap);
  eg->cstamp = g_renew(uint32_t, eg->cstamp, cap);
  eg->uf = g_renew(sc_id, eg->uf, cap);
  eg->nodes = g_renew(sc_vec, eg->nodes, cap);
  eg->parents = g_renew(sc_vec, eg->parents, cap);
  eg->touched = g_renew(uint8_t, eg->touched, cap);
  eg->opmask = g_renew(uint64_t, eg->opmask, cap);
  if (eg->has_an && eg->an.data_size)
    eg->data = g_realloc_n(eg->data, cap, eg->an.data_size);
  if (eg->proofs) {
    eg->proof_parent = g_renew(sc_id, eg->proof_parent, cap);
    eg->proof_just = g_renew(uint32_t, eg->proof_just, cap);
    eg->proof_fwd = g_renew(uint8_t, eg->proof_fwd, cap);
    eg->okoff = g_renew(uint32_t, eg->okoff, cap);
  }
  eg->cap_ids = cap;
}

static inline void *data_at(const sc_egraph *eg, sc_id c) {
  return eg->data + (size_t)c * eg->an.data_size;
}

sc_egraph *sc_egraph_new(const sc_analysis *analysis, void *user) {
  sc_egraph *eg = g_new0(sc_egraph, 1);
  if (analysis) {
    g_return_val_if_fail(analysis->merge != NULL || analysis->data_size == 0,
                         NULL);
    eg->has_an = TRUE;
    eg->an = *analysis;
    eg->an_user = user;
    if (eg->an.data_size) {
      eg->scratch_a = g_malloc0(eg->an.data_size);
      eg->scratch_b = g_malloc0(eg->an.data_size);
    }
  }
  eg->memo_mask = 255;
  eg->memo = g_new(uint64_t, 256);
  memset(eg->memo, 0xff, sizeof(uint64_t) * 256);
  eg->opmap_mask = 63;
  eg->opmap = g_new(uint64_t, 64);
  memset(eg->opmap, 0xff, sizeof(uint64_t) * 64);
  eg->clean = TRUE;
  return eg;
}

void sc_egraph_free(sc_egraph *eg) {
  if (!eg)
    return;
  for (uint32_t i = 0; i < eg->n_ids; i++) {
    g_free(eg->nodes[i].v);
    g_free(eg->parents[i].v);
  }
  for (uint32_t s = 0; s < eg->n_slots; s++)
    g_free(eg->op_classes[s].v);
  g_free(eg->op_classes);
  g_free(eg->op_stamp);
  g_free(eg->op_epoch);
  g_free(eg->opmap);
  g_free(eg->node);
  g_free(eg->live);
  g_free(eg->stamp);
  g_free(eg->cstamp);
  g_free(eg->kids);
  g_free(eg->uf);
  g_free(eg->nodes);
  g_free(eg->parents);
  g_free(eg->touched);
  g_free(eg->opmask);
  g_free(eg->data);
  g_free(eg->memo);
  sc_vec_clear(&eg->pending);
  sc_vec_clear(&eg->apending);
  sc_vec_clear(&eg->touched_list);
  sc_vec_clear(&eg->tmp);
  sc_vec_clear(&eg->otmp);
  g_free(eg->scratch_a);
  g_free(eg->scratch_b);
  g_free(eg->cdata);
  g_free(eg->proof_parent);
  g_free(eg->proof_just);
  g_free(eg->proof_fwd);
  g_free(eg->okoff);
  g_free(eg->okids);
  g_free(eg->umemo);
  g_free(eg);
}

void sc_egraph_set_conflict_handler(sc_egraph *eg, sc_conflict_fn fn,
                                    void *user) {
  eg->conflict_fn = fn;
  eg->conflict_user = user;
}

void sc_egraph_set_merge_listener(sc_egraph *eg, sc_merge_listener_fn fn,
                                  void *user) {
  eg->listener_fn = fn;
  eg->listener_user = user;
}

void sc_egraph_enable_proofs(sc_egraph *eg) {
  g_return_if_fail(eg->n_ids == 0);
  if (eg->proofs)
    return;
  eg->proofs = TRUE;
  eg->umemo_mask = 255;
  eg->umemo = g_new(uint64_t, 256);
  memset(eg->umemo, 0xff, sizeof(uint64_t) * 256);
}

gboolean sc_egraph_proofs_enabled(const sc_egraph *eg) {
  return eg->proofs;
}

/* ---- op index ---------------------------------------------------------- */

static void opmap_insert_raw(uint64_t *map, uint32_t mask, uint64_t e) {
  uint32_t i = sc_eg_opmap_hash((uint32_t)(e >> 32)) & mask;
  while (map[i] != SC_EG_OPMAP_EMPTY)
    i = (i + 1) & mask;
  map[i] = e;
}

/* The slot of OP in the op index, created when CREATE (SC_ID_NONE when
 * absent and not created). */
static uint32_t op_slot(sc_egraph *eg, uint32_t op, gboolean create) {
  uint32_t s = sc_eg_op_slot(eg, op);
  if (s != SC_ID_NONE || !create)
    return s;
  if (op == UINT32_MAX)
    return SC_ID_NONE; /* not representable as a key; never a real op */
  if (eg->n_slots == eg->cap_slots) {
    eg->cap_slots = eg->cap_slots ? eg->cap_slots * 2 : 16;
    eg->op_classes = g_renew(sc_vec, eg->op_classes, eg->cap_slots);
    eg->op_stamp = g_renew(uint64_t, eg->op_stamp, eg->cap_slots);
    eg->op_epoch = g_renew(uint32_t, eg->op_epoch, eg->cap_slots);
  }
  s = eg->n_slots++;
  memset(&eg->op_classes[s], 0, sizeof(sc_vec));
  eg->op_stamp[s] = UINT64_MAX;
  eg->op_epoch[s] = 0;
  if ((uint64_t)eg->n_slots * 2 > (uint64_t)eg->opmap_mask + 1) {
    uint32_t old_cap = eg->opmap_mask + 1;
    uint64_t *old = eg->opmap;
    eg->opmap_mask = old_cap * 2 - 1;
    eg->opmap = g_new(uint64_t, (size_t)old_cap * 2);
    memset(eg->opmap, 0xff, sizeof(uint64_t) * old_cap * 2);
    for (uint32_t i = 0; i < old_cap; i++)
      if (old[i] != SC_EG_OPMAP_EMPTY)
        opmap_insert_raw(eg->opmap, eg->opmap_mask, old[i]);
    g_free(old);
  }
  opmap_insert_raw(eg->opmap, eg->opmap_mask, (uint64_t)op << 32 | s);
  return s;
}

/* A node's key or class changed: stamp it with the epoch, and its op. */
static void stamp_node(sc_egraph *eg, sc_id n) {
  eg->stamp[n] = eg->epoch;
  uint32_t s = op_slot(eg, eg->node[n].op, TRUE);
  if (s != SC_ID_NONE)
    eg->op_epoch[s] = eg->epoch;
}

void sc_egraph_near_changed(const sc_egraph *eg, uint32_t since, uint8_t *near,
                            sc_vec *front, sc_vec *next) {
  memset(near, SC_NEAR_FAR, eg->n_ids);
  front->len = 0;
  for (sc_id c = 0; c < eg->n_ids; c++)
    if (eg->uf[c] == c && eg->cstamp[c] >= since) {
      near[c] = 0;
      sc_vec_push(front, c);
    }
  for (uint8_t d = 1; d <= SC_NEAR_MAX && front->len; d++) {
    next->len = 0;
    for (uint32_t j = 0; j < front->len; j++) {
      const sc_vec *pv = &eg->parents[front->v[j]];
      for (uint32_t i = 0; i < pv->len; i++) {
        sc_id p = sc_egraph_find_const(eg, pv->v[i]);
        if (near[p] > d) {
          near[p] = d;
          sc_vec_push(next, p);
        }
      }
    }
    sc_vec t = *front;
    *front = *next;
    *next = t;
  }
}

uint32_t sc_eg_op_epoch(const sc_egraph *eg, uint32_t op) {
  uint32_t s = sc_eg_op_slot(eg, op);
  return s != SC_ID_NONE ? eg->op_epoch[s] : 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

const sc_id *sc_egraph_classes_with_op(const sc_egraph *ceg, uint32_t op,
                                       uint32_t *n_classes) {
  sc_egraph *eg = (sc_egraph *)ceg; /* the index is a cache */
  *n_classes = 0;
  g_return_val_if_fail(eg->clean, NULL);
  uint32_t s = op_slot(eg, op, FALSE);
  if (s == SC_ID_NONE)
    return NULL;
  sc_vec *v = &eg->op_classes[s];
  if (eg->op_stamp[s] != eg->n_unions) {
    for (uint32_t i = 0; i < v->len; i++)
      v->v[i] = sc_eg_find(eg, v->v[i]);
    qsort(v->v, v->len, sizeof(uint32_t), cmp_u32);
    uint32_t w = 0;
    for (uint32_t i = 0; i < v->len; i++)
      if (w == 0 || v->v[w - 1] != v->v[i])
        v->v[w++] = v->v[i];
    v->len = w;
    eg->op_stamp[s] = eg->n_unions;
  }
  *n_classes = v->len;
  return v->v;
}

/* ---- add --------------------------------------------------------------- */

sc_id sc_egraph_find(sc_egraph *eg, sc_id id) {
  g_return_val_if_fail(id < eg->n_ids, SC_ID_NONE);
  return sc_eg_find(eg, id);
}

sc_id sc_egraph_find_const(const sc_egraph *eg, sc_id id) {
  g_return_val_if_fail(id < eg->n_ids, SC_ID_NONE);
  while (eg->uf[id] != id)
    id = eg->uf[id];
  return id;
}

static void make_data(sc_egraph *eg, sc_id node, void *out) {
  uint32_t n = eg->node[node].arity;
  if (n > eg->cdata_cap) {
    eg->cdata_cap = MAX(n, eg->cdata_cap * 2);
    eg->cdata = g_renew(const void *, eg->cdata, eg->cdata_cap);
  }
  const sc_id *k = sc_eg_kids(eg, node);
  for (uint32_t i = 0; i < n; i++)
    eg->cdata[i] = data_at(eg, sc_eg_find(eg, k[i]));
  eg->an.make(eg, eg->node[node].op, eg->node[node].attr, k, n, eg->cdata, out,
              eg->an_user);
}

sc_id sc_egraph_lookup(const sc_egraph *eg, uint32_t op, uint32_t attr,
                       const sc_id *children, uint32_t n_children) {
  sc_id stack_buf[8];
  sc_id *k = n_children <= 8 ? stack_buf : g_new(sc_id, n_children);
  for (uint32_t i = 0; i < n_children; i++) {
    if (children[i] >= eg->n_ids) {
      if (k != stack_buf)
        g_free(k);
      return SC_ID_NONE;
    }
    k[i] = sc_egraph_find_const(eg, children[i]);
  }
  sc_id m = memo_find(eg, key_hash(op, attr, k, n_children), op, attr, k,
                      n_children);
  if (k != stack_buf)
    g_free(k);
  return m == SC_ID_NONE ? SC_ID_NONE : sc_egraph_find_const(eg, m);
}

/* ---- the exact memo (proofs) ------------------------------------------ */

/* Original keys (op, attr, children as given) -> id, for every id a proof
 * term was made for; slots as in the memo.  Several ids may share a key
 * (a node added again while the e-graph was dirty): lookups return one. */
static gboolean okey_equal(const sc_egraph *eg, sc_id id, uint32_t op,
                           uint32_t attr, const sc_id *kids, uint32_t n) {
  if (eg->node[id].op != op || eg->node[id].attr != attr ||
      eg->node[id].arity != n)
    return FALSE;
  return n == 0 || memcmp(sc_eg_okids(eg, id), kids, n * sizeof(sc_id)) == 0;
}

static sc_id umemo_find(const sc_egraph *eg, uint32_t h, uint32_t op,
                        uint32_t attr, const sc_id *kids, uint32_t n) {
  uint32_t i = h & eg->umemo_mask;
  for (;;) {
    uint64_t m = eg->umemo[i];
    if (m == MEMO_EMPTY)
      return SC_ID_NONE;
    if ((uint32_t)(m >> 32) == h && okey_equal(eg, (sc_id)m, op, attr, kids, n))
      return (sc_id)m;
    i = (i + 1) & eg->umemo_mask;
  }
}

static void umemo_insert(sc_egraph *eg, uint32_t h, sc_id id) {
  if ((uint64_t)(eg->umemo_count + 1) * 2 > (uint64_t)(eg->umemo_mask + 1)) {
    uint32_t old_cap = eg->umemo_mask + 1;
    uint64_t *old = eg->umemo;
    g_assert(old_cap <= (UINT32_MAX >> 1));
    eg->umemo_mask = old_cap * 2 - 1;
    eg->umemo = g_new(uint64_t, (size_t)old_cap * 2);
    memset(eg->umemo, 0xff, sizeof(uint64_t) * old_cap * 2);
    for (uint32_t i = 0; i < old_cap; i++) {
      if (old[i] == MEMO_EMPTY)
        continue;
      uint32_t j = (uint32_t)(old[i] >> 32) & eg->umemo_mask;
      while (eg->umemo[j] != MEMO_EMPTY)
        j = (j + 1) & eg->umemo_mask;
      eg->umemo[j] = old[i];
    }
    g_free(old);
  }
  uint32_t i = h & eg->umemo_mask;
  while (eg->umemo[i] != MEMO_EMPTY)
    i = (i + 1) & eg->umemo_mask;
  eg->umemo[i] = SLOT(h, id);
  eg->umemo_count++;
}

/* Records the original children of new id ID (in eg->otmp) and files it
 * in the exact memo. */
static void record_original(sc_egraph *eg, sc_id id, uint32_t op,
                            uint32_t attr, const sc_id *orig, uint32_t n) {
  if (eg->n_okids + n > eg->cap_okids) {
    size_t cap = eg->cap_okids ? eg->cap_okids : 256;
    while (cap < eg->n_okids + n)
      cap *= 2;
    g_assert(cap <= UINT32_MAX);
    eg->okids = g_renew(sc_id, eg->okids, cap);
    eg->cap_okids = cap;
  }
  eg->okoff[id] = (uint32_t)eg->n_okids;
  if (n)
    memcpy(eg->okids + eg->n_okids, orig, n * sizeof(sc_id));
  eg->n_okids += n;
  eg->proof_parent[id] = SC_ID_NONE;
  eg->proof_just[id] = 0;
  eg->proof_fwd[id] = 0;
  umemo_insert(eg, key_hash(op, attr, orig, n), id);
}

/* ---- new ids ----------------------------------------------------------- */

/* A new id with node record (op, attr, k): the caller makes it a live
 * node or an alias. */
static sc_id new_id(sc_egraph *eg, uint32_t op, uint32_t attr, uint32_t h,
                    const sc_id *k, uint32_t n_children) {
  if (eg->n_ids == eg->cap_ids)
    grow_ids(eg);
  sc_id n = eg->n_ids++;
  sc_node *r = &eg->node[n];
  r->op = op;
  r->attr = attr;
  r->arity = n_children;
  r->hash = h;
  r->k[0] = r->k[1] = 0;
  if (n_children <= 2) {
    for (uint32_t i = 0; i < n_children; i++)
      r->k[i] = k[i];
  } else {
    if (eg->n_kids + n_children > eg->cap_kids) {
      size_t cap = eg->cap_kids ? eg->cap_kids : 256;
      while (cap < eg->n_kids + n_children)
        cap *= 2;
      g_assert(cap <= UINT32_MAX);
      eg->kids = g_renew(sc_id, eg->kids, cap);
      eg->cap_kids = cap;
    }
    r->k[0] = (uint32_t)eg->n_kids;
    memcpy(eg->kids + eg->n_kids, k, n_children * sizeof(sc_id));
    eg->n_kids += n_children;
  }
  eg->touched[n] = 0;
  stamp_node(eg, n);
  eg->cstamp[n] = eg->epoch;
  memset(&eg->nodes[n], 0, sizeof(sc_vec));
  memset(&eg->parents[n], 0, sizeof(sc_vec));
  eg->opmask[n] = 0;
  return n;
}

static void proof_link(sc_egraph *eg, sc_id a, sc_id b, uint32_t just);

sc_id sc_eg_exact_of(sc_egraph *eg, sc_id node, const sc_id *kids) {
  g_assert(eg->proofs);
  uint32_t op = eg->node[node].op, attr = eg->node[node].attr;
  uint32_t n = eg->node[node].arity;
  if (okey_equal(eg, node, op, attr, kids, n))
    return node;
  uint32_t h = key_hash(op, attr, kids, n);
  sc_id root = sc_eg_find(eg, node);
  sc_id x = umemo_find(eg, h, op, attr, kids, n);
  if (x != SC_ID_NONE && sc_eg_find(eg, x) == root)
    return x;
  /* an alias: an id for this exact term, in NODE's class but in no node
   * list, memo or parent list (egg's add_uncanonical).  Its children
   * equal NODE's pairwise, which the congruence edge stands for. */
  eg->otmp.len = 0;
  sc_vec_reserve(&eg->otmp, n);
  if (n)
    memcpy(eg->otmp.v, kids, n * sizeof(sc_id));
  sc_id a = new_id(eg, op, attr, h, eg->otmp.v, n);
  eg->live[a] = 0;
  eg->uf[a] = root;
  record_original(eg, a, op, attr, eg->otmp.v, n);
  proof_link(eg, a, node, SC_JUST_CONGRUENCE);
  return a;
}

static sc_id add_impl(sc_egraph *eg, uint32_t op, uint32_t attr,
                      const sc_id *children, uint32_t n_children,
                      gboolean exact) {
  g_return_val_if_fail(n_children == 0 || children != NULL, SC_ID_NONE);
  eg->tmp.len = 0;
  sc_vec_reserve(&eg->tmp, n_children);
  for (uint32_t i = 0; i < n_children; i++) {
    g_return_val_if_fail(children[i] < eg->n_ids, SC_ID_NONE);
    eg->tmp.v[i] = sc_eg_find(eg, children[i]);
  }
  const sc_id *k = eg->tmp.v;
  uint32_t h = key_hash(op, attr, k, n_children);
  sc_id m = memo_find(eg, h, op, attr, k, n_children);
  if (m != SC_ID_NONE)
    return exact && eg->proofs ? sc_eg_exact_of(eg, m, children)
                               : sc_eg_find(eg, m);
  if (eg->proofs) {
    /* children may point into tables that grow below */
    eg->otmp.len = 0;
    sc_vec_reserve(&eg->otmp, n_children);
    if (n_children)
      memcpy(eg->otmp.v, children, n_children * sizeof(sc_id));
  }
  sc_id n = new_id(eg, op, attr, h, k, n_children);
  eg->live[n] = 1;
  eg->uf[n] = n;
  sc_vec_push(&eg->nodes[n], n);
  eg->opmask[n] = sc_eg_op_bit(op);
  for (uint32_t i = 0; i < n_children; i++)
    if (i == 0 || k[i] != k[i - 1])
      sc_vec_push(&eg->parents[k[i]], n);
  if (eg->proofs)
    record_original(eg, n, op, attr, eg->otmp.v, n_children);
  memo_insert(eg, n);
  eg->n_classes++;
  uint32_t s = op_slot(eg, op, TRUE);
  sc_vec_push(&eg->op_classes[s], n);
  eg->op_stamp[s] = UINT64_MAX;
  if (eg->has_an && eg->an.data_size) {
    memset(data_at(eg, n), 0, eg->an.data_size);
    if (eg->an.make)
      make_data(eg, n, data_at(eg, n));
  }
  if (eg->has_an && eg->an.modify)
    eg->an.modify(eg, n, eg->an_user);
  return exact && eg->proofs ? n : sc_eg_find(eg, n);
}

sc_id sc_egraph_add(sc_egraph *eg, uint32_t op, uint32_t attr,
                    const sc_id *children, uint32_t n_children) {
  return add_impl(eg, op, attr, children, n_children, FALSE);
}

sc_id sc_egraph_add_exact(sc_egraph *eg, uint32_t op, uint32_t attr,
                          const sc_id *children, uint32_t n_children) {
  return add_impl(eg, op, attr, children, n_children, TRUE);
}

/* ---- union ------------------------------------------------------------- */

static void proof_link(sc_egraph *eg, sc_id a, sc_id b, uint32_t just) {
  /* reroot a's tree at a, then hang a under b; a reversed edge keeps its
   * justification and flips its direction */
  sc_id prev = SC_ID_NONE, cur = a;
  uint32_t prevj = 0;
  uint8_t prevf = 0;
  while (cur != SC_ID_NONE) {
    sc_id next = eg->proof_parent[cur];
    uint32_t nj = eg->proof_just[cur];
    uint8_t nf = eg->proof_fwd[cur];
    eg->proof_parent[cur] = prev;
    eg->proof_just[cur] = prevj;
    eg->proof_fwd[cur] = (uint8_t)!prevf;
    prev = cur;
    prevj = nj;
    prevf = nf;
    cur = next;
  }
  eg->proof_parent[a] = b;
  eg->proof_just[a] = just;
  eg->proof_fwd[a] = 1;
}

static void push_parents(sc_egraph *eg, sc_vec *dst, sc_id c) {
  sc_vec *p = &eg->parents[c];
  if (p->len == 0)
    return;
  sc_vec_reserve(dst, p->len);
  memcpy(dst->v + dst->len, p->v, p->len * sizeof(uint32_t));
  dst->len += p->len;
}

static void append_vec(sc_vec *dst, sc_vec *src) {
  if (dst->len == 0) {
    g_free(dst->v);
    *dst = *src;
  } else {
    if (src->len) {
      sc_vec_reserve(dst, src->len);
      memcpy(dst->v + dst->len, src->v, src->len * sizeof(uint32_t));
      dst->len += src->len;
    }
    g_free(src->v);
  }
  memset(src, 0, sizeof(sc_vec));
}

static gboolean do_union(sc_egraph *eg, sc_id a, sc_id b, uint32_t just,
                         gboolean forced) {
  sc_id ra = sc_eg_find(eg, a), rb = sc_eg_find(eg, b);
  if (ra == rb)
    return FALSE;
  sc_merge_result flags = SC_MERGE_NONE;
  gboolean dsz = eg->has_an && eg->an.data_size;
  if (dsz) {
    memcpy(eg->scratch_a, data_at(eg, ra), eg->an.data_size);
    flags = eg->an.merge(eg->scratch_a, data_at(eg, rb), eg->an_user);
    if (flags & SC_MERGE_CONFLICT) {
      eg->n_conflicts++;
      if (eg->conflict_fn)
        eg->conflict_fn(eg, ra, rb, just, eg->conflict_user);
      if (!forced)
        return FALSE;
      memcpy(eg->scratch_a, data_at(eg, ra), eg->an.data_size);
      flags = SC_MERGE_NONE;
    }
    if (flags & SC_MERGE_A_CHANGED)
      push_parents(eg, &eg->apending, ra);
    if (flags & SC_MERGE_B_CHANGED)
      push_parents(eg, &eg->apending, rb);
  }
  uint64_t sa = (uint64_t)eg->nodes[ra].len + eg->parents[ra].len;
  uint64_t sb = (uint64_t)eg->nodes[rb].len + eg->parents[rb].len;
  sc_id root = ra, child = rb;
  if (sb > sa || (sb == sa && rb < ra)) {
    root = rb;
    child = ra;
  }
  push_parents(eg, &eg->pending, child);
  eg->uf[child] = root;
  for (uint32_t i = 0; i < eg->nodes[child].len; i++)
    stamp_node(eg, eg->nodes[child].v[i]);
  eg->cstamp[root] = eg->epoch;
  append_vec(&eg->nodes[root], &eg->nodes[child]);
  eg->opmask[root] |= eg->opmask[child];
  append_vec(&eg->parents[root], &eg->parents[child]);
  if (dsz)
    memcpy(data_at(eg, root), eg->scratch_a, eg->an.data_size);
  if (!eg->touched[root]) {
    eg->touched[root] = 1;
    sc_vec_push(&eg->touched_list, root);
  }
  eg->n_classes--;
  eg->n_unions++;
  eg->clean = FALSE;
  if (eg->proofs)
    proof_link(eg, a, b, just);
  if (eg->listener_fn)
    eg->listener_fn(eg, root, child, just, eg->listener_user);
  if (eg->has_an && eg->an.modify)
    eg->an.modify(eg, root, eg->an_user);
  return TRUE;
}

gboolean sc_egraph_union(sc_egraph *eg, sc_id a, sc_id b, uint32_t just) {
  g_return_val_if_fail(a < eg->n_ids && b < eg->n_ids, FALSE);
  return do_union(eg, a, b, just, FALSE);
}

/* ---- rebuild ----------------------------------------------------------- */

static void repair_node(sc_egraph *eg, sc_id node, uint32_t *n_unions) {
  uint32_t n = eg->node[node].arity;
  sc_id *k = sc_eg_kids(eg, node);
  gboolean stale = FALSE;
  for (uint32_t i = 0; i < n && !stale; i++)
    stale = eg->uf[k[i]] != k[i];
  if (!stale)
    return;
  memo_remove(eg, node);
  for (uint32_t i = 0; i < n; i++)
    k[i] = sc_eg_find(eg, k[i]);
  uint32_t h = key_hash(eg->node[node].op, eg->node[node].attr, k, n);
  eg->node[node].hash = h;
  stamp_node(eg, node);
  eg->cstamp[sc_eg_find(eg, node)] = eg->epoch;
  sc_id m = memo_find(eg, h, eg->node[node].op, eg->node[node].attr, k, n);
  if (m == SC_ID_NONE) {
    memo_insert(eg, node);
    return;
  }
  eg->live[node] = 0;
  if (do_union(eg, m, node, SC_JUST_CONGRUENCE, TRUE)) {
    (*n_unions)++;
  } else {
    /* already one class: its node list still names the dead node */
    sc_id c = sc_eg_find(eg, node);
    if (!eg->touched[c]) {
      eg->touched[c] = 1;
      sc_vec_push(&eg->touched_list, c);
    }
  }
}

static void repair_analysis(sc_egraph *eg, sc_id node) {
  sc_id c = sc_eg_find(eg, node);
  make_data(eg, node, eg->scratch_b);
  sc_merge_result flags = eg->an.merge(data_at(eg, c), eg->scratch_b, eg->an_user);
  if (flags & SC_MERGE_CONFLICT) {
    eg->n_conflicts++;
    if (eg->conflict_fn)
      eg->conflict_fn(eg, c, c, SC_JUST_CONGRUENCE, eg->conflict_user);
    return;
  }
  if (flags & SC_MERGE_A_CHANGED) {
    push_parents(eg, &eg->apending, c);
    if (eg->an.modify)
      eg->an.modify(eg, c, eg->an_user);
  }
}

static void tidy_class(sc_egraph *eg, sc_id c, uint64_t **keys,
                       uint32_t *keys_cap) {
  sc_vec *v = &eg->nodes[c];
  if (v->len > *keys_cap) {
    *keys_cap = MAX(v->len, *keys_cap * 2);
    *keys = g_renew(uint64_t, *keys, *keys_cap);
  }
  uint32_t w = 0;
  for (uint32_t i = 0; i < v->len; i++) {
    sc_id n = v->v[i];
    if (eg->live[n])
      (*keys)[w++] = ((uint64_t)eg->node[n].op << 32) | n;
  }
  qsort(*keys, w, sizeof(uint64_t), cmp_u64);
  for (uint32_t i = 0; i < w; i++)
    v->v[i] = (uint32_t)(*keys)[i];
  v->len = w;
  sc_vec *p = &eg->parents[c];
  w = 0;
  for (uint32_t i = 0; i < p->len; i++)
    if (eg->live[p->v[i]])
      p->v[w++] = p->v[i];
  p->len = w;
}

uint32_t sc_egraph_rebuild(sc_egraph *eg) {
  uint32_t n_unions = 0;
  gboolean an = eg->has_an && eg->an.data_size && eg->an.make;
  for (;;) {
    while (eg->pending.len) {
      sc_id node = eg->pending.v[--eg->pending.len];
      if (eg->live[node])
        repair_node(eg, node, &n_unions);
    }
    while (eg->apending.len && eg->pending.len == 0) {
      sc_id node = eg->apending.v[--eg->apending.len];
      if (an && eg->live[node])
        repair_analysis(eg, node);
    }
    if (!eg->pending.len && !eg->apending.len)
      break;
  }
  uint64_t *keys = NULL;
  uint32_t keys_cap = 0;
  for (uint32_t i = 0; i < eg->touched_list.len; i++) {
    sc_id c = eg->touched_list.v[i];
    eg->touched[c] = 0;
    if (eg->uf[c] == c)
      tidy_class(eg, c, &keys, &keys_cap);
  }
  g_free(keys);
  eg->touched_list.len = 0;
  eg->clean = TRUE;
  return n_unions;
}

gboolean sc_egraph_is_clean(const sc_egraph *eg) {
  return eg->clean;
}

/* ---- reads ------------------------------------------------------------- */

uint32_t sc_egraph_n_nodes(const sc_egraph *eg) {
  return eg->memo_count;
}

uint32_t sc_egraph_n_classes(const sc_egraph *eg) {
  return eg->n_classes;
}

uint32_t sc_egraph_n_ids(const sc_egraph *eg) {
  return eg->n_ids;
}

uint64_t sc_egraph_n_conflicts(const sc_egraph *eg) {
  return eg->n_conflicts;
}

uint32_t sc_egraph_node_op(const sc_egraph *eg, sc_id node) {
  g_return_val_if_fail(node < eg->n_ids, SC_ID_NONE);
  return eg->node[node].op;
}

uint32_t sc_egraph_node_attr(const sc_egraph *eg, sc_id node) {
  g_return_val_if_fail(node < eg->n_ids, SC_ID_NONE);
  return eg->node[node].attr;
}

uint32_t sc_egraph_node_arity(const sc_egraph *eg, sc_id node) {
  g_return_val_if_fail(node < eg->n_ids, 0);
  return eg->node[node].arity;
}

const sc_id *sc_egraph_node_children(const sc_egraph *eg, sc_id node) {
  g_return_val_if_fail(node < eg->n_ids, NULL);
  return sc_eg_kids(eg, node);
}

gboolean sc_egraph_node_is_live(const sc_egraph *eg, sc_id node) {
  g_return_val_if_fail(node < eg->n_ids, FALSE);
  return eg->live[node];
}

const sc_id *sc_egraph_class_nodes(const sc_egraph *eg, sc_id cls,
                                   uint32_t *n_nodes) {
  *n_nodes = 0;
  g_return_val_if_fail(eg->clean, NULL);
  g_return_val_if_fail(cls < eg->n_ids && eg->uf[cls] == cls, NULL);
  *n_nodes = eg->nodes[cls].len;
  return eg->nodes[cls].v;
}

const sc_id *sc_egraph_class_parents(const sc_egraph *eg, sc_id cls,
                                     uint32_t *n_parents) {
  *n_parents = 0;
  g_return_val_if_fail(eg->clean, NULL);
  g_return_val_if_fail(cls < eg->n_ids && eg->uf[cls] == cls, NULL);
  *n_parents = eg->parents[cls].len;
  return eg->parents[cls].v;
}

const sc_id *sc_egraph_class_nodes_with_op(const sc_egraph *eg, sc_id cls,
                                           uint32_t op, uint32_t *n_nodes) {
  *n_nodes = 0;
  g_return_val_if_fail(eg->clean, NULL);
  g_return_val_if_fail(cls < eg->n_ids && eg->uf[cls] == cls, NULL);
  const sc_vec *v = &eg->nodes[cls];
  uint32_t lo = 0, hi = v->len;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (eg->node[v->v[mid]].op < op)
      lo = mid + 1;
    else
      hi = mid;
  }
  uint32_t end = lo;
  while (end < v->len && eg->node[v->v[end]].op == op)
    end++;
  *n_nodes = end - lo;
  return v->v + lo;
}

const void *sc_egraph_class_data(const sc_egraph *eg, sc_id cls) {
  g_return_val_if_fail(cls < eg->n_ids, NULL);
  if (!eg->has_an || !eg->an.data_size)
    return NULL;
  return data_at(eg, sc_egraph_find_const(eg, cls));
}

gboolean sc_egraph_proof_edge(const sc_egraph *eg, sc_id id, sc_id *next,
                              uint32_t *just) {
  g_return_val_if_fail(eg->proofs && id < eg->n_ids, FALSE);
  if (eg->proof_parent[id] == SC_ID_NONE)
    return FALSE;
  *next = eg->proof_parent[id];
  *just = eg->proof_just[id];
  return TRUE;
}

gboolean sc_egraph_proof_path(const sc_egraph *eg, sc_id a, sc_id b,
                              GArray *steps) {
  g_return_val_if_fail(eg->proofs && a < eg->n_ids && b < eg->n_ids, FALSE);
  g_return_val_if_fail(g_array_get_element_size(steps) ==
                           sizeof(sc_proof_step), FALSE);
  /* ancestors of a, with their depth */
  GHashTable *depth = g_hash_table_new(NULL, NULL);
  uint32_t d = 0;
  for (sc_id x = a; x != SC_ID_NONE; x = eg->proof_parent[x])
    g_hash_table_insert(depth, GUINT_TO_POINTER(x + 1), GUINT_TO_POINTER(++d));
  GArray *tail = g_array_new(FALSE, FALSE, sizeof(sc_proof_step));
  sc_id y = b;
  while (y != SC_ID_NONE &&
         !g_hash_table_contains(depth, GUINT_TO_POINTER(y + 1))) {
    sc_proof_step st = {eg->proof_parent[y], y, eg->proof_just[y],
                        !eg->proof_fwd[y]};
    g_array_append_val(tail, st);
    y = eg->proof_parent[y];
  }
  gboolean ok = y != SC_ID_NONE;
  if (ok) {
    for (sc_id x = a; x != y; x = eg->proof_parent[x]) {
      sc_proof_step st = {x, eg->proof_parent[x], eg->proof_just[x],
                          eg->proof_fwd[x] != 0};
      g_array_append_val(steps, st);
    }
    for (guint i = tail->len; i-- > 0;)
      g_array_append_val(steps, g_array_index(tail, sc_proof_step, i));
  }
  g_array_unref(tail);
  g_hash_table_unref(depth);
  return ok;
}

const sc_id *sc_egraph_proof_children(const sc_egraph *eg, sc_id id,
                                      uint32_t *n_children) {
  *n_children = 0;
  g_return_val_if_fail(eg->proofs && id < eg->n_ids, NULL);
  *n_children = eg->node[id].arity;
  return sc_eg_okids(eg, id);
}

sc_term *sc_egraph_proof_term(const sc_egraph *eg, sc_id id) {
  g_return_val_if_fail(eg->proofs && id < eg->n_ids, NULL);
  /* original children are older ids: a depth-first walk, children first,
   * each id once (shared subterms are shared) */
  GHashTable *index = g_hash_table_new(NULL, NULL); /* id + 1 -> term index + 1 */
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(sc_id));
  GArray *kids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  sc_term *t = sc_term_new();
  g_array_append_val(stack, id);
  while (stack->len) {
    sc_id x = g_array_index(stack, sc_id, stack->len - 1);
    if (g_hash_table_contains(index, GUINT_TO_POINTER(x + 1))) {
      g_array_set_size(stack, stack->len - 1);
      continue;
    }
    uint32_t n = eg->node[x].arity;
    const sc_id *ok = sc_eg_okids(eg, x);
    gboolean ready = TRUE;
    for (uint32_t i = 0; i < n; i++)
      if (!g_hash_table_contains(index, GUINT_TO_POINTER(ok[i] + 1))) {
        g_array_append_val(stack, ok[i]);
        ready = FALSE;
      }
    if (!ready)
      continue;
    g_array_set_size(kids, n);
    for (uint32_t i = 0; i < n; i++)
      g_array_index(kids, uint32_t, i) =
          GPOINTER_TO_UINT(g_hash_table_lookup(index, GUINT_TO_POINTER(ok[i] + 1))) - 1;
    uint32_t ti = sc_term_add(t, eg->node[x].op, eg->node[x].attr,
                              (const uint32_t *)(void *)kids->data, n);
    g_hash_table_insert(index, GUINT_TO_POINTER(x + 1), GUINT_TO_POINTER(ti + 1));
    g_array_set_size(stack, stack->len - 1);
  }
  g_array_unref(kids);
  g_array_unref(stack);
  g_hash_table_unref(index);
  return t;
}

/* ---- invariant checker ------------------------------------------------- */

#define FAIL(...)                                                       \
  do {                                                                  \
    g_set_error(error, SC_EGRAPH_ERROR, SC_EGRAPH_ERROR_INVARIANT,      \
                __VA_ARGS__);                                           \
    goto out;                                                           \
  } while (0)

gboolean sc_egraph_check(const sc_egraph *eg, GError **error) {
  gboolean ok = FALSE;
  uint8_t *seen = g_new0(uint8_t, eg->n_ids ? eg->n_ids : 1);
  GHashTable *par = g_hash_table_new(g_int64_hash, g_int64_equal);
  GArray *pkeys = g_array_new(FALSE, FALSE, sizeof(gint64));
  uint8_t *tmp_a = NULL, *tmp_b = NULL;
  if (!eg->clean)
    FAIL("e-graph is dirty (rebuild first)");
  uint32_t n_live = 0, n_roots = 0;
  for (sc_id n = 0; n < eg->n_ids; n++) {
    if (eg->uf[n] == n)
      n_roots++;
    if (!eg->live[n])
      continue;
    n_live++;
    const sc_id *k = sc_eg_kids(eg, n);
    for (uint32_t i = 0; i < eg->node[n].arity; i++)
      if (eg->uf[k[i]] != k[i])
        FAIL("I1: node %u has non-canonical child %u", n, k[i]);
    uint32_t h = key_hash(eg->node[n].op, eg->node[n].attr, k, eg->node[n].arity);
    if (h != eg->node[n].hash)
      FAIL("I1: node %u is filed under a stale hash", n);
    sc_id m = memo_find(eg, h, eg->node[n].op, eg->node[n].attr, k, eg->node[n].arity);
    if (m != n)
      FAIL("I2: node %u and node %u have the same key (congruence not "
           "closed)", n, m);
  }
  if (n_live != eg->memo_count)
    FAIL("I1: %u live nodes but %u memo entries", n_live, eg->memo_count);
  if (n_roots != eg->n_classes)
    FAIL("class count %u but %u union-find roots", eg->n_classes, n_roots);
  for (sc_id c = 0; c < eg->n_ids; c++) {
    if (eg->uf[c] != c)
      continue;
    const sc_vec *v = &eg->nodes[c];
    if (v->len == 0)
      FAIL("I3: class %u has no nodes", c);
    for (uint32_t i = 0; i < v->len; i++) {
      sc_id n = v->v[i];
      if (!eg->live[n])
        FAIL("I3: class %u lists dead node %u", c, n);
      if (sc_egraph_find_const(eg, n) != c)
        FAIL("I3: class %u lists node %u of class %u", c, n,
             sc_egraph_find_const(eg, n));
      if (seen[n])
        FAIL("I3: node %u listed twice", n);
      seen[n] = 1;
      if (!(eg->opmask[c] & sc_eg_op_bit(eg->node[n].op)))
        FAIL("I3: class %u op mask lacks the op of node %u", c, n);
      if (i > 0) {
        sc_id p = v->v[i - 1];
        if (eg->node[p].op > eg->node[n].op || (eg->node[p].op == eg->node[n].op && p > n))
          FAIL("I3: class %u node list not sorted at %u", c, i);
      }
    }
    const sc_vec *pv = &eg->parents[c];
    for (uint32_t i = 0; i < pv->len; i++) {
      gint64 key = ((gint64)c << 32) | pv->v[i];
      g_array_append_val(pkeys, key);
    }
  }
  for (sc_id n = 0; n < eg->n_ids; n++)
    if (eg->live[n] && !seen[n])
      FAIL("I3: live node %u is in no class list", n);
  for (guint i = 0; i < pkeys->len; i++)
    g_hash_table_add(par, &g_array_index(pkeys, gint64, i));
  for (sc_id n = 0; n < eg->n_ids; n++) {
    if (!eg->live[n])
      continue;
    const sc_id *k = sc_eg_kids(eg, n);
    for (uint32_t i = 0; i < eg->node[n].arity; i++) {
      gint64 key = ((gint64)k[i] << 32) | n;
      if (!g_hash_table_contains(par, &key))
        FAIL("I5: node %u missing from the parents of class %u", n, k[i]);
    }
  }
  if (eg->proofs) {
    /* I6: every id's proof term is in its class: its original children
     * are older ids, and the node they make under find() is a live node
     * of the id's class */
    GArray *ck = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (sc_id x = 0; x < eg->n_ids; x++) {
      uint32_t n = eg->node[x].arity;
      const sc_id *orig = sc_eg_okids(eg, x);
      g_array_set_size(ck, n);
      gboolean older = TRUE;
      for (uint32_t i = 0; i < n; i++) {
        older = older && orig[i] < x;
        g_array_index(ck, sc_id, i) = older ? sc_egraph_find_const(eg, orig[i]) : 0;
      }
      const sc_id *k = (const sc_id *)(void *)ck->data;
      sc_id m = older ? memo_find(eg, key_hash(eg->node[x].op, eg->node[x].attr, k, n),
                                  eg->node[x].op, eg->node[x].attr, k, n)
                      : SC_ID_NONE;
      if (!older || m == SC_ID_NONE ||
          sc_egraph_find_const(eg, m) != sc_egraph_find_const(eg, x)) {
        g_array_unref(ck);
        FAIL("I6: the proof term of id %u is not in its class", x);
      }
    }
    g_array_unref(ck);
  }
  if (eg->has_an && eg->an.data_size && eg->an.make) {
    tmp_a = g_malloc(eg->an.data_size);
    tmp_b = g_malloc(eg->an.data_size);
    for (sc_id n = 0; n < eg->n_ids; n++) {
      if (!eg->live[n])
        continue;
      sc_id c = sc_egraph_find_const(eg, n);
      /* make_data only reads, but takes a mutable e-graph for find() */
      make_data((sc_egraph *)eg, n, tmp_b);
      memcpy(tmp_a, data_at(eg, c), eg->an.data_size);
      sc_merge_result f = eg->an.merge(tmp_a, tmp_b, eg->an_user);
      if (f & (SC_MERGE_A_CHANGED | SC_MERGE_CONFLICT))
        FAIL("I4: analysis of class %u does not cover node %u%s", c, n,
             (f & SC_MERGE_CONFLICT) ? " (conflict)" : "");
    }
  }
  ok = TRUE;
out:
  g_free(seen);
  g_free(tmp_a);
  g_free(tmp_b);
  g_hash_table_unref(par);
  g_array_unref(pkeys);
  return ok;
}
