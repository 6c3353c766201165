/* sym-decide.c — deciding signs and equalities of normal forms, and
 * recording assumptions.
 *
 * A question "a <= b" becomes "is q = b - a >= 0" for the polynomial q.  It
 * is answered, in order, by: q being a constant; interval evaluation from
 * the atoms' bounds (symbols >= 0 unless a min says otherwise, even powers
 * >= 0, products of nonnegative atoms nonnegative, mod and floordiv bounded
 * by their arguments); and q minus up to two positive multiples of recorded
 * facts (p >= 0) being nonnegative by intervals.  Anything else is UNKNOWN:
 * a YES or NO is always a proof.  A public comparison (sc_dim_eq, _le, _lt,
 * _divides) left UNKNOWN is then put to the symtab's oracle, if any, as a
 * solver-neutral query (see "the oracle" below); its answers are cached
 * per symtab by the query's text and counted in st->stats.  Internal
 * questions (simplifying min, max and divisions, checking assumptions)
 * never reach the oracle, so normal forms do not depend on it.
 *
 * Interval ends saturate soundly: a lower end that overflows upwards is
 * clamped to INT64_MAX (still a lower bound), one that overflows downwards
 * becomes -infinity; symmetrically for upper ends.
 *
 * Assumptions: "==" makes a substitution where it can (an atom with a unit
 * coefficient is replaced, "S % k == 0" rescales S's hidden atom so that S/k
 * is exact), else it is kept as a fact; "<", "<=", ">", ">=" on one atom
 * tighten its bounds, else they are kept as facts; "!=" is kept as a fact.
 * Every change bumps the symtab's epoch (normal forms are refreshed). */
#include "sym/sym-private.h"

#include <string.h>

#define XF(x) ((sc_sym_xint){(x), 0})
static const sc_sym_xint XNEG = {0, -1};
static const sc_sym_xint XPOS = {0, 1};

static int xsign(sc_sym_xint a) {
  return a.inf ? a.inf : (a.v > 0) - (a.v < 0);
}

static int xcmp(sc_sym_xint a, sc_sym_xint b) {
  if (a.inf != b.inf)
    return a.inf < b.inf ? -1 : 1;
  if (a.inf)
    return 0;
  return (a.v > b.v) - (a.v < b.v);
}

/* side: -1 when computing a lower end, +1 an upper end */
static sc_sym_xint xsat(int sign, int side) {
  if (sign > 0)
    return side < 0 ? XF(INT64_MAX) : XPOS;
  return side < 0 ? XNEG : XF(INT64_MIN);
}

static sc_sym_xint xadd(sc_sym_xint a, sc_sym_xint b, int side) {
  if (a.inf && b.inf && a.inf != b.inf)
    return side < 0 ? XNEG : XPOS;
  if (a.inf)
    return a;
  if (b.inf)
    return b;
  int64_t r;
  if (__builtin_add_overflow(a.v, b.v, &r))
    return xsat(a.v > 0 ? 1 : -1, side);
  return XF(r);
}

static sc_sym_xint xmul(sc_sym_xint a, sc_sym_xint b, int side) {
  int sa = xsign(a), sb = xsign(b);
  if (sa == 0 || sb == 0)
    return XF(0);
  if (a.inf || b.inf)
    return sa * sb > 0 ? XPOS : XNEG;
  int64_t r;
  if (__builtin_mul_overflow(a.v, b.v, &r))
    return xsat(sa * sb, side);
  return XF(r);
}

static sc_sym_xint xmin(sc_sym_xint a, sc_sym_xint b) {
  return xcmp(a, b) <= 0 ? a : b;
}

static sc_sym_xint xmax(sc_sym_xint a, sc_sym_xint b) {
  return xcmp(a, b) >= 0 ? a : b;
}

static sc_sym_xint xfloordiv(sc_symtab *st, sc_sym_xint a, int64_t k) {
  if (a.inf)
    return a;
  return XF(sc_sym_py_floordiv(st, a.v, k));
}

static sc_sym_ival ival_full(void) {
  sc_sym_ival r = {XNEG, XPOS};
  return r;
}

static sc_sym_ival ival_point(int64_t v) {
  sc_sym_ival r = {XF(v), XF(v)};
  return r;
}

static sc_sym_ival ival_add(sc_sym_ival a, sc_sym_ival b) {
  sc_sym_ival r = {xadd(a.lo, b.lo, -1), xadd(a.hi, b.hi, 1)};
  return r;
}

static sc_sym_ival ival_mul(sc_sym_ival a, sc_sym_ival b) {
  sc_sym_ival r;
  r.lo = xmin(xmin(xmul(a.lo, b.lo, -1), xmul(a.lo, b.hi, -1)),
              xmin(xmul(a.hi, b.lo, -1), xmul(a.hi, b.hi, -1)));
  r.hi = xmax(xmax(xmul(a.lo, b.lo, 1), xmul(a.lo, b.hi, 1)),
              xmax(xmul(a.hi, b.lo, 1), xmul(a.hi, b.hi, 1)));
  return r;
}

/* x^e for one end x, as an interval (sound under saturation). */
static sc_sym_ival xpow(sc_sym_xint x, uint32_t e) {
  sc_sym_ival px = {x, x};
  sc_sym_ival r = ival_point(1);
  for (uint32_t i = 0; i < e; i++) {
    r = ival_mul(r, px);
    if (r.lo.inf && r.hi.inf)
      break;
  }
  return r;
}

static sc_sym_ival ival_pow(sc_sym_ival a, uint32_t e) {
  if (e == 1)
    return a;
  sc_sym_ival r;
  if (e % 2 == 1) {
    r.lo = xpow(a.lo, e).lo;
    r.hi = xpow(a.hi, e).hi;
  } else if (xsign(a.lo) >= 0) {
    r.lo = xpow(a.lo, e).lo;
    r.hi = xpow(a.hi, e).hi;
  } else if (xsign(a.hi) <= 0) {
    r.lo = xpow(a.hi, e).lo;
    r.hi = xpow(a.lo, e).hi;
  } else {
    r.lo = XF(0);
    r.hi = xmax(xpow(a.lo, e).hi, xpow(a.hi, e).hi);
  }
  return r;
}

static sc_sym_ival dim_ival(sc_symtab *st, sc_dim d);

static sc_sym_ival atom_ival_walk(sc_symtab *st, const sc_sym_atom *a);

/* Memoized per epoch: a normal form is a DAG whose tree can be exponential. */
static sc_sym_ival atom_ival(sc_symtab *st, uint32_t id) {
  sc_sym_atom *a = g_ptr_array_index(st->atoms, id);
  if (a->ival_cached && a->ival_epoch == st->epoch)
    return a->ival;
  /* While its walk is on, the atom stands for any value: a cycle through
   * substitutions (none should exist) gives a wide interval, never an
   * endless recursion. */
  a->ival = ival_full();
  a->ival_epoch = st->epoch;
  a->ival_cached = TRUE;
  sc_sym_ival r = atom_ival_walk(st, a);
  a->ival = r;
  a->ival_epoch = st->epoch;
  a->ival_cached = TRUE;
  return r;
}

static sc_sym_ival atom_ival_walk(sc_symtab *st, const sc_sym_atom *a) {
  if (a->has_subst)
    return dim_ival(st, a->subst);
  sc_sym_ival r = ival_full();
  switch (a->kind) {
  case SC_ATOM_SYM: {
    /* a symbol's value is an int64 (as sc_dim_eval takes it): S <= INT64_MAX
     * keeps min(S, 9223372036854775807) == S for slices "to the end" */
    int64_t m = a->scale;
    int64_t lo = INT64_MIN / m;
    r.lo = XF(lo);
    r.hi = XF(INT64_MAX / m);
    break;
  }
  case SC_ATOM_FLOORDIV: {
    sc_sym_ival ia = dim_ival(st, a->a);
    if (!a->b.poly && a->b.value > 0) {
      r.lo = xfloordiv(st, ia.lo, a->b.value);
      r.hi = xfloordiv(st, ia.hi, a->b.value);
    } else if (a->b.poly) {
      sc_sym_ival ib = dim_ival(st, a->b);
      if (xcmp(ib.lo, XF(1)) >= 0 && xsign(ia.lo) >= 0) {
        r.lo = XF(0);
        r.hi = ia.hi;
      }
    }
    break;
  }
  case SC_ATOM_MOD: {
    sc_sym_ival ia = dim_ival(st, a->a);
    if (!a->b.poly && a->b.value > 0) {
      r.lo = XF(0);
      r.hi = XF(a->b.value - 1);
    } else if (!a->b.poly && a->b.value < 0) {
      r.lo = XF(a->b.value + 1);
      r.hi = XF(0);
    } else if (a->b.poly) {
      sc_sym_ival ib = dim_ival(st, a->b);
      if (xcmp(ib.lo, XF(1)) >= 0) {
        r.lo = XF(0);
        r.hi = xadd(ib.hi, XF(-1), 1);
      }
    }
    if (xsign(r.lo) >= 0 && xsign(ia.lo) >= 0)
      r.hi = xmin(r.hi, ia.hi);
    break;
  }
  case SC_ATOM_MIN:
  case SC_ATOM_MAX: {
    sc_sym_ival ia = dim_ival(st, a->a), ib = dim_ival(st, a->b);
    if (a->kind == SC_ATOM_MIN) {
      r.lo = xmin(ia.lo, ib.lo);
      r.hi = xmin(ia.hi, ib.hi);
    } else {
      r.lo = xmax(ia.lo, ib.lo);
      r.hi = xmax(ia.hi, ib.hi);
    }
    break;
  }
  }
  sc_sym_ival b = r;
  if (a->has_lo)
    b.lo = xmax(b.lo, XF(a->lo));
  if (a->has_hi)
    b.hi = xmin(b.hi, XF(a->hi));
  if (xcmp(b.lo, b.hi) > 0) {
    /* the bounds and the definition do not meet: the assumptions that made
     * them contradict each other.  The interval stays nonempty (see
     * "contradictions"): any interval is sound where nothing is true. */
    st->contradiction = TRUE;
    return xcmp(r.lo, r.hi) <= 0 ? r : ival_full();
  }
  return b;
}

