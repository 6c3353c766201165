/* check.c — `shardcheck check`: load a bundle and the lemmas, run relation
 * inference, report (text or the spec's JSON object) and exit with the
 * spec's code: 0 refines, 1 fails, 2 input error, 3 limit. */
#include "cli/cli.h"
#include "shardcheck/report.h"
#include "smt/smt.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* The built-in lemmas, then each --lemmas directory. */
static sc_lemma_set *load_lemmas(char **dirs, GString *where, GError **error) {
  sc_lemma_set *set = sc_lemma_set_new();
  const char *builtin = sc_lemma_builtin_dir();
  if (builtin && g_file_test(builtin, G_FILE_TEST_IS_DIR)) {
    if (!sc_lemma_set_load_dir(set, builtin, error)) {
      sc_lemma_set_free(set);
      return NULL;
    }
    g_string_append(where, builtin);
  }
  for (uint32_t i = 0; dirs && dirs[i]; i++) {
    if (!g_file_test(dirs[i], G_FILE_TEST_IS_DIR)) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "--lemmas: '%s' is not a directory", dirs[i]);
      sc_lemma_set_free(set);
      return NULL;
    }
    if (!sc_lemma_set_load_dir(set, dirs[i], error)) {
      sc_lemma_set_free(set);
      return NULL;
    }
    g_string_append_printf(where, "%s%s", where->len ? ", " : "", dirs[i]);
  }
  return set;
}

int sc_cli_check(int argc, char **argv) {
  g_autofree char *format = NULL;
  g_auto(GStrv) lemma_dirs = NULL;
  g_auto(GStrv) rest = NULL;
  gboolean explain = FALSE, quiet = FALSE, validate = FALSE;
  GOptionEntry entries[] = {
      {"format", 'f', 0, G_OPTION_ARG_STRING, &format, "Output format", "text|json"},
      {"lemmas", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &lemma_dirs,
       "Also load the lemma files (*.lemma) of DIR (repeatable)", "DIR"},
      {"explain", 0, 0, G_OPTION_ARG_NONE, &explain, "Show, per spec node, the lemmas applied and the impl nodes asserted",
       NULL},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress line", NULL},
      {"validate", 0, 0, G_OPTION_ARG_NONE, &validate,
       "Run both graphs on related concrete inputs and evaluate every relation (exit 4 if one "
       "does not hold); on fails, show counterexamples",
       NULL},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, "BUNDLE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_set_prgname("shardcheck check");
  g_autoptr(GOptionContext) ctx = g_option_context_new("- check that a bundle's impl refines its spec");
  g_option_context_set_summary(
      ctx, "Examples:\n  shardcheck check models/mlp-tp2/bundle.json\n"
           "  shardcheck check --format json models/paper-example\n"
           "  shardcheck check --lemmas my-kernels/ my-model.json\n"
           "  shardcheck check --validate models/mlp-tp2\n"
           "\nExit codes: 0 refines, 1 fails, 2 usage or input error, 3 resource limit,\n"
           "4 --validate found a relation that does not hold (a soundness bug).");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  gboolean json = FALSE;
  if (!g_option_context_parse(ctx, &argc, &argv, &err) ||
      !sc_cli_parse_format(format, &json, &err)) {
    fprintf(stderr, "shardcheck: %s\n", err->message);
    g_error_free(err);
    return SC_EXIT_INPUT_ERROR;
  }
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
  /* Lemmas first: they may declare the custom operators a bundle uses. */
  g_autoptr(GString) where = g_string_new(NULL);
  sc_lemma_set *lemmas = load_lemmas(lemma_dirs, where, &err);
  if (!lemmas) {
    if (json) {
      sc_bundle_diag d = {0};
      sc_cli_print_error_json(err->message, &d);
    } else {
      fprintf(stderr, "shardcheck: %s\n", err->message);
    }
    g_error_free(err);
    return SC_EXIT_INPUT_ERROR;
  }
  sc_bundle_diag diag = {0};
  sc_bundle *b = sc_bundle_load_diag(path, &diag, &err);
  if (b == NULL) {
    if (json)
      sc_cli_print_error_json(err->message, &diag);
    else
      fprintf(stderr, "shardcheck: %s\n", err->message);
    g_error_free(err);
    sc_bundle_diag_clear(&diag);
    sc_lemma_set_free(lemmas);
    return SC_EXIT_INPUT_ERROR;
  }
  /* Unknown top-level fields (extensions) were ignored: say so. */
  for (uint32_t i = 0; i < sc_bundle_n_warnings(b); i++)
    fprintf(stderr, "shardcheck: warning: %s\n", sc_bundle_warning(b, i));

  /* cvc5 decides the size comparisons that the normal form leaves open. */
  sc_smt *smt = sc_smt_new();
  sc_smt_attach(smt, sc_bundle_symtab(b));

  progress_state prog = {!quiet && isatty(STDERR_FILENO), FALSE};
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.lemmas = lemmas;
  opts.explain = explain;
  opts.progress = on_progress;
  opts.progress_user = &prog;
  sc_infer_result *res = sc_infer_run(b, &opts, &err);
  int code;
  if (!res) {
    /* An internal error (an unsound lemma caught by the shape analysis)
     * or lemmas that do not compile: no verdict. */
    if (json) {
      sc_bundle_diag d = {0};
      sc_cli_print_error_json(err->message, &d);
    } else {
      fprintf(stderr, "shardcheck: %s\n", err->message);
    }
    code = err->domain == SC_INFER_ERROR && err->code == SC_INFER_ERROR_INTERNAL
               ? SC_EXIT_UNSOUND
               : SC_EXIT_INPUT_ERROR;
    g_error_free(err);
  } else {
    sc_report_options ropts = {explain, sc_lemma_set_n_lemmas(lemmas), where->str};
    int vcode = -1;
    if (json) {
      g_autofree char *s = sc_report_json(b, res, &ropts);
      if (validate)
        vcode = sc_cli_validate(b, res, TRUE, &s);
      printf("%s\n", s);
    } else {
      sc_report_text(stdout, b, res, &ropts);
      if (sc_symtab_n_symbols(sc_bundle_symtab(b)) > 0) {
        sc_sym_stats sst;
        sc_symtab_stats(sc_bundle_symtab(b), &sst);
        g_autofree char *line = sc_sym_stats_to_string(&sst);
        printf("symbolic sizes: %s\n", line);
      }
      if (validate)
        vcode = sc_cli_validate(b, res, FALSE, NULL);
    }
    code = vcode >= 0 ? vcode : sc_report_exit_code(res);
    sc_infer_result_free(res);
  }
  sc_bundle_free(b);
  sc_smt_free(smt);
  sc_lemma_set_free(lemmas);
  return code;
}
