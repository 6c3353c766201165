/* lang.c — the tensor language object: its e-graph, the shape analysis
 * (make / merge over sc_ttype), the conflict trampoline, and adding terms
 * (tensor and opaque leaves, calls, bound relation expressions).
 *
 * Adding a call checks it completely before touching the e-graph: the
 * arguments are put in layout order (attr.c), the children must be
 * well-typed classes, the operator's shape rule must accept their types
 * and RESULT must be one of its results.  Only then does canon.c add the
 * canonical form.  So make() never fails on a node added through this
 * API; it can fail on a node a rewrite adds directly, which then gets the
 * poisoned type (lang-private.h) and can merge with nothing well-typed.
 *
 * merge() is conservative: types merge only when their dtypes are equal
 * and their shapes are structurally equal or provably the same under the
 * symtab's assumptions; anything else (provably different or undecided)
 * is a conflict, so a union that could join tensors of different shapes is
 * refused and reported. */
#include "lang/lang-private.h"

#include <string.h>

G_DEFINE_QUARK(sc-lang-error-quark, sc_lang_error)

void sc_lang_type_poison(sc_ttype *t) {
  memset(t, 0, sizeof *t);
  t->dtype = SC_DTYPE_COUNT;
}

/* ---- the analysis ----------------------------------------------------- */

typedef struct {
  const void *const *child_data;
  uint32_t n;
} make_env;

static const sc_ttype *make_type_of(void *env, sc_id i) {
  make_env *m = env;
  return i < m->n ? m->child_data[i] : NULL;
}

static void lang_make(const sc_egraph *eg, uint32_t op, uint32_t attr, const sc_id *children,
                      uint32_t n_children, const void *const *child_data, void *out,
                      void *user) {
  sc_lang *lang = user;
  sc_ttype *o = out;
  if (lang->make_type != NULL) {
    /* the call sc_lang_add_call has just run the shape rule on */
    *o = *lang->make_type;
    return;
  }
  if (op == SC_LANG_OP_TENSOR) {
    if (lang->leaf != NULL && n_children == 0 && attr < sc_graph_n_tensors(lang->leaf))
      *o = sc_graph_tensor(lang->leaf, attr)->type;
    else
      sc_lang_type_poison(o);
    return;
  }
  if (op == SC_LANG_OP_OPAQUE) {
    gpointer idx = g_hash_table_lookup(lang->opaque_index, GUINT_TO_POINTER(attr));
    if (idx != NULL && n_children == 0)
      *o = g_array_index(lang->opaque_types, sc_ttype, GPOINTER_TO_UINT(idx) - 1);
    else
      sc_lang_type_poison(o);
    return;
  }
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, attr);
  if (r == NULL || r->op->id != op || r->n_children != n_children) {
    sc_lang_type_poison(o);
    return;
  }
  for (uint32_t i = 0; i < n_children; i++) {
    if (sc_lang_type_is_poison(child_data[i])) {
      sc_lang_type_poison(o);
      return;
    }
  }
  make_env env = {child_data, n_children};
  sc_op_call call = {r->op, r->args, make_type_of, &env, lang->st};
  g_array_set_size(lang->scratch, 0);
  if (!sc_ops_infer(&call, lang->scratch, NULL) || r->result >= lang->scratch->len) {
    sc_lang_type_poison(o);
    return;
  }
  *o = g_array_index(lang->scratch, sc_ttype, r->result);
  (void)eg;
  (void)children;
}

/* How two types relate, for merge and for conflict messages. */
typedef enum {
  TYPES_EQUAL,
  TYPES_POISON,   /* exactly one is ill-typed */
  TYPES_DTYPE,    /* dtypes differ */
  TYPES_SHAPE,    /* shapes provably differ */
  TYPES_UNKNOWN,  /* shapes cannot be shown equal */
} types_rel;

