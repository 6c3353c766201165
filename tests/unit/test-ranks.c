/* test-ranks.c — per-rank implementation graphs in the bundle loader
 * (bundle.c, ranks.c): stitching of each collective kind into comm.*
 * nodes, one-member groups, wait_tensor chains, vllm.all_reduce, group
 * mismatch errors with their messages and JSON paths, rank symbols
 * ("u0" -> "rk.u0"), spec groups, inputs_behind_assumptions, warnings for
 * unknown top-level fields, the Tensor->Scalar overload, unread null
 * results, and comm.send/comm.recv pairs stitched into comm.send_recv (their
 * errors are pinned by tests/bundles/reject/ranks-p2p-*).
 *
 * Bundles are written with single quotes (q() turns them into JSON's
 * double quotes); the spec is a placeholder unless a test is about it. */
#include "shardcheck/bundle.h"

#include <string.h>

/* JSON from single-quoted text. */
static char *q(const char *text) {
  char *s = g_strdup(text);
  for (char *p = s; *p; p++)
    if (*p == '\'')
      *p = '"';
  return s;
}

/* A bundle: the placeholder spec (input s [4, 8], output relu(s)) unless
 * SPEC is given, impl {"ranks": [RANKS], "groups": {GROUPS}}, input s
 * mapped to r0.x, EXTRA top-level fields (", ..." or ""). */
static char *bundle(const char *spec, const char *ranks, const char *groups, const char *extra) {
  static const char def_spec[] =
      "{'inputs': [{'name': 's', 'shape': [4, 8]}], 'nodes': [{'name': 'r', 'op': "
      "'aten.relu.default', 'args': ['s'], 'outputs': [{'name': 'y'}]}], 'outputs': ['y']}";
  g_autofree char *t = g_strdup_printf(
      "{'format': 'shardcheck-bundle/1', 'spec': %s, 'impl': {'ranks': [%s]%s%s%s}, "
      "'input_relation': {'s': ['r0.x']}%s}",
      spec ? spec : def_spec, ranks, groups ? ", 'groups': {" : "", groups ? groups : "",
      groups ? "}" : "", extra ? extra : "");
  return q(t);
}

/* One rank's graph: input x [4, 8] (and more INPUTS), NODES, OUTPUTS. */
static char *rank(const char *inputs, const char *nodes, const char *outputs) {
  return g_strdup_printf("{'inputs': [{'name': 'x', 'shape': [4, 8]}%s], 'nodes': [%s], "
                         "'outputs': [%s]}",
                         inputs ? inputs : "", nodes, outputs);
}

static sc_bundle *load_ok(const char *json) {
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(json, "t.json", &err);
  g_assert_no_error(err);
  g_assert_nonnull(b);
  return b;
}

/* Loading fails with exactly MESSAGE (after "t.json: "). */
static void load_fails(const char *json, const char *message) {
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(json, "t.json", &err);
  g_assert_null(b);
  g_assert_error(err, SC_BUNDLE_ERROR, SC_BUNDLE_ERROR_INVALID);
  g_autofree char *want = g_strdup_printf("t.json: %s", message);
  g_assert_cmpstr(err->message, ==, want);
  g_error_free(err);
}

/* Loading fails with a message holding every phrase. */
static void load_fails_with(const char *json, const char *const *phrases) {
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(json, "t.json", &err);
  g_assert_null(b);
  g_assert_error(err, SC_BUNDLE_ERROR, SC_BUNDLE_ERROR_INVALID);
  for (const char *const *p = phrases; *p; p++)
    if (strstr(err->message, *p) == NULL)
      g_error("message '%s' lacks '%s'", err->message, *p);
  g_error_free(err);
}

static const sc_node *node_named(sc_graph *g, const char *name) {
  sc_id id = sc_graph_find_node(g, name);
  if (id == SC_ID_NONE)
    g_error("no node '%s'", name);
  return sc_graph_node(g, id);
}

static const sc_tensor *tensor_named(sc_graph *g, const char *name) {
  sc_id id = sc_graph_find_tensor(g, name);
  if (id == SC_ID_NONE)
    g_error("no tensor '%s'", name);
  return sc_graph_tensor(g, id);
}

static const sc_value *arg(const sc_node *n, const char *name) {
  int32_t i = sc_ops_arg_index(n->op, name);
  g_assert_cmpint(i, >=, 0);
  return &n->args[i];
}

static char *shape_of(sc_graph *g, const char *name) {
  return sc_shape_to_string(&tensor_named(g, name)->type.shape);
}

/* The names of the tensors in a Tensor[] argument, joined by ",". */
static char *list_names(sc_graph *g, const sc_value *v) {
  g_assert_cmpint(v->kind, ==, SC_VAL_TENSOR_LIST);
  GString *s = g_string_new(NULL);
  for (uint32_t i = 0; i < v->u.list.n; i++)
    g_string_append_printf(s, "%s%s", i ? "," : "", sc_graph_tensor(g, v->u.list.ids[i])->name);
  return g_string_free(s, FALSE);
}

static char *int_list(sc_graph *g, const sc_value *v) {
  return sc_value_to_string(v, sc_graph_symtab(g), NULL, NULL);
}

/* Two ranks, each: p = mm(x, w); c = COLL(p, ...); w = wait_tensor(c). */
static char *two_ranks(const char *call0, const char *call1, const char *out_shape) {
  char *r[2] = {NULL, NULL};
  const char *calls[2] = {call0, call1};
  for (int k = 0; k < 2; k++) {
    g_autofree char *nodes = g_strdup_printf(
        "{'name': 'mm', 'op': 'aten.mm.default', 'args': ['x', 'w'], 'outputs': [{'name': "
        "'p'}]}, %s, {'name': 'wait', 'op': '_c10d_functional.wait_tensor.default', 'args': "
        "['c'], 'outputs': [{'name': 'v'%s%s}]}",
        calls[k], out_shape ? ", 'shape': " : "", out_shape ? out_shape : "");
    r[k] = rank(", {'name': 'w', 'shape': [8, 8]}", nodes, "'v'");
  }
  char *both = g_strdup_printf("%s, %s", r[0], r[1]);
  g_free(r[0]);
  g_free(r[1]);
  return both;
}

static char *call(const char *op, const char *args) {
  return g_strdup_printf("{'name': 'c', 'op': '_c10d_functional.%s.default', 'args': ['p', %s], "
                         "'outputs': [{'name': 'c'}]}",
                         op, args);
}

/* ---- stitching ---- */

