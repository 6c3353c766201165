/* lemprove.h — the shape prover behind `shardcheck lemmas prove`: for every
 * lemma of a set, that wherever its left side is well-typed and its where
 * condition holds, its right side is well-typed with the same shape and
 * dtype (and for <=> the converse), for every size, at every rank up to a
 * bound R (TensorRight's finite rank bound).
 *
 * The method.  A configuration fixes what the shape rules index with:
 * each tensor variable's rank (0..R), each dim-valued attribute (an `int`
 * argument named like dim: every value in [-R, R), and lists of them of
 * length 0..R), each bool, ScalarType and loss `reduction` attribute
 * (every value), the length (0..R) of each size list, and one dtype shared
 * by every tensor variable; a Scalar attribute takes each of 8
 * representatives (-1, 0, 1, 2, 0.5, -0.5, True, False: the shape rules read
 * a Scalar's kind and an int's sign, never its magnitude, except arange's
 * and linspace's bounds, whose lemmas are not provable here; full's Scalar
 * is its fill value, whose kind alone gives the dtype), a float
 * attribute passed as a probability p (dropout) each of 0, 0.5, 1, -0.5, 2
 * (the rules read whether it lies in [0, 1]), any other float 0.5 (not read
 * by any rule), a string its default.  Everything else is a fresh symbol: each size
 * of each tensor variable in [1, 2^31], each other integer attribute
 * (start, end, length, step, view and expand sizes...) in [-2^40, 2^40].
 * Both sides' shape rules run on these symbolic types (sym.h).  Every size
 * comparison that the normal form leaves undecided goes to the oracle
 * (cvc5, src/smt); one that the oracle cannot decide either splits the
 * path: the run is replayed twice, once with the comparison assumed and
 * once with its negation (sc_symtab_assume), so that each path is a
 * conjunction of linear or polynomial facts under which every comparison
 * is decided.  The sizes that shape rules treat specially without asking
 * (a broadcast size of 1, an expanded size -1) are split the same way
 * before each rule runs: a size that the path makes equal to 1 (or -1)
 * becomes the constant.  A lemma is
 *   - PROVED when on every path of every configuration where the left side
 *     is well-typed and the condition is YES, the right side is well-typed
 *     with equal dtype and rank and every size provably equal;
 *   - REFUTED when a path breaks that and a concrete instance of the same
 *     configuration (sizes and integers searched) breaks it under the
 *     concrete shape rules: the instance is reported;
 *   - NOT_PROVABLE when the method cannot conclude: a comparison neither
 *     the solver nor a linear split decides (a floor division or modulo
 *     left opaque), a shape rule that needs a concrete integer, a
 *     condition on a float or string attribute or on values (vmin/vmax)
 *     (a condition's conjuncts on a Scalar are dropped: a weaker
 *     hypothesis; a refutation's instance satisfies the whole condition),
 *     a budget of configurations or paths exceeded, a symbolic refutation
 *     without a concrete witness, or a left side well-typed in no
 *     configuration at rank <= R; "over budget (time)" when the oracle
 *     ran out of wall time on one of the lemma's queries
 *     (OPTS->oracle_time_hits), the only load-dependent outcome.
 * Configurations that a part of the lemma makes vacuous for every size (a
 * conjunct of the condition NO, a node of a requires or of a => lemma's
 * left side ill-typed, judged on its own variables) are not run, and
 * skipped in bulk.  A lemma well-typed in no configuration at rank <= R
 * is proved at the next bound, up to max_rank_bound (its result says
 * which); one well-typed at none of those bounds with a dtype shared by
 * its tensor variables is proved again at each bound with a dtype per
 * tensor variable (every assignment; mixed_dtypes says so).
 * Values.  For a pure layout lemma (every operator of both sides among
 * cat, stack, slice, narrow, select, split, split_with_sizes, chunk,
 * unbind, transpose, t, permute, unsqueeze, squeeze, expand, repeat,
 * repeat_interleave, roll, view/reshape/flatten, flip, constant_pad_nd
 * and the identities) whose typing is proved, the
 * same configurations and paths are run again with the values obligation
 * (prove-values.c): at a symbolic output index in bounds, both sides read
 * the same element of the same variable (or the same pad fill value).  A
 * comparison of indices that no one decides splits the path as above.
 * Values are
 *   - PROVED when that holds on every path of every configuration;
 *   - REFUTED when a path breaks it and a concrete instance, found by
 *     random sizes, is checked by the interpreter (OPTS->check_instance:
 *     both sides evaluated on random values) to give different values;
 *   - NOT_PROVABLE otherwise (a view regrouping dims other than by a
 *     split or a merge; a symbolic dim; a budget; a comparison over a
 *     division left undecided; a symbolic refutation without an
 *     interpreter witness).
 * Other lemmas' values are only fuzzed (lemcheck.h).  Not covered: mixed
 * dtypes among tensor variables, sizes 0, integers beyond 2^40, ranks
 * above R.
 *
 * Ownership: the report borrows the set's lemma names; its strings are its
 * own.  The oracle is borrowed for the call. */
#ifndef SHARDCHECK_LEMPROVE_H
#define SHARDCHECK_LEMPROVE_H

#include "shardcheck/lemma.h"

#include <stdio.h>

G_BEGIN_DECLS

