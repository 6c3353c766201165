/* refuted.c — a limit the values refute is a failure (infer.h,
 * sc_infer_result_refute_limit).
 *
 * A walk that stops at a limit at spec node X says only that the search
 * at X did not finish.  When the bundle's expected output relation is
 * refuted by the values (validate.h, sc_validate_refute_expected: both
 * graphs run on related inputs, an expected expression differs from its
 * spec output on every run), no complete search could have proved the
 * program: an expectation that does not hold is never found (a proof of
 * it would be a false proof), so the verdict of any walk with more budget
 * would be fails (at X or at a later node, or for the missing
 * expectation).  The verdict is then fails, at X, where the walk
 * stopped, with the limit kept as the failure's limit reason and the
 * refutation as its evidence.  A correct program's expectations hold on
 * every run, so its limit stays a limit.  Nothing here changes what is
 * proved. */
#include "infer/infer-private.h"

gboolean sc_infer_result_refute_limit(sc_infer_result *r, const char *refutation) {
  if (r == NULL || refutation == NULL || r->verdict != SC_VERDICT_LIMIT ||
      r->failure.kind != SC_FAILURE_UNMAPPED || r->failure.node == SC_ID_NONE)
    return FALSE;
  r->verdict = SC_VERDICT_FAILS;
  g_free(r->failure.refuted);
  r->failure.refuted = g_strdup(refutation);
  return TRUE;
}

const char *sc_infer_refutation(const sc_infer_result *r) { return r->failure.refuted; }
