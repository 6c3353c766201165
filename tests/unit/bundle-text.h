/* bundle-text.h — the JSON text of small two-rank test bundles, for the
 * unit tests that run the whole driver on one (test-infer-*.c): string
 * literal macros for a tensor (T), a node with one output (NODE) and the
 * rank of an impl tensor (R0, R1), and bt_two_ranks, which wraps a spec
 * with output y and an impl whose ranks end in y_0 and y_1 into a bundle.
 *
 * Ownership: bt_two_ranks returns a new string (g_free). */
#ifndef SC_TEST_BUNDLE_TEXT_H
#define SC_TEST_BUNDLE_TEXT_H

#include <glib.h>

#define T(name, shape, extra) "{\"name\": \"" name "\", \"shape\": " shape ", \"dtype\": \"f32\"" extra "}"
#define NODE(name, op, args, out, shape, rank)                                          \
  "{\"name\": \"" name "\", \"op\": \"" op "\", \"args\": " args ", \"kwargs\": {},"   \
  " \"outputs\": [" T(out, shape, rank) "]}"
#define R0 ", \"rank\": 0"
#define R1 ", \"rank\": 1"

/* A bundle NAME without symbols or assumptions: spec inputs SPEC_INPUTS
 * (comma-separated T(...)), nodes SPEC_NODES, output y; impl inputs
 * IMPL_INPUTS, rank 0's nodes RANK0 and rank 1's RANK1 (each ending in
 * y_r), outputs y_0 and y_1; INPUT_RELATION and EXPECT ("\"x\": [...]"
 * members of the two relation objects). */
static inline char *bt_two_ranks(const char *name, const char *spec_inputs,
                                 const char *spec_nodes, const char *impl_inputs,
                                 const char *rank0, const char *rank1,
                                 const char *input_relation, const char *expect) {
  return g_strdup_printf(
      "{\"format\": \"shardcheck-bundle/1\", \"name\": \"%s\", \"symbols\": {},"
      " \"assume\": [],"
      " \"spec\": {\"inputs\": [%s], \"nodes\": [%s], \"outputs\": [\"y\"]},"
      " \"impl\": {\"inputs\": [%s], \"nodes\": [%s, %s], \"outputs\": [\"y_0\", \"y_1\"]},"
      " \"input_relation\": {%s},"
      " \"expect_output_relation\": {%s}}",
      name, spec_inputs, spec_nodes, impl_inputs, rank0, rank1, input_relation, expect);
}

#endif
