/* rules-extra.c — the shape rules of ops-extra.def that no family of
 * rules-math.c / rules-layout.c covers: log_sigmoid_forward's two results
 * argsort's indices and masked_scatter's.  The other operators of the list reuse the
 * families' rules (rules.h declares every rule a list names). */
#include "ops/rules.h"

#include <string.h>

static gboolean arg_index(const sc_op_call *call, const char *name, uint32_t *out) {
  for (uint32_t i = 0; i < call->op->n_args; i++)
    if (strcmp(call->op->args[i].name, name) == 0) {
      *out = i;
      return TRUE;
    }
  return FALSE;
}

/* log_sigmoid_forward(self) -> (output, buffer): both of self's shape and
 * dtype (the CPU kernel's buffer holds exp(-|self|); a CUDA kernel leaves
 * it empty, but make_fx records self's shape, as torch's meta function
 * does).  Floating self only, as log_sigmoid. */
gboolean sc_rule_log_sigmoid_forward(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = sc_rule_tensor(call, 0);
  if (!sc_dtype_is_floating(t->dtype)) {
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                "%s: self must be a floating-point tensor, got %s", call->op->qualname,
                sc_dtype_name(t->dtype));
    return FALSE;
  }
  sc_rule_emit(out, &t->shape, t->dtype);
  sc_rule_emit(out, &t->shape, t->dtype);
  return TRUE;
}

/* argsort.stable(self, stable, dim, descending) -> i64 indices of self's
 * shape; dim must name a dim of self (rank 0 acts as rank 1). */
gboolean sc_rule_argsort(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *t = sc_rule_tensor(call, 0);
  uint32_t k;
  if (arg_index(call, "dim", &k) && call->args[k].kind == SC_VAL_INT) {
    int64_t d = sc_dim_is_const(call->args[k].u.i) ? call->args[k].u.i.value : 0;
    int64_t r = t->shape.rank ? (int64_t)t->shape.rank : 1;
    if (d < -r || d >= r) {
      g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                  "%s: dim %lld out of range for a tensor of rank %u", call->op->qualname,
                  (long long)d, t->shape.rank);
      return FALSE;
    }
  }
  sc_rule_emit(out, &t->shape, SC_DTYPE_I64);
  return TRUE;
}

/* masked_scatter(self, mask, source): self's type; mask bool, broadcast to
 * self's shape; source of self's dtype (its first count(mask) elements are
 * written in row-major order, a count the rule cannot see: the evaluator
 * refuses a source too short). */
gboolean sc_rule_masked_scatter(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *s = sc_rule_tensor(call, 0), *m = sc_rule_tensor(call, 1),
                 *src = sc_rule_tensor(call, 2);
  sc_shape b;
  if (m->dtype != SC_DTYPE_BOOL || src->dtype != s->dtype) {
    g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                "%s: mask must be bool and source of self's dtype (got %s, %s and %s)",
                call->op->qualname, sc_dtype_name(m->dtype), sc_dtype_name(s->dtype),
                sc_dtype_name(src->dtype));
    return FALSE;
  }
  if (!sc_broadcast_shapes(call->symtab, &s->shape, &m->shape, &b, error))
    return FALSE;
  sc_rule_emit(out, &b, s->dtype);
  return TRUE;
}
