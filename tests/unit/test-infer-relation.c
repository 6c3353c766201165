/* test-infer-relation.c — the memo of the clean terms of a class
 * (sc_rel_clean_exprs, src/infer/relation.c): a repeated call on an
 * unchanged e-graph is a hit that gives the very expressions of the first
 * call; other allowed leaves are another entry; a change of the e-graph
 * (a union, an add) empties the memo; and in every state the memoized
 * answer equals the one computed afresh (the memo reset before the call);
 * and, when the families are capped, every choice of parts is kept
 * before the renamings of one choice (/infer/relation/part-choices), and
 * every copy of a part is read by a kept form (/infer/relation/part-copies);
 * the aliases' enumerations of leaf classes are shared by the calls of
 * one state and renewed with it (/infer/relation/alias-leaf-terms); an
 * enumeration cut short by the views of a few names still gives the cut
 * form as a cut form (/infer/relation/short-cut-forms). */
#include "infer-fixture.h"

/* a .. e: [4] f32 impl tensors; d and e are the "outputs" */
static void setup(ifx *f, sc_infer_options *opts, gboolean *is_output) {
  ifx_init(f);
  int64_t s4[1] = {4};
  const char *names[] = {"a", "b", "c", "d", "e"};
  for (int i = 0; i < 5; i++)
    ifx_input(f, names[i], SC_DTYPE_F32, 1, s4);
  ifx_finish(f);
  sc_infer_options_init(opts);
  f->c.opts = opts;
  f->c.term_size = opts->max_term_size;
  f->c.owned = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  for (int i = 0; i < 5; i++)
    is_output[i] = i >= 3;
}

static void teardown(ifx *f) {
  sc_rel_exprs_memo_reset(&f->c);
  g_ptr_array_unref(f->c.owned);
  ifx_clear(f);
}

/* The clean terms of CLS as sorted texts, through the memo. */
static GPtrArray *texts(ifx *f, sc_id cls, const gboolean *allowed, GPtrArray **exprs) {
  sc_egraph_rebuild(ifx_eg(f));
  GPtrArray *e = g_ptr_array_new();
  sc_rel_clean_exprs(&f->c, cls, allowed, e);
  GPtrArray *t = sc_rel_texts_of(e);
  if (exprs)
    *exprs = e;
  else
    g_ptr_array_unref(e);
  return t;
}

/* The same, computed afresh: the memo is reset first (and after). */
static GPtrArray *fresh_texts(ifx *f, sc_id cls, const gboolean *allowed) {
  sc_rel_exprs_memo_reset(&f->c);
  GPtrArray *t = texts(f, cls, allowed, NULL);
  sc_rel_exprs_memo_reset(&f->c);
  return t;
}

static void assert_same_texts(GPtrArray *x, GPtrArray *y) {
  g_assert_cmpuint(x->len, ==, y->len);
  for (guint i = 0; i < x->len; i++)
    g_assert_cmpstr(g_ptr_array_index(x, i), ==, g_ptr_array_index(y, i));
}

static gboolean has_text(GPtrArray *x, const char *s) {
  for (guint i = 0; i < x->len; i++)
    if (strcmp(g_ptr_array_index(x, i), s) == 0)
      return TRUE;
  return FALSE;
}

static void counts(ifx *f, uint64_t want_hits, uint64_t want_misses) {
  uint64_t hits, misses;
  sc_rel_exprs_memo_counts(&f->c, &hits, &misses);
  g_assert_cmpuint(hits, ==, want_hits);
  g_assert_cmpuint(misses, ==, want_misses);
}

/* A second call on the unchanged e-graph is a hit with the same
 * expressions; the outputs-only leaves are an entry of their own. */
