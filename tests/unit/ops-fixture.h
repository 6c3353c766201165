/* ops-fixture.h — shared by the unit tests of the operator registry
 * (test-ops.c, test-ops-math.c): a symtab with size symbols and named
 * tensor types, a small argument syntax, and a call bound to an operator
 * as a front end would bind it (sc_ops_bind), its inferred types as text.
 *
 * The argument syntax, Python-like: `x, [0, -1], True, None, dtype='f32',
 * end="S/2"`: a list in brackets, text in single or double quotes, numbers
 * (with '.' or 'e': floats), True/False/None; any other bare word is text
 * (a tensor name, resolved by fx_resolve, or a string argument); NAME=value
 * is a keyword argument.
 *
 * Ownership: fx_new_with returns a new fx (fx_free, or g_autoptr(fx));
 * fx_bind's *BOUND is the caller's (fx_bound_free); fx_types_text
 * returns a new string (g_free). */
#ifndef SC_TEST_OPS_FIXTURE_H
#define SC_TEST_OPS_FIXTURE_H

#include "shardcheck/ops.h"

#include <glib.h>
#include <string.h>

typedef struct {
  sc_symtab *st;
  GArray *types;    /* sc_ttype by tensor id */
  GPtrArray *names; /* char * by tensor id */
} fx;

/* A symtab declaring the N size symbols SYMS (each >= 1), with S % 2 == 0
 * assumed; no tensors yet. */
static inline fx *fx_new_with(const char *const *syms, size_t n) {
  fx *f = g_new0(fx, 1);
  f->st = sc_symtab_new();
  f->types = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
  f->names = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; i < n; i++) {
    g_autoptr(GError) err = NULL;
    g_assert_true(sc_symtab_declare(f->st, syms[i], TRUE, 1, FALSE, 0, &err));
    g_assert_no_error(err);
  }
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_symtab_assume(f->st, "S % 2 == 0", &err));
  g_assert_no_error(err);
  return f;
}

static inline void fx_free(fx *f) {
  sc_symtab_free(f->st);
  g_array_unref(f->types);
  g_ptr_array_unref(f->names);
  g_free(f);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fx, fx_free)

/* Declare tensor NAME of dtype DTYPE and shape SHAPE ("[4, S/2, 8]"). */
static inline void decl(fx *f, const char *name, const char *dtype, const char *shape) {
  sc_ttype t;
  g_assert_true(sc_dtype_from_name(dtype, &t.dtype));
  size_t n = strlen(shape);
  g_assert_true(n >= 2 && shape[0] == '[' && shape[n - 1] == ']');
  g_autofree char *inner = g_strndup(shape + 1, n - 2);
  g_auto(GStrv) parts = g_strsplit(inner, ",", -1);
  t.shape.rank = 0;
  for (guint i = 0; parts[i] != NULL; i++) {
    g_strstrip(parts[i]);
    if (parts[i][0] == '\0')
      continue;
    g_autoptr(GError) err = NULL;
    g_assert_cmpuint(t.shape.rank, <, SC_MAX_RANK);
    g_assert_true(sc_dim_parse(f->st, parts[i], &t.shape.dims[t.shape.rank++], &err));
    g_assert_no_error(err);
  }
  g_array_append_val(f->types, t);
  g_ptr_array_add(f->names, g_strdup(name));
}

/* The sc_name_resolver of the declared tensors. */
static inline gboolean fx_resolve(void *env, const char *name, sc_id *out) {
  fx *f = env;
  for (guint i = 0; i < f->names->len; i++) {
    if (strcmp(g_ptr_array_index(f->names, i), name) == 0) {
      *out = i;
      return TRUE;
    }
  }
  return FALSE;
}

/* The type of tensor ID; NULL for an id never declared (the rules must
 * refuse it: test-ops.c /ops/rule/unknown-tensor). */
static inline const sc_ttype *fx_type_of(void *env, sc_id id) {
  fx *f = env;
  return id < f->types->len ? &g_array_index(f->types, sc_ttype, id) : NULL;
}

/* ---- the argument syntax ---- */

typedef struct {
  const char *s;
  size_t i;
} fx_ap;

static inline void fx_ap_ws(fx_ap *p) {
  while (p->s[p->i] == ' ')
    p->i++;
}

