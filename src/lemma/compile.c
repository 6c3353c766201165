/* compile.c — lowering checked lemmas to e-graph rewrites over an sc_lang.
 *
 * Left side and requires: each operator node becomes a pattern node with
 * the operator's registry id.  Its attribute (an interned record of the
 * lang layer) is checked by a predicate when the node binds no attribute
 * variable (result index, child layout, literal arguments, and omitted
 * arguments equal to their schema default), else bound to a hidden
 * attribute variable "%hN" that the guard decodes with the same checks
 * while binding the user's attribute variables (the same variable in two
 * places must get equal values).  The guard then evaluates the condition
 * over the classes' types (sc_lang_class_type); UNKNOWN does not fire and
 * is counted.
 *
 * Right side: an applier instantiates it through sc_lang_add_call, so that
 * the shape rules check every new node and the canonical forms apply (a
 * right side may build aten.view, a whole-dim slice or a 3-part cat; the
 * lang layer turns them into the e-graph's forms).  All argument values,
 * computed ones included, are evaluated before any node is added, so an
 * application that cannot be built adds nothing (a shape rule refusal in
 * the middle may leave well-typed sub-terms behind, which is harmless).
 *
 * Value ranges: a condition that calls vmin/vmax reads the matched
 * classes' range facts (sc_lang_class_range).  When such a lemma's
 * application changes the e-graph, the condition is read once more to
 * collect the assumed bounds it relied on (sc_lemma_rules_assumptions), so
 * that a report can list the assumptions a proof used.
 *
 * Sharing (sc_lemma_rules_share): the rewrites and their user data (cnode,
 * crule) are compiled once into a core that every sc_lemma_rules made from
 * it shares and nobody writes after compiling; what a proof writes (the
 * lang, counters, reports, the condition memo, the applier's store) is in
 * the sc_lemma_rules.  The rewrites' callbacks find that sc_lemma_rules
 * through the thread: the one last bound on the calling thread
 * (sc_lemma_compile, sc_lemma_rules_rebind) if it shares the rule's core,
 * else the core's own (the one sc_lemma_compile returned), so that a
 * single-threaded program that compiles several sets behaves as if nothing
 * were shared.  The guard and the applier check that the rules they found
 * are bound to the e-graph they run on (a misuse aborts, it never decides
 * with another e-graph's data).
 *
 * Invariants: predicate and guard user data (cnode, crule) live in the
 * core and outlive the rewrites that point at them. */
#include "lemma/lemma-private.h"
#include "lemma/call-args.h"
#include "lemma/condmemo.h"

#include <string.h>

typedef struct crule crule;

/* The compiled rewrites, shared (reference-counted) by the sc_lemma_rules
 * made from them; read-only once sc_lemma_compile returns. */
typedef struct {
  gint ref;
  GPtrArray *rewrites;   /* sc_rewrite* */
  GPtrArray *crules;     /* crule*, parallel to rewrites */
  uint32_t n_lemmas;
  sc_lemma_rules *home;  /* the rules sc_lemma_compile returned, NULL once freed
                            (written on the compiling thread only) */
} rcore;

/* One argument test of an attribute record against a pattern node, in
 * argument order (acheck_of): the arguments whose test does something,
 * so that check_attr does not look up the schema and the pattern's kind
 * of every argument on each of its hundreds of thousands of calls. */
typedef enum {
  AC_ABSENT, /* an optional tensor the pattern leaves out: the value is None */
  AC_TENSOR, /* a tensor: the value is one */
  AC_LIST,   /* a tensor list of N items, none of them None */
  AC_EQUAL,  /* a default or a literal: the value equals LIT */
  AC_VAR,    /* an attribute variable: bound to the value, or equal to its binding */
} acheck_kind;

typedef struct {
  uint32_t arg;
  acheck_kind kind;
  uint32_t n;           /* AC_LIST: items; AC_VAR: the variable */
  const sc_value *lit;  /* AC_EQUAL: the pattern's value */
} acheck;

typedef struct {
  crule *rule;
  const pnode *p;
  uint32_t hidden;       /* query variable of the hidden attribute var, or UINT32_MAX */
  char hidden_name[24];
  uint32_t n_checks;
  acheck checks[];       /* n_checks, allocated with the cnode */
} cnode;

struct crule {
  rcore *core;
  uint32_t index;        /* in core->crules */
  const ld_checked *k;
  uint32_t lemma;        /* index in the set */
  const pnode *lhs, *rhs;
  GPtrArray *req;        /* const pnode* */
  GPtrArray *cnodes;     /* cnode* */
  uint32_t *qvar;        /* lemma var -> query var (UINT32_MAX: none) */
  uint32_t n_vars;
  gboolean reads_ranges; /* the condition uses vmin/vmax */
  gboolean *range_vars;  /* per lemma var: the condition reads its range */
  /* The condition's answers by the values it reads (condmemo.h), in each
   * sc_lemma_rules: none when there is no condition or it reads value
   * ranges.  COND_VARS: the lemma variables the condition names, each
   * once, in index order. */
  gboolean memoizable;
  uint32_t *cond_vars;
  uint32_t n_cond_vars;
  /* the right side has operator nodes (the applier first looks them up
   * without adding: find_built) */
  gboolean rhs_findable;
  /* the right side's operator nodes in preorder: how many, where node i's
   * values start in the applier's store (rhs_offs[i]: its op->n_args
   * arguments and its result index), and how many values in all */
  uint32_t rhs_n_nodes, rhs_n_vals;
  guint *rhs_offs;
};

