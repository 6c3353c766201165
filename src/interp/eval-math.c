/* eval-math.c — evaluators of ops-math.def: elementwise arithmetic with
 * broadcasting (integer semantics where the operands are integers:
 * floor / trunc division, integer powers, bitwise operators), unary and
 * activation functions with their backward operators, comparisons, matrix
 * products, softmax, normalization, dropout, reductions, embedding,
 * losses, and scaled dot-product attention with its backward (computed as
 * the kernels do: the backward from the saved output and logsumexp;
 * dropout inside attention is refused, not drawn).
 *
 * Everything is computed in float64.  Integer results are exact as long as
 * they stay within 2^53 (the caller's rounding reports the rest); integer
 * division and powers are computed on int64 values.  Ties in max / argmax
 * pick the lowest index; NaN propagates through max/min and wins argmax,
 * as in ATen. */
#include "interp/interp-private.h"

#include <math.h>
#include <string.h>

/* ---- elementwise framework ------------------------------------------------ */

typedef struct {
  double alpha;        /* add/sub alpha, threshold, beta of softplus, ... */
  double p2;           /* softplus threshold */
  int mode;            /* op-specific variant */
  gboolean int_math;   /* every operand is an integer or bool */
  gboolean failed;
  const char *why;
} ew_ctx;

typedef double (*ew_fn)(const double *x, ew_ctx *c);

/* OUT = f(INS...) with INS broadcast to OUT. */
static gboolean ew_run(sc_ev *ev, sc_tvalue *out, uint32_t n, const sc_tvalue *const *ins,
                       ew_fn f, ew_ctx *c) {
  int64_t st[4][SC_MAX_RANK];
  for (uint32_t i = 0; i < n; i++)
    tv_bstrides(ins[i], out->rank, out->dims, st[i]);
  if (out->numel == 0)
    return TRUE;
  int64_t idx[SC_MAX_RANK] = {0}, k = 0;
  double x[4];
  do {
    for (uint32_t i = 0; i < n; i++) {
      int64_t o = 0;
      for (uint32_t d = 0; d < out->rank; d++)
        o += idx[d] * st[i][d];
      x[i] = ins[i]->data[o];
    }
    out->data[k++] = f(x, c);
    if (c->failed)
      return ev_fail(ev, SC_INTERP_ERROR_INVALID, "%s", c->why);
  } while (tv_next(out->rank, out->dims, idx));
  return TRUE;
}

static gboolean is_int_dtype(sc_dtype d) { return !sc_dtype_is_floating(d); }

/* Binary op on (self, other) with the context's mode. */
static gboolean binary(sc_ev *ev, const char *a, const char *b, ew_fn f, ew_ctx *c) {
  g_autoptr(sc_tvalue) ha = NULL;
  g_autoptr(sc_tvalue) hb = NULL;
  const sc_tvalue *ins[2] = {ev_operand(ev, a, &ha), ev_operand(ev, b, &hb)};
  c->int_math = is_int_dtype(ins[0]->dtype) && is_int_dtype(ins[1]->dtype);
  return ew_run(ev, ev->out[0], 2, ins, f, c);
}

static gboolean unary(sc_ev *ev, ew_fn f, ew_ctx *c) {
  const sc_tvalue *ins[1] = {ev->tensors[ev->args[0].u.tensor]};
  c->int_math = is_int_dtype(ins[0]->dtype);
  return ew_run(ev, ev->out[0], 1, ins, f, c);
}

/* ---- arithmetic ------------------------------------------------------------ */

static double f_add(const double *x, ew_ctx *c) { return x[0] + c->alpha * x[1]; }
static double f_sub(const double *x, ew_ctx *c) { return x[0] - c->alpha * x[1]; }
static double f_rsub(const double *x, ew_ctx *c) { return x[1] - c->alpha * x[0]; }
static double f_mul(const double *x, ew_ctx *c) { (void)c; return x[0] * x[1]; }

static gboolean ev_add(sc_ev *ev) {
  ew_ctx c = {.alpha = ev_num(ev, "alpha", 1)};
  return binary(ev, "self", "other", f_add, &c);
}
static gboolean ev_sub(sc_ev *ev) {
  ew_ctx c = {.alpha = ev_num(ev, "alpha", 1)};
  return binary(ev, "self", "other", f_sub, &c);
}
static gboolean ev_rsub(sc_ev *ev) {
  ew_ctx c = {.alpha = ev_num(ev, "alpha", 1)};
  return binary(ev, "self", "other", f_rsub, &c);
}
static gboolean ev_mul(sc_ev *ev) {
  ew_ctx c = {0};
  return binary(ev, "self", "other", f_mul, &c);
}

/* ATen's div_floor_floating. */
static double div_floor_float(double a, double b) {
  if (b == 0)
    return a / b;
  double mod = fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0))
    div -= 1.0;
  double fl;
  if (div != 0) {
    fl = floor(div);
    if (div - fl > 0.5)
      fl += 1.0;
  } else {
    fl = copysign(0.0, a / b);
  }
  return fl;
}

enum { DIV_TRUE, DIV_TRUNC, DIV_FLOOR };

static double f_div(const double *x, ew_ctx *c) {
  double a = x[0], b = x[1];
  if (c->mode == DIV_TRUE)
    return a / b;
  if (c->int_math) {
    if (b == 0) {
      c->failed = TRUE;
      c->why = "ZeroDivisionError: integer division by zero";
      return 0;
    }
    int64_t ia = (int64_t)a, ib = (int64_t)b, q = ia / ib;
    if (c->mode == DIV_FLOOR && (ia % ib != 0) && ((ia < 0) != (ib < 0)))
      q--;
    return (double)q;
  }
  return c->mode == DIV_TRUNC ? trunc(a / b) : div_floor_float(a, b);
}

static gboolean ev_div(sc_ev *ev) {
  ew_ctx c = {.mode = DIV_TRUE};
  const char *mode = ev_str(ev, "rounding_mode", NULL);
  if (mode != NULL && strcmp(mode, "trunc") == 0)
    c.mode = DIV_TRUNC;
  else if (mode != NULL && strcmp(mode, "floor") == 0)
    c.mode = DIV_FLOOR;
  else if (mode != NULL)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'",
                   mode);
  return binary(ev, "self", "other", f_div, &c);
}

/* Exact integer power; a result beyond int64 becomes infinity (reported by
 * the rounding as beyond 2^53). */
static double int_pow(int64_t b, int64_t e) {
  if (e < 0)
    return b == 1 ? 1.0 : (b == -1 ? (e % 2 ? -1.0 : 1.0) : 0.0);
  int64_t r = 1;
  while (e > 0) {
    if (e & 1) {
      if (__builtin_mul_overflow(r, b, &r))
        return INFINITY;
    }
    e >>= 1;
    if (e > 0 && __builtin_mul_overflow(b, b, &b))
      return INFINITY;
  }
  return (double)r;
}

static double f_pow(const double *x, ew_ctx *c) {
  if (c->int_math)
    return int_pow((int64_t)x[0], (int64_t)x[1]);
  return pow(x[0], x[1]);
}

static gboolean ev_pow(sc_ev *ev) {
  ew_ctx c = {0};
  g_autoptr(sc_tvalue) ha = NULL;
  g_autoptr(sc_tvalue) hb = NULL;
  const sc_tvalue *ins[2] = {ev_operand(ev, "self", &ha), ev_operand(ev, "exponent", &hb)};
  c.int_math = is_int_dtype(ins[0]->dtype) && is_int_dtype(ins[1]->dtype) &&
               is_int_dtype(ev->out[0]->dtype);
  if (c.int_math && ev_tensor(ev, "exponent") == NULL && ins[1]->data[0] < 0)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "Integers to negative integer powers are not allowed.");
  return ew_run(ev, ev->out[0], 2, ins, f_pow, &c);
}

static double f_minimum(const double *x, ew_ctx *c) {
  (void)c;
  if (isnan(x[0]) || isnan(x[1]))
    return NAN;
  return x[0] < x[1] ? x[0] : x[1];
}
static double f_maximum(const double *x, ew_ctx *c) {
  (void)c;
  if (isnan(x[0]) || isnan(x[1]))
    return NAN;
  return x[0] > x[1] ? x[0] : x[1];
}
static gboolean ev_minimum(sc_ev *ev) {
  ew_ctx c = {0};
  return binary(ev, "self", "other", f_minimum, &c);
}
static gboolean ev_maximum(sc_ev *ev) {
  ew_ctx c = {0};
  return binary(ev, "self", "other", f_maximum, &c);
}

/* clamp: x, then optional lo (mode bit 1) and hi (mode bit 2) operands. */
static double f_clamp(const double *x, ew_ctx *c) {
  double v = x[0];
  uint32_t k = 1;
  if (c->mode & 1) {
    double lo = x[k++];
    v = (isnan(v) || isnan(lo)) ? NAN : (v < lo ? lo : v);
  }
  if (c->mode & 2) {
    double hi = x[k];
    v = (isnan(v) || isnan(hi)) ? NAN : (v > hi ? hi : v);
  }
  return v;
}

