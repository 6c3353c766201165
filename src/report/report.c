/* report.c — the JSON result object of a check and the exit code (see
 * report.h; the text report is report-text.c).  jansson is used here and in
 * the loader only (STYLE.md point 9).  Expressions stay as the spec writes
 * them; the impl tensors they name are collected as the object is built
 * and described under "impl_tensors" (an extension: no existing key
 * changes). */
#include "report/report-private.h"

#include <jansson.h>
#include <string.h>

static const char *tensor_name(const sc_bundle *b, sc_id t) {
  return sc_graph_tensor(sc_bundle_spec(b), t)->name;
}

int sc_report_exit_code(const sc_infer_result *r) {
  switch (sc_infer_verdict(r)) {
  case SC_VERDICT_REFINES: return SC_EXIT_REFINES;
  case SC_VERDICT_FAILS: return SC_EXIT_FAILS;
  case SC_VERDICT_LIMIT: return SC_EXIT_LIMIT;
  case SC_VERDICT_ERROR: return SC_EXIT_INPUT_ERROR;
  }
  return SC_EXIT_INPUT_ERROR;
}

/* The expectations for tensor T: the texts found / not found. */
static void expectations_of(const sc_infer_result *r, sc_id t, GPtrArray *found,
                            GPtrArray *missing) {
  for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++) {
    const sc_infer_expectation *e = sc_infer_expectation_at(r, i);
    if (e->tensor != t)
      continue;
    g_ptr_array_add(e->found ? found : missing, (gpointer)e->text);
  }
}

static json_t *assumed_ranges_json(const sc_infer_result *r) {
  json_t *arr = json_array();
  for (uint32_t i = 0; i < sc_infer_n_assumptions(r); i++) {
    const sc_infer_assumption *a = sc_infer_assumption_at(r, i);
    json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s}", "text", a->text, "tensor",
                                         a->tensor, "node", a->node, "used_by", a->used_by));
  }
  return arr;
}

/* Opaque operators (report.h, sc_report_assumed_op): "assumed: operator
 * K has no definition (FILE:LINE); unchecked lemmas: ...; relations relying
 * on it: ..." (issue 19). */
void sc_report_print_assumed_ops(FILE *out, const sc_report_options *opts) {
  for (guint i = 0; opts && opts->assumed_ops && i < opts->assumed_ops->len; i++) {
    const sc_report_assumed_op *a = &g_array_index(opts->assumed_ops, sc_report_assumed_op, i);
    fprintf(out, "assumed: operator %s has no definition%s%s%s; unchecked lemmas:", a->op,
            a->declared_at ? " (" : "", a->declared_at ? a->declared_at : "",
            a->declared_at ? ")" : "");
    for (guint j = 0; j < a->lemmas->len; j++)
      fprintf(out, "%s %s", j ? "," : "", (const char *)g_ptr_array_index(a->lemmas, j));
    fprintf(out, "%s; relations relying on it:", a->lemmas->len ? "" : " none");
    for (guint j = 0; j < a->relations->len; j++)
      fprintf(out, "%s %s", j ? "," : "", (const char *)g_ptr_array_index(a->relations, j));
    fprintf(out, "%s\n", a->relations->len ? "" : " none");
  }
}

static json_t *str_array(const GPtrArray *a);

static json_t *assumed_ops_json(const sc_report_options *opts) {
  json_t *arr = json_array();
  for (guint i = 0; i < opts->assumed_ops->len; i++) {
    const sc_report_assumed_op *a = &g_array_index(opts->assumed_ops, sc_report_assumed_op, i);
    json_t *o = json_pack("{s:s}", "op", a->op);
    json_object_set_new(o, "declared_at",
                        a->declared_at ? json_string(a->declared_at) : json_null());
    json_object_set_new(o, "unchecked_lemmas", str_array(a->lemmas));
    json_object_set_new(o, "relations", str_array(a->relations));
    json_array_append_new(arr, o);
  }
  return arr;
}

static json_t *str_array(const GPtrArray *a) {
  json_t *arr = json_array();
  for (guint i = 0; a && i < a->len; i++)
    json_array_append_new(arr, json_string(g_ptr_array_index(a, i)));
  return arr;
}

/* An array of expressions over impl tensors; their tensors go to SEEN. */
static json_t *expr_array(const sc_bundle *b, const GPtrArray *a, GArray *seen) {
  for (guint i = 0; a && i < a->len; i++)
    sc_report_collect_impl(b, g_ptr_array_index(a, i), seen);
  return str_array(a);
}

