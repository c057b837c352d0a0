// envgate.yml as a plain struct: what DESIGN.md "Configuration" describes, with the
// defaults applied to each environment. Parsed and validated by load_config
// (runner/config/config.cpp); every error names file:line:column and the field.
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "locks/lock_record.h"
#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"
#include "runner/lint/settings.h"

namespace envgate {

enum class LockStoreKind { file, kubernetes };
// The lock's words are the lock model's (locks/lock_record.h): one vocabulary, so a
// setting passes from envgate.yml to the lock without a translation to keep in step.
using FailurePolicy = locks::OnFailure;
using QueueOrder = locks::QueueOrder;

// The word envgate.yml uses for each store ("file", "kubernetes"). The policy's and the
// order's words are the lock model's: locks::on_failure_name, locks::order_name.
const char* lock_store_name(LockStoreKind kind);

struct LockSettings {
    LockStoreKind store = LockStoreKind::file;
    // file store: directory of <lock>.json; load_config resolves a relative path
    // against the config file's directory.
    std::string path = ".envgate/locks";
    std::string namespace_ = "envgate-locks";  // kubernetes store: namespace of the Leases
    FailurePolicy on_failure = FailurePolicy::hold;
    QueueOrder order = QueueOrder::oldest_first;
    Duration wait_timeout = std::chrono::hours(2);
    Duration lease_duration = std::chrono::seconds(60);  // renewed every third of it
    Duration hold_for = std::chrono::hours(2);           // `lock acquire` across jobs
    // `envgate unlock` outside GitLab CI, for operators who hold the lock store's
    // credentials. Off: only a CI job may unlock, and GitLab says who runs it.
    bool local_unlock = false;
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
    // Manifest path. Written relative to the config file's directory; load_config
    // checks it exists and stores it joined with that directory (so it opens from
    // the working directory, and is absolute when the config path is).
    std::string job;
    std::optional<Duration> timeout;
    // A gate envgate.yml adds (not one of the three built-in): the step or gate it runs
    // right after (runner/config/run_order.h). The built-in gates have a fixed place.
    std::optional<std::string> after;
};

struct StepSettings {
    std::string run;                   // the shell command
    std::optional<std::string> after;  // as GateSettings::after, for a step envgate.yml adds
};

// `ci:`: what `envgate generate` writes into the child pipeline for GitLab, which
// does not pass the parent pipeline's `default:` on to a child pipeline.
struct CiSettings {
    std::vector<std::string> tags;                        // default:tags (runner tags)
    std::optional<bool> interruptible;                    // default:interruptible
    std::optional<Duration> timeout;                      // default:timeout
    std::map<std::string, std::string> deployment_tiers;  // environment -> GitLab tier
    // `deploy_branches`: globs of the branches whose pipelines deploy; empty: the
    // default branch alone. Other branches get the diff-only child.
    std::vector<std::string> deploy_branches;
    bool deploy_protected = false;  // `deploy_branches: protected`: protected branches

    bool has_defaults() const { return !tags.empty() || interruptible || timeout; }
};

// `gitlab:`: the one GitLab server `envgate unlock` asks in CI who runs the job, and
// where its ID tokens come from. From the repository, never from a job variable: a job
// can point CI_SERVER_URL at a server of its own.
struct IdTokenSettings {
    std::string variable = "ENVGATE_ID_TOKEN";   // the job's id_tokens: entry holding the JWT
    std::string audience;                        // its `aud:`; the token must name it
    bool require_protected_ref = false;          // claim ref_protected must be true
    bool require_protected_environment = false;  // claim environment_protected must be true
};

struct GitLabServer {
    std::string url;      // "https://gitlab.example.com", no trailing '/'; empty: not pinned
    std::string ca_file;  // verify its TLS with this CA bundle instead of the system's
    std::optional<IdTokenSettings> id_token;  // set: the unlocker comes from a signed JWT
};

struct Config {
    std::string path;  // the file it was read from
    int version = 1;
    std::vector<Environment> environments;
    std::map<std::string, GateSettings> gates;  // pre-migrations, post-migrations, ...
    std::map<std::string, StepSettings> steps;  // diff, deploy, qa, ... -> command
    // The gates and steps the file adds to the built-in ones, in the order it lists
    // them: entries that run after the same one run in this order.
    std::vector<std::string> added;
    // `defaults`, resolved: what an environment inherits, and what the global `qa`
    // lock uses.
    std::string default_namespace;
    LockSettings default_lock;
    std::vector<std::string> default_unlockers;
    lint::LintSettings lint;  // `lint:`, for envgate lint
    CiSettings ci;            // `ci:`, for envgate generate
    GitLabServer gitlab;      // `gitlab:`, for envgate unlock in CI

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
// names file:line:column and the field (`envgate.yml:14:9: environments[2].name: ...`),
// one error per line, every error found (a missing file is `not_found`). Only reads.
Result<Config> load_config(const std::string& path);

// load_config for a command: a broken config's message goes to `err` (each command then
// ends with k_exit_usage) and the result is nullopt.
std::optional<Config> load_config_or_say(const std::string& path, std::ostream& err);

// The same, from text (tests). `path` names the file in messages, and its directory
// is where gate job manifests are looked up (they must exist).
Result<Config> parse_config(const std::string& text, const std::string& path);

// No duration envgate reads (config or flag) may exceed this: a year. Longer ones are
// typos, and would overflow `now + duration`.
inline constexpr Duration k_max_duration = std::chrono::hours(24 * 366);

// `text` as a duration for `what` (a flag or field): "not a duration", "is too short"
// (below `min`) or "is too long" (above k_max_duration) otherwise, as Code::invalid.
Result<Duration> parse_bounded_duration(const std::string& what, const std::string& text,
                                        Duration min);

// What to add to "no environment NAME": `; did you mean "staging"?` when a name of
// `config` is close, else `; the environments are: a, b`.
std::string unknown_environment_hint(const Config& config, const std::string& name);

}  // namespace envgate
