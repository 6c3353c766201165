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

/* The backstop's grace past the limit: max(10 s, 10 %). */
static double backstop_grace(const sc_budget *b) {
  return b->seconds / 10 > 10 ? b->seconds / 10 : 10;
}

/* What the SIGXCPU handler writes: composed before it is armed, since a
 * handler may only write(2) (truncated at the buffers' size). */
static char backstop_stderr[512];
static char backstop_stdout[4096];
static size_t backstop_stderr_len, backstop_stdout_len;

static void write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w <= 0)
      return;
    s += w;
    n -= (size_t)w;
  }
}

static void on_sigxcpu(int sig) {
  (void)sig;
  write_all(STDOUT_FILENO, backstop_stdout, backstop_stdout_len);
  write_all(STDERR_FILENO, backstop_stderr, backstop_stderr_len);
  _exit(3); /* SC_EXIT_LIMIT */
}

static size_t copy_text(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= cap)
    return 0; /* too long to print whole: nothing rather than a cut JSON */
  memcpy(dst, src, n);
  return n;
}

void sc_budget_backstop_report(const char *out) {
  backstop_stdout_len = copy_text(backstop_stdout, sizeof backstop_stdout, out);
}


/* The RLIMIT_CPU the backstop leaves in effect (RLIM_INFINITY: none):
 * the limit plus its grace, or a tighter one inherited (*INHERITED). */
static rlim_t backstop_limit(const sc_budget *b, gboolean *inherited) {
  struct rlimit rl;
  *inherited = FALSE;
  if (getrlimit(RLIMIT_CPU, &rl) != 0)
    return RLIM_INFINITY;
  rlim_t want = RLIM_INFINITY;
  if (b != NULL && b->seconds > 0) {
    want = (rlim_t)(sc_budget_cpu_seconds() + b->seconds + backstop_grace(b)) + 1;
    if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
      want = rl.rlim_max;
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= want) {
    *inherited = TRUE;
    return rl.rlim_cur;
  }
  return want;
}

char *sc_budget_backstop_reason(const sc_budget *b) {
  gboolean inherited;
  rlim_t at = backstop_limit(b, &inherited);
  if (inherited)
    return g_strdup_printf("time limit (RLIMIT_CPU %llu s, set by the caller): reached in a step "
                           "that does not check the budget",
                           (unsigned long long)at);
  return g_strdup_printf("time limit (--time-limit %g s of CPU): passed by %g s of grace in a "
                         "step that does not check it",
                         b ? b->seconds : 0.0, b ? backstop_grace(b) : 0.0);
}

void sc_budget_arm_backstop(const sc_budget *b) {
  gboolean inherited;
  rlim_t at = backstop_limit(b, &inherited);
  if (at == RLIM_INFINITY)
    return;
  g_autofree char *reason = sc_budget_backstop_reason(b);
  g_autofree char *line = g_strdup_printf("shardcheck: limit: %s; stopped\n", reason);
  backstop_stderr_len = copy_text(backstop_stderr, sizeof backstop_stderr, line);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigxcpu;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGXCPU, &sa, NULL) != 0 || inherited)
    return; /* an inherited, tighter limit stays */
  struct rlimit rl;
  if (getrlimit(RLIMIT_CPU, &rl) != 0)
    return;
  rl.rlim_cur = at;
  (void)setrlimit(RLIMIT_CPU, &rl);
}
