// Turns Kubernetes API answers into envgate Status values: a metav1.Status body (or
// a bare HTTP status) becomes a typed Code, and the message reads
// "PUT leases/envgate-gprd: 409 Conflict: <server message>".
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "runner/base/vocab/status.h"
#include "runner/kube/kube_api.h"

namespace envgate::kube {

// The Code for an HTTP status and a metav1.Status `reason`: 400 and 422 are invalid,
// 408 transient, 409 Conflict or AlreadyExists by reason, 410 gone; the rest as
// code_for_http_status (runner/base/http_status.h) says.
Code code_for_http(int http_status, std::string_view reason);

// The Status for a failed request `method` on `what` (ResourceRef::describe()), from the
// HTTP status, its reason phrase and the response body (a metav1.Status, or anything).
Status status_from_response(std::string_view method, std::string_view what, int http_status,
                            std::string_view http_reason, std::string_view body);

// The Status carried by a watch stream's ERROR event (`object` is a metav1.Status).
Status status_from_watch_error(std::string_view what, const nlohmann::json& object);

// Parses one line of a watch stream. ERROR events come back as their Status.
Result<WatchEvent> parse_watch_event(std::string_view what, std::string_view line);

// `text` with every occurrence of `secret` replaced by "[redacted]" (no-op if empty),
// through the one masking loop (runner/base/secrets.h, replace_secret).
std::string redact(std::string text, const std::string& secret);

}  // namespace envgate::kube
