/* pattern.c — pattern arenas and their compilation into query programs.
 *
 * Invariants: a pattern's terms only refer to earlier terms (built bottom
 * up), so the arena is acyclic; variable names are interned per arena.  A
 * query's variables are numbered in order of first binding: lhs first
 * (depth-first, children's variables before descending), then each requires
 * pattern in order.  Every CHECK refers to a variable bound earlier in the
 * same run, so a substitution is complete at the last YIELD. */
#include "pattern-private.h"

#include <string.h>

G_DEFINE_QUARK(sc-pattern-error-quark, sc_pattern_error)

sc_pattern *sc_pattern_new(void) {
  sc_pattern *p = g_new0(sc_pattern, 1);
  p->terms = g_array_new(FALSE, FALSE, sizeof(sc_pat_term));
  p->kids = g_array_new(FALSE, FALSE, sizeof(sc_pat_id));
  p->names = g_ptr_array_new_with_free_func(g_free);
  return p;
}

void sc_pattern_free(sc_pattern *p) {
  if (!p)
    return;
  for (guint i = 0; i < p->terms->len; i++)
    g_free((char *)g_array_index(p->terms, sc_pat_term, i).attr.var);
  g_array_unref(p->terms);
  g_array_unref(p->kids);
  g_ptr_array_unref(p->names);
  g_free(p);
}

sc_pat_id sc_pattern_var(sc_pattern *p, const char *name) {
  g_return_val_if_fail(name != NULL && *name, SC_ID_NONE);
  guint idx;
  for (idx = 0; idx < p->names->len; idx++)
    if (strcmp(g_ptr_array_index(p->names, idx), name) == 0)
      break;
  if (idx == p->names->len)
    g_ptr_array_add(p->names, g_strdup(name));
  sc_pat_term t = {0};
  t.is_var = TRUE;
  t.var = idx;
  t.op = SC_ID_NONE;
  g_array_append_val(p->terms, t);
  return p->terms->len - 1;
}

sc_pat_id sc_pattern_node(sc_pattern *p, uint32_t op, sc_attr_pat attr,
                          const sc_pat_id *kids, uint32_t n_kids) {
  g_return_val_if_fail(n_kids == 0 || kids != NULL, SC_ID_NONE);
  for (uint32_t i = 0; i < n_kids; i++)
    g_return_val_if_fail(kids[i] < p->terms->len, SC_ID_NONE);
  g_return_val_if_fail(attr.kind != SC_ATTR_VAR || (attr.var && *attr.var),
                       SC_ID_NONE);
  sc_pat_term t = {0};
  t.op = op;
  t.attr = attr;
  t.attr.var = attr.kind == SC_ATTR_VAR ? g_strdup(attr.var) : NULL;
  t.kid_off = p->kids->len;
  t.n_kids = n_kids;
  g_array_append_vals(p->kids, kids, n_kids);
  g_array_append_val(p->terms, t);
  return p->terms->len - 1;
}

void sc_pattern_set_root(sc_pattern *p, sc_pat_id root) {
  g_return_if_fail(root < p->terms->len);
  p->root = root;
  p->root_set = TRUE;
}

uint32_t sc_pattern_n_terms(const sc_pattern *p) {
  return p->terms->len;
}

sc_pat_id sc_pattern_root(const sc_pattern *p) {
  if (p->terms->len == 0)
    return SC_ID_NONE;
  return p->root_set ? p->root : p->terms->len - 1;
}

/* ---- query variables --------------------------------------------------- */

uint32_t sc_query_intern_var(sc_query *q, const char *name, gboolean is_attr,
                             GError **error) {
  for (guint i = 0; i < q->var_names->len; i++) {
    if (strcmp(g_ptr_array_index(q->var_names, i), name) == 0) {
      if (g_array_index(q->var_is_attr, gboolean, i) != is_attr) {
        g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_VAR_KIND,
                    "variable ?%s is used both as a class and as an "
                    "attribute", name);
        return SC_ID_NONE;
      }
      return i;
    }
  }
  g_ptr_array_add(q->var_names, g_strdup(name));
  g_array_append_val(q->var_is_attr, is_attr);
  return q->var_names->len - 1;
}

uint32_t sc_query_n_vars(const sc_query *q) {
  return q->var_names->len;
}

