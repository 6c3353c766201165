/* pass-replica-sums.c — n replicas of v / n sum to v; and the relations
 * that name such a sum with distinct replicas.
 *
 * A class A holding div.Scalar(S, n) (an average over n ranks: collective.c
 * writes all_reduce(avg) so) and at least n distinct impl tensors (the
 * ranks' copies of it, one class since they are equal) gives
 * S = sum(A, ..., A), n times: over the reals each copy is S / n, and n
 * of them add up to S.  A sum of pairwise distinct tensors of one value is
 * clean (bundle-format.md; a repeated tensor is a scaling, which is not),
 * so when an average was taken where a sum was due, each rank's copy is
 * the spec's value divided by n, and the spec's value is still the sum of
 * the n copies: the values diverge where the copies are used apart (a
 * normalization, an output), and the failure is reported there.
 *
 * Not a hook: S's new sum meets div.Scalar(S, n) again, and the lemma that
 * divides a sum term by term (accum.lemma) then builds S / n, S / n^2,
 * ... without end, so the pass runs once, only in a visit that left an
 * output unmapped after widening (a node that maps pays nothing; a node
 * with a checked output never: what the impl returns is expected as it is,
 * and a scaled output is reported there), followed
 * by a saturation of REPLICA_ROUNDS iterations (with its own runner);
 * when that reaches the node or time limit, the visit is made again
 * without the pass (visit.c), so the pass never turns a failure into a
 * limit.
 *
 * The e-graph holds the copies as one class, so the term extracted from
 * such a sum repeats one tensor (relation.c rejects it).
 * sc_rel_replica_sum_exprs names the sums of a class whose arguments
 * repeat a class with distinct tensors of that class instead, through the
 * binary regroupings the lemmas make of an n-term sum (sum(A, sum(A, A)):
 * the sum is flattened first). */
#include "infer/infer-private.h"

#include <string.h>

/* The largest n handled (a mesh dim). */
#define MAX_REPLICAS 64

/* The divisor of div.Scalar node NODE when it is an integer in
 * [2, MAX_REPLICAS], else 0. */
static uint32_t replica_divisor(sc_rel_ctx *c, const sc_op *div, int32_t ko, sc_id node) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  const sc_value *args = sc_lang_attr_args(c->lang, sc_egraph_node_attr(eg, node));
  (void)div;
  if (args == NULL || ko < 0)
    return 0;
  const sc_value *o = &args[ko];
  double v = -1.0;
  if (o->kind == SC_VAL_INT && sc_dim_is_const(o->u.i))
    v = (double)o->u.i.value;
  else if (o->kind == SC_VAL_FLOAT)
    v = o->u.f;
  if (v < 2.0 || v > MAX_REPLICAS || v != (double)(uint32_t)v)
    return 0;
  return (uint32_t)v;
}

/* How many distinct impl tensors class CLS holds. */
static uint32_t n_leaves(sc_egraph *eg, sc_id cls) {
  uint32_t n = 0;
  sc_egraph_class_nodes_with_op(eg, cls, SC_LANG_OP_TENSOR, &n);
  return n;
}

gboolean sc_rel_replica_sums(sc_rel_ctx *c) {
  const sc_op *div = sc_ops_lookup("aten.div.Scalar", NULL);
  if (!div)
    return FALSE;
  int32_t ko = sc_ops_arg_index(div, "other");
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  uint32_t n_cls = 0;
  const sc_id *cls = sc_egraph_classes_with_op(eg, div->id, &n_cls);
  /* (A, S, n) triples, collected first: adding nodes invalidates the lists */
  GArray *todo = g_array_new(FALSE, FALSE, sizeof(sc_id) * 3);
  for (uint32_t i = 0; i < n_cls; i++) {
    uint32_t nd = 0, nl = n_leaves(eg, cls[i]);
    if (nl < 2)
      continue;
    const sc_id *ds = sc_egraph_class_nodes_with_op(eg, cls[i], div->id, &nd);
    for (uint32_t j = 0; j < nd; j++) {
      uint32_t n = replica_divisor(c, div, ko, ds[j]);
      if (n == 0 || n > nl)
        continue;
      sc_id t[3] = {cls[i], sc_egraph_find(eg, sc_egraph_node_children(eg, ds[j])[0]), n};
      g_array_append_vals(todo, t, 1);
    }
  }
  gboolean merged = FALSE;
  for (guint i = 0; i < todo->len; i++) {
    const sc_id *t = &g_array_index(todo, sc_id, i * 3);
    sc_id *kids = g_new(sc_id, t[2]);
    for (uint32_t k = 0; k < t[2]; k++)
      kids[k] = t[0];
    GError *err = NULL;
    sc_id s = sc_rel_add_variadic(c, "sum", kids, t[2], NULL, &err);
    g_free(kids);
    if (s == SC_ID_NONE) {
      g_clear_error(&err);
      continue;
    }
    if (sc_egraph_find(eg, s) != sc_egraph_find(eg, t[1]))
      merged |= sc_egraph_union(eg, s, t[1], SC_JUST_ASSERTED);
  }
  g_array_free(todo, TRUE);
  return merged;
}

