#include "locks/record_json.h"

#include <cmath>
#include <string_view>
#include <utility>

#include "runner/base/secrets.h"

namespace envgate::locks {
namespace {

using nlohmann::json;

json time_or_null(TimePoint t) {
    return t == TimePoint{} ? json(nullptr) : json(format_rfc3339_micro(t));
}

// Whole seconds, rounded up, like a Lease's leaseDurationSeconds.
std::int64_t whole_seconds(Duration d) {
    return (d.count() + 999'999) / 1'000'000;
}

json optional_string(const std::string& s) {
    return s.empty() ? json(nullptr) : json(s);
}

// Field readers: each throws std::invalid_argument naming the field; the caller
// turns that into a Status.
std::string read_string(const json& j, const char* key) {
    if (!j.contains(key) || j[key].is_null()) {
        return {};
    }
    if (!j[key].is_string()) {
        throw std::invalid_argument(std::string(key) + ": expected a string");
    }
    return j[key].get<std::string>();
}

TimePoint read_time(const json& j, const char* key) {
    std::string s = read_string(j, key);
    if (s.empty()) {
        return {};
    }
    auto t = parse_rfc3339(s);
    if (!t) {
        throw std::invalid_argument(std::string(key) + ": \"" + s + "\" is not RFC 3339");
    }
    return *t;
}

std::int64_t read_int(const json& j, const char* key) {
    if (!j.contains(key) || j[key].is_null()) {
        return 0;
    }
    if (!j[key].is_number_integer()) {
        throw std::invalid_argument(std::string(key) + ": expected an integer");
    }
    return j[key].get<std::int64_t>();
}

// Lease durations and waiter TTLs: kept far below what microseconds can hold, so
// that `renewed_at + lease` never overflows (a record says 2^62 seconds: refused).
constexpr std::int64_t k_max_record_seconds = 366LL * 24 * 3600;

Duration read_seconds(const json& j, const char* key) {
    std::int64_t v = read_int(j, key);
    if (v < 0) {  // checked before the conversion: -2^62 seconds overflows microseconds
        throw std::invalid_argument(std::string(key) + ": negative (" + std::to_string(v) + ")");
    }
    if (v > k_max_record_seconds) {
        throw std::invalid_argument(std::string(key) + ": " + std::to_string(v) +
                                    " is too large (at most " +
                                    std::to_string(k_max_record_seconds) + ", a year)");
    }
    return std::chrono::seconds(v);
}

// An optional object or array: absent and null read as absent, any other type is an
// error naming the field (a record with `"holder": "bob"` is not silently free).
const json* optional_of(const json& j, const char* key, json::value_t type, const char* what) {
    if (!j.contains(key) || j[key].is_null()) {
        return nullptr;
    }
    if (j[key].type() != type) {
        throw std::invalid_argument(std::string(key) + ": expected " + what + " or null");
    }
    return &j[key];
}

const json& element_object(const json& list, std::size_t i, const char* key) {
    if (!list[i].is_object()) {
        throw std::invalid_argument(std::string(key) + "[" + std::to_string(i) +
                                    "]: expected an object");
    }
    return list[i];
}

Holder holder_from(const json& j, const std::string& field) {
    Holder h;
    h.id = read_string(j, "id");
    if (h.id.empty()) {
        throw std::invalid_argument(field + ".id: missing");
    }
    h.pipeline_url = read_string(j, "pipeline_url");
    h.job_url = read_string(j, "job_url");
    h.project = read_string(j, "project");
    h.user = read_string(j, "user");
    TimePoint created = read_time(j, "pipeline_created_at");
    if (created != TimePoint{}) {
        h.created_at = created;
    }
    if (j.contains("pipeline_id") && !j["pipeline_id"].is_null()) {
        h.pipeline_id = read_int(j, "pipeline_id");
    }
    return h;
}

Failure failure_from(const json& j) {
    return {read_string(j, "step"), read_string(j, "reason"), read_string(j, "message"),
            read_time(j, "at")};
}

void check_schema(const json& j) {
    std::string schema = read_string(j, "schema");
    if (schema != k_record_schema) {
        throw std::invalid_argument(
            "schema: " + (schema.empty() ? "missing" : "\"" + schema + "\"") + ", expected \"" +
            k_record_schema + "\"");
    }
}

// The invariants the policy keeps: a held or failed lock has a holder, a free one
// has none, a failed one has its failure.
void check_state(const LockRecord& r) {
    if (r.state != LockState::free && !r.holder) {
        throw std::invalid_argument(std::string("state is ") + state_name(r.state) +
                                    " but holder is null");
    }
    if (r.state == LockState::free && r.holder) {
        throw std::invalid_argument("state is free but holder is " + r.holder->id);
    }
    if (r.state == LockState::failed && !r.failure) {
        throw std::invalid_argument("state is failed but failure is null");
    }
}

void read_lists(const json& j, LockRecord& r) {
    if (const json* waiters = optional_of(j, "waiters", json::value_t::array, "an array")) {
        for (std::size_t i = 0; i < waiters->size(); ++i) {
            const json& w = element_object(*waiters, i, "waiters");
            const json* who = optional_of(w, "who", json::value_t::object, "an object");
            if (who == nullptr) {
                throw std::invalid_argument("waiters[" + std::to_string(i) + "].who: missing");
            }
            // Entries stored inside a lock record are the previous format's queue.
            Waiter entry;
            entry.who = holder_from(*who, "waiters[" + std::to_string(i) + "].who");
            entry.since = read_time(w, "since");
            entry.last_seen = read_time(w, "last_seen");
            entry.ttl = read_seconds(w, "ttl_seconds");
            entry.legacy = true;
            r.waiters.push_back(std::move(entry));
        }
    }
    for (auto [key, into] : {std::pair{"history", &r.history}, std::pair{"unlocks", &r.unlocks}}) {
        if (const json* list = optional_of(j, key, json::value_t::array, "an array")) {
            for (std::size_t i = 0; i < list->size(); ++i) {
                const json& t = element_object(*list, i, key);
                into->push_back({read_int(t, "seq"), read_string(t, "what"), read_string(t, "who"),
                                 read_time(t, "at"), read_string(t, "why")});
            }
        }
    }
}

LockRecord record_from(const json& j) {
    if (!j.is_object()) {
        throw std::invalid_argument("expected a JSON object");
    }
    check_schema(j);
    LockRecord r;
    r.name = read_string(j, "name");
    std::string state = read_string(j, "state");
    auto parsed = parse_state(state);
    if (!parsed) {
        throw std::invalid_argument("state: \"" + state + "\" is not free, held or failed");
    }
    r.state = *parsed;
    if (const json* holder = optional_of(j, "holder", json::value_t::object, "an object")) {
        r.holder = holder_from(*holder, "holder");
    }
    r.acquired_at = read_time(j, "acquired_at");
    r.renewed_at = read_time(j, "renewed_at");
    r.lease_duration = read_seconds(j, "lease_duration_seconds");
    r.lease_transitions = read_int(j, "lease_transitions");
    r.step = read_string(j, "step");
    if (j.contains("queue_seq") && !j["queue_seq"].is_null()) {
        r.queue_seq = read_int(j, "queue_seq");
        if (r.queue_seq < 0) {
            throw std::invalid_argument("queue_seq: negative");
        }
    }
    r.queue_since = read_time(j, "queue_since");
    if (const json* failure = optional_of(j, "failure", json::value_t::object, "an object")) {
        r.failure = failure_from(*failure);
    }
    read_lists(j, r);
    check_state(r);
    return r;
}

}  // namespace

json to_json(const Holder& h) {
    json j = {{"id", h.id},
              {"pipeline_url", optional_string(h.pipeline_url)},
              {"job_url", optional_string(h.job_url)},
              {"project", optional_string(h.project)},
              {"user", optional_string(h.user)},
              {"pipeline_id", nullptr},
              {"pipeline_created_at", nullptr}};
    if (h.pipeline_id) {
        j["pipeline_id"] = *h.pipeline_id;
    }
    if (h.created_at) {
        j["pipeline_created_at"] = format_rfc3339_micro(*h.created_at);
    }
    return j;
}

json to_json(const LockRecord& r) {
    json j = {{"schema", k_record_schema},
              {"name", r.name},
              {"state", state_name(r.state)},
              {"holder", r.holder ? to_json(*r.holder) : json(nullptr)},
              {"acquired_at", time_or_null(r.acquired_at)},
              {"renewed_at", time_or_null(r.renewed_at)},
              {"lease_duration_seconds", whole_seconds(r.lease_duration)},
              {"lease_transitions", r.lease_transitions},
              {"step", optional_string(r.step)},
              {"failure", nullptr},
              {"waiters", json::array()},
              {"queue_seq", r.queue_seq},
              {"queue_since", time_or_null(r.queue_since)},
              {"history", json::array()}};
    if (r.failure) {
        j["failure"] = {{"step", r.failure->step},
                        {"reason", r.failure->reason},
                        {"message", r.failure->message},
                        {"at", time_or_null(r.failure->at)}};
    }
    for (const auto& w : r.waiters) {
        json entry = {{"who", to_json(w.who)},
                      {"since", time_or_null(w.since)},
                      {"last_seen", time_or_null(w.last_seen)},
                      {"ttl_seconds", whole_seconds(w.ttl)}};
        if (!w.legacy) {  // a waiter's own record, shown in a status
            entry["seq"] = w.seq;
        }
        j["waiters"].push_back(std::move(entry));
    }
    for (auto [key, list] : {std::pair{"history", &r.history}, std::pair{"unlocks", &r.unlocks}}) {
        if (list->empty() && std::string_view(key) == "unlocks") {
            continue;  // records without an unlock stay as they were
        }
        json& out = j[key];
        out = json::array();
        for (const auto& t : *list) {
            out.push_back({{"seq", t.seq},
                           {"what", t.what},
                           {"who", t.who},
                           {"at", time_or_null(t.at)},
                           {"why", t.why}});
        }
    }
    mask_json_strings(j);  // a failure message may quote a secret; records never keep one
    return j;
}

Result<nlohmann::json> parse_record_text(const std::string& text) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        return Status(Code::invalid, "empty");
    }
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
        auto cut = what.find("] ");
        return Status(Code::invalid,
                      "not JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2)));
    }
}

