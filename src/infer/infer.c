/* infer.c — relation inference, GraphGuard's Listings 1-3 (see infer.h).
 *
 * Invariants:
 *  - rel[t] holds the clean expressions (bound to the impl graph) known for
 *    spec tensor t; it is filled for inputs and assumed tensors before the
 *    walk and for each visited node's results after it.  Expressions come
 *    from the bundle (borrowed) or from extraction (owned by ctx->owned).
 *  - Per-node state (T_rel membership, explored impl nodes, input counts)
 *    is stamped with the visit number instead of cleared, so that a visit
 *    costs what its neighbourhood costs, never the size of the impl graph
 *    (GraphGuard's linear scaling). */
#include "shardcheck/infer.h"

#include "shardcheck/extract.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(sc-infer-error-quark, sc_infer_error)

const char *sc_verdict_name(sc_verdict v) {
  switch (v) {
#define SC_X_VERDICT(sym, word) case sym: return word;
    SC_VERDICTS(SC_X_VERDICT)
#undef SC_X_VERDICT
  }
  return "?";
}

const char *sc_failure_kind_name(sc_failure_kind k) {
  switch (k) {
#define SC_X_FAILURE(sym, word) case sym: return word;
    SC_FAILURE_KINDS(SC_X_FAILURE)
#undef SC_X_FAILURE
  }
  return "?";
}

void sc_infer_options_init(sc_infer_options *opts) {
  memset(opts, 0, sizeof *opts);
  sc_runner_limits_init(&opts->limits);
  opts->max_terms = 24;
  opts->max_term_size = 64;
  opts->max_rounds = 64;
}

struct sc_infer_result {
  const sc_bundle *bundle;
  sc_verdict verdict;
  GPtrArray **tensor_texts;  /* per spec tensor: char* (owned) or NULL */
  GPtrArray **output_texts;  /* per spec tensor: char* (owned) or NULL */
  GArray *checked;           /* sc_id */
  sc_failure_kind fkind;
  sc_id fnode;
  GArray *funmapped;         /* sc_id */
  GPtrArray *fnearest;       /* char* */
  uint32_t fexplored;
  char *limit_reason;
  GArray *expectations;      /* sc_infer_expectation */
  GPtrArray *explanations;   /* char*, one per visited node (with explain) */
  GPtrArray *fundecided;     /* char*: lemmas whose conditions were undecided */
  sc_infer_stats stats;
};

/* --- the walk's state --- */

typedef struct {
  const sc_bundle *bundle;
  const sc_infer_options *opts;
  sc_graph *spec, *impl;
  sc_symtab *st;
  sc_infer_result *res;
  GPtrArray **rel;           /* per spec tensor: sc_texpr* (borrowed) */
  GPtrArray *owned;          /* sc_texpr* made here */
  gboolean *impl_is_output;  /* per impl tensor */
  /* stamps */
  uint32_t visit;
  uint32_t *trel_stamp;      /* per impl tensor: visit when in T_rel */
  uint32_t *node_stamp;      /* per impl node: visit of the counts below */
  uint32_t *node_ready;      /* inputs of the node in T_rel this visit */
  uint32_t *node_explored;   /* visit when explored */
  GHashTable *sourceless;    /* op id -> GArray of impl node ids with no input */
  /* per-node scratch */
  sc_lang *lang;
  sc_lemma_rules *rules;
  sc_rewrite *const *rewrites;
  uint32_t n_rewrites;
  GArray *frontier;          /* impl node ids */
  GString *conflict;         /* first conflict message of this visit */
  uint32_t explored_now;     /* impl nodes explored in this visit */
  GArray *in_cls;            /* classes of the node's inputs, this visit */
  /* deferred nodes (see defer_outputs) */
  uint32_t *defer_depth;     /* per spec tensor: 0, or the deferral depth of its relation */
  gboolean pending;          /* the failure of the first deferred node is recorded */
  GArray *explored_list;     /* impl nodes explored this visit, in order */
} ctx_t;

/* How many spec nodes in a row may have a relation that is not clean
 * (defer_outputs). */
#define MAX_DEFER_DEPTH 3
/* How many expressions a deferred tensor keeps. */
#define MAX_DEFER_TERMS 8

static void on_conflict(sc_lang *lang, sc_id a, sc_id b, uint32_t just, void *user);

/* Add impl tensor t to T_rel; push consumers that become ready. */
static void trel_add(ctx_t *c, sc_id t) {
  if (c->trel_stamp[t] == c->visit)
    return;
  c->trel_stamp[t] = c->visit;
  const sc_tensor *ten = sc_graph_tensor(c->impl, t);
  for (uint32_t i = 0; i < ten->n_consumers; i++) {
    sc_id w = ten->consumers[i];
    if (c->node_stamp[w] != c->visit) {
      c->node_stamp[w] = c->visit;
      c->node_ready[w] = 0;
    }
    const sc_node *wn = sc_graph_node(c->impl, w);
    if (++c->node_ready[w] == wn->n_inputs && c->node_explored[w] != c->visit)
      g_array_append_val(c->frontier, w);
  }
}

/* Copy ARGS, replacing tensor ids by child indices and appending the
 * classes CLASS_OF gives for them to CHILDREN.  Returns a g_new'd array of
 * op->n_args values (free with free_args). */
typedef sc_id (*class_of_fn)(ctx_t *c, sc_id tensor, GError **error);

static void free_args(sc_value *args, uint32_t n) {
  if (!args)
    return;
  for (uint32_t i = 0; i < n; i++)
    sc_value_clear(&args[i]);
  g_free(args);
}

static sc_value *args_to_children(ctx_t *c, const sc_node *n, class_of_fn class_of,
                                  GArray *children, GError **error) {
  uint32_t na = n->op->n_args;
  sc_value *args = g_new0(sc_value, na ? na : 1);
  for (uint32_t i = 0; i < na; i++) {
    sc_value_copy(&args[i], &n->args[i]);
    if (args[i].kind == SC_VAL_TENSOR) {
      sc_id cls = class_of(c, args[i].u.tensor, error);
      if (cls == SC_ID_NONE) {
        free_args(args, na);
        return NULL;
      }
      args[i].u.tensor = children->len;
      g_array_append_val(children, cls);
    } else if (args[i].kind == SC_VAL_TENSOR_LIST) {
      for (uint32_t j = 0; j < args[i].u.list.n; j++) {
        if (args[i].u.list.ids[j] == SC_ID_NONE)
          continue;
        sc_id cls = class_of(c, args[i].u.list.ids[j], error);
        if (cls == SC_ID_NONE) {
          free_args(args, na);
          return NULL;
        }
        args[i].u.list.ids[j] = children->len;
        g_array_append_val(children, cls);
      }
    }
  }
  return args;
}

static sc_id spec_input_class(ctx_t *c, sc_id u, GError **error);

/* The class of a deferred spec tensor U (defer_outputs): its producer
 * applied to its inputs' classes, so that the consumer's e-graph holds
 * the deferred node itself, with everything known of its inputs (a
 * replicated bias is one class of all its copies, which the deferred
 * relation's terms, over single copies, cannot say). */
static sc_id deferred_class(ctx_t *c, sc_id u, GError **error) {
  const sc_tensor *ten = sc_graph_tensor(c->spec, u);
  const sc_node *pn = sc_graph_node(c->spec, ten->producer);
  uint32_t k = 0;
  while (k < pn->n_results && pn->results[k] != u)
    k++;
  g_assert(k < pn->n_results);
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_value *args = args_to_children(c, pn, spec_input_class, children, error);
  sc_id cls = SC_ID_NONE;
  if (args) {
    GError *local = NULL;
    cls = sc_lang_add_call(c->lang, pn->op, args, (const sc_id *)children->data, children->len,
                           k, &local);
    if (cls == SC_ID_NONE) {
      g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                  "internal error: deferred spec node '%s' cannot be applied to its inputs' "
                  "relations: %s", pn->name, local->message);
      g_error_free(local);
    }
    free_args(args, pn->op->n_args);
  }
  g_array_free(children, TRUE);
  return cls;
}

/* The class of spec tensor u: all its known expressions, unioned (and,
 * for a deferred tensor, its producer over its inputs' classes). */