static sc_sym_ival dim_ival(sc_symtab *st, sc_dim d) {
  if (!d.poly)
    return ival_point(d.value);
  sc_sym_ival acc = ival_point(0);
  for (uint32_t i = 0; i < d.poly->n; i++) {
    const sc_sym_term *t = &d.poly->t[i];
    sc_sym_ival m = ival_point(t->c);
    for (uint32_t j = 0; j < t->m->n; j++)
      m = ival_mul(m, ival_pow(atom_ival(st, t->m->f[j].atom), t->m->f[j].exp));
    acc = ival_add(acc, m);
    if (acc.lo.inf < 0 && acc.hi.inf > 0)
      break;
  }
  return acc;
}

sc_sym_ival sc_sym_interval(const sc_symtab *st, sc_dim d) {
  /* only py_floordiv's overflow flag is touched, never set for k > 0 */
  return dim_ival((sc_symtab *)st, d);
}

/* ---- the facts of an epoch ------------------------------------------ *
 *
 * Facts simplify normal forms (a symbolic division folds when the facts
 * bound it), and facts are normal forms themselves.  Refreshing a fact where
 * a decision reads it made the answer depend on what was refreshed before:
 * a fact whose new form loses what folded it (S - H - 1 >= 0 with H ==
 * ((4/S)/S)*T: it gives S >= 3, so (4/S)/S is 0, so H is 0, and S - 1 >= 0
 * no longer gives S >= 3) has no fixpoint, and the same text normalised
 * differently at different times (fuzz-sym, issue 19).  So within an epoch
 * the facts are fixed: decisions read them as stored, compute on stored
 * forms, and never refresh them.  When the epoch changes, the outermost
 * refresh first rewrites every fact in the new epoch's normal form, each
 * decided with the facts as they were (they are true at any epoch), and then
 * bumps the epoch once more, so that nothing decided with the old facts stays
 * cached.  A normal form is then a function of its value and the epoch's
 * facts: normalising what it prints gives it back. */

static void push_fact(GArray *facts, sc_dim f);

/* The facts' new forms; a fact that became a constant is dropped, and a
 * false one (p >= 0 with p < 0, ...) sets st->contradiction. */
static GArray *facts_rewritten(sc_symtab *st, const GArray *facts, sc_sym_rel rel) {
  GArray *out = g_array_sized_new(FALSE, FALSE, sizeof(sc_dim), facts->len);
  for (uint32_t i = 0; i < facts->len; i++) {
    sc_dim f = g_array_index(facts, sc_dim, i);
    sc_sym_overflow = FALSE;
    sc_dim g = sc_sym_refresh(st, f);
    if (sc_sym_overflow)
      g = f; /* clamped: keep the stored form (true, only older) */
    if (g.poly) {
      g_array_append_val(out, g);
    } else if ((rel == SC_SYM_REL_GE && g.value < 0) || (rel == SC_SYM_REL_EQ && g.value != 0) ||
               (rel == SC_SYM_REL_NE && g.value == 0)) {
      st->contradiction = TRUE;
    }
  }
  return out;
}

/* Substitutions can form a cycle although each value held only atoms
 * that were not substituted when it was made: "T/S == H - N*(H/S)" and then
 * "H == T" make H/S refresh to T/S, whose value holds H/S; what a refresh
 * builds around the cycle is no normal form.  Every value is refreshed here,
 * before anything else in the epoch, which goes around every cycle once: the
 * refresh notes an atom on it (sym.c, refresh_frame), which stops being a
 * substitution: X == v becomes the facts X - v == 0, >= 0 and <= 0 (true,
 * as every substitution was), and the epoch is bumped so that nothing built
 * on the cycle stays cached.  Each round removes a substitution: it ends. */
static gboolean break_subst_cycle(sc_symtab *st) {
  st->cycle_atom = G_MAXUINT32;
  for (uint32_t i = 0; i < st->atoms->len && st->cycle_atom == G_MAXUINT32; i++) {
    const sc_sym_atom *a = sc_sym_atom_get(st, i);
    if (a->has_subst)
      (void)sc_sym_atom_dim(st, i);
  }
  if (st->cycle_atom == G_MAXUINT32)
    return FALSE;
  sc_sym_atom *a = g_ptr_array_index(st->atoms, st->cycle_atom);
  st->cycle_atom = G_MAXUINT32;
  a->has_subst = FALSE;
  sc_dim x = {0, a->self};
  sc_dim p = sc_sym_raw_add(st, x, a->subst, -1);
  push_fact(st->eq_facts, p);
  push_fact(st->ge_facts, p);
  push_fact(st->ge_facts, sc_sym_scale(st, p, -1));
  sc_sym_bump(st);
  return TRUE;
}

void sc_sym_facts_update(sc_symtab *st) {
  gboolean saved = sc_sym_overflow;
  st->work.facts_updates++;
  st->facts_updating = TRUE;
  while (break_subst_cycle(st)) {
  }
  if (st->ge_facts->len == 0 && st->eq_facts->len == 0 && st->ne_facts->len == 0) {
    st->facts_updating = FALSE;
    sc_sym_overflow = saved;
    st->facts_epoch = st->epoch;
    return;
  }
  GArray *ge = facts_rewritten(st, st->ge_facts, SC_SYM_REL_GE);
  GArray *eq = facts_rewritten(st, st->eq_facts, SC_SYM_REL_EQ);
  GArray *ne = facts_rewritten(st, st->ne_facts, SC_SYM_REL_NE);
  st->facts_updating = FALSE;
  sc_sym_overflow = saved;
  g_array_free(st->ge_facts, TRUE);
  g_array_free(st->eq_facts, TRUE);
  g_array_free(st->ne_facts, TRUE);
  st->ge_facts = ge;
  st->eq_facts = eq;
  st->ne_facts = ne;
  sc_sym_bump(st);
  st->facts_epoch = st->epoch;
}

/* ---- decisions ------------------------------------------------------- */

/* Decisions compute on stored forms (sc_sym_raw_add, never sc_dim_sub):
 * what they answer must depend on the question and the epoch's facts only,
 * not on which intermediate polynomials happen to be cached (see "the facts
 * of an epoch" below). */
static sc_dim sub(sc_symtab *st, sc_dim a, sc_dim b, int64_t kb) {
  return sc_sym_raw_add(st, a, sc_sym_scale(st, b, kb), -1);
}

/* q >= 0 by intervals, after taking out a common nonnegative monomial
 * (S*T - S == S*(T-1)). */
static gboolean ival_ge0(sc_symtab *st, sc_dim q) {
  if (!q.poly)
    return q.value >= 0;
  if (xsign(dim_ival(st, q).lo) >= 0)
    return TRUE;
  /* q == c0 + factor*rest with c0 >= 0, factor >= 0, rest >= 0 */
  const sc_sym_term *last = &q.poly->t[q.poly->n - 1];
  int64_t c0 = last->m->n == 0 ? last->c : 0;
  if (c0 < 0)
    return FALSE;
  sc_dim nc = c0 ? sc_sym_raw_add(st, q, sc_dim_const(c0), -1) : q;
  sc_dim factor, rest;
  if (nc.poly && nc.poly->n > 1 && sc_sym_split_common(st, nc, &factor, &rest) &&
      xsign(dim_ival(st, factor).lo) >= 0)
    return ival_ge0(st, rest);
  return FALSE;
}

/* Positive multipliers c such that q - c*f cancels a term of q. */
static uint32_t ratios(sc_dim q, sc_dim f, gboolean positive_only, int64_t *out, uint32_t max) {
  uint32_t n = 0;
  if (!q.poly || !f.poly)
    return 0;
  for (uint32_t i = 0; i < f.poly->n && n < max; i++) {
    const sc_sym_term *tf = &f.poly->t[i];
    if (tf->m->n == 0)
      continue;
    for (uint32_t j = 0; j < q.poly->n; j++) {
      if (q.poly->t[j].m != tf->m)
        continue;
      int64_t qc = q.poly->t[j].c, fc = tf->c;
      if (!sc_sym_divisible(qc, fc) || (fc == -1 && qc == INT64_MIN))
        break;
      int64_t c = qc / fc;
      if (c > 0 || (!positive_only && c != 0))
        out[n++] = c;
      break;
    }
  }
  return n;
}

#define MAX_PAIR_FACTS 32

static void push_fact(GArray *facts, sc_dim f) {
  if (f.poly)
    g_array_append_val(facts, f);
}

