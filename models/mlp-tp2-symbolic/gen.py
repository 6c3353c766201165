#!/usr/bin/env python3
"""gen.py -- models/mlp-tp2 with a symbolic batch size S: bundle.json.

The model is models/mlp-tp2/model.py, exported by shardcheck-export at
three batch sizes (S = 4, 6, 10); tools/export/symbolize.py then replaces
every integer that varies with the batch by its expression over S (here S
itself: the rows of x, of every activation and of y) and keeps every other
value.  Three sizes, not two, so that S and S*S cannot both fit.

    /usr/bin/python3 models/mlp-tp2-symbolic/gen.py [--out-dir DIR]

Needs torch (the exports); tests/export/test_models.py runs it and compares
the result with the committed bundle.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))

import symbolize  # noqa: E402

MODEL = os.path.join(ROOT, "models", "mlp-tp2", "model.py")
BATCHES = (4, 6, 10)


def generate(out_dir, log=print):
    """Export, symbolize, write bundle.json into OUT_DIR; returns the paths."""
    import torch
    from shardcheck_export import build_bundle
    from shardcheck_export.cli import load_model
    mod = load_model(MODEL)
    exports = []
    for s in BATCHES:
        bundle, _ = build_bundle(mod.export(2, batch=s), src_root=os.path.dirname(MODEL))
        exports.append(({"S": s}, bundle))
    desc = (mod.export(2).description + " The batch size is the symbol S: made by "
            "models/mlp-tp2-symbolic/gen.py from exports at S = "
            + ", ".join(str(s) for s in BATCHES)
            + f"; captured at ATen level by shardcheck-export with torch {torch.__version__}.")
    bundle, n = symbolize.symbolize(exports, {"S": {"min": 1}}, [], name="mlp-tp2-symbolic",
                                    description=desc)
    path = os.path.join(out_dir, "bundle.json")
    with open(path, "w") as f:
        f.write(symbolize.dumps(bundle))
    log(f"wrote {path} ({n} integers made symbolic)")
    return [path]


if __name__ == "__main__":
    sys.exit(symbolize.generator_main(generate, __doc__, HERE))
