/* scan.c — a cheap scan of a lemma file: where each statement starts and
 * which operators each side of a lemma calls, without parsing it (lemma.c
 * defers the parse and check of a file that loaded cleanly before, and
 * loads only the lemmas a check can fire: sc_lemma_set_select).
 *
 * The scan follows the lexer's layout rule (parse.c: a statement starts in
 * column 1; a newline at bracket depth 0 ends it unless the next line that
 * is not blank or a comment is indented), its comments ('#' not glued to a
 * name), strings and punctuation.  A call is a name (or ?VAR) followed by
 * '(' or by a glued '#' (result index).  The scan is only used on files the
 * parser accepted; what it gets wrong could only make a lemma load when it
 * need not, or not load when it could fire (never a false proof: a
 * lemma left out proves nothing) — and tests/unit/test-lemma-select.c
 * compares it with the parser on the whole library. */
#include "lemma/lemma-private.h"

#include <string.h>

void ld_scan_free(gpointer p) {
  ld_scan *s = p;
  if (s == NULL)
    return;
  g_free(s->name);
  g_free(s->class_var);
  g_free(s->class_name);
  g_ptr_array_free(s->lhs, TRUE);
  g_ptr_array_free(s->rev, TRUE);
  g_ptr_array_free(s->all, TRUE);
  g_free(s);
}

static gboolean id_start(char c) { return g_ascii_isalpha(c) || c == '_'; }
static gboolean id_char(char c) { return g_ascii_isalnum(c) || c == '_'; }

/* After a newline at depth 0 (POS at the start of a line): does the
 * statement continue?  As parse.c's continues(). */
static gboolean continues(const char *s, size_t pos) {
  while (s[pos]) {
    size_t p = pos;
    while (s[p] == ' ' || s[p] == '\t' || s[p] == '\r')
      p++;
    if (s[p] == '\n') {
      pos = p + 1;
      continue;
    }
    if (s[p] == '#') {
      const char *nl = strchr(s + p, '\n');
      if (nl == NULL)
        return FALSE;
      pos = (size_t)(nl - s) + 1;
      continue;
    }
    if (s[p] == '\0')
      return FALSE;
    return p > pos;
  }
  return FALSE;
}

/* Is the name ending at Q a call: '(' after blanks, or a glued '#'? */
static gboolean is_call(const char *s, size_t q) {
  if (s[q] == '#')
    return TRUE;
  while (s[q] == ' ' || s[q] == '\t')
    q++;
  return s[q] == '(';
}

enum { R_LHS, R_RHS, R_AFTER }; /* before the arrow, the right side, its clauses */
enum { F_NONE, F_VAR, F_IN, F_CLASS }; /* `for ?f in CLASS`: what comes next */

typedef struct {
  ld_scan *cur;
  gboolean first;  /* the statement's first token is next */
  gboolean named;  /* the lemma's name was read */
  int region, for_state;
} scan_state;

static void on_word(scan_state *st, const char *s, size_t p, size_t q, int depth) {
  ld_scan *cur = st->cur;
  size_t n = q - p;
  if (st->first) {
    st->first = FALSE;
    cur->is_op = n == 2 && strncmp(s + p, "op", 2) == 0;
    cur->is_lemma = n == 5 && strncmp(s + p, "lemma", 5) == 0;
    return;
  }
  if (cur->is_lemma && !st->named) {
    st->named = TRUE;
    cur->name = g_strndup(s + p, n);
    return;
  }
  if (st->region != R_LHS && depth == 0 &&
      ((n == 5 && strncmp(s + p, "where", 5) == 0) ||
       (n == 8 && strncmp(s + p, "requires", 8) == 0) || (n == 3 && strncmp(s + p, "for", 3) == 0))) {
    st->region = R_AFTER;
    st->for_state = s[p] == 'f' ? F_VAR : F_NONE;
    return;
  }
  if (st->for_state == F_IN) {
    st->for_state = n == 2 && strncmp(s + p, "in", 2) == 0 ? F_CLASS : F_NONE;
    return;
  }
  if (st->for_state == F_CLASS) {
    st->for_state = F_NONE;
    cur->class_name = g_strndup(s + p, n);
    return;
  }
  if (!is_call(s, q) || (n == 3 && (strncmp(s + p, "and", 3) == 0 || strncmp(s + p, "not", 3) == 0)) ||
      (n == 2 && strncmp(s + p, "or", 2) == 0) || (n == 7 && strncmp(s + p, "divides", 7) == 0))
    return; /* an operator of conditions before a bracket: `and (...)` */
  char *name = g_strndup(s + p, n);
  if (st->region == R_LHS)
    g_ptr_array_add(cur->lhs, g_strdup(name));
  else if (st->region == R_RHS && cur->both)
    g_ptr_array_add(cur->rev, g_strdup(name));
  g_ptr_array_add(cur->all, name);
}

