// Whether an existing Job of the same spec may be adopted by this run: the fencing
// token (envgate.dev/fence label, the lock's revision) of a Job still running must not
// be lower than this run's, or an earlier holder may still be driving it.
#pragma once

#include <nlohmann/json.hpp>

#include "runner/base/vocab/status.h"
#include "runner/gating/manifest.h"

namespace envgate {

// Ok when `existing` (a Job named as `job`, with its spec) may be re-attached to:
// same or newer fencing token, no token, or finished. Else Code::conflict, with the
// command that deletes it.
Status check_job_fence(const RenderedJob& job, const nlohmann::json& existing);

}  // namespace envgate
