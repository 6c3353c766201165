/* sym.c — symbol tables, hash-consed normal forms and their arithmetic.
 *
 * Invariants (see sym-private.h for the representation):
 *  - every public operation refreshes its inputs (sc_sym_refresh) and
 *    returns a fresh normal form: a concrete dim when the polynomial is a
 *    constant, else an interned poly whose terms are sorted and nonzero;
 *  - floordiv/mod by a constant k > 0 keep the quotient exact: the
 *    numerator is split into k*Q + R with R's coefficients in [0, k), and R
 *    is reduced by the gcd of its coefficients and k, so that equal
 *    quotients get the same atom;
 *  - int64 overflow sets sc_sym_overflow and saturates; nothing wraps. */
#include "sym/sym-private.h"

#include <string.h>

G_DEFINE_QUARK(sc-sym-error-quark, sc_sym_error)

/* ---- int64 helpers ---------------------------------------------------- */

int64_t sc_sym_mul64(sc_symtab *st, int64_t a, int64_t b) {
  int64_t r;
  if (G_UNLIKELY(__builtin_mul_overflow(a, b, &r))) {
    sc_sym_overflow = TRUE;
    return ((a < 0) != (b < 0)) ? INT64_MIN : INT64_MAX;
  }
  return r;
}

int64_t sc_sym_add64(sc_symtab *st, int64_t a, int64_t b) {
  int64_t r;
  if (G_UNLIKELY(__builtin_add_overflow(a, b, &r))) {
    sc_sym_overflow = TRUE;
    return a < 0 ? INT64_MIN : INT64_MAX;
  }
  return r;
}

static int64_t sub64(sc_symtab *st, int64_t a, int64_t b) {
  int64_t r;
  if (G_UNLIKELY(__builtin_sub_overflow(a, b, &r))) {
    sc_sym_overflow = TRUE;
    return a < 0 ? INT64_MIN : INT64_MAX;
  }
  return r;
}

int64_t sc_sym_gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
  uint64_t y = b < 0 ? (uint64_t)0 - (uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)x; /* gcd(MIN,MIN) */
}

int64_t sc_sym_py_floordiv(sc_symtab *st, int64_t a, int64_t k) {
  if (k == -1) {
    if (a == INT64_MIN) {
      sc_sym_overflow = TRUE;
      return INT64_MAX;
    }
    return -a;
  }
  int64_t q = a / k;
  if ((a % k != 0) && ((a < 0) != (k < 0)))
    q--;
  return q;
}

int64_t sc_sym_py_mod(int64_t a, int64_t k) {
  if (k == -1 || k == 1)
    return 0;
  int64_t r = a % k;
  if (r != 0 && ((r < 0) != (k < 0)))
    r += k;
  return r;
}

void sc_sym_bump(sc_symtab *st) {
  st->epoch++;
}

/* ---- interning ------------------------------------------------------- */

static guint mix(guint h, guint64 v) {
  h ^= (guint)(v ^ (v >> 32)) + 0x9e3779b9u + (h << 6) + (h >> 2);
  return h;
}

guint sc_dim_hash(sc_dim d) {
  if (d.poly)
    return d.poly->hash;
  return mix(17u, (guint64)d.value);
}

static guint atom_hash_fn(gconstpointer p) {
  return ((const sc_sym_atom *)p)->hash;
}

static gboolean atom_equal_fn(gconstpointer pa, gconstpointer pb) {
  const sc_sym_atom *a = pa, *b = pb;
  return a->kind == b->kind && a->sym == b->sym && a->scale == b->scale &&
         sc_dim_identical(a->a, b->a) && sc_dim_identical(a->b, b->b);
}

static guint mono_hash_fn(gconstpointer p) {
  return ((const sc_sym_mono *)p)->hash;
}

static gboolean mono_equal_fn(gconstpointer pa, gconstpointer pb) {
  const sc_sym_mono *a = pa, *b = pb;
  return a->n == b->n && memcmp(a->f, b->f, a->n * sizeof a->f[0]) == 0;
}

static guint poly_hash_fn(gconstpointer p) {
  return ((const sc_sym_poly *)p)->hash;
}

static gboolean poly_equal_fn(gconstpointer pa, gconstpointer pb) {
  const sc_sym_poly *a = pa, *b = pb;
  if (a->n != b->n)
    return FALSE;
  for (uint32_t i = 0; i < a->n; i++)
    if (a->t[i].c != b->t[i].c || a->t[i].m != b->t[i].m)
      return FALSE;
  return TRUE;
}

/* factors: sorted, distinct atoms; takes nothing, copies. */
static const sc_sym_mono *mono_intern(sc_symtab *st, const sc_sym_factor *f, uint32_t n) {
  sc_sym_mono *m = g_malloc(sizeof *m + n * sizeof m->f[0]);
  m->n = n;
  m->degree = 0;
  guint h = 0x2545u;
  for (uint32_t i = 0; i < n; i++) {
    m->f[i] = f[i];
    m->degree += f[i].exp;
    h = mix(h, sc_sym_atom_get(st, f[i].atom)->hash);
    h = mix(h, f[i].exp);
  }
  m->hash = h;
  gpointer found = g_hash_table_lookup(st->monos, m);
  if (found) {
    g_free(m);
    return found;
  }
  g_hash_table_add(st->monos, m);
  return m;
}

/* terms: sorted, combined, nonzero, not a constant. */

static const sc_sym_poly *poly_intern(sc_symtab *st, const sc_sym_term *t, uint32_t n) {
  sc_sym_poly *p = g_malloc(sizeof *p + n * sizeof p->t[0]);
  p->n = n;
  guint h = 0x9u;
  for (uint32_t i = 0; i < n; i++) {
    p->t[i] = t[i];
    h = mix(h, t[i].m->hash);
    h = mix(h, (guint64)t[i].c);
  }
  p->hash = h;
  gpointer found = g_hash_table_lookup(st->polys, p);
  if (found) {
    g_free(p);
    return found;
  }
  uint32_t size = 0;
  for (uint32_t i = 0; i < n; i++) {
    size = sc_sym_size_add(size, 1);
    for (uint32_t j = 0; j < t[i].m->n; j++)
    {
      /* X^e prints X e times */
      uint64_t fs = (uint64_t)sc_sym_atom_get(st, t[i].m->f[j].atom)->size * t[i].m->f[j].exp;
      size = sc_sym_size_add(size, fs > UINT32_MAX ? UINT32_MAX : (uint32_t)fs);
    }
  }
  p->size = size;
  if (size > SC_SYM_MAX_SIZE)
    st->too_large = TRUE;
  p->epoch = st->epoch;
  p->fresh.value = 0;
  p->fresh.poly = p;
  p->busy = 0;
  p->st = st;
  g_hash_table_add(st->polys, p);
  return p;
}

