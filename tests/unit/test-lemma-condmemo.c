/* test-lemma-condmemo.c — the guard's memo of conditions (src/lemma/condmemo.h):
 * keys tell apart every value a condition can read, a key that cannot be
 * written exactly is never used, only YES and NO are recorded, and the
 * table keeps its entries as it grows. */
#include "lemma/condmemo.h"

#include <string.h>

static sc_condmemo_key key_of_type(sc_dtype dt, uint32_t rank, const int64_t *dims) {
  sc_condmemo_key k;
  sc_lemma_condmemo_key_init(&k);
  sc_ttype t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.shape.rank = rank;
  for (uint32_t i = 0; i < rank; i++)
    t.shape.dims[i] = sc_dim_const(dims[i]);
  sc_lemma_condmemo_key_type(&k, &t);
  return k;
}

static gboolean same(const sc_condmemo_key *a, const sc_condmemo_key *b) {
  return a->ok && b->ok && a->n == b->n && memcmp(a->w, b->w, a->n * sizeof a->w[0]) == 0;
}

static void test_keys(void) {
  sc_condmemo_key a = key_of_type(SC_DTYPE_F32, 2, (int64_t[]){4, 8});
  sc_condmemo_key b = key_of_type(SC_DTYPE_F32, 2, (int64_t[]){4, 8});
  g_assert_true(same(&a, &b));
  sc_condmemo_key c = key_of_type(SC_DTYPE_F16, 2, (int64_t[]){4, 8});
  sc_condmemo_key d = key_of_type(SC_DTYPE_F32, 2, (int64_t[]){8, 4});
  sc_condmemo_key e = key_of_type(SC_DTYPE_F32, 3, (int64_t[]){4, 8, 1});
  g_assert_false(same(&a, &c));
  g_assert_false(same(&a, &d));
  g_assert_false(same(&a, &e));
  /* an int 3 and an int list [3], None, unbound and no type: all differ */
  sc_value three = sc_value_int(3);
  sc_dim l[1] = {sc_dim_const(3)};
  sc_value list = {.kind = SC_VAL_INT_LIST, .u.ints = {1, l}};
  sc_value none = sc_value_none();
  sc_condmemo_key k[5];
  for (int i = 0; i < 5; i++)
    sc_lemma_condmemo_key_init(&k[i]);
  sc_lemma_condmemo_key_value(&k[0], &three);
  sc_lemma_condmemo_key_value(&k[1], &list);
  sc_lemma_condmemo_key_value(&k[2], &none);
  sc_lemma_condmemo_key_value(&k[3], NULL);
  sc_lemma_condmemo_key_type(&k[4], NULL);
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++)
      g_assert_cmpint(same(&k[i], &k[j]), ==, i == j);
  /* two parts [3] then 4 against [3, 4]: the lengths keep them apart */
  sc_value four = sc_value_int(4);
  sc_dim l2[2] = {sc_dim_const(3), sc_dim_const(4)};
  sc_value list2 = {.kind = SC_VAL_INT_LIST, .u.ints = {2, l2}};
  sc_condmemo_key p, q;
  sc_lemma_condmemo_key_init(&p);
  sc_lemma_condmemo_key_value(&p, &list);
  sc_lemma_condmemo_key_value(&p, &four);
  sc_lemma_condmemo_key_init(&q);
  sc_lemma_condmemo_key_value(&q, &list2);
  g_assert_false(same(&p, &q));
  /* floats by their bits: 0.0 and -0.0 are two keys */
  sc_value z = sc_value_float(0.0), mz = sc_value_float(-0.0);
  sc_lemma_condmemo_key_init(&p);
  sc_lemma_condmemo_key_value(&p, &z);
  sc_lemma_condmemo_key_init(&q);
  sc_lemma_condmemo_key_value(&q, &mz);
  g_assert_false(same(&p, &q));
}

static void test_unusable(void) {
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_symtab_declare(st, "S", TRUE, 1, FALSE, 0, &err));
  sc_ttype t;
  memset(&t, 0, sizeof t);
  t.dtype = SC_DTYPE_F32;
  t.shape.rank = 1;
  g_assert_true(sc_dim_parse(st, "S", &t.shape.dims[0], &err));
  sc_condmemo *memo = sc_lemma_condmemo_new();
  sc_condmemo_key k;
  sc_lemma_condmemo_key_init(&k);
  sc_lemma_condmemo_key_type(&k, &t); /* a symbolic size */
  g_assert_false(k.ok);
  sc_lemma_condmemo_insert(memo, &k, SC_YES);
  sc_truth out;
  g_assert_false(sc_lemma_condmemo_lookup(memo, &k, &out));
  g_assert_cmpuint(sc_lemma_condmemo_size(memo), ==, 0);
  /* a string */
  sc_value s = {.kind = SC_VAL_STR, .u.s = (char *)"mean"};
  sc_lemma_condmemo_key_init(&k);
  sc_lemma_condmemo_key_value(&k, &s);
  g_assert_false(k.ok);
  /* a key past its words */
  sc_lemma_condmemo_key_init(&k);
  sc_value i = sc_value_int(1);
  for (int j = 0; j < SC_CONDMEMO_KEY_WORDS; j++)
    sc_lemma_condmemo_key_value(&k, &i);
  g_assert_false(k.ok);
  sc_lemma_condmemo_free(memo);
}

