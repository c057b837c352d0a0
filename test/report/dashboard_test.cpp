// Given locks in every state (failed with waiters and a long history, free after a
// run that passed after retries, held mid-deploy, unreadable) and the golden run.json
// as gprd's last run, then render_dashboard matches test/golden/report/dashboard.html
// and the page is self-contained and escapes what it shows. Set
// ENVGATE_UPDATE_GOLDEN=1 to rewrite the golden file after a deliberate change.
#include <unistd.h>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "runner/cmd_dashboard.h"
#include "runner/files.h"
#include "runner/report/dashboard.h"
#include "runner/report/render.h"

using namespace envgate;

namespace {

TimePoint at(const char* s) {
    return *parse_rfc3339(s);
}

locks::Holder holder(const std::string& id, int pipeline, int job) {
    std::string base = "https://gitlab.example.com/ops/deploy/-/";
    return {id,
            base + "pipelines/" + std::to_string(pipeline),
            base + "jobs/" + std::to_string(job),
            "ops/deploy",
            "alice",
            std::nullopt,
            pipeline};
}

DashboardLock failed_gprd() {
    DashboardLock l;
    l.store = "file store /srv/envgate/locks";
    locks::LockRecord& r = l.lock;
    r.name = "gprd";
    r.state = locks::LockState::failed;
    r.holder = holder("ops/deploy#1234", 1234, 98765);
    r.acquired_at = at("2025-05-29T07:10:00Z");
    r.renewed_at = at("2025-05-29T07:31:00Z");
    r.lease_duration = std::chrono::seconds(60);
    r.step = "post-migrations";
    r.failure = locks::Failure{"post-migrations", "MigrationsJobFailed",
                               "Job has reached the specified backoff limit: <column> & \"x\"\n",
                               at("2025-05-29T07:31:05Z")};
    r.waiters.push_back({holder("ops/deploy#1240", 1240, 98800), at("2025-05-29T07:40:00Z"),
                         at("2025-05-29T07:59:00Z"), std::chrono::seconds(90)});
    r.waiters.push_back({holder("ops/deploy#1241", 1241, 98810), at("2025-05-29T07:45:00Z"),
                         at("2025-05-29T07:59:00Z"), std::chrono::seconds(90)});
    const char* whats[] = {"acquire", "release", "acquire", "release", "acquire", "fail"};
    for (int i = 0; i < 6; ++i) {
        r.record(whats[i], "ops/deploy#" + std::to_string(1229 + i), at("2025-05-29T07:10:00Z"),
                 i == 5 ? "post-migrations: MigrationsJobFailed" : "pipeline step");
    }
    auto run = read_file(std::string(ENVGATE_GOLDEN) + "/report/run.json");
    BOOST_REQUIRE(run.is_ok());
    auto parsed = parse_run_json(*run, "run.json");
    BOOST_REQUIRE(parsed.is_ok());
    l.last_run = *parsed;
    l.last_run_origin = "reports/gprd/run.json";
    return l;
}

RunReport retried_run() {
    RunReport r;
    r.environment = "gstg";
    r.started = at("2025-05-29T06:00:00Z");
    r.finished = at("2025-05-29T06:05:00Z");
    StepReport pre;
    pre.name = "pre-migrations";
    pre.kind = "gate";
    pre.state = StepState::passed;
    pre.started = at("2025-05-29T06:00:10Z");
    pre.finished = at("2025-05-29T06:03:10Z");
    pre.attempts = 2;
    pre.history.push_back({at("2025-05-29T06:01:00Z"), "retrying", "RetryingPreMigrations",
                           "attempt 1 of 6 failed", std::nullopt, 1, 6});
    StepReport deploy;
    deploy.name = "deploy";
    deploy.kind = "step";
    deploy.state = StepState::passed;
    deploy.started = at("2025-05-29T06:03:10Z");
    deploy.finished = at("2025-05-29T06:05:00Z");
    r.steps = {pre, deploy};
    return r;
}

DashboardModel sample_model() {
    DashboardModel m;
    DashboardLock gstg;
    gstg.store = "file store /srv/envgate/locks";
    gstg.lock.name = "gstg";
    gstg.lock.record("acquire", "ops/deploy#1230", at("2025-05-29T06:00:00Z"), "run");
    gstg.lock.record("release", "ops/deploy#1230", at("2025-05-29T06:05:00Z"), "run passed");
    gstg.last_run = retried_run();
    gstg.last_run_origin = "reports/gstg/run.json";
    DashboardLock review;
    review.store = gstg.store;
    review.lock.name = "review";
    review.lock.state = locks::LockState::held;
    review.lock.holder = holder("local:bob@laptop", 0, 0);
    review.lock.holder->pipeline_url = "javascript:alert(1)";  // never a link
    review.lock.holder->job_url.clear();
    review.lock.acquired_at = at("2025-05-29T07:55:00Z");
    review.lock.renewed_at = at("2025-05-29T07:59:40Z");
    review.lock.lease_duration = std::chrono::seconds(60);
    review.lock.step = "deploy";
    DashboardLock qa;
    qa.store = gstg.store;
    qa.lock.name = "qa";
    qa.error = "file store /srv/envgate/locks: qa.json: not valid JSON";
    m.locks = {gstg, failed_gprd(), review, qa};
    m.notes = {"skipped reports/old/run.json: not valid JSON"};
    return m;
}

const TimePoint k_now = at("2025-05-29T08:00:00Z");

}  // namespace

