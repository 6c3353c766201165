/* prove-path.c — path enumeration of the shape prover (prove-private.h).
 *
 * A path is a list of assumption texts ("s0_1 - 1 == 0", "i2 <= -1") made
 * in a fresh symtab before the run; a run that meets a comparison that
 * neither the normal form nor the oracle decides stops at the first one
 * and is replayed with that comparison and with its negation assumed
 * (depth first).  A run is deterministic given its configuration and its
 * path, so a replay meets the same comparisons, now decided.  A path that
 * breaks the obligation is reported only with a concrete witness.
 *
 * Invariants: a path's assumptions are consistent as far as the symtab can
 * tell (an assumption that contradicts the others ends the path as
 * infeasible); every run builds its own symtab, types and values and frees
 * them; the wrapped oracle never calls back into the symtab. */
#include "lemma/prove-private.h"

#include <string.h>

#define MAX_DEPTH 48
#define N_WITNESS 3000
#define MAX_CONFIG_PATHS 4000
#define MAX_SOLVER_CALLS 600

/* P as text, the variables named by NAMES (NULL: the query's own names;
 * an entry NULL: the query's name); *OPAQUE set when a name is an opaque
 * atom's ("#q1").  Terms SKIP_VAR reads (G_MAXUINT32: none) are left out,
 * and the others multiplied by SIGN; a factor DIV_VAR is dropped from them
 * (G_MAXUINT32: none). */
static void append_terms(GString *s, const sc_sym_query *q, const sc_sym_qpoly *p,
                         const char *const *names, uint32_t skip_var, uint32_t div_var,
                         gboolean only_div, int sign, gboolean *opaque) {
  gboolean any = FALSE;
  for (uint32_t i = 0; i < p->n_terms; i++) {
    const sc_sym_qterm *t = &p->terms[i];
    gboolean skip = FALSE, has_div = FALSE;
    for (uint32_t f = 0; f < t->n_factors; f++) {
      skip |= t->factors[f].var == skip_var;
      has_div |= t->factors[f].var == div_var;
    }
    if (skip || has_div != only_div)
      continue;
    int64_t c = t->coeff;
    if (c == INT64_MIN) {
      *opaque = TRUE; /* not negated safely: give up on the text */
      return;
    }
    c *= sign;
    if (any)
      g_string_append(s, c < 0 ? " - " : " + ");
    else if (c < 0)
      g_string_append(s, "-");
    any = TRUE;
    uint64_t mag = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
    gboolean first = TRUE;
    uint32_t n_printed = 0;
    for (uint32_t f = 0; f < t->n_factors; f++)
      if (t->factors[f].var != div_var)
        n_printed++;
    if (mag != 1 || n_printed == 0) {
      g_string_append_printf(s, "%" G_GUINT64_FORMAT, mag);
      first = FALSE;
    }
    for (uint32_t f = 0; f < t->n_factors; f++) {
      uint32_t v = t->factors[f].var;
      if (v == div_var)
        continue;
      const char *name = v < q->n_vars ? q->vars[v].name : "#";
      if (names != NULL && v < q->n_vars && names[v] != NULL)
        name = names[v];
      if (name[0] == '#')
        *opaque = TRUE;
      for (uint32_t e = 0; e < t->factors[f].exp; e++) {
        g_string_append_printf(s, "%s%s", first ? "" : "*", name);
        first = FALSE;
      }
    }
  }
  if (!any)
    g_string_append(s, "0");
}

static void append_poly(GString *s, const sc_sym_query *q, const sc_sym_qpoly *p,
                        const char *const *names, gboolean *opaque) {
  append_terms(s, q, p, names, G_MAXUINT32, G_MAXUINT32, FALSE, 1, opaque);
}

/* The coefficient (+1, -1) of V in P when V occurs in exactly one term,
 * alone, to the first power; 0 otherwise. */
