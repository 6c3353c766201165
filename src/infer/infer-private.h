/* infer-private.h — (private to src/infer) the driver's state and the
 * contract between its files.  One concept per file:
 *
 *   walk.c           the walk over the spec graph (sc_infer_run): seeding
 *                    the relation, the needed nodes, the visiting order;
 *   visit.c          one spec node's visit (Listing 2): its e-graph, the
 *                    spec call, exploration, extraction, failure or deferral;
 *   classes.c        the classes a visit starts from: a spec tensor's
 *                    relation unioned, an impl tensor's leaf;
 *   trel.c           T_rel and exploration (Listing 3), widening;
 *   siblings.c       collectives that read the same tensors (explored together);
 *   gather-pieces.c  on widening, related all-gathers explored (their pieces related);
 *   dups.c           duplicate impl nodes: one explored, the others when needed;
 *   replicas.c       the equalities the input relation states between impl
 *                    tensors (replicas, blocks), added when one is related;
 *   copies.c         impl tensors equal by construction (the ranks' copies
 *                    of one value), added as replica groups;
 *   cat-parts.c      equal cats and views (same attributes, part shapes)
 *                    have equal parts;
 *   sum-cancel.c     equal sums apart in one part each: those parts equal;
 *   collective.c     collectives by their semantics, one table row each;
 *   hooks.c          saturation and the passes the runner calls after it
 *                    (egg's Runner::with_hook), registered by name;
 *   pass-sums.c      hook: sums equal as multisets, regrouping by impl sums;
 *   pass-sizes.c     hook: congruence modulo a data-dependent size;
 *   pass-constants.c hook: the parts of a constant cat are constants;
 *   pass-replica-sums.c n replicas of v / n sum to v (a visit left unmapped);
 *   vrange.c         value ranges of spec tensors;
 *   defer.c          deferral of unmapped intermediate nodes;
 *   relation.c       clean relations extracted from a class, nearest terms;
 *   result.c         the result object, its failure sub-structure, accessors;
 *   explain.c        explanations (--explain; explain.h);
 *   release.c        relations no later visit can read, freed during the walk;
 *   memo.c           layer memoization: a node's relations carried from an
 *                    earlier proved node by an exact isomorphism;
 *   localize.c       where a failure after deferral is reported;
 *   refuted.c        a limit the values refute: the verdict fails;
 *   constant.c       constant spec tensors: the term that recomputes them;
 *   expand-copies.c  an unmapped expand of a size-1 dim: the cat of copies;
 *   cut-forms.c      cut forms of a relation past max_terms; the retry without them;
 *   given.c          output relations of checked outputs the bundle relates
 *                    (spec inputs, assumed tensors);
 *   schedule.c       --jobs N: nodes proved ahead on a thread pool, committed
 *                    in visiting order (schedule.h);
 *   carried-texts.c  the texts of a carried relation, rendered when read;
 *   carry-rename.c   --jobs N > 1: carried relations' expressions made and
 *                    freed on a thread of their own.
 *
 * Invariants:
 *  - rel[t] holds the clean expressions (bound to the impl graph) known for
 *    spec tensor t; it is filled for inputs and assumed tensors before the
 *    walk and for each visited node's results after it.  Expressions come
 *    from the bundle (borrowed) or from extraction (owned by ctx->owned);
 *    a carried relation's (memo.c) are owned by ctx->owned, or with a
 *    renaming thread (carry-rename.c) by the array itself, whose slots that
 *    thread fills: only its length may be read before
 *    sc_rel_renamer_sync.
 *  - Per-node state (T_rel membership, explored impl nodes, input counts)
 *    is stamped with the visit number instead of cleared, so that a visit
 *    costs what its neighbourhood costs, never the size of the impl graph
 *    (GraphGuard's linear scaling).
 *
 * Ownership: the context (sc_rel_ctx) lives for one sc_infer_run and owns
 * everything it points to except the bundle, the options and the result;
 * the per-visit members (lang, ex, rules borrowed from compiled) live for
 * one visit. */
#ifndef SC_INFER_PRIVATE_H
#define SC_INFER_PRIVATE_H

#include "shardcheck/infer.h"

#include "shardcheck/extract.h"
#include "infer/explain.h"

G_BEGIN_DECLS

/* --- the result (result.c) --- */

/* Why the check failed (verdict FAILS or LIMIT); cleared while a deferred
 * failure is forgotten. */
typedef struct {
  sc_failure_kind kind;
  sc_id node;                /* spec node */
  GArray *unmapped;          /* sc_id: its outputs with no clean expression */
  GPtrArray *nearest;        /* char* */
  uint32_t explored;
  sc_id stop;                /* spec node the walk stopped at, when not node */
  GPtrArray *stop_nearest;   /* char*: nearest terms of its first unmapped output */
  char *limit_reason;
  char *refuted;             /* a limit the values refute (refuted.c), or NULL */
  GPtrArray *undecided;      /* char*: lemmas whose conditions were undecided */
  GPtrArray *over_intermediates; /* char*: clean relations of an unmapped checked
                                    output over impl intermediates */
} sc_rel_failure;

