/* report.c — text and JSON reports of a check (see report.h).  jansson is
 * used here and in the loader only (STYLE.md point 9). */
#include "shardcheck/report.h"

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

static void print_relation_lines(FILE *out, const sc_bundle *b, const sc_relation *rel,
                                 const char *indent) {
  for (uint32_t i = 0; rel && i < rel->n_entries; i++) {
    const sc_relation_entry *e = &rel->entries[i];
    for (uint32_t j = 0; j < e->n_exprs; j++)
      fprintf(out, "%s%s = %s\n", indent, tensor_name(b, e->tensor), e->texts[j]);
  }
}

static void print_exprs(FILE *out, const char *indent, const char *name, const GPtrArray *exprs) {
  if (!exprs || exprs->len == 0) {
    fprintf(out, "%s%s = (no clean expression)\n", indent, name);
    return;
  }
  for (guint i = 0; i < exprs->len; i++)
    fprintf(out, "%s%s = %s\n", indent, name, (const char *)g_ptr_array_index(exprs, i));
}

/* How many forms of an input's relation a failure report prints (the JSON
 * report lists them all): the smallest come first, and the others are
 * mostly the same term over aliases of the same impl tensors. */
#define INPUT_FORMS_SHOWN 4

/* The relation of spec tensor T as an input of the failing node: its
 * clean expressions (at most INPUT_FORMS_SHOWN), else the non-clean
 * relation it was deferred with, marked as such. */
static void print_input_relation(FILE *out, const char *indent, const sc_bundle *b,
                                 const sc_infer_result *r, sc_id t) {
  const char *name = tensor_name(b, t);
  const GPtrArray *exprs = sc_infer_tensor_exprs(r, t);
  const GPtrArray *deferred = sc_infer_tensor_deferred_exprs(r, t);
  if ((!exprs || exprs->len == 0) && deferred && deferred->len) {
    for (guint i = 0; i < deferred->len && i < INPUT_FORMS_SHOWN; i++)
      fprintf(out, "%s%s = %s   (not clean: deferred)\n", indent, name,
              (const char *)g_ptr_array_index(deferred, i));
    exprs = deferred;
  } else if (!exprs || exprs->len <= INPUT_FORMS_SHOWN) {
    print_exprs(out, indent, name, exprs);
    return;
  } else {
    for (guint i = 0; i < INPUT_FORMS_SHOWN; i++)
      fprintf(out, "%s%s = %s\n", indent, name, (const char *)g_ptr_array_index(exprs, i));
  }
  if (exprs->len > INPUT_FORMS_SHOWN)
    fprintf(out, "%s  ... %u more form%s (--format json lists them all)\n", indent,
            exprs->len - INPUT_FORMS_SHOWN, exprs->len - INPUT_FORMS_SHOWN == 1 ? "" : "s");
}

/* Each relation's chain: the spec call, then "N. = TERM   by REASON". */
static void print_relation_explanations(FILE *out, const sc_bundle *b, const sc_infer_result *r) {
  sc_graph *spec = sc_bundle_spec(b);
  fprintf(out, "why the relations hold (each step rewrites one place of the term, for the "
               "reason given):\n");
  for (uint32_t i = 0; i < sc_infer_n_relation_explanations(r); i++) {
    const sc_relation_explanation *e = sc_infer_relation_explanation(r, i);
    const sc_node *n = sc_graph_node(spec, e->node);
    fprintf(out, "  %s = %s   (%sspec node %s%s%s)\n", tensor_name(b, e->tensor), e->relation,
            e->output ? "" : "intermediate, ", n->name, n->src ? " at " : "",
            n->src ? n->src : "");
    fprintf(out, "        %s\n", e->start);
    for (uint32_t j = 0; j < e->n_steps; j++)
      fprintf(out, "    %2u. = %s   by %s\n", j + 1, e->steps[j].term, e->steps[j].reason);
    if (e->total_steps > e->n_steps)
      fprintf(out, "        ... %" G_GUINT64_FORMAT " more step%s\n",
              (guint64)(e->total_steps - e->n_steps),
              e->total_steps - e->n_steps == 1 ? "" : "s");
  }
}

/* Value-range assumptions the proof used (infer.h, sc_infer_assumption):
 * "assumed: primals_18 >= 0, ids of aten.index at layers.py:260; negative
 * ids would wrap (used by vp_entry_index at index)". */
