/* relation.c — relations extracted from a class: the smallest clean
 * terms per family of leaves (and aliases when the enumeration was cut
 * short), whether a node's outputs are unmapped or lost the impl, and the
 * nearest (non-clean) terms of a failure. */
#include "infer/infer-private.h"

#include <string.h>

uint32_t sc_infer_clean_weight(const sc_egraph *eg, sc_id node, void *user) {
  weight_ctx *w = user;
  if (!sc_lang_node_is_clean(w->lang, node))
    return 0;
  if (w->allowed_leaf && sc_egraph_node_op(eg, node) == SC_LANG_OP_TENSOR &&
      !w->allowed_leaf[sc_egraph_node_attr(eg, node)])
    return 0;
  return 1;
}

uint32_t sc_rel_nearest_weight(const sc_egraph *eg, sc_id node, void *user) {
  weight_ctx *w = user;
  if (sc_egraph_node_op(eg, node) == SC_LANG_OP_OPAQUE)
    return 0;
  return sc_lang_node_is_clean(w->lang, node) ? 1 : 8;
}

static gint cmp_u32(gconstpointer a, gconstpointer b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void alias_exprs(sc_rel_ctx *c, const sc_term *first, const gboolean *allowed_leaf,
                        GHashTable *covered, gboolean new_ranks, GPtrArray *out);

/* The layout of a term: its operators and attributes with every impl
 * tensor written T (cat(T, T, dim=0), sum(T, T), T), node by node (linear
 * in the term's nodes), as bytes: a tensor node is one word T_WORD, any
 * other node its op, attr, number of children and children (op is never
 * T_WORD: the operator table is far smaller), so two keys are equal exactly
 * when the layouts are.  A tensor replicated
 * on 8 ranks has 8 one-tensor terms per name (the all_reduce result, its
 * expand, its view...), enough to fill the max_terms families with the
 * layout T alone and drop the cut form (cat of each rank's piece) that the
 * next contraction needs; sc_rel_clean_exprs keeps, past max_terms, one
 * term per layout not yet kept. */
#define T_WORD UINT32_MAX

/* alias_exprs' bounds (it says why) */
#define ALIAS_TERM_SIZE 8
#define ALIAS_PER_CLASS 8
#define ALIAS_MAX_KIDS 16

/* The words of T's keys (term_key): at most three per node plus its
 * children. */
static gsize term_key_words(const sc_term *t) {
  gsize n = 0;
  for (uint32_t q = 0; q < sc_term_n_nodes(t); q++)
    n += 3 + sc_term_node_at(t, q)->n_children;
  return n;
}

/* The key of term T's layout (EG NULL: every impl tensor is the word
 * T_WORD) or of its class layout (EG given: T_WORD and the tensor's
 * e-class).  Two terms of one class layout differ only in which name of a
 * part they read (cat(r0.x, r2.y) and cat(r0.detach_x, r2.y)); terms of
 * distinct class layouts read distinct parts (rank 1's copy of a block
 * where the other reads rank 0's).  An operator node is written as its
 * operator, attribute, child count and children, a tensor as T_WORD (and
 * its class), so two keys of one kind are equal exactly when the layouts
 * are.  The words are written into one array sized first. */
static GBytes *term_key(sc_egraph *eg, const sc_term *t) {
  uint32_t *w = g_new(uint32_t, MAX(term_key_words(t), 1));
  gsize len = 0;
  for (uint32_t q = 0; q < sc_term_n_nodes(t); q++) {
    const sc_term_node *tn = sc_term_node_at(t, q);
    if (tn->op == SC_LANG_OP_TENSOR) {
      w[len++] = T_WORD;
      if (eg != NULL) {
        sc_id id = sc_egraph_lookup(eg, SC_LANG_OP_TENSOR, tn->attr, NULL, 0);
        w[len++] = id == SC_ID_NONE ? UINT32_MAX : sc_egraph_find(eg, id);
      }
      continue;
    }
    g_assert(tn->op != T_WORD);
    w[len++] = tn->op;
    w[len++] = tn->attr;
    w[len++] = tn->n_children;
    for (uint32_t k = 0; k < tn->n_children; k++)
      w[len++] = sc_term_child(t, q, k);
  }
  return g_bytes_new_take(w, len * sizeof(uint32_t));
}

/* Does T name a tensor by its pieces (a cat, a slice or a sum in it)? */
static gboolean is_cut_form(const sc_term *t) {
  for (uint32_t q = 0; q < sc_term_n_nodes(t); q++) {
    const sc_term_node *tn = sc_term_node_at(t, q);
    if (tn->op == SC_LANG_OP_TENSOR || tn->op == SC_LANG_OP_OPAQUE)
      continue;
    const char *name = sc_ops_at(tn->op)->qualname;
    if (g_str_has_prefix(name, "sc.cat") || g_str_has_prefix(name, "sc.slice") ||
        g_str_has_prefix(name, "sc.sum"))
      return TRUE;
  }
  return FALSE;
}



/* The terms sc_rel_clean_exprs keeps: one per family (set of leaves), the
 * first max_terms families, then (extra) one per layout not yet kept. */
typedef struct {
  GHashTable *families;  /* leaf-set key (GBytes: sorted distinct leaf ids) */
  GHashTable *layouts;   /* term_key(NULL, .) (GBytes) */
  GHashTable *covered;   /* tensor id + 1 read by a kept term */
  guint kept, extra, max_kept, max_extra;
  const sc_term *first;
  GPtrArray *kept_terms; /* const sc_term*: the kept terms, until their layouts are known */
  const sc_term *finest_cut; /* the kept cut form (is_cut_form) with the most distinct
                              * leaves (the first of them), or NULL */
  guint finest_leaves;
  gboolean parts_first;  /* the choices of parts were kept first (pick_part_choices) */
} pick_state;

static gboolean reads_uncovered(const sc_term *t, GHashTable *covered);

/* Drops P's references to its tables and kept terms (the state ends). */
static void pick_state_clear(pick_state *p) {
  g_hash_table_unref(p->covered);
  g_hash_table_unref(p->families);
  g_hash_table_unref(p->layouts);
  if (p->kept_terms)
    g_ptr_array_unref(p->kept_terms);
}

/* Keeps TERM (bound, into OUT and c->owned) when it is of a new family
 * and, past max_kept, of a new layout reading an impl tensor no kept term
 * reads; TRUE when kept. */
static gboolean pick_term(sc_rel_ctx *c, pick_state *p, const sc_term *term, GPtrArray *out,
                          GPtrArray *extra) {
  GBytes *layout = NULL;
  if (p->kept >= p->max_kept) {
    if (!is_cut_form(term))
      return FALSE;
    /* the kept terms' layouts, once an extra is considered */
    for (guint i = 0; p->kept_terms && i < p->kept_terms->len; i++)
      g_hash_table_add(p->layouts, term_key(NULL, g_ptr_array_index(p->kept_terms, i)));
    g_clear_pointer(&p->kept_terms, g_ptr_array_unref);
    layout = term_key(NULL, term);
    if (g_hash_table_contains(p->layouts, layout)) {
      g_bytes_unref(layout);
      return FALSE;
    }
  }
  GArray *leaves = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t j = 0; j < sc_term_n_nodes(term); j++) {
    const sc_term_node *tn = sc_term_node_at(term, j);
    if (tn->op == SC_LANG_OP_TENSOR)
      g_array_append_val(leaves, tn->attr);
  }
  /* the family's key: its distinct leaves, sorted */
  g_array_sort(leaves, cmp_u32);
  guint n_distinct = 0;
  for (guint j = 0; j < leaves->len; j++)
    if (j == 0 || g_array_index(leaves, uint32_t, j) != g_array_index(leaves, uint32_t, j - 1))
      g_array_index(leaves, uint32_t, n_distinct++) = g_array_index(leaves, uint32_t, j);
  gsize key_size = n_distinct * sizeof(uint32_t);
  GBytes *key = g_bytes_new_take(g_array_free(leaves, FALSE), key_size);
  if (!g_hash_table_add(p->families, key)) {
    if (layout)
      g_bytes_unref(layout);
    return FALSE;
  }
  sc_expr *e = sc_lang_term_to_expr(c->lang, term);
  /* Binding rejects what is not clean after flattening (a repeated
   * partial in a sum is a scaling). */
  sc_texpr *t = e ? sc_texpr_bind(e, c->impl, TRUE, NULL) : NULL;
  sc_expr_free(e);
  if (!t) {
    if (layout)
      g_bytes_unref(layout);
    return FALSE;
  }
  gboolean main_pick = p->kept < p->max_kept;
  g_ptr_array_add(c->owned, t);
  g_ptr_array_add(main_pick ? out : extra, t);
  if (layout)
    g_hash_table_add(p->layouts, layout);
  else if (p->kept_terms)
    g_ptr_array_add(p->kept_terms, (gpointer)term);
  if (main_pick)
    p->kept++;
  else
    p->extra++;
  if (!p->first)
    p->first = term;
  /* (an extra past max_kept may be of an enumeration freed before the
   * aliases are made: fresh_exprs) */
  if (main_pick && n_distinct > p->finest_leaves && is_cut_form(term)) {
    p->finest_cut = term;
    p->finest_leaves = n_distinct;
  }
  for (uint32_t j = 0; j < sc_term_n_nodes(term); j++) {
    const sc_term_node *tn = sc_term_node_at(term, j);
    if (tn->op == SC_LANG_OP_TENSOR)
      g_hash_table_add(p->covered, GUINT_TO_POINTER(tn->attr + 1));
  }
  return TRUE;
}

