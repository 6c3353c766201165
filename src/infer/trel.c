/* trel.c — T_rel and exploration (GraphGuard's Listing 3): impl tensors
 * related to the visited node join T_rel, impl nodes whose read inputs
 * are all in T_rel join the e-graph (explore_impl_node), rounds of
 * exploration and saturation until nothing joins, and the widened
 * exploration of a node left unmapped.  Exploration decides which impl
 * nodes are asserted (completeness), never what is proved. */
#include "infer/infer-private.h"

#include <string.h>

/* Which arguments node N never reads the values of (a "write into"
 * buffer, data another rank sends): *SELF_ARG is the index of a Tensor
 * argument that is not read (or -1), *LIST_ARG / *LIST_KEEP a Tensor[]
 * argument of which only element LIST_KEEP is read (or -1).
 *  - aten.copy(self, src) / copy_: functionalization's "write src into the
 *    buffer self"; its value is src (canon.c CANON_COPY);
 *  - aten.baddbmm / addmm / addbmm / addmv / addr with beta = 0: PyTorch
 *    ignores the input altogether (Megatron's attention scores, computed
 *    into an uninitialised empty() buffer);
 *  - comm.broadcast(inputs, src): every rank receives inputs[src]
 *    (Megatron's data batch, loaded on TP rank 0 only). */
static void sc_rel_unread_args(const sc_node *n, int32_t *self_arg, int32_t *list_arg,
                        int64_t *list_keep) {
  *self_arg = -1;
  *list_arg = -1;
  *list_keep = -1;
  const char *ns = n->op->ns, *name = n->op->name;
  if (strcmp(ns, "aten") == 0 && (strcmp(name, "copy") == 0 || strcmp(name, "copy_") == 0)) {
    *self_arg = sc_ops_arg_index(n->op, "self");
  } else if (strcmp(ns, "aten") == 0 &&
             (strcmp(name, "baddbmm") == 0 || strcmp(name, "addmm") == 0 ||
              strcmp(name, "addbmm") == 0 || strcmp(name, "addmv") == 0 ||
              strcmp(name, "addr") == 0)) {
    int32_t ib = sc_ops_arg_index(n->op, "beta");
    const sc_value *beta = ib < 0 ? NULL : &n->args[ib];
    if (beta && ((beta->kind == SC_VAL_FLOAT && beta->u.f == 0.0) ||
                 (beta->kind == SC_VAL_INT && sc_dim_is_const(beta->u.i) &&
                  beta->u.i.value == 0)))
      *self_arg = sc_ops_arg_index(n->op, "self");
  } else if (strcmp(ns, "comm") == 0 && strcmp(name, "broadcast") == 0) {
    int32_t ii = sc_ops_arg_index(n->op, "inputs"), isrc = sc_ops_arg_index(n->op, "src");
    if (ii >= 0 && isrc >= 0 && n->args[ii].kind == SC_VAL_TENSOR_LIST &&
        n->args[isrc].kind == SC_VAL_INT && sc_dim_is_const(n->args[isrc].u.i) &&
        n->args[isrc].u.i.value >= 0 &&
        (uint64_t)n->args[isrc].u.i.value < n->args[ii].u.list.n) {
      *list_arg = ii;
      *list_keep = n->args[isrc].u.i.value;
    }
  }
}

/* Does node N, whose unread arguments are SELF_ARG, LIST_ARG and
 * LIST_KEEP (sc_rel_unread_args), read the values of its input tensor T? */
static gboolean reads_input_given(const sc_node *n, sc_id t, int32_t self_arg, int32_t list_arg,
                                  int64_t list_keep) {
  if (self_arg < 0 && list_arg < 0)
    return TRUE;
  for (uint32_t i = 0; i < n->op->n_args; i++) {
    const sc_value *v = &n->args[i];
    if (v->kind == SC_VAL_TENSOR && v->u.tensor == t && (int32_t)i != self_arg)
      return TRUE;
    if (v->kind == SC_VAL_TENSOR_LIST)
      for (uint32_t j = 0; j < v->u.list.n; j++)
        if (v->u.list.ids[j] == t && ((int32_t)i != list_arg || (int64_t)j == list_keep))
          return TRUE;
  }
  return FALSE;
}

