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
  const ld_scan *scan; /* deferred loading: its scan (owned by an ld_text) */
  uint32_t lc[3];      /* deferred loading: where materialize last counted
                          lines and columns (position, line, column) */
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

/* A file loaded deferred: its name, text and statements as scanned. */
typedef struct {
  char *file;
  char *text;
  GPtrArray *scans; /* ld_scan* */
  uint32_t lc[3];   /* where materialize last counted lines and columns
                       (position, line, column): lemmas are materialized in
                       the order of the text, so the counts go on from the
                       previous lemma instead of the text's start */
} ld_text;

static void ld_text_free(gpointer p) {
  ld_text *t = p;
  g_free(t->file);
  g_free(t->text);
  g_ptr_array_free(t->scans, TRUE);
  g_free(t);
}

/* One lemma of a deferred load, in load order: checked at load (an
 * operator definition's unfold lemma, always kept), or a plain lemma
 * statement (SRC, SCAN), or the instance of class lemma CLS for OP. */
typedef struct {
  ld_checked *k;
  ld_text *src; /* (its line count cursor is updated) */
  const ld_scan *scan;
  ld_class *cls;
  const sc_op *op;
  gboolean selected;
  GArray *lhs, *rev, *all; /* const sc_op*, filled by the selection */
} ld_entry;

static void ld_entry_free(gpointer p) {
  ld_entry *e = p;
  ld_checked_free(e->k);
  if (e->lhs) {
    g_array_free(e->lhs, TRUE);
    g_array_free(e->rev, TRUE);
    g_array_free(e->all, TRUE);
  }
  g_free(e);
}

struct sc_lemma_set {
  GPtrArray *classes;  /* ld_class*: the class lemmas loaded so far */
  GPtrArray *lemmas;   /* ld_checked* */
  GArray *infos;       /* sc_lemma_info, parallel */
  GHashTable *by_name; /* name -> index + 1 */
  GPtrArray *ops;      /* const sc_op* */
  char *chain;         /* digest of the texts loaded so far (cache.c), or NULL */
  /* deferred loading (select.c): NULL when nothing waits for a selection */
  GPtrArray *entries;  /* ld_entry*, in load order */
  GPtrArray *texts;    /* ld_text* the entries read */
  uint32_t n_dropped;  /* lemmas the selection left out */
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
  if (s->entries)
    g_ptr_array_free(s->entries, TRUE);
  if (s->texts)
    g_ptr_array_free(s->texts, TRUE);
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
    ld_class *k = g_ptr_array_index(set->classes, i);
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

/* The *.lemma files of DIR (FILES, by name), their texts (TEXTS) and the
 * order to load them in (ORDER: indices). */
static gboolean read_dir(const char *dir, GPtrArray *files, GPtrArray *texts, GArray *order,
                         GError **error) {
  g_autoptr(GError) err = NULL;
  GDir *dh = g_dir_open(dir, 0, &err);
  if (dh == NULL) {
    g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO, "%s: error: %s", dir, err->message);
    return FALSE;
  }
  const char *name;
  while ((name = g_dir_read_name(dh)) != NULL)
    if (g_str_has_suffix(name, ".lemma"))
      g_ptr_array_add(files, g_build_filename(dir, name, NULL));
  g_dir_close(dh);
  g_ptr_array_sort(files, cmp_str);
  for (guint i = 0; i < files->len; i++) {
    char *text = NULL;
    if (!read_lemma_file(g_ptr_array_index(files, i), &text, error))
      return FALSE;
    g_ptr_array_add(texts, text);
  }
  load_order(texts, order);
  return TRUE;
}

gboolean sc_lemma_set_load_dir(sc_lemma_set *set, const char *dir, GError **error) {
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
  if (!read_dir(dir, files, texts, order, error))
    return FALSE;
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    if (!sc_lemma_set_load_string(set, g_ptr_array_index(files, i),
                                  g_ptr_array_index(texts, i), error))
      return FALSE;
  }
  return TRUE;
}

/* ---- deferred loading --------------------------------------------------
 *
 * A file whose load passed before (the cache, with the same files before
 * it, in this executable) is only scanned (scan.c): its operator
 * declarations are parsed and checked at once (they register operators a
 * bundle may call, and their definitions are always kept), its lemmas wait
 * as entries for sc_lemma_set_select, which parses and checks, in load
 * order, those that can fire.  Since the file loaded cleanly before, the
 * lemmas a full load would have are exactly the entries: the same names,
 * the same instances, in the same order. */

