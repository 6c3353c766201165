/* bundle.c — the bundle loader (bundle.h), the only place that reads JSON.
 *
 * Loading runs in a fixed order, so that every name a later part refers to
 * is known: format, symbols and assumptions (the symtab), the spec graph,
 * the impl graph, inputs_behind_assumptions, the relations, check_outputs.
 * A graph is read in two passes: inputs and node declarations (every tensor
 * name exists), then the node arguments (bound against all names, so file
 * order need not be topological); sc_graph_finish orders the nodes, infers
 * and checks types.  Node ids equal file indices, so a graph error about
 * node k is reported at "GRAPH.nodes[k]".
 *
 * Per-rank implementation graphs ("impl": {"ranks": [...], "groups": ...})
 * are each read as a graph of their own, with the symbols a rank declares
 * renamed to "rk.NAME" as they are read (in size strings of shapes, value
 * ranges, integer arguments and the rank's assumptions; see rename_syms),
 * then stitched into the one impl graph by ranks.c.  vllm.all_reduce (not in
 * the registry) is read as _c10d_functional.all_reduce with reduce op "sum".
 *
 * Unknown top-level fields are ignored with a warning (extensions); unknown
 * fields anywhere else are errors (typos), except names starting "x-"/"x_".
 *
 * A load option may carry an oracle (sym.h), set on the symtab as soon as
 * it exists: every comparison the shape rules make while the graphs are
 * read can then reach it (`check` passes cvc5; `show` loads without).
 *
 * Every error is raised through fail(), which formats "FILE: PATH: what"
 * and fills the diag; the caller then frees the partial bundle, which owns
 * everything made so far.
 *
 * The JSON tree of a load is allocated from large blocks that are freed
 * together once the bundle is read (json_arena): a 126-layer bundle's tree
 * is millions of small blocks, and freeing them one by one was a fifth of
 * the load (docs/performance.md, "Loading the bundle").  Jansson's
 * allocation functions are replaced once per process by ones that use the
 * calling thread's arena when it has one and malloc/free otherwise; no
 * json_t made during a load outlives it (everything read is copied). */
#include "shardcheck/bundle.h"
#include "shardcheck/input.h"

#include "ranks-private.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(sc-bundle-error-quark, sc_bundle_error)

struct sc_bundle {
  char *file;
  char *name;
  char *description;
  sc_symtab *st;
  sc_graph *spec, *impl;
  sc_relation input_rel, expect_rel, assume_rel;
  gboolean has_expect;
  GArray *check_outputs;   /* sc_id */
  gboolean check_given;
  uint32_t n_ranks;        /* impl given per rank: how many; else 0 */
  GArray *behind;          /* sc_id: inputs_behind_assumptions */
  GPtrArray *warnings;     /* char *, owned */
};

typedef struct {
  const char *file;
  sc_bundle *b;
  sc_bundle_diag *diag;
  GError **error;
  /* While reading one rank's graph: its symbols, name -> "rk.name"; NULL
   * elsewhere. */
  GHashTable *renames;
  /* The graph being read may hold per-rank collectives (spec, rank graphs):
   * vllm.all_reduce is read as _c10d_functional.all_reduce. */
  gboolean c10d_graph;
  /* The rank whose graph is being read, else -1. */
  int32_t cur_rank;
} loader;

void sc_bundle_diag_clear(sc_bundle_diag *d) {
  if (d == NULL)
    return;
  g_clear_pointer(&d->file, g_free);
  g_clear_pointer(&d->path, g_free);
  g_clear_pointer(&d->what, g_free);
  d->line = d->column = 0;
}

static void set_diag(loader *ld, const char *path, int line, int column, const char *what) {
  if (ld->diag == NULL)
    return;
  sc_bundle_diag_clear(ld->diag);
  ld->diag->file = g_strdup(ld->file);
  ld->diag->path = g_strdup(path);
  ld->diag->line = line;
  ld->diag->column = column;
  ld->diag->what = g_strdup(what);
}

/* A normal form past the symtab's size bound makes whatever failed next a
 * limit (the message that failure would build could be huge). */
static char *too_large_what(void) {
  return g_strdup_printf("limit: a size expression's normal form exceeds %u nodes "
                         "(sc_symtab_max_size); it is exact but too large to work with",
                         sc_symtab_max_size());
}

G_GNUC_PRINTF(3, 4)
static gboolean fail(loader *ld, const char *path, const char *fmt, ...);

/* FALSE with the limit error at PATH when a normal form got too large. */
static gboolean check_nf_size(loader *ld, const char *path) {
  if (!sc_symtab_too_large(ld->b->st))
    return TRUE;
  return fail(ld, path, "%s", "(too large)");
}

G_GNUC_PRINTF(3, 4)
static gboolean fail(loader *ld, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  int code = SC_BUNDLE_ERROR_INVALID;
  if (sc_symtab_too_large(ld->b->st)) {
    g_free(what);
    what = too_large_what();
    code = SC_BUNDLE_ERROR_LIMIT;
  }
  set_diag(ld, path, 0, 0, what);
  if (path[0] != '\0')
    g_set_error(ld->error, SC_BUNDLE_ERROR, code, "%s: %s: %s", ld->file, path, what);
  else
    g_set_error(ld->error, SC_BUNDLE_ERROR, code, "%s: %s", ld->file, what);
  return FALSE;
}

/* Consume ERR (may be NULL) into a failure at PATH. */
static gboolean fail_err(loader *ld, const char *path, GError *err) {
  gboolean r = fail(ld, path, "%s", err ? err->message : "error");
  if (err)
    g_error_free(err);
  return r;
}

/* ---- JSON helpers ---- */

/* "a number 3", "a string \"x\"", ... for messages. */
/* --- the JSON tree's arena --- */

#define ARENA_BLOCK ((size_t)1 << 20)

typedef struct {
  GPtrArray *blocks; /* g_free */
  char *cur;
  size_t left;
} json_arena;

/* The arena of the load running on this thread, or NULL. */
static _Thread_local json_arena *arena_now;

static void *arena_malloc(size_t size) {
  json_arena *a = arena_now;
  if (a == NULL)
    return malloc(size);
  size = (size + 15) & ~(size_t)15;
  if (size > ARENA_BLOCK / 4) {
    /* a large string or array: a block of its own */
    char *big = g_malloc(size);
    g_ptr_array_add(a->blocks, big);
    return big;
  }
  if (size > a->left) {
    a->cur = g_malloc(ARENA_BLOCK);
    a->left = ARENA_BLOCK;
    g_ptr_array_add(a->blocks, a->cur);
  }
  void *p = a->cur;
  a->cur += size;
  a->left -= size;
  return p;
}

static void arena_free(void *p) {
  if (arena_now == NULL)
    free(p);
  /* else freed with the arena */
}

static void arena_begin(json_arena *a) {
  static gsize installed;
  if (g_once_init_enter(&installed)) {
    json_set_alloc_funcs(arena_malloc, arena_free);
    g_once_init_leave(&installed, 1);
  }
  a->blocks = g_ptr_array_new_with_free_func(g_free);
  a->cur = NULL;
  a->left = 0;
  arena_now = a;
}

static void arena_end(json_arena *a) {
  arena_now = NULL;
  g_ptr_array_unref(a->blocks);
}

static char *describe_json(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return g_strdup("an object");
  case JSON_ARRAY:
    return g_strdup("an array");
  case JSON_STRING: {
    const char *s = json_string_value(v);
    if (strlen(s) > 40)
      return g_strdup_printf("string \"%.40s...\"", s);
    return g_strdup_printf("string \"%s\"", s);
  }
  case JSON_INTEGER:
    return g_strdup_printf("number %" JSON_INTEGER_FORMAT, json_integer_value(v));
  case JSON_REAL:
    return g_strdup_printf("number %g", json_real_value(v));
  case JSON_TRUE:
    return g_strdup("boolean true");
  case JSON_FALSE:
    return g_strdup("boolean false");
  case JSON_NULL:
    return g_strdup("null");
  }
  return g_strdup("?");
}

static gboolean expect_type(loader *ld, const char *path, const json_t *v, json_type t,
                            const char *tname) {
  if (json_typeof(v) == t)
    return TRUE;
  g_autofree char *d = describe_json(v);
  return fail(ld, path, "expected %s, found %s", tname, d);
}

/* PATH of key K under BASE ("a.b", or "a[\"odd key\"]").  Paths are made
 * for every field read and used only in errors: concatenation, no printf. */
static char *key_path(const char *base, const char *k) {
  gboolean plain = k[0] != '\0';
  for (const char *p = k; *p && plain; p++)
    plain = g_ascii_isalnum(*p) || *p == '_';
  if (plain)
    return base[0] ? g_strconcat(base, ".", k, NULL) : g_strdup(k);
  GString *s = g_string_new(base);
  g_string_append(s, "[\"");
  for (const char *p = k; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_c(s, '\\');
    g_string_append_c(s, *p);
  }
  g_string_append(s, "\"]");
  return g_string_free(s, FALSE);
}