/* Does node N read the values of its input tensor T (sc_rel_unread_args)? */
gboolean sc_rel_reads_input(const sc_node *n, sc_id t) {
  int32_t self_arg, list_arg;
  int64_t list_keep;
  sc_rel_unread_args(n, &self_arg, &list_arg, &list_keep);
  return reads_input_given(n, t, self_arg, list_arg, list_keep);
}

/* The same for impl node W, from what sc_rel_trel_init found once (the
 * operator's name compared per node, not per question). */
gboolean sc_rel_reads_input_at(const sc_rel_ctx *c, sc_id w, sc_id t) {
  const sc_rel_unread *u = &c->unread[w];
  if (u->self_arg < 0 && u->list_arg < 0)
    return TRUE;
  return reads_input_given(sc_graph_node(c->impl, w), t, u->self_arg, u->list_arg, u->list_keep);
}

static void count_consumers(sc_rel_ctx *c, sc_id t);

/* W joins the frontier, after the dormant duplicates whose results make
 * the inputs it reads only virtually related (dups.c). */
static void push_ready(sc_rel_ctx *c, sc_id w);

/* Node W, when a dormant duplicate (dups.c), is needed: explored this
 * visit, with the members of its set whose results are in T_rel (their
 * equations and W's then share one class by congruence). */
static void wake(sc_rel_ctx *c, sc_id w) {
  if (c->node_explored[w] != c->visit && c->dormant[w] == c->visit) {
    c->dormant[w] = 0;
    push_ready(c, w);
    sc_rel_dups_wake_related(c, w);
  }
}

static void push_ready(sc_rel_ctx *c, sc_id w) {
  const sc_node *n = sc_graph_node(c->impl, w);
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    sc_id t = n->inputs[i];
    if (c->trel_stamp[t] != c->visit && c->virt_stamp[t] == c->visit)
      wake(c, sc_graph_tensor(c->impl, t)->producer);
  }
  g_array_append_val(c->frontier, w);
}

/* Result T of dormant duplicate D is related wherever its
 * representative's result is: its consumers count it (dups.c). */
static void virtualize(sc_rel_ctx *c, sc_id t) {
  if (t == SC_ID_NONE || c->trel_stamp[t] == c->visit || c->virt_stamp[t] == c->visit)
    return;
  c->virt_stamp[t] = c->visit;
  count_consumers(c, t);
}

/* Every input W reads is related: W joins the frontier, after the dormant
 * duplicates that make the inputs it reads only virtually related; a
 * duplicate none of whose results is related stays dormant instead. */
static void node_ready(sc_rel_ctx *c, sc_id w) {
  if (c->node_explored[w] == c->visit)
    return;
  const sc_node *n = sc_graph_node(c->impl, w);
  sc_id r = c->dup_rep[w];
  if (r != w) {
    gboolean needed = FALSE;
    for (uint32_t k = 0; k < n->n_results && !needed; k++)
      needed = n->results[k] != SC_ID_NONE && c->trel_stamp[n->results[k]] == c->visit;
    if (!needed) {
      c->dormant[w] = c->visit;
      const sc_node *rn = sc_graph_node(c->impl, r);
      for (uint32_t k = 0; k < n->n_results; k++)
        if (rn->results[k] != SC_ID_NONE && (c->trel_stamp[rn->results[k]] == c->visit ||
                                             c->virt_stamp[rn->results[k]] == c->visit))
          virtualize(c, n->results[k]);
      return;
    }
  }
  push_ready(c, w);
}

/* T is related (in T_rel, or virtually): count it for the consumers that
 * read it; those whose read inputs are then all related are ready.  A node
 * is ready when every input whose values it reads is in T_rel
 * (sc_rel_unread_args): an uninitialised buffer that a copy or a beta=0
 * baddbmm overwrites, or the data a rank ignores in a broadcast, relates
 * to nothing of the spec and must not hold the node back.  Readiness only
 * decides which impl nodes are asserted, never what is proved. */
