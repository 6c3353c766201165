/* cache.c — the load cache of the instance test (check.c).
 *
 * Every lemma is type-checked at load time on up to 600 pseudo-random
 * instances, which used to be most of a small check's run time.  The test
 * is deterministic: its outcome is a function of the lemma's text, the
 * operators it resolves to (built-in ones, compiled into the program, and
 * ones declared in lemma files) and the program's code.  So a file that
 * passed every check once is recorded under a key that covers all of
 * that, and a later load of the same text by the same program skips the
 * instance test (every other check still runs: they build what the load
 * returns).  A file with an error is never recorded, so a refusal is
 * reproduced on every load.
 *
 * The key (SHA-256) covers: a version tag, the digest of the running
 * executable's file (/proc/self/exe: any rebuild changes it), the chain
 * digest of the files loaded before into the same set (their operator
 * declarations), and the file's text.  The cache is not used when the
 * process has operators declared by some other set (their declarations
 * are not in the key), nor when /proc/self/exe cannot be read.
 *
 * Location: $SC_LEMMA_CACHE when set ("0" or empty: no cache), else
 * g_get_user_cache_dir()/shardcheck/lemma-cache.  One empty file per key;
 * written atomically (g_file_set_contents); every failure to read or
 * write the cache is silent and only costs the test. */
#include "lemma/lemma-private.h"

#include <string.h>

#define CACHE_TAG "shardcheck lemma instance-test cache v1"

/* The digest of the executable, once per process (NULL: unavailable). */
static gpointer exe_digest_once(gpointer unused) {
  (void)unused;
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents("/proc/self/exe", &data, &len, NULL))
    return NULL;
  return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, len);
}

static const char *exe_digest(void) {
  static GOnce once = G_ONCE_INIT;
  return g_once(&once, exe_digest_once, NULL);
}

/* The cache directory (transfer full), or NULL when caching is off. */
static char *cache_dir(void) {
  const char *env = g_getenv("SC_LEMMA_CACHE");
  if (env != NULL)
    return (*env == '\0' || strcmp(env, "0") == 0) ? NULL : g_strdup(env);
  return g_build_filename(g_get_user_cache_dir(), "shardcheck", "lemma-cache", NULL);
}

char *ld_cache_key(const char *chain, const char *text) {
  const char *exe = exe_digest();
  if (exe == NULL)
    return NULL;
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  const char *parts[] = {CACHE_TAG, exe, chain ? chain : "", text};
  for (size_t i = 0; i < G_N_ELEMENTS(parts); i++) {
    /* length-prefixed, so that no two part lists hash alike */
    char len[32];
    g_snprintf(len, sizeof len, "%zu:", strlen(parts[i]));
    g_checksum_update(ck, (const guchar *)len, -1);
    g_checksum_update(ck, (const guchar *)parts[i], (gssize)strlen(parts[i]));
  }
  char *key = g_strdup(g_checksum_get_string(ck));
  g_checksum_free(ck);
  return key;
}

char *ld_cache_chain(const char *chain, const char *text) {
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  if (chain)
    g_checksum_update(ck, (const guchar *)chain, -1);
  g_checksum_update(ck, (const guchar *)"\n", 1);
  g_checksum_update(ck, (const guchar *)text, (gssize)strlen(text));
  char *out = g_strdup(g_checksum_get_string(ck));
  g_checksum_free(ck);
  return out;
}

gboolean ld_cache_has(const char *key) {
  g_autofree char *dir = cache_dir();
  if (dir == NULL || key == NULL)
    return FALSE;
  g_autofree char *path = g_build_filename(dir, key, NULL);
  return g_file_test(path, G_FILE_TEST_IS_REGULAR);
}

void ld_cache_put(const char *key) {
  g_autofree char *dir = cache_dir();
  if (dir == NULL || key == NULL)
    return;
  if (g_mkdir_with_parents(dir, 0755) != 0)
    return;
  g_autofree char *path = g_build_filename(dir, key, NULL);
  (void)g_file_set_contents(path, "", 0, NULL);
}
