/* graph.c — computation graphs (graph.h): tensors, nodes, name lookup,
 * shape inference through the operator registry, consumers and the visiting
 * order.
 *
 * Invariants:
 * - tensors and nodes live in GArrays indexed by sc_id; the name tables map
 *   a name (borrowed from the tensor or node that owns it) to id + 1;
 * - a node is "typed" once its result types are known: at sc_graph_add_node
 *   time, or in sc_graph_finish for nodes made by sc_graph_declare_node; a
 *   tensor's type is meaningful only when its producer is typed (inputs
 *   always are);
 * - node->inputs lists the distinct tensors the arguments read, in argument
 *   order; consumers are computed once, in sc_graph_finish;
 * - the visiting order is Kahn's algorithm with a binary min-heap keyed on
 *   the node id (file order), O((V + E) log V). */
#include "shardcheck/graph.h"

#include <string.h>

G_DEFINE_QUARK(sc-graph-error-quark, sc_graph_error)

/* Per-node bookkeeping that is not part of the public sc_node. */
typedef struct {
  gboolean typed;          /* result types known */
  gboolean has_args;       /* args set (always TRUE for add_node) */
  sc_tensor_decl *decls;   /* declare_node: one per result name, or NULL */
} node_extra;

struct sc_graph {
  sc_symtab *st;
  GArray *tensors;         /* sc_tensor */
  GArray *nodes;           /* sc_node */
  GArray *extra;           /* node_extra, parallel to nodes */
  GHashTable *tensor_ids;  /* name -> id + 1 */
  GHashTable *node_ids;    /* name -> id + 1 */
  GArray *inputs;          /* sc_id */
  GArray *outputs;         /* sc_id */
  sc_id *topo;             /* after finish */
  gboolean finished;
  sc_id error_node;
};

/* ---- construction and destruction ---- */

sc_graph *sc_graph_new(sc_symtab *st) {
  sc_graph *g = g_new0(sc_graph, 1);
  g->st = st;
  g->tensors = g_array_new(FALSE, TRUE, sizeof(sc_tensor));
  g->nodes = g_array_new(FALSE, TRUE, sizeof(sc_node));
  g->extra = g_array_new(FALSE, TRUE, sizeof(node_extra));
  g->tensor_ids = g_hash_table_new(g_str_hash, g_str_equal);
  g->node_ids = g_hash_table_new(g_str_hash, g_str_equal);
  g->inputs = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g->outputs = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g->error_node = SC_ID_NONE;
  return g;
}

static void free_args(const sc_op *op, sc_value *args) {
  if (args == NULL)
    return;
  for (uint32_t i = 0; i < op->n_args; i++)
    sc_value_clear(&args[i]);
  g_free(args);
}

void sc_graph_free(sc_graph *g) {
  if (g == NULL)
    return;
  for (guint i = 0; i < g->tensors->len; i++) {
    sc_tensor *t = &g_array_index(g->tensors, sc_tensor, i);
    g_free(t->name);
    g_free(t->consumers);
  }
  for (guint i = 0; i < g->nodes->len; i++) {
    sc_node *n = &g_array_index(g->nodes, sc_node, i);
    node_extra *x = &g_array_index(g->extra, node_extra, i);
    g_free(n->name);
    free_args(n->op, n->args);
    g_free(n->results);
    g_free(n->src);
    g_free(n->inputs);
    g_free(x->decls);
  }
  g_array_free(g->tensors, TRUE);
  g_array_free(g->nodes, TRUE);
  g_array_free(g->extra, TRUE);
  g_hash_table_destroy(g->tensor_ids);
  g_hash_table_destroy(g->node_ids);
  g_array_free(g->inputs, TRUE);
  g_array_free(g->outputs, TRUE);
  g_free(g->topo);
  g_free(g);
}

sc_symtab *sc_graph_symtab(const sc_graph *g) { return g->st; }

/* ---- accessors ---- */

uint32_t sc_graph_n_tensors(const sc_graph *g) { return g->tensors->len; }
uint32_t sc_graph_n_nodes(const sc_graph *g) { return g->nodes->len; }

