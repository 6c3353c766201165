/* schedule.c — the parallel schedule of `check --jobs N` (schedule.h):
 * the plan (which visiting positions may be proved while the walk waits
 * at one), and the slots that prove nodes ahead on a GThreadPool.
 *
 * A slot is a copy of the walk's context whose per-visit members (the
 * stamps of T_rel, explored and dormant impl nodes, the frontier, the
 * queued replica groups, the memo logs, the rules' counters and condition
 * memo over the walk's compiled rewrites, the e-graph)
 * are its own, and whose result is a shallow copy of the walk's taking
 * the proof's counters; what the proof extracts goes to the slot's own
 * list of expressions.  The walk's relations, deferral depths, value
 * ranges, replica groups, duplicates and the bundle are shared and only
 * read by a proof: a node is proved ahead only once the producers of its
 * inputs are committed, and no relation a later node reads is freed
 * (release.c frees after the last reader's turn).  The symtab (its own
 * lock, sym-private.h), the budget (budget.c) and the lemma set's caches
 * (decl.c, lemma.c) are guarded where they are.
 *
 * At its turn the slot's node is committed on the main thread: the
 * expressions join the walk's list, the counters its result, and
 * sc_rel_visit_finish records the relations with the slot's e-graph and
 * applies the expectations the proof decided (sc_rel_proof.expected: a
 * proof only notes them, so one dropped marks none found), in visiting
 * order, exactly as the sequential walk does.  A node carried at its
 * turn, or after the walk stopped, drops its proof. */
#include "infer/infer-private.h"
#include "infer/schedule.h"
#include "shardcheck/budget.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Positions looked ahead of the commit point. */
#define WINDOW 32

void sc_rel_plan_init(sc_rel_plan *p, const sc_graph *spec, const sc_id *order,
                      uint32_t n_order, const gboolean *need) {
  uint32_t nn = sc_graph_n_nodes(spec);
  p->pos = g_new(uint32_t, nn ? nn : 1);
  for (uint32_t v = 0; v < nn; v++)
    p->pos[v] = UINT32_MAX;
  p->n = 0;
  for (uint32_t i = 0; i < n_order; i++)
    if (need[order[i]])
      p->pos[order[i]] = p->n++;
  p->node = g_new(sc_id, p->n ? p->n : 1);
  p->ready = g_new0(uint32_t, p->n ? p->n : 1);
  for (uint32_t i = 0; i < n_order; i++) {
    sc_id v = order[i];
    if (!need[v])
      continue;
    uint32_t at = p->pos[v], ready = 0;
    p->node[at] = v;
    const sc_node *n = sc_graph_node(spec, v);
    for (uint32_t k = 0; k < n->n_inputs; k++) {
      sc_id pr = sc_graph_tensor(spec, n->inputs[k])->producer;
      if (pr != SC_ID_NONE && p->pos[pr] != UINT32_MAX)
        ready = MAX(ready, p->pos[pr] + 1);
    }
    p->ready[at] = ready;
  }
}

void sc_rel_plan_clear(sc_rel_plan *p) {
  g_free(p->node);
  g_free(p->ready);
  g_free(p->pos);
  memset(p, 0, sizeof *p);
}

void sc_rel_plan_window(const sc_rel_plan *p, uint32_t at, uint32_t window, GArray *out) {
  g_array_set_size(out, 0);
  for (uint32_t j = at; j < p->n && j - at < window; j++)
    if (p->ready[j] <= at)
      g_array_append_val(out, j);
}

/* --- slots --- */

typedef struct {
  sc_rel_ctx ctx;
  sc_infer_options opts; /* the walk's, with this proof's budget */
  sc_infer_result res;  /* the walk's, shallow, with this proof's counters */
  sc_rel_proof proof;
  GPtrArray *owned;     /* sc_texpr* the proof made (no free function) */
  uint32_t pos;         /* position proved, or UINT32_MAX when free */
  gboolean done;        /* under sched->lock */
} slot;

