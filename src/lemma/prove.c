/* prove.c — the shape prover of lemmas for all sizes (lemprove.h): each
 * lemma's typing obligation run on symbolic sizes, configuration by
 * configuration, path by path.
 *
 * A path is a list of assumption texts ("s0_1 - 1 == 0", "i2 <= -1") made
 * in a fresh symtab before the run; a run that meets a comparison that
 * neither the normal form nor the oracle decides stops at the first one
 * and is replayed with that comparison and with its negation assumed
 * (depth first).  A run is deterministic given its configuration and its
 * path, so a replay meets the same comparisons, now decided.
 *
 * Invariants: a path's assumptions are consistent as far as the symtab can
 * tell (an assumption that contradicts the others ends the path as
 * infeasible); every run builds its own symtab, types and values and frees
 * them; the wrapped oracle never calls back into the symtab. */
#include "lemma/lemma-private.h"
#include "shardcheck/lemprove.h"

#include <string.h>

const ld_checked *sc_lemma_set_checked(const sc_lemma_set *set, uint32_t i);

#define SIZE_HI ((int64_t)1 << 31)
#define INT_BOUND ((int64_t)1 << 40)
#define MAX_DEPTH 48
#define N_WITNESS 3000
#define MAX_CONFIG_PATHS 4000
#define MAX_SOLVER_CALLS 600

/* ------------------------------------------------------------------------ */
/* How each variable of a lemma is instantiated                             */

typedef enum {
  VK_TENSOR,   /* digit: rank 0..R */
  VK_DIM,      /* digit: value in [-R, R) */
  VK_DIMLIST,  /* digit: a list of length 0..R of values in [-R, R) */
  VK_ENUM,     /* digit: value 0..n-1 (loss reduction) */
  VK_SYMINT,   /* a symbol in [-2^40, 2^40] */
  VK_SIZELIST, /* digit: length 0..R, each item a symbol */
  VK_BOOL,     /* digit: FALSE, TRUE */
  VK_DTYPE,    /* digit: every dtype */
  VK_FIXED,    /* a fixed value (a float, or a string's default) */
  VK_SCALAR,   /* digit: a representative Scalar (representative()) */
  VK_PROB,     /* digit: a representative float p (representative()) */
} vkind;

typedef struct {
  vkind kind;
  uint32_t n;        /* choices of its digit (1: no digit) */
  const sc_arg *arg; /* attributes */
} vplan;

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
 * exponent), never its magnitude (arange's and full's bounds excepted:
 * those lemmas are out).  Of a float attribute named p or dropout_p: the
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

/* Plan the variables of lemma I; NULL with *why when the method does not
 * apply. */
