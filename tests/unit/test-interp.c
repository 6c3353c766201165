/* test-interp.c — the reference interpreter (interp.h): tensor values,
 * rounding, printing and the tolerance comparison; the seeded RNG; every
 * operator family against hand-computed values (and backward operators
 * against finite differences of their forward operators); the comm.*
 * collectives with 2 and 3 ranks against the spec's table; graph runs,
 * bound expressions and symbol picking; and the list of registered
 * operators without an evaluator, which must be empty. */
#include "shardcheck/interp.h"

#include <math.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------- */

static sc_tvalue *tv(sc_dtype dt, uint32_t rank, const int64_t *dims, const double *data) {
  GError *err = NULL;
  sc_tvalue *v = sc_tvalue_new_from(dt, rank, dims, data, &err);
  g_assert_no_error(err);
  return v;
}

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define DATA(...) ((const double[]){__VA_ARGS__})
#define T(dt, rank, dims, data) tv(SC_DTYPE_##dt, rank, dims, data)

/* Expression items to raw values: NAME -> STR (None/True/False), INT,
 * FLOAT, STRING -> STR, LIST -> LIST. */
static sc_value raw_of(const sc_expr *e) {
  sc_value v = sc_value_none();
  switch (e->kind) {
  case SC_EXPR_NAME:
    if (strcmp(e->text, "None") == 0)
      return sc_value_none();
    if (strcmp(e->text, "True") == 0)
      return sc_value_bool(TRUE);
    if (strcmp(e->text, "False") == 0)
      return sc_value_bool(FALSE);
    return sc_value_str(e->text);
  case SC_EXPR_STRING: return sc_value_str(e->text);
  case SC_EXPR_INT: return sc_value_int(e->ival);
  case SC_EXPR_FLOAT: return sc_value_float(e->fval);
  case SC_EXPR_LIST:
    v.kind = SC_VAL_LIST;
    v.u.items.n = e->n_args;
    v.u.items.v = g_new0(sc_value, e->n_args ? e->n_args : 1);
    for (uint32_t i = 0; i < e->n_args; i++)
      v.u.items.v[i] = raw_of(e->args[i]);
    return v;
  default: g_assert_not_reached();
  }
  return v;
}

/* Tensors are named t0, t1, ... by their index. */
static gboolean resolve_t(void *env, const char *name, sc_id *out) {
  uint32_t n = GPOINTER_TO_UINT(env);
  if (name[0] != 't' || !g_ascii_isdigit(name[1]))
    return FALSE;
  guint64 i = g_ascii_strtoull(name + 1, NULL, 10);
  if (i >= n)
    return FALSE;
  *out = (sc_id)i;
  return TRUE;
}

/* Run OP with arguments ARGS ("t0, 1, dim=2") over INS; the results, or
 * NULL with *ERROR set.  INS are freed. */
static GPtrArray *run_full(const char *op_name, const char *args, sc_tvalue **ins, uint32_t n,
                           const sc_interp_config *cfg, GError **error) {
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup(op_name, &err);
  g_assert_no_error(err);
  g_autofree char *text = g_strdup_printf("f(%s)", args);
  g_autoptr(sc_expr) e = sc_expr_parse(text, &err);
  g_assert_no_error(err);
  uint32_t np = 0, nk = 0;
  sc_value *pos = g_new0(sc_value, e->n_args + 1), *kwv = g_new0(sc_value, e->n_args + 1);
  const char **kwn = g_new0(const char *, e->n_args + 1);
  for (uint32_t i = 0; i < e->n_args; i++) {
    if (e->keys[i] != NULL) {
      kwn[nk] = e->keys[i];
      kwv[nk++] = raw_of(e->args[i]);
    } else {
      pos[np++] = raw_of(e->args[i]);
    }
  }
  sc_value *bound = g_new0(sc_value, op->n_args + 1);
  sc_bind_loc loc;
  g_autoptr(sc_symtab) st = sc_symtab_new();
  gboolean ok = sc_ops_bind(op, st, pos, np, kwn, kwv, nk, resolve_t, GUINT_TO_POINTER(n), bound,
                            &loc, &err);
  g_assert_no_error(err);
  g_assert_true(ok);
  GPtrArray *res = g_ptr_array_new_with_free_func((GDestroyNotify)sc_tvalue_free);
  ok = sc_interp_eval(op, bound, st, NULL, ins, n, cfg, res, error);
  for (uint32_t i = 0; i < np; i++)
    sc_value_clear(&pos[i]);
  for (uint32_t i = 0; i < nk; i++)
    sc_value_clear(&kwv[i]);
  for (uint32_t i = 0; i < op->n_args; i++)
    sc_value_clear(&bound[i]);
  g_free(pos);
  g_free(kwv);
  g_free(kwn);
  g_free(bound);
  for (uint32_t i = 0; i < n; i++)
    sc_tvalue_free(ins[i]);
  if (!ok) {
    g_ptr_array_unref(res);
    return NULL;
  }
  return res;
}

static GPtrArray *run(const char *op, const char *args, sc_tvalue **ins, uint32_t n) {
  GError *err = NULL;
  GPtrArray *r = run_full(op, args, ins, n, NULL, &err);
  g_assert_no_error(err);
  g_assert_nonnull(r);
  return r;
}

/* The single result of OP. */
static sc_tvalue *run1(const char *op, const char *args, sc_tvalue **ins, uint32_t n) {
  GPtrArray *r = run(op, args, ins, n);
  g_assert_cmpuint(r->len, >=, 1);
  sc_tvalue *v = r->pdata[0];
  r->pdata[0] = NULL;
  g_ptr_array_unref(r);
  return v;
}

/* The error of a failing OP. */
static void run_fails(const char *op, const char *args, sc_tvalue **ins, uint32_t n, int code,
                      const char *needle) {
  GError *err = NULL;
  GPtrArray *r = run_full(op, args, ins, n, NULL, &err);
  g_assert_null(r);
  g_assert_error(err, SC_INTERP_ERROR, code);
  if (strstr(err->message, needle) == NULL)
    g_error("message '%s' lacks '%s'", err->message, needle);
  g_error_free(err);
}

static void expect(const sc_tvalue *v, sc_dtype dt, uint32_t rank, const int64_t *dims,
                   const double *data, double tol) {
  g_autofree char *s = sc_tvalue_to_string(v, 0);
  if (v->dtype != dt || v->rank != rank)
    g_error("got %s, expected dtype %s rank %u", s, sc_dtype_name(dt), rank);
  for (uint32_t i = 0; i < rank; i++)
    if (v->dims[i] != dims[i])
      g_error("got %s: dim %u is not %" G_GINT64_FORMAT, s, i, (gint64)dims[i]);
  for (int64_t i = 0; i < v->numel; i++) {
    gboolean same = (isnan(data[i]) && isnan(v->data[i])) || v->data[i] == data[i] ||
                    fabs(v->data[i] - data[i]) <= tol;
    if (!same)
      g_error("got %s: element %" G_GINT64_FORMAT " is %.17g, expected %.17g", s, (gint64)i,
              v->data[i], data[i]);
  }
}

#define EXPECT(v, dt, rank, dims, data) expect(v, SC_DTYPE_##dt, rank, dims, data, 0.0)
#define EXPECT_NEAR(v, dt, rank, dims, data, tol) expect(v, SC_DTYPE_##dt, rank, dims, data, tol)

static void expect_free(sc_tvalue *v, sc_dtype dt, uint32_t rank, const int64_t *dims,
                        const double *data, double tol) {
  expect(v, dt, rank, dims, data, tol);
  sc_tvalue_free(v);
}
#define CHECK1(op, args, ins, n, dt, rank, dims, data) \
  expect_free(run1(op, args, ins, n), SC_DTYPE_##dt, rank, dims, data, 1e-12)

/* ---- values ---------------------------------------------------------------- */

static void test_tvalue_new(void) {
  GError *err = NULL;
  g_assert_null(sc_tvalue_new(SC_DTYPE_F32, 2, DIMS(INT64_MAX, 4), 0, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_LIMIT);
  g_clear_error(&err);
  g_assert_null(sc_tvalue_new(SC_DTYPE_F32, 1, DIMS(11), 10, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_LIMIT);
  g_assert_nonnull(strstr(err->message, "more than 10 elements"));
  g_clear_error(&err);
  g_assert_null(sc_tvalue_new(SC_DTYPE_F32, 1, DIMS(-1), 0, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_INVALID);
  g_clear_error(&err);
  g_autoptr(sc_tvalue) z = sc_tvalue_new(SC_DTYPE_I64, 2, DIMS(2, 0), 0, &err);
  g_assert_no_error(err);
  g_assert_cmpint(z->numel, ==, 0);
  g_assert_null(z->data);
  g_autoptr(sc_tvalue) s = sc_tvalue_new_scalar(SC_DTYPE_F64, 2.5);
  g_assert_cmpint(s->numel, ==, 1);
  g_assert_cmpfloat(s->data[0], ==, 2.5);
  g_autoptr(sc_tvalue) c = sc_tvalue_copy(s);
  g_assert_cmpfloat(c->data[0], ==, 2.5);
  g_assert_true(c->data != s->data);
}

static void test_tvalue_round(void) {
  GError *err = NULL;
  g_autoptr(sc_tvalue) a =
      T(I32, 1, DIMS(4), DATA(2147483648.0, -1.7, 3.9, -2147483649.0));
  EXPECT(a, I32, 1, DIMS(4), DATA(-2147483648.0, -1, 3, 2147483647.0));
  g_autoptr(sc_tvalue) b = T(U8, 1, DIMS(2), DATA(256, -1));
  EXPECT(b, U8, 1, DIMS(2), DATA(0, 255));
  g_autoptr(sc_tvalue) c = T(BOOL, 1, DIMS(3), DATA(0, -2, NAN));
  EXPECT(c, BOOL, 1, DIMS(3), DATA(0, 1, 1));
  g_assert_null(sc_tvalue_new_from(SC_DTYPE_I64, 1, DIMS(1), DATA(9007199254740994.0), &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_RANGE);
  g_assert_nonnull(strstr(err->message, "2^53"));
  g_clear_error(&err);
  g_assert_null(sc_tvalue_new_from(SC_DTYPE_I64, 1, DIMS(1), DATA(NAN), &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_RANGE);
  g_clear_error(&err);
  /* f32 keeps float64 values (no rounding to the narrower type) */
  g_autoptr(sc_tvalue) f = T(F32, 0, NULL, DATA(0.1));
  g_assert_cmpfloat(f->data[0], ==, 0.1);
}

static void test_tvalue_print(void) {
  g_autoptr(sc_tvalue) a = T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5.5, -6));
  g_autofree char *s = sc_tvalue_to_string(a, 0);
  g_assert_cmpstr(s, ==, "f32[2, 3] [[1, 2, 3], [4, 5.5, -6]]");
  g_autoptr(sc_tvalue) b = T(BOOL, 1, DIMS(2), DATA(1, 0));
  g_autofree char *sb = sc_tvalue_to_string(b, 0);
  g_assert_cmpstr(sb, ==, "bool[2] [True, False]");
  g_autoptr(sc_tvalue) c = T(I64, 0, NULL, DATA(7));
  g_autofree char *sc = sc_tvalue_to_string(c, 0);
  g_assert_cmpstr(sc, ==, "i64[] 7");
  g_autoptr(sc_tvalue) d = T(F64, 1, DIMS(5), DATA(1, 2, 3, NAN, INFINITY));
  g_autofree char *sd = sc_tvalue_to_string(d, 3);
  g_assert_cmpstr(sd, ==, "f64[5] [1, 2, 3, ...]");
  g_autofree char *sd2 = sc_tvalue_to_string(d, 0);
  g_assert_cmpstr(sd2, ==, "f64[5] [1, 2, 3, nan, inf]");
}

/* Issue 19: an expected value near zero made the relative error huge
 * ("largest rel error 5.42e+280" while every element held to 1.8e-14):
 * the denominator is floored at atol * scale / rtol. */
static void test_compare_rel_near_zero(void) {
  g_autoptr(sc_tvalue) a = T(F64, 1, DIMS(3), DATA(3e-295, 1, 2));
  g_autoptr(sc_tvalue) b = T(F64, 1, DIMS(3), DATA(1.8e-14, 1, 2));
  sc_tcompare r;
  g_assert_true(sc_tvalue_compare(a, b, NULL, &r));
  g_assert_cmpfloat_with_epsilon(r.max_abs_diff, 1.8e-14, 1e-20);
  /* scale 2, atol 1e-9, rtol 1e-7: floor 0.02 */
  g_assert_cmpfloat(r.max_rel_diff, <, 1e-11);
  g_assert_cmpfloat_with_epsilon(r.max_rel_diff, 1.8e-14 / 0.02, 1e-20);
}

static void test_compare(void) {
  g_autoptr(sc_tvalue) a = T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4));
  g_autoptr(sc_tvalue) b = T(F32, 2, DIMS(2, 2), DATA(1, 2, 3.5, 4));
  g_autoptr(sc_tvalue) c = T(F32, 2, DIMS(2, 2), DATA(1 + 1e-12, 2, 3, 4));
  sc_tcompare r;
  g_assert_false(sc_tvalue_compare(a, b, NULL, &r));
  g_assert_cmpint(r.n_differ, ==, 1);
  g_assert_cmpint(r.first_index, ==, 2);
  g_assert_cmpint(r.first_coords[0], ==, 1);
  g_assert_cmpint(r.first_coords[1], ==, 0);
  g_assert_cmpfloat_with_epsilon(r.max_abs_diff, 0.5, 1e-15);
  g_assert_cmpfloat_with_epsilon(r.max_rel_diff, 0.5 / 3, 1e-15);
  g_autofree char *s = sc_tcompare_to_string(&r, a, b);
  g_assert_cmpstr(s, ==,
                  "max abs diff 0.5, max rel diff 0.166667, 1 of 4 differ, first at [1, 0]: "
                  "expected 3, got 3.5");
  g_assert_true(sc_tvalue_compare(a, c, NULL, &r));
  /* the tolerance scales with the values: 1e-9 * 1e6 */
  g_autoptr(sc_tvalue) big = T(F64, 1, DIMS(2), DATA(1e6, 1));
  g_autoptr(sc_tvalue) big2 = T(F64, 1, DIMS(2), DATA(1e6, 1 + 5e-4));
  sc_tolerance tol = {1e-9, 0, TRUE};
  g_assert_true(sc_tvalue_compare(big, big2, &tol, &r));
  g_autoptr(sc_tvalue) big3 = T(F64, 1, DIMS(2), DATA(1e6, 1 + 5e-3));
  g_assert_false(sc_tvalue_compare(big, big3, &tol, &r));
  g_assert_cmpint(r.first_index, ==, 1);
  /* NaN */
  g_autoptr(sc_tvalue) n1 = T(F64, 1, DIMS(1), DATA(NAN));
  g_autoptr(sc_tvalue) n2 = T(F64, 1, DIMS(1), DATA(NAN));
  g_assert_true(sc_tvalue_compare(n1, n2, NULL, &r));
  tol.equal_nan = FALSE;
  g_assert_false(sc_tvalue_compare(n1, n2, &tol, &r));
  /* shapes and dtypes */
  g_autoptr(sc_tvalue) t = T(F32, 2, DIMS(1, 4), DATA(1, 2, 3, 4));
  g_assert_false(sc_tvalue_compare(a, t, NULL, &r));
  g_assert_true(r.shape_differs);
  g_autofree char *s2 = sc_tcompare_to_string(&r, a, t);
  g_assert_cmpstr(s2, ==, "shapes differ: [2, 2] vs [1, 4]");
  g_autoptr(sc_tvalue) d = T(F64, 2, DIMS(2, 2), DATA(1, 2, 3, 4));
  g_assert_false(sc_tvalue_compare(a, d, NULL, &r));
  g_assert_true(r.dtype_differs);
  g_assert_cmpint(r.n_differ, ==, 0);
}

static void test_rng(void) {
  sc_rng a, b;
  sc_rng_seed(&a, 42);
  sc_rng_seed(&b, 42);
  for (int i = 0; i < 100; i++)
    g_assert_cmpuint(sc_rng_next(&a), ==, sc_rng_next(&b));
  sc_rng_seed(&b, 43);
  g_assert_cmpuint(sc_rng_next(&a), !=, sc_rng_next(&b));
  gboolean seen[7] = {FALSE};
  for (int i = 0; i < 2000; i++) {
    int64_t v = sc_rng_int(&a, -3, 3);
    g_assert_cmpint(v, >=, -3);
    g_assert_cmpint(v, <=, 3);
    seen[v + 3] = TRUE;
    double u = sc_rng_double(&a);
    g_assert_cmpfloat(u, >=, 0.0);
    g_assert_cmpfloat(u, <, 1.0);
  }
  for (int i = 0; i < 7; i++)
    g_assert_true(seen[i]);
  g_assert_cmpint(sc_rng_int(&a, 5, 5), ==, 5);
  GError *err = NULL;
  g_autoptr(sc_tvalue) v = sc_tvalue_new(SC_DTYPE_F32, 1, DIMS(100), 0, &err);
  sc_tvalue_fill_uniform(v, &a, -2, -1);
  for (int i = 0; i < 100; i++) {
    g_assert_cmpfloat(v->data[i], >=, -2);
    g_assert_cmpfloat(v->data[i], <, -1);
  }
  g_autoptr(sc_tvalue) w = sc_tvalue_new(SC_DTYPE_I64, 1, DIMS(100), 0, &err);
  sc_tvalue_fill_ints(w, &a, 10, 12);
  for (int i = 0; i < 100; i++)
    g_assert_true(w->data[i] == 10 || w->data[i] == 11 || w->data[i] == 12);
}

static void test_empty_pattern(void) {
  g_autoptr(sc_tvalue) e = run1("aten.empty.memory_format", "[2, 2]", NULL, 0);
  g_assert_cmpint(sc_tvalue_count_empty_marks(e), ==, 4);
  g_assert_true(isnan(e->data[0]));
  sc_tvalue *ins[2] = {sc_tvalue_copy(e), T(F32, 0, NULL, DATA(1))};
  g_autoptr(sc_tvalue) s = run1("aten.add.Tensor", "t0, t1", ins, 2);
  g_assert_cmpint(sc_tvalue_count_empty_marks(s), ==, 4);
  sc_tvalue *ins2[1] = {T(I64, 1, DIMS(2), DATA(1, 2))};
  g_autoptr(sc_tvalue) ei = run1("aten.empty_like.default", "t0", ins2, 1);
  EXPECT(ei, I64, 1, DIMS(2), DATA(-6086317, -6086317));
  g_autoptr(sc_tvalue) z = T(F32, 1, DIMS(2), DATA(NAN, 0));
  g_assert_cmpint(sc_tvalue_count_empty_marks(z), ==, 0);
}

/* ---- matrix products ---------------------------------------------------------- */

static void test_mm(void) {
  sc_tvalue *ins[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)),
                       T(F32, 2, DIMS(3, 2), DATA(7, 8, 9, 10, 11, 12))};
  CHECK1("aten.mm.default", "t0, t1", ins, 2, F32, 2, DIMS(2, 2), DATA(58, 64, 139, 154));
  sc_tvalue *bad[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)),
                       T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  run_fails("aten.mm.default", "t0, t1", bad, 2, SC_INTERP_ERROR_SHAPE, "aten.mm");
}

