#pragma once
// Internal to spec/src: bounded reading of JSON files (json_file.cpp) and the limits a preset's
// JSON is held to (issue 28).
#include "pitlane/spec/preset.h"
#include "pitlane/protocol/json_limits.h"

#include <string>

namespace pitlane::spec::detail {

// A preset nests 6 levels at most (arms[i].knobs.affinity[j], lesson.checks[i].…); 64 leaves room
// for any lesson while its results JSON (which embeds it 1 level down) stays within
// protocol::kMaxJsonDepth, so a run that was accepted can always be read back by `report`.
inline constexpr int kMaxPresetDepth = 64;

// What stopped reading a file: the field it stopped in ("" for the file as a whole) and why.
struct JsonFileError {
    std::string field;
    std::string reason;
};

// readJsonFile under `limits` (duplicate keys are always refused).
bool readJsonFileBounded(const std::string& path, json* out, JsonFileError* error,
                         protocol::JsonLimits limits);

// The nesting depth of an in-memory value (objects and arrays), counted without recursion;
// stops counting at `stopAbove` + 1.
int jsonDepth(const json& j, int stopAbove);

// Why a file cannot be opened as a regular file ("" when it can): missing, a symlink loop, a
// directory, a device.
std::string notARegularFile(const std::string& path, const char* what);

}  // namespace pitlane::spec::detail
