#!/usr/bin/env bash
# Installs what Pitlane needs from Debian 12 (only when something is missing), then configures
# and builds Release into build/ (bundled models included). Idempotent; fast when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite libqt6svg6-dev libqcustomplot-dev libgl-dev
  libtorch-dev libopenblas0-openmp nlohmann-json3-dev libgtest-dev zlib1g-dev
  libjemalloc2 libtcmalloc-minimal4 libblas3
  openssh-server openssh-client
  python3-torch python3-torchvision
  xvfb xauth imagemagick poppler-utils chromium fonts-dejavu-core
  slurm-wlm  # test integration_sweep starts a single-node Slurm (slurmctld + slurmd) of its own
)
# node and npm for tools/trace_check (the trace parser of test integration_profile). Checked by
# command, not by package: a node installed another way (NodeSource's nodejs bundles npm and
# conflicts with Debian's npm package) is used as it is.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Chrome DevTools' trace engine from npm, exactly as tools/trace_check/package-lock.json pins it,
# into tools/trace_check/node_modules (git-ignored); again only when the lock file changed.
if [ ! -f tools/trace_check/node_modules/.package-lock.json ] ||
   [ tools/trace_check/package-lock.json -nt tools/trace_check/node_modules/.package-lock.json ]; then
  echo "bootstrap: npm ci in tools/trace_check"
  (cd tools/trace_check && npm ci --no-audit --no-fund)
fi

if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build -j"$(nproc)"
