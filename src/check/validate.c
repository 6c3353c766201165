/* validate.c — `check --validate` (validate.h): pick symbol values, build
 * related inputs (inputs.c), run both graphs, evaluate every emitted,
 * expected and assumed relation, and on `fails` build counterexamples.
 *
 * Invariants: a relation is reported as not holding only after both sides
 * were evaluated on the same run; checks are deduplicated by (tensor,
 * expression text, kind class); a skipped validation says why and checks
 * nothing; spec tensors that depend on inputs behind assumptions (and are
 * not themselves assumed) are not compared, since the impl never sees
 * those inputs. */
#include "shardcheck/validate.h"
#include "shardcheck/lemcheck.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

const char *sc_vcheck_kind_name(sc_vcheck_kind k) {
  static const char *const names[] = {
#define SC_X_VK(sym, word) word,
      SC_VCHECK_KINDS(SC_X_VK)
#undef SC_X_VK
  };
  return (unsigned)k < G_N_ELEMENTS(names) ? names[k] : "?";
}

void sc_validate_options_init(sc_validate_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->seed = 1;
  opts->prefer_max = 8;
}

typedef struct {
  const sc_bundle *b;
  sc_graph *spec, *impl;
  int64_t *sym;
  sc_interp_config cfg;
  sc_tvalue **spec_vals, **impl_vals;
  gboolean *tainted;     /* spec tensors that depend on inputs behind assumptions */
  gboolean *overridden;  /* ... and were given their assumed expression's value */
  GArray *checks;        /* sc_vcheck */
  GArray *cexs;          /* sc_counterexample */
  GHashTable *seen;      /* "tensor\x1fexpr" of checks made */
} vctx;

static char *coords_text(const int64_t *c, uint32_t rank) {
  GString *s = g_string_new("[");
  for (uint32_t k = 0; k < rank; k++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? ", " : "", (gint64)c[k]);
  g_string_append_c(s, ']');
  return g_string_free(s, FALSE);
}

/* ---- the size check (no shape reduction yet) ----------------------------- */

static gboolean sizes_fit(const vctx *V, sc_graph *g, const char *which, int64_t limit,
                          char **why) {
  sc_symtab *st = sc_bundle_symtab(V->b);
  for (uint32_t t = 0; t < sc_graph_n_tensors(g); t++) {
    const sc_tensor *ten = sc_graph_tensor(g, t);
    int64_t n = 1;
    for (uint32_t k = 0; k < ten->type.shape.rank; k++) {
      int64_t d;
      if (!sc_dim_eval(st, ten->type.shape.dims[k], V->sym, &d) || d < 0) {
        *why = g_strdup_printf("a size of %s tensor '%s' does not evaluate", which, ten->name);
        return FALSE;
      }
      if (d > 0 && n > G_MAXINT64 / d) {
        n = G_MAXINT64;
        break;
      }
      n *= d;
    }
    if (n > limit) {
      *why = g_strdup_printf("%s tensor '%s' would have %" G_GINT64_FORMAT " elements, above the "
                             "interpreter's limit of %" G_GINT64_FORMAT " (SC_INTERP_MAX_ELEMENTS); "
                             "shape reduction (TrainVerify: every dim shrunk, divisibility by the "
                             "parallel degree kept) is not implemented yet, so nothing was "
                             "validated",
                             which, ten->name, (gint64)n, (gint64)limit);
      return FALSE;
    }
  }
  return TRUE;
}

static int64_t element_limit(const sc_validate_options *o) {
  if (o->max_elements > 0)
    return o->max_elements;
  const char *env = g_getenv("SC_INTERP_MAX_ELEMENTS");
  if (env != NULL && *env) {
    gint64 v = g_ascii_strtoll(env, NULL, 10);
    if (v > 0)
      return v;
  }
  return SC_INTERP_DEFAULT_MAX_ELEMENTS;
}

/* ---- running the spec with assumptions ------------------------------------ */

