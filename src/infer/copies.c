/* copies.c — per-rank copies of one value: impl tensors that the impl
 * graph computes equal by construction, whatever the inputs, given the
 * input relation.
 *
 * A replicated tensor is computed once per rank: rank k applies the same
 * operators to its own copies of the replicated inputs (x = x_0 = x_1 in
 * the input relation) or to the results of one all_reduce, all_gather or
 * broadcast (every rank receives the same value).  Each rank's copy is its
 * own impl tensor, and a spec tensor's relation names one copy per form:
 * a sum of three replicated terms over four ranks has 4^3 forms, of which
 * the enumeration keeps a few, so that rank 1's copy of the second term
 * (r1:mm_49) is in no form read by a later node, and the rank-1 chain that
 * uses it is never explored (shardsmith 27031: each rank keeps its column
 * of its own copy of a replicated sum, and the columns are gathered;
 * 18023, 27018).  Any rank's copy stands for the whole.
 *
 * So, once per run, a value number per impl tensor: a replicated input's
 * bare copies (the input and assumed relations' entries with several
 * single-tensor expressions) share one; a node's results share the
 * numbers of an earlier node's with the same operator and arguments, its
 * tensor arguments compared by value number (hash-consing, as dups.c does
 * within a rank); every result of an all_reduce, all_gather or broadcast
 * has the number of its first.  Random, data-dependent and creation nodes
 * (no tensor input) keep their own numbers.  Each number held by two or
 * more impl tensors (not all of them inputs, which the input relation's
 * groups already cover; not a dormant duplicate's, which dups.c equates
 * when it is needed) becomes a replica group (replicas.c) whose
 * expressions are the copies: when one copy joins T_rel, the group is
 * queued and its copies are added, unioned, to T_rel, as the input
 * relation's groups are, and layer memoization maps it as one of them.
 * The equalities hold in every run in which the input relation holds:
 * they are the congruence closure the e-graph itself reaches when every
 * rank's chain is explored (the same operator over classes already equal,
 * a collective by its semantics, one term for every rank), computed once
 * over the whole impl graph instead of per visit, so they assume of an
 * operator nothing its equation in the e-graph does not.  Exploration
 * decides what is asserted, never what is proved.
 *
 * Ownership: the entries made here are owned by c->copy_entries (freed
 * by sc_rel_copies_free). */
#include "infer/infer-private.h"

#include <string.h>

/* The most copies a group holds (the ranks of one value). */
#define MAX_COPIES 64

typedef struct {
  const sc_rel_ctx *c;
  const sc_id *vn; /* per impl tensor */
} vn_ctx;

static sc_id vn_of(const vn_ctx *v, sc_id t) {
  return t == SC_ID_NONE ? t : v->vn[t];
}

static guint arg_hash(const vn_ctx *v, const sc_value *a) {
  if (a->kind == SC_VAL_TENSOR)
    return vn_of(v, a->u.tensor) * 2654435761u + 1u;
  if (a->kind == SC_VAL_TENSOR_LIST) {
    guint h = 7u + a->u.list.n;
    for (uint32_t j = 0; j < a->u.list.n; j++)
      h = h * 31u + vn_of(v, a->u.list.ids[j]);
    return h;
  }
  return sc_value_hash(a);
}

static gboolean arg_equal(const vn_ctx *v, const sc_value *a, const sc_value *b) {
  if (a->kind != b->kind)
    return FALSE;
  if (a->kind == SC_VAL_TENSOR)
    return vn_of(v, a->u.tensor) == vn_of(v, b->u.tensor);
  if (a->kind == SC_VAL_TENSOR_LIST) {
    if (a->u.list.n != b->u.list.n)
      return FALSE;
    for (uint32_t j = 0; j < a->u.list.n; j++)
      if (vn_of(v, a->u.list.ids[j]) != vn_of(v, b->u.list.ids[j]))
        return FALSE;
    return TRUE;
  }
  return sc_value_equal(a, b);
}

static guint node_hash(const vn_ctx *v, const sc_node *n) {
  guint h = n->op->id * 2654435761u + n->n_results;
  for (uint32_t i = 0; i < n->op->n_args; i++)
    h = h * 31u + arg_hash(v, &n->args[i]);
  return h;
}

