/* prove-vars.c — how the shape prover (prove-private.h) instantiates a
 * lemma's variables: the plan (a digit enumerated per tensor rank, dim,
 * dim list, enum, bool, dtype, Scalar representative; a symbol per size
 * and per other integer), the instance of a configuration built from it,
 * and their texts.
 *
 * Invariant: sc_lp_build_instance visits the variables and their sizes in one
 * fixed order, so that declaring the symbols, reading them back under a
 * path, and a witness's values (one per symbol, in declaration order)
 * agree. */
#include "lemma/prove-private.h"

#include <string.h>

#define SIZE_HI ((int64_t)1 << 31)
#define INT_BOUND ((int64_t)1 << 40)

static gboolean dim_named(const char *name) {
  return strstr(name, "dim") != NULL || strcmp(name, "source") == 0 ||
         strcmp(name, "destination") == 0 || strcmp(name, "axis") == 0;
}

static uint32_t upow(uint32_t b, uint32_t e) {
  uint32_t r = 1;
  while (e--)
    r *= b;
  return r;
}

static gboolean mentions_var(const lx *e, const char *name) {
  if (e == NULL)
    return FALSE;
  if (e->kind == LX_VAR && e->text && strcmp(e->text, name) == 0)
    return TRUE;
  for (uint32_t i = 0; i < e->n; i++)
    if (mentions_var(e->kids[i], name))
      return TRUE;
  return FALSE;
}

static gboolean computes_var(const pnode *p, const char *name) {
  if (p == NULL || p->is_var)
    return FALSE;
  for (uint32_t a = 0; a < p->op->n_args; a++)
    if (p->args[a].kind == PA_COMPUTE && mentions_var(p->args[a].expr, name))
      return TRUE;
  for (uint32_t i = 0; i < p->n_kids; i++)
    if (computes_var(p->kids[i], name))
      return TRUE;
  return FALSE;
}

/* Does P pass VAR to an argument of an operator whose name starts with
 * OP_PREFIX (NULL: any) named ARG_NAME (NULL: any)? */
static gboolean var_used_in(const pnode *p, uint32_t var, const char *op_prefix,
                            const char *arg_name) {
  if (p == NULL || p->is_var)
    return FALSE;
  for (uint32_t a = 0; a < p->op->n_args; a++)
    if (p->args[a].kind == PA_VAR && p->args[a].var == var &&
        (op_prefix == NULL || g_str_has_prefix(p->op->name, op_prefix)) &&
        (arg_name == NULL || strcmp(p->op->args[a].name, arg_name) == 0))
      return TRUE;
  for (uint32_t i = 0; i < p->n_kids; i++)
    if (var_used_in(p->kids[i], var, op_prefix, arg_name))
      return TRUE;
  return FALSE;
}

/* Is VAR the result-index variable (op#?k) of a node of P? */
static gboolean var_is_result(const pnode *p, uint32_t var) {
  if (p == NULL || p->is_var)
    return FALSE;
  if (p->result_var == var)
    return TRUE;
  for (uint32_t i = 0; i < p->n_kids; i++)
    if (var_is_result(p->kids[i], var))
      return TRUE;
  return FALSE;
}

static gboolean lemma_uses(const ld_checked *k, uint32_t var, const char *op_prefix,
                           const char *arg_name) {
  if (var_used_in(k->lhs, var, op_prefix, arg_name) ||
      var_used_in(k->rhs, var, op_prefix, arg_name))
    return TRUE;
  for (guint i = 0; i < k->requires->len; i++)
    if (var_used_in(g_ptr_array_index(k->requires, i), var, op_prefix, arg_name))
      return TRUE;
  return FALSE;
}

/* Representatives of a Scalar attribute: the shape rules read a Scalar's
 * kind (int, float, bool: alpha, value) and an int's sign (pow's
 * exponent), never its magnitude (arange's and linspace's bounds
 * excepted: those lemmas are out; full's Scalar is a fill value).  Of a float attribute named p or dropout_p: the
 * rules read whether it lies in [0, 1]; other floats are not read. */
