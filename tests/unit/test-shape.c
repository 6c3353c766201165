/* test-shape.c — dtypes (names, torch spellings, promotion), shape
 * construction, comparison and printing, ATen's dim wrapping, and the
 * values of value.h (copy, equality, hashing, printing). */
#include "shardcheck/value.h"

#include <math.h>
#include <string.h>

static void test_dtype_names(void) {
  sc_dtype d;
  static const struct { const char *name; sc_dtype want; } cases[] = {
      {"f32", SC_DTYPE_F32},          {"float32", SC_DTYPE_F32},   {"float", SC_DTYPE_F32},
      {"torch.float32", SC_DTYPE_F32}, {"torch.float16", SC_DTYPE_F16}, {"half", SC_DTYPE_F16},
      {"bfloat16", SC_DTYPE_BF16},    {"bf16", SC_DTYPE_BF16},     {"int64", SC_DTYPE_I64},
      {"long", SC_DTYPE_I64},         {"int", SC_DTYPE_I32},       {"int32", SC_DTYPE_I32},
      {"bool", SC_DTYPE_BOOL},        {"b8", SC_DTYPE_BOOL},       {"uint8", SC_DTYPE_U8},
      {"int8", SC_DTYPE_I8},          {"double", SC_DTYPE_F64},    {"torch.bool", SC_DTYPE_BOOL},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_assert_true(sc_dtype_from_name(cases[i].name, &d));
    g_assert_cmpint(d, ==, cases[i].want);
  }
  g_assert_false(sc_dtype_from_name("f31", &d));
  g_assert_false(sc_dtype_from_name("", &d));
  g_assert_false(sc_dtype_from_name("torch.", &d));
  g_assert_false(sc_dtype_from_name(NULL, &d));
  g_assert_cmpstr(sc_dtype_name(SC_DTYPE_BF16), ==, "bf16");
  g_assert_cmpstr(sc_dtype_name(SC_DTYPE_BOOL), ==, "bool");
  for (int i = 0; i < SC_DTYPE_COUNT; i++) {
    g_assert_true(sc_dtype_from_name(sc_dtype_name((sc_dtype)i), &d));
    g_assert_cmpint(d, ==, i);
  }
}

static void test_dtype_kinds(void) {
  g_assert_true(sc_dtype_is_floating(SC_DTYPE_BF16));
  g_assert_false(sc_dtype_is_floating(SC_DTYPE_I64));
  g_assert_true(sc_dtype_is_integral(SC_DTYPE_U8));
  g_assert_false(sc_dtype_is_integral(SC_DTYPE_BOOL));
  g_assert_false(sc_dtype_is_floating(SC_DTYPE_BOOL));
}

static void test_dtype_promote(void) {
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_F16, SC_DTYPE_BF16), ==, SC_DTYPE_F32);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_BF16, SC_DTYPE_F16), ==, SC_DTYPE_F32);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_F32, SC_DTYPE_F64), ==, SC_DTYPE_F64);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_I64, SC_DTYPE_F16), ==, SC_DTYPE_F16);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_BOOL, SC_DTYPE_I8), ==, SC_DTYPE_I8);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_I32, SC_DTYPE_I64), ==, SC_DTYPE_I64);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_BOOL, SC_DTYPE_BOOL), ==, SC_DTYPE_BOOL);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_U8, SC_DTYPE_I8), ==, SC_DTYPE_I32);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_F16, SC_DTYPE_F32), ==, SC_DTYPE_F32);
  g_assert_cmpint(sc_dtype_promote(SC_DTYPE_BOOL, SC_DTYPE_F16), ==, SC_DTYPE_F16);
  /* symmetric */
  for (int a = 0; a < SC_DTYPE_COUNT; a++)
    for (int b = 0; b < SC_DTYPE_COUNT; b++)
      g_assert_cmpint(sc_dtype_promote((sc_dtype)a, (sc_dtype)b), ==,
                      sc_dtype_promote((sc_dtype)b, (sc_dtype)a));
}

