// envgate.env (GitLab dotenv rules: keys [A-Z0-9_], one line each, no spaces in
// values, no comments or blank lines, < 5 KB) and annotations.json.
#include <nlohmann/json.hpp>
#include <sstream>

#include "runner/base/utf8.h"
#include "runner/report/render.h"

namespace envgate {
namespace {

// Percent-encodes every byte outside a conservative set, so values never carry
// spaces, quotes, `#`, `$` or newlines.
std::string dotenv_value(const std::string& v) {
    static const char* k_hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : v) {
        bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == '@' ||
                     c == '+' || c == ',';
        if (plain) {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(k_hex[c >> 4]);
            out.push_back(k_hex[c & 15]);
        }
    }
    return out;
}

std::string dotenv_key(const std::string& name) {
    std::string out;
    for (char c : name) {
        if (c >= 'a' && c <= 'z') {
            out.push_back(static_cast<char>(c - 'a' + 'A'));
        } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            out.push_back(c);
        } else {
            out.push_back('_');
        }
    }
    return out;
}

}  // namespace

std::string render_dotenv(const RunReport& r) {
    std::ostringstream out;
    // No ENVGATE_ENV here: GitLab gives dotenv variables precedence over a later job's
    // own `variables:`, so a production job would inherit staging's name.
    out << "ENVGATE_RESULT=" << run_result_name(r.result) << "\n";
    if (const StepReport* f = r.failed_step()) {
        out << "ENVGATE_FAILED_STEP=" << dotenv_value(f->name) << "\n";
        if (!f->reason.empty()) {
            out << "ENVGATE_FAILED_REASON=" << dotenv_value(f->reason) << "\n";
        }
    }
    if (!r.lock.name.empty()) {
        out << "ENVGATE_LOCK_STATE=" << lock_state_name(r.lock.state) << "\n";
    }
    for (const auto& s : r.steps) {
        if (s.job_name) {
            out << "ENVGATE_JOB_" << dotenv_key(s.name) << "=" << dotenv_value(*s.job_name) << "\n";
        }
    }
    return out.str();
}

std::string render_annotations(const RunReport& r) {
    nlohmann::json links = nlohmann::json::array();
    auto add = [&](const std::string& label, const std::optional<std::string>& url) {
        if (url && !url->empty()) {
            links.push_back({{"external_link", {{"label", label}, {"url", *url}}}});
        }
    };
    if (r.lock.state != LockState::free) {
        add(r.lock.name + " lock holder pipeline", r.lock.holder_pipeline_url);
        add(r.lock.name + " lock holder job", r.lock.holder_job_url);
    }
    if (const StepReport* f = r.failed_step()) {
        add("failed " + f->name + " pipeline", r.pipeline_url);
        add("failed " + f->name + " job", r.job_url);
    }
    add(r.environment + " environment", r.environments_url);
    return dump_json(nlohmann::json{{"envgate", links}}, 2) + "\n";
}

}  // namespace envgate