static void count_consumers(sc_rel_ctx *c, sc_id t) {
  const sc_tensor *ten = sc_graph_tensor(c->impl, t);
  for (uint32_t i = 0; i < ten->n_consumers; i++) {
    sc_id w = ten->consumers[i];
    if (!sc_rel_reads_input_at(c, w, t))
      continue;
    if (c->node_stamp[w] != c->visit) {
      c->node_stamp[w] = c->visit;
      c->node_ready[w] = 0;
    }
    if (++c->node_ready[w] == c->unread[w].n_read)
      node_ready(c, w);
  }
}

/* Collective P, a result of which joined T_rel, and the collectives that
 * read the same tensors (siblings.c) are explored: their equations over
 * the shared inputs relate each one's results to the others' (a scatter
 * piece is a slice of the all-reduce of the same partials). */
static void collective_siblings(sc_rel_ctx *c, sc_id p) {
  if (!(sc_graph_node(c->impl, p)->op->flags & SC_OP_COLLECTIVE) ||
      c->node_explored[p] == c->visit)
    return;
  uint32_t cursor = 0;
  sc_id w = sc_rel_collective_sibling(c, p, &cursor);
  if (w == SC_ID_NONE)
    return;
  push_ready(c, p);
  for (; w != SC_ID_NONE; w = sc_rel_collective_sibling(c, p, &cursor))
    if (c->node_explored[w] != c->visit)
      push_ready(c, w);
}

/* Add impl tensor t to T_rel; push consumers that become ready
 * (count_consumers), wake its producer when that is a dormant duplicate,
 * and count the results of its producer's dormant duplicates (dups.c). */
void sc_rel_trel_add(sc_rel_ctx *c, sc_id t) {
  if (c->trel_stamp[t] == c->visit)
    return;
  c->trel_stamp[t] = c->visit;
  if (c->trel_log)
    g_array_append_val(c->trel_log, t);
  sc_rel_replicas_touch(c, t);
  const sc_tensor *ten = sc_graph_tensor(c->impl, t);
  if (c->virt_stamp[t] != c->visit)
    count_consumers(c, t);
  sc_id p = ten->producer;
  if (p == SC_ID_NONE)
    return;
  wake(c, p);
  collective_siblings(c, p);
  /* every other member of p's duplicate set computes t too (dups.c) */
  sc_id d;
  for (guint i = 0; (d = sc_rel_dups_member(c, p, i)) != SC_ID_NONE; i++) {
    if (d == p || c->node_explored[d] == c->visit)
      continue;
    c->dormant[d] = c->visit;
    virtualize(c, sc_graph_node(c->impl, d)->results[ten->result_index]);
  }
}

/* empty, empty_like, empty_strided, new_empty, new_empty_strided and
 * sc.empty: an uninitialised buffer, whose value is the relation
 * language's constant empty(shape) (real-vllm.lemma), depends on no data
 * and is never read by the kernels that write it. */
gboolean sc_rel_is_empty_buffer(const sc_op *op) {
  if (strcmp(op->ns, "aten") == 0)
    return g_str_has_prefix(op->name, "empty") || g_str_has_prefix(op->name, "new_empty");
  return strcmp(op->ns, "sc") == 0 && strcmp(op->name, "empty") == 0;
}

/* Explore impl node W: assert leaf(result k) = W's operator over leaves of
 * its inputs. */