/* Run the spec graph; an assumed tensor that depends on inputs behind
 * assumptions takes its assumed expression's value over the impl. */
static gboolean run_spec(vctx *V, sc_tvalue **inputs, GError **error) {
  uint32_t nt = sc_graph_n_tensors(V->spec);
  V->spec_vals = g_new0(sc_tvalue *, nt ? nt : 1);
  V->tainted = g_new0(gboolean, nt ? nt : 1);
  V->overridden = g_new0(gboolean, nt ? nt : 1);
  for (uint32_t i = 0; i < sc_bundle_n_inputs_behind_assumptions(V->b); i++)
    V->tainted[sc_bundle_input_behind_assumptions(V->b, i)] = TRUE;
  for (uint32_t i = 0; i < sc_graph_n_inputs(V->spec); i++)
    V->spec_vals[sc_graph_input(V->spec, i)] = sc_tvalue_copy(inputs[i]);
  const sc_relation *as = sc_bundle_assume_relation(V->b);
  sc_symtab *st = sc_bundle_symtab(V->b);
  uint32_t n_order;
  const sc_id *order = sc_graph_topo_order(V->spec, &n_order);
  for (uint32_t k = 0; k < n_order; k++) {
    const sc_node *n = sc_graph_node(V->spec, order[k]);
    gboolean taint = FALSE;
    for (uint32_t i = 0; i < n->n_inputs; i++)
      taint = taint || V->tainted[n->inputs[i]];
    g_autoptr(GPtrArray) res = g_ptr_array_new_with_free_func((GDestroyNotify)sc_tvalue_free);
    GError *inner = NULL;
    /* a data-dependent size (nonzero's u0) takes the value the run gives */
    if (!sc_interp_bind_data_dependent(V->spec, n, V->spec_vals, V->sym, &inner) ||
        !sc_interp_eval(n->op, n->args, st, V->sym, V->spec_vals, nt, &V->cfg, res, &inner)) {
      g_set_error(error, inner->domain, inner->code, "spec node '%s' (%s%s%s): %s", n->name,
                  n->op->qualname, n->src ? ", " : "", n->src ? n->src : "", inner->message);
      g_error_free(inner);
      return FALSE;
    }
    for (uint32_t j = 0; j < n->n_results && j < res->len; j++) {
      sc_id r = n->results[j];
      if (r == SC_ID_NONE)
        continue;
      V->spec_vals[r] = res->pdata[j];
      res->pdata[j] = NULL;
      V->tainted[r] = taint;
      const sc_relation_entry *e = taint ? sc_relation_find(as, r) : NULL;
      if (e != NULL && e->n_exprs > 0) {
        sc_tvalue *x = sc_interp_eval_texpr(e->exprs[0], V->sym, V->impl_vals, &V->cfg, error);
        if (x == NULL)
          return FALSE;
        sc_tvalue_free(V->spec_vals[r]);
        V->spec_vals[r] = x;
        V->tainted[r] = FALSE;
        V->overridden[r] = TRUE;
      }
    }
  }
  return TRUE;
}

/* ---- checks ------------------------------------------------------------------ */