struct sc_rel_sched {
  sc_rel_ctx *c;
  sc_rel_plan plan;
  GThreadPool *pool;
  slot *slots;
  uint32_t n_slots;
  uint32_t *slot_of;    /* per position: slot index + 1, or 0 */
  gboolean *carry_hint; /* per position: sc_rel_memo_may_carry said TRUE once */
  GArray *window;
  /* pthread's, not GMutex/GCond (futexes on Linux): ThreadSanitizer
   * sees these, and the slots are handed over through them */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  uint32_t n_ahead, n_used;  /* proofs made ahead; committed (SC_SCHEDULE_TRACE) */
  double ahead_seconds;      /* their time, committed ones */
  double main_cpu0;          /* the main thread's CPU time at the start */
  double worker_cpu;         /* CPU time of the proofs made ahead, all (under lock) */
  uint32_t n_waits;          /* times the main thread waited for a proof made ahead */
  double wait_seconds;       /* the main thread's wall time in those waits */
};

static void slot_init(slot *s, const sc_rel_ctx *c) {
  uint32_t n_it = sc_graph_n_tensors(c->impl), n_in = sc_graph_n_nodes(c->impl);
  memcpy(&s->ctx, c, sizeof *c);
  sc_rel_ctx *x = &s->ctx;
  x->visit = 0;
  x->lang = NULL;
  x->ex = NULL;
  x->rules = NULL;
  x->rewrites = NULL;
  x->n_rewrites = 0;
  x->compiled = NULL;
  x->exprs_memo = NULL; /* per visit (relation.c) */
  x->no_cuts = FALSE;
  x->res = &s->res;
  s->opts = *c->opts;
  x->opts = &s->opts;
  s->owned = g_ptr_array_new();
  x->owned = s->owned;
  x->trel_stamp = g_new0(uint32_t, n_it ? n_it : 1);
  x->node_stamp = g_new0(uint32_t, n_in ? n_in : 1);
  x->node_ready = g_new0(uint32_t, n_in ? n_in : 1);
  x->node_explored = g_new0(uint32_t, n_in ? n_in : 1);
  x->dormant = g_new0(uint32_t, n_in ? n_in : 1);
  x->virt_stamp = g_new0(uint32_t, n_it ? n_it : 1);
  x->frontier = g_array_new(FALSE, FALSE, sizeof(sc_id));
  x->in_cls = g_array_new(FALSE, FALSE, sizeof(sc_id));
  x->explored_list = g_array_new(FALSE, FALSE, sizeof(sc_id));
  x->conflict = g_string_new(NULL);
  x->group_stamp = g_new0(uint32_t, c->groups->len ? c->groups->len : 1);
  x->group_queue = g_array_new(FALSE, FALSE, sizeof(guint));
  x->trel_log = c->trel_log ? g_array_new(FALSE, FALSE, sizeof(sc_id)) : NULL;
  x->group_log = c->group_log ? g_array_new(FALSE, FALSE, sizeof(guint)) : NULL;
  s->pos = UINT32_MAX;
}

static void slot_clear(slot *s) {
  sc_rel_ctx *x = &s->ctx;
  g_free(x->trel_stamp);
  g_free(x->node_stamp);
  g_free(x->node_ready);
  g_free(x->node_explored);
  g_free(x->dormant);
  g_free(x->virt_stamp);
  g_array_free(x->frontier, TRUE);
  g_array_free(x->in_cls, TRUE);
  g_array_free(x->explored_list, TRUE);
  g_string_free(x->conflict, TRUE);
  g_free(x->group_stamp);
  g_array_free(x->group_queue, TRUE);
  if (x->trel_log)
    g_array_free(x->trel_log, TRUE);
  if (x->group_log)
    g_array_free(x->group_log, TRUE);
  sc_lemma_rules_free(x->compiled);
  g_ptr_array_unref(s->owned);
}

