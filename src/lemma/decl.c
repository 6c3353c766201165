/* decl.c — operator declarations of lemma files:
 *
 *   op NS.NAME(PARAMS) -> Tensor: SHAPE [as DTYPE] [where COND] [= DEF]
 *
 * PARAMS is ATen schema text; it is handed to the registry's schema
 * parser.  The shape rule is kept as a program (a decl_rule) that
 * ld_decl_shape_rule evaluates over the call's argument types.  Rule
 * programs are interned process-wide by the declaration's text and never
 * freed, because a registered operator lives for the process; the same
 * declaration loaded twice therefore registers the same operator.  A
 * definition becomes the lemma NS_NAME_unfold: NS.NAME(?params) => DEF, which
 * is checked like any lemma (so the instance test compares the declared
 * shape rule with the definition's type). */
#include "lemma/lemma-private.h"
#include "ops/ops-private.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  char *key;
  uint32_t n_results;
  lx **shape;
  lx **dtype;           /* entries may be NULL */
  lx *where;            /* may be NULL */
  char *where_text;
} decl_rule;

static GHashTable *rules_by_text; /* key -> decl_rule* (process lifetime) */
G_LOCK_DEFINE_STATIC(rules_by_text);

typedef struct {
  const sc_op_call *call;
} decl_env;

static gboolean decl_lookup(void *envp, const lx *ref, ev_val *out) {
  decl_env *env = envp;
  if (ref->kind != LX_NAME)
    return FALSE;
  const sc_op *op = env->call->op;
  int32_t i = sc_ops_arg_index(op, ref->text);
  if (i < 0)
    return FALSE;
  const sc_arg *arg = &op->args[i];
  const sc_value *v = &env->call->args[i];
  if (arg->type == SC_ARG_TENSOR) {
    if (v->kind != SC_VAL_TENSOR)
      return FALSE;
    const sc_ttype *t = env->call->type_of(env->call->env, v->u.tensor);
    if (t == NULL)
      return FALSE;
    out->kind = EV_TENSOR;
    out->type = t;
    return TRUE;
  }
  out->kind = EV_VALUE;
  out->v = v;
  return TRUE;
}

gboolean ld_decl_shape_rule(const sc_op_call *call, GArray *out, GError **error) {
  const decl_rule *r = call->op->rule_data;
  g_return_val_if_fail(r != NULL, FALSE);
  g_autoptr(sc_symtab) own = NULL;
  sc_symtab *st = call->symtab;
  if (st == NULL)
    st = own = sc_symtab_new();
  decl_env denv = {call};
  ev_env env = {st, decl_lookup, &denv};
  if (r->where != NULL) {
    sc_truth t = ev_condition(&env, r->where);
    if (t == SC_NO) {
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                  "%s: the declared condition does not hold: %s", call->op->qualname,
                  r->where_text);
      return FALSE;
    }
    if (t == SC_UNKNOWN) {
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_UNDECIDED,
                  "%s: cannot decide the declared condition %s", call->op->qualname,
                  r->where_text);
      return FALSE;
    }
  }
  /* the default dtype: the first tensor argument's */
  const sc_ttype *first = NULL;
  for (uint32_t i = 0; i < call->op->n_args && first == NULL; i++)
    if (call->op->args[i].type == SC_ARG_TENSOR && call->args[i].kind == SC_VAL_TENSOR)
      first = call->type_of(call->env, call->args[i].u.tensor);
  for (uint32_t k = 0; k < r->n_results; k++) {
    ev_val sv, dv;
    sc_ttype t;
    if (!ev_eval(&env, r->shape[k], &sv) || sv.kind != EV_SHAPE) {
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                  "%s: the declared shape of result %u cannot be computed for these inputs",
                  call->op->qualname, k);
      return FALSE;
    }
    for (uint32_t i = 0; i < sv.shape.rank; i++)
      if (sc_dim_lt(st, sv.shape.dims[i], sc_dim_const(0)) != SC_NO) {
        g_autofree char *s = sc_shape_to_string(&sv.shape);
        g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                    "%s: the declared shape of result %u, %s, has a size that may be negative",
                    call->op->qualname, k, s);
        return FALSE;
      }
    t.shape = sv.shape;
    if (r->dtype[k] != NULL) {
      if (!ev_eval(&env, r->dtype[k], &dv) || dv.kind != EV_DTYPE) {
        g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                    "%s: the declared dtype of result %u cannot be computed", call->op->qualname,
                    k);
        return FALSE;
      }
      t.dtype = dv.dtype;
    } else if (first != NULL) {
      t.dtype = first->dtype;
    } else {
      t.dtype = SC_DTYPE_F32;
    }
    g_array_append_val(out, t);
  }
  return TRUE;
}

