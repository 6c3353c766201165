/* expr.h — the expression language of relations, reports and lemmas.
 *
 *   expr  := NAME | "?" IDENT | FUNC "(" [ item { "," item } ] ")"
 *          | INT | FLOAT | STRING | "[" [ expr { "," expr } ] "]"
 *   item  := expr | KEY "=" expr
 *
 * NAME is a tensor name: an identifier, then dot-separated segments that
 * may start with a digit ("r1.x_0", "r0.layers.0.weight");
 * FUNC is an operator name ("cat", "mm", "add.Tensor", "aten.add.Tensor",
 * "comm.all_reduce"); "?x" is a pattern variable (lemmas); INT is a decimal
 * integer with optional '-'; FLOAT has a '.' or an exponent, or is one of the
 * bare words inf, -inf, nan; STRING is double-quoted (a symbolic size such as
 * "S/2", kept as text here and parsed against a symtab by whoever binds the
 * expression).  Lists hold ints, strings, variables or expressions.
 *
 * This module is syntax only: it knows nothing of operators or graphs.
 * Binding an expression to operators and tensors is ops.h's sc_ops_bind and
 * texpr.h's job.
 *
 * Ownership: sc_expr_parse returns a new tree owned by the caller, freed
 * with sc_expr_free, which frees every child, key and string in it.  Every
 * node records the 0-based byte span [start, end) of its source text so
 * that later errors can point at a column. */
#ifndef SHARDCHECK_EXPR_H
#define SHARDCHECK_EXPR_H

#include "shardcheck/common.h"

G_BEGIN_DECLS

#define SC_EXPR_ERROR (sc_expr_error_quark())
GQuark sc_expr_error_quark(void);
typedef enum {
  SC_EXPR_ERROR_SYNTAX, /* message "col N: expected X, found Y" (1-based) */
} sc_expr_error;

/* sc_expr_parse refuses input that nests more calls and lists than this
 * (so that no input can exhaust the stack). */
#define SC_EXPR_MAX_DEPTH 256

typedef enum {
  SC_EXPR_NAME,   /* text: tensor name */
  SC_EXPR_VAR,    /* text: variable name without '?' */
  SC_EXPR_CALL,   /* text: function name; args/keys */
  SC_EXPR_INT,    /* ival */
  SC_EXPR_FLOAT,  /* fval */
  SC_EXPR_STRING, /* text: unquoted, unescaped contents */
  SC_EXPR_LIST,   /* args (keys all NULL) */
} sc_expr_kind;

typedef struct sc_expr sc_expr;
struct sc_expr {
  sc_expr_kind kind;
  char *text;         /* NAME, VAR, CALL, STRING; NULL otherwise */
  int64_t ival;       /* INT */
  double fval;        /* FLOAT */
  uint32_t n_args;    /* CALL, LIST */
  sc_expr **args;     /* CALL, LIST: n_args children */
  char **keys;        /* CALL: n_args entries, NULL for positional items */
  uint32_t start, end; /* source span, bytes, 0-based, end exclusive */
};

sc_expr *sc_expr_parse(const char *text, GError **error);
void sc_expr_free(sc_expr *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_expr, sc_expr_free)

/* Canonical text: no spaces except ", " between items; keys as "key=value";
 * floats printed so that they parse back to the same double; strings
 * re-quoted.  sc_expr_parse(sc_expr_to_string(e)) is sc_expr_equal to e.
 * Caller g_free()s.
 * (Floats use the shortest digits that read back exactly, laid out as
 * Python's repr: 0.1, 1.0, 1e-05, 1e+16, -0.0, inf, -inf, nan.  A NAME
 * built by hand as "inf" or "nan" cannot round-trip: it reads back as a
 * FLOAT.  In a CALL or LIST, args and keys are NULL when n_args is 0.) */
char *sc_expr_to_string(const sc_expr *e);
void sc_expr_append(GString *out, const sc_expr *e);

/* Floats compare equal when both are NaN or when == with the same sign
 * (0.0 and -0.0 differ). */
gboolean sc_expr_equal(const sc_expr *a, const sc_expr *b); /* ignores spans */
sc_expr *sc_expr_copy(const sc_expr *e);

/* Constructors (take ownership of children; copy strings). */
sc_expr *sc_expr_new_name(const char *name);
sc_expr *sc_expr_new_var(const char *name);
sc_expr *sc_expr_new_int(int64_t v);
sc_expr *sc_expr_new_float(double v);
sc_expr *sc_expr_new_string(const char *s);
sc_expr *sc_expr_new_call(const char *func);
sc_expr *sc_expr_new_list(void);
/* Append an item to a CALL (key may be NULL) or a LIST (key must be NULL);
 * takes ownership of child. */
void sc_expr_add_arg(sc_expr *call, const char *key, sc_expr *child);

/* The value of keyword KEY of a CALL, or NULL. */
const sc_expr *sc_expr_get_kwarg(const sc_expr *call, const char *key);

G_END_DECLS

#endif
