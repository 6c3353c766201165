/* extract.h — terms, extraction of cheapest terms, and enumeration of the
 * smallest distinct terms of an e-class.
 *
 * A term is a flat array of nodes (op, attr, child indices), children before
 * parents, the root last; shared subterms may be shared (a DAG, as egg's
 * RecExpr).  Extraction picks, for every class, the cheapest node under a
 * caller cost function by a bottom-up fixpoint; a cost may be INFINITY
 * (e.g. non-clean operators), and a class whose every term is infinite has
 * no term.  Enumeration lists the k smallest distinct terms of a class,
 * smallest first, where a term's size is the sum of its node weights
 * (weight 0 excludes a node: clean-only enumeration); ties are ordered by
 * node order in the class, then by children left to right.
 *
 * Ownership: every _new returns a new object freed with its _free; the
 * e-graph is borrowed by the extractor and must stay unchanged while the
 * extractor is used.  Terms returned are (transfer full). */
#ifndef SHARDCHECK_EXTRACT_H
#define SHARDCHECK_EXTRACT_H

#include "shardcheck/egraph.h"

G_BEGIN_DECLS

typedef struct {
  uint32_t op, attr;
  uint32_t n_children;
  uint32_t first_child; /* index into the term's child-index array */
} sc_term_node;

typedef struct sc_term sc_term;
sc_term *sc_term_new(void);
void sc_term_free(sc_term *t);
/* Room for N_NODES nodes and N_KIDS child references in all, so that
 * adding up to that many grows nothing (a hint: adding more still works). */
void sc_term_reserve(sc_term *t, uint32_t n_nodes, uint32_t n_kids);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_term, sc_term_free)
/* Appends a node whose children are earlier indices; returns its index. */
uint32_t sc_term_add(sc_term *t, uint32_t op, uint32_t attr,
                     const uint32_t *kids, uint32_t n_kids);
uint32_t sc_term_n_nodes(const sc_term *t);
const sc_term_node *sc_term_node_at(const sc_term *t, uint32_t i);
uint32_t sc_term_child(const sc_term *t, uint32_t i, uint32_t k);
uint32_t sc_term_root(const sc_term *t); /* the last node */
/* Number of nodes of the term as a tree (shared subterms counted each
 * time), saturating at UINT64_MAX. */
uint64_t sc_term_tree_size(const sc_term *t);
/* S-expression "(op a b)"; leaves without children print bare.  name gives
 * the text of (op, attr); NULL prints "op<id>[attr]".  (transfer full) */
typedef void (*sc_term_name_fn)(GString *out, uint32_t op, uint32_t attr,
                                void *user);
char *sc_term_to_string(const sc_term *t, sc_term_name_fn name, void *user);
/* Adds the term to the e-graph; returns the class of its root. */
sc_id sc_egraph_add_term(sc_egraph *eg, const sc_term *t);

/* Cost of a node given its children's costs (all finite). */
typedef double (*sc_cost_fn)(const sc_egraph *eg, sc_id node,
                             const double *child_costs, uint32_t n_children,
                             void *user);
/* AST size: 1 + sum of children. */
double sc_cost_ast_size(const sc_egraph *eg, sc_id node,
                        const double *child_costs, uint32_t n_children,
                        void *user);

typedef struct sc_extractor sc_extractor;
/* Computes the best cost of every class of a clean e-graph. */
sc_extractor *sc_extractor_new(const sc_egraph *eg, sc_cost_fn cost,
                               void *user);
void sc_extractor_free(sc_extractor *ex);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_extractor, sc_extractor_free)
/* INFINITY when the class has no finite term. */
double sc_extractor_cost(const sc_extractor *ex, sc_id cls);
/* The chosen node of a class, or SC_ID_NONE when its cost is infinite. */
sc_id sc_extractor_best_node(const sc_extractor *ex, sc_id cls);
/* The cheapest term, or NULL when the cost is infinite.  (transfer full) */
sc_term *sc_extractor_term(const sc_extractor *ex, sc_id cls);

/* Weight of a node in enumeration: 0 excludes it, else its size. */
typedef uint32_t (*sc_weight_fn)(const sc_egraph *eg, sc_id node, void *user);
/* The k smallest distinct terms of cls with size <= max_size, smallest
 * first.  weight NULL: every node weighs 1 (AST size).  max_size is capped
 * at 4096.  Returns a GPtrArray of sc_term (transfer full); sizes, if not
 * NULL, receives each term's size (a GArray of uint32_t, appended). */
GPtrArray *sc_egraph_enumerate(const sc_egraph *eg, sc_id cls, uint32_t k,
                               uint32_t max_size, sc_weight_fn weight,
                               void *user, GArray *sizes);

G_END_DECLS

#endif
