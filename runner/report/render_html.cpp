// summary.html: the Markdown summary as one self-contained page (inline CSS, no
// scripts, no external URLs). A retrying gate has its own colour and label.
#include <set>
#include <sstream>

#include "runner/report/html_style.h"
#include "runner/report/render.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

// Only what the dashboard does not share (report/html_style.h). In a narrow window the
// environment column, which the title names, gives its room to the messages.
constexpr const char* k_style = R"css(
h1{font-size:1.4em}table{width:100%;margin:1em 0}details{margin:.4em 0}
summary{cursor:pointer}@media (max-width:720px){.steps tr>:first-child{display:none}}
)css";

std::string badge(const std::string& label) {
    return envgate::badge(label, label);
}

// "retried run 2 (attempt 2 of 6): pod X failed (Error): ...", the pod named once, and
// where its log tail comes from unless the run before said the same.
void write_failed_run(std::ostream& out, const StepReport& s, const FailedRun& run,
                      const FailedRun* before) {
    // A run the gate went on after is a retry; the last run of a failed gate failed it.
    const bool last = s.state != StepState::passed && &run == &s.failed_runs.back();
    out << "<details><summary>"
        << (last ? envgate::badge("failed-run", "failed") : envgate::badge("retrying", "retried"))
        << " run " << run.run << " (attempt " << run.attempt;
    if (run.limit > 0) {
        out << " of " << run.limit;
    }
    out << ")";
    if (run.description.find(run.pod) == std::string::npos) {
        out << ", pod <code>" << xml_escape(run.pod) << "</code>";
    }
    out << ": " << xml_escape(run.description) << "</summary>";
    if (before == nullptr || before->log_note != run.log_note) {
        out << "<p>" << xml_escape(run.log_note) << "</p>";
    }
    if (!run.log_tail.empty()) {
        out << "<pre><code>" << xml_escape(run.log_tail) << "</code></pre>";
    }
    out << "</details>";
}

void write_row(std::ostream& out, const RunReport& r, const StepReport& s) {
    std::string message = s.state == StepState::skipped ? s.skipped_why : s.message;
    out << "<tr><td>" << xml_escape(r.environment) << "</td><td>" << xml_escape(s.name)
        << "</td><td>" << badge(step_label(s)) << "</td><td>" << s.duration_text() << "</td><td>"
        << s.attempts << "</td><td>";
    if ((s.state == StepState::failed || s.state == StepState::cancelled) && !s.reason.empty()) {
        out << "<strong>" << xml_escape(s.reason) << "</strong>: ";
    }
    // Each command once, in a code block of its own, and not inside the message too.
    std::set<std::string> shown;
    out << xml_escape(s.command ? without_command(message, *s.command) : message);
    if (s.command) {
        out << "<pre><code>" << xml_escape(*s.command) << "</code></pre>";
        shown.insert(*s.command);
    }
    // The failed runs kept are the retries, with their logs; older reports have only the
    // retry lines of the history.
    for (const auto& h : s.history) {
        if (h.state != "retrying" || !s.failed_runs.empty()) {
            continue;
        }
        std::string text = h.command ? without_command(h.message, *h.command) : h.message;
        out << "<div>" << badge("retrying") << " " << xml_escape(first_line(text));
        if (h.command && shown.insert(*h.command).second) {
            out << "<pre><code>" << xml_escape(*h.command) << "</code></pre>";
        }
        out << "</div>";
    }
    for (std::size_t i = 0; i < s.failed_runs.size(); ++i) {
        write_failed_run(out, s, s.failed_runs[i], i > 0 ? &s.failed_runs[i - 1] : nullptr);
    }
    out << "</td></tr>\n";
}

// Links to the pipeline, the job and the project's environments, as far as known.
void write_links(std::ostream& out, const RunReport& r) {
    std::string links;
    for (const Link& l : run_links(r)) {
        links += (links.empty() ? "<a href=\"" : " · <a href=\"") + xml_escape(l.url) + "\">" +
                 l.label + "</a>";
    }
    if (!links.empty()) {
        out << "<p class=\"links\">" << links << "</p>\n";
    }
}

}  // namespace

std::string render_html(const RunReport& r) {
    std::ostringstream out;
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        << "<title>envgate: " << xml_escape(r.environment) << "</title><style>" << k_page_style
        << k_style << "</style></head><body>\n";
    std::string result = r.result == RunResult::success ? "passed" : run_result_name(r.result);
    out << "<h1>envgate: " << xml_escape(r.environment) << " " << badge(result) << "</h1>\n";
    write_links(out, r);
    out << "<table "
           "class=\"steps\"><thead><tr><th>environment</th><th>step</th><th>state</"
           "th><th>duration</th>"
        << "<th>attempts</th><th>message</th></tr></thead><tbody>\n";
    for (const auto& s : r.steps) {
        write_row(out, r, s);
    }
    out << "</tbody></table>\n";
    if (r.lock.name.empty()) {
        out << "</body></html>\n";
        return out.str();  // a command that does not take the lock (envgate gate)
    }
    out << "<h2>Lock</h2>\n<p><code>" << xml_escape(r.lock.name) << "</code> "
        << badge(lock_state_name(r.lock.state));
    if (r.lock.state != LockState::free && !r.lock.holder.empty()) {
        out << " held by <code>" << xml_escape(r.lock.holder) << "</code>";
    }
    out << "</p>\n";
    if (r.lock.unlock_command) {
        out << "<p>" << xml_escape(unlock_hint(r)) << "</p>\n<pre><code>"
            << xml_escape(*r.lock.unlock_command) << "</code></pre>\n";
    }
    out << "</body></html>\n";
    return out.str();
}

}  // namespace envgate