static ld_entry *add_entry(sc_lemma_set *set) {
  ld_entry *e = g_new0(ld_entry, 1);
  g_ptr_array_add(set->entries, e);
  return e;
}

/* The deferred load of FILE's TEXT (both taken). */
static gboolean load_deferred(sc_lemma_set *set, char *file, char *text, GError **error) {
  ld_text *t = g_new0(ld_text, 1);
  t->file = file;
  t->text = text;
  t->scans = g_ptr_array_new_with_free_func(ld_scan_free);
  g_ptr_array_add(set->texts, t);
  ld_scan_text(text, t->scans);
  ld_diag d;
  ld_diag_init(&d, t->file, t->text);
  d.skip_instance_test = TRUE;
  guint n_old_classes = set->classes->len;
  g_autoptr(GPtrArray) new_ops = g_ptr_array_new();
  g_autoptr(GPtrArray) stmts = g_ptr_array_new_with_free_func(ld_stmt_free);
  for (guint i = 0; i < t->scans->len; i++) {
    const ld_scan *sc = g_ptr_array_index(t->scans, i);
    if (!sc->is_op)
      continue;
    g_ptr_array_set_size(stmts, 0);
    ld_parse_one(&d, t->text, sc->start, stmts);
    if (stmts->len != 1)
      continue;
    ld_checked *k = NULL;
    const sc_op *op = ld_check_opdecl(&d, t->file, ((ld_stmt *)g_ptr_array_index(stmts, 0))->op, &k);
    if (op != NULL) {
      g_ptr_array_add(new_ops, (gpointer)op);
      g_ptr_array_add(set->ops, (gpointer)op);
    }
    if (k != NULL)
      add_entry(set)->k = k;
  }
  for (guint i = 0; i < t->scans->len; i++) {
    const ld_scan *sc = g_ptr_array_index(t->scans, i);
    if (!sc->is_lemma)
      continue;
    if (sc->class_var == NULL) {
      ld_entry *e = add_entry(set);
      e->src = t;
      e->scan = sc;
      continue;
    }
    g_ptr_array_set_size(stmts, 0);
    ld_parse_one(&d, t->text, sc->start, stmts);
    ld_stmt *st = stmts->len == 1 ? g_ptr_array_index(stmts, 0) : NULL;
    sc_op_class cls;
    if (st == NULL || st->kind != LD_LEMMA || st->lemma->class_name == NULL ||
        !sc_ops_class_lookup(st->lemma->class_name, &cls)) {
      ld_error_at(&d, sc->start, SC_LEMMA_ERROR_SYNTAX, "the scan of a class lemma failed");
      continue;
    }
    ld_class *k = g_new0(ld_class, 1);
    k->stmt = g_steal_pointer(&st->lemma);
    k->cls = cls;
    k->file = g_strdup(t->file);
    k->text = g_strdup(t->text);
    k->scan = sc;
    g_ptr_array_add(set->classes, k);
    for (uint32_t j = 0; j < sc_ops_count(); j++) {
      if (!sc_ops_in_class(sc_ops_at(j), cls))
        continue;
      ld_entry *e = add_entry(set);
      e->cls = k;
      e->op = sc_ops_at(j);
    }
  }
  for (guint i = 0; i < n_old_classes; i++) {
    ld_class *k = g_ptr_array_index(set->classes, i);
    for (guint j = 0; j < new_ops->len; j++) {
      if (!sc_ops_in_class(g_ptr_array_index(new_ops, j), k->cls))
        continue;
      ld_entry *e = add_entry(set);
      e->cls = k;
      e->op = g_ptr_array_index(new_ops, j);
    }
  }
  gboolean ok = d.errors->len == 0;
  if (!ok)
    ld_diag_to_gerror(&d, error);
  ld_diag_clear(&d);
  return ok;
}

static gboolean load_all_deferred(sc_lemma_set *set, GPtrArray *files, GPtrArray *texts,
                                  GArray *order, GError **error);

#define DIR_TAG "shardcheck lemma directory v1"

/* The key of the library FILES (read in ORDER) by the files' status
 * (cache.c, sc_lemma_cache_file_identity): recorded once every file of it
 * loaded cleanly, in that order, in this executable; NULL when a file
 * changed in the last seconds (or the cache is off). */
