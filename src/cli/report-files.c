/* report-files.c — `check --html FILE --dot FILE`: the result written to
 * files beside the report on stdout (cli.h). */
#include "cli/cli.h"
#include "shardcheck/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef void (*report_writer)(FILE *out, const sc_bundle *b, const sc_infer_result *r,
                              const sc_report_options *opts);

static gboolean write_one(const char *option, const char *path, report_writer w,
                          const sc_bundle *b, const sc_infer_result *r,
                          const sc_report_options *opts) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "shardcheck: %s: cannot write '%s': %s\n", option, path, strerror(errno));
    return FALSE;
  }
  w(f, b, r, opts);
  gboolean ok = !ferror(f);
  if (fclose(f) != 0)
    ok = FALSE;
  if (!ok)
    fprintf(stderr, "shardcheck: %s: error writing '%s'\n", option, path);
  return ok;
}

gboolean sc_cli_write_report_files(const char *html, const char *dot, const sc_bundle *b,
                                   const sc_infer_result *r, const sc_report_options *opts) {
  sc_report_options plain = *opts;
  plain.colour = FALSE;
  gboolean ok = TRUE;
  if (html)
    ok = write_one("--html", html, sc_report_html, b, r, &plain) && ok;
  if (dot)
    ok = write_one("--dot", dot, sc_report_dot, b, r, &plain) && ok;
  return ok;
}
