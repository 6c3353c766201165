/* carry-rename.c — the renamed relations of carried nodes (memo.c) made
 * on a thread of their own with `check --jobs N`, N > 1.
 *
 * A carry decides on the main thread (the isomorphism, memo.c) and its
 * relations are then a pure function of what it decided: the template
 * result's expressions (a text source's copies, carried-texts.c) with each
 * leaf renamed by the image sigma gave it.  Making those copies was about
 * a third of a carry's cost at 126 layers, all on the main thread; here a
 * carry hands them to one renaming thread and goes on.  The relation array
 * is made at the carry with its final length (readers of the length need
 * not wait) and empty slots, which the thread fills in order.
 *
 * Who waits: whatever reads the expressions of a carried relation.  The
 * walk's next carries do not (memo.c unifies a template's input relation
 * with a carried one through the leaves' images when both come from the
 * same source, without reading the copies), proofs do: memo.c waits for
 * every job before a proof begins (sc_rel_memo_begin, on the main thread,
 * for the walk's visits and for the proofs made ahead alike), and before
 * any other read of expressions (unification the short way cannot do, a
 * template key).  Jobs run in the order they were pushed; a job is done
 * once every slot of its array is filled.
 *
 * Freeing them went the same way: a carried relation's array owns its
 * expressions through sc_rel_renamer_dispose, which, on the thread that
 * started the renamer (the walk's, where release.c drops relations no
 * later visit reads), only puts them into a batch that the renaming
 * thread frees, DISPOSE_BATCH at a time, after the renamings pushed
 * before; anywhere else it frees them at once.
 *
 * Ownership: a job holds a reference to its array and to its source until
 * it is done (whoever drops the array's last reference frees the
 * expressions: the array owns them); IMAGE is borrowed and must outlive
 * the job.  The batch is the starting thread's (thread-local: one renamer
 * per thread at a time).  The lock and condition are pthread's, as schedule.c's, for
 * ThreadSanitizer. */
#include "infer/infer-private.h"

#include <pthread.h>

typedef struct {
  GPtrArray *out;          /* NULL: a job of expressions to free */
  sc_rel_text_source *src;
  const sc_id *image;
  GPtrArray *dispose;      /* sc_texpr* to free, or NULL */
  uint64_t seq;
} job;

/* Batch a carried relation's expressions are put into when the array is
 * dropped on the thread that owns the renamer (sc_rel_renamer_dispose);
 * NULL elsewhere. */
#define DISPOSE_BATCH 4096
static _Thread_local GPtrArray *dispose_batch;
static _Thread_local sc_rel_renamer *dispose_to;

static void flush_dispose(sc_rel_renamer *r);

struct sc_rel_renamer {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* a job pushed, a job done, or the end */
  GQueue queue;        /* job*, under lock */
  uint64_t pushed;     /* main thread only */
  uint64_t done;       /* under lock: every job up to this one is done */
  gboolean quit;       /* under lock */
  GThread *thread;
};

static gpointer run(gpointer data) {
  sc_rel_renamer *r = data;
  pthread_mutex_lock(&r->lock);
  for (;;) {
    job *j = g_queue_pop_head(&r->queue);
    if (j == NULL) {
      if (r->quit)
        break;
      pthread_cond_wait(&r->cond, &r->lock);
      continue;
    }
    pthread_mutex_unlock(&r->lock);
    if (j->out != NULL) {
      for (guint i = 0; i < j->out->len; i++)
        g_ptr_array_index(j->out, i) = sc_rel_text_source_rename(j->src, i, j->image);
      g_ptr_array_unref(j->out);
      sc_rel_text_source_unref(j->src);
    }
    if (j->dispose != NULL)
      g_ptr_array_unref(j->dispose); /* frees the expressions */
    uint64_t seq = j->seq;
    g_free(j);
    pthread_mutex_lock(&r->lock);
    r->done = seq;
    pthread_cond_broadcast(&r->cond);
  }
  pthread_mutex_unlock(&r->lock);
  return NULL;
}

sc_rel_renamer *sc_rel_renamer_new(void) {
  sc_rel_renamer *r = g_new0(sc_rel_renamer, 1);
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->cond, NULL);
  g_queue_init(&r->queue);
  r->thread = g_thread_new("sc-carry-rename", run, r);
  g_assert(dispose_batch == NULL); /* one renamer per thread at a time */
  dispose_batch = g_ptr_array_new_full(DISPOSE_BATCH, (GDestroyNotify)sc_texpr_free);
  dispose_to = r;
  return r;
}

void sc_rel_renamer_free(sc_rel_renamer *r) {
  if (r == NULL)
    return;
  if (dispose_to == r) {
    flush_dispose(r);
    g_clear_pointer(&dispose_batch, g_ptr_array_unref);
    dispose_to = NULL;
  }
  pthread_mutex_lock(&r->lock);
  r->quit = TRUE;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
  g_thread_join(r->thread); /* after every job: the queue is drained first */
  pthread_mutex_destroy(&r->lock);
  pthread_cond_destroy(&r->cond);
  g_free(r);
}

static uint64_t push(sc_rel_renamer *r, job *j) {
  uint64_t seq = j->seq = ++r->pushed;
  pthread_mutex_lock(&r->lock);
  g_queue_push_tail(&r->queue, j);
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
  return seq;
}

/* The batch of expressions to free handed to the thread. */
static void flush_dispose(sc_rel_renamer *r) {
  if (dispose_batch == NULL || dispose_batch->len == 0)
    return;
  job *j = g_new0(job, 1);
  j->dispose = dispose_batch;
  dispose_batch = g_ptr_array_new_full(DISPOSE_BATCH, (GDestroyNotify)sc_texpr_free);
  push(r, j);
}

uint64_t sc_rel_renamer_push(sc_rel_renamer *r, GPtrArray *out, sc_rel_text_source *src,
                             const sc_id *image) {
  job *j = g_new0(job, 1);
  j->out = g_ptr_array_ref(out);
  j->src = sc_rel_text_source_ref(src);
  j->image = image;
  if (dispose_batch != NULL && dispose_batch->len >= DISPOSE_BATCH)
    flush_dispose(r);
  return push(r, j);
}

void sc_rel_renamer_dispose(gpointer expr) {
  if (dispose_batch != NULL)
    g_ptr_array_add(dispose_batch, expr);
  else
    sc_texpr_free(expr);
}

void sc_rel_renamer_sync(sc_rel_renamer *r) {
  if (r == NULL)
    return;
  pthread_mutex_lock(&r->lock);
  while (r->done < r->pushed)
    pthread_cond_wait(&r->cond, &r->lock);
  pthread_mutex_unlock(&r->lock);
}
