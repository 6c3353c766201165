/* classes.c — class lemmas: a lemma over every operator of a class
 * (`for ?f in elementwise1`), instantiated once per operator so that the
 * e-graph matches each instance like any lemma written by hand
 * (docs/lemma-dsl.md, "Operator classes").
 *
 * Invariants: an instance is built from the class lemma's trees only (a
 * deep copy; the statement is not changed), so one class lemma yields any
 * number of instances, now or when an operator of its class is declared
 * later; the instance keeps the class lemma's source spans, so its errors
 * point at the class lemma. */
#include "lemma/lemma-private.h"

#include <string.h>

char *ld_class_instance_name(const char *name, const sc_op *op) {
  gboolean deflt = strcmp(op->overload, "default") == 0;
  if (strcmp(op->ns, "aten") == 0)
    return deflt ? g_strdup_printf("%s[%s]", name, op->name)
                 : g_strdup_printf("%s[%s.%s]", name, op->name, op->overload);
  return deflt ? g_strdup_printf("%s[%s.%s]", name, op->ns, op->name)
               : g_strdup_printf("%s[%s]", name, op->qualname);
}

typedef struct {
  ld_diag *d;
  const char *var;   /* "?f" */
  const char *bare;  /* "f" */
  const sc_op *op;
  gboolean failed;
} inst_ctx;

static lx *inst(inst_ctx *c, const lx *e);

static int32_t item_by_key(const lx *e, const char *key) {
  for (uint32_t i = 0; i < e->n; i++)
    if (e->keys != NULL && e->keys[i] != NULL && strcmp(e->keys[i], key) == 0)
      return (int32_t)i;
  return -1;
}

/* ?f(items) -> OP(key=value, ...) */
static lx *inst_call(inst_ctx *c, const lx *e) {
  const sc_op *op = c->op;
  for (uint32_t i = 0; i < e->n; i++)
    if (e->keys != NULL && e->keys[i] != NULL && sc_ops_arg_index(op, e->keys[i]) < 0) {
      ld_error_at(c->d, e->key_pos[i], SC_LEMMA_ERROR_ARGS,
                  "%s (bound to %s) has no argument '%s'", op->qualname, c->var, e->keys[i]);
      c->failed = TRUE;
      return NULL;
    }
  lx *out = lx_new(LX_CALL, e->start, e->end);
  out->text = g_strdup(op->qualname);
  uint32_t next_pos = 0, n_tensors = 0;
  for (uint32_t a = 0; a < op->n_args; a++) {
    const sc_arg *arg = &op->args[a];
    gboolean tensor = arg->type == SC_ARG_TENSOR || arg->type == SC_ARG_TENSOR_LIST ||
                      arg->type == SC_ARG_TENSOR_OPT_LIST;
    int32_t k = item_by_key(e, arg->name);
    lx *v = NULL;
    if (k >= 0) {
      v = inst(c, e->kids[k]);
    } else if (tensor) {
      n_tensors++;
      while (next_pos < e->n && e->keys != NULL && e->keys[next_pos] != NULL)
        next_pos++;
      if (next_pos >= e->n)
        continue; /* counted below */
      v = inst(c, e->kids[next_pos++]);
    } else if (arg->type == SC_ARG_IGNORED ||
               (arg->type == SC_ARG_DTYPE && (arg->has_default || arg->optional))) {
      /* device and layout mean nothing here; a dtype converts the values
       * before the operator's arithmetic, which a class law does not
       * speak of: both keep their defaults unless the call writes them */
      continue;
    } else {
      v = lx_new(LX_VAR, e->start, e->start);
      v->text = g_strdup_printf("%s__%s", c->bare, arg->name);
    }
    if (v == NULL) {
      lx_free(out);
      return NULL;
    }
    lx_push(out, arg->name, e->start, v);
  }
  uint32_t n_pos = 0;
  for (uint32_t i = 0; i < e->n; i++)
    n_pos += e->keys == NULL || e->keys[i] == NULL;
  if (n_pos != n_tensors) {
    ld_error_at(c->d, e->start, SC_LEMMA_ERROR_ARGS,
                "%s is called with %u tensor operand%s, but %s (bound to it) takes %u",
                c->var, n_pos, n_pos == 1 ? "" : "s", op->qualname, n_tensors);
    c->failed = TRUE;
    lx_free(out);
    return NULL;
  }
  return out;
}

static lx *inst(inst_ctx *c, const lx *e) {
  if (e == NULL)
    return NULL;
  if (e->kind == LX_CALL && strcmp(e->text, c->var) == 0)
    return inst_call(c, e);
  lx *out = lx_new(e->kind, e->start, e->end);
  out->text = g_strdup(e->text);
  out->ival = e->ival;
  out->fval = e->fval;
  out->result = e->result;
  out->result_var = g_strdup(e->result_var);
  out->result_var_pos = e->result_var_pos;
  memcpy(out->op, e->op, sizeof out->op);
  for (uint32_t i = 0; i < e->n; i++) {
    lx *k = inst(c, e->kids[i]);
    if (k == NULL) {
      lx_free(out);
      return NULL;
    }
    lx_push(out, e->keys ? e->keys[i] : NULL, e->key_pos ? e->key_pos[i] : 0, k);
  }
  return out;
}

ld_lemma *ld_class_instance(ld_diag *d, const ld_lemma *stmt, const sc_op *op) {
  g_autofree char *var = g_strconcat("?", stmt->class_var, NULL);
  inst_ctx c = {d, var, stmt->class_var, op, FALSE};
  ld_lemma *l = g_new0(ld_lemma, 1);
  l->name = ld_class_instance_name(stmt->name, op);
  l->start = stmt->start;
  l->end = stmt->end;
  l->name_pos = stmt->name_pos;
  l->both = stmt->both;
  l->arrow_pos = stmt->arrow_pos;
  l->requires = g_ptr_array_new_with_free_func((GDestroyNotify)lx_free);
  l->lhs = inst(&c, stmt->lhs);
  if (!c.failed)
    l->rhs = inst(&c, stmt->rhs);
  if (!c.failed && stmt->where != NULL)
    l->where = inst(&c, stmt->where);
  for (guint i = 0; !c.failed && i < stmt->requires->len; i++) {
    lx *r = inst(&c, g_ptr_array_index(stmt->requires, i));
    if (r != NULL)
      g_ptr_array_add(l->requires, r);
  }
  if (c.failed) {
    ld_lemma_free(l);
    return NULL;
  }
  return l;
}
