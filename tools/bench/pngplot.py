"""pngplot.py -- line charts written as PNG with the Python standard library
only (zlib), for tools/bench/scaling.py: /usr/bin/python3 has no
matplotlib, and the benchmark adds no dependency.

    fig = Figure(900, 420)
    ax = fig.axes(60, 30, 400, 330, "layers", "CPU s", logx=True, logy=True)
    ax.line([(1, 0.2), (126, 3.0)], colour=(200, 0, 0), dashed=False, label="TP 8")
    fig.save("out.png")

An axes has a linear or base-10 logarithmic scale on each side, ticks at
the given values (by default the powers of ten, or five even steps), and
a legend of its labelled lines.  Text uses a 5x7 bitmap font of the
printable ASCII letters, digits and a few signs (anything else prints as
a box).  Pixels are RGB, drawn without antialiasing; PNG output is one
IDAT of filter-0 scanlines."""
import math
import struct
import zlib

# 5x7 glyphs: 7 rows of 5 bits (bit 4 = leftmost column)
_FONT = {
    " ": [0, 0, 0, 0, 0, 0, 0],
    "0": [14, 17, 19, 21, 25, 17, 14], "1": [4, 12, 4, 4, 4, 4, 14],
    "2": [14, 17, 1, 2, 4, 8, 31], "3": [31, 2, 4, 2, 1, 17, 14],
    "4": [2, 6, 10, 18, 31, 2, 2], "5": [31, 16, 30, 1, 1, 17, 14],
    "6": [6, 8, 16, 30, 17, 17, 14], "7": [31, 1, 2, 4, 8, 8, 8],
    "8": [14, 17, 17, 14, 17, 17, 14], "9": [14, 17, 17, 15, 1, 2, 12],
    ".": [0, 0, 0, 0, 0, 12, 12], ",": [0, 0, 0, 0, 12, 4, 8],
    "-": [0, 0, 0, 31, 0, 0, 0], "+": [0, 4, 4, 31, 4, 4, 0],
    "(": [2, 4, 8, 8, 8, 4, 2], ")": [8, 4, 2, 2, 2, 4, 8],
    "/": [1, 1, 2, 4, 8, 16, 16], ":": [0, 12, 12, 0, 12, 12, 0],
    "=": [0, 0, 31, 0, 31, 0, 0], "x": [0, 0, 17, 10, 4, 10, 17],
    "%": [24, 25, 2, 4, 8, 19, 3], "_": [0, 0, 0, 0, 0, 0, 31],
    "A": [14, 17, 17, 31, 17, 17, 17], "B": [30, 17, 17, 30, 17, 17, 30],
    "C": [14, 17, 16, 16, 16, 17, 14], "D": [28, 18, 17, 17, 17, 18, 28],
    "E": [31, 16, 16, 30, 16, 16, 31], "F": [31, 16, 16, 30, 16, 16, 16],
    "G": [14, 17, 16, 23, 17, 17, 15], "H": [17, 17, 17, 31, 17, 17, 17],
    "I": [14, 4, 4, 4, 4, 4, 14], "J": [7, 2, 2, 2, 2, 18, 12],
    "K": [17, 18, 20, 24, 20, 18, 17], "L": [16, 16, 16, 16, 16, 16, 31],
    "M": [17, 27, 21, 21, 17, 17, 17], "N": [17, 17, 25, 21, 19, 17, 17],
    "O": [14, 17, 17, 17, 17, 17, 14], "P": [30, 17, 17, 30, 16, 16, 16],
    "Q": [14, 17, 17, 17, 21, 18, 13], "R": [30, 17, 17, 30, 20, 18, 17],
    "S": [15, 16, 16, 14, 1, 1, 30], "T": [31, 4, 4, 4, 4, 4, 4],
    "U": [17, 17, 17, 17, 17, 17, 14], "V": [17, 17, 17, 17, 17, 10, 4],
    "W": [17, 17, 17, 21, 21, 21, 10], "X": [17, 17, 10, 4, 10, 17, 17],
    "Y": [17, 17, 17, 10, 4, 4, 4], "Z": [31, 1, 2, 4, 8, 16, 31],
    "a": [0, 0, 14, 1, 15, 17, 15], "b": [16, 16, 22, 25, 17, 17, 30],
    "c": [0, 0, 14, 16, 16, 17, 14], "d": [1, 1, 13, 19, 17, 17, 15],
    "e": [0, 0, 14, 17, 31, 16, 14], "f": [6, 9, 8, 28, 8, 8, 8],
    "g": [0, 15, 17, 17, 15, 1, 14], "h": [16, 16, 22, 25, 17, 17, 17],
    "i": [4, 0, 12, 4, 4, 4, 14], "j": [2, 0, 6, 2, 2, 18, 12],
    "k": [16, 16, 18, 20, 24, 20, 18], "l": [12, 4, 4, 4, 4, 4, 14],
    "m": [0, 0, 26, 21, 21, 17, 17], "n": [0, 0, 22, 25, 17, 17, 17],
    "o": [0, 0, 14, 17, 17, 17, 14], "p": [0, 0, 30, 17, 30, 16, 16],
    "q": [0, 0, 13, 19, 15, 1, 1], "r": [0, 0, 22, 25, 16, 16, 16],
    "s": [0, 0, 14, 16, 14, 1, 30], "t": [8, 8, 28, 8, 8, 9, 6],
    "u": [0, 0, 17, 17, 17, 19, 13], "v": [0, 0, 17, 17, 17, 10, 4],
    "w": [0, 0, 17, 17, 21, 21, 10], "y": [0, 0, 17, 17, 15, 1, 14],
    "z": [0, 0, 31, 2, 4, 8, 31],
}
_BOX = [31, 17, 17, 17, 17, 17, 31]

