#include "runner/kube/http_transport.h"

#include <fstream>
#include <sstream>

#include <Poco/Crypto/EVPPKey.h>
#include <Poco/Crypto/X509Certificate.h>
#include <Poco/Exception.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>
#include <fmt/format.h>

#include "runner/kube/errors.h"

namespace envgate::kube {
namespace {

using namespace std::chrono_literals;
constexpr Duration k_token_file_refresh = 60s;

void initialize_ssl_once() {
    static std::once_flag once;
    std::call_once(once, [] { Poco::Net::initializeSSL(); });
}

std::vector<std::string> split_pem_certificates(const std::string& pem) {
    static const std::string k_begin = "-----BEGIN CERTIFICATE-----";
    static const std::string k_end = "-----END CERTIFICATE-----";
    std::vector<std::string> out;
    for (auto start = pem.find(k_begin); start != std::string::npos;
         start = pem.find(k_begin, start)) {
        auto stop = pem.find(k_end, start);
        if (stop == std::string::npos) {
            break;
        }
        stop += k_end.size();
        out.push_back(pem.substr(start, stop - start) + "\n");
        start = stop;
    }
    return out;
}

Result<Poco::Net::Context::Ptr> make_context(const RestConfig& config, const std::string& cert_pem,
                                             const std::string& key_pem) {
    using Poco::Net::Context;
    try {
        Context::Params params;
        params.verificationMode =
            config.insecure_skip_tls_verify ? Context::VERIFY_NONE : Context::VERIFY_STRICT;
        params.loadDefaultCAs = config.ca_pem.empty() && !config.insecure_skip_tls_verify;
        Context::Ptr context = new Context(Context::CLIENT_USE, params);
        const auto cas = split_pem_certificates(config.ca_pem);
        if (!config.ca_pem.empty() && cas.empty()) {
            return Status(Code::invalid,
                          config.source + ": certificate-authority holds no PEM certificate");
        }
        for (const auto& pem : cas) {
            std::istringstream in(pem);
            context->addCertificateAuthority(Poco::Crypto::X509Certificate(in));
        }
        if (!cert_pem.empty()) {
            std::istringstream cert_in(cert_pem);
            std::istringstream key_in(key_pem);
            context->useCertificate(Poco::Crypto::X509Certificate(cert_in));
            context->usePrivateKey(Poco::Crypto::EVPPKey(nullptr, &key_in));
        }
        return context;
    } catch (const Poco::Exception& e) {
        // The PEM texts are secrets (the key) or noise; name the failure only.
        return Status(Code::invalid, fmt::format("{}: cannot use the TLS certificates: {}",
                                                 config.source, e.name()));
    }
}

// An HTTPS session that verifies (and names in SNI) `server_name` instead of the host it
// connects to: kubeconfig's tls-server-name. Directly or through a CONNECT proxy.
class NamedHTTPSClientSession : public Poco::Net::HTTPSClientSession {
  public:
    NamedHTTPSClientSession(const std::string& host, Poco::UInt16 port,
                            Poco::Net::Context::Ptr context, std::string server_name)
        : HTTPSClientSession(host, port, context),
          m_context(std::move(context)),
          m_server_name(std::move(server_name)) {}

  protected:
    void connect(const Poco::Net::SocketAddress& address) override {
        if (getProxyHost().empty() || bypassProxy()) {
            Poco::Net::SecureStreamSocket socket(this->socket());
            socket.setPeerHostName(m_server_name);
            HTTPSClientSession::connect(address);
            return;
        }
        Poco::Net::StreamSocket tunnel(proxyConnect());
        attachSocket(Poco::Net::SecureStreamSocket::attach(tunnel, m_server_name, m_context));
    }

