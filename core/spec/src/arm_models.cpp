// Models of a preset and of its arms (issue 26): a bundled name or a file, each arm's own model
// and input, and the knobs a model's format cannot take.
#include "arm_models.h"
#include "preset_errors.h"

#include "pitlane/spec/knob_table.h"
#include "pitlane/spec/model_file.h"
#include "text_util.h"
#include "pitlane/protocol/json_limits.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace pitlane::spec {

namespace {

const char* const kModelHint =
    "name a bundled model (resnet18, mobilenet_v3_small, transformer, lstm, mlp; resnet18.pt2 or "
    "mlp.pt2 for their AOTInductor packages, resnet18.exported.pt2 or transformer.exported.pt2 for "
    "their torch.export archives), a TorchScript file, an AOTInductor package or a torch.export archive (.pt2)";

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
    // An exported program runs through NativeRT under inference_mode too.
    if ((format == kFormatAoti || format == kFormatExported) && !written(knobsJson, "grad"))
        k.grad = Grad::InferenceMode;
}

std::string knobNotForFormat(const std::string& knob, const std::string& format) {
    if (format != kFormatExported && (knob == "compile" || knob == "inductor"))
        return "only an exported program (a torch.export.save archive) can be compiled by Pitlane; this model is " +
               (format.empty() ? std::string("not recognised") : format);
    if (format == kFormatExported) {
        static const std::map<std::string, std::string> exported = {
            {"mode", "an exported program was traced in eval or train mode when it was exported"},
            {"grad", "an exported program runs under inference_mode (read back as such)"},
            {"jit", "freeze / optimize_for_inference are TorchScript passes; compile it with Inductor instead (compile aoti, inductor.freezing)"},
            {"precision", "an exported program's dtypes are in its graph (export a bf16 / fp16 model instead)"},
            {"memory_format", "an exported program's layouts are in its graph"},
            {"profiling_executor", "the TorchScript executor does not run an exported program"},
            {"fuser", "the TorchScript fuser does not run an exported program (compile aoti does the fusing)"},
            {"workload", "an exported inference program has no backward: inference only"},
            {"cuda_graph", "cuda_graph captures a TorchScript forward"},
        };
        const auto it = exported.find(knob);
        return it == exported.end() ? std::string() : it->second;
    }
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

namespace {

// The batch sizes a package or an exported program runs (their metadata "batch").
void checkBatchRange(const Knobs& k, const ModelFormat& f, const std::string& what,
                     const std::function<void(const char*, const std::string&)>& refuse) {
    const PackageBatch b = packageBatch(f.metadata);
    if (!b.known) return;
    const auto in = f.metadata.find("batch_input");
    const std::string dim = in == f.metadata.end() ? std::string() : " (dimension 0 of input \"" + in->second + "\")";
    for (int bs : k.batch_size)
        if (bs < b.lo || bs > b.hi) {
            refuse("batch_size", b.dynamic ? what + " was exported with a batch dimension" + dim + " from " +
                                                 std::to_string(b.lo) + " to " + std::to_string(b.hi) +
                                                 ": batch_size " + std::to_string(bs) + " is outside it"
                                           : what + " was exported with a static batch of " + std::to_string(b.lo) + dim +
                                                 ", the only size it runs: batch_size " + std::to_string(bs) +
                                                 " needs a " + (what == "the package" ? "package" : "program") +
                                                 " exported with a dynamic batch dimension (torch.export.Dim)");
            return;
        }
}

// The knobs an exported program cannot take, and what compile / inductor need.
void checkExportedKnobs(const Knobs& k, const json& knobsJson, const ModelFormat& f,
                        const std::function<void(const char*, const std::string&)>& refuse) {
    const std::string ep = "an exported program runs as its graph says (NativeRT, or compiled by Inductor): ";
    if (written(knobsJson, "grad") && k.grad != Grad::InferenceMode)
        refuse("grad", ep + "it runs under inference_mode, so grad \"" + choiceName(k.grad) +
                           "\" cannot apply (leave grad out: it is read back as inference_mode)");
    // A knob at its default changes nothing, written or not (the worker receives every knob).
    for (const char* knob : {"mode", "jit", "precision", "memory_format", "profiling_executor", "fuser", "workload", "cuda_graph"}) {
        const KnobInfo* row = findKnob(knob);
        if (row && row->get(k) != row->defaultValue) refuse(knob, ep + knobNotForFormat(knob, kFormatExported));
    }
    if (k.compile != Compile::Aoti && k.inductor != InductorOptions{})
        refuse("inductor", "Inductor options apply when Pitlane compiles the program: write \"compile\": \"aoti\" "
                           "with them (compile \"none\" runs it through NativeRT, nothing is compiled)");
    const auto dev = f.metadata.find("device");
    if (dev != f.metadata.end()) {
        const bool cudaProgram = dev->second.rfind("cuda", 0) == 0;
        const bool cudaArm = k.device.rfind("cuda", 0) == 0;
        if (cudaProgram != cudaArm)
            refuse("device", "the program's weights are on " + dev->second + " (where it was exported), so device \"" +
                                 k.device + "\" cannot run it (export it with the model and example inputs on " +
                                 (cudaArm ? std::string("CUDA") : std::string("the CPU")) + ")");
    }
    if (f.metadata.count("non_tensor_inputs"))
        refuse("batch_size", "the program takes " + f.metadata.at("non_tensor_inputs") +
                                 " input(s) that are not tensors; Pitlane feeds tensors only");
    checkBatchRange(k, f, "the program", refuse);
}

}  // namespace

void checkCompiledInput(const std::vector<InputSpec>& input, const Knobs& k, const ModelFormat& f,
                        const std::string& modelPath, const std::string& where, const std::string& field,
                        std::vector<SpecError>& errors) {
    if (f.format != kFormatExported || k.compile != Compile::Aoti) return;
    const auto it = f.metadata.find("input_dims");
    if (it == f.metadata.end()) return;
    const json dims = protocol::parseJsonBounded(it->second);
    if (!dims.is_array()) return;
    const auto text = [](const std::vector<json>& sizes, bool batch) {
        std::string t = "[";
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            if (i) t += ", ";
            t += batch && i == 0 ? std::string("N") : sizes[i].is_number_integer() ? sizes[i].dump() : std::string("any");
        }
        return t + "]";
    };
    for (std::size_t i = 0; i < input.size() && i < dims.size(); ++i) {
        const InputSpec& in = input[i];
        if (in.example || !dims[i].is_array()) continue;  // the program's own example: its sizes
        const std::vector<json> exported(dims[i].begin(), dims[i].end());
        std::vector<std::vector<std::int64_t>> fed = in.shapes.empty() ? std::vector<std::vector<std::int64_t>>{in.shape} : in.shapes;
        for (const auto& shape : fed) {
            std::vector<json> sizes;
            if (in.batch_dim) sizes.push_back(json());  // the batch: checkBatchRange's
            for (auto s : shape) sizes.push_back(json(s));
            bool fits = sizes.size() == exported.size();
            for (std::size_t d = in.batch_dim ? 1 : 0; fits && d < sizes.size(); ++d)
                if (exported[d].is_number_integer() && exported[d] != sizes[d]) fits = false;
            if (fits) continue;
            errors.emplace_back(
                where, field,
                "knob compile \"aoti\" compiles " + modelLabel(modelPath) + " for the sizes it was exported with, and "
                "the package accepts no others: input " + std::to_string(i) + " was exported as " +
                    text(exported, in.batch_dim) + " (N the batch" +
                    (std::any_of(exported.begin() + (in.batch_dim ? 1 : 0), exported.end(),
                                 [](const json& x) { return x.is_null(); })
                         ? std::string(", any a dynamic size")
                         : std::string()) +
                    "), this arm feeds " + text(sizes, in.batch_dim) +
                    ". Feed the exported sizes, or export with dynamic shapes (torch.export.Dim) for the sizes "
                    "to measure; NativeRT (compile \"none\") runs the program at other sizes where its "
                    "operators allow");
            return;
        }
    }
}

