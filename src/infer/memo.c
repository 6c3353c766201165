/* memo.c — layer memoization: a spec node's relations carried from an
 * earlier, proved node (a template) by an exact isomorphism, instead of
 * being proved again (a transformer's 126 layers are one layer 126 times).
 *
 * A visit proves its results' relations from a finite set of facts: the
 * spec node applied to its inputs' classes, each input's relation, the
 * equation of every impl node explored, the equalities of every replica
 * group queued (replicas.c), the lemmas and the symtab.  Equational
 * reasoning is closed under renaming: if a renaming sigma of impl tensors
 * maps every one of those facts onto a fact that holds here too, sigma of
 * each relation proved holds here.  So a node V is carried from template
 * U when (carry below):
 *  - U and V apply the same operator to the same arguments, inputs and
 *    results of the same types (symbolic sizes compared as written), the
 *    same input in the same positions;
 *  - every input relation of U, renamed by sigma, is V's input relation,
 *    expression by expression (this builds sigma: leaves bound to leaves of
 *    the same type and rank, one to one);
 *  - every impl node U's visit explored maps to an impl node of the same
 *    operator, arguments, result types and ranks over the renamed inputs
 *    with the renamed results (one to one); every replica group it queued
 *    to a group whose expressions are the renamed ones;
 *  - nothing more would be explored: every consumer of a renamed T_rel
 *    tensor is the image of an explored node or would not be ready (some
 *    read input outside the renamed T_rel, not a constant), and no
 *    data-dependent producer of one is left out.  This is not needed for
 *    soundness (more facts only prove more); it makes a carried relation
 *    the one a proof would find, so results do not depend on memoization;
 *  - no deferral (U's results all mapped cleanly, no input deferred), no
 *    widening, no value range on an input, no size learned since U, no
 *    checked output or expectation among V's results.
 * A candidate that fails any check is no error: V is then proved as usual,
 * and becomes a template itself.  A bug planted in one layer thus changes
 * an impl node of that layer, the carry fails there, and the proof fails
 * where it would without memoization.
 *
 * Candidates: first the node in V's role in the previous repetition (the
 * visiting position at the distance of the last carry: a layer earlier),
 * resolved to the template it was carried from; then the templates with
 * V's key (operator and the shape of its input relations), latest first,
 * at most MEMO_MAX_CANDIDATES.  Carries at one distance from their role
 * partners in a row form the blocks the report lists (layer 3 carried
 * after layer 2, whose nodes were carried from or proved in layer 1).
 *
 * Ownership: the memo (c->memo) and its templates live for one run; a
 * template holds references to its inputs' relation arrays (borrowed
 * expressions, which the context owns). */
#include "infer/infer-private.h"

#include <stdio.h>
#include <string.h>

#define MEMO_MAX_CANDIDATES 8

typedef struct {
  sc_id node;
  GPtrArray **in_rel; /* per input of the node (n->inputs order): a reference */
  GArray *explored;   /* sc_id impl nodes with inputs, in exploration order */
  GArray *consts;     /* sc_id impl nodes without inputs, in exploration order */
  GArray *res_leaves; /* sc_id: the leaves of each result's relation, each followed by
                         SC_ID_NONE (res_leaves_of); NULL until the first carry */
  GPtrArray **res_leaves_rel; /* per result: the relation res_leaves was made from */
  GArray *trel;       /* sc_id impl tensors of T_rel */
  GArray *groups;     /* guint replica groups queued */
  guint learned;      /* sizes learned before the visit */
  sc_rel_text_source **src; /* per result: the texts' source of its carries, made
                               at the first (carried-texts.c), or NULL */
  GPtrArray **src_rel;      /* per result: the relation src was made from (a reference) */
  uint32_t n_results;
} memo_tmpl;

/* How a carried spec tensor's relation was made: REL (a template
 * result's relation, referenced) renamed, leaf i of SRC (referenced) to
 * IMAGE[i] (owned).  ARR is the relation the carry made (compared only:
 * c->rel[t] is ARR while the carry's relation is the tensor's). */
typedef struct {
  GPtrArray *arr;
  GPtrArray *rel;
  sc_rel_text_source *src;
  sc_id *image;
} memo_via;

struct sc_rel_memo {
  GHashTable *by_key;  /* key -> GPtrArray of memo_tmpl* (borrowed from all) */
  GPtrArray *all;      /* memo_tmpl*, owned */
  memo_tmpl **tmpl;    /* per spec node: its template, or NULL */
  gboolean *pinned;    /* per spec tensor: an input or result of a template */
  sc_id *partner;      /* per carried spec node: the node in its role it was
                          carried after (a layer earlier), or its template */
  uint32_t *pos;       /* per spec node: visiting position */
  GArray *at_pos;      /* sc_id: the spec node at each visiting position */
  int64_t role_off;    /* distance of the last carry to its role partner (0: none) */
  guint learned_begin;
  /* the renaming sigma, stamped per attempt */
  uint32_t stamp;
  sc_id *tmap;
  uint32_t *tmap_st;   /* per impl tensor: stamp when bound */
  uint32_t *timg_st;   /* per impl tensor: stamp when it is an image */
  uint32_t *trel_st;   /* per impl tensor: stamp when in the renamed T_rel */
  sc_id *nmap;
  uint32_t *nmap_st;
  uint32_t *nimg_st;
  GArray *trail;       /* sc_id: template tensors bound, for undo */
  GArray *ntrail;      /* sc_id: template nodes bound */
  memo_via *via;       /* per spec tensor: how its carried relation was made */
  sc_rel_renamer *rn;  /* with --jobs N > 1: the carries' renaming thread */
  uint64_t n_short, n_long; /* input relations unified by images / expressions */
  uint64_t n_long_carried;  /* of the latter, carried ones */
};

typedef struct sc_rel_memo memo;

