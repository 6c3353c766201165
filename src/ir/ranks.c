/* ranks.c — stitching per-rank implementation graphs (ranks-private.h).
 *
 * Invariants:
 * - a rank graph's node ids are its file indices, so scanning ids in order
 *   is scanning the program in the order it ran;
 * - every collective call of every rank is recorded once, in the call list
 *   of (its group, its rank's position in the group); the j-th entries of
 *   a group's lists form call #j (counted from 0);
 * - the stitched graph is built in two passes (declare every node, then
 *   set every node's arguments), because a comm.* node declared where its
 *   lowest member rank calls it reads tensors of higher ranks declared
 *   later; tensor ids are translated through one array per rank (rank
 *   tensor id -> stitched tensor id), so the whole build is linear in the
 *   size of the graphs (no lookups across ranks by name). */
#include "ranks-private.h"

#include <stdarg.h>
#include <string.h>

G_DEFINE_QUARK(sc-ranks-error-quark, sc_ranks_error)

/* ---- groups ---- */

typedef struct {
  uint32_t n;
  uint32_t *members; /* ascending */
} group_def;

struct sc_ranks_groups {
  uint32_t n_ranks;
  GHashTable *by_name; /* name (owned) -> group_def * (owned) */
  uint32_t *all;       /* 0 .. n_ranks-1 */
};

static void group_def_free(gpointer p) {
  group_def *d = p;
  g_free(d->members);
  g_free(d);
}

sc_ranks_groups *sc_ranks_groups_new(uint32_t n_ranks) {
  sc_ranks_groups *gs = g_new0(sc_ranks_groups, 1);
  gs->n_ranks = n_ranks;
  gs->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, group_def_free);
  gs->all = g_new(uint32_t, n_ranks ? n_ranks : 1);
  for (uint32_t i = 0; i < n_ranks; i++)
    gs->all[i] = i;
  return gs;
}

void sc_ranks_groups_free(sc_ranks_groups *gs) {
  if (gs == NULL)
    return;
  g_hash_table_destroy(gs->by_name);
  g_free(gs->all);
  g_free(gs);
}

uint32_t sc_ranks_groups_n_ranks(const sc_ranks_groups *gs) { return gs->n_ranks; }

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

gboolean sc_ranks_groups_add(sc_ranks_groups *gs, const char *name, const int64_t *members,
                             uint32_t n, GError **error) {
  if (n == 0) {
    g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_GROUP, "group '%s' has no member", name);
    return FALSE;
  }
  g_autofree uint32_t *m = g_new(uint32_t, n);
  for (uint32_t i = 0; i < n; i++) {
    if (members[i] < 0 || (uint64_t)members[i] >= gs->n_ranks) {
      g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_GROUP,
                  "rank %" G_GINT64_FORMAT " of group '%s' does not exist (there %s %u rank%s)",
                  (gint64)members[i], name, gs->n_ranks == 1 ? "is" : "are", gs->n_ranks,
                  gs->n_ranks == 1 ? "" : "s");
      return FALSE;
    }
    m[i] = (uint32_t)members[i];
  }
  qsort(m, n, sizeof *m, cmp_u32);
  for (uint32_t i = 1; i < n; i++)
    if (m[i] == m[i - 1]) {
      g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_GROUP,
                  "rank %u is listed twice in group '%s'", m[i], name);
      return FALSE;
    }
  group_def *d = g_new0(group_def, 1);
  d->n = n;
  d->members = g_steal_pointer(&m);
  g_hash_table_replace(gs->by_name, g_strdup(name), d);
  return TRUE;
}

const uint32_t *sc_ranks_groups_members(const sc_ranks_groups *gs, const char *name,
                                        uint32_t *n) {
  const group_def *d = g_hash_table_lookup(gs->by_name, name);
  if (d == NULL) {
    *n = gs->n_ranks;
    return gs->all;
  }
  *n = d->n;
  return d->members;
}

/* "0, 1, 3" */
static char *members_text(const uint32_t *m, uint32_t n) {
  GString *s = g_string_new(NULL);
  for (uint32_t i = 0; i < n; i++)
    g_string_append_printf(s, "%s%u", i ? ", " : "", m[i]);
  return g_string_free(s, FALSE);
}

/* Position of RANK in the group, or -1. */
static int32_t member_pos(const uint32_t *m, uint32_t n, uint32_t rank) {
  for (uint32_t i = 0; i < n; i++)
    if (m[i] == rank)
      return (int32_t)i;
  return -1;
}

/* ---- collective calls ---- */

typedef enum { K_ALL_REDUCE, K_ALL_GATHER, K_REDUCE_SCATTER, K_ALL_TO_ALL, K_BROADCAST, K_NONE } kind;

static const char *const kind_names[] = {"all_reduce", "all_gather_into_tensor",
                                         "reduce_scatter_tensor", "all_to_all_single",
                                         "broadcast"};

static kind op_kind(const sc_op *op) {
  if (op == NULL || strcmp(op->ns, "_c10d_functional") != 0)
    return K_NONE;
  for (int k = 0; k < K_NONE; k++)
    if (strcmp(op->name, kind_names[k]) == 0)
      return (kind)k;
  return K_NONE;
}

gboolean sc_ranks_is_collective(const sc_op *op) { return op_kind(op) != K_NONE; }

typedef struct {
  sc_id node;            /* in its rank's graph */
  kind k;
  const char *group;     /* borrowed from the node's arguments */
  const char *reduce_op; /* all_reduce, reduce_scatter; else NULL */
  int64_t src;           /* broadcast: global rank */
  sc_id input;           /* the tensor sent */
} call;

