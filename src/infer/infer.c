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
#include "infer/explain.h"

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
  opts->explain_max_steps = 40;
}

struct sc_infer_result {
  const sc_bundle *bundle;
  sc_verdict verdict;
  GPtrArray **tensor_texts;  /* per spec tensor: char* (owned) or NULL */
  GPtrArray **deferred_texts; /* per spec tensor: its deferred (non-clean) relation, or NULL */
  GPtrArray **output_texts;  /* per spec tensor: char* (owned) or NULL */
  GArray *checked;           /* sc_id */
  sc_failure_kind fkind;
  sc_id fnode;
  GArray *funmapped;         /* sc_id */
  GPtrArray *fnearest;       /* char* */
  uint32_t fexplored;
  sc_id fstop;               /* spec node the walk stopped at, when not fnode */
  GPtrArray *fstop_nearest;  /* char*: nearest terms of its first unmapped output */
  char *limit_reason;
  GArray *expectations;      /* sc_infer_expectation */
  GPtrArray *explanations;   /* char*, one per visited node (with explain) */
  GPtrArray *relexp;         /* sc_relation_explanation* (explain.c) */
  GPtrArray *fundecided;     /* char*: lemmas whose conditions were undecided */
  GPtrArray *learned;        /* char*: data-dependent sizes learned (dd_merge_sizes) */
  GArray *assumptions;       /* sc_infer_assumption: value-range assumptions used (vr_*) */
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
  sc_explain *ex;            /* with explain: this visit's facts (explain.h) */
  /* deferred tensors still read by unvisited nodes (settle_deferred) */
  const gboolean *need;      /* per spec node: visited by the walk */
  uint32_t *live_uses;       /* per spec tensor: needed consumers not yet visited, while deferred */
  uint32_t n_live;           /* spec tensors with live_uses > 0 */
  const sc_node *visiting;   /* the spec node being visited (dd_merge_sizes' messages) */
  /* value ranges (vr_analyze) */
  sc_vrange *vrange;         /* per spec tensor: its facts */
  GPtrArray *vr_assumptions; /* vr_assumption*, by assumption id */
  uint32_t term_size;        /* largest term enumerated (term_size_for) */
  sc_lemma_rules *compiled;  /* the lemmas, compiled at the first visit and
                                rebound to each visit's lang (owned) */
} ctx_t;

/* The largest term enumerated for relations: opts->max_term_size, or more
 * with many ranks.  A relation names every rank's shard, and a fused
 * q|k|v block is three slices per rank, so its smallest clean term has
 * about 9 nodes per rank (leaf, slice and cat for each block): 72 at
 * degree 8, past the default 64.  16 nodes per rank leave room for a view
 * on each part. */
static uint32_t term_size_for(const sc_graph *impl, uint32_t base) {
  int32_t max_rank = -1;
  for (uint32_t t = 0; t < sc_graph_n_tensors(impl); t++)
    max_rank = MAX(max_rank, sc_graph_tensor(impl, t)->rank);
  uint64_t per_rank = 16 * (uint64_t)(max_rank + 1);
  return (uint32_t)MIN(MAX((uint64_t)base, per_rank), 4096);
}

/* How many spec nodes in a row may have a relation that is not clean
 * (defer_outputs). */
#define MAX_DEFER_DEPTH 6
/* How many expressions a deferred tensor keeps. */
#define MAX_DEFER_TERMS 8

static void on_conflict(sc_lang *lang, sc_id a, sc_id b, uint32_t just, void *user);

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
static void unread_args(const sc_node *n, int32_t *self_arg, int32_t *list_arg,
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

/* Does node N read the values of its input tensor T (unread_args)? */
static gboolean reads_input(const sc_node *n, sc_id t) {
  int32_t self_arg, list_arg;
  int64_t list_keep;
  unread_args(n, &self_arg, &list_arg, &list_keep);
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

/* How many of N's (distinct) input tensors it reads. */
static uint32_t n_read_inputs(const sc_node *n) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < n->n_inputs; i++)
    k += reads_input(n, n->inputs[i]) ? 1 : 0;
  return k;
}

/* Add impl tensor t to T_rel; push consumers that become ready.  A node is
 * ready when every input whose values it reads is in T_rel (unread_args):
 * an uninitialised buffer that a copy or a beta=0 baddbmm overwrites, or
 * the data a rank ignores in a broadcast, relates to nothing of the spec
 * and must not hold the node back.  Readiness only decides which impl
 * nodes are asserted, never what is proved. */
