/* instance.c — reading checked lemmas back for the numerical checker:
 * variables, the where condition and both sides under a concrete
 * instance, flattened into programs of operator calls (lemma.h,
 * "instances").
 *
 * Invariants: a program's steps come children first, so a step's tensor
 * slots always name variables or earlier steps; every step's type is what
 * the operator's shape rule gave for the types of its slots; the program
 * owns its argument values.  Nothing here changes the set. */
#include "lemma/lemma-private.h"

#include <string.h>

const ld_checked *sc_lemma_set_checked(const sc_lemma_set *set, uint32_t i);

static const ld_checked *get(const sc_lemma_set *set, uint32_t lemma) {
  g_return_val_if_fail(lemma < sc_lemma_set_n_lemmas(set), NULL);
  return sc_lemma_set_checked(set, lemma);
}

uint32_t sc_lemma_n_vars(const sc_lemma_set *set, uint32_t lemma) {
  const ld_checked *k = get(set, lemma);
  return k ? k->vars.names->len : 0;
}

const char *sc_lemma_var_name(const sc_lemma_set *set, uint32_t lemma, uint32_t var) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL && var < k->vars.names->len, NULL);
  return g_ptr_array_index(k->vars.names, var);
}

gboolean sc_lemma_var_is_attr(const sc_lemma_set *set, uint32_t lemma, uint32_t var) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL && var < k->vars.names->len, FALSE);
  return g_array_index(k->vars.is_attr, gboolean, var);
}

/* The first argument of P (depth first, argument order) bound to VAR. */
static const sc_arg *find_arg(const pnode *p, uint32_t var) {
  if (p == NULL || p->is_var)
    return NULL;
  for (uint32_t a = 0; a < p->op->n_args; a++)
    if (p->args[a].kind == PA_VAR && p->args[a].var == var)
      return &p->op->args[a];
  for (uint32_t i = 0; i < p->n_kids; i++) {
    const sc_arg *r = find_arg(p->kids[i], var);
    if (r != NULL)
      return r;
  }
  return NULL;
}

const sc_arg *sc_lemma_var_arg(const sc_lemma_set *set, uint32_t lemma, uint32_t var) {
  if (!sc_lemma_var_is_attr(set, lemma, var))
    return NULL;
  const ld_checked *k = get(set, lemma);
  const sc_arg *a = find_arg(k->lhs, var);
  for (guint i = 0; a == NULL && i < k->requires->len; i++)
    a = find_arg(g_ptr_array_index(k->requires, i), var);
  if (a == NULL)
    a = find_arg(k->rhs, var);
  return a;
}

static gboolean uses_var(const pnode *p, uint32_t var) {
  if (p->is_var)
    return p->var == var;
  if (p->result_var == var)
    return TRUE;
  for (uint32_t a = 0; a < p->op->n_args; a++)
    if (p->args[a].kind == PA_VAR && p->args[a].var == var)
      return TRUE;
  for (uint32_t i = 0; i < p->n_kids; i++)
    if (uses_var(p->kids[i], var))
      return TRUE;
  return FALSE;
}

gboolean sc_lemma_var_in_sides(const sc_lemma_set *set, uint32_t lemma, uint32_t var) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL && var < k->vars.names->len, FALSE);
  return uses_var(k->lhs, var) || uses_var(k->rhs, var);
}

/* ---- evaluation environment ---------------------------------------------- */

typedef struct {
  const ld_checked *k;
  const sc_lemma_instance *inst;
  const sc_vrange *ranges; /* per variable, or NULL (sc_lemma_condition_ranges) */
} ienv;

static gboolean inst_lookup(void *envp, const lx *ref, ev_val *out) {
  ienv *e = envp;
  if (ref->kind != LX_VAR)
    return FALSE;
  const ld_vars *vars = &e->k->vars;
  for (guint v = 0; v < vars->names->len; v++) {
    if (strcmp(g_ptr_array_index(vars->names, v), ref->text) != 0)
      continue;
    if (g_array_index(vars->is_attr, gboolean, v)) {
      out->kind = EV_VALUE;
      out->v = &e->inst->values[v];
    } else {
      out->kind = EV_TENSOR;
      out->type = &e->inst->types[v];
      if (e->ranges != NULL && !sc_vrange_is_unbounded(&e->ranges[v]))
        out->range = &e->ranges[v];
    }
    return TRUE;
  }
  return FALSE;
}

sc_truth sc_lemma_condition(const sc_lemma_set *set, uint32_t lemma,
                            const sc_lemma_instance *inst) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL, SC_NO);
  if (k->where == NULL)
    return SC_YES;
  ienv e = {k, inst, NULL};
  ev_env env = {inst->st, inst_lookup, &e};
  return ev_condition(&env, k->where);
}

