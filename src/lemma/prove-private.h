/* prove-private.h — the parts of the shape prover of lemmas for all sizes
 * (lemprove.h, `lemmas prove`) shared between its files:
 *   prove-vars.c   how each variable of a lemma is instantiated: the plan
 *                  of a lemma's variables (what is enumerated, what is a
 *                  symbol), a configuration's instance, its texts;
 *   prove-oblig.c  the typing obligation of one run: both sides' shape
 *                  rules on the run's symbolic types, the condition;
 *   prove-configs.c the configurations of a lemma, those that a part of
 *                  it (a conjunct, a node) makes vacuous for every size
 *                  skipped in bulk;
 *   prove-path.c   path enumeration: the wrapped oracle that turns an
 *                  undecided comparison into a split, one run per path,
 *                  every path of a configuration, the concrete witness;
 *   prove-values.c value equality of layout lemmas: both sides as index
 *                  maps, compared on every path;
 *   prove.c        the driver: configurations of a lemma, the report.
 *
 * A run (prun) is one configuration (a digit per variable, then the dtype)
 * under one path (assumption texts); it owns its symtab, types and values
 * from sc_lp_build_instance to sc_lp_run_clear.  Every string a prun holds is its
 * own. */
#ifndef SC_LEMMA_PROVE_PRIVATE_H
#define SC_LEMMA_PROVE_PRIVATE_H

#include "lemma/lemma-private.h"
#include "shardcheck/lemprove.h"

const ld_checked *sc_lemma_set_checked(const sc_lemma_set *set, uint32_t i);

/* How each variable of a lemma is instantiated */
typedef enum {
  VK_TENSOR,   /* digit: rank 0..R; with per-tensor dtypes, rank +
                  (R + 1) * dtype (sc_lp_rank, sc_lp_dtype) */
  VK_DIM,      /* digit: value in [-R, R) */
  VK_DIMLIST,  /* digit: a list of length 0..R of values in [-R, R) */
  VK_ENUM,     /* digit: value 0..n-1 (loss reduction) */
  VK_SYMINT,   /* a symbol in [-2^40, 2^40] */
  VK_SIZELIST, /* digit: length 0..R, each item a symbol */
  VK_BOOL,     /* digit: FALSE, TRUE */
  VK_BOOLLIST, /* digit: a bool[N] (N <= 8), item i its bit i */
  VK_DTYPE,    /* digit: every dtype */
  VK_FIXED,    /* a fixed value (a float, or a string's default) */
  VK_STRCHOICE, /* digit: a string among its known values, or None */
  VK_SCALAR,   /* digit: a representative Scalar (representative()) */
  VK_PROB,     /* digit: a representative float p (representative()) */
} vkind;

typedef struct {
  vkind kind;
  uint32_t n;        /* choices of its digit (1: no digit) */
  const sc_arg *arg; /* attributes */
} vplan;

/* One run: a configuration and a path */
typedef struct {
  const ld_checked *k;
  const lx *where_sym;       /* the condition of symbolic runs (NULL: none;
                                k->where without Scalar conjuncts) */
  const vplan *plan;
  uint32_t nv, R;
  gboolean mixed;          /* per-tensor dtypes: each tensor's digit carries
                              its dtype, the shared dtype digit is 0 */
  const uint32_t *digit;   /* per var, then the dtype digit at [nv] */
  const sc_sym_oracle *inner;
  void *inner_user;
  GPtrArray *path;         /* char*: assumptions */
  /* per run */
  sc_symtab *st;
  sc_ttype *types;
  sc_value *values;
  char *branch, *branch_neg; /* the first comparison left undecided */
  char *stuck;               /* why the run cannot go on */
  gboolean opaque;           /* stuck on a comparison the oracle leaves
                                undecided over a floor division, modulo,
                                min or max (no assumption text for it) */
  gboolean concrete;         /* a witness run: no symbols */
  const int64_t *cval;       /* witness: a value per symbol, in declaration order */
  GArray *sym_is_size;       /* gboolean per symbol, filled when declaring */
  GHashTable *answers;       /* query key -> 1 + sc_truth: the inner oracle's
                                answers, kept across the lemma's runs (a key
                                is the whole question, context included) */
  uint32_t solver_calls;     /* the lemma's calls of the inner oracle */
  uint32_t runs;             /* the lemma's runs (paths, splits, infeasible) */
  /* values (prove-values.c) */
  const sc_lemma_set *set;
  uint32_t li;               /* the lemma's index in SET */
  gboolean values_mode;      /* runs check values after typing */
  GHashTable *divs;          /* per run: "a|b" -> 1 + the number of the
                                quotient and remainder symbols dq/dm made
                                for a floor division of a by b */
  const sc_lemprove_options *opts;
} prun;

