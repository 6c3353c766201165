/* infer.h — relation inference: GraphGuard's refinement check (Listings
 * 1-3 of the paper) over a loaded bundle.
 *
 * The driver walks the spec graph in topological order (file order when
 * ready), restricted to the ancestors of the checked outputs.  For each
 * spec node it builds a fresh, small e-graph (lang.h):
 *   1. each input's known expressions over impl tensors (the relation R so
 *      far), unioned into one class per input — they are all equal;
 *   2. the node applied to those classes (one e-node per result);
 *   3. equality saturation with the lemmas;
 *   4. exploration of the impl graph from the related impl tensors T_rel
 *      outwards (Listing 3): an impl node joins when all its inputs are in
 *      T_rel, asserting leaf(out) = op(leaves of its inputs) (collectives
 *      by their semantics: all_reduce = sum, all_gather = cat, ...); after
 *      each round of saturation, impl tensors that occur in a clean term of
 *      the node's outputs join T_rel; repeated until nothing new joins;
 *   5. the clean terms of each output class (smallest first, at most
 *      max_terms) become the output's relation.
 * The first spec node with an output that found no clean term stops the
 * check (verdict FAILS, kind UNMAPPED), unless a resource limit was hit on
 * the way (verdict LIMIT).  At the end, the relation of each spec output
 * restricted to impl *outputs* is the output relation; expected
 * expressions (expect_output_relation) are proved equal inside their
 * node's e-graph, and one that is not makes the verdict FAILS with kind
 * UNEXPECTED_RELATION.
 *
 * Ownership: sc_infer_run returns a new result (sc_infer_result_free) that
 * borrows the bundle (names, graphs), which must outlive it.  Strings
 * returned by accessors are owned by the result. */
#ifndef SHARDCHECK_INFER_H
#define SHARDCHECK_INFER_H

#include "shardcheck/bundle.h"
#include "shardcheck/lang.h"
#include "shardcheck/lemma.h"
#include "shardcheck/runner.h"

G_BEGIN_DECLS

#define SC_INFER_ERROR (sc_infer_error_quark())
GQuark sc_infer_error_quark(void);
typedef enum {
  SC_INFER_ERROR_RULES,    /* the rules could not be compiled */
  SC_INFER_ERROR_INTERNAL, /* an unsound lemma or a bug: message says which */
} sc_infer_error;

/* Progress: called before each spec node (done of total). */
typedef void (*sc_infer_progress_fn)(uint32_t done, uint32_t total,
                                     const char *node_name, void *user);

typedef struct {
  const sc_lemma_set *lemmas;     /* compiled against each node's e-graph */
  sc_runner_limits limits;       /* per saturation run */
  uint32_t max_terms;            /* clean terms kept per spec tensor (24) */
  uint32_t max_term_size;        /* largest term enumerated (64; 16 per rank
                                    when the impl has more than 4 ranks) */
  uint32_t max_rounds;           /* exploration rounds per node (64) */
  gboolean explain;              /* record per-node explanations, and
                                    the chain of each output relation */
  gboolean explain_all;          /* with explain: chains for the relations
                                    of every visited node too */
  uint32_t explain_max_steps;    /* steps kept per chain (40) */
  sc_infer_progress_fn progress;
  void *progress_user;
  gboolean no_memo;              /* prove every spec node, none carried by
                                    isomorphism from an earlier one (memo.c) */
  uint32_t jobs;                 /* threads proving spec nodes (0 or 1: the
                                    walk's own only); results are the same
                                    for every value (schedule.h) */
} sc_infer_options;

/* Defaults (sc_runner_limits_init for the limits, env overrides). */
void sc_infer_options_init(sc_infer_options *opts);

#define SC_VERDICTS(X)                 \
  X(SC_VERDICT_REFINES, "refines")     \
  X(SC_VERDICT_FAILS, "fails")         \
  X(SC_VERDICT_ERROR, "error")         \
  X(SC_VERDICT_LIMIT, "limit")
