/* registry.c — the operator registry: the table built from ops-layout.def,
 * ops-math.def and ops-extra.def, the ATen schema parser, lookup by name (exact, bare, and the
 * expression language's short names), nearest-name suggestions, binding of
 * raw argument values to a schema, and the shape-rule entry point.
 *
 * Invariants: the table is built once (g_once) and never changes; every
 * sc_op, its strings and its args live until the process exits.  Qualified
 * names are unique (a duplicate aborts at start-up, as does a malformed
 * built-in schema: both are programming errors).  Binding never keeps a
 * pointer into the caller's values: everything bound is a deep copy. */
#include "ops/ops-private.h"
#include "ops/rules.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(sc-ops-error-quark, sc_ops_error)

/* ------------------------------------------------------------------------ */
/* The table                                                                 */

typedef struct {
  const char *ns;
  const char *schema;
  sc_shape_rule rule;
  uint32_t flags;
} sc_op_entry;

static const sc_op_entry op_table[] = {
#define SC_OP(ns, schema, rule, flags) {ns, schema, rule, flags},
#include "ops/ops-layout.def"
#include "ops/ops-math.def"
#include "ops/ops-extra.def"
#include "ops/ops-hlo.def"
#undef SC_OP
    {NULL, NULL, NULL, 0}, /* sentinel: keeps the array non-empty */
};

static sc_op *reg_ops;
static uint32_t reg_n_ops;
static GHashTable *reg_by_qualname; /* "aten.add.Tensor" -> sc_op * */
static GHashTable *reg_by_base;     /* "aten.add" -> GPtrArray of sc_op * */
static GHashTable *reg_namespaces;  /* "aten" -> itself */
static GPtrArray *reg_names;        /* qualnames and base names, for nearest */
static GPtrArray *reg_func_names;   /* bare names and name.overload, for funcs */
/* Operators registered at run time (sc_ops_register): ids from
 * reg_n_builtin on, each allocated on its own so that pointers stay valid;
 * registration must finish before other threads look operators up. */
static uint32_t reg_n_builtin;
static GPtrArray *reg_extra;
static GHashTable *reg_func_seen;
G_LOCK_DEFINE_STATIC(reg_extra);

/* ------------------------------------------------------------------------ */
/* Schema parser                                                             */

typedef struct {
  const char *text;
  size_t pos;
} sc_schema_parser;

#define PARSE_FAIL(p, error, ...)                                                     \
  do {                                                                                \
    g_autofree char *msg_ = g_strdup_printf(__VA_ARGS__);                             \
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA, "col %u: %s",               \
                (unsigned)((p)->pos + 1), msg_);                                      \
    return FALSE;                                                                     \
  } while (0)

static void skip_ws(sc_schema_parser *p) {
  while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' || p->text[p->pos] == '\n')
    p->pos++;
}

static gboolean accept(sc_schema_parser *p, const char *tok) {
  skip_ws(p);
  size_t n = strlen(tok);
  if (strncmp(p->text + p->pos, tok, n) == 0) {
    p->pos += n;
    return TRUE;
  }
  return FALSE;
}

static gboolean peek(sc_schema_parser *p, char c) {
  skip_ws(p);
  return p->text[p->pos] == c;
}

static gboolean is_ident_start(char c) { return g_ascii_isalpha(c) || c == '_'; }
static gboolean is_ident_char(char c) { return g_ascii_isalnum(c) || c == '_'; }

/* ident := [A-Za-z_][A-Za-z0-9_]* */
static gboolean parse_ident(sc_schema_parser *p, char **out, const char *what, GError **error) {
  skip_ws(p);
  if (!is_ident_start(p->text[p->pos]))
    PARSE_FAIL(p, error, "expected %s", what);
  size_t start = p->pos;
  while (is_ident_char(p->text[p->pos]))
    p->pos++;
  *out = g_strndup(p->text + start, p->pos - start);
  return TRUE;
}

typedef struct {
  char *base;        /* "Tensor", "int", ... */
  gboolean elem_opt; /* "Tensor?[]" */
  gboolean is_list;
  uint32_t fixed_len;
  gboolean optional; /* trailing '?' (or '?' of a non-list) */
  gboolean mutated;  /* "(a!)" */
} sc_type_text;

/* type := ident [ "(" annotation ")" ] [ "?" ] [ "[" [digits] "]" [ "?" ] ] */
static gboolean parse_type(sc_schema_parser *p, sc_type_text *t, GError **error) {
  memset(t, 0, sizeof *t);
  if (!parse_ident(p, &t->base, "a type", error))
    return FALSE;
  if (p->text[p->pos] == '(') {
    size_t start = ++p->pos;
    while (p->text[p->pos] != ')' && p->text[p->pos] != '\0')
      p->pos++;
    if (p->text[p->pos] != ')')
      PARSE_FAIL(p, error, "unterminated alias annotation");
    if (memchr(p->text + start, '!', p->pos - start) != NULL)
      t->mutated = TRUE;
    p->pos++;
  }
  gboolean q = FALSE;
  if (p->text[p->pos] == '?') {
    q = TRUE;
    p->pos++;
  }
  if (p->text[p->pos] == '[') {
    p->pos++;
    t->is_list = TRUE;
    t->elem_opt = q;
    q = FALSE;
    if (g_ascii_isdigit(p->text[p->pos])) {
      uint64_t n = 0;
      while (g_ascii_isdigit(p->text[p->pos])) {
        n = n * 10 + (uint64_t)(p->text[p->pos] - '0');
        if (n > SC_MAX_RANK * 4)
          PARSE_FAIL(p, error, "list length too large");
        p->pos++;
      }
      t->fixed_len = (uint32_t)n;
    }
    if (p->text[p->pos] != ']')
      PARSE_FAIL(p, error, "expected ']'");
    p->pos++;
    if (p->text[p->pos] == '?') {
      q = TRUE;
      p->pos++;
    }
  }
  t->optional = q;
  return TRUE;
}

static gboolean type_to_arg(sc_schema_parser *p, const sc_type_text *t, const char *name,
                            sc_arg *arg, GError **error) {
  const char *b = t->base;
  arg->optional = t->optional;
  arg->mutated = t->mutated;
  arg->fixed_len = t->fixed_len;
  if (strcmp(name, "pin_memory") == 0 || strcmp(name, "non_blocking") == 0) {
    arg->type = SC_ARG_IGNORED;
    arg->optional = TRUE;
    return TRUE;
  }
  if (strcmp(b, "Tensor") == 0) {
    if (t->is_list)
      arg->type = t->elem_opt ? SC_ARG_TENSOR_OPT_LIST : SC_ARG_TENSOR_LIST;
    else
      arg->type = SC_ARG_TENSOR;
  } else if (strcmp(b, "int") == 0 || strcmp(b, "SymInt") == 0 || strcmp(b, "int64_t") == 0) {
    arg->type = t->is_list ? SC_ARG_INT_LIST : SC_ARG_INT;
  } else if (strcmp(b, "float") == 0 && !t->is_list) {
    arg->type = SC_ARG_FLOAT;
  } else if (strcmp(b, "bool") == 0) {
    arg->type = t->is_list ? SC_ARG_BOOL_LIST : SC_ARG_BOOL;
  } else if (strcmp(b, "str") == 0 && !t->is_list) {
    arg->type = SC_ARG_STR;
  } else if (strcmp(b, "Scalar") == 0 && !t->is_list) {
    arg->type = SC_ARG_SCALAR;
  } else if (strcmp(b, "ScalarType") == 0 && !t->is_list) {
    arg->type = SC_ARG_DTYPE;
  } else if (strcmp(b, "Layout") == 0 || strcmp(b, "Device") == 0 ||
             strcmp(b, "MemoryFormat") == 0 || strcmp(b, "Generator") == 0) {
    arg->type = SC_ARG_IGNORED;
    arg->optional = TRUE;
  } else {
    PARSE_FAIL(p, error, "unsupported argument type '%s%s' of '%s'", b, t->is_list ? "[]" : "",
               name);
  }
  if (t->elem_opt && arg->type != SC_ARG_TENSOR_OPT_LIST)
    PARSE_FAIL(p, error, "'%s?[]' is supported for Tensor only", b);
  return TRUE;
}

