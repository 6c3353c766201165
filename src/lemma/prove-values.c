/* prove-values.c — value equality for all sizes of pure layout lemmas
 * (prove-private.h, lemprove.h "Values").
 *
 * Both sides of a layout lemma are index maps: an output index picks one
 * element of one tensor variable (at an input index), or a pad's fill
 * value.  On a run whose typing obligation holds, the output index is a
 * vector of fresh symbols o0..o{r-1} assumed in bounds (0 <= o_j <= size_j
 * - 1 of the left side's type); each side is walked from its root to its
 * leaves, every operator rewriting the index (cat: which part, by
 * comparing the index with the parts' running offsets; slice: an affine
 * shift start + o*step; chunk: the same with the ceil-divided part size;
 * permute/transpose: a reorder; unsqueeze/squeeze/select/unbind/stack: an
 * index dropped or inserted; expand: 0 where the operand's size is 1; pad:
 * a shift, or the fill value outside; a view whose non-1 sizes match one
 * to one, split one input dim into several (the input index is the
 * linearised output index: a polynomial) or merge several into one (the
 * digits of the output index in their mixed radix); repeat: the index
 * modulo the size; repeat_interleave: the index divided by the count;
 * roll: the index minus the shift, modulo the size).  A division or
 * modulo is affine per piece where the sizes decide it (a count of 1, a
 * rotated index within one period), else a quotient and a remainder
 * symbol with their Euclidean definition assumed (div_mod).  Every
 * comparison goes through the run's symtab and its oracle, so that one
 * neither decides splits the path (prove-path.c; one over a division
 * that the oracle's query cannot write splits on the comparison's own
 * text, ask()): on a complete path each side is one (variable, index) or
 * one fill value, and the obligation is that both pick the same variable
 * with every index component provably equal (or equal fill values).
 *
 * Not handled (NOT_PROVABLE, never a guess): a view that regroups dims
 * other than by a split or a merge, a dim or list argument that is not a
 * constant, repeat_interleave without a dim, roll without dims, any
 * operator outside the table below (the lemma is then not a layout lemma
 * at all: sc_lp_values_applies).
 *
 * Invariant: an index component is always an sc_dim of the run's symtab;
 * a side's walk assumes nothing but the definitions of its division
 * symbols (which hold for exactly one q and r), it only asks. */
#include "lemma/prove-private.h"

#include <string.h>

typedef enum {
  LO_IDENTITY,
  LO_TRANSPOSE,
  LO_T,
  LO_PERMUTE,
  LO_UNSQUEEZE,
  LO_SQUEEZE,
  LO_SLICE,
  LO_NARROW,
  LO_SELECT,
  LO_CAT,
  LO_STACK,
  LO_SPLIT,
  LO_SPLIT_SIZES,
  LO_UNBIND,
  LO_EXPAND,
  LO_VIEW,
  LO_FLIP,
  LO_PAD,
  LO_CHUNK,
  LO_REPEAT,
  LO_REPEAT_INTERLEAVE,
  LO_ROLL,
  LO_NONE,
} lop;

/* The layout operators by qualified name ("_copy" variants with them). */
static lop layout_op(const sc_op *op) {
  static const struct {
    const char *qual;
    lop kind;
  } table[] = {
      {"aten.clone.default", LO_IDENTITY},
      {"aten.detach.default", LO_IDENTITY},
      {"aten.alias.default", LO_IDENTITY},
      {"aten.lift_fresh_copy.default", LO_IDENTITY},
      {"_c10d_functional.wait_tensor.default", LO_IDENTITY},
      {"aten.transpose.int", LO_TRANSPOSE},
      {"aten.transpose_copy.int", LO_TRANSPOSE},
      {"sc.transpose.default", LO_TRANSPOSE},
      {"aten.t.default", LO_T},
      {"aten.t_copy.default", LO_T},
      {"aten.permute.default", LO_PERMUTE},
      {"aten.permute_copy.default", LO_PERMUTE},
      {"sc.permute.default", LO_PERMUTE},
      {"aten.unsqueeze.default", LO_UNSQUEEZE},
      {"aten.unsqueeze_copy.default", LO_UNSQUEEZE},
      {"aten.squeeze.default", LO_SQUEEZE},
      {"aten.squeeze.dim", LO_SQUEEZE},
      {"aten.squeeze.dims", LO_SQUEEZE},
      {"aten.squeeze_copy.dim", LO_SQUEEZE},
      {"aten.slice.Tensor", LO_SLICE},
      {"aten.slice_copy.Tensor", LO_SLICE},
      {"sc.slice.default", LO_SLICE},
      {"aten.narrow.default", LO_NARROW},
      {"aten.select.int", LO_SELECT},
      {"aten.select_copy.int", LO_SELECT},
      {"aten.cat.default", LO_CAT},
      {"sc.cat.default", LO_CAT},
      {"aten.stack.default", LO_STACK},
      {"aten.split.Tensor", LO_SPLIT},
      {"aten.split_with_sizes.default", LO_SPLIT_SIZES},
      {"aten.unbind.int", LO_UNBIND},
      {"aten.expand.default", LO_EXPAND},
      {"aten.expand_copy.default", LO_EXPAND},
      {"aten.expand_as.default", LO_EXPAND},
      {"aten.view.default", LO_VIEW},
      {"aten.view_copy.default", LO_VIEW},
      {"aten._unsafe_view.default", LO_VIEW},
      {"aten.reshape.default", LO_VIEW},
      {"aten._reshape_alias.default", LO_VIEW},
      {"sc.view.default", LO_VIEW},
      {"aten.flatten.using_ints", LO_VIEW},
      {"aten.unflatten.int", LO_VIEW},
      {"aten.flip.default", LO_FLIP},
      {"aten.constant_pad_nd.default", LO_PAD},
      {"aten.chunk.default", LO_CHUNK},
      {"aten.repeat.default", LO_REPEAT},
      {"aten.repeat_interleave.self_int", LO_REPEAT_INTERLEAVE},
      {"aten.roll.default", LO_ROLL},
  };
  g_autofree char *key = g_strdup_printf("%s.%s.%s", op->ns, op->name, op->overload);
  for (guint i = 0; i < G_N_ELEMENTS(table); i++)
    if (strcmp(key, table[i].qual) == 0)
      return table[i].kind;
  return LO_NONE;
}

