/* check.c — the lemma checker: resolves operator names, binds pattern
 * arguments to the operators' schemas, gives every variable one kind
 * (tensor or attribute), checks that the right side, the condition and
 * the requires patterns use only bound variables, and refutes lemmas
 * whose sides differ in type by running the shape rules on instances.
 *
 * The instance test: up to N_TRIALS deterministic pseudo-random
 * assignments of types to tensor variables and values to attribute
 * variables; for each one where the left side is well-typed and the
 * condition is YES, the right side must be well-typed with the same shape
 * and dtype (for <=>, the converse too).  A failure is reported with the
 * instance.  The test refutes; it does not prove (the lemma library is
 * also checked numerically by the test programs in tests/lemmas/).
 *
 * Invariants: a returned ld_checked has pnodes whose op, arg constraints
 * and child layout agree with the op's schema; attribute variables never
 * appear at tensor positions and vice versa. */
#include "lemma/lemma-private.h"
#include "ops/ops-private.h"

#include <string.h>

#define N_TRIALS 600
#define N_GOOD_ENOUGH 40

typedef enum { SIDE_LHS, SIDE_RHS, SIDE_REQ } side;

typedef struct {
  ld_diag *d;
  ld_vars *vars;
  GPtrArray *attr_arg;  /* per var: const sc_arg * of its first attribute use */
  gboolean both;        /* <=>: each side must also be valid as the other */
  gboolean failed;
} cctx;

void pnode_free(pnode *p) {
  if (p == NULL)
    return;
  if (!p->is_var) {
    for (uint32_t i = 0; i < p->op->n_args; i++)
      sc_value_clear(&p->args[i].value);
    g_free(p->args);
    g_free(p->layout);
    for (uint32_t i = 0; i < p->n_kids; i++)
      pnode_free(p->kids[i]);
    g_free(p->kids);
  }
  g_free(p);
}

static void vars_init(ld_vars *v) {
  v->names = g_ptr_array_new_with_free_func(g_free);
  v->is_attr = g_array_new(FALSE, FALSE, sizeof(gboolean));
  v->first_pos = g_array_new(FALSE, FALSE, sizeof(uint32_t));
}

static void vars_clear(ld_vars *v) {
  if (v->names)
    g_ptr_array_free(v->names, TRUE);
  if (v->is_attr)
    g_array_free(v->is_attr, TRUE);
  if (v->first_pos)
    g_array_free(v->first_pos, TRUE);
  v->names = NULL;
  v->is_attr = v->first_pos = NULL;
}

void ld_checked_free(gpointer p) {
  ld_checked *c = p;
  if (c == NULL)
    return;
  g_free(c->name);
  g_free(c->file);
  g_free(c->text);
  vars_clear(&c->vars);
  pnode_free(c->lhs);
  pnode_free(c->rhs);
  if (c->requires)
    g_ptr_array_free(c->requires, TRUE);
  lx_free(c->where);
  lx_free(c->rhs_src);
  lx_free(c->lhs_src);
  if (c->req_src)
    g_ptr_array_free(c->req_src, TRUE);
  g_free(c);
}

static uint32_t var_find(const ld_vars *v, const char *name) {
  for (guint i = 0; i < v->names->len; i++)
    if (strcmp(g_ptr_array_index(v->names, i), name) == 0)
      return i;
  return UINT32_MAX;
}

/* Declare or look up ?name with kind is_attr; a kind clash is an error. */
static uint32_t var_use(cctx *c, const char *name, gboolean is_attr, uint32_t pos,
                        const sc_arg *arg, gboolean may_add) {
  uint32_t i = var_find(c->vars, name);
  if (i == UINT32_MAX) {
    if (!may_add)
      return UINT32_MAX;
    g_ptr_array_add(c->vars->names, g_strdup(name));
    g_array_append_val(c->vars->is_attr, is_attr);
    g_array_append_val(c->vars->first_pos, pos);
    g_ptr_array_add(c->attr_arg, (gpointer)arg);
    return c->vars->names->len - 1;
  }
  gboolean was = g_array_index(c->vars->is_attr, gboolean, i);
  if (was != is_attr) {
    uint32_t line, col;
    ld_line_col(c->d->text, g_array_index(c->vars->first_pos, uint32_t, i), &line, &col);
    ld_error_at(c->d, pos, SC_LEMMA_ERROR_VAR,
                "?%s is used as %s here but as %s at %u:%u", name,
                is_attr ? "an attribute" : "a tensor", was ? "an attribute" : "a tensor", line,
                col);
    c->failed = TRUE;
    return UINT32_MAX;
  }
  if (is_attr && g_ptr_array_index(c->attr_arg, i) == NULL)
    g_ptr_array_index(c->attr_arg, i) = (gpointer)arg;
  return i;
}

static const char *kind_word(const lx *e) {
  switch (e->kind) {
  case LX_INT: return "an integer";
  case LX_FLOAT: return "a float";
  case LX_STR: return "a string";
  case LX_NAME: return "a name";
  case LX_LIST: return "a list";
  case LX_VAR: return "a variable";
  case LX_WILD: return "'?_'";
  case LX_CALL: return "an operator call";
  case LX_BIN: case LX_NEG: return "an arithmetic expression";
  default: return "a condition";
  }
}

