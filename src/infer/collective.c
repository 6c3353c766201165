/* collective.c — collectives by their semantics (bundle-format.md's
 * table), one row per collective in COLLECTIVES: all_reduce = sum (avg =
 * sum / n, max/min an elementwise fold), all_gather = cat, reduce_scatter =
 * slices of a sum, all_to_all = cats of chunks, broadcast = the source's
 * input, send_recv = its input.  Also the small term builders (sum, cat,
 * slice, a binary operator) that the collectives and the hooks use. */
#include "infer/infer-private.h"

#include <string.h>

/* What the driver adds to the e-graphs besides the bundle's operators:
 *   - collectives, as sums, cats and slices of the ranks' tensors and, for
 *     an average, max or min all-reduce, aten.div.Scalar, aten.maximum and
 *     aten.minimum (this file);
 *   - sums of partial sums (pass-sums.c, explain.c), cats of constant
 *     parts and constants (cat-parts.c, pass-constants.c: sc.cat, sc.full),
 *     empty buffers (trel.c: sc.empty).
 * A driver change that adds another operator names it here, or a lemma
 * about it could be left unparsed by `check` (never a false proof; a proof
 * could be missed): tests/models and tests/real compare every verdict, and
 * tools/bench/startup-diff.py the whole JSON results against a full load. */
static const char *const driver_ops[] = {
    "sc.sum.default",      "sc.cat.default",       "sc.slice.default",     "sc.full.default",
    "sc.empty.default",    "aten.div.Scalar",      "aten.maximum.default", "aten.minimum.default",
};

void sc_infer_mark_driver_ops(gboolean *met) {
  for (size_t i = 0; i < G_N_ELEMENTS(driver_ops); i++) {
    const sc_op *op = sc_ops_lookup(driver_ops[i], NULL);
    if (op != NULL)
      met[op->id] = TRUE;
  }
}

static sc_value *named_args(const char *func, GError **error, const sc_op **op_out) {
  const sc_op *op = sc_ops_lookup_func(func, error);
  if (!op)
    return NULL;
  *op_out = op;
  sc_value *args = g_new0(sc_value, op->n_args ? op->n_args : 1);
  for (uint32_t i = 0; i < op->n_args; i++) {
    if (op->args[i].has_default)
      sc_value_copy(&args[i], &op->args[i].default_value);
    else
      args[i] = sc_value_none();
  }
  return args;
}

static int32_t arg_index(const sc_op *op, const char *name) {
  return sc_ops_arg_index(op, name);
}

const sc_value *sc_rel_node_arg(const sc_node *n, const char *name) {
  int32_t i = arg_index(n->op, name);
  return i < 0 ? NULL : &n->args[i];
}

/* sc.cat or sc.sum over CLASSES (n >= 1). */
sc_id sc_rel_add_variadic(sc_rel_ctx *c, const char *func, const sc_id *classes, uint32_t n,
                          const sc_dim *dim, GError **error) {
  const sc_op *op = NULL;
  sc_value *args = named_args(func, error, &op);
  if (!args)
    return SC_ID_NONE;
  sc_value_clear(&args[0]);
  args[0].kind = SC_VAL_TENSOR_LIST;
  args[0].u.list.n = n;
  args[0].u.list.ids = g_new(sc_id, n);
  for (uint32_t i = 0; i < n; i++)
    args[0].u.list.ids[i] = i;
  if (dim) {
    int32_t d = arg_index(op, "dim");
    g_assert(d >= 0);
    sc_value_clear(&args[d]);
    args[d] = sc_value_dim(*dim);
  }
  sc_id cls = sc_lang_add_call(c->lang, op, args, classes, n, 0, error);
  sc_rel_free_args(args, op->n_args);
  return cls;
}

/* slice(x, dim, start, end) of class X. */
sc_id sc_rel_add_slice(sc_rel_ctx *c, sc_id x, sc_dim dim, sc_dim start, sc_dim end,
                       GError **error) {
  const sc_op *op = NULL;
  sc_value *args = named_args("slice", error, &op);
  if (!args)
    return SC_ID_NONE;
  sc_value_clear(&args[0]);
  args[0] = sc_value_tensor(0);
  const char *names[3] = {"dim", "start", "end"};
  sc_dim vals[3] = {dim, start, end};
  for (int k = 0; k < 3; k++) {
    int32_t i = arg_index(op, names[k]);
    g_assert(i >= 0);
    sc_value_clear(&args[i]);
    args[i] = sc_value_dim(vals[k]);
  }
  sc_id cls = sc_lang_add_call(c->lang, op, args, &x, 1, 0, error);
  sc_rel_free_args(args, op->n_args);
  return cls;
}

