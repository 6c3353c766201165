/* texpr.c — binding relation expressions to a graph (texpr.h).
 *
 * Binding is bottom-up: the call's sub-expressions are bound first, then
 * the call's items are turned into raw sc_values (names and quoted sizes as
 * strings, numbers as numbers, lists as lists) and bound by the operator's
 * schema with sc_ops_bind.  A bound sub-expression is passed to the binder
 * as a placeholder string "\x01K" (K its index among the call children)
 * that the resolver turns into the id n_tensors + K; graph names resolve to
 * graph ids.  Afterwards every tensor id in the bound values is rewritten
 * to an index into the node's children (a leaf is made for each graph id),
 * and the node's type is inferred with the op's shape rule over its
 * children's types.  Tensor names never contain control characters (the
 * loader refuses them), so a placeholder cannot collide with a name.
 *
 * Invariant: a CALL node's tensor-valued arguments hold indices < its
 * n_children, and every child is referenced exactly once. */
#include "shardcheck/texpr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(sc-texpr-error-quark, sc_texpr_error)

struct sc_texpr {
  sc_texpr_kind kind;
  sc_ttype type;
  sc_graph *graph;
  uint32_t start, end;
  sc_id tensor;          /* TENSOR */
  const sc_op *op;       /* CALL */
  sc_value *args;        /* CALL: op->n_args values */
  uint32_t n_children;
  sc_texpr **children;
  gboolean packed;       /* args and children live in the node's own block */
  struct texpr_args *shared; /* args live here, shared with renamed copies, or NULL */
};

/* The arguments of a bound CALL node, shared by reference with its
 * renamed copies (sc_texpr_rename: a renaming changes leaves, never
 * arguments; tensor arguments are child indices).  Immutable once made;
 * the count is atomic because copies are freed on any thread. */
typedef struct texpr_args {
  gint ref;
  sc_value v[];
} texpr_args;

/* T's arguments (op->n_args values in T->args, owned) moved into a shared
 * block. */
static void share_args(sc_texpr *t) {
  uint32_t n = t->op->n_args ? t->op->n_args : 1;
  texpr_args *a = g_malloc(sizeof(texpr_args) + n * sizeof(sc_value));
  a->ref = 1;
  memcpy(a->v, t->args, n * sizeof(sc_value));
  g_free(t->args);
  t->args = a->v;
  t->shared = a;
}

void sc_texpr_free(sc_texpr *t) {
  if (t == NULL)
    return;
  if (t->shared != NULL) {
    if (g_atomic_int_dec_and_test(&t->shared->ref)) {
      for (uint32_t i = 0; i < t->op->n_args; i++)
        sc_value_clear(&t->shared->v[i]);
      g_free(t->shared);
    }
  } else if (t->args != NULL) {
    for (uint32_t i = 0; i < t->op->n_args; i++)
      sc_value_clear(&t->args[i]);
    if (!t->packed)
      g_free(t->args);
  }
  for (uint32_t i = 0; i < t->n_children; i++)
    sc_texpr_free(t->children[i]);
  if (!t->packed)
    g_free(t->children);
  g_free(t);
}

/* A copy of T with each leaf tensor L replaced by RENAME(L, USER); types,
 * spans and arguments are copied as they are (the caller keeps types:
 * a renaming between tensors of equal types). */
