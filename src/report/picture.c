/* picture.c — the failing neighbourhood of a check as a small graph
 * (report-private.h), drawn by the DOT (report-dot.c) and SVG (svg.c)
 * writers.
 *
 * The result records how many impl nodes the failing node's e-graph
 * explored, not which: the impl nodes drawn are the ones the exploration
 * could assert there (Listing 3: a node joins when all its inputs are
 * related), computed from the impl tensors in the inputs' relations and in
 * the nearest terms.  Caps keep a picture of a large capture readable. */
#include "report/report-private.h"

#include <string.h>

/* Impl nodes drawn at most, and relation text kept in a label. */
#define MAX_IMPL_NODES 16
#define MAX_LABEL 72

static char *clip(const char *s) {
  if (strlen(s) <= MAX_LABEL)
    return g_strdup(s);
  return g_strdup_printf("%.*s...", MAX_LABEL - 3, s);
}

typedef struct {
  sc_picture *p;
  GHashTable *index; /* id -> vertex index + 1 */
} builder;

static uint32_t add_vertex(builder *bl, char *id, char *label, char *sub, sc_pic_kind kind) {
  gpointer found = g_hash_table_lookup(bl->index, id);
  if (found) {
    g_free(id);
    g_free(label);
    g_free(sub);
    return GPOINTER_TO_UINT(found) - 1;
  }
  sc_pic_vertex v = {id, label, sub, kind};
  g_array_append_val(bl->p->vertices, v);
  uint32_t i = bl->p->vertices->len - 1;
  g_hash_table_insert(bl->index, id, GUINT_TO_POINTER(i + 1));
  return i;
}

static void add_edge(builder *bl, uint32_t from, uint32_t to, gboolean relation) {
  for (guint i = 0; i < bl->p->edges->len; i++) {
    const sc_pic_edge *e = &g_array_index(bl->p->edges, sc_pic_edge, i);
    if (e->from == from && e->to == to)
      return;
  }
  sc_pic_edge e = {from, to, relation};
  g_array_append_val(bl->p->edges, e);
}

/* The first relation of spec tensor T (clean, else deferred), or NULL. */
static const char *first_relation(const sc_infer_result *r, sc_id t, gboolean *clean) {
  const GPtrArray *e = sc_infer_tensor_exprs(r, t);
  *clean = TRUE;
  if (e && e->len)
    return g_ptr_array_index(e, 0);
  e = sc_infer_tensor_deferred_exprs(r, t);
  *clean = FALSE;
  return e && e->len ? g_ptr_array_index(e, 0) : NULL;
}

static uint32_t spec_tensor_vertex(builder *bl, const sc_bundle *b, const sc_infer_result *r,
                                   sc_id t, gboolean unmapped) {
  const sc_tensor *x = sc_graph_tensor(sc_bundle_spec(b), t);
  gboolean clean;
  const char *rel = unmapped ? NULL : first_relation(r, t, &clean);
  char *sub;
  if (rel) {
    g_autofree char *m = sc_report_mark_expr(b, rel, NULL);
    g_autofree char *c = clip(m);
    sub = g_strdup_printf("= %s%s", c, clean ? "" : " (not clean)");
  } else {
    sub = g_strdup(unmapped ? "no clean expression" : "no relation");
  }
  return add_vertex(bl, g_strdup_printf("s_t%u", t), g_strdup_printf("spec %s", x->name), sub,
                    rel ? SC_PIC_SPEC_TENSOR : SC_PIC_SPEC_UNMAPPED);
}

static uint32_t impl_tensor_vertex(builder *bl, const sc_bundle *b, sc_id t) {
  const sc_tensor *x = sc_graph_tensor(sc_bundle_impl(b), t);
  g_autofree char *shape = sc_shape_to_string(&x->type.shape);
  return add_vertex(bl, g_strdup_printf("i_t%u", t), sc_report_impl_label(b, t),
                    g_strdup_printf("%s%s", sc_dtype_name(x->type.dtype), shape),
                    SC_PIC_IMPL_TENSOR);
}

