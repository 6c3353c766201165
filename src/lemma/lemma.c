/* lemma.c — lemma sets: loading files, directories and strings (parse,
 * then check each statement), and reading the lemmas back.
 *
 * Invariants: lemma names are unique in a set; a load either adds all of
 * its lemmas or none (statements are checked into a pending list that is
 * appended only when the whole text is clean); sc_lemma_info entries point
 * into the set's checked lemmas and live as long as the set.  A text that
 * loaded cleanly before, into a set holding the same earlier texts, in the
 * same executable, skips the instance test (cache.c). */
#include "lemma/lemma-private.h"
#include "sc-config.h"

#include <string.h>

G_DEFINE_QUARK(sc-lemma-error-quark, sc_lemma_error)

struct sc_lemma_set {
  GPtrArray *lemmas;   /* ld_checked* */
  GArray *infos;       /* sc_lemma_info, parallel */
  GHashTable *by_name; /* name -> index + 1 */
  GPtrArray *ops;      /* const sc_op* */
  char *chain;         /* digest of the texts loaded so far (cache.c), or NULL */
};

sc_lemma_set *sc_lemma_set_new(void) {
  sc_lemma_set *s = g_new0(sc_lemma_set, 1);
  s->lemmas = g_ptr_array_new_with_free_func(ld_checked_free);
  s->infos = g_array_new(FALSE, FALSE, sizeof(sc_lemma_info));
  s->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  s->ops = g_ptr_array_new();
  return s;
}

void sc_lemma_set_free(sc_lemma_set *s) {
  if (s == NULL)
    return;
  g_hash_table_destroy(s->by_name);
  g_array_free(s->infos, TRUE);
  g_ptr_array_free(s->lemmas, TRUE);
  g_ptr_array_free(s->ops, TRUE);
  g_free(s->chain);
  g_free(s);
}

/* The instance-test cache key of TEXT loaded into SET (cache.c), or NULL
 * when the cache cannot vouch for it: the registry holds operators
 * declared outside SET (by another set of this process), whose
 * declarations the key does not cover. */
static char *cache_key(const sc_lemma_set *set, const char *text) {
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    if (op->rule_data == NULL)
      continue; /* built in: part of the executable */
    gboolean ours = FALSE;
    for (guint j = 0; j < set->ops->len && !ours; j++)
      ours = g_ptr_array_index(set->ops, j) == op;
    if (!ours)
      return NULL;
  }
  return ld_cache_key(set->chain, text);
}

const ld_checked *sc_lemma_set_checked(const sc_lemma_set *set, uint32_t i);
const ld_checked *sc_lemma_set_checked(const sc_lemma_set *set, uint32_t i) {
  g_return_val_if_fail(i < set->lemmas->len, NULL);
  return g_ptr_array_index(set->lemmas, i);
}

static void rebuild_infos(sc_lemma_set *s) {
  g_array_set_size(s->infos, 0);
  for (guint i = 0; i < s->lemmas->len; i++) {
    const ld_checked *k = g_ptr_array_index(s->lemmas, i);
    sc_lemma_info info = {k->name, k->file, k->line, k->col, k->text, k->dir,
                          k->requires->len, k->unfolds};
    g_array_append_val(s->infos, info);
  }
}