static gboolean ev_clamp(sc_ev *ev) {
  ew_ctx c = {0};
  g_autoptr(sc_tvalue) h1 = NULL;
  g_autoptr(sc_tvalue) h2 = NULL;
  const sc_tvalue *ins[3] = {ev_tensor(ev, "self"), NULL, NULL};
  uint32_t n = 1;
  if (ev_has(ev, "min")) {
    ins[n++] = ev_operand(ev, "min", &h1);
    c.mode |= 1;
  }
  if (ev_has(ev, "max")) {
    ins[n++] = ev_operand(ev, "max", &h2);
    c.mode |= 2;
  }
  return ew_run(ev, ev->out[0], n, ins, f_clamp, &c);
}

/* ---- unary ------------------------------------------------------------------ */

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

#define UNARY(name, expr)                                                  \
  static double f_##name(const double *x, ew_ctx *c) {                     \
    (void)c;                                                               \
    double v = x[0];                                                       \
    return (expr);                                                         \
  }                                                                        \
  static gboolean ev_##name(sc_ev *ev) {                                   \
    ew_ctx c = {0};                                                        \
    return unary(ev, f_##name, &c);                                        \
  }

UNARY(neg, -v)
UNARY(abs, fabs(v))
UNARY(relu, (isnan(v) || v > 0) ? v : 0.0)
UNARY(rsqrt, 1.0 / sqrt(v))
UNARY(sqrt, sqrt(v))
UNARY(exp, exp(v))
UNARY(log, log(v))
UNARY(log1p, log1p(v))
UNARY(tanh, tanh(v))
UNARY(sigmoid, sigmoid(v))
UNARY(reciprocal, 1.0 / v)
UNARY(sin, sin(v))
UNARY(cos, cos(v))
UNARY(silu, v * sigmoid(v))
UNARY(log_sigmoid, (v < 0 ? v : 0.0) - log1p(exp(-fabs(v))))
UNARY(logical_not, v == 0 ? 1.0 : 0.0)

static double f_bitwise_not(const double *x, ew_ctx *c) {
  if (c->mode) /* bool */
    return x[0] != 0 ? 0.0 : 1.0;
  return (double)(~(int64_t)x[0]);
}
static gboolean ev_bitwise_not(sc_ev *ev) {
  ew_ctx c = {.mode = ev->out[0]->dtype == SC_DTYPE_BOOL};
  return unary(ev, f_bitwise_not, &c);
}

#define K_SQRT1_2 0.70710678118654752440
#define K_2_SQRTPI 1.12837916709551257390
#define K_SQRT2 1.41421356237309504880
#define K_BETA (K_SQRT2 * K_2_SQRTPI * 0.5)
#define K_KAPPA 0.044715

static double gelu(double x, gboolean tanh_form) {
  if (tanh_form) {
    double inner = K_BETA * (x + K_KAPPA * x * x * x);
    return 0.5 * x * (1.0 + tanh(inner));
  }
  return 0.5 * x * (1.0 + erf(x * K_SQRT1_2));
}

static double f_gelu(const double *x, ew_ctx *c) { return gelu(x[0], c->mode); }

static gboolean approximate(sc_ev *ev, int *mode) {
  const char *a = ev_str(ev, "approximate", "none");
  if (strcmp(a, "none") == 0)
    *mode = 0;
  else if (strcmp(a, "tanh") == 0)
    *mode = 1;
  else
    return ev_fail(ev, SC_INTERP_ERROR_INVALID, "approximate must be 'none' or 'tanh', got '%s'", a);
  return TRUE;
}

static gboolean ev_gelu(sc_ev *ev) {
  ew_ctx c = {0};
  if (!approximate(ev, &c.mode))
    return FALSE;
  return unary(ev, f_gelu, &c);
}

static double f_softplus(const double *x, ew_ctx *c) {
  double b = c->alpha, t = c->p2;
  return x[0] * b > t ? x[0] : log1p(exp(x[0] * b)) / b;
}
static gboolean ev_softplus(sc_ev *ev) {
  ew_ctx c = {.alpha = ev_num(ev, "beta", 1), .p2 = ev_num(ev, "threshold", 20)};
  return unary(ev, f_softplus, &c);
}

/* ---- elementwise backward ---------------------------------------------------- */

static double f_sigmoid_bw(const double *x, ew_ctx *c) { (void)c; return x[0] * (1.0 - x[1]) * x[1]; }
static double f_tanh_bw(const double *x, ew_ctx *c) { (void)c; return x[0] * (1.0 - x[1] * x[1]); }
static double f_silu_bw(const double *x, ew_ctx *c) {
  (void)c;
  double s = sigmoid(x[1]);
  return x[0] * s * (1.0 + x[1] * (1.0 - s));
}
static double f_gelu_bw(const double *x, ew_ctx *c) {
  double g = x[0], v = x[1];
  if (c->mode) {
    double x_sq = v * v, x_cube = x_sq * v;
    double inner = K_BETA * (v + K_KAPPA * x_cube);
    double t = tanh(inner);
    double left = 0.5 * v, right = 1.0 + t;
    double left_d = 0.5 * right;
    double right_d = left * (1.0 - t * t) * K_BETA * (1.0 + 3.0 * K_KAPPA * x_sq);
    return g * (left_d + right_d);
  }
  double cdf = 0.5 * (1.0 + erf(v * K_SQRT1_2));
  double pdf = exp(-0.5 * v * v) * (K_2_SQRTPI * K_SQRT1_2 * 0.5);
  return g * (cdf + v * pdf);
}
static double f_threshold_bw(const double *x, ew_ctx *c) { return x[1] <= c->alpha ? 0.0 : x[0]; }

static gboolean ev_sigmoid_backward(sc_ev *ev) {
  ew_ctx c = {0};
  return binary(ev, "grad_output", "output", f_sigmoid_bw, &c);
}
static gboolean ev_tanh_backward(sc_ev *ev) {
  ew_ctx c = {0};
  return binary(ev, "grad_output", "output", f_tanh_bw, &c);
}
static gboolean ev_silu_backward(sc_ev *ev) {
  ew_ctx c = {0};
  return binary(ev, "grad_output", "self", f_silu_bw, &c);
}
static gboolean ev_gelu_backward(sc_ev *ev) {
  ew_ctx c = {0};
  if (!approximate(ev, &c.mode))
    return FALSE;
  return binary(ev, "grad_output", "self", f_gelu_bw, &c);
}
static gboolean ev_threshold_backward(sc_ev *ev) {
  ew_ctx c = {.alpha = ev_num(ev, "threshold", 0)};
  return binary(ev, "grad_output", "self", f_threshold_bw, &c);
}

/* ---- comparisons, bitwise, logical -------------------------------------------- */

enum { CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ, CMP_NE };

static double f_cmp(const double *x, ew_ctx *c) {
  double a = x[0], b = x[1];
  switch (c->mode) {
  case CMP_LT: return a < b;
  case CMP_LE: return a <= b;
  case CMP_GT: return a > b;
  case CMP_GE: return a >= b;
  case CMP_EQ: return a == b;
  default: return a != b;
  }
}

#define CMP(name, m)                                     \
  static gboolean ev_##name(sc_ev *ev) {                 \
    ew_ctx c = {.mode = m};                              \
    return binary(ev, "self", "other", f_cmp, &c);       \
  }
CMP(lt, CMP_LT)
CMP(le, CMP_LE)
CMP(gt, CMP_GT)
CMP(ge, CMP_GE)
CMP(eq, CMP_EQ)
CMP(ne, CMP_NE)

enum { BIT_AND, BIT_OR, BIT_XOR, LOG_AND, LOG_OR };

static double f_bits(const double *x, ew_ctx *c) {
  int64_t a = (int64_t)x[0], b = (int64_t)x[1];
  switch (c->mode) {
  case BIT_AND: return (double)(a & b);
  case BIT_OR: return (double)(a | b);
  case BIT_XOR: return (double)(a ^ b);
  case LOG_AND: return (x[0] != 0) && (x[1] != 0);
  default: return (x[0] != 0) || (x[1] != 0);
  }
}

#define BITS(name, m)                                    \
  static gboolean ev_##name(sc_ev *ev) {                 \
    ew_ctx c = {.mode = m};                              \
    return binary(ev, "self", "other", f_bits, &c);      \
  }
BITS(bitwise_and, BIT_AND)
BITS(bitwise_or, BIT_OR)
BITS(bitwise_xor, BIT_XOR)
BITS(logical_and, LOG_AND)
BITS(logical_or, LOG_OR)

/* ---- matrix products ---------------------------------------------------------- */

typedef struct {
  const double *data;
  int64_t bs[SC_MAX_RANK]; /* strides of the batch dims (broadcast: 0) */
  int64_t rs, cs;          /* row and column strides */
} mat_view;

