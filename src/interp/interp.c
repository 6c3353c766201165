/* interp.c — the interpreter's front: the evaluator table (merged from the
 * evaluator files, keyed by qualified name), the operators listed as
 * uninterpretable with their reasons, one-operator evaluation (symbolic
 * ints made concrete, result types from the shape rule, results rounded
 * to their dtypes), running a graph, evaluating a bound expression, and
 * picking symbol values that meet the bundle's assumptions.
 *
 * Invariants: the table is built once (g_once) and never changes; an
 * evaluator never sees a symbolic int or a missing tensor; every value
 * handed back has been rounded to its dtype. */
#include "interp/interp-private.h"

#include <errno.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------- */

/* Registered operators that are deliberately not interpreted. */
static const struct {
  const char *qualname;
  const char *reason;
} uninterpretable[] = {
    {"aten.fill_.Scalar", "an in-place operator: graphs are functional and bundles refuse it"},
    {"aten.zero_.default", "an in-place operator: graphs are functional and bundles refuse it"},
    {"aten.copy_.default", "an in-place operator: graphs are functional and bundles refuse it"},
    {"aten.masked_fill_.Scalar",
     "an in-place operator: graphs are functional and bundles refuse it"},
    {"aten.index_put_.default",
     "an in-place operator: graphs are functional and bundles refuse it"},
    {"comm.send.default", "half of a point-to-point move: the loader pairs it with its "
                          "comm.recv into comm.send_recv"},
    {"comm.recv.default", "half of a point-to-point move: the loader pairs it with its "
                          "comm.send into comm.send_recv"},
};

static GHashTable *eval_table; /* qualname -> sc_evaluator (as gpointer via wrapper) */

typedef struct {
  sc_evaluator fn;
} eval_box;

static gpointer build_table(gpointer unused) {
  (void)unused;
  sc_ops_init();
  GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  const sc_eval_entry *tables[] = {sc_eval_layout_table, sc_eval_math_table,
                                   sc_eval_extra_table, sc_eval_hlo_table};
  for (size_t k = 0; k < G_N_ELEMENTS(tables); k++) {
    for (const sc_eval_entry *e = tables[k]; e->qualname != NULL; e++) {
      eval_box *b = g_new(eval_box, 1);
      b->fn = e->fn;
      if (!g_hash_table_insert(t, (gpointer)e->qualname, b))
        g_error("interp: evaluator for %s registered twice", e->qualname);
    }
  }
  return t;
}

static GHashTable *table(void) {
  static GOnce once = G_ONCE_INIT;
  eval_table = g_once(&once, build_table, NULL);
  return eval_table;
}

static sc_evaluator find_evaluator(const sc_op *op) {
  eval_box *b = g_hash_table_lookup(table(), op->qualname);
  return b != NULL ? b->fn : NULL;
}

gboolean sc_interp_has_evaluator(const sc_op *op) {
  return find_evaluator(op) != NULL;
}

const char *sc_interp_uninterpretable_reason(const sc_op *op) {
  for (size_t i = 0; i < G_N_ELEMENTS(uninterpretable); i++)
    if (strcmp(uninterpretable[i].qualname, op->qualname) == 0)
      return uninterpretable[i].reason;
  return NULL;
}

GPtrArray *sc_interp_missing_evaluators(void) {
  sc_ops_init();
  GPtrArray *out = g_ptr_array_new();
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    if (!sc_interp_has_evaluator(op) && sc_interp_uninterpretable_reason(op) == NULL)
      g_ptr_array_add(out, (gpointer)op->qualname);
  }
  return out;
}

/* ---- one operator ------------------------------------------------------------ */

typedef struct {
  const sc_ttype *types;
  uint32_t n;
} type_env;

static const sc_ttype *type_of_local(void *env, sc_id t) {
  type_env *e = env;
  return t < e->n ? &e->types[t] : NULL;
}

static gboolean concrete_dim(const sc_op *op, const sc_symtab *st, const int64_t *symvals,
                             sc_dim *d, GError **error) {
  if (sc_dim_is_const(*d))
    return TRUE;
  int64_t v;
  if (st == NULL || symvals == NULL || !sc_dim_eval(st, *d, symvals, &v)) {
    g_autofree char *s = st != NULL ? sc_dim_to_string(st, *d) : g_strdup("?");
    g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL,
                "%s: the size %s does not evaluate under the symbol values", op->qualname, s);
    return FALSE;
  }
  *d = sc_dim_const(v);
  return TRUE;
}