static void tmpl_free(gpointer p) {
  memo_tmpl *t = p;
  if (t->in_rel)
    for (uint32_t i = 0; t->in_rel[i] != NULL; i++)
      g_ptr_array_unref(t->in_rel[i]);
  g_free(t->in_rel);
  g_array_free(t->explored, TRUE);
  g_array_free(t->consts, TRUE);
  if (t->res_leaves)
    g_array_free(t->res_leaves, TRUE);
  g_free(t->res_leaves_rel);
  g_array_free(t->trel, TRUE);
  g_array_free(t->groups, TRUE);
  for (uint32_t k = 0; k < t->n_results; k++) {
    sc_rel_text_source_unref(t->src[k]);
    if (t->src_rel[k])
      g_ptr_array_unref(t->src_rel[k]);
  }
  g_free(t->src);
  g_free(t->src_rel);
  g_free(t);
}

void sc_rel_memo_init(sc_rel_ctx *c) {
  if (c->opts->no_memo || c->opts->explain)
    return;
  uint32_t ns = sc_graph_n_nodes(c->spec), nt = sc_graph_n_tensors(c->impl);
  uint32_t nn = sc_graph_n_nodes(c->impl);
  memo *m = g_new0(memo, 1);
  m->by_key = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                    (GDestroyNotify)g_ptr_array_unref);
  m->all = g_ptr_array_new_with_free_func(tmpl_free);
  m->tmpl = g_new0(memo_tmpl *, ns ? ns : 1);
  m->pinned = g_new0(gboolean, sc_graph_n_tensors(c->spec) ? sc_graph_n_tensors(c->spec) : 1);
  m->pos = g_new0(uint32_t, ns ? ns : 1);
  m->partner = g_new0(sc_id, ns ? ns : 1);
  m->at_pos = g_array_new(FALSE, FALSE, sizeof(sc_id));
  m->tmap = g_new0(sc_id, nt ? nt : 1);
  m->tmap_st = g_new0(uint32_t, nt ? nt : 1);
  m->timg_st = g_new0(uint32_t, nt ? nt : 1);
  m->trel_st = g_new0(uint32_t, nt ? nt : 1);
  m->nmap = g_new0(sc_id, nn ? nn : 1);
  m->nmap_st = g_new0(uint32_t, nn ? nn : 1);
  m->nimg_st = g_new0(uint32_t, nn ? nn : 1);
  m->trail = g_array_new(FALSE, FALSE, sizeof(sc_id));
  m->ntrail = g_array_new(FALSE, FALSE, sizeof(sc_id));
  m->via = g_new0(memo_via, sc_graph_n_tensors(c->spec) ? sc_graph_n_tensors(c->spec) : 1);
  c->memo = m;
  c->trel_log = g_array_new(FALSE, FALSE, sizeof(sc_id));
  c->group_log = g_array_new(FALSE, FALSE, sizeof(guint));
}

void sc_rel_memo_free(sc_rel_ctx *c) {
  memo *m = c->memo;
  if (m == NULL)
    return;
  sc_rel_renamer_free(m->rn);
  if (g_getenv("SC_SCHEDULE_TRACE"))
    fprintf(stderr, "memo: input relations unified by images %" G_GUINT64_FORMAT
            ", by expressions %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " carried)\n",
            m->n_short, m->n_long, m->n_long_carried);
  for (uint32_t t = 0; t < sc_graph_n_tensors(c->spec); t++) {
    memo_via *w = &m->via[t];
    if (w->rel)
      g_ptr_array_unref(w->rel);
    sc_rel_text_source_unref(w->src);
    g_free(w->image);
  }
  g_free(m->via);
  g_hash_table_unref(m->by_key);
  g_ptr_array_unref(m->all);
  g_free(m->tmpl);
  g_free(m->pinned);
  g_free(m->pos);
  g_free(m->partner);
  g_array_free(m->at_pos, TRUE);
  g_free(m->tmap);
  g_free(m->tmap_st);
  g_free(m->timg_st);
  g_free(m->trel_st);
  g_free(m->nmap);
  g_free(m->nmap_st);
  g_free(m->nimg_st);
  g_array_free(m->trail, TRUE);
  g_array_free(m->ntrail, TRUE);
  g_free(m);
  c->memo = NULL;
  g_array_free(c->trel_log, TRUE);
  g_array_free(c->group_log, TRUE);
  c->trel_log = c->group_log = NULL;
}

/* --- keys --- */

static guint texpr_key(const sc_graph *impl, const sc_texpr *t) {
  if (sc_texpr_get_kind(t) == SC_TEXPR_TENSOR)
    return 7u + (guint)(sc_graph_tensor(impl, sc_texpr_tensor(t))->rank + 1);
  guint h = 31u * sc_texpr_op(t)->id + sc_texpr_n_children(t);
  for (uint32_t i = 0; i < sc_texpr_n_children(t); i++)
    h = h * 131u + texpr_key(impl, sc_texpr_child(t, i));
  return h;
}

/* Spec node V's operator and the shape of its inputs' relations: equal
 * for nodes that may be isomorphic (the checks decide). */
static guint node_key(sc_rel_ctx *c, const sc_node *n) {
  sc_rel_renamer_sync(c->memo->rn); /* reads carried expressions */
  guint h = n->op->id * 2654435761u + n->n_inputs;
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    GPtrArray *r = c->rel[n->inputs[i]];
    h = h * 31u + (r ? r->len : 0);
    for (guint j = 0; r != NULL && j < r->len; j++)
      h = h * 131u + texpr_key(c->impl, g_ptr_array_index(r, j));
  }
  return h;
}

/* --- the renaming --- */

static gboolean same_type(const sc_ttype *a, const sc_ttype *b) {
  return a->dtype == b->dtype && sc_shape_equal(&a->shape, &b->shape);
}

