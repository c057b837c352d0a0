// Given `envgate config check` run in-process on good, broken and missing files,
// then it exits 0 with the resolved settings on stdout, or 2 with the errors on
// stderr and nothing on stdout.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/base/exit_status.h"
#include "runner/cmd_config.h"
#include "test/fakes/captured_run.h"

using namespace envgate;

namespace {

test::CapturedRun config_check(const std::string& path, const std::string& output = "text") {
    return test::capture_run([&](Context& ctx) {
        return run_config_check(ConfigCheckOptions{path, output}, ctx);
    });
}

const std::string k_dir = std::string(ENVGATE_FIXTURES) + "/config";

}  // namespace

BOOST_AUTO_TEST_SUITE(cmd_config_suite)

BOOST_AUTO_TEST_CASE(valid_config_prints_effective_settings_and_exits_0) {
    test::CapturedRun r = config_check(k_dir + "/envgate.yml");
    BOOST_TEST(r.code == k_exit_success);
    BOOST_TEST(r.err.empty());
    BOOST_TEST(r.out.find("  - name: gprd\n") != std::string::npos);
    BOOST_TEST(r.out.find("order: newest_first") != std::string::npos);
}

// Given -o json, then the same effective settings come as one JSON object, typed where
// the config is (version, booleans), with the run order of every gate and step.
BOOST_AUTO_TEST_CASE(valid_config_prints_json_with_the_run_order) {
    test::CapturedRun r = config_check(k_dir + "/envgate.yml", "json");
    BOOST_TEST(r.code == k_exit_success);
    auto j = nlohmann::json::parse(r.out);
    BOOST_TEST(j["version"] == 1);
    BOOST_TEST(j["environments"][1]["name"] == "gprd");
    BOOST_TEST(j["environments"][1]["lock"]["order"] == "newest_first");
    BOOST_TEST(j["defaults"]["lock"]["store"] == "kubernetes");
    BOOST_TEST(j["steps"]["deploy"] == "helmfile -e $ENVGATE_ENV apply");
    std::vector<std::string> order;
    for (const auto& e : j["order"]) {
        order.push_back(e["name"].get<std::string>() + "/" + e["kind"].get<std::string>());
    }
    std::vector<std::string> want = {"diff/step",
                                     "pre-migrations/gate",
                                     "deploy/step",
                                     "post-migrations/gate",
                                     "batched-migrations-check/gate",
                                     "qa/step"};
    BOOST_TEST(order == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(broken_config_prints_each_error_and_exits_2) {
    test::CapturedRun r = config_check(k_dir + "/bad.yml");
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(r.out.empty());
    BOOST_TEST(r.err.find("bad.yml:6:53: defaults.lock.on_faillure: unknown key") !=
               std::string::npos);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 3);
}

BOOST_AUTO_TEST_CASE(missing_config_exits_2) {
    test::CapturedRun r = config_check(k_dir + "/nothing-here.yml");
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(r.err.find("nothing-here.yml: cannot read the config file") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
