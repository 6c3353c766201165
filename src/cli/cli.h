/* cli.h — private to src/cli: the subcommands of the shardcheck tool.
 *
 * Each subcommand gets argv starting at its own name, parses its options
 * with GOption and returns an sc_exit_code.  Messages for the user go to
 * stderr as "shardcheck: ..."; results go to stdout. */
#ifndef SC_CLI_H
#define SC_CLI_H

#include "shardcheck/bundle.h"
#include "shardcheck/infer.h"
#include "shardcheck/lemma.h"
#include "shardcheck/report.h"

int sc_cli_check(int argc, char **argv);
int sc_cli_show(int argc, char **argv);
int sc_cli_ops(int argc, char **argv);
int sc_cli_lemmas(int argc, char **argv);

/* `check --validate` (validate.c): validate RES, print the text section
 * or add "validation" to *JSON_TEXT (the result object, replaced); returns
 * SC_EXIT_UNSOUND when a relation does not hold, else -1.  LEMMAS (may be
 * NULL): the operators they declare run through their definitions. */
int sc_cli_validate(const sc_bundle *b, const sc_infer_result *res, const sc_lemma_set *lemmas,
                    gboolean json, char **json_text);

/* A new lemma set: the built-in lemma directory (when BUILTIN and it
 * exists), then each of DIRS (NULL-terminated, may be NULL), in order.
 * Loading registers the files' operator declarations, so bundles that use
 * those operators load afterwards.  Appends the directories read to WHERE
 * (may be NULL), ", "-separated.  NULL with an error (a file's first
 * errors, or a DIR that is not a directory). */
sc_lemma_set *sc_cli_load_lemmas(gboolean builtin, char **dirs, GString *where, GError **error);
/* sc_cli_load_lemmas(TRUE, DIRS, NULL): NULL after printing the error as
 * "shardcheck: MESSAGE" on stderr. */
sc_lemma_set *sc_cli_load_lemmas_or_say(char **dirs);

/* The built-in library loaded deferred (lemma.h), for `check` without
 * --lemmas: select it with sc_cli_select_lemmas once the bundle is read.
 * Appends the directory to WHERE.  NULL with an error. */
sc_lemma_set *sc_cli_load_lemmas_deferred(GString *where, GError **error);
/* Keeps of a deferred SET the lemmas that can fire in the check of B
 * (select.c); FALSE with an error when one does not load. */
gboolean sc_cli_select_lemmas(sc_lemma_set *set, const sc_bundle *b, GError **error);

/* Index of the first lemma of SET not loaded from the built-in lemma
 * directory (the user's, from --lemmas); the lemma count when none. */
uint32_t sc_cli_first_user_lemma(const sc_lemma_set *set);

/* `check --html FILE --dot FILE` (report-files.c): write the HTML page
 * and the DOT graph of RES (either path may be NULL); FALSE after a
 * message on stderr when a file cannot be written. */
gboolean sc_cli_write_report_files(const char *html, const char *dot, const sc_bundle *b,
                                   const sc_infer_result *r, const sc_report_options *opts);

/* The JSON error object of a bundle that failed to load (stdout). */
void sc_cli_print_error_json(const char *message, const sc_bundle_diag *d);
/* Reports ERR, a failed load (D may be NULL), as text on stderr or as the
 * JSON error object on stdout, and returns its exit code: SC_EXIT_LIMIT
 * (verdict "limit") for SC_BUNDLE_ERROR_LIMIT, else SC_EXIT_INPUT_ERROR. */
int sc_cli_load_failed(gboolean json, const GError *err, const sc_bundle_diag *d);

#endif
