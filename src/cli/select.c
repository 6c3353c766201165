/* select.c — the lemmas `check` loads.  Without --lemmas, the built-in
 * library is loaded deferred (lemma.h, sc_lemma_set_load_dir_deferred) and,
 * once the bundle is read, only the lemmas that can fire in its check are
 * parsed and checked (sc_lemma_set_select): those whose left side calls
 * only operators the check can meet.  The check meets the operators of
 * the bundle (its graphs' nodes and its relations' expressions) and those
 * the driver adds to the e-graphs itself (src/infer):
 *   - collectives, as sums, cats and slices of the ranks' tensors and, for
 *     an average, max or min all-reduce, aten.div.Scalar, aten.maximum and
 *     aten.minimum (collective.c);
 *   - sums of partial sums (pass-sums.c, explain.c), cats of constant
 *     parts and constants (cat-parts.c, pass-constants.c: sc.cat, sc.full),
 *     empty buffers (trel.c: sc.empty).
 * The lemmas' own right sides add theirs (the closure is lemma.c's).  A
 * driver that adds an operator outside this list must name it here, or a
 * lemma about it could be left out (never a false proof; a proof could be
 * missed): tests/models and tests/real compare every verdict, and
 * tools/bench/startup-diff.sh the whole JSON results against a full load. */
#include "cli/cli.h"

static const char *const driver_ops[] = {
    "sc.sum.default",      "sc.cat.default",       "sc.slice.default",     "sc.full.default",
    "sc.empty.default",    "aten.div.Scalar",      "aten.maximum.default", "aten.minimum.default",
};

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
  for (size_t i = 0; i < G_N_ELEMENTS(driver_ops); i++) {
    const sc_op *op = sc_ops_lookup(driver_ops[i], NULL);
    if (op != NULL)
      met[op->id] = TRUE;
  }
  return sc_lemma_set_select(set, met, error);
}