typedef enum {
#define SC_X_VERDICT(sym, word) sym,
  SC_VERDICTS(SC_X_VERDICT)
#undef SC_X_VERDICT
} sc_verdict;
const char *sc_verdict_name(sc_verdict v);

#define SC_FAILURE_KINDS(X)                              \
  X(SC_FAILURE_NONE, "none")                             \
  X(SC_FAILURE_UNMAPPED, "unmapped")                     \
  X(SC_FAILURE_UNEXPECTED_RELATION, "unexpected_relation")
typedef enum {
#define SC_X_FAILURE(sym, word) sym,
  SC_FAILURE_KINDS(SC_X_FAILURE)
#undef SC_X_FAILURE
} sc_failure_kind;
const char *sc_failure_kind_name(sc_failure_kind k);

typedef struct sc_infer_result sc_infer_result;

/* The operators the driver adds to a check's e-graphs itself, beyond
 * those of the bundle: MET[op->id] set for each (MET has sc_ops_count()
 * entries).  A lemma whose left side needs an operator neither the bundle
 * nor this set (nor another selected lemma) provides can never fire, so
 * `check` parses only the others (cli/select.c). */
void sc_infer_mark_driver_ops(gboolean *met);

/* Runs the check.  FALSE only for errors that prevent a verdict (rules
 * that do not compile, an internal error such as an unsound lemma caught
 * by the shape analysis); a failed refinement is a result, not an error. */
sc_infer_result *sc_infer_run(const sc_bundle *b, const sc_infer_options *opts,
                              GError **error);
void sc_infer_result_free(sc_infer_result *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_infer_result, sc_infer_result_free)

sc_verdict sc_infer_verdict(const sc_infer_result *r);

/* The relation found for spec tensor T (any visited tensor, not only
 * outputs): clean expressions over impl tensors, smallest first.  NULL
 * when none was found or T was not reached.  For the output relation use
 * sc_infer_output_exprs, which keeps only expressions over impl outputs. */
const GPtrArray *sc_infer_tensor_exprs(const sc_infer_result *r, sc_id t); /* of char* */
/* The relation a deferred spec tensor was given instead of a clean one
 * (its smallest expressions over impl tensors with any operator; see
 * docs/architecture.md, "Deferral"), as char*; NULL when T was not
 * deferred. */
const GPtrArray *sc_infer_tensor_deferred_exprs(const sc_infer_result *r, sc_id t);
const GPtrArray *sc_infer_output_exprs(const sc_infer_result *r, sc_id t); /* of char* */
/* The spec outputs asked about (check_outputs, else all), in order,
 * without repeats. */
uint32_t sc_infer_n_checked(const sc_infer_result *r);
sc_id sc_infer_checked(const sc_infer_result *r, uint32_t i);

/* Failure (verdict FAILS or LIMIT). */
sc_failure_kind sc_infer_failure_kind(const sc_infer_result *r);
sc_id sc_infer_failure_node(const sc_infer_result *r);      /* spec node */
/* The node's outputs that found no clean expression (spec tensor ids). */
const GArray *sc_infer_failure_unmapped(const sc_infer_result *r);
/* The closest non-clean terms of the first unmapped output (char*). */
const GPtrArray *sc_infer_failure_nearest(const sc_infer_result *r);
uint32_t sc_infer_failure_explored(const sc_infer_result *r); /* impl nodes */
/* When the failing node was deferred (its outputs kept non-clean
 * relations and the walk went on, see docs/architecture.md), the spec
 * node where the walk finally stopped, and the nearest terms of its first
 * unmapped output (char*); SC_ID_NONE and empty when the walk stopped at
 * the failing node itself or mapped every checked output. */
sc_id sc_infer_failure_stop_node(const sc_infer_result *r);
const GPtrArray *sc_infer_failure_stop_nearest(const sc_infer_result *r);
/* Lemmas whose side conditions could not be decided at the failing node
 * (neither the normal form nor cvc5 could answer; the lemma did not
 * fire): "NAME (FILE:LINE): its condition was undecided N times: where
 * COND; undecided: A < B, ..." (the condition as written, then its
 * comparisons that were UNKNOWN the first time, instantiated).  A failure
 * with entries here may be a limit of the prover, not a bug. */