sc_tensor *sc_graph_tensor(const sc_graph *g, sc_id id) {
  g_return_val_if_fail(id < g->tensors->len, NULL);
  return &g_array_index(g->tensors, sc_tensor, id);
}

const sc_node *sc_graph_node(const sc_graph *g, sc_id id) {
  g_return_val_if_fail(id < g->nodes->len, NULL);
  return &g_array_index(g->nodes, sc_node, id);
}

sc_id sc_graph_find_tensor(const sc_graph *g, const char *name) {
  gpointer v = g_hash_table_lookup(g->tensor_ids, name);
  return v == NULL ? SC_ID_NONE : (sc_id)(GPOINTER_TO_UINT(v) - 1);
}

sc_id sc_graph_find_node(const sc_graph *g, const char *name) {
  gpointer v = g_hash_table_lookup(g->node_ids, name);
  return v == NULL ? SC_ID_NONE : (sc_id)(GPOINTER_TO_UINT(v) - 1);
}

uint32_t sc_graph_n_inputs(const sc_graph *g) { return g->inputs->len; }
sc_id sc_graph_input(const sc_graph *g, uint32_t i) {
  g_return_val_if_fail(i < g->inputs->len, SC_ID_NONE);
  return g_array_index(g->inputs, sc_id, i);
}
uint32_t sc_graph_n_outputs(const sc_graph *g) { return g->outputs->len; }
sc_id sc_graph_output(const sc_graph *g, uint32_t i) {
  g_return_val_if_fail(i < g->outputs->len, SC_ID_NONE);
  return g_array_index(g->outputs, sc_id, i);
}

const sc_id *sc_graph_topo_order(const sc_graph *g, uint32_t *n) {
  if (n != NULL)
    *n = g->finished ? g->nodes->len : 0;
  return g->topo;
}

const sc_ttype *sc_graph_type_of(void *graph, sc_id tensor) {
  sc_graph *g = graph;
  if (tensor >= g->tensors->len)
    return NULL;
  return &g_array_index(g->tensors, sc_tensor, tensor).type;
}

const char *sc_graph_name_of(void *graph, sc_id tensor) {
  sc_graph *g = graph;
  if (tensor >= g->tensors->len)
    return "?";
  return g_array_index(g->tensors, sc_tensor, tensor).name;
}

gboolean sc_graph_is_finished(const sc_graph *g) { return g->finished; }
sc_id sc_graph_error_node(const sc_graph *g) { return g->error_node; }

/* ---- helpers ---- */

/* Is TENSOR's type known (a graph input, or a result of a typed node)? */
static gboolean tensor_typed(const sc_graph *g, sc_id tensor) {
  const sc_tensor *t = &g_array_index(g->tensors, sc_tensor, tensor);
  if (t->producer == SC_ID_NONE)
    return TRUE;
  return g_array_index(g->extra, node_extra, t->producer).typed;
}

/* Checks that every tensor id in ARGS is in range (and typed, when
 * NEED_TYPED); fills the node's distinct inputs in argument order. */
static gboolean collect_inputs(sc_graph *g, const char *node_name, const sc_op *op,
                               const sc_value *args, gboolean need_typed,
                               uint32_t *n_out, sc_id **out, GError **error) {
  g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (uint32_t i = 0; i < op->n_args; i++) {
    const sc_value *v = &args[i];
    uint32_t n = 0;
    const sc_id *list = NULL;
    if (v->kind == SC_VAL_TENSOR) {
      n = 1;
      list = &v->u.tensor;
    } else if (v->kind == SC_VAL_TENSOR_LIST) {
      n = v->u.list.n;
      list = v->u.list.ids;
    }
    for (uint32_t k = 0; k < n; k++) {
      sc_id t = list[k];
      if (t == SC_ID_NONE && v->kind == SC_VAL_TENSOR_LIST)
        continue; /* a None entry of Tensor?[] */
      if (t >= g->tensors->len || (need_typed && !tensor_typed(g, t))) {
        g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_UNDEFINED,
                    "node '%s' (%s): argument '%s' names tensor id %u, which is "
                    "not defined before it",
                    node_name, op->qualname, op->args[i].name, (unsigned)t);
        return FALSE;
      }
      if (!g_hash_table_contains(seen, GUINT_TO_POINTER(t + 1))) {
        g_hash_table_add(seen, GUINT_TO_POINTER(t + 1));
        g_array_append_val(ids, t);
      }
    }
  }
  *n_out = ids->len;
  *out = (sc_id *)g_array_free(g_steal_pointer(&ids), FALSE);
  return TRUE;
}

