/* rules-layout.c — shape rules of ops-layout.def: views and reshapes,
 * slicing and indexing, concatenation and splitting, creation, copies, the
 * spec's comm.* collectives, PyTorch's per-rank functional collectives and
 * the clean sc.* expression operators (which share the aten rules).
 *
 * Every rule follows ATen's semantics for the result shape and dtype and
 * checks what ATen checks.  Sizes may be symbolic: a needed comparison that
 * the symtab answers UNKNOWN is SC_OPS_ERROR_UNDECIDED, never a guess.
 * Rules read their arguments by schema name (so aten ops and their sc.*
 * twins share code even when their argument names differ) and borrow
 * everything; messages start with "ns.name: " and show shapes.
 *
 * Concrete arithmetic is checked for int64 overflow here (R.overflow);
 * symbolic arithmetic sets the symtab's sticky flag, which sc_ops_infer
 * checks after the rule. */
#include "ops/rules.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* Most results one call may produce (split/chunk/unbind of big sizes). */
#define SC_MAX_RESULTS 4096

typedef struct {
  const sc_op_call *call;
  sc_symtab *st;
  GError **error;
  gboolean overflow;
} R;

static R rctx(const sc_op_call *call, GError **error) {
  R r = {call, call->symtab, error, FALSE};
  return r;
}

static void rerr_set(R *r, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void rerr_set(R *r, int code, const char *fmt, ...) {
  if (r->error == NULL)
    return; /* nobody reads the message: do not format it */
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(r->error, SC_OPS_ERROR, code, "%s.%s: %s", r->call->op->ns, r->call->op->name, msg);
}
/* The error, and FALSE in the caller's own expression: a variadic
 * function is not inlined, so GCC would not see that a getter returning
 * rerr(...) fails on that path and leaves its outputs unset. */
#define rerr(r, code, ...) (rerr_set((r), (code), __VA_ARGS__), FALSE)

/* TRUE when T is YES; else an error: the message for NO, "cannot decide
 * QUESTION" followed by it for UNKNOWN. */
static gboolean rtruth(R *r, sc_truth t, const char *question, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static gboolean rtruth(R *r, sc_truth t, const char *question, const char *fmt, ...) {
  if (t == SC_YES)
    return TRUE;
  if (r->error == NULL)
    return FALSE; /* nobody reads the message: do not format it */
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (t == SC_NO)
    return rerr(r, SC_OPS_ERROR_SHAPE, "%s", msg);
  return rerr(r, SC_OPS_ERROR_UNDECIDED, "cannot decide %s: %s", question, msg);
}

/* ---- dim arithmetic: exact and checked for concrete values ------------- */

static sc_dim d_add(R *r, sc_dim a, sc_dim b) {
  if (sc_dim_is_const(a) && sc_dim_is_const(b)) {
    int64_t v;
    if (__builtin_add_overflow(a.value, b.value, &v)) {
      r->overflow = TRUE;
      v = a.value > 0 ? INT64_MAX : INT64_MIN;
    }
    return sc_dim_const(v);
  }
  return sc_dim_add(r->st, a, b);
}

static sc_dim d_neg(R *r, sc_dim a) {
  if (sc_dim_is_const(a)) {
    if (a.value == INT64_MIN) {
      r->overflow = TRUE;
      return sc_dim_const(INT64_MAX);
    }
    return sc_dim_const(-a.value);
  }
  return sc_dim_neg(r->st, a);
}

static sc_dim d_sub(R *r, sc_dim a, sc_dim b) {
  if (sc_dim_is_const(a) && sc_dim_is_const(b)) {
    int64_t v;
    if (__builtin_sub_overflow(a.value, b.value, &v)) {
      r->overflow = TRUE;
      v = a.value >= 0 ? INT64_MAX : INT64_MIN;
    }
    return sc_dim_const(v);
  }
  return sc_dim_sub(r->st, a, b);
}

static sc_dim d_mul(R *r, sc_dim a, sc_dim b) {
  if (sc_dim_is_const(a) && sc_dim_is_const(b)) {
    int64_t v;
    if (__builtin_mul_overflow(a.value, b.value, &v)) {
      r->overflow = TRUE;
      v = INT64_MAX;
    }
    return sc_dim_const(v);
  }
  return sc_dim_mul(r->st, a, b);
}

static sc_dim d_c(int64_t v) { return sc_dim_const(v); }

/* Floor division (Python semantics); FALSE when b is zero. */
static gboolean d_floordiv(R *r, sc_dim a, sc_dim b, sc_dim *out) {
  if (sc_dim_is_const(a) && sc_dim_is_const(b)) {
    if (b.value == 0)
      return FALSE;
    if (a.value == INT64_MIN && b.value == -1) {
      r->overflow = TRUE;
      *out = d_c(INT64_MAX);
      return TRUE;
    }
    int64_t q = a.value / b.value;
    if ((a.value % b.value != 0) && ((a.value < 0) != (b.value < 0)))
      q--;
    *out = d_c(q);
    return TRUE;
  }
  return sc_dim_floordiv(r->st, a, b, out);
}

static sc_truth d_eq(R *r, sc_dim a, sc_dim b) {
  if (sc_dim_is_const(a) && sc_dim_is_const(b))
    return a.value == b.value ? SC_YES : SC_NO;
  if (sc_dim_identical(a, b))
    return SC_YES;
  return sc_dim_eq(r->st, a, b);
}

static sc_truth d_le(R *r, sc_dim a, sc_dim b) {
  if (sc_dim_is_const(a) && sc_dim_is_const(b))
    return a.value <= b.value ? SC_YES : SC_NO;
  if (sc_dim_identical(a, b))
    return SC_YES;
  return sc_dim_le(r->st, a, b);
}

static sc_truth d_lt(R *r, sc_dim a, sc_dim b) {
  if (sc_dim_is_const(a) && sc_dim_is_const(b))
    return a.value < b.value ? SC_YES : SC_NO;
  if (sc_dim_identical(a, b))
    return SC_NO;
  return sc_dim_lt(r->st, a, b);
}

/* Does d divide a?  d must be nonzero. */
static sc_truth d_divides(R *r, sc_dim d, sc_dim a) {
  if (sc_dim_is_const(d) && sc_dim_is_const(a)) {
    if (d.value == 0)
      return SC_NO;
    if (d.value == -1)
      return SC_YES;
    return a.value % d.value == 0 ? SC_YES : SC_NO;
  }
  return sc_dim_divides(r->st, d, a);
}

static gboolean is_c(sc_dim d, int64_t v) { return sc_dim_is_const(d) && d.value == v; }

/* Printable dims and shapes (caller frees), for messages only: NULL when
 * the caller asked for no error (the lemma instance test and the e-graph
 * call shape rules millions of times and never read the text). */
static char *ds(R *r, sc_dim d) {
  if (r->error == NULL)
    return NULL;
  if (sc_dim_is_const(d))
    return g_strdup_printf("%" G_GINT64_FORMAT, (gint64)d.value);
  return sc_dim_to_string(r->st, d);
}

static char *ss(R *r, const sc_shape *s) { return r->error ? sc_shape_to_string(s) : NULL; }

static char *dims_str(R *r, const sc_dim *v, uint32_t n) {
  if (r->error == NULL)
    return NULL;
  GString *s = g_string_new("[");
  for (uint32_t i = 0; i < n; i++) {
    g_autofree char *d = ds(r, v[i]);
    g_string_append_printf(s, "%s%s", i ? ", " : "", d);
  }
  g_string_append_c(s, ']');
  return g_string_free(s, FALSE);
}

static gboolean check_overflow(R *r) {
  if (r->overflow)
    return rerr(r, SC_OPS_ERROR_SHAPE, "a size overflows 64-bit integers");
  return TRUE;
}

/* Product of a shape's dims. */
static sc_dim numel(R *r, const sc_shape *s) {
  sc_dim n = d_c(1);
  for (uint32_t i = 0; i < s->rank; i++)
    n = d_mul(r, n, s->dims[i]);
  return n;
}

/* ---- arguments ---------------------------------------------------------- */

static const sc_value *arg_named(R *r, const char *name) {
  int32_t i = sc_ops_arg_index(r->call->op, name);
  return i < 0 ? NULL : &r->call->args[i];
}

static const sc_ttype *type_of_id(R *r, sc_id id) {
  return id == SC_ID_NONE ? NULL : r->call->type_of(r->call->env, id);
}

static gboolean get_tensor(R *r, const char *name, const sc_ttype **out) {
  const sc_value *v = arg_named(r, name);
  if (v == NULL || v->kind != SC_VAL_TENSOR)
    return rerr(r, SC_OPS_ERROR_SHAPE, "argument '%s' is not a tensor", name);
  *out = type_of_id(r, v->u.tensor);
  if (*out == NULL)
    return rerr(r, SC_OPS_ERROR_SHAPE, "argument '%s' names a tensor of unknown type", name);
  return TRUE;
}

/* Types of a Tensor[] argument (array owned by the caller, entries NULL for
 * None items of a Tensor?[]). */
static gboolean get_tensor_list(R *r, const char *name, const sc_ttype ***out, uint32_t *n,
                                gboolean allow_none) {
  const sc_value *v = arg_named(r, name);
  if (v == NULL || v->kind != SC_VAL_TENSOR_LIST)
    return rerr(r, SC_OPS_ERROR_SHAPE, "argument '%s' is not a tensor list", name);
  *n = v->u.list.n;
  *out = g_new0(const sc_ttype *, *n ? *n : 1);
  for (uint32_t i = 0; i < *n; i++) {
    if (v->u.list.ids[i] == SC_ID_NONE && allow_none)
      continue;
    (*out)[i] = type_of_id(r, v->u.list.ids[i]);
    if ((*out)[i] == NULL) {
      g_free(*out);
      *out = NULL;
      return rerr(r, SC_OPS_ERROR_SHAPE, "item %u of '%s' names a tensor of unknown type", i, name);
    }
  }
  return TRUE;
}

static gboolean get_int(R *r, const char *name, sc_dim *out) {
  const sc_value *v = arg_named(r, name);
  if (v == NULL || v->kind != SC_VAL_INT)
    return rerr(r, SC_OPS_ERROR_SHAPE, "argument '%s' is not an int", name);
  *out = v->u.i;
  return TRUE;
}

/* An optional int: *present FALSE for None or an absent argument, and
 * then *OUT 0 (set on every path, so callers read a defined value). */
static gboolean get_opt_int(R *r, const char *name, gboolean *present, sc_dim *out) {
  const sc_value *v = arg_named(r, name);
  *present = v != NULL && v->kind == SC_VAL_INT;
  *out = *present ? v->u.i : d_c(0);
  if (!*present && v != NULL && v->kind != SC_VAL_NONE)
    return rerr(r, SC_OPS_ERROR_SHAPE, "argument '%s' is not an int", name);
  return TRUE;
}

static gboolean get_concrete(R *r, const char *name, int64_t *out) {
  sc_dim d;
  if (!get_int(r, name, &d))
    return FALSE;
  if (!sc_dim_is_const(d)) {
    g_autofree char *t = ds(r, d);
    return rerr(r, SC_OPS_ERROR_SHAPE, "argument '%s' must be a concrete integer, found %s", name, t);
  }
  *out = d.value;
  return TRUE;
}

static gboolean wrap_value(R *r, const char *what, int64_t dim, uint32_t rank, uint32_t *out) {
  if (!sc_wrap_dim(dim, rank, out)) {
    int64_t rr = rank == 0 ? 1 : rank;
    return rerr(r, SC_OPS_ERROR_SHAPE,
                "%s = %" G_GINT64_FORMAT " is out of range for a tensor of rank %u "
                "(expected a value in [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "])",
                what, (gint64)dim, rank, (gint64)-rr, (gint64)(rr - 1));
  }
  return TRUE;
}

