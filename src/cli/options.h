/* options.h — private to src/cli: the options every subcommand shares
 * (--format, --max-input-bytes, --lemmas) and the parse of a subcommand's
 * command line around them.
 *
 * A subcommand lists its GOptionEntry table itself, in the order of its
 * --help, placing the shared entries with the SC_CLI_*_ENTRY macros where
 * they belong; sc_cli_parse_common builds the context, parses, reads
 * --format and reports a usage error.  What is the subcommand's own (its
 * other options, the count of its arguments, the order of its checks)
 * stays in the subcommand.  Every error is one line "shardcheck: ..." on
 * stderr, and the caller exits SC_EXIT_INPUT_ERROR. */
#ifndef SC_CLI_OPTIONS_H
#define SC_CLI_OPTIONS_H

#include "shardcheck/input.h"

#include <glib.h>

/* The shared options' values.  FORMAT is owned (g_free: the auto cleanup
 * sc_cli_common_clear frees it); JSON is set by sc_cli_parse_common. */
typedef struct {
  char *format;     /* --format text|json; NULL: text */
  gint64 max_input; /* --max-input-bytes */
  gboolean json;
} sc_cli_common;

/* Defaults: no --format, the input module's default byte limit. */
#define SC_CLI_COMMON_INIT {NULL, (gint64)SC_INPUT_DEFAULT_MAX_BYTES, FALSE}
void sc_cli_common_clear(sc_cli_common *c);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(sc_cli_common, sc_cli_common_clear)

/* --format text|json, into C->format. */
#define SC_CLI_FORMAT_ENTRY(c)                                                                     \
  {"format", 'f', 0, G_OPTION_ARG_STRING, &(c)->format, "Output format", "text|json"}
/* --max-input-bytes N, into C->max_input; WHAT is what the limit applies to
 * ("bundle or lemma file"), a string literal. */
#define SC_CLI_MAX_INPUT_ENTRY(c, what)                                                            \
  {"max-input-bytes", 0, 0, G_OPTION_ARG_INT64, &(c)->max_input,                                 \
   "Largest " what " read (default 268435456, 256 MiB)", "N"}
/* --lemmas DIR (repeatable), into the GStrv *DIRS; HELP its description. */
#define SC_CLI_LEMMAS_ENTRY(dirs, help)                                                            \
  {"lemmas", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, (dirs), (help), "DIR"}
#define SC_CLI_END_ENTRY {NULL, 0, 0, 0, NULL, NULL, NULL}

/* Parses ARGC, ARGV (argv[0] the subcommand's name) with ENTRIES
 * (terminated by SC_CLI_END_ENTRY) in a context named PRGNAME ("shardcheck
 * show"), whose --help shows PARAMETER after the usage and SUMMARY (may be
 * NULL) before the options; then --format into C->json.  FALSE after
 * printing "shardcheck: MESSAGE" on stderr (an unknown option, a bad
 * value, --format neither text nor json).  ARGC and ARGV are left as
 * g_option_context_parse leaves them. */
gboolean sc_cli_parse_common(sc_cli_common *c, const char *prgname, const char *parameter,
                             const char *summary, const GOptionEntry *entries, int *argc,
                             char ***argv);

/* Sets the process's input byte limit to C->max_input; FALSE after a
 * message when it is not > 0. */
gboolean sc_cli_set_max_input(const sc_cli_common *c);

/* FALSE after "shardcheck: COMMAND takes no argument ('ARG')" and USAGE
 * on stderr when REST (the G_OPTION_REMAINING array, may be NULL) holds
 * an argument. */
gboolean sc_cli_no_argument(char **rest, const char *command, const char *usage);

/* "text" or "json" (from --format); FALSE with a message otherwise. */
gboolean sc_cli_parse_format(const char *s, gboolean *json, GError **error);

#endif
