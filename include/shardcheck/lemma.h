/* lemma.h — the lemma DSL: rewrite rules with side conditions, and
 * operator declarations for custom kernels, loaded from text at run time
 * (lemmas/NAME.lemma) and compiled to e-graph rewrites over an sc_lang.
 *
 * The front end (parse, resolve against the operator registry, check,
 * lower) is separate from the engine: the e-graph and the runner never see
 * text.  docs/lemma-dsl.md gives the grammar and semantics; in short
 *
 *   lemma NAME: LHS => RHS [where COND] [requires PAT {, PAT}]
 *   lemma NAME: LHS <=> RHS ...
 *   op NS.NAME(SCHEMA PARAMS) -> Tensor: SHAPE [as DTYPE] [where COND]
 *        [= DEFINITION]
 *
 * A statement starts in column 1 and continues on indented lines (and
 * inside brackets); '#' starts a comment.
 *
 * Loading checks every statement against the operator schemas (unknown
 * operators with a suggestion, arity, argument names, variable kinds,
 * unbound right-hand variables, duplicate names, sides whose types differ
 * on some instance that satisfies the condition) and fails with
 * SC_LEMMA_ERROR and a message of one line per error,
 * "FILE:LINE:COL: error: TEXT".  A load that fails changes nothing in the
 * set (operators already declared by it stay registered: the registry is
 * process-wide and a declaration registered twice is the same operator).
 *
 * Ownership: sc_lemma_set_new returns a new set (free with
 * sc_lemma_set_free) that owns its lemmas and their text.  sc_lemma_compile
 * returns new compiled rules (free with sc_lemma_rules_free) that borrow
 * the set and the lang (both must outlive them) and own the rewrites.
 * Strings in sc_lemma_info borrow from the set. */
#ifndef SHARDCHECK_LEMMA_H
#define SHARDCHECK_LEMMA_H

#include "shardcheck/lang.h"
#include "shardcheck/runner.h"

G_BEGIN_DECLS

#define SC_LEMMA_ERROR (sc_lemma_error_quark())
GQuark sc_lemma_error_quark(void);
typedef enum {
  SC_LEMMA_ERROR_SYNTAX,     /* malformed text */
  SC_LEMMA_ERROR_UNKNOWN_OP, /* an operator the registry does not know */
  SC_LEMMA_ERROR_ARGS,       /* arity, argument names or values vs the schema */
  SC_LEMMA_ERROR_VAR,        /* unbound or misused variable */
  SC_LEMMA_ERROR_DUPLICATE,  /* a lemma or operator defined twice */
  SC_LEMMA_ERROR_TYPE,       /* the two sides differ in shape or dtype */
  SC_LEMMA_ERROR_DECL,       /* a malformed operator declaration */
  SC_LEMMA_ERROR_IO,         /* a file or directory that cannot be read */
  SC_LEMMA_ERROR_COMPILE,    /* lowering against an sc_lang failed */
} sc_lemma_error;

typedef enum {
  SC_LEMMA_ONE_WAY, /* => */
  SC_LEMMA_BOTH,    /* <=> */
} sc_lemma_direction;

typedef struct sc_lemma_set sc_lemma_set;

sc_lemma_set *sc_lemma_set_new(void);
void sc_lemma_set_free(sc_lemma_set *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_lemma_set, sc_lemma_set_free)

/* Load lemmas and operator declarations from TEXT; FILENAME is used in
 * messages and sc_lemma_info.  Names must be new to the set. */
gboolean sc_lemma_set_load_string(sc_lemma_set *set, const char *filename,
                                  const char *text, GError **error);
gboolean sc_lemma_set_load_file(sc_lemma_set *set, const char *path, GError **error);
/* Every *.lemma file of DIR, in name order except that a file using an
 * operator another file of DIR declares (`op NS.NAME(...)`) loads after
 * that file (files that need each other keep name order).  All or nothing
 * per file; the first file that fails stops the load with its errors. */
