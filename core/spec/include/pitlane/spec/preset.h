#pragma once
// Presets and arm specs: parsing and validation with errors that name the file, the field and the
// reason. No Qt, no torch: used by the CLI, the window and the worker alike.
#include "pitlane/spec/knob_choices.h"
#include "pitlane/spec/model_file.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pitlane::spec {

using json = nlohmann::json;

// A validation failure: `where` is the file (or "<worker>"), `field` a JSON path such as
// "arms[1].knobs.grad".
class SpecError : public std::runtime_error {
public:
    SpecError(std::string where, std::string field, std::string reason);
    const std::string& where() const { return where_; }
    const std::string& field() const { return field_; }
    const std::string& reason() const { return reason_; }

private:
    std::string where_, field_, reason_;
};

struct InputSpec {
    std::vector<std::int64_t> shape;  // without the batch dimension
    std::string dtype = "float32";    // float32, float64, float16, bfloat16, int64, int32
    // Varying shapes per iteration (dynamic-shape lesson): when non-empty, iteration i uses
    // shapes[i % shapes.size()] instead of `shape`.
    std::vector<std::vector<std::int64_t>> shapes;
    // false ("batch_dim": false): `shape` is the whole tensor's, nothing is prepended, and
    // knobs.batch_size must stay 1 (issue 27: a [1, 8, 32] input became [1, 1, 8, 32]). A shape
    // may also start with "N" (["N", 8, 32]): that is where the batch goes, as when it is left
    // out.
    bool batch_dim = true;
    // An exported program's example input ("example": true): the worker feeds the values the
    // program was exported with (data/sample_inputs), repeated along the batch dimension to
    // knobs.batch_size; `shape` and `dtype` describe it (the dtype is the file's, any dtype).
    bool example = false;
    // Integer inputs: the values are drawn uniformly from [low, high) ("low" / "high"; the
    // `--input` syntax "16:int64[0,50)"). Left out: [0, 100) (kDefaultIntLow / kDefaultIntHigh),
    // read back as the worker's loaded.input.
    std::optional<long long> low, high;
};
inline constexpr long long kDefaultIntLow = 0;
inline constexpr long long kDefaultIntHigh = 100;

// Every knob of an arm (names fixed by CONTRACT.md). Optional = "leave torch's default".
// The Inductor options of an arm whose exported program Pitlane compiles (knob `inductor`,
// KnobKind::Flags): torch._inductor.config's freezing, max_autotune and cpp.dynamic_threads.
// dynamic_threads is on by default so that intra_op_threads reaches the package's own kernels.
struct InductorOptions {
    bool freezing = false;
    bool max_autotune = false;
    bool dynamic_threads = true;
    bool operator==(const InductorOptions& o) const {
        return freezing == o.freezing && max_autotune == o.max_autotune && dynamic_threads == o.dynamic_threads;
    }
    bool operator!=(const InductorOptions& o) const { return !(*this == o); }
};
void to_json(json& j, const InductorOptions& o);
void from_json(const json& j, InductorOptions& o);

struct Knobs {
    std::string device = "cpu";  // "cpu" or "cuda:N"
    // The choice knobs are enums (knob_choices.h); choiceName gives the name presets use.
    Mode mode = Mode::Eval;
    Grad grad = Grad::Enabled;
    Jit jit = Jit::None;
    Precision precision = Precision::Fp32;
    std::vector<int> batch_size = {1};
    std::optional<int> intra_op_threads;  // default: number of allowed cores
    int inter_op_threads = 1;
    Affinity affinity = Affinity::None;  // none | compact | spread | List (the cores below)
    std::vector<int> affinity_cores;     // when affinity == Affinity::List
    std::optional<bool> cudnn_enabled, cudnn_benchmark, cudnn_deterministic, allow_tf32;
    MemoryFormat memory_format = MemoryFormat::Contiguous;
    int workers = 1;
    bool host_sync_each_iter = false;
    bool input_on_host = false;
    std::optional<bool> profiling_executor;  // TorchScript profiling executor on/off
    std::optional<bool> fuser;               // NNC fuser on/off
    // Flush denormal floats to zero (FTZ + DAZ in MXCSR) on the worker's threads.
    std::optional<bool> flush_denormal;
    bool cuda_graph = false;                 // capture the forward once, replay it (CUDA only)
    // Heap allocator of the worker process: "system" (glibc malloc), "jemalloc", "tcmalloc".
    // Applied by the orchestrator (LD_PRELOAD when it starts the worker, session/allocator.h);
    // the worker reads back from /proc/self/maps what is really mapped.
    Allocator allocator = Allocator::System;
    // What one measured iteration is: "inference" (a forward) or "train_step" (forward, loss =
    // mean of the first output tensor, backward, SGD p -= 1e-3 * p.grad, grads set to None).
    Workload workload = Workload::Inference;
    // The worker's sandbox (engine/sandbox.h): "on" (writes only to the run's scratch folder, no
    // sockets but AF_UNIX, no new privileges, a memory limit) or "off". Applied when the worker
    // starts (its command line), read back into applied.sandbox.
    Sandbox sandbox = Sandbox::On;
    // RLIMIT_DATA of the worker in MiB; absent: 75 % of physical memory with the sandbox on a
    // CPU device, none otherwise.
    std::optional<int> memory_limit_mb;
    // Serving (a preset with a `serving` block): the dynamic batcher of the worker. A batch is
    // dispatched when max_batch requests are queued or the oldest has waited max_wait_ms.
    int max_batch = 1;
    int max_wait_ms = 0;
    // Exported programs (model_format "exported"): how Pitlane runs them.
    Compile compile = Compile::None;
    InductorOptions inductor;

