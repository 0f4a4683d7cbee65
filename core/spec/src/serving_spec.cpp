// The `serving` block of a preset (issue 13): arrival process, offered rates or clients, level
// duration, the optional p99 SLO and its search. Each field is checked on its own; every error
// names "serving.<field>".
#include "pitlane/spec/preset.h"
#include "text_util.h"

#include <set>

namespace pitlane::spec {

namespace {

constexpr std::size_t kMaxLevels = 64;

double number(const json& s, const char* key, double def, double lo, double hi,
              const std::string& where, const std::string& unit) {
    if (!s.contains(key)) return def;
    const auto& v = s[key];
    const std::string f = std::string("serving.") + key;
    if (!v.is_number()) throw SpecError(where, f, "expected a number of " + unit + ", got " + detail::shown(v));
    const double x = v.get<double>();
    if (!(x >= lo && x <= hi))
        throw SpecError(where, f, "must be between " + json(lo).dump() + " and " + json(hi).dump() +
                                      " " + unit + ", got " + detail::shown(v));
    return x;
}

std::string choice(const json& s, const char* key, const std::string& def,
                   const std::set<std::string>& allowed, const std::string& where) {
    if (!s.contains(key)) return def;
    const auto& v = s[key];
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    if (!v.is_string() || !allowed.count(v.get<std::string>()))
        throw SpecError(where, std::string("serving.") + key, "expected one of " + list + ", got " + detail::shown(v));
    return v.get<std::string>();
}

// A non-empty ascending list of distinct numbers in [lo, hi] (a single number is a list of one).
template <class T>
std::vector<T> ascending(const json& v, const std::string& f, double lo, double hi,
                         const std::string& where, const std::string& what) {
    const json list = v.is_array() ? v : json::array({v});
    if (list.empty()) throw SpecError(where, f, "needs at least one " + what);
    if (list.size() > kMaxLevels)
        throw SpecError(where, f, "has " + std::to_string(list.size()) + " levels; at most " +
                                      std::to_string(kMaxLevels));
    std::vector<T> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& x = list[i];
        const std::string fi = f + "[" + std::to_string(i) + "]";
        const bool ok = std::is_integral<T>::value ? x.is_number_integer() : x.is_number();
        if (!ok || !(x.get<double>() >= lo && x.get<double>() <= hi))
            throw SpecError(where, fi, "expected " + what + " between " + json(lo).dump() + " and " +
                                           json(hi).dump() + ", got " + detail::shown(x));
        if (!out.empty() && !(x.get<T>() > out.back()))
            throw SpecError(where, fi, "list the levels in ascending order, each once (" +
                                           detail::shown(x) + " after " + json(out.back()).dump() + ")");
        out.push_back(x.get<T>());
    }
    return out;
}

}  // namespace

ServingSpec parseServing(const json& s, const std::string& where, std::vector<SpecError>& errors) {
    ServingSpec out;
    if (!s.is_object()) {
        errors.emplace_back(where, "serving", "expected an object (arrival, rates or clients, duration_ms, ...)");
        return out;
    }
    out.enabled = true;
    static const std::set<std::string> keys = {"arrival", "rates", "clients", "duration_ms",
                                               "slo_p99_ms", "search_steps", "idle_wait",
                                               "saturation_ms"};
    for (const auto& [key, v] : s.items())
        if (!keys.count(key))
            errors.emplace_back(where, "serving." + detail::shown(key),
                                "unknown field (expected arrival, rates, clients, duration_ms, "
                                "slo_p99_ms, search_steps, idle_wait, saturation_ms)");
    auto step = [&](auto&& f) {
        try {
            f();
        } catch (const SpecError& e) {
            errors.push_back(e);
        }
    };
    bool arrivalOk = true;
    try {
        out.arrival = choice(s, "arrival", out.arrival, {"poisson", "constant", "closed"}, where);
    } catch (const SpecError& e) {
        errors.push_back(e);
        arrivalOk = false;
    }
    const bool closed = out.arrival == "closed";
    if (arrivalOk && closed) {
        if (s.contains("rates"))
            errors.emplace_back(where, "serving.rates",
                                "a closed loop has no offered rate: give clients (its concurrencies)");
        if (!s.contains("clients"))
            errors.emplace_back(where, "serving.clients",
                                "missing: the closed loop needs clients, e.g. [1, 4, 16]");
        else
            step([&] { out.clients = ascending<int>(s["clients"], "serving.clients", 1, 4096, where, "a client count"); });
    } else if (arrivalOk) {
        if (s.contains("clients"))
            errors.emplace_back(where, "serving.clients",
                                "clients is for arrival \"closed\"; an open loop takes rates");
        if (!s.contains("rates"))
            errors.emplace_back(where, "serving.rates",
                                "missing: give the offered rates in requests/s, e.g. [50, 100, 200]");
        else
            step([&] { out.rates = ascending<double>(s["rates"], "serving.rates", 0.01, 1e6, where, "a rate in requests/s"); });
    }
    step([&] { out.duration_ms = number(s, "duration_ms", out.duration_ms, 100, 600000, where, "ms"); });
    step([&] { out.slo_p99_ms = number(s, "slo_p99_ms", 0, 0.001, 600000, where, "ms"); });
    step([&] {
        if (!s.contains("search_steps")) return;
        const auto& v = s["search_steps"];
        if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 20)
            throw SpecError(where, "serving.search_steps", "expected an integer 0..20, got " + detail::shown(v));
        out.search_steps = v.get<int>();
    });
    step([&] { out.idle_wait = choice(s, "idle_wait", out.idle_wait, {"sleep", "spin"}, where); });
    step([&] { out.saturation_ms = number(s, "saturation_ms", out.saturation_ms, 10, 600000, where, "ms"); });
    if (closed && s.contains("slo_p99_ms") && s.contains("search_steps") && out.search_steps > 0)
        errors.emplace_back(where, "serving.search_steps",
                            "the SLO search varies the offered rate: it needs an open loop "
                            "(arrival poisson or constant)");
    return out;
}

json servingToJson(const ServingSpec& s) {
    if (!s.enabled) return nullptr;
    json j = {{"arrival", s.arrival}, {"duration_ms", s.duration_ms}, {"idle_wait", s.idle_wait},
              {"saturation_ms", s.saturation_ms}};
    if (s.arrival == "closed")
        j["clients"] = s.clients;
    else
        j["rates"] = s.rates;
    if (s.slo_p99_ms > 0) j["slo_p99_ms"] = s.slo_p99_ms;
    if (s.arrival != "closed") j["search_steps"] = s.search_steps;
    return j;
}

}  // namespace pitlane::spec
