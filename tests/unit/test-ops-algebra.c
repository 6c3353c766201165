/* test-ops-algebra.c — the operator algebra read off the table
 * (src/ops/algebra.c): class membership from flags and schemas, combiners,
 * value relations, and that a run-time operator with the same flags joins
 * the same classes. */
#include "shardcheck/ops.h"

#include <string.h>

static const sc_op *op(const char *name) {
  g_autoptr(GError) err = NULL;
  const sc_op *o = sc_ops_lookup(name, &err);
  g_assert_no_error(err);
  return o;
}

static gboolean in(const char *name, const char *cls) {
  sc_op_class c;
  g_assert_true(sc_ops_class_lookup(cls, &c));
  g_assert_cmpstr(sc_ops_class_name(c), ==, cls);
  return sc_ops_in_class(op(name), c);
}

static void test_classes(void) {
  sc_ops_init();
  /* unary, scalar-operand forms, comparisons with a scalar */
  static const char *const unary[] = {"aten.gelu.default", "aten.tanh.default",
                                      "aten.add.Scalar", "aten.pow.Tensor_Scalar",
                                      "aten.pow.Scalar", "aten.clamp_min.default",
                                      "aten.lt.Scalar", "aten.log_sigmoid.default"};
  for (size_t i = 0; i < G_N_ELEMENTS(unary); i++) {
    g_assert_true(in(unary[i], "elementwise1"));
    g_assert_false(in(unary[i], "elementwise2"));
  }
  /* binary with broadcasting, and the elementwise backward operators */
  static const char *const binary[] = {"aten.add.Tensor", "aten.maximum.default",
                                       "aten.tanh_backward.default",
                                       "aten.sigmoid_backward.default",
                                       "aten.threshold_backward.default",
                                       "aten.gelu_backward.default",
                                       "aten.masked_fill.Scalar", "aten.eq.Tensor"};
  for (size_t i = 0; i < G_N_ELEMENTS(binary); i++)
    g_assert_true(in(binary[i], "elementwise2"));
  g_assert_true(in("aten.where.self", "elementwise3"));
  g_assert_true(in("aten.addcmul.default", "elementwise3"));
  /* optional tensors, tensor lists, random operators: in no class */
  g_assert_false(in("aten.clamp.Tensor", "elementwise1"));
  g_assert_false(in("aten.clamp.Tensor", "elementwise3"));
  g_assert_false(in("sc.sum.default", "elementwise1"));
  g_assert_false(in("aten.native_dropout.default", "elementwise1"));
  g_assert_false(in("aten.mm.default", "elementwise2"));
  /* reductions: a dim and keepdim; one result */
  g_assert_true(in("aten.sum.dim_IntList", "reduce"));
  g_assert_true(in("aten.sum.dim_IntList", "reduce_sum"));
  g_assert_false(in("aten.sum.dim_IntList", "reduce_mean"));
  g_assert_true(in("aten.mean.dim", "reduce_mean"));
  g_assert_true(in("aten.amax.default", "reduce_max"));
  g_assert_true(in("aten.amin.default", "reduce_min"));
  g_assert_true(in("aten.any.dims", "reduce_or"));
  g_assert_true(in("aten.all.dim", "reduce_and"));
  g_assert_true(in("aten.logsumexp.default", "reduce_logaddexp"));
  g_assert_true(in("aten.logsumexp.default", "reduce"));
  g_assert_true(in("aten.var.correction", "reduce"));
  g_assert_true(in("aten.argmax.default", "reduce"));
  g_assert_false(in("aten.sum.default", "reduce"));    /* no dim */
  g_assert_false(in("aten.max.dim", "reduce"));        /* two results */
  g_assert_false(in("aten.mean.dim", "elementwise1"));
  /* row-wise */
  g_assert_true(in("aten._softmax.default", "rowwise1"));
  g_assert_true(in("aten.cumsum.default", "rowwise1"));
  g_assert_true(in("aten.log_softmax.int", "rowwise1"));
  g_assert_true(in("aten._softmax_backward_data.default", "rowwise2"));
  g_assert_false(in("aten._softmax.default", "rowwise2"));
  /* linear in an operand (SC_OP_LINEAR_FIRST / _SECOND), by arity */
  static const char *const lin1[] = {"aten.neg.default", "aten.mul.Scalar",
                                     "aten.expand.default", "aten.repeat.default",
                                     "aten.sum.dim_IntList", "aten.mean.dim",
                                     "aten.slice_backward.default", "aten.cumsum.default"};
  for (size_t i = 0; i < G_N_ELEMENTS(lin1); i++)
    g_assert_true(in(lin1[i], "linear1"));
  static const char *const lin2[] = {"aten.sigmoid_backward.default", "aten.tanh_backward.default",
                                     "aten.threshold_backward.default",
                                     "aten.gelu_backward.default",
                                     "aten._softmax_backward_data.default", "aten.mul.Tensor",
                                     "aten.mm.default"};
  for (size_t i = 0; i < G_N_ELEMENTS(lin2); i++) {
    g_assert_true(in(lin2[i], "linear2_first"));
    g_assert_false(in(lin2[i], "linear1"));
  }
  g_assert_true(in("aten.mul.Tensor", "linear2_second"));
  g_assert_true(in("aten.bmm.default", "linear2_second"));
  g_assert_false(in("aten.sigmoid_backward.default", "linear2_second"));
  g_assert_true(in("aten.mse_loss_backward.default", "linear3_first"));
  /* with scale_grad_by_freq it divides integer gradients by counts (integer
   * division): its linearity is a lemma with a condition (class-backward) */
  g_assert_false(in("aten.embedding_dense_backward.default", "linear2_first"));
  /* affine or nonlinear in every operand; a divisor 0 breaks div.Scalar's */
  static const char *const nonlin[] = {"aten.add.Tensor", "aten.sub.Tensor", "aten.add.Scalar",
                                       "aten.gelu.default", "aten.div.Scalar",
                                       "aten.amax.default", "aten.var.correction"};
  for (size_t i = 0; i < G_N_ELEMENTS(nonlin); i++) {
    g_assert_false(in(nonlin[i], "linear1"));
    g_assert_false(in(nonlin[i], "linear2_first"));
  }
  sc_op_class c;
  g_assert_false(sc_ops_class_lookup("elementwise", &c));
  g_assert_nonnull(strstr(sc_ops_class_names(), "reduce_sum"));
}

