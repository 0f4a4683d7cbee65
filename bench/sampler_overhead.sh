#!/usr/bin/env bash
# Cost of the worker's metrics sampler: CPU seconds its thread used (reported in `bye`) over
# the wall time it ran, at the default 100 ms period and at 10 ms. Run on demand:
#   bench/sampler_overhead.sh [build/bin] [seconds]
set -euo pipefail
BIN="${1:-$(dirname "$0")/../build/bin}"
SECS="${2:-10}"
# The sampler starts with the worker's first command: configure the bundled mlp, then stay idle.
CONFIGURE=$(python3 - "$BIN/models/mlp" <<'PY'
import json, sys
side = json.load(open(sys.argv[1] + ".json"))
print(json.dumps({"v": 1, "cmd": "configure", "arm": {"name": "idle", "model_path": sys.argv[1] + ".pt",
                  "input": side["input"], "knobs": {"intra_op_threads": 1}, "seed": 0}}))
PY
)
for period in 100 10; do
  start=$(date +%s.%N)
  bye=$( (echo "$CONFIGURE"; sleep "$SECS"; echo '{"v":1,"cmd":"quit"}') | "$BIN/pitlane-worker" --metrics-ms "$period" 2>/dev/null | grep '"type":"bye"')
  end=$(date +%s.%N)
  python3 - "$bye" "$start" "$end" "$period" <<'PY'
import json, sys
bye = json.loads(sys.argv[1]); wall = float(sys.argv[3]) - float(sys.argv[2])
cpu = bye["sampler_cpu_s"]; ticks = bye["sampler_ticks"]
print(f"period {sys.argv[4]:>3} ms: {ticks} ticks, sampler CPU {cpu*1e3:.1f} ms over {wall:.1f} s wall "
      f"= {100*cpu/wall:.3f}% of one core, {1e6*cpu/max(ticks,1):.0f} us per tick")
PY
done
