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
 * that class instead of scanning the op index.  Backtracking is recursion
 * over the program counter (depth = program length).  Invariant: registers
 * and substitution entries hold canonical class ids, because every live
 * node's children are canonical in a clean e-graph. */
#include "pattern-private.h"
#include "egraph-private.h"

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
  const uint32_t *stamp, *cstamp;
  uint32_t since; /* matches must bind a node stamped >= since (0: all) */
  uint32_t *bnodes; /* record_nodes: the e-node of each lhs BIND */
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
static gboolean run(vm *m, uint32_t stage, const sc_program *p, uint32_t pc,
                    gboolean fresh) {
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
  return !(m->limit && m->count >= m->limit);
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
  uint32_t n_stage = q->n_req + 1;
  m.regs = g_new(uint32_t *, n_stage);
  m.regs[0] = g_new0(uint32_t, q->lhs.n_regs);
  for (uint32_t i = 0; i < q->n_req; i++)
    m.regs[i + 1] = g_new0(uint32_t, q->req[i].n_regs);
  m.subst = g_new0(uint32_t, q->var_names->len ? q->var_names->len : 1);
  m.bnodes = record_nodes ? g_new0(uint32_t, q->lhs.n_binds + 1) : NULL;

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
    uint32_t n_cls;
    const sc_id *cls = sc_egraph_classes_with_op(eg, q->lhs.root_op, &n_cls);
    for (uint32_t i = 0; i < n_cls; i++) {
      m.root = cls[i];
      m.regs[0][0] = cls[i];
      if (!run_stage(&m, 0, since == 0))
        break;
    }
  }
  for (uint32_t i = 0; i < n_stage; i++)
    g_free(m.regs[i]);
  g_free(m.regs);
  g_free(m.subst);
  g_free(m.bnodes);
  return m.count;
}
