/* lemcheck.c — the numerical lemma checker (lemcheck.h): random instances
 * that satisfy a lemma's condition, both sides evaluated by the reference
 * interpreter, compared within a scaled tolerance.
 *
 * Invariants: the search is a pure function of (seed, lemma name), so a
 * failure is reproducible; an instance counts only when both sides
 * instantiate (every shape rule accepts them) and the condition is YES;
 * values of an instance are drawn after its shapes: integer tensors get
 * values that index every dim of every tensor variable, or (every other
 * pair of trials) values below, inside and above the sizes, so that the
 * masks of a masked lookup are exercised; a tensor variable whose value
 * range the condition reads (vmin/vmax) is an integer tensor with a drawn
 * range, and its values lie inside that range; every tensor value made
 * here is freed on every path. */
#include "shardcheck/lemcheck.h"
#include "shardcheck/interp.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#define UNFOLD_DEPTH 8

const char *sc_lemcheck_status_name(sc_lemcheck_status s) {
  static const char *const names[] = {
#define SC_X_LC(sym, word) word,
      SC_LEMCHECK_STATUSES(SC_X_LC)
#undef SC_X_LC
  };
  return (unsigned)s < G_N_ELEMENTS(names) ? names[s] : "?";
}

void sc_lemcheck_options_init(sc_lemcheck_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->seed = 1;
  opts->instances = 24;
  opts->max_trials = 6000;
}

/* ---- drawing instances --------------------------------------------------- */

typedef struct {
  uint32_t rank;
  int64_t dims[SC_MAX_RANK];
  sc_dtype dtype;
} base_shape;

static int64_t draw_size(sc_rng *rng) {
  static const int64_t sizes[] = {1, 2, 2, 3, 3, 4, 4, 4, 5, 6};
  return sizes[sc_rng_int(rng, 0, G_N_ELEMENTS(sizes) - 1)];
}

static sc_dtype draw_dtype(sc_rng *rng) {
  int64_t x = sc_rng_int(rng, 0, 99);
  if (x < 80)
    return SC_DTYPE_F32;
  if (x < 88)
    return SC_DTYPE_F16;
  if (x < 92)
    return SC_DTYPE_BF16;
  if (x < 96)
    return SC_DTYPE_I64;
  if (x < 98)
    return SC_DTYPE_I32;
  return SC_DTYPE_BOOL;
}

static void draw_base(sc_rng *rng, base_shape *b) {
  int64_t x = sc_rng_int(rng, 0, 99);
  b->rank = x < 15 ? 1 : x < 55 ? 2 : x < 85 ? 3 : 4;
  gboolean uniform = sc_rng_int(rng, 0, 3) == 0;
  int64_t u = sc_rng_int(rng, 2, 4);
  for (uint32_t k = 0; k < b->rank; k++)
    b->dims[k] = uniform ? u : draw_size(rng);
  b->dtype = draw_dtype(rng);
}

static void draw_tensor(sc_rng *rng, const base_shape *b, sc_ttype *out) {
  int64_t dims[SC_MAX_RANK];
  uint32_t rank = b->rank;
  memcpy(dims, b->dims, sizeof dims);
  int64_t x = sc_rng_int(rng, 0, 99);
  if (x < 55) {
    /* the base shape */
  } else if (x < 80) {
    dims[sc_rng_int(rng, 0, rank - 1)] = draw_size(rng);
  } else if (x < 90) {
    if (rank > 1 && sc_rng_int(rng, 0, 1) == 0) {
      memmove(dims, dims + 1, (rank - 1) * sizeof dims[0]);
      rank--;
    } else if (rank < 4) {
      memmove(dims + 1, dims, rank * sizeof dims[0]);
      dims[0] = draw_size(rng);
      rank++;
    }
  } else {
    rank = (uint32_t)sc_rng_int(rng, 1, 4);
    for (uint32_t k = 0; k < rank; k++)
      dims[k] = draw_size(rng);
  }
  out->shape = sc_shape_of(rank, dims);
  out->dtype = sc_rng_int(rng, 0, 99) < 85 ? b->dtype : draw_dtype(rng);
}

static int64_t base_numel(const base_shape *b) {
  int64_t n = 1;
  for (uint32_t k = 0; k < b->rank; k++)
    n *= b->dims[k];
  return n;
}

static int64_t max_dim(const base_shape *b) {
  int64_t m = 1;
  for (uint32_t k = 0; k < b->rank; k++)
    m = MAX(m, b->dims[k]);
  return m;
}

static void set_int_list(sc_value *v, const int64_t *xs, uint32_t n) {
  v->kind = SC_VAL_INT_LIST;
  v->u.ints.n = n;
  v->u.ints.v = g_new(sc_dim, n ? n : 1);
  for (uint32_t k = 0; k < n; k++)
    v->u.ints.v[k] = sc_dim_const(xs[k]);
}

/* A list of sizes whose product is N (a view shape). */
static uint32_t factorize(sc_rng *rng, int64_t n, int64_t *out) {
  uint32_t parts = (uint32_t)sc_rng_int(rng, 1, 4), k = 0;
  for (; k + 1 < parts; k++) {
    int64_t divs[64];
    uint32_t nd = 0;
    for (int64_t d = 1; d <= n && nd < G_N_ELEMENTS(divs); d++)
      if (n % d == 0)
        divs[nd++] = d;
    out[k] = divs[sc_rng_int(rng, 0, nd - 1)];
    n /= out[k];
  }
  out[k++] = n;
  return k;
}

