// What summary.html and the dashboard share: one palette for a light and a dark
// scheme (chosen by the reader's prefers-color-scheme; every text colour at least
// 4.5:1 against its background, WCAG AA), the page's base CSS, and the state badges.
#pragma once

#include <string>

#include "runner/report/run_report.h"

namespace envgate {

// The base style sheet (palette, body, tables, pre and code, badges), for a <style>.
extern const char* const k_page_style;

// `label` as a CSS class: spaces become dashes ("passed after retries").
std::string css_class(const std::string& label);

// A coloured badge of class `cls` (see css_class) saying `label`, escaped.
std::string badge(const std::string& cls, const std::string& label);

// A step's state as a badge says it: "passed after retries", the running gate's last
// verdict ("retrying", "failing"), else its state.
std::string step_label(const StepReport& step);

}  // namespace envgate