static char *dir_key(const sc_lemma_set *set, GPtrArray *files, GArray *order) {
  g_autofree char *usable = cache_key(set, ""); /* NULL: the cache cannot vouch */
  if (usable == NULL)
    return NULL;
  g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func(g_free);
  for (guint k = 0; k < order->len; k++) {
    const char *path = g_ptr_array_index(files, g_array_index(order, guint, k));
    char *id = sc_lemma_cache_file_identity(path);
    if (id == NULL)
      return NULL;
    g_ptr_array_add(parts, g_strdup(path));
    g_ptr_array_add(parts, id);
  }
  return sc_lemma_cache_key(DIR_TAG, (const char *const *)parts->pdata, parts->len);
}

gboolean sc_lemma_set_load_dir_deferred(sc_lemma_set *set, const char *dir, GError **error) {
  if (set->lemmas->len > 0 || set->ops->len > 0 || set->classes->len > 0 || set->entries)
    return sc_lemma_set_load_dir(set, dir, error);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
  if (!read_dir(dir, files, texts, order, error))
    return FALSE;
  sc_ops_init();
  /* every file must have passed, after the same files, in this executable:
   * the whole library by the files' status, else file by file by content */
  g_autofree char *dkey = dir_key(set, files, order);
  if (dkey != NULL && sc_lemma_cache_has(dkey)) {
    /* later loads into the set: after this library, as its key says */
    set->chain = g_strconcat("dir:", dkey, NULL);
    return load_all_deferred(set, files, texts, order, error);
  }
  gboolean hit = TRUE;
  for (guint k = 0; hit && k < order->len; k++) {
    const char *text = g_ptr_array_index(texts, g_array_index(order, guint, k));
    g_autofree char *digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
    g_autofree char *key = cache_key(set, digest); /* after set->chain: the files before */
    hit = key != NULL && sc_lemma_cache_has(key);
    char *next = sc_lemma_cache_chain(set->chain, digest);
    g_free(set->chain);
    set->chain = next;
  }
  if (!hit) {
    g_clear_pointer(&set->chain, g_free);
    for (guint k = 0; k < order->len; k++) {
      guint i = g_array_index(order, guint, k);
      if (!sc_lemma_set_load_string(set, g_ptr_array_index(files, i),
                                    g_ptr_array_index(texts, i), error))
        return FALSE;
    }
    sc_lemma_cache_put(dkey); /* every file loaded cleanly (NULL: nothing) */
    return TRUE;
  }
  sc_lemma_cache_put(dkey);
  return load_all_deferred(set, files, texts, order, error);
}

/* The deferred loads of FILES (their TEXTS taken) in ORDER. */
static gboolean load_all_deferred(sc_lemma_set *set, GPtrArray *files, GPtrArray *texts,
                                  GArray *order, GError **error) {
  set->entries = g_ptr_array_new_with_free_func(ld_entry_free);
  set->texts = g_ptr_array_new_with_free_func(ld_text_free);
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    char *file = g_ptr_array_index(files, i), *text = g_ptr_array_index(texts, i);
    files->pdata[i] = texts->pdata[i] = NULL; /* taken */
    if (!load_deferred(set, file, text, error))
      return FALSE;
  }
  return TRUE;
}

/* ---- the selection ---- */

static gboolean mention_char(char c) {
  return g_ascii_isalnum(c) || c == '_' || c == '.';
}

gboolean sc_lemma_text_mentions(const char *text, gssize len, const sc_op *op) {
  g_autofree char *own = len >= 0 ? g_strndup(text, (gsize)len) : NULL;
  const char *t = own ? own : text;
  g_autofree char *nsname = g_strdup_printf("%s.%s", op->ns, op->name);
  const char *names[] = {nsname, op->name};
  for (size_t k = 0; k < G_N_ELEMENTS(names); k++) {
    size_t n = strlen(names[k]);
    for (const char *p = strstr(t, names[k]); p; p = strstr(p + 1, names[k])) {
      gboolean left = p == t || !mention_char(p[-1]);
      gboolean right = !mention_char(p[n]) || (p[n] == '.' && k == 0);
      /* a slice (LEN >= 0) may run past the statement: any blank ends it */
      gboolean end = p[n] == '(' || p[n] == '#' || p[n] == '.' || p[n] == ' ' || p[n] == '\0' ||
                     (own != NULL && g_ascii_isspace(p[n]));
      if (left && right && end)
        return TRUE;
    }
  }
  return FALSE;
}

/* The operators declared by SET without a definition that MET holds, into
 * OUT: the report lists every lemma that mentions one (usercheck.h). */