static gboolean dim_arg(const sc_node *n, const char *name, uint32_t rank, sc_dim *out,
                        GError **error) {
  const sc_value *v = sc_rel_node_arg(n, name);
  if (!v || v->kind != SC_VAL_INT || !sc_dim_is_const(v->u.i)) {
    g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                "impl node '%s': argument '%s' must be a concrete dim", n->name, name);
    return FALSE;
  }
  uint32_t d;
  if (!sc_wrap_dim(v->u.i.value, rank, &d)) {
    g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                "impl node '%s': dim %" G_GINT64_FORMAT " out of range", n->name,
                v->u.i.value);
    return FALSE;
  }
  *out = sc_dim_const(d);
  return TRUE;
}

/* OP(a, b) where b is a class (TENSOR second argument) or, for a Scalar
 * second argument, the value *b_value.  Other arguments take defaults. */
sc_id sc_rel_add_binary(sc_rel_ctx *c, const char *qualname, sc_id a, const void *b, GError **error) {
  const sc_op *op = sc_ops_lookup(qualname, error);
  if (!op || op->n_args < 2)
    return SC_ID_NONE;
  sc_value *args = g_new0(sc_value, op->n_args);
  for (uint32_t i = 2; i < op->n_args; i++) {
    if (op->args[i].has_default)
      sc_value_copy(&args[i], &op->args[i].default_value);
    else
      args[i] = sc_value_none();
  }
  sc_id kids[2] = {a, SC_ID_NONE};
  uint32_t n_kids = 1;
  args[0] = sc_value_tensor(0);
  if (op->args[1].type == SC_ARG_TENSOR) {
    kids[1] = *(const sc_id *)b;
    args[1] = sc_value_tensor(1);
    n_kids = 2;
  } else {
    sc_value_copy(&args[1], (const sc_value *)b);
  }
  sc_id cls = sc_lang_add_call(c->lang, op, args, kids, n_kids, 0, error);
  sc_rel_free_args(args, op->n_args);
  return cls;
}

/* One collective's semantics: the class of result K of node N from its
 * inputs' classes IN (one per rank), T0 the type of IN[0];
 * SC_ID_NONE when the e-graph cannot express it (then a bare leaf). */
typedef sc_id (*collective_fn)(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                               uint32_t k, const sc_ttype *t0, GError **error);

/* all_reduce: sum; avg = sum / n (true division, as the collective
 * computes it); max / min: an elementwise fold over the ranks; another
 * reduction stays a bare leaf. */
static sc_id all_reduce(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                        uint32_t k, const sc_ttype *t0, GError **error) {
  (void)k, (void)t0;
  const sc_value *opv = sc_rel_node_arg(n, "op");
  const char *rop = (opv && opv->kind == SC_VAL_STR) ? opv->u.s : "sum";
  if (strcmp(rop, "sum") == 0)
    return sc_rel_add_variadic(c, "sum", in, n_in, NULL, error);
  if (strcmp(rop, "avg") == 0) {
    sc_id s = sc_rel_add_variadic(c, "sum", in, n_in, NULL, error);
    if (s == SC_ID_NONE)
      return SC_ID_NONE;
    sc_value sv = sc_value_int((int64_t)n_in);
    return sc_rel_add_binary(c, "aten.div.Scalar", s, &sv, error);
  }
  if (strcmp(rop, "max") == 0 || strcmp(rop, "min") == 0) {
    const char *fn = rop[1] == 'a' ? "aten.maximum.default" : "aten.minimum.default";
    sc_id acc = in[0];
    for (uint32_t j = 1; j < n_in && acc != SC_ID_NONE; j++)
      acc = sc_rel_add_binary(c, fn, acc, &in[j], error);
    return acc;
  }
  return SC_ID_NONE;
}