/* PATH of element I of BASE's member INFIX ("" for BASE itself):
 * "BASE INFIX [I]", as g_strdup_printf("%s%s[%zu]") writes it. */
static char *index_path(const char *base, const char *infix, size_t i) {
  char digits[24];
  char *d = digits + sizeof digits;
  *--d = '\0';
  do {
    *--d = (char)('0' + i % 10);
    i /= 10;
  } while (i > 0);
  size_t lb = strlen(base), li = strlen(infix), ld = (size_t)(digits + sizeof digits - 1 - d);
  char *out = g_malloc(lb + li + ld + 3);
  memcpy(out, base, lb);
  memcpy(out + lb, infix, li);
  out[lb + li] = '[';
  memcpy(out + lb + li + 1, d, ld);
  out[lb + li + 1 + ld] = ']';
  out[lb + li + 2 + ld] = '\0';
  return out;
}

/* Refuse fields other than ALLOWED (NULL-terminated); extension fields
 * start with "x-" or "x_". */
static gboolean check_fields(loader *ld, const char *path, json_t *obj,
                             const char *const *allowed) {
  const char *k;
  json_t *v;
  json_object_foreach(obj, k, v) {
    if (g_str_has_prefix(k, "x-") || g_str_has_prefix(k, "x_"))
      continue;
    gboolean ok = FALSE;
    for (const char *const *a = allowed; *a && !ok; a++)
      ok = strcmp(*a, k) == 0;
    if (!ok) {
      g_autofree char *p = key_path(path, k);
      g_autofree char *list = g_strjoinv(", ", (char **)allowed);
      return fail(ld, p, "unknown field '%s' (expected one of: %s)", k, list);
    }
  }
  return TRUE;
}

/* A required or optional field of type T. */
static gboolean get_field(loader *ld, const char *path, json_t *obj, const char *key,
                          gboolean required, json_type t, const char *tname, json_t **out) {
  json_t *v = json_object_get(obj, key);
  *out = NULL;
  if (v == NULL) {
    if (required) {
      g_autofree char *p = key_path(path, key);
      return fail(ld, p, "required field is missing");
    }
    return TRUE;
  }
  if (json_typeof(v) != t) {
    g_autofree char *p = key_path(path, key);
    return expect_type(ld, p, v, t, tname);
  }
  *out = v;
  return TRUE;
}

/* Names: non-empty, no control characters (texpr.c relies on that). */
static gboolean check_name(loader *ld, const char *path, const char *s, const char *what) {
  if (s[0] == '\0')
    return fail(ld, path, "%s name is empty", what);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      return fail(ld, path, "%s name contains a control character", what);
  return TRUE;
}

/* ---- rank-local symbols ---- */

/* TEXT with every identifier that names a symbol of RENAMES replaced by its
 * new name, or NULL when nothing changes.  Identifiers are tokenized as the
 * size parser does (a letter or '_', then letters, digits, '_' and '.');
 * a name followed by '(' is a function (min, max) and stays; digits start a
 * number, whose letters are not an identifier. */
static char *rename_syms(GHashTable *renames, const char *text) {
  if (renames == NULL || g_hash_table_size(renames) == 0)
    return NULL;
  GString *out = NULL;
  const char *p = text, *copied = text;
  while (*p) {
    if (g_ascii_isalpha(*p) || *p == '_') {
      const char *b = p;
      while (g_ascii_isalnum(*p) || *p == '_' || *p == '.')
        p++;
      const char *q = p;
      while (*q == ' ' || *q == '\t')
        q++;
      g_autofree char *tok = g_strndup(b, (gsize)(p - b));
      const char *to = *q == '(' ? NULL : g_hash_table_lookup(renames, tok);
      if (to != NULL) {
        if (out == NULL)
          out = g_string_new(NULL);
        g_string_append_len(out, copied, b - copied);
        g_string_append(out, to);
        copied = p;
      }
    } else if (g_ascii_isdigit(*p)) {
      while (g_ascii_isalnum(*p) || *p == '_')
        p++;
    } else {
      p++;
    }
  }
  if (out == NULL)
    return NULL;
  g_string_append(out, copied);
  return g_string_free(out, FALSE);
}

/* Rename rank symbols in the strings of a raw argument value. */
static void rename_value(GHashTable *renames, sc_value *v) {
  if (v->kind == SC_VAL_STR) {
    char *r = rename_syms(renames, v->u.s);
    if (r != NULL) {
      g_free(v->u.s);
      v->u.s = r;
    }
  } else if (v->kind == SC_VAL_LIST) {
    for (uint32_t i = 0; i < v->u.items.n; i++)
      rename_value(renames, &v->u.items.v[i]);
  }
}

/* ---- sizes and types ---- */

/* An integer or an integer expression over the symbols. */
static gboolean read_dim(loader *ld, const char *path, json_t *v, sc_dim *out) {
  if (json_is_integer(v)) {
    *out = sc_dim_const(json_integer_value(v));
    return TRUE;
  }
  if (!json_is_string(v)) {
    g_autofree char *d = describe_json(v);
    return fail(ld, path, "expected an integer or a size expression string, found %s", d);
  }
  GError *err = NULL;
  sc_symtab_clear_overflow(ld->b->st);
  g_autofree char *renamed = rename_syms(ld->renames, json_string_value(v));
  if (!sc_dim_parse(ld->b->st, renamed ? renamed : json_string_value(v), out, &err))
    return fail_err(ld, path, err);
  if (!check_nf_size(ld, path))
    return FALSE;
  if (sc_symtab_overflowed(ld->b->st)) {
    sc_symtab_clear_overflow(ld->b->st);
    return fail(ld, path, "size expression \"%s\" overflows int64", json_string_value(v));
  }
  return TRUE;
}

static gboolean read_shape(loader *ld, const char *path, json_t *v, sc_shape *out) {
  if (!expect_type(ld, path, v, JSON_ARRAY, "an array of sizes"))
    return FALSE;
  size_t n = json_array_size(v);
  if (n > SC_MAX_RANK)
    return fail(ld, path, "rank %zu exceeds the maximum rank %d", n, SC_MAX_RANK);
  out->rank = (uint32_t)n;
  for (size_t i = 0; i < n; i++) {
    g_autofree char *p = index_path(path, "", i);
    if (!read_dim(ld, p, json_array_get(v, i), &out->dims[i]))
      return FALSE;
    sc_dim d = out->dims[i];
    if (sc_dim_is_const(d) ? d.value < 0
                           : sc_dim_lt(ld->b->st, d, sc_dim_const(0)) == SC_YES) {
      g_autofree char *s = sc_dim_to_string(ld->b->st, d);
      return fail(ld, p, "size %s is negative", s);
    }
  }
  return TRUE;
}

static gboolean read_dtype(loader *ld, const char *path, json_t *v, sc_dtype *out) {
  if (!expect_type(ld, path, v, JSON_STRING, "a dtype string"))
    return FALSE;
  if (!sc_dtype_from_name(json_string_value(v), out)) {
    GString *names = g_string_new(NULL);
    for (int d = 0; d < SC_DTYPE_COUNT; d++)
      g_string_append_printf(names, "%s%s", d ? " " : "", sc_dtype_name((sc_dtype)d));
    fail(ld, path, "unknown dtype \"%s\" (expected one of %s)", json_string_value(v),
         names->str);
    g_string_free(names, TRUE);
    return FALSE;
  }
  return TRUE;
}

/* A tensor's "rank"; in the graph of rank k it is k, given or not. */
static gboolean read_rank_field(loader *ld, const char *path, json_t *obj, int32_t *out) {
  json_t *r;
  *out = ld->cur_rank;
  if (!get_field(ld, path, obj, "rank", FALSE, JSON_INTEGER, "an integer", &r))
    return FALSE;
  if (r == NULL)
    return TRUE;
  g_autofree char *p = key_path(path, "rank");
  if (json_integer_value(r) < 0 || json_integer_value(r) > INT32_MAX)
    return fail(ld, p, "rank %" JSON_INTEGER_FORMAT " is out of range", json_integer_value(r));
  if (ld->cur_rank >= 0 && json_integer_value(r) != ld->cur_rank)
    return fail(ld, p, "rank %" JSON_INTEGER_FORMAT " in the graph of rank %d",
                json_integer_value(r), ld->cur_rank);
  *out = (int32_t)json_integer_value(r);
  return TRUE;
}

/* ---- symbols ---- */

static gboolean read_bound(loader *ld, const char *path, json_t *obj, const char *key,
                           gboolean *has, int64_t *val) {
  json_t *v = json_object_get(obj, key);
  *has = FALSE;
  *val = 0;
  if (v == NULL || json_is_null(v))
    return TRUE;
  g_autofree char *p = key_path(path, key);
  if (!expect_type(ld, p, v, JSON_INTEGER, "an integer"))
    return FALSE;
  *has = TRUE;
  *val = json_integer_value(v);
  return TRUE;
}

/* "symbols" and "assume" of OBJ (the bundle, or a graph at BASE).  In the
 * graph of rank RANK (>= 0), symbol NAME is declared as "rRANK.NAME" and
 * ld->renames is filled for the rest of that graph. */
