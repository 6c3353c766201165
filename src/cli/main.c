/* main.c — the shardcheck command line: dispatch to subcommands.
 *
 *   shardcheck check [--format text|json] [--lemmas DIR] [--explain] BUNDLE
 *   shardcheck show [--format text|json] BUNDLE
 *   shardcheck ops [--format text|json]
 *   shardcheck lemmas check [--lemmas DIR] [--seed N] [--instances N] [--format text|json]
 *   shardcheck --version | --help
 *
 * The CLI is thin: loading, validation and checking live in the library;
 * this file only maps outcomes to exit codes (common.h, SC_EXIT_CODES). */
#include "cli/cli.h"
#include "sc-config.h"
#include "smt/smt.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "Usage:\n"
    "  shardcheck check [--format text|json] [--lemmas DIR] [--validate] [--html FILE]\n"
    "                   [--dot FILE] [--color=WHEN] BUNDLE\n"
    "  shardcheck show [--format text|json] BUNDLE\n"
    "  shardcheck ops [--format text|json]\n"
    "  shardcheck lemmas check [--lemmas DIR] [--seed N] [--instances N] [--format text|json]\n"
    "  shardcheck --version\n"
    "  shardcheck --help\n";

static const char help_text[] =
    "shardcheck proves that a distributed PyTorch graph refines a sequential one.\n"
    "\n"
    "Commands:\n"
    "  check    prove that the bundle's impl refines its spec, or name the first\n"
    "           spec operator whose outputs it cannot map\n"
    "  show     load and validate a bundle and summarize both graphs\n"
    "  ops      list the operators shardcheck knows, with flags and schemas\n"
    "  lemmas check  evaluate both sides of every lemma on random instances with\n"
    "           the reference interpreter (exit 1 if one differs)\n"
    "\n"
    "Options of check:\n"
    "  --format text|json   output format (default text)\n"
    "  --lemmas DIR         also load the lemma files of DIR (repeatable)\n"
    "  --quiet              no progress line on a terminal\n"
    "  --validate           run both graphs on related concrete inputs, evaluate every\n"
    "                       relation (exit 4 if one does not hold); on fails, show\n"
    "                       counterexamples (docs/validation.md)\n"
    "  --time-limit SECONDS CPU seconds for the check, then exit 3 (default 1800)\n"
    "  --memory-limit MiB   peak resident memory, then exit 3 (default 8192)\n"
    "  --max-enodes N       e-nodes of one spec node's e-graph, then exit 3 (1000000)\n"
    "  --max-input-bytes N  largest bundle or lemma file read (default 256 MiB); not\n"
    "                       a regular file or larger: exit 2 (docs/limits.md)\n"
    "  --html FILE          also write a self-contained HTML page with a picture of the\n"
    "                       failing neighbourhood (docs/reports.md)\n"
    "  --dot FILE           also write the failing neighbourhood for Graphviz\n"
    "  --color=auto|always|never  colour the text report (NO_COLOR respected)\n"
    "\n"
    "Examples:\n"
    "  shardcheck check models/mlp-tp2/bundle.json\n"
    "  shardcheck check models/paper-example          (a folder: its bundle.json)\n"
    "  shardcheck check --format json models/paper-example/bundle.json\n"
    "  shardcheck ops --format json\n"
    "\n"
    "Exit codes: 0 refines, 1 fails, 2 usage or input error, 3 resource limit,\n"
    "4 a soundness bug in shardcheck (a lemma merged terms of different shapes, or\n"
    "--validate found a relation that does not hold on concrete values).\n"
    "The bundle format is described in docs/bundle-format.md.\n";

sc_lemma_set *sc_cli_load_lemmas(gboolean builtin, char **dirs, GString *where, GError **error) {
  sc_lemma_set *set = sc_lemma_set_new();
  const char *dir = builtin ? sc_lemma_builtin_dir() : NULL;
  if (dir && g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    if (!sc_lemma_set_load_dir(set, dir, error)) {
      sc_lemma_set_free(set);
      return NULL;
    }
    if (where)
      g_string_append(where, dir);
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
    if (where)
      g_string_append_printf(where, "%s%s", where->len ? ", " : "", dirs[i]);
  }
  return set;
}

sc_lemma_set *sc_cli_load_lemmas_or_say(char **dirs) {
  GError *err = NULL;
  sc_lemma_set *set = sc_cli_load_lemmas(TRUE, dirs, NULL, &err);
  if (set == NULL) {
    fprintf(stderr, "shardcheck: %s\n", err->message);
    g_error_free(err);
  }
  return set;
}

sc_lemma_set *sc_cli_load_lemmas_deferred(GString *where, GError **error) {
  sc_lemma_set *set = sc_lemma_set_new();
  const char *dir = sc_lemma_builtin_dir();
  if (dir && g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    if (!sc_lemma_set_load_dir_deferred(set, dir, error)) {
      sc_lemma_set_free(set);
      return NULL;
    }
    if (where)
      g_string_append(where, dir);
  }
  return set;
}

uint32_t sc_cli_first_user_lemma(const sc_lemma_set *set) {
  const char *dir = sc_lemma_builtin_dir();
  g_autofree char *prefix = dir ? g_build_filename(dir, "", NULL) : NULL;
  uint32_t n = sc_lemma_set_n_lemmas(set), i = 0;
  while (i < n && prefix && g_str_has_prefix(sc_lemma_set_lemma(set, i)->file, prefix))
    i++;
  return i;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "shardcheck: missing command\n%s", usage_text);
    return SC_EXIT_INPUT_ERROR;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
    printf("shardcheck %s (cvc5 %s)\n", SC_VERSION, sc_smt_version());
    return 0;
  }
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    printf("%s\n%s", usage_text, help_text);
    return 0;
  }
  if (strcmp(cmd, "check") == 0)
    return sc_cli_check(argc - 1, argv + 1);
  if (strcmp(cmd, "show") == 0)
    return sc_cli_show(argc - 1, argv + 1);
  if (strcmp(cmd, "ops") == 0)
    return sc_cli_ops(argc - 1, argv + 1);
  if (strcmp(cmd, "lemmas") == 0)
    return sc_cli_lemmas(argc - 1, argv + 1);
  fprintf(stderr, "shardcheck: unknown command '%s'\n%s", cmd, usage_text);
  return SC_EXIT_INPUT_ERROR;
}
