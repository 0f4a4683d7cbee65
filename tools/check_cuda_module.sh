#!/usr/bin/env bash
# Compile-checks the CUDA module (core/engine/src/cuda_support.cpp) and the CUDA branches of
# engine_run.cpp / engine_configure.cpp against the CUDA toolkit
# headers and Debian's libtorch CUDA headers, so it cannot rot on machines without a GPU.
# Exit 77 (skipped) when the toolkit headers are absent.
set -euo pipefail
SRC_DIR="${1:-$(dirname "$0")/..}"
CUDA_INC="${CUDA_INCLUDE_DIR:-/usr/local/cuda/include}"
if [ ! -f "$CUDA_INC/cuda_runtime_api.h" ]; then
  echo "SKIP: no CUDA toolkit headers in $CUDA_INC"
  exit 77
fi
stub="$(mktemp -d)"
trap 'rm -rf "$stub"' EXIT
# Debian's CPU libtorch lacks this generated header; a one-line stand-in is enough to parse.
mkdir -p "$stub/c10/cuda/impl"
echo '#define C10_CUDA_BUILD_SHARED_LIBS' > "$stub/c10/cuda/impl/cuda_cmake_macros.h"
# The CUDA module, and the engine's torch TUs whose #ifdef PITLANE_WITH_CUDA branches call it
# (CUDA events and graph replay in the timed loop, capture and the allocator hook in configure).
for tu in cuda_support.cpp engine_run.cpp engine_configure.cpp engine_profile.cpp; do
  "${CXX:-g++}" -std=c++17 -fsyntax-only -Wall -Wextra -Wno-unused-parameter -DPITLANE_WITH_CUDA \
    -I"$stub" -I"$CUDA_INC" -I/usr/include/torch/csrc/api/include \
    -I"$SRC_DIR/core/engine/include" -I"$SRC_DIR/core/spec/include" \
    -I"$SRC_DIR/core/protocol/include" -I"$SRC_DIR/core/serving/include" \
    "$SRC_DIR/core/engine/src/$tu"
  echo "$tu compiles with PITLANE_WITH_CUDA against $CUDA_INC"
done