typedef struct sc_rel_text_source sc_rel_text_source;
typedef struct sc_rel_carried_text sc_rel_carried_text;

struct sc_infer_result {
  const sc_bundle *bundle;
  sc_verdict verdict;
  GPtrArray **tensor_texts;  /* per spec tensor: char* (owned) or NULL; read it
                                through sc_infer_tensor_exprs (carried texts) */
  sc_rel_carried_text **carried_texts; /* NULL, or per spec tensor: its texts
                                          to render when first read (carried-texts.c) */
  GPtrArray **deferred_texts; /* per spec tensor: its deferred (non-clean) relation, or NULL */
  GPtrArray **output_texts;  /* per spec tensor: char* (owned) or NULL */
  GArray *checked;           /* sc_id */
  sc_rel_failure failure;
  GArray *expectations;      /* sc_infer_expectation */
  GPtrArray *explanations;   /* char*, one per visited node (with explain) */
  GPtrArray *relexp;         /* sc_relation_explanation* (explain.c) */
  GPtrArray *learned;        /* char*: data-dependent sizes learned (pass-sizes.c) */
  GArray *assumptions;       /* sc_infer_assumption: value-range assumptions used (vrange.c) */
  sc_infer_stats stats;
  sc_id *carried_from;       /* per spec node: the proved node it was carried from (memo.c) */
  GArray *carried_blocks;    /* sc_infer_carried_block, in visiting order (memo.c) */
};

/* A new result for bundle B, verdict REFINES, nothing found yet. */
sc_infer_result *sc_rel_result_new(const sc_bundle *b);
/* A failure with nothing recorded (its arrays made), and its arrays freed. */
void sc_rel_failure_init(sc_rel_failure *f);
void sc_rel_failure_free(sc_rel_failure *f);

/* --- the walk's state --- */

typedef struct sc_rel_ctx sc_rel_ctx;

/* Which inputs an impl node reads (trel.c, sc_rel_unread_args): found once
 * per node at the start of the run. */
typedef struct {
  int32_t self_arg;  /* a Tensor argument not read, or -1 */
  int32_t list_arg;  /* a Tensor[] argument of which only list_keep is read, or -1 */
  int64_t list_keep;
  uint32_t n_read;   /* how many of its (distinct) inputs it reads */
} sc_rel_unread;

/* A pass the runner calls after each saturation (hooks.c): TRUE when it
 * changed the e-graph (then the e-graph is rebuilt and saturated again). */
typedef gboolean (*sc_rel_hook_fn)(sc_rel_ctx *c);
typedef struct {
  const char *name;
  sc_rel_hook_fn fn;
} sc_rel_hook;