static gboolean sc_rel_explore_impl_node(sc_rel_ctx *c, sc_id w, GError **error) {
  const sc_node *n = sc_graph_node(c->impl, w);
  c->node_explored[w] = c->visit;
  c->res->stats.explored++;
  c->explored_now++;
  g_array_append_val(c->explored_list, w);
  sc_egraph *eg = sc_lang_egraph(c->lang);
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_value *args = sc_rel_args_to_children(c, n, sc_rel_impl_leaf_class, children, error);
  if (!args) {
    g_array_free(children, TRUE);
    return FALSE;
  }
  gboolean ok = TRUE;
  for (uint32_t k = 0; k < n->n_results && ok; k++) {
    if (n->results[k] == SC_ID_NONE)
      continue;
    sc_id cls;
    GError *local = NULL;
    if (n->op->flags & SC_OP_COLLECTIVE)
      cls = sc_rel_add_collective(c, n, (const sc_id *)children->data, children->len, k, &local);
    else
      cls = sc_lang_add_call(c->lang, n->op, args, (const sc_id *)children->data,
                             children->len, k, &local);
    if (cls == SC_ID_NONE) {
      /* An impl node the e-graph cannot express (an unusual collective
       * reduction): its result stays a bare leaf, which is sound. */
      g_clear_error(&local);
      continue;
    }
    sc_id leaf = sc_lang_add_tensor(c->lang, n->results[k]);
    sc_egraph_union(eg, cls, leaf, SC_EXPLAIN_JUST(c->ex, SC_FACT_IMPL, w));
    /* A duplicate's result is its representative's (dups.c): the same
     * operator over the same tensors, or over duplicates of them, which
     * the e-graph does not know unless they are explored too. */
    if (c->dup_rep[w] != w) {
      sc_id rt = sc_graph_node(c->impl, c->dup_rep[w])->results[k];
      if (rt != SC_ID_NONE)
        sc_egraph_union(eg, sc_lang_add_tensor(c->lang, rt), leaf,
                        SC_EXPLAIN_JUST(c->ex, SC_FACT_IMPL, w));
    }
    /* A layout operator (view, cat, slice, permute, ..., or an identity)
     * of related tensors is related: it maps back to them by the inverse
     * layout (a rank's cat of its q, k and v gradients, before it is
     * flattened for the weight gradient). */
    if (n->op->flags & (SC_OP_VIEW | SC_OP_IDENTITY))
      sc_rel_trel_add(c, n->results[k]);
    /* An uninitialised buffer (sc_rel_is_empty_buffer) is related to anything:
     * the output buffers vLLM's kernels write (an empty_like, viewed as
     * heads) must not hold the kernel's node back. */
    if (sc_rel_is_empty_buffer(n->op))
      sc_rel_trel_add(c, n->results[k]);
  }
  sc_rel_free_args(args, n->op->n_args);
  g_array_free(children, TRUE);
  return ok;
}

/* Impl tensors related to the node join T_rel (GraphGuard 4.3.1: a
 * related impl tensor maps cleanly to an input or an output of the spec
 * node; Listing 3 line 27: the inputs of the clean expressions in P_v).
 * P_v is read here as every expression equal to an output or an input
 * together with all their sub-expressions (GraphGuard 4.2.2 rewrites "the
 * EClass corresponding to rho and all its subexpressions"): the impl
 * tensors whose classes lie below an output or input class through any
 * e-node.  That covers the leaves of every clean term of those classes
 * (a leaf of a term is a leaf node of a class below it) and the impl
 * tensors that map onto a sub-expression: the partial sums of a
 * row-parallel layer, sum(mm_0, mm_1), under the bias added after the
 * all-reduce, add(sum(mm_0, mm_1), b).  A walk over the classes, linear
 * in the e-graph, with no term enumeration.  Exploration only decides
 * which impl nodes are asserted (completeness), never what is proved. */