static void test_table(void) {
  sc_condmemo *m = sc_lemma_condmemo_new();
  sc_truth out;
  /* UNKNOWN is not recorded */
  sc_condmemo_key u = key_of_type(SC_DTYPE_F32, 1, (int64_t[]){7});
  sc_lemma_condmemo_insert(m, &u, SC_UNKNOWN);
  g_assert_false(sc_lemma_condmemo_lookup(m, &u, &out));
  /* many keys through several growths, each with its own answer */
  for (int64_t i = 0; i < 1000; i++) {
    sc_condmemo_key k = key_of_type(SC_DTYPE_F32, 2, (int64_t[]){i, i % 7});
    sc_lemma_condmemo_insert(m, &k, i % 3 == 0 ? SC_YES : SC_NO);
  }
  g_assert_cmpuint(sc_lemma_condmemo_size(m), ==, 1000);
  for (int64_t i = 0; i < 1000; i++) {
    sc_condmemo_key k = key_of_type(SC_DTYPE_F32, 2, (int64_t[]){i, i % 7});
    g_assert_true(sc_lemma_condmemo_lookup(m, &k, &out));
    g_assert_cmpint(out, ==, i % 3 == 0 ? SC_YES : SC_NO);
    sc_condmemo_key other = key_of_type(SC_DTYPE_F16, 2, (int64_t[]){i, i % 7});
    g_assert_false(sc_lemma_condmemo_lookup(m, &other, &out));
  }
  /* past the bound on entries nothing more is recorded, the rest kept */
  for (int64_t i = 1000; i < 6000; i++) {
    sc_condmemo_key k = key_of_type(SC_DTYPE_F32, 1, (int64_t[]){i});
    sc_lemma_condmemo_insert(m, &k, SC_YES);
  }
  g_assert_cmpuint(sc_lemma_condmemo_size(m), ==, 4096);
  sc_condmemo_key first = key_of_type(SC_DTYPE_F32, 2, (int64_t[]){0, 0});
  g_assert_true(sc_lemma_condmemo_lookup(m, &first, &out));
  sc_condmemo_key late = key_of_type(SC_DTYPE_F32, 1, (int64_t[]){5999});
  g_assert_false(sc_lemma_condmemo_lookup(m, &late, &out));
  sc_lemma_condmemo_free(m);
}

/* A merge records the other memo's answers from a point on, in its
 * order, and returns where the next one starts (a --jobs slot and the
 * walk taking a slot's answers: sc_lemma_rules_pass_memos). */
static void test_merge(void) {
  sc_condmemo *m = sc_lemma_condmemo_new();
  for (int64_t i = 0; i < 300; i++) {
    sc_condmemo_key k = key_of_type(SC_DTYPE_F32, 1, (int64_t[]){i});
    sc_lemma_condmemo_insert(m, &k, i % 2 ? SC_YES : SC_NO);
  }
  sc_condmemo *c = sc_lemma_condmemo_new();
  sc_condmemo_key own = key_of_type(SC_DTYPE_F16, 1, (int64_t[]){1});
  sc_lemma_condmemo_insert(c, &own, SC_NO);
  g_assert_cmpuint(sc_lemma_condmemo_merge(c, m, 0), ==, 300);
  g_assert_cmpuint(sc_lemma_condmemo_size(c), ==, 301);
  sc_truth out;
  for (int64_t i = 0; i < 300; i++) {
    sc_condmemo_key k = key_of_type(SC_DTYPE_F32, 1, (int64_t[]){i});
    g_assert_true(sc_lemma_condmemo_lookup(c, &k, &out));
    g_assert_cmpint(out, ==, i % 2 ? SC_YES : SC_NO);
  }
  g_assert_true(sc_lemma_condmemo_lookup(c, &own, &out));
  g_assert_cmpint(out, ==, SC_NO);
  /* only the answers recorded since: from 300 on */
  for (int64_t i = 300; i < 310; i++) {
    sc_condmemo_key k = key_of_type(SC_DTYPE_F32, 1, (int64_t[]){i});
    sc_lemma_condmemo_insert(m, &k, SC_YES);
  }
  sc_condmemo *d = sc_lemma_condmemo_new();
  g_assert_cmpuint(sc_lemma_condmemo_merge(d, m, 300), ==, 310);
  g_assert_cmpuint(sc_lemma_condmemo_size(d), ==, 10);
  sc_condmemo_key late = key_of_type(SC_DTYPE_F32, 1, (int64_t[]){309});
  sc_condmemo_key early = key_of_type(SC_DTYPE_F32, 1, (int64_t[]){299});
  g_assert_true(sc_lemma_condmemo_lookup(d, &late, &out));
  g_assert_false(sc_lemma_condmemo_lookup(d, &early, &out));
  /* the other way: M takes C's own answer, and nothing twice */
  g_assert_cmpuint(sc_lemma_condmemo_merge(m, c, 0), ==, 301);
  g_assert_cmpuint(sc_lemma_condmemo_size(m), ==, 311);
  g_assert_true(sc_lemma_condmemo_lookup(m, &own, &out));
  g_assert_cmpint(out, ==, SC_NO);
  sc_lemma_condmemo_free(m);
  sc_lemma_condmemo_free(c);
  sc_lemma_condmemo_free(d);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/lemma/condmemo/keys", test_keys);
  g_test_add_func("/lemma/condmemo/unusable", test_unusable);
  g_test_add_func("/lemma/condmemo/table", test_table);
  g_test_add_func("/lemma/condmemo/merge", test_merge);
  return g_test_run();
}
