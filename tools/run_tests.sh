#!/usr/bin/env bash
# Builds what the tests need, runs every test (ctest on build/), then lists what was skipped and
# why: ctest reports a skipped test as "Skipped", never "Passed", and each skip's reason comes from
# build/test-skips/ (written by tests/common/skip_report.cpp) or, for a QtTest or a script, from
# its "SKIP" lines in the ctest log. The exit status is ctest's (or bootstrap's, when the build
# fails). Extra arguments go to ctest (e.g. -R store, -L gui).
#
# `bash tools/bootstrap.sh` builds the product only (the window, the CLI, the worker, the models);
# the tests' packages, their Python (.venv-tests) and the test targets come here, through
# `bash tools/bootstrap.sh --tests` (nothing to do when they are there and up to date).
# PITLANE_TESTS_NO_BUILD=1 skips that step (a shared tree whose build/ someone else builds).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${PITLANE_BUILD_DIR:-build}
if [ "${PITLANE_TESTS_NO_BUILD:-0}" != 1 ]; then
  if [ "$BUILD" != build ]; then
    cmake --build "$BUILD" -j"$(nproc)" || exit $?
  else
    bash tools/bootstrap.sh --tests || exit $?
  fi
fi
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
# As many tests at a time as there are cores (ctest -j): most tests wait on their workers' pipes
# or on one worker thread, and a test that must not share the machine says so itself
# (RUN_SERIAL: a measured direction; cpu_torch_build compiles with one job). Extra
# arguments come after, so `-j1` runs them one at a time again.
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" "$@"
rc=$?
log="$BUILD/Testing/Temporary/LastTest.log"
echo
echo "=== skipped tests, and why ==="
n=0
for f in "$BUILD"/test-skips/*.txt; do
  [ -s "$f" ] && [ "$f" -nt "$stamp" ] || continue
  entry=$(basename "$f" .txt)
  while IFS= read -r line; do
    echo "  $entry: $line"
    n=$((n + 1))
  done <"$f"
done
# QtTest binaries ("SKIP   : Class::test() reason") and scripts ("SKIP ...") print their own.
if [ -f "$log" ] && [ "$log" -nt "$stamp" ]; then
  while IFS= read -r line; do
    echo "  $line"
    n=$((n + 1))
  done < <(grep -E '^SKIP   : ' "$log" | sed 's/^SKIP   : //' | sort -u)
fi
[ "$n" -eq 0 ] && echo "  none"
exit $rc
