/* test-lemcheck.c — the numerical lemma checker (lemcheck.h) and the
 * instance accessors of lemma.h it reads lemmas through: programs of both
 * sides under a given instance, the library passing, planted unsound
 * lemmas caught with the instance and both values, declared operators
 * evaluated through their definition, undefined ones not checkable,
 * impossible conditions reported, determinism, the JSON report. */
#include "shardcheck/lemcheck.h"
#include "shardcheck/interp.h"

#include <string.h>

static sc_lemma_set *load(const char *text) {
  sc_lemma_set *set = sc_lemma_set_new();
  GError *err = NULL;
  if (!sc_lemma_set_load_string(set, "t.lemma", text, &err))
    g_error("load: %s", err->message);
  return set;
}

static void check_one(sc_lemma_set *set, const char *name, sc_lemcheck_result *out) {
  sc_lemcheck_options o;
  sc_lemcheck_options_init(&o);
  o.instances = 12;
  int32_t i = sc_lemma_set_find(set, name);
  g_assert_cmpint(i, >=, 0);
  sc_lemcheck_lemma(set, (uint32_t)i, &o, out);
}

/* mm_cat_rows under ?a: f32[2, 3], ?b: f32[1, 3], ?w: f32[3, 5] */
static void test_instance_program(void) {
  g_autoptr(sc_lemma_set) set = load(
      "lemma rows: mm(cat(?a, ?b, dim=0), ?w) => cat(mm(?a, ?w), mm(?b, ?w), dim=0)\n"
      "  where dtype(?a) == dtype(?b)\n");
  g_assert_cmpuint(sc_lemma_n_vars(set, 0), ==, 3);
  g_assert_cmpstr(sc_lemma_var_name(set, 0, 0), ==, "a");
  g_assert_cmpstr(sc_lemma_var_name(set, 0, 2), ==, "w");
  g_assert_false(sc_lemma_var_is_attr(set, 0, 1));
  g_assert_null(sc_lemma_var_arg(set, 0, 1));
  g_assert_true(sc_lemma_var_in_sides(set, 0, 2));
  g_autoptr(sc_symtab) st = sc_symtab_new();
  int64_t da[] = {2, 3}, db[] = {1, 3}, dw[] = {3, 5};
  sc_ttype types[3] = {{sc_shape_of(2, da), SC_DTYPE_F32},
                       {sc_shape_of(2, db), SC_DTYPE_F32},
                       {sc_shape_of(2, dw), SC_DTYPE_F32}};
  sc_value values[3] = {sc_value_none(), sc_value_none(), sc_value_none()};
  sc_lemma_instance inst = {st, types, values};
  g_assert_cmpint(sc_lemma_condition(set, 0, &inst), ==, SC_YES);
  g_autofree char *why = NULL;
  g_autoptr(sc_lemma_program) l = sc_lemma_instantiate(set, 0, SC_LEMMA_SIDE_LEFT, &inst, &why);
  g_assert_nonnull(l);
  g_assert_cmpuint(l->n_steps, ==, 2);
  g_assert_cmpstr(l->steps[0].op->qualname, ==, "sc.cat.default");
  g_assert_cmpstr(l->steps[1].op->qualname, ==, "aten.mm.default");
  g_assert_cmpuint(l->root, ==, 3 + 1);
  g_assert_cmpuint(l->steps[1].args[0].u.tensor, ==, 3); /* the cat's slot */
  g_assert_cmpuint(l->steps[1].args[1].u.tensor, ==, 2); /* ?w */
  g_assert_cmpint(l->type.shape.dims[0].value, ==, 3);
  g_assert_cmpint(l->type.shape.dims[1].value, ==, 5);
  g_autoptr(sc_lemma_program) r = sc_lemma_instantiate(set, 0, SC_LEMMA_SIDE_RIGHT, &inst, &why);
  g_assert_nonnull(r);
  g_assert_cmpuint(r->n_steps, ==, 3);
  g_assert_true(sc_shape_equal(&r->type.shape, &l->type.shape));
  g_autofree char *txt = sc_lemma_instance_to_string(set, 0, &inst);
  g_assert_cmpstr(txt, ==, "?a: f32[2, 3], ?b: f32[1, 3], ?w: f32[3, 5]");
  /* a shape rule refuses: ?w with 4 rows */
  int64_t dw2[] = {4, 5};
  types[2].shape = sc_shape_of(2, dw2);
  g_autofree char *why2 = NULL;
  g_assert_null(sc_lemma_instantiate(set, 0, SC_LEMMA_SIDE_LEFT, &inst, &why2));
  g_assert_nonnull(strstr(why2, "aten.mm.default"));
  /* the condition: dtypes differ */
  types[1].dtype = SC_DTYPE_F16;
  g_assert_cmpint(sc_lemma_condition(set, 0, &inst), ==, SC_NO);
}

