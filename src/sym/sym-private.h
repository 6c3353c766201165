/* sym-private.h — internals of the symbolic sizes module (src/sym/).
 *
 * Representation (see sym.h for the contract):
 *  - An atom is an integer-valued unknown: a symbol's hidden atom (the user
 *    symbol S divided by its current scale m, so S == m*atom exactly), or an
 *    opaque floordiv / mod / min / max of normal forms.  Atoms are interned
 *    (one sc_sym_atom per structure) and named by their index in st->atoms.
 *  - A monomial is a product of atoms with exponents, factors sorted by
 *    sc_sym_atom_cmp; the empty monomial (st->unit) stands for 1.
 *  - A polynomial is a sum of terms (int64 coefficient, interned monomial),
 *    sorted by sc_sym_mono_cmp (higher degree first, the constant last), no
 *    zero coefficients, at least one non-constant term (a constant is a
 *    concrete sc_dim, never a poly).  Monomials and polynomials are
 *    hash-consed, so structural equality is pointer equality.
 *  - Assumptions can replace an atom by a normal form (atom->subst: "T == 4",
 *    "S == 2*K", or a symbol's rescaling S/2 -> 2*(S/4) when "S % 4 == 0"
 *    arrives).  Each change bumps st->epoch; a poly caches its normal form
 *    at the current epoch (poly->fresh), so stale dims are rewritten lazily,
 *    once per epoch.  Every operation refreshes its inputs first; the
 *    results are always fresh.
 *
 * Ownership: everything here is owned by the symtab and freed with it.  The
 * cache fields of a poly (epoch, fresh) are mutable even through const
 * pointers: they do not change what the poly means. */
#ifndef SHARDCHECK_SYM_PRIVATE_H
#define SHARDCHECK_SYM_PRIVATE_H

#include "shardcheck/sym.h"

/* Exponents above this set the overflow flag (a product that large is no
 * size anyone means, and loops over exponents stay short). */
#define SC_SYM_MAX_EXP 1024u

/* Interval with saturating ends: inf is -1 (-infinity), +1 (+infinity) or 0. */
typedef struct {
  int64_t v;
  int inf;
} sc_sym_xint;
typedef struct {
  sc_sym_xint lo, hi;
} sc_sym_ival;

/* The largest normal form, in nodes of its tree (its size printed, each
 * atom counted once per occurrence): beyond it the symtab's sticky
 * too-large flag is set (sc_symtab_too_large), and the bundle loader stops
 * with a limit.  Normal forms are DAGs (k*X/8 is 4*X + (3*X)/8: X twice),
 * so the tree can be exponential in the text that made it; every walk that
 * does not memoize costs the tree.  Real sizes have a few dozen nodes. */
#define SC_SYM_MAX_SIZE 4096u
/* sc_dim_to_string stops past this many bytes ("..."): only a normal form
 * beyond SC_SYM_MAX_SIZE prints that long. */
#define SC_SYM_MAX_PRINT (256u * 1024u)

typedef struct {
  uint32_t atom;
  uint32_t exp;
} sc_sym_factor;

typedef struct sc_sym_mono {
  guint hash;
  uint32_t n;
  uint32_t degree;
  sc_sym_factor f[];
} sc_sym_mono;

typedef struct {
  int64_t c;
  const sc_sym_mono *m;
} sc_sym_term;

struct sc_sym_poly {
  guint hash;
  uint32_t n;
  uint32_t epoch;   /* cache: epoch at which fresh was computed */
  /* refresh bookkeeping (sym.c), in what was padding: 1 + the depth of
   * this poly's refresh in progress, 0 when none */
  uint32_t busy;
  sc_dim fresh;     /* cache: this poly's normal form at that epoch */
  uint32_t size;    /* nodes of the tree, saturating at UINT32_MAX */
  sc_symtab *st;    /* the owner, so that a dim can be printed alone */
  sc_sym_term t[];
};

typedef enum {
  SC_ATOM_SYM,
  SC_ATOM_FLOORDIV,
  SC_ATOM_MOD,
  SC_ATOM_MIN,
  SC_ATOM_MAX,
} sc_sym_atom_kind;

