/* report-html.c — the check's result as one self-contained HTML page
 * (report.h, sc_report_html): inline CSS, an inline SVG of the failing
 * neighbourhood (svg.c), no script and no link to anything outside the
 * file, so that it opens offline and can be attached to a bug report.
 *
 * Sections, in reading order: verdict; the failure (node, source line,
 * its inputs' relations, nearest terms, undecided conditions); the
 * picture; the output relation and expectations; assumptions; the
 * explanation chains (with --explain); the impl tensors named, with rank,
 * producing operator, source line and type; statistics.  Every text from
 * the bundle is escaped. */
#include "report/report-private.h"

#include <string.h>

typedef struct {
  FILE *out;
  const sc_bundle *b;
  const sc_infer_result *r;
  const sc_report_options *opts;
  GArray *seen; /* impl tensors named (sc_id), for the last table */
} html_ctx;

static void put(html_ctx *c, const char *s) {
  g_autofree char *e = sc_report_xml_escape(s);
  fputs(e, c->out);
}

/* An expression over impl tensors, with their labels, escaped. */
static void put_expr(html_ctx *c, const char *expr) {
  g_autofree char *m = sc_report_mark_expr(c->b, expr, c->seen);
  fputs("<code>", c->out);
  put(c, m);
  fputs("</code>", c->out);
}

static const char *spec_name(const html_ctx *c, sc_id t) {
  return sc_graph_tensor(sc_bundle_spec(c->b), t)->name;
}

static void relation_rows(html_ctx *c, sc_id t, const GPtrArray *exprs, const char *note) {
  for (guint i = 0; exprs && i < exprs->len; i++) {
    fputs("<tr><td><code>", c->out);
    put(c, spec_name(c, t));
    fputs("</code></td><td>", c->out);
    put_expr(c, g_ptr_array_index(exprs, i));
    if (note)
      fprintf(c->out, " <span class=\"note\">%s</span>", note);
    fputs("</td></tr>\n", c->out);
  }
  if (!exprs || !exprs->len) {
    fputs("<tr><td><code>", c->out);
    put(c, spec_name(c, t));
    fputs("</code></td><td class=\"bad\">no clean expression</td></tr>\n", c->out);
  }
}

static void string_list(html_ctx *c, const char *heading, const GPtrArray *a, gboolean exprs) {
  if (!a || !a->len)
    return;
  fprintf(c->out, "<h3>%s</h3>\n<ul>\n", heading);
  for (guint i = 0; i < a->len; i++) {
    fputs("<li>", c->out);
    if (exprs)
      put_expr(c, g_ptr_array_index(a, i));
    else
      put(c, g_ptr_array_index(a, i));
    fputs("</li>\n", c->out);
  }
  fputs("</ul>\n", c->out);
}

static void node_heading(html_ctx *c, const char *what, const sc_node *n, gboolean failing) {
  fprintf(c->out, "<p>%s <code class=\"failing\"%s>", what, failing ? " id=\"failing-node\"" : "");
  put(c, n->name);
  fputs("</code> (<code>", c->out);
  put(c, n->op->qualname);
  fputs("</code>)", c->out);
  if (n->src) {
    fputs(" at <span class=\"src\">", c->out);
    put(c, n->src);
    fputs("</span>", c->out);
  }
  fputs("</p>\n", c->out);
}

