/* interp-private.h — private to src/interp: the evaluator contract and the
 * helpers the evaluator files share.
 *
 * An evaluator sees one call (sc_ev): the operator, its bound arguments
 * with every int made concrete, the input tensors (tensor ids in the
 * arguments index ev->tensors), and the result tensors, already allocated
 * (zero-filled) with the types the operator's shape rule gives for the
 * concrete inputs.  It writes every element of every result and returns
 * TRUE, or sets an error through ev_fail and returns FALSE.  The caller
 * rounds the results to their dtypes afterwards.
 *
 * Each evaluator file exports a table of {qualified name, evaluator},
 * ended by {NULL, NULL}; interp.c merges them. */
#ifndef SC_INTERP_PRIVATE_H
#define SC_INTERP_PRIVATE_H

/* Link names: every global symbol of the library carries the module's
 * sc_ prefix (STYLE.md point 1); the short internal names stay in the
 * code.  (Issue 19: found with nm on the static libraries.) */
#define ev_arg              sc_interp_ev_arg
#define ev_bool             sc_interp_ev_bool
#define ev_has              sc_interp_ev_has
#define ev_int              sc_interp_ev_int
#define ev_ints             sc_interp_ev_ints
#define ev_new              sc_interp_ev_new
#define ev_num              sc_interp_ev_num
#define ev_operand          sc_interp_ev_operand
#define ev_reduce_dtype_eps sc_interp_ev_reduce_dtype_eps
#define ev_set_error        sc_interp_ev_set_error
#define ev_str              sc_interp_ev_str
#define ev_tensor           sc_interp_ev_tensor
#define ev_tensor_list      sc_interp_ev_tensor_list
#define ev_wrap             sc_interp_ev_wrap
#define tv_bstrides         sc_interp_tv_bstrides
#define tv_next             sc_interp_tv_next
#define tv_reduce_map       sc_interp_tv_reduce_map
#define tv_strides          sc_interp_tv_strides

#include "shardcheck/interp.h"

typedef struct {
  const sc_op *op;
  const sc_value *args;        /* op->n_args values, ints concrete */
  sc_tvalue *const *tensors;   /* indexed by the tensor ids in args */
  uint32_t n_tensors;
  sc_tvalue **out;             /* n_out results, allocated from the shape rule */
  uint32_t n_out;
  const sc_interp_config *cfg;
  int64_t max_elements;
  GError **error;
} sc_ev;

typedef gboolean (*sc_evaluator)(sc_ev *ev);

typedef struct {
  const char *qualname;
  sc_evaluator fn;
} sc_eval_entry;

extern const sc_eval_entry sc_eval_layout_table[];
extern const sc_eval_entry sc_eval_math_table[];
extern const sc_eval_entry sc_eval_extra_table[];
extern const sc_eval_entry sc_eval_hlo_table[];

/* tvalue.c */
int64_t sc_interp_max_elements(const sc_interp_config *cfg);
gboolean sc_interp_round_one(sc_dtype dt, double x, double *out);
uint64_t sc_interp_hash64(uint64_t x);

/* eval-common.c: argument access (by schema name; an absent or None
 * argument gives the default). */
void ev_set_error(sc_ev *ev, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/* The error, and FALSE in the caller's own expression: a variadic
 * function is not inlined, so GCC would not see that a helper returning
 * ev_fail(...) fails on that path and leaves its outputs unset. */
#define ev_fail(ev, code, ...) (ev_set_error((ev), (code), __VA_ARGS__), FALSE)
const sc_value *ev_arg(const sc_ev *ev, const char *name);
gboolean ev_has(const sc_ev *ev, const char *name);
const sc_tvalue *ev_tensor(const sc_ev *ev, const char *name);
int64_t ev_int(const sc_ev *ev, const char *name, int64_t dflt);
double ev_num(const sc_ev *ev, const char *name, double dflt);
/* Argument NAME as a tensor: the tensor itself, or a Scalar one as a
 * 0-dim value (f64, i64 or bool by the Scalar's kind) made into *HOLD,
 * which the caller frees. */
const sc_tvalue *ev_operand(sc_ev *ev, const char *name, sc_tvalue **hold);
gboolean ev_bool(const sc_ev *ev, const char *name, gboolean dflt);
const char *ev_str(const sc_ev *ev, const char *name, const char *dflt);
/* Number of ints in an int / int list argument, copied to OUT (at most
 * MAX); an INT counts as a one-element list; -1 when None/absent. */
int32_t ev_ints(const sc_ev *ev, const char *name, int64_t *out, uint32_t max);
/* A Tensor[] / Tensor?[] argument: a new array of n borrowed pointers
 * (NULL for None entries); g_free the array. */
const sc_tvalue **ev_tensor_list(const sc_ev *ev, const char *name, uint32_t *n);
/* Normalize DIM against RANK (ATen's maybe_wrap_dim; rank 0 acts as 1). */
uint32_t ev_wrap(int64_t dim, uint32_t rank);

/* A new zero value of the given type (limits as ev->max_elements). */
sc_tvalue *ev_new(sc_ev *ev, sc_dtype dt, uint32_t rank, const int64_t *dims);

/* Row-major strides of V. */
void tv_strides(const sc_tvalue *v, int64_t *strides);
/* Strides of IN broadcast to a shape of RANK dims DIMS (right-aligned, 0
 * where IN has size 1 or no dim). */
void tv_bstrides(const sc_tvalue *in, uint32_t rank, const int64_t *dims, int64_t *strides);
/* Advance IDX (RANK coordinates in DIMS) in row-major order; FALSE after
 * the last one. */
gboolean tv_next(uint32_t rank, const int64_t *dims, int64_t *idx);
/* MAP[i]: the output offset of input element i of X when the dims that
 * MASK marks are reduced; *N_OUT the output's element count.  (transfer
 * full) */
int64_t *tv_reduce_map(const sc_tvalue *x, const gboolean *mask, int64_t *n_out);

/* eval-layout.c: the size a data-dependent operator (ops.h,
 * SC_OP_DATA_DEPENDENT) gives its result for the concrete inputs ARGS
 * (tensor ids index TENSORS): the number of nonzero elements for
 * aten.nonzero.  FALSE for another operator or a missing input. */
gboolean sc_interp_data_dependent_size(const sc_op *op, const sc_value *args,
                                       sc_tvalue *const *tensors, uint32_t n_tensors,
                                       int64_t *out);

/* Shared numeric helpers. */
double ev_reduce_dtype_eps(sc_dtype dt);

/* The element count of a buffer of N elements (an element count or a
 * dimension: never negative), at least 1 so that an empty tensor still
 * gets a buffer. */
static inline gsize ev_buf_len(int64_t n) {
  g_assert(n >= 0);
  return n > 0 ? (gsize)n : 1;
}

#endif
