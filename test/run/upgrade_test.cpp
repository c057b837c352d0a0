// Given an upgrade whose step throws (an input envgate did not foresee), then the run
// does not crash: the step in progress fails with reason InternalError, the failure
// policy applies to the lock (held after the failure), and the report says so.
#include <Poco/TemporaryFile.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runner/base/exit_status.h"
#include "runner/config/config.h"
#include "runner/run/upgrade.h"
#include "test/fakes/fake_env.h"

using namespace envgate;

namespace {

// Runs `during` in place of each step's process (which then exits 0).
class ScriptedRunner : public ProcessRunner {
  public:
    explicit ScriptedRunner(std::function<void()> during) : m_during(std::move(during)) {}
    Result<StepExit> run(const StepCommand& step, const std::function<void(const std::string&)>&,
                         const std::function<int()>&) override {
        commands.push_back(step.command);
        m_during();
        return StepExit{};
    }
    std::vector<std::string> commands;

  private:
    std::function<void()> m_during;
};

// Rewrites the lock file of gstg as if `them` had taken the lock over.
void take_over(const std::filesystem::path& locks) {
    std::string path = (locks / "gstg.json").string();
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    BOOST_REQUIRE(text.find("local:test") != std::string::npos);
    for (auto at = text.find("local:test"); at != std::string::npos; at = text.find("local:test")) {
        text.replace(at, 10, "local:them");
    }
    std::ofstream(path, std::ios::trunc) << text;
}

// One environment, gstg, with a file store in a temp directory and a deploy step.
struct Fixture {
    std::filesystem::path dir = Poco::TemporaryFile::tempName() + "-upgrade";
    test::FakeEnv env{*parse_rfc3339("2026-01-01T00:00:00Z")};
    test::FakeClock& clock = env.fake_clock;
    std::istringstream in;
    std::ostringstream out, err;
    Context ctx{in, out, err, env,
                [](const std::string&) -> std::optional<std::string> { return std::nullopt; }};
    JobLog log{out, clock, {}};
    Config config;

    Fixture() {
        std::filesystem::create_directories(dir);
        auto parsed = parse_config(
            "version: 1\ndefaults:\n  namespace: gitlab\n  lock: {store: "
            "file, path: " +
                locks().string() +
                ", on_failure: hold}\nenvironments:\n  - name: gstg\n"
                "steps:\n  diff: \"helmfile diff\"\n  deploy: "
                "\"helmfile apply\"\n",
            (dir / "envgate.yml").string());
        BOOST_REQUIRE_MESSAGE(parsed.is_ok(), (parsed.is_ok() ? "" : parsed.status().message()));
        config = std::move(parsed).value();
    }
    ~Fixture() {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
    std::filesystem::path locks() const { return dir / "locks"; }
    int run(ProcessRunner& processes, RunReport& report) {
        UpgradeSettings settings;
        settings.holder = "local:test";
        settings.no_wait = true;
        Upgrade upgrade(config, *config.find_environment("gstg"), ctx, log, processes, settings);
        int code = upgrade.run();
        report = upgrade.report();
        return code;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(upgrade_suite)

BOOST_AUTO_TEST_CASE(an_exception_in_a_step_fails_it_and_applies_the_failure_policy) {
    Fixture f;
    ScriptedRunner processes([] { throw std::runtime_error("unexpected shape of something"); });
    RunReport report;
    int code = f.run(processes, report);

    BOOST_TEST(code == k_exit_failed);
    BOOST_TEST(processes.commands.size() == 1U);
    const StepReport* failed = report.failed_step();
    BOOST_REQUIRE(failed != nullptr);
    BOOST_TEST(failed->name == "diff");
    BOOST_TEST(failed->reason == "InternalError");
    BOOST_TEST(failed->message.find("unexpected shape of something") != std::string::npos);
    BOOST_TEST((report.result == RunResult::failed));
    BOOST_TEST((report.lock.state == LockState::failed));  // on_failure: hold
    BOOST_TEST(f.out.str().find("envgate stopped on an internal error") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_release_that_is_not_written_is_a_failed_run_that_says_so) {
    // Given: every step passes, but before the release the lock file is replaced by
    // garbage (an unwritable record) or by a record another holder took.
    struct Case {
        const char* name;
        std::string record;
        int want_exit;
        const char* want_error;
    };
    const Case cases[] = {
        {"unreadable record", "{not json", k_exit_usage, "the lock could not be released"},
        {"another holder", "", k_exit_failed, "the lock was not released"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            Fixture f;
            int processes_ran = 0;
            ScriptedRunner processes([&] {
                if (processes_ran++ == 0) {
                    return;  // diff; the lock changes during deploy, the last step
                }
                if (!c.record.empty()) {
                    std::ofstream((f.locks() / "gstg.json").string(), std::ios::trunc) << c.record;
                    return;
                }
                take_over(f.locks());
            });
            RunReport report;
            int code = f.run(processes, report);
            BOOST_TEST(code == c.want_exit);
            BOOST_TEST((report.result == RunResult::failed));
            BOOST_REQUIRE(report.lock.update_error.has_value());
            BOOST_TEST(report.lock.update_error->find(c.want_error) != std::string::npos,
                       *report.lock.update_error);
            BOOST_TEST(f.out.str().find(c.want_error) != std::string::npos);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_holder_that_cannot_prove_it_holds_the_lock_stops_before_the_next_step) {
    // Given: during diff, the lock is taken over by another holder (a refused renewal),
    // or the run is paused past the renew deadline (2/3 of the 60 s lease).
    struct Case {
        const char* name;
        bool takeover;
        const char* want;
        const char* stopped;  // the step reported LockLost
    };
    const Case cases[] = {
        // Found by the renewal before deploy.
        {"taken over", true, "the lock is no longer held by this run", "deploy"},
        // Found as diff ends: the time without a renewal is past the deadline.
        {"paused past the renew deadline", false, "no renewal of the lock succeeded for 50s",
         "diff"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            Fixture f;
            ScriptedRunner processes([&] {
                if (c.takeover) {
                    take_over(f.locks());
                } else {
                    f.clock.advance(std::chrono::seconds(50));
                }
            });
            RunReport report;
            int code = f.run(processes, report);
            // Then: deploy never ran; the run failed with LockLost and left the lock alone.
            BOOST_TEST(code == k_exit_failed);
            BOOST_TEST(processes.commands == std::vector<std::string>{"helmfile diff"});
            const StepReport* failed = report.failed_step();
            BOOST_REQUIRE(failed != nullptr);
            BOOST_TEST(failed->name == c.stopped);
            BOOST_TEST(failed->reason == "LockLost");
            BOOST_TEST(failed->message.find(c.want) != std::string::npos, failed->message);
            BOOST_REQUIRE(report.lock.update_error.has_value());
            BOOST_TEST(report.lock.update_error->find("the lock was left as it is") !=
                       std::string::npos);
            if (c.takeover) {
                BOOST_TEST(report.lock.holder == "local:them");
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
