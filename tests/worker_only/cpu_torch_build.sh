#!/usr/bin/env bash
# ctest cpu_torch_build (issue 45): the build of `bash tools/bootstrap.sh --cpu`, against a libtorch
# without CUDA and without the CUDA toolkit, configures the whole project, builds pitlane-worker,
# and that worker speaks the protocol.
#
# PyTorch's CPU wheel (torch==X+cpu) is on download.pytorch.org only, which the project's machines
# cannot reach; so this test makes the CPU wheel's view of the pinned wheel: its CMake package
# (share/cmake) copied into OUT and patched where a CUDA wheel's differs from a CPU wheel's (PyTorch
# generates both from the same templates: USE_CUDA ON vs OFF): Caffe2Config does not look for the
# CUDA toolkit (public/cuda.cmake), TorchConfig adds no CUDA libraries, and the imported targets
# c10_cuda, torch_cuda, torch_cuda_library and torch_nvshmem do not exist. The headers and
# libtorch_cpu / c10 are the wheel's own (TORCH_INSTALL_PREFIX), which is what a CPU wheel's worker
# links too (the worker links libtorch_cpu and c10 only, docs/ARCHITECTURE.md). The patch asserts
# every edit it makes, so a wheel whose CMake files change makes this test fail, not pass quietly.
#
# Checks: configure finds no CUDA (no CUDA entry in the cache, CAFFE2_USE_CUDA off, nvcc not on
# PATH), no pitlane_cuda target and no cuda_module_linked test exist; pitlane-worker, built in the
# worker-only mode against the same view (no Qt either), NEEDs no CUDA library of torch and no Qt;
# then tools/gpu_check.py --cpu-protocol and test_worker_readback
# run against that worker (the bundled models of the main build).
# Last, the default preset runs on that worker (pitlane-cli of the main build, --iters 6).
# Usage: cpu_torch_build.sh SRC OUT TORCH_DIR MODEL_DIR READBACK_TEST PYTHON CLI
set -euo pipefail
SRC="$1" OUT="$2" TORCH_DIR="$3" MODELS="$4" READBACK="$5" PY="$6" CLI="$7"
fail() { echo "cpu_torch_build: FAIL: $*" >&2; exit 1; }

TORCH_PREFIX="$(cd "$TORCH_DIR/../../.." && pwd)"  # .../site-packages/torch
[ -f "$TORCH_PREFIX/lib/libtorch_cpu.so" ] || fail "no libtorch_cpu.so under $TORCH_PREFIX/lib"
VIEW="$OUT/torch-cpu"
rm -rf "$VIEW"
mkdir -p "$VIEW/share"
cp -r "$TORCH_PREFIX/share/cmake" "$VIEW/share/cmake"

"$PY" - "$VIEW/share/cmake" "$TORCH_PREFIX" <<'EOF'
import pathlib, re, sys
root, prefix = pathlib.Path(sys.argv[1]), sys.argv[2]
def edit(rel, pairs):
    p = root / rel
    s = p.read_text()
    for old, new in pairs:
        n = s.count(old) if isinstance(old, str) else len(re.findall(old, s))
        if n != 1:
            sys.exit(f"cpu_torch_build: FAIL: {rel}: expected one '{old}', found {n}")
        s = s.replace(old, new) if isinstance(old, str) else re.sub(old, new, s)
    p.write_text(s)