static const sc_value *representative(vkind kind, uint32_t i) {
  static sc_value scalars[8], probs[5];
  static gsize once = 0;
  if (g_once_init_enter(&once)) {
    scalars[0] = sc_value_int(-1);
    scalars[1] = sc_value_int(0);
    scalars[2] = sc_value_int(1);
    scalars[3] = sc_value_int(2);
    scalars[4] = sc_value_float(0.5);
    scalars[5] = sc_value_float(-0.5);
    scalars[6] = sc_value_bool(TRUE);
    scalars[7] = sc_value_bool(FALSE);
    probs[0] = sc_value_float(0.0);
    probs[1] = sc_value_float(0.5);
    probs[2] = sc_value_float(1.0);
    probs[3] = sc_value_float(-0.5);
    probs[4] = sc_value_float(2.0);
    g_once_init_leave(&once, 1);
  }
  return kind == VK_SCALAR ? &scalars[i] : &probs[i];
}

/* The values a string argument takes (as PyTorch's schemas document
 * them), by argument name; NULL when not known. */
static const char *const *str_choices(const char *name) {
  static const char *const rounding[] = {"trunc", "floor", NULL};
  static const char *const approximate[] = {"none", "tanh", NULL};
  if (strcmp(name, "rounding_mode") == 0)
    return rounding;
  if (strcmp(name, "approximate") == 0)
    return approximate;
  return NULL;
}

/* Plan the variables of lemma I; NULL with *why when the method does not
 * apply. */
