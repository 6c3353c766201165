/* parse.c — lexer and recursive-descent parser of lemma files.
 *
 * Layout rule: a statement starts at column 1 of a line; a newline ends it
 * unless the next line that is not blank or a comment starts with
 * whitespace, or a bracket is open.  The lexer turns every statement end
 * into an END token, so the grammar below never sees newlines.  After an
 * error the parser skips to the next END (one error per statement).
 *
 * Invariants: every tree node carries the byte span of its text; errors
 * are raised where detected with the offset of the offending token. */
#include "lemma/lemma-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Trees                                                                     */

void lx_free(lx *e) {
  if (e == NULL)
    return;
  for (uint32_t i = 0; i < e->n; i++) {
    lx_free(e->kids[i]);
    if (e->keys)
      g_free(e->keys[i]);
  }
  g_free(e->kids);
  g_free(e->keys);
  g_free(e->key_pos);
  g_free(e->text);
  g_free(e->result_var);
  g_free(e);
}

lx *lx_copy(const lx *e) {
  if (e == NULL)
    return NULL;
  lx *c = g_new0(lx, 1);
  *c = *e;
  c->text = g_strdup(e->text);
  c->result_var = g_strdup(e->result_var);
  if (e->n) {
    c->kids = g_new(lx *, e->n);
    for (uint32_t i = 0; i < e->n; i++)
      c->kids[i] = lx_copy(e->kids[i]);
    if (e->keys) {
      c->keys = g_new0(char *, e->n);
      c->key_pos = g_new0(uint32_t, e->n);
      for (uint32_t i = 0; i < e->n; i++) {
        c->keys[i] = g_strdup(e->keys[i]);
        c->key_pos[i] = e->key_pos[i];
      }
    }
  } else {
    c->kids = NULL;
    c->keys = NULL;
    c->key_pos = NULL;
  }
  return c;
}

lx *lx_new(lx_kind k, uint32_t start, uint32_t end) {
  lx *e = g_new0(lx, 1);
  e->kind = k;
  e->start = start;
  e->end = end;
  e->result = -1;
  return e;
}

void lx_push(lx *e, const char *key, uint32_t key_pos, lx *kid) {
  e->kids = g_renew(lx *, e->kids, e->n + 1);
  if (e->kind == LX_CALL) {
    e->keys = g_renew(char *, e->keys, e->n + 1);
    e->key_pos = g_renew(uint32_t, e->key_pos, e->n + 1);
    e->keys[e->n] = g_strdup(key);
    e->key_pos[e->n] = key_pos;
  }
  e->kids[e->n++] = kid;
}

static int prec_of(const lx *e) {
  switch (e->kind) {
  case LX_OR: return 1;
  case LX_AND: return 2;
  case LX_NOT: return 3;
  case LX_CMP: return 4;
  case LX_BIN: return (e->op[0] == '+' || e->op[0] == '-') ? 5 : 6;
  case LX_NEG: return 7;
  default: return 8;
  }
}

static void append_kid(GString *out, const lx *k, int min_prec) {
  if (prec_of(k) < min_prec) {
    g_string_append_c(out, '(');
    lx_append(out, k);
    g_string_append_c(out, ')');
  } else {
    lx_append(out, k);
  }
}

void lx_append(GString *out, const lx *e) {
  switch (e->kind) {
  case LX_VAR: g_string_append_printf(out, "?%s", e->text); break;
  case LX_WILD: g_string_append(out, "?_"); break;
  case LX_INT: g_string_append_printf(out, "%" G_GINT64_FORMAT, e->ival); break;
  case LX_FLOAT: {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(buf, sizeof buf, e->fval);
    g_string_append(out, buf);
    if (!strpbrk(buf, ".eEn"))
      g_string_append(out, ".0");
    break;
  }
  case LX_STR: g_string_append_printf(out, "\"%s\"", e->text); break;
  case LX_NAME: g_string_append(out, e->text); break;
  case LX_LIST:
    g_string_append_c(out, '[');
    for (uint32_t i = 0; i < e->n; i++) {
      if (i)
        g_string_append(out, ", ");
      lx_append(out, e->kids[i]);
    }
    g_string_append_c(out, ']');
    break;
  case LX_CALL:
    g_string_append(out, e->text);
    if (e->result >= 0)
      g_string_append_printf(out, "#%d", e->result);
    else if (e->result_var != NULL)
      g_string_append_printf(out, "#?%s", e->result_var);
    g_string_append_c(out, '(');
    for (uint32_t i = 0; i < e->n; i++) {
      if (i)
        g_string_append(out, ", ");
      if (e->keys[i])
        g_string_append_printf(out, "%s=", e->keys[i]);
      lx_append(out, e->kids[i]);
    }
    g_string_append_c(out, ')');
    break;
  case LX_BIN:
  case LX_CMP: {
    int p = prec_of(e);
    append_kid(out, e->kids[0], p);
    g_string_append_printf(out, " %s ", strcmp(e->op, "d") == 0 ? "divides" : e->op);
    append_kid(out, e->kids[1], p + 1);
    break;
  }
  case LX_NEG:
    g_string_append_c(out, '-');
    append_kid(out, e->kids[0], 7);
    break;
  case LX_NOT:
    g_string_append(out, "not ");
    append_kid(out, e->kids[0], 3);
    break;
  case LX_AND:
  case LX_OR: {
    int p = prec_of(e);
    append_kid(out, e->kids[0], p);
    g_string_append(out, e->kind == LX_AND ? " and " : " or ");
    append_kid(out, e->kids[1], p + 1);
    break;
  }
  }
}