/* Relations that every atom of q satisfies by its definition: k*(a/k) <= a
 * <= k*(a/k) + k - 1, a%b < b, min(a, b) <= a, ...  They are facts about
 * two atoms at once, which intervals cannot see. */
static void atom_facts(sc_symtab *st, sc_dim q, GArray *facts) {
  if (!q.poly)
    return;
  for (uint32_t i = 0; i < q.poly->n; i++) {
    const sc_sym_mono *m = q.poly->t[i].m;
    for (uint32_t j = 0; j < m->n; j++) {
      const sc_sym_atom *a = sc_sym_atom_get(st, m->f[j].atom);
      if (a->kind == SC_ATOM_SYM || a->has_subst)
        continue;
      sc_dim x = {0, a->self};
      sc_dim one = sc_dim_const(1);
      switch (a->kind) {
      case SC_ATOM_FLOORDIV:
        if (a->b.poly && xcmp(dim_ival(st, a->b).lo, XF(1)) < 0)
          break;
        if (!a->b.poly && a->b.value <= 0)
          break;
        /* b*x <= a <= b*x + b - 1 */
        push_fact(facts, sc_sym_raw_add(st, a->a, sc_sym_raw_mul(st, a->b, x), -1));
        push_fact(facts, sc_sym_raw_add(st, sc_sym_raw_add(st, sc_sym_raw_mul(st, a->b, x),
                                                           sc_sym_raw_add(st, a->b, one, -1), 1),
                                        a->a, -1));
        break;
      case SC_ATOM_MOD:
        if (a->b.poly && xcmp(dim_ival(st, a->b).lo, XF(1)) >= 0)
          push_fact(facts, sc_sym_raw_add(st, sc_sym_raw_add(st, a->b, one, -1), x, -1));
        if (xsign(dim_ival(st, a->a).lo) >= 0)
          push_fact(facts, sc_sym_raw_add(st, a->a, x, -1));
        break;
      case SC_ATOM_MIN:
        push_fact(facts, sc_sym_raw_add(st, a->a, x, -1));
        push_fact(facts, sc_sym_raw_add(st, a->b, x, -1));
        break;
      case SC_ATOM_MAX:
        push_fact(facts, sc_sym_raw_add(st, x, a->a, -1));
        push_fact(facts, sc_sym_raw_add(st, x, a->b, -1));
        break;
      case SC_ATOM_SYM:
        break;
      }
    }
  }
}

static gboolean prove_ge0(sc_symtab *st, sc_dim q, GArray *facts) {
  st->work.ge0_proofs++;
  if (ival_ge0(st, q))
    return TRUE;
  uint32_t nf = facts->len;
  for (uint32_t i = 0; i < nf; i++) {
    sc_dim f = g_array_index(facts, sc_dim, i);
    int64_t cs[4];
    uint32_t nc = ratios(q, f, TRUE, cs, 4);
    for (uint32_t k = 0; k < nc; k++) {
      sc_dim r1 = sub(st, q, f, cs[k]);
      if (ival_ge0(st, r1))
        return TRUE;
      if (i >= MAX_PAIR_FACTS)
        continue;
      for (uint32_t j = 0; j < MIN(nf, MAX_PAIR_FACTS); j++) {
        if (j == i)
          continue;
        sc_dim f2 = g_array_index(facts, sc_dim, j);
        int64_t cs2[4];
        uint32_t nc2 = ratios(r1, f2, TRUE, cs2, 4);
        for (uint32_t l = 0; l < nc2; l++)
          if (ival_ge0(st, sub(st, r1, f2, cs2[l])))
            return TRUE;
      }
    }
  }
  return FALSE;
}

/* q >= 0 and its negation q <= -1 (nq == -1 - q >= 0) are tried alike, so
 * that the answers to the two questions agree (see "contradictions"). */
static sc_truth ge0_inner(sc_symtab *st, sc_dim q) {
  if (ival_ge0(st, q))
    return SC_YES;
  sc_dim nq = sc_sym_raw_add(st, sc_dim_const(-1), q, -1);
  if (ival_ge0(st, nq))
    return SC_NO;
  GArray *facts = g_array_new(FALSE, FALSE, sizeof(sc_dim));
  for (uint32_t i = 0; i < st->ge_facts->len; i++)
    push_fact(facts, g_array_index(st->ge_facts, sc_dim, i));
  atom_facts(st, q, facts);
  gboolean yes = prove_ge0(st, q, facts), no = prove_ge0(st, nq, facts);
  g_array_free(facts, TRUE);
  if (yes && no) {
    st->contradiction = TRUE;
    return SC_UNKNOWN;
  }
  return yes ? SC_YES : no ? SC_NO : SC_UNKNOWN;
}

sc_truth sc_sym_ge0(sc_symtab *st, sc_dim q) {
  if (!q.poly)
    return q.value >= 0 ? SC_YES : SC_NO;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_truth r = ge0_inner(st, sc_sym_refresh(st, q));
  if (sc_sym_overflow)
    r = SC_UNKNOWN;
  sc_sym_overflow = saved;
  return r;
}

/* Nonconstant coefficients' gcd must divide the constant term (every
 * monomial is an integer): else q == 0 has no solution. */
static gboolean integer_infeasible(sc_dim q) {
  int64_t g = 0, c0 = 0;
  for (uint32_t i = 0; i < q.poly->n; i++) {
    if (q.poly->t[i].m->n == 0)
      c0 = q.poly->t[i].c;
    else
      g = sc_sym_gcd64(g, q.poly->t[i].c);
  }
  return g > 1 && c0 % g != 0;
}

static sc_truth eq0_inner(sc_symtab *st, sc_dim q) {
  if (!q.poly)
    return q.value == 0 ? SC_YES : SC_NO;
  sc_sym_ival iv = dim_ival(st, q);
  if (xsign(iv.lo) > 0 || xsign(iv.hi) < 0)
    return SC_NO;
  if (xsign(iv.lo) == 0 && xsign(iv.hi) == 0)
    return SC_YES;
  if (integer_infeasible(q))
    return SC_NO;
  for (uint32_t i = 0; i < st->eq_facts->len; i++) {
    sc_dim e = g_array_index(st->eq_facts, sc_dim, i);
    int64_t cs[4];
    uint32_t nc = ratios(q, e, FALSE, cs, 4);
    for (uint32_t k = 0; k < nc; k++) {
      sc_dim r = sub(st, q, e, cs[k]);
      if (!r.poly)
        return r.value == 0 ? SC_YES : SC_NO;
    }
  }
  for (uint32_t i = 0; i < st->ne_facts->len; i++) {
    sc_dim e = g_array_index(st->ne_facts, sc_dim, i);
    int64_t cs[4];
    uint32_t nc = ratios(q, e, FALSE, cs, 4);
    for (uint32_t k = 0; k < nc; k++) {
      sc_dim r = sub(st, q, e, cs[k]);
      if (!r.poly && r.value == 0)
        return SC_NO;
    }
  }
  sc_dim x = sc_sym_expand_mod(st, q);
  if (!x.poly)
    return x.value == 0 ? SC_YES : SC_NO;
  sc_truth ge = ge0_inner(st, q);
  if (ge == SC_NO)
    return SC_NO;
  sc_truth le = ge0_inner(st, sc_sym_scale(st, q, -1));
  if (le == SC_NO)
    return SC_NO;
  if (ge == SC_YES && le == SC_YES)
    return SC_YES;
  return SC_UNKNOWN;
}

sc_truth sc_sym_eq0(sc_symtab *st, sc_dim q) {
  if (!q.poly)
    return q.value == 0 ? SC_YES : SC_NO;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_truth r = eq0_inner(st, sc_sym_refresh(st, q));
  if (sc_sym_overflow)
    r = SC_UNKNOWN;
  sc_sym_overflow = saved;
  return r;
}

/* ---- contradictions -------------------------------------------------- *
 *
 * Assumptions can contradict each other without any one of them being false
 * on its own (S*T*T == T and T == 4 leave 16*S - 4 == 0, which no integer
 * S solves).  Where nothing is true every answer is "sound", but answers
 * that contradict each other (a <= b and b < a both YES, fuzz-sym, issue
 * 19) are of no use to anyone, and a bundle whose assumptions contradict
 * each other must be refused, not proved.  So:
 *  - a question and its negation are never both YES (q >= 0 and q <= -1:
 *    a <= b and b < a): ge0_inner tries both alike, and one proved both
 *    ways answers UNKNOWN; interval evaluation cannot prove both unless an
 *    atom's interval is empty, and atom_ival never returns an empty one;
 *  - each of these (a question proved both ways, an atom whose bounds and
 *    definition do not meet, a fact rewritten to a false constant) sets the
 *    sticky st->contradiction;
 *  - after each assumption, every fact is decided with the epoch's facts
 *    (facts_check): a fact refuted (p >= 0 decided NO, p == 0 decided NO,
 *    p != 0 decided YES) or proved both ways is a contradiction;
 *  - sc_sym_assume_rel refuses the assumption that raised the flag.
 * This finds what the decision procedure can see (intervals, the atoms'
 * definitions, up to two facts at once), not every contradiction: a set
 * that contradicts itself only through nonlinear reasoning beyond it
 * (S*(N*S + 140) == -1 with -5 <= N <= 20) is taken; its answers still
 * agree with each other. */

