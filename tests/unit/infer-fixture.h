/* infer-fixture.h — shared by the unit tests of the driver's passes
 * (test-infer-*.c): an impl leaf graph, a tensor-language e-graph over it,
 * and the few members of the driver's context (infer-private.h) that a
 * post-saturation pass reads (lang, symtab, result's learned sizes, the
 * hook list).  No bundle, no walk: each test builds the small e-graph the
 * pass changes and asserts what it produces.
 *
 * Ownership: ifx_init makes everything; ifx_clear frees it. */
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

#endif
