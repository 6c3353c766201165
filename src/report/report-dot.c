/* report-dot.c — the failing neighbourhood as Graphviz DOT (report.h,
 * sc_report_dot).  Spec vertices are blue (the failing node red, an
 * unmapped tensor orange), impl vertices grey; a dashed edge goes from a
 * spec tensor to the impl tensors of its relation.  Labels are DOT
 * strings, escaped here. */
#include "report/report-private.h"

static void put_dot_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const char *p = s; p && *p; p++) {
    if (*p == '"' || *p == '\\')
      fputc('\\', out);
    if (*p == '\n') {
      fputs("\\n", out);
      continue;
    }
    fputc(*p, out);
  }
  fputc('"', out);
}

static const char *vertex_attrs(sc_pic_kind k) {
  switch (k) {
  case SC_PIC_SPEC_FAILING:
    return "shape=box, style=\"filled,bold\", fillcolor=\"#f8d0d0\", color=\"#b00000\"";
  case SC_PIC_SPEC_NODE: return "shape=box, style=filled, fillcolor=\"#dde8f8\"";
  case SC_PIC_SPEC_TENSOR: return "shape=ellipse, style=filled, fillcolor=\"#dde8f8\"";
  case SC_PIC_SPEC_UNMAPPED:
    return "shape=ellipse, style=filled, fillcolor=\"#fde2c0\", color=\"#c06000\"";
  case SC_PIC_IMPL_TENSOR: return "shape=ellipse, style=filled, fillcolor=\"#eeeeee\"";
  case SC_PIC_IMPL_NODE: return "shape=box, style=filled, fillcolor=\"#e4e4e4\"";
  }
  return "";
}

void sc_report_dot(FILE *out, const sc_bundle *b, const sc_infer_result *r,
                   const sc_report_options *opts) {
  g_autoptr(sc_picture) p = sc_picture_build(b, r);
  fputs("digraph shardcheck {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=11];\n"
        "  labelloc=t;\n  label=",
        out);
  put_dot_string(out, p->title);
  fputs(";\n", out);
  if (p->vertices->len == 0)
    fputs("  none [shape=note, label=\"no failure to draw\"];\n", out);
  for (int side = 0; side < 2; side++) {
    fprintf(out, "  subgraph cluster_%s {\n    label=\"%s\";\n    color=\"#999999\";\n",
            side == 0 ? "spec" : "impl", side == 0 ? "spec" : "impl");
    for (guint i = 0; i < p->vertices->len; i++) {
      const sc_pic_vertex *v = &g_array_index(p->vertices, sc_pic_vertex, i);
      gboolean impl = v->kind == SC_PIC_IMPL_TENSOR || v->kind == SC_PIC_IMPL_NODE;
      if (impl != (side == 1))
        continue;
      g_autofree char *label =
          v->sub ? g_strdup_printf("%s\n%s", v->label, v->sub) : g_strdup(v->label);
      fprintf(out, "    %s [%s, label=", v->id, vertex_attrs(v->kind));
      put_dot_string(out, label);
      fputs("];\n", out);
    }
    fputs("  }\n", out);
  }
  for (guint i = 0; i < p->edges->len; i++) {
    const sc_pic_edge *e = &g_array_index(p->edges, sc_pic_edge, i);
    const sc_pic_vertex *from = &g_array_index(p->vertices, sc_pic_vertex, e->from);
    const sc_pic_vertex *to = &g_array_index(p->vertices, sc_pic_vertex, e->to);
    fprintf(out, "  %s -> %s%s;\n", from->id, to->id,
            e->relation ? " [style=dashed, color=\"#3060c0\", arrowhead=none]"
                        : "");
  }
  fputs("}\n", out);
}
