/* egraph.h — the e-graph: hash-consed e-nodes, union-find, e-classes,
 * egg-style deferred rebuilding, and the e-class analysis seam.
 *
 * The engine is generic: an e-node is (op, attr, children) where op and attr
 * are opaque 32-bit ids chosen by the caller (the operator registry and an
 * interned attribute-tuple table plug in here later) and children are e-class
 * ids.  Nothing here knows what an operator means.
 *
 * Ids.  Every e-node gets a node id when it is first added; the e-class it
 * creates gets the same number as its id.  Class ids are canonical when they
 * are union-find roots (sc_egraph_find(id) == id).  All ids stay valid for
 * the life of the e-graph (they index growable tables, never pointers).
 *
 * The rebuild contract (egg).  sc_egraph_union() merges two classes at once
 * but leaves congruence closure and the analysis of parents to a batch:
 * the e-graph is then "dirty".  sc_egraph_rebuild() restores every invariant
 * in one pass and makes it "clean".  Reads that depend on the invariants
 * (class node lists, parents, matching, extraction) require a clean e-graph
 * and check it with g_return_val_if_fail: calling them dirty is a programmer
 * error.  sc_egraph_check() verifies all invariants (tests run it after every
 * rebuild).
 *
 * Invariants of a clean e-graph:
 *   I1 every live e-node is in the hash-cons (memo) exactly once, under its
 *      canonical key (all children canonical);
 *   I2 no two live e-nodes have the same canonical key (congruence closed);
 *   I3 every live e-node is in the node list of exactly its class, and node
 *      lists are sorted by (op, node id) with no dead nodes;
 *   I4 each class's analysis data is the merge of make() over its nodes
 *      (merging make(n) into it changes nothing);
 *   I5 every live e-node appears in the parent list of each of its children;
 *   I6 (with proofs) every id's proof term lies in its class (below).
 *
 * Ownership.  sc_egraph_new() returns a new e-graph that the caller frees
 * with sc_egraph_free().  Arrays passed in are borrowed (copied if kept);
 * pointers returned by get_ functions are borrowed and valid until the next
 * mutation (add, union, rebuild).  Callbacks receive the e-graph and may not
 * free it; the analysis modify() callback may add nodes and union classes. */
#ifndef SHARDCHECK_EGRAPH_H
#define SHARDCHECK_EGRAPH_H

#include "shardcheck/common.h"

G_BEGIN_DECLS

typedef struct sc_egraph sc_egraph;

/* Justification of a union: a rewrite id (its index in the runner's rule
 * array, < SC_JUST_FACT_BASE), a caller's numbered fact SC_JUST_FACT(i)
 * (an input relation, an impl node asserted, ...: the e-graph passes the
 * number through to the proof forest, explanations name it), or one of
 * the two below.  SC_JUST_IS_ASSERTED covers facts and SC_JUST_ASSERTED:
 * everything that is neither a rule nor congruence. */
#define SC_JUST_ASSERTED ((uint32_t)0xFFFFFFFEu)
#define SC_JUST_CONGRUENCE ((uint32_t)0xFFFFFFFDu)
#define SC_JUST_FACT_BASE ((uint32_t)0x80000000u)
#define SC_JUST_FACT_LIMIT ((uint32_t)0x7FFFFF00u) /* facts 0 .. LIMIT - 1 */
#define SC_JUST_FACT(i) (SC_JUST_FACT_BASE + (uint32_t)(i))
#define SC_JUST_IS_FACT(j) \
  ((j) >= SC_JUST_FACT_BASE && (j) - SC_JUST_FACT_BASE < SC_JUST_FACT_LIMIT)
#define SC_JUST_IS_ASSERTED(j) (SC_JUST_IS_FACT(j) || (j) == SC_JUST_ASSERTED)