sc_truth sc_lemma_condition_ranges(const sc_lemma_set *set, uint32_t lemma,
                                   const sc_lemma_instance *inst, const sc_vrange *ranges) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL, SC_NO);
  if (k->where == NULL)
    return SC_YES;
  ienv e = {k, inst, ranges};
  ev_env env = {inst->st, inst_lookup, &e};
  return ev_condition(&env, k->where);
}

/* Does E call vmin/vmax on ?NAME (NAME NULL: on anything)? */
static gboolean mentions_range(const lx *e, const char *name) {
  if (e == NULL)
    return FALSE;
  if (e->kind == LX_CALL && (strcmp(e->text, "vmin") == 0 || strcmp(e->text, "vmax") == 0) &&
      e->n == 1 && (name == NULL || (e->kids[0]->kind == LX_VAR &&
                                     strcmp(e->kids[0]->text, name) == 0)))
    return TRUE;
  for (uint32_t i = 0; i < e->n; i++)
    if (mentions_range(e->kids[i], name))
      return TRUE;
  return FALSE;
}

gboolean sc_lemma_var_reads_range(const sc_lemma_set *set, uint32_t lemma, uint32_t var) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL && var < k->vars.names->len, FALSE);
  return mentions_range(k->where, g_ptr_array_index(k->vars.names, var));
}

/* ---- steering the random search ------------------------------------------ */

static int32_t var_index(const ld_checked *k, const char *name) {
  for (guint v = 0; v < k->vars.names->len; v++)
    if (strcmp(g_ptr_array_index(k->vars.names, v), name) == 0)
      return (int32_t)v;
  return -1;
}

static gboolean mentions_var(const lx *e, const char *name) {
  if (e->kind == LX_VAR && strcmp(e->text, name) == 0)
    return TRUE;
  for (uint32_t i = 0; i < e->n; i++)
    if (mentions_var(e->kids[i], name))
      return TRUE;
  return FALSE;
}

/* The tensor variable of a call F(?t) (F = "shape" / "dtype"), or -1. */
static int32_t call_var(const ld_checked *k, const lx *e, const char *f) {
  if (e->kind != LX_CALL || strcmp(e->text, f) != 0 || e->n != 1 || e->kids[0]->kind != LX_VAR)
    return -1;
  int32_t v = var_index(k, e->kids[0]->text);
  return v >= 0 && !g_array_index(k->vars.is_attr, gboolean, v) ? v : -1;
}

typedef struct {
  const ld_checked *k;
  sc_symtab *st;
  sc_ttype *types;
  sc_value *values;
  uint64_t choice;
  gboolean dry;
  gboolean any;
} steer_ctx;

/* The dtype NAME of a literal dtype name. */
static gboolean name_dtype(const lx *e, sc_dtype *out) {
  return e->kind == LX_NAME && sc_dtype_from_name(e->text, out);
}

/* One equation L == R read as "L := R". */
static void steer_assign(steer_ctx *c, const lx *l, const lx *r) {
  const ld_checked *k = c->k;
  if (l->kind == LX_VAR) {
    int32_t v = var_index(k, l->text);
    if (v < 0 || !g_array_index(k->vars.is_attr, gboolean, v) || mentions_var(r, l->text))
      return;
    c->any = TRUE;
    sc_value_kind vk = c->dry ? SC_VAL_NONE : c->values[v].kind;
    if (c->dry || (vk != SC_VAL_INT && vk != SC_VAL_INT_LIST && vk != SC_VAL_DTYPE &&
                   vk != SC_VAL_NONE))
      return;
    sc_lemma_instance inst = {c->st, c->types, c->values};
    ienv e = {k, &inst, NULL};
    ev_env env = {c->st, inst_lookup, &e};
    ev_val x;
    if (!ev_eval(&env, r, &x))
      return;
    if (x.kind == EV_DTYPE && (vk == SC_VAL_DTYPE || vk == SC_VAL_NONE)) {
      sc_value_clear(&c->values[v]);
      c->values[v].kind = SC_VAL_DTYPE;
      c->values[v].u.dtype = x.dtype;
    } else if (vk == SC_VAL_DTYPE) {
      return;
    } else if (x.kind == EV_DIM && sc_dim_is_const(x.d) && vk != SC_VAL_INT_LIST) {
      sc_value_clear(&c->values[v]);
      c->values[v] = sc_value_int(x.d.value);
    } else if (x.kind == EV_SHAPE && vk != SC_VAL_INT) {
      for (uint32_t i = 0; i < x.shape.rank; i++)
        if (!sc_dim_is_const(x.shape.dims[i]))
          return;
      sc_value_clear(&c->values[v]);
      c->values[v].kind = SC_VAL_INT_LIST;
      c->values[v].u.ints.n = x.shape.rank;
      c->values[v].u.ints.v = g_new(sc_dim, x.shape.rank ? x.shape.rank : 1);
      for (uint32_t i = 0; i < x.shape.rank; i++)
        c->values[v].u.ints.v[i] = x.shape.dims[i];
    }
    return;
  }
  int32_t t = call_var(k, l, "shape");
  if (t >= 0 && !mentions_var(r, g_ptr_array_index(k->vars.names, t))) {
    c->any = TRUE;
    if (c->dry)
      return;
    sc_lemma_instance inst = {c->st, c->types, c->values};
    ienv e = {k, &inst, NULL};
    ev_env env = {c->st, inst_lookup, &e};
    ev_val x;
    if (ev_eval(&env, r, &x) && x.kind == EV_SHAPE) {
      gboolean concrete = TRUE;
      for (uint32_t i = 0; i < x.shape.rank; i++)
        concrete = concrete && sc_dim_is_const(x.shape.dims[i]) && x.shape.dims[i].value >= 0;
      if (concrete)
        c->types[t].shape = x.shape;
    }
    return;
  }
  t = call_var(k, l, "dtype");
  if (t >= 0) {
    sc_dtype dt;
    int32_t u = call_var(k, r, "dtype");
    if (name_dtype(r, &dt)) {
      c->any = TRUE;
      if (!c->dry)
        c->types[t].dtype = dt;
    } else if (u >= 0 && u != t) {
      c->any = TRUE;
      if (!c->dry)
        c->types[t].dtype = c->types[u].dtype;
    }
  }
}

