// HttpTransport: one cluster's HTTP(S) connection for HttpKubeApi: the TLS context
// (trusting the kubeconfig's CA, presenting its client certificate), a reused keep-alive
// session, and the bearer token (static, token file or exec plugin) on every request.
// One attempt per call; retries live in HttpKubeApi. Never puts a credential in a message.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>

#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>

#include "runner/base/thread_annotations.h"
#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"
#include "runner/kube/exec_credential.h"
#include "runner/kube/rest_config.h"

namespace envgate::kube {

struct HttpRequest {
    std::string method;  // "GET", "PUT", ...
    std::string target;  // path below the server prefix, with its query
    std::string what;    // "leases/envgate-gprd", for messages
    std::string body;
    std::string content_type = "application/json";
    std::string shown_method = {};  // how messages name the method, if not `method` ("WATCH")
};

struct HttpResponse {
    int status = 0;
    std::string reason;
    std::string body;
    std::optional<std::string> retry_after;
};

// A response whose body is still arriving (a watch). Owns its connection.
struct HttpStream {
    std::unique_ptr<Poco::Net::HTTPClientSession> session;
    std::istream* body = nullptr;  // owned by `session`
    int status = 0;
    std::string reason;
};

// One cluster's HTTP(S) connection. Threads: any thread may call send(), open_stream(),
// scrub(), invalidate_credentials() and sessions_opened(); m_mutex guards the
// credentials and the kept-alive session, and is held for a whole send() (one request
// at a time on the shared connection) but not while a stream is read.
class HttpTransport {
  public:
    // Code::invalid when the server URL or the PEM data cannot be used. `exec`: the
    // exec plugin's credentials, shared with the session's other connections; when
    // null (and the config has an exec plugin), this transport gets its own.
    static Result<std::unique_ptr<HttpTransport>> create(
        RestConfig config, Clock& clock, Duration request_timeout,
        std::shared_ptr<ExecCredentialProvider> exec = nullptr);

    // Sends `request` on the shared keep-alive session. Transport failures come back as
    // Code::transient (refused, reset, timeout) or Code::failed (TLS verification).
    Result<HttpResponse> send(const HttpRequest& request);
    // Opens a dedicated connection and returns once the response headers arrived.
    Result<HttpStream> open_stream(const HttpRequest& request, Duration receive_timeout);
    // Forget cached exec credentials (after a 401); true if there were any to forget.
    bool invalidate_credentials();
    // `text` with the current bearer token redacted.
    std::string scrub(std::string text) const;
    int sessions_opened() const {
        MutexLock lock(m_mutex);
        return m_sessions_opened;
    }

  private:
    HttpTransport(RestConfig config, Clock& clock, Duration request_timeout,
                  std::shared_ptr<ExecCredentialProvider> exec);
    Status init();
    Status refresh_credentials() REQUIRES(m_mutex);
    std::unique_ptr<Poco::Net::HTTPClientSession> new_session(Duration timeout) REQUIRES(m_mutex);
    Result<HttpResponse> exchange(Poco::Net::HTTPClientSession& session, const HttpRequest& request)
        REQUIRES(m_mutex);
    Status transport_error(const HttpRequest& request, const std::exception& e) const;
    // Accept, User-Agent, the bearer `token` and the kubeconfig's impersonation.
    void set_headers(Poco::Net::HTTPRequest& http, const std::string& token) const;

    RestConfig m_config;
    Clock& m_clock;
    Duration m_request_timeout;
    std::string m_scheme, m_host, m_prefix;
    unsigned short m_port = 0;
    Poco::Net::Context::Ptr m_context GUARDED_BY(m_mutex);
    std::optional<Poco::Net::HTTPClientSession::ProxyConfig> m_proxy;  // proxy-url
    std::string m_context_cert GUARDED_BY(m_mutex);  // the client certificate m_context presents
    std::shared_ptr<ExecCredentialProvider> m_exec;
    std::uint64_t m_exec_generation GUARDED_BY(m_mutex) = 0;  // of the exec credentials in m_token
    std::string m_token GUARDED_BY(m_mutex);                  // the current bearer token
    std::optional<TimePoint> m_token_read_at GUARDED_BY(m_mutex);
    std::unique_ptr<Poco::Net::HTTPClientSession> m_session GUARDED_BY(m_mutex);
    int m_sessions_opened GUARDED_BY(m_mutex) = 0;
    mutable Mutex m_mutex;
};

}  // namespace envgate::kube
