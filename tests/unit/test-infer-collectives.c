/* test-infer-collectives.c — collectives by their semantics
 * (src/infer/collective.c, one table row each): the class the driver
 * asserts for each result of a collective node over two ranks' inputs,
 * compared with the term the spec's table gives. */
#include "infer-fixture.h"

/* x0, x1: [4, 2] f32; node NAME: OP(inputs=[x0, x1], EXTRA...) */
typedef struct {
  ifx f;
  sc_id node;
} cfx;

static void setup(cfx *t, const char *qualname, const char *k1, sc_value v1, const char *k2,
                  sc_value v2) {
  ifx_init(&t->f);
  int64_t s42[2] = {4, 2};
  sc_id x[2];
  for (int i = 0; i < 2; i++) {
    g_autofree char *name = g_strdup_printf("x%d", i);
    sc_ttype ty = {.shape = sc_shape_of(2, s42), .dtype = SC_DTYPE_F32};
    GError *err = NULL;
    g_assert_true(sc_graph_add_input(t->f.g, name, &ty, &x[i], &err));
  }
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup(qualname, &err);
  g_assert_no_error(err);
  sc_value *args = g_new0(sc_value, op->n_args);
  for (uint32_t i = 0; i < op->n_args; i++) {
    if (op->args[i].has_default)
      sc_value_copy(&args[i], &op->args[i].default_value);
    else
      args[i] = sc_value_none();
  }
  int32_t ii = sc_ops_arg_index(op, "inputs");
  args[ii].kind = SC_VAL_TENSOR_LIST;
  args[ii].u.list.n = 2;
  args[ii].u.list.ids = g_new(sc_id, 2);
  args[ii].u.list.ids[0] = x[0];
  args[ii].u.list.ids[1] = x[1];
  if (k1) {
    sc_value_clear(&args[sc_ops_arg_index(op, k1)]);
    args[sc_ops_arg_index(op, k1)] = v1;
  }
  if (k2) {
    sc_value_clear(&args[sc_ops_arg_index(op, k2)]);
    args[sc_ops_arg_index(op, k2)] = v2;
  }
  const char *names[2] = {"y0", "y1"};
  gboolean added = sc_graph_add_node(t->f.g, "coll", op, args, names, 2, NULL, NULL, &t->node, &err);
  if (!added)
    g_printerr("%s\n", err->message);
  g_assert_true(added);
  g_assert_no_error(err); /* the graph owns ARGS */
  ifx_finish(&t->f);
}

/* The class of result K of the node. */
static sc_id result(cfx *t, uint32_t k) {
  sc_id in[2] = {ifx_add(&t->f, "x0"), ifx_add(&t->f, "x1")};
  GError *err = NULL;
  sc_id cls = sc_rel_add_collective(&t->f.c, sc_graph_node(t->f.g, t->node), in, 2, k, &err);
  g_assert_no_error(err);
  return cls;
}

static void expect(const char *qualname, const char *k1, sc_value v1, const char *k2,
                   sc_value v2, uint32_t k, const char *term) {
  cfx t;
  setup(&t, qualname, k1, v1, k2, v2);
  sc_id got = result(&t, k);
  if (term == NULL) {
    g_assert_cmpuint(got, ==, SC_ID_NONE);
  } else {
    g_assert_cmpuint(got, !=, SC_ID_NONE);
    g_assert_true(ifx_same(&t.f, got, ifx_add(&t.f, term)));
  }
  ifx_clear(&t.f);
}

static void test_all_reduce(void) {
  expect("comm.all_reduce.default", NULL, sc_value_none(), NULL, sc_value_none(), 1,
         "sum(x0, x1)");
  expect("comm.all_reduce.default", "op", sc_value_str("max"), NULL, sc_value_none(), 0,
         "maximum(x0, x1)");
  expect("comm.all_reduce.default", "op", sc_value_str("min"), NULL, sc_value_none(), 1,
         "minimum(x0, x1)");
}

static void test_all_gather(void) {
  expect("comm.all_gather.default", "dim", sc_value_int(1), NULL, sc_value_none(), 0,
         "cat(x0, x1, dim=1)");
}

static void test_reduce_scatter(void) {
  expect("comm.reduce_scatter.default", "dim", sc_value_int(0), NULL, sc_value_none(), 1,
         "slice(sum(x0, x1), dim=0, start=2, end=4)");
}

static void test_all_to_all(void) {
  expect("comm.all_to_all.default", "split_dim", sc_value_int(0), "concat_dim", sc_value_int(1),
         1, "cat(slice(x0, dim=0, start=2, end=4), slice(x1, dim=0, start=2, end=4), dim=1)");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/collectives/all-reduce", test_all_reduce);
  g_test_add_func("/infer/collectives/all-gather", test_all_gather);
  g_test_add_func("/infer/collectives/reduce-scatter", test_reduce_scatter);
  g_test_add_func("/infer/collectives/all-to-all", test_all_to_all);
  return g_test_run();
}
