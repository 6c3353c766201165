/* sym-fixture.h — shared by the unit tests of the symbolic sizes module
 * (test-sym.c, test-sym-random.c): the symtab they work in and the two
 * calls that must succeed (a parse, an assumption), failing the test with
 * the text otherwise.
 *
 * Ownership: new_st returns a new symtab (sc_symtab_free, or
 * g_autoptr(sc_symtab)); the dims P returns borrow from ST. */
#ifndef SC_TEST_SYM_FIXTURE_H
#define SC_TEST_SYM_FIXTURE_H

#include "shardcheck/sym.h"

#include <glib.h>

/* S, T, B: sizes >= 1; H: size >= 0; N: may be negative; r1.u0: per-rank. */
static inline sc_symtab *new_st(void) {
  sc_symtab *st = sc_symtab_new();
  g_assert_true(sc_symtab_declare(st, "S", TRUE, 1, FALSE, 0, NULL));
  g_assert_true(sc_symtab_declare(st, "T", TRUE, 1, FALSE, 0, NULL));
  g_assert_true(sc_symtab_declare(st, "B", TRUE, 1, FALSE, 0, NULL));
  g_assert_true(sc_symtab_declare(st, "H", FALSE, 0, FALSE, 0, NULL));
  g_assert_true(sc_symtab_declare(st, "N", TRUE, -5, TRUE, 20, NULL));
  g_assert_true(sc_symtab_declare(st, "r1.u0", FALSE, 0, FALSE, 0, NULL));
  return st;
}

static inline sc_dim P(sc_symtab *st, const char *text) {
  g_autoptr(GError) error = NULL;
  sc_dim d = sc_dim_const(0);
  if (!sc_dim_parse(st, text, &d, &error))
    g_error("parse of '%s' failed: %s", text, error->message);
  return d;
}

static inline void assume(sc_symtab *st, const char *text) {
  g_autoptr(GError) error = NULL;
  if (!sc_symtab_assume(st, text, &error))
    g_error("assume '%s' failed: %s", text, error->message);
}

#endif