static const char *first_non_layout(const pnode *p) {
  if (p == NULL || p->is_var)
    return NULL;
  if (layout_op(p->op) == LO_NONE)
    return p->op->qualname;
  for (uint32_t i = 0; i < p->n_kids; i++) {
    const char *n = first_non_layout(p->kids[i]);
    if (n)
      return n;
  }
  return NULL;
}

gboolean sc_lp_values_applies(const ld_checked *k) {
  return first_non_layout(k->lhs) == NULL && first_non_layout(k->rhs) == NULL;
}

/* ------------------------------------------------------------------------ */
/* Index maps                                                                */

typedef struct {
  gboolean fill;
  uint32_t var;
  uint32_t rank;
  sc_dim idx[SC_MAX_RANK];
  sc_value value; /* fill: the pad's value (a copy) */
} vtarget;

/* T as a decision; FALSE when undecided (the wrapped oracle has set the
 * run's branch, or the run is stuck). */
static gboolean decided(prun *P, sc_truth t, gboolean *out, const char *what) {
  if (P->branch || P->stuck)
    return FALSE;
  if (t == SC_UNKNOWN) {
    P->stuck = g_strdup_printf("values: %s is undecided", what);
    return FALSE;
  }
  *out = t == SC_YES;
  return TRUE;
}

typedef enum { ASK_LT, ASK_LE, ASK_EQ } ask_rel;

/* A < B, A <= B or A == B as a decision, as decided() does.  One that
 * neither the normal form nor the oracle decides over a floor division or
 * modulo (the digits of a merged view's index, a tiling, a rotation) has
 * no assumption text from the oracle's query: the path splits on the
 * comparison itself, written with the dims' own texts, which the symtab
 * parses back to the same atoms (a case split is sound whatever it
 * splits on). */
static gboolean ask(prun *P, ask_rel rel, sc_dim a, sc_dim b, gboolean *out, const char *what) {
  static const char *const ops[][2] = {{"<", ">="}, {"<=", ">"}, {"==", "!="}};
  if (P->branch || P->stuck)
    return FALSE;
  sc_truth t = rel == ASK_LT   ? sc_dim_lt(P->st, a, b)
               : rel == ASK_LE ? sc_dim_le(P->st, a, b)
                               : sc_dim_eq(P->st, a, b);
  if (t == SC_UNKNOWN && P->opaque && P->branch == NULL) {
    g_autofree char *x = sc_dim_to_string(P->st, a), *y = sc_dim_to_string(P->st, b);
    g_clear_pointer(&P->stuck, g_free);
    P->opaque = FALSE;
    sc_lp_split_on(P, g_strdup_printf("%s %s %s", x, ops[rel][0], y),
                   g_strdup_printf("%s %s %s", x, ops[rel][1], y));
    return FALSE;
  }
  return decided(P, t, out, what);
}

static const sc_value *arg_named(const sc_op *op, const sc_value *args, const char *name) {
  for (uint32_t a = 0; a < op->n_args; a++)
    if (strcmp(op->args[a].name, name) == 0)
      return &args[a];
  return NULL;
}

/* A dim argument: a constant in [-rank, rank) (rank 0 counts as 1). */
static gboolean const_dim(prun *P, const sc_value *v, uint32_t rank, uint32_t *out) {
  int64_t r = rank ? rank : 1;
  if (v == NULL || v->kind != SC_VAL_INT || !sc_dim_is_const(v->u.i) || v->u.i.value < -r ||
      v->u.i.value >= r) {
    if (P->stuck == NULL)
      P->stuck = g_strdup("values: a dim argument that is not a constant in range");
    return FALSE;
  }
  *out = (uint32_t)(v->u.i.value < 0 ? v->u.i.value + r : v->u.i.value);
  return TRUE;
}

static void drop_at(sc_dim *idx, uint32_t *rank, uint32_t d) {
  for (uint32_t j = d; j + 1 < *rank; j++)
    idx[j] = idx[j + 1];
  (*rank)--;
}

static void insert_at(sc_dim *idx, uint32_t *rank, uint32_t d, sc_dim v) {
  for (uint32_t j = *rank; j > d; j--)
    idx[j] = idx[j - 1];
  idx[d] = v;
  (*rank)++;
}

