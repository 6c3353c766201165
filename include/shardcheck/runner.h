/* runner.h — rewrites and the equality-saturation runner (egg's rewrite.rs
 * and run.rs).
 *
 * A rewrite is a compiled query (lhs + requires patterns, pattern.h), an
 * optional guard over the substitution, and either a right-hand pattern or
 * an applier callback.  The runner repeats iterations of: check limits,
 * search every rule (the e-graph is clean, so searches see a consistent
 * e-graph), apply every match, rebuild.  It stops when an iteration changes
 * nothing (saturated) or at a limit.  Stopping at a limit is a result, not an
 * error.  The justification of a union made by rule i of the array given to
 * sc_runner_run() is i (the proof-forest seam).
 *
 * Schedulers (egg's): SIMPLE applies every match of every rule in every
 * iteration.  BACKOFF gives each rule a match limit (initially match_limit,
 * doubled at each ban); a rule whose search exceeds it is banned for
 * ban_length << times_banned iterations; when only banned rules are left,
 * the bans are fast-forwarded instead of declaring saturation.
 *
 * Semi-naive search: a rule with no guard, no requires and no applier, or
 * one declared pure (sc_rewrite_set_pure), is searched, after its first
 * complete search, only for matches that bind an e-node added or changed
 * since then (older matches were applied already); other rules are always
 * searched in full.  A run given the same rule array as the runner's
 * previous run continues from that run's searches (what changed in
 * between, from outside the runner, is stamped as new); another array
 * starts with complete searches.  A semi-naive search is skipped when no
 * e-node of an operator its patterns bind has changed since.  A rewrite
 * whose left side is a bare variable ?x (constrained by requires) is
 * searched from the first requires pattern that mentions ?x, each match
 * rooted at ?x's class: the same matches, without trying every class.
 *
 * Ownership: sc_rewrite_new*() copy what they need from the patterns;
 * sc_runner_new() borrows the e-graph, which must outlive the runner; the
 * rules passed to sc_runner_run() are borrowed for the call. */
#ifndef SHARDCHECK_RUNNER_H
#define SHARDCHECK_RUNNER_H

#include "shardcheck/budget.h"
#include "shardcheck/pattern.h"

G_BEGIN_DECLS

/* Stop reasons: symbol, word printed. */
#define SC_STOP_REASONS(X)                          \
  X(SC_STOP_NONE, "running")                        \
  X(SC_STOP_SATURATED, "saturated")                 \
  X(SC_STOP_ITERATION_LIMIT, "iteration limit")     \
  X(SC_STOP_NODE_LIMIT, "node limit")               \
  X(SC_STOP_TIME_LIMIT, "time limit")

typedef enum {
#define SC_X_STOP(sym, word) sym,
  SC_STOP_REASONS(SC_X_STOP)
#undef SC_X_STOP
} sc_stop_reason;

const char *sc_stop_reason_name(sc_stop_reason r);

typedef struct sc_rewrite sc_rewrite;

/* The applier: returns the class to union with root (SC_ID_NONE: none); it
 * may also add nodes and union classes itself with justification just. */
typedef sc_id (*sc_applier_fn)(sc_egraph *eg, sc_id root,
                               const uint32_t *subst, uint32_t just,
                               void *user);

/* rhs variables must be bound by lhs or requires.  (transfer full) */
sc_rewrite *sc_rewrite_new(const char *name, const sc_pattern *lhs,
                           const sc_pattern *const *requires,
                           uint32_t n_requires, const sc_pattern *rhs,
                           GError **error);
sc_rewrite *sc_rewrite_new_applier(const char *name, const sc_pattern *lhs,
                                   const sc_pattern *const *requires,
                                   uint32_t n_requires, sc_applier_fn fn,
                                   void *user, GError **error);
void sc_rewrite_set_guard(sc_rewrite *rw, sc_guard_fn guard, void *user);
/* Declares the guard and the applier pure: their answer for a match
 * depends only on the matched classes' analysis data and the bound
 * attributes (deterministically), never on the rest of the e-graph or on
 * earlier calls.  Then semi-naive search is exact for the rule, requires
 * patterns included (a match is new when any node it binds, required
 * ones too, is new). */
void sc_rewrite_set_pure(sc_rewrite *rw, gboolean pure);
void sc_rewrite_free(sc_rewrite *rw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_rewrite, sc_rewrite_free)
const char *sc_rewrite_name(const sc_rewrite *rw);
const sc_query *sc_rewrite_query(const sc_rewrite *rw);
/* Applies one match (root, subst) as the runner does; returns TRUE when a
 * union changed the e-graph.  (With proofs the runner links the exact
 * instance of the left side, rebuilt from the e-nodes it matched; here
 * none are known, so the union links ROOT.) */
gboolean sc_rewrite_apply_one(const sc_rewrite *rw, sc_egraph *eg, sc_id root,
                              const uint32_t *subst, uint32_t just);

typedef enum {
  SC_SCHED_SIMPLE,
  SC_SCHED_BACKOFF,
} sc_scheduler_kind;

typedef struct {
  uint32_t iter_limit;   /* iterations (egg default 30) */
  uint32_t node_limit;   /* live e-nodes (egg default 10,000) */
  double time_limit;     /* CPU seconds of the thread running it (egg's
                            default 5, wall-clock there) */
  sc_scheduler_kind scheduler;
  uint32_t match_limit;  /* backoff: initial per-rule match limit (1000) */
  uint32_t ban_length;   /* backoff: initial ban in iterations (5) */
  sc_budget *budget;     /* the check's overall budget (budget.h), borrowed;
                            NULL: none.  Spent: the run stops at once (time
                            limit, or node limit for --max-enodes). */
} sc_runner_limits;

/* egg's defaults, then the environment overrides SC_ITER_LIMIT,
 * SC_NODE_LIMIT, SC_TIME_LIMIT (seconds) when set to valid numbers.
 * (SC_EGRAPH_CHECK=1 makes every runner run sc_egraph_check() after each
 * rebuild and abort on a broken invariant: for tests.) */
void sc_runner_limits_init(sc_runner_limits *lim);

typedef struct {
  uint64_t applied;     /* unions that changed the e-graph */
  uint64_t matches;     /* matches found by the search phase */
  uint32_t nodes;       /* live e-nodes after the rebuild */
  uint32_t classes;     /* classes after the rebuild */
  uint32_t rebuilt;     /* congruence unions found by the rebuild */
  uint32_t skipped;     /* rules not searched: an operator of theirs is
                           not in the e-graph, so they cannot match */
  double search_s, apply_s, rebuild_s;
} sc_iteration;

typedef struct sc_runner sc_runner;
sc_runner *sc_runner_new(sc_egraph *eg, const sc_runner_limits *lim);
void sc_runner_free(sc_runner *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_runner, sc_runner_free)
/* Runs until a stop reason; the e-graph is clean on return.  A second call
 * continues with fresh limits counted from the call. */
sc_stop_reason sc_runner_run(sc_runner *r, sc_rewrite *const *rules,
                             uint32_t n_rules);
sc_stop_reason sc_runner_stop_reason(const sc_runner *r);
uint32_t sc_runner_n_iterations(const sc_runner *r);
const sc_iteration *sc_runner_iteration(const sc_runner *r, uint32_t i);
double sc_runner_seconds(const sc_runner *r);
/* Per-rule backoff state of the last run (rule index as given). */
uint32_t sc_runner_times_banned(const sc_runner *r, uint32_t rule);

G_END_DECLS

#endif