/* Read the raw text of a default: up to ',' or ')' outside brackets/quotes. */
static gboolean read_default_text(sc_schema_parser *p, char **out, GError **error) {
  skip_ws(p);
  size_t start = p->pos;
  int depth = 0;
  char quote = 0;
  for (;;) {
    char c = p->text[p->pos];
    if (c == '\0')
      PARSE_FAIL(p, error, "unterminated default value");
    if (quote) {
      if (c == '\\' && p->text[p->pos + 1] != '\0')
        p->pos++;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '(') {
      depth++;
    } else if (c == ']' || (c == ')' && depth > 0)) {
      depth--;
    } else if (depth == 0 && (c == ',' || c == ')')) {
      break;
    }
    p->pos++;
  }
  size_t end = p->pos;
  while (end > start && g_ascii_isspace(p->text[end - 1]))
    end--;
  if (end == start)
    PARSE_FAIL(p, error, "expected a default value after '='");
  *out = g_strndup(p->text + start, end - start);
  return TRUE;
}

static gboolean parse_int64_text(const char *s, int64_t *out) {
  if (*s == '\0')
    return FALSE;
  errno = 0;
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0')
    return FALSE;
  *out = (int64_t)v;
  return TRUE;
}

static gboolean parse_float_text(const char *s, double *out) {
  if (strcmp(s, "inf") == 0) { *out = INFINITY; return TRUE; }
  if (strcmp(s, "-inf") == 0) { *out = -INFINITY; return TRUE; }
  if (strcmp(s, "nan") == 0) { *out = NAN; return TRUE; }
  char *end = NULL;
  double v = g_ascii_strtod(s, &end);
  if (end == s || *end != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

/* Integer default: a literal or one of at::Reduction's names. */
static gboolean default_int(const char *s, int64_t *out) {
  if (strcmp(s, "Mean") == 0) { *out = 1; return TRUE; }
  if (strcmp(s, "Sum") == 0) { *out = 2; return TRUE; }
  return parse_int64_text(s, out);
}

static gboolean split_list_text(const char *s, gchar ***items) {
  size_t n = strlen(s);
  if (n < 2 || s[0] != '[' || s[n - 1] != ']')
    return FALSE;
  g_autofree char *inner = g_strndup(s + 1, n - 2);
  g_strstrip(inner);
  if (*inner == '\0') {
    *items = g_new0(gchar *, 1);
    return TRUE;
  }
  *items = g_strsplit(inner, ",", -1);
  for (gchar **it = *items; *it; it++)
    g_strstrip(*it);
  return TRUE;
}

/* Interpret default text TEXT for ARG (bound form). */
static gboolean parse_default(sc_schema_parser *p, sc_arg *arg, const char *text, GError **error) {
  sc_value *v = &arg->default_value;
  *v = sc_value_none();
  arg->has_default = TRUE;
  if (strcmp(text, "None") == 0 || arg->type == SC_ARG_IGNORED)
    return TRUE;
  switch (arg->type) {
  case SC_ARG_INT: {
    int64_t x;
    if (!default_int(text, &x))
      PARSE_FAIL(p, error, "bad int default '%s'", text);
    *v = sc_value_int(x);
    return TRUE;
  }
  case SC_ARG_INT_LIST: {
    g_auto(GStrv) items = NULL;
    int64_t single;
    if (default_int(text, &single)) {
      uint32_t n = arg->fixed_len ? arg->fixed_len : 1;
      v->kind = SC_VAL_INT_LIST;
      v->u.ints.n = n;
      v->u.ints.v = g_new(sc_dim, n);
      for (uint32_t i = 0; i < n; i++)
        v->u.ints.v[i] = sc_dim_const(single);
      return TRUE;
    }
    if (!split_list_text(text, &items))
      PARSE_FAIL(p, error, "bad int[] default '%s'", text);
    uint32_t n = g_strv_length(items);
    v->kind = SC_VAL_INT_LIST;
    v->u.ints.n = n;
    v->u.ints.v = n ? g_new(sc_dim, n) : NULL;
    for (uint32_t i = 0; i < n; i++) {
      int64_t x;
      if (!default_int(items[i], &x)) {
        sc_value_clear(v);
        PARSE_FAIL(p, error, "bad int[] default '%s'", text);
      }
      v->u.ints.v[i] = sc_dim_const(x);
    }
    return TRUE;
  }
  case SC_ARG_FLOAT: {
    double f;
    if (!parse_float_text(text, &f))
      PARSE_FAIL(p, error, "bad float default '%s'", text);
    *v = sc_value_float(f);
    return TRUE;
  }
  case SC_ARG_BOOL:
    if (strcmp(text, "True") == 0)
      *v = sc_value_bool(TRUE);
    else if (strcmp(text, "False") == 0)
      *v = sc_value_bool(FALSE);
    else
      PARSE_FAIL(p, error, "bad bool default '%s'", text);
    return TRUE;
  case SC_ARG_BOOL_LIST: {
    g_auto(GStrv) items = NULL;
    if (!split_list_text(text, &items))
      PARSE_FAIL(p, error, "bad bool[] default '%s'", text);
    uint32_t n = g_strv_length(items);
    v->kind = SC_VAL_BOOL_LIST;
    v->u.bools.n = n;
    v->u.bools.v = n ? g_new(gboolean, n) : NULL;
    for (uint32_t i = 0; i < n; i++) {
      if (strcmp(items[i], "True") != 0 && strcmp(items[i], "False") != 0) {
        sc_value_clear(v);
        PARSE_FAIL(p, error, "bad bool[] default '%s'", text);
      }
      v->u.bools.v[i] = strcmp(items[i], "True") == 0;
    }
    return TRUE;
  }
  case SC_ARG_STR: {
    size_t n = strlen(text);
    if (n < 2 || (text[0] != '"' && text[0] != '\'') || text[n - 1] != text[0])
      PARSE_FAIL(p, error, "bad str default %s (expected a quoted string)", text);
    g_autofree char *inner = g_strndup(text + 1, n - 2);
    char *unesc = g_strcompress(inner);
    v->kind = SC_VAL_STR;
    v->u.s = unesc;
    return TRUE;
  }
  case SC_ARG_SCALAR: {
    int64_t x;
    double f;
    if (strcmp(text, "True") == 0 || strcmp(text, "False") == 0)
      *v = sc_value_bool(strcmp(text, "True") == 0);
    else if (parse_int64_text(text, &x))
      *v = sc_value_int(x);
    else if (parse_float_text(text, &f))
      *v = sc_value_float(f);
    else
      PARSE_FAIL(p, error, "bad Scalar default '%s'", text);
    return TRUE;
  }
  case SC_ARG_DTYPE: {
    sc_dtype d;
    if (!sc_dtype_from_name(text, &d))
      PARSE_FAIL(p, error, "bad ScalarType default '%s'", text);
    v->kind = SC_VAL_DTYPE;
    v->u.dtype = d;
    return TRUE;
  }
  case SC_ARG_TENSOR_LIST:
  case SC_ARG_TENSOR_OPT_LIST:
    if (strcmp(text, "[]") == 0) {
      v->kind = SC_VAL_TENSOR_LIST;
      v->u.list.n = 0;
      v->u.list.ids = NULL;
      return TRUE;
    }
    PARSE_FAIL(p, error, "bad Tensor[] default '%s'", text);
  case SC_ARG_TENSOR:
  case SC_ARG_IGNORED:
    break;
  }
  PARSE_FAIL(p, error, "type of '%s' takes no default but None", arg->name);
}

/* One result: type [name]. */
static gboolean parse_result(sc_schema_parser *p, gboolean *is_list, GError **error) {
  sc_type_text t;
  if (!parse_type(p, &t, error)) {
    g_free(t.base);
    return FALSE;
  }
  *is_list = t.is_list;
  g_free(t.base);
  skip_ws(p);
  if (is_ident_start(p->text[p->pos])) {
    char *name = NULL;
    if (!parse_ident(p, &name, "a result name", error))
      return FALSE;
    g_free(name);
  }
  return TRUE;
}

void sc_ops_schema_clear(sc_op *op) {
  if (op == NULL)
    return;
  if (op->args != NULL) {
    sc_arg *args = (sc_arg *)op->args;
    for (uint32_t i = 0; i < op->n_args; i++) {
      g_free((char *)args[i].name);
      sc_value_clear(&args[i].default_value);
    }
    g_free(args);
  }
  g_free((char *)op->qualname);
  g_free((char *)op->ns);
  g_free((char *)op->name);
  g_free((char *)op->overload);
  g_free((char *)op->schema);
  memset(op, 0, sizeof *op);
}

/* schema := name [ "." overload ] "(" [ arg { "," arg } ] ")" "->" results
 * arg    := "*" | type name [ "=" default ]
 * results:= "(" [ result { "," result } ] ")" | result */
gboolean sc_ops_schema_parse(const char *ns, const char *schema, sc_op *op, GError **error) {
  g_return_val_if_fail(ns != NULL && schema != NULL && op != NULL, FALSE);
  memset(op, 0, sizeof *op);
  sc_schema_parser ps = {schema, 0};
  sc_schema_parser *p = &ps;
  g_autofree char *name = NULL;
  g_autofree char *overload = NULL;
  GArray *args = g_array_new(FALSE, TRUE, sizeof(sc_arg));
  gboolean ok = FALSE;
  uint32_t n_results = 0;
  gboolean variadic = FALSE;

  if (!parse_ident(p, &name, "an operator name", error))
    goto out;
  if (p->text[p->pos] == '.') {
    p->pos++;
    if (!parse_ident(p, &overload, "an overload name", error))
      goto out;
  }
  if (!accept(p, "(")) {
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA, "col %u: expected '('",
                (unsigned)(p->pos + 1));
    goto out;
  }
  gboolean kwarg_only = FALSE;
  if (!peek(p, ')')) {
    for (;;) {
      if (accept(p, "*")) {
        if (kwarg_only) {
          g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA, "col %u: '*' given twice",
                      (unsigned)p->pos);
          goto out;
        }
        kwarg_only = TRUE;
      } else {
        sc_type_text t;
        char *aname = NULL;
        if (!parse_type(p, &t, error)) {
          g_free(t.base);
          goto out;
        }
        if (!parse_ident(p, &aname, "an argument name", error)) {
          g_free(t.base);
          goto out;
        }
        for (uint32_t i = 0; i < args->len; i++) {
          if (strcmp(g_array_index(args, sc_arg, i).name, aname) == 0) {
            g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA,
                        "col %u: argument '%s' declared twice", (unsigned)p->pos, aname);
            g_free(aname);
            g_free(t.base);
            goto out;
          }
        }
        sc_arg arg;
        memset(&arg, 0, sizeof arg);
        arg.name = aname;
        arg.kwarg_only = kwarg_only;
        arg.default_value = sc_value_none();
        gboolean tok = type_to_arg(p, &t, aname, &arg, error);
        g_free(t.base);
        g_array_append_val(args, arg); /* owned by args from here on */
        if (!tok)
          goto out;
        if (accept(p, "=")) {
          g_autofree char *dtext = NULL;
          if (!read_default_text(p, &dtext, error))
            goto out;
          if (!parse_default(p, &g_array_index(args, sc_arg, args->len - 1), dtext, error))
            goto out;
        }
      }
      if (accept(p, ","))
        continue;
      break;
    }
  }
  if (!accept(p, ")")) {
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA, "col %u: expected ',' or ')'",
                (unsigned)(p->pos + 1));
    goto out;
  }
  if (!accept(p, "->")) {
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA, "col %u: expected '->'",
                (unsigned)(p->pos + 1));
    goto out;
  }
  if (accept(p, "(")) {
    if (!peek(p, ')')) {
      for (;;) {
        gboolean is_list = FALSE;
        if (!parse_result(p, &is_list, error))
          goto out;
        if (is_list) {
          g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA,
                      "col %u: a list inside a result tuple is not supported",
                      (unsigned)p->pos);
          goto out;
        }
        n_results++;
        if (!accept(p, ","))
          break;
      }
    }
    if (!accept(p, ")")) {
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA, "col %u: expected ',' or ')'",
                  (unsigned)(p->pos + 1));
      goto out;
    }
  } else {
    gboolean is_list = FALSE;
    if (!parse_result(p, &is_list, error))
      goto out;
    if (is_list)
      variadic = TRUE;
    else
      n_results = 1;
  }
  skip_ws(p);
  if (p->text[p->pos] != '\0') {
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA, "col %u: unexpected text after the results",
                (unsigned)(p->pos + 1));
    goto out;
  }
  ok = TRUE;

