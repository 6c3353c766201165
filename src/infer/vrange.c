/* vrange.c — value ranges of spec tensors (lang.h, "value ranges"). */
#include "infer/infer-private.h"

#include <string.h>

/* --- value ranges of spec tensors (lang.h, "value ranges") ---
 *
 * Lemmas may read the range of an integer tensor's values (vmin/vmax): an
 * embedding lookup is a masked lookup at offset 0 only when its ids lie in
 * [0, V).  The facts are computed once over the spec graph before the walk
 * (sc_rel_vr_analyze) and seeded on the class of each input of a visited node
 * (sc_rel_spec_input_class).  Their sources:
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
 * of values (the operator table's sc_ops_values_relation SAME: identities,
 * views, transposes, permutes, squeezes; integer casts that do not narrow;
 * copy's value is its src), and forward from an input to the results of
 * operators that select some of its elements (SUBSET: slice, select,
 * expand, narrow, split, index, index_select, gather).  Nothing else: no
 * arithmetic. */

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
static void vr_fact(sc_rel_ctx *c, sc_vrange *grp, sc_id *uf, sc_id t, sc_dim lo, uint32_t lo_src,
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
static void vr_lookup_fact(sc_rel_ctx *c, sc_vrange *grp, sc_id *uf, sc_id ids, sc_id self, int64_t d,
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
static void vr_data_dependent_facts(sc_rel_ctx *c, sc_vrange *grp, sc_id *uf) {
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

/* Derived from lookups (and the assumption on aten.index). */
static void vr_lookup_facts(sc_rel_ctx *c, sc_vrange *grp, sc_id *uf) {
  uint32_t nn = sc_graph_n_nodes(c->spec);
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
}

/* The assumptions' texts, naming the group by a graph input if it has one. */
static void vr_name_assumptions(sc_rel_ctx *c, sc_id *uf) {
  uint32_t nt = sc_graph_n_tensors(c->spec);
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
}

/* Facts of every spec tensor into c->vrange; assumptions into
 * c->vr_assumptions (their texts name each group by a graph input when it
 * has one). */
void sc_rel_vr_analyze(sc_rel_ctx *c) {
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
    } else if (sc_ops_values_relation(n->op) == SC_VALUES_SAME) {
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
  vr_lookup_facts(c, grp, uf);
  /* selections: an input's facts hold for its results (two passes in
   * topological order, as a group may learn from a later use) */
  uint32_t n_order = 0;
  const sc_id *order = sc_graph_topo_order(c->spec, &n_order);
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < n_order; i++) {
      const sc_node *n = sc_graph_node(c->spec, order[i]);
      if (sc_ops_values_relation(n->op) != SC_VALUES_SUBSET)
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
  vr_name_assumptions(c, uf);
  g_free(grp);
  g_free(uf);
}

void sc_rel_vr_free(sc_rel_ctx *c) {
  g_free(c->vrange);
  c->vrange = NULL;
  if (c->vr_assumptions)
    g_ptr_array_unref(c->vr_assumptions);
  c->vr_assumptions = NULL;
}

/* The facts of spec tensor U on its class CLS in this visit's e-graph. */
void sc_rel_vr_seed(sc_rel_ctx *c, sc_id u, sc_id cls) {
  if (c->vrange != NULL && !sc_vrange_is_unbounded(&c->vrange[u]))
    sc_lang_add_range(c->lang, cls, &c->vrange[u]);
}

/* The assumptions read by lemmas that fired at spec node N, into the
 * result (each assumption once; each use "LEMMA at NODE" once). */
void sc_rel_vr_collect_used(sc_rel_ctx *c, const sc_node *n) {
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

