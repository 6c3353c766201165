/* sym.h — symbolic integer sizes (dimensions, slice bounds, offsets).
 *
 * An sc_dim is a concrete int64 or an integer expression over the bundle's
 * symbols, kept in a normal form so that equal expressions are equal values:
 * a sum of monomials with int64 coefficients, each monomial a product of
 * atoms (symbols, or opaque floor-division / modulo terms that could not be
 * simplified), sorted; exact division is performed where the divisor
 * provably divides (all coefficients divisible, or a divisibility assumption
 * such as "S % 2 == 0" on a symbol).
 *
 * Ownership: an sc_symtab owns every symbolic expression made through it
 * (hash-consed: structurally equal normal forms are the same object).  An
 * sc_dim is a plain value that borrows from its symtab and stays valid until
 * sc_symtab_free.  Dims from different symtabs must not be mixed.
 *
 * Overflow: arithmetic on values that overflows int64 sets the symtab's
 * sticky overflow flag (sc_symtab_overflowed) and returns a clamped value;
 * callers that take sizes from input check the flag and report an error.
 *
 * Comparisons answer SC_YES / SC_NO / SC_UNKNOWN using the normal form, the
 * symbols' bounds and the assumptions; where that leaves UNKNOWN, an
 * optional oracle (sc_symtab_set_oracle; src/smt/ plugs in cvc5) is asked
 * the same question in a solver-neutral form.  UNKNOWN is never YES.
 * Comparisons never set the overflow flag (a difference that does not fit
 * answers UNKNOWN), and on two concrete dims they do not allocate.
 *
 * Assumptions rewrite normal forms ("T == 4" replaces T, "S % 2 == 0"
 * makes S twice a hidden unknown so that S/2 is exact).  A dim made before
 * an assumption keeps its meaning: every operation rewrites its inputs
 * first, so sc_dim_eq and arithmetic see the new form, but
 * sc_dim_identical compares the stored forms and can say FALSE for a dim
 * from before the assumption and an equal one made after.  Make the
 * assumptions first (as a bundle does) to get exact identity. */
#ifndef SHARDCHECK_SYM_H
#define SHARDCHECK_SYM_H

#include "shardcheck/common.h"

G_BEGIN_DECLS

#define SC_SYM_ERROR (sc_sym_error_quark())
GQuark sc_sym_error_quark(void);
typedef enum {
  SC_SYM_ERROR_SYNTAX,     /* message: "col N: ..." (1-based column) */
  SC_SYM_ERROR_UNDEFINED,  /* unknown symbol name */
  SC_SYM_ERROR_DUPLICATE,  /* symbol declared twice */
  SC_SYM_ERROR_INVALID,    /* bad bounds, division by zero, overflow, ... */
  SC_SYM_ERROR_CONTRADICTION, /* sc_symtab_assume: the constraint is false,
                                 or contradicts the bounds or earlier
                                 assumptions */
} sc_sym_error;

typedef struct sc_symtab sc_symtab;
typedef struct sc_sym_poly sc_sym_poly; /* opaque, interned in a symtab */

typedef struct {
  int64_t value;            /* the value when poly == NULL, else 0 */
  const sc_sym_poly *poly;  /* NULL for a concrete value */
} sc_dim;

sc_symtab *sc_symtab_new(void);
void sc_symtab_free(sc_symtab *st);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_symtab, sc_symtab_free)

/* Declare symbol NAME (an identifier, may contain '.' as in "r1.u0") with
 * optional inclusive bounds.  Symbols are sizes: when no min is given the
 * lower bound is 0. */
gboolean sc_symtab_declare(sc_symtab *st, const char *name,
                           gboolean has_min, int64_t min,
                           gboolean has_max, int64_t max, GError **error);
/* Add a constraint: "S % 2 == 0", "S >= 4", "B*S <= 8192", "H % T == 0",
 * relations == != < <= > >= between dim expressions, joined by && / and
 * (a conjunction is split into its parts, each recorded as its own
 * assumption text); chains such as "1 <= S <= 8" are allowed.  Syntax
 * errors carry a column and change nothing.  A constraint false on
 * concrete values ("4 % 3 == 0") is SC_SYM_ERROR_CONTRADICTION "assumption
 * is false: ..."; one that contradicts the bounds or earlier assumptions is
 * SC_SYM_ERROR_CONTRADICTION "assumption contradicts ...": after such an error
 * the earlier parts of the conjunction may have been applied, so treat the
 * symtab as failed input. */
