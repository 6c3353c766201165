/* eval-layout.c — evaluators of ops-layout.def: views and reshapes, slicing
 * and indexing, concatenation and splitting, padding and masking, sorting,
 * copies, creation, the comm.* collectives (as the bundle spec's table
 * defines them), PyTorch's per-rank collectives on one-member groups, and
 * the clean sc.* operators.
 *
 * Every evaluator follows ATen's value semantics (slice clamping, negative
 * dims and indices, advanced indexing placement, ...).  Result shapes were
 * given by the shape rule; evaluators that compute a size themselves
 * (slices, splits) check it against the result and report a disagreement
 * as an internal error rather than reading out of bounds. */
#include "interp/interp-private.h"

#include <math.h>
#include <string.h>

/* ---- strided copies -------------------------------------------------------- */

/* out[k] = in[base + sum idx[d] * s[d]] over OUT's coordinates. */
static void gather_strided(sc_tvalue *out, const sc_tvalue *in, const int64_t *s, int64_t base) {
  if (out->numel == 0)
    return;
  int64_t idx[SC_MAX_RANK] = {0};
  int64_t k = 0;
  do {
    int64_t off = base;
    for (uint32_t d = 0; d < out->rank; d++)
      off += idx[d] * s[d];
    out->data[k++] = in->data[off];
  } while (tv_next(out->rank, out->dims, idx));
}

/* out[base + sum idx[d] * s[d]] = src[k] over SRC's coordinates. */
static void scatter_strided(sc_tvalue *out, const sc_tvalue *src, const int64_t *s, int64_t base) {
  if (src->numel == 0)
    return;
  int64_t idx[SC_MAX_RANK] = {0};
  int64_t k = 0;
  do {
    int64_t off = base;
    for (uint32_t d = 0; d < src->rank; d++)
      off += idx[d] * s[d];
    out->data[off] = src->data[k++];
  } while (tv_next(src->rank, src->dims, idx));
}

static void copy_data(sc_tvalue *out, const sc_tvalue *in) {
  if (out->numel > 0)
    memcpy(out->data, in->data, sizeof(double) * (size_t)out->numel);
}

static void broadcast_into(sc_tvalue *out, const sc_tvalue *in) {
  int64_t s[SC_MAX_RANK];
  tv_bstrides(in, out->rank, out->dims, s);
  gather_strided(out, in, s, 0);
}

static void fill(sc_tvalue *out, double v) {
  for (int64_t i = 0; i < out->numel; i++)
    out->data[i] = v;
}

static gboolean internal_size(sc_ev *ev, const char *what, int64_t mine, int64_t rule) {
  return ev_fail(ev, SC_INTERP_ERROR_SHAPE,
                 "internal disagreement on %s: the interpreter computes %" G_GINT64_FORMAT
                 " but the shape rule gave %" G_GINT64_FORMAT,
                 what, (gint64)mine, (gint64)rule);
}

/* ---- views ---------------------------------------------------------------- */

static gboolean permute_into(sc_tvalue *out, const sc_tvalue *in, const uint32_t *perm) {
  int64_t own[SC_MAX_RANK], s[SC_MAX_RANK];
  tv_strides(in, own);
  for (uint32_t d = 0; d < out->rank; d++)
    s[d] = own[perm[d]];
  gather_strided(out, in, s, 0);
  return TRUE;
}

static gboolean ev_t(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  if (x->rank < 2) {
    copy_data(ev->out[0], x);
    return TRUE;
  }
  uint32_t perm[2] = {1, 0};
  return permute_into(ev->out[0], x, perm);
}

static gboolean ev_transpose(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  if (x->rank == 0) {
    copy_data(ev->out[0], x);
    return TRUE;
  }
  uint32_t a = ev_wrap(ev_int(ev, "dim0", 0), x->rank), b = ev_wrap(ev_int(ev, "dim1", 0), x->rank);
  uint32_t perm[SC_MAX_RANK];
  for (uint32_t d = 0; d < x->rank; d++)
    perm[d] = d;
  perm[a] = b;
  perm[b] = a;
  return permute_into(ev->out[0], x, perm);
}

static gboolean ev_permute(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  int64_t dims[SC_MAX_RANK];
  int32_t n = ev_ints(ev, "dims", dims, SC_MAX_RANK);
  if (n != (int32_t)x->rank)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "dims has %d entries for a rank-%u tensor", n,
                   x->rank);
  uint32_t perm[SC_MAX_RANK];
  for (uint32_t d = 0; d < x->rank; d++)
    perm[d] = ev_wrap(dims[d], x->rank);
  return permute_into(ev->out[0], x, perm);
}

/* view / reshape / squeeze / unsqueeze / clone / _to_copy...: same
 * elements in the same row-major order (the dtype cast, if any, is the
 * rounding every result receives). */
static gboolean ev_copy_first(sc_ev *ev) {
  const sc_tvalue *x = ev->tensors[ev->args[0].u.tensor];
  if (x->numel != ev->out[0]->numel)
    return internal_size(ev, "the number of elements", x->numel, ev->out[0]->numel);
  copy_data(ev->out[0], x);
  return TRUE;
}

static gboolean ev_expand(sc_ev *ev) {
  broadcast_into(ev->out[0], ev_tensor(ev, "self"));
  return TRUE;
}

/* ATen's slice bounds: negative values count from the end, then clamp. */
static void slice_bounds(int64_t size, gboolean has_start, int64_t start, gboolean has_end,
                         int64_t end, int64_t *s_out, int64_t *e_out) {
  if (!has_start)
    start = 0;
  if (!has_end)
    end = size;
  if (start < 0)
    start += size;
  if (end < 0)
    end += size;
  if (start < 0)
    start = 0;
  else if (start >= size)
    start = size;
  if (end < start)
    end = start;
  else if (end >= size)
    end = size;
  *s_out = start;
  *e_out = end;
}

/* Strides and base of the slice [start:end:step] of dim D of X; *LEN its length. */
static void slice_view(const sc_tvalue *x, uint32_t d, int64_t start, int64_t step, int64_t *s,
                       int64_t *base) {
  tv_strides(x, s);
  *base = start * s[d];
  s[d] *= step;
}

/* Dim, start and step of a slice of X; SLICED (the result, or the source
 * of a scatter) must have the slice's length along that dim. */
static gboolean slice_args(sc_ev *ev, const sc_tvalue *x, const sc_tvalue *sliced, uint32_t *d,
                           int64_t *start, int64_t *step) {
  *d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  *step = ev_int(ev, "step", 1);
  if (*step <= 0)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID, "slice step must be positive");
  if (x->rank == 0 || sliced->rank != x->rank)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "slice() cannot be applied to a 0-dim tensor");
  int64_t end;
  slice_bounds(x->dims[*d], ev_has(ev, "start"), ev_int(ev, "start", 0), ev_has(ev, "end"),
               ev_int(ev, "end", 0), start, &end);
  int64_t len = (end - *start + *step - 1) / *step;
  if (len != sliced->dims[*d])
    return internal_size(ev, "the slice length", len, sliced->dims[*d]);
  return TRUE;
}

static gboolean ev_slice(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  uint32_t d;
  int64_t start, step, s[SC_MAX_RANK], base;
  if (!slice_args(ev, x, ev->out[0], &d, &start, &step))
    return FALSE;
  slice_view(x, d, start, step, s, &base);
  gather_strided(ev->out[0], x, s, base);
  return TRUE;
}

