/* select.c — the lemmas `check` loads.  Without --lemmas, the built-in
 * library is loaded deferred (lemma.h, sc_lemma_set_load_dir_deferred) and,
 * once the bundle is read, only the lemmas that can fire in its check are
 * parsed and checked (sc_lemma_set_select): those whose left side calls
 * only operators the check can meet.  The check meets the operators of
 * the bundle (its graphs' nodes and its relations' expressions) and those
 * the driver adds to the e-graphs itself (sc_infer_mark_driver_ops, which
 * lists them beside the driver's code).  The lemmas' own right sides add
 * theirs (the closure is lemma.c's). */
#include "cli/cli.h"

static void mark_texpr(const sc_texpr *t, gboolean *met) {
  if (sc_texpr_get_kind(t) != SC_TEXPR_CALL)
    return;
  met[sc_texpr_op(t)->id] = TRUE;
  for (uint32_t i = 0; i < sc_texpr_n_children(t); i++)
    mark_texpr(sc_texpr_child(t, i), met);
}

static void mark_relation(const sc_relation *r, gboolean *met) {
  for (uint32_t i = 0; r != NULL && i < r->n_entries; i++)
    for (uint32_t j = 0; j < r->entries[i].n_exprs; j++)
      mark_texpr(r->entries[i].exprs[j], met);
}

static void mark_graph(const sc_graph *g, gboolean *met) {
  for (uint32_t i = 0; i < sc_graph_n_nodes(g); i++)
    met[sc_graph_node(g, i)->op->id] = TRUE;
}

gboolean sc_cli_select_lemmas(sc_lemma_set *set, const sc_bundle *b, GError **error) {
  g_autofree gboolean *met = g_new0(gboolean, sc_ops_count() + 1);
  mark_graph(sc_bundle_spec(b), met);
  mark_graph(sc_bundle_impl(b), met);
  mark_relation(sc_bundle_input_relation(b), met);
  if (sc_bundle_has_expect_output_relation(b))
    mark_relation(sc_bundle_expect_output_relation(b), met);
  mark_relation(sc_bundle_assume_relation(b), met);
  sc_infer_mark_driver_ops(met);
  return sc_lemma_set_select(set, met, error);
}