out:
  if (!ok) {
    for (uint32_t i = 0; i < args->len; i++) {
      sc_arg *a = &g_array_index(args, sc_arg, i);
      g_free((char *)a->name);
      sc_value_clear(&a->default_value);
    }
    g_array_free(args, TRUE);
    return FALSE;
  }
  op->ns = g_strdup(ns);
  op->name = g_strdup(name);
  op->overload = g_strdup(overload != NULL ? overload : "default");
  op->qualname = g_strdup_printf("%s.%s.%s", ns, name, op->overload);
  op->schema = g_strdup(schema);
  op->n_args = args->len;
  op->args = (const sc_arg *)g_array_free(args, op->n_args == 0);
  op->n_results = n_results;
  op->results_variadic = variadic;
  op->flags = 0;
  for (uint32_t i = 0; i < op->n_args; i++)
    if (op->args[i].mutated)
      op->flags |= SC_OP_INPLACE;
  if (n_results > 1 || variadic)
    op->flags |= SC_OP_MULTI;
  return TRUE;
}

char *sc_ops_arg_type_string(const sc_arg *arg) {
  const char *base = "?";
  gboolean list = FALSE;
  switch (arg->type) {
  case SC_ARG_TENSOR: base = "Tensor"; break;
  case SC_ARG_TENSOR_LIST: base = "Tensor"; list = TRUE; break;
  case SC_ARG_TENSOR_OPT_LIST: base = "Tensor?"; list = TRUE; break;
  case SC_ARG_INT: base = "int"; break;
  case SC_ARG_INT_LIST: base = "int"; list = TRUE; break;
  case SC_ARG_FLOAT: base = "float"; break;
  case SC_ARG_BOOL: base = "bool"; break;
  case SC_ARG_BOOL_LIST: base = "bool"; list = TRUE; break;
  case SC_ARG_STR: base = "str"; break;
  case SC_ARG_SCALAR: base = "Scalar"; break;
  case SC_ARG_DTYPE: base = "ScalarType"; break;
  case SC_ARG_IGNORED: return g_strdup("any");
  }
  GString *s = g_string_new(base);
  if (list) {
    if (arg->fixed_len)
      g_string_append_printf(s, "[%u]", arg->fixed_len);
    else
      g_string_append(s, "[]");
  }
  if (arg->optional)
    g_string_append_c(s, '?');
  return g_string_free(s, FALSE);
}