static guint atom_hash(const sc_symtab *st, const sc_sym_atom *key) {
  guint h = mix(0x51u, key->kind);
  if (key->kind == SC_ATOM_SYM) {
    h = mix(h, g_str_hash(sc_sym_symbol_get(st, key->sym)->name));
    h = mix(h, (guint64)key->scale);
  } else {
    h = mix(h, sc_dim_hash(key->a));
    h = mix(h, sc_dim_hash(key->b));
  }
  return h;
}

uint32_t sc_sym_atom_find(const sc_symtab *st, const sc_sym_atom *key) {
  sc_sym_atom probe = *key;
  probe.hash = atom_hash(st, key);
  const sc_sym_atom *found = g_hash_table_lookup(st->atom_set, &probe);
  return found ? found->id : G_MAXUINT32;
}

uint32_t sc_sym_atom_intern(sc_symtab *st, const sc_sym_atom *key) {
  sc_sym_atom probe = *key;
  probe.hash = atom_hash(st, key);
  const sc_sym_atom *found = g_hash_table_lookup(st->atom_set, &probe);
  if (found)
    return found->id;
  sc_sym_atom *a = g_new0(sc_sym_atom, 1);
  *a = probe;
  a->id = st->atoms->len;
  a->has_subst = FALSE;
  a->has_lo = a->has_hi = FALSE;
  a->ival_cached = FALSE;
  a->fresh_cached = FALSE;
  a->size = a->kind == SC_ATOM_SYM
                ? 1u
                : sc_sym_size_add(1u, sc_sym_size_add(sc_sym_dim_size(a->a), sc_sym_dim_size(a->b)));
  if (a->size > SC_SYM_MAX_SIZE)
    st->too_large = TRUE;
  g_ptr_array_add(st->atoms, a);
  g_hash_table_add(st->atom_set, a);
  sc_sym_factor f = {a->id, 1};
  a->mono = mono_intern(st, &f, 1);
  sc_sym_term t = {1, a->mono};
  a->self = poly_intern(st, &t, 1);
  return a->id;
}

/* ---- orders ---------------------------------------------------------- */

static int cmp64(int64_t a, int64_t b) {
  return (a > b) - (a < b);
}

static int poly_cmp(const sc_symtab *st, const sc_sym_poly *a, const sc_sym_poly *b);

int sc_sym_dim_cmp(const sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly || !b.poly) {
    if (a.poly)
      return 1;
    if (b.poly)
      return -1;
    return cmp64(a.value, b.value);
  }
  return poly_cmp(st, a.poly, b.poly);
}

int sc_sym_atom_cmp(const sc_symtab *st, uint32_t ia, uint32_t ib) {
  if (ia == ib)
    return 0;
  const sc_sym_atom *a = sc_sym_atom_get(st, ia), *b = sc_sym_atom_get(st, ib);
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  if (a->kind == SC_ATOM_SYM) {
    int c = strcmp(sc_sym_symbol_get(st, a->sym)->name, sc_sym_symbol_get(st, b->sym)->name);
    if (c)
      return c;
    return cmp64(a->scale, b->scale);
  }
  int c = sc_sym_dim_cmp(st, a->a, b->a);
  if (c)
    return c;
  return sc_sym_dim_cmp(st, a->b, b->b);
}

/* Higher degree first, then by factors: the constant sorts last. */
static int mono_cmp(const sc_symtab *st, const sc_sym_mono *a, const sc_sym_mono *b) {
  if (a == b)
    return 0;
  if (a->degree != b->degree)
    return a->degree > b->degree ? -1 : 1;
  uint32_t n = MIN(a->n, b->n);
  for (uint32_t i = 0; i < n; i++) {
    int c = sc_sym_atom_cmp(st, a->f[i].atom, b->f[i].atom);
    if (c)
      return c;
    if (a->f[i].exp != b->f[i].exp)
      return a->f[i].exp > b->f[i].exp ? -1 : 1;
  }
  return a->n < b->n ? -1 : a->n > b->n;
}

static int poly_cmp(const sc_symtab *st, const sc_sym_poly *a, const sc_sym_poly *b) {
  if (a == b)
    return 0;
  uint32_t n = MIN(a->n, b->n);
  for (uint32_t i = 0; i < n; i++) {
    int c = mono_cmp(st, a->t[i].m, b->t[i].m);
    if (c)
      return c;
    c = cmp64(a->t[i].c, b->t[i].c);
    if (c)
      return c;
  }
  return a->n < b->n ? -1 : a->n > b->n;
}

/* ---- term buffers ---------------------------------------------------- */

static GArray *tb_new(void) {
  return g_array_sized_new(FALSE, FALSE, sizeof(sc_sym_term), 8);
}

static void tb_push(GArray *tb, int64_t c, const sc_sym_mono *m) {
  if (c == 0)
    return;
  sc_sym_term t = {c, m};
  g_array_append_val(tb, t);
}

static void tb_add_dim(sc_symtab *st, GArray *tb, sc_dim d, int64_t k) {
  if (!d.poly) {
    tb_push(tb, sc_sym_mul64(st, d.value, k), st->unit);
    return;
  }
  for (uint32_t i = 0; i < d.poly->n; i++)
    tb_push(tb, sc_sym_mul64(st, d.poly->t[i].c, k), d.poly->t[i].m);
}

static gint term_cmp(gconstpointer pa, gconstpointer pb, gpointer st) {
  const sc_sym_term *a = pa, *b = pb;
  return mono_cmp(st, a->m, b->m);
}

/* Combines the sorted terms of tb and interns; frees tb. */
static sc_dim tb_finish_sorted(sc_symtab *st, GArray *tb) {
  sc_dim out = sc_dim_const(0);
  sc_sym_term *t = (sc_sym_term *)(void *)tb->data;
  uint32_t n = 0;
  for (uint32_t i = 0; i < tb->len; i++) {
    if (n > 0 && t[n - 1].m == t[i].m) {
      t[n - 1].c = sc_sym_add64(st, t[n - 1].c, t[i].c);
      if (t[n - 1].c == 0)
        n--;
    } else {
      t[n++] = t[i];
    }
  }
  if (n == 1 && t[0].m == st->unit)
    out = sc_dim_const(t[0].c);
  else if (n > 0)
    out.poly = poly_intern(st, t, n);
  g_array_free(tb, TRUE);
  return out;
}

/* Sorts, combines and interns; frees tb. */
static sc_dim tb_finish(sc_symtab *st, GArray *tb) {
  if (tb->len > 1)
    g_array_sort_with_data(tb, term_cmp, st);
  return tb_finish_sorted(st, tb);
}

