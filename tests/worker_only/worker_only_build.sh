#!/usr/bin/env bash
# ctest worker_only_build: configures and builds the worker-only configuration
# (-DPITLANE_WORKER_ONLY=ON) in OUT with Qt and nlohmann-json's CMake package disabled (the header
# comes through -DPITLANE_NLOHMANN_JSON_INCLUDE), proves nothing of Qt was looked for or linked,
# then checks the protocol of THAT binary: tools/gpu_check.py --cpu-protocol (hello, configure
# mlp, warmup and a measured block, samples, block_done, quit, bye) and the integration test
# test_worker_readback with PITLANE_WORKER pointing at it.
# Usage: worker_only_build.sh SRC OUT TORCH_DIR JSON_INCLUDE MODEL_DIR READBACK_TEST
set -euo pipefail
SRC="$1" OUT="$2" TORCH_DIR="$3" JSON_INC="$4" MODELS="$5" READBACK="$6"
fail() { echo "worker_only_build: FAIL: $*" >&2; exit 1; }

[ -f "$JSON_INC/nlohmann/json.hpp" ] || fail "no nlohmann/json.hpp under $JSON_INC"
# A fresh configuration each time (the proof is about what configure looks for); the objects
# stay, so an unchanged tree rebuilds nothing.
rm -f "$OUT/CMakeCache.txt"
GEN=(-G "Unix Makefiles")
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
cmake -S "$SRC" -B "$OUT" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DPITLANE_WORKER_ONLY=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON -DCMAKE_DISABLE_FIND_PACKAGE_QCustomPlotQt6=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DPITLANE_NLOHMANN_JSON_INCLUDE="$JSON_INC" \
  -DTorch_DIR="$TORCH_DIR" > "$OUT.configure.log" 2>&1 || { cat "$OUT.configure.log"; fail "configure"; }
grep -q "nlohmann-json: the header in $JSON_INC" "$OUT.configure.log" ||
  fail "nlohmann-json did not come from -DPITLANE_NLOHMANN_JSON_INCLUDE"
# Qt and QCustomPlot were never looked for: CMake reports CMAKE_DISABLE_FIND_PACKAGE_<P> as a
# variable the project did not use exactly when no find_package(<P>) ran (REQUIRED or not).
unused="$(awk '/Manually-specified variables were not used by the project/{f=1} f' "$OUT.configure.log")"
for pkg in Qt6 QCustomPlotQt6; do
  grep -q "CMAKE_DISABLE_FIND_PACKAGE_$pkg" <<<"$unused" ||
    fail "the worker-only configuration called find_package($pkg) (see $OUT.configure.log)"
done
# Nothing of Qt, QCustomPlot or SQLite in the cache either.
if grep -iE '^(Qt6|Qt5|QT_|QCustomPlot|SQLite)[^:]*:' "$OUT/CMakeCache.txt"; then
  fail "the worker-only configuration looked for Qt / QCustomPlot / SQLite (cache entries above)"
fi
cmake --build "$OUT" -j2 || fail "build"
WORKER="$OUT/bin/pitlane-worker"
[ -x "$WORKER" ] || fail "no $WORKER"
# Only the worker's libraries exist in this build: no cli, window, session, store, report.
targets="$(cmake --build "$OUT" --target help)"
for t in pitlane-cli pitlane pitlane_session pitlane_store pitlane_report pitlane_widgets pitlane_window; do
  if grep -qE "(^|[ /])$t(:|\$| )" <<<"$targets"; then fail "target $t exists in the worker-only build"; fi
done
# The worker itself links no Qt (Debian's libtorch pulls Qt5 in through OpenCV; that is not ours).
if readelf -d "$WORKER" | grep NEEDED | grep -i qt; then fail "pitlane-worker links Qt directly"; fi
readelf -d "$WORKER" | grep -q 'NEEDED.*libtorch' || fail "pitlane-worker does not link libtorch?"
echo "worker_only_build: built $WORKER ($(tr '\n' ' ' < "$OUT/worker_only.txt")); no Qt looked for or linked"

python3 "$SRC/tools/gpu_check.py" --cpu-protocol --worker "$WORKER" --models "$MODELS" ||
  fail "the protocol of $WORKER"
[ -x "$READBACK" ] || fail "$READBACK is missing: build the test_worker_readback target (the full build has it)"
PITLANE_WORKER="$WORKER" PITLANE_MODEL_DIR="$MODELS" "$READBACK" || fail "test_worker_readback against $WORKER"
echo "worker_only_build: PASS"
