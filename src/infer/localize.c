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
 * way, and nothing is proved that was not.
 *
 * A deferred node that is a broadcast sum.  A node deferred because its
 * value is an impl tensor plus the broadcast of another impl tensor (2 to
 * 8 copies, along any dims), possibly as a part of a cat or slice of
 * impl tensors, is clean up to the copies of the broadcast operand:
 * add(a, b) = sum(a, cat(b, ..., b)), a clean relation although the
 * e-graph holds only add.Tensor's implicit broadcast (the lemmas turn an
 * add of one shape into a sum, not a broadcast one).  Such a node is not
 * where the program diverges: attention's scores plus a mask or bias that
 * the impl computes on wrong scores (a swapped gather, a duplicated
 * all-reduce) has the spec's value in no impl tensor, but the spec's
 * scores are an impl tensor and the bias another, so the first node whose
 * value no clean form holds is the softmax after it (shardsmith 31488,
 * 31525; the value search's "impl tensor plus copies of another").  A
 * sum of partials plus a bias is not excused (a bias added on every rank
 * diverges there), nor a cat of ranks' pieces plus a bias (the value
 * search names no such sum).  Its failure is recorded as the pending one
 * but *excused*: a later deferral that is not excused, or a later node
 * that fails, takes its place; it is reported only when nothing later
 * replaced it (a limit in its chain).  Only where a failing walk stops
 * changes. */
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

/* The largest number of copies a broadcast operand may stand for (as
 * expand-copies.c's bound: a cat of at most 8 copies). */
#define MAX_BROADCAST_COPIES 8

typedef struct {
  const sc_lang *lang;
  const sc_op *add, *view; /* aten.add.Tensor, sc.view */
  int32_t alpha;
} bsum_ctx;

/* How many copies of operand shape B make result shape R by broadcasting
 * (numpy rules, concrete dims), or 0 when B does not broadcast to R. */
static uint64_t broadcast_copies(const sc_shape *b, const sc_shape *r) {
  if (b->rank > r->rank)
    return 0;
  uint64_t copies = 1;
  for (uint32_t i = 0; i < r->rank; i++) {
    sc_dim rd = r->dims[r->rank - 1 - i];
    if (!sc_dim_is_const(rd))
      return 0;
    if (i < b->rank) {
      sc_dim bd = b->dims[b->rank - 1 - i];
      if (!sc_dim_is_const(bd))
        return 0;
      if (bd.value == rd.value)
        continue;
      if (bd.value != 1)
        return 0;
    }
    copies *= (uint64_t)MAX(rd.value, 1);
    if (copies > MAX_BROADCAST_COPIES)
      return 0;
  }
  return copies;
}

/* Does class CLS hold an impl tensor (a leaf), or a view of one? */
static gboolean holds_leaf(const bsum_ctx *w, const sc_egraph *eg, sc_id cls, gboolean views) {
  uint32_t n = 0;
  sc_egraph_class_nodes_with_op(eg, cls, SC_LANG_OP_TENSOR, &n);
  if (n > 0 || !views)
    return n > 0;
  const sc_id *nodes = sc_egraph_class_nodes(eg, cls, &n);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t op = sc_egraph_node_op(eg, nodes[i]);
    if (op == SC_LANG_OP_TENSOR || op == SC_LANG_OP_OPAQUE)
      continue;
    const sc_op *o = sc_lang_attr_op(w->lang, sc_egraph_node_attr(eg, nodes[i]));
    if (o != NULL && o == w->view && sc_egraph_node_arity(eg, nodes[i]) == 1 &&
        holds_leaf(w, eg, sc_egraph_node_children(eg, nodes[i])[0], FALSE))
      return TRUE;
  }
  return FALSE;
}

/* add.Tensor(a, b) with alpha 1 over floats, where one operand is an impl
 * tensor of the result's shape and the other an impl tensor (or a view of
 * one) broadcast to it by 2 to MAX_BROADCAST_COPIES copies (either
 * order): an impl tensor plus copies of another, what shardsmith's value
 * search names a sum with copies. */
static gboolean is_broadcast_add(const bsum_ctx *w, const sc_egraph *eg, sc_id node) {
  const sc_value *args = sc_lang_attr_args(w->lang, sc_egraph_node_attr(eg, node));
  if (args == NULL || w->alpha < 0)
    return FALSE;
  const sc_value *al = &args[w->alpha];
  if (!((al->kind == SC_VAL_INT && sc_dim_is_const(al->u.i) && al->u.i.value == 1) ||
        (al->kind == SC_VAL_FLOAT && al->u.f == 1.0)))
    return FALSE;
  if (sc_egraph_node_arity(eg, node) != 2)
    return FALSE;
  const sc_id *kids = sc_egraph_node_children(eg, node);
  for (uint32_t k = 0; k < 2; k++) {
    sc_id full = kids[k], part = kids[1 - k]; /* canonical: a clean e-graph */
    const sc_ttype *a = sc_egraph_class_data(eg, full);
    const sc_ttype *b = sc_egraph_class_data(eg, part);
    if (a == NULL || b == NULL || !sc_dtype_is_floating(a->dtype) || a->dtype != b->dtype)
      return FALSE;
    if (broadcast_copies(&b->shape, &a->shape) >= 2 && holds_leaf(w, eg, full, FALSE) &&
        holds_leaf(w, eg, part, TRUE))
      return TRUE;
  }
  return FALSE;
}

/* Enumeration weight: impl tensors, the clean structural operators (not
 * sc.sum) and broadcast adds (is_broadcast_add); everything else
 * excluded. */
static uint32_t bsum_weight(const sc_egraph *eg, sc_id node, void *user) {
  const bsum_ctx *w = user;
  uint32_t op = sc_egraph_node_op(eg, node);
  if (op == SC_LANG_OP_TENSOR)
    return 1;
  if (op == SC_LANG_OP_OPAQUE)
    return 0;
  const sc_op *o = sc_lang_attr_op(w->lang, sc_egraph_node_attr(eg, node));
  if (o == NULL)
    return 0;
  if (o == w->add)
    return is_broadcast_add(w, eg, node) ? 1 : 0;
  return (o->flags & SC_OP_CLEAN) && (o->flags & SC_OP_VIEW) ? 1 : 0;
}

gboolean sc_rel_defer_excused(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls,
                              GArray *unmapped) {
  const sc_op *add = sc_ops_lookup("aten.add.Tensor", NULL);
  if (add == NULL || unmapped->len == 0)
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  if (!sc_egraph_is_clean(eg))
    return FALSE;
  bsum_ctx w = {c->lang, add, sc_ops_lookup("sc.view.default", NULL),
                sc_ops_arg_index(add, "alpha")};
  (void)n;
  for (guint i = 0; i < unmapped->len; i++) {
    uint32_t k = g_array_index(unmapped, uint32_t, i);
    GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, out_cls[k]), 1, c->term_size,
                                           bsum_weight, &w, NULL);
    gboolean found = terms->len > 0;
    g_ptr_array_unref(terms);
    if (!found)
      return FALSE;
  }
  return TRUE;
}