/* X normalised as ATen does for a position in a dim of SIZE (X < 0: X +
 * SIZE), then clamped to [LO, SIZE] when CLAMP. */
static gboolean norm_pos(prun *P, sc_dim x, sc_dim size, gboolean clamp, sc_dim lo,
                         sc_dim *out) {
  gboolean neg;
  if (!ask(P, ASK_LT, x, sc_dim_const(0), &neg, "the sign of a position"))
    return FALSE;
  if (neg)
    x = sc_dim_add(P->st, x, size);
  if (clamp) {
    gboolean below, above;
    if (!ask(P, ASK_LT, x, lo, &below, "a clamp"))
      return FALSE;
    if (below)
      x = lo;
    else {
      if (!ask(P, ASK_LT, size, x, &above, "a clamp"))
        return FALSE;
      if (above)
        x = size;
    }
  }
  *out = x;
  return TRUE;
}

static gboolean is_one(prun *P, sc_dim d, gboolean *out) {
  if (sc_dim_is_const(d)) {
    *out = d.value == 1;
    return TRUE;
  }
  return ask(P, ASK_EQ, d, sc_dim_const(1), out, "whether a size is 1");
}

#define N_DIVS 16

/* The floor division (or modulo) of index arithmetic A by B, a size or a
 * count (>= 1 on every path), as a piece where the map is affine: fresh
 * symbols q (dq<n>) and r (dm<n>) with a == b*q + r and 0 <= r <= b - 1
 * assumed, which determine them (q = a // b, r = a % b, Python's floor
 * semantics).  The same A and B (by their texts) give the same symbols in
 * a run, so that both sides' digits compare equal; comparisons over q and
 * r are polynomial, split like any other. */
/* A division of A by B whose dividend differs from one already made, a',
 * by a multiple k*B (the normal form divides exactly, no question asked):
 * A // B = a' // B + k and A % B = a' % B. */
static gboolean shifted_div(prun *P, sc_dim a, sc_dim b, const char *bt, gboolean mod,
                            sc_dim *out) {
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init(&it, P->divs);
  while (g_hash_table_iter_next(&it, &key, &val)) {
    const char *bar = strrchr(key, '|');
    if (strcmp(bar + 1, bt) != 0)
      continue;
    g_autofree char *prev_text = g_strndup(key, (gsize)(bar - (const char *)key));
    sc_dim prev, k;
    if (!sc_dim_parse(P->st, prev_text, &prev, NULL))
      continue;
    sc_dim d = sc_dim_sub(P->st, a, prev);
    if (!sc_dim_floordiv(P->st, d, b, &k))
      continue;
    sc_dim rest = sc_dim_sub(P->st, d, sc_dim_mul(P->st, b, k));
    if (!sc_dim_is_const(rest) || rest.value != 0)
      continue;
    char name[16];
    g_snprintf(name, sizeof name, "%s%u", mod ? "dm" : "dq", GPOINTER_TO_UINT(val) - 1);
    sc_dim base;
    if (!sc_dim_symbol(P->st, name, &base, NULL))
      continue;
    *out = mod ? base : sc_dim_add(P->st, base, k);
    return TRUE;
  }
  return FALSE;
}

static gboolean div_mod(prun *P, sc_dim a, sc_dim b, gboolean mod, sc_dim *out);

/* A % B for a rotation's index A (the output index minus a shift): on the
 * paths where -B <= A < B the map is affine, A or A + B (the comparisons
 * split the path); elsewhere the division symbols of div_mod. */
static gboolean rot_mod(prun *P, sc_dim a, sc_dim b, sc_dim *out) {
  gboolean neg, in;
  if (!ask(P, ASK_LT, a, sc_dim_const(0), &neg, "the sign of a rotated index"))
    return FALSE;
  if (!neg) {
    if (!ask(P, ASK_LT, a, b, &in, "a rotated index"))
      return FALSE;
    *out = a;
  } else {
    if (!ask(P, ASK_LE, sc_dim_neg(P->st, b), a, &in, "a rotated index"))
      return FALSE;
    *out = sc_dim_add(P->st, a, b);
  }
  return in ? TRUE : div_mod(P, a, b, TRUE, out);
}

static gboolean div_mod(prun *P, sc_dim a, sc_dim b, gboolean mod, sc_dim *out) {
  if (sc_dim_is_const(b) && b.value == 1) {
    *out = mod ? sc_dim_const(0) : a;
    return TRUE;
  }
  g_autofree char *at = sc_dim_to_string(P->st, a), *bt = sc_dim_to_string(P->st, b);
  g_autofree char *key = g_strdup_printf("%s|%s", at, bt);
  if (P->divs == NULL)
    P->divs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  uint32_t n = GPOINTER_TO_UINT(g_hash_table_lookup(P->divs, key));
  if (n == 0 && shifted_div(P, a, b, bt, mod, out))
    return TRUE;
  if (n == 0) {
    n = g_hash_table_size(P->divs) + 1;
    if (n > N_DIVS) {
      if (P->stuck == NULL)
        P->stuck = g_strdup_printf("values: more than %u divisions of an index", N_DIVS);
      return FALSE;
    }
    g_autofree char *def = g_strdup_printf("%s == (%s)*dq%u + dm%u", at, bt, n - 1, n - 1);
    g_autofree char *rem = g_strdup_printf("dm%u <= %s - 1", n - 1, bt);
    g_autoptr(GError) err = NULL;
    if (!sc_symtab_assume(P->st, def, &err) || !sc_symtab_assume(P->st, rem, &err)) {
      if (P->stuck == NULL)
        P->stuck = g_strdup_printf("values: cannot assume the division %s: %s", def,
                                   err ? err->message : "?");
      return FALSE;
    }
    g_hash_table_insert(P->divs, g_steal_pointer(&key), GUINT_TO_POINTER(n));
  }
  char name[16];
  g_snprintf(name, sizeof name, "%s%u", mod ? "dm" : "dq", n - 1);
  return sc_dim_symbol(P->st, name, out, NULL);
}

