#!/usr/bin/env bash
# The page's frame times against the native build's: the curtain (SIZES, default "21 41") with every GPU
# method, in the form a page runs it (implicit Euler at the planned step, local/global's global step by
# the GPU's CG), timed on the page's WebGPU in headless Chromium (test/bench.mjs: frames pipelined as
# `springsim bench` pipelines them) and natively by `springsim bench --limits webgpu` on this machine's
# adapter, the same scene files, WARMUP (default 5) frames then FRAMES (default 20) timed. Prints a
# Markdown table of the medians and their ratio. A benchmark, not a test: nothing here passes or fails
# on speed.
#
# Needs: what web/test.sh needs.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)

source ./common.sh
ensure_dist
ensure_npm

sizes=${SIZES:-21 41}
warmup=${WARMUP:-5}
frames=${FRAMES:-20}
methods=(explicit-euler symplectic-euler midpoint rk4 leu implicit-euler local-global)
out=test-output/bench
rm -rf "$out"
mkdir -p "$out"
files=()
for n in $sizes; do
  for m in "${methods[@]}"; do
    case $m in
      implicit-euler) extra=', adaptive: false' ;;
      local-global) extra=', global: "cg"' ;;
      *) extra='' ;;
    esac
    f="$out/curtain-$n-$m.ron"
    cat >"$f" <<RON
// web/bench.sh: the ${n}x${n} curtain, $m, in the form a page runs it.
(
    about: "web/bench.sh: the ${n}x${n} curtain, $m",
    model: (builder: "curtain", size: $n),
    forces: (gravity: (0.0, -9.81, 0.0)),
    method: (name: "$m"$extra),
    frame_dt: 0.03333333333333333,
    frames: $frames,
)
RON
    files+=("$f")
  done
done

serve_dist "$out/server.log"
node test/bench.mjs "http://127.0.0.1:$port/?demo=off" "$warmup" "$frames" "${files[@]}" >"$out/page.jsonl"

cargo build --quiet --release --manifest-path "$root/Cargo.toml" --bin springsim
for f in "${files[@]}"; do
  "$root/target/release/springsim" bench --scene "$f" --backend gpu --limits webgpu --warmup "$warmup" --frames "$frames" \
    --format json >>"$out/native.jsonl"
done

python3 - "$out/page.jsonl" "$out/native.jsonl" <<'PY'
import json, sys
page = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
native = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
print(f"page: {page[0]['adapter']}; native: {native[0].get('adapter', '?')}")
print()
print("| curtain | method | page, ms/frame (median, IQR) | native, ms/frame (median) | page / native |")
print("|---|---|---|---|---|")
for p, n in zip(page, native):
    name = p["file"].rsplit("/", 1)[-1][len("curtain-"):-len(".ron")]
    size, method = name.split("-", 1)
    ratio = p["median_ms"] / n["ms_per_frame"]
    print(f"| {size}² | {method} | {p['median_ms']:.1f} ({p['q1_ms']:.1f}–{p['q3_ms']:.1f}) | {n['ms_per_frame']:.1f} | {ratio:.2f} |")
PY
