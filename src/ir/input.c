/* input.c — reading input files: regular files under a size limit only
 * (input.h).  The type and size are checked on the open descriptor
 * (fstat), so a path swapped between check and read is still checked; a
 * FIFO is opened non-blocking so that refusing it never waits for a
 * writer. */
#include "shardcheck/input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(sc-input-error-quark, sc_input_error)

static uint64_t max_bytes = SC_INPUT_DEFAULT_MAX_BYTES;

void sc_input_set_max_bytes(uint64_t max) {
  max_bytes = max;
}

uint64_t sc_input_max_bytes(void) {
  return max_bytes;
}

static const char *file_kind(mode_t m) {
  if (S_ISDIR(m))
    return "is a directory";
  if (S_ISFIFO(m))
    return "is not a regular file (a FIFO)";
  if (S_ISCHR(m))
    return "is not a regular file (a character device)";
  if (S_ISBLK(m))
    return "is not a regular file (a block device)";
  if (S_ISSOCK(m))
    return "is not a regular file (a socket)";
  return "is not a regular file";
}

static gboolean too_large(const char *path, uint64_t size, GError **error) {
  g_set_error(error, SC_INPUT_ERROR, SC_INPUT_ERROR_TOO_LARGE,
              "%s: is %" G_GUINT64_FORMAT " bytes or more, over the input limit of %" G_GUINT64_FORMAT
              " bytes (--max-input-bytes)",
              path, size, max_bytes);
  return FALSE;
}

gboolean sc_input_read(const char *path, char **data, size_t *len, GError **error) {
  *data = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, SC_INPUT_ERROR, SC_INPUT_ERROR_IO, "%s: cannot read: %s", path,
                g_strerror(e));
    return FALSE;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    g_set_error(error, SC_INPUT_ERROR, SC_INPUT_ERROR_IO, "%s: cannot stat: %s", path,
                g_strerror(e));
    return FALSE;
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    g_set_error(error, SC_INPUT_ERROR, SC_INPUT_ERROR_NOT_FILE, "%s: %s", path,
                file_kind(sb.st_mode));
    return FALSE;
  }
  if ((uint64_t)sb.st_size > max_bytes) {
    close(fd);
    return too_large(path, (uint64_t)sb.st_size, error);
  }
  /* A regular file: clear O_NONBLOCK (meaningless there, but be plain). */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  size_t cap = (size_t)sb.st_size + 1, n = 0;
  char *buf = g_malloc(cap + 1);
  for (;;) {
    if (n == cap) {
      /* the file grew while read */
      if ((uint64_t)n > max_bytes) {
        g_free(buf);
        close(fd);
        return too_large(path, n, error);
      }
      cap = cap * 2 > (size_t)max_bytes + 1 ? (size_t)max_bytes + 1 : cap * 2;
      if (cap <= n)
        cap = n + 1;
      buf = g_realloc(buf, cap + 1);
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      int e = errno;
      g_free(buf);
      close(fd);
      g_set_error(error, SC_INPUT_ERROR, SC_INPUT_ERROR_IO, "%s: cannot read: %s", path,
                  g_strerror(e));
      return FALSE;
    }
    if (r == 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  if ((uint64_t)n > max_bytes) {
    g_free(buf);
    return too_large(path, n, error);
  }
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return TRUE;
}
