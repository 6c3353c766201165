/* canon.c — the canonical forms of the tensor language, as one table.
 *
 * Every entry names an operator (by qualified name) and what a call of it
 * becomes: another operator with renamed arguments (aten.view -> sc.view),
 * its input (clone, detach, ...), or, for the clean sc.* operators, the
 * normal form of its arguments (dims non-negative, view shapes resolved,
 * slice bounds resolved, n-ary cat/sum as left-nested binary nodes) with
 * trivial calls replaced by their input.  docs/lang.md gives the reason
 * each one is exact.
 *
 * Invariants: canonicalization only ever replaces a call by one with the
 * same value for every input of the call's (already checked) types; when
 * a condition cannot be decided (a symbolic comparison answering
 * UNKNOWN), the call is kept as it is.  An alias's target is re-checked by
 * its own shape rule; should it disagree, the original call is kept. */
#include "lang/lang-private.h"

#include <string.h>

typedef enum {
  CANON_RENAME,        /* the same call to TO, arguments renamed */
  CANON_T,             /* aten.t: transpose(x, 0, 1) at rank 2, x below */
  CANON_IDENTITY,      /* the value of the first tensor argument */
  CANON_TO_COPY,       /* _to_copy: its input when dtype is None or the input's */
  CANON_COPY,          /* copy(self, src): src when src has the result's type */
  CANON_EXPAND,        /* expand: its input when the result has the input's shape;
                        * sizes of -1 written as the result's sizes */
  CANON_VIEW,          /* sc.view: shape resolved; same shape -> input */
  CANON_TRANSPOSE,     /* sc.transpose: dims wrapped, ordered; d == d -> input */
  CANON_PERMUTE,       /* sc.permute: dims wrapped; identity -> input */
  CANON_SLICE,         /* sc.slice: dim wrapped, bounds resolved; whole -> input */
  CANON_CAT,           /* sc.cat: dim wrapped; one part -> it; n parts -> binary */
  CANON_SUM,           /* sc.sum: one part -> it; n parts -> binary */
} canon_kind;

typedef struct {
  const char *from;    /* qualified name */
  canon_kind kind;
  const char *to;      /* target qualified name (RENAME, RESHAPE_ALIAS, T) */
  const char *renames; /* "target_arg=source_arg" pairs, ','-separated */
} canon_rule;

/* The one list of canonical forms. */
static const canon_rule canon_rules[] = {
  /* views and reshapes -> sc.view */
  {"aten.view.default", CANON_RENAME, "sc.view.default", "shape=size"},
  {"aten.view_copy.default", CANON_RENAME, "sc.view.default", "shape=size"},
  {"aten._unsafe_view.default", CANON_RENAME, "sc.view.default", "shape=size"},
  {"aten.reshape.default", CANON_RENAME, "sc.view.default", NULL},
  /* _reshape_alias whatever its strides: ATen emits it only from reshape,
   * with the strides computeStride finds for a view of the input's actual
   * layout, so its value is the row-major reshape of the input (and that
   * is how the bundle format, the exporter and the reference interpreter
   * read it: strides are not kept).  After a permute and a transpose of
   * attention heads torch passes strides like [96, 1, 12] for [2, 4, 8]. */
  {"aten._reshape_alias.default", CANON_RENAME, "sc.view.default", "shape=size"},
  /* transposes -> sc.transpose, permutes -> sc.permute */
  {"aten.t.default", CANON_T, "sc.transpose.default", NULL},
  {"aten.t_copy.default", CANON_T, "sc.transpose.default", NULL},
  {"aten.transpose.int", CANON_RENAME, "sc.transpose.default", NULL},
  {"aten.transpose_copy.int", CANON_RENAME, "sc.transpose.default", NULL},
  {"aten.permute.default", CANON_RENAME, "sc.permute.default", NULL},
  {"aten.permute_copy.default", CANON_RENAME, "sc.permute.default", NULL},
  /* concatenation and slicing */
  {"aten.cat.default", CANON_RENAME, "sc.cat.default", NULL},
  {"aten.slice.Tensor", CANON_RENAME, "sc.slice.default", NULL},
  {"aten.slice_copy.Tensor", CANON_RENAME, "sc.slice.default", NULL},
  /* identities: every operator the table flags SC_OP_IDENTITY (clone,
   * detach, alias, lift_fresh_copy, wait_tensor, ...) is added by
   * rule_index; _to_copy, flagged too, keeps its input only for its dtype */
  {"aten._to_copy.default", CANON_TO_COPY, NULL, NULL},
  {"aten.copy.default", CANON_COPY, NULL, NULL},
  {"aten.expand.default", CANON_EXPAND, NULL, NULL},
  {"aten.expand_copy.default", CANON_EXPAND, NULL, NULL},
  /* normal forms of the clean operators */
  {"sc.view.default", CANON_VIEW, NULL, NULL},
  {"sc.transpose.default", CANON_TRANSPOSE, NULL, NULL},
  {"sc.permute.default", CANON_PERMUTE, NULL, NULL},
  {"sc.slice.default", CANON_SLICE, NULL, NULL},
  {"sc.cat.default", CANON_CAT, NULL, NULL},
  {"sc.sum.default", CANON_SUM, NULL, NULL},
};