/* OUT (contiguous, batch dims BDIMS[BRANK] then [m, p]) = A @ B. */
static void matmul_core(double *out, uint32_t brank, const int64_t *bdims, int64_t m, int64_t k,
                        int64_t p, const mat_view *a, const mat_view *b) {
  int64_t idx[SC_MAX_RANK] = {0};
  int64_t nb = 1;
  for (uint32_t d = 0; d < brank; d++)
    nb *= bdims[d];
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t ao = 0, bo = 0;
    for (uint32_t d = 0; d < brank; d++) {
      ao += idx[d] * a->bs[d];
      bo += idx[d] * b->bs[d];
    }
    double *o = out + bi * m * p;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < p; j++) {
        double acc = 0;
        for (int64_t q = 0; q < k; q++)
          acc += a->data[ao + i * a->rs + q * a->cs] * b->data[bo + q * b->rs + j * b->cs];
        o[i * p + j] = acc;
      }
    tv_next(brank, bdims, idx);
  }
}

/* torch.matmul semantics: 1-D operands are promoted (and the added dim
 * removed from the result), batch dims broadcast.  Writes OUT, whose shape
 * the rule gave (the same elements in the same order). */
static gboolean matmul_into(sc_ev *ev, sc_tvalue *out, const sc_tvalue *a, const sc_tvalue *b) {
  if (a->rank == 0 || b->rank == 0)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "both arguments to matmul need to be at least 1D");
  int64_t m = a->rank == 1 ? 1 : a->dims[a->rank - 2];
  int64_t k = a->dims[a->rank - 1];
  int64_t p = b->rank == 1 ? 1 : b->dims[b->rank - 1];
  int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  if (k != kb)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "inner dimensions differ: %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
                   (gint64)k, (gint64)kb);
  uint32_t ar = a->rank >= 2 ? a->rank - 2 : 0, br = b->rank >= 2 ? b->rank - 2 : 0;
  uint32_t brank = MAX(ar, br);
  int64_t bdims[SC_MAX_RANK], as[SC_MAX_RANK], bs[SC_MAX_RANK];
  tv_strides(a, as);
  tv_strides(b, bs);
  mat_view va = {a->data, {0}, a->rank == 1 ? 0 : as[a->rank - 2], as[a->rank - 1]};
  mat_view vb = {b->data, {0}, b->rank == 1 ? 1 : bs[b->rank - 2], b->rank == 1 ? 0 : bs[b->rank - 1]};
  for (uint32_t d = 0; d < brank; d++) {
    int32_t ka = (int32_t)d - (int32_t)(brank - ar), kb2 = (int32_t)d - (int32_t)(brank - br);
    int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb2 >= 0 ? b->dims[kb2] : 1;
    if (da != db && da != 1 && db != 1)
      return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "batch dims do not broadcast");
    bdims[d] = da == 1 ? db : da;
    va.bs[d] = (ka >= 0 && !(da == 1 && bdims[d] != 1)) ? as[ka] : 0;
    vb.bs[d] = (kb2 >= 0 && !(db == 1 && bdims[d] != 1)) ? bs[kb2] : 0;
  }
  int64_t total = m * p;
  for (uint32_t d = 0; d < brank; d++)
    total *= bdims[d];
  if (total != out->numel)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "internal disagreement on the product's size");
  if (total > 0)
    matmul_core(out->data, brank, bdims, m, k, p, &va, &vb);
  return TRUE;
}

/* mm, bmm, matmul, dot and mv: the second operand is mat2, other, tensor
 * or vec by schema. */
static gboolean ev_matmul(sc_ev *ev) {
  static const char *const second[] = {"mat2", "other", "tensor", "vec"};
  const sc_tvalue *a = ev_tensor(ev, "self"), *b = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(second) && b == NULL; i++)
    b = ev_tensor(ev, second[i]);
  return matmul_into(ev, ev->out[0], a, b);
}

/* beta * self + alpha * (m1 @ m2); beta == 0 ignores self (NaN included). */
static gboolean ev_addmm(sc_ev *ev) {
  const sc_tvalue *self = ev_tensor(ev, "self");
  const sc_tvalue *m1 = ev_tensor(ev, "mat1"), *m2 = ev_tensor(ev, "mat2");
  if (m1 == NULL) {
    m1 = ev_tensor(ev, "batch1");
    m2 = ev_tensor(ev, "batch2");
  }
  double beta = ev_num(ev, "beta", 1), alpha = ev_num(ev, "alpha", 1);
  sc_tvalue *out = ev->out[0];
  if (!matmul_into(ev, out, m1, m2))
    return FALSE;
  int64_t s[SC_MAX_RANK], idx[SC_MAX_RANK] = {0};
  tv_bstrides(self, out->rank, out->dims, s);
  for (int64_t k = 0; k < out->numel; k++) {
    int64_t o = 0;
    for (uint32_t d = 0; d < out->rank; d++)
      o += idx[d] * s[d];
    out->data[k] = alpha * out->data[k] + (beta == 0 ? 0.0 : beta * self->data[o]);
    tv_next(out->rank, out->dims, idx);
  }
  return TRUE;
}

/* linear: input @ weight^T + bias. */
static gboolean ev_linear(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "input"), *w = ev_tensor(ev, "weight"),
                  *bias = ev_tensor(ev, "bias");
  sc_tvalue *out = ev->out[0];
  if (x->rank == 0 || w->rank == 0 || w->rank > 2)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "linear needs a 1-D or 2-D weight and a non-0-D input");
  int64_t k = x->dims[x->rank - 1];
  int64_t p = w->rank == 2 ? w->dims[0] : 1;
  int64_t kw = w->dims[w->rank - 1];
  if (k != kw)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "input features %" G_GINT64_FORMAT " and weight %" G_GINT64_FORMAT " differ",
                   (gint64)k, (gint64)kw);
  int64_t m = k > 0 ? x->numel / k : 0;
  if (k == 0) {
    m = 1;
    for (uint32_t d = 0; d + 1 < x->rank; d++)
      m *= x->dims[d];
  }
  if (m * p != out->numel)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "internal disagreement on the product's size");
  mat_view va = {x->data, {0}, k, 1};
  mat_view vb = {w->data, {0}, 1, k}; /* b[q][j] = w[j][q] */
  if (out->numel > 0)
    matmul_core(out->data, 0, NULL, m, k, p, &va, &vb);
  if (bias != NULL) {
    int64_t s[SC_MAX_RANK], idx[SC_MAX_RANK] = {0};
    tv_bstrides(bias, out->rank, out->dims, s);
    for (int64_t q = 0; q < out->numel; q++) {
      int64_t o = 0;
      for (uint32_t d = 0; d < out->rank; d++)
        o += idx[d] * s[d];
      out->data[q] += bias->data[o];
      tv_next(out->rank, out->dims, idx);
    }
  }
  return TRUE;
}

/* ---- along one dim ------------------------------------------------------------ */

typedef struct {
  int64_t outer, len, inner;
} lines;

static lines lines_of(const sc_tvalue *x, uint32_t d) {
  lines l = {1, x->rank ? x->dims[d] : 1, 1};
  for (uint32_t j = 0; j < d && j < x->rank; j++)
    l.outer *= x->dims[j];
  for (uint32_t j = d + 1; j < x->rank; j++)
    l.inner *= x->dims[j];
  return l;
}

#define AT(l, o, q, i) (((o) * (l).len + (q)) * (l).inner + (i))

static gboolean softmax_common(sc_ev *ev, gboolean log_form) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  lines l = lines_of(x, ev_wrap(ev_int(ev, "dim", 0), x->rank));
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      /* the row's max (NaN propagates; an all -inf row gives NaN, as in ATen) */
      double mx = -INFINITY;
      for (int64_t q = 0; q < l.len && !isnan(mx); q++) {
        double v = x->data[AT(l, o, q, i)];
        if (isnan(v) || v > mx)
          mx = v;
      }
      double sum = 0;
      for (int64_t q = 0; q < l.len; q++)
        sum += exp(x->data[AT(l, o, q, i)] - mx);
      for (int64_t q = 0; q < l.len; q++) {
        double v = x->data[AT(l, o, q, i)] - mx;
        out->data[AT(l, o, q, i)] = log_form ? v - log(sum) : exp(v) / sum;
      }
    }
  return TRUE;
}

static gboolean ev_softmax(sc_ev *ev) { return softmax_common(ev, FALSE); }
static gboolean ev_log_softmax(sc_ev *ev) { return softmax_common(ev, TRUE); }

static gboolean softmax_bw_common(sc_ev *ev, gboolean log_form) {
  const sc_tvalue *g = ev_tensor(ev, "grad_output"), *y = ev_tensor(ev, "output");
  sc_tvalue *out = ev->out[0];
  lines l = lines_of(y, ev_wrap(ev_int(ev, "dim", 0), y->rank));
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      double s = 0;
      for (int64_t q = 0; q < l.len; q++) {
        int64_t at = AT(l, o, q, i);
        s += log_form ? g->data[at] : g->data[at] * y->data[at];
      }
      for (int64_t q = 0; q < l.len; q++) {
        int64_t at = AT(l, o, q, i);
        out->data[at] = log_form ? g->data[at] - exp(y->data[at]) * s
                                 : y->data[at] * (g->data[at] - s);
      }
    }
  return TRUE;
}

