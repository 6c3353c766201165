/* eval-extra.c — evaluators of ops-extra.def: activations and their
 * backward operators, rounding and the remaining unary functions, a few
 * binary functions, losses with their backward operators, vector norms,
 * products (and cumulative ones) and argsort.
 *
 * Everything is computed in float64, with ATen's formulas (CPU kernels):
 * the caller rounds the results to their dtypes.  Losses reduce with
 * reduction 0 (none), 1 (mean over every element), 2 (sum); their
 * backward operators scale by 1/numel under mean.  log_sigmoid_forward's
 * buffer is exp(-|x|), what the CPU kernel stores; log_sigmoid_backward
 * reads only self (its value does not depend on the buffer). */
#include "interp/interp-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- elementwise framework ------------------------------------------------ */

typedef struct {
  double p[4];       /* the operator's Scalar arguments */
  gboolean flag;     /* is_result, self_is_result */
  gboolean int_math; /* every operand is an integer or bool */
} xw_ctx;

typedef double (*xw_fn)(const double *x, const xw_ctx *c);

/* OUT = f(INS...) with INS broadcast to OUT's shape. */
static gboolean xw_run(sc_tvalue *out, uint32_t n, const sc_tvalue *const *ins, xw_fn f,
                       const xw_ctx *c) {
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
  } while (tv_next(out->rank, out->dims, idx));
  return TRUE;
}

static gboolean xw_unary(sc_ev *ev, xw_fn f, const xw_ctx *c) {
  const sc_tvalue *ins[1] = {ev_tensor(ev, "self")};
  return xw_run(ev->out[0], 1, ins, f, c);
}

/* f(A, B) over the named arguments (tensors or Scalars). */
static gboolean xw_binary(sc_ev *ev, const char *a, const char *b, xw_fn f, xw_ctx *c) {
  g_autoptr(sc_tvalue) ha = NULL;
  g_autoptr(sc_tvalue) hb = NULL;
  const sc_tvalue *ins[2] = {ev_operand(ev, a, &ha), ev_operand(ev, b, &hb)};
  c->int_math = !sc_dtype_is_floating(ins[0]->dtype) && !sc_dtype_is_floating(ins[1]->dtype);
  return xw_run(ev->out[0], 2, ins, f, c);
}

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
static double softplus1(double x) { return x > 20.0 ? x : log1p(exp(x)); }

/* ---- activations ----------------------------------------------------------- */

#define XUNARY(name, expr)                                                 \
  static double fx_##name(const double *x, const xw_ctx *c) {              \
    (void)c;                                                               \
    double v = x[0];                                                       \
    return (expr);                                                         \
  }                                                                        \
  static gboolean ev_##name(sc_ev *ev) {                                   \
    xw_ctx c = {{0}, FALSE, FALSE};                                        \
    return xw_unary(ev, fx_##name, &c);                                    \
  }

static gboolean ev_log_sigmoid_forward(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  for (int64_t i = 0; i < x->numel; i++) {
    double v = x->data[i], z = exp(-fabs(v));
    ev->out[0]->data[i] = (v < 0 ? v : 0.0) - log1p(z);
    ev->out[1]->data[i] = z;
  }
  return TRUE;
}

/* d/dx log(sigmoid(x)) = sigmoid(-x). */
static double fx_log_sigmoid_bw(const double *x, const xw_ctx *c) {
  (void)c;
  return x[0] * sigm(-x[1]);
}
static gboolean ev_log_sigmoid_backward(sc_ev *ev) {
  xw_ctx c = {{0}, FALSE, FALSE};
  return xw_binary(ev, "grad_output", "self", fx_log_sigmoid_bw, &c);
}