static const char *const *str_choices(const char *name) {
  static const char *const approximate[] = {"none", "tanh", NULL};
  static const char *const rounding[] = {"trunc", "floor", NULL};
  static const char *const reduce[] = {"sum", "prod", "mean", "amax", "amin", NULL};
  static const char *const op[] = {"sum", "max", "min", "avg", NULL};
  static const char *const reduce_op[] = {"sum", "avg", "product", "min", "max", NULL};
  static const char *const padding[] = {"constant", "reflect", "replicate", NULL};
  if (strcmp(name, "approximate") == 0)
    return approximate;
  if (strcmp(name, "rounding_mode") == 0)
    return rounding;
  if (strcmp(name, "reduce") == 0)
    return reduce;
  if (strcmp(name, "op") == 0)
    return op;
  if (strcmp(name, "reduce_op") == 0)
    return reduce_op;
  if (strcmp(name, "mode") == 0)
    return padding;
  return NULL;
}

/* TYPES/IS_T/NV: the instance's tensor variables, drawn first (an int
 * list may copy a suffix of one's shape: normalized_shape, view shapes). */
static void draw_attr(sc_rng *rng, const base_shape *b, const sc_arg *arg, const sc_ttype *types,
                      const gboolean *is_t, uint32_t nv, sc_value *out) {
  sc_value_clear(out);
  sc_arg_type t = arg ? arg->type : SC_ARG_INT;
  const char *name = arg ? arg->name : "";
  int64_t r = b->rank, m = max_dim(b);
  if (arg && arg->optional && sc_rng_int(rng, 0, 9) == 0)
    return; /* None */
  switch (t) {
  case SC_ARG_INT: {
    int64_t x = sc_rng_int(rng, 0, 99), v;
    if (g_str_has_prefix(name, "dim") || strcmp(name, "axis") == 0)
      v = x < 85 ? sc_rng_int(rng, 0, r - 1) : x < 95 ? sc_rng_int(rng, -r, -1) : r;
    else
      v = x < 60   ? sc_rng_int(rng, 0, m)
          : x < 75 ? sc_rng_int(rng, m + 1, 2 * m + 2)
          : x < 85 ? sc_rng_int(rng, -3, -1)
                   : sc_rng_int(rng, 0, 2);
    *out = sc_value_int(v);
    break;
  }
  case SC_ARG_SCALAR:
    if (sc_rng_int(rng, 0, 1) == 0) {
      static const int64_t xs[] = {-2, -1, 0, 1, 2, 3};
      *out = sc_value_int(xs[sc_rng_int(rng, 0, G_N_ELEMENTS(xs) - 1)]);
    } else {
      static const double xs[] = {0.5, -1.5, 2.25, 1e-5};
      *out = sc_value_float(xs[sc_rng_int(rng, 0, G_N_ELEMENTS(xs) - 1)]);
    }
    break;
  case SC_ARG_FLOAT: {
    static const double xs[] = {0.5, 1e-5, 2.0, -1.25, 0.1};
    *out = sc_value_float(xs[sc_rng_int(rng, 0, G_N_ELEMENTS(xs) - 1)]);
    break;
  }
  case SC_ARG_BOOL:
    *out = sc_value_bool(sc_rng_int(rng, 0, 1) == 1);
    break;
  case SC_ARG_INT_LIST: {
    int64_t xs[SC_MAX_RANK];
    uint32_t n;
    gboolean shape_like = strcmp(name, "shape") == 0 || strcmp(name, "size") == 0;
    int64_t x = sc_rng_int(rng, 0, 99);
    uint32_t tv = (uint32_t)sc_rng_int(rng, 0, nv ? nv - 1 : 0);
    if (x >= 75 && tv < nv && is_t[tv] && types[tv].shape.rank > 0 &&
        !(arg && arg->fixed_len > 0)) {
      const sc_shape *sh = &types[tv].shape;
      n = (uint32_t)sc_rng_int(rng, 1, sh->rank);
      for (uint32_t k = 0; k < n; k++)
        xs[k] = sh->dims[sh->rank - n + k].value;
    } else if (strcmp(name, "pad") == 0) {
      /* constant_pad_nd's (before, after) pairs from the last dim: mostly
       * zeros, so that one-sided pads of one dim are drawn */
      n = 2 * (uint32_t)sc_rng_int(rng, 1, 2);
      for (uint32_t k = 0; k < n; k++)
        xs[k] = sc_rng_int(rng, 0, 1) ? 0 : sc_rng_int(rng, 1, 2);
    } else if (arg && arg->fixed_len > 0) {
      n = MIN(arg->fixed_len, SC_MAX_RANK);
      for (uint32_t k = 0; k < n; k++)
        xs[k] = sc_rng_int(rng, 0, 2);
    } else if (shape_like && x < 70) {
      n = factorize(rng, base_numel(b), xs);
      if (x < 20)
        xs[sc_rng_int(rng, 0, n - 1)] = -1;
    } else if (!shape_like && x < 60) {
      n = (uint32_t)r; /* a permutation of the base rank */
      for (uint32_t k = 0; k < n; k++)
        xs[k] = k;
      for (uint32_t k = n; k > 1; k--) {
        uint32_t j = (uint32_t)sc_rng_int(rng, 0, k - 1);
        int64_t tmp = xs[k - 1];
        xs[k - 1] = xs[j];
        xs[j] = tmp;
      }
    } else {
      n = (uint32_t)sc_rng_int(rng, 1, 3);
      for (uint32_t k = 0; k < n; k++)
        xs[k] = shape_like ? draw_size(rng) : sc_rng_int(rng, -1, r - 1);
    }
    set_int_list(out, xs, n);
    break;
  }
  case SC_ARG_BOOL_LIST: {
    uint32_t n = arg && arg->fixed_len ? arg->fixed_len : 3;
    out->kind = SC_VAL_BOOL_LIST;
    out->u.bools.n = n;
    out->u.bools.v = g_new(gboolean, n);
    for (uint32_t k = 0; k < n; k++)
      out->u.bools.v[k] = sc_rng_int(rng, 0, 1) == 1;
    break;
  }
  case SC_ARG_STR: {
    const char *const *ch = str_choices(name);
    if (ch != NULL) {
      uint32_t n = 0;
      while (ch[n])
        n++;
      *out = sc_value_str(ch[sc_rng_int(rng, 0, n - 1)]);
    } else if (arg && arg->has_default) {
      sc_value_copy(out, &arg->default_value);
    } else {
      *out = sc_value_str("none");
    }
    break;
  }
  case SC_ARG_DTYPE: {
    static const sc_dtype ds[] = {SC_DTYPE_F32, SC_DTYPE_F16, SC_DTYPE_I64};
    out->kind = SC_VAL_DTYPE;
    out->u.dtype = ds[sc_rng_int(rng, 0, G_N_ELEMENTS(ds) - 1)];
    break;
  }
  default:
    if (arg && arg->has_default)
      sc_value_copy(out, &arg->default_value);
    break;
  }
}