uint32_t sc_query_var_index(const sc_query *q, const char *name) {
  for (guint i = 0; i < q->var_names->len; i++)
    if (strcmp(g_ptr_array_index(q->var_names, i), name) == 0)
      return i;
  return SC_ID_NONE;
}

const char *sc_query_var_name(const sc_query *q, uint32_t var) {
  g_return_val_if_fail(var < q->var_names->len, NULL);
  return g_ptr_array_index(q->var_names, var);
}

gboolean sc_query_var_is_attr(const sc_query *q, uint32_t var) {
  g_return_val_if_fail(var < q->var_names->len, FALSE);
  return g_array_index(q->var_is_attr, gboolean, var);
}

uint32_t sc_query_root_op(const sc_query *q) {
  return q->lhs.root_op;
}

/* ---- compilation ------------------------------------------------------- */

typedef struct {
  sc_query *q;
  const sc_pattern *p;
  GArray *code;     /* sc_insn */
  uint32_t n_regs;
  GArray *bound;    /* gboolean per query variable */
  uint32_t n_binds;
} compiler;

static gboolean is_bound(compiler *c, uint32_t v) {
  return v < c->bound->len && g_array_index(c->bound, gboolean, v);
}

static void set_bound(compiler *c, uint32_t v) {
  if (c->bound->len <= v)
    g_array_set_size(c->bound, v + 1);
  g_array_index(c->bound, gboolean, v) = TRUE;
}

static gboolean emit_var(compiler *c, uint32_t reg, const sc_pat_term *t,
                         GError **error) {
  const char *name = g_ptr_array_index(c->p->names, t->var);
  uint32_t v = sc_query_intern_var(c->q, name, FALSE, error);
  if (v == SC_ID_NONE)
    return FALSE;
  sc_insn in = {0};
  in.reg = reg;
  in.var = v;
  in.kind = is_bound(c, v) ? SC_I_CHECK : SC_I_BIND_VAR;
  set_bound(c, v);
  g_array_append_val(c->code, in);
  return TRUE;
}

static gboolean compile_node(compiler *c, sc_pat_id id, uint32_t reg,
                             GError **error) {
  const sc_pat_term *t = sc_pat_term_at(c->p, id);
  sc_insn in = {0};
  in.kind = SC_I_BIND;
  in.reg = reg;
  in.bind_ix = c->n_binds++;
  in.op = t->op;
  in.arity = t->n_kids;
  in.out = c->n_regs;
  c->n_regs += t->n_kids;
  switch (t->attr.kind) {
  case SC_ATTR_ANY:
    in.akind = SC_A_ANY;
    break;
  case SC_ATTR_EXACT:
    in.akind = SC_A_EXACT;
    in.aval = t->attr.value;
    break;
  case SC_ATTR_PRED:
    in.akind = SC_A_PRED;
    in.pred = t->attr.pred;
    in.pred_user = t->attr.user;
    break;
  case SC_ATTR_VAR: {
    uint32_t v = sc_query_intern_var(c->q, t->attr.var, TRUE, error);
    if (v == SC_ID_NONE)
      return FALSE;
    in.akind = is_bound(c, v) ? SC_A_VAR_CHECK : SC_A_VAR_BIND;
    in.aval = v;
    set_bound(c, v);
    break;
  }
  case SC_ATTR_COMPUTE:
  default:
    g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_BAD_ATTR,
                "a computed attribute can only appear on a right-hand side");
    return FALSE;
  }
  g_array_append_val(c->code, in);
  uint32_t out = in.out;
  /* variables first: cheap comparisons prune before descending */
  for (uint32_t i = 0; i < t->n_kids; i++) {
    const sc_pat_term *k = sc_pat_term_at(c->p, sc_pat_kid(c->p, t, i));
    if (k->is_var && !emit_var(c, out + i, k, error))
      return FALSE;
  }
  for (uint32_t i = 0; i < t->n_kids; i++) {
    sc_pat_id kid = sc_pat_kid(c->p, t, i);
    if (!sc_pat_term_at(c->p, kid)->is_var &&
        !compile_node(c, kid, out + i, error))
      return FALSE;
  }
  return TRUE;
}

/* A path of exactly DEPTH operator terms from ID down to a class variable
 * bound by an earlier stage (the first in child order): fills OPS and POS
 * from ID down and returns the variable, else SC_ID_NONE. */
