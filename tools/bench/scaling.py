#!/usr/bin/env python3
"""scaling.py -- time and memory of the check over depth and TP degree, on
the synthetic GPT captures of tools/bench/scale-capture.py: a table and a
PNG plot (issue 18).

    /usr/bin/python3 tools/bench/scaling.py [--shardcheck EXE] [--real-graphs DIR]
        [--tp 2,4,8,16] [--heads 48] [--layers 1,2,4,8,16,32,64,126] [--skip TPxL]...
        [--runs N] [--jobs N] [--timeout S] [--json FILE] [--png FILE]
        [--from-json FILE]...

For each TP degree and depth: the capture is generated (scale-capture.py,
--heads H: the model widened to H attention heads of 32, default 48 so that
every degree up to 16 divides the heads; 24 is the real dumps' width, which
refuses TP 16)
and converted (tools/fx2bundle.py --sheet-only, as tools/bench/real.py
converts it) into a temporary directory; one untimed check warms the
lemma cache; then N runs of `shardcheck show BUNDLE` (the load: reading,
shape inference and stitching of the bundle, the floor of any check) and
N runs of `shardcheck check --quiet --format json BUNDLE`, alternated,
each a fresh process measured by tools/bench/measure.py (CPU = user +
system from wait4, peak RSS = ru_maxrss).  The table gives medians of CPU,
the largest peak RSS, the walk's wall time (stats.seconds of the report:
the check without start-up and load; wall, so it grows with the load), the verdict, the nodes carried by
layer memoization, and check / load (CPU of the whole check command over
CPU of show).  --skip leaves a point out (e.g. the deepest at TP 16 on a
loaded machine); the table says which were left out.

The plot (--png, default docs/scaling.png): CPU seconds and peak RSS
(MiB) over layers, log-log, one colour per TP degree, the check solid,
the load dashed.  Drawn by tools/bench/pngplot.py (standard library: no
matplotlib needed).  --from-json redraws table and plot from earlier
--json files without measuring; given several times, their points are
merged, a later file's point replacing an earlier one's at the same TP
and depth (e.g. deeper points measured apart from the rest).  Each
point records the commit of the source tree (`git describe`) and the
load average when it was measured.  --jobs N passes `--jobs N` to every
check (default: none, the command's own default).

Run it with `nice`: the whole default grid takes tens of minutes of CPU."""
import argparse
import json
import os
import statistics
import sys
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import measure  # noqa: E402
import pngplot  # noqa: E402

SCALE_CAPTURE = os.path.join(HERE, "scale-capture.py")
FX2BUNDLE = os.path.join(ROOT, "tools", "fx2bundle.py")
COLOURS = {2: (31, 119, 180), 4: (44, 160, 44), 8: (214, 39, 40), 16: (148, 103, 189)}


def int_list(text):
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give integers separated by commas")
    if not vals:
        raise argparse.ArgumentTypeError("empty list")
    return vals


def point_arg(text):
    tp, _, layers = text.partition("x")
    if not (tp.isdigit() and layers.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r}: give TPxL, e.g. 16x126")
    return int(tp), int(layers)


def run_py(argv, timeout):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    _, cpu, _, code, _, err = measure.run_child([sys.executable] + argv, env, timeout)
    if code != 0:
        raise RuntimeError(f"{os.path.basename(argv[0])} exited {code}: "
                           f"{err.decode(errors='replace').strip()[:400]}")
    return cpu


def source_commit():
    try:
        out = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None