/* ---- canonical forms -------------------------------------------------------

 * The lang layer rewrites clean operators to normal forms when a term is
 * added (docs/lang.md), so a matched side only ever meets those: a slice
 * with 0 <= dim < rank, 0 <= start <= end <= size and not the whole
 * tensor, a cat with a non-negative dim, a transpose with 0 <= dim0 <
 * dim1, a permute of non-negative dims that moves something, a view whose
 * shape is resolved and new.  Instances whose matched sides are not in
 * these forms never occur and are not drawn. */

static const sc_ttype *prog_slot_type(const sc_lemma_program *p, const sc_ttype *vars,
                                      uint32_t slot) {
  return slot < p->n_vars ? &vars[slot] : &p->steps[slot - p->n_vars].type;
}

static const sc_value *arg_named(const sc_op *op, const sc_value *args, const char *name) {
  int32_t i = sc_ops_arg_index(op, name);
  return i < 0 ? NULL : &args[i];
}

static gboolean const_of(const sc_value *v, int64_t *out) {
  if (v == NULL || v->kind != SC_VAL_INT || !sc_dim_is_const(v->u.i))
    return FALSE;
  *out = v->u.i.value;
  return TRUE;
}

static gboolean step_canonical(const sc_lemma_program *p, const sc_ttype *vars,
                               const sc_lemma_step *s) {
  const char *q = s->op->qualname;
  const sc_value *a = s->args;
  if (strncmp(q, "sc.", 3) != 0)
    return TRUE;
  const sc_ttype *in = NULL;
  if (a[0].kind == SC_VAL_TENSOR)
    in = prog_slot_type(p, vars, a[0].u.tensor);
  else if (a[0].kind == SC_VAL_TENSOR_LIST && a[0].u.list.n > 0)
    in = prog_slot_type(p, vars, a[0].u.list.ids[0]);
  if (in == NULL)
    return TRUE;
  int64_t d, d1, st, en, step;
  if (strcmp(q, "sc.slice.default") == 0) {
    if (!const_of(arg_named(s->op, a, "dim"), &d) || d < 0 || d >= (int64_t)in->shape.rank)
      return FALSE;
    int64_t size = in->shape.dims[d].value;
    if (!const_of(arg_named(s->op, a, "start"), &st) || !const_of(arg_named(s->op, a, "end"), &en) ||
        !const_of(arg_named(s->op, a, "step"), &step))
      return FALSE;
    return 0 <= st && st <= en && en <= size && !(st == 0 && en == size && step == 1);
  }
  if (strcmp(q, "sc.cat.default") == 0)
    return const_of(arg_named(s->op, a, "dim"), &d) && d >= 0;
  if (strcmp(q, "sc.transpose.default") == 0)
    return const_of(arg_named(s->op, a, "dim0"), &d) &&
           const_of(arg_named(s->op, a, "dim1"), &d1) && 0 <= d && d < d1;
  if (strcmp(q, "sc.permute.default") == 0) {
    const sc_value *v = arg_named(s->op, a, "dims");
    if (v == NULL || v->kind != SC_VAL_INT_LIST)
      return FALSE;
    gboolean moves = FALSE;
    for (uint32_t k = 0; k < v->u.ints.n; k++) {
      if (!sc_dim_is_const(v->u.ints.v[k]) || v->u.ints.v[k].value < 0)
        return FALSE;
      moves = moves || v->u.ints.v[k].value != (int64_t)k;
    }
    return moves;
  }
  if (strcmp(q, "sc.view.default") == 0) {
    const sc_value *v = arg_named(s->op, a, "shape");
    if (v == NULL || v->kind != SC_VAL_INT_LIST)
      return FALSE;
    for (uint32_t k = 0; k < v->u.ints.n; k++)
      if (!sc_dim_is_const(v->u.ints.v[k]) || v->u.ints.v[k].value < 0)
        return FALSE;
    return !sc_shape_equal(&s->type.shape, &in->shape);
  }
  return TRUE;
}

static gboolean program_canonical(const sc_lemma_program *p, const sc_ttype *vars) {
  for (uint32_t j = 0; j < p->n_steps; j++)
    if (!step_canonical(p, vars, &p->steps[j]))
      return FALSE;
  return TRUE;
}

/* ---- evaluating programs --------------------------------------------------- */

typedef struct {
  const sc_lemma_set *set;
  sc_symtab *st;
  sc_interp_config cfg;
  GError *error;      /* set when evaluation fails */
  gboolean uncheckable; /* ... because an operator cannot be evaluated */
} evaluator;

static sc_tvalue *eval_program(evaluator *E, const sc_lemma_program *p, sc_tvalue *const *vars,
                               uint32_t depth);

/* The NAME_unfold lemma of declared operator OP, or -1. */
static int32_t find_unfold(const sc_lemma_set *set, const sc_op *op) {
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(set); i++)
    if (sc_lemma_set_lemma(set, i)->unfolds == op)
      return (int32_t)i;
  return -1;
}

