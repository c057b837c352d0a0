// kubesim: the bundled Kubernetes API emulator envgate's integration tests, benchmarks
// and demo run against.
//   kubesim [--port N] [--write-kubeconfig FILE] [--tls] [--time-scale X]
//           [--history N] [--bookmark-interval-ms N] [--workdir DIR]
//   kubesim ctl [--kubeconfig FILE] COMMAND ...   (see ctl.cpp)
#include <Poco/Net/SSLManager.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "test/kubesim/controller.h"
#include "test/kubesim/faults.h"
#include "test/kubesim/kubelet.h"
#include "test/kubesim/objects.h"
#include "test/kubesim/processes.h"
#include "test/kubesim/server.h"
#include "test/kubesim/store.h"
#include "test/kubesim/tls.h"

namespace kubesim {
int run_ctl(int argc, char** argv);
}

namespace {

using kubesim::Options;

const char* k_usage =
    "usage: kubesim [--port N] [--write-kubeconfig FILE] [--tls] [--time-scale X]\n"
    "               [--history N] [--bookmark-interval-ms N] [--workdir DIR]\n"
    "       kubesim ctl [--kubeconfig FILE] COMMAND ...  (kubesim ctl help)\n";

bool parse_options(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        try {
            if (a == "--port") {
                o.port = std::stoi(next());
            } else if (a == "--write-kubeconfig") {
                o.kubeconfig = next();
            } else if (a == "--tls") {
                o.tls = true;
            } else if (a == "--time-scale") {
                o.time_scale = std::stod(next());
            } else if (a == "--history") {
                o.history = std::stoul(next());
            } else if (a == "--bookmark-interval-ms") {
                o.bookmark_ms = std::stoi(next());
            } else if (a == "--workdir") {
                o.workdir = next();
            } else {
                std::cerr << "kubesim: unknown argument " << a << "\n" << k_usage;
                return false;
            }
        } catch (const std::exception&) {
            std::cerr << "kubesim: bad value for " << a << "\n" << k_usage;
            return false;
        }
    }
    return o.time_scale > 0 && o.history > 0;
}

void seed_namespaces(kubesim::Store& store) {
    for (const char* ns : {"default", "kube-system", "kube-public"}) {
        (void)store.create("namespaces", {{"apiVersion", "v1"},
                                          {"kind", "Namespace"},
                                          {"metadata", {{"name", ns}}},
                                          {"spec", {{"finalizers", {"kubernetes"}}}},
                                          {"status", {{"phase", "Active"}}}});
    }
}

int serve(Options options) {
    kubesim::block_termination_signals();
    bool own_workdir = options.workdir.empty();
    if (own_workdir) {
        char tmpl[] = "/tmp/kubesim-XXXXXX";
        if (::mkdtemp(tmpl) == nullptr) {
            std::cerr << "kubesim: cannot create a work directory\n";
            return 1;
        }
        options.workdir = tmpl;
    }
    std::filesystem::create_directories(options.workdir + "/pods");
    kubesim::TlsFiles tls;
    if (options.tls) {
        auto files = kubesim::generate_tls(options.workdir);
        if (!files) {
            std::cerr << "kubesim: " << files.status().message() << "\n";
            return 1;
        }
        tls = *files;
        options.token = kubesim::random_token();
        Poco::Net::initializeSSL();
    }
    kubesim::Store store(options.history);
    seed_namespaces(store);
    kubesim::Faults faults;
    kubesim::Kubelet kubelet(store, options.time_scale, options.workdir + "/pods");
    kubesim::JobController controller(store, options.time_scale);
    kubesim::Context ctx{store, faults, kubelet, options, ""};
    kubesim::Server server(ctx);
    auto port = server.start(options.port, options.tls ? &tls : nullptr);
    if (!port) {
        std::cerr << "kubesim: " << port.status().message() << "\n";
        return 1;
    }
    ctx.server_address = "127.0.0.1:" + std::to_string(*port);
    std::string url = std::string(options.tls ? "https" : "http") + "://" + ctx.server_address;
    if (!options.kubeconfig.empty()) {
        auto st = kubesim::write_kubeconfig(options.kubeconfig, url, options.tls ? tls.ca_cert : "",
                                            options.token);
        if (!st.is_ok()) {
            std::cerr << "kubesim: " << st.message() << "\n";
            return 1;
        }
    }
    kubelet.start();
    controller.start();
    std::cout << *port << std::endl;
    std::cerr << "kubesim: serving " << url << " (time scale " << options.time_scale << ")"
              << std::endl;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    int sig = 0;
    sigwait(&set, &sig);
    ctx.stopping = true;
    ++ctx.watch_generation;
    store.wake_all();
    controller.stop();
    kubelet.stop();
    server.stop();
    if (own_workdir) {
        std::error_code ec;
        std::filesystem::remove_all(options.workdir, ec);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "ctl") == 0) {
        return kubesim::run_ctl(argc - 1, argv + 1);
    }
    if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::cout << k_usage;
        return 0;
    }
    Options options;
    if (!parse_options(argc, argv, options)) {
        return 2;
    }
    return serve(options);
}