gboolean sc_lemma_set_load_dir(sc_lemma_set *set, const char *dir, GError **error);
/* sc_lemma_set_load_dir, deferred: when SET is empty and every file of DIR
 * passed its load before (the lemma cache: the same files, in the same
 * order, in this executable), the files are only scanned: their operator
 * declarations are loaded (and their definitions' NAME_unfold lemmas), and
 * their lemmas wait for sc_lemma_set_select.  Otherwise (a miss, a set not
 * empty) the plain load.  A set loaded deferred must be selected before
 * anything reads its lemmas or compiles it: until then it holds only the
 * unfold lemmas.  (This is what makes a small check start fast:
 * docs/performance.md, "Start-up".) */
gboolean sc_lemma_set_load_dir_deferred(sc_lemma_set *set, const char *dir, GError **error);
/* Loads the deferred lemmas that can fire in a check that meets the
 * operators MET (flags by operator id, sc_ops_count() of them; NULL: all):
 * starting from MET and the operators each meets in the e-graph (its
 * canonical form, lang.h), a lemma is kept when every operator of its left
 * side (or, for <=>, of its right side) is met, and then the operators of
 * both its sides are met; to a fixpoint.  A lemma that is left out could
 * not have matched: the check proves and fails the same.  When MET holds
 * an operator the set declares without a definition, every lemma whose
 * text mentions it is kept too (the report lists them, usercheck.h).
 * Kept lemmas are parsed and
 * checked in load order, so that names, order and indices are those of a
 * full load minus the ones left out.  TRUE without a deferred load. */
gboolean sc_lemma_set_select(sc_lemma_set *set, const gboolean *met, GError **error);
/* Does TEXT (its first LEN bytes; -1: up to its NUL) name OP: its
 * "ns.name" or its bare name, as a whole word followed by a call, a result
 * index (#0), an overload, a blank or the end (lemma files may write a
 * declared operator without its namespace)?  With LEN >= 0 any blank
 * ends a name. */
gboolean sc_lemma_text_mentions(const char *text, gssize len, const sc_op *op);
/* Lemmas of the files loaded, whether a selection kept them or not (the
 * library's size, for reports). */
uint32_t sc_lemma_set_n_all(const sc_lemma_set *set);
/* The built-in lemma directory: $SC_LEMMA_DIR when set, else the source
 * tree's lemmas/ when it exists (running from a build tree), else the
 * installed one.  (transfer none) */
const char *sc_lemma_builtin_dir(void);

typedef struct {
  const char *name;        /* "mm_cat_contract" */
  const char *file;        /* as given to the loader */
  uint32_t line, col;      /* 1-based, of the 'lemma' keyword */
  const char *text;        /* the statement's source text */
  sc_lemma_direction direction;
  uint32_t n_requires;
  const sc_op *unfolds;    /* NAME_unfold lemmas: the declared operator */
} sc_lemma_info;

uint32_t sc_lemma_set_n_lemmas(const sc_lemma_set *set);
/* (transfer none) */
const sc_lemma_info *sc_lemma_set_lemma(const sc_lemma_set *set, uint32_t i);
/* Index of lemma NAME, or -1. */
int32_t sc_lemma_set_find(const sc_lemma_set *set, const char *name);
/* Operators declared by the loaded files, in order. */
uint32_t sc_lemma_set_n_ops(const sc_lemma_set *set);
const sc_op *sc_lemma_set_op(const sc_lemma_set *set, uint32_t i);

/* --- compiled rules --- */
typedef struct sc_lemma_rules sc_lemma_rules;

/* Lower every lemma of SET to rewrites over LANG (a <=> lemma gives two
 * rewrites, the second named "NAME (reverse)").  (transfer full) */
sc_lemma_rules *sc_lemma_compile(const sc_lemma_set *set, sc_lang *lang, GError **error);
/* Point compiled rules at another LANG (a fresh e-graph), as if compiled
 * against it: the rewrites do not depend on the e-graph, so a driver that
 * builds one e-graph per spec node compiles once.  Counters, undecided
 * conditions and assumptions start again from nothing.  The rules must not
 * be in use by a runner on the old LANG. */