/* Term I of d in *t (a constant is one term, of the unit monomial), or
 * FALSE past the last. */
static gboolean dim_term(const sc_symtab *st, sc_dim d, uint32_t i, sc_sym_term *t) {
  if (!d.poly) {
    t->c = d.value;
    t->m = st->unit;
    return i == 0;
  }
  if (i >= d.poly->n)
    return FALSE;
  *t = d.poly->t[i];
  return TRUE;
}

/* a + kb*b in sorted order without sorting: a poly's terms are sorted by
 * mono_cmp (the unit, a constant's monomial, sorts last), so the two
 * lists merge, a's term first on a tie, which is the order the stable
 * sort of tb_finish gives the same terms (issue 19: sorting was a fifth
 * of the symbolic decisions' time). */
static sc_dim merge_add(sc_symtab *st, sc_dim a, sc_dim b, int64_t kb) {
  uint32_t na = a.poly ? a.poly->n : 1, nb = b.poly ? b.poly->n : 1;
  GArray *tb = g_array_sized_new(FALSE, FALSE, sizeof(sc_sym_term), na + nb);
  uint32_t i = 0, j = 0;
  sc_sym_term ta = {0, NULL}, tbt = {0, NULL};
  gboolean ha = dim_term(st, a, i, &ta), hb = dim_term(st, b, j, &tbt);
  while (ha || hb) {
    if (hb && (!ha || mono_cmp(st, tbt.m, ta.m) < 0)) {
      tb_push(tb, sc_sym_mul64(st, tbt.c, kb), tbt.m);
      hb = dim_term(st, b, ++j, &tbt);
    } else {
      tb_push(tb, ta.c, ta.m);
      ha = dim_term(st, a, ++i, &ta);
    }
  }
  return tb_finish_sorted(st, tb);
}

static const sc_sym_mono *mono_mul(sc_symtab *st, const sc_sym_mono *a, const sc_sym_mono *b) {
  if (a == st->unit)
    return b;
  if (b == st->unit)
    return a;
  sc_sym_factor *f = g_new(sc_sym_factor, a->n + b->n);
  uint32_t i = 0, j = 0, n = 0;
  while (i < a->n || j < b->n) {
    int c;
    if (i == a->n)
      c = 1;
    else if (j == b->n)
      c = -1;
    else
      c = sc_sym_atom_cmp(st, a->f[i].atom, b->f[j].atom);
    if (c < 0) {
      f[n++] = a->f[i++];
    } else if (c > 0) {
      f[n++] = b->f[j++];
    } else {
      f[n] = a->f[i++];
      uint32_t e = f[n].exp + b->f[j++].exp;
      if (e > SC_SYM_MAX_EXP || e < f[n].exp) { /* keep loops over exponents short */
        sc_sym_overflow = TRUE;
        e = SC_SYM_MAX_EXP;
      }
      f[n++].exp = e;
    }
  }
  const sc_sym_mono *m = mono_intern(st, f, n);
  g_free(f);
  return m;
}

/* a / d as monomials, or NULL when d does not divide a. */
static const sc_sym_mono *mono_div(sc_symtab *st, const sc_sym_mono *a, const sc_sym_mono *d) {
  if (d == st->unit)
    return a;
  sc_sym_factor *f = g_new(sc_sym_factor, a->n);
  uint32_t n = 0, j = 0;
  for (uint32_t i = 0; i < a->n; i++) {
    sc_sym_factor x = a->f[i];
    if (j < d->n && d->f[j].atom == x.atom) {
      if (d->f[j].exp > x.exp)
        break;
      x.exp -= d->f[j].exp;
      j++;
    }
    if (x.exp)
      f[n++] = x;
  }
  const sc_sym_mono *m = NULL;
  if (j == d->n)
    m = mono_intern(st, f, n);
  g_free(f);
  return m;
}

/* ---- raw arithmetic on fresh dims ----------------------------------- */

sc_dim sc_sym_raw_add(sc_symtab *st, sc_dim a, sc_dim b, int64_t kb) {
  if (!a.poly && !b.poly)
    return sc_dim_const(sc_sym_add64(st, a.value, sc_sym_mul64(st, b.value, kb)));
  return merge_add(st, a, b, kb);
}

sc_dim sc_sym_scale(sc_symtab *st, sc_dim d, int64_t k) {
  if (!d.poly)
    return sc_dim_const(sc_sym_mul64(st, d.value, k));
  if (k == 1)
    return d;
  if (k == 0)
    return sc_dim_const(0);
  GArray *tb = tb_new();
  tb_add_dim(st, tb, d, k);
  return tb_finish_sorted(st, tb); /* k != 0 keeps every monomial in place */
}

sc_dim sc_sym_raw_mul(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly)
    return sc_sym_scale(st, b, a.value);
  if (!b.poly)
    return sc_sym_scale(st, a, b.value);
  GArray *tb = tb_new();
  for (uint32_t i = 0; i < a.poly->n; i++)
    for (uint32_t j = 0; j < b.poly->n; j++)
      tb_push(tb, sc_sym_mul64(st, a.poly->t[i].c, b.poly->t[j].c),
              mono_mul(st, a.poly->t[i].m, b.poly->t[j].m));
  return tb_finish(st, tb);
}

sc_dim sc_sym_div_exact(sc_symtab *st, sc_dim d, int64_t k) {
  if (!d.poly)
    return sc_dim_const(d.value / k);
  if (k == 1)
    return d;
  GArray *tb = tb_new();
  for (uint32_t i = 0; i < d.poly->n; i++)
    tb_push(tb, d.poly->t[i].c / k, d.poly->t[i].m);
  return tb_finish(st, tb);
}

int64_t sc_sym_content(sc_dim d) {
  if (!d.poly)
    return sc_sym_gcd64(d.value, 0);
  int64_t g = 0;
  for (uint32_t i = 0; i < d.poly->n; i++)
    g = sc_sym_gcd64(g, d.poly->t[i].c);
  return g;
}

/* Quotient and remainder of d by k > 0, coefficient-wise: d == k*q + r with
 * r's coefficients in [0, k). */
static void split_coeffs(sc_symtab *st, sc_dim d, int64_t k, sc_dim *q, sc_dim *r) {
  if (!d.poly) {
    *q = sc_dim_const(sc_sym_py_floordiv(st, d.value, k));
    *r = sc_dim_const(sc_sym_py_mod(d.value, k));
    return;
  }
  GArray *tq = tb_new(), *tr = tb_new();
  for (uint32_t i = 0; i < d.poly->n; i++) {
    int64_t c = d.poly->t[i].c;
    tb_push(tq, sc_sym_py_floordiv(st, c, k), d.poly->t[i].m);
    tb_push(tr, sc_sym_py_mod(c, k), d.poly->t[i].m);
  }
  *q = tb_finish(st, tq);
  *r = tb_finish(st, tr);
}

