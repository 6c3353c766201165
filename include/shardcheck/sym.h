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
 * symbols' bounds and the assumptions; an external decision procedure
 * (cvc5) may be plugged in behind them later.  UNKNOWN is never YES.
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
 * concrete values ("4 % 3 == 0") is SC_SYM_ERROR_INVALID "assumption is
 * false: ..."; one that contradicts the bounds or earlier assumptions is
 * SC_SYM_ERROR_INVALID "assumption contradicts ...": after such an error
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

G_END_DECLS

#endif
