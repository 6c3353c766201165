/* report-text.c — the human report of a check (report.h, sc_report_text).
 *
 * Every expression over impl tensors is printed with the tensors' labels
 * ("r0:gelu", names.c); the impl tensors met are collected as the report
 * goes and listed at the end with their rank, producing operator, source
 * line and type, so that no name is left to guess.  Colour (colour.c) only
 * marks: the verdict, the failing node, missing expectations, headings. */
#include "report/report-private.h"

#include <string.h>

/* How many forms of an input's relation a failure report prints (the JSON
 * report lists them all): the smallest come first, and the others are
 * mostly the same term over aliases of the same impl tensors. */
#define INPUT_FORMS_SHOWN 4
/* How many impl tensors the legend lists (the JSON report lists them all). */
#define LEGEND_SHOWN 32

typedef struct {
  FILE *out;
  const sc_bundle *b;
  const sc_infer_result *r;
  const sc_report_options *opts;
  GArray *seen;    /* impl tensors named so far (sc_id), for the legend */
  GPtrArray *pool; /* marked texts, freed at the end */
} text_ctx;

static const char *spec_name(const text_ctx *c, sc_id t) {
  return sc_graph_tensor(sc_bundle_spec(c->b), t)->name;
}

/* EXPR with impl tensor labels; lives until the report is written. */
static const char *mark(text_ctx *c, const char *expr) {
  char *m = sc_report_mark_expr(c->b, expr, c->seen);
  g_ptr_array_add(c->pool, m);
  return m;
}

static const char *sgr(const text_ctx *c, sc_report_style s) { return sc_report_sgr(c->opts, s); }

static void print_relation_lines(text_ctx *c, const sc_relation *rel, const char *indent) {
  for (uint32_t i = 0; rel && i < rel->n_entries; i++) {
    const sc_relation_entry *e = &rel->entries[i];
    for (uint32_t j = 0; j < e->n_exprs; j++)
      fprintf(c->out, "%s%s = %s\n", indent, spec_name(c, e->tensor), mark(c, e->texts[j]));
  }
}

static void print_exprs(text_ctx *c, const char *indent, const char *name, const GPtrArray *exprs) {
  if (!exprs || exprs->len == 0) {
    fprintf(c->out, "%s%s = %s(no clean expression)%s\n", indent, name, sgr(c, SC_STYLE_RED),
            sgr(c, SC_STYLE_RESET));
    return;
  }
  for (guint i = 0; i < exprs->len; i++)
    fprintf(c->out, "%s%s = %s\n", indent, name, mark(c, g_ptr_array_index(exprs, i)));
}

/* The relation of spec tensor T as an input of the failing node: its
 * clean expressions (at most INPUT_FORMS_SHOWN), else the non-clean
 * relation it was deferred with, marked as such. */
static void print_input_relation(text_ctx *c, const char *indent, sc_id t) {
  const char *name = spec_name(c, t);
  const GPtrArray *exprs = sc_infer_tensor_exprs(c->r, t);
  const GPtrArray *deferred = sc_infer_tensor_deferred_exprs(c->r, t);
  if ((!exprs || exprs->len == 0) && deferred && deferred->len) {
    for (guint i = 0; i < deferred->len && i < INPUT_FORMS_SHOWN; i++)
      fprintf(c->out, "%s%s = %s   %s(not clean: deferred)%s\n", indent, name,
              mark(c, g_ptr_array_index(deferred, i)), sgr(c, SC_STYLE_YELLOW),
              sgr(c, SC_STYLE_RESET));
    exprs = deferred;
  } else if (!exprs || exprs->len <= INPUT_FORMS_SHOWN) {
    print_exprs(c, indent, name, exprs);
    return;
  } else {
    for (guint i = 0; i < INPUT_FORMS_SHOWN; i++)
      fprintf(c->out, "%s%s = %s\n", indent, name, mark(c, g_ptr_array_index(exprs, i)));
  }
  if (exprs->len > INPUT_FORMS_SHOWN)
    fprintf(c->out, "%s  ... %u more form%s (--format json lists them all)\n", indent,
            exprs->len - INPUT_FORMS_SHOWN, exprs->len - INPUT_FORMS_SHOWN == 1 ? "" : "s");
}

