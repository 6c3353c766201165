/* interp.h — the reference interpreter: a float64 implementation of every
 * registered operator and every comm.* collective on small concrete
 * tensors, the second and independent judge of shardcheck's proofs (it
 * computes; it never looks at lemmas or the e-graph).
 *
 * Values.  An sc_tvalue is a concrete tensor: dtype, rank, int64 dims and
 * row-major contiguous float64 data.  Integers and bools are stored exactly
 * as doubles: an integer whose magnitude exceeds 2^53 cannot be stored and
 * is an error (SC_INTERP_ERROR_RANGE) wherever it would arise.  Results of
 * f16 / bf16 / f32 operators are computed and kept in float64, never
 * rounded to the narrower type; results of integer dtypes are rounded as
 * ATen's casts are (truncation toward zero; i32 / i8 / u8 wrap around);
 * bool results are 0 or 1.
 *
 * Evaluation.  sc_interp_eval runs one operator on bound arguments
 * (sc_ops_bind's form; tensor ids index the TENSORS array given) under an
 * assignment of the symbols; the result types (shapes and dtypes) come
 * from the operator's shape rule applied to the concrete inputs, the
 * values from the interpreter's own evaluator.  sc_interp_run_graph runs a
 * whole graph and keeps every tensor's value; sc_interp_eval_texpr
 * evaluates a bound relation expression over given graph values.
 *
 * Ownership.  sc_tvalue_new* / _copy / every returned sc_tvalue * are new
 * values owned by the caller (sc_tvalue_free).  Inputs are borrowed and
 * never modified.  Strings returned are g_free()d by the caller.  Value
 * arrays from sc_interp_run_graph are freed with sc_interp_values_free. */
#ifndef SHARDCHECK_INTERP_H
#define SHARDCHECK_INTERP_H

#include "shardcheck/graph.h"
#include "shardcheck/texpr.h"

G_BEGIN_DECLS

#define SC_INTERP_ERROR (sc_interp_error_quark())
GQuark sc_interp_error_quark(void);
typedef enum {
  SC_INTERP_ERROR_NO_EVALUATOR,     /* the operator has no evaluator (named) */
  SC_INTERP_ERROR_UNINTERPRETABLE,  /* listed as uninterpretable; message says why */
  SC_INTERP_ERROR_SHAPE,            /* the shape rule rejects the concrete inputs */
  SC_INTERP_ERROR_INVALID,          /* bad values: index out of range, x // 0, ... */
  SC_INTERP_ERROR_RANGE,            /* an integer beyond 2^53, NaN cast to an integer */
  SC_INTERP_ERROR_LIMIT,            /* a tensor larger than the element limit */
  SC_INTERP_ERROR_SYMBOL,           /* a size that does not evaluate (x/0, overflow) */
  SC_INTERP_ERROR_INPUT,            /* a graph input missing or of the wrong type */
} sc_interp_error;

/* Largest integer stored exactly: 2^53. */
#define SC_INTERP_MAX_EXACT_INT 9007199254740992.0
/* Default limit on the elements of one tensor (override: the environment
 * variable SC_INTERP_MAX_ELEMENTS, or sc_interp_config.max_elements). */
#define SC_INTERP_DEFAULT_MAX_ELEMENTS ((int64_t)1 << 22)

/* ---- tensor values ------------------------------------------------------ */

typedef struct {
  sc_dtype dtype;
  uint32_t rank;
  int64_t dims[SC_MAX_RANK];
  int64_t numel;   /* product of dims (1 for rank 0) */
  double *data;    /* numel entries, row-major; NULL when numel == 0 */
} sc_tvalue;

/* A zero-filled value; FALSE-like NULL with SC_INTERP_ERROR_LIMIT when the
 * element count overflows or exceeds MAX_ELEMENTS (0: the default limit),
 * SC_INTERP_ERROR_INVALID for a negative dim or rank > SC_MAX_RANK. */
sc_tvalue *sc_tvalue_new(sc_dtype dtype, uint32_t rank, const int64_t *dims,
                         int64_t max_elements, GError **error);
/* A value from DATA (numel doubles, copied), rounded to DTYPE (see above);
 * SC_INTERP_ERROR_RANGE if an integer is beyond 2^53 or NaN. */
sc_tvalue *sc_tvalue_new_from(sc_dtype dtype, uint32_t rank, const int64_t *dims,
                              const double *data, GError **error);
sc_tvalue *sc_tvalue_new_scalar(sc_dtype dtype, double v);
sc_tvalue *sc_tvalue_copy(const sc_tvalue *v);
void sc_tvalue_free(sc_tvalue *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_tvalue, sc_tvalue_free)
/* The value's type, with concrete dims. */
sc_ttype sc_tvalue_ttype(const sc_tvalue *v);
/* Flat (row-major) offset of the coordinates IDX[rank]. */
int64_t sc_tvalue_offset(const sc_tvalue *v, const int64_t *idx);
/* Round every element to the dtype, in place: integers truncate toward
 * zero (i32/i8/u8 wrap), bools become 0/1.  SC_INTERP_ERROR_RANGE (naming
 * the flat index) for NaN/inf or |x| > 2^53 in an integer dtype. */
