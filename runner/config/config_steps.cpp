#include "runner/config/config_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "runner/config/run_order.h"

namespace envgate {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> k_gate_keys = {"job", "timeout", "after"};
const std::vector<std::string> k_step_keys = {"run", "after"};
// A Lease holds whole seconds; no gate timeout below that either.
constexpr Duration k_min_timeout = std::chrono::seconds(1);

const std::vector<std::string> k_builtin_gates = {"pre-migrations", "post-migrations",
                                                  "batched-migrations-check"};
const std::vector<std::string> k_builtin_steps = {"diff", "deploy", "qa"};

// The keys of `map` that are plain names: check_keys then reports only duplicates and
// keys that are not names, since any name may be an added gate or step.
std::vector<std::string> scalar_keys(const YAML::Node& map) {
    std::vector<std::string> out;
    for (const auto& kv : map) {
        if (kv.first.IsScalar()) {
            out.push_back(kv.first.Scalar());
        }
    }
    return out;
}

// A name that starts with a letter and is a DNS-1123 label: it names Jobs and labels,
// and its CamelCase form names the gate's condition reasons (which start with a letter).
bool is_entry_name(const std::string& s) {
    if (s.empty() || s.size() > 63 || s[0] < 'a' || s[0] > 'z' || s.back() == '-') {
        return false;
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
}

// "; or did you mean the built-in gate "pre-migrations"?" when `name` is close to one.
std::string builtin_hint(const std::string& name, EntryKind kind) {
    const auto& builtins = kind == EntryKind::gate ? k_builtin_gates : k_builtin_steps;
    auto guess = did_you_mean(name, builtins);
    return guess ? fmt::format("; or did you mean the built-in {} \"{}\"?",
                               kind == EntryKind::gate ? "gate" : "step", *guess)
                 : "";
}

// Records an error and returns false unless `name` may name a gate or step of `kind`
// that envgate.yml adds.
bool check_added_name(const std::string& name, const YAML::Mark& mark, const std::string& field,
                      EntryKind kind, YamlFields& f) {
    if (!is_entry_name(name)) {
        f.error(
            mark, field,
            fmt::format("\"{}\" is not a valid name for a {} you add: lowercase letters, "
                        "digits and '-', starting with a letter, at most 63 (it names "
                        "Kubernetes Jobs, labels and report entries){}",
                        name, kind == EntryKind::gate ? "gate" : "step", builtin_hint(name, kind)));
        return false;
    }
    if (kind == EntryKind::gate && is_builtin_step(name)) {
        f.error(mark, field,
                fmt::format("\"{}\" is a built-in step: write it under `steps:`", name));
        return false;
    }
    if (kind == EntryKind::step && is_builtin_gate(name)) {
        f.error(mark, field,
                fmt::format("\"{}\" is a built-in gate: write it under `gates:`", name));
        return false;
    }
    const auto& reserved = reserved_step_names();
    if (std::find(reserved.begin(), reserved.end(), name) != reserved.end()) {
        f.error(mark, field,
                fmt::format("\"{}\" is reserved (the reports and the generated pipeline use it); "
                            "choose another name",
                            name));
        return false;
    }
    return true;
}

// Reads `after` into `into`: required for an added entry, refused for a built-in one.
bool read_after(const YAML::Node& node, const std::string& field, const std::string& name,
                EntryKind kind, bool builtin, YamlFields& f, std::optional<std::string>& into) {
    const char* what = kind == EntryKind::gate ? "gate" : "step";
    if (builtin) {
        if (node["after"]) {
            f.error(f.where(node["after"]), field + ".after",
                    fmt::format("\"{}\" is a built-in {}: its place in the run is fixed; `after` "
                                "is for the gates and steps you add",
                                name, what));
            return false;
        }
        return true;
    }
    if (!node["after"]) {
        f.error(f.where(node), field + ".after",
                fmt::format("missing; a {} you add names the step or gate it runs right after "
                            "(e.g. `after: deploy`){}",
                            what, builtin_hint(name, kind)));
        return false;
    }
    auto s = f.read_string(node["after"], field + ".after");
    if (s) {
        into = *s;
    }
    return s.has_value();
}

std::optional<GateSettings> read_gate(const YAML::Node& node, const std::string& field,
                                      const std::string& name, bool builtin, const fs::path& dir,
                                      YamlFields& f) {
    if (!node.IsMap()) {
        f.error(f.where(node), field,
                "expected a mapping with `job`" + std::string(builtin ? "" : " and `after`") +
                    ", got " + node_kind(node) +
                    (builtin ? "" : builtin_hint(name, EntryKind::gate)));
        return std::nullopt;
    }
    f.check_keys(node, field, k_gate_keys);
    GateSettings gate;
    bool ok = read_after(node, field, name, EntryKind::gate, builtin, f, gate.after);
    if (node["timeout"]) {  // none: the gate waits as long as the Job does
        auto d = f.read_duration(node["timeout"], field + ".timeout", k_min_timeout);
        gate.timeout = d;
    }
    if (!node["job"]) {
        f.error(f.where(node), field + ".job", "missing; the path of the Job manifest");
        return std::nullopt;
    }
    auto job = f.read_string(node["job"], field + ".job");
    if (!job) {
        return std::nullopt;
    }
    gate.job = resolve_config_path(dir, *job);
    std::error_code ec;
    if (job->empty() || !fs::is_regular_file(gate.job, ec)) {
        f.error(f.where(node["job"]), field + ".job",
                fmt::format("\"{}\" is not a file (looked for {})", *job, gate.job));
        return std::nullopt;
    }
    return ok ? std::optional(gate) : std::nullopt;
}

std::optional<StepSettings> read_step(const YAML::Node& node, const std::string& field,
                                      const std::string& name, bool builtin, YamlFields& f) {
    StepSettings step;
    if (node.IsScalar() && builtin) {
        auto run = f.read_string(node, field);
        if (!run) {
            return std::nullopt;
        }
        step.run = *run;
    } else if (node.IsMap()) {
        f.check_keys(node, field, k_step_keys);
        bool ok = read_after(node, field, name, EntryKind::step, builtin, f, step.after);
        if (!node["run"]) {
            f.error(f.where(node), field + ".run", "missing; the command to run");
            return std::nullopt;
        }
        auto run = f.read_string(node["run"], field + ".run");
        if (!run || !ok) {
            return std::nullopt;
        }
        step.run = *run;
    } else if (!builtin) {
        f.error(f.where(node), field,
                fmt::format("expected a mapping `{{ run: COMMAND, after: STEP }}` (a step you add "
                            "names where it runs), got {}{}",
                            node_kind(node), builtin_hint(name, EntryKind::step)));
        return std::nullopt;
    }
    if (step.run.empty()) {
        f.error(f.where(node), field,
                "expected a command (a non-empty string, or `{ run: COMMAND }`), got " +
                    node_kind(node));
        return std::nullopt;
    }
    return step;
}

void note_added(const std::string& name, const std::string& field, const YAML::Node& key,
                const YAML::Node& value, YamlFields& f, Config& config, AddedMarks& marks) {
    config.added.push_back(name);
    marks.key[name] = key.Mark();
    marks.after[name] = f.where(value["after"]);
    marks.field[name] = field;
}

}  // namespace

std::string resolve_config_path(const fs::path& dir, const std::string& relative) {
    fs::path p(relative);
    if (p.is_absolute() || dir.empty()) {
        return p.lexically_normal().string();
    }
    return (dir / p).lexically_normal().string();
}

void read_gates_section(const YAML::Node& node, const fs::path& dir, YamlFields& f, Config& config,
                        AddedMarks& marks) {
    if (!node.IsDefined() || !f.expect_map(node, "gates")) {
        return;
    }
    f.check_keys(node, "gates", scalar_keys(node));
    for (const auto& kv : node) {
        if (!kv.first.IsScalar() || config.gates.contains(kv.first.Scalar())) {
            continue;  // reported by check_keys
        }
        const std::string name = kv.first.Scalar();
        const std::string field = "gates." + name;
        bool builtin = is_builtin_gate(name);
        if (!builtin && !check_added_name(name, kv.first.Mark(), field, EntryKind::gate, f)) {
            continue;
        }
        if (!builtin) {
            marks.declared.insert(name);
        }
        if (auto g = read_gate(kv.second, field, name, builtin, dir, f)) {
            config.gates[name] = *g;
            if (!builtin) {
                note_added(name, field, kv.first, kv.second, f, config, marks);
            }
        }
    }
}

void read_steps_section(const YAML::Node& node, YamlFields& f, Config& config, AddedMarks& marks) {
    if (!node.IsDefined() || !f.expect_map(node, "steps")) {
        return;
    }
    f.check_keys(node, "steps", scalar_keys(node));
    for (const auto& kv : node) {
        if (!kv.first.IsScalar() || config.steps.contains(kv.first.Scalar())) {
            continue;
        }
        const std::string name = kv.first.Scalar();
        const std::string field = "steps." + name;
        bool builtin = is_builtin_step(name);
        if (!builtin && !check_added_name(name, kv.first.Mark(), field, EntryKind::step, f)) {
            continue;
        }
        marks.declared.insert(name);
        if (!builtin && config.gates.contains(name)) {
            f.error(kv.first.Mark(), field,
                    fmt::format("\"{}\" is already a gate (gates.{}); a name is a gate or a "
                                "step, not both",
                                name, name));
            continue;
        }
        if (auto s = read_step(kv.second, field, name, builtin, f)) {
            config.steps[name] = *s;
            if (!builtin) {
                note_added(name, field, kv.first, kv.second, f, config, marks);
            }
        }
    }
}

namespace {

// Follows the `after` chain from `name`; true when it ends at a built-in entry (or at
// an added one that had its own error), false on a cycle, which `chain` then lists.
bool reaches_builtin(const Config& config, const std::string& name,
                     std::vector<std::string>& chain) {
    std::string at = name;
    while (true) {
        if (std::find(chain.begin(), chain.end(), at) != chain.end()) {
            chain.push_back(at);
            return false;
        }
        chain.push_back(at);
        const std::optional<std::string>* after = nullptr;
        if (auto g = config.gates.find(at); g != config.gates.end()) {
            after = &g->second.after;
        } else if (auto s = config.steps.find(at); s != config.steps.end()) {
            after = &s->second.after;
        }
        if (after == nullptr || !after->has_value()) {
            return true;
        }
        at = **after;
    }
}

std::string join_chain(const std::vector<std::string>& chain) {
    std::string out;
    for (const auto& s : chain) {
        out += (out.empty() ? "" : " -> ") + s;
    }
    return out;
}

}  // namespace

void check_added_entries(Config& config, const AddedMarks& marks, YamlFields& f) {
    std::vector<std::string> known = builtin_run_order();
    known.insert(known.end(), marks.declared.begin(), marks.declared.end());
    std::set<std::string> in_cycle;
    for (const std::string& name : config.added) {
        const std::string field = marks.field.at(name) + ".after";
        const YAML::Mark at = marks.after.at(name);
        const GateSettings* g = config.gates.contains(name) ? &config.gates.at(name) : nullptr;
        const std::string after = g ? *g->after : *config.steps.at(name).after;
        if (after == name) {
            f.error(at, field, fmt::format("\"{}\" cannot run after itself", name));
        } else if (std::find(known.begin(), known.end(), after) == known.end()) {
            auto guess = did_you_mean(after, known);
            std::string all;
            for (const auto& k : known) {
                all += (all.empty() ? "" : ", ") + k;
            }
            f.error(at, field,
                    fmt::format("\"{}\" is not a gate or step{}", after,
                                guess ? fmt::format("; did you mean \"{}\"?", *guess)
                                      : "; the gates and steps are: " + all));
        } else if (std::vector<std::string> chain;
                   !reaches_builtin(config, name, chain) && !in_cycle.contains(name)) {
            in_cycle.insert(chain.begin(), chain.end());
            f.error(at, field,
                    fmt::format("the `after` of the gates and steps you add form a cycle ({}); "
                                "one of them must run after a built-in step or gate",
                                join_chain(chain)));
        }
    }
    std::stable_sort(config.added.begin(), config.added.end(),
                     [&marks](const std::string& a, const std::string& b) {
                         return marks.key.at(a).pos < marks.key.at(b).pos;
                     });
}

}  // namespace envgate
