/* common.h — types every shardcheck module shares.
 *
 * Ids are typed 32-bit integers into growable arrays, never pointers, so that
 * they stay valid when the arrays grow (STYLE.md point 3).  Three-valued
 * answers (sc_truth) come from every comparison of symbolic sizes: UNKNOWN is
 * never to be read as YES. */
#ifndef SHARDCHECK_COMMON_H
#define SHARDCHECK_COMMON_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef uint32_t sc_id;
#define SC_ID_NONE ((sc_id)UINT32_MAX)

typedef enum {
  SC_NO = 0,
  SC_YES = 1,
  SC_UNKNOWN = 2,
} sc_truth;

/* Exit codes of the CLI, fixed by the bundle spec. */
#define SC_EXIT_CODES(X)                                        \
  X(SC_EXIT_REFINES, 0, "refines")                              \
  X(SC_EXIT_FAILS, 1, "fails")                                  \
  X(SC_EXIT_INPUT_ERROR, 2, "error")                            \
  X(SC_EXIT_LIMIT, 3, "limit")                                  \
  X(SC_EXIT_UNSOUND, 4, "unsound")

typedef enum {
#define SC_X_EXIT(sym, code, word) sym = code,
  SC_EXIT_CODES(SC_X_EXIT)
#undef SC_X_EXIT
} sc_exit_code;

G_END_DECLS

#endif
