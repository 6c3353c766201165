"""cli.py -- `shardcheck-export MODEL.py`: the one command from a user's
PyTorch code to bundles.

MODEL.py defines `export(degree) -> Export` and may list the bundles it
wants committed as `BUNDLES = [(degree, backward), ...]`.  A model with
variants (TP and TP+SP of one block) defines `export(degree, variant)` and
lists `(degree, backward, variant)` triples.  Exit codes: 0
written (and, with --check, accepted), 1 a numeric check or a --check run
failed, 2 usage, model or capture error.
"""

import argparse
import importlib.util
import os
import subprocess
import sys


def load_model(path):
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    name = "_sc_model_" + "".join(c if c.isalnum() else "_" for c in path)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.pop(0)
    if not callable(getattr(mod, "export", None)):
        raise AttributeError(f"{path}: defines no export(degree) function")
    return mod


def plan_bundles(mod, args):
    listed = [tuple(b) + (None,) * (3 - len(b))
              for b in getattr(mod, "BUNDLES", [(2, False), (2, True)])]
    if args.variant is not None:
        listed = [b for b in listed if b[2] == args.variant] or \
            [(d, b, args.variant) for d, b, _ in listed]
    if args.degree or args.forward or args.backward:
        degrees = args.degree or sorted({d for d, _, _ in listed})
        variants = sorted({v for _, _, v in listed}, key=str) or [args.variant]
        modes = []
        if args.forward or not args.backward:
            modes.append(False)
        if args.backward:
            modes.append(True)
        return [(d, b, v) for v in variants for d in degrees for b in modes]
    return listed


def run_check(binary, path):
    proc = subprocess.run([binary, "check", path], capture_output=True, text=True)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="shardcheck-export",
        description="Capture a sequential and a distributed PyTorch function "
                    "(MODEL.py defines export(degree)) and write shardcheck bundles.")
    ap.add_argument("model", help="the model's Python file")
    ap.add_argument("--degree", type=int, action="append",
                    help="parallel degree (repeatable); default: the model's BUNDLES")
    ap.add_argument("--forward", action="store_true", help="capture the forward pass")
    ap.add_argument("--backward", action="store_true",
                    help="capture forward and backward (gradients of every Param)")
    ap.add_argument("--variant", help="the model's variant (see its BUNDLES)")
    ap.add_argument("-o", "--output", help="output file (one bundle only)")
    ap.add_argument("--out-dir", help="directory for NAME.json (default: the model's folder)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the example values")
    ap.add_argument("--allow-mismatch", action="store_true",
                    help="write the bundle even if a numeric check fails "
                         "(a model that is wrong on purpose)")
    ap.add_argument("--check", metavar="SHARDCHECK",
                    help="run `SHARDCHECK check` on every bundle written")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)

    try:
        import torch  # noqa: F401
    except ImportError:
        print(f"shardcheck-export: torch is not importable by {sys.executable}; "
              f"run with a Python that has torch (Debian: apt-get install "
              f"python3-torch, then /usr/bin/python3)", file=sys.stderr)
        return 2
    from .export import ExportError, NumericMismatch, build_bundle
    from .capture import CaptureError
    from .writer import dumps

    try:
        mod = load_model(args.model)
    except Exception as exc:  # the user's module failed to import
        print(f"shardcheck-export: {args.model}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    wanted = plan_bundles(mod, args)
    if args.output and len(wanted) != 1:
        print("shardcheck-export: -o needs exactly one bundle (one --degree, "
              "--forward or --backward)", file=sys.stderr)
        return 2
    src_root = os.path.dirname(os.path.abspath(args.model))
    out_dir = args.out_dir or src_root
    status = 0
    for degree, backward, variant in wanted:
        log = (lambda m: None) if args.quiet else (lambda m: print("  " + m))
        try:
            exp = mod.export(degree) if variant is None else mod.export(degree, variant)
            bundle, _ = build_bundle(exp, backward=backward, seed=args.seed,
                                     src_root=src_root,
                                     allow_mismatch=args.allow_mismatch, log=log)
        except (ExportError, CaptureError) as exc:
            what = f"degree {degree}, {'backward' if backward else 'forward'}"
            if variant is not None:
                what = f"{variant}, " + what
            print(f"shardcheck-export: {args.model} ({what}): {exc}", file=sys.stderr)
            status = max(status, 1 if isinstance(exc, NumericMismatch) else 2)
            continue
        path = args.output or os.path.join(
            out_dir, getattr(exp, "filename", None) or bundle["name"] + ".json")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            f.write(dumps(bundle))
        nodes = len(bundle["spec"]["nodes"]), len(bundle["impl"]["nodes"])
        print(f"wrote {path} (spec {nodes[0]} nodes, impl {nodes[1]} nodes)")
        if args.check:
            rc, text = run_check(args.check, path)
            print(f"  shardcheck check: exit {rc}")
            if rc != 0:
                print("  " + text.replace("\n", "\n  "))
                status = max(status, 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
