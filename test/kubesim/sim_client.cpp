// kubesim HTTP client: see sim_client.h.
#include "test/kubesim/sim_client.h"

#include <Poco/Base64Decoder.h>
#include <Poco/Crypto/X509Certificate.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>
#include <yaml-cpp/yaml.h>

#include <sstream>

namespace kubesim {

using envgate::Code;
using envgate::Result;
using envgate::Status;

namespace {

YAML::Node named(const YAML::Node& list, const std::string& name) {
    for (const auto& item : list) {
        if (item["name"].as<std::string>() == name) {
            return item;
        }
    }
    return YAML::Node();
}

std::string base64_decode(const std::string& text) {
    std::istringstream in(text);
    Poco::Base64Decoder dec(in);
    std::string out;
    Poco::StreamCopier::copyToString(dec, out);
    return out;
}

}  // namespace

SimClient::SimClient(SimClient&&) noexcept = default;
SimClient::~SimClient() = default;

Result<SimClient> SimClient::from_kubeconfig(const std::string& kubeconfig) {
    try {
        YAML::Node cfg = YAML::LoadFile(kubeconfig);
        std::string ctx_name = cfg["current-context"].as<std::string>();
        YAML::Node ctx = named(cfg["contexts"], ctx_name)["context"];
        YAML::Node cluster = named(cfg["clusters"], ctx["cluster"].as<std::string>())["cluster"];
        YAML::Node user = named(cfg["users"], ctx["user"].as<std::string>())["user"];
        SimClient c;
        c.m_server = cluster["server"].as<std::string>();
        Poco::URI uri(c.m_server);
        c.m_host = uri.getHost();
        c.m_port = uri.getPort();
        c.m_tls = uri.getScheme() == "https";
        if (cluster["certificate-authority-data"]) {
            c.m_ca_pem = base64_decode(cluster["certificate-authority-data"].as<std::string>());
        }
        if (user && user["token"]) {
            c.m_token = user["token"].as<std::string>();
        }
        return c;
    } catch (const YAML::Exception& e) {
        return Status(Code::invalid, kubeconfig + ": " + e.what());
    } catch (const Poco::Exception& e) {
        return Status(Code::invalid, kubeconfig + ": " + e.displayText());
    }
}

std::unique_ptr<Poco::Net::HTTPClientSession> SimClient::new_session() const {
    std::unique_ptr<Poco::Net::HTTPClientSession> s;
    if (m_tls) {
        Poco::Net::Context::Ptr ctx = new Poco::Net::Context(
            Poco::Net::Context::TLS_CLIENT_USE, "", "", "", Poco::Net::Context::VERIFY_STRICT);
        std::istringstream pem(m_ca_pem);
        ctx->addCertificateAuthority(Poco::Crypto::X509Certificate(pem));
        s = std::make_unique<Poco::Net::HTTPSClientSession>(m_host,
                                                            static_cast<Poco::UInt16>(m_port), ctx);
    } else {
        s = std::make_unique<Poco::Net::HTTPClientSession>(m_host,
                                                           static_cast<Poco::UInt16>(m_port));
    }
    s->setKeepAlive(true);
    s->setTimeout(Poco::Timespan(60, 0));
    return s;
}

Result<HttpResponse> SimClient::request(const std::string& method, const std::string& path,
                                        const std::string& body, const std::string& content_type) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        try {
            if (!m_session) {
                m_session = new_session();
            }
            Poco::Net::HTTPRequest req(method, path, Poco::Net::HTTPMessage::HTTP_1_1);
            req.setKeepAlive(true);
            if (!m_token.empty()) {
                req.set("Authorization", "Bearer " + m_token);
            }
            if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
                req.setContentType(content_type);
                req.setContentLength(static_cast<std::streamsize>(body.size()));
                m_session->sendRequest(req) << body;
            } else {
                m_session->sendRequest(req);
            }
            Poco::Net::HTTPResponse resp;
            std::istream& in = m_session->receiveResponse(resp);
            HttpResponse out;
            out.code = resp.getStatus();
            Poco::StreamCopier::copyToString(in, out.body);
            for (const auto& [k, v] : resp) {
                out.headers[k] = v;
            }
            return out;
        } catch (const Poco::Exception& e) {
            m_session.reset();
            if (attempt == 1) {
                return Status(Code::transient, method + " " + path + ": " + e.displayText());
            }
        }
    }
    return Status(Code::transient, method + " " + path + ": failed");
}

Result<int> SimClient::stream(const std::string& path,
                              const std::function<bool(const std::string&)>& on_line) {
    try {
        auto session = new_session();
        session->setTimeout(Poco::Timespan(120, 0));
        Poco::Net::HTTPRequest req("GET", path, Poco::Net::HTTPMessage::HTTP_1_1);
        if (!m_token.empty()) {
            req.set("Authorization", "Bearer " + m_token);
        }
        session->sendRequest(req);
        Poco::Net::HTTPResponse resp;
        std::istream& in = session->receiveResponse(resp);
        std::string line;
        while (std::getline(in, line)) {
            if (!on_line(line)) {
                break;
            }
        }
        return static_cast<int>(resp.getStatus());
    } catch (const Poco::Exception& e) {
        return Status(Code::transient, "GET " + path + ": " + e.displayText());
    }
}

}  // namespace kubesim