static sc_id spec_input_class(ctx_t *c, sc_id u, GError **error) {
  GPtrArray *exprs = c->rel[u];
  if (!exprs || exprs->len == 0) {
    g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                "internal error: spec tensor '%s' has no relation when it is used",
                sc_graph_tensor(c->spec, u)->name);
    return SC_ID_NONE;
  }
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_id cls = SC_ID_NONE;
  for (guint i = 0; i < exprs->len; i++) {
    const sc_texpr *t = g_ptr_array_index(exprs, i);
    sc_id k = sc_lang_add_texpr(c->lang, t, error);
    if (k == SC_ID_NONE)
      return SC_ID_NONE;
    GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
    sc_texpr_collect_leaves(t, leaves);
    for (guint j = 0; j < leaves->len; j++)
      trel_add(c, g_array_index(leaves, sc_id, j));
    g_array_free(leaves, TRUE);
    if (cls == SC_ID_NONE)
      cls = k;
    else
      sc_egraph_union(eg, cls, k, SC_JUST_ASSERTED);
  }
  if (c->defer_depth[u] > 0) {
    sc_id k = deferred_class(c, u, error);
    if (k == SC_ID_NONE)
      return SC_ID_NONE;
    sc_egraph_union(eg, cls, k, SC_JUST_ASSERTED);
  }
  return sc_egraph_find(eg, cls);
}

static sc_id impl_leaf_class(ctx_t *c, sc_id t, GError **error) {
  (void)error;
  return sc_lang_add_tensor(c->lang, t);
}

/* --- collectives by their semantics (spec table) --- */

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

static const sc_value *node_arg(const sc_node *n, const char *name) {
  int32_t i = arg_index(n->op, name);
  return i < 0 ? NULL : &n->args[i];
}

/* sc.cat or sc.sum over CLASSES (n >= 1). */
static sc_id add_variadic(ctx_t *c, const char *func, const sc_id *classes, uint32_t n,
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
  free_args(args, op->n_args);
  return cls;
}

/* slice(x, dim, start, end) of class X. */
static sc_id add_slice(ctx_t *c, sc_id x, sc_dim dim, sc_dim start, sc_dim end,
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
  free_args(args, op->n_args);
  return cls;
}

static gboolean dim_arg(const sc_node *n, const char *name, uint32_t rank, sc_dim *out,
                        GError **error) {
  const sc_value *v = node_arg(n, name);
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
static sc_id add_binary(ctx_t *c, const char *qualname, sc_id a, const void *b, GError **error) {
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
  free_args(args, op->n_args);
  return cls;
}

/* The class of result K of collective node N, from its inputs' classes. */
static sc_id add_collective(ctx_t *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                            uint32_t k, GError **error) {
  const char *name = n->op->name;
  const sc_ttype *t0 = sc_lang_class_type(c->lang, in[0]);
  uint32_t rank = t0->shape.rank;
  if (strcmp(name, "all_reduce") == 0) {
    const sc_value *opv = node_arg(n, "op");
    const char *rop = (opv && opv->kind == SC_VAL_STR) ? opv->u.s : "sum";
    if (strcmp(rop, "sum") == 0)
      return add_variadic(c, "sum", in, n_in, NULL, error);
    if (strcmp(rop, "avg") == 0) {
      /* avg = sum / n (true division, as the collective computes it) */
      sc_id s = add_variadic(c, "sum", in, n_in, NULL, error);
      if (s == SC_ID_NONE)
        return SC_ID_NONE;
      sc_value sv = sc_value_int((int64_t)n_in);
      return add_binary(c, "aten.div.Scalar", s, &sv, error);
    }
    if (strcmp(rop, "max") == 0 || strcmp(rop, "min") == 0) {
      /* an elementwise max (min) folded over the ranks */
      const char *fn = rop[1] == 'a' ? "aten.maximum.default" : "aten.minimum.default";
      sc_id acc = in[0];
      for (uint32_t j = 1; j < n_in && acc != SC_ID_NONE; j++)
        acc = add_binary(c, fn, acc, &in[j], error);
      return acc;
    }
    return SC_ID_NONE; /* another reduction: stays a bare leaf */
  }
  if (strcmp(name, "all_gather") == 0) {
    sc_dim d;
    if (!dim_arg(n, "dim", rank, &d, error))
      return SC_ID_NONE;
    return add_variadic(c, "cat", in, n_in, &d, error);
  }
  if (strcmp(name, "reduce_scatter") == 0) {
    const sc_value *opv = node_arg(n, "op");
    if (opv && opv->kind == SC_VAL_STR && strcmp(opv->u.s, "sum") != 0)
      return SC_ID_NONE;
    sc_dim d;
    if (!dim_arg(n, "dim", rank, &d, error))
      return SC_ID_NONE;
    sc_id s = add_variadic(c, "sum", in, n_in, NULL, error);
    if (s == SC_ID_NONE)
      return SC_ID_NONE;
    sc_dim len = t0->shape.dims[d.value], part;
    if (!sc_dim_floordiv(c->st, len, sc_dim_const(n_in), &part))
      return SC_ID_NONE;
    sc_dim start = sc_dim_mul(c->st, part, sc_dim_const(k));
    sc_dim end = sc_dim_add(c->st, start, part);
    return add_slice(c, s, d, start, end, error);
  }
  if (strcmp(name, "all_to_all") == 0) {
    sc_dim sd, cd;
    if (!dim_arg(n, "split_dim", rank, &sd, error) || !dim_arg(n, "concat_dim", rank, &cd, error))
      return SC_ID_NONE;
    sc_dim len = t0->shape.dims[sd.value], part;
    if (!sc_dim_floordiv(c->st, len, sc_dim_const(n_in), &part))
      return SC_ID_NONE;
    sc_dim start = sc_dim_mul(c->st, part, sc_dim_const(k));
    sc_dim end = sc_dim_add(c->st, start, part);
    sc_id *chunks = g_new(sc_id, n_in);
    for (uint32_t j = 0; j < n_in; j++) {
      chunks[j] = add_slice(c, in[j], sd, start, end, error);
      if (chunks[j] == SC_ID_NONE) {
        g_free(chunks);
        return SC_ID_NONE;
      }
    }
    sc_id r = add_variadic(c, "cat", chunks, n_in, &cd, error);
    g_free(chunks);
    return r;
  }
  if (strcmp(name, "broadcast") == 0) {
    const sc_value *src = node_arg(n, "src");
    int64_t s = (src && src->kind == SC_VAL_INT && sc_dim_is_const(src->u.i)) ? src->u.i.value : 0;
    if (s < 0 || (uint64_t)s >= n_in)
      return SC_ID_NONE;
    return in[s];
  }
  if (strcmp(name, "send_recv") == 0)
    return in[0];
  return SC_ID_NONE;
}

/* Explore impl node W: assert leaf(result k) = W's operator over leaves of
 * its inputs. */
static gboolean explore_impl_node(ctx_t *c, sc_id w, GError **error) {
  const sc_node *n = sc_graph_node(c->impl, w);
  c->node_explored[w] = c->visit;
  c->res->stats.explored++;
  c->explored_now++;
  g_array_append_val(c->explored_list, w);
  sc_egraph *eg = sc_lang_egraph(c->lang);
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_value *args = args_to_children(c, n, impl_leaf_class, children, error);
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
      cls = add_collective(c, n, (const sc_id *)children->data, children->len, k, &local);
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
    sc_egraph_union(eg, cls, leaf, SC_JUST_ASSERTED);
    /* A layout operator (view, cat, slice, permute, ..., or an identity)
     * of related tensors is related: it maps back to them by the inverse
     * layout (a rank's cat of its q, k and v gradients, before it is
     * flattened for the weight gradient). */
    if (n->op->flags & (SC_OP_VIEW | SC_OP_IDENTITY))
      trel_add(c, n->results[k]);
  }
  free_args(args, n->op->n_args);
  g_array_free(children, TRUE);
  return ok;
}

/* --- extraction --- */

typedef struct {
  const sc_lang *lang;
  const gboolean *allowed_leaf; /* NULL: any tensor leaf */
} weight_ctx;

static uint32_t clean_weight(const sc_egraph *eg, sc_id node, void *user) {
  weight_ctx *w = user;
  if (!sc_lang_node_is_clean(w->lang, node))
    return 0;
  if (w->allowed_leaf && sc_egraph_node_op(eg, node) == SC_LANG_OP_TENSOR &&
      !w->allowed_leaf[sc_egraph_node_attr(eg, node)])
    return 0;
  return 1;
}