static types_rel compare_types(sc_symtab *st, const sc_ttype *a, const sc_ttype *b) {
  gboolean pa = sc_lang_type_is_poison(a), pb = sc_lang_type_is_poison(b);
  if (pa || pb)
    return pa && pb ? TYPES_EQUAL : TYPES_POISON;
  if (a->dtype != b->dtype)
    return TYPES_DTYPE;
  if (sc_shape_equal(&a->shape, &b->shape))
    return TYPES_EQUAL;
  switch (sc_shape_same(st, &a->shape, &b->shape)) {
  case SC_YES: return TYPES_EQUAL;
  case SC_NO: return TYPES_SHAPE;
  default: return TYPES_UNKNOWN;
  }
}

static sc_merge_result lang_merge(void *a, const void *b, void *user) {
  sc_lang *lang = user;
  /* Equal types keep a's form: the data never changes on a union, so no
   * parent needs re-making. */
  return compare_types(lang->st, a, b) == TYPES_EQUAL ? SC_MERGE_NONE : SC_MERGE_CONFLICT;
}

static void lang_conflict(const sc_egraph *eg, sc_id a, sc_id b, uint32_t just, void *user) {
  sc_lang *lang = user;
  sc_lang_conflict c = {a, b, just};
  g_array_append_val(lang->conflicts, c);
  if (lang->conflict_fn != NULL)
    lang->conflict_fn(lang, a, b, just, lang->conflict_user);
  (void)eg;
}

/* ---- life cycle -------------------------------------------------------- */

sc_lang *sc_lang_new(sc_symtab *st, const sc_graph *leaf_graph) {
  if (st == NULL && leaf_graph != NULL)
    st = sc_graph_symtab(leaf_graph);
  g_return_val_if_fail(st != NULL, NULL);
  g_return_val_if_fail(leaf_graph == NULL || sc_graph_symtab(leaf_graph) == st, NULL);
  sc_ops_init();
  sc_lang *lang = g_new0(sc_lang, 1);
  lang->st = st;
  lang->leaf = leaf_graph;
  sc_lang_attrs_init(lang);
  lang->opaque_index = g_hash_table_new(g_direct_hash, g_direct_equal);
  lang->opaque_types = g_array_new(FALSE, TRUE, sizeof(sc_ttype));
  lang->opaque_names = g_ptr_array_new_with_free_func(g_free);
  lang->conflicts = g_array_new(FALSE, FALSE, sizeof(sc_lang_conflict));
  lang->scratch = g_array_new(FALSE, TRUE, sizeof(sc_ttype));
  lang->call_kids = g_array_new(FALSE, FALSE, sizeof(sc_id));
  lang->call_types = g_array_new(FALSE, TRUE, sizeof(sc_ttype));
  sc_analysis an = {sizeof(sc_ttype), lang_make, lang_merge, NULL};
  lang->eg = sc_egraph_new(&an, lang);
  sc_egraph_set_conflict_handler(lang->eg, lang_conflict, lang);
  sc_lang_ranges_init(lang);
  sc_egraph_set_merge_listener(lang->eg, sc_lang_ranges_on_merge, lang);
  return lang;
}

void sc_lang_free(sc_lang *lang) {
  if (lang == NULL)
    return;
  sc_egraph_free(lang->eg);
  sc_lang_ranges_free(lang);
  sc_lang_attrs_free(lang);
  g_hash_table_destroy(lang->opaque_index);
  g_array_free(lang->opaque_types, TRUE);
  g_ptr_array_free(lang->opaque_names, TRUE);
  g_array_free(lang->conflicts, TRUE);
  g_array_free(lang->scratch, TRUE);
  g_array_free(lang->call_kids, TRUE);
  g_array_free(lang->call_types, TRUE);
  sc_lang_func_names_free(lang);
  g_free(lang);
}

sc_egraph *sc_lang_egraph(sc_lang *lang) {
  return lang->eg;
}

sc_symtab *sc_lang_symtab(const sc_lang *lang) {
  return lang->st;
}

const sc_graph *sc_lang_leaf_graph(const sc_lang *lang) {
  return lang->leaf;
}

void sc_lang_set_conflict_handler(sc_lang *lang, sc_lang_conflict_fn fn, void *user) {
  lang->conflict_fn = fn;
  lang->conflict_user = user;
}

uint64_t sc_lang_n_conflicts(const sc_lang *lang) {
  return sc_egraph_n_conflicts(lang->eg);
}