/* CPU seconds of the calling thread (SC_SCHEDULE_TRACE). */
static double thread_cpu(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The proof of a slot, on a pool thread. */
static void prove_on_thread(gpointer data, gpointer user) {
  slot *s = data;
  sc_rel_sched *sc = user;
  pthread_mutex_lock(&sc->lock); /* what the dispatch wrote is seen */
  uint32_t pos = s->pos;
  pthread_mutex_unlock(&sc->lock);
  double cpu0 = thread_cpu();
  sc_rel_visit_prove(&s->ctx, sc->plan.node[pos], &s->proof);
  /* the slot's rules are freed by the main thread; a pool thread binds
   * them again at its next proof (visit.c) */
  sc_lemma_rules_unbind();
  double cpu = thread_cpu() - cpu0;
  pthread_mutex_lock(&sc->lock);
  sc->worker_cpu += cpu;
  s->done = TRUE;
  pthread_cond_broadcast(&sc->cond);
  pthread_mutex_unlock(&sc->lock);
}

/* On the main thread: until S's proof is done (counted for the trace). */
static void wait_done(sc_rel_sched *sc, slot *s) {
  pthread_mutex_lock(&sc->lock);
  if (!s->done) {
    gint64 t0 = g_get_monotonic_time();
    while (!s->done)
      pthread_cond_wait(&sc->cond, &sc->lock);
    sc->n_waits++;
    sc->wait_seconds += (double)(g_get_monotonic_time() - t0) / 1e6;
  }
  pthread_mutex_unlock(&sc->lock);
}

/* A finished proof dropped: its e-graph and expressions freed, the slot
 * free again. */
static void slot_drop(sc_rel_sched *sc, slot *s) {
  wait_done(sc, s);
  sc_rel_proof_clear(&s->proof);
  sc_rel_visit_release(&s->ctx); /* its e-graph and its memo of clean terms */
  for (guint i = 0; i < s->owned->len; i++)
    sc_texpr_free(g_ptr_array_index(s->owned, i));
  g_ptr_array_set_size(s->owned, 0);
  g_clear_pointer(&s->opts.limits.budget, sc_budget_free);
  sc->slot_of[s->pos] = 0;
  s->pos = UINT32_MAX;
}

/* Can a proof of this bundle change what later proofs see?  Sizes
 * learned from data-dependent operators go into the shared symtab
 * (pass-sizes.c), and --explain writes each proof's facts into the
 * result: such checks stay sequential. */
static gboolean proofs_independent(const sc_rel_ctx *c) {
  if (c->opts->explain)
    return FALSE;
  const sc_graph *graphs[2] = {c->spec, c->impl};
  for (int g = 0; g < 2; g++)
    for (uint32_t v = 0; v < sc_graph_n_nodes(graphs[g]); v++)
      if (sc_graph_node(graphs[g], v)->op->flags & SC_OP_DATA_DEPENDENT)
        return FALSE;
  return TRUE;
}

sc_rel_sched *sc_rel_sched_new(sc_rel_ctx *c, const sc_id *order, uint32_t n_order) {
  uint32_t jobs = c->opts->jobs;
  if (jobs <= 1 || !proofs_independent(c))
    return NULL;
  /* the lemmas compiled for the walk here, before any thread starts
   * (compiling fills caches of the lemma set's trees), and shared by the
   * slots: each has the counters, reports and condition memo of its own
   * (sc_lemma_rules_share) */
  if (c->opts->lemmas != NULL && c->compiled == NULL) {
    GError *err = NULL;
    sc_lang *lang = sc_lang_new(c->st, c->impl);
    c->compiled = sc_lemma_compile(c->opts->lemmas, lang, &err);
    if (c->compiled == NULL) {
      /* the walk's first visit reports it */
      g_clear_error(&err);
      sc_lang_free(lang);
      return NULL;
    }
    sc_lang_free(lang); /* each visit rebinds the rules to its own */
  }
  /* the process-wide tables the proofs fill lazily (g_once: GLib waits for
   * another thread's initialization on a futex, which ThreadSanitizer
   * cannot see) are filled here first: the data-dependent operators of
   * pass-sizes.c, on an empty e-graph */
  c->lang = sc_lang_new(c->st, c->impl);
  (void)sc_rel_dd_merge_sizes(c);
  g_clear_pointer(&c->lang, sc_lang_free);
  sc_rel_sched *sc = g_new0(sc_rel_sched, 1);
  sc->c = c;
  sc_rel_plan_init(&sc->plan, c->spec, order, n_order, c->need);
  /* the main thread proves the node at the commit point; jobs - 1 threads
   * prove ahead, with as many finished proofs waiting their turn */
  sc->n_slots = 2 * (jobs - 1);
  sc->slots = g_new0(slot, sc->n_slots);
  for (uint32_t i = 0; i < sc->n_slots; i++) {
    slot *s = &sc->slots[i];
    slot_init(s, c);
    if (c->compiled != NULL)
      s->ctx.compiled = sc_lemma_rules_share(c->compiled);
  }
  sc->slot_of = g_new0(uint32_t, sc->plan.n ? sc->plan.n : 1);
  sc->carry_hint = g_new0(gboolean, sc->plan.n ? sc->plan.n : 1);
  sc->window = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  pthread_mutex_init(&sc->lock, NULL);
  pthread_cond_init(&sc->cond, NULL);
  sc->pool = g_thread_pool_new(prove_on_thread, sc, (gint)(jobs - 1), FALSE, NULL);
  /* the carries' relations renamed on a thread of their own (memo.c) */
  sc_rel_memo_start_renamer(c);
  sc->main_cpu0 = thread_cpu();
  return sc;
}

/* With SC_SCHEDULE_TRACE set, what the schedule did, on stderr
 * (docs/performance.md, "Session 24"): the longest chain of proved (not
 * carried) nodes, the proofs made ahead, and the CPU time of the main
 * thread and of the proofs made ahead. */
static void trace(const sc_rel_sched *sc) {
  uint32_t *depth = g_new0(uint32_t, sc->plan.n ? sc->plan.n : 1), longest = 0;
  for (uint32_t j = 0; j < sc->plan.n; j++) {
    const sc_node *n = sc_graph_node(sc->c->spec, sc->plan.node[j]);
    for (uint32_t k = 0; k < n->n_inputs; k++) {
      sc_id pr = sc_graph_tensor(sc->c->spec, n->inputs[k])->producer;
      if (pr != SC_ID_NONE && sc->plan.pos[pr] != UINT32_MAX)
        depth[j] = MAX(depth[j], depth[sc->plan.pos[pr]]);
    }
    depth[j] += sc->c->res->carried_from[sc->plan.node[j]] == SC_ID_NONE ? 1 : 0;
    longest = MAX(longest, depth[j]);
  }
  g_free(depth);
  fprintf(stderr, "schedule: %u positions, longest chain of proved nodes %u; %u proofs made "
          "ahead: %u committed (%.3f s), %u dropped; CPU s: main thread %.3f, proofs ahead "
          "%.3f; main thread waited %u times for a proof made ahead, %.3f s of wall time\n", sc->plan.n, longest,
          sc->n_ahead, sc->n_used, sc->ahead_seconds, sc->n_ahead - sc->n_used,
          thread_cpu() - sc->main_cpu0, sc->worker_cpu, sc->n_waits, sc->wait_seconds);
}

void sc_rel_sched_free(sc_rel_sched *sc) {
  if (sc == NULL)
    return;
  /* the proofs still running are waited for first: the trace reads
   * their counters (ThreadSanitizer found the race) */
  for (uint32_t i = 0; i < sc->n_slots; i++)
    if (sc->slots[i].pos != UINT32_MAX)
      slot_drop(sc, &sc->slots[i]);
  sc_rel_memo_stop_renamer(sc->c); /* every renaming done */
  if (g_getenv("SC_SCHEDULE_TRACE"))
    trace(sc);
  g_thread_pool_free(sc->pool, FALSE, TRUE);
  for (uint32_t i = 0; i < sc->n_slots; i++)
    slot_clear(&sc->slots[i]);
  g_free(sc->slots);
  g_free(sc->slot_of);
  g_free(sc->carry_hint);
  g_array_free(sc->window, TRUE);
  pthread_mutex_destroy(&sc->lock);
  pthread_cond_destroy(&sc->cond);
  sc_rel_plan_clear(&sc->plan);
  g_free(sc);
}

static slot *free_slot(sc_rel_sched *sc) {
  for (uint32_t i = 0; i < sc->n_slots; i++)
    if (sc->slots[i].pos == UINT32_MAX)
      return &sc->slots[i];
  return NULL;
}

/* May position J wait: is an earlier position not committed yet (from
 * AT, the commit point, on), neither taken as carried, a node whose proof
 * could become the template J is carried from at its turn
 * (sc_rel_memo_may_template)?  A proof made ahead of such a J is thrown
 * away when it is (on the HLO capture 3 of 10 were); J is dispatched at
 * a later commit, once that node's template is recorded and the hint
 * (sc_rel_memo_may_carry) sees it.  Only what may be proved ahead
 * changes: results do not. */
static gboolean template_pending(sc_rel_sched *sc, uint32_t at, uint32_t j) {
  for (uint32_t i = at; i < j; i++)
    if (!sc->carry_hint[i] &&
        sc_rel_memo_may_template(sc->c, sc->plan.node[i], sc->plan.ready[i] <= at,
                                 sc->plan.node[j]))
      return TRUE;
  return FALSE;
}

void sc_rel_sched_dispatch(sc_rel_sched *sc, uint32_t at) {
  sc_rel_ctx *c = sc->c;
  sc_rel_plan_window(&sc->plan, at, WINDOW, sc->window);
  for (guint i = 0; i < sc->window->len; i++) {
    uint32_t j = g_array_index(sc->window, uint32_t, i);
    if (j == at || sc->slot_of[j] != 0 || sc->carry_hint[j])
      continue; /* the main thread proves the node at the commit point */
    slot *s = free_slot(sc);
    if (s == NULL)
      return;
    if (template_pending(sc, at, j))
      continue;
    /* asked once per position: the hint matches the node against the
     * templates (memo.c's try_template), and a position stays in the
     * window for up to WINDOW commits */
    if (sc_rel_memo_may_carry(c, sc->plan.node[j], j)) {
      sc->carry_hint[j] = TRUE;
      continue;
    }
    /* the result's arrays are shared, its counters this proof's own */
    s->res = *c->res;
    memset(&s->res.stats, 0, sizeof s->res.stats);
    s->ctx.res = &s->res;
    s->ctx.owned = s->owned;
    s->ctx.pending = c->pending;
    s->ctx.pending_excused = c->pending_excused;
    s->ctx.n_live = c->n_live;
    sc_rel_memo_begin(&s->ctx);
    /* its own budget: a later node's e-graph reaching --max-enodes must
     * not stop an earlier node's proof (the limits are the same) */
    s->opts.limits.budget = sc_budget_new_like(c->opts->limits.budget);
    pthread_mutex_lock(&sc->lock);
    s->pos = j;
    s->done = FALSE;
    pthread_mutex_unlock(&sc->lock);
    sc->slot_of[j] = (uint32_t)(s - sc->slots) + 1;
    sc->n_ahead++;
    g_thread_pool_push(sc->pool, s, NULL);
  }
}

void sc_rel_sched_drop(sc_rel_sched *sc, uint32_t at) {
  if (sc->slot_of[at] != 0) {
    slot_drop(sc, &sc->slots[sc->slot_of[at] - 1]);
  }
}

gboolean sc_rel_sched_visit(sc_rel_sched *sc, uint32_t at, gboolean *stop, GError **error) {
  sc_rel_ctx *c = sc->c;
  sc_id v = sc->plan.node[at];
  if (sc->slot_of[at] == 0) {
    gboolean ok = sc_rel_visit_node(c, v, stop, error);
    if (ok && !*stop)
      sc_rel_memo_record(c, v);
    return ok;
  }
  slot *s = &sc->slots[sc->slot_of[at] - 1];
  sc->n_used++;
  wait_done(sc, s);
  /* the proof's condition answers to the walk's memos, for the nodes the
   * walk proves after this one (the slot is done: neither is in use;
   * the answers of a dropped proof are passed at the slot's next
   * commit).  Not the other way: a slot seeded with the walk's answers
   * at each dispatch saved 0.5 M instructions of evaluations on the HLO
   * capture for 7.4 M of copying (docs/performance.md, session 29) */
  if (s->ctx.compiled != NULL && c->compiled != NULL)
    sc_lemma_rules_pass_memos(s->ctx.compiled, c->compiled);
  sc->ahead_seconds += s->proof.seconds;
  /* commit: the proof's expressions and counters join the walk's */
  for (guint i = 0; i < s->owned->len; i++)
    g_ptr_array_add(c->owned, g_ptr_array_index(s->owned, i));
  g_ptr_array_set_size(s->owned, 0);
  sc_budget_absorb(c->opts->limits.budget, s->opts.limits.budget);
  g_clear_pointer(&s->opts.limits.budget, sc_budget_free);
  c->res->stats.explored += s->res.stats.explored;
  c->res->stats.applied += s->res.stats.applied;
  sc_rel_ctx *x = &s->ctx;
  x->res = c->res;
  x->owned = c->owned;
  x->pending = c->pending;
  x->pending_excused = c->pending_excused;
  x->n_live = c->n_live;
  gboolean ok = sc_rel_visit_finish(x, &s->proof, stop, error);
  c->pending = x->pending;
  c->pending_excused = x->pending_excused;
  c->n_live = x->n_live;
  if (ok && !*stop)
    sc_rel_memo_record(x, v);
  x->res = &s->res;
  x->owned = s->owned;
  sc->slot_of[at] = 0;
  s->pos = UINT32_MAX;
  return ok;
}
