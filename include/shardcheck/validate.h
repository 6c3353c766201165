/* validate.h — `shardcheck check --validate`: after a verdict, run the
 * spec and impl graphs on concrete values related by the input relation
 * and evaluate every relation the check emitted (and every assumed and
 * expected one it relied on); on `fails`, show counterexamples.
 *
 * Inputs.  Symbol values are picked by sc_interp_pick_symbols (small
 * sizes that satisfy every `assume`).  Each spec input gets a random value
 * (a constant when an expression of its entry is a constant such as
 * arange), and every expression of its input_relation entry is solved for
 * its leaves: a bare name takes the value (replicas are copies), the view
 * operators (cat, slice, transpose, permute, view) route each element to
 * the leaf element it comes from, a sum gets random values for every part
 * but the first, which takes the rest.  Elements of impl inputs no
 * relation constrains are random (integer inputs within their declared
 * value range).  The built inputs are checked to satisfy the relation
 * before anything is run.  Spec inputs behind assumptions get random
 * values; an assumed spec tensor that depends on them takes the value of
 * its assumed expression (it cannot be compared).
 *
 * Shape reduction (TrainVerify's) is not implemented: when some tensor has
 * more elements than the interpreter's limit under the picked sizes, the
 * validation is skipped with a note that says so.
 *
 * Ownership: sc_validate_run returns a new result (sc_validation_free)
 * that owns its strings; it borrows nothing after it returns. */
#ifndef SHARDCHECK_VALIDATE_H
#define SHARDCHECK_VALIDATE_H

#include "shardcheck/infer.h"
#include "shardcheck/interp.h"
#include "shardcheck/lemma.h"

#include <stdio.h>

G_BEGIN_DECLS

#define SC_VALIDATE_ERROR (sc_validate_error_quark())
GQuark sc_validate_error_quark(void);
typedef enum {
  SC_VALIDATE_ERROR_UNSOLVABLE, /* the input relation cannot be met by the builder */
  SC_VALIDATE_ERROR_CONFLICT,   /* two relations want different values for one element */
} sc_validate_error;

/* ---- building inputs -------------------------------------------------------- */

/* Values for the spec inputs (SPEC_INPUTS_OUT: sc_graph_n_inputs(spec)
 * entries, in input order) and the impl inputs (IMPL_INPUTS_OUT: likewise
 * for impl), under SYMBOL_VALUES, such that every input_relation
 * expression evaluates to its spec input.  Free both arrays with
 * sc_interp_values_free.  Errors: UNSOLVABLE, CONFLICT, and the
 * interpreter's (LIMIT, SYMBOL...). */
gboolean sc_validate_make_inputs(const sc_bundle *b, const int64_t *symbol_values, sc_rng *rng,
                                 int64_t max_elements, sc_tvalue ***spec_inputs_out,
                                 sc_tvalue ***impl_inputs_out, GError **error);

/* ---- validation ---------------------------------------------------------------- */

typedef struct {
  uint64_t seed;          /* inputs and symbol values (1) */
  int64_t max_elements;   /* per tensor; 0: SC_INTERP_MAX_ELEMENTS or the default */
  int64_t prefer_max;     /* symbol values preferred in [1, prefer_max] (8) */
  const sc_lemma_set *lemmas; /* operators declared there run through their
                               * definitions (sc_lemcheck_eval_declared); may be NULL */
} sc_validate_options;
void sc_validate_options_init(sc_validate_options *opts);

#define SC_VCHECK_KINDS(X)                  \
  X(SC_VCHECK_RELATION, "relation")         \
  X(SC_VCHECK_OUTPUT, "output")             \
  X(SC_VCHECK_EXPECTED, "expected")         \
  X(SC_VCHECK_ASSUMED, "assumed")
typedef enum {
#define SC_X_VK(sym, word) sym,
  SC_VCHECK_KINDS(SC_X_VK)
#undef SC_X_VK
} sc_vcheck_kind;
const char *sc_vcheck_kind_name(sc_vcheck_kind k);

/* One relation evaluated: spec tensor = expression over impl tensors. */
typedef struct {
  sc_vcheck_kind kind;
  char *tensor;        /* spec tensor name */
  char *expr;          /* as emitted / written */
  gboolean evaluated;  /* FALSE: could not be evaluated (detail says why) */
  gboolean holds;
  double max_abs, max_rel;
  char *index;         /* first differing index, or NULL */
  double spec_value, impl_value;
  char *detail;        /* comparison text or the reason it was not evaluated */
} sc_vcheck;

/* The failing spec output next to a candidate over impl tensors. */
typedef struct {
  char *tensor;        /* spec tensor */
  char *node;          /* its spec node, or NULL */
  char *candidate;     /* expression over impl tensors */
  char *source;        /* "nearest term", "expected" */
  gboolean differs;
  char *index;         /* where they differ, or NULL (shapes differ / agree) */
  double spec_value, impl_value;
  char *detail;
} sc_counterexample;

typedef struct {
  gboolean ran;        /* FALSE: skipped, SKIP_REASON says why */
  char *skip_reason;
  uint64_t seed;
  char *symbols;       /* "S = 4, B = 2", "" when there are none */
  uint32_t n_checks;
  sc_vcheck *checks;
  uint32_t n_evaluated, n_failed;
  uint32_t n_failed_assumed; /* of n_failed: assumptions that do not hold */
  double max_abs, max_rel;   /* over the evaluated checks */
  uint32_t n_counterexamples;
  sc_counterexample *counterexamples;
} sc_validation;

/* Validate R (a verdict for B).  Never fails: problems that prevent a
 * validation are a skipped result with the reason. */
sc_validation *sc_validate_run(const sc_bundle *b, const sc_infer_result *r,
                               const sc_validate_options *opts);
void sc_validation_free(sc_validation *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_validation, sc_validation_free)

/* ---- refutation -------------------------------------------------------------- */

/* An expected output relation of B (expect_output_relation: every
 * expression, proved or not) that the values refute: on each of N_RUNS
 * runs (seeds OPTS->seed, OPTS->seed + 1, ...: their own symbol values
 * and inputs, built as for sc_validate_run), the spec tensor's value and
 * the expression's value over the impl tensors were both computed and
 * differ beyond the default tolerance.  Returns a new text ("TENSOR =
 * EXPR differs on N runs (...): COMPARISON") for the first such
 * expression, or NULL: none, no expectations, or a run that could not be
 * made (sizes past the element limit, an operator without an evaluator,
 * inputs the builder cannot solve).  A tensor that depends on spec inputs
 * behind assumptions, an expression that does not evaluate, and values
 * from empty() never refute.  Since an expectation that does not hold
 * cannot be proved (soundness), a refuted one means the check's verdict
 * cannot be refines. */
char *sc_validate_refute_expected(const sc_bundle *b, const sc_validate_options *opts,
                                  uint32_t n_runs);

/* Some emitted, expected or assumed relation does not hold: a soundness
 * bug (exit code SC_EXIT_UNSOUND). */
gboolean sc_validation_unsound(const sc_validation *v);

/* The human section: a summary line "validation: N relations hold ...",
 * a "SOUNDNESS BUG: ..." line per relation that does not hold, a
 * "counterexample: ..." block per counterexample, or "validation skipped:
 * REASON". */
void sc_validation_text(FILE *out, const sc_validation *v);
/* The JSON object {"status": "validated"|"skipped", ...}, compact.
 * (transfer full) */
char *sc_validation_json(const sc_validation *v);

G_END_DECLS

#endif