static void facts_check(sc_symtab *st) {
  for (uint32_t i = 0; i < st->ge_facts->len; i++)
    if (sc_sym_ge0(st, g_array_index(st->ge_facts, sc_dim, i)) == SC_NO)
      st->contradiction = TRUE;
  for (uint32_t i = 0; i < st->eq_facts->len; i++)
    if (sc_sym_eq0(st, g_array_index(st->eq_facts, sc_dim, i)) == SC_NO)
      st->contradiction = TRUE;
  for (uint32_t i = 0; i < st->ne_facts->len; i++)
    if (sc_sym_eq0(st, g_array_index(st->ne_facts, sc_dim, i)) == SC_YES)
      st->contradiction = TRUE;
}

/* ---- the oracle ------------------------------------------------------ *
 *
 * A question the normal form leaves UNKNOWN is put to the oracle as an
 * sc_sym_query (see sym.h).  The query is built from fresh normal forms:
 * its unknowns are the atoms that occur in the goal, in the recorded facts,
 * in the opaque atoms that assumptions replaced by values ("(T+U) % 2 ==
 * 0"), and, transitively, in the operands of opaque atoms; each opaque atom
 * gets its exact definition as clauses.  Encoding may only lose information,
 * never add it: an atom left without a definition is a free unknown, which
 * can turn a YES or NO into UNKNOWN but never the reverse. */

#define QB_NONE G_MAXUINT32
/* Past these a query is not built (SC_UNKNOWN, counted as skipped). */
#define QB_MAX_VARS 256u
#define QB_MAX_TERMS 8192u
#define QB_MAX_WEIGHT 16384u /* sum of the exponents of every factor */
#define ORACLE_CACHE_MAX 4096u

typedef struct {
  int64_t c;
  uint32_t f0, nf;
} qb_term;

typedef struct {
  sc_sym_rel rel;
  int64_t k;
  uint32_t t0, nt;
} qb_lit;

typedef struct {
  uint32_t l0, nl;
} qb_clause;

/* c * d * var (var QB_NONE: no extra factor) */
typedef struct {
  sc_dim d;
  int64_t c;
  uint32_t var;
} qb_part;

typedef struct {
  sc_symtab *st;
  GArray *vars;            /* sc_sym_qvar; names point into names */
  GPtrArray *names;        /* char*, owned */
  GHashTable *var_of_atom; /* atom id + 1 -> var index + 1 */
  GArray *todo;            /* uint32_t atom ids to define, in order */
  GArray *factors;         /* sc_sym_qfactor */
  GArray *terms;           /* qb_term */
  GArray *lits;            /* qb_lit */
  GArray *clauses;         /* qb_clause */
  uint64_t weight;
  gboolean failed, nonlinear;
  /* filled by qb_build */
  sc_sym_qterm *qterms;
  sc_sym_qlit *qlits;
  sc_sym_qclause *qclauses;
  char *key;
} qb;

static void qb_init(qb *b, sc_symtab *st) {
  memset(b, 0, sizeof *b);
  b->st = st;
  b->vars = g_array_new(FALSE, FALSE, sizeof(sc_sym_qvar));
  b->names = g_ptr_array_new_with_free_func(g_free);
  b->var_of_atom = g_hash_table_new(g_direct_hash, g_direct_equal);
  b->todo = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  b->factors = g_array_new(FALSE, FALSE, sizeof(sc_sym_qfactor));
  b->terms = g_array_new(FALSE, FALSE, sizeof(qb_term));
  b->lits = g_array_new(FALSE, FALSE, sizeof(qb_lit));
  b->clauses = g_array_new(FALSE, FALSE, sizeof(qb_clause));
}

static void qb_clear(qb *b) {
  g_array_free(b->vars, TRUE);
  g_ptr_array_free(b->names, TRUE);
  g_hash_table_destroy(b->var_of_atom);
  g_array_free(b->todo, TRUE);
  g_array_free(b->factors, TRUE);
  g_array_free(b->terms, TRUE);
  g_array_free(b->lits, TRUE);
  g_array_free(b->clauses, TRUE);
  g_free(b->qterms);
  g_free(b->qlits);
  g_free(b->qclauses);
  g_free(b->key);
}

static uint32_t qb_new_var(qb *b, char *name, gboolean has_lo, int64_t lo, gboolean has_hi,
                           int64_t hi) {
  g_ptr_array_add(b->names, name);
  sc_sym_qvar v = {name, has_lo, has_hi, has_lo ? lo : 0, has_hi ? hi : 0};
  g_array_append_val(b->vars, v);
  if (b->vars->len > QB_MAX_VARS)
    b->failed = TRUE;
  return b->vars->len - 1;
}

static uint32_t qb_var(qb *b, uint32_t atom) {
  gpointer found = g_hash_table_lookup(b->var_of_atom, GUINT_TO_POINTER(atom + 1));
  if (found)
    return GPOINTER_TO_UINT(found) - 1;
  const sc_sym_atom *a = sc_sym_atom_get(b->st, atom);
  uint32_t index = b->vars->len;
  char *name;
  gboolean has_lo = a->has_lo, has_hi = a->has_hi;
  int64_t lo = a->lo, hi = a->hi;
  switch (a->kind) {
  case SC_ATOM_SYM: {
    const char *sname = sc_sym_symbol_get(b->st, a->sym)->name;
    name = a->scale == 1 ? g_strdup(sname)
                         : g_strdup_printf("(%s/%" G_GINT64_FORMAT ")", sname, a->scale);
    /* a symbol's value is an int64, and the atom is that value / scale */
    int64_t rlo = INT64_MIN / a->scale, rhi = INT64_MAX / a->scale;
    lo = has_lo ? MAX(lo, rlo) : rlo;
    hi = has_hi ? MIN(hi, rhi) : rhi;
    has_lo = has_hi = TRUE;
    break;
  }
  case SC_ATOM_FLOORDIV:
    name = g_strdup_printf("#q%u", index);
    break;
  case SC_ATOM_MOD:
    name = g_strdup_printf("#r%u", index);
    break;
  case SC_ATOM_MIN:
    name = g_strdup_printf("#min%u", index);
    break;
  case SC_ATOM_MAX:
  default:
    name = g_strdup_printf("#max%u", index);
    break;
  }
  qb_new_var(b, name, has_lo, lo, has_hi, hi);
  g_hash_table_insert(b->var_of_atom, GUINT_TO_POINTER(atom + 1), GUINT_TO_POINTER(index + 1));
  if (a->kind != SC_ATOM_SYM)
    g_array_append_val(b->todo, atom);
  return index;
}

static void qb_push_factor(qb *b, uint32_t var, uint32_t exp) {
  sc_sym_qfactor f = {var, exp};
  g_array_append_val(b->factors, f);
  b->weight += exp;
}

static void qb_add_part(qb *b, qb_part part) {
  if (part.c == 0)
    return;
  sc_dim d = part.d;
  uint32_t n = d.poly ? d.poly->n : 1;
  for (uint32_t i = 0; i < n; i++) {
    int64_t c0 = d.poly ? d.poly->t[i].c : d.value;
    const sc_sym_mono *m = d.poly ? d.poly->t[i].m : NULL;
    qb_term t;
    if (c0 == 0)
      continue;
    if (__builtin_mul_overflow(c0, part.c, &t.c)) {
      b->failed = TRUE;
      return;
    }
    t.f0 = b->factors->len;
    uint32_t degree = 0;
    for (uint32_t j = 0; m && j < m->n; j++) {
      uint32_t var = qb_var(b, m->f[j].atom);
      qb_push_factor(b, var, m->f[j].exp);
      degree += m->f[j].exp;
    }
    if (part.var != QB_NONE) {
      qb_push_factor(b, part.var, 1);
      degree++;
    }
    t.nf = b->factors->len - t.f0;
    if (degree >= 2)
      b->nonlinear = TRUE;
    g_array_append_val(b->terms, t);
  }
  if (b->terms->len > QB_MAX_TERMS || b->weight > QB_MAX_WEIGHT)
    b->failed = TRUE;
}

/* Appends the literal (sum of parts) REL 0; returns its index. */
static uint32_t qb_lit_add(qb *b, sc_sym_rel rel, int64_t k, const qb_part *parts, uint32_t n) {
  qb_lit l = {rel, k, b->terms->len, 0};
  for (uint32_t i = 0; i < n; i++)
    qb_add_part(b, parts[i]);
  /* the constant terms of the parts become one, last */
  qb_term *t = (qb_term *)(void *)b->terms->data;
  uint32_t kept = l.t0;
  int64_t c0 = 0;
  for (uint32_t i = l.t0; i < b->terms->len; i++) {
    if (t[i].nf == 0) {
      if (__builtin_add_overflow(c0, t[i].c, &c0))
        b->failed = TRUE;
    } else {
      t[kept++] = t[i];
    }
  }
  if (c0 != 0)
    t[kept++] = (qb_term){c0, b->factors->len, 0};
  g_array_set_size(b->terms, kept);
  l.nt = b->terms->len - l.t0;
  g_array_append_val(b->lits, l);
  return b->lits->len - 1;
}