/* Check that every tensor id in V names a present tensor. */
static gboolean check_tensor_ids(const sc_op *op, const sc_arg *a, const sc_value *v,
                                 sc_tvalue *const *tensors, uint32_t n, GError **error) {
  if (v->kind == SC_VAL_TENSOR) {
    if (v->u.tensor >= n || tensors[v->u.tensor] == NULL) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INPUT,
                  "%s: argument '%s' names a tensor that has no value", op->qualname, a->name);
      return FALSE;
    }
  } else if (v->kind == SC_VAL_TENSOR_LIST) {
    for (uint32_t i = 0; i < v->u.list.n; i++) {
      sc_id id = v->u.list.ids[i];
      if (id == SC_ID_NONE && a->type == SC_ARG_TENSOR_OPT_LIST)
        continue;
      if (id >= n || tensors[id] == NULL) {
        g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INPUT,
                    "%s: entry %u of argument '%s' names a tensor that has no value",
                    op->qualname, i, a->name);
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* A data-dependent operator (ops.h): its `size` is what the inputs give.
 * None (a call outside a graph: a lemma's side, an expression) becomes the
 * count; a given size (a graph's symbol, bound by sc_interp_run_graph, or a
 * lemma's attribute) must equal it. */
static gboolean data_dependent_size(const sc_op *op, sc_value *cargs, sc_tvalue *const *tensors,
                                    uint32_t n_tensors, GError **error) {
  int32_t k = sc_ops_arg_index(op, "size");
  int64_t count;
  if (k < 0 || !sc_interp_data_dependent_size(op, cargs, tensors, n_tensors, &count)) {
    g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR,
                "%s: no evaluator computes its data-dependent size", op->qualname);
    return FALSE;
  }
  if (cargs[k].kind == SC_VAL_NONE) {
    cargs[k] = sc_value_int(count);
    return TRUE;
  }
  if (cargs[k].kind == SC_VAL_INT && sc_dim_is_const(cargs[k].u.i) &&
      cargs[k].u.i.value == count)
    return TRUE;
  g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INVALID,
              "%s: the data-dependent size is %" G_GINT64_FORMAT " but the input gives %"
              G_GINT64_FORMAT,
              op->qualname, cargs[k].kind == SC_VAL_INT ? (gint64)cargs[k].u.i.value : (gint64)-1,
              (gint64)count);
  return FALSE;
}

gboolean sc_interp_eval(const sc_op *op, const sc_value *args, sc_symtab *st,
                        const int64_t *symbol_values, sc_tvalue *const *tensors,
                        uint32_t n_tensors, const sc_interp_config *cfg, GPtrArray *results,
                        GError **error) {
  sc_evaluator fn = find_evaluator(op);
  if (fn == NULL) {
    const char *why = sc_interp_uninterpretable_reason(op);
    if (why != NULL)
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_UNINTERPRETABLE,
                  "%s cannot be interpreted: %s", op->qualname, why);
    else if (cfg == NULL || cfg->fallback == NULL)
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR,
                  "%s has no evaluator in the interpreter", op->qualname);
    if (why != NULL || cfg == NULL || cfg->fallback == NULL)
      return FALSE;
  }
  g_autoptr(sc_symtab) own_st = NULL;
  if (st == NULL)
    st = own_st = sc_symtab_new();

  /* Concrete copies of the arguments. */
  uint32_t na = op->n_args;
  sc_value *cargs = g_new0(sc_value, na ? na : 1);
  gboolean ok = TRUE;
  for (uint32_t i = 0; i < na && ok; i++) {
    sc_value_copy(&cargs[i], &args[i]);
    if (cargs[i].kind == SC_VAL_INT) {
      ok = concrete_dim(op, st, symbol_values, &cargs[i].u.i, error);
    } else if (cargs[i].kind == SC_VAL_INT_LIST) {
      for (uint32_t k = 0; k < cargs[i].u.ints.n && ok; k++)
        ok = concrete_dim(op, st, symbol_values, &cargs[i].u.ints.v[k], error);
    } else {
      ok = check_tensor_ids(op, &op->args[i], &cargs[i], tensors, n_tensors, error);
    }
  }
  if (ok && (op->flags & SC_OP_DATA_DEPENDENT))
    ok = data_dependent_size(op, cargs, tensors, n_tensors, error);
  sc_ttype *types = NULL;
  GArray *rtypes = NULL;
  sc_tvalue **outs = NULL;
  uint32_t n_out = 0;
  if (ok) {
    types = g_new0(sc_ttype, n_tensors ? n_tensors : 1);
    for (uint32_t i = 0; i < n_tensors; i++)
      if (tensors[i] != NULL)
        types[i] = sc_tvalue_ttype(tensors[i]);
    type_env env = {types, n_tensors};
    sc_op_call call = {op, cargs, type_of_local, &env, st};
    rtypes = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
    GError *local = NULL;
    if (!sc_ops_infer(&call, rtypes, &local)) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SHAPE, "%s", local->message);
      g_error_free(local);
      ok = FALSE;
    }
  }
  int64_t maxel = sc_interp_max_elements(cfg);
  if (ok) {
    n_out = rtypes->len;
    outs = g_new0(sc_tvalue *, n_out ? n_out : 1);
    for (uint32_t i = 0; i < n_out && ok; i++) {
      const sc_ttype *t = &g_array_index(rtypes, sc_ttype, i);
      int64_t dims[SC_MAX_RANK];
      for (uint32_t d = 0; d < t->shape.rank; d++) {
        if (!sc_dim_is_const(t->shape.dims[d])) {
          g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL,
                      "%s: result %u has a symbolic size", op->qualname, i);
          ok = FALSE;
          break;
        }
        dims[d] = t->shape.dims[d].value;
      }
      if (!ok)
        break;
      GError *local = NULL;
      outs[i] = sc_tvalue_new(t->dtype, t->shape.rank, dims, maxel, &local);
      if (outs[i] == NULL) {
        g_set_error(error, SC_INTERP_ERROR, local->code, "%s: result %u: %s", op->qualname, i,
                    local->message);
        g_error_free(local);
        ok = FALSE;
      }
    }
  }
  if (ok && fn != NULL) {
    sc_ev ev = {op, cargs, tensors, n_tensors, outs, n_out, cfg, maxel, error};
    ok = fn(&ev);
  } else if (ok) {
    ok = cfg->fallback(cfg->fallback_user, op, cargs, tensors, n_tensors, outs, n_out, error);
  }
  for (uint32_t i = 0; i < n_out && ok; i++) {
    GError *local = NULL;
    if (!sc_tvalue_round_to_dtype(outs[i], &local)) {
      g_set_error(error, SC_INTERP_ERROR, local->code, "%s: result %u: %s", op->qualname, i,
                  local->message);
      g_error_free(local);
      ok = FALSE;
    }
  }
  for (uint32_t i = 0; i < n_out; i++) {
    if (ok)
      g_ptr_array_add(results, outs[i]);
    else
      sc_tvalue_free(outs[i]);
  }
  g_free(outs);
  if (rtypes != NULL)
    g_array_free(rtypes, TRUE);
  g_free(types);
  for (uint32_t i = 0; i < na; i++)
    sc_value_clear(&cargs[i]);
  g_free(cargs);
  return ok;
}