static void undo(memo *m, guint mark, guint nmark) {
  for (guint i = mark; i < m->trail->len; i++) {
    sc_id a = g_array_index(m->trail, sc_id, i);
    m->timg_st[m->tmap[a]] = 0;
    m->tmap_st[a] = 0;
  }
  g_array_set_size(m->trail, mark);
  for (guint i = nmark; i < m->ntrail->len; i++) {
    sc_id w = g_array_index(m->ntrail, sc_id, i);
    m->nimg_st[m->nmap[w]] = 0;
    m->nmap_st[w] = 0;
  }
  g_array_set_size(m->ntrail, nmark);
}

static gboolean bound(const memo *m, sc_id a) { return m->tmap_st[a] == m->stamp; }

/* sigma(A) = B: tensors of the same type, rank and declared values; one
 * to one. */
static gboolean bind(memo *m, const sc_graph *impl, sc_id a, sc_id b) {
  if (bound(m, a))
    return m->tmap[a] == b;
  if (m->timg_st[b] == m->stamp)
    return FALSE;
  const sc_tensor *ta = sc_graph_tensor(impl, a), *tb = sc_graph_tensor(impl, b);
  if (a != b && (ta->rank != tb->rank || !same_type(&ta->type, &tb->type) ||
      ta->has_values != tb->has_values ||
      (ta->has_values && (!sc_dim_identical(ta->values_min, tb->values_min) ||
                          !sc_dim_identical(ta->values_max, tb->values_max)))))
    return FALSE; /* a tensor is its own image whatever its type */
  m->tmap[a] = b;
  m->tmap_st[a] = m->stamp;
  m->timg_st[b] = m->stamp;
  g_array_append_val(m->trail, a);
  return TRUE;
}

/* B is A renamed (binding A's leaves). */
static gboolean unify_texpr(memo *m, const sc_graph *impl, const sc_texpr *a,
                            const sc_texpr *b) {
  if (sc_texpr_get_kind(a) != sc_texpr_get_kind(b))
    return FALSE;
  if (sc_texpr_get_kind(a) == SC_TEXPR_TENSOR)
    return bind(m, impl, sc_texpr_tensor(a), sc_texpr_tensor(b));
  const sc_op *op = sc_texpr_op(a);
  if (op != sc_texpr_op(b) || sc_texpr_n_children(a) != sc_texpr_n_children(b) ||
      !same_type(sc_texpr_type(a), sc_texpr_type(b)))
    return FALSE;
  const sc_value *va = sc_texpr_args(a), *vb = sc_texpr_args(b);
  for (uint32_t i = 0; i < op->n_args; i++)
    if (!sc_value_equal(&va[i], &vb[i])) /* tensor arguments: child indices */
      return FALSE;
  for (uint32_t i = 0; i < sc_texpr_n_children(a); i++)
    if (!unify_texpr(m, impl, sc_texpr_child(a, i), sc_texpr_child(b, i)))
      return FALSE;
  return TRUE;
}

/* Impl node W2 is impl node W renamed (binding W's tensors); undone on
 * failure. */
static gboolean match_node(memo *m, const sc_graph *impl, sc_id w, sc_id w2) {
  if (m->nmap_st[w] == m->stamp)
    return m->nmap[w] == w2;
  if (m->nimg_st[w2] == m->stamp)
    return FALSE;
  const sc_node *n = sc_graph_node(impl, w), *n2 = sc_graph_node(impl, w2);
  if (n->op != n2->op || n->n_results != n2->n_results)
    return FALSE;
  guint mark = m->trail->len;
  gboolean ok = TRUE;
  for (uint32_t i = 0; i < n->op->n_args && ok; i++) {
    const sc_value *a = &n->args[i], *b = &n2->args[i];
    if (w == w2 && a->kind != SC_VAL_TENSOR && a->kind != SC_VAL_TENSOR_LIST)
      continue; /* a node onto itself: the same attributes */
    if (a->kind != b->kind)
      ok = FALSE;
    else if (a->kind == SC_VAL_TENSOR)
      ok = bind(m, impl, a->u.tensor, b->u.tensor);
    else if (a->kind == SC_VAL_TENSOR_LIST) {
      ok = a->u.list.n == b->u.list.n;
      for (uint32_t j = 0; j < a->u.list.n && ok; j++)
        ok = (a->u.list.ids[j] == SC_ID_NONE)
                 ? b->u.list.ids[j] == SC_ID_NONE
                 : b->u.list.ids[j] != SC_ID_NONE &&
                       bind(m, impl, a->u.list.ids[j], b->u.list.ids[j]);
    } else
      ok = sc_value_equal(a, b);
  }
  for (uint32_t k = 0; k < n->n_results && ok; k++)
    ok = (n->results[k] == SC_ID_NONE)
             ? n2->results[k] == SC_ID_NONE
             : n2->results[k] != SC_ID_NONE && bind(m, impl, n->results[k], n2->results[k]);
  if (!ok) {
    undo(m, mark, m->ntrail->len);
    return FALSE;
  }
  m->nmap[w] = w2;
  m->nmap_st[w] = m->stamp;
  m->nimg_st[w2] = m->stamp;
  g_array_append_val(m->ntrail, w);
  return TRUE;
}

typedef enum { MAP_DONE, MAP_FAILED, MAP_LATER } map_status;

/* Explored impl node W onto its image: a consumer of the image of a bound
 * input, else the producer of the image of a bound result. */
static map_status map_explored(memo *m, const sc_graph *impl, sc_id w) {
  const sc_node *n = sc_graph_node(impl, w);
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    if (!bound(m, n->inputs[i]))
      continue;
    const sc_tensor *t2 = sc_graph_tensor(impl, m->tmap[n->inputs[i]]);
    for (uint32_t j = 0; j < t2->n_consumers; j++)
      if (match_node(m, impl, w, t2->consumers[j]))
        return MAP_DONE;
    return MAP_FAILED;
  }
  for (uint32_t k = 0; k < n->n_results; k++) {
    if (n->results[k] == SC_ID_NONE || !bound(m, n->results[k]))
      continue;
    sc_id p = sc_graph_tensor(impl, m->tmap[n->results[k]])->producer;
    return p != SC_ID_NONE && match_node(m, impl, w, p) ? MAP_DONE : MAP_FAILED;
  }
  return MAP_LATER;
}

