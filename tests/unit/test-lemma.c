/* test-lemma.c — the lemma DSL: parsing of every construct, pinned error
 * texts of malformed lemma files (file:line:col and message), the first
 * lemma library, lemma programs (tests/lemmas/NAME.test: terms, a run of
 * the lemmas, expected equalities), constrained lemmas, undecided
 * conditions, operator declarations with shape rules and unfolding.
 *
 * Lemma program format (one command a line, '#' comments):
 *   symbol NAME [MIN [MAX]]      declare a size symbol
 *   assume CONSTRAINT            a symtab assumption ("S % 2 == 0")
 *   tensor NAME DTYPE [DIMS]     a leaf tensor ("tensor x f32 [4, S]")
 *   lemmas all | FILE...         built-in lemma files (lemmas/FILE)
 *   load FILE                    a lemma file next to the program
 *   given TERM                   add a term (expression language)
 *   run                          run the lemmas to saturation
 *   expect TERM == TERM          equal after the run
 *   expect TERM != TERM          not equal after the run
 *   fires LEMMA N                lemma LEMMA applied exactly N times
 *   range NAME LO HI [ID]        value-range fact [LO, HI] on leaf NAME:
 *                                declared, or assumption number ID
 *   assumes LEMMA [ID...]        the assumptions LEMMA's applications read
 *   stop REASON                  the runner stopped for REASON */
#include "shardcheck/lemma.h"
#include "shardcheck/texpr.h"
#include "sc-config.h"

#include <glib/gstdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static sc_lemma_set *load_text(const char *text, GError **error) {
  sc_lemma_set *s = sc_lemma_set_new();
  if (!sc_lemma_set_load_string(s, "t.lemma", text, error)) {
    sc_lemma_set_free(s);
    return NULL;
  }
  return s;
}

/* An e-graph world: symtab, leaf graph, lang, lemmas, rules. */
typedef struct {
  sc_symtab *st;
  sc_graph *g;
  sc_lang *lang;
  sc_lemma_set *set;
  sc_lemma_rules *rules;
  sc_stop_reason stop;
  gboolean ran;
} world;

static void world_init(world *w) {
  memset(w, 0, sizeof *w);
  w->st = sc_symtab_new();
  w->g = sc_graph_new(w->st);
  w->set = sc_lemma_set_new();
}

static void world_clear(world *w) {
  sc_lemma_rules_free(w->rules);
  sc_lang_free(w->lang);
  sc_lemma_set_free(w->set);
  sc_graph_free(w->g);
  sc_symtab_free(w->st);
}

static sc_lang *world_lang(world *w) {
  if (w->lang == NULL)
    w->lang = sc_lang_new(w->st, w->g);
  return w->lang;
}

static sc_id world_add(world *w, const char *text) {
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_texpr) t = sc_texpr_parse(text, w->g, FALSE, &err);
  if (t == NULL)
    g_error("term %s: %s", text, err->message);
  sc_id c = sc_lang_add_texpr(world_lang(w), t, &err);
  if (c == SC_ID_NONE)
    g_error("term %s: %s", text, err->message);
  return c;
}

static void world_run(world *w) {
  g_autoptr(GError) err = NULL;
  sc_lang *lang = world_lang(w);
  if (w->rules == NULL) {
    w->rules = sc_lemma_compile(w->set, lang, &err);
    g_assert_no_error(err);
  }
  sc_egraph *eg = sc_lang_egraph(lang);
  sc_egraph_rebuild(eg);
  sc_runner_limits lim;
  sc_runner_limits_init(&lim);
  lim.iter_limit = 40;
  lim.node_limit = 20000;
  lim.time_limit = 20;
  g_autoptr(sc_runner) r = sc_runner_new(eg, &lim);
  uint32_t n;
  sc_rewrite *const *rw = sc_lemma_rules_array(w->rules, &n);
  w->stop = sc_runner_run(r, rw, n);
  w->ran = TRUE;
  g_assert_true(sc_egraph_check(eg, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(sc_lang_n_conflicts(lang), ==, 0);
}

static gboolean world_equal(world *w, const char *a, const char *b) {
  sc_id x = world_add(w, a), y = world_add(w, b);
  sc_egraph *eg = sc_lang_egraph(w->lang);
  sc_egraph_rebuild(eg);
  return sc_egraph_find(eg, x) == sc_egraph_find(eg, y);
}

static uint64_t applications(world *w, const char *lemma) {
  int32_t i = sc_lemma_set_find(w->set, lemma);
  g_assert_cmpint(i, >=, 0);
  sc_lemma_counters c;
  sc_lemma_rules_counters(w->rules, (uint32_t)i, &c);
  return c.applications;
}

/* ------------------------------------------------------------------------ */
/* Lemma programs                                                            */

static void run_program(const char *path) {
  g_autofree char *text = NULL;
  g_autoptr(GError) err = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, &err));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  world w;
  world_init(&w);
  g_autofree char *dir = g_path_get_dirname(path);
  uint32_t n_expect = 0;
  for (guint ln = 0; lines[ln]; ln++) {
    g_autofree char *line = g_strstrip(g_strdup(lines[ln]));
    if (line[0] == '\0' || line[0] == '#')
      continue;
    g_autofree char *where = g_strdup_printf("%s:%u", path, ln + 1);
    char *sp = strchr(line, ' ');
    g_autofree char *cmd = sp ? g_strndup(line, (gsize)(sp - line)) : g_strdup(line);
    const char *rest = sp ? sp + 1 : "";
    if (strcmp(cmd, "symbol") == 0) {
      g_auto(GStrv) f = g_strsplit(rest, " ", -1);
      gboolean has_min = f[1] != NULL, has_max = has_min && f[2] != NULL;
      g_assert_true(sc_symtab_declare(w.st, f[0], has_min, has_min ? g_ascii_strtoll(f[1], NULL, 10) : 0,
                                      has_max, has_max ? g_ascii_strtoll(f[2], NULL, 10) : 0, &err));
    } else if (strcmp(cmd, "assume") == 0) {
      g_assert_true(sc_symtab_assume(w.st, rest, &err));
    } else if (strcmp(cmd, "tensor") == 0) {
      g_auto(GStrv) f = g_strsplit(rest, " ", 3);
      g_assert_nonnull(f[0]);
      g_assert_nonnull(f[1]);
      sc_ttype t;
      g_assert_true(sc_dtype_from_name(f[1], &t.dtype));
      t.shape.rank = 0;
      if (f[2] != NULL) {
        g_autofree char *dims = g_strstrip(g_strdup(f[2]));
        g_assert_true(dims[0] == '[' && dims[strlen(dims) - 1] == ']');
        dims[strlen(dims) - 1] = '\0';
        g_auto(GStrv) ds = g_strsplit(dims + 1, ",", -1);
        for (guint k = 0; ds[k]; k++) {
          g_autofree char *dt = g_strstrip(g_strdup(ds[k]));
          if (dt[0] == '\0')
            continue;
          g_assert_cmpuint(t.shape.rank, <, SC_MAX_RANK);
          g_assert_true(sc_dim_parse(w.st, dt, &t.shape.dims[t.shape.rank++], &err));
        }
      }
      sc_id id;
      g_assert_true(sc_graph_add_input(w.g, f[0], &t, &id, &err));
    } else if (strcmp(cmd, "lemmas") == 0) {
      if (strcmp(rest, "all") == 0) {
        g_assert_true(sc_lemma_set_load_dir(w.set, SC_LEMMA_SOURCE_DIR, &err));
      } else {
        g_auto(GStrv) f = g_strsplit(rest, " ", -1);
        for (guint k = 0; f[k]; k++) {
          g_autofree char *p = g_build_filename(SC_LEMMA_SOURCE_DIR, f[k], NULL);
          if (!sc_lemma_set_load_file(w.set, p, &err))
            g_error("%s: %s", where, err->message);
        }
      }
    } else if (strcmp(cmd, "load") == 0) {
      g_autofree char *p = g_build_filename(dir, rest, NULL);
      if (!sc_lemma_set_load_file(w.set, p, &err))
        g_error("%s: %s", where, err->message);
    } else if (strcmp(cmd, "given") == 0) {
      world_add(&w, rest);
    } else if (strcmp(cmd, "run") == 0) {
      world_run(&w);
    } else if (strcmp(cmd, "expect") == 0) {
      if (!w.ran)
        world_run(&w);
      const char *op = strstr(rest, " == ");
      gboolean want_eq = TRUE;
      if (op == NULL) {
        op = strstr(rest, " != ");
        want_eq = FALSE;
      }
      if (op == NULL)
        g_error("%s: expect needs == or !=", where);
      g_autofree char *a = g_strndup(rest, (gsize)(op - rest));
      const char *b = op + 4;
      /* both terms are added, then the lemmas run again over them */
      world_add(&w, a);
      world_add(&w, b);
      world_run(&w);
      gboolean eq = world_equal(&w, a, b);
      if (eq != want_eq)
        g_error("%s: expected %s %s %s", where, a, want_eq ? "==" : "!=", b);
      n_expect++;
    } else if (strcmp(cmd, "fires") == 0) {
      if (!w.ran)
        world_run(&w);
      g_auto(GStrv) f = g_strsplit(rest, " ", -1);
      uint64_t got = applications(&w, f[0]);
      if (got != (uint64_t)g_ascii_strtoull(f[1], NULL, 10))
        g_error("%s: lemma %s applied %" G_GUINT64_FORMAT " times, expected %s", where, f[0],
                got, f[1]);
    } else if (strcmp(cmd, "range") == 0) {
      /* range NAME LO HI [ASSUMPTION]: a value-range fact on a leaf tensor,
       * declared (FACT) or assumption number ASSUMPTION */
      g_auto(GStrv) f = g_strsplit(rest, " ", -1);
      g_assert_true(f[0] && f[1] && f[2]);
      sc_id t = sc_graph_find_tensor(w.g, f[0]);
      if (t == SC_ID_NONE)
        g_error("%s: no tensor %s", where, f[0]);
      sc_vrange r;
      sc_vrange_init(&r);
      r.lo = sc_dim_const(g_ascii_strtoll(f[1], NULL, 10));
      r.hi = sc_dim_const(g_ascii_strtoll(f[2], NULL, 10));
      r.lo_src = r.hi_src =
          f[3] ? (uint32_t)g_ascii_strtoull(f[3], NULL, 10) : SC_VRANGE_FACT;
      sc_lang_add_range(world_lang(&w), sc_lang_add_tensor(world_lang(&w), t), &r);
    } else if (strcmp(cmd, "assumes") == 0) {
      /* assumes LEMMA [ID...]: the assumptions its applications read */
      if (!w.ran)
        world_run(&w);
      g_auto(GStrv) f = g_strsplit(rest, " ", -1);
      int32_t li = sc_lemma_set_find(w.set, f[0]);
      g_assert_cmpint(li, >=, 0);
      uint32_t n = 0;
      const uint32_t *ids = sc_lemma_rules_assumptions(w.rules, (uint32_t)li, &n);
      GString *got = g_string_new(NULL), *want = g_string_new(NULL);
      for (uint32_t k = 0; k < n; k++)
        g_string_append_printf(got, "%s%u", k ? " " : "", ids[k]);
      for (guint k = 1; f[k]; k++)
        g_string_append_printf(want, "%s%s", k > 1 ? " " : "", f[k]);
      if (strcmp(got->str, want->str) != 0)
        g_error("%s: lemma %s read assumptions [%s], expected [%s]", where, f[0], got->str,
                want->str);
      g_string_free(got, TRUE);
      g_string_free(want, TRUE);
    } else if (strcmp(cmd, "stop") == 0) {
      if (strcmp(sc_stop_reason_name(w.stop), rest) != 0)
        g_error("%s: stopped for %s", where, sc_stop_reason_name(w.stop));
    } else {
      g_error("%s: unknown command %s", where, cmd);
    }
    g_assert_no_error(err);
  }
  g_assert_cmpuint(n_expect, >, 0);
  world_clear(&w);
}