/* The output_mask argument (bool[N]) of OP, or NULL. */
static const sc_value *output_mask(const sc_op *op, const sc_value *args) {
  for (uint32_t i = 0; i < op->n_args; i++)
    if (strcmp(op->args[i].name, "output_mask") == 0 && args[i].kind == SC_VAL_BOOL_LIST)
      return &args[i];
  return NULL;
}

/* A result may be null (not produced) only where output_mask is false. */
static gboolean check_null_results(const char *node_name, const sc_op *op,
                                   const sc_value *args, const char *const *names,
                                   uint32_t n_names, GError **error) {
  const sc_value *mask = output_mask(op, args);
  for (uint32_t i = 0; i < n_names; i++) {
    if (names[i] != NULL)
      continue;
    if (mask != NULL && i < mask->u.bools.n && !mask->u.bools.v[i])
      continue;
    if (mask != NULL && i < mask->u.bools.n)
      g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_UNDEFINED,
                  "node '%s' (%s): result %u is null but output_mask[%u] is true: "
                  "a produced result needs a name",
                  node_name, op->qualname, i, i);
    else
      g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_UNDEFINED,
                  "node '%s' (%s): result %u is null but is required "
                  "(null is only for results that output_mask turns off)",
                  node_name, op->qualname, i);
    return FALSE;
  }
  return TRUE;
}

static gboolean check_name_free(sc_graph *g, const char *node_name,
                                const char *const *result_names, uint32_t n, GError **error) {
  if (g_hash_table_contains(g->node_ids, node_name)) {
    g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_DUPLICATE,
                "duplicate node name '%s'", node_name);
    return FALSE;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (result_names[i] == NULL)
      continue;
    if (g_hash_table_contains(g->tensor_ids, result_names[i])) {
      g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_DUPLICATE,
                  "node '%s': duplicate tensor '%s' (already defined)", node_name,
                  result_names[i]);
      return FALSE;
    }
    for (uint32_t j = 0; j < i; j++) {
      if (result_names[j] != NULL && strcmp(result_names[j], result_names[i]) == 0) {
        g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_DUPLICATE,
                    "node '%s': duplicate tensor '%s' (results %u and %u)", node_name,
                    result_names[i], j, i);
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* The number of elements of SHAPE must fit int64. */
static gboolean check_numel(sc_symtab *st, const char *what, const sc_shape *shape,
                            GError **error) {
  sc_symtab_clear_overflow(st);
  sc_dim n = sc_dim_const(1);
  for (uint32_t i = 0; i < shape->rank; i++)
    n = sc_dim_mul(st, n, shape->dims[i]);
  if (sc_symtab_overflowed(st)) {
    sc_symtab_clear_overflow(st);
    g_autofree char *s = sc_shape_to_string(shape);
    g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE,
                "%s: shape %s has more elements than int64 can count", what, s);
    return FALSE;
  }
  return TRUE;
}

static sc_id new_tensor(sc_graph *g, const char *name, const sc_ttype *type,
                        sc_id producer, uint32_t result_index) {
  sc_tensor t;
  memset(&t, 0, sizeof t);
  t.name = g_strdup(name);
  if (type != NULL)
    t.type = *type;
  t.producer = producer;
  t.result_index = result_index;
  t.rank = -1;
  sc_id id = g->tensors->len;
  g_array_append_val(g->tensors, t);
  g_hash_table_insert(g->tensor_ids, g_array_index(g->tensors, sc_tensor, id).name,
                      GUINT_TO_POINTER(id + 1));
  return id;
}