static void diagnosis_html(html_ctx *c) {
  const sc_diagnosis *d = c->opts ? c->opts->diagnosis : NULL;
  if (d == NULL)
    return;
  if (d->kind == SC_DIAGNOSIS_NOT_PROVED) {
    fputs("<p class=\"warn\" id=\"diagnosis\"><b>Not proved</b>: on related random inputs the "
          "values of <code>", c->out);
    put(c, d->tensor);
    fputs("</code> agree with ", c->out);
    put_expr(c, d->expression);
    fputs("; a lemma is probably missing for this step.</p>\n", c->out);
  } else if (d->kind == SC_DIAGNOSIS_VALUES_DIFFER) {
    fputs("<p class=\"bad\" id=\"diagnosis\">The values differ: on related random inputs, "
          "<code>", c->out);
    put(c, d->node);
    fputs("</code> is the first spec node whose values no clean expression tried matches.", c->out);
    if (d->candidate && d->index) {
      fprintf(c->out, " Counterexample: at %s, spec <code>", d->index);
      put(c, d->tensor);
      fprintf(c->out, "</code> = %.10g, ", d->spec_value);
      put_expr(c, d->candidate);
      fprintf(c->out, " = %.10g.", d->impl_value);
    }
    if (d->partial_tensors) {
      fputs(" Spec <code>", c->out);
      put(c, d->tensor);
      fprintf(c->out, "</code> along dim %u in %u chunks:", d->partial_dim, d->partial_chunks);
      for (uint32_t j = 0; j < d->partial_chunks; j++) {
        fprintf(c->out, "%s [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") ", j ? "," : "",
                (gint64)(j * d->partial_len), (gint64)((j + 1) * d->partial_len));
        if (d->partial_tensors[j]) {
          fputs("= ", c->out);
          put_expr(c, d->partial_tensors[j]);
        } else {
          fputs("<b>matches no impl tensor</b>", c->out);
        }
      }
      fputs(".", c->out);
    }
    fputs("</p>\n<p class=\"note\">", c->out);
    put(c, d->detail ? d->detail : "");
    if (d->not_proved_node) {
      fputs(" The node where the check first stopped, ", c->out);
      put(c, d->not_proved_node);
      fputs(", is only not proved: its values agree with ", c->out);
      put_expr(c, d->not_proved_expression);
      fputs(".", c->out);
    }
    if (d->other_match) {
      fputs(" The values do agree with ", c->out);
      put_expr(c, d->other_match);
      fputs(", which is not the relation expected.", c->out);
    }
    fputs("</p>\n", c->out);
  } else {
    fputs("<p class=\"note\" id=\"diagnosis\">Not told apart from a missing lemma: ", c->out);
    put(c, d->reason ? d->reason : "");
    fputs("</p>\n", c->out);
  }
}

static void failure_unmapped(html_ctx *c, sc_id node) {
  sc_graph *spec = sc_bundle_spec(c->b);
  const sc_node *n = sc_graph_node(spec, node);
  if (sc_infer_verdict(c->r) == SC_VERDICT_LIMIT) {
    fputs("<p class=\"warn\">Stopped by the ", c->out);
    put(c, sc_infer_limit_reason(c->r) ? sc_infer_limit_reason(c->r) : "limit");
    fputs(".</p>\n", c->out);
  }
  node_heading(c, "First unmapped spec node", n, TRUE);
  diagnosis_html(c);
  const GArray *um = sc_infer_failure_unmapped(c->r);
  fputs("<p>Outputs with no clean expression over impl tensors:", c->out);
  for (guint i = 0; i < um->len; i++) {
    fputs(" <code class=\"bad\">", c->out);
    put(c, spec_name(c, g_array_index(um, sc_id, i)));
    fputs("</code>", c->out);
  }
  fputs("</p>\n<h3>Its inputs' relations</h3>\n<table>\n", c->out);
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    sc_id t = n->inputs[i];
    const GPtrArray *e = sc_infer_tensor_exprs(c->r, t);
    const GPtrArray *d = sc_infer_tensor_deferred_exprs(c->r, t);
    if ((!e || !e->len) && d && d->len)
      relation_rows(c, t, d, "(not clean: deferred)");
    else
      relation_rows(c, t, e, NULL);
  }
  fprintf(c->out, "</table>\n<p>Impl nodes explored at this node: %u</p>\n",
          sc_infer_failure_explored(c->r));
  string_list(c, "Undecided side conditions (the failure may be the prover's, not the model's)",
              sc_infer_failure_undecided(c->r), FALSE);
  string_list(c, "Nearest terms (non-clean parts show what is off)",
              sc_infer_failure_nearest(c->r), TRUE);
  sc_id stop = sc_infer_failure_stop_node(c->r);
  if (stop != SC_ID_NONE) {
    node_heading(c, "The walk went on with non-clean relations and stopped at",
                 sc_graph_node(spec, stop), FALSE);
    string_list(c, "Nearest terms there", sc_infer_failure_stop_nearest(c->r), TRUE);
  }
}

static void failure_unexpected(html_ctx *c) {
  const sc_infer_expectation *e = sc_infer_first_unfound_expectation(c->r);
  if (e == NULL)
    return;
  fputs("<p>The relation found for spec output <code class=\"failing\" id=\"failing-node\">",
        c->out);
  put(c, spec_name(c, e->tensor));
  fputs("</code> is not the one expected: ", c->out);
  put_expr(c, e->text);
  fputs(" was not proved.</p>\n", c->out);
  string_list(c, "Found", sc_infer_output_exprs(c->r, e->tensor), TRUE);
}