/* elu(x) = scale * (x > 0 ? x : alpha * (exp(x * input_scale) - 1)). */
static double fx_elu(const double *x, const xw_ctx *c) {
  double v = x[0];
  return c->p[1] * (v > 0 ? v : c->p[0] * expm1(v * c->p[2]));
}
static gboolean ev_elu(sc_ev *ev) {
  xw_ctx c = {{ev_num(ev, "alpha", 1), ev_num(ev, "scale", 1), ev_num(ev, "input_scale", 1), 0},
              FALSE, FALSE};
  return xw_unary(ev, fx_elu, &c);
}
/* ATen's elu_backward: from the result (is_result: y = scale*alpha*(e-1)
 * where negative) or from the input. */
static double fx_elu_bw(const double *x, const xw_ctx *c) {
  double g = x[0], v = x[1], alpha = c->p[0], scale = c->p[1], is = c->p[2];
  if (c->flag)
    return v <= 0 ? g * is * (v + alpha * scale) : g * scale;
  return v <= 0 ? g * is * scale * alpha * exp(v * is) : g * scale;
}
static gboolean ev_elu_backward(sc_ev *ev) {
  xw_ctx c = {{ev_num(ev, "alpha", 1), ev_num(ev, "scale", 1), ev_num(ev, "input_scale", 1), 0},
              ev_bool(ev, "is_result", FALSE), FALSE};
  return xw_binary(ev, "grad_output", "self_or_result", fx_elu_bw, &c);
}

static double fx_hardtanh(const double *x, const xw_ctx *c) {
  double v = x[0];
  if (isnan(v))
    return v;
  return v < c->p[0] ? c->p[0] : v > c->p[1] ? c->p[1] : v;
}
static gboolean ev_hardtanh(sc_ev *ev) {
  xw_ctx c = {{ev_num(ev, "min_val", -1), ev_num(ev, "max_val", 1), 0, 0}, FALSE, FALSE};
  return xw_unary(ev, fx_hardtanh, &c);
}
static double fx_hardtanh_bw(const double *x, const xw_ctx *c) {
  return (x[1] <= c->p[0] || x[1] >= c->p[1]) ? 0.0 : x[0];
}
static gboolean ev_hardtanh_backward(sc_ev *ev) {
  xw_ctx c = {{ev_num(ev, "min_val", -1), ev_num(ev, "max_val", 1), 0, 0}, FALSE, FALSE};
  return xw_binary(ev, "grad_output", "self", fx_hardtanh_bw, &c);
}

static double fx_leaky_relu(const double *x, const xw_ctx *c) {
  return x[0] > 0 ? x[0] : x[0] * c->p[0];
}
static gboolean ev_leaky_relu(sc_ev *ev) {
  xw_ctx c = {{ev_num(ev, "negative_slope", 0.01), 0, 0, 0}, FALSE, FALSE};
  return xw_unary(ev, fx_leaky_relu, &c);
}
static double fx_leaky_relu_bw(const double *x, const xw_ctx *c) {
  return x[1] > 0 ? x[0] : x[0] * c->p[0];
}
static gboolean ev_leaky_relu_backward(sc_ev *ev) {
  xw_ctx c = {{ev_num(ev, "negative_slope", 0.01), 0, 0, 0}, FALSE, FALSE};
  return xw_binary(ev, "grad_output", "self", fx_leaky_relu_bw, &c);
}

XUNARY(hardswish, v <= -3 ? 0.0 : v >= 3 ? v : v * (v + 3) / 6)
static double fx_hardswish_bw(const double *x, const xw_ctx *c) {
  (void)c;
  double v = x[1];
  return v < -3 ? 0.0 : v <= 3 ? x[0] * (v / 3 + 0.5) : x[0];
}
static gboolean ev_hardswish_backward(sc_ev *ev) {
  xw_ctx c = {{0}, FALSE, FALSE};
  return xw_binary(ev, "grad_output", "self", fx_hardswish_bw, &c);
}

/* softplus's backward: z = exp(x * beta); x * beta > threshold gives g. */
static double fx_softplus_bw(const double *x, const xw_ctx *c) {
  double b = c->p[0], t = c->p[1];
  if (x[1] * b > t)
    return x[0];
  double z = exp(x[1] * b);
  return x[0] * z / (z + 1.0);
}
static gboolean ev_softplus_backward(sc_ev *ev) {
  xw_ctx c = {{ev_num(ev, "beta", 1), ev_num(ev, "threshold", 20), 0, 0}, FALSE, FALSE};
  return xw_binary(ev, "grad_output", "self", fx_softplus_bw, &c);
}

