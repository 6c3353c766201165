/* egraph-private.h — the e-graph's tables, shared by the files of
 * src/egraph/ and by nothing else.
 *
 * Layout: one id space for e-nodes and e-classes.  Node id n indexes
 * node[n], a 24-byte record (op, attr, arity, hash of the key it is filed
 * under in the memo, and its children inline when there are at most two,
 * else an offset into the kids pool: one cache line per key comparison),
 * and live[n] (0 once found to be a congruence duplicate).  Class tables
 * are structure-of-arrays (yices2-style).  The class created by node n has id n; uf[] is the union-find
 * parent; nodes[c], parents[c] and data at c are meaningful only at roots.
 * See egraph.h for the invariants of a clean e-graph. */
#ifndef SC_EGRAPH_PRIVATE_H
#define SC_EGRAPH_PRIVATE_H

#include "shardcheck/egraph.h"
#include "shardcheck/budget.h"

#include <string.h>

typedef struct {
  uint32_t *v;
  uint32_t len, cap;
} sc_vec;

static inline void sc_vec_reserve(sc_vec *v, uint32_t extra) {
  if (v->cap - v->len >= extra)
    return;
  uint64_t want = (uint64_t)v->len + extra;
  uint64_t cap = v->cap ? v->cap : 4;
  while (cap < want)
    cap *= 2;
  g_assert(cap <= UINT32_MAX);
  v->cap = (uint32_t)cap;
  v->v = g_renew(uint32_t, v->v, v->cap);
}

static inline void sc_vec_push(sc_vec *v, uint32_t x) {
  if (G_UNLIKELY(v->len == v->cap))
    sc_vec_reserve(v, 1);
  v->v[v->len++] = x;
}

static inline void sc_vec_clear(sc_vec *v) {
  g_free(v->v);
  v->v = NULL;
  v->len = v->cap = 0;
}

typedef struct {
  uint32_t op, attr, arity, hash;
  uint32_t k[2]; /* children if arity <= 2, else k[0] = offset in kids */
} sc_node;

#define SC_EG_BUDGET_MATCHES 65536u
/* ... and every SC_EG_BUDGET_STEPS steps of its backtracking (machine.c). */
#define SC_EG_BUDGET_STEPS 65536u

/* The changed-classes cone (sc_egraph_near_changed): distances counted up
 * to SC_NEAR_MAX; farther classes get SC_NEAR_FAR. */
#define SC_NEAR_MAX 6
#define SC_NEAR_FAR 255

struct sc_egraph {
  /* the overall budget of the saturation running on this e-graph (set by
   * sc_runner_run for the run, borrowed, NULL: none): a search checks it
   * every SC_EG_BUDGET_MATCHES matches and SC_EG_BUDGET_STEPS steps
   * (machine.c), since one search can collect far more matches than the
   * e-graph has e-nodes, or try far more candidates than it matches */
  sc_budget *budget;
  /* e-nodes, by node id */
  uint32_t n_ids, cap_ids;
  sc_node *node;
  uint8_t *live;
  uint32_t *stamp;  /* epoch of the node's last key or class change */
  uint32_t *cstamp; /* by class: the largest stamp of its nodes (an upper
                       bound; exact enough to skip stale classes) */
  uint32_t epoch;
  sc_id *kids;
  size_t n_kids, cap_kids;

  /* union-find and classes, by class id */
  sc_id *uf;
  sc_vec *nodes, *parents;
  uint8_t *touched;
  uint64_t *opmask; /* by class: bit (op % 64) set for the op of every node
                       it has had (a superset filter: the matcher skips a
                       class whose mask lacks the op it binds) */
  uint8_t *data;
  uint32_t n_classes;

  /* hash-cons: open addressing, linear probing, backward-shift deletion */
  uint64_t *memo;
  uint32_t memo_mask, memo_count;

  /* deferred rebuild */
  sc_vec pending;   /* node ids whose children may be non-canonical */
  sc_vec apending;  /* node ids whose analysis must be re-made */
  sc_vec touched_list;
  gboolean clean;
  uint64_t n_unions;

  /* op -> classes index (compacted lazily when read) */
  uint64_t *opmap;     /* op -> slot: open addressing, linear probing,
                          entries op << 32 | slot, load factor <= 1/2 */
  uint32_t opmap_mask;
  sc_vec *op_classes;
  uint64_t *op_stamp;  /* n_unions at last compaction, UINT64_MAX = dirty */
  uint32_t *op_epoch;  /* per slot: the newest stamp of a node of the op */
  uint32_t n_slots, cap_slots; /* slots: the distinct ops ever added */