static void test_all_reduce(void) {
  g_autofree char *c = call("all_reduce", "'sum', '12'");
  g_autofree char *ranks = two_ranks(c, c, "[4, 8]");
  g_autofree char *json = bundle(NULL, ranks, "'12': [0, 1]", NULL);
  g_autoptr(sc_bundle) b = load_ok(json);
  g_assert_cmpuint(sc_bundle_n_ranks(b), ==, 2);
  sc_graph *impl = sc_bundle_impl(b);
  /* 2 x (mm, wait) + one comm node */
  g_assert_cmpuint(sc_graph_n_nodes(impl), ==, 5);
  const sc_node *n = node_named(impl, "comm:12:0");
  g_assert_cmpstr(n->op->qualname, ==, "comm.all_reduce.default");
  g_autofree char *ins = list_names(impl, arg(n, "inputs"));
  g_assert_cmpstr(ins, ==, "r0.p,r1.p");
  g_assert_cmpstr(arg(n, "op")->u.s, ==, "sum");
  g_autofree char *rk = int_list(impl, arg(n, "ranks"));
  g_assert_cmpstr(rk, ==, "[0, 1]");
  g_assert_cmpuint(n->n_results, ==, 2);
  g_assert_cmpstr(sc_graph_tensor(impl, n->results[0])->name, ==, "r0.c");
  g_assert_cmpstr(sc_graph_tensor(impl, n->results[1])->name, ==, "r1.c");
  g_assert_cmpint(sc_graph_tensor(impl, n->results[1])->rank, ==, 1);
  g_assert_cmpint(tensor_named(impl, "r0.x")->rank, ==, 0);
  g_assert_cmpint(tensor_named(impl, "r1.p")->rank, ==, 1);
  /* the per-rank collective nodes are gone; wait_tensor stays */
  g_assert_cmpuint(sc_graph_find_node(impl, "r0.c"), ==, SC_ID_NONE);
  const sc_node *w = node_named(impl, "r1.wait");
  g_assert_cmpstr(w->op->qualname, ==, "_c10d_functional.wait_tensor.default");
  g_assert_cmpuint(w->inputs[0], ==, n->results[1]);
  g_assert_cmpuint(sc_graph_n_outputs(impl), ==, 2);
  g_assert_cmpstr(sc_graph_tensor(impl, sc_graph_output(impl, 1))->name, ==, "r1.v");
  g_assert_cmpuint(sc_graph_n_inputs(impl), ==, 4);
}

static void test_all_gather_reduce_scatter(void) {
  g_autofree char *ag = call("all_gather_into_tensor", "2, '12'");
  g_autofree char *r1 = two_ranks(ag, ag, "[8, 8]");
  g_autofree char *j1 = bundle(NULL, r1, "'12': [0, 1]", NULL);
  g_autoptr(sc_bundle) b1 = load_ok(j1);
  sc_graph *g1 = sc_bundle_impl(b1);
  const sc_node *n = node_named(g1, "comm:12:0");
  g_assert_cmpstr(n->op->qualname, ==, "comm.all_gather.default");
  g_assert_true(sc_dim_identical(arg(n, "dim")->u.i, sc_dim_const(0)));
  g_autofree char *s1 = shape_of(g1, "r1.c");
  g_assert_cmpstr(s1, ==, "[8, 8]");

  g_autofree char *rs = call("reduce_scatter_tensor", "'sum', 2, '12'");
  g_autofree char *r2 = two_ranks(rs, rs, "[2, 8]");
  g_autofree char *j2 = bundle(NULL, r2, NULL, NULL); /* no groups: every rank */
  g_autoptr(sc_bundle) b2 = load_ok(j2);
  sc_graph *g2 = sc_bundle_impl(b2);
  n = node_named(g2, "comm:12:0");
  g_assert_cmpstr(n->op->qualname, ==, "comm.reduce_scatter.default");
  g_assert_cmpstr(arg(n, "op")->u.s, ==, "sum");
  g_autofree char *s2 = shape_of(g2, "r0.v");
  g_assert_cmpstr(s2, ==, "[2, 8]");
}

static void test_all_to_all(void) {
  g_autofree char *a = call("all_to_all_single", "[2, 2], [2, 2], '12'");
  g_autofree char *r = two_ranks(a, a, "[4, 8]");
  g_autofree char *j = bundle(NULL, r, "'12': [0, 1]", NULL);
  g_autoptr(sc_bundle) b = load_ok(j);
  const sc_node *n = node_named(sc_bundle_impl(b), "comm:12:0");
  g_assert_cmpstr(n->op->qualname, ==, "comm.all_to_all.default");
  g_assert_true(sc_dim_identical(arg(n, "split_dim")->u.i, sc_dim_const(0)));
  g_assert_true(sc_dim_identical(arg(n, "concat_dim")->u.i, sc_dim_const(0)));
  /* None splits are equal splits too */
  g_autofree char *a2 = call("all_to_all_single", "null, null, '12'");
  g_autofree char *r2 = two_ranks(a2, a2, "[4, 8]");
  g_autofree char *j2 = bundle(NULL, r2, NULL, NULL);
  g_autoptr(sc_bundle) b2 = load_ok(j2);
  g_assert_cmpstr(node_named(sc_bundle_impl(b2), "comm:12:0")->op->qualname, ==,
                  "comm.all_to_all.default");
  /* unequal splits: an input error naming them */
  g_autofree char *a3 = call("all_to_all_single", "[1, 3], [1, 3], '12'");
  g_autofree char *r3 = two_ranks(a3, a3, "[4, 8]");
  g_autofree char *j3 = bundle(NULL, r3, NULL, NULL);
  load_fails(j3, "impl.ranks[0].nodes[1]: all_to_all_single on group '12' with unequal "
                 "input_split_sizes [1, 3] is not supported yet (only equal splits stitch "
                 "into comm.all_to_all)");
}

