#include "runner/cmd_status.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
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
#include "runner/utf8.h"

namespace envgate {
namespace {

using namespace envgate::locks;

// The column values start at: two spaces and a label padded to nine.
constexpr std::size_t k_indent = 11;
// Narrower terminals still get this much text per line.
constexpr std::size_t k_min_text = 20;

// `text` in lines of at most `width` bytes, broken at spaces; `width` 0: one line. A
// word longer than the width (a URL, a Job name) stays whole on its own line, so it
// can still be copied. Nothing is dropped.
std::vector<std::string> wrap_words(const std::string& text, std::size_t width) {
    if (width == 0 || text.size() <= width) {
        return {text};
    }
    std::vector<std::string> lines;
    std::string rest = text;
    while (rest.size() > width) {
        std::size_t cut = rest.rfind(' ', width);
        if (cut == std::string::npos || cut == 0) {
            cut = rest.find(' ', width);  // the first word is longer than the width
        }
        if (cut == std::string::npos) {
            break;
        }
        lines.push_back(rest.substr(0, cut));
        rest = rest.substr(cut + 1);
    }
    if (!rest.empty()) {
        lines.push_back(rest);
    }
    return lines;
}

class Lines {
  public:
    Lines(std::ostringstream& out, std::size_t width) : m_out(out), m_width(width) {}

    // "  label    value", the value wrapped to the width under itself.
    void line(const char* label, const std::string& value) const {
        if (value.empty()) {
            return;
        }
        std::size_t room =
            m_width == 0 ? 0 : std::max(k_min_text, m_width - std::min(m_width, k_indent));
        const auto parts = wrap_words(value, room);
        for (std::size_t i = 0; i < parts.size(); ++i) {
            std::string head = i == 0 ? std::string(label) : "";
            m_out << "  " << head << std::string(k_indent - 2 - head.size(), ' ') << parts[i]
                  << "\n";
        }
    }
    std::size_t width() const { return m_width; }

  private:
    std::ostringstream& m_out;
    std::size_t m_width;
};

void render_one(std::ostringstream& out, const LockStatus& s, TimePoint now, std::size_t width) {
    const LockRecord& r = s.record;
    const Lines lines(out, width);
    auto line = [&lines](const char* label, const std::string& value) { lines.line(label, value); };
    if (!s.error.empty()) {
        out << r.name << (s.repair.empty() ? "  UNKNOWN" : "  UNREADABLE") << "\n";
        line("error", s.error);
        out << s.repair;
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
        line("holder", r.holder->id + (r.holder->user.empty() ? "" : " (" + r.holder->user + ")"));
        line("pipeline", r.holder->pipeline_url);
        line("job", r.holder->job_url);
        line("step", r.step);
        line("renewed",
             format_rfc3339(r.renewed_at) + ", lease " + format_duration(r.lease_duration));
    }
    if (r.state == LockState::failed) {
        line("failure", describe_failure(r));
        // One command on two lines (a shell continuation) when it would not fit.
        std::string cmd = unlock_command(r);
        auto cut = cmd.find(" --expect-holder");
        if (cut != std::string::npos && width != 0 && cmd.size() + 4 > width) {
            cmd = cmd.substr(0, cut) + " \\\n      " + cmd.substr(cut + 1);
        }
        out << "  unlock with:\n    " << cmd << "\n";
    }
    for (std::size_t i = 0; i < r.waiters.size(); ++i) {
        const Waiter& w = r.waiters[i];
        line(i == 0 ? "waiting" : "", w.who.id + " since " + format_rfc3339(w.since));
    }
    std::size_t first = r.history.size() > 5 ? r.history.size() - 5 : 0;
    for (std::size_t i = first; i < r.history.size(); ++i) {
        const Transition& t = r.history[i];
        std::string entry = format_rfc3339(t.at) + " " + t.what + " " + t.who + ": " + t.why;
        line(i == first ? "history" : "", entry);
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
                                           Context& ctx, int& exit, const StoreOptions& store) {
    auto target = lock_target(config, name, ctx, exit, store);
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

std::optional<std::vector<LockStatus>> read_lock_statuses(const Config& config,
                                                          const std::vector<std::string>& names,
                                                          Context& ctx, int& exit,
                                                          StoreOptions store, Duration budget) {
    const TimePoint deadline = ctx.clock.now() + budget;
    std::vector<LockStatus> out;
    for (const auto& name : names) {
        const Duration left = deadline - ctx.clock.now();
        if (left <= Duration::zero()) {
            LockStatus s;
            s.record.name = name;
            s.error = "not read: the " + format_duration(budget) +
                      " given to read the locks (--timeout) ran out before it";
            out.push_back(std::move(s));
            continue;
        }
        store.retry_budget = left;
        auto s = read_lock_status(config, name, ctx, exit, store);
        if (!s) {
            return std::nullopt;
        }
        out.push_back(std::move(*s));
    }
    return out;
}

std::string render_status_text(const std::vector<LockStatus>& locks, TimePoint now,
                               std::size_t width) {
    std::ostringstream out;
    for (std::size_t i = 0; i < locks.size(); ++i) {
        if (i > 0) {
            out << "\n";
        }
        render_one(out, locks[i], now, width);
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
        if (!s.error.empty()) {
            entry["lock"]["state"] = "unknown";  // never "free": it could not be read
        } else if (s.record.state != LockState::free) {
            entry["unlock_command"] = unlock_command(s.record);
        }
        j["locks"].push_back(entry);
    }
    return j;
}

std::size_t terminal_width(
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
    if (auto columns = getenv("COLUMNS")) {
        try {
            int n = std::stoi(*columns);
            if (n > 0) {
                return static_cast<std::size_t>(n);
            }
        } catch (const std::exception&) {  // not a number: ask the terminal
        }
    }
    struct winsize ws {};
    if (::isatty(1) != 0 && ::ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        return ws.ws_col;
    }
    return 0;
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
    auto budget = parse_bounded_duration("--timeout", o.timeout, std::chrono::milliseconds(100));
    if (!budget) {
        ctx.err << "envgate status: " << budget.status().message() << "\n";
        return k_exit_usage;
    }
    const TimePoint started = ctx.clock.now();
    std::vector<std::string> names = lock_names(*config, o.env);
    int exit = k_exit_usage;
    auto read = read_lock_statuses(*config, names, ctx, exit,
                                   {o.kubeconfig, std::nullopt, o.context, o.namespace_}, *budget);
    if (!read) {
        return exit;
    }
    std::vector<LockStatus> out = std::move(*read);
    TimePoint now = ctx.clock.now();
    std::vector<GateRuns> gates;
    if (o.output == "prometheus" && !config->gates.empty()) {
        gates = read_gate_runs(*config, names, ctx, o.kubeconfig, o.context,
                               std::max<Duration>(*budget - (now - started), Duration::zero()));
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
        ctx.out << dump_json(render_status_json(out, now), 2) << "\n";
    } else {
        ctx.out << render_status_text(out, now, o.wide ? 0 : terminal_width(ctx.getenv));
    }
    for (const auto& s : out) {
        if (!s.error.empty()) {
            return k_exit_infra;
        }
    }
    return k_exit_success;
}

}  // namespace envgate
