/* print.c — extracted terms as expressions of the spec's expression
 * language, node names for sc_term_to_string, and a class's smallest term
 * for messages.
 *
 * Notation (docs/lang.md): sc.* operators by bare name; other operators by
 * the shortest name that sc_ops_lookup_func maps back to them; tensor
 * arguments positional while they lead (a Tensor[] first argument of an
 * sc.* operator spread as leading items), the rest key=value, omitted when
 * equal to the schema default unless the name starts with "dim" (as
 * sc_texpr_append does, so a clean term's text binds back to the same
 * call); binary sc.cat chains along one dim and sc.sum chains flattened;
 * result K of a multi-result operator as getitem(op(...), K); symbolic
 * sizes quoted.
 *
 * Invariant: printing never changes the language except for its cache of
 * operator names (filled lazily, hence the casts from const). */
#include "lang/lang-private.h"

#include <string.h>

#define PRINT_MAX_TREE ((uint64_t)1 << 20)
#define PRINT_MAX_DEPTH 4096

/* ---- operator names ------------------------------------------------------ */

static gboolean names_op(const char *func, const sc_op *op) {
  return sc_ops_lookup_func(func, NULL) == op;
}

const char *sc_lang_func_name(sc_lang *lang, const sc_op *op) {
  if (op->id >= lang->n_func_names) {
    uint32_t n = MAX(op->id + 1, sc_ops_count());
    lang->func_names = g_renew(char *, lang->func_names, n);
    for (uint32_t i = lang->n_func_names; i < n; i++)
      lang->func_names[i] = NULL;
    lang->n_func_names = n;
  }
  if (lang->func_names[op->id] == NULL) {
    char *cand[3] = {
        g_strdup(op->name),
        g_strdup_printf("%s.%s", op->name, op->overload),
        g_strdup_printf("%s.%s", op->ns, op->name),
    };
    char *pick = NULL;
    for (int i = 0; i < 3 && pick == NULL; i++)
      if (names_op(cand[i], op))
        pick = g_strdup(cand[i]);
    for (int i = 0; i < 3; i++)
      g_free(cand[i]);
    lang->func_names[op->id] = pick != NULL ? pick : g_strdup(op->qualname);
  }
  return lang->func_names[op->id];
}

void sc_lang_func_names_free(sc_lang *lang) {
  for (uint32_t i = 0; i < lang->n_func_names; i++)
    g_free(lang->func_names[i]);
  g_free(lang->func_names);
  lang->func_names = NULL;
  lang->n_func_names = 0;
}

static gboolean is_sc(const sc_op *op) {
  return strcmp(op->ns, "sc") == 0;
}

static gboolean is_multi(const sc_op *op) {
  return op->results_variadic || op->n_results > 1;
}

/* Does NAME lex as a NAME token of the expression language (and not as a
 * bare word with another meaning)?  Others print as quoted strings, which
 * bind back to the tensor. */
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

static sc_expr *name_expr(const char *name) {
  return plain_name(name) ? sc_expr_new_name(name) : sc_expr_new_string(name);
}

static const char *opaque_name(const sc_lang *lang, uint32_t key) {
  gpointer idx = g_hash_table_lookup(lang->opaque_index, GUINT_TO_POINTER(key));
  if (idx == NULL)
    return NULL;
  return g_ptr_array_index(lang->opaque_names, GPOINTER_TO_UINT(idx) - 1);
}

/* Should argument I of OP holding V be printed? */
static gboolean arg_printed(const sc_arg *a, const sc_value *v) {
  if (v->kind == SC_VAL_NONE)
    return !(a->has_default && a->default_value.kind == SC_VAL_NONE) && a->optional;
  if (a->has_default && sc_value_equal(v, &a->default_value) && !g_str_has_prefix(a->name, "dim"))
    return FALSE;
  return TRUE;
}

/* ---- node names (sc_term_to_string) ------------------------------------- */

