// Given one RunReport with every kind of step (retried then passed, failed with a
// command, skipped), then each renderer's output matches its golden file in
// test/golden/ and obeys the format rules of spec/reports.md. Set
// ENVGATE_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change.
#include <unistd.h>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "runner/base/files.h"
#include "runner/report/render.h"
#include "runner/report/text.h"

using namespace envgate;

namespace {

TimePoint at(const char* s) {
    return *parse_rfc3339(s);
}

StepReport make_step(const char* name, const char* kind, StepState state, const char* file) {
    StepReport s;
    s.name = name;
    s.kind = kind;
    s.state = state;
    s.file = file;
    return s;
}

RunReport sample_report() {
    RunReport r;
    r.environment = "gprd";
    r.namespace_ = "gitlab";
    r.result = RunResult::failed;
    r.started = at("2025-05-29T07:10:00Z");
    r.finished = at("2025-05-29T07:31:05Z");
    r.pipeline_url = "https://gitlab.example.com/ops/deploy/-/pipelines/1234";
    r.job_url = "https://gitlab.example.com/ops/deploy/-/jobs/98765";
    r.environments_url = environments_page("https://gitlab.example.com/ops/deploy");

    StepReport lock = make_step("lock", "lock", StepState::passed, "envgate.yml");
    lock.started = at("2025-05-29T07:10:00Z");
    lock.finished = at("2025-05-29T07:10:01Z");
    lock.message = "acquired gprd for ops/deploy pipeline 1234";

    StepReport pre =
        make_step("pre-migrations", "gate", StepState::passed, "jobs/pre-migrations.yaml");
    pre.started = at("2025-05-29T07:10:01Z");
    pre.finished = at("2025-05-29T07:14:31Z");
    pre.attempts = 2;
    pre.job_name = "gitlab-migrations-pre-3f2a1b7c";
    pre.message = "Job completed";
    pre.history.push_back({at("2025-05-29T07:12:40Z"), "retrying", "RetryingPreMigrations",
                           "attempt 1 of 6 failed, 5 left: container migrations exited 1 (Error): "
                           "PG::LockNotAvailable <\"lock\"> & more",
                           "kubectl -n gitlab logs job/gitlab-migrations-pre-3f2a1b7c -c "
                           "migrations --previous",
                           1, 6});
    pre.failed_runs.push_back(
        {1, 1, 6, at("2025-05-29T07:12:39Z"), "gitlab-migrations-pre-3f2a1b7c-x7k2p", "migrations",
         0, "Error", 1,
         "container migrations exited 1 (Error): PG::LockNotAvailable <\"lock\"> & more",
         "kubectl -n gitlab logs job/gitlab-migrations-pre-3f2a1b7c -c migrations --previous",
         "== 20250529 AddIndexToUsers: migrating\n```\nPG::LockNotAvailable: could not obtain lock "
         "on relation \"users\"",
         "the last lines of its log (at most 50 lines, 8 KB), read when the gate saw the failure",
         "", true, "", false, ""});
    pre.history.push_back({at("2025-05-29T07:14:31Z"), "succeeded", "MigrationsSucceeded",
                           "Job completed", std::nullopt, 0, 0});

    StepReport deploy = make_step("deploy", "step", StepState::passed, "envgate.yml");
    deploy.started = at("2025-05-29T07:14:31Z");
    deploy.finished = at("2025-05-29T07:20:00Z");
    deploy.attempts = 0;  // a step that passed: no failed run (docs/attempts.md)
    deploy.exit_code = 0;

    StepReport post =
        make_step("post-migrations", "gate", StepState::failed, "jobs/post-migrations.yaml");
    post.started = at("2025-05-29T07:20:00Z");
    post.finished = at("2025-05-29T07:31:05Z");
    post.attempts = 6;
    post.job_name = "gitlab-migrations-post-9c0d2e11";
    post.reason = "MigrationsJobFailed";
    post.message =
        "Job failed: BackoffLimitExceeded: Job has reached the specified backoff limit.\n"
        "Last failure: container migrations exited 1 (Error): PG::UndefinedTable\n"
        "A change to the Job spec reruns the gate with a new Job.";
    post.command = "kubectl -n gitlab describe job/gitlab-migrations-post-9c0d2e11";
    post.failed_runs.push_back(
        {1, 6, 6, at("2025-05-29T07:31:04Z"), "gitlab-migrations-post-9c0d2e11-q8m4z", "migrations",
         5, "Error", 1, "container migrations exited 1 (Error): PG::UndefinedTable", "", "",
         "its log could not be read: GET pods/x/log: 404 Not Found", "", true, "", false, ""});

    StepReport batched = make_step("batched-migrations-check", "gate", StepState::skipped,
                                   "jobs/batched-check.yaml");
    batched.skipped_why = "not reached: post-migrations failed";
    StepReport qa = make_step("qa", "step", StepState::skipped, "envgate.yml");
    qa.skipped_why = "not reached: post-migrations failed";

    r.steps = {lock, pre, deploy, post, batched, qa};
    r.lock =
        LockReport{"gprd",
                   LockState::failed,
                   "ops/deploy#1234",
                   "https://gitlab.example.com/ops/deploy/-/pipelines/1234",
                   "https://gitlab.example.com/ops/deploy/-/jobs/98765",
                   "envgate unlock gprd --reason \"post-migrations fixed by hand\" --expect-holder "
                   "'ops/deploy#1234'",
                   std::nullopt};
    return r;
}

void check_golden(const std::string& name, const std::string& actual) {
    std::string path = std::string(ENVGATE_GOLDEN) + "/report/" + name;
    if (std::getenv("ENVGATE_UPDATE_GOLDEN") != nullptr) {
        BOOST_REQUIRE(write_file_atomic(path, actual).is_ok());
    }
    auto expected = read_file(path);
    BOOST_REQUIRE_MESSAGE(expected.is_ok(), path + " is missing");
    BOOST_TEST(actual == *expected, name + " differs from its golden file " + path);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(report_suite)

BOOST_AUTO_TEST_CASE(renderers_match_golden_files) {
    RunReport r = sample_report();
    check_golden("junit.xml", render_junit(r));
    check_golden("summary.md", render_markdown(r));
    check_golden("summary.html", render_html(r));
    check_golden("envgate.env", render_dotenv(r));
    check_golden("annotations.json", render_annotations(r));
    check_golden("run.json", render_run_json(r));
}

BOOST_AUTO_TEST_CASE(junit_has_one_testcase_per_step_with_reason_as_failure_type) {
    std::string xml = render_junit(sample_report());
    std::regex testcase("<testcase classname=\"envgate\\.gprd\" name=\"([a-z-]+)\"");
    auto begin = std::sregex_iterator(xml.begin(), xml.end(), testcase);
    BOOST_TEST(std::distance(begin, std::sregex_iterator()) == 6);
    BOOST_TEST(xml.find("<failure type=\"MigrationsJobFailed\"") != std::string::npos);
    BOOST_TEST(xml.find("<skipped message=\"not reached: post-migrations failed\"/>") !=
               std::string::npos);
    BOOST_TEST(xml.find("&lt;&quot;lock&quot;&gt; &amp; more") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(junit_is_well_formed_xml_for_xmllint) {
    RunReport r = sample_report();
    r.steps[3].message += "\x1b[31m red \x01\x02 and ]]> and <![CDATA[";
    std::string path = (std::filesystem::temp_directory_path() /
                        ("envgate_junit_" + std::to_string(::getpid()) + ".xml"))
                           .string();
    BOOST_REQUIRE(write_file_atomic(path, render_junit(r)).is_ok());
    int rc = std::system(("xmllint --noout " + path).c_str());
    BOOST_TEST(rc == 0);
    std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(dotenv_obeys_gitlab_rules) {
    RunReport r = sample_report();
    r.steps[3].reason = "Reason with spaces #and $VAR\nnewline";
    std::string env = render_dotenv(r);
    BOOST_TEST(env.size() < 5 * 1024u);
    std::istringstream lines(env);
    std::string line;
    std::regex rule("^[A-Z0-9_]+=[^ \t#\"'$]*$");
    int count = 0;
    while (std::getline(lines, line)) {
        BOOST_TEST_CONTEXT(line) {
            BOOST_TEST(std::regex_match(line, rule));
        }
        ++count;
    }
    BOOST_TEST(count >= 5);
    BOOST_TEST(env.find("ENVGATE_RESULT=failed\n") != std::string::npos);
    BOOST_TEST(env.find("ENVGATE_FAILED_STEP=post-migrations\n") != std::string::npos);
    BOOST_TEST(env.find("ENVGATE_LOCK_STATE=failed\n") != std::string::npos);
    BOOST_TEST(env.find("ENVGATE_JOB_PRE_MIGRATIONS=gitlab-migrations-pre-3f2a1b7c\n") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(successful_run_has_no_failure_keys) {
    RunReport r = sample_report();
    r.result = RunResult::success;
    r.steps.resize(3);
    r.lock.state = LockState::free;
    std::string env = render_dotenv(r);
    BOOST_TEST(env.find("ENVGATE_FAILED") == std::string::npos);
    BOOST_TEST(env.find("ENVGATE_RESULT=success\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(run_json_round_trips) {
    RunReport r = sample_report();
    auto back = parse_run_json(render_run_json(r), "run.json");
    BOOST_REQUIRE(back.is_ok());
    BOOST_TEST(render_run_json(*back) == render_run_json(r));
    auto bad = parse_run_json("{\"environment\": 3}", "saved/run.json");
    BOOST_REQUIRE(!bad.is_ok());
    BOOST_TEST(bad.status().message().find("saved/run.json") != std::string::npos);
}

// Given a saved run.json whose failed runs carry some keys or none, then the missing
// ones read as a new failed run's (counted, container_run -1), the present ones as
// written; a key of the wrong kind is an error in these words.
BOOST_AUTO_TEST_CASE(run_json_failed_runs_read_what_they_carry) {
    const std::string head =
        R"({"environment":"gprd","result":"failed","lock":{},"steps":[{"name":"pre",)"
        R"("state":"failed","failed_runs":[)";
    auto r = parse_run_json(head + R"({"key":"k"},{"run":2,"attempt":3,"limit":6,)"
                                   R"("at":"2025-05-29T07:12:39.5Z","pod":"p","container":"c",)"
                                   R"("container_run":4,"reason":"Error","exit_code":-1,)"
                                   R"("description":"d","log_command":"lc","log_tail":"lt",)"
                                   R"("log_note":"ln","counted":false,"ignored_why":"iw",)"
                                   R"("remembered":true,"seen_by":"sb"}]}]})",
                            "run.json");
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    const FailedRun& bare = r->steps.at(0).failed_runs.at(0);
    BOOST_TEST(bare.key == "k");
    BOOST_TEST((bare.run == 0 && bare.attempt == 0 && bare.limit == 0 && !bare.at));
    BOOST_TEST((bare.container_run == -1 && bare.counted && !bare.remembered && !bare.exit_code));
    BOOST_TEST((bare.pod + bare.container + bare.reason + bare.description + bare.log_command +
                    bare.log_tail + bare.log_note + bare.ignored_why + bare.seen_by ==
                ""));
    const FailedRun& full = r->steps.at(0).failed_runs.at(1);
    BOOST_TEST((full.run == 2 && full.attempt == 3 && full.limit == 6));
    BOOST_TEST(format_rfc3339_micro(*full.at) == "2025-05-29T07:12:39.500000Z");
    BOOST_TEST((full.pod == "p" && full.container == "c" && full.container_run == 4));
    BOOST_TEST((full.reason == "Error" && *full.exit_code == -1 && full.description == "d"));
    BOOST_TEST((full.log_command == "lc" && full.log_tail == "lt" && full.log_note == "ln"));
    BOOST_TEST((!full.counted && full.ignored_why == "iw" && full.remembered));
    BOOST_TEST(full.seen_by == "sb");
    auto bad = parse_run_json(head + R"({"container_run":"4"}]}]})", "run.json");
    BOOST_REQUIRE(!bad.is_ok());
    BOOST_TEST(bad.status().message() ==
               "run.json: not an envgate run.json: [json.exception.type_error.302] type must be "
               "number, but is string");
    auto bad_exit = parse_run_json(head + R"({"exit_code":"1"}]}]})", "run.json");
    BOOST_REQUIRE(!bad_exit.is_ok());
    BOOST_TEST(bad_exit.status().message() ==
               "run.json: not an envgate run.json: [json.exception.type_error.302] type must be "
               "number, but is string");
}

// How many times `what` occurs in `text`.
std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

// The value of attribute `name` of the first `element` in `xml`, as a number.
int attribute(const std::string& xml, const std::string& element, const std::string& name) {
    std::smatch m;
    std::regex re("<" + element + " [^>]*" + name + "=\"([0-9]+)\"");
    BOOST_REQUIRE_MESSAGE(std::regex_search(xml, m, re), element + " has no " + name);
    return std::stoi(m[1]);
}

// The testsuites' and the testsuite's counts are what the testcases hold, as GitLab's
// Tests tab counts them (a testcase with <failure> failed, with <skipped> skipped).
void check_counts(const std::string& xml) {
    for (const std::string element : {"testsuites", "testsuite"}) {
        BOOST_TEST_CONTEXT(element) {
            BOOST_TEST(attribute(xml, element, "tests") == int(count(xml, "<testcase ")));
            BOOST_TEST(attribute(xml, element, "failures") == int(count(xml, "<failure ")));
            BOOST_TEST(attribute(xml, element, "skipped") == int(count(xml, "<skipped ")));
            BOOST_TEST(attribute(xml, element, "errors") == int(count(xml, "<error ")));
        }
    }
}

// The testcase named `name`, from its start tag to its end.
std::string testcase(const std::string& xml, const std::string& name) {
    auto from = xml.find("<testcase classname=\"envgate.gprd\" name=\"" + name + "\"");
    BOOST_REQUIRE_MESSAGE(from != std::string::npos, "no testcase " + name + " in\n" + xml);
    return xml.substr(from, xml.find("</testcase>", from) - from);
}

// Given a green run whose gate failed twice and then passed (demo run 2), then junit.xml
// counts no failure (GitLab shows no failed test on a green pipeline): the gate is a
// passed testcase and each retried run a skipped one beside it, whose text (what
// GitLab shows of a skipped case) is the failure with its kept log.
BOOST_AUTO_TEST_CASE(junit_of_a_green_run_has_no_failure_and_shows_its_retries_skipped) {
    RunReport r = sample_report();
    r.result = RunResult::success;
    r.steps.resize(3);  // lock, pre-migrations (2 failed runs, passed), deploy
    r.steps[1].failed_runs.push_back(r.steps[1].failed_runs[0]);
    r.steps[1].failed_runs[1].run = 2;
    r.steps[1].failed_runs[1].attempt = 2;
    r.steps[1].failed_runs[1].log_tail = "PG::LockNotAvailable again";
    std::string xml = render_junit(r);
    check_counts(xml);
    BOOST_TEST(attribute(xml, "testsuites", "failures") == 0);
    BOOST_TEST(attribute(xml, "testsuites", "skipped") == 2);
    BOOST_TEST(attribute(xml, "testsuites", "tests") == 5);
    BOOST_TEST(testcase(xml, "pre-migrations").find("<failure") == std::string::npos);
    std::string first = testcase(xml, "pre-migrations failed run 1 (attempt 1 of 6), retried");
    BOOST_TEST(first.find("<skipped message=\"container migrations exited 1 (Error)") !=
               std::string::npos);
    BOOST_TEST(first.find("could not obtain lock on relation &quot;users&quot;</skipped>") ==
                   std::string::npos,
               "the kept log is in the text, before the log command: " + first);
    BOOST_TEST(first.find("could not obtain lock on relation &quot;users&quot;") !=
               std::string::npos);
    BOOST_TEST(testcase(xml, "pre-migrations failed run 2 (attempt 2 of 6), retried")
                   .find("PG::LockNotAvailable again") != std::string::npos);
}

// Given a gate that failed after three failed runs (demo run 3), then junit.xml counts
// one failure, the gate's: one failed testcase whose failure carries every run (its
// attempt, reason and kept log), and no testcase per run.
BOOST_AUTO_TEST_CASE(junit_has_one_failed_testcase_per_failed_gate_carrying_its_runs) {
    RunReport r = sample_report();
    StepReport& post = r.steps[3];
    post.failed_runs.clear();
    for (int i = 1; i <= 3; ++i) {
        post.failed_runs.push_back(
            {i, i, 3, at("2025-05-29T07:31:04Z"), "post-pod-" + std::to_string(i), "migrations", 0,
             i == 3 ? "OOMKilled" : "Error", 1,
             "container migrations exited 1 (" + std::string(i == 3 ? "OOMKilled" : "Error") + ")",
             "kubectl -n gitlab logs pod/post-pod-" + std::to_string(i),
             "log line of run " + std::to_string(i), "its log tail", "", true, "", false, ""});
    }
    std::string xml = render_junit(r);
    check_counts(xml);
    BOOST_TEST(attribute(xml, "testsuites", "failures") == 1);
    BOOST_TEST(count(xml, "<failure ") == 1u);
    BOOST_TEST(count(xml, "name=\"post-migrations") == 1u, xml);
    std::string failed = testcase(xml, "post-migrations");
    std::size_t last = 0;
    for (int i = 1; i <= 3; ++i) {
        BOOST_TEST_CONTEXT("run " << i) {
            auto run = failed.find("post-migrations failed run " + std::to_string(i) +
                                   " (attempt " + std::to_string(i) + " of 3)");
            BOOST_TEST(run != std::string::npos);
            BOOST_TEST(run > last);  // oldest first
            last = run;
            BOOST_TEST(failed.find("log line of run " + std::to_string(i), run) !=
                       std::string::npos);
        }
    }
    BOOST_TEST(failed.find("(OOMKilled)", last) != std::string::npos);
    // The retried gate of the same run stays skipped, not failed.
    BOOST_TEST(attribute(xml, "testsuites", "skipped") == 3);  // 1 retry + 2 skipped steps
}

// Given a message that names its command (". Details: CMD") and the command, then the
// failure says the command once, on its own line.
BOOST_AUTO_TEST_CASE(junit_failure_names_its_command_once) {
    RunReport r = sample_report();
    r.steps[3].message =
        "Job failed: BackoffLimitExceeded. Details: " + *r.steps[3].command + ". A change reruns.";
    std::string failed = testcase(render_junit(r), "post-migrations");
    auto from = failed.find("<failure");
    std::string body = failed.substr(from, failed.find("</failure>") - from);
    BOOST_TEST(count(body, *r.steps[3].command) == 1u, body);
    BOOST_TEST(body.find("Job failed: BackoffLimitExceeded. A change reruns.") !=
               std::string::npos);
}

// Given a log tail holding a code fence, then summary.md's fence is longer, so the
// log cannot end the block and inject Markdown.
BOOST_AUTO_TEST_CASE(markdown_keeps_log_tails_in_a_fence_they_cannot_close) {
    std::string md = render_markdown(sample_report());
    BOOST_TEST(md.find("### Failed runs") != std::string::npos);
    BOOST_TEST(
        md.find("````text\n== 20250529 AddIndexToUsers: migrating\n```\nPG::") != std::string::npos,
        md);
    BOOST_TEST(md.find("\"users\"\n````\n") != std::string::npos, md);
}

// Given a failed gate whose last failure carries a long termination message, then
// summary.md's row still names the run (its pod at the start, its count "(pod 2 of 2
// failed, 0 left)" at the end), on one line, near 300 bytes: the middle of the
// failure's own text gives way, and the failed runs below carry it whole.
BOOST_AUTO_TEST_CASE(markdown_row_keeps_the_run_a_long_message_names) {
    RunReport r = sample_report();
    StepReport& post = r.steps[3];
    std::string text = "run 2 failed:";
    for (int i = 1; i <= 40; ++i) {
        text += " PG::LockNotAvailable " + std::to_string(i);
    }
    const std::string failure =
        "pod gitlab-migrations-post-9c0d2e11-q8m4z failed (Error): " + text +
        "; container migrations exited 3";
    post.message =
        "Job gitlab/gitlab-migrations-post-9c0d2e11 failed: BackoffLimitExceeded: Job "
        "has reached the specified backoff limit. Last failure: " +
        failure + " (pod 2 of 2 failed, 0 left). Details: " + *post.command +
        ". A change to the Job spec reruns the gate with a new Job.";
    post.failed_runs[0].description = failure;
    const std::string md = render_markdown(r);
    const auto start = md.find("| gprd | post-migrations |");
    BOOST_REQUIRE(start != std::string::npos);
    const std::string row = md.substr(start, md.find('\n', start) - start);
    const std::string cell = row.substr(row.rfind(" | ", row.size() - 3) + 3);
    BOOST_TEST(cell.size() < 400u, cell);  // 300 aimed at, the run's identity kept
    BOOST_TEST(
        row.find("Last failure: pod gitlab-migrations-post-9c0d2e11-q8m4z ") != std::string::npos,
        row);
    BOOST_TEST(row.find(" … ") != std::string::npos, row);
    BOOST_TEST(row.find("container migrations exited 3 (pod 2 of 2 failed, 0 left). A change to "
                        "the Job spec reruns the gate with a new Job. |") != std::string::npos,
               row);
    // The whole failure is in the failed runs below.
    BOOST_TEST(md.find(failure) != std::string::npos);
}

// Given a step message of several lines, then its row shows them all, on one line.
BOOST_AUTO_TEST_CASE(markdown_row_joins_the_lines_of_a_message) {
    const std::string md = render_markdown(sample_report());
    BOOST_TEST(md.find("| Job failed: BackoffLimitExceeded: Job has reached the specified backoff "
                       "limit. Last failure: container migrations exited 1 (Error): "
                       "PG::UndefinedTable A change to the Job spec reruns the gate with a new "
                       "Job. |") != std::string::npos,
               md);
}

// Given a failed step, then summary.html names its reason like summary.md, and shows
// each failed run with its log tail.
// Given the CI variables of a pipeline, then summary.md, summary.html and
// annotations.json link the pipeline, the job and the environments, and the unlock
// hint names the manual unlock job before the CLI.
BOOST_AUTO_TEST_CASE(reports_link_the_pipeline_and_point_to_the_unlock_job_first) {
    RunReport r = sample_report();
    std::string md = render_markdown(r);
    BOOST_TEST(md.find("[pipeline](https://gitlab.example.com/ops/deploy/-/pipelines/1234) · "
                       "[job](https://gitlab.example.com/ops/deploy/-/jobs/98765) · "
                       "[environments](https://gitlab.example.com/ops/deploy/-/environments)") !=
               std::string::npos);
    std::string html = render_html(r);
    BOOST_TEST(html.find("<a href=\"https://gitlab.example.com/ops/deploy/-/environments\">"
                         "environments</a>") != std::string::npos);
    for (const std::string& text : {md, html}) {
        auto job = text.find("run the manual job envgate-unlock-gprd");
        BOOST_TEST(job != std::string::npos);
        BOOST_TEST(job < text.find("envgate unlock gprd --reason"));
    }
    BOOST_TEST(render_annotations(r).find("\"gprd environment\"") != std::string::npos);
    r.pipeline_url.reset();
    r.job_url.reset();
    r.environments_url.reset();
    BOOST_TEST(render_markdown(r).find("[pipeline]") == std::string::npos);
    BOOST_TEST(render_html(r).find("class=\"links\"") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(html_names_the_reason_and_keeps_failed_runs) {
    std::string html = render_html(sample_report());
    BOOST_TEST(html.find("<strong>MigrationsJobFailed</strong>: Job failed") != std::string::npos);
    BOOST_TEST(html.find("badge failed-run") != std::string::npos);
    BOOST_TEST(html.find("could not obtain lock on relation &quot;users&quot;") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(html_is_self_contained_and_marks_retries_apart) {
    std::string html = render_html(sample_report());
    BOOST_TEST(html.find("<script") == std::string::npos);
    BOOST_TEST(html.find("src=") == std::string::npos);
    BOOST_TEST(html.find("<link") == std::string::npos);
    BOOST_TEST(html.find("badge passed-after-retries") != std::string::npos);
    BOOST_TEST(html.find("badge retrying") != std::string::npos);
    BOOST_TEST(html.find("<pre><code>kubectl -n gitlab describe job/") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(text_helpers_strip_escapes_and_cut_on_utf8_boundaries) {
    BOOST_TEST(strip_control("\x1b[1;31mred\x1b[0m\r\n") == "red\n");
    BOOST_TEST(first_line("one\ntwo") == "one…");
    BOOST_TEST(first_line("ééé", 3) == "é…");
    BOOST_TEST(cap_size("abcdef", 3).starts_with("abc\n… (3 more bytes cut)"));
}

// Given a line longer than the limit, then it is cut after its last whole word (never
// "Details: kubec…"), without a dangling separator; a single overlong word is cut.
BOOST_AUTO_TEST_CASE(first_line_cuts_at_a_word_boundary) {
    BOOST_TEST(first_line("exited 1. Details: kubectl -n gitlab describe job/x", 25) ==
               "exited 1. Details…");
    BOOST_TEST(first_line("pod one failed; pod two failed", 18) == "pod one failed…");
    BOOST_TEST(first_line("abcdefghijklmnopqrstuvwxyz", 10) == "abcdefghij…");
    BOOST_TEST(first_line("short", 10) == "short");
}

// Given a gate's message naming its command, then without_command drops that mention
// (and only it); a message that does not name it so is unchanged.
BOOST_AUTO_TEST_CASE(without_command_drops_where_a_message_names_its_command) {
    const std::string cmd = "kubectl -n gitlab describe job/m";
    struct Case {
        std::string message;
        std::string want;
    };
    for (const Case& c : std::vector<Case>{
             {"exited 1. Details: " + cmd, "exited 1"},
             {"exited 1. Logs: " + cmd + ". A change reruns it.", "exited 1. A change reruns it."},
             {"no pod yet (kubectl describe shows why: " + cmd + "), after 2",
              "no pod yet, after 2"},
             {"run " + cmd + " by hand", "run " + cmd + " by hand"},
             {"nothing to see", "nothing to see"},
         }) {
        BOOST_TEST_CONTEXT(c.message) {
            BOOST_TEST(without_command(c.message, cmd) == c.want);
        }
    }
}

// Given a report whose step message, command and kept log hold bytes that are not
// UTF-8 (a migration log's \377\376), and an earlier run's run.json in the directory,
// then every report is written: run.json is this run's and parses back, junit.xml is
// well-formed XML, and no temp file is left.
BOOST_AUTO_TEST_CASE(reports_with_text_that_is_not_utf8_are_all_written_valid) {
    RunReport r = sample_report();
    r.steps[3].message += " \377\376";
    r.steps[3].command = "echo \377\376; exit 1";
    r.steps[1].failed_runs[0].log_tail += "\n\377\376";
    r.lock.holder = "local:\377@host";
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("envgate_reports_utf8_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "run.json") << "{\"schema\": \"envgate.run/v1\", \"stale\": true}";
    Status written = write_reports(dir.string(), r);
    BOOST_TEST(written.is_ok(), written.message());
    auto text = read_file((dir / "run.json").string());
    BOOST_REQUIRE(text.is_ok());
    BOOST_TEST(text->find("stale") == std::string::npos);
    auto back = parse_run_json(*text, "run.json");
    BOOST_REQUIRE_MESSAGE(back.is_ok(), (back.is_ok() ? "" : back.status().message()));
    BOOST_TEST(back->steps[3].message.ends_with(" \uFFFD\uFFFD"));
    int rc = std::system(("xmllint --noout " + (dir / "junit.xml").string()).c_str());
    BOOST_TEST(rc == 0);
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        BOOST_TEST(e.path().filename().string().find(".tmp.") == std::string::npos, e.path());
    }
    std::filesystem::remove_all(dir);
}

// Given a report directory where junit.xml (the first file) cannot be written (a
// directory is in its place) and an earlier run's run.json, then the other files are
// still written, the error names junit.xml, and no earlier run.json looks current.
BOOST_AUTO_TEST_CASE(a_report_that_cannot_be_written_leaves_no_earlier_one_behind) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("envgate_reports_blocked_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "junit.xml" / "in-the-way");
    std::ofstream(dir / "run.json") << "{\"schema\": \"envgate.run/v1\", \"stale\": true}";
    Status written = write_reports(dir.string(), sample_report());
    BOOST_TEST(!written.is_ok());
    BOOST_TEST(written.message().find("junit.xml") != std::string::npos, written.message());
    auto run = read_file((dir / "run.json").string());
    BOOST_REQUIRE(run.is_ok());
    BOOST_TEST(run->find("stale") == std::string::npos);
    BOOST_TEST(std::filesystem::exists(dir / "summary.md"));
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
