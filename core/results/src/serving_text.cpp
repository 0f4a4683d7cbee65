// A serving run written out: the results JSON's serving objects (and reading the raw levels
// back), the CLI table and the per-request CSV.
#include "pitlane/results/run_result.h"
#include "pitlane/results/serving_result.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace pitlane::results {

using json = nlohmann::json;

namespace {

json summaryJson(const serving::LevelSummary& s) {
    json j = {{"scheduled", s.scheduled},
              {"arrived", s.arrived},
              {"served", s.served},
              {"offered_per_s", s.offered_per_s},
              {"achieved_per_s", s.achieved_per_s},
              {"wall_ms", s.wall_ms},
              {"p50_ms", s.p50_ms},
              {"p90_ms", s.p90_ms},
              {"p99_ms", s.p99_ms},
              {"p999_ms", s.p999_ms},
              {"mean_ms", s.mean_ms},
              {"max_ms", s.max_ms},
              {"queue_wait_ms", s.queue_wait_ms},
              {"formation_wait_ms", s.formation_wait_ms},
              {"inference_ms", s.inference_ms},
              {"mean_batch", s.mean_batch},
              {"batch_histogram", s.batch_histogram},
              {"max_queue", s.max_queue},
              {"backlog_at_end", s.backlog_at_end},
              {"stopped_early", s.stopped_early},
              {"saturated", s.saturated}};
    if (s.slo_ms > 0) {
        j["slo_miss_share"] = s.slo_miss_share;
        j["meets_slo"] = s.meets_slo();
    }
    return j;
}

json levelJson(const ServingLevel& l) {
    std::vector<std::int64_t> size, freeNs, start, end;
    for (const auto& b : l.record.batches) {
        size.push_back(b.size);
        freeNs.push_back(b.free_ns);
        start.push_back(b.start_ns);
        end.push_back(b.end_ns);
    }
    json j = protocol::record::toJson(l);
    j["arrival_ns"] = l.record.arrival_ns;
    j["batches"] = {{"size", size}, {"free_ns", freeNs}, {"start_ns", start}, {"end_ns", end}};
    return j;
}

std::string fmt(double v, const char* f = "%.4g") {
    char buf[64];
    if (f[1] == '.' && f[3] == 'g' && std::fabs(v) >= 1e4) f = "%.0f";  // never an exponent
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// A rate: whole requests/s from 100 up, else four significant digits.
std::string rateText(double v) { return fmt(v, v >= 100 ? "%.0f" : "%.4g"); }

}  // namespace

ServingLevel withoutArrays(const ServingLevel& l) {
    ServingLevel r;
    protocol::record::copy(l, r);
    return r;
}

json servingArmJson(const RunResult& run, std::size_t arm) {
    json points = json::array();
    for (const auto& p : servingPoints(run, arm)) {
        json j = summaryJson(p.pooled);
        j["rate_per_s"] = p.rate_per_s;
        j["clients"] = p.clients;
        j["search"] = p.search;
        j["processes"] = json::array();
        for (const auto& s : p.processes) j["processes"].push_back(summaryJson(s));
        if (p.pooled.slo_ms > 0) {
            j["meets_slo"] = p.meetsSlo();
            j["processes_meeting_slo"] = p.meeting_slo;
        }
        points.push_back(std::move(j));
    }
    json out = {{"points", points}, {"levels", json::array()}};
    if (run.preset.serving.slo_p99_ms > 0) {
        const SloCapacity c = sloCapacity(servingPoints(run, arm));
        out["max_rate_within_slo_per_s"] = c.max_rate_per_s > 0 ? json(c.max_rate_per_s) : json();
        out["first_rate_over_slo_per_s"] = c.first_failing_per_s > 0 ? json(c.first_failing_per_s) : json();
    }
    for (const auto& l : run.arms[arm].serving) out["levels"].push_back(levelJson(l));
    return out;
}

std::vector<ServingLevel> servingLevelsFromJson(const json& j) {
    std::vector<ServingLevel> out;
    if (!j.is_object() || !j.contains("levels")) return out;
    for (const auto& e : j.at("levels")) {
        // Every field of the row is required here (a results file is written whole).
        protocol::record::forEachField<ServingLevel>([&](const auto& f) { (void)e.at(f.name); });
        ServingLevel l = protocol::record::fromJson<ServingLevel>(e);
        l.record.arrival_ns = e.at("arrival_ns").get<std::vector<std::int64_t>>();
        const auto& b = e.at("batches");
        const auto size = b.at("size").get<std::vector<int>>();
        const auto freeNs = b.at("free_ns").get<std::vector<std::int64_t>>();
        const auto start = b.at("start_ns").get<std::vector<std::int64_t>>();
        const auto end = b.at("end_ns").get<std::vector<std::int64_t>>();
        if (freeNs.size() != size.size() || start.size() != size.size() || end.size() != size.size())
            throw std::runtime_error("serving.levels: batches.size, free_ns, start_ns and end_ns differ in length");
        for (std::size_t k = 0; k < size.size(); ++k)
            l.record.batches.push_back({size[k], freeNs[k], start[k], end[k]});
        if (l.record.served() > std::int64_t(l.record.arrival_ns.size()))
            throw std::runtime_error("serving.levels: more requests in batches than arrivals");
        out.push_back(std::move(l));
    }
    return out;
}

json servingComparisonsJson(const RunResult& run) {
    json out = json::array();
    for (const auto& c : compareServing(run))
        out.push_back({{"arm", run.arms[c.arm].name},
                       {"baseline", run.arms[c.baseline].name},
                       {"rate_per_s", c.rate_per_s},
                       {"clients", c.clients},
                       {"p99_ratio", c.p99_ratio},
                       {"p99_ci", {c.p99_lo, c.p99_hi}},
                       {"p50_ratio", c.p50_ratio},
                       {"p50_ci", {c.p50_lo, c.p50_hi}},
                       {"arm_saturated", c.arm_saturated},
                       {"baseline_saturated", c.baseline_saturated},
                       {"significant", c.significant},
                       {"text", c.text}});
    return out;
}

std::string servingTable(const RunResult& run) {
    std::ostringstream o;
    const bool closed = run.preset.serving.arrival == "closed";
    const bool slo = run.preset.serving.slo_p99_ms > 0;
    char line[320];
    // rate/s: the level asked for; offered/s: the arrivals its seeded process really scheduled
    // (Poisson counts vary); served/s: requests served over the level's wall time.
    std::snprintf(line, sizeof line, "%-14s %9s %9s %9s %9s %9s %9s %9s %9s %6s %6s %s\n", "arm",
                  closed ? "clients" : "rate/s", "offered/s", "served/s", "requests", "p50 ms", "p90 ms",
                  "p99 ms", "p99.9 ms", "batch", "queue", slo ? "SLO / state" : "state");
    o << line;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& arm = run.arms[i];
        const auto points = servingPoints(run, i);
        if (points.empty()) {
            o << arm.name << "  " << (arm.status == kOk ? "no level measured" : arm.status) << "\n";
            continue;
        }
        for (const auto& p : points) {
            const auto& s = p.pooled;
            // How many of the processes saturated, when not all (issue 27: "SATURATED" here
            // while the lesson said "saturated in 1 of 2 processes: inconclusive").
            int saturatedProcesses = 0;
            for (const auto& q : p.processes) saturatedProcesses += q.saturated ? 1 : 0;
            std::string state = s.saturated ? "SATURATED" : "ok";
            if (s.saturated && p.processes.size() > 1 &&
                saturatedProcesses < int(p.processes.size()))
                state += " (" + std::to_string(saturatedProcesses) + " of " +
                         std::to_string(p.processes.size()) + " processes)";
            if (slo && !s.saturated) state = p.meetsSlo() ? "meets" : "misses";
            if (slo) state += " (" + std::to_string(p.meeting_slo) + "/" + std::to_string(p.processes.size()) + ")";
            if (p.search) state += " search";
            std::snprintf(line, sizeof line, "%-14s %9s %9s %9s %9lld %9s %9s %9s %9s %6s %6lld %s\n",
                          arm.name.substr(0, 14).c_str(),
                          closed ? std::to_string(p.clients).c_str() : rateText(p.rate_per_s).c_str(),
                          rateText(s.offered_per_s).c_str(), rateText(s.achieved_per_s).c_str(),
                          static_cast<long long>(s.served),
                          fmt(s.p50_ms).c_str(), fmt(s.p90_ms).c_str(), fmt(s.p99_ms).c_str(),
                          fmt(s.p999_ms).c_str(), fmt(s.mean_batch, "%.2f").c_str(),
                          static_cast<long long>(s.max_queue), state.c_str());
            o << line;
        }
    }
    for (const auto& v : servingVerdict(run)) o << v << "\n";
    return o.str();
}

