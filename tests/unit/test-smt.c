/* test-smt.c — the cvc5 bridge builds, links and answers. */
#include "smt/smt.h"

#include <glib.h>

static void test_smt_selftest(void) {
  g_assert_cmpint(sc_smt_selftest(), ==, 1);
  g_assert_nonnull(sc_smt_version());
  g_assert_cmpstr(sc_smt_version(), !=, "unknown");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/smt/selftest", test_smt_selftest);
  return g_test_run();
}