gboolean sc_symtab_assume(sc_symtab *st, const char *constraint, GError **error);
uint32_t sc_symtab_n_symbols(const sc_symtab *st);
const char *sc_symtab_symbol_name(const sc_symtab *st, uint32_t index);
/* Symbol index by name, or FALSE. */
gboolean sc_symtab_lookup(const sc_symtab *st, const char *name, uint32_t *index);
/* The bounds as declared (min is 0 when none was given; assumptions do
 * not change them). */
void sc_symtab_symbol_bounds(const sc_symtab *st, uint32_t index,
                             gboolean *has_min, int64_t *min,
                             gboolean *has_max, int64_t *max);
uint32_t sc_symtab_n_assumptions(const sc_symtab *st);
const char *sc_symtab_assumption_text(const sc_symtab *st, uint32_t index);
gboolean sc_symtab_overflowed(const sc_symtab *st);
void sc_symtab_clear_overflow(sc_symtab *st);
/* Sticky: a normal form made since the last clear has more than
 * sc_symtab_max_size() nodes (its tree, as printed).  Such a dim is still
 * exact, but walking it costs its size: callers stop with a limit. */
gboolean sc_symtab_too_large(const sc_symtab *st);
void sc_symtab_clear_too_large(sc_symtab *st);
uint32_t sc_symtab_max_size(void);

static inline sc_dim sc_dim_const(int64_t v) { sc_dim d = {v, NULL}; return d; }
static inline gboolean sc_dim_is_const(sc_dim d) { return d.poly == NULL; }
/* Structural identity (normal forms are interned, so this is exact equality
 * of expressions, not a semantic comparison: use sc_dim_eq for that). */
static inline gboolean sc_dim_identical(sc_dim a, sc_dim b) {
  return a.poly == b.poly && a.value == b.value;
}
guint sc_dim_hash(sc_dim d);

/* The dim for symbol NAME; FALSE (with error) if undeclared. */
gboolean sc_dim_symbol(sc_symtab *st, const char *name, sc_dim *out, GError **error);
/* Parse "S/2", "2*S+1", "(B*S)/T", "-1", "9223372036854775807".
 * Grammar: sums and differences of products and quotients of integers,
 * symbol names and parenthesised expressions; unary minus (binding tighter
 * than * / %, as in Python: "-S/2" is (-S)/2); '/' (or '//') is floor
 * division (exact where provable), '%' is modulo; min(a, b) and max(a, b).
 * Errors: SC_SYM_ERROR_SYNTAX with "col N: expected X, found Y",
 * SC_SYM_ERROR_UNDEFINED "col N: undefined symbol 'Q'", and
 * SC_SYM_ERROR_INVALID "col N: ..." for an out-of-range literal, a
 * division by zero or an overflow (the sticky flag is left as it was). */
gboolean sc_dim_parse(sc_symtab *st, const char *text, sc_dim *out, GError **error);
/* Inverse of sc_dim_parse: sc_dim_parse(sc_dim_to_string(d)) is identical
 * to d.  Concrete values print as plain integers; "2*S+1", "4-S", "B*S",
 * "S/2", "(S+1)/3", "(S+1)%4", "T*((S+1)/3)", "min(S, T)".  ST may be NULL
 * (a symbolic dim knows its symtab).  Caller g_free()s. */
char *sc_dim_to_string(const sc_symtab *st, sc_dim d);

sc_dim sc_dim_add(sc_symtab *st, sc_dim a, sc_dim b);
sc_dim sc_dim_sub(sc_symtab *st, sc_dim a, sc_dim b);
sc_dim sc_dim_mul(sc_symtab *st, sc_dim a, sc_dim b);
sc_dim sc_dim_neg(sc_symtab *st, sc_dim a);
/* Floor division and modulo (Python semantics for negatives).  A divisor
 * that is zero sets no value: the functions return FALSE. */
gboolean sc_dim_floordiv(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out);
gboolean sc_dim_mod(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out);
/* Decided if possible, else an opaque min(a, b) / max(a, b) term. */
sc_dim sc_dim_min(sc_symtab *st, sc_dim a, sc_dim b);
sc_dim sc_dim_max(sc_symtab *st, sc_dim a, sc_dim b);