const sc_lang_conflict *sc_lang_get_conflicts(const sc_lang *lang, uint32_t *n) {
  *n = lang->conflicts->len;
  return (const sc_lang_conflict *)(void *)lang->conflicts->data;
}

/* ---- reading ------------------------------------------------------------ */

const sc_ttype *sc_lang_class_type(const sc_lang *lang, sc_id cls) {
  g_return_val_if_fail(lang != NULL, NULL);
  g_return_val_if_fail(cls < sc_egraph_n_ids(lang->eg), NULL);
  const sc_ttype *t = sc_egraph_class_data(lang->eg, cls);
  return sc_lang_type_is_poison(t) ? NULL : t;
}

gboolean sc_lang_node_is_clean(const sc_lang *lang, sc_id node) {
  g_return_val_if_fail(node < sc_egraph_n_ids(lang->eg), FALSE);
  uint32_t op = sc_egraph_node_op(lang->eg, node);
  if (op == SC_LANG_OP_TENSOR)
    return TRUE;
  if (op == SC_LANG_OP_OPAQUE)
    return FALSE;
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, sc_egraph_node_attr(lang->eg, node));
  return r != NULL && (r->op->flags & SC_OP_CLEAN) != 0;
}

static char *type_text(const sc_ttype *t) {
  if (t == NULL || sc_lang_type_is_poison(t))
    return g_strdup("ill-typed");
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s %s", s, sc_dtype_name(t->dtype));
}

char *sc_lang_conflict_message(const sc_lang *lang, const sc_lang_conflict *c) {
  g_return_val_if_fail(lang != NULL && c != NULL, NULL);
  const sc_ttype *ta = sc_egraph_class_data(lang->eg, c->a);
  const sc_ttype *tb = sc_egraph_class_data(lang->eg, c->b);
  g_autofree char *na = sc_lang_class_to_string(lang, c->a);
  g_autofree char *nb = sc_lang_class_to_string(lang, c->b);
  g_autofree char *sa = type_text(ta);
  g_autofree char *sb = type_text(tb);
  const char *why;
  switch (compare_types(lang->st, ta, tb)) {
  case TYPES_POISON: why = "one of them is ill-typed (its shape rule fails)"; break;
  case TYPES_DTYPE: why = "their dtypes differ"; break;
  case TYPES_SHAPE: why = "their shapes differ"; break;
  case TYPES_UNKNOWN: why = "their shapes cannot be shown equal"; break;
  default: why = "the analysis could not merge them"; break;
  }
  return g_strdup_printf("cannot merge %s (type %s) with %s (type %s): %s",
                         na ? na : "?", sa, nb ? nb : "?", sb, why);
}

/* ---- adding ------------------------------------------------------------- */

sc_id sc_lang_add_tensor(sc_lang *lang, sc_id tensor) {
  g_return_val_if_fail(lang != NULL && lang->leaf != NULL, SC_ID_NONE);
  g_return_val_if_fail(tensor < sc_graph_n_tensors(lang->leaf), SC_ID_NONE);
  sc_id cls = sc_egraph_add_exact(lang->eg, SC_LANG_OP_TENSOR, tensor, NULL, 0);
  sc_lang_seed_leaf_range(lang, cls, tensor);
  return cls;
}

sc_id sc_lang_add_opaque(sc_lang *lang, uint32_t key, const sc_ttype *type) {
  g_return_val_if_fail(lang != NULL && type != NULL, SC_ID_NONE);
  g_return_val_if_fail(type->dtype < SC_DTYPE_COUNT && type->shape.rank <= SC_MAX_RANK,
                       SC_ID_NONE);
  gpointer idx = g_hash_table_lookup(lang->opaque_index, GUINT_TO_POINTER(key));
  if (idx != NULL) {
    const sc_ttype *old = &g_array_index(lang->opaque_types, sc_ttype, GPOINTER_TO_UINT(idx) - 1);
    g_return_val_if_fail(old->dtype == type->dtype && sc_shape_equal(&old->shape, &type->shape),
                         SC_ID_NONE);
  } else {
    g_array_append_val(lang->opaque_types, *type);
    g_ptr_array_add(lang->opaque_names, NULL);
    g_hash_table_insert(lang->opaque_index, GUINT_TO_POINTER(key),
                        GUINT_TO_POINTER(lang->opaque_types->len));
  }
  return sc_egraph_add_exact(lang->eg, SC_LANG_OP_OPAQUE, key, NULL, 0);
}

