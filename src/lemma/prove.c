/* prove.c — the shape prover of lemmas for all sizes (lemprove.h): the
 * driver.  Each lemma's configurations (a digit per enumerated variable,
 * then the dtype) are run one by one (prove-path.c), until one refutes or
 * cannot conclude; the report collects one result per lemma.
 *
 * The prover's other files are listed in prove-private.h. */
#include "lemma/prove-private.h"

#include <string.h>

static uint64_t time_hits(const sc_lemprove_options *o, void *user) {
  return o->oracle_time_hits ? o->oracle_time_hits(user) : 0;
}

/* A result not proved while the oracle ran out of wall time (T0: the count
 * before) says so instead of the load-dependent reason it met. */
static void mark_time(const sc_lemprove_options *o, void *user, uint64_t t0,
                      sc_lemprove_status *status, char **why) {
  uint64_t t = time_hits(o, user);
  if (t == t0 || *status == SC_LEMPROVE_PROVED || *status == SC_LEMPROVE_REFUTED)
    return;
  g_free(*why);
  *why = g_strdup_printf("over budget (time): the solver's wall-time limit per query ran out "
                         "%" G_GUINT64_FORMAT " times (a loaded machine; SC_SMT_TLIMIT_MS)",
                         t - t0);
}

/* Lemma LI at rank bound R, with one dtype shared by the tensor variables
 * or (MIXED) a dtype each. */
static void prove_at(const sc_lemma_set *set, uint32_t li, const sc_lemprove_options *o,
                     uint32_t R, gboolean mixed, const sc_sym_oracle *oracle, void *user,
                     sc_lemprove_result *r) {
  const ld_checked *k = sc_lemma_set_checked(set, li);
  r->status = SC_LEMPROVE_PROVED;
  r->rank_bound = R;
  r->mixed_dtypes = mixed;
  g_autofree vplan *plan = sc_lp_plan_vars(set, li, k, R, mixed, &r->why);
  if (plan == NULL) {
    r->status = SC_LEMPROVE_NOT_PROVABLE;
    return;
  }
  uint32_t nv = k->vars.names->len;
  g_autofree uint32_t *digit = g_new0(uint32_t, nv + 1);
  prun P = {0};
  P.k = k;
  g_autoptr(GPtrArray) made = g_ptr_array_new_with_free_func(g_free);
  P.where_sym = sc_lp_where_without(k, plan, made);
  P.plan = plan;
  P.nv = nv;
  P.R = R;
  P.mixed = mixed;
  P.digit = digit;
  P.inner = oracle;
  P.inner_user = user;
  P.types = g_new0(sc_ttype, nv ? nv : 1);
  P.values = g_new0(sc_value, nv ? nv : 1);
  P.sym_is_size = g_array_new(FALSE, FALSE, sizeof(gboolean));
  P.answers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  P.set = set;
  P.li = li;
  P.opts = o;
  lp_prune *pr = sc_lp_prune_new(&P);
  uint64_t t0 = time_hits(o, user);
  sc_lp_run_configs(&P, pr, o, r);
  if (r->status == SC_LEMPROVE_PROVED && r->typed == 0) {
    r->status = SC_LEMPROVE_NOT_PROVABLE;
    r->untyped = TRUE;
    r->why = g_strdup_printf("the left side is well-typed in no configuration at rank <= %u%s",
                             R, mixed ? " (a dtype per tensor)" : "");
  }
  mark_time(o, user, t0, &r->status, &r->why);
  r->layout = sc_lp_values_applies(k);
  if (o->values && r->layout && r->status == SC_LEMPROVE_PROVED) {
    /* the same configurations again, each typed path checked for values;
     * the typing's counts and budgets are not the values' */
    sc_lemprove_result v = {0};
    v.name = r->name;
    v.status = SC_LEMPROVE_PROVED;
    P.values_mode = TRUE;
    P.runs = 0;
    P.solver_calls = 0;
    t0 = time_hits(o, user);
    sc_lp_run_configs(&P, pr, o, &v);
    mark_time(o, user, t0, &v.status, &v.why);
    r->values = v.status;
    r->values_why = v.why;
    r->value_paths = v.paths;
  }
  sc_lp_prune_free(pr);
  sc_lp_run_clear(&P);
  g_free(P.types);
  g_free(P.values);
  g_array_free(P.sym_is_size, TRUE);
  g_hash_table_destroy(P.answers);
}

