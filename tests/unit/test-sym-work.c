/* test-sym-work.c — what symbolic sizes cost, pinned as counts of steps
 * (sc_symtab_work), never as time (issue 19).
 *
 * A refresh brings a dim to the epoch's normal form; a floor division or
 * modulo atom is renormalised there with decisions (a division folds when
 * the facts bound it), each a search through the facts.  Chained
 * assumptions with floor divisions (fuzz-sym's slowest inputs, the
 * /sym/assume/refresh-deep family) reached the same atoms from many
 * polynomials, once per polynomial per epoch: the laws pinned here are
 * that an atom is renormalised once per epoch, and the family's counts. */
#include "shardcheck/sym.h"
#include "sym-fixture.h"

#include <glib.h>
#include <string.h>

static sc_sym_work work(const sc_symtab *st) {
  sc_sym_work w;
  sc_symtab_work(st, &w);
  return w;
}

/* D at the epoch's normal form, printed (sc_dim_add refreshes its
 * operands; printing alone does not). */
static char *fresh_text(sc_symtab *st, sc_dim d) {
  return sc_dim_to_string(st, sc_dim_add(st, d, sc_dim_const(0)));
}

/* Two polynomials made before an assumption share the division atom
 * (T*H)/S, which the new epoch renormalises with decisions (S >= 2 bounds
 * nothing about T*H): refreshing the second reuses the first's work. */
static void test_atom_once_per_epoch(void) {
  g_autoptr(sc_symtab) st = new_st();
  sc_dim a = P(st, "T*H/S + 1"), b = P(st, "T*H/S + T");
  assume(st, "S >= 2"); /* a new epoch: a and b are stale */
  sc_sym_work w0 = work(st);
  g_autofree char *pa = fresh_text(st, a);
  sc_sym_work w1 = work(st);
  g_assert_cmpuint(w1.atom_refreshes - w0.atom_refreshes, ==, 1);
  g_assert_cmpuint(w1.ge0_proofs, >, w0.ge0_proofs); /* it decided */
  g_autofree char *pb = fresh_text(st, b);
  sc_sym_work w2 = work(st);
  g_assert_cmpuint(w2.atom_refreshes, ==, w1.atom_refreshes);
  g_assert_cmpuint(w2.ge0_proofs, ==, w1.ge0_proofs);
  g_assert_cmpuint(w2.poly_refreshes - w1.poly_refreshes, ==, 1); /* b itself */
  g_assert_cmpstr(pa, ==, "(H*T)/S+1");
  g_assert_cmpstr(pb, ==, "T+(H*T)/S");
}

/* The next assumption starts a new epoch: the atom is renormalised again
 * (the facts changed), once. */
static void test_atom_again_next_epoch(void) {
  g_autoptr(sc_symtab) st = new_st();
  sc_dim a = P(st, "T*H/S + 1"), b = P(st, "T*H/S + T");
  assume(st, "S >= 2");
  g_free(fresh_text(st, a));
  assume(st, "H <= S - 1"); /* now T*H/S is T*H/S still, H/S would fold */
  sc_sym_work w0 = work(st);
  g_free(fresh_text(st, a));
  g_free(fresh_text(st, b));
  sc_sym_work w1 = work(st);
  g_assert_cmpuint(w1.atom_refreshes - w0.atom_refreshes, ==, 1);
}

/* The harness's walk (fuzz-sym.c): assumptions until one fails, sizes
 * parsed and printed. */
static void run_lines(sc_symtab *st, const char *const *lines, guint n) {
  for (guint i = 0; i < n; i++) {
    g_autoptr(GError) error = NULL;
    if (strstr(lines[i], "==") || strchr(lines[i], '>') || strchr(lines[i], '<')) {
      if (!sc_symtab_assume(st, lines[i], &error))
        return;
      continue;
    }
    sc_dim d;
    if (sc_dim_parse(st, lines[i], &d, &error))
      g_free(fresh_text(st, d));
  }
}

/* fuzz-sym's slowest grown input (tests/fuzz/grown/sym/62d207c5..., its
 * printable lines: 0.88 s in the fuzz build before the per-atom cache).
 * Counts before: 2,109 atoms renormalised and 4,324 searches through the
 * facts in 38 fact updates (55 and 114 per update); after: 304 and 730
 * (8 and 19).  The bounds leave room for a change in what the decisions
 * try, not for a return of the repeat. */
static void test_refresh_deep_family(void) {
  static const char *const lines[] = {
      "S>H/S*T==2/S//S*T==1/S %  4== 0",
      "S/S*N*S+N/S*T==2/S/S*N*S+N*S+T==4614",
      "S=4614",
      "S*S+S*N*S+T==462/S*T==2+S+T==3+S*N*S+141*S+T==4614",
      "S*S+S*N*S+T==461/S*T==2/S+T==3+S*S/N*S+T==46114",
      "S=4614",
      "S*S+S*N*S",
      "S*S+S*35/8/S*N*S+T==462/S*T==2+S+T==3+S*N*S+141*S+T==4614",
  };
  g_autoptr(sc_symtab) st = new_st();
  run_lines(st, lines, G_N_ELEMENTS(lines));
  sc_sym_work w = work(st);
  g_test_message("poly refreshes %" G_GUINT64_FORMAT ", atom refreshes %" G_GUINT64_FORMAT
                 ", ge0 proofs %" G_GUINT64_FORMAT ", facts updates %" G_GUINT64_FORMAT,
                 w.poly_refreshes, w.atom_refreshes, w.ge0_proofs, w.facts_updates);
  g_assert_cmpuint(w.facts_updates, >, 0);
  g_assert_cmpuint(w.atom_refreshes, <=, 10 * w.facts_updates);
  g_assert_cmpuint(w.ge0_proofs, <=, 25 * w.facts_updates);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sym/work/atom-once-per-epoch", test_atom_once_per_epoch);
  g_test_add_func("/sym/work/atom-again-next-epoch", test_atom_again_next_epoch);
  g_test_add_func("/sym/work/refresh-deep-family", test_refresh_deep_family);
  return g_test_run();
}
