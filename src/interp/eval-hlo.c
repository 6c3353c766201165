/* eval-hlo.c — evaluators of the HLO rows (src/ops/ops-hlo.def), with
 * XLA's semantics:
 *
 *   hlo.dynamic_slice         starts clamped to [0, dim - size] per dim
 *                             (HLO's rule), then the slice;
 *   hlo.dynamic_update_slice  starts clamped to [0, dim - update dim], the
 *                             operand with the update written there;
 *   hlo.custom_call           an opaque kernel: a fixed pseudo-random
 *                             function of the target, the backend_config and
 *                             every operand element (each result element a
 *                             hashed linear mix of them, squashed by tanh),
 *                             so that two calls agree on values exactly when
 *                             they agree on target, config and operands;
 *   hlo.reduce                a fold of the reducer over the reduced
 *                             elements in row-major order, from init_value.
 *                             HLO leaves the order of a reduction
 *                             unspecified; a fold is one of the orders it
 *                             allows, and every graph that holds the same
 *                             operator is evaluated the same way.
 *
 * The reducer text (written by tools/hlo2bundle from the to_apply
 * computation) is a prefix expression over the accumulator `a` and the
 * element `b`:
 *
 *   e := "a" | "b" | NUMBER | OP "(" e ")" | OP "(" e "," e ")"
 *
 * with the binary OPs add subtract multiply divide maximum minimum and or
 * power, and the unary OPs negate abs exponential log. */
#include "interp/interp-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static gboolean read_starts(sc_ev *ev, const char *name, const sc_tvalue *x,
                            const int64_t *sizes, int64_t *starts) {
  uint32_t n = 0;
  g_autofree const sc_tvalue **st = ev_tensor_list(ev, name, &n);
  if (n != x->rank)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "%s has %u tensors for an operand of rank %u",
                   name, n, x->rank);
  for (uint32_t d = 0; d < n; d++) {
    if (st[d] == NULL || st[d]->numel != 1)
      return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "%s[%u] is not a scalar", name, d);
    int64_t s = (int64_t)st[d]->data[0];
    int64_t hi = x->dims[d] - sizes[d];
    starts[d] = s < 0 ? 0 : (s > hi ? hi : s);
  }
  return TRUE;
}

static gboolean ev_dynamic_slice(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "operand");
  sc_tvalue *o = ev->out[0];
  int64_t starts[SC_MAX_RANK], xs[SC_MAX_RANK], idx[SC_MAX_RANK] = {0};
  if (!read_starts(ev, "start_indices", x, o->dims, starts))
    return FALSE;
  if (o->numel == 0)
    return TRUE;
  tv_strides(x, xs);
  int64_t k = 0;
  do {
    int64_t off = 0;
    for (uint32_t d = 0; d < x->rank; d++)
      off += (starts[d] + idx[d]) * xs[d];
    o->data[k++] = x->data[off];
  } while (tv_next(o->rank, o->dims, idx));
  return TRUE;
}

static gboolean ev_dynamic_update_slice(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "operand");
  const sc_tvalue *u = ev_tensor(ev, "update");
  sc_tvalue *o = ev->out[0];
  int64_t starts[SC_MAX_RANK], os[SC_MAX_RANK], idx[SC_MAX_RANK] = {0};
  if (!read_starts(ev, "start_indices", x, u->dims, starts))
    return FALSE;
  if (o->numel)
    memcpy(o->data, x->data, (size_t)o->numel * sizeof(double));
  if (u->numel == 0)
    return TRUE;
  tv_strides(o, os);
  int64_t k = 0;
  do {
    int64_t off = 0;
    for (uint32_t d = 0; d < u->rank; d++)
      off += (starts[d] + idx[d]) * os[d];
    o->data[off] = u->data[k++];
  } while (tv_next(u->rank, u->dims, idx));
  return TRUE;
}

/* ---- the reducer ------------------------------------------------------------ */

typedef struct {
  const char *s;
  size_t pos;
  gboolean bad;
} rparse;

static void r_ws(rparse *p) {
  while (p->s[p->pos] == ' ')
    p->pos++;
}

static double r_expr(rparse *p, double a, double b);

static double r_apply(const char *op, size_t n, int nargs, double x, double y, rparse *p) {
#define IS(w) (n == strlen(w) && strncmp(op, w, n) == 0)
  if (nargs == 2) {
    if (IS("add")) return x + y;
    if (IS("subtract")) return x - y;
    if (IS("multiply")) return x * y;
    if (IS("divide")) return x / y;
    if (IS("maximum")) return isnan(x) || isnan(y) ? NAN : (x > y ? x : y);
    if (IS("minimum")) return isnan(x) || isnan(y) ? NAN : (x < y ? x : y);
    if (IS("and")) return (x != 0 && y != 0) ? 1.0 : 0.0;
    if (IS("or")) return (x != 0 || y != 0) ? 1.0 : 0.0;
    if (IS("power")) return pow(x, y);
  } else {
    if (IS("negate")) return -x;
    if (IS("abs")) return fabs(x);
    if (IS("exponential")) return exp(x);
    if (IS("log")) return log(x);
  }
#undef IS
  p->bad = TRUE;
  return 0.0;
}