/* Result flags of an analysis merge (egg's DidMerge plus a conflict bit). */
typedef enum {
  SC_MERGE_NONE = 0,
  SC_MERGE_A_CHANGED = 1 << 0, /* the merged data differs from a's old data */
  SC_MERGE_B_CHANGED = 1 << 1, /* the merged data differs from b's old data */
  SC_MERGE_CONFLICT = 1 << 2,  /* the two cannot be equal (e.g. shapes differ) */
} sc_merge_result;

/* The e-class analysis.  data_size bytes of data per class (0: none).
 * make: fill out with the data of a new e-node whose children's data are
 *   given (child_data[i] points at the data of children[i]'s class).
 * merge: merge b into a in place (a and b point at data_size bytes), return
 *   flags.  It must be a join: merge(a, a) returns SC_MERGE_NONE.  On
 *   SC_MERGE_CONFLICT the contents of a are ignored.
 * modify: optional; called on a class after make() and after each union,
 *   may add nodes and unions (e.g. constant folding).
 * Every function gets the user pointer given to sc_egraph_new(). */
typedef struct {
  size_t data_size;
  void (*make)(const sc_egraph *eg, uint32_t op, uint32_t attr,
               const sc_id *children, uint32_t n_children,
               const void *const *child_data, void *out, void *user);
  sc_merge_result (*merge)(void *a, const void *b, void *user);
  void (*modify)(sc_egraph *eg, sc_id cls, void *user);
} sc_analysis;

/* Called when a union is refused (or, inside rebuild, forced) because the
 * analysis data of the two classes conflict.  a and b are canonical classes;
 * just is the union's justification (a rule id, SC_JUST_ASSERTED or
 * SC_JUST_CONGRUENCE).  A conflict from congruence means make() is not a
 * function of the children's data: that is a bug in the analysis, and the
 * union happens anyway (congruence is not optional). */
typedef void (*sc_conflict_fn)(const sc_egraph *eg, sc_id a, sc_id b,
                               uint32_t just, void *user);

/* Called after every union that changed the e-graph: root is the surviving
 * class, absorbed the class merged into it (no longer canonical). */
typedef void (*sc_merge_listener_fn)(const sc_egraph *eg, sc_id root,
                                     sc_id absorbed, uint32_t just,
                                     void *user);

/* analysis may be NULL (no data).  (transfer full) */
sc_egraph *sc_egraph_new(const sc_analysis *analysis, void *user);
void sc_egraph_free(sc_egraph *eg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_egraph, sc_egraph_free)

void sc_egraph_set_conflict_handler(sc_egraph *eg, sc_conflict_fn fn,
                                    void *user);
void sc_egraph_set_merge_listener(sc_egraph *eg, sc_merge_listener_fn fn,
                                  void *user);
/* Keep a proof forest (egg's explanation forest): every union links the two
 * ids it was given with its justification, and every id keeps its proof
 * term (below).  Must be called before the first add.  Off by default (it
 * costs a reroot per union, the original children of every node, and
 * alias ids for sc_egraph_add_exact). */
void sc_egraph_enable_proofs(sc_egraph *eg);
gboolean sc_egraph_proofs_enabled(const sc_egraph *eg);

/* Adds (op, attr, children) unless an equal e-node exists; returns the
 * canonical id of its class.  Children need not be canonical.  Works on a
 * dirty e-graph too (the node may then be a congruence duplicate, found by
 * the next rebuild). */
sc_id sc_egraph_add(sc_egraph *eg, uint32_t op, uint32_t attr,
                    const sc_id *children, uint32_t n_children);
/* As sc_egraph_add, but with proofs enabled it returns an id whose proof
 * term is exactly (op, attr, children as given), not the canonical class
 * (egg's add_uncanonical): the new node, or an existing node added with
 * these very children, or else an *alias*: a new id in the class of the
 * existing node with the same canonical key, in no node list, memo or
 * parent list (never matched, extracted or counted), joined to that node
 * by a congruence edge of the proof forest.  find() gives the class.
 * Without proofs it is sc_egraph_add.  Adds only what sc_egraph_add would
 * add, so the e-graph (nodes, classes, unions) is the same either way. */
