// load_config / parse_config: envgate.yml (DESIGN.md "Configuration") into Config.
// Reading collects every error with its file:line:column and field path; the
// cross-checks (unique names, `after` references and cycles) run once all is read.
#include "runner/config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/base/yaml_bounded.h"
#include "runner/config/config_check.h"
#include "runner/config/config_ci.h"
#include "runner/config/config_gitlab.h"
#include "runner/config/config_lint.h"
#include "runner/config/config_steps.h"
#include "runner/config/config_yaml.h"
#include "runner/config/glob.h"

namespace envgate {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> k_top_keys = {"version", "defaults", "environments", "gates",
                                             "steps",   "lint",     "ci",           "gitlab"};
const std::vector<std::string> k_defaults_keys = {"namespace", "lock", "unlockers"};
const std::vector<std::string> k_lock_keys = {"store",          "path",     "namespace",
                                              "on_failure",     "order",    "wait_timeout",
                                              "lease_duration", "hold_for", "local_unlock"};
const std::vector<std::string> k_environment_keys = {"name",  "namespace", "kube_context", "paths",
                                                     "after", "lock",      "unlockers"};

const std::vector<std::string> k_store_names = {"file", "kubernetes"};
// In the order of the enums' values: a choice's index is the value.
const std::vector<std::string> k_policy_names = {locks::on_failure_name(FailurePolicy::hold),
                                                 locks::on_failure_name(FailurePolicy::release)};
const std::vector<std::string> k_order_names = {locks::order_name(QueueOrder::oldest_first),
                                                locks::order_name(QueueOrder::newest_first),
                                                locks::order_name(QueueOrder::unordered)};

// A Lease holds whole seconds; below a second renewing every third makes no sense.
constexpr Duration k_min_lease = std::chrono::seconds(1);

class ConfigParser {
  public:
    explicit ConfigParser(const std::string& path)
        : m_f(path), m_dir(fs::path(path).parent_path()) {}

    // REQUIRES: `root` is the document's root node.
    Result<Config> parse(const YAML::Node& root) {
        m_config.path = m_f.file();
        if (!root.IsMap()) {
            m_f.error(m_f.where(root), "",
                      "expected a mapping with `version: 1`, got " + node_kind(root));
            return finish();
        }
        m_root_mark = root.Mark();
        m_f.index_null_values(root);
        m_f.check_keys(root, "", k_top_keys);
        read_version(root["version"]);
        read_defaults(root["defaults"]);
        read_environments(root["environments"]);
        read_gates_section(root["gates"], m_dir, m_f, m_config, m_added);
        read_steps_section(root["steps"], m_f, m_config, m_added);
        check_added_entries(m_config, m_added, m_f);
        read_lint_section(root["lint"], m_f, m_config.lint);
        read_ci_section(root["ci"], m_config.environments, m_f, m_config.ci);
        read_gitlab_section(root["gitlab"], m_dir, m_f, m_config.gitlab);
        check_environments(m_config.environments, m_marks, m_f);
        return finish();
    }

  private:
    Result<Config> finish() {
        if (!m_f.has_errors()) {
            return std::move(m_config);
        }
        std::string message;
        for (const auto& e : m_f.errors()) {
            message += (message.empty() ? "" : "\n") + e;
        }
        return Status(Code::invalid, message);
    }

    std::string resolve(const std::string& relative) const {
        return resolve_config_path(m_dir, relative);
    }

    void read_version(const YAML::Node& node) {
        if (!node.IsDefined()) {
            m_f.error(m_root_mark, "version", "missing; write `version: 1` at the top");
            return;
        }
        auto v = m_f.read_int(node, "version");
        if (v && *v != 1) {
            m_f.error(m_f.where(node), "version",
                      fmt::format("{} is not supported; this envgate reads version 1", *v));
        }
        m_config.version = v.value_or(1);
    }

    void read_defaults(const YAML::Node& node) {
        m_config.default_lock.path = resolve(m_config.default_lock.path);
        if (!node.IsDefined() || !m_f.expect_map(node, "defaults")) {
            return;
        }
        m_f.check_keys(node, "defaults", k_defaults_keys);
        if (node["namespace"]) {
            read_namespace(node["namespace"], "defaults.namespace", m_config.default_namespace);
        }
        read_lock(node["lock"], "defaults.lock", m_config.default_lock);
        if (node["unlockers"]) {
            auto u = m_f.read_string_list(node["unlockers"], "defaults.unlockers");
            m_config.default_unlockers = u.value_or(std::vector<std::string>{});
        }
    }