typedef struct {
  sc_sym_atom_kind kind;
  uint32_t id;
  guint hash;
  uint32_t sym;      /* SYM: symbol index */
  int64_t scale;     /* SYM: this atom is symbol / scale, exactly */
  sc_dim a, b;       /* FLOORDIV/MOD: a op b; MIN/MAX: the two arguments */
  gboolean has_subst;
  sc_dim subst;      /* the atom's value in terms of newer atoms */
  gboolean has_lo, has_hi;
  int64_t lo, hi;    /* inclusive bounds from declarations and assumptions */
  const sc_sym_mono *mono;  /* atom^1 */
  const sc_sym_poly *self;  /* 1*atom^1 */
  uint32_t size;     /* nodes of the tree: 1 + the sizes of a and b */
  /* cache of sym-decide.c's interval walk, valid while ival_epoch is the
   * symtab's epoch (bounds and substitutions change only with a bump) */
  gboolean ival_cached;
  uint32_t ival_epoch;
  sc_sym_ival ival;
  /* cache of sym.c's refresh of a floordiv / mod / min / max atom (its
   * normal form at fresh_epoch): the same atom is reached from every
   * poly that holds it, and its renormalisation decides (a division
   * folds when the facts bound it), so without it the refresh of an
   * epoch repeats those decisions once per poly */
  gboolean fresh_cached;
  uint32_t fresh_epoch;
  sc_dim fresh;
} sc_sym_atom;

typedef struct {
  char *name;
  uint32_t atom;     /* current hidden atom: symbol == scale * atom */
  int64_t scale;
  gboolean has_min, has_max;
  int64_t min, max;  /* as declared (min 0 when not given) */
} sc_sym_symbol;

/* The refresh of a substituted atom's value in progress, at DEPTH. */
typedef struct {
  uint32_t atom, depth;
} sc_sym_subst_frame;

struct sc_symtab {
  GPtrArray *symbols;     /* sc_sym_symbol*, owned */
  GHashTable *by_name;    /* name (borrowed from symbols) -> index + 1 */
  GPtrArray *atoms;       /* sc_sym_atom*, owned */
  GHashTable *atom_set;   /* sc_sym_atom* (borrowed) -> same */
  GHashTable *monos;      /* sc_sym_mono* (owned keys) */
  GHashTable *polys;      /* sc_sym_poly* (owned keys) */
  const sc_sym_mono *unit;
  uint32_t epoch;
  uint32_t refreshing;    /* depth of the refreshes in progress (sc_sym_refresh) */
  GArray *subst_stack;    /* sc_sym_subst_frame: substituted values being refreshed */
  uint32_t cycle_atom;    /* a substituted atom found on a cycle, or G_MAXUINT32 */
  uint32_t busy_hits;     /* refreshes that found their poly busy (a cycle) */
  GRecMutex lock;         /* every public entry with a symbolic operand holds it
                             (threads of `check --jobs`, docs/architecture.md) */
  gboolean too_large;     /* sticky: a normal form passed SC_SYM_MAX_SIZE */
  /* The facts (sym-decide.c, "the facts of an epoch"): read as stored by
   * every decision, never refreshed there; rewritten once per epoch, before
   * the epoch's first refresh, by sc_sym_facts_update. */
  GArray *ge_facts;       /* sc_dim, each p >= 0 */
  GArray *eq_facts;       /* sc_dim, each p == 0 */
  GArray *ne_facts;       /* sc_dim, each p != 0 */
  uint32_t facts_epoch;   /* the epoch the facts were rewritten for */
  gboolean facts_updating; /* sc_sym_facts_update is running */
  gboolean contradiction; /* sticky: the assumptions were found to contradict
                             each other (sym-decide.c, "contradictions") */
  GPtrArray *texts;       /* char*, assumption texts */
  /* the oracle hook (sym-decide.c); all zero in a new symtab */
  sc_sym_oracle oracle;   /* decide == NULL: none */
  void *oracle_user;      /* borrowed */
  GHashTable *oracle_cache; /* query key (owned) -> GINT_TO_POINTER(truth + 1) */
  sc_sym_stats stats;
  sc_sym_work work;
};

/* The overflow flag (sc_symtab_overflowed) is per thread, not per symtab:
 * threads of one check share the symtab, and an overflow in one visit must
 * not be seen by another.  Every caller clears it before the operations it
 * checks, so a flag shared by the symtabs a thread works on is the same;
 * sc_symtab_new clears it (a new symtab has not overflowed). */
extern _Thread_local gboolean sc_sym_overflow;
/* Holds ST's lock (none for a NULL ST: a concrete size printed alone)
 * until the end of the enclosing scope. */
static inline sc_symtab *sc_sym_lock(const sc_symtab *st) {
  if (st != NULL)
    g_rec_mutex_lock(&((sc_symtab *)st)->lock);
  return (sc_symtab *)st;
}
static inline void sc_sym_unlock(sc_symtab **st) {
  if (*st != NULL)
    g_rec_mutex_unlock(&(*st)->lock);
}
#define SC_SYM_LOCKED(st)                                                                  \
  G_GNUC_UNUSED __attribute__((cleanup(sc_sym_unlock))) sc_symtab *sc_sym_locker_ =       \
      sc_sym_lock(st)