static gboolean read_symbols_at(loader *ld, json_t *obj, const char *base, int32_t rank) {
  json_t *syms, *assume;
  if (!get_field(ld, base, obj, "symbols", FALSE, JSON_OBJECT, "an object", &syms))
    return FALSE;
  const char *k;
  json_t *v;
  static const char *const fields[] = {"min", "max", NULL};
  g_autofree char *sym_base = key_path(base, "symbols");
  if (syms != NULL)
    json_object_foreach(syms, k, v) {
      g_autofree char *p = key_path(sym_base, k);
      if (!expect_type(ld, p, v, JSON_OBJECT, "an object {\"min\": .., \"max\": ..}") ||
          !check_fields(ld, p, v, fields))
        return FALSE;
      gboolean has_min, has_max;
      int64_t min, max;
      if (!read_bound(ld, p, v, "min", &has_min, &min) ||
          !read_bound(ld, p, v, "max", &has_max, &max))
        return FALSE;
      GError *err = NULL;
      g_autofree char *global = rank >= 0 ? g_strdup_printf("r%d.%s", rank, k) : g_strdup(k);
      if (!sc_symtab_declare(ld->b->st, global, has_min, min, has_max, max, &err))
        return fail_err(ld, p, err);
      if (rank >= 0)
        g_hash_table_insert(ld->renames, g_strdup(k), g_strdup(global));
    }
  if (!get_field(ld, base, obj, "assume", FALSE, JSON_ARRAY, "an array of strings", &assume))
    return FALSE;
  g_autofree char *assume_base = key_path(base, "assume");
  if (assume != NULL)
    for (size_t i = 0; i < json_array_size(assume); i++) {
      g_autofree char *p = index_path(assume_base, "", i);
      json_t *a = json_array_get(assume, i);
      if (!expect_type(ld, p, a, JSON_STRING, "a constraint string"))
        return FALSE;
      GError *err = NULL;
      sc_symtab_clear_overflow(ld->b->st);
      g_autofree char *renamed = rename_syms(ld->renames, json_string_value(a));
      if (!sc_symtab_assume(ld->b->st, renamed ? renamed : json_string_value(a), &err))
        return fail_err(ld, p, err);
      if (!check_nf_size(ld, p))
        return FALSE;
      if (sc_symtab_overflowed(ld->b->st)) {
        sc_symtab_clear_overflow(ld->b->st);
        return fail(ld, p, "constraint overflows int64");
      }
    }
  return TRUE;
}

/* The assumptions can hold together (sym.h, sc_symtab_satisfiable: the
 * oracle is asked what the linear reasoning of sc_symtab_assume leaves
 * open), or the oracle could not tell.  Asked after the bundle's own
 * assumptions (PATH "assume") and again after the rank graphs' when they
 * added some past the first CHECKED (PATH "impl"). */
static gboolean check_satisfiable(loader *ld, const char *path, uint32_t checked) {
  sc_symtab *st = ld->b->st;
  uint32_t n = sc_symtab_n_assumptions(st);
  if (n == checked || sc_symtab_satisfiable(st) != SC_NO)
    return TRUE;
  g_autoptr(GString) names = g_string_new(NULL);
  for (uint32_t i = 0; i < n && i < 16; i++)
    g_string_append_printf(names, "%s%s", i ? "; " : "", sc_symtab_assumption_text(st, i));
  if (n > 16)
    g_string_append_printf(names, "; and %u more", n - 16);
  return fail(ld, path,
              "the assumptions contradict each other (no values of the symbols within "
              "their bounds satisfy them all, shown by the solver): %s",
              names->str);
}

/* ---- graphs ---- */

static gboolean read_input(loader *ld, sc_graph *g, const char *path, json_t *v) {
  static const char *const fields[] = {"name", "shape", "dtype", "rank", "values", NULL};
  json_t *name, *shape, *dtype, *values;
  if (!expect_type(ld, path, v, JSON_OBJECT, "a tensor object") ||
      !check_fields(ld, path, v, fields) ||
      !get_field(ld, path, v, "name", TRUE, JSON_STRING, "a string", &name) ||
      !get_field(ld, path, v, "shape", TRUE, JSON_ARRAY, "an array of sizes", &shape) ||
      !get_field(ld, path, v, "dtype", FALSE, JSON_STRING, "a dtype string", &dtype) ||
      !get_field(ld, path, v, "values", FALSE, JSON_OBJECT, "an object {\"min\": .., \"max\": ..}",
                 &values))
    return FALSE;
  g_autofree char *np = key_path(path, "name");
  g_autofree char *sp = key_path(path, "shape");
  g_autofree char *dp = key_path(path, "dtype");
  const char *nm = json_string_value(name);
  sc_ttype type;
  memset(&type, 0, sizeof type);
  type.dtype = SC_DTYPE_F32;
  int32_t rank;
  if (!check_name(ld, np, nm, "tensor") || !read_shape(ld, sp, shape, &type.shape) ||
      (dtype != NULL && !read_dtype(ld, dp, dtype, &type.dtype)) ||
      !read_rank_field(ld, path, v, &rank))
    return FALSE;
  sc_dim vmin = sc_dim_const(0), vmax = sc_dim_const(0);
  if (values != NULL) {
    static const char *const vf[] = {"min", "max", NULL};
    g_autofree char *vp = key_path(path, "values");
    if (!check_fields(ld, vp, values, vf))
      return FALSE;
    if (!sc_dtype_is_integral(type.dtype))
      return fail(ld, vp, "only integer tensors may declare a value range (dtype is %s)",
                  sc_dtype_name(type.dtype));
    json_t *mn = json_object_get(values, "min"), *mx = json_object_get(values, "max");
    g_autofree char *mnp = key_path(vp, "min");
    g_autofree char *mxp = key_path(vp, "max");
    if (mn == NULL)
      return fail(ld, mnp, "required field is missing");
    if (mx == NULL)
      return fail(ld, mxp, "required field is missing");
    if (!read_dim(ld, mnp, mn, &vmin) || !read_dim(ld, mxp, mx, &vmax))
      return FALSE;
    if (sc_dim_lt(ld->b->st, vmax, vmin) == SC_YES)
      return fail(ld, vp, "max is less than min");
  }
  if (sc_graph_find_tensor(g, nm) != SC_ID_NONE)
    return fail(ld, np, "duplicate tensor '%s' (already defined)", nm);
  GError *err = NULL;
  sc_id id;
  if (!sc_graph_add_input(g, nm, &type, &id, &err))
    return fail_err(ld, path, err);
  sc_tensor *t = sc_graph_tensor(g, id);
  t->rank = rank;
  if (values != NULL) {
    t->has_values = TRUE;
    t->values_min = vmin;
    t->values_max = vmax;
  }
  return TRUE;
}

/* An in-place or out= operator name: "aten.add_.Tensor", "aten.add.out". */
static gboolean inplace_name(const char *qualname, char **suggestion) {
  g_auto(GStrv) parts = g_strsplit(qualname, ".", 0);
  guint n = g_strv_length(parts);
  *suggestion = NULL;
  if (n < 2)
    return FALSE;
  const char *name = parts[1];
  size_t len = strlen(name);
  gboolean dunder = g_str_has_prefix(name, "__") && g_str_has_suffix(name, "__");
  gboolean inplace = (!dunder && len > 1 && name[len - 1] == '_') ||
                     (dunder && len > 5 && name[2] == 'i') ||
                     (n >= 3 && strcmp(parts[2], "out") == 0);
  if (!inplace)
    return FALSE;
  g_autofree char *base = (!dunder && len > 0 && name[len - 1] == '_')
                              ? g_strndup(name, len - 1)
                              : g_strdup(name);
  if (dunder && name[2] == 'i')
    base = (g_free(base), g_strdup_printf("__%s", name + 3));
  const sc_op *op = NULL;
  if (n >= 3 && strcmp(parts[2], "out") != 0) {
    g_autofree char *q = g_strdup_printf("%s.%s.%s", parts[0], base, parts[2]);
    op = sc_ops_lookup(q, NULL);
  }
  if (op == NULL) {
    g_autofree char *q = g_strdup_printf("%s.%s", parts[0], base);
    op = sc_ops_lookup(q, NULL);
  }
  *suggestion = op ? g_strdup(op->qualname) : g_strdup_printf("%s.%s", parts[0], base);
  return TRUE;
}

/* torch.fx prints a Python number passed where an ATen schema says Tensor
 * as it is ("aten.div.Tensor(x, 8)": PyTorch wraps it as a number).  If OP
 * is a ".Tensor" (".Tensor_mode") overload and a Tensor argument other than
 * the first is a JSON number or boolean, the ".Scalar" (".Scalar_mode")
 * overload of the same operator, which computes the same thing, else OP. */