static void add_check(vctx *V, sc_vcheck_kind kind, sc_id t, const char *text,
                      const sc_texpr *bound) {
  const char *name = sc_graph_tensor(V->spec, t)->name;
  g_autofree char *key = g_strdup_printf("%u\x1f%s\x1f%d", t, text, kind == SC_VCHECK_ASSUMED);
  if (g_hash_table_contains(V->seen, key))
    return;
  g_hash_table_add(V->seen, g_steal_pointer(&key));
  sc_vcheck c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  c.tensor = g_strdup(name);
  c.expr = g_strdup(text);
  g_autoptr(sc_texpr) own = NULL;
  GError *err = NULL;
  if (bound == NULL)
    bound = own = sc_texpr_parse(text, V->impl, FALSE, &err);
  sc_tvalue *want = V->spec_vals[t];
  if (bound == NULL) {
    c.detail = g_strdup_printf("does not bind to the impl graph: %s", err->message);
    g_error_free(err);
  } else if (want == NULL) {
    c.detail = g_strdup("the spec tensor has no value");
  } else if (V->tainted[t]) {
    c.detail = g_strdup("depends on spec inputs behind assumptions, which the impl never sees");
  } else if (V->overridden[t] && kind == SC_VCHECK_ASSUMED) {
    c.detail = g_strdup("assumed over spec inputs behind assumptions: taken as given");
  } else {
    g_autoptr(sc_tvalue) got = sc_interp_eval_texpr(bound, V->sym, V->impl_vals, &V->cfg, &err);
    if (got == NULL) {
      c.detail = g_strdup_printf("cannot be evaluated: %s", err->message);
      g_error_free(err);
    } else {
      sc_tolerance tol = sc_tolerance_default();
      sc_tcompare cmp;
      c.evaluated = TRUE;
      c.holds = sc_tvalue_compare(want, got, &tol, &cmp);
      c.max_abs = cmp.shape_differs ? INFINITY : cmp.max_abs_diff;
      c.max_rel = cmp.shape_differs ? INFINITY : cmp.max_rel_diff;
      c.detail = sc_tcompare_to_string(&cmp, want, got);
      if (cmp.first_index >= 0 && !cmp.shape_differs) {
        c.index = coords_text(cmp.first_coords, want->rank);
        c.spec_value = cmp.first_expected;
        c.impl_value = cmp.first_actual;
      }
      if (sc_tvalue_count_empty_marks(want) > 0 || sc_tvalue_count_empty_marks(got) > 0) {
        char *d = g_strdup_printf("%s (values from empty())", c.detail);
        g_free(c.detail);
        c.detail = d;
      }
    }
  }
  g_array_append_val(V->checks, c);
}

static void check_relation(vctx *V, const sc_relation *rel, sc_vcheck_kind kind) {
  for (uint32_t i = 0; i < rel->n_entries; i++) {
    const sc_relation_entry *e = &rel->entries[i];
    for (uint32_t k = 0; k < e->n_exprs; k++)
      add_check(V, kind, e->tensor, e->texts[k], e->exprs[k]);
  }
}

static void check_all(vctx *V, const sc_infer_result *r) {
  check_relation(V, sc_bundle_assume_relation(V->b), SC_VCHECK_ASSUMED);
  for (uint32_t t = 0; t < sc_graph_n_tensors(V->spec); t++) {
    const GPtrArray *xs = sc_infer_tensor_exprs(r, t);
    for (guint k = 0; xs && k < xs->len; k++)
      add_check(V, SC_VCHECK_RELATION, t, xs->pdata[k], NULL);
  }
  for (uint32_t i = 0; i < sc_infer_n_checked(r); i++) {
    sc_id t = sc_infer_checked(r, i);
    const GPtrArray *xs = sc_infer_output_exprs(r, t);
    for (guint k = 0; xs && k < xs->len; k++)
      add_check(V, SC_VCHECK_OUTPUT, t, xs->pdata[k], NULL);
  }
  const sc_relation *ex = sc_bundle_expect_output_relation(V->b);
  for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++) {
    const sc_infer_expectation *x = sc_infer_expectation_at(r, i);
    if (!x->found)
      continue;
    const sc_relation_entry *e = sc_relation_find(ex, x->tensor);
    const sc_texpr *bound = NULL;
    for (uint32_t k = 0; e && k < e->n_exprs; k++)
      if (strcmp(e->texts[k], x->text) == 0)
        bound = e->exprs[k];
    add_check(V, SC_VCHECK_EXPECTED, x->tensor, x->text, bound);
  }
}

static void cex_clear(sc_counterexample *c);

/* ---- counterexamples ------------------------------------------------------------ */

/* Evaluate CANDIDATE (text or BOUND) against spec tensor T; FALSE when it
 * does not bind or evaluate. */