gboolean sc_graph_add_input(sc_graph *g, const char *name, const sc_ttype *type,
                            sc_id *out_tensor, GError **error) {
  g_return_val_if_fail(!g->finished, FALSE);
  if (g_hash_table_contains(g->tensor_ids, name)) {
    g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_DUPLICATE,
                "duplicate tensor '%s' (already defined)", name);
    return FALSE;
  }
  g_autofree char *what = g_strdup_printf("input '%s'", name);
  if (!check_numel(g->st, what, &type->shape, error))
    return FALSE;
  sc_id id = new_tensor(g, name, type, SC_ID_NONE, 0);
  g_array_append_val(g->inputs, id);
  if (out_tensor != NULL)
    *out_tensor = id;
  return TRUE;
}

static char *type_text(const sc_ttype *t) {
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s %s", s, sc_dtype_name(t->dtype));
}

static char *decl_text(const sc_tensor_decl *d, const sc_ttype *inferred) {
  g_autofree char *s = sc_shape_to_string(d->has_shape ? &d->shape : &inferred->shape);
  return g_strdup_printf("%s %s", s, sc_dtype_name(d->has_dtype ? d->dtype : inferred->dtype));
}

/* Is symbol dim D used by the shape of a graph input, or as the size of
 * another data-dependent node than SELF (ARGS not yet stored for it)? */
static gboolean dd_symbol_taken(const sc_graph *g, sc_dim d, const sc_value *self) {
  for (guint i = 0; i < g->inputs->len; i++) {
    const sc_tensor *t =
        &g_array_index(g->tensors, sc_tensor, g_array_index(g->inputs, sc_id, i));
    for (uint32_t k = 0; k < t->type.shape.rank; k++)
      if (sc_dim_identical(t->type.shape.dims[k], d))
        return TRUE;
  }
  for (guint i = 0; i < g->nodes->len; i++) {
    const sc_node *n = &g_array_index(g->nodes, sc_node, i);
    if (!(n->op->flags & SC_OP_DATA_DEPENDENT) || n->args == NULL)
      continue;
    int32_t k = sc_ops_arg_index(n->op, "size");
    if (k >= 0 && &n->args[k] != self && n->args[k].kind == SC_VAL_INT &&
        sc_dim_identical(n->args[k].u.i, d))
      return TRUE;
  }
  return FALSE;
}

/* A data-dependent operator (ops.h, SC_OP_DATA_DEPENDENT) called without
 * `size` takes it from the first size of its declared result 0, which must
 * be a symbol of its own: declared, not a size of a graph input, not the
 * size of another data-dependent node.  Its value is what the run computes
 * (the interpreter binds it), so it may carry no other information.  No
 * declaration leaves `size` None, for the shape rule to refuse. */
static gboolean take_data_dependent_size(sc_graph *g, const char *node_name, const sc_op *op,
                                         sc_value *args, uint32_t n_names,
                                         const char *const *names, const sc_tensor_decl *decls,
                                         GError **error) {
  if (!(op->flags & SC_OP_DATA_DEPENDENT))
    return TRUE;
  int32_t k = sc_ops_arg_index(op, "size");
  if (k < 0 || args[k].kind != SC_VAL_NONE || decls == NULL || n_names == 0 ||
      names[0] == NULL || !decls[0].has_shape || decls[0].shape.rank == 0)
    return TRUE;
  sc_dim d = decls[0].shape.dims[0];
  g_autofree char *text = sc_dim_to_string(g->st, d);
  uint32_t sym;
  if (sc_dim_is_const(d) || !sc_symtab_lookup(g->st, text, &sym)) {
    g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE,
                "node '%s': the first size of result '%s' depends on the values of %s's input, "
                "so it must be declared as a symbol of its own (\"u0\"), not %s",
                node_name, names[0], op->qualname, text);
    return FALSE;
  }
  if (dd_symbol_taken(g, d, &args[k])) {
    g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE,
                "node '%s': result '%s' has the data-dependent size %s, a symbol that the graph "
                "already uses for another size (a data-dependent size needs a fresh symbol)",
                node_name, names[0], text);
    return FALSE;
  }
  sc_value_clear(&args[k]);
  args[k] = sc_value_dim(d);
  return TRUE;
}

