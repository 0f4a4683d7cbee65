#!/usr/bin/env bash
# Concurrent pitlane-cli runs on one history file, on demand (issue 28: "no lost run"). Two
# figures, each run counted by its exit status and by what the file holds afterwards:
#   1. PAIRS times: a NEW history file, 2 runs started at once on it (both create the file, set
#      WAL and migrate the schema while the other does the same).
#   2. once: AT_ONCE runs started at once on an existing history (one that holds a run).
# A run is "stored" when it exited 0 and its experiment row is finished with every arm ok and
# 2 x ITERS measured samples. Real processes, real SQLite files, the mlp model, 2 arms, one
# process each, ITERS iterations per arm.
# Usage: bench/history_concurrency.sh [BUILD_DIR] [PAIRS] [AT_ONCE] [ITERS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
PAIRS="${2:-30}"
AT_ONCE="${3:-20}"
ITERS="${4:-20}"
CLI="$BUILD/bin/pitlane-cli"
[[ -x "$CLI" ]] || { echo "no pitlane-cli at $CLI" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "needs sqlite3" >&2; exit 2; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export PITLANE_MODEL_DIR="${PITLANE_MODEL_DIR:-$BUILD/bin/models}"
cat >"$TMP/preset.json" <<EOF
{"name": "concurrent", "model": "mlp",
 "run": {"warmup_iters": 2, "iters": $ITERS, "block_iters": 10, "processes": 1},
 "arms": [{"name": "A", "knobs": {"intra_op_threads": 1}},
          {"name": "B", "knobs": {"grad": "no_grad", "intra_op_threads": 1}}]}
EOF

# run_at_once DB N LOGPREFIX: N runs started together; prints how many exited 0.
run_at_once() {
    local db=$1 n=$2 log=$3 pids=() ok=0
    for ((i = 0; i < n; i++)); do
        "$CLI" run "$TMP/preset.json" --db "$db" --quiet >"$log.$i" 2>&1 &
        pids+=($!)
    done
    for ((i = 0; i < n; i++)); do
        if wait "${pids[$i]}"; then ok=$((ok + 1)); else
            echo "  run $i exit $?: $(grep -m1 'run history' "$log.$i" || tail -1 "$log.$i")" >&2
        fi
    done
    echo "$ok"
}

# stored DB: finished runs whose arms are all ok and hold 2 x ITERS measured samples.
stored() {
    sqlite3 "$1" "SELECT count(*) FROM experiments e WHERE finished_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM arms a WHERE a.experiment = e.id AND a.status != 'ok')
        AND (SELECT coalesce(sum(c.n), 0) FROM sample_chunks c JOIN arms a ON c.arm = a.id
             WHERE a.experiment = e.id AND c.block >= 0) = 2 * $ITERS"  # schema v10
}

echo "pitlane-cli: $CLI"
start=$(date +%s.%N)
exited=0 kept=0
for ((p = 1; p <= PAIRS; p++)); do
    db="$TMP/fresh-$p.sqlite"
    e=$(run_at_once "$db" 2 "$TMP/pair-$p")
    s=$(stored "$db" 2>/dev/null || echo 0)
    exited=$((exited + e)) kept=$((kept + s))
    [[ $e == 2 && $s == 2 ]] || echo "  pair $p: $e of 2 exited 0, $s of 2 stored" >&2
done
t=$(echo "$(date +%s.%N) - $start" | bc)
echo "fresh history, 2 runs at once, $PAIRS times: $exited of $((2 * PAIRS)) exited 0," \
     "$kept of $((2 * PAIRS)) stored ($t s)"

db="$TMP/existing.sqlite"
run_at_once "$db" 1 "$TMP/seed" >/dev/null
start=$(date +%s.%N)
e=$(run_at_once "$db" "$AT_ONCE" "$TMP/many")
s=$(($(stored "$db") - 1))
t=$(echo "$(date +%s.%N) - $start" | bc)
echo "existing history, $AT_ONCE runs at once: $e of $AT_ONCE exited 0, $s of $AT_ONCE stored ($t s)"
echo "check-history: $("$CLI" check-history --db "$db")"