static void test_broadcast(void) {
  /* three ranks; group 'g' = ranks 1 and 2; src is global rank 2 -> position 1 */
  g_autofree char *c = call("broadcast", "2, 'g'");
  g_autofree char *nodes = g_strdup_printf(
      "{'name': 'mm', 'op': 'aten.mm.default', 'args': ['x', 'w'], 'outputs': [{'name': "
      "'p'}]}, %s, {'name': 'wait', 'op': '_c10d_functional.wait_tensor.default', 'args': "
      "['c'], 'outputs': [{'name': 'v'}]}",
      c);
  g_autofree char *r12 = rank(", {'name': 'w', 'shape': [8, 8]}", nodes, "'v'");
  g_autofree char *r0 = rank(NULL, "", "'x'");
  g_autofree char *ranks = g_strdup_printf("%s, %s, %s", r0, r12, r12);
  g_autofree char *j = bundle(NULL, ranks, "'g': [2, 1]", NULL);
  g_autoptr(sc_bundle) b = load_ok(j);
  sc_graph *g = sc_bundle_impl(b);
  g_assert_cmpuint(sc_bundle_n_ranks(b), ==, 3);
  const sc_node *n = node_named(g, "comm:g:0");
  g_assert_cmpstr(n->op->qualname, ==, "comm.broadcast.default");
  g_assert_true(sc_dim_identical(arg(n, "src")->u.i, sc_dim_const(1)));
  g_autofree char *rk = int_list(g, arg(n, "ranks"));
  g_assert_cmpstr(rk, ==, "[1, 2]");
  g_autofree char *ins = list_names(g, arg(n, "inputs"));
  g_assert_cmpstr(ins, ==, "r1.p,r2.p");
  /* src outside the group */
  g_autofree char *c2 = call("broadcast", "0, 'g'");
  g_autofree char *n2 = g_strdup_printf("{'name': 'mm', 'op': 'aten.mm.default', 'args': ['x', "
                                        "'w'], 'outputs': [{'name': 'p'}]}, %s",
                                        c2);
  g_autofree char *r2 = rank(", {'name': 'w', 'shape': [8, 8]}", n2, "'c'");
  g_autofree char *ranks2 = g_strdup_printf("%s, %s, %s", r0, r2, r2);
  g_autofree char *j2 = bundle(NULL, ranks2, "'g': [1, 2]", NULL);
  load_fails(j2, "impl.ranks[1].nodes[1]: broadcast on group 'g' from src 0, which is not a "
                 "member of the group (ranks 1, 2; src is a global rank)");
}

static void test_one_member_groups(void) {
  /* rank 0 reduces on '1' = [0], rank 1 on '3' = [1]: identities, kept */
  g_autofree char *c0 = call("all_reduce", "'sum', '1'");
  g_autofree char *c1 = call("all_reduce", "'sum', '3'");
  g_autofree char *r = two_ranks(c0, c1, "[4, 8]");
  g_autofree char *j = bundle(NULL, r, "'1': [0], '3': [1]", NULL);
  g_autoptr(sc_bundle) b = load_ok(j);
  sc_graph *g = sc_bundle_impl(b);
  const sc_node *n = node_named(g, "r1.c");
  g_assert_cmpstr(n->op->qualname, ==, "_c10d_functional.all_reduce.default");
  g_assert_cmpstr(sc_graph_tensor(g, n->inputs[0])->name, ==, "r1.p");
  g_assert_cmpuint(sc_graph_n_nodes(g), ==, 6);
  /* a one-member all_gather needs group_size 1 */
  g_autofree char *ag = call("all_gather_into_tensor", "1, '1'");
  g_autofree char *agb = call("all_gather_into_tensor", "2, '3'");
  g_autofree char *r2 = two_ranks(ag, agb, NULL);
  g_autofree char *j2 = bundle(NULL, r2, "'1': [0], '3': [1]", NULL);
  load_fails(j2, "impl.ranks[1].nodes[1]: all_gather_into_tensor on group '3' has group_size "
                 "2 but the group has 1 member (ranks 1)");
  /* one rank, no groups: every group has the one rank */
  g_autofree char *rs = call("reduce_scatter_tensor", "'sum', 1, 'tp'");
  g_autofree char *nodes = g_strdup_printf("{'name': 'mm', 'op': 'aten.mm.default', 'args': "
                                           "['x', 'w'], 'outputs': [{'name': 'p'}]}, %s",
                                           rs);
  g_autofree char *one = rank(", {'name': 'w', 'shape': [8, 8]}", nodes, "'c'");
  g_autofree char *j3 = bundle(NULL, one, NULL, NULL);
  g_autoptr(sc_bundle) b3 = load_ok(j3);
  g_assert_cmpuint(sc_bundle_n_ranks(b3), ==, 1);
  g_autofree char *s3 = shape_of(sc_bundle_impl(b3), "r0.c");
  g_assert_cmpstr(s3, ==, "[4, 8]");
}

static void test_wait_chain_and_dead(void) {
  /* wait(wait(c)), and a dead all_reduce before it: both calls pair up */
  const char *nodes =
      "{'name': 'mm', 'op': 'aten.mm.default', 'args': ['x', 'w'], 'outputs': [{'name': 'p'}]},"
      "{'name': 'dead', 'op': '_c10d_functional.all_reduce.default', 'args': ['x', 'max', "
      "'12'], 'outputs': [{'name': 'dead'}]},"
      "{'name': 'c', 'op': '_c10d_functional.all_reduce.default', 'args': ['p', 'sum', '12'], "
      "'outputs': [{'name': 'c'}]},"
      "{'name': 'w1', 'op': '_c10d_functional.wait_tensor.default', 'args': ['c'], 'outputs': "
      "[{'name': 'v1'}]},"
      "{'name': 'w2', 'op': '_c10d_functional.wait_tensor.default', 'args': ['v1'], 'outputs': "
      "[{'name': 'v2'}]}";
  g_autofree char *r = rank(", {'name': 'w', 'shape': [8, 8]}", nodes, "'v2'");
  g_autofree char *ranks = g_strdup_printf("%s, %s", r, r);
  g_autofree char *j = bundle(NULL, ranks, "'12': [0, 1]", NULL);
  g_autoptr(sc_bundle) b = load_ok(j);
  sc_graph *g = sc_bundle_impl(b);
  const sc_node *d = node_named(g, "comm:12:0");
  g_assert_cmpstr(arg(d, "op")->u.s, ==, "max");
  g_assert_cmpuint(sc_graph_tensor(g, d->results[0])->n_consumers, ==, 0);
  const sc_node *c = node_named(g, "comm:12:1");
  const sc_node *w2 = node_named(g, "r1.w2");
  g_assert_cmpstr(sc_graph_tensor(g, w2->inputs[0])->name, ==, "r1.v1");
  g_assert_cmpuint(node_named(g, "r1.w1")->inputs[0], ==, c->results[1]);
  /* the dead call is on one rank only: call #0 differs */
  const char *nodes1 =
      "{'name': 'mm', 'op': 'aten.mm.default', 'args': ['x', 'w'], 'outputs': [{'name': 'p'}]},"
      "{'name': 'c', 'op': '_c10d_functional.all_reduce.default', 'args': ['p', 'sum', '12'], "
      "'outputs': [{'name': 'c'}]}";
  g_autofree char *r1 = rank(", {'name': 'w', 'shape': [8, 8]}", nodes1, "'c'");
  g_autofree char *ranks2 = g_strdup_printf("%s, %s", r, r1);
  g_autofree char *j2 = bundle(NULL, ranks2, "'12': [0, 1]", NULL);
  load_fails(j2, "impl.ranks[1].nodes[1]: collective #0 on group '12' (all_reduce) reduces "
                 "with 'sum' but rank 0's with 'max'");
}

