/* sym-text.c — the text of dims: parsing, printing, and assumptions.
 *
 * Grammar (Python precedence: unary minus binds tighter than * / %):
 *   constraint := relation (('&&' | 'and') relation)*
 *   relation   := expr relop expr (relop expr)*        relop: == != < <= > >=
 *   expr       := term (('+' | '-') term)*
 *   term       := unary (('*' | '/' | '//' | '%') unary)*
 *   unary      := ('-' | '+') unary | primary
 *   primary    := INTEGER | NAME | ('min' | 'max') '(' expr ',' expr ')'
 *               | '(' expr ')'
 *   NAME       := [A-Za-z_][A-Za-z0-9_.]*
 * The parser builds normal forms as it goes; errors name a 1-based column.
 *
 * Printing is canonical (terms in normal-form order, except that a sum
 * starts with its first positive term: "4-S"), uses only the user's
 * symbols (a hidden atom S/m prints "S/m", and a coefficient that is a
 * multiple of m folds back into "S"), and parenthesises so that parsing the
 * text gives the same normal form. */
#include "sym/sym-private.h"

#include <string.h>

#define MAX_DEPTH 200

typedef struct {
  sc_symtab *st;
  const char *s;
  size_t pos;
  GError **error;
  guint depth;
} sc_parser;

static gboolean is_name_start(char c) {
  return g_ascii_isalpha(c) || c == '_';
}

static gboolean is_name_char(char c) {
  return g_ascii_isalnum(c) || c == '_' || c == '.';
}

static void skip_ws(sc_parser *p) {
  while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
         p->s[p->pos] == '\r')
    p->pos++;
}

/* What the text at pos is, for "found ..." */
static char *describe_at(const char *s, size_t pos) {
  const char *c = s + pos;
  if (!*c)
    return g_strdup("end of input");
  size_t n = 1;
  if (is_name_start(*c)) {
    while (is_name_char(c[n]))
      n++;
  } else if (g_ascii_isdigit(*c)) {
    while (g_ascii_isdigit(c[n]))
      n++;
  } else if (strchr("=!<>&/|", *c) && c[1] && strchr("=&/|", c[1])) {
    n = 2;
  } else if (!g_ascii_isprint(*c)) {
    return g_strdup_printf("byte 0x%02x", (unsigned)(unsigned char)*c);
  }
  if (n > 40)
    return g_strdup_printf("'%.40s...'", c);
  return g_strdup_printf("'%.*s'", (int)n, c);
}

static gboolean fail_expected(sc_parser *p, const char *what) {
  g_autofree char *found = describe_at(p->s, p->pos);
  g_set_error(p->error, SC_SYM_ERROR, SC_SYM_ERROR_SYNTAX, "col %zu: expected %s, found %s",
              p->pos + 1, what, found);
  return FALSE;
}

static gboolean fail_at(sc_parser *p, size_t pos, int code, const char *msg) {
  g_set_error(p->error, SC_SYM_ERROR, code, "col %zu: %s", pos + 1, msg);
  return FALSE;
}

static gboolean parse_expr(sc_parser *p, sc_dim *out);

static gboolean check_overflow(sc_parser *p, size_t pos) {
  if (sc_sym_overflow)
    return fail_at(p, pos, SC_SYM_ERROR_INVALID, "integer overflow");
  return TRUE;
}

/* digits at pos; negative allows the magnitude 2^63 */
static gboolean parse_literal(sc_parser *p, gboolean negative, sc_dim *out) {
  size_t start = p->pos;
  uint64_t v = 0;
  gboolean too_big = FALSE;
  while (g_ascii_isdigit(p->s[p->pos])) {
    uint64_t dgt = (uint64_t)(p->s[p->pos] - '0');
    if (v > (UINT64_MAX - dgt) / 10)
      too_big = TRUE;
    else
      v = v * 10 + dgt;
    p->pos++;
  }
  uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  if (too_big || v > limit) {
    g_autofree char *lit = g_strndup(p->s + start, MIN(p->pos - start, 40));
    g_set_error(p->error, SC_SYM_ERROR, SC_SYM_ERROR_INVALID,
                "col %zu: integer literal %s%s is out of range", start + 1, lit,
                p->pos - start > 40 ? "..." : "");
    return FALSE;
  }
  if (negative)
    *out = sc_dim_const(v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v);
  else
    *out = sc_dim_const((int64_t)v);
  return TRUE;
}

