/* usercheck.c — user lemmas checked before use, opaque operators listed as
 * assumptions (usercheck.h). */
#include "shardcheck/usercheck.h"
#include "shardcheck/lemma-cache.h"

#include <string.h>

#define USERCHECK_TAG "shardcheck user-lemma check v1"

/* What a lemma's check depends on besides its own text: every operator
 * declaration of the set (schemas) and every definition (NAME_unfold
 * lemmas), in order; and the checker's options. */
static char *context_text(const sc_lemma_set *set, const sc_lemcheck_options *opts) {
  GString *g = g_string_new(NULL);
  g_string_append_printf(g, "seed %" G_GUINT64_FORMAT " instances %u trials %u elements %" G_GINT64_FORMAT "\n",
                         opts->seed, opts->instances, opts->max_trials, opts->max_elements);
  for (uint32_t i = 0; i < sc_lemma_set_n_ops(set); i++)
    g_string_append_printf(g, "op %s\n", sc_lemma_set_op(set, i)->schema);
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(set); i++) {
    const sc_lemma_info *li = sc_lemma_set_lemma(set, i);
    if (li->unfolds != NULL)
      g_string_append_printf(g, "def %s\n", li->text);
  }
  return g_string_free(g, FALSE);
}

gboolean sc_usercheck_lemmas(const sc_lemma_set *set, uint32_t first,
                             const sc_lemcheck_options *opts, GPtrArray *unchecked,
                             uint32_t *cached, GError **error) {
  g_autofree char *context = context_text(set, opts);
  if (cached)
    *cached = 0;
  for (uint32_t i = first; i < sc_lemma_set_n_lemmas(set); i++) {
    const sc_lemma_info *li = sc_lemma_set_lemma(set, i);
    const char *parts[] = {li->name, li->text, context};
    g_autofree char *key = sc_lemma_cache_key(USERCHECK_TAG, parts, G_N_ELEMENTS(parts));
    if (key != NULL && sc_lemma_cache_has(key)) {
      if (cached)
        (*cached)++;
      continue;
    }
    sc_lemcheck_result res;
    sc_lemcheck_lemma(set, i, opts, &res);
    switch (res.status) {
    case SC_LEMCHECK_PASS:
      sc_lemma_cache_put(key);
      break;
    case SC_LEMCHECK_FAIL: {
      const sc_lemcheck_failure *f = &res.failure;
      g_autofree char *where =
          f->index ? g_strdup_printf("; first difference at %s: left %.17g, right %.17g", f->index,
                                     f->left, f->right)
                   : g_strdup_printf("; left side %s, right side %s", f->left_type,
                                     f->right_type);
      g_set_error(error, SC_LEMMA_ERROR, SC_LEMMA_ERROR_TYPE,
                  "%s:%u: error: lemma %s is false: %u of %u random instances differ; "
                  "instance: %s%s (%s).  A user lemma is checked before it may prove "
                  "anything (docs/custom-kernels.md)",
                  li->file, li->line, li->name, res.n_failed, res.instances, f->instance, where,
                  f->detail ? f->detail : "");
      sc_lemcheck_result_clear(&res);
      return FALSE;
    }
    case SC_LEMCHECK_NO_INSTANCE:
      if (unchecked)
        g_ptr_array_add(unchecked, g_strdup_printf("%s (%s:%u): no instance found in %u "
                                                   "candidates (%s)",
                                                   li->name, li->file, li->line, res.trials,
                                                   res.note ? res.note : ""));
      break;
    case SC_LEMCHECK_NOT_CHECKABLE:
      if (unchecked)
        g_ptr_array_add(unchecked, g_strdup_printf("%s (%s:%u): not checkable: %s", li->name,
                                                   li->file, li->line,
                                                   res.note ? res.note : ""));
      break;
    }
    sc_lemcheck_result_clear(&res);
  }
  return TRUE;
}

/* ---- opaque operators ------------------------------------------------ */

static gboolean has_definition(const sc_lemma_set *set, const sc_op *op) {
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(set); i++)
    if (sc_lemma_set_lemma(set, i)->unfolds == op)
      return TRUE;
  return FALSE;
}

static gboolean is_name_char(char c) {
  return g_ascii_isalnum(c) || c == '_' || c == '.';
}

static gboolean mentions(const char *text, const sc_op *op) {
  return sc_lemma_text_mentions(text, -1, op);
}

/* "FILE:LINE" of the line "op NS.NAME(" in the *.lemma files of DIRS. */
static char *find_declaration(char **dirs, const sc_op *op) {
  g_autofree char *head = g_strdup_printf("op %s.%s(", op->ns, op->name);
  for (uint32_t d = 0; dirs && dirs[d]; d++) {
    GDir *dir = g_dir_open(dirs[d], 0, NULL);
    if (dir == NULL)
      continue;
    const char *name;
    char *found = NULL;
    while (found == NULL && (name = g_dir_read_name(dir)) != NULL) {
      if (!g_str_has_suffix(name, ".lemma"))
        continue;
      g_autofree char *path = g_build_filename(dirs[d], name, NULL);
      g_autofree char *text = NULL;
      if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) ||
          !g_file_get_contents(path, &text, NULL, NULL))
        continue;
      char **lines = g_strsplit(text, "\n", -1);
      for (uint32_t l = 0; lines[l] && found == NULL; l++)
        if (g_str_has_prefix(g_strchug(lines[l]), head))
          found = g_strdup_printf("%s:%u", path, l + 1);
      g_strfreev(lines);
    }
    g_dir_close(dir);
    if (found)
      return found;
  }
  return NULL;
}