void sc_lang_set_opaque_name(sc_lang *lang, uint32_t key, const char *name) {
  g_return_if_fail(lang != NULL);
  gpointer idx = g_hash_table_lookup(lang->opaque_index, GUINT_TO_POINTER(key));
  g_return_if_fail(idx != NULL);
  guint i = GPOINTER_TO_UINT(idx) - 1;
  g_free(g_ptr_array_index(lang->opaque_names, i));
  g_ptr_array_index(lang->opaque_names, i) = g_strdup(name);
}

/* sc_lang_add_node while finding: the node's class if its record and the
 * node are there (a lookup changes nothing), else a miss. */
static sc_id find_node(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                       uint32_t n_kids, uint32_t result) {
  sc_id out = SC_ID_NONE;
  if (!lang->find_miss) {
    gboolean kids_ok = TRUE;
    for (uint32_t i = 0; i < n_kids && kids_ok; i++)
      kids_ok = kids[i] != SC_ID_NONE;
    uint32_t attr = kids_ok ? sc_lang_lookup_layout(lang, op, args, n_kids, result) : UINT32_MAX;
    if (attr != UINT32_MAX)
      out = sc_egraph_lookup(lang->eg, op->id, attr, kids, n_kids);
  }
  if (out == SC_ID_NONE)
    lang->find_miss = TRUE;
  return out;
}

sc_id sc_lang_add_node(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                       uint32_t n_kids, uint32_t result) {
  if (G_UNLIKELY(lang->finding))
    return find_node(lang, op, args, kids, n_kids, result);
  uint32_t attr = sc_lang_intern_layout(lang, op, args, n_kids, result);
  gboolean hinted = args == lang->hint_args && kids == lang->hint_kids && op == lang->hint_op &&
                    n_kids == lang->hint_n && result == lang->hint_result;
  if (hinted)
    lang->make_type = lang->hint_type;
  sc_id c = sc_egraph_add_exact(lang->eg, op->id, attr, kids, n_kids);
  lang->make_type = NULL;
  sc_lang_range_forward(lang, op, kids, n_kids, c);
  return c;
}

typedef struct {
  const sc_lang *lang;
  const sc_id *kids;
  uint32_t n;
} infer_env;

static const sc_ttype *infer_type_of(void *env, sc_id i) {
  infer_env *e = env;
  if (i >= e->n)
    return NULL;
  return sc_lang_class_type(e->lang, e->kids[i]);
}

gboolean sc_lang_infer(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                       uint32_t n_kids, GArray *out, GError **error) {
  infer_env env = {lang, kids, n_kids};
  sc_op_call call = {op, args, infer_type_of, &env, lang->st};
  GError *err = NULL;
  /* no error wanted: none is built (the shape rules skip formatting) */
  if (!sc_ops_infer(&call, out, error != NULL ? &err : NULL)) {
    if (err != NULL) {
      g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_SHAPE, "%s", err->message);
      g_error_free(err);
    }
    return FALSE;
  }
  return TRUE;
}

