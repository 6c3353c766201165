/* shape.h — dtypes, shapes and tensor types.
 *
 * An sc_shape is a plain value: a rank (at most SC_MAX_RANK) and that many
 * sc_dim values, each concrete or symbolic (see sym.h).  Copying a shape is a
 * struct assignment; it borrows symbolic dims from their sc_symtab.
 * An sc_ttype (tensor type) is a shape plus a dtype. */
#ifndef SHARDCHECK_SHAPE_H
#define SHARDCHECK_SHAPE_H

#include "shardcheck/sym.h"

G_BEGIN_DECLS

#define SC_MAX_RANK 8

/* X(enum, short name used in bundles, is_floating, is_integral, byte size) */
#define SC_DTYPES(X)                     \
  X(SC_DTYPE_F64, "f64", 1, 0, 8)        \
  X(SC_DTYPE_F32, "f32", 1, 0, 4)        \
  X(SC_DTYPE_F16, "f16", 1, 0, 2)        \
  X(SC_DTYPE_BF16, "bf16", 1, 0, 2)      \
  X(SC_DTYPE_I64, "i64", 0, 1, 8)        \
  X(SC_DTYPE_I32, "i32", 0, 1, 4)        \
  X(SC_DTYPE_I8, "i8", 0, 1, 1)          \
  X(SC_DTYPE_U8, "u8", 0, 1, 1)          \
  X(SC_DTYPE_BOOL, "bool", 0, 0, 1)

typedef enum {
#define SC_X_DTYPE(sym, name, fl, in, sz) sym,
  SC_DTYPES(SC_X_DTYPE)
#undef SC_X_DTYPE
  SC_DTYPE_COUNT
} sc_dtype;

/* "f32" -> SC_DTYPE_F32.  Also accepts torch spellings: "float32", "float",
 * "torch.float16", "half", "bfloat16", "int64", "long", "int", "bool", "b8",
 * "uint8", "int8", "double".  FALSE when the name is unknown. */
gboolean sc_dtype_from_name(const char *name, sc_dtype *out);
const char *sc_dtype_name(sc_dtype dtype);   /* "f32"; static string */
gboolean sc_dtype_is_floating(sc_dtype dtype);
gboolean sc_dtype_is_integral(sc_dtype dtype); /* ints, not bool */
/* PyTorch's type promotion for two tensor operands (bool < ints < floats;
 * among floats the wider wins; f16 with bf16 gives f32). */
sc_dtype sc_dtype_promote(sc_dtype a, sc_dtype b);

typedef struct {
  uint32_t rank;
  sc_dim dims[SC_MAX_RANK];
} sc_shape;

typedef struct {
  sc_shape shape;
  sc_dtype dtype;
} sc_ttype;

sc_shape sc_shape_scalar(void);
/* Concrete shape from integers; rank must be <= SC_MAX_RANK. */
sc_shape sc_shape_of(uint32_t rank, const int64_t *sizes);
gboolean sc_shape_equal(const sc_shape *a, const sc_shape *b); /* dim by dim, structural */
/* Dim-by-dim comparison under the symtab's assumptions. */
sc_truth sc_shape_same(sc_symtab *st, const sc_shape *a, const sc_shape *b);
/* "[2, S/2, 8]"; caller frees with g_free. */
char *sc_shape_to_string(const sc_shape *shape);
/* Normalize a possibly negative dim against rank (ATen's maybe_wrap_dim).
 * rank 0 accepts -1 and 0 as ATen does. FALSE if out of range. */
gboolean sc_wrap_dim(int64_t dim, uint32_t rank, uint32_t *out);

G_END_DECLS

#endif