static inline const sc_sym_atom *sc_sym_atom_get(const sc_symtab *st, uint32_t id) {
  return g_ptr_array_index(st->atoms, id);
}
static inline const sc_sym_symbol *sc_sym_symbol_get(const sc_symtab *st, uint32_t i) {
  return g_ptr_array_index(st->symbols, i);
}

/* sym.c: normal forms and arithmetic. */
static inline uint32_t sc_sym_size_add(uint32_t a, uint32_t b) {
  return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}
static inline uint32_t sc_sym_dim_size(sc_dim d) {
  return d.poly ? d.poly->size : 1u;
}
int sc_sym_atom_cmp(const sc_symtab *st, uint32_t a, uint32_t b);
int sc_sym_dim_cmp(const sc_symtab *st, sc_dim a, sc_dim b);
sc_dim sc_sym_refresh(sc_symtab *st, sc_dim d);
sc_dim sc_sym_atom_dim(sc_symtab *st, uint32_t atom);
uint32_t sc_sym_atom_intern(sc_symtab *st, const sc_sym_atom *key);
/* The id of the atom equal to KEY, or G_MAXUINT32 when there is none (none
 * is made). */
uint32_t sc_sym_atom_find(const sc_symtab *st, const sc_sym_atom *key);
sc_dim sc_sym_scale(sc_symtab *st, sc_dim d, int64_t k);
/* a + kb*b and a*b on the stored forms, without refreshing them: exact
 * arithmetic whatever the epoch (the result is fresh when a and b are). */
sc_dim sc_sym_raw_add(sc_symtab *st, sc_dim a, sc_dim b, int64_t kb);
sc_dim sc_sym_raw_mul(sc_symtab *st, sc_dim a, sc_dim b);
/* d with every coefficient divided by k (k divides them all). */
sc_dim sc_sym_div_exact(sc_symtab *st, sc_dim d, int64_t k);
/* q == factor * rest where factor is the largest monomial dividing every
 * term of q (coefficient 1); FALSE when that is 1. */
gboolean sc_sym_split_common(sc_symtab *st, sc_dim q, sc_dim *factor, sc_dim *rest);
/* gcd of d's coefficients (of its constant too), >= 0 */
int64_t sc_sym_content(sc_dim d);
/* does atom occur in d, also inside other atoms? */
gboolean sc_sym_occurs(const sc_symtab *st, sc_dim d, uint32_t atom);
/* d with every mod atom mod(p, q) written p - q*floordiv(p, q). */
sc_dim sc_sym_expand_mod(sc_symtab *st, sc_dim d);
/* b divides a (b != 0), without INT64_MIN % -1 */
static inline gboolean sc_sym_divisible(int64_t a, int64_t b) {
  return b == -1 || a % b == 0;
}
int64_t sc_sym_mul64(sc_symtab *st, int64_t a, int64_t b);
int64_t sc_sym_add64(sc_symtab *st, int64_t a, int64_t b);
int64_t sc_sym_gcd64(int64_t a, int64_t b);
int64_t sc_sym_py_floordiv(sc_symtab *st, int64_t a, int64_t k);
int64_t sc_sym_py_mod(int64_t a, int64_t k);
void sc_sym_bump(sc_symtab *st);

/* sym-decide.c: intervals, decisions, assumptions. */
sc_sym_ival sc_sym_interval(const sc_symtab *st, sc_dim d);
/* Is q >= 0?  q fresh.  YES proven, NO proven q < 0, else UNKNOWN. */
sc_truth sc_sym_ge0(sc_symtab *st, sc_dim q);
sc_truth sc_sym_eq0(sc_symtab *st, sc_dim q);
/* Record a relation between fresh dims; FALSE with error if false or
 * contradicting what is known.  op is one of "==", "!=", "<", "<=", ">",
 * ">=". */
gboolean sc_sym_assume_rel(sc_symtab *st, sc_dim a, const char *op, sc_dim b,
                           const char *text, GError **error);
/* Rewrites the facts in the normal forms of the current epoch, deciding
 * with the facts as they were; then bumps the epoch (what was cached meanwhile
 * was decided with the old facts).  Called by the outermost sc_sym_refresh
 * of an epoch whose facts are not rewritten yet. */
void sc_sym_facts_update(sc_symtab *st);
/* Frees the oracle's answer cache (sc_symtab_free calls it). */
void sc_sym_oracle_clear(sc_symtab *st);

#endif
