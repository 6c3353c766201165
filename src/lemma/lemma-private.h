/* lemma-private.h — private to src/lemma: the syntax tree of lemma files,
 * the parser (parse.c), the checker (check.c), the evaluator of conditions
 * and computed attributes (eval.c), operator declarations (decl.c) and the
 * lowering to e-graph rewrites (compile.c).
 *
 * Errors are raised with a byte offset into the file's text (a span start);
 * line and column are computed only when the load reports them
 * (lemma.c, ld_errors_to_gerror).  One tree type (lx) serves patterns,
 * conditions, computed attributes and shape rules; the checker decides
 * which forms are allowed where.  Trees own their children and strings. */
#ifndef SC_LEMMA_PRIVATE_H
#define SC_LEMMA_PRIVATE_H

/* Link names: every global symbol of the library carries the module's
 * sc_ prefix (STYLE.md point 1); the short internal names stay in the
 * code.  (Issue 19: found with nm on the static libraries.) */
#define ld_diag_clear      sc_lemma_ld_diag_clear
#define ld_diag_init       sc_lemma_ld_diag_init
#define ld_diag_to_gerror  sc_lemma_ld_diag_to_gerror
#define ld_error_at        sc_lemma_ld_error_at
#define ld_line_col        sc_lemma_ld_line_col
#define ld_diag_line_col   sc_lemma_ld_diag_line_col
#define ld_parse           sc_lemma_ld_parse
#define ld_parse_one       sc_lemma_ld_parse_one
#define ld_scan_text       sc_lemma_ld_scan_text
#define ld_scan_free       sc_lemma_ld_scan_free
#define ld_stmt_free       sc_lemma_ld_stmt_free
#define ld_check_lemma     sc_lemma_ld_check_lemma
#define ld_checked_free    sc_lemma_ld_checked_free
#define ld_literal_value   sc_lemma_ld_literal_value
#define ld_check_opdecl    sc_lemma_ld_check_opdecl
#define ld_decl_shape_rule sc_lemma_ld_decl_shape_rule
#define lx_append          sc_lemma_lx_append
#define lx_new             sc_lemma_lx_new
#define lx_push            sc_lemma_lx_push
#define ld_lemma_free      sc_lemma_ld_lemma_free
#define ld_class_instance  sc_lemma_ld_class_instance
#define ld_class_instance_name sc_lemma_ld_class_instance_name
#define lx_copy            sc_lemma_lx_copy
#define lx_free            sc_lemma_lx_free
#define pnode_free         sc_lemma_pnode_free
#define ev_condition       sc_lemma_ev_condition
#define ev_eval            sc_lemma_ev_eval
#define ev_resolve         sc_lemma_ev_resolve
#define ev_to_value        sc_lemma_ev_to_value
#define ev_undecided_text  sc_lemma_ev_undecided_text
#define pn_call_args       sc_lemma_pn_call_args
#define pn_result          sc_lemma_pn_result
#define pn_result_bound    sc_lemma_pn_result_bound
#define pn_vars            sc_lemma_pn_vars
#define lx_vars            sc_lemma_lx_vars

#include "shardcheck/lemma.h"

typedef enum {
  LX_VAR,   /* ?x: text */
  LX_WILD,  /* ?_ */
  LX_CALL,  /* text(args), result index `text#k(...)` in result (-1: none) */
  LX_INT,   /* ival */
  LX_FLOAT, /* fval */
  LX_STR,   /* text */
  LX_NAME,  /* bare identifier: f32, True, None, a declaration parameter */
  LX_LIST,  /* [kids] */
  LX_BIN,   /* kids[0] op kids[1]; op one of + - * / % */
  LX_NEG,   /* -kids[0] */
  LX_CMP,   /* kids[0] op kids[1]; op one of == != < <= > >= d (divides) */
  LX_AND,
  LX_OR,
  LX_NOT,
} lx_kind;

