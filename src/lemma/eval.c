/* eval.c — evaluation of conditions, computed attributes and declared
 * shape rules over symbolic sizes.
 *
 * Values are dims (sc_dim), shapes (also int lists), dtypes, truths,
 * tensor types and other bound values.  Comparisons of dims and shapes use
 * sym.h's three-valued answers; and/or/not are Kleene's, so UNKNOWN never
 * becomes YES.  Anything that cannot be evaluated (a type mismatch, a dim
 * out of range, a division by zero, an overflow of the symtab) makes
 * ev_eval return FALSE, and a condition that cannot be evaluated is NO.
 * vmin/vmax read a class's value range (lang.h); a missing bound is
 * EV_UNKNOWN, which arithmetic keeps and comparisons turn into UNKNOWN, so
 * a lemma whose range condition lacks a fact is counted as undecided.
 * Names are compared once, not per evaluation: calls dispatch on lx.fn
 * (ev_resolve, or resolved on first use), comparisons on the operator's
 * characters; lookups may use lx.slot (compile.c). */
#include "lemma/lemma-private.h"

#include <string.h>

static gboolean ev(const ev_env *env, const lx *e, ev_val *out);

/* Function codes of calls (lx.fn): 0 is "not resolved yet". */
enum {
  FN_UNRESOLVED = 0,
  FN_OTHER,
  FN_VMIN,
  FN_VMAX,
  FN_APPEND,
  FN_REMOVE,
  FN_BROADCAST,
  FN_LEN,
  FN_SIZE,
  FN_RANK,
  FN_NUMEL,
  FN_DTYPE,
  FN_SHAPE,
  FN_WITH_SIZE,
  FN_INDEXOF,
  FN_AT,
  FN_DIFFAT,
  FN_PROD,
  FN_CUTAT,
  FN_INSERT,
  FN_MIN,
  FN_MAX,
  FN_REDUCED,
  FN_REDUCED_BEFORE,
  FN_REDUCED_NUMEL,
  FN_UNITPERM,
  FN_PERMSHAPE,
  FN_UNITDROP,
  FN_UNITDROPPERM,
  FN_ONES,
};

static uint8_t fn_code(const char *f) {
  static const struct {
    const char *name;
    uint8_t code;
  } table[] = {
      {"vmin", FN_VMIN},       {"vmax", FN_VMAX},         {"append", FN_APPEND},
      {"remove", FN_REMOVE},   {"broadcast", FN_BROADCAST}, {"len", FN_LEN}, {"size", FN_SIZE},         {"rank", FN_RANK},
      {"numel", FN_NUMEL},     {"dtype", FN_DTYPE},       {"shape", FN_SHAPE},
      {"with_size", FN_WITH_SIZE}, {"indexof", FN_INDEXOF}, {"at", FN_AT},
      {"diffat", FN_DIFFAT},   {"prod", FN_PROD},         {"cutat", FN_CUTAT},
      {"insert", FN_INSERT},
      {"min", FN_MIN},         {"max", FN_MAX},
      {"reduced", FN_REDUCED}, {"reduced_before", FN_REDUCED_BEFORE},
      {"reduced_numel", FN_REDUCED_NUMEL},
      {"unitperm", FN_UNITPERM}, {"permshape", FN_PERMSHAPE},
      {"unitdrop", FN_UNITDROP}, {"unitdropperm", FN_UNITDROPPERM},
      {"ones", FN_ONES},
  };
  if (f == NULL)
    return FN_OTHER;
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++)
    if (strcmp(f, table[i].name) == 0)
      return table[i].code;
  return FN_OTHER;
}

/* The code of call E, resolved on first use when ev_resolve did not see
 * the tree (the cast: lx.fn is a cache of the text; no tree is const
 * storage) */
static inline uint8_t call_code(const lx *e) {
  if (e->fn == FN_UNRESOLVED)
    ((lx *)e)->fn = fn_code(e->text);
  return e->fn;
}

void ev_resolve(lx *e, const GPtrArray *names) {
  if (e == NULL)
    return;
  if (e->kind == LX_CALL)
    e->fn = fn_code(e->text);
  if (e->kind == LX_VAR && names != NULL) {
    e->slot = 0;
    e->slot_of = NULL;
    for (guint v = 0; v < names->len && e->slot == 0; v++)
      if (g_strcmp0(g_ptr_array_index(names, v), e->text) == 0) {
        e->slot = v + 1;
        e->slot_of = names;
      }
  }
  for (uint32_t i = 0; i < e->n; i++)
    ev_resolve(e->kids[i], names);
}

/* Comparison operators (lx.op), by their characters. */
typedef enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_DIV } cmp_code;

static cmp_code cmp_of(const char *op) {
  switch (op[0]) {
  case '=': return CMP_EQ;
  case '!': return CMP_NE;
  case '<': return op[1] == '=' ? CMP_LE : CMP_LT;
  case '>': return op[1] == '=' ? CMP_GE : CMP_GT;
  default: return CMP_DIV;
  }
}

static gboolean want_dim(const ev_env *env, const lx *e, sc_dim *out) {
  ev_val v;
  if (!ev(env, e, &v))
    return FALSE;
  if (v.kind == EV_DIM) {
    *out = v.d;
    return TRUE;
  }
  if (v.kind == EV_VALUE && v.v->kind == SC_VAL_INT) {
    *out = v.v->u.i;
    return TRUE;
  }
  if (v.kind == EV_VALUE && v.v->kind == SC_VAL_BOOL) {
    *out = sc_dim_const(v.v->u.b ? 1 : 0);
    return TRUE;
  }
  return FALSE;
}

