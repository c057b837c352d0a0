// index.html of `envgate dashboard`: one full-width card per lock, failed ones first
// (state with colour and label, holder and links, step, since when, failure and the
// unlock command, waiters, last transitions), the last run of each environment and its
// figures. Each fact is said once; readable without scripts, light or dark.
#include <fmt/format.h>
#include <algorithm>
#include <set>
#include <sstream>

#include "locks/describe.h"
#include "runner/report/dashboard.h"
#include "runner/report/html_style.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

using locks::LockRecord;

constexpr std::size_t k_transitions_shown = 5;

// Only what summary.html does not share (report/html_style.h).
constexpr const char* k_style = R"css(
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin:0 0 .5em}
h3{font-size:1em;margin:1em 0 .3em}
.lock{border:1px solid var(--border);border-left:.5em solid #59636e;border-radius:.4em;
padding:1em 1.2em;margin:1.2em 0}.lock.state-free{border-left-color:#1a7f37}
.lock.state-held{border-left-color:#0969da}.lock.state-failed{border-left-color:#cf222e}
table.facts th{width:8em}.history td:nth-child(-n+3),time{white-space:nowrap}
.failure{background:var(--fail-bg);border:1px solid var(--fail-border);border-radius:.4em;
padding:.6em 1em;margin:.8em 0}
)css";

std::string esc(const std::string& text) {
    return xml_escape(text);
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
    return locks::state_name(l.lock.state);
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

// The last segment of a URL's path ("1234" of .../pipelines/1234): the link's text.
std::string url_tail(const std::string& url) {
    std::string path = url.substr(0, url.find_first_of("?#"));
    while (!path.empty() && path.back() == '/') {
        path.pop_back();
    }
    return path.substr(path.find_last_of('/') + 1);
}

// The holder's facts. Once the lock failed its lease no longer matters (nothing
// renews it and it does not expire), and the failure names the step.
void write_holder(std::ostream& out, const LockRecord& r, TimePoint now) {
    const locks::Holder& h = *r.holder;
    const bool failed = r.state == locks::LockState::failed;
    out << "<table class=\"facts\">\n";
    fact(out, "holder",
         "<code>" + esc(h.id) + "</code>" + (h.user.empty() ? "" : " (" + esc(h.user) + ")"));
    fact(out, "pipeline",
         h.pipeline_url.empty() ? "" : link(h.pipeline_url, url_tail(h.pipeline_url)));
    fact(out, "job", h.job_url.empty() ? "" : link(h.job_url, url_tail(h.job_url)));
    fact(out, "step", r.step.empty() || failed ? "" : "<code>" + esc(r.step) + "</code>");
    fact(out, "since", when(r.acquired_at, now));
    if (!failed) {
        fact(out, "renewed",
             when(r.renewed_at, now) + ", lease " + format_duration(r.lease_duration));
    }
    out << "</table>\n";
}

// True when the last run shown is the one that failed the lock (same pipeline, same
// step): its message is shown there, not twice.
bool failure_shown_by_last_run(const DashboardLock& l) {
    const StepReport* failed = l.last_run ? l.last_run->failed_step() : nullptr;
    return failed != nullptr && l.lock.failure && l.lock.holder &&
           failed->name == l.lock.failure->step &&
           l.last_run->pipeline_url.value_or("") == l.lock.holder->pipeline_url;
}

void write_failure(std::ostream& out, const DashboardLock& l, TimePoint now) {
    const LockRecord& r = l.lock;
    out << "<div class=\"failure\">\n";
    if (r.failure) {
        const locks::Failure& f = *r.failure;
        out << "<p><strong>" << esc(f.reason) << "</strong>"
            << (f.step.empty() ? "" : " in step <code>" + esc(f.step) + "</code>") << ", "
            << when(f.at, now) << (failure_shown_by_last_run(l) ? " (the last run below)" : "")
            << "</p>\n";
        if (!f.message.empty() && !failure_shown_by_last_run(l)) {
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

// A text of at least this many bytes is shown once per card; a repeat points to it.
constexpr std::size_t k_long_text = 60;

// `text` with each occurrence of `long_text` replaced by `pointer`.
std::string replace_all(std::string text, const std::string& long_text,
                        const std::string& pointer) {
    for (auto at = text.find(long_text); at != std::string::npos;
         at = text.find(long_text, at + pointer.size())) {
        text.replace(at, long_text.size(), pointer);
    }
    return text;
}

// The "why" of each transition, the failure message each repeats said once: a message
// the card shows in full elsewhere (`elsewhere`, with where it is) is pointed to, and a
// transition repeating an earlier one's why (an unlock's "was failed by ...") names it.
std::vector<std::string> history_whys(
    const LockRecord& r, const std::vector<std::pair<std::string, std::string>>& elsewhere) {
    std::vector<std::string> whys;
    for (std::size_t i = 0; i < r.history.size(); ++i) {
        std::string why = r.history[i].why;
        for (std::size_t j = 0; j < i; ++j) {
            const std::string& earlier = r.history[j].why;
            if (earlier.size() >= k_long_text && why != earlier) {
                why = replace_all(why, earlier, "as in #" + std::to_string(r.history[j].seq));
            }
        }
        for (const auto& [text, where] : elsewhere) {
            if (text.size() >= k_long_text) {
                why = replace_all(why, ": " + text, " (its message: " + where + ")");
            }
        }
        whys.push_back(std::move(why));
    }
    return whys;
}

void write_history(std::ostream& out, const LockRecord& r,
                   const std::vector<std::pair<std::string, std::string>>& elsewhere) {
    if (r.history.empty()) {
        return;
    }
    std::vector<std::string> whys = history_whys(r, elsewhere);
    std::size_t shown = std::min(r.history.size(), k_transitions_shown);
    out << "<h3>Last transitions</h3>\n<table class=\"history\"><thead><tr><th>#</th>"
        << "<th>when</th><th>what</th><th>who</th><th>why</th></tr></thead><tbody>\n";
    for (std::size_t i = 0; i < shown; ++i) {
        const std::size_t at = r.history.size() - 1 - i;  // newest first
        const locks::Transition& t = r.history[at];
        out << "<tr><td>" << t.seq << "</td><td>" << format_rfc3339(t.at) << "</td><td>"
            << esc(t.what) << "</td><td><code>" << esc(t.who) << "</code></td><td>" << esc(whys[at])
            << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
}

// The long messages the card shows outside its history, with where they are.
std::vector<std::pair<std::string, std::string>> shown_elsewhere(const DashboardLock& l) {
    std::vector<std::pair<std::string, std::string>> out;
    const StepReport* failed = l.last_run ? l.last_run->failed_step() : nullptr;
    if (failed != nullptr && !failed->message.empty()) {
        out.emplace_back(failed->message, "the last run's failure, below");
    }
    if (l.lock.state == locks::LockState::failed && l.lock.failure &&
        !failure_shown_by_last_run(l)) {
        out.emplace_back(l.lock.failure->message, "the failure, above");
    }
    return out;
}

void write_step_row(std::ostream& out, const StepReport& s) {
    std::string label = step_label(s);
    out << "<tr><td>" << esc(s.name) << "</td><td>" << badge(label, label) << "</td><td>"
        << s.duration_text() << "</td><td>" << s.attempts << "</td></tr>\n";
}

// `s`, the failed step of the last run. A lock step that failed on the card's failed lock
// (the run found it held after a failure) only points to that failure and its unlock.
void write_failed_step(std::ostream& out, const StepReport& s, const LockRecord& lock) {
    out << "<div class=\"failure\">\n<p>Step <code>" << esc(s.name) << "</code> "
        << step_state_name(s.state)
        << (s.reason.empty() ? "" : ": <strong>" + esc(s.reason) + "</strong>");
    if (s.kind == "lock" && lock.state == locks::LockState::failed) {
        out << " (the lock's failure above)</p>\n</div>\n";
        return;
    }
    out << "</p>\n";
    if (!s.message.empty()) {
        out << "<pre class=\"message\">"
            << esc(s.command ? without_command(s.message, *s.command) : s.message) << "</pre>\n";
    }
    if (s.command) {
        out << "<p>Look at it with:</p>\n<pre><code class=\"command\">" << esc(*s.command)
            << "</code></pre>\n";
    }
    out << "</div>\n";
}

// The run's links, but those the holder's facts show already.
std::string run_links(const RunReport& r, const LockRecord& lock) {
    std::set<std::string> shown;
    if (lock.holder && lock.state != locks::LockState::free) {
        shown = {lock.holder->pipeline_url, lock.holder->job_url};
    }
    std::string out;
    if (r.pipeline_url && !shown.contains(*r.pipeline_url)) {
        out += ", " + link(*r.pipeline_url, "pipeline");
    }
    if (r.job_url && !shown.contains(*r.job_url)) {
        out += ", " + link(*r.job_url, "job");
    }
    return out;
}

void write_last_run(std::ostream& out, const DashboardLock& l, TimePoint now) {
    if (!l.last_run) {
        return;
    }
    const RunReport& r = *l.last_run;
    std::string result = r.result == RunResult::success ? "passed" : run_result_name(r.result);
    out << "<h3>Last run " << badge(result, result) << "</h3>\n<p class=\"meta\">finished "
        << when(r.finished, now) << run_links(r, l.lock) << ", from <code>"
        << esc(l.last_run_origin) << "</code></p>\n";
    out << "<table class=\"steps\"><thead><tr><th>step</th><th>state</th><th>duration</th>"
        << "<th>attempts</th></tr></thead><tbody>\n";
    for (const auto& s : r.steps) {
        write_step_row(out, s);
    }
    out << "</tbody></table>\n";
    if (const StepReport* failed = r.failed_step()) {
        write_failed_step(out, *failed, l.lock);
    }
}

// A figure's value as a person reads it: times as RFC 3339, seconds as a duration too.
std::string figure_value(const Figure& f) {
    std::string value = fmt::format("{}", f.value);
    auto ends = [&](const char* suffix) { return f.name.ends_with(suffix); };
    if (ends("_timestamp_seconds")) {
        return format_rfc3339(TimePoint(std::chrono::seconds(static_cast<long long>(f.value))));
    }
    if (ends("_seconds") && f.value == 0) {
        return "0 (under 1s)";  // not "0 (0ms)": a Job's times are whole seconds
    }
    if (ends("_seconds")) {
        auto ms = std::chrono::milliseconds(static_cast<long long>(f.value * 1000));
        return value + " (" + format_duration(std::chrono::duration_cast<Duration>(ms)) + ")";
    }
    return value;
}

void write_figures(std::ostream& out, const DashboardLock& l) {
    if (l.figures.empty()) {
        return;
    }
    out << "<h3>Figures</h3>\n<table class=\"figures\"><thead><tr><th>figure</th>"
        << "<th>labels</th><th>value</th></tr></thead><tbody>\n";
    for (const Figure& f : l.figures) {
        out << "<tr title=\"" << esc(f.help) << "\"><td><code>" << esc(f.name) << "</code></td><td>"
            << esc(f.labels) << "</td><td>" << esc(figure_value(f)) << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
}

void write_lock(std::ostream& out, const DashboardLock& l, TimePoint now, bool show_store) {
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
            write_failure(out, l, now);
        }
        write_waiters(out, r, now);
        write_history(out, r, shown_elsewhere(l));
    }
    write_last_run(out, l, now);
    write_figures(out, l);
    if (show_store && l.error.rfind(l.store, 0) != 0) {
        out << "<p class=\"meta\">" << esc(l.store) << "</p>\n";
    }
    out << "</section>\n";
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

// Where a lock's card goes: what needs a person first.
int rank(const DashboardLock& l) {
    std::string label = lock_label(l);
    bool run_failed = l.last_run && l.last_run->result != RunResult::success;
    return label == "failed"    ? 0
           : label == "unknown" ? 1
           : run_failed         ? 2
           : label == "held"    ? 3
                                : 4;
}

// The one store every lock is kept in, if they share one.
std::string common_store(const DashboardModel& m) {
    for (const auto& l : m.locks) {
        if (l.store != m.locks.front().store) {
            return "";
        }
    }
    return m.locks.empty() ? "" : m.locks.front().store;
}

}  // namespace

std::string render_dashboard(const DashboardModel& m, TimePoint now) {
    std::vector<const DashboardLock*> order;
    for (const auto& l : m.locks) {
        order.push_back(&l);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto* a, const auto* b) { return rank(*a) < rank(*b); });
    std::string store = common_store(m);
    std::ostringstream out;
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
    if (m.refresh_seconds > 0) {
        out << "<meta http-equiv=\"refresh\" content=\"" << m.refresh_seconds << "\">";
    }
    out << "<title>envgate dashboard</title><style>" << k_page_style << k_style
        << "</style></head><body>\n<h1>envgate dashboard</h1>\n<p class=\"meta\">" << overview(m)
        << (store.empty() ? "" : " in " + esc(store)) << ". Generated <time datetime=\""
        << format_rfc3339(now) << "\">" << format_rfc3339(now) << "</time>; "
        << (m.refresh_seconds > 0 ? "this page reloads every " +
                                        format_duration(std::chrono::seconds(m.refresh_seconds))
                                  : std::string("this page does not refresh itself"))
        << ".</p>\n";
    for (const auto& note : m.notes) {
        out << "<p class=\"meta\">note: " << esc(note) << "</p>\n";
    }
    for (const DashboardLock* l : order) {
        write_lock(out, *l, now, store.empty());
    }
    out << "</body></html>\n";
    return out.str();
}

}  // namespace envgate
