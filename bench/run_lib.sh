# Shared by bench/budget_aa.sh and bench/precision.sh (source it after setting TMP and BUILD):
# copies the CLI and the worker into $TMP/bin (a rebuild of the tree while a bench runs does not
# touch them), sets CLI, PITLANE_WORKER and PITLANE_MODEL_DIR, and defines
#   one LABEL ARGS...   one `pitlane-cli run ARGS... --db none --quiet --json` with its wall time
#                       and the 1-minute load before and after; prints a line and appends a row
#                       (label, exit, ratio, CI low, CI high, wall, JSON wall_s, processes per arm,
#                       iterations per process, load before, load after, verdict) to $TMP/rows.tsv
mkdir -p "$TMP/bin"
cp "$BUILD/bin/pitlane-cli" "$BUILD/bin/pitlane-worker" "$TMP/bin/"
if [ -f "$BUILD/bin/libpitlane_cuda.so" ]; then cp "$BUILD/bin/libpitlane_cuda.so" "$TMP/bin/"; fi
CLI="$TMP/bin/pitlane-cli"
export PITLANE_WORKER="$TMP/bin/pitlane-worker" PITLANE_MODEL_DIR="$BUILD/bin/models"

load1() { cut -d' ' -f1 /proc/loadavg; }

# one RUN_LABEL ARGS...: one CLI run with --json; prints a line and appends a row to rows.tsv
one() {
  local label="$1" code t0 t1 l0 l1
  shift
  rm -f "$TMP/r.json"
  l0="$(load1)"
  t0="$(date +%s.%N)"
  set +e
  "$CLI" run "$@" --db none --quiet --json "$TMP/r.json" > "$TMP/out.txt" 2>&1
  code=$?
  set -e
  t1="$(date +%s.%N)"
  l1="$(load1)"
  python3 - "$TMP/r.json" "$code" "$label" "$t0" "$t1" "$l0" "$l1" "$TMP/rows.tsv" <<'PY'
import json, sys
path, code, label, t0, t1, l0, l1, rows = sys.argv[1:]
wall = float(t1) - float(t0)
try:
    r = json.load(open(path))
except Exception as e:
    print(f"  {label}: exit {code}, no results JSON ({e}), {wall:.1f} s")
    with open(rows, "a") as f:
        f.write(f"{label}\t{code}\tnan\tnan\tnan\t{wall:.1f}\tnan\t0\t-\t{l0}\t{l1}\tno results JSON\n")
    sys.exit(0)
c = (r.get("comparisons") or [{}])[0]
rep = r.get("replication", {})
design = rep.get("design", {})
first = design.get("first", {})
procs = rep.get("processes", 0)
meas = rep.get("measured_iters", {})
ipp = "/".join(str(round(v / procs)) if procs else "?" for v in meas.values()) or "?"
planned = first.get("iters_per_process", "-")
ci = c.get("ci95", [float("nan")] * 2)
verdict = c.get("verdict", "(no comparison)")
extra = []
if design.get("added"):
    added = design["added"]
    extra.append(f"added {len(added)} round(s) of {'/'.join(str(a.get('iters_per_process')) for a in added)} iters "
                 f"(variance ratio {added[-1].get('variance_ratio', float('nan')):.2f}, {added[-1].get('variance_ratio_source', '?')})")
if design.get("trimmed"): extra.append(f"trimmed {design['trimmed'].get('rounds_dropped')} round(s)")
print(f"  {label}: {verdict} | ratio {c.get('ratio', float('nan')):.3f} CI {ci[0]:.3f}-{ci[1]:.3f} | "
      f"wall {wall:.1f} s (JSON wall_s {r.get('wall_s', float('nan')):.1f}) | {procs} processes/arm x "
      f"{ipp} iters (planned {planned}) | load {l0} -> {l1}" + (f" | {'; '.join(extra)}" if extra else "")
      + (f" | exit {code}" if code != "0" else ""))
with open(rows, "a") as f:
    f.write(f"{label}\t{code}\t{c.get('ratio', float('nan')):.3f}\t{ci[0]:.3f}\t{ci[1]:.3f}\t{wall:.1f}\t"
            f"{r.get('wall_s', float('nan')):.1f}\t{procs}\t{ipp}\t{l0}\t{l1}\t{verdict}\n")
PY
  if [ "$code" != 0 ]; then tail -5 "$TMP/out.txt" | sed 's/^/    /'; fi
}