CUDA_TARGETS = ["c10_cuda", "torch_nvshmem", "torch_cuda", "torch_cuda_library"]
# Caffe2Config: the block that finds the CUDA toolkit (public/cuda.cmake) is USE_CUDA's.
edit("Caffe2/Caffe2Config.cmake", [
    ("if(ON)\n  # The file public/cuda.cmake exclusively uses CAFFE2_USE_*.",
     "if(OFF)\n  # The file public/cuda.cmake exclusively uses CAFFE2_USE_*."),
])
# TorchConfig: TORCH_CUDA_LIBRARIES (nvrtc, c10_cuda, the CUDA dependencies) is USE_CUDA's.
edit("Torch/TorchConfig.cmake", [
    ("if(ON)\n  if(MSVC)\n    find_library(CAFFE2_NVRTC_LIBRARY",
     "if(OFF)\n  if(MSVC)\n    find_library(CAFFE2_NVRTC_LIBRARY"),
])
# The imported targets: no CUDA ones; the prefix is the wheel's (the view holds CMake files only).
pairs = [
    ("INTERFACE_LINK_LIBRARIES \"torch_cpu_library;torch_cuda_library\"",
     "INTERFACE_LINK_LIBRARIES \"torch_cpu_library\""),
    ('if(_IMPORT_PREFIX STREQUAL "/")', f'set(_IMPORT_PREFIX "{prefix}")\nif(_IMPORT_PREFIX STREQUAL "/")'),
]
for t in CUDA_TARGETS:
    pairs.append((re.compile(rf"(IN ITEMS [^)]*?) {t}( |\))"), r"\1\2"))
    pairs.append((re.compile(rf"\n# Create imported target {t}\nadd_library\({t} [^\n]*\n"
                             rf"(\nset_target_properties\({t} PROPERTIES\n(  [^\n]*\n)*\)\n)?"), "\n"))
edit("Caffe2/Caffe2Targets.cmake", pairs)
edit("Caffe2/Caffe2Targets-release.cmake", [
    (re.compile(rf"# Import target \"{t}\" for configuration \"Release\"\n(.*\n)*?"
                rf"list\(APPEND _cmake_import_check_files_for_{t} [^\n]*\n"), "")
    for t in CUDA_TARGETS if t != "torch_cuda_library"])  # an INTERFACE target: nothing to import
for rel in ("Caffe2/Caffe2Targets.cmake", "Caffe2/Caffe2Targets-release.cmake"):
    left = [t for t in CUDA_TARGETS if re.search(rf"\b{t}\b", (root / rel).read_text())]
    if left:
        sys.exit(f"cpu_torch_build: FAIL: {rel} still names {left}")
EOF

# No CUDA toolkit: nvcc off PATH, CUDA_HOME and CUDAToolkit_ROOT unset. A fresh configuration each
# time (the proof is about what configure looks for); the objects stay between runs.
clean_path=()
IFS=: read -r -a path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  [[ "$d" == *cuda* || -e "$d/nvcc" ]] || clean_path+=("$d")
done
PATH="$(IFS=:; echo "${clean_path[*]}")"
command -v nvcc >/dev/null && fail "nvcc is still on PATH ($(command -v nvcc))"
rm -f "$OUT/CMakeCache.txt"
GEN=(-G "Unix Makefiles")
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
env -u CUDA_HOME -u CUDAToolkit_ROOT -u CUDA_PATH TORCH_INSTALL_PREFIX="$TORCH_PREFIX" \
  cmake -S "$SRC" -B "$OUT" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DTorch_DIR="$VIEW/share/cmake/Torch" -DPITLANE_PYTHON="$PY" > "$OUT.configure.log" 2>&1 ||
  { cat "$OUT.configure.log"; fail "configure"; }
grep -q "libtorch .* (CUDA: \(OFF\|\))" "$OUT.configure.log" ||
  { grep libtorch "$OUT.configure.log"; fail "libtorch was found with CUDA"; }
if grep -E '^(CUDA|CUDAToolkit|CUDNN|NVRTC|C10_CUDA|CAFFE2_NVRTC|nvtoolsext|CUPTI)[^:]*:' "$OUT/CMakeCache.txt"; then
  fail "the CPU configuration looked for CUDA (cache entries above)"
fi
targets="$(cmake --build "$OUT" --target help)"
grep -qE "(^|[ /])pitlane_cuda(:|\$| )" <<<"$targets" && fail "a pitlane_cuda target exists without CUDA"
tests="$(ctest --test-dir "$OUT" -N 2>&1 || true)"  # -N complains of test binaries not built here
grep -qE 'Test +#[0-9]+: cuda_module_linked$' <<<"$tests" && fail "cuda_module_linked is registered without CUDA"
grep -qE 'Test +#[0-9]+: unit$' <<<"$tests" || fail "the CPU configuration registered no tests"

