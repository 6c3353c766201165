/* ops.h — the operator registry: one entry per ATen overload (plus the
 * spec's comm.* collectives and the clean expression operators), each with
 * its schema, shape rule and flags.
 *
 * The table is one X-macro list (src/ops/ops-table.def and friends), so the
 * name, schema text, shape rule and flags of an operator never drift apart.
 * Schemas are written as in PyTorch's native_functions.yaml,
 *   "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
 * and parsed once at start-up (sc_ops_init) into sc_arg descriptors.
 *
 * Clean expression operators live in namespace "sc" (sc.cat, sc.slice,
 * sc.transpose, sc.permute, sc.view, sc.sum, sc.full, sc.arange, sc.empty):
 * they are what relations may use (spec section "Expressions").
 *
 * Ownership: the registry is static; every const sc_op * is valid for the
 * life of the process.  Shape rules borrow everything they are given. */
#ifndef SHARDCHECK_OPS_H
#define SHARDCHECK_OPS_H

#include "shardcheck/value.h"

G_BEGIN_DECLS

#define SC_OPS_ERROR (sc_ops_error_quark())
GQuark sc_ops_error_quark(void);
typedef enum {
  SC_OPS_ERROR_UNKNOWN_OP,   /* message includes "did you mean X?" when close */
  SC_OPS_ERROR_BIND,         /* argument missing, extra, or of the wrong type */
  SC_OPS_ERROR_SHAPE,        /* the shape rule rejects the inputs */
  SC_OPS_ERROR_UNDECIDED,    /* a size comparison the rule needs is unknown */
  SC_OPS_ERROR_SCHEMA,       /* a malformed schema (src/ops/ops-private.h) */
} sc_ops_error;

typedef enum {
  SC_ARG_TENSOR,        /* Tensor */
  SC_ARG_TENSOR_LIST,   /* Tensor[] */
  SC_ARG_TENSOR_OPT_LIST, /* Tensor?[] (aten.index) */
  SC_ARG_INT,           /* int, SymInt */
  SC_ARG_INT_LIST,      /* int[], int[N], SymInt[]; a single int is accepted
                           for int[N] (broadcast to N) and for int[] dims */
  SC_ARG_FLOAT,         /* float (an integer value is accepted) */
  SC_ARG_BOOL,          /* bool */
  SC_ARG_BOOL_LIST,     /* bool[N] */
  SC_ARG_STR,           /* str */
  SC_ARG_SCALAR,        /* Scalar: bound as INT or FLOAT as written (or BOOL) */
  SC_ARG_DTYPE,         /* ScalarType */
  SC_ARG_IGNORED,       /* Device, Layout, MemoryFormat, Generator: accepted, bound NONE */
} sc_arg_type;

typedef struct {
  const char *name;        /* "self", "other", "dim" */
  sc_arg_type type;
  gboolean optional;       /* "Tensor?", "int?": None allowed */
  gboolean kwarg_only;     /* after '*' in the schema */
  gboolean mutated;        /* "Tensor(a!)" */
  gboolean has_default;
  sc_value default_value;  /* bound form; NONE for "=None" */
  uint32_t fixed_len;      /* N of int[N] / bool[N], 0 otherwise */
} sc_arg;

/* Flags: what kind of operator this is, for the e-graph, lemmas and reports.
 *
 * SC_OP_DATA_DEPENDENT (aten.nonzero): the first size of result 0 depends on
 * the values of the input, not on its shape, so no shape rule can compute
 * it.  Such an operator has a keyword-only argument `size` (SymInt?, not
 * part of PyTorch's schema) that holds that size: a graph fills it from the
 * node's declared result shape, which must name a fresh symbol (fx's
 * unbacked `u0`; sc_graph_finish checks it), and the shape rule requires it
 * (None is SC_OPS_ERROR_UNDECIDED).  In the e-graph the size is part of the
 * node's attributes, so two nodes with different size symbols are distinct
 * e-nodes until the driver proves their inputs equal and learns that the
 * sizes are equal (docs/adding-an-operator.md, "Data-dependent sizes"); the
 * interpreter gives the symbol its value when it computes the node.
 *
 * SC_OP_DECLARED (comm.recv): the result's type is not computed from the
 * arguments but given by the graph (the node's declared result); a graph
 * takes it from the declaration, which must give the shape (dtype default
 * f32), and the shape rule, called without one, refuses.
 *
 * SC_OP_LINEAR_FIRST / SC_OP_LINEAR_SECOND (mul.Tensor, mm, the elementwise
 * backward operators in their incoming gradient): the operator is linear
 * in its first / second Tensor argument, the others and every attribute
 * fixed: f(.., a + b, ..) = f(.., a, ..) + f(.., b, ..) over the reals
 * (so f(.., 0, ..) = 0).  Bits 16-19 hold the combiner (below). */