/* The rule of each operator that was registered when the index was built,
 * by operator id (NULL: none): what rule_index gives for its qualname,
 * without hashing the name on every call (rule_of). */
static const canon_rule **rule_by_id;
static uint32_t n_rule_by_id;

/* qualname -> canon_rule *, built once (the registry is static). */
static GHashTable *rule_index(void) {
  static gsize once = 0;
  if (g_once_init_enter(&once)) {
    sc_ops_init();
    GHashTable *h = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t i = 0; i < G_N_ELEMENTS(canon_rules); i++) {
      const canon_rule *r = &canon_rules[i];
      const sc_op *from = sc_ops_lookup(r->from, NULL);
      if (from == NULL || (r->to != NULL && sc_ops_lookup(r->to, NULL) == NULL)) {
        g_critical("lang: canonical form for unknown operator %s / %s", r->from,
                   r->to ? r->to : "-");
        continue;
      }
      g_hash_table_insert(h, (gpointer)from->qualname, (gpointer)r);
    }
    /* The table's identities (built-in operators: the registry's first
     * ids; a declared operator is never an identity). */
    static const canon_rule identity = {NULL, CANON_IDENTITY, NULL, NULL};
    for (uint32_t i = 0; i < sc_ops_count(); i++) {
      const sc_op *op = sc_ops_at(i);
      if ((op->flags & SC_OP_IDENTITY) && !g_hash_table_contains(h, op->qualname))
        g_hash_table_insert(h, (gpointer)op->qualname, (gpointer)&identity);
    }
    n_rule_by_id = sc_ops_count();
    rule_by_id = g_new0(const canon_rule *, n_rule_by_id ? n_rule_by_id : 1);
    for (uint32_t i = 0; i < n_rule_by_id; i++)
      rule_by_id[i] = g_hash_table_lookup(h, sc_ops_at(i)->qualname);
    g_once_init_leave(&once, (gsize)h);
  }
  return (GHashTable *)once;
}

/* rule_index's rule for OP (an operator registered later, a declared one,
 * has none: the table names built-in operators only, and a declared
 * operator is never an identity). */
static const canon_rule *rule_of(const sc_op *op) {
  GHashTable *h = rule_index();
  if (op->id < n_rule_by_id && sc_ops_at(op->id) == op)
    return rule_by_id[op->id];
  return g_hash_table_lookup(h, op->qualname);
}

/* ---- helpers ------------------------------------------------------------ */

static const sc_ttype *kid_type(sc_lang *lang, sc_id k) {
  return sc_lang_class_type(lang, k);
}

static gboolean const_int(const sc_value *v, int64_t *out) {
  if (v == NULL || v->kind != SC_VAL_INT || !sc_dim_is_const(v->u.i))
    return FALSE;
  *out = v->u.i.value;
  return TRUE;
}

static const sc_value *arg(const sc_op *op, const sc_value *args, const char *name) {
  int32_t i = sc_ops_arg_index(op, name);
  return i < 0 ? NULL : &args[i];
}

/* sc_ops_arg_index for the normal forms of built-in operators (whose
 * argument lists never change) and a string literal NAME, through a small
 * per-thread cache keyed by both addresses: the normal forms ask for the
 * same few arguments of the same few operators hundreds of thousands of
 * times in a check. */
