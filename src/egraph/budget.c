/* budget.c — the overall budget of a check (budget.h): CPU time, peak
 * memory, e-nodes per e-graph.  Measuring CPU time and peak memory costs
 * two system calls (a CPU-time clock_gettime has no vDSO path, getrusage
 * never has): at some 30,000 checks a run they were a fifth of a small
 * capture's CPU time, all of it in the kernel.  So they are measured at
 * most once per MEASURE_INTERVAL_US of the monotonic clock (a vDSO read);
 * the e-node count, free to read, is compared on every check. */
#include "shardcheck/budget.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Wall microseconds between two measures of CPU time and peak memory: a
 * limit is noticed at most this late (times the threads of --jobs for CPU
 * time). */
#define MEASURE_INTERVAL_US 2000

struct sc_budget {
  double seconds;      /* <= 0: none */
  uint64_t memory_mib; /* 0: none */
  uint64_t max_enodes; /* 0: none */
  char *spent;         /* the reason, once spent */
  gboolean on_enodes;  /* spent by max_enodes */
  gint64 next_measure_us; /* monotonic time of the next measure (0: at once) */
  GMutex lock;         /* the visits of `check --jobs N` check it from N threads */
};

sc_budget *sc_budget_new(double cpu_seconds, uint64_t memory_mib, uint64_t max_enodes) {
  sc_budget *b = g_new0(sc_budget, 1);
  b->seconds = cpu_seconds;
  b->memory_mib = memory_mib;
  b->max_enodes = max_enodes;
  g_mutex_init(&b->lock);
  return b;
}

void sc_budget_free(sc_budget *b) {
  if (b == NULL)
    return;
  g_free(b->spent);
  g_mutex_clear(&b->lock);
  g_free(b);
}

double sc_budget_cpu_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
    return 0.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Peak resident set in MiB (Linux reports ru_maxrss in KiB). */
static uint64_t peak_mib(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0)
    return 0;
  return (uint64_t)ru.ru_maxrss / 1024u;
}

static const char *check_locked(sc_budget *b, uint64_t enodes);

const char *sc_budget_check(sc_budget *b, uint64_t enodes) {
  if (b == NULL)
    return NULL;
  g_mutex_lock(&b->lock);
  const char *r = check_locked(b, enodes);
  g_mutex_unlock(&b->lock);
  return r; /* b->spent, set once and kept until the budget is freed */
}

static const char *check_locked(sc_budget *b, uint64_t enodes) {
  if (b->spent != NULL)
    return b->spent;
  if (b->max_enodes > 0 && enodes > b->max_enodes) {
    b->spent = g_strdup_printf("e-node limit (--max-enodes %" G_GUINT64_FORMAT
                               "): an e-graph reached %" G_GUINT64_FORMAT " e-nodes",
                               b->max_enodes, enodes);
    b->on_enodes = TRUE;
    return b->spent;
  }
  if (b->seconds <= 0 && b->memory_mib == 0)
    return NULL;
  gint64 now = g_get_monotonic_time();
  if (now < b->next_measure_us)
    return NULL;
  b->next_measure_us = now + MEASURE_INTERVAL_US;
  if (b->seconds > 0) {
    double s = sc_budget_cpu_seconds();
    if (s > b->seconds) {
      b->spent = g_strdup_printf("time limit (--time-limit %g s of CPU): %.2f s used",
                                 b->seconds, s);
      return b->spent;
    }
  }
  if (b->memory_mib > 0) {
    uint64_t m = peak_mib();
    if (m > b->memory_mib) {
      b->spent = g_strdup_printf("memory limit (--memory-limit %" G_GUINT64_FORMAT
                                 " MiB): %" G_GUINT64_FORMAT " MiB resident at the peak",
                                 b->memory_mib, m);
      return b->spent;
    }
  }
  return NULL;
}

const char *sc_budget_spent(const sc_budget *b) {
  if (b == NULL)
    return NULL;
  g_mutex_lock((GMutex *)&b->lock);
  const char *r = b->spent;
  g_mutex_unlock((GMutex *)&b->lock);
  return r;
}

gboolean sc_budget_spent_on_enodes(const sc_budget *b) {
  if (b == NULL)
    return FALSE;
  g_mutex_lock((GMutex *)&b->lock);
  gboolean r = b->on_enodes;
  g_mutex_unlock((GMutex *)&b->lock);
  return r;
}

sc_budget *sc_budget_new_like(const sc_budget *b) {
  return b ? sc_budget_new(b->seconds, b->memory_mib, b->max_enodes) : NULL;
}

void sc_budget_absorb(sc_budget *b, const sc_budget *from) {
  if (b == NULL || from == NULL)
    return;
  g_mutex_lock((GMutex *)&from->lock);
  char *reason = g_strdup(from->spent);
  gboolean on_enodes = from->on_enodes;
  g_mutex_unlock((GMutex *)&from->lock);
  g_mutex_lock(&b->lock);
  if (b->spent == NULL && reason != NULL) {
    b->spent = g_steal_pointer(&reason);
    b->on_enodes = on_enodes;
  }
  g_mutex_unlock(&b->lock);
  g_free(reason);
}

static void on_sigxcpu(int sig) {
  static const char msg[] = "shardcheck: limit: the CPU time limit (--time-limit) was passed "
                            "in a step that does not check it; stopped\n";
  (void)sig;
  ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)w;
  _exit(3); /* SC_EXIT_LIMIT */
}

void sc_budget_arm_backstop(const sc_budget *b) {
  if (b == NULL || b->seconds <= 0)
    return;
  double grace = b->seconds / 10 > 10 ? b->seconds / 10 : 10;
  double soft = sc_budget_cpu_seconds() + b->seconds + grace;
  struct rlimit rl;
  if (getrlimit(RLIMIT_CPU, &rl) != 0)
    return;
  rlim_t want = (rlim_t)soft + 1;
  if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
    want = rl.rlim_max;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= want)
    return; /* already tighter */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigxcpu;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGXCPU, &sa, NULL) != 0)
    return;
  rl.rlim_cur = want;
  (void)setrlimit(RLIMIT_CPU, &rl);
}
