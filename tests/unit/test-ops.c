/* test-ops.c — the operator registry framework and the layout operators:
 * schema parsing (tricky schemas, malformed ones), lookup, nearest names and
 * ambiguity, binding (defaults, keywords, keyword-only, coercions, every
 * error kind with its key words and location), and the shape rules of
 * ops-layout.def (views, slicing, cat/split/chunk, advanced indexing,
 * creation, collectives, symbolic sizes).
 *
 * Calls go through the registry as a front end would: sc_ops_lookup,
 * sc_ops_bind of raw values written in a small argument syntax
 * (`x, [0, -1], True, dtype='f32', end='S/2'`: quoted text and bare names
 * are strings, numbers with '.' or 'e' are floats), then sc_ops_infer.
 * Results are compared as text: "[4, 8] f32; [4] i64". */
#include "ops/ops-private.h"
#include "ops-fixture.h"

#include <math.h>
#include <string.h>

/* ---- fixture (ops-fixture.h): a symtab with S (S % 2 == 0), T ------------ */

static fx *fx_new(void) {
  static const char *const syms[] = {"S", "T"};
  return fx_new_with(syms, G_N_ELEMENTS(syms));
}

/* ---- running an operator ------------------------------------------------------ */

/* Look up, bind and infer; the result types as text, or NULL with error. */
static char *run(fx *f, const char *qualname, const char *args, GError **error) {
  const sc_op *op = sc_ops_lookup(qualname, error);
  if (op == NULL)
    return NULL;
  sc_value *bound;
  if (!fx_bind(f, op, args, &bound, NULL, error)) {
    g_free(bound);
    return NULL;
  }
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
  gboolean ok = fx_infer(f, op, bound, out, error);
  fx_bound_free(op, bound);
  return ok ? fx_types_text(out) : NULL;
}

static void check(fx *f, const char *qualname, const char *args, const char *want) {
  g_autoptr(GError) err = NULL;
  g_autofree char *got = run(f, qualname, args, &err);
  if (err != NULL)
    g_test_message("%s(%s): %s", qualname, args, err->message);
  g_assert_no_error(err);
  g_assert_cmpstr(got, ==, want);
}

/* Expect error CODE whose message contains each of the NULL-terminated
 * key words. */
static void check_err(fx *f, const char *qualname, const char *args, int code, ...) {
  g_autoptr(GError) err = NULL;
  g_autofree char *got = run(f, qualname, args, &err);
  if (got != NULL)
    g_test_message("%s(%s) unexpectedly gave %s", qualname, args, got);
  g_assert_null(got);
  g_assert_nonnull(err);
  g_test_message("%s(%s): %s", qualname, args, err->message);
  g_assert_cmpint(err->domain, ==, SC_OPS_ERROR);
  g_assert_cmpint(err->code, ==, code);
  va_list ap_;
  va_start(ap_, code);
  for (const char *w = va_arg(ap_, const char *); w != NULL; w = va_arg(ap_, const char *)) {
    if (strstr(err->message, w) == NULL)
      g_test_message("missing '%s' in: %s", w, err->message);
    g_assert_nonnull(strstr(err->message, w));
  }
  va_end(ap_);
}

static fx *std_fx(void) {
  fx *f = fx_new();
  decl(f, "x", "f32", "[2, 3, 4]");
  decl(f, "m", "f32", "[4, 6]");
  decl(f, "v", "f32", "[5]");
  decl(f, "s", "f32", "[]");
  decl(f, "a", "f32", "[2, 3]");
  decl(f, "b", "f32", "[2, 4]");
  decl(f, "h", "f16", "[2, 5]");
  decl(f, "y", "f32", "[S, 8]");
  decl(f, "z", "f32", "[S, 8]");
  decl(f, "w", "f32", "[T, 8]");
  decl(f, "i", "i64", "[3]");
  decl(f, "j", "i64", "[2, 1]");
  decl(f, "k", "i64", "[3, 1]");
  decl(f, "mask", "bool", "[4, 6]");
  decl(f, "bmask", "bool", "[6]");
  decl(f, "fi", "f32", "[3]");
  decl(f, "q", "f32", "[4, 6]");
  return f;
}

/* ---- schema parsing -------------------------------------------------------------- */

static void test_schema_tricky(void) {
  sc_op op;
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_ops_schema_parse(
      "aten",
      "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
      "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> "
      "(Tensor, Tensor, Tensor)",
      &op, &err));
  g_assert_no_error(err);
  g_assert_cmpstr(op.qualname, ==, "aten.native_layer_norm_backward.default");
  g_assert_cmpstr(op.overload, ==, "default");
  g_assert_cmpuint(op.n_args, ==, 8);
  g_assert_cmpuint(op.n_results, ==, 3);
  g_assert_false(op.results_variadic);
  g_assert_true(op.flags & SC_OP_MULTI);
  g_assert_cmpint(op.args[7].type, ==, SC_ARG_BOOL_LIST);
  g_assert_cmpuint(op.args[7].fixed_len, ==, 3);
  g_assert_true(op.args[5].optional);
  g_assert_false(op.args[5].has_default);
  sc_ops_schema_clear(&op);

  g_assert_true(sc_ops_schema_parse(
      "aten",
      "foo.bar_baz(Tensor(a!) self, Tensor?[] indices, int[2] stride=1, int[] dims=[0,1], "
      "float eps=1e-05, bool flag=False, str reduce=\"sum\", str approximate='none', "
      "SymInt? start=None, int dim=-1, *, ScalarType? dtype=None, MemoryFormat "
      "memory_format=contiguous_format, int reduction=Mean, Scalar alpha=1, Scalar beta=0.5, "
      "Generator? generator=None) -> (Tensor(a!) out, Tensor mask)",
      &op, &err));
  g_assert_no_error(err);
  g_assert_cmpstr(op.qualname, ==, "aten.foo.bar_baz");
  g_assert_true(op.flags & SC_OP_INPLACE);
  g_assert_true(op.flags & SC_OP_MULTI);
  g_assert_cmpuint(op.n_results, ==, 2);
  g_assert_cmpint(op.args[1].type, ==, SC_ARG_TENSOR_OPT_LIST);
  g_assert_cmpint(op.args[2].default_value.kind, ==, SC_VAL_INT_LIST);
  g_assert_cmpuint(op.args[2].default_value.u.ints.n, ==, 2);
  g_assert_cmpint(op.args[2].default_value.u.ints.v[1].value, ==, 1);
  g_assert_cmpuint(op.args[3].default_value.u.ints.n, ==, 2);
  g_assert_cmpint(op.args[3].default_value.u.ints.v[1].value, ==, 1);
  g_assert_cmpfloat(op.args[4].default_value.u.f, ==, 1e-05);
  g_assert_false(op.args[5].default_value.u.b);
  g_assert_cmpstr(op.args[6].default_value.u.s, ==, "sum");
  g_assert_cmpstr(op.args[7].default_value.u.s, ==, "none");
  g_assert_true(op.args[8].optional && op.args[8].has_default);
  g_assert_cmpint(op.args[8].default_value.kind, ==, SC_VAL_NONE);
  g_assert_cmpint(op.args[9].default_value.u.i.value, ==, -1);
  g_assert_false(op.args[9].kwarg_only);
  g_assert_true(op.args[10].kwarg_only);
  g_assert_cmpint(op.args[10].type, ==, SC_ARG_DTYPE);
  g_assert_cmpint(op.args[11].type, ==, SC_ARG_IGNORED);
  g_assert_cmpint(op.args[12].default_value.u.i.value, ==, 1);
  g_assert_cmpint(op.args[13].default_value.kind, ==, SC_VAL_INT);
  g_assert_cmpint(op.args[14].default_value.kind, ==, SC_VAL_FLOAT);
  g_assert_cmpint(op.args[15].type, ==, SC_ARG_IGNORED);
  g_autofree char *t1 = sc_ops_arg_type_string(&op.args[1]);
  g_autofree char *t2 = sc_ops_arg_type_string(&op.args[2]);
  g_autofree char *t8 = sc_ops_arg_type_string(&op.args[8]);
  g_assert_cmpstr(t1, ==, "Tensor?[]");
  g_assert_cmpstr(t2, ==, "int[2]");
  g_assert_cmpstr(t8, ==, "int?");
  sc_ops_schema_clear(&op);
}

static void test_schema_results(void) {
  sc_op op;
  g_assert_true(sc_ops_schema_parse("aten", "split.Tensor(Tensor(a -> *) self, SymInt split_size, "
                                            "int dim=0) -> Tensor(a)[]", &op, NULL));
  g_assert_true(op.results_variadic);
  g_assert_cmpuint(op.n_results, ==, 0);
  g_assert_true(op.flags & SC_OP_MULTI);
  g_assert_false(op.flags & SC_OP_INPLACE);
  sc_ops_schema_clear(&op);
  g_assert_true(sc_ops_schema_parse("aten", "_foreach_zero_(Tensor(a!)[] self) -> ()", &op, NULL));
  g_assert_cmpuint(op.n_results, ==, 0);
  g_assert_false(op.results_variadic);
  g_assert_true(op.flags & SC_OP_INPLACE);
  g_assert_false(op.flags & SC_OP_MULTI);
  sc_ops_schema_clear(&op);
  g_assert_true(sc_ops_schema_parse("aten", "noargs() -> Tensor", &op, NULL));
  g_assert_cmpuint(op.n_args, ==, 0);
  g_assert_cmpuint(op.n_results, ==, 1);
  sc_ops_schema_clear(&op);
  g_assert_true(sc_ops_schema_parse("aten", "sym_size.int(Tensor self, int dim) -> SymInt", &op, NULL));
  g_assert_cmpuint(op.n_results, ==, 1);
  sc_ops_schema_clear(&op);
}

static void test_schema_malformed(void) {
  static const struct { const char *schema; const char *word; } bad[] = {
      {"add.Tensor(Tensor self, Tensor other", "col 37"},
      {"add(Tensor self) Tensor", "expected '->'"},
      {"add(Tensor self, Tensor self) -> Tensor", "declared twice"},
      {"add(Tensor self, Dimname d) -> Tensor", "unsupported argument type 'Dimname'"},
      {"add(int x=abc) -> Tensor", "bad int default"},
      {"add(bool x=1) -> Tensor", "bad bool default"},
      {"add(str x=sum) -> Tensor", "quoted"},
      {"add(Tensor x) -> Tensor junk junk", "unexpected text"},
      {"(Tensor x) -> Tensor", "expected an operator name"},
      {"add(Tensor(a! self", "unterminated alias annotation"},
      {"add(int x=) -> Tensor", "expected a default value"},
      {"add(*, *, int x) -> Tensor", "'*' given twice"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    sc_op op;
    g_autoptr(GError) err = NULL;
    g_assert_false(sc_ops_schema_parse("aten", bad[i].schema, &op, &err));
    g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_SCHEMA);
    if (strstr(err->message, bad[i].word) == NULL)
      g_test_message("%s: %s", bad[i].schema, err->message);
    g_assert_nonnull(strstr(err->message, bad[i].word));
    g_assert_true(g_str_has_prefix(err->message, "col "));
  }
}