/* a / b exactly as polynomials (b nonconstant), or FALSE. */
static gboolean poly_exact_div(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out) {
  if (!a.poly) {
    if (a.value == 0) {
      *out = sc_dim_const(0);
      return TRUE;
    }
    return FALSE;
  }
  if (b.poly->n == 1) {
    int64_t cb = b.poly->t[0].c;
    const sc_sym_mono *mb = b.poly->t[0].m;
    GArray *tb = tb_new();
    for (uint32_t i = 0; i < a.poly->n; i++) {
      const sc_sym_mono *m = mono_div(st, a.poly->t[i].m, mb);
      if (!m || !sc_sym_divisible(a.poly->t[i].c, cb) ||
          (cb == -1 && a.poly->t[i].c == INT64_MIN)) {
        g_array_free(tb, TRUE);
        return FALSE;
      }
      tb_push(tb, a.poly->t[i].c / cb, m);
    }
    *out = tb_finish(st, tb);
    return TRUE;
  }
  /* a == t*b for a constant t? */
  if (a.poly->t[0].m != b.poly->t[0].m)
    return FALSE;
  int64_t ca = a.poly->t[0].c, cb = b.poly->t[0].c;
  if (!sc_sym_divisible(ca, cb) || (cb == -1 && ca == INT64_MIN))
    return FALSE;
  int64_t t = ca / cb;
  gboolean saved = sc_sym_overflow;
  sc_dim tb = sc_sym_scale(st, b, t);
  gboolean ok = !sc_sym_overflow && sc_dim_identical(tb, a);
  sc_sym_overflow = saved;
  if (ok)
    *out = sc_dim_const(t);
  return ok;
}

gboolean sc_sym_split_common(sc_symtab *st, sc_dim q, sc_dim *factor, sc_dim *rest) {
  if (!q.poly)
    return FALSE;
  const sc_sym_mono *c = q.poly->t[0].m;
  sc_sym_factor *f = g_new(sc_sym_factor, c->n + 1);
  uint32_t n = c->n;
  memcpy(f, c->f, c->n * sizeof f[0]);
  for (uint32_t i = 1; i < q.poly->n && n > 0; i++) {
    const sc_sym_mono *m = q.poly->t[i].m;
    uint32_t k = 0;
    for (uint32_t j = 0; j < n; j++) {
      for (uint32_t l = 0; l < m->n; l++)
        if (m->f[l].atom == f[j].atom) {
          f[k].atom = f[j].atom;
          f[k++].exp = MIN(f[j].exp, m->f[l].exp);
          break;
        }
    }
    n = k;
  }
  gboolean ok = n > 0;
  if (ok) {
    const sc_sym_mono *cm = mono_intern(st, f, n);
    sc_sym_term t = {1, cm};
    factor->value = 0;
    factor->poly = poly_intern(st, &t, 1);
    ok = poly_exact_div(st, q, *factor, rest);
  }
  g_free(f);
  return ok;
}

/* ---- refresh: rewrite atoms replaced by assumptions ------------------ */

typedef sc_dim (*atom_map_fn)(sc_symtab *st, uint32_t atom, void *user);

static sc_dim rebuild(sc_symtab *st, sc_dim d, atom_map_fn fn, void *user) {
  sc_dim acc = sc_dim_const(0);
  for (uint32_t i = 0; i < d.poly->n; i++) {
    const sc_sym_term *t = &d.poly->t[i];
    sc_dim m = sc_dim_const(t->c);
    for (uint32_t j = 0; j < t->m->n; j++) {
      sc_dim x = fn(st, t->m->f[j].atom, user);
      for (uint32_t e = 0; e < t->m->f[j].exp; e++)
        m = sc_sym_raw_mul(st, m, x);
    }
    acc = sc_sym_raw_add(st, acc, m, 1);
  }
  return acc;
}

static gboolean fdiv_fresh(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out);
static gboolean mod_fresh(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out);
static sc_dim minmax_fresh(sc_symtab *st, sc_dim a, sc_dim b, gboolean is_max);

static sc_dim subst_value(sc_symtab *st, uint32_t id);

static sc_dim renormalise_atom(sc_symtab *st, const sc_sym_atom *a) {
  sc_dim out = {0, a->self};
  switch (a->kind) {
  case SC_ATOM_SYM:
    return out;
  case SC_ATOM_FLOORDIV:
  case SC_ATOM_MOD: {
    sc_dim x = sc_sym_refresh(st, a->a), y = sc_sym_refresh(st, a->b);
    /* cannot fail: y was nonzero when the atom was made, and stays so
     * (a divisor that became 0 would be a false assumption) */
    gboolean ok = a->kind == SC_ATOM_FLOORDIV ? fdiv_fresh(st, x, y, &out)
                                              : mod_fresh(st, x, y, &out);
    if (!ok)
      out = sc_dim_const(0);
    return out;
  }
  case SC_ATOM_MIN:
  case SC_ATOM_MAX:
    return minmax_fresh(st, sc_sym_refresh(st, a->a), sc_sym_refresh(st, a->b),
                        a->kind == SC_ATOM_MAX);
  }
  return out;
}

/* An atom's normal form at this epoch, memoized per atom (the atom's
 * fresh_* fields, sym-private.h).  Within an epoch it is a function of the
 * atom: its operands' refreshes are cached per poly, and the decisions a
 * division makes read the epoch's facts only ("the facts of an epoch",
 * sym-decide.c).  Not cached: a result that overflowed (the clamp must be
 * seen again by the next caller), or one that read a poly whose refresh
 * was in progress (a cycle of substitutions: it stood for itself, and the
 * facts update breaks the cycle and bumps the epoch). */
static sc_dim refresh_atom(sc_symtab *st, uint32_t id, void *user) {
  sc_sym_atom *a = g_ptr_array_index(st->atoms, id);
  if (a->has_subst)
    return subst_value(st, id);
  if (a->kind == SC_ATOM_SYM) {
    sc_dim self = {0, a->self};
    return self;
  }
  if (a->fresh_cached && a->fresh_epoch == st->epoch)
    return a->fresh;
  st->work.atom_refreshes++;
  uint32_t epoch = st->epoch, busy_hits = st->busy_hits;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_dim out = renormalise_atom(st, a);
  if (!sc_sym_overflow && st->busy_hits == busy_hits && st->epoch == epoch) {
    a->fresh = out;
    a->fresh_epoch = epoch;
    a->fresh_cached = TRUE;
  }
  sc_sym_overflow = saved || sc_sym_overflow;
  return out;
}

