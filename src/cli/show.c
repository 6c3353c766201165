/* show.c — `shardcheck show`: load and validate a bundle, print a summary
 * of both graphs and the relations (text or JSON), without checking it.
 * The lemma files are loaded first (unless --no-lemmas), for the operators
 * they declare.
 * A valid bundle exits 0 with "verdict: not checked"; an invalid one exits
 * 2 with "shardcheck: FILE: PATH: what" on stderr (text) or an error object
 * on stdout (JSON).  Report writers may use jansson (STYLE.md point 9). */
#include "cli/cli.h"
#include "cli/options.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOT_CHECKED_LINE "verdict: not checked (shardcheck show only validates; use check)"

/* ---- op histogram ---- */

typedef struct {
  const char *op;
  uint32_t count;
} op_count;

static gint cmp_count(gconstpointer a, gconstpointer b) {
  const op_count *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return strcmp(x->op, y->op);
}

/* Operators of G by decreasing count, then name (a GArray of op_count). */
static GArray *op_histogram(sc_graph *g) {
  g_autoptr(GHashTable) counts = g_hash_table_new(g_str_hash, g_str_equal);
  for (uint32_t i = 0; i < sc_graph_n_nodes(g); i++) {
    const char *q = sc_graph_node(g, i)->op->qualname;
    guint c = GPOINTER_TO_UINT(g_hash_table_lookup(counts, q));
    g_hash_table_insert(counts, (gpointer)q, GUINT_TO_POINTER(c + 1));
  }
  GArray *out = g_array_new(FALSE, FALSE, sizeof(op_count));
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, counts);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    op_count oc = {k, GPOINTER_TO_UINT(v)};
    g_array_append_val(out, oc);
  }
  g_array_sort(out, cmp_count);
  return out;
}

static char *type_text(const sc_ttype *t) {
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s %s", s, sc_dtype_name(t->dtype));
}

static char *symbol_text(sc_symtab *st, uint32_t i) {
  gboolean has_min, has_max;
  int64_t min, max;
  sc_symtab_symbol_bounds(st, i, &has_min, &min, &has_max, &max);
  const char *name = sc_symtab_symbol_name(st, i);
  if (has_min && has_max)
    return g_strdup_printf("%" G_GINT64_FORMAT " <= %s <= %" G_GINT64_FORMAT, (gint64)min, name,
                           (gint64)max);
  if (has_max)
    return g_strdup_printf("%s <= %" G_GINT64_FORMAT, name, (gint64)max);
  return g_strdup_printf("%s >= %" G_GINT64_FORMAT, name, has_min ? (gint64)min : (gint64)0);
}

/* ---- text ---- */

static void print_tensor_line(sc_graph *g, sc_id t) {
  const sc_tensor *x = sc_graph_tensor(g, t);
  g_autofree char *ty = type_text(&x->type);
  printf("    %s %s", x->name, ty);
  if (x->rank >= 0)
    printf(" (rank %d)", x->rank);
  if (x->has_values) {
    g_autofree char *lo = sc_dim_to_string(sc_graph_symtab(g), x->values_min);
    g_autofree char *hi = sc_dim_to_string(sc_graph_symtab(g), x->values_max);
    printf(" values in [%s, %s]", lo, hi);
  }
  printf("\n");
}

static void print_graph_text(const char *label, sc_graph *g) {
  printf("%s: %u inputs, %u nodes, %u tensors\n", label, sc_graph_n_inputs(g),
         sc_graph_n_nodes(g), sc_graph_n_tensors(g));
  g_autoptr(GArray) h = op_histogram(g);
  if (h->len > 0) {
    printf("  top ops:");
    for (guint i = 0; i < h->len && i < 10; i++) {
      const op_count *oc = &g_array_index(h, op_count, i);
      printf("%s %s x%u", i ? "," : "", oc->op, oc->count);
    }
    if (h->len > 10)
      printf(", ... (%u more)", h->len - 10);
    printf("\n");
  }
  printf("  inputs:\n");
  for (uint32_t i = 0; i < sc_graph_n_inputs(g); i++)
    print_tensor_line(g, sc_graph_input(g, i));
  printf("  outputs:\n");
  for (uint32_t i = 0; i < sc_graph_n_outputs(g); i++)
    print_tensor_line(g, sc_graph_output(g, i));
}