static gboolean make_cex(vctx *V, sc_id t, const char *text, const sc_texpr *bound,
                         const char *source, sc_counterexample *out) {
  memset(out, 0, sizeof *out);
  g_autoptr(sc_texpr) own = NULL;
  if (bound == NULL)
    bound = own = sc_texpr_parse(text, V->impl, FALSE, NULL);
  if (bound == NULL || V->spec_vals[t] == NULL)
    return FALSE;
  g_autoptr(sc_tvalue) got = sc_interp_eval_texpr(bound, V->sym, V->impl_vals, &V->cfg, NULL);
  if (got == NULL)
    return FALSE;
  const sc_tensor *ten = sc_graph_tensor(V->spec, t);
  out->tensor = g_strdup(ten->name);
  out->node = ten->producer != SC_ID_NONE
                  ? g_strdup(sc_graph_node(V->spec, ten->producer)->name)
                  : NULL;
  out->candidate = g_strdup(text);
  out->source = g_strdup(source);
  sc_tolerance tol = sc_tolerance_default();
  sc_tcompare c;
  out->differs = !sc_tvalue_compare(V->spec_vals[t], got, &tol, &c);
  out->detail = sc_tcompare_to_string(&c, V->spec_vals[t], got);
  if (out->differs && c.first_index >= 0 && !c.shape_differs) {
    out->index = coords_text(c.first_coords, got->rank);
    out->spec_value = c.first_expected;
    out->impl_value = c.first_actual;
  }
  return TRUE;
}

static void counterexamples(vctx *V, const sc_infer_result *r) {
  if (sc_infer_verdict(r) != SC_VERDICT_FAILS)
    return;
  if (sc_infer_failure_kind(r) == SC_FAILURE_UNMAPPED) {
    const GArray *un = sc_infer_failure_unmapped(r);
    const GPtrArray *near = sc_infer_failure_nearest(r);
    if (un != NULL && un->len > 0 && near != NULL) {
      sc_id t = g_array_index(un, sc_id, 0);
      /* the first nearest term that binds; if it agrees (a true identity
       * over operators the impl does not compute), also the first that
       * differs */
      gboolean shown = FALSE;
      for (guint k = 0; k < near->len; k++) {
        sc_counterexample c;
        if (!make_cex(V, t, near->pdata[k], NULL, "nearest term", &c))
          continue;
        if (!shown || c.differs) {
          gboolean stop = c.differs;
          g_array_append_val(V->cexs, c);
          shown = TRUE;
          if (stop)
            break;
        } else {
          cex_clear(&c);
        }
      }
    }
  }
  /* every expectation that was not found, evaluated */
  const sc_relation *ex = sc_bundle_expect_output_relation(V->b);
  for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++) {
    const sc_infer_expectation *x = sc_infer_expectation_at(r, i);
    if (x->found)
      continue;
    const sc_relation_entry *e = sc_relation_find(ex, x->tensor);
    const sc_texpr *bound = NULL;
    for (uint32_t k = 0; e && k < e->n_exprs; k++)
      if (strcmp(e->texts[k], x->text) == 0)
        bound = e->exprs[k];
    sc_counterexample c;
    if (make_cex(V, x->tensor, x->text, bound, "expected", &c))
      g_array_append_val(V->cexs, c);
  }
}

static void cex_clear(sc_counterexample *c) {
  g_free(c->tensor);
  g_free(c->node);
  g_free(c->candidate);
  g_free(c->source);
  g_free(c->index);
  g_free(c->detail);
}

/* ---- the run --------------------------------------------------------------------- */

static char *symbols_text(sc_symtab *st, const int64_t *vals) {
  GString *s = g_string_new(NULL);
  for (uint32_t i = 0; i < sc_symtab_n_symbols(st); i++)
    g_string_append_printf(s, "%s%s = %" G_GINT64_FORMAT, i ? ", " : "",
                           sc_symtab_symbol_name(st, i), (gint64)vals[i]);
  return g_string_free(s, FALSE);
}