static gboolean ev_narrow(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  int64_t start = ev_int(ev, "start", 0), len = ev_int(ev, "length", 0);
  if (start < 0)
    start += x->dims[d];
  if (start < 0 || len < 0 || start + len > x->dims[d])
    return ev_fail(ev, SC_INTERP_ERROR_INVALID, "start %" G_GINT64_FORMAT " + length %" G_GINT64_FORMAT
                   " exceeds dimension size %" G_GINT64_FORMAT, (gint64)start, (gint64)len,
                   (gint64)x->dims[d]);
  int64_t s[SC_MAX_RANK], base;
  slice_view(x, d, start, 1, s, &base);
  gather_strided(ev->out[0], x, s, base);
  return TRUE;
}

/* Strides of X without dim D and the base offset of index I there. */
static gboolean select_view(sc_ev *ev, const sc_tvalue *x, uint32_t d, int64_t *i, int64_t *s,
                            int64_t *base) {
  int64_t own[SC_MAX_RANK];
  tv_strides(x, own);
  int64_t size = x->dims[d];
  if (*i < -size || *i >= size)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "index %" G_GINT64_FORMAT " is out of bounds for dimension %u with size %" G_GINT64_FORMAT,
                   (gint64)*i, d, (gint64)size);
  if (*i < 0)
    *i += size;
  uint32_t k = 0;
  for (uint32_t j = 0; j < x->rank; j++)
    if (j != d)
      s[k++] = own[j];
  *base = *i * own[d];
  return TRUE;
}

static gboolean ev_select(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  int64_t i = ev_int(ev, "index", 0), s[SC_MAX_RANK], base;
  if (!select_view(ev, x, d, &i, s, &base))
    return FALSE;
  gather_strided(ev->out[0], x, s, base);
  return TRUE;
}

/* Concatenate TS[N] along D into OUT (inputs of another rank are skipped,
 * as ATen skips legacy empty 1-D tensors). */
static void cat_into(sc_tvalue *out, const sc_tvalue *const *ts, uint32_t n, uint32_t d) {
  int64_t outer = 1, inner = 1;
  for (uint32_t k = 0; k < d; k++)
    outer *= out->dims[k];
  for (uint32_t k = d + 1; k < out->rank; k++)
    inner *= out->dims[k];
  int64_t row = out->dims[d] * inner, off = 0;
  for (uint32_t i = 0; i < n; i++) {
    const sc_tvalue *t = ts[i];
    if (t->rank != out->rank)
      continue;
    int64_t chunk = t->dims[d] * inner;
    for (int64_t o = 0; o < outer && chunk > 0; o++)
      memcpy(out->data + o * row + off * inner, t->data + o * chunk, sizeof(double) * (size_t)chunk);
    off += t->dims[d];
  }
}

static gboolean ev_cat(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "tensors", &n);
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), ev->out[0]->rank);
  if (ev->out[0]->numel > 0)
    cat_into(ev->out[0], ts, n, d);
  return TRUE;
}

static gboolean ev_stack(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "tensors", &n);
  sc_tvalue *out = ev->out[0];
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), out->rank);
  int64_t outer = 1, inner = 1;
  for (uint32_t k = 0; k < d; k++)
    outer *= out->dims[k];
  for (uint32_t k = d + 1; k < out->rank; k++)
    inner *= out->dims[k];
  for (uint32_t i = 0; i < n; i++)
    for (int64_t o = 0; o < outer && inner > 0; o++)
      memcpy(out->data + (o * n + i) * inner, ts[i]->data + o * inner, sizeof(double) * (size_t)inner);
  return TRUE;
}

/* Copy consecutive parts of X along D into the results, whose sizes along D
 * the shape rule chose. */
static gboolean split_into(sc_ev *ev, const sc_tvalue *x, uint32_t d) {
  int64_t off = 0;
  for (uint32_t i = 0; i < ev->n_out; i++) {
    sc_tvalue *o = ev->out[i];
    int64_t s[SC_MAX_RANK], base;
    slice_view(x, d, off, 1, s, &base);
    if (off + o->dims[d] > x->dims[d])
      return internal_size(ev, "the split sizes", off + o->dims[d], x->dims[d]);
    gather_strided(o, x, s, base);
    off += o->dims[d];
  }
  return TRUE;
}

static gboolean ev_split(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  return split_into(ev, x, ev_wrap(ev_int(ev, "dim", 0), x->rank));
}

static gboolean ev_unbind(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  for (uint32_t i = 0; i < ev->n_out; i++) {
    int64_t k = i, s[SC_MAX_RANK], base;
    if (!select_view(ev, x, d, &k, s, &base))
      return FALSE;
    gather_strided(ev->out[i], x, s, base);
  }
  return TRUE;
}

static gboolean ev_flip(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  int64_t dims[SC_MAX_RANK * 2], s[SC_MAX_RANK], base = 0;
  int32_t n = ev_ints(ev, "dims", dims, G_N_ELEMENTS(dims));
  tv_strides(x, s);
  gboolean flip[SC_MAX_RANK] = {FALSE};
  for (int32_t i = 0; i < n && i < (int32_t)G_N_ELEMENTS(dims); i++)
    if (x->rank > 0)
      flip[ev_wrap(dims[i], x->rank)] = TRUE;
  for (uint32_t d = 0; d < x->rank; d++)
    if (flip[d] && x->dims[d] > 0) {
      base += (x->dims[d] - 1) * s[d];
      s[d] = -s[d];
    }
  gather_strided(ev->out[0], x, s, base);
  return TRUE;
}

static int64_t pmod(int64_t a, int64_t n) {
  if (n == 0)
    return 0;
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

static gboolean ev_roll(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  int64_t shifts[SC_MAX_RANK * 2], dims[SC_MAX_RANK * 2];
  int32_t ns = ev_ints(ev, "shifts", shifts, G_N_ELEMENTS(shifts));
  int32_t nd = ev_ints(ev, "dims", dims, G_N_ELEMENTS(dims));
  if (nd <= 0) {
    if (ns != 1)
      return ev_fail(ev, SC_INTERP_ERROR_INVALID, "without dims, shifts must have one entry");
    for (int64_t i = 0; i < x->numel; i++)
      out->data[pmod(i + shifts[0], x->numel)] = x->data[i];
    return TRUE;
  }
  if (ns != nd)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID, "shifts and dims must have the same length");
  int64_t shift[SC_MAX_RANK] = {0};
  for (int32_t i = 0; i < nd && i < (int32_t)G_N_ELEMENTS(dims); i++)
    shift[ev_wrap(dims[i], x->rank)] += shifts[i];
  if (x->numel == 0)
    return TRUE;
  int64_t idx[SC_MAX_RANK] = {0}, src[SC_MAX_RANK];
  int64_t k = 0;
  do {
    for (uint32_t d = 0; d < x->rank; d++)
      src[d] = pmod(idx[d] - shift[d], x->dims[d]);
    out->data[k++] = x->data[sc_tvalue_offset(x, src)];
  } while (tv_next(out->rank, out->dims, idx));
  return TRUE;
}

