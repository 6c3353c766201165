/* report.h — the check's results for people (text, with colour on a
 * terminal; one self-contained HTML page) and programs (JSON, the spec's
 * result object: verdict, output_relation, failure, stats; Graphviz DOT of
 * the failing neighbourhood).
 *
 * Names: impl tensors are shown as "r0:add_2" (rank 0's add_2) in the text
 * and HTML reports, and each report lists where the impl tensors it names
 * come from (rank, producing operator, source line, type).  The JSON
 * object keeps the expressions as written and adds "impl_tensors".
 *
 * Ownership: the writers borrow the bundle and the result; the JSON text
 * returned is new (g_free). */
#ifndef SHARDCHECK_REPORT_H
#define SHARDCHECK_REPORT_H

#include "shardcheck/diagnose.h"
#include "shardcheck/infer.h"

#include <stdio.h>

G_BEGIN_DECLS

/* An operator declared without a definition (opaque): an assumption of
 * the check (usercheck.h builds these). */
typedef struct {
  char *op;             /* "mylib.k.default" */
  char *declared_at;    /* "DIR/k.lemma:3", or NULL when not found */
  GPtrArray *lemmas;    /* char*: lemmas that mention it (unchecked) */
  GPtrArray *relations; /* char*: output relations relying on it, "y = y_0" */
} sc_report_assumed_op;

#define SC_REPORT_ERROR (sc_report_error_quark())
GQuark sc_report_error_quark(void);
typedef enum {
  SC_REPORT_ERROR_USAGE, /* a bad option value */
} sc_report_error;

typedef struct {
  gboolean explain;       /* lemma chains (when recorded) */
  uint32_t n_lemmas;      /* lemmas loaded, for the header line */
  const char *lemma_dirs; /* where they came from, for the header line */
  const GArray *assumed_ops; /* sc_report_assumed_op, or NULL: listed as
                                "assumed: operator ..." (text) and
                                "assumed_operators" (JSON) */
  gboolean colour;        /* SGR escapes in the text report */
  const sc_diagnosis *diagnosis; /* of a failure (diagnose.h), or NULL */
} sc_report_options;

/* --color: auto (a terminal, unless NO_COLOR is set or TERM=dumb), always,
 * never. */
typedef enum { SC_COLOUR_AUTO, SC_COLOUR_ALWAYS, SC_COLOUR_NEVER } sc_report_colour;
/* "auto", "always", "never" (NULL: auto); FALSE with a message otherwise. */
gboolean sc_report_parse_colour(const char *s, sc_report_colour *out, GError **error);
/* Whether text written to FD gets colour under MODE. */
gboolean sc_report_colour_enabled(sc_report_colour mode, int fd);

/* The human report: verdict first, then the output relation (one line per
 * checked spec output with every clean expression found), expectations,
 * assumptions, and for a failure the spec node (name, op, src), its
 * unmapped outputs, its inputs' relations, how many impl nodes were
 * explored and the nearest non-clean terms; last the time. */
void sc_report_text(FILE *out, const sc_bundle *b, const sc_infer_result *r,
                    const sc_report_options *opts);
/* The spec's result object as compact JSON text.  (transfer full) */
char *sc_report_json(const sc_bundle *b, const sc_infer_result *r,
                     const sc_report_options *opts);
/* The failing neighbourhood as a Graphviz digraph: the failing spec node,
 * its inputs (with their relations) and results, the impl tensors they are
 * related to and the impl nodes whose inputs are all related (what the
 * check could assert there).  A graph with one note when R did not fail. */
void sc_report_dot(FILE *out, const sc_bundle *b, const sc_infer_result *r,
                   const sc_report_options *opts);
/* One self-contained HTML page (no script, no network): verdict, output
 * relation, failure, the explanation chains (when recorded), the impl
 * tensors named with their source lines, and the failing neighbourhood as
 * an inline SVG drawn here (no Graphviz at run time). */
void sc_report_html(FILE *out, const sc_bundle *b, const sc_infer_result *r,
                    const sc_report_options *opts);
/* The exit code for a result (common.h). */
int sc_report_exit_code(const sc_infer_result *r);

G_END_DECLS

#endif