/* Infer the result types of a node whose arguments are bound and whose
 * inputs are typed; check the count against N_NAMES and DECLS.  Fills the
 * size of a data-dependent operator from DECLS first. */
static gboolean infer(sc_graph *g, const char *node_name, const sc_op *op, sc_value *args,
                      uint32_t n_names, const char *const *names, const sc_tensor_decl *decls,
                      GArray *out, GError **error) {
  if (!take_data_dependent_size(g, node_name, op, args, n_names, names, decls, error))
    return FALSE;
  sc_op_call call = {op, args, sc_graph_type_of, g, g->st};
  GError *err = NULL;
  if (!sc_ops_infer(&call, out, &err)) {
    if (g_str_has_prefix(err->message, op->qualname))
      g_propagate_prefixed_error(error, err, "node '%s': ", node_name);
    else
      g_propagate_prefixed_error(error, err, "node '%s' (%s): ", node_name, op->qualname);
    return FALSE;
  }
  if (op->flags & SC_OP_DECLARED) {
    /* ops.h, SC_OP_DECLARED: the rule checked the arguments; the type is
     * the declaration's. */
    if (decls == NULL || n_names != 1 || names[0] == NULL || !decls[0].has_shape) {
      g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE,
                  "node '%s': the result of %s must be declared with its shape (it is not "
                  "computed from the arguments)",
                  node_name, op->qualname);
      return FALSE;
    }
    sc_ttype *t = &g_array_index(out, sc_ttype, out->len - 1);
    t->shape = decls[0].shape;
    t->dtype = decls[0].has_dtype ? decls[0].dtype : SC_DTYPE_F32;
  }
  if (out->len != n_names) {
    g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE,
                "node '%s': %s gives %u result%s but %u %s listed", node_name, op->qualname,
                out->len, out->len == 1 ? "" : "s", n_names,
                n_names == 1 ? "is" : "are");
    return FALSE;
  }
  for (uint32_t i = 0; i < n_names; i++) {
    const sc_ttype *inf = &g_array_index(out, sc_ttype, i);
    const char *rname = names[i] != NULL ? names[i] : "(null)";
    if (names[i] != NULL) {
      g_autofree char *what = g_strdup_printf("node '%s': result '%s'", node_name, rname);
      if (!check_numel(g->st, what, &inf->shape, error))
        return FALSE;
    }
    if (decls == NULL || names[i] == NULL)
      continue;
    const sc_tensor_decl *d = &decls[i];
    sc_truth same = SC_YES;
    if (d->has_shape)
      same = sc_shape_same(g->st, &d->shape, &inf->shape);
    gboolean dtype_ok = !d->has_dtype || d->dtype == inf->dtype;
    if (same != SC_YES || !dtype_ok) {
      g_autofree char *dt = decl_text(d, inf);
      g_autofree char *it = type_text(inf);
      g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_SHAPE,
                  "node '%s': result '%s' declared %s but %s gives %s%s", node_name, rname,
                  dt, op->qualname, it,
                  same == SC_UNKNOWN && dtype_ok ? " (cannot prove them equal)" : "");
      return FALSE;
    }
  }
  return TRUE;
}

