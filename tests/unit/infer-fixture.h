/* infer-fixture.h — shared by the unit tests of the driver's passes
 * (test-infer-*.c): an impl leaf graph, a tensor-language e-graph over it,
 * and the few members of the driver's context (infer-private.h) that a
 * post-saturation pass reads (lang, symtab, result's learned sizes, the
 * hook list).  No bundle, no walk: each test builds the small e-graph the
 * pass changes and asserts what it produces.
 *
 * Ownership: ifx_init makes everything; ifx_clear frees it.
 *
 * The tests that run the whole driver on a bundle share ifx_run and
 * ifx_run_json (the repository's lemma library, loaded once per test
 * program by ifx_library and freed by ifx_library_free) and
 * ifx_assert_same_texts. */
#ifndef SC_TEST_INFER_FIXTURE_H
#define SC_TEST_INFER_FIXTURE_H

#include "infer/infer-private.h"

#include <string.h>

typedef struct {
  sc_symtab *st;
  sc_graph *g;
  sc_lang *lang;
  sc_infer_result res;
  sc_rel_ctx c;
} ifx;

static inline void ifx_input(ifx *f, const char *name, sc_dtype dt, uint32_t rank,
                             const int64_t *sizes) {
  sc_ttype t;
  t.shape = sc_shape_of(rank, sizes);
  t.dtype = dt;
  GError *err = NULL;
  g_assert_true(sc_graph_add_input(f->g, name, &t, NULL, &err));
  g_assert_no_error(err);
}

/* Starts a fixture; add inputs with ifx_input, then call ifx_finish. */
static inline void ifx_init(ifx *f) {
  memset(f, 0, sizeof *f);
  f->st = sc_symtab_new();
  f->g = sc_graph_new(f->st);
}

static inline void ifx_finish(ifx *f) {
  GError *err = NULL;
  g_assert_true(sc_graph_finish(f->g, &err));
  g_assert_no_error(err);
  f->lang = sc_lang_new(f->st, f->g);
  f->res.learned = g_ptr_array_new_with_free_func(g_free);
  f->c.st = f->st;
  f->c.impl = f->g;
  f->c.lang = f->lang;
  f->c.res = &f->res;
  f->c.hooks = g_array_new(FALSE, FALSE, sizeof(sc_rel_hook));
}

static inline void ifx_clear(ifx *f) {
  g_array_free(f->c.hooks, TRUE);
  g_ptr_array_unref(f->res.learned);
  sc_lang_free(f->lang);
  sc_graph_free(f->g);
  sc_symtab_free(f->st);
}

static inline sc_egraph *ifx_eg(ifx *f) {
  return sc_lang_egraph(f->lang);
}

/* Parse TEXT over the leaf graph (any operator) and add it; its class. */
static inline sc_id ifx_add(ifx *f, const char *text) {
  GError *err = NULL;
  g_autoptr(sc_texpr) t = sc_texpr_parse(text, f->g, FALSE, &err);
  if (err != NULL)
    g_printerr("%s: %s\n", text, err->message);
  g_assert_no_error(err);
  sc_id c = sc_lang_add_texpr(f->lang, t, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(c, !=, SC_ID_NONE);
  return c;
}

static inline gboolean ifx_same(ifx *f, sc_id a, sc_id b) {
  sc_egraph_rebuild(ifx_eg(f));
  return sc_egraph_find(ifx_eg(f), a) == sc_egraph_find(ifx_eg(f), b);
}

/* The slot of the lemma library loaded by ifx_library. */
static inline sc_lemma_set **ifx_library_slot(void) {
  static sc_lemma_set *library;
  return &library;
}

/* The repository's lemmas/ directory, loaded at the first call; owned by
 * the fixture until ifx_library_free. */
static inline sc_lemma_set *ifx_library(void) {
  sc_lemma_set **slot = ifx_library_slot();
  if (*slot == NULL) {
    GError *err = NULL;
    g_autofree char *lemmas = g_build_filename(SC_TEST_SRCDIR, "lemmas", NULL);
    *slot = sc_lemma_set_new();
    g_assert_true(sc_lemma_set_load_dir(*slot, lemmas, &err));
    g_assert_no_error(err);
  }
  return *slot;
}

static inline void ifx_library_free(void) {
  sc_lemma_set **slot = ifx_library_slot();
  if (*slot != NULL)
    sc_lemma_set_free(*slot);
  *slot = NULL;
}

/* The driver run on bundle B with OPTS (NULL: the defaults) and the
 * library; the result borrows B (free it after the result). */
static inline sc_infer_result *ifx_run(const sc_bundle *b, const sc_infer_options *opts) {
  sc_infer_options o;
  if (opts != NULL)
    o = *opts;
  else
    sc_infer_options_init(&o);
  o.lemmas = ifx_library();
  GError *err = NULL;
  sc_infer_result *r = sc_infer_run(b, &o, &err);
  g_assert_no_error(err);
  g_assert_nonnull(r);
  return r;
}

/* ifx_run on the bundle JSON (named NAME in errors); *BP gets the bundle,
 * which the caller frees after the result. */
static inline sc_infer_result *ifx_run_json(const char *json, const char *name,
                                            const sc_infer_options *opts, sc_bundle **bp) {
  GError *err = NULL;
  sc_bundle *b = sc_bundle_load_string(json, name, &err);
  g_assert_no_error(err);
  *bp = b;
  return ifx_run(b, opts);
}

/* Two lists of relation texts (either may be NULL: none) are equal. */
static inline void ifx_assert_same_texts(const GPtrArray *a, const GPtrArray *b) {
  g_assert_cmpuint(a ? a->len : 0, ==, b ? b->len : 0);
  for (guint i = 0; a != NULL && i < a->len; i++)
    g_assert_cmpstr(g_ptr_array_index(a, i), ==, g_ptr_array_index(b, i));
}

#endif
