/* condmemo.c — a memo of one rule's guard condition over the concrete
 * values it reads (see condmemo.h for why it is exact).
 *
 * An open-addressing table of (hash, key offset, key length, answer); the
 * keys' words are stored one after the other in one array.  Invariants:
 * the table's size is a power of two, at most half full; an entry's key
 * is words[off .. off+len). */
#include "lemma/condmemo.h"

#include <string.h>

/* Entries and key words per rule past which nothing more is recorded (a
 * rule meets at most a few hundred distinct keys on the real captures;
 * the bounds keep a runaway one under about 0.6 MiB). */
#define MAX_ENTRIES 4096u
#define MAX_WORDS 65536u

typedef struct {
  uint64_t hash; /* 0: empty slot */
  uint32_t off, len;
  sc_truth truth;
} entry;

/* An answer in the order recorded (sc_lemma_condmemo_merge reads them
 * from a point on): its key is words[off .. off+len). */
typedef struct {
  uint32_t off, len;
  sc_truth truth;
} logged;

struct sc_condmemo {
  entry *slots;
  guint n_slots, n_entries;
  GArray *words; /* uint64_t */
  GArray *log;   /* logged: the entries in the order recorded (n_entries) */
};

/* Kinds of a key's parts (the high half of a part's first word). */
enum {
  PART_NO_TYPE = 1,
  PART_TYPE,
  PART_UNBOUND,
  PART_NONE,
  PART_INT,
  PART_FLOAT,
  PART_BOOL,
  PART_DTYPE,
  PART_INT_LIST,
  PART_BOOL_LIST,
};

static void push(sc_condmemo_key *k, uint64_t w) {
  if (k->n >= SC_CONDMEMO_KEY_WORDS) {
    k->ok = FALSE;
    return;
  }
  k->w[k->n++] = w;
}

static uint64_t head(uint32_t kind, uint32_t low) { return ((uint64_t)kind << 32) | low; }

static void push_dim(sc_condmemo_key *k, sc_dim d) {
  if (!sc_dim_is_const(d)) {
    k->ok = FALSE;
    return;
  }
  push(k, (uint64_t)d.value);
}

void sc_lemma_condmemo_key_type(sc_condmemo_key *k, const sc_ttype *t) {
  if (!k->ok)
    return;
  if (t == NULL) {
    push(k, head(PART_NO_TYPE, 0));
    return;
  }
  push(k, head(PART_TYPE, 0));
  push(k, ((uint64_t)(uint32_t)t->dtype << 32) | t->shape.rank);
  for (uint32_t i = 0; i < t->shape.rank && k->ok; i++)
    push_dim(k, t->shape.dims[i]);
}

void sc_lemma_condmemo_key_value(sc_condmemo_key *k, const sc_value *v) {
  if (!k->ok)
    return;
  if (v == NULL) {
    push(k, head(PART_UNBOUND, 0));
    return;
  }
  switch (v->kind) {
  case SC_VAL_NONE:
    push(k, head(PART_NONE, 0));
    return;
  case SC_VAL_INT:
    push(k, head(PART_INT, 0));
    push_dim(k, v->u.i);
    return;
  case SC_VAL_FLOAT: {
    /* the bits: equal keys mean identical values (0.0 and -0.0 differ) */
    uint64_t bits;
    memcpy(&bits, &v->u.f, sizeof bits);
    push(k, head(PART_FLOAT, 0));
    push(k, bits);
    return;
  }
  case SC_VAL_BOOL:
    push(k, head(PART_BOOL, v->u.b ? 1 : 0));
    return;
  case SC_VAL_DTYPE:
    push(k, head(PART_DTYPE, (uint32_t)v->u.dtype));
    return;
  case SC_VAL_INT_LIST:
    push(k, head(PART_INT_LIST, v->u.ints.n));
    for (uint32_t i = 0; i < v->u.ints.n && k->ok; i++)
      push_dim(k, v->u.ints.v[i]);
    return;
  case SC_VAL_BOOL_LIST:
    push(k, head(PART_BOOL_LIST, v->u.bools.n));
    for (uint32_t i = 0; i < v->u.bools.n && k->ok; i++)
      push(k, v->u.bools.v[i] ? 1 : 0);
    return;
  default:
    /* strings, tensors, heterogeneous lists: not written */
    k->ok = FALSE;
    return;
  }
}

