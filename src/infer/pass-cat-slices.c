/* pass-cat-slices.c — the copies in a named cat are its slices.
 *
 * A class holding an impl tensor T and cat(a_1, ..., a_k, dim=d) has
 * a_i = slice(T, d, o_i, o_i + |a_i|) with o_i the sizes of the parts
 * before a_i along d: a cat places its parts at fixed offsets.  Lemmas
 * rewrite one term at a time and cannot state this for the part (it reads
 * the tensor leaf of the whole's class, and a lemma `?a => slice(cat(?a,
 * ?b))` firing on every cat made every slice lemma fire on every part).
 * It is what names the value of a part that no rank holds on its own: a
 * rank that copies its block where a gather belonged computes
 * T = f(cat(x, x, ..., x)) = cat(f(x), ..., f(x)) and f(x), the spec's
 * block on that rank, is a slice of T (a dropped all_gather, shardsmith's
 * "drop" mutants: without it the check stopped before the node whose
 * values differ).
 *
 * Only the copies are named this way: a part that stands at two places
 * or more of the cat (its binary chain along d taken apart, as canon.c
 * folds an n-ary cat), with no tensor leaf of its own, at its first
 * place.  Naming every unnamed part gave a flat gradient's first block of
 * a ZeRO-1 partition a clean form while the rest of it stayed deferred,
 * and the reunion of the two failed downstream (models/zero1-adam).
 *
 * Not a post-saturation hook: run by a visit whose output is still
 * unmapped after widening (visit.c, prove), which then saturates again.
 * As a hook it also named the halves of a spec output that is itself a
 * cat of copies (out0 = cat(x, x), held whole by every rank), their
 * slices crowded the output's forms, and the ranks that hold it whole
 * were never explored (shardsmith 40009).  At most MAX_PART_SLICES per
 * call, with concrete sizes along d.  Returns TRUE when classes were
 * merged. */
#include "infer/infer-private.h"

/* Slices added per call at most; parts of one chain and its depth. */
#define MAX_PART_SLICES 256
#define MAX_CHAIN_PARTS 64
#define MAX_CHAIN_DEPTH 16

/* Does class CLS hold a node with operator OP? */
static gboolean class_has_op(sc_egraph *eg, sc_id cls, uint32_t op) {
  uint32_t n = 0;
  sc_egraph_class_nodes_with_op(eg, cls, op, &n);
  return n > 0;
}

/* The dim of cat node NODE (non-negative, below RANK), or -1. */
static int64_t cat_dim(sc_rel_ctx *c, sc_egraph *eg, int32_t kdim, sc_id node, uint32_t rank) {
  const sc_value *args = sc_lang_attr_args(c->lang, sc_egraph_node_attr(eg, node));
  if (!args || args[kdim].kind != SC_VAL_INT || !sc_dim_is_const(args[kdim].u.i))
    return -1;
  int64_t d = args[kdim].u.i.value;
  if (d < 0)
    d += rank;
  return d >= 0 && d < (int64_t)rank ? d : -1;
}

/* The first cat node along D of class CLS when CLS has no tensor leaf
 * (a named part is a part), else SC_ID_NONE. */
static sc_id inner_cat(sc_rel_ctx *c, sc_egraph *eg, const sc_op *cat, int32_t kdim, sc_id cls,
                       int64_t d, uint32_t rank) {
  if (class_has_op(eg, cls, SC_LANG_OP_TENSOR))
    return SC_ID_NONE;
  uint32_t n = 0;
  const sc_id *cs = sc_egraph_class_nodes_with_op(eg, cls, cat->id, &n);
  for (uint32_t j = 0; j < n; j++)
    if (cat_dim(c, eg, kdim, cs[j], rank) == d)
      return cs[j];
  return SC_ID_NONE;
}

/* Appends the parts of cat node NODE along D to PARTS (class ids), the
 * parts that are cats along D again (binary chains, as canon.c folds an
 * n-ary cat) taken apart; FALSE past the bounds. */