/* One refresh of P at this epoch.  Meanwhile P stands for itself (its
 * meaning, if not its newest form): a refresh that reaches P again reads
 * that.  Decisions never refresh (sym-decide.c, "the facts of an epoch"),
 * so only a cycle of substitutions can: "T/S == H - N*(H/S)" and then "H ==
 * T" make H/S refresh to T/S, whose value holds H/S.  The substituted atoms
 * whose values are refreshed between the two visits of P are on the cycle:
 * the first is noted (st->cycle_atom), and sc_sym_facts_update, which
 * refreshes every value before anything else in an epoch, turns it into a
 * fact. */
static sc_dim refresh_frame(sc_symtab *st, sc_sym_poly *p) {
  sc_dim d = {0, p};
  st->work.poly_refreshes++;
  p->epoch = st->epoch;
  p->fresh = d;
  p->busy = st->refreshing + 1;
  st->refreshing++;
  sc_dim f = rebuild(st, d, refresh_atom, NULL);
  st->refreshing--;
  p->busy = 0;
  p->fresh = f;
  if (f.poly && f.poly != p && !f.poly->busy) {
    sc_sym_poly *q = (sc_sym_poly *)f.poly;
    q->epoch = st->epoch;
    q->fresh = f;
  }
  return f;
}

static void note_cycle(sc_symtab *st, const sc_sym_poly *p) {
  if (st->cycle_atom != G_MAXUINT32)
    return;
  for (uint32_t i = 0; i < st->subst_stack->len; i++) {
    const sc_sym_subst_frame *fr = &g_array_index(st->subst_stack, sc_sym_subst_frame, i);
    if (fr->depth + 1 >= p->busy) {
      st->cycle_atom = fr->atom;
      return;
    }
  }
}

sc_dim sc_sym_refresh(sc_symtab *st, sc_dim d) {
  if (!d.poly)
    return d;
  if (st->facts_epoch != st->epoch && st->refreshing == 0 && !st->facts_updating)
    sc_sym_facts_update(st); /* bumps the epoch */
  sc_sym_poly *p = (sc_sym_poly *)d.poly;
  if (p->epoch == st->epoch) {
    if (p->busy) {
      st->busy_hits++;
      note_cycle(st, p);
    }
    return p->fresh;
  }
  return refresh_frame(st, p);
}

/* The value of substituted atom ID, refreshed. */
static sc_dim subst_value(sc_symtab *st, uint32_t id) {
  const sc_sym_atom *a = sc_sym_atom_get(st, id);
  sc_sym_subst_frame fr = {id, st->refreshing};
  g_array_append_val(st->subst_stack, fr);
  sc_dim v = sc_sym_refresh(st, a->subst);
  g_array_set_size(st->subst_stack, st->subst_stack->len - 1);
  return v;
}

sc_dim sc_sym_atom_dim(sc_symtab *st, uint32_t id) {
  const sc_sym_atom *a = sc_sym_atom_get(st, id);
  if (a->has_subst)
    return subst_value(st, id);
  sc_dim d = {0, a->self};
  return d;
}

static sc_dim expand_mod_atom(sc_symtab *st, uint32_t id, void *user) {
  const sc_sym_atom *a = sc_sym_atom_get(st, id);
  sc_dim self = {0, a->self};
  if (a->kind != SC_ATOM_MOD || a->has_subst)
    return self;
  sc_dim q;
  if (!fdiv_fresh(st, a->a, a->b, &q))
    return self;
  return sc_sym_raw_add(st, a->a, sc_sym_raw_mul(st, a->b, q), -1);
}

sc_dim sc_sym_expand_mod(sc_symtab *st, sc_dim d) {
  if (!d.poly)
    return d;
  return rebuild(st, d, expand_mod_atom, NULL);
}

/* SEEN: the atoms already searched (a DAG: each is searched once). */
static gboolean occurs_in(const sc_symtab *st, sc_dim d, uint32_t atom, GHashTable *seen) {
  if (!d.poly)
    return FALSE;
  for (uint32_t i = 0; i < d.poly->n; i++) {
    const sc_sym_mono *m = d.poly->t[i].m;
    for (uint32_t j = 0; j < m->n; j++) {
      if (m->f[j].atom == atom)
        return TRUE;
      const sc_sym_atom *a = sc_sym_atom_get(st, m->f[j].atom);
      if (a->kind == SC_ATOM_SYM || !g_hash_table_add(seen, GUINT_TO_POINTER(a->id + 1)))
        continue;
      if (occurs_in(st, a->a, atom, seen) || occurs_in(st, a->b, atom, seen))
        return TRUE;
    }
  }
  return FALSE;
}

gboolean sc_sym_occurs(const sc_symtab *st, sc_dim d, uint32_t atom) {
  if (!d.poly)
    return FALSE;
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  return occurs_in(st, d, atom, seen);
}

/* ---- division, modulo, min, max on fresh dims ----------------------- */

static sc_dim make_atom2(sc_symtab *st, sc_sym_atom_kind kind, sc_dim a, sc_dim b) {
  sc_sym_atom key;
  memset(&key, 0, sizeof key);
  key.kind = kind;
  key.a = a;
  key.b = b;
  return sc_sym_atom_dim(st, sc_sym_atom_intern(st, &key));
}

/* The single atom of d when d is exactly 1*atom, else G_MAXUINT32. */
static uint32_t lone_atom(sc_dim d) {
  if (!d.poly || d.poly->n != 1 || d.poly->t[0].c != 1)
    return G_MAXUINT32;
  const sc_sym_mono *m = d.poly->t[0].m;
  if (m->n != 1 || m->f[0].exp != 1)
    return G_MAXUINT32;
  return m->f[0].atom;
}

/* 0 <= a < b provably (a question: the overflow flag is left alone) */
static gboolean in_0_b(sc_symtab *st, sc_dim a, sc_dim b) {
  if (sc_sym_ge0(st, a) != SC_YES)
    return FALSE;
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_dim gap = sc_sym_raw_add(st, sc_sym_raw_add(st, b, a, -1), sc_dim_const(-1), 1);
  gboolean ok = !sc_sym_overflow && sc_sym_ge0(st, gap) == SC_YES;
  sc_sym_overflow = saved;
  return ok;
}

