/* dups.c — duplicate impl nodes: nodes that apply the same operator to
 * the same arguments (the same input tensors, the same attributes) compute
 * the same results (arguments compared through duplicates: a node reading
 * a duplicate's result reads its representative's), so exploration need
 * not assert every one of them.  A
 * traced graph often has many: a view or a transpose of one shared tensor
 * per use.  Each such set has a representative (its first node); the
 * others stay dormant when they become ready or a member's result joins
 * T_rel (trel.c), their results counted as related wherever the
 * representative's are (so the consumers that read them still become
 * ready), and a dormant node is explored only when something needs it:
 * one of its results joins T_rel, or a consumer that reads one becomes
 * ready.  When a result of any member of a set joins T_rel, the other
 * members become dormant with that result counted as related, even if
 * their inputs are not related at this visit (the spec's second copy of a
 * product names the representative's result, the impl's consumer reads
 * the duplicate's); a member woken then brings the members whose results
 * are in T_rel (sc_rel_dups_wake_related), and its results are united
 * with the representative's, so that they fall in one class (which is why
 * the representative itself need not be explored beside it: removing that
 * changed no verdict, relation, explored count or explanation over every
 * model, bug, real capture and shardsmith seeds 0..19 and 17000..17039,
 * only the count of lemma applications).  Exploration decides what is asserted,
 * never what is proved: a dormant node's equation is simply not in the
 * e-graph.  Random, collective, data-dependent and creation nodes are never
 * duplicates (creation nodes have sc_rel_add_sourceless), nor is a node
 * whose result is an impl output (the output relation names it).
 *
 * Invariants: dup_rep[w] == w for a node that is no duplicate; dups_of[r]
 * lists the duplicates of representative r (NULL when none), ascending. */
#include "infer/infer-private.h"

/* Tensor T, or the same result of its producer's representative when the
 * producer is a duplicate: nodes are visited in order, so a producer's
 * representative is known, and duplicates are found through chains of
 * them (autograd's two copies of where(eq(x, y), g / 2, g) compute eq and
 * the division twice as well). */
static sc_id canon_tensor(const sc_rel_ctx *c, sc_id t) {
  if (t == SC_ID_NONE)
    return t;
  const sc_tensor *ten = sc_graph_tensor(c->impl, t);
  if (ten->producer == SC_ID_NONE || c->dup_rep[ten->producer] == ten->producer)
    return t;
  return sc_graph_node(c->impl, c->dup_rep[ten->producer])->results[ten->result_index];
}

static guint arg_hash(const sc_rel_ctx *c, const sc_value *v) {
  if (v->kind == SC_VAL_TENSOR)
    return canon_tensor(c, v->u.tensor) * 2654435761u + 1u;
  if (v->kind == SC_VAL_TENSOR_LIST) {
    guint h = 7u + v->u.list.n;
    for (uint32_t j = 0; j < v->u.list.n; j++)
      h = h * 31u + canon_tensor(c, v->u.list.ids[j]);
    return h;
  }
  return sc_value_hash(v);
}

static gboolean arg_equal(const sc_rel_ctx *c, const sc_value *a, const sc_value *b) {
  if (a->kind != b->kind)
    return FALSE;
  if (a->kind == SC_VAL_TENSOR)
    return canon_tensor(c, a->u.tensor) == canon_tensor(c, b->u.tensor);
  if (a->kind == SC_VAL_TENSOR_LIST) {
    if (a->u.list.n != b->u.list.n)
      return FALSE;
    for (uint32_t j = 0; j < a->u.list.n; j++)
      if (canon_tensor(c, a->u.list.ids[j]) != canon_tensor(c, b->u.list.ids[j]))
        return FALSE;
    return TRUE;
  }
  return sc_value_equal(a, b);
}

static guint node_hash(const sc_rel_ctx *c, const sc_node *n) {
  guint h = n->op->id * 2654435761u + n->n_results;
  for (uint32_t i = 0; i < n->op->n_args; i++)
    h = h * 31u + arg_hash(c, &n->args[i]);
  return h;
}