static void print_assumed_ranges(FILE *out, const sc_infer_result *r) {
  for (uint32_t i = 0; i < sc_infer_n_assumptions(r); i++) {
    const sc_infer_assumption *a = sc_infer_assumption_at(r, i);
    fprintf(out, "assumed: %s (used by %s)\n", a->text, a->used_by);
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
static void print_assumed_ops(FILE *out, const sc_report_options *opts) {
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

void sc_report_text(FILE *out, const sc_bundle *b, const sc_infer_result *r,
                    const sc_report_options *opts) {
  sc_graph *spec = sc_bundle_spec(b);
  const sc_infer_stats *st = sc_infer_get_stats(r);
  sc_verdict v = sc_infer_verdict(r);
  fprintf(out, "%s: %s\n", sc_bundle_name(b), sc_verdict_name(v));

  const sc_relation *assumed = sc_bundle_assume_relation(b);
  if (assumed && assumed->n_entries) {
    fprintf(out, "assumed without proof (assume_relation):\n");
    print_relation_lines(out, b, assumed, "  ");
  }

  if (v == SC_VERDICT_FAILS || v == SC_VERDICT_LIMIT) {
    sc_failure_kind k = sc_infer_failure_kind(r);
    sc_id node = sc_infer_failure_node(r);
    if (k == SC_FAILURE_UNMAPPED && node != SC_ID_NONE) {
      const sc_node *n = sc_graph_node(spec, node);
      if (v == SC_VERDICT_LIMIT)
        fprintf(out, "stopped by the %s at spec node '%s'\n", sc_infer_limit_reason(r), n->name);
      fprintf(out, "first unmapped spec node: %s (%s)%s%s\n", n->name, n->op->qualname,
              n->src ? " at " : "", n->src ? n->src : "");
      const GArray *um = sc_infer_failure_unmapped(r);
      fprintf(out, "  outputs with no clean expression over impl%s tensors:",
              "");
      for (guint i = 0; i < um->len; i++)
        fprintf(out, " %s", tensor_name(b, g_array_index(um, sc_id, i)));
      fprintf(out, "\n");
      for (guint i = 0; i < um->len; i++) {
        sc_id t = g_array_index(um, sc_id, i);
        const GPtrArray *inter = sc_infer_tensor_exprs(r, t);
        if (inter && inter->len) {
          fprintf(out, "  (%s has clean expressions over impl intermediates only:\n", tensor_name(b, t));
          for (guint j = 0; j < inter->len && j < 4; j++)
            fprintf(out, "     %s = %s\n", tensor_name(b, t), (const char *)g_ptr_array_index(inter, j));
          if (inter->len > 4)
            fprintf(out, "     ... (%u more)\n", inter->len - 4);
          fprintf(out, "   the impl does not return them)\n");
        }
      }
      fprintf(out, "  its inputs' relations:\n");
      for (uint32_t i = 0; i < n->n_inputs; i++)
        print_input_relation(out, "    ", b, r, n->inputs[i]);
      fprintf(out, "  impl nodes explored at this node: %u\n", sc_infer_failure_explored(r));
      const GPtrArray *und = sc_infer_failure_undecided(r);
      if (und->len) {
        fprintf(out, "  undecided side conditions (these lemmas could not fire; the failure may "
                     "be the prover's, not the model's):\n");
        for (guint i = 0; i < und->len; i++)
          fprintf(out, "    %s\n", (const char *)g_ptr_array_index(und, i));
      }
      const GPtrArray *near = sc_infer_failure_nearest(r);
      if (near->len) {
        fprintf(out, "  nearest terms (non-clean parts show what is off):\n");
        for (guint i = 0; i < near->len; i++)
          fprintf(out, "    %s\n", (const char *)g_ptr_array_index(near, i));
      }
      sc_id stop = sc_infer_failure_stop_node(r);
      if (stop != SC_ID_NONE) {
        const sc_node *sn = sc_graph_node(spec, stop);
        fprintf(out, "  the walk went on with non-clean relations for it and stopped at %s (%s)%s%s:\n",
                sn->name, sn->op->qualname, sn->src ? " at " : "", sn->src ? sn->src : "");
        for (uint32_t i = 0; i < sn->n_inputs; i++)
          print_input_relation(out, "    ", b, r, sn->inputs[i]);
        const GPtrArray *sfar = sc_infer_failure_stop_nearest(r);
        for (guint i = 0; i < sfar->len; i++)
          fprintf(out, "    nearest: %s\n", (const char *)g_ptr_array_index(sfar, i));
      }
    } else if (k == SC_FAILURE_UNEXPECTED_RELATION) {
      fprintf(out, "the relation found is not the one expected:\n");
    }
  }

  fprintf(out, "output relation:\n");
  for (uint32_t i = 0; i < sc_infer_n_checked(r); i++) {
    sc_id t = sc_infer_checked(r, i);
    const GPtrArray *exprs = sc_infer_output_exprs(r, t);
    if (exprs || v == SC_VERDICT_REFINES)
      print_exprs(out, "  ", tensor_name(b, t), exprs);
    else
      fprintf(out, "  %s = (not reached)\n", tensor_name(b, t));
  }

  if (sc_infer_n_expectations(r)) {
    uint32_t found = 0;
    for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++)
      found += sc_infer_expectation_at(r, i)->found ? 1 : 0;
    fprintf(out, "expectations: %u of %u found\n", found, sc_infer_n_expectations(r));
    for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++) {
      const sc_infer_expectation *e = sc_infer_expectation_at(r, i);
      fprintf(out, "  %-8s %s = %s\n", e->found ? "found" : "MISSING", tensor_name(b, e->tensor),
              e->text);
    }
  }
  print_assumed_ranges(out, r);
  print_assumed_ops(out, opts);
  /* data-dependent sizes proved equal (infer.h, sc_infer_learned_sizes) */
  const GPtrArray *learned = sc_infer_learned_sizes(r);
  for (guint i = 0; i < learned->len; i++)
    fprintf(out, "size learned: %s\n", (const char *)g_ptr_array_index(learned, i));
  const GPtrArray *ex = sc_infer_explanations(r);
  if (opts && opts->explain && ex->len) {
    fprintf(out, "explanation (per spec node: lemmas applied, impl nodes asserted):\n");
    for (guint i = 0; i < ex->len; i++)
      fprintf(out, "  %s\n", (const char *)g_ptr_array_index(ex, i));
  }
  if (opts && opts->explain && sc_infer_n_relation_explanations(r))
    print_relation_explanations(out, b, r);
  fprintf(out, "checked %u of %u spec nodes, explored %u impl nodes, %u lemma applications, "
               "largest e-graph %u e-nodes, %.3f s\n",
          st->visited, st->spec_nodes, st->explored, (unsigned)st->applied, st->max_enodes,
          st->seconds);
}

static json_t *str_array(const GPtrArray *a) {
  json_t *arr = json_array();
  for (guint i = 0; a && i < a->len; i++)
    json_array_append_new(arr, json_string(g_ptr_array_index(a, i)));
  return arr;
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
  json_t *o = json_object();
  json_object_set_new(o, "verdict", json_string(sc_verdict_name(v)));
  json_t *rel = json_object();
  for (uint32_t i = 0; i < sc_infer_n_checked(r); i++) {
    sc_id t = sc_infer_checked(r, i);
    json_object_set_new(rel, tensor_name(b, t), str_array(sc_infer_output_exprs(r, t)));
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
                          str_array(sc_infer_tensor_exprs(r, n->inputs[i])));
    json_object_set_new(failure, "input_relation", inrel);
    json_object_set_new(failure, "nearest", str_array(sc_infer_failure_nearest(r)));
    json_object_set_new(failure, "explored", json_integer(sc_infer_failure_explored(r)));
    sc_id stop = sc_infer_failure_stop_node(r);
    if (stop != SC_ID_NONE) {
      json_object_set_new(failure, "stopped_at", json_string(sc_graph_node(spec, stop)->name));
      json_object_set_new(failure, "stopped_at_nearest", str_array(sc_infer_failure_stop_nearest(r)));
    }
    json_object_set_new(failure, "undecided", str_array(sc_infer_failure_undecided(r)));
    const GPtrArray *over = sc_infer_failure_found_over_intermediates(r);
    if (over->len)
      json_object_set_new(failure, "found_over_intermediates", str_array(over));
    if (v == SC_VERDICT_LIMIT && sc_infer_limit_reason(r))
      json_object_set_new(failure, "limit", json_string(sc_infer_limit_reason(r)));
  } else if (v == SC_VERDICT_FAILS && k == SC_FAILURE_UNEXPECTED_RELATION) {
    /* the first tensor with a missing expectation */
    for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++) {
      const sc_infer_expectation *e = sc_infer_expectation_at(r, i);
      if (e->found)
        continue;
      GPtrArray *found = g_ptr_array_new(), *missing = g_ptr_array_new();
      expectations_of(r, e->tensor, found, missing);
      failure = json_object();
      json_object_set_new(failure, "kind", json_string(sc_failure_kind_name(k)));
      json_object_set_new(failure, "tensor", json_string(tensor_name(b, e->tensor)));
      json_object_set_new(failure, "expected", str_array(missing));
      json_object_set_new(failure, "found", str_array(sc_infer_output_exprs(r, e->tensor)));
      g_ptr_array_unref(found);
      g_ptr_array_unref(missing);
      break;
    }
  }
  json_object_set_new(o, "failure", failure);

  if (sc_infer_n_expectations(r)) {
    json_t *ex = json_array();
    for (uint32_t i = 0; i < sc_infer_n_expectations(r); i++) {
      const sc_infer_expectation *e = sc_infer_expectation_at(r, i);
      json_array_append_new(ex, json_pack("{s:s, s:s, s:b}", "tensor", tensor_name(b, e->tensor),
                                          "expression", e->text, "found", e->found));
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

  if (opts && opts->explain) {
    json_object_set_new(o, "explanation", str_array(sc_infer_explanations(r)));
    json_t *chains = json_array();
    for (uint32_t i = 0; i < sc_infer_n_relation_explanations(r); i++) {
      const sc_relation_explanation *e = sc_infer_relation_explanation(r, i);
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
  json_object_set_new(stats, "seconds", json_real(st->seconds));
  if (opts)
    json_object_set_new(stats, "lemmas", json_integer(opts->n_lemmas));
  json_object_set_new(o, "stats", stats);

  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  char *out = g_strdup(s);
  free(s);
  return out;
}