const GPtrArray *sc_infer_failure_undecided(const sc_infer_result *r); /* char* */
/* Sizes learned during the walk: a data-dependent operator's results (ops.h,
 * SC_OP_DATA_DEPENDENT: nonzero's u0) proved equal make their size symbols
 * equal, "u0 == r0.u0 (aten.nonzero.default results proved equal at spec
 * node 'nonzero')", in the order learned.  They are added to the bundle's
 * symtab as assumptions (derived, not trusted: each follows from the
 * relations proved so far).  (char*, owned by the result) */
const GPtrArray *sc_infer_learned_sizes(const sc_infer_result *r);
/* When the failing node's unmapped output is a checked output that has
 * clean relations, but none over impl outputs (every node maps, the
 * output only through impl intermediates: a gradient reduced over the
 * wrong group, a result left on a rank that does not return it), those
 * relations (char*), as bundle-format.md's found_over_intermediates;
 * empty otherwise. */
const GPtrArray *sc_infer_failure_found_over_intermediates(const sc_infer_result *r);
/* LIMIT: which limit ("node limit", ...). */
const char *sc_infer_limit_reason(const sc_infer_result *r);
/* R stopped at a limit at an unmapped spec node (verdict LIMIT, failure
 * kind UNMAPPED) and REFUTATION says why no walk can prove it (an expected
 * output relation the values refute, validate.h
 * sc_validate_refute_expected): the verdict becomes FAILS at that node,
 * the limit kept as sc_infer_limit_reason, the text as
 * sc_infer_refutation.  Returns whether it did (refuted.c). */
gboolean sc_infer_result_refute_limit(sc_infer_result *r, const char *refutation);
/* FAILS after sc_infer_result_refute_limit: the refutation; else NULL. */
const char *sc_infer_refutation(const sc_infer_result *r);

/* Value-range assumptions the proof used (lang.h, "value ranges"): facts
 * the driver assumed rather than read from the bundle or derived from the
 * spec (aten.index's integer ids are non-negative: a negative id would
 * wrap), each listed once when a lemma whose condition read it fired, in
 * the order first used.  Declared and derived ranges need no entry.
 * Random operators (SC_OP_RANDOM, native_dropout) that got a relation add
 * one entry each too: their random decision is assumed to follow the
 * element (tensor: the node's first related result, used_by: "relations
 * of R1, R2 at NODE"). */
typedef struct {
  char *text;          /* "primals_18 >= 0, ids of aten.index at layers.py:260;
                          negative ids would wrap" */
  const char *tensor;  /* the spec tensor it is about (a graph input when
                          the ids are one through identities and views) */
  const char *node;    /* the spec node whose use makes the assumption */
  char *used_by;       /* "vp_entry_index at index, ...": lemma at spec node */
} sc_infer_assumption;
uint32_t sc_infer_n_assumptions(const sc_infer_result *r);
/* (transfer none: owned by the result; names borrow from the bundle) */
const sc_infer_assumption *sc_infer_assumption_at(const sc_infer_result *r, uint32_t i);

/* Expectations (expect_output_relation), in file order. */
typedef struct {
  sc_id tensor;
  const char *text;  /* as written */
  gboolean found;    /* proved equal to the spec tensor */
  gboolean decided;  /* a visit decided it: its producer's, or a given output's own */
} sc_infer_expectation;
uint32_t sc_infer_n_expectations(const sc_infer_result *r);
const sc_infer_expectation *sc_infer_expectation_at(const sc_infer_result *r, uint32_t i);
/* The first expectation not found, in walking order (the one a failure of
 * kind UNEXPECTED_RELATION is about), or NULL when every one was found. */
const sc_infer_expectation *sc_infer_first_unfound_expectation(const sc_infer_result *r);

