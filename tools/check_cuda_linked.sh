#!/usr/bin/env bash
# ctest cuda_module_linked (issue 25): the worker of this build is a CUDA build of the pinned
# PyTorch wheel, compiled and linked, not a syntax check.
#   - pitlane-worker NEEDs libtorch_cuda.so and libc10_cuda.so, and the dynamic linker resolves
#     every libtorch / c10 library from the wheel (site-packages/torch/lib), none from /usr/lib
#     (Debian's libtorch 1.13 is never used), with no library missing;
#   - the CUDA module (core/engine/src/cuda_support.cpp) is in the binary: its symbols
#     (EventTimer, GraphRunner, allocatorStats) are defined there;
#   - the worker's hello says libtorch 2.x, cuda_build true, the CUDA runtime major of the
#     toolkit, Kineto; and, on a machine without a GPU, cuda_available false.
# Usage: check_cuda_linked.sh WORKER TORCH_LIB_DIR
set -euo pipefail
WORKER="$1" TORCH_LIB="$2"
fail() { echo "cuda_module_linked: FAIL: $*" >&2; exit 1; }
[ -x "$WORKER" ] || fail "no worker at $WORKER"
TORCH_LIB="$(cd "$TORCH_LIB" && pwd -P)"

needed="$(readelf -d "$WORKER" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
for lib in libtorch_cuda.so libc10_cuda.so libtorch_cpu.so libc10.so; do
  grep -qx "$lib" <<<"$needed" || fail "$WORKER does not NEED $lib (NEEDED: $(tr '\n' ' ' <<<"$needed"))"
done
resolved="$(ldd "$WORKER")"
if grep -q "not found" <<<"$resolved"; then fail "libraries not found: $(grep 'not found' <<<"$resolved")"; fi
for lib in libtorch.so libtorch_cpu.so libtorch_cuda.so libc10.so libc10_cuda.so; do
  path="$(awk -v l="$lib" '$1 == l {print $3}' <<<"$resolved")"
  [ -n "$path" ] || fail "ldd does not list $lib"
  real="$(readlink -f "$path")"
  [ "$(dirname "$real")" = "$TORCH_LIB" ] || fail "$lib resolves to $real, not the wheel's $TORCH_LIB"
done
if grep -E "/usr/lib/.*lib(torch|c10)" <<<"$resolved"; then fail "a Debian libtorch library is linked (above)"; fi

syms="$(nm -C "$WORKER" | sed "s/\[abi:cxx11\]//g")"
for s in "pitlane::engine::cuda::EventTimer::stopMs()" "pitlane::engine::cuda::GraphRunner::replay()" \
         "pitlane::engine::cuda::allocatorStats(int)" "pitlane::engine::cuda::versions()"; do
  grep -qF " T $s" <<<"$syms" || fail "the CUDA module's $s is not defined in $WORKER"
done

hello="$(printf '{"v":1,"cmd":"quit"}\n' | "$WORKER" 2>/dev/null | head -n 1)"
python3 - "$hello" <<'PY' || fail "hello"
import json, os, sys
h = json.loads(sys.argv[1])
env = h["environment"]
problems = []
major = int(env["libtorch"].split(".")[0])
if major < 2: problems.append(f"libtorch {env['libtorch']} is not 2.x")
if env.get("cuda_build") is not True: problems.append(f"cuda_build is {env.get('cuda_build')!r}")
rt = env.get("cuda_versions", {}).get("runtime", "")
if not rt.startswith("13."): problems.append(f"CUDA runtime {rt!r} is not the toolkit's 13.x")
if env.get("kineto") is not True: problems.append("no Kineto in this libtorch")
has_gpu = any(n.startswith("nvidia") and n[6:].isdigit() for n in os.listdir("/dev"))
if not has_gpu and env.get("cuda_available") is not False:
    problems.append("cuda_available is not false on a machine without a GPU")
if problems:
    print("; ".join(problems), file=sys.stderr); sys.exit(1)
print(f"hello: libtorch {env['libtorch']}, cuda_build, CUDA runtime {rt}, cuDNN "
      f"{env['cuda_versions'].get('cudnn')}, driver {env['cuda_versions'].get('driver')}, "
      f"kineto, cuda_available {env['cuda_available']}")
PY
echo "cuda_module_linked: PASS ($WORKER links the wheel's libtorch_cuda from $TORCH_LIB)"