sc_texpr *sc_texpr_rename(const sc_texpr *t, sc_id (*rename)(sc_id tensor, void *user),
                          void *user) {
  /* one block per node: the node, its arguments, its children (packed);
   * the layer memo makes millions of these copies (memo.c) */
  size_t n_args = t->args != NULL && t->shared == NULL ? (t->op->n_args ? t->op->n_args : 1) : 0;
  size_t off_args = (sizeof(sc_texpr) + _Alignof(sc_value) - 1) / _Alignof(sc_value) *
                    _Alignof(sc_value);
  size_t off_kids = off_args + n_args * sizeof(sc_value);
  off_kids = (off_kids + _Alignof(sc_texpr *) - 1) / _Alignof(sc_texpr *) * _Alignof(sc_texpr *);
  char *block = g_malloc0(off_kids + t->n_children * sizeof(sc_texpr *));
  sc_texpr *c = (sc_texpr *)(void *)block;
  c->packed = TRUE;
  c->kind = t->kind;
  c->type = t->type;
  c->graph = t->graph;
  c->start = t->start;
  c->end = t->end;
  c->tensor = t->kind == SC_TEXPR_TENSOR ? rename(t->tensor, user) : t->tensor;
  c->op = t->op;
  if (t->shared != NULL) {
    g_atomic_int_inc(&t->shared->ref);
    c->shared = t->shared;
    c->args = t->shared->v;
  } else if (t->args != NULL) {
    c->args = (sc_value *)(void *)(block + off_args);
    for (uint32_t i = 0; i < t->op->n_args; i++)
      sc_value_copy(&c->args[i], &t->args[i]);
  }
  c->n_children = t->n_children;
  if (t->n_children) {
    c->children = (sc_texpr **)(void *)(block + off_kids);
    for (uint32_t i = 0; i < t->n_children; i++)
      c->children[i] = sc_texpr_rename(t->children[i], rename, user);
  }
  return c;
}

/* ---- accessors ---- */

sc_texpr_kind sc_texpr_get_kind(const sc_texpr *t) { return t->kind; }
const sc_ttype *sc_texpr_type(const sc_texpr *t) { return &t->type; }
sc_graph *sc_texpr_graph(const sc_texpr *t) { return t->graph; }
sc_id sc_texpr_tensor(const sc_texpr *t) {
  return t->kind == SC_TEXPR_TENSOR ? t->tensor : SC_ID_NONE;
}
const sc_op *sc_texpr_op(const sc_texpr *t) { return t->op; }
const sc_value *sc_texpr_args(const sc_texpr *t) { return t->args; }
uint32_t sc_texpr_n_children(const sc_texpr *t) { return t->n_children; }
const sc_texpr *sc_texpr_child(const sc_texpr *t, uint32_t i) {
  g_return_val_if_fail(i < t->n_children, NULL);
  return t->children[i];
}
void sc_texpr_span(const sc_texpr *t, uint32_t *start, uint32_t *end) {
  if (start != NULL)
    *start = t->start;
  if (end != NULL)
    *end = t->end;
}

void sc_texpr_collect_leaves(const sc_texpr *t, GArray *leaves) {
  if (t->kind == SC_TEXPR_TENSOR) {
    for (guint i = 0; i < leaves->len; i++)
      if (g_array_index(leaves, sc_id, i) == t->tensor)
        return;
    g_array_append_val(leaves, t->tensor);
    return;
  }
  for (uint32_t i = 0; i < t->n_children; i++)
    sc_texpr_collect_leaves(t->children[i], leaves);
}

/* ---- printing ---- */

static void append_string_literal(GString *out, const char *s) {
  g_string_append_c(out, '"');
  for (const char *p = s; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_c(out, '\\');
    g_string_append_c(out, *p);
  }
  g_string_append_c(out, '"');
}

static void append_dim(GString *out, const sc_symtab *st, sc_dim d) {
  if (sc_dim_is_const(d)) {
    g_string_append_printf(out, "%" G_GINT64_FORMAT, (gint64)d.value);
    return;
  }
  g_autofree char *s = sc_dim_to_string(st, d);
  append_string_literal(out, s);
}

