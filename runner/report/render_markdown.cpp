// summary.md: a table of steps (environment, step, state, duration, attempts,
// message), then each command to run as a code block, each failed run of a gate
// with its kept log tail (collapsed), then the lock's state.
#include <algorithm>
#include <sstream>

#include "runner/report/render.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

std::string md_cell(const std::string& text) {
    std::string out;
    for (char c : first_line(text, 300)) {
        if (c == '|') {
            out += "\\|";
        } else {
            out.push_back(c);
        }
    }
    return out;
}

// A retrying gate is labelled apart from a running or passed one.
std::string state_label(const StepReport& s) {
    std::string label = step_state_name(s.state);
    if (s.state == StepState::passed && s.retried()) {
        return "passed after retries";
    }
    if (s.state == StepState::running && !s.history.empty()) {
        return s.history.back().state;
    }
    return label;
}

void write_commands(std::ostream& out, const RunReport& r) {
    bool any = false;
    for (const auto& s : r.steps) {
        if (!s.command) {
            continue;
        }
        if (!any) {
            out << "\n### Commands\n";
            any = true;
        }
        out << "\n"
            << s.name << " (" << md_cell(s.reason) << "):\n\n```sh\n"
            << strip_control(*s.command) << "\n```\n";
    }
}

// "[pipeline](URL) · [job](URL) · [environments](URL)", as far as the CI variables tell.
void write_links(std::ostream& out, const RunReport& r) {
    std::string links;
    for (const Link& l : run_links(r)) {
        links += (links.empty() ? "[" : " · [") + l.label + "](" + strip_control(l.url) + ")";
    }
    if (!links.empty()) {
        out << links << "\n\n";
    }
}

// A code fence longer than every run of backticks in `text`, so no log line closes it.
std::string fence_for(const std::string& text) {
    std::size_t longest = 0;
    std::size_t run = 0;
    for (char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

void write_failed_runs(std::ostream& out, const RunReport& r) {
    bool any = false;
    for (const auto& s : r.steps) {
        for (const auto& run : s.failed_runs) {
            if (!any) {
                out << "\n### Failed runs\n";
                any = true;
            }
            out << "\n**" << s.name << ", failed run " << run.run << "** (attempt " << run.attempt;
            if (run.limit > 0) {
                out << " of " << run.limit;
            }
            if (run.description.find(run.pod) == std::string::npos) {
                out << ", pod `" << md_cell(run.pod) << "`";
            }
            out << "): " << md_cell(run.description) << "\n";
            if (run.log_tail.empty()) {
                out << "\n" << md_cell(run.log_note) << ".\n";
                continue;
            }
            std::string tail = strip_control(run.log_tail);
            std::string fence = fence_for(tail);
            out << "\n<details><summary>" << md_cell(run.log_note) << "</summary>\n\n"
                << fence << "text\n"
                << tail << "\n"
                << fence << "\n\n</details>\n";
        }
    }
}

}  // namespace

std::string render_markdown(const RunReport& r) {
    std::ostringstream out;
    out << "## envgate: " << r.environment << " — " << run_result_name(r.result) << "\n\n";
    write_links(out, r);
    out << "| environment | step | state | duration | attempts | message |\n";
    out << "|---|---|---|---|---|---|\n";
    for (const auto& s : r.steps) {
        std::string message = s.state == StepState::skipped ? s.skipped_why : s.message;
        if (s.command) {
            message = without_command(message, *s.command);  // under Commands, once
        }
        out << "| " << md_cell(r.environment) << " | " << md_cell(s.name) << " | " << state_label(s)
            << " | " << s.duration_text() << " | " << s.attempts << " | " << md_cell(message)
            << " |\n";
    }
    write_commands(out, r);
    write_failed_runs(out, r);
    if (r.lock.name.empty()) {
        return out.str();  // a command that does not take the lock (envgate gate)
    }
    out << "\n### Lock\n\n`" << r.lock.name << "` is **" << lock_state_name(r.lock.state) << "**";
    if (r.lock.state != LockState::free && !r.lock.holder.empty()) {
        out << ", held by `" << md_cell(r.lock.holder) << "`";
    }
    out << ".\n";
    if (r.lock.update_error) {
        out << "\n**The lock was not updated at the end of the run:** "
            << strip_control(*r.lock.update_error) << "\n";
    }
    if (r.lock.unlock_command) {
        out << "\n"
            << unlock_hint(r) << "\n\n```sh\n"
            << strip_control(*r.lock.unlock_command) << "\n```\n";
    }
    return out.str();
}

}  // namespace envgate