struct sc_rel_ctx {
  const sc_bundle *bundle;
  const sc_infer_options *opts;
  sc_graph *spec, *impl;
  sc_symtab *st;
  sc_infer_result *res;
  GPtrArray **rel;           /* per spec tensor: sc_texpr* (borrowed) */
  GPtrArray *owned;          /* sc_texpr* made here */
  gboolean *impl_is_output;  /* per impl tensor */
  /* stamps */
  uint32_t visit;
  uint32_t *trel_stamp;      /* per impl tensor: visit when in T_rel */
  uint32_t *node_stamp;      /* per impl node: visit of the counts below */
  uint32_t *node_ready;      /* inputs of the node in T_rel this visit */
  uint32_t *node_explored;   /* visit when explored */
  GHashTable *sourceless;    /* op id -> GArray of impl node ids with no input */
  GHashTable *overloads;     /* op id of sourceless -> GArray of its overloads' op ids (trel.c) */
  GArray *dd_nodes;          /* sc_id: impl nodes of a data-dependent operator, in id order */
  GArray *const_readers;     /* sc_id: impl nodes that may read a constant (trel.c), in id order */
  sc_rel_unread *unread;     /* per impl node: the inputs it reads (trel.c) */
  /* per-node scratch */
  sc_lang *lang;
  sc_lemma_rules *rules;
  sc_rewrite *const *rewrites;
  uint32_t n_rewrites;
  GArray *frontier;          /* impl node ids */
  GString *conflict;         /* first conflict message of this visit */
  uint32_t explored_now;     /* impl nodes explored in this visit */
  GArray *in_cls;            /* classes of the node's inputs, this visit */
  /* deferred nodes (see sc_rel_defer_outputs) */
  uint32_t *defer_depth;     /* per spec tensor: 0, or the deferral depth of its relation */
  gboolean pending;          /* the failure of the first deferred node is recorded */
  gboolean pending_excused;  /* ... and that node is a broadcast sum (localize.c):
                                a later deferral or failure replaces it */
  GArray *explored_list;     /* impl nodes explored this visit, in order */
  sc_explain *ex;            /* with explain: this visit's facts (explain.h) */
  /* deferred tensors still read by unvisited nodes (sc_rel_settle_deferred) */
  const gboolean *need;      /* per spec node: visited by the walk */
  uint32_t *live_uses;       /* per spec tensor: needed consumers not yet visited, while deferred */
  uint32_t n_live;           /* spec tensors with live_uses > 0 */
  const sc_node *visiting;   /* the spec node being visited (sc_rel_dd_merge_sizes' messages) */
  /* value ranges (sc_rel_vr_analyze) */
  sc_vrange *vrange;         /* per spec tensor: its facts */
  GPtrArray *vr_assumptions; /* vr_assumption*, by assumption id */
  uint32_t term_size;        /* largest term enumerated (sc_rel_term_size_for) */
  uint32_t widen_hops;       /* the widened exploration's depth (sc_rel_widen_hops) */
  sc_lemma_rules *compiled;  /* the lemmas, compiled at the first visit and
                                rebound to each visit's lang (owned) */
  GArray *hooks;             /* sc_rel_hook: called after each saturation, in order */
  /* equal expressions of the input relation (replicas.c) */
  GArray *groups;            /* group: a spec tensor's entry with several expressions */
  GArray **groups_of;        /* per impl tensor: guint group ids whose expressions read it */
  uint32_t *group_stamp;     /* per group: visit when queued */
  GArray *group_queue;       /* guint: groups to add at the next exploration round */
  GPtrArray *copy_entries;   /* sc_relation_entry* of the copies' groups (copies.c) */
  /* layer memoization (memo.c); the logs are NULL when it is off */
  struct sc_rel_memo *memo;
  GArray *trel_log;          /* sc_id: impl tensors that joined T_rel this visit */
  GArray *group_log;         /* guint: groups queued this visit */
  gboolean widened;          /* this visit widened its exploration */
  struct sc_rel_release *release; /* freeing relations no visit can read (release.c) */
  /* duplicate impl nodes (dups.c) */
  sc_id *dup_rep;            /* per impl node: its representative (itself if none) */
  GArray **dups_of;          /* per representative: sc_id duplicates, or NULL */
  uint32_t *dormant;         /* per impl node: visit when ready but not needed */
  uint32_t *virt_stamp;      /* per impl tensor: visit when counted as related for a
                                dormant duplicate's representative */
  struct sc_rel_exprs_memo *exprs_memo; /* this visit's clean terms per class (relation.c) */
  uint32_t *rel_main;        /* per spec tensor: 0, or how many expressions of rel[t]
                                come before its cut forms (cut-forms.c) */
  gboolean no_cuts;          /* this visit reads relations without their cut forms */
  gboolean no_replica_sums;  /* this visit runs no replica-sums pass (pass-replica-sums.c) */
  struct sc_rel_held *held;  /* a failure independent of the pending deferred chains,
                                held while they settle (localize.c); shared by the
                                slots of --jobs, used on the main thread only */
};

/* How many spec nodes in a row may have a relation that is not clean
 * (sc_rel_defer_outputs). */
#define MAX_DEFER_DEPTH 8
/* How many expressions a deferred tensor keeps. */
#define MAX_DEFER_TERMS 8

typedef sc_infer_weight weight_ctx;

/* --- the walk and the visit (walk.c, visit.c) --- */

/* One spec node: Listing 2 with Listing 3's exploration.  Returns FALSE on
 * an error; a node that fails to map sets the result's failure and *stop. */
gboolean sc_rel_visit_node(sc_rel_ctx *c, sc_id v, gboolean *stop, GError **error);
/* A fresh e-graph (c->lang) with the rules bound to it; and its release
 * (the compiled rules are kept for the next visit). */
gboolean sc_rel_visit_begin(sc_rel_ctx *c, GError **error);
void sc_rel_visit_release(sc_rel_ctx *c);

/* --- outputs whose relation the bundle gives (given.c) --- */

/* After a walk that mapped every checked output: the output relation of
 * each checked output that is a spec input or an assumed tensor, and its
 * expectations.  FALSE on an error. */
gboolean sc_rel_outputs_given(sc_rel_ctx *c, GError **error);
/* The same in two parts (schedule.c runs the first on a worker thread):
 * the proof, which writes only the context's per-visit members and
 * C->res's counters, and the recording of its relations. */
