// kubesim as a well-behaved process: it listens on 127.0.0.1 only, and SIGTERM ends
// it with exit 0 and no container process (nor a child it forked) left behind.
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "test/kubesim/sim_process.h"

namespace kubesim::testing {

using nlohmann::json;

namespace {

int read_pid(const std::string& path) {
    std::ifstream in(path);
    int pid = 0;
    in >> pid;
    return pid;
}

// Alive means it exists and is not a zombie waiting for its (new) parent.
bool alive(int pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
        return false;
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

// Local addresses (hex "ADDR:PORT") of listening sockets on `port` in /proc/net/tcp*.
std::vector<std::string> listeners(int port) {
    std::vector<std::string> out;
    char want[8];
    snprintf(want, sizeof want, ":%04X", port);
    for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream in(file);
        std::string line;
        std::getline(in, line);
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            std::string slot, local, remote, state;
            fields >> slot >> local >> remote >> state;
            if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == want) {
                out.push_back(local);
            }
        }
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_process)

// Given kubesim running a pod whose shell forked a child, when kubesim gets SIGTERM,
// then it exits 0 and neither process survives; it listened on 127.0.0.1 only.
BOOST_AUTO_TEST_CASE(sigterm_leaves_no_orphans_and_binds_loopback_only) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    std::string dir = sim.dir();
    std::string script =
        "sleep 300 & echo $! > " + dir + "/child; echo $$ > " + dir + "/parent; wait";
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "forker"}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"containers",
                   {{{"name", "c"}, {"image", "busybox"}, {"command", {"sh", "-c", script}}}}}}}};
    int code = 0;
    send_json(c, "POST", "/api/v1/namespaces/default/pods", pod, &code);
    BOOST_REQUIRE_EQUAL(code, 201);
    BOOST_REQUIRE(
        wait_until([&] { return read_pid(dir + "/child") > 0 && read_pid(dir + "/parent") > 0; }));
    int child = read_pid(dir + "/child");
    int parent = read_pid(dir + "/parent");
    BOOST_TEST(alive(child));
    BOOST_TEST(alive(parent));

    auto addrs = listeners(sim.port());
    BOOST_REQUIRE(!addrs.empty());
    for (const auto& a : addrs) {
        BOOST_TEST((a == "0100007F:" + a.substr(9)), "listening on " << a);
    }

    int status = sim.stop();
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(WEXITSTATUS(status) == 0);
    BOOST_TEST(
        wait_until([&] { return !alive(child) && !alive(parent); }, std::chrono::seconds(10)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kubesim::testing