/* Saturation rounds after the pass: enough for the lemmas to move the
 * sum through a few operators (a bias added after it), few enough that
 * the division of the new sum term by term stays small. */
#define REPLICA_ROUNDS 2

gboolean sc_rel_replica_sums_prove(sc_rel_ctx *c, const char **limit_hit) {
  if (!sc_rel_replica_sums(c))
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  sc_runner_limits lim = c->opts->limits;
  lim.iter_limit = REPLICA_ROUNDS;
  sc_runner *r = sc_runner_new(eg, &lim);
  sc_stop_reason why = sc_runner_run(r, c->rewrites, c->n_rewrites);
  for (uint32_t i = 0; i < sc_runner_n_iterations(r); i++)
    c->res->stats.applied += sc_runner_iteration(r, i)->applied;
  sc_runner_free(r);
  if (why == SC_STOP_NODE_LIMIT || why == SC_STOP_TIME_LIMIT)
    *limit_hit = sc_stop_reason_name(why);
  return *limit_hit != NULL;
}

/* Appends to TEXT the name of the K-th rank's copy in class X: its impl
 * tensors by e-node order, the first of each rank (copies on one rank,
 * a tensor and its detached aliases, are one rank's value named twice:
 * their sum is a scaling, as bug_grad_accumulation's loss added four
 * times on rank 0 is); FALSE when X has copies on fewer ranks. */
static gboolean leaf_name(sc_rel_ctx *c, sc_id x, uint32_t k, GString *text) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  uint32_t n = 0;
  const sc_id *ls = sc_egraph_class_nodes_with_op(eg, x, SC_LANG_OP_TENSOR, &n);
  uint64_t seen = 0; /* ranks met, below 64 */
  for (uint32_t i = 0; i < n; i++) {
    const sc_tensor *t = sc_graph_tensor(c->impl, sc_egraph_node_attr(eg, ls[i]));
    if (t->rank < 0 || t->rank >= 64 || (seen & (UINT64_C(1) << t->rank)))
      continue;
    seen |= UINT64_C(1) << t->rank;
    if (k-- == 0) {
      g_string_append(text, t->name);
      return TRUE;
    }
  }
  return FALSE;
}

/* How deep flat_parts follows sums in sums. */
#define MAX_FLAT_DEPTH 8
/* Classes one flattening visits at most.  The search backtracks over
 * every sum e-node of every class (the lemmas regroup a sum every way),
 * so without a bound it is exponential in MAX_FLAT_DEPTH: a census
 * mutant (seed 31211) spent minutes in one call.  A flattening that
 * succeeds visits at most 2 * MAX_REPLICAS classes plus what it
 * backtracks over (docs/limits.md). */
#define MAX_FLAT_STEPS 4096

static gboolean flat_parts(sc_egraph *eg, uint32_t sum_op, sc_id x, uint32_t depth,
                           uint32_t *steps, GArray *parts);

/* Appends to PARTS the parts of sum e-node S, each flattened (flat_parts);
 * FALSE (PARTS as it was) when one does not flatten.  STEPS: the classes
 * the search may still visit (MAX_FLAT_STEPS for a new search). */