typedef struct {
  sc_id v;
  sc_id *out_cls;            /* per result of the node: its class */
  sc_runner *runner;
  const char *limit_hit;     /* a limit the proof reached, or NULL */
  double t0;                 /* when the proof began (monotonic seconds) */
  double seconds;            /* how long it took */
  gboolean ok;               /* FALSE: ERROR says why */
  GError *error;
  /* the expectations the proof decided, in the order decided: pairs
   * (index in the result's expectations, found); the result takes them
   * at the commit (sc_rel_visit_finish), so that a proof made ahead and
   * dropped (the walk stopped before its turn) leaves no trace */
  GArray *expected;          /* guint[2] */
} sc_rel_proof;
void sc_rel_visit_prove(sc_rel_ctx *c, sc_id v, sc_rel_proof *p);
gboolean sc_rel_visit_finish(sc_rel_ctx *c, sc_rel_proof *p, gboolean *stop, GError **error);
void sc_rel_proof_clear(sc_rel_proof *p);

/* --- the parallel schedule (schedule.c, schedule.h) --- */

typedef struct sc_rel_sched sc_rel_sched;
/* After the needed nodes and the release plan are known: NULL when the
 * walk proves every node itself (opts->jobs <= 1, --explain, or sizes
 * that a proof may learn). */
sc_rel_sched *sc_rel_sched_new(sc_rel_ctx *c, const sc_id *order, uint32_t n_order);
/* Waits for the proofs still running and frees them. */
void sc_rel_sched_free(sc_rel_sched *s);
/* At visiting position AT's turn: proofs of the next nodes started. */
void sc_rel_sched_dispatch(sc_rel_sched *s, uint32_t at);
/* Position AT is visited (not carried): its proof, made ahead or now,
 * recorded as sc_rel_visit_node records it, then kept as a template
 * (sc_rel_memo_record) unless the walk stops. */
gboolean sc_rel_sched_visit(sc_rel_sched *s, uint32_t at, gboolean *stop, GError **error);
/* Position AT was carried: a proof made ahead is dropped. */
void sc_rel_sched_drop(sc_rel_sched *s, uint32_t at);

/* --- classes (classes.c) --- */

/* T (bound to the impl graph) added to the visit's e-graph, the impl
 * tensors it reads to T_rel; its class, or SC_ID_NONE with ERROR set. */
sc_id sc_rel_add_related_texpr(sc_rel_ctx *c, const sc_texpr *t, GError **error);
/* The class of a tensor (spec or impl, by the function) in this visit. */
typedef sc_id (*class_of_fn)(sc_rel_ctx *c, sc_id tensor, GError **error);
void sc_rel_free_args(sc_value *args, uint32_t n);
/* N's arguments with tensor ids replaced by child indices, the classes
 * CLASS_OF gives for them appended to CHILDREN; free with sc_rel_free_args. */
sc_value *sc_rel_args_to_children(sc_rel_ctx *c, const sc_node *n, class_of_fn class_of,
                                  GArray *children, GError **error);
sc_id sc_rel_spec_input_class(sc_rel_ctx *c, sc_id u, GError **error);
sc_id sc_rel_structured_class(sc_rel_ctx *c, sc_id u, GError **error);
sc_id sc_rel_impl_leaf_class(sc_rel_ctx *c, sc_id t, GError **error);

/* --- freeing relations no later visit can read (release.c) --- */

typedef struct sc_rel_release sc_rel_release;
/* After the needed nodes are known: ORDER is the topological order (the
 * needed nodes in it are the visiting order).  Nothing with --explain. */
void sc_rel_release_init(sc_rel_ctx *c, const sc_id *order, uint32_t n_order);
void sc_rel_release_free(sc_rel_ctx *c);
/* Node V was visited (or carried): what it added to c->owned since
 * OWNED_BEFORE are its relations. */
void sc_rel_release_mark(sc_rel_ctx *c, sc_id v, uint32_t owned_before);
/* After the node at visiting POSITION: free the relations due there. */
void sc_rel_release_after(sc_rel_ctx *c, uint32_t position);
/* Is spec tensor T's relation pinned by a template (memo.c)? */
gboolean sc_rel_memo_pins(sc_rel_ctx *c, sc_id t);

/* --- duplicate impl nodes (dups.c) --- */

void sc_rel_dups_init(sc_rel_ctx *c);
void sc_rel_dups_free(sc_rel_ctx *c);
/* The I-th member of node W's duplicate set (the representative's
 * duplicates in ascending order, then the representative; W alone when
 * it is no duplicate and has none), or SC_ID_NONE past the last:
 * for (guint i = 0; (m = sc_rel_dups_member(c, w, i)) != SC_ID_NONE; i++). */
sc_id sc_rel_dups_member(const sc_rel_ctx *c, sc_id w, guint i);
/* Node W of a duplicate set is explored this visit: the other members
 * whose results are in T_rel join the frontier, so that the e-graph
 * equates their results with W's (congruence of their equations). */