static gboolean expect_char(sc_parser *p, char c, const char *what) {
  skip_ws(p);
  if (p->s[p->pos] != c)
    return fail_expected(p, what);
  p->pos++;
  return TRUE;
}

/* primary := INTEGER | NAME | ('min' | 'max') '(' expr ',' expr ')' | '(' expr ')' */
static gboolean parse_primary(sc_parser *p, sc_dim *out) {
  skip_ws(p);
  char c = p->s[p->pos];
  if (g_ascii_isdigit(c))
    return parse_literal(p, FALSE, out);
  if (c == '(') {
    p->pos++;
    if (!parse_expr(p, out))
      return FALSE;
    return expect_char(p, ')', "')'");
  }
  if (is_name_start(c)) {
    size_t start = p->pos;
    while (is_name_char(p->s[p->pos]))
      p->pos++;
    g_autofree char *name = g_strndup(p->s + start, p->pos - start);
    size_t after = p->pos;
    skip_ws(p);
    gboolean is_min = strcmp(name, "min") == 0, is_max = strcmp(name, "max") == 0;
    if ((is_min || is_max) && p->s[p->pos] == '(') {
      sc_dim a, b;
      p->pos++;
      if (!parse_expr(p, &a) || !expect_char(p, ',', "','") || !parse_expr(p, &b) ||
          !expect_char(p, ')', "')'"))
        return FALSE;
      *out = is_min ? sc_dim_min(p->st, a, b) : sc_dim_max(p->st, a, b);
      return TRUE;
    }
    p->pos = after;
    if (strcmp(name, "and") == 0) {
      p->pos = start;
      return fail_expected(p, "an integer, a symbol or '('");
    }
    if (!sc_dim_symbol(p->st, name, out, NULL)) {
      g_set_error(p->error, SC_SYM_ERROR, SC_SYM_ERROR_UNDEFINED,
                  "col %zu: undefined symbol '%s'", start + 1, name);
      return FALSE;
    }
    return TRUE;
  }
  return fail_expected(p, "an integer, a symbol or '('");
}

/* unary := ('-' | '+') unary | primary */
static gboolean parse_unary(sc_parser *p, sc_dim *out) {
  if (++p->depth > MAX_DEPTH) {
    skip_ws(p);
    return fail_at(p, p->pos, SC_SYM_ERROR_SYNTAX, "expression nested too deeply");
  }
  gboolean ok;
  skip_ws(p);
  char c = p->s[p->pos];
  if (c == '-' || c == '+') {
    size_t opos = p->pos++;
    skip_ws(p);
    if (c == '-' && g_ascii_isdigit(p->s[p->pos])) {
      ok = parse_literal(p, TRUE, out);
    } else {
      sc_dim x;
      ok = parse_unary(p, &x);
      if (ok) {
        *out = c == '-' ? sc_dim_neg(p->st, x) : x;
        ok = check_overflow(p, opos);
      }
    }
  } else {
    ok = parse_primary(p, out);
  }
  p->depth--;
  return ok;
}

/* term := unary (('*' | '/' | '//' | '%') unary)* */
static gboolean parse_term(sc_parser *p, sc_dim *out) {
  sc_dim acc;
  if (!parse_unary(p, &acc))
    return FALSE;
  for (;;) {
    skip_ws(p);
    char c = p->s[p->pos];
    if (c != '*' && c != '/' && c != '%')
      break;
    size_t opos = p->pos++;
    if (c == '/' && p->s[p->pos] == '/')
      p->pos++;
    sc_dim rhs;
    if (!parse_unary(p, &rhs))
      return FALSE;
    if (c == '*') {
      acc = sc_dim_mul(p->st, acc, rhs);
    } else {
      gboolean ok = c == '/' ? sc_dim_floordiv(p->st, acc, rhs, &acc)
                             : sc_dim_mod(p->st, acc, rhs, &acc);
      if (!ok)
        return fail_at(p, opos, SC_SYM_ERROR_INVALID, "division by zero");
    }
    if (!check_overflow(p, opos))
      return FALSE;
  }
  *out = acc;
  return TRUE;
}

