/* schedule.h — (private to src/infer) the parallel schedule of
 * `check --jobs N` (schedule.c, docs/architecture.md "Parallel schedule").
 *
 * The walk commits the needed spec nodes in its visiting order, on the
 * main thread, whatever N is: carrying (memo.c), recording relations,
 * failures, deferral and freeing happen there, in that order.  What runs
 * on the other threads is only the proof of a node (sc_rel_visit_prove),
 * which reads its inputs' relations and read-only state and writes its
 * own per-visit members.  A node may be proved ahead of its turn once
 * every needed producer of its inputs is committed: its proof is then a
 * function of those committed relations, so it is the proof the
 * sequential walk would make, and results do not depend on N or timing.
 *
 * The plan below is the deterministic part: for each visiting position,
 * the number of positions that must be committed before that node may be
 * proved.  The window of a commit point I is the positions J in
 * [I, I + window) with ready[J] <= I: the nodes that may be proved while
 * the walk waits at I (sc_rel_plan_window). */
#ifndef SC_INFER_SCHEDULE_H
#define SC_INFER_SCHEDULE_H

#include "shardcheck/graph.h"

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  sc_id *node;     /* per visiting position: the spec node */
  uint32_t *ready; /* per position: positions to commit before it may be proved */
  uint32_t *pos;   /* per spec node: its position, or UINT32_MAX when not needed */
  uint32_t n;
} sc_rel_plan;

/* The plan of SPEC's needed nodes (NEED, per spec node) in ORDER. */
void sc_rel_plan_init(sc_rel_plan *p, const sc_graph *spec, const sc_id *order,
                      uint32_t n_order, const gboolean *need);
void sc_rel_plan_clear(sc_rel_plan *p);
/* The positions that may be proved while the walk waits at position AT,
 * among the next WINDOW ones, into OUT (uint32_t), in order. */
void sc_rel_plan_window(const sc_rel_plan *p, uint32_t at, uint32_t window, GArray *out);

G_END_DECLS

#endif