static const sc_op *scalar_overload(const sc_op *op, json_t *args, json_t *kwargs) {
  const char *alt;
  if (strcmp(op->overload, "Tensor") == 0)
    alt = "Scalar";
  else if (strcmp(op->overload, "Tensor_mode") == 0)
    alt = "Scalar_mode";
  else
    return op;
  gboolean number = FALSE;
  for (uint32_t i = 1; i < op->n_args && !number; i++) {
    if (op->args[i].type != SC_ARG_TENSOR)
      continue;
    json_t *v = NULL;
    if (args != NULL && !op->args[i].kwarg_only && i < json_array_size(args))
      v = json_array_get(args, i);
    else if (kwargs != NULL)
      v = json_object_get(kwargs, op->args[i].name);
    number = v != NULL && (json_is_number(v) || json_is_boolean(v));
  }
  if (!number)
    return op;
  g_autofree char *q = g_strdup_printf("%s.%s.%s", op->ns, op->name, alt);
  const sc_op *s = sc_ops_lookup(q, NULL);
  return s != NULL && s->n_results == op->n_results ? s : op;
}

/* Per-node state between the two passes. */
typedef struct {
  json_t *obj;
  sc_id node;
  gboolean vllm_all_reduce; /* read as _c10d_functional.all_reduce(x, "sum", group) */
} pending_node;

static gboolean is_vllm_all_reduce(const char *qual) {
  return strcmp(qual, "vllm.all_reduce.default") == 0 || strcmp(qual, "vllm.all_reduce") == 0;
}

static gboolean declare_node(loader *ld, sc_graph *g, const char *gpath, size_t index,
                             json_t *v, pending_node *pn) {
  static const char *const fields[] = {"name", "op", "args", "kwargs", "outputs", "src", NULL};
  g_autofree char *path = index_path(gpath, ".nodes", index);
  json_t *name, *opj, *args, *kwargs, *outputs, *src;
  if (!expect_type(ld, path, v, JSON_OBJECT, "a node object") ||
      !check_fields(ld, path, v, fields) ||
      !get_field(ld, path, v, "name", TRUE, JSON_STRING, "a string", &name) ||
      !get_field(ld, path, v, "op", TRUE, JSON_STRING, "an operator name string", &opj) ||
      !get_field(ld, path, v, "args", FALSE, JSON_ARRAY, "an array", &args) ||
      !get_field(ld, path, v, "kwargs", FALSE, JSON_OBJECT, "an object", &kwargs) ||
      !get_field(ld, path, v, "outputs", TRUE, JSON_ARRAY, "an array of results", &outputs) ||
      !get_field(ld, path, v, "src", FALSE, JSON_STRING, "a string", &src))
    return FALSE;
  g_autofree char *np = key_path(path, "name");
  g_autofree char *opp = key_path(path, "op");
  g_autofree char *outp = key_path(path, "outputs");
  const char *nm = json_string_value(name);
  if (!check_name(ld, np, nm, "node"))
    return FALSE;
  if (sc_graph_find_node(g, nm) != SC_ID_NONE)
    return fail(ld, np, "duplicate node name '%s'", nm);

  const char *qual = json_string_value(opj);
  if (ld->c10d_graph && is_vllm_all_reduce(qual)) {
    pn->vllm_all_reduce = TRUE;
    qual = "_c10d_functional.all_reduce.default";
  }
  g_autofree char *sugg = NULL;
  if (inplace_name(qual, &sugg))
    return fail(ld, opp,
                "%s operator '%s' %s: graphs must be functional; functionalize it (use %s)",
                g_str_has_suffix(qual, ".out") ? "out=" : "in-place", qual,
                g_str_has_suffix(qual, ".out") ? "writes into its out= argument"
                                               : "mutates its input",
                sugg);
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup(qual, &err);
  if (op == NULL)
    return fail_err(ld, opp, err);
  if (op->flags & SC_OP_INPLACE)
    return fail(ld, opp,
                "in-place operator '%s' mutates its input: graphs must be functional; "
                "functionalize it",
                op->qualname);
  op = scalar_overload(op, args, kwargs);

  size_t n_out = json_array_size(outputs);
  if (!op->results_variadic && n_out != op->n_results)
    return fail(ld, outp, "%s gives %u result%s but %zu %s listed", op->qualname,
                op->n_results, op->n_results == 1 ? "" : "s", n_out,
                n_out == 1 ? "is" : "are");
  g_autofree const char **names = g_new0(const char *, n_out ? n_out : 1);
  /* A null result of a multi-result operator without output_mask is one
   * nobody reads (torch.fx prints no getitem for it, and fx2bundle writes
   * null): it gets the name "NODE#i", which no relation can spell. */
  g_autoptr(GPtrArray) made = g_ptr_array_new_with_free_func(g_free);
  gboolean name_nulls = sc_ops_arg_index(op, "output_mask") < 0 &&
                        (op->results_variadic || op->n_results > 1);
  g_autofree sc_tensor_decl *decls = g_new0(sc_tensor_decl, n_out ? n_out : 1);
  g_autofree int32_t *ranks = g_new0(int32_t, n_out ? n_out : 1);
  static const char *const ofields[] = {"name", "shape", "dtype", "rank", NULL};
  for (size_t i = 0; i < n_out; i++) {
    json_t *o = json_array_get(outputs, i);
    g_autofree char *op_i = index_path(outp, "", i);
    ranks[i] = ld->cur_rank;
    if (json_is_null(o)) {
      if (name_nulls) {
        char *nm_i = g_strdup_printf("%s#%zu", nm, i);
        g_ptr_array_add(made, nm_i);
        names[i] = nm_i;
      }
      continue;
    }
    json_t *on, *os, *od;
    if (!expect_type(ld, op_i, o, JSON_OBJECT, "a result object or null") ||
        !check_fields(ld, op_i, o, ofields) ||
        !get_field(ld, op_i, o, "name", TRUE, JSON_STRING, "a string", &on) ||
        !get_field(ld, op_i, o, "shape", FALSE, JSON_ARRAY, "an array of sizes", &os) ||
        !get_field(ld, op_i, o, "dtype", FALSE, JSON_STRING, "a dtype string", &od) ||
        !read_rank_field(ld, op_i, o, &ranks[i]))
      return FALSE;
    g_autofree char *onp = key_path(op_i, "name");
    g_autofree char *osp = key_path(op_i, "shape");
    g_autofree char *odp = key_path(op_i, "dtype");
    names[i] = json_string_value(on);
    if (!check_name(ld, onp, names[i], "tensor"))
      return FALSE;
    if (sc_graph_find_tensor(g, names[i]) != SC_ID_NONE)
      return fail(ld, onp, "duplicate tensor '%s' (already defined)", names[i]);
    for (size_t j = 0; j < i; j++)
      if (names[j] != NULL && strcmp(names[j], names[i]) == 0)
        return fail(ld, onp, "duplicate tensor '%s' (results %zu and %zu)", names[i], j, i);
    if (os != NULL) {
      decls[i].has_shape = TRUE;
      if (!read_shape(ld, osp, os, &decls[i].shape))
        return FALSE;
    }
    if (od != NULL) {
      decls[i].has_dtype = TRUE;
      if (!read_dtype(ld, odp, od, &decls[i].dtype))
        return FALSE;
    }
  }
  if (!sc_graph_declare_node(g, nm, op, names, (uint32_t)n_out, decls,
                             src ? json_string_value(src) : NULL, &pn->node, &err))
    return fail_err(ld, path, err);
  const sc_node *node = sc_graph_node(g, pn->node);
  for (size_t i = 0; i < n_out; i++)
    if (node->results[i] != SC_ID_NONE)
      sc_graph_tensor(g, node->results[i])->rank = ranks[i];
  pn->obj = v;
  return TRUE;
}

/* A JSON argument as a raw value (value.h). */
static gboolean raw_value(loader *ld, const char *path, json_t *v, sc_value *out) {
  switch (json_typeof(v)) {
  case JSON_INTEGER:
    *out = sc_value_int(json_integer_value(v));
    return TRUE;
  case JSON_REAL:
    *out = sc_value_float(json_real_value(v));
    return TRUE;
  case JSON_TRUE:
  case JSON_FALSE:
    *out = sc_value_bool(json_is_true(v));
    return TRUE;
  case JSON_NULL:
    *out = sc_value_none();
    return TRUE;
  case JSON_STRING:
    *out = sc_value_str(json_string_value(v));
    return TRUE;
  case JSON_ARRAY: {
    size_t n = json_array_size(v);
    sc_value r;
    r.kind = SC_VAL_LIST;
    r.u.items.n = (uint32_t)n;
    r.u.items.v = g_new0(sc_value, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
      g_autofree char *p = index_path(path, "", i);
      if (!raw_value(ld, p, json_array_get(v, i), &r.u.items.v[i])) {
        sc_value_clear(&r);
        return FALSE;
      }
    }
    *out = r;
    return TRUE;
  }
  case JSON_OBJECT:
    return fail(ld, path, "expected an argument value, found an object");
  }
  return FALSE;
}

typedef struct {
  sc_graph *g;
  char *unknown;
} node_resolver;

static gboolean resolve_name(void *env, const char *name, sc_id *out) {
  node_resolver *r = env;
  sc_id id = sc_graph_find_tensor(r->g, name);
  if (id == SC_ID_NONE) {
    if (r->unknown == NULL)
      r->unknown = g_strdup(name);
    return FALSE;
  }
  *out = id;
  return TRUE;
}