gboolean ld_literal_value(const lx *e, const sc_arg *arg, sc_value *out, const char **why) {
  *out = sc_value_none();
  *why = NULL;
  if (e->kind == LX_NAME && strcmp(e->text, "None") == 0) {
    if (arg->optional || arg->type == SC_ARG_IGNORED)
      return TRUE;
    *why = "None is not allowed here (the argument is not optional)";
    return FALSE;
  }
  switch (arg->type) {
  case SC_ARG_INT:
    if (e->kind == LX_INT) {
      *out = sc_value_int(e->ival);
      return TRUE;
    }
    break;
  case SC_ARG_INT_LIST:
    if (e->kind == LX_INT && arg->fixed_len > 0) {
      out->kind = SC_VAL_INT_LIST;
      out->u.ints.n = arg->fixed_len;
      out->u.ints.v = g_new(sc_dim, arg->fixed_len);
      for (uint32_t i = 0; i < arg->fixed_len; i++)
        out->u.ints.v[i] = sc_dim_const(e->ival);
      return TRUE;
    }
    if (e->kind == LX_LIST) {
      for (uint32_t i = 0; i < e->n; i++)
        if (e->kids[i]->kind != LX_INT)
          return FALSE;
      out->kind = SC_VAL_INT_LIST;
      out->u.ints.n = e->n;
      out->u.ints.v = g_new(sc_dim, e->n ? e->n : 1);
      for (uint32_t i = 0; i < e->n; i++)
        out->u.ints.v[i] = sc_dim_const(e->kids[i]->ival);
      return TRUE;
    }
    break;
  case SC_ARG_FLOAT:
    if (e->kind == LX_INT || e->kind == LX_FLOAT) {
      *out = sc_value_float(e->kind == LX_INT ? (double)e->ival : e->fval);
      return TRUE;
    }
    break;
  case SC_ARG_BOOL:
    if (e->kind == LX_NAME && (strcmp(e->text, "True") == 0 || strcmp(e->text, "False") == 0)) {
      *out = sc_value_bool(e->text[0] == 'T');
      return TRUE;
    }
    break;
  case SC_ARG_BOOL_LIST:
    if (e->kind == LX_LIST) {
      for (uint32_t i = 0; i < e->n; i++)
        if (e->kids[i]->kind != LX_NAME ||
            (strcmp(e->kids[i]->text, "True") != 0 && strcmp(e->kids[i]->text, "False") != 0))
          return FALSE;
      out->kind = SC_VAL_BOOL_LIST;
      out->u.bools.n = e->n;
      out->u.bools.v = g_new(gboolean, e->n ? e->n : 1);
      for (uint32_t i = 0; i < e->n; i++)
        out->u.bools.v[i] = e->kids[i]->text[0] == 'T';
      return TRUE;
    }
    break;
  case SC_ARG_STR:
    if (e->kind == LX_STR) {
      *out = sc_value_str(e->text);
      return TRUE;
    }
    break;
  case SC_ARG_SCALAR:
    if (e->kind == LX_INT) {
      *out = sc_value_int(e->ival);
      return TRUE;
    }
    if (e->kind == LX_FLOAT) {
      *out = sc_value_float(e->fval);
      return TRUE;
    }
    if (e->kind == LX_NAME && (strcmp(e->text, "True") == 0 || strcmp(e->text, "False") == 0)) {
      *out = sc_value_bool(e->text[0] == 'T');
      return TRUE;
    }
    break;
  case SC_ARG_DTYPE:
    if (e->kind == LX_NAME) {
      sc_dtype dt;
      if (sc_dtype_from_name(e->text, &dt)) {
        out->kind = SC_VAL_DTYPE;
        out->u.dtype = dt;
        return TRUE;
      }
      *why = "unknown dtype";
      return FALSE;
    }
    break;
  case SC_ARG_IGNORED:
    return TRUE;
  default:
    break;
  }
  return FALSE;
}

/* Does E contain a variable or a call (so it is not a literal)? */
static gboolean has_vars(const lx *e) {
  if (e->kind == LX_VAR || e->kind == LX_WILD || e->kind == LX_CALL)
    return TRUE;
  for (uint32_t i = 0; i < e->n; i++)
    if (has_vars(e->kids[i]))
      return TRUE;
  return FALSE;
}

static gboolean is_tensor_arg(const sc_arg *a) {
  return a->type == SC_ARG_TENSOR || a->type == SC_ARG_TENSOR_LIST ||
         a->type == SC_ARG_TENSOR_OPT_LIST;
}

static gboolean tensor_like(const lx *e) { return e->kind == LX_VAR || e->kind == LX_CALL; }

static const sc_op *resolve_op(cctx *c, const lx *e) {
  if (e->text[0] == '?') {
    ld_error_at(c->d, e->start, SC_LEMMA_ERROR_UNKNOWN_OP,
                "the operator variable %s is not bound: add 'for %s in CLASS' (classes: %s)",
                e->text, e->text, sc_ops_class_names());
    c->failed = TRUE;
    return NULL;
  }
  g_autoptr(GError) err = NULL;
  const sc_op *op = sc_ops_lookup_func(e->text, &err);
  if (op != NULL)
    return op;
  const char *msg = err->message;
  if (g_str_has_prefix(msg, "unknown function "))
    ld_error_at(c->d, e->start, SC_LEMMA_ERROR_UNKNOWN_OP, "unknown operator %s",
                msg + strlen("unknown function "));
  else
    ld_error_at(c->d, e->start, SC_LEMMA_ERROR_UNKNOWN_OP, "%s", msg);
  c->failed = TRUE;
  return NULL;
}

static const char *nearest_arg(const sc_op *op, const char *name) {
  const char *best = NULL;
  uint32_t best_d = 3;
  for (uint32_t i = 0; i < op->n_args; i++) {
    uint32_t dd = sc_ops_edit_distance(name, op->args[i].name, best_d - 1);
    if (dd < best_d) {
      best_d = dd;
      best = op->args[i].name;
    }
  }
  return best;
}

