/* rewrite.c — rewrites: a query (lhs + requires), a guard, and a
 * right-hand side (a pattern, flattened here children-first) or an applier
 * callback.
 *
 * Invariants: every variable of the right-hand side is bound by the query
 * with the same kind (checked at construction); the flattened rhs lists
 * only the terms reachable from its root, each after its children, so one
 * forward pass instantiates it.  Computed attributes are all evaluated
 * before any node is added, so a skipped application adds nothing. */
#include "rewrite-private.h"
#include "egraph-private.h"

#include <string.h>

typedef struct {
  gboolean is_var;
  uint32_t var;           /* query variable */
  uint32_t op;
  sc_attr_pat_kind akind; /* EXACT, VAR or COMPUTE */
  uint32_t aval;          /* exact id, or query variable */
  sc_attr_compute_fn compute;
  void *user;
  uint32_t kid_off, n_kids; /* into rhs_kids: indices of earlier rhs terms */
} rhs_term;

struct sc_rewrite {
  char *name;
  sc_query *q;
  sc_guard_fn guard;
  void *guard_user;
  sc_applier_fn applier;
  void *applier_user;
  rhs_term *rhs;
  uint32_t n_rhs;
  uint32_t *rhs_kids;
  uint32_t n_computed;
  uint32_t pf_term; /* first rhs node whose children are all variables */
};

static gboolean flatten(sc_rewrite *rw, const sc_pattern *p, sc_pat_id id,
                        uint32_t *index_of, GArray *terms, GArray *kids,
                        GError **error) {
  if (index_of[id] != SC_ID_NONE)
    return TRUE;
  const sc_pat_term *t = sc_pat_term_at(p, id);
  for (uint32_t i = 0; i < t->n_kids; i++)
    if (!flatten(rw, p, sc_pat_kid(p, t, i), index_of, terms, kids, error))
      return FALSE;
  rhs_term r = {0};
  if (t->is_var) {
    const char *name = g_ptr_array_index(p->names, t->var);
    r.is_var = TRUE;
    r.var = sc_query_var_index(rw->q, name);
    if (r.var == SC_ID_NONE) {
      g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_UNBOUND_VAR,
                  "rewrite %s: ?%s on the right is not bound on the left",
                  rw->name, name);
      return FALSE;
    }
    if (sc_query_var_is_attr(rw->q, r.var)) {
      g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_VAR_KIND,
                  "rewrite %s: ?%s is an attribute on the left but a term on "
                  "the right", rw->name, name);
      return FALSE;
    }
  } else {
    r.op = t->op;
    r.akind = t->attr.kind;
    switch (t->attr.kind) {
    case SC_ATTR_EXACT:
      r.aval = t->attr.value;
      break;
    case SC_ATTR_VAR:
      r.aval = sc_query_var_index(rw->q, t->attr.var);
      if (r.aval == SC_ID_NONE) {
        g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_UNBOUND_VAR,
                    "rewrite %s: attribute ?%s on the right is not bound on "
                    "the left", rw->name, t->attr.var);
        return FALSE;
      }
      if (!sc_query_var_is_attr(rw->q, r.aval)) {
        g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_VAR_KIND,
                    "rewrite %s: ?%s is a term on the left but an attribute "
                    "on the right", rw->name, t->attr.var);
        return FALSE;
      }
      break;
    case SC_ATTR_COMPUTE:
      r.compute = t->attr.compute;
      r.user = t->attr.user;
      rw->n_computed++;
      break;
    case SC_ATTR_ANY:
    case SC_ATTR_PRED:
    default:
      g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_BAD_ATTR,
                  "rewrite %s: the right side needs an exact, variable or "
                  "computed attribute", rw->name);
      return FALSE;
    }
    r.kid_off = kids->len;
    r.n_kids = t->n_kids;
    for (uint32_t i = 0; i < t->n_kids; i++)
      g_array_append_val(kids, index_of[sc_pat_kid(p, t, i)]);
  }
  g_array_append_val(terms, r);
  index_of[id] = terms->len - 1;
  return TRUE;
}

void sc_rewrite_prefetch(const sc_rewrite *rw, const sc_egraph *eg,
                         const uint32_t *subst, int stage) {
  if (rw->pf_term == SC_ID_NONE)
    return;
  const rhs_term *t = &rw->rhs[rw->pf_term];
  sc_id k[4];
  for (uint32_t j = 0; j < t->n_kids; j++)
    k[j] = subst[rw->rhs[rw->rhs_kids[t->kid_off + j]].var];
  uint32_t attr = t->akind == SC_ATTR_EXACT ? t->aval : subst[t->aval];
  sc_eg_prefetch_key(eg, t->op, attr, k, t->n_kids, stage);
}

static sc_rewrite *rewrite_new(const char *name, const sc_pattern *lhs,
                               const sc_pattern *const *requires,
                               uint32_t n_requires, GError **error) {
  g_return_val_if_fail(name != NULL, NULL);
  sc_rewrite *rw = g_new0(sc_rewrite, 1);
  rw->name = g_strdup(name);
  GError *local = NULL;
  rw->q = sc_query_new(lhs, requires, n_requires, &local);
  if (!rw->q) {
    g_propagate_prefixed_error(error, local, "rewrite %s: ", name);
    sc_rewrite_free(rw);
    return NULL;
  }
  return rw;
}