static gboolean is_ignored_kwarg(const char *k) {
  return strcmp(k, "device") == 0 || strcmp(k, "layout") == 0 ||
         strcmp(k, "pin_memory") == 0 || strcmp(k, "memory_format") == 0;
}

static gboolean bind_node(loader *ld, sc_graph *g, const char *gpath, const char *gname,
                          size_t index, const pending_node *pn) {
  g_autofree char *path = index_path(gpath, ".nodes", index);
  const sc_node *node = sc_graph_node(g, pn->node);
  const sc_op *op = node->op;
  json_t *args = json_object_get(pn->obj, "args");
  json_t *kwargs = json_object_get(pn->obj, "kwargs");
  size_t n_pos = args ? json_array_size(args) : 0;
  size_t n_kw_all = kwargs ? json_object_size(kwargs) : 0;
  /* vllm.all_reduce(tensor, group_name): one more slot for the reduce op. */
  sc_value *pos = g_new0(sc_value, n_pos + 1);
  sc_value *kw = g_new0(sc_value, n_kw_all + 1);
  const char **kw_names = g_new0(const char *, n_kw_all + 1);
  sc_value *bound = NULL;
  uint32_t n_kw = 0;
  gboolean ok = TRUE;
  node_resolver r = {g, NULL};
  for (size_t i = 0; i < n_pos && ok; i++) {
    g_autofree char *p = index_path(path, ".args", i);
    ok = raw_value(ld, p, json_array_get(args, i), &pos[i]);
  }
  if (ok && kwargs != NULL) {
    const char *k;
    json_t *v;
    json_object_foreach(kwargs, k, v) {
      if (is_ignored_kwarg(k))
        continue;
      g_autofree char *p = key_path(path, "kwargs");
      g_autofree char *pk = key_path(p, k);
      kw_names[n_kw] = k;
      if (!(ok = raw_value(ld, pk, v, &kw[n_kw++])))
        break;
    }
  }
  /* Rank symbols in integer arguments ("u0" -> "r1.u0"). */
  if (ok && ld->renames != NULL && g_hash_table_size(ld->renames) > 0) {
    for (size_t i = 0; i < n_pos && i < op->n_args; i++)
      if (op->args[i].type == SC_ARG_INT || op->args[i].type == SC_ARG_INT_LIST ||
          op->args[i].type == SC_ARG_SCALAR)
        rename_value(ld->renames, &pos[i]);
    for (uint32_t i = 0; i < n_kw; i++) {
      int32_t a = sc_ops_arg_index(op, kw_names[i]);
      if (a >= 0 && (op->args[a].type == SC_ARG_INT || op->args[a].type == SC_ARG_INT_LIST ||
                     op->args[a].type == SC_ARG_SCALAR))
        rename_value(ld->renames, &kw[i]);
    }
  }
  /* vllm.all_reduce(Tensor tensor, str group_name): a sum all-reduce. */
  if (ok && pn->vllm_all_reduce) {
    if (n_pos > 2) {
      g_autofree char *p = g_strdup_printf("%s.args[2]", path);
      ok = fail(ld, p, "vllm.all_reduce takes (tensor, group_name), found %zu positional "
                "arguments", n_pos);
    } else if (n_pos == 2) {
      pos[2] = pos[1];
      pos[1] = sc_value_str("sum");
      n_pos = 3;
    } else {
      kw_names[n_kw] = "reduce_op";
      kw[n_kw++] = sc_value_str("sum");
    }
    for (uint32_t i = 0; i < n_kw && ok; i++)
      if (strcmp(kw_names[i], "tensor") == 0)
        kw_names[i] = "input";
  }
  if (ok) {
    GError *err = NULL;
    sc_bind_loc loc = {FALSE, UINT32_MAX};
    bound = g_new0(sc_value, op->n_args ? op->n_args : 1);
    if (!sc_ops_bind(op, sc_graph_symtab(g), pos, (uint32_t)n_pos, kw_names, kw, n_kw,
                     resolve_name, &r, bound, &loc, &err)) {
      g_autofree char *at = NULL;
      if (loc.index != UINT32_MAX && !loc.is_kwarg)
        at = g_strdup_printf("%s.args[%u]", path, loc.index);
      else if (loc.index != UINT32_MAX && loc.index < n_kw) {
        g_autofree char *p = key_path(path, "kwargs");
        at = key_path(p, kw_names[loc.index]);
      } else {
        at = g_strdup(path);
      }
      if (r.unknown != NULL) {
        fail(ld, at, "undefined tensor '%s' (no input or node result of %s has that name)",
             r.unknown, gname);
        g_error_free(err);
      } else {
        fail_err(ld, at, err);
      }
      ok = FALSE;
    } else {
      GError *e2 = NULL;
      sc_value *b = g_steal_pointer(&bound);
      if (!sc_graph_set_node_args(g, pn->node, b, &e2)) {
        g_autofree char *op_path = key_path(path, "outputs");
        fail_err(ld, op_path, e2);
        ok = FALSE;
      }
    }
  }
  for (size_t i = 0; i < n_pos; i++)
    sc_value_clear(&pos[i]);
  for (uint32_t i = 0; i < n_kw; i++)
    sc_value_clear(&kw[i]);
  g_free(pos);
  g_free(kw);
  g_free(kw_names);
  g_free(r.unknown);
  if (bound != NULL) {
    for (uint32_t i = 0; i < op->n_args; i++)
      sc_value_clear(&bound[i]);
    g_free(bound);
  }
  return ok;
}

typedef enum { GRAPH_SPEC, GRAPH_IMPL, GRAPH_RANK } graph_kind;

/* "groups": {name: [global ranks]} of OBJ at BASE, into GS; for the spec
 * (ONE_MEMBER) every group must have exactly one member. */
static gboolean read_groups(loader *ld, json_t *obj, const char *base, sc_ranks_groups *gs,
                            gboolean one_member) {
  json_t *groups;
  if (!get_field(ld, base, obj, "groups", FALSE, JSON_OBJECT,
                 "an object {group name: [ranks]}", &groups))
    return FALSE;
  if (groups == NULL)
    return TRUE;
  g_autofree char *gp = key_path(base, "groups");
  const char *k;
  json_t *v;
  json_object_foreach(groups, k, v) {
    g_autofree char *p = key_path(gp, k);
    if (!expect_type(ld, p, v, JSON_ARRAY, "an array of ranks"))
      return FALSE;
    size_t n = json_array_size(v);
    if (one_member && n != 1)
      return fail(ld, p,
                  "spec group '%s' has %zu members, but the spec is one rank: its collectives "
                  "must run on groups of one member (they are identities)",
                  k, n);
    if (n > UINT32_MAX)
      return fail(ld, p, "too many ranks");
    g_autofree int64_t *m = g_new(int64_t, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
      g_autofree char *pi = index_path(p, "", i);
      json_t *x = json_array_get(v, i);
      if (!expect_type(ld, pi, x, JSON_INTEGER, "a rank (an integer)"))
        return FALSE;
      m[i] = json_integer_value(x);
    }
    GError *err = NULL;
    if (!sc_ranks_groups_add(gs, k, m, (uint32_t)n, &err))
      return fail_err(ld, p, err);
  }
  return TRUE;
}

/* The path of a stitching error's location. */
static char *ranks_loc_path(const char *gpath, const sc_ranks_loc *loc) {
  if (loc->rank < 0)
    return g_strdup(gpath);
  if (loc->node == SC_ID_NONE)
    return g_strdup_printf("%s[%d]", gpath, loc->rank);
  return g_strdup_printf("%s[%d].nodes[%u]", gpath, loc->rank, loc->node);
}