static void append_float(GString *out, double f) {
  if (isnan(f)) {
    g_string_append(out, "nan");
    return;
  }
  if (isinf(f)) {
    g_string_append(out, f < 0 ? "-inf" : "inf");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_dtostr(buf, sizeof buf, f);
  g_string_append(out, buf);
  if (strpbrk(buf, ".eE") == NULL)
    g_string_append(out, ".0");
}

static void append_value(GString *out, const sc_texpr *t, const sc_value *v) {
  const sc_symtab *st = sc_graph_symtab(t->graph);
  switch (v->kind) {
  case SC_VAL_NONE:
    g_string_append(out, "None");
    break;
  case SC_VAL_TENSOR:
    sc_texpr_append(out, t->children[v->u.tensor]);
    break;
  case SC_VAL_TENSOR_LIST:
    g_string_append_c(out, '[');
    for (uint32_t i = 0; i < v->u.list.n; i++) {
      if (i > 0)
        g_string_append(out, ", ");
      if (v->u.list.ids[i] == SC_ID_NONE)
        g_string_append(out, "None");
      else
        sc_texpr_append(out, t->children[v->u.list.ids[i]]);
    }
    g_string_append_c(out, ']');
    break;
  case SC_VAL_INT:
    append_dim(out, st, v->u.i);
    break;
  case SC_VAL_INT_LIST:
    g_string_append_c(out, '[');
    for (uint32_t i = 0; i < v->u.ints.n; i++) {
      if (i > 0)
        g_string_append(out, ", ");
      append_dim(out, st, v->u.ints.v[i]);
    }
    g_string_append_c(out, ']');
    break;
  case SC_VAL_FLOAT:
    append_float(out, v->u.f);
    break;
  case SC_VAL_BOOL:
    g_string_append(out, v->u.b ? "True" : "False");
    break;
  case SC_VAL_BOOL_LIST:
    g_string_append_c(out, '[');
    for (uint32_t i = 0; i < v->u.bools.n; i++)
      g_string_append_printf(out, "%s%s", i > 0 ? ", " : "", v->u.bools.v[i] ? "True" : "False");
    g_string_append_c(out, ']');
    break;
  case SC_VAL_STR:
    append_string_literal(out, v->u.s);
    break;
  case SC_VAL_DTYPE:
    g_string_append(out, sc_dtype_name(v->u.dtype));
    break;
  case SC_VAL_LIST:
    g_string_append(out, "[?]");
    break;
  }
}

static gboolean is_sc_op(const sc_op *op) { return strcmp(op->ns, "sc") == 0; }

/* Does NAME lex as a NAME token of the expression language (IDENT { "."
 * SEGMENT }, and not a bare word that means something else)?  Other names
 * print as quoted strings, which bind back to the tensor. */
static gboolean plain_name(const char *name) {
  if (!(g_ascii_isalpha(name[0]) || name[0] == '_'))
    return FALSE;
  for (const char *p = name; *p; p++) {
    if (*p == '.') {
      if (!(g_ascii_isalnum(p[1]) || p[1] == '_'))
        return FALSE;
    } else if (!(g_ascii_isalnum(*p) || *p == '_')) {
      return FALSE;
    }
  }
  return strcmp(name, "inf") != 0 && strcmp(name, "nan") != 0 && strcmp(name, "True") != 0 &&
         strcmp(name, "False") != 0 && strcmp(name, "None") != 0;
}

void sc_texpr_append(GString *out, const sc_texpr *t) {
  if (t->kind == SC_TEXPR_TENSOR) {
    const char *name = sc_graph_name_of(t->graph, t->tensor);
    if (plain_name(name))
      g_string_append(out, name);
    else
      append_string_literal(out, name);
    return;
  }
  const sc_op *op = t->op;
  g_string_append(out, is_sc_op(op) ? op->name : op->qualname);
  g_string_append_c(out, '(');
  gboolean positional = TRUE, first = TRUE;
  for (uint32_t i = 0; i < op->n_args; i++) {
    const sc_arg *a = &op->args[i];
    const sc_value *v = &t->args[i];
    if (positional && i == 0 && is_sc_op(op) && v->kind == SC_VAL_TENSOR_LIST) {
      for (uint32_t k = 0; k < v->u.list.n; k++) {
        if (!first)
          g_string_append(out, ", ");
        first = FALSE;
        sc_texpr_append(out, t->children[v->u.list.ids[k]]);
      }
      continue;
    }
    if (positional && !a->kwarg_only && v->kind == SC_VAL_TENSOR) {
      if (!first)
        g_string_append(out, ", ");
      first = FALSE;
      sc_texpr_append(out, t->children[v->u.tensor]);
      continue;
    }
    positional = FALSE;
    if (v->kind == SC_VAL_NONE)
      continue;
    if (a->has_default && sc_value_equal(v, &a->default_value) &&
        !g_str_has_prefix(a->name, "dim"))
      continue;
    if (!first)
      g_string_append(out, ", ");
    first = FALSE;
    g_string_append_printf(out, "%s=", a->name);
    append_value(out, t, v);
  }
  g_string_append_c(out, ')');
}

char *sc_texpr_to_string(const sc_texpr *t) {
  GString *s = g_string_new(NULL);
  sc_texpr_append(s, t);
  return g_string_free(s, FALSE);
}

gboolean sc_texpr_equal(const sc_texpr *a, const sc_texpr *b) {
  if (a->kind != b->kind || a->graph != b->graph)
    return FALSE;
  if (a->kind == SC_TEXPR_TENSOR)
    return a->tensor == b->tensor;
  if (a->op != b->op || a->n_children != b->n_children)
    return FALSE;
  for (uint32_t i = 0; i < a->op->n_args; i++)
    if (!sc_value_equal(&a->args[i], &b->args[i]))
      return FALSE;
  for (uint32_t i = 0; i < a->n_children; i++)
    if (!sc_texpr_equal(a->children[i], b->children[i]))
      return FALSE;
  return TRUE;
}

/* ---- binding ---- */

typedef struct {
  sc_graph *g;
  uint32_t n_tensors;
  uint32_t n_calls;        /* call children of the node being bound */
  gboolean *call_used;
  char *unknown;           /* first name the resolver did not know */
} resolve_env;

static gboolean resolve(void *env, const char *name, sc_id *out) {
  resolve_env *r = env;
  if (name[0] == '\x01') {
    char *end = NULL;
    unsigned long k = strtoul(name + 1, &end, 10);
    if (end == name + 1 || *end != '\0' || k >= r->n_calls)
      return FALSE;
    r->call_used[k] = TRUE;
    *out = r->n_tensors + (sc_id)k;
    return TRUE;
  }
  sc_id id = sc_graph_find_tensor(r->g, name);
  if (id == SC_ID_NONE) {
    if (r->unknown == NULL)
      r->unknown = g_strdup(name);
    return FALSE;
  }
  *out = id;
  return TRUE;
}

/* The first NAME (or STRING) item NAME among E's own items (searching
 * lists, not sub-calls), skipping those in USED (may be NULL). */
static const sc_expr *find_name_unused(const sc_expr *e, const char *name, GPtrArray *used,
                                       gboolean top) {
  if (!top && (e->kind == SC_EXPR_NAME || e->kind == SC_EXPR_STRING) &&
      strcmp(e->text, name) == 0) {
    if (used == NULL)
      return e;
    for (guint i = 0; i < used->len; i++)
      if (g_ptr_array_index(used, i) == e)
        return NULL;
    return e;
  }
  if (top || e->kind == SC_EXPR_LIST)
    for (uint32_t i = 0; i < e->n_args; i++) {
      if (e->args[i]->kind == SC_EXPR_CALL)
        continue; /* names inside sub-calls belong to them */
      const sc_expr *f = find_name_unused(e->args[i], name, used, FALSE);
      if (f != NULL)
        return f;
    }
  return NULL;
}

static const sc_expr *find_name(const sc_expr *e, const char *name) {
  return find_name_unused(e, name, NULL, TRUE);
}

static sc_texpr *bind_expr(const sc_expr *e, sc_graph *g, gboolean clean_only, GError **error);

/* Turn an item of a call into a raw value; sub-calls are bound and become
 * placeholders.  Returns FALSE with an error. */
static gboolean raw_item(const sc_expr *e, sc_graph *g, gboolean clean_only, GPtrArray *calls,
                         sc_value *out, GError **error) {
  switch (e->kind) {
  case SC_EXPR_NAME:
    if ((strcmp(e->text, "True") == 0 || strcmp(e->text, "False") == 0) &&
        sc_graph_find_tensor(g, e->text) == SC_ID_NONE) {
      *out = sc_value_bool(e->text[0] == 'T');
      return TRUE;
    }
    if (strcmp(e->text, "None") == 0 && sc_graph_find_tensor(g, e->text) == SC_ID_NONE) {
      *out = sc_value_none();
      return TRUE;
    }
    *out = sc_value_str(e->text);
    return TRUE;
  case SC_EXPR_STRING:
    *out = sc_value_str(e->text);
    return TRUE;
  case SC_EXPR_INT:
    *out = sc_value_int(e->ival);
    return TRUE;
  case SC_EXPR_FLOAT:
    *out = sc_value_float(e->fval);
    return TRUE;
  case SC_EXPR_VAR:
    g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID,
                "col %u: pattern variable '?%s' is not allowed here", e->start + 1, e->text);
    return FALSE;
  case SC_EXPR_CALL: {
    sc_texpr *child = bind_expr(e, g, clean_only, error);
    if (child == NULL)
      return FALSE;
    g_autofree char *ph = g_strdup_printf("\x01%u", calls->len);
    g_ptr_array_add(calls, child);
    *out = sc_value_str(ph);
    return TRUE;
  }
  case SC_EXPR_LIST: {
    sc_value v;
    v.kind = SC_VAL_LIST;
    v.u.items.n = e->n_args;
    v.u.items.v = g_new0(sc_value, e->n_args ? e->n_args : 1);
    for (uint32_t i = 0; i < e->n_args; i++) {
      v.u.items.v[i] = sc_value_none();
      if (!raw_item(e->args[i], g, clean_only, calls, &v.u.items.v[i], error)) {
        sc_value_clear(&v);
        return FALSE;
      }
    }
    *out = v;
    return TRUE;
  }
  }
  g_assert_not_reached();
  return FALSE;
}

