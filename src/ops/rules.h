/* rules.h — private to src/ops: the operator table's shape rules.
 *
 * The registry is built from two X-macro lists, each entry
 *
 *   SC_OP(NAMESPACE, "SCHEMA", RULE, FLAGS)
 *
 * e.g. SC_OP("aten", "mm(Tensor self, Tensor mat2) -> Tensor", sc_rule_mm, 0)
 *
 *   ops-layout.def  views, layout, indexing, creation, collectives, the
 *                   clean sc.* expression operators (rules-layout.c)
 *   ops-math.def    elementwise and broadcasting, matmul, reductions,
 *                   normalization, softmax, losses, embedding and their
 *                   backward operators (rules-math.c)
 *   ops-extra.def   operators make_fx emits that the two lists lacked
 *                   (tools/coverage.py): activations, unary functions,
 *                   losses and their backward operators, norms, argsort;
 *                   their own rules in rules-extra.c
 *
 * Every RULE named in a .def file is declared here, so that the table, the
 * declarations and the definitions cannot drift (registry.c includes both
 * lists twice: once to declare, once to build the table). */
#ifndef SC_OPS_RULES_H
#define SC_OPS_RULES_H

#include "shardcheck/ops.h"

#define SC_OP(ns, schema, rule, flags) \
  gboolean rule(const sc_op_call *call, GArray *out, GError **error);
#include "ops/ops-layout.def"
#include "ops/ops-math.def"
#include "ops/ops-extra.def"
#include "ops/ops-hlo.def"
#undef SC_OP

/* Helpers shared by the rule files (defined in rules-common.c). */
/* The type of tensor argument I of the call. */
const sc_ttype *sc_rule_tensor(const sc_op_call *call, uint32_t arg_index);
/* Append one result type. */
void sc_rule_emit(GArray *out, const sc_shape *shape, sc_dtype dtype);

/* Broadcast two shapes as PyTorch does (align from the right; a dim of 1
 * stretches).  Symbolic dims must be provably equal or 1: a size pair that
 * provably differs is SC_OPS_ERROR_SHAPE, one that cannot be decided is
 * SC_OPS_ERROR_UNDECIDED; both messages show the two shapes. */
gboolean sc_broadcast_shapes(sc_symtab *st, const sc_shape *a, const sc_shape *b,
                             sc_shape *out, GError **error);
#endif