static gboolean fdiv_fresh(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out) {
  if (!b.poly) {
    int64_t k = b.value;
    if (k == 0)
      return FALSE;
    if (!a.poly) {
      *out = sc_dim_const(sc_sym_py_floordiv(st, a.value, k));
      return TRUE;
    }
    if (k == 1) {
      *out = a;
      return TRUE;
    }
    if (k < 0) {
      if (k == INT64_MIN) {
        /* |k| exceeds int64: keep the quotient opaque */
        *out = make_atom2(st, SC_ATOM_FLOORDIV, a, b);
        return TRUE;
      }
      a = sc_sym_scale(st, a, -1);
      k = -k;
    }
    sc_dim q, r;
    split_coeffs(st, a, k, &q, &r);
    if (!r.poly) { /* constant remainder in [0, k) */
      *out = q;
      return TRUE;
    }
    sc_sym_ival iv = sc_sym_interval(st, r);
    if (!iv.lo.inf && !iv.hi.inf) {
      int64_t ql = sc_sym_py_floordiv(st, iv.lo.v, k), qh = sc_sym_py_floordiv(st, iv.hi.v, k);
      if (ql == qh) {
        *out = sc_sym_raw_add(st, q, sc_dim_const(ql), 1);
        return TRUE;
      }
    }
    int64_t g = sc_sym_gcd64(sc_sym_content(r), k);
    if (g > 1) {
      r = sc_sym_div_exact(st, r, g);
      k /= g;
    }
    uint32_t inner = lone_atom(r);
    if (inner != G_MAXUINT32) {
      const sc_sym_atom *ia = sc_sym_atom_get(st, inner);
      int64_t kk;
      if (ia->kind == SC_ATOM_FLOORDIV && !ia->b.poly && ia->b.value > 0 &&
          !__builtin_mul_overflow(ia->b.value, k, &kk)) {
        sc_dim nested;
        if (fdiv_fresh(st, ia->a, sc_dim_const(kk), &nested)) {
          *out = sc_sym_raw_add(st, q, nested, 1);
          return TRUE;
        }
      }
    }
    *out = sc_sym_raw_add(st, q, make_atom2(st, SC_ATOM_FLOORDIV, r, sc_dim_const(k)), 1);
    return TRUE;
  }
  /* symbolic divisor */
  if (poly_exact_div(st, a, b, out))
    return TRUE;
  if (b.poly->t[0].c < 0) {
    a = sc_sym_scale(st, a, -1);
    b = sc_sym_scale(st, b, -1);
  }
  if (in_0_b(st, a, b)) {
    *out = sc_dim_const(0);
    return TRUE;
  }
  *out = make_atom2(st, SC_ATOM_FLOORDIV, a, b);
  return TRUE;
}

static gboolean mod_fresh(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out) {
  if (!b.poly) {
    int64_t k = b.value;
    if (k == 0)
      return FALSE;
    if (!a.poly) {
      *out = sc_dim_const(sc_sym_py_mod(a.value, k));
      return TRUE;
    }
    if (k == 1 || k == -1) {
      *out = sc_dim_const(0);
      return TRUE;
    }
    if (k < 0) {
      if (k == INT64_MIN) {
        *out = make_atom2(st, SC_ATOM_MOD, a, b);
        return TRUE;
      }
      sc_dim m;
      mod_fresh(st, sc_sym_scale(st, a, -1), sc_dim_const(-k), &m);
      *out = sc_sym_scale(st, m, -1);
      return TRUE;
    }
    sc_dim q, r;
    split_coeffs(st, a, k, &q, &r);
    if (!r.poly) {
      *out = r;
      return TRUE;
    }
    sc_sym_ival iv = sc_sym_interval(st, r);
    if (!iv.lo.inf && !iv.hi.inf) {
      int64_t ql = sc_sym_py_floordiv(st, iv.lo.v, k), qh = sc_sym_py_floordiv(st, iv.hi.v, k);
      if (ql == qh) {
        *out = sc_sym_raw_add(st, r, sc_dim_const(sc_sym_mul64(st, ql, k)), -1);
        return TRUE;
      }
    }
    int64_t g = sc_sym_gcd64(sc_sym_content(r), k);
    if (g > 1) {
      r = sc_sym_div_exact(st, r, g);
      k /= g;
    }
    *out = sc_sym_scale(st, make_atom2(st, SC_ATOM_MOD, r, sc_dim_const(k)), g > 1 ? g : 1);
    return TRUE;
  }
  sc_dim q;
  if (poly_exact_div(st, a, b, &q)) {
    *out = sc_dim_const(0);
    return TRUE;
  }
  if (b.poly->t[0].c < 0) {
    sc_dim m;
    mod_fresh(st, sc_sym_scale(st, a, -1), sc_sym_scale(st, b, -1), &m);
    *out = sc_sym_scale(st, m, -1);
    return TRUE;
  }
  if (in_0_b(st, a, b)) {
    *out = a;
    return TRUE;
  }
  *out = make_atom2(st, SC_ATOM_MOD, a, b);
  return TRUE;
}

static sc_dim minmax_fresh(sc_symtab *st, sc_dim a, sc_dim b, gboolean is_max) {
  if (!a.poly && !b.poly)
    return sc_dim_const(is_max ? MAX(a.value, b.value) : MIN(a.value, b.value));
  if (sc_dim_identical(a, b))
    return a;
  /* order first, so that the same questions are asked whatever the order
   * of the arguments (the decisions are not symmetric in general) */
  if (sc_sym_dim_cmp(st, a, b) > 0) {
    sc_dim t = a;
    a = b;
    b = t;
  }
  gboolean saved = sc_sym_overflow;
  sc_sym_overflow = FALSE;
  sc_dim ba = sc_sym_raw_add(st, b, a, -1);
  sc_truth le = sc_sym_overflow ? SC_UNKNOWN : sc_sym_ge0(st, ba); /* a <= b ? */
  sc_truth ge = SC_UNKNOWN;
  if (le == SC_UNKNOWN) {
    sc_sym_overflow = FALSE;
    sc_dim ab = sc_sym_raw_add(st, a, b, -1);
    ge = sc_sym_overflow ? SC_UNKNOWN : sc_sym_ge0(st, ab); /* b <= a ? */
  }
  sc_sym_overflow = saved;
  if (le == SC_YES)
    return is_max ? b : a;
  if (le == SC_NO || ge == SC_YES)
    return is_max ? a : b;
  return make_atom2(st, is_max ? SC_ATOM_MAX : SC_ATOM_MIN, a, b);
}

/* ---- public arithmetic ---------------------------------------------- */

sc_dim sc_dim_add(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly && !b.poly)
    return sc_dim_const(sc_sym_add64(st, a.value, b.value));
  SC_SYM_LOCKED(st);
  return sc_sym_raw_add(st, sc_sym_refresh(st, a), sc_sym_refresh(st, b), 1);
}