/* A dim argument wrapped against RANK. */
static gboolean get_dim(R *r, const char *name, uint32_t rank, uint32_t *out) {
  int64_t d;
  if (!get_concrete(r, name, &d))
    return FALSE;
  return wrap_value(r, name, d, rank, out);
}

static gboolean get_int_list(R *r, const char *name, const sc_dim **v, uint32_t *n) {
  const sc_value *a = arg_named(r, name);
  if (a == NULL || a->kind != SC_VAL_INT_LIST)
    return rerr(r, SC_OPS_ERROR_SHAPE, "argument '%s' is not an int list", name);
  *v = a->u.ints.v;
  *n = a->u.ints.n;
  return TRUE;
}

/* Wrap a list of dims against RANK, refusing repeats. */
static gboolean wrap_dim_list(R *r, const char *name, const sc_dim *v, uint32_t n, uint32_t rank,
                              uint32_t *out) {
  gboolean seen[SC_MAX_RANK] = {FALSE};
  for (uint32_t i = 0; i < n; i++) {
    if (!sc_dim_is_const(v[i])) {
      g_autofree char *t = ds(r, v[i]);
      return rerr(r, SC_OPS_ERROR_SHAPE, "item %u of '%s' must be a concrete integer, found %s", i,
                  name, t);
    }
    g_autofree char *what = r->error ? g_strdup_printf("item %u of '%s'", i, name) : NULL;
    if (!wrap_value(r, what, v[i].value, rank, &out[i]))
      return FALSE;
    if (out[i] < SC_MAX_RANK) {
      if (seen[out[i]])
        return rerr(r, SC_OPS_ERROR_SHAPE, "dim %u appears more than once in '%s'", out[i], name);
      seen[out[i]] = TRUE;
    }
  }
  return TRUE;
}

static sc_dtype get_dtype_or(R *r, const char *name, sc_dtype dflt) {
  const sc_value *v = arg_named(r, name);
  return (v != NULL && v->kind == SC_VAL_DTYPE) ? v->u.dtype : dflt;
}

/* Size list argument (size / shape) as a shape; sizes must be >= 0. */
static gboolean sizes_to_shape(R *r, const char *name, sc_shape *out) {
  const sc_dim *v;
  uint32_t n;
  if (!get_int_list(r, name, &v, &n))
    return FALSE;
  if (n > SC_MAX_RANK)
    return rerr(r, SC_OPS_ERROR_SHAPE, "'%s' has %u dims, more than the supported %d", name, n,
                SC_MAX_RANK);
  out->rank = n;
  for (uint32_t i = 0; i < n; i++) {
    sc_truth t = d_le(r, d_c(0), v[i]);
    if (t == SC_NO) {
      g_autofree char *l = dims_str(r, v, n);
      return rerr(r, SC_OPS_ERROR_SHAPE, "negative dimension in '%s' %s", name, l);
    }
    out->dims[i] = v[i];
  }
  return TRUE;
}

static const char *first_present(R *r, const char *a, const char *b) {
  return arg_named(r, a) != NULL ? a : b;
}

static void emit(GArray *out, const sc_shape *s, sc_dtype dt) { sc_rule_emit(out, s, dt); }

static sc_shape drop_dim(const sc_shape *s, uint32_t dim) {
  sc_shape o = *s;
  for (uint32_t i = dim; i + 1 < s->rank; i++)
    o.dims[i] = s->dims[i + 1];
  o.rank = s->rank - 1;
  return o;
}

static gboolean insert_dim(R *r, const sc_shape *s, uint32_t at, sc_dim size, sc_shape *o) {
  if (s->rank + 1 > SC_MAX_RANK)
    return rerr(r, SC_OPS_ERROR_SHAPE, "the result would have more than %d dims", SC_MAX_RANK);
  *o = *s;
  o->rank = s->rank + 1;
  for (uint32_t i = s->rank; i > at; i--)
    o->dims[i] = s->dims[i - 1];
  o->dims[at] = size;
  return TRUE;
}

/* ---- transpose, permute, t ---------------------------------------------- */