static void test_vllm(void) {
  const char *nodes = "{'name': 'mm', 'op': 'aten.mm.default', 'args': ['x', 'w'], 'outputs': "
                      "[{'name': 'p'}]}, {'name': 'ar', 'op': 'vllm.all_reduce.default', "
                      "'args': ['p', 'tp:0'], 'outputs': [{'name': 'ar', 'shape': [4, 8]}]}";
  g_autofree char *r = rank(", {'name': 'w', 'shape': [8, 8]}", nodes, "'ar'");
  g_autofree char *ranks = g_strdup_printf("%s, %s", r, r);
  g_autofree char *j = bundle(NULL, ranks, "'tp:0': [0, 1]", NULL);
  g_autoptr(sc_bundle) b = load_ok(j);
  sc_graph *g = sc_bundle_impl(b);
  const sc_node *n = node_named(g, "comm:tp:0:0");
  g_assert_cmpstr(n->op->qualname, ==, "comm.all_reduce.default");
  g_assert_cmpstr(arg(n, "op")->u.s, ==, "sum");
  g_assert_cmpstr(sc_graph_tensor(g, sc_graph_output(g, 1))->name, ==, "r1.ar");
  /* a one-member vllm all-reduce stays, read as _c10d_functional.all_reduce */
  g_autofree char *j1 = bundle(NULL, r, NULL, NULL);
  g_autoptr(sc_bundle) b1 = load_ok(j1);
  const sc_node *n1 = node_named(sc_bundle_impl(b1), "r0.ar");
  g_assert_cmpstr(n1->op->qualname, ==, "_c10d_functional.all_reduce.default");
  g_assert_cmpstr(arg(n1, "reduce_op")->u.s, ==, "sum");
  g_assert_cmpstr(arg(n1, "group_name")->u.s, ==, "tp:0");
}

/* ---- mismatches ---- */

/* Point-to-point: the j-th send a->b with tag t pairs with the j-th recv on b
 * from a with tag t; each pair is one comm.send_recv declared at the recv,
 * tags keep two streams apart even when they interleave. */
static void test_send_recv(void) {
  g_autofree char *r0 = rank(NULL,
                             "{'name': 'h', 'op': 'aten.relu.default', 'args': ['x'], "
                             "'outputs': [{'name': 'a'}]}, "
                             "{'name': 's0', 'op': 'comm.send', 'args': ['a', 1], 'kwargs': "
                             "{'tag': 5}, 'outputs': []}, "
                             "{'name': 's1', 'op': 'comm.send', 'args': ['x', 1], 'outputs': []}",
                             "'a'");
  g_autofree char *r1 = rank(NULL,
                             "{'name': 'v0', 'op': 'comm.recv', 'args': [0], 'outputs': "
                             "[{'name': 'got_x', 'shape': [4, 8]}]}, "
                             "{'name': 'v1', 'op': 'comm.recv', 'args': [0, 5], 'outputs': "
                             "[{'name': 'got_a', 'shape': [4, 8], 'dtype': 'f32'}]}, "
                             "{'name': 'add', 'op': 'aten.add.Tensor', 'args': ['got_a', 'got_x'], "
                             "'outputs': [{'name': 'y'}]}",
                             "'y'");
  g_autofree char *ranks = g_strdup_printf("%s, %s", r0, r1);
  g_autofree char *json = bundle(NULL, ranks, NULL, NULL);
  g_autoptr(sc_bundle) b = load_ok(json);
  sc_graph *impl = sc_bundle_impl(b);
  /* relu, add and two moves; the sends leave no node of their own */
  g_assert_cmpuint(sc_graph_n_nodes(impl), ==, 4);
  const sc_node *m = node_named(impl, "p2p:0>1:5:0");
  g_assert_cmpstr(m->op->qualname, ==, "comm.send_recv.default");
  g_autofree char *ins = list_names(impl, arg(m, "inputs"));
  g_assert_cmpstr(ins, ==, "r0.a");
  g_assert_cmpint(arg(m, "src")->u.i.value, ==, 0);
  g_assert_cmpint(arg(m, "dst")->u.i.value, ==, 1);
  g_assert_cmpstr(sc_graph_tensor(impl, m->results[0])->name, ==, "r1.got_a");
  g_assert_cmpint(sc_graph_tensor(impl, m->results[0])->rank, ==, 1);
  const sc_node *m0 = node_named(impl, "p2p:0>1:0:0");
  g_autofree char *ins0 = list_names(impl, arg(m0, "inputs"));
  g_assert_cmpstr(ins0, ==, "r0.x");
  g_assert_cmpstr(sc_graph_tensor(impl, m0->results[0])->name, ==, "r1.got_x");
  g_assert_cmpuint(sc_graph_find_node(impl, "r0.s0"), ==, SC_ID_NONE);
  g_assert_cmpuint(sc_graph_find_node(impl, "r1.v0"), ==, SC_ID_NONE);
}