/* Evaluate a call of a declared operator through its definition. */
static sc_tvalue *eval_unfold(evaluator *E, const sc_op *op, const sc_value *args,
                              sc_tvalue *const *slots, uint32_t depth) {
  int32_t u = find_unfold(E->set, op);
  if (u < 0) {
    E->uncheckable = TRUE;
    g_set_error(&E->error, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR,
                "the declared operator %s has no definition (and no evaluator)", op->qualname);
    return NULL;
  }
  if (depth >= UNFOLD_DEPTH) {
    E->uncheckable = TRUE;
    g_set_error(&E->error, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR,
                "%s: definitions nest deeper than %d", op->qualname, UNFOLD_DEPTH);
    return NULL;
  }
  uint32_t nv = sc_lemma_n_vars(E->set, (uint32_t)u);
  sc_ttype *types = g_new0(sc_ttype, nv ? nv : 1);
  sc_value *values = g_new0(sc_value, nv ? nv : 1);
  sc_tvalue **vars = g_new0(sc_tvalue *, nv ? nv : 1);
  gboolean ok = TRUE;
  for (uint32_t v = 0; v < nv && ok; v++) {
    int32_t a = sc_ops_arg_index(op, sc_lemma_var_name(E->set, (uint32_t)u, v));
    if (a < 0)
      continue; /* not a parameter: unused by the definition */
    const sc_value *x = &args[a];
    if (sc_lemma_var_is_attr(E->set, (uint32_t)u, v)) {
      sc_value_copy(&values[v], x);
    } else if (x->kind == SC_VAL_TENSOR) {
      vars[v] = slots[x->u.tensor];
      types[v] = sc_tvalue_ttype(vars[v]);
    } else {
      E->uncheckable = TRUE;
      g_set_error(&E->error, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR,
                  "%s: the definition cannot be evaluated with '%s' absent", op->qualname,
                  op->args[a].name);
      ok = FALSE;
    }
  }
  sc_tvalue *res = NULL;
  if (ok) {
    sc_lemma_instance inst = {E->st, types, values};
    g_autofree char *why = NULL;
    g_autoptr(sc_lemma_program) p =
        sc_lemma_instantiate(E->set, (uint32_t)u, SC_LEMMA_SIDE_RIGHT, &inst, &why);
    if (p == NULL)
      g_set_error(&E->error, SC_INTERP_ERROR, SC_INTERP_ERROR_SHAPE,
                  "%s: its definition does not apply: %s", op->qualname, why);
    else
      res = eval_program(E, p, vars, depth + 1);
  }
  for (uint32_t v = 0; v < nv; v++)
    sc_value_clear(&values[v]);
  g_free(values);
  g_free(types);
  g_free(vars);
  return res;
}

static sc_tvalue *eval_program(evaluator *E, const sc_lemma_program *p, sc_tvalue *const *vars,
                               uint32_t depth) {
  uint32_t n = p->n_vars + p->n_steps;
  sc_tvalue **slots = g_new0(sc_tvalue *, n ? n : 1);
  for (uint32_t v = 0; v < p->n_vars; v++)
    slots[v] = vars[v];
  gboolean ok = TRUE;
  for (uint32_t j = 0; j < p->n_steps && ok; j++) {
    const sc_lemma_step *s = &p->steps[j];
    sc_tvalue *res = NULL;
    if (!sc_interp_has_evaluator(s->op)) {
      const char *why = sc_interp_uninterpretable_reason(s->op);
      if (why != NULL) {
        E->uncheckable = TRUE;
        g_set_error(&E->error, SC_INTERP_ERROR, SC_INTERP_ERROR_UNINTERPRETABLE, "%s: %s",
                    s->op->qualname, why);
      } else if (s->result == 0) {
        res = eval_unfold(E, s->op, s->args, slots, depth);
      } else {
        E->uncheckable = TRUE;
        g_set_error(&E->error, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR,
                    "%s has no evaluator", s->op->qualname);
      }
    } else {
      g_autoptr(GPtrArray) rs = g_ptr_array_new_with_free_func((GDestroyNotify)sc_tvalue_free);
      if (sc_interp_eval(s->op, s->args, E->st, NULL, slots, n, &E->cfg, rs, &E->error)) {
        if (s->result < rs->len) {
          res = rs->pdata[s->result];
          rs->pdata[s->result] = NULL;
        } else {
          g_set_error(&E->error, SC_INTERP_ERROR, SC_INTERP_ERROR_SHAPE,
                      "%s produced no result %u", s->op->qualname, s->result);
        }
      }
    }
    slots[p->n_vars + j] = res;
    ok = res != NULL;
  }
  sc_tvalue *out = NULL;
  if (ok)
    out = p->root < p->n_vars ? sc_tvalue_copy(slots[p->root]) : slots[p->root];
  for (uint32_t j = 0; j < p->n_steps; j++)
    if (p->n_vars + j != p->root || !ok)
      sc_tvalue_free(slots[p->n_vars + j]);
  g_free(slots);
  return out;
}

static char *type_text(const sc_ttype *t);

gboolean sc_lemcheck_eval_declared(void *user, const sc_op *op, const sc_value *args,
                                   sc_tvalue *const *tensors, uint32_t n_tensors,
                                   sc_tvalue **outs, uint32_t n_out, GError **error) {
  (void)n_tensors;
  const sc_lemma_set *set = user;
  if (n_out != 1) {
    g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR,
                "%s has %u results: only single-result declared operators are evaluated "
                "through their definitions", op->qualname, n_out);
    return FALSE;
  }
  g_autoptr(sc_symtab) st = sc_symtab_new();
  evaluator E = {set, st, {0, 0, NULL, NULL}, NULL, FALSE};
  sc_tvalue *r = eval_unfold(&E, op, args, tensors, 0);
  if (r == NULL) {
    if (E.error != NULL)
      g_propagate_error(error, E.error);
    else
      g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_NO_EVALUATOR,
                  "%s: its definition could not be evaluated", op->qualname);
    return FALSE;
  }
  gboolean same = r->dtype == outs[0]->dtype && r->rank == outs[0]->rank &&
                  r->numel == outs[0]->numel;
  for (uint32_t d = 0; d < r->rank && same; d++)
    same = r->dims[d] == outs[0]->dims[d];
  if (!same) {
    sc_ttype tg = sc_tvalue_ttype(r), tw = sc_tvalue_ttype(outs[0]);
    g_autofree char *got = type_text(&tg);
    g_autofree char *want = type_text(&tw);
    g_set_error(error, SC_INTERP_ERROR, SC_INTERP_ERROR_SHAPE,
                "%s: its definition gives %s where the declaration says %s", op->qualname, got,
                want);
    sc_tvalue_free(r);
    return FALSE;
  }
  if (r->numel > 0)
    memcpy(outs[0]->data, r->data, (size_t)r->numel * sizeof(double));
  sc_tvalue_free(r);
  return TRUE;
}

