#!/usr/bin/env bash
# ctest cuda_module_linked (issues 25, 43): the worker of this build is a CUDA build of the pinned
# PyTorch wheel, compiled and linked, not a syntax check, with CUDA in its own module:
#   - pitlane-worker NEEDs libtorch_cpu.so and libc10.so and no CUDA library of torch
#     (libtorch.so, libtorch_cuda.so, libc10_cuda.so): a CPU arm maps none of them;
#   - the CUDA module libpitlane_cuda.so lies beside it and NEEDs libtorch_cuda.so and
#     libc10_cuda.so; the dynamic linker resolves every libtorch / c10 library of both from the
#     wheel (site-packages/torch/lib), none from /usr/lib (Debian's libtorch 1.13 is never used),
#     with no library missing; its entry point and its classes (EventTimer, GraphRunner,
#     allocatorStats, versions) are defined there;
#   - the worker's hello says libtorch 2.x, cuda_build true, the CUDA runtime major of the
#     toolkit, Kineto; and, on a machine without a GPU, cuda_available false, with the module
#     not loaded (a CPU arm's start-up) or loaded (PITLANE_WORKER_CUDA=preload, a CUDA arm's).
# Usage: check_cuda_linked.sh WORKER TORCH_LIB_DIR
set -euo pipefail
WORKER="$1" TORCH_LIB="$2"
fail() { echo "cuda_module_linked: FAIL: $*" >&2; exit 1; }
[ -x "$WORKER" ] || fail "no worker at $WORKER"
TORCH_LIB="$(cd "$TORCH_LIB" && pwd -P)"
MODULE="$(dirname "$WORKER")/libpitlane_cuda.so"
[ -f "$MODULE" ] || fail "no CUDA module at $MODULE"

needed_of() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
needed="$(needed_of "$WORKER")"
for lib in libtorch_cpu.so libc10.so; do
  grep -qx "$lib" <<<"$needed" || fail "$WORKER does not NEED $lib (NEEDED: $(tr '\n' ' ' <<<"$needed"))"
done
for lib in libtorch.so libtorch_cuda.so libc10_cuda.so; do
  if grep -qx "$lib" <<<"$needed"; then fail "$WORKER NEEDs $lib: CUDA belongs in $MODULE"; fi
done
mneeded="$(needed_of "$MODULE")"
for lib in libtorch_cuda.so libc10_cuda.so; do
  grep -qx "$lib" <<<"$mneeded" || fail "$MODULE does not NEED $lib (NEEDED: $(tr '\n' ' ' <<<"$mneeded"))"
done
check_resolved() {  # FILE LIB...
  local file="$1"; shift
  local resolved; resolved="$(ldd "$file")"
  if grep -q "not found" <<<"$resolved"; then fail "$file: libraries not found: $(grep 'not found' <<<"$resolved")"; fi
  for lib in "$@"; do
    path="$(awk -v l="$lib" '$1 == l {print $3}' <<<"$resolved")"
    [ -n "$path" ] || fail "ldd $file does not list $lib"
    real="$(readlink -f "$path")"
    [ "$(dirname "$real")" = "$TORCH_LIB" ] || fail "$file: $lib resolves to $real, not the wheel's $TORCH_LIB"
  done
  if grep -E "/usr/lib/.*lib(torch|c10)" <<<"$resolved"; then fail "$file: a Debian libtorch library is linked (above)"; fi
}
check_resolved "$WORKER" libtorch_cpu.so libc10.so
check_resolved "$MODULE" libtorch_cpu.so libtorch_cuda.so libc10.so libc10_cuda.so

nm -D --defined-only "$MODULE" | grep -qE " T pitlane_cuda_module$" || fail "$MODULE does not export pitlane_cuda_module"
syms="$(nm -C "$MODULE" | sed "s/\[abi:cxx11\]//g")"
for s in "CudaEventTimer::stopMs()" "CudaGraphRunner::replay()" "CudaModule::allocatorStats(int) const" \
         "CudaModule::versions() const"; do
  grep -qF "pitlane::engine::cuda::(anonymous namespace)::$s" <<<"$syms" ||
    fail "the CUDA module's $s is not defined in $MODULE"
done

for mode in cpu preload; do
  hello="$(printf '{"v":1,"cmd":"quit"}\n' | PITLANE_WORKER_CUDA="$mode" "$WORKER" 2>/dev/null | head -n 1)"
  python3 - "$hello" "$mode" <<'PY' || fail "hello (PITLANE_WORKER_CUDA=$mode)"
import json, os, sys
h = json.loads(sys.argv[1])
preload = sys.argv[2] == "preload"
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
if preload and env.get("cuda_module_loaded") is not True:
    problems.append("PITLANE_WORKER_CUDA=preload: the CUDA module is not loaded at hello")
if not preload and not has_gpu and env.get("cuda_module_loaded") is not False:
    problems.append("a CPU arm's worker loaded the CUDA module on a machine without a GPU")
if problems:
    print("; ".join(problems), file=sys.stderr); sys.exit(1)
print(f"hello ({'CUDA arm' if preload else 'CPU arm'}): libtorch {env['libtorch']}, cuda_build, CUDA runtime {rt}, "
      f"cuDNN {env['cuda_versions'].get('cudnn')}, driver {env['cuda_versions'].get('driver')}, kineto, "
      f"cuda_available {env['cuda_available']}, module loaded {env['cuda_module_loaded']}")
PY
done
echo "cuda_module_linked: PASS ($WORKER links libtorch_cpu; $MODULE links the wheel's libtorch_cuda from $TORCH_LIB)"