gboolean sc_tvalue_round_to_dtype(sc_tvalue *v, GError **error);
/* "f32[2, 3] [[1, 2, 3], [4, 5, 6]]"; tensors of more than MAX_SHOWN
 * elements (0: 64) show the first ones and "...". */
char *sc_tvalue_to_string(const sc_tvalue *v, uint32_t max_shown);
/* Values written by empty / empty_like / new_empty*: a quiet NaN with the
 * payload 0x5cdead (floating dtypes), -6086317 (integers), 0xad (u8), 1
 * (bool).  Results must not depend on them; sc_tvalue_count_empty_marks
 * counts the NaNs that carry the payload (which arithmetic on x86-64
 * propagates), so a validation can say "depends on empty()". */
double sc_interp_empty_fill(sc_dtype dtype);
int64_t sc_tvalue_count_empty_marks(const sc_tvalue *v);

/* ---- comparison ---------------------------------------------------------- */

typedef struct {
  double atol;        /* absolute part */
  double rtol;        /* relative part, scaled by |expected| */
  gboolean equal_nan; /* NaN == NaN at the same place */
} sc_tolerance;
/* The default: atol 1e-9 scaled by the largest |expected| (at least 1),
 * rtol 1e-7, equal_nan TRUE. */
sc_tolerance sc_tolerance_default(void);

typedef struct {
  gboolean equal;          /* within tolerance everywhere, same shape and dtype */
  gboolean shape_differs;
  gboolean dtype_differs;  /* reported, but values are still compared */
  double max_abs_diff;
  double max_rel_diff;     /* |a - b| / max(|expected|, atol * scale / rtol):
                              near zero, relative to the tolerance's floor */
  int64_t n_differ;        /* elements outside the tolerance */
  int64_t first_index;     /* flat index of the first such element, or -1 */
  int64_t first_coords[SC_MAX_RANK];
  double first_expected, first_actual;
} sc_tcompare;
/* Element i differs when |a-b| > atol * scale + rtol * |expected|, with
 * scale = max(1, max |expected|); a NaN on one side only (or on both when
 * !equal_nan) differs, as does an infinity not matched exactly.  Returns
 * out->equal. */
gboolean sc_tvalue_compare(const sc_tvalue *expected, const sc_tvalue *actual,
                           const sc_tolerance *tol, sc_tcompare *out);
/* "max abs diff 0.5, max rel diff 0.25, 3 of 6 differ, first at [1, 0]:
 * expected 2, got 2.5" or "shapes differ: [2, 3] vs [3, 2]". */
char *sc_tcompare_to_string(const sc_tcompare *c, const sc_tvalue *expected,
                            const sc_tvalue *actual);

/* ---- random numbers (xoshiro256** seeded by splitmix64) ------------------ */

typedef struct {
  uint64_t s[4];
} sc_rng;

void sc_rng_seed(sc_rng *rng, uint64_t seed);
uint64_t sc_rng_next(sc_rng *rng);
/* Uniform in [0, 1) with 53 random bits. */
double sc_rng_double(sc_rng *rng);
/* Uniform in [lo, hi] (inclusive), without modulo bias; lo <= hi. */
int64_t sc_rng_int(sc_rng *rng, int64_t lo, int64_t hi);
/* Fill with uniform doubles in [lo, hi) (then rounded to the dtype). */
void sc_tvalue_fill_uniform(sc_tvalue *v, sc_rng *rng, double lo, double hi);
/* Fill with uniform integers in [lo, hi]. */
void sc_tvalue_fill_ints(sc_tvalue *v, sc_rng *rng, int64_t lo, int64_t hi);
/* A random value for graph tensor T (an input) under SYMBOL_VALUES:
 * floating dtypes uniform in [-1, 1); bool 0/1; integers in the tensor's
 * declared value range ("values": {"min", "max"}) when it has one, else in
 * [0, 7] (i8: [-8, 7]).  Errors: SYMBOL (a size or bound that does not
 * evaluate), INVALID (an empty value range), LIMIT. */
sc_tvalue *sc_interp_random_input(const sc_graph *g, sc_id t, const int64_t *symbol_values,
                                  sc_rng *rng, int64_t max_elements, GError **error);

/* ---- operators ----------------------------------------------------------- */

/* An evaluator for the operators the interpreter has none for (those
 * declared in lemma files, evaluated through their definitions: see
 * sc_lemcheck_eval_declared).  Called by sc_interp_eval with ARGS made
 * concrete and OUTS[n_out] allocated with the types the operator's shape
 * rule gives (zero-filled): it fills them, or returns FALSE with ERROR
 * set (a message that names OP). */