static void test_attr_var_arg(void) {
  g_autoptr(sc_lemma_set) set = load(
      "lemma sc_left: slice(cat(?a, ?b, dim=?d), dim=?d, start=?s, end=?e)\n"
      "    => slice(?a, dim=?d, start=?s, end=?e)\n"
      "  where 0 <= ?s and ?s <= ?e and ?e <= size(?a, ?d) and dtype(?a) == dtype(?b)\n");
  int32_t d = -1;
  for (uint32_t v = 0; v < sc_lemma_n_vars(set, 0); v++)
    if (strcmp(sc_lemma_var_name(set, 0, v), "d") == 0)
      d = (int32_t)v;
  g_assert_cmpint(d, >=, 0);
  g_assert_true(sc_lemma_var_is_attr(set, 0, (uint32_t)d));
  const sc_arg *a = sc_lemma_var_arg(set, 0, (uint32_t)d);
  g_assert_nonnull(a);
  g_assert_cmpstr(a->name, ==, "dim");
  g_assert_cmpint(a->type, ==, SC_ARG_INT);
}

static void test_library_passes(void) {
  g_autoptr(sc_lemma_set) set = sc_lemma_set_new();
  GError *err = NULL;
  g_assert_true(sc_lemma_set_load_dir(set, SC_TEST_SRCDIR "/lemmas", &err));
  sc_lemcheck_options o;
  sc_lemcheck_options_init(&o);
  o.instances = 6;
  g_autoptr(sc_lemcheck_report) r = sc_lemcheck_run(set, &o);
  uint32_t p, f, w, c;
  sc_lemcheck_report_counts(r, &p, &f, &w, &c);
  for (uint32_t i = 0; i < sc_lemcheck_report_n(r); i++) {
    const sc_lemcheck_result *x = sc_lemcheck_report_at(r, i);
    if (x->status == SC_LEMCHECK_FAIL)
      g_test_message("%s: %s: %s", x->name, x->failure.instance, x->failure.detail);
  }
  g_assert_cmpuint(f, ==, 0);
  g_assert_cmpuint(p + f + w + c, ==, sc_lemma_set_n_lemmas(set));
  g_assert_cmpuint(p, >=, 60);
  /* the core lemmas each found instances */
  static const char *const core[] = {"mm_cat_contract", "slice_cat_right", "slice_split",
                                     "permute_cat", "sum_view", "transpose_cat_dim0",
                                     "ew1_cat[tanh]", "ew2_cat[tanh_backward]",
                                     "reduce_cat_other[amax]", "reduce_mean_cat_same[mean.dim]",
                                     "rowwise_cat_other[_softmax]"};
  for (size_t k = 0; k < G_N_ELEMENTS(core); k++) {
    int32_t i = sc_lemma_set_find(set, core[k]);
    g_assert_cmpint(i, >=, 0);
    const sc_lemcheck_result *x = sc_lemcheck_report_at(r, (uint32_t)i);
    g_assert_cmpint(x->status, ==, SC_LEMCHECK_PASS);
    g_assert_cmpuint(x->instances, ==, 6);
  }
}

/* a - b => b - a: caught, with the instance and two values that are
 * each other's negation */
static void test_planted_caught(void) {
  g_autoptr(sc_lemma_set) set = load(
      "lemma bad_sub: sub.Tensor(?a, ?b) => sub.Tensor(?b, ?a)\n"
      "  where shape(?a) == shape(?b) and dtype(?a) == dtype(?b)\n");
  sc_lemcheck_result x;
  check_one(set, "bad_sub", &x);
  g_assert_cmpint(x.status, ==, SC_LEMCHECK_FAIL);
  g_assert_cmpuint(x.n_failed, >, 0);
  g_assert_nonnull(x.failure.index);
  g_assert_cmpfloat_with_epsilon(x.failure.left, -x.failure.right, 1e-12);
  g_assert_nonnull(strstr(x.failure.instance, "?a: "));
  g_assert_nonnull(strstr(x.failure.detail, "differ, first at"));
  sc_lemcheck_result_clear(&x);
}

