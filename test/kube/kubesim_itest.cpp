// Integration test: envgate's Kubernetes client against a real kubesim process (TLS,
// bearer token, kubeconfig it writes): Lease create/AlreadyExists/CAS Conflict, retries
// of injected 503s, 410 after compaction, a Job watched to completion by the reflector,
// and a wrong token that is Unauthorized without appearing in the message.
#define BOOST_TEST_MODULE envgate_kube_kubesim
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include <Poco/Pipe.h>
#include <Poco/PipeStream.h>
#include <Poco/Process.h>
#include <Poco/TemporaryFile.h>

#include "runner/kube/http_kube_api.h"
#include "runner/kube/kubeconfig.h"
#include "runner/kube/reflector.h"
#include "test/kube/test_api_server.h"

namespace envgate::test {
namespace {

using namespace std::chrono_literals;

class WallClock : public Clock {
  public:
    TimePoint now() override {
        return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
    }
    void sleep_until(TimePoint deadline) override { std::this_thread::sleep_until(deadline); }
};

std::string kubesim_bin() {
    const char* from_env = std::getenv("KUBESIM_BIN");
    return from_env ? from_env : KUBESIM_BIN;
}

// A kubesim on a free port with TLS and a token, stopped by the destructor.
struct Kubesim {
    std::string dir = Poco::TemporaryFile::tempName() + "-kubesim";
    std::string kubeconfig = dir + "/kubeconfig";
    Poco::Pipe out;
    std::optional<Poco::ProcessHandle> handle;

    Kubesim() {
        std::filesystem::create_directories(dir);
        handle = Poco::Process::launch(kubesim_bin(),
                                       {"--port", "0", "--write-kubeconfig", kubeconfig, "--tls",
                                        "--time-scale", "0.01", "--workdir", dir + "/work"},
                                       nullptr, &out, nullptr);
        Poco::PipeInputStream stream(out);
        std::string port;
        std::getline(stream, port);
        BOOST_REQUIRE_MESSAGE(!port.empty(), "kubesim printed no port");
    }
    ~Kubesim() {
        Poco::Process::requestTermination(handle->id());
        handle->wait();
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
    void ctl(const std::vector<std::string>& args) const {
        std::vector<std::string> argv = {"ctl", "--kubeconfig", kubeconfig};
        argv.insert(argv.end(), args.begin(), args.end());
        Poco::Pipe sink;
        auto ctl = Poco::Process::launch(kubesim_bin(), argv, nullptr, &sink, nullptr);
        Poco::PipeInputStream drain(sink);
        std::string ignored((std::istreambuf_iterator<char>(drain)), {});
        BOOST_REQUIRE_EQUAL(ctl.wait(), 0);
    }
};

struct Fixture {
    Kubesim sim;
    WallClock clock;
    kube::RestConfig config;
    std::unique_ptr<kube::HttpKubeApi> api;

