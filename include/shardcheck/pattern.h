/* pattern.h — patterns over e-nodes and the compiled queries that match them.
 *
 * A pattern is a small tree built bottom-up in an arena: leaves are class
 * variables (?x), inner nodes are (op, attribute pattern, children).  An
 * attribute pattern is an exact attribute id, an attribute variable (?d,
 * binding the attribute id), a caller predicate over the attribute id, or
 * "any"; on a right-hand side it may also be a function of the substitution
 * (computed attributes, e.g. the split point of a slice).
 *
 * A query is a left-hand pattern plus optional `requires` patterns
 * (GraphGuard 4.3.2: constrained lemmas), compiled once into flat
 * instruction arrays run by the matching machine (machine.c).  A match is a
 * root class and a substitution: one uint32 per variable of the query, a
 * class id for class variables and an attribute id for attribute variables,
 * in the order sc_query_var_name() reports.  Requires patterns are matched
 * against existing e-nodes under the substitution of the left-hand side and
 * may bind new variables (each requires match extends the substitution).
 *
 * Ownership: sc_pattern_new()/sc_query_new() return new objects freed with
 * their _free.  A query copies what it needs from its patterns (the patterns
 * may be freed afterwards).  Names are copied.  Callback user pointers are
 * borrowed and must outlive the pattern and anything compiled from it. */
#ifndef SHARDCHECK_PATTERN_H
#define SHARDCHECK_PATTERN_H

#include "shardcheck/egraph.h"

G_BEGIN_DECLS

#define SC_PATTERN_ERROR (sc_pattern_error_quark())
GQuark sc_pattern_error_quark(void);
typedef enum {
  SC_PATTERN_ERROR_EMPTY,         /* a pattern with no root */
  SC_PATTERN_ERROR_UNBOUND_VAR,   /* a variable the query does not bind */
  SC_PATTERN_ERROR_VAR_KIND,      /* ?x used both as class and attribute */
  SC_PATTERN_ERROR_BAD_REQUIRES,  /* a requires pattern that is a bare ?x */
  SC_PATTERN_ERROR_BAD_ATTR,      /* an attribute pattern not allowed here */
} sc_pattern_error;

typedef enum {
  SC_ATTR_ANY,     /* matches every attribute (lhs only) */
  SC_ATTR_EXACT,   /* this attribute id */
  SC_ATTR_VAR,     /* an attribute variable */
  SC_ATTR_PRED,    /* pred(attr, user) must hold (lhs only) */
  SC_ATTR_COMPUTE, /* fn(substitution) gives the id (rhs only) */
} sc_attr_pat_kind;

typedef gboolean (*sc_attr_pred_fn)(uint32_t attr, void *user);
/* Returns the attribute id, or SC_ID_NONE to skip this application.
 * subst is indexed by the query's variable indices. */
typedef uint32_t (*sc_attr_compute_fn)(const sc_egraph *eg,
                                       const uint32_t *subst, void *user);

typedef struct {
  sc_attr_pat_kind kind;
  uint32_t value;            /* SC_ATTR_EXACT */
  const char *var;           /* SC_ATTR_VAR (borrowed here, copied by add) */
  sc_attr_pred_fn pred;      /* SC_ATTR_PRED */
  sc_attr_compute_fn compute; /* SC_ATTR_COMPUTE */
  void *user;
} sc_attr_pat;

static inline sc_attr_pat sc_attr_exact(uint32_t id) {
  sc_attr_pat a = {SC_ATTR_EXACT, id, NULL, NULL, NULL, NULL};
  return a;
}
static inline sc_attr_pat sc_attr_any(void) {
  sc_attr_pat a = {SC_ATTR_ANY, 0, NULL, NULL, NULL, NULL};
  return a;
}
static inline sc_attr_pat sc_attr_var(const char *name) {
  sc_attr_pat a = {SC_ATTR_VAR, 0, name, NULL, NULL, NULL};
  return a;
}
static inline sc_attr_pat sc_attr_pred(sc_attr_pred_fn fn, void *user) {
  sc_attr_pat a = {SC_ATTR_PRED, 0, NULL, fn, NULL, user};
  return a;
}
static inline sc_attr_pat sc_attr_compute(sc_attr_compute_fn fn, void *user) {
  sc_attr_pat a = {SC_ATTR_COMPUTE, 0, NULL, NULL, fn, user};
  return a;
}

typedef struct sc_pattern sc_pattern;
typedef uint32_t sc_pat_id; /* a term of one pattern's arena */

sc_pattern *sc_pattern_new(void);
void sc_pattern_free(sc_pattern *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_pattern, sc_pattern_free)

/* A class variable leaf ?name (the same name twice is the same variable). */
sc_pat_id sc_pattern_var(sc_pattern *p, const char *name);
/* An inner node; kids are earlier terms of the same pattern.  The last term
 * added is the root unless sc_pattern_set_root says otherwise. */
sc_pat_id sc_pattern_node(sc_pattern *p, uint32_t op, sc_attr_pat attr,
                          const sc_pat_id *kids, uint32_t n_kids);
void sc_pattern_set_root(sc_pattern *p, sc_pat_id root);
uint32_t sc_pattern_n_terms(const sc_pattern *p);

/* Compiled query.  requires may be NULL when n_requires is 0. */
typedef struct sc_query sc_query;
sc_query *sc_query_new(const sc_pattern *lhs,
                       const sc_pattern *const *requires, uint32_t n_requires,
                       GError **error);
void sc_query_free(sc_query *q);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_query, sc_query_free)

uint32_t sc_query_n_vars(const sc_query *q);
/* Index of variable name, or SC_ID_NONE. */
uint32_t sc_query_var_index(const sc_query *q, const char *name);
const char *sc_query_var_name(const sc_query *q, uint32_t var);
gboolean sc_query_var_is_attr(const sc_query *q, uint32_t var);
/* The operator at the lhs root, or SC_ID_NONE when the lhs is a bare ?x. */
uint32_t sc_query_root_op(const sc_query *q);
/* A printable listing of the compiled programs (for docs and debugging).
 * (transfer full) */
char *sc_query_disassemble(const sc_query *q);

/* Guard over a complete substitution (after requires); FALSE drops it. */
typedef gboolean (*sc_guard_fn)(const sc_egraph *eg, sc_id root,
                                const uint32_t *subst, void *user);

/* Searches a clean e-graph.  Appends each match to out (a GArray of
 * uint32_t) as 1 + n_vars values: root class, then the substitution.
 * Stops after limit matches (0 = no limit).  Returns the number of matches
 * appended. */
uint64_t sc_query_search(const sc_query *q, const sc_egraph *eg,
                         uint64_t limit, sc_guard_fn guard, void *guard_user,
                         GArray *out);

G_END_DECLS

#endif
