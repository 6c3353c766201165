/* eval-common.c — helpers shared by the evaluator files: argument access by
 * schema name, errors prefixed with the operator's qualified name, strides
 * and row-major iteration.  Everything borrows; nothing here allocates
 * except ev_new and ev_tensor_list. */
#include "interp/interp-private.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>

void ev_set_error(sc_ev *ev, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(ev->error, SC_INTERP_ERROR, code, "%s: %s", ev->op->qualname, msg);
}

const sc_value *ev_arg(const sc_ev *ev, const char *name) {
  int32_t i = sc_ops_arg_index(ev->op, name);
  if (i < 0)
    return NULL;
  return &ev->args[i];
}

gboolean ev_has(const sc_ev *ev, const char *name) {
  const sc_value *v = ev_arg(ev, name);
  return v != NULL && v->kind != SC_VAL_NONE;
}

const sc_tvalue *ev_tensor(const sc_ev *ev, const char *name) {
  const sc_value *v = ev_arg(ev, name);
  if (v == NULL || v->kind != SC_VAL_TENSOR || v->u.tensor >= ev->n_tensors)
    return NULL;
  return ev->tensors[v->u.tensor];
}

int64_t ev_int(const sc_ev *ev, const char *name, int64_t dflt) {
  const sc_value *v = ev_arg(ev, name);
  if (v == NULL)
    return dflt;
  switch (v->kind) {
  case SC_VAL_INT: return v->u.i.value;
  case SC_VAL_BOOL: return v->u.b ? 1 : 0;
  case SC_VAL_FLOAT: return fabs(v->u.f) < 9.2e18 ? (int64_t)v->u.f : dflt;
  case SC_VAL_INT_LIST: return v->u.ints.n > 0 ? v->u.ints.v[0].value : dflt;
  default: return dflt;
  }
}

double ev_num(const sc_ev *ev, const char *name, double dflt) {
  const sc_value *v = ev_arg(ev, name);
  if (v == NULL)
    return dflt;
  switch (v->kind) {
  case SC_VAL_INT: return (double)v->u.i.value;
  case SC_VAL_BOOL: return v->u.b ? 1.0 : 0.0;
  case SC_VAL_FLOAT: return v->u.f;
  default: return dflt;
  }
}

gboolean ev_bool(const sc_ev *ev, const char *name, gboolean dflt) {
  const sc_value *v = ev_arg(ev, name);
  if (v == NULL)
    return dflt;
  switch (v->kind) {
  case SC_VAL_BOOL: return v->u.b;
  case SC_VAL_INT: return v->u.i.value != 0;
  default: return dflt;
  }
}

const char *ev_str(const sc_ev *ev, const char *name, const char *dflt) {
  const sc_value *v = ev_arg(ev, name);
  if (v == NULL || v->kind != SC_VAL_STR)
    return dflt;
  return v->u.s;
}

int32_t ev_ints(const sc_ev *ev, const char *name, int64_t *out, uint32_t max) {
  const sc_value *v = ev_arg(ev, name);
  if (v == NULL)
    return -1;
  if (v->kind == SC_VAL_INT) {
    if (max > 0)
      out[0] = v->u.i.value;
    return 1;
  }
  if (v->kind != SC_VAL_INT_LIST)
    return -1;
  for (uint32_t i = 0; i < v->u.ints.n && i < max; i++)
    out[i] = v->u.ints.v[i].value;
  return (int32_t)MIN(v->u.ints.n, (uint32_t)INT32_MAX);
}

