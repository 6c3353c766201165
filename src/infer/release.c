/* release.c — the relations of spec tensors that no later visit can read
 * are freed during the walk, so that memory follows a window of the
 * graph, not its depth (126 layers).
 *
 * A visit reads its inputs' relations; a node that reads a deferred
 * tensor also reads, through sc_rel_structured_class and
 * sc_rel_deferred_class, the relations of the inputs of its inputs'
 * producers, down a chain of at most MAX_DEFER_DEPTH deferred nodes, two
 * levels per step.  So a node's result relations are freed once every
 * needed node within RELEASE_DEPTH levels below it has been visited (its
 * horizon: the largest visiting position among them), unless a result is
 * checked or expected (the output relation is made at the end), or pinned
 * by layer memoization (a template's inputs and results, memo.c).  The
 * texts of the result (tensor_texts) stay: reports and --validate read
 * them.  Off with --explain, whose chains read earlier relations.
 *
 * Ownership: the relations a visit (or a carry) made are the slice
 * [own_lo, own_hi) of c->owned that the walk recorded around it; freeing
 * sets those slots to NULL (sc_texpr_free(NULL) is a no-op) and drops
 * c->rel[t] of each result. */
#include "infer/infer-private.h"

#include <string.h>

#define RELEASE_DEPTH (2 * MAX_DEFER_DEPTH + 2)

struct sc_rel_release {
  uint32_t *own_lo, *own_hi; /* per spec node: its slice of c->owned */
  GArray **at;               /* per visiting position: sc_id nodes to free after it */
  uint32_t n_pos;
};

void sc_rel_release_init(sc_rel_ctx *c, const sc_id *order, uint32_t n_order) {
  if (c->opts->explain)
    return;
  uint32_t nn = sc_graph_n_nodes(c->spec);
  sc_rel_release *r = g_new0(sc_rel_release, 1);
  r->own_lo = g_new0(uint32_t, nn ? nn : 1);
  r->own_hi = g_new0(uint32_t, nn ? nn : 1);
  /* positions of the needed nodes in visiting order; the horizon of each
   * node over RELEASE_DEPTH levels of needed consumers */
  int64_t *pos = g_new(int64_t, nn ? nn : 1), *h = g_new(int64_t, nn ? nn : 1);
  int64_t *h2 = g_new(int64_t, nn ? nn : 1);
  for (uint32_t v = 0; v < nn; v++)
    pos[v] = -1;
  uint32_t p = 0;
  for (uint32_t i = 0; i < n_order; i++)
    if (c->need[order[i]])
      pos[order[i]] = p++;
  r->n_pos = p;
  memcpy(h, pos, sizeof(int64_t) * nn);
  for (int d = 0; d < RELEASE_DEPTH; d++) {
    memcpy(h2, h, sizeof(int64_t) * nn);
    for (uint32_t v = 0; v < nn; v++) {
      if (pos[v] < 0)
        continue;
      const sc_node *n = sc_graph_node(c->spec, v);
      for (uint32_t k = 0; k < n->n_results; k++) {
        if (n->results[k] == SC_ID_NONE)
          continue;
        const sc_tensor *t = sc_graph_tensor(c->spec, n->results[k]);
        for (uint32_t j = 0; j < t->n_consumers; j++)
          h2[v] = MAX(h2[v], h[t->consumers[j]]);
      }
    }
    memcpy(h, h2, sizeof(int64_t) * nn);
  }
  r->at = g_new0(GArray *, p ? p : 1);
  for (uint32_t v = 0; v < nn; v++) {
    if (pos[v] < 0)
      continue;
    if (r->at[h[v]] == NULL)
      r->at[h[v]] = g_array_new(FALSE, FALSE, sizeof(sc_id));
    g_array_append_val(r->at[h[v]], v);
  }
  g_free(pos);
  g_free(h);
  g_free(h2);
  c->release = r;
}

void sc_rel_release_free(sc_rel_ctx *c) {
  sc_rel_release *r = c->release;
  if (r == NULL)
    return;
  for (uint32_t p = 0; p < r->n_pos; p++)
    if (r->at[p])
      g_array_free(r->at[p], TRUE);
  g_free(r->at);
  g_free(r->own_lo);
  g_free(r->own_hi);
  g_free(r);
  c->release = NULL;
}

void sc_rel_release_mark(sc_rel_ctx *c, sc_id v, uint32_t owned_before) {
  if (c->release == NULL)
    return;
  c->release->own_lo[v] = owned_before;
  c->release->own_hi[v] = c->owned->len;
}

static gboolean keep(sc_rel_ctx *c, sc_id t) {
  for (guint i = 0; i < c->res->checked->len; i++)
    if (g_array_index(c->res->checked, sc_id, i) == t)
      return TRUE;
  const sc_relation *exp = sc_bundle_expect_output_relation(c->bundle);
  return (exp != NULL && sc_relation_find(exp, t) != NULL) || sc_rel_memo_pins(c, t);
}

void sc_rel_release_after(sc_rel_ctx *c, uint32_t position) {
  sc_rel_release *r = c->release;
  if (r == NULL || position >= r->n_pos || r->at[position] == NULL)
    return;
  const GArray *due = r->at[position];
  for (guint i = 0; i < due->len; i++) {
    sc_id v = g_array_index(due, sc_id, i);
    const sc_node *n = sc_graph_node(c->spec, v);
    gboolean ok = r->own_hi[v] > r->own_lo[v];
    for (uint32_t k = 0; k < n->n_results && ok; k++)
      ok = n->results[k] == SC_ID_NONE || !keep(c, n->results[k]);
    if (!ok)
      continue;
    for (uint32_t k = 0; k < n->n_results; k++)
      if (n->results[k] != SC_ID_NONE && c->rel[n->results[k]] != NULL)
        g_clear_pointer(&c->rel[n->results[k]], g_ptr_array_unref);
    for (uint32_t j = r->own_lo[v]; j < r->own_hi[v]; j++) {
      sc_texpr_free(g_ptr_array_index(c->owned, j));
      g_ptr_array_index(c->owned, j) = NULL;
    }
  }
}