static gboolean ev_softmax_backward(sc_ev *ev) { return softmax_bw_common(ev, FALSE); }
static gboolean ev_log_softmax_backward(sc_ev *ev) { return softmax_bw_common(ev, TRUE); }

static gboolean ev_cumsum(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  lines l = lines_of(x, ev_wrap(ev_int(ev, "dim", 0), x->rank));
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      double acc = 0;
      for (int64_t q = 0; q < l.len; q++) {
        acc += x->data[AT(l, o, q, i)];
        out->data[AT(l, o, q, i)] = acc;
      }
    }
  return TRUE;
}

/* ---- normalization ------------------------------------------------------------ */

/* M rows of N normalized elements. */
static gboolean norm_rows(sc_ev *ev, const sc_tvalue *x, int64_t *m, int64_t *n) {
  int64_t ns[SC_MAX_RANK];
  int32_t k = ev_ints(ev, "normalized_shape", ns, SC_MAX_RANK);
  if (k < 1 || (uint32_t)k > x->rank)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "bad normalized_shape");
  *n = 1;
  for (int32_t i = 0; i < k; i++)
    *n *= ns[i];
  *m = 1;
  for (uint32_t i = 0; i < x->rank - (uint32_t)k; i++)
    *m *= x->dims[i];
  return TRUE;
}

static gboolean ev_layer_norm(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "input"), *w = ev_tensor(ev, "weight"),
                  *b = ev_tensor(ev, "bias");
  double eps = ev_num(ev, "eps", 1e-5);
  int64_t m, n;
  if (!norm_rows(ev, x, &m, &n))
    return FALSE;
  for (int64_t r = 0; r < m; r++) {
    const double *row = x->data + r * n;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; j++)
      mean += row[j];
    mean = n > 0 ? mean / (double)n : NAN;
    for (int64_t j = 0; j < n; j++)
      var += (row[j] - mean) * (row[j] - mean);
    var = n > 0 ? var / (double)n : NAN;
    double rstd = 1.0 / sqrt(var + eps);
    for (int64_t j = 0; j < n; j++) {
      double y = (row[j] - mean) * rstd;
      if (w != NULL)
        y *= w->data[j];
      if (b != NULL)
        y += b->data[j];
      ev->out[0]->data[r * n + j] = y;
    }
    if (ev->n_out >= 3) { /* native_layer_norm; layer_norm has one result */
      ev->out[1]->data[r] = mean;
      ev->out[2]->data[r] = rstd;
    }
  }
  return TRUE;
}

/* grad_input = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w;
 * grad_weight = sum over rows of dy * xhat; grad_bias = sum of dy.  The
 * given mean / rstd are used, as ATen does. */
static gboolean ev_layer_norm_backward(sc_ev *ev) {
  const sc_tvalue *dy = ev_tensor(ev, "grad_out"), *x = ev_tensor(ev, "input"),
                  *mean = ev_tensor(ev, "mean"), *rstd = ev_tensor(ev, "rstd"),
                  *w = ev_tensor(ev, "weight");
  int64_t m, n;
  if (!norm_rows(ev, x, &m, &n))
    return FALSE;
  if (mean->numel != m || rstd->numel != m)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "mean and rstd must have one entry per row (%" G_GINT64_FORMAT ")",
                   (gint64)m);
  for (int64_t r = 0; r < m; r++) {
    double mu = mean->data[r], rs = rstd->data[r];
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = 0; j < n; j++) {
      double xh = (x->data[r * n + j] - mu) * rs;
      double g = dy->data[r * n + j] * (w != NULL ? w->data[j] : 1.0);
      sum_g += g;
      sum_gx += g * xh;
    }
    for (int64_t j = 0; j < n; j++) {
      double xh = (x->data[r * n + j] - mu) * rs;
      double g = dy->data[r * n + j] * (w != NULL ? w->data[j] : 1.0);
      ev->out[0]->data[r * n + j] = rs * (g - sum_g / (double)n - xh * sum_gx / (double)n);
      ev->out[1]->data[j] += dy->data[r * n + j] * xh;
      ev->out[2]->data[j] += dy->data[r * n + j];
    }
  }
  return TRUE;
}

/* _fused_rms_norm -> (x * rstd * weight, rstd); eps None is the dtype's
 * machine epsilon, as torch.nn.functional.rms_norm uses. */
static gboolean ev_rms_norm(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "input"), *w = ev_tensor(ev, "weight");
  double eps = ev_has(ev, "eps") ? ev_num(ev, "eps", 0) : ev_reduce_dtype_eps(x->dtype);
  int64_t m, n;
  if (!norm_rows(ev, x, &m, &n))
    return FALSE;
  for (int64_t r = 0; r < m; r++) {
    double ss = 0;
    for (int64_t j = 0; j < n; j++)
      ss += x->data[r * n + j] * x->data[r * n + j];
    double rstd = 1.0 / sqrt(ss / (double)n + eps);
    for (int64_t j = 0; j < n; j++)
      ev->out[0]->data[r * n + j] = x->data[r * n + j] * rstd * (w != NULL ? w->data[j] : 1.0);
    ev->out[1]->data[r] = rstd;
  }
  return TRUE;
}

/* ---- dropout ------------------------------------------------------------------ */

/* Keep element X when a hash of (seed, X's bits) is at least p: the
 * decision follows the element's value, so a sharded program that drops
 * the same elements as the sequential one agrees with it.  (Real RNG
 * streams differ between the two programs; see docs/interpreter.md.) */
static gboolean dropout_keep(uint64_t seed, double x, double p) {
  if (x == 0)
    x = 0; /* -0.0 and 0.0 alike */
  uint64_t bits;
  if (isnan(x))
    bits = 0x7ff8000000000000ULL;
  else
    memcpy(&bits, &x, sizeof bits);
  uint64_t h = sc_interp_hash64(bits ^ sc_interp_hash64(seed ^ 0x5dc0d5eedULL));
  double u = (double)(h >> 11) * 0x1.0p-53;
  return u >= p;
}

static gboolean ev_dropout(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "input");
  double p = ev_num(ev, "p", 0.5);
  gboolean train = !ev_has(ev, "train") || ev_bool(ev, "train", TRUE);
  uint64_t seed = ev->cfg != NULL ? ev->cfg->seed : 0;
  double scale = p >= 1.0 ? 0.0 : 1.0 / (1.0 - p);
  for (int64_t i = 0; i < x->numel; i++) {
    gboolean keep = !train || dropout_keep(seed, x->data[i], p);
    ev->out[0]->data[i] = train ? (keep ? x->data[i] * scale : 0.0) : x->data[i];
    ev->out[1]->data[i] = keep;
  }
  return TRUE;
}

static double f_dropout_bw(const double *x, ew_ctx *c) { return x[0] * (x[1] != 0) * c->alpha; }

static gboolean ev_dropout_backward(sc_ev *ev) {
  ew_ctx c = {.alpha = ev_num(ev, "scale", 1)};
  return binary(ev, "grad_output", "mask", f_dropout_bw, &c);
}

/* ---- reductions ---------------------------------------------------------------- */

/* The reduced dims (none given: all) as a mask. */
static void reduce_mask(const sc_ev *ev, const sc_tvalue *x, const char *name, gboolean *mask) {
  int64_t dims[SC_MAX_RANK * 2];
  int32_t n = name != NULL ? ev_ints(ev, name, dims, G_N_ELEMENTS(dims)) : -1;
  for (uint32_t d = 0; d < SC_MAX_RANK; d++)
    mask[d] = n <= 0;
  if (n > 0)
    for (int32_t i = 0; i < n && i < (int32_t)G_N_ELEMENTS(dims); i++)
      if (x->rank > 0)
        mask[ev_wrap(dims[i], x->rank)] = TRUE;
}


/* The reduction of X over the dims that DIMS_ARG names (every dim when
 * absent): fills MASK (the reduced dims) and *N_OUT, and returns the map
 * from X's elements to the N_OUT results (transfer full); NULL, the
 * evaluation failed, when N_OUT is not WANT (the results' size). */
static int64_t *reduction(sc_ev *ev, const sc_tvalue *x, const char *dims_arg, int64_t want,
                          gboolean *mask, int64_t *n_out) {
  reduce_mask(ev, x, dims_arg, mask);
  int64_t *map = tv_reduce_map(x, mask, n_out);
  if (*n_out != want) {
    g_free(map);
    ev_set_error(ev, SC_INTERP_ERROR_SHAPE, "internal disagreement on the reduction's size");
    return NULL;
  }
  return map;
}

