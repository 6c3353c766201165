/* lang.h — shardcheck's tensor language on the generic e-graph.
 *
 * The e-graph engine (egraph.h) knows e-nodes as (op, attr, children) of
 * opaque ids.  This module gives them meaning:
 *
 *  - op is a registry operator id (sc_op->id) for an operator node, or
 *    SC_LANG_OP_TENSOR for a leaf that names a tensor of the *leaf graph*
 *    (the impl graph in a check; attr = its tensor id), or
 *    SC_LANG_OP_OPAQUE for a leaf that stands for an unknown tensor of a
 *    given type (spec tensors with no relation yet, lemma variables when
 *    lemmas are fuzzed; attr = caller's number, type set with
 *    sc_lang_add_opaque).
 *  - attr is an interned *attribute record*: the operator's bound
 *    non-tensor arguments (sc_value), the layout of its tensor children
 *    (how many children each Tensor / Tensor? / Tensor[] argument takes;
 *    the tensor slots hold child indices 0, 1, ... in argument order,
 *    which is the e-node's child order), and the result index for
 *    multi-result operators
 *    (each result of native_layer_norm, split, max.dim is its own e-node
 *    "op#k(args)").  Equal records get equal ids.
 *  - the e-class analysis is the tensor type (sc_ttype: shape and dtype),
 *    computed by the operator's shape rule over the children's types.
 *    Two classes merge only when their dtypes are equal and their shapes
 *    provably the same: a union of types that differ or cannot be shown
 *    equal is refused and reported through the conflict callback, for an
 *    internal error naming both terms and the justification (an unsound
 *    lemma).
 *
 * Canonical forms, applied when a call is added (exact identities, so the
 * lemma library need not restate them; docs/lang.md says why each holds):
 * aten.view / view_copy / _unsafe_view / reshape / _reshape_alias (with
 * contiguous strides) -> sc.view; aten.t / t_copy / transpose.int /
 * transpose_copy.int -> sc.transpose; aten.permute / permute_copy ->
 * sc.permute; aten.cat -> sc.cat; aten.slice.Tensor / slice_copy.Tensor ->
 * sc.slice; identity operators (clone, detach, alias, lift_fresh_copy,
 * _c10d_functional.wait_tensor, _to_copy without a dtype change, copy whose
 * src already has the result's type) -> their input's class; n-ary sc.cat
 * and sc.sum -> left-nested binary ones (cat(a, b, c) = cat(cat(a, b), c)),
 * so lemmas are written for two parts and hold for any number of ranks;
 * printing flattens them back.  The clean operators' arguments are kept in
 * a normal form: dims non-negative; sc.view's shape is the result shape
 * (no -1); sc.transpose has dim0 < dim1; sc.slice has concrete start and
 * end (None, negative and out-of-range bounds resolved as ATen does,
 * where the comparisons are decided).  Trivial calls are their input:
 * view to the same shape, transpose(x, d, d), permute by the identity,
 * slice(x) of the whole dim with step 1, cat or sum of one part.
 *
 * Ill-typed nodes.  A node added straight to the e-graph (a rewrite's
 * right-hand side) whose shape rule fails gets a "poisoned" type: its
 * class merges with no well-typed class (the union is refused as a
 * conflict) and sc_lang_class_type returns NULL for it.
 *
 * Value ranges: classes may carry facts on the values of integer tensors
 * (sc_vrange below), merged by intersection.
 *
 * Ownership: sc_lang_new returns a new object (free with sc_lang_free)
 * that owns its e-graph, attribute table and range facts and borrows the
 * symtab and the leaf graph, which must outlive it. */
#ifndef SHARDCHECK_LANG_H
#define SHARDCHECK_LANG_H

#include "shardcheck/egraph.h"
#include "shardcheck/extract.h"
#include "shardcheck/texpr.h"

G_BEGIN_DECLS

#define SC_LANG_ERROR (sc_lang_error_quark())
GQuark sc_lang_error_quark(void);
typedef enum {
  SC_LANG_ERROR_SHAPE,    /* the operator's shape rule rejects the children
                             (or cannot decide a size comparison it needs),
                             or a child is ill-typed; message from the rule */
  SC_LANG_ERROR_INVALID,  /* a child index or class out of range, an
                             argument that does not fit the schema, no such
                             result, an unknown operator name, another graph */
} sc_lang_error;

