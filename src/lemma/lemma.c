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

/* A class lemma kept for operators of its class declared by later loads:
 * its statement and the text its spans point into. */
typedef struct {
  ld_lemma *stmt;
  sc_op_class cls;
  char *file;
  char *text;
} ld_class;

static void ld_class_free(gpointer p) {
  ld_class *k = p;
  if (k == NULL)
    return;
  ld_lemma_free(k->stmt);
  g_free(k->file);
  g_free(k->text);
  g_free(k);
}

struct sc_lemma_set {
  GPtrArray *classes;  /* ld_class*: the class lemmas loaded so far */
  GPtrArray *lemmas;   /* ld_checked* */
  GArray *infos;       /* sc_lemma_info, parallel */
  GHashTable *by_name; /* name -> index + 1 */
  GPtrArray *ops;      /* const sc_op* */
  char *chain;         /* digest of the texts loaded so far (cache.c), or NULL */
};

sc_lemma_set *sc_lemma_set_new(void) {
  sc_lemma_set *s = g_new0(sc_lemma_set, 1);
  s->classes = g_ptr_array_new_with_free_func(ld_class_free);
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
  g_ptr_array_free(s->classes, TRUE);
  g_ptr_array_free(s->ops, TRUE);
  g_free(s->chain);
  g_free(s);
}

/* The instance-test cache key of TEXT loaded into SET (cache.c), or NULL
 * when the cache cannot vouch for it: the registry holds operators
 * declared outside SET (by another set of this process), whose
 * declarations the key does not cover. */
