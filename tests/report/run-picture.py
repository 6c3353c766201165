#!/usr/bin/env python3
"""run-picture.py EXE ROOT -- the report files of `check` end to end.

On a failing bundle of the repository, `check --html H --dot D` exits 1 and
writes both; Graphviz's `dot -Tsvg` accepts the DOT; headless Chromium
renders the HTML to a screenshot that is not blank and to a DOM that names
the failing node.  On a refining bundle the files are written and the exit
is 0.  Colour: none when piped, --color=always colours, NO_COLOR wins over
auto, a bad --color value exits 2.

Graphviz and Chromium are test dependencies (tools/setup.sh installs them):
when one is missing the test is skipped (exit 77), except under CI=true,
where it fails."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

FAILING = "models/mlp-tp2-bugs/extra-scaling.json"
FAILING_NODE = "mm_1"
REFINING = "models/mlp-tp2/bundle.json"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def need(tool):
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI") == "true":
            fail(f"{tool} is not installed (tools/setup.sh --deps installs it)")
        print(f"SKIP: {tool} is not installed (tools/setup.sh --deps installs it)")
        sys.exit(77)
    return path


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype = ihdr[0], ihdr[1], ihdr[2], ihdr[3]
    if depth != 8 or ctype not in (2, 6):
        fail(f"unexpected PNG format depth={depth} colour type={ctype}")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def check_files(exe, root, tmp):
    html, dot = os.path.join(tmp, "r.html"), os.path.join(tmp, "r.dot")
    r = subprocess.run([exe, "check", "--quiet", "--html", html, "--dot", dot,
                        os.path.join(root, FAILING)], capture_output=True, text=True, timeout=300)
    print("exit:", r.returncode, r.stderr[:2000])
    if r.returncode != 1:
        fail(f"check of a failing bundle exited {r.returncode}, expected 1")
    for p in (html, dot):
        if not os.path.exists(p) or os.path.getsize(p) == 0:
            fail(f"{p} was not written")
    if "\033[" in r.stdout:
        fail("colour in piped output")
    ok_html = os.path.join(tmp, "ok.html")
    ok_dot = os.path.join(tmp, "ok.dot")
    ok = subprocess.run([exe, "check", "--quiet", "--html", ok_html, "--dot", ok_dot,
                         os.path.join(root, REFINING)], capture_output=True, text=True, timeout=300)
    if ok.returncode != 0 or "refines" not in open(ok_html).read():
        fail(f"check --html of a refining bundle: exit {ok.returncode}")
    if "no failure to draw" not in open(ok_dot).read():
        fail("the DOT of a refining bundle draws something")
    bad = subprocess.run([exe, "check", "--quiet", "--html", os.path.join(tmp, "no", "such.html"),
                          os.path.join(root, REFINING)], capture_output=True, text=True, timeout=300)
    if bad.returncode != 2 or "--html: cannot write" not in bad.stderr:
        fail(f"an unwritable --html FILE: exit {bad.returncode}, {bad.stderr!r}")
    return html, dot


def check_colour(exe, root):
    path = os.path.join(root, FAILING)
    on = subprocess.run([exe, "check", "--quiet", "--color=always", path], capture_output=True,
                        text=True, timeout=300)
    if "\033[1;31mfails\033[0m" not in on.stdout:
        fail("--color=always does not colour the verdict")
    env = dict(os.environ, NO_COLOR="1")
    off = subprocess.run([exe, "check", "--quiet", "--color=auto", path], capture_output=True,
                         text=True, timeout=300, env=env)
    if "\033[" in off.stdout:
        fail("NO_COLOR with --color=auto still colours")
    bad = subprocess.run([exe, "check", "--color=sometimes", path], capture_output=True,
                         text=True, timeout=300)
    if bad.returncode != 2 or "--color: expected auto, always or never" not in bad.stderr:
        fail(f"--color=sometimes: exit {bad.returncode}, {bad.stderr!r}")


def check_dot(dot):
    exe = need("dot")
    r = subprocess.run([exe, "-Tsvg", dot], capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or "<svg" not in r.stdout:
        fail(f"dot -Tsvg rejects the graph: {r.stderr[:2000]}")
    if FAILING_NODE not in r.stdout:
        fail("the SVG from dot does not name the failing node")
    print("dot -Tsvg: ok,", len(r.stdout), "bytes")


def chromium(args, tmp):
    exe = need("chromium")
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--user-data-dir=" + os.path.join(tmp, "profile")]
    return subprocess.run(base + args, capture_output=True, text=True, timeout=180)


def check_html(html, tmp):
    url = "file://" + os.path.abspath(html)
    dom = chromium(["--dump-dom", url], tmp)
    if dom.returncode != 0:
        fail(f"chromium --dump-dom exited {dom.returncode}: {dom.stderr[-2000:]}")
    if f'id="failing-node">{FAILING_NODE}</code>' not in dom.stdout:
        fail("the rendered page does not name the failing node")
    if "<svg" not in dom.stdout:
        fail("the rendered page has no picture")
    png = os.path.join(tmp, "r.png")
    shot = chromium(["--screenshot=" + png, "--window-size=1200,1600", "--hide-scrollbars", url],
                    tmp)
    if shot.returncode != 0 or not os.path.exists(png):
        fail(f"chromium --screenshot exited {shot.returncode}: {shot.stderr[-2000:]}")
    w, h, rows = png_pixels(png)
    colours, ink = set(), 0
    for row in rows[::4]:
        for px in row[::4]:
            colours.add(px)
            if sum(px) < 600:
                ink += 1
    total = len(rows[::4]) * len(rows[0][::4])
    print(f"screenshot {w}x{h}: {len(colours)} colours, {100.0 * ink / total:.1f}% ink")
    if len(colours) < 8 or ink < total // 100:
        fail("the screenshot is blank")
    # the failing node is drawn red in the picture: some pixels are
    if not any(r > 150 and g < 90 and b < 90 for row in rows[::2] for (r, g, b) in row[::2]):
        fail("no red in the screenshot: the verdict and the failing node are not drawn")


def main():
    exe, root = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as tmp:
        html, dot = check_files(exe, root, tmp)
        check_colour(exe, root)
        check_dot(dot)
        check_html(html, tmp)
    print("PASS")


if __name__ == "__main__":
    main()
