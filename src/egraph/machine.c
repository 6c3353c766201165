/* machine.c — the matching machine: runs a query's programs over a clean
 * e-graph (egg's machine.rs, with requires stages chained after the lhs).
 *
 * Search visits only the classes of the op index for the lhs root operator
 * (all classes when the lhs is a bare variable).  Each BIND walks the
 * sub-range of a class's sorted node list that has its operator, so the
 * cost of a failing BIND is a binary search, or one test of the class's
 * operator mask (egraph-private.h: op mod 64 of every node it has had)
 * when that lacks the operator.  A requires stage whose root
 * has a child variable bound by an earlier stage starts from the parents of
 * that class instead of scanning the op index; one whose bound variable
 * sits deeper runs on the classes found by walking up the parent lists
 * along the operators of the path (path_roots).  Backtracking is recursion
 * over the program counter (depth = program length).  Invariant: registers
 * and substitution entries hold canonical class ids, because every live
 * node's children are canonical in a clean e-graph. */
#include "pattern-private.h"
#include "egraph-private.h"

#include <string.h>

typedef struct {
  const sc_egraph *eg;
  const sc_query *q;
  uint32_t **regs;   /* one register file per program: [0] lhs, [1+i] req */
  uint32_t *subst;
  uint32_t root;
  sc_guard_fn guard;
  void *guard_user;
  GArray *out;
  uint64_t limit, count;
  uint64_t steps;   /* run() calls: the search's work (the budget's poll) */
  gboolean stopped; /* the overall budget is spent: unwind */
  const uint32_t *stamp, *cstamp;
  uint32_t since; /* matches must bind a node stamped >= since (0: all) */
  uint32_t *bnodes; /* record_nodes: the e-node of each lhs BIND */
  sc_vec *cand;     /* per stage: candidate roots of a path-driven stage */
  sc_vec walk;      /* scratch of the walk up a path */
} vm;

static gboolean run_stage(vm *m, uint32_t stage, gboolean fresh);

static inline gboolean bind_node(vm *m, const sc_insn *in, uint32_t *regs,
                                 sc_id n) {
  const sc_egraph *eg = m->eg;
  if (eg->node[n].arity != in->arity)
    return FALSE;
  uint32_t a = eg->node[n].attr;
  switch (in->akind) {
  case SC_A_ANY:
    break;
  case SC_A_EXACT:
    if (a != in->aval)
      return FALSE;
    break;
  case SC_A_VAR_BIND:
    m->subst[in->aval] = a;
    break;
  case SC_A_VAR_CHECK:
    if (m->subst[in->aval] != a)
      return FALSE;
    break;
  case SC_A_PRED:
    if (!in->pred(a, in->pred_user))
      return FALSE;
    break;
  }
  const sc_id *k = sc_eg_kids(eg, n);
  for (uint32_t i = 0; i < in->arity; i++)
    regs[in->out + i] = k[i];
  return TRUE;
}

/* Returns FALSE when the match limit is reached (stop everything). */
/* The overall budget, every SC_EG_BUDGET_STEPS calls of run(): a search
 * that tries many candidates and matches few (a join that fails late)
 * does all its work between two matches.  FALSE once spent. */
static gboolean within_budget(vm *m) {
  if (m->stopped)
    return FALSE;
  if (++m->steps % SC_EG_BUDGET_STEPS != 0 || m->eg->budget == NULL)
    return TRUE;
  m->stopped = sc_budget_check(m->eg->budget, m->eg->memo_count) != NULL;
  return !m->stopped;
}

static gboolean run(vm *m, uint32_t stage, const sc_program *p, uint32_t pc,
                    gboolean fresh) {
  if (!within_budget(m))
    return FALSE;
  uint32_t *regs = m->regs[stage];
  for (;;) {
    const sc_insn *in = &p->code[pc];
    switch (in->kind) {
    case SC_I_BIND: {
      /* semi-naive: nothing fresh can be bound from here on (in the
       * last stage only: a requires stage after this one may still bind
       * a fresh node) */
      if (!fresh && in->last_bind && stage == m->q->n_req &&
          m->cstamp[regs[in->reg]] < m->since)
        return TRUE;
      if (!(m->eg->opmask[regs[in->reg]] & sc_eg_op_bit(in->op)))
        return TRUE; /* no node of the op in the class */
      const sc_vec *v = &m->eg->nodes[regs[in->reg]];
      const sc_id *ids = v->v;
      const sc_node *nd = m->eg->node;
      uint32_t lo = 0, hi = v->len;
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (nd[ids[mid]].op < in->op)
          lo = mid + 1;
        else
          hi = mid;
      }
      for (uint32_t i = lo; i < v->len && nd[ids[i]].op == in->op; i++) {
        if (!bind_node(m, in, regs, ids[i]))
          continue;
        if (m->bnodes && stage == 0)
          m->bnodes[in->bind_ix] = ids[i];
        if (!run(m, stage, p, pc + 1, fresh || m->stamp[ids[i]] >= m->since))
          return FALSE;
      }
      return TRUE;
    }
    case SC_I_CHECK:
      if (regs[in->reg] != m->subst[in->var])
        return TRUE;
      pc++;
      break;
    case SC_I_BIND_VAR:
      m->subst[in->var] = regs[in->reg];
      pc++;
      break;
    case SC_I_YIELD:
      return run_stage(m, stage + 1, fresh);
    }
  }
}