static gboolean ev_repeat(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  if (out->numel == 0)
    return TRUE;
  uint32_t lead = out->rank - x->rank;
  int64_t idx[SC_MAX_RANK] = {0}, src[SC_MAX_RANK];
  int64_t k = 0;
  do {
    for (uint32_t d = 0; d < x->rank; d++)
      src[d] = idx[d + lead] % x->dims[d];
    out->data[k++] = x->data[sc_tvalue_offset(x, src)];
  } while (tv_next(out->rank, out->dims, idx));
  return TRUE;
}

/* repeat_interleave.self_int: element q of the result along dim is
 * element q / repeats of self (dim None: of the flattened self). */
static gboolean ev_repeat_interleave(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  int64_t rep = ev_int(ev, "repeats", 1);
  if (out->numel == 0)
    return TRUE;
  if (rep <= 0)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "repeats must be positive for a non-empty result");
  if (!ev_has(ev, "dim") || x->rank == 0) {
    for (int64_t k = 0; k < out->numel; k++)
      out->data[k] = x->data[k / rep];
    return TRUE;
  }
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  int64_t idx[SC_MAX_RANK] = {0}, src[SC_MAX_RANK];
  int64_t k = 0;
  do {
    for (uint32_t j = 0; j < x->rank; j++)
      src[j] = j == d ? idx[j] / rep : idx[j];
    out->data[k++] = x->data[sc_tvalue_offset(x, src)];
  } while (tv_next(out->rank, out->dims, idx));
  return TRUE;
}

static gboolean ev_slice_scatter(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self"), *src = ev_tensor(ev, "src");
  uint32_t d;
  int64_t start, step, s[SC_MAX_RANK], base;
  if (!slice_args(ev, x, src, &d, &start, &step))
    return FALSE;
  copy_data(ev->out[0], x);
  slice_view(x, d, start, step, s, &base);
  scatter_strided(ev->out[0], src, s, base);
  return TRUE;
}

static gboolean ev_select_scatter(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self"), *src = ev_tensor(ev, "src");
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  int64_t i = ev_int(ev, "index", 0), s[SC_MAX_RANK], base;
  if (!select_view(ev, x, d, &i, s, &base))
    return FALSE;
  copy_data(ev->out[0], x);
  scatter_strided(ev->out[0], src, s, base);
  return TRUE;
}

static gboolean ev_slice_backward(sc_ev *ev) {
  const sc_tvalue *g = ev_tensor(ev, "grad_output");
  sc_tvalue *out = ev->out[0];
  uint32_t d;
  int64_t start, step, s[SC_MAX_RANK], base;
  if (!slice_args(ev, out, g, &d, &start, &step))
    return FALSE;
  slice_view(out, d, start, step, s, &base);
  scatter_strided(out, g, s, base);
  return TRUE;
}

static gboolean ev_select_backward(sc_ev *ev) {
  const sc_tvalue *g = ev_tensor(ev, "grad_output");
  sc_tvalue *out = ev->out[0];
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), out->rank);
  int64_t i = ev_int(ev, "index", 0), s[SC_MAX_RANK], base;
  if (!select_view(ev, out, d, &i, s, &base))
    return FALSE;
  scatter_strided(out, g, s, base);
  return TRUE;
}

/* ---- padding, masking, selection ----------------------------------------- */

static gboolean ev_constant_pad_nd(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  int64_t pad[SC_MAX_RANK * 2];
  int32_t np = ev_ints(ev, "pad", pad, G_N_ELEMENTS(pad));
  double value = ev_num(ev, "value", 0);
  int64_t left[SC_MAX_RANK] = {0};
  for (int32_t i = 0; i + 1 < np && i / 2 < (int32_t)x->rank; i += 2)
    left[x->rank - 1 - (uint32_t)(i / 2)] = pad[i];
  if (out->numel == 0)
    return TRUE;
  int64_t idx[SC_MAX_RANK] = {0}, src[SC_MAX_RANK];
  int64_t k = 0;
  do {
    gboolean inside = TRUE;
    for (uint32_t d = 0; d < x->rank; d++) {
      src[d] = idx[d] - left[d];
      if (src[d] < 0 || src[d] >= x->dims[d])
        inside = FALSE;
    }
    out->data[k++] = inside ? x->data[sc_tvalue_offset(x, src)] : value;
  } while (tv_next(out->rank, out->dims, idx));
  return TRUE;
}

static gboolean triangle(sc_ev *ev, gboolean upper) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  int64_t diag = ev_int(ev, "diagonal", 0);
  if (x->rank < 2)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "input tensor must have at least 2 dimensions");
  if (out->numel == 0)
    return TRUE;
  int64_t idx[SC_MAX_RANK] = {0};
  int64_t k = 0;
  do {
    int64_t i = idx[x->rank - 2], j = idx[x->rank - 1];
    gboolean keep = upper ? j - i >= diag : j - i <= diag;
    out->data[k] = keep ? x->data[k] : 0.0;
    k++;
  } while (tv_next(out->rank, out->dims, idx));
  return TRUE;
}

static gboolean ev_triu(sc_ev *ev) { return triangle(ev, TRUE); }
static gboolean ev_tril(sc_ev *ev) { return triangle(ev, FALSE); }

/* out[i] = f over inputs broadcast to OUT. */
static void map3(sc_tvalue *out, const sc_tvalue *a, const sc_tvalue *b, const sc_tvalue *c,
                 double (*f)(double, double, double)) {
  int64_t sa[SC_MAX_RANK], sb[SC_MAX_RANK], scc[SC_MAX_RANK];
  tv_bstrides(a, out->rank, out->dims, sa);
  tv_bstrides(b, out->rank, out->dims, sb);
  tv_bstrides(c, out->rank, out->dims, scc);
  if (out->numel == 0)
    return;
  int64_t idx[SC_MAX_RANK] = {0};
  int64_t k = 0;
  do {
    int64_t oa = 0, ob = 0, oc = 0;
    for (uint32_t d = 0; d < out->rank; d++) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
      oc += idx[d] * scc[d];
    }
    out->data[k++] = f(a->data[oa], b->data[ob], c->data[oc]);
  } while (tv_next(out->rank, out->dims, idx));
}

static double f_where(double c, double a, double b) { return c != 0 ? a : b; }
static double f_masked(double x, double m, double v) { return m != 0 ? v : x; }

static gboolean ev_where(sc_ev *ev) {
  map3(ev->out[0], ev_tensor(ev, "condition"), ev_tensor(ev, "self"), ev_tensor(ev, "other"),
       f_where);
  return TRUE;
}

static gboolean ev_masked_fill(sc_ev *ev) {
  const sc_tvalue *v = ev_tensor(ev, "value");
  g_autoptr(sc_tvalue) sv = NULL;
  if (v == NULL) {
    sv = sc_tvalue_new_scalar(SC_DTYPE_F64, ev_num(ev, "value", 0));
    v = sv;
  } else if (v->numel != 1) {
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "only supports a 0-dimensional value tensor, but got tensor with %u dimension(s)",
                   v->rank);
  }
  g_autoptr(sc_tvalue) scalar = sc_tvalue_new_scalar(SC_DTYPE_F64, v->data[0]);
  map3(ev->out[0], ev_tensor(ev, "self"), ev_tensor(ev, "mask"), scalar, f_masked);
  return TRUE;
}

/* An index value checked against SIZE; negatives count from the end when
 * WRAP (advanced indexing), are out of range otherwise. */
