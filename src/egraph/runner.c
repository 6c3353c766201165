/* runner.c — equality saturation: iterations of search, apply, rebuild
 * under iteration, node and time limits, with egg's simple and backoff
 * schedulers.
 *
 * Invariants: the e-graph is clean at the start of every search phase and
 * when sc_runner_run returns; all searches of an iteration see the same
 * e-graph (matches are collected before any is applied), so the result of
 * an iteration does not depend on rule order except through union order.
 * An iteration is "saturated" when it applied no union, left node and
 * class counts unchanged, and the scheduler has no banned rule left (egg's
 * can_be_saturated).  A rule one of whose operators is absent from the
 * e-graph is not searched (it cannot match; operators never leave an
 * e-graph, so only a new operator can change that: the operator-indexed
 * schedule). */
#include "rewrite-private.h"
#include "egraph-private.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const stop_names[] = {
#define SC_X_STOP(sym, word) word,
    SC_STOP_REASONS(SC_X_STOP)
#undef SC_X_STOP
};

const char *sc_stop_reason_name(sc_stop_reason r) {
  if ((unsigned)r >= G_N_ELEMENTS(stop_names))
    return "unknown";
  return stop_names[r];
}

static gboolean env_u32(const char *name, uint32_t *out) {
  const char *s = g_getenv(name);
  if (!s || !*s)
    return FALSE;
  guint64 v;
  if (!g_ascii_string_to_unsigned(s, 10, 1, UINT32_MAX, &v, NULL))
    return FALSE;
  *out = (uint32_t)v;
  return TRUE;
}

void sc_runner_limits_init(sc_runner_limits *lim) {
  lim->budget = NULL;
  lim->iter_limit = 30;
  lim->node_limit = 10000;
  lim->time_limit = 5.0;
  lim->scheduler = SC_SCHED_BACKOFF;
  lim->match_limit = 1000;
  lim->ban_length = 5;
  env_u32("SC_ITER_LIMIT", &lim->iter_limit);
  env_u32("SC_NODE_LIMIT", &lim->node_limit);
  const char *t = g_getenv("SC_TIME_LIMIT");
  if (t && *t) {
    char *end = NULL;
    double v = g_ascii_strtod(t, &end);
    if (end && *end == '\0' && v > 0 && v < 1e9)
      lim->time_limit = v;
  }
}

typedef struct {
  uint32_t times_applied, times_banned;
  uint64_t banned_until;
  uint32_t since;     /* epoch of the last complete search (semi-naive) */
  uint32_t prev_since; /* since before this iteration's search */
  gboolean complete;  /* searched completely in this iteration */
  gboolean present;   /* every operator of its patterns is in the e-graph */
} rule_stats;

struct sc_runner {
  sc_egraph *eg;
  sc_runner_limits lim;
  sc_stop_reason stop;
  GArray *iters; /* sc_iteration */
  rule_stats *stats;
  uint32_t n_stats;
  gint64 start_us;
  double start_cpu; /* thread CPU seconds at the start of the run */
  double seconds;
  gboolean check; /* SC_EGRAPH_CHECK=1: sc_egraph_check after rebuilds */
  sc_rewrite **last_rules; /* the previous run's rule array (a copy) */
  uint32_t n_last_rules;
  uint32_t ops_seen; /* sc_eg_n_ops when `present` was last brought up to
                        date (UINT32_MAX: never) */
  /* the matches of one iteration, every rule's after the previous one's:
   * rule i's are [match_off[i], match_off[i + 1]) (one array for all the
   * runs: a runner runs hundreds of times over hundreds of rules) */
  GArray *match_buf;
  uint32_t *match_off;
  uint32_t cap_off;
  /* the changed-classes cones of this iteration's search phase
   * (sc_egraph_near_changed), for the two most recent values of since */
  struct {
    uint8_t *near;
    uint32_t cap, since, phase; /* phase: n_phase when made (0: never) */
  } cone[2];
  uint32_t n_phase; /* search phases begun by this runner */
  sc_vec front, next;
};