vplan *sc_lp_plan_vars(const sc_lemma_set *set, uint32_t li, const ld_checked *k, uint32_t R,
                       gboolean mixed, char **why) {
  uint32_t nv = k->vars.names->len;
  vplan *p = g_new0(vplan, nv ? nv : 1);
  for (uint32_t v = 0; v < nv; v++) {
    const char *name = g_ptr_array_index(k->vars.names, v);
    p[v].n = 1;
    if (!g_array_index(k->vars.is_attr, gboolean, v)) {
      p[v].kind = VK_TENSOR;
      p[v].n = (R + 1) * (mixed ? SC_DTYPE_COUNT : 1);
      continue;
    }
    gboolean is_result = var_is_result(k->lhs, v) || var_is_result(k->rhs, v);
    for (guint i = 0; i < k->requires->len && !is_result; i++)
      is_result = var_is_result(g_ptr_array_index(k->requires, i), v);
    if (is_result) {
      /* which result a node is depends on a value the method keeps
       * symbolic: outside the method */
      *why = g_strdup_printf("?%s is a result index (#?%s)", name, name);
      g_free(p);
      return NULL;
    }
    const sc_arg *a = sc_lemma_var_arg(set, li, v);
    p[v].arg = a;
    sc_arg_type t = a ? a->type : SC_ARG_INT;
    const char *an = a ? a->name : "";
    switch (t) {
    case SC_ARG_INT:
      if (dim_named(an)) {
        p[v].kind = VK_DIM;
        p[v].n = 2 * R;
      } else if (strcmp(an, "reduction") == 0) {
        p[v].kind = VK_ENUM;
        p[v].n = 3;
      } else {
        p[v].kind = VK_SYMINT;
      }
      break;
    case SC_ARG_SCALAR:
      /* in the condition: proved without the conjuncts that read it
       * (sc_lp_where_without) */
      if (computes_var(k->rhs, name)) {
        *why = g_strdup_printf("a computed argument reads the Scalar attribute ?%s (an int "
                               "or a float)",
                               name);
        g_free(p);
        return NULL;
      }
      /* full's Scalar is its fill value: its kind (the dtype when none is
       * given) is all a rule reads, as for any other Scalar */
      if (lemma_uses(k, v, "arange", NULL) || lemma_uses(k, v, "linspace", NULL)) {
        *why = g_strdup_printf("the Scalar attribute ?%s is a bound of arange/linspace "
                               "(its magnitude makes sizes)",
                               name);
        g_free(p);
        return NULL;
      }
      p[v].kind = VK_SCALAR;
      p[v].n = 8;
      break;
    case SC_ARG_INT_LIST:
      if (dim_named(an)) {
        p[v].kind = VK_DIMLIST;
        p[v].n = 0;
        for (uint32_t len = 0; len <= R; len++)
          p[v].n += upow(2 * R, len);
      } else {
        p[v].kind = VK_SIZELIST;
        p[v].n = R + 1;
      }
      break;
    case SC_ARG_BOOL:
      p[v].kind = VK_BOOL;
      p[v].n = 2;
      break;
    case SC_ARG_BOOL_LIST:
      /* bool[N] (an output mask): every one of its 2^N values */
      if (a == NULL || a->fixed_len == 0 || a->fixed_len > 8) {
        *why = g_strdup_printf("attribute ?%s is a bool list of no fixed length up to 8", name);
        g_free(p);
        return NULL;
      }
      p[v].kind = VK_BOOLLIST;
      p[v].n = 1u << a->fixed_len;
      break;
    case SC_ARG_DTYPE:
      p[v].kind = VK_DTYPE;
      p[v].n = SC_DTYPE_COUNT;
      break;
    case SC_ARG_FLOAT:
    case SC_ARG_STR:
      if (t == SC_ARG_STR && a && str_choices(a->name) != NULL) {
        /* every value the schema's callers pass (and None when optional) */
        p[v].kind = VK_STRCHOICE;
        p[v].n = 0;
        while (str_choices(a->name)[p[v].n])
          p[v].n++;
        p[v].n += a->optional ? 1 : 0;
        break;
      }
      if (mentions_var(k->where, name) || computes_var(k->rhs, name)) {
        *why = g_strdup_printf("the condition or a computed argument reads the %s attribute ?%s",
                               t == SC_ARG_FLOAT ? "float" : "string", name);
        g_free(p);
        return NULL;
      }
      if (t == SC_ARG_STR && !(a && a->has_default)) {
        *why = g_strdup_printf("the string attribute ?%s has no default to fix", name);
        g_free(p);
        return NULL;
      }
      p[v].kind = VK_FIXED;
      if (t == SC_ARG_FLOAT && (lemma_uses(k, v, NULL, "p") || lemma_uses(k, v, NULL, "dropout_p"))) {
        p[v].kind = VK_PROB;
        p[v].n = 5;
      }
      break;
    default:
      *why = g_strdup_printf("attribute ?%s has a type the prover does not enumerate", name);
      g_free(p);
      return NULL;
    }
  }
  return p;
}
/* Symbol names: s<var>_<k> for sizes, i<var> and i<var>_<k> for integers.
 * DECLARE: declare the symbol (its value is not used); else the symbol's
 * dim under the assumptions made since (or the witness's value). */
static sc_dim sym_value(prun *P, const char *name, gboolean is_size, gboolean declare,
                        uint32_t *next) {
  if (P->concrete)
    return sc_dim_const(P->cval[(*next)++]);
  (*next)++;
  sc_dim d = sc_dim_const(0);
  if (declare) {
    g_array_append_val(P->sym_is_size, is_size);
    sc_symtab_declare(P->st, name, TRUE, is_size ? 1 : -INT_BOUND, TRUE,
                      is_size ? SIZE_HI : INT_BOUND, NULL);
    return d;
  }
  if (!sc_dim_symbol(P->st, name, &d, NULL))
    return sc_dim_const(0);
  return sc_dim_add(P->st, d, sc_dim_const(0));
}

/* Decode a dim list digit: length and items in [-R, R). */
static uint32_t decode_dimlist(uint32_t c, uint32_t R, int64_t *items) {
  uint32_t len = 0, base = 2 * R;
  while (c >= upow(base, len)) {
    c -= upow(base, len);
    len++;
  }
  for (uint32_t i = 0; i < len; i++) {
    items[i] = (int64_t)(c % base) - (int64_t)R;
    c /= base;
  }
  return len;
}

