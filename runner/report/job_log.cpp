#include "runner/report/job_log.h"

#include <ostream>

namespace envgate {
namespace {

const char* sgr(Tone tone) {
    switch (tone) {
        case Tone::retrying:
            return "\x1b[33m";
        case Tone::failing:
            return "\x1b[35m";
        case Tone::failed:
            return "\x1b[31m";
        case Tone::succeeded:
            return "\x1b[32m";
        case Tone::plain:
        case Tone::running:
            return "";
    }
    return "";
}

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
    : m_out(out), m_clock(clock), m_settings(std::move(settings)) {}

void JobLog::add_secret(const std::string& value) {
    if (!value.empty()) {
        m_settings.secrets.push_back(value);
    }
}

std::string JobLog::mask(std::string text) const {
    for (const auto& secret : m_settings.secrets) {
        if (secret.empty()) {
            continue;
        }
        for (size_t at = text.find(secret); at != std::string::npos;
             at = text.find(secret, at + 8)) {
            text.replace(at, secret.size(), "[MASKED]");
        }
    }
    return text;
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
        m_out << mask(header) << "\n" << std::flush;
        return;
    }
    m_out << "\x1b[0Ksection_start:" << unix_seconds(m_clock.now()) << ":" << section_name(name)
          << "[collapsed=" << (collapsed ? "true" : "false") << "]\r\x1b[0K" << mask(header) << "\n"
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

void JobLog::line(Tone tone, const std::string& text) {
    const char* on = m_settings.colour ? sgr(tone) : "";
    m_out << on << mask(text) << (*on != '\0' ? "\x1b[0m" : "") << "\n" << std::flush;
}

void JobLog::command(const std::string& text) {
    m_out << "\n    " << mask(text) << "\n\n";
}

}  // namespace envgate
