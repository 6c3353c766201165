/* cli.h — private to src/cli: the subcommands of the shardcheck tool.
 *
 * Each subcommand gets argv starting at its own name, parses its options
 * with GOption and returns an sc_exit_code.  Messages for the user go to
 * stderr as "shardcheck: ..."; results go to stdout. */
#ifndef SC_CLI_H
#define SC_CLI_H

#include "shardcheck/bundle.h"
#include "shardcheck/infer.h"

int sc_cli_check(int argc, char **argv);
int sc_cli_show(int argc, char **argv);
int sc_cli_ops(int argc, char **argv);
int sc_cli_lemmas(int argc, char **argv);

/* `check --validate` (validate.c): validate RES, print the text section
 * or add "validation" to *JSON_TEXT (the result object, replaced); returns
 * SC_EXIT_UNSOUND when a relation does not hold, else -1. */
int sc_cli_validate(const sc_bundle *b, const sc_infer_result *res, gboolean json,
                    char **json_text);

/* "text" or "json" (from --format); FALSE with a message otherwise. */
gboolean sc_cli_parse_format(const char *s, gboolean *json, GError **error);

/* The JSON error object of a bundle that failed to load (stdout). */
void sc_cli_print_error_json(const char *message, const sc_bundle_diag *d);

#endif
