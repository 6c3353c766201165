#!/usr/bin/env python3
"""run-install.py BUILD SRC CC SANITIZE -- shardcheck as an installed library.

`meson install --destdir` of BUILD into a temporary folder must hold the
shared library (exporting the sc_ API only), the public headers,
shardcheck.pc, the CLI, the lemma files, the Python tools and their
commands, the man page and the bash completion.  examples/embed.c is then
built against that install through pkg-config (shardcheck.pc's prefix
pointed at the DESTDIR copy) and run: exit 0 on models/mlp-tp2 (refines),
1 on models/mlp-tp2-bugs/extra-scaling.json (fails), 2 on a missing file.
SANITIZE is the build's b_sanitize: a sanitized library needs a sanitized
program."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    print("$", " ".join(cmd), "->", r.returncode)
    return r


def main():
    build, src, cc, sanitize = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as dest:
        r = run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", dest])
        if r.returncode != 0:
            fail(f"meson install: {r.stdout[-2000:]} {r.stderr[-2000:]}")
        pcs = glob.glob(os.path.join(dest, "**", "pkgconfig", "shardcheck.pc"), recursive=True)
        if len(pcs) != 1:
            fail(f"shardcheck.pc installed {len(pcs)} times")
        libdir = os.path.dirname(os.path.dirname(pcs[0]))
        prefix = None
        for line in open(pcs[0]):
            if line.startswith("prefix="):
                prefix = line.strip().split("=", 1)[1]
        root = dest + prefix
        want = [
            os.path.join(libdir, "libshardcheck.so"),
            os.path.join(root, "include", "shardcheck", "report.h"),
            os.path.join(root, "include", "shardcheck", "infer.h"),
            os.path.join(root, "bin", "shardcheck"),
            os.path.join(root, "bin", "shardcheck-export"),
            os.path.join(root, "bin", "shardcheck-fx2bundle"),
            os.path.join(root, "bin", "shardcheck-symbolize"),
            os.path.join(root, "share", "shardcheck", "lemmas", "matmul.lemma"),
            os.path.join(root, "share", "shardcheck", "tools", "fx2bundle.py"),
            os.path.join(root, "share", "shardcheck", "tools", "export", "shardcheck_export",
                         "cli.py"),
            os.path.join(root, "share", "man", "man1", "shardcheck.1"),
            os.path.join(root, "share", "bash-completion", "completions", "shardcheck"),
        ]
        for p in want:
            if not os.path.exists(p):
                fail(f"not installed: {os.path.relpath(p, dest)}")
        for h in glob.glob(os.path.join(src, "include", "shardcheck", "*.h")):
            if not os.path.exists(os.path.join(root, "include", "shardcheck", os.path.basename(h))):
                fail(f"public header {os.path.basename(h)} not installed")
        if shutil.which("nm"):
            syms = run(["nm", "-D", "--defined-only", os.path.join(libdir, "libshardcheck.so")])
            names = [l.split()[-1] for l in syms.stdout.splitlines() if l.strip()]
            stray = [n for n in names if not n.startswith("sc_")]
            if stray or not names:
                fail(f"libshardcheck exports more than the sc_ API: {stray[:10]}")
            print(len(names), "symbols exported, all sc_")

        # pkg-config against the DESTDIR copy: shardcheck.pc with its
        # prefix moved there, the system's .pc files for glib as usual
        pcdir = os.path.join(dest, "pc")
        os.makedirs(pcdir)
        with open(pcs[0]) as f, open(os.path.join(pcdir, "shardcheck.pc"), "w") as g:
            for line in f:
                g.write(f"prefix={root}\n" if line.startswith("prefix=") else line)
        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = pcdir + os.pathsep + env.get("PKG_CONFIG_PATH", "")
        flags = run(["pkg-config", "--cflags", "--libs", "shardcheck"], env=env)
        if flags.returncode != 0:
            fail(f"pkg-config: {flags.stderr}")
        lemmadir = run(["pkg-config", "--variable=lemmadir", "shardcheck"], env=env).stdout.strip()
        if not os.path.isdir(lemmadir):
            fail(f"pkg-config's lemmadir {lemmadir} is not the installed lemma folder")
        exe = os.path.join(dest, "embed")
        san = [f"-fsanitize={sanitize}"] if sanitize not in ("", "none") else []
        r = run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *san,
                 os.path.join(src, "examples", "embed.c"), *flags.stdout.split(), "-o", exe])
        if r.returncode != 0:
            fail(f"examples/embed.c does not build against the install: {r.stderr[-3000:]}")
        env["LD_LIBRARY_PATH"] = libdir
        env["SC_LEMMA_DIR"] = lemmadir
        env.setdefault("LSAN_OPTIONS", "suppressions=" + os.path.join(src, "tests", "lsan.supp"))
        for bundle, code in (("models/mlp-tp2/bundle.json", 0),
                             ("models/mlp-tp2-bugs/extra-scaling.json", 1),
                             ("models/no-such-bundle.json", 2)):
            r = run([exe, os.path.join(src, bundle)], env=env)
            print(r.stdout[:600], r.stderr[:600])
            if r.returncode != code:
                fail(f"embed {bundle}: exit {r.returncode}, expected {code}")
        ldd = run(["ldd", exe], env=env)
        if libdir not in ldd.stdout:
            fail(f"embed does not use the installed library: {ldd.stdout}")
    print("PASS")


if __name__ == "__main__":
    main()
