#!/usr/bin/env bash
# Issue 40: the three ways Pitlane runs a bundled model, side by side in one run per model
# (results in docs/PERFORMANCE.md, "NativeRT vs TorchScript vs AOTInductor on the bundled
# models"). Each preset under bench/formats/ has three arms on the same seeded weights, one
# intra-op thread, jemalloc, batch 1, the model's own input:
#   torchscript  <model>.pt, eval, inference_mode, jit freeze_optimize
#   nativert     <model>.exported.pt2 run as exported (compile none: libtorch's NativeRT)
#   aoti         <model>.exported.pt2 compiled by Pitlane into an AOTInductor package
#                (compile aoti, default Inductor options; the compile is cached, not timed)
# RUNS runs of each preset; each prints pitlane-cli's table (medians, ratios with 95 % CIs
# against the first arm, torchscript).
# Usage: bench/formats.sh [BUILD_DIR] [RUNS] [MODEL...]   (models: resnet18 transformer)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
RUNS="${2:-3}"
shift $(( $# > 2 ? 2 : $# ))
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(resnet18 transformer)
CLI="$BUILD/bin/pitlane-cli"
for model in "${MODELS[@]}"; do
  for r in $(seq 1 "$RUNS"); do
    echo "== $model, run $r of $RUNS ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))"
    "$CLI" run "$ROOT/bench/formats/$model.json" --db none --quiet
  done
done
