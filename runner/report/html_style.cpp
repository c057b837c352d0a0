#include "runner/report/html_style.h"

#include "runner/report/text.h"

namespace envgate {

// Colours are GitHub Primer's. Text on badges is white on colours of at least 4.5:1;
// long commands and messages wrap rather than run off the page, text between words (a
// word breaks only when wider than its whole column: "break-word" keeps a table's
// columns at least as wide as their longest word, "anywhere" let "demo-pipel|ine-3"
// happen); a code block's lines anywhere, as a terminal wraps them.
const char* const k_page_style = R"css(
:root{color-scheme:light dark;--fg:#1f2328;--muted:#57606a;--bg:#fff;--subtle:#f6f8fa;
--border:#d0d7de;--link:#0550ae;--fail-bg:#ffebe9;--fail-border:#ff8182}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;
--subtle:#161b22;--border:#3d444d;--link:#4493f8;--fail-bg:#25171c;--fail-border:#f85149}}
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em 2em;color:var(--fg);
background:var(--bg)}a{color:var(--link)}.meta{color:var(--muted)}
table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid var(--border);
padding:.3em .6em;text-align:left;vertical-align:top;overflow-wrap:break-word}
td:last-child{overflow-wrap:break-word}th{background:var(--subtle)}pre{background:var(--subtle);border:1px solid var(--border);
padding:.6em;white-space:pre-wrap;overflow-wrap:anywhere;user-select:all;margin:.3em 0}
code{font-family:ui-monospace,monospace;overflow-wrap:break-word}pre code{overflow-wrap:anywhere}
.badge{display:inline-block;padding:.1em .6em;border-radius:1em;font-weight:600;
font-size:.85em;color:#fff;background:#59636e;vertical-align:middle}
.free,.passed,.succeeded,.success{background:#1a7f37}.held,.running{background:#0969da}
.failed{background:#cf222e}.retrying,.passed-after-retries{background:#9a6700}
.failing{background:#8250df}.skipped,.unknown{background:#59636e}
.cancelled{background:#57606a}.failed-run{background:#a40e26}
)css";

std::string css_class(const std::string& label) {
    std::string out;
    for (char c : label) {
        out.push_back(c == ' ' ? '-' : c);
    }
    return out;
}

std::string badge(const std::string& cls, const std::string& label) {
    return "<span class=\"badge " + xml_escape(css_class(cls)) + "\">" + xml_escape(label) +
           "</span>";
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

}  // namespace envgate
