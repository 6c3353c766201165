/* diagnose.c — "not proved" or "the values differ" for an unmapped spec
 * node (diagnose.h).
 *
 * The search is value-directed, so that it stays linear in the impl graph:
 * a chunk of the spec tensor is looked up among the impl tensors of its
 * shape, instead of enumerating expressions.  Only the sum form enumerates
 * (one same-shaped tensor per rank, at most MAX_SUM_COMBOS combinations).
 * Every hit is then written as a relation, parsed as a clean expression
 * over the impl graph and evaluated by the interpreter: what is reported is
 * what the interpreter computed from the expression text, not what the
 * search compared. */
#include "shardcheck/diagnose.h"
#include "shardcheck/interp.h"
#include "shardcheck/lemcheck.h"
#include "shardcheck/validate.h"

#include <math.h>
#include <string.h>

#define DEFAULT_MAX_ELEMENTS (INT64_C(1) << 20)
#define MAX_SUM_COMBOS 4096
#define MAX_CAT_PARTS 16

const char *sc_diagnosis_kind_name(sc_diagnosis_kind k) {
  static const char *const names[] = {
#define SC_X_DIAG(sym, word) word,
      SC_DIAGNOSIS_KINDS(SC_X_DIAG)
#undef SC_X_DIAG
  };
  return (unsigned)k < G_N_ELEMENTS(names) ? names[k] : "?";
}

void sc_diagnose_options_init(sc_diagnose_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->seed = 1;
  opts->max_elements = DEFAULT_MAX_ELEMENTS;
}

typedef struct {
  const sc_bundle *b;
  sc_graph *impl;
  int64_t *sym;
  sc_interp_config cfg;
  sc_tvalue **ivals;     /* impl values by tensor id */
  const sc_tvalue *want; /* the spec tensor's value */
  double scale;          /* max(1, max |want|) */
  GArray *pool;          /* candidate impl tensor ids */
  uint32_t tried;
} dctx;

static gboolean close_enough(double a, double b, double scale) {
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b))
    return a == b;
  return fabs(a - b) <= 1e-9 * scale + 1e-7 * fabs(a);
}

static gboolean same_dims_except(const sc_tvalue *a, const sc_tvalue *b, uint32_t d) {
  if (a->rank != b->rank)
    return FALSE;
  for (uint32_t k = 0; k < a->rank; k++)
    if (k != d && a->dims[k] != b->dims[k])
      return FALSE;
  return TRUE;
}

/* Is SMALL equal to BIG's elements [S, S + small->dims[D]) along dim D
 * (all other dims equal)? */
static gboolean chunk_equal(const dctx *D, const sc_tvalue *big, const sc_tvalue *small,
                            uint32_t d, int64_t s) {
  int64_t outer = 1, inner = 1;
  for (uint32_t k = 0; k < d; k++)
    outer *= big->dims[k];
  for (uint32_t k = d + 1; k < big->rank; k++)
    inner *= big->dims[k];
  int64_t bd = big->dims[d], sd = small->dims[d];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < sd; i++)
      for (int64_t n = 0; n < inner; n++) {
        double x = big->data[(o * bd + s + i) * inner + n];
        double y = small->data[(o * sd + i) * inner + n];
        if (!close_enough(x, y, D->scale))
          return FALSE;
      }
  return TRUE;
}

static gboolean same_shape(const sc_tvalue *a, const sc_tvalue *b) {
  return a->rank == b->rank && memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

static gboolean values_equal(const dctx *D, const sc_tvalue *x) {
  if (!same_shape(D->want, x))
    return FALSE;
  for (int64_t i = 0; i < x->numel; i++)
    if (!close_enough(D->want->data[i], x->data[i], D->scale))
      return FALSE;
  return TRUE;
}

static const char *iname(const dctx *D, sc_id t) { return sc_graph_tensor(D->impl, t)->name; }

/* TEXT as a clean relation over the impl graph, evaluated and compared
 * with the spec value by the interpreter's own comparison. */
static gboolean verify(dctx *D, const char *text) {
  D->tried++;
  g_autoptr(sc_texpr) e = sc_texpr_parse(text, D->impl, TRUE, NULL);
  if (e == NULL)
    return FALSE;
  g_autoptr(sc_tvalue) got = sc_interp_eval_texpr(e, D->sym, D->ivals, &D->cfg, NULL);
  if (got == NULL)
    return FALSE;
  sc_tolerance tol = sc_tolerance_default();
  sc_tcompare c;
  return sc_tvalue_compare(D->want, got, &tol, &c);
}

static char *find_identity(dctx *D) {
  for (guint i = 0; i < D->pool->len; i++) {
    sc_id t = g_array_index(D->pool, sc_id, i);
    if (values_equal(D, D->ivals[t]) && verify(D, iname(D, t)))
      return g_strdup(iname(D, t));
  }
  return NULL;
}

/* "view(X, shape=[...])" to WANT's shape, or X's name when X has it. */
static char *as_want_shape(const dctx *D, sc_id t) {
  const sc_tvalue *x = D->ivals[t];
  if (same_shape(D->want, x))
    return g_strdup(iname(D, t));
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "view(%s, shape=[", iname(D, t));
  for (uint32_t k = 0; k < D->want->rank; k++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? ", " : "", (gint64)D->want->dims[k]);
  g_string_append(s, "])");
  return g_string_free(s, FALSE);
}