/* Enumeration weight of fresh_exprs: clean, and no leaf a kept term reads. */
typedef struct {
  weight_ctx base;
  GHashTable *covered;
} fresh_weight_ctx;

static uint32_t fresh_weight(const sc_egraph *eg, sc_id node, void *user) {
  fresh_weight_ctx *w = user;
  if (sc_egraph_node_op(eg, node) == SC_LANG_OP_TENSOR &&
      g_hash_table_contains(w->covered, GUINT_TO_POINTER(sc_egraph_node_attr(eg, node) + 1)))
    return 0;
  return sc_infer_clean_weight(eg, node, &w->base);
}

/* Forms over fresh leaves, when the families were cut short: the smallest
 * clean terms of CLS that read no impl tensor a kept term reads, one per
 * new layout.  The max_terms smallest families of a tensor replicated on 8
 * ranks are all single names of its replicas (size 1); the cut or
 * partial-sum form over each rank's own piece (a cat, a sum of cats: size
 * 3 to 13) that the next contraction reads is past them, and past the
 * enumeration's budget too.  Leaves already read weigh 0 (excluded) here,
 * so those forms come first. */
static void fresh_exprs(sc_rel_ctx *c, sc_id cls, const gboolean *allowed_leaf, pick_state *p,
                        GPtrArray *extra) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  fresh_weight_ctx fw = {{c->lang, allowed_leaf}, p->covered};
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, cls), 2 * c->opts->max_terms,
                                         c->term_size, fresh_weight, &fw, NULL);
  for (guint i = 0; i < terms->len && p->extra < p->max_extra; i++)
    pick_term(c, p, g_ptr_array_index(terms, i), NULL, extra);
  g_ptr_array_unref(terms);
}

/* Cut forms past an enumeration cut short with fewer than max_terms
 * families.  A tensor replicated on n ranks under many names (each
 * rank's gathered copy, its views, the views' views: shardsmith 31700's
 * addmm output, 4 ranks, 8 families of single names) fills the
 * enumeration's budget with terms of those few families, so the cat of
 * each rank's piece is never reached and no family is left to keep it; a
 * consumer that contracts over the cut dim (the ranks' products of their
 * column block by their rows of the weight, reduced later) then reads no
 * piece.  The forms over fresh leaves (fresh_exprs), picked as the cut
 * forms past max_terms are (a cut, a new layout, into EXTRA: the visit
 * again without them when they reach a limit, cut-forms.c), at most
 * SHORT_CUT_FORMS of them: the smallest is the cat of the pieces, and
 * each more form makes the consumers' e-graphs larger (twelve, as past
 * max_terms, took shardsmith 31104's mutant to the node limit at its
 * first diverging node; two do too, so that is a cost, not a cure). */