/* What a run ends with */
typedef enum {
  PR_BRANCH,     /* replay with P->branch and its negation */
  PR_STUCK,      /* P->stuck says why */
  PR_INFEASIBLE, /* the path's assumptions contradict each other */
  PR_VACUOUS,    /* the left side is ill-typed, or the condition NO */
  PR_OK,         /* typed, same type */
  PR_BAD,        /* *why: what breaks */
} pres;

/* prove-vars.c.  Plan the variables of lemma LI; NULL with *why when the
 * method does not apply.  MIXED: a dtype per tensor variable (its digit
 * carries it), else one dtype shared by all.  (transfer full) */
vplan *sc_lp_plan_vars(const sc_lemma_set *set, uint32_t li, const ld_checked *k, uint32_t R,
                       gboolean mixed, char **why);
/* The rank and the dtype of tensor variable V in P's configuration. */
uint32_t sc_lp_rank(const prun *P, uint32_t v);
sc_dtype sc_lp_dtype(const prun *P, uint32_t v);
/* The radix of the shared dtype digit (1 with per-tensor dtypes). */
uint32_t sc_lp_dtype_radix(const prun *P);
/* The condition of symbolic runs: K's without its top-level conjuncts
 * that read a Scalar attribute (NULL when none is left); new nodes go to
 * MADE (g_free each). */
const lx *sc_lp_where_without(const ld_checked *k, const vplan *plan, GPtrArray *made);
/* Declare the symbols of the configuration (DECLARE), or build the
 * variables' types and values from them, in a fixed order (which the
 * witness search's values follow).  Returns the number of symbols. */
uint32_t sc_lp_build_instance(prun *P, gboolean declare);
/* The instance ("?x: f32[s0_0], ?e = 9") and the configuration ("?x of
 * rank 1, dtype f32") as text.  (transfer full) */
char *sc_lp_instance_text(prun *P);
char *sc_lp_config_text(prun *P);

/* prove-oblig.c.  The obligation on the current run (symtab, types,
 * values made); *why (transfer full) on PR_BAD. */
pres sc_lp_obligation(prun *P, char **why);
/* Is COND NO under the run, with its negation YES (not an evaluation
 * failure)? */
gboolean sc_lp_cond_excludes(prun *P, const lx *cond);
/* A refusal the method cannot take as "ill-typed": a comparison left
 * undecided, a rule that wants a concrete integer, a computed argument. */
gboolean sc_lp_refusal_is_method(int code, const char *msg);
/* "f32[s0_0, 4]".  (transfer full) */
char *sc_lp_type_text(const sc_ttype *t);

/* The type of P under the run; FALSE with *CODE (an sc_ops_error, or -1:
 * a computed argument) and *MSG (transfer full) when refused. */
gboolean sc_lp_infer(prun *P, const pnode *p, sc_ttype *out, int *code, char **msg);
/* The ev_env lookup of a run (ENV is the prun). */
gboolean sc_lp_run_lookup(void *env, const lx *ref, ev_val *out);

/* prove-values.c.  Is every operator of both sides a layout operator? */
gboolean sc_lp_values_applies(const ld_checked *k);
/* Declare the output index symbols o0..o7 and the division symbols
 * dq0..dq15, dm0..dm15 (after the instance's). */
void sc_lp_declare_index_symbols(prun *P);
/* On a run whose typing obligation holds: do both sides pick the same
 * element at every output index?  *why (transfer full) on PR_BAD. */
pres sc_lp_value_obligation(prun *P, char **why);

/* prove-path.c.  Make POS and NEG (transfer full) the run's branch, or
 * stuck when the path already assumes one of them or is too deep. */
void sc_lp_split_on(prun *P, char *pos, char *neg);
/* Free the run's symtab, types, values and branch. */
void sc_lp_run_clear(prun *P);
/* Every path of the configuration in P->digit.  TRUE to go on with the
 * next configuration; FALSE with R's status and why set. */
gboolean sc_lp_prove_config(prun *P, const sc_lemprove_options *o, sc_lemprove_result *r);
/* Is every path of the configuration in P->digit vacuous because COND (a
 * top-level conjunct of the symbolic condition) is NO with its negation
 * YES, or TERM (a node of a requires, or of a => lemma's left side) is
 * refused for a reason other than the method's, on the empty path
 * without a new solver call? */
gboolean sc_lp_static_vacuous(prun *P, const lx *cond, const pnode *term);

/* prove-configs.c.  The units that prune P's configurations (P's plan and
 * where_sym made), their memo and the odometer's order.  (transfer full) */
typedef struct lp_prune lp_prune;
lp_prune *sc_lp_prune_new(prun *P);
void sc_lp_prune_free(lp_prune *pr);
/* Every configuration of P's lemma until one stops, those a unit proves
 * vacuous skipped; R's status and why set on a stop. */
void sc_lp_run_configs(prun *P, lp_prune *pr, const sc_lemprove_options *o,
                       sc_lemprove_result *r);

#endif