static void trel_add(ctx_t *c, sc_id t) {
  if (c->trel_stamp[t] == c->visit)
    return;
  c->trel_stamp[t] = c->visit;
  const sc_tensor *ten = sc_graph_tensor(c->impl, t);
  for (uint32_t i = 0; i < ten->n_consumers; i++) {
    sc_id w = ten->consumers[i];
    const sc_node *wn = sc_graph_node(c->impl, w);
    if (!reads_input(wn, t))
      continue;
    if (c->node_stamp[w] != c->visit) {
      c->node_stamp[w] = c->visit;
      c->node_ready[w] = 0;
    }
    if (++c->node_ready[w] == n_read_inputs(wn) && c->node_explored[w] != c->visit)
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
static sc_id structured_class(ctx_t *c, sc_id u, GError **error);
static sc_id deferred_class(ctx_t *c, sc_id u, GError **error) {
  const sc_tensor *ten = sc_graph_tensor(c->spec, u);
  const sc_node *pn = sc_graph_node(c->spec, ten->producer);
  uint32_t k = 0;
  while (k < pn->n_results && pn->results[k] != u)
    k++;
  g_assert(k < pn->n_results);
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_value *args = args_to_children(c, pn, structured_class, children, error);
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

/* --- value ranges of spec tensors (lang.h, "value ranges") ---
 *
 * Lemmas may read the range of an integer tensor's values (vmin/vmax): an
 * embedding lookup is a masked lookup at offset 0 only when its ids lie in
 * [0, V).  The facts are computed once over the spec graph before the walk
 * (vr_analyze) and seeded on the class of each input of a visited node
 * (spec_input_class).  Their sources:
 *  - declared: a spec input's "values" in the bundle;
 *  - derived: an operator that raises on other values makes the spec
 *    defined only for these, and refinement is claimed for the inputs on
 *    which the spec runs: aten.embedding's indices lie in [0,
 *    size(weight, 0)), index_select's and gather's index in [0,
 *    size(self, dim)), an integer index tensor of aten.index for dim d in
 *    [-size(self, d), size(self, d)) (it wraps negative ids);
 *  - assumed: aten.index's integer ids are non-negative.  A negative id
 *    would wrap to the end of the table, which a vocabulary-parallel rank
 *    (that masks it) does not do, so the proof of such a lookup needs the
 *    assumption; when a lemma whose condition read it fires, the result
 *    lists it (sc_infer_assumption_at) and the report prints it.
 * Facts spread, in both directions, over operators that keep the multiset
 * of values (identities, views, transposes, permutes, squeezes, integer
 * casts that do not narrow; copy's value is its src), and forward from an
 * input to the results of operators that select some of its elements
 * (slice, select, expand, narrow, split, index, index_select, gather).
 * Nothing else: no arithmetic. */

typedef struct {
  sc_id tensor;   /* the spec tensor the assumption is about (named in the text) */
  sc_id node;     /* the node whose use makes it */
  char *text;
} vr_assumption;

static void vr_assumption_free(gpointer p) {
  vr_assumption *a = p;
  g_free(a->text);
  g_free(a);
}

static sc_id vr_find(sc_id *uf, sc_id x) {
  while (uf[x] != x) {
    uf[x] = uf[uf[x]];
    x = uf[x];
  }
  return x;
}

static void vr_union(sc_id *uf, sc_id a, sc_id b) {
  a = vr_find(uf, a);
  b = vr_find(uf, b);
  if (a != b)
    uf[MAX(a, b)] = MIN(a, b);
}

/* Bits of an integer dtype's values (sign included), 0 for others. */
static int vr_int_bits(sc_dtype d, gboolean *is_signed) {
  *is_signed = TRUE;
  switch (d) {
  case SC_DTYPE_I64: return 64;
  case SC_DTYPE_I32: return 32;
  case SC_DTYPE_I8: return 8;
  case SC_DTYPE_U8: *is_signed = FALSE; return 8;
  default: return 0;
  }
}

/* Does a cast from A to B keep every value (an integer type into one that
 * holds all its values)? */
static gboolean vr_cast_keeps(sc_dtype a, sc_dtype b) {
  gboolean sa, sb;
  int ba = vr_int_bits(a, &sa), bb = vr_int_bits(b, &sb);
  if (a == b)
    return TRUE;
  if (ba == 0 || bb == 0)
    return FALSE;
  if (sa == sb)
    return bb >= ba;
  return !sa && sb && bb > ba; /* u8 into a wider signed type */
}

static gboolean vr_name_in(const char *q, const char *const *names) {
  for (uint32_t i = 0; names[i]; i++)
    if (strcmp(q, names[i]) == 0)
      return TRUE;
  return FALSE;
}

/* The first tensor argument of N, or SC_ID_NONE. */
static sc_id vr_first_tensor(const sc_node *n) {
  for (uint32_t i = 0; i < n->op->n_args; i++)
    if (n->args[i].kind == SC_VAL_TENSOR)
      return n->args[i].u.tensor;
  return SC_ID_NONE;
}

static const sc_value *vr_arg(const sc_node *n, const char *name) {
  int32_t i = sc_ops_arg_index(n->op, name);
  return i < 0 ? NULL : &n->args[i];
}

static sc_id vr_tensor_arg(const sc_node *n, const char *name) {
  const sc_value *v = vr_arg(n, name);
  return v && v->kind == SC_VAL_TENSOR ? v->u.tensor : SC_ID_NONE;
}

/* Meet [LO, HI] (SRC each) into the group range of T. */
static void vr_fact(ctx_t *c, sc_vrange *grp, sc_id *uf, sc_id t, sc_dim lo, uint32_t lo_src,
                    sc_dim hi, uint32_t hi_src) {
  sc_vrange r;
  sc_vrange_init(&r);
  r.lo = lo;
  r.lo_src = lo_src;
  r.hi = hi;
  r.hi_src = hi_src;
  sc_vrange_meet(c->st, &grp[vr_find(uf, t)], &r);
}

/* The ids of a lookup into dim D of SELF lie in [0, size(self, d)). */
static void vr_lookup_fact(ctx_t *c, sc_vrange *grp, sc_id *uf, sc_id ids, sc_id self, int64_t d,
                           gboolean wraps, sc_id node) {
  const sc_ttype *st = &sc_graph_tensor(c->spec, self)->type;
  const sc_ttype *it = &sc_graph_tensor(c->spec, ids)->type;
  gboolean sg;
  uint32_t k;
  if (vr_int_bits(it->dtype, &sg) == 0 || !sc_wrap_dim(d, st->shape.rank, &k) ||
      k >= st->shape.rank)
    return;
  sc_dim size = st->shape.dims[k];
  sc_dim hi = sc_dim_sub(c->st, size, sc_dim_const(1));
  sc_dim lo = wraps ? sc_dim_neg(c->st, size) : sc_dim_const(0);
  vr_fact(c, grp, uf, ids, lo, SC_VRANGE_FACT, hi, SC_VRANGE_FACT);
  if (!wraps)
    return;
  vr_assumption *a = g_new0(vr_assumption, 1);
  a->tensor = ids;
  a->node = node;
  uint32_t id = c->vr_assumptions->len;
  g_ptr_array_add(c->vr_assumptions, a);
  vr_fact(c, grp, uf, ids, sc_dim_const(0), id, hi, SC_VRANGE_NONE);
}

/* Derived facts of data-dependent operators (ops.h): the coordinates that
 * nonzero(self) lists lie in [0, max_i size(self, i) - 1] (a 1-D mask's
 * positions: [0, size - 1]), whatever self holds. */
static void vr_data_dependent_facts(ctx_t *c, sc_vrange *grp, sc_id *uf) {
  uint32_t nn = sc_graph_n_nodes(c->spec);
  for (sc_id v = 0; v < nn; v++) {
    const sc_node *n = sc_graph_node(c->spec, v);
    if (strcmp(n->op->qualname, "aten.nonzero.default") != 0 || n->n_results != 1 ||
        n->results[0] == SC_ID_NONE)
      continue;
    sc_id self = vr_tensor_arg(n, "self");
    if (self == SC_ID_NONE)
      continue;
    const sc_shape *sh = &sc_graph_tensor(c->spec, self)->type.shape;
    if (sh->rank == 0)
      continue;
    sc_dim m = sh->dims[0];
    for (uint32_t i = 1; i < sh->rank; i++)
      m = sc_dim_max(c->st, m, sh->dims[i]);
    vr_fact(c, grp, uf, n->results[0], sc_dim_const(0), SC_VRANGE_FACT,
            sc_dim_sub(c->st, m, sc_dim_const(1)), SC_VRANGE_FACT);
  }
}

/* Facts of every spec tensor into c->vrange; assumptions into
 * c->vr_assumptions (their texts name each group by a graph input when it
 * has one). */
static void vr_analyze(ctx_t *c) {
  static const char *const same_values[] = {
      "aten.clone.default", "aten.detach.default", "aten.alias.default",
      "aten.lift_fresh_copy.default", "aten.contiguous.default", "aten.view.default",
      "aten.view_copy.default", "aten._unsafe_view.default", "aten.reshape.default",
      "aten._reshape_alias.default", "aten.t.default", "aten.t_copy.default",
      "aten.transpose.int", "aten.transpose_copy.int", "aten.permute.default",
      "aten.permute_copy.default", "aten.squeeze.default", "aten.squeeze.dim",
      "aten.squeeze.dims", "aten.squeeze_copy.dim", "aten.unsqueeze.default",
      "aten.unsqueeze_copy.default", "aten.flatten.using_ints",
      "_c10d_functional.wait_tensor.default", NULL};
  static const char *const some_values[] = {
      "aten.slice.Tensor", "aten.slice_copy.Tensor", "aten.select.int", "aten.select_copy.int",
      "aten.expand.default", "aten.expand_copy.default", "aten.narrow.default",
      "aten.split.Tensor", "aten.split_with_sizes.default", "aten.unbind.int",
      "aten.chunk.default", "aten.index.Tensor", "aten.index_select.default",
      "aten.gather.default", NULL};
  uint32_t nt = sc_graph_n_tensors(c->spec), nn = sc_graph_n_nodes(c->spec);
  c->vrange = g_new(sc_vrange, nt ? nt : 1);
  c->vr_assumptions = g_ptr_array_new_with_free_func(vr_assumption_free);
  sc_id *uf = g_new(sc_id, nt ? nt : 1);
  sc_vrange *grp = g_new(sc_vrange, nt ? nt : 1);
  for (sc_id t = 0; t < nt; t++) {
    uf[t] = t;
    sc_vrange_init(&grp[t]);
    sc_vrange_init(&c->vrange[t]);
  }
  /* groups of tensors with the same values */
  for (sc_id v = 0; v < nn; v++) {
    const sc_node *n = sc_graph_node(c->spec, v);
    const char *q = n->op->qualname;
    sc_id in = vr_first_tensor(n), out = n->n_results ? n->results[0] : SC_ID_NONE;
    if (in == SC_ID_NONE || out == SC_ID_NONE || n->n_results != 1)
      continue;
    if (strcmp(q, "aten.copy.default") == 0) {
      sc_id src = vr_tensor_arg(n, "src");
      if (src != SC_ID_NONE && sc_graph_tensor(c->spec, src)->type.dtype ==
                                   sc_graph_tensor(c->spec, out)->type.dtype)
        vr_union(uf, src, out);
    } else if (strcmp(q, "aten._to_copy.default") == 0) {
      if (vr_cast_keeps(sc_graph_tensor(c->spec, in)->type.dtype,
                        sc_graph_tensor(c->spec, out)->type.dtype))
        vr_union(uf, in, out);
    } else if (vr_name_in(q, same_values)) {
      vr_union(uf, in, out);
    }
  }
  /* declared */
  for (sc_id t = 0; t < nt; t++) {
    const sc_tensor *ten = sc_graph_tensor(c->spec, t);
    if (ten->has_values)
      vr_fact(c, grp, uf, t, ten->values_min, SC_VRANGE_FACT, ten->values_max, SC_VRANGE_FACT);
  }
  vr_data_dependent_facts(c, grp, uf);
  /* derived from lookups (and the assumption on aten.index) */
  for (sc_id v = 0; v < nn; v++) {
    const sc_node *n = sc_graph_node(c->spec, v);
    const char *q = n->op->qualname;
    if (strcmp(q, "aten.embedding.default") == 0) {
      sc_id w = vr_tensor_arg(n, "weight"), ids = vr_tensor_arg(n, "indices");
      if (w != SC_ID_NONE && ids != SC_ID_NONE)
        vr_lookup_fact(c, grp, uf, ids, w, 0, FALSE, v);
    } else if (strcmp(q, "aten.index_select.default") == 0 ||
               strcmp(q, "aten.gather.default") == 0) {
      sc_id self = vr_tensor_arg(n, "self"), ids = vr_tensor_arg(n, "index");
      const sc_value *d = vr_arg(n, "dim");
      if (self != SC_ID_NONE && ids != SC_ID_NONE && d && d->kind == SC_VAL_INT &&
          sc_dim_is_const(d->u.i))
        vr_lookup_fact(c, grp, uf, ids, self, d->u.i.value, FALSE, v);
    } else if (strcmp(q, "aten.index.Tensor") == 0) {
      sc_id self = vr_tensor_arg(n, "self");
      const sc_value *l = vr_arg(n, "indices");
      if (self == SC_ID_NONE || !l || l->kind != SC_VAL_TENSOR_LIST)
        continue;
      /* dims in order; a bool or uint8 mask takes several: stop there */
      for (uint32_t j = 0; j < l->u.list.n; j++) {
        sc_id ids = l->u.list.ids[j];
        if (ids == SC_ID_NONE)
          continue;
        sc_dtype dt = sc_graph_tensor(c->spec, ids)->type.dtype;
        if (dt == SC_DTYPE_BOOL || dt == SC_DTYPE_U8)
          break;
        vr_lookup_fact(c, grp, uf, ids, self, (int64_t)j, TRUE, v);
      }
    }
  }
  /* selections: an input's facts hold for its results (two passes in
   * topological order, as a group may learn from a later use) */
  uint32_t n_order = 0;
  const sc_id *order = sc_graph_topo_order(c->spec, &n_order);
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < n_order; i++) {
      const sc_node *n = sc_graph_node(c->spec, order[i]);
      if (!vr_name_in(n->op->qualname, some_values))
        continue;
      sc_id in = vr_first_tensor(n);
      if (in == SC_ID_NONE)
        continue;
      sc_vrange r = grp[vr_find(uf, in)];
      if (sc_vrange_is_unbounded(&r))
        continue;
      for (uint32_t k = 0; k < n->n_results; k++)
        if (n->results[k] != SC_ID_NONE &&
            sc_graph_tensor(c->spec, n->results[k])->type.dtype ==
                sc_graph_tensor(c->spec, in)->type.dtype)
          sc_vrange_meet(c->st, &grp[vr_find(uf, n->results[k])], &r);
    }
  for (sc_id t = 0; t < nt; t++)
    c->vrange[t] = grp[vr_find(uf, t)];
  /* the assumptions' texts, naming the group by a graph input if it has one */
  for (guint i = 0; i < c->vr_assumptions->len; i++) {
    vr_assumption *a = g_ptr_array_index(c->vr_assumptions, i);
    sc_id root = vr_find(uf, a->tensor), named = a->tensor;
    for (sc_id t = 0; t < nt; t++)
      if (vr_find(uf, t) == root && sc_graph_tensor(c->spec, t)->producer == SC_ID_NONE) {
        named = t;
        break;
      }
    const sc_node *n = sc_graph_node(c->spec, a->node);
    g_autofree char *where = n->src ? g_path_get_basename(n->src) : NULL;
    a->text = g_strdup_printf("%s >= 0, ids of %s.%s at %s; negative ids would wrap",
                              sc_graph_tensor(c->spec, named)->name, n->op->ns, n->op->name,
                              where ? where : n->name);
    a->tensor = named;
  }
  g_free(grp);
  g_free(uf);
}

static void vr_free(ctx_t *c) {
  g_free(c->vrange);
  c->vrange = NULL;
  if (c->vr_assumptions)
    g_ptr_array_unref(c->vr_assumptions);
  c->vr_assumptions = NULL;
}

/* The facts of spec tensor U on its class CLS in this visit's e-graph. */
static void vr_seed(ctx_t *c, sc_id u, sc_id cls) {
  if (c->vrange != NULL && !sc_vrange_is_unbounded(&c->vrange[u]))
    sc_lang_add_range(c->lang, cls, &c->vrange[u]);
}

/* The assumptions read by lemmas that fired at spec node N, into the
 * result (each assumption once; each use "LEMMA at NODE" once). */
static void vr_collect_used(ctx_t *c, const sc_node *n) {
  if (c->rules == NULL || c->opts->lemmas == NULL || c->vr_assumptions == NULL)
    return;
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(c->opts->lemmas); i++) {
    uint32_t k = 0;
    const uint32_t *ids = sc_lemma_rules_assumptions(c->rules, i, &k);
    for (uint32_t j = 0; j < k; j++) {
      if (ids[j] >= c->vr_assumptions->len)
        continue;
      const vr_assumption *a = g_ptr_array_index(c->vr_assumptions, ids[j]);
      sc_infer_assumption *e = NULL;
      for (guint x = 0; x < c->res->assumptions->len && e == NULL; x++) {
        sc_infer_assumption *y = &g_array_index(c->res->assumptions, sc_infer_assumption, x);
        if (strcmp(y->text, a->text) == 0)
          e = y;
      }
      if (e == NULL) {
        sc_infer_assumption z = {g_strdup(a->text), sc_graph_tensor(c->spec, a->tensor)->name,
                                 sc_graph_node(c->spec, a->node)->name, g_strdup("")};
        g_array_append_val(c->res->assumptions, z);
        e = &g_array_index(c->res->assumptions, sc_infer_assumption, c->res->assumptions->len - 1);
      }
      g_autofree char *use = g_strdup_printf("%s at %s", sc_lemma_set_lemma(c->opts->lemmas, i)->name,
                                             n->name);
      g_auto(GStrv) have = g_strsplit(e->used_by, ", ", -1);
      if (!g_strv_contains((const char *const *)have, use)) {
        char *u = e->used_by[0] ? g_strdup_printf("%s, %s", e->used_by, use) : g_strdup(use);
        g_free(e->used_by);
        e->used_by = u;
      }
    }
  }
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
      cls = c->ex ? sc_explain_spec_leaf(c->ex, u, k) : k;
    else
      sc_egraph_union(eg, cls, k, SC_EXPLAIN_JUST(c->ex, SC_FACT_RELATION, u));
  }
  if (c->defer_depth[u] > 0) {
    sc_id k = deferred_class(c, u, error);
    if (k == SC_ID_NONE)
      return SC_ID_NONE;
    sc_egraph_union(eg, cls, k, SC_EXPLAIN_JUST(c->ex, SC_FACT_DEFERRED, u));
  }
  vr_seed(c, u, cls);
  return c->ex ? cls : sc_egraph_find(eg, cls); /* explain: u's leaf */
}

