/* tvalue.c — concrete tensor values of the interpreter: creation with
 * checked sizes, rounding to a dtype, printing, comparison with a
 * tolerance, the empty() fill pattern, the seeded RNG (xoshiro256**,
 * seeded through splitmix64) and random inputs.
 *
 * Invariants: numel == product of dims (1 for rank 0), data holds numel
 * doubles (NULL when numel == 0); an integral or bool value holds integers
 * of magnitude <= 2^53 only after sc_tvalue_round_to_dtype. */
#include "interp/interp-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(sc-interp-error-quark, sc_interp_error)

int64_t sc_interp_max_elements(const sc_interp_config *cfg) {
  if (cfg != NULL && cfg->max_elements > 0)
    return cfg->max_elements;
  const char *env = g_getenv("SC_INTERP_MAX_ELEMENTS");
  if (env != NULL) {
    gint64 v = g_ascii_strtoll(env, NULL, 10);
    if (v > 0)
      return v;
  }
  return SC_INTERP_DEFAULT_MAX_ELEMENTS;
}

sc_tvalue *sc_tvalue_new(sc_dtype dtype, uint32_t rank, const int64_t *dims,
                         int64_t max_elements, GError **error) {
  if (rank > SC_MAX_RANK) {
    g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INVALID,
                "rank %u exceeds the maximum %d", rank, SC_MAX_RANK);
    return NULL;
  }
  if (max_elements <= 0)
    max_elements = sc_interp_max_elements(NULL);
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) {
    if (dims[i] < 0) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INVALID,
                  "negative size %" G_GINT64_FORMAT " in dim %u", (gint64)dims[i], i);
      return NULL;
    }
    if (__builtin_mul_overflow(n, dims[i], &n) || n > max_elements) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_LIMIT,
                  "a tensor of more than %" G_GINT64_FORMAT
                  " elements is too large for the interpreter",
                  (gint64)max_elements);
      return NULL;
    }
  }
  sc_tvalue *v = g_new0(sc_tvalue, 1);
  v->dtype = dtype;
  v->rank = rank;
  for (uint32_t i = 0; i < rank; i++)
    v->dims[i] = dims[i];
  v->numel = n;
  v->data = n > 0 ? g_new0(double, (gsize)n) : NULL;
  return v;
}

sc_tvalue *sc_tvalue_new_from(sc_dtype dtype, uint32_t rank, const int64_t *dims,
                              const double *data, GError **error) {
  sc_tvalue *v = sc_tvalue_new(dtype, rank, dims, INT64_MAX, error);
  if (v == NULL)
    return NULL;
  if (v->numel > 0)
    memcpy(v->data, data, sizeof(double) * (size_t)v->numel);
  if (!sc_tvalue_round_to_dtype(v, error)) {
    sc_tvalue_free(v);
    return NULL;
  }
  return v;
}

sc_tvalue *sc_tvalue_new_scalar(sc_dtype dtype, double x) {
  sc_tvalue *v = sc_tvalue_new(dtype, 0, NULL, 1, NULL);
  v->data[0] = x;
  if (!sc_tvalue_round_to_dtype(v, NULL))
    v->data[0] = 0;
  return v;
}

sc_tvalue *sc_tvalue_copy(const sc_tvalue *v) {
  sc_tvalue *c = g_new0(sc_tvalue, 1);
  *c = *v;
  c->data = v->numel > 0 ? g_memdup2(v->data, sizeof(double) * (size_t)v->numel) : NULL;
  return c;
}

void sc_tvalue_free(sc_tvalue *v) {
  if (v == NULL)
    return;
  g_free(v->data);
  g_free(v);
}

sc_ttype sc_tvalue_ttype(const sc_tvalue *v) {
  sc_ttype t;
  t.shape = sc_shape_of(v->rank, v->dims);
  t.dtype = v->dtype;
  return t;
}

int64_t sc_tvalue_offset(const sc_tvalue *v, const int64_t *idx) {
  int64_t off = 0;
  for (uint32_t i = 0; i < v->rank; i++)
    off = off * v->dims[i] + idx[i];
  return off;
}

/* ---- rounding ------------------------------------------------------------- */

