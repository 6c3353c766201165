/* value.h — argument values of operator calls.
 *
 * An sc_value is what one schema argument of a node holds once bound
 * (TENSOR, INT, ...), or, before binding, what a front end read ("raw":
 * INT, FLOAT, BOOL, STR, LIST, NONE).  Binding (ops.h, sc_ops_bind) turns
 * raw values into typed ones by the operator's schema.
 *
 * Ownership: a value owns its arrays and strings; sc_value_clear frees them
 * and resets the value to NONE.  sc_value_copy makes a deep copy. */
#ifndef SHARDCHECK_VALUE_H
#define SHARDCHECK_VALUE_H

#include "shardcheck/shape.h"

G_BEGIN_DECLS

typedef enum {
  SC_VAL_NONE,        /* None / absent optional */
  SC_VAL_TENSOR,      /* tensor: id of a tensor (graph tensor, e-class, ...) */
  SC_VAL_TENSOR_LIST, /* list.ids[list.n]; Tensor?[] may hold SC_ID_NONE */
  SC_VAL_INT,         /* i: a concrete or symbolic integer */
  SC_VAL_INT_LIST,    /* ints.v[ints.n] */
  SC_VAL_FLOAT,       /* f */
  SC_VAL_BOOL,        /* b */
  SC_VAL_BOOL_LIST,   /* bools.v[bools.n] */
  SC_VAL_STR,         /* s (owned) */
  SC_VAL_DTYPE,       /* dtype */
  SC_VAL_LIST,        /* raw only: items.v[items.n], heterogeneous */
} sc_value_kind;

typedef struct sc_value sc_value;
struct sc_value {
  sc_value_kind kind;
  union {
    sc_id tensor;
    struct { uint32_t n; sc_id *ids; } list;
    sc_dim i;
    struct { uint32_t n; sc_dim *v; } ints;
    double f;
    gboolean b;
    struct { uint32_t n; gboolean *v; } bools;
    char *s;
    sc_dtype dtype;
    struct { uint32_t n; sc_value *v; } items;
  } u;
};

/* Does a value of kind K own memory (the kinds sc_value_clear frees)?
 * Hot loops skip sc_value_clear for the others. */
static inline gboolean sc_value_kind_owns(sc_value_kind k) {
  return k == SC_VAL_TENSOR_LIST || k == SC_VAL_INT_LIST || k == SC_VAL_BOOL_LIST ||
         k == SC_VAL_STR || k == SC_VAL_LIST;
}

void sc_value_clear(sc_value *v);
void sc_value_copy(sc_value *dst, const sc_value *src);
gboolean sc_value_equal(const sc_value *a, const sc_value *b); /* structural */
guint sc_value_hash(const sc_value *v);
/* Human-readable text ("[2, S/2]", "f32", "None", "t3" for tensor id 3
 * unless name_of is given). name_of may be NULL. Caller g_free()s. */
char *sc_value_to_string(const sc_value *v, const sc_symtab *st,
                         const char *(*name_of)(void *env, sc_id tensor), void *env);
const char *sc_value_kind_name(sc_value_kind kind); /* "int", "Tensor", ... */

static inline sc_value sc_value_none(void) { sc_value v; v.kind = SC_VAL_NONE; v.u.tensor = 0; return v; }
static inline sc_value sc_value_int(int64_t x) { sc_value v; v.kind = SC_VAL_INT; v.u.i = sc_dim_const(x); return v; }
static inline sc_value sc_value_dim(sc_dim x) { sc_value v; v.kind = SC_VAL_INT; v.u.i = x; return v; }
static inline sc_value sc_value_float(double x) { sc_value v; v.kind = SC_VAL_FLOAT; v.u.f = x; return v; }
static inline sc_value sc_value_bool(gboolean x) { sc_value v; v.kind = SC_VAL_BOOL; v.u.b = x; return v; }
static inline sc_value sc_value_tensor(sc_id t) { sc_value v; v.kind = SC_VAL_TENSOR; v.u.tensor = t; return v; }
sc_value sc_value_str(const char *s); /* copies s */

G_END_DECLS

#endif
