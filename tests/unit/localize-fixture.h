/* localize-fixture.h — shared by the tests of where a failing walk is
 * reported (test-infer-localize.c, test-infer-excused.c): the JSON
 * builders of their small bundles (T: a tensor, NODE: a one-output node,
 * RANK: a rank member) and lfx_run_case, which checks a bundle with
 * --jobs 1 and 2 and asserts the verdict, the failure node and the node
 * where the walk stopped.
 *
 * Ownership: lfx_run_case takes (frees) the JSON text. */
#ifndef SC_TEST_LOCALIZE_FIXTURE_H
#define SC_TEST_LOCALIZE_FIXTURE_H

#include "infer-fixture.h"

#define T(name, shape, extra) "{\"name\": \"" name "\", \"shape\": " shape ", \"dtype\": \"f32\"" extra "}"
#define NODE(name, op, args, out, shape, rank)                                          \
  "{\"name\": \"" name "\", \"op\": \"" op "\", \"args\": " args ", \"kwargs\": {},"   \
  " \"outputs\": [" T(out, shape, rank) "]}"
#define RANK(r) ", \"rank\": " r

static inline const char *lfx_node_name(const sc_bundle *b, sc_id v) {
  return v == SC_ID_NONE ? "(none)" : sc_graph_node(sc_bundle_spec(b), v)->name;
}

/* Checks JSON (bundle NAME) with --jobs 1 and 2: verdict WANT, failure at
 * NODE (NULL: not asserted), stopped at STOP (NULL: at the failure node). */
static inline void lfx_run_case(char *json, const char *name, sc_verdict want, const char *node,
                                const char *stop) {
  for (uint32_t jobs = 1; jobs <= 2; jobs++) {
    sc_infer_options o;
    sc_infer_options_init(&o);
    o.jobs = jobs;
    sc_bundle *b = NULL;
    sc_infer_result *r = ifx_run_json(json, name, &o, &b);
    g_assert_cmpint(sc_infer_verdict(r), ==, want);
    if (node != NULL) {
      g_assert_cmpstr(lfx_node_name(b, sc_infer_failure_node(r)), ==, node);
      g_assert_cmpstr(lfx_node_name(b, sc_infer_failure_stop_node(r)), ==, stop ? stop : "(none)");
    }
    sc_infer_result_free(r);
    sc_bundle_free(b);
  }
  g_free(json);
}

#endif
