#!/usr/bin/env bash
# Peer agreement, on demand: Pitlane against torch.utils.benchmark of the SAME pinned torch (the
# wheel in .venv that the build links) on the SAME TorchScript file (build/bin/models/NAME.pt,
# checked by SHA-256 against the results JSON's model_sha256; the script stops if they differ)
# and the same knobs: eval, no_grad, one intra-op and one inter-op thread, system allocator,
# batch 1. Per case, ROUNDS rounds, each one `pitlane-cli run` of a one-arm preset (one worker
# process) then one python process that loads the file with torch.jit.load, warms up as many
# forwards as Pitlane's warmup_iters, and runs Timer("m(x)").blocked_autorange(min_run_time =
# the time Pitlane measured that round). Prints per round both medians and pitlane/peer, then
# per case the median of the per-round ratios and their min-max. The estimators differ a little:
# Pitlane's median is over single iterations (steady_clock around each forward in C++), the
# peer's over blocks of number_per_run iterations (each block's mean per iteration, perf_counter,
# the Python call overhead of m(x) included: visible on the mlp's ~0.1 ms, not on resnet18).
# Usage: bench/peer_agreement.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
ROUNDS="${2:-5}"
CLI="$BUILD/bin/pitlane-cli"
PY="$ROOT/.venv/bin/python"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export PITLANE_DB=none
[[ -x "$CLI" ]] || { echo "no pitlane-cli at $CLI" >&2; exit 2; }
[[ -x "$PY" ]] || { echo "no python at $PY (the .venv with the pinned torch)" >&2; exit 2; }

# Cases: model name | input shape without the batch dimension | warmup iters | measured iters |
# block iters. Iterations are sized for a few seconds of measurement per run.
CASES=(
  "resnet18|3,64,64|20|300|50"
  "mlp|256|200|20000|1000"
)

cat > "$TMP/peer.py" <<'PY'
import hashlib, json, sys, time
import torch
import torch.utils.benchmark as benchmark