static void test_shape_print(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_assert_true(sc_symtab_declare(st, "S", TRUE, 1, FALSE, 0, NULL));
  g_assert_true(sc_symtab_assume(st, "S % 2 == 0", NULL));
  sc_dim half;
  g_assert_true(sc_dim_parse(st, "S/2", &half, NULL));
  sc_shape s = sc_shape_of(2, (int64_t[]){2, 0});
  s.dims[1] = half;
  g_autofree char *t = sc_shape_to_string(&s);
  g_assert_cmpstr(t, ==, "[2, S/2]");
  sc_shape sc = sc_shape_scalar();
  g_autofree char *t0 = sc_shape_to_string(&sc);
  g_assert_cmpstr(t0, ==, "[]");
  sc_shape big = sc_shape_of(3, (int64_t[]){-1, 9223372036854775807LL, 0});
  g_autofree char *t1 = sc_shape_to_string(&big);
  g_assert_cmpstr(t1, ==, "[-1, 9223372036854775807, 0]");
}

static void test_shape_compare(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_assert_true(sc_symtab_declare(st, "S", TRUE, 1, FALSE, 0, NULL));
  g_assert_true(sc_symtab_assume(st, "S % 2 == 0", NULL));
  sc_dim s, half, twice_half;
  g_assert_true(sc_dim_parse(st, "S", &s, NULL));
  g_assert_true(sc_dim_parse(st, "S/2", &half, NULL));
  twice_half = sc_dim_mul(st, sc_dim_const(2), half);
  sc_shape a = sc_shape_of(2, (int64_t[]){4, 0}), b = a;
  a.dims[1] = s;
  b.dims[1] = twice_half;
  g_assert_cmpint(sc_shape_same(st, &a, &b), ==, SC_YES);
  sc_shape c = sc_shape_of(2, (int64_t[]){4, 5});
  g_assert_cmpint(sc_shape_same(st, &a, &c), ==, SC_NO); /* S is even, 5 is not */
  sc_shape d = sc_shape_of(1, (int64_t[]){4});
  g_assert_cmpint(sc_shape_same(st, &a, &d), ==, SC_NO);
  g_assert_true(sc_shape_equal(&a, &a));
  g_assert_false(sc_shape_equal(&a, &c));
  sc_shape e = sc_shape_of(2, (int64_t[]){4, 6});
  g_assert_cmpint(sc_shape_same(st, &a, &e), ==, SC_UNKNOWN);
}

static void test_wrap_dim(void) {
  uint32_t d = 99;
  g_assert_true(sc_wrap_dim(-1, 3, &d));
  g_assert_cmpuint(d, ==, 2);
  g_assert_true(sc_wrap_dim(-3, 3, &d));
  g_assert_cmpuint(d, ==, 0);
  g_assert_true(sc_wrap_dim(2, 3, &d));
  g_assert_cmpuint(d, ==, 2);
  g_assert_false(sc_wrap_dim(3, 3, &d));
  g_assert_false(sc_wrap_dim(-4, 3, &d));
  g_assert_true(sc_wrap_dim(0, 0, &d));
  g_assert_cmpuint(d, ==, 0);
  g_assert_true(sc_wrap_dim(-1, 0, &d));
  g_assert_cmpuint(d, ==, 0);
  g_assert_false(sc_wrap_dim(1, 0, &d));
  g_assert_false(sc_wrap_dim(-2, 0, &d));
  g_assert_false(sc_wrap_dim(INT64_MIN, 8, &d));
  g_assert_false(sc_wrap_dim(INT64_MAX, 8, &d));
}

static const char *name_of(void *env, sc_id t) {
  (void)env;
  return t == 7 ? "x" : NULL;
}

