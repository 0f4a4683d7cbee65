#!/usr/bin/env bash
# pitlane-worker start-up cost, on demand: RUNS times, the wall time from starting
# build/bin/pitlane-worker to its hello line on stdout (dynamic loading of libtorch and its
# dependencies, static initialisers, reading the environment), and to its exit after
# {"v":1,"cmd":"quit"} on stdin (the whole life of a worker that measures nothing), the latter
# split into quit -> bye event and bye -> process exit (teardown: static destructors, library
# unloading). Median, min and max of each. Also: the shared libraries the worker needs
# (ldd | wc -l, which counts linux-vdso and the loader too), the .so files actually mapped at
# hello (/proc/PID/maps, which also shows anything dlopen'ed at start), the libtorch version the
# hello names, and the worker's peak RSS from its bye event (peak_rss_bytes). Every run is
# counted, the first included (a cold page cache only if nothing touched libtorch before).
# Usage: bench/worker_startup.sh [BUILD_DIR] [RUNS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
RUNS="${2:-20}"
WORKER="$BUILD/bin/pitlane-worker"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export PITLANE_DB=none
[[ -x "$WORKER" ]] || { echo "no worker at $WORKER" >&2; exit 2; }
PY="$ROOT/.venv/bin/python"
[[ -x "$PY" ]] || PY=python3

echo "worker: $WORKER"
echo "ldd $(basename "$WORKER") | wc -l: $(ldd "$WORKER" | wc -l)"

"$PY" - "$WORKER" "$RUNS" <<'PY'
import json, os, statistics, subprocess, sys, time

worker, runs = sys.argv[1], int(sys.argv[2])
hello_s, exit_s, quit_s, bye_s, peaks = [], [], [], [], []
hello_env, mapped = None, None
for i in range(runs):
    t0 = time.perf_counter()
    p = subprocess.Popen([worker], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, bufsize=0)
    line = p.stdout.readline()
    t_hello = time.perf_counter()
    if not line:
        p.kill(); p.wait()
        sys.exit(f"run {i + 1}: worker closed stdout before hello (exit {p.returncode})")
    hello = json.loads(line)
    if hello.get("type") != "hello":
        sys.exit(f"run {i + 1}: first line is not a hello event: {line[:200]!r}")
    if mapped is None:  # once, outside the timed part (the worker waits on stdin here)
        hello_env = hello.get("environment", {})
        with open(f"/proc/{p.pid}/maps") as f:
            mapped = {l.split()[-1] for l in f if len(l.split()) >= 6 and ".so" in l.split()[-1]}
    tq = time.perf_counter()
    p.stdin.write(b'{"v":1,"cmd":"quit"}\n')
    p.stdin.close()
    bye, t_bye = None, None
    for l in iter(p.stdout.readline, b""):
        e = json.loads(l) if l.strip() else {}
        if e.get("type") == "bye":
            bye, t_bye = e, time.perf_counter()
    rc = p.wait()
    t_exit = time.perf_counter()
    if rc != 0 or bye is None:
        sys.exit(f"run {i + 1}: exit {rc}, bye event {'missing' if bye is None else 'present'}")
    hello_s.append(t_hello - t0)
    exit_s.append(t_exit - t0)
    quit_s.append(t_bye - tq)
    bye_s.append(t_exit - t_bye)
    peaks.append(bye.get("peak_rss_bytes", 0))
    print(f"  {i + 1:3d}: hello {1e3 * hello_s[-1]:8.1f} ms   exit {1e3 * exit_s[-1]:8.1f} ms"
          f"   (quit->bye {1e3 * quit_s[-1]:5.1f}, bye->exit {1e3 * bye_s[-1]:6.1f} ms)   peak RSS {peaks[-1] / 2**20:6.1f} MiB")

def row(name, xs, scale=1e3, unit="ms"):
    print(f"{name:<22} median {scale * statistics.median(xs):8.1f} {unit}   "
          f"min {scale * min(xs):8.1f}   max {scale * max(xs):8.1f}")

lib = hello_env.get("libtorch") if isinstance(hello_env, dict) else None
print(f"libtorch (hello)     : {lib if lib is not None else '(not in hello.environment)'}")
print(f".so files mapped at hello (/proc/PID/maps): {len(mapped)}")
print(f"{runs} runs:")
row("start -> hello", hello_s)
row("start -> exit (quit)", exit_s)
row("quit -> bye", quit_s)
row("bye -> exit", bye_s)
row("peak RSS (bye)", peaks, 1 / 2**20, "MiB")
PY
