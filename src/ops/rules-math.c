/* rules-math.c — shape rules of the math operators (ops-math.def).
 *
 * One rule per family, not per operator: elementwise (broadcast + ATen type
 * promotion, then a family-specific result dtype), matrix products,
 * softmax, normalization, dropout, reductions, embedding, losses and
 * scaled dot-product attention (forward and backward kernels).  Rules
 * find their arguments by schema name (arg_find), so one rule serves every
 * overload of a family whatever the argument positions.
 *
 * Invariants:
 *  - a rule appends exactly op->n_results types on success and nothing on
 *    failure (results are built in locals and emitted at the end);
 *  - every error message starts with the qualified operator name, names the
 *    offending argument and shows the shapes involved;
 *  - a size comparison that the symtab cannot decide is
 *    SC_OPS_ERROR_UNDECIDED naming both sizes, never a silent yes;
 *  - dims given as arguments must be concrete integers (ATen's are).
 *
 * Type promotion follows ATen's result_type: operands are tensors with
 * dims, zero-dim tensors and wrapped Python scalars, in decreasing
 * priority; a lower-priority operand only matters when it is of a higher
 * category (bool < integral < floating).  A wrapped float is the default
 * dtype (f32), a wrapped int is i64. */
#include "ops/rules.h"

#include <stdarg.h>
#include <string.h>

/* "No dtype yet" in the promotion state. */
#define DTYPE_UNDEF SC_DTYPE_COUNT

/* ---------------------------------------------------------------------------
 * Errors and small helpers
 * ------------------------------------------------------------------------- */

static gboolean fail(const sc_op_call *call, GError **error, sc_ops_error code,
                     const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* Set ERROR to "<qualname>: <message>" and return FALSE. */
static gboolean fail(const sc_op_call *call, GError **error, sc_ops_error code,
                     const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, SC_OPS_ERROR, (gint)code, "%s: %s", call->op->qualname, msg);
  return FALSE;
}

/* Index of the schema argument NAME, or UINT32_MAX when the schema has none. */
static uint32_t arg_find(const sc_op *op, const char *name) {
  for (uint32_t i = 0; i < op->n_args; i++)
    if (strcmp(op->args[i].name, name) == 0)
      return i;
  return UINT32_MAX;
}

/* The bound value of argument NAME, or NULL when the schema has no such
 * argument. */
static const sc_value *arg_value(const sc_op_call *call, const char *name) {
  uint32_t i = arg_find(call->op, name);
  return i == UINT32_MAX ? NULL : &call->args[i];
}

/* The type of tensor argument NAME; NULL when the schema lacks it or it is
 * None (optional tensors). */
static const sc_ttype *arg_tensor(const sc_op_call *call, const char *name) {
  uint32_t i = arg_find(call->op, name);
  if (i == UINT32_MAX || call->args[i].kind != SC_VAL_TENSOR)
    return NULL;
  return sc_rule_tensor(call, i);
}

/* A bool argument; DEFLT when absent or None. */
static gboolean arg_bool(const sc_op_call *call, const char *name, gboolean deflt) {
  const sc_value *v = arg_value(call, name);
  return v != NULL && v->kind == SC_VAL_BOOL ? v->u.b : deflt;
}

static char *shape_str(const sc_shape *s) { return sc_shape_to_string(s); }

static char *dim_str(const sc_op_call *call, sc_dim d) {
  return sc_dim_to_string(call->symtab, d);
}

/* Require A == B.  SUBJECT says what is compared ("self [4, 8] and mat2
 * [16, 2]"), VERB what needs the equality ("be multiplied"), DETAIL (may be
 * NULL) which size it is ("batch size").  Messages:
 *   "<op>: <subject> cannot <verb> ([<detail> ]8 != 16)"
 *   "<op>: cannot decide whether <subject> can <verb> ([<detail> ]K == N is unknown)" */
static gboolean require_eq(const sc_op_call *call, sc_dim a, sc_dim b,
                           const char *subject, const char *verb, const char *detail,
                           GError **error) {
  sc_truth t = sc_dim_eq(call->symtab, a, b);
  if (t == SC_YES)
    return TRUE;
  g_autofree char *sa = dim_str(call, a);
  g_autofree char *sb = dim_str(call, b);
  const char *d = detail ? detail : "";
  const char *sp = detail ? " " : "";
  if (t == SC_NO)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "%s cannot %s (%s%s%s != %s)",
                subject, verb, d, sp, sa, sb);
  return fail(call, error, SC_OPS_ERROR_UNDECIDED,
              "cannot decide whether %s can %s (%s%s%s == %s is unknown)",
              subject, verb, d, sp, sa, sb);
}

/* Require shape A (of argument NAME) to equal shape B exactly (rank and
 * every size); WHAT describes B ("the shape of output [4, 8]"). */
static gboolean require_same_shape(const sc_op_call *call, const char *name,
                                   const sc_shape *a, const sc_shape *b,
                                   const char *what, GError **error) {
  g_autofree char *sa = shape_str(a);
  g_autofree char *sb = shape_str(b);
  if (a->rank != b->rank)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "%s %s must have %s %s (rank %u != %u)",
                name, sa, what, sb, a->rank, b->rank);
  g_autofree char *subject = g_strdup_printf("%s %s", name, sa);
  g_autofree char *verb = g_strdup_printf("have %s %s", what, sb);
  for (uint32_t i = 0; i < a->rank; i++) {
    g_autofree char *detail = g_strdup_printf("dim %u:", i);
    if (!require_eq(call, a->dims[i], b->dims[i], subject, verb, detail, error))
      return FALSE;
  }
  return TRUE;
}

/* Require shape SRC (of argument NAME) to expand to TARGET without changing
 * it (ATen's expand_size): aligned from the right, each size of SRC is 1 or
 * equal to TARGET's. */
static gboolean require_expandable(const sc_op_call *call, const char *name,
                                   const sc_shape *src, const sc_shape *target,
                                   GError **error) {
  g_autofree char *ss = shape_str(src);
  g_autofree char *st = shape_str(target);
  if (src->rank > target->rank)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "%s %s cannot be expanded to %s (rank %u > %u)", name, ss, st,
                src->rank, target->rank);
  g_autofree char *subject = g_strdup_printf("%s %s", name, ss);
  g_autofree char *verb = g_strdup_printf("be expanded to %s", st);
  for (uint32_t i = 0; i < src->rank; i++) {
    sc_dim d = src->dims[src->rank - 1 - i];
    if (sc_dim_is_const(d) && d.value == 1)
      continue;
    if (!require_eq(call, d, target->dims[target->rank - 1 - i], subject, verb, NULL, error))
      return FALSE;
  }
  return TRUE;
}

/* A concrete integer from an int argument. */
static gboolean concrete_int(const sc_op_call *call, const char *name, sc_dim d,
                             int64_t *out, GError **error) {
  if (!sc_dim_is_const(d)) {
    g_autofree char *s = dim_str(call, d);
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "%s must be a concrete integer, got %s", name, s);
  }
  *out = d.value;
  return TRUE;
}

/* Wrap dim D (argument ARGNAME) against tensor NAME of shape S. */
static gboolean wrap_dim(const sc_op_call *call, const char *argname, sc_dim d,
                         const char *name, const sc_shape *s, uint32_t *out,
                         GError **error) {
  int64_t v = 0;
  if (!concrete_int(call, argname, d, &v, error))
    return FALSE;
  if (!sc_wrap_dim(v, s->rank, out)) {
    g_autofree char *ss = shape_str(s);
    int64_t r = s->rank == 0 ? 1 : (int64_t)s->rank;
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "%s %" G_GINT64_FORMAT " is out of range for %s %s "
                "(expected to be in range of [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "])",
                argname, v, name, ss, -r, r - 1);
  }
  return TRUE;
}

/* A shape from an int[] argument (normalized_shape). */
static gboolean shape_from_list(const sc_op_call *call, const char *name,
                                const sc_value *v, sc_shape *out, GError **error) {
  if (v == NULL || v->kind != SC_VAL_INT_LIST)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "%s must be a list of sizes", name);
  if (v->u.ints.n > SC_MAX_RANK)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "%s has %u sizes, more than the %d supported",
                name, v->u.ints.n, SC_MAX_RANK);
  out->rank = v->u.ints.n;
  for (uint32_t i = 0; i < out->rank; i++) {
    sc_dim d = v->u.ints.v[i];
    if (sc_dim_le(call->symtab, sc_dim_const(0), d) == SC_NO) {
      g_autofree char *s = dim_str(call, d);
      return fail(call, error, SC_OPS_ERROR_SHAPE, "%s has a negative size %s", name, s);
    }
    out->dims[i] = d;
  }
  return TRUE;
}