BOOST_AUTO_TEST_SUITE(dashboard_suite)

BOOST_AUTO_TEST_CASE(dashboard_matches_golden_file) {
    std::string html = render_dashboard(sample_model(), k_now);
    std::string path = std::string(ENVGATE_GOLDEN) + "/report/dashboard.html";
    if (std::getenv("ENVGATE_UPDATE_GOLDEN") != nullptr) {
        BOOST_REQUIRE(write_file_atomic(path, html).is_ok());
    }
    auto expected = read_file(path);
    BOOST_REQUIRE_MESSAGE(expected.is_ok(), path + " is missing");
    BOOST_TEST(html == *expected, "dashboard.html differs from its golden file " + path);
}

BOOST_AUTO_TEST_CASE(dashboard_is_self_contained_and_escaped) {
    std::string html = render_dashboard(sample_model(), k_now);
    BOOST_TEST(html.find("<script") == std::string::npos);
    BOOST_TEST(html.find("<link") == std::string::npos);
    BOOST_TEST(html.find("src=") == std::string::npos);
    BOOST_TEST(html.find("url(") == std::string::npos);
    BOOST_TEST(html.find("@import") == std::string::npos);
    BOOST_TEST(html.find("href=\"javascript:") == std::string::npos);
    std::regex href("href=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), href);
         it != std::sregex_iterator(); ++it) {
        BOOST_TEST((*it)[1].str().rfind("https://", 0) == 0, (*it)[1].str());
    }
    BOOST_TEST(html.find("&lt;column&gt; &amp; &quot;x&quot;") != std::string::npos);
    BOOST_TEST(html.find("<column>") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(dashboard_shows_what_an_operator_needs) {
    std::string html = render_dashboard(sample_model(), k_now);
    // The failed lock: its label, the unlock command as code, links, waiters in order.
    BOOST_TEST(html.find("failed: locked until a person unlocks it") != std::string::npos);
    BOOST_TEST(html.find("<code class=\"unlock\">envgate unlock gprd --reason &quot;...&quot; "
                         "--expect-holder ops/deploy#1234</code>") != std::string::npos);
    BOOST_TEST(html.find("href=\"https://gitlab.example.com/ops/deploy/-/jobs/98765\"") !=
               std::string::npos);
    auto first = html.find("ops/deploy#1240");
    auto second = html.find("ops/deploy#1241");
    BOOST_TEST((first != std::string::npos && second != std::string::npos && first < second));
    BOOST_TEST(html.find("<h3>Waiting (2)</h3>") != std::string::npos);
    // Five transitions at most, newest first: #6 shown, #1 not.
    auto begin = html.find("id=\"lock-gprd\"");
    std::string gprd = html.substr(begin, html.find("</section>", begin) - begin);
    BOOST_TEST(gprd.find("<tr><td>6</td>") < gprd.find("<tr><td>2</td>"));
    BOOST_TEST(gprd.find("<tr><td>1</td>") == std::string::npos);
    // Last runs: the retried gate keeps its own label; the failed step's command.
    BOOST_TEST(html.find("badge passed-after-retries") != std::string::npos);
    BOOST_TEST(html.find("<code class=\"command\">") != std::string::npos);
    BOOST_TEST(html.find("4 locks: 1 free, 1 held, 1 failed, 1 unknown") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(run_files_found_in_dir_and_sub_folders) {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("dashboard_test_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    BOOST_REQUIRE(write_file_atomic((dir / "run.json").string(), "{}").is_ok());
    BOOST_REQUIRE(write_file_atomic((dir / "b" / "run.json").string(), "{}").is_ok());
    BOOST_REQUIRE(write_file_atomic((dir / "a" / "run.json").string(), "{}").is_ok());
    BOOST_REQUIRE(write_file_atomic((dir / "c" / "d" / "run.json").string(), "{}").is_ok());
    auto files = find_run_files(dir.string());
    std::vector<std::string> expected = {(dir / "a" / "run.json").string(),
                                         (dir / "b" / "run.json").string(),
                                         (dir / "run.json").string()};
    BOOST_TEST(files == expected, boost::test_tools::per_element());
    fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
