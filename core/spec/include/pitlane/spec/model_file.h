#pragma once
// Integrity of a TorchScript model file before anything measures it (issue 12): libtorch does
// not check the zip's CRC-32s, so a damaged copy can load and run with changed weights. Qt-free
// and torch-free; hostile bytes never crash it (every length read from the file is bounded by the
// file's size before it is used, and nothing is allocated from a length field).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pitlane::spec {

// Stable error codes (docs/KNOBS.md "Error codes").
// The file is a zip but its structure or an entry's bytes are not what the archive records
// (a CRC-32 mismatch, a truncation, an entry outside the file, ...).
inline constexpr const char* kModelDamaged = "model_damaged";
// The file is not a zip archive, or a sound zip that is neither a TorchScript archive nor an
// AOTInductor package (the code keeps its name: scripts rely on it).
inline constexpr const char* kModelNotTorchScript = "model_not_torchscript";

// Model formats (results JSON arms[].model_format, CONTRACT.md).
inline constexpr const char* kFormatTorchScript = "torchscript";
inline constexpr const char* kFormatAoti = "aoti";
// A torch.export.save archive (an ExportedProgram: models/<name>.json, data/weights/,
// data/sample_inputs/), run by the worker through libtorch's NativeRT.
inline constexpr const char* kFormatExported = "exported";
// The file cannot be opened or is not a regular file (same code as the worker's).
inline constexpr const char* kModelMissing = "model_not_found";

struct ModelFileCheck {
    bool ok = false;
    std::string code;     // "" when ok
    std::string message;  // names the file, the entry and the reason; "" when ok
    std::string sha256;   // lower-case hex of the whole file; "" when the check stopped before
    std::uint64_t bytes = 0;  // the file's size
    int entries = 0;          // zip entries (central directory)
    std::string format;       // kFormatTorchScript, kFormatAoti or kFormatExported once recognised
};

// Reads the file once: the zip's end records (zip64 included) and central directory against
// every local header (names, sizes, offsets, no overlap, nothing outside the file, no duplicate
// names), every entry's CRC-32 (stored entries directly, deflated ones inflated by zlib with
// their declared size as a bound), the layout of its format (TorchScript: one top-level folder
// holding data.pkl, constants.pkl, version and code/; AOTInductor package: one top-level folder
// holding archive_format "pt2" and data/aotinductor/<model>/ with a compiled .so or its .cpp),
// and the SHA-256 of the whole file.
ModelFileCheck checkModelFile(const std::string& path);

// What a model file is, from its central directory alone (cheap enough for live validation):
// its format and, for an AOTInductor package, what the package says about itself (the
// <model>_metadata.json AOTInductor writes next to the compiled model: AOTI_DEVICE_KEY,
// AOTI_CPU_ISA, and whatever aot_inductor.metadata added, e.g. torch_version, batch, input).
// Nothing is checked beyond that: checkModelFile does the integrity check before a run.
// An exported program's metadata (kFormatExported) is read from its models/model.json into the
// same map as a package's, with the same keys where they mean the same:
//   "batch"          "static N" / "dynamic LO-HI": dimension 0 of its first tensor input
//   "batch_symbol"   the symbol of a dynamic batch ("s23"), "batch_input" that input's name
//   "example_batch"  the batch size of the example inputs it was exported with
//   "input"          a preset "input" (JSON) describing its tensor inputs, each marked
//                    "example": true (the worker feeds data/sample_inputs' values)
//   "device"         where its weights live ("cpu", "cuda"), "torch_version" what saved it
//   "inputs"         how many user inputs; "non_tensor_inputs" those that are not tensors
struct ModelFormat {
    std::string format;  // kFormatTorchScript, kFormatAoti, kFormatExported; "" when not recognised
    std::string code, message;  // why not recognised ("" when it was)
    std::string package_model;  // AOTInductor: the <model> of data/aotinductor/<model>/
    std::map<std::string, std::string> metadata;  // AOTInductor: its metadata (string values)
    std::string torchscript_version;  // TorchScript: its "version" record ("" when absent)
};
ModelFormat readModelFormat(const std::string& path);

}  // namespace pitlane::spec

namespace pitlane::spec::detail {
// An exported program's models/model.json (torch/_export/serde/schema.py) → ModelFormat's
// metadata (keys above). Pure: tested on JSON written by hand and by torch.export.save.
std::map<std::string, std::string> exportedMetadata(const nlohmann::json& model);
// The sizes of the tensors a torch.save'd file (a zip held in memory: an exported program's
// data/sample_inputs/model.pt) holds, in pickle order; empty when it cannot tell. Bounded:
// hostile bytes end the scan, never crash it.
std::vector<std::vector<long long>> sampleInputSizes(const std::string& savedZip);
std::vector<std::vector<long long>> pickledTensorSizes(const std::string& pickle);
}  // namespace pitlane::spec::detail
