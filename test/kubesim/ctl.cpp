// `kubesim ctl`: a command-line client of the control API (control.cpp).
#include <Poco/Net/SSLManager.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/kubesim/sim_client.h"

namespace kubesim {

namespace {

using nlohmann::json;

const char* k_ctl_usage =
    "usage: kubesim ctl [--kubeconfig FILE] COMMAND [ARGS]\n"
    "  evict [NS/]POD [--message TEXT]   node-pressure eviction by the kubelet\n"
    "  preempt [NS/]POD                  scheduler preemption (DisruptionTarget + delete)\n"
    "  api-evict [NS/]POD                Eviction API (DisruptionTarget + delete)\n"
    "  fail --code N [--verb V] [--resource R] [--count N] [--retry-after S]\n"
    "  reset [--verb V] [--resource R] [--count N]      reset matching connections\n"
    "  delay --ms N [--verb V] [--resource R] [--count N]\n"
    "  faults | clear-faults             list or drop fault rules\n"
    "  close-watches                     end every open watch\n"
    "  compact                           drop history: older resourceVersions get 410\n"
    "  counters [--reset]                requests per verb and resource\n"
    "  healthz\n"
    "VERB is get|list|watch|create|update|patch|delete, RESOURCE e.g. leases, pods/log;\n"
    "--count -1 means every request. KUBECONFIG is used when --kubeconfig is absent.\n";

struct Parsed {
    std::string command;
    std::vector<std::string> positional;
    std::map<std::string, std::string> flags;
};

Parsed parse(int argc, char** argv) {
    Parsed p;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) == 0) {
            p.flags[a.substr(2)] = (a == "--reset") ? "1" : (i + 1 < argc ? argv[++i] : "");
        } else if (p.command.empty()) {
            p.command = a;
        } else {
            p.positional.push_back(a);
        }
    }
    return p;
}

json rule_body(const Parsed& p) {
    json body = json::object();
    auto num = [&](const char* flag, const char* field) {
        if (p.flags.count(flag) != 0) {
            body[field] = std::stoi(p.flags.at(flag));
        }
    };
    for (const char* f : {"verb", "resource"}) {
        if (p.flags.count(f) != 0) {
            body[f] = p.flags.at(f);
        }
    }
    num("code", "code");
    num("count", "count");
    num("retry-after", "retryAfterSeconds");
    num("ms", "delayMs");
    return body;
}

// Method, path and body for a command; empty path when the command is unknown.
std::tuple<std::string, std::string, json> route(const Parsed& p) {
    const std::string base = "/kubesim/v1/";
    const std::string& c = p.command;
    if (c == "evict" || c == "preempt" || c == "api-evict") {
        if (p.positional.empty()) {
            return {"", "", nullptr};
        }
        std::string ref = p.positional[0];
        size_t slash = ref.find('/');
        std::string ns = slash == std::string::npos ? "default" : ref.substr(0, slash);
        std::string name = slash == std::string::npos ? ref : ref.substr(slash + 1);
        json body = json::object();
        if (p.flags.count("message") != 0) {
            body["message"] = p.flags.at("message");
        }
        return {"POST", base + "namespaces/" + ns + "/pods/" + name + "/" + c, body};
    }
    if (c == "fail" || c == "reset" || c == "delay") {
        return {"POST", base + "faults/" + c, rule_body(p)};
    }
    if (c == "faults") {
        return {"GET", base + "faults", nullptr};
    }
    if (c == "clear-faults") {
        return {"POST", base + "faults/clear", nullptr};
    }
    if (c == "close-watches") {
        return {"POST", base + "watches/close", nullptr};
    }
    if (c == "compact") {
        return {"POST", base + "compact", nullptr};
    }
    if (c == "counters") {
        return p.flags.count("reset") != 0
                   ? std::make_tuple(std::string("POST"), base + "counters/reset", json())
                   : std::make_tuple(std::string("GET"), base + "counters", json());
    }
    if (c == "healthz") {
        return {"GET", base + "healthz", nullptr};
    }
    return {"", "", nullptr};
}

}  // namespace

int run_ctl(int argc, char** argv) {
    Parsed p = parse(argc, argv);
    auto [method, path, body] = route(p);
    if (path.empty()) {
        std::cerr << k_ctl_usage;
        return p.command == "help" ? 0 : 2;
    }
    std::string kubeconfig = p.flags.count("kubeconfig") != 0 ? p.flags["kubeconfig"] : "";
    if (kubeconfig.empty() && std::getenv("KUBECONFIG") != nullptr) {
        kubeconfig = std::getenv("KUBECONFIG");
    }
    if (kubeconfig.empty()) {
        std::cerr << "kubesim ctl: no kubeconfig (use --kubeconfig or KUBECONFIG)\n";
        return 2;
    }
    Poco::Net::initializeSSL();
    auto client = SimClient::from_kubeconfig(kubeconfig);
    if (!client) {
        std::cerr << "kubesim ctl: " << client.status().message() << "\n";
        return 1;
    }
    auto resp = client->request(method, path, body.is_null() ? "" : body.dump());
    if (!resp) {
        std::cerr << "kubesim ctl: " << resp.status().message() << "\n";
        return 1;
    }
    std::cout << resp->body << "\n";
    return resp->code >= 200 && resp->code < 300 ? 0 : 1;
}

}  // namespace kubesim