static gboolean err_at(cctx *c, uint32_t pos, sc_lemma_error code, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static gboolean err_at(cctx *c, uint32_t pos, sc_lemma_error code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  ld_error_at(c->d, pos, code, "%s", m);
  c->failed = TRUE;
  return FALSE;
}

static pnode *resolve(cctx *c, const lx *e, side s);

/* Bind item E to argument A of node P (tensor kids go to KIDS[a]). */
static gboolean bind_item(cctx *c, pnode *p, uint32_t a, const lx *e, side s, GPtrArray **kids) {
  const sc_op *op = p->op;
  const sc_arg *arg = &op->args[a];
  if (arg->type == SC_ARG_TENSOR_OPT_LIST && e->kind == LX_LIST)
    for (uint32_t i = 0; i < e->n; i++)
      if (e->kids[i]->kind == LX_NAME && strcmp(e->kids[i]->text, "None") == 0)
        return err_at(c, e->kids[i]->start, SC_LEMMA_ERROR_ARGS,
                      "argument '%s' of %s: a None item of a Tensor?[] cannot be matched "
                      "(write tensors only)",
                      arg->name, op->qualname);
  if (arg->type == SC_ARG_TENSOR) {
    if (!tensor_like(e))
      return err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
                    "argument '%s' of %s is a tensor: expected ?x or an operator call, found %s",
                    arg->name, op->qualname, kind_word(e));
    pnode *k = resolve(c, e, s);
    if (k == NULL)
      return FALSE;
    g_ptr_array_add(kids[a], k);
    return TRUE;
  }
  if (arg->type == SC_ARG_TENSOR_LIST || arg->type == SC_ARG_TENSOR_OPT_LIST) {
    /* a Tensor?[] of tensors only (index(?w, [?ids])) binds like a Tensor[] */
    if (e->kind != LX_LIST)
      return err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
                    "argument '%s' of %s is a list of tensors: expected [..], found %s",
                    arg->name, op->qualname, kind_word(e));
    for (uint32_t i = 0; i < e->n; i++) {
      if (!tensor_like(e->kids[i]))
        return err_at(c, e->kids[i]->start, SC_LEMMA_ERROR_ARGS,
                      "argument '%s' of %s holds tensors: expected ?x or an operator call, "
                      "found %s",
                      arg->name, op->qualname, kind_word(e->kids[i]));
      pnode *k = resolve(c, e->kids[i], s);
      if (k == NULL)
        return FALSE;
      g_ptr_array_add(kids[a], k);
    }
    return TRUE;
  }
  pat_arg *pa = &p->args[a];
  if (e->kind == LX_VAR) {
    uint32_t v = var_use(c, e->text, TRUE, e->start, arg, s != SIDE_RHS);
    if (v == UINT32_MAX) {
      if (!c->failed)
        err_at(c, e->start, SC_LEMMA_ERROR_VAR,
               "?%s on the right is not bound by the left side or requires", e->text);
      return FALSE;
    }
    pa->kind = PA_VAR;
    pa->var = v;
    return TRUE;
  }
  if (e->kind == LX_WILD) {
    if (s == SIDE_RHS || c->both)
      return err_at(c, e->start, SC_LEMMA_ERROR_VAR,
                    "'?_' matches any value: it cannot be used on the right side%s",
                    c->both ? " (a <=> lemma's sides are both left and right)" : "");
    pa->kind = PA_WILD;
    return TRUE;
  }
  if (!has_vars(e) && e->kind != LX_BIN && e->kind != LX_NEG) {
    const char *why = NULL;
    if (!ld_literal_value(e, arg, &pa->value, &why)) {
      g_autofree char *ty = sc_ops_arg_type_string(arg);
      return err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
                    "argument '%s' of %s expects %s, found %s%s%s", arg->name, op->qualname, ty,
                    kind_word(e), why ? ": " : "", why ? why : "");
    }
    pa->kind = PA_LITERAL;
    return TRUE;
  }
  if (s != SIDE_RHS || c->both)
    return err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
                  "argument '%s' of %s: a computed value is only allowed on the right side of "
                  "a => lemma (the left side matches; write ?v and a where condition)",
                  arg->name, op->qualname);
  pa->kind = PA_COMPUTE;
  pa->expr = e;
  return TRUE;
}

