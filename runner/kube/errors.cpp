#include "runner/kube/errors.h"

#include <fmt/format.h>

#include "runner/base/http_status.h"
#include "runner/base/secrets.h"

namespace envgate::kube {
namespace {

constexpr std::size_t k_max_body_in_message = 300;

std::string default_reason(std::string_view http_reason) {
    if (!http_reason.empty()) {
        return std::string(http_reason);
    }
    return "HTTP error";
}

// The text after "<code> <reason>: " for a body that may or may not be a metav1.Status.
void read_status_body(std::string_view body, std::string& reason, std::string& message) {
    try {
        auto object = nlohmann::json::parse(body);
        if (object.is_object() && object.value("kind", "") == "Status") {
            reason = object.value("reason", "");
            message = object.value("message", "");
            return;
        }
    } catch (const nlohmann::json::exception&) {
        // Not JSON: a proxy's HTML page or plain text; quoted below, shortened.
    }
    message = std::string(body.substr(0, k_max_body_in_message));
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) {
        message.pop_back();
    }
}

}  // namespace

Code code_for_http(int http_status, std::string_view reason) {
    switch (http_status) {
        case 400:
        case 422:
            return Code::invalid;
        case 408:
            return Code::transient;
        case 409:
            return reason == "AlreadyExists" ? Code::already_exists : Code::conflict;
        case 410:
            return Code::gone;
        default:
            return code_for_http_status(http_status);
    }
}

Status status_from_response(std::string_view method, std::string_view what, int http_status,
                            std::string_view http_reason, std::string_view body) {
    std::string reason;
    std::string message;
    read_status_body(body, reason, message);
    Code code = code_for_http(http_status, reason);
    std::string shown_reason = reason.empty() ? default_reason(http_reason) : reason;
    std::string text = fmt::format("{} {}: {} {}", method, what, http_status, shown_reason);
    if (!message.empty()) {
        text += ": " + message;
    }
    return {code, text};
}

Status status_from_watch_error(std::string_view what, const nlohmann::json& object) {
    int http_status = 500;
    std::string reason;
    std::string message;
    if (object.is_object()) {
        http_status = object.value("code", 500);
        reason = object.value("reason", "");
        message = object.value("message", "");
    }
    Code code = code_for_http(http_status, reason);
    if (http_status == 410 || reason == "Expired" || reason == "Gone") {
        code = Code::gone;
    }
    std::string text = fmt::format("WATCH {}: ERROR event {} {}", what, http_status,
                                   reason.empty() ? "Unknown" : reason);
    if (!message.empty()) {
        text += ": " + message;
    }
    return {code, text};
}

Result<WatchEvent> parse_watch_event(std::string_view what, std::string_view line) {
    nlohmann::json event;
    try {
        event = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
        return Status(Code::transient,
                      fmt::format("WATCH {}: malformed event: {}", what, e.what()));
    }
    if (!event.is_object() || !event.contains("type") || !event["type"].is_string()) {
        return Status(Code::transient, fmt::format("WATCH {}: event without a type", what));
    }
    const std::string type = event["type"].get<std::string>();
    nlohmann::json object = event.value("object", nlohmann::json::object());
    if (type == "ERROR") {
        return status_from_watch_error(what, object);
    }
    WatchEvent out;
    out.object = std::move(object);
    std::optional<EventType> known = parse_event_type(type);
    if (!known) {
        return Status(Code::transient, fmt::format("WATCH {}: unknown event type {}", what, type));
    }
    out.type = *known;
    return out;
}

std::string redact(std::string text, const std::string& secret) {
    return replace_secret(std::move(text), secret, k_redacted);
}

}  // namespace envgate::kube
