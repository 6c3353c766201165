/* lemmas.c — `shardcheck lemmas check`: load the built-in lemmas (and each
 * --lemmas DIR), evaluate both sides of every lemma on random instances
 * with the reference interpreter (lemcheck.h) and report per lemma.  Exit
 * 0 when every lemma with instances passes, 1 when one fails, 2 on a
 * usage or load error.  Lemmas without instances, or not checkable, are
 * warnings, not failures. */
#include "cli/cli.h"
#include "cli/options.h"
#include "shardcheck/lemcheck.h"
#include "shardcheck/lemprove.h"
#include "smt/smt.h"
#include "shardcheck/usercheck.h"

#include <jansson.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>

static const char lemmas_usage[] =
    "Usage: shardcheck lemmas check [--lemmas DIR] [--seed N] [--instances N] "
    "[--format text|json]\n";

static int lemmas_check(int argc, char **argv) {
  g_auto(sc_cli_common) common = SC_CLI_COMMON_INIT;
  g_auto(GStrv) dirs = NULL;
  g_auto(GStrv) rest = NULL;
  gint64 seed = 1;
  gint instances = 24;
  GOptionEntry entries[] = {
      SC_CLI_LEMMAS_ENTRY(&dirs, "Also check the lemma files (*.lemma) of DIR (repeatable)"),
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Seed of the random instances (1)", "N"},
      {"instances", 0, 0, G_OPTION_ARG_INT, &instances, "Instances wanted per lemma (24)", "N"},
      SC_CLI_FORMAT_ENTRY(&common),
      SC_CLI_MAX_INPUT_ENTRY(&common, "bundle or lemma file"),
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &rest, NULL, NULL},
      SC_CLI_END_ENTRY,
  };
  if (!sc_cli_parse_common(
          &common, "shardcheck lemmas check",
          "- evaluate both sides of every lemma on random instances",
          "Examples:\n  shardcheck lemmas check\n  shardcheck lemmas check --lemmas my-kernels/\n"
          "\nExit codes: 0 every lemma passes, 1 a lemma fails, 2 usage or load error.",
          entries, &argc, &argv) ||
      !sc_cli_set_max_input(&common))
    return SC_EXIT_INPUT_ERROR;
  gboolean json = common.json;
  if (!sc_cli_no_argument(rest, "lemmas check", lemmas_usage))
    return SC_EXIT_INPUT_ERROR;
  if (instances < 1 || instances > 100000 || seed < 0) {
    fprintf(stderr, "shardcheck: --instances must be in [1, 100000] and --seed non-negative\n");
    return SC_EXIT_INPUT_ERROR;
  }
  g_autoptr(sc_lemma_set) set = sc_cli_load_lemmas_or_say(dirs);
  if (set == NULL)
    return SC_EXIT_INPUT_ERROR;
  sc_lemcheck_options opts;
  sc_lemcheck_options_init(&opts);
  opts.seed = (uint64_t)seed;
  opts.instances = (uint32_t)instances;
  opts.max_trials = MAX(opts.max_trials, opts.instances * 50);
  g_autoptr(sc_lemcheck_report) rep = sc_lemcheck_run(set, &opts);
  /* Operators declared without a definition: nothing above evaluated
   * them, so say that they are unchecked (issue 19). */
  g_autoptr(GArray) opaque = sc_usercheck_opaque(set, 0, dirs, NULL, NULL);
  if (json) {
    g_autofree char *s = sc_lemcheck_report_json(rep, set);
    json_t *root = json_loads(s, 0, NULL);
    if (root != NULL && opaque->len) {
      json_t *arr = json_array();
      for (guint i = 0; i < opaque->len; i++) {
        const sc_report_assumed_op *a = &g_array_index(opaque, sc_report_assumed_op, i);
        json_t *o = json_pack("{s:s, s:s}", "op", a->op, "status", "unchecked");
        json_object_set_new(o, "declared_at",
                            a->declared_at ? json_string(a->declared_at) : json_null());
        json_array_append_new(arr, o);
      }
      json_object_set_new(root, "opaque_operators", arr);
    }
    char *out = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    printf("%s\n", out ? out : s);
    free(out);
    json_decref(root);
  } else {
    sc_lemcheck_report_text(stdout, rep);
    for (guint i = 0; i < opaque->len; i++) {
      const sc_report_assumed_op *a = &g_array_index(opaque, sc_report_assumed_op, i);
      printf("warning: operator %s%s%s%s is declared without a definition: unchecked (its "
             "shape rule and the lemmas about it are assumptions)\n",
             a->op, a->declared_at ? " (" : "", a->declared_at ? a->declared_at : "",
             a->declared_at ? ")" : "");
    }
  }
  uint32_t p, f, w, c;
  sc_lemcheck_report_counts(rep, &p, &f, &w, &c);
  return f > 0 ? SC_EXIT_FAILS : SC_EXIT_REFINES;
}

static const char prove_usage[] =
    "Usage: shardcheck lemmas prove [--lemmas DIR] [--rank-bound R] [--max-rank-bound M] "
    "[--only PREFIX] [--part I/N] "
    "[--no-values] [--layout-only] [--format text|json]\n";