static void test_mismatch_messages(void) {
  g_autofree char *c0 = call("all_reduce", "'sum', '12'");
  g_autofree char *c1 = call("all_gather_into_tensor", "2, '12'");
  const char *base_nodes = "{'name': 'mm', 'op': 'aten.mm.default', 'args': ['x', 'w'], "
                           "'outputs': [{'name': 'p'}]}, ";
  g_autofree char *n0 = g_strconcat(base_nodes, c0, NULL);
  g_autofree char *n1 = g_strconcat(base_nodes, c1, NULL);
  g_autofree char *rk0 = rank(", {'name': 'w', 'shape': [8, 8]}", n0, "'c'");
  g_autofree char *rk1 = rank(", {'name': 'w', 'shape': [8, 8]}", n1, "'c'");
  g_autofree char *ranks = g_strdup_printf("%s, %s", rk0, rk1);
  g_autofree char *j = bundle(NULL, ranks, "'12': [0, 1]", NULL);
  load_fails(j, "impl.ranks[1].nodes[1]: collective #0 on group '12' is all_gather_into_tensor "
                "but rank 0's is all_reduce");

  /* a missing call: rank 1 makes none */
  g_autofree char *rk_none = rank(", {'name': 'w', 'shape': [8, 8]}",
                                  "{'name': 'mm', 'op': 'aten.mm.default', 'args': ['x', 'w'], "
                                  "'outputs': [{'name': 'p'}]}",
                                  "'p'");
  g_autofree char *ranks2 = g_strdup_printf("%s, %s", rk0, rk_none);
  g_autofree char *j2 = bundle(NULL, ranks2, "'12': [0, 1]", NULL);
  load_fails(j2, "impl.ranks[0].nodes[1]: collective #0 on group '12' (all_reduce) has no "
                 "partner on rank 1, which makes only 0 collective calls on that group (the "
                 "program would hang)");

  /* another size: rank 1 reduces [4, 4] */
  g_autofree char *rk_small = rank(", {'name': 'w', 'shape': [8, 4]}", n0, "'c'");
  g_autofree char *ranks3 = g_strdup_printf("%s, %s", rk0, rk_small);
  g_autofree char *j3 = bundle(NULL, ranks3, "'12': [0, 1]", NULL);
  load_fails(j3, "impl.ranks[1].nodes[1]: collective #0 on group '12' (all_reduce) sends f32 "
                 "[4, 4] but rank 0's sends f32 [4, 8]");

  /* another dtype */
  g_autofree char *rk_half = rank(", {'name': 'w', 'shape': [8, 8], 'dtype': 'f16'}",
                                  "{'name': 'cv', 'op': 'aten._to_copy.default', 'args': ['x'], "
                                  "'kwargs': {'dtype': 'f16'}, 'outputs': [{'name': 'xh'}]},"
                                  "{'name': 'mm', 'op': 'aten.mm.default', 'args': ['xh', 'w'], "
                                  "'outputs': [{'name': 'p'}]}, "
                                  "{'name': 'c', 'op': '_c10d_functional.all_reduce.default', "
                                  "'args': ['p', 'sum', '12'], 'outputs': [{'name': 'c'}]}",
                                  "'c'");
  g_autofree char *ranks4 = g_strdup_printf("%s, %s", rk0, rk_half);
  g_autofree char *j4 = bundle(NULL, ranks4, "'12': [0, 1]", NULL);
  load_fails(j4, "impl.ranks[1].nodes[2]: collective #0 on group '12' (all_reduce) sends f16 "
                 "[4, 8] but rank 0's sends f32 [4, 8]");

  /* a call on a group the rank is not in */
  g_autofree char *c2 = call("all_reduce", "'sum', '1'");
  g_autofree char *n2 = g_strconcat(base_nodes, c2, NULL);
  g_autofree char *rk2 = rank(", {'name': 'w', 'shape': [8, 8]}", n2, "'c'");
  g_autofree char *ranks5 = g_strdup_printf("%s, %s", rk0, rk2);
  g_autofree char *j5 = bundle(NULL, ranks5, "'12': [0, 1], '1': [0]", NULL);
  load_fails(j5, "impl.ranks[1].nodes[1]: all_reduce on group '1', but rank 1 is not a member "
                 "of that group (ranks 0)");

  /* group_size that is not the group's */
  g_autofree char *c3 = call("all_gather_into_tensor", "4, '12'");
  g_autofree char *n3 = g_strconcat(base_nodes, c3, NULL);
  g_autofree char *rk3 = rank(", {'name': 'w', 'shape': [8, 8]}", n3, "'c'");
  g_autofree char *ranks6 = g_strdup_printf("%s, %s", rk3, rk3);
  g_autofree char *j6 = bundle(NULL, ranks6, "'12': [0, 1]", NULL);
  load_fails(j6, "impl.ranks[0].nodes[1]: all_gather_into_tensor on group '12' has group_size "
                 "4 but the group has 2 members (ranks 0, 1)");

  /* a reduce op comm.* cannot express */
  g_autofree char *c4 = call("all_reduce", "'product', '12'");
  g_autofree char *n4 = g_strconcat(base_nodes, c4, NULL);
  g_autofree char *rk4 = rank(", {'name': 'w', 'shape': [8, 8]}", n4, "'c'");
  g_autofree char *ranks7 = g_strdup_printf("%s, %s", rk4, rk4);
  g_autofree char *j7 = bundle(NULL, ranks7, NULL, NULL);
  load_fails(j7, "impl.ranks[0].nodes[1]: all_reduce on group '12' reduces with 'product', "
                 "which cannot be stitched yet (comm.* collectives reduce with sum, max, min or "
                 "avg)");
}

static void test_deadlock(void) {
  /* rank 0 calls group A then B on the result; rank 1 B then A */
  const char *n0 = "{'name': 'a', 'op': '_c10d_functional.all_reduce.default', 'args': ['x', "
                   "'sum', 'A'], 'outputs': [{'name': 'a'}]}, {'name': 'b', 'op': "
                   "'_c10d_functional.all_reduce.default', 'args': ['a', 'sum', 'B'], "
                   "'outputs': [{'name': 'b'}]}";
  const char *n1 = "{'name': 'b', 'op': '_c10d_functional.all_reduce.default', 'args': ['x', "
                   "'sum', 'B'], 'outputs': [{'name': 'b'}]}, {'name': 'a', 'op': "
                   "'_c10d_functional.all_reduce.default', 'args': ['b', 'sum', 'A'], "
                   "'outputs': [{'name': 'a'}]}";
  g_autofree char *r0 = rank(NULL, n0, "'b'");
  g_autofree char *r1 = rank(NULL, n1, "'a'");
  g_autofree char *ranks = g_strdup_printf("%s, %s", r0, r1);
  g_autofree char *j = bundle(NULL, ranks, NULL, NULL);
  const char *const p[] = {"t.json: impl.ranks: the ranks' collective calls cannot be ordered "
                           "(the program would deadlock)",
                           "comm:A:0", "comm:B:0", NULL};
  load_fails_with(j, p);
}

static void test_groups_invalid(void) {
  g_autofree char *r = rank(NULL, "", "'x'");
  g_autofree char *ranks = g_strdup_printf("%s, %s", r, r);
  g_autofree char *j1 = bundle(NULL, ranks, "'12': [0, 2]", NULL);
  load_fails(j1, "impl.groups.12: rank 2 of group '12' does not exist (there are 2 ranks)");
  g_autofree char *j2 = bundle(NULL, ranks, "'12': [1, 1]", NULL);
  load_fails(j2, "impl.groups.12: rank 1 is listed twice in group '12'");
  g_autofree char *j3 = bundle(NULL, ranks, "'12': []", NULL);
  load_fails(j3, "impl.groups.12: group '12' has no member");
  g_autofree char *j4 = bundle(NULL, ranks, "'12': ['0']", NULL);
  load_fails(j4, "impl.groups.12[0]: expected a rank (an integer), found string \"0\"");
  g_autofree char *j5 = bundle(NULL, "", NULL, NULL);
  load_fails(j5, "impl.ranks: expected at least one rank graph");
  g_autofree char *t6 = q("{'format': 'shardcheck-bundle/1', 'spec': {'inputs': [{'name': 's', "
                          "'shape': [4, 8]}], 'nodes': [], 'outputs': ['s']}, 'impl': "
                          "{'ranks': [{'inputs': [], 'nodes': [], 'outputs': []}], 'typo': 1}, "
                          "'input_relation': {}}");
  load_fails(t6, "impl.typo: unknown field 'typo' (expected one of: ranks, groups)");
  /* a tensor whose "rank" contradicts its graph */
  g_autofree char *r7 = g_strdup_printf("{'inputs': [{'name': 'x', 'shape': [4, 8], 'rank': 1}], "
                                        "'nodes': [], 'outputs': ['x']}");
  g_autofree char *j7 = bundle(NULL, r7, NULL, NULL);
  load_fails(j7, "impl.ranks[0].inputs[0].rank: rank 1 in the graph of rank 0");
  /* names are rank-local: r1 cannot read r0's tensor */
  g_autofree char *r8 = rank(NULL, "{'name': 'n', 'op': 'aten.relu.default', 'args': ['z'], "
                                   "'outputs': [{'name': 'y'}]}",
                             "'y'");
  g_autofree char *ranks8 = g_strdup_printf("%s, %s", r, r8);
  g_autofree char *j8 = bundle(NULL, ranks8, NULL, NULL);
  load_fails(j8, "impl.ranks[1].nodes[0].args[0]: undefined tensor 'z' (no input or node result "
                 "of impl.ranks[1] has that name)");
}