sc_id sc_lang_add_call(sc_lang *lang, const sc_op *op, const sc_value *args,
                       const sc_id *children, uint32_t n_children, uint32_t result,
                       GError **error) {
  g_return_val_if_fail(lang != NULL, SC_ID_NONE);
  if (op == NULL || (op->n_args > 0 && args == NULL) || (n_children > 0 && children == NULL)) {
    g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_INVALID,
                "a call needs an operator, its arguments and its children");
    return SC_ID_NONE;
  }
  uint32_t n_ids = sc_egraph_n_ids(lang->eg);
  for (uint32_t i = 0; i < n_children; i++) {
    if (children[i] >= n_ids) {
      g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_INVALID,
                  "%s: child %u is %u, not a class of this e-graph (%u ids)", op->qualname, i,
                  children[i], n_ids);
      return SC_ID_NONE;
    }
  }
  /* no allocation on the way (a saturation adds tens of thousands of
   * calls, most of them already in the e-graph): the arguments on the
   * stack, children and types in the language's scratch arrays unless a
   * call is already using them */
  sc_value lay_buf[16];
  sc_value *lay = op->n_args <= G_N_ELEMENTS(lay_buf) ? lay_buf
                                                      : g_new0(sc_value, op->n_args);
  gboolean outer = !lang->in_call;
  GArray *kids = outer ? lang->call_kids : g_array_new(FALSE, FALSE, sizeof(sc_id));
  GArray *types = outer ? lang->call_types : g_array_new(FALSE, TRUE, sizeof(sc_ttype));
  g_array_set_size(kids, 0);
  g_array_set_size(types, 0);
  lang->in_call = TRUE;
  sc_id out = SC_ID_NONE;
  if (!sc_lang_layout_args(op, args, children, n_children, lay, kids, error))
    goto done;
  const sc_id *k = (const sc_id *)(void *)kids->data;
  for (guint i = 0; i < kids->len; i++) {
    if (sc_lang_class_type(lang, k[i]) == NULL) {
      g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_SHAPE,
                  "%s: child %u (class %u) is ill-typed", op->qualname, i, k[i]);
      goto out;
    }
  }
  if (!sc_lang_infer(lang, op, lay, k, kids->len, types, error))
    goto out;
  if (result >= types->len) {
    g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_INVALID,
                "%s gives %u result%s; there is no result %u", op->qualname, types->len,
                types->len == 1 ? "" : "s", result);
    goto out;
  }
  {
    /* canon may add nodes and so move the class data: copy the type */
    sc_ttype rt = g_array_index(types, sc_ttype, result);
    lang->hint_op = op;
    lang->hint_args = lay;
    lang->hint_kids = k;
    lang->hint_n = kids->len;
    lang->hint_result = result;
    lang->hint_type = &rt;
    out = sc_lang_canon_add(lang, op, lay, k, kids->len, result, &rt);
    lang->hint_args = NULL;
    /* with proofs: the id of the canonical form as built (its proof term) */
    if (!sc_egraph_proofs_enabled(lang->eg))
      out = sc_egraph_find(lang->eg, out);
  }
out:
  sc_lang_clear_args(op, lay);
done:
  if (lay != lay_buf)
    g_free(lay);
  if (outer) {
    lang->in_call = FALSE;
  } else {
    g_array_free(kids, TRUE);
    g_array_free(types, TRUE);
  }
  return out;
}

/* Are ARGS in layout order already, CHILDREN the layout's children (what
 * an applier builds: tensor arguments number the children 0, 1, ... in
 * argument order, no None in a list, every child used)?  Then
 * sc_lang_layout_args would give copies of ARGS and CHILDREN themselves. */
static gboolean layout_is_identity(const sc_op *op, const sc_value *args, uint32_t n_children) {
  uint32_t next = 0;
  for (uint32_t i = 0; i < op->n_args; i++) {
    const sc_arg *a = &op->args[i];
    const sc_value *v = &args[i];
    if (a->type != SC_ARG_TENSOR && a->type != SC_ARG_TENSOR_LIST &&
        a->type != SC_ARG_TENSOR_OPT_LIST) {
      if (v->kind == SC_VAL_TENSOR || v->kind == SC_VAL_TENSOR_LIST || v->kind == SC_VAL_LIST)
        return FALSE;
      continue;
    }
    if (v->kind == SC_VAL_NONE) {
      if (!a->optional)
        return FALSE;
      continue;
    }
    if (a->type == SC_ARG_TENSOR) {
      if (v->kind != SC_VAL_TENSOR || v->u.tensor != next++)
        return FALSE;
      continue;
    }
    if (v->kind != SC_VAL_TENSOR_LIST)
      return FALSE;
    for (uint32_t k = 0; k < v->u.list.n; k++)
      if (v->u.list.ids[k] != next++)
        return FALSE;
  }
  return next == n_children;
}