def measure_point(a, tp, layers, tmp):
    cap = os.path.join(tmp, f"gpt-tp{tp}-l{layers}")
    bundle = cap + ".bundle.json"
    run_py([SCALE_CAPTURE, "--real-graphs", a.real_graphs, "--tp", str(tp), "--layers",
            str(layers), "--heads", str(a.heads), "-o", cap], a.timeout)
    run_py([FX2BUNDLE, "--sheet-only", os.path.join(cap, "sheet.json"), "--root", cap,
            "-o", bundle], a.timeout)
    extra = ["--jobs", str(a.jobs)] if a.jobs is not None else []
    warm = measure.run_check(a.shardcheck, bundle, extra=extra, timeout=a.timeout)
    loads, checks = [], []
    for _ in range(a.runs):
        wall, cpu, rss, code, _, err = measure.run_child([a.shardcheck, "show", bundle],
                                                         None, a.timeout)
        if code != 0:
            raise RuntimeError(f"show exited {code}: {err.decode(errors='replace')[:300]}")
        loads.append((cpu, rss))
        checks.append(measure.run_check(a.shardcheck, bundle, extra=extra, timeout=a.timeout))
    st = checks[-1]["obj"].get("stats", {}) or {}
    row = {"tp": tp, "layers": layers, "heads": a.heads,
           "verdict": checks[-1]["obj"].get("verdict"),
           "exit": checks[-1]["exit"], "warm_exit": warm["exit"],
           "spec_nodes": st.get("spec_nodes"), "impl_nodes": st.get("impl_nodes"),
           "carried": st.get("carried"), "commit": a.commit, "jobs": a.jobs,
           "load_average": os.getloadavg()[0],
           "load_cpu": statistics.median(c for c, _ in loads),
           "load_rss_mib": max(r for _, r in loads) / 1024.0,
           "load_cpus": [c for c, _ in loads],
           "check_cpus": [m["cpu"] for m in checks], **measure.summarize(checks)}
    row["ratio"] = row["cpu"] / row["load_cpu"] if row["load_cpu"] > 0 else None
    for f in (bundle,):
        os.remove(f)
    return row


def merge_json(paths):
    """The rows of the --json files PATHS, a later file's row replacing an
    earlier one's at the same (TP, layers), and the points left out of
    every file that none of them measured."""
    by_point, skipped = {}, set()
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for r in doc["rows"]:
            by_point[(r["tp"], r["layers"])] = r
        skipped |= {tuple(s) for s in doc.get("skipped", [])}
    return list(by_point.values()), sorted(skipped - set(by_point))


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def print_table(rows, skipped, out=sys.stdout):
    print("| TP | layers | spec nodes | impl nodes | carried | verdict | load CPU s | load MiB "
          "| check CPU s | walk wall s | peak MiB | check / load | commit |", file=out)
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|", file=out)
    for r in sorted(rows, key=lambda r: (r["tp"], r["layers"])):
        if r.get("error"):
            print(f"| {r['tp']} | {r['layers']} | | | | error: {r['error'][:80]} | | | | | | | |",
                  file=out)
            continue
        print(f"| {r['tp']} | {r['layers']} | {fmt(r['spec_nodes'], 'd')} | "
              f"{fmt(r['impl_nodes'], 'd')} | {fmt(r['carried'], 'd')} | {r['verdict']} | "
              f"{r['load_cpu']:.2f} | {r['load_rss_mib']:.0f} | {r['cpu']:.2f} | "
              f"{r['check']:.2f} | {r['rss_mib']:.0f} | {fmt(r['ratio'], '.2f')} | "
              f"{r.get('commit') or '-'} |", file=out)
    if skipped:
        print("\nLeft out: " + ", ".join(f"TP {t} x {l}" for t, l in skipped), file=out)