static gboolean node_equal(const sc_rel_ctx *c, const sc_node *x, const sc_node *y) {
  if (x->op != y->op || x->n_results != y->n_results)
    return FALSE;
  for (uint32_t i = 0; i < x->op->n_args; i++)
    if (!arg_equal(c, &x->args[i], &y->args[i]))
      return FALSE;
  return TRUE;
}

static gboolean may_be_duplicate(sc_rel_ctx *c, const sc_node *n) {
  if (n->n_inputs == 0 ||
      (n->op->flags & (SC_OP_RANDOM | SC_OP_COLLECTIVE | SC_OP_DATA_DEPENDENT | SC_OP_CREATION)))
    return FALSE;
  for (uint32_t k = 0; k < n->n_results; k++)
    if (n->results[k] != SC_ID_NONE && c->impl_is_output[n->results[k]])
      return FALSE;
  return TRUE;
}

void sc_rel_dups_init(sc_rel_ctx *c) {
  uint32_t nn = sc_graph_n_nodes(c->impl), nt = sc_graph_n_tensors(c->impl);
  c->dup_rep = g_new(sc_id, nn ? nn : 1);
  /* every node its own representative until found a duplicate: a tensor
   * read before its producer is visited (a graph out of topological
   * order) is compared as itself */
  for (sc_id w = 0; w < nn; w++)
    c->dup_rep[w] = w;
  c->dups_of = g_new0(GArray *, nn ? nn : 1);
  c->dormant = g_new0(uint32_t, nn ? nn : 1);
  c->virt_stamp = g_new0(uint32_t, nt ? nt : 1);
  /* hash -> GArray of the representatives with that hash */
  GHashTable *seen = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                           (GDestroyNotify)g_array_unref);
  for (sc_id w = 0; w < nn; w++) {
    const sc_node *n = sc_graph_node(c->impl, w);
    if (!may_be_duplicate(c, n))
      continue;
    gpointer key = GUINT_TO_POINTER(node_hash(c, n));
    GArray *reps = g_hash_table_lookup(seen, key);
    if (reps == NULL) {
      reps = g_array_new(FALSE, FALSE, sizeof(sc_id));
      g_hash_table_insert(seen, key, reps);
    }
    sc_id r = SC_ID_NONE;
    for (guint i = 0; i < reps->len && r == SC_ID_NONE; i++)
      if (node_equal(c, sc_graph_node(c->impl, g_array_index(reps, sc_id, i)), n))
        r = g_array_index(reps, sc_id, i);
    if (r == SC_ID_NONE) {
      g_array_append_val(reps, w);
      continue;
    }
    c->dup_rep[w] = r;
    if (c->dups_of[r] == NULL)
      c->dups_of[r] = g_array_new(FALSE, FALSE, sizeof(sc_id));
    g_array_append_val(c->dups_of[r], w);
  }
  g_hash_table_unref(seen);
}

void sc_rel_dups_free(sc_rel_ctx *c) {
  uint32_t nn = sc_graph_n_nodes(c->impl);
  for (sc_id w = 0; w < nn; w++)
    if (c->dups_of[w])
      g_array_free(c->dups_of[w], TRUE);
  g_free(c->dups_of);
  g_free(c->dup_rep);
  g_free(c->dormant);
  g_free(c->virt_stamp);
}

sc_id sc_rel_dups_member(const sc_rel_ctx *c, sc_id w, guint i) {
  sc_id r = c->dup_rep[w];
  const GArray *dups = c->dups_of[r];
  guint n = dups != NULL ? dups->len : 0;
  if (i < n)
    return g_array_index(dups, sc_id, i);
  return i == n ? r : SC_ID_NONE;
}

void sc_rel_dups_wake_related(sc_rel_ctx *c, sc_id w) {
  sc_id m;
  for (guint i = 0; (m = sc_rel_dups_member(c, w, i)) != SC_ID_NONE; i++) {
    if (m == w || c->node_explored[m] == c->visit)
      continue;
    const sc_node *n = sc_graph_node(c->impl, m);
    for (uint32_t k = 0; k < n->n_results; k++)
      if (n->results[k] != SC_ID_NONE && c->trel_stamp[n->results[k]] == c->visit) {
        g_array_append_val(c->frontier, m);
        break;
      }
  }
}