void sc_rel_dups_wake_related(sc_rel_ctx *c, sc_id w);

/* --- T_rel and exploration (trel.c) --- */

void sc_rel_trel_add(sc_rel_ctx *c, sc_id t);
/* Is OP an uninitialised buffer (empty, new_empty, sc.empty: trel.c)? */
gboolean sc_rel_is_empty_buffer(const sc_op *op);
/* After c->sourceless is filled: the overloads of each of its operators
 * (sc_rel_add_sourceless asks for them every exploration round), and the
 * impl nodes that the exploration rounds look at beyond the visit's
 * neighbourhood, listed once: the data-dependent ones (c->dd_nodes) and
 * those that may read a constant (c->const_readers).  Freed by
 * sc_rel_trel_free. */
void sc_rel_trel_init(sc_rel_ctx *c);
void sc_rel_trel_free(sc_rel_ctx *c);
gboolean sc_rel_explore(sc_rel_ctx *c, sc_runner *runner, const sc_id *out_cls, uint32_t n_out,
                        const char **limit_hit, GError **error);
gboolean sc_rel_widen(sc_rel_ctx *c, sc_runner *runner, const sc_id *out_cls, uint32_t n_out,
                      const char **limit_hit, GError **error);
/* The widened exploration's depth (operators past the related tensors)
 * for an impl of N_RANKS ranks: WIDEN_HOPS, or 2 N_RANKS + 2 when that is
 * more.  A rank that merges the ranks' blocks one after the other (ring
 * attention's running max, sum and accumulator; a pipeline's micro-batch
 * accumulation) chains two operators per block (rescale, add) whose
 * results no spec term names until the last block is in, and two more
 * normalise the state (the division by the running sum): the chain grows
 * with the number of ranks, so the bound must too.  sc_rel_trel_init sets
 * c->widen_hops with it. */
#define WIDEN_HOPS 8
uint32_t sc_rel_widen_hops(uint32_t n_ranks);

/* --- equal expressions of the input relation (replicas.c) --- */

void sc_rel_replicas_init(sc_rel_ctx *c);
void sc_rel_replicas_free(sc_rel_ctx *c);
/* Impl tensor T joined T_rel: queue the groups that read it. */
void sc_rel_replicas_touch(sc_rel_ctx *c, sc_id t);
/* Add the queued groups to this visit's e-graph; TRUE when one was new. */
gboolean sc_rel_replicas_add(sc_rel_ctx *c);
/* The ranks' copies of one value (copies.c): value numbers of the impl
 * tensors, and an entry (owned by c->copy_entries) appended to OUT for
 * each number held by two or more of them, its expressions the tensors;
 * sc_rel_replicas_init makes them groups.  Freed by sc_rel_copies_free. */
void sc_rel_copies_init(sc_rel_ctx *c, GPtrArray *out);
void sc_rel_copies_free(sc_rel_ctx *c);
/* Equal cats in class CLS (and, recursively, in the parts merged) have
 * equal parts: merges them (cat-parts.c); TRUE when something merged. */
gboolean sc_rel_cat_equal_parts(sc_rel_ctx *c, sc_id cls);
/* Sums of class CLS equal but for one part each: those parts, as pairs
 * appended to PAIRS (sum-cancel.c; the caller unions them). */
void sc_rel_sum_cancel_pairs(sc_rel_ctx *c, sc_id cls, GArray *pairs);

/* siblings.c: the next collective node after *CURSOR (start at 0) that
 * reads the same tensors in the same order as collective node P, or
 * SC_ID_NONE when there is no more (or P is no collective). */
sc_id sc_rel_collective_sibling(const sc_rel_ctx *c, sc_id p, uint32_t *cursor);
/* gather-pieces.c: the unexplored all-gathers with a result in T_rel join
 * the frontier (widening only: their pieces then join T_rel); how many. */
guint sc_rel_gather_pieces(sc_rel_ctx *c);

/* A spec expand of one size-1 dim to n <= 8 (node N, its output class
 * OUT_CLS[0], its input class c->in_cls[0]) whose output is unmapped is
 * unioned with the cat of n copies of its input (an input with a clean
 * form without sums), or with the sum of the cats of copies of the
 * partials of a partial-sum form (expand-copies.c); TRUE when it was. */
gboolean sc_rel_expand_copies(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls);
/* The parts that stand twice or more in a cat chain whose class holds an
 * impl tensor T, with no tensor leaf of their own, are unioned with their
 * slices of T (pass-cat-slices.c).  Not a hook: run by a visit whose output
 * is still unmapped after widening (visit.c, prove), which then saturates
 * again; TRUE when classes were merged. */
gboolean sc_rel_cat_part_slices(sc_rel_ctx *c);

/* --- collectives and term builders (collective.c) --- */