/* cvc5's limits for `lemmas prove`: the resource limit per check
 * (SC_SMT_DEFAULT_RLIMIT) decides, so that the results do not depend on
 * the machine's load; the wall time per query is a safety net only, far
 * above what the resource limit lets a check take (docs/lemmas.md), and a
 * lemma it cuts short is reported "over budget (time)".  SC_SMT_TLIMIT_MS
 * and SC_SMT_RLIMIT in the environment override both. */
#define PROVE_SMT_TLIMIT_MS 60000u

static uint64_t prove_time_hits(void *user) {
  sc_smt_stats s;
  sc_smt_get_stats(user, &s);
  return s.time_hits;
}

/* A value refutation's witness, judged by the interpreter (lemprove.h). */
static sc_truth prove_check_instance(void *user, const sc_lemma_set *set, uint32_t lemma,
                                     const sc_lemma_instance *inst, char **detail) {
  (void)user;
  return sc_lemcheck_instance(set, lemma, inst, 1, detail);
}

static json_t *prove_json(const sc_lemprove_report *rep, gboolean values) {
  json_t *arr = json_array();
  for (uint32_t i = 0; i < sc_lemprove_report_n(rep); i++) {
    const sc_lemprove_result *r = sc_lemprove_report_get(rep, i);
    json_t *o = json_pack("{s:s, s:s, s:i, s:i, s:i}", "name", r->name, "status",
                          sc_lemprove_status_name(r->status), "configs", (json_int_t)r->configs,
                          "paths", (json_int_t)r->paths, "typed", (json_int_t)r->typed);
    json_object_set_new(o, "rank_bound", json_integer((json_int_t)r->rank_bound));
    json_object_set_new(o, "dtypes", json_string(r->mixed_dtypes ? "per tensor" : "shared"));
    json_object_set_new(o, "why", r->why ? json_string(r->why) : json_null());
    /* values: null unless tried (a layout lemma whose typing is proved) */
    gboolean tried = r->layout && r->status == SC_LEMPROVE_PROVED && values;
    json_object_set_new(o, "values",
                        tried ? json_string(sc_lemprove_status_name(r->values)) : json_null());
    json_object_set_new(o, "values_why",
                        tried && r->values_why ? json_string(r->values_why) : json_null());
    json_array_append_new(arr, o);
  }
  uint32_t p, f, u, vt, vp, vf, vu;
  sc_lemprove_report_counts(rep, &p, &f, &u);
  sc_lemprove_report_value_counts(rep, &vt, &vp, &vf, &vu);
  json_t *root =
      json_pack("{s:i, s:o, s:i, s:i, s:i}", "rank_bound",
                (json_int_t)sc_lemprove_report_rank_bound(rep), "lemmas", arr, "proved",
                (json_int_t)p, "refuted", (json_int_t)f, "not_provable", (json_int_t)u);
  json_object_set_new(root, "values",
                      json_pack("{s:i, s:i, s:i, s:i}", "tried", (json_int_t)vt, "proved",
                                (json_int_t)vp, "refuted", (json_int_t)vf, "not_provable",
                                (json_int_t)vu));
  return root;
}

/* `lemmas prove`: the typing of every lemma, and the values of pure layout
 * lemmas, for all sizes at rank <= R
 * (lemprove.h).  Exit 0 when no lemma is refuted, 1 when one is, 2 on a
 * usage or load error. */