/* With opts->explain: one line per visited spec node, in visiting order:
 * "NAME (OP): lemmas L1 xN, L2 xM; impl nodes W1, W2" — the lemmas that
 * changed the node's e-graph and the impl nodes asserted into it, the
 * facts its relation was derived from (not a minimal proof).  Empty
 * otherwise.  (char*, owned by the result) */
const GPtrArray *sc_infer_explanations(const sc_infer_result *r);

/* With opts->explain: why each output relation holds (egg's flat
 * explanations, docs/egraph.md): for each relation "T = E" emitted for a
 * checked output T (and, with explain_all, the first relation of each
 * result of every visited node), the chain of whole terms from T's spec
 * node applied to its inputs (START, as written) to E, each step
 * rewriting one position by one fact: a lemma application, an input or
 * earlier relation, an impl node asserted (a collective by its
 * semantics), lang's canonical form of the spec call, or sums regrouped
 * as multisets.  Congruence is expanded: its steps rewrite arguments in
 * place.  At most explain_max_steps steps are kept; TOTAL_STEPS counts
 * the whole chain.  In visiting order.  Strings are owned by the result. */
typedef struct {
  const char *term;   /* the whole term after this step */
  const char *reason; /* why it equals the previous one */
} sc_relation_step;

typedef struct {
  sc_id node;          /* the spec node whose e-graph proved it */
  sc_id tensor;        /* the spec tensor related (a result of node) */
  gboolean output;     /* an output relation (else an explain_all one) */
  const char *relation;/* the expression, as reported */
  const char *start;   /* the spec node's call as written, "mm(g, w2)" */
  uint32_t n_steps;
  const sc_relation_step *steps;
  uint64_t total_steps;/* of the whole chain: > n_steps when capped */
} sc_relation_explanation;

uint32_t sc_infer_n_relation_explanations(const sc_infer_result *r);
const sc_relation_explanation *sc_infer_relation_explanation(const sc_infer_result *r,
                                                             uint32_t i);

typedef struct {
  uint32_t spec_nodes;          /* in the spec graph */
  uint32_t impl_nodes;
  uint32_t visited;             /* spec nodes checked */
  uint32_t explored;            /* impl nodes added to e-graphs, summed */
  uint64_t enodes;              /* e-nodes at the end of each node, summed */
  uint32_t max_enodes;          /* the largest per-node e-graph */
  uint64_t applied;             /* lemma applications that changed an e-graph */
  double seconds;
  double slowest_seconds;       /* the slowest spec node */
  sc_id slowest_node;
  uint32_t carried;             /* visited nodes carried by memoization */
} sc_infer_stats;
const sc_infer_stats *sc_infer_get_stats(const sc_infer_result *r);

/* Layer memoization (docs/architecture.md, "Layer memoization"): spec
 * nodes whose relations were carried from an earlier, proved node by an
 * exact isomorphism (the same operator, arguments and types, the input
 * relations equal under a renaming of impl tensors, and every impl node
 * and replica equality the proof asserted mapped by that renaming onto an
 * impl node or equality of the same kind, with nothing more for the
 * exploration to find), grouped in blocks: visited nodes FIRST..LAST (in
 * visiting order, N of them) carried node by node after FROM_FIRST..
 * FROM_LAST, the nodes in the same roles at one distance earlier in the
 * visiting order (the same layer one repetition earlier), which were
 * proved or carried themselves (sc_infer_carried_from names the proved
 * node each was carried from).  In visiting order; none with
 * opts->no_memo or opts->explain. */
typedef struct {
  sc_id first, last;            /* spec nodes */
  sc_id from_first, from_last;  /* spec nodes visited before, in the same roles */
  uint32_t n_nodes;
} sc_infer_carried_block;
uint32_t sc_infer_n_carried_blocks(const sc_infer_result *r);
const sc_infer_carried_block *sc_infer_carried_block_at(const sc_infer_result *r, uint32_t i);
/* The node whose proof spec node V's relations were carried from, or
 * SC_ID_NONE when V was proved (or not visited). */
sc_id sc_infer_carried_from(const sc_infer_result *r, sc_id v);

G_END_DECLS

#endif
