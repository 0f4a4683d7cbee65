#!/usr/bin/env bash
# Screenshots of the real window under Xvfb, as a user sees the screen (no window manager):
# a lesson preset loaded and run, at 1366x768 and 1920x1080, light and dark, into docs/screenshots/.
#   tools/screenshots.sh [PRESET] [OUT_DIR]
# Needs xvfb-run and imagemagick's import (tools/bootstrap.sh installs both).
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET="${1:-presets/lesson_cold_start.json}"
OUT="${2:-docs/screenshots}"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export XDG_CONFIG_HOME="$WORK/config"  # a first start: no remembered geometry or settings
for size in 1366x768 1920x1080; do
  for theme in light dark; do
    name="$OUT/window-$size-$theme.png"
    extra=()
    [[ $theme == dark ]] && extra=(--dark)
    rm -rf "$XDG_CONFIG_HOME"
    # The window saves its own PNG when the run is done; then the whole screen is taken.
    xvfb-run -a -s "-screen 0 ${size}x24" bash -c '
      build/bin/pitlane "$0" --run --db none --screenshot "$1/done.png" "${@:3}" &
      pid=$!
      for _ in $(seq 600); do [[ -f "$1/done.png" ]] && break; sleep 0.5; done
      sleep 1
      import -window root "$2"
      kill $pid; wait $pid 2>/dev/null || true' "$PRESET" "$WORK" "$name" "${extra[@]}"
    rm -f "$WORK/done.png"
    echo "$name"
  done
done
