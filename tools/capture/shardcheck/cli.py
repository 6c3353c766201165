"""cli.py -- shardcheck-capture: run the user's program once as one process
and once as N processes, and write one bundle (docs/capture.md).

    shardcheck-capture --nproc N -o BUNDLE.json [--check] [--relation FILE]
                       [--timeout S] SCRIPT.py [ARGS...]

Each run starts the script with this Python as torchrun would on one
machine: RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free
MASTER_PORT in the environment (the script calls
torch.distributed.init_process_group("gloo") itself), plus
SHARDCHECK_CAPTURE_DIR, which makes capture_step record.  Exit codes, as
shardcheck's: 0 written (and with --check: refines), 1 --check: fails,
2 an input or program error (a rank crashed, the runs differ, an input
matches no layout), 3 a limit (a run did not finish within --timeout).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

EXIT_OK, EXIT_FAILS, EXIT_INPUT, EXIT_LIMIT = 0, 1, 2, 3

_PKG = os.path.dirname(os.path.abspath(__file__))
_CAPTURE_ROOT = os.path.dirname(_PKG)                              # tools/capture
_EXPORT_ROOT = os.path.join(os.path.dirname(_CAPTURE_ROOT), "export")   # tools/export


class RunError(Exception):
    def __init__(self, msg, code):
        super().__init__(msg)
        self.code = code


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path, n=12):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    return "\n".join("    " + ln for ln in lines[-n:])


def run_world(script, args, n, out_dir, log_dir, timeout, label):
    """Run n processes of script; raise RunError on a crash or a hang.  A
    rank that exits with an error after its capture is written (its
    rankK.json, which capture_step writes last, atomically) has done its
    part: its exit status is reported on stderr, not raised (torch 1.13's
    gloo process group can abort at interpreter exit when a peer's store
    has gone: "terminate called without an active exception")."""
    port = free_port()
    procs = []
    pypath = [p for p in (_CAPTURE_ROOT, _EXPORT_ROOT) if os.path.isdir(p)]
    old = os.environ.get("PYTHONPATH")
    for k in range(n):
        env = dict(os.environ)
        env.update({"RANK": str(k), "LOCAL_RANK": str(k), "WORLD_SIZE": str(n),
                    "LOCAL_WORLD_SIZE": str(n), "MASTER_ADDR": "127.0.0.1",
                    "MASTER_PORT": str(port), "SHARDCHECK_CAPTURE_DIR": out_dir,
                    "SHARDCHECK_SRC_ROOT": os.path.dirname(os.path.abspath(script)),
                    "PYTHONPATH": os.pathsep.join(pypath + ([old] if old else []))})
        so = open(os.path.join(log_dir, f"{label}-rank{k}.out"), "w")
        se = open(os.path.join(log_dir, f"{label}-rank{k}.err"), "w")
        procs.append((subprocess.Popen([sys.executable, script] + list(args), env=env,
                                       stdout=so, stderr=se, start_new_session=True), so, se))
    deadline = time.monotonic() + timeout
    failed = None

    def captured(k):
        return os.path.exists(os.path.join(out_dir, f"rank{k}.json"))

    try:
        while True:
            codes = [p.poll() for p, _, _ in procs]
            bad = [k for k, c in enumerate(codes) if c not in (None, 0) and not captured(k)]
            if bad and failed is None:
                failed = bad[0]
                break
            if all(c is not None for c in codes):
                for k, c in enumerate(codes):
                    if c != 0:
                        print(f"shardcheck-capture: {label} run: rank {k} exited with status {c} "
                              f"after its capture was written (its exit is not the capture's); "
                              f"its stderr ends:\n{_tail(os.path.join(log_dir, f'{label}-rank{k}.err'), 3)}",
                              file=sys.stderr)
                return
            if time.monotonic() > deadline:
                running = [k for k, c in enumerate(codes) if c is None]
                raise RunError(
                    f"{label} run: rank{'s' if len(running) > 1 else ''} "
                    f"{', '.join(map(str, running))} did not finish within {timeout:g} s "
                    f"(a hang: a collective or send/recv without its partner?); "
                    f"see --timeout", EXIT_LIMIT)
            time.sleep(0.05)
        # the others usually fail in turn (a peer went away): give them a
        # moment, then show every failed rank, the first one first
        end = time.monotonic() + 2.0
        while time.monotonic() < end and any(p.poll() is None for p, _, _ in procs):
            time.sleep(0.05)
        lines = []
        for k in [failed] + [j for j in range(n) if j != failed]:
            code = procs[k][0].poll()
            if code in (None, 0):
                continue
            lines.append(f"rank {k} exited with status {code}; its stderr ends:\n"
                         f"{_tail(os.path.join(log_dir, f'{label}-rank{k}.err'))}")
        raise RunError(f"{label} run: " + "\n".join(lines), EXIT_INPUT)
    finally:
        for p, so, se in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
            so.close()
            se.close()


def find_shardcheck(given):
    if given:
        return given
    if os.environ.get("SHARDCHECK"):
        return os.environ["SHARDCHECK"]
    repo = os.path.dirname(os.path.dirname(_CAPTURE_ROOT))
    built = os.path.join(repo, "build", "src", "cli", "shardcheck")
    if os.path.exists(built):
        return built
    return shutil.which("shardcheck") or "shardcheck"


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="shardcheck-capture",
        description="Capture a torch.distributed program as a shardcheck bundle: one "
                    "process (the spec) and N processes (the implementation).")
    ap.add_argument("--nproc", "--nproc-per-node", type=int, required=True, dest="nproc",
                    help="number of processes of the distributed run (>= 2)")
    ap.add_argument("-o", "--output", required=True, help="bundle file to write")
    ap.add_argument("--check", action="store_true", help="also run `shardcheck check`")
    ap.add_argument("--relation", help="JSON file {input: [expressions]} for inputs whose "
                                       "relation the values do not show")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds each run may take (default 300); past it: exit 3")
    ap.add_argument("--name", help="bundle name (default: the script's name)")
    ap.add_argument("--shardcheck", help="the shardcheck binary for --check")
    ap.add_argument("--keep", help="keep the runs' records and logs in this folder")
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    prog = "shardcheck-capture"
    if a.nproc < 2:
        ap.error("--nproc must be at least 2 (the 1-process run is made anyway)")
    if not os.path.exists(a.script):
        print(f"{prog}: {a.script}: no such file", file=sys.stderr)
        return EXIT_INPUT
    given = None
    if a.relation:
        try:
            with open(a.relation) as f:
                given = json.load(f)
            if not isinstance(given, dict) or not all(
                    isinstance(v, list) and all(isinstance(e, str) for e in v)
                    for v in given.values()):
                raise ValueError("expected an object {input name: [expression, ...]}")
        except (OSError, ValueError) as e:
            print(f"{prog}: {a.relation}: {e}", file=sys.stderr)
            return EXIT_INPUT
    work = a.keep or tempfile.mkdtemp(prefix="shardcheck-capture-")
    os.makedirs(work, exist_ok=True)
    spec_dir, ranks_dir = os.path.join(work, "spec"), os.path.join(work, "ranks")
    for d in (spec_dir, ranks_dir):
        shutil.rmtree(d, ignore_errors=True)
    sys.path[:0] = [_CAPTURE_ROOT, _EXPORT_ROOT]
    from .bundle import assemble, dumps
    from .record import CaptureError
    try:
        t0 = time.monotonic()
        run_world(a.script, a.args, 1, spec_dir, work, a.timeout, "1-process")
        t1 = time.monotonic()
        run_world(a.script, a.args, a.nproc, ranks_dir, work, a.timeout,
                  f"{a.nproc}-process")
        t2 = time.monotonic()
        name = a.name or os.path.splitext(os.path.basename(a.script))[0]
        bundle, report = assemble(spec_dir, ranks_dir, a.nproc, name, given)
    except RunError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.code
    except CaptureError as e:
        print(f"{prog}: {a.script}: {e}", file=sys.stderr)
        return EXIT_INPUT
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    with open(a.output, "w") as f:
        f.write(dumps(bundle))
    print(f"{prog}: ran 1 process ({t1 - t0:.1f} s) and {a.nproc} processes "
          f"({t2 - t1:.1f} s); wrote {a.output}")
    print("relations read from the values (review them):")
    for line in report:
        print("  " + line)
    if not a.check:
        return EXIT_OK
    sc = find_shardcheck(a.shardcheck)
    sys.stdout.flush()
    try:
        return subprocess.call([sc, "check", a.output])
    except OSError as e:
        print(f"{prog}: cannot run {sc}: {e}", file=sys.stderr)
        return EXIT_INPUT
