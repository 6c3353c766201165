/* lang-private.h — internals of the tensor language (src/lang/), shared by
 * attr.c (attribute records), lang.c (the analysis and term building),
 * canon.c (canonical forms) and print.c (printing).
 *
 * Invariants:
 *  - attrs[i] is the record with id i; records are never freed or moved
 *    before sc_lang_free, so pointers to them stay valid;
 *  - a record's tensor-valued arguments hold child indices numbered in
 *    argument order from 0 ("layout order"): TENSOR -> the next index,
 *    TENSOR_LIST of n -> the next n (SC_ID_NONE entries of a Tensor?[] take
 *    none), so equal calls get equal records whatever child order the
 *    caller used;
 *  - a class whose make() failed (an ill-typed node added by a rewrite)
 *    carries the poisoned type (dtype SC_DTYPE_COUNT, rank 0): it merges
 *    only with poisoned classes, and sc_lang_class_type returns NULL. */
#ifndef SC_LANG_PRIVATE_H
#define SC_LANG_PRIVATE_H

#include "shardcheck/lang.h"

/* One interned attribute record. */
typedef struct {
  const sc_op *op;
  uint32_t result;
  uint32_t n_children;
  guint hash;
  sc_value *args; /* op->n_args values (owned), tensors in layout order */
} sc_lang_attr_rec;

struct sc_lang {
  sc_symtab *st;
  const sc_graph *leaf;
  sc_egraph *eg;
  /* attribute records */
  GPtrArray *attrs;       /* sc_lang_attr_rec *, index = id (owned) */
  GHashTable *attr_index; /* sc_lang_attr_rec * -> GUINT_TO_POINTER(id + 1) */
  /* opaque leaves: key -> index + 1 into opaque_types / opaque_names */
  GHashTable *opaque_index;
  GArray *opaque_types;   /* sc_ttype */
  GPtrArray *opaque_names; /* char * or NULL (owned) */
  /* conflicts */
  sc_lang_conflict_fn conflict_fn;
  void *conflict_user;
  GArray *conflicts;      /* sc_lang_conflict */
  /* scratch for shape rules (make() is not reentrant) */
  GArray *scratch;        /* sc_ttype */
  /* scratch of sc_lang_add_call (children in layout order, result types),
   * used by the outermost call only (in_call) */
  GArray *call_kids;      /* sc_id */
  GArray *call_types;     /* sc_ttype */
  gboolean in_call;
  /* sc_lang_find_call through the canonical forms: while FINDING,
   * sc_lang_add_node looks its node up instead of adding it, and a node
   * that is not there sets FIND_MISS (and gives SC_ID_NONE) */
  gboolean finding, find_miss;
  /* sc_lang_add_call's call while it is being added (hint_args NULL
   * otherwise): when canon adds the call itself (the same argument and
   * children arrays), make() takes the type the shape rule just gave
   * (MAKE_TYPE, set around that one add) instead of running it again */
  const sc_op *hint_op;
  const sc_value *hint_args;
  const sc_id *hint_kids;
  uint32_t hint_n, hint_result;
  const sc_ttype *hint_type, *make_type;
  /* expression-language names of operators, by op id (lazily filled) */
  char **func_names;
  uint32_t n_func_names;
  /* value ranges (range.c): class id + 1 -> sc_vrange * (owned) */
  GHashTable *ranges;
};

/* The poisoned type of an ill-typed class. */
static inline gboolean sc_lang_type_is_poison(const sc_ttype *t) {
  return t->dtype == SC_DTYPE_COUNT;
}
void sc_lang_type_poison(sc_ttype *t);

/* --- attr.c --- */
void sc_lang_attrs_init(sc_lang *lang);
void sc_lang_attrs_free(sc_lang *lang);
/* The record of attr, or NULL when attr is not a record id. */
const sc_lang_attr_rec *sc_lang_attr_rec_get(const sc_lang *lang, uint32_t attr);
/* Rewrites ARGS (op->n_args values, tensor values holding indices into
 * CHILDREN) into layout order: OUT_ARGS receives deep copies (caller
 * clears them), OUT_KIDS (a GArray of sc_id, appended) the class of each
 * child in layout order.  FALSE with SC_LANG_ERROR_INVALID when an
 * argument's kind does not fit the schema or an index is out of range. */
