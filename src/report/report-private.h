/* report-private.h — private to src/report: how the report writers name
 * impl tensors, colour text, and draw the failing neighbourhood.
 *
 * Ownership: functions returning char* return new strings (g_free); the
 * picture owns its labels (sc_picture_free).  Everything borrows the
 * bundle and the result. */
#ifndef SC_REPORT_PRIVATE_H
#define SC_REPORT_PRIVATE_H

#include "shardcheck/report.h"

/* --- names.c: impl tensor names in reports -------------------------- */

/* The label of impl tensor T: "r0:add_2" when T has a rank and its name
 * does not already carry it (per-rank bundles name tensors "r0.add_2"),
 * else its name.  (transfer full) */
char *sc_report_impl_label(const sc_bundle *b, sc_id t);
/* EXPR (an expression over impl tensors, as the result gives it; in an
 * explanation chain, spec tensors whose names the impl also defines are
 * written spec.NAME, so every plain name the impl defines is the impl's) with
 * every impl tensor name replaced by its label.  Names are identifiers
 * not followed by "(" (a call) or "=" (a keyword); quoted text is copied
 * as it is.  Appends the impl tensors met to SEEN (a GArray of sc_id, may
 * be NULL), each once.  (transfer full) */
char *sc_report_mark_expr(const sc_bundle *b, const char *expr, GArray *seen);
/* The impl tensors named in EXPR, appended to SEEN (each once). */
void sc_report_collect_impl(const sc_bundle *b, const char *expr, GArray *seen);
/* What an impl tensor is: "rank 0, gelu = aten.gelu.default at model.py:33,
 * f32[4, 8]" (or "impl input" in place of the producer).  (transfer full) */
char *sc_report_impl_where(const sc_bundle *b, sc_id t);

/* --- colour.c: SGR escapes on a terminal ---------------------------- */

typedef enum {
  SC_STYLE_RESET,
  SC_STYLE_BOLD,
  SC_STYLE_DIM,
  SC_STYLE_RED,
  SC_STYLE_GREEN,
  SC_STYLE_YELLOW,
  SC_STYLE_CYAN,
} sc_report_style;
/* The escape for STYLE when OPTS asks for colour, else "". */
const char *sc_report_sgr(const sc_report_options *opts, sc_report_style style);
/* The style of a verdict word: green refines, red fails, yellow limit. */
sc_report_style sc_report_verdict_style(sc_verdict v);

/* --- picture.c: the failing neighbourhood as a small graph ---------- */

typedef enum {
  SC_PIC_SPEC_NODE,     /* a spec operator */
  SC_PIC_SPEC_FAILING,  /* the spec operator the check could not map */
  SC_PIC_SPEC_TENSOR,   /* a spec tensor with a relation */
  SC_PIC_SPEC_UNMAPPED, /* a spec tensor without a clean relation */
  SC_PIC_IMPL_TENSOR,   /* an impl tensor */
  SC_PIC_IMPL_NODE,     /* an impl operator whose inputs are related */
} sc_pic_kind;

typedef struct {
  char *id;     /* unique, [A-Za-z0-9_]: "s_t3", "i_n7" */
  char *label;  /* first line: a name */
  char *sub;    /* second line (op, src, relation), may be NULL */
  sc_pic_kind kind;
} sc_pic_vertex;

typedef struct {
  uint32_t from, to; /* vertex indices */
  gboolean relation; /* spec tensor -> impl tensor it is related to */
} sc_pic_edge;

typedef struct {
  char *title;          /* what is drawn, one line */
  GArray *vertices;     /* sc_pic_vertex */
  GArray *edges;        /* sc_pic_edge */
  char *failing;        /* the failing spec node's name, or NULL */
} sc_picture;

/* The failing neighbourhood of R: for an unmapped node, the node, its
 * inputs and results, the impl tensors its inputs are related to, and the
 * impl nodes whose inputs all lie among those and the nearest terms' impl
 * tensors (what the exploration could assert there), with their results;
 * for an unexpected relation, the spec tensor, its producer and the impl
 * tensors of the relation found.  Empty (no vertices) when R did not fail.
 * (transfer full) */
sc_picture *sc_picture_build(const sc_bundle *b, const sc_infer_result *r);
void sc_picture_free(sc_picture *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_picture, sc_picture_free)

/* --- svg.c: a layered drawing of a picture, no external tool -------- */

/* Writes P as one <svg> element (inline in HTML).  Vertices are placed in
 * layers by longest path from the sources, in insertion order within a
 * layer, then reordered once by the mean position of their predecessors. */
void sc_picture_write_svg(FILE *out, const sc_picture *p);

/* --- escaping shared by the DOT, SVG and HTML writers --------------- */

/* S with & < > " escaped for XML/HTML text and attributes.  (transfer full) */
char *sc_report_xml_escape(const char *s);

/* --- report.c: operators assumed without a definition -------------- */

/* "assumed: operator K has no definition (FILE:LINE); unchecked lemmas:
 * ...; relations relying on it: ..." for each of OPTS->assumed_ops. */
void sc_report_print_assumed_ops(FILE *out, const sc_report_options *opts);

#endif