/* ---- one lemma ------------------------------------------------------------------- */

static char *type_text(const sc_ttype *t) {
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s%s", sc_dtype_name(t->dtype), s);
}

static char *coords_text(const int64_t *c, uint32_t rank) {
  GString *s = g_string_new("[");
  for (uint32_t k = 0; k < rank; k++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? ", " : "", c[k]);
  g_string_append_c(s, ']');
  return g_string_free(s, FALSE);
}

void sc_lemcheck_result_clear(sc_lemcheck_result *res) {
  g_free(res->failure.instance);
  g_free(res->failure.left_type);
  g_free(res->failure.right_type);
  g_free(res->failure.index);
  g_free(res->failure.detail);
  g_free(res->note);
  memset(res, 0, sizeof *res);
}

/* Values for the tensor variables.  Integer tensors (ids, labels) take
 * values in [0, m - 1] for the smallest dim m of the instance (they index
 * every dim of every tensor variable), or, when WIDE, in [-(M + 2),
 * 2 M + 2] for the largest dim M, so that ids below 0, inside and above
 * every vocabulary range [lo, hi) of the instance are drawn and the masks
 * of a masked lookup are exercised; a variable with a value range
 * (RANGES[v] bounded, the range its condition read) takes values inside
 * it, a missing bound replaced by the default.  FALSE (nothing to check)
 * when a range is empty and the tensor has elements. */
static gboolean fill_values(sc_rng *rng, sc_tvalue **vals, const sc_ttype *types,
                            const gboolean *is_t, const sc_vrange *ranges, uint32_t nv,
                            int64_t max_elements, gboolean positive, gboolean wide,
                            GError **error) {
  int64_t m = G_MAXINT64, big = 1;
  for (uint32_t v = 0; v < nv; v++)
    if (is_t[v])
      for (uint32_t k = 0; k < types[v].shape.rank; k++) {
        m = MIN(m, types[v].shape.dims[k].value);
        big = MAX(big, types[v].shape.dims[k].value);
      }
  if (m == G_MAXINT64 || m < 1)
    m = 1;
  gboolean ok = TRUE;
  for (uint32_t v = 0; v < nv; v++) {
    if (!is_t[v])
      continue;
    int64_t dims[SC_MAX_RANK];
    for (uint32_t k = 0; k < types[v].shape.rank; k++)
      dims[k] = types[v].shape.dims[k].value;
    vals[v] = sc_tvalue_new(types[v].dtype, types[v].shape.rank, dims, max_elements,
                            error && *error ? NULL : error);
    if (vals[v] == NULL)
      continue;
    if (types[v].dtype == SC_DTYPE_BOOL) {
      sc_tvalue_fill_ints(vals[v], rng, 0, 1);
    } else if (sc_dtype_is_integral(types[v].dtype)) {
      int64_t lo = wide ? -(big + 2) : 0, hi = wide ? 2 * big + 2 : m - 1;
      const sc_vrange *r = ranges ? &ranges[v] : NULL;
      if (r && r->lo_src != SC_VRANGE_NONE)
        lo = r->lo.value;
      if (r && r->hi_src != SC_VRANGE_NONE)
        hi = r->hi.value;
      if (lo > hi) {
        ok = ok && vals[v]->numel == 0;
        continue;
      }
      sc_tvalue_fill_ints(vals[v], rng, lo, hi); /* in [lo, hi] */
    } else if (positive) {
      sc_tvalue_fill_uniform(vals[v], rng, 0.25, 2.0);
    } else {
      sc_tvalue_fill_uniform(vals[v], rng, -1.0, 1.0);
    }
  }
  return ok;
}

/* A value range for integer tensor variable V whose range the condition
 * reads: mostly [lo, hi] around the instance's sizes, sometimes with one
 * bound or none (so that a condition that needs a fact sees it missing). */
static void draw_range(sc_rng *rng, const sc_ttype *types, const gboolean *is_t, uint32_t nv,
                       sc_vrange *out) {
  static const int64_t los[] = {-2, -1, 0, 0, 0, 0, 1, 2, 3};
  int64_t big = 1;
  for (uint32_t v = 0; v < nv; v++)
    if (is_t[v])
      for (uint32_t k = 0; k < types[v].shape.rank; k++)
        big = MAX(big, types[v].shape.dims[k].value);
  sc_vrange_init(out);
  int64_t x = sc_rng_int(rng, 0, 19);
  if (x == 0)
    return;
  int64_t lo = los[sc_rng_int(rng, 0, G_N_ELEMENTS(los) - 1)];
  int64_t hi = lo + sc_rng_int(rng, 0, 2 * big);
  if (x != 1) {
    out->lo = sc_dim_const(lo);
    out->lo_src = SC_VRANGE_FACT;
  }
  if (x != 2) {
    out->hi = sc_dim_const(hi);
    out->hi_src = SC_VRANGE_FACT;
  }
}

static gboolean uninterpretable(int code) {
  return code == SC_INTERP_ERROR_UNINTERPRETABLE || code == SC_INTERP_ERROR_LIMIT;
}