gboolean sc_rule_t(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  if (x->shape.rank > 2) {
    g_autofree char *s = ss(&r, &x->shape);
    return rerr(&r, SC_OPS_ERROR_SHAPE, "expects a tensor with <= 2 dims, but self has shape %s", s);
  }
  sc_shape o = x->shape;
  if (o.rank == 2) {
    o.dims[0] = x->shape.dims[1];
    o.dims[1] = x->shape.dims[0];
  }
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_transpose(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t a, b;
  if (!get_tensor(&r, "self", &x) || !get_dim(&r, "dim0", x->shape.rank, &a) ||
      !get_dim(&r, "dim1", x->shape.rank, &b))
    return FALSE;
  sc_shape o = x->shape;
  if (o.rank > 0) {
    o.dims[a] = x->shape.dims[b];
    o.dims[b] = x->shape.dims[a];
  }
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_permute(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  const sc_dim *v;
  uint32_t n;
  if (!get_tensor(&r, "self", &x) || !get_int_list(&r, "dims", &v, &n))
    return FALSE;
  if (n != x->shape.rank) {
    g_autofree char *s = ss(&r, &x->shape);
    g_autofree char *l = dims_str(&r, v, n);
    return rerr(&r, SC_OPS_ERROR_SHAPE,
                "number of dims don't match: self has shape %s (%u dims) but dims is %s", s,
                x->shape.rank, l);
  }
  uint32_t w[SC_MAX_RANK];
  if (!wrap_dim_list(&r, "dims", v, n, x->shape.rank, w))
    return FALSE;
  sc_shape o = x->shape;
  for (uint32_t i = 0; i < n; i++)
    o.dims[i] = x->shape.dims[w[i]];
  emit(out, &o, x->dtype);
  return TRUE;
}

/* ---- view / reshape ----------------------------------------------------- */

gboolean sc_rule_view(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  const sc_dim *v;
  uint32_t n;
  const char *name = first_present(&r, "size", "shape");
  if (!get_tensor(&r, "self", &x) || !get_int_list(&r, name, &v, &n))
    return FALSE;
  if (n > SC_MAX_RANK)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "'%s' has %u dims, more than the supported %d", name, n,
                SC_MAX_RANK);
  /* The texts of the messages, made only on an error path (view is the
   * most frequent call in an e-graph: its success must not format). */
  g_autofree char *target = NULL, *src = NULL, *tot = NULL;
#define VIEW_TARGET (target ? target : (target = dims_str(&r, v, n)))
#define VIEW_SRC (src ? src : (src = r.error ? ss(&r, &x->shape) : NULL))
#define VIEW_TOT (tot ? tot : (tot = ds(&r, total)))
  int32_t infer = -1;
  sc_dim known = d_c(1);
  for (uint32_t i = 0; i < n; i++) {
    if (is_c(v[i], -1)) {
      if (infer >= 0)
        return rerr(&r, SC_OPS_ERROR_SHAPE, "only one dimension can be inferred in '%s' %s", name,
                    VIEW_TARGET);
      infer = (int32_t)i;
      continue;
    }
    if (d_le(&r, d_c(0), v[i]) == SC_NO)
      return rerr(&r, SC_OPS_ERROR_SHAPE, "invalid shape dimension in '%s' %s", name,
                  VIEW_TARGET);
    known = d_mul(&r, known, v[i]);
  }
  sc_dim total = numel(&r, &x->shape);
  if (!check_overflow(&r))
    return FALSE;
  sc_shape o;
  o.rank = n;
  for (uint32_t i = 0; i < n; i++)
    o.dims[i] = v[i];
  if (infer < 0) {
    sc_truth same = d_eq(&r, total, known);
    if (same != SC_YES &&
        !rtruth(&r, same, "whether the element counts match",
                "shape %s is invalid for input of size %s (self has shape %s)", VIEW_TARGET,
                VIEW_TOT, VIEW_SRC))
      return FALSE;
  } else {
    sc_truth zero = d_eq(&r, known, d_c(0));
    if (zero == SC_YES)
      return rerr(&r, SC_OPS_ERROR_SHAPE,
                  "cannot reshape self %s into shape %s: the unspecified dimension -1 is "
                  "ambiguous when the other sizes multiply to 0",
                  VIEW_SRC, VIEW_TARGET);
    if (zero == SC_UNKNOWN)
      return rerr(&r, SC_OPS_ERROR_UNDECIDED,
                  "cannot decide whether the sizes of %s other than -1 multiply to 0",
                  VIEW_TARGET);
    sc_truth divides = d_divides(&r, known, total);
    if (divides != SC_YES &&
        !rtruth(&r, divides, "whether the known sizes divide the input size",
                "shape %s is invalid for input of size %s (self has shape %s)", VIEW_TARGET,
                VIEW_TOT, VIEW_SRC))
      return FALSE;
    sc_dim inferred;
    if (!d_floordiv(&r, total, known, &inferred))
      return rerr(&r, SC_OPS_ERROR_SHAPE, "shape %s is invalid for input of size %s",
                  VIEW_TARGET, VIEW_TOT);
    o.dims[infer] = inferred;
  }
#undef VIEW_TARGET
#undef VIEW_SRC
#undef VIEW_TOT
  if (!check_overflow(&r))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

/* ---- expand --------------------------------------------------------------- */

static gboolean expand_to(R *r, const sc_ttype *x, const sc_dim *v, uint32_t n, GArray *out) {
  g_autofree char *src = ss(r, &x->shape);
  g_autofree char *target = dims_str(r, v, n);
  if (n < x->shape.rank)
    return rerr(r, SC_OPS_ERROR_SHAPE,
                "the number of sizes provided (%u) must be greater or equal to the number of "
                "dimensions of self %s",
                n, src);
  if (n > SC_MAX_RANK)
    return rerr(r, SC_OPS_ERROR_SHAPE, "the result would have more than %d dims", SC_MAX_RANK);
  sc_shape o;
  o.rank = n;
  uint32_t lead = n - x->shape.rank;
  for (uint32_t i = 0; i < n; i++) {
    sc_dim t = v[i];
    if (i < lead) {
      if (is_c(t, -1))
        return rerr(r, SC_OPS_ERROR_SHAPE,
                    "the expanded size -1 is not allowed in a leading, non-existing dimension "
                    "(expanding %s to %s)",
                    src, target);
      if (d_le(r, d_c(0), t) == SC_NO)
        return rerr(r, SC_OPS_ERROR_SHAPE, "negative size in %s", target);
      o.dims[i] = t;
      continue;
    }
    sc_dim s = x->shape.dims[i - lead];
    if (is_c(t, -1)) {
      o.dims[i] = s;
      continue;
    }
    sc_truth same = d_eq(r, s, t);
    if (same == SC_YES) {
      o.dims[i] = t;
      continue;
    }
    sc_truth one = d_eq(r, s, d_c(1));
    if (one == SC_YES) {
      if (d_le(r, d_c(0), t) == SC_NO)
        return rerr(r, SC_OPS_ERROR_SHAPE, "negative size in %s", target);
      o.dims[i] = t;
      continue;
    }
    g_autofree char *ts = ds(r, t);
    g_autofree char *sz = ds(r, s);
    if (same == SC_NO && one == SC_NO)
      return rerr(r, SC_OPS_ERROR_SHAPE,
                  "the expanded size of the tensor (%s) must match the existing size (%s) at "
                  "non-singleton dimension %u (expanding %s to %s)",
                  ts, sz, i, src, target);
    return rerr(r, SC_OPS_ERROR_UNDECIDED,
                "cannot decide whether size %s of self %s at dimension %u is 1 or equals %s "
                "(expanding to %s)",
                sz, src, i - lead, ts, target);
  }
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_expand(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  const sc_dim *v;
  uint32_t n;
  if (!get_tensor(&r, "self", &x) || !get_int_list(&r, "size", &v, &n))
    return FALSE;
  return expand_to(&r, x, v, n, out);
}

gboolean sc_rule_expand_as(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *other;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "other", &other))
    return FALSE;
  return expand_to(&r, x, other->shape.dims, other->shape.rank, out);
}

/* ---- unsqueeze / squeeze -------------------------------------------------- */

gboolean sc_rule_unsqueeze(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t d;
  if (!get_tensor(&r, "self", &x) || !get_dim(&r, "dim", x->shape.rank + 1, &d))
    return FALSE;
  sc_shape o;
  if (!insert_dim(&r, &x->shape, d, d_c(1), &o))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_squeeze(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  uint32_t rank = x->shape.rank;
  gboolean pick[SC_MAX_RANK] = {FALSE};
  const sc_value *dv = arg_named(&r, "dim");
  if (dv == NULL) {
    for (uint32_t i = 0; i < rank; i++)
      pick[i] = TRUE;
  } else if (dv->kind == SC_VAL_INT) {
    uint32_t d;
    if (!get_dim(&r, "dim", rank, &d))
      return FALSE;
    if (rank > 0)
      pick[d] = TRUE;
  } else {
    const sc_dim *v;
    uint32_t n;
    if (!get_int_list(&r, "dim", &v, &n))
      return FALSE;
    if (n > SC_MAX_RANK)
      return rerr(&r, SC_OPS_ERROR_SHAPE, "'dim' has more entries than self has dims");
    uint32_t w[SC_MAX_RANK];
    if (!wrap_dim_list(&r, "dim", v, n, rank, w))
      return FALSE;
    for (uint32_t i = 0; i < n && rank > 0; i++)
      pick[w[i]] = TRUE;
  }
  sc_shape o;
  o.rank = 0;
  for (uint32_t i = 0; i < rank; i++) {
    if (pick[i]) {
      sc_truth one = d_eq(&r, x->shape.dims[i], d_c(1));
      if (one == SC_YES)
        continue;
      if (one == SC_UNKNOWN) {
        g_autofree char *s = ss(&r, &x->shape);
        return rerr(&r, SC_OPS_ERROR_UNDECIDED, "cannot decide whether dim %u of self %s is 1", i,
                    s);
      }
    }
    o.dims[o.rank++] = x->shape.dims[i];
  }
  emit(out, &o, x->dtype);
  return TRUE;
}

/* ---- slice ---------------------------------------------------------------- */

/* x clamped to [lo, hi] (lo <= hi known): decided by comparisons where
 * possible, else through sc_dim_min / sc_dim_max. */
static sc_dim clamp_dim(R *r, sc_dim x, sc_dim lo, sc_dim hi) {
  sc_truth below = d_lt(r, x, lo);
  if (below == SC_YES)
    return lo;
  sc_truth above = d_le(r, hi, x);
  if (above == SC_YES)
    return hi;
  if (below == SC_NO && above == SC_NO)
    return x;
  if (below != SC_NO)
    x = sc_dim_max(r->st, x, lo);
  if (above != SC_NO)
    x = sc_dim_min(r->st, x, hi);
  return x;
}

/* Length of ATen's slice of a dim of SIZE: negative bounds count from the
 * end, then both are clamped to [0, size], end to >= start; the result is
 * ceil((end - start) / step). */
static gboolean slice_len(R *r, sc_dim size, gboolean has_start, sc_dim start, gboolean has_end,
                          sc_dim end, sc_dim step, sc_dim *len) {
  g_autofree char *sts = ds(r, step);
  if (!rtruth(r, d_le(r, d_c(1), step), "whether the slice step is positive",
              "slice step must be positive, found %s", sts))
    return FALSE;
  sc_dim s = has_start ? start : d_c(0);
  sc_dim e = has_end ? end : d_c(INT64_MAX);
  sc_truth neg = d_lt(r, s, d_c(0));
  if (neg == SC_UNKNOWN) {
    g_autofree char *t = ds(r, s);
    return rerr(r, SC_OPS_ERROR_UNDECIDED, "cannot decide whether start %s is negative", t);
  }
  if (neg == SC_YES)
    s = d_add(r, s, size);
  if (is_c(e, INT64_MAX)) {
    e = size;
  } else {
    neg = d_lt(r, e, d_c(0));
    if (neg == SC_UNKNOWN) {
      g_autofree char *t = ds(r, e);
      return rerr(r, SC_OPS_ERROR_UNDECIDED, "cannot decide whether end %s is negative", t);
    }
    if (neg == SC_YES)
      e = d_add(r, e, size);
  }
  s = clamp_dim(r, s, d_c(0), size);
  e = clamp_dim(r, e, s, size);
  sc_dim l = d_sub(r, e, s);
  if (!is_c(step, 1)) {
    if (!d_floordiv(r, d_sub(r, d_add(r, l, step), d_c(1)), step, &l))
      return rerr(r, SC_OPS_ERROR_SHAPE, "slice step must be positive");
  }
  *len = l;
  return TRUE;
}

/* Shape of self sliced by the call's dim/start/end/step arguments. */
static gboolean slice_shape(R *r, const sc_shape *in, const char *what, sc_shape *o) {
  if (in->rank == 0)
    return rerr(r, SC_OPS_ERROR_SHAPE, "slice() cannot be applied to a 0-dim tensor (%s)", what);
  uint32_t d;
  sc_dim start, end, step;
  gboolean hs, he;
  if (!get_dim(r, "dim", in->rank, &d) || !get_opt_int(r, "start", &hs, &start) ||
      !get_opt_int(r, "end", &he, &end) || !get_int(r, "step", &step))
    return FALSE;
  sc_dim len;
  if (!slice_len(r, in->dims[d], hs, start, he, end, step, &len))
    return FALSE;
  *o = *in;
  o->dims[d] = len;
  return check_overflow(r);
}

gboolean sc_rule_slice(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  sc_shape o;
  if (!get_tensor(&r, "self", &x) || !slice_shape(&r, &x->shape, "self", &o))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_slice_scatter(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *src;
  sc_shape o;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "src", &src) ||
      !slice_shape(&r, &x->shape, "self", &o))
    return FALSE;
  g_autofree char *a = ss(&r, &src->shape);
  g_autofree char *b = ss(&r, &o);
  if (!rtruth(&r, sc_shape_same(r.st, &src->shape, &o), "whether src matches the slice",
              "expected src to have a size equal to the slice of self: src has shape %s, the "
              "slice has %s",
              a, b))
    return FALSE;
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

gboolean sc_rule_slice_backward(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *g;
  sc_shape in, o;
  if (!get_tensor(&r, "grad_output", &g) || !sizes_to_shape(&r, "input_sizes", &in) ||
      !slice_shape(&r, &in, "input_sizes", &o))
    return FALSE;
  g_autofree char *a = ss(&r, &g->shape);
  g_autofree char *b = ss(&r, &o);
  if (!rtruth(&r, sc_shape_same(r.st, &g->shape, &o), "whether grad_output matches the slice",
              "grad_output has shape %s but the slice of input_sizes has %s", a, b))
    return FALSE;
  emit(out, &in, g->dtype);
  return TRUE;
}

gboolean sc_rule_narrow(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t d;
  sc_dim start, length;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  if (x->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "narrow() cannot be applied to a 0-dim tensor");
  if (!get_dim(&r, "dim", x->shape.rank, &d) || !get_int(&r, "start", &start) ||
      !get_int(&r, "length", &length))
    return FALSE;
  sc_dim size = x->shape.dims[d];
  g_autofree char *s0 = ds(&r, start);
  g_autofree char *l0 = ds(&r, length);
  g_autofree char *z0 = ds(&r, size);
  if (!rtruth(&r, d_le(&r, d_neg(&r, size), start), "whether start is in range",
              "start (%s) out of range for dimension %u of size %s", s0, d, z0) ||
      !rtruth(&r, d_le(&r, start, size), "whether start is in range",
              "start (%s) out of range for dimension %u of size %s", s0, d, z0))
    return FALSE;
  if (d_lt(&r, start, d_c(0)) == SC_YES)
    start = d_add(&r, start, size);
  if (!rtruth(&r, d_le(&r, d_c(0), length), "whether length is non-negative",
              "narrow(): length must be non-negative, found %s", l0) ||
      !rtruth(&r, d_le(&r, d_add(&r, start, length), size), "whether start + length fits",
              "start (%s) + length (%s) exceeds dimension size (%s)", s0, l0, z0))
    return FALSE;
  sc_shape o = x->shape;
  o.dims[d] = length;
  if (!check_overflow(&r))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

/* ---- select ----------------------------------------------------------------- */

static gboolean select_shape(R *r, const sc_shape *in, sc_shape *o, uint32_t *dim_out) {
  if (in->rank == 0)
    return rerr(r, SC_OPS_ERROR_SHAPE, "select() cannot be applied to a 0-dim tensor");
  uint32_t d;
  sc_dim idx;
  if (!get_dim(r, "dim", in->rank, &d) || !get_int(r, "index", &idx))
    return FALSE;
  sc_dim size = in->dims[d];
  g_autofree char *is = ds(r, idx);
  g_autofree char *zs = ds(r, size);
  if (!rtruth(r, d_le(r, d_neg(r, size), idx), "whether the index is in range",
              "index %s is out of bounds for dimension %u with size %s", is, d, zs) ||
      !rtruth(r, d_lt(r, idx, size), "whether the index is in range",
              "index %s is out of bounds for dimension %u with size %s", is, d, zs))
    return FALSE;
  *o = drop_dim(in, d);
  if (dim_out)
    *dim_out = d;
  return TRUE;
}

gboolean sc_rule_select(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  sc_shape o;
  if (!get_tensor(&r, "self", &x) || !select_shape(&r, &x->shape, &o, NULL))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_select_scatter(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *src;
  sc_shape o;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "src", &src) ||
      !select_shape(&r, &x->shape, &o, NULL))
    return FALSE;
  g_autofree char *a = ss(&r, &src->shape);
  g_autofree char *b = ss(&r, &o);
  if (!rtruth(&r, sc_shape_same(r.st, &src->shape, &o), "whether src matches the selection",
              "expected src to have shape %s (self without dim), found %s", b, a))
    return FALSE;
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

gboolean sc_rule_select_backward(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *g;
  sc_shape in, o;
  if (!get_tensor(&r, "grad_output", &g) || !sizes_to_shape(&r, "input_sizes", &in) ||
      !select_shape(&r, &in, &o, NULL))
    return FALSE;
  g_autofree char *a = ss(&r, &g->shape);
  g_autofree char *b = ss(&r, &o);
  if (!rtruth(&r, sc_shape_same(r.st, &g->shape, &o), "whether grad_output matches",
              "grad_output has shape %s but input_sizes without dim gives %s", a, b))
    return FALSE;
  emit(out, &in, g->dtype);
  return TRUE;
}

/* ---- cat / stack / sum ------------------------------------------------------- */

gboolean sc_rule_cat(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n;
  if (!get_tensor_list(&r, "tensors", &ts, &n, FALSE))
    return FALSE;
  if (n == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "expected a non-empty list of tensors");
  const sc_shape *s0 = &ts[0]->shape;
  for (uint32_t i = 0; i < n; i++)
    if (ts[i]->shape.rank == 0)
      return rerr(&r, SC_OPS_ERROR_SHAPE,
                  "zero-dimensional tensor (at position %u) cannot be concatenated", i);
  uint32_t d;
  if (!get_dim(&r, "dim", s0->rank, &d))
    return FALSE;
  sc_shape o = *s0;
  sc_dtype dt = ts[0]->dtype;
  for (uint32_t i = 1; i < n; i++) {
    const sc_shape *si = &ts[i]->shape;
    /* the shapes are formatted only for a message (cat is on every hot path) */
    if (si->rank != s0->rank) {
      g_autofree char *a = r.error ? ss(&r, si) : NULL;
      g_autofree char *b = r.error ? ss(&r, s0) : NULL;
      return rerr(&r, SC_OPS_ERROR_SHAPE,
                  "tensor %u has shape %s but tensor 0 has %s (must have the same number of dims)",
                  i, a, b);
    }
    for (uint32_t k = 0; k < s0->rank; k++) {
      if (k == d)
        continue;
      sc_truth same = d_eq(&r, si->dims[k], s0->dims[k]);
      if (same == SC_YES)
        continue;
      g_autofree char *a = r.error ? ss(&r, si) : NULL;
      g_autofree char *b = r.error ? ss(&r, s0) : NULL;
      if (!rtruth(&r, same, "whether the shapes match",
                  "tensor %u has shape %s but tensor 0 has %s (must match except in dim %u)", i,
                  a, b, d))
        return FALSE;
    }
    o.dims[d] = d_add(&r, o.dims[d], si->dims[d]);
    dt = sc_dtype_promote(dt, ts[i]->dtype);
  }
  if (!check_overflow(&r))
    return FALSE;
  emit(out, &o, dt);
  return TRUE;
}

gboolean sc_rule_stack(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n;
  if (!get_tensor_list(&r, "tensors", &ts, &n, FALSE))
    return FALSE;
  if (n == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "expected a non-empty list of tensors");
  const sc_shape *s0 = &ts[0]->shape;
  uint32_t d;
  if (!get_dim(&r, "dim", s0->rank + 1, &d))
    return FALSE;
  sc_dtype dt = ts[0]->dtype;
  for (uint32_t i = 1; i < n; i++) {
    g_autofree char *a = ss(&r, &ts[i]->shape);
    g_autofree char *b = ss(&r, s0);
    if (!rtruth(&r, sc_shape_same(r.st, &ts[i]->shape, s0), "whether the shapes are equal",
                "stack expects each tensor to be equal size, but tensor %u has shape %s and "
                "tensor 0 has %s",
                i, a, b))
      return FALSE;
    dt = sc_dtype_promote(dt, ts[i]->dtype);
  }
  sc_shape o;
  if (!insert_dim(&r, s0, d, d_c(n), &o))
    return FALSE;
  emit(out, &o, dt);
  return TRUE;
}

gboolean sc_rule_sc_sum(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n;
  if (!get_tensor_list(&r, "tensors", &ts, &n, FALSE))
    return FALSE;
  if (n == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "expects at least one tensor");
  for (uint32_t i = 1; i < n; i++) {
    sc_truth same = sc_shape_same(r.st, &ts[i]->shape, &ts[0]->shape);
    if (same != SC_YES) {
      /* the shapes are formatted only for a message */
      g_autofree char *a = ss(&r, &ts[i]->shape);
      g_autofree char *b = ss(&r, &ts[0]->shape);
      if (!rtruth(&r, same, "whether the shapes are equal",
                  "tensor %u has shape %s but tensor 0 has %s (sum does not broadcast)", i, a, b))
        return FALSE;
    }
    if (ts[i]->dtype != ts[0]->dtype)
      return rerr(&r, SC_OPS_ERROR_SHAPE, "tensor %u has dtype %s but tensor 0 has %s", i,
                  sc_dtype_name(ts[i]->dtype), sc_dtype_name(ts[0]->dtype));
  }
  /* Partial sums of bools are not sums (True + True is True): the
   * distributive and regrouping lemmas would not hold for them. */
  if (n > 1 && ts[0]->dtype == SC_DTYPE_BOOL)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "a sum of bool tensors is not defined (an 'or' is not a sum)");
  emit(out, &ts[0]->shape, ts[0]->dtype);
  return TRUE;
}

/* ---- split / chunk / unbind ------------------------------------------------- */

static gboolean emit_parts(R *r, const sc_ttype *x, uint32_t d, const sc_dim *sizes, uint32_t n,
                           GArray *out) {
  for (uint32_t i = 0; i < n; i++) {
    sc_shape o = x->shape;
    o.dims[d] = sizes[i];
    emit(out, &o, x->dtype);
  }
  return check_overflow(r);
}

static gboolean too_many_parts(R *r, uint64_t n) {
  return rerr(r, SC_OPS_ERROR_SHAPE, "would produce %" G_GUINT64_FORMAT
              " results, more than the supported %d", (guint64)n, SC_MAX_RESULTS);
}

/* ATen's split: parts of SPLIT_SIZE, the last one smaller. */
static gboolean split_by(R *r, const sc_ttype *x, uint32_t d, sc_dim ss_, GArray *out) {
  sc_dim size = x->shape.dims[d];
  g_autofree char *sss = ds(r, ss_);
  g_autofree char *szs = ds(r, size);
  if (!rtruth(r, d_le(r, d_c(0), ss_), "whether split_size is non-negative",
              "split expects split_size to be non-negative, found %s", sss))
    return FALSE;
  sc_truth zero = d_eq(r, ss_, d_c(0));
  if (zero == SC_YES) {
    if (!rtruth(r, d_eq(r, size, d_c(0)), "whether the dimension is empty",
                "split_size can only be 0 if dimension size is 0, but got dimension size of %s",
                szs))
      return FALSE;
    sc_dim z = d_c(0);
    return emit_parts(r, x, d, &z, 1, out);
  }
  if (zero == SC_UNKNOWN)
    return rerr(r, SC_OPS_ERROR_UNDECIDED, "cannot decide whether split_size %s is 0", sss);
  /* num = max(ceil(size / ss), 1); equal parts when ss divides size. */
  sc_dim num;
  if (d_divides(r, ss_, size) == SC_YES) {
    if (!d_floordiv(r, size, ss_, &num))
      return rerr(r, SC_OPS_ERROR_SHAPE, "split_size must be positive");
  } else if (!d_floordiv(r, d_sub(r, d_add(r, size, ss_), d_c(1)), ss_, &num)) {
    return rerr(r, SC_OPS_ERROR_SHAPE, "split_size must be positive");
  }
  if (!check_overflow(r))
    return FALSE;
  if (!sc_dim_is_const(num))
    return rerr(r, SC_OPS_ERROR_UNDECIDED,
                "cannot decide how many parts splitting size %s into parts of %s gives", szs, sss);
  int64_t k = num.value < 1 ? 1 : num.value;
  if (k > SC_MAX_RESULTS)
    return too_many_parts(r, (uint64_t)k);
  g_autofree sc_dim *sizes = g_new(sc_dim, (gsize)k);
  for (int64_t i = 0; i + 1 < k; i++)
    sizes[i] = ss_;
  /* last = size - ss * (k - 1) */
  sizes[k - 1] = d_sub(r, size, d_mul(r, ss_, d_c(k - 1)));
  return emit_parts(r, x, d, sizes, (uint32_t)k, out);
}

gboolean sc_rule_split(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t d;
  sc_dim s;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  if (x->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "split expects at least a 1-dimensional tensor");
  if (!get_dim(&r, "dim", x->shape.rank, &d) || !get_int(&r, "split_size", &s))
    return FALSE;
  return split_by(&r, x, d, s, out);
}

gboolean sc_rule_split_with_sizes(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t d;
  const sc_dim *v;
  uint32_t n;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  if (x->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "split expects at least a 1-dimensional tensor");
  if (!get_dim(&r, "dim", x->shape.rank, &d) || !get_int_list(&r, "split_sizes", &v, &n))
    return FALSE;
  if (n > SC_MAX_RESULTS)
    return too_many_parts(&r, n);
  g_autofree char *l = dims_str(&r, v, n);
  g_autofree char *s = ss(&r, &x->shape);
  sc_dim total = d_c(0);
  for (uint32_t i = 0; i < n; i++) {
    if (!rtruth(&r, d_le(&r, d_c(0), v[i]), "whether the split sizes are non-negative",
                "split_sizes %s has a negative entry", l))
      return FALSE;
    total = d_add(&r, total, v[i]);
  }
  if (!check_overflow(&r))
    return FALSE;
  g_autofree char *sz = ds(&r, x->shape.dims[d]);
  if (!rtruth(&r, d_eq(&r, total, x->shape.dims[d]), "whether split_sizes add up",
              "split_sizes %s must sum to the size of dim %u of self %s (%s)", l, d, s, sz))
    return FALSE;
  return emit_parts(&r, x, d, v, n, out);
}

gboolean sc_rule_chunk(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t d;
  int64_t chunks;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  if (x->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "chunk expects at least a 1-dimensional tensor");
  if (!get_concrete(&r, "chunks", &chunks) || !get_dim(&r, "dim", x->shape.rank, &d))
    return FALSE;
  if (chunks <= 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "chunk expects 'chunks' to be greater than 0, got %" G_GINT64_FORMAT,
                (gint64)chunks);
  sc_dim size = x->shape.dims[d];
  sc_dim c = d_c(chunks);
  if (d_divides(&r, c, size) == SC_YES) {
    /* Equal parts of size / chunks: ATen's split by ceil(size / chunks)
     * gives exactly `chunks` of them, and for size 0 its special case gives
     * `chunks` parts of 0, the same answer. */
    sc_dim part;
    if (!d_floordiv(&r, size, c, &part))
      return FALSE;
    if (chunks > SC_MAX_RESULTS)
      return too_many_parts(&r, (uint64_t)chunks);
    g_autofree sc_dim *sizes = g_new(sc_dim, (gsize)chunks);
    for (int64_t i = 0; i < chunks; i++)
      sizes[i] = part;
    return emit_parts(&r, x, d, sizes, (uint32_t)chunks, out);
  }
  sc_dim split_size;
  if (!d_floordiv(&r, d_sub(&r, d_add(&r, size, c), d_c(1)), c, &split_size))
    return FALSE;
  return split_by(&r, x, d, split_size, out);
}

gboolean sc_rule_unbind(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t d;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  if (x->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "unbind expects at least a 1-dimensional tensor");
  if (!get_dim(&r, "dim", x->shape.rank, &d))
    return FALSE;
  sc_dim size = x->shape.dims[d];
  if (!sc_dim_is_const(size)) {
    g_autofree char *s = ss(&r, &x->shape);
    return rerr(&r, SC_OPS_ERROR_UNDECIDED,
                "cannot decide how many results unbinding dim %u of self %s gives (a symbolic size)",
                d, s);
  }
  if (size.value > SC_MAX_RESULTS)
    return too_many_parts(&r, (uint64_t)size.value);
  sc_shape o = drop_dim(&x->shape, d);
  for (int64_t i = 0; i < size.value; i++)
    emit(out, &o, x->dtype);
  return TRUE;
}

/* ---- flip / roll / repeat ------------------------------------------------- */

gboolean sc_rule_flip(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  const sc_dim *v;
  uint32_t n;
  if (!get_tensor(&r, "self", &x) || !get_int_list(&r, "dims", &v, &n))
    return FALSE;
  if (n > SC_MAX_RANK)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "'dims' has more entries than self has dims");
  uint32_t w[SC_MAX_RANK];
  if (!wrap_dim_list(&r, "dims", v, n, x->shape.rank, w))
    return FALSE;
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

gboolean sc_rule_roll(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  const sc_dim *sh, *dv;
  uint32_t ns, nd;
  if (!get_tensor(&r, "self", &x) || !get_int_list(&r, "shifts", &sh, &ns) ||
      !get_int_list(&r, "dims", &dv, &nd))
    return FALSE;
  if (nd == 0 ? ns != 1 : ns != nd)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "shifts and dimensions must align: shifts has %u, dims %u",
                ns, nd);
  if (nd > SC_MAX_RANK)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "'dims' has more entries than self has dims");
  for (uint32_t i = 0; i < nd; i++) {
    if (!sc_dim_is_const(dv[i]))
      return rerr(&r, SC_OPS_ERROR_SHAPE, "item %u of 'dims' must be a concrete integer", i);
    uint32_t w;
    g_autofree char *what = r.error ? g_strdup_printf("item %u of 'dims'", i) : NULL;
    if (!wrap_value(&r, what, dv[i].value, x->shape.rank, &w))
      return FALSE;
  }
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

gboolean sc_rule_repeat(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  const sc_dim *v;
  uint32_t n;
  if (!get_tensor(&r, "self", &x) || !get_int_list(&r, "repeats", &v, &n))
    return FALSE;
  g_autofree char *s = ss(&r, &x->shape);
  g_autofree char *l = dims_str(&r, v, n);
  if (n < x->shape.rank)
    return rerr(&r, SC_OPS_ERROR_SHAPE,
                "number of dimensions of repeat dims %s can not be smaller than number of "
                "dimensions of self %s",
                l, s);
  if (n > SC_MAX_RANK)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "the result would have more than %d dims", SC_MAX_RANK);
  sc_shape o;
  o.rank = n;
  uint32_t lead = n - x->shape.rank;
  for (uint32_t i = 0; i < n; i++) {
    if (d_le(&r, d_c(0), v[i]) == SC_NO)
      return rerr(&r, SC_OPS_ERROR_SHAPE, "repeats %s has a negative entry", l);
    sc_dim base = i < lead ? d_c(1) : x->shape.dims[i - lead];
    o.dims[i] = d_mul(&r, base, v[i]);
  }
  if (!check_overflow(&r))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

/* repeat_interleave.self_int(self, repeats, dim?, output_size?): each
 * element repeated `repeats` times along dim (dim None: of the flattened
 * self).  output_size, when given, must be the result's size there. */
gboolean sc_rule_repeat_interleave(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  sc_dim rep, osz = d_c(0);
  gboolean has_dim, has_osz;
  sc_dim dimv = d_c(0);
  if (!get_tensor(&r, "self", &x) || !get_int(&r, "repeats", &rep) ||
      !get_opt_int(&r, "dim", &has_dim, &dimv) ||
      !get_opt_int(&r, "output_size", &has_osz, &osz))
    return FALSE;
  if (d_le(&r, d_c(0), rep) == SC_NO) {
    g_autofree char *t = ds(&r, rep);
    return rerr(&r, SC_OPS_ERROR_SHAPE, "repeats can not be negative, got %s", t);
  }
  sc_shape o;
  uint32_t d = 0;
  if (!has_dim) {
    o.rank = 1;
    o.dims[0] = d_mul(&r, numel(&r, &x->shape), rep);
  } else {
    if (!sc_dim_is_const(dimv)) {
      g_autofree char *t = ds(&r, dimv);
      return rerr(&r, SC_OPS_ERROR_SHAPE, "argument 'dim' must be a concrete integer, found %s", t);
    }
    if (!wrap_value(&r, "dim", dimv.value, x->shape.rank, &d))
      return FALSE;
    o = x->shape;
    if (o.rank == 0) {
      o.rank = 1;
      o.dims[0] = rep;
    } else {
      o.dims[d] = d_mul(&r, o.dims[d], rep);
    }
  }
  if (!check_overflow(&r))
    return FALSE;
  if (has_osz) {
    g_autofree char *a = ds(&r, osz);
    g_autofree char *b = ds(&r, o.dims[has_dim ? (x->shape.rank ? d : 0) : 0]);
    if (!rtruth(&r, d_eq(&r, osz, o.dims[has_dim ? (x->shape.rank ? d : 0) : 0]),
                "whether output_size matches",
                "output_size %s does not match the repeated size %s", a, b))
      return FALSE;
  }
  emit(out, &o, x->dtype);
  return TRUE;
}

/* ---- padding, triangles, where, masked_fill ------------------------------- */

gboolean sc_rule_constant_pad_nd(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  const sc_dim *v;
  uint32_t n;
  if (!get_tensor(&r, "self", &x) || !get_int_list(&r, "pad", &v, &n))
    return FALSE;
  g_autofree char *s = ss(&r, &x->shape);
  g_autofree char *l = dims_str(&r, v, n);
  if (n % 2 != 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "length of pad must be even but pad %s has %u entries", l, n);
  if (n / 2 > x->shape.rank)
    return rerr(&r, SC_OPS_ERROR_SHAPE,
                "length of pad should be no more than twice the number of dimensions of the "
                "input: pad %s for self %s",
                l, s);
  sc_shape o = x->shape;
  for (uint32_t i = 0; i < n / 2; i++) {
    uint32_t d = x->shape.rank - 1 - i;
    sc_dim nd = d_add(&r, d_add(&r, x->shape.dims[d], v[2 * i]), v[2 * i + 1]);
    if (!rtruth(&r, d_le(&r, d_c(0), nd), "whether the padded size is non-negative",
                "pad %s of self %s gives a negative size in dim %u", l, s, d))
      return FALSE;
    o.dims[d] = nd;
  }
  if (!check_overflow(&r))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_triangle(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  if (x->shape.rank < 2) {
    g_autofree char *s = ss(&r, &x->shape);
    return rerr(&r, SC_OPS_ERROR_SHAPE, "input tensor must have at least 2 dimensions, self has %s", s);
  }
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

/* Broadcast with the rule's prefix and argument names in the message. */
static gboolean bcast(R *r, const char *na, const sc_shape *a, const char *nb, const sc_shape *b,
                      sc_shape *o) {
  g_autoptr(GError) err = NULL;
  if (sc_broadcast_shapes(r->st, a, b, o, &err))
    return TRUE;
  g_autofree char *sa = ss(r, a);
  g_autofree char *sb = ss(r, b);
  int code = err->code == SC_OPS_ERROR_UNDECIDED ? SC_OPS_ERROR_UNDECIDED : SC_OPS_ERROR_SHAPE;
  return rerr(r, code, "%s %s and %s %s: %s", na, sa, nb, sb, err->message);
}

gboolean sc_rule_where(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *c, *a, *b;
  if (!get_tensor(&r, "condition", &c) || !get_tensor(&r, "self", &a) ||
      !get_tensor(&r, "other", &b))
    return FALSE;
  if (c->dtype != SC_DTYPE_BOOL && c->dtype != SC_DTYPE_U8)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "expected condition to be a boolean tensor, found %s",
                sc_dtype_name(c->dtype));
  sc_shape t, o;
  if (!bcast(&r, "self", &a->shape, "other", &b->shape, &t) ||
      !bcast(&r, "condition", &c->shape, "self/other", &t, &o))
    return FALSE;
  emit(out, &o, sc_dtype_promote(a->dtype, b->dtype));
  return TRUE;
}

gboolean sc_rule_masked_fill(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *m;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "mask", &m))
    return FALSE;
  if (m->dtype != SC_DTYPE_BOOL)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "expected mask dtype to be bool, found %s",
                sc_dtype_name(m->dtype));
  const sc_value *val = arg_named(&r, "value");
  if (val != NULL && val->kind == SC_VAL_TENSOR) {
    const sc_ttype *vt;
    if (!get_tensor(&r, "value", &vt))
      return FALSE;
    if (vt->shape.rank != 0) {
      g_autofree char *vs = ss(&r, &vt->shape);
      return rerr(&r, SC_OPS_ERROR_SHAPE,
                  "only supports a 0-dimensional value tensor, but value has shape %s", vs);
    }
  }
  sc_shape o;
  if (!bcast(&r, "self", &x->shape, "mask", &m->shape, &o))
    return FALSE;
  if (r.call->op->flags & SC_OP_INPLACE) {
    /* In place, the mask must broadcast to self's own shape. */
    g_autofree char *a = ss(&r, &m->shape);
    g_autofree char *b = ss(&r, &x->shape);
    if (!rtruth(&r, sc_shape_same(r.st, &o, &x->shape), "whether mask broadcasts to self",
                "mask %s does not broadcast to self %s", a, b))
      return FALSE;
  }
  emit(out, &o, x->dtype);
  return TRUE;
}

