// Typed protocol events (protocol/events.h): each decoder reads what the worker writes, fills
// defaults for missing fields, rejects fields of the wrong type, and inverts its encoder.
#include "pitlane/protocol/events.h"

#include <gtest/gtest.h>

namespace P = pitlane::protocol;
using P::json;

namespace {

// A block_done line as app/worker_main.cpp writes it (fields of ARCHITECTURE.md).
json workerBlockDone() {
    return json::parse(R"({"v":1,"type":"block_done","block":3,"phase":"measure","iters":10,
        "batch_size":4,"wall_ms":12.5,"minor_faults":1200,"major_faults":2,
        "minor_faults_per_iter":120.0,"major_faults_per_iter":0.2,"future_field":[1,2]})");
}

}  // namespace

TEST(Events, TypeOfEveryEventAndUnknownOnes) {
    EXPECT_EQ(P::eventType(P::makeEvent(P::kHello)), P::EventType::Hello);
    EXPECT_EQ(P::eventType(P::makeEvent(P::kBlockDone)), P::EventType::BlockDone);
    EXPECT_EQ(P::eventType(P::makeEvent(P::kBye)), P::EventType::Bye);
    EXPECT_EQ(P::eventType({{"type", "from_the_future"}}), P::EventType::Unknown);
    EXPECT_EQ(P::eventType({{"type", 3}}), P::EventType::Unknown);
    EXPECT_EQ(P::eventType(json::object()), P::EventType::Unknown);
    EXPECT_FALSE(P::decodeEvent({{"v", 1}, {"type", "from_the_future"}}).has_value());
}

TEST(Events, BlockDoneReadsTheWorkersFieldsAndIgnoresUnknownOnes) {
    const auto e = P::blockDoneFromJson(workerBlockDone());
    EXPECT_EQ(e.block, 3);
    EXPECT_EQ(e.phase, "measure");
    EXPECT_EQ(e.iters, 10);
    EXPECT_EQ(e.batch_size, 4);
    EXPECT_DOUBLE_EQ(e.wall_ms, 12.5);
    ASSERT_TRUE(e.minor_faults && e.major_faults);
    EXPECT_EQ(*e.minor_faults, 1200);
    EXPECT_EQ(*e.major_faults, 2);
    EXPECT_FALSE(e.stopped);
    const auto variant = P::decodeEvent(workerBlockDone());
    ASSERT_TRUE(variant);
    EXPECT_TRUE(std::holds_alternative<P::BlockDone>(*variant));
}

TEST(Events, MissingFieldsTakeTheDocumentedDefaults) {
    const auto b = P::blockDoneFromJson({{"type", "block_done"}});
    EXPECT_FALSE(b.minor_faults.has_value());  // a worker that predates fault counting
    EXPECT_EQ(b.batch_size, 1);
    const auto m = P::metricsFromJson({{"type", "metrics"}});
    EXPECT_EQ(m.tensor_bytes, -1);  // not counted, never 0
    EXPECT_EQ(m.rss_bytes, 0);
    const auto l = P::loadedFromJson({{"type", "loaded"}});
    EXPECT_EQ(l.load_ms, -1);
    EXPECT_EQ(l.first_forward_ms, -1);
}

TEST(Events, AFieldOfTheWrongTypeThrows) {
    EXPECT_ANY_THROW(P::decodeEvent({{"type", "block_done"}, {"minor_faults", "many"}}));
    EXPECT_ANY_THROW(P::decodeEvent({{"type", "metrics"}, {"rss_bytes", "1 GB"}}));
    EXPECT_ANY_THROW(P::decodeEvent({{"type", "hello"}, {"pid", "one"}}));
    EXPECT_ANY_THROW(P::decodeEvent({{"type", "samples"}, {"block", 0}}));  // no latency_ns
}