/* "impl_tensors": {NAME: {label, rank?, node?, op?, src?, shape, dtype}}. */
static json_t *impl_tensors_json(const sc_bundle *b, const GArray *seen) {
  sc_graph *impl = sc_bundle_impl(b);
  json_t *o = json_object();
  for (guint i = 0; i < seen->len; i++) {
    sc_id t = g_array_index(seen, sc_id, i);
    const sc_tensor *x = sc_graph_tensor(impl, t);
    json_t *d = json_object();
    g_autofree char *label = sc_report_impl_label(b, t);
    json_object_set_new(d, "label", json_string(label));
    if (x->rank >= 0)
      json_object_set_new(d, "rank", json_integer(x->rank));
    if (x->producer != SC_ID_NONE) {
      const sc_node *n = sc_graph_node(impl, x->producer);
      json_object_set_new(d, "node", json_string(n->name));
      json_object_set_new(d, "op", json_string(n->op->qualname));
      if (n->src)
        json_object_set_new(d, "src", json_string(n->src));
    } else {
      json_object_set_new(d, "input", json_true());
    }
    g_autofree char *shape = sc_shape_to_string(&x->type.shape);
    json_object_set_new(d, "shape", json_string(shape));
    json_object_set_new(d, "dtype", json_string(sc_dtype_name(x->type.dtype)));
    json_object_set_new(o, x->name, d);
  }
  return o;
}

/* failure.diagnosis: {kind, tensor, node, seed, symbols, expression |
 * counterexample {candidate, index, spec_value, impl_value}, detail |
 * reason}. */
static json_t *diagnosis_json(const sc_bundle *b, const sc_diagnosis *d, GArray *seen) {
  json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:s}", "kind", sc_diagnosis_kind_name(d->kind),
                        "tensor", d->tensor, "node", d->node, "seed", (json_int_t)d->seed,
                        "symbols", d->symbols ? d->symbols : "");
  if (d->expression) {
    json_object_set_new(o, "expression", json_string(d->expression));
    sc_report_collect_impl(b, d->expression, seen);
  }
  if (d->kind == SC_DIAGNOSIS_VALUES_DIFFER && d->candidate) {
    json_t *cx = json_pack("{s:s}", "candidate", d->candidate);
    sc_report_collect_impl(b, d->candidate, seen);
    if (d->index) {
      json_object_set_new(cx, "index", json_string(d->index));
      json_object_set_new(cx, "spec_value", json_real(d->spec_value));
      json_object_set_new(cx, "impl_value", json_real(d->impl_value));
    }
    json_object_set_new(o, "counterexample", cx);
  }
  if (d->detail)
    json_object_set_new(o, "detail", json_string(d->detail));
  if (d->partial_tensors) {
    json_t *names = json_array();
    for (uint32_t j = 0; j < d->partial_chunks; j++) {
      json_array_append_new(names, d->partial_tensors[j] ? json_string(d->partial_tensors[j])
                                                         : json_null());
      if (d->partial_tensors[j])
        sc_report_collect_impl(b, d->partial_tensors[j], seen);
    }
    json_t *p = json_pack("{s:i, s:I, s:o}", "dim", (int)d->partial_dim, "chunk",
                          (json_int_t)d->partial_len, "tensors", names);
    if (d->index) {
      json_object_set_new(p, "index", json_string(d->index));
      json_object_set_new(p, "spec_value", json_real(d->spec_value));
    }
    json_object_set_new(o, "partial", p);
  }
  if (d->other_match) {
    json_object_set_new(o, "agrees_with", json_string(d->other_match));
    sc_report_collect_impl(b, d->other_match, seen);
  }
  if (d->reason)
    json_object_set_new(o, "reason", json_string(d->reason));
  if (d->not_proved_node) {
    json_object_set_new(o, "not_proved", json_pack("{s:s, s:s}", "node", d->not_proved_node,
                                                   "expression", d->not_proved_expression));
    sc_report_collect_impl(b, d->not_proved_expression, seen);
  }
  json_object_set_new(o, "candidates_tried", json_integer(d->candidates_tried));
  if (d->kind == SC_DIAGNOSIS_NOT_PROVED)
    json_object_set_new(o, "confirmations", json_integer(d->confirmations));
  return o;
}