std::string servingRequestsCsv(const RunResult& run) {
    std::ostringstream o;
    o << "arm,process,worker,rate_per_s,clients,request,arrival_ns,batch_size,queue_wait_ns,"
         "formation_wait_ns,inference_ns,end_to_end_ns\n";
    for (const auto& arm : run.arms)
        for (const auto& l : arm.serving) {
            const auto times = serving::requestTimes(l.record);
            for (std::size_t r = 0; r < times.size(); ++r) {
                const auto& t = times[r];
                o << csvField(arm.name) << ',' << l.process << ',' << l.worker << ',' << l.rate_per_s << ','
                  << l.clients << ',' << r << ',' << l.record.arrival_ns[r] << ',' << t.batch_size << ','
                  << t.queue_wait << ',' << t.formation_wait << ',' << t.inference << ','
                  << t.end_to_end << '\n';
            }
        }
    return o.str();
}

}  // namespace pitlane::results

namespace pitlane::serving {

namespace {

// A field of the wrong type keeps the default.
template <typename T>
T fieldOr(const nlohmann::json& j, const char* key, T fallback) {
    try {
        return j.is_object() && j.contains(key) ? j.at(key).get<T>() : fallback;
    } catch (const std::exception&) {
        return fallback;
    }
}

}  // namespace

void to_json(nlohmann::json& j, const LoadSpec& l) {
    j = {{"arrival", arrivalName(l.arrival)},
         {"rate_per_s", l.rate_per_s},
         {"clients", l.clients},
         {"duration_ms", l.duration_ms},
         {"seed", l.seed},
         {"max_batch", l.max_batch},
         {"max_wait_ms", l.max_wait_ms},
         {"saturation_ms", l.saturation_ms},
         {"idle_wait", idleWaitName(l.idle)}};
}

void from_json(const nlohmann::json& j, LoadSpec& l) {
    l = LoadSpec{};
    parseArrival(fieldOr<std::string>(j, "arrival", "poisson"), &l.arrival);
    parseIdleWait(fieldOr<std::string>(j, "idle_wait", "sleep"), &l.idle);
    l.rate_per_s = fieldOr(j, "rate_per_s", l.rate_per_s);
    l.clients = fieldOr(j, "clients", l.clients);
    l.duration_ms = fieldOr(j, "duration_ms", l.duration_ms);
    l.seed = fieldOr(j, "seed", l.seed);
    l.max_batch = fieldOr(j, "max_batch", l.max_batch);
    l.max_wait_ms = fieldOr(j, "max_wait_ms", l.max_wait_ms);
    l.saturation_ms = fieldOr(j, "saturation_ms", l.saturation_ms);
}

}  // namespace pitlane::serving
