/* explain.c — explanations of relations (explain.h): numbered facts for
 * the driver's unions, opaque leaves for spec inputs, and the chain of
 * each emitted relation, built from the node's proof forest by the
 * e-graph's flat explanations (src/egraph/explain.c) and printed with
 * lang's printer.
 *
 * Invariants: facts are numbered per visit (the proof forest is per
 * visit too), each (kind, subject) once; a relation's chain starts at the
 * id the spec call was added as and ends at an exact id of the very term
 * the driver printed for it (re-found by the same enumeration and added
 * back with sc_egraph_add_exact, which adds no e-node for a term of
 * e-nodes already there), so each step's whole term is printed from the
 * proof terms and nothing is re-derived. */
#include "infer/explain.h"

#include "shardcheck/extract.h"

#include <string.h>

typedef struct {
  sc_fact_kind kind;
  sc_id subject;
} fact;

struct sc_explain {
  sc_lang *lang;
  const sc_bundle *bundle;
  sc_graph *spec, *impl;
  const sc_lemma_set *lemmas;
  GArray *facts;          /* fact, by number */
  GHashTable *fact_index; /* (kind << 32 | subject) -> number + 1 */
};

sc_explain *sc_explain_begin(sc_lang *lang, const sc_bundle *b, const sc_lemma_set *lemmas) {
  sc_explain *ex = g_new0(sc_explain, 1);
  ex->lang = lang;
  ex->bundle = b;
  ex->spec = sc_bundle_spec(b);
  ex->impl = sc_bundle_impl(b);
  ex->lemmas = lemmas;
  ex->facts = g_array_new(FALSE, FALSE, sizeof(fact));
  ex->fact_index = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  sc_egraph_enable_proofs(sc_lang_egraph(lang));
  return ex;
}

void sc_explain_free(sc_explain *ex) {
  if (!ex)
    return;
  g_array_unref(ex->facts);
  g_hash_table_unref(ex->fact_index);
  g_free(ex);
}

uint32_t sc_explain_fact(sc_explain *ex, sc_fact_kind kind, sc_id subject) {
  gint64 key = ((gint64)kind << 32) | subject;
  gpointer hit = g_hash_table_lookup(ex->fact_index, &key);
  if (hit)
    return SC_JUST_FACT(GPOINTER_TO_UINT(hit) - 1);
  if (ex->facts->len >= SC_JUST_FACT_LIMIT)
    return SC_JUST_ASSERTED; /* out of numbers: still sound, unnamed */
  fact f = {kind, subject};
  g_array_append_val(ex->facts, f);
  gint64 *k = g_new(gint64, 1);
  *k = key;
  g_hash_table_insert(ex->fact_index, k, GUINT_TO_POINTER(ex->facts->len));
  return SC_JUST_FACT(ex->facts->len - 1);
}

sc_id sc_explain_spec_leaf(sc_explain *ex, sc_id u, sc_id cls) {
  /* typed like the class, so that the union can never be refused */
  const sc_ttype *t = sc_lang_class_type(ex->lang, cls);
  if (t == NULL)
    return cls;
  sc_ttype type = *t;
  sc_id leaf = sc_lang_add_opaque(ex->lang, u, &type);
  if (leaf == SC_ID_NONE)
    return cls;
  /* spec and impl tensors may share names (both from torch.fx): the
   * spec's then print as spec.NAME */
  const char *name = sc_graph_tensor(ex->spec, u)->name;
  if (sc_graph_find_tensor(ex->impl, name) != SC_ID_NONE) {
    g_autofree char *marked = g_strdup_printf("spec.%s", name);
    sc_lang_set_opaque_name(ex->lang, u, marked);
  } else {
    sc_lang_set_opaque_name(ex->lang, u, name);
  }
  sc_egraph_union(sc_lang_egraph(ex->lang), leaf, cls, sc_explain_fact(ex, SC_FACT_RELATION, u));
  return leaf;
}

sc_id sc_explain_sum_node(sc_explain *ex, sc_id cls) {
  if (!ex)
    return cls;
  sc_egraph *eg = sc_lang_egraph(ex->lang);
  const sc_op *sum = sc_ops_lookup("sc.sum.default", NULL);
  if (!sum || !sc_egraph_is_clean(eg))
    return cls;
  uint32_t n = 0;
  const sc_id *sums = sc_egraph_class_nodes_with_op(eg, sc_egraph_find(eg, cls), sum->id, &n);
  return n > 0 ? sums[0] : cls;
}

/* --- reasons --- */

static const sc_value *node_arg(const sc_node *n, const char *name) {
  int32_t i = sc_ops_arg_index(n->op, name);
  return i < 0 ? NULL : &n->args[i];
}

