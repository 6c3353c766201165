/* range.c — value ranges of integer tensors as facts on e-classes
 * (lang.h, "value ranges"): a side table keyed by class, merged by
 * intersection when classes merge.
 *
 * A fact says that every element v of the class's tensor satisfies
 * lo <= v <= hi (each bound optional, inclusive, a size expression of the
 * symtab).  Each bound carries its source: SC_VRANGE_FACT (declared in the
 * bundle, or derived by the caller from the spec: an embedding's ids lie
 * in [0, V)) or an assumption id (the caller's number).  Facts are
 * monotone: a class only ever learns tighter bounds, so a bound read on a
 * dirty e-graph (before the merge listener moved a fact to its root) is
 * at worst weaker than the truth, never wrong.
 *
 * Invariants:
 *  - lang->ranges maps a class id + 1 to an owned sc_vrange; the entry of
 *    a class that stopped being canonical has been met into its root's by
 *    on_merge (the e-graph's merge listener, installed by sc_lang_new) and
 *    removed, so every live entry is keyed by a canonical class;
 *  - a stored range has at least one bound;
 *  - meeting never raises a conflict: an empty intersection (lo > hi)
 *    only says that the class holds no element. */
#include "lang/lang-private.h"

#include <string.h>

void sc_vrange_init(sc_vrange *r) {
  memset(r, 0, sizeof *r);
  r->lo = sc_dim_const(0);
  r->hi = sc_dim_const(0);
  r->lo_src = SC_VRANGE_NONE;
  r->hi_src = SC_VRANGE_NONE;
}

gboolean sc_vrange_is_unbounded(const sc_vrange *r) {
  return r->lo_src == SC_VRANGE_NONE && r->hi_src == SC_VRANGE_NONE;
}

/* Meet one bound.  TIGHTER is the comparison "R's bound is strictly
 * tighter than INTO's" (lo: into < r; hi: r < into); EQUAL whether they
 * are provably equal.  On a tie, or when the comparison is undecided, the
 * bound that needs no assumption wins (either is sound: both hold), then
 * the one already there. */
static gboolean meet_bound(sc_symtab *st, sc_dim *into, uint32_t *into_src, sc_dim b,
                           uint32_t b_src, gboolean is_lo) {
  if (b_src == SC_VRANGE_NONE)
    return FALSE;
  if (*into_src == SC_VRANGE_NONE) {
    *into = b;
    *into_src = b_src;
    return TRUE;
  }
  sc_truth tighter = is_lo ? sc_dim_lt(st, *into, b) : sc_dim_lt(st, b, *into);
  if (tighter == SC_YES) {
    *into = b;
    *into_src = b_src;
    return TRUE;
  }
  gboolean prefer = b_src == SC_VRANGE_FACT && *into_src != SC_VRANGE_FACT;
  if (!prefer)
    return FALSE;
  if (tighter == SC_UNKNOWN || sc_dim_eq(st, *into, b) == SC_YES) {
    *into = b;
    *into_src = b_src;
    return TRUE;
  }
  return FALSE;
}

gboolean sc_vrange_meet(sc_symtab *st, sc_vrange *into, const sc_vrange *r) {
  g_return_val_if_fail(st != NULL && into != NULL && r != NULL, FALSE);
  gboolean a = meet_bound(st, &into->lo, &into->lo_src, r->lo, r->lo_src, TRUE);
  gboolean b = meet_bound(st, &into->hi, &into->hi_src, r->hi, r->hi_src, FALSE);
  return a || b;
}

void sc_lang_ranges_init(sc_lang *lang) {
  lang->ranges = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
}

void sc_lang_ranges_free(sc_lang *lang) {
  if (lang->ranges)
    g_hash_table_destroy(lang->ranges);
  lang->ranges = NULL;
}

void sc_lang_ranges_on_merge(const sc_egraph *eg, sc_id root, sc_id absorbed, uint32_t just,
                             void *user) {
  sc_lang *lang = user;
  (void)eg;
  (void)just;
  gpointer key = GUINT_TO_POINTER(absorbed + 1);
  sc_vrange *gone = g_hash_table_lookup(lang->ranges, key);
  if (gone == NULL)
    return;
  g_hash_table_steal(lang->ranges, key);
  sc_vrange *keep = g_hash_table_lookup(lang->ranges, GUINT_TO_POINTER(root + 1));
  if (keep == NULL) {
    g_hash_table_insert(lang->ranges, GUINT_TO_POINTER(root + 1), gone);
    return;
  }
  sc_vrange_meet(lang->st, keep, gone);
  g_free(gone);
}

void sc_lang_add_range(sc_lang *lang, sc_id cls, const sc_vrange *r) {
  g_return_if_fail(lang != NULL && r != NULL);
  g_return_if_fail(cls < sc_egraph_n_ids(lang->eg));
  if (sc_vrange_is_unbounded(r))
    return;
  sc_id root = sc_egraph_find(lang->eg, cls);
  gpointer key = GUINT_TO_POINTER(root + 1);
  sc_vrange *have = g_hash_table_lookup(lang->ranges, key);
  if (have == NULL) {
    have = g_new(sc_vrange, 1);
    sc_vrange_init(have);
    g_hash_table_insert(lang->ranges, key, have);
  }
  sc_vrange_meet(lang->st, have, r);
}

const sc_vrange *sc_lang_class_range(const sc_lang *lang, sc_id cls) {
  g_return_val_if_fail(lang != NULL, NULL);
  g_return_val_if_fail(cls < sc_egraph_n_ids(lang->eg), NULL);
  sc_id root = sc_egraph_find_const(lang->eg, cls);
  return g_hash_table_lookup(lang->ranges, GUINT_TO_POINTER(root + 1));
}

void sc_lang_seed_leaf_range(sc_lang *lang, sc_id cls, sc_id tensor) {
  if (lang->leaf == NULL || tensor >= sc_graph_n_tensors(lang->leaf))
    return;
  const sc_tensor *t = sc_graph_tensor(lang->leaf, tensor);
  if (!t->has_values)
    return;
  sc_vrange r;
  sc_vrange_init(&r);
  r.lo = t->values_min;
  r.hi = t->values_max;
  r.lo_src = r.hi_src = SC_VRANGE_FACT;
  sc_lang_add_range(lang, cls, &r);
}

void sc_lang_range_forward(sc_lang *lang, const sc_op *op, const sc_id *kids, uint32_t n_kids,
                           sc_id cls) {
  if (n_kids == 0 || cls == SC_ID_NONE || g_hash_table_size(lang->ranges) == 0)
    return;
  sc_values_relation rel = sc_ops_values_relation(op);
  if (rel != SC_VALUES_SAME && rel != SC_VALUES_SUBSET)
    return;
  const sc_vrange *in = sc_lang_class_range(lang, kids[0]);
  if (in == NULL)
    return;
  const sc_ttype *ti = sc_lang_class_type(lang, kids[0]);
  const sc_ttype *to = sc_lang_class_type(lang, cls);
  if (ti == NULL || to == NULL || ti->dtype != to->dtype)
    return;
  sc_vrange r = *in; /* a copy: adding may move the table's entries */
  sc_lang_add_range(lang, cls, &r);
}