static gint cmp_path(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_programs(void) {
  g_autofree char *dir = g_build_filename(SC_TEST_SRCDIR, "tests", "lemmas", NULL);
  GDir *dh = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(dh);
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(dh)) != NULL)
    if (g_str_has_suffix(name, ".test"))
      g_ptr_array_add(files, g_build_filename(dir, name, NULL));
  g_dir_close(dh);
  g_ptr_array_sort(files, cmp_path);
  g_assert_cmpuint(files->len, >=, 6);
  for (guint i = 0; i < files->len; i++) {
    if (g_test_verbose())
      g_printerr("program %s\n", (const char *)g_ptr_array_index(files, i));
    run_program(g_ptr_array_index(files, i));
  }
  g_ptr_array_free(files, TRUE);
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */

static void test_parse_constructs(void) {
  g_autoptr(GError) err = NULL;
  const char *text =
      "# every construct\n"
      "lemma a: neg(neg(?x)) => ?x\n"
      "lemma b: relu(cat(?a, ?b, dim=?d)) <=> cat(relu(?a), relu(?b), dim=?d)\n"
      "\n"
      "lemma c: slice(cat(?a, ?b, dim=?d), dim=?d, start=?s, end=?e)\n"
      "    => slice(?b, dim=?d, start=?s - size(?a, ?d), end=?e - size(?a, ?d))\n"
      "  # a comment inside a statement\n"
      "  where size(?a, ?d) <= ?s and (?s <= ?e or not ?s > ?e) and dtype(?a) == dtype(?b)\n"
      "    and 2 divides 4\n"
      "lemma d: sum(?a, ?b) => sum(?b, ?a) requires sum(?b, ?a)\n"
      "lemma e: gelu(?x, approximate=?_) => gelu(?x, approximate=\"none\")\n"
      "  requires gelu(?x), relu(?x) where rank(?x) >= 1 and dtype(?x) == f32\n"
      "lemma f: native_layer_norm#0(?x, normalized_shape=[4], weight=?w, bias=?b, eps=1e-05)\n"
      "    => native_layer_norm#0(?x, [4], ?w, ?b, 1e-05)\n"
      "lemma g: transpose(transpose(?x, dim0=?i, dim1=?j), dim0=?i, dim1=?j) => ?x\n"
      "  where 0 <= ?i and 0 <= ?j and ?i % 2 * 3 + -1 < 100 and shape(?x) == shape(?x)\n";
  g_autoptr(sc_lemma_set) s = load_text(text, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(sc_lemma_set_n_lemmas(s), ==, 7);
  const sc_lemma_info *a = sc_lemma_set_lemma(s, 0);
  g_assert_cmpstr(a->name, ==, "a");
  g_assert_cmpstr(a->file, ==, "t.lemma");
  g_assert_cmpuint(a->line, ==, 2);
  g_assert_cmpuint(a->col, ==, 1);
  g_assert_cmpstr(a->text, ==, "lemma a: neg(neg(?x)) => ?x");
  g_assert_cmpint(a->direction, ==, SC_LEMMA_ONE_WAY);
  const sc_lemma_info *b = sc_lemma_set_lemma(s, 1);
  g_assert_cmpint(b->direction, ==, SC_LEMMA_BOTH);
  const sc_lemma_info *c = sc_lemma_set_lemma(s, 2);
  g_assert_cmpuint(c->line, ==, 5);
  g_assert_true(g_str_has_suffix(c->text, "and 2 divides 4"));
  g_assert_cmpuint(sc_lemma_set_lemma(s, 3)->n_requires, ==, 1);
  g_assert_cmpuint(sc_lemma_set_lemma(s, 4)->n_requires, ==, 2);
  g_assert_cmpint(sc_lemma_set_find(s, "g"), ==, 6);
  g_assert_cmpint(sc_lemma_set_find(s, "zz"), ==, -1);
}

/* Malformed lemma texts and the exact first error line. */
static const struct {
  const char *text;
  const char *error;
  sc_lemma_error code;
} bad[] = {
    {"lemma a: mn(?x, ?y) => ?x\n",
     "t.lemma:1:10: error: unknown operator 'mn' (did you mean 'mm'?)", SC_LEMMA_ERROR_UNKNOWN_OP},
    {"lemma a: neg(?x) => relu(?y)\n",
     "t.lemma:1:26: error: ?y on the right is not bound by the left side or requires",
     SC_LEMMA_ERROR_VAR},
    {"lemma a neg(?x) => ?x\n", "t.lemma:1:9: error: expected ':' after the lemma name, found 'neg'",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg(?x) -> ?x\n", "t.lemma:1:18: error: expected '=>' or '<=>', found '->'",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg(?x => ?x\n", "t.lemma:1:17: error: expected ',' or ')', found '=>'",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg(?x) => ?x where\n",
     "t.lemma:1:29: error: expected an expression, found end of statement",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg(?x) => ?x\nlemma a: relu(?x) => ?x\n",
     "t.lemma:2:7: error: lemma a is defined twice", SC_LEMMA_ERROR_DUPLICATE},
    {"lemma a: mm(?x) => ?x\n", "t.lemma:1:15: error: missing argument 'mat2' of aten.mm.default",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: neg(?x, ?y) => ?x\n",
     "t.lemma:1:18: error: too many arguments: aten.neg.default takes 1 positional argument",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: cat(?a, ?b, dmi=0) => ?a\n",
     "t.lemma:1:22: error: sc.cat.default has no argument 'dmi' (did you mean 'dim'?)",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: cat(?a, ?b, dim=?a) => ?a\n",
     "t.lemma:1:26: error: ?a is used as an attribute here but as a tensor at 1:14",
     SC_LEMMA_ERROR_VAR},
    {"lemma a: cat(?a, ?b, dim=0) => ?a\n",
     "t.lemma:1:7: error: the two sides of lemma a differ in type: with ?a: ...",
     SC_LEMMA_ERROR_TYPE},
    {"lemma a: mm(?a, ?b) => mm(?b, ?a)\n", "", SC_LEMMA_ERROR_TYPE},
    {"lemma a: cat(?a, ?b, dim=\"x\") => ?a\n",
     "t.lemma:1:26: error: argument 'dim' of sc.cat.default expects int, found a string",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: ?x => neg(neg(?x))\n",
     "t.lemma:1:10: error: a left side that is a bare variable matches every class: add "
     "'requires' patterns (a constrained lemma) or match an operator",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: cat(?a, ?b, ?c, dim=0) => ?a\n",
     "t.lemma:1:10: error: sc.cat.default with 3 parts never appears in the e-graph: cat and sum are "
     "kept binary (cat(a, b, c) is cat(cat(a, b), c)); match two parts",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: aten.view(?x, size=[4]) => ?x\n",
     "t.lemma:1:10: error: aten.view.default never appears in the e-graph (it is rewritten to "
     "view when added): write the canonical form",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: native_layer_norm(?x, [4], ?w, ?b, 1e-05) => ?x\n",
     "t.lemma:1:10: error: aten.native_layer_norm.default has several results: write "
     "native_layer_norm#k(...) for result k",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: neg#?k(?x) => ?x\n",
     "t.lemma:1:10: error: aten.neg.default has one result: a result-index variable #?k has "
     "nothing to range over",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: split#0(?x, ?n, ?d) => split#?k(?x, ?n, ?d)\n",
     "t.lemma:1:39: error: ?k on the right is not bound by the left side or requires",
     SC_LEMMA_ERROR_VAR},
    {"lemma a: split#?k(?x, ?k, ?d) => ?x\n",
     "t.lemma:1:...", SC_LEMMA_ERROR_TYPE},
    {"lemma a: split#?(?x, 2, 0) => ?x\n",
     "t.lemma:1:...", SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg#1(?x) => ?x\n",
     "t.lemma:1:10: error: aten.neg.default has 1 result: #1 is out of range",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: neg(?x) => relu(?x) where size(?x, 0) > ?q\n",
     "t.lemma:1:50: error: ?q in the condition is not bound by the left side or requires",
     SC_LEMMA_ERROR_VAR},
    {"lemma a: neg(?x) => relu(?x) where frob(?x) > 1\n",
     "t.lemma:1:36: error: unknown function 'frob' in a condition (known: size, rank, dtype, "
     "shape, numel, with_size, min, max, indexof, at, diffat, prod, cutat, insert, vmin, vmax, "
     "append, remove, broadcast, len, reduced, reduced_before, reduced_numel, unitperm, "
     "permshape, unitdrop, unitdropperm)",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: neg(?x) => gelu(?x, approximate=?_)\n",
     "t.lemma:1:42: error: '?_' matches any value: it cannot be used on the right side",
     SC_LEMMA_ERROR_VAR},
    {"lemma a: slice(?x, dim=0, start=?s + 1, end=?e) => ?x\n",
     "t.lemma:1:33: error: argument 'start' of sc.slice.default: a computed value is only allowed on "
     "the right side of a => lemma (the left side matches; write ?v and a where condition)",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: neg(?x) <=> neg(neg(neg(?y)))\n",
     "t.lemma:1:18: error: '<=>' needs every variable on both sides: ?x is not bound by the "
     "right side (use '=>')",
     SC_LEMMA_ERROR_VAR},
    {"  lemma a: neg(?x) => ?x\n",
     "t.lemma:1:3: error: 'lemma' must start in column 1 (an indented line continues the "
     "previous statement)",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg(?x) => ?x\nfoo\n", "t.lemma:2:1: error: expected 'lemma' or 'op', found 'foo'",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg(? x) => ?x\n", "t.lemma:1:14: error: expected a variable name after '?'",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg(?x) => ?x requires ?x\n",
     "t.lemma:1:33: error: a requires pattern must be an operator call (it names e-nodes that "
     "must exist)",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: slice(?x, dim=0, start=0, end=99999999999999999999) => ?x\n",
     "t.lemma:1:40: error: integer out of range", SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: neg(\"x\") => ?x\n",
     "t.lemma:1:14: error: argument 'self' of aten.neg.default is a tensor: expected ?x or an "
     "operator call, found a string",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: neg(?x) => ?x where ?x > 1 where ?x > 2\n",
     "t.lemma:1:37: error: expected 'requires' or end of statement, found 'where'",
     SC_LEMMA_ERROR_SYNTAX},
    {"lemma a: relu(?x) => mm(?x, ?x)\n",
     "t.lemma:1:7: error: the right side of lemma a is ill-typed where the left side is not: "
     "with ?x: ...",
     SC_LEMMA_ERROR_TYPE},
    {"lemma a: neg(?x) => ?x\n  lemma b: relu(?x) => ?x\n",
     "t.lemma:2:3: error: expected 'for', 'where', 'requires' or end of statement, found 'lemma'",
     SC_LEMMA_ERROR_SYNTAX},
    {"op aten.foo(Tensor x) -> Tensor: shape(x)\n",
     "t.lemma:1:4: error: cannot declare aten.foo: namespace 'aten' is reserved for built-in "
     "operators",
     SC_LEMMA_ERROR_DUPLICATE},
    {"op mylib.bad1(Tensor x, flot eps) -> Tensor: shape(x)\n", "", SC_LEMMA_ERROR_DECL},
    {"op mylib.bad2(Tensor x) -> Tensor: shape(y)\n",
     "t.lemma:1:42: error: 'y' is not a parameter of mylib.bad2.default", SC_LEMMA_ERROR_DECL},
    {"op mylib.bad3(Tensor x) -> Tensor: shape(x) = neg(neg(neg(relu(y))))\n",
     "t.lemma:1:64: error: 'y' is not a parameter of mylib.bad3.default", SC_LEMMA_ERROR_DECL},
    {"op mylib.bad4(Tensor x) -> Tensor: [size(x, 0)] = relu(x)\n", "", SC_LEMMA_ERROR_TYPE},
    {"lemma a: neg(?x) => ?x where vmin(?x, 1) >= 0\n",
     "t.lemma:1:30: error: vmin takes 1 argument", SC_LEMMA_ERROR_ARGS},
    {"lemma a: add.Scalar(?x, ?k) => ?x where vmax(?k) < 3\n",
     "t.lemma:1:46: error: vmax needs a tensor, but ?k is an attribute", SC_LEMMA_ERROR_VAR},
    {"lemma a: index(?w, [None, ?i]) => ?w\n",
     "t.lemma:1:21: error: argument 'indices' of aten.index.Tensor: a None item of a Tensor?[] "
     "cannot be matched (write tensors only)",
     SC_LEMMA_ERROR_ARGS},
    {"op mylib.bad5(Tensor x) -> Tensor: frob(shape(x))\n",
     "t.lemma:1:36: error: unknown function 'frob' in a shape rule (known: size, rank, dtype, "
     "shape, numel, with_size, min, max, append, remove)",
     SC_LEMMA_ERROR_DECL},
    {"op badname(Tensor x) -> Tensor: shape(x)\n",
     "t.lemma:1:4: error: expected a qualified operator name (namespace.name), found 'badname'",
     SC_LEMMA_ERROR_SYNTAX},
    /* operator classes */
    {"lemma a: ?f(?x) => ?x\n",
     "t.lemma:1:10: error: the operator variable ?f is not bound: add 'for ?f in CLASS' "
     "(classes: elementwise1, ...",
     SC_LEMMA_ERROR_UNKNOWN_OP},
    {"lemma a: ?f(?x) => ?x for ?f in elementwize1\n",
     "t.lemma:1:33: error: unknown operator class 'elementwize1' (classes: elementwise1, ...",
     SC_LEMMA_ERROR_UNKNOWN_OP},
    {"lemma a: ?f(?x, ?y) => ?x for ?f in elementwise1\n",
     "t.lemma:1:10: error: with ?f = aten.add.Scalar: ?f is called with 2 tensor operands, but "
     "aten.add.Scalar (bound to it) takes 1",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: ?f(?x, bogus=1) => ?x for ?f in elementwise1\n",
     "t.lemma:1:17: error: with ?f = aten.add.Scalar: aten.add.Scalar (bound to ?f) has no "
     "argument 'bogus'",
     SC_LEMMA_ERROR_ARGS},
    {"lemma a: ?f(?x) => ?x for f in elementwise1\n",
     "t.lemma:1:27: error: expected an operator variable ?f after 'for', found 'f'",
     SC_LEMMA_ERROR_SYNTAX},
    {"op mylib.bad6(Tensor x) -> Tensor: shape(x) is elementwize\n",
     "t.lemma:1:48: error: unknown operator trait 'elementwize' (elementwise, rowwise, "
     "reduce_sum, ...",
     SC_LEMMA_ERROR_DECL},
    {"op mylib.bad7(Tensor x, int[] dim) -> Tensor: shape(x) is reduce_sum, reduce_max\n",
     "t.lemma:1:71: error: an operator has one combiner: 'reduce_max' is a second",
     SC_LEMMA_ERROR_DECL},
};

static void test_errors(void) {
  g_assert_cmpuint(G_N_ELEMENTS(bad), >=, 25);
  uint32_t failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(GError) err = NULL;
    g_autoptr(sc_lemma_set) s = load_text(bad[i].text, &err);
    if (s != NULL) {
      g_printerr("case %zu: accepted: %s", i, bad[i].text);
      failures++;
      continue;
    }
    g_auto(GStrv) lines = g_strsplit(err->message, "\n", 2);
    size_t el = strlen(bad[i].error);
    gboolean prefix = el > 3 && strcmp(bad[i].error + el - 3, "...") == 0;
    gboolean ok = err->domain == SC_LEMMA_ERROR && err->code == (gint)bad[i].code;
    if (prefix)
      ok = ok && strncmp(lines[0], bad[i].error, el - 3) == 0;
    else if (bad[i].error[0])
      ok = ok && strcmp(lines[0], bad[i].error) == 0;
    else
      ok = ok && g_str_has_prefix(lines[0], "t.lemma:1:");
    if (!ok) {
      g_printerr("case %zu: %s  got      %s (code %d)\n  expected %s (code %d)\n", i,
                 bad[i].text, lines[0], err->code, bad[i].error, bad[i].code);
      failures++;
    }
  }
  g_assert_cmpuint(failures, ==, 0);
}

/* Class lemmas: one instance per operator of the class, built-in or
 * declared by a later load, matched per operator; a 3-way and a 6-way
 * split (cats nested to the left) pass through a declared elementwise
 * operator that has no lemma of its own. */
static const char *const class_lemma =
    "lemma c: ?f(cat(?a, ?b, dim=?d)) <=> cat(?f(?a), ?f(?b), dim=?d)\n"
    "  for ?f in elementwise1\n"
    "  where dtype(?a) == dtype(?b)\n";

static void test_class_lemmas(void) {
  world w;
  world_init(&w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_lemma_set_load_string(w.set, "c.lemma", class_lemma, &err));
  g_assert_no_error(err);
  g_assert_cmpint(sc_lemma_set_find(w.set, "c[neg]"), >=, 0);
  g_assert_cmpint(sc_lemma_set_find(w.set, "c[add.Scalar]"), >=, 0);
  g_assert_cmpint(sc_lemma_set_find(w.set, "c[gelu]"), >=, 0);
  g_assert_cmpint(sc_lemma_set_find(w.set, "c[add.Tensor]"), ==, -1); /* two tensors */
  g_assert_cmpint(sc_lemma_set_find(w.set, "c[mm]"), ==, -1);
  g_assert_cmpint(sc_lemma_set_find(w.set, "c[clstest.sq]"), ==, -1);
  uint32_t before = sc_lemma_set_n_lemmas(w.set);
  /* declared after the class lemma: instantiated when declared */
  g_assert_true(sc_lemma_set_load_string(
      w.set, "d.lemma", "op clstest.sq(Tensor x) -> Tensor: shape(x) is elementwise\n", &err));
  g_assert_no_error(err);
  int32_t k = sc_lemma_set_find(w.set, "c[clstest.sq]");
  g_assert_cmpint(k, >=, 0);
  g_assert_cmpuint(sc_lemma_set_n_lemmas(w.set), ==, before + 1);
  g_assert_nonnull(strstr(sc_lemma_set_lemma(w.set, (uint32_t)k)->text,
                          "(instance: ?f = clstest.sq.default)"));
  /* not elementwise: no instance */
  g_assert_true(sc_lemma_set_load_string(
      w.set, "e.lemma", "op clstest.other(Tensor x) -> Tensor: shape(x)\n", &err));
  g_assert_cmpint(sc_lemma_set_find(w.set, "c[clstest.other]"), ==, -1);

  sc_ttype t = {sc_shape_of(2, (int64_t[]){2, 6}), SC_DTYPE_F32};
  const char *names[] = {"x0", "x1", "x2", "x3", "x4", "x5"};
  sc_id id;
  for (int i = 0; i < 6; i++)
    g_assert_true(sc_graph_add_input(w.g, names[i], &t, &id, &err));
  world_add(&w, "clstest.sq(cat(x0, x1, x2, dim=0))");
  world_add(&w, "clstest.sq(cat(x0, x1, x2, x3, x4, x5, dim=1))");
  world_add(&w, "gelu(cat(x0, x1, x2, dim=0), approximate=\"tanh\")");
  world_run(&w);
  g_assert_true(world_equal(&w, "clstest.sq(cat(x0, x1, x2, dim=0))",
                            "cat(clstest.sq(x0), clstest.sq(x1), clstest.sq(x2), dim=0)"));
  g_assert_true(world_equal(&w, "clstest.sq(cat(x0, x1, x2, x3, x4, x5, dim=1))",
                            "cat(clstest.sq(x0), clstest.sq(x1), clstest.sq(x2), "
                            "clstest.sq(x3), clstest.sq(x4), clstest.sq(x5), dim=1)"));
  g_assert_cmpuint(applications(&w, "c[clstest.sq]"), >=, 7);
  /* the operator's attributes are the same on both sides */
  g_assert_true(world_equal(&w, "gelu(cat(x0, x1, x2, dim=0), approximate=\"tanh\")",
                            "cat(gelu(x0, approximate=\"tanh\"), gelu(x1, approximate=\"tanh\"), "
                            "gelu(x2, approximate=\"tanh\"), dim=0)"));
  g_assert_false(world_equal(&w, "gelu(cat(x0, x1, x2, dim=0), approximate=\"tanh\")",
                             "cat(gelu(x0), gelu(x1), gelu(x2), dim=0)"));
  g_assert_false(world_equal(&w, "clstest.other(cat(x0, x1, dim=0))",
                             "cat(clstest.other(x0), clstest.other(x1), dim=0)"));
  world_clear(&w);
}

/* A call of OP_NAME on tensor X with the int attributes INTS after it,
 * result RESULT: the terms of the expression language name no result of
 * a multi-result operator. */
static sc_id world_add_result(world *w, const char *op_name, sc_id x, const int64_t *ints,
                              uint32_t n_ints, uint32_t result) {
  const sc_op *op = sc_ops_lookup_func(op_name, NULL);
  g_assert_nonnull(op);
  g_assert_cmpuint(op->n_args, ==, n_ints + 1);
  sc_value args[4];
  args[0] = sc_value_tensor(0);
  for (uint32_t i = 0; i < n_ints; i++)
    args[i + 1] = sc_value_int(ints[i]);
  g_autoptr(GError) err = NULL;
  sc_id c = sc_lang_add_call(world_lang(w), op, args, &x, 1, result, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(c, !=, SC_ID_NONE);
  return c;
}

static gboolean world_same(world *w, sc_id c, const char *term) {
  sc_id t = world_add(w, term);
  sc_egraph *eg = sc_lang_egraph(w->lang);
  sc_egraph_rebuild(eg);
  return sc_egraph_find(eg, c) == sc_egraph_find(eg, t);
}

/* A result-index variable (`split#?k`): one lemma for every result of a
 * multi-result operator, bound from the matched node, read by the
 * condition and the right side, and used as a result index on the right
 * (seed 15012: result 4 of a split, past the per-index lemmas #0..#3). */
static void test_result_var(void) {
  world w;
  world_init(&w);
  g_autoptr(GError) err = NULL;
  /* the library's laws (slice-cat.lemma) */
  g_autofree char *path = g_build_filename(SC_LEMMA_SOURCE_DIR, "slice-cat.lemma", NULL);
  g_assert_true(sc_lemma_set_load_file(w.set, path, &err));
  g_assert_no_error(err);
  /* a condition on ?k, and ?k as a result index on the right: the
   * results of one split are the results of the same split of the same
   * tensor written with the dim counted from the end */
  g_assert_true(sc_lemma_set_load_string(
      w.set, "r.lemma",
      "lemma r: split#?k(?x, ?n, ?d) => split#?k(?x, ?n, ?d - rank(?x))\n"
      "  where 0 <= ?d and ?k >= 1\n",
      &err));
  g_assert_no_error(err);
  sc_ttype t = {sc_shape_of(2, (int64_t[]){4, 22}), SC_DTYPE_F32};
  sc_id x;
  g_assert_true(sc_graph_add_input(w.g, "x", &t, &x, &err));
  sc_id xc = world_add(&w, "x");
  sc_id s0 = world_add_result(&w, "split.Tensor", xc, (int64_t[]){4, 1}, 2, 0);
  sc_id s4 = world_add_result(&w, "split.Tensor", xc, (int64_t[]){4, 1}, 2, 4);
  sc_id s5 = world_add_result(&w, "split.Tensor", xc, (int64_t[]){4, -1}, 2, 5);
  sc_id c2 = world_add_result(&w, "chunk", xc, (int64_t[]){3, 1}, 2, 2);
  sc_id u3 = world_add_result(&w, "unbind.int", xc, (int64_t[]){0}, 1, 3);
  world_run(&w);
  g_assert_true(world_same(&w, s0, "slice(x, dim=1, start=0, end=4)"));
  g_assert_true(world_same(&w, s4, "slice(x, dim=1, start=16, end=20)"));
  g_assert_true(world_same(&w, s5, "slice(x, dim=1, start=20, end=22)"));
  g_assert_false(world_same(&w, s4, "slice(x, dim=1, start=12, end=16)"));
  g_assert_true(world_same(&w, c2, "slice(x, dim=1, start=16, end=22)"));
  g_assert_true(world_same(&w, u3, "view(slice(x, dim=0, start=3, end=4), [22])"));
  g_assert_false(world_same(&w, u3, "view(slice(x, dim=0, start=2, end=3), [22])"));
  /* r fired for k = 4 (the same class: split with dim -1), not for k = 0 */
  sc_id s4n = world_add_result(&w, "split.Tensor", xc, (int64_t[]){4, -1}, 2, 4);
  sc_egraph_rebuild(sc_lang_egraph(w.lang));
  g_assert_cmpuint(sc_egraph_find(sc_lang_egraph(w.lang), s4n), ==,
                   sc_egraph_find(sc_lang_egraph(w.lang), s4));
  g_assert_cmpuint(applications(&w, "r"), >=, 1);
  g_assert_cmpuint(applications(&w, "split_k"), >=, 3);
  /* the text of the lemma keeps the variable */
  int32_t k = sc_lemma_set_find(w.set, "r");
  g_assert_cmpint(k, >=, 0);
  g_assert_nonnull(strstr(sc_lemma_set_lemma(w.set, (uint32_t)k)->text, "split#?k("));
  world_clear(&w);
}

/* reduced / reduced_before in conditions: which dims a dims list
 * reduces at a rank (None and [] reduce all), negative entries wrapped. */
static void test_reduced_fn(void) {
  static const struct {
    const char *cond;
    gboolean holds;
  } cases[] = {
      {"reduced([1], 1, 3) == 1", TRUE},
      {"reduced([-1], 2, 3) == 1", TRUE},
      {"reduced([-1], 1, 3) == 0", TRUE},
      {"reduced([], 0, 2) == 1", TRUE},
      {"reduced([0, 2], 1, 3) == 0", TRUE},
      {"reduced_before([0, -1], 1, 3) == 1", TRUE},
      {"reduced_before([0, 1, -1], 3, 4) == 2", TRUE},
      {"reduced_before([], 2, 3) == 2", TRUE},
      {"reduced([3], 0, 3) == 0", FALSE}, /* out of range: cannot be evaluated */
      {"reduced([0], 3, 3) == 0", FALSE},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text =
        g_strdup_printf("lemma r%zu: neg(?x) => relu(?x) where %s\n", i, cases[i].cond);
    world w;
    world_init(&w);
    g_autoptr(GError) err = NULL;
    g_assert_true(sc_lemma_set_load_string(w.set, "r.lemma", text, &err));
    g_assert_no_error(err);
    sc_ttype t = {sc_shape_of(1, (int64_t[]){4}), SC_DTYPE_F32};
    sc_id id;
    g_assert_true(sc_graph_add_input(w.g, "x", &t, &id, &err));
    world_add(&w, "neg(x)");
    world_run(&w);
    g_autofree char *name = g_strdup_printf("r%zu", i);
    if (applications(&w, name) != (cases[i].holds ? 1u : 0u))
      g_error("case %s: expected %s", cases[i].cond, cases[i].holds ? "to fire" : "no firing");
    world_clear(&w);
  }
}

/* permshape / unitperm / unitdrop / unitdropperm (layout-batched.lemma), ones:
 * values, and "cannot be evaluated" (no firing) where the contract says so. */
static void test_unitperm_fns(void) {
  static const struct {
    const char *cond;
    gboolean holds;
  } cases[] = {
      {"permshape([2, 1, 3], [2, 0, 1]) == [3, 2, 1]", TRUE},
      {"permshape([2, 1, 3], [-1, 0, 1]) == [3, 2, 1]", TRUE},
      {"unitperm([2, 1, 3], [1, 0, 2]) == [1, 2, 3]", TRUE},  /* only the unit dim moves */
      {"unitperm([2, 1, 3, 1], [0, 3, 2, 1]) == [2, 1, 3, 1]", TRUE},
      {"unitperm([2, 1, 3], [2, 1, 0]) == [3, 1, 2]", FALSE}, /* 2 and 3 swap: no view */
      {"unitdrop([2, 1, 3, 1]) == [2, 3]", TRUE},
      {"unitdrop([2, 3]) == [2, 3]", FALSE},                  /* no unit dim */
      {"unitdropperm([2, 1, 3], [2, 1, 0]) == [1, 0]", TRUE},
      {"unitdropperm([2, 1, 1, 4, 4], [0, 2, 4, 3, 1]) == [0, 2, 1]", TRUE},
      {"unitdropperm([2, 3], [1, 0]) == [1, 0]", FALSE},      /* no unit dim */
      {"permshape([2, 1, 3], [0, 0, 1]) == [2, 2, 1]", FALSE}, /* not a permutation */
      {"permshape([2, 1, 3], [0, 1]) == [2, 1]", FALSE},       /* wrong length */
      /* ones(N): N dims of size 1 (index-add-backward.lemma's mask view) */
      {"with_size(ones(3), 1, 5) == [1, 5, 1]", TRUE},
      {"ones(rank(?x)) == [1]", TRUE},
      {"ones(0) == []", TRUE},
      {"len(ones(2)) == 3", FALSE},
      {"ones(-1) == []", FALSE},                              /* cannot be evaluated */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text =
        g_strdup_printf("lemma u%zu: neg(?x) => relu(?x) where %s\n", i, cases[i].cond);
    world w;
    world_init(&w);
    g_autoptr(GError) err = NULL;
    g_assert_true(sc_lemma_set_load_string(w.set, "u.lemma", text, &err));
    g_assert_no_error(err);
    sc_ttype t = {sc_shape_of(1, (int64_t[]){4}), SC_DTYPE_F32};
    sc_id id;
    g_assert_true(sc_graph_add_input(w.g, "x", &t, &id, &err));
    world_add(&w, "neg(x)");
    world_run(&w);
    g_autofree char *name = g_strdup_printf("u%zu", i);
    if (applications(&w, name) != (cases[i].holds ? 1u : 0u))
      g_error("case %s: expected %s", cases[i].cond, cases[i].holds ? "to fire" : "no firing");
    world_clear(&w);
  }
}

/* A failed load changes nothing; errors of several statements are all reported. */
static void test_errors_atomic(void) {
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_lemma_set) s = sc_lemma_set_new();
  g_assert_false(sc_lemma_set_load_string(
      s, "x.lemma", "lemma ok: neg(neg(?x)) => ?x\nlemma b: mn(?x) => ?x\nlemma c: neg(?x) => ?y\n",
      &err));
  g_assert_cmpuint(sc_lemma_set_n_lemmas(s), ==, 0);
  g_auto(GStrv) lines = g_strsplit(err->message, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), ==, 2);
  g_assert_true(g_str_has_prefix(lines[0], "x.lemma:2:10: error: unknown operator 'mn'"));
  g_assert_true(g_str_has_prefix(lines[1], "x.lemma:3:21: error: ?y on the right"));
  g_clear_error(&err);
  g_assert_true(sc_lemma_set_load_string(s, "y.lemma", "lemma ok: neg(neg(?x)) => ?x\n", &err));
  g_assert_no_error(err);
  g_assert_cmpuint(sc_lemma_set_n_lemmas(s), ==, 1);
  /* a name already in the set */
  g_assert_false(sc_lemma_set_load_string(s, "z.lemma", "\nlemma ok: relu(?x) => ?x\n", &err));
  g_assert_cmpstr(err->message, ==, "z.lemma:2:7: error: lemma ok is defined twice");
  g_clear_error(&err);
  g_assert_false(sc_lemma_set_load_file(s, "/nonexistent/x.lemma", &err));
  g_assert_error(err, SC_LEMMA_ERROR, SC_LEMMA_ERROR_IO);
  g_clear_error(&err);
  /* deep nesting of every recursive form is refused, not a stack overflow */
  static const char *const deep[] = {"-", "not ", "neg(", "[", "("};
  for (size_t i = 0; i < G_N_ELEMENTS(deep); i++) {
    GString *t = g_string_new("lemma d: neg(?x) => ?x where ");
    for (int k = 0; k < 100000; k++)
      g_string_append(t, deep[i]);
    g_assert_false(sc_lemma_set_load_string(s, "deep.lemma", t->str, &err));
    g_assert_error(err, SC_LEMMA_ERROR, SC_LEMMA_ERROR_SYNTAX);
    g_assert_nonnull(strstr(err->message, "nesting too deep"));
    g_clear_error(&err);
    g_string_free(t, TRUE);
  }
}

