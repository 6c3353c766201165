/* report.h — the check's results for people (text) and programs (JSON,
 * the spec's result object: verdict, output_relation, failure, stats).
 *
 * Ownership: the writers borrow the bundle and the result; the JSON text
 * returned is new (g_free). */
#ifndef SHARDCHECK_REPORT_H
#define SHARDCHECK_REPORT_H

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

typedef struct {
  gboolean explain;       /* lemma chains (when recorded) */
  uint32_t n_lemmas;      /* lemmas loaded, for the header line */
  const char *lemma_dirs; /* where they came from, for the header line */
  const GArray *assumed_ops; /* sc_report_assumed_op, or NULL: listed as
                                "assumed: operator ..." (text) and
                                "assumed_operators" (JSON) */
} sc_report_options;

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
/* The exit code for a result (common.h). */
int sc_report_exit_code(const sc_infer_result *r);

G_END_DECLS

#endif