static int lemmas_prove(int argc, char **argv) {
  g_auto(sc_cli_common) common = SC_CLI_COMMON_INIT;
  g_autofree char *only = NULL, *part = NULL;
  g_auto(GStrv) dirs = NULL;
  g_auto(GStrv) rest = NULL;
  gint rank_bound = 2, max_rank_bound = 4;
  gboolean no_values = FALSE, layout_only = FALSE;
  GOptionEntry entries[] = {
      SC_CLI_LEMMAS_ENTRY(&dirs, "Also prove the lemma files (*.lemma) of DIR (repeatable)"),
      {"no-values", 0, 0, G_OPTION_ARG_NONE, &no_values,
       "Prove typing only (not the values of layout lemmas)", NULL},
      {"layout-only", 0, 0, G_OPTION_ARG_NONE, &layout_only,
       "Prove only the pure layout lemmas (typing and values)", NULL},
      {"rank-bound", 0, 0, G_OPTION_ARG_INT, &rank_bound,
       "Prove for every rank up to R (2; at most 6)", "R"},
      {"max-rank-bound", 0, 0, G_OPTION_ARG_INT, &max_rank_bound,
       "A lemma well-typed in no configuration at rank <= R: prove it at the next bound, up "
       "to M (4; at most 6; M <= R: never)", "M"},
      {"only", 0, 0, G_OPTION_ARG_STRING, &only,
       "Prove only the lemmas whose name starts with PREFIX", "PREFIX"},
      {"part", 0, 0, G_OPTION_ARG_STRING, &part,
       "Prove only part I of N (the lemmas whose index is I modulo N; 0 <= I < N)", "I/N"},
      SC_CLI_FORMAT_ENTRY(&common),
      SC_CLI_MAX_INPUT_ENTRY(&common, "lemma file"),
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &rest, NULL, NULL},
      SC_CLI_END_ENTRY,
  };
  if (!sc_cli_parse_common(
          &common, "shardcheck lemmas prove",
          "- prove that every lemma's right side is well-typed, with the shape and dtype of its "
          "left side, and that pure layout lemmas' sides pick the same elements, for all sizes "
          "at rank <= R",
          "Examples:\n  shardcheck lemmas prove\n  shardcheck lemmas prove --rank-bound 4 "
          "--only cat_\n"
          "\nExit codes: 0 no lemma refuted, 1 a lemma refuted, 2 usage or load error.",
          entries, &argc, &argv) ||
      !sc_cli_set_max_input(&common))
    return SC_EXIT_INPUT_ERROR;
  gboolean json = common.json;
  if (!sc_cli_no_argument(rest, "lemmas prove", prove_usage))
    return SC_EXIT_INPUT_ERROR;
  if (rank_bound < 0 || rank_bound > 6) {
    fprintf(stderr, "shardcheck: --rank-bound must be in [0, 6]\n");
    return SC_EXIT_INPUT_ERROR;
  }
  if (max_rank_bound < 0 || max_rank_bound > 6) {
    fprintf(stderr, "shardcheck: --max-rank-bound must be in [0, 6]\n");
    return SC_EXIT_INPUT_ERROR;
  }
  g_autoptr(sc_lemma_set) set = sc_cli_load_lemmas_or_say(dirs);
  if (set == NULL)
    return SC_EXIT_INPUT_ERROR;
  sc_lemprove_options opts;
  sc_lemprove_options_init(&opts);
  opts.rank_bound = (uint32_t)rank_bound;
  opts.max_rank_bound = (uint32_t)max_rank_bound;
  opts.only = only;
  opts.values = !no_values;
  opts.layout_only = layout_only;
  opts.check_instance = prove_check_instance;
  if (part != NULL) {
    unsigned pi = 0, pn = 0;
    char extra;
    if (sscanf(part, "%u/%u%c", &pi, &pn, &extra) != 2 || pn == 0 || pi >= pn) {
      fprintf(stderr, "shardcheck: --part takes I/N with 0 <= I < N, found '%s'\n", part);
      return SC_EXIT_INPUT_ERROR;
    }
    opts.part = pi;
    opts.parts = pn;
  }
  sc_smt *smt = sc_smt_new();
  if (g_getenv("SC_SMT_TLIMIT_MS") == NULL) {
    uint64_t rlimit;
    sc_smt_get_limits(smt, NULL, &rlimit);
    sc_smt_set_limits(smt, PROVE_SMT_TLIMIT_MS, rlimit);
  }
  opts.oracle_time_hits = prove_time_hits;
  g_autoptr(sc_lemprove_report) rep = sc_lemprove_run(set, &opts, sc_smt_oracle(), smt);
  sc_smt_stats ss;
  sc_smt_get_stats(smt, &ss);
  if (g_getenv("SC_LEMPROVE_TRACE") != NULL) {
    g_autofree char *t = sc_smt_stats_to_string(&ss);
    fprintf(stderr, "lemmas prove: %s\n", t);
  }
  if (ss.time_hits > 0)
    fprintf(stderr,
            "lemmas prove: the solver's wall-time limit per query ran out %" G_GUINT64_FORMAT
            " times: the lemmas it cut short are reported \"over budget (time)\" (a loaded "
            "machine, or SC_SMT_TLIMIT_MS too low)\n",
            ss.time_hits);
  sc_smt_free(smt);
  if (json) {
    json_t *root = prove_json(rep, opts.values);
    char *out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    printf("%s\n", out);
    free(out);
    json_decref(root);
  } else {
    sc_lemprove_report_text(stdout, rep);
  }
  uint32_t p, f, u, vt, vp, vf, vu;
  sc_lemprove_report_counts(rep, &p, &f, &u);
  sc_lemprove_report_value_counts(rep, &vt, &vp, &vf, &vu);
  return f + vf > 0 ? SC_EXIT_FAILS : SC_EXIT_REFINES;
}

int sc_cli_lemmas(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    FILE *out = argc < 2 ? stderr : stdout;
    fprintf(out,
            "%s%s  check   evaluate both sides of every lemma on random instances\n"
            "  prove   prove every lemma's typing for all sizes at rank <= R\n",
            lemmas_usage, prove_usage);
    return argc < 2 ? SC_EXIT_INPUT_ERROR : SC_EXIT_REFINES;
  }
  if (strcmp(argv[1], "check") == 0)
    return lemmas_check(argc - 1, argv + 1);
  if (strcmp(argv[1], "prove") == 0)
    return lemmas_prove(argc - 1, argv + 1);
  fprintf(stderr, "shardcheck: unknown lemmas command '%s'\n%s", argv[1], lemmas_usage);
  return SC_EXIT_INPUT_ERROR;
}
