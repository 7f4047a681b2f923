#!/usr/bin/env python3
"""How a frame's cost grows with the particle count: one log-log panel per method, a line per adapter.

    python3 docs/scaling/plot.py MEASURED.csv [MORE.csv ...] OUT.svg

Each CSV has a `label` column (the method, as benches/gpu-suite.sh names it), `particles`,
`ms_per_frame` and `adapter`; `finite` = false rows are left out. Python 3's standard library only
(docs/make-scaling.sh runs it).
"""
import csv
import math
import sys
from xml.sax.saxutils import escape

LABELS = [
    "explicit-euler", "symplectic-euler", "midpoint", "rk4", "leu", "implicit-euler",
    "local-global-cholesky", "local-global-cg", "local-global-chebyshev", "local-global-cg-multigrid", "local-global-chebyshev-multigrid",
]
COLOURS = ["#d95f02", "#1b9e77", "#7570b3", "#e7298a"]
W, H = 250, 190  # a panel
ML, MR, MT, MB = 52, 10, 24, 34  # its margins
COLS = 4


def short(adapter):
    name = adapter.split(" (")[0]
    return "lavapipe (llvmpipe)" if "llvmpipe" in name.lower() else name


def read(paths):
    series = {}  # adapter -> label -> [(particles, ms)]
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("finite", "true") != "true" or not row.get("ms_per_frame"):
                    continue
                s = series.setdefault(short(row["adapter"]), {})
                s.setdefault(row["label"], []).append((float(row["particles"]), float(row["ms_per_frame"])))
    for s in series.values():
        for pts in s.values():
            pts.sort()
    return series


def decades(lo, hi):
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    series = read(sys.argv[1:-1])
    pts = [p for s in series.values() for v in s.values() for p in v]
    if not pts:
        sys.exit("no rows to plot")
    x0, x1 = decades(min(p[0] for p in pts), max(p[0] for p in pts))
    y0, y1 = decades(min(p[1] for p in pts), max(p[1] for p in pts))
    rows = math.ceil((len(LABELS) + 1) / COLS)
    width, height = COLS * W, rows * H + 30
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="10">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]

    def sx(x, ox):
        return ox + ML + (math.log10(x) - x0) / (x1 - x0) * (W - ML - MR)

    def sy(y, oy):
        return oy + MT + (y1 - math.log10(y)) / (y1 - y0) * (H - MT - MB)

    for i, label in enumerate(LABELS):
        ox, oy = (i % COLS) * W, (i // COLS) * H
        out.append(f'<text x="{ox + ML}" y="{oy + 15}" font-size="12" font-weight="bold">{escape(label)}</text>')
        # grid and ticks, one a decade
        for d in range(x0, x1 + 1):
            x = sx(10**d, ox)
            out.append(f'<line x1="{x:.1f}" y1="{oy + MT}" x2="{x:.1f}" y2="{oy + H - MB}" stroke="#ddd"/>')
            out.append(f'<text x="{x:.1f}" y="{oy + H - MB + 12}" text-anchor="middle">1e{d}</text>')
        for d in range(y0, y1 + 1):
            y = sy(10**d, oy)
            out.append(f'<line x1="{ox + ML}" y1="{y:.1f}" x2="{ox + W - MR}" y2="{y:.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{ox + ML - 4}" y="{y + 3:.1f}" text-anchor="end">1e{d}</text>')
        if y0 <= math.log10(1000 / 60) <= y1:  # 60 frames a second
            y = sy(1000 / 60, oy)
            out.append(f'<line x1="{ox + ML}" y1="{y:.1f}" x2="{ox + W - MR}" y2="{y:.1f}" stroke="#999" stroke-dasharray="4 3"/>')
        out.append(f'<rect x="{ox + ML}" y="{oy + MT}" width="{W - ML - MR}" height="{H - MT - MB}" fill="none" stroke="#444"/>')
        out.append(f'<text x="{ox + ML + (W - ML - MR) / 2}" y="{oy + H - 8}" text-anchor="middle">particles</text>')
        out.append(f'<text transform="translate({ox + 12},{oy + MT + (H - MT - MB) / 2}) rotate(-90)" text-anchor="middle">ms a frame</text>')
        for k, (adapter, s) in enumerate(sorted(series.items())):
            p = s.get(label, [])
            colour = COLOURS[k % len(COLOURS)]
            if len(p) > 1:
                path = " ".join(f"{sx(x, ox):.1f},{sy(y, oy):.1f}" for x, y in p)
                out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
            for x, y in p:
                out.append(f'<circle cx="{sx(x, ox):.1f}" cy="{sy(y, oy):.1f}" r="2.5" fill="{colour}"/>')
    # the legend, in the last cell
    ox, oy = (len(LABELS) % COLS) * W, (len(LABELS) // COLS) * H
    for k, adapter in enumerate(sorted(series)):
        y = oy + MT + 14 + 18 * k
        out.append(f'<line x1="{ox + 20}" y1="{y}" x2="{ox + 44}" y2="{y}" stroke="{COLOURS[k % len(COLOURS)]}" stroke-width="2"/>')
        out.append(f'<text x="{ox + 50}" y="{y + 3}">{escape(adapter)}</text>')
    y = oy + MT + 14 + 18 * len(series)
    out.append(f'<line x1="{ox + 20}" y1="{y}" x2="{ox + 44}" y2="{y}" stroke="#999" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{ox + 50}" y="{y + 3}">60 frames a second</text>')
    out.append(
        f'<text x="10" y="{height - 10}">springsim bench, median ms a frame (one frame timed at a time), the built-in cloth '
        f'and Liu\'s 81x81 curtain; sources in docs/PERFORMANCE.md</text>'
    )
    out.append("</svg>")
    with open(sys.argv[-1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