/* ---- graphs ------------------------------------------------------------------- */

void sc_interp_values_free(sc_tvalue **values, uint32_t n) {
  if (values == NULL)
    return;
  for (uint32_t i = 0; i < n; i++)
    sc_tvalue_free(values[i]);
  g_free(values);
}

/* Does V have type T under the symbol values?  FALSE with a description. */
static gboolean value_has_type(const sc_symtab *st, const int64_t *symvals, const sc_tvalue *v,
                               const sc_ttype *t, char **why) {
  gboolean same = v->dtype == t->dtype && v->rank == t->shape.rank;
  for (uint32_t d = 0; same && d < v->rank; d++) {
    int64_t x;
    if (!sc_dim_eval(st, t->shape.dims[d], symvals, &x) || x != v->dims[d])
      same = FALSE;
  }
  if (!same) {
    g_autofree char *want = sc_shape_to_string(&t->shape);
    sc_ttype got = sc_tvalue_ttype(v);
    g_autofree char *have = sc_shape_to_string(&got.shape);
    *why = g_strdup_printf("expected %s %s, got %s %s", sc_dtype_name(t->dtype), want,
                           sc_dtype_name(v->dtype), have);
  }
  return same;
}

static void node_error(GError **error, const sc_node *n, GError *inner) {
  if (n->src != NULL)
    g_set_error(error, SC_INTERP_ERROR, inner->code, "node '%s' (%s, %s): %s", n->name,
                n->op->qualname, n->src, inner->message);
  else
    g_set_error(error, SC_INTERP_ERROR, inner->code, "node '%s' (%s): %s", n->name,
                n->op->qualname, inner->message);
  g_error_free(inner);
}