static json_t *relation_json(const sc_bundle *b, const sc_relation *rel) {
  json_t *o = json_object();
  for (uint32_t i = 0; rel && i < rel->n_entries; i++) {
    const sc_relation_entry *e = &rel->entries[i];
    json_t *arr = json_array();
    for (uint32_t j = 0; j < e->n_exprs; j++)
      json_array_append_new(arr, json_string(e->texts[j]));
    json_object_set_new(o, tensor_name(b, e->tensor), arr);
  }
  return o;
}

char *sc_report_json(const sc_bundle *b, const sc_infer_result *r, const sc_report_options *opts) {
  sc_graph *spec = sc_bundle_spec(b);
  sc_verdict v = sc_infer_verdict(r);
  g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(sc_id));
  json_t *o = json_object();
  json_object_set_new(o, "verdict", json_string(sc_verdict_name(v)));
  json_t *rel = json_object();
  for (uint32_t i = 0; i < sc_infer_n_checked(r); i++) {
    sc_id t = sc_infer_checked(r, i);
    json_object_set_new(rel, tensor_name(b, t), expr_array(b, sc_infer_output_exprs(r, t), seen));
  }
  json_object_set_new(o, "output_relation", rel);

  json_t *failure = json_null();
  sc_failure_kind k = sc_infer_failure_kind(r);
  sc_id node = sc_infer_failure_node(r);
  if ((v == SC_VERDICT_FAILS || v == SC_VERDICT_LIMIT) && k == SC_FAILURE_UNMAPPED &&
      node != SC_ID_NONE) {
    const sc_node *n = sc_graph_node(spec, node);
    failure = json_object();
    json_object_set_new(failure, "kind", json_string(sc_failure_kind_name(k)));
    json_object_set_new(failure, "node", json_string(n->name));
    json_object_set_new(failure, "op", json_string(n->op->qualname));
    if (n->src)
      json_object_set_new(failure, "src", json_string(n->src));
    json_t *um = json_array();
    const GArray *una = sc_infer_failure_unmapped(r);
    for (guint i = 0; i < una->len; i++)
      json_array_append_new(um, json_string(tensor_name(b, g_array_index(una, sc_id, i))));
    json_object_set_new(failure, "unmapped", um);
    json_t *inrel = json_object();
    for (uint32_t i = 0; i < n->n_inputs; i++)
      json_object_set_new(inrel, tensor_name(b, n->inputs[i]),
                          expr_array(b, sc_infer_tensor_exprs(r, n->inputs[i]), seen));
    json_object_set_new(failure, "input_relation", inrel);
    json_object_set_new(failure, "nearest", expr_array(b, sc_infer_failure_nearest(r), seen));
    json_object_set_new(failure, "explored", json_integer(sc_infer_failure_explored(r)));
    sc_id stop = sc_infer_failure_stop_node(r);
    if (stop != SC_ID_NONE) {
      json_object_set_new(failure, "stopped_at", json_string(sc_graph_node(spec, stop)->name));
      json_object_set_new(failure, "stopped_at_nearest",
                          expr_array(b, sc_infer_failure_stop_nearest(r), seen));
    }
    const sc_diagnosis *d = opts ? opts->diagnosis : NULL;
    if (d != NULL)
      json_object_set_new(failure, "diagnosis", diagnosis_json(b, d, seen));
    json_object_set_new(failure, "undecided", str_array(sc_infer_failure_undecided(r)));
    const GPtrArray *over = sc_infer_failure_found_over_intermediates(r);
    if (over->len)
      json_object_set_new(failure, "found_over_intermediates", str_array(over));
    if (sc_infer_limit_reason(r)) /* with fails: the limit the walk stopped at (localize.c) */
      json_object_set_new(failure, "limit", json_string(sc_infer_limit_reason(r)));
    if (sc_infer_refutation(r)) /* a limit the values refute (refuted.c) */
      json_object_set_new(failure, "refuted", json_string(sc_infer_refutation(r)));
  } else if (v == SC_VERDICT_FAILS && k == SC_FAILURE_UNEXPECTED_RELATION) {
    /* the first tensor with a missing expectation */
    const sc_infer_expectation *e = sc_infer_first_unfound_expectation(r);
    if (e != NULL) {
      GPtrArray *found = g_ptr_array_new(), *missing = g_ptr_array_new();
      expectations_of(r, e->tensor, found, missing);
      failure = json_object();
      json_object_set_new(failure, "kind", json_string(sc_failure_kind_name(k)));
      json_object_set_new(failure, "tensor", json_string(tensor_name(b, e->tensor)));
      json_object_set_new(failure, "expected", expr_array(b, missing, seen));
      json_object_set_new(failure, "found",
                          expr_array(b, sc_infer_output_exprs(r, e->tensor), seen));
      g_ptr_array_unref(found);
      g_ptr_array_unref(missing);
    }
  }
  json_object_set_new(o, "failure", failure);

  if (sc_infer_n_expectations(r)) {
    json_t *ex = json_array();
    for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++) {
      const sc_infer_expectation *e = sc_infer_expectation_at(r, i);
      json_array_append_new(ex, json_pack("{s:s, s:s, s:b}", "tensor", tensor_name(b, e->tensor),
                                          "expression", e->text, "found", e->found));
      sc_report_collect_impl(b, e->text, seen);
    }
    json_object_set_new(o, "expectations", ex);
  }
  const sc_relation *assumed = sc_bundle_assume_relation(b);
  if (assumed && assumed->n_entries)
    json_object_set_new(o, "assumptions", relation_json(b, assumed));
  if (sc_infer_n_assumptions(r))
    json_object_set_new(o, "assumed_ranges", assumed_ranges_json(r));
  if (opts && opts->assumed_ops && opts->assumed_ops->len)
    json_object_set_new(o, "assumed_operators", assumed_ops_json(opts));
  if (sc_infer_learned_sizes(r)->len)
    json_object_set_new(o, "learned_sizes", str_array(sc_infer_learned_sizes(r)));
  if (sc_infer_n_carried_blocks(r)) {
    /* layer memoization (infer.h, sc_infer_carried_block) */
    json_t *blocks = json_array();
    for (uint32_t i = 0; i < sc_infer_n_carried_blocks(r); i++) {
      const sc_infer_carried_block *cb = sc_infer_carried_block_at(r, i);
      json_array_append_new(
          blocks, json_pack("{s:s, s:s, s:i, s:s, s:s}", "first",
                            sc_graph_node(spec, cb->first)->name, "last",
                            sc_graph_node(spec, cb->last)->name, "nodes", (int)cb->n_nodes,
                            "from_first", sc_graph_node(spec, cb->from_first)->name, "from_last",
                            sc_graph_node(spec, cb->from_last)->name));
    }
    json_object_set_new(o, "carried", blocks);
  }

  if (opts && opts->explain) {
    json_object_set_new(o, "explanation", str_array(sc_infer_explanations(r)));
    json_t *chains = json_array();
    for (uint32_t i = 0; i < sc_infer_n_relation_explanations(r); i++) {
      const sc_relation_explanation *e = sc_infer_relation_explanation(r, i);
      sc_report_collect_impl(b, e->relation, seen);
      json_t *steps = json_array();
      for (uint32_t j = 0; j < e->n_steps; j++)
        json_array_append_new(steps, json_pack("{s:s, s:s}", "term", e->steps[j].term, "reason",
                                               e->steps[j].reason));
      json_array_append_new(
          chains, json_pack("{s:s, s:s, s:b, s:s, s:s, s:o, s:I}", "tensor",
                            tensor_name(b, e->tensor), "node",
                            sc_graph_node(spec, e->node)->name, "output", e->output, "relation",
                            e->relation, "start", e->start, "steps", steps, "total_steps",
                            (json_int_t)MIN(e->total_steps, (uint64_t)G_MAXINT64)));
    }
    json_object_set_new(o, "explanations", chains);
  }

  const sc_infer_stats *st = sc_infer_get_stats(r);
  json_t *stats = json_object();
  json_object_set_new(stats, "spec_nodes", json_integer(st->spec_nodes));
  json_object_set_new(stats, "impl_nodes", json_integer(st->impl_nodes));
  json_object_set_new(stats, "visited", json_integer(st->visited));
  json_object_set_new(stats, "explored", json_integer(st->explored));
  json_object_set_new(stats, "lemma_applications", json_integer((json_int_t)st->applied));
  json_object_set_new(stats, "max_enodes", json_integer(st->max_enodes));
  if (st->carried)
    json_object_set_new(stats, "carried", json_integer(st->carried));
  json_object_set_new(stats, "seconds", json_real(st->seconds));
  if (opts)
    json_object_set_new(stats, "lemmas", json_integer(opts->n_lemmas));
  json_object_set_new(o, "stats", stats);
  json_object_set_new(o, "impl_tensors", impl_tensors_json(b, seen));

  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  char *out = g_strdup(s);
  free(s);
  return out;
}
