/* lemcheck.h — the numerical lemma checker behind `shardcheck lemmas
 * check`: every lemma of a set is instantiated with random small shapes
 * and attributes that satisfy its where condition (and that every shape
 * rule of both sides accepts), given random values, and both sides are
 * evaluated by the reference interpreter (interp.h) and compared within a
 * tolerance scaled to the values.
 *
 * The search: candidates are drawn from a seeded RNG (shapes from a shared
 * base shape with perturbations, attributes by their schema type and name:
 * dims, starts and ends around the sizes, permutations, factorizations of
 * a numel for view shapes), steered by the condition's equations
 * (sc_lemma_steer: "?hi == ?lo + size(?w, 0)", "dtype(?x) == i64", ...);
 * a candidate is kept when both sides instantiate and the condition is
 * YES.  A tensor variable whose value range the condition reads
 * (vmin/vmax) is an integer tensor with a drawn range, its values drawn
 * inside; other integer tensors take values that index every dim or, every
 * other pair of trials, values below, inside and above the sizes (masked
 * lookups' masks are exercised; a lemma that holds only where its left
 * side is defined fails).  requires patterns play no part (they only
 * restrict when a lemma fires, never what it claims).
 * Declared operators evaluate through their definition (NAME_unfold); a
 * lemma that needs an operator without an evaluator or definition is
 * "not checkable".  A '?_' of a left side is tried with its default only.
 *
 * Ownership: sc_lemcheck_run returns a new report (sc_lemcheck_report_free)
 * that borrows the set (lemma names); its strings are owned by it. */
#ifndef SHARDCHECK_LEMCHECK_H
#define SHARDCHECK_LEMCHECK_H

#include "shardcheck/interp.h"
#include "shardcheck/lemma.h"

#include <stdio.h>

G_BEGIN_DECLS

typedef struct {
  uint64_t seed;         /* 1 by default */
  uint32_t instances;    /* instances wanted per lemma (24) */
  uint32_t max_trials;   /* candidates drawn per lemma at most (6000) */
  int64_t max_elements;  /* per tensor, 0: the interpreter's default */
} sc_lemcheck_options;

void sc_lemcheck_options_init(sc_lemcheck_options *opts);

#define SC_LEMCHECK_STATUSES(X)                          \
  X(SC_LEMCHECK_PASS, "pass")                            \
  X(SC_LEMCHECK_FAIL, "fail")                            \
  X(SC_LEMCHECK_NO_INSTANCE, "no_instance")              \
  X(SC_LEMCHECK_NOT_CHECKABLE, "not_checkable")
typedef enum {
#define SC_X_LC(sym, word) sym,
  SC_LEMCHECK_STATUSES(SC_X_LC)
#undef SC_X_LC
} sc_lemcheck_status;
const char *sc_lemcheck_status_name(sc_lemcheck_status s);

/* The first failing instance of a lemma. */
typedef struct {
  char *instance;       /* "?a: f32[2, 3], ?b: f32[1, 3], ?d = 0" */
  char *left_type, *right_type; /* "f32[3, 3]" */
  char *index;          /* "[1, 0]", or NULL when the shapes differ */
  double left, right;   /* the two values there */
  char *detail;         /* sc_tcompare_to_string, or the evaluation error */
} sc_lemcheck_failure;

typedef struct {
  uint32_t lemma;       /* index in the set */
  const char *name;     /* borrowed from the set */
  sc_lemcheck_status status;
  uint32_t instances;   /* instances run */
  uint32_t trials;      /* candidates drawn */
  uint32_t n_failed;    /* instances whose sides differ */
  sc_lemcheck_failure failure; /* the first one (n_failed > 0) */
  char *note;           /* NOT_CHECKABLE: why; NO_INSTANCE: the last refusal */
} sc_lemcheck_result;

typedef struct sc_lemcheck_report sc_lemcheck_report;

sc_lemcheck_report *sc_lemcheck_run(const sc_lemma_set *set, const sc_lemcheck_options *opts);
void sc_lemcheck_report_free(sc_lemcheck_report *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_lemcheck_report, sc_lemcheck_report_free)

uint32_t sc_lemcheck_report_n(const sc_lemcheck_report *r);
/* (transfer none) */
const sc_lemcheck_result *sc_lemcheck_report_at(const sc_lemcheck_report *r, uint32_t i);
/* Check one lemma (index in the set) into OUT (clear with
 * sc_lemcheck_result_clear). */
void sc_lemcheck_lemma(const sc_lemma_set *set, uint32_t lemma, const sc_lemcheck_options *opts,
                       sc_lemcheck_result *out);
void sc_lemcheck_result_clear(sc_lemcheck_result *res);
/* Counts over the report. */
void sc_lemcheck_report_counts(const sc_lemcheck_report *r, uint32_t *passed, uint32_t *failed,
                               uint32_t *no_instance, uint32_t *not_checkable);

/* One concrete instance of LEMMA judged by the interpreter (for `lemmas
 * prove`'s value refutations): both sides evaluated on up to four draws of
 * random values (SEED); SC_NO at the first draw where they differ (*DETAIL,
 * transfer full: where), SC_YES when they agree on every draw evaluated,
 * SC_UNKNOWN when a side does not instantiate or cannot be evaluated. */
sc_truth sc_lemcheck_instance(const sc_lemma_set *set, uint32_t lemma,
                              const sc_lemma_instance *inst, uint64_t seed, char **detail);

/* An sc_interp_fallback (interp.h) for the operators declared in lemma
 * files: evaluates a call of OP through its definition (its NS_NAME_unfold
 * lemma in the sc_lemma_set USER), as `lemmas check` does, and copies the
 * value into OUTS[0].  Errors (SC_INTERP_ERROR): NO_EVALUATOR for an
 * operator declared without a definition or with several results, SHAPE
 * when the definition's value does not have the declared type.  Lets
 * `check --validate` run graphs that call custom kernels. */
gboolean sc_lemcheck_eval_declared(void *user, const sc_op *op, const sc_value *args,
                                   sc_tvalue *const *tensors, uint32_t n_tensors,
                                   sc_tvalue **outs, uint32_t n_out, GError **error);

/* Human report: one line per lemma ("ok", "FAIL" with the instance, a
 * "warning:" line for a lemma without instances or not checkable), then a
 * summary line "N lemmas: P passed, F failed, W without instances, C not
 * checkable". */
void sc_lemcheck_report_text(FILE *out, const sc_lemcheck_report *r);
/* {"lemmas": [{"name", "file", "status", "instances", "trials", "failed",
 * "failure": {...} | null, "note"}], "summary": {...}}  (transfer full) */
char *sc_lemcheck_report_json(const sc_lemcheck_report *r, const sc_lemma_set *set);

G_END_DECLS

#endif