/* The class of spec tensor U as an input of a deferred node (or of a node
 * that reads a deferred tensor): its relation and, when U maps cleanly,
 * also its producer applied to its inputs' relations (one level), so that
 * lemmas see the structure of the clean tensors a deferred chain is built
 * from (the label masks of a vocabulary-parallel cross entropy).  That is
 * the spec's own definition of U: sound. */
static sc_id structured_class(ctx_t *c, sc_id u, GError **error) {
  sc_id cls = spec_input_class(c, u, error);
  if (cls == SC_ID_NONE || c->defer_depth[u] > 0)
    return cls;
  const sc_tensor *ten = sc_graph_tensor(c->spec, u);
  if (ten->producer == SC_ID_NONE)
    return cls;
  const sc_node *pn = sc_graph_node(c->spec, ten->producer);
  for (uint32_t i = 0; i < pn->n_inputs; i++)
    if (!c->rel[pn->inputs[i]] || c->rel[pn->inputs[i]]->len == 0)
      return cls;
  uint32_t k = 0;
  while (k < pn->n_results && pn->results[k] != u)
    k++;
  GArray *children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_value *args = args_to_children(c, pn, spec_input_class, children, error);
  if (args) {
    GError *local = NULL;
    sc_id s2 = sc_lang_add_call(c->lang, pn->op, args, (const sc_id *)children->data,
                                children->len, k, &local);
    g_clear_error(&local);
    if (s2 != SC_ID_NONE)
      sc_egraph_union(sc_lang_egraph(c->lang), cls, s2, SC_JUST_ASSERTED);
    free_args(args, pn->op->n_args);
  }
  g_array_free(children, TRUE);
  return cls;
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
  /* a copy: adding nodes below may move the e-graph's class data */
  const sc_ttype t0 = *sc_lang_class_type(c->lang, in[0]);
  uint32_t rank = t0.shape.rank;
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
    sc_dim len = t0.shape.dims[d.value], part;
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
    sc_dim len = t0.shape.dims[sd.value], part;
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

/* empty, empty_like, empty_strided, new_empty, new_empty_strided and
 * sc.empty: an uninitialised buffer, whose value is the relation
 * language's constant empty(shape) (real-vllm.lemma), depends on no data
 * and is never read by the kernels that write it. */
static gboolean is_empty_buffer(const sc_op *op) {
  if (strcmp(op->ns, "aten") == 0)
    return g_str_has_prefix(op->name, "empty") || g_str_has_prefix(op->name, "new_empty");
  return strcmp(op->ns, "sc") == 0 && strcmp(op->name, "empty") == 0;
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
    sc_egraph_union(eg, cls, leaf, SC_EXPLAIN_JUST(c->ex, SC_FACT_IMPL, w));
    /* A layout operator (view, cat, slice, permute, ..., or an identity)
     * of related tensors is related: it maps back to them by the inverse
     * layout (a rank's cat of its q, k and v gradients, before it is
     * flattened for the weight gradient). */
    if (n->op->flags & (SC_OP_VIEW | SC_OP_IDENTITY))
      trel_add(c, n->results[k]);
    /* An uninitialised buffer (is_empty_buffer) is related to anything:
     * the output buffers vLLM's kernels write (an empty_like, viewed as
     * heads) must not hold the kernel's node back. */
    if (is_empty_buffer(n->op))
      trel_add(c, n->results[k]);
  }
  free_args(args, n->op->n_args);
  g_array_free(children, TRUE);
  return ok;
}

