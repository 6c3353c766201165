/* smt.h — the C face of shardcheck's only C++ file, a bridge to cvc5.
 *
 * cvc5 decides integer side conditions that the normal form in sym.c cannot
 * (symbolic-sizes issue).  Everything outside src/smt/ is C and sees only
 * this header.  For now it exposes the solver's version and a self-test that
 * proves the bridge links and answers. */
#ifndef SC_SMT_H
#define SC_SMT_H

#ifdef __cplusplus
extern "C" {
#endif

/* cvc5's version string (static storage). */
const char *sc_smt_version(void);

/* Asks cvc5 whether x > 0 and x < 0 can hold together over the integers;
 * returns 1 when cvc5 answers unsat (as it must), 0 otherwise. */
int sc_smt_selftest(void);

#ifdef __cplusplus
}
#endif

#endif