    void read_namespace(const YAML::Node& node, const std::string& field, std::string& into) {
        auto s = m_f.read_string(node, field);
        if (s && !is_dns1123_label(*s)) {
            m_f.error(m_f.where(node), field,
                      fmt::format("\"{}\" is not a DNS-1123 label (a Kubernetes namespace "
                                  "name: lowercase letters, digits and '-', at most 63)",
                                  *s));
            return;
        }
        if (s) {
            into = *s;
        }
    }

    // Overrides the fields of `lock` that `node` sets.
    void read_lock(const YAML::Node& node, const std::string& field, LockSettings& lock) {
        if (!node.IsDefined() || !m_f.expect_map(node, field)) {
            return;
        }
        m_f.check_keys(node, field, k_lock_keys);
        if (auto i = choice(node["store"], field + ".store", k_store_names)) {
            lock.store = static_cast<LockStoreKind>(*i);
        }
        if (auto n = node["path"]) {
            if (auto s = m_f.read_non_empty(n, field + ".path")) {
                lock.path = resolve(*s);
                std::error_code ec;  // a missing folder is made at the first write
                if (fs::exists(lock.path, ec) && !fs::is_directory(lock.path, ec)) {
                    m_f.error(m_f.where(n), field + ".path",
                              "\"" + *s +
                                  "\" is not a directory (the file store keeps one "
                                  "file per lock in it)");
                }
            }
        }
        if (node["namespace"]) {
            read_namespace(node["namespace"], field + ".namespace", lock.namespace_);
        }
        if (auto i = choice(node["on_failure"], field + ".on_failure", k_policy_names)) {
            lock.on_failure = static_cast<FailurePolicy>(*i);
        }
        if (auto i = choice(node["order"], field + ".order", k_order_names)) {
            lock.order = static_cast<QueueOrder>(*i);
        }
        duration(node["wait_timeout"], field + ".wait_timeout", Duration{0}, lock.wait_timeout);
        duration(node["lease_duration"], field + ".lease_duration", k_min_lease,
                 lock.lease_duration);
        duration(node["hold_for"], field + ".hold_for", k_min_lease, lock.hold_for);
        if (auto i = choice(node["local_unlock"], field + ".local_unlock", {"false", "true"})) {
            lock.local_unlock = *i == 1;
        }
    }

    std::optional<size_t> choice(const YAML::Node& node, const std::string& field,
                                 const std::vector<std::string>& names) {
        return node.IsDefined() ? m_f.read_choice(node, field, names) : std::nullopt;
    }

    void duration(const YAML::Node& node, const std::string& field, Duration min, Duration& into) {
        if (!node.IsDefined()) {
            return;
        }
        if (auto d = m_f.read_duration(node, field, min)) {
            into = *d;
        }
    }

    void read_environments(const YAML::Node& node) {
        if (!node.IsDefined()) {
            m_f.error(m_root_mark, "environments", "missing; list at least one environment");
            return;
        }
        if (!node.IsSequence() || node.size() == 0) {
            m_f.error(m_f.where(node), "environments",
                      "expected a list of at least one environment, got " + node_kind(node));
            return;
        }
        for (size_t i = 0; i < node.size(); ++i) {
            read_environment(node[i], fmt::format("environments[{}]", i));
        }
    }

    void read_environment(const YAML::Node& node, const std::string& field) {
        Environment env;
        env.namespace_ = m_config.default_namespace;
        env.lock = m_config.default_lock;
        env.unlockers = m_config.default_unlockers;
        EnvironmentMarks marks{YAML::Mark::null_mark(), {}};
        if (!node.IsMap()) {
            m_f.error(m_f.where(node), field,
                      "expected a mapping with `name`, got " + node_kind(node));
        } else {
            m_f.check_keys(node, field, k_environment_keys);
            read_environment_fields(node, field, env, marks);
        }
        m_config.environments.push_back(std::move(env));
        m_marks.push_back(std::move(marks));
    }

