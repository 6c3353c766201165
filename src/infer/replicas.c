/* replicas.c — the equalities the input relation states between impl
 * tensors.  A spec input with several expressions, x = x_0 = x_1 (a
 * replicated input) or w = cat(w_0, w_1, dim=1) = cat(w_2, w_3, dim=1)
 * (TP x DP), says that those expressions are equal to each other, in
 * every run; but a visit's e-graph holds x's class only when x is an
 * input of the visited node.  Once the residual x has flowed through an
 * intermediate (y = (x + attn) + mlp), the ranks' y_0 = x_0 + s and
 * y_1 = x_1 + s are equal only if the e-graph knows x_0 = x_1.  So each
 * such relation entry is a *group*; when an impl tensor that a group's
 * expressions read joins T_rel (sc_rel_replicas_touch, from trel_add), the
 * group is queued, and the next exploration round adds every expression
 * of the group, unioned (justified as the spec input's relation), their
 * leaves joining T_rel.  Each group is added at most once per visit (a
 * stamp), so a visit pays only for the groups its neighbourhood reads.
 * Two cats of a group along one dim with parts of equal shapes have equal
 * parts (cat-parts.c): the blocks of TP x DP.  The assumed relation
 * (assume_relation) gives groups the same way, and so do the ranks'
 * copies of one computed value (copies.c: a group of bare impl tensors,
 * its union justified as SC_FACT_COPIES, not as a spec tensor's
 * relation). */
#include "infer/infer-private.h"

typedef struct {
  sc_id tensor;                   /* the spec tensor the entry relates; SC_ID_NONE
                                     for copies (copies.c) */
  const sc_relation_entry *entry; /* borrowed from the bundle */
} group;

/* Entry E (n_exprs >= 2) a group, indexed by the impl tensors it reads. */
static void add_group(sc_rel_ctx *c, const sc_relation_entry *e) {
  GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  guint id = c->groups->len;
  group g = {e->tensor, e};
  g_array_append_val(c->groups, g);
  for (uint32_t j = 0; j < e->n_exprs; j++) {
    g_array_set_size(leaves, 0);
    sc_texpr_collect_leaves(e->exprs[j], leaves);
    for (guint l = 0; l < leaves->len; l++) {
      sc_id t = g_array_index(leaves, sc_id, l);
      if (c->groups_of[t] == NULL)
        c->groups_of[t] = g_array_new(FALSE, FALSE, sizeof(guint));
      GArray *of = c->groups_of[t];
      if (of->len == 0 || g_array_index(of, guint, of->len - 1) != id)
        g_array_append_val(of, id);
    }
  }
  g_array_free(leaves, TRUE);
}

static void add_groups_of(sc_rel_ctx *c, const sc_relation *r) {
  for (uint32_t i = 0; r != NULL && i < r->n_entries; i++)
    if (r->entries[i].n_exprs >= 2)
      add_group(c, &r->entries[i]);
}

void sc_rel_replicas_init(sc_rel_ctx *c) {
  uint32_t n_it = sc_graph_n_tensors(c->impl);
  c->groups = g_array_new(FALSE, FALSE, sizeof(group));
  c->groups_of = g_new0(GArray *, n_it ? n_it : 1);
  c->group_queue = g_array_new(FALSE, FALSE, sizeof(guint));
  add_groups_of(c, sc_bundle_input_relation(c->bundle));
  add_groups_of(c, sc_bundle_assume_relation(c->bundle));
  /* the ranks' copies of one value (copies.c) */
  GPtrArray *copies = g_ptr_array_new();
  sc_rel_copies_init(c, copies);
  for (guint i = 0; i < copies->len; i++)
    add_group(c, g_ptr_array_index(copies, i));
  g_ptr_array_unref(copies);
  c->group_stamp = g_new0(uint32_t, c->groups->len ? c->groups->len : 1);
}

void sc_rel_replicas_free(sc_rel_ctx *c) {
  uint32_t n_it = sc_graph_n_tensors(c->impl);
  for (uint32_t t = 0; t < n_it; t++)
    if (c->groups_of[t])
      g_array_free(c->groups_of[t], TRUE);
  g_free(c->groups_of);
  g_array_free(c->groups, TRUE);
  g_array_free(c->group_queue, TRUE);
  g_free(c->group_stamp);
  sc_rel_copies_free(c);
}

void sc_rel_replicas_touch(sc_rel_ctx *c, sc_id t) {
  const GArray *of = c->groups_of[t];
  for (guint i = 0; of != NULL && i < of->len; i++) {
    guint id = g_array_index(of, guint, i);
    if (c->group_stamp[id] == c->visit)
      continue;
    c->group_stamp[id] = c->visit;
    g_array_append_val(c->group_queue, id);
    if (c->group_log)
      g_array_append_val(c->group_log, id);
  }
}

gboolean sc_rel_replicas_add(sc_rel_ctx *c) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  gboolean added = FALSE;
  GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  /* the queue grows while it is drained: leaves join T_rel below */
  for (guint q = 0; q < c->group_queue->len; q++) {
    const group *g = &g_array_index(c->groups, group, g_array_index(c->group_queue, guint, q));
    sc_id first = SC_ID_NONE;
    for (uint32_t j = 0; j < g->entry->n_exprs; j++) {
      GError *local = NULL;
      sc_id k = sc_lang_add_texpr(c->lang, g->entry->exprs[j], &local);
      if (k == SC_ID_NONE) {
        g_clear_error(&local);
        continue;
      }
      if (first == SC_ID_NONE)
        first = k;
      else if (sc_egraph_find(eg, first) != sc_egraph_find(eg, k))
        added |= sc_egraph_union(eg, first, k,
                                 g->tensor != SC_ID_NONE
                                     ? SC_EXPLAIN_JUST(c->ex, SC_FACT_RELATION, g->tensor)
                                     : SC_EXPLAIN_JUST(c->ex, SC_FACT_COPIES,
                                                       sc_texpr_tensor(g->entry->exprs[0])));
      g_array_set_size(leaves, 0);
      sc_texpr_collect_leaves(g->entry->exprs[j], leaves);
      for (guint l = 0; l < leaves->len; l++)
        sc_rel_trel_add(c, g_array_index(leaves, sc_id, l));
    }
    /* blocks: cat(w_0, w_1) = cat(w_2, w_3) makes w_0 = w_2 */
    if (first != SC_ID_NONE)
      added |= sc_rel_cat_equal_parts(c, first);
  }
  g_array_set_size(c->group_queue, 0);
  g_array_free(leaves, TRUE);
  return added;
}

const sc_relation_entry *sc_rel_replicas_entry(sc_rel_ctx *c, guint id) {
  return g_array_index(c->groups, group, id).entry;
}