static void test_hit_same_exprs(void) {
  ifx f;
  sc_infer_options opts;
  gboolean is_output[5];
  setup(&f, &opts, is_output);
  sc_id x = ifx_add(&f, "sum(a, b)"), d = ifx_add(&f, "d");
  sc_egraph_union(ifx_eg(&f), x, d, SC_JUST_ASSERTED);
  GPtrArray *e1 = NULL, *e2 = NULL;
  g_autoptr(GPtrArray) t1 = texts(&f, x, NULL, &e1);
  g_autoptr(GPtrArray) t2 = texts(&f, d, NULL, &e2); /* same class by another id */
  counts(&f, 1, 1);
  g_assert_cmpuint(e1->len, ==, 2);
  g_assert_cmpuint(e1->len, ==, e2->len);
  for (guint i = 0; i < e1->len; i++)
    g_assert_true(g_ptr_array_index(e1, i) == g_ptr_array_index(e2, i));
  g_assert_cmpuint(f.c.owned->len, ==, 2); /* made once */
  g_autoptr(GPtrArray) o1 = texts(&f, x, is_output, NULL);
  g_autoptr(GPtrArray) o2 = texts(&f, x, is_output, NULL);
  counts(&f, 2, 2);
  g_assert_cmpuint(o1->len, ==, 1);
  g_assert_cmpstr(g_ptr_array_index(o1, 0), ==, "d");
  assert_same_texts(o1, o2);
  /* the memoized answers are the fresh ones */
  g_autoptr(GPtrArray) f1 = fresh_texts(&f, x, NULL);
  g_autoptr(GPtrArray) f2 = fresh_texts(&f, x, is_output);
  assert_same_texts(t1, f1);
  assert_same_texts(o1, f2);
  g_ptr_array_unref(e1);
  g_ptr_array_unref(e2);
  teardown(&f);
}

/* A union alone (no node added) and an add each change the answer: the
 * memo is emptied, and what it then gives is what a fresh enumeration
 * gives. */
static void test_change_misses(void) {
  ifx f;
  sc_infer_options opts;
  gboolean is_output[5];
  setup(&f, &opts, is_output);
  sc_id x = ifx_add(&f, "sum(a, b)"), e = ifx_add(&f, "e");
  sc_id ac = ifx_add(&f, "sum(a, c)"), c = ifx_add(&f, "c"), b = ifx_add(&f, "b");
  g_autoptr(GPtrArray) t0 = texts(&f, x, is_output, NULL);
  g_assert_cmpuint(t0->len, ==, 0); /* no output reads it yet */
  g_autoptr(GPtrArray) n0 = texts(&f, x, NULL, NULL);
  g_assert_false(has_text(n0, "sum(a, c)"));
  counts(&f, 0, 2);
  /* a union alone: x = e */
  sc_egraph_union(ifx_eg(&f), x, e, SC_JUST_ASSERTED);
  g_autoptr(GPtrArray) t1 = texts(&f, x, is_output, NULL);
  counts(&f, 0, 3);
  g_assert_true(has_text(t1, "e"));
  g_autoptr(GPtrArray) f1 = fresh_texts(&f, x, is_output);
  assert_same_texts(t1, f1);
  /* a union that joins sum(a, c) to the class through congruence (c = b) */
  g_autoptr(GPtrArray) n1 = texts(&f, x, NULL, NULL);
  sc_egraph_union(ifx_eg(&f), c, b, SC_JUST_ASSERTED);
  g_assert_true(ifx_same(&f, ac, x));
  g_autoptr(GPtrArray) n2 = texts(&f, x, NULL, NULL);
  g_autoptr(GPtrArray) n3 = texts(&f, x, NULL, NULL);
  counts(&f, 1, 2);
  g_assert_false(has_text(n1, "sum(a, c)"));
  g_assert_true(has_text(n2, "sum(a, c)"));
  assert_same_texts(n2, n3);
  g_autoptr(GPtrArray) f2 = fresh_texts(&f, x, NULL);
  assert_same_texts(n2, f2);
  /* a new term unioned in: x = sum(e, d) */
  sc_egraph_union(ifx_eg(&f), x, ifx_add(&f, "sum(e, d)"), SC_JUST_ASSERTED);
  g_autoptr(GPtrArray) n4 = texts(&f, x, NULL, NULL);
  g_assert_true(has_text(n4, "sum(e, d)"));
  g_autoptr(GPtrArray) f4 = fresh_texts(&f, x, NULL);
  assert_same_texts(n4, f4);
  teardown(&f);
}

