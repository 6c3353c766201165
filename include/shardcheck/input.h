/* input.h — reading an input file (a bundle, a lemma file) safely.
 *
 * Inputs are read whole, so only a regular file under the size limit is
 * read: a directory, a FIFO, a device (/dev/zero) or a file larger than
 * the limit is refused at once, before a byte is read, and a file that
 * grows past the limit while it is read is refused too.  The limit is
 * process-wide (the CLI's --max-input-bytes sets it once, before any load);
 * SC_INPUT_DEFAULT_MAX_BYTES until then.
 *
 * Ownership: *DATA is new (g_free), NUL-terminated after *LEN bytes. */
#ifndef SHARDCHECK_INPUT_H
#define SHARDCHECK_INPUT_H

#include "shardcheck/common.h"

G_BEGIN_DECLS

#define SC_INPUT_DEFAULT_MAX_BYTES ((uint64_t)256 * 1024 * 1024)

#define SC_INPUT_ERROR (sc_input_error_quark())
GQuark sc_input_error_quark(void);
typedef enum {
  SC_INPUT_ERROR_IO,       /* cannot open or read */
  SC_INPUT_ERROR_NOT_FILE, /* a directory, FIFO, device, socket */
  SC_INPUT_ERROR_TOO_LARGE /* larger than the limit */
} sc_input_error;

void sc_input_set_max_bytes(uint64_t max);
uint64_t sc_input_max_bytes(void);

/* PATH's contents, when PATH is a regular file of at most
 * sc_input_max_bytes() bytes; else FALSE with a message that names PATH
 * and says what it is ("is a directory", "is not a regular file (a FIFO)",
 * "is 300000000 bytes, over the limit of ... (--max-input-bytes)"). */
gboolean sc_input_read(const char *path, char **data, size_t *len, GError **error);

G_END_DECLS

#endif