static gboolean check_index(sc_ev *ev, double v, int64_t size, gboolean wrap, uint32_t dim,
                            int64_t *out) {
  if (!(fabs(v) <= SC_INTERP_MAX_EXACT_INT))
    return ev_fail(ev, SC_INTERP_ERROR_INVALID, "index %g is not a valid index for dimension %u", v,
                   dim);
  int64_t i = (int64_t)v;
  if (wrap && i < 0 && i >= -size)
    i += size;
  if (i < 0 || i >= size)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "index %" G_GINT64_FORMAT " is out of bounds for dimension %u with size %" G_GINT64_FORMAT,
                   (gint64)(int64_t)v, dim, (gint64)size);
  *out = i;
  return TRUE;
}

static gboolean ev_index_select(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self"), *ix = ev_tensor(ev, "index");
  sc_tvalue *out = ev->out[0];
  if (out->numel == 0)
    return TRUE;
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  int64_t idx[SC_MAX_RANK] = {0}, src[SC_MAX_RANK];
  int64_t k = 0;
  do {
    for (uint32_t j = 0; j < x->rank; j++)
      src[j] = idx[j];
    if (x->rank > 0 && !check_index(ev, ix->data[idx[d]], x->dims[d], FALSE, d, &src[d]))
      return FALSE;
    out->data[k++] = x->data[sc_tvalue_offset(x, src)];
  } while (tv_next(out->rank, out->dims, idx));
  return TRUE;
}

static gboolean ev_gather(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self"), *ix = ev_tensor(ev, "index");
  sc_tvalue *out = ev->out[0];
  if (x->rank > 0 && ix->rank != x->rank)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "index and self must have the same number of dims");
  if (out->numel == 0)
    return TRUE;
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  int64_t idx[SC_MAX_RANK] = {0}, src[SC_MAX_RANK];
  int64_t k = 0;
  do {
    for (uint32_t j = 0; j < ix->rank; j++)
      src[j] = idx[j];
    if (x->rank > 0) {
      if (!check_index(ev, ix->data[k], x->dims[d], FALSE, d, &src[d]))
        return FALSE;
      for (uint32_t j = 0; j < x->rank; j++)
        if (j != d && src[j] >= x->dims[j])
          return ev_fail(ev, SC_INTERP_ERROR_INVALID, "index is larger than self in dim %u", j);
    }
    out->data[k++] = x->rank > 0 ? x->data[sc_tvalue_offset(x, src)] : x->data[0];
  } while (tv_next(ix->rank, ix->dims, idx));
  return TRUE;
}

/* scatter.src / scatter.value: a copy of self with out[.., index[p], ..]
 * = src[p] (or value) for every position p of index; a position written
 * twice keeps the last write in row-major order of index (CPU order; the
 * accelerators leave it unspecified).  scatter_add (ACCUMULATE): += src[p]
 * instead, every write counted. */
static gboolean scatter_into(sc_ev *ev, gboolean accumulate) {
  const sc_tvalue *x = ev_tensor(ev, "self"), *ix = ev_tensor(ev, "index"),
                  *src = ev_tensor(ev, "src");
  double value = ev_num(ev, "value", 0);
  sc_tvalue *out = ev->out[0];
  copy_data(out, x);
  uint32_t xr = x->rank ? x->rank : 1, ir = ix->rank ? ix->rank : 1;
  if (ir != xr || (src != NULL && (src->rank ? src->rank : 1) != xr))
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "index, src and self must have the same number of dims");
  if (ix->numel == 0)
    return TRUE;
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  int64_t idx[SC_MAX_RANK] = {0}, dst[SC_MAX_RANK] = {0};
  int64_t k = 0;
  do {
    for (uint32_t j = 0; j < ix->rank; j++) {
      dst[j] = idx[j];
      if (src != NULL && j < src->rank && idx[j] >= src->dims[j])
        return ev_fail(ev, SC_INTERP_ERROR_INVALID, "index is larger than src in dim %u", j);
      if (j != d && j < x->rank && idx[j] >= x->dims[j])
        return ev_fail(ev, SC_INTERP_ERROR_INVALID, "index is larger than self in dim %u", j);
    }
    if (!check_index(ev, ix->data[k], x->rank ? x->dims[d] : 1, FALSE, d, &dst[d]))
      return FALSE;
    double v = src == NULL ? value : src->rank > 0 ? src->data[sc_tvalue_offset(src, idx)] : src->data[0];
    double *slot = &out->data[x->rank > 0 ? sc_tvalue_offset(x, dst) : 0];
    *slot = accumulate ? *slot + v : v;
    k++;
  } while (tv_next(ix->rank, ix->dims, idx));
  return TRUE;
}

static gboolean ev_scatter(sc_ev *ev) { return scatter_into(ev, FALSE); }
static gboolean ev_scatter_add(sc_ev *ev) { return scatter_into(ev, TRUE); }

/* index_add: out = self; out[.., index[i], ..] += alpha * source[.., i, ..]
 * (indices in [0, size): ATen does not wrap negative ones here). */
static gboolean ev_index_add(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self"), *ix = ev_tensor(ev, "index"),
                  *src = ev_tensor(ev, "source");
  double alpha = ev_num(ev, "alpha", 1);
  sc_tvalue *out = ev->out[0];
  copy_data(out, x);
  if (src->numel == 0)
    return TRUE;
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), x->rank);
  if (x->rank == 0) {
    for (int64_t i = 0; i < ix->numel; i++) {
      int64_t t;
      if (!check_index(ev, ix->data[i], 1, FALSE, 0, &t))
        return FALSE;
      out->data[0] += alpha * src->data[i < src->numel ? i : 0];
    }
    return TRUE;
  }
  if (src->rank != x->rank || src->dims[d] != ix->numel)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "source must have self's shape with the index's length at dim");
  int64_t idx[SC_MAX_RANK] = {0}, dst[SC_MAX_RANK];
  int64_t k = 0;
  do {
    for (uint32_t j = 0; j < src->rank; j++)
      dst[j] = idx[j];
    if (!check_index(ev, ix->data[idx[d]], x->dims[d], FALSE, d, &dst[d]))
      return FALSE;
    out->data[sc_tvalue_offset(x, dst)] += alpha * src->data[k++];
  } while (tv_next(src->rank, src->dims, idx));
  return TRUE;
}

/* one_hot: out[p, c] = (self[p] == c); a value outside [0, C) is an error. */
static gboolean ev_one_hot(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  int64_t c = out->rank ? out->dims[out->rank - 1] : 0;
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t v;
    if (!(x->data[i] >= 0 && x->data[i] < (double)c))
      return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                     "Class values must be smaller than num_classes (%" G_GINT64_FORMAT ") and "
                     "non-negative, got %g", (gint64)c, x->data[i]);
    v = (int64_t)x->data[i];
    out->data[i * c + v] = 1.0;
  }
  return TRUE;
}

/* ---- advanced indexing -------------------------------------------------- */

typedef struct {
  uint32_t n;                    /* entries, one per leading dim of self */
  sc_tvalue *ix[SC_MAX_RANK];    /* owned long index tensors, NULL = ':' */
  uint32_t brank;
  int64_t bdims[SC_MAX_RANK];    /* broadcast shape of the index tensors */
  int64_t bstr[SC_MAX_RANK][SC_MAX_RANK];
  gboolean adjacent;
  gboolean has_index;            /* some entry is a tensor */
  uint32_t first;                /* position of the broadcast dims in the result */
  uint32_t rank;                 /* of the indexed result */
  int64_t dims[SC_MAX_RANK];
} adv_index;

