/* fuzz-sym.c — libFuzzer harness for symbolic sizes (src/sym/): the size
 * expression parser, assumptions, normal forms and printing.
 *
 * The input is lines.  Symbols S, T, B (>= 1), H (>= 0) and N in [-5, 20]
 * are declared.  A line with a comparison is an assumption
 * (sc_symtab_assume); any other line is a size expression (sc_dim_parse).
 * Checked for every expression that parses, while no normal form passed
 * the size bound: its printed form parses back to the identical normal
 * form (sym.h's round-trip contract), and comparing it with itself and with
 * the previous expression gives no contradiction (a <= b and b < a both
 * YES).  Errors must carry a message.  Any crash, leak or sanitizer report
 * is a finding.  Built by meson with -Dfuzz=enabled (tests/fuzz/meson.build). */
#include "shardcheck/sym.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gboolean has_relop(const char *s) {
  return strstr(s, "==") || strstr(s, "!=") || strchr(s, '<') || strchr(s, '>');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  char *text = g_strndup((const char *)data, size);
  sc_symtab *st = sc_symtab_new();
  if (!sc_symtab_declare(st, "S", TRUE, 1, FALSE, 0, NULL) ||
      !sc_symtab_declare(st, "T", TRUE, 1, FALSE, 0, NULL) ||
      !sc_symtab_declare(st, "B", TRUE, 1, FALSE, 0, NULL) ||
      !sc_symtab_declare(st, "H", FALSE, 0, FALSE, 0, NULL) ||
      !sc_symtab_declare(st, "N", TRUE, -5, TRUE, 20, NULL))
    abort();
  char **lines = g_strsplit(text, "\n", 16);
  sc_dim prev = sc_dim_const(1);
  gboolean failed_assume = FALSE;
  for (char **l = lines; *l && !failed_assume; l++) {
    GError *error = NULL;
    if (has_relop(*l)) {
      if (!sc_symtab_assume(st, *l, &error)) {
        if (error == NULL || error->message[0] == '\0')
          abort();
        g_error_free(error);
        failed_assume = TRUE; /* the symtab is failed input now (sym.h) */
      }
      continue;
    }
    sc_dim d;
    sc_symtab_clear_overflow(st);
    if (!sc_dim_parse(st, *l, &d, &error)) {
      if (error == NULL || error->message[0] == '\0')
        abort();
      g_error_free(error);
      continue;
    }
    if (sc_symtab_too_large(st) || sc_symtab_overflowed(st))
      continue;
    char *printed = sc_dim_to_string(st, d);
    sc_dim again;
    if (!sc_dim_parse(st, printed, &again, &error)) {
      fprintf(stderr, "printed form does not parse: %s -> %s: %s\n", *l, printed,
              error->message);
      abort();
    }
    if (!sc_symtab_too_large(st) && !sc_dim_identical(d, again)) {
      char *p2 = sc_dim_to_string(st, again);
      fprintf(stderr, "round trip differs: %s -> %s -> %s\n", *l, printed, p2);
      abort();
    }
    g_free(printed);
    if (sc_dim_eq(st, d, d) == SC_NO || sc_dim_lt(st, d, d) == SC_YES)
      abort();
    if (sc_dim_le(st, d, prev) == SC_YES && sc_dim_lt(st, prev, d) == SC_YES)
      abort();
    prev = d;
  }
  g_strfreev(lines);
  sc_symtab_free(st);
  g_free(text);
  return 0;
}