static gboolean read_graph_body(loader *ld, json_t *gj, const char *gname, graph_kind kind,
                                int32_t rank, sc_graph **out) {
  static const char *const spec_fields[] = {"inputs", "nodes", "outputs", "symbols",
                                            "assume", "groups", NULL};
  static const char *const fields[] = {"inputs", "nodes", "outputs", "symbols", "assume", NULL};
  json_t *inputs, *nodes, *outputs;
  if (!check_fields(ld, gname, gj, kind == GRAPH_SPEC ? spec_fields : fields) ||
      !get_field(ld, gname, gj, "inputs", TRUE, JSON_ARRAY, "an array of tensors", &inputs) ||
      !get_field(ld, gname, gj, "nodes", TRUE, JSON_ARRAY, "an array of nodes", &nodes) ||
      !get_field(ld, gname, gj, "outputs", TRUE, JSON_ARRAY, "an array of tensor names",
                 &outputs))
    return FALSE;
  g_autoptr(sc_ranks_groups) spec_groups = NULL;
  if (kind == GRAPH_SPEC) {
    spec_groups = sc_ranks_groups_new(1);
    if (!read_groups(ld, gj, gname, spec_groups, TRUE))
      return FALSE;
  }
  if (!read_symbols_at(ld, gj, gname, rank))
    return FALSE;
  sc_graph *g = sc_graph_new(ld->b->st);
  *out = g; /* owned by the caller from now on */
  for (size_t i = 0; i < json_array_size(inputs); i++) {
    g_autofree char *p = index_path(gname, ".inputs", i);
    if (!read_input(ld, g, p, json_array_get(inputs, i)) || !check_nf_size(ld, p))
      return FALSE;
  }
  size_t nn = json_array_size(nodes);
  g_autofree pending_node *pn = g_new0(pending_node, nn ? nn : 1);
  for (size_t i = 0; i < nn; i++)
    if (!declare_node(ld, g, gname, i, json_array_get(nodes, i), &pn[i]))
      return FALSE;
  for (size_t i = 0; i < nn; i++) {
    if (!bind_node(ld, g, gname, gname, i, &pn[i]))
      return FALSE;
    g_autofree char *np = index_path(gname, ".nodes", i);
    if (!check_nf_size(ld, np))
      return FALSE;
  }
  if (json_array_size(outputs) == 0 && kind != GRAPH_RANK) {
    g_autofree char *p = key_path(gname, "outputs");
    return fail(ld, p, "a graph needs at least one output");
  }
  for (size_t i = 0; i < json_array_size(outputs); i++) {
    g_autofree char *p = index_path(gname, ".outputs", i);
    json_t *o = json_array_get(outputs, i);
    if (!expect_type(ld, p, o, JSON_STRING, "a tensor name"))
      return FALSE;
    sc_id t = sc_graph_find_tensor(g, json_string_value(o));
    if (t == SC_ID_NONE)
      return fail(ld, p, "unknown tensor '%s' (no input or node result of %s has that name)",
                  json_string_value(o), gname);
    sc_graph_add_output(g, t);
  }
  GError *err = NULL;
  if (!sc_graph_finish(g, &err)) {
    sc_id bad = sc_graph_error_node(g);
    g_autofree char *p = bad != SC_ID_NONE ? g_strdup_printf("%s.nodes[%u]", gname, bad)
                                           : key_path(gname, "nodes");
    return fail_err(ld, p, err);
  }
  if (kind == GRAPH_SPEC) {
    sc_ranks_loc loc;
    if (!sc_ranks_check_calls(g, 0, spec_groups, &loc, &err)) {
      g_autofree char *p = loc.node != SC_ID_NONE ? g_strdup_printf("%s.nodes[%u]", gname, loc.node)
                                                  : g_strdup(gname);
      return fail_err(ld, p, err);
    }
  }
  return TRUE;
}

/* One graph object GJ at GNAME: the spec, a single impl graph, or the graph
 * of rank RANK.  *OUT receives the graph as soon as it exists (also on
 * failure); the caller owns it. */
static gboolean read_graph_obj(loader *ld, json_t *gj, const char *gname, graph_kind kind,
                               int32_t rank, sc_graph **out) {
  ld->cur_rank = rank;
  ld->c10d_graph = kind != GRAPH_IMPL;
  if (rank >= 0)
    ld->renames = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  gboolean ok = read_graph_body(ld, gj, gname, kind, rank, out);
  g_clear_pointer(&ld->renames, g_hash_table_destroy);
  ld->cur_rank = -1;
  ld->c10d_graph = FALSE;
  return ok;
}

/* "impl": {"ranks": [graph, ...], "groups": {...}}: each rank's graph, then
 * one stitched impl graph. */
static gboolean read_impl_ranks(loader *ld, json_t *gj) {
  static const char *const fields[] = {"ranks", "groups", NULL};
  json_t *ranks;
  if (!check_fields(ld, "impl", gj, fields) ||
      !get_field(ld, "impl", gj, "ranks", TRUE, JSON_ARRAY, "an array of graphs", &ranks))
    return FALSE;
  size_t n = json_array_size(ranks);
  if (n == 0)
    return fail(ld, "impl.ranks", "expected at least one rank graph");
  if (n > INT32_MAX)
    return fail(ld, "impl.ranks", "too many ranks");
  g_autoptr(sc_ranks_groups) gs = sc_ranks_groups_new((uint32_t)n);
  if (!read_groups(ld, gj, "impl", gs, FALSE))
    return FALSE;
  sc_graph **graphs = g_new0(sc_graph *, n);
  gboolean ok = TRUE;
  for (size_t k = 0; k < n && ok; k++) {
    g_autofree char *p = g_strdup_printf("impl.ranks[%zu]", k);
    json_t *rj = json_array_get(ranks, k);
    ok = expect_type(ld, p, rj, JSON_OBJECT, "a graph object");
    if (ok && json_object_get(rj, "ranks") != NULL) {
      g_autofree char *pr = key_path(p, "ranks");
      ok = fail(ld, pr, "a rank's graph is one graph (ranks do not nest)");
    }
    if (ok)
      ok = read_graph_obj(ld, rj, p, GRAPH_RANK, (int32_t)k, &graphs[k]);
  }
  if (ok) {
    sc_ranks_loc loc;
    GError *err = NULL;
    ld->b->impl = sc_ranks_stitch(graphs, (uint32_t)n, gs, ld->b->st, &loc, &err);
    if (ld->b->impl == NULL) {
      g_autofree char *p = ranks_loc_path("impl.ranks", &loc);
      ok = fail_err(ld, p, err);
    }
  }
  for (size_t k = 0; k < n; k++)
    sc_graph_free(graphs[k]);
  g_free(graphs);
  if (!ok)
    return FALSE;
  ld->b->n_ranks = (uint32_t)n;
  if (sc_graph_n_outputs(ld->b->impl) == 0)
    return fail(ld, "impl.ranks", "no rank's graph has an output");
  return TRUE;
}

static gboolean read_graph(loader *ld, json_t *root, const char *gname, sc_graph **out) {
  json_t *gj;
  if (!get_field(ld, "", root, gname, TRUE, JSON_OBJECT, "a graph object", &gj))
    return FALSE;
  gboolean is_impl = strcmp(gname, "impl") == 0;
  if (json_object_get(gj, "ranks") != NULL) {
    if (is_impl)
      return read_impl_ranks(ld, gj);
    g_autofree char *p = key_path(gname, "ranks");
    return fail(ld, p, "the spec is one graph (only impl may be given per rank)");
  }
  return read_graph_obj(ld, gj, gname, is_impl ? GRAPH_IMPL : GRAPH_SPEC, -1, out);
}

/* ---- relations ---- */

static void relation_clear(sc_relation *r) {
  for (uint32_t i = 0; i < r->n_entries; i++) {
    sc_relation_entry *e = &r->entries[i];
    for (uint32_t j = 0; j < e->n_exprs; j++) {
      sc_texpr_free(e->exprs[j]);
      g_free(e->texts[j]);
    }
    g_free(e->exprs);
    g_free(e->texts);
  }
  g_free(r->entries);
  if (r->index != NULL)
    g_hash_table_destroy(r->index);
  memset(r, 0, sizeof *r);
}

const sc_relation_entry *sc_relation_find(const sc_relation *r, sc_id tensor) {
  if (r->index == NULL)
    return NULL;
  gpointer v = g_hash_table_lookup(r->index, GUINT_TO_POINTER(tensor + 1));
  return v ? &r->entries[GPOINTER_TO_UINT(v) - 1] : NULL;
}

typedef enum { REL_INPUT, REL_EXPECT, REL_ASSUME } rel_kind;

/* The set of output tensor ids of G (keys id + 1). */
static GHashTable *output_set(sc_graph *g) {
  GHashTable *set = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (uint32_t i = 0; i < sc_graph_n_outputs(g); i++)
    g_hash_table_add(set, GUINT_TO_POINTER(sc_graph_output(g, i) + 1));
  return set;
}

static gboolean in_set(GHashTable *set, sc_id t) {
  return g_hash_table_contains(set, GUINT_TO_POINTER(t + 1));
}

static char *type_text(const sc_ttype *t) {
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s %s", s, sc_dtype_name(t->dtype));
}

