/* rewrite.c — rewrites: a query (lhs + requires), a guard, and a
 * right-hand side (a pattern, flattened here children-first) or an applier
 * callback.  A bare-variable lhs is searched through a requires pattern
 * (root_var); semi-naive searches skip rules none of whose operators
 * changed (sc_eg_op_epoch).
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
  gboolean pure;    /* guard and applier depend on the match alone */
  uint32_t *ops;    /* the operators its patterns bind (lhs and requires) */
  uint32_t n_ops;
  /* A bare-variable lhs ?x is searched through a requires pattern that
   * mentions ?x (the query's lhs is that pattern): each match's root is
   * then the class bound to ?x, this query variable.  SC_ID_NONE: the
   * query's lhs is the rewrite's. */
  uint32_t root_var;
};

/* Does P mention variable NAME? */
static gboolean pattern_mentions(const sc_pattern *p, const char *name) {
  for (uint32_t i = 0; i < sc_pattern_n_terms(p); i++) {
    const sc_pat_term *t = sc_pat_term_at(p, i);
    if (t->is_var && strcmp(g_ptr_array_index(p->names, t->var), name) == 0)
      return TRUE;
  }
  return FALSE;
}

/* The distinct operators of the query's BIND instructions. */
static void collect_ops(sc_rewrite *rw) {
  GArray *ops = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t p = 0; p <= rw->q->n_req; p++) {
    const sc_program *pr = p == 0 ? &rw->q->lhs : &rw->q->req[p - 1];
    for (uint32_t i = 0; i < pr->n_code; i++) {
      if (pr->code[i].kind != SC_I_BIND)
        continue;
      gboolean seen = FALSE;
      for (guint j = 0; j < ops->len && !seen; j++)
        seen = g_array_index(ops, uint32_t, j) == pr->code[i].op;
      if (!seen)
        g_array_append_val(ops, pr->code[i].op);
    }
  }
  rw->n_ops = ops->len;
  rw->ops = (uint32_t *)(void *)g_array_free(ops, FALSE);
}

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
  rw->root_var = SC_ID_NONE;
  GError *local = NULL;
  /* A bare ?x on the left would be tried against every class, each
   * followed by a scan for its requires patterns: search the first
   * requires pattern that mentions ?x instead (the same matches, from the
   * operator index, and semi-naive). */
  sc_pat_id lroot = sc_pattern_root(lhs);
  const sc_pat_term *lt = lroot != SC_ID_NONE ? sc_pat_term_at(lhs, lroot) : NULL;
  uint32_t driver = UINT32_MAX;
  if (lt && lt->is_var)
    for (uint32_t i = 0; i < n_requires && driver == UINT32_MAX; i++)
      if (pattern_mentions(requires[i], g_ptr_array_index(lhs->names, lt->var)))
        driver = i;
  if (driver != UINT32_MAX) {
    const sc_pattern **rest = g_new(const sc_pattern *, n_requires);
    uint32_t n_rest = 0;
    for (uint32_t i = 0; i < n_requires; i++)
      if (i != driver)
        rest[n_rest++] = requires[i];
    rw->q = sc_query_new(requires[driver], rest, n_rest, &local);
    g_free(rest);
    if (rw->q)
      rw->root_var = sc_query_var_index(rw->q, g_ptr_array_index(lhs->names, lt->var));
  } else {
    rw->q = sc_query_new(lhs, requires, n_requires, &local);
  }
  if (!rw->q) {
    g_propagate_prefixed_error(error, local, "rewrite %s: ", name);
    sc_rewrite_free(rw);
    return NULL;
  }
  collect_ops(rw);
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
  g_free(rw->ops);
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

void sc_rewrite_set_pure(sc_rewrite *rw, gboolean pure) {
  rw->pure = pure;
}

gboolean sc_rewrite_is_incremental(const sc_rewrite *rw) {
  if (rw->q->lhs.root_op == SC_ID_NONE)
    return FALSE;
  /* a pure guard answers an old match as it did when the match was first
   * found, a pure applier builds the same terms: nothing to redo */
  if (rw->pure)
    return TRUE;
  return !rw->guard && !rw->applier && rw->q->n_req == 0;
}

gboolean sc_rewrite_ops_present(const sc_rewrite *rw, const sc_egraph *eg) {
  for (uint32_t i = 0; i < rw->n_ops; i++)
    if (sc_eg_op_slot(eg, rw->ops[i]) == SC_ID_NONE)
      return FALSE;
  return TRUE;
}

uint64_t sc_rewrite_search(const sc_rewrite *rw, const sc_egraph *eg,
                           uint64_t limit, GArray *out, uint32_t since) {
  return sc_rewrite_search_near(rw, eg, limit, out, since, NULL);
}

