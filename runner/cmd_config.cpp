#include "runner/cmd_config.h"

#include <yaml-cpp/yaml.h>

#include <ostream>

#include "runner/base/exit_status.h"
#include "runner/base/files.h"
#include "runner/base/utf8.h"
#include "runner/config/run_order.h"
#include "runner/gating/manifest.h"

namespace envgate {
namespace {

// "2h", "1h30m", "90s" -> "1m30s": like envgate.yml is written, zero parts left out.
std::string short_duration(Duration d) {
    using namespace std::chrono;
    if (d % seconds(1) != Duration{0}) {
        return std::to_string(duration_cast<milliseconds>(d).count()) + "ms";
    }
    const long total = static_cast<long>(duration_cast<seconds>(d).count());
    const long parts[] = {total / 86400, total % 86400 / 3600, total % 3600 / 60, total % 60};
    const char* units[] = {"d", "h", "m", "s"};
    std::string out;
    for (size_t i = 0; i < 4; ++i) {
        if (parts[i] != 0) {
            out += std::to_string(parts[i]) + units[i];
        }
    }
    return out.empty() ? "0s" : out;
}

void emit_list(YAML::Emitter& y, const char* key, const std::vector<std::string>& items) {
    y << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& s : items) {
        y << s;
    }
    y << YAML::EndSeq;
}

void emit_lock(YAML::Emitter& y, const LockSettings& lock) {
    y << YAML::Key << "lock" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "store" << YAML::Value << lock_store_name(lock.store);
    if (lock.store == LockStoreKind::file) {
        y << YAML::Key << "path" << YAML::Value << lock.path;
    } else {
        y << YAML::Key << "namespace" << YAML::Value << lock.namespace_;
    }
    y << YAML::Key << "on_failure" << YAML::Value << locks::on_failure_name(lock.on_failure);
    y << YAML::Key << "order" << YAML::Value << locks::order_name(lock.order);
    y << YAML::Key << "wait_timeout" << YAML::Value << short_duration(lock.wait_timeout);
    y << YAML::Key << "lease_duration" << YAML::Value << short_duration(lock.lease_duration);
    y << YAML::Key << "hold_for" << YAML::Value << short_duration(lock.hold_for);
    y << YAML::EndMap;
}

void emit_environment(YAML::Emitter& y, const Environment& env) {
    y << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value << env.name;
    y << YAML::Key << "namespace" << YAML::Value << env.namespace_;
    if (env.kube_context) {
        y << YAML::Key << "kube_context" << YAML::Value << *env.kube_context;
    }
    emit_list(y, "paths", env.paths);
    emit_list(y, "after", env.after);
    emit_lock(y, env.lock);
    emit_list(y, "unlockers", env.unlockers);
    y << YAML::EndMap;
}

void emit_gates_and_steps(YAML::Emitter& y, const Config& config) {
    if (!config.gates.empty()) {
        y << YAML::Key << "gates" << YAML::Value << YAML::BeginMap;
        for (const auto& [name, gate] : config.gates) {
            y << YAML::Key << name << YAML::Value << YAML::BeginMap;
            y << YAML::Key << "job" << YAML::Value << gate.job;
            if (gate.timeout) {
                y << YAML::Key << "timeout" << YAML::Value << short_duration(*gate.timeout);
            }
            if (gate.after) {
                y << YAML::Key << "after" << YAML::Value << *gate.after;
            }
            y << YAML::EndMap;
        }
        y << YAML::EndMap;
    }
    if (!config.steps.empty()) {
        y << YAML::Key << "steps" << YAML::Value << YAML::BeginMap;
        for (const auto& [name, step] : config.steps) {
            y << YAML::Key << name << YAML::Value;
            if (!step.after) {
                y << YAML::DoubleQuoted << step.run;
                continue;
            }
            y << YAML::BeginMap << YAML::Key << "run" << YAML::Value << YAML::DoubleQuoted
              << step.run << YAML::Key << "after" << YAML::Value << *step.after << YAML::EndMap;
        }
        y << YAML::EndMap;
    }
}

void emit_ci(YAML::Emitter& y, const CiSettings& ci) {
    if (!ci.has_defaults() && ci.deployment_tiers.empty() && ci.deploy_branches.empty() &&
        !ci.deploy_protected) {
        return;
    }
    y << YAML::Key << "ci" << YAML::Value << YAML::BeginMap;
    if (!ci.tags.empty()) {
        emit_list(y, "tags", ci.tags);
    }
    if (ci.interruptible) {
        y << YAML::Key << "interruptible" << YAML::Value << *ci.interruptible;
    }
    if (ci.timeout) {
        y << YAML::Key << "timeout" << YAML::Value << short_duration(*ci.timeout);
    }
    if (!ci.deployment_tiers.empty()) {
        y << YAML::Key << "deployment_tiers" << YAML::Value << YAML::BeginMap;
        for (const auto& [env, tier] : ci.deployment_tiers) {
            y << YAML::Key << env << YAML::Value << tier;
        }
        y << YAML::EndMap;
    }
    if (ci.deploy_protected) {
        y << YAML::Key << "deploy_branches" << YAML::Value << "protected";
    } else if (!ci.deploy_branches.empty()) {
        emit_list(y, "deploy_branches", ci.deploy_branches);
    }
    y << YAML::EndMap;
}

void emit_gitlab(YAML::Emitter& y, const GitLabServer& gitlab) {
    if (gitlab.url.empty()) {
        return;
    }
    y << YAML::Key << "gitlab" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "url" << YAML::Value << gitlab.url;
    if (!gitlab.ca_file.empty()) {
        y << YAML::Key << "ca_file" << YAML::Value << gitlab.ca_file;
    }
    if (const auto& t = gitlab.id_token) {
        y << YAML::Key << "id_token" << YAML::Value << YAML::BeginMap;
        y << YAML::Key << "variable" << YAML::Value << t->variable;
        y << YAML::Key << "audience" << YAML::Value << t->audience;
        std::vector<std::string> require;
        if (t->require_protected_ref) {
            require.push_back("ref_protected");
        }
        if (t->require_protected_environment) {
            require.push_back("environment_protected");
        }
        emit_list(y, "require", require);
        y << YAML::EndMap;
    }
    y << YAML::EndMap;
}

// Every gate manifest that names a namespace other than an environment's: the errors
// `run` and `gate` would stop on before the lock, found here already.
std::vector<std::string> manifest_namespace_errors(const Config& config, Context& ctx) {
    std::vector<std::string> errors;
    for (const auto& [name, gate] : config.gates) {
        auto text = read_file(gate.job);
        for (size_t i = 0; text && i < config.environments.size(); ++i) {
            const Environment& env = config.environments[i];
            Status s = check_manifest_namespace(
                {*text, gate.job, env.name, name, env.namespace_, "local"}, ctx.getenv);
            if (!s.is_ok()) {
                errors.push_back(s.message());
            }
        }
    }
    return errors;
}

}  // namespace