/* V set up for B under OPTS and both graphs run on related inputs (the
 * seed OPTS->seed); NULL, or why they could not be run (the caller frees
 * it).  *SYMBOLS: the symbol values used (the caller frees it).  Free V
 * with vctx_clear either way. */
static char *vctx_run(vctx *V, const sc_bundle *b, const sc_validate_options *opts,
                      char **symbols) {
  int64_t limit = element_limit(opts);
  memset(V, 0, sizeof *V);
  V->b = b;
  V->spec = sc_bundle_spec(b);
  V->impl = sc_bundle_impl(b);
  V->cfg.seed = opts->seed;
  V->cfg.max_elements = limit;
  if (opts->lemmas != NULL) {
    /* custom kernels run through their definitions */
    V->cfg.fallback = sc_lemcheck_eval_declared;
    V->cfg.fallback_user = (void *)opts->lemmas;
  }
  V->checks = g_array_new(FALSE, TRUE, sizeof(sc_vcheck));
  V->cexs = g_array_new(FALSE, TRUE, sizeof(sc_counterexample));
  V->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  sc_symtab *st = sc_bundle_symtab(b);
  sc_rng rng;
  sc_rng_seed(&rng, opts->seed);
  V->sym = g_new0(int64_t, sc_symtab_n_symbols(st) + 1);
  GError *err = NULL;
  sc_tvalue **sin = NULL, **iin = NULL;
  char *why = NULL;
  *symbols = NULL;
  if (!sc_interp_pick_symbols(st, &rng, 1, opts->prefer_max > 0 ? opts->prefer_max : 8, V->sym,
                              &err)) {
    why = g_strdup_printf("no symbol values found: %s", err->message);
  } else {
    *symbols = symbols_text(st, V->sym);
    if (!sizes_fit(V, V->spec, "spec", limit, &why) || !sizes_fit(V, V->impl, "impl", limit, &why)) {
      /* why is set */
    } else if (!sc_validate_make_inputs(b, V->sym, &rng, limit, &sin, &iin, &err)) {
      why = g_strdup_printf("cannot build implementation inputs: %s", err->message);
    } else if (!sc_interp_run_graph(V->impl, V->sym, iin, &V->cfg, &V->impl_vals, NULL, &err)) {
      why = g_strdup_printf("the impl graph does not run: %s", err->message);
    } else if (!run_spec(V, sin, &err)) {
      why = g_strdup_printf("the spec graph does not run: %s", err->message);
    }
  }
  g_clear_error(&err);
  if (why == NULL) {
    /* data-dependent sizes (nonzero's u0) got their values during the runs */
    g_free(*symbols);
    *symbols = symbols_text(st, V->sym);
  }
  sc_interp_values_free(sin, sc_graph_n_inputs(V->spec));
  sc_interp_values_free(iin, sc_graph_n_inputs(V->impl));
  return why;
}

static void vcheck_clear(sc_vcheck *c) {
  g_free(c->tensor);
  g_free(c->expr);
  g_free(c->index);
  g_free(c->detail);
}

/* What vctx_run made, freed (V->checks and V->cexs only when still held). */
static void vctx_clear(vctx *V) {
  sc_interp_values_free(V->spec_vals, sc_graph_n_tensors(V->spec));
  sc_interp_values_free(V->impl_vals, sc_graph_n_tensors(V->impl));
  g_free(V->tainted);
  g_free(V->overridden);
  g_free(V->sym);
  g_hash_table_destroy(V->seen);
  if (V->checks) {
    for (guint i = 0; i < V->checks->len; i++)
      vcheck_clear(&g_array_index(V->checks, sc_vcheck, i));
    g_array_free(V->checks, TRUE);
  }
  if (V->cexs) {
    for (guint i = 0; i < V->cexs->len; i++)
      cex_clear(&g_array_index(V->cexs, sc_counterexample, i));
    g_array_free(V->cexs, TRUE);
  }
}

