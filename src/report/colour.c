/* colour.c — colour in the text report (report.h, report-private.h).
 *
 * auto colours only a terminal, and never when NO_COLOR is set to a
 * non-empty value (no-color.org) or TERM is "dumb"; always and never do
 * what they say.  The escapes are plain SGR sequences. */
#include "report/report-private.h"

#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK(sc-report-error-quark, sc_report_error)

gboolean sc_report_parse_colour(const char *s, sc_report_colour *out, GError **error) {
  if (s == NULL || strcmp(s, "auto") == 0)
    *out = SC_COLOUR_AUTO;
  else if (strcmp(s, "always") == 0)
    *out = SC_COLOUR_ALWAYS;
  else if (strcmp(s, "never") == 0)
    *out = SC_COLOUR_NEVER;
  else {
    g_set_error(error, SC_REPORT_ERROR, SC_REPORT_ERROR_USAGE,
                "--color: expected auto, always or never, found '%s'", s);
    return FALSE;
  }
  return TRUE;
}

gboolean sc_report_colour_enabled(sc_report_colour mode, int fd) {
  if (mode != SC_COLOUR_AUTO)
    return mode == SC_COLOUR_ALWAYS;
  const char *no_colour = g_getenv("NO_COLOR");
  if (no_colour != NULL && *no_colour)
    return FALSE;
  const char *term = g_getenv("TERM");
  if (term != NULL && strcmp(term, "dumb") == 0)
    return FALSE;
  return isatty(fd) == 1;
}

const char *sc_report_sgr(const sc_report_options *opts, sc_report_style style) {
  if (opts == NULL || !opts->colour)
    return "";
  switch (style) {
  case SC_STYLE_RESET: return "\033[0m";
  case SC_STYLE_BOLD: return "\033[1m";
  case SC_STYLE_DIM: return "\033[2m";
  case SC_STYLE_RED: return "\033[1;31m";
  case SC_STYLE_GREEN: return "\033[1;32m";
  case SC_STYLE_YELLOW: return "\033[1;33m";
  case SC_STYLE_CYAN: return "\033[36m";
  }
  return "";
}

sc_report_style sc_report_verdict_style(sc_verdict v) {
  switch (v) {
  case SC_VERDICT_REFINES: return SC_STYLE_GREEN;
  case SC_VERDICT_FAILS: return SC_STYLE_RED;
  case SC_VERDICT_LIMIT: return SC_STYLE_YELLOW;
  case SC_VERDICT_ERROR: return SC_STYLE_RED;
  }
  return SC_STYLE_BOLD;
}