uint32_t sc_lp_rank(const prun *P, uint32_t v) {
  return P->mixed ? P->digit[v] % (P->R + 1) : P->digit[v];
}

sc_dtype sc_lp_dtype(const prun *P, uint32_t v) {
  return (sc_dtype)(P->mixed ? P->digit[v] / (P->R + 1) : P->digit[P->nv]);
}

uint32_t sc_lp_dtype_radix(const prun *P) { return P->mixed ? 1 : SC_DTYPE_COUNT; }

/* Declare the symbols of the configuration (DECLARE), or build the
 * variables' types and values from them, in a fixed order (which the
 * witness search's values follow).  Returns the number of symbols. */
uint32_t sc_lp_build_instance(prun *P, gboolean declare) {
  uint32_t next = 0;
  for (uint32_t v = 0; v < P->nv; v++) {
    const vplan *pl = &P->plan[v];
    uint32_t d = P->digit[v];
    sc_value *x = &P->values[v];
    char name[48];
    switch (pl->kind) {
    case VK_TENSOR: {
      sc_ttype *t = &P->types[v];
      t->dtype = sc_lp_dtype(P, v);
      t->shape.rank = sc_lp_rank(P, v);
      for (uint32_t j = 0; j < t->shape.rank; j++) {
        g_snprintf(name, sizeof name, "s%u_%u", v, j);
        t->shape.dims[j] = sym_value(P, name, TRUE, declare, &next);
      }
      break;
    }
    case VK_DIM:
      *x = sc_value_int((int64_t)d - (int64_t)P->R);
      break;
    case VK_ENUM:
      *x = sc_value_int(d);
      break;
    case VK_SYMINT: {
      g_snprintf(name, sizeof name, "i%u", v);
      *x = sc_value_dim(sym_value(P, name, FALSE, declare, &next));
      break;
    }
    case VK_DIMLIST:
    case VK_SIZELIST: {
      int64_t items[SC_MAX_RANK];
      uint32_t len = pl->kind == VK_DIMLIST ? decode_dimlist(d, P->R, items) : d;
      x->kind = SC_VAL_INT_LIST;
      x->u.ints.n = len;
      x->u.ints.v = g_new(sc_dim, len ? len : 1);
      for (uint32_t j = 0; j < len; j++) {
        if (pl->kind == VK_DIMLIST) {
          x->u.ints.v[j] = sc_dim_const(items[j]);
          continue;
        }
        g_snprintf(name, sizeof name, "i%u_%u", v, j);
        x->u.ints.v[j] = sym_value(P, name, FALSE, declare, &next);
      }
      break;
    }
    case VK_BOOL:
      *x = sc_value_bool(d != 0);
      break;
    case VK_BOOLLIST:
      x->kind = SC_VAL_BOOL_LIST;
      x->u.bools.n = pl->arg->fixed_len;
      x->u.bools.v = g_new(gboolean, pl->arg->fixed_len);
      for (uint32_t j = 0; j < pl->arg->fixed_len; j++)
        x->u.bools.v[j] = (d >> j) & 1u;
      break;
    case VK_DTYPE:
      x->kind = SC_VAL_DTYPE;
      x->u.dtype = (sc_dtype)d;
      break;
    case VK_SCALAR:
    case VK_PROB:
      sc_value_copy(x, representative(pl->kind, d));
      break;
    case VK_STRCHOICE: {
      const char *const *c = str_choices(pl->arg->name);
      uint32_t nc = 0;
      while (c[nc])
        nc++;
      if (d < nc) {
        x->kind = SC_VAL_STR;
        x->u.s = g_strdup(c[d]);
      } else {
        *x = sc_value_none();
      }
      break;
    }
    case VK_FIXED:
      if (pl->arg && pl->arg->type == SC_ARG_STR)
        sc_value_copy(x, &pl->arg->default_value);
      else
        *x = sc_value_float(0.5);
      break;
    }
  }
  return next;
}
char *sc_lp_instance_text(prun *P) {
  GString *s = g_string_new(NULL);
  for (uint32_t v = 0; v < P->nv; v++) {
    const char *name = g_ptr_array_index(P->k->vars.names, v);
    if (s->len)
      g_string_append(s, ", ");
    if (P->plan[v].kind == VK_TENSOR) {
      g_autofree char *t = sc_lp_type_text(&P->types[v]);
      g_string_append_printf(s, "?%s: %s", name, t);
    } else {
      g_autofree char *t = sc_value_to_string(&P->values[v], P->st, NULL, NULL);
      g_string_append_printf(s, "?%s = %s", name, t);
    }
  }
  return g_string_free(s, FALSE);
}

