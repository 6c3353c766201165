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
 * changes what is proved: a walk that reaches a limit never refines.
 *
 * A failure that no pending chain explains.  A node N that cannot be
 * mapped (a checked output, or no term to defer) while the first deferred
 * node D's failure is pending, but that reads no deferred relation, fails
 * on its own: D's chain is not in its e-graph.  Whether D is to blame
 * depends on D's chain, not on N: if every node that reads it maps
 * cleanly, D was a step the lemmas could not take where the values agree
 * (a missing lemma the next node absorbs) and N is the first node that
 * fails; if a reader fails, D is.  So N's failure is *held*: the walk goes
 * on, visiting only the nodes that read a live deferred tensor and their
 * unvisited ancestors (the cone, recomputed after each new deferral),
 * never a node that reads a result of N or of a node passed over.  When
 * every chain has settled (defer.c forgets the pending failure), N's
 * failure is the result.  Otherwise (a reader fails, a limit is reached,
 * the budget is spent, or a reader needs a tensor downstream of N) the
 * result is what the walk gave without holding: D's failure, stopped at
 * N.  Shardsmith 27036's mutant: the spec's index_select is deferred
 * (a lemma is missing; the scatter after it maps in the correct bundle
 * and in the mutant), and the duplicated all-reduce makes the
 * independent embedding output fail; the check reported index_select.
 * Only where a failing walk stops changes: the verdict is fails either
 * way, and nothing is proved that was not. */
#include "infer/infer-private.h"

#include <string.h>

struct sc_rel_held {
  gboolean active;
  sc_rel_failure fail; /* the held node's failure (record_failure's) */
  gboolean *blocked;   /* per spec tensor: a result of a failed or passed-over node */
  gboolean *want;      /* per spec node: in the cone of the live deferred tensors */
  uint32_t *pos;       /* per spec node: its position in the topological order */
  GArray *stack;       /* sc_id: scratch of the cone */
};

sc_rel_held *sc_rel_held_new(void) {
  sc_rel_held *h = g_new0(sc_rel_held, 1);
  sc_rel_failure_init(&h->fail);
  return h;
}

void sc_rel_held_free(sc_rel_held *h) {
  if (h == NULL)
    return;
  sc_rel_failure_free(&h->fail);
  g_free(h->blocked);
  g_free(h->want);
  g_free(h->pos);
  if (h->stack)
    g_array_free(h->stack, TRUE);
  g_free(h);
}

gboolean sc_rel_held_active(const sc_rel_ctx *c) {
  return c->held != NULL && c->held->active;
}

gboolean sc_rel_held_may_hold(const sc_rel_ctx *c, const sc_node *n) {
  if (c->held == NULL || !c->pending || c->res->verdict != SC_VERDICT_FAILS)
    return FALSE;
  for (uint32_t i = 0; i < n->n_inputs; i++)
    if (c->defer_depth[n->inputs[i]] > 0)
      return FALSE;
  return TRUE;
}

static void block_results(sc_rel_held *h, const sc_node *n) {
  for (uint32_t k = 0; k < n->n_results; k++)
    if (n->results[k] != SC_ID_NONE)
      h->blocked[n->results[k]] = TRUE;
}

/* The cone after position FROM: the needed consumers of every live
 * deferred tensor that come after FROM, and their needed producers after
 * FROM, transitively. */
static void compute_cone(sc_rel_ctx *c, uint32_t from) {
  sc_rel_held *h = c->held;
  uint32_t nn = sc_graph_n_nodes(c->spec), nt = sc_graph_n_tensors(c->spec);
  memset(h->want, 0, sizeof(gboolean) * (nn ? nn : 1));
  g_array_set_size(h->stack, 0);
  for (sc_id t = 0; t < nt; t++) {
    if (c->live_uses[t] == 0)
      continue;
    const sc_tensor *ten = sc_graph_tensor(c->spec, t);
    for (uint32_t j = 0; j < ten->n_consumers; j++)
      g_array_append_val(h->stack, ten->consumers[j]);
  }
  while (h->stack->len) {
    sc_id w = g_array_index(h->stack, sc_id, h->stack->len - 1);
    g_array_set_size(h->stack, h->stack->len - 1);
    if (!c->need[w] || h->pos[w] <= from || h->want[w])
      continue;
    h->want[w] = TRUE;
    const sc_node *n = sc_graph_node(c->spec, w);
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      sc_id p = sc_graph_tensor(c->spec, n->inputs[i])->producer;
      if (p != SC_ID_NONE)
        g_array_append_val(h->stack, p);
    }
  }
}

void sc_rel_held_begin(sc_rel_ctx *c, sc_id v, const sc_id *out_cls, GArray *unmapped) {
  sc_rel_held *h = c->held;
  const sc_node *n = sc_graph_node(c->spec, v);
  if (!h->active) {
    uint32_t nn = sc_graph_n_nodes(c->spec), nt = sc_graph_n_tensors(c->spec), n_order = 0;
    /* N's failure, recorded as the walk records a first failure, kept
     * aside; the result keeps the pending one, stopped at N */
    sc_rel_failure pending = c->res->failure;
    sc_rel_failure_free(&h->fail);
    sc_rel_failure_init(&c->res->failure);
    sc_rel_record_failure(c, v, out_cls, unmapped, NULL);
    c->res->failure.explored = c->explored_now;
    h->fail = c->res->failure;
    c->res->failure = pending;
    sc_rel_record_stop(c, v, out_cls, unmapped);
    h->blocked = g_new0(gboolean, nt ? nt : 1);
    h->want = g_new0(gboolean, nn ? nn : 1);
    h->pos = g_new0(uint32_t, nn ? nn : 1);
    h->stack = g_array_new(FALSE, FALSE, sizeof(sc_id));
    const sc_id *order = sc_graph_topo_order(c->spec, &n_order);
    for (uint32_t i = 0; i < n_order; i++)
      h->pos[order[i]] = i;
    h->active = TRUE;
  }
  block_results(h, n);
  compute_cone(c, h->pos[v]);
}

void sc_rel_held_deferred(sc_rel_ctx *c, sc_id v) {
  if (sc_rel_held_active(c))
    compute_cone(c, c->held->pos[v]);
}

gboolean sc_rel_held_skip(sc_rel_ctx *c, sc_id v) {
  if (!sc_rel_held_active(c))
    return FALSE;
  sc_rel_held *h = c->held;
  const sc_node *n = sc_graph_node(c->spec, v);
  gboolean skip = !h->want[v];
  for (uint32_t i = 0; i < n->n_inputs && !skip; i++)
    skip = h->blocked[n->inputs[i]];
  if (skip)
    block_results(h, n);
  return skip;
}

gboolean sc_rel_held_settled(sc_rel_ctx *c) {
  if (!sc_rel_held_active(c) || c->pending)
    return FALSE;
  /* defer.c forgot the pending failure: the held one is the result */
  sc_rel_held *h = c->held;
  sc_rel_failure_free(&c->res->failure);
  c->res->failure = h->fail;
  sc_rel_failure_init(&h->fail);
  c->res->verdict = SC_VERDICT_FAILS;
  h->active = FALSE;
  return TRUE;
}

gboolean sc_rel_limit_in_deferred_chain(const sc_rel_ctx *c, const sc_node *n,
                                        const char *limit_hit) {
  if (!limit_hit || !c->pending || c->res->verdict != SC_VERDICT_FAILS)
    return FALSE;
  for (uint32_t i = 0; i < n->n_inputs; i++)
    if (c->defer_depth[n->inputs[i]] > 0)
      return TRUE;
  return FALSE;
}