/* The three-block fixture of part-choices and alias-leaf-terms into F
 * (its options OPTS): blocks p, q, r, two ranks' copies each, each copy
 * under three names (P0A, P0B, P0C: one class), EXTRA an input declared
 * beside them (or NULL); returns the class of X, the cat of any choice
 * of copies (8 choices unioned). */
static const char *const three_blocks = "pqr";

static sc_id three_block_cat(ifx *f, sc_infer_options *opts, const char *extra) {
  ifx_init(f);
  int64_t s2[1] = {2};
  const char *blocks = three_blocks;
  for (int b = 0; b < 3; b++)
    for (int r = 0; r < 2; r++)
      for (int k = 0; k < 3; k++) {
        char name[8];
        g_snprintf(name, sizeof name, "%c%d%c", blocks[b], r, "abc"[k]);
        ifx_input(f, name, SC_DTYPE_F32, 1, s2);
      }
  if (extra)
    ifx_input(f, extra, SC_DTYPE_F32, 1, s2);
  ifx_finish(f);
  sc_infer_options_init(opts);
  f->c.opts = opts;
  f->c.term_size = opts->max_term_size;
  f->c.owned = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  /* the names of one copy are one class */
  for (int b = 0; b < 3; b++)
    for (int r = 0; r < 2; r++) {
      char a[8], o[8];
      g_snprintf(a, sizeof a, "%c%da", blocks[b], r);
      for (int k = 1; k < 3; k++) {
        g_snprintf(o, sizeof o, "%c%d%c", blocks[b], r, "abc"[k]);
        sc_egraph_union(ifx_eg(f), ifx_add(f, a), ifx_add(f, o), SC_JUST_ASSERTED);
      }
    }
  sc_id x = SC_ID_NONE;
  for (int choice = 0; choice < 8; choice++) {
    char text[64];
    g_snprintf(text, sizeof text, "cat(p%da, q%da, r%da, dim=0)", choice & 1, (choice >> 1) & 1,
               (choice >> 2) & 1);
    sc_id t = ifx_add(f, text);
    if (x == SC_ID_NONE)
      x = t;
    else
      sc_egraph_union(ifx_eg(f), x, t, SC_JUST_ASSERTED);
  }
  return x;
}

/* Three blocks, each held by two ranks' copies that are not known equal
 * (P0 / P1, ...), each copy under three names (p0a, p0b, p0c: a tensor
 * and two detached aliases), and the spec tensor X the cat of any choice
 * of copies: 8 choices of parts, 216 terms, past the enumeration's
 * budget (4 max_terms).  The first max_terms families in enumeration
 * order are renamings of few choices; the kept ones must read every
 * copy, so that every rank's consumers are explored next (seed 13032:
 * the odd ranks' softmax was named by no kept form). */
static void test_part_choices(void) {
  ifx f;
  sc_infer_options opts;
  const char *blocks = three_blocks;
  sc_id x = three_block_cat(&f, &opts, NULL);
  GPtrArray *t = fresh_texts(&f, x, NULL);
  g_assert_cmpuint(t->len, >=, opts.max_terms);
  /* every copy of every block is read by a kept form */
  for (int b = 0; b < 3; b++)
    for (int r = 0; r < 2; r++) {
      char copy[4];
      g_snprintf(copy, sizeof copy, "%c%d", blocks[b], r);
      gboolean read = FALSE;
      for (guint i = 0; i < t->len && !read; i++)
        read = strstr(g_ptr_array_index(t, i), copy) != NULL;
      if (!read)
        g_printerr("no kept form reads %s\n", copy);
      g_assert_true(read);
    }
  g_ptr_array_unref(t);
  teardown(&f);
}

/* Parts held twice (a 4x2 mesh: ranks 2k and 2k+1 hold block k), and the
 * whole gathered on every rank, so that the cat forms mixing slices of the
 * gathered copies with the blocks fill the enumeration's budget: the kept
 * forms must still read both copies of every block, so that a consumer
 * running on each rank's own block (an argmax of the rows on the odd
 * ranks) is explored there (seed 16014: cat(mm, mm_2, mm_4, mm_6) kept,
 * the odd ranks' blocks read by no form). */