#define SHORT_CUT_FORMS 2
static void short_cut_forms(sc_rel_ctx *c, sc_id cls, pick_state *p, GPtrArray *extra) {
  guint max_kept = p->max_kept, max_extra = p->max_extra;
  p->max_kept = p->kept; /* pick_term: past the kept families */
  p->max_extra = MIN(max_extra, SHORT_CUT_FORMS);
  fresh_exprs(c, cls, NULL, p, extra);
  p->max_kept = max_kept;
  p->max_extra = max_extra;
}

/* The memo of sc_rel_clean_exprs.  A visit asks for the clean terms of
 * the same class up to three times on an unchanged e-graph (whether an
 * output is unmapped, whether it lost the impl, its relation), and the
 * enumeration is the visit's largest cost after saturation.  The answer
 * is a function of the e-graph, the canonical class and the allowed
 * leaves (the lang, the impl graph, term_size and max_terms are fixed for
 * the visit), so it is kept per (class, allowed leaves) while the
 * e-graph's state is unchanged.  That state is (n_ids, n_classes): an add
 * that makes a node allocates an id, a union that changes something
 * removes a class, ids never go back and, between two adds, classes only
 * decrease, so no two states of one e-graph's history share the pair; it
 * is read on a clean e-graph only (enumeration needs one).  A size
 * learned into the symtab (pass-sizes.c; it comes with a union) empties
 * the memo too, since binding reads the symtab.  Entries hold
 * the expressions of the first call (owned by c->owned, like every
 * relation): a hit appends the same pointers.  The memo lives for one
 * visit (sc_rel_exprs_memo_reset at its end). */
/* Where a call that kept max_terms families stopped: the cut forms' call
 * of the same class in the same state (sc_rel_clean_exprs_cuts) goes on
 * from here instead of enumerating and binding the same terms again.  The
 * picks up to max_terms families do not depend on the cut forms (pick_term
 * considers a cut form only past them), so they are the same in both
 * calls, in the same order, with the same expressions. */
typedef struct {
  GPtrArray *terms;      /* sc_term*: the enumeration (owned) */
  guint next;            /* the first term not considered */
  GHashTable *families;  /* as pick_state's, after the kept families */
  GHashTable *covered;
  GPtrArray *kept_terms; /* const sc_term* of TERMS or CANON, the kept ones in order */
  GPtrArray *canon;      /* sc_term*: pick_part_choices' enumeration, or NULL (owned) */
  const sc_term *first;
  const sc_term *finest_cut;
  guint finest_leaves;
  guint n_kept;          /* the entry's first n_kept expressions are theirs */
  gboolean short_cut;    /* fewer than max_terms families, the enumeration cut
                          * short: at most SHORT_CUT_FORMS cut forms */
} exprs_resume;

static void exprs_resume_free(exprs_resume *r) {
  if (r == NULL)
    return;
  g_ptr_array_unref(r->kept_terms);
  g_hash_table_unref(r->families);
  g_hash_table_unref(r->covered);
  g_ptr_array_unref(r->terms);
  if (r->canon)
    g_ptr_array_unref(r->canon);
  g_free(r);
}

typedef struct {
  sc_id cls; /* canonical */
  const gboolean *allowed_leaf;
  GPtrArray *exprs; /* sc_texpr*, borrowed from c->owned */
  gboolean full;    /* max_terms families were kept, or the enumeration was
                     * cut short: the cut forms' call (which may keep
                     * more) differs from this one */
  exprs_resume *resume; /* full, and no allowed leaves: where it stopped (or NULL) */
} exprs_entry;

/* The small clean terms of a leaf's class that alias_exprs filters (an
 * enumeration: a function of the state, the class and the allowed leaves,
 * like an entry).  The relation's call and the cut forms' call of one
 * class alias the same first term, and the classes of the leaves of
 * several relations' first terms are shared (each rank's piece of a
 * weight read by q, k and v), so most are asked for more than once. */
typedef struct {
  sc_id cls; /* canonical */
  const gboolean *allowed_leaf;
  GPtrArray *terms; /* sc_term* (owned) */
} leaf_terms_entry;

struct sc_rel_exprs_memo {
  const sc_egraph *eg;
  uint32_t n_ids, n_classes; /* the state the entries hold for */
  guint n_learned;           /* sizes learned into the symtab (pass-sizes.c) */
  GArray *entries;           /* exprs_entry */
  GArray *leaf_terms;        /* leaf_terms_entry */
  uint64_t hits, misses;
  uint64_t leaf_hits, leaf_misses; /* of leaf_terms */
};

static void exprs_memo_clear(sc_rel_exprs_memo *m) {
  for (guint i = 0; i < m->entries->len; i++) {
    g_ptr_array_unref(g_array_index(m->entries, exprs_entry, i).exprs);
    exprs_resume_free(g_array_index(m->entries, exprs_entry, i).resume);
  }
  g_array_set_size(m->entries, 0);
  for (guint i = 0; i < m->leaf_terms->len; i++)
    g_ptr_array_unref(g_array_index(m->leaf_terms, leaf_terms_entry, i).terms);
  g_array_set_size(m->leaf_terms, 0);
}

void sc_rel_exprs_memo_reset(sc_rel_ctx *c) {
  sc_rel_exprs_memo *m = c->exprs_memo;
  if (m == NULL)
    return;
  exprs_memo_clear(m);
  g_array_free(m->entries, TRUE);
  g_array_free(m->leaf_terms, TRUE);
  g_free(m);
  c->exprs_memo = NULL;
}

