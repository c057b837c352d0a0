#include "runner/lint/render.h"

#include <Poco/DigestEngine.h>
#include <Poco/MD5Engine.h>
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "runner/base/vocab/enum_names.h"

namespace envgate::lint {
namespace {

using nlohmann::json;

std::string summary_line(const LintReport& r) {
    std::map<Severity, int, std::greater<>> by;
    for (const Finding& f : r.findings) {
        ++by[f.severity];
    }
    std::string counts;
    for (const auto& [s, n] : by) {
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, severity_name(s));
    }
    std::string scope = fmt::format(
        "{} workload{} in {} document{} from {} input{}", r.workloads, r.workloads == 1 ? "" : "s",
        r.documents, r.documents == 1 ? "" : "s", r.inputs, r.inputs == 1 ? "" : "s");
    if (r.findings.empty()) {
        return "envgate lint: no findings in " + scope + "\n";
    }
    return fmt::format("envgate lint: {} finding{} ({}) in {}\n", r.findings.size(),
                       r.findings.size() == 1 ? "" : "s", counts, scope);
}

constexpr EnumName<Severity> k_codequality_severities[] = {{Severity::info, "info"},
                                                           {Severity::warning, "minor"},
                                                           {Severity::error, "major"},
                                                           {Severity::critical, "critical"}};

std::string position(const Location& l) {
    if (l.pos.line == 0) {
        return l.file;
    }
    return fmt::format("{}:{}:{}", l.file, l.pos.line, l.pos.column);
}

}  // namespace

const char* codequality_severity(Severity s) {
    return name_of(k_codequality_severities, s, "info");
}

std::string fingerprint(const Finding& f) {
    Poco::MD5Engine md5;
    md5.update(f.check + "\n" + f.loc.file + "\n" + f.object + "\n" + f.identity);
    return Poco::DigestEngine::digestToHex(md5.digest());
}

std::string render_text(const LintReport& r) {
    std::string out;
    std::map<std::string, int> fired;
    for (const Finding& f : r.findings) {
        out += fmt::format("{}: {} {}: {}: {}\n", position(f.loc), severity_name(f.severity),
                           f.check, f.object, f.message);
        ++fired[f.check];
    }
    if (!fired.empty()) {
        out += "\n";
    }
    for (const Check* c : all_checks()) {
        if (auto it = fired.find(c->id); it != fired.end()) {
            out += fmt::format("{} ({}): {}\n  fix: {}\n  docs: {}\n", c->id, it->second, c->why,
                               c->fix, doc_url(c->id));
        }
    }
    return out + (fired.empty() ? "" : "\n") + summary_line(r);
}

std::string render_json(const LintReport& r) {
    json findings = json::array();
    for (const Finding& f : r.findings) {
        const Check* c = find_check(f.check);
        findings.push_back({{"check", f.check},
                            {"severity", severity_name(f.severity)},
                            {"file", f.loc.file},
                            {"line", f.loc.pos.line},
                            {"column", f.loc.pos.column},
                            {"object", f.object},
                            {"message", f.message},
                            {"fix", c != nullptr ? c->fix : ""},
                            {"docs", doc_url(f.check)},
                            {"fingerprint", fingerprint(f)}});
    }
    json summary = {{"findings", r.findings.size()},
                    {"inputs", r.inputs},
                    {"documents", r.documents},
                    {"workloads", r.workloads}};
    return json{{"findings", findings}, {"summary", summary}}.dump(2, ' ', false,
                                                                   json::error_handler_t::replace) +
           "\n";
}

std::string render_codequality(const LintReport& r) {
    json issues = json::array();
    for (const Finding& f : r.findings) {
        const Check* c = find_check(f.check);
        std::string fix = c != nullptr ? std::string(" Fix: ") + c->fix + "." : "";
        issues.push_back(
            {{"type", "issue"},
             {"check_name", f.check},
             {"description", f.object + ": " + f.message + "." + fix},
             {"categories", json::array({"Bug Risk"})},
             {"fingerprint", fingerprint(f)},
             {"severity", codequality_severity(f.severity)},
             {"location",
              {{"path", f.loc.file}, {"lines", {{"begin", std::max(1, f.loc.pos.line)}}}}}});
    }
    return issues.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_checks_markdown() {
    std::string out;
    for (const Check* c : all_checks()) {
        out += fmt::format(
            "### `{}`\n\n{}.\n\n* **Severity:** {}{}.\n* **Why:** {}.\n* **Fix:** {}.\n\n{}\n\n",
            c->id, c->title, severity_name(c->severity),
            c->amplified ? ", one step higher (up to critical) for a workload with more than one "
                           "replica, a DaemonSet, or one an HPA in the same input scales"
                         : "",
            c->why, c->fix, c->doc);
    }
    return out;
}

}  // namespace envgate::lint
