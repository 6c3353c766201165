/* expr.c — the expression language: lexer, recursive-descent parser,
 * canonical printer, structural equality, deep copy and constructors.
 *
 * Invariants:
 *  - Every node the parser builds carries the byte span [start, end) of its
 *    source text; a CALL or LIST spans from its first token to its closing
 *    bracket, a keyword item's child spans its value only.
 *  - A CALL or LIST with n_args > 0 has both args and keys arrays of n_args
 *    entries (keys are all NULL in a LIST); with n_args == 0 both are NULL.
 *  - The parser never nests more than SC_EXPR_MAX_DEPTH calls and lists, so
 *    its recursion (and that of free/equal/copy/print on parsed trees) is
 *    bounded whatever the input.
 *  - Error messages are "col N: expected X, found Y", N the 1-based byte
 *    column of the offending token (end of input is column strlen + 1).
 *  - The printer's output re-parses to an sc_expr_equal tree for every tree
 *    the parser builds (and every constructed tree whose names are valid and
 *    are not the bare words inf / nan). */
#define G_LOG_DOMAIN "sc-expr"

#include "shardcheck/expr.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(sc-expr-error-quark, sc_expr_error)

/* ---------------------------------------------------------------------------
 * Tokens
 * ------------------------------------------------------------------------- */

/* Token kinds and how an error message names them (one table, STYLE.md 7). */
#define SC_EXPR_TOKENS(X)            \
  X(TOK_EOF, "end of input")         \
  X(TOK_BAD, "character")            \
  X(TOK_NAME, "name")                \
  X(TOK_VAR, "variable")             \
  X(TOK_INT, "integer")              \
  X(TOK_FLOAT, "float")              \
  X(TOK_STRING, "string")            \
  X(TOK_LPAREN, "'('")               \
  X(TOK_RPAREN, "')'")               \
  X(TOK_LBRACKET, "'['")             \
  X(TOK_RBRACKET, "']'")             \
  X(TOK_COMMA, "','")                \
  X(TOK_EQUALS, "'='")

typedef enum {
#define SC_X_TOK(sym, word) sym,
  SC_EXPR_TOKENS(SC_X_TOK)
#undef SC_X_TOK
} tok_kind;

static const char *const tok_words[] = {
#define SC_X_TOK(sym, word) word,
  SC_EXPR_TOKENS(SC_X_TOK)
#undef SC_X_TOK
};

/* Longest piece of source text quoted in an error message. */
#define QUOTE_MAX 40

typedef struct {
  const char *src;
  size_t len;
  size_t pos;        /* next byte to lex */
  /* the current token */
  tok_kind kind;
  size_t start, end; /* its span */
  int64_t ival;      /* TOK_INT */
  double fval;       /* TOK_FLOAT */
  GString *sbuf;     /* TOK_STRING: unescaped contents */
  unsigned depth;    /* calls and lists currently open */
  GError **error;
} parser;

/* Raise the one kind of error this module has, at byte offset AT. */
G_GNUC_PRINTF(4, 5)
static void fail(parser *p, size_t at, const char *expected, const char *found_fmt,
                 ...) {
  va_list ap;
  va_start(ap, found_fmt);
  g_autofree char *found = g_strdup_vprintf(found_fmt, ap);
  va_end(ap);
  /* Quoted source text may hold any bytes; messages must be UTF-8. */
  g_autofree char *valid = g_utf8_make_valid(found, -1);
  g_set_error(p->error, SC_EXPR_ERROR, SC_EXPR_ERROR_SYNTAX,
              "col %lu: expected %s, found %s", (unsigned long)at + 1, expected,
              valid);
}

/* The source text [start, end), truncated for messages; caller frees. */
static char *quote_source(const parser *p, size_t start, size_t end) {
  if (end - start <= QUOTE_MAX)
    return g_strndup(p->src + start, end - start);
  g_autofree char *head = g_strndup(p->src + start, QUOTE_MAX);
  return g_strconcat(head, "...", NULL);
}

