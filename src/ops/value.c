/* value.c — argument values of operator calls (see value.h).
 *
 * Invariants: a value of a list kind owns its array (NULL when n == 0); a
 * STR value owns its string; a LIST value owns its items recursively.
 * sc_value_clear leaves NONE behind, so clearing twice is harmless. */
#include "shardcheck/value.h"

#include <math.h>
#include <string.h>

sc_value sc_value_str(const char *s) {
  sc_value v;
  v.kind = SC_VAL_STR;
  v.u.s = g_strdup(s != NULL ? s : "");
  return v;
}

/* the kinds freed here are sc_value_kind_owns' (value.h): keep the two
 * together */
void sc_value_clear(sc_value *v) {
  if (v == NULL)
    return;
  switch (v->kind) {
  case SC_VAL_TENSOR_LIST:
    g_free(v->u.list.ids);
    break;
  case SC_VAL_INT_LIST:
    g_free(v->u.ints.v);
    break;
  case SC_VAL_BOOL_LIST:
    g_free(v->u.bools.v);
    break;
  case SC_VAL_STR:
    g_free(v->u.s);
    break;
  case SC_VAL_LIST:
    for (uint32_t i = 0; i < v->u.items.n; i++)
      sc_value_clear(&v->u.items.v[i]);
    g_free(v->u.items.v);
    break;
  default:
    break;
  }
  *v = sc_value_none();
}

void sc_value_copy(sc_value *dst, const sc_value *src) {
  sc_value r = *src;
  switch (src->kind) {
  case SC_VAL_TENSOR_LIST:
    r.u.list.ids = src->u.list.n ? g_memdup2(src->u.list.ids, sizeof(sc_id) * src->u.list.n) : NULL;
    break;
  case SC_VAL_INT_LIST:
    r.u.ints.v = src->u.ints.n ? g_memdup2(src->u.ints.v, sizeof(sc_dim) * src->u.ints.n) : NULL;
    break;
  case SC_VAL_BOOL_LIST:
    r.u.bools.v = src->u.bools.n ? g_memdup2(src->u.bools.v, sizeof(gboolean) * src->u.bools.n) : NULL;
    break;
  case SC_VAL_STR:
    r.u.s = g_strdup(src->u.s);
    break;
  case SC_VAL_LIST:
    r.u.items.v = src->u.items.n ? g_new0(sc_value, src->u.items.n) : NULL;
    for (uint32_t i = 0; i < src->u.items.n; i++)
      sc_value_copy(&r.u.items.v[i], &src->u.items.v[i]);
    break;
  default:
    break;
  }
  *dst = r;
}

gboolean sc_value_equal(const sc_value *a, const sc_value *b) {
  if (a->kind != b->kind)
    return FALSE;
  switch (a->kind) {
  case SC_VAL_NONE:
    return TRUE;
  case SC_VAL_TENSOR:
    return a->u.tensor == b->u.tensor;
  case SC_VAL_TENSOR_LIST:
    return a->u.list.n == b->u.list.n &&
           (a->u.list.n == 0 || memcmp(a->u.list.ids, b->u.list.ids, sizeof(sc_id) * a->u.list.n) == 0);
  case SC_VAL_INT:
    return sc_dim_identical(a->u.i, b->u.i);
  case SC_VAL_INT_LIST:
    if (a->u.ints.n != b->u.ints.n)
      return FALSE;
    for (uint32_t i = 0; i < a->u.ints.n; i++)
      if (!sc_dim_identical(a->u.ints.v[i], b->u.ints.v[i]))
        return FALSE;
    return TRUE;
  case SC_VAL_FLOAT:
    /* Structural: NaN equals NaN, and 0.0 differs from -0.0. */
    return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0 ||
           (isnan(a->u.f) && isnan(b->u.f));
  case SC_VAL_BOOL:
    return (!a->u.b) == (!b->u.b);
  case SC_VAL_BOOL_LIST:
    if (a->u.bools.n != b->u.bools.n)
      return FALSE;
    for (uint32_t i = 0; i < a->u.bools.n; i++)
      if ((!a->u.bools.v[i]) != (!b->u.bools.v[i]))
        return FALSE;
    return TRUE;
  case SC_VAL_STR:
    return strcmp(a->u.s, b->u.s) == 0;
  case SC_VAL_DTYPE:
    return a->u.dtype == b->u.dtype;
  case SC_VAL_LIST:
    if (a->u.items.n != b->u.items.n)
      return FALSE;
    for (uint32_t i = 0; i < a->u.items.n; i++)
      if (!sc_value_equal(&a->u.items.v[i], &b->u.items.v[i]))
        return FALSE;
    return TRUE;
  }
  return FALSE;
}

static guint mix(guint h, guint x) { return h * 31u + x; }

