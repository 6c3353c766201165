/* smt.h — the C face of shardcheck's only C++ file, a bridge to cvc5.
 *
 * cvc5 decides the integer side conditions that the normal form of sym.c
 * leaves UNKNOWN.  It is plugged into a symtab as its oracle
 * (sc_symtab_set_oracle, see sym.h): sym never links cvc5, and everything
 * outside src/smt/ is C and sees only this header.
 *
 * A query (sc_sym_query) is encoded as it stands: one integer constant per
 * variable with its bounds, the context's clauses as disjunctions of
 * literals, polynomials as sums of products (QF_LIA when every term has
 * degree <= 1, else QF_NIA; "p % k == 0" as (mod p k) = 0 with k >= 1,
 * which is floor modulo for k > 0).  Entailment is unsatisfiability of the
 * negation:
 *   - YES  when context & !goal is unsat and the context alone is sat;
 *   - NO   when context & goal is unsat and the context is sat (shown by a
 *          model of context & !goal, or by a check of its own);
 *   - UNKNOWN otherwise: both sat, a limit hit, an inconsistent context,
 *          an invalid query, or any cvc5 exception (none crosses into C).
 * UNKNOWN is never YES.
 *
 * Limits: every query has a wall-time budget (tlimit_ms, shared by its up
 * to three checks, each given cvc5's tlimit-per of what remains) and each
 * check a cvc5 resource limit (rlimit-per, deterministic: the same query
 * gets the same answer on any load).  Defaults SC_SMT_DEFAULT_TLIMIT_MS and
 * SC_SMT_DEFAULT_RLIMIT, overridden by the environment variables
 * SC_SMT_TLIMIT_MS and SC_SMT_RLIMIT when sc_smt_new runs, or by
 * sc_smt_set_limits.  A user that wants answers independent of the load
 * (`lemmas prove`) sets a wall-time budget far above what the resource
 * limit allows (a safety net only) and watches stats.time_hits: an answer
 * made UNKNOWN by the wall-time limit is counted there.
 *
 * Ownership: sc_smt_new returns an object the caller frees with
 * sc_smt_free, after every symtab it was attached to (a symtab borrows it).
 * Queries are borrowed for one call.  Strings returned are static or owned
 * by the sc_smt, except *_to_string results, which the caller g_free()s. */
#ifndef SC_SMT_H
#define SC_SMT_H

#include "shardcheck/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_SMT_DEFAULT_TLIMIT_MS 500u
#define SC_SMT_DEFAULT_RLIMIT 50000u
/* The resource limit of the assumptions' satisfiability check (the
 * oracle's satisfiable(), once per load): the smaller of this and the
 * bridge's rlimit.  Enough for small nonlinear contradictions (S*S == 2,
 * S*T == 7 with S, T >= 2: a few ms); a hard one (x^3 + y^3 == z^3) stops
 * here in about 0.05 s of CPU. */
#define SC_SMT_SATISFIABLE_RLIMIT 10000u

typedef struct sc_smt sc_smt;

typedef enum {
  SC_SMT_SAT,
  SC_SMT_UNSAT,
  SC_SMT_UNKNOWN,
} sc_smt_result;

/* What sc_smt_check asserts besides the variables' bounds. */
typedef enum {
  SC_SMT_CONTEXT,        /* the context's clauses */
  SC_SMT_WITH_GOAL,      /* the clauses and the goal */
  SC_SMT_WITH_NEGATION,  /* the clauses and the goal's negation */
} sc_smt_mode;

typedef struct {
  uint64_t queries;       /* sc_smt_decide calls */
  uint64_t yes, no, undecided;  /* their answers */
  uint64_t inconsistent;  /* of the undecided: the context was unsat */
  uint64_t checks;        /* cvc5 checkSat calls (decide makes 1 to 3) */
  uint64_t sat, unsat, unknown; /* their results */
  uint64_t limit_hits;    /* unknown because of tlimit or rlimit */
  uint64_t time_hits;     /* of those, because of the wall-time limit
                             (tlimit: depends on the machine's load) */
  uint64_t errors;        /* invalid queries and cvc5 exceptions */
  uint64_t time_us;       /* wall time in decide and check, microseconds */
} sc_smt_stats;

/* cvc5's version string (static storage). */
const char *sc_smt_version(void);

/* Asks cvc5 whether x > 0 and x < 0 can hold together over the integers;
 * returns 1 when cvc5 answers unsat (as it must), 0 otherwise. */
int sc_smt_selftest(void);

/* A new bridge with the default limits, or those of the environment. */
sc_smt *sc_smt_new(void);
void sc_smt_free(sc_smt *smt);

/* tlimit_ms: wall-time budget of one query (>= 1); rlimit: cvc5 resource
 * limit of one check (0: none). */
void sc_smt_set_limits(sc_smt *smt, uint32_t tlimit_ms, uint64_t rlimit);
void sc_smt_get_limits(const sc_smt *smt, uint32_t *tlimit_ms, uint64_t *rlimit);

/* One satisfiability check of the query's variables, context and (per
 * MODE) goal or negation, within the limits. */
sc_smt_result sc_smt_check(sc_smt *smt, const sc_sym_query *query, sc_smt_mode mode);

/* Does the context entail the goal (YES), its negation (NO), or neither
 * that cvc5 could show within the limits (UNKNOWN)? */
sc_truth sc_smt_decide(sc_smt *smt, const sc_sym_query *query);

/* The oracle for sc_symtab_set_oracle (its user is an sc_smt *): decide is
 * sc_smt_decide; satisfiable is one sc_smt_check of the context (SAT: YES,
 * UNSAT: NO) under SC_SMT_SATISFIABLE_RLIMIT and the bridge's tlimit. */
const sc_sym_oracle *sc_smt_oracle(void);
/* sc_symtab_set_oracle(st, sc_smt_oracle(), smt). */
void sc_smt_attach(sc_smt *smt, sc_symtab *st);

void sc_smt_get_stats(const sc_smt *smt, sc_smt_stats *stats);
/* One line: "cvc5 queries 3 (yes 2, no 1, unknown 0, inconsistent 0),
 * checks 5 (sat 2, unsat 3, unknown 0, limit hits 0), errors 0, time
 * 0.031 s"; "limit hits 2 (time 1)" when the wall-time limit was hit).
 * Caller g_free()s. */
char *sc_smt_stats_to_string(const sc_smt_stats *stats);

/* The message of the last invalid query or cvc5 exception ("" if none);
 * owned by SMT, valid until its next call. */
const char *sc_smt_last_error(const sc_smt *smt);

#ifdef __cplusplus
}
#endif

#endif
