#!/usr/bin/env bash
# Precision per second (issue 43, part 4): what a user gets for the time a run takes. Runs, RUNS
# times each and interleaved (default, resnet50, vit, default, ...) so that the machine's drift
# hits each case alike:
#   default   presets/default.json as committed (or PRESET=path for another version of it)
#   resnet50  a torchvision resnet50 (random weights, TorchScript) as a bare model file's quick
#             run: `pitlane-cli run resnet50.pt --input 3x224x224`, no other flag
#   vit_b_16  a torchvision vit_b_16 saved with torch.export.save (run through NativeRT), the
#             same quick run: `pitlane-cli run vit_b_16.pt2 --input 3x224x224`
# and writes, per case: the wall time of each CLI command (median, range), the 95 % CI half-width
# of the ratio in percent of the ratio (median, range, how many runs <= 5 %), the spread of the
# ratios across the runs, and how many runs' CIs hold the median ratio of all of them (the runs
# agree when all do). The torchvision models are exported once into build/bench-models/ with the
# project's .venv. Results go in docs/PERFORMANCE.md, "Precision per second".
# Usage: bench/precision.sh [RUNS=10] [CASES="default resnet50 vit_b_16"] [BUILD_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${1:-10}"
CASES="${2:-default resnet50 vit_b_16}"
BUILD="$(cd "${3:-$ROOT/build}" && pwd)"
PRESET="${PRESET:-$ROOT/presets/default.json}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
source "$ROOT/bench/run_lib.sh"

MODELS="$BUILD/bench-models"
mkdir -p "$MODELS"
PY="$ROOT/.venv/bin/python"
[[ -x "$PY" ]] || { echo "no $PY: run tools/bootstrap.sh first" >&2; exit 2; }
if [[ " $CASES " == *" resnet50 "* && ! -f "$MODELS/resnet50.pt" ]] ||
   [[ " $CASES " == *" vit_b_16 "* && ! -f "$MODELS/vit_b_16.pt2" ]]; then
  echo "exporting torchvision resnet50 (TorchScript) and vit_b_16 (torch.export) into $MODELS"
  "$PY" - "$MODELS" <<'PY'
import os, sys, torch, torchvision
out = sys.argv[1]
torch.manual_seed(0)
x = torch.randn(1, 3, 224, 224)
if not os.path.exists(f"{out}/resnet50.pt"):
    m = torchvision.models.resnet50(weights=None).eval()
    torch.jit.trace(m, x).save(f"{out}/resnet50.pt")
if not os.path.exists(f"{out}/vit_b_16.pt2"):
    m = torchvision.models.vit_b_16(weights=None).eval()
    torch.export.save(torch.export.export(m, (x,)), f"{out}/vit_b_16.pt2")
PY
fi

: > "$TMP/rows.tsv"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(uptime)"
echo "cases: $CASES; $RUNS runs each, interleaved"
for i in $(seq 1 "$RUNS"); do
  for c in $CASES; do
    case "$c" in
      default)  one "default.$i" "$PRESET" ;;
      resnet50) one "resnet50.$i" "$MODELS/resnet50.pt" --input 3x224x224 ;;
      vit_b_16) one "vit_b_16.$i" "$MODELS/vit_b_16.pt2" --input 3x224x224 ;;
      *) echo "unknown case $c (default, resnet50, vit_b_16)" >&2; exit 2 ;;
    esac
  done
done

echo
python3 - "$TMP/rows.tsv" "$CASES" <<'PY'
import math, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(f"{'case':<9} {'runs':>4} {'wall s median (range)':>22} {'CI half-width % median (range)':>31} "
      f"{'<=5 %':>6} {'ratio range':>13} {'CIs holding the median ratio':>29}")
for case in sys.argv[2].split():
    rs = [r for r in rows if r[0].split(".")[0] == case]
    ok = [r for r in rs if r[1] == "0" and not math.isnan(float(r[2]))]
    walls = [float(r[5]) for r in rs]
    if not ok:
        print(f"{case:<9} {len(rs):>4}  no run gave a ratio")
        continue
    ratios = [float(r[2]) for r in ok]
    half = [(float(r[4]) - float(r[3])) / 2 / float(r[2]) * 100 for r in ok]
    med = statistics.median(ratios)
    holds = sum(float(r[3]) <= med <= float(r[4]) for r in ok)
    print(f"{case:<9} {len(rs):>4} {statistics.median(walls):>8.1f} ({min(walls):.1f}-{max(walls):.1f}) "
          f"{statistics.median(half):>15.1f} ({min(half):.1f}-{max(half):.1f}) "
          f"{sum(h <= 5 for h in half):>5}/{len(ok)} {min(ratios):>6.3f}-{max(ratios):.3f} "
          f"{holds:>21}/{len(ok)} (median {med:.3f})"
          + (f"  [{len(rs) - len(ok)} run(s) failed]" if len(ok) < len(rs) else ""))
PY