static void adv_clear(adv_index *a) {
  for (uint32_t i = 0; i < SC_MAX_RANK; i++)
    sc_tvalue_free(a->ix[i]);
}

/* Expand bool masks to long indices (their nonzero coordinates), broadcast
 * the index tensors and lay out the result shape, as ATen's index does. */
static gboolean adv_prepare(sc_ev *ev, const sc_tvalue *x, adv_index *a) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "indices", &n);
  memset(a, 0, sizeof *a);
  uint32_t pos = 0;
  for (uint32_t i = 0; i < n; i++) {
    const sc_tvalue *t = ts[i];
    if (t != NULL && (t->dtype == SC_DTYPE_BOOL || t->dtype == SC_DTYPE_U8)) {
      if (pos + t->rank > x->rank)
        return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "too many indices for self of dimension %u",
                       x->rank);
      for (uint32_t j = 0; j < t->rank; j++)
        if (t->dims[j] != x->dims[pos + j])
          return ev_fail(ev, SC_INTERP_ERROR_SHAPE,
                         "the shape of mask %u does not match self at dim %u", i, pos + j);
      int64_t nnz = 0;
      for (int64_t k = 0; k < t->numel; k++)
        nnz += t->data[k] != 0;
      for (uint32_t j = 0; j < t->rank; j++) {
        a->ix[pos + j] = ev_new(ev, SC_DTYPE_I64, 1, &nnz);
        if (a->ix[pos + j] == NULL)
          return FALSE;
      }
      int64_t idx[SC_MAX_RANK] = {0}, m = 0;
      if (t->numel > 0) {
        int64_t k = 0;
        do {
          if (t->data[k++] != 0) {
            for (uint32_t j = 0; j < t->rank; j++)
              a->ix[pos + j]->data[m] = (double)idx[j];
            m++;
          }
        } while (tv_next(t->rank, t->dims, idx));
      }
      pos += t->rank;
    } else {
      if (pos >= x->rank)
        return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "too many indices for self of dimension %u",
                       x->rank);
      a->ix[pos++] = t != NULL ? sc_tvalue_copy(t) : NULL;
    }
  }
  a->n = pos;
  int32_t first = -1, last = -1;
  a->brank = 0;
  for (uint32_t i = 0; i < a->n; i++) {
    sc_tvalue *t = a->ix[i];
    if (t == NULL)
      continue;
    if (first < 0)
      first = (int32_t)i;
    last = (int32_t)i;
    /* broadcast t into bdims */
    uint32_t r = MAX(a->brank, t->rank);
    int64_t nd[SC_MAX_RANK];
    for (uint32_t k = 0; k < r; k++) {
      int32_t ka = (int32_t)k - (int32_t)(r - a->brank), kt = (int32_t)k - (int32_t)(r - t->rank);
      int64_t da = ka >= 0 ? a->bdims[ka] : 1, dt = kt >= 0 ? t->dims[kt] : 1;
      if (da != dt && da != 1 && dt != 1)
        return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "indices could not be broadcast together");
      nd[k] = da == 1 ? dt : da;
    }
    a->brank = r;
    memcpy(a->bdims, nd, sizeof nd);
  }
  for (uint32_t i = 0; i < a->n; i++)
    if (a->ix[i] != NULL)
      tv_bstrides(a->ix[i], a->brank, a->bdims, a->bstr[i]);
  a->adjacent = TRUE;
  for (int32_t i = first; first >= 0 && i <= last; i++)
    if (a->ix[i] == NULL)
      a->adjacent = FALSE;
  a->has_index = first >= 0;
  a->first = first < 0 ? 0 : (a->adjacent ? (uint32_t)first : 0);
  a->rank = 0;
  if (first < 0) {
    a->rank = x->rank;
    memcpy(a->dims, x->dims, sizeof a->dims);
    return TRUE;
  }
  uint32_t kept = 0;
  for (uint32_t j = 0; j < x->rank; j++)
    kept += j >= a->n || a->ix[j] == NULL;
  if (kept + a->brank > SC_MAX_RANK)
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "the result would have more than %d dims",
                   SC_MAX_RANK);
  if (a->adjacent) { /* x[:first] + B + x[last+1:] */
    for (uint32_t j = 0; j < (uint32_t)first; j++)
      a->dims[a->rank++] = x->dims[j];
    for (uint32_t k = 0; k < a->brank; k++)
      a->dims[a->rank++] = a->bdims[k];
    for (uint32_t j = (uint32_t)last + 1; j < x->rank; j++)
      a->dims[a->rank++] = x->dims[j];
  } else { /* B + every dim not indexed */
    for (uint32_t k = 0; k < a->brank; k++)
      a->dims[a->rank++] = a->bdims[k];
    for (uint32_t j = 0; j < x->rank; j++)
      if (j >= a->n || a->ix[j] == NULL)
        a->dims[a->rank++] = x->dims[j];
  }
  return TRUE;
}

/* The offset in X of the element at result coordinates IDX. */
static gboolean adv_offset(sc_ev *ev, const sc_tvalue *x, const adv_index *a, const int64_t *idx,
                           int64_t *off) {
  int64_t src[SC_MAX_RANK];
  const int64_t *b = idx + a->first;
  uint32_t k = 0; /* next result coordinate outside the broadcast dims */
  for (uint32_t j = 0; j < x->rank; j++) {
    if (j < a->n && a->ix[j] != NULL) {
      int64_t o = 0;
      for (uint32_t q = 0; q < a->brank; q++)
        o += b[q] * a->bstr[j][q];
      if (!check_index(ev, a->ix[j]->data[o], x->dims[j], TRUE, j, &src[j]))
        return FALSE;
    } else {
      if (k == a->first && a->has_index)
        k += a->brank;
      src[j] = idx[k++];
    }
  }
  *off = sc_tvalue_offset(x, src);
  return TRUE;
}

static gboolean ev_index(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  adv_index a;
  if (!adv_prepare(ev, x, &a)) {
    adv_clear(&a);
    return FALSE;
  }
  gboolean ok = a.rank == out->rank;
  for (uint32_t d = 0; ok && d < out->rank; d++)
    ok = a.dims[d] == out->dims[d];
  if (!ok) {
    adv_clear(&a);
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE,
                   "internal disagreement on the indexing result's shape");
  }
  if (out->numel > 0) {
    int64_t idx[SC_MAX_RANK] = {0}, k = 0, off;
    do {
      if (!adv_offset(ev, x, &a, idx, &off)) {
        adv_clear(&a);
        return FALSE;
      }
      out->data[k++] = x->data[off];
    } while (tv_next(out->rank, out->dims, idx));
  }
  adv_clear(&a);
  return TRUE;
}

/* index_put: duplicates without accumulate keep the last value written in
 * row-major order of the indexed shape (ATen leaves the winner undefined). */