sc_id sc_egraph_add_exact(sc_egraph *eg, uint32_t op, uint32_t attr,
                          const sc_id *children, uint32_t n_children);
/* The class of an existing e-node with that key, or SC_ID_NONE.  Read-only. */
sc_id sc_egraph_lookup(const sc_egraph *eg, uint32_t op, uint32_t attr,
                       const sc_id *children, uint32_t n_children);
/* Merges the classes of a and b.  Returns TRUE when they were different and
 * are now one; FALSE when already equal or refused for an analysis
 * conflict (the conflict handler is called). */
gboolean sc_egraph_union(sc_egraph *eg, sc_id a, sc_id b, uint32_t just);
/* Canonical id (with path compression; find() does not change meaning). */
sc_id sc_egraph_find(sc_egraph *eg, sc_id id);
sc_id sc_egraph_find_const(const sc_egraph *eg, sc_id id);
/* Restores the invariants; returns the number of congruence unions made. */
uint32_t sc_egraph_rebuild(sc_egraph *eg);
gboolean sc_egraph_is_clean(const sc_egraph *eg);
/* Verifies invariants I1-I5 on a clean e-graph.  Returns FALSE with a
 * message naming the first broken invariant and the ids involved. */
gboolean sc_egraph_check(const sc_egraph *eg, GError **error);

#define SC_EGRAPH_ERROR (sc_egraph_error_quark())
GQuark sc_egraph_error_quark(void);
typedef enum {
  SC_EGRAPH_ERROR_INVARIANT, /* sc_egraph_check found a broken invariant */
} sc_egraph_error;

/* Sizes: live (canonical, deduplicated) e-nodes and classes.  Between
 * rebuilds the node count may include congruence duplicates not yet found,
 * as egg's total_size() does. */
uint32_t sc_egraph_n_nodes(const sc_egraph *eg);
uint32_t sc_egraph_n_classes(const sc_egraph *eg);
/* Total ids ever allocated (node ids and class ids are < this). */
uint32_t sc_egraph_n_ids(const sc_egraph *eg);
/* Number of analysis conflicts reported so far. */
uint64_t sc_egraph_n_conflicts(const sc_egraph *eg);

/* E-node accessors by node id (any node, live or not). */
uint32_t sc_egraph_node_op(const sc_egraph *eg, sc_id node);
uint32_t sc_egraph_node_attr(const sc_egraph *eg, sc_id node);
uint32_t sc_egraph_node_arity(const sc_egraph *eg, sc_id node);
/* Children of a node: canonical for live nodes of a clean e-graph.
 * (transfer none) */
const sc_id *sc_egraph_node_children(const sc_egraph *eg, sc_id node);
gboolean sc_egraph_node_is_live(const sc_egraph *eg, sc_id node);

/* Class reads (clean e-graph, canonical class).  (transfer none) */
const sc_id *sc_egraph_class_nodes(const sc_egraph *eg, sc_id cls,
                                   uint32_t *n_nodes);
/* Parent e-nodes of a class; may contain dead nodes and repeats: filter
 * with sc_egraph_node_is_live. */
const sc_id *sc_egraph_class_parents(const sc_egraph *eg, sc_id cls,
                                     uint32_t *n_parents);
/* Nodes of cls with operator op: a sub-range of the class node list. */
const sc_id *sc_egraph_class_nodes_with_op(const sc_egraph *eg, sc_id cls,
                                           uint32_t op, uint32_t *n_nodes);
/* The analysis data of a class (any id: it is canonicalized).
 * (transfer none) */
const void *sc_egraph_class_data(const sc_egraph *eg, sc_id cls);
/* All canonical classes containing an e-node with operator op, sorted
 * ascending.  (transfer none; valid until the next mutation) */
const sc_id *sc_egraph_classes_with_op(const sc_egraph *eg, uint32_t op,
                                       uint32_t *n_classes);

