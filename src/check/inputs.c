/* inputs.c — concrete inputs for `check --validate` (validate.h,
 * sc_validate_make_inputs): random spec inputs, and impl inputs solved
 * from the input relation so that every expression of it evaluates to its
 * spec input.
 *
 * The solver walks an expression top-down with a target value and a mask
 * of the target's elements that are constrained.  View operators (clean
 * and flagged view: cat, slice, transpose, permute, view) are inverted by
 * evaluating the operator on "index tensors" (each child element holds its
 * own global number, exact in float64), which says for every output
 * element the child element it comes from.  A sum gives random values to
 * every part but the first, which takes the rest.  Leaves record which
 * elements are fixed; a second, different value for a fixed element is a
 * CONFLICT.
 *
 * Invariants: every impl input value has the type the impl graph declares
 * under the symbol values; fixed masks have one byte per element; the
 * result is verified by evaluating every input relation expression. */
#include "shardcheck/validate.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(sc-validate-error-quark, sc_validate_error)

typedef struct {
  const sc_bundle *b;
  sc_graph *impl;
  const int64_t *sym;
  sc_rng *rng;
  int64_t max_elements;
  sc_interp_config cfg;
  uint32_t n;          /* impl tensors */
  sc_tvalue **vals;    /* by impl tensor id: inputs only */
  guint8 **fixed;      /* masks, parallel */
  const char *spec_name; /* the spec input being solved, for messages */
} solver;

static gboolean concrete_dims(const solver *S, const sc_shape *sh, int64_t *dims, GError **error) {
  for (uint32_t k = 0; k < sh->rank; k++)
    if (!sc_dim_eval(sc_bundle_symtab(S->b), sh->dims[k], S->sym, &dims[k])) {
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SYMBOL,
                  "a size of %s's relation does not evaluate", S->spec_name);
      return FALSE;
    }
  return TRUE;
}

static sc_tvalue *new_of_type(const solver *S, const sc_ttype *t, GError **error) {
  int64_t dims[SC_MAX_RANK];
  if (!concrete_dims(S, &t->shape, dims, error))
    return NULL;
  return sc_tvalue_new(t->dtype, t->shape.rank, dims, S->max_elements, error);
}

/* Make sure leaf T has a value and a mask. */
static gboolean leaf_init(solver *S, sc_id t, GError **error) {
  if (S->vals[t] != NULL)
    return TRUE;
  if (sc_graph_tensor(S->impl, t)->producer != SC_ID_NONE) {
    g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_UNSOLVABLE,
                "the input relation of %s names impl tensor '%s', which is not an impl input",
                S->spec_name, sc_graph_tensor(S->impl, t)->name);
    return FALSE;
  }
  S->vals[t] = sc_interp_random_input(S->impl, t, S->sym, S->rng, S->max_elements, error);
  if (S->vals[t] == NULL)
    return FALSE;
  S->fixed[t] = g_malloc0((gsize)MAX(S->vals[t]->numel, 1));
  return TRUE;
}

static gboolean same_number(double a, double b) {
  return a == b || (isnan(a) && isnan(b));
}

static gboolean solve(solver *S, const sc_texpr *e, const sc_tvalue *want, const guint8 *mask,
                      GError **error);

static gboolean solve_leaf(solver *S, sc_id t, const sc_tvalue *want, const guint8 *mask,
                           GError **error) {
  if (!leaf_init(S, t, error))
    return FALSE;
  sc_tvalue *v = S->vals[t];
  if (v->numel != want->numel) {
    g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_UNSOLVABLE,
                "the input relation of %s gives '%s' %" G_GINT64_FORMAT " elements where it has "
                "%" G_GINT64_FORMAT,
                S->spec_name, sc_graph_tensor(S->impl, t)->name, (gint64)want->numel,
                (gint64)v->numel);
    return FALSE;
  }
  for (int64_t i = 0; i < v->numel; i++) {
    if (mask && !mask[i])
      continue;
    if (S->fixed[t][i] && !same_number(v->data[i], want->data[i])) {
      g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_CONFLICT,
                  "the input relation constrains element %" G_GINT64_FORMAT " of impl input '%s' "
                  "twice, to different values (last through %s)",
                  (gint64)i, sc_graph_tensor(S->impl, t)->name, S->spec_name);
      return FALSE;
    }
    v->data[i] = want->data[i];
    S->fixed[t][i] = 1;
  }
  return TRUE;
}