gboolean sc_lemma_set_load_string(sc_lemma_set *set, const char *filename, const char *text,
                                  GError **error) {
  g_return_val_if_fail(set != NULL && filename != NULL && text != NULL, FALSE);
  if (strlen(text) > G_MAXUINT32 / 2) {
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO, "%s: file too large", filename);
    return FALSE;
  }
  sc_ops_init();
  ld_diag d;
  ld_diag_init(&d, filename, text);
  g_autofree char *key = cache_key(set, text);
  d.skip_instance_test = key != NULL && ld_cache_has(key);
  GPtrArray *stmts = g_ptr_array_new_with_free_func(ld_stmt_free);
  ld_parse(&d, text, stmts);
  GPtrArray *pending = g_ptr_array_new_with_free_func(ld_checked_free);
  GPtrArray *new_ops = g_ptr_array_new();
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  /* declarations first, so that lemmas anywhere in the file may use them */
  for (int pass = 0; pass < 2; pass++) {
    for (guint i = 0; i < stmts->len; i++) {
      ld_stmt *s = g_ptr_array_index(stmts, i);
      ld_checked *k = NULL;
      uint32_t name_pos = 0;
      if (pass == 0 && s->kind == LD_OP) {
        const sc_op *op = ld_check_opdecl(&d, filename, s->op, &k);
        if (op != NULL)
          g_ptr_array_add(new_ops, (gpointer)op);
        name_pos = s->op->name_pos;
      } else if (pass == 1 && s->kind == LD_LEMMA) {
        name_pos = s->lemma->name_pos;
        if (g_hash_table_contains(set->by_name, s->lemma->name) ||
            g_hash_table_contains(names, s->lemma->name)) {
          ld_error_at(&d, name_pos, SC_LEMMA_ERROR_DUPLICATE, "lemma %s is defined twice",
                      s->lemma->name);
          continue;
        }
        k = ld_check_lemma(&d, filename, s->lemma);
      }
      if (k == NULL)
        continue;
      if (g_hash_table_contains(set->by_name, k->name) ||
          g_hash_table_contains(names, k->name)) {
        ld_error_at(&d, name_pos, SC_LEMMA_ERROR_DUPLICATE, "lemma %s is defined twice",
                    k->name);
        ld_checked_free(k);
        continue;
      }
      g_hash_table_add(names, k->name);
      g_ptr_array_add(pending, k);
    }
  }
  gboolean ok = d.errors->len == 0;
  if (ok) {
    for (guint i = 0; i < pending->len; i++) {
      ld_checked *k = g_ptr_array_index(pending, i);
      pending->pdata[i] = NULL;
      g_ptr_array_add(set->lemmas, k);
      g_hash_table_insert(set->by_name, k->name, GUINT_TO_POINTER(set->lemmas->len));
    }
    for (guint i = 0; i < new_ops->len; i++)
      g_ptr_array_add(set->ops, g_ptr_array_index(new_ops, i));
    rebuild_infos(set);
    if (key != NULL && !d.skip_instance_test)
      ld_cache_put(key);
    char *chain = ld_cache_chain(set->chain, text);
    g_free(set->chain);
    set->chain = chain;
  } else {
    ld_diag_to_gerror(&d, error);
  }
  g_hash_table_destroy(names);
  g_ptr_array_free(new_ops, TRUE);
  g_ptr_array_free(pending, TRUE);
  g_ptr_array_free(stmts, TRUE);
  ld_diag_clear(&d);
  return ok;
}

gboolean sc_lemma_set_load_file(sc_lemma_set *set, const char *path, GError **error) {
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  if (!g_file_get_contents(path, &text, &len, &err)) {
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO, "%s: error: %s", path, err->message);
    return FALSE;
  }
  if (strlen(text) != len) {
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO, "%s: error: the file contains a NUL byte",
                path);
    return FALSE;
  }
  if (!g_utf8_validate(text, (gssize)len, NULL)) {
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO, "%s: error: the file is not UTF-8",
                path);
    return FALSE;
  }
  return sc_lemma_set_load_string(set, path, text, error);
}

static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

gboolean sc_lemma_set_load_dir(sc_lemma_set *set, const char *dir, GError **error) {
  g_autoptr(GError) err = NULL;
  GDir *dh = g_dir_open(dir, 0, &err);
  if (dh == NULL) {
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO, "%s: error: %s", dir, err->message);
    return FALSE;
  }
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(dh)) != NULL)
    if (g_str_has_suffix(name, ".lemma"))
      g_ptr_array_add(files, g_build_filename(dir, name, NULL));
  g_dir_close(dh);
  g_ptr_array_sort(files, cmp_str);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < files->len; i++)
    ok = sc_lemma_set_load_file(set, g_ptr_array_index(files, i), error);
  g_ptr_array_free(files, TRUE);
  return ok;
}

const char *sc_lemma_builtin_dir(void) {
  const char *env = g_getenv("SC_LEMMA_DIR");
  if (env != NULL && *env)
    return env;
  if (g_file_test(SC_LEMMA_SOURCE_DIR, G_FILE_TEST_IS_DIR))
    return SC_LEMMA_SOURCE_DIR;
  return SC_LEMMA_INSTALL_DIR;
}

uint32_t sc_lemma_set_n_lemmas(const sc_lemma_set *set) { return set->lemmas->len; }

const sc_lemma_info *sc_lemma_set_lemma(const sc_lemma_set *set, uint32_t i) {
  g_return_val_if_fail(i < set->infos->len, NULL);
  return &g_array_index(set->infos, sc_lemma_info, i);
}

int32_t sc_lemma_set_find(const sc_lemma_set *set, const char *name) {
  gpointer v = g_hash_table_lookup(set->by_name, name);
  return v ? (int32_t)GPOINTER_TO_UINT(v) - 1 : -1;
}

uint32_t sc_lemma_set_n_ops(const sc_lemma_set *set) { return set->ops->len; }

const sc_op *sc_lemma_set_op(const sc_lemma_set *set, uint32_t i) {
  g_return_val_if_fail(i < set->ops->len, NULL);
  return g_ptr_array_index(set->ops, i);
}
