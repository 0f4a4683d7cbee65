#!/bin/bash
# Start-up under load (issue 42 item 4, docs/RELIABILITY.md): N `pitlane-cli run` at once, each a
# 2-arm mlp preset with 3 worker processes per arm (6 workers started at once per run), and the
# figures: runs failed, the longest run, the peak 1-min load, the start-up failures and the
# slow-start warnings (the slowest start-up per arm).
# usage: tools/startup_load.sh BIN_DIR OUT_DIR [N=20] [EVENT_TIMEOUT_MS=60000]
#   BIN_DIR holds pitlane-cli, pitlane-worker and models/ (e.g. build/bin); OUT_DIR is emptied.
set -u
bin=${1:?usage: startup_load.sh BIN_DIR OUT_DIR [N] [EVENT_TIMEOUT_MS]}
out=${2:?usage: startup_load.sh BIN_DIR OUT_DIR [N] [EVENT_TIMEOUT_MS]}
n=${3:-20}
timeout_ms=${4:-60000}
mkdir -p "$out" && rm -f "$out"/r*.json "$out"/r*.out "$out"/r*.err "$out"/rc.txt "$out"/load.txt
cat >"$out/preset.json" <<JSON
{
  "name": "issue 42 item 4: start-up under load",
  "model": "mlp",
  "run": {"warmup_iters": 2, "iters": 30, "block_iters": 10, "processes": 3, "event_timeout_ms": $timeout_ms},
  "arms": [
    {"name": "A", "knobs": {"grad": "enabled", "intra_op_threads": 1}},
    {"name": "B", "knobs": {"grad": "inference_mode", "intra_op_threads": 1}}
  ]
}
JSON
( while sleep 2; do cat /proc/loadavg >>"$out/load.txt"; done ) &
loadpid=$!
start=$(date +%s.%N)
pids=()
for i in $(seq 1 "$n"); do
  ( s=$(date +%s.%N)
    PITLANE_WORKER="$bin/pitlane-worker" PITLANE_MODEL_DIR="$bin/models" "$bin/pitlane-cli" run "$out/preset.json" \
      --db none --quiet --json "$out/r$i.json" >"$out/r$i.out" 2>"$out/r$i.err"
    rc=$?
    echo "$i $rc $(echo "$(date +%s.%N) - $s" | bc)" >>"$out/rc.txt" ) &
  pids+=($!)
done
wait "${pids[@]}"
end=$(date +%s.%N)
kill "$loadpid"
echo "total wall $(echo "$end - $start" | bc) s"
awk '{n++; if ($2 != 0) f++; if ($3 > m) m = $3} END {print n " runs, " f + 0 " failed, longest run " m " s"}' "$out/rc.txt"
sort -g -r "$out/load.txt" | head -1 | awk '{print "peak 1-min load " $1}'
grep -h "error:" "$out"/r*.err | sed 's/pid [0-9]*/pid N/g' | sort | uniq -c
echo "$(grep -h "slow to start" "$out"/r*.err | wc -l) slow-to-start warnings (workers past the start-up allowance)"
grep -ho "slow start: a worker took [0-9.]* s[^\"]*" "$out"/r*.json | sort -t' ' -k6 -g | tail -1