/* Lemma LI at rank bound O->rank_bound; while its left side is well-typed
 * in no configuration there (a rank-3 batched matmul, a rank-4 attention
 * layout: the bound proves nothing), again at the next bound, up to
 * O->max_rank_bound.  Where it is well-typed at none of them with one
 * dtype shared by its tensors (an integer index beside float data, a bool
 * mask), the same bounds again with a dtype per tensor: every assignment
 * of dtypes, a superset of the shared ones, so a proof there covers more.
 * The result says the bound and the dtypes it was proved with. */
static void prove_lemma(const sc_lemma_set *set, uint32_t li, const sc_lemprove_options *o,
                        const sc_sym_oracle *oracle, void *user, sc_lemprove_result *r) {
  uint32_t top = MAX(o->rank_bound, o->max_rank_bound);
  for (uint32_t step = 0;; step++) {
    gboolean mixed = step > top - o->rank_bound;
    uint32_t R = o->rank_bound + (mixed ? step - (top - o->rank_bound) - 1 : step);
    prove_at(set, li, o, R, mixed, oracle, user, r);
    if (!r->untyped || (mixed && R >= top))
      return;
    sc_lemprove_result fresh = {0};
    fresh.lemma = r->lemma;
    fresh.name = r->name;
    g_free(r->why);
    g_free(r->values_why);
    *r = fresh;
  }
}

/* ------------------------------------------------------------------------ */
/* The report                                                                */

struct sc_lemprove_report {
  GArray *results; /* sc_lemprove_result */
  uint32_t rank_bound;
  gboolean values;  /* values were tried (options) */
};

static gboolean values_tried(const sc_lemprove_report *rep, const sc_lemprove_result *r) {
  return rep->values && r->layout && r->status == SC_LEMPROVE_PROVED;
}

void sc_lemprove_options_init(sc_lemprove_options *opts) {
  opts->rank_bound = 2;
  opts->max_rank_bound = 4;
  opts->max_configs = 200000;
  opts->max_paths = 15000;
  opts->only = NULL;
  opts->part = 0;
  opts->parts = 1;
  opts->values = TRUE;
  opts->layout_only = FALSE;
  opts->check_instance = NULL;
  opts->check_user = NULL;
  opts->oracle_time_hits = NULL;
}

const char *sc_lemprove_status_name(sc_lemprove_status s) {
  switch (s) {
#define SC_X_LP(sym, word) \
  case sym:                \
    return word;
    SC_LEMPROVE_STATUSES(SC_X_LP)
#undef SC_X_LP
  }
  return "?";
}

sc_lemprove_report *sc_lemprove_run(const sc_lemma_set *set, const sc_lemprove_options *opts,
                                    const sc_sym_oracle *oracle, void *oracle_user) {
  sc_lemprove_report *rep = g_new0(sc_lemprove_report, 1);
  rep->results = g_array_new(FALSE, TRUE, sizeof(sc_lemprove_result));
  rep->rank_bound = opts->rank_bound;
  rep->values = opts->values;
  /* SC_LEMPROVE_TRACE=1: one line per lemma on stderr, with its wall time */
  gboolean trace = g_getenv("SC_LEMPROVE_TRACE") != NULL;
  for (uint32_t i = 0; i < sc_lemma_set_n_lemmas(set); i++) {
    const sc_lemma_info *info = sc_lemma_set_lemma(set, i);
    if (opts->only && !g_str_has_prefix(info->name, opts->only))
      continue;
    if (opts->parts > 1 && i % opts->parts != opts->part)
      continue;
    if (opts->layout_only && !sc_lp_values_applies(sc_lemma_set_checked(set, i)))
      continue;
    sc_lemprove_result r = {0};
    r.lemma = i;
    r.name = info->name;
    gint64 t0 = g_get_monotonic_time();
    prove_lemma(set, i, opts, oracle, oracle_user, &r);
    if (trace)
      fprintf(stderr, "lemmas prove: %s %s (values %s) %u configurations %u paths %.3f s\n",
              r.name, sc_lemprove_status_name(r.status),
              values_tried(rep, &r) ? sc_lemprove_status_name(r.values) : "-", r.configs, r.paths,
              (double)(g_get_monotonic_time() - t0) / 1e6);
    g_array_append_val(rep->results, r);
  }
  return rep;
}