static gboolean want_tensor(const ev_env *env, const lx *e, const sc_ttype **out) {
  ev_val v;
  if (!ev(env, e, &v) || v.kind != EV_TENSOR)
    return FALSE;
  *out = v.type;
  return TRUE;
}

/* V as a shape: a shape, or an int list of at most SC_MAX_RANK items. */
static gboolean shape_of(const ev_val *v, sc_shape *out) {
  if (v->kind == EV_SHAPE) {
    *out = v->shape;
    return TRUE;
  }
  if (v->kind == EV_VALUE && v->v->kind == SC_VAL_INT_LIST && v->v->u.ints.n <= SC_MAX_RANK) {
    out->rank = v->v->u.ints.n;
    for (uint32_t i = 0; i < out->rank; i++)
      out->dims[i] = v->v->u.ints.v[i];
    return TRUE;
  }
  return FALSE;
}

static gboolean want_shape(const ev_env *env, const lx *e, sc_shape *out) {
  ev_val v;
  return ev(env, e, &v) && shape_of(&v, out);
}

static gboolean want_truth(const ev_env *env, const lx *e, sc_truth *out) {
  ev_val v;
  if (!ev(env, e, &v))
    return FALSE;
  if (v.kind == EV_TRUTH) {
    *out = v.truth;
    return TRUE;
  }
  if (v.kind == EV_VALUE && v.v->kind == SC_VAL_BOOL) {
    *out = v.v->u.b ? SC_YES : SC_NO;
    return TRUE;
  }
  return FALSE;
}

/* An integer operand that may be unknown (EV_UNKNOWN: a missing value
 * range bound): 1 with *OUT set, 2 when unknown, 0 when it is not an
 * integer or cannot be evaluated. */
static int want_dim_or_unknown(const ev_env *env, const lx *e, sc_dim *out) {
  ev_val v;
  if (!ev(env, e, &v))
    return 0;
  if (v.kind == EV_UNKNOWN)
    return 2;
  if (v.kind == EV_DIM) {
    *out = v.d;
    return 1;
  }
  if (v.kind == EV_VALUE && v.v->kind == SC_VAL_INT) {
    *out = v.v->u.i;
    return 1;
  }
  if (v.kind == EV_VALUE && v.v->kind == SC_VAL_BOOL) {
    *out = sc_dim_const(v.v->u.b ? 1 : 0);
    return 1;
  }
  return 0;
}

/* A concrete number: a concrete dim, an int or a float value. */
static gboolean val_number(const ev_val *v, double *out) {
  if (v->kind == EV_DIM && sc_dim_is_const(v->d)) {
    *out = (double)v->d.value;
    return TRUE;
  }
  if (v->kind == EV_VALUE && v->v->kind == SC_VAL_INT && sc_dim_is_const(v->v->u.i)) {
    *out = (double)v->v->u.i.value;
    return TRUE;
  }
  if (v->kind == EV_VALUE && v->v->kind == SC_VAL_FLOAT) {
    *out = v->v->u.f;
    return TRUE;
  }
  return FALSE;
}

/* Value-range atoms (lang.h, value ranges): vmin(T) / vmax(T), the class's
 * bound or EV_UNKNOWN; an assumed bound that is read is recorded in the
 * tensor value's `assumed` array (set by the lookup).  Shape atoms:
 * append(SHAPE, N) is SHAPE with one more dim N; remove(SHAPE, D) is SHAPE
 * without dim D (negative D counts from the end). */