/* The positions of the sizes of S that are not 1 (NN of them). */
static gboolean non_one(prun *P, const sc_shape *s, uint32_t *pos, uint32_t *nn) {
  *nn = 0;
  for (uint32_t j = 0; j < s->rank; j++) {
    gboolean one;
    if (!is_one(P, s->dims[j], &one))
      return FALSE;
    if (!one)
      pos[(*nn)++] = j;
  }
  return TRUE;
}

/* Does the product of the sizes of S at POS[a..a+len-1] equal WANT?  The
 * product in *PROD.  FALSE when undecided. */
static gboolean run_equals(prun *P, const sc_shape *s, const uint32_t *pos, uint32_t a,
                           uint32_t len, sc_dim want, gboolean *eq) {
  sc_dim prod = s->dims[pos[a]];
  for (uint32_t j = 1; j < len; j++)
    prod = sc_dim_mul(P->st, prod, s->dims[pos[a + j]]);
  return ask(P, ASK_EQ, prod, want, eq, "a view's sizes");
}

/* A view from IN to OUT (shapes): the input index of the output index
 * IDX.  The sizes that are not 1 are matched in groups, left to right: one
 * input size split into up to 4 consecutive output sizes (its index is the
 * linearised output index, a polynomial), or up to 4 consecutive input
 * sizes merged into one output size (their indices are the digits of the
 * output index in the mixed radix of their sizes: floor divisions and
 * modulos, which cvc5 decides with their definitions).  Input sizes 1
 * take index 0.  Any other regrouping is outside the method. */
static gboolean view_map(prun *P, const sc_shape *in, const sc_shape *out, sc_dim *idx,
                         uint32_t *rank) {
  uint32_t on[SC_MAX_RANK], nn, inn[SC_MAX_RANK], ni;
  if (!non_one(P, out, on, &nn) || !non_one(P, in, inn, &ni))
    return FALSE;
  sc_dim res[SC_MAX_RANK];
  for (uint32_t i = 0; i < in->rank; i++)
    res[i] = sc_dim_const(0);
  uint32_t k = 0, a = 0;
  while (a < ni) {
    if (k >= nn)
      break;
    gboolean eq = FALSE;
    uint32_t len;
    /* one input size split into out[on[k..k+len-1]] */
    for (len = 1; len <= 4 && k + len <= nn; len++) {
      if (!run_equals(P, out, on, k, len, in->dims[inn[a]], &eq))
        return FALSE;
      if (eq)
        break;
    }
    if (eq) {
      sc_dim lin = idx[on[k]];
      for (uint32_t j = 1; j < len; j++)
        lin = sc_dim_add(P->st, sc_dim_mul(P->st, lin, out->dims[on[k + j]]), idx[on[k + j]]);
      res[inn[a]] = lin;
      k += len;
      a++;
      continue;
    }
    /* in[inn[a..a+len-1]] merged into one output size */
    for (len = 2; len <= 4 && a + len <= ni; len++) {
      if (!run_equals(P, in, inn, a, len, out->dims[on[k]], &eq))
        return FALSE;
      if (eq)
        break;
    }
    if (!eq) {
      P->stuck = g_strdup("values: a view that regroups dims neither by splitting one dim nor by "
                          "merging consecutive dims");
      return FALSE;
    }
    sc_dim lin = idx[on[k]];
    for (uint32_t j = len - 1; j >= 1; j--) {
      sc_dim size = in->dims[inn[a + j]];
      if (!div_mod(P, lin, size, TRUE, &res[inn[a + j]]) || !div_mod(P, lin, size, FALSE, &lin))
        return FALSE;
    }
    res[inn[a]] = lin;
    k++;
    a += len;
  }
  if (k != nn || a != ni) {
    P->stuck = g_strdup("values: a view whose sizes do not match");
    return FALSE;
  }
  for (uint32_t i = 0; i < in->rank; i++)
    idx[i] = res[i];
  *rank = in->rank;
  return TRUE;
}

static gboolean elem(prun *P, const pnode *p, sc_dim *idx, uint32_t rank, vtarget *t);

/* The kid of P at tensor argument A, item ITEM. */
static const pnode *kid_at(const pnode *p, uint32_t a, uint32_t item) {
  uint32_t k = 0;
  for (uint32_t b = 0; b < a; b++)
    if (p->layout[b] != UINT32_MAX)
      k += p->layout[b];
  return item < p->layout[a] && k + item < p->n_kids ? p->kids[k + item] : NULL;
}