static void outputs_section(html_ctx *c) {
  sc_verdict v = sc_infer_verdict(c->r);
  fputs("<h2>Output relation</h2>\n<table>\n", c->out);
  for (uint32_t i = 0; i < sc_infer_n_checked(c->r); i++) {
    sc_id t = sc_infer_checked(c->r, i);
    const GPtrArray *e = sc_infer_output_exprs(c->r, t);
    if (e || v == SC_VERDICT_REFINES) {
      relation_rows(c, t, e, NULL);
    } else {
      fputs("<tr><td><code>", c->out);
      put(c, spec_name(c, t));
      fputs("</code></td><td class=\"note\">not reached</td></tr>\n", c->out);
    }
  }
  fputs("</table>\n", c->out);
  if (!sc_infer_n_expectations(c->r))
    return;
  fputs("<h2>Expectations</h2>\n<table>\n", c->out);
  for (uint32_t i = 0; i < sc_infer_n_expectations(c->r); i++) {
    const sc_infer_expectation *e = sc_infer_expectation_at(c->r, i);
    fprintf(c->out, "<tr><td class=\"%s\">%s</td><td><code>", e->found ? "good" : "bad",
            e->found ? "found" : "MISSING");
    put(c, spec_name(c, e->tensor));
    fputs("</code></td><td>", c->out);
    put_expr(c, e->text);
    fputs("</td></tr>\n", c->out);
  }
  fputs("</table>\n", c->out);
}

static void explanations_section(html_ctx *c, const sc_report_options *opts) {
  fputs("<h2>Why the relations hold</h2>\n", c->out);
  if (!opts || !opts->explain) {
    fputs("<p class=\"note\">Run <code>shardcheck check --explain</code> to include the chain "
          "of lemmas and facts behind each output relation.</p>\n",
          c->out);
    return;
  }
  sc_graph *spec = sc_bundle_spec(c->b);
  for (uint32_t i = 0; i < sc_infer_n_relation_explanations(c->r); i++) {
    const sc_relation_explanation *e = sc_infer_relation_explanation(c->r, i);
    const sc_node *n = sc_graph_node(spec, e->node);
    fputs("<details open><summary><code>", c->out);
    put(c, spec_name(c, e->tensor));
    fputs("</code> = ", c->out);
    put_expr(c, e->relation);
    fputs(" <span class=\"note\">spec node ", c->out);
    put(c, n->name);
    if (n->src) {
      fputs(" at ", c->out);
      put(c, n->src);
    }
    fputs("</span></summary>\n<ol class=\"chain\">\n<li value=\"0\">", c->out);
    put_expr(c, e->start);
    fputs("</li>\n", c->out);
    for (uint32_t j = 0; j < e->n_steps; j++) {
      fputs("<li>= ", c->out);
      put_expr(c, e->steps[j].term);
      fputs(" <span class=\"note\">by ", c->out);
      put(c, e->steps[j].reason);
      fputs("</span></li>\n", c->out);
    }
    fputs("</ol>\n", c->out);
    if (e->total_steps > e->n_steps)
      fprintf(c->out, "<p class=\"note\">... %" G_GUINT64_FORMAT " more steps</p>\n",
              (guint64)(e->total_steps - e->n_steps));
    fputs("</details>\n", c->out);
  }
  const GPtrArray *ex = sc_infer_explanations(c->r);
  string_list(c, "Per spec node: lemmas applied, impl nodes asserted", ex, FALSE);
}

static void impl_tensors_section(html_ctx *c) {
  if (!c->seen->len)
    return;
  sc_graph *impl = sc_bundle_impl(c->b);
  fputs("<h2>Impl tensors named above</h2>\n<p class=\"note\">Spec tensors are on the left of "
        "<code>=</code>; <code>rK:name</code> is rank K's impl tensor.</p>\n<table>\n"
        "<tr><th>impl tensor</th><th>rank</th><th>produced by</th><th>source</th>"
        "<th>type</th></tr>\n",
        c->out);
  for (guint i = 0; i < c->seen->len; i++) {
    sc_id t = g_array_index(c->seen, sc_id, i);
    const sc_tensor *x = sc_graph_tensor(impl, t);
    g_autofree char *label = sc_report_impl_label(c->b, t);
    g_autofree char *shape = sc_shape_to_string(&x->type.shape);
    fputs("<tr><td><code>", c->out);
    put(c, label);
    fputs("</code></td><td>", c->out);
    if (x->rank >= 0)
      fprintf(c->out, "%d", (int)x->rank);
    fputs("</td><td>", c->out);
    const sc_node *n = x->producer == SC_ID_NONE ? NULL : sc_graph_node(impl, x->producer);
    if (n) {
      put(c, n->name);
      fputs(" (", c->out);
      put(c, n->op->qualname);
      fputs(")", c->out);
    } else {
      fputs("impl input", c->out);
    }
    fputs("</td><td class=\"src\">", c->out);
    if (n && n->src)
      put(c, n->src);
    fprintf(c->out, "</td><td><code>%s", sc_dtype_name(x->type.dtype));
    put(c, shape);
    fputs("</code></td></tr>\n", c->out);
  }
  fputs("</table>\n", c->out);
}

