/* explain.c — flat explanations from the proof forest (egg's explain.rs,
 * FlatExplanation): why two ids are equal, as a chain of whole terms.
 *
 * The forest (egraph.c) links the two ids of every union with its
 * justification; every id stands for its proof term, its op and attr over
 * its original children.  Between two ids the forest has one path.  Each
 * edge of it is a rule application, a fact or an assertion (one step), or
 * a congruence: two ids with the same op and attr whose original children
 * are pairwise equal, explained child by child, each child's steps
 * rewriting that position of the whole term in place (the term is kept as
 * a stack of frames, one per congruence being expanded).
 *
 * Invariants: the explanation of a congruence edge uses only edges older
 * than it (its children were equal, through the forest, when it was made,
 * and forest edges are never removed: the path between them is the one of
 * that time), so the recursion is well-founded; a depth limit guards
 * against a broken forest anyway.  Steps beyond max_steps are counted,
 * never built: count(a, b) is memoized per pair, so a capped explanation
 * costs what its shown steps cost plus a polynomial count. */
#include "egraph-private.h"

#include "shardcheck/extract.h"

struct sc_explanation {
  sc_term *start;
  GArray *steps; /* sc_explain_step */
  uint64_t total;
};

typedef struct {
  sc_id *kids;   /* current ids of the node's children (owned) */
  uint32_t op, attr, arity;
  uint32_t pos;  /* the child being rewritten */
} frame;

typedef struct {
  const sc_egraph *eg;
  sc_explanation *out;
  uint32_t max_steps;
  GArray *frames;      /* frame */
  sc_id root;          /* the position's id when no frame is open */
  GHashTable *counts;  /* (a << 32 | b) -> count + 1 (0: absent) */
  GHashTable *busy;    /* pairs being counted (a cycle guard) */
} ctx;

static uint64_t sat_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Adds id's proof term to T (each id once per term, through MEMO: id + 1
 * -> index + 1); returns its index. */
static uint32_t add_id_term(const sc_egraph *eg, sc_term *t, GHashTable *memo, sc_id id) {
  gpointer hit = g_hash_table_lookup(memo, GUINT_TO_POINTER(id + 1));
  if (hit)
    return GPOINTER_TO_UINT(hit) - 1;
  uint32_t n = eg->node[id].arity;
  uint32_t buf[8];
  uint32_t *k = n <= 8 ? buf : g_new(uint32_t, n);
  for (uint32_t i = 0; i < n; i++)
    k[i] = add_id_term(eg, t, memo, sc_eg_okids(eg, id)[i]);
  uint32_t r = sc_term_add(t, eg->node[id].op, eg->node[id].attr, k, n);
  if (k != buf)
    g_free(k);
  g_hash_table_insert(memo, GUINT_TO_POINTER(id + 1), GUINT_TO_POINTER(r + 1));
  return r;
}

/* The whole term as it stands: the frames wrapped around the position. */
static sc_term *current_term(ctx *c) {
  sc_term *t = sc_term_new();
  GHashTable *memo = g_hash_table_new(NULL, NULL);
  if (c->frames->len == 0) {
    add_id_term(c->eg, t, memo, c->root);
  } else {
    uint32_t inner = UINT32_MAX; /* index of the term built for the frame above */
    for (guint f = c->frames->len; f-- > 0;) {
      const frame *fr = &g_array_index(c->frames, frame, f);
      uint32_t *k = g_new(uint32_t, fr->arity ? fr->arity : 1);
      for (uint32_t i = 0; i < fr->arity; i++)
        k[i] = (i == fr->pos && inner != UINT32_MAX) ? inner
                                                     : add_id_term(c->eg, t, memo, fr->kids[i]);
      inner = sc_term_add(t, fr->op, fr->attr, k, fr->arity);
      g_free(k);
    }
  }
  g_hash_table_unref(memo);
  return t;
}

static void set_position(ctx *c, sc_id id) {
  if (c->frames->len == 0) {
    c->root = id;
    return;
  }
  frame *fr = &g_array_index(c->frames, frame, c->frames->len - 1);
  fr->kids[fr->pos] = id;
}

static void emit(ctx *c, const sc_proof_step *s, uint32_t depth) {
  set_position(c, s->to);
  c->out->total = sat_add(c->out->total, 1);
  if (c->out->steps->len >= c->max_steps)
    return;
  sc_explain_step st = {current_term(c), s->just, s->forward, s->from, s->to, depth};
  g_array_append_val(c->out->steps, st);
}