/* How a message names the byte at POS. */
static char *describe_char(const parser *p, size_t pos) {
  if (pos >= p->len)
    return g_strdup("end of input");
  unsigned char c = (unsigned char)p->src[pos];
  if (c >= 0x20 && c < 0x7f)
    return g_strdup_printf("character '%c'", c);
  return g_strdup_printf("byte 0x%02x", c);
}

/* How a message names the current token. */
static char *describe_token(const parser *p) {
  switch (p->kind) {
  case TOK_BAD:
    return describe_char(p, p->start);
  case TOK_NAME:
  case TOK_INT:
  case TOK_FLOAT:
  case TOK_STRING: {
    g_autofree char *text = quote_source(p, p->start, p->end);
    if (p->kind == TOK_NAME)
      return g_strdup_printf("name '%s'", text);
    return g_strdup_printf("%s %s", tok_words[p->kind], text);
  }
  case TOK_VAR: {
    g_autofree char *text = quote_source(p, p->start, p->end);
    return g_strdup_printf("variable %s", text);
  }
  default:
    return g_strdup(tok_words[p->kind]);
  }
}

/* Error at the current token: "expected EXPECTED, found <token>". */
static void fail_token(parser *p, const char *expected) {
  g_autofree char *found = describe_token(p);
  fail(p, p->start, expected, "%s", found);
}

static gboolean is_ident_start(char c) {
  return g_ascii_isalpha(c) || c == '_';
}

static gboolean is_ident_char(char c) {
  return g_ascii_isalnum(c) || c == '_';
}

