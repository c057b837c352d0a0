// envgate.yml as a plain struct: what DESIGN.md "Configuration" describes, with the
// defaults applied to each environment. Parsed and validated by load_config
// (runner/config.cpp); every error names file:line:column and the field.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gates/status.h"
#include "gates/time.h"

namespace envgate {

enum class LockStoreKind { file, kubernetes };
enum class FailurePolicy { hold, release };
enum class QueueOrder { oldest_first, newest_first, unordered };

struct LockSettings {
    LockStoreKind store = LockStoreKind::file;
    std::string path = ".envgate/locks";        // file store: directory of <lock>.json
    std::string namespace_ = "envgate-locks";   // kubernetes store: namespace of the Leases
    FailurePolicy on_failure = FailurePolicy::hold;
    QueueOrder order = QueueOrder::oldest_first;
    Duration wait_timeout = std::chrono::hours(2);
    Duration lease_duration = std::chrono::seconds(60);  // renewed every third of it
    Duration hold_for = std::chrono::hours(2);           // `lock acquire` across jobs
};

struct Environment {
    std::string name;  // DNS-1123 label
    std::string namespace_;
    std::optional<std::string> kube_context;
    std::vector<std::string> paths;  // globs for the generator
    std::vector<std::string> after;  // promotion order
    LockSettings lock;
    std::vector<std::string> unlockers;  // GitLab logins / groups ("@sre-oncall")
};

struct GateSettings {
    std::string job;  // manifest path, relative to the config file's directory
    std::optional<Duration> timeout;
};

struct Config {
    std::string path;  // the file it was read from
    int version = 1;
    std::vector<Environment> environments;
    std::map<std::string, GateSettings> gates;  // pre-migrations, post-migrations, ...
    std::map<std::string, std::string> steps;   // diff, deploy, qa -> command

    // REQUIRES: nothing. Returns nullptr when no environment has that name.
    const Environment* find_environment(const std::string& name) const {
        for (const auto& e : environments) {
            if (e.name == name) {
                return &e;
            }
        }
        return nullptr;
    }
};

// Reads and validates `path`. A broken config is an `invalid` Status whose message
// names file:line:column and the field (`envgate.yml:14:9: environments[2].name: ...`).
Result<Config> load_config(const std::string& path);

// The same, from text (tests; `path` only names it in messages).
Result<Config> parse_config(const std::string& text, const std::string& path);

}  // namespace envgate