  private:
    Poco::Net::Context::Ptr m_context;
    std::string m_server_name;
};

Result<std::string> read_token_file(const std::string& path) {
    std::ifstream in(path);
    std::string token;
    if (!in || !std::getline(in, token)) {
        return Status(Code::unauthorized, "cannot read the token file " + path);
    }
    return token;
}

// kubeconfig proxy-url "http://[user:password@]host[:port]" as Poco's proxy settings.
Result<Poco::Net::HTTPClientSession::ProxyConfig> proxy_config(const RestConfig& config) {
    Poco::Net::HTTPClientSession::ProxyConfig proxy;
    try {
        Poco::URI uri(config.proxy_url);
        proxy.host = uri.getHost();
        proxy.port = uri.getPort();
        const std::string info = uri.getUserInfo();
        const auto colon = info.find(':');
        if (colon != std::string::npos) {
            std::string password;
            Poco::URI::decode(info.substr(colon + 1), password);
            proxy.password = password;
        }
        Poco::URI::decode(info.substr(0, colon), proxy.username);
    } catch (const Poco::Exception&) {
        return Status(Code::invalid, config.source + ": proxy-url is not a URL");
    }
    return proxy;
}

}  // namespace

HttpTransport::HttpTransport(RestConfig config, Clock& clock, Duration request_timeout,
                             std::shared_ptr<ExecCredentialProvider> exec)
    : m_config(std::move(config)),
      m_clock(clock),
      m_request_timeout(request_timeout),
      m_exec(std::move(exec)) {}

Result<std::unique_ptr<HttpTransport>> HttpTransport::create(
    RestConfig config, Clock& clock, Duration request_timeout,
    std::shared_ptr<ExecCredentialProvider> exec) {
    initialize_ssl_once();
    std::unique_ptr<HttpTransport> transport(
        new HttpTransport(std::move(config), clock, request_timeout, std::move(exec)));
    TRY(transport->init());
    return transport;
}

Status HttpTransport::init() {
    MutexLock lock(m_mutex);  // not yet shared; held so the analysis sees the writes
    try {
        Poco::URI uri(m_config.server);
        m_scheme = uri.getScheme();
        m_host = uri.getHost();
        m_port = uri.getPort();
        m_prefix = uri.getPath();
    } catch (const Poco::Exception& e) {
        return {Code::invalid, fmt::format("{}: server \"{}\": {}", m_config.source,
                                           m_config.server, e.displayText())};
    }
    while (!m_prefix.empty() && m_prefix.back() == '/') {
        m_prefix.pop_back();
    }
    if ((m_scheme != "https" && m_scheme != "http") || m_host.empty()) {
        return {Code::invalid, fmt::format("{}: server \"{}\" is not an http(s) URL",
                                           m_config.source, m_config.server)};
    }
    if (!m_config.proxy_url.empty()) {
        TRY_ASSIGN(m_proxy, proxy_config(m_config));
    }
    if (m_config.exec && !m_exec) {
        m_exec = std::make_shared<ExecCredentialProvider>(*m_config.exec, m_clock);
    }
    m_token = m_config.bearer_token.reveal();
    if (m_scheme == "https") {
        TRY_ASSIGN(m_context, make_context(m_config, m_config.client_cert_pem,
                                           m_config.client_key_pem.reveal()));
        m_context_cert = m_config.client_cert_pem;
    }
    return Status::ok();
}

// REQUIRES: m_mutex held.
Status HttpTransport::refresh_credentials() {
    if (!m_config.token_file.empty() &&
        (!m_token_read_at || m_clock.now() - *m_token_read_at >= k_token_file_refresh)) {
        TRY_ASSIGN(m_token, read_token_file(m_config.token_file));
        m_token_read_at = m_clock.now();
    }
    if (!m_exec) {
        return Status::ok();
    }
    TRY_ASSIGN(ExecCredentials creds, m_exec->get());
    m_token = creds.token.reveal();
    m_exec_generation = creds.generation;
    if (m_scheme == "https" && !creds.client_cert_pem.empty() &&
        creds.client_cert_pem != m_context_cert) {
        TRY_ASSIGN(m_context,
                   make_context(m_config, creds.client_cert_pem, creds.client_key_pem.reveal()));
        m_context_cert = creds.client_cert_pem;
        m_session.reset();  // the old connection presented the old certificate
    }
    return Status::ok();
}

bool HttpTransport::invalidate_credentials() {
    MutexLock lock(m_mutex);
    if (!m_exec && m_config.token_file.empty()) {
        return false;
    }
    if (m_exec) {
        m_exec->invalidate(m_exec_generation);
    }
    m_token_read_at.reset();
    return true;
}

std::string HttpTransport::scrub(std::string text) const {
    MutexLock lock(m_mutex);
    text = redact(std::move(text), m_token);
    return redact(std::move(text), m_config.bearer_token.reveal());
}

std::unique_ptr<Poco::Net::HTTPClientSession> HttpTransport::new_session(Duration timeout) {
    std::unique_ptr<Poco::Net::HTTPClientSession> session;
    if (m_scheme == "https" && !m_config.tls_server_name.empty()) {
        session = std::make_unique<NamedHTTPSClientSession>(m_host, m_port, m_context,
                                                            m_config.tls_server_name);
    } else if (m_scheme == "https") {
        session = std::make_unique<Poco::Net::HTTPSClientSession>(m_host, m_port, m_context);
    } else {
        session = std::make_unique<Poco::Net::HTTPClientSession>(m_host, m_port);
    }
    if (m_proxy) {
        session->setProxyConfig(*m_proxy);
    }
    session->setKeepAlive(true);
    session->setTimeout(Poco::Timespan(timeout.count()));
    ++m_sessions_opened;
    return session;
}

Status HttpTransport::transport_error(const HttpRequest& request, const std::exception& e) const {
    Code code = Code::transient;
    std::string detail = e.what();
    const std::string& method =
        request.shown_method.empty() ? request.method : request.shown_method;
    if (const auto* poco = dynamic_cast<const Poco::Exception*>(&e)) {
        detail = poco->displayText();
        const bool closed =
            dynamic_cast<const Poco::Net::SSLConnectionUnexpectedlyClosedException*>(poco);
        if (dynamic_cast<const Poco::Net::SSLException*>(poco) && !closed) {
            code = Code::failed;  // TLS verification: retrying will not help
        }
        if (code == Code::failed && detail.find("certificate verify failed") != std::string::npos) {
            return {code, fmt::format("{} {}: {}: the TLS certificate of the server {} could not "
                                      "be verified ({}); check the cluster's certificate "
                                      "authority in {}",
                                      method, request.what, m_host, m_config.server, detail,
                                      m_config.source)};
        }
    }
    return {code, fmt::format("{} {}: {}: {}", method, request.what, m_host, detail)};
}

void HttpTransport::set_headers(Poco::Net::HTTPRequest& http, const std::string& token) const {
    http.set("Accept", "application/json");
    http.set("User-Agent", "envgate");
    if (!token.empty()) {
        http.set("Authorization", "Bearer " + token);
    }
    if (!m_config.impersonate_user.empty()) {
        http.set("Impersonate-User", m_config.impersonate_user);
    }
    if (!m_config.impersonate_uid.empty()) {
        http.set("Impersonate-Uid", m_config.impersonate_uid);
    }
    for (const auto& group : m_config.impersonate_groups) {
        http.add("Impersonate-Group", group);  // one header per group
    }
}

Result<HttpResponse> HttpTransport::exchange(Poco::Net::HTTPClientSession& session,
                                             const HttpRequest& request) {
    Poco::Net::HTTPRequest http(request.method, m_prefix + request.target,
                                Poco::Net::HTTPMessage::HTTP_1_1);
    set_headers(http, m_token);
    if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
        request.method == "PATCH") {
        http.setContentType(request.content_type);
        http.setContentLength(static_cast<std::streamsize>(request.body.size()));
    }
    session.sendRequest(http) << request.body;
    Poco::Net::HTTPResponse response;
    std::istream& in = session.receiveResponse(response);
    HttpResponse out;
    out.status = static_cast<int>(response.getStatus());
    out.reason = response.getReason();
    Poco::StreamCopier::copyToString(in, out.body);
    if (response.has("Retry-After")) {
        out.retry_after = response.get("Retry-After");
    }
    return out;
}