#define SC_LANG_OP_TENSOR ((uint32_t)0x7FFFFF00u)
#define SC_LANG_OP_OPAQUE ((uint32_t)0x7FFFFF01u)

typedef struct sc_lang sc_lang;

/* Called when a union is refused because the two classes' types differ
 * (or cannot be shown equal).  It runs inside sc_egraph_union, possibly on
 * a dirty e-graph: record the pair (sc_lang_get_conflicts does) and name
 * the terms after the next rebuild with sc_lang_conflict_message. */
typedef void (*sc_lang_conflict_fn)(sc_lang *lang, sc_id a, sc_id b,
                                    uint32_t just, void *user);

/* A refused union as reported: the two classes (canonical then) and the
 * justification (rule id, SC_JUST_ASSERTED or SC_JUST_CONGRUENCE). */
typedef struct {
  sc_id a, b;
  uint32_t just;
} sc_lang_conflict;

/* ST must be the leaf graph's symtab; ST NULL takes the leaf graph's.
 * LEAF_GRAPH may be NULL (then only opaque leaves exist). */
sc_lang *sc_lang_new(sc_symtab *st, const sc_graph *leaf_graph);
void sc_lang_free(sc_lang *lang);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_lang, sc_lang_free)

sc_egraph *sc_lang_egraph(sc_lang *lang);
sc_symtab *sc_lang_symtab(const sc_lang *lang);
const sc_graph *sc_lang_leaf_graph(const sc_lang *lang);
void sc_lang_set_conflict_handler(sc_lang *lang, sc_lang_conflict_fn fn, void *user);
uint64_t sc_lang_n_conflicts(const sc_lang *lang);
/* Every conflict reported so far, in order.  (transfer none) */
const sc_lang_conflict *sc_lang_get_conflicts(const sc_lang *lang, uint32_t *n);
/* "cannot merge A (type [4, 2] f32) with B (type [2, 4] f32): their
 * shapes differ" (or "dtypes differ", "shapes cannot be shown equal",
 * "... is ill-typed"), naming each class by its smallest term.  Needs a
 * clean e-graph (call it after sc_egraph_rebuild).  (transfer full) */
char *sc_lang_conflict_message(const sc_lang *lang, const sc_lang_conflict *c);

/* --- attribute records --- */
/* Intern the record of OP called with ARGS (op->n_args bound values; the
 * tensor-valued ones give only the child layout: TENSOR -> 1 child,
 * TENSOR_LIST of n -> n children, NONE for an optional tensor -> 0, a
 * None item of a Tensor?[] -> 0) and result index RESULT.  The tensor ids
 * in ARGS are ignored: the record numbers the children 0, 1, ... in
 * argument order, which is the order of the e-node's children.  Records
 * are not canonicalized (a rewrite's right-hand side must already be in
 * canonical form: binary sc.cat, dims non-negative, ...).  Returns
 * SC_ID_NONE (with a critical warning) when a value's kind does not fit
 * the schema: a programmer error.  Ids are dense from 0. */
uint32_t sc_lang_intern_attr(sc_lang *lang, const sc_op *op, const sc_value *args,
                             uint32_t result);
/* Number of records interned so far (ids are 0 .. n - 1). */
uint32_t sc_lang_n_attrs(const sc_lang *lang);
const sc_op *sc_lang_attr_op(const sc_lang *lang, uint32_t attr);
/* The record's op->n_args values: non-tensor arguments as bound; tensor
 * arguments as TENSOR / TENSOR_LIST whose ids are child indices. */
const sc_value *sc_lang_attr_args(const sc_lang *lang, uint32_t attr);
uint32_t sc_lang_attr_result(const sc_lang *lang, uint32_t attr);
/* The three above in one lookup (a match's attribute tests read all of
 * them, hundreds of thousands of times in a check): the record's op into
 * *OP, its result index into *RESULT, its arguments returned (borrowed);
 * NULL (*OP NULL) for an id never interned. */
const sc_value *sc_lang_attr_read(const sc_lang *lang, uint32_t attr, const sc_op **op,
                                  uint32_t *result);
uint32_t sc_lang_attr_n_children(const sc_lang *lang, uint32_t attr);
/* Value of the argument named NAME ("dim", "start"), or NULL. */
const sc_value *sc_lang_attr_get(const sc_lang *lang, uint32_t attr, const char *name);

