#!/usr/bin/env bash
# Regenerates the README's pictures under docs/pictures/ with the demo's own offscreen renderer
# (`springsim demo --headless`: the window's pipelines drawn into an offscreen target):
#
#   curtain.png, flag.png, drape-sphere.png, folds.png   stills, 640x480
#   animation.gif                                        the flag in the wind, 480x360, a few seconds
#
# Usage: bash docs/make-pictures.sh
# Any adapter: WGPU_BACKEND / WGPU_ADAPTER_NAME pick it as for every springsim command (on a machine
# without a GPU, Mesa's lavapipe: WGPU_BACKEND=vulkan WGPU_ADAPTER_NAME=llvmpipe). CARGO_TARGET_DIR is
# honoured; SPRINGSIM_BIN=path/to/springsim uses that binary instead of building one. The scenes are
# the built-in ones (scenes/*.ron) with their own methods and settings, so the pictures follow them;
# the frames and sizes below are the only choices made here.
set -euo pipefail

cd "$(dirname "$0")/.."
out=docs/pictures
mkdir -p "$out"
start=$SECONDS

if [[ -n "${SPRINGSIM_BIN:-}" ]]; then
    # a springsim binary already built (any profile: the pictures are the adapter's work)
    bin=$SPRINGSIM_BIN
else
    echo "== cargo build --release"
    cargo build --release --quiet --bin springsim
    bin="${CARGO_TARGET_DIR:-target}/release/springsim"
fi

run() {
    echo "== springsim demo $*"
    local t=$SECONDS
    "$bin" demo --headless "$@"
    echo "   ($((SECONDS - t)) s)"
}

# The curtain (Liu et al.'s 81x81 cloth hung from two corners) at 3 s: fallen and swinging back up.
run --scene curtain --frames 90 --width 640 --height 480 --screenshot "$out/curtain.png"
# The flag (a cloth on a vertical pole in a 10 m/s wind) at 2.5 s: unfurled and rippling.
run --scene flag --frames 75 --width 640 --height 480 --screenshot "$out/flag.png"
# A free cloth dropped onto a sphere at 3 s: draped and settled.
run --scene drape-sphere --frames 90 --width 640 --height 480 --screenshot "$out/drape-sphere.png"
# A cloth dropped in four folds onto itself and the ground at 3 s: the layers resting apart.
run --scene folds --frames 90 --width 640 --height 480 --screenshot "$out/folds.png"
# The flag in the wind: frames 31-150 (after the first second, once it has unfurled), every second
# frame, 60 GIF frames 1/15 s apart: 4 s of simulated time played in real time, looping.
run --scene flag --frames 150 --animation "$out/animation.gif" --animation-frames 60 --animation-every 2 \
    --width 480 --height 360

echo "== pictures ($((SECONDS - start)) s in all)"
status=0
for f in curtain.png flag.png drape-sphere.png folds.png animation.gif; do
    p="$out/$f"
    if [[ ! -s "$p" ]]; then
        echo "missing: $p" >&2
        status=1
        continue
    fi
    printf '%-32s %9d bytes\n' "$p" "$(wc -c <"$p")"
done
limit=$((2 * 1024 * 1024))
if [[ -s "$out/animation.gif" ]] && (($(wc -c <"$out/animation.gif") > limit)); then
    echo "$out/animation.gif is over 2 MB ($limit bytes)" >&2
    status=1
fi
exit $status
