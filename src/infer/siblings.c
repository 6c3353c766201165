/* siblings.c — collectives over the same inputs.  Two collective nodes
 * that read the same tensors in the same order compute functions of one
 * list of values: on a 2-D mesh one group's partial sums are both
 * all-reduced (the rank that needs the whole sum) and reduce-scattered
 * (the next operator split over the rows), so a scatter piece is a slice
 * of the all-reduce and the all-reduce the cat of the pieces (shardsmith
 * 20003).  A relation that names the all-reduce alone leaves the pieces
 * unrelated: their inputs are never related, so neither collective is
 * explored and the products of the pieces never join.  When a result of
 * such a collective joins T_rel, the collective and its siblings are
 * explored (trel.c): their equations over the shared inputs' leaves put
 * every result in the class the semantics give it.  Exploration only
 * decides what is asserted, never what is proved; a collective with no
 * sibling (most all-reduces of the real captures) costs one scan of its first
 * input's consumers. */
#include "infer/infer-private.h"

/* Do nodes A and B read the same tensors in the same order? */
static gboolean same_inputs(const sc_node *a, const sc_node *b) {
  if (a->n_inputs != b->n_inputs)
    return FALSE;
  for (uint32_t i = 0; i < a->n_inputs; i++)
    if (a->inputs[i] != b->inputs[i])
      return FALSE;
  return TRUE;
}

sc_id sc_rel_collective_sibling(const sc_rel_ctx *c, sc_id p, uint32_t *cursor) {
  const sc_node *n = sc_graph_node(c->impl, p);
  if (!(n->op->flags & SC_OP_COLLECTIVE) || n->n_inputs == 0)
    return SC_ID_NONE;
  const sc_tensor *first = sc_graph_tensor(c->impl, n->inputs[0]);
  while (*cursor < first->n_consumers) {
    sc_id w = first->consumers[(*cursor)++];
    const sc_node *m = sc_graph_node(c->impl, w);
    if (w != p && (m->op->flags & SC_OP_COLLECTIVE) && same_inputs(n, m))
      return w;
  }
  return SC_ID_NONE;
}
