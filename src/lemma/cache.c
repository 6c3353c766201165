/* cache.c — the cache of lemma checks that passed (lemma-cache.h).
 *
 * Every lemma is type-checked at load time on up to 600 pseudo-random
 * instances, and a user lemma is checked numerically before `check` uses
 * it; both are deterministic, so a pass is recorded under the SHA-256 of
 * what was checked (lemma.c: a version tag, the chain digest of the files
 * loaded before into the same set and the digest of the file's text, or,
 * for a whole directory that loaded cleanly, each file's path and
 * identity by status, sc_lemma_cache_file_identity; usercheck.c: the
 * lemma, the operator definitions it may reach and the options), always
 * with the identity of the running executable's file (/proc/self/exe: its
 * device, inode, size and times, or the digest of a file changed in the
 * last seconds; any rebuild changes it).  Without /proc/self/exe the cache
 * is off.
 *
 * Trust: the directory must belong to the user and be writable by no one
 * else (its parent: not writable by others unless sticky), else the cache
 * is neither read nor written.  Size: at most SC_LEMMA_CACHE_MAX_ENTRIES
 * files; a put past that removes the least recently used (mtime; a hit
 * refreshes it). */
#define _XOPEN_SOURCE 700 /* S_ISVTX */
#include "lemma/lemma-private.h"
#include "shardcheck/lemma-cache.h"

#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#define CACHE_TAG "shardcheck lemma instance-test cache v2"

/* Files changed less than this many seconds ago are hashed, never
 * identified by their status (see exe_digest_once). */
#define RACY_SECONDS 2

/* The identity of the executable, once per process (NULL: unavailable):
 * "stat:DEV:INODE:SIZE:MTIME:CTIME" (nanoseconds) when the file was last
 * changed more than RACY_SECONDS ago, else the SHA-256 of its content.
 * Any rebuild or copy changes the identity: a new file has a new inode or
 * a new change time, and the change time (ctime) cannot be set back by a
 * user.  A file changed within the clock's granularity of its last stat
 * could keep its times (git's "racy" entries), hence the hash of young
 * files.  Reading the status instead of the whole executable is what makes
 * a small check start fast (docs/performance.md, "Start-up"). */
static gpointer exe_digest_once(gpointer unused) {
  (void)unused;
  char *id = sc_lemma_cache_file_identity("/proc/self/exe");
  if (id != NULL)
    return id;
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents("/proc/self/exe", &data, &len, NULL))
    return NULL;
  return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, len);
}

char *sc_lemma_cache_file_identity(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
    return NULL;
  gint64 now = g_get_real_time() / G_USEC_PER_SEC;
  if ((gint64)sb.st_ctim.tv_sec + RACY_SECONDS >= now ||
      (gint64)sb.st_mtim.tv_sec + RACY_SECONDS >= now)
    return NULL;
  return g_strdup_printf("stat:%ju:%ju:%jd:%jd.%09ld:%jd.%09ld", (uintmax_t)sb.st_dev,
                         (uintmax_t)sb.st_ino, (intmax_t)sb.st_size, (intmax_t)sb.st_mtim.tv_sec,
                         (long)sb.st_mtim.tv_nsec, (intmax_t)sb.st_ctim.tv_sec,
                         (long)sb.st_ctim.tv_nsec);
}

static const char *exe_digest(void) {
  static GOnce once = G_ONCE_INIT;
  return g_once(&once, exe_digest_once, NULL);
}

char *sc_lemma_cache_dir(void) {
  const char *env = g_getenv("SC_LEMMA_CACHE");
  if (env != NULL)
    return (*env == '\0' || strcmp(env, "0") == 0) ? NULL : g_strdup(env);
  return g_build_filename(g_get_user_cache_dir(), "shardcheck", "lemma-cache", NULL);
}