struct sc_lemma_rules {
  rcore *core;
  sc_lang *lang;
  const sc_egraph *eg;   /* LANG's */
  sc_lemma_counters *counters; /* per lemma */
  uint32_t n_lemmas;
  /* Per lemma (NULL until used): the assumption ids (uint32_t, each once)
   * its condition read in applications that changed the e-graph. */
  GArray **assumptions;
  /* Per lemma, set the first time its condition is UNKNOWN: the condition
   * as written and its undecided comparisons instantiated (owned). */
  char **undecided_cond, **undecided_inst;
  /* the applier's argument values and found nodes (arg_store), reused by
   * every application that is not nested in another (store_busy) */
  GArray *store_vals, *store_found;
  gboolean store_busy;
  /* per rule (core->crules), the condition memo of a memoizable rule,
   * made at its first answer */
  sc_condmemo **memo;
  /* rules made by sc_lemma_rules_share, per rule: how many answers of
   * its memo sc_lemma_rules_pass_memos has passed to the rules they were
   * made from (NULL otherwise) */
  guint *passed;
  GArray *assumed_now;   /* while the applier re-reads a condition: the
                            assumption ids read (match_lookup hands it to
                            vmin/vmax); NULL otherwise */
};

/* The rules last bound on this thread (see the head of this file). */
static _Thread_local sc_lemma_rules *bound;

/* The rules whose data rule R's callbacks read and write on this thread. */
static inline sc_lemma_rules *rules_of(const crule *r) {
  sc_lemma_rules *b = bound;
  if (G_LIKELY(b != NULL && b->core == r->core))
    return b;
  b = r->core->home;
  if (b == NULL)
    g_error("lemma rules: a shared rule ran on a thread where no rules of its set are bound");
  return b;
}

/* As rules_of, for a callback that runs on EG. */
static inline sc_lemma_rules *rules_on(const crule *r, const sc_egraph *eg) {
  sc_lemma_rules *b = rules_of(r);
  if (G_UNLIKELY(b->eg != eg))
    g_error("lemma rules: a rule ran on an e-graph its rules are not bound to (rebind them "
            "on the thread that runs them)");
  return b;
}

/* ------------------------------------------------------------------------ */
/* Attribute checks                                                          */

/* The values a result-index variable can take, each an int (0..1000, the
 * bound of a literal #k), made once: a guard's bindings point at values,
 * and an e-node's result index is no stored value of its record. */
#define MAX_RESULT_INDEX 1000
static const sc_value *result_ints(void) {
  static sc_value *table;
  if (g_once_init_enter(&table)) {
    sc_value *t = g_new(sc_value, MAX_RESULT_INDEX + 1);
    for (int64_t i = 0; i <= MAX_RESULT_INDEX; i++)
      t[i] = sc_value_int(i);
    g_once_init_leave(&table, t);
  }
  return table;
}

/* The tests check_attr makes of P's arguments, in argument order, into
 * OUT (room for one per argument); returns how many: a wildcard's and a
 * computed value's test does nothing and is left out. */
static uint32_t acheck_of(const pnode *p, acheck *out) {
  uint32_t n = 0;
  for (uint32_t a = 0; a < p->op->n_args; a++) {
    acheck *k = &out[n];
    k->arg = a;
    switch (p->op->args[a].type) {
    case SC_ARG_TENSOR:
      k->kind = p->layout[a] == UINT32_MAX ? AC_ABSENT : AC_TENSOR;
      n++;
      continue;
    case SC_ARG_TENSOR_LIST:
    case SC_ARG_TENSOR_OPT_LIST:
      k->kind = AC_LIST;
      k->n = p->layout[a];
      n++;
      continue;
    default:
      break;
    }
    const pat_arg *pa = &p->args[a];
    switch (pa->kind) {
    case PA_DEFAULT:
    case PA_LITERAL:
      k->kind = AC_EQUAL;
      k->lit = &pa->value;
      n++;
      break;
    case PA_WILD:
    case PA_COMPUTE:
      break;
    case PA_VAR:
      k->kind = AC_VAR;
      k->n = pa->var;
      n++;
      break;
    }
  }
  return n;
}

/* Does attribute record ATTR match C's pattern node?  With BIND, its
 * attribute variables are bound (or compared with their bindings) in
 * argument order; without, they match anything. */
static gboolean check_attr(const sc_lang *lang, const cnode *c, uint32_t attr,
                           const sc_value **bind) {
  const pnode *p = c->p;
  const sc_op *op;
  uint32_t result;
  const sc_value *args = sc_lang_attr_read(lang, attr, &op, &result);
  if (op != p->op)
    return FALSE;
  if (p->result_var == UINT32_MAX) {
    if (result != p->result)
      return FALSE;
  } else if (bind != NULL) {
    /* op#?k(...): bind ?k to the node's result index */
    if (result > MAX_RESULT_INDEX)
      return FALSE;
    const sc_value *v = &result_ints()[result];
    if (bind[p->result_var] == NULL)
      bind[p->result_var] = v;
    else if (!sc_value_equal(bind[p->result_var], v))
      return FALSE;
  }
  for (uint32_t i = 0; i < c->n_checks; i++) {
    const acheck *k = &c->checks[i];
    const sc_value *v = &args[k->arg];
    switch (k->kind) {
    case AC_ABSENT:
      if (v->kind != SC_VAL_NONE)
        return FALSE;
      break;
    case AC_TENSOR:
      if (v->kind != SC_VAL_TENSOR)
        return FALSE;
      break;
    case AC_LIST:
      if (v->kind != SC_VAL_TENSOR_LIST || v->u.list.n != k->n)
        return FALSE;
      /* patterns hold tensors only: a None item does not match */
      for (uint32_t j = 0; j < v->u.list.n; j++)
        if (v->u.list.ids[j] == SC_ID_NONE)
          return FALSE;
      break;
    case AC_EQUAL:
      if (!sc_value_equal(v, k->lit))
        return FALSE;
      break;
    case AC_VAR:
      if (bind == NULL)
        break;
      if (bind[k->n] == NULL)
        bind[k->n] = v;
      else if (!sc_value_equal(bind[k->n], v))
        return FALSE;
      break;
    }
  }
  return TRUE;
}