XUNARY(mish, v * tanh(softplus1(v)))
static double fx_mish_bw(const double *x, const xw_ctx *c) {
  (void)c;
  double v = x[1], t = tanh(softplus1(v));
  return x[0] * (t + v * sigm(v) * (1.0 - t * t));
}
static gboolean ev_mish_backward(sc_ev *ev) {
  xw_ctx c = {{0}, FALSE, FALSE};
  return xw_binary(ev, "grad_output", "self", fx_mish_bw, &c);
}

/* ---- unary functions --------------------------------------------------------- */

XUNARY(sign, isnan(v) ? 0.0 : (double)((v > 0) - (v < 0)))
XUNARY(sgn, isnan(v) ? 0.0 : (double)((v > 0) - (v < 0)))
XUNARY(floor, floor(v))
XUNARY(ceil, ceil(v))
XUNARY(round, nearbyint(v)) /* half to even, as ATen's round */
XUNARY(trunc, trunc(v))
XUNARY(expm1, expm1(v))
XUNARY(log2, log2(v))
XUNARY(log10, log10(v))
XUNARY(tan, tan(v))
XUNARY(atan, atan(v))
XUNARY(asin, asin(v))
XUNARY(acos, acos(v))
XUNARY(sinh, sinh(v))
XUNARY(cosh, cosh(v))
XUNARY(asinh, asinh(v))
XUNARY(acosh, acosh(v))
XUNARY(atanh, atanh(v))
XUNARY(isnan, isnan(v) ? 1.0 : 0.0)
XUNARY(isinf, isinf(v) ? 1.0 : 0.0)

/* ---- binary functions ---------------------------------------------------------- */

static double fx_logical_xor(const double *x, const xw_ctx *c) {
  (void)c;
  return (x[0] != 0) != (x[1] != 0) ? 1.0 : 0.0;
}
/* xlogy(x, y) = x * log(y), 0 where x == 0 (NaN y stays NaN). */
static double fx_xlogy(const double *x, const xw_ctx *c) {
  (void)c;
  if (isnan(x[1]))
    return NAN;
  return x[0] == 0 ? 0.0 : x[0] * log(x[1]);
}
static double fx_atan2(const double *x, const xw_ctx *c) {
  (void)c;
  return atan2(x[0], x[1]);
}
/* fmod: C's remainder, the sign of the dividend; integers divide exactly. */
static double fx_fmod(const double *x, const xw_ctx *c) {
  if (c->int_math)
    return x[1] == 0 ? NAN : (double)((int64_t)x[0] % (int64_t)x[1]);
  return fmod(x[0], x[1]);
}
static double fx_bit_and(const double *x, const xw_ctx *c) {
  (void)c;
  return (double)((int64_t)x[0] & (int64_t)x[1]);
}
static double fx_bit_or(const double *x, const xw_ctx *c) {
  (void)c;
  return (double)((int64_t)x[0] | (int64_t)x[1]);
}
static double fx_bit_xor(const double *x, const xw_ctx *c) {
  (void)c;
  return (double)((int64_t)x[0] ^ (int64_t)x[1]);
}

#define XBINARY(name, fn)                                      \
  static gboolean ev_##name(sc_ev *ev) {                       \
    xw_ctx c = {{0}, FALSE, FALSE};                            \
    return xw_binary(ev, "self", "other", fn, &c);             \
  }
XBINARY(logical_xor, fx_logical_xor)
XBINARY(xlogy, fx_xlogy)
XBINARY(atan2, fx_atan2)
XBINARY(fmod, fx_fmod)
XBINARY(bit_and, fx_bit_and)
XBINARY(bit_or, fx_bit_or)
XBINARY(bit_xor, fx_bit_xor)