  /* analysis */
  gboolean has_an;
  sc_analysis an;
  void *an_user;
  uint8_t *scratch_a, *scratch_b;
  const void **cdata;
  uint32_t cdata_cap;

  sc_conflict_fn conflict_fn;
  void *conflict_user;
  sc_merge_listener_fn listener_fn;
  void *listener_user;
  uint64_t n_conflicts;

  /* proof forest (only with proofs): per id, the edge towards the root of
   * its proof tree, its justification and its direction (1: the union was
   * called as union(id, parent)); each id's original children (the ids
   * given to add, which rebuild never rewrites: the id's proof term); and
   * the exact memo, original key -> id (egg's uncanon_memo) */
  gboolean proofs;
  sc_id *proof_parent;
  uint32_t *proof_just;
  uint8_t *proof_fwd;
  uint32_t *okoff;  /* offset of the original children in okids */
  sc_id *okids;
  size_t n_okids, cap_okids;
  uint64_t *umemo;
  uint32_t umemo_mask, umemo_count;

  sc_vec tmp;  /* canonical children of the node being added */
  sc_vec otmp; /* its children as given (proofs) */
};

static inline sc_id sc_eg_find(sc_egraph *eg, sc_id x) {
  sc_id *uf = eg->uf;
  while (uf[x] != x) {
    uf[x] = uf[uf[x]];
    x = uf[x];
  }
  return x;
}

static inline uint64_t sc_eg_op_bit(uint32_t op) {
  return (uint64_t)1 << (op & 63);
}

#define SC_EG_OPMAP_EMPTY UINT64_MAX

static inline uint32_t sc_eg_opmap_hash(uint32_t op) {
  op ^= op >> 16;
  op *= 0x45d9f3bu;
  op ^= op >> 16;
  return op;
}

/* The slot of OP in the op index; SC_ID_NONE when no node of OP was ever
 * added.  Ops never leave an e-graph (a congruence duplicate dies for a
 * node of the same op), so once present an op stays present. */
static inline uint32_t sc_eg_op_slot(const sc_egraph *eg, uint32_t op) {
  uint32_t i = sc_eg_opmap_hash(op) & eg->opmap_mask;
  for (;;) {
    uint64_t e = eg->opmap[i];
    if (e == SC_EG_OPMAP_EMPTY)
      return SC_ID_NONE;
    if ((uint32_t)(e >> 32) == op)
      return (uint32_t)e;
    i = (i + 1) & eg->opmap_mask;
  }
}

/* The number of distinct operators ever added: it grows when, and only
 * when, an operator appears for the first time. */
static inline uint32_t sc_eg_n_ops(const sc_egraph *eg) {
  return eg->n_slots;
}

/* Valid until the next add (the node table may move). */
static inline sc_id *sc_eg_kids(const sc_egraph *eg, sc_id n) {
  sc_node *r = &eg->node[n];
  return r->arity <= 2 ? r->k : eg->kids + r->k[0];
}

/* Starts a new epoch (the runner calls it after each search phase) and
 * returns it: every node added, re-canonicalized or moved to another class
 * from now on is stamped with it. */
uint32_t sc_eg_advance_epoch(sc_egraph *eg);
/* The newest stamp given to a node of OP (0: none). */
uint32_t sc_eg_op_epoch(const sc_egraph *eg, uint32_t op);
/* NEAR[c] (n_ids entries; meaningful for canonical c of a clean e-graph):
 * the fewest child edges from class c down to a class whose cstamp is
 * >= SINCE (0: c itself), SC_NEAR_FAR beyond SC_NEAR_MAX.  Every e-node
 * stamped >= since lies in such a class, so a match that binds one, rooted
 * at c, has a pattern at least NEAR[c] + 1 levels deep.  Found by walking
 * up the parent lists (a live node is in its children's lists); FRONT and
 * NEXT are scratch. */
void sc_egraph_near_changed(const sc_egraph *eg, uint32_t since, uint8_t *near,
                            sc_vec *front, sc_vec *next);

void sc_eg_prefetch_key(const sc_egraph *eg, uint32_t op, uint32_t attr,
                        const sc_id *kids, uint32_t n, int stage);

/* The original children of id (proofs only): its proof term is
 * (op, attr, these ids). */
static inline const sc_id *sc_eg_okids(const sc_egraph *eg, sc_id id) {
  return eg->okids + eg->okoff[id];
}

/* Proofs only: an id whose proof term is (op, attr of live node NODE,
 * KIDS), where each KIDS[i] is in the class of NODE's i-th child: NODE
 * itself when its original children are KIDS, else an id found in the
 * exact memo or a new alias joined to NODE by a congruence edge. */
sc_id sc_eg_exact_of(sc_egraph *eg, sc_id node, const sc_id *kids);

#endif