enum { RED_SUM, RED_MEAN, RED_VAR, RED_MAX, RED_MIN };

static gboolean reduce_common(sc_ev *ev, const char *dims_arg, int kind) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  gboolean mask[SC_MAX_RANK];
  int64_t n_out;
  g_autofree int64_t *map = reduction(ev, x, dims_arg, out->numel, mask, &n_out);
  if (map == NULL)
    return FALSE;
  int64_t count = n_out > 0 ? x->numel / n_out : 0;
  if (x->numel == 0) {
    count = 1;
    for (uint32_t d = 0; d < x->rank; d++)
      if (mask[d])
        count *= x->dims[d];
  }
  if ((kind == RED_MAX || kind == RED_MIN) && count == 0 && out->numel > 0)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "cannot reduce over a zero-size dimension (the operation has no identity)");
  if (kind == RED_MAX || kind == RED_MIN) {
    g_autofree gboolean *seen = g_new0(gboolean, ev_buf_len(n_out));
    for (int64_t k = 0; k < x->numel; k++) {
      double v = x->data[k], *o = &out->data[map[k]];
      if (!seen[map[k]]) {
        *o = v;
        seen[map[k]] = TRUE;
      } else if (!isnan(*o) && (isnan(v) || (kind == RED_MAX ? v > *o : v < *o))) {
        *o = v;
      }
    }
    return TRUE;
  }
  for (int64_t k = 0; k < x->numel; k++)
    out->data[map[k]] += x->data[k];
  if (kind == RED_MEAN)
    for (int64_t k = 0; k < n_out; k++)
      out->data[k] /= (double)count;
  if (kind == RED_VAR) {
    double correction = ev_has(ev, "correction") ? ev_num(ev, "correction", 1) : 1.0;
    g_autofree double *mean = g_new(double, ev_buf_len(n_out));
    for (int64_t k = 0; k < n_out; k++) {
      mean[k] = out->data[k] / (double)count;
      out->data[k] = 0;
    }
    for (int64_t k = 0; k < x->numel; k++) {
      double dlt = x->data[k] - mean[map[k]];
      out->data[map[k]] += dlt * dlt;
    }
    double divisor = (double)count - correction;
    if (divisor < 0)
      divisor = 0;
    for (int64_t k = 0; k < n_out; k++)
      out->data[k] /= divisor;
  }
  return TRUE;
}

static gboolean ev_sum(sc_ev *ev) { return reduce_common(ev, "dim", RED_SUM); }
static gboolean ev_mean(sc_ev *ev) { return reduce_common(ev, "dim", RED_MEAN); }
static gboolean ev_var(sc_ev *ev) { return reduce_common(ev, "dim", RED_VAR); }
static gboolean ev_amax(sc_ev *ev) { return reduce_common(ev, "dim", RED_MAX); }
static gboolean ev_amin(sc_ev *ev) { return reduce_common(ev, "dim", RED_MIN); }

/* Values and indices of the max (min) along a dim: the lowest index among
 * ties, the first NaN if any. */
static gboolean arg_extreme(sc_ev *ev, const sc_tvalue *x, gboolean flat, uint32_t d,
                            gboolean is_max, sc_tvalue *vals, sc_tvalue *idxs) {
  lines l;
  if (flat) {
    l.outer = 1;
    l.len = x->numel;
    l.inner = 1;
  } else {
    l = lines_of(x, d);
  }
  if (l.len == 0 && l.outer * l.inner > 0)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "cannot compute the %s of an empty dimension", is_max ? "max" : "min");
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      double best = x->data[AT(l, o, 0, i)];
      int64_t bi = 0;
      for (int64_t q = 1; q < l.len && !isnan(best); q++) {
        double v = x->data[AT(l, o, q, i)];
        if (isnan(v) || (is_max ? v > best : v < best)) {
          best = v;
          bi = q;
        }
      }
      if (vals != NULL)
        vals->data[o * l.inner + i] = best;
      idxs->data[o * l.inner + i] = (double)bi;
    }
  return TRUE;
}

static gboolean ev_max_dim(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  gboolean is_max = strcmp(ev->op->name, "max") == 0;
  return arg_extreme(ev, x, FALSE, ev_wrap(ev_int(ev, "dim", 0), x->rank), is_max, ev->out[0],
                     ev->out[1]);
}

static gboolean ev_argmax(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  gboolean is_max = strcmp(ev->op->name, "argmax") == 0;
  gboolean flat = !ev_has(ev, "dim");
  return arg_extreme(ev, x, flat, flat ? 0 : ev_wrap(ev_int(ev, "dim", 0), x->rank), is_max,
                     NULL, ev->out[0]);
}

/* ---- embedding and losses ------------------------------------------------------- */

static gboolean ev_embedding(sc_ev *ev) {
  const sc_tvalue *w = ev_tensor(ev, "weight"), *ix = ev_tensor(ev, "indices");
  if (w->rank != 2)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "'weight' must be 2-D");
  int64_t v = w->dims[0], dsz = w->dims[1];
  for (int64_t k = 0; k < ix->numel; k++) {
    int64_t i = (int64_t)ix->data[k];
    if (i < 0 || i >= v)
      return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                     "index %" G_GINT64_FORMAT " is out of range for a table of %" G_GINT64_FORMAT " rows",
                     (gint64)i, (gint64)v);
    if (dsz > 0)
      memcpy(ev->out[0]->data + k * dsz, w->data + i * dsz, sizeof(double) * (size_t)dsz);
  }
  return TRUE;
}

static gboolean ev_embedding_backward(sc_ev *ev) {
  const sc_tvalue *g = ev_tensor(ev, "grad_output"), *ix = ev_tensor(ev, "indices");
  sc_tvalue *out = ev->out[0];
  int64_t nw = ev_int(ev, "num_weights", 0), pad = ev_int(ev, "padding_idx", -1);
  gboolean by_freq = ev_bool(ev, "scale_grad_by_freq", FALSE);
  int64_t dsz = out->rank == 2 ? out->dims[1] : 0;
  if (g->numel != ix->numel * dsz)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE,
                   "grad_output must have the indices' shape followed by the embedding size");
  g_autofree int64_t *count = g_new0(int64_t, nw > 0 ? (gsize)nw : 1);
  for (int64_t k = 0; k < ix->numel; k++) {
    int64_t i = (int64_t)ix->data[k];
    if (i < 0 || i >= nw)
      return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                     "index %" G_GINT64_FORMAT " is out of range for %" G_GINT64_FORMAT " weights",
                     (gint64)i, (gint64)nw);
    count[i]++;
  }
  for (int64_t k = 0; k < ix->numel; k++) {
    int64_t i = (int64_t)ix->data[k];
    if (i == pad)
      continue;
    double scale = by_freq ? 1.0 / (double)count[i] : 1.0;
    for (int64_t j = 0; j < dsz; j++)
      out->data[i * dsz + j] += g->data[k * dsz + j] * scale;
  }
  return TRUE;
}

/* Per sample: -w[t] * self[n][t], 0 where t == ignore_index. */
static gboolean ev_nll_loss(sc_ev *ev) {
  const sc_tvalue *s = ev_tensor(ev, "self"), *t = ev_tensor(ev, "target"),
                  *w = ev_tensor(ev, "weight");
  int64_t red = ev_int(ev, "reduction", 1), ignore = ev_int(ev, "ignore_index", -100);
  int64_t c = s->dims[s->rank - 1], n = s->rank == 2 ? s->dims[0] : 1;
  double total = 0, tw = 0;
  if (t->numel != n)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "target must have one entry per sample");
  for (int64_t i = 0; i < n; i++) {
    int64_t cls = (int64_t)t->data[i];
    double l = 0;
    if (cls != ignore) {
      if (cls < 0 || cls >= c)
        return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                       "Target %" G_GINT64_FORMAT " is out of bounds (%" G_GINT64_FORMAT " classes)",
                       (gint64)cls, (gint64)c);
      double wt = w != NULL ? w->data[cls] : 1.0;
      l = -wt * s->data[i * c + cls];
      tw += wt;
    }
    if (red == 0)
      ev->out[0]->data[i] = l;
    total += l;
  }
  if (red != 0)
    ev->out[0]->data[0] = red == 1 ? total / tw : total;
  ev->out[1]->data[0] = red == 0 ? 0.0 : tw;
  return TRUE;
}

