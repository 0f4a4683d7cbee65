#!/usr/bin/env bash
# pitlane-worker start-up cost (issue 43: a CPU arm's worker reaches hello in <= 150 ms, median
# of 20). Starts the worker RUNS times the way the runner starts a CPU arm's local worker
# (core/session/src/worker_process.cpp, sandbox_launch.cpp): a socket pair whose child end is fd
# 3 (--channel-fd 3), stdin from /dev/null, `--sandbox on --scratch DIR --read MODEL
# --memory-limit-mb N`, the caller's environment. Measures the wall time from just before the
# fork/exec to the hello line on the socket (dynamic loading of libtorch and whatever it needs,
# static initialisers, the sandbox, the hello's manifest), then quits the worker and waits for
# it. Reports median and p90 (nearest rank) of the RUNS, and, from one worker waiting after
# hello, the shared libraries mapped (/proc/PID/maps, .so files: whatever was dlopen'ed at start
# included), how many of them are CUDA's, and the hello's cuda_* fields. Every run counts (the
# first included). With several workers (WORKER=... WORKER=...), the runs alternate between them
# (A B A B ...) so that the machine's drift hits each alike.
# Usage: bench/worker_startup.sh [RUNS] [WORKER]...   (default: 20, build/bin/pitlane-worker)
# Env: PITLANE_WORKER_CUDA=preload to time a CUDA arm's start (the module loaded before hello).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${1:-20}"
shift || true
WORKERS=("$@")
[[ ${#WORKERS[@]} -gt 0 ]] || WORKERS=("$ROOT/build/bin/pitlane-worker")
for w in "${WORKERS[@]}"; do [[ -x "$w" ]] || { echo "no worker at $w" >&2; exit 2; }; done
MODEL="$ROOT/build/bin/models/mlp.pt"
[[ -f "$MODEL" ]] || MODEL="$(dirname "${WORKERS[0]}")/models/mlp.pt"
[[ -f "$MODEL" ]] || { echo "no bundled model mlp.pt (build the models target)" >&2; exit 2; }
PY="$ROOT/.venv/bin/python"
[[ -x "$PY" ]] || PY=python3

"$PY" - "$RUNS" "$MODEL" "${WORKERS[@]}" <<'PY'
import json, os, socket, statistics, subprocess, sys, tempfile, time

runs, model, workers = int(sys.argv[1]), sys.argv[2], sys.argv[3:]

def start(worker, scratch):
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    args = [worker, "--sandbox", "on", "--scratch", scratch, "--read", model,
            "--memory-limit-mb", "4096", "--channel-fd", "3"]
    fd = child.fileno()
    def as_fd3():  # in the child, as WorkerProcess's child modifier does: its end becomes fd 3
        if fd != 3: os.dup2(fd, 3)
        os.set_inheritable(3, True)
    t0 = time.perf_counter()
    # close_fds=False: the child modifier's dup2 comes after Popen's closing of descriptors;
    # everything else of ours is close-on-exec (Python's default).
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=as_fd3)
    child.close()
    f = parent.makefile("rb")
    line = f.readline()
    t = time.perf_counter() - t0
    if not line:
        p.wait()
        sys.exit(f"{worker}: no hello on the channel (exit {p.returncode})")
    hello = json.loads(line)
    if hello.get("type") != "hello":
        sys.exit(f"{worker}: first line is not a hello event: {line[:200]!r}")
    return p, parent, f, hello, t

def stop(p, sock, f):
    sock.sendall(b'{"v":1,"cmd":"quit"}\n')
    for l in f:
        if b'"bye"' in l: break
    rc = p.wait()
    sock.close()
    if rc != 0: sys.exit(f"worker exit {rc}")

def p90(xs):  # nearest rank
    s = sorted(xs)
    return s[max(0, -(-9 * len(s) // 10) - 1)]

times = {w: [] for w in workers}
info = {}
with tempfile.TemporaryDirectory() as scratch:
    for w in workers:  # libraries and hello, from one worker waiting after hello (untimed)
        p, sock, f, hello, _ = start(w, scratch)
        with open(f"/proc/{p.pid}/maps") as m:
            libs = {l.split()[-1] for l in m if len(l.split()) >= 6 and ".so" in l.split()[-1]}
        stop(p, sock, f)
        cuda = sorted(os.path.basename(l) for l in libs
                      if any(k in os.path.basename(l) for k in ("cuda", "cublas", "cudnn", "cufft", "curand",
                             "cusparse", "cufile", "nccl", "nvshmem", "nvJitLink", "cupti", "cudart", "nvrtc")))
        env = hello.get("environment", {})
        info[w] = (len(libs), cuda, {k: env.get(k) for k in ("cuda_build", "cuda_available", "cuda_devices",
                                                              "cuda_module_loaded", "cuda_versions")})
    for i in range(runs):
        for w in workers:
            p, sock, f, _, t = start(w, scratch)
            stop(p, sock, f)
            times[w].append(t)
for w in workers:
    n, cuda, env = info[w]
    xs = times[w]
    print(f"worker: {w}")
    print(f"  shared libraries mapped at hello: {n} ({len(cuda)} CUDA: {' '.join(cuda) or '-'})")
    print(f"  hello: {json.dumps(env)}")
    print(f"  exec -> hello, {len(xs)} runs: median {1e3 * statistics.median(xs):.1f} ms, "
          f"p90 {1e3 * p90(xs):.1f} ms, min {1e3 * min(xs):.1f}, max {1e3 * max(xs):.1f}")
PY