static gboolean reduced_call(const ev_env *env, const lx *e, uint8_t fn, ev_val *out);
static gboolean unitperm_call(const ev_env *env, const lx *e, uint8_t fn, ev_val *out);
static gboolean unitdrop_call(const ev_env *env, const lx *e, ev_val *out);
static gboolean range_call(const ev_env *env, const lx *e, uint8_t fn, ev_val *out,
                           gboolean *handled) {
  *handled = TRUE;
  if ((fn == FN_VMIN || fn == FN_VMAX) && e->n == 1) {
    ev_val t;
    if (!ev(env, e->kids[0], &t) || t.kind != EV_TENSOR)
      return FALSE;
    gboolean lo = fn == FN_VMIN;
    const sc_vrange *r = t.range;
    uint32_t src = r == NULL ? SC_VRANGE_NONE : lo ? r->lo_src : r->hi_src;
    if (src == SC_VRANGE_NONE) {
      out->kind = EV_UNKNOWN;
      return TRUE;
    }
    if (src != SC_VRANGE_FACT && t.assumed != NULL)
      g_array_append_val(t.assumed, src);
    out->kind = EV_DIM;
    out->d = lo ? r->lo : r->hi;
    return TRUE;
  }
  if (fn == FN_APPEND && e->n == 2) {
    sc_shape s;
    sc_dim n;
    if (!want_shape(env, e->kids[0], &s) || s.rank >= SC_MAX_RANK ||
        !want_dim(env, e->kids[1], &n))
      return FALSE;
    s.dims[s.rank++] = n;
    out->kind = EV_SHAPE;
    out->shape = s;
    return TRUE;
  }
  if (fn == FN_REMOVE && e->n == 2) {
    sc_shape s;
    sc_dim d;
    uint32_t k;
    if (!want_shape(env, e->kids[0], &s) || !want_dim(env, e->kids[1], &d) ||
        !sc_dim_is_const(d) || !sc_wrap_dim(d.value, s.rank, &k) || k >= s.rank)
      return FALSE;
    memmove(&s.dims[k], &s.dims[k + 1], (s.rank - k - 1) * sizeof s.dims[0]);
    s.rank--;
    out->kind = EV_SHAPE;
    out->shape = s;
    return TRUE;
  }
  if (fn == FN_ONES && e->n == 1) {
    /* ones(N): the shape of N dims of size 1 (N a concrete rank), the
     * shape a mask is viewed to before it is sized along one dim
     * (with_size(ones(rank(?g)), ?d, n)) */
    sc_dim n;
    if (!want_dim(env, e->kids[0], &n) || !sc_dim_is_const(n) || n.value < 0 ||
        n.value > SC_MAX_RANK)
      return FALSE;
    out->kind = EV_SHAPE;
    out->shape.rank = (uint32_t)n.value;
    memset(out->shape.dims, 0, sizeof out->shape.dims);
    for (uint32_t i = 0; i < out->shape.rank; i++)
      out->shape.dims[i] = sc_dim_const(1);
    return TRUE;
  }
  if (fn == FN_LEN && e->n == 1) {
    /* len(LIST): the number of entries of an int list or shape (the rank
     * of an expand or repeat target, which may exceed its operand's) */
    sc_shape s;
    if (!want_shape(env, e->kids[0], &s))
      return FALSE;
    out->kind = EV_DIM;
    out->d = sc_dim_const(s.rank);
    return TRUE;
  }
  if (fn == FN_BROADCAST && e->n == 2) {
    /* broadcast(A, B): the shape of an elementwise result of operands of
     * shapes A and B (dims aligned from the right; a pair is one dim when
     * identical normal forms, or the other one when one of them is the
     * constant 1).  Anything else cannot be evaluated: sizes that may
     * differ are never taken to broadcast. */
    sc_shape a, b;
    if (!want_shape(env, e->kids[0], &a) || !want_shape(env, e->kids[1], &b))
      return FALSE;
    sc_shape r;
    r.rank = a.rank > b.rank ? a.rank : b.rank;
    for (uint32_t i = 0; i < r.rank; i++) {
      gboolean ha = i < a.rank, hb = i < b.rank;
      sc_dim x = ha ? a.dims[a.rank - 1 - i] : sc_dim_const(1);
      sc_dim y = hb ? b.dims[b.rank - 1 - i] : sc_dim_const(1);
      sc_dim *o = &r.dims[r.rank - 1 - i];
      if (sc_dim_identical(x, y) || (sc_dim_is_const(y) && y.value == 1))
        *o = x;
      else if (sc_dim_is_const(x) && x.value == 1)
        *o = y;
      else
        return FALSE;
    }
    out->kind = EV_SHAPE;
    out->shape = r;
    return TRUE;
  }
  *handled = FALSE;
  return FALSE;
}

/* Dim D of a rank-R shape, wrapping negative dims. */
static gboolean dim_index(sc_dim d, uint32_t rank, uint32_t *out) {
  if (!sc_dim_is_const(d))
    return FALSE;
  return sc_wrap_dim(d.value, rank, out) && *out < rank;
}