guint sc_value_hash(const sc_value *v) {
  guint h = (guint)v->kind + 1u;
  switch (v->kind) {
  case SC_VAL_NONE:
    break;
  case SC_VAL_TENSOR:
    h = mix(h, v->u.tensor);
    break;
  case SC_VAL_TENSOR_LIST:
    for (uint32_t i = 0; i < v->u.list.n; i++)
      h = mix(h, v->u.list.ids[i]);
    break;
  case SC_VAL_INT:
    h = mix(h, sc_dim_hash(v->u.i));
    break;
  case SC_VAL_INT_LIST:
    for (uint32_t i = 0; i < v->u.ints.n; i++)
      h = mix(h, sc_dim_hash(v->u.ints.v[i]));
    break;
  case SC_VAL_FLOAT: {
    if (isnan(v->u.f)) {
      h = mix(h, 0x7ff8u);
    } else {
      uint64_t bits;
      memcpy(&bits, &v->u.f, sizeof bits);
      h = mix(h, (guint)(bits ^ (bits >> 32)));
    }
    break;
  }
  case SC_VAL_BOOL:
    h = mix(h, v->u.b ? 1u : 0u);
    break;
  case SC_VAL_BOOL_LIST:
    for (uint32_t i = 0; i < v->u.bools.n; i++)
      h = mix(h, v->u.bools.v[i] ? 1u : 0u);
    break;
  case SC_VAL_STR:
    h = mix(h, g_str_hash(v->u.s));
    break;
  case SC_VAL_DTYPE:
    h = mix(h, (guint)v->u.dtype);
    break;
  case SC_VAL_LIST:
    for (uint32_t i = 0; i < v->u.items.n; i++)
      h = mix(h, sc_value_hash(&v->u.items.v[i]));
    break;
  }
  return h;
}

static void append_dim(GString *s, const sc_symtab *st, sc_dim d) {
  if (sc_dim_is_const(d)) {
    g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)d.value);
  } else {
    g_autofree char *t = sc_dim_to_string(st, d);
    g_string_append(s, t);
  }
}

static void append_float(GString *s, double f) {
  if (isnan(f)) {
    g_string_append(s, "nan");
  } else if (isinf(f)) {
    g_string_append(s, f > 0 ? "inf" : "-inf");
  } else {
    /* Shortest %g form that reads back the same double. */
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int prec = 1; prec <= 17; prec++) {
      char fmt[8];
      g_snprintf(fmt, sizeof fmt, "%%.%dg", prec);
      g_ascii_formatd(buf, sizeof buf, fmt, f);
      if (g_ascii_strtod(buf, NULL) == f)
        break;
    }
    g_string_append(s, buf);
    /* A float always shows it is one. */
    if (strpbrk(buf, ".eE") == NULL)
      g_string_append(s, ".0");
  }
}

static void append_value(GString *s, const sc_value *v, const sc_symtab *st,
                         const char *(*name_of)(void *env, sc_id tensor), void *env) {
  switch (v->kind) {
  case SC_VAL_NONE:
    g_string_append(s, "None");
    break;
  case SC_VAL_TENSOR:
  case SC_VAL_TENSOR_LIST: {
    gboolean list = v->kind == SC_VAL_TENSOR_LIST;
    uint32_t n = list ? v->u.list.n : 1;
    if (list)
      g_string_append_c(s, '[');
    for (uint32_t i = 0; i < n; i++) {
      sc_id t = list ? v->u.list.ids[i] : v->u.tensor;
      if (i > 0)
        g_string_append(s, ", ");
      const char *name = (name_of != NULL && t != SC_ID_NONE) ? name_of(env, t) : NULL;
      if (t == SC_ID_NONE)
        g_string_append(s, "None");
      else if (name != NULL)
        g_string_append(s, name);
      else
        g_string_append_printf(s, "t%u", (unsigned)t);
    }
    if (list)
      g_string_append_c(s, ']');
    break;
  }
  case SC_VAL_INT:
    append_dim(s, st, v->u.i);
    break;
  case SC_VAL_INT_LIST:
    g_string_append_c(s, '[');
    for (uint32_t i = 0; i < v->u.ints.n; i++) {
      if (i > 0)
        g_string_append(s, ", ");
      append_dim(s, st, v->u.ints.v[i]);
    }
    g_string_append_c(s, ']');
    break;
  case SC_VAL_FLOAT:
    append_float(s, v->u.f);
    break;
  case SC_VAL_BOOL:
    g_string_append(s, v->u.b ? "True" : "False");
    break;
  case SC_VAL_BOOL_LIST:
    g_string_append_c(s, '[');
    for (uint32_t i = 0; i < v->u.bools.n; i++)
      g_string_append_printf(s, "%s%s", i > 0 ? ", " : "", v->u.bools.v[i] ? "True" : "False");
    g_string_append_c(s, ']');
    break;
  case SC_VAL_STR: {
    g_autofree char *esc = g_strescape(v->u.s, NULL);
    g_string_append_printf(s, "\"%s\"", esc);
    break;
  }
  case SC_VAL_DTYPE:
    g_string_append(s, sc_dtype_name(v->u.dtype));
    break;
  case SC_VAL_LIST:
    g_string_append_c(s, '[');
    for (uint32_t i = 0; i < v->u.items.n; i++) {
      if (i > 0)
        g_string_append(s, ", ");
      append_value(s, &v->u.items.v[i], st, name_of, env);
    }
    g_string_append_c(s, ']');
    break;
  }
}

char *sc_value_to_string(const sc_value *v, const sc_symtab *st,
                         const char *(*name_of)(void *env, sc_id tensor), void *env) {
  GString *s = g_string_new(NULL);
  append_value(s, v, st, name_of, env);
  return g_string_free(s, FALSE);
}

const char *sc_value_kind_name(sc_value_kind kind) {
  switch (kind) {
  case SC_VAL_NONE: return "None";
  case SC_VAL_TENSOR: return "Tensor";
  case SC_VAL_TENSOR_LIST: return "Tensor[]";
  case SC_VAL_INT: return "int";
  case SC_VAL_INT_LIST: return "int[]";
  case SC_VAL_FLOAT: return "float";
  case SC_VAL_BOOL: return "bool";
  case SC_VAL_BOOL_LIST: return "bool[]";
  case SC_VAL_STR: return "string";
  case SC_VAL_DTYPE: return "ScalarType";
  case SC_VAL_LIST: return "list";
  }
  return "?";
}