/* ------------------------------------------------------------------------ */
/* Building the registry                                                     */

/* Enter OP (schema parsed, id set) into the name indexes. */
static void registry_index(sc_op *op) {
  if (g_hash_table_contains(reg_by_qualname, op->qualname))
    g_error("shardcheck: operator %s is registered twice", op->qualname);
  g_hash_table_insert(reg_by_qualname, (gpointer)op->qualname, op);
  g_ptr_array_add(reg_names, (gpointer)op->qualname);
  if (!g_hash_table_contains(reg_namespaces, op->ns))
    g_hash_table_insert(reg_namespaces, (gpointer)op->ns, (gpointer)op->ns);
  char *base = g_strdup_printf("%s.%s", op->ns, op->name);
  GPtrArray *over = g_hash_table_lookup(reg_by_base, base);
  if (over == NULL) {
    over = g_ptr_array_new();
    g_hash_table_insert(reg_by_base, base, over);
    g_ptr_array_add(reg_names, base);
  } else {
    g_free(base);
  }
  g_ptr_array_add(over, op);
  /* Names the expression language may write: "cat", "add.Tensor". */
  const char *bare = op->name;
  if (!g_hash_table_contains(reg_func_seen, bare)) {
    g_hash_table_add(reg_func_seen, (gpointer)bare);
    g_ptr_array_add(reg_func_names, (gpointer)bare);
  }
  char *with_over = g_strdup_printf("%s.%s", op->name, op->overload);
  if (!g_hash_table_contains(reg_func_seen, with_over)) {
    g_hash_table_add(reg_func_seen, with_over);
    g_ptr_array_add(reg_func_names, with_over);
  } else {
    g_free(with_over);
  }
}

static void registry_build(void) {
  uint32_t n = (uint32_t)G_N_ELEMENTS(op_table) - 1;
  reg_ops = g_new0(sc_op, n ? n : 1);
  reg_n_ops = n;
  reg_n_builtin = n;
  reg_extra = g_ptr_array_new();
  reg_by_qualname = g_hash_table_new(g_str_hash, g_str_equal);
  reg_by_base = g_hash_table_new(g_str_hash, g_str_equal);
  reg_namespaces = g_hash_table_new(g_str_hash, g_str_equal);
  reg_names = g_ptr_array_new();
  reg_func_names = g_ptr_array_new();
  reg_func_seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (uint32_t i = 0; i < n; i++) {
    const sc_op_entry *e = &op_table[i];
    sc_op *op = &reg_ops[i];
    g_autoptr(GError) err = NULL;
    if (!sc_ops_schema_parse(e->ns, e->schema, op, &err))
      g_error("shardcheck: malformed built-in operator schema \"%s\" (namespace %s): %s",
              e->schema, e->ns, err->message);
    op->id = i;
    op->shape = e->rule;
    op->flags |= e->flags;
    registry_index(op);
  }
}

/* The operator with id I (built-in or registered at run time). */
static sc_op *reg_at(uint32_t i) {
  return i < reg_n_builtin ? &reg_ops[i] : g_ptr_array_index(reg_extra, i - reg_n_builtin);
}

static const char *const reserved_ns[] = {"aten", "sc", "comm", "prims", "hlo"};

const sc_op *sc_ops_register(const char *ns, const char *schema, sc_shape_rule rule,
                             uint32_t flags, const void *rule_data, GError **error) {
  g_return_val_if_fail(ns != NULL && schema != NULL && rule != NULL, NULL);
  sc_ops_init();
  for (size_t i = 0; i < G_N_ELEMENTS(reserved_ns); i++)
    if (strcmp(ns, reserved_ns[i]) == 0) {
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA,
                  "namespace '%s' is reserved for built-in operators", ns);
      return NULL;
    }
  sc_op *op = g_new0(sc_op, 1);
  if (!sc_ops_schema_parse(ns, schema, op, error)) {
    sc_ops_schema_clear(op);
    g_free(op);
    return NULL;
  }
  G_LOCK(reg_extra);
  const sc_op *old = g_hash_table_lookup(reg_by_qualname, op->qualname);
  if (old != NULL) {
    /* The same declaration again (a lemma directory loaded twice) is the
     * same operator; anything else is a conflict. */
    gboolean same = old->id >= reg_n_builtin && strcmp(old->schema, op->schema) == 0 &&
                    old->shape == rule && old->flags == (op->flags | flags) &&
                    old->rule_data == rule_data;
    G_UNLOCK(reg_extra);
    if (!same)
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA,
                  "operator %s is already registered with a different definition",
                  op->qualname);
    sc_ops_schema_clear(op);
    g_free(op);
    return same ? old : NULL;
  }
  op->id = reg_n_ops;
  op->shape = rule;
  op->flags |= flags;
  op->rule_data = rule_data;
  g_ptr_array_add(reg_extra, op);
  registry_index(op);
  reg_n_ops++;
  G_UNLOCK(reg_extra);
  return op;
}

void sc_ops_init(void) {
  static gsize once = 0;
  if (g_once_init_enter(&once)) {
    registry_build();
    g_once_init_leave(&once, 1);
  }
}