static void emit(GArray *out, const sc_shape *shape, sc_dtype dtype) {
  sc_rule_emit(out, shape, dtype);
}

/* ---------------------------------------------------------------------------
 * Type promotion (ATen's ResultTypeState)
 * ------------------------------------------------------------------------- */

typedef struct {
  sc_dtype dim_r;      /* tensors with at least one dim */
  sc_dtype zero_r;     /* zero-dim tensors */
  sc_dtype wrapped_r;  /* Python scalars */
} promo_state;

static void promo_init(promo_state *s) {
  s->dim_r = s->zero_r = s->wrapped_r = DTYPE_UNDEF;
}

static sc_dtype promote_skip(sc_dtype a, sc_dtype b) {
  if (a == DTYPE_UNDEF)
    return b;
  if (b == DTYPE_UNDEF)
    return a;
  return sc_dtype_promote(a, b);
}

static void promo_tensor(promo_state *s, const sc_ttype *t) {
  if (t->shape.rank == 0)
    s->zero_r = promote_skip(s->zero_r, t->dtype);
  else
    s->dim_r = promote_skip(s->dim_r, t->dtype);
}

/* The dtype of a Scalar value as a wrapped number. */
static sc_dtype scalar_dtype(const sc_value *v) {
  switch (v->kind) {
  case SC_VAL_FLOAT:
    return SC_DTYPE_F32; /* the default dtype */
  case SC_VAL_BOOL:
    return SC_DTYPE_BOOL;
  default:
    return SC_DTYPE_I64;
  }
}

static void promo_scalar(promo_state *s, const sc_value *v) {
  s->wrapped_r = promote_skip(s->wrapped_r, scalar_dtype(v));
}

/* ATen's combine_categories (without complex). */
static sc_dtype combine_categories(sc_dtype higher, sc_dtype lower) {
  if (higher != DTYPE_UNDEF && sc_dtype_is_floating(higher))
    return higher;
  if (higher == SC_DTYPE_BOOL || (lower != DTYPE_UNDEF && sc_dtype_is_floating(lower)))
    return promote_skip(higher, lower);
  if (higher != DTYPE_UNDEF)
    return higher;
  return lower;
}

static sc_dtype promo_result(const promo_state *s) {
  sc_dtype r = combine_categories(s->dim_r, combine_categories(s->zero_r, s->wrapped_r));
  return r == DTYPE_UNDEF ? SC_DTYPE_F32 : r;
}

/* ---------------------------------------------------------------------------
 * Elementwise families
 * ------------------------------------------------------------------------- */

typedef struct {
  sc_shape shape;           /* broadcast of every tensor operand */
  sc_dtype dtype;           /* ATen result_type of every operand */
  const char *bool_operand; /* name of an operand of dtype bool, or NULL */
} ew_info;

/* Scalar arguments that are parameters, not operands. */
static gboolean is_parameter(const char *name) {
  return strcmp(name, "alpha") == 0 || strcmp(name, "beta") == 0 ||
         strcmp(name, "threshold") == 0 || strcmp(name, "value") == 0 ||
         strcmp(name, "weight") == 0;
}

/* Broadcast every tensor operand and promote every operand (tensor, or
 * Scalar that is not a parameter).  Absent optionals are skipped. */
static gboolean ew_operands(const sc_op_call *call, ew_info *info, GError **error) {
  promo_state ps;
  promo_init(&ps);
  gboolean have_shape = FALSE;
  g_autoptr(GString) names = g_string_new(NULL);
  info->shape = sc_shape_scalar();
  info->bool_operand = NULL;
  for (uint32_t i = 0; i < call->op->n_args; i++) {
    const sc_arg *a = &call->op->args[i];
    const sc_value *v = &call->args[i];
    if (a->type == SC_ARG_TENSOR && v->kind == SC_VAL_TENSOR) {
      const sc_ttype *t = sc_rule_tensor(call, i);
      if (!have_shape) {
        info->shape = t->shape;
        have_shape = TRUE;
      } else {
        sc_shape r;
        if (!sc_broadcast_shapes(call->symtab, &info->shape, &t->shape, &r, error)) {
          g_prefix_error(error, "%s: %s and %s: ", call->op->qualname, names->str, a->name);
          return FALSE;
        }
        info->shape = r;
        g_string_append(names, ", ");
      }
      g_string_append(names, a->name);
      promo_tensor(&ps, t);
      if (t->dtype == SC_DTYPE_BOOL && info->bool_operand == NULL)
        info->bool_operand = a->name;
    } else if (a->type == SC_ARG_SCALAR && !is_parameter(a->name) &&
               (v->kind == SC_VAL_INT || v->kind == SC_VAL_FLOAT || v->kind == SC_VAL_BOOL)) {
      promo_scalar(&ps, v);
      if (v->kind == SC_VAL_BOOL && info->bool_operand == NULL)
        info->bool_operand = a->name;
    }
  }
  info->dtype = promo_result(&ps);
  return TRUE;
}

/* ATen's alpha_check. */
static gboolean check_alpha(const sc_op_call *call, sc_dtype dtype, GError **error) {
  const sc_value *alpha = arg_value(call, "alpha");
  if (alpha == NULL)
    return TRUE;
  if (alpha->kind == SC_VAL_BOOL && dtype != SC_DTYPE_BOOL)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "boolean alpha only supported for boolean results (result is %s)",
                sc_dtype_name(dtype));
  if (alpha->kind == SC_VAL_FLOAT && !sc_dtype_is_floating(dtype))
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "for integral input tensors, argument alpha must not be a floating "
                "point number (result is %s)", sc_dtype_name(dtype));
  return TRUE;
}

/* gelu's approximate must be "none" or "tanh". */
static gboolean check_approximate(const sc_op_call *call, GError **error) {
  const sc_value *v = arg_value(call, "approximate");
  if (v == NULL || v->kind != SC_VAL_STR)
    return TRUE;
  if (strcmp(v->u.s, "none") != 0 && strcmp(v->u.s, "tanh") != 0)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "approximate must be \"none\" or \"tanh\", got \"%s\"", v->u.s);
  return TRUE;
}

static gboolean require_floating(const sc_op_call *call, const char *what, sc_dtype dtype,
                                 GError **error) {
  if (sc_dtype_is_floating(dtype))
    return TRUE;
  return fail(call, error, SC_OPS_ERROR_SHAPE, "%s must be floating-point, got %s", what,
              sc_dtype_name(dtype));
}

/* add, mul, minimum, maximum, threshold_backward: promoted dtype. */
gboolean sc_rule_arith(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!ew_operands(call, &e, error) || !check_alpha(call, e.dtype, error))
    return FALSE;
  emit(out, &e.shape, e.dtype);
  return TRUE;
}

/* sub, rsub: as arith, but no bool operand. */
gboolean sc_rule_sub(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!ew_operands(call, &e, error))
    return FALSE;
  if (e.bool_operand != NULL)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "subtraction with a bool operand (%s) is not supported; "
                "use logical_not or ~ to invert a mask", e.bool_operand);
  if (!check_alpha(call, e.dtype, error))
    return FALSE;
  emit(out, &e.shape, e.dtype);
  return TRUE;
}

/* div: true division gives a floating result (int / int -> f32); with
 * rounding_mode "trunc" or "floor" the promoted dtype is kept. */
gboolean sc_rule_div(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!ew_operands(call, &e, error))
    return FALSE;
  const sc_value *mode = arg_value(call, "rounding_mode");
  gboolean true_div = mode == NULL || mode->kind != SC_VAL_STR;
  if (!true_div && strcmp(mode->u.s, "trunc") != 0 && strcmp(mode->u.s, "floor") != 0)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "rounding_mode must be None, \"trunc\" or \"floor\", got \"%s\"", mode->u.s);
  sc_dtype dt = e.dtype;
  if (true_div && !sc_dtype_is_floating(dt))
    dt = SC_DTYPE_F32;
  emit(out, &e.shape, dt);
  return TRUE;
}