static pnode *resolve(cctx *c, const lx *e, side s) {
  if (e->kind == LX_VAR) {
    uint32_t v = var_use(c, e->text, FALSE, e->start, NULL, s != SIDE_RHS);
    if (v == UINT32_MAX) {
      if (!c->failed)
        err_at(c, e->start, SC_LEMMA_ERROR_VAR,
               "?%s on the right is not bound by the left side or requires", e->text);
      return NULL;
    }
    pnode *p = g_new0(pnode, 1);
    p->is_var = TRUE;
    p->var = v;
    p->result_var = UINT32_MAX;
    p->pos = e->start;
    return p;
  }
  if (e->kind != LX_CALL) {
    err_at(c, e->start, SC_LEMMA_ERROR_SYNTAX,
           "expected a pattern (?x or an operator call), found %s", kind_word(e));
    return NULL;
  }
  const sc_op *op = resolve_op(c, e);
  if (op == NULL)
    return NULL;
  if (s != SIDE_RHS || c->both) {
    const char *canon = sc_lang_rewritten_to(op);
    if (canon != NULL) {
      err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
             "%s never appears in the e-graph (it is rewritten to %s when added): write the "
             "canonical form",
             op->qualname, canon);
      return NULL;
    }
  }
  uint32_t result = 0, result_var = UINT32_MAX;
  if (e->result_var != NULL) {
    /* op#?k(...): the result index is an attribute variable (an int) */
    if (!op->results_variadic && op->n_results < 2) {
      err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
             "%s has one result: a result-index variable #?%s has nothing to range over",
             op->qualname, e->result_var);
      return NULL;
    }
    result_var = var_use(c, e->result_var, TRUE, e->result_var_pos, NULL, s != SIDE_RHS);
    if (result_var == UINT32_MAX) {
      if (!c->failed)
        err_at(c, e->result_var_pos, SC_LEMMA_ERROR_VAR,
               "?%s on the right is not bound by the left side or requires", e->result_var);
      return NULL;
    }
  } else if (e->result >= 0) {
    if (!op->results_variadic && (uint32_t)e->result >= op->n_results) {
      err_at(c, e->start, SC_LEMMA_ERROR_ARGS, "%s has %u result%s: #%d is out of range",
             op->qualname, op->n_results, op->n_results == 1 ? "" : "s", e->result);
      return NULL;
    }
    result = (uint32_t)e->result;
  } else if (op->results_variadic || op->n_results > 1) {
    err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
           "%s has several results: write %s#k(...) for result k", op->qualname, e->text);
    return NULL;
  }
  pnode *p = g_new0(pnode, 1);
  p->pos = e->start;
  p->op = op;
  p->result = result;
  p->result_var = result_var;
  p->args = g_new0(pat_arg, op->n_args ? op->n_args : 1);
  p->layout = g_new0(uint32_t, op->n_args ? op->n_args : 1);
  GPtrArray **kids = g_new0(GPtrArray *, op->n_args ? op->n_args : 1);
  gboolean *filled = g_new0(gboolean, op->n_args ? op->n_args : 1);
  for (uint32_t i = 0; i < op->n_args; i++) {
    kids[i] = g_ptr_array_new();
    p->args[i].value = sc_value_none();
  }
  gboolean ok = TRUE, seen_kw = FALSE;
  uint32_t next_pos = 0;
  gboolean variadic = op->n_args > 0 && op->args[0].type == SC_ARG_TENSOR_LIST &&
                      strcmp(op->ns, "sc") == 0;
  for (uint32_t i = 0; ok && i < e->n; i++) {
    const lx *item = e->kids[i];
    const char *key = e->keys[i];
    uint32_t a;
    if (key == NULL) {
      if (seen_kw) {
        ok = err_at(c, item->start, SC_LEMMA_ERROR_ARGS,
                    "positional argument after a keyword argument");
        break;
      }
      if (variadic && next_pos == 0 && tensor_like(item)) {
        pnode *k = resolve(c, item, s);
        if (k == NULL) {
          ok = FALSE;
          break;
        }
        g_ptr_array_add(kids[0], k);
        filled[0] = TRUE;
        continue;
      }
      if (variadic && next_pos == 0 && filled[0])
        next_pos = 1;
      while (next_pos < op->n_args && op->args[next_pos].kwarg_only)
        next_pos++;
      if (next_pos >= op->n_args) {
        uint32_t npos = 0;
        for (uint32_t j = 0; j < op->n_args; j++)
          npos += !op->args[j].kwarg_only;
        ok = err_at(c, item->start, SC_LEMMA_ERROR_ARGS,
                    "too many arguments: %s takes %u positional argument%s", op->qualname, npos,
                    npos == 1 ? "" : "s");
        break;
      }
      a = next_pos++;
    } else {
      seen_kw = TRUE;
      int32_t ai = sc_ops_arg_index(op, key);
      if (ai < 0) {
        const char *near = nearest_arg(op, key);
        if (near)
          ok = err_at(c, e->key_pos[i], SC_LEMMA_ERROR_ARGS,
                      "%s has no argument '%s' (did you mean '%s'?)", op->qualname, key, near);
        else
          ok = err_at(c, e->key_pos[i], SC_LEMMA_ERROR_ARGS, "%s has no argument '%s'",
                      op->qualname, key);
        break;
      }
      a = (uint32_t)ai;
    }
    if (filled[a]) {
      ok = err_at(c, key ? e->key_pos[i] : item->start, SC_LEMMA_ERROR_ARGS,
                  "argument '%s' of %s is given twice", op->args[a].name, op->qualname);
      break;
    }
    filled[a] = TRUE;
    ok = bind_item(c, p, a, item, s, kids);
  }
  for (uint32_t a = 0; ok && a < op->n_args; a++) {
    const sc_arg *arg = &op->args[a];
    if (filled[a]) {
      if (arg->type == SC_ARG_TENSOR_LIST || arg->type == SC_ARG_TENSOR_OPT_LIST)
        p->layout[a] = kids[a]->len;
      else if (arg->type == SC_ARG_TENSOR)
        p->layout[a] = 1;
      continue;
    }
    if (arg->type == SC_ARG_TENSOR && arg->optional) {
      p->layout[a] = UINT32_MAX;
      continue;
    }
    if (is_tensor_arg(arg) || (!arg->has_default && !arg->optional)) {
      ok = err_at(c, e->end > 0 ? e->end - 1 : e->start, SC_LEMMA_ERROR_ARGS,
                  "missing argument '%s' of %s", arg->name, op->qualname);
      break;
    }
    p->args[a].kind = PA_DEFAULT;
    if (arg->has_default)
      sc_value_copy(&p->args[a].value, &arg->default_value);
  }
  if (ok && (s != SIDE_RHS || c->both) && strcmp(op->ns, "sc") == 0 &&
      (strcmp(op->name, "cat") == 0 || strcmp(op->name, "sum") == 0) && kids[0]->len != 2)
    ok = err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
                "%s with %u parts never appears in the e-graph: cat and sum are kept binary "
                "(cat(a, b, c) is cat(cat(a, b), c)); match two parts",
                op->qualname, kids[0]->len);
  uint32_t n = 0;
  for (uint32_t a = 0; a < op->n_args; a++)
    n += kids[a]->len;
  p->n_kids = 0;
  p->kids = g_new0(pnode *, n ? n : 1);
  for (uint32_t a = 0; a < op->n_args; a++) {
    for (guint j = 0; j < kids[a]->len; j++)
      p->kids[p->n_kids++] = g_ptr_array_index(kids[a], j);
    g_ptr_array_free(kids[a], TRUE);
  }
  g_free(kids);
  g_free(filled);
  if (!ok) {
    pnode_free(p);
    return NULL;
  }
  return p;
}