static gboolean call(const ev_env *env, const lx *e, ev_val *out) {
  for (uint32_t i = 0; i < e->n; i++)
    if (e->keys[i] != NULL)
      return FALSE;
  uint8_t fn = call_code(e);
  gboolean handled;
  gboolean r = range_call(env, e, fn, out, &handled);
  if (handled)
    return r;
  if (fn == FN_SIZE && e->n == 2) {
    const sc_ttype *t;
    sc_dim d;
    uint32_t k;
    if (!want_tensor(env, e->kids[0], &t) || !want_dim(env, e->kids[1], &d) ||
        !dim_index(d, t->shape.rank, &k))
      return FALSE;
    out->kind = EV_DIM;
    out->d = t->shape.dims[k];
    return TRUE;
  }
  if (fn == FN_RANK && e->n == 1) {
    const sc_ttype *t;
    if (!want_tensor(env, e->kids[0], &t))
      return FALSE;
    out->kind = EV_DIM;
    out->d = sc_dim_const(t->shape.rank);
    return TRUE;
  }
  if (fn == FN_NUMEL && e->n == 1) {
    const sc_ttype *t;
    if (!want_tensor(env, e->kids[0], &t))
      return FALSE;
    sc_dim n = sc_dim_const(1);
    for (uint32_t i = 0; i < t->shape.rank; i++)
      n = sc_dim_mul(env->st, n, t->shape.dims[i]);
    out->kind = EV_DIM;
    out->d = n;
    return TRUE;
  }
  if (fn == FN_DTYPE && e->n == 1) {
    const sc_ttype *t;
    if (!want_tensor(env, e->kids[0], &t))
      return FALSE;
    out->kind = EV_DTYPE;
    out->dtype = t->dtype;
    return TRUE;
  }
  if (fn == FN_SHAPE && e->n == 1) {
    const sc_ttype *t;
    if (!want_tensor(env, e->kids[0], &t))
      return FALSE;
    out->kind = EV_SHAPE;
    out->shape = t->shape;
    return TRUE;
  }
  if (fn == FN_WITH_SIZE && e->n == 3) {
    sc_shape s;
    sc_dim d, n;
    uint32_t k;
    if (!want_shape(env, e->kids[0], &s) || !want_dim(env, e->kids[1], &d) ||
        !want_dim(env, e->kids[2], &n) || !dim_index(d, s.rank, &k))
      return FALSE;
    s.dims[k] = n;
    out->kind = EV_SHAPE;
    out->shape = s;
    return TRUE;
  }
  if (fn == FN_INDEXOF && e->n == 2) {
    sc_shape s;
    sc_dim d;
    if (!want_shape(env, e->kids[0], &s) || !want_dim(env, e->kids[1], &d))
      return FALSE;
    for (uint32_t i = 0; i < s.rank; i++)
      if (sc_dim_identical(s.dims[i], d)) {
        out->kind = EV_DIM;
        out->d = sc_dim_const(i);
        return TRUE;
      }
    return FALSE;
  }
  if (fn == FN_AT && e->n == 2) {
    /* at(LIST, I): entry I of an int list or shape (negative I counts from
     * the end, as in Python); out of range cannot be evaluated. */
    sc_shape s;
    sc_dim d;
    uint32_t k;
    if (!want_shape(env, e->kids[0], &s) || !want_dim(env, e->kids[1], &d) ||
        !dim_index(d, s.rank, &k))
      return FALSE;
    out->kind = EV_DIM;
    out->d = s.dims[k];
    return TRUE;
  }
  if ((fn == FN_REDUCED || fn == FN_REDUCED_BEFORE) && e->n == 3)
    return reduced_call(env, e, fn, out);
  if (fn == FN_REDUCED_NUMEL && e->n == 2)
    return reduced_call(env, e, fn, out);
  if (fn == FN_DIFFAT && e->n == 2) {
    /* diffat(A, B): the one index at which two lists of one length differ
     * (entries compared as normal forms); none, several or lengths that
     * differ cannot be evaluated.  How a lemma names the dim that a
     * required node changes (an expand to a smaller size along one dim). */
    sc_shape a, b;
    if (!want_shape(env, e->kids[0], &a) || !want_shape(env, e->kids[1], &b) || a.rank != b.rank)
      return FALSE;
    uint32_t found = UINT32_MAX;
    for (uint32_t i = 0; i < a.rank; i++)
      if (!sc_dim_identical(a.dims[i], b.dims[i])) {
        if (found != UINT32_MAX)
          return FALSE;
        found = i;
      }
    if (found == UINT32_MAX)
      return FALSE;
    out->kind = EV_DIM;
    out->d = sc_dim_const(found);
    return TRUE;
  }
  if (fn == FN_PROD && e->n == 3) {
    /* prod(LIST, I, J): the product of entries I..J-1 (1 when I == J);
     * 0 <= I <= J <= length, else it cannot be evaluated. */
    sc_shape s;
    sc_dim i, j;
    if (!want_shape(env, e->kids[0], &s) || !want_dim(env, e->kids[1], &i) ||
        !want_dim(env, e->kids[2], &j) || !sc_dim_is_const(i) || !sc_dim_is_const(j))
      return FALSE;
    int64_t lo = i.value, hi = j.value;
    if (lo < 0 || lo > hi || hi > (int64_t)s.rank)
      return FALSE;
    sc_dim p = sc_dim_const(1);
    for (int64_t k = lo; k < hi; k++)
      p = sc_dim_mul(env->st, p, s.dims[k]);
    out->kind = EV_DIM;
    out->d = p;
    return TRUE;
  }
  if (fn == FN_INSERT && e->n == 3) {
    /* insert(SHAPE, D, N): SHAPE with N inserted before entry D (0 <= D <=
     * length; negative D counts from the end of the result, as
     * unsqueeze's dim does: -1 appends). */
    sc_shape s;
    sc_dim d, n;
    if (!want_shape(env, e->kids[0], &s) || !want_dim(env, e->kids[1], &d) ||
        !want_dim(env, e->kids[2], &n) || !sc_dim_is_const(d) || s.rank >= SC_MAX_RANK)
      return FALSE;
    int64_t k = d.value < 0 ? d.value + (int64_t)s.rank + 1 : d.value;
    if (k < 0 || k > (int64_t)s.rank)
      return FALSE;
    for (int64_t i = (int64_t)s.rank; i > k; i--)
      s.dims[i] = s.dims[i - 1];
    s.dims[k] = n;
    s.rank++;
    out->kind = EV_SHAPE;
    out->shape = s;
    return TRUE;
  }
  if (fn == FN_CUTAT && e->n == 2) {
    /* cutat(LIST, P): the largest K < length with prod(LIST, 0, K) == P
     * (normal forms compared): the dim of a reshape target at which a
     * block of P leading elements ends.  None cannot be evaluated. */
    sc_shape s;
    sc_dim want;
    if (!want_shape(env, e->kids[0], &s) || !want_dim(env, e->kids[1], &want))
      return FALSE;
    sc_dim p = sc_dim_const(1);
    int64_t found = -1;
    for (uint32_t k = 0; k < s.rank; k++) {
      if (sc_dim_identical(p, want))
        found = k;
      p = sc_dim_mul(env->st, p, s.dims[k]);
    }
    if (found < 0)
      return FALSE;
    out->kind = EV_DIM;
    out->d = sc_dim_const(found);
    return TRUE;
  }
  if ((fn == FN_UNITPERM || fn == FN_PERMSHAPE || fn == FN_UNITDROPPERM) && e->n == 2)
    return unitperm_call(env, e, fn, out);
  if (fn == FN_UNITDROP && e->n == 1)
    return unitdrop_call(env, e, out);
  if ((fn == FN_MIN || fn == FN_MAX) && e->n == 2) {
    sc_dim a, b;
    if (!want_dim(env, e->kids[0], &a) || !want_dim(env, e->kids[1], &b))
      return FALSE;
    out->kind = EV_DIM;
    out->d = fn == FN_MIN ? sc_dim_min(env->st, a, b) : sc_dim_max(env->st, a, b);
    return TRUE;
  }
  return FALSE;
}