/* Semantic comparisons under bounds and assumptions. */
sc_truth sc_dim_eq(sc_symtab *st, sc_dim a, sc_dim b);
sc_truth sc_dim_lt(sc_symtab *st, sc_dim a, sc_dim b);
sc_truth sc_dim_le(sc_symtab *st, sc_dim a, sc_dim b);
/* Does d divide a (a % d == 0)?  d must be nonzero. */
sc_truth sc_dim_divides(sc_symtab *st, sc_dim d, sc_dim a);

/* Evaluate under an assignment of every symbol (indexed as declared).
 * FALSE on division by zero or overflow.  Values that break the
 * assumptions give the value of the printed expression (S/2 is floor(S/2)). */
gboolean sc_dim_eval(const sc_symtab *st, sc_dim d, const int64_t *symbol_values,
                     int64_t *out);

/* ---- the oracle hook --------------------------------------------------
 *
 * When the normal form answers UNKNOWN to a public comparison (sc_dim_eq,
 * sc_dim_le, sc_dim_lt, sc_dim_divides), the symtab's oracle, if one is set,
 * gets the question as an sc_sym_query: integer unknowns with bounds, a
 * context (a conjunction of clauses, each a disjunction of literals over
 * polynomials) and a goal literal.  The context holds the recorded facts
 * and the exact definitions of the opaque atoms that occur (q == p/k is
 * "p - k*q >= 0" and "k*q + k - 1 - p >= 0"; a symbolic divisor of unknown
 * sign gets both cases, guarded; r == p%k adds an auxiliary quotient;
 * min/max their two bounds and a disjunction).  Every symbol's unknown is
 * bounded by its declaration, its assumptions and the int64 range.  The
 * oracle answers SC_YES when the context entails the goal, SC_NO when it
 * entails the goal's negation (and the context is satisfiable), else
 * SC_UNKNOWN.  Normal forms never depend on the oracle (min, max and
 * divisions are simplified by the normal form alone), so that a time-out
 * can change an answer but never an expression.
 *
 * Answers are cached per symtab, keyed by the query's canonical text
 * (query->key), UNKNOWN included; setting an oracle clears the cache.
 *
 * Ownership: the query and everything it points to is borrowed for the
 * duration of one decide() call. */
typedef enum {
  SC_SYM_REL_EQ,  /* p == 0 */
  SC_SYM_REL_NE,  /* p != 0 */
  SC_SYM_REL_GE,  /* p >= 0 */
  SC_SYM_REL_DIV, /* p % k == 0, k >= 1 */
} sc_sym_rel;

typedef struct {
  uint32_t var;  /* index into query->vars */
  uint32_t exp;  /* >= 1 */
} sc_sym_qfactor;

typedef struct {
  int64_t coeff;                  /* nonzero */
  uint32_t n_factors;             /* 0 for a constant term */
  const sc_sym_qfactor *factors;
} sc_sym_qterm;

typedef struct {
  uint32_t n_terms;               /* 0: the zero polynomial */
  const sc_sym_qterm *terms;      /* a sum; terms need not be combined */
} sc_sym_qpoly;

typedef struct {
  sc_sym_rel rel;
  int64_t k;                      /* SC_SYM_REL_DIV only, >= 1 */
  sc_sym_qpoly p;
} sc_sym_qlit;

typedef struct {
  uint32_t n_lits;                /* >= 1 */
  const sc_sym_qlit *lits;        /* a disjunction */
} sc_sym_qclause;

typedef struct {
  const char *name;   /* "S", "(S/2)" (S == 2*that), "#q3", "#r4", "#min5", ... */
  gboolean has_lo, has_hi;
  int64_t lo, hi;     /* inclusive */
} sc_sym_qvar;

typedef struct {
  uint32_t n_vars;
  const sc_sym_qvar *vars;        /* integer unknowns */
  uint32_t n_clauses;
  const sc_sym_qclause *clauses;  /* the context: all hold */
  sc_sym_qlit goal;               /* is it entailed? */
  gboolean nonlinear;             /* some term has degree >= 2 */
  const char *key;                /* canonical text (sc_sym_query_to_string) */
} sc_sym_query;