/* An impl tensor of another shape whose elements, in order, are WANT's:
 * a view of it. */
static char *find_view(dctx *D) {
  for (guint i = 0; i < D->pool->len; i++) {
    sc_id t = g_array_index(D->pool, sc_id, i);
    const sc_tvalue *x = D->ivals[t];
    if (x->numel != D->want->numel || same_shape(D->want, x))
      continue;
    gboolean eq = TRUE;
    for (int64_t e = 0; e < x->numel && eq; e++)
      eq = close_enough(D->want->data[e], x->data[e], D->scale);
    if (!eq)
      continue;
    char *text = as_want_shape(D, t);
    if (verify(D, text))
      return text;
    g_free(text);
  }
  return NULL;
}

/* The impl tensor equal to WANT's chunk [S, S+len) along D, or NONE. */
static sc_id find_chunk(const dctx *D, uint32_t d, int64_t s, int64_t len) {
  for (guint i = 0; i < D->pool->len; i++) {
    sc_id t = g_array_index(D->pool, sc_id, i);
    const sc_tvalue *x = D->ivals[t];
    if (x->dims[d] == len && same_dims_except(D->want, x, d) && chunk_equal(D, D->want, x, d, s))
      return t;
  }
  return SC_ID_NONE;
}

/* Is WANT's chunk [S, S+len) along D equal to BIG's [B, B+len)? */
static gboolean chunks_equal(const dctx *D, const sc_tvalue *big, int64_t b, uint32_t d,
                             int64_t s, int64_t len) {
  int64_t outer = 1, inner = 1;
  for (uint32_t k = 0; k < d; k++)
    outer *= big->dims[k];
  for (uint32_t k = d + 1; k < big->rank; k++)
    inner *= big->dims[k];
  int64_t bd = big->dims[d], wd = D->want->dims[d];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < len; i++)
      for (int64_t n = 0; n < inner; n++)
        if (!close_enough(D->want->data[(o * wd + s + i) * inner + n],
                          big->data[(o * bd + b + i) * inner + n], D->scale))
          return FALSE;
  return TRUE;
}

/* WANT's chunk [S, S+len) along D as a clean expression: an impl tensor,
 * or a slice of a larger one at a multiple of LEN (a rank's piece of a
 * tensor that holds more than its piece: a gather the impl dropped leaves
 * each rank's own piece inside a tensor of the full size).  NULL when
 * neither. */
static char *chunk_text(const dctx *D, uint32_t d, int64_t s, int64_t len) {
  sc_id t = find_chunk(D, d, s, len);
  if (t != SC_ID_NONE)
    return g_strdup(iname(D, t));
  for (guint i = 0; i < D->pool->len; i++) {
    sc_id u = g_array_index(D->pool, sc_id, i);
    const sc_tvalue *x = D->ivals[u];
    if (x->rank != D->want->rank || x->dims[d] <= len || x->dims[d] % len != 0 ||
        !same_dims_except(D->want, x, d))
      continue;
    for (int64_t b = 0; b < x->dims[d]; b += len)
      if (chunks_equal(D, x, b, d, s, len))
        return g_strdup_printf("slice(%s, dim=%u, start=%" G_GINT64_FORMAT ", end=%" G_GINT64_FORMAT
                               ")",
                               iname(D, u), d, (gint64)b, (gint64)(b + len));
  }
  return NULL;
}

