/* ops-private.h — private to src/ops and its tests: the schema parser.
 *
 * sc_ops_schema_parse fills an sc_op from a schema string; the strings and
 * the args array it sets are owned by the op and released by
 * sc_ops_schema_clear (the registry never clears its own ops: they live for
 * the process). */
#ifndef SC_OPS_PRIVATE_H
#define SC_OPS_PRIVATE_H

#include "shardcheck/ops.h"

/* Parse SCHEMA (native_functions.yaml syntax, without "func: ") of namespace
 * NS into *op (id, shape rule and table flags are left 0/NULL; INPLACE and
 * MULTI are derived from the schema).  FALSE with SC_OPS_ERROR_SCHEMA and a
 * message "col N: ..." on a malformed schema. */
gboolean sc_ops_schema_parse(const char *ns, const char *schema, sc_op *op, GError **error);
void sc_ops_schema_clear(sc_op *op);
/* Printable form of an argument's type ("int[2]", "Tensor?[]", "int?"):
 * caller g_free()s. */
char *sc_ops_arg_type_string(const sc_arg *arg);
/* Levenshtein distance, capped: returns cap + 1 as soon as it exceeds cap. */
uint32_t sc_ops_edit_distance(const char *a, const char *b, uint32_t cap);

#endif