/* An alternative of dtype(?t) == NAME terms ("dtype(?x) == i64 or
 * dtype(?x) == i32"): one of them, by c->choice. */
static gboolean steer_dtype_or(steer_ctx *c, const lx *e) {
  GPtrArray *alts = g_ptr_array_new();
  GPtrArray *stack = g_ptr_array_new();
  g_ptr_array_add(stack, (gpointer)e);
  gboolean ok = TRUE;
  while (ok && stack->len) {
    const lx *x = g_ptr_array_steal_index(stack, stack->len - 1);
    if (x->kind == LX_OR) {
      g_ptr_array_add(stack, x->kids[1]);
      g_ptr_array_add(stack, x->kids[0]);
    } else {
      sc_dtype dt;
      ok = x->kind == LX_CMP && strcmp(x->op, "==") == 0 &&
           call_var(c->k, x->kids[0], "dtype") >= 0 && name_dtype(x->kids[1], &dt) &&
           (alts->len == 0 || call_var(c->k, x->kids[0], "dtype") ==
                                  call_var(c->k, ((const lx *)alts->pdata[0])->kids[0], "dtype"));
      if (ok)
        g_ptr_array_add(alts, (gpointer)x);
    }
  }
  if (ok && alts->len > 0) {
    const lx *pick = alts->pdata[c->choice % alts->len];
    steer_assign(c, pick->kids[0], pick->kids[1]);
  }
  g_ptr_array_free(stack, TRUE);
  g_ptr_array_free(alts, TRUE);
  return ok && alts->len > 0;
}

static void steer_conjuncts(steer_ctx *c, const lx *e) {
  if (e->kind == LX_AND) {
    steer_conjuncts(c, e->kids[0]);
    steer_conjuncts(c, e->kids[1]);
    return;
  }
  if (e->kind == LX_OR) {
    steer_dtype_or(c, e);
    return;
  }
  if (e->kind != LX_CMP || strcmp(e->op, "==") != 0)
    return;
  gboolean before = c->any;
  steer_assign(c, e->kids[0], e->kids[1]);
  if (c->any == before)
    steer_assign(c, e->kids[1], e->kids[0]);
}

gboolean sc_lemma_steer(const sc_lemma_set *set, uint32_t lemma, sc_symtab *st, sc_ttype *types,
                        sc_value *values, uint64_t choice) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL, FALSE);
  if (k->where == NULL)
    return FALSE;
  steer_ctx c = {k, st, types, values, choice, types == NULL || values == NULL, FALSE};
  steer_conjuncts(&c, k->where);
  return c.any;
}

/* ---- instantiation --------------------------------------------------------- */

typedef struct {
  ienv e;
  uint32_t n_vars;
  GArray *steps;  /* sc_lemma_step */
  GArray *types;  /* sc_ttype per slot */
} builder;

static const sc_ttype *slot_type(void *envp, sc_id slot) {
  GArray *types = envp;
  return slot < types->len ? &g_array_index(types, sc_ttype, slot) : NULL;
}

static void clear_args(sc_value *args, uint32_t n) {
  for (uint32_t a = 0; a < n; a++)
    sc_value_clear(&args[a]);
  g_free(args);
}

