/* ranks-private.h — stitching per-rank implementation graphs into one graph
 * (bundle spec, "Per-rank implementation graphs"); used by bundle.c only.
 *
 * The loader builds each rank's graph on its own (names as in the file,
 * the rank's symbols already renamed to "rk.NAME" in the shared symtab,
 * types inferred, PyTorch's per-rank functional collectives as ordinary
 * `_c10d_functional.*` nodes), then calls sc_ranks_stitch, which
 *   - finds every collective call in each rank's node list (node id = file
 *     index = program order) and checks it against its group: member rank,
 *     group_size, broadcast src, equal all_to_all splits;
 *   - pairs the j-th call on group G of every member rank and checks that
 *     the calls agree (operator, reduce op, src, input dtype and shape);
 *   - builds ONE graph in which tensor x and node n of rank k are "rk.x" and
 *     "rk.n" (tensor rank k), each call of a group of two or more members is
 *     one comm.* node named "comm:G:j" whose result i is the tensor that
 *     member i's call produced, and a call on a one-member group stays the
 *     rank's own `_c10d_functional.*` node (an identity with a shape rule);
 *   - pairs point-to-point moves: the j-th `comm.send(x, dst=b, tag=t)` of
 *     rank a with the j-th `comm.recv(src=a, tag=t)` of rank b, checking
 *     that both exist and that x and the recv's declared result agree in
 *     shape and dtype; each pair becomes one node
 *     `comm.send_recv(inputs=[ra.x], src=a, dst=b)` named "p2p:a>b:t:j",
 *     declared where the recv is, whose result is the recv's tensor (the
 *     send, which has no result, leaves no node of its own).
 * sc_ranks_check_calls runs the per-call checks alone, for the spec graph
 * (one rank; its groups must have one member; no comm.send/comm.recv).
 *
 * Errors carry a location: the rank and the node of that rank's graph the
 * problem is about (sc_ranks_loc), so that the loader can name the JSON path
 * "impl.ranks[k].nodes[i]".
 *
 * Ownership: a groups table owns its names and member arrays; sc_ranks_stitch
 * borrows the rank graphs and returns a new graph (caller frees) on the
 * given symtab. */
#ifndef SHARDCHECK_RANKS_PRIVATE_H
#define SHARDCHECK_RANKS_PRIVATE_H

#include "shardcheck/graph.h"

G_BEGIN_DECLS

#define SC_RANKS_ERROR (sc_ranks_error_quark())
GQuark sc_ranks_error_quark(void);
typedef enum {
  SC_RANKS_ERROR_GROUP,     /* a bad "groups" entry, a call on a group its rank is not in */
  SC_RANKS_ERROR_CALL,      /* one call is wrong on its own (group_size, src, splits) */
  SC_RANKS_ERROR_MISMATCH,  /* member ranks' calls differ (missing, extra, other op/size) */
  SC_RANKS_ERROR_CYCLE,     /* the stitched calls cannot be ordered (a deadlock) */
  SC_RANKS_ERROR_GRAPH,     /* building the stitched graph failed (shape rule, ...) */
} sc_ranks_error;

/* Where an error is: rank (-1: none) and node id of that rank's graph
 * (SC_ID_NONE: the rank as a whole). */
typedef struct {
  int32_t rank;
  sc_id node;
} sc_ranks_loc;

typedef struct sc_ranks_groups sc_ranks_groups;

/* Groups of a run of N_RANKS ranks; a group that is not added means every
 * rank. */
sc_ranks_groups *sc_ranks_groups_new(uint32_t n_ranks);
void sc_ranks_groups_free(sc_ranks_groups *gs);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_ranks_groups, sc_ranks_groups_free)
/* Add group NAME with MEMBERS (global ranks, any order, sorted here as
 * PyTorch's new_group does).  GROUP errors: a rank out of range, a rank
 * listed twice, no member. */
gboolean sc_ranks_groups_add(sc_ranks_groups *gs, const char *name, const int64_t *members,
                             uint32_t n, GError **error);
/* The members of NAME (every rank when it was not added), ascending. */
const uint32_t *sc_ranks_groups_members(const sc_ranks_groups *gs, const char *name,
                                        uint32_t *n);
uint32_t sc_ranks_groups_n_ranks(const sc_ranks_groups *gs);

/* Is OP one of the per-rank functional collectives that stitching pairs
 * (all_reduce, all_gather_into_tensor, reduce_scatter_tensor,
 * all_to_all_single, broadcast; not wait_tensor)? */
gboolean sc_ranks_is_collective(const sc_op *op);

/* Check each collective call of G, the graph of rank RANK, on its own. */
gboolean sc_ranks_check_calls(const sc_graph *g, uint32_t rank, const sc_ranks_groups *gs,
                              sc_ranks_loc *loc, GError **error);

/* Stitch the N finished rank graphs RANKS (n == sc_ranks_groups_n_ranks)
 * into one finished graph on ST.  NULL on error, with LOC and ERROR set. */
sc_graph *sc_ranks_stitch(sc_graph *const *ranks, uint32_t n, const sc_ranks_groups *gs,
                          sc_symtab *st, sc_ranks_loc *loc, GError **error);

G_END_DECLS

#endif
