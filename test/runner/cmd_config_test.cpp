// Given `envgate config check` run in-process on good, broken and missing files,
// then it exits 0 with the resolved settings on stdout, or 2 with the errors on
// stderr and nothing on stdout.
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <string>

#include "runner/cmd_config.h"
#include "runner/exit_status.h"
#include "test/fakes/fake_clock.h"

using namespace envgate;

namespace {

struct Run {
    int code;
    std::string out;
    std::string err;
};

Run config_check(const std::string& path) {
    std::istringstream in;
    std::ostringstream out;
    std::ostringstream err;
    test::FakeClock clock{TimePoint{}};
    Context ctx{in, out, err, clock, [](const std::string&) { return std::nullopt; }};
    int code = run_config_check(ConfigCheckOptions{path}, ctx);
    return {code, out.str(), err.str()};
}

const std::string k_dir = std::string(ENVGATE_FIXTURES) + "/config";

}  // namespace

BOOST_AUTO_TEST_SUITE(cmd_config_suite)

BOOST_AUTO_TEST_CASE(valid_config_prints_effective_settings_and_exits_0) {
    Run r = config_check(k_dir + "/envgate.yml");
    BOOST_TEST(r.code == k_exit_success);
    BOOST_TEST(r.err.empty());
    BOOST_TEST(r.out.find("  - name: gprd\n") != std::string::npos);
    BOOST_TEST(r.out.find("order: newest_first") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(broken_config_prints_each_error_and_exits_2) {
    Run r = config_check(k_dir + "/bad.yml");
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(r.out.empty());
    BOOST_TEST(r.err.find("bad.yml:6:53: defaults.lock.on_faillure: unknown key") !=
               std::string::npos);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 3);
}

BOOST_AUTO_TEST_CASE(missing_config_exits_2) {
    Run r = config_check(k_dir + "/nothing-here.yml");
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(r.err.find("nothing-here.yml: cannot read the config file") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
