/* budget.h — the overall resource budget of one check.
 *
 * Each saturation has its own soft limits (runner.h: time, live e-nodes,
 * iterations); the budget bounds the whole check: CPU seconds of the
 * process, its peak resident memory, and the e-nodes of any one e-graph.
 * The runner consults it at every iteration, during the search and every
 * 256 matches while it applies one rule's matches (and stops its run at
 * once when it is spent), the driver after every spec node; once spent it stays
 * spent, and the check ends with verdict "limit" (exit 3) at the spec node
 * being visited, naming the limit.
 *
 * Time is CPU time (CLOCK_PROCESS_CPUTIME_ID, all threads): a loaded
 * machine does not make a check run out of budget, and the figure is
 * reproducible.  sc_budget_arm_backstop() also sets RLIMIT_CPU a little
 * above the limit, with a SIGXCPU handler that exits 3 (for code that never
 * reaches a check, e.g. one long solver call).  Memory is the peak
 * resident set (getrusage), checked, not enforced: an allocation between
 * two checks can pass it.  CPU time and memory cost a system call each to
 * measure, so they are measured at most every 2 ms of wall time (a check
 * in between compares only the e-nodes): a limit is noticed at most that
 * late.
 *
 * Ownership: sc_budget_new returns a new budget (sc_budget_free); the
 * reason strings are owned by the budget. */
#ifndef SHARDCHECK_BUDGET_H
#define SHARDCHECK_BUDGET_H

#include "shardcheck/common.h"

G_BEGIN_DECLS

/* Defaults of the CLI's --time-limit, --memory-limit, --max-enodes. */
#define SC_BUDGET_DEFAULT_SECONDS 1800.0
#define SC_BUDGET_DEFAULT_MEMORY_MIB 8192u
#define SC_BUDGET_DEFAULT_MAX_ENODES 1000000u

typedef struct sc_budget sc_budget;

/* 0 (or a negative time) for a limit means none. */
sc_budget *sc_budget_new(double cpu_seconds, uint64_t memory_mib, uint64_t max_enodes);
void sc_budget_free(sc_budget *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_budget, sc_budget_free)

/* NULL while within the budget, else why it is spent ("time limit
 * (--time-limit 2 s of CPU): 2.01 s used"), sticky.  ENODES: the live
 * e-nodes of the e-graph being saturated (0 when none).  B may be NULL (no
 * budget). */
const char *sc_budget_check(sc_budget *b, uint64_t enodes);
/* The reason once spent, else NULL, without measuring anything. */
const char *sc_budget_spent(const sc_budget *b);
/* Spent by the e-node limit (not time or memory). */
gboolean sc_budget_spent_on_enodes(const sc_budget *b);
/* A new budget with B's limits, nothing spent (NULL for NULL): the budget
 * of one proof made ahead by `check --jobs N`, so that an e-graph of a
 * later node reaching --max-enodes does not stop an earlier node's proof. */
sc_budget *sc_budget_new_like(const sc_budget *b);
/* B takes FROM's reason when FROM is spent and B is not (the proof's
 * budget at its node's turn). */
void sc_budget_absorb(sc_budget *b, const sc_budget *from);

/* Process CPU seconds so far. */
double sc_budget_cpu_seconds(void);

/* Sets RLIMIT_CPU to the time limit plus a grace of max(10 s, 10%) and a
 * SIGXCPU handler printing "shardcheck: limit: REASON; stopped" on stderr
 * (REASON: sc_budget_backstop_reason) and exiting 3.  For the CLI, once
 * per process; with no --time-limit, only the handler, for an inherited
 * RLIMIT_CPU. */
void sc_budget_arm_backstop(const sc_budget *b);
/* Why the backstop stops a check: "time limit (--time-limit 60 s of CPU):
 * passed by 10 s of grace in a step that does not check it", or, when the
 * caller's RLIMIT_CPU is tighter (kept; the handler is set all the same),
 * "time limit (RLIMIT_CPU 5 s, set by the caller): ..." (transfer full). */
char *sc_budget_backstop_reason(const sc_budget *b);
/* OUT (copied; NULL: nothing) is written on stdout by the backstop's
 * handler before its stderr line: `check --format json`'s result, so that
 * every exit 3 prints one.  Text of 4 KiB or more is not printed. */
void sc_budget_backstop_report(const char *out);

G_END_DECLS

#endif