static const sc_value *arg_of(const sc_node *n, const char *name) {
  int32_t i = sc_ops_arg_index(n->op, name);
  return i < 0 ? NULL : &n->args[i];
}

G_GNUC_PRINTF(5, 6)
static gboolean fail_at(sc_ranks_loc *loc, int32_t rank, sc_id node, GError **error,
                        const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  /* The code is given by the callers through the message's kind; most
   * errors here are about one call. */
  loc->rank = rank;
  loc->node = node;
  g_set_error_literal(error, SC_RANKS_ERROR, SC_RANKS_ERROR_CALL, msg);
  return FALSE;
}

static gboolean set_code(GError **error, sc_ranks_error code) {
  if (error != NULL && *error != NULL)
    (*error)->code = (gint)code;
  return FALSE;
}

/* An equal split of a group of N: None, [], or N identical sizes. */
static gboolean check_splits(const sc_graph *g, const sc_node *n, const char *argname,
                             const char *group, uint32_t n_members, uint32_t rank,
                             sc_ranks_loc *loc, GError **error) {
  const sc_value *v = arg_of(n, argname);
  if (v == NULL || v->kind != SC_VAL_INT_LIST || v->u.ints.n == 0)
    return TRUE;
  sc_symtab *st = sc_graph_symtab(g);
  sc_id node = sc_graph_find_node(g, n->name);
  g_autofree char *text = sc_value_to_string(v, st, NULL, NULL);
  if (v->u.ints.n != n_members)
    return fail_at(loc, (int32_t)rank, node, error,
                   "all_to_all_single on group '%s' has %u %s %s but the group has %u "
                   "member%s",
                   group, v->u.ints.n, argname, text, n_members, n_members == 1 ? "" : "s");
  for (uint32_t i = 1; i < v->u.ints.n; i++)
    if (sc_dim_eq(st, v->u.ints.v[i], v->u.ints.v[0]) != SC_YES)
      return fail_at(loc, (int32_t)rank, node, error,
                     "all_to_all_single on group '%s' with unequal %s %s is not supported yet "
                     "(only equal splits stitch into comm.all_to_all)",
                     group, argname, text);
  return TRUE;
}

/* Read and check call NODE of rank RANK's graph G. */
static gboolean read_call(const sc_graph *g, uint32_t rank, sc_id node, const sc_ranks_groups *gs,
                          call *c, sc_ranks_loc *loc, GError **error) {
  const sc_node *n = sc_graph_node(g, node);
  memset(c, 0, sizeof *c);
  c->node = node;
  c->k = op_kind(n->op);
  c->src = -1;
  const sc_value *gv = arg_of(n, "group_name");
  const sc_value *in = arg_of(n, "input");
  if (gv == NULL || gv->kind != SC_VAL_STR || in == NULL || in->kind != SC_VAL_TENSOR)
    return fail_at(loc, (int32_t)rank, node, error, "%s needs an input tensor and a group name",
                   n->op->qualname);
  c->group = gv->u.s;
  c->input = in->u.tensor;
  uint32_t nm;
  const uint32_t *m = sc_ranks_groups_members(gs, c->group, &nm);
  const char *what = kind_names[c->k];
  if (member_pos(m, nm, rank) < 0) {
    g_autofree char *ms = members_text(m, nm);
    fail_at(loc, (int32_t)rank, node, error,
            "%s on group '%s', but rank %u is not a member of that group (ranks %s)", what,
            c->group, rank, ms);
    return set_code(error, SC_RANKS_ERROR_GROUP);
  }
  const sc_value *rv = arg_of(n, "reduce_op");
  if (rv != NULL && rv->kind == SC_VAL_STR)
    c->reduce_op = rv->u.s;
  if (c->k == K_ALL_GATHER || c->k == K_REDUCE_SCATTER) {
    const sc_value *sv = arg_of(n, "group_size");
    if (sv == NULL || sv->kind != SC_VAL_INT)
      return fail_at(loc, (int32_t)rank, node, error, "%s needs a group_size", what);
    if (!sc_dim_is_const(sv->u.i) || sv->u.i.value != (int64_t)nm) {
      g_autofree char *s = sc_dim_to_string(sc_graph_symtab(g), sv->u.i);
      g_autofree char *ms = members_text(m, nm);
      return fail_at(loc, (int32_t)rank, node, error,
                     "%s on group '%s' has group_size %s but the group has %u member%s "
                     "(ranks %s)",
                     what, c->group, s, nm, nm == 1 ? "" : "s", ms);
    }
  }
  if (c->k == K_BROADCAST) {
    const sc_value *sv = arg_of(n, "src");
    if (sv == NULL || sv->kind != SC_VAL_INT)
      return fail_at(loc, (int32_t)rank, node, error, "broadcast needs a src rank");
    if (!sc_dim_is_const(sv->u.i))
      return fail_at(loc, (int32_t)rank, node, error,
                     "broadcast on group '%s' needs a concrete src rank", c->group);
    c->src = sv->u.i.value;
    if (c->src < 0 || c->src > UINT32_MAX || member_pos(m, nm, (uint32_t)c->src) < 0) {
      g_autofree char *ms = members_text(m, nm);
      return fail_at(loc, (int32_t)rank, node, error,
                     "broadcast on group '%s' from src %" G_GINT64_FORMAT
                     ", which is not a member of the group (ranks %s; src is a global rank)",
                     c->group, (gint64)c->src, ms);
    }
  }
  if (c->k == K_ALL_TO_ALL &&
      (!check_splits(g, n, "input_split_sizes", c->group, nm, rank, loc, error) ||
       !check_splits(g, n, "output_split_sizes", c->group, nm, rank, loc, error)))
    return FALSE;
  return TRUE;
}