static int lone_coeff(const sc_sym_qpoly *p, uint32_t v) {
  int c = 0;
  for (uint32_t i = 0; i < p->n_terms; i++)
    for (uint32_t f = 0; f < p->terms[i].n_factors; f++)
      if (p->terms[i].factors[f].var == v) {
        if (p->terms[i].n_factors != 1 || p->terms[i].factors[f].exp != 1 || c != 0 ||
            (p->terms[i].coeff != 1 && p->terms[i].coeff != -1))
          return 0;
        c = (int)p->terms[i].coeff;
      }
  return c;
}

/* Every term of P that reads V reads it to the first power, with a
 * coefficient of sign SIGN (0: any sign), and P has one. */
static gboolean linear_in(const sc_sym_qpoly *p, uint32_t v, int sign) {
  gboolean any = FALSE;
  for (uint32_t i = 0; i < p->n_terms; i++)
    for (uint32_t f = 0; f < p->terms[i].n_factors; f++)
      if (p->terms[i].factors[f].var == v) {
        if (p->terms[i].factors[f].exp != 1 ||
            (sign != 0 && (p->terms[i].coeff > 0) != (sign > 0)))
          return FALSE;
        any = TRUE;
      }
  return any;
}

/* Is V an opaque atom whose name starts with PREFIX ("#r", "#q", "#aux")? */
static gboolean atom_named(const sc_sym_query *q, uint32_t v, const char *prefix) {
  const char *n = q->vars[v].name;
  if (n == NULL || !g_str_has_prefix(n, prefix))
    return FALSE;
  return g_ascii_isdigit(n[strlen(prefix)]);
}

/* The definitions of the query's opaque remainders and quotients as texts
 * the symtab parses ("(L) % (D)", "(L) / (D)"), read off the clauses that
 * encode them: a remainder r from "L - D*a - r == 0" (a its quotient), a
 * quotient q from "L - D*q >= 0" (L and D free of opaque atoms, or of ones
 * already written).  NAMES[v] (transfer full each) stays NULL where no
 * definition is found.  Any text is only a case split's subject: a split
 * is sound whatever it splits on. */
static void opaque_names(const sc_sym_query *q, char **names) {
  for (int round = 0; round < 3; round++)
    for (uint32_t v = 0; v < q->n_vars; v++) {
      if (names[v] != NULL || !(atom_named(q, v, "#r") || atom_named(q, v, "#q")))
        continue;
      for (uint32_t c = 0; names[v] == NULL && c < q->n_clauses; c++) {
        if (q->clauses[c].n_lits > 2)
          continue;
        for (uint32_t l = 0; names[v] == NULL && l < q->clauses[c].n_lits; l++) {
          const sc_sym_qlit *lit = &q->clauses[c].lits[l];
          g_autoptr(GString) L = g_string_new(NULL), D = g_string_new(NULL);
          gboolean opaque = FALSE;
          int rc = lit->rel == SC_SYM_REL_EQ && atom_named(q, v, "#r") ? lone_coeff(&lit->p, v)
                                                                         : 0;
          if (rc != 0) {
            /* rc*r + L' + rc*D*a == 0 (a the quotient): r = L - D*a with
             * L = -rc*L', the remainder of L by D, and a their quotient */
            for (uint32_t a = 0; a < q->n_vars; a++) {
              if (a == v || !(atom_named(q, a, "#aux") || atom_named(q, a, "#q")) ||
                  !linear_in(&lit->p, a, 0))
                continue;
              append_terms(L, q, &lit->p, (const char *const *)names, v, a, FALSE, -rc,
                           &opaque);
              append_terms(D, q, &lit->p, (const char *const *)names, v, a, TRUE, rc, &opaque);
              if (!opaque) {
                names[v] = g_strdup_printf("((%s) %% (%s))", L->str, D->str);
                if (names[a] == NULL)
                  names[a] = g_strdup_printf("((%s) / (%s))", L->str, D->str);
              }
              break;
            }
          } else if (lit->rel == SC_SYM_REL_GE && atom_named(q, v, "#q") &&
                     linear_in(&lit->p, v, -1)) {
            append_terms(L, q, &lit->p, (const char *const *)names, G_MAXUINT32, v, FALSE, 1,
                         &opaque);
            append_terms(D, q, &lit->p, (const char *const *)names, G_MAXUINT32, v, TRUE, -1,
                         &opaque);
            if (!opaque)
              names[v] = g_strdup_printf("((%s) / (%s))", L->str, D->str);
          }
        }
      }
    }
}

