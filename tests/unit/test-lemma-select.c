/* test-lemma-select.c — deferred loading and the selection of lemmas
 * (lemma.h: sc_lemma_set_load_dir_deferred, sc_lemma_set_select; the scan
 * of src/lemma/scan.c).
 *
 * The scan must see what the parser sees: on every file of lemmas/, the
 * same statements (start, kind, name, <=>, class), and the same calls on
 * each side.  A deferred load selected with every operator met is a full
 * load (the same lemmas, names, places and texts, in the same order); a
 * selection keeps a sub-sequence of it, and every lemma whose left side is
 * met.  The operator registry is process-wide and a second set of a process
 * does not use the cache (lemma.c, cache_key), so every load runs in a
 * subprocess of its own, writing what it loaded to a file. */
#include "lemma/lemma-private.h"
#include "shardcheck/lemma-cache.h"

#include <glib/gstdio.h>
#include <string.h>

#define LIB SC_TEST_SRCDIR "/lemmas"

/* The loads use a part of the library (a full load with its instance tests
 * is slow under the sanitizers): a class lemma file, plain lemmas, and
 * operator declarations with definitions, copied into the temporary
 * directory (lib_dir). */
static const char *const lib_part[] = {"class-elementwise.lemma", "matmul.lemma", "pad.lemma",
                                       "custom-debug.lemma"};
static char *lib_dir;

/* ---- the scan against the parser ---- */

static void calls_of(const lx *e, GPtrArray *out) {
  if (e == NULL)
    return;
  if (e->kind == LX_CALL)
    g_ptr_array_add(out, e->text);
  for (uint32_t i = 0; i < e->n; i++)
    calls_of(e->kids[i], out);
}

static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "a b c" of NAMES (sorted when SORT). */
static char *joined(GPtrArray *names, gboolean sort) {
  g_autoptr(GPtrArray) c = g_ptr_array_new();
  for (guint i = 0; i < names->len; i++)
    g_ptr_array_add(c, g_ptr_array_index(names, i));
  if (sort)
    g_ptr_array_sort(c, cmp_str);
  g_ptr_array_add(c, NULL);
  return g_strjoinv(" ", (char **)c->pdata);
}

static void check_file(const char *path) {
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  ld_diag d;
  ld_diag_init(&d, path, text);
  g_autoptr(GPtrArray) stmts = g_ptr_array_new_with_free_func(ld_stmt_free);
  ld_parse(&d, text, stmts);
  g_assert_cmpuint(d.errors->len, ==, 0);
  ld_diag_clear(&d);
  g_autoptr(GPtrArray) scans = g_ptr_array_new_with_free_func(ld_scan_free);
  ld_scan_text(text, scans);
  g_assert_cmpuint(scans->len, ==, stmts->len);
  for (guint i = 0; i < stmts->len; i++) {
    const ld_stmt *s = g_ptr_array_index(stmts, i);
    const ld_scan *sc = g_ptr_array_index(scans, i);
    g_assert_cmpint(sc->is_op, ==, s->kind == LD_OP);
    g_assert_cmpint(sc->is_lemma, ==, s->kind == LD_LEMMA);
    if (s->kind == LD_OP) {
      g_assert_cmpuint(sc->start, ==, s->op->start);
      continue;
    }
    const ld_lemma *l = s->lemma;
    g_assert_cmpuint(sc->start, ==, l->start);
    g_assert_cmpstr(sc->name, ==, l->name);
    g_assert_cmpint(sc->both, ==, l->both);
    g_assert_cmpstr(sc->class_var, ==, l->class_var);
    g_assert_cmpstr(sc->class_name, ==, l->class_name);
    g_autoptr(GPtrArray) lhs = g_ptr_array_new(), rhs = g_ptr_array_new(),
                         all = g_ptr_array_new();
    calls_of(l->lhs, lhs);
    calls_of(l->rhs, rhs);
    calls_of(l->lhs, all);
    calls_of(l->rhs, all);
    calls_of(l->where, all);
    for (guint j = 0; j < l->requires->len; j++)
      calls_of(g_ptr_array_index(l->requires, j), all);
    g_autofree char *want_lhs = joined(lhs, FALSE), *got_lhs = joined(sc->lhs, FALSE);
    g_assert_cmpstr(got_lhs, ==, want_lhs);
    if (l->both) {
      g_autofree char *want_rev = joined(rhs, FALSE), *got_rev = joined(sc->rev, FALSE);
      g_assert_cmpstr(got_rev, ==, want_rev);
    } else {
      g_assert_cmpuint(sc->rev->len, ==, 0);
    }
    g_autofree char *want_all = joined(all, TRUE), *got_all = joined(sc->all, TRUE);
    g_assert_cmpstr(got_all, ==, want_all);
  }
}