static char *cache_key(const sc_lemma_set *set, const char *text_digest) {
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
  return sc_lemma_cache_file_key(set->chain, text_digest);
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

/* Instances whose instance test passed in this process: "TEXT\x1fOP@ADDR"
 * (the class lemma's text and the operator, whose shape rule is fixed for
 * the process).  A class lemma loaded again (every lemma program of the
 * tests, a second set) skips the test it passed. */
static GHashTable *passed_instances;
G_LOCK_DEFINE_STATIC(passed_instances);

static char *instance_key(const ld_diag *d, const ld_lemma *stmt, const sc_op *op) {
  return g_strdup_printf("%.*s\x1f%s@%p", (int)(stmt->end - stmt->start), d->text + stmt->start,
                         op->qualname, (const void *)op);
}

/* Check the instance of class lemma STMT for OP (errors into D, prefixed
 * with the operator) and add it to PENDING, unless its name is taken. */
static void add_instance(ld_diag *d, const char *file, const ld_lemma *stmt, const sc_op *op,
                         const sc_lemma_set *set, GHashTable *names, GPtrArray *pending) {
  guint n0 = d->errors->len;
  g_autofree char *key = instance_key(d, stmt, op);
  G_LOCK(passed_instances);
  gboolean passed = passed_instances != NULL && g_hash_table_contains(passed_instances, key);
  G_UNLOCK(passed_instances);
  gboolean skip = d->skip_instance_test;
  d->skip_instance_test = skip || passed;
  ld_lemma *l = ld_class_instance(d, stmt, op);
  ld_checked *k = l != NULL ? ld_check_lemma(d, file, l) : NULL;
  ld_lemma_free(l);
  d->skip_instance_test = skip;
  if (k != NULL && !passed && d->errors->len == n0) {
    G_LOCK(passed_instances);
    if (passed_instances == NULL)
      passed_instances = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_add(passed_instances, g_steal_pointer(&key));
    G_UNLOCK(passed_instances);
  }
  for (guint i = n0; i < d->errors->len; i++) {
    ld_error *e = &g_array_index(d->errors, ld_error, i);
    char *msg = g_strdup_printf("with ?%s = %s: %s", stmt->class_var, op->qualname, e->msg);
    g_free(e->msg);
    e->msg = msg;
  }
  if (k == NULL)
    return;
  char *text = g_strdup_printf("%s\n  (instance: ?%s = %s)", k->text, stmt->class_var, op->qualname);
  g_free(k->text);
  k->text = text;
  if (g_hash_table_contains(set->by_name, k->name) || g_hash_table_contains(names, k->name)) {
    ld_error_at(d, stmt->name_pos, SC_LEMMA_ERROR_DUPLICATE, "lemma %s is defined twice",
                k->name);
    ld_checked_free(k);
    return;
  }
  g_hash_table_add(names, k->name);
  g_ptr_array_add(pending, k);
}

/* The class lemma of statement S: its instances for every operator of its
 * class registered so far into PENDING, and S (moved) into NEW_CLASSES. */
static void load_class_lemma(ld_diag *d, const char *file, const char *text, ld_stmt *s,
                             const sc_lemma_set *set, GHashTable *names, GHashTable *class_names,
                             GPtrArray *pending, GPtrArray *new_classes) {
  ld_lemma *l = s->lemma;
  sc_op_class cls;
  if (!sc_ops_class_lookup(l->class_name, &cls)) {
    ld_error_at(d, l->class_pos, SC_LEMMA_ERROR_UNKNOWN_OP,
                "unknown operator class '%s' (classes: %s)", l->class_name, sc_ops_class_names());
    return;
  }
  gboolean dup = g_hash_table_contains(class_names, l->name);
  for (guint i = 0; i < set->classes->len && !dup; i++)
    dup = strcmp(((ld_class *)g_ptr_array_index(set->classes, i))->stmt->name, l->name) == 0;
  if (dup) {
    ld_error_at(d, l->name_pos, SC_LEMMA_ERROR_DUPLICATE, "lemma %s is defined twice", l->name);
    return;
  }
  g_hash_table_add(class_names, l->name);
  for (uint32_t i = 0; i < sc_ops_count(); i++)
    if (sc_ops_in_class(sc_ops_at(i), cls))
      add_instance(d, file, l, sc_ops_at(i), set, names, pending);
  ld_class *k = g_new0(ld_class, 1);
  k->stmt = g_steal_pointer(&s->lemma);
  k->cls = cls;
  k->file = g_strdup(file);
  k->text = g_strdup(text);
  g_ptr_array_add(new_classes, k);
}

/* The instances of the class lemmas of earlier loads for the operators
 * this load declares (NEW_OPS); errors go to D at the declaration. */
static void instantiate_old_classes(ld_diag *d, const sc_lemma_set *set, GPtrArray *new_ops,
                                    GArray *new_op_pos, GHashTable *names, GPtrArray *pending) {
  for (guint i = 0; i < set->classes->len; i++) {
    const ld_class *k = g_ptr_array_index(set->classes, i);
    for (guint j = 0; j < new_ops->len; j++) {
      const sc_op *op = g_ptr_array_index(new_ops, j);
      if (!sc_ops_in_class(op, k->cls))
        continue;
      ld_diag d2;
      ld_diag_init(&d2, k->file, k->text);
      d2.skip_instance_test = d->skip_instance_test;
      add_instance(&d2, k->file, k->stmt, op, set, names, pending);
      if (d2.errors->len > 0) {
        g_autoptr(GError) err = NULL;
        ld_diag_to_gerror(&d2, &err);
        ld_error_at(d, g_array_index(new_op_pos, uint32_t, j), SC_LEMMA_ERROR_DECL,
                    "%s is in class %s, whose lemma %s does not hold for it: %s", op->qualname,
                    sc_ops_class_name(k->cls), k->stmt->name, err->message);
      }
      ld_diag_clear(&d2);
    }
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
  /* the text is hashed once, for the key and the chain */
  g_autofree char *digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
  g_autofree char *key = cache_key(set, digest);
  d.skip_instance_test = key != NULL && sc_lemma_cache_has(key);
  GPtrArray *stmts = g_ptr_array_new_with_free_func(ld_stmt_free);
  ld_parse(&d, text, stmts);
  GPtrArray *pending = g_ptr_array_new_with_free_func(ld_checked_free);
  GPtrArray *new_ops = g_ptr_array_new();
  GArray *new_op_pos = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  GPtrArray *new_classes = g_ptr_array_new_with_free_func(ld_class_free);
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  GHashTable *class_names = g_hash_table_new(g_str_hash, g_str_equal);
  /* declarations first, so that lemmas anywhere in the file may use them */
  for (int pass = 0; pass < 2; pass++) {
    for (guint i = 0; i < stmts->len; i++) {
      ld_stmt *s = g_ptr_array_index(stmts, i);
      ld_checked *k = NULL;
      uint32_t name_pos = 0;
      if (pass == 0 && s->kind == LD_OP) {
        const sc_op *op = ld_check_opdecl(&d, filename, s->op, &k);
        if (op != NULL) {
          g_ptr_array_add(new_ops, (gpointer)op);
          g_array_append_val(new_op_pos, s->op->name_pos);
        }
        name_pos = s->op->name_pos;
      } else if (pass == 1 && s->kind == LD_LEMMA && s->lemma->class_var != NULL) {
        load_class_lemma(&d, filename, text, s, set, names, class_names, pending, new_classes);
        continue;
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
  instantiate_old_classes(&d, set, new_ops, new_op_pos, names, pending);
  gboolean ok = d.errors->len == 0;
  if (ok) {
    for (guint i = 0; i < new_classes->len; i++) {
      g_ptr_array_add(set->classes, g_ptr_array_index(new_classes, i));
      new_classes->pdata[i] = NULL;
    }
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
    char *chain = sc_lemma_cache_chain(set->chain, digest);
    g_free(set->chain);
    set->chain = chain;
  } else {
    ld_diag_to_gerror(&d, error);
  }
  g_hash_table_destroy(names);
  g_hash_table_destroy(class_names);
  g_ptr_array_free(new_classes, TRUE);
  g_array_free(new_op_pos, TRUE);
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
