/* rewrite-private.h — what the runner needs from a rewrite beyond its
 * public interface (src/egraph/ only). */
#ifndef SC_REWRITE_PRIVATE_H
#define SC_REWRITE_PRIVATE_H

#include "shardcheck/runner.h"
#include "pattern-private.h"

/* Searches with the rewrite's guard; appends matches of width
 * sc_rewrite_match_width() to out.  since > 0 asks for the matches new
 * since that epoch only; it is ignored (full search) unless the rewrite is
 * incremental. */
uint64_t sc_rewrite_search(const sc_rewrite *rw, const sc_egraph *eg,
                           uint64_t limit, GArray *out, uint32_t since);
/* The same with the changed-classes cone of since (sc_query_search_near;
 * NULL: none): the same matches, fewer root classes tried. */
uint64_t sc_rewrite_search_near(const sc_rewrite *rw, const sc_egraph *eg,
                                uint64_t limit, GArray *out, uint32_t since,
                                const uint8_t *near);
/* A purely syntactic rewrite (no guard, requires or applier, lhs rooted at
 * an operator), or one declared pure (sc_rewrite_set_pure): a match whose
 * nodes all predate its last complete search was found and applied then,
 * so semi-naive search is exact for it. */
gboolean sc_rewrite_is_incremental(const sc_rewrite *rw);
/* Are all the operators its patterns bind (lhs and requires) present in
 * EG?  When one is absent no search can find a match; since operators
 * never leave an e-graph, the answer only changes when sc_eg_n_ops does. */
gboolean sc_rewrite_ops_present(const sc_rewrite *rw, const sc_egraph *eg);
/* 1 + query variables (+ the lhs e-nodes when the e-graph keeps proofs). */
uint32_t sc_rewrite_match_width(const sc_rewrite *rw, const sc_egraph *eg);
/* Applies one match as found by sc_rewrite_search (root, subst, and with
 * proofs the matched e-nodes: the union then links the exact instances of
 * both sides). */
gboolean sc_rewrite_apply_match(const sc_rewrite *rw, sc_egraph *eg,
                                const uint32_t *match, uint32_t just);

/* A cache hint for applying (root, subst) soon; stage 0 then 1. */
void sc_rewrite_prefetch(const sc_rewrite *rw, const sc_egraph *eg,
                         const uint32_t *subst, int stage);

#endif