sc_validation *sc_validate_run(const sc_bundle *b, const sc_infer_result *r,
                               const sc_validate_options *opts) {
  sc_validate_options def;
  if (opts == NULL) {
    sc_validate_options_init(&def);
    opts = &def;
  }
  sc_validation *out = g_new0(sc_validation, 1);
  out->seed = opts->seed;
  vctx V;
  char *why = vctx_run(&V, b, opts, &out->symbols);
  if (why == NULL) {
    out->ran = TRUE;
    check_all(&V, r);
    counterexamples(&V, r);
  } else {
    out->skip_reason = why;
  }
  if (out->symbols == NULL)
    out->symbols = g_strdup("");
  out->n_checks = V.checks->len;
  out->checks = (sc_vcheck *)(void *)g_array_free(V.checks, FALSE);
  V.checks = NULL;
  out->n_counterexamples = V.cexs->len;
  out->counterexamples = (sc_counterexample *)(void *)g_array_free(V.cexs, FALSE);
  V.cexs = NULL;
  for (uint32_t i = 0; i < out->n_checks; i++) {
    const sc_vcheck *c = &out->checks[i];
    if (!c->evaluated)
      continue;
    out->n_evaluated++;
    if (!c->holds) {
      out->n_failed++;
      out->n_failed_assumed += c->kind == SC_VCHECK_ASSUMED;
    }
    out->max_abs = MAX(out->max_abs, c->max_abs);
    out->max_rel = MAX(out->max_rel, c->max_rel);
  }
  vctx_clear(&V);
  return out;
}

void sc_validation_free(sc_validation *v) {
  if (v == NULL)
    return;
  for (uint32_t i = 0; i < v->n_checks; i++) {
    g_free(v->checks[i].tensor);
    g_free(v->checks[i].expr);
    g_free(v->checks[i].index);
    g_free(v->checks[i].detail);
  }
  g_free(v->checks);
  for (uint32_t i = 0; i < v->n_counterexamples; i++)
    cex_clear(&v->counterexamples[i]);
  g_free(v->counterexamples);
  g_free(v->skip_reason);
  g_free(v->symbols);
  g_free(v);
}

gboolean sc_validation_unsound(const sc_validation *v) { return v->ran && v->n_failed > 0; }

/* ---- reports ------------------------------------------------------------------------ */

void sc_validation_text(FILE *out, const sc_validation *v) {
  if (!v->ran) {
    fprintf(out, "validation skipped: %s\n", v->skip_reason);
    return;
  }
  uint32_t not_eval = v->n_checks - v->n_evaluated;
  fprintf(out,
          "validation (seed %" G_GUINT64_FORMAT "%s%s): %u of %u relations hold, largest abs "
          "error %.3g, largest rel error %.3g",
          v->seed, *v->symbols ? ", " : "", v->symbols, v->n_evaluated - v->n_failed,
          v->n_evaluated, v->max_abs, v->max_rel);
  if (not_eval > 0)
    fprintf(out, ", %u not evaluated", not_eval);
  fputc('\n', out);
  for (uint32_t i = 0; i < v->n_checks; i++) {
    const sc_vcheck *c = &v->checks[i];
    if (c->evaluated && !c->holds) {
      if (c->kind == SC_VCHECK_ASSUMED)
        fprintf(out,
                "SOUNDNESS BUG: the assumed relation %s = %s does not hold on concrete values "
                "(the check trusted it): %s\n",
                c->tensor, c->expr, c->detail);
      else
        fprintf(out, "SOUNDNESS BUG: the %s relation %s = %s does not hold on concrete values: %s\n",
                c->kind == SC_VCHECK_RELATION ? "inferred"
                : c->kind == SC_VCHECK_OUTPUT ? "output"
                                              : "proved expected",
                c->tensor, c->expr, c->detail);
    } else if (!c->evaluated) {
      fprintf(out, "  not evaluated: %s = %s: %s\n", c->tensor, c->expr, c->detail);
    }
  }
  for (uint32_t i = 0; i < v->n_counterexamples; i++) {
    const sc_counterexample *c = &v->counterexamples[i];
    fprintf(out, "counterexample (%s): spec %s%s%s%s vs %s\n", c->source, c->tensor,
            c->node ? " (node " : "", c->node ? c->node : "", c->node ? ")" : "", c->candidate);
    if (c->differs && c->index)
      fprintf(out, "  differ at %s: spec %s = %.17g, %s = %.17g\n", c->index, c->tensor,
              c->spec_value, c->candidate, c->impl_value);
    else if (!c->differs && strcmp(c->source, "expected") == 0)
      fprintf(out, "  they agree on these values: the expected relation may hold, but shardcheck "
                   "did not prove it (a lemma may be missing)\n");
    else if (!c->differs)
      fprintf(out, "  they agree on these values: the term holds, but it is not a relation over "
                   "impl outputs (it uses impl intermediates or operators the impl does not "
                   "compute)\n");
    fprintf(out, "  %s\n", c->detail);
  }
}