static void test_scan_library(void) {
  GDir *dir = g_dir_open(LIB, 0, NULL);
  g_assert_nonnull(dir);
  const char *name;
  guint n = 0;
  while ((name = g_dir_read_name(dir)) != NULL) {
    if (!g_str_has_suffix(name, ".lemma"))
      continue;
    g_autofree char *path = g_build_filename(LIB, name, NULL);
    check_file(path);
    n++;
  }
  g_dir_close(dir);
  g_assert_cmpuint(n, >, 10);
}

static void test_scan_layout(void) {
  /* a statement continues on indented lines and inside brackets; comments
   * and strings hide what they hold; '#' glued to a name is a result */
  const char *text = "# a comment: lemma x: f(?a) => ?a\n"
                     "lemma a: aten.mm(?x,\n"
                     "?y) => topk#1(?x, \"p(q)\")  # mul(\n"
                     "\n"
                     "  # indented comment\n"
                     "  where size(?x, 0) >= 1\n"
                     "lemma b: ?f(?x) <=> cat(?f(?x), ?x, dim=0)\n"
                     "  for ?f in elementwise1\n";
  g_autoptr(GPtrArray) scans = g_ptr_array_new_with_free_func(ld_scan_free);
  ld_scan_text(text, scans);
  g_assert_cmpuint(scans->len, ==, 2);
  const ld_scan *a = g_ptr_array_index(scans, 0), *b = g_ptr_array_index(scans, 1);
  g_assert_cmpstr(a->name, ==, "a");
  g_autofree char *al = joined(a->lhs, FALSE), *aa = joined(a->all, TRUE);
  g_assert_cmpstr(al, ==, "aten.mm");
  g_assert_cmpstr(aa, ==, "aten.mm size topk");
  g_assert_false(a->both);
  g_assert_cmpstr(b->name, ==, "b");
  g_assert_true(b->both);
  g_assert_cmpstr(b->class_var, ==, "f");
  g_assert_cmpstr(b->class_name, ==, "elementwise1");
  g_autofree char *bl = joined(b->lhs, FALSE), *br = joined(b->rev, FALSE);
  g_assert_cmpstr(bl, ==, "?f");
  g_assert_cmpstr(br, ==, "cat ?f");
}

/* ---- deferred loads, each in a subprocess ---- */

static char *cache_dir;

/* Writes the lemmas of SET, one "name file:line:col text" per line, to
 * $SC_SELECT_OUT. */
static void dump(const sc_lemma_set *set) {
  GString *g = g_string_new(NULL);
  g_string_append_printf(g, "all %u\x1e\n", sc_lemma_set_n_all(set));
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(set); i++) {
    const sc_lemma_info *li = sc_lemma_set_lemma(set, i);
    g_assert_cmpint(sc_lemma_set_find(set, li->name), ==, (int32_t)i);
    g_string_append_printf(g, "%s %s:%u:%u %s\x1e\n", li->name, li->file, li->line, li->col,
                           li->text);
  }
  g_assert_true(g_file_set_contents(g_getenv("SC_SELECT_OUT"), g->str, -1, NULL));
  g_string_free(g, TRUE);
}

static void child_full(void) {
  if (!g_test_subprocess()) {
    g_test_skip("a subprocess of the tests above");
    return;
  }
  g_autoptr(sc_lemma_set) set = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_dir(set, lib_dir, NULL));
  dump(set);
}

/* Deferred, then selected: all (SC_SELECT_OPS unset) or from the
 * operators named in SC_SELECT_OPS (qualified names, ','-separated). */
static void child_deferred(void) {
  if (!g_test_subprocess()) {
    g_test_skip("a subprocess of the tests above");
    return;
  }
  g_autoptr(sc_lemma_set) set = sc_lemma_set_new();
  GError *err = NULL;
  g_assert_true(sc_lemma_set_load_dir_deferred(set, lib_dir, &err));
  g_assert_no_error(err);
  /* deferred indeed: only the definitions' unfold lemmas are loaded */
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(set); i++)
    g_assert_nonnull(sc_lemma_set_lemma(set, i)->unfolds);
  const char *ops = g_getenv("SC_SELECT_OPS");
  g_autofree gboolean *met = NULL;
  if (ops != NULL) {
    met = g_new0(gboolean, sc_ops_count() + 1);
    g_auto(GStrv) names = g_strsplit(ops, ",", -1);
    for (guint i = 0; names[i]; i++) {
      const sc_op *op = sc_ops_lookup(names[i], NULL);
      g_assert_nonnull(op);
      met[op->id] = TRUE;
    }
  }
  g_assert_true(sc_lemma_set_select(set, met, &err));
  g_assert_no_error(err);
  dump(set);
}

