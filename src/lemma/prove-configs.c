/* prove-configs.c — the configurations of a lemma for the shape prover
 * (prove-private.h), enumerated with static pruning.
 *
 * A configuration is a digit per variable and the dtype; the blind product
 * of them is mostly vacuous (a cat of a rank-1 and a rank-2 tensor, a dim
 * out of range, `0 <= ?d` with ?d = -1).  A *unit* is a part of the lemma
 * whose failure makes every path of a configuration vacuous:
 *   - a top-level conjunct of the symbolic condition (k->where without its
 *     Scalar conjuncts), when it is NO and its negation YES;
 *   - a node of a requires, or of the left side of a => lemma, when its
 *     shape rule refuses it for a reason other than the method's (not a
 *     comparison left undecided, not a concrete integer wanted).
 * A unit is judged once per assignment of the digits of the variables it
 * reads (and of the dtype when it reads a tensor), on an empty path with
 * the normal form alone (prove-path.c, sc_lp_static_vacuous): a verdict
 * there holds for every size, and since a unit's meaning is a function of
 * its own variables, for every configuration that agrees on them.  Such
 * a configuration is not run: PR_VACUOUS on every path is all it could
 * give.
 *
 * The odometer orders the variables so that those of small units change
 * slowest (the dtype slowest of all); a configuration that a unit prunes
 * skips, in one step, every configuration that agrees with it on the
 * unit's digits (the digits below the unit's lowest position set to 0, the
 * one there incremented).  The budget counts configurations visited
 * (pruned one by one or run), not those skipped in bulk.
 *
 * Invariant: a configuration is skipped only when a unit's verdict,
 * computed on that configuration's own digits, is vacuous. */
#include "lemma/prove-private.h"

#include <string.h>

#define UNIT_TABLE_MAX (1u << 20) /* a unit's digit space memoised in full */

typedef struct {
  const lx *cond;    /* a conjunct, or NULL */
  const pnode *term; /* a node, or NULL */
  uint32_t *vars;    /* the variables it reads (ascending) */
  uint32_t n_vars;
  gboolean dtype;    /* it reads a tensor: the dtype digit too */
  uint32_t low;      /* its lowest odometer position */
  uint32_t space;    /* the number of its digit assignments */
  uint8_t *memo;     /* per assignment: 0 not judged, 1 live, 2 vacuous */
  uint32_t seq;      /* order of making (ties of the sort) */
} cunit;

struct lp_prune {
  GArray *units;   /* cunit */
  uint32_t *order; /* odometer position -> variable (nv: the dtype) */
  uint32_t *pos;   /* variable -> position */
};

static void add_unit(prun *P, lp_prune *pr, const lx *cond, const pnode *term) {
  uint32_t nv = P->nv;
  g_autofree gboolean *seen = g_new0(gboolean, nv ? nv : 1);
  if (cond)
    lx_vars(cond, &P->k->vars, seen);
  else
    pn_vars(term, &P->k->vars, TRUE, seen);
  cunit u = {cond, term, g_new0(uint32_t, nv ? nv : 1), 0, FALSE, 0, 1, NULL, pr->units->len};
  uint64_t space = 1;
  for (uint32_t v = 0; v < nv; v++) {
    if (!seen[v])
      continue;
    u.vars[u.n_vars++] = v;
    u.dtype |= P->plan[v].kind == VK_TENSOR && !P->mixed;
    space *= P->plan[v].n;
    if (space > UNIT_TABLE_MAX)
      break;
  }
  if (u.dtype)
    space *= SC_DTYPE_COUNT;
  if (space > UNIT_TABLE_MAX) {
    g_free(u.vars); /* too many assignments to remember: not a unit */
    return;
  }
  u.space = (uint32_t)space;
  g_array_append_val(pr->units, u);
}

static void flatten_and(prun *P, lp_prune *pr, const lx *e) {
  if (e == NULL)
    return;
  if (e->kind == LX_AND) {
    for (uint32_t i = 0; i < e->n; i++)
      flatten_and(P, pr, e->kids[i]);
    return;
  }
  add_unit(P, pr, e, NULL);
}

static void add_terms(prun *P, lp_prune *pr, const pnode *p) {
  if (p->is_var)
    return;
  for (uint32_t i = 0; i < p->n_kids; i++)
    add_terms(P, pr, p->kids[i]);
  add_unit(P, pr, NULL, p);
}

static gint by_low_desc(gconstpointer a, gconstpointer b) {
  const cunit *x = a, *y = b;
  if (x->low != y->low)
    return x->low > y->low ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : 0;
}

/* Positions: variables in no unit change fastest, then those whose
 * smallest unit is largest; the dtype slowest. */