const sc_value *sc_rel_node_arg(const sc_node *n, const char *name);
/* sc.cat or sc.sum over CLASSES (n >= 1); DIM for cat. */
sc_id sc_rel_add_variadic(sc_rel_ctx *c, const char *func, const sc_id *classes, uint32_t n,
                          const sc_dim *dim, GError **error);
/* slice(x, dim, start, end) of class X (step 1). */
sc_id sc_rel_add_slice(sc_rel_ctx *c, sc_id x, sc_dim dim, sc_dim start, sc_dim end,
                       GError **error);
/* OP(a, b) (QUALNAME) where B is a class (sc_id*) when OP's second
 * argument is a Tensor, else a value (sc_value*); other arguments take
 * their defaults. */
sc_id sc_rel_add_binary(sc_rel_ctx *c, const char *qualname, sc_id a, const void *b,
                        GError **error);
/* The class of result K of collective node N, from its inputs' classes
 * (SC_ID_NONE: a collective the e-graph cannot express; a bare leaf). */
sc_id sc_rel_add_collective(sc_rel_ctx *c, const sc_node *n, const sc_id *in, uint32_t n_in,
                            uint32_t k, GError **error);

/* --- saturation and its hooks (hooks.c, pass-*.c) --- */

/* Registers the driver's post-saturation passes on C (sums, sizes,
 * constants), in that order. */
void sc_rel_register_hooks(sc_rel_ctx *c);
void sc_rel_add_hook(sc_rel_ctx *c, const char *name, sc_rel_hook_fn fn);
/* Saturate, call every hook, and saturate again while a hook changed the
 * e-graph (a few times at most); remember a limit in *LIMIT_HIT. */
void sc_rel_saturate_ac(sc_rel_ctx *c, sc_runner *runner, const char **limit_hit);
gboolean sc_rel_ac_merge_sums(sc_rel_ctx *c);
gboolean sc_rel_dd_merge_sizes(sc_rel_ctx *c);
gboolean sc_rel_cat_constant_parts(sc_rel_ctx *c);
/* pass-replica-sums.c, run by a visit that left an output unmapped (not
 * a hook: see there): S = sum(A, ..., A) (n times) for a class A holding
 * div.Scalar(S, n) and n distinct impl tensors, then saturation again;
 * TRUE when it reached a limit (the visit is then made again without it,
 * c->no_replica_sums).  And the sums of class CLS whose arguments repeat a
 * class, named with distinct tensors of it (bound, owned by c->owned),
 * appended to OUT. */
gboolean sc_rel_replica_sums(sc_rel_ctx *c);
gboolean sc_rel_replica_sums_prove(sc_rel_ctx *c, const char **limit_hit);
void sc_rel_replica_sum_exprs(sc_rel_ctx *c, sc_id cls, GPtrArray *out);

/* --- value ranges (vrange.c) --- */

void sc_rel_vr_analyze(sc_rel_ctx *c);
void sc_rel_vr_free(sc_rel_ctx *c);
void sc_rel_vr_seed(sc_rel_ctx *c, sc_id u, sc_id cls);
void sc_rel_vr_collect_used(sc_rel_ctx *c, const sc_node *n);

/* --- deferral (defer.c) --- */

sc_id sc_rel_deferred_class(sc_rel_ctx *c, sc_id u, GError **error);
gboolean sc_rel_defer_outputs(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls,
                              GArray *unmapped, const char *limit_hit);
gboolean sc_rel_result_is_read(sc_rel_ctx *c, sc_id t);
void sc_rel_settle_deferred(sc_rel_ctx *c, const sc_node *n, gboolean deferred);

/* --- constant spec tensors (constant.c) --- */

/* When spec tensor U depends on no graph input: the term that recomputes
 * it from the spec's own nodes (operators alone, no impl tensor), bound to
 * the impl graph (owned by c->owned); else NULL.  Adds to this visit's
 * e-graph.  The relation of a constant that maps to no impl tensor. */
sc_texpr *sc_rel_constant_expr(sc_rel_ctx *c, sc_id u);

/* --- where a failure after deferral is reported (localize.c) --- */

/* Are node N's unmapped outputs (UNMAPPED, their classes OUT_CLS; the
 * node is being deferred) clean up to a broadcast: each class holds a
 * term of impl tensors under clean structural operators and adds of an
 * impl tensor and the broadcast of another (2 to 8 copies), no sum of
 * partials?  Such a node's failure is pending but excused (a later
 * deferral or failure replaces it). */
gboolean sc_rel_defer_excused(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls,
                              GArray *unmapped);

/* Does LIMIT_HIT at node N (which reads a deferred relation) end the walk
 * with the pending failure of the first deferred node, not a limit? */
gboolean sc_rel_limit_in_deferred_chain(const sc_rel_ctx *c, const sc_node *n,
                                        const char *limit_hit);

