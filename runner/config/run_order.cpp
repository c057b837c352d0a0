#include "runner/config/run_order.h"

#include <fmt/format.h>

#include "gates/gate.h"
#include "runner/config/config_yaml.h"

namespace envgate {
namespace {

// Appends the entries of `config` that run after `name` (and those after them).
// `depth` bounds a cycle load_config would have rejected.
void place_after(const Config& config, const std::string& name, std::vector<RunEntry>& out,
                 size_t depth) {
    if (depth > config.added.size()) {
        return;
    }
    for (const std::string& added : config.added) {
        auto gate = config.gates.find(added);
        auto step = config.steps.find(added);
        const std::optional<std::string>* after = nullptr;
        if (gate != config.gates.end()) {
            after = &gate->second.after;
        } else if (step != config.steps.end()) {
            after = &step->second.after;
        }
        if (after == nullptr || !after->has_value() || **after != name) {
            continue;
        }
        out.push_back(
            {added, gate != config.gates.end() ? EntryKind::gate : EntryKind::step, false});
        place_after(config, added, out, depth + 1);
    }
}

}  // namespace

const std::vector<std::string>& builtin_run_order() {
    static const std::vector<std::string> k_order = {
        "diff", "pre-migrations", "deploy", "post-migrations", "batched-migrations-check", "qa"};
    return k_order;
}

bool is_builtin_gate(std::string_view name) {
    return gates::gate_from_name(name).has_value();
}

bool is_builtin_step(std::string_view name) {
    return name == "diff" || name == "deploy" || name == "qa";
}

const std::vector<std::string>& reserved_step_names() {
    static const std::vector<std::string> k_reserved = {"lock", "run", "release", "fail"};
    return k_reserved;
}

std::vector<RunEntry> run_order(const Config& config) {
    std::vector<RunEntry> out;
    for (const std::string& name : builtin_run_order()) {
        bool gate = is_builtin_gate(name);
        if (gate ? config.gates.contains(name) : config.steps.contains(name)) {
            out.push_back({name, gate ? EntryKind::gate : EntryKind::step, true});
        }
        place_after(config, name, out, 0);
    }
    return out;
}

std::string describe_run_order(const std::vector<RunEntry>& order) {
    std::string out;
    for (const RunEntry& e : order) {
        out += (out.empty() ? "" : " -> ") + e.name;
    }
    return out.empty() ? "(no gates or steps)" : out;
}

Result<gates::Gate> resolve_gate(const std::string& name, const Config* config) {
    if (auto builtin = gates::gate_from_name(name)) {
        return *builtin;
    }
    if (config != nullptr && config->gates.contains(name)) {
        return gates::custom_gate(name);
    }
    std::vector<std::string> known;
    for (const auto& g : gates::builtin_gates()) {
        known.push_back(g.name());
    }
    for (const std::string& added :
         config != nullptr ? config->added : std::vector<std::string>{}) {
        if (config->gates.contains(added)) {
            known.push_back(added);
        }
    }
    std::string message = fmt::format("--gate \"{}\": not a gate", name);
    if (auto guess = did_you_mean(name, known)) {
        message += fmt::format("; did you mean \"{}\"?", *guess);
    } else {
        std::string all;
        for (const auto& k : known) {
            all += (all.empty() ? "" : ", ") + k;
        }
        message += " (" + all + ")";
    }
    if (config == nullptr) {
        message += "; the gates a config adds are read from it: give --config envgate.yml";
    } else {
        message += fmt::format(" in {}", config->path);
    }
    return Status(Code::invalid, message);
}

}  // namespace envgate