/* Each relation's chain: the spec call, then "N. = TERM   by REASON". */
static void print_relation_explanations(text_ctx *c) {
  sc_graph *spec = sc_bundle_spec(c->b);
  fprintf(c->out, "%swhy the relations hold%s (each step rewrites one place of the term, for the "
                  "reason given):\n",
          sgr(c, SC_STYLE_BOLD), sgr(c, SC_STYLE_RESET));
  for (uint32_t i = 0; i < sc_infer_n_relation_explanations(c->r); i++) {
    const sc_relation_explanation *e = sc_infer_relation_explanation(c->r, i);
    const sc_node *n = sc_graph_node(spec, e->node);
    fprintf(c->out, "  %s = %s   (%sspec node %s%s%s)\n", spec_name(c, e->tensor),
            mark(c, e->relation), e->output ? "" : "intermediate, ", n->name, n->src ? " at " : "",
            n->src ? n->src : "");
    fprintf(c->out, "        %s\n", mark(c, e->start));
    for (uint32_t j = 0; j < e->n_steps; j++)
      fprintf(c->out, "    %2u. = %s   %sby %s%s\n", j + 1, mark(c, e->steps[j].term),
              sgr(c, SC_STYLE_DIM), e->steps[j].reason, sgr(c, SC_STYLE_RESET));
    if (e->total_steps > e->n_steps)
      fprintf(c->out, "        ... %" G_GUINT64_FORMAT " more step%s\n",
              (guint64)(e->total_steps - e->n_steps),
              e->total_steps - e->n_steps == 1 ? "" : "s");
  }
}

/* The outputs of the failing node that map over impl intermediates only. */
static void print_intermediate_only(text_ctx *c, const GArray *um) {
  for (guint i = 0; i < um->len; i++) {
    sc_id t = g_array_index(um, sc_id, i);
    const GPtrArray *inter = sc_infer_tensor_exprs(c->r, t);
    if (!inter || !inter->len)
      continue;
    fprintf(c->out, "  (%s has clean expressions over impl intermediates only:\n", spec_name(c, t));
    for (guint j = 0; j < inter->len && j < 4; j++)
      fprintf(c->out, "     %s = %s\n", spec_name(c, t), mark(c, g_ptr_array_index(inter, j)));
    if (inter->len > 4)
      fprintf(c->out, "     ... (%u more)\n", inter->len - 4);
    fprintf(c->out, "   the impl does not return them)\n");
  }
}