/* Replica group ID onto a group whose expressions are its expressions
 * renamed, found from a bound leaf: MAP_LATER while none is bound. */
static map_status map_group(memo *m, sc_rel_ctx *c, guint id, GArray *leaves) {
  const sc_relation_entry *e = sc_rel_replicas_entry(c, id);
  sc_id anchor = SC_ID_NONE;
  for (uint32_t j = 0; j < e->n_exprs && anchor == SC_ID_NONE; j++) {
    g_array_set_size(leaves, 0);
    sc_texpr_collect_leaves(e->exprs[j], leaves);
    for (guint l = 0; l < leaves->len && anchor == SC_ID_NONE; l++)
      if (bound(m, g_array_index(leaves, sc_id, l)))
        anchor = g_array_index(leaves, sc_id, l);
  }
  if (anchor == SC_ID_NONE)
    return MAP_LATER;
  const GArray *of = c->groups_of[m->tmap[anchor]];
  for (guint k = 0; of != NULL && k < of->len; k++) {
    const sc_relation_entry *e2 = sc_rel_replicas_entry(c, g_array_index(of, guint, k));
    if (e2->n_exprs != e->n_exprs)
      continue;
    guint mark = m->trail->len;
    gboolean ok = TRUE;
    for (uint32_t j = 0; j < e->n_exprs && ok; j++)
      ok = unify_texpr(m, c->impl, e->exprs[j], e2->exprs[j]);
    if (ok)
      return MAP_DONE;
    undo(m, mark, m->ntrail->len);
  }
  return MAP_FAILED;
}

/* Explored impl node W, which reads nothing and whose result nothing
 * mapped binds (a constant that joined because its operator is in the
 * e-graph, trel.c sc_rel_add_sourceless): onto itself, else onto another
 * such node of its operator not yet an image (the proof explored every
 * node of that operator, here as there). */
static gboolean map_constant(memo *m, sc_rel_ctx *c, sc_id w) {
  const sc_node *n = sc_graph_node(c->impl, w);
  if (n->n_inputs != 0)
    return FALSE;
  if (match_node(m, c->impl, w, w))
    return TRUE;
  const GArray *same = g_hash_table_lookup(c->sourceless, GUINT_TO_POINTER(n->op->id + 1));
  for (guint i = 0; same != NULL && i < same->len; i++) {
    sc_id w2 = g_array_index(same, sc_id, i);
    if (m->nimg_st[w2] != m->stamp && match_node(m, c->impl, w, w2))
      return TRUE;
  }
  return FALSE;
}

/* Every explored node and queued group of T mapped, in passes until none
 * is left (each maps once something of it is bound); when a pass makes no
 * progress, anything left fails.  Then the nodes with no input
 * (constants): onto the producer of a bound result's image, else onto
 * themselves (map_constant).  Mapping a constant binds no tensor that was
 * not bound (its results, if any, already were; it has no arguments that
 * are tensors), so it never lets another node or group map: mapping the
 * constants last is mapping them when the passes would have (a layer's
 * proof may explore every constant of an operator of the whole model,
 * trel.c sc_rel_add_sourceless, and the passes would scan them again and
 * again). */
static gboolean map_facts(memo *m, sc_rel_ctx *c, const memo_tmpl *t) {
  const sc_graph *impl = c->impl;
  GArray *todo = g_array_new(FALSE, FALSE, sizeof(sc_id));
  GArray *gtodo = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g_array_append_vals(todo, t->explored->data, t->explored->len);
  g_array_append_vals(gtodo, t->groups->data, t->groups->len);
  gboolean ok = TRUE;
  while (ok && (todo->len || gtodo->len)) {
    guint keep = 0, gkeep = 0;
    for (guint i = 0; i < todo->len && ok; i++) {
      sc_id w = g_array_index(todo, sc_id, i);
      map_status s = map_explored(m, impl, w);
      ok = s != MAP_FAILED;
      if (s == MAP_LATER)
        g_array_index(todo, sc_id, keep++) = w;
    }
    for (guint i = 0; i < gtodo->len && ok; i++) {
      guint g = g_array_index(gtodo, guint, i);
      map_status s = map_group(m, c, g, leaves);
      ok = s != MAP_FAILED;
      if (s == MAP_LATER)
        g_array_index(gtodo, guint, gkeep++) = g;
    }
    if (ok && keep == todo->len && gkeep == gtodo->len)
      ok = FALSE; /* no progress */
    g_array_set_size(todo, keep);
    g_array_set_size(gtodo, gkeep);
  }
  /* first those a bound result places, then the others, as the passes and
   * their last step did */
  g_array_set_size(todo, 0);
  for (guint i = 0; i < t->consts->len && ok; i++) {
    sc_id w = g_array_index(t->consts, sc_id, i);
    map_status st = map_explored(m, impl, w);
    ok = st != MAP_FAILED;
    if (st == MAP_LATER)
      g_array_append_val(todo, w);
  }
  for (guint i = 0; i < todo->len && ok; i++)
    ok = map_constant(m, c, g_array_index(todo, sc_id, i));
  g_array_free(todo, TRUE);
  g_array_free(gtodo, TRUE);
  g_array_free(leaves, TRUE);
  return ok;
}

/* Would a proof here explore impl node W2, which is no image of an
 * explored node?  As trel.c decides: every input it reads in (the renamed)
 * T_rel, or in T_rel or made by a creation node with some in T_rel. */
