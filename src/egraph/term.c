/* term.c — flat terms (egg's RecExpr): nodes with children before parents,
 * the root last.  Invariant: every child index of node i is < i, so a term
 * is acyclic and one forward pass visits children first. */
#include "shardcheck/extract.h"

struct sc_term {
  GArray *nodes; /* sc_term_node */
  GArray *kids;  /* uint32_t */
};

sc_term *sc_term_new(void) {
  sc_term *t = g_new0(sc_term, 1);
  t->nodes = g_array_new(FALSE, FALSE, sizeof(sc_term_node));
  t->kids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  return t;
}

void sc_term_free(sc_term *t) {
  if (!t)
    return;
  g_array_unref(t->nodes);
  g_array_unref(t->kids);
  g_free(t);
}

uint32_t sc_term_add(sc_term *t, uint32_t op, uint32_t attr,
                     const uint32_t *kids, uint32_t n_kids) {
  g_return_val_if_fail(n_kids == 0 || kids != NULL, SC_ID_NONE);
  for (uint32_t i = 0; i < n_kids; i++)
    g_return_val_if_fail(kids[i] < t->nodes->len, SC_ID_NONE);
  sc_term_node n = {op, attr, n_kids, t->kids->len};
  g_array_append_vals(t->kids, kids, n_kids);
  g_array_append_val(t->nodes, n);
  return t->nodes->len - 1;
}

uint32_t sc_term_n_nodes(const sc_term *t) {
  return t->nodes->len;
}

const sc_term_node *sc_term_node_at(const sc_term *t, uint32_t i) {
  g_return_val_if_fail(i < t->nodes->len, NULL);
  return &g_array_index(t->nodes, sc_term_node, i);
}

uint32_t sc_term_child(const sc_term *t, uint32_t i, uint32_t k) {
  const sc_term_node *n = sc_term_node_at(t, i);
  g_return_val_if_fail(n && k < n->n_children, SC_ID_NONE);
  return g_array_index(t->kids, uint32_t, n->first_child + k);
}

uint32_t sc_term_root(const sc_term *t) {
  g_return_val_if_fail(t->nodes->len > 0, SC_ID_NONE);
  return t->nodes->len - 1;
}

uint64_t sc_term_tree_size(const sc_term *t) {
  uint32_t n = t->nodes->len;
  if (n == 0)
    return 0;
  uint64_t *sz = g_new(uint64_t, n);
  for (uint32_t i = 0; i < n; i++) {
    const sc_term_node *nd = &g_array_index(t->nodes, sc_term_node, i);
    uint64_t s = 1;
    for (uint32_t k = 0; k < nd->n_children; k++) {
      uint64_t c = sz[g_array_index(t->kids, uint32_t, nd->first_child + k)];
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
  const sc_term_node *nd = &g_array_index(t->nodes, sc_term_node, i);
  if (nd->n_children)
    g_string_append_c(out, '(');
  if (name)
    name(out, nd->op, nd->attr, user);
  else
    g_string_append_printf(out, "op%u[%u]", nd->op, nd->attr);
  for (uint32_t k = 0; k < nd->n_children; k++) {
    g_string_append_c(out, ' ');
    print_node(t, g_array_index(t->kids, uint32_t, nd->first_child + k), out,
               name, user);
  }
  if (nd->n_children)
    g_string_append_c(out, ')');
}

char *sc_term_to_string(const sc_term *t, sc_term_name_fn name, void *user) {
  GString *out = g_string_new(NULL);
  if (t->nodes->len)
    print_node(t, t->nodes->len - 1, out, name, user);
  return g_string_free(out, FALSE);
}

sc_id sc_egraph_add_term(sc_egraph *eg, const sc_term *t) {
  uint32_t n = t->nodes->len;
  g_return_val_if_fail(n > 0, SC_ID_NONE);
  sc_id *cls = g_new(sc_id, n);
  GArray *k = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (uint32_t i = 0; i < n; i++) {
    const sc_term_node *nd = &g_array_index(t->nodes, sc_term_node, i);
    g_array_set_size(k, nd->n_children);
    for (uint32_t j = 0; j < nd->n_children; j++)
      g_array_index(k, sc_id, j) =
          cls[g_array_index(t->kids, uint32_t, nd->first_child + j)];
    cls[i] = sc_egraph_add(eg, nd->op, nd->attr, (const sc_id *)k->data,
                           nd->n_children);
  }
  sc_id r = cls[n - 1];
  g_array_unref(k);
  g_free(cls);
  return r;
}