/* pow: promoted dtype; an integral result with a negative integer exponent
 * is refused as ATen does. */
gboolean sc_rule_pow(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!ew_operands(call, &e, error))
    return FALSE;
  const sc_value *ex = arg_value(call, "exponent");
  if (ex != NULL && ex->kind == SC_VAL_INT && sc_dim_is_const(ex->u.i) && ex->u.i.value < 0 &&
      (sc_dtype_is_integral(e.dtype) || e.dtype == SC_DTYPE_BOOL))
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "integers to negative integer powers are not allowed (self is %s, "
                "exponent %" G_GINT64_FORMAT ")", sc_dtype_name(e.dtype), ex->u.i.value);
  emit(out, &e.shape, e.dtype);
  return TRUE;
}

/* clamp: self with optional min / max (Scalars or tensors), promoted. */
gboolean sc_rule_clamp(const sc_op_call *call, GArray *out, GError **error) {
  const sc_value *mn = arg_value(call, "min");
  const sc_value *mx = arg_value(call, "max");
  if ((mn == NULL || mn->kind == SC_VAL_NONE) && (mx == NULL || mx->kind == SC_VAL_NONE))
    return fail(call, error, SC_OPS_ERROR_SHAPE, "at least one of min or max must not be None");
  ew_info e;
  if (!ew_operands(call, &e, error))
    return FALSE;
  emit(out, &e.shape, e.dtype);
  return TRUE;
}

/* Comparisons: broadcast, result bool. */
gboolean sc_rule_compare(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!ew_operands(call, &e, error))
    return FALSE;
  emit(out, &e.shape, SC_DTYPE_BOOL);
  return TRUE;
}

/* logical_and / logical_or: any dtypes, result bool. */
gboolean sc_rule_logical(const sc_op_call *call, GArray *out, GError **error) {
  return sc_rule_compare(call, out, error);
}

/* bitwise_and / or / xor: integral or bool operands, promoted. */
gboolean sc_rule_bitwise(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!ew_operands(call, &e, error))
    return FALSE;
  if (sc_dtype_is_floating(e.dtype))
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "expects integral or bool operands, got %s", sc_dtype_name(e.dtype));
  emit(out, &e.shape, e.dtype);
  return TRUE;
}

/* *_backward of activations: floating operands, promoted. */
gboolean sc_rule_binary_floating(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!check_approximate(call, error) || !ew_operands(call, &e, error))
    return FALSE;
  if (!require_floating(call, "the operands' common dtype", e.dtype, error))
    return FALSE;
  emit(out, &e.shape, e.dtype);
  return TRUE;
}

/* neg, abs, relu: self's type; bool refused, as ATen does. */
gboolean sc_rule_unary_numeric(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = sc_rule_tensor(call, 0);
  if (t->dtype == SC_DTYPE_BOOL)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "%s of a bool tensor (self) is not supported; use logical_not or ~ on masks",
                call->op->name);
  emit(out, &t->shape, t->dtype);
  return TRUE;
}

/* exp, log, sqrt, ...: integral and bool inputs give the default dtype. */
gboolean sc_rule_unary_float(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = sc_rule_tensor(call, 0);
  emit(out, &t->shape, sc_dtype_is_floating(t->dtype) ? t->dtype : SC_DTYPE_F32);
  return TRUE;
}

/* gelu, silu, softplus, log_sigmoid: floating input only, type kept. */
gboolean sc_rule_unary_floating(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = sc_rule_tensor(call, 0);
  if (!check_approximate(call, error) || !require_floating(call, "self", t->dtype, error))
    return FALSE;
  emit(out, &t->shape, t->dtype);
  return TRUE;
}

/* bitwise_not: integral or bool input, type kept. */
gboolean sc_rule_unary_bitwise(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = sc_rule_tensor(call, 0);
  if (sc_dtype_is_floating(t->dtype))
    return fail(call, error, SC_OPS_ERROR_SHAPE, "self must be integral or bool, got %s",
                sc_dtype_name(t->dtype));
  emit(out, &t->shape, t->dtype);
  return TRUE;
}

/* logical_not: bool result. */
gboolean sc_rule_unary_logical(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = sc_rule_tensor(call, 0);
  emit(out, &t->shape, SC_DTYPE_BOOL);
  return TRUE;
}

/* ---------------------------------------------------------------------------
 * Matrix products
 * ------------------------------------------------------------------------- */

static gboolean require_same_dtype(const sc_op_call *call, const char *an, const sc_ttype *a,
                                   const char *bn, const sc_ttype *b, GError **error) {
  if (a->dtype == b->dtype)
    return TRUE;
  return fail(call, error, SC_OPS_ERROR_SHAPE, "%s is %s but %s is %s (expected the same dtype)",
              an, sc_dtype_name(a->dtype), bn, sc_dtype_name(b->dtype));
}

/* A @ B for two tensors of rank RANK (2: mm, 3: bmm). */
static gboolean mat_product(const sc_op_call *call, const char *an, const sc_ttype *a,
                            const char *bn, const sc_ttype *b, uint32_t rank,
                            sc_shape *out, GError **error) {
  g_autofree char *sa = shape_str(&a->shape);
  g_autofree char *sb = shape_str(&b->shape);
  if (a->shape.rank != rank)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "%s must be a %u-D tensor, got %s", an, rank, sa);
  if (b->shape.rank != rank)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "%s must be a %u-D tensor, got %s", bn, rank, sb);
  if (!require_same_dtype(call, an, a, bn, b, error))
    return FALSE;
  g_autofree char *subject = g_strdup_printf("%s %s and %s %s", an, sa, bn, sb);
  if (rank == 3 &&
      !require_eq(call, a->shape.dims[0], b->shape.dims[0], subject, "be multiplied",
                  "batch size", error))
    return FALSE;
  if (!require_eq(call, a->shape.dims[rank - 1], b->shape.dims[rank - 2], subject,
                  "be multiplied", NULL, error))
    return FALSE;
  out->rank = rank;
  if (rank == 3)
    out->dims[0] = a->shape.dims[0];
  out->dims[rank - 2] = a->shape.dims[rank - 2];
  out->dims[rank - 1] = b->shape.dims[rank - 1];
  return TRUE;
}

/* mm (2-D) and bmm (3-D). */
gboolean sc_rule_mm(const sc_op_call *call, GArray *out, GError **error) {
  uint32_t rank = strcmp(call->op->name, "bmm") == 0 ? 3 : 2;
  const sc_ttype *a = arg_tensor(call, "self"), *b = arg_tensor(call, "mat2");
  sc_shape r;
  if (!mat_product(call, "self", a, "mat2", b, rank, &r, error))
    return FALSE;
  emit(out, &r, a->dtype);
  return TRUE;
}

/* addmm (self + mat1 @ mat2) and baddbmm (self + batch1 @ batch2): self
 * must expand to the product's shape. */
gboolean sc_rule_addmm(const sc_op_call *call, GArray *out, GError **error) {
  gboolean batched = arg_find(call->op, "batch1") != UINT32_MAX;
  const char *an = batched ? "batch1" : "mat1", *bn = batched ? "batch2" : "mat2";
  const sc_ttype *self = arg_tensor(call, "self");
  const sc_ttype *a = arg_tensor(call, an), *b = arg_tensor(call, bn);
  sc_shape r;
  if (!mat_product(call, an, a, bn, b, batched ? 3 : 2, &r, error))
    return FALSE;
  if (!require_same_dtype(call, "self", self, an, a, error) ||
      !require_expandable(call, "self", &self->shape, &r, error))
    return FALSE;
  emit(out, &r, a->dtype);
  return TRUE;
}

/* matmul's shape: 1-D operands are a row (left) or column (right) that is
 * dropped from the result; batch dims (all but the last two) broadcast.
 * AN/BN name the operands in messages. */
