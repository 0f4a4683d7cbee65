#!/usr/bin/env bash
# Proves every CUDA path of pitlane-worker on this machine, in one command:
#   tools/gpu_check.sh [--torch-cmake-dir DIR] [--build-dir DIR] [--transcript OUT.jsonl] [-- CMAKE_ARGS...]
# 1. No CUDA device (no /dev/nvidia* and no working nvidia-smi): says so, prints every check as
#    SKIP and exits 0, before building anything.
# 2. Builds the worker-only target (cmake -DPITLANE_WORKER_ONLY=ON: no Qt) against this machine's
#    libtorch: --torch-cmake-dir, else $PITLANE_TORCH_CMAKE_DIR, else
#    python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'.
# 3. Exports the test models with that python3 (tools/export_models.py conv_probe mlp).
# 4. Runs tools/gpu_check.py: one worker per scenario over the JSON-lines protocol, one
#    PASS / FAIL / SKIP line per check and a summary; the events are saved as a transcript
#    (default BUILD_DIR/gpu_transcript.jsonl) that gpu_check.py --transcript can judge again.
# Exit 0 when no check failed. Environment: PYTHON (default python3), PITLANE_GPU_CHECK_JOBS.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-python3}"
TORCH_DIR="${PITLANE_TORCH_CMAKE_DIR:-}"
BUILD="${PITLANE_GPU_CHECK_BUILD_DIR:-$SRC/build-gpu-check}"
TRANSCRIPT=""
CMAKE_EXTRA=()
while (($#)); do
  case "$1" in
    --torch-cmake-dir) TORCH_DIR="$2"; shift 2 ;;
    --build-dir) BUILD="$2"; shift 2 ;;
    --transcript) TRANSCRIPT="$2"; shift 2 ;;
    --) shift; CMAKE_EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu_check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# 1. A CUDA device? Decided before anything expensive happens.
devices=(/dev/nvidia[0-9]*)
has_dev=0
[ -e "${devices[0]}" ] && has_dev=1
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then has_dev=1; fi
# PITLANE_GPU_CHECK_FORCE=1 goes on without a device (to try the build steps on a CPU machine:
# they end at the "no CUDA" refusal below).
if [ "$has_dev" = 0 ] && [ "${PITLANE_GPU_CHECK_FORCE:-0}" != 1 ]; then
  echo "gpu_check.sh: no CUDA device on this machine (no /dev/nvidia* and no working nvidia-smi): nothing built, every check skipped"
  exec "$PY" "$SRC/tools/gpu_check.py" --no-device "no CUDA device"
fi
if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L || true; fi

# 2. This machine's libtorch, and the worker-only build against it.
if [ -z "$TORCH_DIR" ]; then
  TORCH_DIR="$("$PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null)" || {
    echo "gpu_check.sh: no libtorch given and '$PY -c \"import torch\"' failed: pass --torch-cmake-dir DIR" \
         "or set PITLANE_TORCH_CMAKE_DIR" >&2
    exit 2
  }
fi
echo "gpu_check.sh: libtorch CMake files in $TORCH_DIR; building into $BUILD"
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
[ -f "$BUILD/CMakeCache.txt" ] && GEN=()  # keep the generator of an existing build folder
cmake -S "$SRC" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DPITLANE_WORKER_ONLY=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON -DCMAKE_PREFIX_PATH="$TORCH_DIR" "${CMAKE_EXTRA[@]}"
cmake --build "$BUILD" --target pitlane-worker -j"${PITLANE_GPU_CHECK_JOBS:-$(nproc)}"
if ! grep -q '^cuda=ON$' "$BUILD/worker_only.txt"; then
  echo "gpu_check.sh: FAIL: the libtorch in $TORCH_DIR has no CUDA (CAFFE2_USE_CUDA is off): the worker" \
       "was built without its CUDA module, so no CUDA path can be checked ($(tr '\n' ' ' < "$BUILD/worker_only.txt"))" >&2
  exit 1
fi

# 3. Models, exported by this machine's torch (a TorchScript file loads in the libtorch that wrote it).
MODELS="$BUILD/models"
"$PY" "$SRC/tools/export_models.py" "$MODELS" conv_probe mlp attention_probe
# conv_probe exported on cuda (torch.export.save) and compiled for cuda (AOTInductor); a failure
# here leaves the two program checks to FAIL with the reason, the others still run.
"$PY" "$SRC/tools/gpu_export_programs.py" "$MODELS" || echo "gpu_check.sh: gpu_export_programs.py failed (above)" >&2

# 4. The checks.
TRANSCRIPT="${TRANSCRIPT:-$BUILD/gpu_transcript.jsonl}"
exec "$PY" "$SRC/tools/gpu_check.py" --worker "$BUILD/bin/pitlane-worker" --models "$MODELS" \
  --save-transcript "$TRANSCRIPT" --worker-log "$BUILD/gpu_check_worker_stderr.log"