/* ---- index_select / gather / scatter_add / index ----------------------------- */

static gboolean check_index_dtype(R *r, const char *name, sc_dtype dt, gboolean allow_i32) {
  if (dt == SC_DTYPE_I64 || (allow_i32 && dt == SC_DTYPE_I32))
    return TRUE;
  return rerr(r, SC_OPS_ERROR_SHAPE, "expected dtype %s for %s, found %s",
              allow_i32 ? "i64 or i32" : "i64", name, sc_dtype_name(dt));
}

gboolean sc_rule_index_select(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *ix;
  uint32_t d;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "index", &ix) ||
      !get_dim(&r, "dim", x->shape.rank, &d))
    return FALSE;
  if (!check_index_dtype(&r, "index", ix->dtype, TRUE))
    return FALSE;
  if (ix->shape.rank > 1) {
    g_autofree char *s = ss(&r, &ix->shape);
    return rerr(&r, SC_OPS_ERROR_SHAPE, "index is supposed to be a vector, found shape %s", s);
  }
  sc_dim cnt = ix->shape.rank == 0 ? d_c(1) : ix->shape.dims[0];
  sc_shape o = x->shape;
  if (o.rank == 0) {
    if (!rtruth(&r, d_eq(&r, cnt, d_c(1)), "whether index has one element",
                "index_select() of a 0-dim self needs an index with one element"))
      return FALSE;
  } else {
    o.dims[d] = cnt;
  }
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_gather(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *ix;
  uint32_t d;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "index", &ix) ||
      !get_dim(&r, "dim", x->shape.rank, &d))
    return FALSE;
  if (!check_index_dtype(&r, "index", ix->dtype, FALSE))
    return FALSE;
  g_autofree char *a = ss(&r, &ix->shape);
  g_autofree char *b = ss(&r, &x->shape);
  uint32_t xr = x->shape.rank ? x->shape.rank : 1, ir = ix->shape.rank ? ix->shape.rank : 1;
  if (xr != ir)
    return rerr(&r, SC_OPS_ERROR_SHAPE,
                "index %s must have the same number of dimensions as self %s", a, b);
  for (uint32_t k = 0; k < x->shape.rank && k < ix->shape.rank; k++) {
    if (k == d)
      continue;
    if (!rtruth(&r, d_le(&r, ix->shape.dims[k], x->shape.dims[k]), "whether index fits self",
                "size of index %s at dim %u exceeds that of self %s", a, k, b))
      return FALSE;
  }
  emit(out, &ix->shape, x->dtype);
  return TRUE;
}