void ld_scan_text(const char *s, GPtrArray *out) {
  scan_state st = {0};
  int depth = 0;
  size_t pos = 0;
  while (s[pos]) {
    char c = s[pos];
    if (c == ' ' || c == '\t' || c == '\r') {
      pos++;
      continue;
    }
    if (c == '#' && (pos == 0 || !id_char(s[pos - 1]))) {
      const char *nl = strchr(s + pos, '\n');
      pos = nl ? (size_t)(nl - s) : pos + strlen(s + pos);
      continue;
    }
    if (c == '\n') {
      pos++;
      if (depth == 0 && !continues(s, pos))
        st.cur = NULL;
      continue;
    }
    if (st.cur == NULL) {
      if (out->len > 0)
        ((ld_scan *)g_ptr_array_index(out, out->len - 1))->end = (uint32_t)pos;
      ld_scan *n = g_new0(ld_scan, 1);
      n->start = (uint32_t)pos;
      n->lhs = g_ptr_array_new_with_free_func(g_free);
      n->rev = g_ptr_array_new_with_free_func(g_free);
      n->all = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(out, n);
      st = (scan_state){n, TRUE, FALSE, R_LHS, F_NONE};
      depth = 0;
    }
    if (id_start(c)) {
      size_t q = pos;
      for (;;) {
        while (id_char(s[q]))
          q++;
        if (s[q] == '.' && id_char(s[q + 1]))
          q++;
        else
          break;
      }
      on_word(&st, s, pos, q, depth);
      pos = q;
      continue;
    }
    if (c == '?') {
      size_t q = pos + 1;
      while (id_char(s[q]))
        q++;
      st.first = FALSE;
      if (st.for_state == F_VAR) {
        st.for_state = F_IN;
        st.cur->class_var = g_strndup(s + pos + 1, q - pos - 1);
      } else if (q > pos + 1 && is_call(s, q) && !(pos > 0 && s[pos - 1] == '#')) {
        /* (name#?k(...) is a result-index variable, not a call of ?k) */
        char *name = g_strndup(s + pos, q - pos);
        if (st.region == R_LHS)
          g_ptr_array_add(st.cur->lhs, g_strdup(name));
        else if (st.region == R_RHS && st.cur->both)
          g_ptr_array_add(st.cur->rev, g_strdup(name));
        g_ptr_array_add(st.cur->all, name);
      }
      pos = q > pos + 1 ? q : pos + 1;
      continue;
    }
    st.first = FALSE;
    if (g_ascii_isdigit(c)) {
      while (id_char(s[pos]) || (s[pos] == '.' && g_ascii_isdigit(s[pos + 1])))
        pos++;
      continue;
    }
    if (c == '"') {
      pos++;
      while (s[pos] && s[pos] != '"' && s[pos] != '\n') {
        if (s[pos] == '\\' && s[pos + 1] && s[pos + 1] != '\n')
          pos++;
        pos++;
      }
      if (s[pos] == '"')
        pos++;
      continue;
    }
    /* punctuation, longest first as the lexer's table */
    switch (c) {
    case '<':
      if (s[pos + 1] == '=' && s[pos + 2] == '>') {
        if (depth == 0 && st.region == R_LHS) {
          st.cur->both = TRUE;
          st.region = R_RHS;
        }
        pos += 3;
      } else {
        pos += s[pos + 1] == '=' ? 2 : 1;
      }
      break;
    case '=':
      if (s[pos + 1] == '>' && depth == 0 && st.region == R_LHS)
        st.region = R_RHS;
      pos += s[pos + 1] == '>' || s[pos + 1] == '=' ? 2 : 1;
      break;
    case '-':
      pos += s[pos + 1] == '>' ? 2 : 1;
      break;
    case '!':
    case '>':
      pos += s[pos + 1] == '=' ? 2 : 1;
      break;
    case '(':
    case '[':
      depth++;
      pos++;
      break;
    case ')':
    case ']':
      if (depth > 0)
        depth--;
      pos++;
      break;
    default:
      pos++;
    }
  }
  if (out->len > 0)
    ((ld_scan *)g_ptr_array_index(out, out->len - 1))->end = (uint32_t)pos;
}