gboolean sc_interp_bind_data_dependent(const sc_graph *g, const sc_node *n,
                                       sc_tvalue *const *values, int64_t *symbol_values,
                                       GError **error) {
  g_return_val_if_fail(g != NULL && n != NULL && values != NULL && symbol_values != NULL, FALSE);
  if (!(n->op->flags & SC_OP_DATA_DEPENDENT))
    return TRUE;
  sc_symtab *st = sc_graph_symtab(g);
  int32_t k = sc_ops_arg_index(n->op, "size");
  if (k < 0 || n->args[k].kind != SC_VAL_INT || sc_dim_is_const(n->args[k].u.i))
    return TRUE;
  g_autofree char *name = sc_dim_to_string(st, n->args[k].u.i);
  uint32_t idx;
  int64_t count;
  if (!sc_symtab_lookup(st, name, &idx) ||
      !sc_interp_data_dependent_size(n->op, n->args, values, sc_graph_n_tensors(g), &count))
    return TRUE; /* an expression: sc_interp_eval compares it with the count */
  gboolean has_min, has_max;
  int64_t lo, hi;
  sc_symtab_symbol_bounds(st, idx, &has_min, &lo, &has_max, &hi);
  if ((has_min && count < lo) || (has_max && count > hi)) {
    g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL,
                "the data-dependent size %s is %" G_GINT64_FORMAT
                ", outside its declared bounds",
                name, (gint64)count);
    return FALSE;
  }
  symbol_values[idx] = count;
  return TRUE;
}

gboolean sc_interp_run_graph(const sc_graph *g, int64_t *symbol_values,
                             sc_tvalue *const *inputs, const sc_interp_config *cfg,
                             sc_tvalue ***values_out, sc_id *failed_node, GError **error) {
  g_return_val_if_fail(sc_graph_is_finished(g), FALSE);
  if (failed_node != NULL)
    *failed_node = SC_ID_NONE;
  *values_out = NULL;
  /* Data-dependent sizes are bound in a private array when the caller gave
   * none (symbol_values is then written through this pointer). */
  g_autofree int64_t *own_syms = NULL;
  sc_symtab *st = sc_graph_symtab(g);
  uint32_t nt = sc_graph_n_tensors(g);
  sc_tvalue **vals = g_new0(sc_tvalue *, nt ? nt : 1);
  for (uint32_t i = 0; i < sc_graph_n_inputs(g); i++) {
    sc_id id = sc_graph_input(g, i);
    const sc_tensor *t = sc_graph_tensor(g, id);
    g_autofree char *why = NULL;
    if (inputs[i] == NULL) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INPUT, "input '%s' has no value",
                  t->name);
      sc_interp_values_free(vals, nt);
      return FALSE;
    }
    if (!value_has_type(st, symbol_values, inputs[i], &t->type, &why)) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INPUT, "input '%s': %s", t->name, why);
      sc_interp_values_free(vals, nt);
      return FALSE;
    }
    vals[id] = sc_tvalue_copy(inputs[i]);
  }
  uint32_t n_order;
  const sc_id *order = sc_graph_topo_order(g, &n_order);
  for (uint32_t k = 0; k < n_order; k++) {
    const sc_node *n = sc_graph_node(g, order[k]);
    g_autoptr(GPtrArray) res = g_ptr_array_new_with_free_func((GDestroyNotify)sc_tvalue_free);
    GError *inner = NULL;
    gboolean ok = TRUE;
    if (n->op->flags & SC_OP_DATA_DEPENDENT) {
      if (symbol_values == NULL && own_syms == NULL)
        own_syms = g_new0(int64_t, sc_symtab_n_symbols(st) + 1);
      ok = sc_interp_bind_data_dependent(g, n, vals, symbol_values ? symbol_values : own_syms,
                                         &inner);
    }
    const int64_t *symvals = symbol_values != NULL ? symbol_values : own_syms;
    if (ok)
      ok = sc_interp_eval(n->op, n->args, st, symvals, vals, nt, cfg, res, &inner);
    if (ok && res->len != n->n_results) {
      inner = g_error_new(SC_INTERP_ERROR, SC_INTERP_ERROR_SHAPE,
                          "produced %u results where the graph has %u", res->len, n->n_results);
      ok = FALSE;
    }
    for (uint32_t j = 0; ok && j < n->n_results; j++) {
      sc_id r = n->results[j];
      if (r == SC_ID_NONE)
        continue;
      g_autofree char *why = NULL;
      if (!value_has_type(st, symvals, res->pdata[j], &sc_graph_tensor(g, r)->type, &why)) {
        inner = g_error_new(SC_INTERP_ERROR, SC_INTERP_ERROR_SHAPE, "result '%s': %s",
                            sc_graph_tensor(g, r)->name, why);
        ok = FALSE;
      }
    }
    if (!ok) {
      node_error(error, n, inner);
      if (failed_node != NULL)
        *failed_node = order[k];
      sc_interp_values_free(vals, nt);
      return FALSE;
    }
    for (uint32_t j = 0; j < n->n_results; j++) {
      sc_id r = n->results[j];
      if (r != SC_ID_NONE) {
        sc_tvalue_free(vals[r]);
        vals[r] = res->pdata[j];
        res->pdata[j] = NULL;
      }
    }
  }
  *values_out = vals;
  return TRUE;
}