static gboolean pred_fn(uint32_t attr, void *user) {
  cnode *c = user;
  return check_attr(rules_of(c->rule)->lang, c, attr, NULL);
}

/* Decode the hidden attribute variables of a substitution. */
static gboolean decode(const crule *r, const sc_lang *lang, const uint32_t *subst,
                       const sc_value **bind) {
  memset(bind, 0, sizeof(*bind) * (r->n_vars ? r->n_vars : 1));
  for (guint i = 0; i < r->cnodes->len; i++) {
    const cnode *c = g_ptr_array_index(r->cnodes, i);
    if (c->hidden == UINT32_MAX)
      continue;
    if (!check_attr(lang, c, subst[c->hidden], bind))
      return FALSE;
  }
  return TRUE;
}

typedef struct {
  const crule *r;
  sc_lemma_rules *o; /* rules_of(r) */
  const uint32_t *subst;
  const sc_value **bind;
} match_env;

/* The index of variable REF (LX_VAR) among rule R's variables, or
 * G_MAXUINT: the slot ev_resolve found in these names (add_rule), else by
 * name (the names of a lemma's variables are distinct). */
static guint var_index(const crule *r, const lx *ref) {
  const GPtrArray *names = r->k->vars.names;
  guint v = G_MAXUINT;
  if (ref->slot_of == names && ref->slot != 0 && ref->slot <= names->len)
    v = ref->slot - 1;
  for (guint i = 0; i < names->len && v == G_MAXUINT; i++)
    if (strcmp(g_ptr_array_index(names, i), ref->text) == 0)
      v = i;
  return v;
}

static gboolean match_lookup(void *envp, const lx *ref, ev_val *out) {
  match_env *m = envp;
  if (ref->kind != LX_VAR)
    return FALSE;
  const ld_vars *vars = &m->r->k->vars;
  guint v = var_index(m->r, ref);
  if (v == G_MAXUINT)
    return FALSE;
  if (g_array_index(vars->is_attr, gboolean, v)) {
    if (m->bind[v] == NULL)
      return FALSE;
    out->kind = EV_VALUE;
    out->v = m->bind[v];
    return TRUE;
  }
  if (m->r->qvar[v] == UINT32_MAX)
    return FALSE;
  sc_id cls = m->subst[m->r->qvar[v]];
  const sc_ttype *t = sc_lang_class_type(m->o->lang, cls);
  if (t == NULL)
    return FALSE;
  out->kind = EV_TENSOR;
  out->type = t;
  if (m->r->reads_ranges) {
    out->range = sc_lang_class_range(m->o->lang, cls);
    out->assumed = m->o->assumed_now;
  }
  return TRUE;
}

/* Does a tensor variable whose value range the condition reads have no
 * fact (or only half of one) in this match?  Such a condition is UNKNOWN
 * because nothing is known of the values, not because a comparison could
 * not be decided: it is not counted as undecided (the lookups a lemma
 * library builds, e.g. a masked lookup's clamped ids, carry no facts). */
static gboolean lacks_range_fact(const crule *r, const sc_lang *lang, const uint32_t *subst) {
  if (!r->reads_ranges)
    return FALSE;
  for (uint32_t v = 0; v < r->n_vars; v++) {
    if (!r->range_vars[v] || r->qvar[v] == UINT32_MAX)
      continue;
    const sc_vrange *f = sc_lang_class_range(lang, subst[r->qvar[v]]);
    if (f == NULL || f->lo_src == SC_VRANGE_NONE || f->hi_src == SC_VRANGE_NONE)
      return TRUE;
  }
  return FALSE;
}

static gboolean guard_fn(const sc_egraph *eg, sc_id root, const uint32_t *subst, void *user) {
  const crule *r = user;
  sc_lemma_rules *o = rules_on(r, eg);
  const sc_value **bind = g_newa(const sc_value *, r->n_vars ? r->n_vars : 1);
  if (!decode(r, o->lang, subst, bind))
    return FALSE;
  sc_lemma_counters *cnt = &o->counters[r->lemma];
  cnt->matches++;
  if (r->k->where == NULL)
    return TRUE;
  /* what match_lookup would hand the condition, as a memo key */
  sc_condmemo_key key;
  key.ok = FALSE;
  if (r->memoizable) {
    sc_lemma_condmemo_key_init(&key);
    for (uint32_t i = 0; i < r->n_cond_vars && key.ok; i++) {
      uint32_t v = r->cond_vars[i];
      if (g_array_index(r->k->vars.is_attr, gboolean, v))
        sc_lemma_condmemo_key_value(&key, bind[v]);
      else
        sc_lemma_condmemo_key_type(&key, r->qvar[v] == UINT32_MAX
                                             ? NULL
                                             : sc_lang_class_type(o->lang, subst[r->qvar[v]]));
    }
    sc_truth known;
    if (o->memo[r->index] != NULL && sc_lemma_condmemo_lookup(o->memo[r->index], &key, &known))
      return known == SC_YES;
  }
  match_env m = {r, o, subst, bind};
  ev_env env = {sc_lang_symtab(o->lang), match_lookup, &m};
  sc_truth t = ev_condition(&env, r->k->where);
  if (r->memoizable) {
    if (o->memo[r->index] == NULL)
      o->memo[r->index] = sc_lemma_condmemo_new();
    sc_lemma_condmemo_insert(o->memo[r->index], &key, t);
  }
  if (t == SC_UNKNOWN && !lacks_range_fact(r, o->lang, subst)) {
    cnt->undecided++;
    if (o->undecided_cond[r->lemma] == NULL) {
      GString *w = g_string_new(NULL);
      lx_append(w, r->k->where);
      o->undecided_cond[r->lemma] = g_string_free(w, FALSE);
      o->undecided_inst[r->lemma] = ev_undecided_text(&env, r->k->where);
    }
  }
  return t == SC_YES;
}

