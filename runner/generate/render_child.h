// The child pipeline YAML of a Plan: what `envgate generate --out child.yml` writes
// and GitLab runs through `trigger: include: - artifact:`. A pure string function,
// checked against golden files (test/golden/generate/).
#pragma once

#include <string>

#include "runner/generate/plan.h"

namespace envgate {

// The child pipeline: for each environment of `plan`, in promotion order, its
// stages `<env>-diff`, `<env>-deploy`, `<env>-qa` (deploy mode), or one diff job
// per environment that takes no lock and warns when the lock is held or failed
// (merge-request mode). No environment: one job saying nothing changed. Always a
// complete pipeline with `stages:` that GitLab accepts.
std::string render_child_pipeline(const Plan& plan);

// `word` quoted for a POSIX shell when it holds anything but [A-Za-z0-9_./:@%+=,-].
std::string shell_quote(const std::string& word);

}  // namespace envgate