/* ---- losses ------------------------------------------------------------------ */

enum { LOSS_SMOOTH_L1, LOSS_HUBER, LOSS_BCE, LOSS_BCE_LOGITS };

/* The unreduced loss of one element: x input, t target, w weight (1 when
 * absent), pw pos_weight (1 when absent). */
static double loss_elem(int kind, double x, double t, double w, double pw, double p) {
  double d = x - t, a = fabs(d);
  switch (kind) {
  case LOSS_SMOOTH_L1:
    return p > 0 && a < p ? 0.5 * d * d / p : a - 0.5 * p;
  case LOSS_HUBER:
    return a <= p ? 0.5 * d * d : p * (a - 0.5 * p);
  case LOSS_BCE: {
    double lx = fmax(log(x), -100.0), l1x = fmax(log1p(-x), -100.0);
    return -w * (t * lx + (1.0 - t) * l1x);
  }
  default: {
    double lw = (pw - 1.0) * t + 1.0;
    return w * ((1.0 - t) * x + lw * (log1p(exp(-fabs(x))) + fmax(-x, 0.0)));
  }
  }
}

static double loss_grad(int kind, double x, double t, double w, double p) {
  double d = x - t, a = fabs(d);
  switch (kind) {
  case LOSS_SMOOTH_L1:
    return a < p ? d / p : (d > 0) - (d < 0);
  case LOSS_HUBER:
    return a <= p ? d : p * ((d > 0) - (d < 0));
  default:
    return w * (x - t) / fmax((1.0 - x) * x, 1e-12);
  }
}

/* The broadcast shape of the tensors of INS (N of them; NULL skipped). */
static void bshape(const sc_tvalue *const *ins, uint32_t n, uint32_t *rank, int64_t *dims) {
  uint32_t r = 0;
  for (uint32_t i = 0; i < n; i++)
    if (ins[i] && ins[i]->rank > r)
      r = ins[i]->rank;
  for (uint32_t d = 0; d < r; d++)
    dims[d] = 1;
  for (uint32_t i = 0; i < n; i++) {
    if (!ins[i])
      continue;
    for (uint32_t k = 0; k < ins[i]->rank; k++) {
      uint32_t d = r - ins[i]->rank + k;
      if (ins[i]->dims[k] != 1)
        dims[d] = ins[i]->dims[k];
    }
  }
  *rank = r;
}

static gboolean ev_loss(sc_ev *ev, int kind, const char *pname, double pdflt) {
  const sc_tvalue *ins[4] = {ev_tensor(ev, "self"), ev_tensor(ev, "target"),
                             ev_has(ev, "weight") ? ev_tensor(ev, "weight") : NULL,
                             ev_has(ev, "pos_weight") ? ev_tensor(ev, "pos_weight") : NULL};
  double p = pname ? ev_num(ev, pname, pdflt) : 0.0;
  int64_t red = ev_int(ev, "reduction", 1);
  uint32_t r;
  int64_t dims[SC_MAX_RANK];
  bshape(ins, 4, &r, dims);
  g_autoptr(sc_tvalue) per = ev_new(ev, ev->out[0]->dtype, r, dims);
  if (per == NULL)
    return FALSE;
  int64_t st[4][SC_MAX_RANK];
  for (uint32_t i = 0; i < 4; i++)
    if (ins[i])
      tv_bstrides(ins[i], r, dims, st[i]);
  int64_t idx[SC_MAX_RANK] = {0};
  double sum = 0;
  for (int64_t k = 0; k < per->numel; k++) {
    double v[4] = {0, 0, 1, 1};
    for (uint32_t i = 0; i < 4; i++) {
      if (!ins[i])
        continue;
      int64_t o = 0;
      for (uint32_t d = 0; d < r; d++)
        o += idx[d] * st[i][d];
      v[i] = ins[i]->data[o];
    }
    per->data[k] = loss_elem(kind, v[0], v[1], v[2], v[3], p);
    sum += per->data[k];
    tv_next(r, dims, idx);
  }
  if (red == 0) {
    memcpy(ev->out[0]->data, per->data, sizeof(double) * (size_t)per->numel);
    return TRUE;
  }
  ev->out[0]->data[0] = red == 1 ? sum / (double)(per->numel ? per->numel : 1) : sum;
  return TRUE;
}