/* ------------------------------------------------------------------------ */
/* Directories: a file that uses an operator declared in another file loads
 * after it, whatever the names; a cycle is reported as an unknown operator. */

static void write_file(const char *dir, const char *name, const char *text) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_autoptr(GError) err = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &err));
}

static void remove_dir(const char *dir) {
  GDir *dh = g_dir_open(dir, 0, NULL);
  const char *name;
  while (dh && (name = g_dir_read_name(dh)) != NULL) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_remove(path);
  }
  if (dh)
    g_dir_close(dh);
  g_rmdir(dir);
}

static void test_dir_declaration_order(void) {
  g_autoptr(GError) err = NULL;
  g_autofree char *dir = g_dir_make_tmp("sc-lemma-XXXXXX", &err);
  g_assert_no_error(err);
  /* "a" sorts first but uses ordtest.twice, which "b" declares; the
   * comment's mention of ordtest.thrice( is not a use */
  write_file(dir, "a-uses.lemma",
             "# ordtest.thrice(x) is declared nowhere\n"
             "lemma ordtest_twice_neg: ordtest.twice(neg(?x)) => neg(ordtest.twice(?x))\n");
  write_file(dir, "b-declares.lemma",
             "op ordtest.twice(Tensor x) -> Tensor: shape(x) = add.Tensor(x, x)\n");
  /* an overload's use names its NS.NAME too */
  write_file(dir, "0-uses-overload.lemma",
             "lemma ordtest_ov_neg: ordov.f.default(neg(?x)) => neg(ordov.f.default(?x))\n");
  write_file(dir, "z-declares-overload.lemma",
             "op ordov.f.default(Tensor x) -> Tensor: shape(x) = neg(neg(x))\n");
  g_autoptr(sc_lemma_set) s = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_dir(s, dir, &err));
  g_assert_no_error(err);
  g_assert_cmpint(sc_lemma_set_find(s, "ordtest_twice_neg"), >, sc_lemma_set_find(s, "ordtest_twice_unfold"));
  g_assert_true(g_str_has_suffix(sc_lemma_set_lemma(s, 0)->file, "b-declares.lemma"));
  g_assert_cmpint(sc_lemma_set_find(s, "ordov_f_unfold"), >=, 0);
  g_assert_cmpint(sc_lemma_set_find(s, "ordtest_ov_neg"), >, sc_lemma_set_find(s, "ordov_f_unfold"));
  remove_dir(dir);

  /* two files that need each other: name order, and the first one's use
   * of the other's operator is an unknown operator */
  g_autofree char *dir2 = g_dir_make_tmp("sc-lemma-XXXXXX", &err);
  g_assert_no_error(err);
  write_file(dir2, "c1.lemma",
             "op ordcyc.one(Tensor x) -> Tensor: shape(x)\n"
             "lemma ordcyc_one_two: ordcyc.one(?x) => ordcyc.two(?x)\n");
  write_file(dir2, "c2.lemma",
             "op ordcyc.two(Tensor x) -> Tensor: shape(x)\n"
             "lemma ordcyc_two_one: ordcyc.two(?x) => ordcyc.one(?x)\n");
  g_autoptr(sc_lemma_set) s2 = sc_lemma_set_new();
  g_assert_false(sc_lemma_set_load_dir(s2, dir2, &err));
  g_assert_nonnull(err);
  g_assert_nonnull(strstr(err->message, "c1.lemma"));
  g_assert_nonnull(strstr(err->message, "ordcyc.two"));
  remove_dir(dir2);
}

