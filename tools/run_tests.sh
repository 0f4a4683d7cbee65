#!/usr/bin/env bash
# Runs every test (ctest on build/), then lists what was skipped and why: ctest reports a skipped
# test as "Skipped", never "Passed", and each skip's reason comes from build/test-skips/ (written
# by tests/common/skip_report.cpp) or, for a QtTest or a script, from its "SKIP" lines in the
# ctest log. The exit status is ctest's. Extra arguments go to ctest (e.g. -R store, -L gui).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${PITLANE_BUILD_DIR:-build}
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
ctest --test-dir "$BUILD" --output-on-failure "$@"
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