    Fixture() {
        kube::KubeconfigSources sources;
        sources.explicit_path = sim.kubeconfig;
        auto loaded = kube::load_rest_config(sources);
        BOOST_REQUIRE_MESSAGE(loaded.is_ok(), why(loaded));
        config = loaded.value();
        BOOST_REQUIRE(config.server.rfind("https://127.0.0.1:", 0) == 0u);
        auto created = kube::HttpKubeApi::create(config, clock);
        BOOST_REQUIRE_MESSAGE(created.is_ok(), why(created));
        api = std::move(created).value();
    }
};

nlohmann::json lease(const std::string& holder) {
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", "envgate-gprd"}, {"namespace", "envgate-locks"}}},
            {"spec", {{"holderIdentity", holder}, {"leaseDurationSeconds", 30}}}};
}

bool has_condition(const nlohmann::json& job, const std::string& type) {
    for (const auto& c : job.value("/status/conditions"_json_pointer, nlohmann::json::array())) {
        if (c.value("type", "") == type && c.value("status", "") == "True") {
            return true;
        }
    }
    return false;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(kube_kubesim, Fixture)

BOOST_AUTO_TEST_CASE(lease_create_conflict_and_already_exists) {
    const auto collection = kube::leases("envgate-locks");
    auto created = api->create(collection, lease("pipeline-1"));
    BOOST_REQUIRE_MESSAGE(created.is_ok(), why(created));
    auto again = api->create(collection, lease("pipeline-2"));
    BOOST_TEST(again.status().code() == Code::already_exists, why(again));
    // Two writers read the same version; the second PUT is a Conflict.
    nlohmann::json first = *created;
    first["spec"]["holderIdentity"] = "pipeline-2";
    auto updated = api->update(collection.with_name("envgate-gprd"), first);
    BOOST_REQUIRE_MESSAGE(updated.is_ok(), why(updated));
    auto stale = api->update(collection.with_name("envgate-gprd"), first);
    BOOST_REQUIRE(!stale.is_ok());
    BOOST_TEST(stale.status().code() == Code::conflict);
    BOOST_TEST(stale.status().message().rfind("PUT leases/envgate-gprd: 409 Conflict: ", 0) == 0u,
               stale.status().message());
    auto read = api->get(collection.with_name("envgate-gprd"));
    BOOST_REQUIRE(read.is_ok());
    BOOST_TEST((*read)["spec"]["holderIdentity"] == "pipeline-2");
}

BOOST_AUTO_TEST_CASE(retries_injected_503s_then_succeeds) {
    BOOST_REQUIRE(api->create(kube::leases("envgate-locks"), lease("x")).is_ok());
    sim.ctl({"fail", "--code", "503", "--verb", "get", "--resource", "leases", "--count", "2"});
    auto read = api->get(kube::leases("envgate-locks", "envgate-gprd"));
    BOOST_TEST(read.is_ok(), why(read));
}

BOOST_AUTO_TEST_CASE(watch_from_a_compacted_version_is_gone) {
    auto list = api->list(kube::leases("envgate-locks"), {});
    BOOST_REQUIRE(list.is_ok());
    BOOST_REQUIRE(api->create(kube::leases("envgate-locks"), lease("x")).is_ok());
    sim.ctl({"compact"});
    kube::WatchOptions options;
    options.resource_version = list->resource_version;
    options.timeout_seconds = 5;
    Status status = api->watch(kube::leases("envgate-locks"), options,
                               [](const kube::WatchEvent&) { return kube::WatchNext::proceed; });
    BOOST_TEST(status.code() == Code::gone, status.message());
}

BOOST_AUTO_TEST_CASE(reflector_watches_a_job_to_completion) {
    // The container ends only once the reflector has listed the Job (kubesim runs it as
    // a local process): the completion is always a change the watch delivers.
    const std::string go =
        (std::filesystem::temp_directory_path() / ("envgate-reflector-" + std::to_string(getpid())))
            .string();
    std::filesystem::remove(go);
    const nlohmann::json job = {
        {"apiVersion", "batch/v1"},
        {"kind", "Job"},
        {"metadata", {{"name", "pre-migrations"}, {"namespace", "gitlab"}}},
        {"spec",
         {{"backoffLimit", 1},
          {"template",
           {{"spec",
             {{"restartPolicy", "Never"},
              {"containers",
               {{{"name", "migrations"},
                 {"image", "busybox"},
                 {"command",
                  {"sh", "-c",
                   "until [ -e '" + go + "' ]; do sleep 0.01; done; echo migrating"}}}}}}}}}}}};
    auto created = api->create(kube::jobs("gitlab"), job);
    BOOST_REQUIRE_MESSAGE(created.is_ok(), why(created));
    kube::ReflectorOptions options;
    options.selectors.field_selector = "metadata.name=pre-migrations";
    int changes = 0;
    Status status = kube::watch_until(*api, clock, kube::jobs("gitlab"), options, clock.now() + 60s,
                                      [&](kube::EventType, const nlohmann::json& object) {
                                          if (++changes == 1) {
                                              std::ofstream{go};
                                          }
                                          return has_condition(object, "Complete")
                                                     ? kube::WatchNext::stop
                                                     : kube::WatchNext::proceed;
                                      });
    std::filesystem::remove(go);
    BOOST_TEST(status.is_ok(), status.message());
    BOOST_TEST(changes >= 2);
}

BOOST_AUTO_TEST_CASE(wrong_token_is_unauthorized_and_not_echoed) {
    kube::RestConfig wrong = config;
    const std::string token = "wrong-token-9f8e7d6c5b4a";
    wrong.bearer_token = kube::SecretString(token);
    auto other = kube::HttpKubeApi::create(wrong, clock);
    BOOST_REQUIRE(other.is_ok());
    auto read = (*other)->get(kube::leases("envgate-locks", "envgate-gprd"));
    BOOST_REQUIRE(!read.is_ok());
    BOOST_TEST(read.status().code() == Code::unauthorized);
    BOOST_TEST(read.status().message().find(token) == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