BLACK, GREY, LIGHT, WHITE = (0, 0, 0), (120, 120, 120), (225, 225, 225), (255, 255, 255)


class Figure:
    def __init__(self, width, height):
        self.w, self.h = width, height
        self.px = bytearray(WHITE * (width * height))

    def set(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = 3 * (y * self.w + x)
            self.px[i:i + 3] = bytes(c)

    def seg(self, x0, y0, x1, y1, c, width=1, dashed=False):
        """A segment (Bresenham), WIDTH pixels thick; dashed: 6 on, 4 off."""
        x0, y0, x1, y1 = int(round(x0)), int(round(y0)), int(round(x1)), int(round(y1))
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err, step = dx + dy, 0
        while True:
            if not dashed or step % 10 < 6:
                for ox in range(width):
                    for oy in range(width):
                        self.set(x0 + ox - width // 2, y0 + oy - width // 2, c)
            step += 1
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, c=BLACK, anchor="left", vertical=False):
        """S with its top-left corner at (x, y) (anchor "left"), centred on x
        ("centre") or ending at x ("right"); vertical: rotated to read
        bottom to top, (x, y) then its bottom-left."""
        n = 6 * len(s) - 1
        off = {"left": 0, "centre": n // 2, "right": n}[anchor]
        for k, ch in enumerate(s):
            rows = _FONT.get(ch, _BOX)
            for r, bits in enumerate(rows):
                for col in range(5):
                    if bits & (16 >> col):
                        u = 6 * k + col - off
                        if vertical:
                            self.set(x + r, y - u, c)
                        else:
                            self.set(x + u, y + r, c)

    def axes(self, x, y, w, h, xlabel, ylabel, logx=False, logy=False, title=None):
        return Axes(self, x, y, w, h, xlabel, ylabel, logx, logy, title)

    def save(self, path):
        raw = bytearray()
        for row in range(self.h):
            raw.append(0)
            raw += self.px[3 * self.w * row:3 * self.w * (row + 1)]

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(bytes(raw), 9)))
            f.write(chunk(b"IEND", b""))


def _fmt(v):
    if v >= 100 or v == int(v):
        return f"{v:.0f}"
    return f"{v:g}"


