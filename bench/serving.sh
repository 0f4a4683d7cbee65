#!/usr/bin/env bash
# Issue 13's measurements through the whole pipeline (pitlane-cli, real workers), on demand;
# results go in docs/PERFORMANCE.md "Serving":
#  1. Low rate vs closed loop: resnet18 3x64x64, eval, no_grad, one intra-op thread, jemalloc.
#     The closed-loop median at batch 1 (a plain run), then serving at 20 % of the capacity that
#     median implies (constant arrivals, max_batch 1), with idle_wait spin and sleep; prints the
#     end-to-end median and its ratio to the closed-loop median. RUNS repetitions, alternated.
#  2. A/A serving: two identical arms (system allocator, max_batch 4, max_wait 5 ms) at two
#     Poisson rates; each verdict line must say "no significant difference".
#  3. The dynamic-batching lesson (presets/lesson_dynamic_batching.json): its table and checks.
# Usage: bench/serving.sh [BUILD_DIR] [RUNS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
RUNS="${2:-3}"
CLI="$BUILD/bin/pitlane-cli"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export PITLANE_DB=none
PY=/usr/bin/python3

cat > "$TMP/closed.json" <<'JSON'
{"name": "closed loop", "model": "resnet18", "input": [{"shape": [3, 64, 64]}],
 "run": {"warmup_iters": 10, "iters": 60, "block_iters": 20, "processes": 3},
 "arms": [{"name": "closed", "knobs": {"mode": "eval", "grad": "no_grad", "intra_op_threads": 1,
                                       "allocator": "jemalloc"}}]}
JSON

echo "== 1. low rate vs closed loop (resnet18 3x64x64, one thread, jemalloc)"
for r in $(seq 1 "$RUNS"); do
  "$CLI" run "$TMP/closed.json" --quiet --json "$TMP/closed_out.json" > /dev/null
  median_ms=$($PY -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['arms'][0]['summary']['median_ns']/1e6)" "$TMP/closed_out.json")
  for idle in spin sleep; do
    $PY - "$median_ms" "$idle" "$TMP/serve_$idle.json" <<'PY'
import json, sys
median_ms, idle, out = float(sys.argv[1]), sys.argv[2], sys.argv[3]
rate = round(0.2 * 1000.0 / median_ms, 2)
json.dump({"name": "low rate", "model": "resnet18", "input": [{"shape": [3, 64, 64]}],
           "run": {"warmup_iters": 10, "processes": 3},
           "serving": {"arrival": "constant", "rates": [rate], "duration_ms": 3000, "idle_wait": idle},
           "arms": [{"name": "served", "knobs": {"mode": "eval", "grad": "no_grad", "intra_op_threads": 1,
                                                 "allocator": "jemalloc", "max_batch": 1}}]},
          open(out, "w"))
PY
    "$CLI" run "$TMP/serve_$idle.json" --quiet --json "$TMP/serve_out.json" > /dev/null
    $PY - "$median_ms" "$idle" "$TMP/serve_out.json" <<'PY'
import json, sys
closed, idle = float(sys.argv[1]), sys.argv[2]
p = json.load(open(sys.argv[3]))["arms"][0]["serving"]["points"][0]
print(f"run {idle:5s}: closed-loop median {closed:.2f} ms; serving at {p['rate_per_s']} req/s (20 %): "
      f"end-to-end median {p['p50_ms']:.2f} ms, ratio {p['p50_ms'] / closed:.2f}, p99 {p['p99_ms']:.2f} ms, "
      f"saturated {p['saturated']}")
PY
  done
done

echo "== 2. A/A serving (resnet18 3x64x64, one thread, system allocator)"
cat > "$TMP/aa.json" <<'JSON'
{"name": "A/A serving", "model": "resnet18", "input": [{"shape": [3, 64, 64]}],
 "run": {"warmup_iters": 5},
 "serving": {"arrival": "poisson", "rates": [30, 60], "duration_ms": 2500},
 "arms": [{"name": "A", "knobs": {"intra_op_threads": 1, "allocator": "system", "max_batch": 4, "max_wait_ms": 5}},
          {"name": "B", "knobs": {"intra_op_threads": 1, "allocator": "system", "max_batch": 4, "max_wait_ms": 5}}]}
JSON
for r in $(seq 1 "$RUNS"); do
  "$CLI" run "$TMP/aa.json" --quiet | grep -E "^at "
done

echo "== 3. lesson: dynamic batching"
for r in $(seq 1 "$RUNS"); do
  "$CLI" run "$ROOT/presets/lesson_dynamic_batching.json" --quiet | sed -n '/^arm /,$p'
done