void checkKnobsForFormat(const Knobs& k, const json& knobsJson, const ModelFormat& f, const std::string& where,
                         const std::string& prefix, std::vector<SpecError>& errors) {
    auto refuse = [&](const char* knob, const std::string& reason) {
        errors.emplace_back(where, prefix + "." + knob, reason);
    };
    if (f.format == kFormatExported) return checkExportedKnobs(k, knobsJson, f, refuse);
    // A file that is not recognised says why (a damaged or hostile archive: which entry).
    const std::string why = f.format.empty() && !f.message.empty() ? " (" + f.message + ")" : std::string();
    if (k.compile != Compile::None) refuse("compile", knobNotForFormat("compile", f.format) + why);
    if (k.inductor != InductorOptions{}) refuse("inductor", knobNotForFormat("inductor", f.format) + why);
    if (f.format != kFormatAoti) return;
    const std::string pkg = "an AOTInductor package is a compiled, frozen, inference-only graph: ";
    if (k.mode != Mode::Eval) refuse("mode", pkg + "mode \"" + choiceName(k.mode) + "\" cannot apply (it was exported in eval mode; leave mode out or write \"eval\")");
    if (written(knobsJson, "grad") && k.grad != Grad::InferenceMode)
        refuse("grad", pkg + "it runs under inference_mode, so grad \"" + choiceName(k.grad) +
                           "\" cannot apply (leave grad out: it is read back as inference_mode)");
    if (k.jit != Jit::None)
        refuse("jit", pkg + "jit \"" + choiceName(k.jit) + "\" is a TorchScript pass (freeze / optimize_for_inference); AOTInductor already compiled and froze it");
    if (k.precision != Precision::Fp32)
        refuse("precision", pkg + "its dtypes were fixed when it was compiled, so precision \"" + choiceName(k.precision) +
                                "\" cannot apply (export a bf16 / fp16 model, or compile under autocast, instead)");
    if (k.memory_format != MemoryFormat::Contiguous)
        refuse("memory_format", pkg + "its layouts were fixed when it was compiled, so memory_format \"" +
                                    choiceName(k.memory_format) + "\" cannot apply");
    if (written(knobsJson, "profiling_executor"))
        refuse("profiling_executor", pkg + "the TorchScript executor does not run it");
    if (written(knobsJson, "fuser")) refuse("fuser", pkg + "the TorchScript fuser does not run it");
    if (k.workload != Workload::Inference)
        refuse("workload", pkg + "it has no backward, so workload \"" + choiceName(k.workload) + "\" cannot run");
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
    checkBatchRange(k, f, "the package", refuse);
}