void sc_lemprove_report_free(sc_lemprove_report *rep) {
  if (rep == NULL)
    return;
  for (guint i = 0; i < rep->results->len; i++)
  {
    g_free(g_array_index(rep->results, sc_lemprove_result, i).why);
    g_free(g_array_index(rep->results, sc_lemprove_result, i).values_why);
  }
  g_array_free(rep->results, TRUE);
  g_free(rep);
}

uint32_t sc_lemprove_report_n(const sc_lemprove_report *rep) { return rep->results->len; }

uint32_t sc_lemprove_report_rank_bound(const sc_lemprove_report *rep) { return rep->rank_bound; }

const sc_lemprove_result *sc_lemprove_report_get(const sc_lemprove_report *rep, uint32_t i) {
  g_return_val_if_fail(i < rep->results->len, NULL);
  return &g_array_index(rep->results, sc_lemprove_result, i);
}

void sc_lemprove_report_counts(const sc_lemprove_report *rep, uint32_t *proved,
                               uint32_t *refuted, uint32_t *not_provable) {
  uint32_t c[3] = {0, 0, 0};
  for (guint i = 0; i < rep->results->len; i++)
    c[g_array_index(rep->results, sc_lemprove_result, i).status]++;
  *proved = c[SC_LEMPROVE_PROVED];
  *refuted = c[SC_LEMPROVE_REFUTED];
  *not_provable = c[SC_LEMPROVE_NOT_PROVABLE];
}

void sc_lemprove_report_text(FILE *out, const sc_lemprove_report *rep) {
  for (guint i = 0; i < rep->results->len; i++) {
    const sc_lemprove_result *r = &g_array_index(rep->results, sc_lemprove_result, i);
    if (r->status == SC_LEMPROVE_PROVED)
      fprintf(out, "proved        %s (rank <= %u%s: %u configurations, %u paths, %u typed)\n",
              r->name, r->rank_bound, r->mixed_dtypes ? ", a dtype per tensor" : "", r->configs,
              r->paths, r->typed);
    else
      fprintf(out, "%-13s %s: %s\n",
              r->status == SC_LEMPROVE_REFUTED ? "refuted" : "not provable", r->name,
              r->why ? r->why : "");
    if (values_tried(rep, r) && r->values == SC_LEMPROVE_PROVED)
      fprintf(out, "  values proved for all sizes (%u paths)\n", r->value_paths);
    else if (values_tried(rep, r))
      fprintf(out, "  values %s: %s\n",
              r->values == SC_LEMPROVE_REFUTED ? "refuted" : "not provable",
              r->values_why ? r->values_why : "");
  }
  uint32_t p, f, u, vt, vp, vf, vu;
  sc_lemprove_report_counts(rep, &p, &f, &u);
  uint32_t higher = 0, top = rep->rank_bound;
  for (guint i = 0; i < rep->results->len; i++) {
    const sc_lemprove_result *r = &g_array_index(rep->results, sc_lemprove_result, i);
    if (r->status == SC_LEMPROVE_PROVED && r->rank_bound > rep->rank_bound) {
      higher++;
      top = MAX(top, r->rank_bound);
    }
  }
  fprintf(out, "%u lemmas: %u proved well-typed for all sizes at rank <= %u", rep->results->len, p,
          rep->rank_bound);
  if (higher)
    fprintf(out, " (%u of them at a bound up to %u: typed at no lower rank)", higher, top);
  fprintf(out, ", %u refuted, %u not provable by this method\n", f, u);
  sc_lemprove_report_value_counts(rep, &vt, &vp, &vf, &vu);
  if (rep->values)
    fprintf(out,
            "%u layout lemmas with typing proved: values proved for all sizes %u, refuted %u, "
            "not provable %u\n",
            vt, vp, vf, vu);
}

void sc_lemprove_report_value_counts(const sc_lemprove_report *rep, uint32_t *tried,
                                     uint32_t *proved, uint32_t *refuted,
                                     uint32_t *not_provable) {
  uint32_t c[3] = {0, 0, 0}, n = 0;
  for (guint i = 0; i < rep->results->len; i++) {
    const sc_lemprove_result *r = &g_array_index(rep->results, sc_lemprove_result, i);
    if (!values_tried(rep, r))
      continue;
    n++;
    c[r->values]++;
  }
  *tried = n;
  *proved = c[SC_LEMPROVE_PROVED];
  *refuted = c[SC_LEMPROVE_REFUTED];
  *not_provable = c[SC_LEMPROVE_NOT_PROVABLE];
}