static gboolean ev_index_put(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self"), *v = ev_tensor(ev, "values");
  gboolean acc = ev_bool(ev, "accumulate", FALSE);
  sc_tvalue *out = ev->out[0];
  copy_data(out, x);
  adv_index a;
  if (!adv_prepare(ev, x, &a)) {
    adv_clear(&a);
    return FALSE;
  }
  /* values must broadcast to the indexed shape */
  if (v->rank > a.rank) {
    adv_clear(&a);
    return ev_fail(ev, SC_INTERP_ERROR_SHAPE, "values cannot be broadcast to the indexing result");
  }
  for (uint32_t d = 0; d < v->rank; d++) {
    int64_t want = a.dims[a.rank - v->rank + d];
    if (v->dims[d] != 1 && v->dims[d] != want) {
      adv_clear(&a);
      return ev_fail(ev, SC_INTERP_ERROR_SHAPE,
                     "shape mismatch: values cannot be broadcast to the indexing result");
    }
  }
  int64_t vs[SC_MAX_RANK];
  tv_bstrides(v, a.rank, a.dims, vs);
  int64_t total = 1;
  for (uint32_t d = 0; d < a.rank; d++)
    total *= a.dims[d];
  if (total > 0) {
    int64_t idx[SC_MAX_RANK] = {0}, off;
    do {
      if (!adv_offset(ev, x, &a, idx, &off)) {
        adv_clear(&a);
        return FALSE;
      }
      int64_t vo = 0;
      for (uint32_t d = 0; d < a.rank; d++)
        vo += idx[d] * vs[d];
      if (acc)
        out->data[off] += v->data[vo];
      else
        out->data[off] = v->data[vo];
    } while (tv_next(a.rank, a.dims, idx));
  }
  adv_clear(&a);
  return TRUE;
}

/* ---- sorting ------------------------------------------------------------ */

typedef struct {
  double v;
  int64_t i;
} keyed;

/* Order for sorting: NaN is larger than every number (ATen); ties keep the
 * lower index first in both directions. */
static int cmp_keyed(const keyed *a, const keyed *b, gboolean descending) {
  gboolean an = isnan(a->v), bn = isnan(b->v);
  int c;
  if (an || bn)
    c = an && bn ? 0 : (an ? 1 : -1);
  else
    c = a->v < b->v ? -1 : (a->v > b->v ? 1 : 0);
  if (descending)
    c = -c;
  if (c == 0)
    c = a->i < b->i ? -1 : (a->i > b->i ? 1 : 0);
  return c;
}

static void merge_sort(keyed *a, keyed *tmp, int64_t n, gboolean desc) {
  if (n < 2)
    return;
  int64_t h = n / 2;
  merge_sort(a, tmp, h, desc);
  merge_sort(a + h, tmp, n - h, desc);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n)
    tmp[k++] = cmp_keyed(&a[j], &a[i], desc) < 0 ? a[j++] : a[i++];
  while (i < h)
    tmp[k++] = a[i++];
  while (j < n)
    tmp[k++] = a[j++];
  memcpy(a, tmp, sizeof(keyed) * (size_t)n);
}

/* Sort every line of X along D; write the first K of each to VALS/IDXS. */
static void sort_lines(const sc_tvalue *x, uint32_t d, gboolean desc, int64_t k, sc_tvalue *vals,
                       sc_tvalue *idxs) {
  int64_t len = x->rank ? x->dims[d] : 1, outer = 1, inner = 1;
  for (uint32_t j = 0; j < d && j < x->rank; j++)
    outer *= x->dims[j];
  for (uint32_t j = d + 1; j < x->rank; j++)
    inner *= x->dims[j];
  keyed *line = g_new(keyed, ev_buf_len(len)), *tmp = g_new(keyed, ev_buf_len(len));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      for (int64_t q = 0; q < len; q++) {
        line[q].v = x->data[(o * len + q) * inner + in];
        line[q].i = q;
      }
      merge_sort(line, tmp, len, desc);
      for (int64_t q = 0; q < k; q++) {
        vals->data[(o * k + q) * inner + in] = line[q].v;
        idxs->data[(o * k + q) * inner + in] = (double)line[q].i;
      }
    }
  g_free(line);
  g_free(tmp);
}

static gboolean ev_topk(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  uint32_t d = ev_wrap(ev_int(ev, "dim", -1), x->rank);
  int64_t k = ev_int(ev, "k", 0);
  if (k < 0 || k > (x->rank ? x->dims[d] : 1))
    return ev_fail(ev, SC_INTERP_ERROR_INVALID, "selected index k out of range");
  sort_lines(x, d, ev_bool(ev, "largest", TRUE), k, ev->out[0], ev->out[1]);
  return TRUE;
}

static gboolean ev_sort(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  uint32_t d = ev_wrap(ev_int(ev, "dim", -1), x->rank);
  sort_lines(x, d, ev_bool(ev, "descending", FALSE), x->rank ? x->dims[d] : 1, ev->out[0],
             ev->out[1]);
  return TRUE;
}

/* ---- data-dependent sizes ----------------------------------------------- */

/* Nonzero elements of X (NaN counts: it is not 0, as in ATen). */
static int64_t count_nonzero(const sc_tvalue *x) {
  int64_t n = 0;
  for (int64_t i = 0; i < x->numel; i++)
    n += x->data[i] != 0.0;
  return n;
}

gboolean sc_interp_data_dependent_size(const sc_op *op, const sc_value *args,
                                       sc_tvalue *const *tensors, uint32_t n_tensors,
                                       int64_t *out) {
  if (strcmp(op->qualname, "aten.nonzero.default") != 0)
    return FALSE;
  int32_t k = sc_ops_arg_index(op, "self");
  if (k < 0 || args[k].kind != SC_VAL_TENSOR || args[k].u.tensor >= n_tensors ||
      tensors[args[k].u.tensor] == NULL)
    return FALSE;
  *out = count_nonzero(tensors[args[k].u.tensor]);
  return TRUE;
}

/* nonzero: the coordinates of the nonzero elements in row-major order, one
 * row each.  The result was allocated with the size the caller checked
 * against the count (interp.c); a disagreement here is reported anyway. */
static gboolean ev_nonzero(sc_ev *ev) {
  const sc_tvalue *x = ev_tensor(ev, "self");
  sc_tvalue *out = ev->out[0];
  int64_t n = count_nonzero(x);
  if (out->rank != 2 || out->dims[0] != n || out->dims[1] != (int64_t)x->rank)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID,
                   "the result has %" G_GINT64_FORMAT " rows but self has %" G_GINT64_FORMAT
                   " nonzero elements",
                   out->rank ? out->dims[0] : 0, n);
  int64_t row = 0;
  for (int64_t i = 0; i < x->numel; i++) {
    if (x->data[i] == 0.0)
      continue;
    int64_t rest = i;
    for (uint32_t d = x->rank; d-- > 0;) {
      out->data[row * x->rank + d] = (double)(rest % x->dims[d]);
      rest /= x->dims[d];
    }
    row++;
  }
  return TRUE;
}

/* ---- copies ----------------------------------------------------------- */

static gboolean ev_copy(sc_ev *ev) {
  broadcast_into(ev->out[0], ev_tensor(ev, "src"));
  return TRUE;
}

/* ---- creation ----------------------------------------------------------- */

static gboolean ev_full(sc_ev *ev) {
  double v = ev_has(ev, "fill_value") ? ev_num(ev, "fill_value", 0) : ev_num(ev, "value", 0);
  fill(ev->out[0], v);
  return TRUE;
}