TEST(Events, EncodersInvertDecoders) {
    P::Hello h{4242, 1, "0.3", {{"cpu", "x"}}};
    const auto h2 = P::helloFromJson(P::toJson(h));
    EXPECT_EQ(h2.pid, h.pid);
    EXPECT_EQ(h2.environment, h.environment);

    P::Loaded l;
    l.load_ms = 12.5;
    l.first_forward_ms = 3;
    l.parameters = 1000;
    l.fields = {{"output", {{"dtype", "float32"}}}};
    const auto l2 = P::loadedFromJson(P::toJson(l));
    EXPECT_EQ(l2.load_ms, 12.5);
    EXPECT_EQ(l2.parameters, 1000);
    EXPECT_EQ(l2.fields.at("output"), l.fields.at("output"));
    EXPECT_FALSE(l2.fields.contains("type"));

    const auto b = P::blockDoneFromJson(workerBlockDone());
    const auto b2 = P::blockDoneFromJson(P::toJson(b));
    EXPECT_EQ(b2.minor_faults, b.minor_faults);
    EXPECT_EQ(b2.iters, b.iters);

    P::Metrics m;
    m.rss_bytes = 1 << 20;
    m.cpu_user_s = 1.5;
    m.core_util_pct = {100, 0};
    const auto m2 = P::metricsFromJson(P::toJson(m));
    EXPECT_EQ(m2.rss_bytes, m.rss_bytes);
    EXPECT_EQ(m2.core_util_pct, m.core_util_pct);

    const auto w = P::warningFromJson(P::toJson(P::Warning{"oversubscribed", "8 threads on 2 cores"}));
    EXPECT_EQ(w.code, "oversubscribed");
    P::Bye bye;
    bye.peak_rss_bytes = 77;
    EXPECT_EQ(P::byeFromJson(P::toJson(bye)).peak_rss_bytes, 77);
    P::Applied sent;
    sent.mode = "eval";
    const auto applied = P::appliedFromJson(P::toJson(sent));
    EXPECT_EQ(applied.mode, std::optional<std::string>("eval"));
    EXPECT_EQ(P::appliedFields(applied), json({{"mode", "eval"}}));
    EXPECT_EQ(applied, sent);
}

// The applied event (issue 30): typed by its table; what the table does not type, or would not
// write back exactly as sent, is kept as sent, so its fields come back unchanged.
TEST(Events, AppliedIsTypedAndKeepsEveryFieldAsSent) {
    const json fields = json::parse(R"({"affinity":[0,1],"affinity_policy":"none","affinity_uniform":true,
        "allocator":"system","allocator_conf":{},"batch_size":[1,64],"blas":"mkl","cuda_graph":false,
        "cudnn":{"allow_tf32":true,"benchmark":false,"enabled":true},"device":"cpu",
        "grad":"no_grad","grad_state":{"grad_mode_enabled":false,"output_requires_grad":false},
        "intra_op_threads":1,"inter_op_threads":"two","jit":"none",
        "jit_state":{"frozen":false,"profiling_executor":true,"remaining_parameters":399370,"new_key":1},
        "max_wait_ms":1.5,"precision_state":{"output_dtype":"float32"},"process_threads":2,
        "sandbox":{"enabled":true},"workload":"inference","future_field":[1,"x"]})");
    json event = fields;
    event.update(P::makeEvent(P::kApplied));
    const auto a = P::appliedFromJson(event);
    EXPECT_EQ(a.grad, std::optional<std::string>("no_grad"));
    EXPECT_EQ(a.intra_op_threads, std::optional<int>(1));
    EXPECT_EQ(a.affinity, std::optional<std::vector<int>>(std::vector<int>{0, 1}));
    ASSERT_TRUE(a.cudnn && a.grad_state && a.jit_state);
    EXPECT_EQ(a.cudnn->benchmark, std::optional<bool>(false));
    EXPECT_EQ(a.cudnn->deterministic, std::nullopt) << "absent stays absent";
    EXPECT_EQ(a.grad_state->output_requires_grad, std::optional<bool>(false));
    EXPECT_EQ(a.jit_state->profiling_executor, std::optional<bool>(true));
    EXPECT_EQ(a.inter_op_threads, std::nullopt) << "a field of the wrong type is not typed";
    EXPECT_EQ(a.extraField("inter_op_threads"), "two");
    EXPECT_EQ(a.extraField("max_wait_ms"), 1.5) << "typed as an int, kept as sent";
    EXPECT_EQ(a.extraField("jit_state"), fields["jit_state"]) << "a nested key this build does not know";
    EXPECT_FALSE(a.extra.contains("grad")) << "typed fields written back as sent are not kept twice";
    EXPECT_EQ(a.extraField("future_field"), fields["future_field"]);
    EXPECT_EQ(P::appliedFields(a).dump(), fields.dump());
    EXPECT_EQ(P::appliedFromFields(P::appliedFields(a)), a);
    EXPECT_TRUE(P::Applied{}.empty());
    EXPECT_TRUE(P::appliedFromFields(json("not an object")).empty());
}