sc_dim sc_dim_sub(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly && !b.poly)
    return sc_dim_const(sub64(st, a.value, b.value));
  SC_SYM_LOCKED(st);
  return sc_sym_raw_add(st, sc_sym_refresh(st, a), sc_sym_refresh(st, b), -1);
}

sc_dim sc_dim_mul(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly && !b.poly)
    return sc_dim_const(sc_sym_mul64(st, a.value, b.value));
  SC_SYM_LOCKED(st);
  return sc_sym_raw_mul(st, sc_sym_refresh(st, a), sc_sym_refresh(st, b));
}

sc_dim sc_dim_neg(sc_symtab *st, sc_dim a) {
  if (!a.poly)
    return sc_dim_const(sub64(st, 0, a.value));
  SC_SYM_LOCKED(st);
  return sc_sym_scale(st, sc_sym_refresh(st, a), -1);
}

gboolean sc_dim_floordiv(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out) {
  if (!a.poly && !b.poly) {
    if (b.value == 0)
      return FALSE;
    *out = sc_dim_const(sc_sym_py_floordiv(st, a.value, b.value));
    return TRUE;
  }
  SC_SYM_LOCKED(st);
  return fdiv_fresh(st, sc_sym_refresh(st, a), sc_sym_refresh(st, b), out);
}

gboolean sc_dim_mod(sc_symtab *st, sc_dim a, sc_dim b, sc_dim *out) {
  if (!a.poly && !b.poly) {
    if (b.value == 0)
      return FALSE;
    *out = sc_dim_const(sc_sym_py_mod(a.value, b.value));
    return TRUE;
  }
  SC_SYM_LOCKED(st);
  return mod_fresh(st, sc_sym_refresh(st, a), sc_sym_refresh(st, b), out);
}

sc_dim sc_dim_min(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly && !b.poly)
    return a.value <= b.value ? a : b;
  SC_SYM_LOCKED(st);
  gboolean saved = sc_sym_overflow;
  sc_dim r = minmax_fresh(st, sc_sym_refresh(st, a), sc_sym_refresh(st, b), FALSE);
  sc_sym_overflow = saved;
  return r;
}

sc_dim sc_dim_max(sc_symtab *st, sc_dim a, sc_dim b) {
  if (!a.poly && !b.poly)
    return a.value >= b.value ? a : b;
  SC_SYM_LOCKED(st);
  gboolean saved = sc_sym_overflow;
  sc_dim r = minmax_fresh(st, sc_sym_refresh(st, a), sc_sym_refresh(st, b), TRUE);
  sc_sym_overflow = saved;
  return r;
}

/* ---- symbol table ---------------------------------------------------- */

static void symbol_free(gpointer p) {
  sc_sym_symbol *s = p;
  g_free(s->name);
  g_free(s);
}

sc_symtab *sc_symtab_new(void) {
  sc_symtab *st = g_new0(sc_symtab, 1);
  g_rec_mutex_init(&st->lock);
  sc_sym_overflow = FALSE; /* a new symtab has not overflowed (the flag is the thread's) */
  st->symbols = g_ptr_array_new_with_free_func(symbol_free);
  st->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  st->atoms = g_ptr_array_new_with_free_func(g_free);
  st->atom_set = g_hash_table_new(atom_hash_fn, atom_equal_fn);
  st->monos = g_hash_table_new_full(mono_hash_fn, mono_equal_fn, g_free, NULL);
  st->polys = g_hash_table_new_full(poly_hash_fn, poly_equal_fn, g_free, NULL);
  st->unit = mono_intern(st, NULL, 0);
  st->ge_facts = g_array_new(FALSE, FALSE, sizeof(sc_dim));
  st->eq_facts = g_array_new(FALSE, FALSE, sizeof(sc_dim));
  st->ne_facts = g_array_new(FALSE, FALSE, sizeof(sc_dim));
  st->texts = g_ptr_array_new_with_free_func(g_free);
  st->subst_stack = g_array_new(FALSE, FALSE, sizeof(sc_sym_subst_frame));
  st->cycle_atom = G_MAXUINT32;
  return st;
}

void sc_symtab_free(sc_symtab *st) {
  if (!st)
    return;
  g_hash_table_destroy(st->atom_set);
  g_ptr_array_free(st->atoms, TRUE);
  g_hash_table_destroy(st->polys);
  g_hash_table_destroy(st->monos);
  g_hash_table_destroy(st->by_name);
  g_ptr_array_free(st->symbols, TRUE);
  g_array_free(st->ge_facts, TRUE);
  g_array_free(st->eq_facts, TRUE);
  g_array_free(st->ne_facts, TRUE);
  g_ptr_array_free(st->texts, TRUE);
  g_array_free(st->subst_stack, TRUE);
  sc_sym_oracle_clear(st);
  g_rec_mutex_clear(&st->lock);
  g_free(st);
}

static gboolean valid_name(const char *name) {
  if (!name || !(g_ascii_isalpha(name[0]) || name[0] == '_'))
    return FALSE;
  for (const char *p = name; *p; p++)
    if (!(g_ascii_isalnum(*p) || *p == '_' || *p == '.'))
      return FALSE;
  return name[strlen(name) - 1] != '.' && strcmp(name, "and") != 0;
}

gboolean sc_symtab_declare(sc_symtab *st, const char *name, gboolean has_min, int64_t min,
                           gboolean has_max, int64_t max, GError **error) {
  SC_SYM_LOCKED(st);
  g_return_val_if_fail(st != NULL, FALSE);
  if (!valid_name(name)) {
    g_set_error(error, SC_SYM_ERROR, SC_SYM_ERROR_INVALID,
                "invalid symbol name '%s': expected an identifier (letters, digits, "
                "'_', '.')", name ? name : "(null)");
    return FALSE;
  }
  if (g_hash_table_contains(st->by_name, name)) {
    g_set_error(error, SC_SYM_ERROR, SC_SYM_ERROR_DUPLICATE,
                "symbol '%s' declared twice", name);
    return FALSE;
  }
  if (!has_min)
    min = 0;
  if (has_max && max < min) {
    g_set_error(error, SC_SYM_ERROR, SC_SYM_ERROR_INVALID,
                "symbol '%s': max %" G_GINT64_FORMAT " is below min %" G_GINT64_FORMAT,
                name, max, min);
    return FALSE;
  }
  sc_sym_symbol *s = g_new0(sc_sym_symbol, 1);
  s->name = g_strdup(name);
  s->has_min = has_min;
  s->min = min;
  s->has_max = has_max;
  s->max = has_max ? max : 0;
  s->scale = 1;
  uint32_t index = st->symbols->len;
  g_ptr_array_add(st->symbols, s);
  g_hash_table_insert(st->by_name, s->name, GUINT_TO_POINTER(index + 1));
  sc_sym_atom key;
  memset(&key, 0, sizeof key);
  key.kind = SC_ATOM_SYM;
  key.sym = index;
  key.scale = 1;
  s->atom = sc_sym_atom_intern(st, &key);
  sc_sym_atom *a = g_ptr_array_index(st->atoms, s->atom);
  a->has_lo = TRUE;
  a->lo = min;
  a->has_hi = has_max;
  a->hi = has_max ? max : 0;
  return TRUE;
}