/* ---- bound expressions -------------------------------------------------------- */

sc_tvalue *sc_interp_eval_texpr(const sc_texpr *t, const int64_t *symbol_values,
                                sc_tvalue *const *values, const sc_interp_config *cfg,
                                GError **error) {
  sc_graph *g = sc_texpr_graph(t);
  if (sc_texpr_get_kind(t) == SC_TEXPR_TENSOR) {
    sc_id id = sc_texpr_tensor(t);
    if (id >= sc_graph_n_tensors(g) || values[id] == NULL) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_INPUT, "tensor '%s' has no value",
                  id < sc_graph_n_tensors(g) ? sc_graph_tensor(g, id)->name : "?");
      return NULL;
    }
    return sc_tvalue_copy(values[id]);
  }
  uint32_t nc = sc_texpr_n_children(t);
  sc_tvalue **kids = g_new0(sc_tvalue *, nc ? nc : 1);
  gboolean ok = TRUE;
  for (uint32_t i = 0; i < nc && ok; i++) {
    kids[i] = sc_interp_eval_texpr(sc_texpr_child(t, i), symbol_values, values, cfg, error);
    ok = kids[i] != NULL;
  }
  sc_tvalue *result = NULL;
  if (ok) {
    g_autoptr(GPtrArray) res = g_ptr_array_new_with_free_func((GDestroyNotify)sc_tvalue_free);
    if (sc_interp_eval(sc_texpr_op(t), sc_texpr_args(t), sc_graph_symtab(g), symbol_values,
                       kids, nc, cfg, res, error)) {
      if (res->len >= 1) {
        result = res->pdata[0];
        res->pdata[0] = NULL;
      } else {
        g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SHAPE, "%s produced no result",
                    sc_texpr_op(t)->qualname);
      }
    }
  }
  sc_interp_values_free(kids, nc);
  return result;
}

/* ---- symbol values ------------------------------------------------------------- */

typedef enum { REL_EQ, REL_NE, REL_LT, REL_LE, REL_GT, REL_GE } rel_kind;

/* Assumptions are evaluated from their text, not through sc_dim_parse:
 * the symtab simplifies with the very assumptions being checked (it would
 * read "S % 2" as 0 under "S % 2 == 0"). */
typedef struct {
  const sc_symtab *st;
  const char *p;
  const int64_t *vals;
  gboolean ok;
} arith;

static void skip_ws(arith *a) {
  while (*a->p == ' ' || *a->p == '\t')
    a->p++;
}

static int64_t a_sum(arith *a);