static uint32_t nearest_weight(const sc_egraph *eg, sc_id node, void *user) {
  weight_ctx *w = user;
  if (sc_egraph_node_op(eg, node) == SC_LANG_OP_OPAQUE)
    return 0;
  return sc_lang_node_is_clean(w->lang, node) ? 1 : 8;
}

static gint cmp_u32(gconstpointer a, gconstpointer b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Clean terms of CLS as bound expressions (appended to OUT, owned by
 * ctx->owned), at most max_terms. */
static void clean_exprs(ctx_t *c, sc_id cls, const gboolean *allowed_leaf, GPtrArray *out) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  weight_ctx wc = {c->lang, allowed_leaf};
  /* four times as many terms as are kept: the small variants of one
   * family (views of views of one impl tensor) must not use up the
   * enumeration before a larger family's smallest term (the cat of every
   * rank's shard) is reached */
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, cls), 4 * c->opts->max_terms,
                                         c->opts->max_term_size, clean_weight, &wc, NULL);
  /* GraphGuard keeps the simplest expression of each self-provable family
   * (section 4.3.2).  Lemma-only rewrites keep the set of impl tensors a
   * term reads, so the smallest term per set of leaves stands for its
   * family: larger terms over the same leaves are dropped.  At most
   * max_terms families are kept. */
  GHashTable *families = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  guint kept = 0;
  for (guint i = 0; i < terms->len && kept < c->opts->max_terms; i++) {
    const sc_term *term = g_ptr_array_index(terms, i);
    GArray *leaves = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t j = 0; j < sc_term_n_nodes(term); j++) {
      const sc_term_node *tn = sc_term_node_at(term, j);
      if (tn->op == SC_LANG_OP_TENSOR)
        g_array_append_val(leaves, tn->attr);
    }
    g_array_sort(leaves, cmp_u32);
    GString *key = g_string_new(NULL);
    for (guint j = 0; j < leaves->len; j++)
      if (j == 0 || g_array_index(leaves, uint32_t, j) != g_array_index(leaves, uint32_t, j - 1))
        g_string_append_printf(key, "%u,", g_array_index(leaves, uint32_t, j));
    g_array_free(leaves, TRUE);
    if (!g_hash_table_add(families, g_string_free(key, FALSE)))
      continue;
    sc_expr *e = sc_lang_term_to_expr(c->lang, term);
    if (!e)
      continue;
    /* Binding rejects what is not clean after flattening (a repeated
     * partial in a sum is a scaling). */
    sc_texpr *t = sc_texpr_bind(e, c->impl, TRUE, NULL);
    sc_expr_free(e);
    if (!t)
      continue;
    g_ptr_array_add(c->owned, t);
    g_ptr_array_add(out, t);
    kept++;
  }
  g_hash_table_unref(families);
  g_ptr_array_unref(terms);
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
static void grow_trel(ctx_t *c, const sc_id *out_cls, uint32_t n_out) {
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
        trel_add(c, sc_egraph_node_attr(eg, nodes[i]));
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

/* Creation nodes of the impl (no inputs) join when an e-node of the same
 * operator is already in the e-graph. */
static void add_sourceless(ctx_t *c) {
  GHashTableIter it;
  gpointer key, val;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  g_hash_table_iter_init(&it, c->sourceless);
  while (g_hash_table_iter_next(&it, &key, &val)) {
    uint32_t op = GPOINTER_TO_UINT(key) - 1;
    uint32_t n_cls = 0;
    sc_egraph_classes_with_op(eg, op, &n_cls);
    if (n_cls == 0)
      continue;
    GArray *nodes = val;
    for (guint i = 0; i < nodes->len; i++) {
      sc_id w = g_array_index(nodes, sc_id, i);
      if (c->node_explored[w] != c->visit)
        g_array_append_val(c->frontier, w);
    }
  }
}

static const char *runner_limit_word(sc_stop_reason r) {
  return (r == SC_STOP_NODE_LIMIT || r == SC_STOP_TIME_LIMIT || r == SC_STOP_ITERATION_LIMIT)
             ? sc_stop_reason_name(r)
             : NULL;
}

/* Saturate; remember a limit that stopped it. */
static void saturate(ctx_t *c, sc_runner *runner, const char **limit_hit) {
  sc_stop_reason r = sc_runner_run(runner, c->rewrites, c->n_rewrites);
  for (uint32_t i = 0; i < sc_runner_n_iterations(runner); i++)
    c->res->stats.applied += sc_runner_iteration(runner, i)->applied;
  const char *w = runner_limit_word(r);
  if (w && r != SC_STOP_ITERATION_LIMIT)
    *limit_hit = w;
}

/* --- sums as multisets --- */

typedef struct {
  sc_egraph *eg;
  uint32_t sum_op;
  GHashTable *memo;     /* class + 1 -> GArray of atom classes (sorted) */
  GHashTable *visiting; /* class + 1 */
} ac_ctx;

static gint cmp_id(gconstpointer a, gconstpointer b) {
  sc_id x = *(const sc_id *)a, y = *(const sc_id *)b;
  return x < y ? -1 : x > y;
}

/* The atoms of class CLS: the classes its first sc.sum node adds up,
 * each expanded the same way (a class with no sum node, or one met again
 * inside its own expansion, is an atom).  Every expansion is an equation
 * CLS = sum of its atoms, since a sum node of a class equals the class. */
static const GArray *ac_atoms(ac_ctx *a, sc_id cls) {
  GArray *m = g_hash_table_lookup(a->memo, GUINT_TO_POINTER(cls + 1));
  if (m)
    return m;
  uint32_t n = 0;
  const sc_id *sums = sc_egraph_class_nodes_with_op(a->eg, cls, a->sum_op, &n);
  m = g_array_new(FALSE, FALSE, sizeof(sc_id));
  if (n == 0 || g_hash_table_contains(a->visiting, GUINT_TO_POINTER(cls + 1))) {
    g_array_append_val(m, cls);
  } else {
    g_hash_table_add(a->visiting, GUINT_TO_POINTER(cls + 1));
    uint32_t arity = sc_egraph_node_arity(a->eg, sums[0]);
    const sc_id *kids = sc_egraph_node_children(a->eg, sums[0]);
    for (uint32_t j = 0; j < arity; j++) {
      const GArray *sub = ac_atoms(a, sc_egraph_find(a->eg, kids[j]));
      g_array_append_vals(m, sub->data, sub->len);
    }
    g_hash_table_remove(a->visiting, GUINT_TO_POINTER(cls + 1));
    g_array_sort(m, cmp_id);
  }
  g_hash_table_insert(a->memo, GUINT_TO_POINTER(cls + 1), m);
  return m;
}

/* Does class CLS hold an impl tensor (a sum the impl computes)? */
static gboolean has_leaf(const sc_egraph *eg, sc_id cls) {
  uint32_t n = 0;
  sc_egraph_class_nodes_with_op(eg, cls, SC_LANG_OP_TENSOR, &n);
  return n > 0;
}

/* Partial sums are associative and commutative (sc.sum adds parts of one
 * shape and dtype, over the reals).  Constrained lemmas (sum_comm,
 * sum_assoc_*) only regroup towards sums that exist; the blocks of a
 * fused q|k|v weight arrive in the order q0 q1 .. k0 k1 .. v0 v1 .. while
 * each rank sums its own q, k and v, which needs every regrouping of a
 * dozen partials (2^n classes for free AC rewriting).  So, on a clean
 * e-graph, every class holding a sum node is expanded into its multiset
 * of atoms (ac_atoms, each expansion an equation that holds), classes
 * with equal multisets are merged, and a sum whose atoms are partitioned
 * by sums the impl computes gains the sum of those.  Returns TRUE when
 * something was merged. */
static gboolean ac_merge_sums(ctx_t *c) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  const sc_op *sum = sc_ops_lookup("sc.sum.default", NULL);
  if (!sum)
    return FALSE;
  uint32_t n = 0;
  const sc_id *cls = sc_egraph_classes_with_op(eg, sum->id, &n);
  if (n < 2)
    return FALSE;
  GArray *roots = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g_array_append_vals(roots, cls, n); /* the list is only valid until a mutation */
  ac_ctx a = {eg, sum->id,
              g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                    (GDestroyNotify)g_array_unref),
              g_hash_table_new(g_direct_hash, g_direct_equal)};
  GHashTable *by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GArray *pairs = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint i = 0; i < roots->len; i++) {
    sc_id k = g_array_index(roots, sc_id, i);
    const GArray *atoms = ac_atoms(&a, k);
    if (atoms->len < 3)
      continue; /* two parts: sum_comm's business */
    GString *key = g_string_new(NULL);
    for (guint j = 0; j < atoms->len; j++)
      g_string_append_printf(key, "%u,", g_array_index(atoms, sc_id, j));
    gpointer first = g_hash_table_lookup(by_key, key->str);
    if (first) {
      sc_id f = GPOINTER_TO_UINT(first) - 1;
      g_array_append_val(pairs, f);
      g_array_append_val(pairs, k);
      g_string_free(key, TRUE);
    } else {
      g_hash_table_insert(by_key, g_string_free(key, FALSE), GUINT_TO_POINTER(k + 1));
    }
  }
  /* Regrouping by the impl's sums: a sum K whose atoms are the disjoint
   * union of the atoms of sums that hold an impl tensor (not K's own
   * sub-sums) and of some atoms equals the sum of those: the spec's chain
   * of a dozen partial products against each rank's partial.  Greedy,
   * largest parts first. */
  GArray *groups = g_array_new(FALSE, FALSE, sizeof(sc_id)); /* K, n, parts.. */
  for (guint i = 0; i < roots->len; i++) {
    sc_id k = g_array_index(roots, sc_id, i);
    const GArray *mk = ac_atoms(&a, k);
    if (mk->len < 4)
      continue;
    GHashTable *own = g_hash_table_new(g_direct_hash, g_direct_equal);
    GArray *walk = g_array_new(FALSE, FALSE, sizeof(sc_id));
    g_array_append_val(walk, k);
    while (walk->len) {
      sc_id x = g_array_index(walk, sc_id, walk->len - 1);
      g_array_set_size(walk, walk->len - 1);
      if (!g_hash_table_add(own, GUINT_TO_POINTER(x + 1)))
        continue;
      uint32_t ns = 0;
      const sc_id *sn = sc_egraph_class_nodes_with_op(eg, x, sum->id, &ns);
      if (ns == 0)
        continue;
      uint32_t ar = sc_egraph_node_arity(eg, sn[0]);
      const sc_id *kids = sc_egraph_node_children(eg, sn[0]);
      for (uint32_t j = 0; j < ar; j++) {
        sc_id r = sc_egraph_find(eg, kids[j]);
        g_array_append_val(walk, r);
      }
    }
    g_array_free(walk, TRUE);
    /* remaining atoms: atom class -> count */
    GHashTable *rem = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint j = 0; j < mk->len; j++) {
      gpointer key = GUINT_TO_POINTER(g_array_index(mk, sc_id, j) + 1);
      g_hash_table_insert(rem, key,
                          GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(rem, key)) + 1));
    }
    guint left = mk->len;
    GArray *parts = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (guint size = mk->len - 1; size >= 2 && left > 0; size--) {
      for (guint q = 0; q < roots->len && left > 0; q++) {
        sc_id r = g_array_index(roots, sc_id, q);
        const GArray *mr = ac_atoms(&a, r);
        if (mr->len != size || size > left || g_hash_table_contains(own, GUINT_TO_POINTER(r + 1)) ||
            !has_leaf(eg, r))
          continue;
        gboolean fits = TRUE;
        for (guint j = 0; j < mr->len && fits; j++) {
          gpointer key = GUINT_TO_POINTER(g_array_index(mr, sc_id, j) + 1);
          guint need = 1;
          for (guint j2 = j + 1; j2 < mr->len && g_array_index(mr, sc_id, j2) == g_array_index(mr, sc_id, j); j2++)
            need++;
          fits = GPOINTER_TO_UINT(g_hash_table_lookup(rem, key)) >= need;
        }
        if (!fits)
          continue;
        for (guint j = 0; j < mr->len; j++) {
          gpointer key = GUINT_TO_POINTER(g_array_index(mr, sc_id, j) + 1);
          g_hash_table_insert(rem, key,
                              GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(rem, key)) - 1));
        }
        left -= mr->len;
        g_array_append_val(parts, r);
      }
    }
    if (parts->len > 0 && parts->len + left >= 2) {
      for (guint j = 0; j < mk->len; j++) {
        sc_id at = g_array_index(mk, sc_id, j);
        gpointer key = GUINT_TO_POINTER(at + 1);
        guint cnt = GPOINTER_TO_UINT(g_hash_table_lookup(rem, key));
        if (cnt > 0) {
          g_array_append_val(parts, at);
          g_hash_table_insert(rem, key, GUINT_TO_POINTER(cnt - 1));
        }
      }
      sc_id np = parts->len;
      g_array_append_val(groups, k);
      g_array_append_val(groups, np);
      g_array_append_vals(groups, parts->data, parts->len);
    }
    g_array_free(parts, TRUE);
    g_hash_table_unref(rem);
    g_hash_table_unref(own);
  }
  gboolean merged = FALSE;
  for (guint i = 0; i < groups->len;) {
    sc_id k = g_array_index(groups, sc_id, i);
    sc_id np = g_array_index(groups, sc_id, i + 1);
    sc_id *parts = g_new(sc_id, np);
    for (sc_id j = 0; j < np; j++)
      parts[j] = sc_egraph_find(eg, g_array_index(groups, sc_id, i + 2 + j));
    i += 2 + np;
    GError *local = NULL;
    sc_id t = add_variadic(c, "sum", parts, np, NULL, &local);
    g_free(parts);
    if (t == SC_ID_NONE) {
      g_clear_error(&local);
      continue;
    }
    if (sc_egraph_find(eg, t) != sc_egraph_find(eg, k)) {
      sc_egraph_union(eg, k, t, SC_JUST_ASSERTED);
      merged = TRUE;
    }
  }
  g_array_free(groups, TRUE);
  for (guint i = 0; i + 1 < pairs->len; i += 2) {
    sc_id x = g_array_index(pairs, sc_id, i), y = g_array_index(pairs, sc_id, i + 1);
    if (sc_egraph_find(eg, x) != sc_egraph_find(eg, y)) {
      sc_egraph_union(eg, x, y, SC_JUST_ASSERTED);
      merged = TRUE;
    }
  }
  g_array_free(pairs, TRUE);
  g_hash_table_unref(by_key);
  g_hash_table_unref(a.memo);
  g_hash_table_unref(a.visiting);
  g_array_free(roots, TRUE);
  return merged;
}

