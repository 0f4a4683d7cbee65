// Exported programs (issue 40): a `torch.export.save` archive run as exported through
// libtorch's NativeRT (torch::nativert::ModelRunnerHandle), under inference_mode, and the
// program's own example inputs (data/sample_inputs/model.pt: the pickled (args, kwargs) it was
// exported with), which become the arm's input when the preset gives none ("example": true),
// for the program itself or for the AOTInductor package Pitlane compiled from it (the configure
// field "example_inputs" names the archive then).
#include "engine_impl.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/nativert/ModelRunnerHandle.h>
#include <torch/serialize.h>

namespace pitlane::engine {

using namespace detail;

namespace {

constexpr const char* kSampleInputs = "data/sample_inputs/model.pt";

void flattenTensors(const c10::IValue& v, std::vector<at::Tensor>& out, int& other) {
    if (v.isTensor()) {
        out.push_back(v.toTensor());
    } else if (v.isTuple()) {
        for (const auto& e : v.toTupleRef().elements()) flattenTensors(e, out, other);
    } else if (v.isList()) {
        for (const auto& e : v.toListRef()) flattenTensors(e, out, other);
    } else if (v.isGenericDict()) {
        for (const auto& kv : v.toGenericDict()) flattenTensors(kv.value(), out, other);
    } else if (!v.isNone()) {
        ++other;
    }
}

// Why a program did not load, with what made it against this worker's libtorch.
std::string exportedLoadError(const std::string& path, const spec::ModelFormat& format, const std::exception& e) {
    const auto made = format.metadata.find("torch_version");
    return "cannot run " + path + " as a torch.export program through NativeRT: " + torchReason(e) +
           " — this worker's libtorch is " + std::string(TORCH_VERSION) +
           (made == format.metadata.end() ? std::string("; the archive does not say which torch saved it")
                                          : "; the archive was saved by torch " + made->second) +
           " (NativeRT runs programs saved by torch.export.save of the same or an older torch: export it "
           "again with the project's .venv/bin/python)";
}

}  // namespace

bool Engine::Impl::loadExampleInputs(const std::string& archive) {
    try {
        caffe2::serialize::PyTorchStreamReader reader(archive);
        if (!reader.hasRecord(kSampleInputs)) {
            sink.error(code::kBadKnob,
                       "input: the preset asks for the program's example inputs, but " + archive + " has no " +
                           kSampleInputs + " (save it with torch.export.save, or give the input in the preset)",
                       {{"field", "input"}, {"path", archive}});
            return false;
        }
        auto [data, size] = reader.getRecord(kSampleInputs);
        const char* bytes = static_cast<const char*>(data.get());
        const c10::IValue sample = torch::pickle_load(std::vector<char>(bytes, bytes + size));
        int other = 0;
        exampleInputs.clear();
        flattenTensors(sample, exampleInputs, other);
        for (auto& t : exampleInputs) t = t.to(at::kCPU);
    } catch (const std::exception& e) {
        sink.error(code::kModelLoadFailed,
                   "cannot read the example inputs of " + archive + " (" + kSampleInputs + "): " + torchReason(e),
                   {{"path", archive}});
        return false;
    }
    std::size_t wanted = 0;
    for (const auto& in : inputSpecs) wanted += in.example ? 1 : 0;
    if (exampleInputs.size() != inputSpecs.size() && wanted > 0) {
        sink.error(code::kInputMismatch,
                   "input: " + std::to_string(inputSpecs.size()) + " input(s) given, but the example inputs of " +
                       archive + " hold " + std::to_string(exampleInputs.size()) +
                       " tensor(s): an example input is one of the program's own (leave the input out)",
                   {{"field", "input"}, {"path", archive}});
        return false;
    }
    return true;
}

// The i-th example tensor at batch size `batch`: its rows repeated in turn along dimension 0
// (rows 0..n-1, 0..), so every value the program was exported with is fed, and a batch of the
// example's own size is the example itself.
at::Tensor Engine::Impl::exampleTensor(std::size_t i, int batch) const {
    const at::Tensor& t = exampleInputs.at(i);
    if (!inputSpecs.at(i).batch_dim || t.dim() == 0 || t.size(0) == batch) return t.clone();
    const auto rows = torch::arange(batch, torch::TensorOptions().dtype(at::kLong)).remainder(t.size(0));
    return t.index_select(0, rows).contiguous();
}

bool Engine::Impl::loadExported(ConfigureState& s, const spec::ModelFormat& format) {
    json& loaded = s.loaded;
    if (refuseKnobsForFormat(s, format)) return false;
    const auto t0 = Clock::now();
    try {
        program = std::make_unique<torch::nativert::ModelRunnerHandle>(modelPath, "model");
    } catch (const std::exception& e) {
        sink.error(code::kModelLoadFailed, exportedLoadError(modelPath, format, e),
                   {{"path", modelPath}, {"format", spec::kFormatExported}, {"torch", std::string(e.what()).substr(0, 2000)}});
        return false;
    }
    loaded["load_ms"] = msSince(t0);
    json info = {{"runtime", "nativert"}, {"metadata", json::object()}};
    for (const auto& [k, v] : format.metadata)
        if (k != "input") info["metadata"][k] = v;
    const auto made = format.metadata.find("torch_version");
    if (made != format.metadata.end() && made->second.substr(0, made->second.find('+')) != TORCH_VERSION)
        sink.warning("program_torch_version", "the program was saved by torch " + made->second +
                                                  ", this worker runs libtorch " + std::string(TORCH_VERSION));
    programInfo = info;
    loaded["format"] = spec::kFormatExported;
    loaded["program"] = info;
    return true;
}

c10::IValue Engine::Impl::runExported(const std::vector<c10::IValue>& in) {
    std::vector<c10::IValue> flat;
    flat.reserve(in.size());
    const bool copy = knobs.input_on_host && device.is_cuda();
    for (const auto& v : in) flat.emplace_back(copy ? v.toTensor().to(device, /*non_blocking=*/true) : v);
    auto outs = program->runWithFlatInputsAndOutputs(std::move(flat));
    if (outs.size() == 1) return outs.front();
    return c10::ivalue::Tuple::create(std::move(outs));
}

void Engine::Impl::releaseProgram() { program.reset(); }

}  // namespace pitlane::engine
