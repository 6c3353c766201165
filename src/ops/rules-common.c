/* rules-common.c — helpers shared by the shape-rule files (see rules.h). */
#include "ops/rules.h"

const sc_ttype *sc_rule_tensor(const sc_op_call *call, uint32_t arg_index) {
  g_return_val_if_fail(arg_index < call->op->n_args, NULL);
  const sc_value *v = &call->args[arg_index];
  g_return_val_if_fail(v->kind == SC_VAL_TENSOR, NULL);
  return call->type_of(call->env, v->u.tensor);
}

void sc_rule_emit(GArray *out, const sc_shape *shape, sc_dtype dtype) {
  sc_ttype t;
  t.shape = *shape;
  t.dtype = dtype;
  g_array_append_val(out, t);
}

gboolean sc_broadcast_shapes(sc_symtab *st, const sc_shape *a, const sc_shape *b,
                             sc_shape *out, GError **error) {
  uint32_t rank = a->rank > b->rank ? a->rank : b->rank;
  sc_shape r;
  r.rank = rank;
  for (uint32_t i = 0; i < rank; i++) {
    /* position i counted from the right */
    gboolean in_a = i < a->rank, in_b = i < b->rank;
    sc_dim da = in_a ? a->dims[a->rank - 1 - i] : sc_dim_const(1);
    sc_dim db = in_b ? b->dims[b->rank - 1 - i] : sc_dim_const(1);
    sc_dim res;
    if (sc_dim_is_const(da) && da.value == 1) {
      res = db;
    } else if (sc_dim_is_const(db) && db.value == 1) {
      res = da;
    } else {
      sc_truth same = sc_dim_eq(st, da, db);
      if (same != SC_YES) {
        g_autofree char *sa = sc_shape_to_string(a);
        g_autofree char *sb = sc_shape_to_string(b);
        if (same == SC_NO)
          g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE,
                      "shapes %s and %s cannot be broadcast together", sa, sb);
        else
          g_set_error(error, SC_OPS_ERROR, SC_OPS_ERROR_UNDECIDED,
                      "cannot decide whether shapes %s and %s broadcast "
                      "(a size that is neither provably equal nor 1)", sa, sb);
        return FALSE;
      }
      res = da;
    }
    r.dims[rank - 1 - i] = res;
  }
  *out = r;
  return TRUE;
}