    bool batchSweep() const { return batch_size.size() > 1; }
};

struct RunSettings {
    int warmup_iters = 5;
    int iters = 50;        // measured iterations per arm
    int block_iters = 10;  // interleaving block size
    // Fresh worker processes per arm (replicates), run in order-balanced rounds (A1 B1, B2 A2,
    // ...), each with its own warmup; the measured blocks are shared out among them. A process
    // carries state no knob names (allocator thresholds, address-space layout), so the CI must
    // see the process level (DESIGN.md "Measurement"; pyperf's worker processes, JMH's forks).
    // `processes` rounds always run; while a comparison is still inconclusive (neither
    // significant at 97.5 % nor tight within 1.1x at 97.5 %), another round of fresh processes
    // is added, up to `max_processes`. Given `processes` alone means exactly that many.
    static constexpr int kDefaultProcesses = 3;
    static constexpr int kDefaultMaxProcesses = 6;
    int processes = kDefaultProcesses;
    int max_processes = kDefaultMaxProcesses;
    int event_timeout_ms = 60000;  // a worker silent this long is declared hung ("timeout")
    // Adaptive / timed stopping (DESIGN.md "Stopping"): after `iters`, keep adding rounds of
    // blocks until every arm's median CI half-width is within target_ci_pct and min_time_ms has
    // passed, or max_time_ms is reached (then the run says "not stable"). 0 = off.
    int min_time_ms = 0;
    int max_time_ms = 0;
    double target_ci_pct = 0;
    bool adaptive() const { return min_time_ms > 0 || max_time_ms > 0 || target_ci_pct > 0; }
    std::uint64_t seed = 0;
    // A time budget (issue 43): the run plans its processes, blocks and iterations from what its
    // first forwards and set-ups cost, to fit this many ms of wall time (budget_plan.h). 0: none,
    // run.iters in run.processes as written. A preset gives budget_ms or iters / processes, not
    // both; `pitlane-cli run --time 30s` sets it, and a bare model's quick run has one
    // (kDefaultQuickBudgetMs).
    int budget_ms = 0;
    bool iters_written = false;      // the preset wrote run.iters
    bool processes_written = false;  // ... run.processes
    // The run is planned from its budget (not adaptive stopping, not a serving run's levels).
    bool budgeted() const { return budget_ms > 0 && !iters_written && !processes_written && !adaptive(); }
    // After the last round's measured blocks, this many iterations of each arm under libtorch's
    // profiler (never timed; ArmResult::profile). 0: no profile. `pitlane-cli run --profile`.
    int profile_iters = 0;
    // Arms on different hosts (remote arms, issue 15) are refused unless this is true: different
    // machines are not an A/B of knobs; with it, the run is a host comparison.
    bool compare_hosts = false;
    // Energy (issue 46, docs/ENERGY.md): where an energy counter is readable, one process of the
    // run (the first arm's first) measures the idle draw before its warmup: it waits
    // energy_cooldown_ms, then reads the counters over energy_idle_ms of sleep. 0: no idle draw
    // (no idle-subtracted figures).
    int energy_idle_ms = 3000;
    int energy_cooldown_ms = 2000;
};

// A serving experiment (issue 13; docs/KNOBS.md "Serving"): instead of timing batches back to
// back, requests arrive at offered rates (or from N closed-loop clients) and each arm's dynamic
// batcher (its max_batch / max_wait_ms knobs) serves them; one level per rate, per process.
struct ServingSpec {
    bool enabled = false;
    std::string arrival = "poisson";  // poisson | constant | closed
    std::vector<double> rates;        // requests/s (poisson, constant), ascending
    std::vector<int> clients;         // closed loop: concurrencies, ascending
    double duration_ms = 2000;        // arrivals are scheduled over this long per level
    double slo_p99_ms = 0;            // 0: no SLO (and no search)
    int search_steps = 4;             // bisection steps for the highest rate within the SLO
    std::string idle_wait = "sleep";  // sleep | spin: how the batcher waits for requests
    double saturation_ms = 2000;      // the oldest queued request waiting longer: saturated
    // The levels in the order they are run: rates, or clients for the closed loop.
    std::size_t levels() const { return arrival == "closed" ? clients.size() : rates.size(); }
    bool search() const { return arrival != "closed" && slo_p99_ms > 0 && search_steps > 0; }
};