static void append_src(GString *s, const char *what, const sc_node *n) {
  g_string_append_printf(s, "%s %s", what, n->name);
  if (n->src)
    g_string_append_printf(s, " at %s", n->src);
}

/* "comm.all_reduce 'sum' over ranks 0, 1 (impl node allreduce at F:L)" */
static void collective_reason(sc_explain *ex, const sc_node *n, GString *s) {
  g_string_append_printf(s, "%s.%s", n->op->ns, n->op->name);
  const sc_value *rop = node_arg(n, "op");
  if (!rop || rop->kind != SC_VAL_STR)
    rop = node_arg(n, "reduce_op");
  if (rop && rop->kind == SC_VAL_STR)
    g_string_append_printf(s, " '%s'", rop->u.s);
  const sc_value *dim = node_arg(n, "dim");
  if (dim && dim->kind == SC_VAL_INT && sc_dim_is_const(dim->u.i))
    g_string_append_printf(s, " along dim %" G_GINT64_FORMAT, dim->u.i.value);
  const sc_value *ranks = node_arg(n, "ranks");
  const sc_value *group = node_arg(n, "group_name");
  if (ranks && ranks->kind == SC_VAL_INT_LIST && ranks->u.ints.n > 0) {
    g_string_append(s, " over ranks ");
    for (uint32_t i = 0; i < ranks->u.ints.n; i++) {
      sc_dim d = ranks->u.ints.v[i];
      if (sc_dim_is_const(d))
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", d.value);
    }
  } else if (group && group->kind == SC_VAL_STR) {
    g_string_append_printf(s, " over group '%s'", group->u.s);
  } else {
    /* the ranks of the tensors it reads */
    GString *r = g_string_new(NULL);
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      int32_t k = sc_graph_tensor(ex->impl, n->inputs[i])->rank;
      if (k >= 0)
        g_string_append_printf(r, "%s%d", r->len ? ", " : "", k);
    }
    if (r->len)
      g_string_append_printf(s, " over ranks %s", r->str);
    g_string_free(r, TRUE);
  }
  g_string_append(s, " (");
  append_src(s, "impl node", n);
  g_string_append_c(s, ')');
}

static char *fact_reason(sc_explain *ex, uint32_t just) {
  const fact *f = &g_array_index(ex->facts, fact, just - SC_JUST_FACT_BASE);
  GString *s = g_string_new(NULL);
  switch (f->kind) {
  case SC_FACT_RELATION: {
    const sc_tensor *t = sc_graph_tensor(ex->spec, f->subject);
    if (sc_relation_find(sc_bundle_input_relation(ex->bundle), f->subject))
      g_string_append_printf(s, "input relation of %s", t->name);
    else if (sc_relation_find(sc_bundle_assume_relation(ex->bundle), f->subject))
      g_string_append_printf(s, "assumed relation of %s (assume_relation: not proved)", t->name);
    else if (t->producer != SC_ID_NONE)
      g_string_append_printf(s, "relation of %s found at spec node %s", t->name,
                             sc_graph_node(ex->spec, t->producer)->name);
    else
      g_string_append_printf(s, "relation of %s", t->name);
    break;
  }
  case SC_FACT_DEFERRED: {
    const sc_tensor *t = sc_graph_tensor(ex->spec, f->subject);
    const sc_node *p = sc_graph_node(ex->spec, t->producer);
    g_string_append_printf(s, "%s is spec node %s over its inputs (deferred: the impl does "
                              "not compute it as such)", t->name, p->name);
    break;
  }
  case SC_FACT_IMPL: {
    const sc_node *n = sc_graph_node(ex->impl, f->subject);
    if (n->op->flags & SC_OP_COLLECTIVE)
      collective_reason(ex, n, s);
    else
      append_src(s, "impl node", n);
    break;
  }
  case SC_FACT_AC_SUM:
    g_string_append(s, "associativity and commutativity of sum (equal multisets of summands)");
    break;
  case SC_FACT_DD_SIZE:
    g_string_append(s, "one operator on equal inputs (its data-dependent sizes are equal)");
    break;
  case SC_FACT_CONST_PARTS:
    g_string_append(s, "the parts of a constant are constants (a cat equal to a full)");
    break;
  case SC_FACT_CAT_PARTS:
    g_string_append(s, "equal cats or views have equal parts (same attributes, parts of equal shapes)");
    break;
  case SC_FACT_SUM_CANCEL:
    g_string_append(s, "equal sums with one part apart have those parts equal (cancellation)");
    break;
  case SC_FACT_EXPAND_COPIES:
    g_string_append(s, "an expand of a size-1 dim is the cat of copies of its input");
    break;
  case SC_FACT_COPIES:
    g_string_append_printf(s, "the ranks' copies of %s's value (the same operators over "
                              "equal inputs)", sc_graph_tensor(ex->impl, f->subject)->name);
    break;
  }
  return g_string_free(s, FALSE);
}