static void test_part_copies(void) {
  ifx f;
  ifx_init(&f);
  int64_t s2[1] = {2}, s8[1] = {8};
  const char *blocks = "abcd";
  for (int b = 0; b < 4; b++)
    for (int r = 0; r < 2; r++) {
      char name[8];
      g_snprintf(name, sizeof name, "%c%d", blocks[b], r);
      ifx_input(&f, name, SC_DTYPE_F32, 1, s2);
    }
  for (int r = 0; r < 8; r++) {
    char name[8];
    g_snprintf(name, sizeof name, "g%d", r);
    ifx_input(&f, name, SC_DTYPE_F32, 1, s8);
  }
  /* block b's copy r on rank 2b + r, the gathered g_r on rank r */
  for (sc_id t = 0; t < 16; t++)
    sc_graph_tensor(f.g, t)->rank = t < 8 ? (int32_t)t : (int32_t)t - 8;
  ifx_finish(&f);
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  f.c.opts = &opts;
  f.c.term_size = opts.max_term_size;
  f.c.owned = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  sc_egraph *eg = ifx_eg(&f);
  sc_id x = ifx_add(&f, "cat(a0, b0, c0, d0, dim=0)");
  for (int b = 0; b < 4; b++) {
    char a[8], o[8];
    g_snprintf(a, sizeof a, "%c0", blocks[b]);
    g_snprintf(o, sizeof o, "%c1", blocks[b]);
    sc_egraph_union(eg, ifx_add(&f, a), ifx_add(&f, o), SC_JUST_ASSERTED);
  }
  for (int r = 0; r < 8; r++) {
    char g[8], text[64];
    g_snprintf(g, sizeof g, "g%d", r);
    sc_egraph_union(eg, x, ifx_add(&f, g), SC_JUST_ASSERTED);
    for (int b = 0; b < 4; b++) {
      char a[8];
      g_snprintf(a, sizeof a, "%c0", blocks[b]);
      g_snprintf(text, sizeof text, "slice(g%d, dim=0, start=%d, end=%d)", r, 2 * b, 2 * b + 2);
      sc_egraph_union(eg, ifx_add(&f, a), ifx_add(&f, text), SC_JUST_ASSERTED);
    }
    /* the first three blocks at once (a split of the gathered copy) */
    g_snprintf(text, sizeof text, "slice(g%d, dim=0, start=0, end=6)", r);
    sc_egraph_union(eg, ifx_add(&f, "cat(a0, b0, c0, dim=0)"), ifx_add(&f, text),
                    SC_JUST_ASSERTED);
  }
  GPtrArray *t = fresh_texts(&f, x, NULL);
  g_assert_cmpuint(t->len, >=, opts.max_terms);
  for (int b = 0; b < 4; b++)
    for (int r = 0; r < 2; r++) {
      char copy[8];
      g_snprintf(copy, sizeof copy, "%c%d,", blocks[b], r);
      char last[8];
      g_snprintf(last, sizeof last, "%c%d)", blocks[b], r);
      gboolean read = FALSE;
      for (guint i = 0; i < t->len && !read; i++) {
        const char *s = g_ptr_array_index(t, i);
        read = strstr(s, copy) != NULL || strstr(s, last) != NULL || strcmp(s, copy) == 0;
      }
      if (!read)
        g_printerr("no kept form reads %c%d\n", blocks[b], r);
      g_assert_true(read);
    }
  g_ptr_array_unref(t);
  teardown(&f);
}

/* The aliases' enumerations of leaf classes are the memo's: the cut
 * forms' call of a class aliases the same first term as the relation's
 * call and enumerates no leaf class again, while an e-graph change (a new
 * name of a part) empties them, and in each state the answers, aliases
 * included, are the ones computed afresh.  Blocks as in part-choices:
 * each part under three names (the enumeration is cut short, so the
 * aliases are made), and a fourth name of p0 unioned in later. */