static gboolean dim_is_one(sc_dim d) { return sc_dim_is_const(d) && d.value == 1; }

/* Permutations and unit dims (layout-batched.lemma), P a permutation of
 * the dims of SHAPE (negative entries counting from the rank), else none
 * can be evaluated:
 *   permshape(SHAPE, P): SHAPE permuted by P;
 *   unitperm(SHAPE, P): the same, only when P moves dims of size 1 alone
 *     (the dims not known to be 1, read in P's order, keep their order: the
 *     permute keeps row-major order and is a view);
 *   unitdropperm(SHAPE, P): P restricted to the dims not known to be 1,
 *     renumbered 0.. in their order (the permutation of unitdrop(SHAPE)),
 *     only when SHAPE has a dim of size 1. */
static gboolean unitperm_call(const ev_env *env, const lx *e, uint8_t fn, ev_val *out) {
  sc_shape s, p;
  if (!want_shape(env, e->kids[0], &s) || !want_shape(env, e->kids[1], &p) || p.rank != s.rank)
    return FALSE;
  gboolean seen[SC_MAX_RANK] = {FALSE};
  int64_t newidx[SC_MAX_RANK];
  int64_t n_kept = 0;
  for (uint32_t k = 0; k < s.rank; k++)
    newidx[k] = dim_is_one(s.dims[k]) ? -1 : n_kept++;
  sc_shape r = {.rank = s.rank};
  sc_shape q = {.rank = 0};
  int64_t last = -1;
  gboolean ordered = TRUE;
  for (uint32_t i = 0; i < p.rank; i++) {
    if (!sc_dim_is_const(p.dims[i]))
      return FALSE;
    int64_t k = p.dims[i].value < 0 ? p.dims[i].value + (int64_t)s.rank : p.dims[i].value;
    if (k < 0 || k >= (int64_t)s.rank || seen[k])
      return FALSE;
    seen[k] = TRUE;
    r.dims[i] = s.dims[k];
    if (newidx[k] < 0)
      continue;
    q.dims[q.rank++] = sc_dim_const(newidx[k]);
    ordered = ordered && k > last;
    last = k;
  }
  if (fn == FN_UNITPERM && !ordered)
    return FALSE;
  if (fn == FN_UNITDROPPERM && n_kept == (int64_t)s.rank)
    return FALSE;
  out->kind = EV_SHAPE;
  out->shape = fn == FN_UNITDROPPERM ? q : r;
  return TRUE;
}

/* unitdrop(SHAPE): SHAPE without its dims of size 1, only when it has one. */
static gboolean unitdrop_call(const ev_env *env, const lx *e, ev_val *out) {
  sc_shape s;
  if (!want_shape(env, e->kids[0], &s))
    return FALSE;
  sc_shape r = {.rank = 0};
  for (uint32_t k = 0; k < s.rank; k++)
    if (!dim_is_one(s.dims[k]))
      r.dims[r.rank++] = s.dims[k];
  if (r.rank == s.rank)
    return FALSE;
  out->kind = EV_SHAPE;
  out->shape = r;
  return TRUE;
}

/* reduced(DIMS, D, RANK): 1 when a reduction over DIMS (an int list, an
 * int, None or [] for every dim; negative entries count from RANK) at rank
 * RANK reduces dim D (0 <= D < RANK), else 0.  reduced_before(DIMS, D,
 * RANK): how many distinct dims below D it reduces (the shift of dim D
 * when the reduced dims are dropped).  An entry out of range, a D out of
 * range or a symbolic number cannot be evaluated. */
/* The dims a reduction over DV (an int list, an int, None or [] for
 * every dim; negative entries count from RANK) reduces at rank RANK, as
 * RED[k]; FALSE when an entry is symbolic or out of range. */
static gboolean reduced_mask(const ev_val *dv, int64_t rank, gboolean red[SC_MAX_RANK]) {
  const sc_dim *v = NULL;
  uint32_t n = 0;
  sc_dim one;
  if (dv->kind == EV_VALUE && dv->v->kind == SC_VAL_NONE) {
    n = 0;
  } else if (dv->kind == EV_VALUE && dv->v->kind == SC_VAL_INT_LIST) {
    v = dv->v->u.ints.v;
    n = dv->v->u.ints.n;
  } else if (dv->kind == EV_VALUE && dv->v->kind == SC_VAL_INT) {
    one = dv->v->u.i;
    v = &one;
    n = 1;
  } else if (dv->kind == EV_DIM) {
    one = dv->d;
    v = &one;
    n = 1;
  } else if (dv->kind == EV_SHAPE) {
    v = dv->shape.dims;
    n = dv->shape.rank;
  } else {
    return FALSE;
  }
  for (int64_t k = 0; k < SC_MAX_RANK; k++)
    red[k] = n == 0 && k < rank;
  for (uint32_t i = 0; i < n; i++) {
    if (!sc_dim_is_const(v[i]))
      return FALSE;
    int64_t k = v[i].value < 0 ? v[i].value + rank : v[i].value;
    if (k < 0 || k >= rank)
      return FALSE;
    red[k] = TRUE;
  }
  return TRUE;
}