gboolean sc_lemma_cache_dir_trusted(const char *dir) {
  struct stat sb;
  if (lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return FALSE;
  if (sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return FALSE;
  g_autofree char *parent = g_path_get_dirname(dir);
  struct stat pb;
  if (stat(parent, &pb) != 0)
    return FALSE;
  if ((pb.st_mode & S_IWOTH) != 0 && (pb.st_mode & S_ISVTX) == 0)
    return FALSE;
  if ((pb.st_mode & S_IWGRP) != 0 && (pb.st_mode & S_ISVTX) == 0 && pb.st_uid != geteuid())
    return FALSE;
  return TRUE;
}

/* The trusted cache directory, created when missing; NULL otherwise. */
static char *usable_dir(gboolean create) {
  char *dir = sc_lemma_cache_dir();
  if (dir == NULL)
    return NULL;
  if (create && !g_file_test(dir, G_FILE_TEST_EXISTS))
    (void)g_mkdir_with_parents(dir, 0700);
  if (!sc_lemma_cache_dir_trusted(dir)) {
    g_free(dir);
    return NULL;
  }
  return dir;
}

char *sc_lemma_cache_key(const char *tag, const char *const *parts, size_t n) {
  const char *exe = exe_digest();
  if (exe == NULL)
    return NULL;
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  for (size_t i = 0; i < n + 2; i++) {
    const char *p = i == 0 ? tag : i == 1 ? exe : (parts[i - 2] ? parts[i - 2] : "");
    /* length-prefixed, so that no two part lists hash alike */
    char len[32];
    g_snprintf(len, sizeof len, "%zu:", strlen(p));
    g_checksum_update(ck, (const guchar *)len, -1);
    g_checksum_update(ck, (const guchar *)p, (gssize)strlen(p));
  }
  char *key = g_strdup(g_checksum_get_string(ck));
  g_checksum_free(ck);
  return key;
}

char *sc_lemma_cache_file_key(const char *chain, const char *text_digest) {
  const char *parts[] = {chain ? chain : "", text_digest};
  return sc_lemma_cache_key(CACHE_TAG, parts, G_N_ELEMENTS(parts));
}

char *sc_lemma_cache_chain(const char *chain, const char *text_digest) {
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  if (chain)
    g_checksum_update(ck, (const guchar *)chain, -1);
  g_checksum_update(ck, (const guchar *)"\n", 1);
  g_checksum_update(ck, (const guchar *)text_digest, -1);
  char *out = g_strdup(g_checksum_get_string(ck));
  g_checksum_free(ck);
  return out;
}

gboolean sc_lemma_cache_has(const char *key) {
  if (key == NULL)
    return FALSE;
  g_autofree char *dir = usable_dir(FALSE);
  if (dir == NULL)
    return FALSE;
  g_autofree char *path = g_build_filename(dir, key, NULL);
  struct stat sb;
  if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
    return FALSE;
  (void)utime(path, NULL); /* recently used */
  return TRUE;
}

typedef struct {
  char *name;
  gint64 mtime;
} cache_entry;

static gint entry_cmp(gconstpointer pa, gconstpointer pb) {
  const cache_entry *a = pa, *b = pb;
  return a->mtime < b->mtime ? -1 : a->mtime > b->mtime ? 1 : strcmp(a->name, b->name);
}

/* Keep at most SC_LEMMA_CACHE_MAX_ENTRIES - 1 entries (one is coming). */
static void evict(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d == NULL)
    return;
  GArray *entries = g_array_new(FALSE, FALSE, sizeof(cache_entry));
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL) {
    if (strlen(name) != 64 || strspn(name, "0123456789abcdef") != 64)
      continue; /* not ours */
    g_autofree char *path = g_build_filename(dir, name, NULL);
    struct stat sb;
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
      continue;
    cache_entry e = {g_strdup(name), (gint64)sb.st_mtime};
    g_array_append_val(entries, e);
  }
  g_dir_close(d);
  if (entries->len >= SC_LEMMA_CACHE_MAX_ENTRIES) {
    g_array_sort(entries, entry_cmp);
    guint drop = entries->len - (SC_LEMMA_CACHE_MAX_ENTRIES - 1);
    for (guint i = 0; i < drop; i++) {
      g_autofree char *path =
          g_build_filename(dir, g_array_index(entries, cache_entry, i).name, NULL);
      (void)g_remove(path);
    }
  }
  for (guint i = 0; i < entries->len; i++)
    g_free(g_array_index(entries, cache_entry, i).name);
  g_array_free(entries, TRUE);
}

void sc_lemma_cache_put(const char *key) {
  if (key == NULL)
    return;
  g_autofree char *dir = usable_dir(TRUE);
  if (dir == NULL)
    return;
  evict(dir);
  g_autofree char *path = g_build_filename(dir, key, NULL);
  (void)g_file_set_contents(path, "", 0, NULL);
}