static gboolean would_explore(const memo *m, const sc_rel_ctx *c, sc_id w2) {
  const sc_graph *impl = c->impl;
  const sc_id *dup_rep = c->dup_rep;
  const sc_node *n = sc_graph_node(impl, w2);
  gboolean related = FALSE;
  if (dup_rep[w2] != w2) {
    /* a duplicate stays dormant unless a result of its own is related */
    gboolean needed = FALSE;
    for (uint32_t k = 0; k < n->n_results && !needed; k++)
      needed = n->results[k] != SC_ID_NONE && m->trel_st[n->results[k]] == m->stamp;
    if (!needed)
      return FALSE;
  }
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    sc_id t = n->inputs[i];
    if (!sc_rel_reads_input_at(c, w2, t))
      continue;
    sc_id p = sc_graph_tensor(impl, t)->producer;
    gboolean virt = FALSE;
    /* counted as related when the same result of any other member of its
     * producer's duplicate set is (trel.c sc_rel_trel_add: the
     * representative's too) */
    sc_id d;
    for (guint j = 0; p != SC_ID_NONE && !virt && (d = sc_rel_dups_member(c, p, j)) != SC_ID_NONE;
         j++) {
      sc_id dt = sc_graph_node(impl, d)->results[sc_graph_tensor(impl, t)->result_index];
      virt = d != p && dt != SC_ID_NONE && m->trel_st[dt] == m->stamp;
    }
    if (m->trel_st[t] == m->stamp || virt) {
      /* in the renamed T_rel, or counted as its duplicate's (dups.c) */
      related = TRUE;
      continue;
    }
    const sc_node *pn = p == SC_ID_NONE ? NULL : sc_graph_node(impl, p);
    if (pn == NULL || pn->n_inputs != 0 || !(pn->op->flags & SC_OP_CREATION))
      return FALSE;
  }
  return related;
}

/* Nothing more would be explored around the renamed T_rel. */
static gboolean closed(memo *m, const sc_rel_ctx *c, const memo_tmpl *t) {
  const sc_graph *impl = c->impl;
  for (guint i = 0; i < t->trel->len; i++) {
    sc_id a = g_array_index(t->trel, sc_id, i);
    if (!bound(m, a))
      return FALSE;
    m->trel_st[m->tmap[a]] = m->stamp;
  }
  for (guint i = 0; i < t->trel->len; i++) {
    const sc_tensor *t2 = sc_graph_tensor(impl, m->tmap[g_array_index(t->trel, sc_id, i)]);
    if (t2->producer != SC_ID_NONE && m->nimg_st[t2->producer] != m->stamp &&
        (sc_graph_node(impl, t2->producer)->op->flags & SC_OP_DATA_DEPENDENT))
      return FALSE;
    for (uint32_t j = 0; j < t2->n_consumers; j++)
      if (m->nimg_st[t2->consumers[j]] != m->stamp && would_explore(m, c, t2->consumers[j]))
        return FALSE;
  }
  return TRUE;
}

/* --- the spec side --- */

static gboolean plain_input(sc_rel_ctx *c, sc_id u) {
  return c->defer_depth[u] == 0 && c->rel[u] != NULL && c->rel[u]->len > 0 &&
         (c->vrange == NULL || sc_vrange_is_unbounded(&c->vrange[u]));
}

static gboolean is_checked_or_expected(sc_rel_ctx *c, sc_id t) {
  for (guint i = 0; i < c->res->checked->len; i++)
    if (g_array_index(c->res->checked, sc_id, i) == t)
      return TRUE;
  const sc_relation *exp = sc_bundle_expect_output_relation(c->bundle);
  return exp != NULL && sc_relation_find(exp, t) != NULL;
}

static uint32_t input_index(const sc_node *n, sc_id t) {
  uint32_t i = 0;
  while (i < n->n_inputs && n->inputs[i] != t)
    i++;
  return i;
}

/* Spec nodes U and V: the same operator and arguments, inputs and results
 * of the same types, the same input in the same positions. */
static gboolean same_spec_node(sc_rel_ctx *c, const sc_node *u, const sc_node *v) {
  if (u->op != v->op || u->n_results != v->n_results || u->n_inputs != v->n_inputs)
    return FALSE;
  for (uint32_t i = 0; i < u->op->n_args; i++) {
    const sc_value *a = &u->args[i], *b = &v->args[i];
    if (a->kind != b->kind)
      return FALSE;
    if (a->kind == SC_VAL_TENSOR) {
      if (input_index(u, a->u.tensor) != input_index(v, b->u.tensor))
        return FALSE;
    } else if (a->kind == SC_VAL_TENSOR_LIST) {
      if (a->u.list.n != b->u.list.n)
        return FALSE;
      for (uint32_t j = 0; j < a->u.list.n; j++)
        if ((a->u.list.ids[j] == SC_ID_NONE) != (b->u.list.ids[j] == SC_ID_NONE) ||
            (a->u.list.ids[j] != SC_ID_NONE &&
             input_index(u, a->u.list.ids[j]) != input_index(v, b->u.list.ids[j])))
          return FALSE;
    } else if (!sc_value_equal(a, b))
      return FALSE;
  }
  for (uint32_t i = 0; i < u->n_inputs; i++)
    if (!same_type(&sc_graph_tensor(c->spec, u->inputs[i])->type,
                   &sc_graph_tensor(c->spec, v->inputs[i])->type))
      return FALSE;
  for (uint32_t k = 0; k < u->n_results; k++) {
    if ((u->results[k] == SC_ID_NONE) != (v->results[k] == SC_ID_NONE))
      return FALSE;
    if (u->results[k] != SC_ID_NONE &&
        !same_type(&sc_graph_tensor(c->spec, u->results[k])->type,
                   &sc_graph_tensor(c->spec, v->results[k])->type))
      return FALSE;
  }
  return TRUE;
}

/* --- carrying --- */

static sc_id rename_leaf(sc_id t, void *user) {
  const memo *m = user;
  return m->tmap[t];
}

