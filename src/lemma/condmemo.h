/* condmemo.h — private to src/lemma: a memo of one rule's guard condition
 * over the concrete values it reads (compile.c).
 *
 * A lemma's condition (`where`) is a pure function of what its variables
 * look up (compile.c, match_lookup): the types of the tensor variables it
 * names (shape and dtype) and the values of the attribute variables it
 * names; nothing else of the match or the e-graph is read, unless the
 * condition calls vmin/vmax (value ranges, which a union can narrow: such a
 * rule gets no memo).  When every one of those is concrete (no symbolic
 * size: a symbolic comparison depends on the symtab's facts and oracle),
 * the answer is a function of their contents alone, in every e-graph of
 * the check, so the guard may answer a match whose key it met before
 * without evaluating the condition again.  Only YES and NO are recorded:
 * UNKNOWN is evaluated each time (it is counted and reported).
 *
 * The key is a sequence of 64-bit words, each variable's part opening with
 * a word that says its kind and length, so that two keys are equal only
 * when every variable read had the same value.  A variable that is
 * unbound, or holds a value the key cannot write exactly (a string, a
 * tensor id, a symbolic size), makes the whole key unusable: the condition
 * is then evaluated as before.
 *
 * Ownership: a memo is owned by the sc_lemma_rules whose guard made it,
 * one per rule (sc_lemma_condmemo_free); keys live on the caller's stack.
 * A memo is used by one thread (rules that share compiled rewrites,
 * sc_lemma_rules_share, each have their own memos;
 * sc_lemma_condmemo_merge passes answers from one to another while
 * neither is in use). */
#ifndef SC_LEMMA_CONDMEMO_H
#define SC_LEMMA_CONDMEMO_H

#include "shardcheck/shape.h"
#include "shardcheck/sym.h"
#include "shardcheck/value.h"

/* Words of a key: enough for the conditions of the library (a few
 * tensors of rank <= 8 and attribute lists); a longer key is unusable. */
#define SC_CONDMEMO_KEY_WORDS 96

typedef struct {
  uint64_t w[SC_CONDMEMO_KEY_WORDS];
  uint32_t n;
  gboolean ok; /* FALSE: some part could not be written exactly */
} sc_condmemo_key;

typedef struct sc_condmemo sc_condmemo;

sc_condmemo *sc_lemma_condmemo_new(void);
void sc_lemma_condmemo_free(sc_condmemo *m);
/* Records in DST the answers of SRC from its FROM-th on, in the order
 * SRC recorded them (those DST has, or past DST's bounds, are skipped);
 * returns SRC's number of answers, the FROM of the next merge. */
guint sc_lemma_condmemo_merge(sc_condmemo *dst, const sc_condmemo *src, guint from);

static inline void sc_lemma_condmemo_key_init(sc_condmemo_key *k) {
  k->n = 0;
  k->ok = TRUE;
}
/* Appends a tensor variable's type (NULL: the variable has no type). */
void sc_lemma_condmemo_key_type(sc_condmemo_key *k, const sc_ttype *t);
/* Appends an attribute variable's value (NULL: unbound). */
void sc_lemma_condmemo_key_value(sc_condmemo_key *k, const sc_value *v);

/* The recorded answer (SC_YES or SC_NO) of key K into *OUT; FALSE when
 * none is recorded or K is unusable. */
gboolean sc_lemma_condmemo_lookup(const sc_condmemo *m, const sc_condmemo_key *k, sc_truth *out);
/* Records answer T (SC_YES or SC_NO; anything else, or an unusable K, is
 * ignored) for K.  Past a bound on the entries nothing more is recorded. */
void sc_lemma_condmemo_insert(sc_condmemo *m, const sc_condmemo_key *k, sc_truth t);

/* Statistics, for tests: keys recorded. */
guint sc_lemma_condmemo_size(const sc_condmemo *m);

#endif
