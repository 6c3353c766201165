/* lemma-cache.h — the cache of lemma checks that passed (src/lemma/cache.c).
 *
 * Two checks are cached, each a deterministic function of what it checked:
 * the load-time instance test of a lemma file (lemma.c) and the numerical
 * check of a user lemma before `check --lemmas` may use it (usercheck.c).
 * An entry is an empty file named by the SHA-256 of a tag, the running
 * executable's identity and the parts given (the content that was checked
 * and the options of the check), so a change to any of them is a miss.
 * Only passes are recorded; a failure is checked again every time.  The
 * executable's identity is its file's device, inode, size, modification
 * and change times (nanoseconds) — a rebuild or a copy changes them, and
 * the change time cannot be set back by a user — or, for a file changed
 * in the last 2 seconds (whose times a change within the clock's
 * granularity could keep), the SHA-256 of its content.  A third kind of
 * entry (lemma.c, sc_lemma_set_load_dir_deferred) records that every file
 * of a lemma directory loaded cleanly, in order, keyed by each file's
 * path and identity as above (none changed in the last 2 seconds): a
 * deferred load then reads the texts without hashing them.
 *
 * Location: $SC_LEMMA_CACHE when set ("0" or empty: no cache), else
 * g_get_user_cache_dir()/shardcheck/lemma-cache, created mode 0700.  The
 * cache is used only when its directory is owned by the user and writable
 * by no one else, and its parent is not writable by others (unless sticky,
 * as /tmp is): an entry someone else could create would let an unchecked
 * lemma pass.  At most SC_LEMMA_CACHE_MAX_ENTRIES entries: a new entry
 * past that evicts the least recently used ones (a hit refreshes an
 * entry's time).  Every failure to read or write is silent and only costs
 * the check again. */
#ifndef SHARDCHECK_LEMMA_CACHE_H
#define SHARDCHECK_LEMMA_CACHE_H

#include "shardcheck/common.h"

G_BEGIN_DECLS

#define SC_LEMMA_CACHE_MAX_ENTRIES 2048u

/* The key of PARTS (N of them) under TAG for this executable; NULL when
 * the cache cannot be used (no executable digest).  (transfer full) */
char *sc_lemma_cache_key(const char *tag, const char *const *parts, size_t n);
/* Whether KEY was recorded (and the cache directory is trusted). */
gboolean sc_lemma_cache_has(const char *key);
/* Record KEY (best effort), evicting old entries past the maximum. */
void sc_lemma_cache_put(const char *key);
/* The cache directory, or NULL when caching is off.  (transfer full) */
char *sc_lemma_cache_dir(void);
/* Whether DIR may be trusted (owner, modes; see above). */
gboolean sc_lemma_cache_dir_trusted(const char *dir);

G_END_DECLS

#endif