model, shape, warmup, min_run_time, out = (sys.argv[1], [int(s) for s in sys.argv[2].split(",")],
                                           int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
torch.set_num_threads(1)
torch.set_num_interop_threads(1)
m = torch.jit.load(model)
m.eval()
torch.manual_seed(0)
x = torch.randn(1, *shape)
with torch.no_grad():
    for _ in range(warmup):
        m(x)
    t = benchmark.Timer(stmt="m(x)", globals={"m": m, "x": x}, num_threads=1)
    r = t.blocked_autorange(min_run_time=min_run_time)
json.dump({"median_ns": r.median * 1e9, "iqr_ns": r.iqr * 1e9, "blocks": len(r.times),
           "number_per_run": r.number_per_run, "torch": torch.__version__,
           "threads": [torch.get_num_threads(), torch.get_num_interop_threads()],
           "sha256": hashlib.sha256(open(model, "rb").read()).hexdigest()}, open(out, "w"))
PY

cat > "$TMP/round.py" <<'PY'
# Reads one round's results JSON and peer JSON, prints a line, appends a row to rows.jsonl.
import json, os, sys
case, rnd, res, peer, rows, model = sys.argv[1:7]
r = json.load(open(res)); p = json.load(open(peer))
a = r["arms"][0]
if a.get("status") != "ok":
    sys.exit(f"{case} round {rnd}: pitlane arm status {a.get('status')}: {a.get('error')}")
# The file's SHA-256: per arm where the results JSON has it, else the run's (top level).
sha = a.get("model_sha256") or r.get("model_sha256")
if not sha:
    sys.exit(f"{case}: the results JSON names no model_sha256: cannot check the peer's file")
if sha != p["sha256"]:
    sys.exit(f"{case}: pitlane measured a file with sha256 {sha}, "
             f"the peer {model} (sha256 {p['sha256']}): not the same file")
s = a["summary"]
measured_s = sum(a.get("latency_ns") or []) / 1e9 or s["n"] * s["mean_ns"] / 1e9
pit, peer_ns = s["median_ns"], p["median_ns"]
if int(rnd) == 1:
    ap = a.get("applied", {})
    print(f"  model  : {model}, sha256 {sha[:16]}... (the same file for both)")
    print(f"  pitlane: libtorch {a.get('environment', {}).get('libtorch', '?')}, applied mode "
          f"{ap.get('mode')} grad {ap.get('grad')} threads intra/inter {ap.get('intra_op_threads')}/"
          f"{ap.get('inter_op_threads')} allocator {ap.get('allocator')} batch {ap.get('batch_size')}")
    print(f"  peer   : torch {p['torch']}, threads intra/inter {p['threads'][0]}/{p['threads'][1]}, "
          f"eval, no_grad")
print(f"  round {rnd}: pitlane {pit / 1e6:9.4f} ms (n {s['n']}, {measured_s:.1f} s)   "
      f"peer {peer_ns / 1e6:9.4f} ms ({p['blocks']} blocks x {p['number_per_run']})   "
      f"pitlane/peer {pit / peer_ns:.3f}")
with open(rows, "a") as f:
    f.write(json.dumps({"case": case, "pitlane_ns": pit, "peer_ns": peer_ns}) + "\n")
PY

for c in "${CASES[@]}"; do
  IFS='|' read -r name shape warmup iters block <<<"$c"
  model="$BUILD/bin/models/$name.pt"
  [[ -f "$model" ]] || { echo "no model file $model" >&2; exit 2; }
  cat > "$TMP/$name.json" <<JSON
{"name": "peer agreement: $name $shape", "model": "$name",
 "input": [{"shape": [$shape], "dtype": "float32"}],
 "run": {"warmup_iters": $warmup, "iters": $iters, "block_iters": $block, "processes": 1},
 "arms": [{"name": "pitlane", "knobs": {"mode": "eval", "grad": "no_grad", "batch_size": 1,
           "intra_op_threads": 1, "inter_op_threads": 1, "allocator": "system"}}]}
JSON
  echo "== $name, input 1x${shape//,/x}: $ROUNDS rounds, pitlane then peer =="
  for i in $(seq "$ROUNDS"); do
    if ! "$CLI" run "$TMP/$name.json" --json "$TMP/$name.out.json" --quiet \
         >"$TMP/cli.log" 2>&1; then
      echo "pitlane-cli run failed on $name:" >&2; cat "$TMP/cli.log" >&2; exit 1
    fi
    secs=$("$PY" -c 'import json,sys; a=json.load(open(sys.argv[1]))["arms"][0]; s=a["summary"]
print(max(0.2, sum(a.get("latency_ns") or []) / 1e9 or s["n"] * s["mean_ns"] / 1e9))' \
           "$TMP/$name.out.json")
    # stderr kept apart: importing torch.utils.benchmark warns "No CUDA runtime is found" here.
    if ! "$PY" "$TMP/peer.py" "$model" "$shape" "$warmup" "$secs" "$TMP/$name.peer.json" \
         2>"$TMP/peer.log"; then
      echo "peer failed on $name:" >&2; cat "$TMP/peer.log" >&2; exit 1
    fi
    "$PY" "$TMP/round.py" "$name" "$i" "$TMP/$name.out.json" "$TMP/$name.peer.json" \
          "$TMP/rows.jsonl" "$model"
  done
done

echo "== summary: pitlane/peer per case, median of the per-round ratios (min-max) =="
"$PY" - "$TMP/rows.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for case in dict.fromkeys(r["case"] for r in rows):
    rs = [r for r in rows if r["case"] == case]
    ratios = [r["pitlane_ns"] / r["peer_ns"] for r in rs]
    print(f"  {case:<10} {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) over "
          f"{len(rs)} rounds; medians: pitlane "
          f"{statistics.median(r['pitlane_ns'] for r in rs) / 1e6:.4f} ms, "
          f"peer {statistics.median(r['peer_ns'] for r in rs) / 1e6:.4f} ms")
PY