gboolean sc_graph_add_node(sc_graph *g, const char *name, const sc_op *op,
                           sc_value *args, const char *const *result_names,
                           uint32_t n_result_names, const sc_ttype *const *declared,
                           const char *src, sc_id *out_node, GError **error) {
  g_return_val_if_fail(!g->finished, FALSE);
  uint32_t n_inputs = 0;
  g_autofree sc_id *inputs = NULL;
  g_autoptr(GArray) out = g_array_new(FALSE, TRUE, sizeof(sc_ttype));
  g_autofree sc_tensor_decl *decls = NULL;
  if (declared != NULL) {
    decls = g_new0(sc_tensor_decl, n_result_names ? n_result_names : 1);
    for (uint32_t i = 0; i < n_result_names; i++) {
      if (declared[i] == NULL)
        continue;
      decls[i].has_shape = decls[i].has_dtype = TRUE;
      decls[i].shape = declared[i]->shape;
      decls[i].dtype = declared[i]->dtype;
    }
  }
  if (!check_name_free(g, name, result_names, n_result_names, error) ||
      !collect_inputs(g, name, op, args, TRUE, &n_inputs, &inputs, error) ||
      !check_null_results(name, op, args, result_names, n_result_names, error) ||
      !infer(g, name, op, args, n_result_names, result_names, decls, out, error)) {
    free_args(op, args);
    return FALSE;
  }
  sc_id nid = g->nodes->len;
  sc_node n;
  memset(&n, 0, sizeof n);
  n.name = g_strdup(name);
  n.op = op;
  n.args = args;
  n.n_results = n_result_names;
  n.results = g_new(sc_id, n_result_names ? n_result_names : 1);
  n.src = g_strdup(src);
  n.n_inputs = n_inputs;
  n.inputs = g_steal_pointer(&inputs);
  for (uint32_t i = 0; i < n_result_names; i++)
    n.results[i] = result_names[i] == NULL
                       ? SC_ID_NONE
                       : new_tensor(g, result_names[i], &g_array_index(out, sc_ttype, i), nid, i);
  g_array_append_val(g->nodes, n);
  node_extra x = {TRUE, TRUE, NULL};
  g_array_append_val(g->extra, x);
  g_hash_table_insert(g->node_ids, g_array_index(g->nodes, sc_node, nid).name,
                      GUINT_TO_POINTER(nid + 1));
  if (out_node != NULL)
    *out_node = nid;
  return TRUE;
}

gboolean sc_graph_declare_node(sc_graph *g, const char *name, const sc_op *op,
                               const char *const *result_names, uint32_t n_result_names,
                               const sc_tensor_decl *decls, const char *src,
                               sc_id *out_node, GError **error) {
  g_return_val_if_fail(!g->finished, FALSE);
  if (!check_name_free(g, name, result_names, n_result_names, error))
    return FALSE;
  sc_id nid = g->nodes->len;
  sc_node n;
  memset(&n, 0, sizeof n);
  n.name = g_strdup(name);
  n.op = op;
  n.n_results = n_result_names;
  n.results = g_new(sc_id, n_result_names ? n_result_names : 1);
  n.src = g_strdup(src);
  for (uint32_t i = 0; i < n_result_names; i++)
    n.results[i] = result_names[i] == NULL ? SC_ID_NONE
                                           : new_tensor(g, result_names[i], NULL, nid, i);
  g_array_append_val(g->nodes, n);
  node_extra x = {FALSE, FALSE, NULL};
  if (decls != NULL)
    x.decls = g_memdup2(decls, sizeof(sc_tensor_decl) * (n_result_names ? n_result_names : 1));
  g_array_append_val(g->extra, x);
  g_hash_table_insert(g->node_ids, g_array_index(g->nodes, sc_node, nid).name,
                      GUINT_TO_POINTER(nid + 1));
  if (out_node != NULL)
    *out_node = nid;
  return TRUE;
}

/* The result names of node N (borrowed from its tensors), for messages. */
static const char **result_names_of(const sc_graph *g, const sc_node *n) {
  const char **names = g_new0(const char *, n->n_results ? n->n_results : 1);
  for (uint32_t i = 0; i < n->n_results; i++)
    names[i] = n->results[i] == SC_ID_NONE
                   ? NULL
                   : g_array_index(g->tensors, sc_tensor, n->results[i]).name;
  return names;
}

gboolean sc_graph_set_node_args(sc_graph *g, sc_id node, sc_value *args, GError **error) {
  g_return_val_if_fail(node < g->nodes->len && !g->finished, FALSE);
  sc_node *n = &g_array_index(g->nodes, sc_node, node);
  node_extra *x = &g_array_index(g->extra, node_extra, node);
  g_return_val_if_fail(!x->has_args, FALSE);
  uint32_t n_inputs = 0;
  sc_id *inputs = NULL;
  g_autofree const char **names = result_names_of(g, n);
  if (!collect_inputs(g, n->name, n->op, args, FALSE, &n_inputs, &inputs, error) ||
      !check_null_results(n->name, n->op, args, names, n->n_results, error)) {
    g_free(inputs);
    free_args(n->op, args);
    return FALSE;
  }
  n->args = args;
  n->n_inputs = n_inputs;
  n->inputs = inputs;
  x->has_args = TRUE;
  return TRUE;
}

