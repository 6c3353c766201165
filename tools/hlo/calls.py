"""calls.py -- calls, fusions and custom calls (a mixin of
lower.Lowering; docs/hlo.md, "Operator rows" and "Custom calls").

fusion and call are inlined: the called computation's instructions are
lowered in place as OUTER/INNER.  Known custom-call targets become the
operators declared in lemmas/custom-neuron.lemma; others an input error,
a user-declared operator (--custom-call) or the opaque hlo.custom_call row
(--opaque-custom-calls).
"""

from hlo import parse as P
from hlo.shapes import T

# known custom-call targets -> handler name (declared in lemmas/custom-neuron.lemma)
CUSTOM_CALLS = {"AwsNeuronTransferWithStaticRing": "transfer",
                "AwsNeuronRmsNorm": "rms_norm"}


class CallLowering:
    # --- calls and fusions: inlined ---------------------------------------------

    def inline(self, comp):
        """The called computation's instructions lowered in place, named
        OUTER/INNER, its parameters bound to this instruction's operands."""
        outer = self.ins
        params = {i.param: i for i in comp.instrs if i.opcode == "parameter"}
        if sorted(params) != list(range(len(outer.operands))):
            self.fail(f"{outer.opcode} passes {len(outer.operands)} operand(s) to {comp.name!r}, "
                      f"which takes {len(params)}")
        if self.depth > 32:
            self.fail("calls nested deeper than 32")
        self.depth += 1
        pre = outer.name + "/"
        for k, p in params.items():
            self.env[pre + p.name] = self.env[outer.operands[k]]
            self.instrs[pre + p.name] = self.instrs.get(outer.operands[k])
            if outer.operands[k] in self.cval:
                self.cval[pre + p.name] = self.cval[outer.operands[k]]
        for i in comp.instrs:
            if i.opcode == "parameter":
                continue
            c = P.Instr(pre + i.name, i.type, i.opcode, i.line, i.col, False)
            c.operands = [pre + o for o in i.operands]
            c.operand_cols, c.literal, c.param = i.operand_cols, i.literal, i.param
            c.attrs, c.opcode_col, c.layout = i.attrs, i.opcode_col, i.layout
            c.src = i.src or outer.src
            self.lower(c)
        self.depth -= 1
        self.ins = outer
        self.step = max(self.step, 1000)
        v = self.env[pre + comp.root.name]
        if comp.root.opcode == "parameter" and isinstance(v, T):
            return self.emit("aten.alias.default", [v.name], v.shape, v.dtype)
        return v

    def op_fusion(self):
        return self.inline(P.comp_attr(self.mod, self.ins, "calls"))

    def op_call(self):
        return self.inline(P.comp_attr(self.mod, self.ins, "to_apply"))

    # --- custom calls -------------------------------------------------------------

    def op_custom_call(self):
        ins = self.ins
        target = P.string_attr(self.mod, ins, "custom_call_target")
        if target is None:
            self.fail("custom-call needs custom_call_target=")
        shape, dtype = self.out_type()
        if shape is None:
            self.fail(f"custom-call {target!r} returns a tuple; not supported yet")
        if target in self.custom:
            args = [self.operand(i).name for i in range(len(ins.operands))]
            return self.emit(self.custom[target], args, shape, dtype)
        h = CUSTOM_CALLS.get(target)
        if h is None and self.opaque_calls:
            cfg = P.string_attr(self.mod, ins, "backend_config", "")
            args = [self.operand(i).name for i in range(len(ins.operands))]
            self.opaque.append((target, ins.line))
            return self.emit("hlo.custom_call.default", [args, target, cfg, shape, dtype],
                             shape, dtype)
        if h is None:
            self.fail(f"custom-call target {target!r} is unknown: declare its meaning as an "
                      f"operator in a lemma file and map it with --custom-call "
                      f"{target}=NS.NAME, or give --opaque-custom-calls (docs/hlo.md, "
                      f"\"Custom calls\")",
                      col=ins.attrs["custom_call_target"][1])
        return getattr(self, "cc_" + h)(target)

    def cc_transfer(self, target):
        self.arity(1)
        x = self.operand(0)
        shape, dtype = self.out_type()
        if shape != x.shape or dtype != x.dtype:
            self.fail(f"{target} returns {shape} {dtype} for an operand {x.shape} {x.dtype}; "
                      f"it is read as an identity move, which keeps both")
        return self.emit("neuron.transfer.default", [x.name], shape, dtype)

    def cc_rms_norm(self, target):
        self.arity(3)
        x, w = self.operand(0), self.operand(1)
        eps = self.fold_scalar(2)
        if eps is None or not isinstance(eps, float):
            self.fail(f"{target}: the epsilon operand must be a float constant",
                      col=self.ins.operand_cols[2] + 1)
        cfg = P.string_attr(self.mod, self.ins, "backend_config", "")
        try:
            d = int(cfg)
        except ValueError:
            self.fail(f"{target}: backend_config={cfg!r} is not the normalized dim",
                      col=self.ins.attrs.get("backend_config", (None, self.ins.opcode_col))[1])
        shape, dtype = self.out_type()
        if not 0 <= d < len(x.shape) or w.shape != [x.shape[d]] or shape != x.shape:
            self.fail(f"{target}: expects x, weight [size of x's dim {d}], eps and returns x's "
                      f"shape; found x {x.shape}, weight {w.shape}, result {shape}")
        r = self.emit("neuron.rms_norm.default", [x.name, w.name, eps, d], x.shape, x.dtype)
        return self.to_dtype(r, dtype)