uint32_t sc_symtab_n_symbols(const sc_symtab *st) {
  SC_SYM_LOCKED(st);
  return st->symbols->len;
}

const char *sc_symtab_symbol_name(const sc_symtab *st, uint32_t index) {
  SC_SYM_LOCKED(st);
  g_return_val_if_fail(index < st->symbols->len, NULL);
  return sc_sym_symbol_get(st, index)->name;
}

gboolean sc_symtab_lookup(const sc_symtab *st, const char *name, uint32_t *index) {
  SC_SYM_LOCKED(st);
  gpointer v = g_hash_table_lookup(st->by_name, name);
  if (!v)
    return FALSE;
  if (index)
    *index = GPOINTER_TO_UINT(v) - 1;
  return TRUE;
}

void sc_symtab_symbol_bounds(const sc_symtab *st, uint32_t index, gboolean *has_min,
                             int64_t *min, gboolean *has_max, int64_t *max) {
  SC_SYM_LOCKED(st);
  g_return_if_fail(index < st->symbols->len);
  const sc_sym_symbol *s = sc_sym_symbol_get(st, index);
  if (has_min)
    *has_min = s->has_min;
  if (min)
    *min = s->min;
  if (has_max)
    *has_max = s->has_max;
  if (max)
    *max = s->max;
}

uint32_t sc_symtab_n_assumptions(const sc_symtab *st) {
  SC_SYM_LOCKED(st);
  return st->texts->len;
}

const char *sc_symtab_assumption_text(const sc_symtab *st, uint32_t index) {
  SC_SYM_LOCKED(st);
  g_return_val_if_fail(index < st->texts->len, NULL);
  return g_ptr_array_index(st->texts, index);
}

_Thread_local gboolean sc_sym_overflow;

gboolean sc_symtab_overflowed(const sc_symtab *st) {
  (void)st;
  return sc_sym_overflow;
}

void sc_symtab_clear_overflow(sc_symtab *st) {
  (void)st;
  sc_sym_overflow = FALSE;
}

gboolean sc_symtab_too_large(const sc_symtab *st) {
  SC_SYM_LOCKED(st);
  return st->too_large;
}

void sc_symtab_clear_too_large(sc_symtab *st) {
  SC_SYM_LOCKED(st);
  st->too_large = FALSE;
}

uint32_t sc_symtab_max_size(void) {
  return SC_SYM_MAX_SIZE;
}

gboolean sc_dim_symbol(sc_symtab *st, const char *name, sc_dim *out, GError **error) {
  SC_SYM_LOCKED(st);
  uint32_t i;
  if (!sc_symtab_lookup(st, name, &i)) {
    g_set_error(error, SC_SYM_ERROR, SC_SYM_ERROR_UNDEFINED, "undefined symbol '%s'", name);
    return FALSE;
  }
  const sc_sym_symbol *s = sc_sym_symbol_get(st, i);
  *out = sc_sym_scale(st, sc_sym_atom_dim(st, s->atom), s->scale);
  return TRUE;
}

/* ---- evaluation ------------------------------------------------------ */

static gboolean eval_dim(const sc_symtab *st, sc_dim d, const int64_t *v, int64_t *out);

static gboolean eval_atom(const sc_symtab *st, uint32_t id, const int64_t *v, int64_t *out) {
  const sc_sym_atom *a = sc_sym_atom_get(st, id);
  int64_t x, y;
  switch (a->kind) {
  case SC_ATOM_SYM:
    x = v[a->sym];
    if (a->scale == 1) {
      *out = x;
    } else {
      *out = x / a->scale;
      if ((x % a->scale != 0) && ((x < 0) != (a->scale < 0)))
        (*out)--;
    }
    return TRUE;
  case SC_ATOM_FLOORDIV:
  case SC_ATOM_MOD:
    if (!eval_dim(st, a->a, v, &x) || !eval_dim(st, a->b, v, &y) || y == 0)
      return FALSE;
    if (a->kind == SC_ATOM_MOD) {
      *out = sc_sym_py_mod(x, y);
    } else {
      if (y == -1 && x == INT64_MIN)
        return FALSE;
      *out = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0)))
        (*out)--;
    }
    return TRUE;
  case SC_ATOM_MIN:
  case SC_ATOM_MAX:
    if (!eval_dim(st, a->a, v, &x) || !eval_dim(st, a->b, v, &y))
      return FALSE;
    *out = (a->kind == SC_ATOM_MIN) == (x <= y) ? x : y;
    return TRUE;
  }
  return FALSE;
}

static gboolean eval_dim(const sc_symtab *st, sc_dim d, const int64_t *v, int64_t *out) {
  if (!d.poly) {
    *out = d.value;
    return TRUE;
  }
  int64_t acc = 0;
  for (uint32_t i = 0; i < d.poly->n; i++) {
    const sc_sym_term *t = &d.poly->t[i];
    int64_t m = t->c;
    for (uint32_t j = 0; j < t->m->n; j++) {
      int64_t x;
      if (!eval_atom(st, t->m->f[j].atom, v, &x))
        return FALSE;
      for (uint32_t e = 0; e < t->m->f[j].exp && m != 0; e++) {
        if (__builtin_mul_overflow(m, x, &m))
          return FALSE;
        if (x == 1)
          break;
        if (x == -1) {
          if ((t->m->f[j].exp - e - 1) % 2 == 1 && __builtin_mul_overflow(m, x, &m))
            return FALSE;
          break;
        }
      }
    }
    if (__builtin_add_overflow(acc, m, &acc))
      return FALSE;
  }
  *out = acc;
  return TRUE;
}

gboolean sc_dim_eval(const sc_symtab *st, sc_dim d, const int64_t *symbol_values, int64_t *out) {
  if (!d.poly) {
    *out = d.value;
    return TRUE;
  }
  SC_SYM_LOCKED(st);
  g_return_val_if_fail(symbol_values != NULL, FALSE);
  return eval_dim(st, d, symbol_values, out);
}
