/* diagnose.h — "not proved" told apart from "the values differ" when a
 * check fails at an unmapped spec node.
 *
 * A failure says that no proof was found, not that the impl is wrong.  The
 * diagnosis runs both graphs on concrete inputs related by the input
 * relation (validate.h, sc_validate_make_inputs; the reference
 * interpreter, small sizes for symbols) and searches for a clean
 * expression over impl tensors whose values equal the failing spec
 * tensor's (the first unmapped output of the failing node):
 *   - an impl tensor;                      X
 *   - equal chunks along one dim, each an impl tensor or an aligned
 *     chunk of a larger one;               cat(X1, slice(X2, ...), ..., dim=d)
 *   - a chunk of a larger impl tensor;     slice(X, dim=d, start=s, end=e)
 *   - one same-shaped tensor per rank;     sum(X0, ..., Xn-1)
 *   - a view of an impl tensor;            view(X, shape=[...])
 *   - one tensor per rank of as many
 *     elements, viewed;                    sum(view(X0, shape=[...]), ...)
 * over impl *outputs* when the spec tensor is a checked output (a relation
 * over intermediates does not make the impl return it), over every impl
 * tensor otherwise.  When the bundle states expectations for the tensor
 * (expect_output_relation), they say what is right: only an expected
 * expression whose values match makes it NOT_PROVED (another match is
 * named in the detail of VALUES_DIFFER).  Each candidate found is parsed as a clean relation
 * and evaluated again by the interpreter before it is reported.
 *
 *   NOT_PROVED: an expression matches, and still matches on two more runs
 *     (other seeds, floating inputs scaled by 16 and by 1/16 when the input
 *     relation survives the scaling): the model computes the right values
 *     on these inputs and shardcheck lacks the step (a lemma is probably
 *     missing).  Evidence from random runs, not a proof.  A match that a
 *     confirmation run breaks is VALUES_DIFFER on that run.
 *   VALUES_DIFFER: none of the forms matches: the failing node is the first
 *     spec node (in the walk's order) whose values no clean expression
 *     tried reproduces, with a counterexample against the closest
 *     candidate (an expected expression, else a same-shaped impl tensor).
 *   When the failing node is NOT_PROVED and the walk went on with deferred
 *   relations to a later node where it stopped, that node is diagnosed too;
 *   if its values differ, the diagnosis is VALUES_DIFFER there (the first
 *   diverging node), naming the earlier node that was only not proved.
 *   SKIPPED: the graphs could not be run (sizes past the element limit,
 *     an operator without an evaluator, inputs the builder cannot solve,
 *     assumptions it cannot honour); REASON says which.
 * The verdict is not changed: nothing was proved either way.
 *
 * Ownership: sc_diagnose returns a new diagnosis (sc_diagnosis_free) that
 * owns its strings and borrows nothing after it returns. */
#ifndef SHARDCHECK_DIAGNOSE_H
#define SHARDCHECK_DIAGNOSE_H

#include "shardcheck/infer.h"
#include "shardcheck/lemma.h"

G_BEGIN_DECLS

#define SC_DIAGNOSIS_KINDS(X)                      \
  X(SC_DIAGNOSIS_NOT_PROVED, "not_proved")         \
  X(SC_DIAGNOSIS_VALUES_DIFFER, "values_differ")   \
  X(SC_DIAGNOSIS_SKIPPED, "skipped")
typedef enum {
#define SC_X_DIAG(sym, word) sym,
  SC_DIAGNOSIS_KINDS(SC_X_DIAG)
#undef SC_X_DIAG
} sc_diagnosis_kind;
const char *sc_diagnosis_kind_name(sc_diagnosis_kind k);

typedef struct {
  sc_diagnosis_kind kind;
  char *tensor;      /* the spec tensor diagnosed */
  char *node;        /* its spec node */
  char *expression;  /* NOT_PROVED: the clean expression its values agree
                        with (impl names as the bundle writes them) */
  /* VALUES_DIFFER: the counterexample (candidate may be NULL when the spec
   * tensor has no candidate of its shape at all) */
  char *candidate;
  char *index;       /* first differing coordinates, "[0, 1]", or NULL */
  double spec_value, impl_value;
  char *detail;      /* the comparison, or what was searched */
  /* VALUES_DIFFER without expectations: the split into PARTIAL_CHUNKS
   * equal chunks of PARTIAL_LEN along PARTIAL_DIM where the most chunks
   * are impl tensors: PARTIAL_TENSORS[j] names chunk j's, NULL for a chunk
   * that matches none (INDEX is the first element of the first such);
   * PARTIAL_TENSORS is NULL when no split has a matching chunk */
  uint32_t partial_dim, partial_chunks;
  int64_t partial_len;
  char **partial_tensors;
  char *other_match; /* VALUES_DIFFER with expectations: a clean expression
                        the values do agree with, not the one expected; or NULL */
  char *reason;      /* SKIPPED: why */
  uint64_t seed;
  char *symbols;     /* the symbol values used, "" when none */
  /* VALUES_DIFFER where the walk stopped, after a failing node that was
   * not proved (its relation deferred, docs/architecture.md): that node and
   * the expression its values agree with; else NULL */
  char *not_proved_node;
  char *not_proved_expression;
  uint32_t candidates_tried;
  uint32_t confirmations; /* NOT_PROVED: further runs (other seeds, inputs
                             scaled by 16 and 1/16) where it held too */
} sc_diagnosis;

typedef struct {
  uint64_t seed;                /* the inputs (1) */
  int64_t max_elements;         /* per tensor (2^20): larger graphs are skipped */
  const sc_lemma_set *lemmas;   /* custom operators run through their definitions; may be NULL */
} sc_diagnose_options;
void sc_diagnose_options_init(sc_diagnose_options *opts);

/* The diagnosis of R's failure, or NULL when R is not a failure of kind
 * UNMAPPED (verdict FAILS) with an unmapped output. */
sc_diagnosis *sc_diagnose(const sc_bundle *b, const sc_infer_result *r,
                          const sc_diagnose_options *opts);
void sc_diagnosis_free(sc_diagnosis *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_diagnosis, sc_diagnosis_free)

G_END_DECLS

#endif
