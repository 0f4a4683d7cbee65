#pragma once
// The fixture of the preset tests (test_preset.cpp, test_preset_knobs.cpp): a stand-in model
// folder and a preset that names it, and expectError, which checks that a SpecError names the file,
// the field and the reason.
#include "pitlane/spec/preset.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace pitlane::test {

using pitlane::spec::json;
using pitlane::spec::parsePreset;
using pitlane::spec::SpecError;


// A model directory holding a stand-in "mlp" bundle: the preset parser only checks that the .pt
// exists and reads the sidecar, it never loads TorchScript.
class PresetTest : public ::testing::Test {
protected:
    void SetUp() override {
        modelDir = pitlane::test::writeStandInModels(tmp);
        presetFile = (tmp / "presets/bad.json").string();
    }

    static json twoArms() {
        return {{"model", "mlp"},
                {"run", {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}}},
                {"arms", json::array({{{"name", "A"}, {"knobs", json::object()}},
                                      {{"name", "B"}, {"knobs", json::object()}}})}};
    }

    // Parses `j` expecting a SpecError on `field` whose reason contains `reasonPart`.
    void expectError(const json& j, const std::string& field, const std::string& reasonPart) {
        try {
            parsePreset(j, presetFile, modelDir);
            ADD_FAILURE() << "accepted an invalid preset, expected an error on " << field << ": "
                          << j.dump();
        } catch (const SpecError& e) {
            EXPECT_EQ(e.where(), presetFile);
            EXPECT_EQ(e.field(), field) << e.what();
            EXPECT_NE(e.reason().find(reasonPart), std::string::npos)
                << "reason \"" << e.reason() << "\" lacks \"" << reasonPart << "\"";
            // The one-line message a user sees carries all three.
            const std::string what = e.what();
            EXPECT_NE(what.find(presetFile), std::string::npos) << what;
            EXPECT_NE(what.find(field), std::string::npos) << what;
            EXPECT_NE(what.find(e.reason()), std::string::npos) << what;
        }
    }

    TempDir tmp;
    std::string modelDir, presetFile;
};

}  // namespace pitlane::test
