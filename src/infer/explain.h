/* explain.h — (private to src/infer) explanations of relations: the
 * reasons of the driver's unions and the chains of lemma applications
 * behind each emitted relation (infer.h, sc_relation_explanation).
 *
 * Only with --explain: the driver then makes one sc_explain per visited
 * spec node, right after that node's sc_lang (before anything is added):
 * it turns proofs on in the node's e-graph, numbers the driver's facts
 * (the justification of each union it makes: SC_EXPLAIN_JUST), gives
 * every spec input an opaque leaf named after it, and at the end of the
 * visit turns the proof forest into explanations.  Without --explain
 * nothing here runs and SC_EXPLAIN_JUST is SC_JUST_ASSERTED: no cost per
 * union.
 *
 * Ownership: sc_explain_begin returns a new object (sc_explain_free)
 * that borrows the lang, the bundle, the lemmas and the rules, which must
 * outlive it; explanations it makes are new (sc_relation_explanation_free)
 * and appended to the caller's array. */
#ifndef SC_INFER_EXPLAIN_H
#define SC_INFER_EXPLAIN_H

#include "shardcheck/infer.h"

G_BEGIN_DECLS

typedef struct sc_explain sc_explain;

/* The driver's extraction weight (relation.c): 1 for a clean e-node whose
 * tensor leaf, if it is one, is among ALLOWED_LEAF (NULL: any impl
 * tensor), 0 (excluded) otherwise.  USER is an sc_infer_weight. */
typedef struct {
  const sc_lang *lang;
  const gboolean *allowed_leaf; /* per impl tensor; NULL: any */
} sc_infer_weight;
uint32_t sc_infer_clean_weight(const sc_egraph *eg, sc_id node, void *user);

/* What the driver asserts when it unions two classes (the subject is a
 * spec tensor, an impl node, or unused). */
typedef enum {
  SC_FACT_RELATION, /* spec tensor u: u's relation (input, assumed, or
                       found at its producer) */
  SC_FACT_DEFERRED, /* spec tensor u: its producer over its inputs (a
                       deferred node, not materialized in the impl) */
  SC_FACT_IMPL,     /* impl node w: a result is w applied to its inputs
                       (a collective: by its semantics) */
  SC_FACT_AC_SUM,   /* sums whose summands are equal as multisets */
  SC_FACT_DD_SIZE,  /* one operator on one class, differing only in a
                       data-dependent size (learned equal) */
  SC_FACT_CAT_PARTS, /* two cats (or views, transposes, permutes) of one
                        class, same attributes and part shapes: their
                        parts are equal */
  SC_FACT_SUM_CANCEL, /* two sums of one class equal but for one part
                         each: those parts are equal */
  SC_FACT_CONST_PARTS, /* the parts of a cat equal to a constant are
                          constants */
  SC_FACT_EXPAND_COPIES, /* spec tensor u: its producer, an expand of a unit dim, is the
                            cat of copies of its input (expand-copies.c) */
  SC_FACT_COPIES,   /* impl tensor t: t and the ranks' copies of its value
                       (the same operators over equal inputs, copies.c) */
} sc_fact_kind;

sc_explain *sc_explain_begin(sc_lang *lang, const sc_bundle *b, const sc_lemma_set *lemmas);
void sc_explain_free(sc_explain *ex);

/* The justification for a union asserting fact (KIND, SUBJECT). */
uint32_t sc_explain_fact(sc_explain *ex, sc_fact_kind kind, sc_id subject);
#define SC_EXPLAIN_JUST(ex, kind, subject) \
  ((ex) ? sc_explain_fact((ex), (kind), (subject)) : SC_JUST_ASSERTED)

/* For the sums merged as multisets: the sum node of class CLS that the
 * multiset was read from (its first sc.sum node; clean e-graph), so that
 * the union links that sum, not whatever term the class was first added
 * as.  CLS itself without explanations (EX NULL) or without a sum node. */
sc_id sc_explain_sum_node(sc_explain *ex, sc_id cls);

/* Spec tensor U's leaf: an opaque leaf printed as U's name, typed like
 * CLS (one of U's relation expressions) and joined to it by U's relation.
 * Returns the leaf (CLS itself when CLS is ill-typed). */
sc_id sc_explain_spec_leaf(sc_explain *ex, sc_id u, sc_id cls);

/* At the end of spec node V's visit, on a clean e-graph: the explanation
 * of each relation emitted for its results (OUT_CLS: the ids the node's
 * calls were added as): every output relation of a checked output
 * (OUTPUT_TEXTS[t], expressions over impl outputs), and with opts->
 * explain_all the first relation of each result (TENSOR_TEXTS[t]).
 * Appended to DEST (sc_relation_explanation*).  RULES may be NULL. */
void sc_explain_node(sc_explain *ex, sc_id v, const sc_id *out_cls,
                     const sc_lemma_rules *rules, GPtrArray *const *output_texts,
                     GPtrArray *const *tensor_texts, const gboolean *impl_is_output,
                     const sc_infer_options *opts, GPtrArray *dest);

void sc_relation_explanation_free(gpointer e);

G_END_DECLS

#endif