/* scatter.src / scatter.value(self, dim, index, src | value): self's type;
 * index has self's rank, fits self off dim (and src everywhere). */
gboolean sc_rule_scatter(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *ix, *src = NULL;
  uint32_t d;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "index", &ix) ||
      !get_dim(&r, "dim", x->shape.rank, &d))
    return FALSE;
  if (arg_named(&r, "src") != NULL && !get_tensor(&r, "src", &src))
    return FALSE;
  if (!check_index_dtype(&r, "index", ix->dtype, FALSE))
    return FALSE;
  g_autofree char *a = ss(&r, &ix->shape);
  g_autofree char *b = ss(&r, &x->shape);
  uint32_t xr = x->shape.rank ? x->shape.rank : 1, ir = ix->shape.rank ? ix->shape.rank : 1;
  if (xr != ir || (src != NULL && (src->shape.rank ? src->shape.rank : 1) != xr))
    return rerr(&r, SC_OPS_ERROR_SHAPE,
                "index %s%s must have the same number of dimensions as self %s", a,
                src != NULL ? " and src" : "", b);
  if (src != NULL && src->dtype != x->dtype)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "self is %s but src is %s (expected the same dtype)",
                sc_dtype_name(x->dtype), sc_dtype_name(src->dtype));
  for (uint32_t k = 0; k < x->shape.rank && k < ix->shape.rank; k++) {
    if (src != NULL && k < src->shape.rank) {
      g_autofree char *c = ss(&r, &src->shape);
      if (!rtruth(&r, d_le(&r, ix->shape.dims[k], src->shape.dims[k]), "whether index fits src",
                  "size of index %s at dim %u exceeds that of src %s", a, k, c))
        return FALSE;
    }
    if (k != d &&
        !rtruth(&r, d_le(&r, ix->shape.dims[k], x->shape.dims[k]), "whether index fits self",
                "size of index %s at dim %u exceeds that of self %s", a, k, b))
      return FALSE;
  }
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