/* Invert a view operator through index tensors. */
static gboolean solve_view(solver *S, const sc_texpr *e, const sc_tvalue *want,
                           const guint8 *mask, GError **error) {
  uint32_t nc = sc_texpr_n_children(e);
  sc_tvalue **ids = g_new0(sc_tvalue *, nc ? nc : 1);
  int64_t *offset = g_new0(int64_t, nc + 1);
  gboolean ok = TRUE;
  for (uint32_t k = 0; k < nc && ok; k++) {
    sc_ttype t = *sc_texpr_type(sc_texpr_child(e, k));
    t.dtype = SC_DTYPE_F64;
    ids[k] = new_of_type(S, &t, error);
    ok = ids[k] != NULL;
    if (ok) {
      for (int64_t i = 0; i < ids[k]->numel; i++)
        ids[k]->data[i] = (double)(offset[k] + i);
      offset[k + 1] = offset[k] + ids[k]->numel;
    }
  }
  g_autoptr(GPtrArray) res = g_ptr_array_new_with_free_func((GDestroyNotify)sc_tvalue_free);
  if (ok)
    ok = sc_interp_eval(sc_texpr_op(e), sc_texpr_args(e), sc_bundle_symtab(S->b), S->sym, ids, nc,
                        &S->cfg, res, error);
  const sc_tvalue *map = ok && res->len > 0 ? res->pdata[0] : NULL;
  if (ok && (map == NULL || map->numel != want->numel)) {
    g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_UNSOLVABLE,
                "%s: %s does not give the spec input's element count", S->spec_name,
                sc_texpr_op(e)->qualname);
    ok = FALSE;
  }
  sc_tvalue **targets = g_new0(sc_tvalue *, nc ? nc : 1);
  guint8 **masks = g_new0(guint8 *, nc ? nc : 1);
  for (uint32_t k = 0; k < nc && ok; k++) {
    targets[k] = new_of_type(S, sc_texpr_type(sc_texpr_child(e, k)), error);
    ok = targets[k] != NULL;
    if (ok)
      masks[k] = g_malloc0((gsize)MAX(targets[k]->numel, 1));
  }
  for (int64_t o = 0; ok && o < want->numel; o++) {
    if (mask && !mask[o])
      continue;
    double id = map->data[o];
    uint32_t k = 0;
    while (k < nc && !(id >= (double)offset[k] && id < (double)offset[k + 1]))
      k++;
    if (k == nc || id != floor(id)) {
      g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_UNSOLVABLE,
                  "%s: %s is not a view of its inputs", S->spec_name, sc_texpr_op(e)->qualname);
      ok = FALSE;
      break;
    }
    int64_t i = (int64_t)id - offset[k];
    if (masks[k][i] && !same_number(targets[k]->data[i], want->data[o])) {
      g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_CONFLICT,
                  "%s: one element of a part of %s is wanted with two values", S->spec_name,
                  sc_texpr_op(e)->qualname);
      ok = FALSE;
      break;
    }
    targets[k]->data[i] = want->data[o];
    masks[k][i] = 1;
  }
  for (uint32_t k = 0; k < nc && ok; k++)
    ok = solve(S, sc_texpr_child(e, k), targets[k], masks[k], error);
  for (uint32_t k = 0; k < nc; k++) {
    sc_tvalue_free(ids[k]);
    sc_tvalue_free(targets[k]);
    g_free(masks[k]);
  }
  g_free(ids);
  g_free(targets);
  g_free(masks);
  g_free(offset);
  return ok;
}