typedef enum { P2P_NONE, P2P_SEND, P2P_RECV } p2p_kind;

static p2p_kind p2p_of(const sc_op *op) {
  if (op == NULL || strcmp(op->ns, "comm") != 0)
    return P2P_NONE;
  if (strcmp(op->name, "send") == 0)
    return P2P_SEND;
  if (strcmp(op->name, "recv") == 0)
    return P2P_RECV;
  return P2P_NONE;
}

gboolean sc_ranks_check_calls(const sc_graph *g, uint32_t rank, const sc_ranks_groups *gs,
                              sc_ranks_loc *loc, GError **error) {
  loc->rank = -1;
  loc->node = SC_ID_NONE;
  for (sc_id i = 0; i < sc_graph_n_nodes(g); i++) {
    const sc_op *op = sc_graph_node(g, i)->op;
    if (p2p_of(op) != P2P_NONE)
      return fail_at(loc, (int32_t)rank, i, error,
                     "%s in a graph of one rank: point-to-point moves pair across the ranks "
                     "of a per-rank implementation",
                     op->qualname);
    if (!sc_ranks_is_collective(op))
      continue;
    call c;
    if (!read_call(g, rank, i, gs, &c, loc, error))
      return FALSE;
  }
  return TRUE;
}

static char *type_text(const sc_ttype *t);

/* ---- point-to-point moves ---- */

/* One direction and tag: the sends of rank a to rank b with tag t and the
 * recvs of rank b from rank a with tag t, each in program order. */
typedef struct {
  uint32_t a, b;
  int64_t tag;
  GArray *sends; /* sc_id, nodes of rank a */
  GArray *recvs; /* sc_id, nodes of rank b */
} p2p_chan;

static void p2p_chan_free(gpointer p) {
  p2p_chan *c = p;
  g_array_free(c->sends, TRUE);
  g_array_free(c->recvs, TRUE);
  g_free(c);
}

/* One matched pair: send #j and recv #j of channel CHAN. */
typedef struct {
  const p2p_chan *chan;
  uint32_t j;
  sc_id send, recv;
} p2p_pair;

/* The peer (dst of a send, src of a recv) and tag of node I of rank R's
 * graph G, checked: a concrete rank of the run other than R. */
static gboolean read_p2p(const sc_graph *g, uint32_t rank, uint32_t n_ranks, sc_id i,
                         uint32_t *peer, int64_t *tag, sc_ranks_loc *loc, GError **error) {
  const sc_node *n = sc_graph_node(g, i);
  gboolean send = p2p_of(n->op) == P2P_SEND;
  const char *pname = send ? "dst" : "src";
  const sc_value *pv = arg_of(n, pname);
  const sc_value *tv = arg_of(n, "tag");
  if (pv == NULL || pv->kind != SC_VAL_INT || !sc_dim_is_const(pv->u.i) || tv == NULL ||
      tv->kind != SC_VAL_INT || !sc_dim_is_const(tv->u.i))
    return fail_at(loc, (int32_t)rank, i, error, "%s needs a concrete %s rank and tag",
                   n->op->qualname, pname);
  int64_t p = pv->u.i.value;
  if (p < 0 || p >= (int64_t)n_ranks)
    return fail_at(loc, (int32_t)rank, i, error,
                   "%s on rank %u %s rank %" G_GINT64_FORMAT ", which does not exist (there %s "
                   "%u rank%s)",
                   n->op->qualname, rank, send ? "sends to" : "receives from", (gint64)p,
                   n_ranks == 1 ? "is" : "are", n_ranks, n_ranks == 1 ? "" : "s");
  if (p == (int64_t)rank)
    return fail_at(loc, (int32_t)rank, i, error, "%s on rank %u %s itself", n->op->qualname,
                   rank, send ? "sends to" : "receives from");
  *peer = (uint32_t)p;
  *tag = tv->u.i.value;
  return TRUE;
}

/* Pair the sends and recvs of every channel, in first-seen order, into
 * PAIRS; mark each pair's recv node (recv_pair[b][node] = pair index + 1)
 * and send node (is_send[a][node]). */