/* The proof forest (only with sc_egraph_enable_proofs): the edge from id
 * towards the root of its proof tree.  Returns FALSE at a root. */
gboolean sc_egraph_proof_edge(const sc_egraph *eg, sc_id id, sc_id *next,
                              uint32_t *just);

/* One edge of a proof path: from and to are equal because of just (a rule
 * id, a fact, SC_JUST_ASSERTED, or SC_JUST_CONGRUENCE: then from and to are
 * two ids with the same op and attr whose original children are pairwise
 * equal, to be explained in turn).  forward: the union was called as
 * union(from, to) (for a rule: from is the instance of its left side);
 * FALSE: as union(to, from). */
typedef struct {
  sc_id from, to;
  uint32_t just;
  gboolean forward;
} sc_proof_step;

/* The path from a to b in the proof forest (only with proofs enabled):
 * appends its steps to steps (a GArray of sc_proof_step), in order, the
 * first step starting at a and the last ending at b.  Returns FALSE when a
 * and b were never made equal.  This is the seam explanations build on. */
gboolean sc_egraph_proof_path(const sc_egraph *eg, sc_id a, sc_id b,
                              GArray *steps);

/* Proof terms (only with proofs enabled).  Every id stands for one term:
 * its op and attr applied to its *original children*, the ids given to
 * add (which rebuild never rewrites; they are older ids, so the term is
 * finite).  Rules instantiate their left side from the e-nodes they
 * matched (runner.h), so a rule edge links the exact instances of its two
 * sides.  (transfer none; valid until the next add) */
const sc_id *sc_egraph_proof_children(const sc_egraph *eg, sc_id id,
                                      uint32_t *n_children);
/* The proof term of id as a flat term (extract.h), each id once.
 * (transfer full) */
struct sc_term *sc_egraph_proof_term(const sc_egraph *eg, sc_id id);

/* Flat explanations (egg's FlatExplanation): why two ids are equal, as a
 * chain of whole terms, each obtained from the previous by one rewrite of
 * one position (a rule applied, a fact, or SC_JUST_ASSERTED; never a
 * congruence, which is expanded into the equalities of the children it
 * rests on, rewritten in place).  The chain starts at a's proof term and
 * ends at b's.  Congruence edges are explained recursively up to a depth
 * of SC_EXPLAIN_MAX_DEPTH, below which one is kept as a single step with
 * just SC_JUST_CONGRUENCE.  At most max_steps steps are built (0: none,
 * only counted); total counts the steps of the whole explanation
 * (memoized per pair, saturating), so "N more" can be said without
 * building them.  The e-graph need not be clean; it is not changed. */
#define SC_EXPLAIN_MAX_DEPTH 256
typedef struct {
  struct sc_term *term; /* the whole term after this step (owned) */
  uint32_t just;        /* why: rule id, fact, SC_JUST_ASSERTED (or
                           SC_JUST_CONGRUENCE past the depth limit) */
  gboolean forward;     /* as in sc_proof_step: the union was (from, to) */
  sc_id from, to;       /* the ids at the rewritten position */
  uint32_t depth;       /* congruences the position is nested in */
} sc_explain_step;

typedef struct sc_explanation sc_explanation;
/* NULL when a and b were never made equal.  (transfer full) */
sc_explanation *sc_egraph_explain(const sc_egraph *eg, sc_id a, sc_id b,
                                  uint32_t max_steps);
void sc_explanation_free(sc_explanation *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_explanation, sc_explanation_free)
/* a's proof term.  (transfer none) */
const struct sc_term *sc_explanation_start(const sc_explanation *e);
uint32_t sc_explanation_n_steps(const sc_explanation *e);
/* (transfer none) */
const sc_explain_step *sc_explanation_step(const sc_explanation *e,
                                           uint32_t i);
/* Steps of the whole explanation (>= n_steps; more when capped). */
uint64_t sc_explanation_total(const sc_explanation *e);

G_END_DECLS

#endif