/* Flatten P; *SLOT receives the slot of its value. */
static gboolean flatten(builder *B, const pnode *p, uint32_t *slot, char **why) {
  if (p->is_var) {
    *slot = p->var;
    return TRUE;
  }
  const sc_op *op = p->op;
  uint32_t *kid_slots = g_new(uint32_t, p->n_kids ? p->n_kids : 1);
  for (uint32_t i = 0; i < p->n_kids; i++)
    if (!flatten(B, p->kids[i], &kid_slots[i], why)) {
      g_free(kid_slots);
      return FALSE;
    }
  sc_value *args = g_new0(sc_value, op->n_args ? op->n_args : 1);
  ev_env env = {B->e.inst->st, inst_lookup, &B->e};
  uint32_t result = p->result;
  gboolean ok = pn_call_args(p, B->e.inst->values, &env, kid_slots, args, why);
  g_free(kid_slots);
  if (ok) {
    sc_op_call call = {op, args, slot_type, B->types, B->e.inst->st};
    GArray *res = g_array_new(FALSE, FALSE, sizeof(sc_ttype));
    g_autoptr(GError) err = NULL;
    if (!sc_ops_infer(&call, res, &err)) {
      *why = g_strdup_printf("%s: %s", op->qualname, err->message);
      ok = FALSE;
    } else if (!pn_result(p, B->e.inst->values, &result) || result >= res->len) {
      *why = g_strdup_printf("%s has no result %u here", op->qualname, result);
      ok = FALSE;
    } else {
      sc_lemma_step st = {op, args, result, g_array_index(res, sc_ttype, result)};
      g_array_append_val(B->steps, st);
      g_array_append_val(B->types, st.type);
      *slot = B->n_vars + B->steps->len - 1;
    }
    g_array_free(res, TRUE);
  }
  if (!ok)
    clear_args(args, op->n_args);
  return ok;
}

void sc_lemma_program_free(sc_lemma_program *p) {
  if (p == NULL)
    return;
  for (uint32_t i = 0; i < p->n_steps; i++)
    clear_args(p->steps[i].args, p->steps[i].op->n_args);
  g_free(p->steps);
  g_free(p);
}

sc_lemma_program *sc_lemma_instantiate(const sc_lemma_set *set, uint32_t lemma,
                                       sc_lemma_side side, const sc_lemma_instance *inst,
                                       char **why) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL && inst != NULL && why != NULL, NULL);
  *why = NULL;
  uint32_t nv = k->vars.names->len;
  builder B = {{k, inst, NULL}, nv, g_array_new(FALSE, FALSE, sizeof(sc_lemma_step)),
               g_array_new(FALSE, TRUE, sizeof(sc_ttype))};
  g_array_set_size(B.types, nv);
  for (uint32_t v = 0; v < nv; v++)
    if (!g_array_index(k->vars.is_attr, gboolean, v))
      g_array_index(B.types, sc_ttype, v) = inst->types[v];
  uint32_t root = 0;
  gboolean ok = flatten(&B, side == SC_LEMMA_SIDE_LEFT ? k->lhs : k->rhs, &root, why);
  sc_lemma_program *p = g_new0(sc_lemma_program, 1);
  p->n_vars = nv;
  p->n_steps = B.steps->len;
  p->steps = (sc_lemma_step *)(void *)g_array_free(B.steps, FALSE);
  p->root = root;
  if (ok)
    p->type = g_array_index(B.types, sc_ttype, root);
  g_array_free(B.types, TRUE);
  if (!ok) {
    sc_lemma_program_free(p);
    return NULL;
  }
  return p;
}

char *sc_lemma_instance_to_string(const sc_lemma_set *set, uint32_t lemma,
                                  const sc_lemma_instance *inst) {
  const ld_checked *k = get(set, lemma);
  g_return_val_if_fail(k != NULL, NULL);
  GString *s = g_string_new(NULL);
  for (guint v = 0; v < k->vars.names->len; v++) {
    if (!uses_var(k->lhs, v) && !uses_var(k->rhs, v))
      continue;
    if (s->len)
      g_string_append(s, ", ");
    const char *name = g_ptr_array_index(k->vars.names, v);
    if (g_array_index(k->vars.is_attr, gboolean, v)) {
      g_autofree char *t = sc_value_to_string(&inst->values[v], inst->st, NULL, NULL);
      g_string_append_printf(s, "?%s = %s", name, t);
    } else {
      g_autofree char *t = sc_shape_to_string(&inst->types[v].shape);
      g_string_append_printf(s, "?%s: %s%s", name, sc_dtype_name(inst->types[v].dtype), t);
    }
  }
  return g_string_free(s, FALSE);
}