static char *find_cat(dctx *D) {
  const sc_tvalue *w = D->want;
  for (uint32_t d = 0; d < w->rank; d++)
    for (int64_t k = 2; k <= MAX_CAT_PARTS && k <= w->dims[d]; k++) {
      if (w->dims[d] % k != 0)
        continue;
      int64_t len = w->dims[d] / k;
      GString *s = g_string_new("cat(");
      gboolean all = TRUE;
      for (int64_t j = 0; j < k && all; j++) {
        g_autofree char *part = chunk_text(D, d, j * len, len);
        all = part != NULL;
        if (all)
          g_string_append_printf(s, "%s%s", j ? ", " : "", part);
      }
      g_string_append_printf(s, ", dim=%u)", d);
      if (all && verify(D, s->str))
        return g_string_free(s, FALSE);
      g_string_free(s, TRUE);
    }
  return NULL;
}

static char *find_slice(dctx *D) {
  const sc_tvalue *w = D->want;
  for (guint i = 0; i < D->pool->len; i++) {
    sc_id t = g_array_index(D->pool, sc_id, i);
    const sc_tvalue *x = D->ivals[t];
    for (uint32_t d = 0; d < w->rank; d++) {
      if (w->dims[d] == 0 || x->dims[d] <= w->dims[d] || x->dims[d] % w->dims[d] != 0 ||
          !same_dims_except(w, x, d))
        continue;
      for (int64_t s = 0; s < x->dims[d]; s += w->dims[d]) {
        if (!chunk_equal(D, x, w, d, s))
          continue;
        char *text = g_strdup_printf("slice(%s, dim=%u, start=%" G_GINT64_FORMAT
                                     ", end=%" G_GINT64_FORMAT ")",
                                     iname(D, t), d, (gint64)s, (gint64)(s + w->dims[d]));
        if (verify(D, text))
          return text;
        g_free(text);
      }
    }
  }
  return NULL;
}

/* One same-shaped impl tensor per rank, summed: the partial sums of a
 * reduction split over the ranks.  With VIEWS, one tensor per rank with
 * WANT's number of elements, each viewed to WANT's shape (the partials of
 * a reduction the impl computes on a flattened layout). */
static char *find_sum(dctx *D, gboolean views) {
  sc_graph *impl = D->impl;
  g_autoptr(GHashTable) by_rank = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                                        (GDestroyNotify)g_array_unref);
  for (guint i = 0; i < D->pool->len; i++) {
    sc_id t = g_array_index(D->pool, sc_id, i);
    int32_t rank = sc_graph_tensor(impl, t)->rank;
    if (rank < 0 || (views ? D->ivals[t]->numel != D->want->numel
                           : !same_shape(D->want, D->ivals[t])))
      continue;
    GArray *a = g_hash_table_lookup(by_rank, GINT_TO_POINTER(rank + 1));
    if (a == NULL) {
      a = g_array_new(FALSE, FALSE, sizeof(sc_id));
      g_hash_table_insert(by_rank, GINT_TO_POINTER(rank + 1), a);
    }
    g_array_append_val(a, t);
  }
  guint n = g_hash_table_size(by_rank);
  if (n < 2)
    return NULL;
  g_autofree GArray **groups = g_new(GArray *, n);
  guint gi = 0;
  uint64_t combos = 1;
  for (int32_t r = 0; gi < n; r++) {
    GArray *a = g_hash_table_lookup(by_rank, GINT_TO_POINTER(r + 1));
    if (a == NULL)
      continue;
    groups[gi++] = a;
    combos *= a->len;
    if (combos > MAX_SUM_COMBOS)
      return NULL;
  }
  g_autofree guint *pick = g_new0(guint, n);
  g_autofree double *acc = g_new(double, D->want->numel > 0 ? (gsize)D->want->numel : 1);
  for (uint64_t c = 0; c < combos; c++) {
    uint64_t rest = c;
    for (guint j = 0; j < n; j++) {
      pick[j] = (guint)(rest % groups[j]->len);
      rest /= groups[j]->len;
    }
    memset(acc, 0, (size_t)D->want->numel * sizeof *acc);
    for (guint j = 0; j < n; j++) {
      const sc_tvalue *x = D->ivals[g_array_index(groups[j], sc_id, pick[j])];
      for (int64_t e = 0; e < x->numel; e++)
        acc[e] += x->data[e];
    }
    gboolean eq = TRUE;
    for (int64_t e = 0; e < D->want->numel && eq; e++)
      eq = close_enough(D->want->data[e], acc[e], D->scale * (double)n);
    if (!eq)
      continue;
    GString *s = g_string_new("sum(");
    for (guint j = 0; j < n; j++) {
      g_autofree char *part = as_want_shape(D, g_array_index(groups[j], sc_id, pick[j]));
      g_string_append_printf(s, "%s%s", j ? ", " : "", part);
    }
    g_string_append_c(s, ')');
    if (verify(D, s->str))
      return g_string_free(s, FALSE);
    g_string_free(s, TRUE);
  }
  return NULL;
}