/* Closes the clause made of the literals from l0 on. */
static void qb_clause_end(qb *b, uint32_t l0) {
  qb_clause c = {l0, b->lits->len - l0};
  g_array_append_val(b->clauses, c);
}

static void qb_unit(qb *b, sc_sym_rel rel, const qb_part *parts, uint32_t n) {
  uint32_t l0 = b->lits->len;
  qb_lit_add(b, rel, 0, parts, n);
  qb_clause_end(b, l0);
}

/* sign of d: +1 when provably >= 1, -1 when provably <= -1, else 0 */
static int qb_sign(sc_symtab *st, sc_dim d) {
  if (!d.poly)
    return (d.value > 0) - (d.value < 0);
  sc_sym_ival iv = dim_ival(st, d);
  if (xcmp(iv.lo, XF(1)) >= 0)
    return 1;
  if (xcmp(iv.hi, XF(-1)) <= 0)
    return -1;
  return 0;
}

/* The remainder r (given as parts) of a division by DIV lies in [0, div-1]
 * when div > 0 and in [div+1, 0] when div < 0; nothing when div == 0. */
static void qb_remainder_range(qb *b, sc_dim div, const qb_part *r, uint32_t nr) {
  int sign = qb_sign(b->st, div);
  qb_part p[4];
  for (int s = 1; s >= -1; s -= 2) {
    if (sign != 0 && sign != s)
      continue;
    /* s*r >= 0, and s*(div - r) - 1 >= 0 */
    for (int which = 0; which < 2; which++) {
      uint32_t l0 = b->lits->len, n = 0;
      if (sign == 0) { /* guard: div <= 0 (for s > 0) or div >= 0 (s < 0) */
        qb_part g = {div, -s, QB_NONE};
        qb_lit_add(b, SC_SYM_REL_GE, 0, &g, 1);
      }
      for (uint32_t i = 0; i < nr; i++) {
        p[n] = r[i];
        p[n++].c *= which == 0 ? s : -s;
      }
      if (which == 1) {
        p[n++] = (qb_part){div, s, QB_NONE};
        p[n++] = (qb_part){sc_dim_const(-1), 1, QB_NONE};
      }
      qb_lit_add(b, SC_SYM_REL_GE, 0, p, n);
      qb_clause_end(b, l0);
    }
  }
}

static void qb_define(qb *b, uint32_t atom) {
  sc_symtab *st = b->st;
  const sc_sym_atom *a = sc_sym_atom_get(st, atom);
  sc_sym_atom_kind kind = a->kind;
  sc_dim x = {0, a->self};
  sc_dim A = sc_sym_refresh(st, a->a), B = sc_sym_refresh(st, a->b);
  uint32_t vx = qb_var(b, atom);
  switch (kind) {
  case SC_ATOM_FLOORDIV: {
    /* x == floor(A / B): r = A - B*x is a remainder */
    qb_part r[2] = {{A, 1, QB_NONE}, {B, -1, vx}};
    qb_remainder_range(b, B, r, 2);
    break;
  }
  case SC_ATOM_MOD: {
    /* x == A mod B: A - B*q - x == 0 for some q, and x is a remainder;
     * q is floor(A / B), so where the symtab has that quotient's atom (a
     * view's -1 size beside a divisibility test of the same numel) it is
     * q itself: "A % B == 0" then gives B*(A / B) == A linearly */
    sc_sym_atom key;
    memset(&key, 0, sizeof key);
    key.kind = SC_ATOM_FLOORDIV;
    key.a = a->a;
    key.b = a->b;
    uint32_t qa = sc_sym_atom_find(st, &key);
    uint32_t vq = qa != G_MAXUINT32
                      ? qb_var(b, qa)
                      : qb_new_var(b, g_strdup_printf("#aux%u", b->vars->len), FALSE, 0, FALSE, 0);
    qb_part e[3] = {{A, 1, QB_NONE}, {B, -1, vq}, {x, -1, QB_NONE}};
    qb_unit(b, SC_SYM_REL_EQ, e, 3);
    qb_part r[1] = {{x, 1, QB_NONE}};
    qb_remainder_range(b, B, r, 1);
    break;
  }
  case SC_ATOM_MIN:
  case SC_ATOM_MAX: {
    /* min: A - x >= 0, B - x >= 0 (max: the negations), x == A or x == B */
    int64_t s = kind == SC_ATOM_MIN ? 1 : -1;
    qb_part ga[2] = {{A, s, QB_NONE}, {x, -s, QB_NONE}};
    qb_part gb[2] = {{B, s, QB_NONE}, {x, -s, QB_NONE}};
    qb_unit(b, SC_SYM_REL_GE, ga, 2);
    qb_unit(b, SC_SYM_REL_GE, gb, 2);
    uint32_t l0 = b->lits->len;
    qb_lit_add(b, SC_SYM_REL_EQ, 0, ga, 2);
    qb_lit_add(b, SC_SYM_REL_EQ, 0, gb, 2);
    qb_clause_end(b, l0);
    break;
  }
  case SC_ATOM_SYM:
    break;
  }
}

static gboolean dim_same(sc_dim x, sc_dim y) {
  return x.poly == y.poly && x.value == y.value; /* polys are hash-consed */
}

/* Floor division and modulo are functions: two quotients (remainders) by
 * the same divisor of operands that are equal are equal.  Each atom has a
 * fresh variable with its own defining range, and the ranges are
 * nonlinear where the divisor is a symbol, so the solver could not tell
 * that (A1 + 0) / k and A2 / k agree where the context makes A1 == A2 (a
 * slice's ceil-divided length of end - start beside the same length
 * written with the size for the end, end == size by two inequalities).
 * For every pair of the query's atoms of one kind whose divisors have the
 * same normal form, not a constant (a constant divisor's ranges are
 * linear, and the solver finds this itself): A1 - A2 != 0 or x1 - x2 == 0. */
static void qb_congruence(qb *b) {
  sc_symtab *st = b->st;
  uint32_t n = b->todo->len;
  for (uint32_t i = 0; i < n && !b->failed; i++) {
    /* copies: refreshing a form may intern atoms (the table may move) */
    sc_sym_atom x = *sc_sym_atom_get(st, g_array_index(b->todo, uint32_t, i));
    if (x.kind != SC_ATOM_FLOORDIV && x.kind != SC_ATOM_MOD)
      continue;
    sc_dim bx = sc_sym_refresh(st, x.b);
    if (bx.poly == NULL)
      continue; /* a constant divisor: the defining ranges are linear */
    for (uint32_t j = i + 1; j < n && !b->failed; j++) {
      sc_sym_atom y = *sc_sym_atom_get(st, g_array_index(b->todo, uint32_t, j));
      if (y.kind != x.kind || !dim_same(bx, sc_sym_refresh(st, y.b)))
        continue;
      qb_part ops[2] = {{sc_sym_refresh(st, x.a), 1, QB_NONE},
                        {sc_sym_refresh(st, y.a), -1, QB_NONE}};
      qb_part vals[2] = {{(sc_dim){0, x.self}, 1, QB_NONE}, {(sc_dim){0, y.self}, -1, QB_NONE}};
      uint32_t l0 = b->lits->len;
      qb_lit_add(b, SC_SYM_REL_NE, 0, ops, 2);
      qb_lit_add(b, SC_SYM_REL_EQ, 0, vals, 2);
      qb_clause_end(b, l0);
    }
  }
}

static void qb_add_facts(qb *b, GArray *facts, sc_sym_rel rel) {
  for (uint32_t i = 0; i < facts->len && !b->failed; i++) {
    qb_part p = {sc_sym_refresh(b->st, g_array_index(facts, sc_dim, i)), 1, QB_NONE};
    qb_unit(b, rel, &p, 1);
  }
}

/* Builds the query "context |= goal REL 0" into *q (valid until qb_clear);
 * FALSE when it is too large. */