void sc_rel_exprs_memo_counts(const sc_rel_ctx *c, uint64_t *hits, uint64_t *misses) {
  *hits = c->exprs_memo ? c->exprs_memo->hits : 0;
  *misses = c->exprs_memo ? c->exprs_memo->misses : 0;
}

void sc_rel_exprs_memo_leaf_counts(const sc_rel_ctx *c, uint64_t *hits, uint64_t *misses) {
  *hits = c->exprs_memo ? c->exprs_memo->leaf_hits : 0;
  *misses = c->exprs_memo ? c->exprs_memo->leaf_misses : 0;
}

/* The memo for EG's current state (made, or emptied when EG changed
 * since its entries were made); EG is clean. */
static sc_rel_exprs_memo *exprs_memo_sync(sc_rel_ctx *c, const sc_egraph *eg) {
  sc_rel_exprs_memo *m = c->exprs_memo;
  if (m == NULL) {
    m = c->exprs_memo = g_new0(sc_rel_exprs_memo, 1);
    m->entries = g_array_new(FALSE, FALSE, sizeof(exprs_entry));
    m->leaf_terms = g_array_new(FALSE, FALSE, sizeof(leaf_terms_entry));
  }
  uint32_t n_ids = sc_egraph_n_ids(eg), n_classes = sc_egraph_n_classes(eg);
  guint n_learned = c->res->learned ? c->res->learned->len : 0;
  if (m->eg != eg || m->n_ids != n_ids || m->n_classes != n_classes ||
      m->n_learned != n_learned) {
    exprs_memo_clear(m);
    m->eg = eg;
    m->n_ids = n_ids;
    m->n_classes = n_classes;
    m->n_learned = n_learned;
  }
  return m;
}

/* The entry for (CLS, ALLOWED_LEAF) in EG's current state, or NULL. */
static exprs_entry *exprs_memo_find(sc_rel_ctx *c, const sc_egraph *eg, sc_id cls,
                                    const gboolean *allowed_leaf) {
  sc_rel_exprs_memo *m = exprs_memo_sync(c, eg);
  for (guint i = 0; i < m->entries->len; i++) {
    exprs_entry *e = &g_array_index(m->entries, exprs_entry, i);
    if (e->cls == cls && e->allowed_leaf == allowed_leaf)
      return e;
  }
  return NULL;
}

/* The clean terms of leaf class CLS (canonical) that alias_exprs reads:
 * the memo's when EG is clean (borrowed; they live until it changes),
 * else a new enumeration appended to SCRATCH's ownership. */
static const GPtrArray *leaf_terms(sc_rel_ctx *c, sc_egraph *eg, sc_id cls, weight_ctx *wc,
                                   GPtrArray *scratch) {
  if (!sc_egraph_is_clean(eg)) {
    GPtrArray *terms = sc_egraph_enumerate(eg, cls, 4 * ALIAS_PER_CLASS, ALIAS_TERM_SIZE,
                                           sc_infer_clean_weight, wc, NULL);
    g_ptr_array_add(scratch, terms);
    return terms;
  }
  sc_rel_exprs_memo *m = exprs_memo_sync(c, eg);
  for (guint i = 0; i < m->leaf_terms->len; i++) {
    const leaf_terms_entry *e = &g_array_index(m->leaf_terms, leaf_terms_entry, i);
    if (e->cls == cls && e->allowed_leaf == wc->allowed_leaf) {
      m->leaf_hits++;
      return e->terms;
    }
  }
  m->leaf_misses++;
  leaf_terms_entry ne = {cls, wc->allowed_leaf,
                         sc_egraph_enumerate(eg, cls, 4 * ALIAS_PER_CLASS, ALIAS_TERM_SIZE,
                                             sc_infer_clean_weight, wc, NULL)};
  g_array_append_val(m->leaf_terms, ne);
  return ne.terms;
}

static gboolean clean_exprs(sc_rel_ctx *c, sc_id cls, const gboolean *allowed_leaf,
                            GPtrArray *out, GPtrArray *extra, exprs_resume *from,
                            exprs_resume **save);

/* A new entry of the memo: the expressions OUT[FIRST..] for (CLS,
 * ALLOWED_LEAF) in the memo's current state (RESUME: owned by it). */
static void exprs_memo_add(sc_rel_ctx *c, sc_id cls, const gboolean *allowed_leaf,
                           const GPtrArray *out, guint first, gboolean full,
                           exprs_resume *resume) {
  exprs_entry ne = {cls, allowed_leaf, g_ptr_array_sized_new(out->len - first), full, resume};
  for (guint i = first; i < out->len; i++)
    g_ptr_array_add(ne.exprs, g_ptr_array_index(out, i));
  g_array_append_val(c->exprs_memo->entries, ne);
}

/* Clean terms of CLS as bound expressions (appended to OUT, owned by
 * ctx->owned), at most max_terms; memoized (above). */
void sc_rel_clean_exprs(sc_rel_ctx *c, sc_id cls, const gboolean *allowed_leaf, GPtrArray *out) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  cls = sc_egraph_find(eg, cls);
  if (!sc_egraph_is_clean(eg)) { /* (enumeration refuses it) */
    clean_exprs(c, cls, allowed_leaf, out, NULL, NULL, NULL);
    return;
  }
  exprs_entry *e = exprs_memo_find(c, eg, cls, allowed_leaf);
  if (e != NULL) {
    c->exprs_memo->hits++;
    for (guint i = 0; i < e->exprs->len; i++)
      g_ptr_array_add(out, g_ptr_array_index(e->exprs, i));
    return;
  }
  c->exprs_memo->misses++;
  guint first = out->len;
  exprs_resume *resume = NULL;
  gboolean full = clean_exprs(c, cls, allowed_leaf, out, NULL, NULL,
                              allowed_leaf == NULL ? &resume : NULL);
  if (resume)
    resume->n_kept -= first;
  exprs_memo_add(c, cls, allowed_leaf, out, first, full, resume);
}