/* --- adding terms (all return the canonical class, or SC_ID_NONE with
 * an error).  When the e-graph keeps proofs (sc_egraph_enable_proofs on
 * sc_lang_egraph, before anything is added), they return instead an id
 * whose proof term is the term as added, in canonical form
 * (sc_egraph_add_exact): not canonical, find() gives its class. --- */
sc_id sc_lang_add_tensor(sc_lang *lang, sc_id tensor);
/* An opaque leaf of the given type; KEY distinguishes opaque leaves.
 * Adding KEY again with the same type gives the same class; with another
 * type it is a programmer error (SC_ID_NONE). */
sc_id sc_lang_add_opaque(sc_lang *lang, uint32_t key, const sc_ttype *type);
/* The name printed for opaque leaf KEY (a tensor name, e.g. a spec tensor
 * without a relation yet); unnamed ones print as the variable ?oKEY. */
void sc_lang_set_opaque_name(sc_lang *lang, uint32_t key, const char *name);
/* OP applied to ARGS (bound values; tensor-valued ones hold indices into
 * CHILDREN, as in texpr.h), result RESULT.  Runs the shape rule; applies
 * the canonical forms above. */
sc_id sc_lang_add_call(sc_lang *lang, const sc_op *op, const sc_value *args,
                       const sc_id *children, uint32_t n_children,
                       uint32_t result, GError **error);
/* The class sc_lang_add_call (same arguments) would return, when every
 * node of the call's canonical form (the call itself, an alias's target,
 * a normal form, a chain of binary cats, or an input) is in the e-graph
 * already; SC_ID_NONE when that is not known (a node is missing, or the
 * e-graph keeps proofs).  Adds nothing, and runs the shape rule only when
 * the canonical form depends on the result type (views, renames, copy,
 * expand), so when it returns class C, sc_lang_add_call either returns
 * C's class and adds nothing, or refuses the call (its shape rule fails):
 * in neither case does the e-graph change.  For appliers that skip a
 * right side which is already in the matched class. */
sc_id sc_lang_find_call(sc_lang *lang, const sc_op *op, const sc_value *args,
                        const sc_id *children, uint32_t n_children, uint32_t result);
/* sc_lang_find_call, telling in *SHAPE_CHECKED (when not NULL) whether it
 * ran the call's shape rule on the way and the rule accepted it (a view, a
 * rename, copy or expand that it found): then sc_lang_add_call would
 * return the class found, for certain, and add nothing.  FALSE when it
 * returns SC_ID_NONE. */
sc_id sc_lang_find_call_checked(sc_lang *lang, const sc_op *op, const sc_value *args,
                                const sc_id *children, uint32_t n_children, uint32_t result,
                                gboolean *shape_checked);
/* Would sc_lang_add_call (same arguments) get past its checks: a valid
 * call, well-typed children, a shape rule that accepts it and gives a
 * result RESULT?  Adds nothing.  With sc_lang_find_call's class C of the
 * same call, TRUE means sc_lang_add_call returns C's class and adds
 * nothing, FALSE that it refuses the call: an applier that found a node
 * of its right side asks this instead of adding it again. */
gboolean sc_lang_call_typechecks(sc_lang *lang, const sc_op *op, const sc_value *args,
                                 const sc_id *children, uint32_t n_children, uint32_t result);
/* What a call of OP always becomes when added, for messages: the name of
 * the operator it is renamed to ("view" for aten.reshape, "transpose" for
 * aten.t) or "its input" (clone, detach, ..., every SC_OP_IDENTITY
 * operator but _to_copy); NULL when a call of OP may stay in the e-graph
 * (the table of canonical forms in canon.c is the one source). */
const char *sc_lang_rewritten_to(const sc_op *op);
/* The operator a call of OP is renamed to when added (sc.view for
 * aten.reshape, sc.transpose for aten.t), or NULL when it keeps its
 * operator or may become its input. */
const sc_op *sc_lang_canonical_target(const sc_op *op);
/* A bound expression over the leaf graph (leaves -> tensor leaves). */
sc_id sc_lang_add_texpr(sc_lang *lang, const sc_texpr *t, GError **error);
/* Convenience: OP by qualified or expression name. */
sc_id sc_lang_add_named(sc_lang *lang, const char *func, const sc_value *args,
                        const sc_id *children, uint32_t n_children,
                        uint32_t result, GError **error);

