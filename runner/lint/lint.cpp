#include "runner/lint/lint.h"

#include <algorithm>
#include <map>

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
    // The same thing found twice in one object (two `./migrate` in one script) gets
    // a counter, so that each fingerprint names one finding.
    std::map<std::string, int> seen;
    for (Finding& f : r.findings) {
        int n = ++seen[f.check + "\n" + f.loc.file + "\n" + f.object + "\n" + f.identity];
        if (n > 1) {
            f.identity += "#" + std::to_string(n);
        }
    }
    r.inputs = m_inputs;
    r.documents = m_documents;
    r.workloads = m_objects.workloads.size();
    return r;
}

}  // namespace envgate::lint
