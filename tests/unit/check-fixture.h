/* check-fixture.h — shared by the unit tests that run a whole check
 * (test-random.c, test-vocab.c): a bundle, the lemma set it was checked
 * with and the result, and the text report of a check.
 *
 * Ownership: a `checked` owns its three members (checked_clear frees
 * them); text_report returns a new string (g_free). */
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

/* The text report of C (sc_report_text, default options). */
static inline char *text_report(const checked *c) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  g_assert_nonnull(f);
  sc_report_text(f, c->b, c->r, NULL);
  fclose(f);
  char *out = g_strdup(buf);
  free(buf);
  return out;
}

#endif