static void order_vars(prun *P, lp_prune *pr) {
  uint32_t nv = P->nv;
  g_autofree uint32_t *score = g_new(uint32_t, nv ? nv : 1);
  for (uint32_t v = 0; v < nv; v++)
    score[v] = UINT32_MAX;
  for (guint i = 0; i < pr->units->len; i++) {
    const cunit *u = &g_array_index(pr->units, cunit, i);
    for (uint32_t j = 0; j < u->n_vars; j++)
      score[u->vars[j]] = MIN(score[u->vars[j]], u->n_vars);
  }
  uint32_t n = 0;
  /* descending score, ties by index: a stable selection */
  gboolean *placed = g_new0(gboolean, nv ? nv : 1);
  while (n < nv) {
    uint32_t best = UINT32_MAX;
    for (uint32_t v = 0; v < nv; v++)
      if (!placed[v] && (best == UINT32_MAX || score[v] > score[best]))
        best = v;
    placed[best] = TRUE;
    pr->order[n++] = best;
  }
  g_free(placed);
  pr->order[nv] = nv;
  for (uint32_t p = 0; p <= nv; p++)
    pr->pos[pr->order[p]] = p;
  for (guint i = 0; i < pr->units->len; i++) {
    cunit *u = &g_array_index(pr->units, cunit, i);
    u->low = u->dtype ? nv : UINT32_MAX;
    for (uint32_t j = 0; j < u->n_vars; j++)
      u->low = MIN(u->low, pr->pos[u->vars[j]]);
    if (u->low == UINT32_MAX)
      u->low = nv; /* reads no variable: constant, any position is right */
  }
  /* a unit at position 0 prunes its own configuration only, at the cost
   * of a run: dropped; the others by lowest position, highest first (the
   * first one vacuous prunes most) */
  guint w = 0;
  for (guint i = 0; i < pr->units->len; i++) {
    cunit u = g_array_index(pr->units, cunit, i);
    if (u.low == 0 && nv > 0) {
      g_free(u.vars);
      continue;
    }
    g_array_index(pr->units, cunit, w++) = u;
  }
  g_array_set_size(pr->units, w);
  g_array_sort(pr->units, by_low_desc);
}

lp_prune *sc_lp_prune_new(prun *P) {
  lp_prune *pr = g_new0(lp_prune, 1);
  pr->units = g_array_new(FALSE, FALSE, sizeof(cunit));
  pr->order = g_new0(uint32_t, P->nv + 1);
  pr->pos = g_new0(uint32_t, P->nv + 1);
  flatten_and(P, pr, P->where_sym);
  for (guint i = 0; i < P->k->requires->len; i++)
    add_terms(P, pr, g_ptr_array_index(P->k->requires, i));
  if (P->k->dir != SC_LEMMA_BOTH)
    add_terms(P, pr, P->k->lhs);
  order_vars(P, pr);
  return pr;
}

void sc_lp_prune_free(lp_prune *pr) {
  if (pr == NULL)
    return;
  for (guint i = 0; i < pr->units->len; i++) {
    cunit *u = &g_array_index(pr->units, cunit, i);
    g_free(u->vars);
    g_free(u->memo);
  }
  g_array_free(pr->units, TRUE);
  g_free(pr->order);
  g_free(pr->pos);
  g_free(pr);
}

/* Is unit U vacuous under P's digits?  Judged once per assignment. */
static gboolean unit_vacuous(prun *P, cunit *u) {
  uint64_t idx = 0;
  for (uint32_t j = 0; j < u->n_vars; j++)
    idx = idx * P->plan[u->vars[j]].n + P->digit[u->vars[j]];
  if (u->dtype)
    idx = idx * SC_DTYPE_COUNT + P->digit[P->nv];
  if (u->memo == NULL)
    u->memo = g_new0(uint8_t, u->space);
  if (u->memo[idx] == 0)
    u->memo[idx] = sc_lp_static_vacuous(P, u->cond, u->term) ? 2 : 1;
  return u->memo[idx] == 2;
}

/* Every configuration of the lemma of P, until one stops: those a unit
 * prunes are skipped, the others run (prove-path.c). */
void sc_lp_run_configs(prun *P, lp_prune *pr, const sc_lemprove_options *o,
                       sc_lemprove_result *r) {
  uint32_t np = P->nv + 1;
  uint32_t *digit = (uint32_t *)P->digit;
  g_autofree uint32_t *dp = g_new0(uint32_t, np);
  g_autofree uint32_t *radix = g_new0(uint32_t, np);
  for (uint32_t p = 0; p < np; p++)
    radix[p] = pr->order[p] == P->nv ? sc_lp_dtype_radix(P) : P->plan[pr->order[p]].n;
  uint64_t visits = 0;
  for (;;) {
    for (uint32_t p = 0; p < np; p++)
      digit[pr->order[p]] = dp[p];
    if (++visits > o->max_configs) {
      r->status = SC_LEMPROVE_NOT_PROVABLE;
      r->why = g_strdup_printf("more than %u configurations visited at rank <= %u (budget)",
                               o->max_configs, P->R);
      return;
    }
    /* the first unit vacuous prunes most (highest lowest position) */
    uint32_t skip_at = UINT32_MAX;
    for (guint i = 0; i < pr->units->len && skip_at == UINT32_MAX; i++) {
      cunit *u = &g_array_index(pr->units, cunit, i);
      if (unit_vacuous(P, u))
        skip_at = u->low;
    }
    if (skip_at == UINT32_MAX) {
      r->configs++;
      if (!sc_lp_prove_config(P, o, r))
        return;
      skip_at = 0;
    }
    /* advance at SKIP_AT: the digits below it back to 0 */
    for (uint32_t p = 0; p < skip_at; p++)
      dp[p] = 0;
    uint32_t p = skip_at;
    while (p < np && ++dp[p] == radix[p])
      dp[p++] = 0;
    if (p == np)
      return;
  }
}
