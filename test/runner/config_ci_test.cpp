// Given envgate.yml texts with a `ci:` section, then load_config reads the image,
// runner tags, interruptible, timeout and each environment's deployment tier, and
// every mistake in it fails with file:line:column, the field and what to write.
#include <boost/test/unit_test.hpp>

#include <string>

#include "runner/cmd_config.h"
#include "runner/config/config.h"
#include "runner/config/config_ci.h"

using namespace envgate;

namespace {

const std::string k_path = "deploy/envgate.yml";

// Lines 1-5; the `ci:` section of each case starts on line 6.
const std::string k_head =
    "version: 1\n"
    "defaults: {namespace: app}\n"
    "environments:\n"
    "  - name: staging\n"
    "  - name: production\n";

std::string error_of(const std::string& ci) {
    auto r = parse_config(k_head + ci, k_path);
    return r.is_ok() ? "(no error)" : r.status().message();
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(config_ci_suite)

BOOST_AUTO_TEST_CASE(reads_every_ci_setting) {
    auto r = parse_config(k_head +
                              "ci:\n"
                              "  tags: [kubernetes, deploy]\n"
                              "  interruptible: false\n"
                              "  timeout: 1h30m\n"
                              "  deployment_tiers: {production: production, staging: staging}\n",
                          k_path);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    const CiSettings& ci = r->ci;
    BOOST_TEST((ci.tags == std::vector<std::string>{"kubernetes", "deploy"}));
    BOOST_REQUIRE(ci.interruptible.has_value());
    BOOST_TEST(*ci.interruptible == false);
    BOOST_TEST((ci.timeout == std::chrono::minutes(90)));
    BOOST_TEST(ci.deployment_tiers.at("production") == "production");
    BOOST_TEST(ci.deployment_tiers.at("staging") == "staging");
    BOOST_TEST(ci.has_defaults());
    // `envgate config check` shows them, and its output reads back the same.
    std::string shown = render_config(*r);
    BOOST_TEST(has(shown, "interruptible: false"), shown);
    auto again = parse_config(shown, k_path);
    BOOST_REQUIRE_MESSAGE(again.is_ok(), (again.is_ok() ? "" : again.status().message()));
    BOOST_TEST((again->ci.timeout == std::chrono::minutes(90)));
    BOOST_TEST(again->ci.deployment_tiers == ci.deployment_tiers);
}

BOOST_AUTO_TEST_CASE(no_ci_section_sets_no_defaults) {
    auto r = parse_config(k_head, k_path);
    BOOST_REQUIRE(r.is_ok());
    BOOST_TEST(!r->ci.has_defaults());
    BOOST_TEST(r->ci.deployment_tiers.empty());
    BOOST_TEST(!has(render_config(*r), "ci:"));
}

BOOST_AUTO_TEST_CASE(each_mistake_names_file_line_and_field) {
    const std::pair<std::string, std::string> cases[] = {
        {"ci:\n  imag: x\n",
         "deploy/envgate.yml:7:3: ci.imag: unknown key; did you mean \"image\"?"},
        // The child's image is the generate job's: an old ci.image is named, not ignored.
        {"ci:\n  image: registry.example.com/tools/envgate:0.1.0\n",
         "deploy/envgate.yml:7:10: ci.image: no longer read: the child pipeline runs in the "
         "generate job's image, the component's `image` input; remove this line"},
        {"ci:\n  tags: k8s\n", "deploy/envgate.yml:7:9: ci.tags:"},
        {"ci:\n  tags: [a, \"\"]\n", "deploy/envgate.yml:7:13: ci.tags[1]: must not be empty"},
        {"ci:\n  interruptible: maybe\n",
         "deploy/envgate.yml:7:18: ci.interruptible: expected true or false, got \"maybe\""},
        {"ci:\n  timeout: 30s\n",
         "deploy/envgate.yml:7:12: ci.timeout: \"30s\" is too short; the minimum is"},
        {"ci:\n  timeout: soon\n",
         "deploy/envgate.yml:7:12: ci.timeout: \"soon\" is not a duration"},
        {"ci:\n  deployment_tiers:\n    prodution: production\n",
         "deploy/envgate.yml:8:5: ci.deployment_tiers.prodution: unknown key; did you mean "
         "\"production\"?"},
        {"ci:\n  deployment_tiers:\n    production: prod\n",
         "deploy/envgate.yml:8:17: ci.deployment_tiers.production: \"prod\" is not one of: "
         "production, staging, testing, development, other"},
        {"ci: [image]\n", "deploy/envgate.yml:6:5: ci: expected a mapping"},
        {"ci:\n  deploy_branches: main\n",
         "deploy/envgate.yml:7:20: ci.deploy_branches: \"main\": expected protected or a list "
         "of branches"},
        {"ci:\n  deploy_branches: []\n",
         "deploy/envgate.yml:7:20: ci.deploy_branches: must not be empty; leave it out"},
        {"ci:\n  deploy_branches: [main, \"\"]\n",
         "deploy/envgate.yml:7:27: ci.deploy_branches[1]: must not be empty"},
        {"ci:\n  deploy_branches: [\"release/[0-9\"]\n",
         "deploy/envgate.yml:7:21: ci.deploy_branches[0]: \"release/[0-9\": "},
    };
    for (const auto& [ci, want] : cases) {
        std::string got = error_of(ci);
        BOOST_TEST(has(got, want), "for\n" << ci << "want: " << want << "\ngot:  " << got);
    }
}

// Given `ci.deploy_branches` as a list or the word protected, then load_config keeps
// it, `config check` shows it and its output reads back the same; without it, no
// branch is named (the default branch alone deploys).
BOOST_AUTO_TEST_CASE(reads_the_branches_that_deploy) {
    auto list = parse_config(k_head + "ci:\n  deploy_branches: [main, \"release/*\"]\n", k_path);
    BOOST_REQUIRE_MESSAGE(list.is_ok(), (list.is_ok() ? "" : list.status().message()));
    BOOST_TEST((list->ci.deploy_branches == std::vector<std::string>{"main", "release/*"}));
    BOOST_TEST(!list->ci.deploy_protected);
    auto again = parse_config(render_config(*list), k_path);
    BOOST_REQUIRE(again.is_ok());
    BOOST_TEST(again->ci.deploy_branches == list->ci.deploy_branches);

    auto prot = parse_config(k_head + "ci:\n  deploy_branches: protected\n", k_path);
    BOOST_REQUIRE(prot.is_ok());
    BOOST_TEST(prot->ci.deploy_protected);
    BOOST_TEST(prot->ci.deploy_branches.empty());
    BOOST_TEST(has(render_config(*prot), "deploy_branches: protected"));

    auto none = parse_config(k_head, k_path);
    BOOST_REQUIRE(none.is_ok());
    BOOST_TEST(none->ci.deploy_branches.empty());
    BOOST_TEST(!none->ci.deploy_protected);
}

BOOST_AUTO_TEST_CASE(gitlab_duration_is_what_gitlab_reads) {
    using namespace std::chrono;
    BOOST_TEST(gitlab_duration(minutes(90)) == "1h 30m");
    BOOST_TEST(gitlab_duration(hours(2)) == "2h");
    BOOST_TEST(gitlab_duration(seconds(3725)) == "1h 2m 5s");
    BOOST_TEST(gitlab_duration(minutes(45)) == "45m");
}

BOOST_AUTO_TEST_SUITE_END()