static gboolean node_equal(const vn_ctx *v, const sc_node *x, const sc_node *y) {
  if (x->op != y->op || x->n_results != y->n_results)
    return FALSE;
  for (uint32_t i = 0; i < x->op->n_args; i++)
    if (!arg_equal(v, &x->args[i], &y->args[i]))
      return FALSE;
  /* the same operator on the same arguments: results of the same types */
  for (uint32_t k = 0; k < x->n_results; k++)
    if ((x->results[k] == SC_ID_NONE) != (y->results[k] == SC_ID_NONE))
      return FALSE;
  return TRUE;
}

/* Does every result of collective N hold the same value (the reduction,
 * the gathered cat, the source's tensor)? */
static gboolean same_on_every_rank(const sc_node *n) {
  return strcmp(n->op->name, "all_reduce") == 0 || strcmp(n->op->name, "all_gather") == 0 ||
         strcmp(n->op->name, "broadcast") == 0;
}

/* The bare copies of the entries of R share the number of the first. */
static void number_inputs(const sc_relation *r, sc_id *vn) {
  for (uint32_t i = 0; r != NULL && i < r->n_entries; i++) {
    const sc_relation_entry *e = &r->entries[i];
    sc_id first = SC_ID_NONE;
    for (uint32_t j = 0; j < e->n_exprs; j++) {
      if (sc_texpr_get_kind(e->exprs[j]) != SC_TEXPR_TENSOR)
        continue;
      sc_id t = sc_texpr_tensor(e->exprs[j]);
      if (first == SC_ID_NONE)
        first = vn[t];
      else
        vn[t] = first;
    }
  }
}

/* Value numbers of every impl tensor, into VN; CONSTANT: the tensors
 * that depend on no graph input (a causal mask built on each rank). */
static void number_tensors(sc_rel_ctx *c, sc_id *vn, gboolean *constant) {
  uint32_t nn = sc_graph_n_nodes(c->impl), nt = sc_graph_n_tensors(c->impl);
  for (sc_id t = 0; t < nt; t++)
    vn[t] = t;
  number_inputs(sc_bundle_input_relation(c->bundle), vn);
  number_inputs(sc_bundle_assume_relation(c->bundle), vn);
  vn_ctx v = {c, vn};
  /* hash -> GArray of the first nodes with that hash */
  GHashTable *seen = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                           (GDestroyNotify)g_array_unref);
  for (sc_id w = 0; w < nn; w++) {
    const sc_node *n = sc_graph_node(c->impl, w);
    gboolean is_const = !(n->op->flags & SC_OP_RANDOM);
    for (uint32_t i = 0; i < n->n_inputs && is_const; i++)
      is_const = constant[n->inputs[i]];
    for (uint32_t k = 0; k < n->n_results; k++)
      if (n->results[k] != SC_ID_NONE)
        constant[n->results[k]] = is_const;
    /* a constant built on each rank (arange, full) is one value; an
     * uninitialised buffer is none */
    if ((n->op->flags & (SC_OP_RANDOM | SC_OP_DATA_DEPENDENT)) || sc_rel_is_empty_buffer(n->op))
      continue;
    gboolean coll = (n->op->flags & SC_OP_COLLECTIVE) != 0;
    if (coll && !same_on_every_rank(n))
      continue;
    gpointer key = GUINT_TO_POINTER(node_hash(&v, n));
    GArray *firsts = g_hash_table_lookup(seen, key);
    if (firsts == NULL) {
      firsts = g_array_new(FALSE, FALSE, sizeof(sc_id));
      g_hash_table_insert(seen, key, firsts);
    }
    sc_id r = SC_ID_NONE;
    for (guint i = 0; i < firsts->len && r == SC_ID_NONE; i++)
      if (node_equal(&v, sc_graph_node(c->impl, g_array_index(firsts, sc_id, i)), n))
        r = g_array_index(firsts, sc_id, i);
    if (r == SC_ID_NONE)
      g_array_append_val(firsts, w);
    const sc_node *rn = sc_graph_node(c->impl, r == SC_ID_NONE ? w : r);
    for (uint32_t k = 0; k < n->n_results; k++) {
      if (n->results[k] == SC_ID_NONE)
        continue;
      /* a collective's results are one value: its first result's */
      sc_id src = coll ? rn->results[0] : rn->results[k];
      if (src != SC_ID_NONE)
        vn[n->results[k]] = vn[src];
    }
  }
  g_hash_table_unref(seen);
}

