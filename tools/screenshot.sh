#!/bin/sh
# Screenshot of the real workbench window after a run, under a virtual X server (no display or
# GPU needed). Builds nothing: build first (ninja -C build pitlane).
#
#   tools/screenshot.sh OUT.png [PRESET.json] [BUILD_DIR] [--root ROOT.png] [--dark]
#                       [--db HISTORY.sqlite] [--runs N] [--tab NAME] [--screen WxH]
#
# OUT.png is the window as the app renders it (pitlane --screenshot, QWidget::grab). With
# --root, the whole X screen is also captured with ImageMagick `import -window root` while the
# window is still up: what a user would see, fonts and all, as the X server drew it.
# The run history is a throw-away file unless --db names one (never the user's). --runs N runs
# the preset N times in the window (the first N-1 without a screenshot), so the history panel
# shows N more rows. --tab NAME shows that results tab (verdict, applied, log, advice).
# --screen WxH: the virtual screen (default 1600x1000); the window opens on all of it, as on a
# first start (docs/screenshots: 1366x768 and 1920x1080).
set -eu

usage() {
    echo "usage: $0 OUT.png [PRESET.json] [BUILD_DIR] [--root ROOT.png] [--dark] [--db F] [--runs N] [--tab NAME] [--screen WxH]" >&2
    exit 2
}

here=$(cd "$(dirname "$0")/.." && pwd)
out="" preset="" build="" root="" dark="" db="" runs=1 tab="" size=1600x1000
while [ $# -gt 0 ]; do
    case "$1" in
        --root) [ $# -ge 2 ] || usage; root=$2; shift 2 ;;
        --dark) dark=--dark; shift ;;
        --db) [ $# -ge 2 ] || usage; db=$2; shift 2 ;;
        --runs) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
        --tab) [ $# -ge 2 ] || usage; tab="--tab $2"; shift 2 ;;
        --screen) [ $# -ge 2 ] || usage; size=$2; shift 2 ;;
        -h|--help) usage ;;
        *) if [ -z "$out" ]; then out=$1; elif [ -z "$preset" ]; then preset=$1;
           elif [ -z "$build" ]; then build=$1; else usage; fi; shift ;;
    esac
done
[ -n "$out" ] || usage
preset=${preset:-$here/presets/default.json}
build=${build:-$here/build}
bin=$build/bin/pitlane
[ -x "$bin" ] || { echo "$0: $bin not found: build the 'pitlane' target first" >&2; exit 2; }
command -v xvfb-run >/dev/null || { echo "$0: xvfb-run not found (apt-get install xvfb)" >&2; exit 2; }

case "$runs" in ''|*[!0-9]*) usage ;; esac
[ "$runs" -ge 1 ] || usage

# A throw-away settings folder (and history, unless --db): the screenshot does not depend on
# (or change) the user's setup or run history.
config=$(mktemp -d)
trap 'rm -rf "$config"' EXIT
export XDG_CONFIG_HOME="$config"
db=${db:-$config/history.sqlite}
unset QT_QPA_PLATFORM

case "$size" in *[!0-9x]*|x*|*x) usage ;; esac
screen="-screen 0 ${size}x24"
i=1
while [ $i -lt "$runs" ]; do
    xvfb-run -a -s "$screen" "$bin" "$preset" --run --quit-when-done --db "$db" $dark || exit $?
    i=$((i + 1))
done
if [ -z "$root" ]; then
    xvfb-run -a -s "$screen" "$bin" "$preset" --run --screenshot "$out" --quit-when-done \
        --db "$db" $dark $tab
    exit $?
fi

command -v import >/dev/null || { echo "$0: import not found (apt-get install imagemagick)" >&2; exit 2; }
# Inside the X session: run the window, wait for its own screenshot (the run is done and the
# verdict is in), let the X server catch up, capture the screen, then close the window.
xvfb-run -a -s "$screen" sh -c '
    bin=$1 preset=$2 out=$3 root=$4 dark=$5 db=$6 tab=$7
    rm -f "$out"
    "$bin" "$preset" --run --screenshot "$out" --db "$db" $dark $tab &
    pid=$!
    i=0
    while [ ! -s "$out" ] && kill -0 $pid 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.25; i=$((i + 1)); done
    sleep 1
    status=0
    [ -s "$out" ] && import -window root "$root" || status=1
    kill $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    exit $status
' sh "$bin" "$preset" "$out" "$root" "$dark" "$db" "$tab"
