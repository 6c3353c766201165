/* fuzz-expr.c — libFuzzer harness for the expression parser (src/expr/).
 *
 * For every input: parse it; on success print it, re-parse the printed text,
 * and require an sc_expr_equal tree whose printed text is identical (the
 * canonical form is a fixed point); on failure require an SC_EXPR_ERROR_SYNTAX
 * error whose message starts "col N: expected ".  Any crash, leak, sanitizer
 * report or abort() is a finding.
 *
 * Built by meson with -Dfuzz=enabled (clang; tests/fuzz/meson.build) and
 * run by tests/fuzz/run-fuzz.sh, seeded from tests/fuzz/corpus/expr.
 *
 * Embedded NUL bytes end the text, as they would for any C-string caller. */
#include "shardcheck/expr.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = g_strndup((const char *)data, size);
  GError *error = NULL;
  sc_expr *e = sc_expr_parse(text, &error);
  if (e == NULL) {
    if (error == NULL || !g_error_matches(error, SC_EXPR_ERROR, SC_EXPR_ERROR_SYNTAX) ||
        !g_str_has_prefix(error->message, "col ") ||
        strstr(error->message, ": expected ") == NULL ||
        strstr(error->message, ", found ") == NULL)
      abort();
    g_error_free(error);
    g_free(text);
    return 0;
  }
  if (error != NULL)
    abort();
  size_t len = strlen(text);
  if (e->start > e->end || e->end > len)
    abort();
  char *printed = sc_expr_to_string(e);
  sc_expr *again = sc_expr_parse(printed, &error);
  if (again == NULL || !sc_expr_equal(e, again))
    abort();
  char *printed2 = sc_expr_to_string(again);
  if (strcmp(printed, printed2) != 0)
    abort();
  sc_expr *copy = sc_expr_copy(e);
  if (!sc_expr_equal(copy, again))
    abort();
  sc_expr_free(copy);
  g_free(printed2);
  sc_expr_free(again);
  g_free(printed);
  sc_expr_free(e);
  g_free(text);
  return 0;
}
