/* prove-oblig.c — the typing obligation of one run of the shape prover
 * (prove-private.h): both sides' shape rules on the run's symbolic types,
 * the sizes that rules compare to constants without asking made constant
 * where the path decides them, and the condition: wherever the left side
 * is well-typed and the condition YES, the right side is well-typed with
 * the same dtype and sizes (for <=> also read right to left).
 *
 * Invariant: a refusal that only says the method cannot go on (a
 * comparison undecided, a concrete integer wanted, a computed argument) is
 * never taken as ill-typed; a condition NO excludes a path only when its
 * negation is YES. */
#include "lemma/prove-private.h"

#include <string.h>

static uint32_t var_index(const ld_vars *vars, const char *name) {
  for (guint i = 0; i < vars->names->len; i++)
    if (strcmp(g_ptr_array_index(vars->names, i), name) == 0)
      return i;
  return UINT32_MAX;
}

gboolean sc_lp_run_lookup(void *env, const lx *ref, ev_val *out) {
  prun *P = env;
  if (ref->kind != LX_VAR)
    return FALSE;
  uint32_t v = var_index(&P->k->vars, ref->text);
  if (v == UINT32_MAX)
    return FALSE;
  if (g_array_index(P->k->vars.is_attr, gboolean, v)) {
    out->kind = EV_VALUE;
    out->v = &P->values[v];
  } else {
    out->kind = EV_TENSOR;
    out->type = &P->types[v];
  }
  return TRUE;
}

static const sc_ttype *scratch_type(void *env, sc_id i) {
  GArray *a = env;
  return i < a->len ? &g_array_index(a, sc_ttype, i) : NULL;
}

/* D becomes the constant C when the path makes it equal to C. */
static void canon(prun *P, sc_dim *d, int64_t c) {
  if (sc_dim_is_const(*d))
    return;
  if (sc_dim_eq(P->st, *d, sc_dim_const(c)) == SC_YES)
    *d = sc_dim_const(c);
}

/* The sizes that shape rules compare to constants without asking the
 * symtab (sc_dim_is_const tests): a broadcast or expanded size of 1, a
 * size -1 in a size list.  Among several tensor operands, a size not
 * identical to the others at its position (counted from the right) may
 * broadcast; an expand's operand may be expanded anywhere. */
static void canonicalize(prun *P, const sc_op *op, GArray *tys, sc_value *args) {
  if (P->concrete)
    return;
  /* cats and stacks compare sizes without broadcasting: not split */
  static const char *const joins[] = {"cat", "_cat", "cat_copy", "concat", "concatenate",
                                      "stack", "hstack", "vstack", "dstack"};
  gboolean join = FALSE;
  for (guint j = 0; j < G_N_ELEMENTS(joins); j++)
    if (strcmp(op->name, joins[j]) == 0)
      join = TRUE;
  if (tys->len >= 2 && !join) {
    uint32_t maxr = 0;
    for (guint j = 0; j < tys->len; j++)
      maxr = MAX(maxr, g_array_index(tys, sc_ttype, j).shape.rank);
    for (uint32_t i = 0; i < maxr; i++) {
      gboolean same = TRUE, have = FALSE;
      sc_dim first = sc_dim_const(1);
      for (guint j = 0; j < tys->len; j++) {
        const sc_shape *s = &g_array_index(tys, sc_ttype, j).shape;
        sc_dim d = i < s->rank ? s->dims[s->rank - 1 - i] : sc_dim_const(1);
        if (!have) {
          first = d;
          have = TRUE;
        } else if (!sc_dim_identical(first, d)) {
          same = FALSE;
        }
      }
      if (same)
        continue;
      for (guint j = 0; j < tys->len; j++) {
        sc_shape *s = &g_array_index(tys, sc_ttype, j).shape;
        if (i < s->rank)
          canon(P, &s->dims[s->rank - 1 - i], 1);
      }
    }
  } else if (tys->len == 1 &&
             (g_str_has_prefix(op->name, "expand") || g_str_has_prefix(op->name, "broadcast_to") ||
              g_str_has_prefix(op->name, "sum_to_size"))) {
    sc_shape *s = &g_array_index(tys, sc_ttype, 0).shape;
    for (uint32_t i = 0; i < s->rank; i++)
      canon(P, &s->dims[i], 1);
  }
  for (uint32_t a = 0; a < op->n_args; a++) {
    if (args[a].kind == SC_VAL_INT_LIST)
      for (uint32_t j = 0; j < args[a].u.ints.n; j++)
        canon(P, &args[a].u.ints.v[j], -1);
    else if (args[a].kind == SC_VAL_INT && strcmp(op->args[a].name, "num_classes") == 0)
      canon(P, &args[a].u.i, -1);
  }
}

