#!/usr/bin/env bash
# Installs what Pitlane needs (only when something is missing), then configures and builds
# Release into build/. Idempotent; fast when nothing changed.
#
#   bash tools/bootstrap.sh           the product: the window, pitlane-cli, pitlane-worker, its CUDA
#                                     module and the bundled models (CMake target `product`)
#   bash tools/bootstrap.sh --tests   the same, then what the tests need too: their Debian packages,
#                                     their Python (.venv-tests) and every target (`all`).
#                                     tools/run_tests.sh runs this before ctest.
#   bash tools/bootstrap.sh --cpu     a CPU-only setup (a laptop, no CUDA toolkit): the CPU wheel of
#                                     the same torch release, from PyTorch's own index
#                                     (download.pytorch.org/whl/cpu); no CUDA module is built and
#                                     CUDA knobs say "no CUDA device". Remembered: later runs
#                                     (and tools/run_tests.sh) keep it until --cuda.
#   bash tools/bootstrap.sh --cuda    back to the default CUDA wheel (PyPI's), which needs the toolkit.
#
# 1. Debian 12's packages (apt): compilers, Qt 6, the libraries; with --tests also the test tools.
# 2. The product's Python environment .venv (git-ignored, from Debian's python3-venv; the wheels
#    installed by uv, from PyPI) with the pinned PyTorch wheel of tools/python-requirements.txt
#    (torch, torchvision): its libtorch is the one the worker links, its python exports the
#    bundled models. Debian's libtorch is never used.
#    With --tests, the tests' own small environment .venv-tests (tools/python-requirements-tests.txt:
#    Holistic Trace Analysis without its Jupyter dependencies) for the trace check.
# 3. CMake configure (finds Torch through the venv's torch.utils.cmake_prefix_path) and build.
set -euo pipefail
cd "$(dirname "$0")/.."

TESTS=0
MODE=""
for arg in "$@"; do
  case "$arg" in
    --tests) TESTS=1 ;;
    --cpu) MODE=cpu ;;
    --cuda) MODE=cuda ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "bootstrap: unknown option $arg (see bash tools/bootstrap.sh --help)" >&2; exit 2 ;;
  esac
done

VENV=.venv
MODE_FILE=$VENV/.pitlane-mode
UV_VERSION=0.13.9  # the installer of both environments (PyPI's uv)
# The mode is remembered in the venv: --cpu once, and the README's commands keep a CPU setup.
if [ -z "$MODE" ]; then
  MODE=$(cat "$MODE_FILE" 2>/dev/null || echo cuda)
fi