/* When no form matches: the split into equal chunks along one dim where
 * the most chunks are impl tensors (at least one, not all), described as
 * (report: "along dim 0 in 2 chunks: [0, 4) = r0:mul, [4, 8) matches no
 * impl tensor"), with the first element of the first unmatched chunk as the place the
 * values differ.  FALSE when no chunk of any split matches. */
static gboolean partial_cat(dctx *D, sc_diagnosis *out) {
  const sc_tvalue *w = D->want;
  uint32_t best_d = 0;
  int64_t best_k = 0, best_matched = 0;
  for (uint32_t d = 0; d < w->rank; d++)
    for (int64_t k = 2; k <= MAX_CAT_PARTS && k <= w->dims[d]; k++) {
      if (w->dims[d] % k != 0)
        continue;
      int64_t matched = 0;
      for (int64_t j = 0; j < k; j++)
        matched += find_chunk(D, d, j * (w->dims[d] / k), w->dims[d] / k) != SC_ID_NONE;
      if (matched > 0 && matched < k && (best_k == 0 || matched * best_k > best_matched * k)) {
        best_d = d;
        best_k = k;
        best_matched = matched;
      }
    }
  if (best_k == 0)
    return FALSE;
  int64_t len = w->dims[best_d] / best_k;
  out->partial_dim = best_d;
  out->partial_chunks = (uint32_t)best_k;
  out->partial_len = len;
  out->partial_tensors = g_new0(char *, (gsize)best_k + 1); /* best_k > 0 */
  gboolean placed = FALSE;
  for (int64_t j = 0; j < best_k; j++) {
    sc_id t = find_chunk(D, best_d, j * len, len);
    if (t != SC_ID_NONE)
      out->partial_tensors[j] = g_strdup(iname(D, t));
    if (t == SC_ID_NONE && !placed) {
      placed = TRUE;
      int64_t coords[SC_MAX_RANK] = {0};
      coords[best_d] = j * len;
      GString *ix = g_string_new("[");
      for (uint32_t k = 0; k < w->rank; k++)
        g_string_append_printf(ix, "%s%" G_GINT64_FORMAT, k ? ", " : "", (gint64)coords[k]);
      g_string_append_c(ix, ']');
      out->index = g_string_free(ix, FALSE);
      out->spec_value = w->data[sc_tvalue_offset(w, coords)];
    }
  }
  return TRUE;
}

/* The counterexample: the spec value against the expected expressions of
 * the tensor, else against the same-shaped candidate that differs least. */
