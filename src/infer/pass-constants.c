/* pass-constants.c — hook: the parts of a constant cat are constants. */
#include "infer/infer-private.h"

#include <string.h>

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
gboolean sc_rel_cat_constant_parts(sc_rel_ctx *c) {
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
    sc_rel_free_args(args, full->n_args);
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

