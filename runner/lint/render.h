// The linter's outputs, pure functions of a LintReport: text for the job log,
// JSON for scripts, and GitLab's Code Quality report (a JSON array of issues with
// description, check_name, fingerprint, severity and location) for the merge
// request widget.
#pragma once

#include <string>

#include "runner/lint/lint.h"

namespace envgate::lint {

// `file:line:col: severity check: object: message`, one per finding, then each check
// that fired with its why, fix and docs link, then a one-line summary.
std::string render_text(const LintReport& report);

// {"findings": [...], "summary": {...}}.
std::string render_json(const LintReport& report);

// GitLab Code Quality (docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format).
std::string render_codequality(const LintReport& report);

// A fingerprint that depends on the check, file, object and what was found, never
// on line numbers, so it survives unrelated edits above the finding.
std::string fingerprint(const Finding& f);

// The reference section of docs/lint.md: every check's id, severity, why, fix and
// documentation, from the registry (a unit test keeps the page equal to it).
std::string render_checks_markdown();

// Code Quality's severity for ours: info, minor, major, critical.
const char* codequality_severity(Severity s);

}  // namespace envgate::lint