static void print_relation_text(const char *label, const sc_bundle *b, const sc_relation *r) {
  printf("%s:\n", label);
  sc_graph *spec = sc_bundle_spec(b);
  for (uint32_t i = 0; i < r->n_entries; i++) {
    const sc_relation_entry *e = &r->entries[i];
    /* One line per spec tensor: each expression with its type, " | "
     * between expressions (they contain ", "). */
    printf("  %s =", sc_graph_tensor(spec, e->tensor)->name);
    for (uint32_t j = 0; j < e->n_exprs; j++) {
      g_autofree char *s = sc_texpr_to_string(e->exprs[j]);
      g_autofree char *ty = type_text(sc_texpr_type(e->exprs[j]));
      printf("%s %s : %s", j ? " |" : "", s, ty);
    }
    printf("\n");
  }
}

static void print_summary_text(const sc_bundle *b) {
  sc_symtab *st = sc_bundle_symtab(b);
  printf("bundle: %s (%s)\n", sc_bundle_name(b), sc_bundle_file(b));
  if (sc_bundle_description(b) != NULL)
    printf("description: %s\n", sc_bundle_description(b));
  if (sc_symtab_n_symbols(st) == 0)
    printf("symbols: none\n");
  for (uint32_t i = 0; i < sc_symtab_n_symbols(st); i++) {
    g_autofree char *s = symbol_text(st, i);
    printf("symbol: %s\n", s);
  }
  for (uint32_t i = 0; i < sc_symtab_n_assumptions(st); i++)
    printf("assume: %s\n", sc_symtab_assumption_text(st, i));
  print_graph_text("spec", sc_bundle_spec(b));
  print_graph_text("impl", sc_bundle_impl(b));
  print_relation_text("input relation", b, sc_bundle_input_relation(b));
  if (sc_bundle_has_expect_output_relation(b))
    print_relation_text("expected output relation", b, sc_bundle_expect_output_relation(b));
  else
    printf("expected output relation: none\n");
  if (sc_bundle_assume_relation(b)->n_entries > 0)
    print_relation_text("assumed relation (trusted, not proved)", b,
                        sc_bundle_assume_relation(b));
  printf("check outputs:");
  for (uint32_t i = 0; i < sc_bundle_n_check_outputs(b); i++)
    printf(" %s", sc_graph_tensor(sc_bundle_spec(b), sc_bundle_check_output(b, i))->name);
  printf("%s\n", sc_bundle_check_outputs_given(b) ? "" : " (all outputs)");
  printf("%s\n", NOT_CHECKED_LINE);
}

/* ---- JSON ---- */

static json_t *tensor_json(sc_graph *g, sc_id t) {
  const sc_tensor *x = sc_graph_tensor(g, t);
  g_autofree char *sh = sc_shape_to_string(&x->type.shape);
  json_t *o = json_pack("{s:s, s:s, s:s}", "name", x->name, "shape", sh, "dtype",
                        sc_dtype_name(x->type.dtype));
  if (x->rank >= 0)
    json_object_set_new(o, "rank", json_integer(x->rank));
  return o;
}

static json_t *graph_json(sc_graph *g) {
  json_t *o = json_object();
  json_object_set_new(o, "inputs", json_integer(sc_graph_n_inputs(g)));
  json_object_set_new(o, "nodes", json_integer(sc_graph_n_nodes(g)));
  json_object_set_new(o, "tensors", json_integer(sc_graph_n_tensors(g)));
  json_t *ops = json_array();
  g_autoptr(GArray) h = op_histogram(g);
  for (guint i = 0; i < h->len; i++) {
    const op_count *oc = &g_array_index(h, op_count, i);
    json_array_append_new(ops, json_pack("{s:s, s:i}", "op", oc->op, "count", (int)oc->count));
  }
  json_object_set_new(o, "ops", ops);
  json_t *ins = json_array(), *outs = json_array();
  for (uint32_t i = 0; i < sc_graph_n_inputs(g); i++)
    json_array_append_new(ins, tensor_json(g, sc_graph_input(g, i)));
  for (uint32_t i = 0; i < sc_graph_n_outputs(g); i++)
    json_array_append_new(outs, tensor_json(g, sc_graph_output(g, i)));
  json_object_set_new(o, "input_tensors", ins);
  json_object_set_new(o, "output_tensors", outs);
  return o;
}

