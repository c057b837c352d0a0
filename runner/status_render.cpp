#include "runner/status_render.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "locks/describe.h"
#include "locks/record_json.h"

namespace envgate {
namespace {

using namespace envgate::locks;

// The column values start at: two spaces and a label padded to nine.
constexpr std::size_t k_indent = 11;
// Narrower terminals still get this much text per line.
constexpr std::size_t k_min_text = 20;
// A failure text longer than this is printed once per lock; where it comes again (the
// history's fail entry, the unlock that freed the lock from it) it is referred to.
constexpr std::size_t k_print_once = 60;

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

// The long failure texts printed so far in one lock's entry, each with the words that
// refer to it: the history quotes a failure in its fail entry and again in the unlock
// that followed, and `failure` shows it already.
class PrintedFailures {
  public:
    void add(const std::string& text, std::string reference) {
        if (text.size() > k_print_once) {
            m_printed.emplace_back(text, std::move(reference));
        }
    }
    // `why` with a failure printed before replaced by its reference.
    std::string refer(std::string why) const {
        for (const auto& [text, reference] : m_printed) {
            auto at = why.find(text);
            if (at != std::string::npos) {
                return why.replace(at, text.size(), reference);
            }
        }
        return why;
    }

  private:
    std::vector<std::pair<std::string, std::string>> m_printed;
};

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
    PrintedFailures printed;
    if (r.state == LockState::failed) {
        line("failure", describe_failure(r));
        if (r.failure) {
            printed.add(failure_text(*r.failure), "the failure above");
            printed.add(r.failure->message, "the failure above");  // a vanished holder's
        }
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
        std::string why = printed.refer(t.why);
        if (why == t.why) {
            printed.add(failure_in(t), "the failure of " + format_rfc3339(t.at) + " above");
        }
        std::string entry = format_rfc3339(t.at) + " " + t.what + " " + t.who + ": " + why;
        line(i == first ? "history" : "", entry);
    }
}

}  // namespace

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

}  // namespace envgate