typedef gboolean (*sc_interp_fallback)(void *user, const sc_op *op, const sc_value *args,
                                       sc_tvalue *const *tensors, uint32_t n_tensors,
                                       sc_tvalue **outs, uint32_t n_out, GError **error);

typedef struct {
  uint64_t seed;          /* dropout's seed (see docs/interpreter.md) */
  int64_t max_elements;   /* per tensor; 0: SC_INTERP_MAX_ELEMENTS or the default */
  sc_interp_fallback fallback; /* may be NULL: no evaluator is then an error */
  void *fallback_user;    /* passed to FALLBACK, borrowed */
} sc_interp_config;

/* Does OP have an evaluator? */
gboolean sc_interp_has_evaluator(const sc_op *op);
/* Why OP cannot be interpreted (in-place operators...), or NULL. */
const char *sc_interp_uninterpretable_reason(const sc_op *op);
/* Qualified names of the registered operators that have neither an
 * evaluator nor an uninterpretable reason (a new operator someone forgot):
 * a GPtrArray of static strings, in registry order. */
GPtrArray *sc_interp_missing_evaluators(void);

/* Run OP.  ARGS: op->n_args bound values; TENSOR / TENSOR_LIST ids index
 * TENSORS[n_tensors] (SC_ID_NONE in a Tensor?[] is None).  Symbolic ints are
 * evaluated with SYMBOL_VALUES (indexed as ST declares them; may be NULL
 * when every int is concrete).  ST may be NULL (a private one is used).
 * CFG may be NULL.  Appends the results (new values) to RESULTS, a
 * GPtrArray whose free function should be sc_tvalue_free.  Messages start
 * with the qualified name of the operator. */
gboolean sc_interp_eval(const sc_op *op, const sc_value *args, sc_symtab *st,
                        const int64_t *symbol_values, sc_tvalue *const *tensors,
                        uint32_t n_tensors, const sc_interp_config *cfg, GPtrArray *results,
                        GError **error);

/* ---- graphs and expressions ---------------------------------------------- */

/* Run G (finished) on INPUTS (one per graph input, in input order,
 * borrowed; their dtypes and shapes must match the inputs' types under
 * SYMBOL_VALUES), visiting nodes in sc_graph_topo_order.  A data-dependent
 * size (ops.h, SC_OP_DATA_DEPENDENT: the symbol u0 of nonzero's result) has
 * no value before the run: the run writes the value the node's inputs give
 * into SYMBOL_VALUES (when not NULL) before the node is evaluated, so that
 * later nodes, the types checked and expressions evaluated afterwards see
 * it; a value outside the symbol's declared bounds is an error (SYMBOL).  *VALUES_OUT
 * receives an array of sc_graph_n_tensors(g) values indexed by tensor id
 * (NULL for a result that is not produced); free it with
 * sc_interp_values_free.  A node's results are checked against the graph's
 * inferred types.  On error nothing is returned, *FAILED_NODE (may be NULL)
 * is the node that failed (SC_ID_NONE for an input problem) and the message
 * names the node: "node 'fc1' (aten.mm.default, model.py:41): ...". */
gboolean sc_interp_run_graph(const sc_graph *g, int64_t *symbol_values,
                             sc_tvalue *const *inputs, const sc_interp_config *cfg,
                             sc_tvalue ***values_out, sc_id *failed_node, GError **error);
void sc_interp_values_free(sc_tvalue **values, uint32_t n);
/* What sc_interp_run_graph does before it evaluates node N of G, for a
 * caller that runs the nodes itself: when N is a data-dependent operator
 * whose `size` is a symbol, write the value its inputs give (VALUES,
 * indexed by tensor id of G) into SYMBOL_VALUES (indexed as G's symtab
 * declares them).  SC_INTERP_ERROR_SYMBOL for a value outside the
 * symbol's declared bounds; TRUE with nothing done for other nodes. */
gboolean sc_interp_bind_data_dependent(const sc_graph *g, const sc_node *n,
                                       sc_tvalue *const *values, int64_t *symbol_values,
                                       GError **error);

/* Evaluate the bound expression T over VALUES (indexed by tensor id of
 * T's graph, borrowed).  Returns a new value or NULL with an error that
 * names the sub-expression's operator. */
sc_tvalue *sc_interp_eval_texpr(const sc_texpr *t, const int64_t *symbol_values,
                                sc_tvalue *const *values, const sc_interp_config *cfg,
                                GError **error);

/* Pick a value for every symbol of ST (indexed as declared) that meets
 * its bounds and every assumption, preferring small sizes in
 * [PREFER_MIN, PREFER_MAX]: random candidates from RNG first, then a
 * systematic search.  FALSE with SC_INTERP_ERROR_SYMBOL if none is found
 * (the message lists the assumptions).  OUT has sc_symtab_n_symbols(st)
 * entries. */
gboolean sc_interp_pick_symbols(sc_symtab *st, sc_rng *rng, int64_t prefer_min,
                                int64_t prefer_max, int64_t *out, GError **error);

G_END_DECLS

#endif