static sc_texpr *new_leaf(sc_graph *g, sc_id tensor, uint32_t start, uint32_t end) {
  sc_texpr *t = g_new0(sc_texpr, 1);
  t->kind = SC_TEXPR_TENSOR;
  t->graph = g;
  t->tensor = tensor;
  t->type = sc_graph_tensor(g, tensor)->type;
  t->start = start;
  t->end = end;
  return t;
}

static const sc_ttype *child_type(void *env, sc_id i) {
  sc_texpr *t = env;
  if (i >= t->n_children)
    return NULL;
  return &t->children[i]->type;
}

/* The list of clean operators, for messages. */
static char *clean_op_list(void) {
  GString *s = g_string_new(NULL);
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    if (!(op->flags & SC_OP_CLEAN))
      continue;
    gboolean dup = FALSE; /* several overloads of one name: list it once */
    for (uint32_t j = 0; j < i && !dup; j++)
      dup = (sc_ops_at(j)->flags & SC_OP_CLEAN) && strcmp(sc_ops_at(j)->name, op->name) == 0;
    if (!dup)
      g_string_append_printf(s, "%s%s", s->len ? ", " : "", op->name);
  }
  return g_string_free(s, FALSE);
}

/* Rewrite the tensor id *ID (graph id or n_tensors + call index) into a
 * child index, making leaves as needed. */