/* Steps of the whole explanation of a ~ b (a and b equal). */
static uint64_t count(ctx *c, sc_id a, sc_id b, uint32_t depth) {
  if (a == b)
    return 0;
  uint64_t key = ((uint64_t)a << 32) | b;
  gpointer hit = g_hash_table_lookup(c->counts, &key);
  if (hit)
    return *(const uint64_t *)hit;
  if (g_hash_table_contains(c->busy, &key))
    return 1; /* a cycle cannot happen in a sound forest; count it once */
  uint64_t *kp = g_new(uint64_t, 2);
  kp[0] = key;
  g_hash_table_add(c->busy, kp);
  GArray *path = g_array_new(FALSE, FALSE, sizeof(sc_proof_step));
  uint64_t n = 0;
  if (sc_egraph_proof_path(c->eg, a, b, path)) {
    for (guint i = 0; i < path->len; i++) {
      const sc_proof_step *s = &g_array_index(path, sc_proof_step, i);
      if (s->just != SC_JUST_CONGRUENCE || depth >= SC_EXPLAIN_MAX_DEPTH) {
        n = sat_add(n, 1);
        continue;
      }
      const sc_id *ka = sc_eg_okids(c->eg, s->from), *kb = sc_eg_okids(c->eg, s->to);
      for (uint32_t j = 0; j < c->eg->node[s->from].arity; j++)
        n = sat_add(n, count(c, ka[j], kb[j], depth + 1));
    }
  }
  g_array_unref(path);
  g_hash_table_remove(c->busy, &key);
  uint64_t *v = g_new(uint64_t, 2);
  v[0] = key;
  v[1] = n;
  /* the key is the value's first word: one allocation serves both */
  g_hash_table_replace(c->counts, v, v + 1);
  return n;
}

static void explain(ctx *c, sc_id a, sc_id b, uint32_t depth) {
  if (a == b)
    return;
  if (c->out->steps->len >= c->max_steps) {
    /* past the cap: count only (the position's final value is b) */
    c->out->total = sat_add(c->out->total, count(c, a, b, depth));
    set_position(c, b);
    return;
  }
  GArray *path = g_array_new(FALSE, FALSE, sizeof(sc_proof_step));
  gboolean ok = sc_egraph_proof_path(c->eg, a, b, path);
  g_assert(ok); /* callers explain ids of one class */
  for (guint i = 0; i < path->len; i++) {
    const sc_proof_step *s = &g_array_index(path, sc_proof_step, i);
    if (s->just != SC_JUST_CONGRUENCE || depth >= SC_EXPLAIN_MAX_DEPTH) {
      emit(c, s, depth);
      continue;
    }
    const sc_egraph *eg = c->eg;
    uint32_t n = eg->node[s->from].arity;
    frame fr = {g_new(sc_id, n ? n : 1), eg->node[s->from].op, eg->node[s->from].attr, n, 0};
    if (n)
      memcpy(fr.kids, sc_eg_okids(eg, s->from), n * sizeof(sc_id));
    g_array_append_val(c->frames, fr);
    for (uint32_t j = 0; j < n; j++) {
      frame *top = &g_array_index(c->frames, frame, c->frames->len - 1);
      sc_id x = top->kids[j], y = sc_eg_okids(eg, s->to)[j];
      if (x == y)
        continue;
      top->pos = j;
      explain(c, x, y, depth + 1);
    }
    frame *top = &g_array_index(c->frames, frame, c->frames->len - 1);
    g_free(top->kids);
    g_array_set_size(c->frames, c->frames->len - 1);
    /* the position now reads s->to's op over s->to's children: s->to */
    set_position(c, s->to);
  }
  g_array_unref(path);
}

sc_explanation *sc_egraph_explain(const sc_egraph *eg, sc_id a, sc_id b, uint32_t max_steps) {
  g_return_val_if_fail(eg->proofs && a < eg->n_ids && b < eg->n_ids, NULL);
  if (sc_egraph_find_const(eg, a) != sc_egraph_find_const(eg, b))
    return NULL;
  sc_explanation *e = g_new0(sc_explanation, 1);
  e->start = sc_egraph_proof_term(eg, a);
  e->steps = g_array_new(FALSE, FALSE, sizeof(sc_explain_step));
  ctx c = {eg, e, max_steps, g_array_new(FALSE, FALSE, sizeof(frame)), a,
           g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
           g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL)};
  explain(&c, a, b, 0);
  g_assert(c.frames->len == 0);
  g_array_unref(c.frames);
  g_hash_table_unref(c.counts);
  g_hash_table_unref(c.busy);
  return e;
}

void sc_explanation_free(sc_explanation *e) {
  if (!e)
    return;
  for (guint i = 0; i < e->steps->len; i++)
    sc_term_free(g_array_index(e->steps, sc_explain_step, i).term);
  g_array_unref(e->steps);
  sc_term_free(e->start);
  g_free(e);
}

const sc_term *sc_explanation_start(const sc_explanation *e) {
  return e->start;
}

uint32_t sc_explanation_n_steps(const sc_explanation *e) {
  return e->steps->len;
}

const sc_explain_step *sc_explanation_step(const sc_explanation *e, uint32_t i) {
  g_return_val_if_fail(i < e->steps->len, NULL);
  return &g_array_index(e->steps, sc_explain_step, i);
}

uint64_t sc_explanation_total(const sc_explanation *e) {
  return e->total;
}