/* scatter_add(self, dim, index, src): scatter.src's rule (index fits src
 * and, off dim, self; src of self's dtype). */
gboolean sc_rule_scatter_add(const sc_op_call *call, GArray *out, GError **error) {
  return sc_rule_scatter(call, out, error);
}

/* index_add(self, dim, index [n], source, alpha): source has self's shape
 * with n at dim, and self's dtype. */
gboolean sc_rule_index_add(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *ix, *src;
  uint32_t d;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "index", &ix) ||
      !get_tensor(&r, "source", &src) || !get_dim(&r, "dim", x->shape.rank, &d))
    return FALSE;
  if (!check_index_dtype(&r, "index", ix->dtype, TRUE))
    return FALSE;
  g_autofree char *a = ss(&r, &ix->shape);
  g_autofree char *b = ss(&r, &x->shape);
  g_autofree char *c = ss(&r, &src->shape);
  if (ix->shape.rank > 1)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "index is supposed to be a vector, found shape %s", a);
  if (src->dtype != x->dtype)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "self is %s but source is %s (expected the same dtype)",
                sc_dtype_name(x->dtype), sc_dtype_name(src->dtype));
  sc_dim n = ix->shape.rank == 0 ? d_c(1) : ix->shape.dims[0];
  if (x->shape.rank == 0) {
    if (src->shape.rank > 1)
      return rerr(&r, SC_OPS_ERROR_SHAPE, "source %s must be 0-D or 1-D for a 0-D self", c);
  } else {
    if (src->shape.rank != x->shape.rank)
      return rerr(&r, SC_OPS_ERROR_SHAPE,
                  "source %s must have the same number of dimensions as self %s", c, b);
    for (uint32_t k = 0; k < x->shape.rank; k++) {
      sc_dim want = k == d ? n : x->shape.dims[k];
      if (!rtruth(&r, d_eq(&r, src->shape.dims[k], want), "whether source fits self",
                  "source %s does not match self %s with %s entries of index %s at dim %u",
                  c, b, k == d ? "the" : "all", a, k))
        return FALSE;
    }
  }
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

/* one_hot(self i64, num_classes): self's shape + [num_classes], i64.
 * num_classes -1 (the default) takes max(self) + 1 from the values: not a
 * shape rule's business, so it is refused with how to fix it. */
gboolean sc_rule_one_hot(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  sc_dim c;
  if (!get_tensor(&r, "self", &x) || !get_int(&r, "num_classes", &c))
    return FALSE;
  if (x->dtype != SC_DTYPE_I64)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "one_hot is only applicable to index tensors (i64), got %s",
                sc_dtype_name(x->dtype));
  if (sc_dim_is_const(c) && c.value == -1)
    return rerr(&r, SC_OPS_ERROR_UNDECIDED,
                "num_classes=-1 takes the number of classes from the values of self: "
                "pass num_classes explicitly");
  if (d_le(&r, d_c(1), c) != SC_YES) {
    g_autofree char *t = ds(&r, c);
    return rerr(&r, d_le(&r, d_c(1), c) == SC_NO ? SC_OPS_ERROR_SHAPE : SC_OPS_ERROR_UNDECIDED,
                "num_classes should be positive, got %s", t);
  }
  if (x->shape.rank + 1 > SC_MAX_RANK)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "the result would have more than %d dims", SC_MAX_RANK);
  sc_shape o = x->shape;
  o.dims[o.rank++] = c;
  emit(out, &o, SC_DTYPE_I64);
  return TRUE;
}

/* Advanced indexing (ATen's index.Tensor): the non-None indices broadcast
 * to one shape B.  When they are adjacent, B replaces the dims they index in
 * place; when a None separates them, B goes first and the remaining dims
 * follow in order.  *has_mask reports a bool index (data-dependent size:
 * refused unless ALLOW_MASK, in which case *o is not computed). */
static gboolean index_shape(R *r, const sc_ttype *x, gboolean allow_mask, gboolean *has_mask,
                            sc_shape *o) {
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n;
  *has_mask = FALSE;
  if (!get_tensor_list(r, "indices", &ts, &n, TRUE))
    return FALSE;
  g_autofree char *s = ss(r, &x->shape);
  if (n > x->shape.rank)
    return rerr(r, SC_OPS_ERROR_SHAPE, "too many indices for self %s of dimension %u (got %u)", s,
                x->shape.rank, n);
  int32_t first = -1, last = -1;
  uint32_t count = 0;
  sc_shape b = sc_shape_scalar();
  for (uint32_t i = 0; i < n; i++) {
    if (ts[i] == NULL)
      continue;
    if (ts[i]->dtype == SC_DTYPE_BOOL || ts[i]->dtype == SC_DTYPE_U8) {
      *has_mask = TRUE;
      if (allow_mask)
        return TRUE;
      return rerr(r, SC_OPS_ERROR_SHAPE,
                  "index %u is a boolean mask (dtype %s): its result size depends on the data, "
                  "which is not supported",
                  i, sc_dtype_name(ts[i]->dtype));
    }
    if (!sc_dtype_is_integral(ts[i]->dtype))
      return rerr(r, SC_OPS_ERROR_SHAPE,
                  "tensors used as indices must be long, int, byte or bool tensors: index %u "
                  "has dtype %s",
                  i, sc_dtype_name(ts[i]->dtype));
    if (count == 0) {
      b = ts[i]->shape;
    } else {
      sc_shape nb;
      g_autofree char *what = g_strdup_printf("index %u", i);
      if (!bcast(r, "indices before", &b, what, &ts[i]->shape, &nb))
        return FALSE;
      b = nb;
    }
    if (first < 0)
      first = (int32_t)i;
    last = (int32_t)i;
    count++;
  }
  if (count == 0) {
    *o = x->shape;
    return TRUE;
  }
  gboolean adjacent = TRUE;
  for (int32_t i = first; i <= last; i++)
    if (ts[i] == NULL)
      adjacent = FALSE;
  uint32_t rest = x->shape.rank - ((uint32_t)(last - first) + 1);
  if (b.rank + rest > SC_MAX_RANK)
    return rerr(r, SC_OPS_ERROR_SHAPE, "the result would have more than %d dims", SC_MAX_RANK);
  o->rank = 0;
  if (adjacent) {
    for (int32_t i = 0; i < first; i++)
      o->dims[o->rank++] = x->shape.dims[i];
    for (uint32_t i = 0; i < b.rank; i++)
      o->dims[o->rank++] = b.dims[i];
    for (uint32_t i = (uint32_t)last + 1; i < x->shape.rank; i++)
      o->dims[o->rank++] = x->shape.dims[i];
  } else {
    for (uint32_t i = 0; i < b.rank; i++)
      o->dims[o->rank++] = b.dims[i];
    for (uint32_t i = 0; i < x->shape.rank; i++)
      if (i >= n || ts[i] == NULL)
        o->dims[o->rank++] = x->shape.dims[i];
  }
  return TRUE;
}

gboolean sc_rule_index(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  gboolean mask;
  sc_shape o;
  if (!get_tensor(&r, "self", &x) || !index_shape(&r, x, FALSE, &mask, &o))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_index_put(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *v;
  gboolean mask;
  sc_shape o;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "values", &v) ||
      !index_shape(&r, x, TRUE, &mask, &o))
    return FALSE;
  if (!mask) {
    sc_shape b;
    g_autofree char *a = ss(&r, &v->shape);
    g_autofree char *is = ss(&r, &o);
    if (!bcast(&r, "values", &v->shape, "the indexing result", &o, &b) ||
        !rtruth(&r, sc_shape_same(r.st, &b, &o), "whether values broadcast to the indexed shape",
                "shape mismatch: values of shape %s cannot be broadcast to indexing result of "
                "shape %s",
                a, is))
      return FALSE;
  }
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

/* ---- topk / sort ------------------------------------------------------------ */

