#!/usr/bin/env bash
# Issue 31 on demand: a long run stored, reported and reopened. A 2-arm run of the tiny_probe
# test model (x * 2, a few microseconds per forward), ITERS iterations per arm (default 5 M:
# 10 M samples), one process per arm, into a real history file; then the reports of it. Prints
# every figure of the issue's table with its goal:
#   pitlane-cli run peak RSS (and bytes per sample beyond 200 MB), history file size (bytes per
#   sample), report --html and --md wall time and peak RSS, the window's reopening of the run
#   (time to the verdict, longest event-loop gap, memory above the empty window), when the
#   window binary has the probe. REOPEN_ONLY=1 with KEEP_DIR of an earlier run: the window part
#   alone, on that history.
# Usage: bench/long_run.sh [BUILD_DIR] [ITERS] [BLOCK_ITERS]
# Needs the test_models target (build/bin/models/tiny_probe.pt) and GNU time.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
ITERS="${2:-5000000}"
BLOCK="${3:-50000}"
BIN="$BUILD/bin"
MODEL="$BIN/models/tiny_probe.pt"
[[ -f "$MODEL" ]] || { echo "missing $MODEL (ninja test_models)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs GNU time (/usr/bin/time)" >&2; exit 2; }
WORK="${KEEP_DIR:-$(mktemp -d)}"
mkdir -p "$WORK"
[[ -n "${KEEP_DIR:-}" ]] || trap 'rm -rf "$WORK"' EXIT
export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$WORK/config"
export PITLANE_BIN_DIR="$BIN" PITLANE_MODEL_DIR="$BIN/models" PITLANE_WORKER="$BIN/pitlane-worker"
export PITLANE_SOURCE_DIR="$ROOT"
cat >"$WORK/long.json" <<JSON
{"name": "long run bench", "model": "$MODEL",
 "run": {"warmup_iters": 1000, "iters": $ITERS, "block_iters": $BLOCK, "processes": 1},
 "arms": [{"name": "A", "knobs": {"mode": "eval", "grad": "inference_mode", "intra_op_threads": 1}},
          {"name": "B", "knobs": {"mode": "eval", "grad": "inference_mode", "intra_op_threads": 1}}]}
JSON
DB="$WORK/history.sqlite"
[[ -n "${REOPEN_ONLY:-}" ]] || rm -f "$DB" "$DB-wal" "$DB-shm"
SAMPLES=$((2 * ITERS))
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $SAMPLES samples"