static void test_bmm_matmul(void) {
  sc_tvalue *ins[2] = {T(F64, 3, DIMS(2, 1, 2), DATA(1, 2, 3, 4)),
                       T(F64, 3, DIMS(2, 2, 1), DATA(1, 1, 2, 0))};
  CHECK1("aten.bmm.default", "t0, t1", ins, 2, F64, 3, DIMS(2, 1, 1), DATA(3, 6));
  /* vector @ matrix, matrix @ vector, vector @ vector */
  sc_tvalue *a[2] = {T(F64, 1, DIMS(2), DATA(1, 2)), T(F64, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.matmul.default", "t0, t1", a, 2, F64, 1, DIMS(3), DATA(9, 12, 15));
  sc_tvalue *b[2] = {T(F64, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)), T(F64, 1, DIMS(3), DATA(1, 0, -1))};
  CHECK1("aten.matmul.default", "t0, t1", b, 2, F64, 1, DIMS(2), DATA(-2, -2));
  sc_tvalue *c[2] = {T(F64, 1, DIMS(3), DATA(1, 2, 3)), T(F64, 1, DIMS(3), DATA(4, 5, 6))};
  CHECK1("aten.matmul.default", "t0, t1", c, 2, F64, 0, NULL, DATA(32));
  /* broadcast batch: [2, 1, 2] @ [2, 1] */
  sc_tvalue *d[2] = {T(F64, 3, DIMS(2, 1, 2), DATA(1, 2, 3, 4)), T(F64, 2, DIMS(2, 1), DATA(10, 1))};
  CHECK1("aten.matmul.default", "t0, t1", d, 2, F64, 3, DIMS(2, 1, 1), DATA(12, 34));
}

static void test_addmm_linear(void) {
  sc_tvalue *ins[3] = {T(F32, 1, DIMS(2), DATA(1, -1)), T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4)),
                       T(F32, 2, DIMS(2, 2), DATA(1, 0, 0, 1))};
  CHECK1("aten.addmm.default", "t0, t1, t2, beta=2, alpha=3", ins, 3, F32, 2, DIMS(2, 2),
         DATA(5, 4, 11, 10));
  /* beta = 0 ignores self, NaN included */
  sc_tvalue *n[3] = {T(F32, 1, DIMS(2), DATA(NAN, NAN)), T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4)),
                     T(F32, 2, DIMS(2, 2), DATA(1, 0, 0, 1))};
  CHECK1("aten.addmm.default", "t0, t1, t2, beta=0", n, 3, F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4));
  sc_tvalue *l[3] = {T(F32, 3, DIMS(1, 2, 3), DATA(1, 2, 3, 4, 5, 6)),
                     T(F32, 2, DIMS(2, 3), DATA(1, 0, 0, 0, 1, 1)), T(F32, 1, DIMS(2), DATA(10, 20))};
  CHECK1("aten.linear.default", "t0, t1, t2", l, 3, F32, 3, DIMS(1, 2, 2), DATA(11, 25, 14, 31));
  sc_tvalue *bb[3] = {T(F32, 3, DIMS(2, 1, 1), DATA(1, 2)), T(F32, 3, DIMS(2, 1, 2), DATA(1, 2, 3, 4)),
                      T(F32, 3, DIMS(2, 2, 1), DATA(1, 1, 1, 1))};
  CHECK1("aten.baddbmm.default", "t0, t1, t2, alpha=2", bb, 3, F32, 3, DIMS(2, 1, 1),
         DATA(7, 16));
}

/* ---- elementwise ---------------------------------------------------------------- */

static void test_add_broadcast(void) {
  sc_tvalue *ins[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)),
                       T(F32, 2, DIMS(2, 1), DATA(10, 20))};
  CHECK1("aten.add.Tensor", "t0, t1, alpha=2", ins, 2, F32, 2, DIMS(2, 3),
         DATA(21, 22, 23, 44, 45, 46));
  /* i64 tensor + float scalar -> f32 (default dtype), computed in float64 */
  sc_tvalue *a[1] = {T(I64, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.add.Scalar", "t0, 0.5", a, 1, F32, 1, DIMS(2), DATA(1.5, 2.5));
  sc_tvalue *b[2] = {T(I32, 1, DIMS(2), DATA(2147483647, 1)), T(I32, 1, DIMS(2), DATA(1, 1))};
  CHECK1("aten.add.Tensor", "t0, t1", b, 2, I32, 1, DIMS(2), DATA(-2147483648.0, 2));
  sc_tvalue *c[2] = {T(F32, 1, DIMS(2), DATA(1, 2)), T(F32, 1, DIMS(2), DATA(5, 7))};
  CHECK1("aten.rsub.Tensor", "t0, t1, alpha=2", c, 2, F32, 1, DIMS(2), DATA(3, 3));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.rsub.Scalar", "t0, 1", d, 1, F32, 1, DIMS(2), DATA(0, -1));
  sc_tvalue *e[2] = {T(BOOL, 1, DIMS(2), DATA(1, 0)), T(BOOL, 1, DIMS(2), DATA(1, 0))};
  CHECK1("aten.mul.Tensor", "t0, t1", e, 2, BOOL, 1, DIMS(2), DATA(1, 0));
  sc_tvalue *f[1] = {T(I64, 1, DIMS(1), DATA(4503599627370496.0))};
  run_fails("aten.mul.Scalar", "t0, 4", f, 1, SC_INTERP_ERROR_RANGE, "2^53");
}

static void test_div_modes(void) {
  sc_tvalue *a[2] = {T(I64, 1, DIMS(4), DATA(7, -7, 7, -7)), T(I64, 1, DIMS(4), DATA(2, 2, -2, -2))};
  CHECK1("aten.div.Tensor_mode", "t0, t1, rounding_mode=\"floor\"", a, 2, I64, 1, DIMS(4),
         DATA(3, -4, -4, 3));
  sc_tvalue *b[2] = {T(I64, 1, DIMS(4), DATA(7, -7, 7, -7)), T(I64, 1, DIMS(4), DATA(2, 2, -2, -2))};
  CHECK1("aten.div.Tensor_mode", "t0, t1, rounding_mode=\"trunc\"", b, 2, I64, 1, DIMS(4),
         DATA(3, -3, -3, 3));
  sc_tvalue *c[2] = {T(I64, 1, DIMS(2), DATA(7, -7)), T(I64, 1, DIMS(2), DATA(2, 2))};
  CHECK1("aten.div.Tensor", "t0, t1", c, 2, F32, 1, DIMS(2), DATA(3.5, -3.5));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(2), DATA(-7.5, 7.5))};
  CHECK1("aten.div.Scalar_mode", "t0, 2, rounding_mode=\"floor\"", d, 1, F32, 1, DIMS(2),
         DATA(-4, 3));
  sc_tvalue *e[2] = {T(I64, 1, DIMS(1), DATA(1)), T(I64, 1, DIMS(1), DATA(0))};
  run_fails("aten.div.Tensor_mode", "t0, t1, rounding_mode=\"floor\"", e, 2,
            SC_INTERP_ERROR_INVALID, "ZeroDivisionError");
  sc_tvalue *f[1] = {T(F32, 1, DIMS(2), DATA(1, -1))};
  CHECK1("aten.div.Scalar", "t0, 0", f, 1, F32, 1, DIMS(2), DATA(INFINITY, -INFINITY));
}

static void test_pow_clamp(void) {
  sc_tvalue *a[1] = {T(I64, 1, DIMS(3), DATA(2, -3, 10))};
  CHECK1("aten.pow.Tensor_Scalar", "t0, 3", a, 1, I64, 1, DIMS(3), DATA(8, -27, 1000));
  sc_tvalue *b[1] = {T(I64, 1, DIMS(1), DATA(2))};
  run_fails("aten.pow.Tensor_Scalar", "t0, -1", b, 1, SC_INTERP_ERROR_SHAPE,
            "negative integer powers");
  sc_tvalue *c[1] = {T(F32, 1, DIMS(2), DATA(4, 2))};
  CHECK1("aten.pow.Tensor_Scalar", "t0, 0.5", c, 1, F32, 1, DIMS(2), DATA(2, sqrt(2)));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.pow.Scalar", "2, t0", d, 1, F32, 1, DIMS(2), DATA(2, 4));
  sc_tvalue *e[1] = {T(F32, 1, DIMS(4), DATA(-2, 0.5, 3, NAN))};
  CHECK1("aten.clamp.default", "t0, -1, 1", e, 1, F32, 1, DIMS(4), DATA(-1, 0.5, 1, NAN));
  sc_tvalue *f[2] = {T(F32, 1, DIMS(3), DATA(-2, 0.5, 3)), T(F32, 1, DIMS(3), DATA(0, 1, 2))};
  CHECK1("aten.clamp.Tensor", "t0, min=t1", f, 2, F32, 1, DIMS(3), DATA(0, 1, 3));
  sc_tvalue *g[2] = {T(F32, 1, DIMS(2), DATA(1, NAN)), T(F32, 1, DIMS(2), DATA(2, 0))};
  CHECK1("aten.maximum.default", "t0, t1", g, 2, F32, 1, DIMS(2), DATA(2, NAN));
  sc_tvalue *h[2] = {T(F32, 1, DIMS(2), DATA(1, 3)), T(F32, 1, DIMS(2), DATA(2, 0))};
  CHECK1("aten.minimum.default", "t0, t1", h, 2, F32, 1, DIMS(2), DATA(1, 0));
}

static void test_compare_ops(void) {
  sc_tvalue *a[2] = {T(F32, 1, DIMS(3), DATA(1, 2, NAN)), T(F32, 1, DIMS(3), DATA(2, 2, NAN))};
  CHECK1("aten.lt.Tensor", "t0, t1", a, 2, BOOL, 1, DIMS(3), DATA(1, 0, 0));
  sc_tvalue *b[2] = {T(F32, 1, DIMS(3), DATA(1, 2, NAN)), T(F32, 1, DIMS(3), DATA(2, 2, NAN))};
  CHECK1("aten.ne.Tensor", "t0, t1", b, 2, BOOL, 1, DIMS(3), DATA(1, 0, 1));
  sc_tvalue *c[1] = {T(I64, 1, DIMS(3), DATA(1, 2, 3))};
  CHECK1("aten.ge.Scalar", "t0, 2", c, 1, BOOL, 1, DIMS(3), DATA(0, 1, 1));
  sc_tvalue *d[1] = {T(I64, 1, DIMS(3), DATA(1, 2, 3))};
  CHECK1("aten.eq.Scalar", "t0, 2", d, 1, BOOL, 1, DIMS(3), DATA(0, 1, 0));
  sc_tvalue *e[2] = {T(I64, 1, DIMS(2), DATA(12, 5)), T(I64, 1, DIMS(2), DATA(10, 3))};
  CHECK1("aten.bitwise_and.Tensor", "t0, t1", e, 2, I64, 1, DIMS(2), DATA(8, 1));
  sc_tvalue *f[2] = {T(I64, 1, DIMS(2), DATA(12, 5)), T(I64, 1, DIMS(2), DATA(10, 3))};
  CHECK1("aten.bitwise_xor.Tensor", "t0, t1", f, 2, I64, 1, DIMS(2), DATA(6, 6));
  sc_tvalue *g[1] = {T(I64, 1, DIMS(2), DATA(0, 5))};
  CHECK1("aten.bitwise_not.default", "t0", g, 1, I64, 1, DIMS(2), DATA(-1, -6));
  sc_tvalue *h[1] = {T(BOOL, 1, DIMS(2), DATA(0, 1))};
  CHECK1("aten.bitwise_not.default", "t0", h, 1, BOOL, 1, DIMS(2), DATA(1, 0));
  sc_tvalue *i[2] = {T(F32, 1, DIMS(3), DATA(0, 1, 2)), T(BOOL, 1, DIMS(3), DATA(1, 0, 1))};
  CHECK1("aten.logical_and.default", "t0, t1", i, 2, BOOL, 1, DIMS(3), DATA(0, 0, 1));
  sc_tvalue *j[1] = {T(F32, 1, DIMS(2), DATA(0, 3))};
  CHECK1("aten.logical_not.default", "t0", j, 1, BOOL, 1, DIMS(2), DATA(1, 0));
}

static void test_unary(void) {
  sc_tvalue *a[1] = {T(F32, 1, DIMS(3), DATA(-1, 0, 2))};
  CHECK1("aten.relu.default", "t0", a, 1, F32, 1, DIMS(3), DATA(0, 0, 2));
  sc_tvalue *b[1] = {T(F32, 1, DIMS(2), DATA(0, 1))};
  CHECK1("aten.sigmoid.default", "t0", b, 1, F32, 1, DIMS(2), DATA(0.5, 1 / (1 + exp(-1))));
  sc_tvalue *c[1] = {T(F32, 1, DIMS(2), DATA(4, 0.25))};
  CHECK1("aten.rsqrt.default", "t0", c, 1, F32, 1, DIMS(2), DATA(0.5, 2));
  sc_tvalue *d[1] = {T(I64, 1, DIMS(2), DATA(-3, 4))};
  CHECK1("aten.abs.default", "t0", d, 1, I64, 1, DIMS(2), DATA(3, 4));
  sc_tvalue *e[1] = {T(I64, 1, DIMS(1), DATA(4))};
  CHECK1("aten.sqrt.default", "t0", e, 1, F32, 1, DIMS(1), DATA(2));
  sc_tvalue *f[1] = {T(F32, 1, DIMS(2), DATA(0, 1))};
  CHECK1("aten.silu.default", "t0", f, 1, F32, 1, DIMS(2), DATA(0, 1 / (1 + exp(-1))));
  sc_tvalue *g[1] = {T(F32, 1, DIMS(2), DATA(0, 100))};
  CHECK1("aten.log_sigmoid.default", "t0", g, 1, F32, 1, DIMS(2), DATA(-log(2), 0));
  sc_tvalue *h[1] = {T(F32, 1, DIMS(2), DATA(0, 30))};
  CHECK1("aten.softplus.default", "t0", h, 1, F32, 1, DIMS(2), DATA(log(2), 30));
  sc_tvalue *i[1] = {T(F32, 1, DIMS(2), DATA(1, -2))};
  CHECK1("aten.neg.default", "t0", i, 1, F32, 1, DIMS(2), DATA(-1, 2));
}

static void test_gelu(void) {
  sc_tvalue *a[1] = {T(F32, 1, DIMS(3), DATA(-1, 0, 1))};
  expect_free(run1("aten.gelu.default", "t0", a, 1), SC_DTYPE_F32, 1, DIMS(3),
              DATA(-0.15865525393145707, 0, 0.8413447460685429), 1e-15);
}