static gboolean qb_build(qb *b, sc_sym_rel rel, sc_dim goal, int64_t k, sc_sym_query *q) {
  qb_part g = {goal, 1, QB_NONE};
  uint32_t goal_lit = qb_lit_add(b, rel, k, &g, 1);
  qb_add_facts(b, b->st->ge_facts, SC_SYM_REL_GE);
  qb_add_facts(b, b->st->eq_facts, SC_SYM_REL_EQ);
  qb_add_facts(b, b->st->ne_facts, SC_SYM_REL_NE);
  /* an assumption such as "(T + U) % 2 == 0" replaced an opaque atom by a
   * value: it is a fact about the atom's operands, kept here (a symbol's
   * own atoms, replaced or rescaled, never occur in fresh forms) */
  for (uint32_t i = 0; i < b->st->atoms->len && !b->failed; i++) {
    const sc_sym_atom *a = sc_sym_atom_get(b->st, i);
    if (a->kind == SC_ATOM_SYM || !a->has_subst)
      continue;
    sc_dim x = {0, a->self};
    qb_part e[2] = {{x, 1, QB_NONE}, {sc_sym_refresh(b->st, a->subst), -1, QB_NONE}};
    qb_unit(b, SC_SYM_REL_EQ, e, 2);
  }
  for (uint32_t i = 0; i < b->todo->len && !b->failed; i++)
    qb_define(b, g_array_index(b->todo, uint32_t, i));
  uint32_t defined = b->todo->len;
  qb_congruence(b);
  /* the pairs' operands were defined above; an atom they would add is
   * defined here */
  for (uint32_t i = defined; i < b->todo->len && !b->failed; i++)
    qb_define(b, g_array_index(b->todo, uint32_t, i));
  if (b->failed)
    return FALSE;
  const sc_sym_qfactor *factors = (const sc_sym_qfactor *)(void *)b->factors->data;
  b->qterms = g_new0(sc_sym_qterm, MAX(b->terms->len, 1));
  for (uint32_t i = 0; i < b->terms->len; i++) {
    const qb_term *t = &g_array_index(b->terms, qb_term, i);
    b->qterms[i] = (sc_sym_qterm){t->c, t->nf, t->nf ? factors + t->f0 : NULL};
  }
  b->qlits = g_new0(sc_sym_qlit, b->lits->len);
  for (uint32_t i = 0; i < b->lits->len; i++) {
    const qb_lit *l = &g_array_index(b->lits, qb_lit, i);
    b->qlits[i].rel = l->rel;
    b->qlits[i].k = l->k;
    b->qlits[i].p.n_terms = l->nt;
    b->qlits[i].p.terms = l->nt ? b->qterms + l->t0 : NULL;
  }
  b->qclauses = g_new0(sc_sym_qclause, MAX(b->clauses->len, 1));
  for (uint32_t i = 0; i < b->clauses->len; i++) {
    const qb_clause *c = &g_array_index(b->clauses, qb_clause, i);
    b->qclauses[i] = (sc_sym_qclause){c->nl, b->qlits + c->l0};
  }
  memset(q, 0, sizeof *q);
  q->n_vars = b->vars->len;
  q->vars = (const sc_sym_qvar *)(void *)b->vars->data;
  q->n_clauses = b->clauses->len;
  q->clauses = b->qclauses;
  q->goal = b->qlits[goal_lit];
  q->nonlinear = b->nonlinear;
  b->key = sc_sym_query_to_string(q);
  q->key = b->key;
  return TRUE;
}

static void print_poly(GString *s, const sc_sym_query *q, const sc_sym_qpoly *p) {
  if (p->n_terms == 0) {
    g_string_append_c(s, '0');
    return;
  }
  for (uint32_t i = 0; i < p->n_terms; i++) {
    const sc_sym_qterm *t = &p->terms[i];
    uint64_t mag = t->coeff < 0 ? (uint64_t)0 - (uint64_t)t->coeff : (uint64_t)t->coeff;
    if (i == 0)
      g_string_append(s, t->coeff < 0 ? "-" : "");
    else
      g_string_append(s, t->coeff < 0 ? " - " : " + ");
    if (mag != 1 || t->n_factors == 0)
      g_string_append_printf(s, "%" G_GUINT64_FORMAT "%s", mag, t->n_factors ? "*" : "");
    for (uint32_t j = 0; j < t->n_factors; j++) {
      const sc_sym_qfactor *f = &t->factors[j];
      const char *name = f->var < q->n_vars ? q->vars[f->var].name : "?";
      g_string_append_printf(s, "%s%s", j ? "*" : "", name);
      if (f->exp != 1)
        g_string_append_printf(s, "^%u", f->exp);
    }
  }
}

static void print_lit(GString *s, const sc_sym_query *q, const sc_sym_qlit *l) {
  print_poly(s, q, &l->p);
  switch (l->rel) {
  case SC_SYM_REL_EQ:
    g_string_append(s, " == 0");
    break;
  case SC_SYM_REL_NE:
    g_string_append(s, " != 0");
    break;
  case SC_SYM_REL_GE:
    g_string_append(s, " >= 0");
    break;
  case SC_SYM_REL_DIV:
    g_string_append_printf(s, " %% %" G_GINT64_FORMAT " == 0", l->k);
    break;
  }
}

char *sc_sym_query_to_string(const sc_sym_query *q) {
  g_return_val_if_fail(q != NULL, NULL);
  GString *s = g_string_new(NULL);
  for (uint32_t i = 0; i < q->n_vars; i++) {
    const sc_sym_qvar *v = &q->vars[i];
    g_string_append_printf(s, "var %s", v->name);
    if (v->has_lo && v->has_hi)
      g_string_append_printf(s, " in [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", v->lo,
                             v->hi);
    else if (v->has_lo)
      g_string_append_printf(s, " >= %" G_GINT64_FORMAT, v->lo);
    else if (v->has_hi)
      g_string_append_printf(s, " <= %" G_GINT64_FORMAT, v->hi);
    g_string_append_c(s, '\n');
  }
  for (uint32_t i = 0; i < q->n_clauses; i++) {
    g_string_append(s, "assert ");
    for (uint32_t j = 0; j < q->clauses[i].n_lits; j++) {
      if (j)
        g_string_append(s, " or ");
      print_lit(s, q, &q->clauses[i].lits[j]);
    }
    g_string_append_c(s, '\n');
  }
  g_string_append(s, "goal ");
  print_lit(s, q, &q->goal);
  g_string_append_c(s, '\n');
  return g_string_free(s, FALSE);
}

/* Puts "goal REL 0" (GOAL fresh, not overflowed) to the oracle. */
static sc_truth consult(sc_symtab *st, sc_sym_rel rel, sc_dim goal, int64_t k) {
  st->stats.oracle_queries++;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  qb b;
  qb_init(&b, st);
  sc_sym_query q;
  gboolean built = qb_build(&b, rel, goal, k, &q) && !sc_sym_overflow;
  sc_sym_overflow = saved;
  sc_truth r = SC_UNKNOWN;
  if (!built) {
    st->stats.skipped++;
    qb_clear(&b);
    return SC_UNKNOWN;
  }
  if (!st->oracle_cache)
    st->oracle_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  gpointer cached = g_hash_table_lookup(st->oracle_cache, q.key);
  if (cached) {
    st->stats.cache_hits++;
    qb_clear(&b);
    return (sc_truth)(GPOINTER_TO_INT(cached) - 1);
  }
  gint64 t0 = g_get_monotonic_time();
  r = st->oracle.decide(st->oracle_user, &q);
  st->stats.oracle_us += (uint64_t)MAX(g_get_monotonic_time() - t0, 0);
  st->stats.oracle_calls++;
  if (r == SC_YES) {
    st->stats.oracle_yes++;
  } else if (r == SC_NO) {
    st->stats.oracle_no++;
  } else {
    r = SC_UNKNOWN;
    st->stats.oracle_unknown++;
  }
  if (g_hash_table_size(st->oracle_cache) >= ORACLE_CACHE_MAX)
    g_hash_table_remove_all(st->oracle_cache);
  g_hash_table_insert(st->oracle_cache, b.key, GINT_TO_POINTER((int)r + 1));
  b.key = NULL; /* now the cache's */
  qb_clear(&b);
  return r;
}

/* The normal form said NF about "goal REL 0"; VALID is FALSE when the goal
 * could not be formed (overflow), which the oracle is not asked about. */
static sc_truth after_nf(sc_symtab *st, sc_truth nf, gboolean valid, sc_sym_rel rel,
                         sc_dim goal, int64_t k) {
  st->stats.comparisons++;
  if (nf != SC_UNKNOWN)
    return nf;
  st->stats.nf_unknown++;
  if (!valid || !st->oracle.decide)
    return SC_UNKNOWN;
  return consult(st, rel, goal, k);
}

/* ---- satisfiability of the assumptions ------------------------------ *
 *
 * sc_symtab_assume finds the contradictions its decisions see; the rest
 * (nonlinear ones) are put to the oracle once, after the last assumption
 * (sym.h).  The context is qb_build's, with the goal 0 >= 0.  Nothing is
 * asked when only bounds are left: the bounds of each symbol's atom are a
 * non-empty interval (sc_symtab_assume checks that), and without facts, or
 * opaque atoms bounded or replaced by values, nothing ties the symbols to
 * each other, so any point of the box is a solution. */

/* Is anything left that ties the symbols together? */
static gboolean constraints_left(const sc_symtab *st) {
  if (st->ge_facts->len || st->eq_facts->len || st->ne_facts->len)
    return TRUE;
  for (uint32_t i = 0; i < st->atoms->len; i++) {
    const sc_sym_atom *a = sc_sym_atom_get(st, i);
    if (a->kind != SC_ATOM_SYM && (a->has_subst || a->has_lo || a->has_hi))
      return TRUE;
  }
  return FALSE;
}

sc_truth sc_symtab_satisfiable(sc_symtab *st) {
  SC_SYM_LOCKED(st);
  g_return_val_if_fail(st != NULL, SC_UNKNOWN);
  if (st->contradiction)
    return SC_NO;
  if (st->texts->len == 0)
    return SC_YES;
  if (st->facts_epoch != st->epoch) {
    sc_sym_facts_update(st);
    if (st->contradiction)
      return SC_NO;
  }
  if (!constraints_left(st))
    return SC_YES;
  if (!st->oracle.satisfiable)
    return SC_UNKNOWN;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  qb b;
  qb_init(&b, st);
  sc_sym_query q;
  gboolean built = qb_build(&b, SC_SYM_REL_GE, sc_dim_const(0), 0, &q) && !sc_sym_overflow;
  sc_sym_overflow = saved;
  sc_truth r = built ? st->oracle.satisfiable(st->oracle_user, &q) : SC_UNKNOWN;
  qb_clear(&b);
  return r == SC_YES || r == SC_NO ? r : SC_UNKNOWN;
}