uint32_t sc_ops_count(void) {
  sc_ops_init();
  return reg_n_ops;
}

const sc_op *sc_ops_at(uint32_t id) {
  sc_ops_init();
  g_return_val_if_fail(id < reg_n_ops, NULL);
  return reg_at(id);
}

int32_t sc_ops_arg_index(const sc_op *op, const char *name) {
  /* the first letters first: shape rules and canonical forms ask by name
   * hundreds of thousands of times in a check */
  for (uint32_t i = 0; i < op->n_args; i++)
    if (op->args[i].name[0] == name[0] && strcmp(op->args[i].name, name) == 0)
      return (int32_t)i;
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */

uint32_t sc_ops_edit_distance(const char *a, const char *b, uint32_t cap) {
  size_t la = strlen(a), lb = strlen(b);
  if ((la > lb ? la - lb : lb - la) > cap)
    return cap + 1;
  g_autofree uint32_t *prev = g_new(uint32_t, lb + 1);
  g_autofree uint32_t *cur = g_new(uint32_t, lb + 1);
  for (size_t j = 0; j <= lb; j++)
    prev[j] = (uint32_t)j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = (uint32_t)i;
    uint32_t row_min = cur[0];
    for (size_t j = 1; j <= lb; j++) {
      uint32_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      uint32_t v = prev[j - 1] + cost;
      if (prev[j] + 1 < v)
        v = prev[j] + 1;
      if (cur[j - 1] + 1 < v)
        v = cur[j - 1] + 1;
      cur[j] = v;
      if (v < row_min)
        row_min = v;
    }
    if (row_min > cap)
      return cap + 1;
    uint32_t *t = prev;
    prev = cur;
    cur = t;
  }
  return prev[lb] <= cap ? prev[lb] : cap + 1;
}

static const char *nearest_in(GPtrArray *candidates, const char *name) {
  size_t len = strlen(name);
  uint32_t cap = (uint32_t)MAX((size_t)2, len / 4);
  const char *best = NULL;
  uint32_t best_d = cap + 1;
  for (guint i = 0; i < candidates->len; i++) {
    const char *c = g_ptr_array_index(candidates, i);
    uint32_t d = sc_ops_edit_distance(name, c, best_d - 1 < cap ? best_d - 1 : cap);
    if (d < best_d) {
      best_d = d;
      best = c;
      if (d == 0)
        break;
    }
  }
  return best;
}

const char *sc_ops_nearest(const char *name) {
  g_return_val_if_fail(name != NULL, NULL);
  sc_ops_init();
  return nearest_in(reg_names, name);
}

static char *overload_list(GPtrArray *over) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < over->len; i++) {
    const sc_op *op = g_ptr_array_index(over, i);
    g_string_append_printf(s, "%s%s", i ? ", " : "", op->qualname);
  }
  return g_string_free(s, FALSE);
}

static void set_unknown(GError **error, const char *what, const char *name, const char *near) {
  if (near != NULL)
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP, "unknown %s '%s' (did you mean '%s'?)",
                what, name, near);
  else
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP, "unknown %s '%s'", what, name);
}

/* Find by qualified or bare "ns.name"; *ambiguous receives the overloads
 * when the bare name has several. */
static const sc_op *find_qualified(const char *name, GPtrArray **ambiguous) {
  *ambiguous = NULL;
  const sc_op *op = g_hash_table_lookup(reg_by_qualname, name);
  if (op != NULL)
    return op;
  GPtrArray *over = g_hash_table_lookup(reg_by_base, name);
  if (over != NULL) {
    if (over->len == 1)
      return g_ptr_array_index(over, 0);
    *ambiguous = over;
    return NULL;
  }
  /* "ns.name.default" also names the single overload of ns.name. */
  if (g_str_has_suffix(name, ".default")) {
    g_autofree char *base = g_strndup(name, strlen(name) - strlen(".default"));
    over = g_hash_table_lookup(reg_by_base, base);
    if (over != NULL && over->len == 1)
      return g_ptr_array_index(over, 0);
  }
  return NULL;
}

const sc_op *sc_ops_lookup(const char *qualname, GError **error) {
  g_return_val_if_fail(qualname != NULL, NULL);
  sc_ops_init();
  /* Accept the C++ spelling "aten::add.Tensor" too. */
  g_autofree char *norm = NULL;
  const char *colons = strstr(qualname, "::");
  if (colons != NULL) {
    norm = g_strdup_printf("%.*s.%s", (int)(colons - qualname), qualname, colons + 2);
    qualname = norm;
  }
  GPtrArray *amb = NULL;
  const sc_op *op = find_qualified(qualname, &amb);
  if (op != NULL)
    return op;
  if (amb != NULL) {
    g_autofree char *list = overload_list(amb);
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP,
                "operator '%s' is ambiguous: it has overloads %s (name one)", qualname, list);
    return NULL;
  }
  set_unknown(error, "operator", qualname, sc_ops_nearest(qualname));
  return NULL;
}

static const char *const func_ns_order[] = {"sc", "comm", "aten"};

/* "A.B" in BUF when it fits, else in a new string put in *OWNED (freed by
 * the caller): the name probes of sc_ops_lookup_func run for every call a
 * relation or a lemma names, and a format and an allocation per probe cost
 * more than the lookup. */
static const char *dotted(char *buf, size_t cap, const char *a, const char *b, char **owned) {
  size_t la = strlen(a), lb = strlen(b);
  if (la + lb + 2 > cap) {
    *owned = g_strconcat(a, ".", b, NULL);
    return *owned;
  }
  memcpy(buf, a, la);
  buf[la] = '.';
  memcpy(buf + la + 1, b, lb + 1);
  return buf;
}

const sc_op *sc_ops_lookup_func(const char *func, GError **error) {
  g_return_val_if_fail(func != NULL, NULL);
  sc_ops_init();
  const char *dot = strchr(func, '.');
  char buf[128];
  if (dot != NULL) {
    g_autofree char *first = NULL;
    const char *f = buf;
    if ((size_t)(dot - func) < sizeof buf) {
      memcpy(buf, func, (size_t)(dot - func));
      buf[dot - func] = '\0';
    } else {
      f = first = g_strndup(func, (gsize)(dot - func));
    }
    if (g_hash_table_contains(reg_namespaces, f))
      return sc_ops_lookup(func, error);
    /* "name.overload" */
    for (size_t i = 0; i < G_N_ELEMENTS(func_ns_order); i++) {
      g_autofree char *owned = NULL;
      const char *q = dotted(buf, sizeof buf, func_ns_order[i], func, &owned);
      const sc_op *op = g_hash_table_lookup(reg_by_qualname, q);
      if (op != NULL)
        return op;
    }
    for (uint32_t i = 0; i < reg_n_ops; i++) {
      g_autofree char *q = g_strdup_printf("%s.%s", reg_at(i)->ns, func);
      if (strcmp(q, reg_at(i)->qualname) == 0)
        return reg_at(i);
    }
    set_unknown(error, "function", func, nearest_in(reg_func_names, func));
    return NULL;
  }
  /* A bare name: namespaces sc, comm, aten first, then any other in table order. */
  for (size_t i = 0; i < G_N_ELEMENTS(func_ns_order); i++) {
    g_autofree char *owned = NULL;
    const char *base = dotted(buf, sizeof buf, func_ns_order[i], func, &owned);
    GPtrArray *over = g_hash_table_lookup(reg_by_base, base);
    if (over == NULL)
      continue;
    if (over->len == 1)
      return g_ptr_array_index(over, 0);
    g_autofree char *list = overload_list(over);
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP,
                "function '%s' is ambiguous: it has overloads %s (write name.overload)", func,
                list);
    return NULL;
  }
  for (uint32_t i = 0; i < reg_n_ops; i++) {
    if (strcmp(reg_at(i)->name, func) != 0)
      continue;
    g_autofree char *base = g_strdup_printf("%s.%s", reg_at(i)->ns, func);
    GPtrArray *over = g_hash_table_lookup(reg_by_base, base);
    if (over->len == 1)
      return reg_at(i);
    g_autofree char *list = overload_list(over);
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP,
                "function '%s' is ambiguous: it has overloads %s (write name.overload)", func,
                list);
    return NULL;
  }
  set_unknown(error, "function", func, nearest_in(reg_func_names, func));
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Binding                                                                   */