/* The goal of Q and its negation as assumption texts; FALSE when the goal
 * reads an opaque atom (a floor division, modulo, min or max) whose
 * definition opaque_names cannot write. */
static gboolean goal_texts(const sc_sym_query *q, char **pos, char **neg) {
  g_autoptr(GString) p = g_string_new(NULL);
  gboolean opaque = FALSE;
  const sc_sym_qlit *g = &q->goal;
  if (g->rel == SC_SYM_REL_DIV)
    g_string_append(p, "(");
  append_poly(p, q, &g->p, NULL, &opaque);
  if (opaque) {
    char **names = g_new0(char *, q->n_vars ? q->n_vars : 1);
    opaque_names(q, names);
    g_string_truncate(p, g->rel == SC_SYM_REL_DIV ? 1 : 0);
    opaque = FALSE;
    append_poly(p, q, &g->p, (const char *const *)names, &opaque);
    for (uint32_t v = 0; v < q->n_vars; v++)
      g_free(names[v]);
    g_free(names);
  }
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
    P->opaque = TRUE;
  } else {
    sc_lp_split_on(P, pos, neg);
  }
  return SC_UNKNOWN;
}

void sc_lp_split_on(prun *P, char *pos, char *neg) {
  if (in_path(P, pos) || in_path(P, neg) || P->path->len >= MAX_DEPTH) {
    P->stuck = g_strdup_printf("a comparison the solver leaves undecided under its own "
                               "assumption (%s)",
                               pos);
    g_free(pos);
    g_free(neg);
  } else {
    P->branch = pos;
    P->branch_neg = neg;
  }
}

static const sc_sym_oracle wrap_oracle = {wrap_decide, NULL};

static void run_clear_values(prun *P) {
  for (uint32_t v = 0; v < P->nv; v++)
    sc_value_clear(&P->values[v]);
  memset(P->values, 0, sizeof(sc_value) * (P->nv ? P->nv : 1));
  memset(P->types, 0, sizeof(sc_ttype) * (P->nv ? P->nv : 1));
}

void sc_lp_run_clear(prun *P) {
  run_clear_values(P);
  P->opaque = FALSE;
  g_clear_pointer(&P->divs, g_hash_table_destroy);
  g_clear_pointer(&P->branch, g_free);
  g_clear_pointer(&P->branch_neg, g_free);
  g_clear_pointer(&P->st, sc_symtab_free);
}

/* A fresh symbolic run of the configuration: a new symtab with the
 * instance's symbols (and the output index's, for values) declared, no
 * types or values yet. */
static void begin_run(prun *P) {
  sc_lp_run_clear(P);
  P->concrete = FALSE;
  P->st = sc_symtab_new();
  sc_lp_build_instance(P, TRUE);
  if (P->values_mode)
    sc_lp_declare_index_symbols(P);
  run_clear_values(P);
}

/* Is every path of the configuration in P->digit vacuous because COND (a
 * top-level conjunct of the symbolic condition) is NO with its negation
 * YES, or TERM (a node of a requires, or of a => lemma's left side) is
 * refused for a reason other than the method's?  Judged on the empty path
 * by the normal form and the answers the solver already gave (no new
 * solver call): any comparison left undecided makes the answer FALSE. */