/* atom := INT | NAME | "(" sum ")" | "-" atom */
static int64_t a_atom(arith *a) {
  skip_ws(a);
  if (*a->p == '-') {
    a->p++;
    int64_t v = a_atom(a);
    if (v == INT64_MIN)
      a->ok = FALSE;
    return a->ok ? -v : 0;
  }
  if (*a->p == '(') {
    a->p++;
    int64_t v = a_sum(a);
    skip_ws(a);
    if (*a->p != ')')
      a->ok = FALSE;
    else
      a->p++;
    return v;
  }
  if (g_ascii_isdigit(*a->p)) {
    char *end = NULL;
    errno = 0;
    gint64 v = g_ascii_strtoll(a->p, &end, 10);
    if (errno != 0)
      a->ok = FALSE;
    a->p = end;
    return v;
  }
  if (g_ascii_isalpha(*a->p) || *a->p == '_') {
    const char *s = a->p;
    while (g_ascii_isalnum(*a->p) || *a->p == '_' || *a->p == '.')
      a->p++;
    g_autofree char *name = g_strndup(s, (gsize)(a->p - s));
    uint32_t idx;
    if (!sc_symtab_lookup(a->st, name, &idx)) {
      a->ok = FALSE;
      return 0;
    }
    return a->vals[idx];
  }
  a->ok = FALSE;
  return 0;
}

/* product := atom { ("*" | "/" | "%") atom }, floor division and modulo */
static int64_t a_product(arith *a) {
  int64_t v = a_atom(a);
  for (;;) {
    skip_ws(a);
    char op = *a->p;
    if (op != '*' && op != '/' && op != '%')
      return v;
    a->p++;
    int64_t r = a_atom(a);
    if (!a->ok)
      return 0;
    if (op == '*') {
      if (__builtin_mul_overflow(v, r, &v))
        a->ok = FALSE;
    } else {
      if (r == 0 || (v == INT64_MIN && r == -1)) {
        a->ok = FALSE;
        return 0;
      }
      int64_t q = v / r, m = v % r;
      if (m != 0 && ((m < 0) != (r < 0))) {
        q--;
        m += r;
      }
      v = op == '/' ? q : m;
    }
  }
}

/* sum := product { ("+" | "-") product } */
static int64_t a_sum(arith *a) {
  int64_t v = a_product(a);
  for (;;) {
    skip_ws(a);
    char op = *a->p;
    if (op != '+' && op != '-')
      return v;
    a->p++;
    int64_t r = a_product(a);
    if (op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v))
      a->ok = FALSE;
  }
}

static gboolean eval_side(const sc_symtab *st, const char *text, const int64_t *vals,
                          int64_t *out) {
  arith a = {st, text, vals, TRUE};
  *out = a_sum(&a);
  skip_ws(&a);
  return a.ok && *a.p == '\0';
}

typedef struct {
  char *lhs, *rhs;
  rel_kind rel;
  char *text;
} assumption;

/* Split "a REL b" (or a chain "a REL b REL c", as the symtab accepts:
 * "1 <= S <= 8" is 1 <= S and S <= 8) at the relational operators outside
 * parentheses, appending one assumption per link to AS; check that every
 * operand parses as a dim. */
static gboolean parse_relation(sc_symtab *st, const char *text, GArray *as, GError **error) {
  int depth = 0;
  const char *operand = text;
  char *prev = NULL;
  rel_kind prev_k = REL_EQ;
  gboolean ok = TRUE;
  for (const char *p = text;; p++) {
    size_t oplen = 0;
    rel_kind k = REL_EQ;
    if (*p == '(')
      depth++;
    else if (*p == ')')
      depth--;
    if (*p != '\0' && depth != 0)
      continue;
    if (*p == '\0') { oplen = 0; }
    else if (p[0] == '=' && p[1] == '=') { oplen = 2; k = REL_EQ; }
    else if (p[0] == '!' && p[1] == '=') { oplen = 2; k = REL_NE; }
    else if (p[0] == '<' && p[1] == '=') { oplen = 2; k = REL_LE; }
    else if (p[0] == '>' && p[1] == '=') { oplen = 2; k = REL_GE; }
    else if (p[0] == '<') { oplen = 1; k = REL_LT; }
    else if (p[0] == '>') { oplen = 1; k = REL_GT; }
    else continue;
    char *side = g_strstrip(g_strndup(operand, (gsize)(p - operand)));
    sc_dim d;
    if (!sc_dim_parse(st, side, &d, error)) {
      g_free(side);
      ok = FALSE;
      break;
    }
    if (prev != NULL) {
      assumption a = {g_strdup(prev), g_strdup(side), prev_k, g_strdup(text)};
      g_array_append_val(as, a);
    } else if (*p == '\0') {
      g_free(side);
      break; /* no comparison at all */
    }
    g_free(prev);
    prev = side;
    prev_k = k;
    if (*p == '\0')
      break;
    p += oplen - 1;
    operand = p + 1;
  }
  g_free(prev);
  return ok;
}

