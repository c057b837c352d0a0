// summary.md: a table of steps (environment, step, state, duration, attempts, message:
// on one line, the run it names kept), then each command to run as a code block, each
// failed run of a gate with its kept log tail (collapsed), then the lock's state.
#include <algorithm>
#include <sstream>

#include "runner/report/render.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

// At most this many bytes of text in a table cell, so that a row stays readable; a
// step's message aims at it and keeps at least k_failure_text_bytes of the failure it
// names, up to k_cell_max_bytes in all (message_cell).
constexpr std::size_t k_cell_bytes = 300;
constexpr std::size_t k_failure_text_bytes = 120;
constexpr std::size_t k_cell_max_bytes = 1000;
// At most this many bytes of one line of text in a paragraph.
constexpr std::size_t k_paragraph_bytes = 8 * 1024;

std::string md_escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '|') {
            out += "\\|";
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::string md_cell(const std::string& text) {
    return md_escape(first_line(text, k_cell_bytes));
}

// Whether byte `at` of `text` continues a UTF-8 sequence (a cut there would split it).
bool continues_utf8(std::string_view text, std::size_t at) {
    return at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
}

// `text` in at most `max` bytes: its start and its end, at word boundaries, joined by
// " … " (3 bytes of `max` go to the ellipsis). Unchanged when it fits.
std::string without_middle(std::string_view text, std::size_t max) {
    constexpr std::string_view k_gap = " … ";
    if (text.size() <= max || max < 2 * k_gap.size()) {
        return std::string(text.substr(0, std::min(text.size(), max)));
    }
    const std::size_t room = max - 3;  // " … " shows as 3 columns
    std::size_t head = room * 3 / 5;
    std::size_t tail_from = text.size() - (room - head);
    if (std::size_t space = text.rfind(' ', head);
        space != std::string_view::npos && space > head / 2) {
        head = space;
    }
    while (head > 0 && continues_utf8(text, head)) {
        --head;
    }
    if (std::size_t space = text.find(' ', tail_from);
        space != std::string_view::npos && space - tail_from < (room - head) / 2) {
        tail_from = space + 1;
    }
    while (continues_utf8(text, tail_from)) {
        ++tail_from;
    }
    std::string_view start = text.substr(0, head);
    while (!start.empty() && (start.back() == ' ' || start.back() == ',' || start.back() == ';' ||
                              start.back() == ':')) {
        start.remove_suffix(1);
    }
    return std::string(start) + std::string(k_gap) + std::string(text.substr(tail_from));
}

// A step's message as its table cell, on one line. Only the free text of the failure it
// names (a termination message, an eviction's reason: the failed runs below carry it
// whole) gives way to keep the row near k_cell_bytes, down to k_failure_text_bytes of
// it; the rest stays, for what tells which run it is about sits all over it (the Job and
// the pod, the reasons, the counts "(pod 2 of 4 failed, 2 left)" near its end). A row
// still longer than k_cell_max_bytes gives up its middle.
std::string message_cell(const std::string& message, const StepReport& s) {
    std::string line = strip_control(message);
    std::replace(line.begin(), line.end(), '\n', ' ');
    for (auto run = s.failed_runs.rbegin(); run != s.failed_runs.rend(); ++run) {
        const std::string named = strip_control(run->description);
        const std::size_t at = line.size() > k_cell_bytes ? line.find(named) : std::string::npos;
        if (at == std::string::npos || named.empty()) {
            continue;
        }
        const std::size_t excess = line.size() - k_cell_bytes;
        const std::size_t keep = std::max<std::size_t>(
            named.size() > excess ? named.size() - excess : 0, k_failure_text_bytes);
        line.replace(at, named.size(), without_middle(named, keep));
        break;
    }
    return md_escape(without_middle(line, k_cell_max_bytes));
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
        if (s.failed_runs_forgotten > 0) {
            // A rerun's memory keeps the newest runs only: say that the list is not all.
            out << (any ? "" : "\n### Failed runs\n") << "\n"
                << s.failed_runs_forgotten << " older failed run(s) of " << md_cell(s.name)
                << " are no longer remembered (the gate's memory keeps the newest runs "
                   "only): those whose pods are gone are not listed.\n";
            any = true;
        }
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
            // A paragraph, not a cell: the whole description (a termination message is
            // at most 4 KB), which the table's message may shorten.
            out << "): " << md_escape(first_line(run.description, k_paragraph_bytes)) << "\n";
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
            << " | " << s.duration_text() << " | " << s.attempts << " | "
            << message_cell(message, s) << " |\n";
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