/* ---- symbols ---- */

static void test_rank_symbols(void) {
  /* each rank declares u0 with its own bounds; the spec has its own u0 */
  const char *spec = "{'symbols': {'u0': {'min': 0, 'max': 64}}, 'assume': ['u0 >= 1'], "
                     "'inputs': [{'name': 's', 'shape': [4, 8]}], 'nodes': [{'name': 'r', 'op': "
                     "'aten.relu.default', 'args': ['s'], 'outputs': [{'name': 'y'}]}, {'name': "
                     "'f', 'op': 'aten.full.default', 'args': [['u0', 2], 0], 'kwargs': "
                     "{'dtype': 'i64'}, 'outputs': [{'name': 'e', 'shape': ['u0', 2]}]}], "
                     "'outputs': ['y', 'e']}";
  GString *ranks = g_string_new(NULL);
  for (int k = 0; k < 2; k++)
    g_string_append_printf(
        ranks,
        "%s{'symbols': {'u0': {'min': 0, 'max': %d}}, 'assume': ['u0 %% 2 == 0'], "
        "'inputs': [{'name': 'x', 'shape': [4, 8]}, {'name': 'e', 'shape': ['u0', 2], "
        "'dtype': 'i64', 'values': {'min': 0, 'max': 'u0'}}], "
        "'nodes': [{'name': 'v', 'op': 'aten.view.default', 'args': ['e', ['2*u0']], "
        "'outputs': [{'name': 'f', 'shape': ['2*u0']}]}, "
        "{'name': 'h', 'op': 'aten.slice.Tensor', 'args': ['f', 0, 0, 'u0'], "
        "'outputs': [{'name': 'g', 'shape': ['u0']}]}], 'outputs': ['g', 'e']}",
        k ? ", " : "", 100 * (k + 1));
  g_autofree char *rs = g_string_free(ranks, FALSE);
  g_autofree char *j = bundle(spec, rs, NULL, ", 'expect_output_relation': {'e': "
                                              "['slice(r1.e, dim=0, start=0, end=\\\"u0\\\")']}");
  /* r1.e has r1.u0 rows, not u0: the expectation's type differs */
  const char *const p[] = {"expect_output_relation.e[0]", "has type [min(r1.u0, u0), 2] i64",
                           "cannot be proved equal", NULL};
  load_fails_with(j, p);
  g_autofree char *j2 = bundle(spec, rs, NULL, NULL);
  g_autoptr(sc_bundle) b = load_ok(j2);
  sc_symtab *st = sc_bundle_symtab(b);
  uint32_t i0, i1, is;
  g_assert_true(sc_symtab_lookup(st, "u0", &is));
  g_assert_true(sc_symtab_lookup(st, "r0.u0", &i0));
  g_assert_true(sc_symtab_lookup(st, "r1.u0", &i1));
  g_assert_cmpuint(sc_symtab_n_symbols(st), >=, 3);
  gboolean has_min, has_max;
  int64_t mn, mx;
  sc_symtab_symbol_bounds(st, i1, &has_min, &mn, &has_max, &mx);
  g_assert_true(has_max);
  g_assert_cmpint(mx, ==, 200);
  /* assumptions renamed */
  gboolean found = FALSE;
  for (uint32_t a = 0; a < sc_symtab_n_assumptions(st); a++)
    found = found || strstr(sc_symtab_assumption_text(st, a), "r1.u0") != NULL;
  g_assert_true(found);
  sc_graph *g = sc_bundle_impl(b);
  g_autofree char *se = shape_of(g, "r1.e");
  g_assert_cmpstr(se, ==, "[r1.u0, 2]");
  g_autofree char *sf = shape_of(g, "r0.f");
  g_assert_cmpstr(sf, ==, "[2*r0.u0]");
  g_autofree char *sg = shape_of(g, "r1.g");
  g_assert_cmpstr(sg, ==, "[r1.u0]");
  g_autofree char *vmax = sc_dim_to_string(st, tensor_named(g, "r0.e")->values_max);
  g_assert_cmpstr(vmax, ==, "r0.u0");
  g_autofree char *sp = shape_of(sc_bundle_spec(b), "e");
  g_assert_cmpstr(sp, ==, "[u0, 2]");
  /* r0.u0 is even by rank 0's assumption: r0.u0/2 is exact */
  sc_dim d, half;
  g_assert_true(sc_dim_parse(st, "r0.u0", &d, NULL));
  g_assert_true(sc_dim_floordiv(st, d, sc_dim_const(2), &half));
  g_assert_cmpint(sc_dim_eq(st, sc_dim_mul(st, half, sc_dim_const(2)), d), ==, SC_YES);
  /* relations name rank symbols as rk.NAME */
  g_autofree char *j3 = bundle(spec, rs, NULL, ", 'assume_relation': {'y': ['r0.x']}");
  g_autoptr(sc_bundle) b3 = load_ok(j3);
  (void)b3;
  /* a rank cannot use another rank's symbol name under its own */
  g_autofree char *r4 = g_strdup("{'inputs': [{'name': 'x', 'shape': [4, 8]}, {'name': 'e', "
                                 "'shape': ['v0', 2]}], 'nodes': [], 'outputs': ['x']}");
  g_autofree char *j4 = bundle(NULL, r4, NULL, NULL);
  const char *const p4[] = {"impl.ranks[0].inputs[1].shape[0]", "v0", NULL};
  load_fails_with(j4, p4);
}

/* ---- spec ---- */