static gboolean holds(const sc_symtab *st, const assumption *a, const int64_t *vals) {
  int64_t l, r;
  if (!eval_side(st, a->lhs, vals, &l) || !eval_side(st, a->rhs, vals, &r))
    return FALSE;
  switch (a->rel) {
  case REL_EQ: return l == r;
  case REL_NE: return l != r;
  case REL_LT: return l < r;
  case REL_LE: return l <= r;
  case REL_GT: return l > r;
  default: return l >= r;
  }
}

static gboolean all_hold(const sc_symtab *st, GArray *as, const int64_t *vals) {
  for (guint i = 0; i < as->len; i++)
    if (!holds(st, &g_array_index(as, assumption, i), vals))
      return FALSE;
  return TRUE;
}

static void clear_assumption(gpointer p) {
  assumption *a = p;
  g_free(a->lhs);
  g_free(a->rhs);
  g_free(a->text);
}

gboolean sc_interp_pick_symbols(sc_symtab *st, sc_rng *rng, int64_t prefer_min,
                                int64_t prefer_max, int64_t *out, GError **error) {
  uint32_t ns = sc_symtab_n_symbols(st);
  g_autoptr(GArray) as = g_array_new(FALSE, TRUE, sizeof(assumption));
  g_array_set_clear_func(as, clear_assumption);
  for (uint32_t i = 0; i < sc_symtab_n_assumptions(st); i++) {
    const char *text = sc_symtab_assumption_text(st, i);
    g_auto(GStrv) parts = g_regex_split_simple("&&|\\band\\b", text, 0, 0);
    for (guint k = 0; parts[k] != NULL; k++) {
      if (*g_strstrip(parts[k]) == '\0')
        continue;
      guint before = as->len;
      if (!parse_relation(st, parts[k], as, error))
        return FALSE;
      if (as->len == before) {
        g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL,
                    "assumption '%s' has no comparison", parts[k]);
        return FALSE;
      }
    }
  }
  if (ns == 0) {
    if (all_hold(st, as, out))
      return TRUE;
    g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL, "the assumptions do not hold");
    return FALSE;
  }
  g_autofree int64_t *lo = g_new(int64_t, ns);
  g_autofree int64_t *hi = g_new(int64_t, ns);
  for (uint32_t i = 0; i < ns; i++) {
    gboolean has_min, has_max;
    int64_t mn, mx;
    sc_symtab_symbol_bounds(st, i, &has_min, &mn, &has_max, &mx);
    if (!has_min)
      mn = 0;
    lo[i] = MAX(mn, prefer_min);
    hi[i] = has_max ? MIN(mx, prefer_max) : prefer_max;
    if (lo[i] > hi[i]) { /* the preferred box misses the bounds: use the bounds */
      lo[i] = mn;
      hi[i] = has_max ? mx : mn + (prefer_max - prefer_min);
      if (hi[i] < lo[i])
        hi[i] = lo[i];
    }
  }
  for (int attempt = 0; attempt < 256; attempt++) {
    for (uint32_t i = 0; i < ns; i++)
      out[i] = sc_rng_int(rng, lo[i], hi[i]);
    if (all_hold(st, as, out))
      return TRUE;
  }
  /* systematic search of the box, smallest first, at most 2^20 points */
  for (uint32_t i = 0; i < ns; i++)
    out[i] = lo[i];
  for (uint32_t steps = 0; steps < (1u << 20); steps++) {
    if (all_hold(st, as, out))
      return TRUE;
    uint32_t d = 0;
    while (d < ns) {
      if (out[d] < hi[d]) {
        out[d]++;
        break;
      }
      out[d] = lo[d];
      d++;
    }
    if (d == ns)
      break;
  }
  GString *list = g_string_new(NULL);
  for (guint i = 0; i < as->len; i++)
    g_string_append_printf(list, "%s'%s'", i ? ", " : "", g_array_index(as, assumption, i).text);
  g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL,
              "no symbol values in the searched range meet the bounds and assumptions %s",
              list->str);
  g_string_free(list, TRUE);
  return FALSE;
}