static int32_t lit_index(const sc_op *op, const char *name) {
  static _Thread_local struct {
    const sc_op *op;
    const char *name;
    int32_t ix;
  } cache[32];
  guint h = (guint)(((uintptr_t)op >> 4) ^ ((uintptr_t)name >> 1)) & 31;
  if (cache[h].op != op || cache[h].name != name) {
    cache[h].op = op;
    cache[h].name = name;
    cache[h].ix = sc_ops_arg_index(op, name);
  }
  return cache[h].ix;
}

/* arg() by lit_index: NAME a string literal, OP a built-in operator. */
static const sc_value *lit_arg(const sc_op *op, const sc_value *args, const char *name) {
  int32_t i = lit_index(op, name);
  return i < 0 ? NULL : &args[i];
}

/* Up to this many arguments, the normal forms edit a shallow copy of a
 * call's arguments on the stack (scratch_args) instead of a deep copy on
 * the heap: a saturation canonicalizes tens of thousands of calls. */
#define CANON_STACK_ARGS 16

/* A shallow copy of ARGS into BUF (CANON_STACK_ARGS values): the caller
 * replaces only values that own no memory (an int, a list over its own
 * stack array) and never clears it; add_node copies what it keeps. */
static sc_value *scratch_args(const sc_op *op, const sc_value *args, sc_value *buf) {
  memcpy(buf, args, op->n_args * sizeof *buf);
  return buf;
}

/* Replaces argument NAME of a scratch copy (no clear: see scratch_args). */
static void put_arg(const sc_op *op, sc_value *args, const char *name, sc_value v) {
  int32_t i = lit_index(op, name);
  g_assert(i >= 0);
  args[i] = v;
}

/* An int list over V (borrowed: for a scratch copy). */
static sc_value int_list_view(sc_dim *v, uint32_t n) {
  sc_value o;
  o.kind = SC_VAL_INT_LIST;
  o.u.ints.n = n;
  o.u.ints.v = v;
  return o;
}

/* A deep copy of ARGS that the caller edits and then frees. */
static sc_value *copy_args(const sc_op *op, const sc_value *args) {
  sc_value *c = g_new0(sc_value, op->n_args ? op->n_args : 1);
  for (uint32_t i = 0; i < op->n_args; i++)
    sc_value_copy(&c[i], &args[i]);
  return c;
}

static void free_args(const sc_op *op, sc_value *args) {
  sc_lang_clear_args(op, args);
  g_free(args);
}

static void set_arg(const sc_op *op, sc_value *args, const char *name, sc_value v) {
  int32_t i = sc_ops_arg_index(op, name);
  g_assert(i >= 0);
  sc_value_clear(&args[i]);
  args[i] = v;
}

static sc_value int_list(const sc_dim *v, uint32_t n) {
  sc_value o;
  o.kind = SC_VAL_INT_LIST;
  o.u.ints.n = n;
  o.u.ints.v = g_new(sc_dim, n ? n : 1);
  for (uint32_t i = 0; i < n; i++)
    o.u.ints.v[i] = v[i];
  return o;
}

/* The renamed source argument for target argument NAME. */
static const char *source_name(const char *renames, const char *name, char *buf, size_t cap) {
  if (renames == NULL)
    return name;
  size_t len = strlen(name);
  for (const char *p = renames; *p;) {
    const char *comma = strchr(p, ',');
    size_t seg = comma ? (size_t)(comma - p) : strlen(p);
    if (seg > len && strncmp(p, name, len) == 0 && p[len] == '=') {
      size_t sl = seg - len - 1;
      if (sl >= cap)
        sl = cap - 1;
      memcpy(buf, p + len + 1, sl);
      buf[sl] = '\0';
      return buf;
    }
    p += seg;
    if (*p == ',')
      p++;
  }
  return name;
}

/* ---- the clean operators' normal forms ---------------------------------- */

const sc_op *sc_lang_canonical_target(const sc_op *op) {
  const canon_rule *r = g_hash_table_lookup(rule_index(), op->qualname);
  if (r == NULL || (r->kind != CANON_RENAME && r->kind != CANON_T))
    return NULL;
  return sc_ops_lookup(r->to, NULL);
}

static sc_id canon(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                   uint32_t n_kids, uint32_t result, const sc_ttype *out_type);

