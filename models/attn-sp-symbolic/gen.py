#!/usr/bin/env python3
"""gen.py -- the attention block of model.py with symbolic batch B and
sequence S: attn-sp{2,4}[-slice[-offbyone]]-symbolic.json.

Each bundle is model.py's export(degree, variant) traced by shardcheck-export
at six sizes, (B, S) = (2, 8), (3, 8), (5, 8), (2, 12), (2, 20), (3, 12):
three values of each symbol (so that S and S*S, which both fit two sizes,
are told apart) and one point where both change (so that B*S is told from
B + S).  tools/export/symbolize.py replaces every integer that varies with
the sizes by its expression over B and S (shapes, view sizes, strides,
slice bounds, the causal mask's size) and keeps every other value; an
integer that fits no expression, or two, stops the generation.

Assumptions: S >= n and S % n == 0 for degree n (2 or 4), B >= 1.

    /usr/bin/python3 models/attn-sp-symbolic/gen.py [--out-dir DIR]

Needs torch; tests/export/test_models.py runs it and compares the results
with the committed bundles.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))

import symbolize  # noqa: E402

MODEL = os.path.join(HERE, "model.py")
POINTS = [(2, 8), (3, 8), (5, 8), (2, 12), (2, 20), (3, 12)]
VARIANTS = ("sp", "sp-slice", "sp-slice-offbyone")
DEGREES = (2, 4)


def bundle_name(degree, variant):
    return f"attn-sp{degree}{variant[2:]}-symbolic"


def generate(out_dir, log=print):
    """Export, symbolize, write every symbolic bundle into OUT_DIR."""
    import torch
    from shardcheck_export import build_bundle
    from shardcheck_export.cli import load_model
    mod = load_model(MODEL)
    written = []
    for variant in VARIANTS:
        for n in DEGREES:
            exports = []
            for b, s in POINTS:
                exp = mod.export(n, variant, batch=b, seq=s)
                bundle, _ = build_bundle(exp, src_root=HERE)
                exports.append(({"B": b, "S": s}, bundle))
            desc = (mod.export(n, variant).description + f" Degree {n}, forward. Batch B "
                    f"and sequence S symbolic (S % {n} == 0): made by "
                    f"models/attn-sp-symbolic/gen.py from exports at (B, S) = "
                    + ", ".join(f"({b}, {s})" for b, s in POINTS)
                    + f"; captured at ATen level by shardcheck-export with torch "
                    f"{torch.__version__}.")
            bundle, k = symbolize.symbolize(
                exports, {"B": {"min": 1}, "S": {"min": n}}, [f"S % {n} == 0"],
                name=bundle_name(n, variant), description=desc)
            path = os.path.join(out_dir, bundle_name(n, variant) + ".json")
            with open(path, "w") as f:
                f.write(symbolize.dumps(bundle))
            log(f"wrote {path} ({k} integers made symbolic)")
            written.append(path)
    return written


if __name__ == "__main__":
    sys.exit(symbolize.generator_main(generate, __doc__, HERE))
