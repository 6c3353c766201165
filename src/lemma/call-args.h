/* call-args.h — the value of one attribute (non-tensor) argument of a call
 * of a lemma side, pn_attr_arg: what the argument lists of instances
 * (call-args.c, pn_call_args) and the applier's right sides (compile.c,
 * eval_args) are built from.  Inline: the applier asks it once per
 * attribute argument of every application, and with VALUES or BIND a
 * constant NULL at the call the compiler keeps only one lookup. */
#ifndef SC_LEMMA_CALL_ARGS_H
#define SC_LEMMA_CALL_ARGS_H

#include "lemma-private.h"

/* The value of argument A of call P (not a variable), A not a tensor
 * argument, into *OUT (zeroed, or cleared by the caller: it is
 * overwritten):
 *   - a literal or a defaulted argument: its value;
 *   - ?v: the value of attribute variable v, from VALUES (indexed by
 *     variable) or, when VALUES is NULL, from BIND (pointers; NULL:
 *     unbound);
 *   - the wildcard ?_ (left sides only: the checker refuses it on a right
 *     side): the schema default, left as it is without one;
 *   - a computed argument: evaluated under ENV.
 * FALSE when the variable is unbound or the value cannot be computed, with
 * *WHY (when WHY is not NULL) naming the argument (caller g_free()s). */
static inline gboolean pn_attr_arg(const pnode *p, uint32_t a, const sc_value *values,
                                   const sc_value *const *bind, const ev_env *env,
                                   sc_value *out, char **why) {
  const sc_arg *arg = &p->op->args[a];
  const pat_arg *pa = &p->args[a];
  switch (pa->kind) {
  case PA_DEFAULT:
  case PA_LITERAL:
    sc_value_copy(out, &pa->value);
    break;
  case PA_VAR: {
    const sc_value *v = values ? &values[pa->var] : bind[pa->var];
    if (v == NULL) {
      if (why)
        *why = g_strdup_printf("argument '%s' of %s names an unbound variable", arg->name,
                               p->op->qualname);
      return FALSE;
    }
    sc_value_copy(out, v);
    break;
  }
  case PA_WILD:
    if (arg->has_default)
      sc_value_copy(out, &arg->default_value);
    break;
  case PA_COMPUTE: {
    ev_val v;
    if (!ev_eval(env, pa->expr, &v) || !ev_to_value(&v, arg, out)) {
      if (why)
        *why = g_strdup_printf("the value of argument '%s' of %s cannot be computed",
                               arg->name, p->op->qualname);
      return FALSE;
    }
    break;
  }
  }
  return TRUE;
}

#endif
