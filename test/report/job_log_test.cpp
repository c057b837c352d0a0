// Given the job log writer, then sections use GitLab's exact markers, colours
// follow the verdict and NO_COLOR, commands stand alone uncoloured, and a planted
// secret never reaches the output.
#include <boost/test/unit_test.hpp>
#include <map>
#include <optional>
#include <sstream>

#include "runner/report/job_log.h"
#include "test/fakes/fake_clock.h"

using namespace envgate;

namespace {

struct Env {
    std::map<std::string, std::string> vars;
    std::optional<std::string> operator()(const std::string& k) const {
        auto it = vars.find(k);
        return it == vars.end() ? std::nullopt : std::optional(it->second);
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(job_log_suite)

BOOST_AUTO_TEST_CASE(sections_use_gitlab_markers) {
    test::FakeClock clock(*parse_rfc3339("2025-05-29T07:10:00Z"));
    std::ostringstream out;
    JobLog log(out, clock, {});
    log.section_start("gate pre/migrations", "pre-migrations: Job gitlab-pre-1");
    log.section_end("gate pre/migrations");
    BOOST_TEST(out.str() ==
               "\x1b[0Ksection_start:1748502600:gate_pre_migrations[collapsed=false]\r\x1b[0K"
               "pre-migrations: Job gitlab-pre-1\n"
               "\x1b[0Ksection_end:1748502600:gate_pre_migrations\r\x1b[0K\n");
}

BOOST_AUTO_TEST_CASE(outside_ci_sections_are_just_their_header) {
    test::FakeClock clock(TimePoint{});
    std::ostringstream out;
    JobLog log(out, clock, log_settings_from(Env{}, true));
    log.section_start("gate", "pre-migrations: Job gitlab-pre-1");
    log.section_end("gate");
    BOOST_TEST(out.str() == "pre-migrations: Job gitlab-pre-1\n");
    BOOST_TEST(log_settings_from(Env{{{"CI", "true"}}}, false).sections);
    BOOST_TEST(log_settings_from(Env{{{"GITLAB_CI", "true"}}}, false).sections);
}

BOOST_AUTO_TEST_CASE(colours_follow_state_and_commands_stay_plain) {
    test::FakeClock clock(TimePoint{});
    std::ostringstream out;
    JobLog log(out, clock, {.colour = true, .secrets = {}});
    log.line(tone_for_state("retrying"), "retrying");
    log.line(tone_for_state("failing"), "failing");
    log.line(tone_for_state("failed"), "failed");
    log.line(tone_for_state("succeeded"), "ok");
    log.line(tone_for_state("running"), "running");
    log.command("kubectl -n gitlab describe job/x");
    BOOST_TEST(out.str() ==
               "\x1b[33mretrying\x1b[0m\n\x1b[35mfailing\x1b[0m\n\x1b[31mfailed\x1b[0m\n"
               "\x1b[32mok\x1b[0m\nrunning\n\n    kubectl -n gitlab describe job/x\n\n");
}

BOOST_AUTO_TEST_CASE(colour_settings_from_environment) {
    BOOST_TEST(log_settings_from(Env{{{"CI", "true"}}}, false).colour);
    BOOST_TEST(!log_settings_from(Env{{{"CI", "true"}, {"NO_COLOR", "1"}}}, true).colour);
    BOOST_TEST(!log_settings_from(Env{}, false).colour);
    BOOST_TEST(log_settings_from(Env{}, true).colour);
}

BOOST_AUTO_TEST_CASE(planted_secrets_are_masked_everywhere) {
    Env env{{{"ENVGATE_SECRET_VARS", "DB_PASSWORD, API_KEY"},
             {"ENVGATE_GITLAB_TOKEN", "glpat-members-token"},
             {"DB_PASSWORD", "s3cr3t-planted-value"},
             {"API_KEY", "glpat-abcdefgh"}}};
    test::FakeClock clock(TimePoint{});
    std::ostringstream out;
    JobLog log(out, clock, log_settings_from(env, false));
    log.add_secret("kube-token-123456");
    log.section_start("s", "header with glpat-abcdefgh");
    log.line(Tone::failed, "password s3cr3t-planted-value and s3cr3t-planted-value");
    log.command("curl -H 'Authorization: Bearer kube-token-123456'");
    log.line(Tone::plain, "PRIVATE-TOKEN: glpat-members-token");
    std::string text = out.str();
    BOOST_TEST(text.find("s3cr3t") == std::string::npos);
    BOOST_TEST(text.find("glpat-abcdefgh") == std::string::npos);
    BOOST_TEST(text.find("kube-token-123456") == std::string::npos);
    BOOST_TEST(text.find("glpat-members-token") == std::string::npos);
    BOOST_TEST(text.find("password [MASKED] and [MASKED]") != std::string::npos);
    clear_secrets();  // the registry is the process's: leave none for other tests
}

BOOST_AUTO_TEST_CASE(a_pod_cannot_forge_sections_or_lines_of_ours) {
    // Given: a termination message with GitLab's section markers, a carriage return that
    // would overwrite the line, and a newline followed by a fake success line.
    test::FakeClock clock(TimePoint{});
    std::ostringstream out;
    JobLog log(out, clock, {.colour = false, .sections = true, .secrets = {}});
    log.line(Tone::failed,
             "attempt 1 failed: \x1b[0Ksection_end:1:envgate_run_gprd\r\x1b[0K\nenvgate run gprd: "
             "success (exit 0)");
    std::string text = out.str();
    BOOST_TEST(text.find('\x1b') == std::string::npos, text);
    BOOST_TEST(text.find('\r') == std::string::npos);
    BOOST_TEST(text ==
               "attempt 1 failed: section_end:1:envgate_run_gprd\n    envgate run gprd: "
               "success (exit 0)\n");
    // And a step's own output keeps its colours (it is the step's log, not ours).
    std::ostringstream raw;
    JobLog step(raw, clock, {});
    step.output("\x1b[32m+ added\x1b[0m");
    BOOST_TEST(raw.str() == "\x1b[32m+ added\x1b[0m\n");
}

BOOST_AUTO_TEST_SUITE_END()
