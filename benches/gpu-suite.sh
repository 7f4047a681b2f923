#!/usr/bin/env bash
# The GPU matrix that matters (issue #15 item 6), on whatever adapter wgpu picks here: the curtain
# (81 x 81) and the 256^2, 512^2 and 1024^2 cloths x every GPU method (local/global with each GPU
# global solve and the host's Cholesky step), each run with the cost model and GPU timestamps
# (`springsim bench --timestamps --format markdown`), gathered into one markdown table.
#
# docs/PERFORMANCE.md has its current table on an NVIDIA H200, with the command that made it.
#
# A run that the adapter refuses (a buffer over its limits, no adapter, a failed solve) becomes a row
# naming the refusal; the script goes on. A run that diverges keeps its row and gets a note.
#
# From a fresh clone:   benches/gpu-suite.sh            (builds the release binary first)
# Settings (environment):
#   SUITE_SIZES    which rows: "curtain 256 512 1024" (default); e.g. SUITE_SIZES=curtain for a quick run
#   SUITE_METHODS  which methods (default: all below, by label)
#   SUITE_FRAMES   timed frames per run (default 10); SUITE_WARMUP warm-up frames (default 2)
#   SUITE_SUSTAINED  frames stepped back to back after the timed ones (`--sustained`, default 100, as many
#                  as start within 5 s; 0: none): the "sustained ms/frame" column, the figure a real-time
#                  loop sees (the timed frames leave the GPU idle while the host checks the state, and a
#                  GPU's power management may keep an idling device slow; it took about a second of load
#                  on an H200)
#   SUITE_TIMEOUT  seconds per run before it is given up as a row (default 1800)
#   SUITE_OUT      the table's file (default benches/gpu-suite.md; also printed)
#   SUITE_KERNEL_TIMES=1  time every dispatch (`--kernel-times` instead of `--timestamps`) and add each
#                  run's GPU time per kernel after the table (each timestamp waits for the work before it)
#   SUITE_PROFILE  cargo profile of the binary: release (default) or dev (opt-level 1, quicker to build;
#                  for checking the script, not for figures)
#   SUITE_BIN      a springsim binary built elsewhere (no cargo on the machine that runs the suite);
#                  the script then builds nothing
#   WGPU_BACKEND, WGPU_ADAPTER_NAME   pick the adapter (see README); CARGO_BUILD_JOBS limits the build
set -u
cd "$(dirname "$0")/.."
SIZES=${SUITE_SIZES:-"curtain 256 512 1024"}
FRAMES=${SUITE_FRAMES:-10}
WARMUP=${SUITE_WARMUP:-2}
SUSTAINED=${SUITE_SUSTAINED:-100}
TIMEOUT=${SUITE_TIMEOUT:-1800}
OUT=${SUITE_OUT:-benches/gpu-suite.md}
# label and the bench options of each method
ALL_METHODS="explicit-euler symplectic-euler midpoint rk4 leu implicit-euler local-global-cholesky local-global-cg local-global-chebyshev local-global-cg-multigrid local-global-chebyshev-multigrid"
METHODS=${SUITE_METHODS:-$ALL_METHODS}

method_args() {
    case "$1" in
        local-global-cholesky) echo "--method local-global --global cholesky" ;;
        local-global-cg) echo "--method local-global --global cg" ;;
        local-global-chebyshev) echo "--method local-global --global chebyshev" ;;
        local-global-cg-multigrid) echo "--method local-global --global cg --preconditioner multigrid" ;;
        local-global-chebyshev-multigrid) echo "--method local-global --global chebyshev --preconditioner multigrid" ;;
        *) echo "--method $1" ;;
    esac
}

PROFILE=${SUITE_PROFILE:-release}
if [ -n "${SUITE_BIN:-}" ]; then
    BIN=$SUITE_BIN
else
    echo "building the $PROFILE binary..." >&2
    cargo build --profile "$PROFILE" --bin springsim >&2 || { echo "gpu-suite: the build failed" >&2; exit 1; }
    if [ "$PROFILE" = dev ]; then BIN=target/debug/springsim; else BIN=target/$PROFILE/springsim; fi
