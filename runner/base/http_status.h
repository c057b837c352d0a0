// The one table from an HTTP status to a typed Code, shared by every server envgate
// talks to (the Kubernetes API, GitLab). A client adds only what its own API means
// beyond it (kube/errors.h: 400 and 422 invalid, 409 by reason, 410 gone).
#pragma once

#include "runner/base/vocab/status.h"

namespace envgate {

// 401 unauthorized, 403 forbidden, 404 not_found, 429 and 5xx transient; any other
// status is `failed`.
Code code_for_http_status(int http_status);

}  // namespace envgate
