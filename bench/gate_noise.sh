#!/usr/bin/env bash
# Issue 41's acceptance runs of the two gates under a load that comes and goes (results go in
# docs/PERFORMANCE.md, "The gate under a switching load"). The bundled lstm (2 layers, 64
# features, hidden 128) at sequence length 128, one intra-op thread, jemalloc, 200 iterations in
# blocks of 10, default processes; default --max-slowdown 5. In the background, for the whole
# bench, HOG_THREADS busy loops (default: one per core) run for 1-4 s, stop for 1-4 s, and so on
# (random lengths), so that load starts and stops within runs and between them.
#  0. --baseline against a run marked as the baseline before the hog started: AA_GATES runs of
#     the same preset with --baseline baseline while the hog comes and goes: load that differs
#     between the baseline's run and the gate's. Every exit 4 is a false alarm.
#  1. --baseline: a run marked as the baseline under the hog, then AA_GATES runs of the same preset with
#     --baseline baseline: the across-time gate. Every exit 4 is a false alarm.
#  2. --against: AA_GATES runs of the same preset with --against the same preset: the paired gate
#     (the baseline measured interleaved in the run). Every exit 4 is a false alarm.
#  3. A real slowdown, paired: SLOW_GATES runs of sequence length 208 --against the preset at 128
#     (the LSTM's time per iteration is ~0.27 ms + 8.1 us per step on the development machine: a
#     1.5x slowdown per iteration; each gate prints the slowdown it measured). Each should exit 4.
#  4. The same slowdown across time: SLOW_GATES runs of sequence length 208 with --baseline
#     against part 1's baseline (128). Each should exit 4.
# Each gate prints its exit code, the slowdown with its 95 % CI, and the 1-minute load average
# each side's first worker started at. Usage: bench/gate_noise.sh [BUILD_DIR] [AA_GATES]
# [SLOW_GATES] [HOG_THREADS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
AA_GATES="${2:-20}"
SLOW_GATES="${3:-10}"
HOG_THREADS="${4:-$(nproc)}"
TMP="$(mktemp -d)"
# Copies of the CLI and the worker: a rebuild of the tree while the bench runs does not touch them.
mkdir -p "$TMP/bin"
cp "$BUILD/bin/pitlane-cli" "$BUILD/bin/pitlane-worker" "$TMP/bin/"
CLI="$TMP/bin/pitlane-cli"
export PITLANE_WORKER="$TMP/bin/pitlane-worker" PITLANE_MODEL_DIR="$BUILD/bin/models"
HOG=""
cleanup() {
  # The hog runs in its own process group (setsid): stop that group, and only it.
  if [ -n "$HOG" ]; then kill -- "-$HOG" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
preset() {  # preset SEQ FILE
  cat > "$2" <<JSON
{"name": "gate noise", "model": "lstm", "input": [{"shape": [$1, 64], "dtype": "float32"}],
 "run": {"warmup_iters": 10, "iters": 200, "block_iters": 10},
 "arms": [{"name": "A", "knobs": {"mode": "eval", "grad": "no_grad", "intra_op_threads": 1, "allocator": "jemalloc"}}]}
JSON
}
gate() {  # gate N ARGS...: N gated runs; prints each exit code, the slowdown and its CI
  local n="$1" pass=0 fail=0 other=0 code
  shift
  : > "$TMP/stats.txt"
  for i in $(seq 1 "$n"); do
    rm -f "$TMP/g.json"
    set +e
    "$CLI" run "$@" --quiet --json "$TMP/g.json" > "$TMP/out.txt" 2>&1
    code=$?
    set -e
    python3 - "$TMP/g.json" "$code" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"  exit {sys.argv[2]}: no results JSON ({e})")
    sys.exit(0)
g = r.get("gate", {})
a = (g.get("arms") or [{}])[0]
ci = a.get("slowdown_ci95_pct", [float("nan")] * 2)
loads = [str((x.get("environment", {}).get("load_average") or ["?"])[0]) for x in r.get("arms", [])]
diffs = ", ".join(d.get("field", "") for d in a.get("differences", []))
if "slowdown_pct" in a:
    with open(sys.argv[1].replace("g.json", "stats.txt"), "a") as f:
        f.write(f"{a['slowdown_pct']} {ci[0]} {ci[1]}\n")
print(f"  exit {sys.argv[2]}: slowdown {a.get('slowdown_pct', float('nan')):+.1f} % "
      f"(95% CI {ci[0]:+.1f} .. {ci[1]:+.1f} %) {a.get('decision')}; load at start {' / '.join(loads)}"
      + (f"; differences named: {diffs}" if diffs else ""))
PY
    case $code in 0) pass=$((pass + 1)) ;; 4) fail=$((fail + 1)) ;; *) other=$((other + 1)); tail -5 "$TMP/out.txt" ;; esac
  done
  echo "  => exit 0: $pass, exit 4: $fail, other: $other (of $n)"
  python3 - "$TMP/stats.txt" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
