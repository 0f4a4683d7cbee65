#!/usr/bin/env bash
# Installs what Pitlane needs (only when something is missing), then configures and builds
# Release into build/ (bundled models included). Idempotent; fast when nothing changed.
#
# 1. Debian 12's packages (apt): compilers, Qt 6, the test tools.
# 2. The project's Python environment .venv (git-ignored, from Debian's python3-venv) with the
#    pinned PyTorch wheel of tools/python-requirements.txt: its libtorch (CUDA build) is the one
#    the worker links, its python exports the bundled models. Debian's libtorch is never used.
# 3. CMake configure (finds Torch through the venv's torch.utils.cmake_prefix_path) and build.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3-venv
  python3-dev  # AOTInductor (tools/export_packages.py) compiles with the Python headers on its -I list
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite qt6-svg-dev libqcustomplot-dev libgl-dev
  nlohmann-json3-dev libgtest-dev zlib1g-dev
  libjemalloc2 libtcmalloc-minimal4 libblas3
  openssh-server openssh-client
  xvfb xauth imagemagick poppler-utils chromium fonts-dejavu-core
  slurm-wlm  # test integration_sweep starts a single-node Slurm (slurmctld + slurmd) of its own
)

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

# The CUDA toolkit (nvcc, cuBLAS, cuDNN headers) is part of the machine, not installed here.
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
  echo "bootstrap: no CUDA toolkit at $CUDA_HOME (nvcc missing): the worker is built with libtorch_cuda" >&2
  echo "bootstrap: and needs the toolkit's headers and nvcc; set CUDA_HOME to where it is" >&2
  exit 1
fi

# The venv and the pinned wheel, again only when tools/python-requirements.txt changed.
VENV=.venv
REQ=tools/python-requirements.txt
if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV (Debian's python3 -m venv)"
  /usr/bin/python3 -m venv "$VENV"
fi
if ! cmp -s "$REQ" "$VENV/.pitlane-requirements"; then
  echo "bootstrap: pip install -r $REQ into $VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off -r "$REQ"
  cp "$REQ" "$VENV/.pitlane-requirements"
fi

# The wheel's CUDA major must be the toolkit's: the worker compiles against the toolkit's headers
# and links the wheel's libtorch_cuda.
wheel_cuda=$("$VENV/bin/python" -c 'import torch; print(torch.version.cuda or "")')
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

# A build folder configured against another libtorch (Debian's 1.13 before issue 25) is
# configured again from scratch.
if [ -f build/CMakeCache.txt ] && ! grep -q "^Torch_DIR:PATH=$(pwd)/$VENV/" build/CMakeCache.txt; then
  echo "bootstrap: build/ was configured against another libtorch; configuring it again"
  rm -rf build
fi
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$CUDA_HOME" \
    -DCMAKE_CUDA_COMPILER="$CUDA_HOME/bin/nvcc"
fi
cmake --build build -j"$(nproc)"