static gboolean kid_type(prun *P, const pnode *kid, sc_ttype *t) {
  int code = 0;
  g_autofree char *msg = NULL;
  if (sc_lp_infer(P, kid, t, &code, &msg))
    return TRUE;
  if (P->stuck == NULL && P->branch == NULL)
    P->stuck = g_strdup_printf("values: an operand's type: %s", msg ? msg : "?");
  return FALSE;
}

/* The index before a reorder: identity, transpose, t, permute, unsqueeze,
 * squeeze, view, flip. */
static gboolean map_reorder(prun *P, const pnode *p, const sc_value *args, const pnode *x,
                          const sc_ttype *xtp, const sc_ttype *otp, sc_dim *idx, uint32_t rank,
                          vtarget *t) {
  const sc_op *op = p->op;
  const sc_ttype xt = *xtp, ot = *otp;
  uint32_t d, e;
  switch (layout_op(op)) {
  case LO_IDENTITY:
    return elem(P, x, idx, rank, t);
  case LO_TRANSPOSE:
    if (rank > 0) {
      if (!const_dim(P, &args[1], rank, &d) || !const_dim(P, &args[2], rank, &e))
        return FALSE;
      sc_dim s = idx[d];
      idx[d] = idx[e];
      idx[e] = s;
    }
    return elem(P, x, idx, rank, t);
  case LO_T:
    if (rank == 2) {
      sc_dim s = idx[0];
      idx[0] = idx[1];
      idx[1] = s;
    }
    return elem(P, x, idx, rank, t);
  case LO_PERMUTE: {
    const sc_value *v = &args[1];
    sc_dim in[SC_MAX_RANK];
    if (v->kind != SC_VAL_INT_LIST || v->u.ints.n != rank)
      return FALSE;
    for (uint32_t j = 0; j < rank; j++) {
      sc_value one = sc_value_dim(v->u.ints.v[j]);
      if (!const_dim(P, &one, rank, &d))
        return FALSE;
      in[d] = idx[j];
    }
    memcpy(idx, in, sizeof(sc_dim) * rank);
    return elem(P, x, idx, rank, t);
  }
  case LO_UNSQUEEZE:
    if (!const_dim(P, &args[1], rank, &d))
      return FALSE;
    drop_at(idx, &rank, d);
    return elem(P, x, idx, rank, t);
  case LO_SQUEEZE:
  case LO_VIEW:
    /* the output is the input with sizes 1 dropped (squeeze) or regrouped */
    if (!view_map(P, &xt.shape, &ot.shape, idx, &rank))
      return FALSE;
    return elem(P, x, idx, rank, t);
  case LO_FLIP: {
    const sc_value *v = arg_named(op, args, "dims");
    if (v == NULL || v->kind != SC_VAL_INT_LIST)
      return FALSE;
    gboolean done[SC_MAX_RANK] = {FALSE};
    for (uint32_t j = 0; j < v->u.ints.n; j++) {
      sc_value one = sc_value_dim(v->u.ints.v[j]);
      if (!const_dim(P, &one, rank, &d))
        return FALSE;
      if (done[d])
        continue;
      done[d] = TRUE;
      idx[d] = sc_dim_sub(P->st, sc_dim_sub(P->st, xt.shape.dims[d], sc_dim_const(1)), idx[d]);
    }
    return elem(P, x, idx, rank, t);
  }
  default:
    break;
  }
  return FALSE;
}