static gboolean reduced_call(const ev_env *env, const lx *e, uint8_t fn, ev_val *out) {
  ev_val dv;
  gboolean red[SC_MAX_RANK];
  if (fn == FN_REDUCED_NUMEL) {
    /* reduced_numel(DIMS, SHAPE): the product of the sizes of SHAPE's
     * dims that DIMS reduces (the element count each result of a mean
     * averages) */
    sc_shape s;
    if (!ev(env, e->kids[0], &dv) || !want_shape(env, e->kids[1], &s) ||
        !reduced_mask(&dv, s.rank, red))
      return FALSE;
    sc_dim p = sc_dim_const(1);
    for (uint32_t k = 0; k < s.rank; k++)
      if (red[k])
        p = sc_dim_mul(env->st, p, s.dims[k]);
    out->kind = EV_DIM;
    out->d = p;
    return TRUE;
  }
  sc_dim d, r;
  if (!ev(env, e->kids[0], &dv) || !want_dim(env, e->kids[1], &d) ||
      !want_dim(env, e->kids[2], &r) || !sc_dim_is_const(d) || !sc_dim_is_const(r) ||
      r.value < 0 || r.value > SC_MAX_RANK || d.value < 0 || d.value >= r.value ||
      !reduced_mask(&dv, r.value, red))
    return FALSE;
  int64_t count = 0;
  if (fn == FN_REDUCED) {
    count = red[d.value] ? 1 : 0;
  } else {
    for (int64_t k = 0; k < d.value; k++)
      count += red[k];
  }
  out->kind = EV_DIM;
  out->d = sc_dim_const(count);
  return TRUE;
}

static sc_truth t_not(sc_truth a) { return a == SC_UNKNOWN ? SC_UNKNOWN : a == SC_YES ? SC_NO : SC_YES; }

static gboolean compare(const ev_env *env, const lx *e, ev_val *out) {
  cmp_code op = cmp_of(e->op);
  out->kind = EV_TRUTH;
  if (op == CMP_DIV) {
    sc_dim a, b;
    if (!want_dim(env, e->kids[0], &a) || !want_dim(env, e->kids[1], &b))
      return FALSE;
    if (sc_dim_is_const(a) && a.value == 0)
      return FALSE;
    out->truth = sc_dim_divides(env->st, a, b);
    return TRUE;
  }
  ev_val a, b;
  if (!ev(env, e->kids[0], &a) || !ev(env, e->kids[1], &b))
    return FALSE;
  gboolean eqne = op == CMP_EQ || op == CMP_NE;
  {
    /* an unknown integer (a missing value bound) against an integer: the
     * comparison is UNKNOWN; a float against a number: compared as
     * numbers ("?v == 0" holds for a fill value of 0.0) */
    gboolean ua = a.kind == EV_UNKNOWN, ub = b.kind == EV_UNKNOWN;
    gboolean ia = ua || a.kind == EV_DIM || (a.kind == EV_VALUE && a.v->kind == SC_VAL_INT);
    gboolean ib = ub || b.kind == EV_DIM || (b.kind == EV_VALUE && b.v->kind == SC_VAL_INT);
    if (ua || ub) {
      if (!ia || !ib)
        return FALSE;
      out->truth = SC_UNKNOWN;
      return TRUE;
    }
    double x, y;
    gboolean fa = a.kind == EV_VALUE && a.v->kind == SC_VAL_FLOAT;
    gboolean fb = b.kind == EV_VALUE && b.v->kind == SC_VAL_FLOAT;
    if ((fa || fb) && val_number(&a, &x) && val_number(&b, &y)) {
      gboolean t = op == CMP_EQ   ? x == y
                   : op == CMP_NE ? x != y
                   : op == CMP_LT ? x < y
                   : op == CMP_LE ? x <= y
                   : op == CMP_GT ? x > y
                                  : x >= y;
      out->truth = t ? SC_YES : SC_NO;
      return TRUE;
    }
  }
  sc_dim da, db;
  gboolean a_dim = a.kind == EV_DIM || (a.kind == EV_VALUE && a.v->kind == SC_VAL_INT);
  gboolean b_dim = b.kind == EV_DIM || (b.kind == EV_VALUE && b.v->kind == SC_VAL_INT);
  if (a_dim && b_dim) {
    da = a.kind == EV_DIM ? a.d : a.v->u.i;
    db = b.kind == EV_DIM ? b.d : b.v->u.i;
    sc_truth t;
    if (op == CMP_EQ)
      t = sc_dim_eq(env->st, da, db);
    else if (op == CMP_NE)
      t = t_not(sc_dim_eq(env->st, da, db));
    else if (op == CMP_LT)
      t = sc_dim_lt(env->st, da, db);
    else if (op == CMP_LE)
      t = sc_dim_le(env->st, da, db);
    else if (op == CMP_GT)
      t = sc_dim_lt(env->st, db, da);
    else
      t = sc_dim_le(env->st, db, da);
    out->truth = t;
    return TRUE;
  }
  if (!eqne)
    return FALSE;
  sc_truth t;
  gboolean a_shape = a.kind == EV_SHAPE || (a.kind == EV_VALUE && a.v->kind == SC_VAL_INT_LIST);
  gboolean b_shape = b.kind == EV_SHAPE || (b.kind == EV_VALUE && b.v->kind == SC_VAL_INT_LIST);
  if (a_shape && b_shape) {
    /* the operands as want_shape reads them, from the values at hand (an
     * evaluation is a pure function of the match) */
    sc_shape sa, sb;
    if (!shape_of(&a, &sa) || !shape_of(&b, &sb))
      return FALSE;
    t = sc_shape_same(env->st, &sa, &sb);
  } else if ((a.kind == EV_DTYPE || (a.kind == EV_VALUE && a.v->kind == SC_VAL_DTYPE)) &&
             (b.kind == EV_DTYPE || (b.kind == EV_VALUE && b.v->kind == SC_VAL_DTYPE))) {
    sc_dtype x = a.kind == EV_DTYPE ? a.dtype : a.v->u.dtype;
    sc_dtype y = b.kind == EV_DTYPE ? b.dtype : b.v->u.dtype;
    t = x == y ? SC_YES : SC_NO;
  } else if (a.kind == EV_VALUE && b.kind == EV_VALUE) {
    t = sc_value_equal(a.v, b.v) ? SC_YES : SC_NO;
  } else if (a.kind == EV_TRUTH && b.kind == EV_TRUTH) {
    t = (a.truth == SC_UNKNOWN || b.truth == SC_UNKNOWN) ? SC_UNKNOWN
        : a.truth == b.truth                             ? SC_YES
                                                         : SC_NO;
  } else {
    return FALSE;
  }
  out->truth = op == CMP_NE ? t_not(t) : t;
  return TRUE;
}

