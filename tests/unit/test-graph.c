/* test-graph.c — graphs (graph.h): building, type inference and its errors,
 * duplicate and undefined names, consumers, the visiting order (file order
 * whenever ready), cycles, two-phase building, and a large graph. */
#include "shardcheck/graph.h"

#include <string.h>

/* ---- helpers ---- */

static gboolean resolve(void *env, const char *name, sc_id *out) {
  sc_id id = sc_graph_find_tensor(env, name);
  if (id == SC_ID_NONE)
    return FALSE;
  *out = id;
  return TRUE;
}

/* Bind raw positional values to OP against G's tensor names. */
static sc_value *bind(sc_graph *g, const sc_op *op, sc_value *raw, uint32_t n) {
  sc_value *bound = g_new0(sc_value, op->n_args ? op->n_args : 1);
  GError *err = NULL;
  sc_bind_loc loc;
  gboolean ok = sc_ops_bind(op, sc_graph_symtab(g), raw, n, NULL, NULL, 0, resolve, g, bound,
                            &loc, &err);
  g_assert_no_error(err);
  g_assert_true(ok);
  for (uint32_t i = 0; i < n; i++)
    sc_value_clear(&raw[i]);
  return bound;
}

static const sc_op *op_named(const char *q) {
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup(q, &err);
  g_assert_no_error(err);
  return op;
}

static sc_ttype f32(uint32_t rank, const int64_t *sizes) {
  sc_ttype t;
  t.shape = sc_shape_of(rank, sizes);
  t.dtype = SC_DTYPE_F32;
  return t;
}

static void add_input(sc_graph *g, const char *name, int64_t a, int64_t b) {
  int64_t s[2] = {a, b};
  sc_ttype t = f32(2, s);
  GError *err = NULL;
  g_assert_true(sc_graph_add_input(g, name, &t, NULL, &err));
  g_assert_no_error(err);
}

/* add_node of a unary op (relu) reading IN, producing OUT. */
static gboolean add_unary(sc_graph *g, const char *node, const char *in, const char *out,
                          GError **error) {
  const sc_op *op = op_named("aten.relu.default");
  sc_value raw[1] = {sc_value_str(in)};
  sc_value *args = bind(g, op, raw, 1);
  const char *names[1] = {out};
  return sc_graph_add_node(g, node, op, args, names, 1, NULL, NULL, NULL, error);
}

/* Two-phase: declare node NODE = relu(IN) -> OUT. */
static sc_id declare_unary(sc_graph *g, const char *node, const char *out) {
  const char *names[1] = {out};
  sc_id id;
  GError *err = NULL;
  g_assert_true(sc_graph_declare_node(g, node, op_named("aten.relu.default"), names, 1, NULL,
                                      NULL, &id, &err));
  g_assert_no_error(err);
  return id;
}

static void set_unary_args(sc_graph *g, sc_id node, const char *in) {
  const sc_op *op = op_named("aten.relu.default");
  sc_value raw[1] = {sc_value_str(in)};
  sc_value *args = bind(g, op, raw, 1);
  GError *err = NULL;
  g_assert_true(sc_graph_set_node_args(g, node, args, &err));
  g_assert_no_error(err);
}

static void assert_order(sc_graph *g, const sc_id *want, uint32_t n) {
  uint32_t got_n;
  const sc_id *got = sc_graph_topo_order(g, &got_n);
  g_assert_cmpuint(got_n, ==, n);
  for (uint32_t i = 0; i < n; i++)
    g_assert_cmpuint(got[i], ==, want[i]);
}

/* ---- tests ---- */

