#!/usr/bin/env bash
# The one command: springsim against its Taichi peer (Vulkan) side by side on the same adapter, interleaved,
# with the ratios. Run from anywhere; options go to run.py (--rounds N, --rows a,b, --springsim PATH).
#
# Taichi: the python3 on PATH if it imports taichi, else a venv under target/peers/venv with
# taichi==1.7.4 installed by pip. springsim: $SPRINGSIM_BIN, else target/release/springsim, else
# target/debug/springsim, else `cargo build --release --features cli` builds it.
# The Vulkan device: both sides take the first Vulkan adapter; on a machine with a GPU and lavapipe set
# WGPU_ADAPTER_NAME=llvmpipe (springsim) and make sure Taichi sees the same one (VK_ICD_FILENAMES).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py=python3
if ! "$py" -c 'import taichi' >/dev/null 2>&1; then
    venv="$root/target/peers/venv"
    if [ ! -x "$venv/bin/python" ]; then
        echo "run.sh: no taichi for $py; installing taichi==1.7.4 into $venv" >&2
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet taichi==1.7.4 numpy
    fi
    py="$venv/bin/python"
fi
if [ -z "${SPRINGSIM_BIN:-}" ] && [ ! -x "$root/target/release/springsim" ] && [ ! -x "$root/target/debug/springsim" ]; then
    (cd "$root" && cargo build --release --features cli --bin springsim)
fi
export WGPU_BACKEND="${WGPU_BACKEND:-vulkan}"
exec "$py" "$here/run.py" --python "$py" "$@"