static void met_opaque(const sc_lemma_set *set, const gboolean *met, GPtrArray *out) {
  for (guint i = 0; i < set->ops->len; i++) {
    const sc_op *op = g_ptr_array_index(set->ops, i);
    if (!met[op->id])
      continue;
    gboolean defined = FALSE;
    for (guint j = 0; j < set->entries->len && !defined; j++) {
      const ld_entry *e = g_ptr_array_index(set->entries, j);
      defined = e->k != NULL && e->k->unfolds == op;
    }
    if (!defined)
      g_ptr_array_add(out, (gpointer)op);
  }
}

/* Does entry E's text (a superset: its statement and the comments after
 * it) mention an operator of OPS? */
static gboolean entry_mentions(const ld_entry *e, const GPtrArray *ops) {
  const ld_scan *sc = e->scan != NULL ? e->scan : e->cls->scan;
  const char *text = e->src != NULL ? e->src->text : e->cls->text;
  for (guint i = 0; i < ops->len; i++) {
    const sc_op *op = g_ptr_array_index(ops, i);
    if (e->op == op || sc_lemma_text_mentions(text + sc->start, (gssize)(sc->end - sc->start), op))
      return TRUE;
  }
  return FALSE;
}

static void pnode_ops(const pnode *p, GArray *out) {
  if (p == NULL || p->is_var)
    return;
  g_array_append_val(out, p->op);
  for (uint32_t i = 0; i < p->n_kids; i++)
    pnode_ops(p->kids[i], out);
}

static void names_ops(const GPtrArray *names, const ld_entry *e, GHashTable *memo, GArray *out) {
  for (guint i = 0; i < names->len; i++) {
    const char *n = g_ptr_array_index(names, i);
    const sc_op *op = NULL;
    if (n[0] == '?') {
      if (e->cls != NULL && strcmp(n + 1, e->cls->scan->class_var) == 0)
        op = e->op;
    } else if (!g_hash_table_lookup_extended(memo, n, NULL, (gpointer *)&op)) {
      op = sc_ops_lookup_func(n, NULL);
      g_hash_table_insert(memo, (gpointer)n, (gpointer)op);
    }
    if (op != NULL)
      g_array_append_val(out, op);
  }
}

/* The operators of entry E: its left side, the right side of a <=>
 * lemma (NULL otherwise: it never runs right to left), and all. */
static void entry_ops(ld_entry *e, GHashTable *memo) {
  e->lhs = g_array_new(FALSE, FALSE, sizeof(const sc_op *));
  e->rev = g_array_new(FALSE, FALSE, sizeof(const sc_op *));
  e->all = g_array_new(FALSE, FALSE, sizeof(const sc_op *));
  if (e->k != NULL) {
    pnode_ops(e->k->lhs, e->lhs);
    if (e->k->reversible)
      pnode_ops(e->k->rhs, e->rev);
    pnode_ops(e->k->rhs, e->all);
    for (guint i = 0; i < e->k->requires->len; i++)
      pnode_ops(g_ptr_array_index(e->k->requires, i), e->all);
    g_array_append_vals(e->all, e->lhs->data, e->lhs->len);
    return;
  }
  const ld_scan *sc = e->scan != NULL ? e->scan : e->cls->scan;
  names_ops(sc->lhs, e, memo, e->lhs);
  names_ops(sc->rev, e, memo, e->rev);
  names_ops(sc->all, e, memo, e->all);
  if (e->op != NULL)
    g_array_append_val(e->all, e->op);
}

static gboolean all_met(const GArray *ops, const gboolean *met) {
  for (guint i = 0; i < ops->len; i++)
    if (!met[g_array_index(ops, const sc_op *, i)->id])
      return FALSE;
  return TRUE;
}

/* Marks OP and the operator a call of it becomes in the e-graph (lang.h,
 * sc_lang_canonical_target); TRUE when something was new. */
static gboolean mark(gboolean *met, const sc_op *op) {
  gboolean changed = !met[op->id];
  met[op->id] = TRUE;
  const sc_op *to = sc_lang_canonical_target(op);
  if (to != NULL && !met[to->id]) {
    met[to->id] = TRUE;
    changed = TRUE;
  }
  return changed;
}