static gboolean ev_nll_loss_backward(sc_ev *ev) {
  const sc_tvalue *g = ev_tensor(ev, "grad_output"), *s = ev_tensor(ev, "self"),
                  *t = ev_tensor(ev, "target"), *w = ev_tensor(ev, "weight"),
                  *tw = ev_tensor(ev, "total_weight");
  int64_t red = ev_int(ev, "reduction", 1), ignore = ev_int(ev, "ignore_index", -100);
  int64_t c = s->dims[s->rank - 1], n = s->rank == 2 ? s->dims[0] : 1;
  if (g->numel < 1 || tw->numel < 1 || t->numel != n)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "grad_output, target or total_weight is empty");
  for (int64_t i = 0; i < n; i++) {
    int64_t cls = (int64_t)t->data[i];
    if (cls == ignore)
      continue;
    if (cls < 0 || cls >= c)
      return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                     "Target %" G_GINT64_FORMAT " is out of bounds (%" G_GINT64_FORMAT " classes)",
                     (gint64)cls, (gint64)c);
    double wt = w != NULL ? w->data[cls] : 1.0;
    double go = red == 0 && g->numel == n ? g->data[i] : g->data[0];
    double v = -wt * go;
    if (red == 1)
      v /= tw->data[0];
    ev->out[0]->data[i * c + cls] = v;
  }
  return TRUE;
}

static double f_sqdiff(const double *x, ew_ctx *c) { (void)c; return (x[0] - x[1]) * (x[0] - x[1]); }

static gboolean ev_mse_loss(sc_ev *ev) {
  int64_t red = ev_int(ev, "reduction", 1);
  sc_tvalue *out = ev->out[0];
  if (red == 0) {
    ew_ctx c = {0};
    return binary(ev, "self", "target", f_sqdiff, &c);
  }
  const sc_tvalue *a = ev_tensor(ev, "self"), *b = ev_tensor(ev, "target");
  /* the broadcast shape of self and target */
  uint32_t r = MAX(a->rank, b->rank);
  int64_t dims[SC_MAX_RANK];
  for (uint32_t d = 0; d < r; d++) {
    int32_t ka = (int32_t)d - (int32_t)(r - a->rank), kb = (int32_t)d - (int32_t)(r - b->rank);
    int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
    dims[d] = da == 1 ? db : da;
  }
  g_autoptr(sc_tvalue) per = ev_new(ev, out->dtype, r, dims);
  if (per == NULL)
    return FALSE;
  ew_ctx c = {0};
  const sc_tvalue *ins[2] = {a, b};
  if (!ew_run(ev, per, 2, ins, f_sqdiff, &c))
    return FALSE;
  double sum = 0;
  for (int64_t k = 0; k < per->numel; k++)
    sum += per->data[k];
  out->data[0] = red == 1 ? sum / (double)per->numel : sum;
  return TRUE;
}

static double f_mse_bw(const double *x, ew_ctx *c) { return 2.0 * (x[1] - x[2]) * x[0] * c->alpha; }

static gboolean ev_mse_loss_backward(sc_ev *ev) {
  const sc_tvalue *g = ev_tensor(ev, "grad_output"), *s = ev_tensor(ev, "self"),
                  *t = ev_tensor(ev, "target");
  int64_t red = ev_int(ev, "reduction", 1);
  ew_ctx c = {.alpha = red == 1 ? 1.0 / (double)(s->numel ? s->numel : 1) : 1.0};
  const sc_tvalue *ins[3] = {g, s, t};
  return ew_run(ev, ev->out[0], 3, ins, f_mse_bw, &c);
}

/* ---- operators added for unseen captures ------------------------------------ */

UNARY(erf, erf(v))

static gboolean ev_floor_divide(sc_ev *ev) {
  ew_ctx c = {.mode = DIV_FLOOR};
  return binary(ev, "self", "other", f_div, &c);
}

/* Python's modulo (ATen's remainder): the sign of the divisor. */
static double f_remainder(const double *x, ew_ctx *c) {
  double a = x[0], b = x[1];
  if (c->int_math) {
    if (b == 0) {
      c->failed = TRUE;
      c->why = "ZeroDivisionError: integer remainder by zero";
      return 0;
    }
    int64_t ia = (int64_t)a, ib = (int64_t)b;
    if (ib == -1)
      return 0.0;
    int64_t m = ia % ib;
    if (m != 0 && ((m < 0) != (ib < 0)))
      m += ib;
    return (double)m;
  }
  double m = fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0)))
    m += b;
  return m;
}

static gboolean ev_remainder(sc_ev *ev) {
  ew_ctx c = {0};
  return binary(ev, "self", "other", f_remainder, &c);
}

static double f_addcmul(const double *x, ew_ctx *c) { return x[0] + c->alpha * x[1] * x[2]; }
static double f_addcdiv(const double *x, ew_ctx *c) { return x[0] + c->alpha * (x[1] / x[2]); }

static gboolean ev_addc(sc_ev *ev) {
  ew_ctx c = {.alpha = ev_num(ev, "value", 1)};
  const sc_tvalue *ins[3] = {ev_tensor(ev, "self"), ev_tensor(ev, "tensor1"),
                             ev_tensor(ev, "tensor2")};
  c.int_math = is_int_dtype(ins[0]->dtype) && is_int_dtype(ins[1]->dtype) &&
               is_int_dtype(ins[2]->dtype);
  return ew_run(ev, ev->out[0], 3, ins,
                strcmp(ev->op->name, "addcmul") == 0 ? f_addcmul : f_addcdiv, &c);
}

/* ATen's lerp: the form that is exact at the nearer end. */
static double f_lerp(const double *x, ew_ctx *c) {
  double w = c->alpha, a = x[0], b = x[1];
  return fabs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1.0 - w);
}

static gboolean ev_lerp(sc_ev *ev) {
  ew_ctx c = {.alpha = ev_num(ev, "weight", 0)};
  return binary(ev, "self", "end", f_lerp, &c);
}

/* logsumexp: max-shifted; an infinite max is not subtracted (ATen). */
static gboolean ev_logsumexp(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  gboolean mask[SC_MAX_RANK];
  int64_t n_out;
  g_autofree int64_t *map = reduction(ev, x, "dim", out->numel, mask, &n_out);
  if (map == NULL)
    return FALSE;
  g_autofree double *mx = g_new(double, ev_buf_len(n_out));
  for (int64_t k = 0; k < n_out; k++)
    mx[k] = -INFINITY;
  for (int64_t k = 0; k < x->numel; k++) {
    double v = x->data[k];
    if (isnan(v) || v > mx[map[k]] || isnan(mx[map[k]]))
      mx[map[k]] = isnan(mx[map[k]]) ? mx[map[k]] : v;
  }
  for (int64_t k = 0; k < n_out; k++)
    if (isinf(mx[k]))
      mx[k] = 0;
  for (int64_t k = 0; k < x->numel; k++)
    out->data[map[k]] += exp(x->data[k] - mx[map[k]]);
  for (int64_t k = 0; k < n_out; k++)
    out->data[k] = log(out->data[k]) + mx[k];
  return TRUE;
}

/* var_mean: (var with the correction, mean). */
static gboolean ev_var_mean(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *var = ev->out[0], *mean = ev->out[1];
  gboolean mask[SC_MAX_RANK];
  int64_t n_out;
  g_autofree int64_t *map = reduction(ev, x, "dim", var->numel, mask, &n_out);
  if (map == NULL)
    return FALSE;
  if (mean->numel != n_out)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "internal disagreement on the reduction's size");
  int64_t count = 1;
  for (uint32_t d = 0; d < x->rank; d++)
    if (mask[d])
      count *= x->dims[d];
  double correction = ev_has(ev, "correction") ? ev_num(ev, "correction", 1) : 1.0;
  for (int64_t k = 0; k < x->numel; k++)
    mean->data[map[k]] += x->data[k];
  for (int64_t k = 0; k < n_out; k++)
    mean->data[k] /= (double)count;
  for (int64_t k = 0; k < x->numel; k++) {
    double dl = x->data[k] - mean->data[map[k]];
    var->data[map[k]] += dl * dl;
  }
  double divisor = (double)count - correction;
  if (divisor < 0)
    divisor = 0;
  for (int64_t k = 0; k < n_out; k++)
    var->data[k] /= divisor;
  return TRUE;
}

/* any / all: an empty reduction is False / True. */
static gboolean any_all(sc_ev *ev, gboolean is_any) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  gboolean mask[SC_MAX_RANK];
  int64_t n_out;
  g_autofree int64_t *map = reduction(ev, x, "dim", out->numel, mask, &n_out);
  if (map == NULL)
    return FALSE;
  for (int64_t k = 0; k < n_out; k++)
    out->data[k] = is_any ? 0.0 : 1.0;
  for (int64_t k = 0; k < x->numel; k++) {
    gboolean nz = x->data[k] != 0; /* NaN is nonzero */
    if (is_any && nz)
      out->data[map[k]] = 1.0;
    if (!is_any && !nz)
      out->data[map[k]] = 0.0;
  }
  return TRUE;
}
static gboolean ev_any(sc_ev *ev) { return any_all(ev, TRUE); }
static gboolean ev_all(sc_ev *ev) { return any_all(ev, FALSE); }

static gboolean ev_outer(sc_ev *ev) {
  const sc_tvalue *a = ev_tensor(ev, "self"), *b = ev_tensor(ev, "vec2");
  if (a->rank != 1 || b->rank != 1 || ev->out[0]->numel != a->numel * b->numel)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "outer needs two 1-D tensors");
  for (int64_t i = 0; i < a->numel; i++)
    for (int64_t j = 0; j < b->numel; j++)
      ev->out[0]->data[i * b->numel + j] = a->data[i] * b->data[j];
  return TRUE;
}