/* --- extraction --- */

typedef sc_infer_weight weight_ctx;

uint32_t sc_infer_clean_weight(const sc_egraph *eg, sc_id node, void *user) {
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

static void alias_exprs(ctx_t *c, const sc_term *first, const gboolean *allowed_leaf,
                        GHashTable *covered, GPtrArray *out);

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
                                         c->term_size, sc_infer_clean_weight, &wc, NULL);
  /* GraphGuard keeps the simplest expression of each self-provable family
   * (section 4.3.2).  Lemma-only rewrites keep the set of impl tensors a
   * term reads, so the smallest term per set of leaves stands for its
   * family: larger terms over the same leaves are dropped.  At most
   * max_terms families are kept. */
  GHashTable *families = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  guint kept = 0;
  const sc_term *first = NULL;
  GHashTable *covered = g_hash_table_new(g_direct_hash, g_direct_equal); /* tensor id + 1 */
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
    if (!first)
      first = term;
    for (uint32_t j = 0; j < sc_term_n_nodes(term); j++) {
      const sc_term_node *tn = sc_term_node_at(term, j);
      if (tn->op == SC_LANG_OP_TENSOR)
        g_hash_table_add(covered, GUINT_TO_POINTER(tn->attr + 1));
    }
  }
  /* the enumeration was cut short (or the families were): impl tensors
   * that no kept term reads may still equal one of its parts */
  if (first && (terms->len >= 4 * c->opts->max_terms || kept >= c->opts->max_terms))
    alias_exprs(c, first, allowed_leaf, covered, out);
  g_hash_table_unref(covered);
  g_hash_table_unref(families);
  g_ptr_array_unref(terms);
}

/* Aliases (called by clean_exprs when its enumeration was cut short).
 * An impl tensor that equals a part of the spec tensor under many names
 * (vLLM splits its scattered q|k|v buffer four times, so every head block
 * has five or more names on each rank) makes the smallest terms all cats
 * of aliases: with n names per part and p parts there are n^p of them,
 * the budget is spent, and most names (and the impl's scattered buffer,
 * whose slices are larger terms) are read by no kept term.  Yet the
 * relation is what carries T_rel to the consumers of the spec tensor: a
 * name no kept term reads leaves its consumers (the impl's view of one of
 * those splits) unexplored at the next node.  So, for FIRST (the smallest
 * kept term), each leaf's class lists its small clean terms that read a
 * tensor no kept term reads (at most ALIAS_PER_CLASS, of size at most
 * ALIAS_TERM_SIZE), and round r keeps FIRST with every leaf replaced by
 * its class's r-th such term: one more term per name, not per
 * combination.  A replaced leaf keeps its class, so every e-node of FIRST
 * is unchanged and the term is in the same class (a proved equality like
 * every other: this only decides what is explored next). */
#define ALIAS_TERM_SIZE 8
#define ALIAS_PER_CLASS 8
#define ALIAS_MAX_KIDS 16

/* Copy node I of SRC (and what it reads) into DST; MAP caches copies.
 * Every node of SRC has at most ALIAS_MAX_KIDS children. */
static uint32_t copy_term_node(sc_term *dst, const sc_term *src, uint32_t i, uint32_t *map) {
  if (map[i] != UINT32_MAX)
    return map[i];
  const sc_term_node *tn = sc_term_node_at(src, i);
  uint32_t kids[ALIAS_MAX_KIDS];
  g_assert(tn->n_children <= ALIAS_MAX_KIDS); /* reads_uncovered filtered */
  for (uint32_t k = 0; k < tn->n_children; k++)
    kids[k] = copy_term_node(dst, src, sc_term_child(src, i, k), map);
  map[i] = sc_term_add(dst, tn->op, tn->attr, kids, tn->n_children);
  return map[i];
}

/* The alternatives of the class of leaf I of FIRST: ALTS[j] of the first
 * leaf j of that class. */
static const GPtrArray *leaf_alts(GPtrArray **alts, const sc_id *cls, uint32_t i) {
  for (uint32_t j = 0; j <= i; j++)
    if (alts[j] != NULL && cls[j] == cls[i])
      return alts[j];
  return NULL;
}

/* Does T read a tensor not in COVERED (and fit copy_term_node)? */
static gboolean reads_uncovered(const sc_term *t, GHashTable *covered) {
  gboolean fresh = FALSE;
  for (uint32_t q = 0; q < sc_term_n_nodes(t); q++) {
    const sc_term_node *tn = sc_term_node_at(t, q);
    if (tn->n_children > ALIAS_MAX_KIDS)
      return FALSE;
    if (tn->op == SC_LANG_OP_TENSOR &&
        !g_hash_table_contains(covered, GUINT_TO_POINTER(tn->attr + 1)))
      fresh = TRUE;
  }
  return fresh;
}

static void alias_exprs(ctx_t *c, const sc_term *first, const gboolean *allowed_leaf,
                        GHashTable *covered, GPtrArray *out) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  uint32_t n = sc_term_n_nodes(first);
  for (uint32_t i = 0; i < n; i++)
    if (sc_term_node_at(first, i)->n_children > ALIAS_MAX_KIDS)
      return;
  sc_id *cls = g_new(sc_id, n ? n : 1);
  GPtrArray **alts = g_new0(GPtrArray *, n ? n : 1);
  weight_ctx wc = {c->lang, allowed_leaf};
  guint rounds = 0;
  /* the class of every node of FIRST, bottom-up; alternatives per leaf class */
  for (uint32_t i = 0; i < n; i++) {
    const sc_term_node *tn = sc_term_node_at(first, i);
    sc_id kids[ALIAS_MAX_KIDS];
    for (uint32_t k = 0; k < tn->n_children; k++)
      kids[k] = cls[sc_term_child(first, i, k)];
    sc_id id = sc_egraph_lookup(eg, tn->op, tn->attr, kids, tn->n_children);
    if (id == SC_ID_NONE)
      goto out;
    cls[i] = sc_egraph_find(eg, id);
    if (tn->op != SC_LANG_OP_TENSOR || leaf_alts(alts, cls, i) != NULL)
      continue;
    GPtrArray *terms = sc_egraph_enumerate(eg, cls[i], 4 * ALIAS_PER_CLASS, ALIAS_TERM_SIZE,
                                           sc_infer_clean_weight, &wc, NULL);
    alts[i] = g_ptr_array_new_with_free_func((GDestroyNotify)sc_term_free);
    for (guint t = 0; t < terms->len && alts[i]->len < ALIAS_PER_CLASS; t++)
      if (reads_uncovered(g_ptr_array_index(terms, t), covered))
        g_ptr_array_add(alts[i], g_ptr_array_steal_index(terms, t--));
    g_ptr_array_unref(terms);
    rounds = MAX(rounds, alts[i]->len);
  }
  for (guint r = 0; r < rounds; r++) {
    g_autoptr(sc_term) t = sc_term_new();
    uint32_t *map = g_new(uint32_t, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
      const sc_term_node *tn = sc_term_node_at(first, i);
      const GPtrArray *a = tn->op == SC_LANG_OP_TENSOR ? leaf_alts(alts, cls, i) : NULL;
      if (a != NULL && r < a->len) {
        const sc_term *alt = g_ptr_array_index(a, r);
        uint32_t an = sc_term_n_nodes(alt);
        uint32_t *amap = g_new(uint32_t, an ? an : 1);
        memset(amap, 0xff, (an ? an : 1) * sizeof *amap);
        map[i] = copy_term_node(t, alt, sc_term_root(alt), amap);
        g_free(amap);
        continue;
      }
      uint32_t kids[ALIAS_MAX_KIDS];
      for (uint32_t k = 0; k < tn->n_children; k++)
        kids[k] = map[sc_term_child(first, i, k)];
      map[i] = sc_term_add(t, tn->op, tn->attr, kids, tn->n_children);
    }
    g_free(map);
    sc_expr *e = sc_lang_term_to_expr(c->lang, t);
    if (!e)
      continue;
    sc_texpr *te = sc_texpr_bind(e, c->impl, TRUE, NULL);
    sc_expr_free(e);
    if (!te)
      continue;
    g_ptr_array_add(c->owned, te);
    g_ptr_array_add(out, te);
  }
