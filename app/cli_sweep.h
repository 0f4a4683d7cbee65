#pragma once
// What pitlane-cli's sweep commands share (cli_sweep.cpp: sweep, sweep-status; cli_collect.cpp:
// collect): the sweep folder's manifest, DIR/sweep.json.
#include "cli_common.h"

#include <nlohmann/json.hpp>

#include <QString>

#include <string>

namespace pitlane::cli {

// "007": a slice's number in its file names.
std::string idx3(std::size_t i);
QString manifestPath(const QString& dir);
// DIR/sweep.json with its slices; false with `err` saying why DIR is not a sweep folder.
bool readManifest(const QString& dir, nlohmann::json& m, std::string& err);

}  // namespace pitlane::cli