/* expr := term (('+' | '-') term)* */
static gboolean parse_expr(sc_parser *p, sc_dim *out) {
  sc_dim acc;
  if (++p->depth > MAX_DEPTH)
    return fail_at(p, p->pos, SC_SYM_ERROR_SYNTAX, "expression nested too deeply");
  if (!parse_term(p, &acc))
    return FALSE;
  for (;;) {
    skip_ws(p);
    char c = p->s[p->pos];
    if (c != '+' && c != '-')
      break;
    size_t opos = p->pos++;
    sc_dim rhs;
    if (!parse_term(p, &rhs))
      return FALSE;
    acc = c == '+' ? sc_dim_add(p->st, acc, rhs) : sc_dim_sub(p->st, acc, rhs);
    if (!check_overflow(p, opos))
      return FALSE;
  }
  p->depth--;
  *out = acc;
  return TRUE;
}

gboolean sc_dim_parse(sc_symtab *st, const char *text, sc_dim *out, GError **error) {
  SC_SYM_LOCKED(st);
  g_return_val_if_fail(st != NULL && text != NULL && out != NULL, FALSE);
  sc_parser p = {st, text, 0, error, 0};
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_dim d;
  gboolean ok = parse_expr(&p, &d);
  if (ok) {
    skip_ws(&p);
    if (text[p.pos])
      ok = fail_expected(&p, "an operator or end of input");
  }
  sc_sym_overflow = saved;
  if (ok)
    *out = d;
  return ok;
}

/* ---- assumptions ----------------------------------------------------- */

typedef struct {
  sc_dim a, b;
  char op[3];
  guint part;
} sc_rel;

static gboolean read_relop(sc_parser *p, char op[3]) {
  skip_ws(p);
  const char *c = p->s + p->pos;
  static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
  for (guint i = 0; i < G_N_ELEMENTS(ops); i++) {
    size_t n = strlen(ops[i]);
    if (strncmp(c, ops[i], n) == 0) {
      memcpy(op, ops[i], n + 1);
      p->pos += n;
      return TRUE;
    }
  }
  return FALSE;
}

static gboolean at_and(sc_parser *p) {
  const char *c = p->s + p->pos;
  if (c[0] == '&' && c[1] == '&') {
    p->pos += 2;
    return TRUE;
  }
  if (strncmp(c, "and", 3) == 0 && !is_name_char(c[3])) {
    p->pos += 3;
    return TRUE;
  }
  return FALSE;
}