fi

# the table's header (a CPU run of a tiny scene: it needs no adapter)
HEADER=$("$BIN" bench --scene rope --size 4 --backend cpu --frames 1 --format markdown | head -n 2)
COLS=$(($(head -n 1 <<<"$HEADER" | tr -cd '|' | wc -c) - 1))
ROWS=""
NOTES=""
MACHINE=""
SOFTWARE=""
TIMING=--timestamps
[ "${SUITE_KERNEL_TIMES:-0}" = 1 ] && TIMING=--kernel-times
KTABLES=""
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for size in $SIZES; do
    if [ "$size" = curtain ]; then scene_args="--scene curtain"; else scene_args="--scene cloth --size $size"; fi
    for m in $METHODS; do
        echo "gpu-suite: $size $m" >&2
        # shellcheck disable=SC2046
        timeout "$TIMEOUT" "$BIN" bench $scene_args $(method_args "$m") --backend gpu --frames "$FRAMES" --warmup "$WARMUP" --sustained "$SUSTAINED" \
            "$TIMING" --format markdown >"$TMP/out" 2>"$TMP/err"
        rc=$?
        row=$(sed -n 3p "$TMP/out")
        if [ -n "$row" ] && [ "${row:0:1}" = "|" ]; then
            # name the global solve where the method is local/global
            case "$m" in local-global-*) row=$(sed "s/| local-global |/| local-global (${m#local-global-}) |/" <<<"$row") ;; esac
            ROWS+="$row"$'\n'
            [ -z "$MACHINE" ] && MACHINE=$(grep -m 1 '^CPU: ' "$TMP/out")
            # on a software rasterizer (lavapipe) the bench adds a line saying so under the machine's
            [ -z "$SOFTWARE" ] && SOFTWARE=$(grep -m 1 '^note: ' "$TMP/out")
            # --kernel-times: the per-kernel table between the row and the machine line
            KTABLES+=$(sed -n '4,/^CPU: /p' "$TMP/out" | sed '$d')$'\n'

            if [ "$rc" -ne 0 ]; then NOTES+="- $size $m: exit $rc: $(grep -v '^\s*$' "$TMP/err" | tail -n 1)"$'\n'; fi
        else
            if [ "$rc" -eq 124 ]; then why="timed out after ${TIMEOUT} s"; else why="refused (exit $rc): $(grep -v '^\s*$' "$TMP/err" | tail -n 1)"; fi
            why=${why//|/\\|}
            label="$size"; [ "$size" = curtain ] && label="–"
            cells="| ${size/#[0-9]*/cloth} | $label | – | – | $m | gpu |"
            # the refusal in the `finite` and `adapter` columns, dashes elsewhere
            for ((k = 7; k <= COLS; k++)); do
                case $k in
                    17) cells+=" **refused** |" ;;
                    18) cells+=" $why |" ;;
                    *) cells+=" – |" ;;
                esac
            done
            ROWS+="$cells"$'\n'
        fi
    done
done

{
    echo "$HEADER"
    printf '%s' "$ROWS"
    [ -n "$MACHINE" ] && printf '\n%s\n' "$MACHINE"
    [ -n "$SOFTWARE" ] && printf '\n%s\n' "$SOFTWARE"
    [ -n "$NOTES" ] && printf '\nNotes:\n%s' "$NOTES"
    [ -n "${KTABLES//[$'\n']/}" ] && printf '%s' "$KTABLES"
    methods=""; [ "$METHODS" != "$ALL_METHODS" ] && methods=" SUITE_METHODS=\"$METHODS\""
    kt=""; [ "$TIMING" = --kernel-times ] && kt=" SUITE_KERNEL_TIMES=1"
    printf '\nCommand: SUITE_SIZES="%s"%s%s SUITE_FRAMES=%s SUITE_WARMUP=%s SUITE_SUSTAINED=%s benches/gpu-suite.sh\n' "$SIZES" "$methods" "$kt" "$FRAMES" "$WARMUP" "$SUSTAINED"
} | tee "$OUT"
