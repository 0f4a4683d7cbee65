#!/usr/bin/env bash
# Issue 29's acceptance runs of the regression gate (results go in docs/PERFORMANCE.md, "The
# regression gate"): resnet18 at 3x64x64, one intra-op thread, default processes.
#  1. A/A: a baseline run, then AA_GATES runs of the same preset with --baseline baseline (default
#     --max-slowdown 5): each should exit 0 (the goal: at least 19 of 20).
#  2. A real slowdown: a baseline of the fast configuration (eval, no_grad), then SLOW_GATES runs
#     of the same preset name and arm name in a slower one (batch_size 2, ~1.5-2x per iteration):
#     each should exit 4.
# Usage: bench/gate.sh [BUILD_DIR] [AA_GATES] [SLOW_GATES]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
AA_GATES="${2:-20}"
SLOW_GATES="${3:-10}"
CLI="$BUILD/bin/pitlane-cli"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
preset() {  # preset NAME BATCH FILE
  cat > "$3" <<JSON
{"name": "$1", "model": "resnet18", "input": [{"shape": [3, 64, 64], "dtype": "float32"}],
 "run": {"warmup_iters": 10, "iters": 200, "block_iters": 10},
 "arms": [{"name": "A", "knobs": {"mode": "eval", "grad": "no_grad", "intra_op_threads": 1, "batch_size": $2}}]}
JSON
}
mark() {  # mark PRESET DB: run it and mark the run as the preset's baseline
  local id
  id="$("$CLI" run "$1" --db "$2" --quiet | sed -n 's/^run id: \([0-9]*\).*/\1/p')"
  "$CLI" history baseline "$id" --db "$2" >/dev/null
}
gate() {  # gate PRESET DB N: N gated runs; prints each exit code and the arm's slowdown and CI
  local pass=0 fail=0 other=0 code
  for i in $(seq 1 "$3"); do
    set +e
    "$CLI" run "$1" --db "$2" --quiet --baseline baseline --json "$TMP/g.json" > "$TMP/out.txt" 2>&1
    code=$?
    set -e
    python3 - "$TMP/g.json" "$code" <<'PY'
import json, sys
g = json.load(open(sys.argv[1])).get("gate", {})
a = (g.get("arms") or [{}])[0]
ci = a.get("slowdown_ci95_pct", [float("nan")] * 2)
print(f"  exit {sys.argv[2]}: slowdown {a.get('slowdown_pct', float('nan')):+.1f} % (95% CI {ci[0]:+.1f} .. {ci[1]:+.1f} %) {a.get('decision')}")
PY
    case $code in 0) pass=$((pass + 1)) ;; 4) fail=$((fail + 1)) ;; *) other=$((other + 1)) ;; esac
  done
  echo "  => exit 0: $pass, exit 4: $fail, other: $other (of $3)"
}
echo "== A/A: $AA_GATES gates of the same configuration against its baseline"
preset "gate A/A" 1 "$TMP/aa.json"
mark "$TMP/aa.json" "$TMP/aa.sqlite"
gate "$TMP/aa.json" "$TMP/aa.sqlite" "$AA_GATES"
echo "== slowdown: $SLOW_GATES gates of batch_size 2 against a baseline at batch_size 1"
preset "gate slow" 1 "$TMP/fast.json"
preset "gate slow" 2 "$TMP/slow.json"
mark "$TMP/fast.json" "$TMP/slow.sqlite"
gate "$TMP/slow.json" "$TMP/slow.sqlite" "$SLOW_GATES"