static void sc_rel_grow_trel(sc_rel_ctx *c, const sc_id *out_cls, uint32_t n_out) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (uint32_t k = 0; k < n_out; k++)
    if (out_cls[k] != SC_ID_NONE) {
      sc_id r = sc_egraph_find(eg, out_cls[k]);
      g_array_append_val(stack, r);
    }
  for (guint k = 0; k < c->in_cls->len; k++) {
    sc_id r = sc_egraph_find(eg, g_array_index(c->in_cls, sc_id, k));
    g_array_append_val(stack, r);
  }
  while (stack->len) {
    sc_id cls = g_array_index(stack, sc_id, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    if (!g_hash_table_add(seen, GUINT_TO_POINTER(cls + 1)))
      continue;
    uint32_t nn = 0;
    const sc_id *nodes = sc_egraph_class_nodes(eg, cls, &nn);
    for (uint32_t i = 0; i < nn; i++) {
      if (sc_egraph_node_op(eg, nodes[i]) == SC_LANG_OP_TENSOR)
        sc_rel_trel_add(c, sc_egraph_node_attr(eg, nodes[i]));
      uint32_t arity = sc_egraph_node_arity(eg, nodes[i]);
      const sc_id *kids = sc_egraph_node_children(eg, nodes[i]);
      for (uint32_t j = 0; j < arity; j++) {
        sc_id r = sc_egraph_find(eg, kids[j]);
        if (!g_hash_table_contains(seen, GUINT_TO_POINTER(r + 1)))
          g_array_append_val(stack, r);
      }
    }
  }
  g_array_free(stack, TRUE);
  g_hash_table_unref(seen);
}

/* The overloads of OP's operator (same namespace and name, or the
 * relation language's sc.NAME, OP excluded), as op ids in registry order:
 * an implementation writes arange.start(off, off + n) where the spec
 * writes arange(n). */
static GArray *sc_rel_overloads_of(const sc_op *op) {
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  uint32_t n_ops = sc_ops_count();
  for (uint32_t i = 0; i < n_ops; i++) {
    const sc_op *o = sc_ops_at(i);
    if (o == op || strcmp(o->name, op->name) != 0 ||
        (strcmp(o->ns, op->ns) != 0 && strcmp(o->ns, "sc") != 0))
      continue;
    g_array_append_val(ids, o->id);
  }
  return ids;
}

static sc_id sc_rel_constant_producer(const sc_rel_ctx *c, sc_id t);

/* Could node N's read inputs be made of constants (sc_rel_add_sourceless_inputs):
 * does it read a constant (sc_rel_constant_producer: a creation node's
 * result, perhaps behind identities), or, a collective, an impl input?
 * A property of the graph, decided once. */
static gboolean sc_rel_may_read_constant(const sc_rel_ctx *c, const sc_node *n) {
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    sc_id t = n->inputs[i];
    if (!sc_rel_reads_input(n, t))
      continue;
    if (sc_rel_constant_producer(c, t) != SC_ID_NONE)
      return TRUE;
    if (sc_graph_tensor(c->impl, t)->producer == SC_ID_NONE && (n->op->flags & SC_OP_COLLECTIVE))
      return TRUE;
  }
  return FALSE;
}

void sc_rel_trel_init(sc_rel_ctx *c) {
  c->overloads = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                       (GDestroyNotify)g_array_unref);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, c->sourceless);
  while (g_hash_table_iter_next(&it, &key, NULL))
    g_hash_table_insert(c->overloads, key,
                        sc_rel_overloads_of(sc_ops_at(GPOINTER_TO_UINT(key) - 1)));
  int32_t max_rank = -1;
  for (uint32_t t = 0; t < sc_graph_n_tensors(c->impl); t++)
    max_rank = MAX(max_rank, sc_graph_tensor(c->impl, t)->rank);
  c->widen_hops = sc_rel_widen_hops((uint32_t)(max_rank + 1));
  c->dd_nodes = g_array_new(FALSE, FALSE, sizeof(sc_id));
  c->const_readers = g_array_new(FALSE, FALSE, sizeof(sc_id));
  uint32_t nn = sc_graph_n_nodes(c->impl);
  c->unread = g_new(sc_rel_unread, nn ? nn : 1);
  for (sc_id w = 0; w < nn; w++) {
    const sc_node *n = sc_graph_node(c->impl, w);
    sc_rel_unread *u = &c->unread[w];
    sc_rel_unread_args(n, &u->self_arg, &u->list_arg, &u->list_keep);
    u->n_read = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++)
      u->n_read += reads_input_given(n, n->inputs[i], u->self_arg, u->list_arg, u->list_keep)
                       ? 1 : 0;
    if (n->op->flags & SC_OP_DATA_DEPENDENT)
      g_array_append_val(c->dd_nodes, w);
    if (sc_rel_may_read_constant(c, n))
      g_array_append_val(c->const_readers, w);
  }
}

