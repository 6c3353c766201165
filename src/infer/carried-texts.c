/* carried-texts.c — the texts of a carried relation (memo.c), rendered
 * when first read instead of when carried.
 *
 * A carried node's result relation is its template's renamed by sigma;
 * its texts (sc_infer_tensor_exprs: what reports and --validate print)
 * are the texts of those renamed expressions.  Printing them for every
 * carried tensor cost a fifth of the 126-layer check, and the JSON report
 * reads none of them.  So a carry records a text source (a copy of the
 * template result's expressions, shared by every carry from it, with
 * their leaves sorted) and the image of each leaf; the first read renames
 * the copy, prints it as sc_rel_texts_of prints a proved relation, and
 * keeps the texts.  The texts are thus the ones carry printed before, and
 * the ones a proof without memoization prints (tests/unit/test-infer-memo.c).
 *
 * Ownership: a source is reference-counted (the template holds one
 * reference, each carried tensor one); the copy is independent of the
 * walk's context, so the result can be read after the run.  Rendering
 * takes a lock: a result may be read from several threads. */
#include "infer/infer-private.h"

#include <stdlib.h>

struct sc_rel_text_source {
  gint ref;
  GPtrArray *exprs; /* sc_texpr*, owned copies */
  GArray *leaves;   /* sc_id: the leaves of exprs, sorted, unique */
};

static sc_id same_leaf(sc_id t, void *user) {
  (void)user;
  return t;
}

static int cmp_id(const void *a, const void *b) {
  sc_id x = *(const sc_id *)a, y = *(const sc_id *)b;
  return x < y ? -1 : x > y;
}

sc_rel_text_source *sc_rel_text_source_new(const GPtrArray *exprs) {
  sc_rel_text_source *s = g_new0(sc_rel_text_source, 1);
  s->ref = 1;
  s->exprs = g_ptr_array_new_full(exprs->len, (GDestroyNotify)sc_texpr_free);
  s->leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (guint j = 0; j < exprs->len; j++) {
    const sc_texpr *e = g_ptr_array_index(exprs, j);
    g_ptr_array_add(s->exprs, sc_texpr_rename(e, same_leaf, NULL));
    sc_texpr_collect_leaves(e, s->leaves);
  }
  if (s->leaves->len > 1)
    qsort(s->leaves->data, s->leaves->len, sizeof(sc_id), cmp_id);
  guint n = 0;
  for (guint i = 0; i < s->leaves->len; i++)
    if (n == 0 || g_array_index(s->leaves, sc_id, n - 1) != g_array_index(s->leaves, sc_id, i))
      g_array_index(s->leaves, sc_id, n++) = g_array_index(s->leaves, sc_id, i);
  g_array_set_size(s->leaves, n);
  return s;
}

sc_rel_text_source *sc_rel_text_source_ref(sc_rel_text_source *s) {
  g_atomic_int_inc(&s->ref);
  return s;
}

void sc_rel_text_source_unref(sc_rel_text_source *s) {
  if (s == NULL || !g_atomic_int_dec_and_test(&s->ref))
    return;
  g_ptr_array_unref(s->exprs);
  g_array_free(s->leaves, TRUE);
  g_free(s);
}

guint sc_rel_text_source_n_leaves(const sc_rel_text_source *s) { return s->leaves->len; }

sc_id sc_rel_text_source_leaf(const sc_rel_text_source *s, guint i) {
  return g_array_index(s->leaves, sc_id, i);
}

typedef struct {
  const sc_rel_text_source *src;
  const sc_id *image;
} image_env;

static sc_id leaf_image(sc_id t, void *user) {
  const image_env *e = user;
  const sc_id *at = bsearch(&t, e->src->leaves->data, e->src->leaves->len, sizeof(sc_id), cmp_id);
  g_assert(at != NULL);
  return e->image[at - (const sc_id *)(const void *)e->src->leaves->data];
}

guint sc_rel_text_source_n_exprs(const sc_rel_text_source *s) { return s->exprs->len; }

sc_texpr *sc_rel_text_source_rename(const sc_rel_text_source *s, guint j, const sc_id *image) {
  image_env env = {s, image};
  return sc_texpr_rename(g_ptr_array_index(s->exprs, j), leaf_image, &env);
}

struct sc_rel_carried_text {
  sc_rel_text_source *src;
  sc_id *image; /* per leaf of src, in its order */
};

void sc_rel_set_carried_texts(sc_infer_result *res, sc_id t, sc_rel_text_source *src,
                              sc_id *image) {
  if (res->tensor_texts[t])
    g_clear_pointer(&res->tensor_texts[t], g_ptr_array_unref);
  if (res->carried_texts == NULL)
    res->carried_texts =
        g_new0(sc_rel_carried_text *, MAX(sc_graph_n_tensors(sc_bundle_spec(res->bundle)), 1));
  sc_rel_carried_text_free(res->carried_texts[t]);
  sc_rel_carried_text *ct = g_new(sc_rel_carried_text, 1);
  ct->src = src;
  ct->image = image;
  res->carried_texts[t] = ct;
}

void sc_rel_carried_text_free(sc_rel_carried_text *ct) {
  if (ct == NULL)
    return;
  sc_rel_text_source_unref(ct->src);
  g_free(ct->image);
  g_free(ct);
}

G_LOCK_DEFINE_STATIC(render);

void sc_rel_render_carried_texts(sc_infer_result *res, sc_id t) {
  if (res->carried_texts == NULL)
    return;
  G_LOCK(render);
  sc_rel_carried_text *ct = res->carried_texts[t];
  if (ct != NULL && res->tensor_texts[t] == NULL) {
    GPtrArray *renamed = g_ptr_array_new_full(ct->src->exprs->len, (GDestroyNotify)sc_texpr_free);
    for (guint j = 0; j < ct->src->exprs->len; j++)
      g_ptr_array_add(renamed, sc_rel_text_source_rename(ct->src, j, ct->image));
    res->tensor_texts[t] = sc_rel_texts_of(renamed);
    g_ptr_array_unref(renamed);
  }
  if (ct != NULL) {
    res->carried_texts[t] = NULL;
    sc_rel_carried_text_free(ct);
  }
  G_UNLOCK(render);
}