/* A failure at node N that reads no deferred relation while the first
 * deferred node's failure is pending: N's own failure is held
 * (sc_rel_held_begin) and the walk goes on through the nodes that read the
 * pending chains (and their ancestors) only.  If every chain settles,
 * N's failure is the result (sc_rel_held_settled); if a chain fails,
 * reaches a limit, or cannot be finished (a reader downstream of N), the
 * result is the one without holding: the first deferred node's failure,
 * stopped at N. */
typedef struct sc_rel_held sc_rel_held;
sc_rel_held *sc_rel_held_new(void);
void sc_rel_held_free(sc_rel_held *h);
/* Is a failure held (the walk in its settling mode)? */
gboolean sc_rel_held_active(const sc_rel_ctx *c);
/* May node V's unmapped outputs (UNMAPPED, none deferred, no limit) be
 * held rather than stop the walk: a failure is pending and V reads no
 * deferred relation? */
gboolean sc_rel_held_may_hold(const sc_rel_ctx *c, const sc_node *n);
/* Node V fails (UNMAPPED, OUT_CLS: record_failure's arguments): the first
 * such node's failure is held; the walk's fallback stop is V. */
void sc_rel_held_begin(sc_rel_ctx *c, sc_id v, const sc_id *out_cls, GArray *unmapped);
/* After a deferral while held: the nodes to visit are recomputed. */
void sc_rel_held_deferred(sc_rel_ctx *c, sc_id v);
/* While held: is node V passed over (not an ancestor of a live deferred
 * tensor's reader, or reading a tensor of a node that failed or was
 * passed over)?  Its results are then marked unreadable. */
gboolean sc_rel_held_skip(sc_rel_ctx *c, sc_id v);
/* While held, after a visit: when the pending failure was forgotten
 * (every chain settled), the held failure becomes the result; TRUE when
 * the walk must stop. */
gboolean sc_rel_held_settled(sc_rel_ctx *c);

/* --- relations and nearest terms (relation.c) --- */

uint32_t sc_rel_nearest_weight(const sc_egraph *eg, sc_id node, void *user);
/* Clean terms of CLS as bound expressions (appended to OUT, owned by
 * c->owned), memoized while the e-graph is unchanged: a repeated call
 * appends the same expressions. */
void sc_rel_clean_exprs(sc_rel_ctx *c, sc_id cls, const gboolean *allowed_leaf, GPtrArray *out);
/* Empties and frees the memo of sc_rel_clean_exprs (at the end of each
 * visit); its hits and misses since the last reset. */
typedef struct sc_rel_exprs_memo sc_rel_exprs_memo;
void sc_rel_exprs_memo_reset(sc_rel_ctx *c);
void sc_rel_exprs_memo_counts(const sc_rel_ctx *c, uint64_t *hits, uint64_t *misses);
/* The same for the aliases' enumerations of leaf classes (relation.c). */
void sc_rel_exprs_memo_leaf_counts(const sc_rel_ctx *c, uint64_t *hits, uint64_t *misses);
/* The same (no leaf restriction), and the cut forms past max_terms
 * families into EXTRA (cut-forms.c says why). */
void sc_rel_clean_exprs_cuts(sc_rel_ctx *c, sc_id cls, GPtrArray *out, GPtrArray *extra);

/* --- cut forms kept aside (cut-forms.c) --- */

/* Appends CUTS (freed) to EXPRS, T's relation, remembering where they start. */
void sc_rel_cut_forms_set(sc_rel_ctx *c, sc_id t, GPtrArray *exprs, GPtrArray *cuts);
/* How many of the LEN expressions of rel[U] this visit reads. */
uint32_t sc_rel_cut_forms_main(const sc_rel_ctx *c, sc_id u, uint32_t len);
/* Does node N read a relation with cut forms? */
gboolean sc_rel_cut_forms_read(const sc_rel_ctx *c, const sc_node *n);
void sc_rel_cut_forms_free(sc_rel_ctx *c);
gboolean sc_rel_some_output_unmapped(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls);
gboolean sc_rel_outputs_lost_impl(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls);
GPtrArray *sc_rel_texts_of(GPtrArray *texprs);
void sc_rel_add_nearest_terms(sc_rel_ctx *c, sc_id cls, GPtrArray *out);

/* --- layer memoization (memo.c) --- */

/* Set up (nothing when opts->no_memo or opts->explain) and free. */
void sc_rel_memo_init(sc_rel_ctx *c);
void sc_rel_memo_free(sc_rel_ctx *c);
/* Before visiting V: its relations carried from an isomorphic node proved
 * earlier; TRUE when they were (then V is not visited). */
gboolean sc_rel_memo_carry(sc_rel_ctx *c, sc_id v);
/* May V, at visiting POSITION, be carried (now, or from its role partner
 * not visited yet)?  A hint without effect (schedule.c). */