void sc_graph_add_output(sc_graph *g, sc_id tensor) {
  g_return_if_fail(tensor < g->tensors->len);
  g_array_append_val(g->outputs, tensor);
}

/* ---- finishing: consumers, visiting order, deferred inference ---- */

/* A binary min-heap of node ids. */
typedef struct {
  sc_id *v;
  uint32_t n;
} id_heap;

static void heap_push(id_heap *h, sc_id x) {
  uint32_t i = h->n++;
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (h->v[p] <= x)
      break;
    h->v[i] = h->v[p];
    i = p;
  }
  h->v[i] = x;
}

static sc_id heap_pop(id_heap *h) {
  sc_id top = h->v[0];
  sc_id last = h->v[--h->n];
  uint32_t i = 0;
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    sc_id mv = last;
    if (l < h->n && h->v[l] < mv) {
      m = l;
      mv = h->v[l];
    }
    if (r < h->n && h->v[r] < mv)
      m = r;
    if (m == i)
      break;
    h->v[i] = h->v[m];
    i = m;
  }
  if (h->n > 0)
    h->v[i] = last;
  return top;
}

static void compute_consumers(sc_graph *g) {
  uint32_t nt = g->tensors->len;
  g_autofree uint32_t *count = g_new0(uint32_t, nt ? nt : 1);
  for (guint i = 0; i < g->nodes->len; i++) {
    const sc_node *n = &g_array_index(g->nodes, sc_node, i);
    for (uint32_t k = 0; k < n->n_inputs; k++)
      count[n->inputs[k]]++;
  }
  for (uint32_t t = 0; t < nt; t++) {
    sc_tensor *tt = &g_array_index(g->tensors, sc_tensor, t);
    g_free(tt->consumers);
    tt->consumers = count[t] ? g_new(sc_id, count[t]) : NULL;
    tt->n_consumers = 0;
  }
  /* Nodes in ascending id order: each consumer list comes out ascending. */
  for (guint i = 0; i < g->nodes->len; i++) {
    const sc_node *n = &g_array_index(g->nodes, sc_node, i);
    for (uint32_t k = 0; k < n->n_inputs; k++) {
      sc_tensor *tt = &g_array_index(g->tensors, sc_tensor, n->inputs[k]);
      tt->consumers[tt->n_consumers++] = (sc_id)i;
    }
  }
}

/* Names the nodes of one cycle among the nodes that Kahn's algorithm could
 * not emit (indeg > 0): walking from any of them to a not-emitted producer
 * must eventually revisit a node. */
static void report_cycle(sc_graph *g, const uint32_t *indeg, GError **error) {
  uint32_t nn = g->nodes->len;
  g_autofree uint32_t *visit = g_new0(uint32_t, nn); /* step + 1 at first visit */
  g_autoptr(GArray) path = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_id cur = SC_ID_NONE;
  for (uint32_t i = 0; i < nn; i++)
    if (indeg[i] > 0) {
      cur = i;
      break;
    }
  while (visit[cur] == 0) {
    visit[cur] = path->len + 1;
    g_array_append_val(path, cur);
    const sc_node *n = &g_array_index(g->nodes, sc_node, cur);
    sc_id next = SC_ID_NONE;
    for (uint32_t k = 0; k < n->n_inputs && next == SC_ID_NONE; k++) {
      sc_id p = g_array_index(g->tensors, sc_tensor, n->inputs[k]).producer;
      if (p != SC_ID_NONE && indeg[p] > 0)
        next = p;
    }
    g_assert(next != SC_ID_NONE);
    cur = next;
  }
  /* path[visit[cur]-1 ..] is the cycle, each node reading the next one's
   * result: print it in data-flow order starting at its lowest id. */
  uint32_t first = visit[cur] - 1, len = path->len - first;
  uint32_t low = 0;
  for (uint32_t i = 1; i < len; i++)
    if (g_array_index(path, sc_id, first + i) < g_array_index(path, sc_id, first + low))
      low = i;
  GString *s = g_string_new(NULL);
  for (uint32_t i = 0; i <= len; i++) {
    /* reversed: producer first */
    uint32_t k = (low + len - (i % len)) % len;
    sc_id id = g_array_index(path, sc_id, first + k);
    if (i > 0)
      g_string_append(s, " -> ");
    g_string_append_printf(s, "'%s'", g_array_index(g->nodes, sc_node, id).name);
  }
  g->error_node = g_array_index(path, sc_id, first + low);
  g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_CYCLE,
              "the graph has a cycle: %s", s->str);
  g_string_free(s, TRUE);
}