typedef struct {
  uint32_t rank_bound;   /* R (2) */
  uint32_t max_rank_bound; /* a lemma whose left side is well-typed in no
                              configuration at rank <= R is proved at R + 1,
                              and so on up to this bound (4; <= R: never) */
  uint32_t max_configs;  /* configurations visited per lemma (200000: run,
                            or found vacuous one by one; those skipped in
                            bulk are not counted, prove-configs.c); at most 600
                            calls of the oracle per lemma */
  uint32_t max_paths;    /* runs per lemma (a path, a split or an infeasible case
                            each), over all configurations (15000; at
                            most 4000 in one configuration) */
  const char *only;      /* prove only lemmas whose name starts with this (NULL: all) */
  uint32_t part, parts;  /* prove only the lemmas whose index in the set is
                            PART modulo PARTS (0 of 1: all) */
  gboolean values;       /* also prove layout lemmas' values (TRUE) */
  gboolean layout_only;  /* prove only the pure layout lemmas (FALSE) */
  /* The interpreter's judgement of one concrete instance of LEMMA: SC_NO
   * when its sides' values differ (*DETAIL, transfer full, says where),
   * SC_YES when they agree on the values drawn, SC_UNKNOWN when it cannot
   * evaluate them.  NULL: no value is ever refuted. */
  sc_truth (*check_instance)(void *user, const sc_lemma_set *set, uint32_t lemma,
                             const sc_lemma_instance *inst, char **detail);
  void *check_user;
  /* How many of the oracle's answers so far were UNKNOWN because a
   * wall-time limit ran out (called with the oracle's user; NULL: none
   * is).  A lemma not proved during whose runs this grew is NOT_PROVABLE
   * "over budget (time)" rather than for the reason the run met: that
   * reason would depend on the machine's load. */
  uint64_t (*oracle_time_hits)(void *oracle_user);
} sc_lemprove_options;

void sc_lemprove_options_init(sc_lemprove_options *opts);

#define SC_LEMPROVE_STATUSES(X)                 \
  X(SC_LEMPROVE_PROVED, "proved")               \
  X(SC_LEMPROVE_REFUTED, "refuted")             \
  X(SC_LEMPROVE_NOT_PROVABLE, "not_provable")
typedef enum {
#define SC_X_LP(sym, word) sym,
  SC_LEMPROVE_STATUSES(SC_X_LP)
#undef SC_X_LP
} sc_lemprove_status;
const char *sc_lemprove_status_name(sc_lemprove_status s);

typedef struct {
  uint32_t lemma;           /* index in the set */
  const char *name;         /* borrowed from the set */
  sc_lemprove_status status;
  char *why;                /* REFUTED: the instance and what breaks;
                               NOT_PROVABLE: the reason; PROVED: NULL */
  uint32_t configs;         /* configurations run */
  uint32_t paths;           /* complete paths run */
  uint32_t typed;           /* of those, paths where the left side is
                               well-typed and the condition YES */
  gboolean layout;          /* a pure layout lemma: values were tried when
                               the typing is PROVED */
  sc_lemprove_status values; /* values (layout and typing PROVED only) */
  char *values_why;         /* as why, for the values */
  uint32_t value_paths;     /* complete paths of the values run */
  uint32_t rank_bound;      /* the bound of the last attempt: R, or above
                               it when the left side was well-typed in no
                               configuration at R (options' max_rank_bound) */
  gboolean untyped;         /* NOT_PROVABLE: well-typed in no configuration */
  gboolean mixed_dtypes;    /* the last attempt gave each tensor variable a
                               dtype of its own (every assignment), after
                               the left side was well-typed in no
                               configuration of one shared dtype at any
                               bound up to max_rank_bound */
} sc_lemprove_result;

typedef struct sc_lemprove_report sc_lemprove_report;

/* Prove every lemma of SET (or those OPTS->only selects).  ORACLE (may be
 * NULL: the normal form alone) is plugged into every symtab made.
 * (transfer full) */
sc_lemprove_report *sc_lemprove_run(const sc_lemma_set *set, const sc_lemprove_options *opts,
                                    const sc_sym_oracle *oracle, void *oracle_user);
void sc_lemprove_report_free(sc_lemprove_report *rep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_lemprove_report, sc_lemprove_report_free)

uint32_t sc_lemprove_report_n(const sc_lemprove_report *rep);
const sc_lemprove_result *sc_lemprove_report_get(const sc_lemprove_report *rep, uint32_t i);
/* Counts by status. */
void sc_lemprove_report_counts(const sc_lemprove_report *rep, uint32_t *proved,
                               uint32_t *refuted, uint32_t *not_provable);
/* Lemmas whose values were tried, and their counts by status. */
void sc_lemprove_report_value_counts(const sc_lemprove_report *rep, uint32_t *tried,
                                     uint32_t *proved, uint32_t *refuted,
                                     uint32_t *not_provable);
/* One line per lemma ("proved  NAME  (rank <= 3: 12 configurations, 14
 * paths)"; a layout lemma's values on a line of their own), then the
 * totals. */
void sc_lemprove_report_text(FILE *out, const sc_lemprove_report *rep);
uint32_t sc_lemprove_report_rank_bound(const sc_lemprove_report *rep);

G_END_DECLS

#endif