/* an off-by-one in a computed start: only values show it */
static void test_planted_offset(void) {
  g_autoptr(sc_lemma_set) set = load(
      "lemma bad_right: slice(cat(?a, ?b, dim=?d), dim=?d, start=?s, end=?e)\n"
      "    => slice(?b, dim=?d, start=?s - size(?a, ?d) + 1, end=?e - size(?a, ?d) + 1)\n"
      "  where size(?a, ?d) <= ?s and ?s <= ?e and ?e < size(?a, ?d) + size(?b, ?d)\n"
      "    and dtype(?a) == dtype(?b)\n");
  sc_lemcheck_result x;
  check_one(set, "bad_right", &x);
  g_assert_cmpint(x.status, ==, SC_LEMCHECK_FAIL);
  sc_lemcheck_result_clear(&x);
}

static void test_declared_ops(void) {
  g_autoptr(sc_lemma_set) set = load(
      "op lemchk.dbl(Tensor x) -> Tensor: shape(x) = add.Tensor(x, x)\n"
      "op lemchk.opaque(Tensor x) -> Tensor: shape(x)\n"
      "lemma dbl_cat: dbl(cat(?a, ?b, dim=?d)) <=> cat(dbl(?a), dbl(?b), dim=?d)\n"
      "  where dtype(?a) == dtype(?b)\n"
      "lemma dbl_wrong: dbl(?x) => mul.Tensor(?x, ?x)\n"
      "lemma opaque_cat: opaque(cat(?a, ?b, dim=0)) <=> cat(opaque(?a), opaque(?b), dim=0)\n"
      "  where dtype(?a) == dtype(?b)\n");
  sc_lemcheck_result x;
  check_one(set, "dbl_cat", &x);
  g_assert_cmpint(x.status, ==, SC_LEMCHECK_PASS);
  g_assert_cmpuint(x.instances, ==, 12);
  sc_lemcheck_result_clear(&x);
  check_one(set, "lemchk_dbl_unfold", &x);
  g_assert_cmpint(x.status, ==, SC_LEMCHECK_PASS);
  sc_lemcheck_result_clear(&x);
  check_one(set, "dbl_wrong", &x);
  g_assert_cmpint(x.status, ==, SC_LEMCHECK_FAIL);
  sc_lemcheck_result_clear(&x);
  check_one(set, "opaque_cat", &x);
  g_assert_cmpint(x.status, ==, SC_LEMCHECK_NOT_CHECKABLE);
  g_assert_nonnull(strstr(x.note, "lemchk.opaque.default has no definition"));
  sc_lemcheck_result_clear(&x);
}

/* The interpreter runs a declared operator through its definition when
 * given sc_lemcheck_eval_declared as its fallback (check --validate). */
