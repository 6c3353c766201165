/* main.c — the shardcheck command line: dispatch to subcommands.
 *
 *   shardcheck check [--format text|json] [--lemmas DIR] BUNDLE
 *   shardcheck ops [--format text|json]
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
    "  shardcheck check [--format text|json] [--lemmas DIR] BUNDLE\n"
    "  shardcheck ops [--format text|json]\n"
    "  shardcheck --version\n"
    "  shardcheck --help\n";

static const char help_text[] =
    "shardcheck proves that a distributed PyTorch graph refines a sequential one.\n"
    "\n"
    "Commands:\n"
    "  check    load and validate a model bundle and summarize it\n"
    "  ops      list the operators shardcheck knows, with flags and schemas\n"
    "\n"
    "Options of check:\n"
    "  --format text|json   output format (default text)\n"
    "  --lemmas DIR         an extra directory of lemma files\n"
    "\n"
    "Examples:\n"
    "  shardcheck check models/mlp-tp2/bundle.json\n"
    "  shardcheck check models/paper-example          (a folder: its bundle.json)\n"
    "  shardcheck check --format json models/paper-example/bundle.json\n"
    "  shardcheck ops --format json\n"
    "\n"
    "Exit codes: 0 refines (or: valid bundle, not yet checked), 1 fails,\n"
    "2 usage or input error, 3 resource limit, 4 unsound relation found by --validate.\n"
    "The bundle format is described in docs/bundle-format.md.\n";

gboolean sc_cli_parse_format(const char *s, gboolean *json, GError **error) {
  if (s == NULL || strcmp(s, "text") == 0) {
    *json = FALSE;
    return TRUE;
  }
  if (strcmp(s, "json") == 0) {
    *json = TRUE;
    return TRUE;
  }
  g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
              "--format: expected text or json, found '%s'", s);
  return FALSE;
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
  if (strcmp(cmd, "ops") == 0)
    return sc_cli_ops(argc - 1, argv + 1);
  fprintf(stderr, "shardcheck: unknown command '%s'\n%s", cmd, usage_text);
  return SC_EXIT_INPUT_ERROR;
}
