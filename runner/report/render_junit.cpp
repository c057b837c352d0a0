// junit.xml as GitLab's Tests tab and merge request widget count it: one testcase per
// step, classname envgate.<env> (GitLab shows the classname as the suite), failure
// type = reason. A failed step is ONE failed testcase whose failure carries each of its
// failed runs (attempt, reason, kept log tail); a step that passed is a passed testcase,
// and each run it retried is a skipped testcase of its own beside it, so a green
// pipeline shows no failed test and still shows its retries.
//
// Why skipped, and why the text is the element's body: GitLab's parser
// (gitlab-org/gitlab lib/gitlab/ci/parsers/test/junit.rb, create_test_case) gives a
// testcase with <skipped> the status "skipped" and shows data['skipped'] as its
// output; the XML becomes a Hash through Gitlab::XmlConverter (ActiveSupport's
// XMLConverter), which turns an element with text into that text and drops its
// attributes. So the failure is the body (what GitLab shows) and, for other readers of
// JUnit, its first line is the message attribute too.
#include <cstdio>
#include <set>
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

bool failed(const StepReport& s) {
    return s.state == StepState::failed || s.state == StepState::cancelled;
}

// The verdict changes, each command on a line of its own the first time it comes.
std::string history_text(const StepReport& step) {
    std::ostringstream out;
    std::set<std::string> shown;
    for (const auto& h : step.history) {
        out << format_rfc3339(h.at) << " " << h.state << " " << h.reason << ": "
            << (h.command ? without_command(h.message, *h.command) : h.message) << "\n";
        if (h.command && shown.insert(*h.command).second) {
            out << "    " << *h.command << "\n";
        }
    }
    return out.str();
}

// "failed run 2 (attempt 2 of 6)"
std::string run_title(const FailedRun& run) {
    return "failed run " + std::to_string(run.run) + " (attempt " + std::to_string(run.attempt) +
           (run.limit > 0 ? " of " + std::to_string(run.limit) : "") + ")";
}

// One failed run as a failure or a skipped case says it: what failed (its reason in it),
// the kept tail of its log (or why there is none), then the command that reads the log
// while it lasts.
std::string run_text(const FailedRun& run) {
    std::string out = run.description + "\n";
    if (run.description.find(run.pod) == std::string::npos) {
        out += "Pod " + run.pod + ": ";  // the pod named once
    }
    out += run.log_note;
    out += run.log_tail.empty() ? "." : ":\n" + run.log_tail;
    if (!run.log_command.empty()) {
        out += "\n" + run.log_command;
    }
    return out;
}

void open_testcase(std::ostream& out, const RunReport& r, const StepReport& s,
                   const std::string& name, double seconds) {
    out << "    <testcase classname=\"envgate." << xml_escape(r.environment) << "\" name=\""
        << xml_escape(name) << "\"";
    if (!s.file.empty()) {
        out << " file=\"" << xml_escape(s.file) << "\"";
    }
    out << " time=\"" << seconds_text(seconds) << "\">\n";
}

// A run the step retried (and then passed, or is still at): skipped, not failed.
void write_retried_run(std::ostream& out, const RunReport& r, const StepReport& s,
                       const FailedRun& run) {
    open_testcase(out, r, s, s.name + " " + run_title(run) + ", retried", 0);
    out << "      <skipped message=\"" << xml_escape(first_line(run.description)) << "\">"
        << xml_escape(cap_size("Retried: " + run_text(run), k_max_field)) << "</skipped>\n"
        << "    </testcase>\n";
}

std::string failure_body(const StepReport& s) {
    std::string body = s.command ? without_command(s.message, *s.command) : s.message;
    if (s.command) {
        body += "\n\n" + *s.command;
    }
    for (const auto& run : s.failed_runs) {
        body += "\n\n" + s.name + " " + run_title(run) + ": " + run_text(run);
    }
    return body;
}

void write_testcase(std::ostream& out, const RunReport& r, const StepReport& s) {
    open_testcase(out, r, s, s.name, s.seconds());
    if (failed(s)) {
        std::string reason = s.reason.empty() ? "Failed" : s.reason;
        out << "      <failure type=\"" << xml_escape(reason) << "\" message=\""
            << xml_escape(
                   first_line(s.command ? without_command(s.message, *s.command) : s.message))
            << "\">" << xml_escape(cap_size(failure_body(s), k_max_field)) << "</failure>\n";
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
        const std::size_t retried = failed(s) ? 0 : s.failed_runs.size();
        tests += 1 + retried;
        failures += failed(s) ? 1 : 0;
        skipped += (s.state == StepState::skipped ? 1 : 0) + static_cast<int>(retried);
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
        write_testcase(out, r, s);
        if (!failed(s)) {
            for (const auto& run : s.failed_runs) {
                write_retried_run(out, r, s, run);
            }
        }
    }
    out << "  </testsuite>\n</testsuites>\n";
    return out.str();
}

}  // namespace envgate