gboolean sc_rule_topk(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t d;
  sc_dim k;
  if (!get_tensor(&r, "self", &x) || !get_dim(&r, "dim", x->shape.rank, &d) ||
      !get_int(&r, "k", &k))
    return FALSE;
  sc_dim size = x->shape.rank ? x->shape.dims[d] : d_c(1);
  g_autofree char *ks = ds(&r, k);
  g_autofree char *zs = ds(&r, size);
  if (!rtruth(&r, d_le(&r, d_c(0), k), "whether k is in range",
              "selected index k = %s out of range (dim size %s)", ks, zs) ||
      !rtruth(&r, d_le(&r, k, size), "whether k is in range",
              "selected index k = %s out of range (dim size %s)", ks, zs))
    return FALSE;
  sc_shape o = x->shape;
  if (o.rank)
    o.dims[d] = k;
  emit(out, &o, x->dtype);
  emit(out, &o, SC_DTYPE_I64);
  return TRUE;
}

gboolean sc_rule_sort(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  uint32_t d;
  if (!get_tensor(&r, "self", &x) || !get_dim(&r, "dim", x->shape.rank, &d))
    return FALSE;
  emit(out, &x->shape, x->dtype);
  emit(out, &x->shape, SC_DTYPE_I64);
  return TRUE;
}

/* ---- data-dependent sizes ---------------------------------------------------- */

/* nonzero(self, *, size): the coordinates of the nonzero elements of self in
 * row-major order, i64 [size, rank(self)] (a 0-dim self gives [size, 0]).
 * How many there are depends on the values, so the rule cannot compute
 * `size`: it is the declared size the graph filled in (ops.h,
 * SC_OP_DATA_DEPENDENT), and None is undecided.  What can be checked is:
 * 0 <= size <= numel(self).  A bound the symtab cannot decide is accepted
 * (the count meets it at run time by construction; no proof reads it as
 * a premise), one it refutes is a shape error. */
gboolean sc_rule_nonzero(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  gboolean present;
  sc_dim n;
  if (!get_tensor(&r, "self", &x) || !get_opt_int(&r, "size", &present, &n))
    return FALSE;
  if (!present)
    return rerr(&r, SC_OPS_ERROR_UNDECIDED,
                "the number of nonzero elements of self depends on its values: declare the "
                "result's shape with a symbol of its own ([u0, %u]) or give size",
                x->shape.rank);
  sc_dim total = numel(&r, &x->shape);
  g_autofree char *ns = ds(&r, n);
  g_autofree char *ts = ds(&r, total);
  if (d_le(&r, d_c(0), n) == SC_NO)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "size %s is negative", ns);
  if (d_le(&r, n, total) == SC_NO)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "size %s exceeds the %s elements of self", ns, ts);
  if (!check_overflow(&r))
    return FALSE;
  sc_shape o = sc_shape_scalar();
  o.rank = 2;
  o.dims[0] = n;
  o.dims[1] = d_c(x->shape.rank);
  emit(out, &o, SC_DTYPE_I64);
  return TRUE;
}

/* ---- copies ------------------------------------------------------------------- */

/* The type of the first argument, unchanged (clone, detach, wait_tensor...). */
gboolean sc_rule_same(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  if (call->op->n_args == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "has no tensor argument");
  if (!get_tensor(&r, call->op->args[0].name, &x))
    return FALSE;
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

gboolean sc_rule_to_copy(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  emit(out, &x->shape, get_dtype_or(&r, "dtype", x->dtype));
  return TRUE;
}

gboolean sc_rule_copy(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x, *src;
  if (!get_tensor(&r, "self", &x) || !get_tensor(&r, "src", &src))
    return FALSE;
  sc_shape b;
  g_autofree char *a = ss(&r, &src->shape);
  g_autofree char *s = ss(&r, &x->shape);
  if (!bcast(&r, "src", &src->shape, "self", &x->shape, &b) ||
      !rtruth(&r, sc_shape_same(r.st, &b, &x->shape), "whether src broadcasts to self",
              "src of shape %s cannot be broadcast to self of shape %s", a, s))
    return FALSE;
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

/* ---- creation -------------------------------------------------------------------- */

static sc_dtype scalar_dtype(const sc_value *v, sc_dtype dflt) {
  if (v == NULL)
    return dflt;
  switch (v->kind) {
  case SC_VAL_BOOL: return SC_DTYPE_BOOL;
  case SC_VAL_INT: return SC_DTYPE_I64;
  case SC_VAL_FLOAT: return SC_DTYPE_F32;
  default: return dflt;
  }
}

/* full / zeros / ones / empty / empty_strided and sc.full / sc.empty. */
gboolean sc_rule_full(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  sc_shape o;
  const char *name = first_present(&r, "size", "shape");
  if (!sizes_to_shape(&r, name, &o))
    return FALSE;
  const sc_value *stride = arg_named(&r, "stride");
  if (stride != NULL && stride->kind == SC_VAL_INT_LIST && stride->u.ints.n != o.rank)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "stride has %u entries but size has %u", stride->u.ints.n,
                o.rank);
  const sc_value *fill = arg_named(&r, "fill_value");
  if (fill == NULL)
    fill = arg_named(&r, "value");
  emit(out, &o, get_dtype_or(&r, "dtype", scalar_dtype(fill, SC_DTYPE_F32)));
  return TRUE;
}

/* *_like and fill: self's shape, self's dtype unless dtype is given. */
gboolean sc_rule_like(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  if (!get_tensor(&r, "self", &x))
    return FALSE;
  emit(out, &x->shape, get_dtype_or(&r, "dtype", x->dtype));
  return TRUE;
}

/* new_*: the given size, self's dtype unless dtype is given. */
gboolean sc_rule_new(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  sc_shape o;
  if (!get_tensor(&r, "self", &x) || !sizes_to_shape(&r, "size", &o))
    return FALSE;
  const sc_value *stride = arg_named(&r, "stride");
  if (stride != NULL && stride->kind == SC_VAL_INT_LIST && stride->u.ints.n != o.rank)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "stride has %u entries but size has %u", stride->u.ints.n,
                o.rank);
  emit(out, &o, get_dtype_or(&r, "dtype", x->dtype));
  return TRUE;
}

gboolean sc_rule_scalar_tensor(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  sc_shape o = sc_shape_scalar();
  emit(out, &o, get_dtype_or(&r, "dtype", SC_DTYPE_F32));
  return TRUE;
}

static gboolean scalar_as_double(const sc_value *v, double *out) {
  switch (v->kind) {
  case SC_VAL_FLOAT: *out = v->u.f; return TRUE;
  case SC_VAL_BOOL: *out = v->u.b ? 1.0 : 0.0; return TRUE;
  case SC_VAL_INT:
    if (!sc_dim_is_const(v->u.i))
      return FALSE;
    *out = (double)v->u.i.value;
    return TRUE;
  default: return FALSE;
  }
}

/* arange: length ceil((end - start) / step); i64 for integer bounds, the
 * default float dtype (f32) when any bound is a float. */
gboolean sc_rule_arange(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  sc_value zero = sc_value_int(0), one = sc_value_int(1);
  const sc_value *vs = arg_named(&r, "start"), *ve = arg_named(&r, "end"),
                 *vp = arg_named(&r, "step");
  if (vs == NULL)
    vs = &zero;
  if (vp == NULL)
    vp = &one;
  if (ve == NULL)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "has no 'end' argument");
  const sc_value *vals[3] = {vs, ve, vp};
  gboolean any_float = FALSE, all_int = TRUE;
  for (int i = 0; i < 3; i++) {
    if (vals[i]->kind == SC_VAL_FLOAT)
      any_float = TRUE;
    if (vals[i]->kind != SC_VAL_INT && vals[i]->kind != SC_VAL_BOOL)
      all_int = FALSE;
    if (vals[i]->kind != SC_VAL_INT && vals[i]->kind != SC_VAL_FLOAT && vals[i]->kind != SC_VAL_BOOL)
      return rerr(&r, SC_OPS_ERROR_SHAPE, "bounds must be numbers");
  }
  sc_dtype dt = get_dtype_or(&r, "dtype", any_float ? SC_DTYPE_F32 : SC_DTYPE_I64);
  sc_shape o;
  o.rank = 1;
  if (all_int) {
    sc_dim s = vs->kind == SC_VAL_BOOL ? d_c(vs->u.b) : vs->u.i;
    sc_dim e = ve->kind == SC_VAL_BOOL ? d_c(ve->u.b) : ve->u.i;
    sc_dim p = vp->kind == SC_VAL_BOOL ? d_c(vp->u.b) : vp->u.i;
    g_autofree char *a = ds(&r, s);
    g_autofree char *b = ds(&r, e);
    g_autofree char *c = ds(&r, p);
    sc_truth pos = d_lt(&r, d_c(0), p), neg = d_lt(&r, p, d_c(0));
    if (pos == SC_NO && neg == SC_NO)
      return rerr(&r, SC_OPS_ERROR_SHAPE, "step must be nonzero");
    if (pos == SC_UNKNOWN && neg == SC_UNKNOWN)
      return rerr(&r, SC_OPS_ERROR_UNDECIDED, "cannot decide the sign of step %s", c);
    sc_truth ok = pos == SC_YES ? d_le(&r, s, e) : d_le(&r, e, s);
    if (!rtruth(&r, ok, "whether the bounds agree with the step sign",
                "upper bound and larger bound inconsistent with step sign (start %s, end %s, "
                "step %s)",
                a, b, c))
      return FALSE;
    /* ceil(len / step) = -floor(-len / step) */
    sc_dim len = d_sub(&r, e, s), q;
    if (is_c(p, 1)) {
      q = len;
    } else {
      if (!d_floordiv(&r, d_neg(&r, len), p, &q))
        return rerr(&r, SC_OPS_ERROR_SHAPE, "step must be nonzero");
      q = d_neg(&r, q);
    }
    if (!check_overflow(&r))
      return FALSE;
    o.dims[0] = q;
    emit(out, &o, dt);
    return TRUE;
  }
  double s, e, p;
  if (!scalar_as_double(vs, &s) || !scalar_as_double(ve, &e) || !scalar_as_double(vp, &p))
    return rerr(&r, SC_OPS_ERROR_SHAPE, "symbolic bounds must be integers (found a float bound)");
  if (dt == SC_DTYPE_I64) {
    /* ATen computes an int64 arange on bounds truncated to int64. */
    s = trunc(s);
    e = trunc(e);
    p = trunc(p);
  }
  if (!isfinite(s) || !isfinite(e))
    return rerr(&r, SC_OPS_ERROR_SHAPE, "unsupported range: %g -> %g", s, e);
  if (p == 0 || isnan(p))
    return rerr(&r, SC_OPS_ERROR_SHAPE, "step must be nonzero");
  if (!((p > 0 && e >= s) || (p < 0 && e <= s)))
    return rerr(&r, SC_OPS_ERROR_SHAPE,
                "upper bound and larger bound inconsistent with step sign (start %g, end %g, "
                "step %g)",
                s, e, p);
  double size = ceil((e - s) / p);
  if (!(size >= 0) || size >= 9.2e18)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "invalid size, possible overflow");
  o.dims[0] = d_c((int64_t)size);
  emit(out, &o, dt);
  return TRUE;
}

/* ---- collectives (comm.*) ------------------------------------------------------- */