static char *reason_text(sc_explain *ex, const sc_lemma_rules *rules, const sc_explain_step *st) {
  uint32_t j = st->just;
  if (j == SC_JUST_CONGRUENCE)
    return g_strdup("congruence (nested too deep to expand)");
  if (SC_JUST_IS_FACT(j) && j - SC_JUST_FACT_BASE < ex->facts->len)
    return fact_reason(ex, j);
  if (j < SC_JUST_FACT_BASE && rules) {
    uint32_t n_rules = 0;
    sc_rewrite *const *rw = sc_lemma_rules_array(rules, &n_rules);
    if (j < n_rules) {
      const sc_lemma_info *li = sc_lemma_set_lemma(ex->lemmas, sc_lemma_rules_lemma_of(rules, j));
      /* the rule "NAME (reverse)" of a <=> lemma goes right to left */
      gboolean reverse = g_str_has_suffix(sc_rewrite_name(rw[j]), " (reverse)");
      if (!st->forward)
        reverse = !reverse;
      g_autofree char *base = g_path_get_basename(li->file);
      return g_strdup_printf("lemma %s%s (%s:%u)", li->name, reverse ? ", right to left" : "",
                             base, li->line);
    }
  }
  return g_strdup("an asserted fact");
}

/* --- finding the printed term --- */

/* The text the driver prints for TERM (texts_of over sc_texpr_bind), or
 * NULL when it binds to nothing clean. */
static char *term_relation_text(sc_explain *ex, const sc_term *term) {
  sc_expr *e = sc_lang_term_to_expr(ex->lang, term);
  if (!e)
    return NULL;
  sc_texpr *t = sc_texpr_bind(e, ex->impl, TRUE, NULL);
  sc_expr_free(e);
  if (!t)
    return NULL;
  char *s = sc_texpr_to_string(t);
  sc_texpr_free(t);
  return s;
}

/* An id whose proof term is a term of class CLS printed as TEXT, found as
 * the driver found it; SC_ID_NONE if none is. */
static sc_id find_relation_term(sc_explain *ex, sc_id cls, const char *text,
                                const gboolean *allowed_leaf, const sc_infer_options *opts) {
  sc_egraph *eg = sc_lang_egraph(ex->lang);
  sc_infer_weight wc = {ex->lang, allowed_leaf};
  GPtrArray *terms = sc_egraph_enumerate(eg, sc_egraph_find(eg, cls), 4 * opts->max_terms,
                                         opts->max_term_size, sc_infer_clean_weight, &wc, NULL);
  sc_id found = SC_ID_NONE;
  for (guint i = 0; i < terms->len && found == SC_ID_NONE; i++) {
    const sc_term *term = g_ptr_array_index(terms, i);
    g_autofree char *s = term_relation_text(ex, term);
    if (!s || strcmp(s, text) != 0)
      continue;
    /* its nodes are e-nodes of the e-graph: adding it exactly makes (or
     * finds) aliases only */
    uint32_t n = sc_term_n_nodes(term);
    sc_id *ids = g_new(sc_id, n);
    GArray *kids = g_array_new(FALSE, FALSE, sizeof(sc_id));
    for (uint32_t j = 0; j < n; j++) {
      const sc_term_node *tn = sc_term_node_at(term, j);
      g_array_set_size(kids, tn->n_children);
      for (uint32_t q = 0; q < tn->n_children; q++)
        g_array_index(kids, sc_id, q) = ids[sc_term_child(term, j, q)];
      ids[j] = sc_egraph_add_exact(eg, tn->op, tn->attr, (const sc_id *)(void *)kids->data,
                                   tn->n_children);
    }
    found = ids[n - 1];
    g_array_unref(kids);
    g_free(ids);
  }
  g_ptr_array_unref(terms);
  return found;
}

/* --- building explanations --- */

static char *print_term(sc_explain *ex, const sc_term *t) {
  char *s = sc_lang_term_to_string(ex->lang, t);
  return s ? s : g_strdup_printf("(a term of %u nodes, too large to print)", sc_term_n_nodes(t));
}