typedef struct {
  /* Must not call back into the symtab.  May take long only within its own
   * limits: every comparison that reaches it waits for it. */
  sc_truth (*decide)(void *user, const sc_sym_query *query);
  /* Optional (NULL: never asked; sc_symtab_satisfiable).  Is the query's
   * context (its variables' bounds and its clauses) satisfiable?  The goal
   * is "0 >= 0" and is ignored.  SC_YES: it is; SC_NO: it is not (shown,
   * never guessed); SC_UNKNOWN: neither within the oracle's limits.  The
   * same rules as decide. */
  sc_truth (*satisfiable)(void *user, const sc_sym_query *query);
} sc_sym_oracle;

/* Plug ORACLE in (its fields are copied; USER is borrowed and must outlive
 * the symtab or the next call), or take it out with NULL.  Clears the
 * answer cache; the statistics are kept. */
void sc_symtab_set_oracle(sc_symtab *st, const sc_sym_oracle *oracle, void *user);

/* Can the assumptions hold together?  The interval and linear reasoning
 * of sc_symtab_assume refuses what it sees contradicting (an assumption
 * false, or a fact refuted by the others); a set that contradicts itself
 * only through nonlinear reasoning (S*S == T*T + 2: no two squares are 2
 * apart) passes it.  This asks the oracle's satisfiable() once,
 * with every recorded fact, the assumptions' substitutions and the opaque
 * atoms' definitions as its context (the same context as a comparison's:
 * it can lose information, never add it, so an unsatisfiable context means
 * unsatisfiable assumptions).
 *   SC_NO: no assignment of the symbols within their bounds satisfies the
 *          assumptions (a contradiction already found by sc_symtab_assume,
 *          or shown by the oracle): refuse the input, naming them;
 *   SC_YES: nothing is left to decide (no facts, and no opaque atom with
 *          bounds or a value: each symbol is free within a non-empty
 *          interval), or the oracle found a solution;
 *   SC_UNKNOWN: no oracle or no satisfiable(), a context too large to
 *          build, or the oracle's limits: take the assumptions as today.
 * The oracle is not asked when there are no assumptions, or when the
 * answer is decided without it (the two first cases).  Not cached: call
 * it once, after the last assumption.  Counted in no statistic of the
 * symtab (the oracle keeps its own). */
sc_truth sc_symtab_satisfiable(sc_symtab *st);

/* The query as text, one line per variable, clause and the goal, e.g.
 * "var S in [1, 9223372036854775807]\nassert T - S >= 0\ngoal V - S >= 0\n".
 * Caller g_free()s. */
char *sc_sym_query_to_string(const sc_sym_query *query);

/* Comparisons made (public ones on symbolic operands only) and what the
 * oracle did with the ones the normal form left UNKNOWN. */
typedef struct {
  uint64_t comparisons;     /* sc_dim_eq/le/lt/divides calls not decided
                             * on concrete or identical operands */
  uint64_t nf_unknown;      /* of those, left UNKNOWN by the normal form */
  uint64_t oracle_queries;  /* of those, put to the oracle (or its cache) */
  uint64_t cache_hits;      /* answered from the cache */
  uint64_t oracle_calls;    /* decide() calls made (cache misses) */
  uint64_t oracle_yes, oracle_no, oracle_unknown; /* answers of those calls */
  uint64_t skipped;         /* queries not built (too large, overflow) */
  uint64_t oracle_us;       /* wall time spent in decide(), microseconds */
} sc_sym_stats;

void sc_symtab_stats(const sc_symtab *st, sc_sym_stats *stats);
/* One line: "comparisons 120, normal form unknown 3, oracle queries 3
 * (cache hits 1, calls 2: yes 2, no 0, unknown 0), skipped 0, oracle time
 * 0.012 s".  Caller g_free()s. */
char *sc_sym_stats_to_string(const sc_sym_stats *stats);

/* Steps of work done by the symtab since it was made, counted so that a
 * test can pin what an input costs without timing it (issue 19: chained
 * assumptions with floor divisions were slow because each refresh of an
 * epoch renormalised the same division atoms, with their decisions, once
 * per polynomial that held them). */
typedef struct {
  uint64_t poly_refreshes;  /* polynomials brought to an epoch's normal form
                             * (the cached ones not counted) */
  uint64_t atom_refreshes;  /* floordiv / mod / min / max atoms renormalised
                             * (the cached ones not counted) */
  uint64_t ge0_proofs;      /* searches for q >= 0 through the facts */
  uint64_t facts_updates;   /* rewrites of the facts for a new epoch */
} sc_sym_work;

void sc_symtab_work(const sc_symtab *st, sc_sym_work *work);

G_END_DECLS

#endif
