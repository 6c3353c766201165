/* bundle.h — loading a model bundle (../shared/spec/bundle-format.md):
 * one JSON file holding the symbols and assumptions, the spec and impl
 * graphs and the relations between them.
 *
 * The loader validates everything the format fixes and reports the first
 * problem as "FILE: JSON.PATH: what is wrong" (a JSON syntax error as
 * "FILE:LINE:COL: ...").  jansson never leaves bundle.c.
 *
 * Ownership: sc_bundle_load* return a new bundle (free with
 * sc_bundle_free); everything reachable from it (symtab, graphs, relations,
 * bound expressions, strings) is owned by the bundle and borrowed by
 * callers.  Both graphs share the bundle's symtab. */
#ifndef SHARDCHECK_BUNDLE_H
#define SHARDCHECK_BUNDLE_H

#include "shardcheck/texpr.h"

G_BEGIN_DECLS

#define SC_BUNDLE_FORMAT "shardcheck-bundle/1"

#define SC_BUNDLE_ERROR (sc_bundle_error_quark())
GQuark sc_bundle_error_quark(void);
typedef enum {
  SC_BUNDLE_ERROR_IO,      /* the file cannot be read */
  SC_BUNDLE_ERROR_SYNTAX,  /* not JSON: "FILE:LINE:COL: ..." */
  SC_BUNDLE_ERROR_INVALID, /* JSON, but not a valid bundle: "FILE: PATH: ..." */
  SC_BUNDLE_ERROR_LIMIT,   /* a resource limit: the input's size, a normal form's size
                              (exit 3, not an input error) */
} sc_bundle_error;

/* Where a load error is, for machine-readable reports.  Strings are owned
 * by the diag (sc_bundle_diag_clear). */
typedef struct {
  char *file;    /* display name */
  char *path;    /* JSON path ("impl.nodes[12].args[1]"), "" for the whole file */
  int line, column; /* JSON syntax errors, else 0 */
  char *what;    /* the message without file and path */
} sc_bundle_diag;
void sc_bundle_diag_clear(sc_bundle_diag *d);

/* One key of a relation: a spec tensor and its expressions over the impl
 * graph, in file order. */
typedef struct {
  sc_id tensor;          /* spec tensor id */
  uint32_t n_exprs;
  sc_texpr **exprs;      /* bound to the impl graph */
  char **texts;          /* the expressions as written in the file */
} sc_relation_entry;

typedef struct {
  uint32_t n_entries;
  sc_relation_entry *entries; /* in file order */
  GHashTable *index;          /* private: spec tensor id + 1 -> entry index + 1 */
} sc_relation;

/* The entry for spec tensor TENSOR, or NULL. */
const sc_relation_entry *sc_relation_find(const sc_relation *r, sc_id tensor);

typedef struct sc_bundle sc_bundle;

sc_bundle *sc_bundle_load(const char *path, GError **error);
sc_bundle *sc_bundle_load_string(const char *json, const char *display_name, GError **error);
/* As above, also filling DIAG (may be NULL) on error. */
sc_bundle *sc_bundle_load_diag(const char *path, sc_bundle_diag *diag, GError **error);
sc_bundle *sc_bundle_load_string_diag(const char *json, size_t len, const char *display_name,
                                      sc_bundle_diag *diag, GError **error);
/* Options of a load.  An oracle (sym.h) given here is plugged into the
 * bundle's symtab before the graphs are read, so that the shape rules'
 * comparisons (slice bounds, views, broadcasting, declared shapes) that the
 * normal form leaves UNKNOWN reach it; it stays plugged in afterwards.
 * ORACLE_USER is borrowed and must outlive the bundle.  Without an oracle
 * (opts NULL or oracle NULL) the load is the plain sc_bundle_load*. */
typedef struct {
  const sc_sym_oracle *oracle;
  void *oracle_user;
} sc_bundle_load_options;
sc_bundle *sc_bundle_load_opts(const char *path, const sc_bundle_load_options *opts,
                               sc_bundle_diag *diag, GError **error);
sc_bundle *sc_bundle_load_string_opts(const char *json, size_t len, const char *display_name,
                                      const sc_bundle_load_options *opts, sc_bundle_diag *diag,
                                      GError **error);
void sc_bundle_free(sc_bundle *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_bundle, sc_bundle_free)

const char *sc_bundle_file(const sc_bundle *b);        /* display name */
const char *sc_bundle_name(const sc_bundle *b);        /* "name", else the file's basename */
const char *sc_bundle_description(const sc_bundle *b); /* NULL when absent */
sc_symtab *sc_bundle_symtab(const sc_bundle *b);
sc_graph *sc_bundle_spec(const sc_bundle *b);
sc_graph *sc_bundle_impl(const sc_bundle *b);
const sc_relation *sc_bundle_input_relation(const sc_bundle *b);
/* Empty (n_entries == 0) when the file has none. */
const sc_relation *sc_bundle_expect_output_relation(const sc_bundle *b);
gboolean sc_bundle_has_expect_output_relation(const sc_bundle *b);
const sc_relation *sc_bundle_assume_relation(const sc_bundle *b);
/* Spec output tensors whose relation is asked for: "check_outputs" as
 * given, else every spec output (each once, in output order). */
uint32_t sc_bundle_n_check_outputs(const sc_bundle *b);
sc_id sc_bundle_check_output(const sc_bundle *b, uint32_t i);
gboolean sc_bundle_check_outputs_given(const sc_bundle *b);

/* Per-rank implementation graphs ("impl": {"ranks": [...]}): the number of
 * ranks, 0 when impl was given as one graph.  The impl graph is then the
 * stitched graph: tensor x and node n of rank k are "rk.x" and "rk.n"
 * (tensor rank k), a rank's symbol NAME is "rk.NAME" in the symtab, and
 * each collective call of a group of two or more members is one comm.*
 * node named "comm:GROUP:J" (J counted from 0); calls on one-member groups
 * stay `_c10d_functional.*` nodes of their rank. */
uint32_t sc_bundle_n_ranks(const sc_bundle *b);
/* "inputs_behind_assumptions": spec inputs exempt from input_relation
 * because they reach the checked outputs only through assume_relation
 * tensors (checked at load time). */
uint32_t sc_bundle_n_inputs_behind_assumptions(const sc_bundle *b);
sc_id sc_bundle_input_behind_assumptions(const sc_bundle *b, uint32_t i);
/* Warnings of a successful load ("FILE: PATH: what"), e.g. an unknown
 * top-level field that was ignored. */
uint32_t sc_bundle_n_warnings(const sc_bundle *b);
const char *sc_bundle_warning(const sc_bundle *b, uint32_t i);

G_END_DECLS

#endif
