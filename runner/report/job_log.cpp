#include "runner/report/job_log.h"

#include <ostream>

#include "runner/base/vocab/enum_names.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

// The SGR colour of each tone; plain and running lines are not coloured.
constexpr EnumName<Tone> k_tone_colours[] = {{Tone::retrying, "\x1b[33m"},
                                             {Tone::failing, "\x1b[35m"},
                                             {Tone::failed, "\x1b[31m"},
                                             {Tone::succeeded, "\x1b[32m"}};

long unix_seconds(TimePoint t) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
}

}  // namespace

Tone tone_for_state(const std::string& state) {
    if (state == "running" || state == "suspended") {
        return Tone::running;
    }
    if (state == "retrying") {
        return Tone::retrying;
    }
    if (state == "failing") {
        return Tone::failing;
    }
    if (state == "failed") {
        return Tone::failed;
    }
    if (state == "succeeded") {
        return Tone::succeeded;
    }
    return Tone::plain;
}

JobLog::JobLog(std::ostream& out, Clock& clock, LogSettings settings)
    : m_out(out), m_clock(clock), m_settings(std::move(settings)) {
    for (const auto& secret : m_settings.secrets) {
        envgate::add_secret(secret);
    }
}

void JobLog::add_secret(const std::string& value) {
    envgate::add_secret(value);
}

std::string JobLog::mask(std::string text) const {
    return mask_secrets(std::move(text));
}

std::string JobLog::section_name(const std::string& name) {
    std::string out;
    for (char c : name) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
        out.push_back(ok ? c : '_');
    }
    return out;
}

void JobLog::section_start(const std::string& name, const std::string& header, bool collapsed) {
    if (!m_settings.sections) {
        m_out << clean(header) << "\n" << std::flush;
        return;
    }
    m_out << "\x1b[0Ksection_start:" << unix_seconds(m_clock.now()) << ":" << section_name(name)
          << "[collapsed=" << (collapsed ? "true" : "false") << "]\r\x1b[0K" << clean(header)
          << "\n"
          << std::flush;
}

void JobLog::section_end(const std::string& name) {
    if (!m_settings.sections) {
        return;
    }
    m_out << "\x1b[0Ksection_end:" << unix_seconds(m_clock.now()) << ":" << section_name(name)
          << "\r\x1b[0K\n"
          << std::flush;
}

// What a pod wrote (termination messages, log tails) reaches the log only through
// here: without escapes or carriage returns (no forged `section_end`, no overwritten
// lines) and with every further line indented under the first (no forged "success").
std::string JobLog::clean(const std::string& text) const {
    std::string out = mask(strip_control(text));
    for (std::size_t at = out.find('\n'); at != std::string::npos; at = out.find('\n', at + 1)) {
        out.insert(at + 1, "    ");
    }
    return out;
}

void JobLog::line(Tone tone, const std::string& text) {
    const char* on = m_settings.colour ? name_of(k_tone_colours, tone, "") : "";
    m_out << on << clean(text) << (*on != '\0' ? "\x1b[0m" : "") << "\n" << std::flush;
}

void JobLog::output(const std::string& text) {
    m_out << mask(text) << "\n" << std::flush;
}

void JobLog::command(const std::string& text) {
    m_out << "\n    " << clean(text) << "\n\n";
}

}  // namespace envgate