gboolean sc_lang_layout_args(const sc_op *op, const sc_value *args, const sc_id *children,
                             uint32_t n_children, sc_value *out_args, GArray *out_kids,
                             GError **error);
/* Interns a record whose args are already in layout order. */
uint32_t sc_lang_intern_layout(sc_lang *lang, const sc_op *op, const sc_value *args,
                               uint32_t n_children, uint32_t result);
/* The id of that record when it is interned already, else UINT32_MAX
 * (interns nothing). */
uint32_t sc_lang_lookup_layout(const sc_lang *lang, const sc_op *op, const sc_value *args,
                               uint32_t n_children, uint32_t result);
void sc_lang_clear_args(const sc_op *op, sc_value *args);

/* --- lang.c --- */
/* Adds a node for a call already in canonical form (args in layout order,
 * KIDS the children classes).  Never fails for a valid record. */
sc_id sc_lang_add_node(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                       uint32_t n_kids, uint32_t result);
/* Runs OP's shape rule over KIDS' class types (args in layout order);
 * appends every result type to OUT.  FALSE with SC_LANG_ERROR_SHAPE. */
gboolean sc_lang_infer(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                       uint32_t n_kids, GArray *out, GError **error);

/* --- canon.c --- */
/* Adds the call (args in layout order, already checked by its shape rule,
 * whose result RESULT has type *OUT_TYPE) in canonical form: applies the
 * alias table and the clean operators' normal forms.  Returns the class. */
sc_id sc_lang_canon_add(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                        uint32_t n_kids, uint32_t result, const sc_ttype *out_type);
/* Is the call (args in layout order, KIDS well-typed classes) its own
 * canonical form, i.e. would sc_lang_canon_add add exactly it
 * (sc_lang_add_node with the same arguments) whatever its result type?
 * FALSE when that cannot be told without the shape rule's result (the
 * alias table, views, slices, ...): the caller then does not know. */
gboolean sc_lang_canon_is_identity(sc_lang *lang, const sc_op *op, const sc_value *args,
                                   const sc_id *kids, uint32_t n_kids, uint32_t result);
/* Does sc_lang_canon_add read OUT_TYPE for a call of OP with RESULT (the
 * alias table's renames, copy, expand and views)?  When not, the normal
 * form depends on the arguments and the children's types only. */
gboolean sc_lang_canon_reads_type(const sc_op *op, uint32_t result);

/* --- range.c --- */
void sc_lang_ranges_init(sc_lang *lang);
void sc_lang_ranges_free(sc_lang *lang);
/* The e-graph's merge listener: moves the absorbed class's range into the
 * root's (intersection). */
void sc_lang_ranges_on_merge(const sc_egraph *eg, sc_id root, sc_id absorbed, uint32_t just,
                             void *user);
/* The declared "values" of leaf-graph tensor TENSOR, if any, as a fact on
 * class CLS. */
void sc_lang_seed_leaf_range(sc_lang *lang, sc_id cls, sc_id tensor);
/* Node CLS = OP(KIDS..) was just added: when OP keeps or selects the
 * values of its first tensor operand KIDS[0] (same dtype), CLS gets that
 * class's fact (lang.h, value ranges). */
void sc_lang_range_forward(sc_lang *lang, const sc_op *op, const sc_id *kids, uint32_t n_kids,
                           sc_id cls);

/* --- print.c --- */
/* The shortest expression-language name that sc_ops_lookup_func maps
 * back to OP ("cat", "mm", "add.Tensor", "aten.view"). (transfer none) */
const char *sc_lang_func_name(sc_lang *lang, const sc_op *op);
void sc_lang_func_names_free(sc_lang *lang);

#endif