static sc_id norm_view(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                       const sc_ttype *out_type) {
  const sc_ttype *in = kid_type(lang, kids[0]);
  if (sc_shape_equal(&in->shape, &out_type->shape) ||
      sc_shape_same(lang->st, &in->shape, &out_type->shape) == SC_YES)
    return kids[0];
  if (op->n_args <= CANON_STACK_ARGS) {
    sc_value buf[CANON_STACK_ARGS];
    sc_dim dims[SC_MAX_RANK];
    memcpy(dims, out_type->shape.dims, out_type->shape.rank * sizeof *dims);
    sc_value *a = scratch_args(op, args, buf);
    put_arg(op, a, "shape", int_list_view(dims, out_type->shape.rank));
    return sc_lang_add_node(lang, op, a, kids, 1, 0);
  }
  sc_value *a = copy_args(op, args);
  set_arg(op, a, "shape", int_list(out_type->shape.dims, out_type->shape.rank));
  sc_id c = sc_lang_add_node(lang, op, a, kids, 1, 0);
  free_args(op, a);
  return c;
}

static sc_id norm_transpose(sc_lang *lang, const sc_op *op, const sc_value *args,
                            const sc_id *kids) {
  const sc_ttype *in = kid_type(lang, kids[0]);
  int64_t d0, d1;
  uint32_t w0, w1;
  if (!const_int(lit_arg(op, args, "dim0"), &d0) || !const_int(lit_arg(op, args, "dim1"), &d1) ||
      !sc_wrap_dim(d0, in->shape.rank, &w0) || !sc_wrap_dim(d1, in->shape.rank, &w1))
    return sc_lang_add_node(lang, op, args, kids, 1, 0);
  if (w0 == w1)
    return kids[0];
  if (op->n_args <= CANON_STACK_ARGS) {
    sc_value buf[CANON_STACK_ARGS];
    sc_value *a = scratch_args(op, args, buf);
    put_arg(op, a, "dim0", sc_value_int(MIN(w0, w1)));
    put_arg(op, a, "dim1", sc_value_int(MAX(w0, w1)));
    return sc_lang_add_node(lang, op, a, kids, 1, 0);
  }
  sc_value *a = copy_args(op, args);
  set_arg(op, a, "dim0", sc_value_int(MIN(w0, w1)));
  set_arg(op, a, "dim1", sc_value_int(MAX(w0, w1)));
  sc_id c = sc_lang_add_node(lang, op, a, kids, 1, 0);
  free_args(op, a);
  return c;
}

static sc_id norm_permute(sc_lang *lang, const sc_op *op, const sc_value *args,
                          const sc_id *kids) {
  const sc_ttype *in = kid_type(lang, kids[0]);
  const sc_value *dims = lit_arg(op, args, "dims");
  if (dims == NULL || dims->kind != SC_VAL_INT_LIST || dims->u.ints.n != in->shape.rank)
    return sc_lang_add_node(lang, op, args, kids, 1, 0);
  sc_dim w[SC_MAX_RANK];
  gboolean identity = TRUE;
  for (uint32_t i = 0; i < dims->u.ints.n; i++) {
    uint32_t d;
    if (!sc_dim_is_const(dims->u.ints.v[i]) ||
        !sc_wrap_dim(dims->u.ints.v[i].value, in->shape.rank, &d))
      return sc_lang_add_node(lang, op, args, kids, 1, 0);
    w[i] = sc_dim_const(d);
    identity = identity && d == i;
  }
  if (identity)
    return kids[0];
  if (op->n_args <= CANON_STACK_ARGS) {
    sc_value buf[CANON_STACK_ARGS];
    sc_value *a = scratch_args(op, args, buf);
    put_arg(op, a, "dims", int_list_view(w, dims->u.ints.n));
    return sc_lang_add_node(lang, op, a, kids, 1, 0);
  }
  sc_value *a = copy_args(op, args);
  set_arg(op, a, "dims", int_list(w, dims->u.ints.n));
  sc_id c = sc_lang_add_node(lang, op, a, kids, 1, 0);
  free_args(op, a);
  return c;
}

