#pragma once
// Internal to spec/src: the error collector of preset validation (preset.cpp, arm_models.cpp).
#include "pitlane/spec/preset.h"

#include <string>
#include <vector>

namespace pitlane::spec::detail {

// Parsing goes on past an error wherever the rest does not depend on it; every SpecError is
// collected here. parsePreset throws the first (the one it always threw), validatePreset returns
// them all.
class Errors {
public:
    explicit Errors(std::string where) : where_(std::move(where)) {}
    void add(const std::string& field, const std::string& reason) {
        list_.emplace_back(where_, field, reason);
    }
    // Runs `f`; false when it raised a SpecError (collected) or a JSON type error (collected as
    // a SpecError on `field`).
    template <class F>
    bool step(const std::string& field, F&& f) {
        try {
            f();
            return true;
        } catch (const SpecError& e) {
            list_.push_back(e);
        } catch (const json::exception& e) {
            add(field, e.what());
        }
        return false;
    }
    const std::string& where() const { return where_; }
    std::vector<SpecError>& list() { return list_; }

private:
    std::string where_;
    std::vector<SpecError> list_;
};

}  // namespace pitlane::spec::detail