static json_t *relation_json(const sc_bundle *b, const sc_relation *r) {
  json_t *o = json_object();
  for (uint32_t i = 0; i < r->n_entries; i++) {
    const sc_relation_entry *e = &r->entries[i];
    json_t *arr = json_array();
    for (uint32_t j = 0; j < e->n_exprs; j++) {
      g_autofree char *s = sc_texpr_to_string(e->exprs[j]);
      g_autofree char *sh = sc_shape_to_string(&sc_texpr_type(e->exprs[j])->shape);
      json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "expr", s, "shape", sh, "dtype",
                                           sc_dtype_name(sc_texpr_type(e->exprs[j])->dtype)));
    }
    json_object_set_new(o, sc_graph_tensor(sc_bundle_spec(b), e->tensor)->name, arr);
  }
  return o;
}

static void print_json(json_t *o) {
  char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  printf("%s\n", s);
  free(s);
  json_decref(o);
}

static void print_summary_json(const sc_bundle *b) {
  sc_symtab *st = sc_bundle_symtab(b);
  json_t *o = json_object();
  json_object_set_new(o, "verdict", json_string("not_checked"));
  json_object_set_new(o, "note", json_string("shardcheck show only validates; use check for a verdict"));
  json_object_set_new(o, "bundle", json_string(sc_bundle_name(b)));
  json_object_set_new(o, "file", json_string(sc_bundle_file(b)));
  if (sc_bundle_description(b) != NULL)
    json_object_set_new(o, "description", json_string(sc_bundle_description(b)));
  json_t *syms = json_array();
  for (uint32_t i = 0; i < sc_symtab_n_symbols(st); i++) {
    gboolean has_min, has_max;
    int64_t min, max;
    sc_symtab_symbol_bounds(st, i, &has_min, &min, &has_max, &max);
    json_t *s = json_pack("{s:s}", "name", sc_symtab_symbol_name(st, i));
    json_object_set_new(s, "min", has_min ? json_integer(min) : json_null());
    json_object_set_new(s, "max", has_max ? json_integer(max) : json_null());
    json_array_append_new(syms, s);
  }
  json_object_set_new(o, "symbols", syms);
  json_t *as = json_array();
  for (uint32_t i = 0; i < sc_symtab_n_assumptions(st); i++)
    json_array_append_new(as, json_string(sc_symtab_assumption_text(st, i)));
  json_object_set_new(o, "assume", as);
  json_object_set_new(o, "spec", graph_json(sc_bundle_spec(b)));
  json_object_set_new(o, "impl", graph_json(sc_bundle_impl(b)));
  json_object_set_new(o, "input_relation", relation_json(b, sc_bundle_input_relation(b)));
  json_object_set_new(o, "expect_output_relation",
                      sc_bundle_has_expect_output_relation(b)
                          ? relation_json(b, sc_bundle_expect_output_relation(b))
                          : json_null());
  json_object_set_new(o, "assumptions", relation_json(b, sc_bundle_assume_relation(b)));
  json_t *co = json_array();
  for (uint32_t i = 0; i < sc_bundle_n_check_outputs(b); i++)
    json_array_append_new(
        co, json_string(sc_graph_tensor(sc_bundle_spec(b), sc_bundle_check_output(b, i))->name));
  json_object_set_new(o, "check_outputs", co);
  json_object_set_new(o, "output_relation", json_null());
  json_object_set_new(o, "failure", json_null());
  json_object_set_new(o, "stats",
                      json_pack("{s:i, s:i}", "spec_nodes",
                                (int)sc_graph_n_nodes(sc_bundle_spec(b)), "impl_nodes",
                                (int)sc_graph_n_nodes(sc_bundle_impl(b))));
  print_json(o);
}

static void print_error_json_verdict(const char *verdict, const char *message,
                                     const sc_bundle_diag *d) {
  json_t *err = json_pack("{s:s}", "message", message);
  json_object_set_new(err, "file", d->file ? json_string(d->file) : json_null());
  json_object_set_new(err, "path", d->path ? json_string(d->path) : json_null());
  if (d->line > 0) {
    json_object_set_new(err, "line", json_integer(d->line));
    json_object_set_new(err, "column", json_integer(d->column));
  }
  json_t *o = json_pack("{s:s, s:o}", "verdict", verdict, "error", err);
  print_json(o);
}