static gboolean match_p2p(sc_graph *const *ranks, GPtrArray *chans, GArray *pairs,
                          uint32_t **recv_pair, sc_ranks_loc *loc, GError **error) {
  for (guint c = 0; c < chans->len; c++) {
    const p2p_chan *ch = g_ptr_array_index(chans, c);
    guint ns = ch->sends->len, nr = ch->recvs->len;
    if (ns != nr) {
      gboolean extra_send = ns > nr;
      uint32_t j = extra_send ? nr : ns;
      sc_id node = extra_send ? g_array_index(ch->sends, sc_id, j) : g_array_index(ch->recvs, sc_id, j);
      fail_at(loc, (int32_t)(extra_send ? ch->a : ch->b), node, error,
              "%s #%u from rank %u to rank %u with tag %" G_GINT64_FORMAT " has no matching %s: "
              "rank %u makes only %u %s %s rank %u with that tag (the program would hang)",
              extra_send ? "send" : "recv", j, ch->a, ch->b, (gint64)ch->tag,
              extra_send ? "recv" : "send", extra_send ? ch->b : ch->a, extra_send ? nr : ns,
              extra_send ? "recv" : "send", extra_send ? "from" : "to",
              extra_send ? ch->a : ch->b);
      return set_code(error, SC_RANKS_ERROR_MISMATCH);
    }
    for (uint32_t j = 0; j < ns; j++) {
      p2p_pair pr = {ch, j, g_array_index(ch->sends, sc_id, j), g_array_index(ch->recvs, sc_id, j)};
      const sc_node *sn = sc_graph_node(ranks[ch->a], pr.send);
      const sc_node *rn = sc_graph_node(ranks[ch->b], pr.recv);
      const sc_value *xv = arg_of(sn, "x");
      const sc_ttype *ts = &sc_graph_tensor(ranks[ch->a], xv->u.tensor)->type;
      const sc_ttype *tr = &sc_graph_tensor(ranks[ch->b], rn->results[0])->type;
      sc_truth same = sc_shape_same(sc_graph_symtab(ranks[ch->b]), &ts->shape, &tr->shape);
      if (ts->dtype != tr->dtype || same != SC_YES) {
        g_autofree char *a = type_text(ts);
        g_autofree char *b = type_text(tr);
        fail_at(loc, (int32_t)ch->b, pr.recv, error,
                "send #%u from rank %u to rank %u with tag %" G_GINT64_FORMAT " sends %s but "
                "rank %u's recv #%u receives %s%s",
                j, ch->a, ch->b, (gint64)ch->tag, a, ch->b, j, b,
                same == SC_UNKNOWN && ts->dtype == tr->dtype ? " (the sizes cannot be proved equal)"
                                                            : "");
        return set_code(error, SC_RANKS_ERROR_MISMATCH);
      }
      g_array_append_val(pairs, pr);
      recv_pair[ch->b][pr.recv] = pairs->len;
    }
  }
  return TRUE;
}

/* ---- matching ---- */

/* The calls on one group: one list per member position. */
typedef struct {
  const char *name;       /* borrowed from a node argument */
  uint32_t n;             /* members */
  const uint32_t *members;
  GArray **calls;         /* [n] GArray of call */
  sc_id *merged;          /* [n_calls] stitched node of call #j (after matching) */
  uint32_t n_calls;
} group_calls;

static void group_calls_free(gpointer p) {
  group_calls *gc = p;
  for (uint32_t i = 0; i < gc->n; i++)
    g_array_free(gc->calls[i], TRUE);
  g_free(gc->calls);
  g_free(gc->merged);
  g_free(gc);
}

static char *type_text(const sc_ttype *t) {
  g_autofree char *s = sc_shape_to_string(&t->shape);
  return g_strdup_printf("%s %s", sc_dtype_name(t->dtype), s);
}

/* Compare call #J of member position P with that of position 0. */
static gboolean match_call(sc_graph *const *ranks, const group_calls *gc, uint32_t j, uint32_t p,
                           sc_ranks_loc *loc, GError **error) {
  uint32_t r0 = gc->members[0], rp = gc->members[p];
  const call *a = &g_array_index(gc->calls[0], call, j);
  const call *b = &g_array_index(gc->calls[p], call, j);
  const char *wa = kind_names[a->k], *wb = kind_names[b->k];
  if (a->k != b->k)
    return fail_at(loc, (int32_t)rp, b->node, error,
                   "collective #%u on group '%s' is %s but rank %u's is %s", j, gc->name, wb,
                   r0, wa);
  if ((a->reduce_op != NULL || b->reduce_op != NULL) &&
      (a->reduce_op == NULL || b->reduce_op == NULL || strcmp(a->reduce_op, b->reduce_op) != 0))
    return fail_at(loc, (int32_t)rp, b->node, error,
                   "collective #%u on group '%s' (%s) reduces with '%s' but rank %u's with '%s'",
                   j, gc->name, wb, b->reduce_op ? b->reduce_op : "?", r0,
                   a->reduce_op ? a->reduce_op : "?");
  if (a->src != b->src)
    return fail_at(loc, (int32_t)rp, b->node, error,
                   "collective #%u on group '%s' (broadcast) sends from rank %" G_GINT64_FORMAT
                   " but rank %u's from rank %" G_GINT64_FORMAT,
                   j, gc->name, (gint64)b->src, r0, (gint64)a->src);
  const sc_ttype *ta = &sc_graph_tensor(ranks[r0], a->input)->type;
  const sc_ttype *tb = &sc_graph_tensor(ranks[rp], b->input)->type;
  sc_truth same = sc_shape_same(sc_graph_symtab(ranks[rp]), &ta->shape, &tb->shape);
  if (ta->dtype != tb->dtype || same != SC_YES) {
    g_autofree char *sa = type_text(ta);
    g_autofree char *sb = type_text(tb);
    return fail_at(loc, (int32_t)rp, b->node, error,
                   "collective #%u on group '%s' (%s) sends %s but rank %u's sends %s%s", j,
                   gc->name, wb, sb, r0, sa,
                   same == SC_UNKNOWN && ta->dtype == tb->dtype
                       ? " (the sizes cannot be proved equal)"
                       : "");
  }
  return TRUE;
}

static gboolean match_group(sc_graph *const *ranks, group_calls *gc, sc_ranks_loc *loc,
                            GError **error) {
  uint32_t most = 0;
  for (uint32_t p = 0; p < gc->n; p++)
    most = MAX(most, gc->calls[p]->len);
  for (uint32_t j = 0; j < most; j++) {
    /* A member that stopped calling: point at the first member that did call. */
    for (uint32_t p = 0; p < gc->n; p++) {
      if (j < gc->calls[p]->len)
        continue;
      for (uint32_t q = 0; q < gc->n; q++)
        if (j < gc->calls[q]->len) {
          const call *c = &g_array_index(gc->calls[q], call, j);
          fail_at(loc, (int32_t)gc->members[q], c->node, error,
                  "collective #%u on group '%s' (%s) has no partner on rank %u, which "
                  "makes only %u collective call%s on that group (the program would hang)",
                  j, gc->name, kind_names[c->k], gc->members[p], gc->calls[p]->len,
                  gc->calls[p]->len == 1 ? "" : "s");
          return set_code(error, SC_RANKS_ERROR_MISMATCH);
        }
    }
    for (uint32_t p = 1; p < gc->n; p++)
      if (!match_call(ranks, gc, j, p, loc, error))
        return set_code(error, SC_RANKS_ERROR_MISMATCH);
  }
  gc->n_calls = most;
  gc->merged = g_new(sc_id, most ? most : 1);
  for (uint32_t j = 0; j < most; j++)
    gc->merged[j] = SC_ID_NONE;
  return TRUE;
}

