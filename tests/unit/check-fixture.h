/* check-fixture.h — shared by the unit tests that run a whole check
 * (test-random.c, test-vocab.c, test-report.c): a bundle, the lemma set it
 * was checked with and the result, and a report of the check as text.
 *
 * Ownership: a `checked` owns its three members (checked_clear frees
 * them; SET may be NULL when the lemmas are borrowed); checked_write and
 * text_report return a new string (g_free). */
#ifndef SC_TEST_CHECK_FIXTURE_H
#define SC_TEST_CHECK_FIXTURE_H

#include "shardcheck/report.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
  sc_bundle *b;
  sc_lemma_set *set;
  sc_infer_result *r;
} checked;

static inline void checked_clear(checked *c) {
  sc_infer_result_free(c->r);
  sc_lemma_set_free(c->set);
  sc_bundle_free(c->b);
}

/* A report writer: sc_report_text, sc_report_dot, sc_report_html. */
typedef void (*checked_writer)(FILE *, const sc_bundle *, const sc_infer_result *,
                               const sc_report_options *);

/* What W writes for C with options O (may be NULL). */
static inline char *checked_write(checked_writer w, const checked *c,
                                  const sc_report_options *o) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  g_assert_nonnull(f);
  w(f, c->b, c->r, o);
  fclose(f);
  char *out = g_strdup(buf);
  free(buf);
  return out;
}

/* The text report of C (sc_report_text, default options). */
static inline char *text_report(const checked *c) {
  return checked_write(sc_report_text, c, NULL);
}

#endif
