"""gen.py -- export this folder's bundles: the lse-causal variants of
models/ring-attention/model.py (tests/export/test_models.py regenerates
them with generate(), as for the other model folders).

    /usr/bin/python3 models/ring-attention-lse-causal/gen.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "ring-attention", "model.py")
# (variant, degrees): the correct form at 2 ranks, the bug twin at 2 and 4
BUNDLES = [("lse-causal", [2]), ("lse-causal-bug", [2, 4])]


def generate(out_dir, log=print):
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "export"))
    from shardcheck_export.cli import main
    for variant, degrees in BUNDLES:
        args = [MODEL, "-q", "--out-dir", out_dir, "--variant", variant]
        for d in degrees:
            args += ["--degree", str(d)]
        if variant.endswith("-bug"):
            args.append("--allow-mismatch")
        if main(args) != 0:
            raise RuntimeError(f"shardcheck-export failed for {variant}")
        log(f"exported {variant} at {degrees}")


if __name__ == "__main__":
    generate(HERE)