/* ---- the stitched graph ---- */

/* What a stitched node was made from. */
typedef struct {
  gboolean is_comm;
  uint32_t rank;        /* copy: the rank; comm: the lowest member; p2p: the receiver */
  sc_id node;           /* copy: the rank's node; comm: the lowest member's call; p2p: recv */
  group_calls *gc;      /* comm */
  uint32_t j;           /* comm: call index */
  const p2p_pair *pair; /* a point-to-point move (comm.send_recv), else NULL */
} origin;

static const char *comm_qualname(kind k) {
  switch (k) {
  case K_ALL_REDUCE:
    return "comm.all_reduce";
  case K_ALL_GATHER:
    return "comm.all_gather";
  case K_REDUCE_SCATTER:
    return "comm.reduce_scatter";
  case K_ALL_TO_ALL:
    return "comm.all_to_all";
  case K_BROADCAST:
    return "comm.broadcast";
  case K_NONE:
    break;
  }
  g_assert_not_reached();
  return NULL;
}

static void decl_of(const sc_ttype *t, sc_tensor_decl *d) {
  memset(d, 0, sizeof *d);
  d->has_shape = TRUE;
  d->shape = t->shape;
  d->has_dtype = TRUE;
  d->dtype = t->dtype;
}

static void remap_value(sc_value *v, const sc_id *map) {
  if (v->kind == SC_VAL_TENSOR)
    v->u.tensor = map[v->u.tensor];
  else if (v->kind == SC_VAL_TENSOR_LIST)
    for (uint32_t i = 0; i < v->u.list.n; i++)
      if (v->u.list.ids[i] != SC_ID_NONE)
        v->u.list.ids[i] = map[v->u.list.ids[i]];
}

typedef struct {
  sc_graph *g;
} name_env;

static gboolean resolve_merged(void *env, const char *name, sc_id *out) {
  sc_id id = sc_graph_find_tensor(((name_env *)env)->g, name);
  if (id == SC_ID_NONE)
    return FALSE;
  *out = id;
  return TRUE;
}

static sc_value str_list(GPtrArray *names) {
  sc_value v;
  v.kind = SC_VAL_LIST;
  v.u.items.n = names->len;
  v.u.items.v = g_new0(sc_value, names->len ? names->len : 1);
  for (guint i = 0; i < names->len; i++)
    v.u.items.v[i] = sc_value_str(g_ptr_array_index(names, i));
  return v;
}