static gboolean check_reduce_op(R *r, const char *name, const char *const *allowed) {
  const sc_value *v = arg_named(r, name);
  if (v == NULL || v->kind != SC_VAL_STR)
    return rerr(r, SC_OPS_ERROR_SHAPE, "argument '%s' is not a string", name);
  GString *list = g_string_new(NULL);
  for (int i = 0; allowed[i] != NULL; i++) {
    if (g_ascii_strcasecmp(v->u.s, allowed[i]) == 0) {
      g_string_free(list, TRUE);
      return TRUE;
    }
    g_string_append_printf(list, "%s%s", i ? ", " : "", allowed[i]);
  }
  g_autofree char *l = g_string_free(list, FALSE);
  return rerr(r, SC_OPS_ERROR_SHAPE, "unknown reduction '%s' for '%s' (expected one of %s)",
              v->u.s, name, l);
}

static const char *const comm_reduce_ops[] = {"sum", "max", "min", "avg", NULL};
static const char *const c10d_reduce_ops[] = {"sum", "avg", "product", "min", "max",
                                              "premul_sum", "band", "bor", "bxor", NULL};

/* The inputs of a comm.* collective: at least one, equal shapes and dtypes. */
static gboolean comm_inputs(R *r, const sc_ttype ***ts, uint32_t *n) {
  if (!get_tensor_list(r, "inputs", ts, n, FALSE))
    return FALSE;
  if (*n == 0)
    return rerr(r, SC_OPS_ERROR_SHAPE, "needs at least one input");
  if (*n > SC_MAX_RESULTS)
    return too_many_parts(r, *n);
  for (uint32_t i = 1; i < *n; i++) {
    const sc_ttype *a = (*ts)[i], *b = (*ts)[0];
    g_autofree char *sa = ss(r, &a->shape);
    g_autofree char *sb = ss(r, &b->shape);
    if (a->dtype != b->dtype ||
        sc_shape_same(r->st, &a->shape, &b->shape) != SC_YES) {
      int code = (a->dtype == b->dtype && sc_shape_same(r->st, &a->shape, &b->shape) == SC_UNKNOWN)
                     ? SC_OPS_ERROR_UNDECIDED
                     : SC_OPS_ERROR_SHAPE;
      return rerr(r, code,
                  "input %u is %s %s but input 0 is %s %s (the inputs of a collective must have "
                  "equal shapes and dtypes)",
                  i, sc_dtype_name(a->dtype), sa, sc_dtype_name(b->dtype), sb);
    }
  }
  return TRUE;
}

static void emit_n(GArray *out, const sc_shape *s, sc_dtype dt, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    emit(out, s, dt);
}

/* dim d of S divided into N equal parts, or an error. */
static gboolean split_equal(R *r, const sc_shape *s, uint32_t d, sc_dim n, sc_dim *part) {
  g_autofree char *sz = ds(r, s->dims[d]);
  g_autofree char *ns = ds(r, n);
  g_autofree char *sh = ss(r, s);
  if (!rtruth(r, d_le(r, d_c(1), n), "whether the group size is positive",
              "group size %s must be positive", ns))
    return FALSE;
  if (!rtruth(r, d_divides(r, n, s->dims[d]), "whether the size splits evenly",
              "size %s of dim %u of %s does not split into %s equal parts", sz, d, sh, ns))
    return FALSE;
  if (!d_floordiv(r, s->dims[d], n, part))
    return rerr(r, SC_OPS_ERROR_SHAPE, "group size must be positive");
  return TRUE;
}

gboolean sc_rule_comm_all_reduce(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n;
  if (!comm_inputs(&r, &ts, &n) || !check_reduce_op(&r, "op", comm_reduce_ops))
    return FALSE;
  emit_n(out, &ts[0]->shape, ts[0]->dtype, n);
  return TRUE;
}

gboolean sc_rule_comm_all_gather(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n, d;
  if (!comm_inputs(&r, &ts, &n))
    return FALSE;
  if (ts[0]->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "cannot gather 0-dim tensors");
  if (!get_dim(&r, "dim", ts[0]->shape.rank, &d))
    return FALSE;
  sc_shape o = ts[0]->shape;
  o.dims[d] = d_mul(&r, o.dims[d], d_c(n));
  if (!check_overflow(&r))
    return FALSE;
  emit_n(out, &o, ts[0]->dtype, n);
  return TRUE;
}

gboolean sc_rule_comm_reduce_scatter(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n, d;
  if (!comm_inputs(&r, &ts, &n) || !check_reduce_op(&r, "op", comm_reduce_ops))
    return FALSE;
  if (ts[0]->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "cannot scatter 0-dim tensors");
  if (!get_dim(&r, "dim", ts[0]->shape.rank, &d))
    return FALSE;
  sc_shape o = ts[0]->shape;
  if (!split_equal(&r, &o, d, d_c(n), &o.dims[d]))
    return FALSE;
  emit_n(out, &o, ts[0]->dtype, n);
  return TRUE;
}

gboolean sc_rule_comm_all_to_all(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n, sd, cd;
  if (!comm_inputs(&r, &ts, &n))
    return FALSE;
  if (ts[0]->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "cannot exchange 0-dim tensors");
  if (!get_dim(&r, "split_dim", ts[0]->shape.rank, &sd) ||
      !get_dim(&r, "concat_dim", ts[0]->shape.rank, &cd))
    return FALSE;
  sc_shape o = ts[0]->shape;
  if (!split_equal(&r, &o, sd, d_c(n), &o.dims[sd]))
    return FALSE;
  o.dims[cd] = d_mul(&r, o.dims[cd], d_c(n));
  if (!check_overflow(&r))
    return FALSE;
  emit_n(out, &o, ts[0]->dtype, n);
  return TRUE;
}

gboolean sc_rule_comm_broadcast(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n;
  int64_t src;
  if (!comm_inputs(&r, &ts, &n) || !get_concrete(&r, "src", &src))
    return FALSE;
  if (src < 0 || src >= (int64_t)n)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "src %" G_GINT64_FORMAT " is not a position in a group of %u",
                (gint64)src, n);
  emit_n(out, &ts[src]->shape, ts[src]->dtype, n);
  return TRUE;
}

/* A rank argument: None (when OPTIONAL), else a concrete integer >= 0. */
static gboolean check_rank_arg(R *r, const char *name, gboolean optional) {
  const sc_value *v = arg_named(r, name);
  if (optional && (v == NULL || v->kind == SC_VAL_NONE))
    return TRUE;
  int64_t k;
  if (!get_concrete(r, name, &k))
    return FALSE;
  if (k < 0)
    return rerr(r, SC_OPS_ERROR_SHAPE, "%s %" G_GINT64_FORMAT " is not a rank", name, (gint64)k);
  return TRUE;
}

gboolean sc_rule_comm_send_recv(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  g_autofree const sc_ttype **ts = NULL;
  uint32_t n;
  if (!comm_inputs(&r, &ts, &n))
    return FALSE;
  if (n != 1)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "takes exactly one input, found %u", n);
  if (!check_rank_arg(&r, "src", TRUE) || !check_rank_arg(&r, "dst", TRUE))
    return FALSE;
  emit(out, &ts[0]->shape, ts[0]->dtype);
  return TRUE;
}

/* comm.send: no result; the loader pairs it with its comm.recv. */
gboolean sc_rule_comm_send(const sc_op_call *call, GArray *out, GError **error) {
  (void)out;
  R r = rctx(call, error);
  const sc_ttype *x;
  sc_dim tag;
  return get_tensor(&r, "x", &x) && check_rank_arg(&r, "dst", FALSE) && get_int(&r, "tag", &tag);
}

/* comm.recv: the result is what the matching send sends.  Its type is the
 * node's declared result (ops.h, SC_OP_DECLARED): the rule checks the
 * arguments and emits a 0-dim f32 placeholder that a graph replaces with
 * the declaration (and refuses without one). */
gboolean sc_rule_comm_recv(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  sc_dim tag;
  if (!check_rank_arg(&r, "src", FALSE) || !get_int(&r, "tag", &tag))
    return FALSE;
  sc_shape s = sc_shape_scalar();
  emit(out, &s, SC_DTYPE_F32);
  return TRUE;
}

/* ---- PyTorch's per-rank functional collectives -------------------------------- */

gboolean sc_rule_c10d_all_reduce(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  if (!get_tensor(&r, "input", &x) || !check_reduce_op(&r, "reduce_op", c10d_reduce_ops))
    return FALSE;
  emit(out, &x->shape, x->dtype);
  return TRUE;
}

gboolean sc_rule_c10d_all_gather(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  int64_t g;
  if (!get_tensor(&r, "input", &x) || !get_concrete(&r, "group_size", &g))
    return FALSE;
  if (g < 1)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "group_size must be positive, found %" G_GINT64_FORMAT, (gint64)g);
  if (x->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "cannot gather a 0-dim tensor along dim 0");
  sc_shape o = x->shape;
  o.dims[0] = d_mul(&r, o.dims[0], d_c(g));
  if (!check_overflow(&r))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_c10d_reduce_scatter(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  int64_t g;
  if (!get_tensor(&r, "input", &x) || !check_reduce_op(&r, "reduce_op", c10d_reduce_ops) ||
      !get_concrete(&r, "group_size", &g))
    return FALSE;
  if (x->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "cannot scatter a 0-dim tensor along dim 0");
  sc_shape o = x->shape;
  if (!split_equal(&r, &o, 0, d_c(g), &o.dims[0]))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_c10d_all_to_all(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  if (!get_tensor(&r, "input", &x))
    return FALSE;
  if (x->shape.rank == 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "cannot exchange a 0-dim tensor along dim 0");
  sc_shape o = x->shape;
  const sc_value *in = arg_named(&r, "input_split_sizes");
  const sc_value *os = arg_named(&r, "output_split_sizes");
  if (in != NULL && in->kind == SC_VAL_INT_LIST && in->u.ints.n > 0) {
    sc_dim total = d_c(0);
    for (uint32_t i = 0; i < in->u.ints.n; i++)
      total = d_add(&r, total, in->u.ints.v[i]);
    g_autofree char *l = dims_str(&r, in->u.ints.v, in->u.ints.n);
    g_autofree char *s = ss(&r, &x->shape);
    if (!rtruth(&r, d_eq(&r, total, x->shape.dims[0]), "whether input_split_sizes add up",
                "input_split_sizes %s must sum to dim 0 of input %s", l, s))
      return FALSE;
  }
  if (os != NULL && os->kind == SC_VAL_INT_LIST && os->u.ints.n > 0) {
    sc_dim total = d_c(0);
    for (uint32_t i = 0; i < os->u.ints.n; i++) {
      if (d_le(&r, d_c(0), os->u.ints.v[i]) == SC_NO)
        return rerr(&r, SC_OPS_ERROR_SHAPE, "output_split_sizes has a negative entry");
      total = d_add(&r, total, os->u.ints.v[i]);
    }
    o.dims[0] = total;
  }
  if (!check_overflow(&r))
    return FALSE;
  emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_c10d_broadcast(const sc_op_call *call, GArray *out, GError **error) {
  R r = rctx(call, error);
  const sc_ttype *x;
  int64_t src;
  if (!get_tensor(&r, "input", &x) || !get_concrete(&r, "src", &src))
    return FALSE;
  if (src < 0)
    return rerr(&r, SC_OPS_ERROR_SHAPE, "src must be a non-negative rank, found %" G_GINT64_FORMAT,
                (gint64)src);
  emit(out, &x->shape, x->dtype);
  return TRUE;
}