/* The leaves of the relations of U's results, as T->res_leaves says;
 * made again when one of those relations is no longer the one they were
 * collected from. */
static const GArray *res_leaves_of(sc_rel_ctx *c, memo_tmpl *t, const sc_node *u) {
  gboolean fresh = t->res_leaves != NULL;
  for (uint32_t k = 0; k < u->n_results && fresh; k++)
    fresh = u->results[k] == SC_ID_NONE || t->res_leaves_rel[k] == c->rel[u->results[k]];
  if (fresh)
    return t->res_leaves;
  if (t->res_leaves == NULL) {
    t->res_leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
    t->res_leaves_rel = g_new0(GPtrArray *, MAX(u->n_results, 1));
  }
  g_array_set_size(t->res_leaves, 0);
  GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  const sc_id none = SC_ID_NONE;
  for (uint32_t k = 0; k < u->n_results; k++) {
    GPtrArray *r = u->results[k] == SC_ID_NONE ? NULL : c->rel[u->results[k]];
    t->res_leaves_rel[k] = r;
    for (guint j = 0; r != NULL && j < r->len; j++) {
      g_array_set_size(leaves, 0);
      sc_texpr_collect_leaves(g_ptr_array_index(r, j), leaves);
      g_array_append_vals(t->res_leaves, leaves->data, leaves->len);
      g_array_append_val(t->res_leaves, none);
    }
  }
  g_array_free(leaves, TRUE);
  return t->res_leaves;
}

/* Every leaf of U's result relations bound (else they cannot be carried). */
static gboolean results_bound(memo *m, sc_rel_ctx *c, memo_tmpl *t, const sc_node *u,
                              const sc_node *v) {
  gboolean ok = TRUE;
  for (uint32_t k = 0; k < u->n_results && ok; k++) {
    if (u->results[k] == SC_ID_NONE)
      continue;
    GPtrArray *r = c->rel[u->results[k]];
    if (r == NULL || r->len == 0)
      /* U's result needed none: V's must need none either */
      ok = !sc_rel_result_is_read(c, v->results[k]);
  }
  const GArray *leaves = ok ? res_leaves_of(c, t, u) : NULL;
  for (guint l = 0; leaves != NULL && l < leaves->len && ok; l++) {
    sc_id a = g_array_index(leaves, sc_id, l);
    ok = a == SC_ID_NONE || bound(m, a);
  }
  return ok;
}

/* The record of spec tensor T's carry when A is the relation it made. */
static const memo_via *via_of(const memo *m, sc_id t, const GPtrArray *a) {
  const memo_via *w = &m->via[t];
  return w->arr != NULL && w->arr == a ? w : NULL;
}

/* B (V's relation of input TV) is A (the template's, of its input TU)
 * renamed: binds sigma.  When B was carried from A, or A and B were both
 * carried from one source, through the leaves' images, without reading
 * B's expressions (which the renaming thread may still be making,
 * carry-rename.c): both expressions j are source j with leaf l renamed to
 * its image, so unifying them binds exactly the pairs of images of each
 * leaf, and no pair fails otherwise (a renaming keeps every operator,
 * argument and type). */
static gboolean unify_input(memo *m, sc_rel_ctx *c, sc_id tu, GPtrArray *a, sc_id tv,
                            GPtrArray *b) {
  if (a->len != b->len)
    return FALSE;
  const memo_via *wb = via_of(m, tv, b), *wa = via_of(m, tu, a);
  if (wb != NULL && (a == wb->rel || (wa != NULL && wa->src == wb->src))) {
    m->n_short++;
    for (guint l = 0; l < sc_rel_text_source_n_leaves(wb->src); l++) {
      sc_id from = a == wb->rel ? sc_rel_text_source_leaf(wb->src, l) : wa->image[l];
      if (!bind(m, c->impl, from, wb->image[l]))
        return FALSE;
    }
    return TRUE;
  }
  m->n_long++;
  if (wb != NULL) { /* B's expressions read: made by now */
    m->n_long_carried++;
    sc_rel_renamer_sync(m->rn);
  }
  for (guint j = 0; j < a->len; j++)
    if (!unify_texpr(m, c->impl, g_ptr_array_index(a, j), g_ptr_array_index(b, j)))
      return FALSE;
  return TRUE;
}

/* Does template T carry to node V?  Builds sigma. */
static gboolean try_template(sc_rel_ctx *c, memo_tmpl *t, const sc_node *v) {
  memo *m = c->memo;
  const sc_node *u = sc_graph_node(c->spec, t->node);
  if (t->learned != c->res->learned->len || !same_spec_node(c, u, v))
    return FALSE;
  m->stamp++;
  g_array_set_size(m->trail, 0);
  g_array_set_size(m->ntrail, 0);
  for (uint32_t i = 0; i < v->n_inputs; i++)
    if (!unify_input(m, c, u->inputs[i], t->in_rel[i], v->inputs[i], c->rel[v->inputs[i]]))
      return FALSE;
  return map_facts(m, c, t) && closed(m, c, t) && results_bound(m, c, t, u, v);
}

/* V's relations: U's renamed by sigma (with --jobs N > 1 on the renaming
 * thread, carry-rename.c: the array then owns its expressions, and
 * c->owned gets an empty slot for the release's slice); their texts
 * rendered when read (carried-texts.c). */
