/* fuzz-lemma.c — libFuzzer harness for the lemma front end (src/lemma/):
 * lexer, parser, checker (schemas, variables, types), operator
 * declarations, and lowering to rewrites.
 *
 * Every input is loaded as a lemma file into a fresh set
 * (sc_lemma_set_load_string); a failure must come with an SC_LEMMA_ERROR
 * whose message starts with the file name.  A file that loads is compiled
 * against an empty lang (sc_lemma_compile), and every lemma's info is
 * read.  Operator declarations are registered process-wide (lemma.h), so
 * a declaration may be refused as a duplicate in a later run: that is a
 * normal error.  Any crash, leak, sanitizer report or abort() is a
 * finding.  Seeds: tests/fuzz/corpus/lemma.  Built with -Dfuzz=enabled. */
#include "shardcheck/lang.h"
#include "shardcheck/lemma.h"
#include "shardcheck/ops.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 14)
    return 0;
  sc_ops_init();
  char *text = g_strndup((const char *)data, size);
  sc_lemma_set *set = sc_lemma_set_new();
  GError *error = NULL;
  if (!sc_lemma_set_load_string(set, "fuzz.lemma", text, &error)) {
    if (error == NULL || error->domain != SC_LEMMA_ERROR ||
        !g_str_has_prefix(error->message, "fuzz.lemma"))
      abort();
    g_error_free(error);
  } else {
    for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(set); i++)
      (void)sc_lemma_set_lemma(set, i);
    sc_symtab *st = sc_symtab_new();
    sc_graph *g = sc_graph_new(st);
    sc_lang *lang = sc_lang_new(st, g);
    sc_lemma_rules *rules = sc_lemma_compile(set, lang, &error);
    if (rules == NULL) {
      if (error == NULL)
        abort();
      g_error_free(error);
    }
    sc_lemma_rules_free(rules);
    sc_lang_free(lang);
    sc_graph_free(g);
    sc_symtab_free(st);
  }
  sc_lemma_set_free(set);
  g_free(text);
  return 0;
}