gboolean sc_lp_static_vacuous(prun *P, const lx *cond, const pnode *term) {
  g_autoptr(GPtrArray) empty = g_ptr_array_new();
  GPtrArray *path = P->path;
  const sc_sym_oracle *inner = P->inner;
  P->path = empty;
  g_array_set_size(P->sym_is_size, 0);
  begin_run(P);
  sc_lp_build_instance(P, FALSE);
  P->inner = NULL;
  sc_symtab_set_oracle(P->st, &wrap_oracle, P);
  gboolean vacuous;
  if (cond) {
    vacuous = sc_lp_cond_excludes(P, cond);
  } else {
    sc_ttype t;
    int code = 0;
    g_autofree char *msg = NULL;
    gboolean ok = sc_lp_infer(P, term, &t, &code, &msg);
    vacuous = !ok && P->branch == NULL && P->stuck == NULL &&
              !sc_lp_refusal_is_method(code, msg ? msg : "");
  }
  P->inner = inner;
  sc_lp_run_clear(P);
  g_clear_pointer(&P->stuck, g_free);
  g_array_set_size(P->sym_is_size, 0);
  P->path = path;
  return vacuous;
}

/* One symbolic run of the configuration under P->path. */
static pres run_path(prun *P, char **why) {
  begin_run(P);
  for (guint i = 0; i < P->path->len; i++) {
    g_autoptr(GError) err = NULL;
    if (!sc_symtab_assume(P->st, g_ptr_array_index(P->path, i), &err)) {
      if (g_error_matches(err, SC_SYM_ERROR, SC_SYM_ERROR_CONTRADICTION))
        return PR_INFEASIBLE;
      P->stuck = g_strdup_printf("cannot assume %s: %s",
                                 (const char *)g_ptr_array_index(P->path, i), err->message);
      return PR_STUCK;
    }
  }
  sc_lp_build_instance(P, FALSE);
  sc_symtab_set_oracle(P->st, &wrap_oracle, P);
  pres res = sc_lp_obligation(P, why);
  if (res == PR_OK && P->values_mode)
    res = sc_lp_value_obligation(P, why);
  return res;
}

/* The normal form of every symbol under the path (the symtab's
 * substitutions solve its equalities: "s2_0 - s0_1 == 0" makes s2_0 read
 * s0_1), in a symtab of its own (*PST); NULL when the path cannot be
 * assumed.  Keeps P->sym_is_size as it was.  (transfer full) */
static sc_dim *path_forms(prun *P, sc_symtab **pst) {
  guint len = P->sym_is_size->len;
  begin_run(P);
  g_array_set_size(P->sym_is_size, len);
  sc_dim *nf = NULL;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < P->path->len; i++)
    ok = sc_symtab_assume(P->st, g_ptr_array_index(P->path, i), NULL);
  if (ok) {
    uint32_t n = sc_symtab_n_symbols(P->st);
    nf = g_new0(sc_dim, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
      sc_dim d;
      if (sc_dim_symbol(P->st, sc_symtab_symbol_name(P->st, i), &d, NULL))
        nf[i] = sc_dim_add(P->st, d, sc_dim_const(0));
    }
  }
  *pst = g_steal_pointer(&P->st);
  return nf;
}

/* Random values for the N symbols; on even tries with the path's forms
 * NF, the symbols the path fixes take the value of their form (the path's
 * equalities solved).  FALSE when that gives a size below 1. */
static gboolean draw_values(prun *P, GRand *r, uint32_t t, const sc_symtab *pst, const sc_dim *nf,
                            int64_t *val, uint32_t n) {
  static const int64_t sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 32, 100};
  static const int64_t ints[] = {-33, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 33, 101};
  for (uint32_t i = 0; i < n; i++)
    val[i] = g_array_index(P->sym_is_size, gboolean, i)
                 ? sizes[g_rand_int_range(r, 0, G_N_ELEMENTS(sizes))]
                 : ints[g_rand_int_range(r, 0, G_N_ELEMENTS(ints))];
  if (nf == NULL || t % 2 == 1)
    return TRUE;
  uint32_t all = sc_symtab_n_symbols(pst);
  g_autofree int64_t *in = g_new0(int64_t, all ? all : 1);
  memcpy(in, val, sizeof(int64_t) * MIN(n, all));
  for (uint32_t i = 0; i < n && i < all; i++) {
    int64_t v;
    if (!sc_dim_eval(pst, nf[i], in, &v))
      return FALSE;
    if (g_array_index(P->sym_is_size, gboolean, i) && v < 1)
      return FALSE;
    val[i] = v;
  }
  return TRUE;
}