/* The rest of sc_lang_add_call for a call whose canonical form is another
 * call or other nodes: canon with every node looked up instead of added
 * (find_node), after the shape rule only when canon reads the result type
 * (views, renames).  The same steps on the same data, so when no lookup
 * misses, sc_lang_add_call either adds exactly the nodes found (that is,
 * none) and returns the same class, or its shape rule refuses the call:
 * in neither case does the e-graph change. */
static sc_id find_canonical(sc_lang *lang, const sc_op *op, const sc_value *lay,
                            const sc_id *k, uint32_t n, uint32_t result,
                            gboolean *shape_checked) {
  sc_ttype rt;
  if (sc_lang_canon_reads_type(op, result)) {
    *shape_checked = TRUE;
    GArray *types = lang->call_types;
    g_array_set_size(types, 0);
    if (!sc_lang_infer(lang, op, lay, k, n, types, NULL) || result >= types->len)
      return SC_ID_NONE;
    rt = g_array_index(types, sc_ttype, result);
  } else {
    sc_lang_type_poison(&rt); /* not read */
  }
  lang->finding = TRUE;
  lang->find_miss = FALSE;
  sc_id out = sc_lang_canon_add(lang, op, lay, k, n, result, &rt);
  lang->finding = FALSE;
  if (lang->find_miss || out == SC_ID_NONE)
    return SC_ID_NONE;
  return sc_egraph_find(lang->eg, out);
}

sc_id sc_lang_find_call(sc_lang *lang, const sc_op *op, const sc_value *args,
                        const sc_id *children, uint32_t n_children, uint32_t result) {
  return sc_lang_find_call_checked(lang, op, args, children, n_children, result, NULL);
}

sc_id sc_lang_find_call_checked(sc_lang *lang, const sc_op *op, const sc_value *args,
                                const sc_id *children, uint32_t n_children, uint32_t result,
                                gboolean *shape_checked) {
  gboolean checked_buf;
  if (shape_checked == NULL)
    shape_checked = &checked_buf;
  *shape_checked = FALSE;
  g_return_val_if_fail(lang != NULL, SC_ID_NONE);
  /* with proofs, sc_lang_add_call makes an id for the term as added */
  if (op == NULL || (op->n_args > 0 && args == NULL) || (n_children > 0 && children == NULL) ||
      lang->in_call || sc_egraph_proofs_enabled(lang->eg))
    return SC_ID_NONE;
  uint32_t n_ids = sc_egraph_n_ids(lang->eg);
  for (uint32_t i = 0; i < n_children; i++)
    if (children[i] >= n_ids)
      return SC_ID_NONE;
  /* the steps of sc_lang_add_call up to sc_lang_add_node, without the
   * shape rule and without adding: layout, well-typed children, the call
   * its own canonical form, its record interned and its node present */
  sc_value lay_buf[16];
  const sc_value *lay = args;
  const sc_id *k = children;
  uint32_t n = n_children;
  gboolean copied = FALSE;
  if (!layout_is_identity(op, args, n_children)) {
    if (op->n_args > G_N_ELEMENTS(lay_buf))
      return SC_ID_NONE;
    GArray *kids = lang->call_kids;
    g_array_set_size(kids, 0);
    if (!sc_lang_layout_args(op, args, children, n_children, lay_buf, kids, NULL))
      return SC_ID_NONE;
    lay = lay_buf;
    k = (const sc_id *)(void *)kids->data;
    n = kids->len;
    copied = TRUE;
  }
  sc_id out = SC_ID_NONE;
  for (uint32_t i = 0; i < n; i++)
    if (sc_lang_class_type(lang, k[i]) == NULL)
      goto out;
  if (sc_lang_canon_is_identity(lang, op, lay, k, n, result)) {
    /* the call is its own canonical form: one lookup, no shape rule */
    uint32_t attr = sc_lang_lookup_layout(lang, op, lay, n, result);
    if (attr != UINT32_MAX)
      out = sc_egraph_lookup(lang->eg, op->id, attr, k, n);
  } else {
    out = find_canonical(lang, op, lay, k, n, result, shape_checked);
  }
out:
  if (copied)
    sc_lang_clear_args(op, lay_buf);
  if (out == SC_ID_NONE)
    *shape_checked = FALSE;
  return out;
}

