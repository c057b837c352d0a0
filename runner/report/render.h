// The report renderers of spec/reports.md: pure functions from a RunReport to the
// text of each file. write_reports() is the one place that writes them to disk.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runner/base/vocab/status.h"
#include "runner/report/run_report.h"

namespace envgate {

std::string render_junit(const RunReport& report);          // junit.xml
std::string render_markdown(const RunReport& report);       // summary.md
std::string render_html(const RunReport& report);           // summary.html
std::string render_dotenv(const RunReport& report);         // envgate.env
std::string render_annotations(const RunReport& report);    // annotations.json
std::string render_run_json(const RunReport& report);       // run.json
nlohmann::json run_json_document(const RunReport& report);  // run.json's document

// Reads run.json back (the dashboard renders saved runs). Errors name `origin`.
Result<RunReport> parse_run_json(const std::string& text, const std::string& origin);

// Writes every report into `dir` (created if missing), each atomically. A file that
// cannot be rendered or written is removed (no earlier run's file is left to look
// current) and the others are still written; the first error is returned.
Status write_reports(const std::string& dir, const RunReport& report);

}  // namespace envgate