/* all_gather: the cat of every rank's input along dim. */
static sc_id all_gather(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                        uint32_t k, const sc_ttype *t0, GError **error) {
  (void)k;
  sc_dim d;
  if (!dim_arg(n, "dim", t0->shape.rank, &d, error))
    return SC_ID_NONE;
  return sc_rel_add_variadic(c, "cat", in, n_in, &d, error);
}

/* reduce_scatter (sum): rank K's slice of the sum along dim. */
static sc_id reduce_scatter(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                            uint32_t k, const sc_ttype *t0, GError **error) {
  const sc_value *opv = sc_rel_node_arg(n, "op");
  if (opv && opv->kind == SC_VAL_STR && strcmp(opv->u.s, "sum") != 0)
    return SC_ID_NONE;
  sc_dim d;
  if (!dim_arg(n, "dim", t0->shape.rank, &d, error))
    return SC_ID_NONE;
  sc_id s = sc_rel_add_variadic(c, "sum", in, n_in, NULL, error);
  if (s == SC_ID_NONE)
    return SC_ID_NONE;
  sc_dim len = t0->shape.dims[d.value], part;
  if (!sc_dim_floordiv(c->st, len, sc_dim_const(n_in), &part))
    return SC_ID_NONE;
  sc_dim start = sc_dim_mul(c->st, part, sc_dim_const(k));
  sc_dim end = sc_dim_add(c->st, start, part);
  return sc_rel_add_slice(c, s, d, start, end, error);
}

/* all_to_all: the cat along concat_dim of chunk K (along split_dim) of
 * every rank's input. */
static sc_id all_to_all(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                        uint32_t k, const sc_ttype *t0, GError **error) {
  sc_dim sd, cd;
  uint32_t rank = t0->shape.rank;
  if (!dim_arg(n, "split_dim", rank, &sd, error) || !dim_arg(n, "concat_dim", rank, &cd, error))
    return SC_ID_NONE;
  sc_dim len = t0->shape.dims[sd.value], part;
  if (!sc_dim_floordiv(c->st, len, sc_dim_const(n_in), &part))
    return SC_ID_NONE;
  sc_dim start = sc_dim_mul(c->st, part, sc_dim_const(k));
  sc_dim end = sc_dim_add(c->st, start, part);
  sc_id *chunks = g_new(sc_id, n_in);
  for (uint32_t j = 0; j < n_in; j++) {
    chunks[j] = sc_rel_add_slice(c, in[j], sd, start, end, error);
    if (chunks[j] == SC_ID_NONE) {
      g_free(chunks);
      return SC_ID_NONE;
    }
  }
  sc_id r = sc_rel_add_variadic(c, "cat", chunks, n_in, &cd, error);
  g_free(chunks);
  return r;
}

/* broadcast: the source rank's input. */
static sc_id broadcast(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                       uint32_t k, const sc_ttype *t0, GError **error) {
  (void)c, (void)k, (void)t0, (void)error;
  const sc_value *src = sc_rel_node_arg(n, "src");
  int64_t s = (src && src->kind == SC_VAL_INT && sc_dim_is_const(src->u.i)) ? src->u.i.value : 0;
  if (s < 0 || (uint64_t)s >= n_in)
    return SC_ID_NONE;
  return in[s];
}

/* send_recv: what was sent. */
static sc_id send_recv(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                       uint32_t k, const sc_ttype *t0, GError **error) {
  (void)c, (void)n, (void)n_in, (void)k, (void)t0, (void)error;
  return in[0];
}

static const struct {
  const char *name;
  collective_fn fn;
} COLLECTIVES[] = {
    {"all_reduce", all_reduce},         {"all_gather", all_gather},
    {"reduce_scatter", reduce_scatter}, {"all_to_all", all_to_all},
    {"broadcast", broadcast},           {"send_recv", send_recv},
};

sc_id sc_rel_add_collective(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                            uint32_t k, GError **error) {
  /* a copy: adding nodes below may move the e-graph's class data */
  const sc_ttype t0 = *sc_lang_class_type(c->lang, in[0]);
  for (size_t i = 0; i < G_N_ELEMENTS(COLLECTIVES); i++)
    if (strcmp(n->op->name, COLLECTIVES[i].name) == 0)
      return COLLECTIVES[i].fn(c, n, in, n_in, k, &t0, error);
  return SC_ID_NONE;
}
