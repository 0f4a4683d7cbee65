#pragma once
// Internal to spec/src: resolving a `model` field (the preset's or an arm's) and the input a
// model describes (arm_models.cpp).
#include "pitlane/spec/model_file.h"
#include "pitlane/spec/preset.h"

#include <string>

namespace pitlane::spec::detail {

struct ResolvedModel {
    std::string written;  // as written
    std::string path;     // absolute
    bool bundled = false;
};

// A bundled name (resnet18 → <modelDir>/resnet18.pt, resnet18.pt2 → its package) or a path
// relative to the preset's folder. Throws SpecError on `field`.
ResolvedModel resolveModelField(const json& v, const std::string& field, const std::string& presetFile,
                                const std::string& where, const std::string& modelDir);

// The input a model describes: its sidecar's "input" (<name>.json next to it), else a package's
// metadata "input" (tools/export_packages.py writes it). Null when neither; `source` names where
// it came from.
json describedInput(const std::string& modelPath, const ModelFormat& f, std::string* source);

class Errors;

// What validation says when nothing describes a model's input: the syntax, and what a sidecar is.
std::string missingInput(const std::string& modelPath);
// Each arm's model (its own `model`, else the preset's), input, format and the knobs that format
// cannot take, into `p.arms` (called once the arms are parsed).
void resolveArmModels(const json& j, Preset& p, bool presetInputWritten, const std::string& modelDir, Errors& errs);
// An arm's own model runs on this machine (called once the hosts are read).
void checkArmModelsPlacement(const Preset& p, Errors& errs);

}  // namespace pitlane::spec::detail
