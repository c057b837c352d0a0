// The check registry's vocabulary: what a check is (id, severity, why, fix, the
// documentation text, all in one place), what it reports, and the settings it reads.
// Each check lives in its own file under runner/lint/checks_*.cpp; registry.cpp lists
// them, runs them, raises severities for replicated workloads and applies suppressions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/cluster_keys.h"
#include "runner/lint/model.h"
#include "runner/lint/settings.h"

namespace envgate::lint {

enum class Severity { info, warning, error, critical };

// "info", "warning", "error", "critical"; parse_severity is its inverse.
const char* severity_name(Severity s);
std::optional<Severity> parse_severity(const std::string& name);

struct Finding {
    std::string check;
    Severity severity = Severity::warning;
    Location loc;
    std::string object;   // "Deployment/web" (with "ns/" in front when namespaced)
    std::string message;  // what was found, with the computed numbers
    // What identifies this finding apart from its position, for fingerprints that stay
    // put when unrelated lines move: container, field, the matched text.
    std::string identity;
};

class Emitter;

// One check. `severity` is the base; `amplified` checks go one step up for a workload
// with more than one replica, a DaemonSet, or one an HPA in the input scales.
struct Check {
    const char* id;
    Severity severity;
    bool amplified;
    const char* title;  // one line: what it finds
    const char* why;    // one line: why it hurts
    const char* fix;    // one line: what to do instead
    const char* doc;    // markdown paragraphs for docs/lint.md
    void (*run)(const Workload& w, const Objects& all, const LintSettings& s, Emitter& out);
};

// What a check reports through: fills in the check id, severity and object.
class Emitter {
  public:
    Emitter(const Check& check, const Workload& w, std::vector<Finding>& out)
        : m_check(check), m_workload(w), m_out(out) {}
    void report(const Location& loc, std::string message, std::string identity);

  private:
    const Check& m_check;
    const Workload& m_workload;
    std::vector<Finding>& m_out;
};

// Every check, in documentation order.
const std::vector<const Check*>& all_checks();
// The check named `id`, or nullptr.
const Check* find_check(const std::string& id);

// Runs every enabled check over every workload of `objects`; findings come out in
// input order, severities raised for replicated workloads, suppressions applied.
std::vector<Finding> run_checks(const Objects& objects, const LintSettings& settings);

// "Deployment/web", or "prod/Deployment/web" with a namespace.
std::string object_name(const Workload& w);

// Where a check's section of the documentation is: docs/lint.md#ID under the installed
// package's documentation (/usr/share/doc/envgate/docs), or in the source tree.
std::string doc_url(const std::string& id);

}  // namespace envgate::lint