static gboolean flatten_chain(sc_rel_ctx *c, sc_egraph *eg, const sc_op *cat, int32_t kdim,
                              sc_id node, int64_t d, uint32_t rank, int depth, GArray *parts) {
  if (depth > MAX_CHAIN_DEPTH)
    return FALSE;
  uint32_t ar = sc_egraph_node_arity(eg, node);
  for (uint32_t q = 0; q < ar; q++) {
    sc_id kid = sc_egraph_find(eg, sc_egraph_node_children(eg, node)[q]);
    sc_id inner = inner_cat(c, eg, cat, kdim, kid, d, rank);
    if (inner != SC_ID_NONE) {
      if (!flatten_chain(c, eg, cat, kdim, inner, d, rank, depth + 1, parts))
        return FALSE;
    } else {
      if (parts->len >= MAX_CHAIN_PARTS)
        return FALSE;
      g_array_append_val(parts, kid);
    }
  }
  return TRUE;
}

/* The parts of cat node NODE (in class WHOLE) to name: appends (whole,
 * part, dim, start, end) as five sc_id-sized words per part to TODO.  A
 * part is named when it stands at two places or more of the chain (the
 * copies of a block) and has no tensor leaf. */
static void collect_parts(sc_rel_ctx *c, sc_egraph *eg, const sc_op *cat, int32_t kdim,
                          sc_id whole, sc_id node, GArray *todo) {
  const sc_ttype *wt = sc_lang_class_type(c->lang, whole);
  if (!wt || wt->shape.rank == 0)
    return;
  int64_t d = cat_dim(c, eg, kdim, node, wt->shape.rank);
  if (d < 0)
    return;
  sc_dtype dtype = wt->dtype;
  GArray *parts = g_array_new(FALSE, FALSE, sizeof(sc_id));
  if (!flatten_chain(c, eg, cat, kdim, node, d, wt->shape.rank, 0, parts)) {
    g_array_free(parts, TRUE);
    return;
  }
  int64_t off = 0;
  for (guint q = 0; q < parts->len; q++) {
    sc_id kid = g_array_index(parts, sc_id, q);
    const sc_ttype *pt = sc_lang_class_type(c->lang, kid);
    if (!pt || pt->shape.rank != wt->shape.rank || !sc_dim_is_const(pt->shape.dims[d]))
      break;
    int64_t len = pt->shape.dims[d].value;
    gboolean again = FALSE, before = FALSE;
    for (guint k = 0; k < parts->len; k++)
      if (k != q && g_array_index(parts, sc_id, k) == kid) {
        again = TRUE;
        before |= k < q;
      }
    if (again && !before && pt->dtype == dtype && kid != whole &&
        !class_has_op(eg, kid, SC_LANG_OP_TENSOR)) {
      sc_id w[5] = {whole, kid, (sc_id)d, (sc_id)off, (sc_id)(off + len)};
      g_array_append_vals(todo, w, 5);
    }
    off += len;
  }
  g_array_free(parts, TRUE);
}

gboolean sc_rel_cat_part_slices(sc_rel_ctx *c) {
  const sc_op *cat = sc_ops_lookup("sc.cat.default", NULL);
  if (!cat)
    return FALSE;
  int32_t kdim = sc_ops_arg_index(cat, "dim");
  if (kdim < 0)
    return FALSE;
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  uint32_t n_cls = 0;
  const sc_id *cls = sc_egraph_classes_with_op(eg, cat->id, &n_cls);
  /* collected first: adding nodes invalidates the class lists */
  GArray *todo = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (uint32_t i = 0; i < n_cls && todo->len < 5 * MAX_PART_SLICES; i++) {
    if (!class_has_op(eg, cls[i], SC_LANG_OP_TENSOR))
      continue;
    uint32_t n_cat = 0;
    const sc_id *cs = sc_egraph_class_nodes_with_op(eg, cls[i], cat->id, &n_cat);
    for (uint32_t j = 0; j < n_cat; j++)
      collect_parts(c, eg, cat, kdim, cls[i], cs[j], todo);
  }
  gboolean merged = FALSE;
  guint n = MIN(todo->len / 5, MAX_PART_SLICES);
  for (guint i = 0; i < n; i++) {
    const sc_id *w = &g_array_index(todo, sc_id, 5 * i);
    GError *err = NULL;
    sc_id s = sc_rel_add_slice(c, w[0], sc_dim_const((int64_t)w[2]), sc_dim_const((int64_t)w[3]),
                               sc_dim_const((int64_t)w[4]), &err);
    if (s == SC_ID_NONE) {
      g_clear_error(&err);
      continue;
    }
    if (sc_egraph_find(eg, s) != sc_egraph_find(eg, w[1]))
      merged |= sc_egraph_union(eg, s, w[1], SC_JUST_ASSERTED);
  }
  g_array_free(todo, TRUE);
  return merged;
}