/* ------------------------------------------------------------------------ */
/* The applier                                                               */

/* The argument values of a right side's nodes, in preorder: node i's are
 * vals[offs[i]] .. (op->n_args of them, then its result index), all
 * cleared by store_reset, and what find_built found of node i (found[i]).
 * Growable arrays reused from one application to the next, sized once per
 * application (store_init: the rule's offsets are fixed when it is
 * compiled): an application allocated a pointer array and two blocks per
 * node before, and most applications add nothing new. */
typedef struct {
  GArray *vals;      /* sc_value */
  const guint *offs; /* the rule's rhs_offs */
  GArray *found;     /* found_node */
} arg_store;

/* Node i of a right side as find_built left it: the class
 * sc_lang_find_call gave (SC_ID_NONE: missing, or not looked up), and
 * whether that lookup ran the node's shape rule (sc_lang_find_call_checked). */
typedef struct {
  sc_id cls;
  gboolean checked;
} found_node;

/* Room for rule R's right side: every value SC_VAL_NONE (the arrays are
 * empty and zero-filled on growth: SC_VAL_NONE is 0), nothing found. */
static void store_init(arg_store *st, const crule *r) {
  st->offs = r->rhs_offs;
  g_array_set_size(st->vals, r->rhs_n_vals);
  g_array_set_size(st->found, r->rhs_n_nodes);
  found_node *f = (found_node *)(void *)st->found->data;
  for (uint32_t i = 0; i < r->rhs_n_nodes; i++) {
    f[i].cls = SC_ID_NONE;
    f[i].checked = FALSE;
  }
}

static found_node *store_found(const arg_store *st, guint i) {
  return &g_array_index(st->found, found_node, i);
}

static sc_value *store_args(const arg_store *st, guint i) {
  return &g_array_index(st->vals, sc_value, st->offs[i]);
}

static void store_reset(arg_store *st) {
  /* most values are ints, dims, dtypes or tensor indices, which own
   * nothing: only the others go through sc_value_clear */
  sc_value *v = (sc_value *)(void *)st->vals->data;
  for (guint j = 0; j < st->vals->len; j++)
    if (sc_value_kind_owns(v[j].kind))
      sc_value_clear(&v[j]);
  g_array_set_size(st->vals, 0);
  g_array_set_size(st->found, 0);
}

/* Phase 1: evaluate the non-tensor arguments of every node, preorder.
 * *next indexes VALS in preorder. */
static gboolean eval_args(const crule *r, const pnode *p, const ev_env *env,
                          const sc_value **bind, arg_store *vals, guint *next) {
  if (p->is_var)
    return TRUE;
  const sc_op *op = p->op;
  /* one more value past the arguments: the node's result index */
  sc_value *args = store_args(vals, (*next)++);
  uint32_t result;
  if (!pn_result_bound(p, bind, &result))
    return FALSE;
  args[op->n_args] = sc_value_int(result);
  for (uint32_t a = 0; a < op->n_args; a++) {
    const sc_arg *arg = &op->args[a];
    if (arg->type == SC_ARG_TENSOR || arg->type == SC_ARG_TENSOR_LIST ||
        arg->type == SC_ARG_TENSOR_OPT_LIST)
      continue;
    if (!pn_attr_arg(p, a, NULL, bind, env, &args[a], NULL))
      return FALSE;
  }
  for (uint32_t i = 0; i < p->n_kids; i++)
    if (!eval_args(r, p->kids[i], env, bind, vals, next))
      return FALSE;
  return TRUE;
}

/* The tensor arguments of node P's call: child indices in P's layout.
 * Idempotent: find_built and then build set them on the same values, and
 * a list already written (its length is P's, its items 0, 1, ... from the
 * same count) is kept rather than freed and allocated again. */
static void set_tensor_args(const pnode *p, sc_value *args) {
  const sc_op *op = p->op;
  uint32_t child = 0;
  for (uint32_t a = 0; a < op->n_args; a++) {
    const sc_arg *arg = &op->args[a];
    if (arg->type == SC_ARG_TENSOR) {
      sc_value_clear(&args[a]);
      args[a] = p->layout[a] == UINT32_MAX ? sc_value_none() : sc_value_tensor(child++);
    } else if (arg->type == SC_ARG_TENSOR_LIST || arg->type == SC_ARG_TENSOR_OPT_LIST) {
      if (args[a].kind == SC_VAL_TENSOR_LIST && args[a].u.list.n == p->layout[a] &&
          (p->layout[a] == 0 || args[a].u.list.ids[0] == child)) {
        child += p->layout[a]; /* written by an earlier call: 0.. in order */
        continue;
      }
      sc_value_clear(&args[a]);
      args[a].kind = SC_VAL_TENSOR_LIST;
      args[a].u.list.n = p->layout[a];
      args[a].u.list.ids = g_new(sc_id, p->layout[a] ? p->layout[a] : 1);
      for (uint32_t j = 0; j < p->layout[a]; j++)
        args[a].u.list.ids[j] = child++;
    }
  }
}