# The product's packages; the tests' only with --tests (tools/run_tests.sh).
PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3-venv
  python3-dev  # AOTInductor (tools/export_packages.py) compiles with the Python headers on its -I list
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite qt6-svg-dev libqcustomplot-dev libgl-dev
  nlohmann-json3-dev zlib1g-dev
  libgtest-dev  # CMake configures the tests' folders (find_package(GTest)) even when it builds the product only
  libjemalloc2 libtcmalloc-minimal4 libblas3  # the allocator knob; BLAS
  openssh-client  # remote arms
  fonts-dejavu-core  # the reports' fonts
)
TEST_PACKAGES=(
  openssh-server  # integration_remote, gui_remote start an sshd of their own
  xvfb xauth imagemagick  # tools/screenshot.sh
  poppler-utils chromium  # the report tests read the PDFs and render the HTML
  slurm-wlm  # test integration_sweep starts a single-node Slurm (slurmctld + slurmd) of its own
)
((TESTS)) && PACKAGES+=("${TEST_PACKAGES[@]}")

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The CUDA toolkit (nvcc, cuBLAS, cuDNN headers) is part of the machine, not installed here; a
# CPU setup needs none.
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if [ "$MODE" = cuda ] && [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
  echo "bootstrap: no CUDA toolkit at $CUDA_HOME (nvcc missing): the default build has the worker's" >&2
  echo "bootstrap: CUDA module, which needs the toolkit's headers and nvcc; set CUDA_HOME to where it" >&2
  echo "bootstrap: is, or run bash tools/bootstrap.sh --cpu for a CPU-only setup" >&2
  exit 1
fi

# The venv and the pinned wheel, again only when tools/python-requirements.txt or the mode changed.
REQ=tools/python-requirements.txt
if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV (Debian's python3 -m venv)"
  /usr/bin/python3 -m venv "$VENV"
fi
# The wheels are installed by uv (from PyPI, into the venv first): 40 s against pip's 4 min 13 s
# for the same 31 packages here (docs/PERFORMANCE.md, "From clone to window").
UV=$VENV/bin/uv
if [ ! -x "$UV" ]; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi
if ! cmp -s "$REQ" "$VENV/.pitlane-requirements" || [ "$(cat "$MODE_FILE" 2>/dev/null || echo cuda)" != "$MODE" ]; then
  if [ "$MODE" = cpu ]; then
    # The same releases as the pin, as PyTorch's CPU wheels (+cpu): the pin stays in one file.
    # PyTorch's CPU index carries torch's dependencies too, so it is the only index here.
    cpu_pins=$(sed -n 's/^\(torch\|torchvision\)==\([^ #]*\).*/\1==\2+cpu/p' "$REQ")
    echo "bootstrap: installing $(echo $cpu_pins) (CPU wheels, download.pytorch.org/whl/cpu) into $VENV"
    # shellcheck disable=SC2086
    "$UV" pip install --no-cache --python "$VENV/bin/python" \
      --index-url https://download.pytorch.org/whl/cpu $cpu_pins
  else
    echo "bootstrap: installing $REQ into $VENV (uv pip install)"
    "$UV" pip install --no-cache --python "$VENV/bin/python" -r "$REQ"
  fi
  cp "$REQ" "$VENV/.pitlane-requirements"
  echo "$MODE" > "$MODE_FILE"
fi

wheel_cuda=$("$VENV/bin/python" -c 'import torch; print(torch.version.cuda or "")')
if [ "$MODE" = cuda ]; then
  # The wheel's CUDA major must be the toolkit's: the CUDA module compiles against the toolkit's
  # headers and links the wheel's libtorch_cuda.
  toolkit_cuda=$("$CUDA_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9][0-9]*\.[0-9]*\).*/\1/p')
  if [ -z "$wheel_cuda" ]; then
    echo "bootstrap: the torch in $VENV has no CUDA (torch.version.cuda is None); $REQ pins a CUDA wheel" >&2
    exit 1
  fi
  if [ "${wheel_cuda%%.*}" != "${toolkit_cuda%%.*}" ]; then
    echo "bootstrap: the torch wheel is built for CUDA $wheel_cuda but the toolkit at $CUDA_HOME is" >&2
    echo "bootstrap: CUDA $toolkit_cuda: their major versions must match" >&2
    exit 1
  fi
elif [ -n "$wheel_cuda" ]; then
  echo "bootstrap: --cpu, but the torch in $VENV is a CUDA build (CUDA $wheel_cuda)" >&2
  exit 1
fi

# The tests' Python: Holistic Trace Analysis reads the profiler's traces in integration_profile.
# Its own requirements pull in JupyterLab and ~100 packages a trace reader never imports; it is
# installed without them (--no-deps) beside exactly what its trace parser imports.
if ((TESTS)); then
  TVENV=.venv-tests
  TREQ=tools/python-requirements-tests.txt
  if [ ! -x "$TVENV/bin/python" ]; then
    echo "bootstrap: creating $TVENV (the tests' Python)"
    /usr/bin/python3 -m venv "$TVENV"
  fi
  if ! cmp -s "$TREQ" "$TVENV/.pitlane-requirements"; then
    echo "bootstrap: installing $TREQ into $TVENV (--no-deps)"
    "$UV" pip install --no-cache --python "$TVENV/bin/python" --no-deps -r "$TREQ"
    # What the trace check imports must import (pip check would name HTA's unused Jupyter requirements).
    "$TVENV/bin/python" -c 'import hta.common.trace, hta.common.trace_call_stack'
    cp "$TREQ" "$TVENV/.pitlane-requirements"
  fi
fi

# A build folder configured against another libtorch (Debian's 1.13 before issue 25, or the other
# wheel of --cpu / --cuda) is configured again from scratch.
TORCH_ID="$("$VENV/bin/python" -c 'import torch; print(torch.__version__)') $MODE"
if [ -f build/CMakeCache.txt ] && { ! grep -q "^Torch_DIR:PATH=$(pwd)/$VENV/" build/CMakeCache.txt ||
     { [ -f build/.pitlane-torch ] && [ "$(cat build/.pitlane-torch)" != "$TORCH_ID" ]; }; }; then
  echo "bootstrap: build/ was configured against another libtorch; configuring it again"
  rm -rf build
fi
if [ ! -f build/build.ninja ]; then
  CUDA_ARGS=()
  [ "$MODE" = cuda ] && CUDA_ARGS=(-DCUDAToolkit_ROOT="$CUDA_HOME" -DCMAKE_CUDA_COMPILER="$CUDA_HOME/bin/nvcc")
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${CUDA_ARGS[@]}"
  echo "$TORCH_ID" > build/.pitlane-torch
fi
if ((TESTS)); then
  cmake --build build -j"$(nproc)"
else
  cmake --build build -j"$(nproc)" --target product
fi