static void counterexample(dctx *D, const sc_infer_result *r, sc_id t, sc_diagnosis *out) {
  sc_tolerance tol = sc_tolerance_default();
  sc_tcompare best;
  g_autoptr(sc_tvalue) best_val = NULL;
  char *best_text = NULL;
  for (uint32_t i = 0; i < sc_infer_n_expectations(r) && best_text == NULL; i++) {
    const sc_infer_expectation *x = sc_infer_expectation_at(r, i);
    if (x->tensor != t || x->found)
      continue;
    g_autoptr(sc_texpr) e = sc_texpr_parse(x->text, D->impl, FALSE, NULL);
    sc_tvalue *got = e ? sc_interp_eval_texpr(e, D->sym, D->ivals, &D->cfg, NULL) : NULL;
    if (got == NULL)
      continue;
    sc_tvalue_compare(D->want, got, &tol, &best);
    best_val = got;
    best_text = g_strdup(x->text);
  }
  for (guint i = 0; i < D->pool->len && best_text == NULL; i++) {
    sc_id it = g_array_index(D->pool, sc_id, i);
    if (!same_shape(D->want, D->ivals[it]))
      continue;
    sc_tcompare c;
    sc_tvalue_compare(D->want, D->ivals[it], &tol, &c);
    if (best_val == NULL || c.max_abs_diff < best.max_abs_diff) {
      best = c;
      sc_tvalue_free(best_val);
      best_val = sc_tvalue_copy(D->ivals[it]);
      g_free(out->candidate);
      out->candidate = g_strdup(iname(D, it));
    }
  }
  if (best_text != NULL) {
    g_free(out->candidate);
    out->candidate = best_text;
  }
  if (best_val == NULL) {
    out->detail = g_strdup("no impl tensor has its shape, and no expected expression evaluates");
    return;
  }
  out->detail = sc_tcompare_to_string(&best, D->want, best_val);
  if (best.first_index >= 0 && !best.shape_differs) {
    GString *s = g_string_new("[");
    for (uint32_t k = 0; k < D->want->rank; k++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? ", " : "",
                             (gint64)best.first_coords[k]);
    g_string_append_c(s, ']');
    out->index = g_string_free(s, FALSE);
    out->spec_value = best.first_expected;
    out->impl_value = best.first_actual;
  }
}

static gboolean is_checked_output(const sc_infer_result *r, sc_id t) {
  for (uint32_t i = 0; i < sc_infer_n_checked(r); i++)
    if (sc_infer_checked(r, i) == t)
      return TRUE;
  return FALSE;
}

static char *symbols_text(sc_symtab *st, const int64_t *vals) {
  GString *s = g_string_new(NULL);
  for (uint32_t i = 0; i < sc_symtab_n_symbols(st); i++)
    g_string_append_printf(s, "%s%s = %" G_GINT64_FORMAT, i ? ", " : "",
                           sc_symtab_symbol_name(st, i), (gint64)vals[i]);
  return g_string_free(s, FALSE);
}

/* Multiplies the floating inputs by SCALE (exact: a power of two) and
 * checks that the input relation still holds (it does for the clean views,
 * cats and sums; not for a constant such as arange). */
static gboolean scale_inputs(const dctx *D, sc_tvalue **sin, sc_tvalue **iin, double scale) {
  sc_graph *spec = sc_bundle_spec(D->b);
  for (uint32_t i = 0; i < sc_graph_n_inputs(spec); i++)
    if (sc_dtype_is_floating(sin[i]->dtype))
      for (int64_t e = 0; e < sin[i]->numel; e++)
        sin[i]->data[e] *= scale;
  uint32_t n_impl = sc_graph_n_inputs(D->impl);
  g_autofree sc_tvalue **by_id = g_new0(sc_tvalue *, sc_graph_n_tensors(D->impl) + 1);
  for (uint32_t i = 0; i < n_impl; i++) {
    if (sc_dtype_is_floating(iin[i]->dtype))
      for (int64_t e = 0; e < iin[i]->numel; e++)
        iin[i]->data[e] *= scale;
    by_id[sc_graph_input(D->impl, i)] = iin[i];
  }
  const sc_relation *rel = sc_bundle_input_relation(D->b);
  sc_tolerance tol = sc_tolerance_default();
  for (uint32_t k = 0; rel && k < rel->n_entries; k++) {
    const sc_relation_entry *e = &rel->entries[k];
    const sc_tvalue *want = NULL;
    for (uint32_t i = 0; i < sc_graph_n_inputs(spec); i++)
      if (sc_graph_input(spec, i) == e->tensor)
        want = sin[i];
    for (uint32_t j = 0; want && j < e->n_exprs; j++) {
      g_autoptr(sc_tvalue) got = sc_interp_eval_texpr(e->exprs[j], D->sym, by_id, &D->cfg, NULL);
      sc_tcompare c;
      if (got == NULL || !sc_tvalue_compare(want, got, &tol, &c))
        return FALSE;
    }
  }
  return TRUE;
}

/* Runs both graphs on inputs from SEED, floating inputs times SCALE;
 * FALSE with *WHY set when they cannot be run.  Replaces D->ivals and
 * *SVALS. */