/* The index before taking a part: slice, narrow, select, unbind, split. */
static gboolean map_part(prun *P, const pnode *p, const sc_value *args, const pnode *x,
                          const sc_ttype *xtp, const sc_ttype *otp, sc_dim *idx, uint32_t rank,
                          vtarget *t) {
  const sc_op *op = p->op;
  const sc_ttype xt = *xtp;
  uint32_t d;
  switch (layout_op(op)) {
  case LO_SLICE: {
    if (!const_dim(P, arg_named(op, args, "dim"), rank, &d))
      return FALSE;
    const sc_value *sv = arg_named(op, args, "start"), *stv = arg_named(op, args, "step");
    sc_dim size = xt.shape.dims[d], s = sc_dim_const(0);
    if (sv && sv->kind == SC_VAL_INT && !norm_pos(P, sv->u.i, size, TRUE, sc_dim_const(0), &s))
      return FALSE;
    sc_dim step = stv && stv->kind == SC_VAL_INT ? stv->u.i : sc_dim_const(1);
    idx[d] = sc_dim_add(P->st, s, sc_dim_mul(P->st, idx[d], step));
    return elem(P, x, idx, rank, t);
  }
  case LO_NARROW: {
    sc_dim s;
    if (!const_dim(P, arg_named(op, args, "dim"), rank, &d) ||
        !norm_pos(P, arg_named(op, args, "start")->u.i, xt.shape.dims[d], FALSE,
                  sc_dim_const(0), &s))
      return FALSE;
    idx[d] = sc_dim_add(P->st, idx[d], s);
    return elem(P, x, idx, rank, t);
  }
  case LO_SELECT: {
    sc_dim s;
    if (!const_dim(P, arg_named(op, args, "dim"), xt.shape.rank, &d) ||
        !norm_pos(P, arg_named(op, args, "index")->u.i, xt.shape.dims[d], FALSE,
                  sc_dim_const(0), &s))
      return FALSE;
    insert_at(idx, &rank, d, s);
    return elem(P, x, idx, rank, t);
  }
  case LO_UNBIND:
    if (!const_dim(P, arg_named(op, args, "dim"), xt.shape.rank, &d))
      return FALSE;
    insert_at(idx, &rank, d, sc_dim_const(p->result));
    return elem(P, x, idx, rank, t);
  case LO_SPLIT:
  case LO_SPLIT_SIZES: {
    if (!const_dim(P, arg_named(op, args, "dim"), rank, &d))
      return FALSE;
    sc_dim off = sc_dim_const(0);
    if (layout_op(op) == LO_SPLIT) {
      off = sc_dim_mul(P->st, sc_dim_const(p->result), arg_named(op, args, "split_size")->u.i);
    } else {
      const sc_value *v = arg_named(op, args, "split_sizes");
      if (v->kind != SC_VAL_INT_LIST || p->result > v->u.ints.n)
        return FALSE;
      for (uint32_t j = 0; j < p->result; j++)
        off = sc_dim_add(P->st, off, v->u.ints.v[j]);
    }
    idx[d] = sc_dim_add(P->st, idx[d], off);
    return elem(P, x, idx, rank, t);
  }
  case LO_CHUNK: {
    /* part k starts at k * ceil(size / chunks) */
    const sc_value *cv = arg_named(op, args, "chunks");
    sc_dim part;
    if (!const_dim(P, arg_named(op, args, "dim"), rank, &d) || cv == NULL ||
        cv->kind != SC_VAL_INT)
      return FALSE;
    sc_dim up = sc_dim_sub(P->st, sc_dim_add(P->st, xt.shape.dims[d], cv->u.i), sc_dim_const(1));
    if (!div_mod(P, up, cv->u.i, FALSE, &part))
      return FALSE;
    idx[d] = sc_dim_add(P->st, idx[d], sc_dim_mul(P->st, sc_dim_const(p->result), part));
    return elem(P, x, idx, rank, t);
  }
  default:
    break;
  }
  return FALSE;
}

/* The index before a repetition or a rotation: repeat (a tiling: the
 * index modulo the input's size), repeat_interleave along a dim (the index
 * divided by the count), roll (the index minus the shift, modulo the
 * size).  A count or size provably 1 leaves the index as it is. */
static gboolean map_tile(prun *P, const pnode *p, const sc_value *args, const pnode *x,
                         const sc_ttype *xtp, sc_dim *idx, uint32_t rank, vtarget *t) {
  const sc_op *op = p->op;
  const sc_ttype xt = *xtp;
  uint32_t d;
  switch (layout_op(op)) {
  case LO_REPEAT: {
    const sc_value *v = arg_named(op, args, "repeats");
    if (v == NULL || v->kind != SC_VAL_INT_LIST || v->u.ints.n != rank || rank < xt.shape.rank)
      return FALSE;
    uint32_t lead = rank - xt.shape.rank;
    for (uint32_t i = 0; i < xt.shape.rank; i++) {
      gboolean once;
      if (!is_one(P, v->u.ints.v[i + lead], &once))
        return FALSE;
      idx[i] = idx[i + lead];
      if (!once && !div_mod(P, idx[i], xt.shape.dims[i], TRUE, &idx[i]))
        return FALSE;
    }
    return elem(P, x, idx, xt.shape.rank, t);
  }
  case LO_REPEAT_INTERLEAVE: {
    const sc_value *rv = arg_named(op, args, "repeats"), *dv = arg_named(op, args, "dim");
    gboolean once;
    if (rv == NULL || rv->kind != SC_VAL_INT || dv == NULL || dv->kind != SC_VAL_INT ||
        xt.shape.rank == 0) {
      if (P->stuck == NULL)
        P->stuck = g_strdup("values: repeat_interleave without a dim, or of a scalar");
      return FALSE;
    }
    if (!const_dim(P, dv, rank, &d) || !is_one(P, rv->u.i, &once))
      return FALSE;
    if (!once && !div_mod(P, idx[d], rv->u.i, FALSE, &idx[d]))
      return FALSE;
    return elem(P, x, idx, rank, t);
  }
  case LO_ROLL: {
    const sc_value *sv = arg_named(op, args, "shifts"), *dv = arg_named(op, args, "dims");
    if (sv == NULL || dv == NULL || sv->kind != SC_VAL_INT_LIST || dv->kind != SC_VAL_INT_LIST ||
        dv->u.ints.n == 0 || sv->u.ints.n != dv->u.ints.n) {
      if (P->stuck == NULL)
        P->stuck = g_strdup("values: roll without dims (of the flattened tensor)");
      return FALSE;
    }
    for (uint32_t j = 0; j < dv->u.ints.n; j++) {
      sc_value one = sc_value_dim(dv->u.ints.v[j]);
      if (!const_dim(P, &one, rank, &d) ||
          !rot_mod(P, sc_dim_sub(P->st, idx[d], sv->u.ints.v[j]), xt.shape.dims[d], &idx[d]))
        return FALSE;
    }
    return elem(P, x, idx, rank, t);
  }
  default:
    break;
  }
  return FALSE;
}