static void test_registry_builtins(void) {
  /* Every built-in parsed; flags derived from the schemas. */
  uint32_t n = sc_ops_count();
  g_assert_cmpuint(n, >=, 100);
  for (uint32_t i = 0; i < n; i++) {
    const sc_op *op = sc_ops_at(i);
    g_assert_cmpuint(op->id, ==, i);
    g_assert_nonnull(op->shape);
    /* only the sending half of a point-to-point move has no result */
    g_assert_true(op->n_results > 0 || op->results_variadic ||
                  strcmp(op->qualname, "comm.send.default") == 0);
    g_assert_true(sc_ops_lookup(op->qualname, NULL) == op);
  }
  const sc_op *op = sc_ops_lookup("aten.fill_.Scalar", NULL);
  g_assert_true(op->flags & SC_OP_INPLACE);
  op = sc_ops_lookup("aten.topk.default", NULL);
  g_assert_true(op->flags & SC_OP_MULTI);
  g_assert_cmpuint(op->n_results, ==, 2);
  op = sc_ops_lookup("sc.cat.default", NULL);
  g_assert_true((op->flags & SC_OP_CLEAN) && (op->flags & SC_OP_VIEW));
  op = sc_ops_lookup("comm.all_gather.default", NULL);
  g_assert_true(op->flags & SC_OP_COLLECTIVE);
  g_assert_true(op->results_variadic);
  op = sc_ops_lookup("aten._to_copy.default", NULL);
  g_assert_true(op->flags & SC_OP_IDENTITY);
  op = sc_ops_lookup("aten.arange.start_step", NULL);
  g_assert_true(op->flags & SC_OP_CREATION);
  g_assert_cmpint(sc_ops_arg_index(op, "step"), ==, 2);
  g_assert_cmpint(sc_ops_arg_index(op, "nope"), ==, -1);
}

/* ---- lookup ----------------------------------------------------------------------- */

static void test_lookup_exact(void) {
  g_autoptr(GError) err = NULL;
  const sc_op *op = sc_ops_lookup("aten.slice.Tensor", &err);
  g_assert_no_error(err);
  g_assert_cmpstr(op->name, ==, "slice");
  g_assert_cmpstr(op->overload, ==, "Tensor");
  g_assert_cmpstr(op->ns, ==, "aten");
  g_assert_true(sc_ops_lookup("aten.slice", NULL) == op);          /* one overload */
  g_assert_true(sc_ops_lookup("aten::slice.Tensor", NULL) == op);  /* C++ spelling */
  g_assert_true(sc_ops_lookup("aten.slice.default", NULL) == op);  /* the single overload */
  g_assert_null(sc_ops_lookup("aten.masked_fill.default", NULL));  /* two overloads, no default */
  const sc_op *t = sc_ops_lookup("aten.t.default", NULL);
  g_assert_nonnull(t);
  g_assert_true(sc_ops_lookup("aten.t", NULL) == t);
  g_assert_true(sc_ops_lookup("_c10d_functional.wait_tensor.default", NULL) ==
                sc_ops_lookup("_c10d_functional.wait_tensor", NULL));
}