static gboolean run_graphs(dctx *D, uint64_t seed, double scale, sc_tvalue ***svals,
                           char **why) {
  const sc_bundle *b = D->b;
  sc_graph *spec = sc_bundle_spec(b);
  sc_symtab *st = sc_bundle_symtab(b);
  const sc_relation *assumed = sc_bundle_assume_relation(b);
  if (assumed && assumed->n_entries) {
    *why = g_strdup("the bundle assumes relations (assume_relation) that random inputs would "
                    "not honour");
    return FALSE;
  }
  if (D->ivals)
    sc_interp_values_free(D->ivals, sc_graph_n_tensors(D->impl));
  if (*svals)
    sc_interp_values_free(*svals, sc_graph_n_tensors(spec));
  D->ivals = NULL;
  *svals = NULL;
  sc_rng rng;
  sc_rng_seed(&rng, seed);
  D->cfg.seed = seed;
  GError *err = NULL;
  sc_tvalue **sin = NULL, **iin = NULL;
  gboolean ok = FALSE;
  if (!sc_interp_pick_symbols(st, &rng, 1, 8, D->sym, &err))
    *why = g_strdup_printf("no symbol values found: %s", err->message);
  else if (!sc_validate_make_inputs(b, D->sym, &rng, D->cfg.max_elements, &sin, &iin, &err))
    *why = g_strdup_printf("cannot build related inputs: %s", err->message);
  else if (scale != 1 && !scale_inputs(D, sin, iin, scale))
    *why = g_strdup("the input relation does not survive scaling the inputs");
  else if (!sc_interp_run_graph(D->impl, D->sym, iin, &D->cfg, &D->ivals, NULL, &err))
    *why = g_strdup_printf("the impl graph does not run: %s", err->message);
  else if (!sc_interp_run_graph(spec, D->sym, sin, &D->cfg, svals, NULL, &err))
    *why = g_strdup_printf("the spec graph does not run: %s", err->message);
  else
    ok = TRUE;
  g_clear_error(&err);
  if (sin)
    sc_interp_values_free(sin, sc_graph_n_inputs(spec));
  if (iin)
    sc_interp_values_free(iin, sc_graph_n_inputs(D->impl));
  return ok;
}

static void set_want(dctx *D, const sc_tvalue *want) {
  D->want = want;
  D->scale = 1;
  for (int64_t i = 0; i < want->numel; i++)
    if (isfinite(want->data[i]))
      D->scale = MAX(D->scale, fabs(want->data[i]));
}

/* VALUES_DIFFER against TEXT on the current run (a confirmation run). */
static void differ_from(dctx *D, const char *text, sc_diagnosis *out) {
  out->kind = SC_DIAGNOSIS_VALUES_DIFFER;
  out->candidate = g_strdup(text);
  g_autoptr(sc_texpr) e = sc_texpr_parse(text, D->impl, TRUE, NULL);
  g_autoptr(sc_tvalue) got = e ? sc_interp_eval_texpr(e, D->sym, D->ivals, &D->cfg, NULL) : NULL;
  if (got == NULL)
    return;
  sc_tolerance tol = sc_tolerance_default();
  sc_tcompare c;
  sc_tvalue_compare(D->want, got, &tol, &c);
  g_autofree char *cmp = sc_tcompare_to_string(&c, D->want, got);
  out->detail = g_strdup_printf("the values agree with %s on the first inputs but not on these: %s",
                                text, cmp);
  if (c.first_index >= 0 && !c.shape_differs) {
    GString *s = g_string_new("[");
    for (uint32_t k = 0; k < D->want->rank; k++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? ", " : "", (gint64)c.first_coords[k]);
    g_string_append_c(s, ']');
    out->index = g_string_free(s, FALSE);
    out->spec_value = c.first_expected;
    out->impl_value = c.first_actual;
  }
}

/* The runs that must confirm a match: other seeds, larger and smaller
 * floating inputs (a bug that shows only past some threshold, clamp or
 * masks, is less likely to hide in all three). */
static const struct {
  uint64_t seed_offset;
  double scale;
} confirm_runs[] = {{1, 16.0}, {2, 1.0 / 16.0}};

/* The impl tensors a relation of T may use: the impl outputs for a
 * checked output, every impl tensor with a value otherwise. */