static gboolean flat_node_parts(sc_egraph *eg, uint32_t sum_op, sc_id s, uint32_t depth,
                                uint32_t *steps, GArray *parts) {
  guint len0 = parts->len;
  uint32_t ar = sc_egraph_node_arity(eg, s);
  const sc_id *kids = sc_egraph_node_children(eg, s);
  for (uint32_t j = 0; j < ar; j++)
    if (!flat_parts(eg, sum_op, sc_egraph_find(eg, kids[j]), depth + 1, steps, parts)) {
      g_array_set_size(parts, len0);
      return FALSE;
    }
  return TRUE;
}

/* Appends to PARTS the classes whose sum class X is: X itself when it
 * holds an impl tensor, else the flattened parts of its first sum e-node
 * that flattens (the lemmas regroup a sum of n terms as binary sums:
 * sum(A, sum(A, sum(A, A)))).  FALSE when none does within MAX_REPLICAS
 * parts, MAX_FLAT_DEPTH levels and *STEPS classes visited. */
static gboolean flat_parts(sc_egraph *eg, uint32_t sum_op, sc_id x, uint32_t depth,
                           uint32_t *steps, GArray *parts) {
  if (*steps == 0)
    return FALSE;
  (*steps)--;
  uint32_t nl = 0;
  sc_egraph_class_nodes_with_op(eg, x, SC_LANG_OP_TENSOR, &nl);
  if (nl > 0) {
    if (parts->len >= MAX_REPLICAS)
      return FALSE;
    g_array_append_val(parts, x);
    return TRUE;
  }
  if (depth >= MAX_FLAT_DEPTH)
    return FALSE;
  uint32_t ns = 0;
  const sc_id *ss = sc_egraph_class_nodes_with_op(eg, x, sum_op, &ns);
  for (uint32_t i = 0; i < ns; i++)
    if (flat_node_parts(eg, sum_op, ss[i], depth, steps, parts))
      return TRUE;
  return FALSE;
}

/* The text of the sum of PARTS (classes) with the k-th use of a class
 * named by its k-th impl tensor, into TEXT; FALSE when a class has fewer
 * tensors than uses or no class repeats (a sum of distinct classes is
 * found by the clean terms). */
static gboolean replica_sum_text(sc_rel_ctx *c, const GArray *parts, GString *text) {
  gboolean repeats = FALSE;
  g_string_assign(text, "sum(");
  for (guint j = 0; j < parts->len; j++) {
    sc_id x = g_array_index(parts, sc_id, j);
    uint32_t k = 0;
    for (guint q = 0; q < j; q++)
      k += g_array_index(parts, sc_id, q) == x ? 1 : 0;
    repeats |= k > 0;
    if (j)
      g_string_append(text, ", ");
    if (!leaf_name(c, x, k, text))
      return FALSE;
  }
  g_string_append(text, ")");
  return repeats;
}

void sc_rel_replica_sum_exprs(sc_rel_ctx *c, sc_id cls, GPtrArray *out) {
  const sc_op *sum = sc_ops_lookup("sc.sum.default", NULL);
  if (!sum)
    return;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  uint32_t ns = 0;
  const sc_id *ss = sc_egraph_class_nodes_with_op(eg, sc_egraph_find(eg, cls), sum->id, &ns);
  GArray *parts = g_array_new(FALSE, FALSE, sizeof(sc_id));
  GString *text = g_string_new(NULL);
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (uint32_t i = 0; i < ns && out->len < MAX_DEFER_TERMS; i++) {
    g_array_set_size(parts, 0);
    uint32_t steps = MAX_FLAT_STEPS;
    if (!flat_node_parts(eg, sum->id, ss[i], 0, &steps, parts) || parts->len < 2 ||
        !replica_sum_text(c, parts, text) || !g_hash_table_add(seen, g_strdup(text->str)))
      continue;
    sc_texpr *te = sc_texpr_parse(text->str, c->impl, TRUE, NULL);
    if (te) {
      g_ptr_array_add(c->owned, te);
      g_ptr_array_add(out, te);
    }
  }
  g_hash_table_unref(seen);
  g_string_free(text, TRUE);
  g_array_free(parts, TRUE);
}
