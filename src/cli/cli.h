/* cli.h — private to src/cli: the subcommands of the shardcheck tool.
 *
 * Each subcommand gets argv starting at its own name, parses its options
 * with GOption and returns an sc_exit_code.  Messages for the user go to
 * stderr as "shardcheck: ..."; results go to stdout. */
#ifndef SC_CLI_H
#define SC_CLI_H

#include "shardcheck/bundle.h"

int sc_cli_check(int argc, char **argv);
int sc_cli_show(int argc, char **argv);
int sc_cli_ops(int argc, char **argv);

/* "text" or "json" (from --format); FALSE with a message otherwise. */
gboolean sc_cli_parse_format(const char *s, gboolean *json, GError **error);

/* The JSON error object of a bundle that failed to load (stdout). */
void sc_cli_print_error_json(const char *message, const sc_bundle_diag *d);

#endif
