/* term.c — flat terms (egg's RecExpr): nodes with children before parents,
 * the root last.  Invariant: every child index of node i is < i, so a term
 * is acyclic and one forward pass visits children first. */
#include "shardcheck/extract.h"

#include <string.h>

struct sc_term {
  /* plain growable arrays: the enumeration builds tens of thousands of
   * small terms per check, and GArrays cost four allocations each */
  sc_term_node *nodes;
  uint32_t n_nodes, cap_nodes;
  uint32_t *kids;
  uint32_t n_kids, cap_kids;
};

sc_term *sc_term_new(void) {
  return g_new0(sc_term, 1);
}

void sc_term_free(sc_term *t) {
  if (!t)
    return;
  g_free(t->nodes);
  g_free(t->kids);
  g_free(t);
}

void sc_term_reserve(sc_term *t, uint32_t n_nodes, uint32_t n_kids) {
  g_return_if_fail(t != NULL);
  if (n_nodes > t->cap_nodes) {
    t->cap_nodes = n_nodes;
    t->nodes = g_renew(sc_term_node, t->nodes, t->cap_nodes);
  }
  if (n_kids > t->cap_kids) {
    t->cap_kids = n_kids;
    t->kids = g_renew(uint32_t, t->kids, t->cap_kids);
  }
}

uint32_t sc_term_add(sc_term *t, uint32_t op, uint32_t attr,
                     const uint32_t *kids, uint32_t n_kids) {
  g_return_val_if_fail(n_kids == 0 || kids != NULL, SC_ID_NONE);
  for (uint32_t i = 0; i < n_kids; i++)
    g_return_val_if_fail(kids[i] < t->n_nodes, SC_ID_NONE);
  if (t->n_nodes == t->cap_nodes) {
    g_assert(t->cap_nodes < UINT32_MAX / 2);
    t->cap_nodes = t->cap_nodes ? t->cap_nodes * 2 : 8;
    t->nodes = g_renew(sc_term_node, t->nodes, t->cap_nodes);
  }
  if (n_kids > t->cap_kids - t->n_kids) {
    uint64_t cap = t->cap_kids ? t->cap_kids : 8;
    while (cap < (uint64_t)t->n_kids + n_kids)
      cap *= 2;
    g_assert(cap <= UINT32_MAX);
    t->cap_kids = (uint32_t)cap;
    t->kids = g_renew(uint32_t, t->kids, t->cap_kids);
  }
  sc_term_node n = {op, attr, n_kids, t->n_kids};
  if (n_kids)
    memcpy(t->kids + t->n_kids, kids, n_kids * sizeof(uint32_t));
  t->n_kids += n_kids;
  t->nodes[t->n_nodes] = n;
  return t->n_nodes++;
}

uint32_t sc_term_n_nodes(const sc_term *t) {
  return t->n_nodes;
}

const sc_term_node *sc_term_node_at(const sc_term *t, uint32_t i) {
  g_return_val_if_fail(i < t->n_nodes, NULL);
  return &t->nodes[i];
}

uint32_t sc_term_child(const sc_term *t, uint32_t i, uint32_t k) {
  const sc_term_node *n = sc_term_node_at(t, i);
  g_return_val_if_fail(n && k < n->n_children, SC_ID_NONE);
  return t->kids[n->first_child + k];
}

uint32_t sc_term_root(const sc_term *t) {
  g_return_val_if_fail(t->n_nodes > 0, SC_ID_NONE);
  return t->n_nodes - 1;
}

uint64_t sc_term_tree_size(const sc_term *t) {
  uint32_t n = t->n_nodes;
  if (n == 0)
    return 0;
  uint64_t *sz = g_new(uint64_t, n);
  for (uint32_t i = 0; i < n; i++) {
    const sc_term_node *nd = &t->nodes[i];
    uint64_t s = 1;
    for (uint32_t k = 0; k < nd->n_children; k++) {
      uint64_t c = sz[t->kids[nd->first_child + k]];
      s = (s > UINT64_MAX - c) ? UINT64_MAX : s + c;
    }
    sz[i] = s;
  }
  uint64_t r = sz[n - 1];
  g_free(sz);
  return r;
}

static void print_node(const sc_term *t, uint32_t i, GString *out,
                       sc_term_name_fn name, void *user) {
  const sc_term_node *nd = &t->nodes[i];
  if (nd->n_children)
    g_string_append_c(out, '(');
  if (name)
    name(out, nd->op, nd->attr, user);
  else
    g_string_append_printf(out, "op%u[%u]", nd->op, nd->attr);
  for (uint32_t k = 0; k < nd->n_children; k++) {
    g_string_append_c(out, ' ');
    print_node(t, t->kids[nd->first_child + k], out, name, user);
  }
  if (nd->n_children)
    g_string_append_c(out, ')');
}

char *sc_term_to_string(const sc_term *t, sc_term_name_fn name, void *user) {
  GString *out = g_string_new(NULL);
  if (t->n_nodes)
    print_node(t, t->n_nodes - 1, out, name, user);
  return g_string_free(out, FALSE);
}

sc_id sc_egraph_add_term(sc_egraph *eg, const sc_term *t) {
  uint32_t n = t->n_nodes;
  g_return_val_if_fail(n > 0, SC_ID_NONE);
  sc_id *cls = g_new(sc_id, n);
  GArray *k = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (uint32_t i = 0; i < n; i++) {
    const sc_term_node *nd = &t->nodes[i];
    g_array_set_size(k, nd->n_children);
    for (uint32_t j = 0; j < nd->n_children; j++)
      g_array_index(k, sc_id, j) = cls[t->kids[nd->first_child + j]];
    cls[i] = sc_egraph_add(eg, nd->op, nd->attr, (const sc_id *)k->data,
                           nd->n_children);
  }
  sc_id r = cls[n - 1];
  g_array_unref(k);
  g_free(cls);
  return r;
}