/* The file a child wrote for MODE (and OPS, may be NULL). */
static char *run_child(const char *mode, const char *ops) {
  g_autofree char *out = g_build_filename(cache_dir, "..", "out.txt", NULL);
  g_setenv("SC_SELECT_OUT", out, TRUE);
  if (ops)
    g_setenv("SC_SELECT_OPS", ops, TRUE);
  else
    g_unsetenv("SC_SELECT_OPS");
  g_autofree char *path = g_strdup_printf("/lemma/select/child/%s", mode);
  g_test_trap_subprocess(path, 300 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed();
  char *text = NULL;
  g_assert_true(g_file_get_contents(out, &text, NULL, NULL));
  g_remove(out);
  return text;
}

/* The cache identifies an executable changed in the last 2 s by its
 * content, an older one by its status (cache.c): wait until this one is
 * old, so that every child computes the same keys. */
static void wait_exe_settled(void) {
  GStatBuf sb;
  g_assert_cmpint(g_stat("/proc/self/exe", &sb), ==, 0);
  gint64 newest = MAX((gint64)sb.st_mtime, (gint64)sb.st_ctime);
  gint64 now = g_get_real_time() / G_USEC_PER_SEC;
  if (newest + 3 > now)
    g_usleep((gulong)(newest + 3 - now) * G_USEC_PER_SEC);
}

static void test_deferred_all_is_full(void) {
  wait_exe_settled();
  g_autofree char *full = run_child("full", NULL); /* fills the cache */
  g_autofree char *deferred = run_child("deferred", NULL);
  g_assert_cmpstr(deferred, ==, full);
}

static void test_selection_is_subsequence(void) {
  wait_exe_settled();
  g_autofree char *full = run_child("full", NULL);
  g_autofree char *sel = run_child("deferred", "aten.mm.default,sc.cat.default");
  g_auto(GStrv) fl = g_strsplit(full, "\x1e\n", -1), sl = g_strsplit(sel, "\x1e\n", -1);
  /* the same library size ("all N"), fewer lemmas, in full-load order */
  g_assert_cmpstr(sl[0], ==, fl[0]);
  guint nf = g_strv_length(fl), ns = g_strv_length(sl);
  g_assert_cmpuint(ns, <, nf / 2);
  g_assert_cmpuint(ns, >, 2);
  guint j = 1;
  for (guint i = 1; i < ns; i++) {
    while (j < nf && strcmp(fl[j], sl[i]) != 0)
      j++;
    g_assert_cmpuint(j, <, nf); /* found, after the previous one */
    j++;
  }
  /* a lemma whose left side calls only met operators is kept: mm of cats */
  g_assert_nonnull(strstr(sel, "\nmm_cat_contract "));
  /* and one about an operator never met is not */
  g_assert_null(strstr(sel, "\npad_"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  GError *err = NULL;
  g_autofree char *tmp = NULL;
  if (g_test_subprocess()) { /* the parent's cache and library */
    cache_dir = g_strdup(g_getenv("SC_LEMMA_CACHE"));
    lib_dir = g_strdup(g_getenv("SC_SELECT_LIB"));
  } else {
    tmp = g_dir_make_tmp("sc-lemma-select-XXXXXX", &err);
    g_assert_no_error(err);
    cache_dir = g_build_filename(tmp, "cache", NULL);
    g_mkdir(cache_dir, 0700);
    g_setenv("SC_LEMMA_CACHE", cache_dir, TRUE);
    lib_dir = g_build_filename(tmp, "lib", NULL);
    g_mkdir(lib_dir, 0700);
    for (size_t i = 0; i < G_N_ELEMENTS(lib_part); i++) {
      g_autofree char *from = g_build_filename(LIB, lib_part[i], NULL);
      g_autofree char *to = g_build_filename(lib_dir, lib_part[i], NULL);
      g_autofree char *text = NULL;
      gsize len = 0;
      g_assert_true(g_file_get_contents(from, &text, &len, NULL));
      g_assert_true(g_file_set_contents(to, text, (gssize)len, NULL));
    }
    g_setenv("SC_SELECT_LIB", lib_dir, TRUE);
  }
  g_test_add_func("/lemma/select/scan-library", test_scan_library);
  g_test_add_func("/lemma/select/scan-layout", test_scan_layout);
  g_test_add_func("/lemma/select/deferred-all-is-full", test_deferred_all_is_full);
  g_test_add_func("/lemma/select/selection-is-subsequence", test_selection_is_subsequence);
  /* run only as the subprocesses of the tests above (skipped otherwise) */
  g_test_add_func("/lemma/select/child/full", child_full);
  g_test_add_func("/lemma/select/child/deferred", child_deferred);
  int rc = g_test_run();
  if (!g_test_subprocess()) {
    GDir *d = g_dir_open(cache_dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d)) != NULL) {
      g_autofree char *p = g_build_filename(cache_dir, name, NULL);
      g_remove(p);
    }
    if (d)
      g_dir_close(d);
    g_rmdir(cache_dir);
    for (size_t i = 0; i < G_N_ELEMENTS(lib_part); i++) {
      g_autofree char *p = g_build_filename(lib_dir, lib_part[i], NULL);
      g_remove(p);
    }
    g_rmdir(lib_dir);
    g_rmdir(tmp);
  }
  g_free(cache_dir);
  g_free(lib_dir);
  return rc;
}