/* The type of P under the run; FALSE with *CODE (an sc_ops_error, or -1:
 * a computed argument) and *MSG when refused.  Stops early once the run
 * has a branch or is stuck. */
gboolean sc_lp_infer(prun *P, const pnode *p, sc_ttype *out, int *code, char **msg) {
  if (p->is_var) {
    *out = P->types[p->var];
    return TRUE;
  }
  const sc_op *op = p->op;
  GArray *tys = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
  for (uint32_t i = 0; i < p->n_kids; i++) {
    sc_ttype t;
    if (!sc_lp_infer(P, p->kids[i], &t, code, msg)) {
      g_array_free(tys, TRUE);
      return FALSE;
    }
    g_array_append_val(tys, t);
  }
  sc_value *args = g_new0(sc_value, op->n_args ? op->n_args : 1);
  ev_env env = {P->st, sc_lp_run_lookup, P};
  gboolean ok = pn_call_args(p, P->values, &env, NULL, args, msg);
  if (!ok)
    *code = -1;
  if (ok && P->branch == NULL && P->stuck == NULL) {
    canonicalize(P, op, tys, args);
    sc_op_call call = {op, args, scratch_type, tys, P->st};
    GArray *res = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
    GError *err = NULL;
    if (!sc_ops_infer(&call, res, &err)) {
      *code = err ? err->code : SC_OPS_ERROR_SHAPE;
      *msg = g_strdup_printf("%s: %s", op->qualname, err ? err->message : "refused");
      ok = FALSE;
    } else if (p->result >= res->len) {
      *code = SC_OPS_ERROR_SHAPE;
      *msg = g_strdup_printf("%s has no result %u here", op->qualname, p->result);
      ok = FALSE;
    } else {
      *out = g_array_index(res, sc_ttype, p->result);
    }
    g_clear_error(&err);
    g_array_free(res, TRUE);
  } else if (ok) {
    *code = SC_OPS_ERROR_UNDECIDED;
    *msg = g_strdup("(replayed)");
    ok = FALSE;
  }
  for (uint32_t a = 0; a < op->n_args; a++)
    sc_value_clear(&args[a]);
  g_free(args);
  g_array_free(tys, TRUE);
  return ok;
}

/* A refusal the method cannot take as "ill-typed": a comparison left
 * undecided, a rule that wants a concrete integer, a computed argument. */
gboolean sc_lp_refusal_is_method(int code, const char *msg) {
  return code == SC_OPS_ERROR_UNDECIDED || code == -1 || strstr(msg, "concrete") != NULL ||
         strstr(msg, "cannot decide") != NULL;
}

static pres stuck_or_branch(prun *P, int code, const char *msg) {
  if (P->branch)
    return PR_BRANCH;
  if (P->stuck == NULL)
    P->stuck = g_strdup(msg);
  (void)code;
  return PR_STUCK;
}

char *sc_lp_type_text(const sc_ttype *t) {
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s%s", sc_dtype_name(t->dtype), s);
}

/* The condition of the run: the whole of it in a concrete (witness) run,
 * else without the conjuncts that read a Scalar (prove-vars.c). */
static const lx *run_where(const prun *P) {
  return P->concrete ? P->k->where : P->where_sym;
}

/* Is COND NO under the run, with its negation YES? */
gboolean sc_lp_cond_excludes(prun *P, const lx *cond) {
  ev_env env = {P->st, sc_lp_run_lookup, P};
  if (ev_condition(&env, cond) != SC_NO || P->branch || P->stuck)
    return FALSE;
  lx notn;
  memset(&notn, 0, sizeof notn);
  lx *kid = (lx *)cond;
  notn.kind = LX_NOT;
  notn.n = 1;
  notn.kids = &kid;
  return ev_condition(&env, &notn) == SC_YES;
}