/* ------------------------------------------------------------------------ */
/* The library                                                               */

static void test_library(void) {
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_lemma_set) s = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_dir(s, SC_LEMMA_SOURCE_DIR, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(sc_lemma_set_n_lemmas(s), >=, 40);
  static const char *const names[] = {
      "slice_cat_left", "slice_cat_right", "slice_cat_span", "cat_adjacent_slices",
      "slice_split",    "mm_cat_rows",     "mm_cat_cols",    "mm_cat_contract",
      "bmm_cat_batch",  "addmm_to_add",    "ew1_cat[gelu]",  "ew2_cat[add.Tensor]",
      "linear2_second_sum[mul.Tensor]", "sum_comm",        "sum_assoc_right", "sum_transpose",
      "sum_view",       "transpose_cat_other", "permute_cat"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    if (sc_lemma_set_find(s, names[i]) < 0)
      g_error("lemma %s missing", names[i]);
  const sc_lemma_info *sp = sc_lemma_set_lemma(s, (uint32_t)sc_lemma_set_find(s, "slice_split"));
  g_assert_cmpuint(sp->n_requires, ==, 1);
  g_assert_true(g_str_has_suffix(sp->file, "slice-cat.lemma"));
  /* compile against a lang: one rewrite per direction */
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_autoptr(sc_graph) g = sc_graph_new(st);
  g_autoptr(sc_lang) lang = sc_lang_new(st, g);
  g_autoptr(sc_lemma_rules) r = sc_lemma_compile(s, lang, &err);
  g_assert_no_error(err);
  uint32_t n_rules, both = 0;
  sc_rewrite *const *rw = sc_lemma_rules_array(r, &n_rules);
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(s); i++)
    both += sc_lemma_set_lemma(s, i)->direction == SC_LEMMA_BOTH;
  g_assert_cmpuint(n_rules, ==, sc_lemma_set_n_lemmas(s) + both);
  g_assert_cmpuint(sc_lemma_rules_lemma_of(r, n_rules - 1), ==, sc_lemma_set_n_lemmas(s) - 1);
  g_assert_nonnull(rw[0]);
  g_assert_true(g_file_test(sc_lemma_builtin_dir(), G_FILE_TEST_IS_DIR));
}

