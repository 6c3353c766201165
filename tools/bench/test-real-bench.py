#!/usr/bin/env python3
"""test-real-bench.py: tools/bench/real.py works (not a timed test).

    test-real-bench.py SHARDCHECK SOURCE_ROOT

Runs the real-capture benchmark with --runs 1 and checks what it says, not
how fast:
  0. GraphGuard's published times as real.py compares them (no run): a
     read value is itself (capped at the text's 167 s), an unread point of
     Figure 5's grid lies between the read points at no larger and no
     smaller degree and depth, a configuration GraphGuard did not publish
     has none; the 100x verdict is met / MISSED / open accordingly;
  1. two real cases (qwen2-paral2_layer1 refines and has a published time;
     bug_grad_accumulation fails, unmapped at sum_1): exit 0, the JSON rows
     carry every field with the right verdicts, the sheet's expectations,
     the published time and speed-ups, the spec node count of the converted
     bundle, one timed run; the temporary directory is gone afterwards;
  2. the extension points: a copy of the bug_grad_accumulation sheet given
     with --sheet (outside relations/, file names relative to the real
     graphs) that wrongly expects "refines" must be marked MISMATCH and
     make the exit code 1; the same case as a --dumps-dir (a folder with
     links to the dumps and a sheet.json relative to it) must match; so
     must --scale 2x1 (a synthetic capture generated into the benchmark's
     temporary folder), with GraphGuard's GPT TP=2 time starred;
  3. bad usage exits 2: --runs 0, an unknown --case, a --dumps-dir without
     sheet.json.
Everything made from the data lives in a private temporary folder (also
TMPDIR of the benchmark, so its own temporary folder is checked to be
deleted), removed at the end.  Exit 0 pass, 1 fail, 77 skipped (no data).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

FIELDS = ("case", "origin", "sheet", "root", "synthetic", "config", "expected_verdict",
          "expected_kind", "expected_node", "graphguard_s", "assumed_intermediates", "convert",
          "verdict", "kind", "node", "match", "stable", "spec_nodes", "impl_nodes", "visited",
          "explored", "max_enodes", "wall", "cpu", "check", "rss_mib", "runs")


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


def run(script, exe, rg, tmpdir, args):
    env = dict(os.environ, TMPDIR=tmpdir, PYTHONDONTWRITEBYTECODE="1")
    env.pop("SC_REAL_GRAPHS", None)
    cmd = [sys.executable, script, "--shardcheck", exe, "--real-graphs", rg] + args
    print("# " + " ".join(cmd[1:]), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1500)
    print(p.stdout + p.stderr, flush=True)
    return p


def check_published(script):
    sys.path.insert(0, os.path.dirname(script))
    import real as rb  # noqa: E402  (tools/bench/real.py)
    P, tv = rb.published_of, rb.target_verdict
    for cfg, want in ((("gpt", 2, 1), {"value": 13.6, "lo": 13.6, "hi": 13.6}),
                      (("gpt", 8, 8), {"value": 174.0, "lo": 167.0, "hi": 167.0}),
                      (("gpt", 6, 1), {"value": None, "lo": 13.6, "hi": 52.8}),
                      (("gpt", 8, 4), {"value": None, "lo": 52.8, "hi": 167.0}),
                      (("gpt", 4, 8), {"value": None, "lo": 13.6, "hi": 167.0}),
                      (("llama", 4, 1), {"value": None, "lo": 10.0, "hi": 167.0}),
                      (("qwen2", 2, 1), {"value": 6.8, "lo": 6.8, "hi": 6.8})):
        expect(P(cfg) == want, f"published_of{cfg} = {P(cfg)}, not {want}")
    for cfg in (("gpt", 3, 1), ("gpt", 16, 1), ("gpt", 2, 16), ("qwen2", 4, 1),
                ("llama", 6, 1), None):
        expect(P(cfg) is None, f"published_of{cfg} = {P(cfg)}: GraphGuard published none")
    expect(tv(P(("gpt", 2, 1)), 0.135) == "met" and tv(P(("gpt", 2, 1)), 0.137) == "MISSED",
           "GPT 2x1 verdicts")
    expect(tv(P(("gpt", 6, 1)), 0.13) == "met by the lower bound" and
           tv(P(("gpt", 6, 1)), 0.6) == "MISSED" and
           tv(P(("gpt", 6, 1)), 0.3) == "open: 100x iff GraphGuard took >= 30.0 s",
           f"GPT 6x1 verdicts {tv(P(('gpt', 6, 1)), 0.3)!r}")


def check_figures(r):
    for k in FIELDS:
        expect(k in r, f"{r.get('case')}: field {k} missing")
    expect(len(r["runs"]) == 1, f"{r['case']}: {len(r['runs'])} timed runs, not 1")
    for k in ("wall", "cpu", "check"):
        expect(isinstance(r[k], float) and r[k] > 0, f"{r['case']}: {k} = {r[k]!r}")
    expect(r["rss_mib"] > 1, f"{r['case']}: peak RSS {r['rss_mib']!r} MiB")
    expect(r["convert"]["wall"] > 0 and r["convert"]["cpu"] > 0,
           f"{r['case']}: conversion times {r['convert']!r}")
    expect(r["stable"] is True, f"{r['case']}: runs disagree")
    # --quiet: nothing on stderr (a sanitizer's report would be there) but
    # LeakSanitizer's list of the suppressions it used (tests/lsan.supp)
    err = re.sub(r"-+\nSuppressions used:\n(?:.*\n)*?-+\n\n?", "", r["runs"][0]["stderr"])
    expect(err == "", f"{r['case']}: stderr {r['runs'][0]['stderr']!r}")


def spec_nodes_of(rg, sheet, tmpdir, root):
    """The spec node count of the bundle fx2bundle makes of the sheet."""
    out = os.path.join(tmpdir, "own.bundle.json")
    subprocess.run([sys.executable, os.path.join(root, "tools", "fx2bundle.py"), "--sheet-only",
                    sheet, "--root", rg, "-o", out], check=True, capture_output=True, timeout=300)
    with open(out) as f:
        n = len(json.load(f)["spec"]["nodes"])
    os.unlink(out)
    return n


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    exe, root = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    rg = os.environ.get("SC_REAL_GRAPHS") or os.path.join(root, "..", "shared", "real-graphs")
    rel = os.path.join(rg, "relations")
    if not (os.path.isfile(os.path.join(rel, "qwen2-paral2_layer1.json")) and
            os.path.isfile(os.path.join(rel, "bug_grad_accumulation.json"))):
        print("SKIP: real graphs not found (set SC_REAL_GRAPHS)")
        return 77
    script = os.path.join(root, "tools", "bench", "real.py")
    with tempfile.TemporaryDirectory(prefix="sc-test-real-bench-") as priv:
        bench_tmp = os.path.join(priv, "tmp")
        os.mkdir(bench_tmp)
        try:
            check_published(script)
            # 1. two real cases
            out = os.path.join(priv, "out.json")
            p = run(script, exe, rg, bench_tmp, ["--runs", "1", "--case", "qwen2-paral2_layer1",
                                                 "--case", "bug_grad_accumulation",
                                                 "--json", out])
            expect(p.returncode == 0, f"exit {p.returncode}, not 0")
            expect(os.listdir(bench_tmp) == [],
                   f"temporary files left behind: {os.listdir(bench_tmp)}")
            expect("| qwen2-paral2_layer1 |" in p.stdout and "| 6.8 |" in p.stdout,
                   "the table lacks the qwen2 row or its published time")
            with open(out) as f:
                res = json.load(f)
            for k in ("shardcheck", "commit", "runs", "cores", "load_start", "rows", "published"):
                expect(k in res, f"top-level field {k} missing")
            expect(res["runs"] == 1, f"runs {res['runs']}")
            rows = {r["case"]: r for r in res["rows"]}
            expect(sorted(rows) == ["bug_grad_accumulation", "qwen2-paral2_layer1"],
                   f"cases {sorted(rows)}")
            q, g = rows["qwen2-paral2_layer1"], rows["bug_grad_accumulation"]
            for r in (q, g):
                check_figures(r)
                expect(r["origin"] == "real" and r["synthetic"] is False, f"{r['case']}: origin")
                expect(r["match"] is True, f"{r['case']}: verdict differs from the sheet")
            expect((q["verdict"], q["kind"], q["node"]) == ("refines", None, None),
                   f"qwen2: {q['verdict']} {q['kind']} {q['node']}")
            expect(q["expected_verdict"] == "refines", "qwen2: expected verdict")
            expect(q["config"] == ["qwen2", 2, 1], f"qwen2: config {q['config']}")
            expect(q["graphguard_s"] == 6.8, f"qwen2: published {q['graphguard_s']}")
            expect(abs(q["speedup"] - 6.8 / q["wall"]) < 1e-9 and
                   abs(q["speedup_cpu"] - 6.8 / q["cpu"]) < 1e-9, "qwen2: speed-ups")
            expect(q["spec_nodes"] == spec_nodes_of(rg, os.path.join(rel, "qwen2-paral2_layer1.json"),
                                                    priv, root),
                   f"qwen2: spec nodes {q['spec_nodes']} differ from the bundle's")
            expect(0 < q["impl_nodes"] and q["visited"] == q["spec_nodes"],
                   f"qwen2: impl nodes {q['impl_nodes']}, visited {q['visited']}")
            expect((g["verdict"], g["kind"], g["node"]) == ("fails", "unmapped", "sum_1"),
                   f"grad_accumulation: {g['verdict']} {g['kind']} {g['node']}")
            expect((g["expected_verdict"], g["expected_kind"], g["expected_node"]) ==
                   ("fails", "unmapped", "sum_1"), "grad_accumulation: the sheet's expectation")
            expect(g["graphguard_s"] is None and g["config"] is None and "speedup" not in g,
                   "grad_accumulation: a bug case has no published time")
            expect(g["runs"][0]["exit"] == 1, f"grad_accumulation: exit {g['runs'][0]['exit']}")

            # 2. --sheet (wrong expectation) and --dumps-dir
            with open(os.path.join(rel, "bug_grad_accumulation.json")) as f:
                sheet = json.load(f)
            wrong = dict(sheet, expected_verdict="refines")
            wrong_path = os.path.join(priv, "grad-wrong.json")
            with open(wrong_path, "w") as f:
                json.dump(wrong, f)
            dd = os.path.join(priv, "grad-dumps")
            os.mkdir(dd)
            local = dict(sheet)
            for key in ("spec", "impl"):
                local[key] = []
                for k, path in enumerate(sheet[key]):
                    name = f"{key}{k}.py"
                    os.symlink(os.path.join(rg, path), os.path.join(dd, name))
                    local[key].append(name)
            with open(os.path.join(dd, "sheet.json"), "w") as f:
                json.dump(local, f)
            out2 = os.path.join(priv, "out2.json")
            p = run(script, exe, rg, bench_tmp, ["--runs", "1", "--case", "bug_grad_accumulation",
                                                 "--sheet", wrong_path, "--dumps-dir", dd,
                                                 "--scale", "2x1", "--json", out2])
            expect(p.returncode == 1, f"exit {p.returncode} with a wrong expectation, not 1")
            expect("**MISMATCH**" in p.stdout and "MISMATCH: grad-wrong: expected refines, got "
                   "fails: unmapped at sum_1" in p.stderr, "the mismatch is not marked")
            expect(os.listdir(bench_tmp) == [], "temporary files left behind")
            with open(out2) as f:
                got = json.load(f)["rows"]
            rows = [(r["case"], r["origin"], r["root"], r["match"], r["verdict"], r["node"])
                    for r in got]
            want = [("bug_grad_accumulation", "real", os.path.abspath(rg), True, "fails", "sum_1"),
                    ("grad-wrong", "sheet", os.path.abspath(rg), False, "fails", "sum_1"),
                    ("grad-dumps", "dumps", dd, True, "fails", "sum_1"),
                    ("gpt-tp2-l1", "dumps", got[-1]["root"], True, "refines", None)]
            expect(rows == want, f"rows {rows}, not {want}")
            # --scale 2x1: generated into the benchmark's own temporary folder,
            # a synthetic capture of the configuration GraphGuard timed at 13.6 s
            syn = got[-1]
            expect(syn["root"].startswith(bench_tmp + os.sep) and
                   syn["root"].endswith(os.sep + "gpt-tp2-l1"), f"--scale root {syn['root']}")
            expect(syn["synthetic"] is True and syn["config"] == ["gpt", 2, 1] and
                   syn["graphguard_s"] == 13.6 and syn["speedup"] > 0,
                   f"--scale 2x1: {syn['synthetic']} {syn['config']} {syn['graphguard_s']}")
            expect("| 13.6* |" in p.stdout, "the synthetic row's published time is not starred")

            # 3. bad usage
            empty = os.path.join(priv, "empty")
            os.mkdir(empty)
            for args, word in ((["--runs", "0"], "--runs"),
                               (["--case", "no-such-case"], "no-such-case"),
                               (["--dumps-dir", empty], "sheet.json")):
                p = run(script, exe, rg, bench_tmp, args)
                expect(p.returncode == 2 and word in p.stderr,
                       f"{args}: exit {p.returncode}, stderr {p.stderr.strip()!r}")
        except Fail as e:
            print(f"FAIL: {e}")
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