static gboolean matmul_shape(const sc_op_call *call, const char *an, const sc_shape *a,
                             const char *bn, const sc_shape *b, sc_shape *out,
                             GError **error) {
  g_autofree char *sa = shape_str(a);
  g_autofree char *sb = shape_str(b);
  if (a->rank == 0 || b->rank == 0)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "both arguments need to be at least 1-D, but %s is %s and %s is %s",
                an, sa, bn, sb);
  sc_dim ka = a->dims[a->rank - 1];
  sc_dim kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  g_autofree char *subject = g_strdup_printf("%s %s and %s %s", an, sa, bn, sb);
  if (!require_eq(call, ka, kb, subject, "be multiplied", NULL, error))
    return FALSE;
  sc_shape ba = {0}, bb = {0}, batch;
  if (a->rank > 2) {
    ba.rank = a->rank - 2;
    memcpy(ba.dims, a->dims, ba.rank * sizeof(sc_dim));
  }
  if (b->rank > 2) {
    bb.rank = b->rank - 2;
    memcpy(bb.dims, b->dims, bb.rank * sizeof(sc_dim));
  }
  if (!sc_broadcast_shapes(call->symtab, &ba, &bb, &batch, error)) {
    g_prefix_error(error, "%s: batch dims of %s %s and %s %s: ", call->op->qualname, an, sa,
                   bn, sb);
    return FALSE;
  }
  *out = batch;
  if (a->rank >= 2)
    out->dims[out->rank++] = a->dims[a->rank - 2];
  if (b->rank >= 2)
    out->dims[out->rank++] = b->dims[b->rank - 1];
  return TRUE;
}

gboolean sc_rule_matmul(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *a = arg_tensor(call, "self"), *b = arg_tensor(call, "other");
  sc_shape r;
  if (!matmul_shape(call, "self", &a->shape, "other", &b->shape, &r, error) ||
      !require_same_dtype(call, "self", a, "other", b, error))
    return FALSE;
  emit(out, &r, a->dtype);
  return TRUE;
}

/* linear: input @ weight.t() (+ bias); weight is [out, in] or [in]. */
gboolean sc_rule_linear(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *in = arg_tensor(call, "input"), *w = arg_tensor(call, "weight");
  const sc_ttype *bias = arg_tensor(call, "bias");
  if (w->shape.rank == 0 || w->shape.rank > 2) {
    g_autofree char *sw = shape_str(&w->shape);
    return fail(call, error, SC_OPS_ERROR_SHAPE, "weight must be 1-D or 2-D, got %s", sw);
  }
  sc_shape wt = w->shape;
  if (wt.rank == 2) {
    wt.dims[0] = w->shape.dims[1];
    wt.dims[1] = w->shape.dims[0];
  }
  if (in->shape.rank == 0) {
    g_autofree char *si = shape_str(&in->shape);
    return fail(call, error, SC_OPS_ERROR_SHAPE, "input must be at least 1-D, got %s", si);
  }
  g_autofree char *si = shape_str(&in->shape);
  g_autofree char *sw = shape_str(&w->shape);
  g_autofree char *subject = g_strdup_printf("input %s and weight %s", si, sw);
  if (!require_eq(call, in->shape.dims[in->shape.rank - 1], w->shape.dims[w->shape.rank - 1],
                  subject, "be multiplied", NULL, error))
    return FALSE;
  sc_shape r;
  if (!matmul_shape(call, "input", &in->shape, "weight.t()", &wt, &r, error) ||
      !require_same_dtype(call, "input", in, "weight", w, error))
    return FALSE;
  if (bias != NULL && (!require_same_dtype(call, "input", in, "bias", bias, error) ||
                       !require_expandable(call, "bias", &bias->shape, &r, error)))
    return FALSE;
  emit(out, &r, in->dtype);
  return TRUE;
}

/* ---------------------------------------------------------------------------
 * Softmax
 * ------------------------------------------------------------------------- */

/* _softmax / _log_softmax(self, dim, half_to_float). */
gboolean sc_rule_softmax(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  uint32_t d;
  if (!require_floating(call, "self", t->dtype, error) ||
      !wrap_dim(call, "dim", arg_value(call, "dim")->u.i, "self", &t->shape, &d, error))
    return FALSE;
  sc_dtype dt = t->dtype;
  if (arg_bool(call, "half_to_float", FALSE)) {
    if (t->dtype != SC_DTYPE_F16)
      return fail(call, error, SC_OPS_ERROR_SHAPE,
                  "half_to_float conversion is supported for f16 only, self is %s",
                  sc_dtype_name(t->dtype));
    dt = SC_DTYPE_F32;
  }
  emit(out, &t->shape, dt);
  return TRUE;
}

/* _softmax_backward_data / _log_softmax_backward_data(grad_output, output,
 * dim, input_dtype): grad_output's shape, input_dtype. */
gboolean sc_rule_softmax_backward(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *g = arg_tensor(call, "grad_output"), *o = arg_tensor(call, "output");
  const sc_value *idt = arg_value(call, "input_dtype");
  uint32_t d;
  if (!require_same_shape(call, "grad_output", &g->shape, &o->shape, "the shape of output",
                          error) ||
      !wrap_dim(call, "dim", arg_value(call, "dim")->u.i, "grad_output", &g->shape, &d, error))
    return FALSE;
  sc_dtype dt = idt != NULL && idt->kind == SC_VAL_DTYPE ? idt->u.dtype : g->dtype;
  if (!require_floating(call, "input_dtype", dt, error))
    return FALSE;
  emit(out, &g->shape, dt);
  return TRUE;
}

/* ---------------------------------------------------------------------------
 * Normalization and dropout
 * ------------------------------------------------------------------------- */

/* The dtype of mean / rstd: the accumulation type of the input (f32 for
 * f16 and bf16, as the accelerator kernels and their meta functions give),
 * else the input's. */
static sc_dtype stats_dtype(sc_dtype in) {
  return in == SC_DTYPE_F16 || in == SC_DTYPE_BF16 ? SC_DTYPE_F32 : in;
}

/* Check INPUT (argument NAME) against normalized_shape and the optional
 * weight / bias; NS receives normalized_shape, STATS the shape of mean /
 * rstd (the input's leading dims, then 1s). */
static gboolean norm_check(const sc_op_call *call, const char *name, const sc_ttype *in,
                           sc_shape *ns, sc_shape *stats, GError **error) {
  if (!shape_from_list(call, "normalized_shape", arg_value(call, "normalized_shape"), ns,
                       error))
    return FALSE;
  if (ns->rank == 0)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "expected normalized_shape to be at least 1-dimensional, got []");
  g_autofree char *si = shape_str(&in->shape);
  g_autofree char *sn = shape_str(ns);
  if (in->shape.rank < ns->rank)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "%s %s has fewer dims than normalized_shape %s", name, si, sn);
  uint32_t axis = in->shape.rank - ns->rank;
  g_autofree char *subject = g_strdup_printf("%s %s", name, si);
  g_autofree char *verb = g_strdup_printf("be normalized over normalized_shape %s", sn);
  for (uint32_t i = 0; i < ns->rank; i++)
    if (!require_eq(call, in->shape.dims[axis + i], ns->dims[i], subject, verb, NULL, error))
      return FALSE;
  static const char *const params[] = {"weight", "bias"};
  for (size_t p = 0; p < G_N_ELEMENTS(params); p++) {
    const sc_ttype *w = arg_tensor(call, params[p]);
    if (w != NULL && !require_same_shape(call, params[p], &w->shape, ns, "normalized_shape",
                                         error))
      return FALSE;
  }
  *stats = in->shape;
  for (uint32_t i = axis; i < stats->rank; i++)
    stats->dims[i] = sc_dim_const(1);
  return TRUE;
}

/* native_layer_norm -> (out, mean, rstd); _fused_rms_norm -> (out, rstd). */
gboolean sc_rule_layer_norm(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *in = arg_tensor(call, "input");
  sc_shape ns, stats;
  if (!require_floating(call, "input", in->dtype, error) ||
      !norm_check(call, "input", in, &ns, &stats, error))
    return FALSE;
  emit(out, &in->shape, in->dtype);
  for (uint32_t i = 1; i < call->op->n_results; i++)
    emit(out, &stats, stats_dtype(in->dtype));
  return TRUE;
}

/* native_layer_norm_backward -> (grad_input, grad_weight, grad_bias).  The
 * gradients of absent weight / bias have normalized_shape and the input's
 * dtype (they are None in ATen; bundles write null for them). */