/* ------------------------------------------------------------------------ */
/* Constrained lemmas, undecided conditions                                  */

static void test_constrained(void) {
  world w;
  world_init(&w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_lemma_set_load_string(
      w.set, "c.lemma",
      "lemma split: slice(?x, dim=?d, start=?s, end=?e)\n"
      "    => cat(slice(?x, dim=?d, start=?s, end=?m), slice(?x, dim=?d, start=?m, end=?e), dim=?d)\n"
      "  where 0 <= ?s and ?s < ?m and ?m < ?e\n"
      "  requires slice(?x, dim=?d, start=?s, end=?m)\n",
      &err));
  g_assert_no_error(err);
  sc_ttype t = {sc_shape_of(1, (int64_t[]){8}), SC_DTYPE_F32};
  sc_id id;
  g_assert_true(sc_graph_add_input(w.g, "x", &t, &id, &err));
  world_add(&w, "slice(x, dim=0, start=0, end=6)");
  world_run(&w);
  g_assert_cmpuint(applications(&w, "split"), ==, 0);
  g_assert_false(world_equal(&w, "slice(x, dim=0, start=0, end=6)",
                             "cat(slice(x, dim=0, start=0, end=2), slice(x, dim=0, start=2, end=6))"));
  /* now the required node exists (added by world_equal): it fires */
  world_run(&w);
  g_assert_cmpuint(applications(&w, "split"), >=, 1);
  g_assert_true(world_equal(&w, "slice(x, dim=0, start=0, end=6)",
                            "cat(slice(x, dim=0, start=0, end=2), slice(x, dim=0, start=2, end=6))"));
  world_clear(&w);
}