std::string describeModelFormat(const ModelFormat& f) {
    const auto meta = [&f](const char* key) {
        const auto it = f.metadata.find(key);
        return it == f.metadata.end() ? std::string() : it->second;
    };
    const std::string batch = meta("batch").empty() ? std::string() : "; batch " + meta("batch");
    if (f.format == kFormatExported)
        return "a torch.export archive (an ExportedProgram" +
               (meta("torch_version").empty() ? std::string() : " saved by torch " + meta("torch_version")) +
               ", weights on " + (meta("device").empty() ? std::string("cpu") : meta("device")) + batch +
               "), run through libtorch's NativeRT; compile \"aoti\" compiles it into an AOTInductor package first";
    if (f.format == kFormatAoti) {
        const std::string dev = meta("AOTI_DEVICE_KEY").empty() ? std::string("an unrecorded device") : meta("AOTI_DEVICE_KEY");
        return "an AOTInductor package compiled for " + dev +
               (meta("AOTI_CPU_ISA").empty() ? std::string() : " (CPU ISA " + meta("AOTI_CPU_ISA") + ")") +
               (meta("torch_version").empty() ? std::string() : " by torch " + meta("torch_version")) + batch +
               ": it runs only on such a device and with that libtorch";
    }
    if (f.format == kFormatTorchScript)
        return "TorchScript" + (f.torchscript_version.empty() ? std::string() : " (archive version " + f.torchscript_version + ")") +
               ", loaded with torch::jit::load";
    return "not a model Pitlane can run: " + (f.message.empty() ? std::string("unrecognised") : f.message);
}