static void append_dim(GString *out, const sc_symtab *st, sc_dim d) {
  if (sc_dim_is_const(d)) {
    g_string_append_printf(out, "%" G_GINT64_FORMAT, (gint64)d.value);
    return;
  }
  g_autofree char *s = sc_dim_to_string(st, d);
  g_string_append(out, s);
}

void sc_lang_append_node_name(GString *out, uint32_t op, uint32_t attr, void *user) {
  sc_lang *lang = user;
  if (op == SC_LANG_OP_TENSOR) {
    if (lang->leaf != NULL && attr < sc_graph_n_tensors(lang->leaf))
      g_string_append(out, sc_graph_name_of((void *)lang->leaf, attr));
    else
      g_string_append_printf(out, "tensor%u", attr);
    return;
  }
  if (op == SC_LANG_OP_OPAQUE) {
    const char *n = opaque_name(lang, attr);
    if (n != NULL)
      g_string_append(out, n);
    else
      g_string_append_printf(out, "?o%u", attr);
    return;
  }
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, attr);
  if (r == NULL || r->op->id != op) {
    g_string_append_printf(out, "op%u[%u]", op, attr);
    return;
  }
  g_string_append(out, sc_lang_func_name(lang, r->op));
  if (is_multi(r->op))
    g_string_append_printf(out, "#%u", r->result);
  gboolean first = TRUE;
  for (uint32_t i = 0; i < r->op->n_args; i++) {
    const sc_arg *a = &r->op->args[i];
    const sc_value *v = &r->args[i];
    if (v->kind == SC_VAL_TENSOR || v->kind == SC_VAL_TENSOR_LIST || !arg_printed(a, v))
      continue;
    g_string_append(out, first ? "[" : ", ");
    first = FALSE;
    g_string_append_printf(out, "%s=", a->name);
    if (v->kind == SC_VAL_INT) {
      append_dim(out, lang->st, v->u.i);
    } else if (v->kind == SC_VAL_INT_LIST) {
      g_string_append_c(out, '[');
      for (uint32_t k = 0; k < v->u.ints.n; k++) {
        if (k > 0)
          g_string_append(out, ", ");
        append_dim(out, lang->st, v->u.ints.v[k]);
      }
      g_string_append_c(out, ']');
    } else {
      g_autofree char *s = sc_value_to_string(v, lang->st, NULL, NULL);
      g_string_append(out, s);
    }
  }
  if (!first)
    g_string_append_c(out, ']');
}

/* ---- terms as expressions -------------------------------------------------- */

typedef struct {
  sc_lang *lang;
  const sc_term *t;
} pctx;

static sc_expr *node_expr(pctx *c, uint32_t i);

static sc_expr *dim_expr(const sc_lang *lang, sc_dim d) {
  if (sc_dim_is_const(d))
    return sc_expr_new_int(d.value);
  g_autofree char *s = sc_dim_to_string(lang->st, d);
  return sc_expr_new_string(s);
}

static sc_expr *value_expr(pctx *c, uint32_t node, const sc_value *v) {
  switch (v->kind) {
  case SC_VAL_NONE:
    return sc_expr_new_name("None");
  case SC_VAL_TENSOR:
    return node_expr(c, sc_term_child(c->t, node, v->u.tensor));
  case SC_VAL_TENSOR_LIST: {
    sc_expr *l = sc_expr_new_list();
    for (uint32_t k = 0; k < v->u.list.n; k++)
      sc_expr_add_arg(l, NULL,
                      v->u.list.ids[k] == SC_ID_NONE
                          ? sc_expr_new_name("None")
                          : node_expr(c, sc_term_child(c->t, node, v->u.list.ids[k])));
    return l;
  }
  case SC_VAL_INT:
    return dim_expr(c->lang, v->u.i);
  case SC_VAL_INT_LIST: {
    sc_expr *l = sc_expr_new_list();
    for (uint32_t k = 0; k < v->u.ints.n; k++)
      sc_expr_add_arg(l, NULL, dim_expr(c->lang, v->u.ints.v[k]));
    return l;
  }
  case SC_VAL_FLOAT:
    return sc_expr_new_float(v->u.f);
  case SC_VAL_BOOL:
    return sc_expr_new_name(v->u.b ? "True" : "False");
  case SC_VAL_BOOL_LIST: {
    sc_expr *l = sc_expr_new_list();
    for (uint32_t k = 0; k < v->u.bools.n; k++)
      sc_expr_add_arg(l, NULL, sc_expr_new_name(v->u.bools.v[k] ? "True" : "False"));
    return l;
  }
  case SC_VAL_STR:
    return sc_expr_new_string(v->u.s);
  case SC_VAL_DTYPE:
    return sc_expr_new_name(sc_dtype_name(v->u.dtype));
  case SC_VAL_LIST:
    break;
  }
  return sc_expr_new_name("None");
}