Result<LockRecord> record_from_json(const nlohmann::json& j) {
    try {
        return record_from(j);
    } catch (const std::exception& e) {
        return Status(Code::invalid, e.what());
    }
}

json waiter_to_json(const std::string& lock, const Waiter& w) {
    json j = {{"schema", k_waiter_schema},
              {"lock", lock},
              {"who", to_json(w.who)},
              {"seq", w.seq},
              {"since", time_or_null(w.since)},
              {"last_seen", time_or_null(w.last_seen)},
              {"ttl_seconds", whole_seconds(w.ttl)}};
    mask_json_strings(j);
    return j;
}

Result<Waiter> waiter_from_json(const nlohmann::json& j, const std::string& lock) {
    try {
        if (!j.is_object()) {
            throw std::invalid_argument("expected a JSON object");
        }
        std::string schema = read_string(j, "schema");
        if (schema != k_waiter_schema) {
            throw std::invalid_argument(
                "schema: " + (schema.empty() ? "missing" : "\"" + schema + "\"") + ", expected \"" +
                k_waiter_schema + "\"");
        }
        std::string of = read_string(j, "lock");
        if (of != lock) {
            throw std::invalid_argument("lock: it waits for \"" + of + "\", not \"" + lock + "\"");
        }
        const json* who = optional_of(j, "who", json::value_t::object, "an object");
        if (who == nullptr) {
            throw std::invalid_argument("who: missing");
        }
        Waiter w;
        w.who = holder_from(*who, "who");
        w.since = read_time(j, "since");
        w.last_seen = read_time(j, "last_seen");
        w.ttl = read_seconds(j, "ttl_seconds");
        w.seq = read_int(j, "seq");
        if (w.seq < 0) {
            throw std::invalid_argument("seq: negative");
        }
        return w;
    } catch (const std::exception& e) {
        return Status(Code::invalid, e.what());
    }
}

Result<LockRecord> record_from_json(const nlohmann::json& j, const std::string& name) {
    TRY_ASSIGN(LockRecord r, record_from_json(j));
    if (!r.name.empty() && r.name != name) {
        return Status(Code::invalid,
                      "name: it is the record of lock \"" + r.name + "\", not \"" + name + "\"");
    }
    r.name = name;
    return r;
}

}  // namespace envgate::locks