/* A random split: parts 1.. random, part 0 the rest. */
static gboolean solve_sum(solver *S, const sc_texpr *e, const sc_tvalue *want, const guint8 *mask,
                          GError **error) {
  uint32_t nc = sc_texpr_n_children(e);
  g_autoptr(sc_tvalue) rest = sc_tvalue_copy(want);
  for (uint32_t k = 1; k < nc; k++) {
    const sc_texpr *c = sc_texpr_child(e, k);
    g_autoptr(sc_tvalue) part = new_of_type(S, sc_texpr_type(c), error);
    if (part == NULL)
      return FALSE;
    if (sc_dtype_is_floating(part->dtype))
      sc_tvalue_fill_uniform(part, S->rng, -1.0, 1.0);
    else
      sc_tvalue_fill_ints(part, S->rng, 0, part->dtype == SC_DTYPE_BOOL ? 0 : 3);
    if (part->numel != rest->numel) {
      g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_UNSOLVABLE,
                  "%s: the parts of a sum differ in size", S->spec_name);
      return FALSE;
    }
    if (!solve(S, c, part, mask, error))
      return FALSE;
    for (int64_t i = 0; i < rest->numel; i++)
      rest->data[i] -= part->data[i];
  }
  return nc == 0 || solve(S, sc_texpr_child(e, 0), rest, mask, error);
}

static gboolean solve(solver *S, const sc_texpr *e, const sc_tvalue *want, const guint8 *mask,
                      GError **error) {
  if (sc_texpr_get_kind(e) == SC_TEXPR_TENSOR)
    return solve_leaf(S, sc_texpr_tensor(e), want, mask, error);
  const sc_op *op = sc_texpr_op(e);
  if ((op->flags & SC_OP_CLEAN) && (op->flags & SC_OP_VIEW))
    return solve_view(S, e, want, mask, error);
  if (strcmp(op->qualname, "sc.sum.default") == 0)
    return solve_sum(S, e, want, mask, error);
  if (sc_texpr_n_children(e) == 0) {
    /* a constant: it must already be the wanted value */
    g_autoptr(sc_tvalue) c = sc_interp_eval_texpr(e, S->sym, S->vals, &S->cfg, error);
    if (c == NULL)
      return FALSE;
    for (int64_t i = 0; i < c->numel && i < want->numel; i++)
      if ((mask == NULL || mask[i]) && !same_number(c->data[i], want->data[i])) {
        g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_CONFLICT,
                    "%s is related to a constant and to other expressions that differ from it",
                    S->spec_name);
        return FALSE;
      }
    return TRUE;
  }
  g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_UNSOLVABLE,
              "%s: the input relation uses %s, which the input builder cannot solve for its "
              "inputs",
              S->spec_name, op->qualname);
  return FALSE;
}

/* Are all of E's leaves inputs whose every element is already fixed? */
static gboolean leaves_fixed(const solver *S, const sc_texpr *e) {
  g_autoptr(GArray) leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_texpr_collect_leaves(e, leaves);
  if (leaves->len == 0)
    return TRUE;
  for (guint i = 0; i < leaves->len; i++) {
    sc_id t = g_array_index(leaves, sc_id, i);
    if (S->vals[t] == NULL)
      return FALSE;
    for (int64_t k = 0; k < S->vals[t]->numel; k++)
      if (!S->fixed[t][k])
        return FALSE;
  }
  return TRUE;
}