static gboolean emit(vm *m, gboolean fresh) {
  if (!fresh)
    return TRUE; /* every node matched is older than the last search */
  if (m->guard && !m->guard(m->eg, m->root, m->subst, m->guard_user))
    return TRUE;
  g_array_append_val(m->out, m->root);
  g_array_append_vals(m->out, m->subst, m->q->var_names->len);
  if (m->bnodes)
    g_array_append_vals(m->out, m->bnodes, m->q->lhs.n_binds);
  m->count++;
  if (m->limit && m->count >= m->limit)
    return FALSE;
  /* the overall budget (memory above all): the matches of one search can
   * outgrow it long before they are applied */
  if (m->count % SC_EG_BUDGET_MATCHES == 0 && m->eg->budget != NULL &&
      sc_budget_check(m->eg->budget, m->eg->memo_count) != NULL)
    return FALSE;
  return TRUE;
}

static int cmp_id(const void *a, const void *b) {
  sc_id x = *(const sc_id *)a, y = *(const sc_id *)b;
  return (x > y) - (x < y);
}

/* Sorts V and drops repeats. */
static void sort_unique(sc_vec *v) {
  if (v->len < 2)
    return;
  qsort(v->v, v->len, sizeof(sc_id), cmp_id);
  uint32_t w = 1;
  for (uint32_t i = 1; i < v->len; i++)
    if (v->v[i] != v->v[w - 1])
      v->v[w++] = v->v[i];
  v->len = w;
}

/* The candidate root classes of a path-driven requires stage: from the
 * class of the bound variable up the parent lists, through a node of each
 * operator of the path at the path's child position.  Every class where
 * the program can match is among them (a match's nodes along the path are
 * live, and a live node is in the parent list of each child class), so
 * running the program on them, in increasing order, finds the matches a
 * scan of the root op's classes (also in increasing order) finds, in the
 * same order. */
static const sc_vec *path_roots(vm *m, uint32_t stage, const sc_program *p) {
  const sc_egraph *eg = m->eg;
  sc_vec *cur = &m->cand[stage], *next = &m->walk;
  cur->len = 0;
  sc_vec_push(cur, m->subst[p->path_var]);
  for (uint32_t k = p->path_len; k-- > 0 && cur->len;) {
    uint32_t op = p->path_op[k], pos = p->path_pos[k];
    next->len = 0;
    for (uint32_t j = 0; j < cur->len; j++) {
      sc_id c = cur->v[j];
      const sc_vec *pv = &eg->parents[c];
      for (uint32_t i = 0; i < pv->len; i++) {
        sc_id n = pv->v[i];
        if (eg->live[n] && eg->node[n].op == op && eg->node[n].arity > pos &&
            sc_eg_kids(eg, n)[pos] == c)
          sc_vec_push(next, sc_egraph_find_const(eg, n));
      }
    }
    sort_unique(next);
    sc_vec t = *cur;
    *cur = *next;
    *next = t;
  }
  return cur;
}

static gboolean run_stage(vm *m, uint32_t stage, gboolean fresh) {
  if (stage == 0)
    return run(m, 0, &m->q->lhs, 0, fresh);
  if (stage > m->q->n_req)
    return emit(m, fresh);
  const sc_program *p = &m->q->req[stage - 1];
  uint32_t *regs = m->regs[stage];
  const sc_egraph *eg = m->eg;
  if (p->driver_var != SC_ID_NONE) {
    sc_id c = m->subst[p->driver_var];
    const sc_vec *pv = &eg->parents[c];
    for (uint32_t i = 0; i < pv->len; i++) {
      sc_id n = pv->v[i];
      if (!eg->live[n] || eg->node[n].op != p->root_op ||
          eg->node[n].arity <= p->driver_pos ||
          sc_eg_kids(eg, n)[p->driver_pos] != c)
        continue;
      regs[0] = sc_egraph_find_const(eg, n);
      if (bind_node(m, &p->code[0], regs, n) &&
          !run(m, stage, p, 1, fresh || m->stamp[n] >= m->since))
        return FALSE;
    }
    return TRUE;
  }
  if (p->path_len) {
    const sc_vec *cand = path_roots(m, stage, p);
    for (uint32_t i = 0; i < cand->len; i++) {
      regs[0] = cand->v[i];
      if (!run(m, stage, p, 0, fresh))
        return FALSE;
    }
    return TRUE;
  }
  uint32_t n_cls;
  const sc_id *cls = sc_egraph_classes_with_op(eg, p->root_op, &n_cls);
  for (uint32_t i = 0; i < n_cls; i++) {
    regs[0] = cls[i];
    if (!run(m, stage, p, 0, fresh))
      return FALSE;
  }
  return TRUE;
}