#define SC_OP_FLAGS(X)                                                          \
  X(SC_OP_CLEAN, 0, "clean")             /* allowed in relations (sc.* ops) */  \
  X(SC_OP_ELEMENTWISE, 1, "elementwise") /* out[i] = f(in[i]...) w/ broadcast */\
  X(SC_OP_VIEW, 2, "view")               /* reshapes/moves data, no arithmetic*/\
  X(SC_OP_CREATION, 3, "creation")       /* builds a constant from nothing */   \
  X(SC_OP_COLLECTIVE, 4, "collective")   /* comm.*: one result per input */     \
  X(SC_OP_INPLACE, 5, "inplace")         /* mutates an argument: refused */     \
  X(SC_OP_REDUCTION, 6, "reduction")     /* sums/means/max over dims */         \
  X(SC_OP_IDENTITY, 7, "identity")       /* value of its first input (clone...) */\
  X(SC_OP_RANDOM, 8, "random")           /* draws random numbers (dropout) */    \
  X(SC_OP_MULTI, 9, "multi")             /* several results */                  \
  X(SC_OP_DATA_DEPENDENT, 10, "data_dependent") /* size from values (above) */\
  X(SC_OP_ROWWISE, 11, "rowwise")        /* acts along its int `dim` only */    \
  X(SC_OP_REARRANGE, 12, "rearrange")    /* the input's values, moved */        \
  X(SC_OP_SELECTS, 13, "selects")        /* some of the input's values */       \
  X(SC_OP_DECLARED, 14, "declared")      /* result type as declared (above) */\
  X(SC_OP_LINEAR_FIRST, 20, "linear_first")   /* linear in Tensor operand 1 */  \
  X(SC_OP_LINEAR_SECOND, 21, "linear_second") /* linear in Tensor operand 2 */

typedef enum {
#define SC_X_FLAG(sym, bit, word) sym = 1u << bit,
  SC_OP_FLAGS(SC_X_FLAG)
#undef SC_X_FLAG
} sc_op_flag;

/* The combiner of a reduction's partial results (bits 16-19 of the flags,
 * written SC_OP_COMBINE(SC_COMBINE_SUM) in the table): how the reductions
 * of the parts of a tensor split along a reduced dim give the reduction of
 * the whole.  sum -> sum, mean -> size-weighted sum, amax -> maximum, amin
 * -> minimum, prod -> mul, any -> or, all -> and, logsumexp -> log-add-exp. */
#define SC_OP_COMBINERS(X)                                                      \
  X(SC_COMBINE_NONE, 0, "none")                                                 \
  X(SC_COMBINE_SUM, 1, "sum")                                                   \
  X(SC_COMBINE_MEAN, 2, "mean")                                                 \
  X(SC_COMBINE_MAX, 3, "max")                                                   \
  X(SC_COMBINE_MIN, 4, "min")                                                   \
  X(SC_COMBINE_PROD, 5, "prod")                                                 \
  X(SC_COMBINE_OR, 6, "or")                                                     \
  X(SC_COMBINE_AND, 7, "and")                                                   \
  X(SC_COMBINE_LOGADDEXP, 8, "logaddexp")

typedef enum {
#define SC_X_COMBINE(sym, val, word) sym = val,
  SC_OP_COMBINERS(SC_X_COMBINE)
#undef SC_X_COMBINE
  SC_N_COMBINERS
} sc_combiner;

#define SC_OP_COMBINE_SHIFT 16
#define SC_OP_COMBINE_MASK (0xfu << SC_OP_COMBINE_SHIFT)
#define SC_OP_COMBINE(c) ((uint32_t)(c) << SC_OP_COMBINE_SHIFT)

typedef struct sc_op sc_op;

/* What a shape rule sees: the bound arguments and a way to read the type of
 * each tensor they name. */
typedef struct {
  const sc_op *op;
  const sc_value *args;   /* op->n_args bound values */
  const sc_ttype *(*type_of)(void *env, sc_id tensor);
  void *env;
  sc_symtab *symtab;
} sc_op_call;

/* Append the result types (op->n_results of them, or as many as the call
 * produces for "-> Tensor[]") to out (a GArray of sc_ttype).  On a shape
 * error: FALSE with SC_OPS_ERROR_SHAPE and a message that names the
 * argument and shows the shapes ("mat1 [4, 8] and mat2 [16, 2] cannot be
 * multiplied"); SC_OPS_ERROR_UNDECIDED when a needed size comparison is
 * unknown (naming it). */
typedef gboolean (*sc_shape_rule)(const sc_op_call *call, GArray *out, GError **error);

