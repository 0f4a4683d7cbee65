// Models of a preset and of its arms (issue 26): a bundled name or a file, each arm's own model
// and input, and the knobs a model's format cannot take.
#include "arm_models.h"

#include "pitlane/spec/model_file.h"

#include <algorithm>
#include <filesystem>
#include <map>

namespace fs = std::filesystem;

namespace pitlane::spec {

namespace {

const char* const kModelHint =
    "name a bundled model (resnet18, mobilenet_v3_small, transformer, lstm, mlp; resnet18.pt2 or "
    "mlp.pt2 for their AOTInductor packages), a TorchScript file or an AOTInductor package (.pt2)";

bool written(const json& knobs, const char* key) { return knobs.is_object() && knobs.contains(key); }

// "static 1" / "dynamic 1-1024": the batch dimension a package was exported with, as
// tools/export_packages.py records it in the package's metadata (key "batch").
struct PackageBatch {
    bool known = false, dynamic = false;
    long long lo = 0, hi = 0;
};
PackageBatch packageBatch(const std::map<std::string, std::string>& metadata) {
    PackageBatch b;
    const auto it = metadata.find("batch");
    if (it == metadata.end()) return b;
    long long lo = 0, hi = 0;
    if (std::sscanf(it->second.c_str(), "static %lld", &lo) == 1) b = {true, false, lo, lo};
    else if (std::sscanf(it->second.c_str(), "dynamic %lld-%lld", &lo, &hi) == 2) b = {true, true, lo, hi};
    return b;
}

}  // namespace

std::string modelLabel(const std::string& modelPath) { return fs::path(modelPath).filename().string(); }

void applyFormatDefaults(Knobs& k, const json& knobsJson, const std::string& format) {
    // A package runs under c10::InferenceMode (what AOTInductor's runner expects): left out,
    // the grad knob is what the package gets, not torch's default.
    if (format == kFormatAoti && !written(knobsJson, "grad")) k.grad = "inference_mode";
}

std::string knobNotForFormat(const std::string& knob, const std::string& format) {
    if (format != kFormatAoti) return {};
    static const std::map<std::string, std::string> reasons = {
        {"mode", "an AOTInductor package was exported in eval mode"},
        {"grad", "an AOTInductor package runs under inference_mode (read back as such)"},
        {"jit", "freeze / optimize_for_inference are TorchScript passes; AOTInductor already compiled and froze the package"},
        {"precision", "an AOTInductor package's dtypes were fixed when it was compiled (export a bf16 / fp16 model instead)"},
        {"memory_format", "an AOTInductor package's layouts were fixed when it was compiled"},
        {"profiling_executor", "the TorchScript executor does not run an AOTInductor package"},
        {"fuser", "the TorchScript fuser does not run an AOTInductor package"},
        {"workload", "an AOTInductor package has no backward: inference only"},
        {"cuda_graph", "cuda_graph captures a TorchScript forward; a package's launches are not captured"},
    };
    const auto it = reasons.find(knob);
    return it == reasons.end() ? std::string() : it->second;
}

void checkKnobsForFormat(const Knobs& k, const json& knobsJson, const ModelFormat& f, const std::string& where,
                         const std::string& prefix, std::vector<SpecError>& errors) {
    if (f.format != kFormatAoti) return;
    const std::string pkg = "an AOTInductor package is a compiled, frozen, inference-only graph: ";
    auto refuse = [&](const char* knob, const std::string& reason) {
        errors.emplace_back(where, prefix + "." + knob, reason);
    };
    if (k.mode != "eval") refuse("mode", pkg + "mode \"" + k.mode + "\" cannot apply (it was exported in eval mode; leave mode out or write \"eval\")");
    if (written(knobsJson, "grad") && k.grad != "inference_mode")
        refuse("grad", pkg + "it runs under inference_mode, so grad \"" + k.grad +
                           "\" cannot apply (leave grad out: it is read back as inference_mode)");
    if (k.jit != "none")
        refuse("jit", pkg + "jit \"" + k.jit + "\" is a TorchScript pass (freeze / optimize_for_inference); AOTInductor already compiled and froze it");
    if (k.precision != "fp32")
        refuse("precision", pkg + "its dtypes were fixed when it was compiled, so precision \"" + k.precision +
                                "\" cannot apply (export a bf16 / fp16 model, or compile under autocast, instead)");
    if (k.memory_format != "contiguous")
        refuse("memory_format", pkg + "its layouts were fixed when it was compiled, so memory_format \"" +
                                    k.memory_format + "\" cannot apply");
    if (written(knobsJson, "profiling_executor"))
        refuse("profiling_executor", pkg + "the TorchScript executor does not run it");
    if (written(knobsJson, "fuser")) refuse("fuser", pkg + "the TorchScript fuser does not run it");
    if (k.workload != "inference")
        refuse("workload", pkg + "it has no backward, so workload \"" + k.workload + "\" cannot run");
    if (k.cuda_graph)
        refuse("cuda_graph", pkg + "cuda_graph captures a TorchScript forward; a package's launches are not captured");
    // What the package says about itself.
    const auto dev = f.metadata.find("AOTI_DEVICE_KEY");
    if (dev != f.metadata.end() && !dev->second.empty()) {
        const bool cudaPackage = dev->second.rfind("cuda", 0) == 0;
        const bool cudaArm = k.device.rfind("cuda", 0) == 0;
        if (cudaPackage != cudaArm)
            refuse("device", "the package was compiled for " + dev->second + ", so device \"" + k.device +
                                 "\" cannot run it (compile it with the model and example inputs on " +
                                 (cudaArm ? std::string("CUDA") : std::string("the CPU")) + ")");
    }
    const PackageBatch b = packageBatch(f.metadata);
    if (b.known)
        for (int bs : k.batch_size)
            if (bs < b.lo || bs > b.hi) {
                refuse("batch_size", b.dynamic ? "the package was exported with a batch dimension from " +
                                                     std::to_string(b.lo) + " to " + std::to_string(b.hi) +
                                                     ": batch_size " + std::to_string(bs) + " is outside it"
                                               : "the package was exported with a static batch of " +
                                                     std::to_string(b.lo) + ", the only size it runs: batch_size " +
                                                     std::to_string(bs) + " needs a package exported with a "
                                                     "dynamic batch dimension (torch.export.Dim)");
                break;
            }
}

namespace detail {

ResolvedModel resolveModelField(const json& v, const std::string& field, const std::string& presetFile,
                                const std::string& where, const std::string& modelDir) {
    if (!v.is_string())
        throw SpecError(where, field,
                        "must be a string, got " + std::string(v.type_name()) + " " + v.dump() + ": " + kModelHint);
    ResolvedModel m;
    m.written = v.get<std::string>();
    if (m.written.empty()) throw SpecError(where, field, std::string("is empty: ") + kModelHint);
    if (m.written.find('\0') != std::string::npos)
        throw SpecError(where, field, "contains a NUL character: a file name cannot");
    const auto& names = bundledModelNames();
    std::string bundledName = m.written, ext = ".pt";
    if (bundledName.size() > 4 && bundledName.compare(bundledName.size() - 4, 4, ".pt2") == 0 &&
        std::find(names.begin(), names.end(), bundledName.substr(0, bundledName.size() - 4)) != names.end()) {
        bundledName.resize(bundledName.size() - 4);
        ext = ".pt2";
    }
    if (std::find(names.begin(), names.end(), bundledName) != names.end()) {
        m.bundled = true;
        if (modelDir.empty())
            throw SpecError(where, field,
                            "bundled model \"" + m.written +
                                "\" requested but no model directory was found (build the 'models' target or set "
                                "PITLANE_MODEL_DIR)");
        m.path = (fs::path(modelDir) / (bundledName + ext)).string();
        if (!fs::exists(m.path))
            throw SpecError(where, field,
                            "bundled model \"" + m.written + "\" is missing: " + m.path +
                                " does not exist (build the 'models' target)");
        return m;
    }
    fs::path mp(m.written);
    if (mp.is_relative()) mp = (presetFile.empty() ? fs::current_path() : fs::absolute(presetFile).parent_path()) / mp;
    std::error_code ec;
    const auto status = fs::status(mp, ec);
    if (ec || !fs::exists(status))
        throw SpecError(where, field,
                        "model file " + mp.string() + " does not exist (and \"" + m.written + "\" is not a bundled model)");
    if (fs::is_directory(status)) throw SpecError(where, field, mp.string() + " is a directory, not a model file");
    if (!fs::is_regular_file(status))
        throw SpecError(where, field,
                        mp.string() + " is not a regular file (a device, FIFO or socket), not a model file");
    m.path = fs::weakly_canonical(mp).string();
    return m;
}

json describedInput(const std::string& modelPath, const ModelFormat& f, std::string* source) {
    const json side = readModelSidecar(modelPath);
    if (side.is_object() && side.contains("input")) {
        *source = fs::path(modelPath).replace_extension(".json").string() + " (sidecar)";
        return side["input"];
    }
    const auto it = f.metadata.find("input");
    if (it != f.metadata.end()) {
        const json in = json::parse(it->second, nullptr, /*allow_exceptions=*/false);
        if (!in.is_discarded()) {
            *source = modelPath + " (package metadata \"input\")";
            return in;
        }
    }
    return json();
}

}  // namespace detail

}  // namespace pitlane::spec