/* Saturate, then merge sums that are equal as multisets, and saturate
 * again while that merges anything (a few times at most). */
static void saturate_ac(ctx_t *c, sc_runner *runner, const char **limit_hit) {
  saturate(c, runner, limit_hit);
  for (int i = 0; i < 4 && ac_merge_sums(c); i++) {
    sc_egraph_rebuild(sc_lang_egraph(c->lang));
    saturate(c, runner, limit_hit);
  }
}

/* Explore until no impl node joins (Listing 3). */
static gboolean explore(ctx_t *c, sc_runner *runner, const sc_id *out_cls, uint32_t n_out,
                        const char **limit_hit, GError **error) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  saturate_ac(c, runner, limit_hit);
  for (uint32_t round = 0; round < c->opts->max_rounds; round++) {
    grow_trel(c, out_cls, n_out);
    add_sourceless(c);
    if (c->frontier->len == 0)
      break;
    GArray *batch = c->frontier;
    c->frontier = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (guint i = 0; i < batch->len; i++) {
      sc_id w = g_array_index(batch, sc_id, i);
      if (c->node_explored[w] == c->visit)
        continue;
      if (!explore_impl_node(c, w, error)) {
        g_array_free(batch, TRUE);
        return FALSE;
      }
    }
    g_array_free(batch, TRUE);
    sc_egraph_rebuild(eg);
    saturate_ac(c, runner, limit_hit);
  }
  return TRUE;
}

/* Does some result of N lack the relation it needs (a checked output: a
 * clean term over impl outputs; any other result: a clean term over impl
 * tensors)?  Nothing recorded but the terms, which c->owned keeps. */