sc_rewrite *sc_rewrite_new(const char *name, const sc_pattern *lhs,
                           const sc_pattern *const *requires,
                           uint32_t n_requires, const sc_pattern *rhs,
                           GError **error) {
  sc_rewrite *rw = rewrite_new(name, lhs, requires, n_requires, error);
  if (!rw)
    return NULL;
  sc_pat_id root = rhs ? sc_pattern_root(rhs) : SC_ID_NONE;
  if (root == SC_ID_NONE) {
    g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_EMPTY,
                "rewrite %s: the right pattern is empty", name);
    sc_rewrite_free(rw);
    return NULL;
  }
  uint32_t n = sc_pattern_n_terms(rhs);
  uint32_t *index_of = g_new(uint32_t, n);
  memset(index_of, 0xff, n * sizeof(uint32_t));
  GArray *terms = g_array_new(FALSE, FALSE, sizeof(rhs_term));
  GArray *kids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  gboolean ok = flatten(rw, rhs, root, index_of, terms, kids, error);
  g_free(index_of);
  rw->n_rhs = terms->len;
  rw->rhs = (rhs_term *)g_array_free(terms, FALSE);
  rw->rhs_kids = (uint32_t *)g_array_free(kids, FALSE);
  rw->pf_term = SC_ID_NONE;
  for (uint32_t i = 0; ok && i < rw->n_rhs && rw->pf_term == SC_ID_NONE; i++) {
    const rhs_term *t = &rw->rhs[i];
    if (t->is_var || t->akind == SC_ATTR_COMPUTE || t->n_kids > 4)
      continue;
    gboolean all_vars = TRUE;
    for (uint32_t j = 0; j < t->n_kids; j++)
      all_vars = all_vars && rw->rhs[rw->rhs_kids[t->kid_off + j]].is_var;
    if (all_vars)
      rw->pf_term = i;
  }
  if (!ok) {
    sc_rewrite_free(rw);
    return NULL;
  }
  return rw;
}

sc_rewrite *sc_rewrite_new_applier(const char *name, const sc_pattern *lhs,
                                   const sc_pattern *const *requires,
                                   uint32_t n_requires, sc_applier_fn fn,
                                   void *user, GError **error) {
  g_return_val_if_fail(fn != NULL, NULL);
  sc_rewrite *rw = rewrite_new(name, lhs, requires, n_requires, error);
  if (rw) {
    rw->applier = fn;
    rw->applier_user = user;
    rw->pf_term = SC_ID_NONE; /* no right-hand pattern to prefetch */
  }
  return rw;
}

void sc_rewrite_set_guard(sc_rewrite *rw, sc_guard_fn guard, void *user) {
  rw->guard = guard;
  rw->guard_user = user;
}

void sc_rewrite_free(sc_rewrite *rw) {
  if (!rw)
    return;
  g_free(rw->name);
  sc_query_free(rw->q);
  g_free(rw->rhs);
  g_free(rw->rhs_kids);
  g_free(rw);
}

const char *sc_rewrite_name(const sc_rewrite *rw) {
  return rw->name;
}

const sc_query *sc_rewrite_query(const sc_rewrite *rw) {
  return rw->q;
}

gboolean sc_rewrite_is_incremental(const sc_rewrite *rw) {
  return !rw->guard && !rw->applier && rw->q->n_req == 0 &&
         rw->q->lhs.root_op != SC_ID_NONE;
}

uint64_t sc_rewrite_search(const sc_rewrite *rw, const sc_egraph *eg,
                           uint64_t limit, GArray *out, uint32_t since) {
  if (!sc_rewrite_is_incremental(rw))
    since = 0;
  return sc_query_search_since(rw->q, eg, limit, rw->guard, rw->guard_user,
                               out, since);
}

uint32_t sc_rewrite_match_width(const sc_rewrite *rw) {
  return 1 + sc_query_n_vars(rw->q);
}

gboolean sc_rewrite_apply_one(const sc_rewrite *rw, sc_egraph *eg, sc_id root,
                              const uint32_t *subst, uint32_t just) {
  if (rw->applier) {
    sc_id r = rw->applier(eg, root, subst, just, rw->applier_user);
    return r != SC_ID_NONE && sc_egraph_union(eg, root, r, just);
  }
  sc_id buf[32];
  uint32_t abuf[32];
  sc_id *cls = rw->n_rhs <= 32 ? buf : g_new(sc_id, rw->n_rhs);
  uint32_t *attrs = rw->n_rhs <= 32 ? abuf : g_new(uint32_t, rw->n_rhs);
  gboolean changed = FALSE, skip = FALSE;
  for (uint32_t i = 0; i < rw->n_rhs && !skip; i++) {
    const rhs_term *t = &rw->rhs[i];
    if (t->is_var)
      continue;
    if (t->akind == SC_ATTR_EXACT)
      attrs[i] = t->aval;
    else if (t->akind == SC_ATTR_VAR)
      attrs[i] = subst[t->aval];
    else {
      attrs[i] = t->compute(eg, subst, t->user);
      skip = attrs[i] == SC_ID_NONE;
    }
  }
  if (!skip) {
    sc_id kbuf[16];
    for (uint32_t i = 0; i < rw->n_rhs; i++) {
      const rhs_term *t = &rw->rhs[i];
      if (t->is_var) {
        cls[i] = subst[t->var];
        continue;
      }
      sc_id *k = t->n_kids <= 16 ? kbuf : g_new(sc_id, t->n_kids);
      for (uint32_t j = 0; j < t->n_kids; j++)
        k[j] = cls[rw->rhs_kids[t->kid_off + j]];
      cls[i] = sc_egraph_add(eg, t->op, attrs[i], k, t->n_kids);
      if (k != kbuf)
        g_free(k);
    }
    changed = sc_egraph_union(eg, root, cls[rw->n_rhs - 1], just);
  }
  if (cls != buf)
    g_free(cls);
  if (attrs != abuf)
    g_free(attrs);
  return changed;
}