/* value := '[' [value {',' value}] ']' | quoted text | word */
static inline sc_value fx_ap_value(fx_ap *p) {
  fx_ap_ws(p);
  char c = p->s[p->i];
  sc_value v = sc_value_none();
  if (c == '[') {
    p->i++;
    GArray *items = g_array_new(FALSE, FALSE, sizeof(sc_value));
    fx_ap_ws(p);
    while (p->s[p->i] != ']') {
      sc_value it = fx_ap_value(p);
      g_array_append_val(items, it);
      fx_ap_ws(p);
      if (p->s[p->i] == ',')
        p->i++;
      fx_ap_ws(p);
    }
    p->i++;
    v.kind = SC_VAL_LIST;
    v.u.items.n = items->len;
    v.u.items.v = (sc_value *)(void *)g_array_free(items, items->len == 0);
    return v;
  }
  if (c == '\'' || c == '"') {
    size_t start = ++p->i;
    while (p->s[p->i] != c)
      p->i++;
    g_autofree char *t = g_strndup(p->s + start, p->i - start);
    p->i++;
    return sc_value_str(t);
  }
  size_t start = p->i;
  while (p->s[p->i] != '\0' && p->s[p->i] != ',' && p->s[p->i] != ']' && p->s[p->i] != ' ')
    p->i++;
  g_autofree char *t = g_strndup(p->s + start, p->i - start);
  if (strcmp(t, "None") == 0)
    return sc_value_none();
  if (strcmp(t, "True") == 0 || strcmp(t, "False") == 0)
    return sc_value_bool(strcmp(t, "True") == 0);
  if (g_ascii_isdigit(t[0]) || (t[0] == '-' && g_ascii_isdigit(t[1]))) {
    if (strpbrk(t, ".e") != NULL)
      return sc_value_float(g_ascii_strtod(t, NULL));
    return sc_value_int(g_ascii_strtoll(t, NULL, 10));
  }
  return sc_value_str(t);
}

typedef struct {
  GArray *pos;   /* sc_value */
  GPtrArray *kw; /* char *, the keywords */
  GArray *kwv;   /* sc_value, their values */
} fx_args;

static inline void fx_args_clear(fx_args *a) {
  for (guint i = 0; i < a->pos->len; i++)
    sc_value_clear(&g_array_index(a->pos, sc_value, i));
  for (guint i = 0; i < a->kwv->len; i++)
    sc_value_clear(&g_array_index(a->kwv, sc_value, i));
  g_array_unref(a->pos);
  g_array_unref(a->kwv);
  g_ptr_array_unref(a->kw);
}

/* args := [arg {',' arg}];  arg := name '=' value | value */
static inline void fx_args_parse(const char *text, fx_args *a) {
  a->pos = g_array_new(FALSE, FALSE, sizeof(sc_value));
  a->kwv = g_array_new(FALSE, FALSE, sizeof(sc_value));
  a->kw = g_ptr_array_new_with_free_func(g_free);
  fx_ap p = {text, 0};
  for (;;) {
    fx_ap_ws(&p);
    if (p.s[p.i] == '\0')
      break;
    size_t j = p.i;
    while (g_ascii_isalnum(p.s[j]) || p.s[j] == '_')
      j++;
    if (j > p.i && p.s[j] == '=') {
      g_ptr_array_add(a->kw, g_strndup(p.s + p.i, j - p.i));
      p.i = j + 1;
      sc_value v = fx_ap_value(&p);
      g_array_append_val(a->kwv, v);
    } else {
      sc_value v = fx_ap_value(&p);
      g_array_append_val(a->pos, v);
    }
    fx_ap_ws(&p);
    if (p.s[p.i] == ',')
      p.i++;
  }
}

/* ---- binding and inferring ---- */

/* Bind ARGS (the syntax above) to OP; FALSE with ERROR and *LOC (may be
 * NULL) on failure.  *BOUND receives op->n_args values either way (free
 * with fx_bound_free). */
static inline gboolean fx_bind(fx *f, const sc_op *op, const char *args, sc_value **bound,
                               sc_bind_loc *loc, GError **error) {
  fx_args a;
  fx_args_parse(args, &a);
  *bound = g_new0(sc_value, op->n_args ? op->n_args : 1);
  sc_bind_loc l;
  gboolean ok = sc_ops_bind(op, f->st, (const sc_value *)(void *)a.pos->data, a.pos->len,
                            (const char *const *)a.kw->pdata, (const sc_value *)(void *)a.kwv->data,
                            a.kwv->len, fx_resolve, f, *bound, &l, error);
  if (loc)
    *loc = l;
  fx_args_clear(&a);
  return ok;
}

static inline void fx_bound_free(const sc_op *op, sc_value *bound) {
  for (uint32_t i = 0; i < op->n_args; i++)
    sc_value_clear(&bound[i]);
  g_free(bound);
}

/* Infer the result types of OP on BOUND into OUT (appended). */
static inline gboolean fx_infer(fx *f, const sc_op *op, const sc_value *bound, GArray *out,
                                GError **error) {
  sc_op_call call = {op, bound, fx_type_of, f, f->st};
  return sc_ops_infer(&call, out, error);
}

/* OUT's types as text: "[4, 8] f32; [4] i64". */
static inline char *fx_types_text(const GArray *out) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < out->len; i++) {
    const sc_ttype *t = &g_array_index(out, sc_ttype, i);
    g_autofree char *sh = sc_shape_to_string(&t->shape);
    g_string_append_printf(s, "%s%s %s", i ? "; " : "", sh, sc_dtype_name(t->dtype));
  }
  return g_string_free(s, FALSE);
}

#endif
