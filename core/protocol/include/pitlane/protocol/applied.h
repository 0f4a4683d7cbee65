#pragma once
// The worker's read-back, the `applied` event (ARCHITECTURE.md "Worker protocol";
// core/engine/src/engine_applied.cpp writes it): the knobs as really applied, named as the knobs
// (their values are the knob table's, spec/knob_table.h), and the read-back extras. Described
// once (record.h). Every field the table does not type, or does not write back exactly as it was
// sent (a field of the wrong type, a nested object with a key this build does not know), is kept
// in `extra`: the results JSON's arms[].applied and the history keep what the worker said.
// Optional fields: absent when the worker did not send them. No Qt, no torch.
#include "pitlane/protocol/record.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pitlane::protocol {

using json = nlohmann::json;

// applied.grad_state: what autograd was doing around the first forward.
struct GradState {
    std::optional<bool> grad_mode_enabled, inference_mode_enabled, output_is_inference, output_requires_grad;
};
inline auto fieldsOf(const GradState*) {
    using record::field;
    using G = GradState;
    return std::make_tuple(field("grad_mode_enabled", &G::grad_mode_enabled),
                           field("inference_mode_enabled", &G::inference_mode_enabled),
                           field("output_is_inference", &G::output_is_inference),
                           field("output_requires_grad", &G::output_requires_grad));
}
PITLANE_RECORD_OPERATORS(GradState)

// applied.jit_state: the forward graph after the JIT knob, the executor and the fuser ({package:
// true} alone for an AOTInductor package).
struct JitState {
    std::optional<std::int64_t> graph_nodes, getattr_nodes, mkldnn_nodes, remaining_parameters;
    std::optional<bool> frozen, profiling_executor, fuser_nnc, package;
};
inline auto fieldsOf(const JitState*) {
    using record::field;
    using J = JitState;
    return std::make_tuple(field("graph_nodes", &J::graph_nodes), field("getattr_nodes", &J::getattr_nodes),
                           field("mkldnn_nodes", &J::mkldnn_nodes),
                           field("remaining_parameters", &J::remaining_parameters), field("frozen", &J::frozen),
                           field("profiling_executor", &J::profiling_executor),
                           field("fuser_nnc", &J::fuser_nnc), field("package", &J::package));
}
PITLANE_RECORD_OPERATORS(JitState)

// applied.cudnn: torch's global cuDNN / TF32 flags.
struct CudnnState {
    std::optional<bool> enabled, benchmark, deterministic, allow_tf32, allow_tf32_cublas;
};
inline auto fieldsOf(const CudnnState*) {
    using record::field;
    using C = CudnnState;
    return std::make_tuple(field("enabled", &C::enabled), field("benchmark", &C::benchmark),
                           field("deterministic", &C::deterministic), field("allow_tf32", &C::allow_tf32),
                           field("allow_tf32_cublas", &C::allow_tf32_cublas));
}
PITLANE_RECORD_OPERATORS(CudnnState)

struct Applied {
    // The knobs as applied (each named as its knob).
    std::optional<std::string> device, mode, grad, jit, precision, memory_format, workload;
    std::optional<int> intra_op_threads, inter_op_threads, max_batch, max_wait_ms;
    std::optional<bool> host_sync_each_iter, input_on_host, cuda_graph, flush_denormal;
    std::optional<std::string> affinity_policy;  // the affinity knob: none, compact, spread, list
    // The read-back extras.
    std::optional<std::vector<int>> affinity;  // the union of every thread's mask
    std::optional<bool> affinity_uniform;      // every thread has the same mask
    std::optional<int> worker_index, worker_count, process_threads, input_variants;
    std::optional<std::string> model_format, blas, blas_path, allocator, allocator_path;
    std::optional<std::string> input_device, parallel_info;
    std::optional<bool> input_pinned;
    std::optional<GradState> grad_state;
    std::optional<JitState> jit_state;
    std::optional<CudnnState> cudnn;
    // Every other field as sent (batch_size, input_shapes, precision_state, allocator_conf /
    // options / mapped, sandbox, flush_denormal_state, workload_state, package, ...), and a typed
    // field's value where the table would not write it back exactly as sent.
    json extra = json::object();

    bool empty() const;  // nothing read back (no applied event came)
    // A field of `extra` (null when absent).
    const json& extraField(const char* key) const;
};
inline auto fieldsOf(const Applied*) {
    using record::field;
    using A = Applied;
    return std::tuple_cat(
        std::make_tuple(field("device", &A::device), field("mode", &A::mode), field("grad", &A::grad),
                        field("jit", &A::jit), field("precision", &A::precision),
                        field("memory_format", &A::memory_format), field("workload", &A::workload),
                        field("intra_op_threads", &A::intra_op_threads),
                        field("inter_op_threads", &A::inter_op_threads), field("max_batch", &A::max_batch),
                        field("max_wait_ms", &A::max_wait_ms),
                        field("host_sync_each_iter", &A::host_sync_each_iter),
                        field("input_on_host", &A::input_on_host), field("cuda_graph", &A::cuda_graph),
                        field("flush_denormal", &A::flush_denormal),
                        field("affinity_policy", &A::affinity_policy)),
        std::make_tuple(field("affinity", &A::affinity), field("affinity_uniform", &A::affinity_uniform),
                        field("worker_index", &A::worker_index), field("worker_count", &A::worker_count),
                        field("process_threads", &A::process_threads),
                        field("input_variants", &A::input_variants), field("model_format", &A::model_format),
                        field("blas", &A::blas), field("blas_path", &A::blas_path),
                        field("allocator", &A::allocator), field("allocator_path", &A::allocator_path),
                        field("input_device", &A::input_device), field("parallel_info", &A::parallel_info),
                        field("input_pinned", &A::input_pinned), field("grad_state", &A::grad_state),
                        field("jit_state", &A::jit_state), field("cudnn", &A::cudnn)));
}

// The read-back from the event's fields (without "v" and "type"; a results JSON's arms[].applied,
// the history's arms.applied). Never throws: a field it cannot type stays in `extra`.
Applied appliedFromFields(const json& fields);
// Its fields, exactly as they were read (typed fields, then `extra`).
json appliedFields(const Applied& a);

bool operator==(const Applied& a, const Applied& b);
inline bool operator!=(const Applied& a, const Applied& b) { return !(a == b); }
// nlohmann's conversions (a list of them in the history's worker_applied).
inline void to_json(json& j, const Applied& a) { j = appliedFields(a); }
inline void from_json(const json& j, Applied& a) { a = appliedFromFields(j); }

}  // namespace pitlane::protocol