/* Phase 2: add the nodes bottom-up. *next indexes VALS in preorder.  A
 * node find_built found is not added again: sc_lang_add_call would give
 * its class and add nothing, or refuse it by its shape rule
 * (lang.h), which sc_lang_call_typechecks asks unless the lookup ran that
 * rule already; the same order of adds and refusals as adding it. */
static sc_id build(const crule *r, sc_lang *lang, const pnode *p, const uint32_t *subst,
                   arg_store *vals, guint *next, GError **error) {
  if (p->is_var)
    return subst[r->qvar[p->var]];
  guint at = (*next)++;
  sc_value *args = store_args(vals, at); /* the store is not grown here */
  sc_id *kids = g_newa(sc_id, p->n_kids ? p->n_kids : 1);
  for (uint32_t i = 0; i < p->n_kids; i++) {
    kids[i] = build(r, lang, p->kids[i], subst, vals, next, error);
    if (kids[i] == SC_ID_NONE)
      return SC_ID_NONE;
  }
  set_tensor_args(p, args);
  uint32_t result = (uint32_t)args[p->op->n_args].u.i.value;
  const found_node *f = store_found(vals, at);
  if (f->cls != SC_ID_NONE) {
    if (!f->checked && !sc_lang_call_typechecks(lang, p->op, args, kids, p->n_kids, result))
      return SC_ID_NONE;
    return sc_egraph_find(sc_lang_egraph(lang), f->cls);
  }
  return sc_lang_add_call(lang, p->op, args, kids, p->n_kids, result, error);
}

/* Phase 2 without adding: the class of the right side when every node of
 * it is its own canonical form and already in the e-graph
 * (sc_lang_find_call), else SC_ID_NONE.  Same preorder walk as build; it
 * looks up every node whose children it found (a missing child does not
 * stop the walk of its siblings), and leaves in the store what it found
 * for build. */
static sc_id find_built(const crule *r, sc_lang *lang, const pnode *p, const uint32_t *subst,
                        arg_store *vals, guint *next) {
  if (p->is_var)
    return subst[r->qvar[p->var]];
  guint at = (*next)++;
  sc_value *args = store_args(vals, at);
  sc_id *kids = g_newa(sc_id, p->n_kids ? p->n_kids : 1);
  gboolean all = TRUE;
  for (uint32_t i = 0; i < p->n_kids; i++) {
    kids[i] = find_built(r, lang, p->kids[i], subst, vals, next);
    all = all && kids[i] != SC_ID_NONE;
  }
  if (!all)
    return SC_ID_NONE;
  set_tensor_args(p, args);
  found_node *f = store_found(vals, at);
  f->cls = sc_lang_find_call_checked(lang, p->op, args, kids, p->n_kids,
                                     (uint32_t)args[p->op->n_args].u.i.value, &f->checked);
  return f->cls;
}

/* An application of a lemma whose condition reads value ranges changed
 * the e-graph: read the condition again, collecting the assumed bounds it
 * reads (lang.h, value ranges), and remember them for the lemma. */
static void record_assumptions(const crule *r, sc_lemma_rules *o, const uint32_t *subst,
                               const sc_value **bind) {
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  o->assumed_now = ids;
  match_env m = {r, o, subst, bind};
  ev_env env = {sc_lang_symtab(o->lang), match_lookup, &m};
  (void)ev_condition(&env, r->k->where);
  o->assumed_now = NULL;
  for (guint i = 0; i < ids->len; i++) {
    uint32_t id = g_array_index(ids, uint32_t, i);
    if (o->assumptions[r->lemma] == NULL)
      o->assumptions[r->lemma] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GArray *have = o->assumptions[r->lemma];
    gboolean seen = FALSE;
    for (guint j = 0; j < have->len && !seen; j++)
      seen = g_array_index(have, uint32_t, j) == id;
    if (!seen)
      g_array_append_val(have, id);
  }
  g_array_free(ids, TRUE);
}

static sc_id applier_fn(sc_egraph *eg, sc_id root, const uint32_t *subst, uint32_t just,
                        void *user) {
  const crule *r = user;
  sc_lemma_rules *o = rules_on(r, eg);
  sc_lemma_counters *cnt = &o->counters[r->lemma];
  const sc_value **bind = g_newa(const sc_value *, r->n_vars ? r->n_vars : 1);
  if (!decode(r, o->lang, subst, bind))
    return SC_ID_NONE;
  match_env m = {r, o, subst, bind};
  ev_env env = {sc_lang_symtab(o->lang), match_lookup, &m};
  gboolean own = !o->store_busy;
  arg_store vals = {own ? o->store_vals : g_array_new(FALSE, TRUE, sizeof(sc_value)), NULL,
                    own ? o->store_found : g_array_new(FALSE, FALSE, sizeof(found_node))};
  store_init(&vals, r);
  o->store_busy = TRUE;
  sc_id out = SC_ID_NONE;
  guint first = 0;
  if (eval_args(r, r->rhs, &env, bind, &vals, &first)) {
    /* Most applications find their right side in the matched class
     * already.  When every node of it is found without adding
     * (sc_lang_find_call, through the canonical forms) and the top is the
     * root's class, building it would change nothing (every add finds its
     * node, or a shape rule refuses): skip it.  Else build (no error: a
     * refusal is only counted, and the shape rules skip formatting their
     * messages). */
    guint next = 0;
    sc_id have = r->rhs_findable ? find_built(r, o->lang, r->rhs, subst, &vals, &next)
                                 : SC_ID_NONE;
    if (have != SC_ID_NONE && sc_egraph_find(eg, have) == sc_egraph_find(eg, root)) {
      out = have;
    } else {
      next = 0;
      out = build(r, o->lang, r->rhs, subst, &vals, &next, NULL);
    }
  }
  store_reset(&vals);
  if (own) {
    o->store_busy = FALSE;
  } else {
    g_array_free(vals.vals, TRUE);
    g_array_free(vals.found, TRUE);
  }
  if (out == SC_ID_NONE) {
    cnt->refused++;
    return SC_ID_NONE;
  }
  if (sc_egraph_find(eg, out) != sc_egraph_find(eg, root)) {
    cnt->applications++;
    if (r->reads_ranges)
      record_assumptions(r, o, subst, bind);
  }
  return out;
}