/* The aliases of P's first kept term and of its finest kept cut form (the
 * one with the most distinct leaves; alias_exprs).  The first kept term is
 * often a whole name (one rank's gathered copy), whose aliases are the
 * other whole names; the parts of a cut form have names of their own:
 * with one choice of parts
 * kept per class layout (pick_part_choices: each part named by the first
 * tensor of its class, the even ranks' blocks on a 4x2 mesh), the other
 * ranks' copies of the parts are read by no kept term, and a consumer
 * that runs on those ranks (an argmax of each rank's rows) is never
 * explored there.  One more term per name of a part, not per
 * combination.  Only where the choices of parts were kept first: elsewhere
 * the families kept in enumeration order already rename the parts. */
static void all_alias_exprs(sc_rel_ctx *c, const pick_state *p, const gboolean *allowed_leaf,
                            GPtrArray *out) {
  if (p->first)
    alias_exprs(c, p->first, allowed_leaf, p->covered, FALSE, out);
  if (p->parts_first && p->finest_cut && p->finest_cut != p->first)
    alias_exprs(c, p->finest_cut, allowed_leaf, p->covered, TRUE, out);
}

/* The cut forms' call from where a call without them stopped (FROM,
 * consumed; its families' expressions already appended to OUT): the
 * picks past max_terms families, the forms over fresh leaves, then the
 * aliases, as clean_exprs does them.  Returns TRUE (max_terms families). */
static gboolean clean_exprs_resumed(sc_rel_ctx *c, sc_id cls, GPtrArray *out, GPtrArray *extra,
                                    exprs_resume *from) {
  pick_state p = {from->families,
                  g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
                                        (GDestroyNotify)g_bytes_unref, NULL),
                  from->covered, c->opts->max_terms, 0, c->opts->max_terms,
                  from->short_cut ? MIN(SHORT_CUT_FORMS, MAX(c->opts->max_terms / 2, 1))
                                  : MAX(c->opts->max_terms / 2, 1),
                  from->first, from->kept_terms,
                  from->finest_cut, from->finest_leaves, from->canon != NULL};
  GPtrArray *terms = from->terms;
  for (guint i = from->next; i < terms->len && p.extra < p.max_extra; i++)
    pick_term(c, &p, g_ptr_array_index(terms, i), out, extra);
  if (p.extra < p.max_extra)
    fresh_exprs(c, cls, NULL, &p, extra);
  all_alias_exprs(c, &p, NULL, out);
  pick_state_clear(&p);
  g_ptr_array_unref(terms);
  if (from->canon)
    g_ptr_array_unref(from->canon);
  g_free(from);
  return TRUE;
}

/* Enumeration weight of pick_part_choices: clean, and an impl tensor
 * only when it is the first of its class (one name per part). */
static uint32_t canon_weight(const sc_egraph *eg, sc_id node, void *user) {
  if (sc_egraph_node_op(eg, node) == SC_LANG_OP_TENSOR) {
    uint32_t n = 0;
    const sc_id *ls = sc_egraph_class_nodes_with_op(eg, sc_egraph_find_const(eg, node),
                                                    SC_LANG_OP_TENSOR, &n);
    if (n == 0 || ls[0] != node)
      return 0;
  }
  return sc_infer_clean_weight(eg, node, user);
}

/* Keeps (pick_term) the first clean term of CLS of each class layout,
 * naming every part by the first impl tensor of its class, up to P's
 * max_kept families (clean_exprs says why).  Returns the enumeration,
 * which P's kept terms point into: the caller frees it after P. */
static GPtrArray *pick_part_choices(sc_rel_ctx *c, sc_id cls, weight_ctx *wc, pick_state *p,
                                    GPtrArray *out, GPtrArray *extra) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, cls), c->opts->max_terms,
                                         c->term_size, canon_weight, wc, NULL);
  GHashTable *layouts = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
                                              (GDestroyNotify)g_bytes_unref, NULL);
  for (guint j = 0; j < terms->len && p->kept < p->max_kept; j++) {
    const sc_term *t = g_ptr_array_index(terms, j);
    if (g_hash_table_add(layouts, term_key(eg, t)))
      pick_term(c, p, t, out, extra);
  }
  g_hash_table_unref(layouts);
  return terms;
}

/* Clean terms of CLS as bound expressions (appended to OUT, owned by
 * ctx->owned): max_terms families, then aliases; with EXTRA, the cut
 * forms past them, or past an enumeration cut short (short_cut_forms),
 * into EXTRA (sc_rel_clean_exprs_cuts).  Returns whether max_terms
 * families were kept or the enumeration was cut short (only then can
 * EXTRA change anything: the cut forms are picked there, and their leaves
 * narrow the aliases). */
