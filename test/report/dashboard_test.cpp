// Given locks in every state (failed with waiters and a long history, free after a
// run that passed after retries, held mid-deploy, unreadable) and the golden run.json
// as gprd's last run, then render_dashboard matches test/golden/report/dashboard.html,
// puts failed locks first, says each fact once, hides a failed lock's lease, reloads
// itself only when asked, and the page is self-contained and escapes what it shows;
// `envgate dashboard` on a file store shows the figures `envgate status --output
// prometheus` gives. Set ENVGATE_UPDATE_GOLDEN=1 to rewrite the golden file after a
// deliberate change.
#include <unistd.h>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include <fstream>
#include <sstream>

#include "locks/file_store.h"
#include "runner/base/files.h"
#include "runner/cmd_dashboard.h"
#include "runner/report/dashboard.h"
#include "runner/report/render.h"
#include "test/fakes/fake_env.h"
#include "test/locks/store_factories.h"

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
    l.figures = {{"envgate_lock_state", "state=failed", 1, "Whether the lock is in this state."},
                 {"envgate_lock_holder_age_seconds", "", 3000, "Seconds since it was acquired."},
                 {"envgate_gate_last_run_retries", "gate=post-migrations", 6, "Attempts."}};
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

// The part of `html` from `from` up to the next `to`.
std::string between(const std::string& html, const std::string& from, const std::string& to) {
    auto begin = html.find(from);
    BOOST_REQUIRE(begin != std::string::npos);
    return html.substr(begin, html.find(to, begin) - begin);
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

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
    DashboardModel m = sample_model();
    m.locks[1].last_run.reset();  // gprd's own failure message is shown, not its run's
    std::string html = render_dashboard(m, k_now);
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

BOOST_AUTO_TEST_CASE(failed_locks_come_first_then_unreadable_then_failed_runs) {
    // Given: config order gstg (free, last run passed), gprd (failed), review (held),
    // qa (unreadable), and a free lock "gdev" whose last run failed, last.
    DashboardModel m = sample_model();
    DashboardLock gdev = m.locks[0];
    gdev.lock.name = "gdev";
    gdev.last_run = *m.locks[1].last_run;
    m.locks.push_back(gdev);
    std::string html = render_dashboard(m, k_now);
    std::vector<std::size_t> at;
    for (const char* id : {"lock-gprd", "lock-qa", "lock-gdev", "lock-review", "lock-gstg"}) {
        at.push_back(html.find(std::string("id=\"") + id + "\""));
        BOOST_TEST(at.back() != std::string::npos, id);
    }
    BOOST_TEST(std::is_sorted(at.begin(), at.end()));
}

BOOST_AUTO_TEST_CASE(failed_lock_hides_its_lease_and_says_each_fact_once) {
    std::string html = render_dashboard(sample_model(), k_now);
    std::string gprd = between(html, "id=\"lock-gprd\"", "</section>");
    BOOST_TEST(gprd.find("renewed") == std::string::npos);
    BOOST_TEST(gprd.find(", lease ") == std::string::npos);
    BOOST_TEST(between(html, "id=\"lock-review\"", "</section>").find("lease 1m0s") !=
               std::string::npos);  // a held lock still shows it
    // The holder's pipeline and job are linked once, the failure's message once (by the
    // last run, whose step failed), the step once, the shared store once for the page.
    BOOST_TEST(count(gprd, "/-/pipelines/1234\"") == 1u);
    BOOST_TEST(count(gprd, "/-/jobs/98765\"") == 1u);
    BOOST_TEST(count(gprd, "https://gitlab.example.com/ops/deploy/-/jobs/98765<") == 0u);
    BOOST_TEST(count(gprd, "Job failed: BackoffLimitExceeded") == 1u);
    BOOST_TEST(count(gprd, "&lt;column&gt;") == 0u);  // the lock's copy of it
    BOOST_TEST(count(gprd, "(the last run below)") == 1u);
    // A last run of another pipeline did not fail this lock: its message stays.
    DashboardModel m = sample_model();
    m.locks[1].last_run->pipeline_url = "https://gitlab.example.com/ops/deploy/-/pipelines/7";
    std::string other = between(render_dashboard(m, k_now), "id=\"lock-gprd\"", "</section>");
    BOOST_TEST(count(other, "&lt;column&gt;") == 1u);
    BOOST_TEST(count(other, "(the last run below)") == 0u);
    BOOST_TEST(count(gprd, "<code>post-migrations</code>") == 2u);   // failure, failed step
    BOOST_TEST(count(html, "file store /srv/envgate/locks") == 2u);  // the header, qa's error
    BOOST_TEST(count(html, "<p class=\"meta\">file store") == 0u);
}

// Given a lock failed by its last run and then unlocked (demo run 3), whose "fail" and
// "unlock" transitions both quote the failure's whole message, then the card shows the
// message once (under the last run, without the command it shows on its own) and the
// transitions point to it; the unlock's repeat of the "fail" names that transition.
BOOST_AUTO_TEST_CASE(transitions_point_to_a_failure_the_card_shows_instead_of_repeating_it) {
    DashboardModel m = sample_model();
    DashboardLock& gprd = m.locks[1];
    BOOST_REQUIRE(gprd.lock.name == "gprd");
    StepReport& post = gprd.last_run->steps[3];
    BOOST_REQUIRE(post.command.has_value());
    post.message =
        "Job gitlab/m failed: BackoffLimitExceeded: Job has reached the specified "
        "backoff limit. Details: " +
        *post.command + ". A change to the Job spec reruns the gate.";
    const std::string fail_why = "post-migrations: MigrationsJobFailed: " + post.message;
    gprd.lock.history.clear();
    gprd.lock.record("acquire", "ops/deploy#1234", at("2025-05-29T07:10:00Z"), "was free");
    gprd.lock.record("fail", "ops/deploy#1234", at("2025-05-29T07:31:05Z"), fail_why);
    gprd.lock.record("unlock", "alice", at("2025-05-29T08:00:00Z"),
                     "fixed by hand (was failed by ops/deploy#1234, " + fail_why + ")");
    gprd.lock.state = locks::LockState::free;
    gprd.lock.failure.reset();
    std::string card = between(render_dashboard(m, k_now), "id=\"lock-gprd\"", "</section>");
    BOOST_TEST(count(card, "has reached the specified backoff limit") == 1u, card);
    BOOST_TEST(count(card, *post.command) == 1u, card);
    BOOST_TEST(card.find("MigrationsJobFailed (its message: the last run&#39;s failure, below)") !=
               std::string::npos);
    BOOST_TEST(card.find("fixed by hand (was failed by ops/deploy#1234, as in #2)") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_run_that_found_the_lock_failed_points_to_that_failure) {
    // Given: gprd's last run could not take the lock (held after the failure shown).
    DashboardModel m = sample_model();
    StepReport lock_step;
    lock_step.name = "lock";
    lock_step.kind = "lock";
    lock_step.state = StepState::failed;
    lock_step.reason = "LockHeldAfterFailure";
    lock_step.message = "failed by ops/deploy#1234 (MigrationsJobFailed)";
    lock_step.command = "envgate unlock gprd --reason \"...\" --expect-holder ops/deploy#1234";
    m.locks[1].last_run->steps = {lock_step};
    m.locks[1].last_run->pipeline_url = "https://gitlab.example.com/ops/deploy/-/pipelines/1240";
    std::string gprd = between(render_dashboard(m, k_now), "id=\"lock-gprd\"", "</section>");
    // Then: the unlock command once, the run's copy of the failure not at all.
    BOOST_TEST(count(gprd, "envgate unlock gprd") == 1u);
    BOOST_TEST(count(gprd, "failed by ops/deploy#1234") == 0u);
    BOOST_TEST(
        count(gprd, "<strong>LockHeldAfterFailure</strong> (the lock&#39;s failure above)") +
            count(gprd, "<strong>LockHeldAfterFailure</strong> (the lock's failure above)") ==
        1u);
}

BOOST_AUTO_TEST_CASE(page_reloads_itself_only_when_asked_and_has_a_dark_scheme) {
    DashboardModel m = sample_model();
    std::string still = render_dashboard(m, k_now);
    BOOST_TEST(still.find("http-equiv=\"refresh\"") == std::string::npos);
    BOOST_TEST(still.find("this page does not refresh itself") != std::string::npos);
    m.refresh_seconds = 60;
    std::string reloading = render_dashboard(m, k_now);
    BOOST_TEST(reloading.find("<meta http-equiv=\"refresh\" content=\"60\">") != std::string::npos);
    BOOST_TEST(reloading.find("this page reloads every 1m0s") != std::string::npos);
    BOOST_TEST(still.find("@media (prefers-color-scheme:dark)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dashboard_command_shows_the_status_figures_of_each_lock) {
    // Given: a file store with gstg failed an hour ago with one waiter, gprd free.
    test::TempDir dir;
    std::ofstream(dir.path() + "/envgate.yml")
        << "version: 1\ndefaults:\n  namespace: gitlab\n  lock: { store: file, path: " << dir.path()
        << "/locks }\nenvironments:\n  - name: gprd\n  - name: gstg\n";
    locks::LockRecord r;
    r.name = "gstg";
    r.state = locks::LockState::failed;
    r.holder = locks::Holder{};
    r.holder->id = "grp/app#7";
    r.acquired_at = k_now - std::chrono::hours(1);
    r.renewed_at = r.acquired_at;
    r.failure = locks::Failure{"deploy", "StepFailed", "exit 3", r.acquired_at};
    r.waiters.push_back({holder("grp/app#8", 8, 80), k_now, k_now, std::chrono::seconds(90)});
    locks::FileStore store(dir.path() + "/locks");
    BOOST_REQUIRE(store.write("gstg", r, "").is_ok());
    BOOST_REQUIRE(store.write_waiter("gstg", r.waiters[0], "").is_ok());  // its own record
    DashboardOptions o;
    o.out_dir = dir.path() + "/site";
    o.config_path = dir.path() + "/envgate.yml";
    o.refresh_seconds = 30;
    std::istringstream in;
    std::ostringstream out, err;
    test::FakeEnv env(k_now);
    Context ctx{in, out, err, env, [](const std::string&) { return std::nullopt; }};
    BOOST_REQUIRE(run_dashboard(o, ctx) == 0);
    auto html = read_file(o.out_dir + "/index.html");
    BOOST_REQUIRE(html.is_ok());
    // Then: gstg first, with the figures status gives; of a state only the one that holds.
    BOOST_TEST(html->find("id=\"lock-gstg\"") < html->find("id=\"lock-gprd\""));
    std::string gstg = between(*html, "id=\"lock-gstg\"", "</section>");
    auto row = [](const std::string& name, const std::string& labels, const std::string& value) {
        return "<td><code>" + name + "</code></td><td>" + labels + "</td><td>" + value + "</td>";
    };
    BOOST_TEST(gstg.find(row("envgate_lock_state", "state=failed", "1")) != std::string::npos);
    BOOST_TEST(gstg.find("state=free") == std::string::npos);
    BOOST_TEST(gstg.find(row("envgate_lock_holder_age_seconds", "", "3600 (1h0m0s)")) !=
               std::string::npos);
    BOOST_TEST(gstg.find(row("envgate_lock_queue_length", "", "1")) != std::string::npos);
    BOOST_TEST(gstg.find(row("envgate_lock_read_success", "", "1")) != std::string::npos);
    std::string gprd = between(*html, "id=\"lock-gprd\"", "</section>");
    BOOST_TEST(gprd.find(row("envgate_lock_state", "state=free", "1")) != std::string::npos);
    BOOST_TEST(gprd.find("envgate_lock_holder_age_seconds") == std::string::npos);
    BOOST_TEST(html->find("<meta http-equiv=\"refresh\" content=\"30\">") != std::string::npos);
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
