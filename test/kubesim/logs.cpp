// pods/NAME/log: the kubelet's log files served as the API server proxies them, with
// `container`, `previous`, `follow`, `tailLines` and `limitBytes`.
#include <Poco/Net/HTTPServerResponse.h>

#include <fstream>
#include <thread>

#include "test/kubesim/api.h"
#include "test/kubesim/kubelet.h"
#include "test/kubesim/store.h"

namespace kubesim {

using nlohmann::json;

namespace {

std::string container_name(const json& pod, const std::string& requested, std::string* error) {
    if (!requested.empty()) {
        return requested;
    }
    const json& containers = pod["spec"]["containers"];
    if (containers.size() == 1) {
        return containers[0].value("name", "");
    }
    std::string names;
    for (const auto& c : containers) {
        names += (names.empty() ? "" : " ") + c.value("name", "");
    }
    *error = "a container name must be specified for pod " + pod["metadata"].value("name", "") +
             ", choose one of: [" + names + "]";
    return "";
}

std::string tail(const std::string& text, long lines) {
    if (lines < 0) {
        return text;
    }
    size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') {
        --pos;
    }
    for (long i = 0; i < lines && pos > 0; ++i) {
        size_t nl = text.rfind('\n', pos - 1);
        if (nl == std::string::npos) {
            return text;
        }
        pos = nl;
        if (i + 1 == lines) {
            return text.substr(pos + 1);
        }
    }
    return lines == 0 ? std::string() : text;
}

}  // namespace

void serve_log(Context& ctx, const ApiRequest& req, Poco::Net::HTTPServerResponse& resp) {
    auto pod = ctx.store.get("pods", req.ns, req.name);
    if (!pod) {
        send_error(resp, pod.status(), req.info, req.name);
        return;
    }
    auto q = [&](const char* k) {
        auto it = req.query.find(k);
        return it == req.query.end() ? std::string() : it->second;
    };
    std::string error;
    std::string container = container_name(*pod, q("container"), &error);
    if (container.empty()) {
        send_status(resp, 400, "BadRequest", error);
        return;
    }
    bool running = false;
    auto path = ctx.kubelet.log_path((*pod)["metadata"].value("uid", ""), container,
                                     query_true(req.query, "previous"), &running);
    if (!path) {
        send_status(resp, 400, "BadRequest", path.status().message());
        return;
    }
    std::ifstream in(*path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text = tail(text, q("tailLines").empty() ? -1 : std::stol(q("tailLines")));
    if (!q("limitBytes").empty() && text.size() > std::stoul(q("limitBytes"))) {
        text.resize(std::stoul(q("limitBytes")));
    }
    resp.setStatus(Poco::Net::HTTPResponse::HTTP_OK);
    resp.setContentType("text/plain");
    if (!query_true(req.query, "follow") || !running) {
        resp.setContentLength(static_cast<std::streamsize>(text.size()));
        resp.send() << text;
        return;
    }
    resp.setChunkedTransferEncoding(true);
    std::ostream& out = resp.send();
    out << text;
    out.flush();
    std::ifstream& follow = in;
    follow.clear();
    auto uid = (*pod)["metadata"].value("uid", "");
    while (out.good() && !ctx.stopping && !client_gone(req)) {
        std::string chunk((std::istreambuf_iterator<char>(follow)),
                          std::istreambuf_iterator<char>());
        follow.clear();
        if (!chunk.empty()) {
            out << chunk;
            out.flush();
        }
        bool still = false;
        if (!ctx.kubelet.log_path(uid, container, false, &still) || !still) {
            std::string rest((std::istreambuf_iterator<char>(follow)),
                             std::istreambuf_iterator<char>());
            out << rest;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace kubesim