static double r_expr(rparse *p, double a, double b) {
  r_ws(p);
  const char *s = p->s;
  size_t start = p->pos;
  if ((s[start] == 'a' || s[start] == 'b') && !g_ascii_isalnum(s[start + 1])) {
    p->pos++;
    return s[start] == 'a' ? a : b;
  }
  if (g_ascii_isdigit(s[start]) || s[start] == '-' || s[start] == '.') {
    char *end = NULL;
    double v = g_ascii_strtod(s + start, &end);
    if (end == s + start)
      p->bad = TRUE;
    p->pos = (size_t)(end - s);
    return v;
  }
  while (g_ascii_isalpha(s[p->pos]) || s[p->pos] == '-')
    p->pos++;
  size_t n = p->pos - start;
  if (n == 0 || s[p->pos] != '(') {
    p->bad = TRUE;
    return 0.0;
  }
  p->pos++;
  double x = r_expr(p, a, b), y = 0.0;
  int nargs = 1;
  r_ws(p);
  if (s[p->pos] == ',') {
    p->pos++;
    y = r_expr(p, a, b);
    nargs = 2;
    r_ws(p);
  }
  if (s[p->pos] != ')') {
    p->bad = TRUE;
    return 0.0;
  }
  p->pos++;
  return p->bad ? 0.0 : r_apply(s + start, n, nargs, x, y, p);
}

/* f(a, b) of the reducer TEXT; FALSE when the text is not the grammar. */
static gboolean reducer_apply(const char *text, double a, double b, double *out) {
  rparse p = {text, 0, FALSE};
  double v = r_expr(&p, a, b);
  r_ws(&p);
  if (p.bad || text[p.pos] != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean ev_reduce(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "operand");
  const sc_tvalue *init = ev_tensor(ev, "init_value");
  const char *text = ev_str(ev, "reducer", "");
  sc_tvalue *o = ev->out[0];
  int64_t dims[SC_MAX_RANK];
  int32_t nd = ev_ints(ev, "dimensions", dims, SC_MAX_RANK);
  gboolean red[SC_MAX_RANK] = {FALSE};
  for (int32_t i = 0; i < nd; i++)
    red[dims[i]] = TRUE;
  double probe;
  if (!reducer_apply(text, 0.0, 0.0, &probe))
    return ev_fail(ev, SC_INTERP_ERROR_INVALID, "reducer '%s' is not a reducer expression", text);
  for (int64_t k = 0; k < o->numel; k++)
    o->data[k] = init->data[0];
  if (x->numel == 0)
    return TRUE;
  /* output strides over the kept dims of x */
  int64_t os[SC_MAX_RANK], ostr[SC_MAX_RANK], idx[SC_MAX_RANK] = {0};
  tv_strides(o, ostr);
  for (uint32_t d = 0, j = 0; d < x->rank; d++)
    os[d] = red[d] ? 0 : ostr[j++];
  int64_t k = 0;
  do {
    int64_t off = 0;
    for (uint32_t d = 0; d < x->rank; d++)
      off += idx[d] * os[d];
    double v = 0.0;
    reducer_apply(text, o->data[off], x->data[k++], &v);
    o->data[off] = v;
  } while (tv_next(x->rank, x->dims, idx));
  return TRUE;
}

static uint64_t str_hash(const char *s) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (; *s; s++)
    h = sc_interp_hash64(h ^ (uint8_t)*s);
  return h;
}

/* A weight in [-1, 1) from a 64-bit hash. */
static double unit(uint64_t h) { return (double)(h >> 11) / 4503599627370496.0 - 1.0; }

static gboolean ev_custom_call(sc_ev *ev) {
  uint32_t n = 0;
  g_autofree const sc_tvalue **ins = ev_tensor_list(ev, "operands", &n);
  uint64_t key = str_hash(ev_str(ev, "target", "")) ^
                 sc_interp_hash64(str_hash(ev_str(ev, "backend_config", "")));
  sc_tvalue *o = ev->out[0];
  int64_t work = 0;
  for (uint32_t t = 0; t < n; t++)
    work += ins[t] ? ins[t]->numel : 0;
  if (work > 0 && o->numel > ev->max_elements / work)
    return ev_fail(ev, SC_INTERP_ERROR_LIMIT, "opaque custom call too large to evaluate "
                   "(%" G_GINT64_FORMAT " results x %" G_GINT64_FORMAT " operand elements)",
                   (gint64)o->numel, (gint64)work);
  for (int64_t k = 0; k < o->numel; k++) {
    uint64_t hk = sc_interp_hash64(key ^ (uint64_t)k);
    double acc = unit(hk);
    for (uint32_t t = 0; t < n; t++) {
      if (ins[t] == NULL)
        continue;
      uint64_t ht = sc_interp_hash64(hk + t + 1);
      for (int64_t m = 0; m < ins[t]->numel; m++)
        acc += ins[t]->data[m] * unit(sc_interp_hash64(ht ^ (uint64_t)m)) / (double)(work ? work : 1);
    }
    o->data[k] = tanh(acc);
  }
  return TRUE;
}

const sc_eval_entry sc_eval_hlo_table[] = {
    {"hlo.custom_call.default", ev_custom_call},
    {"hlo.dynamic_slice.default", ev_dynamic_slice},
    {"hlo.dynamic_update_slice.default", ev_dynamic_update_slice},
    {"hlo.reduce.default", ev_reduce},
    {NULL, NULL},
};
