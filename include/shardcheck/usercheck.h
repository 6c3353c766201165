/* usercheck.h — user lemmas are checked before they may prove anything,
 * and operators declared without a definition are reported as assumptions.
 *
 * `check --lemmas DIR` loads the user's lemma files; before the check
 * runs, every lemma they hold (an operator definition's NAME_unfold lemma
 * included) is evaluated on random instances by the lemma checker
 * (lemcheck.h).  A lemma whose sides differ on an instance stops the check
 * (exit 2) naming the lemma, its file and line and the instance.  Passes
 * are cached (lemma-cache.h) under the lemma's text, every operator
 * definition and declaration of the set, and the checker's options.
 *
 * An operator declared without a definition (opaque: no NAME_unfold) has
 * no evaluator: lemmas about it cannot be checked and are assumptions, as
 * is the operator's declared shape rule.  sc_usercheck_opaque lists such
 * operators with what relies on them, for the report.
 *
 * Ownership: results are new (the GPtrArrays free their elements). */
#ifndef SHARDCHECK_USERCHECK_H
#define SHARDCHECK_USERCHECK_H

#include "shardcheck/lemcheck.h"
#include "shardcheck/report.h"

G_BEGIN_DECLS

/* Checks lemmas FIRST.. of SET (the user's: those loaded after the
 * built-in files).  FALSE with an SC_LEMMA_ERROR (code SC_LEMMA_ERROR_TYPE)
 * on the first failing lemma.  Lemmas that cannot be checked (an opaque
 * operator) or found no instance are appended to UNCHECKED (char*:
 * "NAME (FILE:LINE): not checkable: ..."), may be NULL.  *CACHED (may be
 * NULL): how many passes came from the cache. */
gboolean sc_usercheck_lemmas(const sc_lemma_set *set, uint32_t first,
                             const sc_lemcheck_options *opts, GPtrArray *unchecked,
                             uint32_t *cached, GError **error);

/* The opaque operators of SET that matter to this check: every one the
 * user's files declare (found in USER_DIRS, may be NULL) or that lemmas
 * FIRST.. mention, whether used or not, and any other one a graph node of B
 * calls.  For each: where it is declared (the user's dirs, then the
 * built-in lemma directory), the lemmas that mention it
 * (unchecked), and the output relations of R that rely on it (a spec node
 * or an impl node upstream calls it, or the relation names it).  R may be
 * NULL (no relations yet).  (transfer full: free with
 * sc_usercheck_opaque_free) */
GArray *sc_usercheck_opaque(const sc_lemma_set *set, uint32_t first, char **user_dirs,
                            const sc_bundle *b, const sc_infer_result *r);
void sc_usercheck_opaque_free(GArray *ops);

G_END_DECLS

#endif