static gboolean clean_exprs(sc_rel_ctx *c, sc_id cls, const gboolean *allowed_leaf,
                            GPtrArray *out, GPtrArray *extra, exprs_resume *from,
                            exprs_resume **save) {
  if (from != NULL)
    return clean_exprs_resumed(c, cls, out, extra, from);
  sc_egraph *eg = sc_lang_egraph(c->lang);
  weight_ctx wc = {c->lang, allowed_leaf};
  /* four times as many terms as are kept: the small variants of one
   * family (views of views of one impl tensor) must not use up the
   * enumeration before a larger family's smallest term (the cat of every
   * rank's shard) is reached */
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, cls), 4 * c->opts->max_terms,
                                         c->term_size, sc_infer_clean_weight, &wc, NULL);
  /* GraphGuard keeps the simplest expression of each self-provable family
   * (section 4.3.2).  Lemma-only rewrites keep the set of impl tensors a
   * term reads, so the smallest term per set of leaves stands for its
   * family: larger terms over the same leaves are dropped.  At most
   * max_terms families are kept. */
  pick_state p = {g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
                                        (GDestroyNotify)g_bytes_unref, NULL),
                  g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
                                        (GDestroyNotify)g_bytes_unref, NULL),
                  g_hash_table_new(g_direct_hash, g_direct_equal), 0, 0,
                  c->opts->max_terms, extra ? MAX(c->opts->max_terms / 2, 1) : 0, NULL,
                  extra || save ? g_ptr_array_new() : NULL, NULL, 0, FALSE};
  /* The enumeration cut short: the first max_terms families in its
   * order can all be renamings of one choice of parts (three names of
   * each of three blocks: 27 families over the even ranks' blocks, while
   * the odd ranks' copies wait behind them past the budget), and a rank
   * whose part no kept term reads is never explored at the consumers.  So
   * the terms that name each part by one name only (canon_weight) are
   * enumerated too, and the first of each class layout (term_key(eg, .):
   * one per choice of parts) is kept first; then the rest in order. */
  GPtrArray *canon = terms->len >= 4 * c->opts->max_terms
                         ? pick_part_choices(c, cls, &wc, &p, out, extra)
                         : NULL;
  p.parts_first = canon != NULL;
  guint i;
  for (i = 0; i < terms->len && (p.kept < p.max_kept || p.extra < p.max_extra); i++)
    pick_term(c, &p, g_ptr_array_index(terms, i), out, extra);
  gboolean full = p.kept >= p.max_kept;
  gboolean cut = terms->len >= 4 * c->opts->max_terms || full;
  if (save && cut && extra == NULL) {
    /* stopped at the last kept family, or at the end of an enumeration
     * cut short (max_extra is 0): what the cut forms' call would have at
     * this point */
    exprs_resume *r = *save = g_new0(exprs_resume, 1);
    r->terms = g_ptr_array_ref(terms);
    r->next = i;
    r->families = g_hash_table_ref(p.families);
    r->covered = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, p.covered);
    while (g_hash_table_iter_next(&it, &key, NULL))
      g_hash_table_add(r->covered, key);
    r->kept_terms = g_ptr_array_ref(p.kept_terms);
    r->canon = canon ? g_ptr_array_ref(canon) : NULL;
    r->first = p.first;
    r->finest_cut = p.finest_cut;
    r->finest_leaves = p.finest_leaves;
    r->n_kept = out->len;
    r->short_cut = !full;
  }
  if (p.kept >= p.max_kept && p.extra < p.max_extra)
    fresh_exprs(c, cls, NULL, &p, extra);
  else if (cut && extra != NULL)
    short_cut_forms(c, cls, &p, extra);
  /* the enumeration was cut short (or the families were): impl tensors
   * that no kept term reads may still equal one of its parts */
  if (cut)
    all_alias_exprs(c, &p, allowed_leaf, out);
  pick_state_clear(&p);
  g_ptr_array_unref(terms);
  if (canon)
    g_ptr_array_unref(canon);
  return cut;
}

/* Cut forms.  Past max_terms families, at most max_terms / 2 more terms,
 * each of a layout no kept term has (term_key(NULL, .)), with a cat or a slice
 * (is_cut_form), reading an impl tensor no kept term reads: from the
 * enumeration above, then from one over fresh leaves (fresh_exprs).  They
 * are appended after the relation's own terms (sc_rel_cut_forms_set); a
 * consumer that reaches a limit with them is visited again without them
 * (more forms make every consumer's e-graph larger: cut-forms.c).  The
 * call shares the memo of sc_rel_clean_exprs (class, any leaves): with
 * fewer than max_terms families the two answers are the same, and past
 * them it goes on from where that call stopped (exprs_resume). */
void sc_rel_clean_exprs_cuts(sc_rel_ctx *c, sc_id cls, GPtrArray *out, GPtrArray *extra) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  cls = sc_egraph_find(eg, cls);
  if (!sc_egraph_is_clean(eg)) {
    clean_exprs(c, cls, NULL, out, extra, NULL, NULL);
    return;
  }
  /* Fewer than max_terms families: no cut form is picked and the aliases
   * see the same kept leaves, so this call's terms are those of
   * sc_rel_clean_exprs (and the memo serves both). */
  exprs_entry *e = exprs_memo_find(c, eg, cls, NULL);
  if (e != NULL && !e->full) {
    c->exprs_memo->hits++;
    for (guint i = 0; i < e->exprs->len; i++)
      g_ptr_array_add(out, g_ptr_array_index(e->exprs, i));
    return;
  }
  exprs_resume *from = NULL;
  if (e != NULL && e->resume != NULL) {
    /* go on from where that call stopped (the resume is used once) */
    from = e->resume;
    e->resume = NULL;
    for (guint i = 0; i < from->n_kept; i++)
      g_ptr_array_add(out, g_ptr_array_index(e->exprs, i));
  }
  c->exprs_memo->misses++;
  guint first = out->len;
  gboolean full = clean_exprs(c, cls, NULL, out, extra, from, NULL);
  if (e == NULL && !full)
    exprs_memo_add(c, cls, NULL, out, first, full, NULL);
}

/* Aliases (called by sc_rel_clean_exprs when its enumeration was cut short).
 * An impl tensor that equals a part of the spec tensor under many names
 * (vLLM splits its scattered q|k|v buffer four times, so every head block
 * has five or more names on each rank) makes the smallest terms all cats
 * of aliases: with n names per part and p parts there are n^p of them,
 * the budget is spent, and most names (and the impl's scattered buffer,
 * whose slices are larger terms) are read by no kept term.  Yet the
 * relation is what carries T_rel to the consumers of the spec tensor: a
 * name no kept term reads leaves its consumers (the impl's view of one of
 * those splits) unexplored at the next node.  So, for FIRST (the smallest
 * kept term), each leaf's class lists its small clean terms that read a
 * tensor no kept term reads (at most ALIAS_PER_CLASS, of size at most
 * ALIAS_TERM_SIZE), and round r keeps FIRST with every leaf replaced by
 * its class's r-th such term: one more term per name, not per
 * combination.  A replaced leaf keeps its class, so every e-node of FIRST
 * is unchanged and the term is in the same class (a proved equality like
 * every other: this only decides what is explored next). */