static void test_spec_groups(void) {
  const char *spec_ok = "{'groups': {'7': [0]}, 'inputs': [{'name': 's', 'shape': [4, 8]}], "
                        "'nodes': [{'name': 'c', 'op': '_c10d_functional.all_reduce.default', "
                        "'args': ['s', 'sum', '7'], 'outputs': [{'name': 'c'}]}, {'name': 'w', "
                        "'op': '_c10d_functional.wait_tensor.default', 'args': ['c'], "
                        "'outputs': [{'name': 'y'}]}], 'outputs': ['y']}";
  g_autofree char *r = rank(NULL, "", "'x'");
  g_autofree char *j = bundle(spec_ok, r, NULL, NULL);
  g_autoptr(sc_bundle) b = load_ok(j);
  g_assert_cmpstr(node_named(sc_bundle_spec(b), "c")->op->qualname, ==,
                  "_c10d_functional.all_reduce.default");
  const char *spec_two = "{'groups': {'7': [0, 1]}, 'inputs': [{'name': 's', 'shape': [4, 8]}], "
                         "'nodes': [], 'outputs': ['s']}";
  g_autofree char *j2 = bundle(spec_two, r, NULL, NULL);
  load_fails(j2, "spec.groups.7: spec group '7' has 2 members, but the spec is one rank: its "
                 "collectives must run on groups of one member (they are identities)");
  const char *spec_gs = "{'inputs': [{'name': 's', 'shape': [4, 8]}], 'nodes': [{'name': 'c', "
                        "'op': '_c10d_functional.all_gather_into_tensor.default', 'args': ['s', "
                        "2, '7'], 'outputs': [{'name': 'y'}]}], 'outputs': ['y']}";
  g_autofree char *j3 = bundle(spec_gs, r, NULL, NULL);
  load_fails(j3, "spec.nodes[0]: all_gather_into_tensor on group '7' has group_size 2 but the "
                 "group has 1 member (ranks 0)");
  const char *spec_ranks = "{'ranks': []}";
  g_autofree char *j4 = bundle(spec_ranks, r, NULL, NULL);
  load_fails(j4, "spec.ranks: the spec is one graph (only impl may be given per rank)");
}

static void test_inputs_behind_assumptions(void) {
  /* spec: m = relu(k); y = add(s, m), with m assumed: k need not be mapped */
  const char *spec = "{'inputs': [{'name': 's', 'shape': [4, 8]}, {'name': 'k', 'shape': [4, 8]}], "
                     "'nodes': [{'name': 'n1', 'op': 'aten.relu.default', 'args': ['k'], "
                     "'outputs': [{'name': 'm'}]}, {'name': 'n2', 'op': 'aten.add.Tensor', "
                     "'args': ['s', 'm'], 'outputs': [{'name': 'y'}]}], 'outputs': ['y']}";
  g_autofree char *r = rank(NULL, "", "'x'");
  g_autofree char *j = bundle(spec, r, NULL, ", 'assume_relation': {'m': ['r0.x']}, "
                                             "'inputs_behind_assumptions': ['k']");
  g_autoptr(sc_bundle) b = load_ok(j);
  g_assert_cmpuint(sc_bundle_n_inputs_behind_assumptions(b), ==, 1);
  g_assert_cmpuint(sc_bundle_input_behind_assumptions(b, 0), ==,
                   sc_graph_find_tensor(sc_bundle_spec(b), "k"));
  /* without the assumption k reaches y */
  g_autofree char *j2 = bundle(spec, r, NULL, ", 'assume_relation': {'y': ['r0.x']}, "
                                              "'check_outputs': ['y'], "
                                              "'inputs_behind_assumptions': ['k']");
  g_autoptr(sc_bundle) b2 = load_ok(j2); /* y itself assumed: k is behind it */
  (void)b2;
  const char *spec3 = "{'inputs': [{'name': 's', 'shape': [4, 8]}, {'name': 'k', 'shape': [4, 8]}],"
                      " 'nodes': [{'name': 'n1', 'op': 'aten.relu.default', 'args': ['k'], "
                      "'outputs': [{'name': 'm'}]}, {'name': 'n2', 'op': 'aten.add.Tensor', "
                      "'args': ['k', 'm'], 'outputs': [{'name': 'y'}]}], 'outputs': ['y']}";
  g_autofree char *j3 = bundle(spec3, r, NULL, ", 'assume_relation': {'m': ['r0.x']}, "
                                               "'inputs_behind_assumptions': ['k']");
  load_fails(j3, "inputs_behind_assumptions[0]: 'k' reaches the checked output 'y' without "
                 "passing a tensor of assume_relation: map it in input_relation");
  g_autofree char *j4 = bundle(spec, r, NULL, ", 'assume_relation': {'m': ['r0.x']}, "
                                              "'inputs_behind_assumptions': ['m']");
  load_fails(j4, "inputs_behind_assumptions[0]: 'm' is not an input of spec (node 'n1' "
                 "produces it)");
  g_autofree char *j5 = bundle(spec, r, NULL, ", 'inputs_behind_assumptions': ['k']");
  load_fails(j5, "inputs_behind_assumptions: inputs can only be behind assumptions when "
                 "assume_relation is given");
  g_autofree char *j6 = bundle(spec, r, NULL, ", 'assume_relation': {'m': ['r0.x']}");
  load_fails(j6, "input_relation: spec input 'k' is not mapped (every spec input needs at "
                 "least one expression)");
  g_autofree char *j7 = bundle(spec, r, NULL, ", 'assume_relation': {'m': ['r0.x']}, "
                                              "'inputs_behind_assumptions': ['k', 'k']");
  load_fails(j7, "inputs_behind_assumptions[1]: 'k' is listed twice");
}

/* ---- top level, loader coercions ---- */

static void test_warnings(void) {
  g_autofree char *r = rank(NULL, "", "'x'");
  g_autofree char *j = bundle(NULL, r, NULL, ", 'x-tool': 1, 'producer': 'fx2bundle', "
                                             "'entangle': {}");
  g_autoptr(sc_bundle) b = load_ok(j);
  g_assert_cmpuint(sc_bundle_n_warnings(b), ==, 2);
  g_assert_cmpstr(sc_bundle_warning(b, 0), ==,
                  "t.json: producer: unknown top-level field 'producer' ignored");
  g_assert_cmpstr(sc_bundle_warning(b, 1), ==,
                  "t.json: entangle: unknown top-level field 'entangle' ignored");
  /* unknown fields inside graphs stay errors */
  g_autofree char *r2 = g_strdup("{'inputs': [{'name': 'x', 'shape': [4, 8], 'shap': 1}], "
                                 "'nodes': [], 'outputs': ['x']}");
  g_autofree char *j2 = bundle(NULL, r2, NULL, NULL);
  load_fails(j2, "impl.ranks[0].inputs[0].shap: unknown field 'shap' (expected one of: name, "
                 "shape, dtype, rank, values)");
}

