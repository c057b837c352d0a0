// The list of checks and the one loop that runs them: per workload, each enabled
// check, then the severity raised for replicated workloads, then suppressions.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "runner/base/vocab/enum_names.h"
#include "runner/lint/check.h"
#include "runner/lint/checks.h"

namespace envgate::lint {
namespace {

constexpr EnumName<Severity> k_severity_names[] = {{Severity::info, "info"},
                                                   {Severity::warning, "warning"},
                                                   {Severity::error, "error"},
                                                   {Severity::critical, "critical"}};

// Why a workload runs many copies of its start-up at once, or "" when it does not.
std::string amplification(const Workload& w, const Objects& all) {
    if (w.kind == WorkloadKind::daemon_set) {
        return "a DaemonSet runs it on every node at once";
    }
    for (const HpaObject& h : all.hpas) {
        if (h.target_kind == w.kind_name && h.target_name == w.name &&
            h.namespace_ == w.namespace_) {
            return h.max_replicas.value
                       ? fmt::format("an HPA scales it up to {} replicas", *h.max_replicas.value)
                       : std::string("an HPA scales it");
        }
    }
    if (w.replicas.value && *w.replicas.value > 1) {
        return fmt::format("{} replicas run it at once", *w.replicas.value);
    }
    return "";
}

std::set<std::string> ignored_by_annotation(const Workload& w) {
    std::set<std::string> out;
    auto it = w.annotations.find(k_ignore_annotation);
    if (it == w.annotations.end()) {
        return out;
    }
    std::stringstream list(it->second.value);
    std::string id;
    while (std::getline(list, id, ',')) {
        id.erase(0, id.find_first_not_of(" \t\n"));
        id.erase(id.find_last_not_of(" \t\n") + 1);
        out.insert(id);
    }
    return out;
}

}  // namespace

const char* severity_name(Severity s) {
    return name_of(k_severity_names, s, "info");
}

std::optional<Severity> parse_severity(const std::string& name) {
    return value_of(k_severity_names, name);
}

std::string object_name(const Workload& w) {
    std::string base = w.kind_name + "/" + w.name;
    return w.namespace_.empty() ? base : w.namespace_ + "/" + base;
}

// Where docs/lint.md is for the person reading the finding: beside an installed binary
// (<prefix>/bin/envgate: the package's <prefix>/share/doc/envgate/docs), else the
// source tree's docs/ (a build tree's binary, run from the tree's root).
namespace {
const std::string& docs_dir() {
    static const std::string k_dir = [] {
        std::error_code ec;
        const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
        if (!ec) {
            const std::filesystem::path installed =
                exe.parent_path().parent_path() / "share/doc/envgate/docs";
            if (std::filesystem::is_regular_file(installed / "lint.md", ec)) {
                return installed.lexically_normal().string();
            }
        }
        return std::string("docs");
    }();
    return k_dir;
}
}  // namespace

std::string doc_url(const std::string& id) {
    return docs_dir() + "/lint.md#" + id;
}

void Emitter::report(const Location& loc, std::string message, std::string identity) {
    m_out.push_back({m_check.id, m_check.severity, loc, object_name(m_workload), std::move(message),
                     std::move(identity)});
}

const std::vector<const Check*>& all_checks() {
    static const std::vector<const Check*> k_all = {
        &k_migrate_in_start_command,
        &k_migrate_in_init_container,
        &k_migrate_on_start_flag,
        &k_stretched_startup,
        &k_migration_job_backoff_limit,
        &k_migration_job_parallel,
        &k_migration_job_no_deadline,
        &k_migration_job_evidence_deleted,
        &k_migration_job_no_pod_failure_policy,
    };
    return k_all;
}

const Check* find_check(const std::string& id) {
    for (const Check* c : all_checks()) {
        if (id == c->id) {
            return c;
        }
    }
    return nullptr;
}

std::vector<Finding> run_checks(const Objects& objects, const LintSettings& settings) {
    std::vector<Finding> out;
    for (const Workload& w : objects.workloads) {
        std::set<std::string> ignored = ignored_by_annotation(w);
        if (ignored.contains("all")) {
            continue;
        }
        std::string amplified = amplification(w, objects);
        for (const Check* c : all_checks()) {
            if (settings.disabled.contains(c->id) || ignored.contains(c->id)) {
                continue;
            }
            std::size_t first = out.size();
            Emitter emit(*c, w, out);
            c->run(w, objects, settings, emit);
            for (std::size_t i = first; c->amplified && !amplified.empty() && i < out.size(); ++i) {
                out[i].severity =
                    std::min(Severity::critical,
                             static_cast<Severity>(static_cast<int>(out[i].severity) + 1));
                out[i].message += "; " + amplified;
            }
        }
    }
    return out;
}

}  // namespace envgate::lint