# The worker is built once, in the worker-only mode (-DPITLANE_WORKER_ONLY=ON, test
# worker_only_build's configuration) against the same CPU view with Qt disabled too: the most
# restrictive of the two configurations, and one build of the worker instead of two (issue 45:
# ctest's time on 2 cores). Its sources and flags are the full configuration's worker's but for
# what Qt's absence removes; the full configuration above is checked as configured. It compiles
# at -O1 (PITLANE_RELEASE_OPT; the product's Release is -O2): the same sources, headers and link,
# 12 % less CPU on the torch TUs, and one job (-j1, ctest PROCESSORS 1) so that ctest -j2 runs
# another test beside it instead of leaving a core idle in its single-threaded steps.
WOUT="$OUT/worker-only"
rm -f "$WOUT/CMakeCache.txt"
env -u CUDA_HOME -u CUDAToolkit_ROOT -u CUDA_PATH TORCH_INSTALL_PREFIX="$TORCH_PREFIX" \
  cmake -S "$SRC" -B "$WOUT" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DPITLANE_WORKER_ONLY=ON \
  -DPITLANE_RELEASE_OPT=-O1 \
  -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON -DCMAKE_DISABLE_FIND_PACKAGE_QCustomPlotQt6=ON \
  -DTorch_DIR="$VIEW/share/cmake/Torch" > "$WOUT.configure.log" 2>&1 ||
  { cat "$WOUT.configure.log"; fail "configure of the worker-only mode"; }
grep -q '^cuda=OFF$' "$WOUT/worker_only.txt" || fail "the worker-only configuration found CUDA: $(cat "$WOUT/worker_only.txt")"
env -u CUDA_HOME cmake --build "$WOUT" -j1 --target pitlane-worker || fail "build of pitlane-worker"
WORKER="$WOUT/bin/pitlane-worker"
[ -x "$WORKER" ] || fail "no $WORKER"
[ -e "$WOUT/bin/libpitlane_cuda.so" ] && fail "libpitlane_cuda.so was built without CUDA"
if readelf -d "$WORKER" | grep NEEDED | grep -E 'torch_cuda|c10_cuda|libtorch\.so'; then
  fail "pitlane-worker NEEDs a CUDA library of torch"
fi
# The worker links no Qt.
if readelf -d "$WORKER" | grep NEEDED | grep -i qt; then fail "pitlane-worker links Qt"; fi
readelf -d "$WORKER" | grep -q 'NEEDED.*libtorch_cpu' || fail "pitlane-worker does not link libtorch_cpu?"
echo "cpu_torch_build: configured without CUDA, built $WORKER (worker-only mode, no Qt)"

"$PY" "$SRC/tools/gpu_check.py" --cpu-protocol --worker "$WORKER" --models "$MODELS" ||
  fail "the protocol of $WORKER"
[ -x "$READBACK" ] || fail "$READBACK is missing: build the test_worker_readback target (the full build has it)"
PITLANE_WORKER="$WORKER" PITLANE_MODEL_DIR="$MODELS" "$READBACK" || fail "test_worker_readback against $WORKER"

# The default preset, as `bash tools/bootstrap.sh --cpu` users run it, on that worker (a few
# iterations: what is checked is that it runs, not what it measures): every arm ok, and each
# worker says its libtorch has no CUDA.
[ -x "$CLI" ] || fail "$CLI is missing"
PITLANE_WORKER="$WORKER" PITLANE_MODEL_DIR="$MODELS" "$CLI" run "$SRC/presets/default.json" --iters 6 \
  --db none --quiet --json "$OUT/default.json" > "$OUT/default.log" 2>&1 ||
  { tail -20 "$OUT/default.log"; fail "the default preset on $WORKER"; }
"$PY" - "$OUT/default.json" <<'EOF2' || fail "the default preset's results ($OUT/default.json)"
import json, sys
r = json.load(open(sys.argv[1]))
arms = r["arms"]
assert len(arms) == 2, f"{len(arms)} arms"
for a in arms:
    assert a["status"] == "ok", f'{a["name"]}: {a["status"]}'
    assert a["summary"]["n"] >= 6, f'{a["name"]}: {a["summary"]["n"]} samples'
    cuda = a.get("environment", {}).get("cuda_build")
    assert cuda is False, f'{a["name"]}: the worker\'s environment says cuda_build {cuda!r}, not false'
print("cpu_torch_build: the default preset ran on the CPU worker:", r["comparisons"][0]["verdict"])
EOF2
echo "cpu_torch_build: PASS"