/* The spec call of node N, "aten.mm.default(x, w1)". */
static char *spec_call(text_ctx *c, const sc_node *n) {
  GString *s = g_string_new(n->op->qualname);
  g_string_append_c(s, '(');
  for (uint32_t i = 0; i < n->n_inputs; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", spec_name(c, n->inputs[i]));
  g_string_append_c(s, ')');
  return g_string_free(s, FALSE);
}

/* "Not proved" or "the values differ" (diagnose.h), under the failing
 * node's line. */
static void print_diagnosis(text_ctx *c, const sc_node *n) {
  const sc_diagnosis *d = c->opts ? c->opts->diagnosis : NULL;
  if (d == NULL)
    return;
  switch (d->kind) {
  case SC_DIAGNOSIS_NOT_PROVED: {
    g_autofree char *call = spec_call(c, n);
    fprintf(c->out,
            "  %snot proved%s: on related random inputs (seed %" G_GUINT64_FORMAT
            "%s%s; %u more run%s with other seeds and scaled inputs) the values agree with\n"
            "    %s = %s\n"
            "  a lemma is probably missing for the step %s = %s, given the inputs' relations "
            "below\n",
            sgr(c, SC_STYLE_YELLOW), sgr(c, SC_STYLE_RESET), d->seed, *d->symbols ? ", " : "",
            d->symbols, d->confirmations, d->confirmations == 1 ? "" : "s", d->tensor,
            mark(c, d->expression), call, mark(c, d->expression));
    break;
  }
  case SC_DIAGNOSIS_VALUES_DIFFER:
    fprintf(c->out,
            "  %sthe values differ%s: on related random inputs (seed %" G_GUINT64_FORMAT
            "%s%s), %s is the first spec node whose values no clean expression tried matches\n",
            sgr(c, SC_STYLE_RED), sgr(c, SC_STYLE_RESET), d->seed, *d->symbols ? ", " : "",
            d->symbols, d->node);
    if (d->candidate && d->index)
      fprintf(c->out, "  counterexample: at %s, spec %s = %.10g, %s = %.10g\n", d->index,
              d->tensor, d->spec_value, mark(c, d->candidate), d->impl_value);
    if (d->partial_tensors) {
      fprintf(c->out, "  spec %s along dim %u in %u chunks:", d->tensor, d->partial_dim,
              d->partial_chunks);
      for (uint32_t j = 0; j < d->partial_chunks; j++)
        fprintf(c->out, "%s [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") %s%s", j ? "," : "",
                (gint64)(j * d->partial_len), (gint64)((j + 1) * d->partial_len),
                d->partial_tensors[j] ? "= " : "matches no impl tensor",
                d->partial_tensors[j] ? mark(c, d->partial_tensors[j]) : "");
      fprintf(c->out, "\n");
    } else {
      fprintf(c->out, "    (%s)\n", d->detail);
    }
    if (d->not_proved_node)
      fprintf(c->out, "  (%s, where the check first stopped, is not proved: its values agree with "
                      "%s; a lemma is probably missing there)\n",
              d->not_proved_node, mark(c, d->not_proved_expression));
    if (d->other_match)
      fprintf(c->out, "  the values do agree with %s = %s, which is not the relation expected\n",
              d->tensor, mark(c, d->other_match));
    break;
  case SC_DIAGNOSIS_SKIPPED:
    fprintf(c->out, "  (not told apart from a missing lemma: %s)\n", d->reason);
    break;
  }
}

/* The first spec output whose expected relation was not found: its name,
 * its producer and what was expected (the found forms follow in the output
 * relation). */
static void print_unexpected(text_ctx *c, sc_id node) {
  sc_graph *spec = sc_bundle_spec(c->b);
  const sc_infer_expectation *e = sc_infer_first_unfound_expectation(c->r);
  if (e == NULL)
    return;
  fprintf(c->out, "%sthe relation found for spec output %s is not the one expected:%s %s = %s",
          sgr(c, SC_STYLE_RED), spec_name(c, e->tensor), sgr(c, SC_STYLE_RESET),
          spec_name(c, e->tensor), mark(c, e->text));
  if (node != SC_ID_NONE)
    fprintf(c->out, " was not proved at spec node %s (%s)", sc_graph_node(spec, node)->name,
            sc_graph_node(spec, node)->op->qualname);
  fputc('\n', c->out);
}

/* An unmapped spec node: where, what is known about its inputs, what was
 * tried, and where a deferred walk finally stopped. */
