/* validate.c — `shardcheck check --validate`: after the verdict, run both
 * graphs on related concrete inputs and evaluate every relation
 * (validate.h).  The text report gets a validation section; the JSON
 * result object gets a "validation" member.  A relation that does not
 * hold makes the exit code 4 (SC_EXIT_UNSOUND).  The seed is 1 unless
 * $SC_VALIDATE_SEED says otherwise. */
#include "cli/cli.h"
#include "shardcheck/validate.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

int sc_cli_validate(const sc_bundle *b, const sc_infer_result *res, const sc_lemma_set *lemmas,
                    gboolean json, char **json_text) {
  sc_validate_options opts;
  sc_validate_options_init(&opts);
  opts.lemmas = lemmas;
  const char *env = g_getenv("SC_VALIDATE_SEED");
  if (env != NULL && *env)
    opts.seed = g_ascii_strtoull(env, NULL, 10);
  g_autoptr(sc_validation) v = sc_validate_run(b, res, &opts);
  if (json && json_text != NULL && *json_text != NULL) {
    json_t *root = json_loads(*json_text, 0, NULL);
    g_autofree char *vs = sc_validation_json(v);
    json_t *vo = json_loads(vs, 0, NULL);
    if (root != NULL && json_is_object(root) && vo != NULL) {
      json_object_set_new(root, "validation", vo);
      vo = NULL;
      char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
      g_free(*json_text);
      *json_text = g_strdup(s);
      free(s);
    }
    json_decref(vo);
    json_decref(root);
  } else if (!json) {
    sc_validation_text(stdout, v);
  }
  if (sc_validation_unsound(v)) {
    fprintf(stderr, "shardcheck: SOUNDNESS BUG: %u relation%s did not hold on concrete values "
                    "(exit 4)\n",
            v->n_failed, v->n_failed == 1 ? "" : "s");
    return SC_EXIT_UNSOUND;
  }
  return -1;
}