/* The obligation on the current run (symtab, types, values made). */
pres sc_lp_obligation(prun *P, char **why) {
  const ld_checked *k = P->k;
  gboolean both = k->dir == SC_LEMMA_BOTH;
  sc_ttype lt, rt;
  int lcode = 0, rcode = 0;
  g_autofree char *lmsg = NULL, *rmsg = NULL;
  /* The condition first, as a filter only: a path where it is NO (and its
   * negation YES, so that NO is not an evaluation failure) is excluded
   * before the sides split it further; any other answer goes on, and the
   * condition is asked again once the sides are typed. */
  const lx *where = run_where(P);
  if (where && sc_lp_cond_excludes(P, where))
    return PR_VACUOUS;
  if (P->branch || P->stuck)
    return stuck_or_branch(P, 0, "");
  gboolean lok = sc_lp_infer(P, k->lhs, &lt, &lcode, &lmsg);
  if (P->branch || P->stuck)
    return stuck_or_branch(P, lcode, lmsg ? lmsg : "");
  if (!lok && sc_lp_refusal_is_method(lcode, lmsg))
    return stuck_or_branch(P, lcode, lmsg);
  if (!lok && !both)
    return PR_VACUOUS;
  gboolean rok = sc_lp_infer(P, k->rhs, &rt, &rcode, &rmsg);
  if (P->branch || P->stuck)
    return stuck_or_branch(P, rcode, rmsg ? rmsg : "");
  if (!rok && sc_lp_refusal_is_method(rcode, rmsg))
    return stuck_or_branch(P, rcode, rmsg);
  if (!lok && !rok)
    return PR_VACUOUS;
  if (where) {
    ev_env env = {P->st, sc_lp_run_lookup, P};
    sc_truth c = ev_condition(&env, where);
    if (P->branch || P->stuck)
      return stuck_or_branch(P, 0, "");
    if (c == SC_NO) {
      /* NO is also what an evaluation failure gives (a value the symbolic
       * instance cannot stand for): only a condition whose negation is YES
       * excludes the path */
      lx notn;
      memset(&notn, 0, sizeof notn);
      lx *kid = (lx *)where;
      notn.kind = LX_NOT;
      notn.n = 1;
      notn.kids = &kid;
      notn.start = where->start;
      notn.end = where->end;
      sc_truth nc = ev_condition(&env, &notn);
      if (P->branch || P->stuck)
        return stuck_or_branch(P, 0, "");
      if (nc == SC_YES)
        return PR_VACUOUS;
      P->stuck = g_strdup("the condition cannot be evaluated on symbolic sizes");
      return PR_STUCK;
    }
    if (c == SC_UNKNOWN) {
      g_autofree char *u = ev_undecided_text(&env, where);
      P->stuck = g_strdup_printf("the condition is undecided (%s)", u ? u : "not integer");
      return PR_STUCK;
    }
  }
  for (guint i = 0; i < k->requires->len; i++) {
    sc_ttype qt;
    int qcode = 0;
    g_autofree char *qmsg = NULL;
    gboolean qok = sc_lp_infer(P, g_ptr_array_index(k->requires, i), &qt, &qcode, &qmsg);
    if (P->branch || P->stuck)
      return stuck_or_branch(P, qcode, qmsg ? qmsg : "");
    if (!qok && sc_lp_refusal_is_method(qcode, qmsg))
      return stuck_or_branch(P, qcode, qmsg);
    if (!qok)
      return PR_VACUOUS;
  }
  if (lok && !rok) {
    g_autofree char *l = sc_lp_type_text(&lt);
    *why = g_strdup_printf("the left side is %s but the right side is ill-typed: %s", l, rmsg);
    return PR_BAD;
  }
  if (!lok) {
    g_autofree char *r = sc_lp_type_text(&rt);
    *why = g_strdup_printf("read right to left: the right side is %s but the left side is "
                           "ill-typed: %s",
                           r, lmsg);
    return PR_BAD;
  }
  gboolean same = lt.dtype == rt.dtype && lt.shape.rank == rt.shape.rank;
  for (uint32_t i = 0; same && i < lt.shape.rank; i++) {
    sc_dim a = lt.shape.dims[i], b = rt.shape.dims[i];
    sc_truth t = P->concrete ? (sc_dim_identical(a, b) ? SC_YES : SC_NO) : sc_dim_eq(P->st, a, b);
    if (P->branch || P->stuck)
      return stuck_or_branch(P, 0, "");
    if (t == SC_UNKNOWN) {
      g_autofree char *sa = sc_dim_to_string(P->st, a), *sb = sc_dim_to_string(P->st, b);
      P->stuck = g_strdup_printf("the sizes %s and %s are neither provably equal nor different",
                                 sa, sb);
      return PR_STUCK;
    }
    same = t == SC_YES;
  }
  if (!same) {
    g_autofree char *l = sc_lp_type_text(&lt), *r = sc_lp_type_text(&rt);
    *why = g_strdup_printf("the left side is %s and the right side is %s", l, r);
    return PR_BAD;
  }
  return PR_OK;
}

