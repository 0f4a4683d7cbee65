#!/usr/bin/env bash
# Issue 8's acceptance runs, on demand (results go in docs/PERFORMANCE.md):
#  1. A/A honesty: AA_RUNS runs of two identical arms on torchvision's resnet18 (conv + batch-norm)
#     at 3x64x64, eval, no_grad, one intra-op thread, system allocator, default run settings
#     apart from iters/blocks. Each verdict must say "no significant difference".
#  2. Power: REAL_RUNS runs of resnet18 (3x224x224) train+grad vs eval+inference_mode+freeze,
#     one thread, default run settings apart from iters/blocks. Each should be significant.
#  3. Cost: presets/default.json with run.processes 1 against the default, alternated, COST_RUNS
#     each (median wall seconds of the whole pitlane-cli run).
# Usage: bench/process_replicates.sh [BUILD_DIR] [AA_RUNS] [REAL_RUNS] [COST_RUNS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
AA_RUNS="${2:-10}"
REAL_RUNS="${3:-5}"
COST_RUNS="${4:-3}"
CLI="$BUILD/bin/pitlane-cli"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export PITLANE_DB=none

cat > "$TMP/aa.json" <<'JSON'
{"name": "A/A resnet18 3x64x64, one thread, system allocator", "model": "resnet18",
 "input": [{"shape": [3, 64, 64], "dtype": "float32"}],
 "run": {"iters": 200, "block_iters": 20},
 "arms": [{"name": "A", "knobs": {"mode": "eval", "grad": "no_grad", "intra_op_threads": 1}},
          {"name": "A2", "knobs": {"mode": "eval", "grad": "no_grad", "intra_op_threads": 1}}]}
JSON
cat > "$TMP/real.json" <<'JSON'
{"name": "resnet18 train+grad vs eval+inference_mode+freeze_optimize, one thread", "model": "resnet18",
 "run": {"iters": 60, "block_iters": 10},
 "arms": [{"name": "A", "knobs": {"mode": "train", "grad": "enabled", "intra_op_threads": 1}},
          {"name": "B", "knobs": {"mode": "eval", "grad": "inference_mode", "jit": "freeze_optimize",
                                  "intra_op_threads": 1}}]}
JSON
python3 - "$ROOT/presets/default.json" "$TMP/default1.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["run"]["processes"] = 1
# Bundled models are found by name; nothing else in the preset is a relative path.
json.dump(p, open(sys.argv[2], "w"))
PY

summarize() {  # results JSON -> one line: verdict, process medians per arm, faults/iter
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["comparisons"][0]
procs = "; ".join(
    a["name"] + " " + " ".join(f'{p["median_ns"]/1e6:.2f}' for p in a["processes"]) + " ms"
    + f' ({a["summary"].get("minor_faults_per_iter", -1):.0f} faults/iter)' for a in r["arms"])
print(f'{"SIGNIFICANT" if c["significant"] else "no-diff    "} ratio {c["ratio"]:.3f} '
      f'CI {c["ci95"][0]:.3f}-{c["ci95"][1]:.3f} | {procs}')
PY
}

echo "== A/A: $AA_RUNS runs =="
aa_sig=0
for i in $(seq "$AA_RUNS"); do
  "$CLI" run "$TMP/aa.json" --json "$TMP/aa.out.json" >/dev/null 2>&1 || true
  line=$(summarize "$TMP/aa.out.json"); echo "  $i: $line"
  [[ $line == SIGNIFICANT* ]] && aa_sig=$((aa_sig + 1))
done
echo "A/A: $((AA_RUNS - aa_sig)) of $AA_RUNS say no significant difference"

echo "== real difference: $REAL_RUNS runs =="
real_sig=0
for i in $(seq "$REAL_RUNS"); do
  "$CLI" run "$TMP/real.json" --json "$TMP/real.out.json" >/dev/null 2>&1 || true
  line=$(summarize "$TMP/real.out.json"); echo "  $i: $line"
  [[ $line == SIGNIFICANT* ]] && real_sig=$((real_sig + 1))
done
echo "real: $real_sig of $REAL_RUNS significant"

echo "== cost: presets/default.json, processes 1 vs default, alternated, $COST_RUNS each =="
one=(); dflt=()
for i in $(seq "$COST_RUNS"); do
  s=$(date +%s.%N); "$CLI" run "$TMP/default1.json" >/dev/null 2>&1 || true; e=$(date +%s.%N)
  one+=("$(python3 -c "print($e - $s)")")
  s=$(date +%s.%N); "$CLI" run "$ROOT/presets/default.json" >/dev/null 2>&1 || true; e=$(date +%s.%N)
  dflt+=("$(python3 -c "print($e - $s)")")
done
python3 - "${one[*]}" "${dflt[*]}" <<'PY'
import statistics, sys
one = [float(x) for x in sys.argv[1].split()]; d = [float(x) for x in sys.argv[2].split()]
print(f"processes 1: {' '.join(f'{x:.1f}' for x in one)} s (median {statistics.median(one):.1f})")
print(f"default    : {' '.join(f'{x:.1f}' for x in d)} s (median {statistics.median(d):.1f})")
print(f"ratio of medians: {statistics.median(d) / statistics.median(one):.2f}x")
PY