static void test_scalar_overload_and_null_results(void) {
  const char *nodes = "{'name': 'd', 'op': 'aten.div.Tensor', 'args': ['x', 8], 'outputs': "
                      "[{'name': 'd'}]}, {'name': 'm', 'op': 'aten.mul.Tensor', 'args': ['d'], "
                      "'kwargs': {'other': 0.5}, 'outputs': [{'name': 'm'}]}, {'name': 'mx', "
                      "'op': 'aten.max.dim', 'args': ['m', -1], 'outputs': [{'name': 'v', "
                      "'shape': [4]}, null]}";
  g_autofree char *r = rank(NULL, nodes, "'v'");
  g_autofree char *j = bundle(NULL, r, NULL, NULL);
  g_autoptr(sc_bundle) b = load_ok(j);
  sc_graph *g = sc_bundle_impl(b);
  g_assert_cmpstr(node_named(g, "r0.d")->op->qualname, ==, "aten.div.Scalar");
  g_assert_cmpstr(node_named(g, "r0.m")->op->qualname, ==, "aten.mul.Scalar");
  const sc_node *mx = node_named(g, "r0.mx");
  g_assert_cmpuint(mx->n_results, ==, 2);
  g_assert_cmpstr(sc_graph_tensor(g, mx->results[1])->name, ==, "r0.mx#1");
  g_assert_cmpint(sc_graph_tensor(g, mx->results[1])->type.dtype, ==, SC_DTYPE_I64);
  /* a tensor first argument stays an error */
  const char *bad = "{'name': 'd', 'op': 'aten.div.Tensor', 'args': [8, 'x'], 'outputs': "
                    "[{'name': 'd'}]}";
  g_autofree char *r2 = rank(NULL, bad, "'d'");
  g_autofree char *j2 = bundle(NULL, r2, NULL, NULL);
  const char *const p2[] = {"impl.ranks[0].nodes[0].args[0]", "expects Tensor", NULL};
  load_fails_with(j2, p2);
}

/* The relations use the stitched names; input_relation leaves are impl
 * inputs, expectations name impl outputs. */
static void test_relations(void) {
  g_autofree char *c = call("all_gather_into_tensor", "2, '12'");
  g_autofree char *ranks = two_ranks(c, c, "[8, 8]");
  const char *spec = "{'inputs': [{'name': 's', 'shape': [4, 8]}], 'nodes': [{'name': 'r', 'op': "
                     "'aten.relu.default', 'args': ['s'], 'outputs': [{'name': 'y'}]}], "
                     "'outputs': ['y']}";
  g_autofree char *j = bundle(spec, ranks, NULL,
                              ", 'expect_output_relation': {'y': ['slice(r1.v, dim=0, start=4, "
                              "end=8)']}");
  g_autoptr(sc_bundle) b = load_ok(j);
  const sc_relation *e = sc_bundle_expect_output_relation(b);
  g_assert_cmpuint(e->n_entries, ==, 1);
  g_autofree char *s = sc_texpr_to_string(e->entries[0].exprs[0]);
  g_assert_cmpstr(s, ==, "slice(r1.v, dim=0, start=4, end=8)");
  g_autofree char *j2 = bundle(spec, ranks, NULL, ", 'expect_output_relation': {'y': ['r1.p']}");
  load_fails(j2, "expect_output_relation.y[0]: 'r1.p' is not an output of impl (an output "
                 "relation uses only what impl returns)");
  g_autofree char *j3 = bundle(spec, ranks, NULL, ", 'expect_output_relation': {'y': ['p']}");
  const char *const p3[] = {"expect_output_relation.y[0]: col 1: unknown tensor 'p'", NULL};
  load_fails_with(j3, p3);
}

/* Linear loading: 2 ranks of 20000 nodes with an all-reduce every 10. */
static void test_large(void) {
  GString *ranks = g_string_new(NULL);
  const uint32_t n = 20000;
  for (int k = 0; k < 2; k++) {
    g_string_append_printf(ranks, "%s{'inputs': [{'name': 'x', 'shape': [4, 8]}], 'nodes': [",
                           k ? ", " : "");
    for (uint32_t i = 0; i < n; i++) {
      const char *prev = i ? NULL : "x";
      g_autofree char *pv = prev ? g_strdup(prev) : g_strdup_printf("t%u", i - 1);
      if (i % 10 == 9)
        g_string_append_printf(ranks,
                               "%s{'name': 't%u', 'op': '_c10d_functional.all_reduce.default', "
                               "'args': ['%s', 'sum', '12'], 'outputs': [{'name': 't%u'}]}",
                               i ? ", " : "", i, pv, i);
      else
        g_string_append_printf(ranks,
                               "%s{'name': 't%u', 'op': 'aten.relu.default', 'args': ['%s'], "
                               "'outputs': [{'name': 't%u', 'shape': [4, 8]}]}",
                               i ? ", " : "", i, pv, i);
    }
    g_string_append_printf(ranks, "], 'outputs': ['t%u']}", n - 1);
  }
  g_autofree char *rs = g_string_free(ranks, FALSE);
  g_autofree char *j = bundle(NULL, rs, NULL, NULL);
  gint64 t0 = g_get_monotonic_time();
  g_autoptr(sc_bundle) b = load_ok(j);
  double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
  g_test_message("2 x %u nodes loaded in %.3f s", n, secs);
  sc_graph *g = sc_bundle_impl(b);
  g_assert_cmpuint(sc_graph_n_nodes(g), ==, 2 * n - n / 10);
  g_assert_cmpstr(node_named(g, "comm:12:1999")->op->qualname, ==, "comm.all_reduce.default");
  g_assert_cmpfloat(secs, <, 20.0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ranks/stitch/all_reduce", test_all_reduce);
  g_test_add_func("/ranks/stitch/all_gather_reduce_scatter", test_all_gather_reduce_scatter);
  g_test_add_func("/ranks/stitch/all_to_all", test_all_to_all);
  g_test_add_func("/ranks/stitch/broadcast", test_broadcast);
  g_test_add_func("/ranks/stitch/one_member_groups", test_one_member_groups);
  g_test_add_func("/ranks/stitch/wait_chain_and_dead", test_wait_chain_and_dead);
  g_test_add_func("/ranks/stitch/vllm", test_vllm);
  g_test_add_func("/ranks/stitch/large", test_large);
  g_test_add_func("/ranks/stitch/send_recv", test_send_recv);
  g_test_add_func("/ranks/errors/mismatch", test_mismatch_messages);
  g_test_add_func("/ranks/errors/deadlock", test_deadlock);
  g_test_add_func("/ranks/errors/groups", test_groups_invalid);
  g_test_add_func("/ranks/symbols/per_rank", test_rank_symbols);
  g_test_add_func("/ranks/spec/groups", test_spec_groups);
  g_test_add_func("/ranks/bundle/inputs_behind_assumptions", test_inputs_behind_assumptions);
  g_test_add_func("/ranks/bundle/warnings", test_warnings);
  g_test_add_func("/ranks/bundle/scalar_overload_null_results",
                  test_scalar_overload_and_null_results);
  g_test_add_func("/ranks/bundle/relations", test_relations);
  return g_test_run();
}
