// Validation of a lesson's checks (lesson.h).
#include "pitlane/spec/lesson.h"
#include "text_util.h"

#include <algorithm>

namespace pitlane::spec {

namespace {

using detail::joined;

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

void armField(const json& c, const char* key, const std::vector<ArmSpec>& arms,
              const std::string& where, const std::string& f) {
    if (!c.contains(key) || !c[key].is_string())
        throw SpecError(where, f + "." + key, "missing: the name of an arm of this preset");
    const auto name = c[key].get<std::string>();
    std::vector<std::string> names;
    for (const auto& a : arms) names.push_back(a.name);
    if (!has(names, name))
        throw SpecError(where, f + "." + key,
                        "no arm is called \"" + detail::shown(name) + "\" (arms: " + joined(names) + ")");
}

void ratioField(const json& c, const char* key, const std::string& where, const std::string& f) {
    if (!c.contains(key)) return;
    if (!c[key].is_number() || c[key].get<double>() < 1.0)
        throw SpecError(where, f + "." + key, "expected a ratio >= 1, got " + detail::shown(c[key]));
}

void validateCheck(const json& c, const std::vector<ArmSpec>& arms, const std::string& where,
                   const std::string& f) {
    if (!c.is_object()) throw SpecError(where, f, "expected an object with a \"kind\"");
    const std::string kind = c.value("kind", std::string());
    if (!has(lessonCheckKinds(), kind))
        throw SpecError(where, f + ".kind",
                        "unknown check \"" + detail::shown(kind) + "\" (expected one of " +
                            joined(lessonCheckKinds()) + ")");
    armField(c, "arm", arms, where, f);
    if (kind == "faster" || kind == "similar" || kind == "lower" || kind == "higher")
        armField(c, "than", arms, where, f);
    if (c.contains("than") && c["than"] == c["arm"])
        throw SpecError(where, f + ".than", "an arm is compared with itself");
    ratioField(c, "min_ratio", where, f);
    ratioField(c, "within", where, f);
    if (kind == "lower" || kind == "higher") {
        const std::string m = c.value("metric", std::string());
        if (!has(lessonMetricNames(), m))
            throw SpecError(where, f + ".metric",
                            "unknown metric \"" + detail::shown(m) + "\" (expected one of " +
                                joined(lessonMetricNames()) + ")");
    }
    if (kind == "applied") {
        if (!c.contains("field") || !c["field"].is_string() || c["field"].get<std::string>().empty())
            throw SpecError(where, f + ".field",
                            "missing: a read-back field of the applied event, e.g. "
                            "\"grad_state.output_is_inference\"");
        if (!c.contains("equals")) throw SpecError(where, f + ".equals", "missing: the value expected");
    }
    if ((kind == "saturated" || kind == "keeps_up") &&
        (!c.contains("rate") || !c["rate"].is_number() || !(c["rate"].get<double>() > 0)))
        throw SpecError(where, f + ".rate", "expected an offered rate (requests/s) of serving.rates");
    if (kind == "throughput_grows")
        for (const char* key : {"from", "to"})
            if (!c.contains(key) || !c[key].is_number_integer() || c[key].get<int>() < 1)
                throw SpecError(where, f + "." + key, "expected a batch size of the arm's sweep");
}

}  // namespace

void validateLesson(const json& lesson, const std::vector<ArmSpec>& arms, const std::string& where) {
    if (lesson.is_null()) return;
    if (!lesson.is_object()) throw SpecError(where, "lesson", "expected an object (title, text, ...)");
    for (const char* key : {"title", "text", "claim", "expect", "needs"})
        if (lesson.contains(key) && !lesson[key].is_string())
            throw SpecError(where, std::string("lesson.") + key, "expected a string");
    if (lesson.contains("needs") && lesson["needs"] != "cuda")
        throw SpecError(where, "lesson.needs", "expected \"cuda\" (the only requirement known)");
    if (!lesson.contains("checks")) return;
    const auto& checks = lesson["checks"];
    if (!checks.is_array()) throw SpecError(where, "lesson.checks", "expected a list of checks");
    for (std::size_t i = 0; i < checks.size(); ++i)
        validateCheck(checks[i], arms, where, "lesson.checks[" + std::to_string(i) + "]");
}

}  // namespace pitlane::spec