static gboolean in_set(const GArray *a, sc_id t) {
  for (guint i = 0; i < a->len; i++)
    if (g_array_index(a, sc_id, i) == t)
      return TRUE;
  return FALSE;
}

/* Spec tensor T and dashed edges to the impl tensors of its relations;
 * the impl tensors are added to REL. */
static void relate_spec_tensor(builder *bl, const sc_bundle *b, const sc_infer_result *r,
                               uint32_t tv, sc_id t, GArray *rel) {
  const GPtrArray *e = sc_infer_tensor_exprs(r, t);
  if (!e || !e->len)
    e = sc_infer_tensor_deferred_exprs(r, t);
  g_autoptr(GArray) mine = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint i = 0; e && i < e->len && i < 4; i++)
    sc_report_collect_impl(b, g_ptr_array_index(e, i), mine);
  for (guint i = 0; i < mine->len; i++) {
    sc_id it = g_array_index(mine, sc_id, i);
    add_edge(bl, tv, impl_tensor_vertex(bl, b, it), TRUE);
    if (!in_set(rel, it))
      g_array_append_val(rel, it);
  }
}

/* The impl nodes whose inputs all lie in REL, with their inputs and
 * results (at most MAX_IMPL_NODES, in file order). */
static void add_impl_frontier(builder *bl, const sc_bundle *b, const GArray *rel) {
  sc_graph *impl = sc_bundle_impl(b);
  uint32_t drawn = 0;
  for (sc_id n = 0; n < sc_graph_n_nodes(impl) && drawn < MAX_IMPL_NODES; n++) {
    const sc_node *node = sc_graph_node(impl, n);
    if (node->n_inputs == 0)
      continue;
    gboolean all = TRUE;
    for (uint32_t i = 0; i < node->n_inputs && all; i++)
      all = in_set(rel, node->inputs[i]);
    if (!all)
      continue;
    drawn++;
    uint32_t nv = add_vertex(bl, g_strdup_printf("i_n%u", n),
                             g_strdup_printf("impl node %s", node->name),
                             node->src ? g_strdup_printf("%s at %s", node->op->qualname, node->src)
                                       : g_strdup(node->op->qualname),
                             SC_PIC_IMPL_NODE);
    for (uint32_t i = 0; i < node->n_inputs; i++)
      add_edge(bl, impl_tensor_vertex(bl, b, node->inputs[i]), nv, FALSE);
    for (uint32_t i = 0; i < node->n_results; i++)
      if (node->results[i] != SC_ID_NONE)
        add_edge(bl, nv, impl_tensor_vertex(bl, b, node->results[i]), FALSE);
  }
}

static void build_unmapped(builder *bl, const sc_bundle *b, const sc_infer_result *r, sc_id node) {
  sc_graph *spec = sc_bundle_spec(b);
  const sc_node *n = sc_graph_node(spec, node);
  bl->p->failing = g_strdup(n->name);
  bl->p->title = g_strdup_printf("first unmapped spec node %s (%s)%s%s", n->name,
                                 n->op->qualname, n->src ? " at " : "", n->src ? n->src : "");
  uint32_t nv = add_vertex(bl, g_strdup_printf("s_n%u", node),
                           g_strdup_printf("spec node %s", n->name),
                           n->src ? g_strdup_printf("%s at %s", n->op->qualname, n->src)
                                  : g_strdup(n->op->qualname),
                           SC_PIC_SPEC_FAILING);
  g_autoptr(GArray) rel = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    uint32_t tv = spec_tensor_vertex(bl, b, r, n->inputs[i], FALSE);
    add_edge(bl, tv, nv, FALSE);
    relate_spec_tensor(bl, b, r, tv, n->inputs[i], rel);
  }
  const GArray *um = sc_infer_failure_unmapped(r);
  for (uint32_t i = 0; i < n->n_results; i++) {
    sc_id t = n->results[i];
    if (t == SC_ID_NONE)
      continue;
    gboolean unmapped = FALSE;
    for (guint j = 0; j < um->len; j++)
      unmapped = unmapped || g_array_index(um, sc_id, j) == t;
    add_edge(bl, nv, spec_tensor_vertex(bl, b, r, t, unmapped), FALSE);
  }
  const GPtrArray *near = sc_infer_failure_nearest(r);
  for (guint i = 0; i < near->len; i++)
    sc_report_collect_impl(b, g_ptr_array_index(near, i), rel);
  add_impl_frontier(bl, b, rel);
}

