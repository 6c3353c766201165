/* localize.c — where a failure is reported when the walk carried deferred
 * relations (defer.c) and then stopped.
 *
 * A deferred node keeps a non-clean relation: its producer applied to its
 * inputs' relations, inlined into every node that reads it.  Each node of
 * a deferred chain therefore holds the whole chain in its e-graph, and a
 * chain that no node absorbs (a partial sum divided by the local count, an
 * average where a sum was due: the spec's value is a constant multiple of
 * a clean one and stays so through the linear nodes that follow) grows
 * until a node of it reaches a resource limit (the e-node limit).  That
 * limit is a consequence of the deferral, not a separate outcome: the
 * first deferred node is still the first spec node the walk could not map,
 * and the chain built on it did not map either.  So a limit reached at a
 * node that reads a deferred relation, while the failure of the first
 * deferred node is pending, ends the walk there with that failure (verdict
 * fails, stopped at the node that reached the limit, the limit kept as
 * the failure's limit reason), as a node of the chain that fails to map
 * does.  A limit anywhere else (a node that reads only clean relations,
 * or the overall budget) is the verdict limit, as before.  Nothing here
 * changes what is proved: a walk that reaches a limit never refines. */
#include "infer/infer-private.h"

gboolean sc_rel_limit_in_deferred_chain(const sc_rel_ctx *c, const sc_node *n,
                                        const char *limit_hit) {
  if (!limit_hit || !c->pending || c->res->verdict != SC_VERDICT_FAILS)
    return FALSE;
  for (uint32_t i = 0; i < n->n_inputs; i++)
    if (c->defer_depth[n->inputs[i]] > 0)
      return TRUE;
  return FALSE;
}
