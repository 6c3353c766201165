/* pattern-private.h — pattern arenas and compiled programs, shared by
 * pattern.c (building, compiling), machine.c (running) and rewrite.c
 * (right-hand sides).  Nothing outside src/egraph/ includes it.
 *
 * A program is a flat instruction array over registers holding class ids
 * (register 0 is the root class) and the query's substitution.  BIND walks
 * the nodes of a class with one operator (a sub-range of its sorted node
 * list), checks the attribute and writes the children into fresh registers;
 * CHECK compares a register with an already bound variable (repeated
 * variables, and variables bound by earlier stages); BIND_VAR binds a
 * variable's first occurrence; YIELD passes the substitution to the next
 * stage (the next requires program, then the guard, then the output). */
#ifndef SC_PATTERN_PRIVATE_H
#define SC_PATTERN_PRIVATE_H

#include "shardcheck/pattern.h"

typedef struct {
  gboolean is_var;
  uint32_t var;      /* is_var: index into the arena's names */
  uint32_t op;
  sc_attr_pat attr;  /* attr.var is owned (a copy) */
  uint32_t kid_off, n_kids;
} sc_pat_term;

struct sc_pattern {
  GArray *terms;     /* sc_pat_term */
  GArray *kids;      /* sc_pat_id */
  GPtrArray *names;  /* char *, owned */
  sc_pat_id root;
  gboolean root_set;
};

static inline const sc_pat_term *sc_pat_term_at(const sc_pattern *p,
                                                sc_pat_id i) {
  return &g_array_index(p->terms, sc_pat_term, i);
}
static inline sc_pat_id sc_pat_kid(const sc_pattern *p, const sc_pat_term *t,
                                   uint32_t i) {
  return g_array_index(p->kids, sc_pat_id, t->kid_off + i);
}
sc_pat_id sc_pattern_root(const sc_pattern *p);

typedef enum {
  SC_I_BIND,
  SC_I_CHECK,
  SC_I_BIND_VAR,
  SC_I_YIELD,
} sc_insn_kind;

typedef enum {
  SC_A_ANY,
  SC_A_EXACT,
  SC_A_VAR_BIND,
  SC_A_VAR_CHECK,
  SC_A_PRED,
} sc_attr_check;

typedef struct {
  sc_insn_kind kind;
  sc_attr_check akind;
  uint32_t reg;
  uint32_t op, arity, out; /* BIND */
  uint32_t aval;           /* exact attribute, or attribute variable */
  sc_attr_pred_fn pred;
  void *pred_user;
  uint32_t var;            /* CHECK, BIND_VAR */
  gboolean last_bind;      /* no BIND follows in this program */
  uint32_t bind_ix;        /* BIND: its number in the program (0, 1, ...) */
} sc_insn;

/* The deepest requires path walked up from a bound variable. */
#define SC_PATH_MAX 4

typedef struct {
  sc_insn *code;
  uint32_t n_code;
  uint32_t n_regs;
  uint32_t n_binds;     /* BIND instructions (e-nodes of the pattern) */
  uint32_t n_levels;    /* levels of BINDs: a match's e-nodes lie in classes
                           at most n_levels - 1 child edges below the root
                           (0: a bare variable) */
  uint32_t root_op;     /* SC_ID_NONE: the pattern is a bare variable */
  uint32_t driver_pos;  /* requires: child position of a bound class var */
  uint32_t driver_var;  /* ... and that variable; SC_ID_NONE if none */
  /* requires without a driver: a path of nested operators from the root
   * down to a class variable bound by an earlier stage (path_op[0] is the
   * root op, path_pos[i] the child taken below path_op[i]); the candidate
   * root classes are found by walking up the parent lists from that
   * variable's class.  path_len 0: none (scan the root op's classes). */
  uint32_t path_len;
  uint32_t path_op[SC_PATH_MAX], path_pos[SC_PATH_MAX];
  uint32_t path_var;
} sc_program;

struct sc_query {
  sc_program lhs;
  sc_program *req;
  uint32_t n_req;
  GPtrArray *var_names; /* char *, owned */
  GArray *var_is_attr;  /* gboolean */
};

/* sc_query_search, keeping only matches that bind at least one node
 * stamped >= since (semi-naive search; since 0 keeps all).  With
 * record_nodes each match is followed by the e-nodes its lhs BINDs
 * matched, by bind_ix (lhs.n_binds more entries): explanations
 * instantiate the left side from them. */
uint64_t sc_query_search_since(const sc_query *q, const sc_egraph *eg,
                               uint64_t limit, sc_guard_fn guard,
                               void *guard_user, GArray *out, uint32_t since,
                               gboolean record_nodes);
/* The same, given NEAR (sc_egraph_near_changed for the same since, or
 * NULL): a query without requires skips the root classes farther than
 * lhs.n_levels - 1 child edges from every changed class, where no match
 * can bind a changed e-node.  The matches and their order are those of
 * sc_query_search_since. */
uint64_t sc_query_search_near(const sc_query *q, const sc_egraph *eg,
                              uint64_t limit, sc_guard_fn guard,
                              void *guard_user, GArray *out, uint32_t since,
                              gboolean record_nodes, const uint8_t *near);

/* Variable table while compiling: lookup or create, checking the kind. */
uint32_t sc_query_intern_var(sc_query *q, const char *name, gboolean is_attr,
                             GError **error);

#endif
