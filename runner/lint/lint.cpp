#include "runner/lint/lint.h"

#include <algorithm>

namespace envgate::lint {

Status Linter::add(const std::string& name, std::string_view text) {
    ++m_inputs;
    return read_documents(text, name, m_limits, [&](Document& doc) {
        ++m_documents;
        return extract_objects(doc, name, m_objects);
    });
}

LintReport Linter::finish() const {
    LintReport r;
    r.findings = run_checks(m_objects, m_settings);
    std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& a, const Finding& b) {
        return std::tie(a.loc.file, a.loc.pos.line, a.loc.pos.column) <
               std::tie(b.loc.file, b.loc.pos.line, b.loc.pos.column);
    });
    r.inputs = m_inputs;
    r.documents = m_documents;
    r.workloads = m_objects.workloads.size();
    return r;
}

}  // namespace envgate::lint
