/* ops-list.c — `shardcheck ops`: one line (or JSON object) per registered
 * operator: qualified name, flags (with a reduction's combiner), schema.
 * Order is the registry's. */
#include "cli/cli.h"
#include "cli/options.h"
#include "shardcheck/ops.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const flag_words[] = {
#define SC_X_FLAG_WORD(sym, bit, word) [bit] = word,
    SC_OP_FLAGS(SC_X_FLAG_WORD)
#undef SC_X_FLAG_WORD
};

static char *flags_text(uint32_t flags) {
  GString *s = g_string_new(NULL);
  for (guint bit = 0; bit < G_N_ELEMENTS(flag_words); bit++)
    if ((flags & (1u << bit)) && flag_words[bit] != NULL)
      g_string_append_printf(s, "%s%s", s->len ? "," : "", flag_words[bit]);
  sc_combiner c = (sc_combiner)((flags & SC_OP_COMBINE_MASK) >> SC_OP_COMBINE_SHIFT);
  if (c != SC_COMBINE_NONE)
    g_string_append_printf(s, "%scombine=%s", s->len ? "," : "", sc_ops_combiner_name(c));
  if (s->len == 0)
    g_string_append(s, "-");
  return g_string_free(s, FALSE);
}

int sc_cli_ops(int argc, char **argv) {
  g_auto(sc_cli_common) common = SC_CLI_COMMON_INIT;
  GOptionEntry entries[] = {
      SC_CLI_FORMAT_ENTRY(&common),
      SC_CLI_END_ENTRY,
  };
  if (!sc_cli_parse_common(&common, "shardcheck ops", "- list the registered operators", NULL,
                           entries, &argc, &argv))
    return SC_EXIT_INPUT_ERROR;
  gboolean json = common.json;
  if (argc > 1) {
    fprintf(stderr, "shardcheck: ops takes no arguments (found '%s')\n", argv[1]);
    return SC_EXIT_INPUT_ERROR;
  }
  sc_ops_init();
  json_t *arr = json ? json_array() : NULL;
  for (uint32_t i = 0; i < sc_ops_count(); i++) {
    const sc_op *op = sc_ops_at(i);
    if (json) {
      json_t *fl = json_array();
      for (guint bit = 0; bit < G_N_ELEMENTS(flag_words); bit++)
        if ((op->flags & (1u << bit)) && flag_words[bit] != NULL)
          json_array_append_new(fl, json_string(flag_words[bit]));
      json_t *o = json_pack("{s:s, s:o, s:s}", "name", op->qualname, "flags", fl, "schema",
                            op->schema);
      if (sc_ops_combiner(op) != SC_COMBINE_NONE)
        json_object_set_new(o, "combine", json_string(sc_ops_combiner_name(sc_ops_combiner(op))));
      json_array_append_new(arr, o);
    } else {
      g_autofree char *f = flags_text(op->flags);
      printf("%-44s %-24s %s::%s\n", op->qualname, f, op->ns, op->schema);
    }
  }
  if (json) {
    char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("%s\n", s);
    free(s);
    json_decref(arr);
  }
  return SC_EXIT_REFINES;
}