static sc_id norm_slice(sc_lang *lang, const sc_op *op, const sc_value *args,
                        const sc_id *kids) {
  sc_symtab *st = lang->st;
  const sc_ttype *in = kid_type(lang, kids[0]);
  int64_t dim;
  uint32_t d;
  const sc_value *vs = lit_arg(op, args, "start"), *ve = lit_arg(op, args, "end");
  const sc_value *vstep = lit_arg(op, args, "step");
  if (!const_int(lit_arg(op, args, "dim"), &dim) || !sc_wrap_dim(dim, in->shape.rank, &d) ||
      in->shape.rank == 0 || vs == NULL || ve == NULL || vstep == NULL ||
      vstep->kind != SC_VAL_INT || (vs->kind != SC_VAL_INT && vs->kind != SC_VAL_NONE) ||
      (ve->kind != SC_VAL_INT && ve->kind != SC_VAL_NONE))
    return sc_lang_add_node(lang, op, args, kids, 1, 0);
  sc_dim size = in->shape.dims[d], zero = sc_dim_const(0);
  /* ATen: a negative bound counts from the end; start is clamped to
   * [0, size], end to [start, size]. */
  sc_dim s = vs->kind == SC_VAL_INT ? vs->u.i : zero;
  if (sc_dim_lt(st, s, zero) == SC_YES) {
    s = sc_dim_add(st, s, size);
    if (sc_dim_lt(st, s, zero) == SC_YES)
      s = zero;
  }
  if (sc_dim_le(st, size, s) == SC_YES)
    s = size;
  sc_dim e = ve->kind == SC_VAL_INT ? ve->u.i : size;
  if (sc_dim_lt(st, e, zero) == SC_YES)
    e = sc_dim_add(st, e, size);
  if (sc_dim_lt(st, e, s) == SC_YES)
    e = s;
  else if (sc_dim_le(st, size, e) == SC_YES)
    e = size;
  if (sc_dim_is_const(vstep->u.i) && vstep->u.i.value == 1 && sc_dim_eq(st, s, zero) == SC_YES &&
      sc_dim_eq(st, e, size) == SC_YES)
    return kids[0];
  if (op->n_args <= CANON_STACK_ARGS) {
    sc_value buf[CANON_STACK_ARGS];
    sc_value *a = scratch_args(op, args, buf);
    put_arg(op, a, "dim", sc_value_int(d));
    put_arg(op, a, "start", sc_value_dim(s));
    put_arg(op, a, "end", sc_value_dim(e));
    return sc_lang_add_node(lang, op, a, kids, 1, 0);
  }
  sc_value *a = copy_args(op, args);
  set_arg(op, a, "dim", sc_value_int(d));
  set_arg(op, a, "start", sc_value_dim(s));
  set_arg(op, a, "end", sc_value_dim(e));
  sc_id c = sc_lang_add_node(lang, op, a, kids, 1, 0);
  free_args(op, a);
  return c;
}

/* n-ary sc.cat / sc.sum: one part is the part; more fold to the left. */
static sc_id norm_chain(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                        uint32_t n_kids, gboolean has_dim) {
  const sc_value *parts = &args[0];
  if (parts->kind != SC_VAL_TENSOR_LIST || parts->u.list.n != n_kids || n_kids == 0)
    return sc_lang_add_node(lang, op, args, kids, n_kids, 0);
  sc_value wrapped = sc_value_none(); /* the dim argument, wrapped */
  int32_t dim_ix = -1;
  if (has_dim) {
    int64_t dim;
    uint32_t d;
    const sc_ttype *t0 = kid_type(lang, kids[0]);
    dim_ix = lit_index(op, "dim");
    if (dim_ix < 0 || !const_int(&args[dim_ix], &dim) || !sc_wrap_dim(dim, t0->shape.rank, &d))
      return sc_lang_add_node(lang, op, args, kids, n_kids, 0);
    wrapped = sc_value_int(d);
  }
  /* already the normal form (two parts in order, the dim wrapped: what a
   * rewrite's right side nearly always builds): the call as it is, with no
   * copy of its arguments */
  if (n_kids == 2 && parts->u.list.ids[0] == 0 && parts->u.list.ids[1] == 1 &&
      (dim_ix < 0 || sc_value_equal(&args[dim_ix], &wrapped)))
    return sc_lang_add_node(lang, op, args, kids, n_kids, 0);
  sc_value *a = copy_args(op, args);
  if (dim_ix >= 0)
    set_arg(op, a, "dim", wrapped);
  if (n_kids == 1) {
    free_args(op, a);
    return kids[0];
  }
  sc_value two;
  two.kind = SC_VAL_TENSOR_LIST;
  two.u.list.n = 2;
  two.u.list.ids = g_new(sc_id, 2);
  two.u.list.ids[0] = 0;
  two.u.list.ids[1] = 1;
  sc_value_clear(&a[0]);
  a[0] = two;
  sc_id acc = kids[0];
  for (uint32_t i = 1; i < n_kids; i++) {
    sc_id pair[2] = {acc, kids[i]};
    acc = sc_lang_add_node(lang, op, a, pair, 2, 0);
  }
  free_args(op, a);
  return acc;
}