static void test_gelu_tanh(void) {
  sc_tvalue *a[1] = {T(F32, 1, DIMS(2), DATA(1, -2))};
  sc_tvalue *v = run1("aten.gelu.default", "t0, approximate=\"tanh\"", a, 1);
  expect_free(v, SC_DTYPE_F32, 1, DIMS(2), DATA(0.8411919906082768, -0.04540230591222), 1e-12);
  sc_tvalue *b[1] = {T(F32, 1, DIMS(1), DATA(1))};
  run_fails("aten.gelu.default", "t0, approximate=\"fast\"", b, 1, SC_INTERP_ERROR_SHAPE,
            "approximate");
}

/* d/dx of unary OP at X by central differences. */
static double numeric_grad(const char *op, const char *extra, double x) {
  double h = 1e-6;
  g_autofree char *args = g_strdup_printf("t0%s", extra);
  sc_tvalue *p[1] = {T(F64, 0, NULL, DATA(x + h))};
  sc_tvalue *m[1] = {T(F64, 0, NULL, DATA(x - h))};
  g_autoptr(sc_tvalue) yp = run1(op, args, p, 1);
  g_autoptr(sc_tvalue) ym = run1(op, args, m, 1);
  return (yp->data[0] - ym->data[0]) / (2 * h);
}

static void test_activation_backward(void) {
  const double xs[] = {-1.5, -0.3, 0.2, 2.0};
  for (size_t k = 0; k < G_N_ELEMENTS(xs); k++) {
    double x = xs[k];
    sc_tvalue *a[2] = {T(F64, 0, NULL, DATA(2.0)), T(F64, 0, NULL, DATA(x))};
    g_autoptr(sc_tvalue) g = run1("aten.gelu_backward.default", "t0, t1", a, 2);
    g_assert_cmpfloat_with_epsilon(g->data[0], 2 * numeric_grad("aten.gelu.default", "", x), 1e-7);
    sc_tvalue *b[2] = {T(F64, 0, NULL, DATA(2.0)), T(F64, 0, NULL, DATA(x))};
    g_autoptr(sc_tvalue) gt = run1("aten.gelu_backward.default", "t0, t1, approximate=\"tanh\"", b, 2);
    g_assert_cmpfloat_with_epsilon(
        gt->data[0], 2 * numeric_grad("aten.gelu.default", ", approximate=\"tanh\"", x), 1e-7);
    sc_tvalue *c[2] = {T(F64, 0, NULL, DATA(1.0)), T(F64, 0, NULL, DATA(x))};
    g_autoptr(sc_tvalue) gs = run1("aten.silu_backward.default", "t0, t1", c, 2);
    g_assert_cmpfloat_with_epsilon(gs->data[0], numeric_grad("aten.silu.default", "", x), 1e-7);
    /* sigmoid_backward and tanh_backward take the forward's output */
    double s = 1 / (1 + exp(-x));
    sc_tvalue *d[2] = {T(F64, 0, NULL, DATA(1.0)), T(F64, 0, NULL, DATA(s))};
    g_autoptr(sc_tvalue) gg = run1("aten.sigmoid_backward.default", "t0, t1", d, 2);
    g_assert_cmpfloat_with_epsilon(gg->data[0], numeric_grad("aten.sigmoid.default", "", x), 1e-7);
    sc_tvalue *e[2] = {T(F64, 0, NULL, DATA(1.0)), T(F64, 0, NULL, DATA(tanh(x)))};
    g_autoptr(sc_tvalue) gh = run1("aten.tanh_backward.default", "t0, t1", e, 2);
    g_assert_cmpfloat_with_epsilon(gh->data[0], numeric_grad("aten.tanh.default", "", x), 1e-7);
  }
  sc_tvalue *t[2] = {T(F32, 1, DIMS(3), DATA(5, 6, 7)), T(F32, 1, DIMS(3), DATA(-1, 0, 1))};
  CHECK1("aten.threshold_backward.default", "t0, t1, 0", t, 2, F32, 1, DIMS(3), DATA(0, 0, 7));
}

/* ---- softmax, normalization ----------------------------------------------------- */

static void test_softmax(void) {
  sc_tvalue *a[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 0, 0, 0))};
  sc_tvalue *v = run1("aten._softmax.default", "t0, 1, False", a, 1);
  expect_free(v, SC_DTYPE_F32, 2, DIMS(2, 3),
              DATA(0.09003057317038046, 0.24472847105479767, 0.6652409557748219, 1.0 / 3,
                   1.0 / 3, 1.0 / 3),
              1e-15);
  sc_tvalue *b[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 5))};
  sc_tvalue *w = run1("aten._softmax.default", "t0, 0, False", b, 1);
  double e2 = 1 / (1 + exp(2)), e3 = 1 / (1 + exp(3));
  expect_free(w, SC_DTYPE_F32, 2, DIMS(2, 2), DATA(e2, e3, 1 - e2, 1 - e3), 1e-15);
  sc_tvalue *c[1] = {T(F32, 1, DIMS(3), DATA(1, 2, 3))};
  sc_tvalue *l = run1("aten._log_softmax.default", "t0, -1, False", c, 1);
  expect_free(l, SC_DTYPE_F32, 1, DIMS(3),
              DATA(log(0.09003057317038046), log(0.24472847105479767), log(0.6652409557748219)),
              1e-14);
  /* a row of -inf gives NaN, as in ATen */
  sc_tvalue *d[1] = {T(F32, 1, DIMS(2), DATA(-INFINITY, -INFINITY))};
  CHECK1("aten._softmax.default", "t0, 0, False", d, 1, F32, 1, DIMS(2), DATA(NAN, NAN));
}

/* Finite-difference check of a backward op: loss = sum(G * f(x)). */
static void test_softmax_backward(void) {
  const double x[3] = {0.3, -1.2, 2.0}, gw[3] = {0.5, -1.0, 2.0};
  for (int logf = 0; logf < 2; logf++) {
    const char *fw = logf ? "aten._log_softmax.default" : "aten._softmax.default";
    const char *bw = logf ? "aten._log_softmax_backward_data.default"
                          : "aten._softmax_backward_data.default";
    sc_tvalue *in[1] = {T(F64, 1, DIMS(3), x)};
    sc_tvalue *y = run1(fw, "t0, 0, False", in, 1);
    sc_tvalue *b[2] = {T(F64, 1, DIMS(3), gw), y};
    g_autoptr(sc_tvalue) gx = run1(bw, "t0, t1, 0, \"f64\"", b, 2);
    for (int i = 0; i < 3; i++) {
      double xp[3], xm[3], h = 1e-6;
      memcpy(xp, x, sizeof xp);
      memcpy(xm, x, sizeof xm);
      xp[i] += h;
      xm[i] -= h;
      sc_tvalue *p[1] = {T(F64, 1, DIMS(3), xp)}, *m[1] = {T(F64, 1, DIMS(3), xm)};
      g_autoptr(sc_tvalue) yp = run1(fw, "t0, 0, False", p, 1);
      g_autoptr(sc_tvalue) ym = run1(fw, "t0, 0, False", m, 1);
      double num = 0;
      for (int j = 0; j < 3; j++)
        num += gw[j] * (yp->data[j] - ym->data[j]) / (2 * h);
      g_assert_cmpfloat_with_epsilon(gx->data[i], num, 1e-7);
    }
  }
}

static void test_layer_norm(void) {
  sc_tvalue *a[1] = {T(F32, 2, DIMS(1, 3), DATA(1, 2, 3))};
  GPtrArray *r = run("aten.native_layer_norm.default", "t0, [3], None, None, 0.0", a, 1);
  g_assert_cmpuint(r->len, ==, 3);
  double s = sqrt(1.5); /* 1 / sqrt(var) with var = 2/3 */
  EXPECT_NEAR(r->pdata[0], F32, 2, DIMS(1, 3), DATA(-s, 0, s), 1e-14);
  EXPECT_NEAR(r->pdata[1], F32, 2, DIMS(1, 1), DATA(2), 1e-15);
  EXPECT_NEAR(r->pdata[2], F32, 2, DIMS(1, 1), DATA(s), 1e-14);
  g_ptr_array_unref(r);
  sc_tvalue *b[3] = {T(F32, 1, DIMS(3), DATA(1, 2, 3)), T(F32, 1, DIMS(3), DATA(2, 2, 2)),
                     T(F32, 1, DIMS(3), DATA(1, 0, -1))};
  r = run("aten.native_layer_norm.default", "t0, [3], t1, t2, 1e-5", b, 3);
  double rs = 1 / sqrt(2.0 / 3 + 1e-5);
  EXPECT_NEAR(r->pdata[0], F32, 1, DIMS(3), DATA(-2 * rs + 1, 0, 2 * rs - 1), 1e-14);
  EXPECT_NEAR(r->pdata[2], F32, 1, DIMS(1), DATA(rs), 1e-14);
  g_ptr_array_unref(r);
  sc_tvalue *c[1] = {T(F32, 2, DIMS(1, 2), DATA(3, 4))};
  r = run("aten._fused_rms_norm.default", "t0, [2], None, 0.0", c, 1);
  double rr = 1 / sqrt(12.5);
  EXPECT_NEAR(r->pdata[0], F32, 2, DIMS(1, 2), DATA(3 * rr, 4 * rr), 1e-15);
  EXPECT_NEAR(r->pdata[1], F32, 2, DIMS(1, 1), DATA(rr), 1e-15);
  g_ptr_array_unref(r);
}

static void test_layer_norm_backward(void) {
  const double x[6] = {0.5, -1, 2, 0.1, 0.2, -0.7}, w[3] = {1.5, -0.5, 2}, bias[3] = {0.1, 0.2, 0.3};
  const double gy[6] = {1, -2, 0.5, 0.3, 0.7, -1.1};
  sc_tvalue *in[3] = {T(F64, 2, DIMS(2, 3), x), T(F64, 1, DIMS(3), w), T(F64, 1, DIMS(3), bias)};
  GPtrArray *fw = run("aten.native_layer_norm.default", "t0, [3], t1, t2, 1e-5", in, 3);
  sc_tvalue *b[6] = {T(F64, 2, DIMS(2, 3), gy), T(F64, 2, DIMS(2, 3), x),
                     sc_tvalue_copy(fw->pdata[1]), sc_tvalue_copy(fw->pdata[2]),
                     T(F64, 1, DIMS(3), w), T(F64, 1, DIMS(3), bias)};
  g_ptr_array_unref(fw);
  GPtrArray *bw = run("aten.native_layer_norm_backward.default",
                      "t0, t1, [3], t2, t3, t4, t5, [True, True, True]", b, 6);
  const sc_tvalue *gx = bw->pdata[0], *gw = bw->pdata[1], *gb = bw->pdata[2];
  double h = 1e-6;
  for (int i = 0; i < 6; i++) {
    double xp[6], xm[6];
    memcpy(xp, x, sizeof xp);
    memcpy(xm, x, sizeof xm);
    xp[i] += h;
    xm[i] -= h;
    sc_tvalue *p[3] = {T(F64, 2, DIMS(2, 3), xp), T(F64, 1, DIMS(3), w), T(F64, 1, DIMS(3), bias)};
    sc_tvalue *m[3] = {T(F64, 2, DIMS(2, 3), xm), T(F64, 1, DIMS(3), w), T(F64, 1, DIMS(3), bias)};
    GPtrArray *yp = run("aten.native_layer_norm.default", "t0, [3], t1, t2, 1e-5", p, 3);
    GPtrArray *ym = run("aten.native_layer_norm.default", "t0, [3], t1, t2, 1e-5", m, 3);
    double num = 0;
    for (int j = 0; j < 6; j++)
      num += gy[j] * (((sc_tvalue *)yp->pdata[0])->data[j] - ((sc_tvalue *)ym->pdata[0])->data[j]) /
             (2 * h);
    g_assert_cmpfloat_with_epsilon(gx->data[i], num, 1e-6);
    g_ptr_array_unref(yp);
    g_ptr_array_unref(ym);
  }
  /* grad_bias = column sums of gy; grad_weight = sum gy * xhat */
  EXPECT_NEAR(gb, F64, 1, DIMS(3), DATA(1.3, -1.3, -0.6), 1e-12);
  g_assert_cmpuint(gw->numel, ==, 3);
  g_ptr_array_unref(bw);
}

/* ---- dropout ----------------------------------------------------------------- */