/* --- conditions: static check of names and kinds --- */

static gboolean check_cond(cctx *c, const lx *e, gboolean in_decl) {
  switch (e->kind) {
  case LX_VAR: {
    uint32_t v = var_find(c->vars, e->text);
    if (v == UINT32_MAX)
      return err_at(c, e->start, SC_LEMMA_ERROR_VAR,
                    "?%s in the condition is not bound by the left side or requires", e->text);
    return TRUE;
  }
  case LX_WILD:
    return err_at(c, e->start, SC_LEMMA_ERROR_VAR, "'?_' cannot be used in a condition");
  case LX_NAME: {
    sc_dtype dt;
    if (sc_dtype_from_name(e->text, &dt) || strcmp(e->text, "True") == 0 ||
        strcmp(e->text, "False") == 0 || strcmp(e->text, "None") == 0)
      return TRUE;
    if (in_decl)
      return TRUE; /* parameters: checked by the declaration */
    return err_at(c, e->start, SC_LEMMA_ERROR_VAR,
                  "unknown name '%s' in a condition (variables are written ?%s)", e->text,
                  e->text);
  }
  case LX_CALL: {
    static const struct {
      const char *name;
      uint32_t n;
      int tensor_arg; /* index of an argument that must be a tensor, or -1 */
    } fns[] = {{"size", 2, 0},  {"rank", 1, 0},      {"dtype", 1, 0}, {"shape", 1, 0},
               {"numel", 1, 0}, {"with_size", 3, -1}, {"min", 2, -1}, {"max", 2, -1},
               {"indexof", 2, -1}, {"at", 2, -1},    {"diffat", 2, -1}, {"prod", 3, -1},
               {"cutat", 2, -1},   {"insert", 3, -1}, {"vmin", 1, 0},   {"vmax", 1, 0},
               {"append", 2, -1},  {"remove", 2, -1}, {"broadcast", 2, -1}, {"len", 1, -1}, {"reduced", 3, -1},
               {"reduced_before", 3, -1}, {"reduced_numel", 2, -1}, {"unitperm", 2, -1},
               {"permshape", 2, -1}, {"unitdrop", 1, -1}, {"unitdropperm", 2, -1},
               {"ones", 1, -1}};
    for (size_t i = 0; i < G_N_ELEMENTS(fns); i++) {
      if (strcmp(e->text, fns[i].name) != 0)
        continue;
      if (e->n != fns[i].n || e->result >= 0 || e->result_var != NULL)
        return err_at(c, e->start, SC_LEMMA_ERROR_ARGS, "%s takes %u argument%s", fns[i].name,
                      fns[i].n, fns[i].n == 1 ? "" : "s");
      for (uint32_t k = 0; k < e->n; k++)
        if (e->keys[k])
          return err_at(c, e->key_pos[k], SC_LEMMA_ERROR_ARGS,
                        "%s takes no keyword arguments", fns[i].name);
      if (fns[i].tensor_arg >= 0) {
        const lx *t = e->kids[fns[i].tensor_arg];
        if (t->kind == LX_VAR) {
          uint32_t v = var_find(c->vars, t->text);
          if (v != UINT32_MAX && g_array_index(c->vars->is_attr, gboolean, v))
            return err_at(c, t->start, SC_LEMMA_ERROR_VAR,
                          "%s needs a tensor, but ?%s is an attribute", fns[i].name, t->text);
        } else if (!(in_decl && t->kind == LX_NAME)) {
          return err_at(c, t->start, SC_LEMMA_ERROR_ARGS,
                        "%s needs a tensor variable, found %s", fns[i].name, kind_word(t));
        }
      }
      for (uint32_t k = 0; k < e->n; k++)
        if (!check_cond(c, e->kids[k], in_decl))
          return FALSE;
      return TRUE;
    }
    return err_at(c, e->start, SC_LEMMA_ERROR_ARGS,
                  "unknown function '%s' in a condition (known: size, rank, dtype, shape, numel, "
                  "with_size, min, max, indexof, at, diffat, prod, cutat, insert, vmin, vmax, "
                  "append, remove, broadcast, len, reduced, reduced_before, reduced_numel, unitperm, "
                  "permshape, unitdrop, unitdropperm)",
                  e->text);
  }
  default:
    for (uint32_t k = 0; k < e->n; k++)
      if (!check_cond(c, e->kids[k], in_decl))
        return FALSE;
    return TRUE;
  }
}

/* Check the computed attributes of a right side as conditions. */
static gboolean check_computed(cctx *c, const pnode *p) {
  if (p->is_var)
    return TRUE;
  for (uint32_t a = 0; a < p->op->n_args; a++)
    if (p->args[a].kind == PA_COMPUTE && !check_cond(c, p->args[a].expr, FALSE))
      return FALSE;
  for (uint32_t i = 0; i < p->n_kids; i++)
    if (!check_computed(c, p->kids[i]))
      return FALSE;
  return TRUE;
}