static gboolean some_output_unmapped(ctx_t *c, const sc_node *n, const sc_id *out_cls) {
  gboolean missing = FALSE;
  for (uint32_t k = 0; k < n->n_results && !missing; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE)
      continue;
    gboolean is_checked = FALSE;
    for (guint i = 0; i < c->res->checked->len && !is_checked; i++)
      is_checked = g_array_index(c->res->checked, sc_id, i) == t;
    GPtrArray *exprs = g_ptr_array_new();
    clean_exprs(c, out_cls[k], is_checked ? c->impl_is_output : NULL, exprs);
    missing = exprs->len == 0;
    g_ptr_array_unref(exprs); /* the terms are in c->owned */
  }
  return missing;
}

/* Widened exploration, for a node that Listing 3's exploration leaves
 * unmapped: the results of every impl node explored at this node join
 * T_rel, so that their consumers are explored too, up to WIDEN_HOPS
 * operators past the related tensors.  GraphGuard's observation (an impl
 * node that maps to a spec output has inputs related to the spec node's
 * inputs or outputs) misses chains that rescale a partial result before
 * it is reduced: a micro-batch's mean loss divided by the number of
 * micro-batches, accumulated, then averaged over the ranks.  At most
 * WIDEN_HOPS operators deep and about WIDEN_MAX_NODES more nodes.  Only run on
 * failure, so a node that maps costs what it cost; like all exploration
 * it decides what is asserted, never what is proved. */
#define WIDEN_HOPS 8
#define WIDEN_MAX_NODES 256

static gboolean widen(ctx_t *c, sc_runner *runner, const sc_id *out_cls, uint32_t n_out,
                      const char **limit_hit, GError **error) {
  guint done = 0, before = c->explored_list->len;
  for (int hop = 0; hop < WIDEN_HOPS && c->explored_list->len - before < WIDEN_MAX_NODES;
       hop++) {
    guint upto = c->explored_list->len;
    for (guint i = done; i < upto; i++) {
      const sc_node *w = sc_graph_node(c->impl, g_array_index(c->explored_list, sc_id, i));
      for (uint32_t k = 0; k < w->n_results; k++)
        if (w->results[k] != SC_ID_NONE)
          trel_add(c, w->results[k]);
    }
    done = upto;
    if (c->frontier->len == 0)
      break;
    if (!explore(c, runner, out_cls, n_out, limit_hit, error))
      return FALSE;
  }
  return TRUE;
}

/* Unions refused for a type conflict are recorded by lang; they are named
 * after the next rebuild (conflict_text), since naming needs a clean
 * e-graph. */
static void on_conflict(sc_lang *lang, sc_id a, sc_id b, uint32_t just, void *user) {
  (void)lang, (void)a, (void)b, (void)just, (void)user;
}

/* The first recorded conflict, with the rule that caused it, into
 * c->conflict (empty when there is none). */
static void conflict_text(ctx_t *c) {
  uint32_t n = 0;
  const sc_lang_conflict *cf = sc_lang_get_conflicts(c->lang, &n);
  g_string_truncate(c->conflict, 0);
  if (n == 0)
    return;
  sc_egraph_rebuild(sc_lang_egraph(c->lang));
  uint32_t just = cf[0].just;
  const char *rule = (just < c->n_rewrites) ? sc_rewrite_name(c->rewrites[just])
                     : just == SC_JUST_ASSERTED ? "an asserted fact (a relation or an impl node)"
                                               : "congruence";
  g_autofree char *msg = sc_lang_conflict_message(c->lang, &cf[0]);
  g_string_append_printf(c->conflict, "%s: %s", rule, msg);
}

static GPtrArray *texts_of(GPtrArray *texprs) {
  GPtrArray *texts = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < texprs->len; i++) {
    char *s = sc_texpr_to_string(g_ptr_array_index(texprs, i));
    gboolean dup = FALSE;
    for (guint j = 0; j < texts->len && !dup; j++)
      dup = strcmp(g_ptr_array_index(texts, j), s) == 0;
    if (dup)
      g_free(s);
    else
      g_ptr_array_add(texts, s);
  }
  return texts;
}

static void record_failure(ctx_t *c, sc_id v, const sc_id *out_cls, GArray *unmapped,
                           const char *limit_hit) {
  sc_infer_result *res = c->res;
  res->verdict = limit_hit ? SC_VERDICT_LIMIT : SC_VERDICT_FAILS;
  res->fkind = SC_FAILURE_UNMAPPED;
  res->fnode = v;
  res->limit_reason = limit_hit ? g_strdup(limit_hit) : NULL;
  const sc_node *n = sc_graph_node(c->spec, v);
  for (guint i = 0; i < unmapped->len; i++) {
    uint32_t k = g_array_index(unmapped, uint32_t, i);
    g_array_append_val(res->funmapped, n->results[k]);
  }
  /* Conditions the normal form and cvc5 could not decide at this node:
   * those lemmas did not fire, and the user should know which. */
  for (uint32_t i = 0; c->rules && i < sc_lemma_set_n_lemmas(c->opts->lemmas); i++) {
    sc_lemma_counters k;
    sc_lemma_rules_counters(c->rules, i, &k);
    if (k.undecided == 0)
      continue;
    const sc_lemma_info *li = sc_lemma_set_lemma(c->opts->lemmas, i);
    g_ptr_array_add(res->fundecided,
                    g_strdup_printf("%s (%s:%u): its condition was undecided %" G_GUINT64_FORMAT
                                    " times", li->name, li->file, li->line, k.undecided));
  }
  /* the nearest terms of the first unmapped output */
  uint32_t k0 = g_array_index(unmapped, uint32_t, 0);
  sc_egraph *eg = sc_lang_egraph(c->lang);
  weight_ctx wc = {c->lang, NULL};
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, out_cls[k0]), 3, 48,
                                         nearest_weight, &wc, NULL);
  for (guint i = 0; i < terms->len; i++)
    g_ptr_array_add(res->fnearest, sc_lang_term_to_string(c->lang, g_ptr_array_index(terms, i)));
  g_ptr_array_unref(terms);
}

/* Expectations on the outputs of node V, proved in V's e-graph. */
static gboolean check_expectations(ctx_t *c, sc_runner *runner, const sc_node *n,
                                   const sc_id *out_cls, const char **limit_hit,
                                   GError **error) {
  const sc_relation *exp = sc_bundle_expect_output_relation(c->bundle);
  if (!exp)
    return TRUE;
  GArray *pending = g_array_new(FALSE, FALSE, sizeof(sc_id) * 2);
  for (uint32_t k = 0; k < n->n_results; k++) {
    if (n->results[k] == SC_ID_NONE)
      continue;
    const sc_relation_entry *e = sc_relation_find(exp, n->results[k]);
    if (!e)
      continue;
    for (uint32_t j = 0; j < e->n_exprs; j++) {
      sc_id cls = sc_lang_add_texpr(c->lang, e->exprs[j], error);
      if (cls == SC_ID_NONE) {
        g_array_free(pending, TRUE);
        return FALSE;
      }
      GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
      sc_texpr_collect_leaves(e->exprs[j], leaves);
      for (guint l = 0; l < leaves->len; l++)
        trel_add(c, g_array_index(leaves, sc_id, l));
      g_array_free(leaves, TRUE);
      sc_id pair[2] = {cls, (sc_id)k};
      g_array_append_vals(pending, pair, 1);
    }
  }
  if (pending->len == 0) {
    g_array_free(pending, TRUE);
    return TRUE;
  }
  sc_egraph_rebuild(sc_lang_egraph(c->lang));
  if (!explore(c, runner, out_cls, n->n_results, limit_hit, error)) {
    g_array_free(pending, TRUE);
    return FALSE;
  }
  sc_egraph *eg = sc_lang_egraph(c->lang);
  /* pending is in the order of the expectation list per tensor */
  guint p = 0;
  for (uint32_t k = 0; k < n->n_results; k++) {
    if (n->results[k] == SC_ID_NONE)
      continue;
    const sc_relation_entry *e = sc_relation_find(exp, n->results[k]);
    if (!e)
      continue;
    for (uint32_t j = 0; j < e->n_exprs; j++, p++) {
      sc_id *pair = &g_array_index(pending, sc_id, p * 2);
      gboolean found = sc_egraph_find(eg, pair[0]) == sc_egraph_find(eg, out_cls[pair[1]]);
      for (guint x = 0; x < c->res->expectations->len; x++) {
        sc_infer_expectation *ie = &g_array_index(c->res->expectations, sc_infer_expectation, x);
        if (ie->tensor == n->results[k] && ie->text == e->texts[j])
          ie->found = found;
      }
    }
  }
  g_array_free(pending, TRUE);
  return TRUE;
}

