#!/usr/bin/env bash
# Issue 3 on demand: the real window (`pitlane --run`, offscreen or under xvfb-run) on a 2-arm
# preset of the tiny_probe test model (x * 2, ~4 us per forward), so the sample stream is limited
# by the pipeline, not the model. Prints the stream rate the UI thread saw and the event-loop
# gaps of a 10 ms heartbeat (PITLANE_STREAM_PROBE=1, app/gui/stream_probe.h), what the longest
# gap was made of (the UI thread's CPU in it, its costliest events) and each plot's replots.
# Run on demand:
#   bench/gui_stream.sh [build/bin] [iters per arm] [block iters] [runs]
# Targets (issue 44): at >= 150 k samples/s, no event-loop gap above 16 ms during the stream nor
# after it; the UI thread's own work between two ticks is the part the window controls.
# Needs the test_models target (build/bin/models/tiny_probe.pt). PLATFORM=xvfb uses xvfb-run;
# DB=none runs without the history file (isolates the views from the SQLite recorder).
set -euo pipefail
BIN="$(cd "${1:-$(dirname "$0")/../build/bin}" && pwd)"
ITERS="${2:-200000}"
BLOCK="${3:-50000}"
RUNS="${4:-3}"
MODEL="$BIN/models/tiny_probe.pt"
[[ -f "$MODEL" ]] || { echo "missing $MODEL (ninja test_models)" >&2; exit 2; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/stream.json" <<JSON
{"name": "gui stream bench", "model": "$MODEL",
 "run": {"warmup_iters": 100, "iters": $ITERS, "block_iters": $BLOCK},
 "arms": [{"name": "A", "knobs": {"mode": "eval", "grad": "inference_mode", "intra_op_threads": 1}},
          {"name": "B", "knobs": {"mode": "eval", "grad": "inference_mode", "intra_op_threads": 1}}]}
JSON
# A throw-away settings folder: the bench neither reads nor changes the user's window state.
export XDG_CONFIG_HOME="$WORK/config" PITLANE_STREAM_PROBE=1
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$RUNS"); do
  # By default a real history file, as a user's window has: every sample batch goes to SQLite.
  db="$WORK/history$run.sqlite"
  [[ "${DB:-file}" == none ]] && db=none
  args=("$BIN/pitlane" "$WORK/stream.json" --run --quit-when-done --db "$db")
  if [[ "${PLATFORM:-offscreen}" == xvfb ]]; then
    line=$(xvfb-run -a "${args[@]}" 2>&1 | grep -E 'pitlane: (stream|longest gap|replots)' || true)
  else
    line=$(QT_QPA_PLATFORM=offscreen "${args[@]}" 2>&1 | grep -E 'pitlane: (stream|longest gap|replots)' || true)
  fi
  echo "run $run:"
  echo "$line" | sed 's/^pitlane: /  /'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