static void test_undecided(void) {
  world w;
  world_init(&w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_symtab_declare(w.st, "S", TRUE, 1, FALSE, 0, &err));
  g_assert_true(sc_lemma_set_load_file(w.set, SC_LEMMA_SOURCE_DIR "/slice-cat.lemma", &err));
  sc_ttype t;
  t.dtype = SC_DTYPE_F32;
  t.shape.rank = 1;
  g_assert_true(sc_dim_parse(w.st, "S", &t.shape.dims[0], &err));
  sc_id id;
  g_assert_true(sc_graph_add_input(w.g, "a", &t, &id, &err));
  g_assert_true(sc_graph_add_input(w.g, "b", &t, &id, &err));
  /* is 3 <= S?  unknown (S >= 1): slice_cat_left must not fire */
  world_add(&w, "slice(cat(a, b), dim=0, start=0, end=3)");
  world_run(&w);
  g_assert_false(world_equal(&w, "slice(cat(a, b), dim=0, start=0, end=3)",
                             "slice(a, dim=0, start=0, end=3)"));
  sc_lemma_counters c;
  sc_lemma_rules_counters(w.rules, (uint32_t)sc_lemma_set_find(w.set, "slice_cat_left"), &c);
  g_assert_cmpuint(c.applications, ==, 0);
  g_assert_cmpuint(c.undecided, >=, 1);
  g_assert_cmpuint(c.matches, >=, 1);
  world_clear(&w);
}

/* The guard's memo (condmemo.h): a rule met again with the same concrete
 * values in a fresh e-graph (the rules rebound, as the driver does per
 * visit) answers as the condition does: YES where it holds, NO where it
 * does not, and a symbolic size is evaluated every time. */
static void test_condition_memo(void) {
  world w;
  world_init(&w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_symtab_declare(w.st, "S", TRUE, 1, FALSE, 0, &err));
  gboolean loaded = sc_lemma_set_load_string(
      w.set, "m.lemma",
      "lemma narrow: slice(?x, dim=?d, start=?s, end=?e)\n"
      "    => slice(slice(?x, dim=?d, start=?s - 1, end=?e), dim=?d, start=1, end=?e - ?s + 1)\n"
      "  where 0 <= ?d and 0 < ?s and ?s < ?e and ?e < size(?x, ?d)\n",
      &err);
  if (err != NULL)
    g_printerr("%s\n", err->message);
  g_assert_no_error(err);
  g_assert_true(loaded);
  sc_ttype t8 = {sc_shape_of(1, (int64_t[]){8}), SC_DTYPE_F32};
  sc_ttype ts;
  ts.dtype = SC_DTYPE_F32;
  ts.shape.rank = 1;
  g_assert_true(sc_dim_parse(w.st, "S", &ts.shape.dims[0], &err));
  sc_id id;
  g_assert_true(sc_graph_add_input(w.g, "x", &t8, &id, &err));
  g_assert_true(sc_graph_add_input(w.g, "y", &t8, &id, &err));
  g_assert_true(sc_graph_add_input(w.g, "z", &ts, &id, &err));
  const char *yes = "slice(slice(x, dim=0, start=1, end=6), dim=0, start=1, end=5)";
  for (int round = 0; round < 2; round++) {
    /* the same matches in a second e-graph: answered by the memo */
    if (round == 1) {
      sc_lang_free(w.lang);
      w.lang = NULL;
      sc_lemma_rules_rebind(w.rules, world_lang(&w));
    }
    world_add(&w, "slice(x, dim=0, start=2, end=6)"); /* holds */
    world_add(&w, "slice(y, dim=0, start=2, end=6)"); /* the same key: holds */
    world_add(&w, "slice(x, dim=0, start=2, end=8)"); /* 8 < 8: does not */
    world_add(&w, "slice(z, dim=0, start=2, end=3)"); /* 3 < S: unknown */
    world_run(&w);
    g_assert_true(world_equal(&w, "slice(x, dim=0, start=2, end=6)", yes));
    g_assert_true(world_equal(&w, "slice(y, dim=0, start=2, end=6)",
                              "slice(slice(y, dim=0, start=1, end=6), dim=0, start=1, end=5)"));
    g_assert_false(world_equal(&w, "slice(x, dim=0, start=2, end=8)",
                               "slice(slice(x, dim=0, start=1, end=8), dim=0, start=1, end=7)"));
    g_assert_false(world_equal(&w, "slice(z, dim=0, start=2, end=3)",
                               "slice(slice(z, dim=0, start=1, end=3), dim=0, start=1, end=2)"));
    sc_lemma_counters c;
    sc_lemma_rules_counters(w.rules, (uint32_t)sc_lemma_set_find(w.set, "narrow"), &c);
    /* UNKNOWN is never recorded: counted as undecided in both e-graphs */
    g_assert_cmpuint(c.undecided, >=, 1);
  }
  world_clear(&w);
}

/* Rules that share compiled rewrites (sc_lemma_rules_share, `check
 * --jobs N`): the copy, bound on another thread to its own e-graph, proves
 * there what the original proves in its own, with counters of its own,
 * both running at the same time; the original's counters are untouched
 * by the copy's run.  A rule run on an e-graph its rules are not bound to
 * aborts (trapped in a subprocess). */
typedef struct {
  world *w;
  sc_lemma_rules *rules;
  sc_lang *lang;
  gboolean equal;
} shared_run;

static const char *const shared_lemma =
    "lemma narrow: slice(?x, dim=?d, start=?s, end=?e)\n"
    "    => slice(slice(?x, dim=?d, start=?s - 1, end=?e), dim=?d, start=1, end=?e - ?s + 1)\n"
    "  where 0 <= ?d and 0 < ?s and ?s < ?e and ?e < size(?x, ?d)\n";

static gboolean shared_equal(shared_run *r, const char *a, const char *b) {
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_texpr) ta = sc_texpr_parse(a, r->w->g, FALSE, &err);
  g_autoptr(sc_texpr) tb = sc_texpr_parse(b, r->w->g, FALSE, &err);
  g_assert_no_error(err);
  sc_id x = sc_lang_add_texpr(r->lang, ta, &err), y = sc_lang_add_texpr(r->lang, tb, &err);
  g_assert_no_error(err);
  sc_egraph *eg = sc_lang_egraph(r->lang);
  sc_egraph_rebuild(eg);
  return sc_egraph_find(eg, x) == sc_egraph_find(eg, y);
}