/* ---- aliases ------------------------------------------------------------ */

/* The call of OP rewritten as a call of TO with renamed arguments, checked
 * by TO's shape rule; SC_ID_NONE when the rule disagrees. */
static sc_id rename_call(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                         uint32_t n_kids, const sc_op *to, const char *renames,
                         const sc_ttype *out_type) {
  sc_value *t = g_new0(sc_value, to->n_args ? to->n_args : 1);
  for (uint32_t j = 0; j < to->n_args; j++) {
    char buf[64];
    const char *src = source_name(renames, to->args[j].name, buf, sizeof buf);
    const sc_value *v = arg(op, args, src);
    if (v != NULL)
      sc_value_copy(&t[j], v);
    else if (to->args[j].has_default)
      sc_value_copy(&t[j], &to->args[j].default_value);
    else
      t[j] = sc_value_none();
  }
  sc_value *lay = g_new0(sc_value, to->n_args ? to->n_args : 1);
  g_autoptr(GArray) tk = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g_autoptr(GArray) types = g_array_new(FALSE, TRUE, sizeof(sc_ttype));
  sc_id out = SC_ID_NONE;
  if (sc_lang_layout_args(to, t, kids, n_kids, lay, tk, NULL)) {
    const sc_id *k = (const sc_id *)(void *)tk->data;
    if (sc_lang_infer(lang, to, lay, k, tk->len, types, NULL) && types->len == 1) {
      sc_ttype tt = g_array_index(types, sc_ttype, 0);
      if (tt.dtype == out_type->dtype &&
          (sc_shape_equal(&tt.shape, &out_type->shape) ||
           sc_shape_same(lang->st, &tt.shape, &out_type->shape) == SC_YES))
        out = canon(lang, to, lay, k, tk->len, 0, &tt);
    }
    sc_lang_clear_args(to, lay);
  }
  g_free(lay);
  free_args(to, t);
  return out;
}

const char *sc_lang_rewritten_to(const sc_op *op) {
  const canon_rule *r = g_hash_table_lookup(rule_index(), op->qualname);
  if (r == NULL)
    return NULL;
  switch (r->kind) {
  case CANON_RENAME:
  case CANON_T:
    return sc_ops_lookup(r->to, NULL)->name;
  case CANON_IDENTITY:
    return "its input";
  default:
    return NULL; /* conditional or a normal form: the operator may stay */
  }
}

