/* test-lemma-cache.c — the load cache of the lemma instance test
 * (src/lemma/cache.c): a text that loaded cleanly is recorded under a key
 * of the executable, the earlier texts of its set and its own text; a
 * recorded text skips the instance test, any other text runs it; a text
 * that fails is never recorded; SC_LEMMA_CACHE=0 turns the cache off.
 *
 * Every test points SC_LEMMA_CACHE at a fresh temporary directory. */
#include "lemma/lemma-private.h"
#include "shardcheck/lemma-cache.h"

#include <glib/gstdio.h>
#include <utime.h>
#include <string.h>

static const char good[] = "lemma cache_neg_neg: neg(neg(?x)) => ?x\n";
/* the sides differ in type: refused by the instance test, and only by it */
static const char bad[] = "lemma cache_sum_drops_dim: sum.dim_IntList(?x, [0], False) => ?x\n";

/* The SHA-256 of TEXT, as lemma.c keys a text (owned by a static pool:
 * tests call it a few times). */
static const char *digest(const char *text) {
  static GPtrArray *pool;
  if (pool == NULL)
    pool = g_ptr_array_new_with_free_func(g_free);
  char *d = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
  g_ptr_array_add(pool, d);
  return d;
}

static char *fresh_cache(void) {
  GError *err = NULL;
  char *dir = g_dir_make_tmp("sc-lemma-cache-XXXXXX", &err);
  g_assert_no_error(err);
  g_setenv("SC_LEMMA_CACHE", dir, TRUE);
  return dir;
}

static guint n_entries(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d == NULL)
    return 0;
  guint n = 0;
  while (g_dir_read_name(d) != NULL)
    n++;
  g_dir_close(d);
  return n;
}

static void remove_dir(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d != NULL) {
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
      g_autofree char *p = g_build_filename(dir, name, NULL);
      g_remove(p);
    }
    g_dir_close(d);
  }
  g_rmdir(dir);
}

static gboolean load(const char *name, const char *text, GError **error) {
  sc_lemma_set *s = sc_lemma_set_new();
  gboolean ok = sc_lemma_set_load_string(s, name, text, error);
  sc_lemma_set_free(s);
  return ok;
}

static void test_records_clean_loads(void) {
  g_autofree char *dir = fresh_cache();
  g_assert_true(load("good.lemma", good, NULL));
  g_assert_cmpuint(n_entries(dir), ==, 1);
  /* the same text again: the same key, nothing new */
  g_assert_true(load("elsewhere.lemma", good, NULL));
  g_assert_cmpuint(n_entries(dir), ==, 1);
  remove_dir(dir);
}

static void test_failure_not_recorded(void) {
  g_autofree char *dir = fresh_cache();
  for (int i = 0; i < 2; i++) {
    GError *err = NULL;
    g_assert_false(load("bad.lemma", bad, &err));
    g_assert_error(err, SC_LEMMA_ERROR, SC_LEMMA_ERROR_TYPE);
    g_assert_nonnull(strstr(err->message, "the two sides of lemma cache_sum_drops_dim differ in type"));
    g_error_free(err);
  }
  g_assert_cmpuint(n_entries(dir), ==, 0);
  remove_dir(dir);
}

/* A recorded key is trusted: forging the key of the ill-typed text makes
 * its load skip the test (which is why only clean loads are recorded),
 * and a one-byte change of the text is a new key that runs it again. */
static void test_key_covers_text(void) {
  g_autofree char *dir = fresh_cache();
  g_autofree char *key = sc_lemma_cache_file_key(NULL, digest(bad));
  g_assert_nonnull(key);
  g_assert_cmpuint(strlen(key), ==, 64);
  sc_lemma_cache_put(key);
  g_assert_true(sc_lemma_cache_has(key));
  g_assert_true(load("bad.lemma", bad, NULL));
  g_autofree char *changed = g_strconcat(bad, "# one more line\n", NULL);
  GError *err = NULL;
  g_assert_false(load("bad.lemma", changed, &err));
  g_assert_error(err, SC_LEMMA_ERROR, SC_LEMMA_ERROR_TYPE);
  g_error_free(err);
  remove_dir(dir);
}

