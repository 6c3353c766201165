/* texpr.h — relation expressions bound to a graph.
 *
 * A bound expression (sc_texpr) is a tree: each leaf is a tensor of one
 * graph (an sc_id of that graph), each inner node an operator call (const
 * sc_op *) with its arguments bound by the operator's schema (sc_ops_bind).
 * Every node carries its inferred type (shape and dtype, by the operator's
 * shape rule over its children's types).  Relations (input_relation,
 * expect_output_relation, assume_relation) are bound with CLEAN_ONLY, which
 * accepts only the clean sc.* operators and rejects sum() of a repeated
 * argument (a scaling, not a partial sum).
 *
 * In a call node, the bound argument values that hold tensors (TENSOR,
 * TENSOR_LIST) hold indices into the node's children, not graph ids: the
 * children are the sub-expressions in argument order.
 *
 * Ownership: sc_texpr_bind returns a new tree owned by the caller (free with
 * sc_texpr_free).  The tree borrows the graph (for names, and the symtab of
 * symbolic sizes), which must outlive it.  Accessors borrow. */
#ifndef SHARDCHECK_TEXPR_H
#define SHARDCHECK_TEXPR_H

#include "shardcheck/expr.h"
#include "shardcheck/graph.h"

G_BEGIN_DECLS

#define SC_TEXPR_ERROR (sc_texpr_error_quark())
GQuark sc_texpr_error_quark(void);
typedef enum {
  SC_TEXPR_ERROR_UNKNOWN_TENSOR, /* a name that the graph does not define */
  SC_TEXPR_ERROR_NOT_CLEAN,      /* an operator relations may not use */
  SC_TEXPR_ERROR_INVALID,        /* not a tensor expression, bad argument, shape error */
} sc_texpr_error;

typedef enum {
  SC_TEXPR_TENSOR, /* a tensor of the graph */
  SC_TEXPR_CALL,   /* an operator applied to sub-expressions and attributes */
} sc_texpr_kind;

typedef struct sc_texpr sc_texpr;

/* Bind E to G.  Errors carry the 1-based column of the offending
 * sub-expression in E's source text: "col N: unknown tensor 'x' ...",
 * "col N: mm is not a clean operator; relations may use cat, slice, ...",
 * binding and shape-rule errors of the operator. */
sc_texpr *sc_texpr_bind(const sc_expr *e, sc_graph *g, gboolean clean_only, GError **error);
/* Parse TEXT (sc_expr_parse) and bind it. */
sc_texpr *sc_texpr_parse(const char *text, sc_graph *g, gboolean clean_only, GError **error);
void sc_texpr_free(sc_texpr *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_texpr, sc_texpr_free)

/* A copy of T (owned by the caller) whose leaves are RENAME(leaf, USER),
 * tensors of the same graph and of the same types as the leaves they
 * replace (the renaming of layer memoization, src/infer/memo.c). */
sc_texpr *sc_texpr_rename(const sc_texpr *t, sc_id (*rename)(sc_id tensor, void *user),
                          void *user);
/* Canonical text in the expression language, with tensor names: sc.* ops
 * by their bare name ("cat"), others by qualified name; tensor arguments
 * positional (a Tensor[] first argument of an sc.* op spread as leading
 * positional items, elsewhere a list), other arguments as key=value, an
 * argument omitted when it equals its schema default (except those named
 * dim*), symbolic sizes quoted.  Binding the text again gives an equal
 * tree, printed identically.  Caller g_free()s. */
char *sc_texpr_to_string(const sc_texpr *t);
void sc_texpr_append(GString *out, const sc_texpr *t);
/* Structural equality (same graph, same tensors, ops and argument values). */
gboolean sc_texpr_equal(const sc_texpr *a, const sc_texpr *b);

sc_texpr_kind sc_texpr_get_kind(const sc_texpr *t);
const sc_ttype *sc_texpr_type(const sc_texpr *t);
sc_graph *sc_texpr_graph(const sc_texpr *t);
/* TENSOR: the graph tensor id. */
sc_id sc_texpr_tensor(const sc_texpr *t);
/* CALL: the operator, its op->n_args bound values (tensor values hold
 * child indices) and its children. */
const sc_op *sc_texpr_op(const sc_texpr *t);
const sc_value *sc_texpr_args(const sc_texpr *t);
uint32_t sc_texpr_n_children(const sc_texpr *t);
const sc_texpr *sc_texpr_child(const sc_texpr *t, uint32_t i);
/* Source span [start, end) of the sub-expression it was bound from. */
void sc_texpr_span(const sc_texpr *t, uint32_t *start, uint32_t *end);
/* Append the graph tensor ids of every leaf (each once, first-seen order)
 * to LEAVES (a GArray of sc_id). */
void sc_texpr_collect_leaves(const sc_texpr *t, GArray *leaves);

G_END_DECLS

#endif