/* Check that a declaration expression names only parameters. */
static gboolean check_names(ld_diag *d, const lx *e, const sc_op *op, gboolean tensor_needed) {
  switch (e->kind) {
  case LX_VAR:
  case LX_WILD:
    ld_error_at(d, e->start, SC_LEMMA_ERROR_DECL,
                "an operator declaration names its parameters without '?' (found ?%s)",
                e->kind == LX_VAR ? e->text : "_");
    return FALSE;
  case LX_NAME: {
    int32_t i = sc_ops_arg_index(op, e->text);
    sc_dtype dt;
    if (i < 0) {
      if (!tensor_needed && (sc_dtype_from_name(e->text, &dt) || strcmp(e->text, "True") == 0 ||
                             strcmp(e->text, "False") == 0))
        return TRUE;
      ld_error_at(d, e->start, SC_LEMMA_ERROR_DECL, "'%s' is not a parameter of %s", e->text,
                  op->qualname);
      return FALSE;
    }
    gboolean is_t = op->args[i].type == SC_ARG_TENSOR;
    if (tensor_needed && !is_t) {
      ld_error_at(d, e->start, SC_LEMMA_ERROR_DECL, "parameter '%s' of %s is not a tensor",
                  e->text, op->qualname);
      return FALSE;
    }
    return TRUE;
  }
  case LX_CALL: {
    static const char *const tfn[] = {"size", "rank", "dtype", "shape", "numel"};
    static const char *const ofn[] = {"with_size", "min", "max", "append", "remove"};
    gboolean tf = FALSE, known = FALSE;
    for (size_t i = 0; i < G_N_ELEMENTS(tfn); i++)
      if (strcmp(e->text, tfn[i]) == 0)
        tf = known = TRUE;
    for (size_t i = 0; i < G_N_ELEMENTS(ofn); i++)
      if (strcmp(e->text, ofn[i]) == 0)
        known = TRUE;
    if (!known) {
      ld_error_at(d, e->start, SC_LEMMA_ERROR_DECL,
                  "unknown function '%s' in a shape rule (known: size, rank, dtype, shape, "
                  "numel, with_size, min, max, append, remove)",
                  e->text);
      return FALSE;
    }
    for (uint32_t k = 0; k < e->n; k++)
      if (!check_names(d, e->kids[k], op, tf && k == 0))
        return FALSE;
    return TRUE;
  }
  default:
    if (tensor_needed) {
      ld_error_at(d, e->start, SC_LEMMA_ERROR_DECL, "expected a tensor parameter");
      return FALSE;
    }
    for (uint32_t k = 0; k < e->n; k++)
      if (!check_names(d, e->kids[k], op, FALSE))
        return FALSE;
    return TRUE;
  }
}

/* Replace parameter names by ?variables in a copy of DEF. */
static void params_to_vars(lx *e, const sc_op *op) {
  if (e->kind == LX_NAME && sc_ops_arg_index(op, e->text) >= 0) {
    e->kind = LX_VAR;
    return;
  }
  for (uint32_t i = 0; i < e->n; i++)
    params_to_vars(e->kids[i], op);
}

static gboolean def_names_ok(ld_diag *d, const lx *e, const sc_op *op) {
  if (e->kind == LX_VAR || e->kind == LX_WILD) {
    ld_error_at(d, e->start, SC_LEMMA_ERROR_DECL,
                "a definition names the parameters without '?' (found ?%s)",
                e->kind == LX_VAR ? e->text : "_");
    return FALSE;
  }
  sc_dtype dt;
  if (e->kind == LX_NAME && sc_ops_arg_index(op, e->text) < 0 &&
      !sc_dtype_from_name(e->text, &dt) && strcmp(e->text, "True") != 0 &&
      strcmp(e->text, "False") != 0 && strcmp(e->text, "None") != 0) {
    ld_error_at(d, e->start, SC_LEMMA_ERROR_DECL, "'%s' is not a parameter of %s", e->text,
                op->qualname);
    return FALSE;
  }
  if (e->kind == LX_CALL && sc_ops_arg_index(op, e->text) >= 0) {
    ld_error_at(d, e->start, SC_LEMMA_ERROR_DECL, "parameter '%s' is not a function", e->text);
    return FALSE;
  }
  for (uint32_t i = 0; i < e->n; i++)
    if (!def_names_ok(d, e->kids[i], op))
      return FALSE;
  return TRUE;
}

/* The flags a trait of `is TRAIT, ...` gives a declared operator (ops.h):
 * the classes its flags put it in are the class lemmas that apply to it. */