void sc_lemma_rules_rebind(sc_lemma_rules *r, sc_lang *lang);
/* New rules that share R's compiled rewrites (no compiling: the rewrites
 * and their patterns are read-only once compiled) with counters, reports,
 * condition memo and scratch of their own, bound to no lang yet: for
 * another thread (`check --jobs N`).  The rewrites' callbacks act for the
 * rules last bound on the calling thread (sc_lemma_compile or
 * sc_lemma_rules_rebind), so a thread binds its rules (rebind) before
 * running them, and a runner runs only the rules bound last on its
 * thread; a rule run on an e-graph its rules are not bound to aborts.
 * The compiled rewrites live until the last rules sharing them are freed.
 * (transfer full) */
sc_lemma_rules *sc_lemma_rules_share(const sc_lemma_rules *r);
/* HOME (the rules R was made from by sc_lemma_rules_share) records the
 * condition answers R learned since the last call (within its memos'
 * bounds).  The answers are exact functions of their keys
 * (src/lemma/condmemo.h), so this changes no result, only which
 * conditions are evaluated again.  Neither may be in use on another
 * thread.  For `--jobs N`: the proofs made ahead meet the later nodes'
 * conditions first, and the walk takes their answers at the commits. */
void sc_lemma_rules_pass_memos(sc_lemma_rules *r, sc_lemma_rules *home);
/* The calling thread binds no rules any more (a worker thread whose
 * rules may be freed by another thread). */
void sc_lemma_rules_unbind(void);
void sc_lemma_rules_free(sc_lemma_rules *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_lemma_rules, sc_lemma_rules_free)

/* The rewrites, for sc_runner_run; rule i's unions are justified by i.
 * (transfer none) */
sc_rewrite *const *sc_lemma_rules_array(const sc_lemma_rules *r, uint32_t *n_rules);
/* The lemma (index in the set) that rule I came from. */
uint32_t sc_lemma_rules_lemma_of(const sc_lemma_rules *r, uint32_t rule);

typedef struct {
  uint64_t matches;      /* substitutions that reached the condition */
  uint64_t applications; /* right sides instantiated whose union changed something */
  uint64_t undecided;    /* conditions that were UNKNOWN (the lemma did not fire) */
  uint64_t refused;      /* right sides the shape rules rejected */
} sc_lemma_counters;

/* Counters of lemma I (both directions added), since compilation. */
void sc_lemma_rules_counters(const sc_lemma_rules *r, uint32_t lemma,
                             sc_lemma_counters *out);
/* Lemma I's condition the first time it was UNKNOWN: *CONDITION as written
 * (canonical text, "0 <= ?s and ?s < ?m") and *INSTANCE the comparisons
 * that were UNKNOWN, instantiated ("min(S*T, U) < U"; NULL if none could
 * be singled out).  FALSE (both NULL) when it never was.  (transfer none:
 * owned by R) */
gboolean sc_lemma_rules_undecided(const sc_lemma_rules *r, uint32_t lemma, const char **condition,
                                  const char **instance);

/* The assumption ids (lang.h, value ranges: an assumed bound's source)
 * that lemma I's condition read (vmin/vmax) in applications that changed
 * the e-graph, each once, in first-use order; NULL with *N = 0 when none.
 * (transfer none: owned by R) */
const uint32_t *sc_lemma_rules_assumptions(const sc_lemma_rules *r, uint32_t lemma,
                                           uint32_t *n);

/* --- reading lemmas back: instances (the numerical checker) ---
 *
 * `shardcheck lemmas check` evaluates both sides of every lemma on random
 * concrete instances.  A lemma's variables are numbered in order of first
 * use (left side, requires, right side).  An instance gives each tensor
 * variable a type and each attribute variable a value; sc_lemma_instantiate
 * turns one side under an instance into a flat program of operator calls
 * whose tensor arguments name slots: slot v < n_vars is variable v, slot
 * n_vars + j the result of step j (steps come in evaluation order, children
 * first).  Types come from the operators' shape rules (a declared
 * operator's declared rule), computed attributes are evaluated, so a side
 * that instantiates is well-typed.  A '?_' of a left side takes the
 * argument's default.  Requires patterns are not instantiated (they only
 * restrict when a lemma fires).
 *
 * Ownership: names and sc_arg pointers borrow from the set (or the
 * registry); sc_lemma_instantiate returns a new program (free with
 * sc_lemma_program_free) that owns its argument values; the instance is
 * borrowed. */