gboolean sc_validate_make_inputs(const sc_bundle *b, const int64_t *symbol_values, sc_rng *rng,
                                 int64_t max_elements, sc_tvalue ***spec_inputs_out,
                                 sc_tvalue ***impl_inputs_out, GError **error) {
  sc_graph *spec = sc_bundle_spec(b), *impl = sc_bundle_impl(b);
  *spec_inputs_out = NULL;
  *impl_inputs_out = NULL;
  solver S = {b, impl, symbol_values, rng, max_elements, {1, max_elements, NULL, NULL},
              sc_graph_n_tensors(impl),
              NULL, NULL, NULL};
  S.vals = g_new0(sc_tvalue *, S.n ? S.n : 1);
  S.fixed = g_new0(guint8 *, S.n ? S.n : 1);
  uint32_t ns = sc_graph_n_inputs(spec), ni = sc_graph_n_inputs(impl);
  sc_tvalue **sv = g_new0(sc_tvalue *, ns ? ns : 1);
  const sc_relation *in = sc_bundle_input_relation(b);
  gboolean ok = TRUE;
  for (uint32_t i = 0; i < ns && ok; i++) {
    sc_id t = sc_graph_input(spec, i);
    S.spec_name = sc_graph_tensor(spec, t)->name;
    const sc_relation_entry *e = sc_relation_find(in, t);
    if (e == NULL || e->n_exprs == 0) {
      /* behind assumptions (the loader checked): any value */
      sv[i] = sc_interp_random_input(spec, t, symbol_values, rng, max_elements, error);
      ok = sv[i] != NULL;
      continue;
    }
    /* a constant or an already determined expression fixes the value */
    for (uint32_t k = 0; k < e->n_exprs && sv[i] == NULL && ok; k++)
      if (leaves_fixed(&S, e->exprs[k])) {
        sv[i] = sc_interp_eval_texpr(e->exprs[k], symbol_values, S.vals, &S.cfg, error);
        ok = sv[i] != NULL;
      }
    if (ok && sv[i] == NULL) {
      sv[i] = sc_interp_random_input(spec, t, symbol_values, rng, max_elements, error);
      ok = sv[i] != NULL;
    }
    for (uint32_t k = 0; k < e->n_exprs && ok; k++)
      ok = solve(&S, e->exprs[k], sv[i], NULL, error);
  }
  /* unconstrained inputs and elements: random */
  for (uint32_t i = 0; i < ni && ok; i++) {
    sc_id t = sc_graph_input(impl, i);
    g_autoptr(sc_tvalue) r = sc_interp_random_input(impl, t, symbol_values, rng, max_elements, error);
    ok = r != NULL;
    if (!ok)
      break;
    if (S.vals[t] == NULL) {
      S.vals[t] = g_steal_pointer(&r);
      continue;
    }
    for (int64_t k = 0; k < r->numel; k++)
      if (!S.fixed[t][k])
        S.vals[t]->data[k] = r->data[k];
  }
  /* the built inputs must satisfy the relation */
  for (uint32_t i = 0; i < ns && ok; i++) {
    const sc_relation_entry *e = sc_relation_find(in, sc_graph_input(spec, i));
    for (uint32_t k = 0; e && k < e->n_exprs && ok; k++) {
      g_autoptr(sc_tvalue) got = sc_interp_eval_texpr(e->exprs[k], symbol_values, S.vals, &S.cfg,
                                                     error);
      ok = got != NULL;
      sc_tcompare c;
      sc_tolerance tol = sc_tolerance_default();
      if (ok && !sc_tvalue_compare(sv[i], got, &tol, &c)) {
        g_autofree char *why = sc_tcompare_to_string(&c, sv[i], got);
        g_set_error(error, SC_VALIDATE_ERROR, SC_VALIDATE_ERROR_UNSOLVABLE,
                    "the built inputs do not satisfy %s = %s: %s",
                    sc_graph_tensor(spec, e->tensor)->name, e->texts[k], why);
        ok = FALSE;
      }
    }
  }
  sc_tvalue **iv = NULL;
  if (ok) {
    iv = g_new0(sc_tvalue *, ni ? ni : 1);
    for (uint32_t i = 0; i < ni; i++) {
      sc_id t = sc_graph_input(impl, i);
      iv[i] = S.vals[t];
      S.vals[t] = NULL;
    }
  }
  for (uint32_t t = 0; t < S.n; t++) {
    sc_tvalue_free(S.vals[t]);
    g_free(S.fixed[t]);
  }
  g_free(S.vals);
  g_free(S.fixed);
  if (!ok) {
    sc_interp_values_free(sv, ns);
    return FALSE;
  }
  *spec_inputs_out = sv;
  *impl_inputs_out = iv;
  return TRUE;
}
