/* pass-sums.c — hook: sums as multisets (AC of sc.sum). */
#include "infer/infer-private.h"

#include "shardcheck/budget.h"

#include <string.h>

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

/* Atoms in one expansion at most.  Sums share classes (x + x, a partial
 * summed on every rank), so a multiset can double at every level: a
 * census program (seed 31020, a mutant) reached 57 million atoms and
 * spent a minute in one call.  The models' largest is 16 (docs/limits.md). */
#define AC_MAX_ATOMS 256

/* The atoms of class CLS: the classes its first sc.sum node adds up,
 * each expanded the same way (a class with no sum node, one met again
 * inside its own expansion, or one whose expansion would have more than
 * AC_MAX_ATOMS atoms, is an atom).  Every expansion is an equation
 * CLS = sum of its atoms, since a sum node of a class equals the class
 * (and CLS = CLS for an atom). */
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
    for (uint32_t j = 0; j < arity && m->len <= AC_MAX_ATOMS; j++) {
      const GArray *sub = ac_atoms(a, sc_egraph_find(a->eg, kids[j]));
      g_array_append_vals(m, sub->data, sub->len); /* each at most AC_MAX_ATOMS */
    }
    g_hash_table_remove(a->visiting, GUINT_TO_POINTER(cls + 1));
    if (m->len > AC_MAX_ATOMS) { /* too large: an atom */
      g_array_set_size(m, 0);
      g_array_append_val(m, cls);
    }
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

/* Pairs of sum classes among ROOTS with equal multisets of (three or
 * more) atoms, into PAIRS (the sum nodes to union). */
static void equal_multisets(sc_rel_ctx *c, ac_ctx *a, const GArray *roots, GArray *pairs) {
  GHashTable *by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < roots->len; i++) {
    sc_id k = g_array_index(roots, sc_id, i);
    const GArray *atoms = ac_atoms(a, k);
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
  g_hash_table_unref(by_key);
}

/* K and the classes of its own sub-sums (through first sum nodes). */
static GHashTable *own_sums(const ac_ctx *a, sc_id k) {
  GHashTable *own = g_hash_table_new(g_direct_hash, g_direct_equal);
  GArray *walk = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g_array_append_val(walk, k);
  while (walk->len) {
    sc_id x = g_array_index(walk, sc_id, walk->len - 1);
    g_array_set_size(walk, walk->len - 1);
    if (!g_hash_table_add(own, GUINT_TO_POINTER(x + 1)))
      continue;
    uint32_t ns = 0;
    const sc_id *sn = sc_egraph_class_nodes_with_op(a->eg, x, a->sum_op, &ns);
    if (ns == 0)
      continue;
    uint32_t ar = sc_egraph_node_arity(a->eg, sn[0]);
    const sc_id *kids = sc_egraph_node_children(a->eg, sn[0]);
    for (uint32_t j = 0; j < ar; j++) {
      sc_id r = sc_egraph_find(a->eg, kids[j]);
      g_array_append_val(walk, r);
    }
  }
  g_array_free(walk, TRUE);
  return own;
}

static guint count_of(GHashTable *rem, sc_id atom) {
  return GPOINTER_TO_UINT(g_hash_table_lookup(rem, GUINT_TO_POINTER(atom + 1)));
}

static void count_add(GHashTable *rem, sc_id atom, int d) {
  g_hash_table_insert(rem, GUINT_TO_POINTER(atom + 1),
                      GUINT_TO_POINTER((guint)((int)count_of(rem, atom) + d)));
}

/* Does the multiset MR (sorted) fit in the remaining counts REM? */
static gboolean fits_in(const GArray *mr, GHashTable *rem) {
  gboolean fits = TRUE;
  for (guint j = 0; j < mr->len && fits; j++) {
    guint need = 1;
    for (guint j2 = j + 1;
         j2 < mr->len && g_array_index(mr, sc_id, j2) == g_array_index(mr, sc_id, j); j2++)
      need++;
    fits = count_of(rem, g_array_index(mr, sc_id, j)) >= need;
  }
  return fits;
}