static json_t *num(double x) {
  return isfinite(x) ? json_real(x) : json_string(isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

char *sc_validation_json(const sc_validation *v) {
  json_t *o = json_object();
  json_object_set_new(o, "status", json_string(v->ran ? "validated" : "skipped"));
  if (!v->ran)
    json_object_set_new(o, "reason", json_string(v->skip_reason));
  json_object_set_new(o, "seed", json_integer((json_int_t)v->seed));
  json_object_set_new(o, "symbols", json_string(v->symbols));
  json_object_set_new(o, "checked", json_integer(v->n_evaluated));
  json_object_set_new(o, "failed", json_integer(v->n_failed));
  json_object_set_new(o, "not_evaluated", json_integer(v->n_checks - v->n_evaluated));
  json_object_set_new(o, "max_abs_error", num(v->max_abs));
  json_object_set_new(o, "max_rel_error", num(v->max_rel));
  json_t *arr = json_array();
  for (uint32_t i = 0; i < v->n_checks; i++) {
    const sc_vcheck *c = &v->checks[i];
    json_t *x = json_object();
    json_object_set_new(x, "kind", json_string(sc_vcheck_kind_name(c->kind)));
    json_object_set_new(x, "tensor", json_string(c->tensor));
    json_object_set_new(x, "expr", json_string(c->expr));
    json_object_set_new(x, "evaluated", json_boolean(c->evaluated));
    json_object_set_new(x, "holds", json_boolean(c->holds));
    if (c->evaluated) {
      json_object_set_new(x, "max_abs_error", num(c->max_abs));
      json_object_set_new(x, "max_rel_error", num(c->max_rel));
    }
    if (c->index) {
      json_object_set_new(x, "index", json_string(c->index));
      json_object_set_new(x, "spec_value", num(c->spec_value));
      json_object_set_new(x, "impl_value", num(c->impl_value));
    }
    json_object_set_new(x, "detail", json_string(c->detail));
    json_array_append_new(arr, x);
  }
  json_object_set_new(o, "checks", arr);
  json_t *cx = json_array();
  for (uint32_t i = 0; i < v->n_counterexamples; i++) {
    const sc_counterexample *c = &v->counterexamples[i];
    json_t *x = json_object();
    json_object_set_new(x, "tensor", json_string(c->tensor));
    json_object_set_new(x, "node", c->node ? json_string(c->node) : json_null());
    json_object_set_new(x, "candidate", json_string(c->candidate));
    json_object_set_new(x, "source", json_string(c->source));
    json_object_set_new(x, "differs", json_boolean(c->differs));
    json_object_set_new(x, "index", c->index ? json_string(c->index) : json_null());
    if (c->index) {
      json_object_set_new(x, "spec_value", num(c->spec_value));
      json_object_set_new(x, "impl_value", num(c->impl_value));
    }
    json_object_set_new(x, "detail", json_string(c->detail));
    json_array_append_new(cx, x);
  }
  json_object_set_new(o, "counterexamples", cx);
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  char *ret = g_strdup(s);
  free(s);
  return ret;
}

/* ---- refutation ------------------------------------------------------------------ */

/* Does expression E (TEXT) of an expected entry for spec tensor T differ
 * from T's value on V's run?  Only a comparison of two computed values
 * counts: a tensor behind assumptions, one that does not evaluate, or one
 * with elements from empty() (unspecified values) never refutes.  The
 * comparison's text into *DETAIL when it differs. */
static gboolean expected_differs(vctx *V, sc_id t, const sc_texpr *e, char **detail) {
  sc_tvalue *want = V->spec_vals[t];
  if (e == NULL || want == NULL || V->tainted[t] || V->overridden[t])
    return FALSE;
  g_autoptr(sc_tvalue) got = sc_interp_eval_texpr(e, V->sym, V->impl_vals, &V->cfg, NULL);
  if (got == NULL || sc_tvalue_count_empty_marks(want) > 0 ||
      sc_tvalue_count_empty_marks(got) > 0)
    return FALSE;
  sc_tolerance tol = sc_tolerance_default();
  sc_tcompare cmp;
  if (sc_tvalue_compare(want, got, &tol, &cmp))
    return FALSE;
  *detail = sc_tcompare_to_string(&cmp, want, got);
  return TRUE;
}

char *sc_validate_refute_expected(const sc_bundle *b, const sc_validate_options *opts,
                                  uint32_t n_runs) {
  const sc_relation *ex = sc_bundle_expect_output_relation(b);
  if (ex == NULL || n_runs == 0)
    return NULL;
  /* per expression (entries in order, expressions in order): the runs it
   * differed on so far, and the first run's comparison */
  uint32_t n = 0;
  for (uint32_t i = 0; i < ex->n_entries; i++)
    n += ex->entries[i].n_exprs;
  if (n == 0)
    return NULL;
  uint32_t *differs = g_new0(uint32_t, n);
  char **first = g_new0(char *, n);
  char *symbols0 = NULL;
  gboolean ran = TRUE;
  for (uint32_t run = 0; run < n_runs && ran; run++) {
    sc_validate_options o = *opts;
    o.seed = opts->seed + run;
    vctx V;
    char *symbols = NULL;
    char *why = vctx_run(&V, b, &o, &symbols);
    ran = why == NULL;
    for (uint32_t i = 0, x = 0; ran && i < ex->n_entries; i++) {
      const sc_relation_entry *e = &ex->entries[i];
      for (uint32_t k = 0; k < e->n_exprs; k++, x++) {
        char *detail = NULL;
        if (differs[x] == run && expected_differs(&V, e->tensor, e->exprs[k], &detail)) {
          differs[x]++;
          if (run == 0)
            first[x] = detail;
          else
            g_free(detail);
        }
      }
    }
    if (run == 0)
      symbols0 = g_steal_pointer(&symbols);
    g_free(symbols);
    g_free(why);
    vctx_clear(&V);
  }
  char *out = NULL;
  for (uint32_t i = 0, x = 0; ran && out == NULL && i < ex->n_entries; i++) {
    const sc_relation_entry *e = &ex->entries[i];
    for (uint32_t k = 0; k < e->n_exprs && out == NULL; k++, x++)
      if (differs[x] == n_runs)
        out = g_strdup_printf("%s = %s differs on %u runs (seeds %" G_GUINT64_FORMAT "..%"
                              G_GUINT64_FORMAT "%s%s): %s",
                              sc_graph_tensor(sc_bundle_spec(b), e->tensor)->name, e->texts[k],
                              n_runs, opts->seed, opts->seed + n_runs - 1,
                              symbols0 && *symbols0 ? "; first run " : "",
                              symbols0 && *symbols0 ? symbols0 : "", first[x]);
  }
  for (uint32_t x = 0; x < n; x++)
    g_free(first[x]);
  g_free(first);
  g_free(differs);
  g_free(symbols0);
  return out;
}
