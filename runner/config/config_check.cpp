#include "runner/config/config_check.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>

namespace envgate {
namespace {

// The global lock every QA step takes (spec/locks.md); an environment of that name
// would share it.
constexpr std::string_view k_reserved_qa = "qa";

void check_names(const std::vector<Environment>& envs, const std::vector<EnvironmentMarks>& marks,
                 YamlFields& fields) {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < envs.size(); ++i) {
        const std::string& name = envs[i].name;
        const std::string field = fmt::format("environments[{}].name", i);
        if (marks[i].name.is_null()) {
            continue;  // missing: already reported
        }
        if (!is_dns1123_label(name)) {
            fields.error(marks[i].name, field,
                         fmt::format("\"{}\" is not a DNS-1123 label (lowercase letters, digits "
                                     "and '-', starting and ending with a letter or digit, at "
                                     "most 63)",
                                     name));
        } else if (name == k_reserved_qa) {
            fields.error(marks[i].name, field,
                         "\"qa\" is reserved for the global QA lock; choose another name");
        } else if (auto [it, added] = first.emplace(name, i); !added) {
            fields.error(
                marks[i].name, field,
                fmt::format("\"{}\" is already the name of environments[{}]", name, it->second));
        }
    }
}

std::vector<std::string> all_names(const std::vector<Environment>& envs) {
    std::vector<std::string> names;
    for (const auto& e : envs) {
        names.push_back(e.name);
    }
    return names;
}

std::optional<size_t> index_of(const std::vector<Environment>& envs, const std::string& name) {
    for (size_t i = 0; i < envs.size(); ++i) {
        if (envs[i].name == name) {
            return i;
        }
    }
    return std::nullopt;
}

// Reports every `after` item that names no environment; returns whether all resolved.
bool check_after_refs(const std::vector<Environment>& envs,
                      const std::vector<EnvironmentMarks>& marks, YamlFields& fields) {
    bool ok = true;
    const auto names = all_names(envs);
    for (size_t i = 0; i < envs.size(); ++i) {
        for (size_t k = 0; k < envs[i].after.size() && k < marks[i].after.size(); ++k) {
            const std::string& ref = envs[i].after[k];
            if (index_of(envs, ref)) {
                continue;
            }
            ok = false;
            auto guess = did_you_mean(ref, names);
            fields.error(marks[i].after[k], fmt::format("environments[{}].after[{}]", i, k),
                         fmt::format("\"{}\" is not an environment of this file{}", ref,
                                     guess ? fmt::format("; did you mean \"{}\"?", *guess) : ""));
        }
    }
    return ok;
}

enum class Visit { unseen, active, done };

struct CycleSearch {
    const std::vector<Environment>& envs;
    std::vector<Visit> state;
    std::vector<size_t> stack;

    // Depth-first along `after`; returns the (env, item) edge that closes a cycle.
    std::optional<std::pair<size_t, size_t>> from(size_t i) {
        state[i] = Visit::active;
        stack.push_back(i);
        for (size_t k = 0; k < envs[i].after.size(); ++k) {
            size_t j = *index_of(envs, envs[i].after[k]);
            if (state[j] == Visit::active) {
                stack.push_back(j);
                return std::pair{i, k};
            }
            if (state[j] == Visit::unseen) {
                if (auto found = from(j)) {
                    return found;
                }
            }
        }
        stack.pop_back();
        state[i] = Visit::done;
        return std::nullopt;
    }
};

void check_after_cycle(const std::vector<Environment>& envs,
                       const std::vector<EnvironmentMarks>& marks, YamlFields& fields) {
    CycleSearch search{envs, std::vector<Visit>(envs.size(), Visit::unseen), {}};
    for (size_t start = 0; start < envs.size(); ++start) {
        if (search.state[start] != Visit::unseen) {
            continue;
        }
        auto found = search.from(start);
        if (!found) {
            continue;
        }
        // The stack ends with the repeated environment; print from its first visit.
        size_t closing = search.stack.back();
        std::string path;
        bool in_cycle = false;
        for (size_t n : search.stack) {
            in_cycle = in_cycle || n == closing;
            if (in_cycle) {
                path += (path.empty() ? "" : " -> ") + envs[n].name;
            }
        }
        auto [i, k] = *found;
        fields.error(marks[i].after[k], fmt::format("environments[{}].after[{}]", i, k),
                     fmt::format("promotion order has a cycle: {}", path));
        return;  // one cycle is enough to fix; others show on the next run
    }
}

}  // namespace

void check_environments(const std::vector<Environment>& environments,
                        const std::vector<EnvironmentMarks>& marks, YamlFields& fields) {
    check_names(environments, marks, fields);
    for (size_t i = 0; i < environments.size(); ++i) {
        if (environments[i].after.size() != marks[i].after.size()) {
            return;  // an `after` list failed to read; its error is already reported
        }
    }
    if (check_after_refs(environments, marks, fields)) {
        check_after_cycle(environments, marks, fields);
    }
}

std::string unknown_environment_hint(const Config& config, const std::string& name) {
    std::vector<std::string> names;
    for (const auto& env : config.environments) {
        names.push_back(env.name);
    }
    if (auto guess = did_you_mean(name, names)) {
        return fmt::format("; did you mean \"{}\"?", *guess);
    }
    std::string all;
    for (const auto& n : names) {
        all += (all.empty() ? "" : ", ") + n;
    }
    return "; the environments are: " + all;
}

}  // namespace envgate