# measure NAME CMD...: wall seconds and peak RSS (kB) of CMD into $NAME_s / $NAME_kb.
measure() {
  local name="$1"; shift
  /usr/bin/time -f '%e %M' -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || {
    echo "$name failed (exit $?):" >&2; tail -5 "$WORK/$name.err" >&2; exit 1; }
  read -r s kb <"$WORK/$name.time"
  printf -v "${name}_s" '%s' "$s"
  printf -v "${name}_kb" '%s' "$kb"
}
# measure_own NAME CMD...: as measure, but the peak RSS is the command's own (VmHWM, read every
# 50 ms while it runs): GNU time's %M is the largest of the process and its waited-for children,
# and a run's children are its workers (~350 MB of libtorch each).
measure_own() {
  local name="$1"; shift
  local t0 t1 hwm=0 v rss=0 last=()
  t0=$(date +%s.%N)
  "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n "$v" && "$v" -gt "$hwm" ]] && hwm=$v
    v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    # What it holds at the end: the largest VmRSS of its last half second (exiting frees it).
    [[ -n "$v" && "$v" -gt 0 ]] && last+=("$v") && (( ${#last[@]} > 10 )) && last=("${last[@]:1}")
    sleep 0.05
  done
  for v in "${last[@]}"; do (( v > rss )) && rss=$v; done
  printf -v "${name}_rss_kb" '%s' "$rss"
  wait "$pid" || { echo "$name failed (exit $?):" >&2; tail -5 "$WORK/$name.err" >&2; exit 1; }
  t1=$(date +%s.%N)
  printf -v "${name}_s" '%.2f' "$(echo "$t1 - $t0" | bc)"
  printf -v "${name}_kb" '%s' "$hwm"
}
mb() { awk -v kb="$1" 'BEGIN { printf "%.0f", kb * 1024 / 1e6 }'; }  # decimal MB

if [[ -n "${REOPEN_ONLY:-}" ]]; then
  RUN_ID=$(sqlite3 "$DB" 'SELECT max(id) FROM experiments')
else
  measure_own run "$BIN/pitlane-cli" run "$WORK/long.json" --db "$DB" --quiet
  RUN_ID=$(sqlite3 "$DB" 'SELECT max(id) FROM experiments')
  sqlite3 "$DB" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
  DB_BYTES=$(stat -c %s "$DB")
  measure html "$BIN/pitlane-cli" report "$RUN_ID" --db "$DB" --html "$WORK/r.html"
  measure md "$BIN/pitlane-cli" report "$RUN_ID" --db "$DB" --md "$WORK/r.md"
  measure check "$BIN/pitlane-cli" check-history --db "$DB"
  run_goal=$((SAMPLES * 16 / 1000000 + 200))  # decimal MB, as the figures
  printf '%-40s %14s %s\n' figure measured goal
  printf '%-40s %11s MB %s\n' "pitlane-cli run peak RSS" "$(mb "$run_kb")" "<= $run_goal MB"
  awk -v kb="$run_kb" -v n="$SAMPLES" 'BEGIN { printf "%-40s %11.1f B  %s\n", "  per sample beyond 200 MB", (kb * 1024 - 200e6) / n, "<= 16 B" }'
  printf '%-40s %11s s\n' "  (run wall time)" "$run_s"
  awk -v b="$DB_BYTES" -v n="$SAMPLES" 'BEGIN { printf "%-40s %11.1f MB <= %.0f MB (%.2f B per sample, goal <= 8)\n", "history file", b / 1e6, n * 8 / 1e6, b / n }'
  printf '%-40s %11s s  <= 5 s; %s MB (<= 400 MB)\n' "report --html" "$html_s" "$(mb "$html_kb")"
  printf '%-40s %11s s  <= 3 s; %s MB\n' "report --md" "$md_s" "$(mb "$md_kb")"
  printf '%-40s %11s s  %s MB\n' "check-history" "$check_s" "$(mb "$check_kb")"
fi

# The window reopening the run: time to its verdict and the longest event-loop gap (the first
# replot of every plot happens in it), its memory against the same window holding no run (the
# window opened on the history for 4 s, its VmRSS then; issue 44: <= 200 MB more).
help=$("$BIN/pitlane" --help 2>&1 || true)  # not piped into grep -q: pipefail and SIGPIPE
if grep -q -- '--open-run' <<<"$help"; then
  "$BIN/pitlane" --db "$DB" >"$WORK/empty.out" 2>&1 &
  empty_pid=$!
  sleep 4
  empty_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$empty_pid/status")
  kill "$empty_pid"; wait "$empty_pid" 2>/dev/null || true
  measure_own window "$BIN/pitlane" --db "$DB" --open-run "$RUN_ID" --quit-when-done
  line=$(grep 'pitlane: reopen' "$WORK/window.err" || true)
  printf '%-40s %14s %s\n' "reopening in the window" "${line#pitlane: reopen }" "<= 3 s to the verdict; gap (first replot) <= 50 ms"
  printf '%-40s %11s MB\n' "  window empty (VmRSS after 4 s)" "$(mb "$empty_kb")"
  printf '%-40s %11s MB  <= 200 MB above empty\n' "  window peak RSS above empty" "$(mb $((window_kb - empty_kb)))"
  printf '%-40s %11s MB  <= 200 MB above empty\n' "  window RSS 1 s after the verdict, above empty" "$(mb $((window_rss_kb - empty_kb)))"
else
  echo "reopening in the window: not measured (this pitlane has no --open-run)"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