typedef struct {
  const sc_op *op;
  sc_symtab *st;
  sc_tensor_resolver resolve;
  void *resolve_env;
} sc_bind_ctx;

/* "string \"x\"", "int 3", "None", "list [1, \"a\"]". */
static char *describe_raw(const sc_value *v, const sc_symtab *st) {
  g_autofree char *text = sc_value_to_string(v, st, NULL, NULL);
  switch (v->kind) {
  case SC_VAL_NONE:
    return g_strdup("None");
  case SC_VAL_STR:
    return g_strdup_printf("string %s", text);
  case SC_VAL_LIST:
    return g_strdup_printf("list %s", text);
  default:
    return g_strdup_printf("%s %s", sc_value_kind_name(v->kind), text);
  }
}

static gboolean bind_fail(const sc_bind_ctx *c, const sc_arg *arg, const sc_value *raw,
                          const char *detail, GError **error) {
  g_autofree char *expected = sc_ops_arg_type_string(arg);
  g_autofree char *found = describe_raw(raw, c->st);
  g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_BIND, "argument '%s' of %s expects %s, found %s%s%s%s",
              arg->name, c->op->qualname, expected, found, detail ? " (" : "", detail ? detail : "",
              detail ? ")" : "");
  return FALSE;
}

static gboolean is_special_float(const char *s, double *out) {
  if (strcmp(s, "inf") == 0 || strcmp(s, "+inf") == 0 || strcmp(s, "Infinity") == 0) {
    *out = INFINITY;
    return TRUE;
  }
  if (strcmp(s, "-inf") == 0 || strcmp(s, "-Infinity") == 0) {
    *out = -INFINITY;
    return TRUE;
  }
  if (strcmp(s, "nan") == 0 || strcmp(s, "NaN") == 0) {
    *out = NAN;
    return TRUE;
  }
  return FALSE;
}

/* One int from a raw INT or a string expression.  *detail receives the
 * parse error (owned) when a string does not parse. */
static gboolean coerce_int(const sc_bind_ctx *c, const sc_value *raw, sc_dim *out, char **detail) {
  if (raw->kind == SC_VAL_INT) {
    *out = raw->u.i;
    return TRUE;
  }
  if (raw->kind == SC_VAL_STR) {
    if (c->st == NULL) {
      *detail = g_strdup("no symbols are declared");
      return FALSE;
    }
    g_autoptr(GError) err = NULL;
    if (!sc_dim_parse(c->st, raw->u.s, out, &err)) {
      *detail = g_strdup(err->message);
      return FALSE;
    }
    return TRUE;
  }
  return FALSE;
}

static gboolean coerce_tensor(const sc_bind_ctx *c, const sc_value *raw, sc_id *out, char **detail) {
  if (raw->kind == SC_VAL_TENSOR) {
    *out = raw->u.tensor;
    return TRUE;
  }
  if (raw->kind == SC_VAL_STR) {
    if (c->resolve != NULL && c->resolve(c->resolve_env, raw->u.s, out))
      return TRUE;
    *detail = g_strdup_printf("no tensor named '%s'", raw->u.s);
    return FALSE;
  }
  return FALSE;
}

/* Raw list items: LIST items, or the elements of an already typed list. */
static gboolean list_items(const sc_value *raw, sc_value **items, uint32_t *n, gboolean *owned) {
  *owned = FALSE;
  switch (raw->kind) {
  case SC_VAL_LIST:
    *items = raw->u.items.v;
    *n = raw->u.items.n;
    return TRUE;
  case SC_VAL_INT_LIST:
    *n = raw->u.ints.n;
    *items = *n ? g_new(sc_value, *n) : NULL;
    for (uint32_t i = 0; i < *n; i++)
      (*items)[i] = sc_value_dim(raw->u.ints.v[i]);
    *owned = TRUE;
    return TRUE;
  case SC_VAL_BOOL_LIST:
    *n = raw->u.bools.n;
    *items = *n ? g_new(sc_value, *n) : NULL;
    for (uint32_t i = 0; i < *n; i++)
      (*items)[i] = sc_value_bool(raw->u.bools.v[i]);
    *owned = TRUE;
    return TRUE;
  case SC_VAL_TENSOR_LIST:
    *n = raw->u.list.n;
    *items = *n ? g_new(sc_value, *n) : NULL;
    for (uint32_t i = 0; i < *n; i++)
      (*items)[i] = raw->u.list.ids[i] == SC_ID_NONE ? sc_value_none()
                                                      : sc_value_tensor(raw->u.list.ids[i]);
    *owned = TRUE;
    return TRUE;
  default:
    return FALSE;
  }
}