struct sc_op {
  uint32_t id;             /* index in the registry */
  const char *qualname;    /* "aten.add.Tensor" */
  const char *ns;          /* "aten" */
  const char *name;        /* "add" */
  const char *overload;    /* "Tensor"; "default" when the schema has none */
  const char *schema;      /* schema text as in the table */
  uint32_t n_args;
  const sc_arg *args;
  uint32_t n_results;      /* fixed result count; 0 with results_variadic */
  gboolean results_variadic; /* "-> Tensor[]" */
  sc_shape_rule shape;
  uint32_t flags;
  /* Data of a shape rule registered at run time (sc_ops_register; e.g. a
   * lemma-file operator's rule program); NULL for built-in operators. */
  const void *rule_data;
};

/* Parse every schema of the table; aborts on a malformed built-in schema
 * (a programming error).  Idempotent and thread-safe. */
void sc_ops_init(void);
uint32_t sc_ops_count(void);
const sc_op *sc_ops_at(uint32_t id);

/* Exact qualified name ("aten.add.Tensor"), or a bare "ns.name" that has a
 * single overload ("aten.gelu"), or "ns.name.default".  NULL with
 * SC_OPS_ERROR_UNKNOWN_OP otherwise; the message names the nearest known
 * qualified name ("did you mean aten.add.Tensor?") or says which overloads
 * exist when the bare name is ambiguous. */
const sc_op *sc_ops_lookup(const char *qualname, GError **error);
/* Expression-level lookup: "cat" -> sc.cat, "mm" -> aten.mm.default,
 * "add.Tensor" -> aten.add.Tensor, "comm.all_reduce", full names too.
 * An unqualified name prefers namespace sc, then comm, then aten, and must
 * then have one overload (else an error listing them). */
const sc_op *sc_ops_lookup_func(const char *func, GError **error);
/* Register an operator at run time (operator declarations of lemma files):
 * SCHEMA as in the table, namespace NS (not aten, sc, comm or prims), the
 * shape rule RULE (which finds RULE_DATA in call->op->rule_data) and FLAGS.
 * The new operator gets the next id and lives for the process, like the
 * built-in ones.  Registering the same qualified name again with the same
 * schema, rule, flags and rule_data returns the existing operator; any
 * other redefinition is SC_OPS_ERROR_SCHEMA, as is a malformed schema
 * ("col N: ...").  Call before operators are looked up from several
 * threads.  (transfer none) */
const sc_op *sc_ops_register(const char *ns, const char *schema, sc_shape_rule rule,
                             uint32_t flags, const void *rule_data, GError **error);
/* Nearest qualified name by edit distance, or NULL if nothing is close. */
const char *sc_ops_nearest(const char *name);

/* Where a binding error is: a positional index or a keyword. */
typedef struct {
  gboolean is_kwarg;
  uint32_t index;          /* into positional[] or kw_values[] */
} sc_bind_loc;

/* Resolves a name to a tensor id for Tensor arguments; FALSE if unknown. */
typedef gboolean (*sc_tensor_resolver)(void *env, const char *name, sc_id *out);

/* Bind raw values (as a front end read them) to OP's schema, filling
 * defaults: bound_out receives op->n_args values (caller clears them).
 * Strings become tensors via RESOLVE where the schema says Tensor, dtypes
 * where it says ScalarType, symbolic sizes (parsed against ST) where it says
 * int; "inf"/"-inf"/"nan" strings become floats.  A Tensor[] first argument
 * of an sc.* op collects every leading positional tensor (variadic cat/sum).
 * On error: FALSE, *loc names the offending item when there is one (else
 * loc->index == UINT32_MAX), and the message names the schema argument and
 * says what was expected and what was found. */
gboolean sc_ops_bind(const sc_op *op, sc_symtab *st,
                     const sc_value *positional, uint32_t n_positional,
                     const char *const *kw_names, const sc_value *kw_values, uint32_t n_kw,
                     sc_tensor_resolver resolve, void *resolve_env,
                     sc_value *bound_out, sc_bind_loc *loc, GError **error);

/* Index of OP's argument NAME, or -1 when it has none. */
int32_t sc_ops_arg_index(const sc_op *op, const char *name);

/* ---- The operator algebra (src/ops/algebra.c) ----------------------------
 *
 * What the table's flags and schemas say about an operator, in the terms
 * lemmas use: its combiner, the classes of operators a class lemma ranges
 * over (docs/lemma-dsl.md, "Operator classes"), and how its values relate
 * to its input's.  Everything here is computed from the row (flags and
 * schema), so an operator declared at run time with the same flags is in
 * the same classes. */

sc_combiner sc_ops_combiner(const sc_op *op);
/* "sum", "mean", ... ; "none" */
const char *sc_ops_combiner_name(sc_combiner c);