gboolean sc_interp_round_one(sc_dtype dt, double x, double *out) {
  if (sc_dtype_is_floating(dt)) {
    *out = x;
    return TRUE;
  }
  if (dt == SC_DTYPE_BOOL) {
    *out = x != 0 ? 1.0 : 0.0; /* NaN is true, as in C++ */
    return TRUE;
  }
  if (!isfinite(x))
    return FALSE;
  double t = trunc(x);
  if (fabs(t) > SC_INTERP_MAX_EXACT_INT)
    return FALSE;
  int64_t i = (int64_t)t;
  switch (dt) {
  case SC_DTYPE_I32: i = (int64_t)(int32_t)(uint32_t)(uint64_t)i; break;
  case SC_DTYPE_I8: i = (int64_t)(int8_t)(uint8_t)(uint64_t)i; break;
  case SC_DTYPE_U8: i = (int64_t)(uint8_t)(uint64_t)i; break;
  default: break;
  }
  *out = (double)i;
  return TRUE;
}

gboolean sc_tvalue_round_to_dtype(sc_tvalue *v, GError **error) {
  for (int64_t i = 0; i < v->numel; i++) {
    double r;
    if (!sc_interp_round_one(v->dtype, v->data[i], &r)) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_RANGE,
                  "element %" G_GINT64_FORMAT " (%.17g) cannot be represented exactly as %s "
                  "(integers are exact only up to 2^53; NaN and infinities have no integer value)",
                  (gint64)i, v->data[i], sc_dtype_name(v->dtype));
      return FALSE;
    }
    v->data[i] = r;
  }
  return TRUE;
}

/* ---- the empty() pattern ------------------------------------------------- */

#define SC_EMPTY_NAN_BITS 0x7ff80000005cdeadULL

