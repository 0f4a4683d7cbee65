#!/usr/bin/env bash
# ctest worker_only_build: configures the worker-only configuration (-DPITLANE_WORKER_ONLY=ON) in
# OUT against the pinned (CUDA) wheel with Qt and nlohmann-json's CMake package disabled (the
# header comes through -DPITLANE_NLOHMANN_JSON_INCLUDE), proves nothing of Qt was looked for, and
# checks its targets: pitlane-worker and its CUDA module, nothing
# of the CLI, the window, the tests or the models. The worker-only mode is BUILT by test
# cpu_torch_build (against a libtorch without CUDA, Qt disabled the same way), which then checks
# that binary's protocol and read-backs; the mode's CUDA module compiles the same source as the
# main build's.
# Usage: worker_only_build.sh SRC OUT TORCH_DIR JSON_INCLUDE
set -euo pipefail
SRC="$1" OUT="$2" TORCH_DIR="$3" JSON_INC="$4"
fail() { echo "worker_only_build: FAIL: $*" >&2; exit 1; }

[ -f "$JSON_INC/nlohmann/json.hpp" ] || fail "no nlohmann/json.hpp under $JSON_INC"
# A fresh configuration each time (the proof is about what configure looks for).
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
# The worker-only configuration is configured here, not built: test cpu_torch_build builds
# pitlane-worker in this same mode (Qt disabled, and against a libtorch without CUDA), so one
# build of the worker serves both checks (issue 45: ctest's time on 2 cores).
cat "$OUT/worker_only.txt" > /dev/null 2>&1 || fail "configure wrote no $OUT/worker_only.txt"
grep -q '^cuda=ON$' "$OUT/worker_only.txt" ||
  fail "the worker-only configuration against $TORCH_DIR says $(grep cuda= "$OUT/worker_only.txt"): the pinned wheel has CUDA"
targets="$(cmake --build "$OUT" --target help)"
# The worker and its CUDA module are the targets; no cli, window, session, store, report.
for t in pitlane-worker pitlane_cuda pitlane_engine pitlane_spec pitlane_protocol; do
  grep -qE "(^|[ /])$t(:|\$| )" <<<"$targets" || fail "no target $t in the worker-only build"
done
for t in pitlane-cli pitlane pitlane_session pitlane_store pitlane_report pitlane_widgets pitlane_window; do
  if grep -qE "(^|[ /])$t(:|\$| )" <<<"$targets"; then fail "target $t exists in the worker-only build"; fi
done
# No test and no model export in a worker-only build.
grep -qE '(^|[ /])(models|unit|test_[a-z_]+)(:|$| )' <<<"$targets" &&
  fail "the worker-only build has test or model targets: $(grep -oE '(^|[ /])(models|unit|test_[a-z_]+)(:|$| )' <<<"$targets" | head -3 | tr '\n' ' ')"
echo "worker_only_build: configured $OUT ($(tr '\n' ' ' < "$OUT/worker_only.txt")); no Qt looked for; targets pitlane-worker and pitlane_cuda"
echo "worker_only_build: PASS"
