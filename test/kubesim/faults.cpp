// Fault rules and request counters: see faults.h.
#include "test/kubesim/faults.h"

namespace kubesim {

using nlohmann::json;

FaultRule FaultRule::from_json(const std::string& action, const json& body) {
    FaultRule r;
    r.action = action;
    r.verb = body.value("verb", "*");
    r.resource = body.value("resource", "*");
    r.code = body.value("code", 500);
    r.count = body.value("count", 1);
    r.retry_after = body.value("retryAfterSeconds", 0);
    r.delay_ms = body.value("delayMs", 0);
    return r;
}

json FaultRule::to_json() const {
    return {{"action", action},   {"verb", verb},   {"resource", resource},
            {"code", code},       {"count", count}, {"retryAfterSeconds", retry_after},
            {"delayMs", delay_ms}};
}

void Faults::add(const FaultRule& rule) {
    std::lock_guard lock(m_mutex);
    m_rules.push_back(rule);
}

void Faults::clear() {
    std::lock_guard lock(m_mutex);
    m_rules.clear();
}

json Faults::rules() const {
    std::lock_guard lock(m_mutex);
    json out = json::array();
    for (const auto& r : m_rules) {
        out.push_back(r.to_json());
    }
    return out;
}

std::vector<FaultRule> Faults::take(const std::string& verb, const std::string& resource) {
    std::lock_guard lock(m_mutex);
    std::vector<FaultRule> out;
    for (auto it = m_rules.begin(); it != m_rules.end();) {
        bool match = (it->verb == "*" || it->verb == verb) &&
                     (it->resource == "*" || it->resource == resource);
        bool seen = false;
        for (const auto& o : out) {
            seen = seen || o.action == it->action;
        }
        if (!match || seen) {
            ++it;
            continue;
        }
        out.push_back(*it);
        if (it->count > 0 && --it->count == 0) {
            it = m_rules.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

void Faults::count(const std::string& verb, const std::string& resource) {
    std::lock_guard lock(m_mutex);
    ++m_counters[verb + " " + resource];
}

json Faults::counters() const {
    std::lock_guard lock(m_mutex);
    json out = json::object();
    uint64_t total = 0;
    for (const auto& [k, v] : m_counters) {
        out[k] = v;
        total += v;
    }
    return {{"total", total}, {"requests", out}};
}

void Faults::reset_counters() {
    std::lock_guard lock(m_mutex);
    m_counters.clear();
}

std::string reason_for_code(int code) {
    switch (code) {
        case 400:
            return "BadRequest";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "NotFound";
        case 409:
            return "Conflict";
        case 410:
            return "Gone";
        case 422:
            return "Invalid";
        case 429:
            return "TooManyRequests";
        case 503:
            return "ServiceUnavailable";
        case 504:
            return "Timeout";
        default:
            return "InternalError";
    }
}

}  // namespace kubesim
