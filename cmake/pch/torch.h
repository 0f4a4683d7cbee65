// Precompiled header of the engine's torch translation units (pitlane_engine; cmake/PitlanePch.cmake,
// issue 45): the libtorch headers engine_impl.h includes, ~11 s of parsing in each. Only the engine
// gets it (torch never meets Qt; the torch-free engine_sys never sees it).
#pragma once
#include "core.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <c10/core/CPUAllocator.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>