/* The index before a join: which part of a cat or stack. */
static gboolean map_join(prun *P, const pnode *p, const sc_value *args, const pnode *x,
                          const sc_ttype *xtp, const sc_ttype *otp, sc_dim *idx, uint32_t rank,
                          vtarget *t) {
  const sc_op *op = p->op;
  uint32_t d;
  switch (layout_op(op)) {
  case LO_CAT:
  case LO_STACK: {
    gboolean stack = layout_op(op) == LO_STACK;
    if (!const_dim(P, arg_named(op, args, "dim"), rank, &d))
      return FALSE;
    sc_dim off = sc_dim_const(0);
    for (uint32_t k = 0; k < p->layout[0]; k++) {
      const pnode *part = kid_at(p, 0, k);
      sc_ttype pt;
      if (!kid_type(P, part, &pt))
        return FALSE;
      sc_dim size = stack ? sc_dim_const(1) : pt.shape.dims[d];
      sc_dim end = sc_dim_add(P->st, off, size);
      /* the last part needs no comparison: the index is in bounds */
      gboolean here = k + 1 == p->layout[0];
      if (!here && !ask(P, ASK_LT, idx[d], end, &here, "which part of a cat"))
        return FALSE;
      if (here) {
        if (stack)
          drop_at(idx, &rank, d);
        else
          idx[d] = sc_dim_sub(P->st, idx[d], off);
        return elem(P, part, idx, rank, t);
      }
      off = end;
    }
    return FALSE;
  }
  default:
    break;
  }
  return FALSE;
}

/* The index before an expand, or a pad's fill value. */
static gboolean map_fill(prun *P, const pnode *p, const sc_value *args, const pnode *x,
                          const sc_ttype *xtp, const sc_ttype *otp, sc_dim *idx, uint32_t rank,
                          vtarget *t) {
  const sc_op *op = p->op;
  const sc_ttype xt = *xtp;
  uint32_t d;
  switch (layout_op(op)) {
  case LO_EXPAND: {
    uint32_t lead = rank - xt.shape.rank;
    for (uint32_t i = 0; i < xt.shape.rank; i++) {
      gboolean one;
      if (!is_one(P, xt.shape.dims[i], &one))
        return FALSE;
      idx[i] = one ? sc_dim_const(0) : idx[i + lead];
    }
    return elem(P, x, idx, xt.shape.rank, t);
  }
  case LO_PAD: {
    const sc_value *v = arg_named(op, args, "pad");
    if (v == NULL || v->kind != SC_VAL_INT_LIST || v->u.ints.n % 2 || v->u.ints.n / 2 > rank)
      return FALSE;
    for (uint32_t q = 0; q < v->u.ints.n / 2; q++) {
      d = rank - 1 - q;
      sc_dim i = sc_dim_sub(P->st, idx[d], v->u.ints.v[2 * q]);
      gboolean below, past;
      if (!ask(P, ASK_LT, i, sc_dim_const(0), &below, "whether a pad fills") ||
          (!below && !ask(P, ASK_LE, xt.shape.dims[d], i, &past,
                              "whether a pad fills")))
        return FALSE;
      if (below || past) {
        t->fill = TRUE;
        sc_value_copy(&t->value, arg_named(op, args, "value"));
        return TRUE;
      }
      idx[d] = i;
    }
    return elem(P, x, idx, rank, t);
  }
  default:
    break;
  }
  return FALSE;
}

static gboolean map_op(prun *P, const pnode *p, const sc_value *args, sc_dim *idx,
                       uint32_t rank, vtarget *t) {
  const pnode *x = kid_at(p, 0, 0);
  sc_ttype xt, ot;
  if (x == NULL || !kid_type(P, x, &xt) || !kid_type(P, p, &ot))
    return FALSE;
  switch (layout_op(p->op)) {
  case LO_IDENTITY:
  case LO_TRANSPOSE:
  case LO_T:
  case LO_PERMUTE:
  case LO_UNSQUEEZE:
  case LO_SQUEEZE:
  case LO_VIEW:
  case LO_FLIP:
    return map_reorder(P, p, args, x, &xt, &ot, idx, rank, t);
  case LO_SLICE:
  case LO_NARROW:
  case LO_SELECT:
  case LO_UNBIND:
  case LO_SPLIT:
  case LO_SPLIT_SIZES:
  case LO_CHUNK:
    return map_part(P, p, args, x, &xt, &ot, idx, rank, t);
  case LO_REPEAT:
  case LO_REPEAT_INTERLEAVE:
  case LO_ROLL:
    return map_tile(P, p, args, x, &xt, idx, rank, t);
  case LO_CAT:
  case LO_STACK:
    return map_join(P, p, args, x, &xt, &ot, idx, rank, t);
  case LO_EXPAND:
  case LO_PAD:
    return map_fill(P, p, args, x, &xt, &ot, idx, rank, t);
  case LO_NONE:
    break;
  }
  return FALSE;
}

/* The element that side P picks at output index IDX (RANK components);
 * FALSE when the run branches or is stuck. */