void sc_cli_print_error_json(const char *message, const sc_bundle_diag *d) {
  print_error_json_verdict("error", message, d);
}

int sc_cli_load_failed(gboolean json, const GError *err, const sc_bundle_diag *d) {
  gboolean limit = err->domain == SC_BUNDLE_ERROR && err->code == SC_BUNDLE_ERROR_LIMIT;
  if (json) {
    sc_bundle_diag none = {0};
    print_error_json_verdict(limit ? "limit" : "error", err->message, d ? d : &none);
  } else {
    fprintf(stderr, "shardcheck: %s\n", err->message);
  }
  return limit ? SC_EXIT_LIMIT : SC_EXIT_INPUT_ERROR;
}

/* ---- the subcommand ---- */

int sc_cli_show(int argc, char **argv) {
  g_auto(sc_cli_common) common = SC_CLI_COMMON_INIT;
  g_auto(GStrv) rest = NULL;
  g_auto(GStrv) lemma_dirs = NULL;
  gboolean no_lemmas = FALSE;
  GOptionEntry entries[] = {
      SC_CLI_FORMAT_ENTRY(&common),
      SC_CLI_LEMMAS_ENTRY(
          &lemma_dirs,
          "Also load the lemma files (*.lemma) of DIR, for the operators they declare (repeatable)"),
      {"no-lemmas", 0, 0, G_OPTION_ARG_NONE, &no_lemmas,
       "Load no lemma file, not even the built-in ones (only the registry's operators are known)",
       NULL},
      SC_CLI_MAX_INPUT_ENTRY(&common, "bundle or lemma file"),
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, "BUNDLE"},
      SC_CLI_END_ENTRY,
  };
  if (!sc_cli_parse_common(&common, "shardcheck show",
                           "- load and validate a bundle, and summarize it",
                           "Examples:\n  shardcheck show models/mlp-tp2/bundle.json\n"
                           "  shardcheck show --format json models/paper-example/bundle.json\n"
                           "  shardcheck show --lemmas models/custom-kernel "
                           "models/custom-kernel/custom-kernel-tp2-fwd.json\n"
                           "\nThe operators declared in the built-in lemma files (custom "
                           "kernels: apex, vLLM, ...)\nand in --lemmas directories are "
                           "known, as they are to check.",
                           entries, &argc, &argv) ||
      !sc_cli_set_max_input(&common))
    return SC_EXIT_INPUT_ERROR;
  GError *err = NULL;
  gboolean json = common.json;
  if (rest == NULL || rest[0] == NULL || rest[1] != NULL) {
    fprintf(stderr, "shardcheck: show takes exactly one BUNDLE\n"
                    "Usage: shardcheck show [--format text|json] [--lemmas DIR] BUNDLE\n");
    return SC_EXIT_INPUT_ERROR;
  }
  if (no_lemmas && lemma_dirs != NULL) {
    fprintf(stderr, "shardcheck: --no-lemmas and --lemmas exclude each other\n");
    return SC_EXIT_INPUT_ERROR;
  }
  /* The lemma files declare operators (custom kernels) that bundles use. */
  g_autoptr(sc_lemma_set) lemmas = NULL;
  if (!no_lemmas) {
    lemmas = sc_cli_load_lemmas_or_say(lemma_dirs);
    if (lemmas == NULL)
      return SC_EXIT_INPUT_ERROR;
  }
  /* A model folder stands for its bundle.json. */
  g_autofree char *path = g_file_test(rest[0], G_FILE_TEST_IS_DIR)
                              ? g_build_filename(rest[0], "bundle.json", NULL)
                              : g_strdup(rest[0]);
  sc_bundle_diag diag = {0};
  sc_bundle *b = sc_bundle_load_diag(path, &diag, &err);
  if (b == NULL) {
    int code = sc_cli_load_failed(json, err, &diag);
    g_error_free(err);
    sc_bundle_diag_clear(&diag);
    return code;
  }
  if (json)
    print_summary_json(b);
  else
    print_summary_text(b);
  sc_bundle_free(b);
  return SC_EXIT_REFINES;
}
