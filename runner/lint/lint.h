// The linter as the command uses it: inputs go in one at a time (each parsed,
// bounded, and reduced to the objects the checks need), then finish() runs every
// check over all of them together, so an HPA or ConfigMap in another file counts.
#pragma once

#include <string>
#include <vector>

#include "runner/lint/check.h"
#include "runner/lint/model.h"
#include "runner/lint/yaml_tree.h"

namespace envgate::lint {

struct LintReport {
    std::vector<Finding> findings;  // by file, then position
    std::size_t inputs = 0;
    std::size_t documents = 0;
    std::size_t workloads = 0;
};

class Linter {
  public:
    Linter(LintSettings settings, ReadLimits limits)
        : m_settings(std::move(settings)), m_limits(limits) {}

    // Reads `text`, named `name` in findings and errors. An unreadable input is an
    // `invalid` Status naming it (and the line, for a YAML error); what it held
    // before the error is kept.
    Status add(const std::string& name, std::string_view text);

    // Runs the checks over everything added.
    LintReport finish() const;

  private:
    LintSettings m_settings;
    ReadLimits m_limits;
    Objects m_objects;
    std::size_t m_inputs = 0;
    std::size_t m_documents = 0;
};

}  // namespace envgate::lint