/* Copy node I of SRC (and what it reads) into DST; MAP caches copies.
 * Every node of SRC has at most ALIAS_MAX_KIDS children. */
static uint32_t copy_term_node(sc_term *dst, const sc_term *src, uint32_t i, uint32_t *map) {
  if (map[i] != UINT32_MAX)
    return map[i];
  const sc_term_node *tn = sc_term_node_at(src, i);
  uint32_t kids[ALIAS_MAX_KIDS];
  g_assert(tn->n_children <= ALIAS_MAX_KIDS); /* reads_uncovered filtered */
  for (uint32_t k = 0; k < tn->n_children; k++)
    kids[k] = copy_term_node(dst, src, sc_term_child(src, i, k), map);
  map[i] = sc_term_add(dst, tn->op, tn->attr, kids, tn->n_children);
  return map[i];
}

/* The alternatives of the class of leaf I of FIRST: ALTS[j] of the first
 * leaf j of that class. */
static const GPtrArray *leaf_alts(GPtrArray **alts, const sc_id *cls, uint32_t i) {
  for (uint32_t j = 0; j <= i; j++)
    if (alts[j] != NULL && cls[j] == cls[i])
      return alts[j];
  return NULL;
}

/* Does T read a tensor not in COVERED (and fit copy_term_node)? */
static gboolean reads_uncovered(const sc_term *t, GHashTable *covered) {
  gboolean fresh = FALSE;
  for (uint32_t q = 0; q < sc_term_n_nodes(t); q++) {
    const sc_term_node *tn = sc_term_node_at(t, q);
    if (tn->n_children > ALIAS_MAX_KIDS)
      return FALSE;
    if (tn->op == SC_LANG_OP_TENSOR &&
        !g_hash_table_contains(covered, GUINT_TO_POINTER(tn->attr + 1)))
      fresh = TRUE;
  }
  return fresh;
}

/* Does T read an impl tensor on a rank where no tensor of class CLS that a
 * kept term reads (COVERED) lives?  A part's copy on another rank, not a
 * further name of a copy already read. */
static gboolean reads_new_rank(sc_rel_ctx *c, const sc_term *t, sc_id cls, GHashTable *covered) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  uint32_t n = 0;
  const sc_id *ls = sc_egraph_class_nodes_with_op(eg, cls, SC_LANG_OP_TENSOR, &n);
  for (uint32_t q = 0; q < sc_term_n_nodes(t); q++) {
    const sc_term_node *tn = sc_term_node_at(t, q);
    if (tn->op != SC_LANG_OP_TENSOR || g_hash_table_contains(covered, GUINT_TO_POINTER(tn->attr + 1)))
      continue;
    int32_t rank = sc_graph_tensor(c->impl, tn->attr)->rank;
    gboolean seen = FALSE;
    for (uint32_t j = 0; j < n && !seen; j++) {
      uint32_t id = sc_egraph_node_attr(eg, ls[j]);
      seen = g_hash_table_contains(covered, GUINT_TO_POINTER(id + 1)) &&
             sc_graph_tensor(c->impl, id)->rank == rank;
    }
    if (!seen)
      return TRUE;
  }
  return FALSE;
}

/* The copies of a part: every impl tensor of class CLS (allowed by
 * ALLOWED_LEAF) as a one-node term, in the class's order.  The aliases of
 * the finest cut form name a part by its copy on another rank, which is
 * an impl tensor of the part's class itself: its other clean terms (views
 * and slices of other names) are the first kept term's aliases, and
 * enumerating them per part cost the Llama HLO capture 15 M instructions
 * (1.6%) for no term kept. */
static GPtrArray *copy_terms(sc_rel_ctx *c, sc_id cls, const gboolean *allowed_leaf) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  uint32_t n = 0;
  const sc_id *ls = sc_egraph_class_nodes_with_op(eg, cls, SC_LANG_OP_TENSOR, &n);
  GPtrArray *terms = g_ptr_array_new_with_free_func((GDestroyNotify)sc_term_free);
  for (uint32_t j = 0; j < n; j++) {
    uint32_t id = sc_egraph_node_attr(eg, ls[j]);
    if (allowed_leaf && !allowed_leaf[id])
      continue;
    sc_term *t = sc_term_new();
    sc_term_add(t, SC_LANG_OP_TENSOR, id, NULL, 0);
    g_ptr_array_add(terms, t);
  }
  return terms;
}

