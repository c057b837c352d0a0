// index.html of `envgate dashboard`: one card per lock (state with colour and label,
// holder and links, step, since when, failure and the unlock command, waiters,
// last transitions) and the last run of each environment. Readable without scripts.
#include <algorithm>
#include <sstream>

#include "locks/describe.h"
#include "runner/report/dashboard.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

using locks::LockRecord;

constexpr std::size_t k_transitions_shown = 5;

constexpr const char* k_style = R"css(
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#1f2328;background:#fff;max-width:72em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin:0 0 .5em}
h3{font-size:1em;margin:1em 0 .3em}.meta{color:#57606a}
.lock{border:1px solid #d0d7de;border-left:.5em solid #6e7781;border-radius:.4em;
padding:1em 1.2em;margin:1.2em 0}.lock.state-free{border-left-color:#1a7f37}
.lock.state-held{border-left-color:#0969da}.lock.state-failed{border-left-color:#cf222e}
.badge{display:inline-block;padding:.1em .6em;border-radius:1em;font-weight:600;
font-size:.85em;color:#fff;background:#6e7781;vertical-align:middle}
.free,.passed,.succeeded,.success{background:#1a7f37}.held,.running{background:#0969da}
.failed{background:#cf222e}.retrying,.passed-after-retries{background:#bf8700}
.failing{background:#8250df}.skipped,.unknown{background:#6e7781}.cancelled{background:#57606a}
table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid #d0d7de;
padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f6f8fa}
table.facts th{width:8em}.history td:nth-child(-n+4),time{white-space:nowrap}.failure{background:#ffebe9;border:1px solid #ff818266;
border-radius:.4em;padding:.6em 1em;margin:.8em 0}
pre{background:#f6f8fa;border:1px solid #d0d7de;padding:.6em;overflow-x:auto;
white-space:pre-wrap;user-select:all;margin:.3em 0}code{font-family:ui-monospace,monospace}
)css";

std::string esc(const std::string& text) {
    return xml_escape(text);
}

std::string css_class(const std::string& label) {
    std::string out;
    for (char c : label) {
        out.push_back(c == ' ' ? '-' : c);
    }
    return out;
}

std::string badge(const std::string& cls, const std::string& label) {
    return "<span class=\"badge " + css_class(cls) + "\">" + esc(label) + "</span>";
}

// A link for http(s) URLs only; anything else is shown as text.
std::string link(const std::string& url, const std::string& label) {
    if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) {
        return esc(label);
    }
    return "<a href=\"" + esc(url) + "\">" + esc(label) + "</a>";
}

std::string when(TimePoint t, TimePoint now) {
    return "<time datetime=\"" + format_rfc3339(t) + "\">" + format_rfc3339(t) + "</time> (" +
           format_duration(now - t) + " ago)";
}

std::string lock_label(const DashboardLock& l) {
    if (!l.error.empty()) {
        return "unknown";
    }
    switch (l.lock.state) {
        case locks::LockState::free:
            return "free";
        case locks::LockState::held:
            return "held";
        case locks::LockState::failed:
            return "failed";
    }
    return "unknown";
}

std::string lock_sentence(const DashboardLock& l) {
    std::string label = lock_label(l);
    if (label == "free") {
        return "free: the next pipeline may take it";
    }
    if (label == "held") {
        return "held: a pipeline is working on it";
    }
    if (label == "failed") {
        return "failed: locked until a person unlocks it";
    }
    return "unknown: the lock could not be read";
}

void fact(std::ostream& out, const char* label, const std::string& html) {
    if (!html.empty()) {
        out << "<tr><th>" << label << "</th><td>" << html << "</td></tr>\n";
    }
}

void write_holder(std::ostream& out, const LockRecord& r, TimePoint now) {
    const locks::Holder& h = *r.holder;
    out << "<table class=\"facts\">\n";
    fact(out, "holder",
         "<code>" + esc(h.id) + "</code>" + (h.user.empty() ? "" : " (" + esc(h.user) + ")"));
    fact(out, "pipeline", h.pipeline_url.empty() ? "" : link(h.pipeline_url, h.pipeline_url));
    fact(out, "job", h.job_url.empty() ? "" : link(h.job_url, h.job_url));
    fact(out, "step", r.step.empty() ? "" : "<code>" + esc(r.step) + "</code>");
    fact(out, "since", when(r.acquired_at, now));
    fact(out, "renewed", when(r.renewed_at, now) + ", lease " + format_duration(r.lease_duration));
    out << "</table>\n";
}

void write_failure(std::ostream& out, const LockRecord& r, TimePoint now) {
    out << "<div class=\"failure\">\n";
    if (r.failure) {
        const locks::Failure& f = *r.failure;
        out << "<p><strong>" << esc(f.reason) << "</strong>"
            << (f.step.empty() ? "" : " in step <code>" + esc(f.step) + "</code>") << ", "
            << when(f.at, now) << "</p>\n";
        if (!f.message.empty()) {
            out << "<pre class=\"message\">" << esc(f.message) << "</pre>\n";
        }
    }
    out << "<p>Once it is safe, unlock it (say why):</p>\n<pre><code class=\"unlock\">"
        << esc(locks::unlock_command(r)) << "</code></pre>\n</div>\n";
}

void write_waiters(std::ostream& out, const LockRecord& r, TimePoint now) {
    if (r.waiters.empty()) {
        return;
    }
    out << "<h3>Waiting (" << r.waiters.size() << ")</h3>\n<ol class=\"waiters\">\n";
    for (const auto& w : r.waiters) {
        out << "<li><code>" << esc(w.who.id) << "</code>";
        if (!w.who.pipeline_url.empty()) {
            out << " " << link(w.who.pipeline_url, "pipeline");
        }
        out << ", waiting since " << when(w.since, now) << "</li>\n";
    }
    out << "</ol>\n";
}

void write_history(std::ostream& out, const LockRecord& r) {
    if (r.history.empty()) {
        return;
    }
    std::size_t shown = std::min(r.history.size(), k_transitions_shown);
    out << "<h3>Last transitions</h3>\n<table class=\"history\"><thead><tr><th>#</th>"
        << "<th>when</th><th>what</th><th>who</th><th>why</th></tr></thead><tbody>\n";
    for (std::size_t i = 0; i < shown; ++i) {
        const locks::Transition& t = r.history[r.history.size() - 1 - i];  // newest first
        out << "<tr><td>" << t.seq << "</td><td>" << format_rfc3339(t.at) << "</td><td>"
            << esc(t.what) << "</td><td><code>" << esc(t.who) << "</code></td><td>" << esc(t.why)
            << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
}

std::string step_label(const StepReport& s) {
    if (s.state == StepState::passed && s.retried()) {
        return "passed after retries";
    }
    if (s.state == StepState::running && !s.history.empty()) {
        return s.history.back().state;
    }
    return step_state_name(s.state);
}

void write_step_row(std::ostream& out, const StepReport& s) {
    std::string label = step_label(s);
    out << "<tr><td>" << esc(s.name) << "</td><td>" << badge(label, label) << "</td><td>"
        << s.duration_text() << "</td><td>" << s.attempts << "</td></tr>\n";
}

void write_failed_step(std::ostream& out, const StepReport& s) {
    out << "<div class=\"failure\">\n<p>Step <code>" << esc(s.name) << "</code> "
        << step_state_name(s.state)
        << (s.reason.empty() ? "" : ": <strong>" + esc(s.reason) + "</strong>") << "</p>\n";
    if (!s.message.empty()) {
        out << "<pre class=\"message\">" << esc(s.message) << "</pre>\n";
    }
    if (s.command) {
        out << "<p>Look at it with:</p>\n<pre><code class=\"command\">" << esc(*s.command)
            << "</code></pre>\n";
    }
    out << "</div>\n";
}

void write_last_run(std::ostream& out, const DashboardLock& l, TimePoint now) {
    if (!l.last_run) {
        return;
    }
    const RunReport& r = *l.last_run;
    std::string result = r.result == RunResult::success ? "passed" : run_result_name(r.result);
    out << "<h3>Last run " << badge(result, result) << "</h3>\n<p class=\"meta\">finished "
        << when(r.finished, now);
    if (r.pipeline_url) {
        out << ", " << link(*r.pipeline_url, "pipeline");
    }
    if (r.job_url) {
        out << ", " << link(*r.job_url, "job");
    }
    out << ", from <code>" << esc(l.last_run_origin) << "</code></p>\n";
    out << "<table class=\"steps\"><thead><tr><th>step</th><th>state</th><th>duration</th>"
        << "<th>attempts</th></tr></thead><tbody>\n";
    for (const auto& s : r.steps) {
        write_step_row(out, s);
    }
    out << "</tbody></table>\n";
    if (const StepReport* failed = r.failed_step()) {
        write_failed_step(out, *failed);
    }
}

void write_lock(std::ostream& out, const DashboardLock& l, TimePoint now) {
    const LockRecord& r = l.lock;
    std::string label = lock_label(l);
    out << "<section class=\"lock state-" << label << "\" id=\"lock-" << esc(r.name) << "\">\n"
        << "<h2><code>" << esc(r.name) << "</code> " << badge(label, lock_sentence(l)) << "</h2>\n";
    if (!l.error.empty()) {
        out << "<pre class=\"message\">" << esc(l.error) << "</pre>\n";
    } else {
        if (r.holder && r.state != locks::LockState::free) {
            write_holder(out, r, now);
        }
        if (r.state == locks::LockState::failed) {
            write_failure(out, r, now);
        }
        write_waiters(out, r, now);
        write_history(out, r);
    }
    write_last_run(out, l, now);
    out << "<p class=\"meta\">" << esc(l.store) << "</p>\n</section>\n";
}

std::string overview(const DashboardModel& m) {
    int counts[4] = {0, 0, 0, 0};  // free, held, failed, unknown
    for (const auto& l : m.locks) {
        std::string label = lock_label(l);
        ++counts[label == "free" ? 0 : label == "held" ? 1 : label == "failed" ? 2 : 3];
    }
    std::ostringstream out;
    out << m.locks.size() << (m.locks.size() == 1 ? " lock: " : " locks: ") << counts[0]
        << " free, " << counts[1] << " held, " << counts[2] << " failed";
    if (counts[3] > 0) {
        out << ", " << counts[3] << " unknown";
    }
    return out.str();
}

}  // namespace

std::string render_dashboard(const DashboardModel& m, TimePoint now) {
    std::ostringstream out;
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        << "<title>envgate dashboard</title><style>" << k_style << "</style></head><body>\n"
        << "<h1>envgate dashboard</h1>\n<p class=\"meta\">" << overview(m) << ". Generated "
        << "<time datetime=\"" << format_rfc3339(now) << "\">" << format_rfc3339(now)
        << "</time>; this page does not refresh itself.</p>\n";
    for (const auto& note : m.notes) {
        out << "<p class=\"meta\">note: " << esc(note) << "</p>\n";
    }
    for (const auto& l : m.locks) {
        write_lock(out, l, now);
    }
    out << "</body></html>\n";
    return out.str();
}

}  // namespace envgate