static void test_lookup_unknown(void) {
  g_autoptr(GError) err = NULL;
  g_assert_null(sc_ops_lookup("aten.slic.Tensor", &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP);
  g_assert_cmpstr(err->message, ==,
                  "unknown operator 'aten.slic.Tensor' (did you mean 'aten.slice.Tensor'?)");
  g_clear_error(&err);
  g_assert_null(sc_ops_lookup("aten.completely_unrelated_thing.default", &err));
  g_assert_cmpstr(err->message, ==,
                  "unknown operator 'aten.completely_unrelated_thing.default'");
  g_assert_cmpstr(sc_ops_nearest("aten.transpose.in"), ==, "aten.transpose.int");
  g_assert_cmpstr(sc_ops_nearest("aten.permut"), ==, "aten.permute");
  g_assert_null(sc_ops_nearest("zzzzzzzzzzzzzzzz"));
}

static void test_lookup_ambiguous(void) {
  g_autoptr(GError) err = NULL;
  g_assert_null(sc_ops_lookup("aten.squeeze", &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP);
  g_assert_nonnull(strstr(err->message, "ambiguous"));
  g_assert_nonnull(strstr(err->message, "aten.squeeze.default"));
  g_assert_nonnull(strstr(err->message, "aten.squeeze.dim"));
  g_assert_nonnull(strstr(err->message, "aten.squeeze.dims"));
  /* ns.name.default where "default" is one of several overloads */
  g_assert_nonnull(sc_ops_lookup("aten.squeeze.default", NULL));
}

static void test_lookup_func(void) {
  g_autoptr(GError) err = NULL;
  const sc_op *op = sc_ops_lookup_func("cat", &err);
  g_assert_no_error(err);
  g_assert_cmpstr(op->qualname, ==, "sc.cat.default");
  op = sc_ops_lookup_func("all_reduce", &err);
  g_assert_cmpstr(op->qualname, ==, "comm.all_reduce.default");
  op = sc_ops_lookup_func("index_select", &err);
  g_assert_cmpstr(op->qualname, ==, "aten.index_select.default");
  op = sc_ops_lookup_func("slice.Tensor", &err);
  g_assert_cmpstr(op->qualname, ==, "aten.slice.Tensor");
  op = sc_ops_lookup_func("aten.cat", &err);
  g_assert_cmpstr(op->qualname, ==, "aten.cat.default");
  op = sc_ops_lookup_func("wait_tensor", &err);
  g_assert_cmpstr(op->qualname, ==, "_c10d_functional.wait_tensor.default");
  g_assert_no_error(err);
  g_assert_null(sc_ops_lookup_func("squeeze", &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP);
  g_assert_nonnull(strstr(err->message, "aten.squeeze.dim"));
  g_clear_error(&err);
  g_assert_null(sc_ops_lookup_func("permuet", &err));
  g_assert_cmpstr(err->message, ==, "unknown function 'permuet' (did you mean 'permute'?)");
  g_clear_error(&err);
  /* names longer than the probes' stack buffer: the same answers */
  g_autofree char *longname = g_strnfill(300, 'q');
  g_assert_null(sc_ops_lookup_func(longname, &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP);
  g_clear_error(&err);
  g_autofree char *longover = g_strconcat("cat.", longname, NULL);
  g_assert_null(sc_ops_lookup_func(longover, &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP);
  g_clear_error(&err);
  g_autofree char *longns = g_strconcat(longname, ".cat", NULL);
  g_assert_null(sc_ops_lookup_func(longns, &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP);
  g_clear_error(&err);
  /* an argument index by name, first letters alike */
  const sc_op *sl = sc_ops_lookup("sc.slice.default", NULL);
  g_assert_cmpint(sc_ops_arg_index(sl, "start"), >=, 0);
  g_assert_cmpint(sc_ops_arg_index(sl, "step"), >=, 0);
  g_assert_cmpint(sc_ops_arg_index(sl, "start"), !=, sc_ops_arg_index(sl, "step"));
  g_assert_cmpint(sc_ops_arg_index(sl, "stop"), ==, -1);
  g_assert_cmpint(sc_ops_arg_index(sl, ""), ==, -1);
}

/* ---- binding ------------------------------------------------------------------------ */

static void test_bind_defaults_kwargs(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup("aten.slice.Tensor", NULL);
  sc_value *b;
  g_autoptr(GError) err = NULL;
  g_assert_true(fx_bind(f, op, "x, 1, end='S/2'", &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(b[0].kind, ==, SC_VAL_TENSOR);
  g_assert_cmpuint(b[0].u.tensor, ==, 0);
  g_assert_cmpint(b[1].u.i.value, ==, 1);
  g_assert_cmpint(b[2].kind, ==, SC_VAL_NONE);          /* start=None default */
  g_assert_false(sc_dim_is_const(b[3].u.i));            /* symbolic end */
  g_autofree char *e = sc_dim_to_string(f->st, b[3].u.i);
  g_assert_cmpstr(e, ==, "S/2");
  g_assert_cmpint(b[4].u.i.value, ==, 1);               /* step=1 default */
  fx_bound_free(op, b);

  op = sc_ops_lookup("aten._to_copy.default", NULL);
  g_assert_true(fx_bind(f, op, "x, dtype='torch.bfloat16', device='cuda:0', layout='torch.strided', "
                               "pin_memory=False, memory_format='torch.contiguous_format'",
                        &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(b[1].kind, ==, SC_VAL_DTYPE);
  g_assert_cmpint(b[1].u.dtype, ==, SC_DTYPE_BF16);
  g_assert_cmpint(b[2].kind, ==, SC_VAL_NONE); /* layout ignored */
  g_assert_cmpint(b[3].kind, ==, SC_VAL_NONE); /* device ignored */
  g_assert_cmpint(b[5].kind, ==, SC_VAL_NONE); /* non_blocking ignored */
  fx_bound_free(op, b);
}

static void test_bind_coercions(void) {
  g_autoptr(fx) f = std_fx();
  g_autoptr(GError) err = NULL;
  sc_value *b;
  /* int -> float, "inf" -> float */
  const sc_op *op = sc_ops_lookup("aten.masked_fill.Scalar", NULL);
  g_assert_true(fx_bind(f, op, "m, mask, '-inf'", &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(b[2].kind, ==, SC_VAL_FLOAT);
  g_assert_true(isinf(b[2].u.f) && b[2].u.f < 0);
  fx_bound_free(op, b);
  /* Scalar keeps its kind */
  g_assert_true(fx_bind(f, op, "m, mask, 3", &b, NULL, &err));
  g_assert_cmpint(b[2].kind, ==, SC_VAL_INT);
  fx_bound_free(op, b);
  g_assert_true(fx_bind(f, op, "m, mask, True", &b, NULL, &err));
  g_assert_cmpint(b[2].kind, ==, SC_VAL_BOOL);
  fx_bound_free(op, b);
  /* a single int for int[1] */
  op = sc_ops_lookup("aten.roll.default", NULL);
  g_assert_true(fx_bind(f, op, "x, 2, -1", &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(b[1].kind, ==, SC_VAL_INT_LIST);
  g_assert_cmpuint(b[1].u.ints.n, ==, 1);
  g_assert_cmpuint(b[2].u.ints.n, ==, 1);
  g_assert_cmpint(b[2].u.ints.v[0].value, ==, -1);
  fx_bound_free(op, b);
  /* Tensor?[] with None */
  op = sc_ops_lookup("aten.index.Tensor", NULL);
  g_assert_true(fx_bind(f, op, "x, [None, i]", &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(b[1].u.list.n, ==, 2);
  g_assert_cmpuint(b[1].u.list.ids[0], ==, SC_ID_NONE);
  fx_bound_free(op, b);
  /* float arg from int; float arg from "nan" */
  sc_op fop;
  g_assert_true(sc_ops_schema_parse("aten", "f(float p, float q=0.5) -> Tensor", &fop, NULL));
  g_assert_true(fx_bind(f, &fop, "2, 'nan'", &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(b[0].kind, ==, SC_VAL_FLOAT);
  g_assert_cmpfloat(b[0].u.f, ==, 2.0);
  g_assert_true(isnan(b[1].u.f));
  fx_bound_free(&fop, b);
  g_assert_true(fx_bind(f, &fop, "1.5", &b, NULL, &err));
  g_assert_cmpfloat(b[1].u.f, ==, 0.5);
  fx_bound_free(&fop, b);
  sc_ops_schema_clear(&fop);
}

static void test_bind_variadic_sc(void) {
  g_autoptr(fx) f = std_fx();
  g_autoptr(GError) err = NULL;
  sc_value *b;
  const sc_op *op = sc_ops_lookup_func("cat", NULL);
  g_assert_true(fx_bind(f, op, "a, b, dim=1", &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(b[0].u.list.n, ==, 2);
  g_assert_cmpint(b[1].u.i.value, ==, 1);
  fx_bound_free(op, b);
  g_assert_true(fx_bind(f, op, "a, b, -1", &b, NULL, &err));
  g_assert_cmpint(b[1].u.i.value, ==, -1);
  fx_bound_free(op, b);
  op = sc_ops_lookup_func("sum", NULL);
  g_assert_true(fx_bind(f, op, "y, z, y", &b, NULL, &err));
  g_assert_cmpuint(b[0].u.list.n, ==, 3);
  fx_bound_free(op, b);
  /* aten.cat is not variadic */
  op = sc_ops_lookup("aten.cat.default", NULL);
  sc_bind_loc loc;
  g_assert_false(fx_bind(f, op, "a, b", &b, &loc, &err));
  g_free(b);
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_BIND);
  g_assert_cmpstr(err->message, ==,
                  "argument 'tensors' of aten.cat.default expects Tensor[], found string \"a\"");
  g_assert_false(loc.is_kwarg);
  g_assert_cmpuint(loc.index, ==, 0);
}

static void test_bind_errors(void) {
  g_autoptr(fx) f = std_fx();
  sc_value *b = NULL;
  sc_bind_loc loc;
  const sc_op *cat = sc_ops_lookup("aten.cat.default", NULL);
  const sc_op *full = sc_ops_lookup("aten.full.default", NULL);
  const sc_op *sel = sc_ops_lookup("aten.select.int", NULL);
  const sc_op *sl = sc_ops_lookup("aten.slice.Tensor", NULL);
  struct {
    const sc_op *op;
    const char *args;
    gboolean is_kwarg;
    uint32_t index;
    const char *words[3];
  } cases[] = {
      {cat, "[a, b], dim='x'", TRUE, 0,
       {"argument 'dim' of aten.cat.default expects int, found string \"x\"", NULL}},
      {cat, "[a, b], 0, 1", FALSE, 2, {"too many positional", "aten.cat.default", NULL}},
      {cat, "[a, b], dm=0", TRUE, 0, {"unknown keyword argument 'dm'", "did you mean 'dim'", NULL}},
      {cat, "[a, nope]", FALSE, 0, {"argument 'tensors'", "item 1", "no tensor named 'nope'"}},
      {cat, "[a, b], 0, dim=1", TRUE, 0, {"given twice", "'dim'", NULL}},
      {sel, "x, 0", FALSE, UINT32_MAX, {"missing argument 'index' of aten.select.int", "int", NULL}},
      {full, "[2], 1.0, 'f32'", FALSE, 2, {"argument 'dtype'", "keyword-only", NULL}},
      {full, "[2], 1.0, dtype='f31'", TRUE, 0, {"expects ScalarType?", "unknown dtype", NULL}},
      {sl, "x, 0, 0, 'S/'", FALSE, 3, {"argument 'end'", "expects int?", "col 3"}},
      {sl, "x, 0, 0, 'Q'", FALSE, 3, {"argument 'end'", "Q", NULL}},
      {sl, "x, 1.5", FALSE, 1, {"argument 'dim'", "expects int, found float 1.5", NULL}},
      {sl, "x, None", FALSE, 1, {"argument 'dim'", "found None", NULL}},
      {sl, "x, True", FALSE, 1, {"expects int, found bool True", NULL}},
      {sel, "[x], 0, 0", FALSE, 0, {"argument 'self'", "expects Tensor, found list", NULL}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) err = NULL;
    g_assert_false(fx_bind(f, cases[i].op, cases[i].args, &b, &loc, &err));
    g_free(b);
    g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_BIND);
    g_test_message("%s(%s): %s", cases[i].op->qualname, cases[i].args, err->message);
    for (int w = 0; w < 3 && cases[i].words[w]; w++)
      g_assert_nonnull(strstr(err->message, cases[i].words[w]));
    g_assert_cmpint(loc.is_kwarg, ==, cases[i].is_kwarg);
    g_assert_cmpuint(loc.index, ==, cases[i].index);
  }
}

static void test_bind_fixed_len(void) {
  g_autoptr(fx) f = std_fx();
  sc_op op;
  g_assert_true(sc_ops_schema_parse("aten", "conv(Tensor x, int[2] stride=1, bool[3] mask=[True, "
                                            "False, True]) -> Tensor", &op, NULL));
  sc_value *b;
  g_autoptr(GError) err = NULL;
  g_assert_true(fx_bind(f, &op, "x, 3", &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(b[1].u.ints.n, ==, 2);
  g_assert_cmpint(b[1].u.ints.v[0].value, ==, 3);
  g_assert_cmpint(b[1].u.ints.v[1].value, ==, 3);
  g_assert_cmpuint(b[2].u.bools.n, ==, 3);
  g_assert_false(b[2].u.bools.v[1]);
  fx_bound_free(&op, b);
  g_assert_true(fx_bind(f, &op, "x", &b, NULL, &err));
  g_assert_cmpuint(b[1].u.ints.n, ==, 2);
  g_assert_cmpint(b[1].u.ints.v[1].value, ==, 1);
  fx_bound_free(&op, b);
  /* int[N] takes lists of any length, as ATen's parser does (sum's int[1] dim) */
  g_assert_true(fx_bind(f, &op, "x, [1, 2, 3]", &b, NULL, &err));
  g_assert_cmpuint(b[1].u.ints.n, ==, 3);
  fx_bound_free(&op, b);
  g_assert_true(fx_bind(f, &op, "x, [5]", &b, NULL, &err));
  g_assert_cmpuint(b[1].u.ints.n, ==, 1);
  fx_bound_free(&op, b);
  g_assert_false(fx_bind(f, &op, "x, 1, [True]", &b, NULL, &err));
  g_free(b);
  g_assert_nonnull(strstr(err->message, "expects bool[3]"));
  sc_ops_schema_clear(&op);
}

/* ---- shape rules: views ------------------------------------------------------------- */

static void test_rule_transpose_permute_t(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.transpose.int", "x, 0, -1", "[4, 3, 2] f32");
  check(f, "aten.t.default", "m", "[6, 4] f32");
  check(f, "aten.t.default", "v", "[5] f32");
  check(f, "aten.permute.default", "x, [2, 0, 1]", "[4, 2, 3] f32");
  check(f, "aten.permute.default", "x, [-1, 0, 1]", "[4, 2, 3] f32");
  check(f, "sc.transpose.default", "y, dim0=0, dim1=1", "[8, S] f32");
  check_err(f, "aten.transpose.int", "x, 0, 3", SC_OPS_ERROR_SHAPE, "aten.transpose:",
            "dim1 = 3 is out of range", "[-3, 2]", NULL);
  check_err(f, "aten.permute.default", "x, [0, 0, 1]", SC_OPS_ERROR_SHAPE, "more than once", NULL);
  check_err(f, "aten.permute.default", "x, [0, 1]", SC_OPS_ERROR_SHAPE, "[2, 3, 4]", NULL);
  check_err(f, "aten.t.default", "x", SC_OPS_ERROR_SHAPE, "<= 2 dims", "[2, 3, 4]", NULL);
}

static void test_rule_view(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.view.default", "x, [6, 4]", "[6, 4] f32");
  check(f, "aten.view.default", "x, [-1, 4]", "[6, 4] f32");
  check(f, "aten.reshape.default", "x, [2, -1]", "[2, 12] f32");
  check(f, "aten._unsafe_view.default", "x, [24]", "[24] f32");
  check(f, "aten._reshape_alias.default", "x, [3, 8], [8, 1]", "[3, 8] f32");
  check(f, "aten.view.default", "s, [1, 1]", "[1, 1] f32");
  check(f, "aten.view.default", "v, [-1]", "[5] f32");
  check_err(f, "aten.view.default", "x, [5, -1]", SC_OPS_ERROR_SHAPE, "aten.view:",
            "shape [5, -1] is invalid for input of size 24", "[2, 3, 4]", NULL);
  check_err(f, "aten.view.default", "x, [5, 5]", SC_OPS_ERROR_SHAPE, "invalid for input of size 24",
            NULL);
  check_err(f, "aten.view.default", "x, [-1, -1]", SC_OPS_ERROR_SHAPE, "only one dimension", NULL);
  check_err(f, "aten.view.default", "x, [0, -1]", SC_OPS_ERROR_SHAPE, "ambiguous", NULL);
  check_err(f, "aten.view.default", "x, [-2, 12]", SC_OPS_ERROR_SHAPE, "invalid shape dimension",
            NULL);
}

static void test_rule_view_symbolic(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "u", "f32", "[S]");
  check(f, "aten.view.default", "u, [2, 'S/2']", "[2, S/2] f32");
  check(f, "aten.view.default", "u, [2, -1]", "[2, S/2] f32");
  check(f, "aten.view.default", "y, [-1]", "[8*S] f32");
  check(f, "sc.view.default", "y, shape=['S/2', 16]", "[S/2, 16] f32");
  check_err(f, "aten.view.default", "u, [3, -1]", SC_OPS_ERROR_UNDECIDED,
            "aten.view:", "cannot decide", NULL);
  check_err(f, "aten.view.default", "y, ['T', 8]", SC_OPS_ERROR_UNDECIDED, "cannot decide", NULL);
}

static void test_rule_expand_squeeze(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "c", "f32", "[3, 1]");
  check(f, "aten.expand.default", "c, [2, 3, 5]", "[2, 3, 5] f32");
  check(f, "aten.expand.default", "c, [-1, 4]", "[3, 4] f32");
  decl(f, "c233", "f32", "[2, 3, 3]");
  check(f, "aten.expand_as.default", "c, c233", "[2, 3, 3] f32");
  check(f, "aten.unsqueeze.default", "x, -1", "[2, 3, 4, 1] f32");
  check(f, "aten.unsqueeze.default", "s, 0", "[1] f32");
  check(f, "aten.squeeze.dim", "c, 1", "[3] f32");
  check(f, "aten.squeeze.dim", "c, 0", "[3, 1] f32");
  check(f, "aten.squeeze.default", "c", "[3] f32");
  check(f, "aten.squeeze.dims", "c, [0, 1]", "[3] f32");
  check(f, "aten.squeeze.dim", "s, -1", "[] f32");
  check_err(f, "aten.expand.default", "c, [3, 4, 5]", SC_OPS_ERROR_SHAPE, "must match the existing",
            NULL);
  check_err(f, "aten.expand.default", "c, [-1, 3, 1]", SC_OPS_ERROR_SHAPE, "leading", NULL);
  check_err(f, "aten.expand.default", "x, [4]", SC_OPS_ERROR_SHAPE, "greater or equal", NULL);
  check(f, "aten.squeeze.default", "y", "[S, 8] f32"); /* S is even, so not 1 */
  check_err(f, "aten.squeeze.default", "w", SC_OPS_ERROR_UNDECIDED, "whether dim 0", NULL);
}

/* ---- shape rules: slice / select ------------------------------------------------------- */

static void test_rule_slice_clamping(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "l", "f32", "[10, 4]");
  check(f, "aten.slice.Tensor", "l, 0, 2, 5", "[3, 4] f32");
  check(f, "aten.slice.Tensor", "l, 0, 0, 9223372036854775807", "[10, 4] f32");
  check(f, "aten.slice.Tensor", "l, 0, -3", "[3, 4] f32");
  check(f, "aten.slice.Tensor", "l, 0, -30, -2", "[8, 4] f32");
  check(f, "aten.slice.Tensor", "l, 0, 7, 3", "[0, 4] f32");
  check(f, "aten.slice.Tensor", "l, 0, 12, 20", "[0, 4] f32");
  check(f, "aten.slice.Tensor", "l, -1, 1, None, 2", "[10, 2] f32");
  check(f, "aten.slice.Tensor", "l, 0, 1, 10, 3", "[3, 4] f32");
  check(f, "aten.slice.Tensor", "l, 0, 0, 10, 4", "[3, 4] f32");
  check(f, "aten.slice.Tensor", "l", "[10, 4] f32");
  check(f, "sc.slice.default", "l, dim=1, start=1, end=3", "[10, 2] f32");
  check_err(f, "aten.slice.Tensor", "l, 0, 0, 5, 0", SC_OPS_ERROR_SHAPE, "step must be positive",
            NULL);
  check_err(f, "aten.slice.Tensor", "l, 2", SC_OPS_ERROR_SHAPE, "dim = 2 is out of range", NULL);
  check_err(f, "aten.slice.Tensor", "s, 0", SC_OPS_ERROR_SHAPE, "0-dim", NULL);
}

static void test_rule_slice_symbolic(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.slice.Tensor", "y, 0, 0, 'S/2'", "[S/2, 8] f32");
  check(f, "aten.slice.Tensor", "y, 0, 'S/2', 'S'", "[S/2, 8] f32");
  check(f, "aten.slice.Tensor", "y, 0, 'S/2', 9223372036854775807", "[S/2, 8] f32");
  check(f, "aten.slice.Tensor", "y, 0, 0, 9223372036854775807", "[S, 8] f32");
  check(f, "sc.slice.default", "y, dim=0, start='S/2', end='S'", "[S/2, 8] f32");
  check(f, "aten.slice.Tensor", "y, 1, 0, 'S'", "[S, min(8, S)] f32");
}

static void test_rule_select_narrow(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.select.int", "x, 1, -1", "[2, 4] f32");
  check(f, "aten.select.int", "x, -1, 3", "[2, 3] f32");
  check(f, "aten.select.int", "v, 0, 0", "[] f32");
  check(f, "aten.narrow.default", "x, 2, 1, 2", "[2, 3, 2] f32");
  check(f, "aten.narrow.default", "x, 2, -2, 2", "[2, 3, 2] f32");
  check_err(f, "aten.select.int", "x, 1, 3", SC_OPS_ERROR_SHAPE,
            "index 3 is out of bounds for dimension 1 with size 3", NULL);
  check_err(f, "aten.select.int", "x, 1, -4", SC_OPS_ERROR_SHAPE, "out of bounds", NULL);
  check_err(f, "aten.narrow.default", "x, 2, 3, 2", SC_OPS_ERROR_SHAPE, "exceeds", NULL);
  check(f, "aten.select.int", "y, 0, 'S-1'", "[8] f32");
}

static void test_rule_slice_scatter_backward(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "l", "f32", "[10, 4]");
  decl(f, "part", "f32", "[3, 4]");
  check(f, "aten.slice_scatter.default", "l, part, 0, 2, 5", "[10, 4] f32");
  check(f, "aten.slice_backward.default", "part, [10, 4], 0, 2, 5, 1", "[10, 4] f32");
  check(f, "aten.select_backward.default", "v, [3, 5], 0, 1", "[3, 5] f32");
  decl(f, "r6", "f32", "[6]");
  check(f, "aten.select_scatter.default", "q, r6, 0, 1", "[4, 6] f32");
  check_err(f, "aten.select_scatter.default", "q, v, 0, 1", SC_OPS_ERROR_SHAPE, "expected src", NULL);
  check_err(f, "aten.slice_scatter.default", "l, part, 0, 2, 6", SC_OPS_ERROR_SHAPE,
            "equal to the slice", "[3, 4]", "[4, 4]", NULL);
  check_err(f, "aten.slice_backward.default", "part, [10, 4], 0, 0, 5, 1", SC_OPS_ERROR_SHAPE,
            "grad_output", NULL);
}

/* ---- shape rules: cat / stack / split --------------------------------------------------- */

static void test_rule_cat(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.cat.default", "[a, b], 1", "[2, 7] f32");
  check(f, "aten.cat.default", "[a, b], -1", "[2, 7] f32");
  check(f, "aten.cat.default", "[a, a, a]", "[6, 3] f32");
  check(f, "aten.cat.default", "[a, h], 1", "[2, 8] f32");
  check(f, "aten.cat.default", "[y, z]", "[2*S, 8] f32");
  check(f, "aten.cat.default", "[y, w]", "[S+T, 8] f32");
  check(f, "sc.cat.default", "[a], dim=0", "[2, 3] f32");
  check_err(f, "aten.cat.default", "[a, b]", SC_OPS_ERROR_SHAPE,
            "aten.cat: tensor 1 has shape [2, 4] but tensor 0 has [2, 3] (must match except in dim 0)",
            NULL);
  check_err(f, "aten.cat.default", "[a, x]", SC_OPS_ERROR_SHAPE, "same number of dims", NULL);
  check_err(f, "aten.cat.default", "[]", SC_OPS_ERROR_SHAPE, "non-empty", NULL);
  check_err(f, "aten.cat.default", "[s, s]", SC_OPS_ERROR_SHAPE, "zero-dimensional", NULL);
  check_err(f, "aten.cat.default", "[a, b], 2", SC_OPS_ERROR_SHAPE, "out of range", NULL);
  check_err(f, "aten.cat.default", "[y, w], 1", SC_OPS_ERROR_UNDECIDED, "cannot decide",
            "[T, 8]", NULL);
}

static void test_rule_stack(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.stack.default", "[a, a], 0", "[2, 2, 3] f32");
  check(f, "aten.stack.default", "[a, a, a], -1", "[2, 3, 3] f32");
  check(f, "aten.stack.default", "[a, a], 2", "[2, 3, 2] f32");
  check_err(f, "aten.stack.default", "[a, b]", SC_OPS_ERROR_SHAPE, "equal size", NULL);
  check_err(f, "aten.stack.default", "[a, a], 3", SC_OPS_ERROR_SHAPE, "out of range", NULL);
}

static void test_rule_split(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "l", "f32", "[10, 4]");
  check(f, "aten.split.Tensor", "l, 4", "[4, 4] f32; [4, 4] f32; [2, 4] f32");
  check(f, "aten.split.Tensor", "l, 5", "[5, 4] f32; [5, 4] f32");
  check(f, "aten.split.Tensor", "l, 20", "[10, 4] f32");
  check(f, "aten.split.Tensor", "l, 3, 1", "[10, 3] f32; [10, 1] f32");
  check(f, "aten.split_with_sizes.default", "l, [2, 3, 5]", "[2, 4] f32; [3, 4] f32; [5, 4] f32");
  check(f, "aten.split_with_sizes.default", "l, [1, 3], -1", "[10, 1] f32; [10, 3] f32");
  check(f, "aten.split.Tensor", "y, 'S/2'", "[S/2, 8] f32; [S/2, 8] f32");
  check(f, "aten.unbind.int", "a", "[3] f32; [3] f32");
  check(f, "aten.unbind.int", "a, 1", "[2] f32; [2] f32; [2] f32");
  check_err(f, "aten.split_with_sizes.default", "l, [2, 3]", SC_OPS_ERROR_SHAPE, "must sum",
            "[2, 3]", NULL);
  check_err(f, "aten.split.Tensor", "l, 0", SC_OPS_ERROR_SHAPE, "can only be 0", NULL);
  check_err(f, "aten.split.Tensor", "l, -1", SC_OPS_ERROR_SHAPE, "non-negative", NULL);
  check_err(f, "aten.split.Tensor", "y, 3", SC_OPS_ERROR_UNDECIDED, "how many parts", NULL);
  check_err(f, "aten.unbind.int", "y", SC_OPS_ERROR_UNDECIDED, "how many results", NULL);
  decl(f, "huge", "f32", "[100000]");
  check_err(f, "aten.unbind.int", "huge", SC_OPS_ERROR_SHAPE, "more than the supported", NULL);
  check_err(f, "aten.split.Tensor", "huge, 1", SC_OPS_ERROR_SHAPE, "more than the supported", NULL);
}

static void test_rule_chunk(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "l", "f32", "[5]");
  decl(f, "l6", "f32", "[6]");
  decl(f, "e", "f32", "[0, 2]");
  decl(f, "u", "f32", "[S]");
  check(f, "aten.chunk.default", "l, 3", "[2] f32; [2] f32; [1] f32");
  check(f, "aten.chunk.default", "l6, 4", "[2] f32; [2] f32; [2] f32"); /* fewer than asked */
  check(f, "aten.chunk.default", "l6, 2", "[3] f32; [3] f32");
  check(f, "aten.chunk.default", "e, 3", "[0, 2] f32; [0, 2] f32; [0, 2] f32");
  check(f, "aten.chunk.default", "u, 2", "[S/2] f32; [S/2] f32");
  check(f, "aten.chunk.default", "y, 2, 1", "[S, 4] f32; [S, 4] f32");
  check_err(f, "aten.chunk.default", "l, 0", SC_OPS_ERROR_SHAPE, "greater than 0", NULL);
  check_err(f, "aten.chunk.default", "u, 3", SC_OPS_ERROR_UNDECIDED, NULL);
}

/* ---- shape rules: indexing ----------------------------------------------------------------- */

static void test_rule_index(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "t4", "f32", "[5, 6, 7, 8]");
  decl(f, "i2", "i64", "[2, 3]");
  decl(f, "i3", "i64", "[3]");
  check(f, "aten.index.Tensor", "t4, [i3]", "[3, 6, 7, 8] f32");
  check(f, "aten.index.Tensor", "t4, [None, i3]", "[5, 3, 7, 8] f32");
  check(f, "aten.index.Tensor", "t4, [None, i2, i3]", "[5, 2, 3, 8] f32");  /* broadcast [2,3] */
  check(f, "aten.index.Tensor", "t4, [i3, None, i3]", "[3, 6, 8] f32");   /* transposed */
  check(f, "aten.index.Tensor", "t4, [None, i3, None, i2]", "[2, 3, 5, 7] f32");
  check(f, "aten.index.Tensor", "t4, [i2, i3, None]", "[2, 3, 7, 8] f32");
  check(f, "aten.index.Tensor", "t4, [None, None]", "[5, 6, 7, 8] f32");
  check_err(f, "aten.index.Tensor", "a, [i, i, i]", SC_OPS_ERROR_SHAPE, "too many indices", NULL);
  check_err(f, "aten.index.Tensor", "t4, [i3, j, k]", SC_OPS_ERROR_SHAPE, "broadcast", NULL);
  check_err(f, "aten.index.Tensor", "m, [mask]", SC_OPS_ERROR_SHAPE, "boolean mask", NULL);
  check_err(f, "aten.index.Tensor", "m, [fi]", SC_OPS_ERROR_SHAPE, "long, int, byte or bool", NULL);
  check(f, "aten.index_put.default", "t4, [None, i3], s", "[5, 6, 7, 8] f32");
  check(f, "aten.index_put.default", "m, [mask], s", "[4, 6] f32");
  check_err(f, "aten.index_put.default", "t4, [i3], v", SC_OPS_ERROR_SHAPE, "cannot be broadcast",
            NULL);
}

static void test_rule_gather_select_scatter(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "gi", "i64", "[4, 2]");
  decl(f, "src", "f32", "[4, 3]");
  check(f, "aten.index_select.default", "m, 1, i", "[4, 3] f32");
  check(f, "aten.index_select.default", "m, -2, i", "[3, 6] f32");
  check(f, "aten.gather.default", "m, 1, gi", "[4, 2] f32");
  check(f, "aten.scatter_add.default", "m, 1, gi, src", "[4, 6] f32");
  check_err(f, "aten.index_select.default", "m, 1, j", SC_OPS_ERROR_SHAPE, "vector", NULL);
  check_err(f, "aten.index_select.default", "m, 1, fi", SC_OPS_ERROR_SHAPE, "expected dtype", NULL);
  check_err(f, "aten.gather.default", "m, 1, i", SC_OPS_ERROR_SHAPE, "same number of dimensions",
            NULL);
}

/* scatter.src / .value, index_add, one_hot (added for unseen captures). */
static void test_rule_scatter_index_add_one_hot(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "gi", "i64", "[4, 2]");
  decl(f, "big", "i64", "[5, 2]");
  decl(f, "src", "f32", "[4, 3]");
  decl(f, "src16", "f16", "[4, 3]");
  decl(f, "rows", "f32", "[3, 6]");
  decl(f, "rows2", "f32", "[2, 6]");
  decl(f, "ys", "i64", "[S, 2]");
  check(f, "aten.scatter.src", "m, 1, gi, src", "[4, 6] f32");
  check(f, "aten.scatter.value", "m, -1, gi, 1.5", "[4, 6] f32");
  check_err(f, "aten.scatter.value", "m, 1, big, 0", SC_OPS_ERROR_SHAPE,
            "size of index [5, 2] at dim 0 exceeds that of self [4, 6]", NULL);
  check_err(f, "aten.scatter.src", "m, 1, gi, src16", SC_OPS_ERROR_SHAPE,
            "self is f32 but src is f16", NULL);
  check_err(f, "aten.scatter.value", "m, 1, i, 0", SC_OPS_ERROR_SHAPE,
            "must have the same number of dimensions as self", NULL);
  check_err(f, "aten.scatter.value", "m, 1, fi, 0", SC_OPS_ERROR_SHAPE, "expected dtype i64", NULL);
  check(f, "aten.index_add.default", "m, 0, i, rows", "[4, 6] f32");
  check(f, "aten.index_add.default", "m, 0, i, rows, alpha=2", "[4, 6] f32");
  check_err(f, "aten.index_add.default", "m, 0, i, rows2", SC_OPS_ERROR_SHAPE,
            "source [2, 6] does not match self [4, 6] with the entries of index [3] at dim 0", NULL);
  check_err(f, "aten.index_add.default", "m, 0, j, rows", SC_OPS_ERROR_SHAPE, "vector", NULL);
  check_err(f, "aten.index_add.default", "m, 1, i, rows", SC_OPS_ERROR_SHAPE,
            "does not match self [4, 6] with all entries of index [3] at dim 0", NULL);
  check(f, "aten.one_hot.default", "i, 5", "[3, 5] i64");
  check(f, "aten.one_hot.default", "ys, 'S'", "[S, 2, S] i64");
  check_err(f, "aten.one_hot.default", "i", SC_OPS_ERROR_UNDECIDED,
            "num_classes=-1 takes the number of classes from the values", NULL);
  check_err(f, "aten.one_hot.default", "i, 0", SC_OPS_ERROR_SHAPE, "num_classes should be positive",
            NULL);
  check_err(f, "aten.one_hot.default", "fi, 3", SC_OPS_ERROR_SHAPE, "index tensors (i64)", NULL);
}

/* ---- shape rules: masks, where, topk, pad, repeat, copies ------------------------------------ */

static void test_rule_where_masked(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.where.self", "mask, m, s", "[4, 6] f32");
  check(f, "aten.where.self", "bmask, q, m", "[4, 6] f32");
  check(f, "aten.masked_fill.Scalar", "m, bmask, 0.0", "[4, 6] f32");
  check(f, "aten.masked_fill.Scalar", "s, mask, 0", "[4, 6] f32");
  check(f, "aten.masked_fill.Tensor", "m, mask, s", "[4, 6] f32");
  check_err(f, "aten.where.self", "m, m, m", SC_OPS_ERROR_SHAPE, "boolean", NULL);
  check_err(f, "aten.masked_fill.Scalar", "m, m, 0", SC_OPS_ERROR_SHAPE, "mask dtype", NULL);
  check_err(f, "aten.masked_fill.Tensor", "m, mask, v", SC_OPS_ERROR_SHAPE, "0-dimensional", NULL);
  check_err(f, "aten.where.self", "mask, a, a", SC_OPS_ERROR_SHAPE, "broadcast", NULL);
}

static void test_rule_topk_sort_misc(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.topk.default", "m, 2", "[4, 2] f32; [4, 2] i64");
  check(f, "aten.topk.default", "m, 3, 0", "[3, 6] f32; [3, 6] i64");
  check(f, "aten.sort.default", "m", "[4, 6] f32; [4, 6] i64");
  check(f, "aten.sort.stable", "m, stable=True, dim=0", "[4, 6] f32; [4, 6] i64");
  check_err(f, "aten.topk.default", "m, 7", SC_OPS_ERROR_SHAPE, "out of range", NULL);
  check(f, "aten.repeat.default", "a, [2, 1, 2]", "[2, 2, 6] f32");
  check_err(f, "aten.repeat.default", "a, [2]", SC_OPS_ERROR_SHAPE, "can not be smaller", NULL);
  check(f, "aten.repeat_interleave.self_int", "a, 3, dim=1", "[2, 9] f32");
  check(f, "aten.repeat_interleave.self_int", "a, 2", "[12] f32");
  check(f, "aten.repeat_interleave.self_int", "a, 2, dim=-1, output_size=6", "[2, 6] f32");
  check_err(f, "aten.repeat_interleave.self_int", "a, 2, dim=0, output_size=5",
            SC_OPS_ERROR_SHAPE, "output_size 5 does not match the repeated size 4", NULL);
  check_err(f, "aten.repeat_interleave.self_int", "a, -1, dim=0", SC_OPS_ERROR_SHAPE,
            "repeats can not be negative", NULL);
  check_err(f, "aten.repeat_interleave.self_int", "a, 2, dim=3", SC_OPS_ERROR_SHAPE,
            "out of range", NULL);
  check(f, "aten.flip.default", "x, [0, -1]", "[2, 3, 4] f32");
  check(f, "aten.roll.default", "x, [1, 2], [0, 1]", "[2, 3, 4] f32");
  check_err(f, "aten.roll.default", "x, [1, 2], [0]", SC_OPS_ERROR_SHAPE, "align", NULL);
  check(f, "aten.constant_pad_nd.default", "a, [1, 2]", "[2, 6] f32");
  check(f, "aten.constant_pad_nd.default", "a, [0, 0, -1, 1], 0.5", "[2, 3] f32");
  check_err(f, "aten.constant_pad_nd.default", "a, [1]", SC_OPS_ERROR_SHAPE, "even", NULL);
  check_err(f, "aten.constant_pad_nd.default", "a, [0, -4]", SC_OPS_ERROR_SHAPE, "negative", NULL);
  check(f, "aten.triu.default", "m, 1", "[4, 6] f32");
  check_err(f, "aten.tril.default", "v", SC_OPS_ERROR_SHAPE, "at least 2 dimensions", NULL);
}

/* nonzero: a data-dependent size (ops.h, SC_OP_DATA_DEPENDENT).  The rule
 * takes `size` as given (a graph fills it from the declared shape),
 * checks 0 <= size <= numel(self), accepts a bound it cannot decide, and
 * refuses a call without size as undecided. */
static void test_rule_nonzero(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup("aten.nonzero", NULL);
  g_assert_nonnull(op);
  g_assert_cmpstr(op->qualname, ==, "aten.nonzero.default");
  g_assert_true(op->flags & SC_OP_DATA_DEPENDENT);
  g_assert_false(op->flags & (SC_OP_MULTI | SC_OP_VIEW | SC_OP_ELEMENTWISE));
  g_assert_cmpint(sc_ops_arg_index(op, "size"), ==, 1);
  g_assert_true(op->args[1].kwarg_only && op->args[1].optional);
  check(f, "aten.nonzero.default", "bmask, size=4", "[4, 1] i64");
  check(f, "aten.nonzero.default", "mask, size=24", "[24, 2] i64");
  check(f, "aten.nonzero.default", "m, size=0", "[0, 2] i64");
  check(f, "aten.nonzero.default", "x, size=5", "[5, 3] i64");
  check(f, "aten.nonzero.default", "s, size=1", "[1, 0] i64"); /* 0-dim self */
  check(f, "aten.nonzero.default", "y, size='S'", "[S, 2] i64");
  check(f, "aten.nonzero.default", "y, size='T'", "[T, 2] i64"); /* T <= 8*S undecided */
  check_err(f, "aten.nonzero.default", "bmask", SC_OPS_ERROR_UNDECIDED, "aten.nonzero: ",
            "depends on its values", "[u0, 1]", NULL);
  check_err(f, "aten.nonzero.default", "bmask, size=7", SC_OPS_ERROR_SHAPE,
            "size 7 exceeds the 6 elements of self", NULL);
  check_err(f, "aten.nonzero.default", "bmask, size=-1", SC_OPS_ERROR_SHAPE, "size -1 is negative",
            NULL);
  check_err(f, "aten.nonzero.default", "y, size='9*S'", SC_OPS_ERROR_SHAPE, "exceeds", NULL);
}

/* Result sizes come back in the symtab's current normal form: a shape
 * made before an assumption (U == V, learned later) is rewritten, so
 * equal sizes are identical (registry.c, normalize_result_dims). */
static void test_infer_normalizes_sizes(void) {
  g_autoptr(fx) f = fx_new();
  g_assert_true(sc_symtab_declare(f->st, "U", TRUE, 0, FALSE, 0, NULL));
  g_assert_true(sc_symtab_declare(f->st, "V", TRUE, 0, FALSE, 0, NULL));
  decl(f, "p", "f32", "[V, 2]");
  check(f, "aten.clone.default", "p", "[V, 2] f32");
  g_assert_true(sc_symtab_assume(f->st, "U == V", NULL));
  check(f, "aten.clone.default", "p", "[U, 2] f32");
  check(f, "aten.t.default", "p", "[2, U] f32");
}

static void test_rule_copies(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.clone.default", "x", "[2, 3, 4] f32");
  check(f, "aten.clone.default", "x, memory_format='torch.contiguous_format'", "[2, 3, 4] f32");
  check(f, "aten.detach.default", "h", "[2, 5] f16");
  check(f, "aten.alias.default", "y", "[S, 8] f32");
  check(f, "aten.lift_fresh_copy.default", "v", "[5] f32");
  check(f, "aten._to_copy.default", "x, dtype='bf16'", "[2, 3, 4] bf16");
  check(f, "aten._to_copy.default", "x", "[2, 3, 4] f32");
  check(f, "aten.copy.default", "m, q", "[4, 6] f32");
  check(f, "aten.copy.default", "a, fi", "[2, 3] f32");
  check_err(f, "aten.copy.default", "fi, a", SC_OPS_ERROR_SHAPE, "cannot be broadcast", NULL);
  check(f, "_c10d_functional.wait_tensor.default", "y", "[S, 8] f32");
}

/* ---- shape rules: creation -------------------------------------------------------------------- */

static void test_rule_creation(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.full.default", "[2, 3], 1.5", "[2, 3] f32");
  check(f, "aten.full.default", "[2, 3], 1", "[2, 3] i64");
  check(f, "aten.full.default", "[2], True", "[2] bool");
  check(f, "aten.full.default", "['S', 4], 0, dtype='f16', device='cpu', pin_memory=False",
        "[S, 4] f16");
  check(f, "aten.zeros.default", "[3]", "[3] f32");
  check(f, "aten.ones.default", "[2, 2], dtype='i32'", "[2, 2] i32");
  check(f, "aten.empty.memory_format", "[4], dtype='bool'", "[4] bool");
  check(f, "aten.empty_strided.default", "[2, 3], [3, 1]", "[2, 3] f32");
  check(f, "aten.zeros_like.default", "h", "[2, 5] f16");
  check(f, "aten.ones_like.default", "h, dtype='f32'", "[2, 5] f32");
  check(f, "aten.full_like.default", "h, 7", "[2, 5] f16");
  check(f, "aten.empty_like.default", "y", "[S, 8] f32");
  check(f, "aten.new_zeros.default", "h, [3]", "[3] f16");
  check(f, "aten.new_full.default", "h, [3], 2", "[3] f16");
  check(f, "aten.new_empty_strided.default", "h, [3], [1]", "[3] f16");
  check(f, "aten.scalar_tensor.default", "3", "[] f32");
  check(f, "aten.scalar_tensor.default", "3, dtype='i64'", "[] i64");
  check(f, "aten.fill.Scalar", "x, 2", "[2, 3, 4] f32");
  check(f, "sc.full.default", "shape=[2, 'S'], value=0.0", "[2, S] f32");
  check(f, "sc.empty.default", "shape=[2]", "[2] f32");
  check_err(f, "aten.full.default", "[-1, 3], 1.0", SC_OPS_ERROR_SHAPE, "negative dimension", NULL);
  check_err(f, "aten.empty_strided.default", "[2, 3], [1]", SC_OPS_ERROR_SHAPE, "stride", NULL);
}

static void test_rule_arange(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.arange.default", "5", "[5] i64");
  check(f, "aten.arange.default", "5.0", "[5] f32");
  check(f, "aten.arange.default", "2.5", "[3] f32");
  check(f, "aten.arange.start", "2, 7", "[5] i64");
  check(f, "aten.arange.start_step", "0, 10, 3", "[4] i64");
  check(f, "aten.arange.start_step", "10, 0, -3", "[4] i64");
  check(f, "aten.arange.start_step", "0.0, 1.0, 0.25", "[4] f32");
  check(f, "aten.arange.start_step", "0, 10, 3, dtype='f64'", "[4] f64");
  check(f, "aten.arange.default", "'S'", "[S] i64");
  check(f, "aten.arange.start_step", "0, 'S', 2", "[S/2] i64");
  check(f, "sc.arange.default", "start=0, end='S'", "[S] i64");
  check(f, "aten.arange.default", "0", "[0] i64");
  check_err(f, "aten.arange.start_step", "0, 10, 0", SC_OPS_ERROR_SHAPE, "nonzero", NULL);
  check_err(f, "aten.arange.start", "5, 2", SC_OPS_ERROR_SHAPE, "inconsistent with step sign", NULL);
  check_err(f, "aten.arange.default", "'inf'", SC_OPS_ERROR_SHAPE, "unsupported range", NULL);
}

/* ---- shape rules: collectives ------------------------------------------------------------------ */

static void test_rule_comm(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "r0", "f32", "[4, 6]");
  decl(f, "r1", "f32", "[4, 6]");
  decl(f, "r2", "f32", "[4, 5]");
  decl(f, "h0", "f16", "[4, 6]");
  check(f, "comm.all_reduce.default", "[r0, r1]", "[4, 6] f32; [4, 6] f32");
  check(f, "comm.all_reduce.default", "[r0, r1], op='max'", "[4, 6] f32; [4, 6] f32");
  check(f, "comm.all_gather.default", "[r0, r1], 1", "[4, 12] f32; [4, 12] f32");
  check(f, "comm.all_gather.default", "[r0, r1], dim=-2", "[8, 6] f32; [8, 6] f32");
  check(f, "comm.reduce_scatter.default", "[r0, r1], 0", "[2, 6] f32; [2, 6] f32");
  check(f, "comm.all_to_all.default", "[r0, r1], 1, 0", "[8, 3] f32; [8, 3] f32");
  check(f, "comm.broadcast.default", "[r0, r1], src=1", "[4, 6] f32; [4, 6] f32");
  check(f, "comm.send_recv.default", "[r2]", "[4, 5] f32");
  check(f, "comm.reduce_scatter.default", "[y, z], 0", "[S/2, 8] f32; [S/2, 8] f32");
  check_err(f, "comm.all_reduce.default", "[r0, r2]", SC_OPS_ERROR_SHAPE, "input 1",
            "equal shapes and dtypes", NULL);
  check_err(f, "comm.all_reduce.default", "[r0, h0]", SC_OPS_ERROR_SHAPE, "f16", NULL);
  check_err(f, "comm.all_reduce.default", "[r0, r1], op='prod'", SC_OPS_ERROR_SHAPE,
            "unknown reduction 'prod'", NULL);
  check_err(f, "comm.reduce_scatter.default", "[r2, r2, r2], 1", SC_OPS_ERROR_SHAPE,
            "does not split into 3 equal parts", NULL);
  check_err(f, "comm.all_to_all.default", "[r0, r0, r0, r0, r0], 0, 1", SC_OPS_ERROR_SHAPE,
            "5 equal parts", NULL);
  check_err(f, "comm.broadcast.default", "[r0, r1], 2", SC_OPS_ERROR_SHAPE, "src 2", NULL);
  check_err(f, "comm.send_recv.default", "[r0, r1]", SC_OPS_ERROR_SHAPE, "exactly one", NULL);
  check_err(f, "comm.all_gather.default", "[], 0", SC_OPS_ERROR_SHAPE, "at least one", NULL);
  check_err(f, "comm.reduce_scatter.default", "[y, z, y], 0", SC_OPS_ERROR_UNDECIDED, NULL);
}

static void test_rule_c10d(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "_c10d_functional.all_reduce.default", "m, 'sum', '0'", "[4, 6] f32");
  check(f, "_c10d_functional.all_gather_into_tensor.default", "m, 2, '0'", "[8, 6] f32");
  check(f, "_c10d_functional.reduce_scatter_tensor.default", "m, 'avg', 4, '0'", "[1, 6] f32");
  check(f, "_c10d_functional.all_to_all_single.default", "m, [1, 5], [2, 2], '0'", "[6, 6] f32");
  check(f, "_c10d_functional.all_to_all_single.default", "m, None, None, '0'", "[4, 6] f32");
  check(f, "_c10d_functional.broadcast.default", "m, 0, '0'", "[4, 6] f32");
  check(f, "_c10d_functional.all_gather_into_tensor.default", "y, 2, 'g'", "[2*S, 8] f32");
  check_err(f, "_c10d_functional.reduce_scatter_tensor.default", "m, 'sum', 3, '0'",
            SC_OPS_ERROR_SHAPE, "does not split into 3 equal parts", NULL);
  check_err(f, "_c10d_functional.all_reduce.default", "m, 'bogus', '0'", SC_OPS_ERROR_SHAPE,
            "unknown reduction", NULL);
  check_err(f, "_c10d_functional.all_to_all_single.default", "m, [1, 5], [2, 3], '0'",
            SC_OPS_ERROR_SHAPE, "must sum", NULL);
  check_err(f, "_c10d_functional.all_gather_into_tensor.default", "m, 0, '0'", SC_OPS_ERROR_SHAPE,
            "positive", NULL);
}

static void test_rule_sc_sum(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup_func("sum", NULL);
  g_assert_cmpstr(op->qualname, ==, "sc.sum.default");
  check(f, "sc.sum.default", "[y, z]", "[S, 8] f32");
  check(f, "sc.sum.default", "[a]", "[2, 3] f32");
  check_err(f, "sc.sum.default", "[y, w]", SC_OPS_ERROR_UNDECIDED, "[T, 8]", NULL);
  check_err(f, "sc.sum.default", "[a, b]", SC_OPS_ERROR_SHAPE, "does not broadcast", NULL);
  check_err(f, "sc.sum.default", "[m, q, a]", SC_OPS_ERROR_SHAPE, "tensor 2", NULL);
  check_err(f, "sc.sum.default", "[]", SC_OPS_ERROR_SHAPE, "at least one", NULL);
}

/* Inputs from users: huge sizes must be refused, not wrap around. */
static void test_rule_overflow(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "big", "f32", "[4611686018427387904, 4]");
  check_err(f, "aten.view.default", "big, [-1]", SC_OPS_ERROR_SHAPE, "overflow", NULL);
  check_err(f, "aten.cat.default", "[big, big, big]", SC_OPS_ERROR_SHAPE, "overflow", NULL);
  check_err(f, "aten.repeat.default", "big, [4, 1]", SC_OPS_ERROR_SHAPE, "overflow", NULL);
  check_err(f, "aten.arange.start_step", "-9223372036854775807, 9223372036854775807, 1",
            SC_OPS_ERROR_SHAPE, "overflow", NULL);
}

/* sc_ops_init from several threads at once. */
static gpointer init_thread(gpointer data) {
  (void)data;
  sc_ops_init();
  return GUINT_TO_POINTER(sc_ops_count());
}

static void test_init_threads(void) {
  GThread *t[4];
  for (int i = 0; i < 4; i++)
    t[i] = g_thread_new("init", init_thread, NULL);
  guint n = sc_ops_count();
  for (int i = 0; i < 4; i++)
    g_assert_cmpuint(GPOINTER_TO_UINT(g_thread_join(t[i])), ==, n);
}


/* ---- more lookup and binding ------------------------------------------------------------- */

static void test_lookup_func_namespaces(void) {
  const sc_op *op = sc_ops_lookup_func("slice", NULL);
  g_assert_cmpstr(op->qualname, ==, "sc.slice.default");
  op = sc_ops_lookup_func("aten.slice", NULL);
  g_assert_cmpstr(op->qualname, ==, "aten.slice.Tensor");
  op = sc_ops_lookup_func("transpose", NULL);
  g_assert_cmpstr(op->qualname, ==, "sc.transpose.default");
  op = sc_ops_lookup_func("transpose.int", NULL);
  g_assert_cmpstr(op->qualname, ==, "aten.transpose.int");
  op = sc_ops_lookup_func("sc.view.default", NULL);
  g_assert_cmpstr(op->qualname, ==, "sc.view.default");
  op = sc_ops_lookup_func("_c10d_functional.all_reduce", NULL);
  g_assert_cmpstr(op->qualname, ==, "_c10d_functional.all_reduce.default");
  g_autoptr(GError) err = NULL;
  g_assert_null(sc_ops_lookup_func("slice.Bogus", &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_UNKNOWN_OP);
  g_assert_nonnull(strstr(err->message, "unknown function 'slice.Bogus'"));
}

static void test_lookup_nearest_threshold(void) {
  /* distance <= max(2, len/4) */
  g_assert_cmpstr(sc_ops_nearest("aten.vie"), ==, "aten.view");
  g_assert_cmpstr(sc_ops_nearest("aten.view.defalt"), ==, "aten.view.default");
  g_assert_cmpstr(sc_ops_nearest("comm.allreduce"), ==, "comm.all_reduce");
  g_assert_null(sc_ops_nearest("aten.xyzzy"));
  g_assert_null(sc_ops_nearest("ab"));
  g_autoptr(GError) err = NULL;
  g_assert_null(sc_ops_lookup("aten.ad.Tensor", &err));
  g_assert_nonnull(strstr(err->message, "unknown operator 'aten.ad.Tensor'"));
}

static void test_bind_kwarg_only_required(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup("aten.sort.stable", NULL);
  sc_value *b;
  sc_bind_loc loc;
  g_autoptr(GError) err = NULL;
  g_assert_false(fx_bind(f, op, "m, dim=0", &b, &loc, &err));
  g_free(b);
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_BIND);
  g_assert_cmpstr(err->message, ==, "missing argument 'stable' of aten.sort.stable (expects bool?)");
  g_assert_cmpuint(loc.index, ==, UINT32_MAX);
  g_clear_error(&err);
  g_assert_true(fx_bind(f, op, "m, stable=None", &b, &loc, &err));
  g_assert_no_error(err);
  g_assert_cmpint(b[2].u.i.value, ==, -1);
  fx_bound_free(op, b);
}

static void test_bind_typed_passthrough(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup("aten.view.default", NULL);
  sc_value pos[2];
  pos[0] = sc_value_tensor(0);
  pos[1].kind = SC_VAL_INT_LIST;
  pos[1].u.ints.n = 2;
  pos[1].u.ints.v = g_new(sc_dim, 2);
  pos[1].u.ints.v[0] = sc_dim_const(6);
  pos[1].u.ints.v[1] = sc_dim_const(-1);
  sc_value bound[2];
  g_autoptr(GError) err = NULL;
  /* no resolver needed: the tensor is already an id */
  g_assert_true(sc_ops_bind(op, f->st, pos, 2, NULL, NULL, 0, NULL, NULL, bound, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(bound[0].u.tensor, ==, 0);
  g_assert_cmpuint(bound[1].u.ints.n, ==, 2);
  g_assert_true(bound[1].u.ints.v != pos[1].u.ints.v); /* a deep copy */
  sc_value_clear(&bound[0]);
  sc_value_clear(&bound[1]);
  sc_value_clear(&pos[1]);
  /* a name without a resolver is an error naming the argument */
  sc_value name = sc_value_str("x");
  sc_bind_loc loc;
  g_assert_false(sc_ops_bind(op, f->st, &name, 1, NULL, NULL, 0, NULL, NULL, bound, &loc, &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_BIND);
  g_assert_nonnull(strstr(err->message, "argument 'self'"));
  g_assert_cmpuint(loc.index, ==, 0);
  sc_value_clear(&name);
}

static void test_bind_symbolic_lists(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup("aten.view.default", NULL);
  sc_value *b;
  g_autoptr(GError) err = NULL;
  g_assert_true(fx_bind(f, op, "y, ['S/2', 16]", &b, NULL, &err));
  g_assert_no_error(err);
  g_autofree char *t = sc_value_to_string(&b[1], f->st, NULL, NULL);
  g_assert_cmpstr(t, ==, "[S/2, 16]");
  fx_bound_free(op, b);
  sc_bind_loc loc;
  g_assert_false(fx_bind(f, op, "y, [2, 'S*']", &b, &loc, &err));
  g_free(b);
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_BIND);
  g_assert_nonnull(strstr(err->message, "item 1"));
  g_assert_nonnull(strstr(err->message, "col 3"));
  g_assert_cmpuint(loc.index, ==, 1);
  g_clear_error(&err);
  g_assert_false(fx_bind(f, op, "y, [2, 1.5]", &b, &loc, &err));
  g_free(b);
  g_assert_nonnull(strstr(err->message, "item 1 is not an int"));
}

static void test_bind_variadic_loc(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup_func("cat", NULL);
  sc_value *b;
  sc_bind_loc loc;
  g_autoptr(GError) err = NULL;
  g_assert_false(fx_bind(f, op, "a, nope, dim=0", &b, &loc, &err));
  g_free(b);
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_BIND);
  g_assert_nonnull(strstr(err->message, "no tensor named 'nope'"));
  g_assert_false(loc.is_kwarg);
  g_assert_cmpuint(loc.index, ==, 1);
  g_clear_error(&err);
  /* an explicit list still works for sc.cat */
  g_assert_true(fx_bind(f, op, "[a, a], 1", &b, &loc, &err));
  g_assert_cmpuint(b[0].u.list.n, ==, 2);
  fx_bound_free(op, b);
  g_assert_false(fx_bind(f, op, "a, a, 0, 1", &b, &loc, &err));
  g_free(b);
  g_assert_nonnull(strstr(err->message, "too many positional"));
  g_assert_cmpuint(loc.index, ==, 3);
}

/* ---- more shape rules ---------------------------------------------------------------------- */

static void test_rule_scalars(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.transpose.int", "s, 0, -1", "[] f32");
  check(f, "aten.view.default", "s, [-1]", "[1] f32");
  check(f, "aten.unsqueeze.default", "s, -1", "[1] f32");
  check(f, "aten.expand.default", "s, [3, 2]", "[3, 2] f32");
  check(f, "aten.permute.default", "s, []", "[] f32");
  check(f, "aten.sort.default", "s", "[] f32; [] i64");
  check(f, "aten.topk.default", "s, 1", "[] f32; [] i64");
  check_err(f, "aten.select.int", "s, 0, 0", SC_OPS_ERROR_SHAPE, "0-dim", NULL);
  check_err(f, "aten.unsqueeze.default", "s, 1", SC_OPS_ERROR_SHAPE, "out of range", NULL);
}

static void test_rule_max_rank(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "r8", "f32", "[1, 1, 1, 1, 1, 1, 1, 2]");
  check_err(f, "aten.unsqueeze.default", "r8, 0", SC_OPS_ERROR_SHAPE, "more than 8 dims", NULL);
  check_err(f, "aten.view.default", "r8, [1, 1, 1, 1, 1, 1, 1, 1, 2]", SC_OPS_ERROR_SHAPE,
            "more than the supported 8", NULL);
  check_err(f, "aten.stack.default", "[r8, r8]", SC_OPS_ERROR_SHAPE, "more than 8 dims", NULL);
  check(f, "aten.squeeze.default", "r8", "[2] f32");
}

static void test_rule_dtype_kept(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.view.default", "h, [10]", "[10] f16");
  check(f, "aten.slice.Tensor", "mask, 1, 0, 2", "[4, 2] bool");
  check(f, "aten.transpose.int", "j, 0, 1", "[1, 2] i64");
  check(f, "aten.split.Tensor", "h, 1", "[1, 5] f16; [1, 5] f16");
  check(f, "aten.index_select.default", "h, 1, i", "[2, 3] f16");
  decl(f, "h46", "f16", "[4, 6]");
  check(f, "aten.where.self", "bmask, h46, m", "[4, 6] f32");
  check(f, "aten.where.self", "mask, h46, h46", "[4, 6] f16");
}

static void test_rule_expand_symbolic(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "one8", "f32", "[1, 8]");
  check(f, "aten.expand.default", "one8, ['S', 8]", "[S, 8] f32");
  check(f, "aten.expand.default", "y, ['S', -1]", "[S, 8] f32");
  check(f, "aten.expand.default", "y, [2, 'S', 8]", "[2, S, 8] f32");
  check_err(f, "aten.expand.default", "y, ['T', 8]", SC_OPS_ERROR_UNDECIDED, "cannot decide", NULL);
  check_err(f, "aten.expand.default", "y, [3, 8]", SC_OPS_ERROR_SHAPE, "must match", NULL);
}

static void test_rule_split_symbolic(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "aten.split_with_sizes.default", "y, ['S/2', 'S/2']", "[S/2, 8] f32; [S/2, 8] f32");
  check(f, "aten.split_with_sizes.default", "y, [2, 6], 1", "[S, 2] f32; [S, 6] f32");
  check(f, "aten.chunk.default", "y, 1", "[S, 8] f32");
  check_err(f, "aten.split_with_sizes.default", "y, ['S/2', 'T']", SC_OPS_ERROR_UNDECIDED,
            "split_sizes", NULL);
  check(f, "aten.narrow.default", "y, 0, 0, 'S/2'", "[S/2, 8] f32");
  check(f, "aten.slice.Tensor", "y, 0, 0, 'S', 2", "[S/2, 8] f32");
  check(f, "aten.slice.Tensor", "y, 0, -2", "[2, 8] f32");
}

static void test_rule_stack_index_symbolic(void) {
  g_autoptr(fx) f = std_fx();
  decl(f, "is", "i64", "[S]");
  check(f, "aten.stack.default", "[y, z], 1", "[S, 2, 8] f32");
  check(f, "aten.index.Tensor", "m, [None, is]", "[4, S] f32");
  check(f, "aten.index_select.default", "m, 0, is", "[S, 6] f32");
  check(f, "aten.cat.default", "[y, y, z], 0", "[3*S, 8] f32");
  check(f, "comm.all_to_all.default", "[y, z], 0, 1", "[S/2, 16] f32; [S/2, 16] f32");
  check(f, "comm.all_gather.default", "[y, z], 0", "[2*S, 8] f32; [2*S, 8] f32");
}

static void test_infer_out_array(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup("aten.split.Tensor", NULL);
  sc_value *b;
  g_assert_true(fx_bind(f, op, "a, 1", &b, NULL, NULL));
  sc_op_call call = {op, b, fx_type_of, f, f->st};
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
  sc_ttype pre = {sc_shape_scalar(), SC_DTYPE_I8};
  g_array_append_val(out, pre);
  g_assert_true(sc_ops_infer(&call, out, NULL));
  g_assert_cmpuint(out->len, ==, 3); /* appended after what was there */
  g_assert_cmpint(g_array_index(out, sc_ttype, 0).dtype, ==, SC_DTYPE_I8);
  fx_bound_free(op, b);
  /* a failing rule leaves the array as it was */
  op = sc_ops_lookup("aten.split.Tensor", NULL);
  g_assert_true(fx_bind(f, op, "a, 0", &b, NULL, NULL));
  call.args = b;
  g_autoptr(GError) err = NULL;
  g_assert_false(sc_ops_infer(&call, out, &err));
  g_assert_cmpuint(out->len, ==, 3);
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE);
  fx_bound_free(op, b);
}

static void test_rule_unknown_tensor(void) {
  g_autoptr(fx) f = std_fx();
  const sc_op *op = sc_ops_lookup("aten.clone.default", NULL);
  sc_value args[2] = {sc_value_tensor(999), sc_value_none()};
  sc_op_call call = {op, args, fx_type_of, f, f->st};
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
  g_autoptr(GError) err = NULL;
  g_assert_false(sc_ops_infer(&call, out, &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE);
  g_assert_nonnull(strstr(err->message, "unknown type"));
}

static void test_rule_c10d_symbolic(void) {
  g_autoptr(fx) f = std_fx();
  check(f, "_c10d_functional.reduce_scatter_tensor.default", "y, 'sum', 2, 'g'", "[S/2, 8] f32");
  check(f, "_c10d_functional.all_to_all_single.default", "y, ['S/2', 'S/2'], ['S/2', 'S/2'], 'g'",
        "[S, 8] f32");
  check_err(f, "_c10d_functional.reduce_scatter_tensor.default", "w, 'sum', 2, 'g'",
            SC_OPS_ERROR_UNDECIDED, "cannot decide", NULL);
  check_err(f, "_c10d_functional.all_gather_into_tensor.default", "s, 2, 'g'", SC_OPS_ERROR_SHAPE,
            "0-dim", NULL);
}


/* Every built-in schema re-parses to the same operator. */
static void test_schema_builtins_reparse(void) {
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    sc_op again;
    g_autoptr(GError) err = NULL;
    g_assert_true(sc_ops_schema_parse(op->ns, op->schema, &again, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(again.qualname, ==, op->qualname);
    g_assert_cmpuint(again.n_args, ==, op->n_args);
    g_assert_cmpuint(again.n_results, ==, op->n_results);
    for (uint32_t a = 0; a < op->n_args; a++) {
      g_assert_cmpstr(again.args[a].name, ==, op->args[a].name);
      g_assert_true(sc_value_equal(&again.args[a].default_value, &op->args[a].default_value));
      /* keyword-only arguments come last */
      if (a > 0 && op->args[a - 1].kwarg_only)
        g_assert_true(op->args[a].kwarg_only);
    }
    sc_ops_schema_clear(&again);
  }
}

/* Binding nothing either succeeds from defaults alone or names the first
 * required argument. */
static void test_bind_builtins_empty(void) {
  g_autoptr(fx) f = std_fx();
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    int32_t first_required = -1;
    for (uint32_t a = 0; a < op->n_args && first_required < 0; a++)
      if (!op->args[a].has_default && op->args[a].type != SC_ARG_IGNORED)
        first_required = (int32_t)a;
    sc_value *b;
    g_autoptr(GError) err = NULL;
    gboolean ok = fx_bind(f, op, "", &b, NULL, &err);
    if (first_required < 0) {
      g_assert_no_error(err);
      g_assert_true(ok);
      fx_bound_free(op, b);
    } else {
      g_assert_false(ok);
      g_free(b);
      g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_BIND);
      g_autofree char *want = g_strdup_printf("missing argument '%s' of %s",
                                              op->args[first_required].name, op->qualname);
      g_assert_true(g_str_has_prefix(err->message, want));
    }
  }
}

/* Every rule, fed plausible and implausible arguments, answers with a type
 * list or an error, never a crash (run under the sanitizers). */
static void test_rules_robust(void) {
  g_autoptr(fx) f = std_fx();
  static const char *const tensors[] = {"x", "s", "y", "j", "mask"};
  static const char *const ints[] = {"0", "-1", "2", "'S'", "100"};
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    for (size_t variant = 0; variant < G_N_ELEMENTS(tensors); variant++) {
      GString *args = g_string_new(NULL);
      for (uint32_t a = 0; a < op->n_args; a++) {
        const sc_arg *arg = &op->args[a];
        if (arg->has_default && variant % 2 == 0)
          continue;
        const char *t = tensors[variant], *n = ints[variant];
        g_autofree char *v = NULL;
        switch (arg->type) {
        case SC_ARG_TENSOR: v = g_strdup(t); break;
        case SC_ARG_TENSOR_LIST: v = g_strdup_printf("[%s, %s]", t, t); break;
        case SC_ARG_TENSOR_OPT_LIST: v = g_strdup("[None, i]"); break;
        case SC_ARG_INT: v = g_strdup(n); break;
        case SC_ARG_INT_LIST: v = g_strdup_printf("[%s, 2]", n); break;
        case SC_ARG_FLOAT: v = g_strdup("0.5"); break;
        case SC_ARG_BOOL: v = g_strdup("True"); break;
        case SC_ARG_BOOL_LIST: v = g_strdup("[True, True, True]"); break;
        case SC_ARG_STR: v = g_strdup("'sum'"); break;
        case SC_ARG_SCALAR: v = g_strdup(n); break;
        case SC_ARG_DTYPE: v = g_strdup("'f32'"); break;
        case SC_ARG_IGNORED: v = g_strdup("None"); break;
        }
        g_string_append_printf(args, "%s%s=%s", args->len ? ", " : "", arg->name, v);
      }
      g_autoptr(GError) err = NULL;
      g_autofree char *got = run(f, op->qualname, args->str, &err);
      g_assert_true((got != NULL) != (err != NULL));
      if (err != NULL)
        g_assert_true(err->domain == SC_OPS_ERROR);
      g_string_free(args, TRUE);
    }
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ops/init/threads", test_init_threads);
  g_test_add_func("/ops/schema/tricky", test_schema_tricky);
  g_test_add_func("/ops/schema/results", test_schema_results);
  g_test_add_func("/ops/schema/malformed", test_schema_malformed);
  g_test_add_func("/ops/registry/builtins", test_registry_builtins);
  g_test_add_func("/ops/lookup/exact", test_lookup_exact);
  g_test_add_func("/ops/lookup/unknown", test_lookup_unknown);
  g_test_add_func("/ops/lookup/ambiguous", test_lookup_ambiguous);
  g_test_add_func("/ops/lookup/func", test_lookup_func);
  g_test_add_func("/ops/bind/defaults-kwargs", test_bind_defaults_kwargs);
  g_test_add_func("/ops/bind/coercions", test_bind_coercions);
  g_test_add_func("/ops/bind/variadic-sc", test_bind_variadic_sc);
  g_test_add_func("/ops/bind/errors", test_bind_errors);
  g_test_add_func("/ops/bind/fixed-len", test_bind_fixed_len);
  g_test_add_func("/ops/rule/transpose-permute-t", test_rule_transpose_permute_t);
  g_test_add_func("/ops/rule/view", test_rule_view);
  g_test_add_func("/ops/rule/view-symbolic", test_rule_view_symbolic);
  g_test_add_func("/ops/rule/expand-squeeze", test_rule_expand_squeeze);
  g_test_add_func("/ops/rule/slice-clamping", test_rule_slice_clamping);
  g_test_add_func("/ops/rule/slice-symbolic", test_rule_slice_symbolic);
  g_test_add_func("/ops/rule/select-narrow", test_rule_select_narrow);
  g_test_add_func("/ops/rule/slice-scatter-backward", test_rule_slice_scatter_backward);
  g_test_add_func("/ops/rule/cat", test_rule_cat);
  g_test_add_func("/ops/rule/stack", test_rule_stack);
  g_test_add_func("/ops/rule/split", test_rule_split);
  g_test_add_func("/ops/rule/chunk", test_rule_chunk);
  g_test_add_func("/ops/rule/index", test_rule_index);
  g_test_add_func("/ops/rule/gather-select-scatter", test_rule_gather_select_scatter);
  g_test_add_func("/ops/rule/scatter-index-add-one-hot", test_rule_scatter_index_add_one_hot);
  g_test_add_func("/ops/rule/where-masked", test_rule_where_masked);
  g_test_add_func("/ops/rule/topk-sort-misc", test_rule_topk_sort_misc);
  g_test_add_func("/ops/rule/nonzero", test_rule_nonzero);
  g_test_add_func("/ops/infer/normalizes-sizes", test_infer_normalizes_sizes);
  g_test_add_func("/ops/rule/copies", test_rule_copies);
  g_test_add_func("/ops/rule/creation", test_rule_creation);
  g_test_add_func("/ops/rule/arange", test_rule_arange);
  g_test_add_func("/ops/rule/comm", test_rule_comm);
  g_test_add_func("/ops/rule/c10d", test_rule_c10d);
  g_test_add_func("/ops/rule/sc-sum", test_rule_sc_sum);
  g_test_add_func("/ops/rule/overflow", test_rule_overflow);
  g_test_add_func("/ops/schema/builtins-reparse", test_schema_builtins_reparse);
  g_test_add_func("/ops/bind/builtins-empty", test_bind_builtins_empty);
  g_test_add_func("/ops/rule/robust", test_rules_robust);
  g_test_add_func("/ops/lookup/func-namespaces", test_lookup_func_namespaces);
  g_test_add_func("/ops/lookup/nearest-threshold", test_lookup_nearest_threshold);
  g_test_add_func("/ops/bind/kwarg-only-required", test_bind_kwarg_only_required);
  g_test_add_func("/ops/bind/typed-passthrough", test_bind_typed_passthrough);
  g_test_add_func("/ops/bind/symbolic-lists", test_bind_symbolic_lists);
  g_test_add_func("/ops/bind/variadic-loc", test_bind_variadic_loc);
  g_test_add_func("/ops/rule/scalars", test_rule_scalars);
  g_test_add_func("/ops/rule/max-rank", test_rule_max_rank);
  g_test_add_func("/ops/rule/dtype-kept", test_rule_dtype_kept);
  g_test_add_func("/ops/rule/expand-symbolic", test_rule_expand_symbolic);
  g_test_add_func("/ops/rule/split-symbolic", test_rule_split_symbolic);
  g_test_add_func("/ops/rule/stack-index-symbolic", test_rule_stack_index_symbolic);
  g_test_add_func("/ops/infer/out-array", test_infer_out_array);
  g_test_add_func("/ops/infer/unknown-tensor", test_rule_unknown_tensor);
  g_test_add_func("/ops/rule/c10d-symbolic", test_rule_c10d_symbolic);
  return g_test_run();
}
