/* names.c — impl tensor names in reports (report-private.h).
 *
 * Spec and impl graphs have separate namespaces, so a report line such as
 * "gelu = cat(gelu, gelu_1, dim=1)" names the spec tensor gelu on the left
 * and rank 0's impl tensor gelu on the right.  People read labels instead:
 * an impl tensor with a rank is "r0:gelu" (per-rank bundles already name
 * it "r0.gelu" and keep that name), and the report's legend says where each
 * impl tensor comes from.  The JSON result keeps the expressions as the
 * spec defines them and adds the legend as its own key. */
#include "report/report-private.h"

#include <ctype.h>
#include <string.h>

static gboolean name_carries_rank(const char *name, int32_t rank) {
  char prefix[24];
  g_snprintf(prefix, sizeof prefix, "r%d.", (int)rank);
  return g_str_has_prefix(name, prefix);
}

char *sc_report_impl_label(const sc_bundle *b, sc_id t) {
  const sc_tensor *x = sc_graph_tensor(sc_bundle_impl(b), t);
  if (x->rank >= 0 && !name_carries_rank(x->name, x->rank))
    return g_strdup_printf("r%d:%s", (int)x->rank, x->name);
  return g_strdup(x->name);
}

static void add_seen(GArray *seen, sc_id t) {
  if (seen == NULL)
    return;
  for (guint i = 0; i < seen->len; i++)
    if (g_array_index(seen, sc_id, i) == t)
      return;
  g_array_append_val(seen, t);
}

static gboolean ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static gboolean ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

/* One pass over EXPR: names of impl tensors go to SEEN and, when OUT is
 * not NULL, are written as their labels; everything else is copied. */
static void scan_expr(const sc_bundle *b, const char *expr, GString *out, GArray *seen) {
  sc_graph *impl = sc_bundle_impl(b);
  const char *p = expr;
  while (*p) {
    if (*p == '"' || *p == '\'') {
      const char q = *p;
      const char *s = p++;
      while (*p && *p != q)
        p += (*p == '\\' && p[1]) ? 2 : 1;
      if (*p)
        p++;
      if (out)
        g_string_append_len(out, s, p - s);
    } else if (ident_start(*p)) {
      const char *s = p;
      while (ident_char(*p))
        p++;
      const char *q = p;
      while (*q == ' ')
        q++;
      gboolean call = *q == '(';
      gboolean keyword = *q == '=' && q[1] != '=';
      g_autofree char *name = g_strndup(s, (gsize)(p - s)); /* p >= s */
      sc_id t = call || keyword ? SC_ID_NONE : sc_graph_find_tensor(impl, name);
      if (t != SC_ID_NONE) {
        add_seen(seen, t);
        if (out) {
          g_autofree char *label = sc_report_impl_label(b, t);
          g_string_append(out, label);
        }
      } else if (out) {
        g_string_append(out, name);
      }
    } else if (isdigit((unsigned char)*p)) {
      /* a number such as 1e-05 or 0.5: its letters are no names */
      const char *s = p;
      while (ident_char(*p))
        p++;
      if (out)
        g_string_append_len(out, s, p - s);
    } else {
      if (out)
        g_string_append_c(out, *p);
      p++;
    }
  }
}

char *sc_report_mark_expr(const sc_bundle *b, const char *expr, GArray *seen) {
  GString *out = g_string_sized_new(strlen(expr) + 16);
  scan_expr(b, expr, out, seen);
  return g_string_free(out, FALSE);
}

void sc_report_collect_impl(const sc_bundle *b, const char *expr, GArray *seen) {
  scan_expr(b, expr, NULL, seen);
}

char *sc_report_impl_where(const sc_bundle *b, sc_id t) {
  sc_graph *impl = sc_bundle_impl(b);
  const sc_tensor *x = sc_graph_tensor(impl, t);
  GString *s = g_string_new(NULL);
  if (x->rank >= 0)
    g_string_append_printf(s, "rank %d, ", (int)x->rank);
  if (x->producer == SC_ID_NONE) {
    g_string_append(s, "impl input");
  } else {
    const sc_node *n = sc_graph_node(impl, x->producer);
    if (strcmp(n->name, x->name) == 0 && n->n_results == 1)
      g_string_append_printf(s, "%s", n->op->qualname);
    else
      g_string_append_printf(s, "result %u of %s (%s)", x->result_index, n->name,
                             n->op->qualname);
    if (n->src)
      g_string_append_printf(s, " at %s", n->src);
  }
  g_autofree char *shape = sc_shape_to_string(&x->type.shape);
  g_string_append_printf(s, ", %s%s", sc_dtype_name(x->type.dtype), shape);
  return g_string_free(s, FALSE);
}

char *sc_report_xml_escape(const char *s) {
  GString *out = g_string_sized_new(s ? strlen(s) : 0);
  for (const char *p = s; p && *p; p++) {
    switch (*p) {
    case '&': g_string_append(out, "&amp;"); break;
    case '<': g_string_append(out, "&lt;"); break;
    case '>': g_string_append(out, "&gt;"); break;
    case '"': g_string_append(out, "&quot;"); break;
    default: g_string_append_c(out, *p);
    }
  }
  return g_string_free(out, FALSE);
}