    void read_environment_fields(const YAML::Node& node, const std::string& field, Environment& env,
                                 EnvironmentMarks& marks) {
        if (!node["name"]) {
            m_f.error(m_f.where(node), field + ".name", "missing; every environment needs a name");
        } else if (auto s = m_f.read_string(node["name"], field + ".name")) {
            env.name = *s;
            marks.name = m_f.where(node["name"]);
        }
        if (node["namespace"]) {
            read_namespace(node["namespace"], field + ".namespace", env.namespace_);
        } else if (env.namespace_.empty()) {
            m_f.error(m_f.where(node), field + ".namespace",
                      "missing; set it here or in defaults.namespace");
        }
        if (auto n = node["kube_context"]) {
            if (auto s = m_f.read_non_empty(n, field + ".kube_context")) {
                env.kube_context = *s;
            }
        }
        if (auto n = node["paths"]) {
            env.paths = m_f.read_string_list(n, field + ".paths").value_or(env.paths);
            for (size_t j = 0; n.IsSequence() && j < n.size() && j < env.paths.size(); ++j) {
                if (std::string why = glob_error(env.paths[j]); !why.empty()) {
                    m_f.error(m_f.where(n[j]), field + ".paths[" + std::to_string(j) + "]",
                              "\"" + env.paths[j] + "\": " + why);
                }
            }
        }
        if (auto n = node["after"]) {
            env.after = m_f.read_string_list(n, field + ".after").value_or(env.after);
            for (size_t j = 0; n.IsSequence() && j < n.size(); ++j) {
                marks.after.push_back(m_f.where(n[j]));
            }
        }
        read_lock(node["lock"], field + ".lock", env.lock);
        if (auto n = node["unlockers"]) {
            env.unlockers = m_f.read_string_list(n, field + ".unlockers").value_or(env.unlockers);
        }
    }

    YamlFields m_f;
    fs::path m_dir;
    YAML::Mark m_root_mark;
    Config m_config;
    std::vector<EnvironmentMarks> m_marks;
    AddedMarks m_added;
};

}  // namespace

namespace fs = std::filesystem;

const char* lock_store_name(LockStoreKind kind) {
    return k_store_names[static_cast<size_t>(kind)].c_str();
}

Result<Config> parse_config(const std::string& text, const std::string& path) {
    try {
        TRY_ASSIGN(std::vector<YAML::Node> docs, load_yaml_bounded(text, path));
        if (docs.empty() || docs[0].IsNull()) {
            return Status(Code::invalid,
                          path + ": the file is empty; it needs `version: 1` and `environments`");
        }
        if (docs.size() > 1) {
            YAML::Mark m = docs[1].Mark();
            return Status(Code::invalid, fmt::format("{}:{}:{}: only one YAML document is allowed",
                                                     path, m.line + 1, m.column + 1));
        }
        return ConfigParser(path).parse(docs[0]);
    } catch (const YAML::Exception& e) {
        if (e.mark.is_null()) {
            return Status(Code::invalid, fmt::format("{}: YAML error: {}", path, e.msg));
        }
        return Status(Code::invalid, fmt::format("{}:{}:{}: YAML syntax error: {}", path,
                                                 e.mark.line + 1, e.mark.column + 1, e.msg));
    }
}

Result<Duration> parse_bounded_duration(const std::string& what, const std::string& text,
                                        Duration min) {
    auto d = parse_duration(text);
    if (!d) {
        return Status(Code::invalid, fmt::format("{} \"{}\" is not a duration (write e.g. 90s, "
                                                 "5m, 2h, 1h30m)",
                                                 what, text));
    }
    if (*d > k_max_duration) {
        return Status(Code::invalid, fmt::format("{} \"{}\" is too long; the maximum is {}", what,
                                                 text, format_duration(k_max_duration)));
    }
    if (*d < min) {
        return Status(Code::invalid, fmt::format("{} \"{}\" is too short; the minimum is {}", what,
                                                 text, format_duration(min)));
    }
    return *d;
}

Result<Config> load_config(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        return Status(Code::invalid, path + ": is a directory, not a config file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Status(Code::not_found, fmt::format("{}: cannot read the config file: {}", path,
                                                   std::strerror(errno)));
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        return Status(Code::io, fmt::format("{}: read error: {}", path, std::strerror(errno)));
    }
    return parse_config(text.str(), path);
}

std::optional<Config> load_config_or_say(const std::string& path, std::ostream& err) {
    Result<Config> config = load_config(path);
    if (!config.is_ok()) {
        err << config.status().message() << "\n";
        return std::nullopt;
    }
    return std::move(config.value());
}

}  // namespace envgate
