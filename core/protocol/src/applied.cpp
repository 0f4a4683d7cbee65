// The applied event's read-back (applied.h): typed by its table, the rest kept as sent.
#include "pitlane/protocol/applied.h"

#include <set>

namespace pitlane::protocol {

namespace {

const std::set<std::string>& typedNames() {
    static const std::set<std::string> names = [] {
        std::set<std::string> n;
        record::forEachField<Applied>([&](const auto& f) { n.insert(f.name); });
        return n;
    }();
    return names;
}

}  // namespace

Applied appliedFromFields(const json& fields) {
    Applied a;
    if (!fields.is_object()) return a;
    record::forEachField<Applied>([&](const auto& f) {
        const auto it = fields.find(f.name);
        if (it == fields.end()) return;
        try {
            record::detail::get(fields, f.name, f.of(a));
        } catch (const std::exception&) {
            f.of(a).reset();  // the wrong type: kept as sent, not typed
            a.extra[f.name] = *it;
            return;
        }
        json back = json::object();
        record::detail::put(back, f.name, f.of(a));
        if (!back.contains(f.name) || back[f.name].dump() != it->dump()) a.extra[f.name] = *it;
    });
    for (const auto& [key, v] : fields.items())
        if (!typedNames().count(key)) a.extra[key] = v;
    return a;
}

json appliedFields(const Applied& a) {
    json j = record::toJson(a);
    for (const auto& [key, v] : a.extra.items()) j[key] = v;
    return j;
}

bool Applied::empty() const { return appliedFields(*this).empty(); }

const json& Applied::extraField(const char* key) const {
    static const json none;
    const auto it = extra.find(key);
    return it == extra.end() ? none : *it;
}

bool operator==(const Applied& a, const Applied& b) { return record::equal(a, b) && a.extra == b.extra; }

}  // namespace pitlane::protocol