typedef struct lx lx;
struct lx {
  lx_kind kind;
  uint32_t start, end;  /* byte span in the file's text */
  char *text;
  int64_t ival;
  double fval;
  int32_t result;       /* CALL: #k, or -1 */
  char *result_var;     /* CALL: #?k, the name of a result-index variable
                           (then RESULT is -1), or NULL */
  uint32_t result_var_pos; /* offset of that variable */
  char op[3];           /* BIN / CMP operator text ("d" for divides) */
  uint32_t n;
  lx **kids;
  char **keys;          /* CALL: n entries, NULL for positional */
  uint32_t *key_pos;    /* CALL: offset of each key */
  /* Caches for evaluation (eval.c), 0 until filled.  FN (CALL): the
   * function's code, a function of the text, filled by ev_resolve or on
   * first evaluation, so that calls dispatch without comparing names.
   * SLOT (VAR): 1 + the index of the name in the variable list SLOT_OF it
   * was resolved against by ev_resolve; a lookup in another list compares
   * names.  compile.c resolves only the trees of checked lemmas, against
   * their own variables, and nothing copies those trees. */
  uint8_t fn;
  uint32_t slot;
  const void *slot_of;
};

void lx_free(lx *e);
/* A node of kind K spanning [START, END) (result -1); append KID (owned)
 * with KEY (copied; NULL: positional) to E. */
lx *lx_new(lx_kind k, uint32_t start, uint32_t end);
void lx_push(lx *e, const char *key, uint32_t key_pos, lx *kid);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(lx, lx_free)
lx *lx_copy(const lx *e);
/* Canonical text (used for the text of generated lemmas and tests). */
void lx_append(GString *out, const lx *e);

/* An error raised at a byte offset. */
typedef struct {
  uint32_t pos;
  sc_lemma_error code;
  char *msg;
} ld_error;

/* Errors of one load, in raising order. */
typedef struct {
  const char *file;
  const char *text;
  GArray *errors; /* ld_error */
  gboolean skip_instance_test; /* the text passed it before (cache.c) */
  uint32_t lc_pos, lc_line, lc_col; /* the last position ld_diag_line_col
                                       computed, to go on from */
} ld_diag;

void ld_diag_init(ld_diag *d, const char *file, const char *text);

/* --- the instance-test cache (cache.c) --- */

/* The key of a text (TEXT_DIGEST: its SHA-256, hex) loaded after the
 * files whose chain digest is CHAIN (NULL: none), for this executable;
 * NULL when the cache cannot be used (transfer full). */
char *sc_lemma_cache_file_key(const char *chain, const char *text_digest);
/* The identity of the file at PATH by its status, "stat:DEV:INODE:SIZE:
 * MTIME:CTIME", or NULL when it changed in the last 2 seconds (a change
 * within the clock's granularity could keep its times: git's "racy"
 * files) or cannot be read.  A file's content cannot change without its
 * change time (ctime, which no user can set back) changing.  (transfer
 * full) */
char *sc_lemma_cache_file_identity(const char *path);
/* CHAIN extended by the text of digest TEXT_DIGEST (transfer full). */
char *sc_lemma_cache_chain(const char *chain, const char *text_digest);
/* Whether KEY was recorded, recording it: sc_lemma_cache_has, _put
 * (lemma-cache.h). */