void sc_rel_trel_free(sc_rel_ctx *c) {
  if (c->overloads)
    g_hash_table_unref(c->overloads);
  if (c->dd_nodes)
    g_array_free(c->dd_nodes, TRUE);
  if (c->const_readers)
    g_array_free(c->const_readers, TRUE);
  g_free(c->unread);
  c->unread = NULL;
  c->overloads = NULL;
  c->dd_nodes = c->const_readers = NULL;
}

/* Is an e-node of an overload in IDS (sc_rel_overloads_of) in the e-graph? */
static gboolean sc_rel_overload_in_egraph(sc_egraph *eg, const GArray *ids) {
  for (guint i = 0; i < ids->len; i++) {
    uint32_t n_cls = 0;
    sc_egraph_classes_with_op(eg, g_array_index(ids, uint32_t, i), &n_cls);
    if (n_cls > 0)
      return TRUE;
  }
  return FALSE;
}

/* Creation nodes of the impl (no inputs) join when an e-node of the same
 * operator (or of another overload of it: sc_rel_overload_in_egraph) is
 * already in the e-graph; an uninitialised buffer
 * (sc_rel_is_empty_buffer) also when an empty() of the relation language is: the
 * spec's buffers map to it (real-vllm.lemma), while the impl's are ATen
 * nodes of their own shapes. */
static void sc_rel_add_sourceless(sc_rel_ctx *c) {
  GHashTableIter it;
  gpointer key, val;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  const sc_op *sc_empty = sc_ops_lookup("sc.empty.default", NULL);
  g_hash_table_iter_init(&it, c->sourceless);
  while (g_hash_table_iter_next(&it, &key, &val)) {
    uint32_t op = GPOINTER_TO_UINT(key) - 1;
    uint32_t n_cls = 0;
    sc_egraph_classes_with_op(eg, op, &n_cls);
    if (n_cls == 0 && sc_empty != NULL && sc_rel_is_empty_buffer(sc_ops_at(op)))
      sc_egraph_classes_with_op(eg, sc_empty->id, &n_cls);
    if (n_cls == 0 && !sc_rel_overload_in_egraph(eg, g_hash_table_lookup(c->overloads, key)))
      continue;
    GArray *nodes = val;
    for (guint i = 0; i < nodes->len; i++) {
      sc_id w = g_array_index(nodes, sc_id, i);
      if (c->node_explored[w] != c->visit)
        g_array_append_val(c->frontier, w);
    }
  }
}

/* Producers of data-dependent results (ops.h, SC_OP_DATA_DEPENDENT) that
 * are related: an impl tensor nonzero(m) in T_rel is a leaf, and what
 * makes it more than a list of coordinates (distinct, in range: the
 * premise of real-moe.lemma's index_put_nonzero_sum) is its equation, so
 * its producer is asserted too, with its input as a bare leaf (m need not
 * be related: the equation of an impl node is a fact whatever it reads).
 * One node per related result; exploration decides what is asserted,
 * never what is proved. */
static void sc_rel_add_dd_producers(sc_rel_ctx *c) {
  for (guint i = 0; i < c->dd_nodes->len; i++) {
    sc_id w = g_array_index(c->dd_nodes, sc_id, i);
    const sc_node *n = sc_graph_node(c->impl, w);
    if (c->node_explored[w] == c->visit)
      continue;
    for (uint32_t k = 0; k < n->n_results; k++) {
      if (n->results[k] != SC_ID_NONE && c->trel_stamp[n->results[k]] == c->visit) {
        g_array_append_val(c->frontier, w);
        break;
      }
    }
  }
}

