#!/usr/bin/env bash
# Issue 41 item 2: how close is the time left that pitlane-cli prints ("[A] block 3 done (40/60
# iterations), about 12 s left (up to 40 s if rounds are added)") to the time the run really had
# left? Three presets of different forward times (the bundled mlp, resnet18 at 3x64x64, and
# presets/default.json: resnet18 at 3x224x224, train vs frozen eval), RUNS runs each. Each stderr
# line is stamped as it arrives; at 25 %, 50 % and 75 % of the run's actual wall time (pitlane-cli
# start to exit) the last estimate printed is set against the time that was really left then.
# "low" is the plan as queued, "high" adds every round replication may still add: "in" when the
# actual time left lies within [0.75 low, 1.25 high]. The run's results JSON says how many rounds
# replication did add; "priced path" is the estimate for those alone (low plus that share of
# high - low), i.e. the estimator's pricing once the decisions, which nothing can foresee, are
# known, against the actual (+-%). Results go in docs/PERFORMANCE.md ("Time left").
# presets/default.json runs on a 30 s budget (run.budget_ms) since issue 43: its rows check the
# time left of a budgeted run, whose rounds the budget plans and may add or trim.
# Usage: bench/remaining_time.sh [BUILD_DIR] [RUNS] [PRESETS="mlp resnet64 default"]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
RUNS="${2:-2}"
PRESETS="${3:-mlp resnet64 default}"
CLI="$BUILD/bin/pitlane-cli"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export PITLANE_DB=none

cat > "$TMP/mlp.json" <<'JSON'
{"name": "mlp: grad vs inference_mode", "model": "mlp",
 "run": {"warmup_iters": 50, "iters": 20000, "block_iters": 2000},
 "arms": [{"name": "A", "knobs": {"grad": "enabled", "intra_op_threads": 1}},
          {"name": "B", "knobs": {"grad": "inference_mode", "intra_op_threads": 1}}]}
JSON
cat > "$TMP/resnet64.json" <<'JSON'
{"name": "resnet18 3x64x64: grad vs inference_mode", "model": "resnet18",
 "input": [{"shape": [3, 64, 64], "dtype": "float32"}],
 "run": {"warmup_iters": 10, "iters": 300, "block_iters": 25},
 "arms": [{"name": "A", "knobs": {"mode": "eval", "grad": "enabled", "intra_op_threads": 1}},
          {"name": "B", "knobs": {"mode": "eval", "grad": "inference_mode", "intra_op_threads": 1}}]}
JSON
cp "$ROOT/presets/default.json" "$TMP/default.json"

run_one() {  # preset label -> one line of figures
  local preset="$1" label="$2"
  local start end
  start=$(date +%s.%N)
  "$CLI" run "$preset" --json "$TMP/out.json" 2>&1 >/dev/null |
    while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$TMP/err.log" || true
  end=$(date +%s.%N)
  python3 - "$TMP/err.log" "$TMP/out.json" "$start" "$end" "$label" <<'PY'
import json, re, sys
log, out, start, end, label = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
T = end - start
def clock(s):
    if ":" in s:
        m, sec = s.split(":"); return int(m) * 60 + int(sec)
    return float(s.split()[0])
r = json.load(open(out))
rep = r.get("replication", {})
asked = rep.get("asked_iters", 0)
pmin, pmax = rep.get("processes_min", 0), rep.get("processes_max", 0)
planned = rep.get("planned_iters", [asked, asked])
round_iters = (planned[1] - planned[0]) / (pmax - pmin) if pmax > pmin else 0
added = rep.get("processes", 0) - pmin
est = []  # (t since start, low s, high s, the estimate for the rounds this run went on to add)
for line in open(log):
    t, _, text = line.partition(" ")
    m = re.search(r"\((\d+)/(\d+) iterations\), about (\d+:\d\d|[\d.]+ s) left"
                  r"(?: \(up to (\d+:\d\d|[\d.]+ s) if rounds are added\))?", text)
    if not m:
        continue
    low = clock(m.group(3)); high = clock(m.group(4)) if m.group(4) else low
    # Rounds already queued (the line's planned total says so), rounds that may still come, and
    # those that did: the estimate for the path the run took prices only those.
    queued = round((int(m.group(2)) - asked) / round_iters) if round_iters else 0
    may = (pmax - pmin) - queued
    became = low + (high - low) * (added - queued) / may if may > 0 else low
    est.append((float(t) - start, low, high, became))
ns = "/".join(str(a["summary"]["n"]) for a in r["arms"])
cells = []
for q in (0.25, 0.5, 0.75):
    at = [e for e in est if e[0] <= q * T]
    if not at:
        cells.append(f"{int(q*100)}%: -")
        continue
    t, low, high, became = at[-1]
    actual = T - t
    inside = "in" if 0.75 * low <= actual <= 1.25 * high else "OUT"
    cells.append(f"{int(q*100)}%: left {actual:5.1f} s, said {low:g}-{high:g} s ({inside}), "
                 f"priced path {became:5.1f} s ({100 * (became - actual) / actual:+.0f} %)")
print(f"{label:8s} wall {T:5.1f} s, n {ns}, rounds added {added}/{pmax - pmin} | " + " | ".join(cells))
PY
}

for preset in $PRESETS; do
  echo "== $preset: $RUNS runs =="
  for i in $(seq "$RUNS"); do run_one "$TMP/$preset.json" "$preset"; done
done