out:
  for (uint32_t i = 0; i < n; i++)
    if (alts[i])
      g_ptr_array_unref(alts[i]);
  g_free(alts);
  g_free(cls);
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
 * operator is already in the e-graph; an uninitialised buffer
 * (is_empty_buffer) also when an empty() of the relation language is: the
 * spec's buffers map to it (real-vllm.lemma), while the impl's are ATen
 * nodes of their own shapes. */
static void add_sourceless(ctx_t *c) {
  GHashTableIter it;
  gpointer key, val;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  const sc_op *sc_empty = sc_ops_lookup("sc.empty.default", NULL);
  g_hash_table_iter_init(&it, c->sourceless);
  while (g_hash_table_iter_next(&it, &key, &val)) {
    uint32_t op = GPOINTER_TO_UINT(key) - 1;
    uint32_t n_cls = 0;
    sc_egraph_classes_with_op(eg, op, &n_cls);
    if (n_cls == 0 && sc_empty != NULL && is_empty_buffer(sc_ops_at(op)))
      sc_egraph_classes_with_op(eg, sc_empty->id, &n_cls);
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
      sc_id fn = sc_explain_sum_node(c->ex, f), kn = sc_explain_sum_node(c->ex, k);
      g_array_append_val(pairs, fn);
      g_array_append_val(pairs, kn);
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
      sc_id kn = sc_explain_sum_node(c->ex, k);
      g_array_append_val(groups, kn);
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
      sc_egraph_union(eg, k, t, SC_EXPLAIN_JUST(c->ex, SC_FACT_AC_SUM, 0));
      merged = TRUE;
    }
  }
  g_array_free(groups, TRUE);
  for (guint i = 0; i + 1 < pairs->len; i += 2) {
    sc_id x = g_array_index(pairs, sc_id, i), y = g_array_index(pairs, sc_id, i + 1);
    if (sc_egraph_find(eg, x) != sc_egraph_find(eg, y)) {
      sc_egraph_union(eg, x, y, SC_EXPLAIN_JUST(c->ex, SC_FACT_AC_SUM, 0));
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

/* --- data-dependent sizes (ops.h, SC_OP_DATA_DEPENDENT) --- */

/* The registry's data-dependent operators (aten.nonzero), found once. */
static gpointer find_dd_ops(gpointer unused) {
  (void)unused;
  GArray *ops = g_array_new(FALSE, FALSE, sizeof(const sc_op *));
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    if ((op->flags & SC_OP_DATA_DEPENDENT) && sc_ops_arg_index(op, "size") >= 0)
      g_array_append_val(ops, op);
  }
  return ops;
}

/* Do the attribute records A and B agree in every argument but `size`? */
static gboolean dd_same_but_size(const sc_lang *lang, uint32_t a, uint32_t b, int32_t k) {
  const sc_op *op = sc_lang_attr_op(lang, a);
  if (op != sc_lang_attr_op(lang, b) || sc_lang_attr_result(lang, a) != sc_lang_attr_result(lang, b))
    return FALSE;
  const sc_value *va = sc_lang_attr_args(lang, a), *vb = sc_lang_attr_args(lang, b);
  for (uint32_t i = 0; i < op->n_args; i++)
    if ((int32_t)i != k && !sc_value_equal(&va[i], &vb[i]))
      return FALSE;
  return va[k].kind == SC_VAL_INT && vb[k].kind == SC_VAL_INT;
}

/* Congruence modulo a data-dependent size.  nonzero(m){size=u0} (the
 * spec's) and nonzero(m){size=r0.u0} (a rank's) are different e-nodes:
 * the size is an attribute, the symbol each graph declared for the count
 * it computes.  Once their inputs are one class, they compute the same
 * tensor (an operator is a function of its inputs' values), so they are
 * equal and so are their sizes: u0 == r0.u0 holds in every run in which
 * the equalities this e-graph was built from hold, which is what every
 * relation of the check assumes.  It is learned into the bundle's symtab
 * (sc_symtab_assume, kept for the rest of the walk: later nodes' shapes
 * [u0, 1536] and [r0.u0, 1536] are then equal) and the classes are
 * merged.  Two sizes that the symtab proves different (or whose equality
 * contradicts the bundle's bounds and assumptions) mean that the e-graph
 * equates tensors of different sizes: an unsound lemma or relation.  The
 * union is attempted all the same, so that the shape analysis refuses it
 * and the check stops with its internal error naming both terms.  Returns
 * TRUE when classes were merged. */
static gboolean dd_merge_sizes(ctx_t *c) {
  static GOnce once = G_ONCE_INIT;
  const GArray *ops = g_once(&once, find_dd_ops, NULL);
  if (ops->len == 0)
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  GArray *nodes = g_array_new(FALSE, FALSE, sizeof(sc_id));
  GArray *pairs = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint o = 0; o < ops->len; o++) {
    const sc_op *op = g_array_index(ops, const sc_op *, o);
    int32_t k = sc_ops_arg_index(op, "size");
    uint32_t n_cls = 0;
    const sc_id *cls = sc_egraph_classes_with_op(eg, op->id, &n_cls);
    g_array_set_size(nodes, 0);
    for (uint32_t i = 0; i < n_cls; i++) {
      uint32_t nn = 0;
      const sc_id *ns = sc_egraph_class_nodes_with_op(eg, cls[i], op->id, &nn);
      g_array_append_vals(nodes, ns, nn);
    }
    for (guint i = 0; i < nodes->len; i++) {
      for (guint j = i + 1; j < nodes->len; j++) {
        sc_id x = g_array_index(nodes, sc_id, i), y = g_array_index(nodes, sc_id, j);
        uint32_t ar = sc_egraph_node_arity(eg, x);
        if (ar != sc_egraph_node_arity(eg, y) ||
            sc_egraph_find(eg, x) == sc_egraph_find(eg, y) ||
            !dd_same_but_size(c->lang, sc_egraph_node_attr(eg, x), sc_egraph_node_attr(eg, y), k))
          continue;
        const sc_id *kx = sc_egraph_node_children(eg, x), *ky = sc_egraph_node_children(eg, y);
        gboolean same = TRUE;
        for (uint32_t q = 0; q < ar && same; q++)
          same = sc_egraph_find(eg, kx[q]) == sc_egraph_find(eg, ky[q]);
        if (!same)
          continue;
        sc_dim a = sc_lang_attr_args(c->lang, sc_egraph_node_attr(eg, x))[k].u.i;
        sc_dim b = sc_lang_attr_args(c->lang, sc_egraph_node_attr(eg, y))[k].u.i;
        if (sc_dim_eq(c->st, a, b) == SC_UNKNOWN) {
          g_autofree char *sa = sc_dim_to_string(c->st, a);
          g_autofree char *sb = sc_dim_to_string(c->st, b);
          g_autofree char *fact = g_strdup_printf("%s == %s", sa, sb);
          GError *err = NULL;
          if (sc_symtab_assume(c->st, fact, &err))
            g_ptr_array_add(c->res->learned, g_strdup_printf(
                "%s (%s results proved equal at spec node '%s')", fact, op->qualname,
                c->visiting ? c->visiting->name : "?"));
          g_clear_error(&err); /* a contradiction: the union below is refused */
        }
        g_array_append_val(pairs, x);
        g_array_append_val(pairs, y);
      }
    }
  }
  gboolean merged = FALSE;
  for (guint i = 0; i + 1 < pairs->len; i += 2) {
    sc_id x = g_array_index(pairs, sc_id, i), y = g_array_index(pairs, sc_id, i + 1);
    if (sc_egraph_find(eg, x) != sc_egraph_find(eg, y))
      merged |= sc_egraph_union(eg, x, y, SC_JUST_ASSERTED);
  }
  g_array_free(pairs, TRUE);
  g_array_free(nodes, TRUE);
  return merged;
}

