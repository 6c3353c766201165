/* test-infer-hooks.c — the runner's post-saturation hooks
 * (src/infer/hooks.c): registered hooks run in order after each
 * saturation, every one of them each round; the runner saturates again
 * only while one changed the e-graph, at most four times; and the
 * driver's own registration lists sums, sizes and constants in order. */
#include "infer-fixture.h"

static GString *trace;
static int budget_a, budget_b;

static gboolean hook_a(sc_rel_ctx *c) {
  (void)c;
  g_string_append(trace, "a");
  return budget_a-- > 0;
}

static gboolean hook_b(sc_rel_ctx *c) {
  (void)c;
  g_string_append(trace, "b");
  return budget_b-- > 0;
}

static void run(ifx *f, int a, int b) {
  budget_a = a;
  budget_b = b;
  g_string_truncate(trace, 0);
  sc_runner_limits lim;
  sc_runner_limits_init(&lim);
  g_autoptr(sc_runner) r = sc_runner_new(ifx_eg(f), &lim);
  const char *limit = NULL;
  sc_rel_saturate_ac(&f->c, r, &limit);
  g_assert_null(limit);
}

static void test_order_and_rounds(void) {
  trace = g_string_new(NULL);
  ifx f;
  ifx_init(&f);
  ifx_finish(&f);
  sc_rel_add_hook(&f.c, "a", hook_a);
  sc_rel_add_hook(&f.c, "b", hook_b);
  run(&f, 0, 0);
  g_assert_cmpstr(trace->str, ==, "ab"); /* nothing changed: one round */
  run(&f, 1, 0);
  g_assert_cmpstr(trace->str, ==, "abab"); /* b runs even when a changed */
  run(&f, 0, 2);
  g_assert_cmpstr(trace->str, ==, "ababab");
  run(&f, 100, 0);
  g_assert_cmpstr(trace->str, ==, "abababab"); /* at most four rounds */
  ifx_clear(&f);
  g_string_free(trace, TRUE);
}

static void test_driver_hooks(void) {
  ifx f;
  ifx_init(&f);
  ifx_finish(&f);
  sc_rel_register_hooks(&f.c);
  g_assert_cmpuint(f.c.hooks->len, ==, 3);
  g_assert_true(g_array_index(f.c.hooks, sc_rel_hook, 0).fn == sc_rel_ac_merge_sums);
  g_assert_true(g_array_index(f.c.hooks, sc_rel_hook, 1).fn == sc_rel_dd_merge_sizes);
  g_assert_true(g_array_index(f.c.hooks, sc_rel_hook, 2).fn == sc_rel_cat_constant_parts);
  ifx_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/hooks/order-and-rounds", test_order_and_rounds);
  g_test_add_func("/infer/hooks/driver-hooks", test_driver_hooks);
  return g_test_run();
}