static gboolean ev(const ev_env *env, const lx *e, ev_val *out) {
  /* every field but the shape (large, and read only when the kind says
   * EV_SHAPE, which always comes with its rank and dims set) */
  out->kind = EV_DIM;
  out->d = sc_dim_const(0);
  out->shape.rank = 0;
  out->dtype = 0;
  out->truth = (sc_truth)0;
  out->type = NULL;
  out->v = NULL;
  out->range = NULL;
  out->assumed = NULL;
  switch (e->kind) {
  case LX_INT:
    out->kind = EV_DIM;
    out->d = sc_dim_const(e->ival);
    return TRUE;
  case LX_VAR:
    return env->lookup(env->env, e, out);
  case LX_NAME: {
    sc_dtype dt;
    if (env->lookup != NULL && env->lookup(env->env, e, out))
      return TRUE;
    if (sc_dtype_from_name(e->text, &dt)) {
      out->kind = EV_DTYPE;
      out->dtype = dt;
      return TRUE;
    }
    if (strcmp(e->text, "True") == 0 || strcmp(e->text, "False") == 0) {
      out->kind = EV_TRUTH;
      out->truth = e->text[0] == 'T' ? SC_YES : SC_NO;
      return TRUE;
    }
    return FALSE;
  }
  case LX_LIST: {
    if (e->n > SC_MAX_RANK)
      return FALSE;
    out->kind = EV_SHAPE;
    out->shape.rank = e->n;
    /* the dims past the rank zeroed, as a cleared result had them */
    memset(out->shape.dims + e->n, 0, (SC_MAX_RANK - e->n) * sizeof out->shape.dims[0]);
    for (uint32_t i = 0; i < e->n; i++)
      if (!want_dim(env, e->kids[i], &out->shape.dims[i]))
        return FALSE;
    out->kind = EV_SHAPE;
    return TRUE;
  }
  case LX_CALL:
    return call(env, e, out);
  case LX_NEG: {
    sc_dim a;
    int ka = want_dim_or_unknown(env, e->kids[0], &a);
    if (ka == 2) {
      out->kind = EV_UNKNOWN;
      return TRUE;
    }
    if (ka == 0)
      return FALSE;
    out->kind = EV_DIM;
    out->d = sc_dim_neg(env->st, a);
    return TRUE;
  }
  case LX_BIN: {
    sc_dim a, b;
    int ka = want_dim_or_unknown(env, e->kids[0], &a);
    int kb = ka ? want_dim_or_unknown(env, e->kids[1], &b) : 0;
    if (ka == 0 || kb == 0)
      return FALSE;
    if (ka == 2 || kb == 2) {
      out->kind = EV_UNKNOWN;
      return TRUE;
    }
    out->kind = EV_DIM;
    switch (e->op[0]) {
    case '+': out->d = sc_dim_add(env->st, a, b); return TRUE;
    case '-': out->d = sc_dim_sub(env->st, a, b); return TRUE;
    case '*': out->d = sc_dim_mul(env->st, a, b); return TRUE;
    case '/': return sc_dim_floordiv(env->st, a, b, &out->d);
    case '%': return sc_dim_mod(env->st, a, b, &out->d);
    default: return FALSE;
    }
  }
  case LX_CMP:
    return compare(env, e, out);
  case LX_NOT: {
    sc_truth a;
    if (!want_truth(env, e->kids[0], &a))
      return FALSE;
    out->kind = EV_TRUTH;
    out->truth = t_not(a);
    return TRUE;
  }
  case LX_AND:
  case LX_OR: {
    sc_truth a, b;
    if (!want_truth(env, e->kids[0], &a))
      return FALSE;
    /* Short-circuit on a decided side (so that `rank(?x) > 1 and
     * size(?x, 1) == 4` does not evaluate size of a rank-1 tensor). */
    if (e->kind == LX_AND && a == SC_NO) {
      out->kind = EV_TRUTH;
      out->truth = SC_NO;
      return TRUE;
    }
    if (e->kind == LX_OR && a == SC_YES) {
      out->kind = EV_TRUTH;
      out->truth = SC_YES;
      return TRUE;
    }
    if (!want_truth(env, e->kids[1], &b))
      b = e->kind == LX_AND ? SC_NO : SC_UNKNOWN;
    out->kind = EV_TRUTH;
    if (e->kind == LX_AND)
      out->truth = (a == SC_NO || b == SC_NO)     ? SC_NO
                   : (a == SC_YES && b == SC_YES) ? SC_YES
                                                  : SC_UNKNOWN;
    else
      out->truth = (a == SC_YES || b == SC_YES) ? SC_YES
                   : (a == SC_NO && b == SC_NO) ? SC_NO
                                                : SC_UNKNOWN;
    return TRUE;
  }
  case LX_FLOAT:
  case LX_STR:
  case LX_WILD:
    return FALSE;
  }
  return FALSE;
}