/* The key depends on the texts loaded before into the set. */
static void test_key_covers_chain(void) {
  g_autofree char *dir = fresh_cache();
  g_autofree char *chain = sc_lemma_cache_chain(NULL, digest(good));
  g_autofree char *k0 = sc_lemma_cache_file_key(NULL, digest(bad));
  g_autofree char *k1 = sc_lemma_cache_file_key(chain, digest(bad));
  g_autofree char *k2 = sc_lemma_cache_file_key(chain, digest(good));
  g_assert_cmpstr(k0, !=, k1);
  g_assert_cmpstr(k1, !=, k2);
  /* a record for BAD alone does not vouch for BAD after GOOD */
  sc_lemma_cache_put(k0);
  sc_lemma_set *s = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_string(s, "a.lemma", good, NULL));
  GError *err = NULL;
  g_assert_false(sc_lemma_set_load_string(s, "b.lemma", bad, &err));
  g_assert_error(err, SC_LEMMA_ERROR, SC_LEMMA_ERROR_TYPE);
  g_error_free(err);
  sc_lemma_set_free(s);
  remove_dir(dir);
}

static void test_off(void) {
  g_autofree char *dir = fresh_cache();
  g_setenv("SC_LEMMA_CACHE", "0", TRUE);
  g_assert_true(load("good.lemma", good, NULL));
  g_assert_false(sc_lemma_cache_has("0000"));
  g_assert_cmpuint(n_entries(dir), ==, 0);
  remove_dir(dir);
}

/* Issue 19: a cache directory that others can write is neither read nor
 * written (an entry planted there would let an unchecked text pass). */
static void test_untrusted_dir(void) {
  g_autofree char *dir = fresh_cache();
  g_autofree char *key = sc_lemma_cache_file_key(NULL, digest(bad));
  sc_lemma_cache_put(key);
  g_assert_true(sc_lemma_cache_has(key));
  g_assert_true(sc_lemma_cache_dir_trusted(dir));
  g_assert_cmpint(g_chmod(dir, 0777), ==, 0);
  g_assert_false(sc_lemma_cache_dir_trusted(dir));
  g_assert_false(sc_lemma_cache_has(key));
  /* the planted entry for BAD does not make it load */
  GError *err = NULL;
  g_assert_false(load("bad.lemma", bad, &err));
  g_error_free(err);
  g_assert_true(load("good.lemma", good, NULL));
  g_assert_cmpuint(n_entries(dir), ==, 1); /* nothing written */
  g_assert_cmpint(g_chmod(dir, 0700), ==, 0);
  g_assert_true(sc_lemma_cache_has(key));
  remove_dir(dir);
}

/* Issue 19: the cache keeps at most SC_LEMMA_CACHE_MAX_ENTRIES entries,
 * evicting the least recently used; a hit refreshes an entry. */
static void test_eviction(void) {
  g_autofree char *dir = fresh_cache();
  g_autofree char *keep = sc_lemma_cache_file_key(NULL, digest(good));
  for (guint i = 0; i < SC_LEMMA_CACHE_MAX_ENTRIES + 10; i++) {
    g_autofree char *part = g_strdup_printf("entry %u", i);
    const char *parts[] = {part};
    g_autofree char *k = sc_lemma_cache_key("test", parts, 1);
    g_autofree char *path = g_build_filename(dir, k, NULL);
    g_assert_true(g_file_set_contents(path, "", 0, NULL));
    struct utimbuf t = {(time_t)(1000 + i), (time_t)(1000 + i)};
    g_assert_cmpint(utime(path, &t), ==, 0);
  }
  g_assert_cmpuint(n_entries(dir), ==, SC_LEMMA_CACHE_MAX_ENTRIES + 10);
  sc_lemma_cache_put(keep);
  g_assert_cmpuint(n_entries(dir), ==, SC_LEMMA_CACHE_MAX_ENTRIES);
  g_assert_true(sc_lemma_cache_has(keep));
  /* the oldest went first */
  const char *p0[] = {"entry 0"};
  g_autofree char *k0 = sc_lemma_cache_key("test", p0, 1);
  g_assert_false(sc_lemma_cache_has(k0));
  const char *pl[] = {"entry 2057"};
  g_autofree char *kl = sc_lemma_cache_key("test", pl, 1);
  g_assert_true(sc_lemma_cache_has(kl));
  remove_dir(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/lemma/cache/records-clean-loads", test_records_clean_loads);
  g_test_add_func("/lemma/cache/failure-not-recorded", test_failure_not_recorded);
  g_test_add_func("/lemma/cache/key-covers-text", test_key_covers_text);
  g_test_add_func("/lemma/cache/key-covers-chain", test_key_covers_chain);
  g_test_add_func("/lemma/cache/off", test_off);
  g_test_add_func("/lemma/cache/untrusted-dir", test_untrusted_dir);
  g_test_add_func("/lemma/cache/eviction", test_eviction);
  return g_test_run();
}