static void adopt(sc_texpr *t, const sc_expr *e, GPtrArray *calls, uint32_t n_tensors,
                  GPtrArray *children, GPtrArray *used, sc_id *id) {
  if (*id == SC_ID_NONE)
    return;
  sc_texpr *child;
  if (*id >= n_tensors) {
    child = g_ptr_array_index(calls, *id - n_tensors);
    g_ptr_array_index(calls, *id - n_tensors) = NULL;
  } else {
    const char *name = sc_graph_name_of(t->graph, *id);
    const sc_expr *at = find_name_unused(e, name, used, TRUE);
    if (at != NULL)
      g_ptr_array_add(used, (gpointer)at);
    child = new_leaf(t->graph, *id, at ? at->start : e->start, at ? at->end : e->end);
  }
  *id = children->len;
  g_ptr_array_add(children, child);
}

static sc_texpr *bind_call(const sc_expr *e, sc_graph *g, gboolean clean_only, GError **error) {
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup_func(e->text, &err);
  if (op == NULL) {
    g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID, "col %u: %s", e->start + 1,
                err->message);
    g_error_free(err);
    return NULL;
  }
  if (clean_only && !(op->flags & SC_OP_CLEAN)) {
    g_autofree char *list = clean_op_list();
    g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_NOT_CLEAN,
                "col %u: %s is not a clean operator; relations may use %s", e->start + 1,
                e->text, list);
    return NULL;
  }

  /* Raw items: positional first, then keywords, as written. */
  uint32_t n_pos = 0, n_kw = 0;
  for (uint32_t i = 0; i < e->n_args; i++) {
    if (e->keys[i] == NULL) {
      if (n_kw > 0) {
        g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID,
                    "col %u: positional argument after a keyword argument",
                    e->args[i]->start + 1);
        return NULL;
      }
      n_pos++;
    } else {
      n_kw++;
    }
  }
  g_autoptr(GPtrArray) calls = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  sc_value *pos = g_new0(sc_value, n_pos ? n_pos : 1);
  sc_value *kw = g_new0(sc_value, n_kw ? n_kw : 1);
  const char **kw_names = g_new0(const char *, n_kw ? n_kw : 1);
  const sc_expr **pos_e = g_new0(const sc_expr *, n_pos ? n_pos : 1);
  const sc_expr **kw_e = g_new0(const sc_expr *, n_kw ? n_kw : 1);
  sc_value *bound = NULL;
  sc_texpr *t = NULL;
  resolve_env env = {g, sc_graph_n_tensors(g), 0, NULL, NULL};
  uint32_t ip = 0, ik = 0;
  gboolean ok = TRUE;
  for (uint32_t i = 0; i < e->n_args && ok; i++) {
    if (e->keys[i] == NULL) {
      pos_e[ip] = e->args[i];
      ok = raw_item(e->args[i], g, clean_only, calls, &pos[ip++], error);
    } else {
      kw_e[ik] = e->args[i];
      kw_names[ik] = e->keys[i];
      ok = raw_item(e->args[i], g, clean_only, calls, &kw[ik++], error);
    }
  }
  if (!ok)
    goto out;

  env.n_calls = calls->len;
  env.call_used = g_new0(gboolean, calls->len ? calls->len : 1);
  bound = g_new0(sc_value, op->n_args ? op->n_args : 1);
  sc_bind_loc loc = {FALSE, UINT32_MAX};
  if (!sc_ops_bind(op, sc_graph_symtab(g), pos, n_pos, kw_names, kw, n_kw, resolve, &env,
                   bound, &loc, &err)) {
    const sc_expr *at = NULL;
    if (loc.index != UINT32_MAX)
      at = loc.is_kwarg ? (loc.index < n_kw ? kw_e[loc.index] : NULL)
                        : (loc.index < n_pos ? pos_e[loc.index] : NULL);
    if (env.unknown != NULL) {
      const sc_expr *name_at = find_name(e, env.unknown);
      if (name_at != NULL)
        at = name_at;
      g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_UNKNOWN_TENSOR,
                  "col %u: unknown tensor '%s' (the graph has no tensor of that name)",
                  (at ? at : e)->start + 1, env.unknown);
    } else if (at != NULL && at->kind == SC_EXPR_CALL && strstr(err->message, ", found ")) {
      /* Do not show the placeholder: say what was found. */
      const char *cut = strstr(err->message, ", found ");
      g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID,
                  "col %u: %.*s, found a tensor expression", at->start + 1,
                  (int)(cut - err->message), err->message);
    } else {
      g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID, "col %u: %s",
                  (at ? at : e)->start + 1, err->message);
    }
    g_error_free(err);
    ok = FALSE;
    goto out;
  }
  for (uint32_t k = 0; k < calls->len; k++) {
    if (!env.call_used[k]) {
      sc_texpr *c = g_ptr_array_index(calls, k);
      g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID,
                  "col %u: a tensor expression where %s expects a value", c->start + 1,
                  op->qualname);
      ok = FALSE;
      goto out;
    }
  }

  t = g_new0(sc_texpr, 1);
  t->kind = SC_TEXPR_CALL;
  t->graph = g;
  t->op = op;
  t->start = e->start;
  t->end = e->end;
  t->args = g_steal_pointer(&bound);
  {
    GPtrArray *children = g_ptr_array_new();
    g_autoptr(GPtrArray) used = g_ptr_array_new();
    for (uint32_t i = 0; i < op->n_args; i++) {
      sc_value *v = &t->args[i];
      if (v->kind == SC_VAL_TENSOR)
        adopt(t, e, calls, env.n_tensors, children, used, &v->u.tensor);
      else if (v->kind == SC_VAL_TENSOR_LIST)
        for (uint32_t k = 0; k < v->u.list.n; k++)
          adopt(t, e, calls, env.n_tensors, children, used, &v->u.list.ids[k]);
    }
    t->n_children = children->len;
    t->children = (sc_texpr **)g_ptr_array_free(children, FALSE);
  }

  {
    g_autoptr(GArray) out = g_array_new(FALSE, TRUE, sizeof(sc_ttype));
    sc_op_call call = {op, t->args, child_type, t, sc_graph_symtab(g)};
    if (!sc_ops_infer(&call, out, &err)) {
      g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID, "col %u: %s", e->start + 1,
                  err->message);
      g_error_free(err);
      ok = FALSE;
      goto out;
    }
    if (out->len != 1) {
      g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID,
                  "col %u: %s gives %u results; an expression must give one tensor",
                  e->start + 1, op->qualname, out->len);
      ok = FALSE;
      goto out;
    }
    t->type = g_array_index(out, sc_ttype, 0);
  }

  if (clean_only && is_sc_op(op) && strcmp(op->name, "sum") == 0) {
    for (uint32_t i = 0; i < t->n_children && ok; i++)
      for (uint32_t j = 0; j < i && ok; j++)
        if (sc_texpr_equal(t->children[i], t->children[j])) {
          g_autofree char *s = sc_texpr_to_string(t->children[i]);
          g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_NOT_CLEAN,
                      "col %u: sum repeats the argument %s: that is a scaling, not a "
                      "clean expression (sum takes pairwise distinct tensors)",
                      t->children[i]->start + 1, s);
          ok = FALSE;
        }
  }