// Every worker event is a struct of the variant (issue 30): serve_batches, profile and a serving
// level's block_done included, decoded from what the worker writes and encoded back.
TEST(Events, ServingAndProfileEventsAreTyped) {
    const json batches = json::parse(R"({"v":1,"type":"serve_batches","block":2,"first_batch":3,
        "first_request":7,"size":[2,1],"free_ns":[10,20],"start_ns":[11,21],"end_ns":[15,25],
        "arrival_ns":[1,2,3]})");
    const auto b = P::decodeEvent(batches);
    ASSERT_TRUE(b && std::holds_alternative<P::ServeBatches>(*b));
    const auto& sb = std::get<P::ServeBatches>(*b);
    EXPECT_EQ(sb.block, 2);
    EXPECT_EQ(sb.first_batch, 3);
    EXPECT_EQ(sb.first_request, 7);
    EXPECT_EQ(sb.size, (std::vector<int>{2, 1}));
    EXPECT_EQ(sb.arrival_ns, (std::vector<std::int64_t>{1, 2, 3}));
    EXPECT_EQ(P::toJson(sb), batches);
    EXPECT_ANY_THROW(P::decodeEvent({{"type", "serve_batches"}, {"size", "two"}}));

    json done = workerBlockDone();
    done["serving"] = {{"arrival", "poisson"}, {"rate_per_s", 50.0}, {"clients", 1},
                       {"duration_ms", 200.0}, {"max_batch", 4}, {"max_wait_ms", 2.0},
                       {"idle_wait", "sleep"}, {"scheduled", 10}, {"arrived", 9},
                       {"served", 8}, {"batches", 5}, {"max_queue", 3}, {"saturated", true}};
    const auto d = P::blockDoneFromJson(done);
    ASSERT_TRUE(d.serving);
    EXPECT_EQ(d.serving->arrived, 9);
    EXPECT_EQ(d.serving->max_queue, 3);
    EXPECT_TRUE(d.serving->saturated);
    EXPECT_EQ(P::toJson(d)["serving"], done["serving"]);
    EXPECT_FALSE(P::blockDoneFromJson(workerBlockDone()).serving);
    EXPECT_ANY_THROW(P::blockDoneFromJson({{"type", "block_done"}, {"serving", 3}}));

    const json profile = {{"v", 1}, {"type", "profile"}, {"iters", 5}, {"ops", json::array()}};
    const auto p = P::decodeEvent(profile);
    ASSERT_TRUE(p && std::holds_alternative<P::Profile>(*p));
    EXPECT_EQ(std::get<P::Profile>(*p).fields, json({{"iters", 5}, {"ops", json::array()}}));
    EXPECT_EQ(P::toJson(std::get<P::Profile>(*p)), profile);
}

// The field tables: a record's equality and its JSON are the same list.
TEST(Events, RecordTablesGiveEqualityAndJson) {
    const auto a = P::blockDoneFromJson(workerBlockDone());
    auto b = a;
    EXPECT_TRUE(P::record::equal(a, b));
    b.cpu_ms = 1.5;
    EXPECT_FALSE(P::record::equal(a, b));
    EXPECT_EQ(P::toJson(b).at("cpu_ms"), 1.5);
    EXPECT_FALSE(P::toJson(a).contains("cpu_ms"));  // absent, never 0
}
