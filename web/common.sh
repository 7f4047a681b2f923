# Shared by web/test.sh and web/bench.sh (sourced, from web/): the page built (or reused), the browser
# driver's packages, and dist/ served on a free port of 127.0.0.1 until the calling script exits.

# Builds dist/ when it is missing or REBUILD=1.
ensure_dist() {
  if [ ! -f dist/springsim_web_bg.wasm ] || [ "${REBUILD:-0}" = 1 ]; then
    ./build.sh
  fi
}

# Installs puppeteer-core from package-lock.json when missing (it drives the system's Chromium).
ensure_npm() {
  if [ ! -d node_modules/puppeteer-core ]; then
    npm ci --no-audit --no-fund
  fi
}

# Serves dist/ on 127.0.0.1 and sets $port; the server is stopped when the script exits. Its log goes
# to $1.
serve_dist() {
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  python3 -m http.server --bind 127.0.0.1 "$port" --directory dist >"$1" 2>&1 &
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
}