static gboolean trait_flags(ld_diag *d, const char *trait, uint32_t pos, uint32_t *flags) {
  static const struct {
    const char *name;
    uint32_t flags;
  } traits[] = {
      {"elementwise", SC_OP_ELEMENTWISE},
      {"rowwise", SC_OP_ROWWISE},
      /* sum- and mean-combined reductions are linear in their operand */
      {"reduce_sum", SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_SUM) | SC_OP_LINEAR_FIRST},
      {"reduce_mean", SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_MEAN) | SC_OP_LINEAR_FIRST},
      {"reduce_max", SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_MAX)},
      {"reduce_min", SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_MIN)},
      {"reduce_prod", SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_PROD)},
      {"reduce_or", SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_OR)},
      {"reduce_and", SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_AND)},
      {"reduce_logaddexp", SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_LOGADDEXP)},
      {"linear_first", SC_OP_LINEAR_FIRST},
      {"linear_second", SC_OP_LINEAR_SECOND},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(traits); i++)
    if (strcmp(trait, traits[i].name) == 0) {
      if ((*flags & SC_OP_COMBINE_MASK) && (traits[i].flags & SC_OP_COMBINE_MASK)) {
        ld_error_at(d, pos, SC_LEMMA_ERROR_DECL, "an operator has one combiner: '%s' is a second",
                    trait);
        return FALSE;
      }
      *flags |= traits[i].flags;
      return TRUE;
    }
  ld_error_at(d, pos, SC_LEMMA_ERROR_DECL,
              "unknown operator trait '%s' (elementwise, rowwise, reduce_sum, reduce_mean, "
              "reduce_max, reduce_min, reduce_prod, reduce_or, reduce_and, reduce_logaddexp, "
              "linear_first, linear_second)",
              trait);
  return FALSE;
}