static void fill_pool(dctx *D, const sc_infer_result *r, sc_id t) {
  g_array_set_size(D->pool, 0);
  if (is_checked_output(r, t)) {
    for (uint32_t i = 0; i < sc_graph_n_outputs(D->impl); i++) {
      sc_id it = sc_graph_output(D->impl, i);
      gboolean dup = FALSE;
      for (guint j = 0; j < D->pool->len && !dup; j++)
        dup = g_array_index(D->pool, sc_id, j) == it;
      if (!dup && D->ivals[it] != NULL)
        g_array_append_val(D->pool, it);
    }
  } else {
    for (sc_id it = 0; it < sc_graph_n_tensors(D->impl); it++)
      if (D->ivals[it] != NULL)
        g_array_append_val(D->pool, it);
  }
}

/* Diagnoses spec tensor T of node NODE on the base run (*SVALS, from
 * opts->seed), then confirms a match on the confirmation runs (which
 * replace *SVALS).  Fills OUT's kind and what goes with it. */
static void diagnose_tensor(dctx *D, const sc_diagnose_options *opts, const sc_infer_result *r,
                            sc_id t, sc_tvalue ***svals, sc_diagnosis *out) {
  sc_graph *spec = sc_bundle_spec(D->b);
  const sc_tensor *ten = sc_graph_tensor(spec, t);
  out->tensor = g_strdup(ten->name);
  out->node = g_strdup(sc_graph_node(spec, ten->producer)->name);
  out->seed = opts->seed;
  if ((*svals)[t] == NULL) {
    out->kind = SC_DIAGNOSIS_SKIPPED;
    out->reason = g_strdup("the spec tensor has no value (a result not produced)");
    return;
  }
  set_want(D, (*svals)[t]);
  fill_pool(D, r, t);
  /* the bundle's expectations say what is right for this tensor */
  gboolean expected = FALSE;
  char *found = NULL;
  for (uint32_t i = 0; i < sc_infer_n_expectations(r) && found == NULL; i++) {
    const sc_infer_expectation *x = sc_infer_expectation_at(r, i);
    if (x->tensor != t)
      continue;
    expected = TRUE;
    if (verify(D, x->text))
      found = g_strdup(x->text);
  }
  g_autofree char *other = NULL;
  if (found == NULL) {
    other = find_identity(D);
    if (other == NULL)
      other = find_cat(D);
    if (other == NULL)
      other = find_slice(D);
    if (other == NULL)
      other = find_sum(D, FALSE);
    if (other == NULL)
      other = find_view(D);
    if (other == NULL)
      other = find_sum(D, TRUE);
    if (!expected)
      found = g_steal_pointer(&other);
  }
  if (found == NULL) {
    out->kind = SC_DIAGNOSIS_VALUES_DIFFER;
    if (expected || !partial_cat(D, out))
      counterexample(D, r, t, out);
    out->other_match = g_steal_pointer(&other);
    char *searched =
        out->partial_tensors ? g_strdup("no impl tensor, cat of chunks, slice or sum over ranks "
                                        "matches; some chunks are impl tensors")
        : expected ? g_strdup_printf("no expected expression matches; closest: %s",
                                   out->detail ? out->detail : "none")
                 : g_strdup_printf("no %s tensor, cat of chunks, slice or sum over ranks "
                                   "matches; closest: %s",
                                   is_checked_output(r, t) ? "impl output" : "impl",
                                   out->detail ? out->detail : "none");
    g_free(out->detail);
    out->detail = searched;
    return;
  }
  out->kind = SC_DIAGNOSIS_NOT_PROVED;
  out->expression = found;
  for (guint k = 0; k < G_N_ELEMENTS(confirm_runs); k++) {
    char *skip = NULL;
    uint64_t seed = opts->seed + confirm_runs[k].seed_offset;
    if (!run_graphs(D, seed, confirm_runs[k].scale, svals, &skip) || (*svals)[t] == NULL) {
      g_free(skip);
      continue;
    }
    set_want(D, (*svals)[t]);
    if (verify(D, found)) {
      out->confirmations++;
      continue;
    }
    out->expression = NULL;
    out->seed = seed;
    differ_from(D, found, out);
    g_free(found);
    return;
  }
}

/* The first result of spec node N without a clean relation, or NONE. */
static sc_id unmapped_result(const sc_bundle *b, const sc_infer_result *r, sc_id n) {
  const sc_node *node = sc_graph_node(sc_bundle_spec(b), n);
  for (uint32_t i = 0; i < node->n_results; i++) {
    sc_id t = node->results[i];
    const GPtrArray *e = t == SC_ID_NONE ? NULL : sc_infer_tensor_exprs(r, t);
    if (t != SC_ID_NONE && (e == NULL || e->len == 0))
      return t;
  }
  return SC_ID_NONE;
}