/* The cone of SINCE for the current search phase, made at first use. */
static const uint8_t *cone_of(sc_runner *r, uint32_t since) {
  for (int i = 0; i < 2; i++)
    if (r->cone[i].phase == r->n_phase && r->cone[i].since == since)
      return r->cone[i].near;
  int i = r->cone[0].phase != r->n_phase ? 0 : r->cone[1].phase != r->n_phase ? 1
          : (r->cone[0].since < r->cone[1].since ? 0 : 1);
  uint32_t n = sc_egraph_n_ids(r->eg);
  if (r->cone[i].cap < n) {
    r->cone[i].cap = n + n / 2 + 64;
    g_free(r->cone[i].near);
    r->cone[i].near = g_new(uint8_t, r->cone[i].cap);
  }
  sc_egraph_near_changed(r->eg, since, r->cone[i].near, &r->front, &r->next);
  r->cone[i].since = since;
  r->cone[i].phase = r->n_phase;
  return r->cone[i].near;
}

sc_runner *sc_runner_new(sc_egraph *eg, const sc_runner_limits *lim) {
  sc_runner *r = g_new0(sc_runner, 1);
  r->eg = eg;
  if (lim)
    r->lim = *lim;
  else
    sc_runner_limits_init(&r->lim);
  r->iters = g_array_new(FALSE, TRUE, sizeof(sc_iteration));
  r->check = g_strcmp0(g_getenv("SC_EGRAPH_CHECK"), "1") == 0;
  r->ops_seen = UINT32_MAX;
  r->match_buf = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  return r;
}

void sc_runner_free(sc_runner *r) {
  if (!r)
    return;
  g_array_unref(r->iters);
  g_free(r->stats);
  g_free(r->last_rules);
  g_array_unref(r->match_buf);
  g_free(r->match_off);
  for (int i = 0; i < 2; i++)
    g_free(r->cone[i].near);
  sc_vec_clear(&r->front);
  sc_vec_clear(&r->next);
  g_free(r);
}

static double elapsed(const sc_runner *r) {
  return (double)(g_get_monotonic_time() - r->start_us) / 1e6;
}

/* CPU seconds of the calling thread (a system call: no vDSO path). */
static double thread_cpu_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The run's time limit is CPU time of the thread running it, so that the
 * verdict does not depend on the machine's load (or on the other threads
 * of `check --jobs N`).  A thread's CPU time never exceeds the wall time
 * since the start, so the clock is read only once the wall time has
 * passed the limit (never, on an idle machine, before the limit). */
static gboolean over_time(const sc_runner *r) {
  if (elapsed(r) <= r->lim.time_limit)
    return FALSE;
  return thread_cpu_seconds() - r->start_cpu > r->lim.time_limit;
}

static sc_stop_reason check_limits(const sc_runner *r, uint32_t iteration) {
  /* the overall budget first (budget.h): once spent, every run stops */
  if (r->lim.budget != NULL &&
      sc_budget_check(r->lim.budget, sc_egraph_n_nodes(r->eg)) != NULL)
    return sc_budget_spent_on_enodes(r->lim.budget) ? SC_STOP_NODE_LIMIT : SC_STOP_TIME_LIMIT;
  if (over_time(r))
    return SC_STOP_TIME_LIMIT;
  if (sc_egraph_n_nodes(r->eg) > r->lim.node_limit)
    return SC_STOP_NODE_LIMIT;
  if (iteration >= r->lim.iter_limit)
    return SC_STOP_ITERATION_LIMIT;
  return SC_STOP_NONE;
}

/* egg's BackoffScheduler::can_stop: fast-forward the bans instead. */
static gboolean can_stop(sc_runner *r, uint32_t n_rules, uint64_t iteration) {
  if (r->lim.scheduler != SC_SCHED_BACKOFF)
    return TRUE;
  uint64_t min_ban = UINT64_MAX;
  for (uint32_t i = 0; i < n_rules; i++)
    if (r->stats[i].banned_until > iteration)
      min_ban = MIN(min_ban, r->stats[i].banned_until);
  if (min_ban == UINT64_MAX)
    return TRUE;
  uint64_t delta = min_ban - iteration;
  for (uint32_t i = 0; i < n_rules; i++)
    if (r->stats[i].banned_until > iteration)
      r->stats[i].banned_until -= delta;
  return FALSE;
}