void lx_vars(const lx *e, const ld_vars *vars, gboolean *seen) {
  if (e == NULL)
    return;
  uint32_t v = UINT32_MAX;
  if (e->kind == LX_VAR && e->text)
    v = var_find(vars, e->text);
  else if (e->kind == LX_CALL && e->result_var)
    v = var_find(vars, e->result_var);
  if (v != UINT32_MAX)
    seen[v] = TRUE;
  for (uint32_t i = 0; i < e->n; i++)
    lx_vars(e->kids[i], vars, seen);
}

void pn_vars(const pnode *p, const ld_vars *vars, gboolean computed, gboolean *seen) {
  if (p->is_var) {
    seen[p->var] = TRUE;
    return;
  }
  if (p->result_var != UINT32_MAX)
    seen[p->result_var] = TRUE;
  for (uint32_t a = 0; a < p->op->n_args; a++) {
    if (p->args[a].kind == PA_VAR)
      seen[p->args[a].var] = TRUE;
    else if (computed && p->args[a].kind == PA_COMPUTE)
      lx_vars(p->args[a].expr, vars, seen);
  }
  for (uint32_t i = 0; i < p->n_kids; i++)
    pn_vars(p->kids[i], vars, computed, seen);
}

static void collect_vars(const pnode *p, const ld_vars *vars, gboolean *seen) {
  pn_vars(p, vars, FALSE, seen);
}

/* ------------------------------------------------------------------------ */
/* The instance test                                                         */

typedef struct {
  sc_symtab *st;
  const ld_vars *vars;
  sc_ttype *types;    /* per var (tensor vars) */
  sc_value *values;   /* per var (attribute vars) */
  GArray *scratch;    /* sc_ttype: types of sub-terms during inference */
} inst;

static gboolean inst_lookup(void *env, const lx *ref, ev_val *out) {
  inst *I = env;
  if (ref->kind != LX_VAR)
    return FALSE;
  uint32_t v = var_find(I->vars, ref->text);
  if (v == UINT32_MAX)
    return FALSE;
  if (g_array_index(I->vars->is_attr, gboolean, v)) {
    out->kind = EV_VALUE;
    out->v = &I->values[v];
  } else {
    out->kind = EV_TENSOR;
    out->type = &I->types[v];
  }
  return TRUE;
}

static const sc_ttype *scratch_type(void *env, sc_id i) {
  GArray *a = env;
  return i < a->len ? &g_array_index(a, sc_ttype, i) : NULL;
}

/* Infer the type of P under the instance; FALSE with a message (when WHY
 * is not NULL) when a shape rule refuses or a computed value cannot be
 * evaluated.  The instance test calls it with WHY NULL on every trial and
 * again with WHY only to word a refusal: most trials are ill-typed on one
 * side, and formatting their messages was most of the load time. */
static gboolean infer(inst *I, const pnode *p, sc_ttype *out, char **why) {
  if (p->is_var) {
    *out = I->types[p->var];
    return TRUE;
  }
  const sc_op *op = p->op;
  sc_ttype *kt = g_new(sc_ttype, p->n_kids ? p->n_kids : 1);
  for (uint32_t i = 0; i < p->n_kids; i++)
    if (!infer(I, p->kids[i], &kt[i], why)) {
      g_free(kt);
      return FALSE;
    }
  sc_value *args = g_new0(sc_value, op->n_args ? op->n_args : 1);
  GArray *tys = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
  g_array_append_vals(tys, kt, p->n_kids);
  g_free(kt);
  ev_env env = {I->st, inst_lookup, I};
  uint32_t result = p->result;
  gboolean ok = pn_call_args(p, I->values, &env, NULL, args, why);
  if (ok) {
    sc_op_call call = {op, args, scratch_type, tys, I->st};
    GArray *res = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
    g_autoptr(GError) err = NULL;
    if (!sc_ops_infer(&call, res, why ? &err : NULL)) {
      if (why)
        *why = g_strdup_printf("%s: %s", op->qualname, err ? err->message : "refused");
      ok = FALSE;
    } else if (!pn_result(p, I->values, &result) || result >= res->len) {
      if (why)
        *why = g_strdup_printf("%s has no result %u here", op->qualname, result);
      ok = FALSE;
    } else {
      *out = g_array_index(res, sc_ttype, result);
    }
    g_array_free(res, TRUE);
  }
  for (uint32_t a = 0; a < op->n_args; a++)
    sc_value_clear(&args[a]);
  g_free(args);
  g_array_free(tys, TRUE);
  return ok;
}

static char *type_text(const sc_ttype *t) {
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s%s", sc_dtype_name(t->dtype), s);
}

static char *inst_text(const inst *I, const gboolean *used) {
  GString *s = g_string_new(NULL);
  for (guint v = 0; v < I->vars->names->len; v++) {
    if (!used[v])
      continue;
    if (s->len)
      g_string_append(s, ", ");
    const char *name = g_ptr_array_index(I->vars->names, v);
    if (g_array_index(I->vars->is_attr, gboolean, v)) {
      g_autofree char *t = sc_value_to_string(&I->values[v], I->st, NULL, NULL);
      g_string_append_printf(s, "?%s = %s", name, t);
    } else {
      g_autofree char *t = type_text(&I->types[v]);
      g_string_append_printf(s, "?%s: %s", name, t);
    }
  }
  return g_string_free(s, FALSE);
}

static int64_t pick(GRand *r, const int64_t *choices, uint32_t n) {
  return choices[g_rand_int_range(r, 0, (gint32)n)];
}

