/* cat-parts.c — equal cats have equal parts.  A class holding
 * cat(a_1, ..., a_k, dim=d) and cat(b_1, ..., b_k, dim=d) with shape(a_i)
 * = shape(b_i) for every i has a_i = b_i: both cats place their i-th part
 * at the same offsets.  Lemmas rewrite one term at a time and cannot state
 * this (it reads two e-nodes of one class).  It is what the input relation
 * of tensor x data parallelism needs: w = cat(w_0, w_1, dim=1) =
 * cat(w_2, w_3, dim=1) (replicas.c puts both in one class) makes w_0 = w_2,
 * and x = cat(x_0, x_2, dim=0) = cat(x_1, x_3, dim=0) makes x_0 = x_1, so
 * that rank 1's product reads the row split of x and the column split of
 * w1 at once.  Each cat node is compared with the first of its class with
 * the same attributes and arity (equality is transitive): linear in the
 * cat nodes.  It runs on the classes of the input relation's groups
 * (sc_rel_replicas_add) and on the class a visit starts from for each
 * spec tensor it reads (sc_rel_spec_input_class: the relation's forms
 * unioned, before any lemma runs; on a 2-D mesh a block replicated over
 * one mesh dim is named by cats that pick its copy on different ranks,
 * cat(r0:a, r1:b) = cat(r2:c, r3:d), so that a = c: seeds 20017, 21009),
 * and on the parts it merged (nested cats), not on every class after each
 * saturation: merging every pair of equal-shaped cats in an e-graph (a
 * batch split into ranks and again into micro-batches) makes the cat
 * lemmas combine them, past the node limit.
 *
 * The same holds for the other injective layouts: equal views, transposes
 * or permutes (same attributes) of inputs of one shape have equal inputs,
 * so a relation whose forms are views of sums (shardsmith 27005:
 * view(sum(r0:a, r4:b)) = view(sum(r1:a', r6:b'))) reaches the sums, where
 * each round also applies cancellation (sum-cancel.c); a class whose parts
 * merged is examined again, since its sums may now be one part apart. */
#include "infer/infer-private.h"

/* Do cats X and Y (same attributes and arity) have parts of equal shapes? */
static gboolean same_part_shapes(sc_rel_ctx *c, sc_egraph *eg, sc_id x, sc_id y) {
  uint32_t ar = sc_egraph_node_arity(eg, x);
  const sc_id *kx = sc_egraph_node_children(eg, x), *ky = sc_egraph_node_children(eg, y);
  for (uint32_t q = 0; q < ar; q++) {
    const sc_ttype *tx = sc_lang_class_type(c->lang, kx[q]);
    const sc_ttype *ty = sc_lang_class_type(c->lang, ky[q]);
    if (!tx || !ty || tx->dtype != ty->dtype || tx->shape.rank != ty->shape.rank)
      return FALSE;
    for (uint32_t d = 0; d < tx->shape.rank; d++)
      if (sc_dim_eq(c->st, tx->shape.dims[d], ty->shape.dims[d]) != SC_YES)
        return FALSE;
  }
  return TRUE;
}

/* The operators of the e-graph that are injective once their attributes
 * and their inputs' shapes are fixed: cat (its parts at fixed offsets) and
 * the canonical rearranging views sc.view, sc.transpose and sc.permute
 * (src/lang/canon.c: every reshape, transpose and permute is one of them;
 * each input element moved to one output element). */
typedef struct {
  uint32_t ids[4];
  uint32_t n;
} injective_ops;

static void injective_ops_init(injective_ops *io) {
  static const char *const names[] = {"sc.cat.default", "sc.view.default",
                                      "sc.transpose.default", "sc.permute.default"};
  io->n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    const sc_op *o = sc_ops_lookup(names[i], NULL);
    if (o != NULL)
      io->ids[io->n++] = o->id;
  }
}