gboolean sc_graph_finish(sc_graph *g, GError **error) {
  g_return_val_if_fail(!g->finished, FALSE);
  uint32_t nn = g->nodes->len;
  g->error_node = SC_ID_NONE;
  for (uint32_t i = 0; i < nn; i++) {
    if (!g_array_index(g->extra, node_extra, i).has_args) {
      g->error_node = i;
      g_set_error(error, SC_GRAPH_ERROR, SC_GRAPH_ERROR_UNDEFINED,
                  "node '%s' has no arguments", g_array_index(g->nodes, sc_node, i).name);
      return FALSE;
    }
  }
  compute_consumers(g);

  g_autofree uint32_t *indeg = g_new0(uint32_t, nn ? nn : 1);
  for (uint32_t i = 0; i < nn; i++) {
    const sc_node *n = &g_array_index(g->nodes, sc_node, i);
    for (uint32_t k = 0; k < n->n_inputs; k++)
      if (g_array_index(g->tensors, sc_tensor, n->inputs[k]).producer != SC_ID_NONE)
        indeg[i]++;
  }
  id_heap h = {g_new(sc_id, nn ? nn : 1), 0};
  sc_id *order = g_new(sc_id, nn ? nn : 1);
  uint32_t n_order = 0;
  for (uint32_t i = 0; i < nn; i++)
    if (indeg[i] == 0)
      heap_push(&h, i);
  while (h.n > 0) {
    sc_id id = heap_pop(&h);
    order[n_order++] = id;
    const sc_node *n = &g_array_index(g->nodes, sc_node, id);
    for (uint32_t r = 0; r < n->n_results; r++) {
      if (n->results[r] == SC_ID_NONE)
        continue;
      const sc_tensor *t = &g_array_index(g->tensors, sc_tensor, n->results[r]);
      for (uint32_t c = 0; c < t->n_consumers; c++)
        if (--indeg[t->consumers[c]] == 0)
          heap_push(&h, t->consumers[c]);
    }
  }
  g_free(h.v);
  if (n_order < nn) {
    g_free(order);
    report_cycle(g, indeg, error);
    return FALSE;
  }

  /* Deferred inference, in visiting order (every input is typed by then). */
  g_autoptr(GArray) out = g_array_new(FALSE, TRUE, sizeof(sc_ttype));
  for (uint32_t k = 0; k < nn; k++) {
    sc_id id = order[k];
    node_extra *x = &g_array_index(g->extra, node_extra, id);
    if (x->typed)
      continue;
    sc_node *n = &g_array_index(g->nodes, sc_node, id);
    g_autofree const char **names = result_names_of(g, n);
    g_array_set_size(out, 0);
    if (!infer(g, n->name, n->op, n->args, n->n_results, names, x->decls, out, error)) {
      g->error_node = id;
      g_free(order);
      return FALSE;
    }
    for (uint32_t r = 0; r < n->n_results; r++)
      if (n->results[r] != SC_ID_NONE)
        g_array_index(g->tensors, sc_tensor, n->results[r]).type =
            g_array_index(out, sc_ttype, r);
    x->typed = TRUE;
  }
  g->topo = order;
  g->finished = TRUE;
  return TRUE;
}