static const char css[] =
    "body{font-family:sans-serif;margin:24px;color:#111;background:#fff;max-width:1200px}"
    "code{font-family:monospace;background:#f3f3f3;padding:0 3px}"
    "table{border-collapse:collapse;margin:6px 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
    ".verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff}"
    ".v-refines{background:#2a7a2a}.v-fails{background:#b00000}.v-limit{background:#a06000}"
    ".v-error{background:#b00000}.bad{color:#b00000;font-weight:bold}.good{color:#2a7a2a}"
    ".failing{color:#b00000;font-weight:bold}.note{color:#555;font-size:90%}"
    ".src{color:#333;font-family:monospace}.warn{color:#a06000}"
    ".picture{overflow:auto;border:1px solid #ddd;padding:4px}ol.chain li{margin:2px 0}";

void sc_report_html(FILE *out, const sc_bundle *b, const sc_infer_result *r,
                    const sc_report_options *opts) {
  html_ctx c = {out, b, r, opts, g_array_new(FALSE, FALSE, sizeof(sc_id))};
  sc_verdict v = sc_infer_verdict(r);
  const char *vn = sc_verdict_name(v);
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
  put(&c, sc_bundle_name(b));
  fprintf(out, ": %s — shardcheck</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", vn, css);
  put(&c, sc_bundle_name(b));
  fprintf(out, " <span class=\"verdict v-%s\" id=\"verdict\">%s</span></h1>\n", vn, vn);
  if (sc_bundle_description(b)) {
    fputs("<p>", out);
    put(&c, sc_bundle_description(b));
    fputs("</p>\n", out);
  }
  sc_failure_kind k = sc_infer_failure_kind(r);
  sc_id node = sc_infer_failure_node(r);
  if (v == SC_VERDICT_FAILS || v == SC_VERDICT_LIMIT) {
    fputs("<h2>Failure</h2>\n", out);
    if (k == SC_FAILURE_UNMAPPED && node != SC_ID_NONE)
      failure_unmapped(&c, node);
    else if (k == SC_FAILURE_UNEXPECTED_RELATION)
      failure_unexpected(&c);
    g_autoptr(sc_picture) p = sc_picture_build(b, r);
    if (p->vertices->len) {
      fputs("<h2>Failing neighbourhood</h2>\n<p class=\"note\">Spec in blue (the failing node "
            "red, an unmapped tensor orange), impl in grey; a dashed line joins a spec tensor "
            "to the impl tensors of its relation. The impl nodes drawn are those whose inputs "
            "are all related there.</p>\n<div class=\"picture\">\n",
            out);
      sc_picture_write_svg(out, p);
      fputs("</div>\n", out);
    }
  }
  outputs_section(&c);
  const sc_relation *assumed = sc_bundle_assume_relation(b);
  if ((assumed && assumed->n_entries) || sc_infer_n_assumptions(r)) {
    fputs("<h2>Assumptions</h2>\n<ul>\n", out);
    for (uint32_t i = 0; assumed && i < assumed->n_entries; i++)
      for (uint32_t j = 0; j < assumed->entries[i].n_exprs; j++) {
        fputs("<li>assumed without proof: <code>", out);
        put(&c, spec_name(&c, assumed->entries[i].tensor));
        fputs("</code> = ", out);
        put_expr(&c, assumed->entries[i].texts[j]);
        fputs("</li>\n", out);
      }
    for (uint32_t i = 0; i < sc_infer_n_assumptions(r); i++) {
      fputs("<li>", out);
      put(&c, sc_infer_assumption_at(r, i)->text);
      fputs("</li>\n", out);
    }
    fputs("</ul>\n", out);
  }
  explanations_section(&c, opts);
  impl_tensors_section(&c);
  const sc_infer_stats *st = sc_infer_get_stats(r);
  fprintf(out,
          "<h2>Statistics</h2>\n<p>Checked %u of %u spec nodes, explored %u impl nodes, %u "
          "lemma applications (%u lemmas loaded), largest e-graph %u e-nodes, %.3f s.</p>\n"
          "</body>\n</html>\n",
          st->visited, st->spec_nodes, st->explored, (unsigned)st->applied,
          opts ? opts->n_lemmas : 0, st->max_enodes, st->seconds);
  g_array_unref(c.seen);
}
