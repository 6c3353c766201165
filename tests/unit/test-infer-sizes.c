/* test-infer-sizes.c — the post-saturation hook "data-dependent sizes"
 * (src/infer/pass-sizes.c): nonzero(m){size=u0} and nonzero(m){size=r0.u0}
 * over one class are merged and u0 == r0.u0 is learned into the symtab
 * (and listed in the result); over different classes they are not. */
#include "infer-fixture.h"

/* m, m2: [8] bool; u0 and r0.u0 sizes in [0, 8] */
static void setup(ifx *f) {
  ifx_init(f);
  GError *err = NULL;
  g_assert_true(sc_symtab_declare(f->st, "u0", TRUE, 0, TRUE, 8, &err));
  g_assert_true(sc_symtab_declare(f->st, "r0.u0", TRUE, 0, TRUE, 8, &err));
  g_assert_no_error(err);
  int64_t s8[1] = {8};
  ifx_input(f, "m", SC_DTYPE_BOOL, 1, s8);
  ifx_input(f, "m2", SC_DTYPE_BOOL, 1, s8);
  ifx_finish(f);
}

/* nonzero(CHILD){size=SYM} */
static sc_id nonzero(ifx *f, sc_id child, const char *sym) {
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup("aten.nonzero.default", &err);
  g_assert_no_error(err);
  sc_value *args = g_new0(sc_value, op->n_args);
  for (uint32_t i = 0; i < op->n_args; i++)
    args[i] = sc_value_none();
  sc_dim d;
  g_assert_true(sc_dim_symbol(f->st, sym, &d, &err));
  args[sc_ops_arg_index(op, "self")] = sc_value_tensor(0);
  args[sc_ops_arg_index(op, "size")] = sc_value_dim(d);
  sc_id cls = sc_lang_add_call(f->lang, op, args, &child, 1, 0, &err);
  g_assert_no_error(err);
  sc_rel_free_args(args, op->n_args);
  return cls;
}

static void test_learned(void) {
  ifx f;
  setup(&f);
  sc_id m = ifx_add(&f, "m");
  sc_id a = nonzero(&f, m, "u0"), b = nonzero(&f, m, "r0.u0");
  g_assert_false(ifx_same(&f, a, b));
  g_assert_true(sc_rel_dd_merge_sizes(&f.c));
  g_assert_true(ifx_same(&f, a, b));
  g_assert_cmpuint(f.res.learned->len, ==, 1);
  g_assert_nonnull(strstr(g_ptr_array_index(f.res.learned, 0), "u0 == r0.u0"));
  sc_dim u, r;
  g_assert_true(sc_dim_symbol(f.st, "u0", &u, NULL));
  g_assert_true(sc_dim_symbol(f.st, "r0.u0", &r, NULL));
  g_assert_cmpint(sc_dim_eq(f.st, u, r), ==, SC_YES);
  ifx_clear(&f);
}

static void test_different_inputs(void) {
  ifx f;
  setup(&f);
  sc_id a = nonzero(&f, ifx_add(&f, "m"), "u0");
  sc_id b = nonzero(&f, ifx_add(&f, "m2"), "r0.u0");
  g_assert_false(sc_rel_dd_merge_sizes(&f.c));
  g_assert_false(ifx_same(&f, a, b));
  g_assert_cmpuint(f.res.learned->len, ==, 0);
  ifx_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/sizes/learned", test_learned);
  g_test_add_func("/infer/sizes/different-inputs", test_different_inputs);
  return g_test_run();
}