uint64_t sc_rewrite_search_near(const sc_rewrite *rw, const sc_egraph *eg,
                                uint64_t limit, GArray *out, uint32_t since,
                                const uint8_t *near) {
  if (!sc_rewrite_is_incremental(rw))
    since = 0;
  if (since > 0) {
    /* a new match binds a node stamped >= since, and its operator is one
     * of the patterns': none of them changed, nothing new to find */
    gboolean changed = FALSE;
    for (uint32_t i = 0; i < rw->n_ops && !changed; i++)
      changed = sc_eg_op_epoch(eg, rw->ops[i]) >= since;
    if (!changed)
      return 0;
  }
  if (rw->root_var != SC_ID_NONE) {
    guint w = sc_rewrite_match_width(rw, eg), start = out->len;
    uint64_t n = sc_query_search_near(rw->q, eg, limit, rw->guard, rw->guard_user, out, since,
                                      eg->proofs, near);
    uint32_t *m = (uint32_t *)(void *)out->data;
    for (guint j = start; j + w <= out->len; j += w)
      m[j] = m[j + 1 + rw->root_var]; /* the class of ?x is the root */
    return n;
  }
  return sc_query_search_near(rw->q, eg, limit, rw->guard, rw->guard_user,
                              out, since, eg->proofs, near);
}

uint32_t sc_rewrite_match_width(const sc_rewrite *rw, const sc_egraph *eg) {
  return 1 + sc_query_n_vars(rw->q) + (eg->proofs ? rw->q->lhs.n_binds : 0);
}

/* Proofs: the exact instance of the left side under a match, rebuilt from
 * the e-nodes its BINDs matched (BNODES, by bind_ix): each node's op and
 * attr over the instances of nested patterns and, at variables, the
 * node's children as matched (canonical at search time; nothing rewrites
 * them before the rebuild that follows the apply phase).  BINDs come in
 * preorder, so walking them backwards builds children first. */
static sc_id lhs_instance(const sc_rewrite *rw, sc_egraph *eg, sc_id root,
                          const uint32_t *bnodes) {
  const sc_program *p = &rw->q->lhs;
  if (p->n_binds == 0)
    return root; /* a bare ?x: the class itself */
  sc_id buf[32], kbuf[16];
  sc_id *inst = p->n_regs <= 32 ? buf : g_new(sc_id, p->n_regs);
  for (uint32_t r = 0; r < p->n_regs; r++)
    inst[r] = SC_ID_NONE;
  for (uint32_t pc = p->n_code; pc-- > 0;) {
    const sc_insn *in = &p->code[pc];
    if (in->kind != SC_I_BIND)
      continue;
    sc_id node = bnodes[in->bind_ix];
    const sc_id *k = sc_eg_kids(eg, node);
    sc_id *kk = in->arity <= 16 ? kbuf : g_new(sc_id, in->arity);
    for (uint32_t i = 0; i < in->arity; i++)
      kk[i] = inst[in->out + i] != SC_ID_NONE ? inst[in->out + i] : k[i];
    inst[in->reg] = sc_eg_exact_of(eg, node, kk);
    if (kk != kbuf)
      g_free(kk);
  }
  sc_id r = inst[0];
  if (inst != buf)
    g_free(inst);
  return r;
}

static gboolean apply(const sc_rewrite *rw, sc_egraph *eg, sc_id root,
                      sc_id lhs, const uint32_t *subst, uint32_t just) {
  if (rw->applier) {
    sc_id r = rw->applier(eg, root, subst, just, rw->applier_user);
    return r != SC_ID_NONE && sc_egraph_union(eg, lhs, r, just);
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
      cls[i] = sc_egraph_add_exact(eg, t->op, attrs[i], k, t->n_kids);
      if (k != kbuf)
        g_free(k);
    }
    changed = sc_egraph_union(eg, lhs, cls[rw->n_rhs - 1], just);
  }
  if (cls != buf)
    g_free(cls);
  if (attrs != abuf)
    g_free(attrs);
  return changed;
}

gboolean sc_rewrite_apply_one(const sc_rewrite *rw, sc_egraph *eg, sc_id root,
                              const uint32_t *subst, uint32_t just) {
  return apply(rw, eg, root, root, subst, just);
}

gboolean sc_rewrite_apply_match(const sc_rewrite *rw, sc_egraph *eg,
                                const uint32_t *match, uint32_t just) {
  const uint32_t *subst = match + 1;
  sc_id lhs = match[0];
  if (eg->proofs && rw->root_var == SC_ID_NONE)
    lhs = lhs_instance(rw, eg, match[0], subst + sc_query_n_vars(rw->q));
  return apply(rw, eg, match[0], lhs, subst, just);
}