gboolean sc_rule_layer_norm_backward(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *g = arg_tensor(call, "grad_out"), *in = arg_tensor(call, "input");
  sc_shape ns, stats;
  if (!require_floating(call, "input", in->dtype, error) ||
      !norm_check(call, "input", in, &ns, &stats, error))
    return FALSE;
  if (!require_same_shape(call, "grad_out", &g->shape, &in->shape, "the shape of input", error))
    return FALSE;
  const sc_ttype *w = arg_tensor(call, "weight"), *b = arg_tensor(call, "bias");
  emit(out, &in->shape, in->dtype);
  emit(out, &ns, w ? w->dtype : in->dtype);
  emit(out, &ns, b ? b->dtype : in->dtype);
  return TRUE;
}

/* native_dropout(input, p, train?) -> (out, mask bool). */
gboolean sc_rule_dropout(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *in = arg_tensor(call, "input");
  const sc_value *p = arg_value(call, "p");
  double pv = p->kind == SC_VAL_FLOAT ? p->u.f : (double)p->u.i.value;
  if (!(pv >= 0.0 && pv <= 1.0))
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "dropout probability p has to be between 0 and 1, but got %g", pv);
  emit(out, &in->shape, in->dtype);
  emit(out, &in->shape, SC_DTYPE_BOOL);
  return TRUE;
}

/* native_dropout_backward(grad_output, mask, scale): grad_output * mask. */
gboolean sc_rule_dropout_backward(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *g = arg_tensor(call, "grad_output"), *m = arg_tensor(call, "mask");
  if (m->dtype != SC_DTYPE_BOOL)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "mask must be bool, got %s",
                sc_dtype_name(m->dtype));
  if (!require_floating(call, "grad_output", g->dtype, error) ||
      !require_expandable(call, "mask", &m->shape, &g->shape, error))
    return FALSE;
  emit(out, &g->shape, g->dtype);
  return TRUE;
}

/* ---------------------------------------------------------------------------
 * Reductions
 * ------------------------------------------------------------------------- */

/* Reduce shape IN (argument "self") over DIMS: absent, None, or an empty
 * list mean every dim; a single int or an int list otherwise.  Repeated
 * dims are an error, as in ATen. */
static gboolean reduce_shape(const sc_op_call *call, const sc_shape *in, const sc_value *dims,
                             gboolean keepdim, sc_shape *out, GError **error) {
  gboolean mask[SC_MAX_RANK + 1] = {FALSE};
  uint32_t n = 0;
  const sc_dim *list = NULL;
  if (dims != NULL && dims->kind == SC_VAL_INT) {
    n = 1;
    list = &dims->u.i;
  } else if (dims != NULL && dims->kind == SC_VAL_INT_LIST) {
    n = dims->u.ints.n;
    list = dims->u.ints.v;
  }
  if (n == 0) {
    for (uint32_t i = 0; i <= SC_MAX_RANK; i++)
      mask[i] = TRUE;
  }
  for (uint32_t k = 0; k < n; k++) {
    uint32_t d;
    if (!wrap_dim(call, "dim", list[k], "self", in, &d, error))
      return FALSE;
    if (mask[d])
      return fail(call, error, SC_OPS_ERROR_SHAPE,
                  "dim %u appears multiple times in the list of dims", d);
    mask[d] = TRUE;
  }
  out->rank = 0;
  for (uint32_t i = 0; i < in->rank; i++) {
    if (!mask[i])
      out->dims[out->rank++] = in->dims[i];
    else if (keepdim)
      out->dims[out->rank++] = sc_dim_const(1);
  }
  return TRUE;
}

static sc_dtype dtype_arg(const sc_op_call *call, sc_dtype deflt) {
  const sc_value *v = arg_value(call, "dtype");
  return v != NULL && v->kind == SC_VAL_DTYPE ? v->u.dtype : deflt;
}

/* The "integral sums give i64" rule of sum and cumsum. */
static sc_dtype sum_dtype(const sc_op_call *call, sc_dtype self) {
  sc_dtype deflt = sc_dtype_is_floating(self) ? self : SC_DTYPE_I64;
  return dtype_arg(call, deflt);
}

/* sum.default, sum.dim_IntList. */
gboolean sc_rule_sum(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  sc_shape r;
  if (!reduce_shape(call, &t->shape, arg_value(call, "dim"), arg_bool(call, "keepdim", FALSE),
                    &r, error))
    return FALSE;
  emit(out, &r, sum_dtype(call, t->dtype));
  return TRUE;
}

/* mean.default, mean.dim, var.correction: floating input or dtype. */
gboolean sc_rule_mean(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  sc_dtype dt = dtype_arg(call, t->dtype);
  if (!sc_dtype_is_floating(dt))
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "could not infer output dtype: %s needs a floating-point input or dtype, "
                "got %s", call->op->name, sc_dtype_name(dt));
  sc_shape r;
  if (!reduce_shape(call, &t->shape, arg_value(call, "dim"), arg_bool(call, "keepdim", FALSE),
                    &r, error))
    return FALSE;
  emit(out, &r, dt);
  return TRUE;
}

/* amax, amin, max.default, min.default: self's dtype. */
gboolean sc_rule_amax(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  sc_shape r;
  if (!reduce_shape(call, &t->shape, arg_value(call, "dim"), arg_bool(call, "keepdim", FALSE),
                    &r, error))
    return FALSE;
  emit(out, &r, t->dtype);
  return TRUE;
}

/* max.dim, min.dim -> (values, indices i64). */
gboolean sc_rule_max_dim(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  sc_shape r;
  if (!reduce_shape(call, &t->shape, arg_value(call, "dim"), arg_bool(call, "keepdim", FALSE),
                    &r, error))
    return FALSE;
  emit(out, &r, t->dtype);
  emit(out, &r, SC_DTYPE_I64);
  return TRUE;
}

/* argmax, argmin(self, dim?, keepdim) -> i64; dim None flattens (keepdim
 * then keeps every dim as 1). */
gboolean sc_rule_argmax(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  sc_shape r;
  if (!reduce_shape(call, &t->shape, arg_value(call, "dim"), arg_bool(call, "keepdim", FALSE),
                    &r, error))
    return FALSE;
  emit(out, &r, SC_DTYPE_I64);
  return TRUE;
}

/* cumsum(self, dim, dtype?): self's shape, sum's dtype rule. */
gboolean sc_rule_cumsum(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  uint32_t d;
  if (!wrap_dim(call, "dim", arg_value(call, "dim")->u.i, "self", &t->shape, &d, error))
    return FALSE;
  emit(out, &t->shape, sum_dtype(call, t->dtype));
  return TRUE;
}

/* ---------------------------------------------------------------------------
 * Embedding and losses
 * ------------------------------------------------------------------------- */

static gboolean require_index_dtype(const sc_op_call *call, const char *name,
                                    const sc_ttype *t, GError **error) {
  if (t->dtype == SC_DTYPE_I64 || t->dtype == SC_DTYPE_I32)
    return TRUE;
  return fail(call, error, SC_OPS_ERROR_SHAPE, "%s must be i64 or i32, got %s", name,
              sc_dtype_name(t->dtype));
}

/* embedding(weight [V, H], indices) -> indices.shape + [H]. */
gboolean sc_rule_embedding(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *w = arg_tensor(call, "weight"), *idx = arg_tensor(call, "indices");
  g_autofree char *sw = shape_str(&w->shape);
  g_autofree char *si = shape_str(&idx->shape);
  if (w->shape.rank != 2)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "weight must be 2-D, got %s", sw);
  if (!require_index_dtype(call, "indices", idx, error))
    return FALSE;
  if (idx->shape.rank + 1 > SC_MAX_RANK)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "indices %s: the result would have more than %d dims", si, SC_MAX_RANK);
  sc_shape r = idx->shape;
  r.dims[r.rank++] = w->shape.dims[1];
  emit(out, &r, w->dtype);
  return TRUE;
}

/* embedding_dense_backward(grad_output [*idx, H], indices, num_weights, ...)
 * -> [num_weights, H]. */