uint64_t sc_query_search(const sc_query *q, const sc_egraph *eg,
                         uint64_t limit, sc_guard_fn guard, void *guard_user,
                         GArray *out) {
  return sc_query_search_since(q, eg, limit, guard, guard_user, out, 0, FALSE);
}

uint64_t sc_query_search_since(const sc_query *q, const sc_egraph *eg,
                               uint64_t limit, sc_guard_fn guard,
                               void *guard_user, GArray *out, uint32_t since,
                               gboolean record_nodes) {
  return sc_query_search_near(q, eg, limit, guard, guard_user, out, since, record_nodes, NULL);
}

uint64_t sc_query_search_near(const sc_query *q, const sc_egraph *eg,
                              uint64_t limit, sc_guard_fn guard,
                              void *guard_user, GArray *out, uint32_t since,
                              gboolean record_nodes, const uint8_t *near) {
  g_return_val_if_fail(eg->clean, 0);
  g_return_val_if_fail(g_array_get_element_size(out) == sizeof(uint32_t), 0);
  vm m = {0};
  m.eg = eg;
  m.q = q;
  m.guard = guard;
  m.guard_user = guard_user;
  m.out = out;
  m.limit = limit;
  m.stamp = eg->stamp;
  m.cstamp = eg->cstamp;
  m.since = since;
  /* every register file, the substitution and the recorded nodes in one
   * block, on the stack when small (a search runs for every rule in every
   * iteration: most find nothing, and four allocations cost more than
   * their search) */
  uint32_t n_stage = q->n_req + 1;
  uint32_t n_vars = q->var_names->len ? q->var_names->len : 1;
  size_t words = q->lhs.n_regs + n_vars + (record_nodes ? q->lhs.n_binds + 1 : 0);
  for (uint32_t i = 0; i < q->n_req; i++)
    words += q->req[i].n_regs;
  uint32_t *regs_buf[8];
  uint32_t word_buf[256];
  uint32_t **regs = n_stage <= G_N_ELEMENTS(regs_buf) ? regs_buf : g_new(uint32_t *, n_stage);
  uint32_t *words_p = words <= G_N_ELEMENTS(word_buf) ? word_buf : g_new(uint32_t, words);
  memset(words_p, 0, words * sizeof(uint32_t));
  uint32_t *w = words_p;
  regs[0] = w;
  w += q->lhs.n_regs;
  for (uint32_t i = 0; i < q->n_req; i++) {
    regs[i + 1] = w;
    w += q->req[i].n_regs;
  }
  m.regs = regs;
  m.subst = w;
  w += n_vars;
  m.bnodes = record_nodes ? w : NULL;
  sc_vec cand_buf[8];
  gboolean paths = FALSE;
  for (uint32_t i = 0; i < q->n_req; i++)
    paths = paths || q->req[i].path_len > 0;
  m.cand = NULL;
  if (paths) {
    m.cand = n_stage <= G_N_ELEMENTS(cand_buf) ? cand_buf : g_new(sc_vec, n_stage);
    memset(m.cand, 0, n_stage * sizeof(sc_vec));
  }

  if (q->lhs.root_op == SC_ID_NONE) {
    for (sc_id c = 0; c < eg->n_ids; c++) {
      if (eg->uf[c] != c)
        continue;
      m.root = c;
      m.regs[0][0] = c;
      if (!run_stage(&m, 0, since == 0))
        break;
    }
  } else {
    /* semi-naive, no requires: a new match binds a changed e-node, in a
     * class at most n_levels - 1 child edges below its root */
    gboolean cone = near != NULL && since > 0 && q->n_req == 0 &&
                    q->lhs.n_levels >= 1 && q->lhs.n_levels - 1 <= SC_NEAR_MAX;
    uint32_t reach = q->lhs.n_levels - 1;
    uint32_t n_cls;
    const sc_id *cls = sc_egraph_classes_with_op(eg, q->lhs.root_op, &n_cls);
    for (uint32_t i = 0; i < n_cls; i++) {
      if (cone && near[cls[i]] > reach)
        continue;
      m.root = cls[i];
      m.regs[0][0] = cls[i];
      if (!run_stage(&m, 0, since == 0))
        break;
    }
  }
  if (m.cand) {
    for (uint32_t i = 0; i < n_stage; i++)
      sc_vec_clear(&m.cand[i]);
    sc_vec_clear(&m.walk);
    if (m.cand != cand_buf)
      g_free(m.cand);
  }
  if (regs != regs_buf)
    g_free(regs);
  if (words_p != word_buf)
    g_free(words_p);
  return m.count;
}