/* Marks the tensors of G downstream of a node calling OP (TAINT, by id). */
static gboolean taint(const sc_graph *g, const sc_op *op, gboolean *tainted) {
  uint32_t n = 0;
  const sc_id *order = sc_graph_topo_order(g, &n);
  gboolean any = FALSE;
  for (uint32_t i = 0; i < n; i++) {
    const sc_node *nd = sc_graph_node(g, order[i]);
    gboolean t = nd->op == op;
    for (uint32_t k = 0; k < nd->n_inputs && !t; k++)
      t = tainted[nd->inputs[k]];
    if (nd->op == op)
      any = TRUE;
    for (uint32_t k = 0; k < nd->n_results; k++)
      if (nd->results[k] != SC_ID_NONE)
        tainted[nd->results[k]] = tainted[nd->results[k]] || t;
  }
  return any;
}

/* Does EXPR name an impl tensor in IMPL_TAINT? */
static gboolean expr_tainted(const sc_graph *impl, const gboolean *impl_taint, const char *expr) {
  const char *p = expr;
  while (*p) {
    if (g_ascii_isalpha(*p) || *p == '_') {
      const char *s = p;
      while (is_name_char(*p))
        p++;
      g_autofree char *word = g_strndup(s, (gsize)(p - s));
      sc_id t = sc_graph_find_tensor(impl, word);
      if (t != SC_ID_NONE && impl_taint[t])
        return TRUE;
    } else {
      p++;
    }
  }
  return FALSE;
}

static void relations_relying(const sc_op *op, const sc_bundle *b, const sc_infer_result *r,
                              GPtrArray *out, gboolean *called) {
  const sc_graph *spec = sc_bundle_spec(b), *impl = sc_bundle_impl(b);
  gboolean *st = g_new0(gboolean, sc_graph_n_tensors(spec) + 1);
  gboolean *it = g_new0(gboolean, sc_graph_n_tensors(impl) + 1);
  gboolean a = taint(spec, op, st), c = taint(impl, op, it);
  *called = a || c;
  g_autofree char *nsname = g_strdup_printf("%s.%s", op->ns, op->name);
  for (uint32_t i = 0; r && i < sc_infer_n_checked(r); i++) {
    sc_id t = sc_infer_checked(r, i);
    const GPtrArray *exprs = sc_infer_output_exprs(r, t);
    for (guint j = 0; exprs && j < exprs->len; j++) {
      const char *e = g_ptr_array_index(exprs, j);
      if (st[t] || expr_tainted(impl, it, e) || mentions(e, op))
        g_ptr_array_add(out, g_strdup_printf("%s = %s", sc_graph_tensor(spec, t)->name, e));
    }
  }
  g_free(st);
  g_free(it);
}

static void assumed_clear(gpointer p) {
  sc_report_assumed_op *a = p;
  g_free(a->op);
  g_free(a->declared_at);
  g_ptr_array_unref(a->lemmas);
  g_ptr_array_unref(a->relations);
}

GArray *sc_usercheck_opaque(const sc_lemma_set *set, uint32_t first, char **user_dirs,
                            const sc_bundle *b, const sc_infer_result *r) {
  GArray *out = g_array_new(FALSE, TRUE, sizeof(sc_report_assumed_op));
  g_array_set_clear_func(out, assumed_clear);
  for (uint32_t i = 0; i < sc_lemma_set_n_ops(set); i++) {
    const sc_op *op = sc_lemma_set_op(set, i);
    if (has_definition(set, op))
      continue;
    GPtrArray *rel = g_ptr_array_new_with_free_func(g_free);
    gboolean called = FALSE;
    if (b != NULL)
      relations_relying(op, b, r, rel, &called);
    g_autofree char *decl = find_declaration(user_dirs, op);
    gboolean user = decl != NULL; /* declared in a user's file */
    for (uint32_t k = first; !user && k < sc_lemma_set_n_lemmas(set); k++)
      user = mentions(sc_lemma_set_lemma(set, k)->text, op);
    if (!user && !called) { /* not reported: skip the search of the built-in files */
      g_ptr_array_unref(rel);
      continue;
    }
    if (decl == NULL) {
      char *builtin[] = {(char *)sc_lemma_builtin_dir(), NULL};
      decl = find_declaration(builtin, op);
    }
    GPtrArray *lem = g_ptr_array_new_with_free_func(g_free);
    for (uint32_t k = 0; k < sc_lemma_set_n_lemmas(set); k++) {
      const sc_lemma_info *li = sc_lemma_set_lemma(set, k);
      if (!mentions(li->text, op))
        continue;
      g_ptr_array_add(lem, g_strdup_printf("%s (%s:%u)", li->name, li->file, li->line));
    }
    sc_report_assumed_op a = {g_strdup(op->qualname), g_steal_pointer(&decl), lem, rel};
    g_array_append_val(out, a);
  }
  return out;
}

void sc_usercheck_opaque_free(GArray *ops) {
  if (ops)
    g_array_unref(ops);
}