static gboolean word_is(const char *s, size_t n, const char *word) {
  return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* Lex the identifier starting at p->pos; returns its end. */
static size_t scan_ident(const parser *p, size_t pos) {
  while (pos < p->len && is_ident_char(p->src[pos]))
    pos++;
  return pos;
}

/* NAME := IDENT { "." SEGMENT }, SEGMENT := [A-Za-z0-9_]+
 * (segments after a dot may start with a digit: "layers.0.weight", as
 * PyTorch names parameters). */
static gboolean lex_name(parser *p) {
  size_t pos = scan_ident(p, p->pos);
  while (pos < p->len && p->src[pos] == '.') {
    if (pos + 1 >= p->len || !is_ident_char(p->src[pos + 1])) {
      g_autofree char *found = describe_char(p, pos + 1);
      fail(p, pos + 1, "identifier after '.'", "%s", found);
      return FALSE;
    }
    pos = scan_ident(p, pos + 1);
  }
  p->kind = TOK_NAME;
  p->end = pos;
  return TRUE;
}

/* VAR := "?" IDENT   (no space after '?') */
static gboolean lex_var(parser *p) {
  size_t pos = p->pos + 1;
  if (pos >= p->len || !is_ident_start(p->src[pos])) {
    g_autofree char *found = describe_char(p, pos);
    fail(p, pos, "variable name after '?'", "%s", found);
    return FALSE;
  }
  p->kind = TOK_VAR;
  p->end = scan_ident(p, pos);
  return TRUE;
}

/* STRING := '"' { any byte but '"' and '\' | '\"' | '\\' } '"' */
static gboolean lex_string(parser *p) {
  size_t pos = p->pos + 1;
  g_string_truncate(p->sbuf, 0);
  for (;;) {
    if (pos >= p->len) {
      fail(p, pos, "closing '\"'", "end of input");
      return FALSE;
    }
    char c = p->src[pos];
    if (c == '"')
      break;
    if (c == '\\') {
      char next = pos + 1 < p->len ? p->src[pos + 1] : '\0';
      if (next != '"' && next != '\\') {
        g_autofree char *found = describe_char(p, pos + 1);
        fail(p, pos + 1, "'\"' or '\\' after '\\'", "%s", found);
        return FALSE;
      }
      g_string_append_c(p->sbuf, next);
      pos += 2;
      continue;
    }
    g_string_append_c(p->sbuf, c);
    pos++;
  }
  p->kind = TOK_STRING;
  p->end = pos + 1;
  return TRUE;
}

/* Decimal digits [start, end) as an int64, negated if NEG; FALSE on
 * overflow.  The limit is 2^63 - 1, or 2^63 when negative. */
static gboolean digits_to_int64(const char *s, size_t start, size_t end,
                                gboolean neg, int64_t *out) {
  uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
  uint64_t acc = 0;
  for (size_t i = start; i < end; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (acc > (limit - d) / 10u)
      return FALSE;
    acc = acc * 10u + d;
  }
  if (!neg)
    *out = (int64_t)acc;
  else if (acc == (uint64_t)INT64_MAX + 1u)
    *out = INT64_MIN;
  else
    *out = -(int64_t)acc;
  return TRUE;
}

/* INT   := [ "-" ] DIGITS
 * FLOAT := [ "-" ] DIGITS [ "." DIGITS ] [ ("e"|"E") [ "+"|"-" ] DIGITS ]
 *          (with a '.' or an exponent) | "-inf"
 * Called at a digit, or at a '-'. */
static gboolean lex_number(parser *p) {
  size_t pos = p->pos;
  gboolean neg = FALSE;
  if (p->src[pos] == '-') {
    neg = TRUE;
    pos++;
    if (pos < p->len && is_ident_start(p->src[pos])) {
      size_t word_end = scan_ident(p, pos);
      if (word_is(p->src + pos, word_end - pos, "inf") &&
          (word_end >= p->len || p->src[word_end] != '.')) {
        p->kind = TOK_FLOAT;
        p->fval = -INFINITY;
        p->end = word_end;
        return TRUE;
      }
      while (word_end + 1 < p->len && p->src[word_end] == '.' &&
             is_ident_start(p->src[word_end + 1]))
        word_end = scan_ident(p, word_end + 1);
      g_autofree char *word = quote_source(p, pos, word_end);
      fail(p, pos, "digit or 'inf' after '-'", "name '%s'", word);
      return FALSE;
    }
    if (pos >= p->len || !g_ascii_isdigit(p->src[pos])) {
      g_autofree char *found = describe_char(p, pos);
      fail(p, pos, "digit or 'inf' after '-'", "%s", found);
      return FALSE;
    }
  }
  size_t digits_start = pos;
  while (pos < p->len && g_ascii_isdigit(p->src[pos]))
    pos++;
  size_t digits_end = pos;
  gboolean is_float = FALSE;
  if (pos < p->len && p->src[pos] == '.') {
    is_float = TRUE;
    pos++;
    if (pos >= p->len || !g_ascii_isdigit(p->src[pos])) {
      g_autofree char *found = describe_char(p, pos);
      fail(p, pos, "digit after '.'", "%s", found);
      return FALSE;
    }
    while (pos < p->len && g_ascii_isdigit(p->src[pos]))
      pos++;
  }
  if (pos < p->len && (p->src[pos] == 'e' || p->src[pos] == 'E')) {
    is_float = TRUE;
    pos++;
    if (pos < p->len && (p->src[pos] == '+' || p->src[pos] == '-'))
      pos++;
    if (pos >= p->len || !g_ascii_isdigit(p->src[pos])) {
      g_autofree char *found = describe_char(p, pos);
      fail(p, pos, "digit in exponent", "%s", found);
      return FALSE;
    }
    while (pos < p->len && g_ascii_isdigit(p->src[pos]))
      pos++;
  }
  p->end = pos;
  if (!is_float) {
    if (!digits_to_int64(p->src, digits_start, digits_end, neg, &p->ival)) {
      g_autofree char *text = quote_source(p, p->start, p->end);
      fail(p, p->start, "integer in int64 range", "%s", text);
      return FALSE;
    }
    p->kind = TOK_INT;
    return TRUE;
  }
  g_autofree char *text = g_strndup(p->src + p->start, p->end - p->start);
  char *stop = NULL;
  double v = g_ascii_strtod(text, &stop);
  if (stop != text + strlen(text) || isinf(v)) {
    g_autofree char *quoted = quote_source(p, p->start, p->end);
    fail(p, p->start, "float in double range", "%s", quoted);
    return FALSE;
  }
  /* An underflow (1e-400) rounds to zero or a subnormal, as Python does. */
  p->kind = TOK_FLOAT;
  p->fval = v;
  return TRUE;
}

/* Consume the current token and lex the next one. */
static gboolean advance(parser *p) {
  while (p->pos < p->len && g_ascii_isspace(p->src[p->pos]))
    p->pos++;
  p->start = p->pos;
  if (p->pos >= p->len) {
    p->kind = TOK_EOF;
    p->end = p->pos;
    return TRUE;
  }
  char c = p->src[p->pos];
  gboolean ok = TRUE;
  p->end = p->pos + 1;
  switch (c) {
  case '(': p->kind = TOK_LPAREN; break;
  case ')': p->kind = TOK_RPAREN; break;
  case '[': p->kind = TOK_LBRACKET; break;
  case ']': p->kind = TOK_RBRACKET; break;
  case ',': p->kind = TOK_COMMA; break;
  case '=': p->kind = TOK_EQUALS; break;
  case '"': ok = lex_string(p); break;
  case '?': ok = lex_var(p); break;
  default:
    if (c == '-' || g_ascii_isdigit(c))
      ok = lex_number(p);
    else if (is_ident_start(c))
      ok = lex_name(p);
    else
      p->kind = TOK_BAD; /* reported by the parser, which knows the context */
    break;
  }
  p->pos = p->end;
  return ok;
}

/* ---------------------------------------------------------------------------
 * Parser
 * ------------------------------------------------------------------------- */

static sc_expr *parse_expr(parser *p);

static sc_expr *new_node(sc_expr_kind kind) {
  sc_expr *e = g_new0(sc_expr, 1);
  e->kind = kind;
  return e;
}

/* Open one more call or list at the current token, or refuse to. */
static gboolean enter(parser *p) {
  if (p->depth >= SC_EXPR_MAX_DEPTH) {
    g_autofree char *found = describe_token(p);
    fail(p, p->start, "at most " G_STRINGIFY(SC_EXPR_MAX_DEPTH)
         " nested calls and lists", "%s opening one more", found);
    return FALSE;
  }
  p->depth++;
  return TRUE;
}

/* Can the current token begin an expression other than a NAME? */
static gboolean starts_non_name_expr(const parser *p) {
  return p->kind == TOK_VAR || p->kind == TOK_INT || p->kind == TOK_FLOAT ||
         p->kind == TOK_STRING || p->kind == TOK_LBRACKET;
}

static sc_expr *parse_named(parser *p, size_t start, size_t end);

/* item := expr | KEY "=" expr
 * Appends the item to CALL; SEEN holds the keywords given so far (borrowed
 * from CALL's keys) and *HAD_KEYWORD whether one was. */
static gboolean parse_item(parser *p, sc_expr *call, GHashTable *seen,
                           gboolean *had_keyword) {
  if (p->kind != TOK_NAME) {
    if (*had_keyword && starts_non_name_expr(p)) {
      g_autofree char *found = describe_token(p);
      fail(p, p->start, "keyword item after a keyword item", "positional %s",
           found);
      return FALSE;
    }
    sc_expr *value = parse_expr(p);
    if (value == NULL)
      return FALSE;
    sc_expr_add_arg(call, NULL, value);
    return TRUE;
  }
  size_t name_start = p->start, name_end = p->end;
  if (!advance(p))
    return FALSE;
  if (p->kind != TOK_EQUALS) {
    if (*had_keyword) {
      g_autofree char *quoted = quote_source(p, name_start, name_end);
      fail(p, name_start, "keyword item after a keyword item",
           "positional name '%s'", quoted);
      return FALSE;
    }
    sc_expr *value = parse_named(p, name_start, name_end);
    if (value == NULL)
      return FALSE;
    sc_expr_add_arg(call, NULL, value);
    return TRUE;
  }
  const char *key = p->src + name_start;
  size_t key_len = name_end - name_start;
  if (memchr(key, '.', key_len) != NULL) {
    g_autofree char *quoted = quote_source(p, name_start, name_end);
    fail(p, name_start, "plain identifier as keyword", "name '%s'", quoted);
    return FALSE;
  }
  g_autofree char *k = g_strndup(key, key_len);
  if (g_hash_table_contains(seen, k)) {
    fail(p, name_start, "a keyword not given before in this call",
         "duplicate keyword '%s'", k);
    return FALSE;
  }
  if (!advance(p))
    return FALSE;
  sc_expr *value = parse_expr(p);
  if (value == NULL)
    return FALSE;
  sc_expr_add_arg(call, k, value);
  g_hash_table_add(seen, call->keys[call->n_args - 1]);
  *had_keyword = TRUE;
  return TRUE;
}

/* call := FUNC "(" [ item { "," item } ] ")"
 * FUNC [start, end) has been consumed; the current token is '('. */
static sc_expr *parse_call(parser *p, size_t start, size_t end) {
  if (!enter(p))
    return NULL;
  sc_expr *e = new_node(SC_EXPR_CALL);
  e->text = g_strndup(p->src + start, end - start);
  e->start = (uint32_t)start;
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  gboolean had_keyword = FALSE;
  if (!advance(p))
    goto fail;
  if (p->kind != TOK_RPAREN) {
    for (;;) {
      if (!parse_item(p, e, seen, &had_keyword))
        goto fail;
      if (p->kind == TOK_RPAREN)
        break;
      if (p->kind != TOK_COMMA) {
        fail_token(p, "')' or ','");
        goto fail;
      }
      if (!advance(p))
        goto fail;
    }
  }
  e->end = (uint32_t)p->end;
  g_hash_table_unref(seen);
  p->depth--;
  if (!advance(p)) {
    sc_expr_free(e);
    return NULL;
  }
  return e;
fail:
  g_hash_table_unref(seen);
  p->depth--;
  sc_expr_free(e);
  return NULL;
}

/* named := call | NAME | "inf" | "nan"
 * The NAME token [start, end) has been consumed; the current token follows.
 * A name followed by '(' is a CALL; the bare words inf and nan are FLOATs. */
static sc_expr *parse_named(parser *p, size_t start, size_t end) {
  if (p->kind == TOK_LPAREN)
    return parse_call(p, start, end);
  const char *text = p->src + start;
  size_t n = end - start;
  sc_expr *e;
  if (word_is(text, n, "inf") || word_is(text, n, "nan")) {
    e = new_node(SC_EXPR_FLOAT);
    e->fval = text[0] == 'i' ? INFINITY : NAN;
  } else {
    e = new_node(SC_EXPR_NAME);
    e->text = g_strndup(text, n);
  }
  e->start = (uint32_t)start;
  e->end = (uint32_t)end;
  return e;
}

/* list := "[" [ expr { "," expr } ] "]"   (current token is '[') */
static sc_expr *parse_list(parser *p) {
  if (!enter(p))
    return NULL;
  sc_expr *e = new_node(SC_EXPR_LIST);
  e->start = (uint32_t)p->start;
  if (!advance(p))
    goto fail;
  if (p->kind != TOK_RBRACKET) {
    for (;;) {
      sc_expr *item = parse_expr(p);
      if (item == NULL)
        goto fail;
      sc_expr_add_arg(e, NULL, item);
      if (p->kind == TOK_RBRACKET)
        break;
      if (p->kind != TOK_COMMA) {
        fail_token(p, "']' or ','");
        goto fail;
      }
      if (!advance(p))
        goto fail;
    }
  }
  e->end = (uint32_t)p->end;
  p->depth--;
  if (!advance(p)) {
    sc_expr_free(e);
    return NULL;
  }
  return e;
fail:
  p->depth--;
  sc_expr_free(e);
  return NULL;
}

/* expr := NAME | "?" IDENT | FUNC "(" [ item { "," item } ] ")"
 *       | INT | FLOAT | STRING | "[" [ expr { "," expr } ] "]" */
static sc_expr *parse_expr(parser *p) {
  sc_expr *e = NULL;
  size_t start = p->start, end = p->end;
  switch (p->kind) {
  case TOK_NAME:
    if (!advance(p))
      return NULL;
    return parse_named(p, start, end);
  case TOK_LBRACKET:
    return parse_list(p);
  case TOK_VAR:
    e = new_node(SC_EXPR_VAR);
    e->text = g_strndup(p->src + start + 1, end - start - 1);
    break;
  case TOK_INT:
    e = new_node(SC_EXPR_INT);
    e->ival = p->ival;
    break;
  case TOK_FLOAT:
    e = new_node(SC_EXPR_FLOAT);
    e->fval = p->fval;
    break;
  case TOK_STRING:
    e = new_node(SC_EXPR_STRING);
    e->text = g_strndup(p->sbuf->str, p->sbuf->len);
    break;
  default:
    fail_token(p, "expression");
    return NULL;
  }
  e->start = (uint32_t)start;
  e->end = (uint32_t)end;
  if (!advance(p)) {
    sc_expr_free(e);
    return NULL;
  }
  return e;
}

/* input := expr EOF */
sc_expr *sc_expr_parse(const char *text, GError **error) {
  g_return_val_if_fail(text != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  parser p = {0};
  p.src = text;
  p.len = strlen(text);
  p.error = error;
  if (p.len >= UINT32_MAX) {
    /* spans are 32-bit */
    fail(&p, 0, "input shorter than 4 GiB", "%lu bytes", (unsigned long)p.len);
    return NULL;
  }
  p.sbuf = g_string_new(NULL);
  sc_expr *e = NULL;
  if (advance(&p)) {
    e = parse_expr(&p);
    if (e != NULL && p.kind != TOK_EOF) {
      fail_token(&p, "end of input");
      g_clear_pointer(&e, sc_expr_free);
    }
  }
  g_string_free(p.sbuf, TRUE);
  return e;
}

/* ---------------------------------------------------------------------------
 * Trees: free, constructors, lookup
 * ------------------------------------------------------------------------- */

void sc_expr_free(sc_expr *e) {
  if (e == NULL)
    return;
  for (uint32_t i = 0; i < e->n_args; i++) {
    sc_expr_free(e->args[i]);
    if (e->keys != NULL)
      g_free(e->keys[i]);
  }
  g_free(e->args);
  g_free(e->keys);
  g_free(e->text);
  g_free(e);
}

static sc_expr *new_text_node(sc_expr_kind kind, const char *text) {
  sc_expr *e = new_node(kind);
  e->text = g_strdup(text);
  return e;
}

sc_expr *sc_expr_new_name(const char *name) {
  g_return_val_if_fail(name != NULL, NULL);
  return new_text_node(SC_EXPR_NAME, name);
}

sc_expr *sc_expr_new_var(const char *name) {
  g_return_val_if_fail(name != NULL, NULL);
  return new_text_node(SC_EXPR_VAR, name);
}

sc_expr *sc_expr_new_int(int64_t v) {
  sc_expr *e = new_node(SC_EXPR_INT);
  e->ival = v;
  return e;
}

sc_expr *sc_expr_new_float(double v) {
  sc_expr *e = new_node(SC_EXPR_FLOAT);
  e->fval = v;
  return e;
}

sc_expr *sc_expr_new_string(const char *s) {
  g_return_val_if_fail(s != NULL, NULL);
  return new_text_node(SC_EXPR_STRING, s);
}

sc_expr *sc_expr_new_call(const char *func) {
  g_return_val_if_fail(func != NULL, NULL);
  return new_text_node(SC_EXPR_CALL, func);
}

sc_expr *sc_expr_new_list(void) {
  return new_node(SC_EXPR_LIST);
}

/* Arrays grow by one: callers may have built args/keys by hand with exactly
 * n_args entries, so no hidden capacity is assumed.  On a contract violation
 * the child is not taken. */
void sc_expr_add_arg(sc_expr *call, const char *key, sc_expr *child) {
  g_return_if_fail(call != NULL && child != NULL);
  g_return_if_fail(call->kind == SC_EXPR_CALL ||
                   (call->kind == SC_EXPR_LIST && key == NULL));
  g_return_if_fail(call->n_args < UINT32_MAX);
  size_t n = call->n_args;
  call->args = g_renew(sc_expr *, call->args, n + 1);
  call->keys = g_renew(char *, call->keys, n + 1);
  call->args[n] = child;
  call->keys[n] = g_strdup(key);
  call->n_args++;
}

const sc_expr *sc_expr_get_kwarg(const sc_expr *call, const char *key) {
  g_return_val_if_fail(call != NULL && key != NULL, NULL);
  if (call->kind != SC_EXPR_CALL || call->keys == NULL)
    return NULL;
  for (uint32_t i = 0; i < call->n_args; i++)
    if (call->keys[i] != NULL && strcmp(call->keys[i], key) == 0)
      return call->args[i];
  return NULL;
}

/* ---------------------------------------------------------------------------
 * Equality and copy
 * ------------------------------------------------------------------------- */

/* Floats are equal when both are NaN, or when they are == with the same
 * sign (so 0.0 and -0.0 differ: the printer keeps the sign). */
static gboolean float_same(double a, double b) {
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b);
  return a == b && !signbit(a) == !signbit(b);
}

gboolean sc_expr_equal(const sc_expr *a, const sc_expr *b) {
  if (a == b)
    return TRUE;
  if (a == NULL || b == NULL || a->kind != b->kind)
    return FALSE;
  switch (a->kind) {
  case SC_EXPR_INT:
    return a->ival == b->ival;
  case SC_EXPR_FLOAT:
    return float_same(a->fval, b->fval);
  case SC_EXPR_NAME:
  case SC_EXPR_VAR:
  case SC_EXPR_STRING:
    return g_strcmp0(a->text, b->text) == 0;
  case SC_EXPR_CALL:
    if (g_strcmp0(a->text, b->text) != 0)
      return FALSE;
    break;
  case SC_EXPR_LIST:
    break;
  default:
    return FALSE;
  }
  if (a->n_args != b->n_args)
    return FALSE;
  for (uint32_t i = 0; i < a->n_args; i++) {
    const char *ka = a->keys != NULL ? a->keys[i] : NULL;
    const char *kb = b->keys != NULL ? b->keys[i] : NULL;
    if (g_strcmp0(ka, kb) != 0 || !sc_expr_equal(a->args[i], b->args[i]))
      return FALSE;
  }
  return TRUE;
}

sc_expr *sc_expr_copy(const sc_expr *e) {
  if (e == NULL)
    return NULL;
  sc_expr *c = new_node(e->kind);
  c->text = g_strdup(e->text);
  c->ival = e->ival;
  c->fval = e->fval;
  c->start = e->start;
  c->end = e->end;
  if (e->n_args > 0) {
    c->args = g_new(sc_expr *, e->n_args);
    c->keys = g_new0(char *, e->n_args);
    for (uint32_t i = 0; i < e->n_args; i++) {
      c->args[i] = sc_expr_copy(e->args[i]);
      if (e->keys != NULL)
        c->keys[i] = g_strdup(e->keys[i]);
    }
    c->n_args = e->n_args;
  }
  return c;
}

/* ---------------------------------------------------------------------------
 * Printer
 * ------------------------------------------------------------------------- */

/* The shortest decimal that reads back as V, laid out as Python's repr()
 * does (fixed notation for exponents -4..15, else d.ddde+XX), always with a
 * '.' or an exponent so that it re-parses as a FLOAT: 0.1, 1.0, 1e-05,
 * 1e+16, -0.0, inf, -inf, nan.  Precision 17 ("%.17g") always round-trips;
 * shorter ones are tried first. */
static void append_double(GString *out, double v) {
  if (isnan(v)) {
    g_string_append(out, "nan");
    return;
  }
  if (isinf(v)) {
    g_string_append(out, v > 0 ? "inf" : "-inf");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int prec = 0; prec <= 16; prec++) {
    char fmt[8];
    g_snprintf(fmt, sizeof fmt, "%%.%de", prec);
    g_ascii_formatd(buf, sizeof buf, fmt, v);
    if (prec == 16 || g_ascii_strtod(buf, NULL) == v)
      break;
  }
  /* buf is [-]d[.ddd]e(+|-)XX: split it into digits and exponent. */
  const char *s = buf;
  gboolean neg = *s == '-';
  if (neg)
    s++;
  char digits[24];
  size_t nd = 0;
  for (; *s != 'e' && *s != '\0'; s++)
    if (g_ascii_isdigit(*s) && nd < sizeof digits - 1)
      digits[nd++] = *s;
  digits[nd] = '\0';
  long exp10 = *s == 'e' ? strtol(s + 1, NULL, 10) : 0;
  while (nd > 1 && digits[nd - 1] == '0')
    digits[--nd] = '\0';
  if (neg)
    g_string_append_c(out, '-');
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      g_string_append(out, "0.");
      for (long i = 0; i < -exp10 - 1; i++)
        g_string_append_c(out, '0');
      g_string_append(out, digits);
    } else {
      size_t int_len = (size_t)exp10 + 1;
      if (nd <= int_len) {
        g_string_append(out, digits);
        for (size_t i = nd; i < int_len; i++)
          g_string_append_c(out, '0');
        g_string_append(out, ".0");
      } else {
        g_string_append_len(out, digits, (gssize)int_len);
        g_string_append_c(out, '.');
        g_string_append(out, digits + int_len);
      }
    }
  } else {
    g_string_append_c(out, digits[0]);
    if (nd > 1) {
      g_string_append_c(out, '.');
      g_string_append(out, digits + 1);
    }
    g_string_append_printf(out, "e%c%02ld", exp10 < 0 ? '-' : '+',
                           exp10 < 0 ? -exp10 : exp10);
  }
}