/* Bind the arguments of the comm.* node for call #J of GC. */
static gboolean bind_comm(sc_graph *merged, sc_id *const *maps,
                          const group_calls *gc, uint32_t j, sc_value **out, GError **error) {
  const call *c0 = &g_array_index(gc->calls[0], call, j);
  GError *err = NULL;
  const sc_op *op = sc_ops_lookup(comm_qualname(c0->k), &err);
  g_assert(op != NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (uint32_t p = 0; p < gc->n; p++) {
    uint32_t r = gc->members[p];
    const call *c = &g_array_index(gc->calls[p], call, j);
    g_ptr_array_add(names, sc_graph_tensor(merged, maps[r][c->input])->name);
  }
  const char *kw_names[6];
  sc_value kw[6];
  uint32_t nk = 0;
  kw_names[nk] = "inputs";
  kw[nk++] = str_list(names);
  switch (c0->k) {
  case K_ALL_REDUCE:
    kw_names[nk] = "op";
    kw[nk++] = sc_value_str(c0->reduce_op);
    break;
  case K_ALL_GATHER:
    kw_names[nk] = "dim";
    kw[nk++] = sc_value_int(0);
    break;
  case K_REDUCE_SCATTER:
    kw_names[nk] = "dim";
    kw[nk++] = sc_value_int(0);
    kw_names[nk] = "op";
    kw[nk++] = sc_value_str(c0->reduce_op);
    break;
  case K_ALL_TO_ALL:
    kw_names[nk] = "split_dim";
    kw[nk++] = sc_value_int(0);
    kw_names[nk] = "concat_dim";
    kw[nk++] = sc_value_int(0);
    break;
  case K_BROADCAST:
    kw_names[nk] = "src";
    kw[nk++] = sc_value_int(member_pos(gc->members, gc->n, (uint32_t)c0->src));
    break;
  case K_NONE:
    g_assert_not_reached();
  }
  sc_value ranks_v;
  ranks_v.kind = SC_VAL_LIST;
  ranks_v.u.items.n = gc->n;
  ranks_v.u.items.v = g_new0(sc_value, gc->n);
  for (uint32_t p = 0; p < gc->n; p++)
    ranks_v.u.items.v[p] = sc_value_int(gc->members[p]);
  kw_names[nk] = "ranks";
  kw[nk++] = ranks_v;
  name_env env = {merged};
  sc_value *bound = g_new0(sc_value, op->n_args);
  sc_bind_loc bl;
  gboolean ok = sc_ops_bind(op, sc_graph_symtab(merged), NULL, 0, kw_names, kw, nk,
                            resolve_merged, &env, bound, &bl, error);
  for (uint32_t i = 0; i < nk; i++)
    sc_value_clear(&kw[i]);
  if (!ok) {
    for (uint32_t i = 0; i < op->n_args; i++)
      sc_value_clear(&bound[i]);
    g_free(bound);
    return FALSE;
  }
  *out = bound;
  return TRUE;
}

/* Bind the arguments of the comm.send_recv node of PAIR. */
static gboolean bind_p2p(sc_graph *merged, sc_id *const *maps, sc_graph *const *ranks,
                         const p2p_pair *pair, sc_value **out, GError **error) {
  const sc_op *op = sc_ops_lookup("comm.send_recv", NULL);
  g_assert(op != NULL);
  const sc_node *sn = sc_graph_node(ranks[pair->chan->a], pair->send);
  sc_id x = arg_of(sn, "x")->u.tensor;
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  g_ptr_array_add(names, sc_graph_tensor(merged, maps[pair->chan->a][x])->name);
  const char *kw_names[3] = {"inputs", "src", "dst"};
  sc_value kw[3] = {str_list(names), sc_value_int(pair->chan->a), sc_value_int(pair->chan->b)};
  name_env env = {merged};
  sc_value *bound = g_new0(sc_value, op->n_args);
  sc_bind_loc bl;
  gboolean ok = sc_ops_bind(op, sc_graph_symtab(merged), NULL, 0, kw_names, kw, 3,
                            resolve_merged, &env, bound, &bl, error);
  for (uint32_t i = 0; i < 3; i++)
    sc_value_clear(&kw[i]);
  if (!ok) {
    for (uint32_t i = 0; i < op->n_args; i++)
      sc_value_clear(&bound[i]);
    g_free(bound);
    return FALSE;
  }
  *out = bound;
  return TRUE;
}

static const char *const comm_reduce_ok[] = {"sum", "max", "min", "avg", NULL};

sc_graph *sc_ranks_stitch(sc_graph *const *ranks, uint32_t n, const sc_ranks_groups *gs,
                          sc_symtab *st, sc_ranks_loc *loc, GError **error) {
  g_return_val_if_fail(n == gs->n_ranks, NULL);
  loc->rank = -1;
  loc->node = SC_ID_NONE;
  /* 1. Every call, in program order, into its group's per-member list. */
  g_autoptr(GHashTable) groups = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                                       group_calls_free);
  g_autoptr(GPtrArray) group_order = g_ptr_array_new(); /* first-seen order: deterministic */
  /* Per rank: node id -> the group of a call stitched into a comm node, and
   * its call index (only for groups of two or more members). */
  g_autofree group_calls ***stitched_group = g_new0(group_calls **, n);
  g_autofree uint32_t **stitched_j = g_new0(uint32_t *, n);
  /* Point-to-point: channels "a>b:tag" in first-seen order; per rank, node
   * id -> 1 + index of the pair whose recv it is, and whether it is a send. */
  g_autoptr(GHashTable) chan_by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                            p2p_chan_free);
  g_autoptr(GPtrArray) chans = g_ptr_array_new();
  g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(p2p_pair));
  g_autofree uint32_t **recv_pair = g_new0(uint32_t *, n);
  g_autofree gboolean **is_send = g_new0(gboolean *, n);
  gboolean ok = TRUE;
  for (uint32_t r = 0; r < n && ok; r++) {
    uint32_t nn = sc_graph_n_nodes(ranks[r]);
    stitched_group[r] = g_new0(group_calls *, nn ? nn : 1);
    stitched_j[r] = g_new0(uint32_t, nn ? nn : 1);
    recv_pair[r] = g_new0(uint32_t, nn ? nn : 1);
    is_send[r] = g_new0(gboolean, nn ? nn : 1);
    for (sc_id i = 0; i < nn && ok; i++) {
      p2p_kind pk = p2p_of(sc_graph_node(ranks[r], i)->op);
      if (pk != P2P_NONE) {
        uint32_t peer = 0; /* set by read_p2p; gcc -O2 cannot tell */
        int64_t tag = 0;
        if (!(ok = read_p2p(ranks[r], r, n, i, &peer, &tag, loc, error)))
          break;
        uint32_t a = pk == P2P_SEND ? r : peer, b = pk == P2P_SEND ? peer : r;
        char *key = g_strdup_printf("%u>%u:%" G_GINT64_FORMAT, a, b, (gint64)tag);
        p2p_chan *ch = g_hash_table_lookup(chan_by_key, key);
        if (ch == NULL) {
          ch = g_new0(p2p_chan, 1);
          ch->a = a;
          ch->b = b;
          ch->tag = tag;
          ch->sends = g_array_new(FALSE, FALSE, sizeof(sc_id));
          ch->recvs = g_array_new(FALSE, FALSE, sizeof(sc_id));
          g_hash_table_insert(chan_by_key, key, ch);
          g_ptr_array_add(chans, ch);
        } else {
          g_free(key);
        }
        g_array_append_val(pk == P2P_SEND ? ch->sends : ch->recvs, i);
        is_send[r][i] = pk == P2P_SEND;
        continue;
      }
      if (!sc_ranks_is_collective(sc_graph_node(ranks[r], i)->op))
        continue;
      call c;
      if (!(ok = read_call(ranks[r], r, i, gs, &c, loc, error)))
        break;
      uint32_t nm;
      const uint32_t *m = sc_ranks_groups_members(gs, c.group, &nm);
      if (nm < 2)
        continue; /* a one-member group: the rank's own node stays, an identity */
      if (c.reduce_op != NULL) {
        gboolean known = FALSE;
        for (const char *const *o = comm_reduce_ok; *o && !known; o++)
          known = strcmp(*o, c.reduce_op) == 0;
        if (!known) {
          ok = fail_at(loc, (int32_t)r, i, error,
                       "%s on group '%s' reduces with '%s', which cannot be stitched yet "
                       "(comm.* collectives reduce with sum, max, min or avg)",
                       kind_names[c.k], c.group, c.reduce_op);
          break;
        }
      }
      group_calls *gc = g_hash_table_lookup(groups, c.group);
      if (gc == NULL) {
        gc = g_new0(group_calls, 1);
        gc->name = c.group;
        gc->n = nm;
        gc->members = m;
        gc->calls = g_new(GArray *, nm);
        for (uint32_t p = 0; p < nm; p++)
          gc->calls[p] = g_array_new(FALSE, FALSE, sizeof(call));
        g_hash_table_insert(groups, (gpointer)gc->name, gc);
        g_ptr_array_add(group_order, gc);
      }
      int32_t p = member_pos(m, nm, r);
      stitched_group[r][i] = gc;
      stitched_j[r][i] = gc->calls[p]->len;
      g_array_append_val(gc->calls[p], c);
    }
  }
  /* 2. Pair the calls. */
  for (guint g = 0; g < group_order->len && ok; g++)
    ok = match_group(ranks, g_ptr_array_index(group_order, g), loc, error);
  if (ok)
    ok = match_p2p(ranks, chans, pairs, recv_pair, loc, error);

  /* 3. Declare every node of the stitched graph. */
  sc_graph *merged = ok ? sc_graph_new(st) : NULL;
  g_autofree sc_id **maps = g_new0(sc_id *, n);
  g_autoptr(GArray) origins = g_array_new(FALSE, FALSE, sizeof(origin));
  GError *err = NULL;
  for (uint32_t r = 0; r < n; r++) {
    uint32_t nt = sc_graph_n_tensors(ranks[r]);
    maps[r] = g_new(sc_id, nt ? nt : 1);
    for (uint32_t t = 0; t < nt; t++)
      maps[r][t] = SC_ID_NONE;
  }
  g_autoptr(GArray) names = g_array_new(FALSE, FALSE, sizeof(char *));
  g_autoptr(GArray) decls = g_array_new(FALSE, TRUE, sizeof(sc_tensor_decl));
  for (uint32_t r = 0; r < n && ok; r++) {
    sc_graph *rg = ranks[r];
    for (uint32_t i = 0; i < sc_graph_n_inputs(rg) && ok; i++) {
      sc_id t = sc_graph_input(rg, i);
      const sc_tensor *src = sc_graph_tensor(rg, t);
      g_autofree char *nm = g_strdup_printf("r%u.%s", r, src->name);
      sc_id id;
      if (!(ok = sc_graph_add_input(merged, nm, &src->type, &id, &err)))
        break;
      sc_tensor *dst = sc_graph_tensor(merged, id);
      dst->rank = (int32_t)r;
      dst->has_values = src->has_values;
      dst->values_min = src->values_min;
      dst->values_max = src->values_max;
      maps[r][t] = id;
    }
    for (sc_id i = 0; i < sc_graph_n_nodes(rg) && ok; i++) {
      const sc_node *node = sc_graph_node(rg, i);
      group_calls *gc = stitched_group[r][i];
      origin o = {FALSE, r, i, NULL, 0, NULL};
      if (is_send[r][i])
        continue; /* its pair's comm.send_recv is declared at the recv */
      g_autofree char *node_name = NULL;
      const sc_op *op = node->op;
      g_array_set_size(names, 0);
      g_array_set_size(decls, 0);
      /* results[k] of each contributing call: (rank, tensor) */
      if (recv_pair[r][i] != 0) {
        o.pair = &g_array_index(pairs, p2p_pair, recv_pair[r][i] - 1);
        node_name = g_strdup_printf("p2p:%u>%u:%" G_GINT64_FORMAT ":%u", o.pair->chan->a,
                                    o.pair->chan->b, (gint64)o.pair->chan->tag, o.pair->j);
        op = sc_ops_lookup("comm.send_recv", NULL);
        sc_id res = node->results[0];
        char *rn = g_strdup_printf("r%u.%s", r, sc_graph_tensor(rg, res)->name);
        g_array_append_val(names, rn);
        sc_tensor_decl d;
        decl_of(&sc_graph_tensor(rg, res)->type, &d);
        g_array_append_val(decls, d);
      } else if (gc != NULL) {
        uint32_t j = stitched_j[r][i];
        if (gc->merged[j] != SC_ID_NONE)
          continue; /* declared where a lower member called it */
        o.is_comm = TRUE;
        o.gc = gc;
        o.j = j;
        node_name = g_strdup_printf("comm:%s:%u", gc->name, j);
        op = sc_ops_lookup(comm_qualname(op_kind(node->op)), NULL);
        for (uint32_t p = 0; p < gc->n; p++) {
          uint32_t rp = gc->members[p];
          const call *c = &g_array_index(gc->calls[p], call, j);
          const sc_node *cn = sc_graph_node(ranks[rp], c->node);
          sc_id res = cn->results[0];
          char *rn = res == SC_ID_NONE
                         ? NULL
                         : g_strdup_printf("r%u.%s", rp, sc_graph_tensor(ranks[rp], res)->name);
          g_array_append_val(names, rn);
          sc_tensor_decl d;
          memset(&d, 0, sizeof d);
          if (res != SC_ID_NONE)
            decl_of(&sc_graph_tensor(ranks[rp], res)->type, &d);
          g_array_append_val(decls, d);
        }
      } else {
        node_name = g_strdup_printf("r%u.%s", r, node->name);
        for (uint32_t k = 0; k < node->n_results; k++) {
          sc_id res = node->results[k];
          char *rn = res == SC_ID_NONE
                         ? NULL
                         : g_strdup_printf("r%u.%s", r, sc_graph_tensor(rg, res)->name);
          g_array_append_val(names, rn);
          sc_tensor_decl d;
          memset(&d, 0, sizeof d);
          if (res != SC_ID_NONE)
            decl_of(&sc_graph_tensor(rg, res)->type, &d);
          g_array_append_val(decls, d);
        }
      }
      sc_id id;
      ok = sc_graph_declare_node(merged, node_name, op, (const char *const *)names->data,
                                 names->len, (const sc_tensor_decl *)decls->data, node->src,
                                 &id, &err);
      for (guint k = 0; k < names->len; k++)
        g_free(g_array_index(names, char *, k));
      if (!ok)
        break;
      g_array_append_val(origins, o);
      const sc_node *mn = sc_graph_node(merged, id);
      if (o.is_comm) {
        gc->merged[o.j] = id;
        for (uint32_t p = 0; p < gc->n; p++) {
          uint32_t rp = gc->members[p];
          const call *c = &g_array_index(gc->calls[p], call, o.j);
          sc_id res = sc_graph_node(ranks[rp], c->node)->results[0];
          if (res != SC_ID_NONE) {
            maps[rp][res] = mn->results[p];
            sc_graph_tensor(merged, mn->results[p])->rank = (int32_t)rp;
          }
        }
      } else {
        for (uint32_t k = 0; k < node->n_results; k++)
          if (node->results[k] != SC_ID_NONE) {
            maps[r][node->results[k]] = mn->results[k];
            sc_graph_tensor(merged, mn->results[k])->rank = (int32_t)r;
          }
      }
    }
  }
  if (!ok && err != NULL) {
    /* Declaring cannot fail on names made unique by their prefixes. */
    set_code(&err, SC_RANKS_ERROR_GRAPH);
    g_propagate_error(error, err);
    err = NULL;
  }

  /* 4. Arguments, outputs, then order and infer. */
  for (guint m = 0; m < (ok ? origins->len : 0) && ok; m++) {
    const origin *o = &g_array_index(origins, origin, m);
    sc_value *args = NULL;
    if (o->pair != NULL) {
      if (!bind_p2p(merged, maps, ranks, o->pair, &args, &err)) {
        ok = FALSE;
        loc->rank = (int32_t)o->rank;
        loc->node = o->node;
        g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_GRAPH, "recv #%u from rank %u: %s",
                    o->pair->j, o->pair->chan->a, err->message);
        g_clear_error(&err);
        break;
      }
    } else if (o->is_comm) {
      if (!bind_comm(merged, maps, o->gc, o->j, &args, &err)) {
        ok = FALSE;
        loc->rank = (int32_t)o->rank;
        loc->node = o->node;
        g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_GRAPH,
                    "collective #%u on group '%s': %s", o->j, o->gc->name, err->message);
        g_clear_error(&err);
        break;
      }
    } else {
      const sc_node *node = sc_graph_node(ranks[o->rank], o->node);
      args = g_new0(sc_value, node->op->n_args ? node->op->n_args : 1);
      for (uint32_t a = 0; a < node->op->n_args; a++) {
        sc_value_copy(&args[a], &node->args[a]);
        remap_value(&args[a], maps[o->rank]);
      }
    }
    if (!sc_graph_set_node_args(merged, m, args, &err)) {
      ok = FALSE;
      loc->rank = (int32_t)o->rank;
      loc->node = o->node;
      set_code(&err, SC_RANKS_ERROR_GRAPH);
      g_propagate_error(error, err);
      err = NULL;
    }
  }
  for (uint32_t r = 0; r < n && ok; r++)
    for (uint32_t i = 0; i < sc_graph_n_outputs(ranks[r]); i++)
      sc_graph_add_output(merged, maps[r][sc_graph_output(ranks[r], i)]);
  if (ok && !sc_graph_finish(merged, &err)) {
    ok = FALSE;
    sc_id bad = sc_graph_error_node(merged);
    if (err->domain == SC_GRAPH_ERROR && err->code == SC_GRAPH_ERROR_CYCLE) {
      g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_CYCLE,
                  "the ranks' collective calls cannot be ordered (the program would "
                  "deadlock): %s",
                  err->message);
    } else {
      if (bad != SC_ID_NONE && bad < origins->len) {
        const origin *o = &g_array_index(origins, origin, bad);
        loc->rank = (int32_t)o->rank;
        loc->node = o->node;
        if (o->is_comm)
          g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_GRAPH,
                      "collective #%u on group '%s', stitched as %s: %s", o->j, o->gc->name,
                      sc_graph_node(merged, bad)->op->qualname, err->message);
        else
          g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_GRAPH, "%s", err->message);
      } else {
        g_set_error(error, SC_RANKS_ERROR, SC_RANKS_ERROR_GRAPH, "%s", err->message);
      }
    }
    g_clear_error(&err);
  }
  for (uint32_t r = 0; r < n; r++) {
    g_free(maps[r]);
    g_free(stitched_group[r]);
    g_free(stitched_j[r]);
    g_free(recv_pair[r]);
    g_free(is_send[r]);
  }
  if (!ok) {
    sc_graph_free(merged);
    return NULL;
  }
  return merged;
}