void sc_symtab_set_oracle(sc_symtab *st, const sc_sym_oracle *oracle, void *user) {
  SC_SYM_LOCKED(st);
  g_return_if_fail(st != NULL);
  if (oracle && oracle->decide) {
    st->oracle = *oracle;
    st->oracle_user = user;
  } else {
    memset(&st->oracle, 0, sizeof st->oracle);
    st->oracle_user = NULL;
  }
  if (st->oracle_cache)
    g_hash_table_remove_all(st->oracle_cache);
}

void sc_sym_oracle_clear(sc_symtab *st) {
  if (st->oracle_cache)
    g_hash_table_destroy(st->oracle_cache);
  st->oracle_cache = NULL;
}

void sc_symtab_stats(const sc_symtab *st, sc_sym_stats *stats) {
  SC_SYM_LOCKED(st);
  g_return_if_fail(st != NULL && stats != NULL);
  *stats = st->stats;
}

void sc_symtab_work(const sc_symtab *st, sc_sym_work *work) {
  SC_SYM_LOCKED(st);
  g_return_if_fail(st != NULL && work != NULL);
  *work = st->work;
}

char *sc_sym_stats_to_string(const sc_sym_stats *s) {
  g_return_val_if_fail(s != NULL, NULL);
  return g_strdup_printf("comparisons %" G_GUINT64_FORMAT ", normal form unknown %" G_GUINT64_FORMAT
                         ", oracle queries %" G_GUINT64_FORMAT " (cache hits %" G_GUINT64_FORMAT
                         ", calls %" G_GUINT64_FORMAT ": yes %" G_GUINT64_FORMAT
                         ", no %" G_GUINT64_FORMAT ", unknown %" G_GUINT64_FORMAT
                         "), skipped %" G_GUINT64_FORMAT ", oracle time %.3f s",
                         s->comparisons, s->nf_unknown, s->oracle_queries, s->cache_hits,
                         s->oracle_calls, s->oracle_yes, s->oracle_no, s->oracle_unknown,
                         s->skipped, (double)s->oracle_us / 1e6);
}

/* ---- the public comparisons ----------------------------------------- *
 *
 * Concrete operands are answered without touching the symtab; symbolic ones
 * through q = difference, by the normal form and then the oracle. */

sc_truth sc_dim_eq(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly && !b.poly)
    return a.value == b.value ? SC_YES : SC_NO;
  SC_SYM_LOCKED(st);
  if (sc_dim_identical(a, b))
    return SC_YES;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_dim q = sc_dim_sub(st, a, b);
  gboolean valid = !sc_sym_overflow;
  sc_truth r = valid ? sc_sym_eq0(st, q) : SC_UNKNOWN;
  r = after_nf(st, r, valid, SC_SYM_REL_EQ, q, 0);
  sc_sym_overflow = saved;
  return r;
}

sc_truth sc_dim_le(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly && !b.poly)
    return a.value <= b.value ? SC_YES : SC_NO;
  SC_SYM_LOCKED(st);
  if (sc_dim_identical(a, b))
    return SC_YES;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_dim q = sc_dim_sub(st, b, a);
  gboolean valid = !sc_sym_overflow;
  sc_truth r = valid ? sc_sym_ge0(st, q) : SC_UNKNOWN;
  r = after_nf(st, r, valid, SC_SYM_REL_GE, q, 0);
  sc_sym_overflow = saved;
  return r;
}

sc_truth sc_dim_lt(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly && !b.poly)
    return a.value < b.value ? SC_YES : SC_NO;
  SC_SYM_LOCKED(st);
  if (sc_dim_identical(a, b))
    return SC_NO;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_dim q = sc_dim_sub(st, sc_dim_sub(st, b, a), sc_dim_const(1));
  gboolean valid = !sc_sym_overflow;
  sc_truth r = valid ? sc_sym_ge0(st, q) : SC_UNKNOWN;
  r = after_nf(st, r, valid, SC_SYM_REL_GE, q, 0);
  sc_sym_overflow = saved;
  return r;
}

sc_truth sc_dim_divides(sc_symtab *st, sc_dim d, sc_dim a) {
  if (!a.poly && !d.poly) {
    if (d.value == 0)
      return a.value == 0 ? SC_YES : SC_NO;
    return sc_sym_py_mod(a.value, d.value) == 0 ? SC_YES : SC_NO;
  }
  SC_SYM_LOCKED(st);
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_dim m, goal;
  sc_sym_rel rel = SC_SYM_REL_EQ;
  int64_t k = 0;
  sc_truth r;
  if (!sc_dim_mod(st, a, d, &m)) {
    goal = sc_sym_refresh(st, a); /* 0 divides only 0 */
    r = sc_sym_eq0(st, goal);
  } else {
    r = sc_sym_eq0(st, m);
    goal = m;
    if (!d.poly && d.value != INT64_MIN) {
      /* a constant divisor: ask "a % |k| == 0" of a itself */
      rel = SC_SYM_REL_DIV;
      k = d.value < 0 ? -d.value : d.value;
      goal = sc_sym_refresh(st, a);
    }
  }
  gboolean valid = !sc_sym_overflow;
  if (!valid)
    r = SC_UNKNOWN;
  r = after_nf(st, r, valid, rel, goal, k);
  sc_sym_overflow = saved;
  return r;
}

/* ---- assumptions ----------------------------------------------------- */

static gboolean fail_false(const char *text, GError **error) {
  g_set_error(error, SC_SYM_ERROR, SC_SYM_ERROR_CONTRADICTION, "assumption is false: %s", text);
  return FALSE;
}

static gboolean fail_contra(const char *text, GError **error) {
  g_set_error(error, SC_SYM_ERROR, SC_SYM_ERROR_CONTRADICTION,
              "assumption contradicts the symbol bounds or earlier assumptions: %s", text);
  return FALSE;
}

static gboolean assume_ge(sc_symtab *st, sc_dim p, const char *text, GError **error);

/* p >= 0 where nothing decided it: tighten one atom's bounds or keep it.
 * p may be stale (a fact added since, e.g. the first half of an equality,
 * can fold it to a constant): it is refreshed here, where it is read. */
static gboolean add_ge(sc_symtab *st, sc_dim p, const char *text, GError **error) {
  p = sc_sym_refresh(st, p);
  if (!p.poly)
    return p.value >= 0 ? TRUE : fail_contra(text, error);
  const sc_sym_poly *q = p.poly;
  gboolean linear1 = q->n <= 2 && q->t[0].m->n == 1 && q->t[0].m->f[0].exp == 1 &&
                     (q->n == 1 || q->t[1].m->n == 0);
  if (linear1) {
    sc_sym_atom *a = g_ptr_array_index(st->atoms, q->t[0].m->f[0].atom);
    int64_t c = q->t[0].c, d = q->n == 2 ? q->t[1].c : 0;
    if (c > 0) {
      /* c*X + d >= 0  <=>  X >= ceil(-d / c) == -floor(d / c) */
      int64_t fl = sc_sym_py_floordiv(st, d, c);
      if (fl != INT64_MIN) {
        int64_t lo = -fl;
        if (!a->has_lo || lo > a->lo) {
          a->has_lo = TRUE;
          a->lo = lo;
        }
        goto tightened;
      }
    } else if (c != INT64_MIN) {
      /* X <= floor(d / -c) */
      int64_t hi = sc_sym_py_floordiv(st, d, -c);
      if (!a->has_hi || hi < a->hi) {
        a->has_hi = TRUE;
        a->hi = hi;
      }
      goto tightened;
    }
  }
  g_array_append_val(st->ge_facts, p);
  sc_sym_bump(st);
  return TRUE;
tightened:
  sc_sym_bump(st);
  {
    const sc_sym_atom *a = sc_sym_atom_get(st, q->t[0].m->f[0].atom);
    if (a->has_lo && a->has_hi && a->lo > a->hi)
      return fail_contra(text, error);
  }
  return TRUE;
}

static gboolean assume_ge(sc_symtab *st, sc_dim p, const char *text, GError **error) {
  p = sc_sym_refresh(st, p);
  if (!p.poly)
    return p.value >= 0 ? TRUE : fail_false(text, error);
  sc_truth t = sc_sym_ge0(st, p);
  if (t == SC_NO)
    return fail_contra(text, error);
  if (t == SC_YES)
    return TRUE;
  return add_ge(st, p, text, error);
}

/* The atom's bounds become facts on its new value. */
static gboolean bounds_to_facts(sc_symtab *st, gboolean has_lo, int64_t lo, gboolean has_hi,
                                int64_t hi, sc_dim v, const char *text, GError **error) {
  if (has_lo && !assume_ge(st, sc_dim_sub(st, v, sc_dim_const(lo)), text, error))
    return FALSE;
  if (has_hi && !assume_ge(st, sc_dim_sub(st, sc_dim_const(hi), v), text, error))
    return FALSE;
  return TRUE;
}

static gboolean substitute(sc_symtab *st, uint32_t id, sc_dim v, const char *text,
                           GError **error) {
  sc_sym_atom *a = g_ptr_array_index(st->atoms, id);
  a->has_subst = TRUE;
  a->subst = v;
  sc_sym_bump(st);
  if (!v.poly && ((a->has_lo && v.value < a->lo) || (a->has_hi && v.value > a->hi)))
    return fail_contra(text, error);
  return bounds_to_facts(st, a->has_lo, a->lo, a->has_hi, a->hi, v, text, error);
}