/* The operator classes of class lemmas.
 *   elementwise1/2/3: SC_OP_ELEMENTWISE with exactly 1/2/3 Tensor arguments
 *     (none optional, no tensor lists) and one result: out[i] =
 *     f(in1[i], ...) with broadcasting; other arguments are attributes
 *     (a Scalar operand, an approximation mode).
 *   reduce_sum, reduce_mean, ... (one per combiner): SC_OP_REDUCTION with
 *     that combiner, one Tensor argument, an argument `dim` (int list or
 *     int) and a bool `keepdim`, one result; reduce: the same with any
 *     combiner or none (var, argmax).
 *   rowwise1/2: SC_OP_ROWWISE with 1/2 Tensor arguments of the result's
 *     shape, an int argument `dim`, one result: rows along `dim` are
 *     computed independently of each other.
 *   linear1, linear2_first, linear2_second, linear3_first: exactly 1 / 2 /
 *     2 / 3 Tensor arguments (none optional, no tensor lists), one result,
 *     flagged SC_OP_LINEAR_FIRST (the first operand) or SC_OP_LINEAR_SECOND
 *     (the second): f(.., a + b, ..) = f(.., a, ..) + f(.., b, ..). */
#define SC_OP_CLASSES(X)                                                        \
  X(SC_CLASS_ELEMENTWISE1, "elementwise1")                                      \
  X(SC_CLASS_ELEMENTWISE2, "elementwise2")                                      \
  X(SC_CLASS_ELEMENTWISE3, "elementwise3")                                      \
  X(SC_CLASS_REDUCE_SUM, "reduce_sum")                                          \
  X(SC_CLASS_REDUCE_MEAN, "reduce_mean")                                        \
  X(SC_CLASS_REDUCE_MAX, "reduce_max")                                          \
  X(SC_CLASS_REDUCE_MIN, "reduce_min")                                          \
  X(SC_CLASS_REDUCE_PROD, "reduce_prod")                                        \
  X(SC_CLASS_REDUCE_OR, "reduce_or")                                            \
  X(SC_CLASS_REDUCE_AND, "reduce_and")                                          \
  X(SC_CLASS_REDUCE_LOGADDEXP, "reduce_logaddexp")                              \
  X(SC_CLASS_REDUCE, "reduce")                                                  \
  X(SC_CLASS_ROWWISE1, "rowwise1")                                              \
  X(SC_CLASS_ROWWISE2, "rowwise2")                                              \
  X(SC_CLASS_LINEAR1, "linear1")                                                \
  X(SC_CLASS_LINEAR2_FIRST, "linear2_first")                                    \
  X(SC_CLASS_LINEAR2_SECOND, "linear2_second")                                  \
  X(SC_CLASS_LINEAR3_FIRST, "linear3_first")

typedef enum {
#define SC_X_CLASS(sym, word) sym,
  SC_OP_CLASSES(SC_X_CLASS)
#undef SC_X_CLASS
  SC_N_CLASSES
} sc_op_class;

/* The class named NAME ("elementwise1"); FALSE when there is none. */
gboolean sc_ops_class_lookup(const char *name, sc_op_class *out);
const char *sc_ops_class_name(sc_op_class c);
/* The names of every class, ", "-separated (for error messages). */
const char *sc_ops_class_names(void);
/* Is OP a member of class C?  (reduce: every reduction with `dim` and
 * `keepdim`, whatever its combiner, var included.)  Operators that are
 * in place, random or data-dependent are in no class. */
gboolean sc_ops_in_class(const sc_op *op, sc_op_class c);
/* OP's Tensor arguments (indices into op->args, in order) into OUT (up to
 * MAX); their number.  A Tensor[] or optional Tensor counts as one. */
uint32_t sc_ops_tensor_args(const sc_op *op, uint32_t *out, uint32_t max);

/* How the values of OP's first result relate to its first Tensor
 * argument's:  SAME when they are the same multiset moved around or
 * copied (clone, detach, views, transposes: SC_OP_IDENTITY or
 * SC_OP_REARRANGE), SUBSET when every value is one of the input's (slices,
 * selects, expands, gathers: SC_OP_SELECTS), OTHER otherwise.  _to_copy is
 * SAME only where it keeps the dtype, which its flags cannot say: it
 * answers OTHER (the caller compares dtypes). */
typedef enum { SC_VALUES_OTHER, SC_VALUES_SAME, SC_VALUES_SUBSET } sc_values_relation;
sc_values_relation sc_ops_values_relation(const sc_op *op);

/* Run OP's shape rule (convenience over op->shape). */
gboolean sc_ops_infer(const sc_op_call *call, GArray *out, GError **error);

G_END_DECLS

#endif