/* With --explain: the lemmas that changed this node's e-graph (with their
 * application counts) and the impl nodes asserted into it.  This is the
 * set of facts the node's relation was derived from, not a minimal proof. */
static void record_explanation(ctx_t *c, const sc_node *n) {
  GString *line = g_string_new(NULL);
  g_string_append_printf(line, "%s (%s): lemmas", n->name, n->op->qualname);
  uint32_t used = 0;
  for (uint32_t i = 0; c->rules && i < sc_lemma_set_n_lemmas(c->opts->lemmas); i++) {
    sc_lemma_counters k;
    sc_lemma_rules_counters(c->rules, i, &k);
    if (k.applications == 0)
      continue;
    g_string_append_printf(line, "%s %s x%" G_GUINT64_FORMAT, used++ ? "," : "",
                           sc_lemma_set_lemma(c->opts->lemmas, i)->name, k.applications);
  }
  if (used == 0)
    g_string_append(line, " none");
  g_string_append(line, "; impl nodes");
  used = 0;
  for (guint i = 0; i < c->explored_list->len; i++) {
    sc_id w = g_array_index(c->explored_list, sc_id, i);
    g_string_append_printf(line, "%s %s", used++ ? "," : "", sc_graph_node(c->impl, w)->name);
  }
  if (used == 0)
    g_string_append(line, " none");
  g_ptr_array_add(c->res->explanations, g_string_free(line, FALSE));
}

/* Forget a recorded failure (the first deferred node's, once the check
 * has gone on to map every checked output). */
static void clear_failure(sc_infer_result *res) {
  res->verdict = SC_VERDICT_REFINES;
  res->fkind = SC_FAILURE_UNMAPPED;
  res->fnode = SC_ID_NONE;
  g_array_set_size(res->funmapped, 0);
  g_ptr_array_set_size(res->fnearest, 0);
  g_clear_pointer(&res->limit_reason, g_free);
  res->fexplored = 0;
}

/* Deferral.  GraphGuard assumes that every spec tensor is materialized in
 * the impl (section 3.1: no reordering).  Megatron's row-parallel layers
 * break that on purpose: the bias of the attention projection is added
 * after the residual add (bias-dropout-add), so the spec's addmm(b, h, w)
 * and its view exist nowhere in the impl, while the residual sum that
 * follows does.  An unmapped output that is not a checked output
 * therefore keeps, as its relation, its smallest expressions over impl
 * tensors with any operators (equalities proved in this e-graph like
 * every other: sound), and the walk goes on.  The failure is recorded at
 * the first deferred node; it is reported if a later node cannot be
 * mapped even so (or a chain of deferred nodes grows longer than
 * MAX_DEFER_DEPTH), and forgotten if every checked output maps cleanly in
 * the end.  So a bug is still reported at the node where GraphGuard
 * reports it.  Returns FALSE (nothing deferred) when some output cannot
 * be deferred. */
static gboolean defer_outputs(ctx_t *c, const sc_node *n, const sc_id *out_cls,
                              GArray *unmapped, const char *limit_hit) {
  if (limit_hit || unmapped->len == 0)
    return FALSE;
  uint32_t depth = 0;
  for (uint32_t i = 0; i < n->n_inputs; i++)
    depth = MAX(depth, c->defer_depth[n->inputs[i]]);
  if (++depth > MAX_DEFER_DEPTH)
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  weight_ctx wc = {c->lang, NULL};
  GPtrArray *found = g_ptr_array_new();  /* GPtrArray* per unmapped output */
  gboolean ok = TRUE;
  for (guint i = 0; i < unmapped->len && ok; i++) {
    uint32_t k = g_array_index(unmapped, uint32_t, i);
    sc_id t = n->results[k];
    for (guint j = 0; j < c->res->checked->len && ok; j++)
      ok = g_array_index(c->res->checked, sc_id, j) != t;
    if (!ok)
      break;
    /* the smallest terms, and then terms that read an impl tensor none of
     * the kept ones reads (the relation names every rank, so that the
     * consumers explore every rank's nodes) */
    GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, out_cls[k]),
                                           4 * MAX_DEFER_TERMS, c->opts->max_term_size,
                                           nearest_weight, &wc, NULL);
    GPtrArray *exprs = g_ptr_array_new();
    GHashTable *covered = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint j = 0; j < terms->len && exprs->len < 2 * MAX_DEFER_TERMS; j++) {
      const sc_term *term = g_ptr_array_index(terms, j);
      gboolean fresh = exprs->len < MAX_DEFER_TERMS;
      for (uint32_t q = 0; q < sc_term_n_nodes(term); q++) {
        const sc_term_node *tn = sc_term_node_at(term, q);
        if (tn->op == SC_LANG_OP_TENSOR &&
            g_hash_table_add(covered, GUINT_TO_POINTER(tn->attr + 1)))
          fresh = TRUE;
      }
      if (!fresh)
        continue;
      sc_expr *e = sc_lang_term_to_expr(c->lang, term);
      if (!e)
        continue;
      sc_texpr *te = sc_texpr_bind(e, c->impl, FALSE, NULL);
      sc_expr_free(e);
      if (!te)
        continue;
      g_ptr_array_add(c->owned, te);
      g_ptr_array_add(exprs, te);
    }
    g_hash_table_unref(covered);
    g_ptr_array_unref(terms);
    g_ptr_array_add(found, exprs);
    ok = exprs->len > 0;
  }
  if (!ok) {
    for (guint i = 0; i < found->len; i++)
      g_ptr_array_unref(g_ptr_array_index(found, i));
    g_ptr_array_unref(found);
    return FALSE;
  }
  for (guint i = 0; i < unmapped->len; i++) {
    sc_id t = n->results[g_array_index(unmapped, uint32_t, i)];
    GPtrArray *exprs = g_ptr_array_index(found, i);
    if (c->rel[t])
      g_ptr_array_unref(c->rel[t]);
    c->rel[t] = exprs;
    c->defer_depth[t] = depth;
  }
  g_ptr_array_unref(found);
  return TRUE;
}

/* One spec node: Listing 2 with Listing 3's exploration.  Returns FALSE on
 * an error; a node that fails to map sets the result's failure and
 * *stop. */