namespace detail {

ResolvedModel resolveModelField(const json& v, const std::string& field, const std::string& presetFile,
                                const std::string& where, const std::string& modelDir) {
    if (!v.is_string())
        throw SpecError(where, field,
                        "must be a string, got " + std::string(v.type_name()) + " " + detail::shown(v) + ": " + kModelHint);
    ResolvedModel m;
    m.written = v.get<std::string>();
    if (m.written.empty()) throw SpecError(where, field, std::string("is empty: ") + kModelHint);
    if (m.written.find('\0') != std::string::npos)
        throw SpecError(where, field, "contains a NUL character: a file name cannot");
    const auto& names = bundledModelNames();
    std::string bundledName = m.written, ext = ".pt";
    const std::string exportedExt = ".exported.pt2";
    // "resnet18.exported.pt2", or a variant of it ("resnet18.static.exported.pt2"): the file of
    // that name in the model directory, for a bundled model's base name.
    const bool exportedName = bundledName.size() > exportedExt.size() &&
                              bundledName.compare(bundledName.size() - exportedExt.size(), exportedExt.size(), exportedExt) == 0;
    if (exportedName && std::find(names.begin(), names.end(), bundledName.substr(0, bundledName.find('.'))) != names.end()) {
        bundledName.resize(bundledName.size() - exportedExt.size());
        ext = exportedExt;
        m.bundled = true;
        if (modelDir.empty())
            throw SpecError(where, field, "bundled model \"" + m.written + "\" requested but no model directory was found "
                                          "(build the 'models' target or set PITLANE_MODEL_DIR)");
        m.path = (fs::path(modelDir) / (bundledName + ext)).string();
        if (!fs::exists(m.path))
            throw SpecError(where, field, "bundled model \"" + m.written + "\" is missing: " + m.path +
                                              " does not exist (build the 'models' target)");
        return m;
    } else if (bundledName.size() > 4 && bundledName.compare(bundledName.size() - 4, 4, ".pt2") == 0 &&
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
    if (ec == std::errc::too_many_symbolic_link_levels)
        throw SpecError(where, field, "model file " + mp.string() +
                                          " cannot be opened: a symlink loop (too many levels of symbolic links)");
    if (ec && ec != std::errc::no_such_file_or_directory)
        throw SpecError(where, field, "model file " + mp.string() + " cannot be opened: " + ec.message());
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
        const json in = protocol::parseJsonBounded(it->second);  // the package's metadata, bounded
        if (!in.is_discarded()) {
            *source = modelPath + (f.format == kFormatExported ? " (the program's example inputs)"
                                                                : " (package metadata \"input\")");
            return in;
        }
    }
    return json();
}

// What to write when nothing describes a model's input (issue 27: the syntax, and what a sidecar is).
std::string missingInput(const std::string& modelPath) {
    return "missing: nothing describes " + modelLabel(modelPath) + "'s input (no sidecar " +
           fs::path(modelPath).replace_extension(".json").filename().string() +
           " next to it, as the bundled models have), so the preset must give it, e.g. \"input\": "
           "[{\"shape\": [3, 224, 224], \"dtype\": \"float32\"}] (each shape without the batch "
           "dimension: knobs.batch_size is prepended)";
}

// Each arm's model (its own `model`, else the preset's) and input (its own `input`, else the
// preset's written one, else its own model's sidecar, else the preset's), the file's format, and
// the knobs that format cannot take. A file is read once however many arms measure it.
void resolveArmModels(const json& j, Preset& p, bool presetInputWritten, const std::string& modelDir, Errors& errs) {
    const std::string& where = errs.where();
    const json& arms = j.contains("arms") && j["arms"].is_array() ? j["arms"] : json::array();
    std::map<std::string, ModelFormat> formats;
    for (std::size_t i = 0; i < p.arms.size() && i < arms.size(); ++i) {
        auto& arm = p.arms[i];
        const json& a = arms[i];
        const std::string f = "arms[" + std::to_string(i) + "]";
        arm.model_path = p.model_path;
        arm.bundled = p.bundled;
        if (a.contains("model") && !errs.step(f + ".model", [&] {
                const auto m = detail::resolveModelField(a["model"], f + ".model", p.file, where, modelDir);
                arm.model = m.written;
                arm.model_path = m.path;
                arm.bundled = m.bundled;
            }))
            continue;
        if (!formats.count(arm.model_path)) formats[arm.model_path] = readModelFormat(arm.model_path);
        // A file that is no model at all is the run's to refuse (spec::checkModelFile, with the
        // whole integrity check) and validate's to explain (it loads it); here it takes no knob
        // rule, like TorchScript.
        const ModelFormat& fmt = formats[arm.model_path];
        arm.model_format = fmt.format;
        if (a.contains("input")) {
            arm.inputWritten = true;
            errs.step(f + ".input", [&] { arm.input = parseInputs(a["input"], where, f + ".input"); });
        } else if (presetInputWritten || arm.model.empty()) {
            arm.input = p.input;
        } else {
            std::string source;
            const json described = detail::describedInput(arm.model_path, fmt, &source);
            if (!described.is_null())
                errs.step(f + ".input", [&] { arm.input = parseInputs(described, source, f + ".input"); });
            else if (!p.input.empty())
                arm.input = p.input;  // the same network in another file, most often
            else
                errs.add(f + ".input", missingInput(arm.model_path));
        }
        applyFormatDefaults(arm.knobs, arm.knobs_json, fmt.format);
        // An exported program's default batch is its example's: the input it was exported with.
        const auto example = fmt.metadata.find("example_batch");
        if (fmt.format == kFormatExported && example != fmt.metadata.end() && !written(arm.knobs_json, "batch_size") &&
            std::all_of(arm.input.begin(), arm.input.end(), [](const InputSpec& in) { return in.example; }))
            arm.knobs.batch_size = {std::max(1, std::atoi(example->second.c_str()))};
        checkKnobsForFormat(arm.knobs, arm.knobs_json, fmt, where, f + ".knobs", errs.list());
        checkCompiledInput(arm.input, arm.knobs, fmt, arm.model_path, where, f + ".input", errs.list());
    }
}

// An arm's own model runs on this machine: a remote host caches and checks the preset's model
// only (remote_arms.cpp), and a sweep replaces the preset's model in every arm.
void checkArmModelsPlacement(const Preset& p, Errors& errs) {
    for (std::size_t i = 0; i < p.arms.size(); ++i) {
        const auto& arm = p.arms[i];
        if (arm.model.empty()) continue;
        const std::string f = "arms[" + std::to_string(i) + "].model";
        if (!arm.host.empty())
            errs.add(f, "an arm with its own model runs on this machine: host \"" + arm.host +
                            "\" receives the preset's model only (give this arm the preset's model, or run it here)");
    }
}

}  // namespace detail

}  // namespace pitlane::spec

#include "pitlane/spec/arm_model_check.h"

#include <map>

namespace pitlane::spec {

std::vector<ArmModelCheck> checkArmModels(const Preset& preset) {
    std::map<std::string, ModelFileCheck> checked;
    std::vector<ArmModelCheck> out;
    for (std::size_t i = 0; i < preset.arms.size(); ++i) {
        const auto& arm = preset.arms[i];
        const std::string path = arm.model_path.empty() ? preset.model_path : arm.model_path;
        if (!checked.count(path)) checked[path] = checkModelFile(path);
        out.push_back({i, path, checked[path]});
    }
    return out;
}

}  // namespace pitlane::spec
