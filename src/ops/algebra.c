/* algebra.c — the operator algebra read off the table: combiners, the
 * classes class lemmas range over, and value relations (ops.h, "The
 * operator algebra").
 *
 * Invariants: every answer is a function of the operator's flags and
 * schema only, so a run-time operator (a lemma file's declaration) with
 * the same flags and argument kinds is in the same classes as a built-in
 * one. */
#include "shardcheck/ops.h"

#include <string.h>

static const char *const combiner_names[] = {
#define SC_X_COMBINE(sym, val, word) [val] = word,
    SC_OP_COMBINERS(SC_X_COMBINE)
#undef SC_X_COMBINE
};

static const char *const class_names[] = {
#define SC_X_CLASS(sym, word) [sym] = word,
    SC_OP_CLASSES(SC_X_CLASS)
#undef SC_X_CLASS
};

sc_combiner sc_ops_combiner(const sc_op *op) {
  uint32_t c = (op->flags & SC_OP_COMBINE_MASK) >> SC_OP_COMBINE_SHIFT;
  return c < SC_N_COMBINERS ? (sc_combiner)c : SC_COMBINE_NONE;
}

const char *sc_ops_combiner_name(sc_combiner c) {
  return (uint32_t)c < SC_N_COMBINERS ? combiner_names[c] : "none";
}

gboolean sc_ops_class_lookup(const char *name, sc_op_class *out) {
  for (uint32_t c = 0; c < SC_N_CLASSES; c++)
    if (strcmp(name, class_names[c]) == 0) {
      *out = (sc_op_class)c;
      return TRUE;
    }
  return FALSE;
}

const char *sc_ops_class_name(sc_op_class c) {
  return (uint32_t)c < SC_N_CLASSES ? class_names[c] : "?";
}

const char *sc_ops_class_names(void) {
  static gsize once = 0;
  if (g_once_init_enter(&once)) {
    GString *s = g_string_new(NULL);
    for (uint32_t c = 0; c < SC_N_CLASSES; c++)
      g_string_append_printf(s, "%s%s", c ? ", " : "", class_names[c]);
    g_once_init_leave(&once, (gsize)g_string_free(s, FALSE));
  }
  return (const char *)once;
}

uint32_t sc_ops_tensor_args(const sc_op *op, uint32_t *out, uint32_t max) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < op->n_args; i++) {
    sc_arg_type t = op->args[i].type;
    if (t != SC_ARG_TENSOR && t != SC_ARG_TENSOR_LIST && t != SC_ARG_TENSOR_OPT_LIST)
      continue;
    if (n < max)
      out[n] = i;
    n++;
  }
  return n;
}

/* N plain Tensor arguments (no optional tensor, no tensor list) and one
 * tensor result. */
static gboolean plain_tensors(const sc_op *op, uint32_t n) {
  if (op->n_results != 1 || op->results_variadic)
    return FALSE;
  uint32_t idx[4];
  uint32_t k = sc_ops_tensor_args(op, idx, 4);
  if (k != n)
    return FALSE;
  for (uint32_t i = 0; i < k; i++)
    if (op->args[idx[i]].type != SC_ARG_TENSOR || op->args[idx[i]].optional)
      return FALSE;
  return TRUE;
}

static gboolean has_arg(const sc_op *op, const char *name, sc_arg_type type) {
  int32_t i = sc_ops_arg_index(op, name);
  return i >= 0 && op->args[i].type == type;
}

static gboolean is_reduce(const sc_op *op) {
  return (op->flags & SC_OP_REDUCTION) && plain_tensors(op, 1) &&
         (has_arg(op, "dim", SC_ARG_INT_LIST) || has_arg(op, "dim", SC_ARG_INT)) &&
         has_arg(op, "keepdim", SC_ARG_BOOL);
}

gboolean sc_ops_in_class(const sc_op *op, sc_op_class c) {
  uint32_t safe = ~(uint32_t)(SC_OP_INPLACE | SC_OP_RANDOM | SC_OP_DATA_DEPENDENT);
  if ((op->flags & safe) != op->flags)
    return FALSE;
  switch (c) {
  case SC_CLASS_ELEMENTWISE1:
  case SC_CLASS_ELEMENTWISE2:
  case SC_CLASS_ELEMENTWISE3:
    return (op->flags & SC_OP_ELEMENTWISE) &&
           plain_tensors(op, 1 + (uint32_t)(c - SC_CLASS_ELEMENTWISE1));
  case SC_CLASS_REDUCE_SUM:
  case SC_CLASS_REDUCE_MEAN:
  case SC_CLASS_REDUCE_MAX:
  case SC_CLASS_REDUCE_MIN:
  case SC_CLASS_REDUCE_PROD:
  case SC_CLASS_REDUCE_OR:
  case SC_CLASS_REDUCE_AND:
  case SC_CLASS_REDUCE_LOGADDEXP:
    return is_reduce(op) &&
           sc_ops_combiner(op) == (sc_combiner)(SC_COMBINE_SUM + (c - SC_CLASS_REDUCE_SUM));
  case SC_CLASS_REDUCE:
    return is_reduce(op);
  case SC_CLASS_ROWWISE1:
  case SC_CLASS_ROWWISE2:
    return (op->flags & SC_OP_ROWWISE) && has_arg(op, "dim", SC_ARG_INT) &&
           plain_tensors(op, 1 + (uint32_t)(c - SC_CLASS_ROWWISE1));
  case SC_CLASS_LINEAR1:
    return (op->flags & SC_OP_LINEAR_FIRST) && plain_tensors(op, 1);
  case SC_CLASS_LINEAR2_FIRST:
    return (op->flags & SC_OP_LINEAR_FIRST) && plain_tensors(op, 2);
  case SC_CLASS_LINEAR2_SECOND:
    return (op->flags & SC_OP_LINEAR_SECOND) && plain_tensors(op, 2);
  case SC_CLASS_LINEAR3_FIRST:
    return (op->flags & SC_OP_LINEAR_FIRST) && plain_tensors(op, 3);
  default:
    return FALSE;
  }
}

sc_values_relation sc_ops_values_relation(const sc_op *op) {
  if (op->flags & (SC_OP_INPLACE | SC_OP_RANDOM))
    return SC_VALUES_OTHER;
  if (op->flags & (SC_OP_IDENTITY | SC_OP_REARRANGE))
    return sc_ops_arg_index(op, "dtype") >= 0 ? SC_VALUES_OTHER : SC_VALUES_SAME;
  if (op->flags & SC_OP_SELECTS)
    return SC_VALUES_SUBSET;
  return SC_VALUES_OTHER;
}
