#!/usr/bin/env bash
# The browser test: builds web/dist/ (or reuses it; REBUILD=1 forces a build), serves it on 127.0.0.1,
# drives Debian's headless Chromium (WebGPU through SwiftShader) with test/browser.mjs and stops the
# server afterwards. The page runs the 21x21 curtain for 30 frames with symplectic Euler, implicit
# Euler and local/global on its WebGPU; the positions are compared with the native f64 reference
# (`springsim run --backend cpu-reference` on the same scene files, test/*.ron). Prints `N passed,
# M failed` and exits non-zero on any failure, a missing WebGPU adapter or a page error.
#
# Needs: what web/build.sh needs, node and npm (puppeteer-core, from package-lock.json), chromium.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)

if [ ! -f dist/springsim_web_bg.wasm ] || [ "${REBUILD:-0}" = 1 ]; then
  ./build.sh
fi
if [ ! -d node_modules/puppeteer-core ]; then
  npm ci --no-audit --no-fund
fi

out=test-output
rm -rf "$out"
mkdir -p "$out/reference"
springsim=(cargo run --quiet --manifest-path "$root/Cargo.toml" --bin springsim --)
for m in symplectic-euler implicit-euler local-global; do
  "${springsim[@]}" run "test/curtain-$m.ron" --backend cpu-reference --out "$out/reference/$m" >/dev/null
  # the same on the native GPU, for comparison (printed beside the page's error; none without an adapter)
  "${springsim[@]}" run "test/curtain-$m.ron" --backend gpu --out "$out/reference/$m-gpu" >/dev/null 2>&1 || true
done

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
python3 -m http.server --bind 127.0.0.1 "$port" --directory dist >"$out/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
python3 - "$port" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.1)
PY
node test/browser.mjs "http://127.0.0.1:$port/?demo=off" "$out/reference" "$out"
