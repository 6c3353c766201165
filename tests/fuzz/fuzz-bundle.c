/* fuzz-bundle.c — libFuzzer harness for the bundle loader (src/ir/
 * bundle.c), per-rank impl graphs and their stitching (ranks.c) included.
 *
 * Every input is loaded as a bundle (sc_bundle_load_string_opts, no
 * oracle); a failure must come with an SC_BUNDLE_ERROR whose message names
 * the file, and the diag must name it too.  A bundle that loads is walked:
 * both graphs' nodes and tensors are read and every relation expression is
 * printed.  Any crash, leak, sanitizer report or abort() is a finding.
 * Seeds: tests/fuzz/corpus/bundle (accept and reject bundles, per-rank
 * ones among them).  Built by meson with -Dfuzz=enabled. */
#include "shardcheck/bundle.h"
#include "shardcheck/ops.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16)
    return 0;
  GError *error = NULL;
  sc_bundle_diag diag = {0};
  sc_bundle *b = sc_bundle_load_string_opts((const char *)data, size, "fuzz.json", NULL, &diag,
                                            &error);
  if (b == NULL) {
    if (error == NULL || error->domain != SC_BUNDLE_ERROR ||
        !g_str_has_prefix(error->message, "fuzz.json") || diag.file == NULL ||
        strcmp(diag.file, "fuzz.json") != 0)
      abort();
    g_error_free(error);
    sc_bundle_diag_clear(&diag);
    return 0;
  }
  if (error != NULL)
    abort();
  const sc_graph *gs[2] = {sc_bundle_spec(b), sc_bundle_impl(b)};
  for (int k = 0; k < 2; k++) {
    for (uint32_t i = 0; i < sc_graph_n_nodes(gs[k]); i++)
      (void)sc_graph_node(gs[k], i);
    for (uint32_t i = 0; i < sc_graph_n_tensors(gs[k]); i++) {
      const sc_tensor *t = sc_graph_tensor(gs[k], i);
      char *s = sc_shape_to_string(&t->type.shape);
      g_free(s);
    }
  }
  const sc_relation *r = sc_bundle_input_relation(b);
  for (uint32_t i = 0; i < r->n_entries; i++)
    for (uint32_t j = 0; j < r->entries[i].n_exprs; j++) {
      char *s = sc_texpr_to_string(r->entries[i].exprs[j]);
      g_free(s);
    }
  sc_bundle_free(b);
  return 0;
}