std::string render_config(const Config& config) {
    YAML::Emitter y;
    y.SetIndent(2);
    y << YAML::BeginMap;
    y << YAML::Key << "version" << YAML::Value << config.version;
    y << YAML::Key << "defaults" << YAML::Value << YAML::BeginMap;
    if (!config.default_namespace.empty()) {
        y << YAML::Key << "namespace" << YAML::Value << config.default_namespace;
    }
    emit_lock(y, config.default_lock);
    emit_list(y, "unlockers", config.default_unlockers);
    y << YAML::EndMap;
    y << YAML::Key << "environments" << YAML::Value << YAML::BeginSeq;
    for (const auto& env : config.environments) {
        emit_environment(y, env);
    }
    y << YAML::EndSeq;
    emit_gates_and_steps(y, config);
    emit_ci(y, config.ci);
    emit_gitlab(y, config.gitlab);
    y << YAML::EndMap;
    return std::string(y.c_str()) + "\n";
}

namespace {

// A YAML node of render_config's output as JSON, every scalar a string but the values
// of the keys that hold a number or a boolean (an environment may be named "true").
nlohmann::json yaml_to_json(const YAML::Node& node, const std::string& key = "") {
    if (node.IsMap()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& kv : node) {
            out[kv.first.Scalar()] = yaml_to_json(kv.second, kv.first.Scalar());
        }
        return out;
    }
    if (node.IsSequence()) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& item : node) {
            out.push_back(yaml_to_json(item));
        }
        return out;
    }
    if (!node.IsScalar()) {
        return nullptr;
    }
    if (key == "version") {
        return node.as<int>();
    }
    if (key == "interruptible") {
        return node.as<bool>();
    }
    return node.Scalar();
}

}  // namespace

nlohmann::json render_config_json(const Config& config) {
    nlohmann::json out = yaml_to_json(YAML::Load(render_config(config)));  // what it printed
    out["order"] = nlohmann::json::array();
    for (const RunEntry& e : run_order(config)) {
        out["order"].push_back({{"name", e.name},
                                {"kind", e.kind == EntryKind::gate ? "gate" : "step"},
                                {"builtin", e.builtin}});
    }
    return out;
}

int run_config_check(const ConfigCheckOptions& options, Context& ctx) {
    auto config = load_config_or_say(options.config_path, ctx.err);
    if (!config) {
        return k_exit_usage;
    }
    if (auto errors = manifest_namespace_errors(*config, ctx); !errors.empty()) {
        for (const auto& e : errors) {
            ctx.err << e << "\n";
        }
        return k_exit_usage;
    }
    if (options.output == "json") {
        ctx.out << dump_json(render_config_json(*config), 2) << "\n";
        return k_exit_success;
    }
    ctx.out << "# " << options.config_path << ": valid.\n"
            << "# Effective settings: defaults applied to each environment; the global qa "
               "lock uses defaults.lock.\n"
            << "# Run order: lock -> " << describe_run_order(run_order(*config)) << " -> release.\n"
            << render_config(*config);
    return k_exit_success;
}

}  // namespace envgate