static void print_unmapped(text_ctx *c, sc_verdict v, sc_id node) {
  sc_graph *spec = sc_bundle_spec(c->b);
  const sc_node *n = sc_graph_node(spec, node);
  if (v == SC_VERDICT_LIMIT)
    fprintf(c->out, "stopped by the %s at spec node '%s'\n", sc_infer_limit_reason(c->r), n->name);
  if (v == SC_VERDICT_FAILS && sc_infer_refutation(c->r))
    fprintf(c->out,
            "stopped by the %s at spec node '%s', and the values refute an expected output "
            "relation, so no search proves the program: %s\n",
            sc_infer_limit_reason(c->r), n->name, sc_infer_refutation(c->r));
  fprintf(c->out, "first unmapped spec node: %s%s%s (%s)%s%s\n", sgr(c, SC_STYLE_RED), n->name,
          sgr(c, SC_STYLE_RESET), n->op->qualname, n->src ? " at " : "", n->src ? n->src : "");
  print_diagnosis(c, n);
  const GArray *um = sc_infer_failure_unmapped(c->r);
  fprintf(c->out, "  outputs with no clean expression over impl tensors:");
  for (guint i = 0; i < um->len; i++)
    fprintf(c->out, " %s", spec_name(c, g_array_index(um, sc_id, i)));
  fprintf(c->out, "\n");
  print_intermediate_only(c, um);
  fprintf(c->out, "  its inputs' relations:\n");
  for (uint32_t i = 0; i < n->n_inputs; i++)
    print_input_relation(c, "    ", n->inputs[i]);
  fprintf(c->out, "  impl nodes explored at this node: %u\n", sc_infer_failure_explored(c->r));
  const GPtrArray *und = sc_infer_failure_undecided(c->r);
  if (und->len) {
    fprintf(c->out, "  undecided side conditions (these lemmas could not fire; the failure may "
                    "be the prover's, not the model's):\n");
    for (guint i = 0; i < und->len; i++)
      fprintf(c->out, "    %s\n", (const char *)g_ptr_array_index(und, i));
  }
  const GPtrArray *near = sc_infer_failure_nearest(c->r);
  if (near->len) {
    fprintf(c->out, "  nearest terms (non-clean parts show what is off):\n");
    for (guint i = 0; i < near->len; i++)
      fprintf(c->out, "    %s\n", mark(c, g_ptr_array_index(near, i)));
  }
  sc_id stop = sc_infer_failure_stop_node(c->r);
  if (stop != SC_ID_NONE) {
    const sc_node *sn = sc_graph_node(spec, stop);
    const char *why = v == SC_VERDICT_FAILS ? sc_infer_limit_reason(c->r) : NULL;
    fprintf(c->out,
            "  the walk went on with non-clean relations for it and stopped at %s (%s)%s%s%s%s:\n",
            sn->name, sn->op->qualname, sn->src ? " at " : "", sn->src ? sn->src : "",
            why ? ", which reached the " : "", why ? why : "");
    for (uint32_t i = 0; i < sn->n_inputs; i++)
      print_input_relation(c, "    ", sn->inputs[i]);
    const GPtrArray *sfar = sc_infer_failure_stop_nearest(c->r);
    for (guint i = 0; i < sfar->len; i++)
      fprintf(c->out, "    nearest: %s\n", mark(c, g_ptr_array_index(sfar, i)));
  }
}

static void print_outputs_and_expectations(text_ctx *c, sc_verdict v) {
  fprintf(c->out, "%soutput relation:%s\n", sgr(c, SC_STYLE_BOLD), sgr(c, SC_STYLE_RESET));
  for (uint32_t i = 0; i < sc_infer_n_checked(c->r); i++) {
    sc_id t = sc_infer_checked(c->r, i);
    const GPtrArray *exprs = sc_infer_output_exprs(c->r, t);
    if (exprs || v == SC_VERDICT_REFINES)
      print_exprs(c, "  ", spec_name(c, t), exprs);
    else
      fprintf(c->out, "  %s = (not reached)\n", spec_name(c, t));
  }
  uint32_t n = sc_infer_n_expectations(c->r);
  if (n == 0)
    return;
  uint32_t found = 0;
  for (uint32_t i = 0; i < n; i++)
    found += sc_infer_expectation_at(c->r, i)->found ? 1 : 0;
  fprintf(c->out, "expectations: %u of %u found\n", found, n);
  for (uint32_t i = 0; i < n; i++) {
    const sc_infer_expectation *e = sc_infer_expectation_at(c->r, i);
    fprintf(c->out, "  %s%-8s%s %s = %s\n", sgr(c, e->found ? SC_STYLE_GREEN : SC_STYLE_RED),
            e->found ? "found" : "MISSING", sgr(c, SC_STYLE_RESET), spec_name(c, e->tensor),
            mark(c, e->text));
  }
}

/* The legend: what each impl tensor named above is. */
static void print_impl_legend(text_ctx *c) {
  if (c->seen->len == 0)
    return;
  fprintf(c->out, "impl tensors named above (spec tensors are on the left of '='):\n");
  for (guint i = 0; i < c->seen->len && i < LEGEND_SHOWN; i++) {
    sc_id t = g_array_index(c->seen, sc_id, i);
    g_autofree char *label = sc_report_impl_label(c->b, t);
    g_autofree char *where = sc_report_impl_where(c->b, t);
    fprintf(c->out, "  %s%s%s  %s\n", sgr(c, SC_STYLE_CYAN), label, sgr(c, SC_STYLE_RESET), where);
  }
  if (c->seen->len > LEGEND_SHOWN)
    fprintf(c->out, "  ... %u more (--format json lists them all under impl_tensors)\n",
            c->seen->len - LEGEND_SHOWN);
}