gboolean sc_lang_call_typechecks(sc_lang *lang, const sc_op *op, const sc_value *args,
                                 const sc_id *children, uint32_t n_children, uint32_t result) {
  g_return_val_if_fail(lang != NULL, FALSE);
  if (op == NULL || (op->n_args > 0 && args == NULL) || (n_children > 0 && children == NULL))
    return FALSE;
  uint32_t n_ids = sc_egraph_n_ids(lang->eg);
  for (uint32_t i = 0; i < n_children; i++)
    if (children[i] >= n_ids)
      return FALSE;
  /* sc_lang_add_call's steps up to its shape rule's verdict, on the same
   * scratch (the outermost call's, else arrays of its own) */
  sc_value lay_buf[16];
  const sc_value *lay = args;
  gboolean identity = layout_is_identity(op, args, n_children);
  sc_value *copy = NULL;
  if (!identity)
    copy = op->n_args <= G_N_ELEMENTS(lay_buf) ? lay_buf : g_new0(sc_value, op->n_args);
  gboolean outer = !lang->in_call;
  GArray *kids = outer ? lang->call_kids : g_array_new(FALSE, FALSE, sizeof(sc_id));
  GArray *types = outer ? lang->call_types : g_array_new(FALSE, TRUE, sizeof(sc_ttype));
  g_array_set_size(kids, 0);
  g_array_set_size(types, 0);
  gboolean ok = FALSE;
  const sc_id *k = children;
  uint32_t n = n_children;
  if (copy != NULL) {
    if (!sc_lang_layout_args(op, args, children, n_children, copy, kids, NULL))
      goto done;
    lay = copy;
    k = (const sc_id *)(void *)kids->data;
    n = kids->len;
  }
  for (uint32_t i = 0; i < n; i++)
    if (sc_lang_class_type(lang, k[i]) == NULL)
      goto out;
  ok = sc_lang_infer(lang, op, lay, k, n, types, NULL) && result < types->len;
out:
  if (copy != NULL)
    sc_lang_clear_args(op, copy);
done:
  if (copy != NULL && copy != lay_buf)
    g_free(copy);
  if (!outer) {
    g_array_free(kids, TRUE);
    g_array_free(types, TRUE);
  }
  return ok;
}

sc_id sc_lang_add_named(sc_lang *lang, const char *func, const sc_value *args,
                        const sc_id *children, uint32_t n_children, uint32_t result,
                        GError **error) {
  g_return_val_if_fail(lang != NULL && func != NULL, SC_ID_NONE);
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup_func(func, &err);
  if (op == NULL) {
    g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_INVALID, "%s", err->message);
    g_error_free(err);
    return SC_ID_NONE;
  }
  return sc_lang_add_call(lang, op, args, children, n_children, result, error);
}

static sc_id add_texpr(sc_lang *lang, const sc_texpr *t, GError **error) {
  if (sc_texpr_get_kind(t) == SC_TEXPR_TENSOR)
    return sc_lang_add_tensor(lang, sc_texpr_tensor(t));
  uint32_t n = sc_texpr_n_children(t);
  g_autofree sc_id *kids = g_new(sc_id, n ? n : 1);
  for (uint32_t i = 0; i < n; i++) {
    kids[i] = add_texpr(lang, sc_texpr_child(t, i), error);
    if (kids[i] == SC_ID_NONE)
      return SC_ID_NONE;
  }
  return sc_lang_add_call(lang, sc_texpr_op(t), sc_texpr_args(t), kids, n, 0, error);
}

sc_id sc_lang_add_texpr(sc_lang *lang, const sc_texpr *t, GError **error) {
  g_return_val_if_fail(lang != NULL && t != NULL, SC_ID_NONE);
  if (lang->leaf == NULL || sc_texpr_graph(t) != lang->leaf) {
    g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_INVALID,
                "the expression is bound to another graph than the language's leaf graph");
    return SC_ID_NONE;
  }
  return add_texpr(lang, t, error);
}