/* The parts of a constant are constants: a class holding both
 * sc.full(s, v, t) and cat(a, b, d) has a = sc.full(shape(a), v, t) and
 * b = sc.full(shape(b), v, t) (every entry of the cat is v, and a and b
 * are slices of it).  Lemmas rewrite one term at a time and cannot state
 * this (it reads two e-nodes of one class).  It is what lets a constant
 * reach each rank's part: the router's argmax over one expert is
 * full([n], 0) in the spec and cat(r0.g, r1.g) once gathered, so each
 * rank's r_k.g is full([n/2], 0), which real-moe.lemma's index_put and
 * index lemmas read.  Parts of another dtype than t are left alone (a cat
 * of mixed dtypes promotes them: a part's own values need not be v).
 * Returns TRUE when classes were merged. */
static gboolean cat_constant_parts(ctx_t *c) {
  const sc_op *cat = sc_ops_lookup("sc.cat.default", NULL);
  const sc_op *full = sc_ops_lookup("sc.full.default", NULL);
  if (!cat || !full)
    return FALSE;
  int32_t ks = sc_ops_arg_index(full, "shape");
  if (ks < 0)
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  uint32_t n_cls = 0;
  const sc_id *cls = sc_egraph_classes_with_op(eg, full->id, &n_cls);
  /* (part class, full node giving value and dtype) pairs, collected first:
   * adding nodes invalidates the class lists */
  GArray *todo = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (uint32_t i = 0; i < n_cls; i++) {
    uint32_t n_full = 0, n_cat = 0;
    const sc_id *fs = sc_egraph_class_nodes_with_op(eg, cls[i], full->id, &n_full);
    const sc_id *cs = sc_egraph_class_nodes_with_op(eg, cls[i], cat->id, &n_cat);
    if (n_full == 0 || n_cat == 0)
      continue;
    const sc_ttype *whole = sc_lang_class_type(c->lang, cls[i]);
    for (uint32_t j = 0; j < n_cat && whole; j++) {
      uint32_t ar = sc_egraph_node_arity(eg, cs[j]);
      const sc_id *kids = sc_egraph_node_children(eg, cs[j]);
      for (uint32_t q = 0; q < ar; q++) {
        const sc_ttype *pt = sc_lang_class_type(c->lang, kids[q]);
        uint32_t nf = 0;
        sc_egraph_class_nodes_with_op(eg, kids[q], full->id, &nf);
        if (!pt || pt->dtype != whole->dtype || nf > 0)
          continue;
        g_array_append_val(todo, kids[q]);
        g_array_append_val(todo, fs[0]);
      }
    }
  }
  gboolean merged = FALSE;
  for (guint i = 0; i + 1 < todo->len; i += 2) {
    sc_id part = g_array_index(todo, sc_id, i), fnode = g_array_index(todo, sc_id, i + 1);
    const sc_ttype *pt = sc_lang_class_type(c->lang, part);
    if (!pt)
      continue;
    sc_dtype part_dtype = pt->dtype; /* pt is not valid after the add below */
    const sc_value *fargs = sc_lang_attr_args(c->lang, sc_egraph_node_attr(eg, fnode));
    sc_value *args = g_new0(sc_value, full->n_args);
    for (uint32_t a = 0; a < full->n_args; a++)
      sc_value_copy(&args[a], &fargs[a]);
    sc_value_clear(&args[ks]);
    args[ks].kind = SC_VAL_INT_LIST;
    args[ks].u.ints.n = pt->shape.rank;
    args[ks].u.ints.v = g_new(sc_dim, pt->shape.rank ? pt->shape.rank : 1);
    for (uint32_t d = 0; d < pt->shape.rank; d++)
      args[ks].u.ints.v[d] = pt->shape.dims[d];
    GError *err = NULL;
    sc_id k = sc_lang_add_call(c->lang, full, args, NULL, 0, 0, &err);
    free_args(args, full->n_args);
    if (k == SC_ID_NONE) {
      g_clear_error(&err);
      continue;
    }
    const sc_ttype *kt = sc_lang_class_type(c->lang, k);
    if (kt && kt->dtype == part_dtype && sc_egraph_find(eg, k) != sc_egraph_find(eg, part))
      merged |= sc_egraph_union(eg, k, part, SC_JUST_ASSERTED);
  }
  g_array_free(todo, TRUE);
  return merged;
}

/* Saturate, then merge sums that are equal as multisets, nodes equal but
 * for a data-dependent size and the parts of constant cats, and saturate
 * again while that merges anything (a few times at most). */
static void saturate_ac(ctx_t *c, sc_runner *runner, const char **limit_hit) {
  saturate(c, runner, limit_hit);
  for (int i = 0; i < 4 && (ac_merge_sums(c) | dd_merge_sizes(c) | cat_constant_parts(c));
       i++) {
    sc_egraph_rebuild(sc_lang_egraph(c->lang));
    saturate(c, runner, limit_hit);
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
static void add_dd_producers(ctx_t *c) {
  uint32_t nn = sc_graph_n_nodes(c->impl);
  for (sc_id w = 0; w < nn; w++) {
    const sc_node *n = sc_graph_node(c->impl, w);
    if (!(n->op->flags & SC_OP_DATA_DEPENDENT) || c->node_explored[w] == c->visit)
      continue;
    for (uint32_t k = 0; k < n->n_results; k++) {
      if (n->results[k] != SC_ID_NONE && c->trel_stamp[n->results[k]] == c->visit) {
        g_array_append_val(c->frontier, w);
        break;
      }
    }
  }
}

/* Constants that an otherwise related impl node reads.  A creation node
 * without inputs (arange, full, zeros: a constant of its shape) relates to
 * nothing of the spec by itself, so it never joins T_rel on its own, and
 * an impl node reading one never becomes ready: each rank's
 * index(probs, [arange(n), expert]) or index_put(buffer, [arange(n),
 * expert], grad), whose other inputs are related.  When every input such
 * a node reads is in T_rel or made by such a creation node (and one at
 * least is in T_rel), the creation nodes are asserted and their results
 * join T_rel, which makes the node ready.  Exploration decides what is
 * asserted, never what is proved. */
static void add_sourceless_inputs(ctx_t *c) {
  uint32_t nn = sc_graph_n_nodes(c->impl);
  for (sc_id w = 0; w < nn; w++) {
    /* only nodes that some related tensor reaches (trel_add counted it) */
    if (c->node_explored[w] == c->visit || c->node_stamp[w] != c->visit ||
        c->node_ready[w] == 0)
      continue;
    const sc_node *n = sc_graph_node(c->impl, w);
    gboolean related = FALSE, constant = FALSE, ok = TRUE;
    for (uint32_t i = 0; i < n->n_inputs && ok; i++) {
      sc_id t = n->inputs[i];
      if (!reads_input(n, t))
        continue;
      if (c->trel_stamp[t] == c->visit) {
        related = TRUE;
        continue;
      }
      sc_id p = sc_graph_tensor(c->impl, t)->producer;
      const sc_node *pn = p == SC_ID_NONE ? NULL : sc_graph_node(c->impl, p);
      if (pn != NULL && pn->n_inputs == 0 && (pn->op->flags & SC_OP_CREATION))
        constant = TRUE;
      else
        ok = FALSE;
    }
    if (!ok || !related || !constant)
      continue;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      sc_id t = n->inputs[i];
      if (!reads_input(n, t) || c->trel_stamp[t] == c->visit)
        continue;
      sc_id p = sc_graph_tensor(c->impl, t)->producer;
      if (c->node_explored[p] != c->visit)
        g_array_append_val(c->frontier, p);
      trel_add(c, t);
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
static gboolean explore(ctx_t *c, sc_runner *runner, const sc_id *out_cls, uint32_t n_out,
                        const char **limit_hit, GError **error) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  gboolean saturated = FALSE;
  for (uint32_t round = 0; round < c->opts->max_rounds; round++) {
    grow_trel(c, out_cls, n_out);
    add_sourceless(c);
    add_dd_producers(c);
    add_sourceless_inputs(c);
    if (c->frontier->len == 0) {
      if (saturated)
        break;
      saturate_ac(c, runner, limit_hit);
      saturated = TRUE;
      continue;
    }
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
    saturated = TRUE;
  }
  return TRUE;
}

/* Does some result of N lack the relation it needs (a checked output: a
 * clean term over impl outputs; any other result that a visited node
 * reads: a clean term over impl tensors)?  Nothing recorded but the terms, which c->owned keeps. */
static gboolean result_is_read(ctx_t *c, sc_id t);

static gboolean some_output_unmapped(ctx_t *c, const sc_node *n, const sc_id *out_cls) {
  gboolean missing = FALSE;
  for (uint32_t k = 0; k < n->n_results && !missing; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE)
      continue;
    gboolean is_checked = FALSE;
    for (guint i = 0; i < c->res->checked->len && !is_checked; i++)
      is_checked = g_array_index(c->res->checked, sc_id, i) == t;
    if (!is_checked && !result_is_read(c, t))
      continue; /* nothing needs its relation */
    GPtrArray *exprs = g_ptr_array_new();
    clean_exprs(c, out_cls[k], is_checked ? c->impl_is_output : NULL, exprs);
    missing = exprs->len == 0;
    g_ptr_array_unref(exprs); /* the terms are in c->owned */
  }
  return missing;
}

/* Did the node's relation lose the impl?  A needed result whose clean
 * terms are all constants (sc.full, sc.arange: no impl tensor in them)
 * while the node's inputs related impl tensors (some impl node was
 * explored) maps, but leaves its readers nothing to explore from: the
 * router's argmax over one expert is full([n], 0), and the mask
 * eq(argmax, 0) that reads it must reach each rank's gathered argmax.
 * Such a node is widened like an unmapped one, so that the impl tensors
 * equal to the constant (each rank's argmax, their gather) are found and
 * join its relation. */
static gboolean outputs_lost_impl(ctx_t *c, const sc_node *n, const sc_id *out_cls) {
  if (c->explored_list->len == 0)
    return FALSE;
  gboolean lost = FALSE;
  for (uint32_t k = 0; k < n->n_results && !lost; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE || !result_is_read(c, t))
      continue;
    GPtrArray *exprs = g_ptr_array_new();
    clean_exprs(c, out_cls[k], NULL, exprs);
    lost = exprs->len > 0;
    GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (guint i = 0; i < exprs->len && lost; i++) {
      sc_texpr_collect_leaves(g_ptr_array_index(exprs, i), leaves);
      lost = leaves->len == 0;
    }
    g_array_free(leaves, TRUE);
    g_ptr_array_unref(exprs); /* the terms are in c->owned */
  }
  return lost;
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
                     : SC_JUST_IS_ASSERTED(just) ? "an asserted fact (a relation or an impl node)"
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

/* The nearest terms of class CLS (the smallest, by nearest_weight), as
 * strings appended to OUT. */
static void add_nearest_terms(ctx_t *c, sc_id cls, GPtrArray *out) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  weight_ctx wc = {c->lang, NULL};
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, cls), 3, 48,
                                         nearest_weight, &wc, NULL);
  for (guint i = 0; i < terms->len; i++)
    g_ptr_array_add(out, sc_lang_term_to_string(c->lang, g_ptr_array_index(terms, i)));
  g_ptr_array_unref(terms);
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
    const char *cond, *inst;
    sc_lemma_rules_undecided(c->rules, i, &cond, &inst);
    g_ptr_array_add(res->fundecided,
                    g_strdup_printf("%s (%s:%u): its condition was undecided %" G_GUINT64_FORMAT
                                    " times: where %s%s%s",
                                    li->name, li->file, li->line, k.undecided,
                                    cond ? cond : "?", inst ? "; undecided: " : "",
                                    inst ? inst : ""));
  }
  add_nearest_terms(c, out_cls[g_array_index(unmapped, uint32_t, 0)], res->fnearest);
}

