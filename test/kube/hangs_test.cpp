// Given an exec credential plugin that never answers, an API that keeps failing with
// a retryable error, and a wait on the real clock, then each ends on its own bound
// (the plugin is killed at its timeout) or within a second of a SIGTERM: the plugin
// is killed, the retry loop returns Cancelled instead of sleeping out its back-off,
// and RealClock::sleep_until returns early.
#include <Poco/TemporaryFile.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runner/base/real_clock.h"
#include "runner/base/signals.h"
#include "runner/kube/exec_credential.h"
#include "runner/kube/retry.h"
#include "test/fakes/fake_clock.h"

using namespace envgate;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using Steady = std::chrono::steady_clock;

// A plugin that prints nothing and sleeps for a minute.
struct HungPlugin {
    std::string dir = Poco::TemporaryFile::tempName() + "-hung";
    std::string path = dir + "/plugin.sh";
    HungPlugin() {
        fs::create_directories(dir);
        std::ofstream(path) << "#!/bin/sh\nexec sleep 60\n";
        fs::permissions(path, fs::perms::owner_all);
    }
    ~HungPlugin() {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
    }
};

// Raises SIGTERM's flag after `after`, and clears it when destroyed.
struct SigtermAfter {
    std::thread thread;
    explicit SigtermAfter(Duration after)
        : thread([after] {
              std::this_thread::sleep_for(after);
              set_pending_signal(SIGTERM);
          }) {}
    ~SigtermAfter() {
        thread.join();
        set_pending_signal(0);
    }
};

double seconds_since(Steady::time_point t0) {
    return std::chrono::duration<double>(Steady::now() - t0).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hangs_suite)

BOOST_AUTO_TEST_CASE(a_plugin_that_never_answers_is_killed_at_its_timeout) {
    HungPlugin plugin;
    auto t0 = Steady::now();
    auto creds = kube::run_exec_plugin(
        {"client.authentication.k8s.io/v1", plugin.path, {}, {}, std::chrono::milliseconds(300)});
    BOOST_REQUIRE(!creds.is_ok());
    BOOST_TEST(creds.status().code() == Code::unauthorized);
    BOOST_TEST(creds.status().message().find("no answer within 300ms, killed") != std::string::npos,
               creds.status().message());
    BOOST_TEST(seconds_since(t0) < 30.0);  // not the plugin's 60 s
}

BOOST_AUTO_TEST_CASE(sigterm_kills_a_hung_plugin_within_a_second) {
    HungPlugin plugin;
    SigtermAfter sigterm(200ms);
    auto t0 = Steady::now();
    auto creds = kube::run_exec_plugin(
        {"client.authentication.k8s.io/v1", plugin.path, {}, {}, std::chrono::seconds(60)},
        pending_signal);
    double took = seconds_since(t0);
    BOOST_REQUIRE(!creds.is_ok());
    BOOST_TEST(creds.status().code() == Code::cancelled);
    BOOST_TEST(creds.status().message().find("stopped by signal 15") != std::string::npos);
    BOOST_TEST(took < 0.2 + 1.0, took);
}

BOOST_AUTO_TEST_CASE(sigterm_ends_the_retry_back_off_at_once) {
    // A FakeClock: the back-off sleeps cost nothing; the signal arrives during the first.
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:00:00Z"));
    kube::Random random(1);
    kube::RetryPolicy policy;
    int attempts = 0;
    Status s = kube::retry_transient(
        clock, random, policy, clock.now() + 60s,
        [&] {
            if (++attempts == 1) {
                set_pending_signal(SIGTERM);
            }
            return kube::Attempt{Status(Code::transient, "POST jobs: 500"), std::nullopt};
        },
        pending_signal);
    set_pending_signal(0);
    BOOST_TEST(s.code() == Code::cancelled);
    BOOST_TEST(attempts == 1);
    BOOST_TEST(s.message() == "POST jobs: 500 (stopped by signal 15)");
}

BOOST_AUTO_TEST_CASE(sigterm_ends_a_real_clock_sleep_within_a_second) {
    RealClock clock(pending_signal);
    SigtermAfter sigterm(200ms);
    auto t0 = Steady::now();
    clock.sleep_until(clock.now() + 30s);
    double took = seconds_since(t0);
    BOOST_TEST(took < 0.2 + 1.0, took);
}

BOOST_AUTO_TEST_SUITE_END()