static gboolean ev_zeros(sc_ev *ev) {
  fill(ev->out[0], 0.0);
  return TRUE;
}

static gboolean ev_ones(sc_ev *ev) {
  fill(ev->out[0], 1.0);
  return TRUE;
}

static gboolean ev_empty(sc_ev *ev) {
  fill(ev->out[0], sc_interp_empty_fill(ev->out[0]->dtype));
  return TRUE;
}

static gboolean ev_scalar_tensor(sc_ev *ev) {
  fill(ev->out[0], ev_num(ev, "s", 0));
  return TRUE;
}

static gboolean ev_arange(sc_ev *ev) {
  double start = ev_num(ev, "start", 0), step = ev_num(ev, "step", 1);
  sc_tvalue *out = ev->out[0];
  if (!sc_dtype_is_floating(out->dtype)) {
    start = trunc(start);
    step = trunc(step);
  }
  for (int64_t i = 0; i < out->numel; i++)
    out->data[i] = start + (double)i * step;
  return TRUE;
}

/* ---- collectives (bundle spec, "Collectives in the implementation graph") */

static gboolean reduce_op(sc_ev *ev, const char *name, int *kind) {
  const char *op = ev_str(ev, name, "sum");
  static const char *const ops[] = {"sum", "max", "min", "avg", "product"};
  for (int i = 0; i < (int)G_N_ELEMENTS(ops); i++)
    if (g_ascii_strcasecmp(op, ops[i]) == 0) {
      *kind = i;
      return TRUE;
    }
  return ev_fail(ev, SC_INTERP_ERROR_UNINTERPRETABLE, "reduction '%s' is not interpreted", op);
}

/* Elementwise reduction of TS[N] (equal shapes) into OUT. */
static void reduce_all(sc_tvalue *out, const sc_tvalue *const *ts, uint32_t n, int kind) {
  for (int64_t e = 0; e < out->numel; e++) {
    double acc = ts[0]->data[e];
    for (uint32_t i = 1; i < n; i++) {
      double v = ts[i]->data[e];
      switch (kind) {
      case 1: /* max, NaN propagates */
        if (!isnan(acc) && (isnan(v) || v > acc))
          acc = v;
        break;
      case 2: /* min, NaN propagates */
        if (!isnan(acc) && (isnan(v) || v < acc))
          acc = v;
        break;
      case 4: acc *= v; break;
      default: acc += v; break;
      }
    }
    if (kind == 3)
      acc /= n;
    out->data[e] = acc;
  }
}

static gboolean ev_comm_all_reduce(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "inputs", &n);
  int kind;
  if (!reduce_op(ev, "op", &kind))
    return FALSE;
  for (uint32_t i = 0; i < ev->n_out; i++)
    reduce_all(ev->out[i], ts, n, kind);
  return TRUE;
}

static gboolean ev_comm_all_gather(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "inputs", &n);
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), ts[0]->rank);
  for (uint32_t i = 0; i < ev->n_out; i++)
    if (ev->out[i]->numel > 0)
      cat_into(ev->out[i], ts, n, d);
  return TRUE;
}

static gboolean ev_comm_reduce_scatter(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "inputs", &n);
  int kind;
  if (!reduce_op(ev, "op", &kind))
    return FALSE;
  uint32_t d = ev_wrap(ev_int(ev, "dim", 0), ts[0]->rank);
  g_autoptr(sc_tvalue) total = ev_new(ev, ts[0]->dtype, ts[0]->rank, ts[0]->dims);
  if (total == NULL)
    return FALSE;
  reduce_all(total, ts, n, kind);
  int64_t part = ts[0]->dims[d] / n;
  for (uint32_t i = 0; i < ev->n_out; i++) {
    if (ev->out[i]->dims[d] != part)
      return internal_size(ev, "the scattered part", part, ev->out[i]->dims[d]);
    int64_t s[SC_MAX_RANK], base;
    slice_view(total, d, part * i, 1, s, &base);
    gather_strided(ev->out[i], total, s, base);
  }
  return TRUE;
}

static gboolean ev_comm_all_to_all(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "inputs", &n);
  uint32_t sd = ev_wrap(ev_int(ev, "split_dim", 0), ts[0]->rank);
  uint32_t cd = ev_wrap(ev_int(ev, "concat_dim", 0), ts[0]->rank);
  int64_t part = ts[0]->dims[sd] / n;
  int64_t cdims[SC_MAX_RANK];
  memcpy(cdims, ts[0]->dims, sizeof cdims);
  cdims[sd] = part;
  sc_tvalue **chunks = g_new0(sc_tvalue *, n);
  gboolean ok = TRUE;
  for (uint32_t i = 0; i < ev->n_out && ok; i++) {
    /* output i = cat(chunk_i(inputs[0]), ..., chunk_i(inputs[n-1]), concat_dim) */
    for (uint32_t r = 0; r < n && ok; r++) {
      chunks[r] = ev_new(ev, ts[r]->dtype, ts[r]->rank, cdims);
      ok = chunks[r] != NULL;
      if (ok) {
        int64_t s[SC_MAX_RANK], base;
        slice_view(ts[r], sd, part * i, 1, s, &base);
        gather_strided(chunks[r], ts[r], s, base);
      }
    }
    if (ok && ev->out[i]->numel > 0)
      cat_into(ev->out[i], (const sc_tvalue *const *)chunks, n, cd);
    for (uint32_t r = 0; r < n; r++) {
      sc_tvalue_free(chunks[r]);
      chunks[r] = NULL;
    }
  }
  g_free(chunks);
  return ok;
}

static gboolean ev_comm_broadcast(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "inputs", &n);
  int64_t src = ev_int(ev, "src", 0);
  if (src < 0 || src >= (int64_t)n)
    return ev_fail(ev, SC_INTERP_ERROR_INVALID, "src %" G_GINT64_FORMAT " is not in the group",
                   (gint64)src);
  for (uint32_t i = 0; i < ev->n_out; i++)
    copy_data(ev->out[i], ts[src]);
  return TRUE;
}

static gboolean ev_comm_send_recv(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "inputs", &n);
  copy_data(ev->out[0], ts[0]);
  return TRUE;
}

/* PyTorch's per-rank collectives, alone, are identities on one-member
 * groups (the spec graph's 1-way captures); bigger groups need the ranks
 * stitched into comm.* nodes. */
static gboolean c10d_group_of_one(sc_ev *ev, int64_t group_size) {
  if (group_size == 1)
    return TRUE;
  return ev_fail(ev, SC_INTERP_ERROR_UNINTERPRETABLE,
                 "a per-rank collective on a group of %" G_GINT64_FORMAT
                 " members has no value on its own: stitch the ranks into comm.* nodes",
                 (gint64)group_size);
}

static gboolean ev_c10d_all_reduce(sc_ev *ev) {
  int kind;
  if (!reduce_op(ev, "reduce_op", &kind))
    return FALSE;
  copy_data(ev->out[0], ev_tensor(ev, "input"));
  return TRUE;
}

static gboolean ev_c10d_sized(sc_ev *ev) {
  if (!c10d_group_of_one(ev, ev_int(ev, "group_size", 1)))
    return FALSE;
  return ev_copy_first(ev);
}

static gboolean ev_c10d_reduce_scatter(sc_ev *ev) {
  int kind;
  if (!reduce_op(ev, "reduce_op", &kind))
    return FALSE;
  return ev_c10d_sized(ev);
}