/* Spec node N's call for result K as written, over its inputs' leaves. */
static char *written_call(sc_explain *ex, const sc_node *n, uint32_t k) {
  uint32_t attr = sc_lang_intern_attr(ex->lang, n->op, n->args, k);
  if (attr == SC_ID_NONE)
    return NULL;
  g_autoptr(sc_term) t = sc_term_new();
  GArray *kids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t a = 0; a < n->op->n_args; a++) {
    const sc_value *v = &n->args[a];
    if (v->kind == SC_VAL_TENSOR) {
      uint32_t i = sc_term_add(t, SC_LANG_OP_OPAQUE, v->u.tensor, NULL, 0);
      g_array_append_val(kids, i);
    } else if (v->kind == SC_VAL_TENSOR_LIST) {
      for (uint32_t j = 0; j < v->u.list.n; j++) {
        if (v->u.list.ids[j] == SC_ID_NONE)
          continue;
        uint32_t i = sc_term_add(t, SC_LANG_OP_OPAQUE, v->u.list.ids[j], NULL, 0);
        g_array_append_val(kids, i);
      }
    }
  }
  sc_term_add(t, n->op->id, attr, (const uint32_t *)(void *)kids->data, kids->len);
  g_array_unref(kids);
  return sc_lang_term_to_string(ex->lang, t);
}

typedef struct {
  sc_relation_explanation pub;
  GArray *steps; /* sc_relation_step, strings owned */
} relexp;

void sc_relation_explanation_free(gpointer p) {
  relexp *r = p;
  if (!r)
    return;
  g_free((char *)r->pub.relation);
  g_free((char *)r->pub.start);
  for (guint i = 0; i < r->steps->len; i++) {
    sc_relation_step *s = &g_array_index(r->steps, sc_relation_step, i);
    g_free((char *)s->term);
    g_free((char *)s->reason);
  }
  g_array_unref(r->steps);
  g_free(r);
}

static void add_step(relexp *r, char *term, char *reason) {
  sc_relation_step s = {term, reason};
  g_array_append_val(r->steps, s);
}

/* The chain from FROM (the spec call's id) to the id of TEXT's term. */
static relexp *explain_relation(sc_explain *ex, sc_id v, uint32_t k, sc_id from, const char *text,
                                const gboolean *allowed_leaf, gboolean output,
                                const sc_lemma_rules *rules, const sc_infer_options *opts) {
  const sc_node *n = sc_graph_node(ex->spec, v);
  sc_id to = find_relation_term(ex, from, text, allowed_leaf, opts);
  if (to == SC_ID_NONE)
    return NULL;
  sc_egraph *eg = sc_lang_egraph(ex->lang);
  uint32_t cap = opts->explain_max_steps;
  g_autoptr(sc_explanation) e = sc_egraph_explain(eg, from, to, cap);
  if (!e)
    return NULL;
  relexp *r = g_new0(relexp, 1);
  r->steps = g_array_new(FALSE, FALSE, sizeof(sc_relation_step));
  r->pub.node = v;
  r->pub.tensor = n->results[k];
  r->pub.output = output;
  r->pub.relation = g_strdup(text);
  char *start = print_term(ex, sc_explanation_start(e));
  char *written = written_call(ex, n, k);
  uint64_t total = sc_explanation_total(e);
  if (written && strcmp(written, start) != 0) {
    /* the e-graph holds the call in lang's canonical form */
    r->pub.start = written;
    add_step(r, start, g_strdup_printf("lang's canonical form of %s", n->op->qualname));
    total++;
  } else {
    r->pub.start = start;
    g_free(written);
  }
  for (uint32_t i = 0; i < sc_explanation_n_steps(e) && r->steps->len < cap; i++) {
    const sc_explain_step *st = sc_explanation_step(e, i);
    add_step(r, print_term(ex, st->term), reason_text(ex, rules, st));
  }
  r->pub.total_steps = total;
  r->pub.n_steps = r->steps->len;
  r->pub.steps = (const sc_relation_step *)(void *)r->steps->data;
  return r;
}

void sc_explain_node(sc_explain *ex, sc_id v, const sc_id *out_cls,
                     const sc_lemma_rules *rules, GPtrArray *const *output_texts,
                     GPtrArray *const *tensor_texts, const gboolean *impl_is_output,
                     const sc_infer_options *opts, GPtrArray *dest) {
  const sc_node *n = sc_graph_node(ex->spec, v);
  for (uint32_t k = 0; k < n->n_results; k++) {
    sc_id t = n->results[k];
    if (t == SC_ID_NONE || out_cls[k] == SC_ID_NONE)
      continue;
    const GPtrArray *outs = output_texts ? output_texts[t] : NULL;
    for (guint i = 0; outs && i < outs->len; i++) {
      relexp *r = explain_relation(ex, v, k, out_cls[k], g_ptr_array_index(outs, i),
                                   impl_is_output, TRUE, rules, opts);
      if (r)
        g_ptr_array_add(dest, r);
    }
    const GPtrArray *all = tensor_texts ? tensor_texts[t] : NULL;
    if (opts->explain_all && all && all->len > 0 && !(outs && outs->len > 0)) {
      relexp *r = explain_relation(ex, v, k, out_cls[k], g_ptr_array_index(all, 0), NULL, FALSE,
                                   rules, opts);
      if (r)
        g_ptr_array_add(dest, r);
    }
  }
}