/* --- value ranges (range.c) ---
 * A class may carry a fact on the values of its elements (integer
 * tensors: token ids, labels, positions): every element v satisfies
 * lo <= v <= hi, each bound optional and inclusive, a size expression of
 * the symtab.  Each bound has a source: SC_VRANGE_FACT (a range declared
 * in the bundle -- a leaf tensor's "values", seeded by sc_lang_add_tensor
 * -- or derived by the caller from the spec graph) or an *assumption id*,
 * the caller's own number for a fact it assumed (reports name the
 * assumptions a proof used).  SC_VRANGE_NONE marks a missing bound.
 *
 * Facts live in a side table keyed by class and are merged by
 * intersection when classes merge (through the e-graph's merge listener,
 * which lang installs: callers must not replace it).  Merging never
 * conflicts.  Per bound the tighter one wins where the comparison is
 * decided; on a tie or an undecided comparison the one that needs no
 * assumption wins, else the one already there (both hold, so either is
 * sound).  Facts only tighten, so a read on a dirty e-graph is at worst
 * weaker.  A fact is on the class it was given to (and on everything that
 * class merges with), and on the classes of nodes added later over it by
 * an operator that keeps or selects its values (sc_ops_values_relation
 * SAME or SUBSET, the result of the input's dtype: a view, slice,
 * transpose, expand, gather of its first tensor operand); nothing else
 * propagates (no arithmetic, no fact learned after the node was added). */
#define SC_VRANGE_NONE ((uint32_t)0xFFFFFFFFu)
#define SC_VRANGE_FACT ((uint32_t)0xFFFFFFFEu)
typedef struct {
  sc_dim lo, hi;           /* lo <= every element <= hi, where bounded */
  uint32_t lo_src, hi_src; /* SC_VRANGE_NONE, SC_VRANGE_FACT or an assumption id */
} sc_vrange;

/* No bounds. */
void sc_vrange_init(sc_vrange *r);
gboolean sc_vrange_is_unbounded(const sc_vrange *r);
/* Intersect R into INTO (the rules above); TRUE when INTO changed. */
gboolean sc_vrange_meet(sc_symtab *st, sc_vrange *into, const sc_vrange *r);
/* Add fact R to class CLS (intersected with what it has). */
void sc_lang_add_range(sc_lang *lang, sc_id cls, const sc_vrange *r);
/* The fact of class CLS (any id: canonicalized), or NULL when it has none.
 * (transfer none; valid until the next add or union) */
const sc_vrange *sc_lang_class_range(const sc_lang *lang, sc_id cls);

/* --- reading --- */
/* The type of a class (any id; canonicalized); NULL for an ill-typed
 * class (see above).  Valid on a dirty e-graph too: a union never changes
 * a class's type (merge keeps it or refuses), so no analysis repair is
 * ever pending.  (transfer none; valid until the next mutation) */
const sc_ttype *sc_lang_class_type(const sc_lang *lang, sc_id cls);
/* The smallest term of a class (AST size, any operators), printed with
 * sc_lang_term_to_string.  Needs a clean e-graph.  (transfer full) */
char *sc_lang_class_to_string(const sc_lang *lang, sc_id cls);
/* Is the e-node clean (sc.* clean operator or tensor leaf)? */
gboolean sc_lang_node_is_clean(const sc_lang *lang, sc_id node);
/* Print (op, attr) of a node for sc_term_to_string-style output. */
void sc_lang_append_node_name(GString *out, uint32_t op, uint32_t attr, void *lang);
/* An extracted term as an expression in the expression language, with
 * tensor names of the leaf graph, binary cat/sum chains flattened back
 * to n-ary ones, symbolic sizes quoted.  Notation (docs/lang.md): sc.*
 * operators by bare name ("cat"), others by the shortest name that
 * sc_ops_lookup_func maps back to them ("mm", "add.Tensor", "aten.view");
 * tensor arguments positional, others key=value, omitted when equal to
 * the schema default (except dim*); result K of a multi-result operator
 * as getitem(op(...), K); an opaque leaf by its name or as ?oKEY.  A clean
 * term's text binds back with sc_texpr_parse on the leaf graph to the
 * same class.  NULL for a term larger than 2^20 nodes as a tree or whose
 * printed nesting is deeper than 4096 (a flattened chain counts once).
 * (transfer full) */
sc_expr *sc_lang_term_to_expr(const sc_lang *lang, const sc_term *t);
char *sc_lang_term_to_string(const sc_lang *lang, const sc_term *t);

G_END_DECLS

#endif
