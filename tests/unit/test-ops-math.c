/* test-ops-math.c — the math operators of the registry (ops-math.def,
 * rules-math.c): result shapes and dtypes, type promotion, and the errors
 * (codes and key words of messages).
 *
 * Each call goes through the registry as a front end would: sc_ops_lookup,
 * sc_ops_bind of raw values (written in the small Python-like argument
 * syntax of ops-fixture.h: `x, [0, -1], True, dtype=f32, "S/2"`), then
 * sc_ops_infer.  Results are compared as text, "[4, 8] f32; [4, 1] f32". */
#include "shardcheck/ops.h"
#include "ops-fixture.h"

#include <glib.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixture (ops-fixture.h): the size symbols of the tests ---- */

static fx *fx_new(void) {
  static const char *const syms[] = {"B", "S", "T", "H", "K", "N", "V"};
  return fx_new_with(syms, G_N_ELEMENTS(syms));
}

/* ---- running a call ---- */

/* Bind ARGS to OPNAME and infer; the results as text, or NULL with ERROR.
 * Binding must succeed (these tests are about the shape rules). */
static char *run(fx *f, const char *opname, const char *args, GError **error) {
  g_autoptr(GError) lerr = NULL;
  const sc_op *op = sc_ops_lookup(opname, &lerr);
  g_assert_no_error(lerr);
  g_assert_nonnull(op);
  sc_value *bound;
  g_autoptr(GError) berr = NULL;
  gboolean ok = fx_bind(f, op, args, &bound, NULL, &berr);
  if (!ok)
    g_printerr("bind %s(%s): %s\n", opname, args, berr ? berr->message : "?");
  g_assert_no_error(berr);
  g_assert_true(ok);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
  char *result = NULL;
  if (fx_infer(f, op, bound, out, error))
    result = fx_types_text(out);
  else
    g_assert_cmpuint(out->len, ==, 0);
  g_array_unref(out);
  fx_bound_free(op, bound);
  return result;
}

static void expect_ok(fx *f, const char *opname, const char *args, const char *expected) {
  g_autoptr(GError) err = NULL;
  g_autofree char *got = run(f, opname, args, &err);
  if (err != NULL)
    g_printerr("%s(%s): unexpected error: %s\n", opname, args, err->message);
  g_assert_no_error(err);
  g_assert_cmpstr(got, ==, expected);
}

/* The call fails with CODE and a message containing each of the
 * NULL-terminated key phrases. */
static void expect_err(fx *f, const char *opname, const char *args, sc_ops_error code, ...) {
  g_autoptr(GError) err = NULL;
  g_autofree char *got = run(f, opname, args, &err);
  if (got != NULL)
    g_printerr("%s(%s): expected an error, got %s\n", opname, args, got);
  g_assert_null(got);
  g_assert_error(err, SC_OPS_ERROR, (gint)code);
  if (g_getenv("SC_TEST_VERBOSE") != NULL)
    g_printerr("%s(%s): %s\n", opname, args, err->message);
  va_list ap;
  va_start(ap, code);
  for (const char *k = va_arg(ap, const char *); k != NULL; k = va_arg(ap, const char *)) {
    if (strstr(err->message, k) == NULL)
      g_printerr("message \"%s\" lacks \"%s\"\n", err->message, k);
    g_assert_nonnull(strstr(err->message, k));
  }
  va_end(ap);
}

#define FX() g_autoptr(fx) f = fx_new()

/* ======================================================================== */
/* Binary arithmetic                                                         */

static void test_add_same(void) {
  FX();
  decl(f, "a", "f32", "[4, 8]");
  decl(f, "b", "f32", "[4, 8]");
  expect_ok(f, "aten.add.Tensor", "a, b", "[4, 8] f32");
  expect_ok(f, "aten.mul.Tensor", "a, b", "[4, 8] f32");
  expect_ok(f, "aten.sub.Tensor", "a, b, alpha=2", "[4, 8] f32");
  expect_ok(f, "aten.rsub.Tensor", "a, b", "[4, 8] f32");
  expect_ok(f, "aten.maximum", "a, b", "[4, 8] f32");
  expect_ok(f, "aten.minimum", "a, b", "[4, 8] f32");
}

static void test_broadcast_concrete(void) {
  FX();
  decl(f, "a", "f32", "[4, 1, 8]");
  decl(f, "b", "f32", "[3, 1]");
  decl(f, "c", "f32", "[5]");
  decl(f, "s", "f32", "[]");
  expect_ok(f, "aten.add.Tensor", "a, b", "[4, 3, 8] f32");
  expect_ok(f, "aten.mul.Tensor", "b, a", "[4, 3, 8] f32");
  expect_ok(f, "aten.add.Tensor", "b, c", "[3, 5] f32");
  expect_ok(f, "aten.add.Tensor", "s, a", "[4, 1, 8] f32");
  expect_ok(f, "aten.add.Tensor", "s, s", "[] f32");
  expect_err(f, "aten.add.Tensor", "a, c", SC_OPS_ERROR_SHAPE, "aten.add.Tensor",
             "self and other", "[4, 1, 8]", "[5]", NULL);
}

static void test_broadcast_symbolic(void) {
  FX();
  decl(f, "a", "f32", "[S, 1]");
  decl(f, "b", "f32", "[1, 8]");
  decl(f, "c", "f32", "[S, 8]");
  decl(f, "d", "f32", "[T, 8]");
  decl(f, "h", "f32", "[S/2, 8]");
  decl(f, "h2", "f32", "[S/2, 1]");
  expect_ok(f, "aten.add.Tensor", "a, b", "[S, 8] f32");
  expect_ok(f, "aten.add.Tensor", "c, c", "[S, 8] f32");
  expect_ok(f, "aten.mul.Tensor", "h, h2", "[S/2, 8] f32");
  expect_err(f, "aten.add.Tensor", "c, d", SC_OPS_ERROR_UNDECIDED, "[S, 8]", "[T, 8]", NULL);
  expect_err(f, "aten.eq.Tensor", "c, d", SC_OPS_ERROR_UNDECIDED, "aten.eq.Tensor", NULL);
}