void sc_lemcheck_lemma(const sc_lemma_set *set, uint32_t lemma, const sc_lemcheck_options *opts,
                       sc_lemcheck_result *out) {
  memset(out, 0, sizeof *out);
  const sc_lemma_info *info = sc_lemma_set_lemma(set, lemma);
  out->lemma = lemma;
  out->name = info->name;
  uint32_t nv = sc_lemma_n_vars(set, lemma);
  g_autoptr(sc_symtab) st = sc_symtab_new();
  sc_ttype *types = g_new0(sc_ttype, nv ? nv : 1);
  sc_value *values = g_new0(sc_value, nv ? nv : 1);
  gboolean *is_t = g_new0(gboolean, nv ? nv : 1);
  const sc_arg **args = g_new0(const sc_arg *, nv ? nv : 1);
  for (uint32_t v = 0; v < nv; v++) {
    is_t[v] = !sc_lemma_var_is_attr(set, lemma, v);
    args[v] = sc_lemma_var_arg(set, lemma, v);
  }
  sc_rng rng;
  sc_rng_seed(&rng, opts->seed ^ ((uint64_t)g_str_hash(info->name) << 17));
  evaluator E = {set, st, {opts->seed, opts->max_elements, NULL, NULL}, NULL, FALSE};
  sc_lemma_instance inst = {st, types, values};
  /* value ranges: tensor variables whose range the condition reads are
   * integer tensors with a drawn range (the fact vmin/vmax see), and
   * their values are drawn inside it */
  sc_vrange *ranges = g_new(sc_vrange, nv ? nv : 1);
  gboolean *reads_range = g_new0(gboolean, nv ? nv : 1), any_range = FALSE;
  for (uint32_t v = 0; v < nv; v++) {
    sc_vrange_init(&ranges[v]);
    reads_range[v] = is_t[v] && sc_lemma_var_reads_range(set, lemma, v);
    any_range = any_range || reads_range[v];
  }
  gboolean steerable = sc_lemma_steer(set, lemma, st, NULL, NULL, 0);
  char *last_refusal = NULL;
  while (out->trials < opts->max_trials && out->instances < opts->instances) {
    out->trials++;
    base_shape b;
    draw_base(&rng, &b);
    for (uint32_t v = 0; v < nv; v++)
      if (is_t[v])
        draw_tensor(&rng, &b, &types[v]);
    for (uint32_t v = 0; v < nv; v++)
      if (!is_t[v])
        draw_attr(&rng, &b, args[v], types, is_t, nv, &values[v]);
    for (uint32_t v = 0; v < nv; v++)
      if (reads_range[v] && !sc_dtype_is_integral(types[v].dtype))
        types[v].dtype = sc_rng_int(&rng, 0, 4) == 0 ? SC_DTYPE_I32 : SC_DTYPE_I64;
    /* most candidates follow the condition's equations (sc_lemma_steer) */
    if (steerable && sc_rng_int(&rng, 0, 3) != 0)
      sc_lemma_steer(set, lemma, st, types, values, (uint64_t)sc_rng_int(&rng, 0, 1 << 20));
    for (uint32_t v = 0; v < nv; v++)
      if (reads_range[v])
        draw_range(&rng, types, is_t, nv, &ranges[v]);
    if ((any_range ? sc_lemma_condition_ranges(set, lemma, &inst, ranges)
                   : sc_lemma_condition(set, lemma, &inst)) != SC_YES)
      continue;
    g_autofree char *lwhy = NULL, *rwhy = NULL;
    g_autoptr(sc_lemma_program) lp =
        sc_lemma_instantiate(set, lemma, SC_LEMMA_SIDE_LEFT, &inst, &lwhy);
    g_autoptr(sc_lemma_program) rp =
        lp ? sc_lemma_instantiate(set, lemma, SC_LEMMA_SIDE_RIGHT, &inst, &rwhy) : NULL;
    if (lp == NULL || rp == NULL) {
      g_free(last_refusal);
      last_refusal = g_strdup(lwhy ? lwhy : rwhy);
      continue;
    }
    if (!program_canonical(lp, types) ||
        (info->direction == SC_LEMMA_BOTH && !program_canonical(rp, types))) {
      g_free(last_refusal);
      last_refusal = g_strdup("a matched side is not in the e-graph's canonical form");
      continue;
    }
    /* values: alternately around zero and positive (rsqrt, log...) */
    sc_tvalue **vals = g_new0(sc_tvalue *, nv ? nv : 1);
    g_autoptr(GError) verr = NULL;
    gboolean in_range = fill_values(&rng, vals, types, is_t, any_range ? ranges : NULL, nv,
                                    opts->max_elements, out->trials % 2 == 0,
                                    out->trials % 4 >= 2, &verr);
    gboolean have = verr == NULL && in_range;
    sc_tvalue *lv = NULL, *rv = NULL;
    if (have) {
      lv = eval_program(&E, lp, vals, 0);
      g_autofree char *lerr = E.error ? g_strdup(E.error->message) : NULL;
      int lerr_code = E.error ? E.error->code : -1;
      g_clear_error(&E.error);
      if (E.uncheckable) {
        out->note = g_steal_pointer(&lerr);
      } else {
        rv = eval_program(&E, rp, vals, 0);
        if (E.uncheckable && E.error) {
          out->note = g_strdup(E.error->message);
        } else if ((lv == NULL && rv == NULL) || uninterpretable(lerr_code) ||
                   (rv == NULL && E.error && uninterpretable(E.error->code))) {
          /* bad values for both sides (an index out of range...), or an
           * instance the interpreter cannot judge: skip */
          g_free(last_refusal);
          last_refusal = g_strdup_printf("the interpreter cannot evaluate it: %s",
                                         lv == NULL ? lerr : E.error ? E.error->message : "?");
        } else {
          out->instances++;
          sc_tcompare c;
          memset(&c, 0, sizeof c);
          sc_tolerance tol = sc_tolerance_default();
          gboolean same = lv && rv && sc_tvalue_compare(lv, rv, &tol, &c);
          if (!same) {
            out->n_failed++;
            if (out->n_failed == 1) {
              sc_lemcheck_failure *f = &out->failure;
              f->instance = sc_lemma_instance_to_string(set, lemma, &inst);
              for (uint32_t v = 0; v < nv; v++) {
                if (!reads_range[v])
                  continue;
                const sc_vrange *r = &ranges[v];
                GString *t = g_string_new(f->instance);
                g_string_append_printf(t, ", values of ?%s in [", sc_lemma_var_name(set, lemma, v));
                if (r->lo_src != SC_VRANGE_NONE)
                  g_string_append_printf(t, "%" G_GINT64_FORMAT, (gint64)r->lo.value);
                else
                  g_string_append(t, "?");
                if (r->hi_src != SC_VRANGE_NONE)
                  g_string_append_printf(t, ", %" G_GINT64_FORMAT "]", (gint64)r->hi.value);
                else
                  g_string_append(t, ", ?]");
                g_free(f->instance);
                f->instance = g_string_free(t, FALSE);
              }
              f->left_type = type_text(&lp->type);
              f->right_type = type_text(&rp->type);
              if (lv && rv) {
                f->detail = sc_tcompare_to_string(&c, lv, rv);
                if (c.first_index >= 0) {
                  f->index = coords_text(c.first_coords, lv->rank);
                  f->left = c.first_expected;
                  f->right = c.first_actual;
                }
              } else {
                f->detail = g_strdup_printf("the %s side cannot be evaluated where the %s side "
                                            "can: %s",
                                            lv ? "right" : "left", lv ? "left" : "right",
                                            lv ? (E.error ? E.error->message : "?") : lerr);
              }
            }
          }
        }
      }
      g_clear_error(&E.error);
    }
    sc_tvalue_free(lv);
    sc_tvalue_free(rv);
    for (uint32_t v = 0; v < nv; v++)
      sc_tvalue_free(vals[v]);
    g_free(vals);
    if (E.uncheckable)
      break;
  }
  if (E.uncheckable)
    out->status = SC_LEMCHECK_NOT_CHECKABLE;
  else if (out->n_failed > 0)
    out->status = SC_LEMCHECK_FAIL;
  else if (out->instances == 0)
    out->status = SC_LEMCHECK_NO_INSTANCE;
  else
    out->status = SC_LEMCHECK_PASS;
  if (out->status == SC_LEMCHECK_NO_INSTANCE)
    out->note = last_refusal ? g_strdup_printf("last candidate refused: %s", last_refusal)
                             : g_strdup("no candidate satisfied the where condition");
  g_free(last_refusal);
  g_clear_error(&E.error);
  g_free(ranges);
  g_free(reads_range);
  for (uint32_t v = 0; v < nv; v++)
    sc_value_clear(&values[v]);
  g_free(values);
  g_free(types);
  g_free(is_t);
  g_free(args);
}

