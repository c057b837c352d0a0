#include "runner/cmd_status.h"

#include <ostream>
#include <sstream>

#include "locks/describe.h"
#include "locks/record_json.h"
#include "runner/cmd_lock.h"
#include "runner/cmd_unlock.h"
#include "runner/config.h"
#include "runner/exit_status.h"
#include "runner/files.h"
#include "runner/status_metrics.h"

namespace envgate {
namespace {

using namespace envgate::locks;

constexpr std::size_t k_width = 80;

std::string fit(std::string text, std::size_t width) {
    if (text.size() > width) {
        text = text.substr(0, width - 3) + "...";
    }
    return text;
}

void line(std::ostringstream& out, const char* label, const std::string& value) {
    if (!value.empty()) {
        out << "  " << label << std::string(9 - std::string(label).size(), ' ') << value << "\n";
    }
}

void render_one(std::ostringstream& out, const LockStatus& s, TimePoint now) {
    const LockRecord& r = s.record;
    if (!s.error.empty()) {
        out << r.name << (s.repair.empty() ? "  UNKNOWN" : "  UNREADABLE") << "\n  error    "
            << s.error << "\n"
            << s.repair;
        return;
    }
    std::string state = state_name(r.state);
    for (char& c : state) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    out << r.name << "  " << state;
    if (r.state != LockState::free) {
        out << "  since " << format_rfc3339(r.acquired_at) << " ("
            << format_duration(now - r.acquired_at) << " ago)";
    }
    out << "\n";
    if (r.holder) {
        line(out, "holder",
             r.holder->id + (r.holder->user.empty() ? "" : " (" + r.holder->user + ")"));
        line(out, "pipeline", r.holder->pipeline_url);
        line(out, "job", r.holder->job_url);
        line(out, "step", r.step);
        line(out, "renewed",
             format_rfc3339(r.renewed_at) + ", lease " + format_duration(r.lease_duration));
    }
    if (r.state == LockState::failed) {
        line(out, "failure", fit(describe_failure(r), k_width - 11));
        // One command on two lines (a shell continuation), so it fits 80 columns.
        std::string cmd = unlock_command(r);
        auto cut = cmd.find(" --expect-holder");
        if (cut != std::string::npos && cmd.size() + 4 > k_width) {
            cmd = cmd.substr(0, cut) + " \\\n      " + cmd.substr(cut + 1);
        }
        out << "  unlock with:\n    " << cmd << "\n";
    }
    for (std::size_t i = 0; i < r.waiters.size(); ++i) {
        const Waiter& w = r.waiters[i];
        line(out, i == 0 ? "waiting" : "", w.who.id + " since " + format_rfc3339(w.since));
    }
    std::size_t first = r.history.size() > 5 ? r.history.size() - 5 : 0;
    for (std::size_t i = first; i < r.history.size(); ++i) {
        const Transition& t = r.history[i];
        std::string entry = format_rfc3339(t.at) + " " + t.what + " " + t.who + ": " + t.why;
        line(out, i == first ? "history" : "", fit(entry, k_width - 11));
    }
}

}  // namespace

std::vector<std::string> lock_names(const Config& config, const std::optional<std::string>& env) {
    if (env) {
        return {*env};
    }
    std::vector<std::string> names;
    for (const auto& e : config.environments) {
        names.push_back(e.name);
    }
    names.push_back("qa");
    return names;
}

std::optional<LockStatus> read_lock_status(const Config& config, const std::string& name,
                                           Context& ctx, int& exit) {
    auto target = lock_target(config, name, ctx, exit);
    if (!target) {
        return std::nullopt;
    }
    LockStatus s;
    s.record.name = name;
    s.store = target->store->describe();
    auto read = target->store->read(name);
    if (read.is_ok()) {
        s.record = read->record;
    } else {
        s.error = read.status().message();
        if (read.status().code() == Code::invalid) {
            s.repair = repair_instructions(config, name);
        }
    }
    return s;
}

std::string render_status_text(const std::vector<LockStatus>& locks, TimePoint now) {
    std::ostringstream out;
    for (std::size_t i = 0; i < locks.size(); ++i) {
        if (i > 0) {
            out << "\n";
        }
        render_one(out, locks[i], now);
    }
    return out.str();
}

nlohmann::json render_status_json(const std::vector<LockStatus>& locks, TimePoint now) {
    nlohmann::json j = {{"schema", "envgate.dev/status/v1"},
                        {"generated_at", format_rfc3339_micro(now)},
                        {"locks", nlohmann::json::array()}};
    for (const auto& s : locks) {
        nlohmann::json entry = {
            {"store", s.store},
            {"error", s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error)},
            {"unlock_command", nullptr},
            {"lock", to_json(s.record)}};
        if (s.error.empty() && s.record.state != LockState::free) {
            entry["unlock_command"] = unlock_command(s.record);
        }
        j["locks"].push_back(entry);
    }
    return j;
}

int run_status(const StatusOptions& o, Context& ctx) {
    if (o.output != "text" && o.output != "json" && o.output != "prometheus") {
        ctx.err << "envgate status: --output must be text, json or prometheus\n";
        return k_exit_usage;
    }
    if (!o.textfile.empty() && o.output != "prometheus") {
        ctx.err << "envgate status: --textfile needs --output prometheus\n";
        return k_exit_usage;
    }
    auto config = load_config(o.config_path);
    if (!config.is_ok()) {
        ctx.err << config.status().message() << "\n";
        return k_exit_usage;
    }
    std::vector<std::string> names = lock_names(*config, o.env);
    std::vector<LockStatus> out;
    for (const auto& name : names) {
        int exit = k_exit_usage;
        auto s = read_lock_status(*config, name, ctx, exit);
        if (!s) {
            return exit;
        }
        out.push_back(std::move(*s));
    }
    TimePoint now = ctx.clock.now();
    std::vector<GateRuns> gates;
    if (o.output == "prometheus" && !config->gates.empty()) {
        gates = read_gate_runs(*config, names, ctx);
    }
    if (o.output == "prometheus" && !o.textfile.empty()) {
        Status written = write_file_atomic(o.textfile, render_status_prometheus(out, gates, now));
        if (!written.is_ok()) {
            ctx.err << "envgate status: " << written.message() << "\n";
            return k_exit_infra;
        }
    } else if (o.output == "prometheus") {
        ctx.out << render_status_prometheus(out, gates, now);
    } else if (o.output == "json") {
        ctx.out << render_status_json(out, now).dump(2) << "\n";
    } else {
        ctx.out << render_status_text(out, now);
    }
    for (const auto& s : out) {
        if (!s.error.empty()) {
            return k_exit_infra;
        }
    }
    return k_exit_success;
}

}  // namespace envgate