/* ------------------------------------------------------------------------ */
/* Patterns                                                                  */

static sc_pat_id lower(crule *r, sc_pattern *pat, const pnode *p) {
  if (p->is_var)
    return sc_pattern_var(pat, g_ptr_array_index(r->k->vars.names, p->var));
  sc_pat_id *kids = g_newa(sc_pat_id, p->n_kids ? p->n_kids : 1);
  for (uint32_t i = 0; i < p->n_kids; i++)
    kids[i] = lower(r, pat, p->kids[i]);
  cnode *c = g_malloc0(sizeof(cnode) + p->op->n_args * sizeof(acheck));
  c->rule = r;
  c->p = p;
  c->hidden = UINT32_MAX;
  c->n_checks = acheck_of(p, c->checks);
  gboolean has_var = p->result_var != UINT32_MAX;
  for (uint32_t a = 0; a < p->op->n_args; a++)
    has_var |= p->args[a].kind == PA_VAR;
  g_ptr_array_add(r->cnodes, c);
  sc_attr_pat ap;
  if (has_var) {
    g_snprintf(c->hidden_name, sizeof c->hidden_name, "%%h%u", r->cnodes->len - 1);
    ap = sc_attr_var(c->hidden_name);
  } else {
    ap = sc_attr_pred(pred_fn, c);
  }
  return sc_pattern_node(pat, p->op->id, ap, kids, p->n_kids);
}

/* Appends to OFFS where each operator node of P (preorder) starts in
 * the applier's store, counting the values in *N_VALS. */
static void rhs_layout(const pnode *p, GArray *offs, uint32_t *n_vals) {
  if (p->is_var)
    return;
  guint off = *n_vals;
  g_array_append_val(offs, off);
  *n_vals += p->op->n_args + 1;
  for (uint32_t i = 0; i < p->n_kids; i++)
    rhs_layout(p->kids[i], offs, n_vals);
}

static void crule_free(gpointer p) {
  crule *r = p;
  if (r == NULL)
    return;
  g_free(r->rhs_offs);
  g_ptr_array_free(r->cnodes, TRUE);
  g_free(r->range_vars);
  if (r->req)
    g_ptr_array_free(r->req, TRUE);
  g_free(r->qvar);
  g_free(r->cond_vars);
  g_free(r);
}

/* Marks in SEEN the variables of rule R that condition E names. */
static void mark_cond_vars(const crule *r, const lx *e, gboolean *seen) {
  if (e == NULL)
    return;
  if (e->kind == LX_VAR) {
    guint v = var_index(r, e);
    if (v != G_MAXUINT)
      seen[v] = TRUE;
  }
  for (uint32_t i = 0; i < e->n; i++)
    mark_cond_vars(r, e->kids[i], seen);
}

/* Does condition E call vmin or vmax (on ?VAR; VAR NULL: on anything)? */
static gboolean reads_ranges(const lx *e, const char *var) {
  if (e == NULL)
    return FALSE;
  if (e->kind == LX_CALL && (strcmp(e->text, "vmin") == 0 || strcmp(e->text, "vmax") == 0) &&
      (var == NULL || (e->n == 1 && e->kids[0]->kind == LX_VAR &&
                       strcmp(e->kids[0]->text, var) == 0)))
    return TRUE;
  for (uint32_t i = 0; i < e->n; i++)
    if (reads_ranges(e->kids[i], var))
      return TRUE;
  return FALSE;
}

/* ev_resolve on the computed arguments of P's nodes. */
static void resolve_computed(const pnode *p, const GPtrArray *names) {
  if (p == NULL || p->is_var)
    return;
  for (uint32_t a = 0; a < p->op->n_args; a++)
    if (p->args[a].kind == PA_COMPUTE)
      ev_resolve((lx *)p->args[a].expr, names);
  for (uint32_t i = 0; i < p->n_kids; i++)
    resolve_computed(p->kids[i], names);
}