static sc_id canon(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                   uint32_t n_kids, uint32_t result, const sc_ttype *out_type) {
  const canon_rule *r = rule_of(op);
  if (r == NULL || result != 0)
    return sc_lang_add_node(lang, op, args, kids, n_kids, result);
  switch (r->kind) {
  case CANON_RENAME: {
    sc_id c = rename_call(lang, op, args, kids, n_kids, sc_ops_lookup(r->to, NULL), r->renames,
                          out_type);
    if (c != SC_ID_NONE)
      return c;
    break;
  }
  case CANON_T: {
    const sc_ttype *in = kid_type(lang, kids[0]);
    if (in->shape.rank < 2)
      return kids[0];
    const sc_op *to = sc_ops_lookup(r->to, NULL);
    sc_value a[3] = {sc_value_tensor(0), sc_value_int(0), sc_value_int(1)};
    g_assert(to->n_args == 3);
    return canon(lang, to, a, kids, 1, 0, out_type);
  }
  case CANON_IDENTITY:
    if (n_kids >= 1)
      return kids[0];
    break;
  case CANON_TO_COPY: {
    const sc_value *dt = arg(op, args, "dtype");
    const sc_ttype *in = kid_type(lang, kids[0]);
    if (dt == NULL || dt->kind == SC_VAL_NONE || (dt->kind == SC_VAL_DTYPE && dt->u.dtype == in->dtype))
      return kids[0];
    break;
  }
  case CANON_COPY: {
    const sc_value *src = arg(op, args, "src");
    if (src == NULL || src->kind != SC_VAL_TENSOR || src->u.tensor >= n_kids)
      break;
    sc_id k = kids[src->u.tensor];
    const sc_ttype *srct = kid_type(lang, k);
    if (srct->dtype == out_type->dtype &&
        (sc_shape_equal(&srct->shape, &out_type->shape) ||
         sc_shape_same(lang->st, &srct->shape, &out_type->shape) == SC_YES))
      return k;
    break;
  }
  case CANON_EXPAND: {
    /* expand to the input's own shape broadcasts nothing: every element
     * is read once, in place */
    const sc_ttype *in = kid_type(lang, kids[0]);
    if (in->dtype == out_type->dtype &&
        (sc_shape_equal(&in->shape, &out_type->shape) ||
         sc_shape_same(lang->st, &in->shape, &out_type->shape) == SC_YES))
      return kids[0];
    /* a size of -1 keeps the input's size there: written as the result's
     * size, the size list is the result shape (one form per expand) */
    const sc_value *sz = arg(op, args, "size");
    if (sz != NULL && sz->kind == SC_VAL_INT_LIST && sz->u.ints.n == out_type->shape.rank) {
      gboolean minus = FALSE;
      for (uint32_t i = 0; i < sz->u.ints.n; i++)
        if (sc_dim_is_const(sz->u.ints.v[i]) && sz->u.ints.v[i].value == -1)
          minus = TRUE;
      if (minus) {
        sc_value *a = copy_args(op, args);
        set_arg(op, a, "size", int_list(out_type->shape.dims, out_type->shape.rank));
        sc_id c = sc_lang_add_node(lang, op, a, kids, n_kids, 0);
        free_args(op, a);
        return c;
      }
    }
    break;
  }
  case CANON_VIEW:
    return norm_view(lang, op, args, kids, out_type);
  case CANON_TRANSPOSE:
    return norm_transpose(lang, op, args, kids);
  case CANON_PERMUTE:
    return norm_permute(lang, op, args, kids);
  case CANON_SLICE:
    return norm_slice(lang, op, args, kids);
  case CANON_CAT:
    return norm_chain(lang, op, args, kids, n_kids, TRUE);
  case CANON_SUM:
    return norm_chain(lang, op, args, kids, n_kids, FALSE);
  }
  return sc_lang_add_node(lang, op, args, kids, n_kids, result);
}

gboolean sc_lang_canon_reads_type(const sc_op *op, uint32_t result) {
  const canon_rule *r = rule_of(op);
  if (r == NULL || result != 0)
    return FALSE;
  switch (r->kind) {
  case CANON_RENAME:  /* the target's shape rule is checked against it */
  case CANON_COPY:
  case CANON_EXPAND:
  case CANON_VIEW:
    return TRUE;
  default:
    return FALSE;
  }
}

gboolean sc_lang_canon_is_identity(sc_lang *lang, const sc_op *op, const sc_value *args,
                                   const sc_id *kids, uint32_t n_kids, uint32_t result) {
  const canon_rule *r = rule_of(op);
  if (r == NULL || result != 0)
    return TRUE; /* canon: sc_lang_add_node as it is */
  if (r->kind != CANON_CAT && r->kind != CANON_SUM)
    return FALSE;
  /* norm_chain's normal form, which it adds as it is: two parts in order,
   * a cat's dim a constant already wrapped */
  const sc_value *parts = &args[0];
  if (parts->kind != SC_VAL_TENSOR_LIST || parts->u.list.n != n_kids || n_kids != 2 ||
      parts->u.list.ids[0] != 0 || parts->u.list.ids[1] != 1)
    return FALSE;
  if (r->kind == CANON_SUM)
    return TRUE;
  int64_t dim;
  uint32_t d;
  int32_t dim_ix = lit_index(op, "dim");
  const sc_ttype *t0 = kid_type(lang, kids[0]);
  if (dim_ix < 0 || t0 == NULL || !const_int(&args[dim_ix], &dim) ||
      !sc_wrap_dim(dim, t0->shape.rank, &d))
    return FALSE;
  sc_value wrapped = sc_value_int(d);
  return sc_value_equal(&args[dim_ix], &wrapped);
}

sc_id sc_lang_canon_add(sc_lang *lang, const sc_op *op, const sc_value *args, const sc_id *kids,
                        uint32_t n_kids, uint32_t result, const sc_ttype *out_type) {
  return canon(lang, op, args, kids, n_kids, result, out_type);
}