/* Regrouping by the impl's sums: a sum K whose atoms are the disjoint
 * union of the atoms of sums that hold an impl tensor (not K's own
 * sub-sums) and of some atoms equals the sum of those: the spec's chain
 * of a dozen partial products against each rank's partial.  Greedy,
 * largest parts first.  Appends "K, n, parts..." to GROUPS. */
static void regroup(sc_rel_ctx *c, ac_ctx *a, const GArray *roots, sc_id k, GArray *groups) {
  const GArray *mk = ac_atoms(a, k);
  if (mk->len < 4)
    return;
  GHashTable *own = own_sums(a, k);
  GHashTable *rem = g_hash_table_new(g_direct_hash, g_direct_equal); /* atom -> count */
  for (guint j = 0; j < mk->len; j++)
    count_add(rem, g_array_index(mk, sc_id, j), 1);
  guint left = mk->len;
  GArray *parts = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint size = mk->len - 1; size >= 2 && left > 0; size--) {
    for (guint q = 0; q < roots->len && left > 0; q++) {
      sc_id r = g_array_index(roots, sc_id, q);
      const GArray *mr = ac_atoms(a, r);
      if (mr->len != size || size > left || g_hash_table_contains(own, GUINT_TO_POINTER(r + 1)) ||
          !has_leaf(a->eg, r) || !fits_in(mr, rem))
        continue;
      for (guint j = 0; j < mr->len; j++)
        count_add(rem, g_array_index(mr, sc_id, j), -1);
      left -= mr->len;
      g_array_append_val(parts, r);
    }
  }
  if (parts->len > 0 && parts->len + left >= 2) {
    for (guint j = 0; j < mk->len; j++) {
      sc_id at = g_array_index(mk, sc_id, j);
      if (count_of(rem, at) > 0) {
        g_array_append_val(parts, at);
        count_add(rem, at, -1);
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

/* Each group's K gains the sum of its parts; TRUE when one merged. */
static gboolean apply_groups(sc_rel_ctx *c, const GArray *groups) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  gboolean merged = FALSE;
  for (guint i = 0; i < groups->len;) {
    sc_id k = g_array_index(groups, sc_id, i);
    sc_id np = g_array_index(groups, sc_id, i + 1);
    sc_id *parts = g_new(sc_id, np);
    for (sc_id j = 0; j < np; j++)
      parts[j] = sc_egraph_find(eg, g_array_index(groups, sc_id, i + 2 + j));
    i += 2 + np;
    GError *local = NULL;
    sc_id t = sc_rel_add_variadic(c, "sum", parts, np, NULL, &local);
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
  return merged;
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
gboolean sc_rel_ac_merge_sums(sc_rel_ctx *c) {
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
  GArray *pairs = g_array_new(FALSE, FALSE, sizeof(sc_id));
  equal_multisets(c, &a, roots, pairs);
  GArray *groups = g_array_new(FALSE, FALSE, sizeof(sc_id)); /* K, n, parts.. */
  /* regrouping is quadratic in the sum classes (seed 31616's correct
   * program: a minute in one call): the overall budget after each */
  sc_budget *budget = c->opts ? c->opts->limits.budget : NULL;
  for (guint i = 0; i < roots->len && sc_budget_check(budget, 0) == NULL; i++)
    regroup(c, &a, roots, g_array_index(roots, sc_id, i), groups);
  gboolean merged = apply_groups(c, groups);
  for (guint i = 0; i + 1 < pairs->len; i += 2) {
    sc_id x = g_array_index(pairs, sc_id, i), y = g_array_index(pairs, sc_id, i + 1);
    if (sc_egraph_find(eg, x) != sc_egraph_find(eg, y)) {
      sc_egraph_union(eg, x, y, SC_EXPLAIN_JUST(c->ex, SC_FACT_AC_SUM, 0));
      merged = TRUE;
    }
  }
  g_array_free(groups, TRUE);
  g_array_free(pairs, TRUE);
  g_hash_table_unref(a.memo);
  g_hash_table_unref(a.visiting);
  g_array_free(roots, TRUE);
  return merged;
}