sc_truth sc_lemcheck_instance(const sc_lemma_set *set, uint32_t lemma,
                              const sc_lemma_instance *inst, uint64_t seed, char **detail) {
  g_autofree char *lwhy = NULL, *rwhy = NULL;
  g_autoptr(sc_lemma_program) lp =
      sc_lemma_instantiate(set, lemma, SC_LEMMA_SIDE_LEFT, inst, &lwhy);
  g_autoptr(sc_lemma_program) rp =
      lp ? sc_lemma_instantiate(set, lemma, SC_LEMMA_SIDE_RIGHT, inst, &rwhy) : NULL;
  if (lp == NULL || rp == NULL)
    return SC_UNKNOWN;
  uint32_t nv = sc_lemma_n_vars(set, lemma);
  g_autofree gboolean *is_t = g_new0(gboolean, nv ? nv : 1);
  for (uint32_t v = 0; v < nv; v++)
    is_t[v] = !sc_lemma_var_is_attr(set, lemma, v);
  sc_rng rng;
  sc_rng_seed(&rng, seed);
  evaluator E = {set, inst->st, {seed, 0, NULL, NULL}, NULL, FALSE};
  sc_truth answer = SC_UNKNOWN;
  for (uint32_t trial = 0; trial < 4 && answer != SC_NO && !E.uncheckable; trial++) {
    sc_tvalue **vals = g_new0(sc_tvalue *, nv ? nv : 1);
    g_autoptr(GError) verr = NULL;
    if (fill_values(&rng, vals, inst->types, is_t, NULL, nv, 0, trial % 2 == 0, trial >= 2,
                    &verr) &&
        verr == NULL) {
      sc_tvalue *lv = eval_program(&E, lp, vals, 0);
      g_clear_error(&E.error);
      sc_tvalue *rv = lv ? eval_program(&E, rp, vals, 0) : NULL;
      g_clear_error(&E.error);
      if (lv && rv) {
        sc_tcompare c;
        memset(&c, 0, sizeof c);
        sc_tolerance tol = sc_tolerance_default();
        if (sc_tvalue_compare(lv, rv, &tol, &c)) {
          answer = SC_YES;
        } else {
          answer = SC_NO;
          *detail = sc_tcompare_to_string(&c, lv, rv);
        }
      }
      sc_tvalue_free(lv);
      sc_tvalue_free(rv);
    }
    for (uint32_t v = 0; v < nv; v++)
      sc_tvalue_free(vals[v]);
    g_free(vals);
  }
  g_clear_error(&E.error);
  return answer;
}

/* ---- the report ------------------------------------------------------------------ */

struct sc_lemcheck_report {
  GArray *results; /* sc_lemcheck_result */
};