static gpointer shared_prove(gpointer data) {
  shared_run *r = data;
  g_autoptr(GError) err = NULL;
  sc_lemma_rules_rebind(r->rules, r->lang); /* on the thread that runs them */
  g_autoptr(sc_texpr) t = sc_texpr_parse("slice(x, dim=0, start=2, end=6)", r->w->g, FALSE, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(sc_lang_add_texpr(r->lang, t, &err), !=, SC_ID_NONE);
  sc_egraph *eg = sc_lang_egraph(r->lang);
  sc_egraph_rebuild(eg);
  sc_runner_limits lim;
  sc_runner_limits_init(&lim);
  lim.iter_limit = 10;
  g_autoptr(sc_runner) run = sc_runner_new(eg, &lim);
  uint32_t n;
  sc_rewrite *const *rw = sc_lemma_rules_array(r->rules, &n);
  (void)sc_runner_run(run, rw, n);
  r->equal = shared_equal(r, "slice(x, dim=0, start=2, end=6)",
                          "slice(slice(x, dim=0, start=1, end=6), dim=0, start=1, end=5)");
  sc_lemma_rules_unbind();
  return NULL;
}

static void shared_world(world *w) {
  world_init(w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_lemma_set_load_string(w->set, "m.lemma", shared_lemma, &err));
  g_assert_no_error(err);
  sc_ttype t8 = {sc_shape_of(1, (int64_t[]){8}), SC_DTYPE_F32};
  sc_id id;
  g_assert_true(sc_graph_add_input(w->g, "x", &t8, &id, &err));
  w->rules = sc_lemma_compile(w->set, world_lang(w), &err);
  g_assert_no_error(err);
}

static void test_shared_rules(void) {
  world w;
  shared_world(&w);
  uint32_t narrow = (uint32_t)sc_lemma_set_find(w.set, "narrow");
  sc_lemma_rules *copy = sc_lemma_rules_share(w.rules);
  uint32_t n_a, n_b;
  g_assert_true(sc_lemma_rules_array(copy, &n_b) == sc_lemma_rules_array(w.rules, &n_a));
  g_assert_cmpuint(n_a, ==, n_b);
  shared_run a = {&w, w.rules, world_lang(&w), FALSE};
  shared_run b = {&w, copy, sc_lang_new(w.st, w.g), FALSE};
  GThread *th = g_thread_new("shared", shared_prove, &b);
  shared_prove(&a);
  g_thread_join(th);
  g_assert_true(a.equal);
  g_assert_true(b.equal);
  sc_lemma_counters ca, cb;
  sc_lemma_rules_counters(w.rules, narrow, &ca);
  sc_lemma_rules_counters(copy, narrow, &cb);
  /* each counted its own run's applications only (the same ones) */
  g_assert_cmpuint(ca.applications, >=, 1);
  g_assert_cmpuint(cb.applications, ==, ca.applications);
  uint64_t before = ca.applications;
  /* the copy runs again alone; the original's counters stay */
  sc_lang_free(b.lang);
  b.lang = sc_lang_new(w.st, w.g);
  shared_prove(&b);
  g_assert_true(b.equal);
  sc_lemma_rules_counters(w.rules, narrow, &ca);
  g_assert_cmpuint(ca.applications, ==, before);
  /* the original freed first: the copy still runs its rewrites */
  sc_lemma_rules_free(w.rules);
  w.rules = NULL;
  sc_lang_free(b.lang);
  b.lang = sc_lang_new(w.st, w.g);
  shared_prove(&b);
  g_assert_true(b.equal);
  sc_lemma_rules_free(copy);
  sc_lang_free(b.lang);
  world_clear(&w);
}

static void test_shared_rules_misuse(void) {
  if (g_test_subprocess()) {
    world w;
    shared_world(&w);
    sc_lemma_rules *copy = sc_lemma_rules_share(w.rules);
    sc_lang *other = sc_lang_new(w.st, w.g);
    sc_lemma_rules_rebind(copy, other); /* this thread now runs the copy */
    world_add(&w, "slice(x, dim=0, start=2, end=6)");
    world_run(&w); /* the original's rewrites on the original's e-graph */
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed();
  g_test_trap_assert_stderr("*e-graph its rules are not bound to*");
}

/* ------------------------------------------------------------------------ */
/* Operator declarations                                                     */

static const char *const decls =
    "# a fused RMSNorm: x * rsqrt(mean(x^2, -1) + eps) * w\n"
    "op testlib.rms_norm(Tensor x, Tensor w, float eps=1e-06) -> Tensor: shape(x)\n"
    "  where rank(w) == 1 and size(w, 0) == size(x, -1) and dtype(w) == dtype(x)\n"
    "  = mul.Tensor(mul.Tensor(x, rsqrt(add.Scalar(mean.dim(pow.Tensor_Scalar(x, 2), [-1], "
    "True), eps))), w)\n"
    "# vLLM's silu_and_mul: silu(x[..., :d]) * x[..., d:], d = size(x, -1) / 2\n"
    "op testlib.gated_silu(Tensor x) -> Tensor: with_size(shape(x), -1, size(x, -1) / 2)\n"
    "  where 2 divides size(x, -1) and rank(x) == 2\n"
    "  = mul.Tensor(silu(slice(x, dim=1, start=0, end=size(x, 1) / 2)),\n"
    "               slice(x, dim=1, start=size(x, 1) / 2, end=size(x, 1)))\n"
    "op testlib.two(Tensor x) -> (Tensor: shape(x), Tensor: [size(x, 0)] as i64)\n";

static void test_decl_shape(void) {
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_lemma_set) s = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_string(s, "decl.lemma", decls, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(sc_lemma_set_n_ops(s), ==, 3);
  const sc_op *op = sc_ops_lookup("testlib.gated_silu", &err);
  g_assert_no_error(err);
  g_assert_true(op == sc_lemma_set_op(s, 1));
  g_assert_true(op == sc_ops_lookup_func("gated_silu", &err));
  g_assert_cmpint(sc_lemma_set_find(s, "testlib_gated_silu_unfold"), >=, 0);
  g_assert_true(sc_lemma_set_lemma(s, (uint32_t)sc_lemma_set_find(s, "testlib_rms_norm_unfold"))->unfolds ==
                sc_lemma_set_op(s, 0));
  /* the shape rule through the registry */
  g_autoptr(sc_symtab) st = sc_symtab_new();
  sc_ttype x = {sc_shape_of(2, (int64_t[]){3, 8}), SC_DTYPE_F16};
  /* well-formed through a lang (its add_call runs the rule) */
  g_autoptr(sc_graph) g = sc_graph_new(st);
  sc_id xid;
  g_assert_true(sc_graph_add_input(g, "x", &x, &xid, &err));
  g_autoptr(sc_lang) lang = sc_lang_new(st, g);
  sc_id cx = sc_lang_add_tensor(lang, xid);
  sc_value a1[1] = {sc_value_tensor(0)};
  sc_id c = sc_lang_add_call(lang, op, a1, &cx, 1, 0, &err);
  g_assert_no_error(err);
  const sc_ttype *ty = sc_lang_class_type(lang, c);
  g_assert_cmpuint(ty->shape.rank, ==, 2);
  g_assert_cmpint(ty->shape.dims[0].value, ==, 3);
  g_assert_cmpint(ty->shape.dims[1].value, ==, 4);
  g_assert_cmpint(ty->dtype, ==, SC_DTYPE_F16);
  /* an odd last dim violates the declared condition */
  sc_ttype odd = {sc_shape_of(2, (int64_t[]){3, 7}), SC_DTYPE_F32};
  sc_id oid;
  g_assert_true(sc_graph_add_input(g, "o", &odd, &oid, &err));
  sc_id co = sc_lang_add_tensor(lang, oid);
  g_assert_cmpuint(sc_lang_add_call(lang, op, a1, &co, 1, 0, &err), ==, SC_ID_NONE);
  g_assert_nonnull(err);
  g_assert_nonnull(strstr(err->message, "the declared condition does not hold"));
  g_clear_error(&err);
  /* two results, the second with its own dtype */
  const sc_op *two = sc_lemma_set_op(s, 2);
  g_assert_cmpuint(two->n_results, ==, 2);
  sc_id c1 = sc_lang_add_call(lang, two, a1, &cx, 1, 1, &err);
  g_assert_no_error(err);
  g_assert_cmpint(sc_lang_class_type(lang, c1)->dtype, ==, SC_DTYPE_I64);
  g_assert_cmpuint(sc_lang_class_type(lang, c1)->shape.rank, ==, 1);
  /* loading the same declarations again is the same operator; a different
   * definition under the same name is refused */
  g_autoptr(sc_lemma_set) s2 = sc_lemma_set_new();
  g_assert_true(sc_lemma_set_load_string(s2, "decl2.lemma", decls, &err));
  g_assert_no_error(err);
  g_assert_true(sc_lemma_set_op(s2, 1) == op);
  g_autoptr(sc_lemma_set) s3 = sc_lemma_set_new();
  g_assert_false(sc_lemma_set_load_string(
      s3, "decl3.lemma", "op testlib.gated_silu(Tensor x) -> Tensor: shape(x)\n", &err));
  g_assert_error(err, SC_LEMMA_ERROR, SC_LEMMA_ERROR_DUPLICATE);
  g_assert_nonnull(strstr(err->message, "already registered with a different definition"));
}

static void test_decl_unfold(void) {
  world w;
  world_init(&w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_lemma_set_load_string(w.set, "decl.lemma", decls, &err));
  g_assert_no_error(err);
  g_assert_true(sc_lemma_set_load_file(w.set, SC_LEMMA_SOURCE_DIR "/elementwise.lemma", &err));
  g_assert_true(sc_lemma_set_load_file(w.set, SC_LEMMA_SOURCE_DIR "/slice-cat.lemma", &err));
  g_assert_no_error(err);
  sc_ttype t = {sc_shape_of(2, (int64_t[]){4, 16}), SC_DTYPE_F32};
  sc_ttype wt = {sc_shape_of(1, (int64_t[]){16}), SC_DTYPE_F32};
  sc_id id;
  g_assert_true(sc_graph_add_input(w.g, "x", &t, &id, &err));
  g_assert_true(sc_graph_add_input(w.g, "w", &wt, &id, &err));
  world_add(&w, "gated_silu(x)");
  world_add(&w, "testlib.rms_norm(x, w)");
  world_run(&w);
  g_assert_cmpuint(applications(&w, "testlib_gated_silu_unfold"), ==, 1);
  g_assert_true(world_equal(&w, "gated_silu(x)",
                            "mul.Tensor(silu(slice(x, dim=1, start=0, end=8)), "
                            "slice(x, dim=1, start=8, end=16))"));
  g_assert_true(world_equal(
      &w, "testlib.rms_norm(x, w, eps=1e-06)",
      "mul.Tensor(mul.Tensor(x, rsqrt(add.Scalar(mean.dim(pow.Tensor_Scalar(x, 2), [-1], True), "
      "1e-06))), w)"));
  g_assert_false(world_equal(&w, "testlib.rms_norm(x, w, eps=1e-05)", "testlib.rms_norm(x, w)"));
  world_clear(&w);
}

/* ------------------------------------------------------------------------ */
/* Value ranges in conditions (vmin / vmax), shape atoms, Tensor?[] patterns */

static const char *const range_lemmas =
    "lemma nonneg_abs: abs(?x) => ?x where 0 <= vmin(?x)\n"
    "lemma small_neg: neg(?x) => neg(neg(neg(?x))) where not (vmax(?x) >= 10)\n";

/* A world with i64 leaves p, q, r, s ([4]) and the two lemmas above. */
static void range_world(world *w) {
  world_init(w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_lemma_set_load_string(w->set, "r.lemma", range_lemmas, &err));
  g_assert_no_error(err);
  sc_ttype t = {sc_shape_of(1, (int64_t[]){4}), SC_DTYPE_I64};
  const char *names[] = {"p", "q", "r", "s"};
  for (int i = 0; i < 4; i++) {
    sc_id id;
    g_assert_true(sc_graph_add_input(w->g, names[i], &t, &id, &err));
  }
}

static void add_fact(world *w, const char *name, int64_t lo, uint32_t lo_src, int64_t hi,
                     uint32_t hi_src) {
  sc_vrange r;
  sc_vrange_init(&r);
  r.lo = sc_dim_const(lo);
  r.lo_src = lo_src;
  r.hi = sc_dim_const(hi);
  r.hi_src = hi_src;
  sc_lang *lang = world_lang(w);
  sc_lang_add_range(lang, sc_lang_add_tensor(lang, sc_graph_find_tensor(w->g, name)), &r);
}

/* A lemma whose condition reads a value range fires with the fact, not
 * without it (UNKNOWN, and Kleene's not keeps it UNKNOWN); a missing fact
 * is not counted as an undecided comparison; the assumption ids the
 * condition read are recorded for the lemma. */
static void test_range_conditions(void) {
  world w;
  range_world(&w);
  add_fact(&w, "p", 0, SC_VRANGE_FACT, 9, SC_VRANGE_FACT); /* declared [0, 9] */
  add_fact(&w, "q", 0, 4, 9, SC_VRANGE_NONE);              /* assumed >= 0 (assumption 4) */
  add_fact(&w, "r", -1, SC_VRANGE_FACT, 20, SC_VRANGE_FACT);
  /* s: no fact */
  world_add(&w, "abs(p)");
  world_add(&w, "abs(q)");
  world_add(&w, "abs(r)");
  world_add(&w, "abs(s)");
  world_add(&w, "neg(p)");
  world_add(&w, "neg(s)");
  world_run(&w);
  g_assert_true(world_equal(&w, "abs(p)", "p"));
  g_assert_true(world_equal(&w, "abs(q)", "q"));
  g_assert_false(world_equal(&w, "abs(r)", "r"));
  g_assert_false(world_equal(&w, "abs(s)", "s"));
  g_assert_cmpuint(applications(&w, "nonneg_abs"), ==, 2);
  g_assert_cmpuint(applications(&w, "small_neg"), ==, 1); /* neg(p), not neg(s) */
  sc_lemma_counters c;
  sc_lemma_rules_counters(w.rules, (uint32_t)sc_lemma_set_find(w.set, "nonneg_abs"), &c);
  g_assert_cmpuint(c.undecided, ==, 0); /* abs(s): no fact, not a decision */
  uint32_t n = 0;
  const uint32_t *ids =
      sc_lemma_rules_assumptions(w.rules, (uint32_t)sc_lemma_set_find(w.set, "nonneg_abs"), &n);
  g_assert_cmpuint(n, ==, 1);
  g_assert_cmpuint(ids[0], ==, 4);
  g_assert_null(
      sc_lemma_rules_assumptions(w.rules, (uint32_t)sc_lemma_set_find(w.set, "small_neg"), &n));
  g_assert_cmpuint(n, ==, 0);
  world_clear(&w);
}

/* vmin/vmax read through sc_lemma_condition_ranges; without ranges they
 * are UNKNOWN; append/remove in conditions; a float fill compares as a
 * number. */
static void test_range_instances(void) {
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_lemma_set) s = load_text(
      "lemma inr: embedding(?w, ?i) => embedding(?w, ?i)\n"
      "  where 0 <= vmin(?i) and vmax(?i) < size(?w, 0)"
      " and append(shape(?i), size(?w, 1)) == [2, 3, 5] and remove(shape(?w), 0) == [5]\n"
      "lemma zero: masked_fill.Scalar(?x, ?m, ?v) => ?x where ?v == 0\n",
      &err);
  g_assert_no_error(err);
  g_autoptr(sc_symtab) st = sc_symtab_new();
  sc_ttype types[2] = {{sc_shape_of(2, (int64_t[]){7, 5}), SC_DTYPE_F32},
                       {sc_shape_of(2, (int64_t[]){2, 3}), SC_DTYPE_I64}};
  sc_value values[2] = {sc_value_none(), sc_value_none()};
  sc_lemma_instance inst = {st, types, values};
  g_assert_cmpint(sc_lemma_condition(s, 0, &inst), ==, SC_UNKNOWN);
  sc_vrange ranges[2];
  sc_vrange_init(&ranges[0]);
  sc_vrange_init(&ranges[1]);
  ranges[1].lo = sc_dim_const(0);
  ranges[1].hi = sc_dim_const(6);
  ranges[1].lo_src = ranges[1].hi_src = SC_VRANGE_FACT;
  g_assert_cmpint(sc_lemma_condition_ranges(s, 0, &inst, ranges), ==, SC_YES);
  ranges[1].hi = sc_dim_const(7);
  g_assert_cmpint(sc_lemma_condition_ranges(s, 0, &inst, ranges), ==, SC_NO);
  ranges[1].hi_src = SC_VRANGE_NONE;
  g_assert_cmpint(sc_lemma_condition_ranges(s, 0, &inst, ranges), ==, SC_UNKNOWN);
  g_assert_true(sc_lemma_var_reads_range(s, 0, 1));
  g_assert_false(sc_lemma_var_reads_range(s, 0, 0));
  /* ?v == 0 with ?v = 0.0, 0, -0.0; not 0.5 */
  sc_ttype t3[3] = {{sc_shape_of(1, (int64_t[]){4}), SC_DTYPE_F32},
                    {sc_shape_of(1, (int64_t[]){4}), SC_DTYPE_BOOL},
                    {sc_shape_of(0, NULL), SC_DTYPE_F32}};
  sc_value v3[3] = {sc_value_none(), sc_value_none(), sc_value_float(0.0)};
  sc_lemma_instance i3 = {st, t3, v3};
  g_assert_cmpint(sc_lemma_condition(s, 1, &i3), ==, SC_YES);
  v3[2] = sc_value_int(0);
  g_assert_cmpint(sc_lemma_condition(s, 1, &i3), ==, SC_YES);
  v3[2] = sc_value_float(-0.0);
  g_assert_cmpint(sc_lemma_condition(s, 1, &i3), ==, SC_YES);
  v3[2] = sc_value_float(0.5);
  g_assert_cmpint(sc_lemma_condition(s, 1, &i3), ==, SC_NO);
}

/* Steering the checker's draws by the condition's equations. */
static void test_steer(void) {
  g_autoptr(GError) err = NULL;
  g_autoptr(sc_lemma_set) s = load_text(
      "lemma st: slice(?x, dim=?d, start=?a, end=?b) => slice(?x, dim=?d, start=?a, end=?b)\n"
      "  where ?d == rank(?x) - 1 and ?b == ?a + 2 and (dtype(?x) == i64 or dtype(?x) == i32)\n"
      "lemma sh: add.Tensor(?x, ?y) => add.Tensor(?y, ?x)\n"
      "  where shape(?y) == remove(shape(?x), 0) and dtype(?y) == dtype(?x)\n",
      &err);
  g_assert_no_error(err);
  g_autoptr(sc_symtab) st = sc_symtab_new();
  g_assert_true(sc_lemma_steer(s, 0, st, NULL, NULL, 0));
  /* variables of st: ?x, ?d, ?a, ?b */
  sc_ttype types[4] = {{sc_shape_of(3, (int64_t[]){2, 3, 4}), SC_DTYPE_F32}};
  sc_value values[4] = {sc_value_none(), sc_value_int(0), sc_value_int(1), sc_value_int(0)};
  g_assert_true(sc_lemma_steer(s, 0, st, types, values, 1));
  g_assert_cmpint(values[1].u.i.value, ==, 2);
  g_assert_cmpint(values[3].u.i.value, ==, 3);
  g_assert_cmpint(types[0].dtype, ==, SC_DTYPE_I32); /* choice 1 of (i64, i32) */
  sc_lemma_instance inst = {st, types, values};
  g_assert_cmpint(sc_lemma_condition(s, 0, &inst), ==, SC_YES);
  /* shapes and dtypes of tensor variables */
  sc_ttype t2[2] = {{sc_shape_of(2, (int64_t[]){5, 6}), SC_DTYPE_F16},
                    {sc_shape_of(1, (int64_t[]){9}), SC_DTYPE_F32}};
  sc_value v2[2] = {sc_value_none(), sc_value_none()};
  g_assert_true(sc_lemma_steer(s, 1, st, t2, v2, 0));
  g_assert_cmpuint(t2[1].shape.rank, ==, 1);
  g_assert_cmpint(t2[1].shape.dims[0].value, ==, 6);
  g_assert_cmpint(t2[1].dtype, ==, SC_DTYPE_F16);
  /* a lemma without such conjuncts is not steerable */
  g_autoptr(sc_lemma_set) n = load_text("lemma ns: neg(?x) => ?x where rank(?x) > 1\n", &err);
  g_assert_no_error(err);
  g_assert_false(sc_lemma_steer(n, 0, st, NULL, NULL, 0));
}

/* A Tensor?[] of tensors matches like a Tensor[]: index(?w, [?i]). */
static void test_opt_list_pattern(void) {
  world w;
  world_init(&w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_lemma_set_load_string(
      w.set, "o.lemma", "lemma rows: index(?w, [?i]) => index_select(?w, 0, ?i)\n", &err));
  g_assert_no_error(err);
  sc_ttype tw = {sc_shape_of(2, (int64_t[]){6, 3}), SC_DTYPE_F32};
  sc_ttype ti = {sc_shape_of(1, (int64_t[]){4}), SC_DTYPE_I64};
  sc_id id;
  g_assert_true(sc_graph_add_input(w.g, "w", &tw, &id, &err));
  g_assert_true(sc_graph_add_input(w.g, "i", &ti, &id, &err));
  world_add(&w, "index(w, indices=[i])");
  world_run(&w);
  g_assert_cmpuint(applications(&w, "rows"), ==, 1);
  g_assert_true(world_equal(&w, "index(w, indices=[i])", "index_select(w, 0, i)"));
  world_clear(&w);
}

/* The attribute tests of a match (compile.c's check_attr): a variable
 * used by two nodes binds only when both records agree (the slice's dim
 * and its cat's), and a default the pattern leaves out must hold (step
 * 1); only the first term below matches. */
static void test_attr_checks(void) {
  world w;
  world_init(&w);
  g_autoptr(GError) err = NULL;
  g_assert_true(sc_lemma_set_load_string(
      w.set, "a.lemma",
      "lemma sl: slice(cat(?a, ?b, dim=?d), dim=?d, start=?s, end=?e)\n"
      "    => slice(?a, dim=?d, start=?s, end=?e)\n"
      "  where 0 <= ?s and ?s <= ?e and ?e <= size(?a, ?d) and dtype(?a) == dtype(?b)\n",
      &err));
  g_assert_no_error(err);
  sc_ttype t = {sc_shape_of(2, (int64_t[]){4, 4}), SC_DTYPE_F32};
  sc_id id;
  g_assert_true(sc_graph_add_input(w.g, "a", &t, &id, &err));
  g_assert_true(sc_graph_add_input(w.g, "b", &t, &id, &err));
  world_add(&w, "slice(cat(a, b, dim=0), dim=0, start=0, end=2)");
  world_add(&w, "slice(cat(a, b, dim=1), dim=0, start=0, end=2)");
  world_add(&w, "slice(cat(a, b, dim=0), dim=0, start=0, end=2, step=2)");
  world_run(&w);
  sc_lemma_counters c;
  sc_lemma_rules_counters(w.rules, (uint32_t)sc_lemma_set_find(w.set, "sl"), &c);
  g_assert_cmpuint(c.matches, ==, 1);
  g_assert_cmpuint(c.applications, ==, 1);
  g_assert_true(world_equal(&w, "slice(cat(a, b, dim=0), dim=0, start=0, end=2)",
                            "slice(a, dim=0, start=0, end=2)"));
  g_assert_false(world_equal(&w, "slice(cat(a, b, dim=0), dim=0, start=0, end=2, step=2)",
                             "slice(a, dim=0, start=0, end=2, step=2)"));
  world_clear(&w);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  sc_ops_init();
  g_test_add_func("/lemma/parse/constructs", test_parse_constructs);
  g_test_add_func("/lemma/errors/pinned", test_errors);
  g_test_add_func("/lemma/errors/atomic", test_errors_atomic);
  g_test_add_func("/lemma/library/load-compile", test_library);
  g_test_add_func("/lemma/run/constrained", test_constrained);
  g_test_add_func("/lemma/run/result-var", test_result_var);
  g_test_add_func("/lemma/run/undecided", test_undecided);
  g_test_add_func("/lemma/run/attr-checks", test_attr_checks);
  g_test_add_func("/lemma/run/condition-memo", test_condition_memo);
  g_test_add_func("/lemma/run/shared-rules", test_shared_rules);
  g_test_add_func("/lemma/run/shared-rules-misuse", test_shared_rules_misuse);
  g_test_add_func("/lemma/decl/shape-rule", test_decl_shape);
  g_test_add_func("/lemma/decl/unfold", test_decl_unfold);
  g_test_add_func("/lemma/range/conditions", test_range_conditions);
  g_test_add_func("/lemma/range/instances", test_range_instances);
  g_test_add_func("/lemma/steer", test_steer);
  g_test_add_func("/lemma/pattern/opt-list", test_opt_list_pattern);
  g_test_add_func("/lemma/programs", test_programs);
  g_test_add_func("/lemma/class/instances", test_class_lemmas);
  g_test_add_func("/lemma/class/reduced", test_reduced_fn);
  g_test_add_func("/lemma/fn/unitperm", test_unitperm_fns);
  g_test_add_func("/lemma/dir/declaration-order", test_dir_declaration_order);
  return g_test_run();
}