static void test_build_basic(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 4, 8);
  add_input(g, "w", 8, 16);
  const sc_op *mm = op_named("aten.mm.default");
  sc_value raw[2] = {sc_value_str("x"), sc_value_str("w")};
  sc_value *args = bind(g, mm, raw, 2);
  const char *names[1] = {"h"};
  int64_t hs[2] = {4, 16};
  sc_ttype decl = f32(2, hs);
  const sc_ttype *decls[1] = {&decl};
  sc_id node;
  GError *err = NULL;
  g_assert_true(sc_graph_add_node(g, "fc1", mm, args, names, 1, decls, "m.py:3", &node, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(node, ==, 0);
  sc_graph_add_output(g, sc_graph_find_tensor(g, "h"));
  g_assert_true(sc_graph_finish(g, &err));
  g_assert_no_error(err);
  g_assert_true(sc_graph_is_finished(g));

  g_assert_cmpuint(sc_graph_n_tensors(g), ==, 3);
  g_assert_cmpuint(sc_graph_n_nodes(g), ==, 1);
  g_assert_cmpuint(sc_graph_n_inputs(g), ==, 2);
  g_assert_cmpuint(sc_graph_n_outputs(g), ==, 1);
  sc_id h = sc_graph_find_tensor(g, "h");
  g_assert_cmpuint(h, ==, 2);
  g_assert_cmpuint(sc_graph_output(g, 0), ==, h);
  const sc_tensor *t = sc_graph_tensor(g, h);
  g_autofree char *s = sc_shape_to_string(&t->type.shape);
  g_assert_cmpstr(s, ==, "[4, 16]");
  g_assert_cmpint(t->type.dtype, ==, SC_DTYPE_F32);
  g_assert_cmpuint(t->producer, ==, 0);
  g_assert_cmpuint(t->result_index, ==, 0);
  g_assert_cmpint(t->rank, ==, -1);
  const sc_node *n = sc_graph_node(g, 0);
  g_assert_cmpstr(n->name, ==, "fc1");
  g_assert_cmpstr(n->src, ==, "m.py:3");
  g_assert_true(n->op == mm);
  g_assert_cmpuint(n->n_inputs, ==, 2);
  g_assert_cmpuint(n->inputs[0], ==, sc_graph_find_tensor(g, "x"));
  g_assert_cmpuint(n->inputs[1], ==, sc_graph_find_tensor(g, "w"));
  g_assert_cmpuint(sc_graph_find_node(g, "fc1"), ==, 0);
  g_assert_cmpuint(sc_graph_find_node(g, "h"), ==, SC_ID_NONE);
  g_assert_cmpuint(sc_graph_find_tensor(g, "nope"), ==, SC_ID_NONE);
  const sc_tensor *x = sc_graph_tensor(g, sc_graph_find_tensor(g, "x"));
  g_assert_cmpuint(x->n_consumers, ==, 1);
  g_assert_cmpuint(x->consumers[0], ==, 0);
  g_assert_cmpuint(sc_graph_tensor(g, h)->n_consumers, ==, 0);
  g_assert_cmpstr(sc_graph_name_of(g, h), ==, "h");
  g_assert_true(sc_graph_type_of(g, h) == &sc_graph_tensor(g, h)->type);
  sc_id order[1] = {0};
  assert_order(g, order, 1);
}

static void test_declared_mismatch(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 4, 8);
  add_input(g, "w", 8, 16);
  const sc_op *mm = op_named("aten.mm.default");
  sc_value raw[2] = {sc_value_str("x"), sc_value_str("w")};
  sc_value *args = bind(g, mm, raw, 2);
  const char *names[1] = {"h"};
  int64_t hs[2] = {4, 32};
  sc_ttype decl = f32(2, hs);
  const sc_ttype *decls[1] = {&decl};
  GError *err = NULL;
  g_assert_false(sc_graph_add_node(g, "fc1", mm, args, names, 1, decls, NULL, NULL, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE);
  g_assert_nonnull(strstr(err->message,
                          "node 'fc1': result 'h' declared [4, 32] f32 but aten.mm.default "
                          "gives [4, 16] f32"));
  g_error_free(err);
  /* Nothing was added. */
  g_assert_cmpuint(sc_graph_n_nodes(g), ==, 0);
  g_assert_cmpuint(sc_graph_find_tensor(g, "h"), ==, SC_ID_NONE);
}

static void test_shape_rule_error(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 4, 8);
  add_input(g, "w", 6, 16);
  const sc_op *mm = op_named("aten.mm.default");
  sc_value raw[2] = {sc_value_str("x"), sc_value_str("w")};
  sc_value *args = bind(g, mm, raw, 2);
  const char *names[1] = {"h"};
  GError *err = NULL;
  g_assert_false(sc_graph_add_node(g, "bad", mm, args, names, 1, NULL, NULL, NULL, &err));
  g_assert_error(err, SC_OPS_ERROR, SC_OPS_ERROR_SHAPE);
  g_assert_true(g_str_has_prefix(err->message, "node 'bad': aten.mm.default") ||
                g_str_has_prefix(err->message, "node 'bad' (aten.mm.default): "));
  g_assert_nonnull(strstr(err->message, "[4, 8]"));
  g_assert_nonnull(strstr(err->message, "[6, 16]"));
  g_error_free(err);
}

