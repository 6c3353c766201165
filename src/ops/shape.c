/* shape.c — dtypes (names, torch spellings, promotion) and shapes (printing,
 * comparison, ATen's dim wrapping).
 *
 * Invariants: every sc_shape handled here has rank <= SC_MAX_RANK; symbolic
 * dims are borrowed from their symtab and never freed here.  Printing a
 * symbolic dim needs no symtab (sc_dim_to_string ignores it for printing
 * the interned expression), so sc_shape_to_string takes none. */
#include "shardcheck/shape.h"

#include <string.h>

typedef struct {
  const char *name;
  gboolean floating;
  gboolean integral;
  int size;
} sc_dtype_info;

static const sc_dtype_info dtype_info[SC_DTYPE_COUNT] = {
#define SC_X_DTYPE(sym, nm, fl, in, sz) [sym] = {nm, fl, in, sz},
    SC_DTYPES(SC_X_DTYPE)
#undef SC_X_DTYPE
};

/* Torch spellings (torch.float32.__str__ without the "torch." prefix, the
 * legacy aliases, and the short codes FX sometimes prints). */
static const struct {
  const char *name;
  sc_dtype dtype;
} dtype_aliases[] = {
    {"float64", SC_DTYPE_F64},  {"double", SC_DTYPE_F64},
    {"float32", SC_DTYPE_F32},  {"float", SC_DTYPE_F32},
    {"float16", SC_DTYPE_F16},  {"half", SC_DTYPE_F16},
    {"bfloat16", SC_DTYPE_BF16},
    {"int64", SC_DTYPE_I64},    {"long", SC_DTYPE_I64},
    {"int32", SC_DTYPE_I32},    {"int", SC_DTYPE_I32},
    {"int8", SC_DTYPE_I8},      {"uint8", SC_DTYPE_U8},
    {"bool", SC_DTYPE_BOOL},    {"b8", SC_DTYPE_BOOL},
};

gboolean sc_dtype_from_name(const char *name, sc_dtype *out) {
  g_return_val_if_fail(out != NULL, FALSE);
  if (name == NULL)
    return FALSE;
  if (g_str_has_prefix(name, "torch."))
    name += strlen("torch.");
  for (int i = 0; i < SC_DTYPE_COUNT; i++) {
    if (strcmp(name, dtype_info[i].name) == 0) {
      *out = (sc_dtype)i;
      return TRUE;
    }
  }
  for (size_t i = 0; i < G_N_ELEMENTS(dtype_aliases); i++) {
    if (strcmp(name, dtype_aliases[i].name) == 0) {
      *out = dtype_aliases[i].dtype;
      return TRUE;
    }
  }
  return FALSE;
}

const char *sc_dtype_name(sc_dtype dtype) {
  if ((int)dtype < 0 || dtype >= SC_DTYPE_COUNT)
    return "?";
  return dtype_info[dtype].name;
}

gboolean sc_dtype_is_floating(sc_dtype dtype) {
  return (int)dtype >= 0 && dtype < SC_DTYPE_COUNT && dtype_info[dtype].floating;
}

gboolean sc_dtype_is_integral(sc_dtype dtype) {
  return (int)dtype >= 0 && dtype < SC_DTYPE_COUNT && dtype_info[dtype].integral;
}

/* Category: 0 bool, 1 integral, 2 floating. */
static int dtype_category(sc_dtype d) {
  if (sc_dtype_is_floating(d))
    return 2;
  if (sc_dtype_is_integral(d))
    return 1;
  return 0;
}

sc_dtype sc_dtype_promote(sc_dtype a, sc_dtype b) {
  if (a == b)
    return a;
  int ca = dtype_category(a), cb = dtype_category(b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == 0)
    return SC_DTYPE_BOOL;
  if (ca == 2) {
    /* f16 with bf16: neither holds the other, PyTorch gives f32. */
    if ((a == SC_DTYPE_F16 && b == SC_DTYPE_BF16) || (a == SC_DTYPE_BF16 && b == SC_DTYPE_F16))
      return SC_DTYPE_F32;
    return dtype_info[a].size >= dtype_info[b].size ? a : b;
  }
  /* integral: u8 with a signed type.  u8 with i8 gives i16 in PyTorch; we
   * have no i16, so the next wider signed type, i32, holds both. */
  if ((a == SC_DTYPE_U8 && b == SC_DTYPE_I8) || (a == SC_DTYPE_I8 && b == SC_DTYPE_U8))
    return SC_DTYPE_I32;
  if (dtype_info[a].size != dtype_info[b].size)
    return dtype_info[a].size > dtype_info[b].size ? a : b;
  return a;
}

sc_shape sc_shape_scalar(void) {
  sc_shape s;
  memset(&s, 0, sizeof s);
  s.rank = 0;
  return s;
}

sc_shape sc_shape_of(uint32_t rank, const int64_t *sizes) {
  sc_shape s = sc_shape_scalar();
  g_return_val_if_fail(rank <= SC_MAX_RANK, s);
  s.rank = rank;
  for (uint32_t i = 0; i < rank; i++)
    s.dims[i] = sc_dim_const(sizes[i]);
  return s;
}

gboolean sc_shape_equal(const sc_shape *a, const sc_shape *b) {
  if (a->rank != b->rank)
    return FALSE;
  for (uint32_t i = 0; i < a->rank; i++)
    if (!sc_dim_identical(a->dims[i], b->dims[i]))
      return FALSE;
  return TRUE;
}

sc_truth sc_shape_same(sc_symtab *st, const sc_shape *a, const sc_shape *b) {
  if (a->rank != b->rank)
    return SC_NO;
  sc_truth result = SC_YES;
  for (uint32_t i = 0; i < a->rank; i++) {
    if (sc_dim_identical(a->dims[i], b->dims[i]))
      continue;
    sc_truth t = sc_dim_eq(st, a->dims[i], b->dims[i]);
    if (t == SC_NO)
      return SC_NO;
    if (t == SC_UNKNOWN)
      result = SC_UNKNOWN;
  }
  return result;
}

char *sc_shape_to_string(const sc_shape *shape) {
  GString *s = g_string_new("[");
  for (uint32_t i = 0; i < shape->rank && i < SC_MAX_RANK; i++) {
    if (i > 0)
      g_string_append(s, ", ");
    if (sc_dim_is_const(shape->dims[i])) {
      g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)shape->dims[i].value);
    } else {
      g_autofree char *d = sc_dim_to_string(NULL, shape->dims[i]);
      g_string_append(s, d);
    }
  }
  g_string_append_c(s, ']');
  return g_string_free(s, FALSE);
}

gboolean sc_wrap_dim(int64_t dim, uint32_t rank, uint32_t *out) {
  int64_t r = rank == 0 ? 1 : (int64_t)rank; /* ATen: a scalar acts as rank 1 */
  if (dim < -r || dim >= r)
    return FALSE;
  if (dim < 0)
    dim += r;
  if (out != NULL)
    *out = (uint32_t)dim;
  return TRUE;
}
