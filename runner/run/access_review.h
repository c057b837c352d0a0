// The preflight's permission check: before the lock is taken, the API server is asked
// (SelfSubjectAccessReview) whether the credentials may do what a run will do, so that
// missing RBAC ends the run with nothing touched instead of failing after the lock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/status.h"
#include "runner/kube/kube_api.h"

namespace envgate {

struct AccessNeed {
    std::string verb;
    std::string group;  // "" for the core API
    std::string resource;
    std::string subresource;
    std::string namespace_;
    bool required = true;  // false: best effort (Events); a denial is a warning
};

// What a run needs in `gate_namespace` (Jobs, their pods and logs, Events) and, with the
// Lease store, in `lease_namespace`.
std::vector<AccessNeed> run_access_needs(const std::string& gate_namespace,
                                         const std::optional<std::string>& lease_namespace);

// "create jobs.batch in namespace prod", as kubectl auth can-i spells the resource.
std::string describe_need(const AccessNeed& need);

// The needs the server denies. A server without the authorization API (404) denies
// nothing; any other refusal of the review itself is returned as an error.
Result<std::vector<AccessNeed>> denied_needs(kube::KubeApi& api,
                                             const std::vector<AccessNeed>& needs);

}  // namespace envgate