static void test_alias_leaf_terms(void) {
  ifx f;
  sc_infer_options opts;
  sc_id x = three_block_cat(&f, &opts, "p0d");
  /* state 0 afresh: the cut forms' call alone, with the memo empty */
  sc_egraph_rebuild(ifx_eg(&f));
  g_autoptr(GPtrArray) c1 = g_ptr_array_new(), x1 = g_ptr_array_new();
  sc_rel_clean_exprs_cuts(&f.c, x, c1, x1);
  for (int state = 0; state < 2; state++) {
    if (state == 1) { /* a new name of p0, the memo kept from state 0 */
      sc_egraph_union(ifx_eg(&f), ifx_add(&f, "p0a"), ifx_add(&f, "p0d"), SC_JUST_ASSERTED);
      sc_egraph_rebuild(ifx_eg(&f));
    } else
      sc_rel_exprs_memo_reset(&f.c);
    /* the relation's terms, then the cut forms' (and extra), memoized */
    uint64_t h, m;
    sc_rel_exprs_memo_leaf_counts(&f.c, &h, &m);
    g_autoptr(GPtrArray) r0 = g_ptr_array_new(), c0 = g_ptr_array_new(), x0 = g_ptr_array_new();
    sc_rel_clean_exprs(&f.c, x, NULL, r0);
    uint64_t h0, m0;
    sc_rel_exprs_memo_leaf_counts(&f.c, &h0, &m0);
    g_assert_cmpuint(m0, >, m); /* the aliases were made, and enumerated anew */
    sc_rel_clean_exprs_cuts(&f.c, x, c0, x0);
    uint64_t h1, m1;
    sc_rel_exprs_memo_leaf_counts(&f.c, &h1, &m1);
    g_assert_cmpuint(m1, ==, m0); /* no leaf class enumerated again */
    g_assert_cmpuint(h1, >, h0);
    if (state == 1) { /* state 1 afresh, after the memoized calls */
      sc_rel_exprs_memo_reset(&f.c);
      g_ptr_array_set_size(c1, 0);
      g_ptr_array_set_size(x1, 0);
      sc_rel_clean_exprs_cuts(&f.c, x, c1, x1);
    }
    g_autoptr(GPtrArray) tc0 = sc_rel_texts_of(c0), tc1 = sc_rel_texts_of(c1);
    g_autoptr(GPtrArray) tx0 = sc_rel_texts_of(x0), tx1 = sc_rel_texts_of(x1);
    assert_same_texts(tc0, tc1);
    assert_same_texts(tx0, tx1);
    gboolean read = FALSE; /* p0d is read by an alias once it is a name of p0 */
    for (guint i = 0; i < tc0->len && !read; i++)
      read = strstr(g_ptr_array_index(tc0, i), "p0d") != NULL;
    g_assert_true(read == (state == 1));
  }
  teardown(&f);
}

/* A whole replicated on 8 ranks (g0..g7, [2, 8]) whose class also holds
 * views of views of its copies (h_r = view(g_r, [16]), z = view(g_r, [1,
 * 16]), and back): every size of term has more renamings of the 8 names,
 * so the enumeration's budget (4 max_terms) is spent on 16 families of
 * single names (g_r, h_r), fewer than max_terms, before the cat of the
 * ranks' columns (q0..q7, [2, 1] each) is reached (shardsmith 31700: the
 * gathered addmm output and its views, 4 ranks).  The relation keeps no
 * cut form; the cut forms' call gives the cat of the pieces as a cut
 * form, so that a contraction over the columns reads each rank's piece. */