gboolean sc_rule_embedding_backward(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *g = arg_tensor(call, "grad_output"), *idx = arg_tensor(call, "indices");
  sc_dim nw = arg_value(call, "num_weights")->u.i;
  g_autofree char *sg = shape_str(&g->shape);
  if (!require_index_dtype(call, "indices", idx, error))
    return FALSE;
  if (g->shape.rank != idx->shape.rank + 1)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "grad_output %s must have rank %u (indices' rank + 1)", sg, idx->shape.rank + 1);
  sc_shape lead = g->shape;
  lead.rank--;
  if (!require_same_shape(call, "grad_output's leading dims", &lead, &idx->shape,
                          "the shape of indices", error))
    return FALSE;
  if (sc_dim_lt(call->symtab, nw, sc_dim_const(0)) != SC_NO) {
    g_autofree char *sn = dim_str(call, nw);
    return fail(call, error, SC_OPS_ERROR_SHAPE, "num_weights must be non-negative, got %s", sn);
  }
  sc_shape r;
  r.rank = 2;
  r.dims[0] = nw;
  r.dims[1] = g->shape.dims[g->shape.rank - 1];
  emit(out, &r, g->dtype);
  return TRUE;
}

/* The reduction code of a loss (0 none, 1 mean, 2 sum). */
static gboolean loss_reduction(const sc_op_call *call, int64_t *out, GError **error) {
  if (!concrete_int(call, "reduction", arg_value(call, "reduction")->u.i, out, error))
    return FALSE;
  if (*out < 0 || *out > 2)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "reduction must be 0 (none), 1 (mean) or 2 (sum), got %" G_GINT64_FORMAT, *out);
  return TRUE;
}

/* Check nll_loss's self [N, C] or [C], target [N] or [], weight [C]?;
 * *PER_SAMPLE receives the shape of the unreduced loss. */
static gboolean nll_check(const sc_op_call *call, sc_shape *per_sample, GError **error) {
  const sc_ttype *s = arg_tensor(call, "self"), *t = arg_tensor(call, "target");
  const sc_ttype *w = arg_tensor(call, "weight");
  g_autofree char *ss = shape_str(&s->shape);
  g_autofree char *st = shape_str(&t->shape);
  if (s->shape.rank < 1 || s->shape.rank > 2)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "self must be 1-D or 2-D, got %s", ss);
  if (t->shape.rank > 1)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "target must be 0-D or 1-D, got %s (multi-target not supported)", st);
  if (!require_floating(call, "self", s->dtype, error))
    return FALSE;
  if (t->dtype != SC_DTYPE_I64 && t->dtype != SC_DTYPE_U8)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "target must be i64, got %s",
                sc_dtype_name(t->dtype));
  gboolean no_batch = s->shape.rank == 1 && t->shape.rank == 0;
  if (!no_batch) {
    if (t->shape.rank == 0)
      return fail(call, error, SC_OPS_ERROR_SHAPE,
                  "self %s needs a 1-D target, got %s", ss, st);
    g_autofree char *subject = g_strdup_printf("self %s and target %s", ss, st);
    if (!require_eq(call, s->shape.dims[0], t->shape.dims[0], subject, "be paired",
                    "batch size", error))
      return FALSE;
  }
  if (w != NULL) {
    g_autofree char *sw = shape_str(&w->shape);
    g_autofree char *subject = g_strdup_printf("weight %s", sw);
    g_autofree char *verb = g_strdup_printf("weigh the classes of self %s", ss);
    if (w->shape.rank != 1)
      return fail(call, error, SC_OPS_ERROR_SHAPE,
                  "weight must be 1-D with one entry per class, got %s", sw);
    if (!require_eq(call, w->shape.dims[0], s->shape.dims[s->shape.rank - 1], subject, verb,
                    "classes", error))
      return FALSE;
  }
  *per_sample = sc_shape_scalar();
  if (s->shape.rank == 2) {
    per_sample->rank = 1;
    per_sample->dims[0] = s->shape.dims[0];
  }
  return TRUE;
}

/* A tensor that must hold a single element (all sizes 1). */
static gboolean require_single(const sc_op_call *call, const char *name, const sc_ttype *t,
                               GError **error) {
  g_autofree char *s = shape_str(&t->shape);
  g_autofree char *subject = g_strdup_printf("%s %s", name, s);
  for (uint32_t i = 0; i < t->shape.rank; i++)
    if (!require_eq(call, t->shape.dims[i], sc_dim_const(1), subject,
                    "be a single-element tensor", "size", error))
      return FALSE;
  return TRUE;
}

/* nll_loss_forward -> (output, total_weight). */
gboolean sc_rule_nll_loss(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *s = arg_tensor(call, "self");
  int64_t red = 0;
  sc_shape per;
  if (!loss_reduction(call, &red, error) || !nll_check(call, &per, error))
    return FALSE;
  sc_shape scalar = sc_shape_scalar();
  emit(out, red == 0 ? &per : &scalar, s->dtype);
  emit(out, &scalar, s->dtype);
  return TRUE;
}

/* nll_loss_backward -> grad_input of self's type. */
gboolean sc_rule_nll_loss_backward(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *s = arg_tensor(call, "self"), *g = arg_tensor(call, "grad_output");
  const sc_ttype *tw = arg_tensor(call, "total_weight");
  int64_t red = 0;
  sc_shape per;
  if (!loss_reduction(call, &red, error) || !nll_check(call, &per, error) ||
      !require_single(call, "total_weight", tw, error))
    return FALSE;
  if (red == 0 && per.rank == 1) {
    if (!require_same_shape(call, "grad_output", &g->shape, &per,
                            "the shape of the unreduced loss", error))
      return FALSE;
  } else if (!require_single(call, "grad_output", g, error)) {
    return FALSE;
  }
  emit(out, &s->shape, s->dtype);
  return TRUE;
}

/* mse_loss(self, target, reduction): broadcast, floating. */
gboolean sc_rule_mse_loss(const sc_op_call *call, GArray *out, GError **error) {
  int64_t red = 0;
  ew_info e;
  if (!loss_reduction(call, &red, error) || !ew_operands(call, &e, error) ||
      !require_floating(call, "the operands' common dtype", e.dtype, error))
    return FALSE;
  sc_shape scalar = sc_shape_scalar();
  emit(out, red == 0 ? &e.shape : &scalar, e.dtype);
  return TRUE;
}

/* mse_loss_backward(grad_output, self, target, reduction): self's type;
 * target and grad_output expand to self. */
gboolean sc_rule_mse_loss_backward(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *s = arg_tensor(call, "self"), *t = arg_tensor(call, "target");
  const sc_ttype *g = arg_tensor(call, "grad_output");
  int64_t red = 0;
  if (!loss_reduction(call, &red, error) || !require_floating(call, "self", s->dtype, error) ||
      !require_expandable(call, "target", &t->shape, &s->shape, error) ||
      !require_expandable(call, "grad_output", &g->shape, &s->shape, error))
    return FALSE;
  emit(out, &s->shape, s->dtype);
  return TRUE;
}

/* ---------------------------------------------------------------------------
 * Operators added for unseen captures (ops-math.def, last section)
 * ------------------------------------------------------------------------- */

/* floor_divide, remainder: promoted dtype, no bool operands (ATen refuses
 * floor division and remainder of two bools). */
gboolean sc_rule_floor_divide(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!ew_operands(call, &e, error))
    return FALSE;
  if (e.dtype == SC_DTYPE_BOOL)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "%s of bool operands is not supported",
                call->op->name);
  emit(out, &e.shape, e.dtype);
  return TRUE;
}

/* addcmul / addcdiv(self, tensor1, tensor2, value): the three tensors
 * broadcast and promote; value is a parameter.  addcdiv refuses integer
 * operands (ATen: "Integer division with addcdiv is no longer supported"),
 * and a float value needs a floating result. */
gboolean sc_rule_addc(const sc_op_call *call, GArray *out, GError **error) {
  ew_info e;
  if (!ew_operands(call, &e, error))
    return FALSE;
  const sc_value *v = arg_value(call, "value");
  if (strcmp(call->op->name, "addcdiv") == 0 && !sc_dtype_is_floating(e.dtype))
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "integer division with addcdiv is not supported (operands are %s)",
                sc_dtype_name(e.dtype));
  if (v != NULL && v->kind == SC_VAL_FLOAT && !sc_dtype_is_floating(e.dtype))
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "a floating value needs floating operands (operands are %s)",
                sc_dtype_name(e.dtype));
  emit(out, &e.shape, e.dtype);
  return TRUE;
}