uint32_t sc_lemma_n_vars(const sc_lemma_set *set, uint32_t lemma);
/* "a" for ?a.  (transfer none) */
const char *sc_lemma_var_name(const sc_lemma_set *set, uint32_t lemma, uint32_t var);
gboolean sc_lemma_var_is_attr(const sc_lemma_set *set, uint32_t lemma, uint32_t var);
/* The schema argument at the first use of attribute variable VAR (its
 * type and name), or NULL for a tensor variable.  (transfer none) */
const sc_arg *sc_lemma_var_arg(const sc_lemma_set *set, uint32_t lemma, uint32_t var);
/* Is VAR used by the left or the right side (not only by requires)? */
gboolean sc_lemma_var_in_sides(const sc_lemma_set *set, uint32_t lemma, uint32_t var);

typedef struct {
  sc_symtab *st;          /* sizes, conditions; concrete types need no symbols */
  const sc_ttype *types;  /* n_vars entries, read for tensor variables */
  const sc_value *values; /* n_vars entries, read for attribute variables */
} sc_lemma_instance;

/* The lemma's where condition under INST (YES when it has none; anything
 * that cannot be evaluated is NO, as when the lemma runs). */
sc_truth sc_lemma_condition(const sc_lemma_set *set, uint32_t lemma,
                            const sc_lemma_instance *inst);

/* The condition with value ranges for the tensor variables (RANGES: n_vars
 * entries; an unbounded entry means no fact), as vmin/vmax read them in
 * the e-graph.  sc_lemma_condition reads no ranges (vmin/vmax UNKNOWN). */
sc_truth sc_lemma_condition_ranges(const sc_lemma_set *set, uint32_t lemma,
                                   const sc_lemma_instance *inst, const sc_vrange *ranges);
/* Does the condition call vmin/vmax on tensor variable VAR? */
gboolean sc_lemma_var_reads_range(const sc_lemma_set *set, uint32_t lemma, uint32_t var);
/* Steering for the random search: the top-level conjuncts of the
 * condition that fix a variable are applied in order to TYPES / VALUES
 * (n_vars entries each, changed in place): "?v == E" (an int, int list or
 * dtype attribute),
 * "shape(?t) == E", "dtype(?t) == f32", "dtype(?t) == dtype(?u)", and a
 * disjunction of "dtype(?t) == NAME" terms (one of them, by CHOICE); a
 * side that cannot be evaluated leaves the variable as drawn.  This only
 * guides what the checker draws: the condition is still evaluated on the
 * result.  With TYPES or VALUES NULL nothing changes.  TRUE when some
 * conjunct has such a form. */
gboolean sc_lemma_steer(const sc_lemma_set *set, uint32_t lemma, sc_symtab *st, sc_ttype *types,
                        sc_value *values, uint64_t choice);

typedef enum {
  SC_LEMMA_SIDE_LEFT,
  SC_LEMMA_SIDE_RIGHT,
} sc_lemma_side;

typedef struct {
  const sc_op *op;
  sc_value *args;  /* op->n_args bound values; tensor ids are slots */
  uint32_t result; /* the result of OP this step stands for */
  sc_ttype type;   /* that result's type */
} sc_lemma_step;

typedef struct {
  uint32_t n_vars;
  uint32_t n_steps;
  sc_lemma_step *steps;
  uint32_t root;   /* slot of the side's value (a variable's for a bare ?x) */
  sc_ttype type;   /* its type */
} sc_lemma_program;

/* Instantiate SIDE of lemma LEMMA under INST.  NULL with *WHY (new string)
 * when a shape rule refuses or a computed value cannot be computed. */
sc_lemma_program *sc_lemma_instantiate(const sc_lemma_set *set, uint32_t lemma,
                                       sc_lemma_side side, const sc_lemma_instance *inst,
                                       char **why);
void sc_lemma_program_free(sc_lemma_program *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sc_lemma_program, sc_lemma_program_free)
/* "?a: f32[2, 3], ?d = 1" for the variables either side uses.  (transfer
 * full) */
char *sc_lemma_instance_to_string(const sc_lemma_set *set, uint32_t lemma,
                                  const sc_lemma_instance *inst);

G_END_DECLS

#endif
