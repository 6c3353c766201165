/* rules-hlo.c — shape rules of the HLO rows (ops-hlo.def).
 *
 * Each rule checks what HLO's own shape inference checks (ShapeInference
 * in XLA) for the operand types it is given, with symbolic sizes compared
 * through sym.h, and emits the result type. */
#include "ops/rules.h"

#include "shardcheck/sym.h"

static gboolean shape_fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean shape_fail(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE, msg);
  return FALSE;
}

/* A comparison the rule needs: NO is a shape error, UNKNOWN undecided. */
static gboolean need(sc_truth t, GError **error, const char *what) {
  if (t == SC_YES)
    return TRUE;
  g_set_error(error, SC_OPS_ERROR, t == SC_NO ? SC_OPS_ERROR_SHAPE : SC_OPS_ERROR_UNDECIDED,
              t == SC_NO ? "%s does not hold" : "cannot decide whether %s", what);
  return FALSE;
}

/* Start indices: one 0-d integer tensor per dim of a rank-RANK operand. */
static gboolean check_starts(const sc_op_call *call, uint32_t arg, uint32_t rank, GError **error) {
  const sc_value *v = &call->args[arg];
  if (v->u.list.n != rank)
    return shape_fail(error, "start_indices has %u tensors for an operand of rank %u",
                      v->u.list.n, rank);
  for (uint32_t i = 0; i < v->u.list.n; i++) {
    const sc_ttype *t = call->type_of(call->env, v->u.list.ids[i]);
    if (t->shape.rank != 0 || !sc_dtype_is_integral(t->dtype)) {
      g_autofree char *sh = sc_shape_to_string(&t->shape);
      return shape_fail(error, "start_indices[%u] must be a 0-d integer tensor, found %s %s", i,
                        sc_dtype_name(t->dtype), sh);
    }
  }
  return TRUE;
}

gboolean sc_rule_hlo_dynamic_slice(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *x = sc_rule_tensor(call, 0);
  const sc_value *sizes = &call->args[2];
  if (!check_starts(call, 1, x->shape.rank, error))
    return FALSE;
  if (sizes->u.ints.n != x->shape.rank)
    return shape_fail(error, "slice_sizes has %u entries for an operand of rank %u",
                      sizes->u.ints.n, x->shape.rank);
  sc_shape o;
  o.rank = x->shape.rank;
  for (uint32_t d = 0; d < o.rank; d++) {
    sc_dim z = sizes->u.ints.v[d];
    g_autofree char *what = g_strdup_printf("0 <= slice_sizes[%u] <= operand dim %u", d, d);
    if (!need(sc_dim_le(call->symtab, sc_dim_const(0), z), error, what) ||
        !need(sc_dim_le(call->symtab, z, x->shape.dims[d]), error, what))
      return FALSE;
    o.dims[d] = z;
  }
  sc_rule_emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_hlo_dynamic_update_slice(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *x = sc_rule_tensor(call, 0);
  const sc_ttype *u = sc_rule_tensor(call, 1);
  if (u->shape.rank != x->shape.rank)
    return shape_fail(error, "update of rank %u for an operand of rank %u", u->shape.rank,
                      x->shape.rank);
  if (u->dtype != x->dtype)
    return shape_fail(error, "update is %s but the operand is %s", sc_dtype_name(u->dtype),
                      sc_dtype_name(x->dtype));
  if (!check_starts(call, 2, x->shape.rank, error))
    return FALSE;
  for (uint32_t d = 0; d < x->shape.rank; d++) {
    g_autofree char *what = g_strdup_printf("update dim %u <= operand dim %u", d, d);
    if (!need(sc_dim_le(call->symtab, u->shape.dims[d], x->shape.dims[d]), error, what))
      return FALSE;
  }
  sc_rule_emit(out, &x->shape, x->dtype);
  return TRUE;
}

gboolean sc_rule_hlo_reduce(const sc_op_call *call, GArray *out, GError **error) {
  const sc_ttype *x = sc_rule_tensor(call, 0);
  const sc_ttype *init = sc_rule_tensor(call, 1);
  const sc_value *dims = &call->args[2];
  if (init->shape.rank != 0 || init->dtype != x->dtype) {
    g_autofree char *sh = sc_shape_to_string(&init->shape);
    return shape_fail(error, "init_value must be a 0-d %s tensor, found %s %s",
                      sc_dtype_name(x->dtype), sc_dtype_name(init->dtype), sh);
  }
  gboolean drop[SC_MAX_RANK] = {FALSE};
  for (uint32_t i = 0; i < dims->u.ints.n; i++) {
    sc_dim k = dims->u.ints.v[i];
    if (!sc_dim_is_const(k) || k.value < 0 || k.value >= (int64_t)x->shape.rank ||
        drop[k.value])
      return shape_fail(error, "dimensions must be distinct dims of the operand (rank %u)",
                        x->shape.rank);
    drop[k.value] = TRUE;
  }
  sc_shape o;
  o.rank = 0;
  for (uint32_t d = 0; d < x->shape.rank; d++)
    if (!drop[d])
      o.dims[o.rank++] = x->shape.dims[d];
  sc_rule_emit(out, &o, x->dtype);
  return TRUE;
}

gboolean sc_rule_hlo_custom_call(const sc_op_call *call, GArray *out, GError **error) {
  const sc_value *shape = &call->args[3];
  const sc_value *dtype = &call->args[4];
  if (shape->u.ints.n > SC_MAX_RANK)
    return shape_fail(error, "shape has %u dims, more than the supported %d", shape->u.ints.n,
                      SC_MAX_RANK);
  sc_shape o;
  o.rank = shape->u.ints.n;
  for (uint32_t d = 0; d < o.rank; d++) {
    if (!need(sc_dim_le(call->symtab, sc_dim_const(0), shape->u.ints.v[d]), error,
              "0 <= every size of shape"))
      return FALSE;
    o.dims[d] = shape->u.ints.v[d];
  }
  sc_rule_emit(out, &o, dtype->u.dtype);
  return TRUE;
}
