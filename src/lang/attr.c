/* attr.c — interned attribute records of the tensor language.
 *
 * A record is (operator, result index, the op's bound arguments with the
 * tensor-valued ones reduced to the child layout).  Records live in a
 * GPtrArray indexed by id (dense from 0, never freed before the language)
 * and in a hash table keyed by the record itself (sc_value_hash /
 * sc_value_equal over the arguments; symbolic sizes are interned in the
 * symtab, so identity is equality).
 *
 * Invariants: attrs->len == number of distinct records; for every record
 * r with id i, attr_index[r] == i + 1; tensor values of a record number
 * the children 0..n_children-1 in argument order. */
#include "lang/lang-private.h"

#include <string.h>

static gboolean is_tensor_arg(const sc_arg *a) {
  return a->type == SC_ARG_TENSOR || a->type == SC_ARG_TENSOR_LIST ||
         a->type == SC_ARG_TENSOR_OPT_LIST;
}

void sc_lang_clear_args(const sc_op *op, sc_value *args) {
  for (uint32_t i = 0; i < op->n_args; i++)
    sc_value_clear(&args[i]);
}

static void rec_free(gpointer p) {
  sc_lang_attr_rec *r = p;
  sc_lang_clear_args(r->op, r->args);
  g_free(r->args);
  g_free(r);
}

static guint rec_hash(gconstpointer p) {
  return ((const sc_lang_attr_rec *)p)->hash;
}

static gboolean rec_equal(gconstpointer pa, gconstpointer pb) {
  const sc_lang_attr_rec *a = pa, *b = pb;
  if (a->op != b->op || a->result != b->result || a->n_children != b->n_children)
    return FALSE;
  for (uint32_t i = 0; i < a->op->n_args; i++)
    if (!sc_value_equal(&a->args[i], &b->args[i]))
      return FALSE;
  return TRUE;
}

static guint compute_hash(const sc_op *op, const sc_value *args, uint32_t result) {
  guint h = op->id * 0x9e3779b1u + result * 0x85ebca77u + 0x165667b1u;
  for (uint32_t i = 0; i < op->n_args; i++)
    h = (h ^ sc_value_hash(&args[i])) * 0x01000193u + i;
  return h;
}

void sc_lang_attrs_init(sc_lang *lang) {
  lang->attrs = g_ptr_array_new_with_free_func(rec_free);
  lang->attr_index = g_hash_table_new(rec_hash, rec_equal);
}

void sc_lang_attrs_free(sc_lang *lang) {
  g_hash_table_destroy(lang->attr_index);
  g_ptr_array_free(lang->attrs, TRUE);
}

const sc_lang_attr_rec *sc_lang_attr_rec_get(const sc_lang *lang, uint32_t attr) {
  if (attr >= lang->attrs->len)
    return NULL;
  return g_ptr_array_index(lang->attrs, attr);
}

/* Set *err (if not set) to an INVALID error naming the argument. */
static gboolean bad_arg(GError **error, const sc_op *op, uint32_t i, const char *what) {
  g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_INVALID, "%s: argument '%s' %s", op->qualname,
              op->args[i].name, what);
  return FALSE;
}

gboolean sc_lang_layout_args(const sc_op *op, const sc_value *args, const sc_id *children,
                             uint32_t n_children, sc_value *out_args, GArray *out_kids,
                             GError **error) {
  for (uint32_t i = 0; i < op->n_args; i++)
    out_args[i] = sc_value_none();
  guint base = out_kids->len;
  for (uint32_t i = 0; i < op->n_args; i++) {
    const sc_arg *a = &op->args[i];
    const sc_value *v = &args[i];
    if (!is_tensor_arg(a)) {
      if (v->kind == SC_VAL_TENSOR || v->kind == SC_VAL_TENSOR_LIST || v->kind == SC_VAL_LIST)
        goto fail_kind;
      sc_value_copy(&out_args[i], v);
      continue;
    }
    if (v->kind == SC_VAL_NONE) {
      if (!a->optional)
        goto fail_kind;
      continue;
    }
    if (a->type == SC_ARG_TENSOR) {
      if (v->kind != SC_VAL_TENSOR)
        goto fail_kind;
      if (children != NULL && v->u.tensor >= n_children) {
        bad_arg(error, op, i, "names a child index out of range");
        goto fail;
      }
      sc_id k = children != NULL ? children[v->u.tensor] : v->u.tensor;
      out_args[i] = sc_value_tensor((sc_id)(out_kids->len - base));
      g_array_append_val(out_kids, k);
      continue;
    }
    if (v->kind != SC_VAL_TENSOR_LIST)
      goto fail_kind;
    sc_value o;
    o.kind = SC_VAL_TENSOR_LIST;
    o.u.list.n = v->u.list.n;
    o.u.list.ids = g_new(sc_id, v->u.list.n ? v->u.list.n : 1);
    for (uint32_t k = 0; k < v->u.list.n; k++) {
      sc_id id = v->u.list.ids[k];
      if (id == SC_ID_NONE) {
        if (a->type != SC_ARG_TENSOR_OPT_LIST) {
          g_free(o.u.list.ids);
          bad_arg(error, op, i, "holds None where a tensor is required");
          goto fail;
        }
        o.u.list.ids[k] = SC_ID_NONE;
        continue;
      }
      if (children != NULL && id >= n_children) {
        g_free(o.u.list.ids);
        bad_arg(error, op, i, "names a child index out of range");
        goto fail;
      }
      sc_id kid = children != NULL ? children[id] : id;
      o.u.list.ids[k] = (sc_id)(out_kids->len - base);
      g_array_append_val(out_kids, kid);
    }
    out_args[i] = o;
    continue;
  fail_kind:
    g_set_error(error, SC_LANG_ERROR, SC_LANG_ERROR_INVALID,
                "%s: argument '%s' holds a %s value, which does not fit its schema type",
                op->qualname, a->name, sc_value_kind_name(v->kind));
    goto fail;
  }
  return TRUE;
fail:
  sc_lang_clear_args(op, out_args);
  g_array_set_size(out_kids, base);
  return FALSE;
}