/* A concrete instance of the configuration that breaks the obligation
 * under the concrete shape rules (for values: whose sides the interpreter
 * finds different), searched among N_WITNESS instances, half of them
 * drawn at random, half solving the path's equalities; NULL when none is
 * found.  (transfer full) */
static char *find_witness(prun *P, uint32_t seed) {
  uint32_t n = P->sym_is_size->len;
  g_autofree int64_t *val = g_new0(int64_t, n ? n : 1);
  sc_symtab *pst = NULL;
  g_autofree sc_dim *nf = path_forms(P, &pst);
  GRand *r = g_rand_new_with_seed(seed);
  char *found = NULL;
  for (uint32_t t = 0; found == NULL && t < N_WITNESS; t++) {
    if (!draw_values(P, r, t, pst, nf, val, n))
      continue;
    sc_lp_run_clear(P);
    g_clear_pointer(&P->stuck, g_free);
    P->concrete = TRUE;
    P->cval = val;
    P->st = sc_symtab_new();
    sc_lp_build_instance(P, FALSE);
    g_autofree char *why = NULL;
    pres res = sc_lp_obligation(P, &why);
    if (res == PR_BAD && !P->values_mode) {
      g_autofree char *inst = sc_lp_instance_text(P);
      found = g_strdup_printf("with %s, %s", inst, why);
    } else if (res == PR_OK && P->values_mode && P->opts->check_instance) {
      /* values: the interpreter judges the concrete instance */
      sc_lemma_instance inst = {P->st, P->types, P->values};
      g_autofree char *detail = NULL;
      if (P->opts->check_instance(P->opts->check_user, P->set, P->li, &inst, &detail) == SC_NO) {
        g_autofree char *text = sc_lp_instance_text(P);
        found = g_strdup_printf("with %s, the interpreter finds the sides' values differ: %s",
                                text, detail ? detail : "?");
      }
    }
  }
  g_clear_pointer(&P->stuck, g_free);
  P->concrete = FALSE;
  g_rand_free(r);
  sc_symtab_free(pst);
  return found;
}

/* Do the path's assumptions contradict each other where only the solver
 * sees it (two quotients of operands the path makes equal, told apart)?
 * The symtab's interval and linear reasoning let such a path pass; asked
 * once, of a path that would refute with no concrete witness.  Counted as
 * a solver call.  TRUE only on the solver's SC_NO (shown, never guessed). */
static gboolean path_contradicts(prun *P) {
  if (P->inner == NULL || P->inner->satisfiable == NULL || P->solver_calls >= MAX_SOLVER_CALLS)
    return FALSE;
  P->solver_calls++;
  sc_symtab *pst = NULL;
  g_autofree sc_dim *nf = path_forms(P, &pst);
  sc_truth t = SC_UNKNOWN;
  if (nf != NULL) {
    sc_symtab_set_oracle(pst, P->inner, P->inner_user);
    t = sc_symtab_satisfiable(pst);
  }
  sc_symtab_free(pst);
  return t == SC_NO;
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
gboolean sc_lp_prove_config(prun *P, const sc_lemprove_options *o, sc_lemprove_result *r) {
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
      g_autofree char *c = sc_lp_config_text(P);
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
        g_autofree char *c = sc_lp_config_text(P);
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
        } else if (path_contradicts(P)) {
          /* no size lies on the path: it covers nothing, as an
           * infeasible one */
          r->paths--;
          here--;
          break;
        } else {
          r->status = SC_LEMPROVE_NOT_PROVABLE;
          r->why = g_strdup_printf("refuted on the sizes where %s (%s: %s), but no concrete "
                                   "instance among %u random ones breaks it",
                                   *assumed ? assumed : "true", c, why, N_WITNESS);
        }
        go_on = FALSE;
      } else if (here > MAX_CONFIG_PATHS) {
        g_autofree char *c = sc_lp_config_text(P);
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
  sc_lp_run_clear(P);
  g_clear_pointer(&P->stuck, g_free);
  return go_on;
}
