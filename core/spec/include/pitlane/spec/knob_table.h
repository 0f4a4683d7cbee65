#pragma once
// The one table of knobs: every knob of an arm is one row here. The row drives parsing and
// validation (spec::parseKnobs: each bad value gets a SpecError naming the field and what is
// accepted), the knobs JSON in and out (knobsToJson), the window's controls (widgets::KnobForm
// builds one control per row, grouped and ordered as here, with the row's label, help and the
// reason it is disabled), `pitlane-cli knobs` and the generated table of docs/KNOBS.md (a test
// fails when the doc and the table differ). Adding a knob: a field in spec::Knobs, a row in
// knob_table.cpp (a choice knob: also its enum in knob_choices.h, values in the row's order),
// its apply/read-back in core/engine, a test. No Qt, no torch.
#include "pitlane/spec/preset.h"

#include <string>
#include <vector>

namespace pitlane::spec {

enum class KnobKind {
    Choice,         // one of `choices`
    Device,         // "cpu" or "cuda:N"
    Bool,           // true / false
    TorchBool,      // true / false, or absent: torch's own default is left alone
    Count,          // an integer in [min, max]
    OptionalCount,  // an integer in [min, max], or absent (`default_text` says what then)
    CountOrList,    // an integer in [min, max], or a list of distinct ones (a sweep)
    ChoiceOrCores,  // one of `choices`, or a list of distinct core ids in [min, max]
    Flags,          // an object of booleans named by `choices` (`inductor`); a name left out
                    // keeps its default (`defaultValue`, the whole object)
};

struct KnobInfo {
    std::string name;  // as in presets (CONTRACT.md)
    KnobKind kind;
    std::vector<std::string> choices;       // Choice, ChoiceOrCores, Device (the entries offered)
    std::vector<std::string> cudaChoices;   // the choices that need CUDA
    int min = 1, max = 1;                   // Count, OptionalCount, CountOrList, core ids
    json defaultValue;                      // null: absent, torch's default
    std::string defaultText;                // the default in words
    std::string unit;                       // "threads", "processes", "" ...
    std::string group;                      // the window's section
    bool cudaOnly = false;                  // changes nothing without CUDA
    std::string label;                      // the window's label
    std::string help;                       // one line: what it does, how it is applied
    std::string unavailable;                // why it cannot apply (CUDA-only, on a CPU machine)
    // The value, already validated, into the struct; and back (null: absent from the JSON).
    void (*set)(Knobs&, const json&) = nullptr;
    json (*get)(const Knobs&) = nullptr;
};

// Every knob, in the window's order.
const std::vector<KnobInfo>& knobTable();
// nullptr for an unknown name.
const KnobInfo* findKnob(const std::string& name);
// The window's sections, in order (each row's `group` is one of them).
const std::vector<std::string>& knobGroups();

// Checks `v` against the row: returns it normalized (as knobsToJson writes it) or throws
// SpecError(where, field, reason). Combinations of knobs are checked by parseKnobs.
json validateKnob(const KnobInfo& knob, const json& v, const std::string& where,
                  const std::string& field);

// "a, b, c" / "integer 1..4096" / "cpu, cuda:N": the accepted values in words.
std::string knobValuesText(const KnobInfo& knob);

// An arm's knobs as requested, told apart from the defaults (results::ArmResult): the knobs the
// arm wrote, so that the results JSON, the history and the advice list those alone, as written.
struct WrittenKnobs {
    std::vector<std::string> names;  // written knobs the table writes back as written
    // Written entries the table does not write back as written: an unknown knob or a value this
    // build refuses (a run stored by another build), a one-size batch_size list ([4]).
    json verbatim = json::object();
    bool operator==(const WrittenKnobs& o) const { return names == o.names && verbatim == o.verbatim; }
    bool operator!=(const WrittenKnobs& o) const { return !(*this == o); }
    bool contains(const std::string& name) const;
};
// Knobs read leniently from stored JSON (a results JSON, the history, a preset's arm): each known
// knob with a valid value is set; `written` says which were written and keeps every other entry.
// Never throws: a combination of knobs today's rules refuse is kept as it was measured.
Knobs readWrittenKnobs(const json& j, WrittenKnobs* written);
// `k`'s knobs in w.names (as the table writes them), then w.verbatim: the knobs as written.
json writtenKnobsJson(const Knobs& k, const WrittenKnobs& w);
// Whether two sets of knobs are equal (every row of the table).
bool sameKnobs(const Knobs& a, const Knobs& b);
inline bool operator==(const Knobs& a, const Knobs& b) { return sameKnobs(a, b); }
inline bool operator!=(const Knobs& a, const Knobs& b) { return !sameKnobs(a, b); }

// The generated section of docs/KNOBS.md: a Markdown table, one row per knob.
std::string knobTableMarkdown();

}  // namespace pitlane::spec