double sc_interp_empty_fill(sc_dtype dtype) {
  if (sc_dtype_is_floating(dtype)) {
    uint64_t bits = SC_EMPTY_NAN_BITS;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  switch (dtype) {
  case SC_DTYPE_BOOL: return 1.0;
  case SC_DTYPE_U8: return 173.0;
  case SC_DTYPE_I8: return -83.0;
  default: return -6086317.0;
  }
}

int64_t sc_tvalue_count_empty_marks(const sc_tvalue *v) {
  int64_t n = 0;
  for (int64_t i = 0; i < v->numel; i++) {
    uint64_t bits;
    memcpy(&bits, &v->data[i], sizeof bits);
    /* the payload, whatever the sign and quiet bit */
    if (isnan(v->data[i]) && (bits & 0x0007ffffffffffffULL) == (SC_EMPTY_NAN_BITS & 0x0007ffffffffffffULL))
      n++;
  }
  return n;
}

/* ---- printing -------------------------------------------------------------- */

static void append_number(GString *s, sc_dtype dt, double x) {
  if (dt == SC_DTYPE_BOOL) {
    g_string_append(s, x != 0 ? "True" : "False");
  } else if (isnan(x)) {
    g_string_append(s, "nan");
  } else if (isinf(x)) {
    g_string_append(s, x > 0 ? "inf" : "-inf");
  } else {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.10g", x);
    g_string_append(s, buf);
  }
}

char *sc_tvalue_to_string(const sc_tvalue *v, uint32_t max_shown) {
  if (max_shown == 0)
    max_shown = 64;
  GString *s = g_string_new(sc_dtype_name(v->dtype));
  g_string_append_c(s, '[');
  for (uint32_t i = 0; i < v->rank; i++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", (gint64)v->dims[i]);
  g_string_append(s, "] ");
  if (v->rank == 0) {
    append_number(s, v->dtype, v->data[0]);
    return g_string_free(s, FALSE);
  }
  if (v->numel > (int64_t)max_shown) {
    g_string_append_c(s, '[');
    for (uint32_t i = 0; i < max_shown; i++) {
      if (i)
        g_string_append(s, ", ");
      append_number(s, v->dtype, v->data[i]);
    }
    g_string_append(s, ", ...]");
    return g_string_free(s, FALSE);
  }
  /* Nested brackets, row-major. */
  int64_t idx[SC_MAX_RANK] = {0};
  for (uint32_t i = 0; i < v->rank; i++)
    g_string_append_c(s, '[');
  if (v->numel == 0) {
    for (uint32_t i = 0; i < v->rank; i++)
      g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
  }
  for (int64_t k = 0; k < v->numel; k++) {
    append_number(s, v->dtype, v->data[k]);
    /* advance */
    int32_t d = (int32_t)v->rank - 1;
    uint32_t closed = 0;
    while (d >= 0) {
      idx[d]++;
      if (idx[d] < v->dims[d])
        break;
      idx[d] = 0;
      closed++;
      d--;
    }
    for (uint32_t c = 0; c < closed; c++)
      g_string_append_c(s, ']');
    if (d >= 0) {
      g_string_append(s, ", ");
      for (uint32_t c = 0; c < closed; c++)
        g_string_append_c(s, '[');
    }
  }
  return g_string_free(s, FALSE);
}

/* ---- comparison ------------------------------------------------------------ */

sc_tolerance sc_tolerance_default(void) {
  sc_tolerance t = {1e-9, 1e-7, TRUE};
  return t;
}

static void unravel(const sc_tvalue *v, int64_t flat, int64_t *coords) {
  for (int32_t d = (int32_t)v->rank - 1; d >= 0; d--) {
    int64_t n = v->dims[d] > 0 ? v->dims[d] : 1;
    coords[d] = flat % n;
    flat /= n;
  }
}

gboolean sc_tvalue_compare(const sc_tvalue *expected, const sc_tvalue *actual,
                           const sc_tolerance *tol, sc_tcompare *out) {
  sc_tolerance t = tol != NULL ? *tol : sc_tolerance_default();
  memset(out, 0, sizeof *out);
  out->first_index = -1;
  out->dtype_differs = expected->dtype != actual->dtype;
  gboolean same_shape = expected->rank == actual->rank;
  for (uint32_t i = 0; same_shape && i < expected->rank; i++)
    same_shape = expected->dims[i] == actual->dims[i];
  if (!same_shape) {
    out->shape_differs = TRUE;
    out->equal = FALSE;
    return FALSE;
  }
  double scale = 1.0;
  for (int64_t i = 0; i < expected->numel; i++)
    if (isfinite(expected->data[i]) && fabs(expected->data[i]) > scale)
      scale = fabs(expected->data[i]);
  /* The relative error's denominator is never below the magnitude where
   * the tolerance's absolute part equals its relative part (atol * scale /
   * rtol): near zero a relative error means nothing (1.8e-14 over an
   * expected 3e-295 is not an error of 1e+280). */
  double floor_rel = t.rtol > 0 ? t.atol * scale / t.rtol : scale;
  if (!(floor_rel > 1e-300))
    floor_rel = 1e-300;
  for (int64_t i = 0; i < expected->numel; i++) {
    double a = expected->data[i], b = actual->data[i];
    gboolean differ;
    double abs_d = 0, rel_d = 0;
    if (isnan(a) || isnan(b)) {
      differ = !(isnan(a) && isnan(b) && t.equal_nan);
      if (differ)
        abs_d = rel_d = INFINITY;
    } else if (isinf(a) || isinf(b)) {
      differ = a != b;
      if (differ)
        abs_d = rel_d = INFINITY;
    } else {
      abs_d = fabs(a - b);
      rel_d = abs_d / (fabs(a) > floor_rel ? fabs(a) : floor_rel);
      if (abs_d == 0)
        rel_d = 0;
      differ = abs_d > t.atol * scale + t.rtol * fabs(a);
    }
    if (abs_d > out->max_abs_diff)
      out->max_abs_diff = abs_d;
    if (rel_d > out->max_rel_diff)
      out->max_rel_diff = rel_d;
    if (differ) {
      if (out->first_index < 0) {
        out->first_index = i;
        unravel(expected, i, out->first_coords);
        out->first_expected = a;
        out->first_actual = b;
      }
      out->n_differ++;
    }
  }
  out->equal = out->n_differ == 0 && !out->dtype_differs;
  return out->equal;
}

char *sc_tcompare_to_string(const sc_tcompare *c, const sc_tvalue *expected,
                            const sc_tvalue *actual) {
  GString *s = g_string_new(NULL);
  if (c->shape_differs) {
    sc_ttype a = sc_tvalue_ttype(expected), b = sc_tvalue_ttype(actual);
    g_autofree char *sa = sc_shape_to_string(&a.shape);
    g_autofree char *sb = sc_shape_to_string(&b.shape);
    g_string_append_printf(s, "shapes differ: %s vs %s", sa, sb);
    return g_string_free(s, FALSE);
  }
  if (c->dtype_differs)
    g_string_append_printf(s, "dtypes differ: %s vs %s; ", sc_dtype_name(expected->dtype),
                           sc_dtype_name(actual->dtype));
  g_string_append_printf(s, "max abs diff %.6g, max rel diff %.6g", c->max_abs_diff,
                         c->max_rel_diff);
  if (c->n_differ > 0) {
    g_string_append_printf(s, ", %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " differ, first at [",
                           (gint64)c->n_differ, (gint64)expected->numel);
    for (uint32_t i = 0; i < expected->rank; i++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", (gint64)c->first_coords[i]);
    g_string_append(s, "]: expected ");
    append_number(s, expected->dtype, c->first_expected);
    g_string_append(s, ", got ");
    append_number(s, actual->dtype, c->first_actual);
  }
  return g_string_free(s, FALSE);
}

/* ---- RNG -------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t sc_interp_hash64(uint64_t x) {
  return splitmix64(&x);
}

void sc_rng_seed(sc_rng *rng, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    rng->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sc_rng_next(sc_rng *rng) {
  uint64_t *s = rng->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double sc_rng_double(sc_rng *rng) {
  return (double)(sc_rng_next(rng) >> 11) * 0x1.0p-53;
}

int64_t sc_rng_int(sc_rng *rng, int64_t lo, int64_t hi) {
  g_return_val_if_fail(lo <= hi, lo);
  uint64_t span = (uint64_t)hi - (uint64_t)lo; /* number of values - 1 */
  if (span == UINT64_MAX)
    return (int64_t)sc_rng_next(rng);
  uint64_t n = span + 1;
  /* rejection sampling: accept r < floor((2^64 - 1) / n) * n */
  uint64_t bound = (UINT64_MAX / n) * n;
  uint64_t r;
  do {
    r = sc_rng_next(rng);
  } while (r >= bound);
  return (int64_t)((uint64_t)lo + r % n);
}

void sc_tvalue_fill_uniform(sc_tvalue *v, sc_rng *rng, double lo, double hi) {
  for (int64_t i = 0; i < v->numel; i++) {
    double x = lo + (hi - lo) * sc_rng_double(rng);
    double r;
    v->data[i] = sc_interp_round_one(v->dtype, x, &r) ? r : 0;
  }
}

void sc_tvalue_fill_ints(sc_tvalue *v, sc_rng *rng, int64_t lo, int64_t hi) {
  for (int64_t i = 0; i < v->numel; i++) {
    double r;
    double x = (double)sc_rng_int(rng, lo, hi);
    v->data[i] = sc_interp_round_one(v->dtype, x, &r) ? r : 0;
  }
}

sc_tvalue *sc_interp_random_input(const sc_graph *g, sc_id t, const int64_t *symbol_values,
                                  sc_rng *rng, int64_t max_elements, GError **error) {
  const sc_tensor *ten = sc_graph_tensor(g, t);
  const sc_symtab *st = sc_graph_symtab(g);
  int64_t dims[SC_MAX_RANK];
  for (uint32_t i = 0; i < ten->type.shape.rank; i++) {
    if (!sc_dim_eval(st, ten->type.shape.dims[i], symbol_values, &dims[i])) {
      g_autofree char *s = sc_dim_to_string(st, ten->type.shape.dims[i]);
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL,
                  "tensor '%s': size %s does not evaluate", ten->name, s);
      return NULL;
    }
  }
  GError *local = NULL;
  sc_tvalue *v = sc_tvalue_new(ten->type.dtype, ten->type.shape.rank, dims, max_elements, &local);
  if (v == NULL) {
    g_set_error(error, SC_INTERP_ERROR, local->code, "tensor '%s': %s", ten->name,
                local->message);
    g_error_free(local);
    return NULL;
  }
  sc_dtype dt = ten->type.dtype;
  if (sc_dtype_is_floating(dt)) {
    sc_tvalue_fill_uniform(v, rng, -1.0, 1.0);
  } else if (dt == SC_DTYPE_BOOL) {
    sc_tvalue_fill_ints(v, rng, 0, 1);
  } else {
    int64_t lo = dt == SC_DTYPE_I8 ? -8 : 0, hi = 7;
    if (ten->has_values) {
      if (!sc_dim_eval(st, ten->values_min, symbol_values, &lo) ||
          !sc_dim_eval(st, ten->values_max, symbol_values, &hi)) {
        sc_tvalue_free(v);
        g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL,
                    "tensor '%s': its value range does not evaluate", ten->name);
        return NULL;
      }
      if (lo > hi) {
        sc_tvalue_free(v);
        g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INVALID,
                    "tensor '%s': empty value range [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                    ten->name, (gint64)lo, (gint64)hi);
        return NULL;
      }
    }
    sc_tvalue_fill_ints(v, rng, lo, hi);
  }
  return v;
}