static void random_instance(GRand *r, inst *I, GPtrArray *attr_arg) {
  static const int64_t sizes[] = {4, 4, 4, 4, 4, 2, 2, 1, 3, 6, 8};
  static const int64_t ints[] = {0, 0, 1, 1, 2, 2, 3, 4, -1, 6, 8};
  for (guint v = 0; v < I->vars->names->len; v++) {
    sc_value_clear(&I->values[v]);
    if (!g_array_index(I->vars->is_attr, gboolean, v)) {
      uint32_t rank = (uint32_t)g_rand_int_range(r, 1, 4);
      if (g_rand_int_range(r, 0, 10) == 0)
        rank = 4;
      int64_t dims[SC_MAX_RANK];
      gboolean uniform = g_rand_boolean(r);
      for (uint32_t k = 0; k < rank; k++)
        dims[k] = uniform ? 4 : pick(r, sizes, G_N_ELEMENTS(sizes));
      I->types[v].shape = sc_shape_of(rank, dims);
      I->types[v].dtype = g_rand_int_range(r, 0, 8) == 0 ? SC_DTYPE_F16 : SC_DTYPE_F32;
      continue;
    }
    const sc_arg *arg = g_ptr_array_index(attr_arg, v);
    sc_arg_type t = arg ? arg->type : SC_ARG_INT;
    switch (t) {
    case SC_ARG_INT:
    case SC_ARG_SCALAR:
      I->values[v] = sc_value_int(pick(r, ints, G_N_ELEMENTS(ints)));
      break;
    case SC_ARG_INT_LIST: {
      uint32_t n = (uint32_t)g_rand_int_range(r, 1, 4);
      sc_value *x = &I->values[v];
      x->kind = SC_VAL_INT_LIST;
      x->u.ints.n = n;
      x->u.ints.v = g_new(sc_dim, n);
      gboolean perm = g_rand_boolean(r);
      for (uint32_t k = 0; k < n; k++)
        x->u.ints.v[k] = sc_dim_const(perm ? (int64_t)k : pick(r, sizes, G_N_ELEMENTS(sizes)));
      if (perm)
        for (uint32_t k = n; k > 1; k--) {
          uint32_t j = (uint32_t)g_rand_int_range(r, 0, (gint32)k);
          sc_dim tmp = x->u.ints.v[k - 1];
          x->u.ints.v[k - 1] = x->u.ints.v[j];
          x->u.ints.v[j] = tmp;
        }
      break;
    }
    case SC_ARG_FLOAT:
      I->values[v] = sc_value_float(g_rand_boolean(r) ? 1e-5 : 0.5);
      break;
    case SC_ARG_BOOL:
      I->values[v] = sc_value_bool(g_rand_boolean(r));
      break;
    case SC_ARG_DTYPE:
      I->values[v].kind = SC_VAL_DTYPE;
      I->values[v].u.dtype = g_rand_boolean(r) ? SC_DTYPE_F32 : SC_DTYPE_F16;
      break;
    default:
      if (arg && arg->has_default)
        sc_value_copy(&I->values[v], &arg->default_value);
      else if (t == SC_ARG_STR)
        I->values[v] = sc_value_str("none");
      break;
    }
  }
}

static gboolean type_equal(const sc_ttype *a, const sc_ttype *b) {
  return a->dtype == b->dtype && sc_shape_equal(&a->shape, &b->shape);
}

/* The instance test of a checked lemma (lhs/rhs/requires resolved). */
static gboolean instance_test(cctx *c, ld_checked *k, uint32_t pos) {
  uint32_t nv = k->vars.names->len;
  g_autoptr(sc_symtab) st = sc_symtab_new();
  inst I = {st, &k->vars, g_new0(sc_ttype, nv ? nv : 1), g_new0(sc_value, nv ? nv : 1), NULL};
  GRand *r = g_rand_new_with_seed(g_str_hash(k->name));
  g_autofree gboolean *used = g_new0(gboolean, nv ? nv : 1);
  collect_vars(k->lhs, &k->vars, used);
  collect_vars(k->rhs, &k->vars, used);
  ev_env env = {st, inst_lookup, &I};
  uint32_t good = 0;
  gboolean ok = TRUE;
  for (uint32_t t = 0; ok && t < N_TRIALS && good < N_GOOD_ENOUGH; t++) {
    random_instance(r, &I, c->attr_arg);
    sc_ttype lt, rt;
    g_autofree char *lwhy = NULL, *rwhy = NULL;
    gboolean lok = infer(&I, k->lhs, &lt, NULL);
    gboolean rok = (lok || k->dir == SC_LEMMA_BOTH) && infer(&I, k->rhs, &rt, NULL);
    if (!lok && !rok)
      continue;
    gboolean req_ok = TRUE;
    for (guint i = 0; req_ok && i < k->requires->len; i++) {
      sc_ttype qt;
      req_ok = infer(&I, g_ptr_array_index(k->requires, i), &qt, NULL);
    }
    if (!req_ok)
      continue;
    if (k->where && ev_condition(&env, k->where) != SC_YES)
      continue;
    good++;
    if (lok && rok && type_equal(&lt, &rt))
      continue;
    /* a refusal: word it (the failing side again, with its message) */
    if (!lok)
      infer(&I, k->lhs, &lt, &lwhy);
    if (!rok)
      infer(&I, k->rhs, &rt, &rwhy);
    g_autofree char *itext = inst_text(&I, used);
    if (lok && rok) {
      if (!type_equal(&lt, &rt)) {
        g_autofree char *a = type_text(&lt), *b = type_text(&rt);
        ok = err_at(c, pos, SC_LEMMA_ERROR_TYPE,
                    "the two sides of lemma %s differ in type: with %s the left side is %s and "
                    "the right side is %s",
                    k->name, itext, a, b);
      }
    } else if (lok) {
      ok = err_at(c, pos, SC_LEMMA_ERROR_TYPE,
                  "the right side of lemma %s is ill-typed where the left side is not: with %s "
                  "the left side is well-typed but %s",
                  k->name, itext, rwhy);
    } else {
      ok = err_at(c, pos, SC_LEMMA_ERROR_TYPE,
                  "the left side of lemma %s is ill-typed where the right side is not (so it "
                  "cannot be read right to left): with %s %s",
                  k->name, itext, lwhy);
    }
  }
  for (uint32_t v = 0; v < nv; v++)
    sc_value_clear(&I.values[v]);
  g_free(I.values);
  g_free(I.types);
  g_rand_free(r);
  return ok;
}