static vplan *plan_vars(const sc_lemma_set *set, uint32_t li, const ld_checked *k, uint32_t R,
                        char **why) {
  uint32_t nv = k->vars.names->len;
  vplan *p = g_new0(vplan, nv ? nv : 1);
  for (uint32_t v = 0; v < nv; v++) {
    const char *name = g_ptr_array_index(k->vars.names, v);
    p[v].n = 1;
    if (!g_array_index(k->vars.is_attr, gboolean, v)) {
      p[v].kind = VK_TENSOR;
      p[v].n = R + 1;
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
      if (mentions_var(k->where, name) || computes_var(k->rhs, name)) {
        *why = g_strdup_printf("the condition or a computed argument reads the Scalar "
                               "attribute ?%s (an int or a float)",
                               name);
        g_free(p);
        return NULL;
      }
      if (lemma_uses(k, v, "arange", NULL) || lemma_uses(k, v, "full", NULL) ||
          lemma_uses(k, v, "linspace", NULL)) {
        *why = g_strdup_printf("the Scalar attribute ?%s is a bound of arange/full/linspace "
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
    case SC_ARG_DTYPE:
      p[v].kind = VK_DTYPE;
      p[v].n = SC_DTYPE_COUNT;
      break;
    case SC_ARG_FLOAT:
    case SC_ARG_STR:
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

/* ------------------------------------------------------------------------ */
/* One run: a configuration and a path                                       */

typedef struct {
  const ld_checked *k;
  const vplan *plan;
  uint32_t nv, R;
  const uint32_t *digit;   /* per var, then the dtype digit at [nv] */
  const sc_sym_oracle *inner;
  void *inner_user;
  GPtrArray *path;         /* char*: assumptions */
  /* per run */
  sc_symtab *st;
  sc_ttype *types;
  sc_value *values;
  char *branch, *branch_neg; /* the first comparison left undecided */
  char *stuck;               /* why the run cannot go on */
  gboolean concrete;         /* a witness run: no symbols */
  const int64_t *cval;       /* witness: a value per symbol, in declaration order */
  GArray *sym_is_size;       /* gboolean per symbol, filled when declaring */
  GHashTable *answers;       /* query key -> 1 + sc_truth: the inner oracle's
                                answers, kept across the lemma's runs (a key
                                is the whole question, context included) */
  uint32_t solver_calls;     /* the lemma's calls of the inner oracle */
  uint32_t runs;             /* the lemma's runs (paths, splits, infeasible) */
} prun;

static void append_poly(GString *s, const sc_sym_query *q, const sc_sym_qpoly *p,
                        gboolean *opaque) {
  if (p->n_terms == 0) {
    g_string_append(s, "0");
    return;
  }
  for (uint32_t i = 0; i < p->n_terms; i++) {
    const sc_sym_qterm *t = &p->terms[i];
    int64_t c = t->coeff;
    if (i > 0)
      g_string_append(s, c < 0 ? " - " : " + ");
    else if (c < 0)
      g_string_append(s, "-");
    uint64_t mag = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
    gboolean first = TRUE;
    if (mag != 1 || t->n_factors == 0) {
      g_string_append_printf(s, "%" G_GUINT64_FORMAT, mag);
      first = FALSE;
    }
    for (uint32_t f = 0; f < t->n_factors; f++) {
      const char *name = t->factors[f].var < q->n_vars ? q->vars[t->factors[f].var].name : "#";
      if (name[0] == '#')
        *opaque = TRUE;
      for (uint32_t e = 0; e < t->factors[f].exp; e++) {
        g_string_append_printf(s, "%s%s", first ? "" : "*", name);
        first = FALSE;
      }
    }
  }
}

/* The goal of Q and its negation as assumption texts; FALSE when the goal
 * reads an opaque atom (a floor division, modulo, min or max). */
static gboolean goal_texts(const sc_sym_query *q, char **pos, char **neg) {
  g_autoptr(GString) p = g_string_new(NULL);
  gboolean opaque = FALSE;
  const sc_sym_qlit *g = &q->goal;
  if (g->rel == SC_SYM_REL_DIV)
    g_string_append(p, "(");
  append_poly(p, q, &g->p, &opaque);
  if (opaque)
    return FALSE;
  switch (g->rel) {
  case SC_SYM_REL_EQ:
    *pos = g_strdup_printf("%s == 0", p->str);
    *neg = g_strdup_printf("%s != 0", p->str);
    break;
  case SC_SYM_REL_NE:
    *pos = g_strdup_printf("%s != 0", p->str);
    *neg = g_strdup_printf("%s == 0", p->str);
    break;
  case SC_SYM_REL_GE:
    *pos = g_strdup_printf("%s >= 0", p->str);
    *neg = g_strdup_printf("%s <= -1", p->str);
    break;
  case SC_SYM_REL_DIV:
  default:
    *pos = g_strdup_printf("%s) %% %" G_GINT64_FORMAT " == 0", p->str, g->k);
    *neg = g_strdup_printf("%s) %% %" G_GINT64_FORMAT " != 0", p->str, g->k);
    break;
  }
  return TRUE;
}

static gboolean in_path(const prun *P, const char *text) {
  for (guint i = 0; i < P->path->len; i++)
    if (strcmp(g_ptr_array_index(P->path, i), text) == 0)
      return TRUE;
  return FALSE;
}

static sc_truth wrap_decide(void *user, const sc_sym_query *q) {
  prun *P = user;
  sc_truth t = SC_UNKNOWN;
  gpointer hit = q->key ? g_hash_table_lookup(P->answers, q->key) : NULL;
  if (hit != NULL) {
    t = (sc_truth)(GPOINTER_TO_INT(hit) - 1);
  } else if (P->inner && P->solver_calls >= MAX_SOLVER_CALLS) {
    if (P->stuck == NULL)
      P->stuck = g_strdup_printf("more than %u solver calls (budget)", MAX_SOLVER_CALLS);
    return SC_UNKNOWN;
  } else if (P->inner) {
    P->solver_calls++;
    t = P->inner->decide(P->inner_user, q);
    if (q->key)
      g_hash_table_insert(P->answers, g_strdup(q->key), GINT_TO_POINTER((int)t + 1));
  }
  if (t != SC_UNKNOWN || P->branch != NULL || P->stuck != NULL)
    return t;
  char *pos = NULL, *neg = NULL;
  if (!goal_texts(q, &pos, &neg)) {
    P->stuck = g_strdup_printf("a comparison over a floor division, modulo, min or max that "
                               "the solver leaves undecided (%s)",
                               q->key ? q->key : "?");
    g_strdelimit(P->stuck, "\n", ';');
  } else if (in_path(P, pos) || in_path(P, neg) || P->path->len >= MAX_DEPTH) {
    P->stuck = g_strdup_printf("a comparison the solver leaves undecided under its own "
                               "assumption (%s)",
                               pos);
    g_free(pos);
    g_free(neg);
  } else {
    P->branch = pos;
    P->branch_neg = neg;
  }
  return SC_UNKNOWN;
}

static const sc_sym_oracle wrap_oracle = {wrap_decide};

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

/* Declare the symbols of the configuration (DECLARE), or build the
 * variables' types and values from them, in a fixed order (which the
 * witness search's values follow).  Returns the number of symbols. */
static uint32_t build_instance(prun *P, gboolean declare) {
  uint32_t next = 0;
  sc_dtype dt = (sc_dtype)P->digit[P->nv];
  for (uint32_t v = 0; v < P->nv; v++) {
    const vplan *pl = &P->plan[v];
    uint32_t d = P->digit[v];
    sc_value *x = &P->values[v];
    char name[48];
    switch (pl->kind) {
    case VK_TENSOR: {
      sc_ttype *t = &P->types[v];
      t->dtype = dt;
      t->shape.rank = d;
      for (uint32_t j = 0; j < d; j++) {
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
    case VK_DTYPE:
      x->kind = SC_VAL_DTYPE;
      x->u.dtype = (sc_dtype)d;
      break;
    case VK_SCALAR:
    case VK_PROB:
      sc_value_copy(x, representative(pl->kind, d));
      break;
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

static uint32_t var_index(const ld_vars *vars, const char *name) {
  for (guint i = 0; i < vars->names->len; i++)
    if (strcmp(g_ptr_array_index(vars->names, i), name) == 0)
      return i;
  return UINT32_MAX;
}

static gboolean run_lookup(void *env, const lx *ref, ev_val *out) {
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
static gboolean infer(prun *P, const pnode *p, sc_ttype *out, int *code, char **msg) {
  if (p->is_var) {
    *out = P->types[p->var];
    return TRUE;
  }
  const sc_op *op = p->op;
  GArray *tys = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
  for (uint32_t i = 0; i < p->n_kids; i++) {
    sc_ttype t;
    if (!infer(P, p->kids[i], &t, code, msg)) {
      g_array_free(tys, TRUE);
      return FALSE;
    }
    g_array_append_val(tys, t);
  }
  sc_value *args = g_new0(sc_value, op->n_args ? op->n_args : 1);
  ev_env env = {P->st, run_lookup, P};
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
static gboolean refusal_is_method(int code, const char *msg) {
  return code == SC_OPS_ERROR_UNDECIDED || code == -1 || strstr(msg, "concrete") != NULL ||
         strstr(msg, "cannot decide") != NULL;
}

typedef enum {
  PR_BRANCH,     /* replay with P->branch and its negation */
  PR_STUCK,      /* P->stuck says why */
  PR_INFEASIBLE, /* the path's assumptions contradict each other */
  PR_VACUOUS,    /* the left side is ill-typed, or the condition NO */
  PR_OK,         /* typed, same type */
  PR_BAD,        /* *why: what breaks */
} pres;

static pres stuck_or_branch(prun *P, int code, const char *msg) {
  if (P->branch)
    return PR_BRANCH;
  if (P->stuck == NULL)
    P->stuck = g_strdup(msg);
  (void)code;
  return PR_STUCK;
}

static char *type_text(const sc_ttype *t) {
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s%s", sc_dtype_name(t->dtype), s);
}

/* Is the condition NO under the run, with its negation YES? */
static gboolean where_excludes(prun *P) {
  ev_env env = {P->st, run_lookup, P};
  if (ev_condition(&env, P->k->where) != SC_NO || P->branch || P->stuck)
    return FALSE;
  lx notn;
  memset(&notn, 0, sizeof notn);
  lx *kid = P->k->where;
  notn.kind = LX_NOT;
  notn.n = 1;
  notn.kids = &kid;
  return ev_condition(&env, &notn) == SC_YES;
}

/* The obligation on the current run (symtab, types, values made). */
static pres obligation(prun *P, char **why) {
  const ld_checked *k = P->k;
  gboolean both = k->dir == SC_LEMMA_BOTH;
  sc_ttype lt, rt;
  int lcode = 0, rcode = 0;
  g_autofree char *lmsg = NULL, *rmsg = NULL;
  /* The condition first, as a filter only: a path where it is NO (and its
   * negation YES, so that NO is not an evaluation failure) is excluded
   * before the sides split it further; any other answer goes on, and the
   * condition is asked again once the sides are typed. */
  if (k->where && where_excludes(P))
    return PR_VACUOUS;
  if (P->branch || P->stuck)
    return stuck_or_branch(P, 0, "");
  gboolean lok = infer(P, k->lhs, &lt, &lcode, &lmsg);
  if (P->branch || P->stuck)
    return stuck_or_branch(P, lcode, lmsg ? lmsg : "");
  if (!lok && refusal_is_method(lcode, lmsg))
    return stuck_or_branch(P, lcode, lmsg);
  if (!lok && !both)
    return PR_VACUOUS;
  gboolean rok = infer(P, k->rhs, &rt, &rcode, &rmsg);
  if (P->branch || P->stuck)
    return stuck_or_branch(P, rcode, rmsg ? rmsg : "");
  if (!rok && refusal_is_method(rcode, rmsg))
    return stuck_or_branch(P, rcode, rmsg);
  if (!lok && !rok)
    return PR_VACUOUS;
  if (k->where) {
    ev_env env = {P->st, run_lookup, P};
    sc_truth c = ev_condition(&env, k->where);
    if (P->branch || P->stuck)
      return stuck_or_branch(P, 0, "");
    if (c == SC_NO) {
      /* NO is also what an evaluation failure gives (a value the symbolic
       * instance cannot stand for): only a condition whose negation is YES
       * excludes the path */
      lx notn;
      memset(&notn, 0, sizeof notn);
      lx *kid = k->where;
      notn.kind = LX_NOT;
      notn.n = 1;
      notn.kids = &kid;
      notn.start = k->where->start;
      notn.end = k->where->end;
      sc_truth nc = ev_condition(&env, &notn);
      if (P->branch || P->stuck)
        return stuck_or_branch(P, 0, "");
      if (nc == SC_YES)
        return PR_VACUOUS;
      P->stuck = g_strdup("the condition cannot be evaluated on symbolic sizes");
      return PR_STUCK;
    }
    if (c == SC_UNKNOWN) {
      g_autofree char *u = ev_undecided_text(&env, k->where);
      P->stuck = g_strdup_printf("the condition is undecided (%s)", u ? u : "not integer");
      return PR_STUCK;
    }
  }
  for (guint i = 0; i < k->requires->len; i++) {
    sc_ttype qt;
    int qcode = 0;
    g_autofree char *qmsg = NULL;
    gboolean qok = infer(P, g_ptr_array_index(k->requires, i), &qt, &qcode, &qmsg);
    if (P->branch || P->stuck)
      return stuck_or_branch(P, qcode, qmsg ? qmsg : "");
    if (!qok && refusal_is_method(qcode, qmsg))
      return stuck_or_branch(P, qcode, qmsg);
    if (!qok)
      return PR_VACUOUS;
  }
  if (lok && !rok) {
    g_autofree char *l = type_text(&lt);
    *why = g_strdup_printf("the left side is %s but the right side is ill-typed: %s", l, rmsg);
    return PR_BAD;
  }
  if (!lok) {
    g_autofree char *r = type_text(&rt);
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
    g_autofree char *l = type_text(&lt), *r = type_text(&rt);
    *why = g_strdup_printf("the left side is %s and the right side is %s", l, r);
    return PR_BAD;
  }
  return PR_OK;
}

static void run_clear_values(prun *P) {
  for (uint32_t v = 0; v < P->nv; v++)
    sc_value_clear(&P->values[v]);
  memset(P->values, 0, sizeof(sc_value) * (P->nv ? P->nv : 1));
  memset(P->types, 0, sizeof(sc_ttype) * (P->nv ? P->nv : 1));
}

static void run_clear(prun *P) {
  run_clear_values(P);
  g_clear_pointer(&P->branch, g_free);
  g_clear_pointer(&P->branch_neg, g_free);
  g_clear_pointer(&P->st, sc_symtab_free);
}

/* One symbolic run of the configuration under P->path. */
static pres run_path(prun *P, char **why) {
  run_clear(P);
  P->concrete = FALSE;
  P->st = sc_symtab_new();
  build_instance(P, TRUE);
  run_clear_values(P);
  for (guint i = 0; i < P->path->len; i++) {
    g_autoptr(GError) err = NULL;
    if (!sc_symtab_assume(P->st, g_ptr_array_index(P->path, i), &err)) {
      if (err->code == SC_SYM_ERROR_INVALID &&
          (strstr(err->message, "contradicts") || strstr(err->message, "is false")))
        return PR_INFEASIBLE;
      P->stuck = g_strdup_printf("cannot assume %s: %s",
                                 (const char *)g_ptr_array_index(P->path, i), err->message);
      return PR_STUCK;
    }
  }
  build_instance(P, FALSE);
  sc_symtab_set_oracle(P->st, &wrap_oracle, P);
  return obligation(P, why);
}

/* ------------------------------------------------------------------------ */
/* A lemma                                                                   */

static char *instance_text(prun *P) {
  GString *s = g_string_new(NULL);
  for (uint32_t v = 0; v < P->nv; v++) {
    const char *name = g_ptr_array_index(P->k->vars.names, v);
    if (s->len)
      g_string_append(s, ", ");
    if (P->plan[v].kind == VK_TENSOR) {
      g_autofree char *t = type_text(&P->types[v]);
      g_string_append_printf(s, "?%s: %s", name, t);
    } else {
      g_autofree char *t = sc_value_to_string(&P->values[v], P->st, NULL, NULL);
      g_string_append_printf(s, "?%s = %s", name, t);
    }
  }
  return g_string_free(s, FALSE);
}

/* The configuration as text: ranks, enumerated attributes, dtype. */
static char *config_text(prun *P) {
  GString *s = g_string_new(NULL);
  for (uint32_t v = 0; v < P->nv; v++) {
    const char *name = g_ptr_array_index(P->k->vars.names, v);
    const vplan *pl = &P->plan[v];
    if (pl->kind == VK_SYMINT || pl->kind == VK_FIXED)
      continue;
    if (s->len)
      g_string_append(s, ", ");
    if (pl->kind == VK_TENSOR)
      g_string_append_printf(s, "?%s of rank %u", name, P->digit[v]);
    else if (pl->kind == VK_SIZELIST)
      g_string_append_printf(s, "?%s of length %u", name, P->digit[v]);
    else {
      g_autofree char *t = sc_value_to_string(&P->values[v], P->st, NULL, NULL);
      g_string_append_printf(s, "?%s = %s", name, t);
    }
  }
  g_string_append_printf(s, "%sdtype %s", s->len ? ", " : "",
                         sc_dtype_name((sc_dtype)P->digit[P->nv]));
  return g_string_free(s, FALSE);
}

/* A concrete instance of the configuration that breaks the obligation
 * under the concrete shape rules, searched among N_WITNESS random sizes
 * and integers; NULL when none is found.  (transfer full) */
static char *find_witness(prun *P, uint32_t seed) {
  static const int64_t sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 32, 100};
  static const int64_t ints[] = {-33, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 33, 101};
  uint32_t n = P->sym_is_size->len;
  g_autofree int64_t *val = g_new0(int64_t, n ? n : 1);
  GRand *r = g_rand_new_with_seed(seed);
  char *found = NULL;
  for (uint32_t t = 0; found == NULL && t < N_WITNESS; t++) {
    for (uint32_t i = 0; i < n; i++)
      val[i] = g_array_index(P->sym_is_size, gboolean, i)
                   ? sizes[g_rand_int_range(r, 0, G_N_ELEMENTS(sizes))]
                   : ints[g_rand_int_range(r, 0, G_N_ELEMENTS(ints))];
    run_clear(P);
    g_clear_pointer(&P->stuck, g_free);
    P->concrete = TRUE;
    P->cval = val;
    P->st = sc_symtab_new();
    build_instance(P, FALSE);
    g_autofree char *why = NULL;
    if (obligation(P, &why) == PR_BAD) {
      g_autofree char *inst = instance_text(P);
      found = g_strdup_printf("with %s, %s", inst, why);
    }
  }
  g_clear_pointer(&P->stuck, g_free);
  P->concrete = FALSE;
  g_rand_free(r);
  return found;
}

static void free_path(gpointer p) { g_ptr_array_unref(p); }

static GPtrArray *path_plus(GPtrArray *path, const char *text) {
  GPtrArray *p = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < path->len; i++)
    g_ptr_array_add(p, g_strdup(g_ptr_array_index(path, i)));
  g_ptr_array_add(p, g_strdup(text));
  return p;
}

/* Every path of the configuration in P->digit.  TRUE to go on with the
 * next configuration; FALSE with R's status and why set. */
static gboolean prove_config(prun *P, const sc_lemprove_options *o, sc_lemprove_result *r) {
  GPtrArray *stack = g_ptr_array_new_with_free_func(free_path);
  g_ptr_array_add(stack, g_ptr_array_new_with_free_func(g_free));
  gboolean go_on = TRUE;
  uint32_t here = 0;
  while (go_on && stack->len) {
    GPtrArray *path = g_ptr_array_steal_index(stack, stack->len - 1);
    P->path = path;
    g_array_set_size(P->sym_is_size, 0);
    g_autofree char *why = NULL;
    if (++P->runs > o->max_paths) {
      r->status = SC_LEMPROVE_NOT_PROVABLE;
      r->why = g_strdup_printf("more than %u runs (budget)", o->max_paths);
      g_ptr_array_unref(path);
      go_on = FALSE;
      break;
    }
    pres res = run_path(P, &why);
    switch (res) {
    case PR_BRANCH:
      g_ptr_array_add(stack, path_plus(path, P->branch_neg));
      g_ptr_array_add(stack, path_plus(path, P->branch));
      break;
    case PR_STUCK: {
      g_autofree char *c = config_text(P);
      r->status = SC_LEMPROVE_NOT_PROVABLE;
      r->why = g_strdup_printf("%s (with %s)", P->stuck, c);
      go_on = FALSE;
      break;
    }
    case PR_INFEASIBLE:
      break;
    case PR_VACUOUS:
    case PR_OK:
    case PR_BAD:
      r->paths++;
      here++;
      if (res == PR_OK)
        r->typed++;
      if (res == PR_BAD) {
        g_autofree char *c = config_text(P);
        g_autofree char *assumed = NULL;
        {
          GString *a = g_string_new(NULL);
          for (guint i = 0; i < path->len; i++)
            g_string_append_printf(a, "%s%s", i ? ", " : "",
                                   (const char *)g_ptr_array_index(path, i));
          assumed = g_string_free(a, FALSE);
        }
        g_autofree char *w = find_witness(P, g_str_hash(r->name) + r->paths);
        if (w) {
          r->status = SC_LEMPROVE_REFUTED;
          r->why = g_strdup_printf("%s (%s)", w, c);
        } else {
          r->status = SC_LEMPROVE_NOT_PROVABLE;
          r->why = g_strdup_printf("refuted on the sizes where %s (%s: %s), but no concrete "
                                   "instance among %u random ones breaks it",
                                   *assumed ? assumed : "true", c, why, N_WITNESS);
        }
        go_on = FALSE;
      } else if (here > MAX_CONFIG_PATHS) {
        g_autofree char *c = config_text(P);
        r->status = SC_LEMPROVE_NOT_PROVABLE;
        r->why = g_strdup_printf("more than %u paths in one configuration (%s; budget)",
                                 MAX_CONFIG_PATHS, c);
        go_on = FALSE;
      }
      break;
    }
    g_ptr_array_unref(path);
    P->path = NULL;
  }
  g_ptr_array_unref(stack);
  run_clear(P);
  g_clear_pointer(&P->stuck, g_free);
  return go_on;
}

static void prove_lemma(const sc_lemma_set *set, uint32_t li, const sc_lemprove_options *o,
                        const sc_sym_oracle *oracle, void *user, sc_lemprove_result *r) {
  const ld_checked *k = sc_lemma_set_checked(set, li);
  r->status = SC_LEMPROVE_PROVED;
  uint32_t R = o->rank_bound;
  g_autofree vplan *plan = plan_vars(set, li, k, R, &r->why);
  if (plan == NULL) {
    r->status = SC_LEMPROVE_NOT_PROVABLE;
    return;
  }
  uint32_t nv = k->vars.names->len;
  uint64_t total = SC_DTYPE_COUNT;
  for (uint32_t v = 0; v < nv && total <= o->max_configs; v++)
    total *= plan[v].n;
  if (total > o->max_configs) {
    r->status = SC_LEMPROVE_NOT_PROVABLE;
    r->why = g_strdup_printf("more than %u configurations at rank <= %u (budget)", o->max_configs,
                             R);
    return;
  }
  g_autofree uint32_t *digit = g_new0(uint32_t, nv + 1);
  prun P = {0};
  P.k = k;
  P.plan = plan;
  P.nv = nv;
  P.R = R;
  P.digit = digit;
  P.inner = oracle;
  P.inner_user = user;
  P.types = g_new0(sc_ttype, nv ? nv : 1);
  P.values = g_new0(sc_value, nv ? nv : 1);
  P.sym_is_size = g_array_new(FALSE, FALSE, sizeof(gboolean));
  P.answers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (uint64_t c = 0; c < total; c++) {
    uint64_t x = c;
    for (uint32_t v = 0; v < nv; v++) {
      digit[v] = (uint32_t)(x % plan[v].n);
      x /= plan[v].n;
    }
    digit[nv] = (uint32_t)x;
    r->configs++;
    if (!prove_config(&P, o, r))
      break;
  }
  if (r->status == SC_LEMPROVE_PROVED && r->typed == 0) {
    r->status = SC_LEMPROVE_NOT_PROVABLE;
    r->why = g_strdup_printf("the left side is well-typed in no configuration at rank <= %u", R);
  }
  run_clear(&P);
  g_free(P.types);
  g_free(P.values);
  g_array_free(P.sym_is_size, TRUE);
  g_hash_table_destroy(P.answers);
}

/* ------------------------------------------------------------------------ */
/* The report                                                                */

struct sc_lemprove_report {
  GArray *results; /* sc_lemprove_result */
  uint32_t rank_bound;
};

void sc_lemprove_options_init(sc_lemprove_options *opts) {
  opts->rank_bound = 2;
  opts->max_configs = 200000;
  opts->max_paths = 15000;
  opts->only = NULL;
  opts->part = 0;
  opts->parts = 1;
}

const char *sc_lemprove_status_name(sc_lemprove_status s) {
  switch (s) {
#define SC_X_LP(sym, word) \
  case sym:                \
    return word;
    SC_LEMPROVE_STATUSES(SC_X_LP)
#undef SC_X_LP
  }
  return "?";
}

sc_lemprove_report *sc_lemprove_run(const sc_lemma_set *set, const sc_lemprove_options *opts,
                                    const sc_sym_oracle *oracle, void *oracle_user) {
  sc_lemprove_report *rep = g_new0(sc_lemprove_report, 1);
  rep->results = g_array_new(FALSE, TRUE, sizeof(sc_lemprove_result));
  rep->rank_bound = opts->rank_bound;
  /* SC_LEMPROVE_TRACE=1: one line per lemma on stderr, with its wall time */
  gboolean trace = g_getenv("SC_LEMPROVE_TRACE") != NULL;
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(set); i++) {
    const sc_lemma_info *info = sc_lemma_set_lemma(set, i);
    if (opts->only && !g_str_has_prefix(info->name, opts->only))
      continue;
    if (opts->parts > 1 && i % opts->parts != opts->part)
      continue;
    sc_lemprove_result r = {0};
    r.lemma = i;
    r.name = info->name;
    gint64 t0 = g_get_monotonic_time();
    prove_lemma(set, i, opts, oracle, oracle_user, &r);
    if (trace)
      fprintf(stderr, "lemmas prove: %s %s %u configurations %u paths %.3f s\n", r.name,
              sc_lemprove_status_name(r.status), r.configs, r.paths,
              (double)(g_get_monotonic_time() - t0) / 1e6);
    g_array_append_val(rep->results, r);
  }
  return rep;
}

void sc_lemprove_report_free(sc_lemprove_report *rep) {
  if (rep == NULL)
    return;
  for (guint i = 0; i < rep->results->len; i++)
    g_free(g_array_index(rep->results, sc_lemprove_result, i).why);
  g_array_free(rep->results, TRUE);
  g_free(rep);
}

uint32_t sc_lemprove_report_n(const sc_lemprove_report *rep) { return rep->results->len; }

uint32_t sc_lemprove_report_rank_bound(const sc_lemprove_report *rep) { return rep->rank_bound; }

const sc_lemprove_result *sc_lemprove_report_get(const sc_lemprove_report *rep, uint32_t i) {
  g_return_val_if_fail(i < rep->results->len, NULL);
  return &g_array_index(rep->results, sc_lemprove_result, i);
}

void sc_lemprove_report_counts(const sc_lemprove_report *rep, uint32_t *proved,
                               uint32_t *refuted, uint32_t *not_provable) {
  uint32_t c[3] = {0, 0, 0};
  for (guint i = 0; i < rep->results->len; i++)
    c[g_array_index(rep->results, sc_lemprove_result, i).status]++;
  *proved = c[SC_LEMPROVE_PROVED];
  *refuted = c[SC_LEMPROVE_REFUTED];
  *not_provable = c[SC_LEMPROVE_NOT_PROVABLE];
}

void sc_lemprove_report_text(FILE *out, const sc_lemprove_report *rep) {
  for (guint i = 0; i < rep->results->len; i++) {
    const sc_lemprove_result *r = &g_array_index(rep->results, sc_lemprove_result, i);
    if (r->status == SC_LEMPROVE_PROVED)
      fprintf(out, "proved        %s (rank <= %u: %u configurations, %u paths, %u typed)\n",
              r->name, rep->rank_bound, r->configs, r->paths, r->typed);
    else
      fprintf(out, "%-13s %s: %s\n",
              r->status == SC_LEMPROVE_REFUTED ? "refuted" : "not provable", r->name,
              r->why ? r->why : "");
  }
  uint32_t p, f, u;
  sc_lemprove_report_counts(rep, &p, &f, &u);
  fprintf(out,
          "%u lemmas: %u proved well-typed for all sizes at rank <= %u, %u refuted, %u not "
          "provable by this method\n",
          rep->results->len, p, rep->rank_bound, f, u);
}
