/* check.c — `shardcheck check`: load a bundle and the lemmas, run relation
 * inference, report (text or the spec's JSON object) and exit with the
 * spec's code: 0 refines, 1 fails, 2 input error, 3 limit.
 *
 * cvc5 is the symtab's oracle from the start of the load (a load option),
 * so the shape rules' comparisons reach it as the lemmas' conditions do.
 * The symbolic-size statistics are reported in two parts, loading and
 * checking (the symtab's counters read after the load and at the end),
 * with the cvc5 bridge's own counters: in the text after the report, in
 * the JSON object as stats.symbolic (only for bundles with symbols). */
#include "cli/cli.h"
#include "cli/options.h"
#include "shardcheck/budget.h"
#include "shardcheck/report.h"
#include "shardcheck/usercheck.h"
#include "shardcheck/validate.h"
#include "smt/smt.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --jobs when not given (docs/shardcheck.1): one thread, until a second
 * one pays for itself.  The result is the same for every N
 * (tests/models/jobs-same.py); since the slots share the compiled lemmas
 * and no proof made ahead is dropped for a later template, a second thread
 * costs about 3% more instructions on the HLO capture and up to 5% more
 * CPU on the small real captures (the slots' own condition memos), while
 * it saves about a fifth at 126 layers (docs/performance.md, "--jobs: one
 * thread per core?", "--jobs: the carries off the main thread", "--jobs:
 * one compiled lemma set; loading the bundle" and "Session 28: relations
 * and --jobs"). */
#define SC_CLI_DEFAULT_JOBS 1

typedef struct {
  gboolean tty;
  gboolean drawn;
} progress_state;

/* A one-line progress indicator on a terminal (stderr), redrawn in place. */
static void on_progress(uint32_t done, uint32_t total, const char *node, void *user) {
  progress_state *p = user;
  if (!p->tty)
    return;
  if (node == NULL) {
    if (p->drawn)
      fprintf(stderr, "\r\033[K");
    return;
  }
  fprintf(stderr, "\r\033[K[%u/%u] %s", done + 1, total, node);
  fflush(stderr);
  p->drawn = TRUE;
}

/* b - a, counter by counter (the part of B after snapshot A). */
static sc_sym_stats stats_since(const sc_sym_stats *a, const sc_sym_stats *b) {
  sc_sym_stats d;
  d.comparisons = b->comparisons - a->comparisons;
  d.nf_unknown = b->nf_unknown - a->nf_unknown;
  d.oracle_queries = b->oracle_queries - a->oracle_queries;
  d.cache_hits = b->cache_hits - a->cache_hits;
  d.oracle_calls = b->oracle_calls - a->oracle_calls;
  d.oracle_yes = b->oracle_yes - a->oracle_yes;
  d.oracle_no = b->oracle_no - a->oracle_no;
  d.oracle_unknown = b->oracle_unknown - a->oracle_unknown;
  d.skipped = b->skipped - a->skipped;
  d.oracle_us = b->oracle_us - a->oracle_us;
  return d;
}

static json_t *sym_stats_json(const sc_sym_stats *s) {
  return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "comparisons",
                   (json_int_t)s->comparisons, "normal_form_unknown", (json_int_t)s->nf_unknown,
                   "oracle_queries", (json_int_t)s->oracle_queries, "cache_hits",
                   (json_int_t)s->cache_hits, "oracle_calls", (json_int_t)s->oracle_calls, "yes",
                   (json_int_t)s->oracle_yes, "no", (json_int_t)s->oracle_no, "unknown",
                   (json_int_t)s->oracle_unknown, "skipped", (json_int_t)s->skipped,
                   "oracle_seconds", (double)s->oracle_us / 1e6);
}

/* Adds stats.symbolic {loading, checking, cvc5} to the result object
 * *JSON_TEXT (replaced). */
static void add_symbolic_json(char **json_text, const sc_sym_stats *load,
                              const sc_sym_stats *checking, const sc_smt_stats *smt) {
  json_t *root = json_loads(*json_text, 0, NULL);
  json_t *stats = root ? json_object_get(root, "stats") : NULL;
  if (stats == NULL || !json_is_object(stats)) {
    json_decref(root);
    return;
  }
  json_t *cvc5 = json_pack(
      "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "queries", (json_int_t)smt->queries,
      "yes", (json_int_t)smt->yes, "no", (json_int_t)smt->no, "unknown",
      (json_int_t)smt->undecided, "inconsistent", (json_int_t)smt->inconsistent, "checks",
      (json_int_t)smt->checks, "limit_hits", (json_int_t)smt->limit_hits, "errors",
      (json_int_t)smt->errors, "seconds", (double)smt->time_us / 1e6);
  json_object_set_new(stats, "symbolic",
                      json_pack("{s:o, s:o, s:o}", "loading", sym_stats_json(load), "checking",
                                sym_stats_json(checking), "cvc5", cvc5));
  char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (s != NULL) {
    g_free(*json_text);
    *json_text = g_strdup(s);
    free(s);
  }
}

/* --explain=all is spelled as the hidden --explain-all for GOption (an
 * optional value would swallow the BUNDLE after a bare --explain). */
/* An error that ends the check before a verdict: JSON on stdout with
 * --format json, else one line on stderr.  ERR stays the caller's. */
static void print_check_error(gboolean json, const GError *err) {
  if (json) {
    sc_bundle_diag d = {0};
    sc_cli_print_error_json(err->message, &d);
  } else {
    fprintf(stderr, "shardcheck: %s\n", err->message);
  }
}

/* The result `check --format json` prints when the CPU-time backstop
 * (budget.h) ends the process in a step that does not poll the budget: a
 * well-formed result with verdict "limit" naming the limit (the node
 * being visited is not known there: null). */
/* A check that stopped at a limit at an unmapped spec node, while the
 * overall budget is not spent (a limit of one node's search: its node
 * limit): when the values refute an expected output relation on two runs
 * (validate.h), no walk can prove the program, and the verdict is fails
 * there (refuted.c).  A correct program's expectations hold on every run:
 * its limit stays a limit. */
#define REFUTE_RUNS 2
static void refute_limit(const sc_bundle *b, sc_infer_result *res, sc_budget *budget,
                         const sc_lemma_set *lemmas) {
  if (sc_infer_verdict(res) != SC_VERDICT_LIMIT ||
      sc_infer_failure_kind(res) != SC_FAILURE_UNMAPPED ||
      sc_budget_check(budget, 0) != NULL)
    return;
  sc_validate_options vo;
  sc_validate_options_init(&vo);
  vo.lemmas = lemmas;
  g_autofree char *why = sc_validate_refute_expected(b, &vo, REFUTE_RUNS);
  if (why != NULL)
    sc_infer_result_refute_limit(res, why);
}

static void set_backstop_report(const sc_budget *budget) {
  g_autofree char *reason = sc_budget_backstop_reason(budget);
  json_t *o = json_pack("{s:s, s:{}, s:{s:s, s:n, s:s}}", "verdict", "limit", "output_relation",
                        "failure", "kind", "limit", "node", "limit", reason);
  char *s = json_dumps(o, JSON_COMPACT);
  g_autofree char *line = g_strdup_printf("%s\n", s);
  sc_budget_backstop_report(line);
  free(s);
  json_decref(o);
}

static void respell_explain_all(int argc, char **argv) {
  static char explain_all[] = "--explain-all";
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--explain=all") == 0)
      argv[i] = explain_all;
}

int sc_cli_check(int argc, char **argv) {
  g_auto(sc_cli_common) common = SC_CLI_COMMON_INIT;
  g_autofree char *html = NULL, *dot = NULL, *colour = NULL;
  g_auto(GStrv) lemma_dirs = NULL;
  g_auto(GStrv) rest = NULL;
  gboolean explain = FALSE, explain_all = FALSE, quiet = FALSE, validate = FALSE;
  gboolean no_memo = FALSE;
  gint jobs = SC_CLI_DEFAULT_JOBS;
  double time_limit = SC_BUDGET_DEFAULT_SECONDS;
  gint64 memory_limit = SC_BUDGET_DEFAULT_MEMORY_MIB, max_enodes = SC_BUDGET_DEFAULT_MAX_ENODES;
  GOptionEntry entries[] = {
      SC_CLI_FORMAT_ENTRY(&common),
      SC_CLI_LEMMAS_ENTRY(&lemma_dirs, "Also load the lemma files (*.lemma) of DIR (repeatable)"),
      {"explain", 0, 0, G_OPTION_ARG_NONE, &explain,
       "Show, per spec node, the lemmas applied and the impl nodes asserted, and why each output "
       "relation holds (the chain of lemmas and facts); --explain=all: also why the first "
       "relation of every visited node holds",
       NULL},
      {"explain-all", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &explain_all, NULL, NULL},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress line", NULL},
      {"no-memo", 0, 0, G_OPTION_ARG_NONE, &no_memo,
       "Prove every spec node, none carried by isomorphism from an earlier one (layer "
       "memoization)",
       NULL},
      {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
       "Threads proving spec nodes (default 1; 0: one per core); the result is the same for "
       "every N",
       "N"},
      {"validate", 0, 0, G_OPTION_ARG_NONE, &validate,
       "Run both graphs on related concrete inputs and evaluate every relation (exit 4 if one "
       "does not hold); on fails, show counterexamples",
       NULL},
      {"time-limit", 0, 0, G_OPTION_ARG_DOUBLE, &time_limit,
       "CPU seconds for the whole check, then exit 3 (default 1800; 0: none)", "SECONDS"},
      {"memory-limit", 0, 0, G_OPTION_ARG_INT64, &memory_limit,
       "Peak resident memory in MiB, then exit 3 (default 8192; 0: none)", "MiB"},
      {"max-enodes", 0, 0, G_OPTION_ARG_INT64, &max_enodes,
       "E-nodes of any one spec node's e-graph, then exit 3 (default 1000000; 0: none)", "N"},
      SC_CLI_MAX_INPUT_ENTRY(&common, "bundle or lemma file"),
      {"html", 0, 0, G_OPTION_ARG_FILENAME, &html,
       "Also write the result as one self-contained HTML page (with a picture of the failing "
       "neighbourhood) to FILE",
       "FILE"},
      {"dot", 0, 0, G_OPTION_ARG_FILENAME, &dot,
       "Also write the failing neighbourhood as a Graphviz graph to FILE", "FILE"},
      {"color", 0, 0, G_OPTION_ARG_STRING, &colour,
       "Colour the text report: auto (a terminal, unless NO_COLOR is set), always, never",
       "auto|always|never"},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, "BUNDLE"},
      SC_CLI_END_ENTRY,
  };
  respell_explain_all(argc, argv);
  if (!sc_cli_parse_common(
          &common, "shardcheck check", "- check that a bundle's impl refines its spec",
          "Examples:\n  shardcheck check models/mlp-tp2/bundle.json\n"
          "  shardcheck check --format json models/paper-example\n"
          "  shardcheck check --lemmas my-kernels/ my-model.json\n"
          "  shardcheck check --validate models/mlp-tp2\n"
          "  shardcheck check --html report.html --dot report.dot models/mlp-tp2-bugs/extra-scaling.json\n"
          "\nExit codes: 0 refines, 1 fails, 2 usage or input error, 3 resource limit,\n"
          "4 --validate found a relation that does not hold (a soundness bug).",
          entries, &argc, &argv))
    return SC_EXIT_INPUT_ERROR;
  GError *err = NULL;
  gboolean json = common.json;
  sc_report_colour colour_mode = SC_COLOUR_AUTO;
  if (!sc_report_parse_colour(colour, &colour_mode, &err)) {
    fprintf(stderr, "shardcheck: %s\n", err->message);
    g_error_free(err);
    return SC_EXIT_INPUT_ERROR;
  }
  if (jobs < 0 || jobs > 256) {
    fprintf(stderr, "shardcheck: --jobs takes a number from 0 (one per core) to 256\n");
    return SC_EXIT_INPUT_ERROR;
  }
  if (jobs == 0)
    jobs = (gint)g_get_num_processors();
  if (!(time_limit >= 0) || memory_limit < 0 || max_enodes < 0 || common.max_input <= 0) {
    fprintf(stderr, "shardcheck: --time-limit, --memory-limit and --max-enodes take a number "
                    ">= 0, --max-input-bytes one > 0\n");
    return SC_EXIT_INPUT_ERROR;
  }
  sc_cli_set_max_input(&common); /* > 0: checked above */
  if (rest == NULL || rest[0] == NULL || rest[1] != NULL) {
    fprintf(stderr, "shardcheck: check takes exactly one BUNDLE\n"
                    "Usage: shardcheck check [--format text|json] [--lemmas DIR] BUNDLE\n");
    return SC_EXIT_INPUT_ERROR;
  }
  for (uint32_t i = 0; lemma_dirs && lemma_dirs[i]; i++) {
    if (!g_file_test(lemma_dirs[i], G_FILE_TEST_IS_DIR)) {
      fprintf(stderr, "shardcheck: --lemmas: '%s' is not a directory\n", lemma_dirs[i]);
      return SC_EXIT_INPUT_ERROR;
    }
  }
  g_autofree char *path = g_file_test(rest[0], G_FILE_TEST_IS_DIR)
                              ? g_build_filename(rest[0], "bundle.json", NULL)
                              : g_strdup(rest[0]);
  /* The budget counts the process's CPU time, loading included; the
   * backstop covers the steps that never check it, loading included. */
  g_autoptr(sc_budget) budget =
      sc_budget_new(time_limit, (uint64_t)memory_limit, (uint64_t)max_enodes);
  if (json)
    set_backstop_report(budget);
  sc_budget_arm_backstop(budget);
  /* Lemmas first: they may declare the custom operators a bundle uses. */
  g_autoptr(GString) where = g_string_new(NULL);
  /* Without --lemmas, the library waits for the bundle, which says which
   * lemmas can fire (select.c). */
  gboolean deferred = lemma_dirs == NULL;
  sc_lemma_set *lemmas = deferred ? sc_cli_load_lemmas_deferred(where, &err)
                                  : sc_cli_load_lemmas(TRUE, lemma_dirs, where, &err);
  if (!lemmas) {
    print_check_error(json, err);
    g_error_free(err);
    return SC_EXIT_INPUT_ERROR;
  }
  /* The user's lemmas (and operator definitions) are evaluated on random
   * instances before they may prove anything (usercheck.h). */
  uint32_t first_user = sc_cli_first_user_lemma(lemmas);
  if (lemma_dirs != NULL) {
    sc_lemcheck_options lc;
    sc_lemcheck_options_init(&lc);
    g_autoptr(GPtrArray) unchecked = g_ptr_array_new_with_free_func(g_free);
    if (!sc_usercheck_lemmas(lemmas, first_user, &lc, unchecked, NULL, &err)) {
      print_check_error(json, err);
      g_error_free(err);
      sc_lemma_set_free(lemmas);
      return SC_EXIT_INPUT_ERROR;
    }
    for (guint i = 0; i < unchecked->len; i++)
      fprintf(stderr, "shardcheck: warning: user lemma %s: unchecked, an assumption\n",
              (const char *)g_ptr_array_index(unchecked, i));
  }
  /* cvc5 decides the size comparisons that the normal form leaves open,
   * from the first shape rule the loader runs. */
  sc_smt *smt = sc_smt_new();
  sc_bundle_load_options lopts = {sc_smt_oracle(), smt};
  sc_bundle_diag diag = {0};
  sc_bundle *b = sc_bundle_load_opts(path, &lopts, &diag, &err);
  if (b == NULL) {
    int lcode = sc_cli_load_failed(json, err, &diag);
    g_error_free(err);
    sc_bundle_diag_clear(&diag);
    sc_smt_free(smt);
    sc_lemma_set_free(lemmas);
    return lcode;
  }
  if (deferred) {
    if (!sc_cli_select_lemmas(lemmas, b, &err)) {
      print_check_error(json, err);
      g_error_free(err);
      sc_bundle_free(b);
      sc_smt_free(smt);
      sc_lemma_set_free(lemmas);
      return SC_EXIT_INPUT_ERROR;
    }
    first_user = sc_lemma_set_n_lemmas(lemmas); /* all built in */
  }
  sc_sym_stats load_stats;
  sc_symtab_stats(sc_bundle_symtab(b), &load_stats);
  /* Unknown top-level fields (extensions) were ignored: say so. */
  for (uint32_t i = 0; i < sc_bundle_n_warnings(b); i++)
    fprintf(stderr, "shardcheck: warning: %s\n", sc_bundle_warning(b, i));

  progress_state prog = {!quiet && isatty(STDERR_FILENO), FALSE};
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.limits.budget = budget;
  opts.lemmas = lemmas;
  explain = explain || explain_all;
  opts.explain = explain;
  opts.explain_all = explain_all;
  opts.no_memo = no_memo;
  opts.jobs = (uint32_t)jobs;
  opts.progress = on_progress;
  opts.progress_user = &prog;
  sc_infer_result *res = sc_infer_run(b, &opts, &err);
  int code;
  if (!res) {
    /* An internal error (an unsound lemma caught by the shape analysis)
     * or lemmas that do not compile: no verdict. */
    print_check_error(json, err);
    code = err->domain == SC_INFER_ERROR && err->code == SC_INFER_ERROR_INTERNAL
               ? SC_EXIT_UNSOUND
               : SC_EXIT_INPUT_ERROR;
    g_error_free(err);
  } else {
    refute_limit(b, res, budget, lemmas);
    g_autoptr(GArray) assumed = sc_usercheck_opaque(lemmas, first_user, lemma_dirs, b, res);
    sc_report_options ropts = {
        .explain = explain,
        .n_lemmas = sc_lemma_set_n_all(lemmas),
        .lemma_dirs = where->str,
        .assumed_ops = assumed,
        .colour = sc_report_colour_enabled(colour_mode, STDOUT_FILENO),
    };
    /* a failure: did the values agree (a lemma missing) or differ? */
    sc_diagnose_options dopts;
    sc_diagnose_options_init(&dopts);
    dopts.lemmas = lemmas;
    g_autoptr(sc_diagnosis) diagnosis = sc_diagnose(b, res, &dopts);
    ropts.diagnosis = diagnosis;
    int vcode = -1;
    gboolean symbolic = sc_symtab_n_symbols(sc_bundle_symtab(b)) > 0;
    sc_sym_stats end_stats, check_stats;
    sc_symtab_stats(sc_bundle_symtab(b), &end_stats);
    check_stats = stats_since(&load_stats, &end_stats);
    sc_smt_stats smt_stats;
    sc_smt_get_stats(smt, &smt_stats);
    if (json) {
      g_autofree char *s = sc_report_json(b, res, &ropts);
      if (symbolic)
        add_symbolic_json(&s, &load_stats, &check_stats, &smt_stats);
      if (validate)
        vcode = sc_cli_validate(b, res, lemmas, TRUE, &s);
      printf("%s\n", s);
    } else {
      sc_report_text(stdout, b, res, &ropts);
      if (symbolic) {
        g_autofree char *l1 = sc_sym_stats_to_string(&load_stats);
        g_autofree char *l2 = sc_sym_stats_to_string(&check_stats);
        g_autofree char *l3 = sc_smt_stats_to_string(&smt_stats);
        printf("symbolic sizes, loading: %s\n", l1);
        printf("symbolic sizes, checking: %s\n", l2);
        printf("%s\n", l3);
      }
      if (validate)
        vcode = sc_cli_validate(b, res, lemmas, FALSE, NULL);
    }
    code = vcode >= 0 ? vcode : sc_report_exit_code(res);
    if (!sc_cli_write_report_files(html, dot, b, res, &ropts))
      code = SC_EXIT_INPUT_ERROR;
    sc_infer_result_free(res);
  }
  sc_bundle_free(b);
  sc_smt_free(smt);
  sc_lemma_set_free(lemmas);
  return code;
}
