/* call-args.c — the argument values of one call of a lemma side under an
 * instance (lemma-private.h, pn_call_args): shared by the load-time
 * instance test (check.c), the programs of `lemmas check` (instance.c) and
 * the typing prover (prove.c), which differ only in what names a child.
 * The value of one attribute argument is call-args.h's pn_attr_arg, also
 * what the applier builds a right side with (compile.c, eval_args). */
#include "call-args.h"

gboolean pn_call_args(const pnode *p, const sc_value *values, const ev_env *env,
                      const sc_id *kid_ids, sc_value *args, char **why) {
  const sc_op *op = p->op;
  uint32_t child = 0;
  for (uint32_t a = 0; a < op->n_args; a++) {
    const sc_arg *arg = &op->args[a];
    if (arg->type == SC_ARG_TENSOR) {
      if (p->layout[a] == UINT32_MAX) {
        args[a] = sc_value_none();
      } else {
        args[a] = sc_value_tensor(kid_ids ? kid_ids[child] : child);
        child++;
      }
    } else if (arg->type == SC_ARG_TENSOR_LIST || arg->type == SC_ARG_TENSOR_OPT_LIST) {
      args[a].kind = SC_VAL_TENSOR_LIST;
      args[a].u.list.n = p->layout[a];
      args[a].u.list.ids = g_new(sc_id, p->layout[a] ? p->layout[a] : 1);
      for (uint32_t j = 0; j < p->layout[a]; j++, child++)
        args[a].u.list.ids[j] = kid_ids ? kid_ids[child] : child;
    } else if (!pn_attr_arg(p, a, values, NULL, env, &args[a], why)) {
      return FALSE;
    }
  }
  return TRUE;
}

/* A result index held by V: a concrete int in [0, 1000] (the parser's
 * bound on a literal #k). */
static gboolean result_value(const sc_value *v, uint32_t *out) {
  if (v == NULL || v->kind != SC_VAL_INT || !sc_dim_is_const(v->u.i) || v->u.i.value < 0 ||
      v->u.i.value > 1000)
    return FALSE;
  *out = (uint32_t)v->u.i.value;
  return TRUE;
}

gboolean pn_result(const pnode *p, const sc_value *values, uint32_t *out) {
  if (p->result_var == UINT32_MAX) {
    *out = p->result;
    return TRUE;
  }
  return result_value(&values[p->result_var], out);
}

gboolean pn_result_bound(const pnode *p, const sc_value *const *bind, uint32_t *out) {
  if (p->result_var == UINT32_MAX) {
    *out = p->result;
    return TRUE;
  }
  return result_value(bind[p->result_var], out);
}