static uint32_t bound_var_path(compiler *c, sc_pat_id id, uint32_t depth,
                               uint32_t *ops, uint32_t *pos) {
  const sc_pat_term *t = sc_pat_term_at(c->p, id);
  if (t->is_var) {
    if (depth != 0)
      return SC_ID_NONE;
    uint32_t v = sc_query_var_index(c->q, g_ptr_array_index(c->p->names, t->var));
    return v != SC_ID_NONE && is_bound(c, v) &&
                   !g_array_index(c->q->var_is_attr, gboolean, v)
               ? v
               : SC_ID_NONE;
  }
  if (depth == 0)
    return SC_ID_NONE;
  for (uint32_t i = 0; i < t->n_kids; i++) {
    uint32_t v = bound_var_path(c, sc_pat_kid(c->p, t, i), depth - 1, ops + 1, pos + 1);
    if (v != SC_ID_NONE) {
      ops[0] = t->op;
      pos[0] = i;
      return v;
    }
  }
  return SC_ID_NONE;
}

static gboolean compile_program(sc_query *q, const sc_pattern *p,
                                GArray *bound, gboolean is_requires,
                                sc_program *prog, GError **error) {
  memset(prog, 0, sizeof(*prog));
  sc_pat_id root = p ? sc_pattern_root(p) : SC_ID_NONE;
  if (root == SC_ID_NONE) {
    g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_EMPTY,
                "%s pattern is empty", is_requires ? "a requires" : "the left");
    return FALSE;
  }
  compiler c = {q, p, g_array_new(FALSE, FALSE, sizeof(sc_insn)), 1, bound, 0};
  const sc_pat_term *rt = sc_pat_term_at(p, root);
  prog->driver_pos = SC_ID_NONE;
  prog->driver_var = SC_ID_NONE;
  gboolean ok;
  if (rt->is_var) {
    if (is_requires) {
      g_set_error(error, SC_PATTERN_ERROR, SC_PATTERN_ERROR_BAD_REQUIRES,
                  "a requires pattern must be an operator application, not "
                  "?%s", (const char *)g_ptr_array_index(p->names, rt->var));
      ok = FALSE;
    } else {
      prog->root_op = SC_ID_NONE;
      ok = emit_var(&c, 0, rt, error);
    }
  } else {
    prog->root_op = rt->op;
    if (is_requires) {
      /* drive from the parents of a child class bound by earlier stages */
      for (uint32_t i = 0; i < rt->n_kids; i++) {
        const sc_pat_term *k = sc_pat_term_at(p, sc_pat_kid(p, rt, i));
        if (!k->is_var)
          continue;
        uint32_t v = sc_query_var_index(q, g_ptr_array_index(p->names, k->var));
        if (v != SC_ID_NONE && is_bound(&c, v) &&
            !g_array_index(q->var_is_attr, gboolean, v)) {
          prog->driver_pos = i;
          prog->driver_var = v;
          break;
        }
      }
      /* else the shortest path down to a bound variable, if any */
      for (uint32_t d = 2; d <= SC_PATH_MAX && prog->driver_var == SC_ID_NONE &&
                           prog->path_len == 0;
           d++) {
        uint32_t v = bound_var_path(&c, root, d, prog->path_op, prog->path_pos);
        if (v != SC_ID_NONE) {
          prog->path_len = d;
          prog->path_var = v;
        }
      }
    }
    ok = compile_node(&c, root, 0, error);
  }
  if (ok) {
    sc_insn y = {0};
    y.kind = SC_I_YIELD;
    g_array_append_val(c.code, y);
  }
  for (guint i = c.code->len; i-- > 0;) {
    sc_insn *in = &g_array_index(c.code, sc_insn, i);
    if (in->kind == SC_I_BIND) {
      in->last_bind = TRUE;
      break;
    }
  }
  prog->n_code = c.code->len;
  prog->n_regs = c.n_regs;
  prog->n_binds = c.n_binds;
  prog->code = (sc_insn *)g_array_free(c.code, FALSE);
  /* levels: registers are written before the BIND that reads them, so one
   * pass gives every register its distance from the root register */
  uint32_t *depth = g_new0(uint32_t, prog->n_regs ? prog->n_regs : 1);
  prog->n_levels = 0;
  for (uint32_t i = 0; i < prog->n_code; i++) {
    const sc_insn *in = &prog->code[i];
    if (in->kind != SC_I_BIND)
      continue;
    prog->n_levels = MAX(prog->n_levels, depth[in->reg] + 1);
    for (uint32_t k = 0; k < in->arity; k++)
      depth[in->out + k] = depth[in->reg] + 1;
  }
  g_free(depth);
  return ok;
}