/* The record that finds (OP, ARGS, N_CHILDREN, RESULT) in attr_index; it
 * borrows ARGS. */
static sc_lang_attr_rec layout_probe(const sc_op *op, const sc_value *args, uint32_t n_children,
                                     uint32_t result) {
  sc_lang_attr_rec probe;
  probe.op = op;
  probe.result = result;
  probe.n_children = n_children;
  probe.args = (sc_value *)args;
  probe.hash = compute_hash(op, args, result);
  return probe;
}

uint32_t sc_lang_lookup_layout(const sc_lang *lang, const sc_op *op, const sc_value *args,
                               uint32_t n_children, uint32_t result) {
  sc_lang_attr_rec probe = layout_probe(op, args, n_children, result);
  gpointer found = g_hash_table_lookup(lang->attr_index, &probe);
  return found != NULL ? GPOINTER_TO_UINT(found) - 1 : UINT32_MAX;
}

uint32_t sc_lang_intern_layout(sc_lang *lang, const sc_op *op, const sc_value *args,
                               uint32_t n_children, uint32_t result) {
  sc_lang_attr_rec probe = layout_probe(op, args, n_children, result);
  gpointer found = g_hash_table_lookup(lang->attr_index, &probe);
  if (found != NULL)
    return GPOINTER_TO_UINT(found) - 1;
  g_assert(lang->attrs->len < UINT32_MAX - 1);
  sc_lang_attr_rec *r = g_new0(sc_lang_attr_rec, 1);
  r->op = op;
  r->result = result;
  r->n_children = n_children;
  r->hash = probe.hash;
  r->args = g_new0(sc_value, op->n_args ? op->n_args : 1);
  for (uint32_t i = 0; i < op->n_args; i++)
    sc_value_copy(&r->args[i], &args[i]);
  uint32_t id = lang->attrs->len;
  g_ptr_array_add(lang->attrs, r);
  g_hash_table_insert(lang->attr_index, r, GUINT_TO_POINTER(id + 1));
  return id;
}

uint32_t sc_lang_intern_attr(sc_lang *lang, const sc_op *op, const sc_value *args,
                             uint32_t result) {
  g_return_val_if_fail(lang != NULL && op != NULL, SC_ID_NONE);
  g_return_val_if_fail(op->n_args == 0 || args != NULL, SC_ID_NONE);
  g_autofree sc_value *lay = g_new0(sc_value, op->n_args ? op->n_args : 1);
  g_autoptr(GArray) kids = g_array_new(FALSE, FALSE, sizeof(sc_id));
  g_autoptr(GError) err = NULL;
  if (!sc_lang_layout_args(op, args, NULL, 0, lay, kids, &err)) {
    g_critical("sc_lang_intern_attr: %s", err->message);
    return SC_ID_NONE;
  }
  uint32_t id = sc_lang_intern_layout(lang, op, lay, kids->len, result);
  sc_lang_clear_args(op, lay);
  return id;
}

const sc_op *sc_lang_attr_op(const sc_lang *lang, uint32_t attr) {
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, attr);
  g_return_val_if_fail(r != NULL, NULL);
  return r->op;
}

const sc_value *sc_lang_attr_args(const sc_lang *lang, uint32_t attr) {
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, attr);
  g_return_val_if_fail(r != NULL, NULL);
  return r->args;
}

const sc_value *sc_lang_attr_read(const sc_lang *lang, uint32_t attr, const sc_op **op,
                                  uint32_t *result) {
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, attr);
  *op = NULL;
  g_return_val_if_fail(r != NULL, NULL);
  *op = r->op;
  *result = r->result;
  return r->args;
}

uint32_t sc_lang_attr_result(const sc_lang *lang, uint32_t attr) {
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, attr);
  g_return_val_if_fail(r != NULL, 0);
  return r->result;
}

uint32_t sc_lang_attr_n_children(const sc_lang *lang, uint32_t attr) {
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, attr);
  g_return_val_if_fail(r != NULL, 0);
  return r->n_children;
}

const sc_value *sc_lang_attr_get(const sc_lang *lang, uint32_t attr, const char *name) {
  const sc_lang_attr_rec *r = sc_lang_attr_rec_get(lang, attr);
  g_return_val_if_fail(r != NULL && name != NULL, NULL);
  int32_t i = sc_ops_arg_index(r->op, name);
  return i < 0 ? NULL : &r->args[i];
}

uint32_t sc_lang_n_attrs(const sc_lang *lang) {
  return lang->attrs->len;
}