class Axes:
    def __init__(self, fig, x, y, w, h, xlabel, ylabel, logx, logy, title):
        self.fig, self.x, self.y, self.w, self.h = fig, x, y, w, h
        self.xlabel, self.ylabel, self.logx, self.logy, self.title = xlabel, ylabel, logx, logy, title
        self.lines = []

    def line(self, pts, colour, dashed=False, label=None, marks=True):
        self.lines.append((sorted(pts), colour, dashed, label, marks))

    def _range(self, vals, log):
        lo, hi = min(vals), max(vals)
        if log:
            lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
        else:
            lo = 0.0
            hi = hi * 1.1 if hi > 0 else 1.0
        return lo, hi

    def _map(self, v, lo, hi, log):
        if log:
            return (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        return (v - lo) / (hi - lo)

    def draw(self, xticks=None, yticks=None, xlim=None, legend="upper left"):
        """Draw the axes and lines; XLIM (lo, hi) fixes the x range (else
        the data's, widened to powers of ten on a log scale); ticks outside
        the range are left out.  LEGEND: "upper left" or "lower right"."""
        if legend not in ("upper left", "lower right"):
            raise ValueError(f"legend {legend!r}: upper left or lower right")
        f = self.fig
        xs = [p[0] for l in self.lines for p in l[0]]
        ys = [p[1] for l in self.lines for p in l[0]]
        x0, x1 = xlim if xlim else self._range(xs, self.logx)
        y0, y1 = self._range(ys, self.logy)
        if xticks is None:
            xticks = self._ticks(x0, x1, self.logx)
        if yticks is None:
            yticks = self._ticks(y0, y1, self.logy)
        xticks = [t for t in xticks if x0 <= t <= x1]
        yticks = [t for t in yticks if y0 <= t <= y1]

        def px(v):
            return self.x + self._map(v, x0, x1, self.logx) * self.w

        def py(v):
            return self.y + self.h - self._map(v, y0, y1, self.logy) * self.h

        for t in xticks:
            f.seg(px(t), self.y, px(t), self.y + self.h, LIGHT)
            f.seg(px(t), self.y + self.h, px(t), self.y + self.h + 4, BLACK)
            f.text(int(px(t)), self.y + self.h + 8, _fmt(t), anchor="centre")
        for t in yticks:
            f.seg(self.x, py(t), self.x + self.w, py(t), LIGHT)
            f.seg(self.x - 4, py(t), self.x, py(t), BLACK)
            f.text(self.x - 8, int(py(t)) - 3, _fmt(t), anchor="right")
        f.seg(self.x, self.y, self.x, self.y + self.h, BLACK)
        f.seg(self.x, self.y + self.h, self.x + self.w, self.y + self.h, BLACK)
        f.seg(self.x, self.y, self.x + self.w, self.y, BLACK)
        f.seg(self.x + self.w, self.y, self.x + self.w, self.y + self.h, BLACK)
        f.text(self.x + self.w // 2, self.y + self.h + 24, self.xlabel, anchor="centre")
        f.text(self.x - 48, self.y + self.h // 2, self.ylabel, anchor="centre", vertical=True)
        if self.title:
            f.text(self.x + self.w // 2, self.y - 14, self.title, anchor="centre")
        labels = [l for l in self.lines if l[3]]
        lx, ly = self.x + 8, self.y + 8
        if legend == "lower right":
            width = max(len(l[3]) for l in labels) * 6 + 32 if labels else 0
            lx, ly = self.x + self.w - 8 - width, self.y + self.h - 8 - 12 * len(labels)
        for pts, colour, dashed, label, marks in self.lines:
            for (a, b), (c, d) in zip(pts, pts[1:]):
                f.seg(px(a), py(b), px(c), py(d), colour, width=2, dashed=dashed)
            if marks:
                for a, b in pts:
                    for ox in range(-2, 3):
                        for oy in range(-2, 3):
                            f.set(int(round(px(a))) + ox, int(round(py(b))) + oy, colour)
            if label:
                f.seg(lx, ly + 3, lx + 18, ly + 3, colour, width=2, dashed=dashed)
                f.text(lx + 24, ly, label)
                ly += 12

    @staticmethod
    def _ticks(lo, hi, log):
        if log:
            out, v = [], lo
            while v <= hi * 1.0001:
                out.append(v)
                v *= 10
            return out
        return [lo + (hi - lo) * i / 5 for i in range(6)]