/* The creation node that makes impl tensor T, through identities
 * (detach, clone: SC_OP_IDENTITY), or SC_ID_NONE.  A creation node has no
 * inputs (arange, full, zeros) or reads only the shape and dtype of its
 * input (zeros_like, ones_like, full_like): its result is a constant. */
static sc_id sc_rel_constant_producer(const sc_rel_ctx *c, sc_id t) {
  for (uint32_t hops = 0; hops < 8; hops++) {
    sc_id p = sc_graph_tensor(c->impl, t)->producer;
    if (p == SC_ID_NONE)
      return SC_ID_NONE;
    const sc_node *pn = sc_graph_node(c->impl, p);
    if (pn->op->flags & SC_OP_CREATION)
      return p;
    if (!(pn->op->flags & SC_OP_IDENTITY) || pn->n_inputs < 1)
      return SC_ID_NONE;
    t = pn->inputs[0];
  }
  return SC_ID_NONE;
}

/* Constants that an otherwise related impl node reads.  A creation node
 * (sc_rel_constant_producer: arange, full, zeros; zeros_like(b), perhaps
 * detached, the zero term a rank adds where another adds the bias b) relates to
 * nothing of the spec by itself, so it never joins T_rel on its own, and
 * an impl node reading one never becomes ready: each rank's
 * index(probs, [arange(n), expert]) or index_put(buffer, [arange(n),
 * expert], grad), whose other inputs are related.  When every input such
 * a node reads is in T_rel or made by such a creation node (and one at
 * least is in T_rel), the creation nodes are asserted and their results
 * join T_rel, which makes the node ready.  So do the impl inputs that a
 * collective reads beside related tensors: the padding-only shards of an
 * uneven split over more ranks than it has data for (8 rows over 6 ranks
 * in pieces of 2) are in no relation, yet their all_gather, sliced back
 * to the data, is the spec's tensor; they join as leaves of unknown value.
 * Exploration decides what is asserted, never what is proved. */
static void sc_rel_add_sourceless_inputs(sc_rel_ctx *c) {
  /* only the nodes that may read a constant (sc_rel_trel_init), in id order */
  for (guint ci = 0; ci < c->const_readers->len; ci++) {
    sc_id w = g_array_index(c->const_readers, sc_id, ci);
    /* only nodes that some related tensor reaches (sc_rel_trel_add counted it) */
    if (c->node_explored[w] == c->visit || c->node_stamp[w] != c->visit ||
        c->node_ready[w] == 0)
      continue;
    const sc_node *n = sc_graph_node(c->impl, w);
    gboolean related = FALSE, constant = FALSE, ok = TRUE;
    for (uint32_t i = 0; i < n->n_inputs && ok; i++) {
      sc_id t = n->inputs[i];
      if (!sc_rel_reads_input_at(c, w, t))
        continue;
      if (c->trel_stamp[t] == c->visit) {
        related = TRUE;
        continue;
      }
      sc_id p = sc_graph_tensor(c->impl, t)->producer;
      if (sc_rel_constant_producer(c, t) != SC_ID_NONE)
        constant = TRUE;
      else if (p == SC_ID_NONE && (n->op->flags & SC_OP_COLLECTIVE))
        constant = TRUE; /* an impl input no relation names, gathered with related ones */
      else
        ok = FALSE;
    }
    if (!ok || !related || !constant)
      continue;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      sc_id t = n->inputs[i];
      if (!sc_rel_reads_input_at(c, w, t) || c->trel_stamp[t] == c->visit)
        continue;
      /* the producer, and the identities between it and a creation node */
      sc_id stop = sc_rel_constant_producer(c, t);
      for (sc_id u = t;;) {
        sc_id p = sc_graph_tensor(c->impl, u)->producer;
        if (p == SC_ID_NONE)
          break;
        if (c->node_explored[p] != c->visit)
          g_array_append_val(c->frontier, p);
        if (p == stop || stop == SC_ID_NONE)
          break;
        u = sc_graph_node(c->impl, p)->inputs[0];
      }
      sc_rel_trel_add(c, t);
    }
  }
}