/* bernoulli.p: 1 with probability p, drawn as dropout draws its mask (from
 * the element's value and the seed: the decision follows the element,
 * docs/interpreter.md), so that a split computes the same draws. */
static gboolean ev_bernoulli(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  double p = ev_num(ev, "p", 0.5);
  uint64_t seed = (ev->cfg != NULL ? ev->cfg->seed : 0) ^ 0xbe2e011ULL;
  for (int64_t i = 0; i < x->numel; i++)
    ev->out[0]->data[i] = dropout_keep(seed, x->data[i], 1.0 - p) ? 1.0 : 0.0;
  return TRUE;
}

/* ---- scaled dot-product attention --------------------------------------------- */

/* The blocks of one attention call: query [.., Hq, L, E], key [.., Hk, S,
 * E], value [.., Hk, S, Ev]; query head h reads key head h / (Hq / Hk). */
typedef struct {
  const sc_tvalue *q, *k, *v, *mask;
  int64_t outer, hq, hk, L, S, E, Ev;
  int64_t mstr[SC_MAX_RANK]; /* mask strides over [.., Hq, L, S] */
  int64_t tdims[SC_MAX_RANK];
  double scale;
  gboolean causal;
} attn_ctx;

static gboolean attn_setup(sc_ev *ev, attn_ctx *a) {
  a->q = ev_tensor(ev, "query");
  a->k = ev_tensor(ev, "key");
  a->v = ev_tensor(ev, "value");
  a->mask = ev_tensor(ev, "attn_mask");
  if (a->mask == NULL)
    a->mask = ev_tensor(ev, "attn_bias");
  uint32_t r = a->q->rank;
  if (r < 2 || a->k->rank != r || a->v->rank != r)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "attention needs query, key and value of one rank >= 2");
  if (ev_num(ev, "dropout_p", 0.0) != 0.0)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "attention with dropout_p != 0 is random and not evaluated");
  a->L = a->q->dims[r - 2];
  a->E = a->q->dims[r - 1];
  a->S = a->k->dims[r - 2];
  a->Ev = a->v->dims[r - 1];
  a->hq = r >= 3 ? a->q->dims[r - 3] : 1;
  a->hk = r >= 3 ? a->k->dims[r - 3] : 1;
  if (a->hk <= 0 || a->hq % a->hk != 0 || a->k->dims[r - 1] != a->E || a->v->dims[r - 2] != a->S)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "query, key and value do not fit together");
  a->outer = 1;
  for (uint32_t d = 0; d + 2 < r; d++)
    a->outer *= a->q->dims[d];
  for (uint32_t d = 0; d < r; d++)
    a->tdims[d] = a->q->dims[d];
  a->tdims[r - 1] = a->S;
  if (a->mask != NULL)
    tv_bstrides(a->mask, r, a->tdims, a->mstr);
  a->scale = ev_has(ev, "scale") ? ev_num(ev, "scale", 1.0) : 1.0 / sqrt((double)a->E);
  a->causal = ev_bool(ev, "is_causal", FALSE);
  return TRUE;
}

/* Offset into the mask of element (o, i, j), o the flat index of the
 * leading dims [.., Hq]. */
static int64_t attn_mask_off(const attn_ctx *a, int64_t o, int64_t i, int64_t j) {
  uint32_t r = a->q->rank;
  int64_t off = i * a->mstr[r - 2] + j * a->mstr[r - 1];
  for (int32_t d = (int32_t)r - 3; d >= 0; d--) {
    off += (o % a->tdims[d]) * a->mstr[d];
    o /= a->tdims[d];
  }
  return off;
}

/* The score of row i, column j of block o (-inf where masked). */
static double attn_score(const attn_ctx *a, int64_t o, int64_t i, int64_t j) {
  if (a->causal && j > i)
    return -INFINITY;
  int64_t kb = (o / a->hq) * a->hk + (o % a->hq) / (a->hq / a->hk);
  const double *qi = a->q->data + (o * a->L + i) * a->E;
  const double *kj = a->k->data + (kb * a->S + j) * a->E;
  double s = 0;
  for (int64_t e = 0; e < a->E; e++)
    s += qi[e] * kj[e];
  s *= a->scale;
  if (a->mask != NULL) {
    double m = a->mask->data[attn_mask_off(a, o, i, j)];
    if (a->mask->dtype == SC_DTYPE_BOOL)
      s = m != 0 ? s : -INFINITY;
    else
      s += m;
  }
  return s;
}

static int64_t attn_kv_block(const attn_ctx *a, int64_t o) {
  return (o / a->hq) * a->hk + (o % a->hq) / (a->hq / a->hk);
}

/* output = softmax(scores) @ value; LSE (stride LSE_LEN per block, NULL
 * for none) = log sum exp(scores), padded with +inf up to LSE_LEN. */
static gboolean attn_forward(sc_ev *ev, const attn_ctx *a, double *out, double *lse,
                             int64_t lse_len) {
  g_autofree double *sc = g_new(double, ev_buf_len(a->S));
  for (int64_t o = 0; o < a->outer; o++) {
    int64_t kb = attn_kv_block(a, o);
    for (int64_t i = 0; i < a->L; i++) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < a->S; j++) {
        sc[j] = attn_score(a, o, i, j);
        if (isnan(sc[j]) || sc[j] > mx)
          mx = isnan(mx) ? mx : sc[j];
      }
      double sum = 0;
      for (int64_t j = 0; j < a->S; j++)
        sum += exp(sc[j] - mx);
      double l = mx + log(sum);
      double *oi = out + (o * a->L + i) * a->Ev;
      for (int64_t e = 0; e < a->Ev; e++)
        oi[e] = 0;
      for (int64_t j = 0; j < a->S; j++) {
        double p = exp(sc[j] - l);
        const double *vj = a->v->data + (kb * a->S + j) * a->Ev;
        for (int64_t e = 0; e < a->Ev; e++)
          oi[e] += p * vj[e];
      }
      if (isinf(mx) && mx < 0) /* every column masked: NaN, as softmax gives */
        for (int64_t e = 0; e < a->Ev; e++)
          oi[e] = NAN;
      if (lse != NULL && i < lse_len)
        lse[o * lse_len + i] = l;
    }
    if (lse != NULL)
      for (int64_t i = a->L; i < lse_len; i++)
        lse[o * lse_len + i] = INFINITY;
  }
  (void)ev;
  return TRUE;
}

static gboolean ev_sdpa(sc_ev *ev) {
  attn_ctx a;
  if (!attn_setup(ev, &a))
    return FALSE;
  sc_tvalue *out = ev->out[0];
  if (out->numel != a.outer * a.L * a.Ev)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "internal disagreement on the attention's size");
  double *lse = NULL;
  int64_t lse_len = 0;
  if (ev->n_out >= 2) {
    sc_tvalue *l = ev->out[1];
    lse_len = l->rank ? l->dims[l->rank - 1] : 0;
    if (l->numel != a.outer * lse_len || (lse_len != 0 && lse_len < a.L))
      return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "internal disagreement on logsumexp's size");
    lse = l->data;
  }
  if (!attn_forward(ev, &a, out->data, lse, lse_len))
    return FALSE;
  if (ev->n_out == 9) { /* flash: max_q, max_k; RNG state 0 */
    ev->out[4]->data[0] = (double)a.L;
    ev->out[5]->data[0] = (double)a.S;
  }
  return TRUE;
}

/* The backward from the saved output and logsumexp, as the kernels do:
 * P = exp(scores - lse), D_i = grad_out_i . out_i, dS = P * (grad_out @
 * value^T - D), grad_query = scale dS @ key, grad_key = scale dS^T @ query,
 * grad_value = P^T @ grad_out; grad_attn_bias = dS summed over the dims the
 * bias broadcasts along. */