static gboolean ev_c10d_all_to_all(sc_ev *ev) {
  int64_t sizes[2];
  int32_t a = ev_ints(ev, "input_split_sizes", sizes, 2);
  int32_t b = ev_ints(ev, "output_split_sizes", sizes, 2);
  if (a > 1 || b > 1)
    return c10d_group_of_one(ev, MAX(a, b));
  return ev_copy_first(ev);
}

static gboolean ev_c10d_broadcast(sc_ev *ev) {
  int64_t src = ev_int(ev, "src", 0);
  if (src != 0)
    return ev_fail(ev, SC_INTERP_ERROR_UNINTERPRETABLE,
                   "broadcast from rank %" G_GINT64_FORMAT
                   " has no value on its own: stitch the ranks into comm.* nodes",
                   (gint64)src);
  return ev_copy_first(ev);
}

/* ---- sc.sum ------------------------------------------------------------- */

static gboolean ev_sc_sum(sc_ev *ev) {
  uint32_t n;
  g_autofree const sc_tvalue **ts = ev_tensor_list(ev, "tensors", &n);
  sc_tvalue *out = ev->out[0];
  g_autoptr(sc_tvalue) tmp = ev_new(ev, out->dtype, out->rank, out->dims);
  if (tmp == NULL)
    return FALSE;
  for (uint32_t i = 0; i < n; i++) {
    broadcast_into(tmp, ts[i]);
    for (int64_t e = 0; e < out->numel; e++)
      out->data[e] += tmp->data[e];
  }
  return TRUE;
}

const sc_eval_entry sc_eval_layout_table[] = {
    {"aten.t.default", ev_t},
    {"aten.t_copy.default", ev_t},
    {"aten.transpose.int", ev_transpose},
    {"aten.transpose_copy.int", ev_transpose},
    {"aten.permute.default", ev_permute},
    {"aten.permute_copy.default", ev_permute},
    {"aten.view.default", ev_copy_first},
    {"aten.view_copy.default", ev_copy_first},
    {"aten._unsafe_view.default", ev_copy_first},
    {"aten.reshape.default", ev_copy_first},
    {"aten._reshape_alias.default", ev_copy_first},
    {"aten.expand.default", ev_expand},
    {"aten.expand_copy.default", ev_expand},
    {"aten.expand_as.default", ev_expand},
    {"aten.unsqueeze.default", ev_copy_first},
    {"aten.unsqueeze_copy.default", ev_copy_first},
    {"aten.squeeze.default", ev_copy_first},
    {"aten.squeeze.dim", ev_copy_first},
    {"aten.squeeze.dims", ev_copy_first},
    {"aten.squeeze_copy.dim", ev_copy_first},
    {"aten.slice.Tensor", ev_slice},
    {"aten.slice_copy.Tensor", ev_slice},
    {"aten.narrow.default", ev_narrow},
    {"aten.select.int", ev_select},
    {"aten.select_copy.int", ev_select},
    {"aten.cat.default", ev_cat},
    {"aten.stack.default", ev_stack},
    {"aten.split.Tensor", ev_split},
    {"aten.split_with_sizes.default", ev_split},
    {"aten.chunk.default", ev_split},
    {"aten.unbind.int", ev_unbind},
    {"aten.flip.default", ev_flip},
    {"aten.roll.default", ev_roll},
    {"aten.repeat.default", ev_repeat},
    {"aten.repeat_interleave.self_int", ev_repeat_interleave},
    {"aten.scatter.src", ev_scatter},
    {"aten.scatter.value", ev_scatter},
    {"aten.index_add.default", ev_index_add},
    {"aten.one_hot.default", ev_one_hot},
    {"aten.slice_scatter.default", ev_slice_scatter},
    {"aten.select_scatter.default", ev_select_scatter},
    {"aten.constant_pad_nd.default", ev_constant_pad_nd},
    {"aten.slice_backward.default", ev_slice_backward},
    {"aten.select_backward.default", ev_select_backward},
    {"aten.triu.default", ev_triu},
    {"aten.tril.default", ev_tril},
    {"aten.where.self", ev_where},
    {"aten.masked_fill.Scalar", ev_masked_fill},
    {"aten.masked_fill.Tensor", ev_masked_fill},
    {"aten.index_select.default", ev_index_select},
    {"aten.gather.default", ev_gather},
    {"aten.scatter_add.default", ev_scatter_add},
    {"aten.index.Tensor", ev_index},
    {"aten.index_put.default", ev_index_put},
    {"aten.topk.default", ev_topk},
    {"aten.nonzero.default", ev_nonzero},
    {"aten.sort.default", ev_sort},
    {"aten.sort.stable", ev_sort},
    {"aten.clone.default", ev_copy_first},
    {"aten.detach.default", ev_copy_first},
    {"aten.alias.default", ev_copy_first},
    {"aten.lift_fresh_copy.default", ev_copy_first},
    {"aten._to_copy.default", ev_copy_first},
    {"aten.copy.default", ev_copy},
    {"aten.full.default", ev_full},
    {"aten.full_like.default", ev_full},
    {"aten.zeros.default", ev_zeros},
    {"aten.zeros_like.default", ev_zeros},
    {"aten.ones.default", ev_ones},
    {"aten.ones_like.default", ev_ones},
    {"aten.empty.memory_format", ev_empty},
    {"aten.empty_like.default", ev_empty},
    {"aten.empty_strided.default", ev_empty},
    {"aten.new_zeros.default", ev_zeros},
    {"aten.new_ones.default", ev_ones},
    {"aten.new_full.default", ev_full},
    {"aten.new_empty.default", ev_empty},
    {"aten.new_empty_strided.default", ev_empty},
    {"aten.scalar_tensor.default", ev_scalar_tensor},
    {"aten.fill.Scalar", ev_full},
    {"aten.arange.default", ev_arange},
    {"aten.arange.start", ev_arange},
    {"aten.arange.start_step", ev_arange},
    {"comm.all_reduce.default", ev_comm_all_reduce},
    {"comm.all_gather.default", ev_comm_all_gather},
    {"comm.reduce_scatter.default", ev_comm_reduce_scatter},
    {"comm.all_to_all.default", ev_comm_all_to_all},
    {"comm.broadcast.default", ev_comm_broadcast},
    {"comm.send_recv.default", ev_comm_send_recv},
    {"_c10d_functional.all_reduce.default", ev_c10d_all_reduce},
    {"_c10d_functional.all_gather_into_tensor.default", ev_c10d_sized},
    {"_c10d_functional.reduce_scatter_tensor.default", ev_c10d_reduce_scatter},
    {"_c10d_functional.all_to_all_single.default", ev_c10d_all_to_all},
    {"_c10d_functional.broadcast.default", ev_c10d_broadcast},
    {"_c10d_functional.wait_tensor.default", ev_copy_first},
    {"sc.cat.default", ev_cat},
    {"sc.slice.default", ev_slice},
    {"sc.transpose.default", ev_transpose},
    {"sc.permute.default", ev_permute},
    {"sc.view.default", ev_copy_first},
    {"sc.sum.default", ev_sc_sum},
    {"sc.full.default", ev_full},
    {"sc.arange.default", ev_arange},
    {"sc.empty.default", ev_empty},
    {NULL, NULL},
};