/* Coerce RAW to ARG's type into *out (cleared on failure). */
static gboolean coerce(const sc_bind_ctx *c, const sc_arg *arg, const sc_value *raw, sc_value *out,
                       GError **error) {
  *out = sc_value_none();
  g_autofree char *detail = NULL;
  if (arg->type == SC_ARG_IGNORED)
    return TRUE;
  if (raw->kind == SC_VAL_NONE) {
    if (arg->optional)
      return TRUE;
    return bind_fail(c, arg, raw, NULL, error);
  }
  switch (arg->type) {
  case SC_ARG_TENSOR: {
    sc_id t;
    if (!coerce_tensor(c, raw, &t, &detail))
      return bind_fail(c, arg, raw, detail, error);
    *out = sc_value_tensor(t);
    return TRUE;
  }
  case SC_ARG_TENSOR_LIST:
  case SC_ARG_TENSOR_OPT_LIST: {
    sc_value *items;
    uint32_t n;
    gboolean owned;
    if (!list_items(raw, &items, &n, &owned))
      return bind_fail(c, arg, raw, NULL, error);
    sc_id *ids = n ? g_new(sc_id, n) : NULL;
    gboolean ok = TRUE;
    for (uint32_t i = 0; i < n && ok; i++) {
      if (items[i].kind == SC_VAL_NONE && arg->type == SC_ARG_TENSOR_OPT_LIST) {
        ids[i] = SC_ID_NONE;
      } else if (!coerce_tensor(c, &items[i], &ids[i], &detail)) {
        g_autofree char *d = detail;
        detail = g_strdup_printf("item %u%s%s", i, d ? ": " : " is not a tensor name", d ? d : "");
        ok = FALSE;
      }
    }
    if (owned)
      g_free(items);
    if (!ok) {
      g_free(ids);
      return bind_fail(c, arg, raw, detail, error);
    }
    out->kind = SC_VAL_TENSOR_LIST;
    out->u.list.n = n;
    out->u.list.ids = ids;
    return TRUE;
  }
  case SC_ARG_INT: {
    sc_dim d;
    if (!coerce_int(c, raw, &d, &detail))
      return bind_fail(c, arg, raw, detail, error);
    *out = sc_value_dim(d);
    return TRUE;
  }
  case SC_ARG_INT_LIST: {
    sc_dim single;
    if (raw->kind == SC_VAL_INT || raw->kind == SC_VAL_STR) {
      if (!coerce_int(c, raw, &single, &detail))
        return bind_fail(c, arg, raw, detail, error);
      uint32_t n = arg->fixed_len ? arg->fixed_len : 1;
      out->kind = SC_VAL_INT_LIST;
      out->u.ints.n = n;
      out->u.ints.v = g_new(sc_dim, n);
      for (uint32_t i = 0; i < n; i++)
        out->u.ints.v[i] = single;
      return TRUE;
    }
    sc_value *items;
    uint32_t n;
    gboolean owned;
    if (!list_items(raw, &items, &n, &owned) || raw->kind == SC_VAL_BOOL_LIST ||
        raw->kind == SC_VAL_TENSOR_LIST) {
      if (owned)
        g_free(items);
      return bind_fail(c, arg, raw, NULL, error);
    }
    sc_dim *v = n ? g_new(sc_dim, n) : NULL;
    gboolean ok = TRUE;
    for (uint32_t i = 0; i < n && ok; i++) {
      char *d = NULL;
      if (!coerce_int(c, &items[i], &v[i], &d)) {
        detail = g_strdup_printf("item %u%s%s", i, d ? ": " : " is not an int", d ? d : "");
        g_free(d);
        ok = FALSE;
      }
    }
    if (owned)
      g_free(items);
    /* ATen's int[N] takes a list of any length (the kernel checks it);
     * only a single int is special: it is repeated N times. */
    if (!ok) {
      g_free(v);
      return bind_fail(c, arg, raw, detail, error);
    }
    out->kind = SC_VAL_INT_LIST;
    out->u.ints.n = n;
    out->u.ints.v = v;
    return TRUE;
  }
  case SC_ARG_FLOAT: {
    double f;
    if (raw->kind == SC_VAL_FLOAT) {
      *out = sc_value_float(raw->u.f);
      return TRUE;
    }
    if (raw->kind == SC_VAL_INT && sc_dim_is_const(raw->u.i)) {
      *out = sc_value_float((double)raw->u.i.value);
      return TRUE;
    }
    if (raw->kind == SC_VAL_STR && is_special_float(raw->u.s, &f)) {
      *out = sc_value_float(f);
      return TRUE;
    }
    return bind_fail(c, arg, raw, NULL, error);
  }
  case SC_ARG_BOOL:
    if (raw->kind != SC_VAL_BOOL)
      return bind_fail(c, arg, raw, NULL, error);
    *out = sc_value_bool(raw->u.b);
    return TRUE;
  case SC_ARG_BOOL_LIST: {
    if (raw->kind == SC_VAL_BOOL && arg->fixed_len) {
      out->kind = SC_VAL_BOOL_LIST;
      out->u.bools.n = arg->fixed_len;
      out->u.bools.v = g_new(gboolean, arg->fixed_len);
      for (uint32_t i = 0; i < arg->fixed_len; i++)
        out->u.bools.v[i] = raw->u.b;
      return TRUE;
    }
    sc_value *items;
    uint32_t n;
    gboolean owned;
    if (!list_items(raw, &items, &n, &owned))
      return bind_fail(c, arg, raw, NULL, error);
    gboolean ok = !arg->fixed_len || n == arg->fixed_len;
    for (uint32_t i = 0; i < n && ok; i++)
      ok = items[i].kind == SC_VAL_BOOL;
    gboolean *v = NULL;
    if (ok && n) {
      v = g_new(gboolean, n);
      for (uint32_t i = 0; i < n; i++)
        v[i] = items[i].u.b;
    }
    if (owned)
      g_free(items);
    if (!ok)
      return bind_fail(c, arg, raw, NULL, error);
    out->kind = SC_VAL_BOOL_LIST;
    out->u.bools.n = n;
    out->u.bools.v = v;
    return TRUE;
  }
  case SC_ARG_STR:
    if (raw->kind != SC_VAL_STR)
      return bind_fail(c, arg, raw, NULL, error);
    *out = sc_value_str(raw->u.s);
    return TRUE;
  case SC_ARG_SCALAR: {
    double f;
    if (raw->kind == SC_VAL_INT || raw->kind == SC_VAL_FLOAT || raw->kind == SC_VAL_BOOL) {
      *out = *raw;
      return TRUE;
    }
    if (raw->kind == SC_VAL_STR) {
      if (is_special_float(raw->u.s, &f)) {
        *out = sc_value_float(f);
        return TRUE;
      }
      sc_dim d;
      if (coerce_int(c, raw, &d, &detail)) {
        *out = sc_value_dim(d);
        return TRUE;
      }
    }
    return bind_fail(c, arg, raw, detail, error);
  }
  case SC_ARG_DTYPE: {
    if (raw->kind == SC_VAL_DTYPE) {
      *out = *raw;
      return TRUE;
    }
    sc_dtype d;
    if (raw->kind == SC_VAL_STR && sc_dtype_from_name(raw->u.s, &d)) {
      out->kind = SC_VAL_DTYPE;
      out->u.dtype = d;
      return TRUE;
    }
    return bind_fail(c, arg, raw, raw->kind == SC_VAL_STR ? "unknown dtype" : NULL, error);
  }
  case SC_ARG_IGNORED:
    return TRUE;
  }
  return bind_fail(c, arg, raw, NULL, error);
}

static void set_loc(sc_bind_loc *loc, gboolean is_kwarg, uint32_t index) {
  if (loc != NULL) {
    loc->is_kwarg = is_kwarg;
    loc->index = index;
  }
}

static const char *nearest_arg(const sc_op *op, const char *name) {
  const char *best = NULL;
  uint32_t best_d = 3;
  for (uint32_t i = 0; i < op->n_args; i++) {
    uint32_t d = sc_ops_edit_distance(name, op->args[i].name, 2);
    if (d < best_d) {
      best_d = d;
      best = op->args[i].name;
    }
  }
  return best;
}