const sc_op *ld_check_opdecl(ld_diag *d, const char *file, ld_opdecl *o, ld_checked **unfold) {
  *unfold = NULL;
  const char *dot = strchr(o->qualname, '.');
  g_autofree char *ns = g_strndup(o->qualname, (gsize)(dot - o->qualname));
  const char *rest = dot + 1;
  GString *schema = g_string_new(rest);
  uint32_t prefix = (uint32_t)schema->len + 1;
  g_string_append_printf(schema, "(%s) -> ", o->params);
  if (o->results->len == 1) {
    g_string_append(schema, "Tensor");
  } else {
    g_string_append_c(schema, '(');
    for (guint i = 0; i < o->results->len; i++)
      g_string_append(schema, i ? ", Tensor" : "Tensor");
    g_string_append_c(schema, ')');
  }
  g_autofree char *schema_text = g_string_free(schema, FALSE);
  /* Validate the schema first, for errors placed in the parameter text. */
  sc_op tmp;
  memset(&tmp, 0, sizeof tmp);
  g_autoptr(GError) err = NULL;
  if (!sc_ops_schema_parse(ns, schema_text, &tmp, &err)) {
    uint32_t pos = o->name_pos;
    unsigned col = 0;
    const char *msg = err->message;
    if (sscanf(msg, "col %u: ", &col) == 1) {
      const char *colon = strstr(msg, ": ");
      if (colon)
        msg = colon + 2;
      uint32_t off = col ? col - 1 : 0;
      if (off >= prefix && off - prefix <= strlen(o->params))
        pos = o->params_pos + (off - prefix);
    }
    sc_ops_schema_clear(&tmp);
    ld_error_at(d, pos, SC_LEMMA_ERROR_DECL, "malformed parameters of %s: %s", o->qualname, msg);
    return NULL;
  }
  gboolean ok = TRUE;
  for (uint32_t i = 0; i < tmp.n_args && ok; i++) {
    if (tmp.args[i].type == SC_ARG_TENSOR_LIST || tmp.args[i].type == SC_ARG_TENSOR_OPT_LIST) {
      ld_error_at(d, o->params_pos, SC_LEMMA_ERROR_DECL,
                  "parameter '%s' of %s: declared operators take single tensors (Tensor or "
                  "Tensor?), not lists",
                  tmp.args[i].name, o->qualname);
      ok = FALSE;
    }
    if (tmp.args[i].mutated) {
      ld_error_at(d, o->params_pos, SC_LEMMA_ERROR_DECL,
                  "parameter '%s' of %s is mutated: in-place operators cannot be declared",
                  tmp.args[i].name, o->qualname);
      ok = FALSE;
    }
  }
  for (guint k = 0; ok && k < o->results->len; k++) {
    ld_result *r = &g_array_index(o->results, ld_result, k);
    ok = check_names(d, r->shape, &tmp, FALSE) && (!r->dtype || check_names(d, r->dtype, &tmp, FALSE));
  }
  if (ok && o->where)
    ok = check_names(d, o->where, &tmp, FALSE);
  if (ok && o->def) {
    ok = def_names_ok(d, o->def, &tmp);
    if (ok && o->results->len != 1) {
      ld_error_at(d, o->def->start, SC_LEMMA_ERROR_DECL,
                  "only single-result operators can have a definition");
      ok = FALSE;
    }
  }
  sc_ops_schema_clear(&tmp);
  uint32_t flags = 0;
  for (guint k = 0; ok && k < o->traits->len; k++)
    ok = trait_flags(d, g_ptr_array_index(o->traits, k),
                     g_array_index(o->trait_pos, uint32_t, k), &flags);
  if (!ok)
    return NULL;

  /* The rule program, interned by the declaration's text. */
  g_autofree char *key = g_strndup(d->text + o->start, o->end - o->start);
  G_LOCK(rules_by_text);
  if (rules_by_text == NULL)
    rules_by_text = g_hash_table_new(g_str_hash, g_str_equal);
  decl_rule *rule = g_hash_table_lookup(rules_by_text, key);
  if (rule == NULL) {
    rule = g_new0(decl_rule, 1);
    rule->key = g_strdup(key);
    rule->n_results = o->results->len;
    rule->shape = g_new0(lx *, rule->n_results);
    rule->dtype = g_new0(lx *, rule->n_results);
    for (uint32_t k = 0; k < rule->n_results; k++) {
      ld_result *r = &g_array_index(o->results, ld_result, k);
      rule->shape[k] = lx_copy(r->shape);
      rule->dtype[k] = lx_copy(r->dtype);
    }
    rule->where = lx_copy(o->where);
    if (o->where) {
      GString *w = g_string_new(NULL);
      lx_append(w, o->where);
      rule->where_text = g_string_free(w, FALSE);
    }
    g_hash_table_insert(rules_by_text, rule->key, rule);
  }
  G_UNLOCK(rules_by_text);
  g_clear_error(&err);
  const sc_op *op = sc_ops_register(ns, schema_text, ld_decl_shape_rule, flags, rule, &err);
  if (op == NULL) {
    ld_error_at(d, o->name_pos, SC_LEMMA_ERROR_DUPLICATE, "cannot declare %s: %s", o->qualname,
                err->message);
    return NULL;
  }
  if (o->def == NULL)
    return op;

  /* NS_NAME_unfold: NS.NAME(?x, ..., key=?k) => DEF[params := ?params].
   * The namespace is part of the name, so that two libraries' kernels of
   * one name (vLLM's _C.rms_norm and a user's mylib.rms_norm) can both be
   * loaded; characters that are not letters, digits or '_' become '_'. */
  ld_lemma l;
  memset(&l, 0, sizeof l);
  l.name = strcmp(op->overload, "default") == 0
               ? g_strdup_printf("%s_%s_unfold", op->ns, op->name)
               : g_strdup_printf("%s_%s_%s_unfold", op->ns, op->name, op->overload);
  for (char *p = l.name; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_')
      *p = '_';
  l.start = o->start;
  l.end = o->end;
  l.name_pos = o->name_pos;
  l.arrow_pos = o->def->start;
  lx *lhs = g_new0(lx, 1);
  lhs->kind = LX_CALL;
  lhs->text = g_strdup(op->qualname);
  lhs->result = -1;
  lhs->start = o->name_pos;
  lhs->end = o->name_pos + (uint32_t)strlen(o->qualname);
  lhs->n = op->n_args;
  lhs->kids = g_new0(lx *, op->n_args ? op->n_args : 1);
  lhs->keys = g_new0(char *, op->n_args ? op->n_args : 1);
  lhs->key_pos = g_new0(uint32_t, op->n_args ? op->n_args : 1);
  for (uint32_t i = 0; i < op->n_args; i++) {
    lx *v = g_new0(lx, 1);
    v->kind = LX_VAR;
    v->text = g_strdup(op->args[i].name);
    v->start = o->params_pos;
    v->end = o->params_pos;
    v->result = -1;
    lhs->kids[i] = v;
    lhs->keys[i] = g_strdup(op->args[i].name);
    lhs->key_pos[i] = o->params_pos;
  }
  l.lhs = lhs;
  l.rhs = lx_copy(o->def);
  params_to_vars(l.rhs, op);
  /* The declared condition holds wherever the left side is well-typed (it
   * is part of the shape rule); as the lemma's condition it also guides the
   * numerical checker's search (sc_lemma_steer). */
  if (o->where != NULL) {
    l.where = lx_copy(o->where);
    params_to_vars(l.where, op);
  }
  l.requires = g_ptr_array_new_with_free_func((GDestroyNotify)lx_free);
  ld_checked *k = ld_check_lemma(d, file, &l);
  g_free(l.name);
  lx_free(l.lhs);
  lx_free(l.rhs);
  lx_free(l.where);
  g_ptr_array_free(l.requires, TRUE);
  if (k == NULL)
    return NULL;
  k->unfolds = op;
  *unfold = k;
  return op;
}