static void test_short_cut_forms(void) {
  ifx f;
  ifx_init(&f);
  int64_t s28[2] = {2, 8}, s16[1] = {16}, s21[2] = {2, 1};
  char name[8];
  for (int r = 0; r < 8; r++) {
    g_snprintf(name, sizeof name, "g%d", r);
    ifx_input(&f, name, SC_DTYPE_F32, 2, s28);
    g_snprintf(name, sizeof name, "h%d", r);
    ifx_input(&f, name, SC_DTYPE_F32, 1, s16);
    g_snprintf(name, sizeof name, "q%d", r);
    ifx_input(&f, name, SC_DTYPE_F32, 2, s21);
  }
  ifx_finish(&f);
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  f.c.opts = &opts;
  f.c.term_size = opts.max_term_size;
  f.c.owned = g_ptr_array_new_with_free_func((GDestroyNotify)sc_texpr_free);
  sc_egraph *eg = ifx_eg(&f);
  sc_id x = ifx_add(&f, "g0");
  char text[96];
  for (int r = 0; r < 8; r++) {
    g_snprintf(text, sizeof text, "g%d", r);
    sc_egraph_union(eg, x, ifx_add(&f, text), SC_JUST_ASSERTED);
    g_snprintf(text, sizeof text, "view(h%d, shape=[2, 8])", r);
    sc_egraph_union(eg, x, ifx_add(&f, text), SC_JUST_ASSERTED);
    g_snprintf(text, sizeof text, "h%d", r);
    sc_id h = ifx_add(&f, text);
    g_snprintf(text, sizeof text, "view(g%d, shape=[16])", r);
    sc_egraph_union(eg, h, ifx_add(&f, text), SC_JUST_ASSERTED);
    g_snprintf(text, sizeof text, "view(h%d, shape=[1, 16])", r);
    sc_id z = ifx_add(&f, text);
    g_snprintf(text, sizeof text, "view(g%d, shape=[1, 16])", r);
    sc_egraph_union(eg, z, ifx_add(&f, text), SC_JUST_ASSERTED);
    g_snprintf(text, sizeof text, "view(view(g%d, shape=[1, 16]), shape=[2, 8])", r);
    sc_egraph_union(eg, x, ifx_add(&f, text), SC_JUST_ASSERTED);
    g_snprintf(text, sizeof text, "view(view(g%d, shape=[1, 16]), shape=[16])", r);
    sc_egraph_union(eg, h, ifx_add(&f, text), SC_JUST_ASSERTED);
  }
  const char *cut = "cat(q0, q1, q2, q3, q4, q5, q6, q7, dim=1)";
  sc_egraph_union(eg, x, ifx_add(&f, cut), SC_JUST_ASSERTED);
  sc_egraph_rebuild(eg);
  g_autoptr(GPtrArray) r0 = g_ptr_array_new(), c0 = g_ptr_array_new(), x0 = g_ptr_array_new();
  sc_rel_clean_exprs(&f.c, x, NULL, r0);
  g_autoptr(GPtrArray) tr = sc_rel_texts_of(r0);
  /* the case: fewer than max_terms families, none of them the cut */
  g_assert_cmpuint(tr->len, <, opts.max_terms);
  g_assert_false(has_text(tr, cut));
  sc_rel_clean_exprs_cuts(&f.c, x, c0, x0);
  g_autoptr(GPtrArray) tc = sc_rel_texts_of(c0), tx = sc_rel_texts_of(x0);
  assert_same_texts(tr, tc); /* the relation's own terms first, unchanged */
  g_assert_true(has_text(tx, cut));
  /* memoized and afresh alike */
  sc_rel_exprs_memo_reset(&f.c);
  g_autoptr(GPtrArray) c1 = g_ptr_array_new(), x1 = g_ptr_array_new();
  sc_rel_clean_exprs_cuts(&f.c, x, c1, x1);
  g_autoptr(GPtrArray) tx1 = sc_rel_texts_of(x1);
  assert_same_texts(tx, tx1);
  teardown(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/infer/relation/memo-hit", test_hit_same_exprs);
  g_test_add_func("/infer/relation/memo-change", test_change_misses);
  g_test_add_func("/infer/relation/part-choices", test_part_choices);
  g_test_add_func("/infer/relation/part-copies", test_part_copies);
  g_test_add_func("/infer/relation/alias-leaf-terms", test_alias_leaf_terms);
  g_test_add_func("/infer/relation/short-cut-forms", test_short_cut_forms);
  return g_test_run();
}