/* The configuration as text: ranks, enumerated attributes, dtype. */
char *sc_lp_config_text(prun *P) {
  GString *s = g_string_new(NULL);
  for (uint32_t v = 0; v < P->nv; v++) {
    const char *name = g_ptr_array_index(P->k->vars.names, v);
    const vplan *pl = &P->plan[v];
    if (pl->kind == VK_SYMINT || pl->kind == VK_FIXED)
      continue;
    if (s->len)
      g_string_append(s, ", ");
    if (pl->kind == VK_TENSOR && P->mixed)
      g_string_append_printf(s, "?%s of rank %u, %s", name, sc_lp_rank(P, v),
                             sc_dtype_name(sc_lp_dtype(P, v)));
    else if (pl->kind == VK_TENSOR)
      g_string_append_printf(s, "?%s of rank %u", name, P->digit[v]);
    else if (pl->kind == VK_SIZELIST)
      g_string_append_printf(s, "?%s of length %u", name, P->digit[v]);
    else {
      g_autofree char *t = sc_value_to_string(&P->values[v], P->st, NULL, NULL);
      g_string_append_printf(s, "?%s = %s", name, t);
    }
  }
  if (!P->mixed)
    g_string_append_printf(s, "%sdtype %s", s->len ? ", " : "",
                           sc_dtype_name((sc_dtype)P->digit[P->nv]));
  return g_string_free(s, FALSE);
}

/* The condition without its top-level conjuncts that read a Scalar
 * attribute (whose representatives stand for every value of its kind and
 * sign in the shape rules, not in a condition on its magnitude): NULL when
 * none is left.  Dropping a conjunct weakens the hypothesis, so a proof
 * without it is a proof with it; a refutation's concrete run keeps the
 * whole condition.  New AND nodes go to MADE (free them with g_free). */
static const lx *without(const lx *e, const ld_checked *k, const vplan *plan, uint32_t nv,
                         GPtrArray *made) {
  if (e == NULL)
    return NULL;
  if (e->kind == LX_AND && e->n == 2) {
    const lx *a = without(e->kids[0], k, plan, nv, made);
    const lx *b = without(e->kids[1], k, plan, nv, made);
    if (a == e->kids[0] && b == e->kids[1])
      return e;
    if (a == NULL || b == NULL)
      return a ? a : b;
    lx *n = g_new0(lx, 1);
    n->kind = LX_AND;
    n->start = e->start;
    n->end = e->end;
    n->n = 2;
    n->kids = g_new0(lx *, 2);
    n->kids[0] = (lx *)a;
    n->kids[1] = (lx *)b;
    g_ptr_array_add(made, n->kids);
    g_ptr_array_add(made, n);
    return n;
  }
  for (uint32_t v = 0; v < nv; v++)
    if (plan[v].kind == VK_SCALAR &&
        mentions_var(e, g_ptr_array_index(k->vars.names, v)))
      return NULL;
  return e;
}

const lx *sc_lp_where_without(const ld_checked *k, const vplan *plan, GPtrArray *made) {
  return without(k->where, k, plan, k->vars.names->len, made);
}
