// A minimal HTTP(S) client for kubesim, configured from the kubeconfig kubesim wrote
// (server, CA data, token). Used by `kubesim ctl`, the kubesim tests and the benchmark.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "runner/base/vocab/status.h"

namespace Poco::Net {
class HTTPClientSession;
}

namespace kubesim {

struct HttpResponse {
    int code = 0;
    std::string body;
    std::map<std::string, std::string> headers;
};

class SimClient {
  public:
    // Reads `kubeconfig` (the current context's cluster and user).
    static envgate::Result<SimClient> from_kubeconfig(const std::string& kubeconfig);
    SimClient(const SimClient&) = delete;
    SimClient(SimClient&&) noexcept;
    ~SimClient();

    // One request on a kept-alive connection (reconnects once when the server closed it).
    envgate::Result<HttpResponse> request(const std::string& method, const std::string& path,
                                          const std::string& body = "",
                                          const std::string& content_type = "application/json");
    // Streams a watch: calls `on_line` with each event line until it returns false or
    // the server ends the stream. Returns the HTTP code.
    envgate::Result<int> stream(const std::string& path,
                                const std::function<bool(const std::string&)>& on_line);
    const std::string& server() const { return m_server; }
    void set_token(const std::string& token) { m_token = token; }

  private:
    SimClient() = default;
    std::unique_ptr<Poco::Net::HTTPClientSession> new_session() const;

    std::string m_server;
    std::string m_host;
    int m_port = 0;
    bool m_tls = false;
    std::string m_ca_pem;
    std::string m_token;
    std::unique_ptr<Poco::Net::HTTPClientSession> m_session;
};

}  // namespace kubesim