/* ------------------------------------------------------------------------ */
/* Diagnostics                                                               */

void ld_diag_init(ld_diag *d, const char *file, const char *text) {
  d->file = file;
  d->text = text;
  d->errors = g_array_new(FALSE, FALSE, sizeof(ld_error));
  d->skip_instance_test = FALSE;
  d->lc_pos = 0;
  d->lc_line = 1;
  d->lc_col = 1;
}

void ld_diag_clear(ld_diag *d) {
  if (d->errors == NULL)
    return;
  for (guint i = 0; i < d->errors->len; i++)
    g_free(g_array_index(d->errors, ld_error, i).msg);
  g_array_free(d->errors, TRUE);
  d->errors = NULL;
}

void ld_error_at(ld_diag *d, uint32_t pos, sc_lemma_error code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ld_error e = {pos, code, g_strdup_vprintf(fmt, ap)};
  va_end(ap);
  g_array_append_val(d->errors, e);
}

/* Line and column of POS, counting from FROM at line L, column C; returns
 * the offset reached (POS, or a NUL before it). */
static uint32_t line_col_from(const char *text, uint32_t from, uint32_t l, uint32_t c,
                              uint32_t pos, uint32_t *line, uint32_t *col) {
  uint32_t i = from;
  for (; i < pos && text[i]; i++) {
    if (text[i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
  return i;
}

void ld_line_col(const char *text, uint32_t pos, uint32_t *line, uint32_t *col) {
  (void)line_col_from(text, 0, 1, 1, pos, line, col);
}

void ld_diag_line_col(ld_diag *d, uint32_t pos, uint32_t *line, uint32_t *col) {
  if (pos < d->lc_pos) {
    d->lc_pos = 0;
    d->lc_line = d->lc_col = 1;
  }
  uint32_t reached = line_col_from(d->text, d->lc_pos, d->lc_line, d->lc_col, pos, line, col);
  d->lc_pos = reached;
  d->lc_line = *line;
  d->lc_col = *col;
}

void ld_diag_to_gerror(const ld_diag *d, GError **error) {
  if (d->errors->len == 0)
    return;
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < d->errors->len; i++) {
    const ld_error *e = &g_array_index(d->errors, ld_error, i);
    uint32_t line, col;
    ld_line_col(d->text, e->pos, &line, &col);
    g_string_append_printf(s, "%s%s:%u:%u: error: %s", i ? "\n" : "", d->file, line, col,
                           e->msg);
  }
  g_set_error_literal(error, SC_LEMMA_ERROR, (gint)g_array_index(d->errors, ld_error, 0).code,
                      s->str);
  g_string_free(s, TRUE);
}

/* ------------------------------------------------------------------------ */
/* Lexer                                                                     */

typedef enum {
  T_END,     /* end of a statement */
  T_EOF,
  T_IDENT,   /* identifier, may contain dots: aten.add.Tensor */
  T_VAR,     /* ?name */
  T_WILD,    /* ?_ */
  T_INT,
  T_FLOAT,
  T_STR,
  T_PUNCT,   /* ( ) [ ] , = : # + - * / % == != < <= > >= => <=> -> */
  T_BAD,
} tok_kind;

typedef struct {
  tok_kind kind;
  uint32_t start, end;
  char *text;   /* IDENT, VAR, STR contents, PUNCT */
  int64_t ival;
  double fval;
} token;

typedef struct {
  ld_diag *d;
  const char *s;
  uint32_t pos;
  int depth;      /* open brackets */
  token tok;      /* current token */
  gboolean failed; /* an error in the current statement */
} lexer;

static const char *const puncts[] = {"<=>", "=>", "->", "==", "!=", "<=", ">=", "(", ")",
                                     "[",   "]",  ",",  "=",  ":",  "#",  "+",  "-", "*",
                                     "/",   "%",  "<",  ">",  ";"};

static gboolean is_id_start(char c) { return g_ascii_isalpha(c) || c == '_'; }
static gboolean is_id_char(char c) { return g_ascii_isalnum(c) || c == '_'; }

/* After a newline at depth 0: does the statement continue? */
static gboolean continues(const char *s, uint32_t pos) {
  while (s[pos]) {
    /* pos is at the start of a line */
    uint32_t p = pos;
    while (s[p] == ' ' || s[p] == '\t' || s[p] == '\r')
      p++;
    if (s[p] == '\n') { /* blank line */
      pos = p + 1;
      continue;
    }
    if (s[p] == '#') { /* comment line, wherever it starts */
      while (s[p] && s[p] != '\n')
        p++;
      if (!s[p])
        return FALSE;
      pos = p + 1;
      continue;
    }
    if (s[p] == '\0')
      return FALSE;
    return p > pos; /* indented */
  }
  return FALSE;
}

static void next(lexer *L) {
  g_clear_pointer(&L->tok.text, g_free);
  const char *s = L->s;
  for (;;) {
    char c = s[L->pos];
    if (c == ' ' || c == '\t' || c == '\r') {
      L->pos++;
    } else if (c == '#' && (L->pos == 0 || !is_id_char(s[L->pos - 1]))) {
      /* a comment: '#' not glued to a name (name#k is a result index) */
      while (s[L->pos] && s[L->pos] != '\n')
        L->pos++;
    } else if (c == '\n') {
      L->pos++;
      if (L->depth == 0 && !continues(s, L->pos)) {
        L->tok.kind = T_END;
        L->tok.start = L->tok.end = L->pos - 1;
        return;
      }
    } else {
      break;
    }
  }
  uint32_t st = L->pos;
  L->tok.start = st;
  char c = s[st];
  if (c == '\0') {
    L->tok.kind = T_EOF;
    L->tok.end = st;
    return;
  }
  if (is_id_start(c)) {
    uint32_t p = st;
    for (;;) {
      while (is_id_char(s[p]))
        p++;
      if (s[p] == '.' && (is_id_char(s[p + 1])))
        p++;
      else
        break;
    }
    L->tok.kind = T_IDENT;
    L->tok.text = g_strndup(s + st, p - st);
    L->tok.end = L->pos = p;
    return;
  }
  if (c == '?') {
    uint32_t p = st + 1;
    if (!is_id_start(s[p])) {
      L->tok.kind = T_BAD;
      L->tok.text = g_strdup("?");
      L->tok.end = L->pos = p;
      return;
    }
    while (is_id_char(s[p]))
      p++;
    L->tok.text = g_strndup(s + st + 1, p - st - 1);
    L->tok.kind = strcmp(L->tok.text, "_") == 0 ? T_WILD : T_VAR;
    L->tok.end = L->pos = p;
    return;
  }
  if (g_ascii_isdigit(c)) {
    uint32_t p = st;
    gboolean fl = FALSE;
    while (g_ascii_isdigit(s[p]))
      p++;
    if (s[p] == '.' && g_ascii_isdigit(s[p + 1])) {
      fl = TRUE;
      p++;
      while (g_ascii_isdigit(s[p]))
        p++;
    }
    if ((s[p] == 'e' || s[p] == 'E') &&
        (g_ascii_isdigit(s[p + 1]) ||
         ((s[p + 1] == '-' || s[p + 1] == '+') && g_ascii_isdigit(s[p + 2])))) {
      fl = TRUE;
      p += 2;
      while (g_ascii_isdigit(s[p]))
        p++;
    }
    g_autofree char *t = g_strndup(s + st, p - st);
    L->tok.end = L->pos = p;
    if (fl) {
      L->tok.kind = T_FLOAT;
      L->tok.fval = g_ascii_strtod(t, NULL);
    } else {
      errno = 0;
      char *endp = NULL;
      unsigned long long v = strtoull(t, &endp, 10);
      if (errno != 0 || v > (unsigned long long)INT64_MAX) {
        L->tok.kind = T_BAD;
        L->tok.text = g_strdup("integer out of range");
        return;
      }
      L->tok.kind = T_INT;
      L->tok.ival = (int64_t)v;
    }
    return;
  }
  if (c == '"') {
    uint32_t p = st + 1;
    GString *b = g_string_new(NULL);
    while (s[p] && s[p] != '"' && s[p] != '\n') {
      if (s[p] == '\\' && s[p + 1] && s[p + 1] != '\n')
        p++;
      g_string_append_c(b, s[p]);
      p++;
    }
    if (s[p] != '"') {
      g_string_free(b, TRUE);
      L->tok.kind = T_BAD;
      L->tok.text = g_strdup("unterminated string");
      L->tok.end = L->pos = p;
      return;
    }
    L->tok.kind = T_STR;
    L->tok.text = g_string_free(b, FALSE);
    L->tok.end = L->pos = p + 1;
    return;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(puncts); i++) {
    size_t n = strlen(puncts[i]);
    if (strncmp(s + st, puncts[i], n) == 0) {
      L->tok.kind = T_PUNCT;
      L->tok.text = g_strdup(puncts[i]);
      L->tok.end = L->pos = st + (uint32_t)n;
      if (c == '(' || c == '[')
        L->depth++;
      else if ((c == ')' || c == ']') && L->depth > 0)
        L->depth--;
      return;
    }
  }
  L->tok.kind = T_BAD;
  L->tok.text = g_strdup_printf("character '%c'", g_ascii_isprint(c) ? c : '?');
  L->tok.end = L->pos = st + 1;
}

static char *describe(const token *t) {
  switch (t->kind) {
  case T_END: return g_strdup("end of statement");
  case T_EOF: return g_strdup("end of file");
  case T_IDENT: return g_strdup_printf("'%s'", t->text);
  case T_VAR: return g_strdup_printf("'?%s'", t->text);
  case T_WILD: return g_strdup("'?_'");
  case T_INT: return g_strdup_printf("integer %" G_GINT64_FORMAT, t->ival);
  case T_FLOAT: return g_strdup("a number");
  case T_STR: return g_strdup_printf("string \"%s\"", t->text);
  case T_PUNCT: return g_strdup_printf("'%s'", t->text);
  case T_BAD: return g_strdup(t->text);
  }
  return g_strdup("?");
}

static gboolean fail(lexer *L, const char *expected) {
  if (!L->failed) {
    g_autofree char *found = describe(&L->tok);
    if (L->tok.kind == T_BAD && strcmp(L->tok.text, "?") == 0)
      ld_error_at(L->d, L->tok.start, SC_LEMMA_ERROR_SYNTAX,
                  "expected a variable name after '?'");
    else if (L->tok.kind == T_BAD)
      ld_error_at(L->d, L->tok.start, SC_LEMMA_ERROR_SYNTAX, "%s", found);
    else
      ld_error_at(L->d, L->tok.start, SC_LEMMA_ERROR_SYNTAX, "expected %s, found %s", expected,
                  found);
  }
  L->failed = TRUE;
  return FALSE;
}

static gboolean is_p(const lexer *L, const char *p) {
  return L->tok.kind == T_PUNCT && strcmp(L->tok.text, p) == 0;
}
static gboolean is_kw(const lexer *L, const char *k) {
  return L->tok.kind == T_IDENT && strcmp(L->tok.text, k) == 0;
}
static gboolean accept_p(lexer *L, const char *p) {
  if (!is_p(L, p))
    return FALSE;
  next(L);
  return TRUE;
}
static gboolean expect_p(lexer *L, const char *p, const char *what) {
  if (accept_p(L, p))
    return TRUE;
  return fail(L, what);
}

static gboolean is_stmt_end(const lexer *L) {
  return L->tok.kind == T_END || L->tok.kind == T_EOF;
}

/* ------------------------------------------------------------------------ */
/* Expressions                                                               */

static lx *p_cond(lexer *L, int depth);
static lx *p_call_items(lexer *L, lx *e, int depth);

#define MAX_DEPTH 200

/* atom := INT | FLOAT | STRING | ?x | ?_ | NAME | NAME ['#' INT] '(' items ')'
 *       | ?f '(' items ')' | '[' [cond {',' cond}] ']' | '(' cond ')' */
static lx *p_atom(lexer *L, int depth) {
  if (depth > MAX_DEPTH) {
    fail(L, "a shallower expression (nesting too deep)");
    return NULL;
  }
  token *t = &L->tok;
  uint32_t st = t->start;
  switch (t->kind) {
  case T_INT: {
    lx *e = lx_new(LX_INT, st, t->end);
    e->ival = t->ival;
    next(L);
    return e;
  }
  case T_FLOAT: {
    lx *e = lx_new(LX_FLOAT, st, t->end);
    e->fval = t->fval;
    next(L);
    return e;
  }
  case T_STR: {
    lx *e = lx_new(LX_STR, st, t->end);
    e->text = g_strdup(t->text);
    next(L);
    return e;
  }
  case T_VAR: {
    uint32_t end = t->end;
    char *name = g_strdup(t->text);
    next(L);
    if (is_p(L, "(") && L->tok.start == end) {
      /* ?f(...): a call of an operator-class variable (`for ?f in CLASS`);
       * the text keeps the '?' so that it never names an operator */
      lx *e = lx_new(LX_CALL, st, st);
      e->text = g_strconcat("?", name, NULL);
      g_free(name);
      e->result = -1;
      return p_call_items(L, e, depth);
    }
    lx *e = lx_new(LX_VAR, st, end);
    e->text = name;
    return e;
  }
  case T_WILD: {
    lx *e = lx_new(LX_WILD, st, t->end);
    next(L);
    return e;
  }
  case T_IDENT: {
    char *name = g_strdup(t->text);
    uint32_t end = t->end;
    next(L);
    int32_t result = -1;
    char *result_var = NULL;
    uint32_t result_var_pos = 0;
    if (is_p(L, "#") && L->tok.start == end) {
      next(L);
      if (L->tok.kind == T_VAR) {
        /* name#?k(...): a result-index variable */
        result_var = g_strdup(L->tok.text);
        result_var_pos = L->tok.start;
      } else if (L->tok.kind != T_INT || L->tok.ival > 1000) {
        g_free(name);
        fail(L, "a result index (an integer or a ?variable) after '#'");
        return NULL;
      } else {
        result = (int32_t)L->tok.ival;
      }
      next(L);
      if (!is_p(L, "(")) {
        g_free(name);
        g_free(result_var);
        fail(L, "'(' after a result index");
        return NULL;
      }
    }
    if (!is_p(L, "(")) {
      lx *e = lx_new(LX_NAME, st, end);
      e->text = name;
      return e;
    }
    lx *e = lx_new(LX_CALL, st, st);
    e->text = name;
    e->result = result;
    e->result_var = result_var;
    e->result_var_pos = result_var_pos;
    return p_call_items(L, e, depth);
  }
  case T_PUNCT:
    if (is_p(L, "[")) {
      next(L);
      lx *e = lx_new(LX_LIST, st, st);
      if (!is_p(L, "]")) {
        for (;;) {
          lx *a = p_cond(L, depth + 1);
          if (a == NULL) {
            lx_free(e);
            return NULL;
          }
          lx_push(e, NULL, 0, a);
          if (accept_p(L, ","))
            continue;
          break;
        }
      }
      e->end = L->tok.end;
      if (!expect_p(L, "]", "',' or ']'")) {
        lx_free(e);
        return NULL;
      }
      return e;
    }
    if (is_p(L, "(")) {
      next(L);
      lx *e = p_cond(L, depth + 1);
      if (e == NULL)
        return NULL;
      if (!expect_p(L, ")", "')'")) {
        lx_free(e);
        return NULL;
      }
      return e;
    }
    break;
  default:
    break;
  }
  fail(L, "an expression");
  return NULL;
}

/* The items of a call whose head E (a CALL) was read, from its '(':
 *   '(' [ [KEY '='] cond { ',' [KEY '='] cond } ] ')'
 * Frees E and returns NULL on an error. */
static lx *p_call_items(lexer *L, lx *e, int depth) {
  next(L);
  if (!is_p(L, ")")) {
    for (;;) {
      uint32_t key_pos = L->tok.start;
      lx *a = p_cond(L, depth + 1);
      if (a == NULL) {
        lx_free(e);
        return NULL;
      }
      g_autofree char *key = NULL;
      if (a->kind == LX_NAME && !strchr(a->text, '.') && is_p(L, "=")) {
        key = g_strdup(a->text);
        lx_free(a);
        next(L);
        a = p_cond(L, depth + 1);
        if (a == NULL) {
          lx_free(e);
          return NULL;
        }
      }
      lx_push(e, key, key_pos, a);
      if (accept_p(L, ","))
        continue;
      break;
    }
  }
  e->end = L->tok.end;
  if (!expect_p(L, ")", "',' or ')'")) {
    lx_free(e);
    return NULL;
  }
  return e;
}

/* unary := '-' unary | atom */
static lx *p_unary(lexer *L, int depth) {
  if (depth > MAX_DEPTH) {
    fail(L, "a shallower expression (nesting too deep)");
    return NULL;
  }
  if (is_p(L, "-")) {
    uint32_t st = L->tok.start;
    next(L);
    if (L->tok.kind == T_INT && L->tok.start == st + 1) {
      lx *e = lx_new(LX_INT, st, L->tok.end);
      e->ival = -L->tok.ival;
      next(L);
      return e;
    }
    if (L->tok.kind == T_FLOAT && L->tok.start == st + 1) {
      lx *e = lx_new(LX_FLOAT, st, L->tok.end);
      e->fval = -L->tok.fval;
      next(L);
      return e;
    }
    lx *k = p_unary(L, depth + 1);
    if (k == NULL)
      return NULL;
    lx *e = lx_new(LX_NEG, st, k->end);
    lx_push(e, NULL, 0, k);
    return e;
  }
  return p_atom(L, depth);
}

static lx *binary(lx_kind kind, const char *op, lx *a, lx *b) {
  lx *e = lx_new(kind, a->start, b->end);
  g_strlcpy(e->op, op, sizeof e->op);
  lx_push(e, NULL, 0, a);
  lx_push(e, NULL, 0, b);
  return e;
}

/* term := unary {('*' | '/' | '%') unary} */
static lx *p_term(lexer *L, int depth) {
  lx *a = p_unary(L, depth);
  while (a && (is_p(L, "*") || is_p(L, "/") || is_p(L, "%"))) {
    char op[3];
    g_strlcpy(op, L->tok.text, sizeof op);
    next(L);
    lx *b = p_unary(L, depth + 1);
    if (b == NULL) {
      lx_free(a);
      return NULL;
    }
    a = binary(LX_BIN, op, a, b);
  }
  return a;
}

/* arith := term {('+' | '-') term} */
static lx *p_arith(lexer *L, int depth) {
  lx *a = p_term(L, depth);
  while (a && (is_p(L, "+") || is_p(L, "-"))) {
    char op[3];
    g_strlcpy(op, L->tok.text, sizeof op);
    next(L);
    lx *b = p_term(L, depth + 1);
    if (b == NULL) {
      lx_free(a);
      return NULL;
    }
    a = binary(LX_BIN, op, a, b);
  }
  return a;
}

/* cmp := arith [('==' | '!=' | '<' | '<=' | '>' | '>=' | 'divides') arith] */
static lx *p_cmp(lexer *L, int depth) {
  lx *a = p_arith(L, depth);
  if (a == NULL)
    return NULL;
  static const char *const rel[] = {"==", "!=", "<=", ">=", "<", ">"};
  const char *op = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(rel); i++)
    if (is_p(L, rel[i]))
      op = rel[i];
  if (op == NULL && is_kw(L, "divides"))
    op = "d";
  if (op == NULL)
    return a;
  next(L);
  lx *b = p_arith(L, depth + 1);
  if (b == NULL) {
    lx_free(a);
    return NULL;
  }
  return binary(LX_CMP, op, a, b);
}

/* not := 'not' not | cmp */
static lx *p_not(lexer *L, int depth) {
  if (depth > MAX_DEPTH) {
    fail(L, "a shallower expression (nesting too deep)");
    return NULL;
  }
  if (is_kw(L, "not")) {
    uint32_t st = L->tok.start;
    next(L);
    lx *k = p_not(L, depth + 1);
    if (k == NULL)
      return NULL;
    lx *e = lx_new(LX_NOT, st, k->end);
    lx_push(e, NULL, 0, k);
    return e;
  }
  return p_cmp(L, depth);
}

/* and := not {'and' not};  cond := and {'or' and} */
static lx *p_and(lexer *L, int depth) {
  lx *a = p_not(L, depth);
  while (a && is_kw(L, "and")) {
    next(L);
    lx *b = p_not(L, depth + 1);
    if (b == NULL) {
      lx_free(a);
      return NULL;
    }
    a = binary(LX_AND, "", a, b);
  }
  return a;
}

static lx *p_cond(lexer *L, int depth) {
  lx *a = p_and(L, depth);
  while (a && is_kw(L, "or")) {
    next(L);
    lx *b = p_and(L, depth + 1);
    if (b == NULL) {
      lx_free(a);
      return NULL;
    }
    a = binary(LX_OR, "", a, b);
  }
  return a;
}

/* ------------------------------------------------------------------------ */
/* Statements                                                                */

void ld_lemma_free(ld_lemma *l) {
  if (l == NULL)
    return;
  g_free(l->name);
  g_free(l->class_var);
  g_free(l->class_name);
  lx_free(l->lhs);
  lx_free(l->rhs);
  lx_free(l->where);
  if (l->requires)
    g_ptr_array_free(l->requires, TRUE);
  g_free(l);
}

static void opdecl_free(ld_opdecl *o) {
  if (o == NULL)
    return;
  g_free(o->qualname);
  g_free(o->params);
  if (o->results) {
    for (guint i = 0; i < o->results->len; i++) {
      ld_result *r = &g_array_index(o->results, ld_result, i);
      lx_free(r->shape);
      lx_free(r->dtype);
    }
    g_array_free(o->results, TRUE);
  }
  lx_free(o->where);
  lx_free(o->def);
  if (o->traits)
    g_ptr_array_free(o->traits, TRUE);
  if (o->trait_pos)
    g_array_free(o->trait_pos, TRUE);
  g_free(o);
}

void ld_stmt_free(gpointer p) {
  ld_stmt *s = p;
  if (s == NULL)
    return;
  ld_lemma_free(s->lemma);
  opdecl_free(s->op);
  g_free(s);
}

static gboolean is_keyword(const char *s) {
  static const char *const kws[] = {"lemma", "op", "where", "requires", "and", "or", "not",
                                    "divides"};
  for (size_t i = 0; i < G_N_ELEMENTS(kws); i++)
    if (strcmp(s, kws[i]) == 0)
      return TRUE;
  return FALSE;
}

/* lemma := 'lemma' NAME ':' cond ('=>' | '<=>') cond
 *          { 'for' ?f 'in' CLASS | 'where' cond | 'requires' cond {',' cond} } END */
static ld_lemma *p_lemma(lexer *L) {
  ld_lemma *l = g_new0(ld_lemma, 1);
  l->start = L->tok.start;
  l->requires = g_ptr_array_new_with_free_func((GDestroyNotify)lx_free);
  next(L);
  if (L->tok.kind != T_IDENT || strchr(L->tok.text, '.') || is_keyword(L->tok.text)) {
    fail(L, "a lemma name");
    goto bad;
  }
  l->name = g_strdup(L->tok.text);
  l->name_pos = L->tok.start;
  next(L);
  if (!expect_p(L, ":", "':' after the lemma name"))
    goto bad;
  if ((l->lhs = p_cond(L, 0)) == NULL)
    goto bad;
  l->arrow_pos = L->tok.start;
  if (accept_p(L, "<=>"))
    l->both = TRUE;
  else if (!expect_p(L, "=>", "'=>' or '<=>'"))
    goto bad;
  if ((l->rhs = p_cond(L, 0)) == NULL)
    goto bad;
  gboolean seen_where = FALSE, seen_req = FALSE, seen_for = FALSE;
  while (!is_stmt_end(L)) {
    if (is_kw(L, "for") && !seen_for) {
      seen_for = TRUE;
      next(L);
      if (L->tok.kind != T_VAR) {
        fail(L, "an operator variable ?f after 'for'");
        goto bad;
      }
      l->class_var = g_strdup(L->tok.text);
      l->class_var_pos = L->tok.start;
      next(L);
      if (!is_kw(L, "in")) {
        fail(L, "'in' and an operator class");
        goto bad;
      }
      next(L);
      if (L->tok.kind != T_IDENT) {
        fail(L, "an operator class name");
        goto bad;
      }
      l->class_name = g_strdup(L->tok.text);
      l->class_pos = L->tok.start;
      next(L);
    } else if (is_kw(L, "where") && !seen_where) {
      seen_where = TRUE;
      next(L);
      if ((l->where = p_cond(L, 0)) == NULL)
        goto bad;
    } else if (is_kw(L, "requires") && !seen_req) {
      seen_req = TRUE;
      next(L);
      for (;;) {
        lx *r = p_cond(L, 0);
        if (r == NULL)
          goto bad;
        g_ptr_array_add(l->requires, r);
        if (!accept_p(L, ","))
          break;
      }
    } else {
      fail(L, seen_where && seen_req ? "end of statement"
              : seen_where           ? "'requires' or end of statement"
              : seen_req             ? "'where' or end of statement"
              : seen_for             ? "'where', 'requires' or end of statement"
                                     : "'for', 'where', 'requires' or end of statement");
      goto bad;
    }
  }
  l->end = L->tok.start;
  return l;
bad:
  ld_lemma_free(l);
  return NULL;
}

/* result := 'Tensor' [':' cond ['as' cond]] */
static gboolean p_result(lexer *L, GArray *results) {
  if (!is_kw(L, "Tensor"))
    return fail(L, "'Tensor' (operator results are tensors)");
  next(L);
  ld_result r = {NULL, NULL};
  if (!accept_p(L, ":"))
    return fail(L, "':' and the result's shape");
  if ((r.shape = p_arith(L, 0)) == NULL)
    return FALSE;
  if (is_kw(L, "as")) {
    next(L);
    if ((r.dtype = p_arith(L, 0)) == NULL) {
      lx_free(r.shape);
      return FALSE;
    }
  }
  g_array_append_val(results, r);
  return TRUE;
}

/* op := 'op' QUALNAME '(' PARAMS ')' '->' (result | '(' result {',' result} ')')
 *       ['is' TRAIT {',' TRAIT}] ['where' cond] ['=' cond] END */
static ld_opdecl *p_opdecl(lexer *L) {
  ld_opdecl *o = g_new0(ld_opdecl, 1);
  o->start = L->tok.start;
  o->results = g_array_new(FALSE, FALSE, sizeof(ld_result));
  o->traits = g_ptr_array_new_with_free_func(g_free);
  o->trait_pos = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  next(L);
  if (L->tok.kind != T_IDENT || !strchr(L->tok.text, '.')) {
    fail(L, "a qualified operator name (namespace.name)");
    goto bad;
  }
  o->qualname = g_strdup(L->tok.text);
  o->name_pos = L->tok.start;
  next(L);
  if (!is_p(L, "(")) {
    fail(L, "'(' and the parameters");
    goto bad;
  }
  /* The parameters are schema text: skip to the matching ')' and keep it. */
  o->params_pos = L->tok.end;
  int depth = L->depth;
  next(L);
  while (!(is_p(L, ")") && L->depth == depth - 1)) {
    if (L->tok.kind == T_EOF || L->tok.kind == T_END) {
      fail(L, "')' closing the parameters");
      goto bad;
    }
    next(L);
  }
  o->params = g_strndup(L->s + o->params_pos, L->tok.start - o->params_pos);
  next(L);
  if (!expect_p(L, "->", "'->' and the results"))
    goto bad;
  o->results_pos = L->tok.start;
  if (accept_p(L, "(")) {
    for (;;) {
      if (!p_result(L, o->results))
        goto bad;
      if (!accept_p(L, ","))
        break;
    }
    if (!expect_p(L, ")", "',' or ')'"))
      goto bad;
  } else if (!p_result(L, o->results)) {
    goto bad;
  }
  if (is_kw(L, "is")) {
    next(L);
    for (;;) {
      if (L->tok.kind != T_IDENT) {
        fail(L, "an operator trait (elementwise, rowwise, reduce_sum, ...)");
        goto bad;
      }
      g_ptr_array_add(o->traits, g_strdup(L->tok.text));
      g_array_append_val(o->trait_pos, L->tok.start);
      next(L);
      if (!accept_p(L, ","))
        break;
    }
  }
  if (is_kw(L, "where")) {
    next(L);
    if ((o->where = p_cond(L, 0)) == NULL)
      goto bad;
  }
  if (accept_p(L, "=")) {
    if ((o->def = p_cond(L, 0)) == NULL)
      goto bad;
  }
  if (!is_stmt_end(L)) {
    fail(L, o->def ? "end of statement" : "'where', '=' or end of statement");
    goto bad;
  }
  o->end = L->tok.start;
  return o;
bad:
  opdecl_free(o);
  return NULL;
}

/* statement: ('lemma' lemma | 'op' opdecl) END, starting in column 1;
 * after an error, the rest of the statement is skipped. */
static void p_statement(lexer *L, GPtrArray *stmts) {
  const char *text = L->s;
  uint32_t col_pos = L->tok.start;
  gboolean at_col1 = col_pos == 0 || text[col_pos - 1] == '\n';
  if (!at_col1 && (is_kw(L, "lemma") || is_kw(L, "op"))) {
    ld_error_at(L->d, col_pos, SC_LEMMA_ERROR_SYNTAX,
                "'%s' must start in column 1 (an indented line continues the previous "
                "statement)",
                L->tok.text);
    L->failed = TRUE;
  } else if (is_kw(L, "lemma")) {
    ld_lemma *l = p_lemma(L);
    if (l) {
      ld_stmt *s = g_new0(ld_stmt, 1);
      s->kind = LD_LEMMA;
      s->lemma = l;
      g_ptr_array_add(stmts, s);
    }
  } else if (is_kw(L, "op")) {
    ld_opdecl *o = p_opdecl(L);
    if (o) {
      ld_stmt *s = g_new0(ld_stmt, 1);
      s->kind = LD_OP;
      s->op = o;
      g_ptr_array_add(stmts, s);
    }
  } else {
    fail(L, "'lemma' or 'op'");
  }
  while (L->tok.kind != T_END && L->tok.kind != T_EOF) {
    L->depth = 0;
    next(L);
  }
}

void ld_parse(ld_diag *d, const char *text, GPtrArray *stmts) {
  lexer L = {0};
  L.d = d;
  L.s = text;
  /* A file may start with indented text: that is an error of its own. */
  next(&L);
  while (L.tok.kind != T_EOF) {
    L.failed = FALSE;
    L.depth = 0;
    if (L.tok.kind == T_END) {
      next(&L);
      continue;
    }
    p_statement(&L, stmts);
  }
  g_clear_pointer(&L.tok.text, g_free);
}

void ld_parse_one(ld_diag *d, const char *text, uint32_t start, GPtrArray *stmts) {
  lexer L = {0};
  L.d = d;
  L.s = text;
  L.pos = start;
  next(&L);
  if (L.tok.kind != T_EOF && L.tok.kind != T_END)
    p_statement(&L, stmts);
  g_clear_pointer(&L.tok.text, g_free);
}
