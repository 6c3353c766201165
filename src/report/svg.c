/* svg.c — a picture (report-private.h) drawn as inline SVG, with no
 * external tool: a layered layout in the manner of Sugiyama's, reduced to
 * what a neighbourhood of a few dozen vertices needs.
 *
 *   1. layer = the longest path from a source (the picture is a DAG: spec
 *      inputs -> spec node -> spec results, spec tensor -> impl tensor ->
 *      impl node -> impl results);
 *   2. within a layer, insertion order, then one pass sorting by the mean
 *      x of the predecessors (barycenter), which removes most crossings,
 *      spec vertices first so that the spec side reads on the left;
 *   3. boxes sized from their text (monospace, so width = characters),
 *      layers centred, straight edges with an arrowhead, relation edges
 *      dashed.
 * Text is XML-escaped; nothing is fetched (no fonts, no scripts). */
#include "report/report-private.h"

#include <string.h>

#define CHAR_W 7.2
#define LINE_H 15.0
#define PAD_X 10.0
#define GAP_X 24.0
#define GAP_Y 56.0
#define MARGIN 16.0
#define TITLE_H 28.0

typedef struct {
  uint32_t layer;
  double x, y, w, h; /* top-left corner and size */
  double order;      /* sort key within its layer */
} place;

static double text_width(const char *s) { return s ? (double)g_utf8_strlen(s, -1) * CHAR_W : 0; }

static void fill_stroke(sc_pic_kind k, const char **fill, const char **stroke) {
  switch (k) {
  case SC_PIC_SPEC_FAILING: *fill = "#f8d0d0"; *stroke = "#b00000"; return;
  case SC_PIC_SPEC_NODE:
  case SC_PIC_SPEC_TENSOR: *fill = "#dde8f8"; *stroke = "#3060c0"; return;
  case SC_PIC_SPEC_UNMAPPED: *fill = "#fde2c0"; *stroke = "#c06000"; return;
  case SC_PIC_IMPL_TENSOR:
  case SC_PIC_IMPL_NODE: *fill = "#eeeeee"; *stroke = "#707070"; return;
  }
  *fill = "#ffffff";
  *stroke = "#000000";
}

/* Longest-path layers; edges only go forward in a DAG, so relaxing
 * |V| times reaches the fixpoint. */
static void assign_layers(const sc_picture *p, place *pl) {
  guint n = p->vertices->len;
  for (guint round = 0; round < n; round++) {
    gboolean changed = FALSE;
    for (guint i = 0; i < p->edges->len; i++) {
      const sc_pic_edge *e = &g_array_index(p->edges, sc_pic_edge, i);
      if (pl[e->to].layer < pl[e->from].layer + 1) {
        pl[e->to].layer = pl[e->from].layer + 1;
        changed = TRUE;
      }
    }
    if (!changed)
      break;
  }
}

static gint by_order(gconstpointer a, gconstpointer b, gpointer user) {
  const place *base = user;
  const place *pa = &base[*(const uint32_t *)a], *pb = &base[*(const uint32_t *)b];
  if (pa->order != pb->order)
    return pa->order < pb->order ? -1 : 1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Places the vertices of each layer left to right in ORDER; returns the
 * widest layer's width. */
static double place_layers(const sc_picture *p, place *pl, uint32_t n_layers) {
  guint n = p->vertices->len;
  double widest = 0;
  g_autofree uint32_t *ids = g_new(uint32_t, n ? n : 1);
  for (uint32_t l = 0; l < n_layers; l++) {
    uint32_t k = 0;
    for (guint i = 0; i < n; i++)
      if (pl[i].layer == l)
        ids[k++] = i;
    g_qsort_with_data(ids, (gint)k, sizeof *ids, by_order, pl);
    double x = 0;
    for (uint32_t j = 0; j < k; j++) {
      pl[ids[j]].x = x;
      x += pl[ids[j]].w + GAP_X;
    }
    widest = MAX(widest, x - GAP_X);
  }
  return widest;
}

/* Centre each layer in WIDTH. */
static void centre_layers(const sc_picture *p, place *pl, uint32_t n_layers, double width) {
  for (uint32_t l = 0; l < n_layers; l++) {
    double right = 0;
    for (guint i = 0; i < p->vertices->len; i++)
      if (pl[i].layer == l)
        right = MAX(right, pl[i].x + pl[i].w);
    for (guint i = 0; i < p->vertices->len; i++)
      if (pl[i].layer == l)
        pl[i].x += MARGIN + (width - right) / 2;
  }
}

static void write_text(FILE *out, double x, double y, const char *cls, const char *s) {
  g_autofree char *esc = sc_report_xml_escape(s);
  fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\">%s</text>\n", x, y, cls, esc);
}