void sc_report_text(FILE *out, const sc_bundle *b, const sc_infer_result *r,
                    const sc_report_options *opts) {
  text_ctx c = {out, b, r, opts, g_array_new(FALSE, FALSE, sizeof(sc_id)),
                g_ptr_array_new_with_free_func(g_free)};
  const sc_infer_stats *st = sc_infer_get_stats(r);
  sc_verdict v = sc_infer_verdict(r);
  fprintf(out, "%s: %s%s%s\n", sc_bundle_name(b), sgr(&c, sc_report_verdict_style(v)),
          sc_verdict_name(v), sgr(&c, SC_STYLE_RESET));

  const sc_relation *assumed = sc_bundle_assume_relation(b);
  if (assumed && assumed->n_entries) {
    fprintf(out, "assumed without proof (assume_relation):\n");
    print_relation_lines(&c, assumed, "  ");
  }

  if (v == SC_VERDICT_FAILS || v == SC_VERDICT_LIMIT) {
    sc_failure_kind k = sc_infer_failure_kind(r);
    sc_id node = sc_infer_failure_node(r);
    if (k == SC_FAILURE_UNMAPPED && node != SC_ID_NONE)
      print_unmapped(&c, v, node);
    else if (k == SC_FAILURE_UNEXPECTED_RELATION)
      print_unexpected(&c, node);
  }
  print_outputs_and_expectations(&c, v);

  for (uint32_t i = 0; i < sc_infer_n_assumptions(r); i++) {
    const sc_infer_assumption *a = sc_infer_assumption_at(r, i);
    fprintf(out, "assumed: %s (used by %s)\n", a->text, a->used_by);
  }
  sc_report_print_assumed_ops(out, opts);
  /* data-dependent sizes proved equal (infer.h, sc_infer_learned_sizes) */
  const GPtrArray *learned = sc_infer_learned_sizes(r);
  for (guint i = 0; i < learned->len; i++)
    fprintf(out, "size learned: %s\n", (const char *)g_ptr_array_index(learned, i));
  /* layer memoization: the blocks carried by isomorphism (a few, then a count) */
  const sc_graph *spec = sc_bundle_spec(c.b);
  for (uint32_t i = 0; i < sc_infer_n_carried_blocks(r) && i < 8; i++) {
    const sc_infer_carried_block *cb = sc_infer_carried_block_at(r, i);
    fprintf(out, "carried: %s .. %s (%u nodes) from %s .. %s, by isomorphism\n",
            sc_graph_node(spec, cb->first)->name, sc_graph_node(spec, cb->last)->name,
            cb->n_nodes, sc_graph_node(spec, cb->from_first)->name,
            sc_graph_node(spec, cb->from_last)->name);
  }
  if (sc_infer_n_carried_blocks(r) > 8)
    fprintf(out, "carried: %u more blocks (--format json lists them)\n",
            sc_infer_n_carried_blocks(r) - 8);
  const GPtrArray *ex = sc_infer_explanations(r);
  if (opts && opts->explain && ex->len) {
    fprintf(out, "explanation (per spec node: lemmas applied, impl nodes asserted):\n");
    for (guint i = 0; i < ex->len; i++)
      fprintf(out, "  %s\n", (const char *)g_ptr_array_index(ex, i));
  }
  if (opts && opts->explain && sc_infer_n_relation_explanations(r))
    print_relation_explanations(&c);
  print_impl_legend(&c);
  fprintf(out, "checked %u of %u spec nodes", st->visited, st->spec_nodes);
  if (st->carried)
    fprintf(out, " (%u carried by isomorphism)", st->carried);
  fprintf(out, ", explored %u impl nodes, %u lemma applications, "
               "largest e-graph %u e-nodes, %.3f s\n",
          st->explored, (unsigned)st->applied, st->max_enodes, st->seconds);
  g_array_unref(c.seen);
  g_ptr_array_unref(c.pool);
}