/* The node where the walk stopped, when the failure is reported at an
 * earlier, deferred node: a user reads both (the deferred node is where
 * the impl first differs, the stop node where that difference could not
 * be absorbed). */
static void record_stop(ctx_t *c, sc_id v, const sc_id *out_cls, GArray *unmapped) {
  sc_infer_result *res = c->res;
  if (res->fnode == v || res->fstop != SC_ID_NONE)
    return;
  res->fstop = v;
  add_nearest_terms(c, out_cls[g_array_index(unmapped, uint32_t, 0)], res->fstop_nearest);
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
  res->fstop = SC_ID_NONE;
  g_ptr_array_set_size(res->fstop_nearest, 0);
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
/* The largest weighted size of a deferred relation's term.  Non-clean
 * nodes weigh 8 (nearest_weight), and a deferred chain inlines its
 * producers' terms: Megatron's cross-entropy backward reads the label mask
 * twice through five deferred nodes (about 70 at degree 2), past the
 * clean relations' bound. */
static uint32_t defer_term_size(const ctx_t *c) {
  return MIN(4 * c->term_size, 4096);
}

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
                                           4 * MAX_DEFER_TERMS, defer_term_size(c),
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
    if (c->res->deferred_texts[t])
      g_ptr_array_unref(c->res->deferred_texts[t]);
    c->res->deferred_texts[t] = texts_of(exprs);
  }
  g_ptr_array_unref(found);
  return TRUE;
}

/* Does a node of the walk read spec tensor T?  A result that no needed
 * node reads and that is not checked (max.dim's indices when only the
 * values are used, a dropout mask of a graph without backward) needs no
 * relation: no checked output depends on it. */
static gboolean result_is_read(ctx_t *c, sc_id t) {
  const sc_tensor *ten = sc_graph_tensor(c->spec, t);
  for (uint32_t j = 0; j < ten->n_consumers; j++)
    if (c->need[ten->consumers[j]])
      return TRUE;
  return FALSE;
}

/* Deferred relations that every reader has absorbed.  After node N is
 * visited: each deferred input of N has one reader fewer; N's outputs that
 * were just deferred (DEFERRED) become live with one use per needed
 * consumer.  When no deferred tensor is live any more and N itself mapped,
 * the pending failure is forgotten: every node that read a deferred
 * relation mapped cleanly, so the deferred node does not explain any later
 * failure (Megatron's attention scores written into an uninitialised
 * buffer: the spec's empty() maps to nothing, the baddbmm with beta=0 that
 * reads it maps cleanly, and a missing all-reduce in the backward must be
 * reported where it is, not at the empty()). */
static void settle_deferred(ctx_t *c, const sc_node *n, gboolean deferred) {
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    sc_id t = n->inputs[i];
    if (c->live_uses[t] > 0 && --c->live_uses[t] == 0)
      c->n_live--;
  }
  for (uint32_t k = 0; deferred && k < n->n_results; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE || c->defer_depth[t] == 0 || c->live_uses[t] > 0)
      continue;
    const sc_tensor *ten = sc_graph_tensor(c->spec, t);
    uint32_t uses = 0;
    for (uint32_t j = 0; j < ten->n_consumers; j++)
      uses += c->need[ten->consumers[j]] ? 1 : 0;
    if (uses > 0) {
      c->live_uses[t] = uses;
      c->n_live++;
    }
  }
  if (!deferred && c->pending && c->n_live == 0 && c->res->verdict == SC_VERDICT_FAILS) {
    clear_failure(c->res);
    g_ptr_array_set_size(c->res->fundecided, 0);
    c->pending = FALSE;
  }
}

/* Random operators (SC_OP_RANDOM: native_dropout).  No refinement can hold
 * for them literally: the captures carry no RNG state and the spec and the
 * ranks draw from different streams.  shardcheck treats them as
 * elementwise, with a random decision that follows the element (the same
 * element is kept or dropped alike wherever it is computed; the reference
 * interpreter draws it that way, docs/interpreter.md), which is what the
 * dropout lemmas (lemmas/real-megatron.lemma) say.  So a relation for a
 * random node's result is an assumption of the proof, whatever lemma gave
 * it: each such node that got one is listed with the value-range
 * assumptions (sc_infer_assumption_at), once.  A dropout with train=False
 * draws nothing and is not listed. */
static void note_random_assumption(ctx_t *c, const sc_node *n) {
  if (!(n->op->flags & SC_OP_RANDOM))
    return;
  /* train=False draws nothing (the identity with an all-true mask) */
  const sc_value *train = node_arg(n, "train");
  if (train && train->kind == SC_VAL_BOOL && !train->u.b)
    return;
  GString *related = g_string_new(NULL);
  const char *first = NULL;
  for (uint32_t k = 0; k < n->n_results; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE || c->rel[t] == NULL || c->rel[t]->len == 0)
      continue;
    const char *name = sc_graph_tensor(c->spec, t)->name;
    g_string_append_printf(related, "%s%s", related->len ? ", " : "", name);
    if (first == NULL)
      first = name;
  }
  if (first != NULL) {
    g_autofree char *where = n->src ? g_path_get_basename(n->src) : NULL;
    char *text = g_strdup_printf(
        "%s (%s)%s%s: its random decision follows the element (the capture has no RNG state; "
        "the spec and every rank are assumed to decide alike for the same element)",
        n->name, n->op->qualname, where ? " at " : "", where ? where : "");
    sc_infer_assumption z = {text, first, n->name,
                             g_strdup_printf("relations of %s at %s", related->str, n->name)};
    g_array_append_val(c->res->assumptions, z);
  }
  g_string_free(related, TRUE);
}

