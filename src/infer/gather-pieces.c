/* gather-pieces.c — the pieces of a related gather, on widening.  An
 * all-gather's result is the cat of its inputs, the ranks' pieces; when a
 * result is in T_rel but the gather is not explored (its inputs are not
 * related), the pieces stay unrelated, and an impl that computes on the
 * pieces (a rank's local mean, sum or product of its own block, reduced
 * or gathered afterwards, beside the gather the spec's other consumers
 * read) is never explored: the spec node is left unmapped (shardsmith
 * 31289: a mean over the gathered dim, each rank dividing its block's sum
 * by the whole count, then all-reduced; 31180: a product of a gathered
 * operand, computed on the blocks and gathered again).  On widening (a
 * node left unmapped), such gathers join the frontier: their equations
 * put the pieces under the related class, so that the next round relates
 * them and explores their consumers.  Only on failure, like the rest of
 * widening: a node that maps costs what it cost.  Exploration decides
 * what is asserted, never what is proved. */
#include "infer/infer-private.h"

#include <string.h>

/* Is OP an all-gather (a collective whose result is the cat of its
 * inputs: comm.all_gather, _c10d_functional.all_gather_into_tensor)? */
static gboolean is_gather(const sc_op *op) {
  if (!(op->flags & SC_OP_COLLECTIVE))
    return FALSE;
  if (strcmp(op->ns, "comm") == 0)
    return strcmp(op->name, "all_gather") == 0;
  return strcmp(op->ns, "_c10d_functional") == 0 &&
         strcmp(op->name, "all_gather_into_tensor") == 0;
}

guint sc_rel_gather_pieces(sc_rel_ctx *c) {
  /* several ranks' results of one gather may be related: push it once */
  g_autoptr(GHashTable) pushed = g_hash_table_new(g_direct_hash, g_direct_equal);
  uint32_t nt = sc_graph_n_tensors(c->impl);
  for (sc_id t = 0; t < nt; t++) {
    if (c->trel_stamp[t] != c->visit)
      continue;
    sc_id p = sc_graph_tensor(c->impl, t)->producer;
    if (p == SC_ID_NONE || c->node_explored[p] == c->visit ||
        !is_gather(sc_graph_node(c->impl, p)->op) ||
        !g_hash_table_add(pushed, GUINT_TO_POINTER(p + 1)))
      continue;
    g_array_append_val(c->frontier, p);
  }
  return g_hash_table_size(pushed);
}