/* Tensor-tensor promotion (both with dims). */
static void test_promotion_table(void) {
  static const struct { const char *a, *b, *r; } table[] = {
    {"f32", "f32", "f32"}, {"f32", "f16", "f32"}, {"f16", "bf16", "f32"},
    {"f64", "f32", "f64"}, {"bf16", "bf16", "bf16"}, {"i32", "i64", "i64"},
    {"bool", "i32", "i32"}, {"i64", "f16", "f16"}, {"u8", "bool", "u8"},
    {"bool", "bool", "bool"}, {"i8", "i64", "i64"}, {"i64", "bf16", "bf16"},
    {"bool", "f16", "f16"}, {"i32", "f64", "f64"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    FX();
    decl(f, "a", table[i].a, "[2, 3]");
    decl(f, "b", table[i].b, "[3]");
    g_autofree char *want = g_strdup_printf("[2, 3] %s", table[i].r);
    expect_ok(f, "aten.add.Tensor", "a, b", want);
    expect_ok(f, "aten.mul.Tensor", "b, a", want);
    expect_ok(f, "aten.maximum", "a, b", want);
  }
}

/* Zero-dim tensors do not raise the category of tensors with dims. */
static void test_promotion_zero_dim(void) {
  FX();
  decl(f, "x32", "f32", "[4]");
  decl(f, "i32", "i32", "[4]");
  decl(f, "b", "bool", "[4]");
  decl(f, "z64", "f64", "[]");
  decl(f, "zi64", "i64", "[]");
  decl(f, "zf16", "f16", "[]");
  expect_ok(f, "aten.add.Tensor", "x32, z64", "[4] f32");
  expect_ok(f, "aten.add.Tensor", "i32, zi64", "[4] i32");
  expect_ok(f, "aten.add.Tensor", "i32, z64", "[4] f64");
  expect_ok(f, "aten.add.Tensor", "i32, zf16", "[4] f16");
  expect_ok(f, "aten.add.Tensor", "b, zi64", "[4] i64");
  expect_ok(f, "aten.add.Tensor", "z64, zf16", "[] f64");
}

/* Scalars: the tensor's category wins unless the scalar is of a higher one
 * (int tensor with a float scalar gives the default dtype f32). */
static void test_promotion_scalar(void) {
  FX();
  decl(f, "i64", "i64", "[4]");
  decl(f, "i32", "i32", "[4]");
  decl(f, "i8", "i8", "[4]");
  decl(f, "h", "f16", "[4]");
  decl(f, "b", "bool", "[4]");
  decl(f, "z", "f64", "[]");
  expect_ok(f, "aten.add.Scalar", "i64, 2.5", "[4] f32");
  expect_ok(f, "aten.mul.Scalar", "i32, 2.0", "[4] f32");
  expect_ok(f, "aten.add.Scalar", "h, 2.5", "[4] f16");
  expect_ok(f, "aten.add.Scalar", "i8, 1000", "[4] i8");
  expect_ok(f, "aten.mul.Scalar", "b, 2", "[4] i64");
  expect_ok(f, "aten.add.Scalar", "b, True", "[4] bool");
  expect_ok(f, "aten.mul.Scalar", "b, 1.5", "[4] f32");
  expect_ok(f, "aten.mul.Scalar", "z, 3", "[] f64");
  expect_ok(f, "aten.sub.Scalar", "h, 1", "[4] f16");
  expect_ok(f, "aten.rsub.Scalar", "i32, 1", "[4] i32");
}

static void test_alpha(void) {
  FX();
  decl(f, "i", "i64", "[4]");
  decl(f, "x", "f32", "[4]");
  decl(f, "b", "bool", "[4]");
  expect_ok(f, "aten.add.Tensor", "x, x, alpha=0.5", "[4] f32");
  expect_ok(f, "aten.add.Tensor", "i, i, alpha=3", "[4] i64");
  expect_err(f, "aten.add.Tensor", "i, i, alpha=0.5", SC_OPS_ERROR_SHAPE, "alpha",
             "floating point", NULL);
  expect_err(f, "aten.add.Scalar", "i, 1, 0.5", SC_OPS_ERROR_SHAPE, "alpha", NULL);
  expect_err(f, "aten.add.Tensor", "x, x, alpha=True", SC_OPS_ERROR_SHAPE,
             "boolean alpha", NULL);
  expect_ok(f, "aten.add.Tensor", "b, b, alpha=True", "[4] bool");
}

static void test_sub_bool(void) {
  FX();
  decl(f, "b", "bool", "[4]");
  decl(f, "x", "f32", "[4]");
  expect_err(f, "aten.sub.Tensor", "b, b", SC_OPS_ERROR_SHAPE, "bool", "self", NULL);
  expect_err(f, "aten.sub.Tensor", "x, b", SC_OPS_ERROR_SHAPE, "bool", "other", NULL);
  expect_err(f, "aten.rsub.Scalar", "x, True", SC_OPS_ERROR_SHAPE, "bool", NULL);
  expect_ok(f, "aten.rsub.Scalar", "x, 1.0", "[4] f32");
  expect_ok(f, "aten.add.Tensor", "x, b", "[4] f32");
}

static void test_div(void) {
  FX();
  decl(f, "i", "i64", "[4, 1]");
  decl(f, "j", "i32", "[3]");
  decl(f, "h", "f16", "[3]");
  decl(f, "b", "bool", "[3]");
  expect_ok(f, "aten.div.Tensor", "i, j", "[4, 3] f32");
  expect_ok(f, "aten.div.Tensor", "b, b", "[3] f32");
  expect_ok(f, "aten.div.Tensor", "i, h", "[4, 3] f16");
  expect_ok(f, "aten.div.Scalar", "h, 2", "[3] f16");
  expect_ok(f, "aten.div.Scalar", "j, 2", "[3] f32");
  expect_ok(f, "aten.div.Tensor_mode", "i, j, rounding_mode=\"floor\"", "[4, 3] i64");
  expect_ok(f, "aten.div.Tensor_mode", "i, j, rounding_mode=None", "[4, 3] f32");
  expect_ok(f, "aten.div.Scalar_mode", "j, 2, rounding_mode=\"trunc\"", "[3] i32");
  expect_ok(f, "aten.div.Scalar_mode", "j, 2.5, rounding_mode=\"trunc\"", "[3] f32");
  expect_err(f, "aten.div.Tensor_mode", "i, j, rounding_mode=\"round\"", SC_OPS_ERROR_SHAPE,
             "rounding_mode", "round", NULL);
}

static void test_pow(void) {
  FX();
  decl(f, "i", "i64", "[4]");
  decl(f, "j", "i32", "[4]");
  decl(f, "x", "f32", "[4, 1]");
  decl(f, "z", "f64", "[]");
  expect_ok(f, "aten.pow.Tensor_Scalar", "i, 2", "[4] i64");
  expect_ok(f, "aten.pow.Tensor_Scalar", "i, 0.5", "[4] f32");
  expect_ok(f, "aten.pow.Tensor_Scalar", "x, -2", "[4, 1] f32");
  expect_err(f, "aten.pow.Tensor_Scalar", "i, -1", SC_OPS_ERROR_SHAPE, "negative integer powers",
             NULL);
  expect_ok(f, "aten.pow.Tensor_Tensor", "x, z", "[4, 1] f32");
  expect_ok(f, "aten.pow.Tensor_Tensor", "x, i", "[4, 4] f32");
  expect_ok(f, "aten.pow.Scalar", "2, j", "[4] i32");
  expect_ok(f, "aten.pow.Scalar", "2.5, j", "[4] f32");
}

static void test_clamp(void) {
  FX();
  decl(f, "i", "i64", "[4, 3]");
  decl(f, "x", "f16", "[4, 3]");
  decl(f, "lo", "f32", "[3]");
  decl(f, "hi", "f16", "[4, 1]");
  expect_ok(f, "aten.clamp.default", "x, 0, 1", "[4, 3] f16");
  expect_ok(f, "aten.clamp.default", "i, min=0", "[4, 3] i64");
  expect_ok(f, "aten.clamp.default", "i, None, 0.5", "[4, 3] f32");
  expect_err(f, "aten.clamp.default", "x", SC_OPS_ERROR_SHAPE, "min or max", NULL);
  expect_ok(f, "aten.clamp.Tensor", "x, lo, hi", "[4, 3] f32");
  expect_ok(f, "aten.clamp.Tensor", "x, max=hi", "[4, 3] f16");
  decl(f, "bad", "f16", "[5]");
  expect_err(f, "aten.clamp.Tensor", "x, lo, bad", SC_OPS_ERROR_SHAPE, "max", NULL);
}

/* ======================================================================== */
/* Unary                                                                     */

static void test_unary_float(void) {
  FX();
  decl(f, "i", "i64", "[2, S]");
  decl(f, "b", "bool", "[3]");
  decl(f, "h", "bf16", "[2]");
  static const char *const ops[] = {"aten.exp", "aten.log", "aten.sqrt", "aten.rsqrt",
                                    "aten.tanh", "aten.sigmoid", "aten.sin", "aten.cos",
                                    "aten.reciprocal", "aten.log1p"};
  for (size_t k = 0; k < G_N_ELEMENTS(ops); k++) {
    expect_ok(f, ops[k], "i", "[2, S] f32");
    expect_ok(f, ops[k], "b", "[3] f32");
    expect_ok(f, ops[k], "h", "[2] bf16");
  }
}

static void test_unary_numeric(void) {
  FX();
  decl(f, "i", "i32", "[2, 3]");
  decl(f, "b", "bool", "[3]");
  decl(f, "x", "f16", "[]");
  expect_ok(f, "aten.abs", "i", "[2, 3] i32");
  expect_ok(f, "aten.relu", "x", "[] f16");
  expect_ok(f, "aten.neg", "i", "[2, 3] i32");
  expect_err(f, "aten.neg", "b", SC_OPS_ERROR_SHAPE, "aten.neg.default: neg of a bool tensor",
             NULL);
  expect_err(f, "aten.relu", "b", SC_OPS_ERROR_SHAPE, "relu of a bool tensor", NULL);
  expect_err(f, "aten.abs", "b", SC_OPS_ERROR_SHAPE, "abs of a bool tensor", NULL);
}

static void test_unary_activation(void) {
  FX();
  decl(f, "x", "bf16", "[B, S, H]");
  decl(f, "i", "i64", "[4]");
  expect_ok(f, "aten.gelu", "x", "[B, S, H] bf16");
  expect_ok(f, "aten.gelu", "x, approximate=\"tanh\"", "[B, S, H] bf16");
  expect_err(f, "aten.gelu", "x, approximate=\"fast\"", SC_OPS_ERROR_SHAPE, "approximate",
             "fast", NULL);
  expect_err(f, "aten.gelu", "i", SC_OPS_ERROR_SHAPE, "self", "floating", "i64", NULL);
  expect_ok(f, "aten.silu", "x", "[B, S, H] bf16");
  expect_err(f, "aten.silu", "i", SC_OPS_ERROR_SHAPE, "floating", NULL);
  expect_ok(f, "aten.softplus", "x, 2, 10", "[B, S, H] bf16");
  expect_ok(f, "aten.log_sigmoid", "x", "[B, S, H] bf16");
}

static void test_bitwise_logical(void) {
  FX();
  decl(f, "b", "bool", "[4, 1]");
  decl(f, "i", "i32", "[3]");
  decl(f, "l", "i64", "[3]");
  decl(f, "x", "f32", "[3]");
  expect_ok(f, "aten.bitwise_not", "b", "[4, 1] bool");
  expect_ok(f, "aten.bitwise_not", "i", "[3] i32");
  expect_err(f, "aten.bitwise_not", "x", SC_OPS_ERROR_SHAPE, "integral or bool", "f32", NULL);
  expect_ok(f, "aten.bitwise_and.Tensor", "b, b", "[4, 1] bool");
  expect_ok(f, "aten.bitwise_or.Tensor", "i, l", "[3] i64");
  expect_ok(f, "aten.bitwise_xor.Tensor", "b, i", "[4, 3] i32");
  expect_err(f, "aten.bitwise_or.Tensor", "i, x", SC_OPS_ERROR_SHAPE, "integral", NULL);
  expect_ok(f, "aten.logical_not", "x", "[3] bool");
  expect_ok(f, "aten.logical_and", "b, x", "[4, 3] bool");
  expect_ok(f, "aten.logical_or", "i, l", "[3] bool");
}

static void test_compare(void) {
  FX();
  decl(f, "x", "f32", "[4, 8]");
  decl(f, "h", "f16", "[8]");
  decl(f, "i", "i64", "[S, 1]");
  static const char *const names[] = {"lt", "le", "gt", "ge", "eq", "ne"};
  for (size_t k = 0; k < G_N_ELEMENTS(names); k++) {
    g_autofree char *t = g_strdup_printf("aten.%s.Tensor", names[k]);
    g_autofree char *s = g_strdup_printf("aten.%s.Scalar", names[k]);
    expect_ok(f, t, "x, h", "[4, 8] bool");
    expect_ok(f, t, "i, h", "[S, 8] bool");
    expect_ok(f, s, "x, 0.5", "[4, 8] bool");
    expect_ok(f, s, "i, 3", "[S, 1] bool");
    expect_err(f, t, "x, i", SC_OPS_ERROR_UNDECIDED, "self and other", NULL);
  }
}

static void test_elementwise_backward(void) {
  FX();
  decl(f, "g", "f32", "[4, 8]");
  decl(f, "y", "f32", "[4, 8]");
  decl(f, "h", "bf16", "[8]");
  decl(f, "i", "i64", "[4, 8]");
  expect_ok(f, "aten.sigmoid_backward", "g, y", "[4, 8] f32");
  expect_ok(f, "aten.tanh_backward", "g, h", "[4, 8] f32");
  expect_ok(f, "aten.silu_backward", "g, y", "[4, 8] f32");
  expect_ok(f, "aten.gelu_backward", "g, y, approximate=\"tanh\"", "[4, 8] f32");
  expect_ok(f, "aten.threshold_backward", "g, y, 0", "[4, 8] f32");
  expect_ok(f, "aten.threshold_backward", "h, h, 0.5", "[8] bf16");
  expect_err(f, "aten.tanh_backward", "i, i", SC_OPS_ERROR_SHAPE, "floating", NULL);
  decl(f, "bad", "f32", "[5]");
  expect_err(f, "aten.sigmoid_backward", "g, bad", SC_OPS_ERROR_SHAPE, "grad_output and output",
             NULL);
}

/* ======================================================================== */
/* Matrix products                                                           */

static void test_mm(void) {
  FX();
  decl(f, "a", "f32", "[4, 8]");
  decl(f, "b", "f32", "[8, 2]");
  decl(f, "c", "f32", "[16, 2]");
  decl(f, "h", "f16", "[8, 2]");
  decl(f, "v", "f32", "[8]");
  expect_ok(f, "aten.mm", "a, b", "[4, 2] f32");
  expect_err(f, "aten.mm", "a, c", SC_OPS_ERROR_SHAPE,
             "aten.mm.default: self [4, 8] and mat2 [16, 2] cannot be multiplied (8 != 16)",
             NULL);
  expect_err(f, "aten.mm", "a, h", SC_OPS_ERROR_SHAPE, "self is f32 but mat2 is f16", NULL);
  expect_err(f, "aten.mm", "a, v", SC_OPS_ERROR_SHAPE, "mat2 must be a 2-D tensor, got [8]",
             NULL);
}

static void test_mm_symbolic(void) {
  FX();
  decl(f, "a", "f32", "[S, K]");
  decl(f, "b", "f32", "[K, H]");
  decl(f, "c", "f32", "[T, H]");
  decl(f, "d", "f32", "[S/2, 4]");
  decl(f, "e", "f32", "[4, 2*S]");
  expect_ok(f, "aten.mm", "a, b", "[S, H] f32");
  expect_ok(f, "aten.mm", "d, e", "[S/2, 2*S] f32");
  expect_err(f, "aten.mm", "a, c", SC_OPS_ERROR_UNDECIDED, "cannot decide whether",
             "self [S, K] and mat2 [T, H]", "K == T is unknown", NULL);
}

static void test_bmm(void) {
  FX();
  decl(f, "a", "bf16", "[B, 4, 8]");
  decl(f, "b", "bf16", "[B, 8, 2]");
  decl(f, "c", "bf16", "[3, 8, 2]");
  decl(f, "d", "bf16", "[2, 8, 2]");
  decl(f, "e", "bf16", "[3, 4, 8]");
  decl(f, "m", "bf16", "[4, 8]");
  expect_ok(f, "aten.bmm", "a, b", "[B, 4, 2] bf16");
  expect_ok(f, "aten.bmm", "e, c", "[3, 4, 2] bf16");
  expect_err(f, "aten.bmm", "e, d", SC_OPS_ERROR_SHAPE, "cannot be multiplied",
             "batch size 3 != 2", NULL);
  expect_err(f, "aten.bmm", "a, c", SC_OPS_ERROR_UNDECIDED, "batch size B == 3", NULL);
  expect_err(f, "aten.bmm", "m, b", SC_OPS_ERROR_SHAPE, "self must be a 3-D tensor", NULL);
}

static void test_addmm(void) {
  FX();
  decl(f, "bias", "f32", "[2]");
  decl(f, "bias2", "f32", "[4, 1]");
  decl(f, "bad", "f32", "[3]");
  decl(f, "big", "f32", "[5, 4, 2]");
  decl(f, "a", "f32", "[4, 8]");
  decl(f, "b", "f32", "[8, 2]");
  decl(f, "c", "f32", "[9, 2]");
  decl(f, "hb", "f16", "[2]");
  expect_ok(f, "aten.addmm", "bias, a, b", "[4, 2] f32");
  expect_ok(f, "aten.addmm", "bias2, a, b, beta=0.5, alpha=2", "[4, 2] f32");
  expect_err(f, "aten.addmm", "bad, a, b", SC_OPS_ERROR_SHAPE,
             "self [3] cannot be expanded to [4, 2]", NULL);
  expect_err(f, "aten.addmm", "big, a, b", SC_OPS_ERROR_SHAPE, "rank 3 > 2", NULL);
  expect_err(f, "aten.addmm", "bias, a, c", SC_OPS_ERROR_SHAPE,
             "mat1 [4, 8] and mat2 [9, 2] cannot be multiplied (8 != 9)", NULL);
  expect_err(f, "aten.addmm", "hb, a, b", SC_OPS_ERROR_SHAPE, "self is f16 but mat1 is f32",
             NULL);
}

static void test_baddbmm(void) {
  FX();
  decl(f, "s", "f32", "[1, 4, 2]");
  decl(f, "x", "f32", "[B, 4, 8]");
  decl(f, "y", "f32", "[B, 8, 2]");
  decl(f, "z", "f32", "[B, 7, 2]");
  decl(f, "bad", "f32", "[3, 4, 2]");
  expect_ok(f, "aten.baddbmm", "s, x, y", "[B, 4, 2] f32");
  expect_ok(f, "aten.baddbmm", "s, x, y, beta=0, alpha=0.125", "[B, 4, 2] f32");
  expect_err(f, "aten.baddbmm", "s, x, z", SC_OPS_ERROR_SHAPE,
             "batch1 [B, 4, 8] and batch2 [B, 7, 2] cannot be multiplied (8 != 7)", NULL);
  expect_err(f, "aten.baddbmm", "bad, x, y", SC_OPS_ERROR_UNDECIDED, "self [3, 4, 2]",
             "3 == B", NULL);
}

static void test_matmul(void) {
  FX();
  decl(f, "v8", "f32", "[8]");
  decl(f, "v4", "f32", "[4]");
  decl(f, "m", "f32", "[4, 8]");
  decl(f, "n", "f32", "[8, 5]");
  decl(f, "t3", "f32", "[B, S, 8]");
  decl(f, "b4", "f32", "[2, 1, 4, 8]");
  decl(f, "b3", "f32", "[3, 8, 5]");
  decl(f, "b3x", "f32", "[7, 8, 5]");
  decl(f, "b2", "f32", "[2, 8, 5]");
  decl(f, "s", "f32", "[]");
  expect_ok(f, "aten.matmul", "v8, v8", "[] f32");
  expect_ok(f, "aten.matmul", "m, v8", "[4] f32");
  expect_ok(f, "aten.matmul", "v4, m", "[8] f32");
  expect_ok(f, "aten.matmul", "m, n", "[4, 5] f32");
  expect_ok(f, "aten.matmul", "t3, n", "[B, S, 5] f32");
  expect_ok(f, "aten.matmul", "t3, v8", "[B, S] f32");
  expect_ok(f, "aten.matmul", "v8, b2", "[2, 5] f32");
  expect_ok(f, "aten.matmul", "b4, b3", "[2, 3, 4, 5] f32");
  expect_err(f, "aten.matmul", "v8, v4", SC_OPS_ERROR_SHAPE,
             "self [8] and other [4] cannot be multiplied (8 != 4)", NULL);
  expect_err(f, "aten.matmul", "s, v8", SC_OPS_ERROR_SHAPE, "at least 1-D", NULL);
  expect_err(f, "aten.matmul", "b3x, m", SC_OPS_ERROR_SHAPE, "(5 != 4)", NULL);
  decl(f, "b7", "f32", "[7, 4, 8]");
  expect_err(f, "aten.matmul", "b7, b3", SC_OPS_ERROR_SHAPE, "batch dims", "[7, 4, 8]", NULL);
}

static void test_matmul_symbolic(void) {
  FX();
  decl(f, "x", "f32", "[B, S, H]");
  decl(f, "w", "f32", "[H, K]");
  decl(f, "m", "f32", "[S, 4]");
  decl(f, "t", "f32", "[T, 4, 2]");
  decl(f, "b1", "f32", "[B, 1, 4, 8]");
  decl(f, "bt", "f32", "[T, 8, 2]");
  decl(f, "b3", "f32", "[B, 4, 8]");
  expect_ok(f, "aten.matmul", "x, w", "[B, S, K] f32");
  expect_ok(f, "aten.matmul", "m, t", "[T, S, 2] f32");
  expect_ok(f, "aten.matmul", "b1, bt", "[B, T, 4, 2] f32");
  expect_err(f, "aten.matmul", "b3, bt", SC_OPS_ERROR_UNDECIDED, "batch dims", NULL);
  expect_err(f, "aten.matmul", "x, t", SC_OPS_ERROR_UNDECIDED, "H == 4 is unknown", NULL);
}

static void test_broadcast_max_rank(void) {
  FX();
  decl(f, "a", "f32", "[2, 1, 1, 1, 1, 1, 1, 8]");
  decl(f, "b", "f32", "[3, 1]");
  expect_ok(f, "aten.add.Tensor", "a, b", "[2, 1, 1, 1, 1, 1, 3, 8] f32");
  expect_ok(f, "aten.sum.dim_IntList", "a, [0, 7], True", "[1, 1, 1, 1, 1, 1, 1, 1] f32");
  expect_ok(f, "aten.sum.dim_IntList", "a, [-8]", "[1, 1, 1, 1, 1, 1, 8] f32");
}

static void test_linear(void) {
  FX();
  decl(f, "x", "bf16", "[B, S, 8]");
  decl(f, "w", "bf16", "[16, 8]");
  decl(f, "b", "bf16", "[16]");
  decl(f, "w1", "bf16", "[8]");
  decl(f, "wbad", "bf16", "[16, 4]");
  decl(f, "bbad", "bf16", "[8]");
  expect_ok(f, "aten.linear", "x, w", "[B, S, 16] bf16");
  expect_ok(f, "aten.linear", "x, w, b", "[B, S, 16] bf16");
  expect_ok(f, "aten.linear", "x, w1", "[B, S] bf16");
  expect_err(f, "aten.linear", "x, wbad", SC_OPS_ERROR_SHAPE,
             "input [B, S, 8] and weight [16, 4] cannot be multiplied (8 != 4)", NULL);
  expect_err(f, "aten.linear", "x, w, bbad", SC_OPS_ERROR_SHAPE, "bias [8]", NULL);
}

/* ======================================================================== */
/* Softmax                                                                   */

static void test_softmax(void) {
  FX();
  decl(f, "x", "f32", "[B, H, S, S]");
  decl(f, "h", "f16", "[4, 8]");
  decl(f, "b", "bf16", "[4, 8]");
  decl(f, "i", "i64", "[4]");
  expect_ok(f, "aten._softmax", "x, -1, False", "[B, H, S, S] f32");
  expect_ok(f, "aten._log_softmax", "x, 1, False", "[B, H, S, S] f32");
  expect_ok(f, "aten._softmax", "h, 0, True", "[4, 8] f32");
  expect_err(f, "aten._softmax", "b, 0, True", SC_OPS_ERROR_SHAPE, "f16 only", NULL);
  expect_err(f, "aten._softmax", "x, 4, False", SC_OPS_ERROR_SHAPE, "dim 4 is out of range",
             "[-4, 3]", NULL);
  expect_err(f, "aten._softmax", "x, -5, False", SC_OPS_ERROR_SHAPE, "out of range", NULL);
  expect_err(f, "aten._log_softmax", "i, 0, False", SC_OPS_ERROR_SHAPE, "floating", NULL);
}

static void test_softmax_backward(void) {
  FX();
  decl(f, "g", "f32", "[4, 8]");
  decl(f, "y", "f32", "[4, 8]");
  decl(f, "z", "f32", "[4, 9]");
  expect_ok(f, "aten._softmax_backward_data", "g, y, -1, f32", "[4, 8] f32");
  expect_ok(f, "aten._softmax_backward_data", "g, y, 1, f16", "[4, 8] f16");
  expect_ok(f, "aten._log_softmax_backward_data", "g, y, 0, bf16", "[4, 8] bf16");
  expect_err(f, "aten._softmax_backward_data", "g, z, 1, f32", SC_OPS_ERROR_SHAPE,
             "grad_output [4, 8]", "output [4, 9]", NULL);
  expect_err(f, "aten._softmax_backward_data", "g, y, 2, f32", SC_OPS_ERROR_SHAPE,
             "out of range", NULL);
}

/* ======================================================================== */
/* Normalization and dropout                                                 */

static void test_layer_norm(void) {
  FX();
  decl(f, "x", "f32", "[B, S, H]");
  decl(f, "w", "f32", "[H]");
  decl(f, "b", "f32", "[H]");
  decl(f, "y", "bf16", "[4, 6, 8]");
  decl(f, "yw", "bf16", "[6, 8]");
  expect_ok(f, "aten.native_layer_norm", "x, [\"H\"], w, b, 1e-05",
            "[B, S, H] f32; [B, S, 1] f32; [B, S, 1] f32");
  expect_ok(f, "aten.native_layer_norm", "x, [\"H\"], None, None, 1e-05",
            "[B, S, H] f32; [B, S, 1] f32; [B, S, 1] f32");
  expect_ok(f, "aten.native_layer_norm", "y, [6, 8], yw, yw, 1e-05",
            "[4, 6, 8] bf16; [4, 1, 1] f32; [4, 1, 1] f32");
  expect_ok(f, "aten.native_layer_norm", "y, [4, 6, 8], None, None, 0.001",
            "[4, 6, 8] bf16; [1, 1, 1] f32; [1, 1, 1] f32");
}

static void test_layer_norm_errors(void) {
  FX();
  decl(f, "y", "f32", "[4, 6]");
  decl(f, "w", "f32", "[7]");
  decl(f, "w6", "f32", "[6]");
  decl(f, "i", "i64", "[4, 6]");
  expect_err(f, "aten.native_layer_norm", "y, [8], None, None, 1e-05", SC_OPS_ERROR_SHAPE,
             "input [4, 6] cannot be normalized over normalized_shape [8] (6 != 8)", NULL);
  expect_err(f, "aten.native_layer_norm", "y, [6], w, None, 1e-05", SC_OPS_ERROR_SHAPE,
             "weight [7]", "normalized_shape [6]", NULL);
  expect_err(f, "aten.native_layer_norm", "y, [6], w6, w, 1e-05", SC_OPS_ERROR_SHAPE,
             "bias [7]", NULL);
  expect_err(f, "aten.native_layer_norm", "y, [], None, None, 1e-05", SC_OPS_ERROR_SHAPE,
             "at least 1-dimensional", NULL);
  expect_err(f, "aten.native_layer_norm", "y, [3, 4, 6], None, None, 1e-05", SC_OPS_ERROR_SHAPE,
             "fewer dims", NULL);
  expect_err(f, "aten.native_layer_norm", "i, [6], None, None, 1e-05", SC_OPS_ERROR_SHAPE,
             "floating", NULL);
  decl(f, "s", "f32", "[4, S]");
  expect_err(f, "aten.native_layer_norm", "s, [\"T\"], None, None, 1e-05",
             SC_OPS_ERROR_UNDECIDED, "S == T is unknown", NULL);
}

static void test_layer_norm_backward(void) {
  FX();
  decl(f, "g", "bf16", "[B, S, H]");
  decl(f, "x", "bf16", "[B, S, H]");
  decl(f, "mean", "f32", "[B, S, 1]");
  decl(f, "rstd", "f32", "[B, S, 1]");
  decl(f, "w", "f32", "[H]");
  decl(f, "gbad", "bf16", "[B, S, 4]");
  expect_ok(f, "aten.native_layer_norm_backward",
            "g, x, [\"H\"], mean, rstd, w, w, [True, True, True]",
            "[B, S, H] bf16; [H] f32; [H] f32");
  expect_ok(f, "aten.native_layer_norm_backward",
            "g, x, [\"H\"], mean, rstd, None, None, [True, False, False]",
            "[B, S, H] bf16; [H] bf16; [H] bf16");
  expect_err(f, "aten.native_layer_norm_backward",
             "gbad, x, [\"H\"], mean, rstd, w, w, [True, True, True]", SC_OPS_ERROR_UNDECIDED,
             "grad_out [B, S, 4]", NULL);
  decl(f, "g2", "bf16", "[B, 3, H]");
  decl(f, "x2", "bf16", "[B, 5, H]");
  expect_err(f, "aten.native_layer_norm_backward",
             "g2, x2, [\"H\"], mean, rstd, w, w, [True, True, True]", SC_OPS_ERROR_SHAPE,
             "grad_out [B, 3, H]", "3 != 5", NULL);
}

static void test_rms_norm(void) {
  FX();
  decl(f, "x", "f16", "[B, S, H]");
  decl(f, "w", "f16", "[H]");
  expect_ok(f, "aten._fused_rms_norm", "x, [\"H\"], w, 1e-06", "[B, S, H] f16; [B, S, 1] f32");
  expect_ok(f, "aten._fused_rms_norm", "x, [\"H\"], None, None", "[B, S, H] f16; [B, S, 1] f32");
}

static void test_dropout(void) {
  FX();
  decl(f, "x", "bf16", "[B, S, H]");
  decl(f, "m", "bool", "[B, S, H]");
  decl(f, "mf", "f32", "[B, S, H]");
  expect_ok(f, "aten.native_dropout", "x, 0.1, True", "[B, S, H] bf16; [B, S, H] bool");
  expect_ok(f, "aten.native_dropout", "x, 0, None", "[B, S, H] bf16; [B, S, H] bool");
  expect_err(f, "aten.native_dropout", "x, 1.5, True", SC_OPS_ERROR_SHAPE,
             "between 0 and 1", NULL);
  expect_err(f, "aten.native_dropout", "x, -0.5, True", SC_OPS_ERROR_SHAPE, "between 0 and 1",
             NULL);
  expect_ok(f, "aten.native_dropout_backward", "x, m, 1.1111", "[B, S, H] bf16");
  expect_err(f, "aten.native_dropout_backward", "x, mf, 1.1111", SC_OPS_ERROR_SHAPE,
             "mask must be bool", NULL);
}

/* ======================================================================== */
/* Reductions                                                                */

static void test_sum_default(void) {
  FX();
  decl(f, "i", "i32", "[2, 3]");
  decl(f, "b", "bool", "[5]");
  decl(f, "h", "f16", "[2, S]");
  decl(f, "u", "u8", "[2]");
  expect_ok(f, "aten.sum.default", "i", "[] i64");
  expect_ok(f, "aten.sum.default", "b", "[] i64");
  expect_ok(f, "aten.sum.default", "u", "[] i64");
  expect_ok(f, "aten.sum.default", "h", "[] f16");
  expect_ok(f, "aten.sum.default", "h, dtype=f32", "[] f32");
  expect_ok(f, "aten.sum.default", "i, dtype=i32", "[] i32");
}

static void test_sum_dims(void) {
  FX();
  decl(f, "x", "f32", "[2, 3, 4]");
  expect_ok(f, "aten.sum.dim_IntList", "x, [1]", "[2, 4] f32");
  expect_ok(f, "aten.sum.dim_IntList", "x, 1", "[2, 4] f32");
  expect_ok(f, "aten.sum.dim_IntList", "x, [1], True", "[2, 1, 4] f32");
  expect_ok(f, "aten.sum.dim_IntList", "x, [-1, 0]", "[3] f32");
  expect_ok(f, "aten.sum.dim_IntList", "x, [-1, 0], keepdim=True", "[1, 3, 1] f32");
  expect_ok(f, "aten.sum.dim_IntList", "x, []", "[] f32");
  expect_ok(f, "aten.sum.dim_IntList", "x, None", "[] f32");
  expect_ok(f, "aten.sum.dim_IntList", "x, [], True", "[1, 1, 1] f32");
  expect_ok(f, "aten.sum.dim_IntList", "x, [0], dtype=f64", "[3, 4] f64");
}

static void test_sum_dim_errors(void) {
  FX();
  decl(f, "x", "f32", "[2, 3, 4]");
  decl(f, "s", "f32", "[]");
  expect_err(f, "aten.sum.dim_IntList", "x, [0, -3]", SC_OPS_ERROR_SHAPE,
             "dim 0 appears multiple times", NULL);
  expect_err(f, "aten.sum.dim_IntList", "x, [1, 1]", SC_OPS_ERROR_SHAPE,
             "dim 1 appears multiple times", NULL);
  expect_err(f, "aten.sum.dim_IntList", "x, [3]", SC_OPS_ERROR_SHAPE,
             "dim 3 is out of range for self [2, 3, 4]", "[-3, 2]", NULL);
  expect_err(f, "aten.sum.dim_IntList", "x, [-4]", SC_OPS_ERROR_SHAPE, "out of range", NULL);
  expect_err(f, "aten.sum.dim_IntList", "x, [\"S\"]", SC_OPS_ERROR_SHAPE,
             "concrete integer", NULL);
  expect_ok(f, "aten.sum.dim_IntList", "s, [0]", "[] f32");
  expect_ok(f, "aten.sum.dim_IntList", "s, [-1], True", "[] f32");
  expect_err(f, "aten.sum.dim_IntList", "s, [1]", SC_OPS_ERROR_SHAPE, "out of range", NULL);
}

static void test_sum_symbolic(void) {
  FX();
  decl(f, "x", "i64", "[B, S/2, H]");
  expect_ok(f, "aten.sum.dim_IntList", "x, [1]", "[B, H] i64");
  expect_ok(f, "aten.sum.dim_IntList", "x, [-2], True", "[B, 1, H] i64");
}

static void test_mean(void) {
  FX();
  decl(f, "x", "bf16", "[B, S, H]");
  decl(f, "i", "i64", "[4, 5]");
  expect_ok(f, "aten.mean.default", "x", "[] bf16");
  expect_ok(f, "aten.mean.dim", "x, [-1], True", "[B, S, 1] bf16");
  expect_ok(f, "aten.mean.dim", "x, [0, 1]", "[H] bf16");
  expect_ok(f, "aten.mean.dim", "x, [-1], dtype=f32", "[B, S] f32");
  expect_err(f, "aten.mean.default", "i", SC_OPS_ERROR_SHAPE, "floating", "i64", NULL);
  expect_err(f, "aten.mean.dim", "i, [0]", SC_OPS_ERROR_SHAPE, "floating", NULL);
  expect_ok(f, "aten.mean.default", "i, dtype=f32", "[] f32");
  expect_err(f, "aten.mean.dim", "x, [2, -1]", SC_OPS_ERROR_SHAPE, "dim 2 appears multiple",
             NULL);
}

static void test_var(void) {
  FX();
  decl(f, "x", "f32", "[B, S, H]");
  decl(f, "i", "i32", "[4]");
  expect_ok(f, "aten.var.correction", "x, [-1], correction=0, keepdim=True", "[B, S, 1] f32");
  expect_ok(f, "aten.var.correction", "x", "[] f32");
  expect_ok(f, "aten.var.correction", "x, [0, 2]", "[S] f32");
  expect_err(f, "aten.var.correction", "i", SC_OPS_ERROR_SHAPE, "floating", NULL);
}

static void test_amax(void) {
  FX();
  decl(f, "x", "f16", "[4, 5, 6]");
  decl(f, "i", "i32", "[4, 5]");
  expect_ok(f, "aten.amax", "x, [-1], True", "[4, 5, 1] f16");
  expect_ok(f, "aten.amax", "x", "[] f16");
  expect_ok(f, "aten.amin", "i, [0]", "[5] i32");
  expect_ok(f, "aten.amin", "x, [0, 2]", "[5] f16");
  expect_err(f, "aten.amax", "x, [2, 2]", SC_OPS_ERROR_SHAPE, "appears multiple times", NULL);
  expect_ok(f, "aten.max.default", "x", "[] f16");
  expect_ok(f, "aten.min.default", "i", "[] i32");
}

static void test_max_dim(void) {
  FX();
  decl(f, "x", "f32", "[4, S, 6]");
  expect_ok(f, "aten.max.dim", "x, 1", "[4, 6] f32; [4, 6] i64");
  expect_ok(f, "aten.max.dim", "x, -1, True", "[4, S, 1] f32; [4, S, 1] i64");
  expect_ok(f, "aten.min.dim", "x, 0, keepdim=True", "[1, S, 6] f32; [1, S, 6] i64");
  expect_err(f, "aten.max.dim", "x, 3", SC_OPS_ERROR_SHAPE, "out of range", NULL);
}

static void test_argmax(void) {
  FX();
  decl(f, "x", "bf16", "[2, 3]");
  expect_ok(f, "aten.argmax", "x", "[] i64");
  expect_ok(f, "aten.argmax", "x, None, True", "[1, 1] i64");
  expect_ok(f, "aten.argmax", "x, 1", "[2] i64");
  expect_ok(f, "aten.argmin", "x, -2, True", "[1, 3] i64");
  expect_err(f, "aten.argmin", "x, 2", SC_OPS_ERROR_SHAPE, "out of range", NULL);
}

static void test_cumsum(void) {
  FX();
  decl(f, "i", "i32", "[4, S]");
  decl(f, "b", "bool", "[4]");
  decl(f, "x", "f16", "[4]");
  expect_ok(f, "aten.cumsum", "i, 1", "[4, S] i64");
  expect_ok(f, "aten.cumsum", "b, 0", "[4] i64");
  expect_ok(f, "aten.cumsum", "x, -1", "[4] f16");
  expect_ok(f, "aten.cumsum", "i, -1, dtype=f32", "[4, S] f32");
  expect_err(f, "aten.cumsum", "x, 1", SC_OPS_ERROR_SHAPE, "dim 1 is out of range", NULL);
}

/* ======================================================================== */
/* Embedding and losses                                                      */

static void test_embedding(void) {
  FX();
  decl(f, "w", "bf16", "[V, H]");
  decl(f, "ids", "i64", "[B, S]");
  decl(f, "ids32", "i32", "[7]");
  decl(f, "id0", "i64", "[]");
  decl(f, "fl", "f32", "[B, S]");
  decl(f, "w1", "bf16", "[V]");
  expect_ok(f, "aten.embedding", "w, ids", "[B, S, H] bf16");
  expect_ok(f, "aten.embedding", "w, ids32, 0", "[7, H] bf16");
  expect_ok(f, "aten.embedding", "w, id0", "[H] bf16");
  expect_err(f, "aten.embedding", "w, fl", SC_OPS_ERROR_SHAPE, "indices must be i64 or i32",
             NULL);
  expect_err(f, "aten.embedding", "w1, ids", SC_OPS_ERROR_SHAPE, "weight must be 2-D, got [V]",
             NULL);
  decl(f, "deep", "i64", "[1, 1, 1, 1, 1, 1, 1, 1]");
  expect_err(f, "aten.embedding", "w, deep", SC_OPS_ERROR_SHAPE, "more than 8 dims", NULL);
}

static void test_embedding_backward(void) {
  FX();
  decl(f, "g", "f32", "[B, S, H]");
  decl(f, "ids", "i64", "[B, S]");
  decl(f, "ids2", "i64", "[B, T]");
  expect_ok(f, "aten.embedding_dense_backward", "g, ids, \"V\", -1, False", "[V, H] f32");
  expect_ok(f, "aten.embedding_dense_backward", "g, ids, 50257, 0, False", "[50257, H] f32");
  expect_err(f, "aten.embedding_dense_backward", "g, ids, -3, -1, False", SC_OPS_ERROR_SHAPE,
             "num_weights", NULL);
  expect_err(f, "aten.embedding_dense_backward", "g, ids2, 10, -1, False",
             SC_OPS_ERROR_UNDECIDED, "S == T", NULL);
}

static void test_nll_loss(void) {
  FX();
  decl(f, "x", "f32", "[N, V]");
  decl(f, "t", "i64", "[N]");
  decl(f, "w", "f32", "[V]");
  decl(f, "x1", "f32", "[V]");
  decl(f, "t0", "i64", "[]");
  expect_ok(f, "aten.nll_loss_forward", "x, t, None, 0, -100", "[N] f32; [] f32");
  expect_ok(f, "aten.nll_loss_forward", "x, t, None, 1, -100", "[] f32; [] f32");
  expect_ok(f, "aten.nll_loss_forward", "x, t, w, 2, -100", "[] f32; [] f32");
  expect_ok(f, "aten.nll_loss_forward", "x1, t0, None, 0, -100", "[] f32; [] f32");
  expect_ok(f, "aten.nll_loss_forward", "x1, t0, w, 1, 0", "[] f32; [] f32");
}

static void test_nll_loss_errors(void) {
  FX();
  decl(f, "x", "f32", "[4, 10]");
  decl(f, "t", "i64", "[4]");
  decl(f, "t5", "i64", "[5]");
  decl(f, "tf", "f32", "[4]");
  decl(f, "w9", "f32", "[9]");
  decl(f, "x3", "f32", "[2, 4, 10]");
  expect_err(f, "aten.nll_loss_forward", "x, t, None, 3, -100", SC_OPS_ERROR_SHAPE,
             "reduction must be 0 (none), 1 (mean) or 2 (sum), got 3", NULL);
  expect_err(f, "aten.nll_loss_forward", "x, t5, None, 1, -100", SC_OPS_ERROR_SHAPE,
             "self [4, 10] and target [5]", "batch size 4 != 5", NULL);
  expect_err(f, "aten.nll_loss_forward", "x, tf, None, 1, -100", SC_OPS_ERROR_SHAPE,
             "target must be i64", NULL);
  expect_err(f, "aten.nll_loss_forward", "x, t, w9, 1, -100", SC_OPS_ERROR_SHAPE,
             "weight [9]", "classes 9 != 10", NULL);
  expect_err(f, "aten.nll_loss_forward", "x3, t, None, 1, -100", SC_OPS_ERROR_SHAPE,
             "self must be 1-D or 2-D", NULL);
}

static void test_nll_loss_backward(void) {
  FX();
  decl(f, "x", "bf16", "[N, V]");
  decl(f, "t", "i64", "[N]");
  decl(f, "g0", "bf16", "[]");
  decl(f, "gN", "bf16", "[N]");
  decl(f, "tw", "bf16", "[]");
  expect_ok(f, "aten.nll_loss_backward", "g0, x, t, None, 1, -100, tw", "[N, V] bf16");
  expect_ok(f, "aten.nll_loss_backward", "gN, x, t, None, 0, -100, tw", "[N, V] bf16");
  expect_err(f, "aten.nll_loss_backward", "gN, x, t, None, 1, -100, tw",
             SC_OPS_ERROR_UNDECIDED, "grad_output [N] can be a single-element tensor",
             "size N == 1 is unknown", NULL);
  expect_err(f, "aten.nll_loss_backward", "g0, x, t, None, 0, -100, tw", SC_OPS_ERROR_SHAPE,
             "grad_output []", "rank 0 != 1", NULL);
  decl(f, "tw2", "bf16", "[2]");
  expect_err(f, "aten.nll_loss_backward", "g0, x, t, None, 1, -100, tw2", SC_OPS_ERROR_SHAPE,
             "total_weight [2] cannot be a single-element tensor (size 2 != 1)", NULL);
}

static void test_mse_loss(void) {
  FX();
  decl(f, "x", "f32", "[B, 4]");
  decl(f, "y", "f32", "[B, 4]");
  decl(f, "y1", "f16", "[4]");
  decl(f, "i", "i64", "[B, 4]");
  expect_ok(f, "aten.mse_loss", "x, y", "[] f32");
  expect_ok(f, "aten.mse_loss", "x, y, 0", "[B, 4] f32");
  expect_ok(f, "aten.mse_loss", "x, y1, reduction=0", "[B, 4] f32");
  expect_ok(f, "aten.mse_loss", "x, y, 2", "[] f32");
  expect_err(f, "aten.mse_loss", "x, y, 5", SC_OPS_ERROR_SHAPE, "reduction", NULL);
  expect_err(f, "aten.mse_loss", "i, i", SC_OPS_ERROR_SHAPE, "floating", NULL);
  decl(f, "g", "f32", "[]");
  expect_ok(f, "aten.mse_loss_backward", "g, x, y, 1", "[B, 4] f32");
  expect_ok(f, "aten.mse_loss_backward", "x, x, y1, 0", "[B, 4] f32");
  decl(f, "bad", "f32", "[3]");
  expect_err(f, "aten.mse_loss_backward", "g, x, bad, 1", SC_OPS_ERROR_SHAPE,
             "target [3] cannot be expanded to [B, 4]", NULL);
}

/* ======================================================================== */
/* The table itself                                                          */

static void test_table_flags(void) {
  static const struct { const char *name; uint32_t set, unset; uint32_t n_results; } table[] = {
    {"aten.add.Tensor", SC_OP_ELEMENTWISE, SC_OP_REDUCTION | SC_OP_RANDOM, 1},
    {"aten.eq.Scalar", SC_OP_ELEMENTWISE, 0, 1},
    {"aten.gelu_backward.default", SC_OP_ELEMENTWISE, 0, 1},
    {"aten.threshold_backward.default", SC_OP_ELEMENTWISE, 0, 1},
    {"aten.native_dropout_backward.default", SC_OP_ELEMENTWISE, 0, 1},
    {"aten.sum.dim_IntList", SC_OP_REDUCTION, SC_OP_ELEMENTWISE, 1},
    {"aten.max.dim", SC_OP_REDUCTION | SC_OP_MULTI, SC_OP_ELEMENTWISE, 2},
    {"aten.native_dropout.default", SC_OP_RANDOM | SC_OP_MULTI, SC_OP_ELEMENTWISE, 2},
    {"aten.native_layer_norm.default", SC_OP_MULTI, SC_OP_ELEMENTWISE | SC_OP_REDUCTION, 3},
    {"aten.native_layer_norm_backward.default", SC_OP_MULTI, SC_OP_INPLACE, 3},
    {"aten.mm.default", 0, SC_OP_ELEMENTWISE | SC_OP_REDUCTION | SC_OP_MULTI, 1},
    {"aten.nll_loss_forward.default", SC_OP_MULTI, 0, 2},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    g_autoptr(GError) err = NULL;
    const sc_op *op = sc_ops_lookup(table[i].name, &err);
    g_assert_no_error(err);
    g_assert_nonnull(op);
    g_assert_cmpstr(op->qualname, ==, table[i].name);
    g_assert_cmpuint(op->flags & table[i].set, ==, table[i].set);
    g_assert_cmpuint(op->flags & table[i].unset, ==, 0);
    g_assert_cmpuint(op->n_results, ==, table[i].n_results);
    g_assert_nonnull(op->shape);
  }
}

static void test_table_schemas(void) {
  g_autoptr(GError) err = NULL;
  const sc_op *add = sc_ops_lookup("aten.add.Tensor", &err);
  g_assert_no_error(err);
  g_assert_cmpuint(add->n_args, ==, 3);
  g_assert_cmpstr(add->args[2].name, ==, "alpha");
  g_assert_true(add->args[2].kwarg_only);
  g_assert_true(add->args[2].has_default);
  const sc_op *adds = sc_ops_lookup("aten.add.Scalar", &err);
  g_assert_no_error(err);
  g_assert_false(adds->args[2].kwarg_only);
  const sc_op *sum = sc_ops_lookup("aten.sum.dim_IntList", &err);
  g_assert_no_error(err);
  g_assert_cmpuint(sum->n_args, ==, 4);
  g_assert_true(sum->args[1].optional);
  g_assert_true(sum->args[3].kwarg_only);
  const sc_op *ln = sc_ops_lookup("aten.native_layer_norm_backward", &err);
  g_assert_no_error(err);
  g_assert_cmpstr(ln->args[7].name, ==, "output_mask");
  g_assert_cmpuint(ln->args[7].fixed_len, ==, 3);
  const sc_op *mse = sc_ops_lookup("aten.mse_loss.default", &err);
  g_assert_no_error(err);
  g_assert_true(mse->args[2].has_default);
  g_assert_cmpint(mse->args[2].default_value.u.i.value, ==, 1);
  /* Every math op resolves by its bare name when it has one overload. */
  const sc_op *gelu = sc_ops_lookup("aten.gelu", &err);
  g_assert_no_error(err);
  g_assert_cmpstr(gelu->qualname, ==, "aten.gelu.default");
}

/* Unknown names, and binding errors are the registry's, but the math ops
 * must appear in its suggestions. */
static void test_table_lookup_errors(void) {
  g_autoptr(GError) err = NULL;
  g_assert_null(sc_ops_lookup("aten.amx.default", &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP);
  g_assert_nonnull(strstr(err->message, "aten.amax"));
}

/* ======================================================================== */
/* Operators added for unseen captures                                        */

static void test_added_elementwise(void) {
  FX();
  decl(f, "x", "f32", "[4, 8]");
  decl(f, "i", "i64", "[4, 8]");
  decl(f, "b", "bool", "[4]");
  decl(f, "y", "f32", "[8]");
  decl(f, "z", "f32", "[3]");
  decl(f, "h", "f16", "[4, 8]");
  expect_ok(f, "aten.erf", "x", "[4, 8] f32");
  expect_ok(f, "aten.erf", "i", "[4, 8] f32");
  expect_ok(f, "aten.clamp_min", "x, 0.5", "[4, 8] f32");
  expect_ok(f, "aten.clamp_max", "i, 3", "[4, 8] i64");
  expect_ok(f, "aten.floor_divide.default", "i, i", "[4, 8] i64");
  expect_ok(f, "aten.floor_divide.Scalar", "x, 2", "[4, 8] f32");
  expect_ok(f, "aten.remainder.Scalar", "i, 3", "[4, 8] i64");
  expect_err(f, "aten.remainder.Tensor", "b, b", SC_OPS_ERROR_SHAPE,
             "aten.remainder.Tensor: remainder of bool operands is not supported", NULL);
  expect_ok(f, "aten.addcmul", "x, y, x, value=0.5", "[4, 8] f32");
  expect_ok(f, "aten.addcmul", "i, i, i, value=2", "[4, 8] i64");
  expect_err(f, "aten.addcdiv", "i, i, i", SC_OPS_ERROR_SHAPE,
             "integer division with addcdiv is not supported (operands are i64)", NULL);
  expect_err(f, "aten.addcmul", "i, i, i, value=0.5", SC_OPS_ERROR_SHAPE,
             "a floating value needs floating operands", NULL);
  expect_err(f, "aten.addcmul", "x, z, x", SC_OPS_ERROR_SHAPE, "[4, 8]", "[3]", NULL);
  expect_ok(f, "aten.lerp.Scalar", "x, y, 0.25", "[4, 8] f32");
  expect_err(f, "aten.lerp.Scalar", "x, h, 0.25", SC_OPS_ERROR_SHAPE,
             "self is f32 but end is f16", NULL);
  expect_err(f, "aten.lerp.Scalar", "i, i, 0.25", SC_OPS_ERROR_SHAPE,
             "self must be floating-point, got i64", NULL);
  expect_ok(f, "aten.bernoulli.p", "x, 0.25", "[4, 8] f32");
  expect_err(f, "aten.bernoulli.p", "x, 1.5", SC_OPS_ERROR_SHAPE, "p must be in [0, 1]", NULL);
}

static void test_added_reductions(void) {
  FX();
  decl(f, "x", "f32", "[4, S, 8]");
  decl(f, "i", "i64", "[4, 8]");
  decl(f, "b", "bool", "[4, 8]");
  expect_ok(f, "aten.logsumexp", "x, [-1]", "[4, S] f32");
  expect_ok(f, "aten.logsumexp", "x, [1], True", "[4, 1, 8] f32");
  expect_ok(f, "aten.logsumexp", "i, [0]", "[8] f32");
  expect_err(f, "aten.logsumexp", "x, [3]", SC_OPS_ERROR_SHAPE, "dim 3 is out of range", NULL);
  expect_ok(f, "aten.var_mean.correction", "x, [1], correction=0, keepdim=True",
            "[4, 1, 8] f32; [4, 1, 8] f32");
  expect_ok(f, "aten.var_mean.correction", "x", "[] f32; [] f32");
  expect_err(f, "aten.var_mean.correction", "i", SC_OPS_ERROR_SHAPE,
             "var_mean needs a floating-point input, got i64", NULL);
  expect_ok(f, "aten.any.dim", "b, 1", "[4] bool");
  expect_ok(f, "aten.all.dim", "x, -1, True", "[4, S, 1] bool");
  expect_ok(f, "aten.any.default", "i", "[] bool");
  expect_ok(f, "aten.all.dims", "b, [0, 1]", "[] bool");
  expect_err(f, "aten.any.dims", "b, [0, 0]", SC_OPS_ERROR_SHAPE, "appears multiple times",
             NULL);
}

static void test_added_products(void) {
  FX();
  decl(f, "u", "f32", "[8]");
  decl(f, "w", "f32", "[K]");
  decl(f, "t", "f32", "[T]");
  decl(f, "m", "f32", "[4, 8]");
  decl(f, "h", "f16", "[8]");
  expect_ok(f, "aten.dot", "u, u", "[] f32");
  expect_ok(f, "aten.mv", "m, u", "[4] f32");
  expect_ok(f, "aten.outer", "u, w", "[8, K] f32");
  expect_err(f, "aten.dot", "u, h", SC_OPS_ERROR_SHAPE, "self is f32 but tensor is f16", NULL);
  expect_err(f, "aten.mv", "u, u", SC_OPS_ERROR_SHAPE, "self must be a 2-D tensor, got [8]",
             NULL);
  expect_err(f, "aten.dot", "w, t", SC_OPS_ERROR_UNDECIDED, "K == T is unknown", NULL);
}

static void test_added_softmax_norm(void) {
  FX();
  decl(f, "x", "bf16", "[2, S, 16]");
  decl(f, "w", "bf16", "[16]");
  decl(f, "i", "i64", "[4]");
  expect_ok(f, "aten.softmax.int", "x, -1", "[2, S, 16] bf16");
  expect_ok(f, "aten.softmax.int", "x, 1, f32", "[2, S, 16] f32");
  expect_ok(f, "aten.log_softmax.int", "x, 2, dtype=f32", "[2, S, 16] f32");
  expect_err(f, "aten.softmax.int", "i, 0", SC_OPS_ERROR_SHAPE,
             "the result dtype must be floating-point, got i64", NULL);
  expect_ok(f, "aten.layer_norm", "x, [16], w, w", "[2, S, 16] bf16");
  expect_ok(f, "aten.layer_norm", "x, [16]", "[2, S, 16] bf16");
  expect_err(f, "aten.layer_norm", "x, [8], w", SC_OPS_ERROR_SHAPE, "16 != 8", NULL);
}

static void test_added_attention(void) {
  FX();
  decl(f, "q", "f16", "[2, 8, S, 64]");
  decl(f, "k", "f16", "[2, 8, T, 64]");
  decl(f, "v", "f16", "[2, 8, T, 32]");
  decl(f, "kg", "f16", "[2, 2, T, 64]");
  decl(f, "k3", "f16", "[2, 3, T, 64]");
  decl(f, "m", "bool", "[S, T]");
  decl(f, "mb", "f32", "[S, T]");
  decl(f, "q3", "f16", "[8, S, 64]");
  decl(f, "k32", "f32", "[2, 8, T, 64]");
  /* the pre-dispatch form: output [.., L, Ev] */
  expect_ok(f, "aten.scaled_dot_product_attention", "q, k, v", "[2, 8, S, 32] f16");
  expect_ok(f, "aten.scaled_dot_product_attention", "q, k, k, m, scale=0.125",
            "[2, 8, S, 64] f16");
  expect_ok(f, "aten.scaled_dot_product_attention", "q, k, k, is_causal=True",
            "[2, 8, S, 64] f16");
  expect_err(f, "aten.scaled_dot_product_attention", "q, k, k, m, is_causal=True",
             SC_OPS_ERROR_SHAPE, "explicit attn_mask should not be set when is_causal=True", NULL);
  expect_ok(f, "aten.scaled_dot_product_attention", "q3, q3, q3", "[8, S, 64] f16");
  expect_ok(f, "aten.scaled_dot_product_attention", "q, kg, kg, enable_gqa=True",
            "[2, 8, S, 64] f16");
  expect_err(f, "aten.scaled_dot_product_attention", "q, kg, kg", SC_OPS_ERROR_SHAPE,
             "dim 1: 8 != 2", NULL);
  expect_err(f, "aten.scaled_dot_product_attention", "q, k3, k3, enable_gqa=True",
             SC_OPS_ERROR_SHAPE, "key heads 3 must divide the query heads 8", NULL);
  expect_err(f, "aten.scaled_dot_product_attention", "q, k, v, mb", SC_OPS_ERROR_SHAPE,
             "attn_mask must be bool or of the query's dtype f16, got f32", NULL);
  expect_err(f, "aten.scaled_dot_product_attention", "q, k32, k32", SC_OPS_ERROR_SHAPE,
             "query is f16 but key is f32", NULL);
  expect_err(f, "aten.scaled_dot_product_attention", "q, q3, q3", SC_OPS_ERROR_SHAPE,
             "must have the same number of dims", NULL);
  expect_err(f, "aten.scaled_dot_product_attention", "q, k, v, dropout_p=1.5",
             SC_OPS_ERROR_SHAPE, "dropout_p must be in [0, 1], got 1.5", NULL);
  /* flash: 9 results; logsumexp f32 [B, H, L] */
  expect_ok(f, "aten._scaled_dot_product_flash_attention", "q, k, k, 0.0, True",
            "[2, 8, S, 64] f16; [2, 8, S] f32; [0] i64; [0] i64; [] i64; [] i64; [] i64; "
            "[] i64; [0] f16");
  expect_err(f, "aten._scaled_dot_product_flash_attention", "q, k, v", SC_OPS_ERROR_SHAPE,
             "value head dim: 64 != 32", NULL);
  expect_err(f, "aten._scaled_dot_product_flash_attention", "q3, q3, q3", SC_OPS_ERROR_SHAPE,
             "query must be 4-D [batch, heads, L, E], got [8, S, 64]", NULL);
  /* efficient: log_sumexp padded to a multiple of 32 */
  expect_ok(f, "aten._scaled_dot_product_efficient_attention", "q, k, v, None, True",
            "[2, 8, S, 32] f16; [2, 8, 32*((S+31)/32)] f32; [] i64; [] i64");
  expect_ok(f, "aten._scaled_dot_product_efficient_attention", "q, k, v, None, False",
            "[2, 8, S, 32] f16; [2, 8, 0] f32; [] i64; [] i64");
  expect_ok(f, "aten._scaled_dot_product_flash_attention_for_cpu", "q, k, k",
            "[2, 8, S, 64] f16; [2, 8, S] f32");
}

static void test_added_attention_backward(void) {
  FX();
  decl(f, "q", "f32", "[1, 2, 4, 8]");
  decl(f, "k", "f32", "[1, 2, 6, 8]");
  decl(f, "lse", "f32", "[1, 2, 4]");
  decl(f, "lsep", "f32", "[1, 2, 32]");
  decl(f, "bad", "f32", "[1, 2, 5]");
  decl(f, "s", "i64", "[]");
  decl(f, "bias", "f32", "[4, 6]");
  expect_ok(f, "aten._scaled_dot_product_flash_attention_backward",
            "q, q, k, k, q, lse, None, None, 4, 6, 0.0, False, s, s",
            "[1, 2, 4, 8] f32; [1, 2, 6, 8] f32; [1, 2, 6, 8] f32");
  expect_err(f, "aten._scaled_dot_product_flash_attention_backward",
             "q, q, k, k, q, bad, None, None, 4, 6, 0.0, False, s, s", SC_OPS_ERROR_SHAPE,
             "logsumexp [1, 2, 5]", NULL);
  expect_ok(f, "aten._scaled_dot_product_efficient_attention_backward",
            "q, q, k, k, bias, q, lsep, s, s, 0.0, [True, True, True, True]",
            "[1, 2, 4, 8] f32; [1, 2, 6, 8] f32; [1, 2, 6, 8] f32; [4, 6] f32");
  expect_ok(f, "aten._scaled_dot_product_efficient_attention_backward",
            "q, q, k, k, None, q, lsep, s, s, 0.0, [True, True, True, False]",
            "[1, 2, 4, 8] f32; [1, 2, 6, 8] f32; [1, 2, 6, 8] f32; [0] f32");
  expect_err(f, "aten._scaled_dot_product_efficient_attention_backward",
             "k, q, k, k, None, q, lsep, s, s, 0.0, [True, True, True, False]",
             SC_OPS_ERROR_SHAPE, "grad_out_", NULL);
  expect_ok(f, "aten._scaled_dot_product_flash_attention_for_cpu_backward",
            "q, q, k, k, q, lse, 0.0, True", "[1, 2, 4, 8] f32; [1, 2, 6, 8] f32; [1, 2, 6, 8] f32");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  sc_ops_init();
  g_test_add_func("/ops-math/binary/same", test_add_same);
  g_test_add_func("/ops-math/binary/broadcast-concrete", test_broadcast_concrete);
  g_test_add_func("/ops-math/binary/broadcast-symbolic", test_broadcast_symbolic);
  g_test_add_func("/ops-math/promote/table", test_promotion_table);
  g_test_add_func("/ops-math/promote/zero-dim", test_promotion_zero_dim);
  g_test_add_func("/ops-math/promote/scalar", test_promotion_scalar);
  g_test_add_func("/ops-math/binary/alpha", test_alpha);
  g_test_add_func("/ops-math/binary/sub-bool", test_sub_bool);
  g_test_add_func("/ops-math/binary/div", test_div);
  g_test_add_func("/ops-math/binary/pow", test_pow);
  g_test_add_func("/ops-math/binary/clamp", test_clamp);
  g_test_add_func("/ops-math/unary/float", test_unary_float);
  g_test_add_func("/ops-math/unary/numeric", test_unary_numeric);
  g_test_add_func("/ops-math/unary/activation", test_unary_activation);
  g_test_add_func("/ops-math/unary/bitwise-logical", test_bitwise_logical);
  g_test_add_func("/ops-math/compare/all", test_compare);
  g_test_add_func("/ops-math/binary/backward", test_elementwise_backward);
  g_test_add_func("/ops-math/matmul/mm", test_mm);
  g_test_add_func("/ops-math/matmul/mm-symbolic", test_mm_symbolic);
  g_test_add_func("/ops-math/matmul/bmm", test_bmm);
  g_test_add_func("/ops-math/matmul/addmm", test_addmm);
  g_test_add_func("/ops-math/matmul/baddbmm", test_baddbmm);
  g_test_add_func("/ops-math/matmul/matmul", test_matmul);
  g_test_add_func("/ops-math/matmul/matmul-symbolic", test_matmul_symbolic);
  g_test_add_func("/ops-math/matmul/linear", test_linear);
  g_test_add_func("/ops-math/binary/max-rank", test_broadcast_max_rank);
  g_test_add_func("/ops-math/softmax/forward", test_softmax);
  g_test_add_func("/ops-math/softmax/backward", test_softmax_backward);
  g_test_add_func("/ops-math/norm/layer-norm", test_layer_norm);
  g_test_add_func("/ops-math/norm/layer-norm-errors", test_layer_norm_errors);
  g_test_add_func("/ops-math/norm/layer-norm-backward", test_layer_norm_backward);
  g_test_add_func("/ops-math/norm/rms-norm", test_rms_norm);
  g_test_add_func("/ops-math/dropout/all", test_dropout);
  g_test_add_func("/ops-math/reduce/sum-default", test_sum_default);
  g_test_add_func("/ops-math/reduce/sum-dims", test_sum_dims);
  g_test_add_func("/ops-math/reduce/sum-dim-errors", test_sum_dim_errors);
  g_test_add_func("/ops-math/reduce/sum-symbolic", test_sum_symbolic);
  g_test_add_func("/ops-math/reduce/mean", test_mean);
  g_test_add_func("/ops-math/reduce/var", test_var);
  g_test_add_func("/ops-math/reduce/amax", test_amax);
  g_test_add_func("/ops-math/reduce/max-dim", test_max_dim);
  g_test_add_func("/ops-math/reduce/argmax", test_argmax);
  g_test_add_func("/ops-math/reduce/cumsum", test_cumsum);
  g_test_add_func("/ops-math/embedding/forward", test_embedding);
  g_test_add_func("/ops-math/embedding/backward", test_embedding_backward);
  g_test_add_func("/ops-math/loss/nll", test_nll_loss);
  g_test_add_func("/ops-math/loss/nll-errors", test_nll_loss_errors);
  g_test_add_func("/ops-math/loss/nll-backward", test_nll_loss_backward);
  g_test_add_func("/ops-math/loss/mse", test_mse_loss);
  g_test_add_func("/ops-math/added/elementwise", test_added_elementwise);
  g_test_add_func("/ops-math/added/reductions", test_added_reductions);
  g_test_add_func("/ops-math/added/products", test_added_products);
  g_test_add_func("/ops-math/added/softmax-norm", test_added_softmax_norm);
  g_test_add_func("/ops-math/added/attention", test_added_attention);
  g_test_add_func("/ops-math/added/attention-backward", test_added_attention_backward);
  g_test_add_func("/ops-math/table/flags", test_table_flags);
  g_test_add_func("/ops-math/table/schemas", test_table_schemas);
  g_test_add_func("/ops-math/table/lookup-errors", test_table_lookup_errors);
  return g_test_run();
}