/* Selects the entries that can fire from MET (changed: the closure). */
static void close_over(sc_lemma_set *set, gboolean *met) {
  for (uint32_t i = 0; i < sc_ops_count(); i++)
    if (met[i])
      (void)mark(met, sc_ops_at(i));
  gboolean changed = TRUE;
  while (changed) {
    changed = FALSE;
    for (guint i = 0; i < set->entries->len; i++) {
      ld_entry *e = g_ptr_array_index(set->entries, i);
      if (e->selected)
        continue;
      gboolean both = e->k ? e->k->reversible : (e->scan ? e->scan->both : e->cls->scan->both);
      if (!all_met(e->lhs, met) && !(both && all_met(e->rev, met)))
        continue;
      e->selected = TRUE;
      for (guint j = 0; j < e->all->len; j++)
        changed = mark(met, g_array_index(e->all, const sc_op *, j)) || changed;
      for (guint j = 0; j < e->rev->len; j++)
        changed = mark(met, g_array_index(e->rev, const sc_op *, j)) || changed;
    }
  }
}

/* The checked lemma of entry E (parsed and checked now, the instance test
 * skipped: its file passed it); NULL with errors in D. */
static ld_checked *materialize(sc_lemma_set *set, ld_entry *e, GError **error) {
  if (e->k != NULL)
    return g_steal_pointer(&e->k);
  const char *file = e->src ? e->src->file : e->cls->file;
  const char *text = e->src ? e->src->text : e->cls->text;
  uint32_t *lc = e->src ? e->src->lc : e->cls->lc;
  ld_diag d;
  ld_diag_init(&d, file, text);
  d.skip_instance_test = TRUE;
  if (lc[1] != 0) { /* go on from the last count in this text */
    d.lc_pos = lc[0];
    d.lc_line = lc[1];
    d.lc_col = lc[2];
  }
  ld_checked *k = NULL;
  if (e->src != NULL) {
    g_autoptr(GPtrArray) stmts = g_ptr_array_new_with_free_func(ld_stmt_free);
    ld_parse_one(&d, text, e->scan->start, stmts);
    ld_stmt *st = stmts->len == 1 ? g_ptr_array_index(stmts, 0) : NULL;
    if (st != NULL && st->kind == LD_LEMMA)
      k = ld_check_lemma(&d, file, st->lemma);
  } else {
    g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GPtrArray) pending = g_ptr_array_new();
    add_instance(&d, file, e->cls->stmt, e->op, set, names, pending);
    k = pending->len == 1 ? g_ptr_array_index(pending, 0) : NULL;
  }
  if (k == NULL && d.errors->len == 0)
    ld_error_at(&d, e->scan ? e->scan->start : e->cls->stmt->start, SC_LEMMA_ERROR_SYNTAX,
                "a deferred lemma did not load");
  if (d.errors->len > 0) {
    ld_checked_free(k);
    k = NULL;
    ld_diag_to_gerror(&d, error);
  }
  lc[0] = d.lc_pos;
  lc[1] = d.lc_line;
  lc[2] = d.lc_col;
  ld_diag_clear(&d);
  return k;
}

gboolean sc_lemma_set_select(sc_lemma_set *set, const gboolean *met_in, GError **error) {
  g_return_val_if_fail(set != NULL, FALSE);
  if (set->entries == NULL)
    return TRUE;
  uint32_t n_ops = sc_ops_count();
  g_autofree gboolean *met = g_new0(gboolean, n_ops + 1);
  if (met_in != NULL)
    memcpy(met, met_in, sizeof(gboolean) * n_ops);
  g_autoptr(GHashTable) memo = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < set->entries->len; i++)
    entry_ops(g_ptr_array_index(set->entries, i), memo);
  gboolean all = met_in == NULL;
  g_autoptr(GPtrArray) opaque = g_ptr_array_new();
  if (!all) {
    met_opaque(set, met, opaque);
    close_over(set, met);
    for (guint i = 0; opaque->len > 0 && i < set->entries->len; i++) {
      ld_entry *e = g_ptr_array_index(set->entries, i);
      e->selected = e->selected || (e->k == NULL && entry_mentions(e, opaque));
    }
  }
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < set->entries->len; i++) {
    ld_entry *e = g_ptr_array_index(set->entries, i);
    if (!all && !e->selected && e->k == NULL) {
      set->n_dropped++;
      continue;
    }
    ld_checked *k = materialize(set, e, error);
    ok = k != NULL;
    if (ok) {
      g_ptr_array_add(set->lemmas, k);
      g_hash_table_insert(set->by_name, k->name, GUINT_TO_POINTER(set->lemmas->len));
    }
  }
  g_clear_pointer(&set->entries, g_ptr_array_unref);
  g_clear_pointer(&set->texts, g_ptr_array_unref);
  rebuild_infos(set);
  return ok;
}

uint32_t sc_lemma_set_n_all(const sc_lemma_set *set) {
  return set->lemmas->len + set->n_dropped;
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