static void carry(sc_rel_ctx *c, const memo_tmpl *t, const sc_node *v) {
  memo *m = c->memo;
  const sc_node *u = sc_graph_node(c->spec, t->node);
  for (uint32_t k = 0; k < u->n_results; k++) {
    GPtrArray *r = u->results[k] == SC_ID_NONE ? NULL : c->rel[u->results[k]];
    if (r == NULL || r->len == 0)
      continue;
    if (t->src_rel[k] != r) { /* U's relation is pinned: made once */
      sc_rel_text_source_unref(t->src[k]);
      if (t->src_rel[k])
        g_ptr_array_unref(t->src_rel[k]);
      t->src[k] = sc_rel_text_source_new(r);
      t->src_rel[k] = g_ptr_array_ref(r);
    }
    guint nl = sc_rel_text_source_n_leaves(t->src[k]);
    sc_id *image = g_new(sc_id, MAX(nl, 1));
    for (guint l = 0; l < nl; l++)
      image[l] = m->tmap[sc_rel_text_source_leaf(t->src[k], l)];
    sc_id res = v->results[k];
    GPtrArray *exprs;
    if (m->rn != NULL) {
      exprs = g_ptr_array_new_full(r->len, sc_rel_renamer_dispose);
      g_ptr_array_set_size(exprs, (gint)r->len);
      g_ptr_array_add(c->owned, NULL);
    } else {
      exprs = g_ptr_array_new();
      for (guint j = 0; j < r->len; j++) {
        sc_texpr *e = sc_texpr_rename(g_ptr_array_index(r, j), rename_leaf, m);
        g_ptr_array_add(c->owned, e);
        g_ptr_array_add(exprs, e);
      }
    }
    if (c->rel[res])
      g_ptr_array_unref(c->rel[res]);
    c->rel[res] = exprs;
    memo_via *w = &m->via[res];
    if (w->rel)
      g_ptr_array_unref(w->rel);
    sc_rel_text_source_unref(w->src);
    g_free(w->image);
    w->arr = exprs;
    w->rel = g_ptr_array_ref(r);
    w->src = sc_rel_text_source_ref(t->src[k]);
    w->image = g_memdup2(image, sizeof(sc_id) * MAX(nl, 1));
    if (m->rn != NULL)
      sc_rel_renamer_push(m->rn, exprs, w->src, w->image);
    sc_rel_set_carried_texts(c->res, res, sc_rel_text_source_ref(t->src[k]), image);
  }
}

void sc_rel_memo_start_renamer(sc_rel_ctx *c) {
  if (c->memo != NULL && c->memo->rn == NULL)
    c->memo->rn = sc_rel_renamer_new();
}

void sc_rel_memo_stop_renamer(sc_rel_ctx *c) {
  if (c->memo != NULL)
    g_clear_pointer(&c->memo->rn, sc_rel_renamer_free);
}

/* The template a visited node stands for: its own, or the one it was
 * carried from. */
static memo_tmpl *template_of(sc_rel_ctx *c, sc_id p) {
  memo *m = c->memo;
  if (m->tmpl[p])
    return m->tmpl[p];
  sc_id from = c->res->carried_from[p];
  return from == SC_ID_NONE ? NULL : m->tmpl[from];
}

/* Can N be carried at all: its inputs plain, no result checked or
 * expected (whatever the templates). */
static gboolean may_be_carried(sc_rel_ctx *c, const sc_node *n) {
  for (uint32_t i = 0; i < n->n_inputs; i++)
    if (!plain_input(c, n->inputs[i]))
      return FALSE;
  for (uint32_t k = 0; k < n->n_results; k++)
    if (n->results[k] != SC_ID_NONE && is_checked_or_expected(c, n->results[k]))
      return FALSE;
  return TRUE;
}

gboolean sc_rel_memo_carry(sc_rel_ctx *c, sc_id v) {
  memo *m = c->memo;
  if (m == NULL)
    return FALSE;
  uint32_t here = m->at_pos->len;
  m->pos[v] = here;
  g_array_append_val(m->at_pos, v);
  const sc_node *n = sc_graph_node(c->spec, v);
  if (!may_be_carried(c, n))
    return FALSE;
  memo_tmpl *found = NULL;
  sc_id partner = SC_ID_NONE;
  if (m->role_off > 0 && m->role_off <= here) {
    partner = g_array_index(m->at_pos, sc_id, here - m->role_off);
    memo_tmpl *t = template_of(c, partner);
    if (t != NULL && try_template(c, t, n))
      found = t;
  }
  GPtrArray *bucket = found ? NULL : g_hash_table_lookup(c->memo->by_key,
                                                         GUINT_TO_POINTER(node_key(c, n)));
  for (guint i = 0; bucket != NULL && i < MIN(bucket->len, MEMO_MAX_CANDIDATES) && !found; i++) {
    memo_tmpl *t = g_ptr_array_index(bucket, bucket->len - 1 - i);
    if (try_template(c, t, n)) {
      found = t;
      partner = t->node;
    }
  }
  if (found == NULL)
    return FALSE;
  carry(c, found, n);
  m->role_off = (int64_t)here - m->pos[partner];
  m->partner[v] = partner;
  c->res->carried_from[v] = found->node;
  c->res->stats.carried++;
  sc_rel_note_random_assumption(c, n);
  sc_rel_settle_deferred(c, n, FALSE);
  return TRUE;
}

/* May V, at visiting POSITION, be carried: from a template recorded so
 * far, or from the node in its role a repetition earlier, not visited
 * yet?  Nothing recorded (the renaming's scratch aside): the parallel
 * schedule (schedule.c) proves ahead only nodes this answers FALSE for.
 * A hint, not a decision: sc_rel_memo_carry decides, at V's turn. */
gboolean sc_rel_memo_may_carry(sc_rel_ctx *c, sc_id v, uint32_t position) {
  memo *m = c->memo;
  if (m == NULL)
    return FALSE;
  const sc_node *n = sc_graph_node(c->spec, v);
  if (!may_be_carried(c, n))
    return FALSE;
  if (m->role_off > 0 && m->role_off <= position && position - m->role_off >= m->at_pos->len)
    return TRUE;
  if (m->role_off > 0 && m->role_off <= position) {
    sc_id partner = g_array_index(m->at_pos, sc_id, position - m->role_off);
    /* its role partner carried too, the same node: taken as carried
     * without the isomorphism's cost (it is a hint: at 126 layers the
     * check made every carry twice on the main thread) */
    if (c->res->carried_from[partner] != SC_ID_NONE &&
        same_spec_node(c, sc_graph_node(c->spec, partner), n))
      return TRUE;
    memo_tmpl *t = template_of(c, partner);
    if (t != NULL && try_template(c, t, n))
      return TRUE;
  }
  GPtrArray *bucket = g_hash_table_lookup(m->by_key, GUINT_TO_POINTER(node_key(c, n)));
  for (guint i = 0; bucket != NULL && i < MIN(bucket->len, MEMO_MAX_CANDIDATES); i++)
    if (try_template(c, g_ptr_array_index(bucket, bucket->len - 1 - i), n))
      return TRUE;
  return FALSE;
}

