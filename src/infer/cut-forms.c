/* cut-forms.c — the cut forms of a relation past max_terms families, and
 * the retry without them.
 *
 * A relation keeps max_terms families of clean terms (relation.c).  A
 * tensor replicated on 8 ranks fills them with single names (each rank's
 * all_reduce result, its view, its expand: 24 one-tensor terms), so the
 * form that cuts it into each rank's piece (a cat of the pieces, a sum of
 * such cats for a partial sum over the other mesh dim) was dropped, and a
 * contraction that reads one rank's piece never mapped (shardsmith seeds
 * 2016, 2035).  sc_rel_clean_exprs_cuts keeps, past the families, a few
 * terms of new layouts with a cat or a slice over impl tensors no kept term
 * reads; they are appended to the relation (a proved equality like the
 * rest), so that they also flow through the nodes that map (a view of the
 * cut tensor is a cat of views).  More forms make a consumer's e-graph
 * larger: when a visit that read some reaches a limit and leaves an output
 * unmapped, it is visited again from the relations without them (sc_rel_spec_input_class reads only the
 * first rel_main[u] expressions while c->no_cuts is set), so a node that
 * mapped before still maps at the same cost plus the failed attempt. */
#include "infer/infer-private.h"

void sc_rel_cut_forms_set(sc_rel_ctx *c, sc_id t, GPtrArray *exprs, GPtrArray *cuts) {
  if (cuts->len > 0 && exprs->len > 0) {
    c->rel_main[t] = exprs->len;
    for (guint i = 0; i < cuts->len; i++)
      g_ptr_array_add(exprs, g_ptr_array_index(cuts, i));
  }
  g_ptr_array_unref(cuts);
}

uint32_t sc_rel_cut_forms_main(const sc_rel_ctx *c, sc_id u, uint32_t len) {
  if (!c->no_cuts || c->rel_main[u] == 0)
    return len;
  return MIN(c->rel_main[u], len);
}

gboolean sc_rel_cut_forms_read(const sc_rel_ctx *c, const sc_node *n) {
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    sc_id u = n->inputs[i];
    if (c->rel_main[u] > 0 && c->rel[u] && c->rel[u]->len > c->rel_main[u])
      return TRUE;
  }
  return FALSE;
}

void sc_rel_cut_forms_free(sc_rel_ctx *c) {
  g_free(c->rel_main);
  c->rel_main = NULL;
}