// A sweep (issue 15; sweep_spec.cpp): `pitlane-cli sweep` runs the preset once per model x batch
// size ("slice"), each slice with the preset's arms (or those named) at that model and batch
// size; `pitlane-cli run` ignores it and runs the preset as written.
struct SweepSpec {
    bool enabled = false;
    std::vector<std::string> models;  // as written (bundled name or file); empty: the preset's model
    std::vector<int> batch_sizes;     // empty: each arm keeps its own batch_size
    std::vector<std::string> arms;    // empty ("all"): every arm
};

struct ArmSpec {
    std::string name;
    Knobs knobs;  // as parsed, with its model format's defaults (applyFormatDefaults)
    json knobs_json;  // as requested (for the results JSON)
    // Its model (issue 26): the arm's own `model` and `input`, or the preset's. Arms with
    // different models are interleaved, replicated and paired like any other arms.
    std::string model;             // as written in the arm; "" when it measures the preset's model
    std::string model_path;        // resolved absolute path of the file it measures
    bool bundled = false;
    std::vector<InputSpec> input;  // the arm's own, else the preset's, else its model's sidecar
    bool inputWritten = false;     // the arm wrote its own `input` (presetToJson writes it back)
    std::string model_format;      // kFormatTorchScript / kFormatAoti; "" when unreadable
    // Where its workers run (remote_hosts.h): "" on this machine, else an ssh destination
    // ("user@host" or an ssh config alias) — the arm's own `host`, else the preset's.
    std::string host;
    bool hostWritten = false;  // the arm named its own host (presetToJson writes it back)
};

struct Preset {
    std::string file;        // where it came from ("" when built in memory)
    std::string name;
    std::string description;
    json lesson;             // optional teaching text carried through untouched
    std::string model;       // as written in the preset
    std::string model_path;  // resolved absolute path of the model file
    bool bundled = false;
    std::vector<InputSpec> input;  // written, or from the model's sidecar
    RunSettings run;
    ServingSpec serving;
    SweepSpec sweep;
    std::vector<ArmSpec> arms;
    // Remote arms (remote_hosts.h): the preset's default host ("" local) and the worker binary
    // on the remote side (a name looked up on the remote PATH, or an absolute path).
    std::string host;
    std::string remote_worker = "pitlane-worker";
    json raw;  // the preset as read (the "preset" field of the results JSON)
};

// The file name a model is shown by ("resnet18.pt2").
std::string modelLabel(const std::string& modelPath);

// Knobs that cannot apply to a model of format `f` (an AOTInductor package is a compiled, frozen,
// inference-only graph for one device, and, per its metadata, one batch range): each error names
// the knob ("<prefix>.<knob>") and the reason. Written knobs are told from defaults by
// `knobsJson` (the arm's knobs as written). Nothing for TorchScript.
void checkKnobsForFormat(const Knobs& k, const json& knobsJson, const ModelFormat& f, const std::string& where,
                         const std::string& prefix, std::vector<SpecError>& errors);
// An arm that compiles an exported program (knob compile "aoti") feeds the sizes the program was
// exported with where they are static: the package Inductor makes checks every size and refuses
// any other (after a compile of a minute or more). An error on `field` (the arm's input) naming
// the input, the exported sizes and the arm's, when it does not. Nothing for other arms: NativeRT
// runs a program at other sizes where its operators allow.
void checkCompiledInput(const std::vector<InputSpec>& input, const Knobs& k, const ModelFormat& f,
                        const std::string& modelPath, const std::string& where, const std::string& field,
                        std::vector<SpecError>& errors);
// Why knob `knob` does not apply to a model of `format` at all ("" when it does): the window
// disables its control with this as the reason.
std::string knobNotForFormat(const std::string& knob, const std::string& format);
// What a model file is, in words, for validate and the window: "a torch.export archive (an
// ExportedProgram saved by torch 2.11.0; batch dynamic 1-1024), run through NativeRT", "an
// AOTInductor package compiled for cuda …", "TorchScript", or why it is not recognised.
std::string describeModelFormat(const ModelFormat& f);
// The defaults a format gives knobs left out: a package runs under inference_mode.
void applyFormatDefaults(Knobs& k, const json& knobsJson, const std::string& format);

// Names of the bundled models (CONTRACT.md).
const std::vector<std::string>& bundledModelNames();

// Where bundled models live: $PITLANE_MODEL_DIR, else <exeDir>/models, else
// <exeDir>/../share/pitlane/models. Returns "" when none exists.
std::string findModelDir(const std::string& exeDir);

