#!/usr/bin/env bash
# Runs pitlane-cli over a corpus written by tools/model_corpus.py and tallies what happened to
# each file (docs/RELIABILITY.md, "Damaged models"): crashes (exit by a signal), hangs (past the
# timeout), refusals by error code, acceptances; for every accepted file, whether Python's
# zipfile finds an entry whose CRC-32 does not match (must be 0), and whether any hostile pickle
# ran (its MARKER file exists; must be 0).
#
# usage: tools/model_corpus_run.sh CORPUS_DIR [--validate-only] [--check]
#   --validate-only  only `pitlane-cli validate --no-load` (no worker: seconds for the whole corpus)
#   --check          exit 1 unless crashes, hangs, accepted CRC mismatches and markers are all 0
# Environment: PITLANE_BIN_DIR (default build/bin), PITLANE_PYTHON (default /usr/bin/python3),
# VALIDATE_TIMEOUT_S (20), RUN_TIMEOUT_S (90).
set -uo pipefail

corpus=${1:?usage: model_corpus_run.sh CORPUS_DIR [--validate-only] [--check]}
shift
validate_only=0
check=0
for a in "$@"; do
  case $a in
    --validate-only) validate_only=1 ;;
    --check) check=1 ;;
    *) echo "model_corpus_run: unknown option $a" >&2; exit 2 ;;
  esac
done
bin=${PITLANE_BIN_DIR:-build/bin}
py=${PITLANE_PYTHON:-/usr/bin/python3}
cli="$bin/pitlane-cli"
export PITLANE_WORKER=${PITLANE_WORKER:-$bin/pitlane-worker}
export PITLANE_MODEL_DIR=${PITLANE_MODEL_DIR:-$bin/models}
[ -x "$cli" ] || { echo "model_corpus_run: no $cli" >&2; exit 2; }
[ -f "$corpus/corpus.json" ] || { echo "model_corpus_run: no $corpus/corpus.json" >&2; exit 2; }

out="$corpus/results.tsv"
printf 'name\tvalidate_rc\tvalidate_code\tvalidate_s\trun_rc\trun_s\n' > "$out"
for preset in "$corpus"/[0-9]*.json; do
  case $preset in *.out.json) continue ;; esac
  name=$(basename "$preset" .json)
  t0=$(date +%s.%N)
  timeout -k 5 "${VALIDATE_TIMEOUT_S:-20}" "$cli" validate --no-load "$preset" \
    > "$corpus/$name.validate.out" 2> "$corpus/$name.validate.err"
  vrc=$?
  t1=$(date +%s.%N)
  # The code is the word after "model: " (pitlane-cli validate), or the preset error's field.
  vcode=$(sed -n 's/.*: model: \([a-z_]*\): .*/\1/p' "$corpus/$name.validate.err" | head -1)
  [ -z "$vcode" ] && [ "$vrc" -eq 2 ] && vcode=invalid_preset
  rrc=-1
  rs=0
  if [ "$validate_only" -eq 0 ]; then
    rm -f "$corpus/$name.out.json"
    timeout -k 5 "${RUN_TIMEOUT_S:-90}" "$cli" run "$preset" --db none --json "$corpus/$name.out.json" \
      > "$corpus/$name.run.out" 2> "$corpus/$name.run.err"
    rrc=$?
    rs=$(echo "$(date +%s.%N) - $t1" | bc)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$vrc" "${vcode:--}" "$(echo "$t1 - $t0" | bc)" \
    "$rrc" "$rs" >> "$out"
done

"$py" - "$corpus" "$check" <<'EOF'
import collections, csv, glob, json, os, sys, zipfile, zlib

corpus, check = sys.argv[1], sys.argv[2] == "1"
manifest = json.load(open(os.path.join(corpus, "corpus.json")))["files"]
rows = list(csv.DictReader(open(os.path.join(corpus, "results.tsv")), delimiter="\t"))


def crc_mismatches(path):
    """Entries whose data does not match their recorded CRC-32 (zipfile reads and checks)."""
    bad = []
    try:
        with zipfile.ZipFile(path) as z:
            for i in z.infolist():
                try:
                    with z.open(i) as f:
                        while f.read(1 << 20):
                            pass
                except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as e:
                    bad.append(f"{i.filename}: {e}")
    except Exception as e:  # not a zip at all: nothing to mismatch
        return []
    return bad


def outcome(rc):
    rc = int(rc)
    if rc == 124:
        return "hang"
    if rc >= 128 or rc < -1:
        return "crash"
    return None


tally = collections.Counter()
by_kind = collections.defaultdict(collections.Counter)
run_status = collections.Counter()
accepted_bad = []
slowest = 0.0
for r in rows:
    kind = manifest[r["name"]]["kind"]
    v = outcome(r["validate_rc"])
    if v:
        tally[f"validate {v}"] += 1
    elif r["validate_rc"] == "0":
        tally["accepted"] += 1
        by_kind[kind]["accepted"] += 1
        bad = crc_mismatches(os.path.join(corpus, r["name"] + ".pt"))
        if bad:
            accepted_bad.append((r["name"], bad[0]))
    else:
        tally[f"refused {r['validate_code']}"] += 1
        by_kind[kind][r["validate_code"]] += 1
    slowest = max(slowest, float(r["validate_s"]))
    if r["run_rc"] == "-1":
        continue
    v = outcome(r["run_rc"])
    if v:
        run_status[f"pitlane-cli {v}"] += 1
        continue
    try:
        res = json.load(open(os.path.join(corpus, r["name"] + ".out.json")))
        for a in res["arms"]:
            code = (a.get("error") or {}).get("code", "")
            run_status[a["status"] + (f" {code}" if code else "")] += 1
            if a["status"] == "ok" and r["validate_rc"] != "0":
                run_status["MEASURED BUT REFUSED BY VALIDATE"] += 1
    except Exception as e:
        run_status[f"no results JSON (exit {r['run_rc']})"] += 1

markers = glob.glob(os.path.join(corpus, "MARKER-*"))
summary = {
    "files": len(rows),
    "validate": dict(sorted(tally.items())),
    "validate_slowest_s": round(slowest, 3),
    "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
    "run_arms": dict(sorted(run_status.items())),
    "accepted_with_crc_mismatch": len(accepted_bad),
    "hostile_pickles_that_ran": len(markers),
}
json.dump(summary, open(os.path.join(corpus, "summary.json"), "w"), indent=1)
print(json.dumps(summary, indent=1))
for name, why in accepted_bad:
    print(f"ACCEPTED WITH A CRC MISMATCH: {name}: {why}")
failures = sum(n for k, n in tally.items() if "crash" in k or "hang" in k) + \
    sum(n for k, n in run_status.items() if "pitlane-cli" in k or "MEASURED" in k) + \
    len(accepted_bad) + len(markers)
if check and failures:
    print(f"model_corpus_run: {failures} crash(es), hang(s), accepted mismatch(es) or markers")
    sys.exit(1)
EOF
