/* graph.h — a computation graph: tensors produced by nodes, each node one
 * operator call with bound arguments.
 *
 * Tensors and nodes are addressed by sc_id (index into the graph's arrays).
 * Every tensor has exactly one producer: a graph input (producer ==
 * SC_ID_NONE) or one result of one node.  After sc_graph_finish the graph is
 * known to be a DAG, every tensor's consumers are recorded, and
 * sc_graph_topo_order gives the nodes in the order shardcheck visits them:
 * file order whenever a node's inputs are ready (Kahn's algorithm with the
 * lowest file index first), so "the first failing node" is deterministic.
 *
 * Ownership: the graph owns its names, node argument values and arrays; all
 * returned pointers borrow from it and stay valid until sc_graph_free (adding
 * tensors or nodes may move the arrays: do not keep pointers across adds).
 * The symtab is borrowed and must outlive the graph. */
#ifndef SHARDCHECK_GRAPH_H
#define SHARDCHECK_GRAPH_H

#include "shardcheck/ops.h"

G_BEGIN_DECLS

#define SC_GRAPH_ERROR (sc_graph_error_quark())
GQuark sc_graph_error_quark(void);
typedef enum {
  SC_GRAPH_ERROR_DUPLICATE, /* tensor or node name defined twice */
  SC_GRAPH_ERROR_UNDEFINED, /* a name that no input or node defines */
  SC_GRAPH_ERROR_CYCLE,     /* message lists the nodes on one cycle */
  SC_GRAPH_ERROR_SHAPE,     /* declared and inferred result types disagree */
} sc_graph_error;

typedef struct {
  char *name;
  sc_ttype type;
  sc_id producer;         /* node id, or SC_ID_NONE for a graph input */
  uint32_t result_index;  /* which result of the producer */
  int32_t rank;           /* "rank" of an impl tensor, -1 if not given */
  gboolean has_values;    /* an integer input's declared value range */
  sc_dim values_min, values_max;
  uint32_t n_consumers;   /* after sc_graph_finish */
  sc_id *consumers;       /* node ids, each once, ascending */
} sc_tensor;

typedef struct {
  char *name;
  const sc_op *op;
  sc_value *args;         /* op->n_args bound values */
  uint32_t n_results;
  sc_id *results;         /* tensor ids; SC_ID_NONE for a null result */
  char *src;              /* "model.py:41", or NULL */
  uint32_t n_inputs;      /* distinct tensors read, in argument order */
  sc_id *inputs;
} sc_node;

typedef struct sc_graph sc_graph;

sc_graph *sc_graph_new(sc_symtab *st);
void sc_graph_free(sc_graph *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_graph, sc_graph_free)

sc_symtab *sc_graph_symtab(const sc_graph *g);

/* Building.  Names are copied.  add_node takes ownership of ARGS
 * (op->n_args values, g_new'd array) and infers the result types with the
 * op's shape rule; DECLARED (may be NULL, else n_declared entries, each may
 * be NULL) are the types the file gives, checked against the inferred ones;
 * RESULT_NAMES has one entry per result, NULL for a result not produced.
 * Errors: DUPLICATE, UNDEFINED (an argument tensor id out of range),
 * SHAPE (both types shown), or the shape rule's own error. */
gboolean sc_graph_add_input(sc_graph *g, const char *name, const sc_ttype *type,
                            sc_id *out_tensor, GError **error);
gboolean sc_graph_add_node(sc_graph *g, const char *name, const sc_op *op,
                           sc_value *args, const char *const *result_names,
                           uint32_t n_result_names, const sc_ttype *const *declared,
                           const char *src, sc_id *out_node, GError **error);
/* Two-phase building, for files whose nodes are not in topological order
 * (the bundle loader): declare_node creates the node and its result tensors
 * (types unknown) so that every name exists before any argument is bound;
 * set_node_args then gives the bound arguments (any tensor id of the graph
 * may be named, produced before or after this node); sc_graph_finish orders
 * the nodes, then infers the result types of declared nodes in visiting
 * order and checks them against DECLS.  DECLS (may be NULL) has one entry
 * per result name, each saying what the file gave: a shape, a dtype, both
 * or neither.  Errors: DUPLICATE (a name defined twice). */
typedef struct {
  gboolean has_shape;
  sc_shape shape;
  gboolean has_dtype;
  sc_dtype dtype;
} sc_tensor_decl;
gboolean sc_graph_declare_node(sc_graph *g, const char *name, const sc_op *op,
                               const char *const *result_names, uint32_t n_result_names,
                               const sc_tensor_decl *decls, const char *src,
                               sc_id *out_node, GError **error);
/* Takes ownership of ARGS (op->n_args values, g_new'd).  UNDEFINED if an
 * argument names a tensor id out of range (ARGS are then freed). */
gboolean sc_graph_set_node_args(sc_graph *g, sc_id node, sc_value *args, GError **error);
/* The node that the last failed sc_graph_finish was about (a shape error of
 * a declared node, a node on a cycle), or SC_ID_NONE. */
sc_id sc_graph_error_node(const sc_graph *g);

/* Mark tensors as graph outputs (in order; a tensor may appear twice). */
void sc_graph_add_output(sc_graph *g, sc_id tensor);
/* Compute consumers and the topological order; CYCLE error if none exists.
 * Then infer the types of nodes added with sc_graph_declare_node (in
 * visiting order), with the errors of sc_graph_add_node plus UNDEFINED for
 * a declared node whose arguments were never set and SHAPE for a result
 * count that differs from the names given.  Call once. */
gboolean sc_graph_finish(sc_graph *g, GError **error);
gboolean sc_graph_is_finished(const sc_graph *g);

uint32_t sc_graph_n_tensors(const sc_graph *g);
uint32_t sc_graph_n_nodes(const sc_graph *g);
sc_tensor *sc_graph_tensor(const sc_graph *g, sc_id id);
const sc_node *sc_graph_node(const sc_graph *g, sc_id id);
/* Tensor id by name, or SC_ID_NONE. */
sc_id sc_graph_find_tensor(const sc_graph *g, const char *name);
sc_id sc_graph_find_node(const sc_graph *g, const char *name);
uint32_t sc_graph_n_inputs(const sc_graph *g);
sc_id sc_graph_input(const sc_graph *g, uint32_t i);
uint32_t sc_graph_n_outputs(const sc_graph *g);
sc_id sc_graph_output(const sc_graph *g, uint32_t i);
/* Node ids in visiting order (valid after sc_graph_finish). */
const sc_id *sc_graph_topo_order(const sc_graph *g, uint32_t *n);
/* The type of tensor id, for sc_op_call.type_of with env = the graph. */
const sc_ttype *sc_graph_type_of(void *graph, sc_id tensor);
const char *sc_graph_name_of(void *graph, sc_id tensor);

G_END_DECLS

#endif