/* lerp.Scalar(self, end, weight): floating, self and end of one dtype. */
gboolean sc_rule_lerp(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *a = arg_tensor(call, "self"), *b = arg_tensor(call, "end");
  ew_info e;
  if (!require_same_dtype(call, "self", a, "end", b, error) ||
      !require_floating(call, "self", a->dtype, error) || !ew_operands(call, &e, error))
    return FALSE;
  emit(out, &e.shape, a->dtype);
  return TRUE;
}

/* logsumexp(self, dim, keepdim): integral inputs give the default dtype. */
gboolean sc_rule_logsumexp(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  const sc_value *dims = arg_value(call, "dim");
  sc_shape r;
  if (!reduce_shape(call, &t->shape, dims, arg_bool(call, "keepdim", FALSE), &r, error))
    return FALSE;
  emit(out, &r, sc_dtype_is_floating(t->dtype) ? t->dtype : SC_DTYPE_F32);
  return TRUE;
}

/* var_mean.correction -> (var, mean), both of mean's type. */
gboolean sc_rule_var_mean(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  if (!sc_dtype_is_floating(t->dtype))
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "var_mean needs a floating-point input, got %s", sc_dtype_name(t->dtype));
  sc_shape r;
  if (!reduce_shape(call, &t->shape, arg_value(call, "dim"), arg_bool(call, "keepdim", FALSE),
                    &r, error))
    return FALSE;
  emit(out, &r, t->dtype);
  emit(out, &r, t->dtype);
  return TRUE;
}

/* any / all: bool results (u8 stays u8, as in ATen). */
gboolean sc_rule_any_all(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  sc_shape r;
  if (!reduce_shape(call, &t->shape, arg_value(call, "dim"), arg_bool(call, "keepdim", FALSE),
                    &r, error))
    return FALSE;
  emit(out, &r, t->dtype == SC_DTYPE_U8 ? SC_DTYPE_U8 : SC_DTYPE_BOOL);
  return TRUE;
}

/* dot (1-D . 1-D -> 0-D), mv (2-D @ 1-D -> 1-D), outer (1-D x 1-D -> 2-D):
 * operands of one dtype. */
gboolean sc_rule_vec_product(const sc_op_call *call, GArray *out, GError **error) {
  const char *bn = arg_find(call->op, "tensor") != UINT32_MAX ? "tensor"
                   : arg_find(call->op, "vec") != UINT32_MAX  ? "vec"
                                                               : "vec2";
  const sc_ttype *a = arg_tensor(call, "self"), *b = arg_tensor(call, bn);
  gboolean is_mv = strcmp(call->op->name, "mv") == 0;
  gboolean is_outer = strcmp(call->op->name, "outer") == 0;
  g_autofree char *sa = shape_str(&a->shape);
  g_autofree char *sb = shape_str(&b->shape);
  if (a->shape.rank != (is_mv ? 2u : 1u))
    return fail(call, error, SC_OPS_ERROR_SHAPE, "self must be a %u-D tensor, got %s",
                is_mv ? 2u : 1u, sa);
  if (b->shape.rank != 1)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "%s must be a 1-D tensor, got %s", bn, sb);
  if (!require_same_dtype(call, "self", a, bn, b, error))
    return FALSE;
  sc_shape r = sc_shape_scalar();
  if (is_outer) {
    r.rank = 2;
    r.dims[0] = a->shape.dims[0];
    r.dims[1] = b->shape.dims[0];
  } else {
    g_autofree char *subject = g_strdup_printf("self %s and %s %s", sa, bn, sb);
    if (!require_eq(call, a->shape.dims[a->shape.rank - 1], b->shape.dims[0], subject,
                    "be multiplied", NULL, error))
      return FALSE;
    if (is_mv) {
      r.rank = 1;
      r.dims[0] = a->shape.dims[0];
    }
  }
  emit(out, &r, a->dtype);
  return TRUE;
}

/* softmax.int / log_softmax.int(self, dim, dtype?): the pre-dispatch
 * forms; dtype converts the input first. */
gboolean sc_rule_softmax_int(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  sc_dtype dt = dtype_arg(call, t->dtype);
  uint32_t d;
  if (!require_floating(call, "the result dtype", dt, error) ||
      !wrap_dim(call, "dim", arg_value(call, "dim")->u.i, "self", &t->shape, &d, error))
    return FALSE;
  emit(out, &t->shape, dt);
  return TRUE;
}

/* bernoulli.p(self, p): self's type, p in [0, 1]. */
gboolean sc_rule_bernoulli(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = arg_tensor(call, "self");
  const sc_value *p = arg_value(call, "p");
  double pv = p->kind == SC_VAL_FLOAT ? p->u.f : (double)p->u.i.value;
  if (!(pv >= 0.0 && pv <= 1.0))
    return fail(call, error, SC_OPS_ERROR_SHAPE, "p must be in [0, 1], but got %g", pv);
  if (!require_floating(call, "self", t->dtype, error))
    return FALSE;
  emit(out, &t->shape, t->dtype);
  return TRUE;
}

/* ---- scaled dot-product attention ---- */

typedef struct {
  const sc_ttype *q, *k, *v;
  sc_shape out;  /* [..., L, Ev] */
  sc_shape rows; /* [..., L]: logsumexp */
  sc_dim L, S;
} attn_info;

static double float_arg(const sc_value *v, double dflt) {
  if (v == NULL)
    return dflt;
  if (v->kind == SC_VAL_FLOAT)
    return v->u.f;
  if (v->kind == SC_VAL_INT && sc_dim_is_const(v->u.i))
    return (double)v->u.i.value;
  return dflt;
}

/* The checks every attention operator makes on query [.., Hq, L, E], key
 * [.., Hk, S, E] and value [.., Hk, S, Ev]: one floating dtype, rank 4 for
 * the fused kernels (>= 2 for scaled_dot_product_attention), equal leading
 * dims (with enable_gqa, Hk divides Hq), equal head dims where the kernel
 * needs them (flash: E == Ev), a mask that broadcasts to [.., L, S] of bool
 * or the query's dtype, dropout_p in [0, 1]. */
static gboolean attn_check(const sc_op_call *call, const char *mask_name, attn_info *ai,
                           GError **error) {
  const sc_ttype *q = arg_tensor(call, "query"), *k = arg_tensor(call, "key"),
                 *v = arg_tensor(call, "value");
  gboolean fused = strcmp(call->op->name, "scaled_dot_product_attention") != 0;
  gboolean gqa = arg_bool(call, "enable_gqa", FALSE);
  gboolean same_e = strstr(call->op->name, "flash") != NULL;
  g_autofree char *sq = shape_str(&q->shape);
  g_autofree char *sk = shape_str(&k->shape);
  g_autofree char *sv = shape_str(&v->shape);
  uint32_t rank = q->shape.rank;
  if (fused ? rank != 4 : rank < 2)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "query must be %s, got %s",
                fused ? "4-D [batch, heads, L, E]" : "at least 2-D [..., L, E]", sq);
  if (k->shape.rank != rank || v->shape.rank != rank)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "query %s, key %s and value %s must have the same number of dims", sq, sk, sv);
  if (!require_floating(call, "query", q->dtype, error) ||
      !require_same_dtype(call, "query", q, "key", k, error) ||
      !require_same_dtype(call, "query", q, "value", v, error))
    return FALSE;
  g_autofree char *subject = g_strdup_printf("query %s, key %s and value %s", sq, sk, sv);
  for (uint32_t i = 0; i + 2 < rank; i++) {
    g_autofree char *detail = g_strdup_printf("dim %u:", i);
    if (!require_eq(call, k->shape.dims[i], v->shape.dims[i], subject, "be attended", detail,
                    error))
      return FALSE;
    if (gqa && i + 3 == rank) {
      sc_truth t = sc_dim_divides(call->symtab, k->shape.dims[i], q->shape.dims[i]);
      if (t != SC_YES) {
        g_autofree char *a = dim_str(call, k->shape.dims[i]);
        g_autofree char *b = dim_str(call, q->shape.dims[i]);
        return fail(call, error, t == SC_NO ? SC_OPS_ERROR_SHAPE : SC_OPS_ERROR_UNDECIDED,
                    "%s: with enable_gqa the key heads %s must divide the query heads %s%s",
                    subject, a, b, t == SC_NO ? "" : " (cannot decide)");
      }
      continue;
    }
    if (!require_eq(call, q->shape.dims[i], k->shape.dims[i], subject, "be attended", detail,
                    error))
      return FALSE;
  }
  if (!require_eq(call, q->shape.dims[rank - 1], k->shape.dims[rank - 1], subject,
                  "be attended", "head dim E:", error) ||
      !require_eq(call, k->shape.dims[rank - 2], v->shape.dims[rank - 2], subject,
                  "be attended", "key length S:", error))
    return FALSE;
  if (same_e && !require_eq(call, q->shape.dims[rank - 1], v->shape.dims[rank - 1], subject,
                            "be attended by the flash kernel", "value head dim:", error))
    return FALSE;
  if (!fused && arg_bool(call, "is_causal", FALSE) && arg_tensor(call, "attn_mask") != NULL)
    return fail(call, error, SC_OPS_ERROR_SHAPE,
                "explicit attn_mask should not be set when is_causal=True");
  double p = float_arg(arg_value(call, "dropout_p"), 0.0);
  if (!(p >= 0.0 && p <= 1.0))
    return fail(call, error, SC_OPS_ERROR_SHAPE, "dropout_p must be in [0, 1], got %g", p);
  ai->q = q;
  ai->k = k;
  ai->v = v;
  ai->L = q->shape.dims[rank - 2];
  ai->S = k->shape.dims[rank - 2];
  ai->out = q->shape;
  ai->out.dims[rank - 1] = v->shape.dims[rank - 1];
  ai->rows = q->shape;
  ai->rows.rank--;
  if (mask_name != NULL) {
    const sc_ttype *m = arg_tensor(call, mask_name);
    if (m != NULL) {
      sc_shape target = q->shape;
      target.dims[rank - 1] = ai->S;
      if (m->dtype != SC_DTYPE_BOOL && m->dtype != q->dtype)
        return fail(call, error, SC_OPS_ERROR_SHAPE,
                    "%s must be bool or of the query's dtype %s, got %s", mask_name,
                    sc_dtype_name(q->dtype), sc_dtype_name(m->dtype));
      if (!require_expandable(call, mask_name, &m->shape, &target, error))
        return FALSE;
    }
  }
  return TRUE;
}

