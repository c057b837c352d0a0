// The kubesim HTTP(S) server on 127.0.0.1: authentication, discovery and OpenAPI,
// fault injection and counters, then the REST API or the control API.
#pragma once

#include <memory>

#include "test/kubesim/http_util.h"

namespace Poco::Net {
class HTTPServer;
}

namespace kubesim {

struct TlsFiles {
    std::string ca_cert;
    std::string server_cert;
    std::string server_key;
};

class Server {
  public:
    explicit Server(Context& ctx);
    ~Server();
    // Binds 127.0.0.1:`port` (0: any free port) and starts serving. Returns the port.
    envgate::Result<int> start(int port, const TlsFiles* tls);
    void stop();

  private:
    Context& m_ctx;
    std::unique_ptr<Poco::Net::HTTPServer> m_server;
};

}  // namespace kubesim