static gboolean injective_op(const injective_ops *io, uint32_t op) {
  for (uint32_t i = 0; i < io->n; i++)
    if (io->ids[i] == op)
      return TRUE;
  return FALSE;
}

/* (x part, y part) pairs of the injective nodes of class CLS, into PAIRS:
 * each node is compared with the first of its class with the same
 * operator, attributes and arity. */
static void injective_pairs(sc_rel_ctx *c, sc_egraph *eg, const injective_ops *io, sc_id cls,
                            GArray *pairs) {
  uint32_t n = 0;
  const sc_id *cs = sc_egraph_class_nodes(eg, cls, &n);
  for (uint32_t j = 1; j < n; j++) {
    uint32_t op = sc_egraph_node_op(eg, cs[j]);
    if (!injective_op(io, op))
      continue;
    for (uint32_t i = 0; i < j; i++) {
      if (sc_egraph_node_op(eg, cs[i]) != op ||
          sc_egraph_node_attr(eg, cs[i]) != sc_egraph_node_attr(eg, cs[j]) ||
          sc_egraph_node_arity(eg, cs[i]) != sc_egraph_node_arity(eg, cs[j]))
        continue;
      /* the first node of the same kind: compare with it only */
      if (same_part_shapes(c, eg, cs[i], cs[j])) {
        uint32_t ar = sc_egraph_node_arity(eg, cs[i]);
        const sc_id *ki = sc_egraph_node_children(eg, cs[i]);
        const sc_id *kj = sc_egraph_node_children(eg, cs[j]);
        for (uint32_t q = 0; q < ar; q++)
          if (sc_egraph_find(eg, ki[q]) != sc_egraph_find(eg, kj[q])) {
            g_array_append_val(pairs, ki[q]);
            g_array_append_val(pairs, kj[q]);
          }
      }
      break;
    }
  }
}

gboolean sc_rel_cat_equal_parts(sc_rel_ctx *c, sc_id cls) {
  injective_ops io;
  injective_ops_init(&io);
  sc_egraph *eg = sc_lang_egraph(c->lang);
  sc_egraph_rebuild(eg);
  GArray *work = g_array_new(FALSE, FALSE, sizeof(sc_id));
  GArray *pairs[2] = {g_array_new(FALSE, FALSE, sizeof(sc_id)),
                      g_array_new(FALSE, FALSE, sizeof(sc_id))};
  const sc_fact_kind facts[2] = {SC_FACT_CAT_PARTS, SC_FACT_SUM_CANCEL};
  g_array_append_val(work, cls);
  gboolean merged = FALSE;
  /* each round merges parts, whose own cats are compared next */
  for (guint round = 0; work->len > 0 && round < 64; round++) {
    g_array_set_size(pairs[0], 0);
    g_array_set_size(pairs[1], 0);
    for (guint i = 0; i < work->len; i++) {
      sc_id w = sc_egraph_find(eg, g_array_index(work, sc_id, i));
      injective_pairs(c, eg, &io, w, pairs[0]);
      sc_rel_sum_cancel_pairs(c, w, pairs[1]); /* sum-cancel.c */
    }
    g_array_set_size(work, 0);
    for (guint k = 0; k < 2; k++)
      for (guint i = 0; i + 1 < pairs[k]->len; i += 2) {
        sc_id x = g_array_index(pairs[k], sc_id, i), y = g_array_index(pairs[k], sc_id, i + 1);
        if (sc_egraph_find(eg, x) != sc_egraph_find(eg, y) &&
            sc_egraph_union(eg, x, y, SC_EXPLAIN_JUST(c->ex, facts[k], 0))) {
          merged = TRUE;
          g_array_append_val(work, x);
        }
      }
    /* sums of CLS whose parts merged may now differ in one part */
    if (work->len > 0)
      g_array_append_val(work, cls);
    sc_egraph_rebuild(eg);
  }
  g_array_free(pairs[0], TRUE);
  g_array_free(pairs[1], TRUE);
  g_array_free(work, TRUE);
  return merged;
}