/* Explore until no impl node joins (Listing 3).  The first saturation
 * waits for the impl nodes that the inputs' relations reach: before they
 * join, the several forms of an input's relation (one per rank tensor
 * aliasing a shard: cat(r0.add_1, ..., r3.add_1) and cat(..., view(r3.view_4)))
 * are unrelated, and the cat lemmas combine them, exponentially in the
 * degree; the impl equations (r3.view_4 = view(r3.add_1)) merge them.  So
 * saturation runs after each round of exploration, and once when a round
 * finds nothing to explore before any saturation (lemma-made terms may then
 * let impl nodes join).  Only the order changes, not what is proved. */
gboolean sc_rel_explore(sc_rel_ctx *c, sc_runner *runner, const sc_id *out_cls, uint32_t n_out,
                        const char **limit_hit, GError **error) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  gboolean saturated = FALSE;
  for (uint32_t round = 0; round < c->opts->max_rounds; round++) {
    sc_rel_grow_trel(c, out_cls, n_out);
    sc_rel_add_sourceless(c);
    sc_rel_add_dd_producers(c);
    sc_rel_add_sourceless_inputs(c);
    if (sc_rel_replicas_add(c))
      saturated = FALSE; /* new equalities: saturate again */
    if (c->frontier->len == 0) {
      if (saturated)
        break;
      sc_rel_saturate_ac(c, runner, limit_hit);
      saturated = TRUE;
      continue;
    }
    GArray *batch = c->frontier;
    c->frontier = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (guint i = 0; i < batch->len; i++) {
      sc_id w = g_array_index(batch, sc_id, i);
      if (c->node_explored[w] == c->visit)
        continue;
      if (!sc_rel_explore_impl_node(c, w, error)) {
        g_array_free(batch, TRUE);
        return FALSE;
      }
    }
    g_array_free(batch, TRUE);
    sc_egraph_rebuild(eg);
    sc_rel_saturate_ac(c, runner, limit_hit);
    saturated = TRUE;
  }
  return TRUE;
}

/* Widened exploration, for a node that Listing 3's exploration leaves
 * unmapped: the results of every impl node explored at this node join
 * T_rel, so that their consumers are explored too, up to c->widen_hops
 * operators past the related tensors (sc_rel_widen_hops).  GraphGuard's
 * observation (an impl node that maps to a spec output has inputs related
 * to the spec node's inputs or outputs) misses chains that rescale a
 * partial result before it is reduced: a micro-batch's mean loss divided
 * by the number of micro-batches, accumulated, then averaged over the
 * ranks.  At most c->widen_hops operators deep and about WIDEN_MAX_NODES
 * more nodes.  Only run on failure, so a node that maps costs what it
 * cost; like all exploration it decides what is asserted, never what is
 * proved. */
#define WIDEN_MAX_NODES 256

uint32_t sc_rel_widen_hops(uint32_t n_ranks) {
  return MAX(WIDEN_HOPS, 2 * n_ranks + 2);
}

gboolean sc_rel_widen(sc_rel_ctx *c, sc_runner *runner, const sc_id *out_cls, uint32_t n_out,
                      const char **limit_hit, GError **error) {
  guint done = 0, before = c->explored_list->len;
  c->widened = TRUE;
  sc_rel_gather_pieces(c);
  for (uint32_t hop = 0; hop < c->widen_hops && c->explored_list->len - before < WIDEN_MAX_NODES;
       hop++) {
    guint upto = c->explored_list->len;
    for (guint i = done; i < upto; i++) {
      const sc_node *w = sc_graph_node(c->impl, g_array_index(c->explored_list, sc_id, i));
      for (uint32_t k = 0; k < w->n_results; k++)
        if (w->results[k] != SC_ID_NONE)
          sc_rel_trel_add(c, w->results[k]);
    }
    done = upto;
    if (c->frontier->len == 0)
      break;
    if (!sc_rel_explore(c, runner, out_cls, n_out, limit_hit, error))
      return FALSE;
  }
  return TRUE;
}