const sc_tvalue **ev_tensor_list(const sc_ev *ev, const char *name, uint32_t *n) {
  const sc_value *v = ev_arg(ev, name);
  *n = 0;
  if (v == NULL)
    return g_new0(const sc_tvalue *, 1);
  if (v->kind == SC_VAL_TENSOR) {
    const sc_tvalue **a = g_new0(const sc_tvalue *, 1);
    a[0] = v->u.tensor < ev->n_tensors ? ev->tensors[v->u.tensor] : NULL;
    *n = 1;
    return a;
  }
  if (v->kind != SC_VAL_TENSOR_LIST)
    return g_new0(const sc_tvalue *, 1);
  const sc_tvalue **a = g_new0(const sc_tvalue *, v->u.list.n + 1);
  for (uint32_t i = 0; i < v->u.list.n; i++) {
    sc_id id = v->u.list.ids[i];
    a[i] = id < ev->n_tensors ? ev->tensors[id] : NULL;
  }
  *n = v->u.list.n;
  return a;
}

uint32_t ev_wrap(int64_t dim, uint32_t rank) {
  uint32_t out = 0;
  if (!sc_wrap_dim(dim, rank, &out))
    return 0;
  return out;
}

sc_tvalue *ev_new(sc_ev *ev, sc_dtype dt, uint32_t rank, const int64_t *dims) {
  GError *local = NULL;
  sc_tvalue *v = sc_tvalue_new(dt, rank, dims, ev->max_elements, &local);
  if (v == NULL) {
    ev_set_error(ev, local->code, "%s", local->message);
    g_error_free(local);
  }
  return v;
}

void tv_strides(const sc_tvalue *v, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = (int32_t)v->rank - 1; d >= 0; d--) {
    strides[d] = s;
    s *= v->dims[d];
  }
}

void tv_bstrides(const sc_tvalue *in, uint32_t rank, const int64_t *dims, int64_t *strides) {
  int64_t own[SC_MAX_RANK];
  tv_strides(in, own);
  for (uint32_t d = 0; d < rank; d++) {
    int32_t k = (int32_t)d - (int32_t)(rank - in->rank);
    if (k < 0 || (in->dims[k] == 1 && dims[d] != 1))
      strides[d] = 0;
    else
      strides[d] = own[k];
  }
}

gboolean tv_next(uint32_t rank, const int64_t *dims, int64_t *idx) {
  for (int32_t d = (int32_t)rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d])
      return TRUE;
    idx[d] = 0;
  }
  return FALSE;
}

int64_t *tv_reduce_map(const sc_tvalue *x, const gboolean *mask, int64_t *n_out) {
  int64_t ostr[SC_MAX_RANK], s = 1;
  for (int32_t d = (int32_t)x->rank - 1; d >= 0; d--) {
    ostr[d] = mask[d] ? 0 : s;
    if (!mask[d])
      s *= x->dims[d];
  }
  *n_out = s;
  int64_t *map = g_new(int64_t, ev_buf_len(x->numel));
  int64_t idx[SC_MAX_RANK] = {0};
  for (int64_t k = 0; k < x->numel; k++) {
    int64_t o = 0;
    for (uint32_t d = 0; d < x->rank; d++)
      o += idx[d] * ostr[d];
    map[k] = o;
    tv_next(x->rank, x->dims, idx);
  }
  return map;
}

double ev_reduce_dtype_eps(sc_dtype dt) {
  switch (dt) {
  case SC_DTYPE_F64: return DBL_EPSILON;
  case SC_DTYPE_F16: return 0.0009765625;
  case SC_DTYPE_BF16: return 0.0078125;
  default: return FLT_EPSILON;
  }
}

/* A tensor argument, or a Scalar one as a 0-dim value kept in *HOLD. */
const sc_tvalue *ev_operand(sc_ev *ev, const char *name, sc_tvalue **hold) {
  const sc_tvalue *t = ev_tensor(ev, name);
  if (t != NULL)
    return t;
  const sc_value *v = ev_arg(ev, name);
  sc_dtype dt = v != NULL && v->kind == SC_VAL_FLOAT ? SC_DTYPE_F64 : SC_DTYPE_I64;
  if (v != NULL && v->kind == SC_VAL_BOOL)
    dt = SC_DTYPE_BOOL;
  *hold = sc_tvalue_new(dt, 0, NULL, 1, NULL);
  (*hold)->data[0] = ev_num(ev, name, 0);
  return *hold;
}
