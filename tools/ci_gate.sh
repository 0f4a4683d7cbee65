#!/usr/bin/env bash
# Gate a change on performance with Pitlane (docs/CI.md):
#   tools/ci_gate.sh baseline PRESET HISTORY        measure PRESET, mark the run as its baseline
#   tools/ci_gate.sh gate PRESET HISTORY [PCT]      measure PRESET, compare with that baseline:
#                                                   exit 4 when an arm is slower by more than PCT
#                                                   (default 5) with its whole 95 % CI
# HISTORY is the run history file the CI keeps between jobs (a cache). PITLANE_CLI names the
# pitlane-cli to use (default: the one on PATH). Writes gate.json beside HISTORY.
set -euo pipefail
cli="${PITLANE_CLI:-pitlane-cli}"
mode="${1:?usage: ci_gate.sh baseline|gate PRESET HISTORY [PCT]}"
preset="${2:?usage: ci_gate.sh baseline|gate PRESET HISTORY [PCT]}"
db="${3:?usage: ci_gate.sh baseline|gate PRESET HISTORY [PCT]}"
pct="${4:-5}"
case "$mode" in
  baseline)
    out="$("$cli" run "$preset" --db "$db" --quiet)"
    echo "$out"
    id="$(sed -n 's/^run id: \([0-9]*\).*/\1/p' <<<"$out")"
    [ -n "$id" ] || { echo "ci_gate.sh: the run was not stored in $db" >&2; exit 3; }
    "$cli" history baseline "$id" --db "$db"
    ;;
  gate)
    exec "$cli" run "$preset" --db "$db" --quiet --baseline baseline --max-slowdown "$pct" \
      --json "$(dirname "$db")/gate.json"
    ;;
  *) echo "ci_gate.sh: unknown mode $mode (baseline or gate)" >&2; exit 2 ;;
esac