sc_condmemo *sc_lemma_condmemo_new(void) {
  sc_condmemo *m = g_new0(sc_condmemo, 1);
  m->n_slots = 64;
  m->slots = g_new0(entry, m->n_slots);
  m->words = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  m->log = g_array_new(FALSE, FALSE, sizeof(logged));
  return m;
}

void sc_lemma_condmemo_free(sc_condmemo *m) {
  if (m == NULL)
    return;
  g_free(m->slots);
  g_array_free(m->words, TRUE);
  g_array_free(m->log, TRUE);
  g_free(m);
}

guint sc_lemma_condmemo_size(const sc_condmemo *m) { return m->n_entries; }

/* FNV-1a over the words, never 0 (0 marks an empty slot). */
static uint64_t key_hash(const sc_condmemo_key *k) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t i = 0; i < k->n; i++) {
    h ^= k->w[i];
    h *= 0x100000001b3ull;
    h ^= h >> 29;
  }
  h ^= k->n;
  return h ? h : 1;
}

static gboolean same_key(const sc_condmemo *m, const entry *e, const sc_condmemo_key *k) {
  return e->len == k->n &&
         memcmp(&g_array_index(m->words, uint64_t, e->off), k->w, k->n * sizeof(uint64_t)) == 0;
}

/* The slot of K (hash H): its entry, or the empty slot where it would go. */
static entry *find(const sc_condmemo *m, const sc_condmemo_key *k, uint64_t h) {
  guint mask = m->n_slots - 1;
  for (guint i = (guint)h & mask;; i = (i + 1) & mask) {
    entry *e = &m->slots[i];
    if (e->hash == 0 || (e->hash == h && same_key(m, e, k)))
      return e;
  }
}

gboolean sc_lemma_condmemo_lookup(const sc_condmemo *m, const sc_condmemo_key *k, sc_truth *out) {
  if (!k->ok)
    return FALSE;
  const entry *e = find(m, k, key_hash(k));
  if (e->hash == 0)
    return FALSE;
  *out = e->truth;
  return TRUE;
}

static void grow(sc_condmemo *m) {
  entry *old = m->slots;
  guint n_old = m->n_slots;
  m->n_slots *= 2;
  m->slots = g_new0(entry, m->n_slots);
  guint mask = m->n_slots - 1;
  for (guint j = 0; j < n_old; j++) {
    if (old[j].hash == 0)
      continue;
    guint i = (guint)old[j].hash & mask;
    while (m->slots[i].hash != 0)
      i = (i + 1) & mask;
    m->slots[i] = old[j];
  }
  g_free(old);
}

void sc_lemma_condmemo_insert(sc_condmemo *m, const sc_condmemo_key *k, sc_truth t) {
  if (!k->ok || (t != SC_YES && t != SC_NO) || m->n_entries >= MAX_ENTRIES ||
      m->words->len + k->n > MAX_WORDS)
    return;
  if (2 * (m->n_entries + 1) > m->n_slots)
    grow(m);
  uint64_t h = key_hash(k);
  entry *e = find(m, k, h);
  if (e->hash != 0)
    return; /* recorded already (the answer is a function of the key) */
  e->hash = h;
  e->off = m->words->len;
  e->len = k->n;
  e->truth = t;
  logged l = {e->off, e->len, t};
  g_array_append_vals(m->words, k->w, k->n);
  g_array_append_val(m->log, l);
  m->n_entries++;
}

guint sc_lemma_condmemo_merge(sc_condmemo *dst, const sc_condmemo *src, guint from) {
  sc_condmemo_key k;
  for (guint i = from; i < src->log->len; i++) {
    const logged *l = &g_array_index(src->log, logged, i);
    k.n = l->len;
    k.ok = TRUE;
    memcpy(k.w, &g_array_index(src->words, uint64_t, l->off), l->len * sizeof(uint64_t));
    sc_lemma_condmemo_insert(dst, &k, l->truth);
  }
  return src->log->len;
}