static gboolean ev_loss_backward(sc_ev *ev, int kind, const char *pname) {
  const sc_tvalue *g = ev_tensor(ev, "grad_output"), *s = ev_tensor(ev, "self"),
                  *t = ev_tensor(ev, "target");
  const sc_tvalue *w = ev_has(ev, "weight") ? ev_tensor(ev, "weight") : NULL;
  double p = pname ? ev_num(ev, pname, 1.0) : 0.0;
  int64_t red = ev_int(ev, "reduction", 1);
  double scale = red == 1 ? 1.0 / (double)(s->numel ? s->numel : 1) : 1.0;
  sc_tvalue *out = ev->out[0];
  int64_t sg[SC_MAX_RANK], stt[SC_MAX_RANK], sw[SC_MAX_RANK];
  tv_bstrides(g, out->rank, out->dims, sg);
  tv_bstrides(t, out->rank, out->dims, stt);
  if (w)
    tv_bstrides(w, out->rank, out->dims, sw);
  int64_t idx[SC_MAX_RANK] = {0};
  for (int64_t k = 0; k < out->numel; k++) {
    int64_t og = 0, ot = 0, ow = 0;
    for (uint32_t d = 0; d < out->rank; d++) {
      og += idx[d] * sg[d];
      ot += idx[d] * stt[d];
      if (w)
        ow += idx[d] * sw[d];
    }
    double wv = w ? w->data[ow] : 1.0;
    out->data[k] = g->data[og] * scale * loss_grad(kind, s->data[k], t->data[ot], wv, p);
    tv_next(out->rank, out->dims, idx);
  }
  return TRUE;
}

static gboolean ev_smooth_l1_loss(sc_ev *ev) { return ev_loss(ev, LOSS_SMOOTH_L1, "beta", 1.0); }
static gboolean ev_huber_loss(sc_ev *ev) { return ev_loss(ev, LOSS_HUBER, "delta", 1.0); }
static gboolean ev_bce(sc_ev *ev) { return ev_loss(ev, LOSS_BCE, NULL, 0.0); }
static gboolean ev_bce_logits(sc_ev *ev) { return ev_loss(ev, LOSS_BCE_LOGITS, NULL, 0.0); }
static gboolean ev_smooth_l1_loss_backward(sc_ev *ev) {
  return ev_loss_backward(ev, LOSS_SMOOTH_L1, "beta");
}
static gboolean ev_huber_loss_backward(sc_ev *ev) {
  return ev_loss_backward(ev, LOSS_HUBER, "delta");
}
static gboolean ev_bce_backward(sc_ev *ev) { return ev_loss_backward(ev, LOSS_BCE, NULL); }

/* ---- reductions and sorting ---------------------------------------------------- */

/* The reduced dims that argument NAME names (absent or None: every dim). */
static void xreduce_mask(const sc_ev *ev, const sc_tvalue *x, const char *name, gboolean *mask) {
  int64_t dims[SC_MAX_RANK * 2];
  int32_t n = name != NULL ? ev_ints(ev, name, dims, G_N_ELEMENTS(dims)) : -1;
  for (uint32_t d = 0; d < SC_MAX_RANK; d++)
    mask[d] = n <= 0;
  for (int32_t i = 0; i < n && i < (int32_t)G_N_ELEMENTS(dims); i++)
    if (x->rank > 0)
      mask[ev_wrap(dims[i], x->rank)] = TRUE;
}