/* One spec node: Listing 2 with Listing 3's exploration.  Returns FALSE on
 * an error; a node that fails to map sets the result's failure and
 * *stop. */
static gboolean visit_node(ctx_t *c, sc_id v, gboolean *stop, GError **error) {
  const sc_node *n = sc_graph_node(c->spec, v);
  c->visiting = n;
  double t0 = g_get_monotonic_time() / 1e6;
  c->visit++;
  c->lang = sc_lang_new(c->st, c->impl);
  c->ex = c->opts->explain ? sc_explain_begin(c->lang, c->bundle, c->opts->lemmas) : NULL;
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
    /* compiled once: the rewrites do not depend on the e-graph */
    if (c->compiled == NULL)
      c->compiled = sc_lemma_compile(c->opts->lemmas, c->lang, error);
    else
      sc_lemma_rules_rebind(c->compiled, c->lang);
    c->rules = c->compiled;
    if (!c->rules)
      goto out;
    c->rewrites = sc_lemma_rules_array(c->rules, &c->n_rewrites);
  }
  runner = sc_runner_new(eg, &c->opts->limits);

  children = g_array_new(FALSE, FALSE, sizeof(sc_id));
  {
    gboolean any_deferred = FALSE;
    for (uint32_t i = 0; i < n->n_inputs; i++)
      any_deferred = any_deferred || c->defer_depth[n->inputs[i]] > 0;
    args = args_to_children(c, n, any_deferred ? structured_class : spec_input_class, children,
                            error);
  }
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
  if (!limit_hit &&
      (some_output_unmapped(c, n, out_cls) || outputs_lost_impl(c, n, out_cls)) &&
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
      if (!is_checked && result_is_read(c, t))
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
  if (c->ex)
    sc_explain_node(c->ex, v, out_cls, c->rules, c->res->output_texts, c->res->tensor_texts,
                    c->impl_is_output, c->opts, c->res->relexp);
  gboolean deferred = FALSE;
  if (unmapped->len) {
    deferred = defer_outputs(c, n, out_cls, unmapped, limit_hit);
    if (!c->pending || limit_hit) {
      /* the first failure (a limit overrides a deferred failure: the
       * verdict is then "limit") */
      clear_failure(c->res);
      record_failure(c, v, out_cls, unmapped, limit_hit);
      c->res->fexplored = c->explored_now;
    }
    if (deferred)
      c->pending = TRUE;
    else {
      record_stop(c, v, out_cls, unmapped);
      *stop = TRUE;
    }
  }
  if (!*stop)
    settle_deferred(c, n, deferred);
  note_random_assumption(c, n);
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
  vr_collect_used(c, n);
  c->rules = NULL; /* c->compiled keeps them for the next visit */
  c->rewrites = NULL;
  c->n_rewrites = 0;
  sc_explain_free(c->ex);
  c->ex = NULL;
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
  res->deferred_texts = g_new0(GPtrArray *, n_st ? n_st : 1);
  res->output_texts = g_new0(GPtrArray *, n_st ? n_st : 1);
  res->checked = g_array_new(FALSE, FALSE, sizeof(sc_id));
  res->fnode = SC_ID_NONE;
  res->funmapped = g_array_new(FALSE, FALSE, sizeof(sc_id));
  res->fnearest = g_ptr_array_new_with_free_func(g_free);
  res->fstop = SC_ID_NONE;
  res->fstop_nearest = g_ptr_array_new_with_free_func(g_free);
  res->expectations = g_array_new(FALSE, FALSE, sizeof(sc_infer_expectation));
  res->explanations = g_ptr_array_new_with_free_func(g_free);
  res->relexp = g_ptr_array_new_with_free_func(sc_relation_explanation_free);
  res->fundecided = g_ptr_array_new_with_free_func(g_free);
  res->assumptions = g_array_new(FALSE, FALSE, sizeof(sc_infer_assumption));
  res->learned = g_ptr_array_new_with_free_func(g_free);
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
  c.term_size = term_size_for(c.impl, opts->max_term_size);
  c.compiled = NULL;
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
  vr_analyze(&c);
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
  c.need = need;
  c.live_uses = g_new0(uint32_t, n_st ? n_st : 1);
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
    /* --- the overall budget (issue 19; budget.h), after each node: a
     * spent budget ends the check as a limit at the node being visited --- */
    const char *spent = ok ? sc_budget_check(opts->limits.budget, 0) : NULL;
    if (spent != NULL) {
      if (res->verdict != SC_VERDICT_LIMIT) {
        clear_failure(res);
        res->verdict = SC_VERDICT_LIMIT;
        res->fnode = v;
      }
      g_free(res->limit_reason);
      res->limit_reason = g_strdup(spent);
      stop = TRUE;
    }
    /* --- end of the budget check --- */
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
  g_free(c.live_uses);
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
  sc_lemma_rules_free(c.compiled);
  g_hash_table_unref(c.sourceless);
  vr_free(&c);
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
    if (r->deferred_texts[t])
      g_ptr_array_unref(r->deferred_texts[t]);
  }
  g_free(r->tensor_texts);
  g_free(r->deferred_texts);
  g_free(r->output_texts);
  g_array_free(r->checked, TRUE);
  g_array_free(r->funmapped, TRUE);
  g_ptr_array_unref(r->fnearest);
  g_ptr_array_unref(r->fstop_nearest);
  g_free(r->limit_reason);
  g_array_free(r->expectations, TRUE);
  g_ptr_array_unref(r->explanations);
  g_ptr_array_unref(r->relexp);
  g_ptr_array_unref(r->fundecided);
  for (guint i = 0; i < r->assumptions->len; i++) {
    sc_infer_assumption *a = &g_array_index(r->assumptions, sc_infer_assumption, i);
    g_free(a->text);
    g_free(a->used_by);
  }
  g_array_free(r->assumptions, TRUE);
  g_ptr_array_unref(r->learned);
  g_free(r);
}

sc_verdict sc_infer_verdict(const sc_infer_result *r) { return r->verdict; }
const GPtrArray *sc_infer_tensor_exprs(const sc_infer_result *r, sc_id t) {
  return r->tensor_texts[t];
}
const GPtrArray *sc_infer_tensor_deferred_exprs(const sc_infer_result *r, sc_id t) {
  return r->deferred_texts[t];
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
sc_id sc_infer_failure_stop_node(const sc_infer_result *r) { return r->fstop; }
const GPtrArray *sc_infer_failure_stop_nearest(const sc_infer_result *r) { return r->fstop_nearest; }
const char *sc_infer_limit_reason(const sc_infer_result *r) { return r->limit_reason; }
uint32_t sc_infer_n_expectations(const sc_infer_result *r) { return r->expectations->len; }
const sc_infer_expectation *sc_infer_expectation_at(const sc_infer_result *r, uint32_t i) {
  return &g_array_index(r->expectations, sc_infer_expectation, i);
}
const sc_infer_stats *sc_infer_get_stats(const sc_infer_result *r) { return &r->stats; }
const GPtrArray *sc_infer_explanations(const sc_infer_result *r) { return r->explanations; }
uint32_t sc_infer_n_relation_explanations(const sc_infer_result *r) { return r->relexp->len; }
const sc_relation_explanation *sc_infer_relation_explanation(const sc_infer_result *r, uint32_t i) {
  g_return_val_if_fail(i < r->relexp->len, NULL);
  return g_ptr_array_index(r->relexp, i);
}
const GPtrArray *sc_infer_failure_undecided(const sc_infer_result *r) { return r->fundecided; }
const GPtrArray *sc_infer_learned_sizes(const sc_infer_result *r) { return r->learned; }
uint32_t sc_infer_n_assumptions(const sc_infer_result *r) { return r->assumptions->len; }
const sc_infer_assumption *sc_infer_assumption_at(const sc_infer_result *r, uint32_t i) {
  g_return_val_if_fail(i < r->assumptions->len, NULL);
  return &g_array_index(r->assumptions, sc_infer_assumption, i);
}