static gboolean visit_node(ctx_t *c, sc_id v, gboolean *stop, GError **error) {
  const sc_node *n = sc_graph_node(c->spec, v);
  double t0 = g_get_monotonic_time() / 1e6;
  c->visit++;
  c->lang = sc_lang_new(c->st, c->impl);
  sc_lang_set_conflict_handler(c->lang, on_conflict, c);
  g_string_truncate(c->conflict, 0);
  c->rules = NULL;
  c->rewrites = NULL;
  c->n_rewrites = 0;
  g_array_set_size(c->frontier, 0);
  c->explored_now = 0;
  g_array_set_size(c->explored_list, 0);
  sc_egraph *eg = sc_lang_egraph(c->lang);
  gboolean ok = FALSE;
  const char *limit_hit = NULL;
  sc_runner *runner = NULL;
  GArray *children = NULL;
  sc_value *args = NULL;
  sc_id *out_cls = g_new(sc_id, n->n_results ? n->n_results : 1);
  GArray *unmapped = g_array_new(FALSE, FALSE, sizeof(uint32_t));

  if (c->opts->lemmas) {
    c->rules = sc_lemma_compile(c->opts->lemmas, c->lang, error);
    if (!c->rules)
      goto out;
    c->rewrites = sc_lemma_rules_array(c->rules, &c->n_rewrites);
  }
  runner = sc_runner_new(eg, &c->opts->limits);

  children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  args = args_to_children(c, n, spec_input_class, children, error);
  if (!args)
    goto out;
  g_array_set_size(c->in_cls, 0);
  g_array_append_vals(c->in_cls, children->data, children->len);
  for (uint32_t k = 0; k < n->n_results; k++) {
    out_cls[k] = SC_ID_NONE;
    if (n->results[k] == SC_ID_NONE)
      continue;
    GError *local = NULL;
    out_cls[k] = sc_lang_add_call(c->lang, n->op, args, (const sc_id *)children->data,
                                  children->len, k, &local);
    if (out_cls[k] == SC_ID_NONE) {
      g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                  "internal error: spec node '%s' cannot be applied to its inputs' "
                  "relations: %s", n->name, local->message);
      g_error_free(local);
      goto out;
    }
  }
  sc_egraph_rebuild(eg);
  if (!explore(c, runner, out_cls, n->n_results, &limit_hit, error))
    goto out;
  if (!limit_hit && some_output_unmapped(c, n, out_cls) &&
      !widen(c, runner, out_cls, n->n_results, &limit_hit, error))
    goto out;
  if (!check_expectations(c, runner, n, out_cls, &limit_hit, error))
    goto out;
  if (c->opts->explain)
    record_explanation(c, n);
  conflict_text(c);
  if (c->conflict->len) {
    g_set_error(error, SC_INFER_ERROR, SC_INFER_ERROR_INTERNAL,
                "internal error at spec node '%s' (%s): %s — an unsound lemma or "
                "relation", n->name, n->op->qualname, c->conflict->str);
    goto out;
  }

  for (uint32_t k = 0; k < n->n_results; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE)
      continue;
    GPtrArray *exprs = g_ptr_array_new();
    clean_exprs(c, out_cls[k], NULL, exprs);
    gboolean is_checked = FALSE;
    for (guint i = 0; i < c->res->checked->len && !is_checked; i++)
      is_checked = g_array_index(c->res->checked, sc_id, i) == t;
    if (is_checked) {
      GPtrArray *outs = g_ptr_array_new();
      clean_exprs(c, out_cls[k], c->impl_is_output, outs);
      c->res->output_texts[t] = texts_of(outs);
      if (outs->len == 0)
        g_array_append_val(unmapped, k);
      g_ptr_array_unref(outs);
    }
    if (exprs->len == 0) {
      if (!is_checked)
        g_array_append_val(unmapped, k);
      g_ptr_array_unref(exprs);
      continue;
    }
    c->res->tensor_texts[t] = texts_of(exprs);
    c->rel[t] = exprs;
  }
  uint32_t nodes_now = sc_egraph_n_nodes(eg);
  c->res->stats.enodes += nodes_now;
  if (nodes_now > c->res->stats.max_enodes)
    c->res->stats.max_enodes = nodes_now;
  if (unmapped->len) {
    gboolean deferred = defer_outputs(c, n, out_cls, unmapped, limit_hit);
    if (!c->pending || limit_hit) {
      /* the first failure (a limit overrides a deferred failure: the
       * verdict is then "limit") */
      clear_failure(c->res);
      record_failure(c, v, out_cls, unmapped, limit_hit);
      c->res->fexplored = c->explored_now;
    }
    if (deferred)
      c->pending = TRUE;
    else
      *stop = TRUE;
  }
  ok = TRUE;
out:
  {
    double dt = g_get_monotonic_time() / 1e6 - t0;
    if (dt > c->res->stats.slowest_seconds) {
      c->res->stats.slowest_seconds = dt;
      c->res->stats.slowest_node = v;
    }
  }
  free_args(args, n->op->n_args);
  if (children)
    g_array_free(children, TRUE);
  g_array_free(unmapped, TRUE);
  g_free(out_cls);
  if (runner)
    sc_runner_free(runner);
  if (c->rules)
    sc_lemma_rules_free(c->rules);
  c->rules = NULL;
  c->rewrites = NULL;
  c->n_rewrites = 0;
  sc_lang_free(c->lang);
  c->lang = NULL;
  return ok;
}

/* --- the walk --- */

static void collect_checked(ctx_t *c) {
  const sc_bundle *b = c->bundle;
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  if (sc_bundle_check_outputs_given(b)) {
    for (uint32_t i = 0; i < sc_bundle_n_check_outputs(b); i++) {
      sc_id t = sc_bundle_check_output(b, i);
      if (g_hash_table_add(seen, GUINT_TO_POINTER(t + 1)))
        g_array_append_val(c->res->checked, t);
    }
  } else {
    for (uint32_t i = 0; i < sc_graph_n_outputs(c->spec); i++) {
      sc_id t = sc_graph_output(c->spec, i);
      if (g_hash_table_add(seen, GUINT_TO_POINTER(t + 1)))
        g_array_append_val(c->res->checked, t);
    }
  }
  g_hash_table_unref(seen);
}

/* Which spec nodes the checked outputs depend on (stopping at tensors with
 * a relation given: inputs and assumptions). */
static gboolean *needed_nodes(ctx_t *c) {
  uint32_t nn = sc_graph_n_nodes(c->spec);
  gboolean *need = g_new0(gboolean, nn ? nn : 1);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint i = 0; i < c->res->checked->len; i++)
    g_array_append_val(stack, g_array_index(c->res->checked, sc_id, i));
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  while (stack->len) {
    sc_id t = g_array_index(stack, sc_id, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    if (!g_hash_table_add(seen, GUINT_TO_POINTER(t + 1)))
      continue;
    if (c->rel[t])
      continue;
    sc_id p = sc_graph_tensor(c->spec, t)->producer;
    if (p == SC_ID_NONE || need[p])
      continue;
    need[p] = TRUE;
    const sc_node *n = sc_graph_node(c->spec, p);
    for (uint32_t i = 0; i < n->n_inputs; i++)
      g_array_append_val(stack, n->inputs[i]);
  }
  g_hash_table_unref(seen);
  g_array_free(stack, TRUE);
  return need;
}

static void seed_relation(ctx_t *c, const sc_relation *r) {
  if (!r)
    return;
  for (uint32_t i = 0; i < r->n_entries; i++) {
    const sc_relation_entry *e = &r->entries[i];
    GPtrArray *a = g_ptr_array_new();
    for (uint32_t j = 0; j < e->n_exprs; j++)
      g_ptr_array_add(a, e->exprs[j]);
    if (c->rel[e->tensor])
      g_ptr_array_unref(c->rel[e->tensor]);
    c->rel[e->tensor] = a;
    if (!c->res->tensor_texts[e->tensor]) {
      GPtrArray *texts = g_ptr_array_new_with_free_func(g_free);
      for (uint32_t j = 0; j < e->n_exprs; j++)
        g_ptr_array_add(texts, g_strdup(e->texts[j]));
      c->res->tensor_texts[e->tensor] = texts;
    }
  }
}

