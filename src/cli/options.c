/* options.c — the options every subcommand shares and the parse of a
 * subcommand's command line around them (options.h). */
#include "cli/options.h"
#include "shardcheck/input.h"

#include <stdio.h>
#include <string.h>

void sc_cli_common_clear(sc_cli_common *c) {
  g_clear_pointer(&c->format, g_free);
}

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

gboolean sc_cli_parse_common(sc_cli_common *c, const char *prgname, const char *parameter,
                             const char *summary, const GOptionEntry *entries, int *argc,
                             char ***argv) {
  g_set_prgname(prgname);
  g_autoptr(GOptionContext) ctx = g_option_context_new(parameter);
  if (summary != NULL)
    g_option_context_set_summary(ctx, summary);
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &err) ||
      !sc_cli_parse_format(c->format, &c->json, &err)) {
    fprintf(stderr, "shardcheck: %s\n", err->message);
    g_error_free(err);
    return FALSE;
  }
  return TRUE;
}

gboolean sc_cli_no_argument(char **rest, const char *command, const char *usage) {
  if (rest == NULL || rest[0] == NULL)
    return TRUE;
  fprintf(stderr, "shardcheck: %s takes no argument ('%s')\n%s", command, rest[0], usage);
  return FALSE;
}

gboolean sc_cli_set_max_input(const sc_cli_common *c) {
  if (c->max_input <= 0) {
    fprintf(stderr, "shardcheck: --max-input-bytes takes a number > 0\n");
    return FALSE;
  }
  sc_input_set_max_bytes((uint64_t)c->max_input);
  return TRUE;
}