def plot(rows, path):
    ok = [r for r in rows if not r.get("error")]
    if not ok:
        return
    fig = pngplot.Figure(1000, 440)
    heads = "/".join(str(h) for h in sorted({r.get("heads", 24) for r in ok}))
    cpu = fig.axes(80, 40, 380, 330, "layers", "CPU s", logx=True, logy=True,
                   title=f"CPU time, GPT {heads} heads (solid: check, dashed: load)")
    mem = fig.axes(590, 40, 380, 330, "layers", "peak RSS MiB", logx=True, logy=True,
                   title="peak memory (solid: check, dashed: load)")
    for tp in sorted({r["tp"] for r in ok}):
        rs = sorted((r for r in ok if r["tp"] == tp), key=lambda r: r["layers"])
        c = COLOURS.get(tp, (0, 0, 0))
        cpu.line([(r["layers"], r["cpu"]) for r in rs], c, label=f"TP {tp}")
        cpu.line([(r["layers"], r["load_cpu"]) for r in rs], c, dashed=True, marks=False)
        mem.line([(r["layers"], r["rss_mib"]) for r in rs], c, label=f"TP {tp}")
        mem.line([(r["layers"], r["load_rss_mib"]) for r in rs], c, dashed=True, marks=False)
    layer_ticks = [1, 2, 4, 8, 16, 32, 64, 126]
    lim = (min(r["layers"] for r in ok), max(r["layers"] for r in ok))
    if lim[0] == lim[1]:
        lim = (lim[0], lim[0] * 2)
    cpu.draw(xticks=layer_ticks, xlim=lim, legend="lower right")
    mem.draw(xticks=layer_ticks, xlim=lim, legend="lower right")
    fig.save(path)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shardcheck",
                    default=os.path.join(ROOT, "build-rel", "src", "cli", "shardcheck"))
    ap.add_argument("--real-graphs", default=None,
                    help="the real-graphs folder (default $SC_REAL_GRAPHS, else "
                    "../shared/real-graphs next to the source root)")
    ap.add_argument("--tp", type=int_list, default=[2, 4, 8, 16],
                    help="degrees (default 2,4,8,16; each must divide --heads)")
    ap.add_argument("--heads", type=int, default=48,
                    help="attention heads of the synthetic model (scale-capture.py --heads; "
                    "default 48: the dumps' 24 heads refuse TP 16)")
    ap.add_argument("--layers", type=int_list, default=[1, 2, 4, 8, 16, 32, 64, 126])
    ap.add_argument("--skip", action="append", type=point_arg, default=[], metavar="TPxL")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each (default 3)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="pass --jobs N to every check (default: the command's default)")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--png", default=os.path.join(ROOT, "docs", "scaling.png"))
    ap.add_argument("--from-json", metavar="FILE", action="append",
                    help="draw the table and plot of earlier --json files, merged (a later "
                    "file's point replaces an earlier one's); measure nothing")
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    if not a.from_json and not os.access(a.shardcheck, os.X_OK):
        ap.error(f"{a.shardcheck} not found (meson setup build-rel --buildtype=release && "
                 "ninja -C build-rel src/cli/shardcheck, or give --shardcheck PATH)")
    a.shardcheck = os.path.abspath(a.shardcheck)
    a.real_graphs = os.path.abspath(a.real_graphs or os.environ.get("SC_REAL_GRAPHS") or
                                    os.path.join(ROOT, "..", "shared", "real-graphs"))
    return a


def main(argv=None):
    a = parse_args(argv)
    if a.from_json:
        rows, skipped = merge_json(a.from_json)
        print_table(rows, skipped)
        plot(rows, a.png)
        return 0
    a.commit = source_commit()
    load0 = os.getloadavg()
    print(f"shardcheck {a.shardcheck}, {a.runs} runs of each, {os.cpu_count()} cores, "
          f"load average {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}\n", flush=True)
    rows, skipped = [], []
    with tempfile.TemporaryDirectory(prefix="sc-bench-scaling-") as tmp:
        for tp in a.tp:
            for layers in a.layers:
                if (tp, layers) in a.skip:
                    skipped.append((tp, layers))
                    continue
                try:
                    r = measure_point(a, tp, layers, tmp)
                except RuntimeError as e:
                    r = {"tp": tp, "layers": layers, "error": str(e)}
                rows.append(r)
                print(json.dumps({k: v for k, v in r.items() if not k.endswith("s")
                                  or k in ("layers",)}), file=sys.stderr, flush=True)
                if a.json:  # written as it goes: a long run interrupted keeps its points
                    with open(a.json, "w") as f:
                        json.dump({"shardcheck": a.shardcheck, "runs": a.runs,
                                   "load_average_start": load0, "rows": rows,
                                   "skipped": skipped}, f, indent=1)
    load1 = os.getloadavg()
    print_table(rows, skipped)
    print(f"\nload average at the end {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"shardcheck": a.shardcheck, "runs": a.runs, "load_average_start": load0,
                       "load_average_end": load1, "rows": rows, "skipped": skipped}, f, indent=1)
    plot(rows, a.png)
    return 0 if all(not r.get("error") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