static void test_duplicates(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 2, 2);
  int64_t s[2] = {2, 2};
  sc_ttype t = f32(2, s);
  GError *err = NULL;
  g_assert_false(sc_graph_add_input(g, "x", &t, NULL, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_DUPLICATE);
  g_assert_nonnull(strstr(err->message, "duplicate tensor 'x'"));
  g_clear_error(&err);

  g_assert_true(add_unary(g, "r", "x", "y", &err));
  g_assert_no_error(err);
  /* Node names and tensor names are separate namespaces. */
  g_assert_true(add_unary(g, "y", "y", "z", &err));
  g_assert_no_error(err);
  g_assert_false(add_unary(g, "r", "x", "w", &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_DUPLICATE);
  g_assert_nonnull(strstr(err->message, "duplicate node name 'r'"));
  g_clear_error(&err);
  g_assert_false(add_unary(g, "r2", "x", "y", &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_DUPLICATE);
  g_assert_nonnull(strstr(err->message, "duplicate tensor 'y'"));
  g_clear_error(&err);
  g_assert_cmpuint(sc_graph_n_nodes(g), ==, 2);
  g_assert_cmpuint(sc_graph_n_tensors(g), ==, 3);

  /* Two results of one node with the same name. */
  const char *names[2] = {"a", "a"};
  g_assert_false(sc_graph_declare_node(g, "sp", op_named("aten.split.Tensor"), names, 2, NULL,
                                       NULL, NULL, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_DUPLICATE);
  g_clear_error(&err);
}

static void test_undefined_argument(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 2, 2);
  const sc_op *op = op_named("aten.relu.default");
  sc_value *args = g_new0(sc_value, op->n_args);
  args[0] = sc_value_tensor(99);
  const char *names[1] = {"y"};
  GError *err = NULL;
  g_assert_false(sc_graph_add_node(g, "r", op, args, names, 1, NULL, NULL, NULL, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_UNDEFINED);
  g_assert_nonnull(strstr(err->message, "node 'r'"));
  g_clear_error(&err);
}

static void test_consumers(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 2, 3);
  const sc_op *add = op_named("aten.add.Tensor");
  GError *err = NULL;
  g_assert_true(add_unary(g, "r0", "x", "a", &err));
  sc_value raw[2] = {sc_value_str("x"), sc_value_str("x")};
  sc_value *args = bind(g, add, raw, 2);
  const char *n1[1] = {"b"};
  g_assert_true(sc_graph_add_node(g, "twice", add, args, n1, 1, NULL, NULL, NULL, &err));
  sc_value raw2[2] = {sc_value_str("a"), sc_value_str("b")};
  args = bind(g, add, raw2, 2);
  const char *n2[1] = {"c"};
  g_assert_true(sc_graph_add_node(g, "sum", add, args, n2, 1, NULL, NULL, NULL, &err));
  g_assert_no_error(err);
  sc_graph_add_output(g, sc_graph_find_tensor(g, "c"));
  sc_graph_add_output(g, sc_graph_find_tensor(g, "c"));
  g_assert_true(sc_graph_finish(g, &err));
  g_assert_no_error(err);
  const sc_node *twice = sc_graph_node(g, 1);
  g_assert_cmpuint(twice->n_inputs, ==, 1); /* x read twice, listed once */
  const sc_tensor *x = sc_graph_tensor(g, sc_graph_find_tensor(g, "x"));
  g_assert_cmpuint(x->n_consumers, ==, 2);
  g_assert_cmpuint(x->consumers[0], ==, 0);
  g_assert_cmpuint(x->consumers[1], ==, 1);
  const sc_tensor *a = sc_graph_tensor(g, sc_graph_find_tensor(g, "a"));
  g_assert_cmpuint(a->n_consumers, ==, 1);
  g_assert_cmpuint(a->consumers[0], ==, 2);
  g_assert_cmpuint(sc_graph_n_outputs(g), ==, 2);
}

static void test_topo_file_order(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "a", 2, 2);
  /* n0 = relu(t2), n1 = relu(a), n2 = relu(a), n3 = add(t1, t0) */
  sc_id n0 = declare_unary(g, "n0", "t0");
  sc_id n1 = declare_unary(g, "n1", "t1");
  sc_id n2 = declare_unary(g, "n2", "t2");
  const char *names[1] = {"t3"};
  sc_id n3;
  GError *err = NULL;
  const sc_op *add = op_named("aten.add.Tensor");
  g_assert_true(sc_graph_declare_node(g, "n3", add, names, 1, NULL, NULL, &n3, &err));
  set_unary_args(g, n0, "t2");
  set_unary_args(g, n1, "a");
  set_unary_args(g, n2, "a");
  sc_value raw[2] = {sc_value_str("t1"), sc_value_str("t0")};
  g_assert_true(sc_graph_set_node_args(g, n3, bind(g, add, raw, 2), &err));
  sc_graph_add_output(g, sc_graph_find_tensor(g, "t3"));
  g_assert_true(sc_graph_finish(g, &err));
  g_assert_no_error(err);
  sc_id want[4] = {1, 2, 0, 3};
  assert_order(g, want, 4);
  /* Types were inferred in that order. */
  g_autofree char *s = sc_shape_to_string(&sc_graph_tensor(g, sc_graph_find_tensor(g, "t3"))->type.shape);
  g_assert_cmpstr(s, ==, "[2, 2]");
}

static void test_topo_cycle(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "a", 2, 2);
  sc_id n0 = declare_unary(g, "head", "t0");
  sc_id n1 = declare_unary(g, "n1", "t1");
  sc_id n2 = declare_unary(g, "n2", "t2");
  sc_id n3 = declare_unary(g, "n3", "t3");
  sc_id n4 = declare_unary(g, "tail", "t4");
  set_unary_args(g, n0, "a");  /* head feeds the cycle, not on it */
  set_unary_args(g, n1, "t3"); /* n1 -> n2 -> n3 -> n1 */
  set_unary_args(g, n2, "t1");
  set_unary_args(g, n3, "t2");
  set_unary_args(g, n4, "t2"); /* downstream of the cycle */
  GError *err = NULL;
  g_assert_false(sc_graph_finish(g, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_CYCLE);
  g_assert_nonnull(strstr(err->message, "'n1' -> 'n2' -> 'n3' -> 'n1'"));
  g_assert_null(strstr(err->message, "head"));
  g_assert_null(strstr(err->message, "tail"));
  g_assert_cmpuint(sc_graph_error_node(g), ==, n1);
  g_error_free(err);
}

static void test_self_cycle(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  sc_id n0 = declare_unary(g, "loop", "t");
  set_unary_args(g, n0, "t");
  GError *err = NULL;
  g_assert_false(sc_graph_finish(g, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_CYCLE);
  g_assert_nonnull(strstr(err->message, "'loop' -> 'loop'"));
  g_error_free(err);
}

static void test_deferred_declared_mismatch(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 4, 8);
  add_input(g, "w", 8, 16);
  const sc_op *mm = op_named("aten.mm.default");
  sc_id first = declare_unary(g, "act", "g");
  const char *names[1] = {"h"};
  sc_tensor_decl d = {0};
  d.has_dtype = TRUE;
  d.dtype = SC_DTYPE_BF16; /* shape not given: only the dtype is checked */
  sc_id fc;
  GError *err = NULL;
  g_assert_true(sc_graph_declare_node(g, "fc1", mm, names, 1, &d, NULL, &fc, &err));
  set_unary_args(g, first, "h");
  sc_value raw[2] = {sc_value_str("x"), sc_value_str("w")};
  g_assert_true(sc_graph_set_node_args(g, fc, bind(g, mm, raw, 2), &err));
  g_assert_false(sc_graph_finish(g, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE);
  g_assert_nonnull(strstr(err->message, "declared [4, 16] bf16 but aten.mm.default gives [4, 16] f32"));
  g_assert_cmpuint(sc_graph_error_node(g), ==, fc);
  g_error_free(err);
}

static void test_null_result(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 2, 2);
  const char *names[1] = {NULL};
  sc_id n;
  GError *err = NULL;
  g_assert_true(sc_graph_declare_node(g, "r", op_named("aten.relu.default"), names, 1, NULL,
                                      NULL, &n, &err));
  const sc_op *op = op_named("aten.relu.default");
  sc_value raw[1] = {sc_value_str("x")};
  g_assert_false(sc_graph_set_node_args(g, n, bind(g, op, raw, 1), &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_UNDEFINED);
  g_assert_nonnull(strstr(err->message, "result 0 is null but is required"));
  g_error_free(err);
}

static void test_result_count(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 4, 2);
  const sc_op *split = op_named("aten.split.Tensor");
  GError *err = NULL;
  sc_value raw[2] = {sc_value_str("x"), sc_value_int(2)};
  const char *three[3] = {"a", "b", "c"};
  g_assert_false(sc_graph_add_node(g, "sp", split, bind(g, split, raw, 2), three, 3, NULL, NULL,
                                   NULL, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE);
  g_assert_nonnull(strstr(err->message, "gives 2 results but 3 are listed"));
  g_clear_error(&err);
  sc_value raw2[2] = {sc_value_str("x"), sc_value_int(2)};
  const char *two[2] = {"a", "b"};
  g_assert_true(sc_graph_add_node(g, "sp", split, bind(g, split, raw2, 2), two, 2, NULL, NULL,
                                  NULL, &err));
  g_assert_no_error(err);
  const sc_tensor *b = sc_graph_tensor(g, sc_graph_find_tensor(g, "b"));
  g_assert_cmpuint(b->result_index, ==, 1);
  g_autofree char *s = sc_shape_to_string(&b->type.shape);
  g_assert_cmpstr(s, ==, "[2, 2]");
}

static void test_numel_overflow(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  int64_t s[2] = {INT64_C(4294967296), INT64_C(4294967296)};
  sc_ttype t = f32(2, s);
  GError *err = NULL;
  g_assert_false(sc_graph_add_input(g, "big", &t, NULL, &err));
  g_assert_error(err, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE);
  g_assert_nonnull(strstr(err->message, "more elements than int64"));
  g_error_free(err);
  g_assert_false(sc_symtab_overflowed(st));
}

static void test_large_reverse_chain(void) {
  /* 50000 nodes declared in reverse data-flow order: node i reads the
   * result of node i + 1; the visiting order is the reverse of file order. */
  enum { N = 50000 };
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  add_input(g, "x", 2, 2);
  for (int i = 0; i < N; i++) {
    char node[32], out[32];
    g_snprintf(node, sizeof node, "n%d", i);
    g_snprintf(out, sizeof out, "t%d", i);
    declare_unary(g, node, out);
  }
  for (int i = 0; i < N; i++) {
    char in[32];
    if (i == N - 1)
      g_snprintf(in, sizeof in, "x");
    else
      g_snprintf(in, sizeof in, "t%d", i + 1);
    set_unary_args(g, (sc_id)i, in);
  }
  sc_graph_add_output(g, sc_graph_find_tensor(g, "t0"));
  GError *err = NULL;
  gint64 t0 = g_get_monotonic_time();
  g_assert_true(sc_graph_finish(g, &err));
  g_assert_no_error(err);
  gint64 dt = g_get_monotonic_time() - t0;
  g_test_message("finish of %d nodes: %" G_GINT64_FORMAT " us", N, dt);
  uint32_t n;
  const sc_id *order = sc_graph_topo_order(g, &n);
  g_assert_cmpuint(n, ==, N);
  for (uint32_t i = 0; i < n; i++)
    g_assert_cmpuint(order[i], ==, N - 1 - i);
}

static void test_symbolic_shapes(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  GError *err = NULL;
  g_assert_true(sc_symtab_declare(st, "S", TRUE, 1, FALSE, 0, &err));
  g_autoptr(sc_graph) g = sc_graph_new(st);
  sc_ttype t;
  t.dtype = SC_DTYPE_F32;
  t.shape.rank = 2;
  g_assert_true(sc_dim_parse(st, "S", &t.shape.dims[0], &err));
  t.shape.dims[1] = sc_dim_const(8);
  g_assert_true(sc_graph_add_input(g, "x", &t, NULL, &err));
  int64_t ws[2] = {8, 3};
  sc_ttype w = f32(2, ws);
  g_assert_true(sc_graph_add_input(g, "w", &w, NULL, &err));
  const sc_op *mm = op_named("aten.mm.default");
  sc_value raw[2] = {sc_value_str("x"), sc_value_str("w")};
  const char *names[1] = {"h"};
  sc_ttype decl = t;
  decl.shape.dims[1] = sc_dim_const(3);
  const sc_ttype *decls[1] = {&decl};
  g_assert_true(sc_graph_add_node(g, "fc", mm, bind(g, mm, raw, 2), names, 1, decls, NULL, NULL,
                                  &err));
  g_assert_no_error(err);
  g_autofree char *s = sc_shape_to_string(&sc_graph_tensor(g, 2)->type.shape);
  g_assert_cmpstr(s, ==, "[S, 3]");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  sc_ops_init();
  g_test_add_func("/graph/build/basic", test_build_basic);
  g_test_add_func("/graph/build/declared-mismatch", test_declared_mismatch);
  g_test_add_func("/graph/build/shape-rule-error", test_shape_rule_error);
  g_test_add_func("/graph/build/duplicates", test_duplicates);
  g_test_add_func("/graph/build/undefined-argument", test_undefined_argument);
  g_test_add_func("/graph/build/null-result", test_null_result);
  g_test_add_func("/graph/build/result-count", test_result_count);
  g_test_add_func("/graph/build/numel-overflow", test_numel_overflow);
  g_test_add_func("/graph/build/symbolic", test_symbolic_shapes);
  g_test_add_func("/graph/consumers", test_consumers);
  g_test_add_func("/graph/topo/file-order", test_topo_file_order);
  g_test_add_func("/graph/topo/cycle", test_topo_cycle);
  g_test_add_func("/graph/topo/self-cycle", test_self_cycle);
  g_test_add_func("/graph/topo/large-reverse-chain", test_large_reverse_chain);
  g_test_add_func("/graph/declare/deferred-mismatch", test_deferred_declared_mismatch);
  return g_test_run();
}
