#!/usr/bin/env bash
# How a frame's cost grows with the particle count, per method: measures `springsim bench` on the
# adapter wgpu picks here at a few sizes of the built-in cloth (and Liu's 81x81 curtain), writes the
# bench's own CSV rows (every row names its machine, adapter, driver and date) with a `label` column in
# front, then draws docs/scaling.svg from that CSV and the H200 figures in docs/scaling/h200.csv
# (docs/PERFORMANCE.md, "How a frame's cost grows", says where those come from).
#
#   docs/make-scaling.sh                  measure (lavapipe on a machine without a GPU), then draw
#   SCALING_PLOT_ONLY=1 docs/make-scaling.sh   redraw from the CSVs already there
#
# Settings (environment):
#   SCALING_SIZES    cloth sides, and "curtain" for Liu's 81x81 curtain, the H200's smallest row
#                    (default "16 32 curtain 64 128")
#   SCALING_METHODS  labels as in benches/gpu-suite.sh (default: all eleven)
#   SCALING_FRAMES   timed frames a run (default 3); SCALING_WARMUP (default 1)
#   SCALING_TIMEOUT  seconds a run before it is left out (default 600)
#   SCALING_BACKEND  bench's --backend (default gpu)
#   SCALING_CSV      the measured CSV (default docs/scaling/lavapipe.csv)
#   SCALING_BIN      a springsim binary (default: target/release/springsim, else target/debug/springsim,
#                    else `cargo build --release --no-default-features --features cli`)
#   WGPU_BACKEND, WGPU_ADAPTER_NAME   pick the adapter (e.g. vulkan, llvmpipe)
set -u
cd "$(dirname "$0")/.."
SIZES=${SCALING_SIZES:-"16 32 curtain 64 128"}
METHODS=${SCALING_METHODS:-"explicit-euler symplectic-euler midpoint rk4 leu implicit-euler local-global-cholesky local-global-cg local-global-chebyshev local-global-cg-multigrid local-global-chebyshev-multigrid"}
FRAMES=${SCALING_FRAMES:-3}
WARMUP=${SCALING_WARMUP:-1}
TIMEOUT=${SCALING_TIMEOUT:-600}
BACKEND=${SCALING_BACKEND:-gpu}
CSV=${SCALING_CSV:-docs/scaling/lavapipe.csv}

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

if [ -z "${SCALING_PLOT_ONLY:-}" ]; then
    T=${CARGO_TARGET_DIR:-target}
    BIN=${SCALING_BIN:-}
    if [ -z "$BIN" ]; then
        for b in "$T/release/springsim" "$T/debug/springsim"; do
            [ -x "$b" ] && BIN=$b && break
        done
    fi
    if [ -z "$BIN" ]; then
        cargo build --release --no-default-features --features cli || exit 1
        BIN=$T/release/springsim
    fi
    echo "binary: $BIN; load: $(uptime | sed 's/.*load average/load average/')" >&2
    mkdir -p "$(dirname "$CSV")"
    : >"$CSV"
    for size in $SIZES; do
        if [ "$size" = curtain ]; then scene="--scene curtain"; else scene="--scene cloth --size $size"; fi
        for label in $METHODS; do
            # shellcheck disable=SC2046,SC2086
            out=$(timeout "$TIMEOUT" "$BIN" bench $scene $(method_args "$label") --backend "$BACKEND" \
                --frames "$FRAMES" --warmup "$WARMUP" --divergence ignore --format csv 2>/dev/null)
            status=$?
            if [ $status -ne 0 ] || [ -z "$out" ]; then
                echo "$size $label: left out (status $status)" >&2
                continue
            fi
            [ -s "$CSV" ] || printf 'label,%s\n' "$(printf '%s\n' "$out" | head -1)" >>"$CSV"
            printf '%s\n' "$out" | tail -n +2 | sed "s/^/$label,/" >>"$CSV"
            echo "$size $label: done" >&2
        done
    done
    echo "load at the end: $(uptime | sed 's/.*load average/load average/')" >&2
fi
python3 docs/scaling/plot.py "$CSV" docs/scaling/h200.csv docs/scaling.svg
