// HttpKubeApi: the real KubeApi, speaking JSON to a Kubernetes API server over HTTP(S)
// (Poco). Transient failures (refused, reset, timeouts, 429, 5xx) are retried with
// jittered back-off under a deadline, honouring Retry-After; other failures come back
// at once as typed Status values. Watches are not retried here: see reflector.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runner/base/thread_annotations.h"
#include "runner/kube/http_transport.h"
#include "runner/kube/kube_api.h"
#include "runner/kube/rest_config.h"
#include "runner/kube/retry.h"

namespace envgate::kube {

struct HttpOptions {
    RetryPolicy retry;
    Duration request_timeout = std::chrono::seconds(30);
    std::optional<std::uint64_t> seed;  // of the back-off jitter; random when unset
    // The exec plugin's credentials, shared by every connection of one session; when
    // null, each HttpKubeApi runs the plugin for itself.
    std::shared_ptr<ExecCredentialProvider> exec_credentials = {};
    // The SIGTERM/SIGINT received, or 0 (Env::pending_signal): one ends a retry back-off
    // at once. Unset: no signal ends it.
    std::function<int()> pending_signal = {};
};

// Threads: one thread makes the calls (a watch blocks it); cancel_watches() may come
// from any other thread. m_cancel_mutex guards the cancel flag and the open watch's
// session, m_random_mutex the jitter seed source; neither is held while sleeping.
class HttpKubeApi : public KubeApi {
  public:
    // Code::invalid when `config` cannot be used (bad URL, bad PEM data).
    static Result<std::unique_ptr<HttpKubeApi>> create(const RestConfig& config, Clock& clock,
                                                       HttpOptions options = {});

    Result<nlohmann::json> get(const ResourceRef& ref) override;
    Result<ObjectList> list(const ResourceRef& collection, const ListOptions& options) override;
    Result<nlohmann::json> create(const ResourceRef& ref, const nlohmann::json& object) override;
    Result<nlohmann::json> update(const ResourceRef& ref, const nlohmann::json& object) override;
    Result<nlohmann::json> patch(const ResourceRef& ref,
                                 const nlohmann::json& merge_patch) override;
    Status remove(const ResourceRef& ref, Propagation propagation,
                  const Preconditions& preconditions = {}) override;
    Status watch(const ResourceRef& collection, const WatchOptions& options,
                 const WatchCallback& on_event) override;
    Result<std::string> logs(const ResourceRef& pod, const LogOptions& options) override;
    void cancel_watches() override;
    Status create_dry_run(const ResourceRef& ref, const nlohmann::json& object) override;

    // How many connections were opened so far (keep-alive reuses one).
    int connections_opened() const { return m_transport->sessions_opened(); }

  private:
    HttpKubeApi(std::unique_ptr<HttpTransport> transport, Clock& clock, HttpOptions options);
    // Sends with retries; a non-2xx answer becomes its typed Status.
    Result<std::string> call(const HttpRequest& request);
    Result<nlohmann::json> call_json(const HttpRequest& request);
    Attempt attempt(const HttpRequest& request, std::string& body);
    Status read_watch_stream(std::istream& in, const std::string& what,
                             const WatchCallback& on_event);

    std::unique_ptr<HttpTransport> m_transport;
    Clock& m_clock;
    HttpOptions m_options;
    Random m_random
        GUARDED_BY(m_random_mutex);  // seeds one Random per call, so no lock is held while sleeping
    Mutex m_random_mutex;
    // cancel_watches(): sticky; aborts the open watch's connection from another thread.
    Mutex m_cancel_mutex;
    bool m_cancelled GUARDED_BY(m_cancel_mutex) = false;
    Poco::Net::HTTPClientSession* m_watch_session GUARDED_BY(m_cancel_mutex) = nullptr;
    Status cancelled_status(const std::string& what) const;
};

}  // namespace envgate::kube