gboolean sc_ops_bind(const sc_op *op, sc_symtab *st,
                     const sc_value *positional, uint32_t n_positional,
                     const char *const *kw_names, const sc_value *kw_values, uint32_t n_kw,
                     sc_tensor_resolver resolve, void *resolve_env,
                     sc_value *bound_out, sc_bind_loc *loc, GError **error) {
  g_return_val_if_fail(op != NULL && (bound_out != NULL || op->n_args == 0), FALSE);
  g_return_val_if_fail(n_positional == 0 || positional != NULL, FALSE);
  g_return_val_if_fail(n_kw == 0 || (kw_names != NULL && kw_values != NULL), FALSE);
  sc_bind_ctx c = {op, st, resolve, resolve_env};
  set_loc(loc, FALSE, UINT32_MAX);
  for (uint32_t i = 0; i < op->n_args; i++)
    bound_out[i] = sc_value_none();
  g_autofree gboolean *set = g_new0(gboolean, op->n_args ? op->n_args : 1);

  uint32_t p = 0;     /* next positional item */
  uint32_t a = 0;     /* next schema argument */
  /* Variadic leading tensors of sc.* ops: cat(a, b, dim=0), sum(a, b, c). */
  if (strcmp(op->ns, "sc") == 0 && op->n_args > 0 && op->args[0].type == SC_ARG_TENSOR_LIST &&
      n_positional > 0 &&
      (positional[0].kind == SC_VAL_STR || positional[0].kind == SC_VAL_TENSOR)) {
    uint32_t n = 0;
    while (n < n_positional &&
           (positional[n].kind == SC_VAL_STR || positional[n].kind == SC_VAL_TENSOR))
      n++;
    sc_id *ids = g_new(sc_id, n);
    for (uint32_t i = 0; i < n; i++) {
      g_autofree char *detail = NULL;
      if (!coerce_tensor(&c, &positional[i], &ids[i], &detail)) {
        g_free(ids);
        set_loc(loc, FALSE, i);
        return bind_fail(&c, &op->args[0], &positional[i], detail, error);
      }
    }
    bound_out[0].kind = SC_VAL_TENSOR_LIST;
    bound_out[0].u.list.n = n;
    bound_out[0].u.list.ids = ids;
    set[0] = TRUE;
    p = n;
    a = 1;
  }

  for (; p < n_positional; p++, a++) {
    if (a >= op->n_args || op->args[a].kwarg_only) {
      set_loc(loc, FALSE, p);
      g_autofree char *found = describe_raw(&positional[p], st);
      if (a < op->n_args)
        g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_BIND,
                    "argument '%s' of %s is keyword-only, found positional %s (too many "
                    "positional arguments)",
                    op->args[a].name, op->qualname, found);
      else
        g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_BIND,
                    "too many positional arguments for %s: it takes %u, found %s at position %u",
                    op->qualname, a, found, p);
      goto fail;
    }
    if (!coerce(&c, &op->args[a], &positional[p], &bound_out[a], error)) {
      set_loc(loc, FALSE, p);
      goto fail;
    }
    set[a] = TRUE;
  }

  for (uint32_t k = 0; k < n_kw; k++) {
    int32_t idx = sc_ops_arg_index(op, kw_names[k]);
    if (idx < 0) {
      set_loc(loc, TRUE, k);
      const char *near = nearest_arg(op, kw_names[k]);
      if (near != NULL)
        g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_BIND,
                    "unknown keyword argument '%s' for %s (did you mean '%s'?)", kw_names[k],
                    op->qualname, near);
      else
        g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_BIND,
                    "unknown keyword argument '%s' for %s", kw_names[k], op->qualname);
      goto fail;
    }
    if (set[idx]) {
      set_loc(loc, TRUE, k);
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_BIND,
                  "argument '%s' of %s is given twice (positional and keyword)", kw_names[k],
                  op->qualname);
      goto fail;
    }
    if (!coerce(&c, &op->args[idx], &kw_values[k], &bound_out[idx], error)) {
      set_loc(loc, TRUE, k);
      goto fail;
    }
    set[idx] = TRUE;
  }

  for (uint32_t i = 0; i < op->n_args; i++) {
    if (set[i])
      continue;
    const sc_arg *arg = &op->args[i];
    if (arg->has_default) {
      sc_value_copy(&bound_out[i], &arg->default_value);
    } else if (arg->type == SC_ARG_IGNORED) {
      bound_out[i] = sc_value_none();
    } else {
      g_autofree char *expected = sc_ops_arg_type_string(arg);
      set_loc(loc, FALSE, UINT32_MAX);
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_BIND, "missing argument '%s' of %s (expects %s)",
                  arg->name, op->qualname, expected);
      goto fail;
    }
  }
  return TRUE;

fail:
  for (uint32_t i = 0; i < op->n_args; i++)
    sc_value_clear(&bound_out[i]);
  return FALSE;
}

/* ------------------------------------------------------------------------ */
/* Shape inference                                                           */

/* Symbolic result sizes in the symtab's current normal form.  A rule may
 * copy a size from its arguments, made before an assumption that the
 * driver learned later (a data-dependent size proved equal to another,
 * docs/adding-an-operator.md): results are then rewritten with it, so that
 * equal sizes are identical and the e-graph's attributes built from result
 * shapes (sc.view's shape) agree.  Multiplying by 1 rewrites a dim into
 * its current form and changes nothing else (sym.h). */
static void normalize_result_dims(sc_symtab *st, GArray *out, guint from) {
  if (st == NULL)
    return;
  for (guint i = from; i < out->len; i++) {
    sc_shape *s = &g_array_index(out, sc_ttype, i).shape;
    for (uint32_t d = 0; d < s->rank; d++)
      if (!sc_dim_is_const(s->dims[d]))
        s->dims[d] = sc_dim_mul(st, s->dims[d], sc_dim_const(1));
  }
}

gboolean sc_ops_infer(const sc_op_call *call, GArray *out, GError **error) {
  g_return_val_if_fail(call != NULL && call->op != NULL && out != NULL, FALSE);
  const sc_op *op = call->op;
  if (op->shape == NULL) {
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE, "%s has no shape rule", op->qualname);
    return FALSE;
  }
  gboolean overflow_before = call->symtab != NULL && sc_symtab_overflowed(call->symtab);
  guint before = out->len;
  if (!op->shape(call, out, error)) {
    g_array_set_size(out, before);
    return FALSE;
  }
  if (!overflow_before && call->symtab != NULL && sc_symtab_overflowed(call->symtab)) {
    g_array_set_size(out, before);
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                "%s.%s: a result size overflows 64-bit integers", op->ns, op->name);
    return FALSE;
  }
  guint produced = out->len - before;
  if (!op->results_variadic && produced != op->n_results) {
    g_array_set_size(out, before);
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                "internal error: the shape rule of %s produced %u results, its schema has %u",
                op->qualname, produced, op->n_results);
    return FALSE;
  }
  for (guint i = before; i < out->len; i++) {
    if (g_array_index(out, sc_ttype, i).shape.rank > SC_MAX_RANK) {
      g_array_set_size(out, before);
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE, "internal error: %s produced rank > %d",
                  op->qualname, SC_MAX_RANK);
      return FALSE;
    }
  }
  normalize_result_dims(call->symtab, out, before);
  return TRUE;
}