static void test_combiners(void) {
  sc_ops_init();
  g_assert_cmpint(sc_ops_combiner(op("aten.sum.dim_IntList")), ==, SC_COMBINE_SUM);
  g_assert_cmpint(sc_ops_combiner(op("aten.mean.dim")), ==, SC_COMBINE_MEAN);
  g_assert_cmpint(sc_ops_combiner(op("aten.max.dim")), ==, SC_COMBINE_MAX);
  g_assert_cmpint(sc_ops_combiner(op("aten.amin.default")), ==, SC_COMBINE_MIN);
  g_assert_cmpint(sc_ops_combiner(op("aten.all.default")), ==, SC_COMBINE_AND);
  g_assert_cmpint(sc_ops_combiner(op("aten.logsumexp.default")), ==, SC_COMBINE_LOGADDEXP);
  g_assert_cmpint(sc_ops_combiner(op("aten.var.correction")), ==, SC_COMBINE_NONE);
  g_assert_cmpint(sc_ops_combiner(op("aten.add.Tensor")), ==, SC_COMBINE_NONE);
  g_assert_cmpstr(sc_ops_combiner_name(SC_COMBINE_LOGADDEXP), ==, "logaddexp");
  /* the combiner bits never overlap a flag */
  g_assert_cmpuint(SC_OP_COMBINE_MASK & (SC_OP_SELECTS | SC_OP_REARRANGE | SC_OP_ROWWISE), ==, 0);
}

static void test_values(void) {
  sc_ops_init();
  static const char *const same[] = {"aten.clone.default", "aten.detach.default",
                                     "aten.alias.default", "aten.lift_fresh_copy.default",
                                     "aten.view.default", "aten.view_copy.default",
                                     "aten.t_copy.default", "aten.permute_copy.default",
                                     "aten.squeeze_copy.dim", "aten.unsqueeze_copy.default",
                                     "_c10d_functional.wait_tensor.default"};
  for (size_t i = 0; i < G_N_ELEMENTS(same); i++)
    g_assert_cmpint(sc_ops_values_relation(op(same[i])), ==, SC_VALUES_SAME);
  static const char *const subset[] = {"aten.slice.Tensor", "aten.slice_copy.Tensor",
                                       "aten.select_copy.int", "aten.expand_copy.default",
                                       "aten.index_select.default", "aten.gather.default"};
  for (size_t i = 0; i < G_N_ELEMENTS(subset); i++)
    g_assert_cmpint(sc_ops_values_relation(op(subset[i])), ==, SC_VALUES_SUBSET);
  /* a dtype conversion may change values: the caller compares dtypes */
  g_assert_cmpint(sc_ops_values_relation(op("aten._to_copy.default")), ==, SC_VALUES_OTHER);
  g_assert_cmpint(sc_ops_values_relation(op("aten.add.Tensor")), ==, SC_VALUES_OTHER);
}

static gboolean same_rule(const sc_op_call *call, GArray *out, GError **error) {
  (void)call;
  (void)out;
  (void)error;
  return TRUE;
}

/* a run-time operator with the same flags joins the same classes */
static void test_registered(void) {
  g_autoptr(GError) err = NULL;
  const sc_op *o = sc_ops_register("algtest", "act(Tensor x, float beta=1.0) -> Tensor",
                                   same_rule, SC_OP_ELEMENTWISE, NULL, &err);
  g_assert_no_error(err);
  sc_op_class c;
  g_assert_true(sc_ops_class_lookup("elementwise1", &c));
  g_assert_true(sc_ops_in_class(o, c));
  const sc_op *r = sc_ops_register("algtest", "rsum(Tensor x, int[] dim, bool keepdim=False) -> Tensor",
                                   same_rule, SC_OP_REDUCTION | SC_OP_COMBINE(SC_COMBINE_PROD),
                                   NULL, &err);
  g_assert_no_error(err);
  g_assert_true(sc_ops_class_lookup("reduce_prod", &c));
  g_assert_true(sc_ops_in_class(r, c));
  g_assert_cmpint(sc_ops_combiner(r), ==, SC_COMBINE_PROD);
  const sc_op *l = sc_ops_register("algtest", "scale(Tensor g, Tensor y) -> Tensor", same_rule,
                                   SC_OP_ELEMENTWISE | SC_OP_LINEAR_FIRST, NULL, &err);
  g_assert_no_error(err);
  g_assert_true(sc_ops_class_lookup("linear2_first", &c));
  g_assert_true(sc_ops_in_class(l, c));
  g_assert_true(sc_ops_class_lookup("linear2_second", &c));
  g_assert_false(sc_ops_in_class(l, c));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ops-algebra/classes", test_classes);
  g_test_add_func("/ops-algebra/combiners", test_combiners);
  g_test_add_func("/ops-algebra/values", test_values);
  g_test_add_func("/ops-algebra/registered", test_registered);
  return g_test_run();
}
