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
#include "shardcheck/input.h"
#include "shardcheck/lemma-cache.h"
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
  return sc_lemma_cache_file_key(set->chain, text);
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
  d.skip_instance_test = key != NULL && sc_lemma_cache_has(key);
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
      sc_lemma_cache_put(key);
    char *chain = sc_lemma_cache_chain(set->chain, text);
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

/* Reads a lemma file whole: *TEXT (owned by the caller) is valid UTF-8
 * without NUL bytes. */
static gboolean read_lemma_file(const char *path, char **text, GError **error) {
  size_t len = 0;
  g_autoptr(GError) err = NULL;
  *text = NULL;
  /* a regular file under the input limit (input.h), else refused at once */
  if (!sc_input_read(path, text, &len, &err)) {
    size_t pl = strlen(path);
    const char *what = strncmp(err->message, path, pl) == 0 && strncmp(err->message + pl, ": ", 2) == 0
                           ? err->message + pl + 2
                           : err->message;
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO, "%s: error: %s", path, what);
    return FALSE;
  }
  const char *why = strlen(*text) != len                 ? "the file contains a NUL byte"
                    : !g_utf8_validate(*text, (gssize)len, NULL) ? "the file is not UTF-8"
                                                                 : NULL;
  if (why != NULL) {
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO, "%s: error: %s", path, why);
    g_clear_pointer(text, g_free);
    return FALSE;
  }
  return TRUE;
}

gboolean sc_lemma_set_load_file(sc_lemma_set *set, const char *path, GError **error) {
  g_autofree char *text = NULL;
  if (!read_lemma_file(path, &text, error))
    return FALSE;
  return sc_lemma_set_load_string(set, path, text, error);
}

static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The text of one line of a lemma file without its comment ('#' at the
 * start or after a blank: a '#' right after a name is a result index,
 * topk#1). */
static size_t code_length(const char *line, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t'))
      return i;
  return len;
}

static gboolean name_char(char ch) {
  return g_ascii_isalnum(ch) || ch == '_';
}

/* The operators a file declares: "NS.NAME" of each line "op NS.NAME(" or
 * "op NS.NAME.OVERLOAD(" (appended to OUT, owned). */
static void declared_ops(const char *text, GPtrArray *out) {
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len > 3 && strncmp(line, "op ", 3) == 0) {
      const char *q = line + 3;
      while (*q == ' ')
        q++;
      size_t n = 0, dots = 0;
      while (q + n < line + len && (name_char(q[n]) || (q[n] == '.' && ++dots < 2)))
        n++;
      if (n > 0 && dots > 0)
        g_ptr_array_add(out, g_strndup(q, n));
    }
    line = end ? end + 1 : line + len;
  }
}

/* Marks in NEEDS (a row of N flags) the files whose operators TEXT uses
 * outside comments: a dotted name "NS.NAME..." followed by '(' or '#'
 * (a call, a result index) or '.' (an overload) whose "NS.NAME" DECLARER
 * maps to file index + 1.  One pass over the text. */
static void mark_uses(const char *text, GHashTable *declarer, gboolean *needs) {
  GString *name = g_string_new(NULL);
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = code_length(line, end ? (size_t)(end - line) : strlen(line));
    for (size_t i = 0; i < len;) {
      if (!name_char(line[i]) || (i > 0 && (name_char(line[i - 1]) || line[i - 1] == '.'))) {
        i++;
        continue;
      }
      size_t j = i, dots = 0, ns_name = 0;
      while (j < len && (name_char(line[j]) || (line[j] == '.' && j + 1 < len && name_char(line[j + 1])))) {
        if (line[j] == '.' && ++dots == 2)
          ns_name = j;
        j++;
      }
      size_t stop = dots >= 2 ? ns_name : j;
      if (dots >= 1 && j < len && (line[j] == '(' || line[j] == '#')) {
        g_string_overwrite_len(g_string_truncate(name, 0), 0, line + i, (gssize)(stop - i));
        guint file = GPOINTER_TO_UINT(g_hash_table_lookup(declarer, name->str));
        if (file > 0)
          needs[file - 1] = TRUE;
      }
      i = j;
    }
    if (!end)
      break;
    line = end + 1;
  }
  g_string_free(name, TRUE);
}

/* The order to load a directory's files in: by name, except that a file
 * comes after the files declaring operators it uses (a stable topological
 * order; files in a cycle keep name order, and the loader then reports the
 * operator it does not know).  ORDER receives indices into TEXTS. */
static void load_order(GPtrArray *texts, GArray *order) {
  guint n = texts->len;
  GHashTable *declarer = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < n; i++) {
    GPtrArray *decls = g_ptr_array_new();
    declared_ops(g_ptr_array_index(texts, i), decls);
    for (guint k = 0; k < decls->len; k++)
      g_hash_table_insert(declarer, g_ptr_array_index(decls, k), GUINT_TO_POINTER(i + 1));
    g_ptr_array_free(decls, TRUE); /* the names now belong to DECLARER */
  }
  /* needs[i * n + j]: file i uses an operator file j declares */
  gboolean *needs = g_new0(gboolean, (gsize)n * n + 1);
  for (guint i = 0; i < n; i++) {
    mark_uses(g_ptr_array_index(texts, i), declarer, needs + (gsize)i * n);
    needs[(gsize)i * n + i] = FALSE;
  }
  gboolean *done = g_new0(gboolean, n ? n : 1);
  for (guint placed = 0; placed < n; placed++) {
    guint pick = n;
    for (guint i = 0; i < n && pick == n; i++) {
      if (done[i])
        continue;
      gboolean ready = TRUE;
      for (guint j = 0; j < n && ready; j++)
        ready = done[j] || !needs[(gsize)i * n + j];
      if (ready)
        pick = i;
    }
    for (guint i = 0; i < n && pick == n; i++)
      if (!done[i])
        pick = i; /* a cycle: name order */
    done[pick] = TRUE;
    g_array_append_val(order, pick);
  }
  g_hash_table_destroy(declarer);
  g_free(needs);
  g_free(done);
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
  GPtrArray *texts = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < files->len; i++) {
    char *text = NULL;
    ok = read_lemma_file(g_ptr_array_index(files, i), &text, error);
    if (ok)
      g_ptr_array_add(texts, text);
  }
  if (ok) {
    GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));
    load_order(texts, order);
    for (guint k = 0; ok && k < order->len; k++) {
      guint i = g_array_index(order, guint, k);
      ok = sc_lemma_set_load_string(set, g_ptr_array_index(files, i),
                                    g_ptr_array_index(texts, i), error);
    }
    g_array_free(order, TRUE);
  }
  g_ptr_array_free(texts, TRUE);
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