/* One rewrite for lemma K in one direction. */
static gboolean add_rule(rcore *core, const ld_checked *k, uint32_t lemma, gboolean reverse,
                         GError **error) {
  crule *r = g_new0(crule, 1);
  r->core = core;
  r->index = core->crules->len;
  r->k = k;
  r->lemma = lemma;
  r->lhs = reverse ? k->rhs : k->lhs;
  r->rhs = reverse ? k->lhs : k->rhs;
  r->req = g_ptr_array_new();
  for (guint i = 0; i < k->requires->len; i++)
    g_ptr_array_add(r->req, g_ptr_array_index(k->requires, i));
  r->cnodes = g_ptr_array_new_with_free_func(g_free);
  r->n_vars = k->vars.names->len;
  r->qvar = g_new(uint32_t, r->n_vars ? r->n_vars : 1);
  /* the trees this rule evaluates: names resolved once (the casts: the
   * resolution fills caches of the trees, ev gives the same results) */
  ev_resolve((lx *)k->where, k->vars.names);
  resolve_computed(r->rhs, k->vars.names);
  r->reads_ranges = reads_ranges(k->where, NULL);
  r->rhs_findable = !r->rhs->is_var;
  GArray *offs = g_array_new(FALSE, FALSE, sizeof(guint));
  rhs_layout(r->rhs, offs, &r->rhs_n_vals);
  r->rhs_n_nodes = offs->len;
  r->rhs_offs = (guint *)(void *)g_array_free(offs, FALSE);
  r->range_vars = g_new0(gboolean, r->n_vars ? r->n_vars : 1);
  for (uint32_t v = 0; v < r->n_vars; v++)
    r->range_vars[v] = reads_ranges(k->where, g_ptr_array_index(k->vars.names, v));
  if (k->where != NULL && !r->reads_ranges) {
    gboolean *seen = g_new0(gboolean, r->n_vars ? r->n_vars : 1);
    mark_cond_vars(r, k->where, seen);
    r->cond_vars = g_new(uint32_t, r->n_vars ? r->n_vars : 1);
    for (uint32_t v = 0; v < r->n_vars; v++)
      if (seen[v])
        r->cond_vars[r->n_cond_vars++] = v;
    g_free(seen);
    r->memoizable = TRUE;
  }
  g_autoptr(sc_pattern) lp = sc_pattern_new();
  sc_pattern_set_root(lp, lower(r, lp, r->lhs));
  sc_pattern **rp = g_new0(sc_pattern *, r->req->len ? r->req->len : 1);
  for (guint i = 0; i < r->req->len; i++) {
    rp[i] = sc_pattern_new();
    sc_pattern_set_root(rp[i], lower(r, rp[i], g_ptr_array_index(r->req, i)));
  }
  g_autofree char *name = reverse ? g_strdup_printf("%s (reverse)", k->name) : g_strdup(k->name);
  g_autoptr(GError) err = NULL;
  sc_rewrite *rw = sc_rewrite_new_applier(name, lp, (const sc_pattern *const *)rp, r->req->len,
                                          applier_fn, r, &err);
  for (guint i = 0; i < r->req->len; i++)
    sc_pattern_free(rp[i]);
  g_free(rp);
  if (rw == NULL) {
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_COMPILE, "%s:%u:%u: error: lemma %s: %s",
                k->file, k->line, k->col, k->name, err->message);
    crule_free(r);
    return FALSE;
  }
  const sc_query *q = sc_rewrite_query(rw);
  for (uint32_t v = 0; v < r->n_vars; v++)
    r->qvar[v] = g_array_index(k->vars.is_attr, gboolean, v)
                     ? UINT32_MAX
                     : sc_query_var_index(q, g_ptr_array_index(k->vars.names, v));
  for (guint i = 0; i < r->cnodes->len; i++) {
    cnode *c = g_ptr_array_index(r->cnodes, i);
    if (c->hidden_name[0])
      c->hidden = sc_query_var_index(q, c->hidden_name);
  }
  sc_rewrite_set_guard(rw, guard_fn, r);
  /* The guard decodes the bound attributes and evaluates the condition
   * over the matched classes' types, which a union never changes (the lang
   * layer merges only equal types); the applier builds the right side from
   * the same data.  Both answer an old match as they did when it was new
   * (the counters they bump are statistics): semi-naive search is exact.
   * Not so for a condition that reads value ranges: a union can narrow a
   * class's range and turn an old match's UNKNOWN into YES. */
  sc_rewrite_set_pure(rw, !r->reads_ranges);
  g_ptr_array_add(core->rewrites, rw);
  g_ptr_array_add(core->crules, r);
  return TRUE;
}

/* Defined in lemma.c: the checked lemmas of a set. */
const ld_checked *sc_lemma_set_checked(const sc_lemma_set *set, uint32_t i);

static void core_unref(rcore *core) {
  if (core == NULL || !g_atomic_int_dec_and_test(&core->ref))
    return;
  g_ptr_array_free(core->rewrites, TRUE);
  g_ptr_array_free(core->crules, TRUE);
  g_free(core);
}

/* New rules over CORE (a reference taken), bound to LANG (may be NULL). */
static sc_lemma_rules *rules_new(rcore *core, sc_lang *lang) {
  sc_lemma_rules *rules = g_new0(sc_lemma_rules, 1);
  g_atomic_int_inc(&core->ref);
  rules->core = core;
  rules->lang = lang;
  rules->eg = lang ? sc_lang_egraph(lang) : NULL;
  rules->n_lemmas = core->n_lemmas;
  rules->counters = g_new0(sc_lemma_counters, rules->n_lemmas ? rules->n_lemmas : 1);
  rules->assumptions = g_new0(GArray *, rules->n_lemmas ? rules->n_lemmas : 1);
  rules->undecided_cond = g_new0(char *, rules->n_lemmas ? rules->n_lemmas : 1);
  rules->undecided_inst = g_new0(char *, rules->n_lemmas ? rules->n_lemmas : 1);
  rules->store_vals = g_array_new(FALSE, TRUE, sizeof(sc_value));
  rules->store_found = g_array_new(FALSE, FALSE, sizeof(found_node));
  return rules;
}

