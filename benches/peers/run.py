#!/usr/bin/env python3
"""springsim against its Taichi peer, side by side, interleaved in one run; prints the ratios.

Four rows, each run `--rounds` times, springsim then Taichi, alternating (so both see the same load):

1. symplectic Euler substep, the 81x81 curtain (`--scene curtain`)
2. symplectic Euler substep, the 256x256 cloth, k = 1000 N/m (`--scene cloth --size 256 --stiffness 1000`)
3. Baraff-Witkin implicit Euler, 1 step + 10 Jacobi-PCG iterations, the curtain
4. the same on the 256x256 cloth

springsim's side is `springsim bench --format json`: its median frame time over the frames timed, divided by
the steps per frame (the GPU runs `steps_per_frame` steps in one submit per frame). The implicit rows run
`--preconditioner jacobi --cg-iterations 10 --cg-tolerance 0 --no-adaptive --divergence ignore` (the peer's
Jacobi-PCG; springsim's default for implicit Euler is its multigrid) (the whole budget, no adaptive retry,
no energy guard; the state must stay finite), as the peer does.
The first round's springsim run exports its model (`--export-model`) and the Taichi peer
(taichi_cloth.py) steps exactly that model. Per row: the median over the rounds of each side, and
ratio = springsim / Taichi (below 1: springsim faster). With `--baseline PATH` another springsim build
(e.g. the one before a change) runs too, interleaved in the same rounds, with its own ratio.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

IMPLICIT = ["--method", "implicit-euler", "--preconditioner", "jacobi", "--cg-iterations", "10", "--cg-tolerance", "0", "--no-adaptive", "--divergence", "ignore"]
ROWS = [
    # (key, label, springsim options, peer workload, springsim frames/warmup, peer reps/rounds/warmup)
    ("symplectic-81", "symplectic Euler substep, 81x81 curtain", ["--scene", "curtain"], "symplectic", (30, 3), (100, 5, 20)),
    (
        "symplectic-256",
        "symplectic Euler substep, 256x256, k = 1000",
        ["--scene", "cloth", "--size", "256", "--stiffness", "1000"],
        "symplectic",
        (3, 1),
        (50, 5, 10),
    ),
    ("implicit-81", "Baraff-Witkin, 1 step + 10 Jacobi-PCG iterations, 81x81", ["--scene", "curtain"] + IMPLICIT, "implicit", (30, 3), (20, 5, 3)),
    (
        "implicit-256",
        "the same, 256x256, k = 1000",
        ["--scene", "cloth", "--size", "256", "--stiffness", "1000"] + IMPLICIT,
        "implicit",
        (10, 2),
        (5, 3, 2),
    ),
]


def last_json(text, what):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit(f"run.py: {what} printed no JSON record:\n{text[-2000:]}")


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"run.py: {what} failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    return last_json(p.stdout, what)


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description="springsim vs Taichi side by side")
    ap.add_argument("--springsim", default=os.environ.get("SPRINGSIM_BIN"), help="the springsim binary (default: target/release, else target/debug)")
    ap.add_argument("--baseline", help="another springsim binary to run interleaved (e.g. before a change)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per row")
    ap.add_argument("--rows", default=",".join(r[0] for r in ROWS), help="comma-separated: " + ", ".join(r[0] for r in ROWS))
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "peers"), help="where the exported models and the records go")
    ap.add_argument("--python", default=sys.executable, help="the Python with Taichi")
    ap.add_argument("--arch", default="vulkan", help="Taichi's backend: vulkan (the same API as springsim's) or cuda")
    args = ap.parse_args()

    exe = args.springsim
    if not exe:
        for profile in ("release", "debug"):
            cand = os.path.join(ROOT, "target", profile, "springsim")
            if os.path.exists(cand):
                exe = cand
                break
    if not exe or not shutil.which(exe) and not os.path.exists(exe):
        raise SystemExit("run.py: no springsim binary: build one with `cargo build --release --features cli` or pass --springsim")
    os.makedirs(args.out, exist_ok=True)
    peer = os.path.join(HERE, "taichi_cloth.py")
    wanted = args.rows.split(",")
    rows = [r for r in ROWS if r[0] in wanted]
    if len(rows) != len(wanted):
        raise SystemExit(f"run.py: unknown row in --rows {args.rows}")

    print(f"# springsim: {exe}", flush=True)
    print(f"# load at start: {load()}  ({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())})", flush=True)
    if args.baseline:
        print(f"# baseline: {args.baseline}", flush=True)
    results = {r[0]: {"springsim": [], "baseline": [], "taichi": [], "spring_rec": None, "peer_rec": None} for r in rows}
    for rnd in range(args.rounds):
        for key, label, opts, workload, (frames, warmup), (reps, prounds, pwarm) in rows:
            model = os.path.join(args.out, f"{key}.json")
            cmd = [exe, "bench", *opts, "--frames", str(frames), "--warmup", str(warmup), "--format", "json"]
            if rnd == 0:
                cmd += ["--export-model", model]
            s = run(cmd, f"springsim ({key})")
            if not s.get("finite", True) or s.get("diverged"):
                raise SystemExit(f"run.py: springsim's {key} run did not stay finite: {s.get('diverged')}")
            ms = s["ms_per_frame"] / s["steps_per_frame"]
            results[key]["springsim"].append(ms)
            results[key]["spring_rec"] = s
            base = ""
            if args.baseline:
                bcmd = [args.baseline, "bench", *opts, "--frames", str(frames), "--warmup", str(warmup), "--format", "json"]
                br = run(bcmd, f"baseline springsim ({key})")
                bms = br["ms_per_frame"] / br["steps_per_frame"]
                results[key]["baseline"].append(bms)
                base = f"baseline {bms:.3f} ms, "
            pcmd = [args.python, peer, model, "--workload", workload, "--reps", str(reps), "--rounds", str(prounds), "--warmup", str(pwarm), "--arch", args.arch]
            t = run(pcmd, f"taichi ({key})")
            if not t["finite"]:
                raise SystemExit(f"run.py: the Taichi peer's {key} run did not stay finite")
            results[key]["taichi"].append(t["ms_median"])
            results[key]["peer_rec"] = t
            print(
                f"round {rnd + 1}/{args.rounds} {key}: {base}springsim {ms:.3f} ms ({s['dispatches_per_frame'] / s['steps_per_frame']:.0f} dispatches/step),"
                f" taichi {t['ms_median']:.3f} ms  [load {load()}]",
                flush=True,
            )

    first = next(iter(results.values()))["spring_rec"]
    print()
    print(f"adapter: {first['adapter']}; driver: {first['driver']}; cpu: {first['cpu']}, {first['threads']} threads")
    print(f"taichi {next(iter(results.values()))['peer_rec']['taichi']} (asked arch={args.arch}, ran on {next(iter(results.values()))['peer_rec']['arch']}); rounds: {args.rounds}; load at end: {load()}")
    print()
    if args.baseline:
        print("| row | baseline ms (median; range) | baseline/Taichi | springsim ms (median; range) | Taichi ms (median; range) | ratio springsim/Taichi |")
        print("|---|---|---|---|---|---|")
    else:
        print("| row | springsim ms (median; range) | Taichi ms (median; range) | ratio springsim/Taichi |")
        print("|---|---|---|---|")
    summary = []
    for key, label, *_ in rows:
        s, t = results[key]["springsim"], results[key]["taichi"]
        ms, mt = statistics.median(s), statistics.median(t)
        ratio = ms / mt
        rec = {"row": key, "springsim_ms": ms, "taichi_ms": mt, "ratio": ratio, "springsim_all": s, "taichi_all": t}
        base = ""
        if args.baseline:
            b = results[key]["baseline"]
            mb = statistics.median(b)
            rec.update({"baseline_ms": mb, "baseline_ratio": mb / mt, "baseline_all": b})
            base = f" {mb:.3f} ({min(b):.3f}-{max(b):.3f}) | {mb / mt:.2f} |"
        summary.append(rec)
        print(f"| {label} |{base} {ms:.3f} ({min(s):.3f}-{max(s):.3f}) | {mt:.3f} ({min(t):.3f}-{max(t):.3f}) | **{ratio:.2f}** |")
    with open(os.path.join(args.out, "ratios.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