static gboolean elem(prun *P, const pnode *p, sc_dim *idx, uint32_t rank, vtarget *t) {
  if (p->is_var) {
    t->fill = FALSE;
    t->var = p->var;
    t->rank = rank;
    memcpy(t->idx, idx, sizeof(sc_dim) * rank);
    return TRUE;
  }
  const sc_op *op = p->op;
  sc_value *args = g_new0(sc_value, op->n_args ? op->n_args : 1);
  ev_env env = {P->st, sc_lp_run_lookup, P};
  g_autofree char *msg = NULL;
  gboolean ok = pn_call_args(p, P->values, &env, NULL, args, &msg);
  if (!ok && P->stuck == NULL)
    P->stuck = g_strdup_printf("values: a computed argument: %s", msg ? msg : "?");
  if (ok)
    ok = map_op(P, p, args, idx, rank, t);
  if (!ok && P->stuck == NULL && P->branch == NULL)
    P->stuck = g_strdup_printf("values: %s's arguments are outside the method", op->qualname);
  for (uint32_t a = 0; a < op->n_args; a++)
    sc_value_clear(&args[a]);
  g_free(args);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* The obligation                                                            */

void sc_lp_declare_index_symbols(prun *P) {
  for (uint32_t j = 0; j < SC_MAX_RANK; j++) {
    char name[16];
    g_snprintf(name, sizeof name, "o%u", j);
    sc_symtab_declare(P->st, name, TRUE, 0, TRUE, (int64_t)1 << 31, NULL);
  }
  /* quotients of indices that may be negative (roll: o - shift), and
   * remainders below a divisor; |dividend| <= 2^41 (an index minus a
   * shift), so the bounds exclude no true quotient or remainder */
  for (uint32_t j = 0; j < N_DIVS; j++) {
    char name[16];
    g_snprintf(name, sizeof name, "dq%u", j);
    sc_symtab_declare(P->st, name, TRUE, -((int64_t)1 << 42), TRUE, (int64_t)1 << 42, NULL);
    g_snprintf(name, sizeof name, "dm%u", j);
    sc_symtab_declare(P->st, name, TRUE, 0, TRUE, (int64_t)1 << 42, NULL);
  }
}

static char *target_text(prun *P, const vtarget *t) {
  if (t->fill) {
    g_autofree char *v = sc_value_to_string(&t->value, P->st, NULL, NULL);
    return g_strdup_printf("the fill value %s", v);
  }
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "?%s[", (const char *)g_ptr_array_index(P->k->vars.names, t->var));
  for (uint32_t j = 0; j < t->rank; j++) {
    g_autofree char *c = sc_dim_to_string(P->st, t->idx[j]);
    g_string_append_printf(s, "%s%s", j ? ", " : "", c);
  }
  g_string_append(s, "]");
  return g_string_free(s, FALSE);
}

pres sc_lp_value_obligation(prun *P, char **why) {
  sc_ttype lt;
  if (!kid_type(P, P->k->lhs, &lt))
    return P->branch ? PR_BRANCH : PR_STUCK;
  sc_dim idx[SC_MAX_RANK], ridx[SC_MAX_RANK];
  for (uint32_t j = 0; j < lt.shape.rank; j++) {
    g_autofree char *size = sc_dim_to_string(P->st, lt.shape.dims[j]);
    g_autofree char *bound = g_strdup_printf("o%u <= %s - 1", j, size);
    g_autoptr(GError) err = NULL;
    if (!sc_symtab_assume(P->st, bound, &err)) {
      if (g_error_matches(err, SC_SYM_ERROR, SC_SYM_ERROR_CONTRADICTION))
        return PR_INFEASIBLE;
      P->stuck = g_strdup_printf("values: cannot assume %s: %s", bound, err->message);
      return PR_STUCK;
    }
    char name[16];
    g_snprintf(name, sizeof name, "o%u", j);
    sc_dim_symbol(P->st, name, &idx[j], NULL);
    ridx[j] = idx[j];
  }
  vtarget L = {0}, Rt = {0};
  gboolean ok = elem(P, P->k->lhs, idx, lt.shape.rank, &L) &&
                elem(P, P->k->rhs, ridx, lt.shape.rank, &Rt);
  pres res = PR_OK;
  if (!ok) {
    res = P->branch ? PR_BRANCH : PR_STUCK;
  } else if (L.fill != Rt.fill || (!L.fill && L.var != Rt.var) ||
             (L.fill && !sc_value_equal(&L.value, &Rt.value))) {
    res = PR_BAD;
  } else if (!L.fill) {
    for (uint32_t j = 0; res == PR_OK && j < L.rank; j++) {
      gboolean eq;
      if (L.rank != Rt.rank)
        res = PR_BAD;
      else if (!ask(P, ASK_EQ, L.idx[j], Rt.idx[j], &eq, "an index's equality"))
        res = P->branch ? PR_BRANCH : PR_STUCK;
      else if (!eq)
        res = PR_BAD;
    }
  }
  if (res == PR_BAD) {
    g_autofree char *a = target_text(P, &L), *b = target_text(P, &Rt);
    *why = g_strdup_printf("at the output index o, the left side reads %s and the right side %s",
                           a, b);
  }
  sc_value_clear(&L.value);
  sc_value_clear(&Rt.value);
  return res;
}
