// junit.xml: one testcase per step, classname envgate.<env> (GitLab shows the
// classname as the suite). Failure type = reason; retries in system-out. Each failed
// run of a gate is a failed testcase of its own ("<gate> failed run K (attempt N of
// M)"), with its
// kept log tail: GitLab's Tests tab drops the system-out of passed testcases.
#include <cstdio>
#include <sstream>

#include "runner/report/render.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

constexpr size_t k_max_field = 256 * 1024;  // keeps the file far below GitLab's 30 MB

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    return buf;
}

std::string history_text(const StepReport& step) {
    std::ostringstream out;
    for (const auto& h : step.history) {
        out << format_rfc3339(h.at) << " " << h.state << " " << h.reason << ": " << h.message
            << "\n";
        if (h.command) {
            out << "    " << *h.command << "\n";
        }
    }
    return out.str();
}

// What a failure body says of `run`'s log: the kept tail (or why there is none), then
// the command that reads the log while it lasts.
std::string log_text(const FailedRun& run) {
    std::string out = "Pod " + run.pod + ": " + run.log_note;
    out += run.log_tail.empty() ? "." : ":\n" + run.log_tail;
    if (!run.log_command.empty()) {
        out += "\n\n" + run.log_command;
    }
    return out;
}

void write_failed_run(std::ostream& out, const RunReport& r, const StepReport& s,
                      const FailedRun& run) {
    std::string name = s.name + " failed run " + std::to_string(run.run) + " (attempt " +
                       std::to_string(run.attempt) +
                       (run.limit > 0 ? " of " + std::to_string(run.limit) : "") + ")";
    out << "    <testcase classname=\"envgate." << xml_escape(r.environment) << "\" name=\""
        << xml_escape(name) << "\"";
    if (!s.file.empty()) {
        out << " file=\"" << xml_escape(s.file) << "\"";
    }
    out << " time=\"0.000\">\n      <failure type=\""
        << xml_escape(run.reason.empty() ? "Failed" : run.reason) << "\" message=\""
        << xml_escape(first_line(run.description)) << "\">"
        << xml_escape(cap_size(run.description + "\n\n" + log_text(run), k_max_field))
        << "</failure>\n"
        << "    </testcase>\n";
}

void write_testcase(std::ostream& out, const RunReport& r, const StepReport& s) {
    out << "    <testcase classname=\"envgate." << xml_escape(r.environment) << "\" name=\""
        << xml_escape(s.name) << "\"";
    if (!s.file.empty()) {
        out << " file=\"" << xml_escape(s.file) << "\"";
    }
    out << " time=\"" << seconds_text(s.seconds()) << "\">\n";
    if (s.state == StepState::failed || s.state == StepState::cancelled) {
        std::string reason = s.reason.empty() ? "Failed" : s.reason;
        std::string body = s.message;
        if (s.command) {
            body += "\n\n" + *s.command;
        }
        if (!s.failed_runs.empty()) {
            body += "\n\nThe last failed run. " + log_text(s.failed_runs.back());
        }
        out << "      <failure type=\"" << xml_escape(reason) << "\" message=\""
            << xml_escape(first_line(s.message)) << "\">" << xml_escape(cap_size(body, k_max_field))
            << "</failure>\n";
    } else if (s.state == StepState::skipped) {
        out << "      <skipped message=\"" << xml_escape(first_line(s.skipped_why)) << "\"/>\n";
    }
    if (!s.history.empty()) {
        out << "      <system-out>" << xml_escape(cap_size(history_text(s), k_max_field))
            << "</system-out>\n";
    }
    out << "    </testcase>\n";
}

}  // namespace

std::string render_junit(const RunReport& r) {
    int failures = 0;
    int skipped = 0;
    std::size_t tests = 0;
    double total = 0;
    for (const auto& s : r.steps) {
        tests += 1 + s.failed_runs.size();
        failures += static_cast<int>(s.failed_runs.size());
        failures += (s.state == StepState::failed || s.state == StepState::cancelled) ? 1 : 0;
        skipped += s.state == StepState::skipped ? 1 : 0;
        total += s.seconds();
    }
    std::ostringstream out;
    std::string counts = " tests=\"" + std::to_string(tests) + "\" failures=\"" +
                         std::to_string(failures) + "\" errors=\"0\" skipped=\"" +
                         std::to_string(skipped) + "\" time=\"" + seconds_text(total) + "\"";
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << "<testsuites name=\"envgate\"" << counts << ">\n";
    out << "  <testsuite name=\"envgate." << xml_escape(r.environment) << "\"" << counts
        << " timestamp=\"" << format_rfc3339(r.started) << "\">\n";
    for (const auto& s : r.steps) {
        for (const auto& run : s.failed_runs) {
            write_failed_run(out, r, s, run);
        }
        write_testcase(out, r, s);
    }
    out << "  </testsuite>\n</testsuites>\n";
    return out.str();
}

}  // namespace envgate