gboolean sc_symtab_assume(sc_symtab *st, const char *constraint, GError **error) {
  SC_SYM_LOCKED(st);
  g_return_val_if_fail(st != NULL && constraint != NULL, FALSE);
  sc_parser p = {st, constraint, 0, error, 0};
  g_autoptr(GArray) rels = g_array_new(FALSE, FALSE, sizeof(sc_rel));
  g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func(g_free);
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  gboolean ok = TRUE;
  /* parse everything first: a syntax error changes nothing */
  while (ok) {
    skip_ws(&p);
    size_t start = p.pos;
    sc_rel r;
    r.part = parts->len;
    if (!parse_expr(&p, &r.a)) {
      ok = FALSE;
      break;
    }
    if (!read_relop(&p, r.op)) {
      ok = fail_expected(&p, "a comparison (==, !=, <, <=, >, >=)");
      break;
    }
    do {
      if (!parse_expr(&p, &r.b)) {
        ok = FALSE;
        break;
      }
      g_array_append_val(rels, r);
      r.a = r.b;
    } while (read_relop(&p, r.op));
    if (!ok)
      break;
    size_t end = p.pos;
    while (end > start && g_ascii_isspace(constraint[end - 1]))
      end--;
    g_ptr_array_add(parts, g_strndup(constraint + start, end - start));
    skip_ws(&p);
    if (!constraint[p.pos])
      break;
    if (!at_and(&p)) {
      ok = fail_expected(&p, "'&&', 'and', an operator or end of input");
      break;
    }
  }
  sc_sym_overflow = FALSE;
  for (guint i = 0; ok && i < rels->len; i++) {
    sc_rel *r = &g_array_index(rels, sc_rel, i);
    const char *text = g_ptr_array_index(parts, r->part);
    ok = sc_sym_assume_rel(st, r->a, r->op, r->b, text, error);
    if (ok && sc_sym_overflow) {
      g_set_error(error, SC_SYM_ERROR, SC_SYM_ERROR_INVALID,
                  "integer overflow in assumption: %s", text);
      ok = FALSE;
    }
  }
  sc_sym_overflow = saved;
  if (ok)
    for (guint i = 0; i < parts->len; i++)
      g_ptr_array_add(st->texts, g_strdup(g_ptr_array_index(parts, i)));
  return ok;
}

/* ---- printing -------------------------------------------------------- */

static void print_dim(GString *g, const sc_symtab *st, sc_dim d);

static gboolean is_div_like(const sc_sym_atom *a) {
  return (a->kind == SC_ATOM_SYM && a->scale != 1) || a->kind == SC_ATOM_FLOORDIV ||
         a->kind == SC_ATOM_MOD;
}

/* An operand of '/' or '%' that needs no parentheses. */
static gboolean is_simple_operand(const sc_symtab *st, sc_dim d) {
  if (!d.poly)
    return d.value >= 0;
  const sc_sym_poly *p = d.poly;
  if (p->n != 1 || p->t[0].c != 1 || p->t[0].m->n != 1 || p->t[0].m->f[0].exp != 1)
    return FALSE;
  const sc_sym_atom *a = sc_sym_atom_get(st, p->t[0].m->f[0].atom);
  return !is_div_like(a);
}

static void print_operand(GString *g, const sc_symtab *st, sc_dim d) {
  if (is_simple_operand(st, d)) {
    print_dim(g, st, d);
  } else {
    g_string_append_c(g, '(');
    print_dim(g, st, d);
    g_string_append_c(g, ')');
  }
}

static void print_atom(GString *g, const sc_symtab *st, uint32_t id, gboolean wrap) {
  const sc_sym_atom *a = sc_sym_atom_get(st, id);
  wrap = wrap && is_div_like(a);
  if (wrap)
    g_string_append_c(g, '(');
  switch (a->kind) {
  case SC_ATOM_SYM:
    g_string_append(g, sc_sym_symbol_get(st, a->sym)->name);
    if (a->scale != 1)
      g_string_append_printf(g, "/%" G_GINT64_FORMAT, a->scale);
    break;
  case SC_ATOM_FLOORDIV:
  case SC_ATOM_MOD:
    print_operand(g, st, a->a);
    g_string_append_c(g, a->kind == SC_ATOM_MOD ? '%' : '/');
    print_operand(g, st, a->b);
    break;
  case SC_ATOM_MIN:
  case SC_ATOM_MAX:
    g_string_append(g, a->kind == SC_ATOM_MIN ? "min(" : "max(");
    print_dim(g, st, a->a);
    g_string_append(g, ", ");
    print_dim(g, st, a->b);
    g_string_append_c(g, ')');
    break;
  }
  if (wrap)
    g_string_append_c(g, ')');
}

/* Copy e of factor j prints as the user's symbol divided by div[j][e]
 * (a coefficient sharing a factor g with S's scale m folds into it:
 * g*(S/m) == S/(m/g) exactly, as S == m*atom). */
typedef struct {
  uint32_t atom, exp;
  int64_t *div;
} sc_pfactor;

