/* pass-cat-slices.c — hook: an unnamed part of a named cat is a slice of
 * it.
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
 * Only parts whose class has neither a tensor leaf nor a cat of its own
 * are named this way (a part that is an impl tensor has its name; a part
 * that is a cat is the left part of a nested chain, whose own parts are
 * reached through the chain's other cats), at most MAX_PART_SLICES per
 * call, with concrete sizes along d.  Returns TRUE when classes were
 * merged. */
#include "infer/infer-private.h"

/* Slices added per call at most. */
#define MAX_PART_SLICES 256

/* Does class CLS hold a node with operator OP? */
static gboolean class_has_op(sc_egraph *eg, sc_id cls, uint32_t op) {
  uint32_t n = 0;
  sc_egraph_class_nodes_with_op(eg, cls, op, &n);
  return n > 0;
}

/* The parts of cat node CAT (in class WHOLE) to name: appends (whole,
 * part, dim, start, end) as five sc_id-sized words per part to TODO. */
static void collect_parts(sc_rel_ctx *c, sc_egraph *eg, const sc_op *cat, int32_t kdim,
                          sc_id whole, sc_id node, GArray *todo) {
  const sc_ttype *wt = sc_lang_class_type(c->lang, whole);
  if (!wt || wt->shape.rank == 0)
    return;
  const sc_value *args = sc_lang_attr_args(c->lang, sc_egraph_node_attr(eg, node));
  if (!args || args[kdim].kind != SC_VAL_INT || !sc_dim_is_const(args[kdim].u.i))
    return;
  int64_t d = args[kdim].u.i.value;
  if (d < 0)
    d += wt->shape.rank;
  if (d < 0 || d >= (int64_t)wt->shape.rank)
    return;
  sc_dtype dtype = wt->dtype;
  uint32_t ar = sc_egraph_node_arity(eg, node);
  const sc_id *children = sc_egraph_node_children(eg, node);
  int64_t off = 0;
  for (uint32_t q = 0; q < ar; q++) {
    sc_id kid = sc_egraph_find(eg, children[q]);
    const sc_ttype *pt = sc_lang_class_type(c->lang, kid);
    if (!pt || pt->shape.rank != (uint32_t)wt->shape.rank || !sc_dim_is_const(pt->shape.dims[d]))
      return;
    int64_t len = pt->shape.dims[d].value;
    if (pt->dtype == dtype && kid != whole && !class_has_op(eg, kid, SC_LANG_OP_TENSOR) &&
        !class_has_op(eg, kid, cat->id)) {
      sc_id w[5] = {whole, kid, (sc_id)d, (sc_id)off, (sc_id)(off + len)};
      g_array_append_vals(todo, w, 5);
    }
    off += len;
  }
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