/* Could U become V's template once committed?  Only a proved node is a
 * template (a carried one stands for its own template, which exists
 * already), and try_template refuses any other spec node; when U's inputs
 * are committed (U_READY), also a U with an input that is not plain (it
 * is not recorded) or whose input relations have another shape than V's
 * (node_key: try_template unifies them expression by expression, so a
 * template's key is its node's).  Whether U's proof is recorded is known
 * only at its turn, so this may say TRUE for a U that will not be a
 * template.  V's inputs are committed (the caller asks for a node that
 * may be proved ahead). */
gboolean sc_rel_memo_may_template(sc_rel_ctx *c, sc_id u, gboolean u_ready, sc_id v) {
  if (c->memo == NULL)
    return FALSE;
  const sc_node *nu = sc_graph_node(c->spec, u), *nv = sc_graph_node(c->spec, v);
  if (!same_spec_node(c, nu, nv) || !may_be_carried(c, nv))
    return FALSE;
  if (!u_ready)
    return TRUE;
  for (uint32_t i = 0; i < nu->n_inputs; i++)
    if (!plain_input(c, nu->inputs[i]))
      return FALSE;
  return node_key(c, nu) == node_key(c, nv);
}

void sc_rel_memo_begin(sc_rel_ctx *c) {
  if (c->memo == NULL)
    return;
  /* a proof reads its inputs' expressions, carried ones too */
  sc_rel_renamer_sync(c->memo->rn);
  g_array_set_size(c->trel_log, 0);
  g_array_set_size(c->group_log, 0);
  c->widened = FALSE;
  c->memo->learned_begin = c->res->learned->len;
}

void sc_rel_memo_record(sc_rel_ctx *c, sc_id v) {
  memo *m = c->memo;
  if (m == NULL || c->res->learned->len != m->learned_begin)
    return;
  const sc_node *n = sc_graph_node(c->spec, v);
  for (uint32_t i = 0; i < n->n_inputs; i++)
    if (!plain_input(c, n->inputs[i]))
      return;
  for (uint32_t k = 0; k < n->n_results; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE)
      continue;
    if (c->defer_depth[t] > 0 || is_checked_or_expected(c, t) ||
        ((c->rel[t] == NULL || c->rel[t]->len == 0) && sc_rel_result_is_read(c, t)))
      return;
  }
  memo_tmpl *t = g_new0(memo_tmpl, 1);
  t->node = v;
  t->in_rel = g_new0(GPtrArray *, n->n_inputs + 1);
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    t->in_rel[i] = g_ptr_array_ref(c->rel[n->inputs[i]]);
    m->pinned[n->inputs[i]] = TRUE;
  }
  for (uint32_t k = 0; k < n->n_results; k++)
    if (n->results[k] != SC_ID_NONE)
      m->pinned[n->results[k]] = TRUE;
  t->explored = g_array_new(FALSE, FALSE, sizeof(sc_id));
  t->consts = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint i = 0; i < c->explored_list->len; i++) {
    sc_id w = g_array_index(c->explored_list, sc_id, i);
    g_array_append_val(sc_graph_node(c->impl, w)->n_inputs == 0 ? t->consts : t->explored, w);
  }
  t->trel = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g_array_append_vals(t->trel, c->trel_log->data, c->trel_log->len);
  t->groups = g_array_new(FALSE, FALSE, sizeof(guint));
  g_array_append_vals(t->groups, c->group_log->data, c->group_log->len);
  t->learned = m->learned_begin;
  t->n_results = n->n_results;
  t->src = g_new0(sc_rel_text_source *, MAX(n->n_results, 1));
  t->src_rel = g_new0(GPtrArray *, MAX(n->n_results, 1));
  g_ptr_array_add(m->all, t);
  m->tmpl[v] = t;
  gpointer key = GUINT_TO_POINTER(node_key(c, n));
  GPtrArray *bucket = g_hash_table_lookup(m->by_key, key);
  if (bucket == NULL) {
    bucket = g_ptr_array_new();
    g_hash_table_insert(m->by_key, key, bucket);
  }
  g_ptr_array_add(bucket, t);
}

void sc_rel_memo_finish(sc_rel_ctx *c) {
  memo *m = c->memo;
  if (m == NULL)
    return;
  sc_infer_carried_block *open = NULL;
  int64_t open_d = 0;
  for (guint p = 0; p < m->at_pos->len; p++) {
    sc_id v = g_array_index(m->at_pos, sc_id, p);
    if (c->res->carried_from[v] == SC_ID_NONE) {
      open = NULL;
      continue;
    }
    sc_id from = m->partner[v];
    int64_t d = (int64_t)p - m->pos[from];
    if (open != NULL && d == open_d) {
      open->last = v;
      open->from_last = from;
      open->n_nodes++;
      continue;
    }
    sc_infer_carried_block b = {v, v, from, from, 1};
    g_array_append_val(c->res->carried_blocks, b);
    open = &g_array_index(c->res->carried_blocks, sc_infer_carried_block,
                          c->res->carried_blocks->len - 1);
    open_d = d;
  }
}

gboolean sc_rel_memo_pins(sc_rel_ctx *c, sc_id t) {
  return c->memo != NULL && c->memo->pinned[t];
}