void sc_picture_write_svg(FILE *out, const sc_picture *p) {
  guint n = p->vertices->len;
  g_autofree place *pl = g_new0(place, n ? n : 1);
  uint32_t n_layers = 0;
  for (guint i = 0; i < n; i++) {
    const sc_pic_vertex *v = &g_array_index(p->vertices, sc_pic_vertex, i);
    pl[i].w = MAX(text_width(v->label), text_width(v->sub)) + 2 * PAD_X;
    pl[i].h = (v->sub ? 2 : 1) * LINE_H + 12;
    pl[i].order = i;
  }
  assign_layers(p, pl);
  for (guint i = 0; i < n; i++)
    n_layers = MAX(n_layers, pl[i].layer + 1);
  place_layers(p, pl, n_layers);
  /* one barycenter pass: a vertex's key is the mean centre of its
   * predecessors (sources keep their order) */
  for (guint i = 0; i < n; i++) {
    double sum = 0;
    uint32_t k = 0;
    for (guint j = 0; j < p->edges->len; j++) {
      const sc_pic_edge *e = &g_array_index(p->edges, sc_pic_edge, j);
      if (e->to == i) {
        sum += pl[e->from].x + pl[e->from].w / 2;
        k++;
      }
    }
    pl[i].order = k ? sum / k : pl[i].x;
    const sc_pic_vertex *v = &g_array_index(p->vertices, sc_pic_vertex, i);
    if (v->kind == SC_PIC_IMPL_TENSOR || v->kind == SC_PIC_IMPL_NODE)
      pl[i].order += 1e6; /* spec on the left of each layer, impl on the right */
  }
  double width = place_layers(p, pl, n_layers);
  width = MAX(width, text_width(p->title));
  centre_layers(p, pl, n_layers, width);
  double y = MARGIN + TITLE_H;
  for (uint32_t l = 0; l < n_layers; l++) {
    double h = 0;
    for (guint i = 0; i < n; i++)
      if (pl[i].layer == l)
        h = MAX(h, pl[i].h);
    for (guint i = 0; i < n; i++)
      if (pl[i].layer == l)
        pl[i].y = y + (h - pl[i].h) / 2;
    y += h + GAP_Y;
  }
  double height = y - GAP_Y + MARGIN;
  double total_w = width + 2 * MARGIN;

  fprintf(out,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"neighbourhood\" width=\"%.0f\" "
          "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
          total_w, height, total_w, height);
  g_autofree char *title = sc_report_xml_escape(p->title);
  fprintf(out, "<title>%s</title>\n", title);
  fputs("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
        "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
        "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n"
        "<style>text{font-family:monospace;font-size:12px;fill:#111}"
        ".title{font-weight:bold;font-size:13px}.sub{fill:#444}</style>\n",
        out);
  fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
          total_w, height);
  write_text(out, MARGIN, MARGIN + 12, "title", p->title);
  for (guint i = 0; i < p->edges->len; i++) {
    const sc_pic_edge *e = &g_array_index(p->edges, sc_pic_edge, i);
    const place *a = &pl[e->from], *b = &pl[e->to];
    double x1 = a->x + a->w / 2, y1 = a->y + a->h, x2 = b->x + b->w / 2, y2 = b->y;
    if (b->layer <= a->layer) { /* same layer: side to side */
      y1 = a->y + a->h / 2;
      y2 = b->y + b->h / 2;
      x1 = a->x < b->x ? a->x + a->w : a->x;
      x2 = a->x < b->x ? b->x : b->x + b->w;
    }
    fprintf(out,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"1.3\"%s%s/>\n",
            x1, y1, x2, y2, e->relation ? "#3060c0" : "#555",
            e->relation ? " stroke-dasharray=\"5,4\"" : "",
            e->relation ? "" : " marker-end=\"url(#arrow)\"");
  }
  for (guint i = 0; i < n; i++) {
    const sc_pic_vertex *v = &g_array_index(p->vertices, sc_pic_vertex, i);
    const char *fill, *stroke;
    fill_stroke(v->kind, &fill, &stroke);
    gboolean box = v->kind == SC_PIC_SPEC_FAILING || v->kind == SC_PIC_SPEC_NODE ||
                   v->kind == SC_PIC_IMPL_NODE;
    fprintf(out,
            "<g id=\"%s\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"%d\" "
            "fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"/>\n",
            v->id, pl[i].x, pl[i].y, pl[i].w, pl[i].h, box ? 3 : 12, fill, stroke,
            v->kind == SC_PIC_SPEC_FAILING ? "2.5" : "1");
    write_text(out, pl[i].x + PAD_X, pl[i].y + 6 + 12, "label", v->label);
    if (v->sub)
      write_text(out, pl[i].x + PAD_X, pl[i].y + 6 + 12 + LINE_H, "sub", v->sub);
    fputs("</g>\n", out);
  }
  fputs("</svg>\n", out);
}
