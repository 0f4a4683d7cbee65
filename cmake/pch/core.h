// Precompiled header of the Qt-free, torch-free libraries and their tests (cmake/PitlanePch.cmake,
// issue 45): the standard library and nlohmann-json, which ~250 translation units include (json.hpp
// alone is ~1.4 s of parsing per translation unit on this machine). Nothing project-specific: a
// file must still include what it uses (a build with -DPITLANE_PCH=OFF checks that).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