if rows:
    widths = sorted(hi - lo for _, lo, hi in rows)
    print(f"  => slowdown median {statistics.median(r[0] for r in rows):+.1f} % "
          f"(range {min(r[0] for r in rows):+.1f} .. {max(r[0] for r in rows):+.1f} %); "
          f"95% CI width median {statistics.median(widths):.1f} points "
          f"(narrowest {widths[0]:.1f}, widest {widths[-1]:.1f}); lowest lower bound "
          f"{min(r[1] for r in rows):+.1f} %, highest {max(r[1] for r in rows):+.1f} %")
PY
}
preset 128 "$TMP/aa.json"
preset 208 "$TMP/slow.json"
# The baseline of part 0, measured before the hog starts.
quiet_id="$("$CLI" run "$TMP/aa.json" --db "$TMP/quiet.sqlite" --quiet | sed -n 's/^run id: \([0-9]*\).*/\1/p')"
"$CLI" history baseline "$quiet_id" --db "$TMP/quiet.sqlite" > /dev/null
echo "== the hog: $HOG_THREADS busy loop(s), on 1-4 s, off 1-4 s, for the whole bench"
setsid bash -c '
  while :; do
    for t in $(seq '"$HOG_THREADS"'); do timeout "$((RANDOM % 4 + 1))" sh -c "while :; do :; done" & done
    wait
    sleep "$((RANDOM % 4 + 1))"
  done' > /dev/null 2>&1 &
HOG=$!
start=$(date +%s)
echo "== --baseline against a baseline measured before the hog started: $AA_GATES A/A gates (exit 4 = false alarm)"
gate "$AA_GATES" "$TMP/aa.json" --db "$TMP/quiet.sqlite" --baseline baseline
echo "== --baseline: a baseline run (under the hog), then $AA_GATES A/A gates against it (exit 4 = false alarm)"
id="$("$CLI" run "$TMP/aa.json" --db "$TMP/h.sqlite" --quiet | sed -n 's/^run id: \([0-9]*\).*/\1/p')"
"$CLI" history baseline "$id" --db "$TMP/h.sqlite" > /dev/null
gate "$AA_GATES" "$TMP/aa.json" --db "$TMP/h.sqlite" --baseline baseline
echo "== --against: $AA_GATES A/A gates, the baseline measured in the same run (exit 4 = false alarm)"
gate "$AA_GATES" "$TMP/aa.json" --db none --against "$TMP/aa.json"
echo "== --against: $SLOW_GATES gates of sequence length 208 against 128 (a 1.5x slowdown; exit 4 expected)"
gate "$SLOW_GATES" "$TMP/slow.json" --db none --against "$TMP/aa.json"
echo "== --baseline: $SLOW_GATES gates of sequence length 208 against the baseline at 128 of part 1 (the same 1.5x slowdown across time)"
gate "$SLOW_GATES" "$TMP/slow.json" --db "$TMP/h.sqlite" --baseline baseline
echo "== $(( $(date +%s) - start )) s in all"