static gboolean read_relation(loader *ld, json_t *root, const char *key, rel_kind kind,
                              sc_relation *rel, gboolean *present) {
  json_t *obj;
  if (!get_field(ld, "", root, key, kind == REL_INPUT, JSON_OBJECT, "an object", &obj))
    return FALSE;
  if (present != NULL)
    *present = obj != NULL;
  rel->index = g_hash_table_new(g_direct_hash, g_direct_equal);
  if (obj == NULL)
    return TRUE;
  sc_graph *spec = ld->b->spec, *impl = ld->b->impl;
  g_autoptr(GHashTable) spec_outputs = output_set(spec);
  g_autoptr(GHashTable) impl_outputs = output_set(impl);
  rel->entries = g_new0(sc_relation_entry, json_object_size(obj) ? json_object_size(obj) : 1);
  const char *k;
  json_t *v;
  json_object_foreach(obj, k, v) {
    g_autofree char *p = key_path(key, k);
    sc_id t = sc_graph_find_tensor(spec, k);
    if (t == SC_ID_NONE)
      return fail(ld, p, "spec has no tensor '%s'", k);
    const sc_tensor *st = sc_graph_tensor(spec, t);
    gboolean is_input = st->producer == SC_ID_NONE;
    if (kind == REL_INPUT && !is_input)
      return fail(ld, p,
                  "'%s' is not an input of spec (node '%s' produces it); relate it with "
                  "assume_relation if you mean to trust that",
                  k, sc_graph_node(spec, st->producer)->name);
    if (kind == REL_EXPECT && !in_set(spec_outputs, t))
      return fail(ld, p, "'%s' is not an output of spec", k);
    if (kind == REL_ASSUME && is_input)
      return fail(ld, p, "'%s' is an input of spec: map it in input_relation", k);
    if (!expect_type(ld, p, v, JSON_ARRAY, "an array of expression strings"))
      return FALSE;
    if (json_array_size(v) == 0)
      return fail(ld, p, "expected at least one expression");
    sc_relation_entry *e = &rel->entries[rel->n_entries++];
    g_hash_table_insert(rel->index, GUINT_TO_POINTER(t + 1),
                        GUINT_TO_POINTER(rel->n_entries));
    e->tensor = t;
    size_t n = json_array_size(v);
    e->exprs = g_new0(sc_texpr *, n);
    e->texts = g_new0(char *, n);
    for (size_t i = 0; i < n; i++) {
      g_autofree char *pi = index_path(p, "", i);
      json_t *x = json_array_get(v, i);
      if (!expect_type(ld, pi, x, JSON_STRING, "an expression string"))
        return FALSE;
      GError *err = NULL;
      sc_texpr *te = sc_texpr_parse(json_string_value(x), impl, TRUE, &err);
      if (te == NULL)
        return fail_err(ld, pi, err);
      e->exprs[i] = te;
      e->texts[i] = g_strdup(json_string_value(x));
      e->n_exprs++;
      /* Leaves: impl inputs for input_relation, impl outputs for expectations. */
      if (kind != REL_ASSUME) {
        g_autoptr(GArray) leaves = g_array_new(FALSE, FALSE, sizeof(sc_id));
        sc_texpr_collect_leaves(te, leaves);
        for (guint l = 0; l < leaves->len; l++) {
          sc_id lt = g_array_index(leaves, sc_id, l);
          const sc_tensor *it = sc_graph_tensor(impl, lt);
          if (kind == REL_INPUT && it->producer != SC_ID_NONE)
            return fail(ld, pi, "'%s' is not an input of impl (an input relation maps spec "
                        "inputs to impl inputs)", it->name);
          if (kind == REL_EXPECT && !in_set(impl_outputs, lt))
            return fail(ld, pi, "'%s' is not an output of impl (an output relation uses "
                        "only what impl returns)", it->name);
        }
      }
      const sc_ttype *et = sc_texpr_type(te);
      sc_truth same = sc_shape_same(ld->b->st, &et->shape, &st->type.shape);
      if (same != SC_YES || et->dtype != st->type.dtype) {
        g_autofree char *s = sc_texpr_to_string(te);
        g_autofree char *a = type_text(et);
        g_autofree char *b = type_text(&st->type);
        return fail(ld, pi, "%s has type %s but spec tensor '%s' is %s%s", s, a, k, b,
                    same == SC_UNKNOWN && et->dtype == st->type.dtype
                        ? " (the shapes cannot be proved equal under the assumptions)"
                        : "");
      }
    }
  }
  if (kind == REL_INPUT) {
    g_autoptr(GHashTable) behind = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < ld->b->behind->len; i++)
      g_hash_table_add(behind, GUINT_TO_POINTER(g_array_index(ld->b->behind, sc_id, i) + 1));
    for (uint32_t i = 0; i < sc_graph_n_inputs(spec); i++) {
      sc_id t = sc_graph_input(spec, i);
      if (sc_relation_find(rel, t) == NULL && !in_set(behind, t))
        return fail(ld, key, "spec input '%s' is not mapped (every spec input needs at "
                    "least one expression)", sc_graph_tensor(spec, t)->name);
    }
  }
  return TRUE;
}

/* "inputs_behind_assumptions": spec inputs that reach the checked outputs
 * only through assume_relation tensors, so need no input relation.  The
 * names are read before the relations (they exempt inputs from the
 * mapping rule) and the claim is checked after them (check_behind). */
static gboolean read_behind(loader *ld, json_t *root) {
  json_t *arr;
  if (!get_field(ld, "", root, "inputs_behind_assumptions", FALSE, JSON_ARRAY,
                 "an array of spec input names", &arr))
    return FALSE;
  if (arr == NULL)
    return TRUE;
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (size_t i = 0; i < json_array_size(arr); i++) {
    g_autofree char *p = g_strdup_printf("inputs_behind_assumptions[%zu]", i);
    json_t *x = json_array_get(arr, i);
    if (!expect_type(ld, p, x, JSON_STRING, "a spec input name"))
      return FALSE;
    const char *nm = json_string_value(x);
    sc_id t = sc_graph_find_tensor(ld->b->spec, nm);
    if (t == SC_ID_NONE)
      return fail(ld, p, "spec has no tensor '%s'", nm);
    const sc_tensor *st = sc_graph_tensor(ld->b->spec, t);
    if (st->producer != SC_ID_NONE)
      return fail(ld, p, "'%s' is not an input of spec (node '%s' produces it)", nm,
                  sc_graph_node(ld->b->spec, st->producer)->name);
    if (in_set(seen, t))
      return fail(ld, p, "'%s' is listed twice", nm);
    g_hash_table_add(seen, GUINT_TO_POINTER(t + 1));
    g_array_append_val(ld->b->behind, t);
  }
  return TRUE;
}

/* Every input of inputs_behind_assumptions must be cut off from the checked
 * outputs by assumed tensors: walk back from check_outputs, not entering
 * the producer of an assumed tensor. */
static gboolean check_behind(loader *ld) {
  sc_bundle *b = ld->b;
  if (b->behind->len == 0)
    return TRUE;
  if (b->assume_rel.n_entries == 0)
    return fail(ld, "inputs_behind_assumptions",
                "inputs can only be behind assumptions when assume_relation is given");
  sc_graph *spec = b->spec;
  uint32_t nt = sc_graph_n_tensors(spec);
  /* reached_from[t]: 1 + index of the check output that reaches t, or 0. */
  g_autofree uint32_t *from = g_new0(uint32_t, nt ? nt : 1);
  g_autoptr(GArray) stack = g_array_new(FALSE, FALSE, sizeof(sc_id));
  for (uint32_t c = 0; c < b->check_outputs->len; c++) {
    sc_id t0 = g_array_index(b->check_outputs, sc_id, c);
    if (from[t0] != 0)
      continue;
    from[t0] = c + 1;
    g_array_append_val(stack, t0);
    while (stack->len > 0) {
      sc_id t = g_array_index(stack, sc_id, stack->len - 1);
      g_array_set_size(stack, stack->len - 1);
      const sc_tensor *tt = sc_graph_tensor(spec, t);
      if (tt->producer == SC_ID_NONE || sc_relation_find(&b->assume_rel, t) != NULL)
        continue;
      const sc_node *n = sc_graph_node(spec, tt->producer);
      for (uint32_t k = 0; k < n->n_inputs; k++)
        if (from[n->inputs[k]] == 0) {
          from[n->inputs[k]] = c + 1;
          g_array_append_val(stack, n->inputs[k]);
        }
    }
  }
  for (guint i = 0; i < b->behind->len; i++) {
    sc_id t = g_array_index(b->behind, sc_id, i);
    if (from[t] != 0) {
      g_autofree char *p = g_strdup_printf("inputs_behind_assumptions[%u]", i);
      sc_id out = g_array_index(b->check_outputs, sc_id, from[t] - 1);
      return fail(ld, p,
                  "'%s' reaches the checked output '%s' without passing a tensor of "
                  "assume_relation: map it in input_relation",
                  sc_graph_tensor(spec, t)->name, sc_graph_tensor(spec, out)->name);
    }
  }
  return TRUE;
}

static gboolean read_check_outputs(loader *ld, json_t *root) {
  json_t *co;
  sc_bundle *b = ld->b;
  if (!get_field(ld, "", root, "check_outputs", FALSE, JSON_ARRAY, "an array of tensor names",
                 &co))
    return FALSE;
  b->check_given = co != NULL;
  g_autoptr(GHashTable) outputs = output_set(b->spec);
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  if (co == NULL) {
    for (uint32_t i = 0; i < sc_graph_n_outputs(b->spec); i++) {
      sc_id t = sc_graph_output(b->spec, i);
      if (!in_set(seen, t)) {
        g_hash_table_add(seen, GUINT_TO_POINTER(t + 1));
        g_array_append_val(b->check_outputs, t);
      }
    }
    return TRUE;
  }
  for (size_t i = 0; i < json_array_size(co); i++) {
    g_autofree char *p = g_strdup_printf("check_outputs[%zu]", i);
    json_t *x = json_array_get(co, i);
    if (!expect_type(ld, p, x, JSON_STRING, "a tensor name"))
      return FALSE;
    sc_id t = sc_graph_find_tensor(b->spec, json_string_value(x));
    if (t == SC_ID_NONE || !in_set(outputs, t))
      return fail(ld, p, "'%s' is not an output of spec", json_string_value(x));
    if (in_set(seen, t))
      return fail(ld, p, "'%s' is listed twice", json_string_value(x));
    g_hash_table_add(seen, GUINT_TO_POINTER(t + 1));
    g_array_append_val(b->check_outputs, t);
  }
  return TRUE;
}