/* ------------------------------------------------------------------------ */

static char *stmt_text(const ld_diag *d, uint32_t start, uint32_t end) {
  while (end > start && g_ascii_isspace(d->text[end - 1]))
    end--;
  return g_strndup(d->text + start, end - start);
}

ld_checked *ld_check_lemma(ld_diag *d, const char *file, ld_lemma *stmt) {
  ld_checked *k = g_new0(ld_checked, 1);
  k->name = g_strdup(stmt->name);
  k->file = g_strdup(file);
  ld_diag_line_col(d, stmt->start, &k->line, &k->col);
  k->text = stmt_text(d, stmt->start, stmt->end);
  k->dir = stmt->both ? SC_LEMMA_BOTH : SC_LEMMA_ONE_WAY;
  vars_init(&k->vars);
  k->requires = g_ptr_array_new_with_free_func((GDestroyNotify)pnode_free);
  k->req_src = g_ptr_array_new_with_free_func((GDestroyNotify)lx_free);
  /* take the trees */
  k->lhs_src = g_steal_pointer(&stmt->lhs);
  k->rhs_src = g_steal_pointer(&stmt->rhs);
  k->where = g_steal_pointer(&stmt->where);
  for (guint i = 0; i < stmt->requires->len; i++)
    g_ptr_array_add(k->req_src, g_steal_pointer(&g_ptr_array_index(stmt->requires, i)));
  g_ptr_array_set_size(stmt->requires, 0);

  cctx c = {d, &k->vars, g_ptr_array_new(), stmt->both, FALSE};
  k->lhs = resolve(&c, k->lhs_src, SIDE_LHS);
  for (guint i = 0; k->lhs && i < k->req_src->len; i++) {
    const lx *r = g_ptr_array_index(k->req_src, i);
    if (r->kind != LX_CALL) {
      err_at(&c, r->start, SC_LEMMA_ERROR_SYNTAX,
             "a requires pattern must be an operator call (it names e-nodes that must exist)");
      break;
    }
    pnode *p = resolve(&c, r, SIDE_REQ);
    if (p == NULL)
      break;
    g_ptr_array_add(k->requires, p);
  }
  if (!c.failed && k->lhs && k->lhs->is_var && k->requires->len == 0)
    err_at(&c, k->lhs_src->start, SC_LEMMA_ERROR_SYNTAX,
           "a left side that is a bare variable matches every class: add 'requires' patterns "
           "(a constrained lemma) or match an operator");
  if (!c.failed && k->lhs && k->where)
    check_cond(&c, k->where, FALSE);
  if (!c.failed && k->lhs) {
    k->rhs = resolve(&c, k->rhs_src, c.both ? SIDE_LHS : SIDE_RHS);
    /* In a <=> lemma the right side may bind: only variables the left side
     * also binds make sense, checked below. */
  }
  if (!c.failed && k->rhs)
    check_computed(&c, k->rhs);
  uint32_t nv = k->vars.names->len;
  if (!c.failed && k->rhs) {
    g_autofree gboolean *l = g_new0(gboolean, nv ? nv : 1);
    g_autofree gboolean *r = g_new0(gboolean, nv ? nv : 1);
    collect_vars(k->lhs, &k->vars, l);
    for (guint i = 0; i < k->requires->len; i++)
      collect_vars(g_ptr_array_index(k->requires, i), &k->vars, l);
    collect_vars(k->rhs, &k->vars, r);
    if (c.both) {
      /* right to left: every variable of the left side must be bound by the
       * right side or requires */
      g_autofree gboolean *rr = g_new0(gboolean, nv ? nv : 1);
      collect_vars(k->rhs, &k->vars, rr);
      for (guint i = 0; i < k->requires->len; i++)
        collect_vars(g_ptr_array_index(k->requires, i), &k->vars, rr);
      g_autofree gboolean *lo = g_new0(gboolean, nv ? nv : 1);
      collect_vars(k->lhs, &k->vars, lo);
      for (uint32_t v = 0; v < nv && !c.failed; v++) {
        if (r[v] && !l[v])
          err_at(&c, g_array_index(k->vars.first_pos, uint32_t, v), SC_LEMMA_ERROR_VAR,
                 "?%s on the right is not bound by the left side or requires",
                 (const char *)g_ptr_array_index(k->vars.names, v));
        else if (lo[v] && !rr[v])
          err_at(&c, stmt->arrow_pos, SC_LEMMA_ERROR_VAR,
                 "'<=>' needs every variable on both sides: ?%s is not bound by the right "
                 "side (use '=>')",
                 (const char *)g_ptr_array_index(k->vars.names, v));
      }
      if (!c.failed && k->rhs->is_var && k->requires->len == 0)
        err_at(&c, k->rhs_src->start, SC_LEMMA_ERROR_SYNTAX,
               "the right side of a '<=>' lemma is a bare variable: read right to left it "
               "would match every class (add 'requires' or use '=>')");
    }
  }
  if (!c.failed && k->rhs && !d->skip_instance_test)
    instance_test(&c, k, stmt->name_pos);
  k->reversible = stmt->both;
  g_ptr_array_free(c.attr_arg, TRUE);
  if (c.failed) {
    ld_checked_free(k);
    return NULL;
  }
  return k;
}