static gboolean reduce_into(sc_ev *ev, const char *dims_arg, gboolean prod, double ord) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  gboolean mask[SC_MAX_RANK];
  xreduce_mask(ev, x, dims_arg, mask);
  int64_t n_out;
  g_autofree int64_t *map = tv_reduce_map(x, mask, &n_out);
  if (n_out != out->numel)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "internal disagreement on the reduction's size");
  for (int64_t k = 0; k < n_out; k++)
    out->data[k] = prod ? 1.0 : (isinf(ord) && ord < 0 ? INFINITY : 0.0);
  for (int64_t k = 0; k < x->numel; k++) {
    double v = x->data[k], *o = &out->data[map[k]];
    if (prod)
      *o *= v;
    else if (isinf(ord))
      *o = ord > 0 ? fmax(*o, fabs(v)) : fmin(*o, fabs(v));
    else if (ord == 0)
      *o += v != 0;
    else
      *o += pow(fabs(v), ord);
  }
  if (!prod && !isinf(ord) && ord != 0 && ord != 1)
    for (int64_t k = 0; k < n_out; k++)
      out->data[k] = pow(out->data[k], 1.0 / ord);
  return TRUE;
}

static gboolean ev_vector_norm(sc_ev *ev) { return reduce_into(ev, "dim", FALSE, ev_num(ev, "ord", 2)); }
static gboolean ev_prod(sc_ev *ev) { return reduce_into(ev, NULL, TRUE, 0); }
static gboolean ev_prod_dim(sc_ev *ev) { return reduce_into(ev, "dim", TRUE, 0); }

/* masked_scatter: self with the masked positions (mask broadcast to the
 * result) taking source's elements in row-major order. */
static gboolean ev_masked_scatter(sc_ev *ev) {
  const sc_tvalue *s = ev_tensor(ev, "self"), *m = ev_tensor(ev, "mask"),
                  *src = ev_tensor(ev, "source");
  sc_tvalue *out = ev->out[0];
  int64_t ss[SC_MAX_RANK], sm[SC_MAX_RANK], idx[SC_MAX_RANK] = {0}, next = 0;
  tv_bstrides(s, out->rank, out->dims, ss);
  tv_bstrides(m, out->rank, out->dims, sm);
  for (int64_t k = 0; k < out->numel; k++) {
    int64_t os = 0, om = 0;
    for (uint32_t d = 0; d < out->rank; d++) {
      os += idx[d] * ss[d];
      om += idx[d] * sm[d];
    }
    if (m->data[om] != 0) {
      if (next >= src->numel)
        return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                       "masked_scatter: source has fewer elements than the mask selects");
      out->data[k] = src->data[next++];
    } else {
      out->data[k] = s->data[os];
    }
    tv_next(out->rank, out->dims, idx);
  }
  return TRUE;
}

/* cumprod along dim: running products of every line. */
static gboolean ev_cumprod(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  if (x->numel == 0)
    return TRUE;
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  int64_t len = x->rank ? x->dims[d] : 1, inner = 1;
  for (uint32_t k = d + 1; k < x->rank; k++)
    inner *= x->dims[k];
  int64_t outer = x->numel / (len * inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double acc = 1.0;
      for (int64_t j = 0; j < len; j++) {
        int64_t at = (o * len + j) * inner + in;
        acc *= x->data[at];
        out->data[at] = acc;
      }
    }
  return TRUE;
}

typedef struct {
  double v;
  int64_t i;
  gboolean desc;
} sort_item;

/* Stable: ties keep index order; NaN sorts as the largest value. */
static int sort_cmp(const void *pa, const void *pb) {
  const sort_item *a = pa, *b = pb;
  double x = a->v, y = b->v;
  int c;
  if (isnan(x) || isnan(y))
    c = isnan(x) && isnan(y) ? 0 : isnan(x) ? 1 : -1;
  else
    c = (x > y) - (x < y);
  if (a->desc)
    c = -c;
  return c != 0 ? c : (a->i > b->i) - (a->i < b->i);
}