gboolean ev_eval(const ev_env *env, const lx *e, ev_val *out) {
  gboolean was = sc_symtab_overflowed(env->st);
  sc_symtab_clear_overflow(env->st);
  gboolean ok = ev(env, e, out);
  if (sc_symtab_overflowed(env->st))
    ok = FALSE;
  sc_symtab_clear_overflow(env->st);
  if (was) {
    /* restore the caller's sticky flag */
    sc_dim big = sc_dim_const(INT64_MAX);
    (void)sc_dim_add(env->st, big, big);
  }
  return ok;
}

sc_truth ev_condition(const ev_env *env, const lx *cond) {
  ev_val v;
  if (!ev_eval(env, cond, &v))
    return SC_NO;
  if (v.kind == EV_TRUTH)
    return v.truth;
  if (v.kind == EV_VALUE && v.v->kind == SC_VAL_BOOL)
    return v.v->u.b ? SC_YES : SC_NO;
  return SC_NO;
}

/* ---- undecided comparisons, as text (reports) ---- */

/* Value of E as text: a dim printed in the symtab's syntax, else the
 * expression as written. */
static void append_operand(GString *out, const ev_env *env, const lx *e) {
  sc_dim d;
  if (want_dim(env, e, &d)) {
    g_autofree char *t = sc_dim_to_string(env->st, d);
    g_string_append(out, t);
  } else {
    lx_append(out, e);
  }
}

/* Collects the comparisons of COND that are UNKNOWN, instantiated. */
static void collect_undecided(const ev_env *env, const lx *cond, GString *out) {
  switch (cond->kind) {
  case LX_AND:
  case LX_OR: {
    /* As ev() evaluates them: the right side is not reached when the
     * left one decides (and then neither side is the reason). */
    sc_truth a;
    if (!want_truth(env, cond->kids[0], &a) || (cond->kind == LX_AND && a == SC_NO) ||
        (cond->kind == LX_OR && a == SC_YES))
      return;
    collect_undecided(env, cond->kids[0], out);
    collect_undecided(env, cond->kids[1], out);
    return;
  }
  case LX_NOT:
    collect_undecided(env, cond->kids[0], out);
    return;
  case LX_CMP: {
    ev_val v;
    if (!ev(env, cond, &v) || v.kind != EV_TRUTH || v.truth != SC_UNKNOWN)
      return;
    if (out->len)
      g_string_append(out, ", ");
    if (strcmp(cond->op, "d") == 0) {
      append_operand(out, env, cond->kids[0]);
      g_string_append(out, " divides ");
      append_operand(out, env, cond->kids[1]);
    } else {
      append_operand(out, env, cond->kids[0]);
      g_string_append_printf(out, " %s ", cond->op);
      append_operand(out, env, cond->kids[1]);
    }
    return;
  }
  default:
    return;
  }
}

char *ev_undecided_text(const ev_env *env, const lx *cond) {
  if (cond == NULL)
    return NULL;
  gboolean was = sc_symtab_overflowed(env->st);
  GString *out = g_string_new(NULL);
  collect_undecided(env, cond, out);
  if (!was)
    sc_symtab_clear_overflow(env->st);
  if (out->len == 0) {
    g_string_free(out, TRUE);
    return NULL;
  }
  return g_string_free(out, FALSE);
}

gboolean ev_to_value(const ev_val *v, const sc_arg *arg, sc_value *out) {
  switch (arg->type) {
  case SC_ARG_INT:
  case SC_ARG_SCALAR:
    if (v->kind == EV_DIM) {
      *out = sc_value_dim(v->d);
      return TRUE;
    }
    break;
  case SC_ARG_INT_LIST:
    if (v->kind == EV_SHAPE) {
      out->kind = SC_VAL_INT_LIST;
      out->u.ints.n = v->shape.rank;
      out->u.ints.v = g_new(sc_dim, v->shape.rank ? v->shape.rank : 1);
      for (uint32_t i = 0; i < v->shape.rank; i++)
        out->u.ints.v[i] = v->shape.dims[i];
      return TRUE;
    }
    if (v->kind == EV_DIM && arg->fixed_len > 0) {
      out->kind = SC_VAL_INT_LIST;
      out->u.ints.n = arg->fixed_len;
      out->u.ints.v = g_new(sc_dim, arg->fixed_len);
      for (uint32_t i = 0; i < arg->fixed_len; i++)
        out->u.ints.v[i] = v->d;
      return TRUE;
    }
    break;
  case SC_ARG_DTYPE:
    if (v->kind == EV_DTYPE) {
      out->kind = SC_VAL_DTYPE;
      out->u.dtype = v->dtype;
      return TRUE;
    }
    break;
  case SC_ARG_BOOL:
    if (v->kind == EV_TRUTH && v->truth != SC_UNKNOWN) {
      *out = sc_value_bool(v->truth == SC_YES);
      return TRUE;
    }
    break;
  default:
    break;
  }
  if (v->kind == EV_VALUE) {
    sc_value_copy(out, v->v);
    return TRUE;
  }
  return FALSE;
}