static void print_term(GString *g, const sc_symtab *st, const sc_sym_term *t, gboolean first) {
  int64_t c = t->c;
  const sc_sym_mono *m = t->m;
  sc_pfactor *pf = g_new0(sc_pfactor, m->n + 1);
  uint32_t copies = 0;
  for (uint32_t j = 0; j < m->n; j++) {
    const sc_sym_atom *a = sc_sym_atom_get(st, m->f[j].atom);
    pf[j].atom = m->f[j].atom;
    pf[j].exp = m->f[j].exp;
    copies += m->f[j].exp;
    if (a->kind == SC_ATOM_SYM && a->scale > 1) {
      pf[j].div = g_new(int64_t, m->f[j].exp);
      for (uint32_t e = 0; e < m->f[j].exp; e++) {
        int64_t gc = sc_sym_gcd64(c, a->scale);
        if (gc < 1)
          gc = 1;
        c /= gc;
        pf[j].div[e] = a->scale / gc;
      }
    }
  }
  gboolean neg = c < 0;
  uint64_t mag = neg ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
  if (!first && c == INT64_MIN) {
    /* "-9223372036854775808" is a literal only after a unary minus */
    g_string_append(g, "+(-9223372036854775808)");
    neg = FALSE;
    mag = 1;
    first = TRUE; /* what follows is preceded by a factor */
    if (m->n == 0)
      goto out;
    g_string_append_c(g, '*');
  } else if (!first) {
    g_string_append_c(g, neg ? '-' : '+');
  } else if (neg) {
    g_string_append_c(g, '-');
  }
  if (m->n == 0) {
    g_string_append_printf(g, "%" G_GUINT64_FORMAT, mag);
  } else {
    gboolean preceded = (first && neg) || copies > 1 || c == INT64_MIN;
    if (mag != 1) {
      g_string_append_printf(g, "%" G_GUINT64_FORMAT "*", mag);
      preceded = TRUE;
    }
    gboolean sep = FALSE;
    for (uint32_t j = 0; j < m->n; j++) {
      const sc_sym_atom *a = sc_sym_atom_get(st, pf[j].atom);
      for (uint32_t e = 0; e < pf[j].exp; e++) {
        if (sep)
          g_string_append_c(g, '*');
        sep = TRUE;
        if (!pf[j].div) {
          print_atom(g, st, pf[j].atom, preceded);
        } else if (pf[j].div[e] == 1) {
          g_string_append(g, sc_sym_symbol_get(st, a->sym)->name);
        } else {
          if (preceded)
            g_string_append_c(g, '(');
          g_string_append_printf(g, "%s/%" G_GINT64_FORMAT, sc_sym_symbol_get(st, a->sym)->name,
                                 pf[j].div[e]);
          if (preceded)
            g_string_append_c(g, ')');
        }
      }
    }
  }
out:
  for (uint32_t j = 0; j < m->n; j++)
    g_free(pf[j].div);
  g_free(pf);
}

static void print_dim(GString *g, const sc_symtab *st, sc_dim d) {
  if (g->len > SC_SYM_MAX_PRINT)
    return; /* sc_dim_to_string cuts it */
  if (!d.poly) {
    g_string_append_printf(g, "%" G_GINT64_FORMAT, d.value);
    return;
  }
  const sc_sym_poly *p = d.poly;
  uint32_t lead = 0;
  for (uint32_t i = 0; i < p->n; i++)
    if (p->t[i].c > 0) {
      lead = i;
      break;
    }
  print_term(g, st, &p->t[lead], TRUE);
  for (uint32_t i = 0; i < p->n; i++)
    if (i != lead)
      print_term(g, st, &p->t[i], FALSE);
}

char *sc_dim_to_string(const sc_symtab *st, sc_dim d) {
  SC_SYM_LOCKED(st);
  if (d.poly && !st)
    st = d.poly->st;
  GString *g = g_string_new(NULL);
  print_dim(g, st, d);
  if (g->len > SC_SYM_MAX_PRINT) {
    g_string_truncate(g, SC_SYM_MAX_PRINT);
    g_string_append(g, "...");
  }
  return g_string_free(g, FALSE);
}