static void build_unexpected(builder *bl, const sc_bundle *b, const sc_infer_result *r) {
  sc_graph *spec = sc_bundle_spec(b);
  const sc_infer_expectation *e = sc_infer_first_unfound_expectation(r);
  if (e == NULL)
    return;
  const sc_tensor *x = sc_graph_tensor(spec, e->tensor);
  bl->p->title = g_strdup_printf("spec output %s: the relation found is not the one expected "
                                 "(%s)", x->name, e->text);
  uint32_t tv = spec_tensor_vertex(bl, b, r, e->tensor, FALSE);
  if (x->producer != SC_ID_NONE) {
    const sc_node *n = sc_graph_node(spec, x->producer);
    bl->p->failing = g_strdup(n->name);
    uint32_t nv = add_vertex(bl, g_strdup_printf("s_n%u", x->producer),
                             g_strdup_printf("spec node %s", n->name),
                             n->src ? g_strdup_printf("%s at %s", n->op->qualname, n->src)
                                    : g_strdup(n->op->qualname),
                             SC_PIC_SPEC_FAILING);
    add_edge(bl, nv, tv, FALSE);
  }
  g_autoptr(GArray) rel = g_array_new(FALSE, FALSE, sizeof(sc_id));
  relate_spec_tensor(bl, b, r, tv, e->tensor, rel);
  g_autoptr(GArray) expected = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_report_collect_impl(b, e->text, expected);
  for (guint j = 0; j < expected->len; j++)
    impl_tensor_vertex(bl, b, g_array_index(expected, sc_id, j));
}

sc_picture *sc_picture_build(const sc_bundle *b, const sc_infer_result *r) {
  sc_picture *p = g_new0(sc_picture, 1);
  p->vertices = g_array_new(FALSE, FALSE, sizeof(sc_pic_vertex));
  p->edges = g_array_new(FALSE, FALSE, sizeof(sc_pic_edge));
  builder bl = {p, g_hash_table_new(g_str_hash, g_str_equal)};
  sc_verdict v = sc_infer_verdict(r);
  sc_failure_kind k = sc_infer_failure_kind(r);
  if ((v == SC_VERDICT_FAILS || v == SC_VERDICT_LIMIT) && k == SC_FAILURE_UNMAPPED &&
      sc_infer_failure_node(r) != SC_ID_NONE)
    build_unmapped(&bl, b, r, sc_infer_failure_node(r));
  else if (v == SC_VERDICT_FAILS && k == SC_FAILURE_UNEXPECTED_RELATION)
    build_unexpected(&bl, b, r);
  if (p->title == NULL)
    p->title = g_strdup_printf("%s: %s, no failing neighbourhood", sc_bundle_name(b),
                               sc_verdict_name(v));
  g_hash_table_unref(bl.index);
  return p;
}

void sc_picture_free(sc_picture *p) {
  if (p == NULL)
    return;
  for (guint i = 0; i < p->vertices->len; i++) {
    sc_pic_vertex *v = &g_array_index(p->vertices, sc_pic_vertex, i);
    g_free(v->id);
    g_free(v->label);
    g_free(v->sub);
  }
  g_array_unref(p->vertices);
  g_array_unref(p->edges);
  g_free(p->title);
  g_free(p->failing);
  g_free(p);
}