out:
  for (uint32_t i = 0; i < n_pos; i++)
    sc_value_clear(&pos[i]);
  for (uint32_t i = 0; i < n_kw; i++)
    sc_value_clear(&kw[i]);
  g_free(pos);
  g_free(kw);
  g_free(kw_names);
  g_free(pos_e);
  g_free(kw_e);
  g_free(env.call_used);
  g_free(env.unknown);
  if (bound != NULL) {
    for (uint32_t i = 0; i < op->n_args; i++)
      sc_value_clear(&bound[i]);
    g_free(bound);
  }
  if (!ok) {
    sc_texpr_free(t);
    return NULL;
  }
  share_args(t);
  return t;
}

static sc_texpr *bind_expr(const sc_expr *e, sc_graph *g, gboolean clean_only, GError **error) {
  switch (e->kind) {
  case SC_EXPR_NAME:
  case SC_EXPR_STRING: { /* a quoted name: one that is not a NAME token */
    sc_id id = sc_graph_find_tensor(g, e->text);
    if (id == SC_ID_NONE) {
      g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_UNKNOWN_TENSOR,
                  "col %u: unknown tensor '%s' (the graph has no tensor of that name)",
                  e->start + 1, e->text);
      return NULL;
    }
    return new_leaf(g, id, e->start, e->end);
  }
  case SC_EXPR_CALL:
    return bind_call(e, g, clean_only, error);
  case SC_EXPR_VAR:
    g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID,
                "col %u: pattern variable '?%s' is not allowed here", e->start + 1, e->text);
    return NULL;
  default:
    g_set_error(error, SC_TEXPR_ERROR, SC_TEXPR_ERROR_INVALID,
                "col %u: expected a tensor name or an operator call", e->start + 1);
    return NULL;
  }
}

sc_texpr *sc_texpr_bind(const sc_expr *e, sc_graph *g, gboolean clean_only, GError **error) {
  g_return_val_if_fail(e != NULL && g != NULL, NULL);
  sc_ops_init();
  return bind_expr(e, g, clean_only, error);
}

sc_texpr *sc_texpr_parse(const char *text, sc_graph *g, gboolean clean_only, GError **error) {
  g_autoptr(sc_expr) e = sc_expr_parse(text, error);
  if (e == NULL)
    return NULL;
  return sc_texpr_bind(e, g, clean_only, error);
}