/* The record of term node I, or NULL for a leaf or a foreign node. */
static const sc_lang_attr_rec *term_rec(pctx *c, uint32_t i) {
  const sc_term_node *n = sc_term_node_at(c->t, i);
  if (n->op == SC_LANG_OP_TENSOR || n->op == SC_LANG_OP_OPAQUE)
    return NULL;
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(c->lang, n->attr);
  return r != NULL && r->op->id == n->op ? r : NULL;
}

/* Is R a binary chain link of the same operator (and dim) as TOP? */
static gboolean same_chain(const sc_lang_attr_rec *r, const sc_lang_attr_rec *top) {
  if (r == NULL || r->op != top->op || r->result != 0 || r->n_children != 2)
    return FALSE;
  int32_t d = sc_ops_arg_index(r->op, "dim");
  return d < 0 || sc_value_equal(&r->args[d], &top->args[d]);
}

/* Appends the parts of the chain rooted at term node I (a link of TOP's
 * chain), left to right; iterative, so that a chain of any length prints
 * without deep recursion. */
static void chain_parts(pctx *c, uint32_t i, const sc_lang_attr_rec *top, GArray *parts) {
  g_autoptr(GArray) stack = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_array_append_val(stack, i);
  while (stack->len > 0) {
    uint32_t n = g_array_index(stack, uint32_t, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    if (!same_chain(term_rec(c, n), top)) {
      g_array_append_val(parts, n);
      continue;
    }
    uint32_t right = sc_term_child(c->t, n, 1), left = sc_term_child(c->t, n, 0);
    g_array_append_val(stack, right);
    g_array_append_val(stack, left);
  }
}

static gboolean is_chain_op(const sc_op *op) {
  return is_sc(op) && (strcmp(op->name, "cat") == 0 || strcmp(op->name, "sum") == 0);
}

static sc_expr *node_expr(pctx *c, uint32_t i) {
  const sc_term_node *n = sc_term_node_at(c->t, i);
  if (n->op == SC_LANG_OP_TENSOR) {
    const sc_graph *g = c->lang->leaf;
    if (g != NULL && n->attr < sc_graph_n_tensors(g))
      return name_expr(sc_graph_name_of((void *)g, n->attr));
    g_autofree char *v = g_strdup_printf("tensor%u", n->attr);
    return sc_expr_new_var(v);
  }
  if (n->op == SC_LANG_OP_OPAQUE) {
    const char *name = opaque_name(c->lang, n->attr);
    if (name != NULL)
      return name_expr(name);
    g_autofree char *v = g_strdup_printf("o%u", n->attr);
    return sc_expr_new_var(v);
  }
  const sc_lang_attr_rec *r = term_rec(c, i);
  if (r == NULL) {
    g_autofree char *v = g_strdup_printf("op%u_%u", n->op, n->attr);
    return sc_expr_new_var(v);
  }
  const sc_op *op = r->op;
  sc_expr *call = sc_expr_new_call(sc_lang_func_name(c->lang, op));
  gboolean positional = TRUE;
  for (uint32_t a = 0; a < op->n_args; a++) {
    const sc_arg *sa = &op->args[a];
    const sc_value *v = &r->args[a];
    if (positional && a == 0 && is_sc(op) && v->kind == SC_VAL_TENSOR_LIST) {
      if (is_chain_op(op) && r->n_children == 2 && r->result == 0) {
        g_autoptr(GArray) parts = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        chain_parts(c, i, r, parts);
        for (guint k = 0; k < parts->len; k++)
          sc_expr_add_arg(call, NULL, node_expr(c, g_array_index(parts, uint32_t, k)));
      } else {
        for (uint32_t k = 0; k < v->u.list.n; k++)
          sc_expr_add_arg(call, NULL, node_expr(c, sc_term_child(c->t, i, v->u.list.ids[k])));
      }
      continue;
    }
    if (positional && !sa->kwarg_only && v->kind == SC_VAL_TENSOR) {
      sc_expr_add_arg(call, NULL, value_expr(c, i, v));
      continue;
    }
    positional = FALSE;
    if (!arg_printed(sa, v))
      continue;
    sc_expr_add_arg(call, sa->name, value_expr(c, i, v));
  }
  if (!is_multi(op))
    return call;
  sc_expr *g = sc_expr_new_call("getitem");
  sc_expr_add_arg(g, NULL, call);
  sc_expr_add_arg(g, NULL, sc_expr_new_int(r->result));
  return g;
}

sc_expr *sc_lang_term_to_expr(const sc_lang *lang, const sc_term *t) {
  g_return_val_if_fail(lang != NULL && t != NULL, NULL);
  uint32_t n = sc_term_n_nodes(t);
  if (n == 0 || sc_term_tree_size(t) > PRINT_MAX_TREE)
    return NULL;
  /* Printed nesting depth by one forward pass (children come first): a
   * cat/sum chain link adds no depth over links of the same chain, which
   * print flattened into it. */
  pctx c = {(sc_lang *)lang, t};
  g_autofree uint32_t *depth = g_new0(uint32_t, n);
  for (uint32_t i = 0; i < n; i++) {
    const sc_term_node *nd = sc_term_node_at(t, i);
    const sc_lang_attr_rec *r = term_rec(&c, i);
    gboolean link = r != NULL && is_chain_op(r->op) && same_chain(r, r);
    uint32_t d = 1;
    for (uint32_t k = 0; k < nd->n_children; k++) {
      uint32_t kid = sc_term_child(t, i, k);
      uint32_t add = link && same_chain(term_rec(&c, kid), r) ? 0 : 1;
      d = MAX(d, depth[kid] + add);
    }
    depth[i] = d;
    if (depth[i] > PRINT_MAX_DEPTH)
      return NULL;
  }
  return node_expr(&c, sc_term_root(t));
}

char *sc_lang_term_to_string(const sc_lang *lang, const sc_term *t) {
  g_autoptr(sc_expr) e = sc_lang_term_to_expr(lang, t);
  if (e == NULL)
    return NULL;
  return sc_expr_to_string(e);
}

char *sc_lang_class_to_string(const sc_lang *lang, sc_id cls) {
  g_return_val_if_fail(lang != NULL, NULL);
  g_return_val_if_fail(sc_egraph_is_clean(lang->eg), NULL);
  g_return_val_if_fail(cls < sc_egraph_n_ids(lang->eg), NULL);
  g_autoptr(sc_extractor) ex = sc_extractor_new(lang->eg, sc_cost_ast_size, NULL);
  g_autoptr(sc_term) t = sc_extractor_term(ex, sc_egraph_find_const(lang->eg, cls));
  if (t == NULL)
    return g_strdup_printf("class %u", cls);
  char *s = sc_lang_term_to_string(lang, t);
  if (s == NULL)
    s = g_strdup_printf("class %u (a term too large to print)", cls);
  return s;
}