static void test_dropout(void) {
  double xs[64];
  for (int i = 0; i < 64; i++)
    xs[i] = i * 0.25 - 3;
  sc_interp_config cfg = {7, 0, NULL, NULL};
  sc_tvalue *a[1] = {T(F32, 1, DIMS(64), xs)};
  GError *err = NULL;
  GPtrArray *r = run_full("aten.native_dropout.default", "t0, 0.5, True", a, 1, &cfg, &err);
  g_assert_no_error(err);
  const sc_tvalue *out = r->pdata[0], *mask = r->pdata[1];
  g_assert_cmpint(mask->dtype, ==, SC_DTYPE_BOOL);
  int kept = 0;
  for (int i = 0; i < 64; i++) {
    kept += mask->data[i] != 0;
    g_assert_cmpfloat(out->data[i], ==, mask->data[i] != 0 ? xs[i] * 2 : 0.0);
  }
  g_assert_cmpint(kept, >, 10);
  g_assert_cmpint(kept, <, 54);
  /* the decision follows the element: the same value in another position
   * (a shard) gets the same decision */
  sc_tvalue *b[1] = {T(F32, 1, DIMS(2), DATA(xs[5], xs[40]))};
  GPtrArray *r2 = run_full("aten.native_dropout.default", "t0, 0.5, True", b, 1, &cfg, &err);
  g_assert_no_error(err);
  g_assert_cmpfloat(((sc_tvalue *)r2->pdata[1])->data[0], ==, mask->data[5]);
  g_assert_cmpfloat(((sc_tvalue *)r2->pdata[1])->data[1], ==, mask->data[40]);
  g_ptr_array_unref(r2);
  g_ptr_array_unref(r);
  /* eval mode: identity, mask all true */
  sc_tvalue *c[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  GPtrArray *r3 = run("aten.native_dropout.default", "t0, 0.5, False", c, 1);
  EXPECT(r3->pdata[0], F32, 1, DIMS(2), DATA(1, 2));
  EXPECT(r3->pdata[1], BOOL, 1, DIMS(2), DATA(1, 1));
  g_ptr_array_unref(r3);
  sc_tvalue *d[2] = {T(F32, 1, DIMS(3), DATA(1, 2, 3)), T(BOOL, 1, DIMS(3), DATA(1, 0, 1))};
  CHECK1("aten.native_dropout_backward.default", "t0, t1, 2.0", d, 2, F32, 1, DIMS(3),
         DATA(2, 0, 6));
}

/* ---- reductions ------------------------------------------------------------ */

static void test_sum_mean(void) {
  sc_tvalue *a[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.sum.dim_IntList", "t0, [1], True", a, 1, F32, 2, DIMS(2, 1), DATA(6, 15));
  sc_tvalue *b[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.sum.dim_IntList", "t0, [0]", b, 1, F32, 1, DIMS(3), DATA(5, 7, 9));
  sc_tvalue *c[1] = {T(I32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.sum.default", "t0", c, 1, I64, 0, NULL, DATA(21));
  sc_tvalue *d[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.mean.dim", "t0, [-1, 0]", d, 1, F32, 0, NULL, DATA(3.5));
  sc_tvalue *e[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten.mean.default", "t0", e, 1, F32, 0, NULL, DATA(2.5));
  sc_tvalue *f[1] = {T(F32, 1, DIMS(4), DATA(1, 2, 3, 4))};
  CHECK1("aten.var.correction", "t0", f, 1, F32, 0, NULL, DATA(5.0 / 3));
  sc_tvalue *g[1] = {T(F32, 1, DIMS(4), DATA(1, 2, 3, 4))};
  CHECK1("aten.var.correction", "t0, correction=0", g, 1, F32, 0, NULL, DATA(1.25));
  sc_tvalue *h[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten.cumsum.default", "t0, 1", h, 1, F32, 2, DIMS(2, 2), DATA(1, 3, 3, 7));
  sc_tvalue *i[1] = {T(BOOL, 1, DIMS(3), DATA(1, 1, 0))};
  CHECK1("aten.cumsum.default", "t0, 0", i, 1, I64, 1, DIMS(3), DATA(1, 2, 2));
}

static void test_max_ties(void) {
  sc_tvalue *a[1] = {T(F32, 2, DIMS(2, 3), DATA(3, 1, 3, 2, 5, 5))};
  GPtrArray *r = run("aten.max.dim", "t0, 1", a, 1);
  EXPECT(r->pdata[0], F32, 1, DIMS(2), DATA(3, 5));
  EXPECT(r->pdata[1], I64, 1, DIMS(2), DATA(0, 1));
  g_ptr_array_unref(r);
  sc_tvalue *b[1] = {T(F32, 2, DIMS(2, 2), DATA(4, 1, 1, 4))};
  r = run("aten.min.dim", "t0, 0, True", b, 1);
  EXPECT(r->pdata[0], F32, 2, DIMS(1, 2), DATA(1, 1));
  EXPECT(r->pdata[1], I64, 2, DIMS(1, 2), DATA(1, 0));
  g_ptr_array_unref(r);
  sc_tvalue *c[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 7, 7, 0))};
  CHECK1("aten.argmax.default", "t0", c, 1, I64, 0, NULL, DATA(1));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(3), DATA(1, NAN, 7))};
  CHECK1("aten.argmax.default", "t0, 0", d, 1, I64, 0, NULL, DATA(1));
  sc_tvalue *e[1] = {T(F32, 2, DIMS(2, 2), DATA(1, NAN, 3, 0))};
  CHECK1("aten.amax.default", "t0, [1]", e, 1, F32, 1, DIMS(2), DATA(NAN, 3));
  sc_tvalue *f[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 9, 3, 0))};
  CHECK1("aten.min.default", "t0", f, 1, F32, 0, NULL, DATA(0));
  sc_tvalue *g[1] = {T(F32, 1, DIMS(0), NULL)};
  run_fails("aten.max.default", "t0", g, 1, SC_INTERP_ERROR_INVALID, "zero-size");
}

static void test_topk_sort(void) {
  sc_tvalue *a[1] = {T(F32, 1, DIMS(5), DATA(2, 5, 1, 5, 2))};
  GPtrArray *r = run("aten.topk.default", "t0, 3", a, 1);
  EXPECT(r->pdata[0], F32, 1, DIMS(3), DATA(5, 5, 2));
  EXPECT(r->pdata[1], I64, 1, DIMS(3), DATA(1, 3, 0));
  g_ptr_array_unref(r);
  sc_tvalue *b[1] = {T(F32, 1, DIMS(5), DATA(2, 5, 1, 5, 2))};
  r = run("aten.topk.default", "t0, 2, largest=False", b, 1);
  EXPECT(r->pdata[0], F32, 1, DIMS(2), DATA(1, 2));
  EXPECT(r->pdata[1], I64, 1, DIMS(2), DATA(2, 0));
  g_ptr_array_unref(r);
  sc_tvalue *c[1] = {T(F32, 2, DIMS(2, 3), DATA(3, NAN, 1, 0, 0, -1))};
  r = run("aten.sort.default", "t0", c, 1);
  EXPECT(r->pdata[0], F32, 2, DIMS(2, 3), DATA(1, 3, NAN, -1, 0, 0));
  EXPECT(r->pdata[1], I64, 2, DIMS(2, 3), DATA(2, 0, 1, 2, 0, 1));
  g_ptr_array_unref(r);
  sc_tvalue *d[1] = {T(F32, 1, DIMS(4), DATA(1, 2, 1, 2))};
  r = run("aten.sort.stable", "t0, stable=True, descending=True", d, 1);
  EXPECT(r->pdata[0], F32, 1, DIMS(4), DATA(2, 2, 1, 1));
  EXPECT(r->pdata[1], I64, 1, DIMS(4), DATA(1, 3, 0, 2));
  g_ptr_array_unref(r);
}

/* ---- embedding and losses ------------------------------------------------------ */

static void test_embedding(void) {
  sc_tvalue *a[2] = {T(F32, 2, DIMS(3, 2), DATA(0, 1, 10, 11, 20, 21)),
                     T(I64, 2, DIMS(2, 2), DATA(2, 0, 1, 2))};
  CHECK1("aten.embedding.default", "t0, t1", a, 2, F32, 3, DIMS(2, 2, 2),
         DATA(20, 21, 0, 1, 10, 11, 20, 21));
  sc_tvalue *b[2] = {T(F32, 2, DIMS(3, 2), DATA(0, 1, 10, 11, 20, 21)),
                     T(I64, 1, DIMS(2), DATA(3, 0))};
  run_fails("aten.embedding.default", "t0, t1", b, 2, SC_INTERP_ERROR_INVALID,
            "index 3 is out of range");
  sc_tvalue *c[2] = {T(F32, 2, DIMS(3, 2), DATA(1, 2, 3, 4, 5, 6)), T(I64, 1, DIMS(3), DATA(1, 3, 1))};
  CHECK1("aten.embedding_dense_backward.default", "t0, t1, 4, 3, False", c, 2, F32, 2,
         DIMS(4, 2), DATA(0, 0, 6, 8, 0, 0, 0, 0));
  sc_tvalue *d[2] = {T(F32, 2, DIMS(3, 2), DATA(1, 2, 3, 4, 5, 6)), T(I64, 1, DIMS(3), DATA(1, 3, 1))};
  CHECK1("aten.embedding_dense_backward.default", "t0, t1, 4, -1, True", d, 2, F32, 2,
         DIMS(4, 2), DATA(0, 0, 3, 4, 0, 0, 3, 4));
}

static void test_nll_loss(void) {
  const double lp[6] = {-0.5, -1.0, -2.0, -0.1, -3.0, -0.7};
  sc_tvalue *a[2] = {T(F32, 2, DIMS(3, 2), lp), T(I64, 1, DIMS(3), DATA(1, -100, 0))};
  GPtrArray *r = run("aten.nll_loss_forward.default", "t0, t1, None, 1, -100", a, 2);
  EXPECT(r->pdata[0], F32, 0, NULL, DATA((1.0 + 3.0) / 2));
  EXPECT(r->pdata[1], F32, 0, NULL, DATA(2));
  g_ptr_array_unref(r);
  sc_tvalue *b[3] = {T(F32, 2, DIMS(3, 2), lp), T(I64, 1, DIMS(3), DATA(1, 0, 0)),
                     T(F32, 1, DIMS(2), DATA(2, 0.5))};
  r = run("aten.nll_loss_forward.default", "t0, t1, t2, 2, 1", b, 3);
  /* ignore_index=1 drops sample 0; samples 1 and 2 have class 0, weight 2 */
  EXPECT(r->pdata[0], F32, 0, NULL, DATA(2 * 2.0 + 2 * 3.0));
  EXPECT(r->pdata[1], F32, 0, NULL, DATA(4));
  g_ptr_array_unref(r);
  sc_tvalue *c[2] = {T(F32, 2, DIMS(3, 2), lp), T(I64, 1, DIMS(3), DATA(1, -100, 0))};
  r = run("aten.nll_loss_forward.default", "t0, t1, None, 0, -100", c, 2);
  EXPECT(r->pdata[0], F32, 1, DIMS(3), DATA(1.0, 0, 3.0));
  g_ptr_array_unref(r);
  sc_tvalue *d[2] = {T(F32, 2, DIMS(1, 2), DATA(0, 0)), T(I64, 1, DIMS(1), DATA(2))};
  run_fails("aten.nll_loss_forward.default", "t0, t1, None, 1, -100", d, 2,
            SC_INTERP_ERROR_INVALID, "Target 2 is out of bounds");
  /* backward of the mean: -1/total_weight at each non-ignored target */
  sc_tvalue *e[4] = {T(F32, 0, NULL, DATA(1)), T(F32, 2, DIMS(3, 2), lp),
                     T(I64, 1, DIMS(3), DATA(1, -100, 0)), T(F32, 0, NULL, DATA(2))};
  CHECK1("aten.nll_loss_backward.default", "t0, t1, t2, None, 1, -100, t3", e, 4, F32, 2,
         DIMS(3, 2), DATA(0, -0.5, 0, 0, -0.5, 0));
}

static void test_mse_loss(void) {
  sc_tvalue *a[2] = {T(F32, 1, DIMS(3), DATA(1, 2, 3)), T(F32, 1, DIMS(3), DATA(1, 0, 6))};
  CHECK1("aten.mse_loss.default", "t0, t1", a, 2, F32, 0, NULL, DATA(13.0 / 3));
  sc_tvalue *b[2] = {T(F32, 1, DIMS(3), DATA(1, 2, 3)), T(F32, 1, DIMS(3), DATA(1, 0, 6))};
  CHECK1("aten.mse_loss.default", "t0, t1, 0", b, 2, F32, 1, DIMS(3), DATA(0, 4, 9));
  sc_tvalue *c[3] = {T(F32, 0, NULL, DATA(1)), T(F32, 1, DIMS(3), DATA(1, 2, 3)),
                     T(F32, 1, DIMS(3), DATA(1, 0, 6))};
  CHECK1("aten.mse_loss_backward.default", "t0, t1, t2, 1", c, 3, F32, 1, DIMS(3),
         DATA(0, 4.0 / 3, -2));
  sc_tvalue *d[3] = {T(F32, 0, NULL, DATA(2)), T(F32, 1, DIMS(2), DATA(1, 2)),
                     T(F32, 1, DIMS(2), DATA(0, 0))};
  CHECK1("aten.mse_loss_backward.default", "t0, t1, t2, 2", d, 3, F32, 1, DIMS(2), DATA(4, 8));
}

/* ---- views ----------------------------------------------------------------------- */

static void test_view_permute(void) {
  sc_tvalue *a[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.view.default", "t0, [3, -1]", a, 1, F32, 2, DIMS(3, 2), DATA(1, 2, 3, 4, 5, 6));
  sc_tvalue *b[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.t.default", "t0", b, 1, F32, 2, DIMS(3, 2), DATA(1, 4, 2, 5, 3, 6));
  sc_tvalue *c[1] = {T(F32, 3, DIMS(2, 1, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.permute.default", "t0, [2, 0, 1]", c, 1, F32, 3, DIMS(3, 2, 1),
         DATA(1, 4, 2, 5, 3, 6));
  sc_tvalue *d[1] = {T(F32, 3, DIMS(2, 1, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.transpose.int", "t0, -1, 0", d, 1, F32, 3, DIMS(3, 1, 2), DATA(1, 4, 2, 5, 3, 6));
  sc_tvalue *e[1] = {T(F32, 2, DIMS(1, 3), DATA(1, 2, 3))};
  CHECK1("aten.squeeze.dim", "t0, 0", e, 1, F32, 1, DIMS(3), DATA(1, 2, 3));
  sc_tvalue *f[1] = {T(F32, 1, DIMS(3), DATA(1, 2, 3))};
  CHECK1("aten.unsqueeze.default", "t0, -1", f, 1, F32, 2, DIMS(3, 1), DATA(1, 2, 3));
  sc_tvalue *g[1] = {T(F32, 2, DIMS(2, 1), DATA(1, 2))};
  CHECK1("aten.expand.default", "t0, [2, 3]", g, 1, F32, 2, DIMS(2, 3), DATA(1, 1, 1, 2, 2, 2));
  sc_tvalue *h[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.expand.default", "t0, [2, -1]", h, 1, F32, 2, DIMS(2, 2), DATA(1, 2, 1, 2));
  sc_tvalue *i[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten._to_copy.default", "t0, dtype=\"i32\"", i, 1, I32, 2, DIMS(2, 2), DATA(1, 2, 3, 4));
  sc_tvalue *j[1] = {T(F32, 1, DIMS(3), DATA(-1.7, 2.9, 0))};
  CHECK1("aten._to_copy.default", "t0, dtype=\"i64\"", j, 1, I64, 1, DIMS(3), DATA(-1, 2, 0));
  sc_tvalue *k[1] = {T(F32, 1, DIMS(3), DATA(-1.7, 2.9, 0))};
  CHECK1("aten._to_copy.default", "t0, dtype=\"bool\"", k, 1, BOOL, 1, DIMS(3), DATA(1, 1, 0));
}

static void test_slice(void) {
  sc_tvalue *a[1] = {T(F32, 1, DIMS(6), DATA(0, 1, 2, 3, 4, 5))};
  CHECK1("aten.slice.Tensor", "t0, 0, 1, 9223372036854775807, 2", a, 1, F32, 1, DIMS(3),
         DATA(1, 3, 5));
  sc_tvalue *b[1] = {T(F32, 1, DIMS(6), DATA(0, 1, 2, 3, 4, 5))};
  CHECK1("aten.slice.Tensor", "t0, 0, -2", b, 1, F32, 1, DIMS(2), DATA(4, 5));
  sc_tvalue *c[1] = {T(F32, 1, DIMS(6), DATA(0, 1, 2, 3, 4, 5))};
  CHECK1("aten.slice.Tensor", "t0, 0, -100, -4", c, 1, F32, 1, DIMS(2), DATA(0, 1));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(6), DATA(0, 1, 2, 3, 4, 5))};
  CHECK1("aten.slice.Tensor", "t0, 0, 4, 2", d, 1, F32, 1, DIMS(0), DATA(0));
  sc_tvalue *e[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.slice.Tensor", "t0, 1, 1, None", e, 1, F32, 2, DIMS(2, 2), DATA(2, 3, 5, 6));
  sc_tvalue *f[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.narrow.default", "t0, 1, -2, 2", f, 1, F32, 2, DIMS(2, 2), DATA(2, 3, 5, 6));
  sc_tvalue *g[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.select.int", "t0, 1, -1", g, 1, F32, 1, DIMS(2), DATA(3, 6));
  sc_tvalue *h[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("sc.slice.default", "t0, dim=1, start=0, end=2", h, 1, F32, 2, DIMS(2, 2),
         DATA(1, 2, 4, 5));
}

static void test_cat_split(void) {
  sc_tvalue *a[2] = {T(F32, 2, DIMS(2, 1), DATA(1, 2)), T(F32, 2, DIMS(2, 2), DATA(3, 4, 5, 6))};
  CHECK1("aten.cat.default", "[t0, t1], 1", a, 2, F32, 2, DIMS(2, 3), DATA(1, 3, 4, 2, 5, 6));
  sc_tvalue *b[2] = {T(I64, 1, DIMS(2), DATA(1, 2)), T(F32, 1, DIMS(1), DATA(0.5))};
  CHECK1("aten.cat.default", "[t0, t1]", b, 2, F32, 1, DIMS(3), DATA(1, 2, 0.5));
  sc_tvalue *c[2] = {T(F32, 1, DIMS(2), DATA(1, 2)), T(F32, 1, DIMS(2), DATA(3, 4))};
  CHECK1("aten.stack.default", "[t0, t1], 1", c, 2, F32, 2, DIMS(2, 2), DATA(1, 3, 2, 4));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(5), DATA(0, 1, 2, 3, 4))};
  GPtrArray *r = run("aten.split.Tensor", "t0, 2", d, 1);
  g_assert_cmpuint(r->len, ==, 3);
  EXPECT(r->pdata[0], F32, 1, DIMS(2), DATA(0, 1));
  EXPECT(r->pdata[2], F32, 1, DIMS(1), DATA(4));
  g_ptr_array_unref(r);
  sc_tvalue *e[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  r = run("aten.split_with_sizes.default", "t0, [1, 2], 1", e, 1);
  EXPECT(r->pdata[0], F32, 2, DIMS(2, 1), DATA(1, 4));
  EXPECT(r->pdata[1], F32, 2, DIMS(2, 2), DATA(2, 3, 5, 6));
  g_ptr_array_unref(r);
  sc_tvalue *f[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  r = run("aten.unbind.int", "t0, 1", f, 1);
  g_assert_cmpuint(r->len, ==, 3);
  EXPECT(r->pdata[2], F32, 1, DIMS(2), DATA(3, 6));
  g_ptr_array_unref(r);
  sc_tvalue *g[1] = {T(F32, 1, DIMS(4), DATA(1, 2, 3, 4))};
  r = run("aten.chunk.default", "t0, 2", g, 1);
  EXPECT(r->pdata[1], F32, 1, DIMS(2), DATA(3, 4));
  g_ptr_array_unref(r);
}

static void test_flip_roll_repeat(void) {
  sc_tvalue *a[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten.flip.default", "t0, [0, 1]", a, 1, F32, 2, DIMS(2, 2), DATA(4, 3, 2, 1));
  sc_tvalue *b[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.roll.default", "t0, [1], [1]", b, 1, F32, 2, DIMS(2, 3), DATA(3, 1, 2, 6, 4, 5));
  sc_tvalue *c[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten.roll.default", "t0, [-1]", c, 1, F32, 2, DIMS(2, 2), DATA(2, 3, 4, 1));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.repeat.default", "t0, [2, 2]", d, 1, F32, 2, DIMS(2, 4),
         DATA(1, 2, 1, 2, 1, 2, 1, 2));
}

static void test_pad_tri(void) {
  sc_tvalue *a[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten.constant_pad_nd.default", "t0, [1, 0], 9", a, 1, F32, 2, DIMS(2, 3),
         DATA(9, 1, 2, 9, 3, 4));
  sc_tvalue *b[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.constant_pad_nd.default", "t0, [-1, 0, 0, 1]", b, 1, F32, 2, DIMS(3, 2),
         DATA(2, 3, 5, 6, 0, 0));
  sc_tvalue *c[1] = {T(F32, 2, DIMS(3, 3), DATA(1, 2, 3, 4, 5, 6, 7, 8, 9))};
  CHECK1("aten.triu.default", "t0, 1", c, 1, F32, 2, DIMS(3, 3), DATA(0, 2, 3, 0, 0, 6, 0, 0, 0));
  sc_tvalue *d[1] = {T(F32, 2, DIMS(3, 3), DATA(1, 2, 3, 4, 5, 6, 7, 8, 9))};
  CHECK1("aten.tril.default", "t0", d, 1, F32, 2, DIMS(3, 3), DATA(1, 0, 0, 4, 5, 0, 7, 8, 9));
  sc_tvalue *e[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 1, 1, 1, 1, 1))};
  CHECK1("aten.tril.default", "t0, -1", e, 1, F32, 2, DIMS(2, 3), DATA(0, 0, 0, 1, 0, 0));
}

static void test_where_mask(void) {
  sc_tvalue *a[3] = {T(BOOL, 2, DIMS(2, 1), DATA(1, 0)), T(F32, 1, DIMS(2), DATA(1, 2)),
                     T(F32, 0, NULL, DATA(-1))};
  CHECK1("aten.where.self", "t0, t1, t2", a, 3, F32, 2, DIMS(2, 2), DATA(1, 2, -1, -1));
  sc_tvalue *b[2] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4)), T(BOOL, 1, DIMS(2), DATA(0, 1))};
  CHECK1("aten.masked_fill.Scalar", "t0, t1, -inf", b, 2, F32, 2, DIMS(2, 2),
         DATA(1, -INFINITY, 3, -INFINITY));
  sc_tvalue *c[3] = {T(I64, 1, DIMS(2), DATA(1, 2)), T(BOOL, 1, DIMS(2), DATA(1, 0)),
                     T(I64, 0, NULL, DATA(7))};
  CHECK1("aten.masked_fill.Tensor", "t0, t1, t2", c, 3, I64, 1, DIMS(2), DATA(7, 2));
}

static void test_gather_scatter(void) {
  sc_tvalue *a[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)),
                     T(I64, 2, DIMS(2, 2), DATA(2, 0, 1, 1))};
  CHECK1("aten.gather.default", "t0, 1, t1", a, 2, F32, 2, DIMS(2, 2), DATA(3, 1, 5, 5));
  sc_tvalue *b[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)),
                     T(I64, 2, DIMS(1, 3), DATA(1, 0, 1))};
  CHECK1("aten.gather.default", "t0, 0, t1", b, 2, F32, 2, DIMS(1, 3), DATA(4, 2, 6));
  sc_tvalue *c[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)), T(I64, 2, DIMS(1, 1), DATA(3))};
  run_fails("aten.gather.default", "t0, 1, t1", c, 2, SC_INTERP_ERROR_INVALID,
            "index 3 is out of bounds for dimension 1 with size 3");
  sc_tvalue *d[3] = {T(F32, 2, DIMS(2, 3), DATA(0, 0, 0, 0, 0, 0)),
                     T(I64, 2, DIMS(2, 3), DATA(0, 1, 0, 2, 2, 2)),
                     T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.scatter_add.default", "t0, 1, t1, t2", d, 3, F32, 2, DIMS(2, 3),
         DATA(4, 2, 0, 0, 0, 15));
  sc_tvalue *e[3] = {T(F32, 1, DIMS(3), DATA(1, 1, 1)), T(I64, 1, DIMS(2), DATA(2, 2)),
                     T(F32, 1, DIMS(4), DATA(5, 6, 7, 8))};
  CHECK1("aten.scatter_add.default", "t0, 0, t1, t2", e, 3, F32, 1, DIMS(3), DATA(1, 1, 12));
  sc_tvalue *f[2] = {T(F32, 2, DIMS(3, 2), DATA(1, 2, 3, 4, 5, 6)), T(I64, 1, DIMS(2), DATA(2, 0))};
  CHECK1("aten.index_select.default", "t0, 0, t1", f, 2, F32, 2, DIMS(2, 2), DATA(5, 6, 1, 2));
}

static void test_index_tensor(void) {
  /* x[[0, 2], [1, -1]] on a 3x3: two index tensors, adjacent */
  sc_tvalue *a[3] = {T(F32, 2, DIMS(3, 3), DATA(0, 1, 2, 3, 4, 5, 6, 7, 8)),
                     T(I64, 1, DIMS(2), DATA(0, 2)), T(I64, 1, DIMS(2), DATA(1, -1))};
  CHECK1("aten.index.Tensor", "t0, [t1, t2]", a, 3, F32, 1, DIMS(2), DATA(1, 8));
  /* broadcast index tensors: [[0], [2]] x [0, 1] -> 2x2 */
  sc_tvalue *b[3] = {T(F32, 2, DIMS(3, 3), DATA(0, 1, 2, 3, 4, 5, 6, 7, 8)),
                     T(I64, 2, DIMS(2, 1), DATA(0, 2)), T(I64, 1, DIMS(2), DATA(0, 1))};
  CHECK1("aten.index.Tensor", "t0, [t1, t2]", b, 3, F32, 2, DIMS(2, 2), DATA(0, 1, 6, 7));
  /* x[:, [2, 0]] on 2x3: the index dims sit where the indexed dim was */
  sc_tvalue *c[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)), T(I64, 1, DIMS(2), DATA(2, 0))};
  CHECK1("aten.index.Tensor", "t0, [None, t1]", c, 2, F32, 2, DIMS(2, 2), DATA(3, 1, 6, 4));
  /* non-adjacent: x[[1, 0], :, [0, 1]] on 2x2x2 -> the broadcast dims first: [2, 2] */
  sc_tvalue *d[3] = {T(F32, 3, DIMS(2, 2, 2), DATA(0, 1, 2, 3, 4, 5, 6, 7)),
                     T(I64, 1, DIMS(2), DATA(1, 0)), T(I64, 1, DIMS(2), DATA(0, 1))};
  CHECK1("aten.index.Tensor", "t0, [t1, None, t2]", d, 3, F32, 2, DIMS(2, 2), DATA(4, 6, 1, 3));
  sc_tvalue *e[2] = {T(F32, 1, DIMS(3), DATA(1, 2, 3)), T(I64, 1, DIMS(1), DATA(3))};
  run_fails("aten.index.Tensor", "t0, [t1]", e, 2, SC_INTERP_ERROR_INVALID, "out of bounds");
}

static void test_index_put(void) {
  sc_tvalue *a[3] = {T(F32, 1, DIMS(4), DATA(0, 0, 0, 0)), T(I64, 1, DIMS(3), DATA(1, 1, 3)),
                     T(F32, 1, DIMS(3), DATA(5, 6, 7))};
  CHECK1("aten.index_put.default", "t0, [t1], t2, True", a, 3, F32, 1, DIMS(4), DATA(0, 11, 0, 7));
  sc_tvalue *b[3] = {T(F32, 1, DIMS(4), DATA(0, 0, 0, 0)), T(I64, 1, DIMS(3), DATA(1, 1, 3)),
                     T(F32, 1, DIMS(3), DATA(5, 6, 7))};
  CHECK1("aten.index_put.default", "t0, [t1], t2", b, 3, F32, 1, DIMS(4), DATA(0, 6, 0, 7));
  /* two index tensors, a broadcast scalar value */
  sc_tvalue *c[4] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4)), T(I64, 1, DIMS(2), DATA(0, 1)),
                     T(I64, 1, DIMS(2), DATA(1, 0)), T(F32, 0, NULL, DATA(9))};
  CHECK1("aten.index_put.default", "t0, [t1, t2], t3", c, 4, F32, 2, DIMS(2, 2), DATA(1, 9, 9, 4));
  /* a boolean mask */
  sc_tvalue *d[3] = {T(F32, 1, DIMS(3), DATA(1, 2, 3)), T(BOOL, 1, DIMS(3), DATA(1, 0, 1)),
                     T(F32, 0, NULL, DATA(0))};
  CHECK1("aten.index_put.default", "t0, [t1], t2", d, 3, F32, 1, DIMS(3), DATA(0, 2, 0));
}