void ld_diag_clear(ld_diag *d);
void ld_error_at(ld_diag *d, uint32_t pos, sc_lemma_error code, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
/* "FILE:LINE:COL: error: MSG" lines; the code of the first error. */
void ld_diag_to_gerror(const ld_diag *d, GError **error);
void ld_line_col(const char *text, uint32_t pos, uint32_t *line, uint32_t *col);
/* ld_line_col in D's text, going on from the last position asked when POS
 * is not before it (statements are checked in text order: linear, not
 * quadratic, in the file's length). */
void ld_diag_line_col(ld_diag *d, uint32_t pos, uint32_t *line, uint32_t *col);

typedef struct {
  char *name;
  uint32_t start, end, name_pos;
  lx *lhs, *rhs;
  gboolean both;
  uint32_t arrow_pos;
  lx *where;            /* NULL when absent */
  GPtrArray *requires;  /* lx* */
  /* `for ?f in CLASS`: a class lemma (NULL when absent); calls ?f(...) in
   * the trees are LX_CALLs whose text is "?f" */
  char *class_var, *class_name;
  uint32_t class_var_pos, class_pos;
} ld_lemma;

typedef struct {
  lx *shape;            /* shape(x), [..], with_size(...) */
  lx *dtype;            /* NULL: the first tensor parameter's dtype */
} ld_result;

typedef struct {
  char *qualname;       /* "mylib.fused_rms_norm" */
  uint32_t start, end, name_pos;
  char *params;         /* raw text between the parentheses */
  uint32_t params_pos;  /* offset of that text */
  GArray *results;      /* ld_result */
  uint32_t results_pos;
  lx *where;
  lx *def;              /* = DEFINITION, or NULL */
  GPtrArray *traits;    /* char*: `is elementwise, ...` (decl.c maps them to flags) */
  GArray *trait_pos;    /* uint32_t, parallel */
} ld_opdecl;

typedef enum { LD_LEMMA, LD_OP } ld_stmt_kind;
typedef struct {
  ld_stmt_kind kind;
  ld_lemma *lemma;
  ld_opdecl *op;
} ld_stmt;

/* Parse a whole file; statements that parse are appended to STMTS (a
 * GPtrArray of ld_stmt*, freed with ld_stmt_free); errors go to D (the
 * parser skips to the next statement after an error). */
void ld_parse(ld_diag *d, const char *text, GPtrArray *stmts);
void ld_stmt_free(gpointer s);
void ld_lemma_free(ld_lemma *l);
/* Parse the one statement that starts at offset START of TEXT (positions
 * stay offsets into the whole text) into STMTS; errors go to D. */
void ld_parse_one(ld_diag *d, const char *text, uint32_t start, GPtrArray *stmts);

/* --- the scan of a file's statements (scan.c) --- */

/* One statement as the scan sees it.  Call names as written ("cat",
 * "aten.mm", "?f" for an operator variable): LHS those before the arrow,
 * REV those of the right side of a <=> lemma before its clauses (where,
 * requires, for), ALL every call of the statement. */
typedef struct {
  uint32_t start;            /* offset of the first token */
  uint32_t end;              /* the next statement's start, or the text's end:
                                the statement's text and the comments after it */
  gboolean is_lemma, is_op;  /* 'lemma' or 'op' */
  gboolean both;             /* <=> */
  char *name;                /* the lemma's name */
  char *class_var, *class_name; /* `for ?f in CLASS` (without '?'), or NULL */
  GPtrArray *lhs, *rev, *all;   /* char* */
} ld_scan;
/* The statements of TEXT, in order, into OUT (ld_scan*, free with
 * ld_scan_free).  Meant for text the parser accepts. */
void ld_scan_text(const char *text, GPtrArray *out);
void ld_scan_free(gpointer s);

/* --- class lemmas (classes.c) --- */

/* The lemma STMT (a class lemma: `for ?f in CLASS`) with ?f bound to OP:
 * every call ?f(t1, ..., key=v) becomes OP(...) with t1, ... as OP's Tensor
 * arguments in order, the keywords as written, and each other argument
 * the attribute variable ?f__NAME, shared by every call of ?f (so that
 * "the same operator" means the same attributes).  The name is
 * NAME[OP's short name].  NULL with an error in D (an operand count or a
 * keyword OP does not have).  Device/layout and dtype (ScalarType)
 * arguments are not bound: they keep their defaults unless written.
 * (transfer full) */
ld_lemma *ld_class_instance(ld_diag *d, const ld_lemma *stmt, const sc_op *op);
/* NAME[short name of OP] (transfer full). */
char *ld_class_instance_name(const char *name, const sc_op *op);

/* --- resolved patterns (check.c) --- */

/* How one non-tensor argument of a pattern node is constrained/built. */
typedef enum {
  PA_DEFAULT,  /* omitted: the schema default (lhs: must equal it) */
  PA_LITERAL,  /* value */
  PA_VAR,      /* attribute variable (var index) */
  PA_WILD,     /* ?_ : anything (lhs only) */
  PA_COMPUTE,  /* expression over bindings (rhs only) */
} pa_kind;

typedef struct {
  pa_kind kind;
  sc_value value;      /* LITERAL, DEFAULT (copy of the default) */
  uint32_t var;        /* VAR */
  const lx *expr;      /* COMPUTE (borrowed from the statement) */
} pat_arg;

typedef struct pnode pnode;
struct pnode {
  gboolean is_var;
  uint32_t var;        /* tensor variable index */
  uint32_t pos;        /* source offset */
  const sc_op *op;
  uint32_t result;
  /* `op#?k(...)`: the result index is attribute variable RESULT_VAR (its
   * value an int; on the left bound from the matched e-node's result
   * index, on the right read from the binding), UINT32_MAX: RESULT. */
  uint32_t result_var;
  pat_arg *args;       /* op->n_args; tensor args: kind DEFAULT, unused */
  uint32_t *layout;    /* op->n_args: children of each tensor arg (UINT32_MAX:
                          optional tensor absent); 0 for others */
  uint32_t n_kids;
  pnode **kids;        /* in argument order */
};
void pnode_free(pnode *p);
/* The result index of P under the attribute values VALUES (indexed by
 * variable): P->result, or the value of its result-index variable; FALSE
 * when that value is not a non-negative int (no such result). */
gboolean pn_result(const pnode *p, const sc_value *values, uint32_t *out);
/* The same, VALUES given as pointers (the guard's bindings; NULL: unbound). */
gboolean pn_result_bound(const pnode *p, const sc_value *const *bind, uint32_t *out);

/* Variables of a lemma: tensor or attribute, by first use. */
typedef struct {
  GPtrArray *names;    /* char* */
  GArray *is_attr;     /* gboolean */
  GArray *first_pos;   /* uint32_t */
} ld_vars;

/* A checked lemma, ready to lower. */
typedef struct {
  char *name;
  char *file;
  uint32_t line, col;
  char *text;
  sc_lemma_direction dir;
  ld_vars vars;
  pnode *lhs, *rhs;
  GPtrArray *requires; /* pnode* */
  lx *where;           /* owned (moved from the statement) */
  lx *rhs_src;         /* owned: keeps COMPUTE expressions alive */
  lx *lhs_src;
  GPtrArray *req_src;  /* lx* owned */
  const sc_op *unfolds;
  /* may the lemma run right to left? */
  gboolean reversible;
} ld_checked;
void ld_checked_free(gpointer p);
/* Mark in SEEN (a gboolean per variable of VARS) the variables E names
 * (?x, a result-index variable), and those P reads: its leaves, result-
 * index variables, attribute arguments and, with COMPUTED, the variables
 * of its computed arguments (check.c). */
void lx_vars(const lx *e, const ld_vars *vars, gboolean *seen);
void pn_vars(const pnode *p, const ld_vars *vars, gboolean computed, gboolean *seen);

/* Check a parsed lemma (resolving names, binding arguments to schemas,
 * variable kinds) and run the instance test of the two sides' types.
 * Takes the statement's trees.  NULL with errors in D. */
ld_checked *ld_check_lemma(ld_diag *d, const char *file, ld_lemma *stmt);

/* Check and register an operator declaration; on success returns the op
 * and, when it has a definition, a checked NAME_unfold lemma in *unfold. */
const sc_op *ld_check_opdecl(ld_diag *d, const char *file, ld_opdecl *stmt,
                             ld_checked **unfold);

/* --- evaluation (eval.c) --- */

typedef enum {
  EV_DIM,     /* d */
  EV_SHAPE,   /* shape: also an int list */
  EV_DTYPE,   /* dtype */
  EV_TRUTH,   /* truth */
  EV_TENSOR,  /* type */
  EV_VALUE,   /* v (borrowed): float, str, bool, None, lists... */
  EV_UNKNOWN, /* an integer nobody knows: vmin/vmax of a class without that
                 bound; comparisons with it are UNKNOWN, arithmetic keeps it */
} ev_kind;

typedef struct {
  ev_kind kind;
  sc_dim d;
  sc_shape shape;
  sc_dtype dtype;
  sc_truth truth;
  const sc_ttype *type;
  const sc_value *v;
  const sc_vrange *range; /* EV_TENSOR: the class's value range, or NULL */
  GArray *assumed;        /* EV_TENSOR: when not NULL, vmin/vmax append the
                             assumption id (uint32_t) of each assumed bound
                             of RANGE they read (lang.h, value ranges) */
} ev_val;

/* Resolves a ?var (LX_VAR) or a parameter (LX_NAME) to a value; FALSE
 * when unbound.  Names that are not parameters (dtype names) are not
 * asked. */
typedef gboolean (*ev_lookup_fn)(void *env, const lx *ref, ev_val *out);

typedef struct {
  sc_symtab *st;
  ev_lookup_fn lookup;
  void *env;
} ev_env;

/* Evaluate E.  FALSE when it cannot be evaluated (a type mismatch, a dim
 * out of range, a division by zero, an overflow): the caller treats that as
 * "does not hold" / "cannot build".  Conditions give EV_TRUTH. */
gboolean ev_eval(const ev_env *env, const lx *e, ev_val *out);
/* Resolves the function names of E's calls (lx.fn) and the variables
 * of E against NAMES (lx.slot; NULL: not the variables).  Evaluation
 * gives the same results with or without it, only faster. */
void ev_resolve(lx *e, const GPtrArray *names);
/* A condition: YES, NO, UNKNOWN; an evaluation failure is NO. */
sc_truth ev_condition(const ev_env *env, const lx *cond);
/* The comparisons of COND that are UNKNOWN under ENV, each instantiated
 * ("min(S*T, U) < U", dims printed in the symtab's syntax), joined by
 * ", "; NULL when none is.  For reports of conditions that did not fire.
 * Caller g_free()s. */
char *ev_undecided_text(const ev_env *env, const lx *cond);
/* Convert an evaluated value to a bound argument of type ARG. */
gboolean ev_to_value(const ev_val *v, const sc_arg *arg, sc_value *out);

/* The argument values of call P (not a variable) under an instance
 * (call-args.c): the tensor arguments name P's children in order, child i
 * as KID_IDS[i] (NULL: as i); the others from their literal, the schema
 * default, VALUES (the instance's values of the attribute variables) or
 * computed under ENV.  ARGS: P->op->n_args zeroed values, filled in order;
 * the caller clears them (sc_value_clear) whatever the answer.  FALSE when
 * a computed argument cannot be computed, with *WHY (when WHY is not NULL)
 * naming it (caller g_free()s). */
gboolean pn_call_args(const pnode *p, const sc_value *values, const ev_env *env,
                      const sc_id *kid_ids, sc_value *args, char **why);

/* Convert a literal tree to a bound value of argument type ARG (shared by
 * the checker and declarations).  FALSE with *why set (static text). */
gboolean ld_literal_value(const lx *e, const sc_arg *arg, sc_value *out, const char **why);

/* The shape rule of declared operators (decl.c). */
gboolean ld_decl_shape_rule(const sc_op_call *call, GArray *out, GError **error);

#endif