/* Is impl tensor T a result of a node that dups.c keeps dormant (it is
 * equated with its representative's result when needed)? */
static gboolean is_duplicate(const sc_rel_ctx *c, sc_id t) {
  sc_id p = sc_graph_tensor(c->impl, t)->producer;
  return p != SC_ID_NONE && c->dup_rep[p] != p;
}

/* The entry whose expressions are the tensors of MEMBERS (bare leaves). */
static sc_relation_entry *copies_entry(sc_rel_ctx *c, const GArray *members) {
  sc_relation_entry *e = g_new0(sc_relation_entry, 1);
  e->tensor = SC_ID_NONE;
  e->n_exprs = members->len;
  e->exprs = g_new0(sc_texpr *, members->len);
  for (guint i = 0; i < members->len; i++) {
    sc_id t = g_array_index(members, sc_id, i);
    GError *err = NULL;
    e->exprs[i] = sc_texpr_parse(sc_graph_tensor(c->impl, t)->name, c->impl, FALSE, &err);
    if (e->exprs[i] == NULL || sc_texpr_tensor(e->exprs[i]) != t) {
      /* a name the expression language cannot read back: no group */
      g_clear_error(&err);
      for (guint j = 0; j <= i; j++)
        if (e->exprs[j])
          sc_texpr_free(e->exprs[j]);
      g_free(e->exprs);
      g_free(e);
      return NULL;
    }
  }
  return e;
}

static void entry_free(gpointer p) {
  sc_relation_entry *e = p;
  for (uint32_t j = 0; j < e->n_exprs; j++)
    sc_texpr_free(e->exprs[j]);
  g_free(e->exprs);
  g_free(e);
}

void sc_rel_copies_init(sc_rel_ctx *c, GPtrArray *out) {
  uint32_t nt = sc_graph_n_tensors(c->impl);
  c->copy_entries = g_ptr_array_new_with_free_func(entry_free);
  if (nt == 0)
    return;
  sc_id *vn = g_new(sc_id, nt);
  gboolean *constant = g_new0(gboolean, nt);
  number_tensors(c, vn, constant);
  /* the members of each number, in tensor order */
  GHashTable *by = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                         (GDestroyNotify)g_array_unref);
  GArray *order = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (sc_id t = 0; t < nt; t++) {
    if (is_duplicate(c, t))
      continue;
    gpointer key = GUINT_TO_POINTER(vn[t] + 1);
    GArray *m = g_hash_table_lookup(by, key);
    if (m == NULL) {
      m = g_array_new(FALSE, FALSE, sizeof(sc_id));
      g_hash_table_insert(by, key, m);
      g_array_append_val(order, vn[t]);
    }
    g_array_append_val(m, t);
  }
  for (guint i = 0; i < order->len; i++) {
    const GArray *m = g_hash_table_lookup(by, GUINT_TO_POINTER(g_array_index(order, sc_id, i) + 1));
    if (m->len < 2 || m->len > MAX_COPIES)
      continue;
    /* not only replicated inputs (the input relation's own group), not
     * constants (constant.c relates them on the spec's side) */
    gboolean computed = FALSE;
    for (guint j = 0; j < m->len && !computed; j++) {
      sc_id t = g_array_index(m, sc_id, j);
      computed = sc_graph_tensor(c->impl, t)->producer != SC_ID_NONE && !constant[t];
    }
    if (!computed)
      continue;
    sc_relation_entry *e = copies_entry(c, m);
    if (e == NULL)
      continue;
    g_ptr_array_add(c->copy_entries, e);
    g_ptr_array_add(out, e);
  }
  g_array_free(order, TRUE);
  g_hash_table_unref(by);
  g_free(vn);
  g_free(constant);
}

void sc_rel_copies_free(sc_rel_ctx *c) {
  if (c->copy_entries)
    g_ptr_array_unref(c->copy_entries);
  c->copy_entries = NULL;
}