sc_lemma_rules *sc_lemma_compile(const sc_lemma_set *set, sc_lang *lang, GError **error) {
  g_return_val_if_fail(set != NULL && lang != NULL, NULL);
  rcore *core = g_new0(rcore, 1);
  core->rewrites = g_ptr_array_new_with_free_func((GDestroyNotify)sc_rewrite_free);
  core->crules = g_ptr_array_new_with_free_func(crule_free);
  core->n_lemmas = sc_lemma_set_n_lemmas(set);
  for (uint32_t i = 0; i < core->n_lemmas; i++) {
    const ld_checked *k = sc_lemma_set_checked(set, i);
    if (!add_rule(core, k, i, FALSE, error) ||
        (k->dir == SC_LEMMA_BOTH && !add_rule(core, k, i, TRUE, error))) {
      g_atomic_int_inc(&core->ref);
      core_unref(core);
      return NULL;
    }
  }
  sc_lemma_rules *rules = rules_new(core, lang);
  rules->memo = g_new0(sc_condmemo *, core->crules->len ? core->crules->len : 1);
  core->home = rules;
  bound = rules;
  return rules;
}

sc_lemma_rules *sc_lemma_rules_share(const sc_lemma_rules *r) {
  g_return_val_if_fail(r != NULL, NULL);
  sc_lemma_rules *rules = rules_new(r->core, NULL);
  guint n = r->core->crules->len ? r->core->crules->len : 1;
  rules->memo = g_new0(sc_condmemo *, n);
  rules->passed = g_new0(guint, n);
  return rules;
}

void sc_lemma_rules_pass_memos(sc_lemma_rules *r, sc_lemma_rules *home) {
  g_return_if_fail(r != NULL && home != NULL && r != home && r->core == home->core &&
                   r->passed != NULL);
  for (guint i = 0; i < r->core->crules->len; i++) {
    if (r->memo[i] == NULL || sc_lemma_condmemo_size(r->memo[i]) == r->passed[i])
      continue;
    if (home->memo[i] == NULL)
      home->memo[i] = sc_lemma_condmemo_new();
    r->passed[i] = sc_lemma_condmemo_merge(home->memo[i], r->memo[i], r->passed[i]);
  }
}

void sc_lemma_rules_rebind(sc_lemma_rules *r, sc_lang *lang) {
  g_return_if_fail(r != NULL && lang != NULL);
  /* Nothing compiled reads the e-graph: attribute checks are predicates
   * and hidden variables decoded through r->lang, operators are registry
   * ids.  Only the per-e-graph reports start again. */
  r->lang = lang;
  r->eg = sc_lang_egraph(lang);
  bound = r;
  memset(r->counters, 0, sizeof(sc_lemma_counters) * (r->n_lemmas ? r->n_lemmas : 1));
  for (uint32_t i = 0; i < r->n_lemmas; i++) {
    if (r->assumptions[i]) {
      g_array_free(r->assumptions[i], TRUE);
      r->assumptions[i] = NULL;
    }
    g_clear_pointer(&r->undecided_cond[i], g_free);
    g_clear_pointer(&r->undecided_inst[i], g_free);
  }
}

void sc_lemma_rules_unbind(void) {
  bound = NULL;
}

void sc_lemma_rules_free(sc_lemma_rules *r) {
  if (r == NULL)
    return;
  if (bound == r)
    bound = NULL;
  if (r->core->home == r)
    r->core->home = NULL;
  g_free(r->counters);
  for (uint32_t i = 0; i < r->n_lemmas; i++)
    if (r->assumptions[i])
      g_array_free(r->assumptions[i], TRUE);
  g_free(r->assumptions);
  for (uint32_t i = 0; i < r->n_lemmas; i++) {
    g_free(r->undecided_cond[i]);
    g_free(r->undecided_inst[i]);
  }
  g_free(r->undecided_cond);
  g_free(r->undecided_inst);
  g_array_free(r->store_vals, TRUE);
  g_array_free(r->store_found, TRUE);
  for (guint i = 0; i < r->core->crules->len; i++)
    sc_lemma_condmemo_free(r->memo[i]);
  g_free(r->memo);
  g_free(r->passed);
  core_unref(r->core);
  g_free(r);
}

sc_rewrite *const *sc_lemma_rules_array(const sc_lemma_rules *r, uint32_t *n_rules) {
  *n_rules = r->core->rewrites->len;
  return (sc_rewrite *const *)r->core->rewrites->pdata;
}

uint32_t sc_lemma_rules_lemma_of(const sc_lemma_rules *r, uint32_t rule) {
  g_return_val_if_fail(rule < r->core->crules->len, UINT32_MAX);
  return ((const crule *)g_ptr_array_index(r->core->crules, rule))->lemma;
}

void sc_lemma_rules_counters(const sc_lemma_rules *r, uint32_t lemma, sc_lemma_counters *out) {
  memset(out, 0, sizeof *out);
  g_return_if_fail(lemma < r->n_lemmas);
  *out = r->counters[lemma];
}

gboolean sc_lemma_rules_undecided(const sc_lemma_rules *r, uint32_t lemma, const char **condition,
                                  const char **instance) {
  *condition = NULL;
  *instance = NULL;
  g_return_val_if_fail(lemma < r->n_lemmas, FALSE);
  *condition = r->undecided_cond[lemma];
  *instance = r->undecided_inst[lemma];
  return *condition != NULL;
}

const uint32_t *sc_lemma_rules_assumptions(const sc_lemma_rules *r, uint32_t lemma,
                                           uint32_t *n) {
  *n = 0;
  g_return_val_if_fail(lemma < r->n_lemmas, NULL);
  GArray *a = r->assumptions[lemma];
  if (a == NULL)
    return NULL;
  *n = a->len;
  return (const uint32_t *)(void *)a->data;
}