sc_infer_result *sc_infer_run(const sc_bundle *b, const sc_infer_options *opts,
                              GError **error) {
  double t0 = g_get_monotonic_time() / 1e6;
  ctx_t c;
  memset(&c, 0, sizeof c);
  c.bundle = b;
  c.opts = opts;
  c.spec = sc_bundle_spec(b);
  c.impl = sc_bundle_impl(b);
  c.st = sc_bundle_symtab(b);
  uint32_t n_st = sc_graph_n_tensors(c.spec), n_it = sc_graph_n_tensors(c.impl);
  uint32_t n_in = sc_graph_n_nodes(c.impl);

  sc_infer_result *res = g_new0(sc_infer_result, 1);
  res->bundle = b;
  res->verdict = SC_VERDICT_REFINES;
  res->tensor_texts = g_new0(GPtrArray *, n_st ? n_st : 1);
  res->output_texts = g_new0(GPtrArray *, n_st ? n_st : 1);
  res->checked = g_array_new(FALSE, FALSE, sizeof(sc_id));
  res->fnode = SC_ID_NONE;
  res->funmapped = g_array_new(FALSE, FALSE, sizeof(sc_id));
  res->fnearest = g_ptr_array_new_with_free_func(g_free);
  res->expectations = g_array_new(FALSE, FALSE, sizeof(sc_infer_expectation));
  res->explanations = g_ptr_array_new_with_free_func(g_free);
  res->fundecided = g_ptr_array_new_with_free_func(g_free);
  res->stats.spec_nodes = sc_graph_n_nodes(c.spec);
  res->stats.impl_nodes = n_in;
  res->stats.slowest_node = SC_ID_NONE;
  c.res = res;

  c.rel = g_new0(GPtrArray *, n_st ? n_st : 1);
  c.owned = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  c.impl_is_output = g_new0(gboolean, n_it ? n_it : 1);
  for (uint32_t i = 0; i < sc_graph_n_outputs(c.impl); i++)
    c.impl_is_output[sc_graph_output(c.impl, i)] = TRUE;
  c.trel_stamp = g_new0(uint32_t, n_it ? n_it : 1);
  c.node_stamp = g_new0(uint32_t, n_in ? n_in : 1);
  c.node_ready = g_new0(uint32_t, n_in ? n_in : 1);
  c.node_explored = g_new0(uint32_t, n_in ? n_in : 1);
  c.frontier = g_array_new(FALSE, FALSE, sizeof(sc_id));
  c.in_cls = g_array_new(FALSE, FALSE, sizeof(sc_id));
  c.defer_depth = g_new0(uint32_t, n_st ? n_st : 1);
  c.explored_list = g_array_new(FALSE, FALSE, sizeof(sc_id));
  c.conflict = g_string_new(NULL);
  c.sourceless = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                       (GDestroyNotify)g_array_unref);
  for (uint32_t w = 0; w < n_in; w++) {
    const sc_node *n = sc_graph_node(c.impl, w);
    if (n->n_inputs > 0)
      continue;
    gpointer key = GUINT_TO_POINTER(n->op->id + 1);
    GArray *a = g_hash_table_lookup(c.sourceless, key);
    if (!a) {
      a = g_array_new(FALSE, FALSE, sizeof(sc_id));
      g_hash_table_insert(c.sourceless, key, a);
    }
    g_array_append_val(a, w);
  }

  seed_relation(&c, sc_bundle_input_relation(b));
  seed_relation(&c, sc_bundle_assume_relation(b));
  collect_checked(&c);
  const sc_relation *exp = sc_bundle_expect_output_relation(b);
  if (exp) {
    for (uint32_t i = 0; i < exp->n_entries; i++)
      for (uint32_t j = 0; j < exp->entries[i].n_exprs; j++) {
        sc_infer_expectation ie = {exp->entries[i].tensor, exp->entries[i].texts[j], FALSE};
        g_array_append_val(res->expectations, ie);
      }
  }

  gboolean *need = needed_nodes(&c);
  uint32_t n_order = 0, total = 0;
  const sc_id *order = sc_graph_topo_order(c.spec, &n_order);
  for (uint32_t i = 0; i < n_order; i++)
    total += need[order[i]] ? 1 : 0;
  gboolean ok = TRUE, stop = FALSE;
  uint32_t done = 0;
  for (uint32_t i = 0; i < n_order && ok && !stop; i++) {
    sc_id v = order[i];
    if (!need[v])
      continue;
    const sc_node *n = sc_graph_node(c.spec, v);
    if (opts->progress)
      opts->progress(done, total, n->name, opts->progress_user);
    ok = visit_node(&c, v, &stop, error);
    done++;
    res->stats.visited++;
  }
  if (opts->progress)
    opts->progress(done, total, NULL, opts->progress_user);
  /* every checked output mapped: the deferred nodes were not materialized,
   * which is no failure */
  if (ok && !stop && c.pending)
    clear_failure(res);

  /* Outputs that are spec inputs (or assumed): their relation over impl
   * outputs is what the bundle gave. */
  for (guint i = 0; ok && !stop && i < res->checked->len; i++) {
    sc_id t = g_array_index(res->checked, sc_id, i);
    if (res->output_texts[t] || !c.rel[t])
      continue;
    GPtrArray *outs = g_ptr_array_new();
    for (guint j = 0; j < c.rel[t]->len; j++) {
      sc_texpr *e = g_ptr_array_index(c.rel[t], j);
      GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
      sc_texpr_collect_leaves(e, leaves);
      gboolean all_out = TRUE;
      for (guint l = 0; l < leaves->len; l++)
        all_out = all_out && c.impl_is_output[g_array_index(leaves, sc_id, l)];
      g_array_free(leaves, TRUE);
      if (all_out)
        g_ptr_array_add(outs, e);
    }
    res->output_texts[t] = texts_of(outs);
    g_ptr_array_unref(outs);
  }

  if (ok && !stop && res->expectations->len) {
    for (guint i = 0; i < res->expectations->len; i++) {
      sc_infer_expectation *ie = &g_array_index(res->expectations, sc_infer_expectation, i);
      if (!ie->found && res->verdict == SC_VERDICT_REFINES) {
        res->verdict = SC_VERDICT_FAILS;
        res->fkind = SC_FAILURE_UNEXPECTED_RELATION;
        sc_id p = sc_graph_tensor(c.spec, ie->tensor)->producer;
        res->fnode = p;
      }
    }
  }

  g_free(need);
  for (uint32_t t = 0; t < n_st; t++)
    if (c.rel[t])
      g_ptr_array_unref(c.rel[t]);
  g_free(c.rel);
  g_ptr_array_unref(c.owned);
  g_free(c.impl_is_output);
  g_free(c.trel_stamp);
  g_free(c.node_stamp);
  g_free(c.node_ready);
  g_free(c.node_explored);
  g_array_free(c.frontier, TRUE);
  g_array_free(c.in_cls, TRUE);
  g_free(c.defer_depth);
  g_array_free(c.explored_list, TRUE);
  g_string_free(c.conflict, TRUE);
  g_hash_table_unref(c.sourceless);
  res->stats.seconds = g_get_monotonic_time() / 1e6 - t0;
  if (!ok) {
    sc_infer_result_free(res);
    return NULL;
  }
  return res;
}

void sc_infer_result_free(sc_infer_result *r) {
  if (!r)
    return;
  uint32_t n_st = sc_graph_n_tensors(sc_bundle_spec(r->bundle));
  for (uint32_t t = 0; t < n_st; t++) {
    if (r->tensor_texts[t])
      g_ptr_array_unref(r->tensor_texts[t]);
    if (r->output_texts[t])
      g_ptr_array_unref(r->output_texts[t]);
  }
  g_free(r->tensor_texts);
  g_free(r->output_texts);
  g_array_free(r->checked, TRUE);
  g_array_free(r->funmapped, TRUE);
  g_ptr_array_unref(r->fnearest);
  g_free(r->limit_reason);
  g_array_free(r->expectations, TRUE);
  g_ptr_array_unref(r->explanations);
  g_ptr_array_unref(r->fundecided);
  g_free(r);
}

sc_verdict sc_infer_verdict(const sc_infer_result *r) { return r->verdict; }
const GPtrArray *sc_infer_tensor_exprs(const sc_infer_result *r, sc_id t) {
  return r->tensor_texts[t];
}
const GPtrArray *sc_infer_output_exprs(const sc_infer_result *r, sc_id t) {
  return r->output_texts[t];
}
uint32_t sc_infer_n_checked(const sc_infer_result *r) { return r->checked->len; }
sc_id sc_infer_checked(const sc_infer_result *r, uint32_t i) {
  return g_array_index(r->checked, sc_id, i);
}
sc_failure_kind sc_infer_failure_kind(const sc_infer_result *r) { return r->fkind; }
sc_id sc_infer_failure_node(const sc_infer_result *r) { return r->fnode; }
const GArray *sc_infer_failure_unmapped(const sc_infer_result *r) { return r->funmapped; }
const GPtrArray *sc_infer_failure_nearest(const sc_infer_result *r) { return r->fnearest; }
uint32_t sc_infer_failure_explored(const sc_infer_result *r) { return r->fexplored; }
const char *sc_infer_limit_reason(const sc_infer_result *r) { return r->limit_reason; }
uint32_t sc_infer_n_expectations(const sc_infer_result *r) { return r->expectations->len; }
const sc_infer_expectation *sc_infer_expectation_at(const sc_infer_result *r, uint32_t i) {
  return &g_array_index(r->expectations, sc_infer_expectation, i);
}
const sc_infer_stats *sc_infer_get_stats(const sc_infer_result *r) { return &r->stats; }
const GPtrArray *sc_infer_explanations(const sc_infer_result *r) { return r->explanations; }
const GPtrArray *sc_infer_failure_undecided(const sc_infer_result *r) { return r->fundecided; }