sc_lemcheck_report *sc_lemcheck_run(const sc_lemma_set *set, const sc_lemcheck_options *opts) {
  sc_lemcheck_options def;
  if (opts == NULL) {
    sc_lemcheck_options_init(&def);
    opts = &def;
  }
  sc_lemcheck_report *r = g_new0(sc_lemcheck_report, 1);
  r->results = g_array_new(FALSE, TRUE, sizeof(sc_lemcheck_result));
  uint32_t n = sc_lemma_set_n_lemmas(set);
  g_array_set_size(r->results, n);
  for (uint32_t i = 0; i < n; i++)
    sc_lemcheck_lemma(set, i, opts, &g_array_index(r->results, sc_lemcheck_result, i));
  return r;
}

void sc_lemcheck_report_free(sc_lemcheck_report *r) {
  if (r == NULL)
    return;
  for (guint i = 0; i < r->results->len; i++)
    sc_lemcheck_result_clear(&g_array_index(r->results, sc_lemcheck_result, i));
  g_array_free(r->results, TRUE);
  g_free(r);
}

uint32_t sc_lemcheck_report_n(const sc_lemcheck_report *r) { return r->results->len; }

const sc_lemcheck_result *sc_lemcheck_report_at(const sc_lemcheck_report *r, uint32_t i) {
  g_return_val_if_fail(i < r->results->len, NULL);
  return &g_array_index(r->results, sc_lemcheck_result, i);
}

void sc_lemcheck_report_counts(const sc_lemcheck_report *r, uint32_t *passed, uint32_t *failed,
                               uint32_t *no_instance, uint32_t *not_checkable) {
  uint32_t c[4] = {0, 0, 0, 0};
  for (guint i = 0; i < r->results->len; i++)
    c[g_array_index(r->results, sc_lemcheck_result, i).status]++;
  *passed = c[SC_LEMCHECK_PASS];
  *failed = c[SC_LEMCHECK_FAIL];
  *no_instance = c[SC_LEMCHECK_NO_INSTANCE];
  *not_checkable = c[SC_LEMCHECK_NOT_CHECKABLE];
}

void sc_lemcheck_report_text(FILE *out, const sc_lemcheck_report *r) {
  for (guint i = 0; i < r->results->len; i++) {
    const sc_lemcheck_result *x = &g_array_index(r->results, sc_lemcheck_result, i);
    switch (x->status) {
    case SC_LEMCHECK_PASS:
      fprintf(out, "ok    %s: %u instances\n", x->name, x->instances);
      break;
    case SC_LEMCHECK_FAIL: {
      const sc_lemcheck_failure *f = &x->failure;
      fprintf(out, "FAIL  %s: %u of %u instances differ\n", x->name, x->n_failed, x->instances);
      fprintf(out, "      instance: %s\n", f->instance);
      fprintf(out, "      left side %s, right side %s\n", f->left_type, f->right_type);
      if (f->index)
        fprintf(out, "      first difference at %s: left %.17g, right %.17g\n", f->index, f->left,
                f->right);
      fprintf(out, "      %s\n", f->detail);
      break;
    }
    case SC_LEMCHECK_NO_INSTANCE:
      fprintf(out, "warning: %s: no instance found in %u candidates (%s)\n", x->name, x->trials,
              x->note);
      break;
    case SC_LEMCHECK_NOT_CHECKABLE:
      fprintf(out, "warning: %s: not checkable: %s\n", x->name, x->note);
      break;
    }
  }
  uint32_t p, f, w, c;
  sc_lemcheck_report_counts(r, &p, &f, &w, &c);
  fprintf(out, "%u lemmas: %u passed, %u failed, %u without instances, %u not checkable\n",
          r->results->len, p, f, w, c);
}

static json_t *num(double x) {
  return isfinite(x) ? json_real(x) : json_string(isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

char *sc_lemcheck_report_json(const sc_lemcheck_report *r, const sc_lemma_set *set) {
  json_t *root = json_object(), *arr = json_array();
  for (guint i = 0; i < r->results->len; i++) {
    const sc_lemcheck_result *x = &g_array_index(r->results, sc_lemcheck_result, i);
    const sc_lemma_info *info = sc_lemma_set_lemma(set, x->lemma);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(x->name));
    json_object_set_new(o, "file", json_string(info->file));
    json_object_set_new(o, "line", json_integer(info->line));
    json_object_set_new(o, "status", json_string(sc_lemcheck_status_name(x->status)));
    json_object_set_new(o, "instances", json_integer(x->instances));
    json_object_set_new(o, "trials", json_integer(x->trials));
    json_object_set_new(o, "failed", json_integer(x->n_failed));
    if (x->n_failed > 0) {
      const sc_lemcheck_failure *f = &x->failure;
      json_t *fo = json_object();
      json_object_set_new(fo, "instance", json_string(f->instance));
      json_object_set_new(fo, "left_type", json_string(f->left_type));
      json_object_set_new(fo, "right_type", json_string(f->right_type));
      json_object_set_new(fo, "index", f->index ? json_string(f->index) : json_null());
      json_object_set_new(fo, "left", f->index ? num(f->left) : json_null());
      json_object_set_new(fo, "right", f->index ? num(f->right) : json_null());
      json_object_set_new(fo, "detail", json_string(f->detail));
      json_object_set_new(o, "failure", fo);
    } else {
      json_object_set_new(o, "failure", json_null());
    }
    json_object_set_new(o, "note", x->note ? json_string(x->note) : json_null());
    json_array_append_new(arr, o);
  }
  json_object_set_new(root, "lemmas", arr);
  uint32_t p, f, w, c;
  sc_lemcheck_report_counts(r, &p, &f, &w, &c);
  json_t *sum = json_object();
  json_object_set_new(sum, "lemmas", json_integer(r->results->len));
  json_object_set_new(sum, "passed", json_integer(p));
  json_object_set_new(sum, "failed", json_integer(f));
  json_object_set_new(sum, "no_instance", json_integer(w));
  json_object_set_new(sum, "not_checkable", json_integer(c));
  json_object_set_new(root, "summary", sum);
  char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(root);
  char *out = g_strdup(s);
  free(s);
  return out;
}