static void append_string(GString *out, const char *s) {
  g_string_append_c(out, '"');
  for (; *s != '\0'; s++) {
    if (*s == '"' || *s == '\\')
      g_string_append_c(out, '\\');
    g_string_append_c(out, *s);
  }
  g_string_append_c(out, '"');
}

void sc_expr_append(GString *out, const sc_expr *e) {
  g_return_if_fail(out != NULL && e != NULL);
  switch (e->kind) {
  case SC_EXPR_NAME:
    g_string_append(out, e->text);
    return;
  case SC_EXPR_VAR:
    g_string_append_c(out, '?');
    g_string_append(out, e->text);
    return;
  case SC_EXPR_INT:
    g_string_append_printf(out, "%" G_GINT64_FORMAT, e->ival);
    return;
  case SC_EXPR_FLOAT:
    append_double(out, e->fval);
    return;
  case SC_EXPR_STRING:
    append_string(out, e->text);
    return;
  case SC_EXPR_CALL:
    g_string_append(out, e->text);
    g_string_append_c(out, '(');
    break;
  case SC_EXPR_LIST:
    g_string_append_c(out, '[');
    break;
  default:
    g_return_if_reached();
  }
  for (uint32_t i = 0; i < e->n_args; i++) {
    if (i > 0)
      g_string_append(out, ", ");
    if (e->keys != NULL && e->keys[i] != NULL) {
      g_string_append(out, e->keys[i]);
      g_string_append_c(out, '=');
    }
    sc_expr_append(out, e->args[i]);
  }
  g_string_append_c(out, e->kind == SC_EXPR_CALL ? ')' : ']');
}

char *sc_expr_to_string(const sc_expr *e) {
  g_return_val_if_fail(e != NULL, NULL);
  GString *out = g_string_new(NULL);
  sc_expr_append(out, e);
  return g_string_free(out, FALSE);
}