// Parse and validate. `modelDir` is where bundled models are looked up. Throws SpecError (the
// first of validatePreset's errors).
Preset parsePreset(const json& j, const std::string& file, const std::string& modelDir);
Preset loadPresetFile(const std::string& path, const std::string& modelDir);

// Every error of a preset, not only the first (empty when it is valid): parsing goes on past a
// bad field wherever the rest does not depend on it (each top-level field, each input, each run
// field, each arm and each of its knobs, each lesson check); a rule that combines fields is only
// checked when none of them was refused. A file that cannot be opened or parsed is one error.
std::vector<SpecError> validatePreset(const json& j, const std::string& file,
                                      const std::string& modelDir);
std::vector<SpecError> validatePresetFile(const std::string& path, const std::string& modelDir);

// The default A/B of a bare model (issue 27): two arms that differ in one knob, named after it,
// one intra-op thread each: "grad enabled" vs "inference_mode" (eval both) for TorchScript,
// "1 thread" vs "2 threads" for an AOTInductor package (format kFormatAoti).
json defaultArms(const std::string& format);
// A preset for a bare model file with defaultArms.
Preset presetForModel(const std::string& modelPath, const std::string& modelDir);
// A/B of two model files (File > Compare two models, two files dropped, `presetForModels`):
// arm A measures the first, arm B the second, both under inference_mode and one intra-op thread.
Preset presetForModels(const std::string& modelA, const std::string& modelB, const std::string& modelDir);
// Whether the arms measure different model files (the verdict then names them).
bool armsDifferInModel(const Preset& p);

// Knobs alone (the worker validates the configure command with the same rules). Throws the first
// error; the second form appends every error (each knob on its own, then each combination rule
// whose knobs were all accepted) to `errors`.
Knobs parseKnobs(const json& j, const std::string& where, const std::string& fieldPrefix);
Knobs parseKnobs(const json& j, const std::string& where, const std::string& fieldPrefix,
                 std::vector<SpecError>& errors);
json knobsToJson(const Knobs& k);
std::vector<InputSpec> parseInputs(const json& j, const std::string& where,
                                   const std::string& fieldPrefix);
json inputsToJson(const std::vector<InputSpec>& inputs);

// The bundled model's sidecar (<name>.json next to <name>.pt): input signature etc.
// Limits on what a preset may ask for, checked by validation (a hostile or mistyped preset must
// not take the machine's memory before any worker starts).
inline constexpr std::size_t kMaxArms = 64;
inline constexpr long long kMaxBlocks = 100000;            // ceil(iters / block_iters)
inline constexpr long long kMaxSamplesPerArm = 20000000;   // iters x batch sizes x workers

json readModelSidecar(const std::string& modelPath);
// Reads a JSON file: false with `why` ("is a directory, not a JSON file", "not valid JSON: …",
// a read error) instead of throwing or aborting on a directory, FIFO or device.
bool readJsonFile(const std::string& path, json* out, std::string* why);

// The `serving` block (serving_spec.cpp): every error appended to `errors`, fields named
// "serving.<key>". serializeServing is its inverse (absent when not enabled).
ServingSpec parseServing(const json& j, const std::string& where, std::vector<SpecError>& errors);
json servingToJson(const ServingSpec& s);

// The `sweep` block (sweep_spec.cpp): every error appended to `errors`, fields named
// "sweep.<key>"; arm names are checked against `arms`.
SweepSpec parseSweep(const json& j, const std::string& where, const std::vector<ArmSpec>& arms,
                     std::vector<SpecError>& errors);
json sweepToJson(const SweepSpec& s);  // absent (null) when not enabled
inline constexpr std::size_t kMaxSweepSlices = 1000;  // Slurm's default MaxArraySize is 1001

// One slice of a sweep: a preset of its own (no `sweep`, no `lesson`; a model file as an absolute
// path; `input` dropped when the model is not the preset's own, so the model's sidecar gives it).
struct SweepSlice {
    std::size_t index = 0;
    std::string model;       // as written in sweep.models (or the preset's model)
    int batch_size = 0;      // 0: the arms' own batch sizes
    std::string label;       // "<model>/b<batch>" (or "<model>")
    json preset;
};
// The slices of p.sweep, models outermost, in the order written (empty when not enabled).
std::vector<SweepSlice> expandSweep(const Preset& p);
// Each slice validated as the preset it becomes; errors renamed into the sweep ("model" becomes
// "sweep.models[i]", any other field keeps its name, the reason says which slice).
void checkSweepSlices(const Preset& p, const std::string& modelDir, std::vector<SpecError>& errors);

// The preset serialized back (what "save preset" writes).
json presetToJson(const Preset& p);

}  // namespace pitlane::spec
