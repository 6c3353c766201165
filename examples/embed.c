/* embed.c — shardcheck as a library: load a bundle, check it with the
 * built-in lemmas, print the report and exit with the check's code
 * (0 refines, 1 fails, 2 input error, 3 limit).
 *
 * Build against an installed shardcheck:
 *   cc embed.c $(pkg-config --cflags --libs shardcheck) -o embed
 *   ./embed models/mlp-tp2/bundle.json
 * The lemma directory is $SC_LEMMA_DIR, else the installed one
 * (pkg-config --variable=lemmadir shardcheck); a second argument names
 * another. */
#include <shardcheck/bundle.h>
#include <shardcheck/infer.h>
#include <shardcheck/lemma.h>
#include <shardcheck/report.h>

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s BUNDLE.json [LEMMA_DIR]\n", argv[0]);
    return SC_EXIT_INPUT_ERROR;
  }
  GError *err = NULL;
  /* the lemmas first: they may declare operators the bundle uses */
  sc_lemma_set *lemmas = sc_lemma_set_new();
  const char *dir = argc == 3 ? argv[2] : sc_lemma_builtin_dir();
  if (!sc_lemma_set_load_dir(lemmas, dir, &err)) {
    fprintf(stderr, "embed: %s\n", err->message);
    g_error_free(err);
    sc_lemma_set_free(lemmas);
    return SC_EXIT_INPUT_ERROR;
  }
  sc_bundle *b = sc_bundle_load(argv[1], &err);
  if (b == NULL) {
    fprintf(stderr, "embed: %s\n", err->message);
    g_error_free(err);
    sc_lemma_set_free(lemmas);
    return SC_EXIT_INPUT_ERROR;
  }
  sc_infer_options opts;
  sc_infer_options_init(&opts);
  opts.lemmas = lemmas;
  sc_infer_result *r = sc_infer_run(b, &opts, &err);
  int code;
  if (r == NULL) {
    fprintf(stderr, "embed: %s\n", err->message);
    g_error_free(err);
    code = SC_EXIT_INPUT_ERROR;
  } else {
    sc_report_options ropts = {.n_lemmas = sc_lemma_set_n_lemmas(lemmas), .lemma_dirs = dir};
    sc_report_text(stdout, b, r, &ropts);
    code = sc_report_exit_code(r);
    sc_infer_result_free(r);
  }
  sc_bundle_free(b);
  sc_lemma_set_free(lemmas);
  return code;
}