/* The forward operators.  Results:
 *   scaled_dot_product_attention                  output
 *   _scaled_dot_product_efficient_attention       output, log_sumexp [B, H, ceil(L/32)*32]
 *                                                 (or [B, H, 0] without
 *                                                 compute_log_sumexp), philox seed, offset
 *   _scaled_dot_product_flash_attention           output, logsumexp [B, H, L], cum_seq_q,
 *                                                 cum_seq_k ([0] i64: dense inputs), max_q,
 *                                                 max_k, rng_state, unused, debug_attn_mask
 *                                                 ([0] of the query's dtype)
 *   _scaled_dot_product_flash_attention_for_cpu   output, logsumexp [B, H, L]
 * logsumexp is always f32 (the kernels' accumulation type). */
gboolean sc_rule_sdpa(const sc_op_call *call, GArray *out, GError **error) {
  attn_info ai;
  const char *mask = arg_find(call->op, "attn_mask") != UINT32_MAX ? "attn_mask" : "attn_bias";
  if (!attn_check(call, mask, &ai, error))
    return FALSE;
  const char *name = call->op->name;
  sc_shape scalar = sc_shape_scalar();
  sc_shape empty = {0};
  empty.rank = 1;
  empty.dims[0] = sc_dim_const(0);
  if (strstr(name, "efficient") != NULL) {
    if (arg_bool(call, "return_debug_mask", FALSE))
      return fail(call, error, SC_OPS_ERROR_SHAPE, "return_debug_mask is not supported");
    sc_shape lse = ai.rows;
    if (arg_bool(call, "compute_log_sumexp", FALSE)) {
      sc_dim up;
      if (!sc_dim_floordiv(call->symtab, sc_dim_add(call->symtab, ai.L, sc_dim_const(31)),
                           sc_dim_const(32), &up))
        return fail(call, error, SC_OPS_ERROR_SHAPE, "cannot align the query length to 32");
      lse.dims[lse.rank - 1] = sc_dim_mul(call->symtab, up, sc_dim_const(32));
    } else {
      lse.dims[lse.rank - 1] = sc_dim_const(0);
    }
    emit(out, &ai.out, ai.q->dtype);
    emit(out, &lse, SC_DTYPE_F32);
    emit(out, &scalar, SC_DTYPE_I64);
    emit(out, &scalar, SC_DTYPE_I64);
  } else if (strcmp(name, "_scaled_dot_product_flash_attention") == 0) {
    if (arg_bool(call, "return_debug_mask", FALSE))
      return fail(call, error, SC_OPS_ERROR_SHAPE,
                  "return_debug_mask=True is not supported (its shape is the kernel's block "
                  "layout)");
    emit(out, &ai.out, ai.q->dtype);
    emit(out, &ai.rows, SC_DTYPE_F32);
    emit(out, &empty, SC_DTYPE_I64);
    emit(out, &empty, SC_DTYPE_I64);
    emit(out, &scalar, SC_DTYPE_I64);
    emit(out, &scalar, SC_DTYPE_I64);
    emit(out, &scalar, SC_DTYPE_I64);
    emit(out, &scalar, SC_DTYPE_I64);
    sc_shape e2 = empty;
    emit(out, &e2, ai.q->dtype);
  } else {
    emit(out, &ai.out, ai.q->dtype);
    if (call->op->n_results == 2)
      emit(out, &ai.rows, SC_DTYPE_F32);
  }
  return TRUE;
}

/* The backward operators: grad_out and out of the output's shape,
 * logsumexp of the forward's; results grad_query, grad_key, grad_value of
 * the inputs' types, and for the efficient kernel grad_attn_bias of the
 * bias's type ([0] of the query's dtype without a bias). */
gboolean sc_rule_sdpa_backward(const sc_op_call *call, GArray *out, GError **error) {
  attn_info ai;
  const char *mask = arg_find(call->op, "attn_mask") != UINT32_MAX ? "attn_mask" : "attn_bias";
  if (!attn_check(call, mask, &ai, error))
    return FALSE;
  const char *gn = arg_find(call->op, "grad_out_") != UINT32_MAX ? "grad_out_" : "grad_out";
  const sc_ttype *g = arg_tensor(call, gn), *o = arg_tensor(call, "out"),
                 *lse = arg_tensor(call, "logsumexp");
  if (!require_same_shape(call, gn, &g->shape, &ai.out, "the attention output's shape", error) ||
      !require_same_shape(call, "out", &o->shape, &ai.out, "the attention output's shape",
                          error))
    return FALSE;
  g_autofree char *sl = shape_str(&lse->shape);
  if (lse->shape.rank != ai.rows.rank)
    return fail(call, error, SC_OPS_ERROR_SHAPE, "logsumexp must be %u-D, got %s",
                ai.rows.rank, sl);
  if (strstr(call->op->name, "efficient") != NULL) {
    /* log_sumexp is padded to a multiple of 32: at least L entries */
    sc_truth t = sc_dim_le(call->symtab, ai.L, lse->shape.dims[lse->shape.rank - 1]);
    if (t != SC_YES)
      return fail(call, error, t == SC_NO ? SC_OPS_ERROR_SHAPE : SC_OPS_ERROR_UNDECIDED,
                  "logsumexp %s must hold a row for each of the query's rows", sl);
    for (uint32_t i = 0; i + 1 < ai.rows.rank; i++)
      if (!require_eq(call, lse->shape.dims[i], ai.rows.dims[i], "logsumexp", "match the query",
                      NULL, error))
        return FALSE;
  } else if (!require_same_shape(call, "logsumexp", &lse->shape, &ai.rows,
                                 "the query's rows", error)) {
    return FALSE;
  }
  emit(out, &ai.q->shape, ai.q->dtype);
  emit(out, &ai.k->shape, ai.k->dtype);
  emit(out, &ai.v->shape, ai.v->dtype);
  if (call->op->n_results == 4) {
    const sc_ttype *b = arg_tensor(call, "attn_bias");
    sc_shape empty = {0};
    empty.rank = 1;
    empty.dims[0] = sc_dim_const(0);
    if (b != NULL)
      emit(out, &b->shape, b->dtype);
    else
      emit(out, &empty, ai.q->dtype);
  }
  return TRUE;
}