static void test_value_basics(void) {
  sc_value list;
  list.kind = SC_VAL_LIST;
  list.u.items.n = 3;
  list.u.items.v = g_new(sc_value, 3);
  list.u.items.v[0] = sc_value_int(3);
  list.u.items.v[1] = sc_value_str("a\"b");
  list.u.items.v[2] = sc_value_float(0.1);
  sc_value copy;
  sc_value_copy(&copy, &list);
  g_assert_true(sc_value_equal(&list, &copy));
  g_assert_cmpuint(sc_value_hash(&list), ==, sc_value_hash(&copy));
  g_autofree char *t = sc_value_to_string(&copy, NULL, NULL, NULL);
  g_assert_cmpstr(t, ==, "[3, \"a\\\"b\", 0.1]");
  sc_value_clear(&copy.u.items.v[0]);
  copy.u.items.v[0] = sc_value_int(4);
  g_assert_false(sc_value_equal(&list, &copy));
  sc_value_clear(&list);
  sc_value_clear(&copy);
  g_assert_cmpint(list.kind, ==, SC_VAL_NONE);
  sc_value_clear(&list); /* twice is harmless */

  sc_value f = sc_value_float(2.0), n1 = sc_value_float(NAN), n2 = sc_value_float(NAN);
  g_autofree char *tf = sc_value_to_string(&f, NULL, NULL, NULL);
  g_assert_cmpstr(tf, ==, "2.0");
  g_assert_true(sc_value_equal(&n1, &n2));
  sc_value inf = sc_value_float(-INFINITY);
  g_autofree char *ti = sc_value_to_string(&inf, NULL, NULL, NULL);
  g_assert_cmpstr(ti, ==, "-inf");
  sc_value tv = sc_value_tensor(7), tw = sc_value_tensor(8);
  g_autofree char *tx = sc_value_to_string(&tv, NULL, name_of, NULL);
  g_autofree char *ty = sc_value_to_string(&tw, NULL, name_of, NULL);
  g_assert_cmpstr(tx, ==, "x");
  g_assert_cmpstr(ty, ==, "t8");
  sc_value b = sc_value_bool(TRUE), none = sc_value_none();
  g_autofree char *tb = sc_value_to_string(&b, NULL, NULL, NULL);
  g_autofree char *tn = sc_value_to_string(&none, NULL, NULL, NULL);
  g_assert_cmpstr(tb, ==, "True");
  g_assert_cmpstr(tn, ==, "None");
  g_assert_cmpstr(sc_value_kind_name(SC_VAL_INT_LIST), ==, "int[]");
  g_assert_cmpstr(sc_value_kind_name(SC_VAL_TENSOR), ==, "Tensor");
}

static void test_value_symbolic(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_assert_true(sc_symtab_declare(st, "S", TRUE, 1, FALSE, 0, NULL));
  sc_value v;
  v.kind = SC_VAL_INT_LIST;
  v.u.ints.n = 2;
  v.u.ints.v = g_new(sc_dim, 2);
  v.u.ints.v[0] = sc_dim_const(2);
  g_assert_true(sc_dim_parse(st, "S+1", &v.u.ints.v[1], NULL));
  g_autofree char *t = sc_value_to_string(&v, st, NULL, NULL);
  g_assert_cmpstr(t, ==, "[2, S+1]");
  sc_value c;
  sc_value_copy(&c, &v);
  g_assert_true(sc_value_equal(&v, &c));
  g_assert_true(c.u.ints.v != v.u.ints.v);
  sc_value_clear(&v);
  sc_value_clear(&c);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/shape/dtype/names", test_dtype_names);
  g_test_add_func("/shape/dtype/kinds", test_dtype_kinds);
  g_test_add_func("/shape/dtype/promote", test_dtype_promote);
  g_test_add_func("/shape/print", test_shape_print);
  g_test_add_func("/shape/compare", test_shape_compare);
  g_test_add_func("/shape/wrap-dim", test_wrap_dim);
  g_test_add_func("/shape/value/basics", test_value_basics);
  g_test_add_func("/shape/value/symbolic", test_value_symbolic);
  return g_test_run();
}