static gboolean ev_sdpa_backward(sc_ev *ev) {
  attn_ctx a;
  if (!attn_setup(ev, &a))
    return FALSE;
  const sc_tvalue *g = ev_tensor(ev, "grad_out_");
  if (g == NULL)
    g = ev_tensor(ev, "grad_out");
  const sc_tvalue *o = ev_tensor(ev, "out"), *lse = ev_tensor(ev, "logsumexp");
  int64_t lse_len = lse->rank ? lse->dims[lse->rank - 1] : 0;
  if (g->numel != a.outer * a.L * a.Ev || o->numel != g->numel || lse_len < a.L ||
      lse->numel != a.outer * lse_len)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "grad_out, out or logsumexp do not fit the query");
  sc_tvalue *dq = ev->out[0], *dk = ev->out[1], *dv = ev->out[2];
  sc_tvalue *db = ev->n_out == 4 && a.mask != NULL && a.mask->dtype != SC_DTYPE_BOOL
                      ? ev->out[3] : NULL;
  g_autofree double *dp = g_new(double, ev_buf_len(a.S));
  for (int64_t ob = 0; ob < a.outer; ob++) {
    int64_t kb = attn_kv_block(&a, ob);
    for (int64_t i = 0; i < a.L; i++) {
      const double *gi = g->data + (ob * a.L + i) * a.Ev;
      const double *oi = o->data + (ob * a.L + i) * a.Ev;
      double D = 0;
      for (int64_t e = 0; e < a.Ev; e++)
        D += gi[e] * oi[e];
      double l = lse->data[ob * lse_len + i];
      const double *qi = a.q->data + (ob * a.L + i) * a.E;
      double *dqi = dq->data + (ob * a.L + i) * a.E;
      for (int64_t j = 0; j < a.S; j++) {
        double s = attn_score(&a, ob, i, j);
        double p = isinf(s) && s < 0 ? 0.0 : exp(s - l);
        const double *vj = a.v->data + (kb * a.S + j) * a.Ev;
        double dpij = 0;
        for (int64_t e = 0; e < a.Ev; e++)
          dpij += gi[e] * vj[e];
        double ds = p * (dpij - D);
        dp[j] = ds;
        double *dvj = dv->data + (kb * a.S + j) * a.Ev;
        for (int64_t e = 0; e < a.Ev; e++)
          dvj[e] += p * gi[e];
        const double *kj = a.k->data + (kb * a.S + j) * a.E;
        double *dkj = dk->data + (kb * a.S + j) * a.E;
        for (int64_t e = 0; e < a.E; e++) {
          dqi[e] += a.scale * ds * kj[e];
          dkj[e] += a.scale * ds * qi[e];
        }
        if (db != NULL)
          db->data[attn_mask_off(&a, ob, i, j)] += ds;
      }
    }
  }
  return TRUE;
}

const sc_eval_entry sc_eval_math_table[] = {
    {"aten.add.Tensor", ev_add},
    {"aten.add.Scalar", ev_add},
    {"aten.sub.Tensor", ev_sub},
    {"aten.sub.Scalar", ev_sub},
    {"aten.rsub.Tensor", ev_rsub},
    {"aten.rsub.Scalar", ev_rsub},
    {"aten.mul.Tensor", ev_mul},
    {"aten.mul.Scalar", ev_mul},
    {"aten.div.Tensor", ev_div},
    {"aten.div.Scalar", ev_div},
    {"aten.div.Tensor_mode", ev_div},
    {"aten.div.Scalar_mode", ev_div},
    {"aten.pow.Tensor_Scalar", ev_pow},
    {"aten.pow.Tensor_Tensor", ev_pow},
    {"aten.pow.Scalar", ev_pow},
    {"aten.minimum.default", ev_minimum},
    {"aten.maximum.default", ev_maximum},
    {"aten.clamp.default", ev_clamp},
    {"aten.clamp.Tensor", ev_clamp},
    {"aten.neg.default", ev_neg},
    {"aten.abs.default", ev_abs},
    {"aten.relu.default", ev_relu},
    {"aten.rsqrt.default", ev_rsqrt},
    {"aten.sqrt.default", ev_sqrt},
    {"aten.exp.default", ev_exp},
    {"aten.log.default", ev_log},
    {"aten.log1p.default", ev_log1p},
    {"aten.tanh.default", ev_tanh},
    {"aten.sigmoid.default", ev_sigmoid},
    {"aten.reciprocal.default", ev_reciprocal},
    {"aten.sin.default", ev_sin},
    {"aten.cos.default", ev_cos},
    {"aten.gelu.default", ev_gelu},
    {"aten.silu.default", ev_silu},
    {"aten.log_sigmoid.default", ev_log_sigmoid},
    {"aten.softplus.default", ev_softplus},
    {"aten.bitwise_not.default", ev_bitwise_not},
    {"aten.logical_not.default", ev_logical_not},
    {"aten.sigmoid_backward.default", ev_sigmoid_backward},
    {"aten.tanh_backward.default", ev_tanh_backward},
    {"aten.gelu_backward.default", ev_gelu_backward},
    {"aten.silu_backward.default", ev_silu_backward},
    {"aten.threshold_backward.default", ev_threshold_backward},
    {"aten.lt.Scalar", ev_lt},
    {"aten.lt.Tensor", ev_lt},
    {"aten.le.Scalar", ev_le},
    {"aten.le.Tensor", ev_le},
    {"aten.gt.Scalar", ev_gt},
    {"aten.gt.Tensor", ev_gt},
    {"aten.ge.Scalar", ev_ge},
    {"aten.ge.Tensor", ev_ge},
    {"aten.eq.Scalar", ev_eq},
    {"aten.eq.Tensor", ev_eq},
    {"aten.ne.Scalar", ev_ne},
    {"aten.ne.Tensor", ev_ne},
    {"aten.bitwise_and.Tensor", ev_bitwise_and},
    {"aten.bitwise_or.Tensor", ev_bitwise_or},
    {"aten.bitwise_xor.Tensor", ev_bitwise_xor},
    {"aten.logical_and.default", ev_logical_and},
    {"aten.logical_or.default", ev_logical_or},
    {"aten.mm.default", ev_matmul},
    {"aten.bmm.default", ev_matmul},
    {"aten.addmm.default", ev_addmm},
    {"aten.baddbmm.default", ev_addmm},
    {"aten.matmul.default", ev_matmul},
    {"aten.linear.default", ev_linear},
    {"aten._softmax.default", ev_softmax},
    {"aten._log_softmax.default", ev_log_softmax},
    {"aten._softmax_backward_data.default", ev_softmax_backward},
    {"aten._log_softmax_backward_data.default", ev_log_softmax_backward},
    {"aten.native_layer_norm.default", ev_layer_norm},
    {"aten.native_layer_norm_backward.default", ev_layer_norm_backward},
    {"aten._fused_rms_norm.default", ev_rms_norm},
    {"aten.native_dropout.default", ev_dropout},
    {"aten.native_dropout_backward.default", ev_dropout_backward},
    {"aten.sum.default", ev_sum},
    {"aten.sum.dim_IntList", ev_sum},
    {"aten.mean.default", ev_mean},
    {"aten.mean.dim", ev_mean},
    {"aten.var.correction", ev_var},
    {"aten.amax.default", ev_amax},
    {"aten.amin.default", ev_amin},
    {"aten.max.default", ev_amax},
    {"aten.min.default", ev_amin},
    {"aten.max.dim", ev_max_dim},
    {"aten.min.dim", ev_max_dim},
    {"aten.argmax.default", ev_argmax},
    {"aten.argmin.default", ev_argmax},
    {"aten.cumsum.default", ev_cumsum},
    {"aten.embedding.default", ev_embedding},
    {"aten.embedding_dense_backward.default", ev_embedding_backward},
    {"aten.nll_loss_forward.default", ev_nll_loss},
    {"aten.nll_loss_backward.default", ev_nll_loss_backward},
    {"aten.mse_loss.default", ev_mse_loss},
    {"aten.mse_loss_backward.default", ev_mse_loss_backward},
    {"aten.erf.default", ev_erf},
    {"aten.clamp_min.default", ev_clamp},
    {"aten.clamp_max.default", ev_clamp},
    {"aten.floor_divide.default", ev_floor_divide},
    {"aten.floor_divide.Scalar", ev_floor_divide},
    {"aten.remainder.Scalar", ev_remainder},
    {"aten.remainder.Tensor", ev_remainder},
    {"aten.addcmul.default", ev_addc},
    {"aten.addcdiv.default", ev_addc},
    {"aten.lerp.Scalar", ev_lerp},
    {"aten.logsumexp.default", ev_logsumexp},
    {"aten.var_mean.correction", ev_var_mean},
    {"aten.any.default", ev_any},
    {"aten.any.dim", ev_any},
    {"aten.any.dims", ev_any},
    {"aten.all.default", ev_all},
    {"aten.all.dim", ev_all},
    {"aten.all.dims", ev_all},
    {"aten.dot.default", ev_matmul},
    {"aten.mv.default", ev_matmul},
    {"aten.outer.default", ev_outer},
    {"aten.softmax.int", ev_softmax},
    {"aten.log_softmax.int", ev_log_softmax},
    {"aten.layer_norm.default", ev_layer_norm},
    {"aten.bernoulli.p", ev_bernoulli},
    {"aten.scaled_dot_product_attention.default", ev_sdpa},
    {"aten._scaled_dot_product_efficient_attention.default", ev_sdpa},
    {"aten._scaled_dot_product_efficient_attention_backward.default", ev_sdpa_backward},
    {"aten._scaled_dot_product_flash_attention.default", ev_sdpa},
    {"aten._scaled_dot_product_flash_attention_backward.default", ev_sdpa_backward},
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", ev_sdpa},
    {"aten._scaled_dot_product_flash_attention_for_cpu_backward.default", ev_sdpa_backward},
    {NULL, NULL},
};