static void alias_exprs(sc_rel_ctx *c, const sc_term *first, const gboolean *allowed_leaf,
                        GHashTable *covered, gboolean new_ranks, GPtrArray *out) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  uint32_t n = sc_term_n_nodes(first);
  for (uint32_t i = 0; i < n; i++)
    if (sc_term_node_at(first, i)->n_children > ALIAS_MAX_KIDS)
      return;
  sc_id *cls = g_new(sc_id, n ? n : 1);
  GPtrArray **alts = g_new0(GPtrArray *, n ? n : 1); /* borrowed terms */
  GPtrArray *scratch = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  weight_ctx wc = {c->lang, allowed_leaf};
  guint rounds = 0;
  /* the class of every node of FIRST, bottom-up; alternatives per leaf class */
  for (uint32_t i = 0; i < n; i++) {
    const sc_term_node *tn = sc_term_node_at(first, i);
    sc_id kids[ALIAS_MAX_KIDS];
    for (uint32_t k = 0; k < tn->n_children; k++)
      kids[k] = cls[sc_term_child(first, i, k)];
    sc_id id = sc_egraph_lookup(eg, tn->op, tn->attr, kids, tn->n_children);
    if (id == SC_ID_NONE)
      goto out;
    cls[i] = sc_egraph_find(eg, id);
    if (tn->op != SC_LANG_OP_TENSOR || leaf_alts(alts, cls, i) != NULL)
      continue;
    const GPtrArray *terms;
    if (new_ranks) {
      GPtrArray *copies = copy_terms(c, cls[i], allowed_leaf);
      g_ptr_array_add(scratch, copies);
      terms = copies;
    } else {
      terms = leaf_terms(c, eg, cls[i], &wc, scratch);
    }
    alts[i] = g_ptr_array_new();
    for (guint t = 0; t < terms->len && alts[i]->len < ALIAS_PER_CLASS; t++)
      if (reads_uncovered(g_ptr_array_index(terms, t), covered) &&
          (!new_ranks || reads_new_rank(c, g_ptr_array_index(terms, t), cls[i], covered)))
        g_ptr_array_add(alts[i], g_ptr_array_index(terms, t));
    rounds = MAX(rounds, alts[i]->len);
  }
  for (guint r = 0; r < rounds; r++) {
    g_autoptr(sc_term) t = sc_term_new();
    uint32_t *map = g_new(uint32_t, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
      const sc_term_node *tn = sc_term_node_at(first, i);
      const GPtrArray *a = tn->op == SC_LANG_OP_TENSOR ? leaf_alts(alts, cls, i) : NULL;
      if (a != NULL && r < a->len) {
        const sc_term *alt = g_ptr_array_index(a, r);
        uint32_t an = sc_term_n_nodes(alt);
        uint32_t *amap = g_new(uint32_t, an ? an : 1);
        memset(amap, 0xff, (an ? an : 1) * sizeof *amap);
        map[i] = copy_term_node(t, alt, sc_term_root(alt), amap);
        g_free(amap);
        continue;
      }
      uint32_t kids[ALIAS_MAX_KIDS];
      for (uint32_t k = 0; k < tn->n_children; k++)
        kids[k] = map[sc_term_child(first, i, k)];
      map[i] = sc_term_add(t, tn->op, tn->attr, kids, tn->n_children);
    }
    g_free(map);
    sc_expr *e = sc_lang_term_to_expr(c->lang, t);
    if (!e)
      continue;
    sc_texpr *te = sc_texpr_bind(e, c->impl, TRUE, NULL);
    sc_expr_free(e);
    if (!te)
      continue;
    g_ptr_array_add(c->owned, te);
    g_ptr_array_add(out, te);
  }
out:
  for (uint32_t i = 0; i < n; i++)
    if (alts[i])
      g_ptr_array_unref(alts[i]);
  g_free(alts);
  g_ptr_array_unref(scratch);
  g_free(cls);
}

/* Does some result of N lack the relation it needs (a checked output: a
 * clean term over impl outputs; any other result that a visited node
 * reads: a clean term over impl tensors)?  Nothing recorded but the terms, which c->owned keeps. */

gboolean sc_rel_some_output_unmapped(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls) {
  gboolean missing = FALSE;
  for (uint32_t k = 0; k < n->n_results && !missing; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE)
      continue;
    gboolean is_checked = FALSE;
    for (guint i = 0; i < c->res->checked->len && !is_checked; i++)
      is_checked = g_array_index(c->res->checked, sc_id, i) == t;
    if (!is_checked && !sc_rel_result_is_read(c, t))
      continue; /* nothing needs its relation */
    GPtrArray *exprs = g_ptr_array_new();
    sc_rel_clean_exprs(c, out_cls[k], is_checked ? c->impl_is_output : NULL, exprs);
    missing = exprs->len == 0;
    g_ptr_array_unref(exprs); /* the terms are in c->owned */
  }
  return missing;
}

/* Did the node's relation lose the impl?  A needed result whose clean
 * terms are all constants (sc.full, sc.arange: no impl tensor in them)
 * while the node's inputs related impl tensors (some impl node was
 * explored) maps, but leaves its readers nothing to explore from: the
 * router's argmax over one expert is full([n], 0), and the mask
 * eq(argmax, 0) that reads it must reach each rank's gathered argmax.
 * Such a node is widened like an unmapped one, so that the impl tensors
 * equal to the constant (each rank's argmax, their gather) are found and
 * join its relation. */
gboolean sc_rel_outputs_lost_impl(sc_rel_ctx *c, const sc_node *n, const sc_id *out_cls) {
  if (c->explored_list->len == 0)
    return FALSE;
  gboolean lost = FALSE;
  for (uint32_t k = 0; k < n->n_results && !lost; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE || !sc_rel_result_is_read(c, t))
      continue;
    GPtrArray *exprs = g_ptr_array_new();
    sc_rel_clean_exprs(c, out_cls[k], NULL, exprs);
    lost = exprs->len > 0;
    GArray *leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (guint i = 0; i < exprs->len && lost; i++) {
      sc_texpr_collect_leaves(g_ptr_array_index(exprs, i), leaves);
      lost = leaves->len == 0;
    }
    g_array_free(leaves, TRUE);
    g_ptr_array_unref(exprs); /* the terms are in c->owned */
  }
  return lost;
}


GPtrArray *sc_rel_texts_of(GPtrArray *texprs) {
  GPtrArray *texts = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < texprs->len; i++) {
    char *s = sc_texpr_to_string(g_ptr_array_index(texprs, i));
    gboolean dup = FALSE;
    for (guint j = 0; j < texts->len && !dup; j++)
      dup = strcmp(g_ptr_array_index(texts, j), s) == 0;
    if (dup)
      g_free(s);
    else
      g_ptr_array_add(texts, s);
  }
  return texts;
}

/* The nearest terms of class CLS (the smallest, by sc_rel_nearest_weight), as
 * strings appended to OUT. */
void sc_rel_add_nearest_terms(sc_rel_ctx *c, sc_id cls, GPtrArray *out) {
  sc_egraph *eg = sc_lang_egraph(c->lang);
  weight_ctx wc = {c->lang, NULL};
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, cls), 3, 48,
                                         sc_rel_nearest_weight, &wc, NULL);
  for (guint i = 0; i < terms->len; i++)
    g_ptr_array_add(out, sc_lang_term_to_string(c->lang, g_ptr_array_index(terms, i)));
  g_ptr_array_unref(terms);
}