sc_query *sc_query_new(const sc_pattern *lhs,
                       const sc_pattern *const *requires, uint32_t n_requires,
                       GError **error) {
  g_return_val_if_fail(n_requires == 0 || requires != NULL, NULL);
  sc_query *q = g_new0(sc_query, 1);
  q->var_names = g_ptr_array_new_with_free_func(g_free);
  q->var_is_attr = g_array_new(FALSE, FALSE, sizeof(gboolean));
  q->req = g_new0(sc_program, n_requires ? n_requires : 1);
  q->n_req = n_requires;
  g_autoptr(GArray) bound = g_array_new(FALSE, TRUE, sizeof(gboolean));
  if (!compile_program(q, lhs, bound, FALSE, &q->lhs, error))
    goto fail;
  for (uint32_t i = 0; i < n_requires; i++)
    if (!compile_program(q, requires[i], bound, TRUE, &q->req[i], error))
      goto fail;
  return q;
fail:
  sc_query_free(q);
  return NULL;
}

void sc_query_free(sc_query *q) {
  if (!q)
    return;
  g_free(q->lhs.code);
  for (uint32_t i = 0; i < q->n_req; i++)
    g_free(q->req[i].code);
  g_free(q->req);
  g_ptr_array_unref(q->var_names);
  g_array_unref(q->var_is_attr);
  g_free(q);
}

static void disasm_program(GString *s, const sc_query *q, const sc_program *p,
                           const char *title) {
  g_string_append_printf(s, "%s: root op %d, %u registers", title,
                         p->root_op == SC_ID_NONE ? -1 : (int)p->root_op,
                         p->n_regs);
  if (p->driver_var != SC_ID_NONE)
    g_string_append_printf(s, ", driven by parents of ?%s at child %u",
                           sc_query_var_name(q, p->driver_var), p->driver_pos);
  if (p->path_len) {
    g_string_append_printf(s, ", roots found up from ?%s through",
                           sc_query_var_name(q, p->path_var));
    for (uint32_t i = p->path_len; i-- > 0;)
      g_string_append_printf(s, " op=%u child %u", p->path_op[i], p->path_pos[i]);
  }
  g_string_append_c(s, '\n');
  for (uint32_t i = 0; i < p->n_code; i++) {
    const sc_insn *in = &p->code[i];
    g_string_append_printf(s, "  %2u ", i);
    switch (in->kind) {
    case SC_I_BIND:
      g_string_append_printf(s, "bind   r%u op=%u arity=%u -> r%u..", in->reg,
                             in->op, in->arity, in->out);
      switch (in->akind) {
      case SC_A_ANY: break;
      case SC_A_EXACT: g_string_append_printf(s, " attr=%u", in->aval); break;
      case SC_A_VAR_BIND:
        g_string_append_printf(s, " attr->?%s", sc_query_var_name(q, in->aval));
        break;
      case SC_A_VAR_CHECK:
        g_string_append_printf(s, " attr==?%s", sc_query_var_name(q, in->aval));
        break;
      case SC_A_PRED: g_string_append(s, " attr pred"); break;
      }
      break;
    case SC_I_CHECK:
      g_string_append_printf(s, "check  r%u == ?%s", in->reg,
                             sc_query_var_name(q, in->var));
      break;
    case SC_I_BIND_VAR:
      g_string_append_printf(s, "var    ?%s := r%u",
                             sc_query_var_name(q, in->var), in->reg);
      break;
    case SC_I_YIELD:
      g_string_append(s, "yield");
      break;
    }
    g_string_append_c(s, '\n');
  }
}

char *sc_query_disassemble(const sc_query *q) {
  GString *s = g_string_new(NULL);
  disasm_program(s, q, &q->lhs, "lhs");
  for (uint32_t i = 0; i < q->n_req; i++) {
    char title[32];
    g_snprintf(title, sizeof title, "requires[%u]", i);
    disasm_program(s, q, &q->req[i], title);
  }
  return g_string_free(s, FALSE);
}