static void test_eval_declared_fallback(void) {
  g_autoptr(sc_lemma_set) set = load(
      "op lemchk.triple(Tensor x) -> Tensor: shape(x) = add.Tensor(add.Tensor(x, x), x)\n"
      "op lemchk.blackbox(Tensor x) -> Tensor: shape(x)\n");
  GError *err = NULL;
  const sc_op *triple = sc_ops_lookup("lemchk.triple", &err);
  g_assert_no_error(err);
  int64_t dims[2] = {2, 3};
  g_autoptr(sc_tvalue) x = sc_tvalue_new(SC_DTYPE_F32, 2, dims, 0, &err);
  g_assert_no_error(err);
  for (int64_t i = 0; i < x->numel; i++)
    x->data[i] = (double)i - 2.5;
  sc_tvalue *tensors[1] = {x};
  sc_value args[1] = {sc_value_tensor(0)};
  g_autoptr(GPtrArray) res = g_ptr_array_new_with_free_func((GDestroyNotify)sc_tvalue_free);
  /* without a fallback: no evaluator */
  sc_interp_config plain = {1, 0, NULL, NULL};
  g_assert_false(sc_interp_eval(triple, args, NULL, NULL, tensors, 1, &plain, res, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR);
  g_clear_error(&err);
  /* with it: 3x, typed by the declaration */
  sc_interp_config cfg = {1, 0, sc_lemcheck_eval_declared, set};
  g_assert_true(sc_interp_eval(triple, args, NULL, NULL, tensors, 1, &cfg, res, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(res->len, ==, 1);
  const sc_tvalue *y = res->pdata[0];
  g_assert_cmpint(y->numel, ==, 6);
  for (int64_t i = 0; i < y->numel; i++)
    g_assert_cmpfloat(y->data[i], ==, 3.0 * x->data[i]);
  /* an operator without a definition stays without an evaluator */
  const sc_op *blackbox = sc_ops_lookup("lemchk.blackbox", &err);
  g_assert_no_error(err);
  g_assert_false(sc_interp_eval(blackbox, args, NULL, NULL, tensors, 1, &cfg, res, &err));
  g_assert_error(err, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR);
  g_assert_nonnull(strstr(err->message, "lemchk.blackbox.default has no definition"));
  g_clear_error(&err);
}

static void test_no_instance(void) {
  g_autoptr(sc_lemma_set) set = load("lemma never: neg(?x) => neg(?x) where rank(?x) > 6\n");
  sc_lemcheck_result x;
  check_one(set, "never", &x);
  g_assert_cmpint(x.status, ==, SC_LEMCHECK_NO_INSTANCE);
  g_assert_cmpuint(x.instances, ==, 0);
  g_assert_cmpuint(x.trials, ==, 6000);
  g_assert_nonnull(strstr(x.note, "where condition"));
  sc_lemcheck_result_clear(&x);
}

static void test_report_and_determinism(void) {
  g_autoptr(sc_lemma_set) set = load(
      "lemma good: neg(sum(?a, ?b)) <=> sum(neg(?a), neg(?b))\n"
      "lemma bad: relu(?x) => neg(relu(?x))\n");
  sc_lemcheck_options o;
  sc_lemcheck_options_init(&o);
  o.instances = 5;
  o.seed = 7;
  g_autoptr(sc_lemcheck_report) r1 = sc_lemcheck_run(set, &o);
  g_autoptr(sc_lemcheck_report) r2 = sc_lemcheck_run(set, &o);
  g_assert_cmpuint(sc_lemcheck_report_n(r1), ==, 2);
  const sc_lemcheck_result *a = sc_lemcheck_report_at(r1, 1), *b = sc_lemcheck_report_at(r2, 1);
  g_assert_cmpint(a->status, ==, SC_LEMCHECK_FAIL);
  g_assert_cmpstr(a->failure.instance, ==, b->failure.instance);
  g_assert_cmpuint(a->trials, ==, b->trials);
  g_autofree char *js = sc_lemcheck_report_json(r1, set);
  g_assert_nonnull(strstr(js, "\"name\":\"good\",\"file\":\"t.lemma\""));
  g_assert_nonnull(strstr(js, "\"status\":\"fail\""));
  g_assert_nonnull(
      strstr(js, "\"summary\":{\"lemmas\":2,\"passed\":1,\"failed\":1,\"no_instance\":0"));
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  sc_lemcheck_report_text(f, r1);
  fclose(f);
  g_assert_nonnull(strstr(buf, "ok    good: 5 instances\n"));
  g_assert_nonnull(strstr(buf, "FAIL  bad: 5 of 5 instances differ\n"));
  g_assert_nonnull(
      strstr(buf, "2 lemmas: 1 passed, 1 failed, 0 without instances, 0 not checkable\n"));
  free(buf);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  sc_ops_init();
  g_test_add_func("/lemcheck/instance/program", test_instance_program);
  g_test_add_func("/lemcheck/instance/attr-var-arg", test_attr_var_arg);
  g_test_add_func("/lemcheck/library/passes", test_library_passes);
  g_test_add_func("/lemcheck/planted/swapped-sub", test_planted_caught);
  g_test_add_func("/lemcheck/planted/slice-offset", test_planted_offset);
  g_test_add_func("/lemcheck/declared/unfold", test_declared_ops);
  g_test_add_func("/lemcheck/declared/fallback", test_eval_declared_fallback);
  g_test_add_func("/lemcheck/no-instance", test_no_instance);
  g_test_add_func("/lemcheck/report/deterministic", test_report_and_determinism);
  return g_test_run();
}