/* ---- entry points ---- */

static gboolean load_root(loader *ld, json_t *root) {
  sc_bundle *b = ld->b;
  if (!json_is_object(root)) {
    g_autofree char *d = describe_json(root);
    return fail(ld, "", "expected a bundle object at the top level, found %s", d);
  }
  static const char *const fields[] = {"format", "name", "description", "symbols", "assume",
                                       "spec", "impl", "input_relation",
                                       "expect_output_relation", "check_outputs",
                                       "assume_relation", "inputs_behind_assumptions", NULL};
  json_t *format, *name, *desc;
  if (!get_field(ld, "", root, "format", TRUE, JSON_STRING, "a string", &format))
    return FALSE;
  if (strcmp(json_string_value(format), SC_BUNDLE_FORMAT) != 0)
    return fail(ld, "format", "expected \"%s\", found \"%s\"", SC_BUNDLE_FORMAT,
                json_string_value(format));
  /* Unknown top-level fields are extensions: ignored, with a warning. */
  const char *k;
  json_t *v;
  json_object_foreach(root, k, v) {
    gboolean known = g_str_has_prefix(k, "x-") || g_str_has_prefix(k, "x_");
    for (const char *const *a = fields; *a && !known; a++)
      known = strcmp(*a, k) == 0;
    if (!known) {
      g_autofree char *p = key_path("", k);
      g_ptr_array_add(b->warnings,
                      g_strdup_printf("%s: %s: unknown top-level field '%s' ignored", ld->file,
                                      p, k));
    }
  }
  if (!get_field(ld, "", root, "name", FALSE, JSON_STRING, "a string", &name) ||
      !get_field(ld, "", root, "description", FALSE, JSON_STRING, "a string", &desc))
    return FALSE;
  if (name != NULL) {
    b->name = g_strdup(json_string_value(name));
  } else {
    g_autofree char *base = g_path_get_basename(ld->file);
    if (g_str_has_suffix(base, ".json"))
      base[strlen(base) - 5] = '\0';
    b->name = g_strdup(base);
  }
  b->description = desc ? g_strdup(json_string_value(desc)) : NULL;
  if (!read_symbols_at(ld, root, "", -1) || !check_satisfiable(ld, "assume", 0))
    return FALSE;
  uint32_t checked = sc_symtab_n_assumptions(b->st);
  return read_graph(ld, root, "spec", &b->spec) && read_graph(ld, root, "impl", &b->impl) &&
         check_satisfiable(ld, "impl", checked) && read_behind(ld, root) &&
         read_relation(ld, root, "input_relation", REL_INPUT, &b->input_rel, NULL) &&
         read_relation(ld, root, "expect_output_relation", REL_EXPECT, &b->expect_rel,
                       &b->has_expect) &&
         read_relation(ld, root, "assume_relation", REL_ASSUME, &b->assume_rel, NULL) &&
         read_check_outputs(ld, root) && check_behind(ld);
}

sc_bundle *sc_bundle_load_string_opts(const char *json, size_t len, const char *display_name,
                                      const sc_bundle_load_options *opts, sc_bundle_diag *diag,
                                      GError **error) {
  g_return_val_if_fail(json != NULL, NULL);
  sc_ops_init();
  const char *file = display_name ? display_name : "<string>";
  sc_bundle *b = g_new0(sc_bundle, 1);
  b->file = g_strdup(file);
  b->st = sc_symtab_new();
  /* The oracle hook: plugged in before anything asks a question. */
  if (opts != NULL && opts->oracle != NULL)
    sc_symtab_set_oracle(b->st, opts->oracle, opts->oracle_user);
  b->check_outputs = g_array_new(FALSE, FALSE, sizeof(sc_id));
  b->behind = g_array_new(FALSE, FALSE, sizeof(sc_id));
  b->warnings = g_ptr_array_new_with_free_func(g_free);
  loader ld = {b->file, b, diag, error, NULL, FALSE, -1};
  json_error_t jerr;
  json_arena arena;
  arena_begin(&arena);
  json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL) {
    arena_end(&arena);
    set_diag(&ld, "", jerr.line, jerr.column, jerr.text);
    g_set_error(error, SC_BUNDLE_ERROR, SC_BUNDLE_ERROR_SYNTAX, "%s:%d:%d: %s", file,
                jerr.line, jerr.column, jerr.text);
    sc_bundle_free(b);
    return NULL;
  }
  gboolean ok = load_root(&ld, root);
  json_decref(root); /* frees nothing: the arena does */
  arena_end(&arena);
  if (!ok) {
    sc_bundle_free(b);
    return NULL;
  }
  return b;
}

sc_bundle *sc_bundle_load_string_diag(const char *json, size_t len, const char *display_name,
                                      sc_bundle_diag *diag, GError **error) {
  return sc_bundle_load_string_opts(json, len, display_name, NULL, diag, error);
}

sc_bundle *sc_bundle_load_string(const char *json, const char *display_name, GError **error) {
  return sc_bundle_load_string_diag(json, strlen(json), display_name, NULL, error);
}

sc_bundle *sc_bundle_load_opts(const char *path, const sc_bundle_load_options *opts,
                               sc_bundle_diag *diag, GError **error) {
  g_autofree char *data = NULL;
  size_t len = 0;
  GError *err = NULL;
  /* a regular file under the input limit, else refused before reading */
  if (!sc_input_read(path, &data, &len, &err)) {
    if (diag != NULL) {
      sc_bundle_diag_clear(diag);
      diag->file = g_strdup(path);
      diag->path = g_strdup("");
      diag->what = g_strdup(err->message);
    }
    g_set_error(error, SC_BUNDLE_ERROR, SC_BUNDLE_ERROR_IO, "%s", err->message);
    g_error_free(err);
    return NULL;
  }
  return sc_bundle_load_string_opts(data, len, path, opts, diag, error);
}

sc_bundle *sc_bundle_load_diag(const char *path, sc_bundle_diag *diag, GError **error) {
  return sc_bundle_load_opts(path, NULL, diag, error);
}

sc_bundle *sc_bundle_load(const char *path, GError **error) {
  return sc_bundle_load_diag(path, NULL, error);
}

void sc_bundle_free(sc_bundle *b) {
  if (b == NULL)
    return;
  /* Expressions borrow the graphs, graphs borrow the symtab. */
  relation_clear(&b->input_rel);
  relation_clear(&b->expect_rel);
  relation_clear(&b->assume_rel);
  sc_graph_free(b->spec);
  sc_graph_free(b->impl);
  sc_symtab_free(b->st);
  g_array_free(b->check_outputs, TRUE);
  g_array_free(b->behind, TRUE);
  g_ptr_array_free(b->warnings, TRUE);
  g_free(b->file);
  g_free(b->name);
  g_free(b->description);
  g_free(b);
}

const char *sc_bundle_file(const sc_bundle *b) { return b->file; }
const char *sc_bundle_name(const sc_bundle *b) { return b->name; }
const char *sc_bundle_description(const sc_bundle *b) { return b->description; }
sc_symtab *sc_bundle_symtab(const sc_bundle *b) { return b->st; }
sc_graph *sc_bundle_spec(const sc_bundle *b) { return b->spec; }
sc_graph *sc_bundle_impl(const sc_bundle *b) { return b->impl; }
const sc_relation *sc_bundle_input_relation(const sc_bundle *b) { return &b->input_rel; }
const sc_relation *sc_bundle_expect_output_relation(const sc_bundle *b) {
  return &b->expect_rel;
}
gboolean sc_bundle_has_expect_output_relation(const sc_bundle *b) { return b->has_expect; }
const sc_relation *sc_bundle_assume_relation(const sc_bundle *b) { return &b->assume_rel; }
uint32_t sc_bundle_n_check_outputs(const sc_bundle *b) { return b->check_outputs->len; }
sc_id sc_bundle_check_output(const sc_bundle *b, uint32_t i) {
  g_return_val_if_fail(i < b->check_outputs->len, SC_ID_NONE);
  return g_array_index(b->check_outputs, sc_id, i);
}
gboolean sc_bundle_check_outputs_given(const sc_bundle *b) { return b->check_given; }
uint32_t sc_bundle_n_ranks(const sc_bundle *b) { return b->n_ranks; }
uint32_t sc_bundle_n_inputs_behind_assumptions(const sc_bundle *b) { return b->behind->len; }
sc_id sc_bundle_input_behind_assumptions(const sc_bundle *b, uint32_t i) {
  g_return_val_if_fail(i < b->behind->len, SC_ID_NONE);
  return g_array_index(b->behind, sc_id, i);
}
uint32_t sc_bundle_n_warnings(const sc_bundle *b) { return b->warnings->len; }
const char *sc_bundle_warning(const sc_bundle *b, uint32_t i) {
  g_return_val_if_fail(i < b->warnings->len, NULL);
  return g_ptr_array_index(b->warnings, i);
}