gboolean sc_rel_memo_may_carry(sc_rel_ctx *c, sc_id v, uint32_t position);
/* Could U, visited before V and not committed yet, become a template V
 * is carried from (the same spec node, V carriable; with U_READY, U's
 * inputs committed: its input relations plain and of V's shape)?  A hint
 * (schedule.c). */
gboolean sc_rel_memo_may_template(sc_rel_ctx *c, sc_id u, gboolean u_ready, sc_id v);
/* Around a proof of V: the logs reset, then V kept as a template when
 * its proof can be carried (every result mapped cleanly, nothing widened,
 * deferred or learned). */
void sc_rel_memo_begin(sc_rel_ctx *c);
void sc_rel_memo_record(sc_rel_ctx *c, sc_id v);
/* With --jobs N > 1 (schedule.c): the carries' relations renamed on a
 * thread of their own (carry-rename.c) from start to stop. */
void sc_rel_memo_start_renamer(sc_rel_ctx *c);
void sc_rel_memo_stop_renamer(sc_rel_ctx *c);
/* After the walk: the carried blocks into the result. */
void sc_rel_memo_finish(sc_rel_ctx *c);

/* --- texts of carried relations (carried-texts.c) --- */

/* A source: copies of EXPRS (a template result's relation) and their
 * leaves, sorted and unique (reference-counted; new gives one reference). */
sc_rel_text_source *sc_rel_text_source_new(const GPtrArray *exprs);
sc_rel_text_source *sc_rel_text_source_ref(sc_rel_text_source *s);
void sc_rel_text_source_unref(sc_rel_text_source *s);
guint sc_rel_text_source_n_leaves(const sc_rel_text_source *s);
sc_id sc_rel_text_source_leaf(const sc_rel_text_source *s, guint i);
/* S's expression J (of sc_rel_text_source_n_exprs) with leaf i renamed to
 * IMAGE[i]: a new expression.  Safe on any thread (S is immutable). */
guint sc_rel_text_source_n_exprs(const sc_rel_text_source *s);
sc_texpr *sc_rel_text_source_rename(const sc_rel_text_source *s, guint j, const sc_id *image);

/* --- carried relations renamed on a thread (carry-rename.c) --- */

typedef struct sc_rel_renamer sc_rel_renamer;
/* A renaming thread, started; freed after its last job. */
sc_rel_renamer *sc_rel_renamer_new(void);
void sc_rel_renamer_free(sc_rel_renamer *r);
/* OUT's slots (OUT->len of them, as SRC has expressions) filled with SRC's
 * expressions renamed by IMAGE, on the thread (IMAGE borrowed until then). */
uint64_t sc_rel_renamer_push(sc_rel_renamer *r, GPtrArray *out, sc_rel_text_source *src,
                             const sc_id *image);
/* Until every job pushed is done (nothing when R is NULL). */
void sc_rel_renamer_sync(sc_rel_renamer *r);
/* The free function of a carried relation's array: on the thread that
 * started a renamer, EXPR is freed later on the renaming thread; elsewhere
 * at once. */
void sc_rel_renamer_dispose(gpointer expr);
/* Spec tensor T's texts are SRC's renamed, leaf i to IMAGE[i]: rendered
 * when first read.  Takes SRC's reference and IMAGE (g_malloc'ed); drops
 * T's texts so far. */
void sc_rel_set_carried_texts(sc_infer_result *res, sc_id t, sc_rel_text_source *src,
                              sc_id *image);
void sc_rel_carried_text_free(sc_rel_carried_text *ct);
/* T's carried texts, if any, rendered into res->tensor_texts[t] (kept when
 * texts were set after the carry). */
void sc_rel_render_carried_texts(sc_infer_result *res, sc_id t);
/* Does impl node N read the values of its input T (trel.c)? */
gboolean sc_rel_reads_input(const sc_node *n, sc_id t);
/* The same for impl node W, from the context's table (sc_rel_trel_init). */
gboolean sc_rel_reads_input_at(const sc_rel_ctx *c, sc_id w, sc_id t);
/* The relation entry of replica group ID (replicas.c). */
const sc_relation_entry *sc_rel_replicas_entry(sc_rel_ctx *c, guint id);
/* A random node that got a relation is listed as an assumption (visit.c). */
void sc_rel_note_random_assumption(sc_rel_ctx *c, const sc_node *n);

/* --- failures (result.c) --- */

void sc_rel_record_failure(sc_rel_ctx *c, sc_id v, const sc_id *out_cls, GArray *unmapped,
                           const char *limit_hit);
void sc_rel_record_stop(sc_rel_ctx *c, sc_id v, const sc_id *out_cls, GArray *unmapped);
void sc_rel_clear_failure(sc_infer_result *res);

G_END_DECLS

#endif