sc_stop_reason sc_runner_run(sc_runner *r, sc_rewrite *const *rules,
                             uint32_t n_rules) {
  g_return_val_if_fail(n_rules == 0 || rules != NULL, SC_STOP_NONE);
  sc_egraph *eg = r->eg;
  if (r->n_stats < n_rules) {
    r->stats = g_renew(rule_stats, r->stats, n_rules);
    memset(r->stats + r->n_stats, 0,
           (n_rules - r->n_stats) * sizeof(rule_stats));
    r->n_stats = n_rules;
  }
  /* The same rules as the previous run: their searches go on from where
   * that run left them (what changed since, the caller's additions
   * included, carries a newer stamp).  Other rules: complete searches. */
  gboolean same = r->last_rules != NULL && r->n_last_rules == n_rules &&
                  (n_rules == 0 || memcmp(r->last_rules, rules, n_rules * sizeof *rules) == 0);
  if (!same) {
    for (uint32_t i = 0; i < n_rules; i++) {
      r->stats[i].since = 0;
      r->stats[i].present = FALSE;
    }
    r->ops_seen = UINT32_MAX;
    g_free(r->last_rules);
    r->last_rules = n_rules ? g_memdup2(rules, n_rules * sizeof *rules) : NULL;
    r->n_last_rules = n_rules;
  }
  r->start_us = g_get_monotonic_time();
  r->start_cpu = thread_cpu_seconds();
  r->stop = SC_STOP_NONE;
  eg->budget = r->lim.budget; /* the searches check it too (machine.c) */
  if (!sc_egraph_is_clean(eg))
    sc_egraph_rebuild(eg);
  if (r->cap_off < n_rules + 1) {
    r->cap_off = n_rules + 1;
    r->match_off = g_renew(uint32_t, r->match_off, r->cap_off);
  }
  GArray *mbuf = r->match_buf;
  uint32_t *moff = r->match_off;
  uint32_t iter0 = r->iters->len;

  for (;;) {
    uint32_t it = r->iters->len - iter0;
    sc_stop_reason stop = check_limits(r, it);
    if (stop != SC_STOP_NONE) {
      r->stop = stop;
      break;
    }
    sc_iteration rec = {0};
    uint32_t nodes0 = sc_egraph_n_nodes(eg);
    uint32_t classes0 = sc_egraph_n_classes(eg);
    gint64 t0 = g_get_monotonic_time();

    /* The operator-indexed schedule: a rule one of whose operators is not
     * in the e-graph cannot match, so it is not searched (as if searched
     * completely and found nothing).  Operators only appear, so only rules
     * not yet present are looked at, and only when a new one appeared. */
    if (sc_eg_n_ops(eg) != r->ops_seen) {
      for (uint32_t i = 0; i < n_rules; i++)
        if (!r->stats[i].present)
          r->stats[i].present = sc_rewrite_ops_present(rules[i], eg);
      r->ops_seen = sc_eg_n_ops(eg);
    }

    /* search */
    r->n_phase++;
    g_array_set_size(mbuf, 0);
    uint32_t searched_upto = 0;
    for (uint32_t i = 0; i < n_rules && stop == SC_STOP_NONE; i++, searched_upto = i) {
      rule_stats *s = &r->stats[i];
      s->complete = FALSE;
      moff[i] = mbuf->len;
      uint64_t n = 0;
      if (r->lim.scheduler == SC_SCHED_BACKOFF) {
        if (it < s->banned_until)
          continue;
        uint64_t threshold = (uint64_t)r->lim.match_limit
                             << MIN(s->times_banned, 40u);
        n = s->present ? sc_rewrite_search_near(rules[i], eg, threshold + 1, mbuf, s->since,
                                                s->since ? cone_of(r, s->since) : NULL)
                       : 0;
        rec.skipped += !s->present;
        if (n > threshold) {
          uint64_t ban = (uint64_t)r->lim.ban_length
                         << MIN(s->times_banned, 40u);
          s->times_banned++;
          s->banned_until = it + ban;
          g_array_set_size(mbuf, moff[i]);
        } else {
          s->times_applied++;
          s->complete = TRUE;
          rec.matches += n;
        }
      } else {
        n = s->present ? sc_rewrite_search_near(rules[i], eg, 0, mbuf, s->since,
                                                s->since ? cone_of(r, s->since) : NULL)
                       : 0;
        rec.skipped += !s->present;
        rec.matches += n;
        s->complete = TRUE;
      }
      /* the clock every 16 rules: a search that finds nothing is short */
      if ((i % 16 == 15 || n > 0) && over_time(r))
        stop = SC_STOP_TIME_LIMIT;
      if ((i % 16 == 15 || n > 0) && r->lim.budget != NULL &&
          sc_budget_check(r->lim.budget, sc_egraph_n_nodes(eg)) != NULL)
        stop = sc_budget_spent_on_enodes(r->lim.budget) ? SC_STOP_NODE_LIMIT
                                                        : SC_STOP_TIME_LIMIT;
    }
    for (uint32_t i = searched_upto; i <= n_rules; i++)
      moff[i] = mbuf->len;
    gint64 t1 = g_get_monotonic_time();
    /* what changes from here on is new to the rules searched completely */
    uint32_t epoch = sc_eg_advance_epoch(eg);
    for (uint32_t i = 0; i < n_rules; i++)
      if (r->stats[i].complete) {
        r->stats[i].prev_since = r->stats[i].since;
        r->stats[i].since = epoch;
      }

    /* apply */
    uint32_t applied_upto = 0; /* rules whose matches were all applied */
    for (uint32_t i = 0; i < n_rules && stop == SC_STOP_NONE; i++, applied_upto = i) {
      uint32_t w = sc_rewrite_match_width(rules[i], eg);
      const uint32_t *m = (const uint32_t *)(void *)mbuf->data + moff[i];
      guint len = moff[i + 1] - moff[i];
      for (guint j = 0, k = 1; j + w <= len; j += w, k++) {
        /* software pipeline: memo slots 16 matches ahead, records 8 */
        if (j + 16 * w + w <= len)
          sc_rewrite_prefetch(rules[i], eg, m + j + 16 * w + 1, 0);
        if (j + 8 * w + w <= len)
          sc_rewrite_prefetch(rules[i], eg, m + j + 8 * w + 1, 1);
        if (sc_rewrite_apply_match(rules[i], eg, m + j, i))
          rec.applied++;
        /* the overall budget (time, memory, e-nodes) every 256 matches:
         * one rule's matches can grow the e-graph past it */
        if (k % 256 == 0 && r->lim.budget != NULL &&
            sc_budget_check(r->lim.budget, sc_egraph_n_nodes(eg)) != NULL) {
          stop = sc_budget_spent_on_enodes(r->lim.budget) ? SC_STOP_NODE_LIMIT
                                                          : SC_STOP_TIME_LIMIT;
          break;
        }
      }
      if (stop != SC_STOP_NONE)
        break; /* rule i only partly applied: not counted in applied_upto */
      if (len == 0)
        continue; /* nothing added: the limits stand as checked */
      stop = check_limits(r, it);
      if (stop == SC_STOP_ITERATION_LIMIT)
        stop = SC_STOP_NONE; /* counted at the next iteration's start */
    }
    /* a limit stopped the apply phase: the matches of the rules not
     * applied are found again by their next search */
    for (uint32_t i = applied_upto; i < n_rules; i++)
      if (r->stats[i].complete)
        r->stats[i].since = r->stats[i].prev_since;
    gint64 t2 = g_get_monotonic_time();
    rec.rebuilt = sc_egraph_rebuild(eg);
    gint64 t3 = g_get_monotonic_time();
    if (r->check) {
      g_autoptr(GError) err = NULL;
      if (!sc_egraph_check(eg, &err))
        g_error("e-graph invariant broken after iteration %u: %s",
                r->iters->len, err->message); /* a bug: abort */
    }
    rec.nodes = sc_egraph_n_nodes(eg);
    rec.classes = sc_egraph_n_classes(eg);
    rec.search_s = (double)(t1 - t0) / 1e6;
    rec.apply_s = (double)(t2 - t1) / 1e6;
    rec.rebuild_s = (double)(t3 - t2) / 1e6;
    g_array_append_val(r->iters, rec);
    if (stop != SC_STOP_NONE) {
      r->stop = stop;
      break;
    }
    if (rec.applied == 0 && rec.nodes == nodes0 && rec.classes == classes0 &&
        can_stop(r, n_rules, it)) {
      r->stop = SC_STOP_SATURATED;
      break;
    }
  }
  eg->budget = NULL;
  r->seconds = elapsed(r);
  return r->stop;
}

sc_stop_reason sc_runner_stop_reason(const sc_runner *r) {
  return r->stop;
}

uint32_t sc_runner_n_iterations(const sc_runner *r) {
  return r->iters->len;
}

const sc_iteration *sc_runner_iteration(const sc_runner *r, uint32_t i) {
  g_return_val_if_fail(i < r->iters->len, NULL);
  return &g_array_index(r->iters, sc_iteration, i);
}

double sc_runner_seconds(const sc_runner *r) {
  return r->seconds;
}

uint32_t sc_runner_times_banned(const sc_runner *r, uint32_t rule) {
  g_return_val_if_fail(rule < r->n_stats, 0);
  return r->stats[rule].times_banned;
}