static void test_scatter_backward(void) {
  sc_tvalue *a[2] = {T(F32, 1, DIMS(5), DATA(0, 0, 0, 0, 0)), T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.slice_scatter.default", "t0, t1, 0, 1, None, 2", a, 2, F32, 1, DIMS(5),
         DATA(0, 1, 0, 2, 0));
  sc_tvalue *b[2] = {T(F32, 2, DIMS(2, 2), DATA(0, 0, 0, 0)), T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.select_scatter.default", "t0, t1, 1, -1", b, 2, F32, 2, DIMS(2, 2),
         DATA(0, 1, 0, 2));
  sc_tvalue *c[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.slice_backward.default", "t0, [4], 0, 2, 9223372036854775807, 1", c, 1, F32, 1,
         DIMS(4), DATA(0, 0, 1, 2));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.select_backward.default", "t0, [2, 2], 0, 1", d, 1, F32, 2, DIMS(2, 2),
         DATA(0, 0, 1, 2));
}

static void test_creation(void) {
  CHECK1("aten.arange.default", "4", NULL, 0, I64, 1, DIMS(4), DATA(0, 1, 2, 3));
  CHECK1("aten.arange.start_step", "1, 2, 0.25", NULL, 0, F32, 1, DIMS(4),
         DATA(1, 1.25, 1.5, 1.75));
  CHECK1("aten.arange.start_step", "5, 0, -2", NULL, 0, I64, 1, DIMS(3), DATA(5, 3, 1));
  CHECK1("aten.full.default", "[2], 1.5, dtype=\"i64\"", NULL, 0, I64, 1, DIMS(2), DATA(1, 1));
  CHECK1("aten.full.default", "[1, 2], 3", NULL, 0, I64, 2, DIMS(1, 2), DATA(3, 3));
  CHECK1("aten.zeros.default", "[2]", NULL, 0, F32, 1, DIMS(2), DATA(0, 0));
  CHECK1("aten.ones.default", "[2], dtype=\"bool\"", NULL, 0, BOOL, 1, DIMS(2), DATA(1, 1));
  CHECK1("aten.scalar_tensor.default", "2.5", NULL, 0, F32, 0, NULL, DATA(2.5));
  sc_tvalue *a[1] = {T(I32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.new_full.default", "t0, [3], 7", a, 1, I32, 1, DIMS(3), DATA(7, 7, 7));
  sc_tvalue *b[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.full_like.default", "t0, -1", b, 1, F32, 1, DIMS(2), DATA(-1, -1));
  sc_tvalue *c[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("aten.fill.Scalar", "t0, 4", c, 1, F32, 1, DIMS(2), DATA(4, 4));
  CHECK1("sc.arange.default", "start=2, end=5", NULL, 0, I64, 1, DIMS(3), DATA(2, 3, 4));
  CHECK1("sc.full.default", "shape=[2, 1], value=0.5", NULL, 0, F32, 2, DIMS(2, 1),
         DATA(0.5, 0.5));
}

/* ---- collectives ---------------------------------------------------------------- */

static sc_tvalue *rank_value(int r) {
  /* rank r holds [[r, r+1, r+2], [10r, 10r+1, 10r+2]] */
  return T(F32, 2, DIMS(2, 3), DATA(r, r + 1, r + 2, 10 * r, 10 * r + 1, 10 * r + 2));
}

static void test_all_reduce(void) {
  for (int n = 2; n <= 3; n++) {
    sc_tvalue *ins[3] = {rank_value(1), rank_value(2), rank_value(3)};
    const char *args = n == 2 ? "[t0, t1]" : "[t0, t1, t2]";
    GPtrArray *r = run("comm.all_reduce.default", args, ins, (uint32_t)n);
    if (n == 2)
      sc_tvalue_free(ins[2]);
    g_assert_cmpuint(r->len, ==, (guint)n);
    for (int i = 0; i < n; i++)
      if (n == 2)
        EXPECT(r->pdata[i], F32, 2, DIMS(2, 3), DATA(3, 5, 7, 30, 32, 34));
      else
        EXPECT(r->pdata[i], F32, 2, DIMS(2, 3), DATA(6, 9, 12, 60, 63, 66));
    g_ptr_array_unref(r);
  }
  sc_tvalue *m[3] = {T(F32, 1, DIMS(2), DATA(1, 5)), T(F32, 1, DIMS(2), DATA(4, 2)),
                     T(F32, 1, DIMS(2), DATA(3, 3))};
  GPtrArray *r = run("comm.all_reduce.default", "[t0, t1, t2], \"max\"", m, 3);
  EXPECT(r->pdata[2], F32, 1, DIMS(2), DATA(4, 5));
  g_ptr_array_unref(r);
  sc_tvalue *v[2] = {T(F32, 1, DIMS(2), DATA(1, 5)), T(F32, 1, DIMS(2), DATA(4, 2))};
  r = run("comm.all_reduce.default", "[t0, t1], op=\"avg\"", v, 2);
  EXPECT(r->pdata[0], F32, 1, DIMS(2), DATA(2.5, 3.5));
  g_ptr_array_unref(r);
  sc_tvalue *w[2] = {T(F32, 1, DIMS(2), DATA(1, 5)), T(F32, 1, DIMS(2), DATA(4, 2))};
  r = run("comm.all_reduce.default", "[t0, t1], op=\"min\"", w, 2);
  EXPECT(r->pdata[1], F32, 1, DIMS(2), DATA(1, 2));
  g_ptr_array_unref(r);
}

static void test_all_gather(void) {
  sc_tvalue *a[2] = {rank_value(0), rank_value(1)};
  GPtrArray *r = run("comm.all_gather.default", "[t0, t1], 1", a, 2);
  for (int i = 0; i < 2; i++)
    EXPECT(r->pdata[i], F32, 2, DIMS(2, 6), DATA(0, 1, 2, 1, 2, 3, 0, 1, 2, 10, 11, 12));
  g_ptr_array_unref(r);
  sc_tvalue *b[3] = {T(F32, 1, DIMS(1), DATA(1)), T(F32, 1, DIMS(1), DATA(2)),
                     T(F32, 1, DIMS(1), DATA(3))};
  r = run("comm.all_gather.default", "[t0, t1, t2], -1", b, 3);
  g_assert_cmpuint(r->len, ==, 3);
  EXPECT(r->pdata[2], F32, 1, DIMS(3), DATA(1, 2, 3));
  g_ptr_array_unref(r);
}

static void test_reduce_scatter(void) {
  sc_tvalue *a[2] = {T(F32, 1, DIMS(4), DATA(1, 2, 3, 4)), T(F32, 1, DIMS(4), DATA(10, 20, 30, 40))};
  GPtrArray *r = run("comm.reduce_scatter.default", "[t0, t1], 0", a, 2);
  EXPECT(r->pdata[0], F32, 1, DIMS(2), DATA(11, 22));
  EXPECT(r->pdata[1], F32, 1, DIMS(2), DATA(33, 44));
  g_ptr_array_unref(r);
  sc_tvalue *b[3] = {rank_value(0), rank_value(1), rank_value(2)};
  r = run("comm.reduce_scatter.default", "[t0, t1, t2], dim=1", b, 3);
  /* sum = [[3, 6, 9], [30, 33, 36]]; rank i holds column i */
  EXPECT(r->pdata[0], F32, 2, DIMS(2, 1), DATA(3, 30));
  EXPECT(r->pdata[1], F32, 2, DIMS(2, 1), DATA(6, 33));
  EXPECT(r->pdata[2], F32, 2, DIMS(2, 1), DATA(9, 36));
  g_ptr_array_unref(r);
  sc_tvalue *c[2] = {T(F32, 1, DIMS(3), DATA(1, 2, 3)), T(F32, 1, DIMS(3), DATA(1, 2, 3))};
  run_fails("comm.reduce_scatter.default", "[t0, t1], 0", c, 2, SC_INTERP_ERROR_SHAPE,
            "does not split into 2 equal parts");
}

static void test_all_to_all(void) {
  /* rank r holds [4r, 4r+1, 4r+2, 4r+3] as [4, 1]; split dim 0, concat dim 1 */
  sc_tvalue *a[2] = {T(F32, 2, DIMS(4, 1), DATA(0, 1, 2, 3)), T(F32, 2, DIMS(4, 1), DATA(4, 5, 6, 7))};
  GPtrArray *r = run("comm.all_to_all.default", "[t0, t1], 0, 1", a, 2);
  EXPECT(r->pdata[0], F32, 2, DIMS(2, 2), DATA(0, 4, 1, 5));
  EXPECT(r->pdata[1], F32, 2, DIMS(2, 2), DATA(2, 6, 3, 7));
  g_ptr_array_unref(r);
  sc_tvalue *b[3] = {T(F32, 1, DIMS(3), DATA(0, 1, 2)), T(F32, 1, DIMS(3), DATA(10, 11, 12)),
                     T(F32, 1, DIMS(3), DATA(20, 21, 22))};
  r = run("comm.all_to_all.default", "[t0, t1, t2], 0, 0", b, 3);
  EXPECT(r->pdata[0], F32, 1, DIMS(3), DATA(0, 10, 20));
  EXPECT(r->pdata[1], F32, 1, DIMS(3), DATA(1, 11, 21));
  EXPECT(r->pdata[2], F32, 1, DIMS(3), DATA(2, 12, 22));
  g_ptr_array_unref(r);
}

static void test_broadcast_send(void) {
  sc_tvalue *a[3] = {rank_value(0), rank_value(1), rank_value(2)};
  GPtrArray *r = run("comm.broadcast.default", "[t0, t1, t2], src=1", a, 3);
  for (int i = 0; i < 3; i++)
    EXPECT(r->pdata[i], F32, 2, DIMS(2, 3), DATA(1, 2, 3, 10, 11, 12));
  g_ptr_array_unref(r);
  sc_tvalue *b[2] = {rank_value(0), rank_value(1)};
  r = run("comm.broadcast.default", "[t0, t1]", b, 2);
  EXPECT(r->pdata[1], F32, 2, DIMS(2, 3), DATA(0, 1, 2, 0, 1, 2));
  g_ptr_array_unref(r);
  sc_tvalue *c[1] = {rank_value(4)};
  CHECK1("comm.send_recv.default", "[t0]", c, 1, F32, 2, DIMS(2, 3), DATA(4, 5, 6, 40, 41, 42));
}

static void test_c10d_one_member(void) {
  sc_tvalue *a[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("_c10d_functional.all_reduce.default", "t0, \"sum\", \"g\"", a, 1, F32, 1, DIMS(2),
         DATA(1, 2));
  sc_tvalue *b[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("_c10d_functional.all_gather_into_tensor.default", "t0, 1, \"g\"", b, 1, F32, 1, DIMS(2),
         DATA(1, 2));
  sc_tvalue *c[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("_c10d_functional.reduce_scatter_tensor.default", "t0, \"sum\", 1, \"g\"", c, 1, F32, 1,
         DIMS(2), DATA(1, 2));
  sc_tvalue *d[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("_c10d_functional.wait_tensor.default", "t0", d, 1, F32, 1, DIMS(2), DATA(1, 2));
  sc_tvalue *e[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("_c10d_functional.broadcast.default", "t0, 0, \"g\"", e, 1, F32, 1, DIMS(2), DATA(1, 2));
  sc_tvalue *f[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  CHECK1("_c10d_functional.all_to_all_single.default", "t0, None, None, \"g\"", f, 1, F32, 1,
         DIMS(2), DATA(1, 2));
  sc_tvalue *g[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  run_fails("_c10d_functional.all_gather_into_tensor.default", "t0, 2, \"g\"", g, 1,
            SC_INTERP_ERROR_UNINTERPRETABLE, "group of 2 members");
}

static void test_sc_ops(void) {
  sc_tvalue *a[3] = {T(F32, 1, DIMS(2), DATA(1, 2)), T(F32, 1, DIMS(2), DATA(10, 20)),
                     T(F32, 1, DIMS(2), DATA(100, 200))};
  CHECK1("sc.sum.default", "t0, t1, t2", a, 3, F32, 1, DIMS(2), DATA(111, 222));
  sc_tvalue *b[2] = {T(F32, 2, DIMS(1, 2), DATA(1, 2)), T(F32, 2, DIMS(1, 2), DATA(3, 4))};
  CHECK1("sc.cat.default", "t0, t1, dim=0", b, 2, F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4));
  sc_tvalue *c[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("sc.transpose.default", "t0, dim0=0, dim1=1", c, 1, F32, 2, DIMS(3, 2),
         DATA(1, 4, 2, 5, 3, 6));
  sc_tvalue *d[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("sc.view.default", "t0, shape=[6]", d, 1, F32, 1, DIMS(6), DATA(1, 2, 3, 4, 5, 6));
  g_autoptr(sc_tvalue) e = run1("sc.empty.default", "shape=[2]", NULL, 0);
  g_assert_cmpint(sc_tvalue_count_empty_marks(e), ==, 2);
}

/* ---- the registry's coverage ------------------------------------------------------ */

static void test_every_op_has_evaluator(void) {
  g_autoptr(GPtrArray) missing = sc_interp_missing_evaluators();
  if (missing->len > 0) {
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < missing->len; i++)
      g_string_append_printf(s, " %s", (const char *)missing->pdata[i]);
    g_error("%u registered operators have no evaluator:%s", missing->len, s->str);
  }
  const sc_op *op = sc_ops_lookup("aten.zero_.default", NULL);
  g_assert_nonnull(op);
  g_assert_false(sc_interp_has_evaluator(op));
  g_assert_nonnull(strstr(sc_interp_uninterpretable_reason(op), "in-place"));
  g_assert_true(sc_interp_has_evaluator(sc_ops_lookup("aten.mm.default", NULL)));
}

static void test_inplace_refused(void) {
  sc_tvalue *a[1] = {T(F32, 1, DIMS(2), DATA(1, 2))};
  GError *err = NULL;
  g_assert_null(run_full("aten.fill_.Scalar", "t0, 1", a, 1, NULL, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_UNINTERPRETABLE);
  g_assert_nonnull(strstr(err->message, "aten.fill_.Scalar cannot be interpreted: an in-place"));
  g_error_free(err);
}

/* ---- graphs, expressions, symbols --------------------------------------------------- */

static sc_value *bind_graph(sc_graph *g, const sc_op *op, const char *args);

static gboolean resolve_g(void *env, const char *name, sc_id *out) {
  sc_id id = sc_graph_find_tensor(env, name);
  if (id == SC_ID_NONE)
    return FALSE;
  *out = id;
  return TRUE;
}

static sc_value *bind_graph(sc_graph *g, const sc_op *op, const char *args) {
  GError *err = NULL;
  g_autofree char *text = g_strdup_printf("f(%s)", args);
  g_autoptr(sc_expr) e = sc_expr_parse(text, &err);
  g_assert_no_error(err);
  sc_value *pos = g_new0(sc_value, e->n_args + 1);
  for (uint32_t i = 0; i < e->n_args; i++)
    pos[i] = raw_of(e->args[i]);
  sc_value *bound = g_new0(sc_value, op->n_args + 1);
  sc_bind_loc loc;
  g_assert_true(sc_ops_bind(op, sc_graph_symtab(g), pos, e->n_args, NULL, NULL, 0, resolve_g, g,
                            bound, &loc, &err));
  g_assert_no_error(err);
  for (uint32_t i = 0; i < e->n_args; i++)
    sc_value_clear(&pos[i]);
  g_free(pos);
  return bound;
}

static void add_node(sc_graph *g, const char *name, const char *op_name, const char *args,
                     const char *result) {
  const sc_op *op = sc_ops_lookup(op_name, NULL);
  g_assert_nonnull(op);
  sc_value *bound = bind_graph(g, op, args);
  const char *names[1] = {result};
  GError *err = NULL;
  g_assert_true(sc_graph_add_node(g, name, op, bound, names, 1, NULL, "m.py:7", NULL, &err));
  g_assert_no_error(err);
}

static void add_input(sc_graph *g, const char *name, sc_dtype dt, uint32_t rank, const int64_t *dims) {
  sc_ttype t = {sc_shape_of(rank, dims), dt};
  GError *err = NULL;
  g_assert_true(sc_graph_add_input(g, name, &t, NULL, &err));
  g_assert_no_error(err);
}

static void test_graph_run(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", SC_DTYPE_F32, 2, DIMS(2, 3));
  add_input(g, "w", SC_DTYPE_F32, 2, DIMS(3, 2));
  add_node(g, "fc", "aten.mm.default", "x, w", "h");
  add_node(g, "act", "aten.relu.default", "h", "y");
  sc_graph_add_output(g, sc_graph_find_tensor(g, "y"));
  GError *err = NULL;
  g_assert_true(sc_graph_finish(g, &err));
  sc_tvalue *ins[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6)),
                       T(F32, 2, DIMS(3, 2), DATA(1, -1, 0, -1, 0, -1))};
  sc_tvalue **vals = NULL;
  sc_id failed = 0;
  g_assert_true(sc_interp_run_graph(g, NULL, ins, NULL, &vals, &failed, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(failed, ==, SC_ID_NONE);
  EXPECT(vals[sc_graph_find_tensor(g, "h")], F32, 2, DIMS(2, 2), DATA(1, -6, 4, -15));
  EXPECT(vals[sc_graph_find_tensor(g, "y")], F32, 2, DIMS(2, 2), DATA(1, 0, 4, 0));
  EXPECT(vals[sc_graph_find_tensor(g, "x")], F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 5, 6));
  sc_interp_values_free(vals, sc_graph_n_tensors(g));
  /* a wrong input type */
  sc_tvalue *bad = T(F32, 2, DIMS(3, 3), DATA(0, 0, 0, 0, 0, 0, 0, 0, 0));
  sc_tvalue *ins2[2] = {bad, ins[1]};
  g_assert_false(sc_interp_run_graph(g, NULL, ins2, NULL, &vals, &failed, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_INPUT);
  g_assert_cmpstr(err->message, ==, "input 'x': expected f32 [2, 3], got f32 [3, 3]");
  g_clear_error(&err);
  g_assert_null(vals);
  sc_tvalue_free(bad);
  sc_tvalue_free(ins[0]);
  sc_tvalue_free(ins[1]);
}

static void test_graph_error_names_node(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "table", SC_DTYPE_F32, 2, DIMS(4, 2));
  add_input(g, "ids", SC_DTYPE_I64, 1, DIMS(3));
  add_node(g, "emb", "aten.embedding.default", "table, ids", "e");
  GError *err = NULL;
  g_assert_true(sc_graph_finish(g, &err));
  sc_tvalue *ins[2] = {T(F32, 2, DIMS(4, 2), DATA(0, 1, 2, 3, 4, 5, 6, 7)),
                       T(I64, 1, DIMS(3), DATA(0, 4, 1))};
  sc_tvalue **vals = NULL;
  sc_id failed = SC_ID_NONE;
  g_assert_false(sc_interp_run_graph(g, NULL, ins, NULL, &vals, &failed, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_INVALID);
  g_assert_cmpstr(err->message, ==,
                  "node 'emb' (aten.embedding.default, m.py:7): aten.embedding.default: index 4 "
                  "is out of range for a table of 4 rows");
  g_assert_cmpuint(failed, ==, sc_graph_find_node(g, "emb"));
  g_error_free(err);
  sc_tvalue_free(ins[0]);
  sc_tvalue_free(ins[1]);
}

/* ---- data-dependent sizes (nonzero) ------------------------------------------ */

/* nonzero: coordinates of the nonzero elements in row-major order (NaN is
 * nonzero, as in ATen); without `size` the count is computed, a given size
 * must equal it. */
static void test_nonzero(void) {
  sc_tvalue *in[1] = {T(BOOL, 2, DIMS(2, 3), DATA(1, 0, 1, 0, 0, 1))};
  CHECK1("aten.nonzero.default", "t0", in, 1, I64, 2, DIMS(3, 2), DATA(0, 0, 0, 2, 1, 2));
  in[0] = T(BOOL, 2, DIMS(2, 3), DATA(1, 0, 1, 0, 0, 1));
  CHECK1("aten.nonzero.default", "t0, size=3", in, 1, I64, 2, DIMS(3, 2),
         DATA(0, 0, 0, 2, 1, 2));
  in[0] = T(F32, 1, DIMS(5), DATA(0.0, -2.5, NAN, 0.0, 1e-300));
  CHECK1("aten.nonzero.default", "t0", in, 1, I64, 2, DIMS(3, 1), DATA(1, 2, 4));
  in[0] = T(I64, 1, DIMS(4), DATA(0, 0, 0, 0));
  CHECK1("aten.nonzero.default", "t0", in, 1, I64, 2, DIMS(0, 1), DATA(0));
  in[0] = T(F32, 0, DIMS(0), DATA(7));
  CHECK1("aten.nonzero.default", "t0", in, 1, I64, 2, DIMS(1, 0), DATA(0));
  in[0] = T(BOOL, 2, DIMS(2, 3), DATA(1, 0, 1, 0, 0, 1));
  run_fails("aten.nonzero.default", "t0, size=2", in, 1, SC_INTERP_ERROR_INVALID,
            "aten.nonzero.default: the data-dependent size is 2 but the input gives 3");
}

/* A random f32 value of the given shape (values in [-1, 1)). */
static sc_tvalue *rnd(sc_rng *rng, uint32_t rank, const int64_t *dims) {
  sc_tvalue *v = sc_tvalue_new(SC_DTYPE_F32, rank, dims, 0, NULL);
  g_assert_nonnull(v);
  sc_tvalue_fill_uniform(v, rng, -1.0, 1.0);
  return v;
}

static void expect_same(const sc_tvalue *a, const sc_tvalue *b) {
  sc_tolerance tol = sc_tolerance_default();
  sc_tcompare cmp;
  if (!sc_tvalue_compare(a, b, &tol, &cmp)) {
    g_autofree char *why = sc_tcompare_to_string(&cmp, a, b);
    g_error("the two sides differ: %s", why);
  }
}

/* The identities of lemmas/real-moe.lemma that `lemmas check` instantiates
 * rarely (their conditions tie several shapes and attributes together),
 * evaluated here on random values for several sizes: both sides computed
 * by the interpreter.
 *  index_rows_unit_column:  x[arange(n), c] = view(x, [n]) for x [n, 1], c in {0, -1};
 *  index_put_rows_unit_column(_acc): index_put(x, [arange(n), c], v[, True])
 *    = unsqueeze(v, 1) (x + unsqueeze(v, 1));
 *  index_put_nonzero_sum(_base): index_put(p + q, [nonzero(m)], a + b)
 *    = index_put(p, [nonzero(m)], a) + index_put(q, [nonzero(m)], b), for a
 *    1-D mask (p = q = 0 is the zero-base lemma). */
static void test_moe_identities(void) {
  sc_rng rng;
  sc_rng_seed(&rng, 7);
  for (int64_t n = 1; n <= 6; n++) {
    for (int c = 0; c >= -1; c--) {
      double *ar = g_new(double, n), *col = g_new(double, n);
      for (int64_t i = 0; i < n; i++) {
        ar[i] = (double)i;
        col[i] = c;
      }
      sc_tvalue *x = rnd(&rng, 2, DIMS(n, 1)), *v = rnd(&rng, 1, DIMS(n));
      sc_tvalue *ins[4];
      /* x[arange(n), c] */
      ins[0] = sc_tvalue_copy(x);
      ins[1] = T(I64, 1, DIMS(n), ar);
      ins[2] = T(I64, 1, DIMS(n), col);
      g_autoptr(sc_tvalue) picked = run1("aten.index.Tensor", "t0, [t1, t2]", ins, 3);
      ins[0] = sc_tvalue_copy(x);
      g_autoptr(sc_tvalue) flat = run1("aten.view.default", "t0, [-1]", ins, 1);
      expect_same(picked, flat);
      /* index_put with and without accumulate */
      ins[0] = sc_tvalue_copy(v);
      g_autoptr(sc_tvalue) column = run1("aten.unsqueeze.default", "t0, 1", ins, 1);
      ins[0] = sc_tvalue_copy(x);
      ins[1] = sc_tvalue_copy(column);
      g_autoptr(sc_tvalue) added = run1("aten.add.Tensor", "t0, t1", ins, 2);
      for (int acc = 0; acc <= 1; acc++) {
        ins[0] = sc_tvalue_copy(x);
        ins[1] = T(I64, 1, DIMS(n), ar);
        ins[2] = T(I64, 1, DIMS(n), col);
        ins[3] = sc_tvalue_copy(v);
        g_autoptr(sc_tvalue) put = run1("aten.index_put.default",
                                        acc ? "t0, [t1, t2], t3, True" : "t0, [t1, t2], t3", ins, 4);
        expect_same(put, acc ? added : column);
      }
      sc_tvalue_free(x);
      sc_tvalue_free(v);
      g_free(ar);
      g_free(col);
    }
  }
  /* the scatter through nonzero of random 1-D masks, with and without a base */
  for (int trial = 0; trial < 8; trial++) {
    int64_t rows = 1 + trial % 5;
    double *mask = g_new(double, rows);
    int64_t u = 0;
    for (int64_t i = 0; i < rows; i++) {
      mask[i] = (double)sc_rng_int(&rng, 0, 1);
      u += mask[i] != 0.0;
    }
    sc_tvalue *m = T(BOOL, 1, DIMS(rows), mask);
    sc_tvalue *ins[3] = {sc_tvalue_copy(m)};
    g_autoptr(sc_tvalue) nz = run1("aten.nonzero.default", "t0", ins, 1);
    g_assert_cmpint(nz->dims[0], ==, u);
    for (int base = 0; base <= 1; base++) {
      sc_tvalue *p = rnd(&rng, 2, DIMS(rows, 3)), *q = rnd(&rng, 2, DIMS(rows, 3));
      if (!base) {
        memset(p->data, 0, sizeof(double) * (size_t)p->numel);
        memset(q->data, 0, sizeof(double) * (size_t)q->numel);
      }
      sc_tvalue *a = rnd(&rng, 3, DIMS(u, 1, 3)), *b = rnd(&rng, 3, DIMS(u, 1, 3));
      ins[0] = sc_tvalue_copy(p);
      ins[1] = sc_tvalue_copy(q);
      g_autoptr(sc_tvalue) pq = run1("aten.add.Tensor", "t0, t1", ins, 2);
      ins[0] = sc_tvalue_copy(a);
      ins[1] = sc_tvalue_copy(b);
      g_autoptr(sc_tvalue) ab = run1("aten.add.Tensor", "t0, t1", ins, 2);
      ins[0] = sc_tvalue_copy(pq);
      ins[1] = sc_tvalue_copy(nz);
      ins[2] = sc_tvalue_copy(ab);
      g_autoptr(sc_tvalue) lhs = run1("aten.index_put.default", "t0, [t1], t2", ins, 3);
      ins[0] = sc_tvalue_copy(p);
      ins[1] = sc_tvalue_copy(nz);
      ins[2] = sc_tvalue_copy(a);
      g_autoptr(sc_tvalue) pa = run1("aten.index_put.default", "t0, [t1], t2", ins, 3);
      ins[0] = sc_tvalue_copy(q);
      ins[1] = sc_tvalue_copy(nz);
      ins[2] = sc_tvalue_copy(b);
      g_autoptr(sc_tvalue) qb = run1("aten.index_put.default", "t0, [t1], t2", ins, 3);
      ins[0] = sc_tvalue_copy(pa);
      ins[1] = sc_tvalue_copy(qb);
      g_autoptr(sc_tvalue) rhs = run1("aten.add.Tensor", "t0, t1", ins, 2);
      expect_same(lhs, rhs);
      sc_tvalue_free(p);
      sc_tvalue_free(q);
      sc_tvalue_free(a);
      sc_tvalue_free(b);
    }
    sc_tvalue_free(m);
    g_free(mask);
  }
}

/* NAME : nonzero(MASK) with declared result shape [SIZE, 1] (SIZE parsed). */
static gboolean add_nonzero(sc_graph *g, const char *name, const char *mask, const char *size,
                            GError **error) {
  const sc_op *op = sc_ops_lookup("aten.nonzero.default", NULL);
  sc_value *bound = bind_graph(g, op, mask);
  sc_ttype decl = {sc_shape_of(2, DIMS(1, 1)), SC_DTYPE_I64};
  const sc_ttype *declared[1] = {&decl};
  if (size != NULL)
    g_assert_true(sc_dim_parse(sc_graph_symtab(g), size, &decl.shape.dims[0], NULL));
  const char *names[1] = {name};
  return sc_graph_add_node(g, name, op, bound, names, 1, size ? declared : NULL, "moe.py:298",
                           NULL, error);
}

/* A graph that dispatches rows by nonzero(mask): the graph takes the size
 * u0 from the declared shape, the run binds u0 to the count (writing it
 * into the caller's symbol values), later nodes and the type checks use
 * it; a count outside u0's declared bounds is an error. */
static void test_graph_data_dependent(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  GError *err = NULL;
  g_assert_true(sc_symtab_declare(st, "u0", TRUE, 0, TRUE, 3, &err));
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "m", SC_DTYPE_BOOL, 1, DIMS(5));
  add_input(g, "x", SC_DTYPE_F32, 2, DIMS(5, 2));
  g_assert_true(add_nonzero(g, "nz", "m", "u0", &err));
  g_assert_no_error(err);
  add_node(g, "pick", "aten.index.Tensor", "x, [nz]", "xi");
  add_node(g, "flat", "aten.view.default", "xi, [\"u0\", 2]", "xv");
  add_node(g, "put", "aten.index_put.default", "x, [nz], xi", "back");
  g_assert_true(sc_graph_finish(g, &err));
  g_assert_no_error(err);
  const sc_node *nz = sc_graph_node(g, sc_graph_find_node(g, "nz"));
  g_assert_cmpint(nz->args[1].kind, ==, SC_VAL_INT);
  g_autofree char *size = sc_dim_to_string(st, nz->args[1].u.i);
  g_assert_cmpstr(size, ==, "u0");
  g_autofree char *shape = sc_shape_to_string(&sc_graph_tensor(g, sc_graph_find_tensor(g, "xv"))->type.shape);
  g_assert_cmpstr(shape, ==, "[u0, 2]");

  sc_tvalue *ins[2] = {T(BOOL, 1, DIMS(5), DATA(0, 1, 0, 1, 0)),
                       T(F32, 2, DIMS(5, 2), DATA(0, 1, 2, 3, 4, 5, 6, 7, 8, 9))};
  int64_t sv[1] = {-7};
  sc_tvalue **vals = NULL;
  g_assert_true(sc_interp_run_graph(g, sv, ins, NULL, &vals, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(sv[0], ==, 2);
  EXPECT(vals[sc_graph_find_tensor(g, "nz")], I64, 2, DIMS(2, 1), DATA(1, 3));
  EXPECT(vals[sc_graph_find_tensor(g, "xv")], F32, 2, DIMS(2, 2), DATA(2, 3, 6, 7));
  EXPECT(vals[sc_graph_find_tensor(g, "back")], F32, 2, DIMS(5, 2),
         DATA(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
  sc_interp_values_free(vals, sc_graph_n_tensors(g));
  /* no symbol values given: bound privately */
  g_assert_true(sc_interp_run_graph(g, NULL, ins, NULL, &vals, NULL, &err));
  g_assert_no_error(err);
  EXPECT(vals[sc_graph_find_tensor(g, "xv")], F32, 2, DIMS(2, 2), DATA(2, 3, 6, 7));
  sc_interp_values_free(vals, sc_graph_n_tensors(g));
  /* four rows selected, u0 <= 3 declared */
  sc_tvalue_free(ins[0]);
  ins[0] = T(BOOL, 1, DIMS(5), DATA(1, 1, 0, 1, 1));
  sc_id failed = SC_ID_NONE;
  g_assert_false(sc_interp_run_graph(g, sv, ins, NULL, &vals, &failed, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL);
  g_assert_cmpstr(err->message, ==,
                  "node 'nz' (aten.nonzero.default, moe.py:298): the data-dependent size u0 is 4, "
                  "outside its declared bounds");
  g_assert_cmpuint(failed, ==, sc_graph_find_node(g, "nz"));
  g_clear_error(&err);
  sc_tvalue_free(ins[0]);
  sc_tvalue_free(ins[1]);
}

/* The size a graph takes for a data-dependent operator must be a symbol of
 * its own (graph.c, take_data_dependent_size); without a declaration the
 * rule refuses the node as undecided. */
static void test_graph_data_dependent_refused(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  GError *err = NULL;
  g_assert_true(sc_symtab_declare(st, "u0", TRUE, 0, FALSE, 0, &err));
  g_assert_true(sc_symtab_declare(st, "N", TRUE, 1, FALSE, 0, &err));
  g_autoptr(sc_graph) g = sc_graph_new(st);
  sc_ttype mt = {sc_shape_of(1, DIMS(1)), SC_DTYPE_BOOL};
  g_assert_true(sc_dim_parse(st, "N", &mt.shape.dims[0], &err));
  g_assert_true(sc_graph_add_input(g, "m", &mt, NULL, &err));
  g_assert_false(add_nonzero(g, "a", "m", "3", &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE);
  g_assert_cmpstr(err->message, ==,
                  "node 'a': the first size of result 'a' depends on the values of "
                  "aten.nonzero.default's input, so it must be declared as a symbol of its own "
                  "(\"u0\"), not 3");
  g_clear_error(&err);
  g_assert_false(add_nonzero(g, "a", "m", "N", &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE);
  g_assert_nonnull(strstr(err->message, "the data-dependent size N, a symbol that the graph "
                                        "already uses"));
  g_clear_error(&err);
  g_assert_false(add_nonzero(g, "a", "m", "2*u0", &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE);
  g_assert_nonnull(strstr(err->message, "not 2*u0"));
  g_clear_error(&err);
  g_assert_false(add_nonzero(g, "a", "m", NULL, &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNDECIDED);
  g_assert_nonnull(strstr(err->message, "depends on its values"));
  g_clear_error(&err);
  g_assert_true(add_nonzero(g, "a", "m", "u0", &err));
  g_assert_no_error(err);
  g_assert_false(add_nonzero(g, "b", "m", "u0", &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE);
  g_assert_nonnull(strstr(err->message, "node 'b': result 'b' has the data-dependent size u0"));
  g_clear_error(&err);
}

static void test_symbolic_graph(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  GError *err = NULL;
  g_assert_true(sc_symtab_declare(st, "S", TRUE, 2, TRUE, 64, &err));
  g_assert_true(sc_symtab_assume(st, "S % 2 == 0", &err));
  g_autoptr(sc_graph) g = sc_graph_new(st);
  sc_dim s;
  g_assert_true(sc_dim_parse(st, "S", &s, &err));
  sc_ttype xt = {sc_shape_of(1, DIMS(1)), SC_DTYPE_F32};
  xt.shape.dims[0] = s;
  g_assert_true(sc_graph_add_input(g, "x", &xt, NULL, &err));
  add_node(g, "half", "aten.slice.Tensor", "x, 0, 0, \"S/2\"", "lo");
  g_assert_true(sc_graph_finish(g, &err));
  sc_rng rng;
  sc_rng_seed(&rng, 1);
  int64_t sv[1];
  g_assert_true(sc_interp_pick_symbols(st, &rng, 1, 8, sv, &err));
  g_assert_no_error(err);
  g_assert_cmpint(sv[0] % 2, ==, 0);
  g_assert_cmpint(sv[0], >=, 2);
  g_assert_cmpint(sv[0], <=, 8);
  sc_tvalue *x = sc_interp_random_input(g, sc_graph_find_tensor(g, "x"), sv, &rng, 0, &err);
  g_assert_no_error(err);
  g_assert_cmpint(x->dims[0], ==, sv[0]);
  sc_tvalue **vals = NULL;
  g_assert_true(sc_interp_run_graph(g, sv, &x, NULL, &vals, NULL, &err));
  g_assert_no_error(err);
  const sc_tvalue *lo = vals[sc_graph_find_tensor(g, "lo")];
  g_assert_cmpint(lo->dims[0], ==, sv[0] / 2);
  for (int64_t i = 0; i < lo->numel; i++)
    g_assert_cmpfloat(lo->data[i], ==, x->data[i]);
  sc_interp_values_free(vals, sc_graph_n_tensors(g));
  sc_tvalue_free(x);
  /* impossible assumptions */
  g_autoptr(sc_symtab) st2 = sc_symtab_new();
  g_assert_true(sc_symtab_declare(st2, "T", TRUE, 1, FALSE, 0, &err));
  g_assert_true(sc_symtab_assume(st2, "T % 1000 == 999", &err));
  g_assert_no_error(err);
  g_assert_false(sc_interp_pick_symbols(st2, &rng, 1, 8, sv, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL);
  g_assert_nonnull(strstr(err->message, "T % 1000 == 999"));
  g_clear_error(&err);
  /* chained comparisons, as the symtab accepts them (issue 19: the fuzz
   * corpus' "S>1/S/S*T==1" made --validate refuse the bundle) */
  g_autoptr(sc_symtab) st3 = sc_symtab_new();
  g_assert_true(sc_symtab_declare(st3, "S", TRUE, 1, FALSE, 0, &err));
  g_assert_true(sc_symtab_declare(st3, "T", TRUE, 1, FALSE, 0, &err));
  g_assert_true(sc_symtab_assume(st3, "3 <= S <= 5 && S < T <= 7", &err));
  g_assert_true(sc_symtab_assume(st3, "S>1/S/S*T==0", &err));
  int64_t v3[2];
  for (int k = 0; k < 8; k++) {
    g_assert_true(sc_interp_pick_symbols(st3, &rng, 1, 8, v3, &err));
    g_assert_no_error(err);
    g_assert_cmpint(v3[0], >=, 3);
    g_assert_cmpint(v3[0], <=, 5);
    g_assert_cmpint(v3[1], >, v3[0]);
    g_assert_cmpint(v3[1], <=, 7);
  }
}

static void test_random_input_range(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  GError *err = NULL;
  g_assert_true(sc_symtab_declare(st, "V", TRUE, 1, FALSE, 0, &err));
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "ids", SC_DTYPE_I64, 1, DIMS(200));
  add_input(g, "m", SC_DTYPE_BOOL, 1, DIMS(50));
  add_input(g, "f", SC_DTYPE_F32, 1, DIMS(50));
  sc_tensor *t = sc_graph_tensor(g, sc_graph_find_tensor(g, "ids"));
  t->has_values = TRUE;
  t->values_min = sc_dim_const(2);
  g_assert_true(sc_dim_parse(st, "V-1", &t->values_max, &err));
  g_assert_true(sc_graph_finish(g, &err));
  sc_rng rng;
  sc_rng_seed(&rng, 9);
  int64_t sv[1] = {5};
  g_autoptr(sc_tvalue) ids = sc_interp_random_input(g, 0, sv, &rng, 0, &err);
  g_assert_no_error(err);
  gboolean seen2 = FALSE, seen4 = FALSE;
  for (int i = 0; i < 200; i++) {
    g_assert_cmpfloat(ids->data[i], >=, 2);
    g_assert_cmpfloat(ids->data[i], <=, 4);
    seen2 |= ids->data[i] == 2;
    seen4 |= ids->data[i] == 4;
  }
  g_assert_true(seen2 && seen4);
  g_autoptr(sc_tvalue) m = sc_interp_random_input(g, 1, sv, &rng, 0, &err);
  for (int i = 0; i < 50; i++)
    g_assert_true(m->data[i] == 0 || m->data[i] == 1);
  g_autoptr(sc_tvalue) f = sc_interp_random_input(g, 2, sv, &rng, 0, &err);
  for (int i = 0; i < 50; i++)
    g_assert_true(f->data[i] >= -1 && f->data[i] < 1);
  sv[0] = 2; /* range [2, 1] is empty */
  g_assert_null(sc_interp_random_input(g, 0, sv, &rng, 0, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "empty value range"));
  g_clear_error(&err);
}

static void test_texpr(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x_0", SC_DTYPE_F32, 2, DIMS(2, 1));
  add_input(g, "x_1", SC_DTYPE_F32, 2, DIMS(2, 1));
  GError *err = NULL;
  g_assert_true(sc_graph_finish(g, &err));
  g_autoptr(sc_texpr) e = sc_texpr_parse("cat(x_0, x_1, dim=1)", g, TRUE, &err);
  g_assert_no_error(err);
  sc_tvalue *vals[2] = {T(F32, 2, DIMS(2, 1), DATA(1, 2)), T(F32, 2, DIMS(2, 1), DATA(3, 4))};
  g_autoptr(sc_tvalue) v = sc_interp_eval_texpr(e, NULL, vals, NULL, &err);
  g_assert_no_error(err);
  EXPECT(v, F32, 2, DIMS(2, 2), DATA(1, 3, 2, 4));
  g_autoptr(sc_texpr) e2 = sc_texpr_parse(
      "sum(slice(x_0, dim=0, start=1, end=2), slice(x_1, dim=0, start=0, end=1))", g, TRUE, &err);
  g_assert_no_error(err);
  g_autoptr(sc_tvalue) v2 = sc_interp_eval_texpr(e2, NULL, vals, NULL, &err);
  g_assert_no_error(err);
  EXPECT(v2, F32, 2, DIMS(1, 1), DATA(5));
  /* a leaf without a value */
  sc_tvalue *partial[2] = {vals[0], NULL};
  g_assert_null(sc_interp_eval_texpr(e2, NULL, partial, NULL, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_INPUT);
  g_assert_cmpstr(err->message, ==, "tensor 'x_1' has no value");
  g_clear_error(&err);
  sc_tvalue_free(vals[0]);
  sc_tvalue_free(vals[1]);
}

/* ---- operators added for unseen captures ------------------------------------------ */

static void test_added_elementwise(void) {
  sc_tvalue *a[1] = {T(F32, 1, DIMS(3), DATA(0, 0.5, -1))};
  CHECK1("aten.erf.default", "t0", a, 1, F32, 1, DIMS(3), DATA(0, erf(0.5), erf(-1)));
  sc_tvalue *b[1] = {T(F32, 1, DIMS(3), DATA(-2, 0.5, 3))};
  CHECK1("aten.clamp_min.default", "t0, 0", b, 1, F32, 1, DIMS(3), DATA(0, 0.5, 3));
  sc_tvalue *c[1] = {T(F32, 1, DIMS(3), DATA(-2, 0.5, 3))};
  CHECK1("aten.clamp_max.default", "t0, 1", c, 1, F32, 1, DIMS(3), DATA(-2, 0.5, 1));
  sc_tvalue *d[2] = {T(I64, 1, DIMS(4), DATA(7, -7, 7, -7)), T(I64, 1, DIMS(4), DATA(2, 2, -2, -2))};
  CHECK1("aten.floor_divide.default", "t0, t1", d, 2, I64, 1, DIMS(4), DATA(3, -4, -4, 3));
  sc_tvalue *e[2] = {T(I64, 1, DIMS(4), DATA(7, -7, 7, -7)), T(I64, 1, DIMS(4), DATA(2, 2, -2, -2))};
  CHECK1("aten.remainder.Tensor", "t0, t1", e, 2, I64, 1, DIMS(4), DATA(1, 1, -1, -1));
  sc_tvalue *g[1] = {T(F32, 1, DIMS(2), DATA(5.5, -5.5))};
  CHECK1("aten.remainder.Scalar", "t0, 2", g, 1, F32, 1, DIMS(2), DATA(1.5, 0.5));
  sc_tvalue *z[2] = {T(I64, 1, DIMS(1), DATA(3)), T(I64, 1, DIMS(1), DATA(0))};
  run_fails("aten.remainder.Tensor", "t0, t1", z, 2, SC_INTERP_ERROR_INVALID, "by zero");
  sc_tvalue *h[3] = {T(F32, 1, DIMS(2), DATA(1, 2)), T(F32, 1, DIMS(2), DATA(3, 4)),
                     T(F32, 1, DIMS(2), DATA(2, 8))};
  CHECK1("aten.addcmul.default", "t0, t1, t2, value=0.5", h, 3, F32, 1, DIMS(2), DATA(4, 18));
  sc_tvalue *i[3] = {T(F32, 1, DIMS(2), DATA(1, 2)), T(F32, 1, DIMS(2), DATA(3, 4)),
                     T(F32, 1, DIMS(2), DATA(2, 8))};
  CHECK1("aten.addcdiv.default", "t0, t1, t2, value=2", i, 3, F32, 1, DIMS(2), DATA(4, 3));
  sc_tvalue *l[2] = {T(F32, 1, DIMS(2), DATA(0, 10)), T(F32, 1, DIMS(2), DATA(4, 20))};
  CHECK1("aten.lerp.Scalar", "t0, t1, 0.75", l, 2, F32, 1, DIMS(2), DATA(3, 17.5));
}

static void test_added_reductions(void) {
  sc_tvalue *a[1] = {T(F32, 2, DIMS(2, 2), DATA(0, 0, 1, -INFINITY))};
  CHECK1("aten.logsumexp.default", "t0, [1]", a, 1, F32, 1, DIMS(2), DATA(log(2), 1));
  sc_tvalue *b[1] = {T(F32, 1, DIMS(2), DATA(-INFINITY, -INFINITY))};
  CHECK1("aten.logsumexp.default", "t0, [0]", b, 1, F32, 0, DIMS(0), DATA(-INFINITY));
  sc_tvalue *c[1] = {T(F32, 2, DIMS(2, 3), DATA(1, 2, 3, 4, 4, 4))};
  GPtrArray *r = run("aten.var_mean.correction", "t0, [1], correction=1", c, 1);
  g_assert_cmpuint(r->len, ==, 2);
  EXPECT(r->pdata[0], F32, 1, DIMS(2), DATA(1, 0));
  EXPECT(r->pdata[1], F32, 1, DIMS(2), DATA(2, 4));
  g_ptr_array_unref(r);
  sc_tvalue *d[1] = {T(BOOL, 2, DIMS(2, 2), DATA(1, 0, 0, 0))};
  CHECK1("aten.any.dim", "t0, 1", d, 1, BOOL, 1, DIMS(2), DATA(1, 0));
  sc_tvalue *e[1] = {T(F32, 2, DIMS(2, 2), DATA(1, NAN, 0, 2))};
  CHECK1("aten.all.dim", "t0, 1", e, 1, BOOL, 1, DIMS(2), DATA(1, 0));
  sc_tvalue *f[1] = {T(I64, 2, DIMS(2, 0), DATA(0))};
  CHECK1("aten.all.dim", "t0, 1", f, 1, BOOL, 1, DIMS(2), DATA(1, 1));
}

static void test_added_products_layout(void) {
  sc_tvalue *a[2] = {T(F32, 1, DIMS(3), DATA(1, 2, 3)), T(F32, 1, DIMS(3), DATA(4, 5, 6))};
  CHECK1("aten.dot.default", "t0, t1", a, 2, F32, 0, DIMS(0), DATA(32));
  sc_tvalue *b[2] = {T(F32, 2, DIMS(2, 3), DATA(1, 0, 0, 0, 1, 1)), T(F32, 1, DIMS(3), DATA(4, 5, 6))};
  CHECK1("aten.mv.default", "t0, t1", b, 2, F32, 1, DIMS(2), DATA(4, 11));
  sc_tvalue *c[2] = {T(F32, 1, DIMS(2), DATA(1, 2)), T(F32, 1, DIMS(3), DATA(1, 10, 100))};
  CHECK1("aten.outer.default", "t0, t1", c, 2, F32, 2, DIMS(2, 3), DATA(1, 10, 100, 2, 20, 200));
  sc_tvalue *d[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten.repeat_interleave.self_int", "t0, 2, dim=0", d, 1, F32, 2, DIMS(4, 2),
         DATA(1, 2, 1, 2, 3, 4, 3, 4));
  sc_tvalue *e[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten.repeat_interleave.self_int", "t0, 2, dim=-1", e, 1, F32, 2, DIMS(2, 4),
         DATA(1, 1, 2, 2, 3, 3, 4, 4));
  sc_tvalue *g[1] = {T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  CHECK1("aten.repeat_interleave.self_int", "t0, 2", g, 1, F32, 1, DIMS(8),
         DATA(1, 1, 2, 2, 3, 3, 4, 4));
  sc_tvalue *h[1] = {T(F32, 2, DIMS(1, 3), DATA(1, 2, 3))};
  CHECK1("aten.softmax.int", "t0, 1", h, 1, F32, 2, DIMS(1, 3),
         DATA(0.09003057317038046, 0.24472847105479767, 0.6652409557748219));
  sc_tvalue *l[1] = {T(F32, 2, DIMS(1, 2), DATA(1, 3))};
  CHECK1("aten.layer_norm.default", "t0, [2], eps=0.0", l, 1, F32, 2, DIMS(1, 2), DATA(-1, 1));
}

static void test_added_scatter_index_add_one_hot(void) {
  sc_tvalue *a[2] = {T(F32, 2, DIMS(2, 3), DATA(0, 0, 0, 0, 0, 0)), T(I64, 2, DIMS(2, 2), DATA(2, 0, 1, 1))};
  CHECK1("aten.scatter.value", "t0, 1, t1, 7", a, 2, F32, 2, DIMS(2, 3), DATA(7, 0, 7, 0, 7, 0));
  sc_tvalue *b[3] = {T(F32, 2, DIMS(2, 3), DATA(0, 0, 0, 0, 0, 0)), T(I64, 2, DIMS(2, 2), DATA(2, 0, 1, 1)),
                     T(F32, 2, DIMS(2, 2), DATA(1, 2, 3, 4))};
  /* row 1 writes position 1 twice: the last write (4) wins */
  CHECK1("aten.scatter.src", "t0, 1, t1, t2", b, 3, F32, 2, DIMS(2, 3), DATA(2, 0, 1, 0, 4, 0));
  sc_tvalue *c[2] = {T(F32, 1, DIMS(2), DATA(0, 0)), T(I64, 1, DIMS(1), DATA(2))};
  run_fails("aten.scatter.value", "t0, 0, t1, 1", c, 2, SC_INTERP_ERROR_INVALID, "out of bounds");
  sc_tvalue *d[3] = {T(F32, 2, DIMS(3, 2), DATA(1, 1, 1, 1, 1, 1)), T(I64, 1, DIMS(3), DATA(0, 2, 0)),
                     T(F32, 2, DIMS(3, 2), DATA(1, 2, 3, 4, 5, 6))};
  CHECK1("aten.index_add.default", "t0, 0, t1, t2, alpha=2", d, 3, F32, 2, DIMS(3, 2),
         DATA(13, 17, 1, 1, 7, 9));
  sc_tvalue *e[1] = {T(I64, 1, DIMS(3), DATA(1, 0, 2))};
  CHECK1("aten.one_hot.default", "t0, 3", e, 1, I64, 2, DIMS(3, 3), DATA(0, 1, 0, 1, 0, 0, 0, 0, 1));
  sc_tvalue *g[1] = {T(I64, 1, DIMS(1), DATA(3))};
  run_fails("aten.one_hot.default", "t0, 3", g, 1, SC_INTERP_ERROR_INVALID,
            "Class values must be smaller than num_classes");
}

/* Attention of one head: q = [1, 2], k = [1, -1], v = [10, 20] (L = S = 2,
 * E = 1), scale 1.  Causal: row 0 sees key 0 only (output 10, logsumexp
 * 1); row 1 has scores [2, -2]: p = (a, b) = softmax, output 10a + 20b,
 * logsumexp log(e^2 + e^-2).  With grad_out = 1: grad_value = (1 + a, b),
 * grad_query = (0, -20ab), grad_key = (-20ab, 20ab). */
static void test_sdpa(void) {
  double a = exp(2) / (exp(2) + exp(-2)), b = 1 - a, lse1 = log(exp(2) + exp(-2));
  sc_tvalue *in[3] = {T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, 2)), T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, -1)),
                      T(F32, 4, DIMS(1, 1, 2, 1), DATA(10, 20))};
  GPtrArray *r = run("aten._scaled_dot_product_flash_attention.default",
                     "t0, t1, t2, 0.0, True, scale=1.0", in, 3);
  g_assert_cmpuint(r->len, ==, 9);
  EXPECT_NEAR(r->pdata[0], F32, 4, DIMS(1, 1, 2, 1), DATA(10, 10 * a + 20 * b), 1e-12);
  EXPECT_NEAR(r->pdata[1], F32, 3, DIMS(1, 1, 2), DATA(1, lse1), 1e-12);
  EXPECT(r->pdata[4], I64, 0, DIMS(0), DATA(2));
  g_ptr_array_unref(r);
  /* efficient: logsumexp padded with +inf to 32 rows */
  sc_tvalue *in2[3] = {T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, 2)), T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, -1)),
                       T(F32, 4, DIMS(1, 1, 2, 1), DATA(10, 20))};
  r = run("aten._scaled_dot_product_efficient_attention.default",
          "t0, t1, t2, None, True, 0.0, True, scale=1.0", in2, 3);
  sc_tvalue *lse = r->pdata[1];
  g_assert_cmpint(lse->numel, ==, 32);
  g_assert_cmpfloat_with_epsilon(lse->data[1], lse1, 1e-12);
  for (int i = 2; i < 32; i++)
    g_assert_true(isinf(lse->data[i]) && lse->data[i] > 0);
  g_ptr_array_unref(r);
  /* the pre-dispatch form, non-causal with a bool mask hiding key 1 */
  sc_tvalue *in3[4] = {T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, 2)), T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, -1)),
                       T(F32, 4, DIMS(1, 1, 2, 1), DATA(10, 20)), T(BOOL, 2, DIMS(2, 2), DATA(1, 0, 1, 0))};
  CHECK1("aten.scaled_dot_product_attention.default", "t0, t1, t2, t3, scale=1.0", in3, 4, F32, 4,
         DIMS(1, 1, 2, 1), DATA(10, 10));
  /* the backward from the saved output and logsumexp */
  sc_tvalue *bw[6] = {T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, 1)), T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, 2)),
                      T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, -1)), T(F32, 4, DIMS(1, 1, 2, 1), DATA(10, 20)),
                      T(F32, 4, DIMS(1, 1, 2, 1), DATA(10, 10 * a + 20 * b)),
                      T(F32, 3, DIMS(1, 1, 2), DATA(1, lse1))};
  r = run("aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
          "t0, t1, t2, t3, t4, t5, 0.0, True, scale=1.0", bw, 6);
  g_assert_cmpuint(r->len, ==, 3);
  EXPECT_NEAR(r->pdata[0], F32, 4, DIMS(1, 1, 2, 1), DATA(0, -20 * a * b), 1e-12);
  EXPECT_NEAR(r->pdata[1], F32, 4, DIMS(1, 1, 2, 1), DATA(-20 * a * b, 20 * a * b), 1e-12);
  EXPECT_NEAR(r->pdata[2], F32, 4, DIMS(1, 1, 2, 1), DATA(1 + a, b), 1e-12);
  g_ptr_array_unref(r);
  /* dropout is random: not evaluated */
  sc_tvalue *dr[3] = {T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, 2)), T(F32, 4, DIMS(1, 1, 2, 1), DATA(1, -1)),
                      T(F32, 4, DIMS(1, 1, 2, 1), DATA(10, 20))};
  run_fails("aten.scaled_dot_product_attention.default", "t0, t1, t2, dropout_p=0.1", dr, 3,
            SC_INTERP_ERROR_INVALID, "dropout_p != 0 is random");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  sc_ops_init();
  g_test_add_func("/interp/added/elementwise", test_added_elementwise);
  g_test_add_func("/interp/added/reductions", test_added_reductions);
  g_test_add_func("/interp/added/products-layout", test_added_products_layout);
  g_test_add_func("/interp/added/sdpa", test_sdpa);
  g_test_add_func("/interp/added/scatter-index-add-one-hot", test_added_scatter_index_add_one_hot);
  g_test_add_func("/interp/tvalue/new", test_tvalue_new);
  g_test_add_func("/interp/tvalue/round", test_tvalue_round);
  g_test_add_func("/interp/tvalue/print", test_tvalue_print);
  g_test_add_func("/interp/tvalue/compare", test_compare);
  g_test_add_func("/interp/tvalue/compare-rel-near-zero", test_compare_rel_near_zero);
  g_test_add_func("/interp/rng/seeded", test_rng);
  g_test_add_func("/interp/rng/random-input-range", test_random_input_range);
  g_test_add_func("/interp/creation/empty-pattern", test_empty_pattern);
  g_test_add_func("/interp/matmul/mm", test_mm);
  g_test_add_func("/interp/matmul/bmm-matmul", test_bmm_matmul);
  g_test_add_func("/interp/matmul/addmm-linear", test_addmm_linear);
  g_test_add_func("/interp/elementwise/add-broadcast", test_add_broadcast);
  g_test_add_func("/interp/elementwise/div-modes", test_div_modes);
  g_test_add_func("/interp/elementwise/pow-clamp", test_pow_clamp);
  g_test_add_func("/interp/elementwise/compare", test_compare_ops);
  g_test_add_func("/interp/elementwise/unary", test_unary);
  g_test_add_func("/interp/elementwise/gelu", test_gelu);
  g_test_add_func("/interp/elementwise/gelu-tanh", test_gelu_tanh);
  g_test_add_func("/interp/elementwise/backward", test_activation_backward);
  g_test_add_func("/interp/softmax/forward", test_softmax);
  g_test_add_func("/interp/softmax/backward", test_softmax_backward);
  g_test_add_func("/interp/norm/layer-norm", test_layer_norm);
  g_test_add_func("/interp/norm/layer-norm-backward", test_layer_norm_backward);
  g_test_add_func("/interp/dropout/follows-element", test_dropout);
  g_test_add_func("/interp/reduce/sum-mean", test_sum_mean);
  g_test_add_func("/interp/reduce/max-ties", test_max_ties);
  g_test_add_func("/interp/reduce/topk-sort", test_topk_sort);
  g_test_add_func("/interp/loss/embedding", test_embedding);
  g_test_add_func("/interp/loss/nll", test_nll_loss);
  g_test_add_func("/interp/loss/mse", test_mse_loss);
  g_test_add_func("/interp/layout/view-permute", test_view_permute);
  g_test_add_func("/interp/layout/slice", test_slice);
  g_test_add_func("/interp/layout/cat-split", test_cat_split);
  g_test_add_func("/interp/layout/flip-roll-repeat", test_flip_roll_repeat);
  g_test_add_func("/interp/layout/pad-triangle", test_pad_tri);
  g_test_add_func("/interp/layout/where-mask", test_where_mask);
  g_test_add_func("/interp/index/gather-scatter", test_gather_scatter);
  g_test_add_func("/interp/index/index-tensor", test_index_tensor);
  g_test_add_func("/interp/index/index-put", test_index_put);
  g_test_add_func("/interp/index/scatter-backward", test_scatter_backward);
  g_test_add_func("/interp/creation/values", test_creation);
  g_test_add_func("/interp/comm/all-reduce", test_all_reduce);
  g_test_add_func("/interp/comm/all-gather", test_all_gather);
  g_test_add_func("/interp/comm/reduce-scatter", test_reduce_scatter);
  g_test_add_func("/interp/comm/all-to-all", test_all_to_all);
  g_test_add_func("/interp/comm/broadcast-send", test_broadcast_send);
  g_test_add_func("/interp/comm/c10d-one-member", test_c10d_one_member);
  g_test_add_func("/interp/sc/clean-ops", test_sc_ops);
  g_test_add_func("/interp/registry/every-op-has-evaluator", test_every_op_has_evaluator);
  g_test_add_func("/interp/registry/inplace-refused", test_inplace_refused);
  g_test_add_func("/interp/graph/run", test_graph_run);
  g_test_add_func("/interp/graph/error-names-node", test_graph_error_names_node);
  g_test_add_func("/interp/graph/symbolic", test_symbolic_graph);
  g_test_add_func("/interp/nonzero/values", test_nonzero);
  g_test_add_func("/interp/nonzero/moe-identities", test_moe_identities);
  g_test_add_func("/interp/graph/data-dependent", test_graph_data_dependent);
  g_test_add_func("/interp/graph/data-dependent-refused", test_graph_data_dependent_refused);
  g_test_add_func("/interp/texpr/eval", test_texpr);
  return g_test_run();
}
