#!/usr/bin/env bash
# The browser test: builds web/dist/ (or reuses it; REBUILD=1 forces a build), serves it on 127.0.0.1,
# drives Debian's headless Chromium (WebGPU through SwiftShader) with test/browser.mjs and stops the
# server afterwards. The page runs the 21x21 curtain for 30 frames with symplectic Euler, implicit
# Euler and local/global on its WebGPU; the positions are compared with the native f64 reference
# (`springsim run --backend cpu-reference` on the same scene files, test/*.ron). Then the demo runs
# 90 frames as the page runs it (the curtain at 41x41), drawn on a texture of the canvas's size
# (test-output/web-demo.png): the cloth must cover at least 10% of the picture and the panel must be
# drawn; then again with the scene and the method switched half-way (to the flag and local/global).
# Prints `N passed, M failed` and exits non-zero on any failure, a missing WebGPU adapter or a page
# error.
#
# Needs: what web/build.sh needs, node and npm (puppeteer-core, from package-lock.json), chromium.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)

source ./common.sh
ensure_dist
ensure_npm

out=test-output
rm -rf "$out"
mkdir -p "$out/reference"
springsim=(cargo run --quiet --manifest-path "$root/Cargo.toml" --bin springsim --)
for m in symplectic-euler implicit-euler local-global; do
  "${springsim[@]}" run "test/curtain-$m.ron" --backend cpu-reference --out "$out/reference/$m" >/dev/null
  # the same on the native GPU, for comparison (printed beside the page's error; none without an adapter)
  "${springsim[@]}" run "test/curtain-$m.ron" --backend gpu --out "$out/reference/$m-gpu" >/dev/null 2>&1 || true
done

serve_dist "$out/server.log"
node test/browser.mjs "http://127.0.0.1:$port/?demo=off" "$out/reference" "$out"
