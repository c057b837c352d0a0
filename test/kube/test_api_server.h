// A tiny HTTP(S) server for the kube client tests: Poco::Net::HTTPServer on 127.0.0.1,
// port 0, answering requests in order from a queue of canned responses (a chunked
// response streams its chunks, as a watch does) and recording what it was asked.
// Also: a throw-away CA and server certificate made with the openssl CLI.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Poco/Net/HTTPServer.h>
#include <nlohmann/json.hpp>

#include "runner/base/vocab/status.h"
#include "runner/kube/rest_config.h"

namespace envgate::test {

struct CannedResponse {
    int status = 200;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<std::string> chunks;  // non-empty: a chunked body, one flush per chunk
    bool hold_open = false;           // after the chunks, keep the stream open until shutdown
};

struct SeenRequest {
    std::string method;
    std::string uri;
    std::string authorization;
    std::string content_type;
    std::string body;
    unsigned short client_port = 0;
    std::vector<std::pair<std::string, std::string>> headers;  // every header, in order
};

struct ServerTls {
    std::string cert_file;
    std::string key_file;
    std::string client_ca_file;  // non-empty: require a client certificate signed by it
};

class TestApiServer {
  public:
    explicit TestApiServer(std::optional<ServerTls> tls = std::nullopt);
    ~TestApiServer();
    TestApiServer(const TestApiServer&) = delete;
    TestApiServer& operator=(const TestApiServer&) = delete;

    std::string url() const;  // "http(s)://127.0.0.1:<port>"
    void push(CannedResponse response);
    // A JSON body with the given status.
    void push_json(int status, const std::string& body) { push({status, body, {}, {}}); }
    std::vector<SeenRequest> requests() const;

    // What the request handlers share with the server. Handlers keep it alive, as Poco
    // may still be running one of them for a moment after the server is destroyed.
    struct Shared {
        mutable std::mutex mutex;
        std::deque<CannedResponse> queue;
        std::vector<SeenRequest> seen;
        std::atomic<bool> stopping{false};
        CannedResponse next(SeenRequest request);
    };

  private:
    std::shared_ptr<Shared> m_shared = std::make_shared<Shared>();
    std::unique_ptr<Poco::Net::HTTPServer> m_server;
    bool m_tls = false;
};

// A CA and a server certificate for 127.0.0.1 / localhost, written to a temp directory
// (removed by the destructor). Made with the openssl command-line tool.
class TestPki {
  public:
    TestPki();
    ~TestPki();
    std::string dir;
    std::string ca_cert, ca_key;          // the CA that signed the server certificate
    std::string server_cert, server_key;  // CN=127.0.0.1, SAN IP:127.0.0.1, DNS:localhost
    std::string client_cert, client_key;  // signed by the CA, for client-certificate auth
    std::string other_ca_cert;            // an unrelated CA
    std::string named_cert, named_key;    // signed by the CA for DNS:kube.internal only
    static std::string read(const std::string& path);
};

// The failure text of `result`, or "" when it succeeded (BOOST_*_MESSAGE evaluates it).
template <typename T>
std::string why(const Result<T>& result) {
    return result.is_ok() ? std::string() : result.status().message();
}

// One TestPki for the whole test binary (its key generation takes a while).
TestPki& shared_pki();

// GET of the Lease locks/envgate-gprd through HttpKubeApi with `config`: one attempt,
// no retries.
Result<nlohmann::json> get_test_lease(const kube::RestConfig& config);

// A metav1.Status body.
std::string status_body(int code, const std::string& reason, const std::string& message);

}  // namespace envgate::test