static void diagnosis_clear(sc_diagnosis *d) {
  g_free(d->tensor);
  g_free(d->node);
  g_free(d->expression);
  g_free(d->other_match);
  for (uint32_t i = 0; d->partial_tensors && i < d->partial_chunks; i++)
    g_free(d->partial_tensors[i]);
  g_free(d->partial_tensors);
  g_free(d->candidate);
  g_free(d->index);
  g_free(d->detail);
  g_free(d->reason);
  g_free(d->symbols);
  g_free(d->not_proved_node);
  g_free(d->not_proved_expression);
}


sc_diagnosis *sc_diagnose(const sc_bundle *b, const sc_infer_result *r,
                          const sc_diagnose_options *opts) {
  if (sc_infer_verdict(r) != SC_VERDICT_FAILS || sc_infer_failure_kind(r) != SC_FAILURE_UNMAPPED ||
      sc_infer_failure_node(r) == SC_ID_NONE || sc_infer_failure_unmapped(r)->len == 0)
    return NULL;
  sc_diagnose_options def;
  if (opts == NULL) {
    sc_diagnose_options_init(&def);
    opts = &def;
  }
  sc_graph *spec = sc_bundle_spec(b);
  sc_id t = g_array_index(sc_infer_failure_unmapped(r), sc_id, 0);
  sc_diagnosis *out = g_new0(sc_diagnosis, 1);
  dctx D;
  memset(&D, 0, sizeof D);
  D.b = b;
  D.impl = sc_bundle_impl(b);
  D.cfg.max_elements = opts->max_elements > 0 ? opts->max_elements : DEFAULT_MAX_ELEMENTS;
  if (opts->lemmas != NULL) {
    D.cfg.fallback = sc_lemcheck_eval_declared;
    D.cfg.fallback_user = (void *)opts->lemmas;
  }
  sc_symtab *st = sc_bundle_symtab(b);
  D.sym = g_new0(int64_t, sc_symtab_n_symbols(st) + 1);
  D.pool = g_array_new(FALSE, FALSE, sizeof(sc_id));
  sc_tvalue **svals = NULL;
  char *why = NULL;
  if (!run_graphs(&D, opts->seed, 1.0, &svals, &why)) {
    out->kind = SC_DIAGNOSIS_SKIPPED;
    out->reason = why;
    out->seed = opts->seed;
    out->tensor = g_strdup(sc_graph_tensor(spec, t)->name);
    out->node = g_strdup(sc_graph_node(spec, sc_infer_failure_node(r))->name);
  } else {
    out->symbols = symbols_text(st, D.sym);
    diagnose_tensor(&D, opts, r, t, &svals, out);
    /* not proved there, and the walk went on with a deferred relation:
     * where it stopped may be where the values first differ */
    sc_id stop = sc_infer_failure_stop_node(r);
    sc_id st_t = stop == SC_ID_NONE ? SC_ID_NONE : unmapped_result(b, r, stop);
    char *skip = NULL;
    if (out->kind == SC_DIAGNOSIS_NOT_PROVED && st_t != SC_ID_NONE &&
        run_graphs(&D, opts->seed, 1.0, &svals, &skip)) {
      sc_diagnosis later;
      memset(&later, 0, sizeof later);
      diagnose_tensor(&D, opts, r, st_t, &svals, &later);
      if (later.kind == SC_DIAGNOSIS_VALUES_DIFFER) {
        later.not_proved_node = g_steal_pointer(&out->node);
        later.not_proved_expression = g_steal_pointer(&out->expression);
        later.symbols = g_steal_pointer(&out->symbols);
        diagnosis_clear(out);
        *out = later;
      } else {
        diagnosis_clear(&later);
      }
    }
    g_free(skip);
  }
  if (out->symbols == NULL)
    out->symbols = g_strdup("");
  out->candidates_tried = D.tried;
  g_array_unref(D.pool);
  if (svals)
    sc_interp_values_free(svals, sc_graph_n_tensors(spec));
  if (D.ivals)
    sc_interp_values_free(D.ivals, sc_graph_n_tensors(D.impl));
  g_free(D.sym);
  return out;
}

void sc_diagnosis_free(sc_diagnosis *d) {
  if (d == NULL)
    return;
  diagnosis_clear(d);
  g_free(d);
}