/* Symbol atom X (symbol == m*X) gets X == k*X2: the symbol is a multiple
 * of m*k.  Returns FALSE without error when m*k overflows (not done). */
static gboolean rescale(sc_symtab *st, uint32_t id, int64_t k, const char *text,
                        GError **error, gboolean *done) {
  const sc_sym_atom *x = sc_sym_atom_get(st, id);
  int64_t mk;
  *done = FALSE;
  if (__builtin_mul_overflow(x->scale, k, &mk))
    return TRUE;
  sc_sym_atom key;
  memset(&key, 0, sizeof key);
  key.kind = SC_ATOM_SYM;
  key.sym = x->sym;
  key.scale = mk;
  uint32_t id2 = sc_sym_atom_intern(st, &key);
  sc_sym_atom *x2 = g_ptr_array_index(st->atoms, id2);
  x = sc_sym_atom_get(st, id); /* the atoms array may have grown */
  if (x->has_lo) {
    int64_t lo = sc_sym_py_floordiv(st, x->lo, k), lok;
    if (__builtin_mul_overflow(lo, k, &lok) || lok < x->lo)
      lo++;
    x2->has_lo = TRUE;
    x2->lo = lo;
  }
  if (x->has_hi) {
    x2->has_hi = TRUE;
    x2->hi = sc_sym_py_floordiv(st, x->hi, k);
  }
  sc_sym_symbol *s = g_ptr_array_index(st->symbols, x->sym);
  s->atom = id2;
  s->scale = mk;
  sc_sym_atom *xm = g_ptr_array_index(st->atoms, id);
  xm->has_subst = TRUE;
  sc_dim d2 = {0, x2->self};
  xm->subst = sc_sym_scale(st, d2, k);
  sc_sym_bump(st);
  *done = TRUE;
  if (x2->has_lo && x2->has_hi && x2->lo > x2->hi)
    return fail_contra(text, error);
  return TRUE;
}

static gboolean assume_eq(sc_symtab *st, sc_dim p, const char *text, GError **error) {
  p = sc_sym_refresh(st, p);
  if (!p.poly)
    return p.value == 0 ? TRUE : fail_false(text, error);
  sc_truth t = sc_sym_eq0(st, p);
  if (t == SC_NO)
    return fail_contra(text, error);
  if (t == SC_YES)
    return TRUE;
  int64_t g = sc_sym_content(p);
  if (g > 1)
    p = sc_sym_div_exact(st, p, g);
  if (p.poly->t[0].c < 0)
    p = sc_sym_scale(st, p, -1);
  const sc_sym_poly *q = p.poly;

  /* "S % k == 0": q is exactly mod(c*X, k) with gcd(c, k) == 1 */
  if (q->n == 1 && q->t[0].c == 1 && q->t[0].m->n == 1 && q->t[0].m->f[0].exp == 1) {
    const sc_sym_atom *m = sc_sym_atom_get(st, q->t[0].m->f[0].atom);
    if (m->kind == SC_ATOM_MOD && !m->b.poly && m->b.value > 1 && m->a.poly &&
        m->a.poly->n == 1 && m->a.poly->t[0].m->n == 1 && m->a.poly->t[0].m->f[0].exp == 1 &&
        sc_sym_gcd64(m->a.poly->t[0].c, m->b.value) == 1) {
      uint32_t xid = m->a.poly->t[0].m->f[0].atom;
      const sc_sym_atom *x = sc_sym_atom_get(st, xid);
      if (x->kind == SC_ATOM_SYM && !x->has_subst) {
        gboolean done;
        if (!rescale(st, xid, m->b.value, text, error, &done))
          return FALSE;
        if (done)
          return TRUE;
      }
    }
  }

  /* Substitution: an atom alone in a term, of a coefficient dividing all
   * others, occurring nowhere else.  Prefer the latest-declared symbol. */
  int best = -1;
  int64_t best_rank = -1;
  for (uint32_t i = 0; i < q->n; i++) {
    const sc_sym_mono *m = q->t[i].m;
    if (m->n != 1 || m->f[0].exp != 1)
      continue;
    int64_t c = q->t[i].c;
    if (c == INT64_MIN)
      continue;
    uint32_t xid = m->f[0].atom;
    gboolean ok = TRUE;
    for (uint32_t j = 0; j < q->n && ok; j++) {
      if (j == i)
        continue;
      if (!sc_sym_divisible(q->t[j].c, c) || (c == -1 && q->t[j].c == INT64_MIN))
        ok = FALSE;
      sc_sym_term tj = q->t[j];
      for (uint32_t f = 0; f < tj.m->n && ok; f++) {
        uint32_t aid = tj.m->f[f].atom;
        if (aid == xid) {
          ok = FALSE;
        } else {
          const sc_sym_atom *o = sc_sym_atom_get(st, aid);
          if (o->kind != SC_ATOM_SYM &&
              (sc_sym_occurs(st, o->a, xid) || sc_sym_occurs(st, o->b, xid)))
            ok = FALSE;
        }
      }
    }
    if (!ok)
      continue;
    const sc_sym_atom *x = sc_sym_atom_get(st, xid);
    int64_t rank = x->kind == SC_ATOM_SYM ? (int64_t)x->sym + 1 : 0;
    if (rank > best_rank) {
      best = (int)i;
      best_rank = rank;
    }
  }
  if (best >= 0) {
    const sc_sym_term *tb = &q->t[best];
    uint32_t xid = tb->m->f[0].atom;
    int64_t c = tb->c;
    sc_dim x = {0, sc_sym_atom_get(st, xid)->self};
    /* c*X + rest == 0  =>  X == -rest / c */
    sc_dim rest = sc_dim_sub(st, p, sc_sym_scale(st, x, c));
    sc_dim v = c > 0 ? sc_sym_div_exact(st, sc_sym_scale(st, rest, -1), c)
                     : sc_sym_div_exact(st, rest, -c);
    /* X must not occur in its own value.  It can when X refreshes to
     * something else than itself here (1/S folds to 0 once S >= 2 is
     * decided, while p's refresh of this epoch kept 1/S), so that rest
     * still holds c*X (fuzz-sym, issue 19: X == 1 - X - 4/T looped the
     * interval walk).  Then p stays a fact instead. */
    if (!sc_sym_occurs(st, v, xid))
      return substitute(st, xid, v, text, error);
  }

  g_array_append_val(st->eq_facts, p);
  sc_sym_bump(st);
  if (!add_ge(st, p, text, error) || !add_ge(st, sc_dim_neg(st, p), text, error))
    return FALSE;
  /* the facts just added can decide p itself (S > (1/S/S)*T makes S >= 2,
   * so 1/S == 0 and p folds to -1): then the equality is a contradiction */
  sc_dim now = sc_sym_refresh(st, p);
  if (!now.poly && now.value != 0)
    return fail_contra(text, error);
  return TRUE;
}

static gboolean assume_rel(sc_symtab *st, sc_dim a, const char *op, sc_dim b,
                           const char *text, GError **error);

/* The relation, then the facts rewritten for the epoch it made: a fact that
 * becomes false there (S > (1/S/S)*T and (1/S/S)*T == 1 give S >= 2, where
 * both read -1 >= 0) is a contradiction of this assumption. */
gboolean sc_sym_assume_rel(sc_symtab *st, sc_dim a, const char *op, sc_dim b,
                           const char *text, GError **error) {
  if (!assume_rel(st, a, op, b, text, error))
    return FALSE;
  if (st->facts_epoch != st->epoch) {
    sc_sym_facts_update(st);
    facts_check(st);
  }
  if (st->contradiction)
    return fail_contra(text, error);
  return TRUE;
}

static gboolean assume_rel(sc_symtab *st, sc_dim a, const char *op, sc_dim b,
                           const char *text, GError **error) {
  a = sc_sym_refresh(st, a);
  b = sc_sym_refresh(st, b);
  if (strcmp(op, "==") == 0)
    return assume_eq(st, sc_dim_sub(st, a, b), text, error);
  if (strcmp(op, "!=") == 0) {
    sc_dim p = sc_dim_sub(st, a, b);
    if (!p.poly)
      return p.value != 0 ? TRUE : fail_false(text, error);
    sc_truth t = sc_sym_eq0(st, p);
    if (t == SC_YES)
      return fail_contra(text, error);
    if (t == SC_UNKNOWN) {
      g_array_append_val(st->ne_facts, p);
      sc_sym_bump(st);
    }
    return TRUE;
  }
  sc_dim p;
  if (strcmp(op, "<=") == 0)
    p = sc_dim_sub(st, b, a);
  else if (strcmp(op, ">=") == 0)
    p = sc_dim_sub(st, a, b);
  else if (strcmp(op, "<") == 0)
    p = sc_dim_sub(st, sc_dim_sub(st, b, a), sc_dim_const(1));
  else if (strcmp(op, ">") == 0)
    p = sc_dim_sub(st, sc_dim_sub(st, a, b), sc_dim_const(1));
  else
    g_return_val_if_reached(FALSE);
  return assume_ge(st, p, text, error);
}
