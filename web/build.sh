#!/usr/bin/env bash
# Builds the browser demo into web/dist/: index.html, springsim_web.js and springsim_web_bg.wasm, static
# files that any static host serves (`python3 -m http.server -d web/dist`, then open
# http://localhost:8000/?scene=flag&method=local-global).
#
# Needs a Rust toolchain that builds wasm32-unknown-unknown and the wasm-bindgen CLI at the version
# web/Cargo.toml pins (`cargo install wasm-bindgen-cli --version =0.2.130`). With rustup:
# `rustup target add wasm32-unknown-unknown`. Without it (Debian 12, as on CI): Debian's packages
# rustc-web, cargo-web, rust-web-src and lld-22 build the standard library for the target
# (-Zbuild-std), which this script uses when rustup has no wasm32 target.
set -euo pipefail
cd "$(dirname "$0")"

build_std=()
cargo=cargo
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  if [ ! -x /usr/bin/cargo ] || [ ! -x /usr/bin/rustc ]; then
    echo "web/build.sh: no wasm32 target: rustup target add wasm32-unknown-unknown, or apt-get install rustc-web cargo-web rust-web-src lld-22" >&2
    exit 1
  fi
  cargo=/usr/bin/cargo
  export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
  export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="${CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER:-/usr/lib/llvm-22/bin/wasm-ld}"
  build_std=(-Zbuild-std=std,panic_abort)
fi

pinned=$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' Cargo.toml)
if ! command -v wasm-bindgen >/dev/null || [ "$(wasm-bindgen --version | cut -d' ' -f2)" != "$pinned" ]; then
  echo "web/build.sh: needs wasm-bindgen $pinned: cargo install wasm-bindgen-cli --version =$pinned" >&2
  exit 1
fi

"$cargo" build --release --target wasm32-unknown-unknown "${build_std[@]}"
rm -rf dist
mkdir -p dist
wasm-bindgen --target web --no-typescript --out-dir dist target/wasm32-unknown-unknown/release/springsim_web.wasm
cp index.html dist/
wasm="dist/springsim_web_bg.wasm"
echo "web/build.sh: wrote dist/ ($(stat -c %s "$wasm") B of wasm, $(gzip -9c "$wasm" | wc -c) B gzipped)"
