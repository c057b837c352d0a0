#include "runner/kube/http_kube_api.h"

#include <sys/socket.h>

#include <Poco/Exception.h>
#include <Poco/URI.h>
#include <fmt/format.h>

#include "runner/base/secrets.h"
#include "runner/base/vocab/enum_names.h"
#include "runner/kube/errors.h"

namespace envgate::kube {
namespace {

// Appends "&key=value" (or "?key=value" first) with `value` percent-encoded.
void add_query(std::string& target, const std::string& key, const std::string& value) {
    if (value.empty()) {
        return;
    }
    std::string encoded;
    Poco::URI::encode(value, "!#$&'()*+,/:;=?@[]", encoded);
    target += (target.find('?') == std::string::npos ? "?" : "&") + key + "=" + encoded;
}

constexpr EnumName<Propagation> k_propagation_names[] = {{Propagation::background, "Background"},
                                                         {Propagation::foreground, "Foreground"},
                                                         {Propagation::orphan, "Orphan"}};

const char* propagation_name(Propagation propagation) {
    return name_of(k_propagation_names, propagation, "Background");
}

std::string object_name(const nlohmann::json& object) {
    if (object.contains("metadata") && object["metadata"].is_object()) {
        return object["metadata"].value("name", "");
    }
    return "";
}

}  // namespace

HttpKubeApi::HttpKubeApi(std::unique_ptr<HttpTransport> transport, Clock& clock,
                         HttpOptions options)
    : m_transport(std::move(transport)),
      m_clock(clock),
      m_options(options),
      m_random(options.seed ? Random(*options.seed) : Random()) {}

Result<std::unique_ptr<HttpKubeApi>> HttpKubeApi::create(const RestConfig& config, Clock& clock,
                                                         HttpOptions options) {
    TRY_ASSIGN(auto transport, HttpTransport::create(config, clock, options.request_timeout,
                                                     options.exec_credentials));
    return std::unique_ptr<HttpKubeApi>(new HttpKubeApi(std::move(transport), clock, options));
}

Attempt HttpKubeApi::attempt(const HttpRequest& request, std::string& body) {
    auto response = m_transport->send(request);
    if (!response) {
        return {response.status(), std::nullopt};
    }
    if (response->status == 401 && m_transport->invalidate_credentials()) {
        response = m_transport->send(request);  // refreshed exec/file credentials, once
        if (!response) {
            return {response.status(), std::nullopt};
        }
    }
    if (response->status >= 200 && response->status < 300) {
        body = std::move(response->body);
        return {Status::ok(), std::nullopt};
    }
    Attempt out{status_from_response(request.method, request.what, response->status,
                                     response->reason, response->body),
                std::nullopt};
    if (response->retry_after && (response->status == 429 || response->status == 503)) {
        out.retry_after = parse_retry_after(*response->retry_after, m_clock.now());
    }
    return out;
}

namespace {

// Closes a session's socket; a second abort (ours and cancel_watches') is harmless.
void abort_quietly(Poco::Net::HTTPClientSession& session) {
    try {
        session.abort();
    } catch (const Poco::Exception&) {
    }
}

// From another thread: shutdown(2) wakes the blocked reader without touching the TLS
// state it is using (closing it there would race with SSL_read); the reader then aborts.
void wake_reader(Poco::Net::HTTPClientSession& session) {
    const poco_socket_t fd = session.socket().impl()->sockfd();
    if (fd != POCO_INVALID_SOCKET) {
        ::shutdown(fd, SHUT_RDWR);
    }
}

}  // namespace

Status HttpKubeApi::cancelled_status(const std::string& what) const {
    return Status(Code::cancelled, what + ": cancelled");
}

void HttpKubeApi::cancel_watches() {
    MutexLock lock(m_cancel_mutex);
    m_cancelled = true;
    if (m_watch_session != nullptr) {
        wake_reader(*m_watch_session);
    }
}

Result<std::string> HttpKubeApi::call(const HttpRequest& request) {
    {
        MutexLock lock(m_cancel_mutex);
        if (m_cancelled) {
            return cancelled_status(request.method + " " + request.what);
        }
    }
    std::string body;
    const TimePoint deadline = m_clock.now() + m_options.retry.max_elapsed;
    std::uint64_t seed = 0;
    {
        MutexLock lock(m_random_mutex);
        seed = static_cast<std::uint64_t>(m_random.uniform() * 9.0e18);
    }
    Random random(seed);
    Status status = retry_transient(
        m_clock, random, m_options.retry, deadline, [&] { return attempt(request, body); },
        m_options.pending_signal);
    if (!status.is_ok()) {
        return Status(status.code(), m_transport->scrub(status.message()));
    }
    return body;
}

Result<nlohmann::json> HttpKubeApi::call_json(const HttpRequest& request) {
    TRY_ASSIGN(std::string body, call(request));
    try {
        return nlohmann::json::parse(body);
    } catch (const nlohmann::json::exception& e) {
        return Status(Code::failed, fmt::format("{} {}: response is not JSON: {}", request.method,
                                                request.what, e.what()));
    }
}

Result<nlohmann::json> HttpKubeApi::get(const ResourceRef& ref) {
    return call_json({"GET", ref.path(), ref.describe(), {}});
}

Result<ObjectList> HttpKubeApi::list(const ResourceRef& collection, const ListOptions& options) {
    std::string target = collection.with_name({}).path();
    add_query(target, "labelSelector", options.label_selector);
    add_query(target, "fieldSelector", options.field_selector);
    TRY_ASSIGN(nlohmann::json list, call_json({"GET", target, collection.describe(), {}}));
    ObjectList out;
    if (list.contains("metadata") && list["metadata"].is_object()) {
        out.resource_version = list["metadata"].value("resourceVersion", "");
    }
    if (list.contains("items") && list["items"].is_array()) {
        for (auto& item : list["items"]) {
            out.items.push_back(std::move(item));
        }
    }
    return out;
}

namespace {

// Every object envgate writes to the cluster leaves through here: masked (no secret
// is ever stored in a Job, Event, Lease or annotation) and as valid UTF-8.
std::string body_of(const nlohmann::json& object) {
    nlohmann::json copy = object;
    mask_json_strings(copy);
    return copy.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

Result<nlohmann::json> HttpKubeApi::create(const ResourceRef& ref, const nlohmann::json& object) {
    const ResourceRef named = ref.with_name(object_name(object));
    return call_json({"POST", ref.with_name({}).path(), named.describe(), body_of(object)});
}

Status HttpKubeApi::create_dry_run(const ResourceRef& ref, const nlohmann::json& object) {
    const ResourceRef named = ref.with_name(object_name(object));
    auto answer =
        call_json({"POST", ref.with_name({}).path() + "?dryRun=All&fieldValidation=Strict",
                   named.describe() + " (dry run)", body_of(object)});
    return answer.is_ok() ? Status::ok() : answer.status();
}

Result<nlohmann::json> HttpKubeApi::update(const ResourceRef& ref, const nlohmann::json& object) {
    return call_json({"PUT", ref.path(), ref.describe(), body_of(object)});
}

Result<nlohmann::json> HttpKubeApi::patch(const ResourceRef& ref,
                                          const nlohmann::json& merge_patch) {
    return call_json({"PATCH", ref.path(), ref.describe(), body_of(merge_patch),
                      "application/merge-patch+json"});
}

Status HttpKubeApi::remove(const ResourceRef& ref, Propagation propagation,
                           const Preconditions& preconditions) {
    nlohmann::json options = {{"apiVersion", "v1"},
                              {"kind", "DeleteOptions"},
                              {"propagationPolicy", propagation_name(propagation)}};
    if (!preconditions.uid.empty()) {
        options["preconditions"]["uid"] = preconditions.uid;
    }
    if (!preconditions.resource_version.empty()) {
        options["preconditions"]["resourceVersion"] = preconditions.resource_version;
    }
    auto body = call({"DELETE", ref.path(), ref.describe(), options.dump()});
    return body ? Status::ok() : body.status();
}

Result<std::string> HttpKubeApi::logs(const ResourceRef& pod, const LogOptions& options) {
    std::string target = pod.path() + "/log";
    add_query(target, "container", options.container);
    add_query(target, "previous", options.previous ? "true" : "");
    add_query(target, "tailLines", options.tail_lines ? std::to_string(*options.tail_lines) : "");
    return call({"GET", target, pod.describe() + "/log", {}});
}

Status HttpKubeApi::read_watch_stream(std::istream& in, const std::string& what,
                                      const WatchCallback& on_event) {
    for (std::string line; std::getline(in, line);) {
        if (line.find_first_not_of(" \r\t") == std::string::npos) {
            continue;
        }
        TRY_ASSIGN(WatchEvent event, parse_watch_event(what, line));
        if (on_event(event) == WatchNext::stop) {
            return Status::ok();
        }
    }
    if (in.bad()) {
        return {Code::transient, fmt::format("WATCH {}: the stream broke", what)};
    }
    return Status::ok();  // the server ended the watch: resume from the last RV
}

Status HttpKubeApi::watch(const ResourceRef& collection, const WatchOptions& options,
                          const WatchCallback& on_event) {
    const std::string what = collection.describe();
    std::string target = collection.with_name({}).path() + "?watch=1";
    add_query(target, "resourceVersion", options.resource_version);
    add_query(target, "allowWatchBookmarks", options.allow_bookmarks ? "true" : "");
    add_query(target, "labelSelector", options.label_selector);
    add_query(target, "fieldSelector", options.field_selector);
    const int timeout = options.timeout_seconds.value_or(300);
    add_query(target, "timeoutSeconds", std::to_string(timeout));
    HttpRequest request{"GET", target, what, {}};
    request.shown_method = "WATCH";
    const auto stream_timeout = std::chrono::seconds(timeout + 30);
    auto stream = m_transport->open_stream(request, stream_timeout);
    if (stream && stream->status == 401 && m_transport->invalidate_credentials()) {
        stream = m_transport->open_stream(request, stream_timeout);  // as attempt(): once
    }
    if (!stream) {
        return Status(stream.status().code(), m_transport->scrub(stream.status().message()));
    }
    if (stream->status != 200) {
        std::string body(std::istreambuf_iterator<char>(*stream->body), {});
        Status status = status_from_response("WATCH", what, stream->status, stream->reason, body);
        return Status(status.code(), m_transport->scrub(status.message()));
    }
    {
        MutexLock lock(m_cancel_mutex);
        if (m_cancelled) {
            abort_quietly(*stream->session);
            return cancelled_status("WATCH " + what);
        }
        m_watch_session = stream->session.get();
    }
    Status status;
    try {
        status = read_watch_stream(*stream->body, what, on_event);
    } catch (const std::exception& e) {
        // A reset connection, a receive timeout, or our own cancel_watches() aborting it.
        status = Status(Code::transient, "WATCH " + what + ": the stream broke: " + e.what());
    }
    {
        // A stopped watch must not drain the rest of the stream. Under the lock, so
        // that cancel_watches() never aborts a session being destroyed.
        MutexLock lock(m_cancel_mutex);
        abort_quietly(*stream->session);
        m_watch_session = nullptr;
    }
    {
        MutexLock lock(m_cancel_mutex);
        if (m_cancelled) {
            return cancelled_status("WATCH " + what);
        }
    }
    return Status(status.code(), m_transport->scrub(status.message()));
}

}  // namespace envgate::kube