static gboolean ev_argsort(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  if (x->numel == 0)
    return TRUE;
  uint32_t d = ev_wrap(ev_int(ev, "dim", -1), x->rank);
  gboolean desc = ev_bool(ev, "descending", FALSE);
  int64_t len = x->rank ? x->dims[d] : 1, inner = 1;
  for (uint32_t k = d + 1; k < x->rank; k++)
    inner *= x->dims[k];
  int64_t outer = x->numel / (len * inner);
  g_autofree sort_item *items = g_new(sort_item, ev_buf_len(len));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      for (int64_t j = 0; j < len; j++)
        items[j] = (sort_item){x->data[(o * len + j) * inner + in], j, desc};
      qsort(items, (size_t)len, sizeof *items, sort_cmp);
      for (int64_t j = 0; j < len; j++)
        out->data[(o * len + j) * inner + in] = (double)items[j].i;
    }
  return TRUE;
}

const sc_eval_entry sc_eval_extra_table[] = {
    {"aten.log_sigmoid_forward.default", ev_log_sigmoid_forward},
    {"aten.log_sigmoid_backward.default", ev_log_sigmoid_backward},
    {"aten.elu.default", ev_elu},
    {"aten.elu_backward.default", ev_elu_backward},
    {"aten.hardtanh.default", ev_hardtanh},
    {"aten.hardtanh_backward.default", ev_hardtanh_backward},
    {"aten.leaky_relu.default", ev_leaky_relu},
    {"aten.leaky_relu_backward.default", ev_leaky_relu_backward},
    {"aten.hardswish.default", ev_hardswish},
    {"aten.hardswish_backward.default", ev_hardswish_backward},
    {"aten.softplus_backward.default", ev_softplus_backward},
    {"aten.mish.default", ev_mish},
    {"aten.mish_backward.default", ev_mish_backward},
    {"aten.sign.default", ev_sign},
    {"aten.sgn.default", ev_sgn},
    {"aten.floor.default", ev_floor},
    {"aten.ceil.default", ev_ceil},
    {"aten.round.default", ev_round},
    {"aten.trunc.default", ev_trunc},
    {"aten.expm1.default", ev_expm1},
    {"aten.log2.default", ev_log2},
    {"aten.log10.default", ev_log10},
    {"aten.tan.default", ev_tan},
    {"aten.atan.default", ev_atan},
    {"aten.asin.default", ev_asin},
    {"aten.acos.default", ev_acos},
    {"aten.sinh.default", ev_sinh},
    {"aten.cosh.default", ev_cosh},
    {"aten.asinh.default", ev_asinh},
    {"aten.acosh.default", ev_acosh},
    {"aten.atanh.default", ev_atanh},
    {"aten.isnan.default", ev_isnan},
    {"aten.isinf.default", ev_isinf},
    {"aten.logical_xor.default", ev_logical_xor},
    {"aten.xlogy.Tensor", ev_xlogy},
    {"aten.atan2.default", ev_atan2},
    {"aten.fmod.Tensor", ev_fmod},
    {"aten.fmod.Scalar", ev_fmod},
    {"aten.bitwise_and.Scalar", ev_bit_and},
    {"aten.bitwise_or.Scalar", ev_bit_or},
    {"aten.bitwise_xor.Scalar", ev_bit_xor},
    {"aten.smooth_l1_loss.default", ev_smooth_l1_loss},
    {"aten.smooth_l1_loss_backward.default", ev_smooth_l1_loss_backward},
    {"aten.huber_loss.default", ev_huber_loss},
    {"aten.huber_loss_backward.default", ev_huber_loss_backward},
    {"aten.binary_cross_entropy.default", ev_bce},
    {"aten.binary_cross_entropy_backward.default", ev_bce_backward},
    {"aten.binary_cross_entropy_with_logits.default", ev_bce_logits},
    {"aten.linalg_vector_norm.default", ev_vector_norm},
    {"aten.prod.default", ev_prod},
    {"aten.prod.dim_int", ev_prod_dim},
    {"aten.cumprod.default", ev_cumprod},
    {"aten.masked_scatter.default", ev_masked_scatter},
    {"aten.argsort.stable", ev_argsort},
    {NULL, NULL},
};