Result<HttpResponse> HttpTransport::send(const HttpRequest& request) {
    MutexLock lock(m_mutex);
    TRY(refresh_credentials());
    const bool reused = m_session != nullptr;
    for (int round = 0;; ++round) {
        if (!m_session) {
            m_session = new_session(m_request_timeout);
        }
        try {
            return exchange(*m_session, request);
        } catch (const std::exception& e) {
            m_session.reset();
            // A kept-alive connection the server already closed: one fresh try at once.
            if (!(reused && round == 0)) {
                return transport_error(request, e);
            }
        }
    }
}

Result<HttpStream> HttpTransport::open_stream(const HttpRequest& request,
                                              Duration receive_timeout) {
    HttpStream stream;
    {
        MutexLock lock(m_mutex);
        TRY(refresh_credentials());
        stream.session = new_session(receive_timeout);
    }
    try {
        Poco::Net::HTTPRequest http(request.method, m_prefix + request.target,
                                    Poco::Net::HTTPMessage::HTTP_1_1);
        std::string token;
        {
            MutexLock lock(m_mutex);
            token = m_token;
        }
        set_headers(http, token);
        stream.session->sendRequest(http);
        Poco::Net::HTTPResponse response;
        stream.body = &stream.session->receiveResponse(response);
        stream.status = static_cast<int>(response.getStatus());
        stream.reason = response.getReason();
        return stream;
    } catch (const std::exception& e) {
        return transport_error(request, e);
    }
}

}  // namespace envgate::kube
