// Given lock records, then `envgate status` renders text that fits 80 columns and
// names the exact unlock command of a failed lock, JSON in the documented schema,
// Prometheus gauges for every lock, and a login matches only when listed by name (group entries are
// asked of GitLab: test/runner/cmd_unlock_test.cpp).
#include <unistd.h>
#include <boost/test/unit_test.hpp>
#include <map>

#include <cctype>
#include <sstream>

#include "gates/memory_json.h"
#include "locks/describe.h"
#include "locks/policy.h"
#include "runner/cmd_status.h"
#include "runner/cmd_unlock.h"
#include "runner/status_gates.h"
#include "runner/status_metrics.h"

using namespace envgate;
using namespace envgate::locks;

namespace {

const TimePoint k_t0 = *parse_rfc3339("2026-05-01T10:00:00Z");

LockStatus failed_lock() {
    LockStatus s;
    s.store = "file store /srv/locks";
    LockRecord& r = s.record;
    r.name = "gprd";
    r.state = LockState::failed;
    r.holder = Holder{"gitlab-org/release-tools#987654",
                      "https://gitlab.example/gitlab-org/release-tools/-/pipelines/987654",
                      "https://gitlab.example/gitlab-org/release-tools/-/jobs/555",
                      "gitlab-org/release-tools",
                      "alice",
                      std::nullopt,
                      987654};
    r.acquired_at = k_t0;
    r.renewed_at = k_t0;
    r.lease_duration = std::chrono::hours(2);
    r.step = "pre-migrations";
    r.failure = Failure{"pre-migrations", "MigrationsJobFailed",
                        "Job gprd-pre-migrations-1a2b reached its backoffLimit of 3 after 4 "
                        "attempts; last: exit code 1 in container migrate",
                        k_t0 + std::chrono::minutes(7)};
    r.record("acquire", r.holder->id, k_t0, "was free");
    r.record("fail", r.holder->id, k_t0 + std::chrono::minutes(7),
             "pre-migrations: MigrationsJobFailed: a very long message that goes on and on");
    return s;
}

// `record` after the policy's decision on `rq` at `now`.
LockRecord decided(const LockRecord& record, const Request& rq, TimePoint now) {
    Decision d = decide(record, rq, now, observe({}, record, now));
    BOOST_REQUIRE(d.write.has_value());
    return *d.write;
}

std::size_t count_of(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
        ++n;
    }
    return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_commands_suite)

// Given a lock the policy failed with a 400-character message, then status prints the
// failure once, under `failure`, and the history's fail entry refers to it; once
// unlocked, the fail entry prints it and the unlock refers to that entry. Every fact
// stays: who holds it, since when, the exact unlock command, who unlocked and why.
BOOST_AUTO_TEST_CASE(status_prints_a_long_failure_once_and_refers_to_it) {
    std::string message =
        "Job gitlab/migrations-post-5d1c0e7a failed 3 times: PG::LockNotAvailable";
    while (message.size() < 400) {
        message += " while adding index_ci_builds_on_project_id_and_status";
    }
    LockRecord r;
    r.name = "gprd";
    Request rq;
    rq.who.id = "grp/app#1234";
    rq.step = "post-migrations";
    rq.lease_duration = std::chrono::hours(2);
    r = decided(r, rq, k_t0);
    rq.op = Op::fail;
    rq.failure = Failure{"", "MigrationsJobFailed", message, {}};
    r = decided(r, rq, k_t0 + std::chrono::minutes(7));
    const TimePoint now = k_t0 + std::chrono::minutes(30);
    LockStatus failed;
    failed.record = r;
    for (std::size_t width : {std::size_t{0}, std::size_t{100}}) {
        BOOST_TEST_CONTEXT("width " << width) {
            const std::string text = render_status_text({failed}, now, width);
            std::string flat = text;  // the wrapped lines joined again
            for (auto at = flat.find("\n           "); at != std::string::npos;
                 at = flat.find("\n           ")) {
                flat.replace(at, 12, " ");
            }
            BOOST_TEST(count_of(flat, message) == 1u, text);
            BOOST_TEST(flat.find("  failure  step post-migrations: MigrationsJobFailed: " +
                                 message + " (at 2026-05-01T10:07:00Z)") != std::string::npos);
            BOOST_TEST(flat.find("fail grp/app#1234: the failure above\n") != std::string::npos,
                       text);
            BOOST_TEST(text.find("gprd  FAILED  since 2026-05-01T10:00:00Z (30m0s ago)") == 0u);
            BOOST_TEST(text.find("  holder   grp/app#1234") != std::string::npos);
            BOOST_TEST(flat.find(unlock_command(r)) != std::string::npos);
        }
    }
    Request unlock;
    unlock.op = Op::unlock;
    unlock.actor = "alice";
    unlock.reason = "index built by hand";
    LockStatus freed;
    freed.record = decided(r, unlock, k_t0 + std::chrono::minutes(20));
    const std::string text = render_status_text({freed}, now, 0);
    BOOST_TEST(count_of(text, message) == 1u, text);
    BOOST_TEST(text.find("2026-05-01T10:07:00Z fail grp/app#1234: post-migrations: "
                         "MigrationsJobFailed: " +
                         message + "\n") != std::string::npos,
               text);
    BOOST_TEST(text.find("2026-05-01T10:20:00Z unlock alice: index built by hand (was failed by "
                         "grp/app#1234, the failure of 2026-05-01T10:07:00Z above)\n") !=
                   std::string::npos,
               text);
    // A short failure costs less than a reference to it: printed where it comes.
    LockStatus short_failure;
    short_failure.record = r;
    short_failure.record.failure->message = "exit 1";
    short_failure.record.history.back().why = "post-migrations: MigrationsJobFailed: exit 1";
    BOOST_TEST(
        count_of(render_status_text({short_failure}, now, 0), "MigrationsJobFailed: exit 1") == 2u);
}

BOOST_AUTO_TEST_CASE(status_text_fits_80_columns_and_names_the_unlock_command) {
    LockStatus free_lock;
    free_lock.record.name = "qa";
    std::string text =
        render_status_text({failed_lock(), free_lock}, k_t0 + std::chrono::minutes(30), 80);
    std::istringstream lines(text);
    std::string l;
    while (std::getline(lines, l)) {
        if (l.find("https://") == std::string::npos) {  // a URL is never cut
            BOOST_TEST(l.size() <= 80u, l);
        }
    }
    BOOST_TEST(text.find("gprd  FAILED  since 2026-05-01T10:00:00Z (30m0s ago)") == 0u);
    BOOST_TEST(text.find("    envgate unlock gprd --reason \"...\" \\\n"
                         "      --expect-holder gitlab-org/release-tools#987654\n") !=
               std::string::npos);
    BOOST_TEST(text.find("qa  FREE") != std::string::npos);
}

// Given a long failure and unlock reason, then status wraps them at spaces to the width,
// each continuation under the value, and drops no word; width 0 (--wide, or not a
// terminal) keeps each on one line.
BOOST_AUTO_TEST_CASE(status_text_wraps_long_values_without_cutting_them) {
    const LockStatus failed = failed_lock();
    const std::string reason = failed.record.history.back().why;
    const std::string narrow = render_status_text({failed}, k_t0 + std::chrono::minutes(30), 50);
    std::istringstream lines(narrow);
    std::string l, joined;
    bool in_history = false;
    while (std::getline(lines, l)) {
        // A labelled value or its continuation (not the header, not the unlock command).
        bool value = l.size() > 11 && l.starts_with("  ") &&
                     (std::isalpha(static_cast<unsigned char>(l[2])) != 0 ||
                      l.substr(2, 9) == std::string(9, ' '));
        // A URL is one word, never broken.
        BOOST_TEST((!value || l.find("https://") != std::string::npos || l.size() <= 50u), l);
        in_history = in_history || l.starts_with("  history");
        if (in_history && l.size() > 11) {
            joined += (joined.empty() ? "" : " ") + l.substr(11);
        }
    }
    BOOST_TEST(joined.find(reason) != std::string::npos, joined);
    BOOST_TEST(narrow.find("\n           ") != std::string::npos);  // a continuation line
    // A word longer than the width stays whole (it can be copied).
    LockStatus url = failed;
    const std::string link = "https://gitlab.example.com/gitlab-org/release-tools/-/jobs/987654";
    url.record.history.back().why = "see " + link + " for the log";
    BOOST_TEST(render_status_text({url}, k_t0, 50).find("\n           " + link + "\n") !=
               std::string::npos);
    const std::string wide = render_status_text({failed}, k_t0 + std::chrono::minutes(30), 0);
    BOOST_TEST(wide.find(reason + "\n") != std::string::npos);
    BOOST_TEST(wide.find(describe_failure(failed.record) + "\n") != std::string::npos);
}

// Given $COLUMNS, then it is the width; a value that is not a number falls back to the
// terminal, and no terminal (the test runs with stdout not a tty) means no wrapping.
BOOST_AUTO_TEST_CASE(terminal_width_reads_columns) {
    auto env = [](std::optional<std::string> v) {
        return [v](const std::string& k) { return k == "COLUMNS" ? v : std::nullopt; };
    };
    BOOST_TEST(terminal_width(env("120")) == 120u);
    if (::isatty(1) == 0) {
        BOOST_TEST(terminal_width(env("wide")) == 0u);
        BOOST_TEST(terminal_width(env(std::nullopt)) == 0u);
    }
}

BOOST_AUTO_TEST_CASE(status_json_follows_the_documented_schema) {
    auto j = render_status_json({failed_lock()}, k_t0);
    BOOST_TEST(j["schema"] == "envgate.dev/status/v1");
    const auto& entry = j["locks"][0];
    BOOST_TEST(entry["store"] == "file store /srv/locks");
    BOOST_TEST(entry["error"].is_null());
    BOOST_TEST(entry["unlock_command"].get<std::string>().find("envgate unlock gprd") == 0u);
    BOOST_TEST(entry["lock"]["schema"] == "envgate.dev/lock/v1");
    BOOST_TEST(entry["lock"]["state"] == "failed");
    BOOST_TEST(entry["lock"]["failure"]["reason"] == "MigrationsJobFailed");
    BOOST_TEST(entry["lock"]["holder"]["pipeline_id"] == 987654);
    BOOST_TEST(entry["lock"]["lease_duration_seconds"] == 7200);
    BOOST_TEST(entry["lock"]["history"][1]["seq"] == 2);
}

BOOST_AUTO_TEST_CASE(status_prometheus_has_every_lock_s_figures_as_gauges) {
    LockStatus held;
    held.record.name = "gstg";
    held.record.state = LockState::held;
    held.record.holder = Holder{};
    held.record.acquired_at = k_t0 + std::chrono::minutes(20);
    held.record.lease_transitions = 3;
    held.record.waiters.resize(2);
    LockStatus unreadable;
    unreadable.record.name = "qa";
    unreadable.error = "cannot read";
    std::string text = render_status_prometheus({failed_lock(), held, unreadable}, {},
                                                k_t0 + std::chrono::minutes(30));
    auto has = [&](const std::string& line) {
        BOOST_TEST(text.find(line + "\n") != std::string::npos, line);
    };
    has("# TYPE envgate_lock_state gauge");
    has("envgate_lock_state{environment=\"gprd\",state=\"failed\"} 1");
    has("envgate_lock_state{environment=\"gprd\",state=\"held\"} 0");
    has("envgate_lock_state{environment=\"gstg\",state=\"held\"} 1");
    has("envgate_lock_state{environment=\"qa\",state=\"free\"} 0");  // not read: unknown
    has("envgate_lock_state{environment=\"qa\",state=\"unknown\"} 1");
    has("envgate_lock_state{environment=\"gstg\",state=\"unknown\"} 0");
    has("envgate_lock_holder_age_seconds{environment=\"gprd\"} 1800");
    has("envgate_lock_holder_age_seconds{environment=\"gstg\"} 600");
    has("envgate_lock_queue_length{environment=\"gstg\"} 2");
    has("envgate_lock_transitions{environment=\"gstg\"} 3");
    has("envgate_lock_read_success{environment=\"gstg\"} 1");
    has("envgate_lock_read_success{environment=\"qa\"} 0");
    BOOST_TEST(text.find("envgate_lock_queue_length{environment=\"qa\"}") == std::string::npos);
    BOOST_TEST(text.substr(text.size() - 6) == "# EOF\n");
}

BOOST_AUTO_TEST_CASE(status_prometheus_has_each_gate_s_last_run) {
    // Given: two pre-migrations Jobs (the newer failed after 2 attempts, 5 min after its
    // creation; it saw 3 failed runs, one not counted against the limit) and a
    // post-migrations Job still running.
    gates::GateMemory failed;
    failed.observed_failures = 3;
    failed.attempts = 2;
    failed.ended = gates::EndedBy{"Failed", "BackoffLimitExceeded", "limit"};
    auto job = [](const std::string& name, const std::string& gate, const std::string& created,
                  const gates::GateMemory& memory) {
        nlohmann::json annotations = nlohmann::json::object();
        for (const auto& [k, v] : gates::memory_annotations(memory)) {
            annotations[k] = v;
        }
        return nlohmann::json{
            {"metadata",
             {{"name", name},
              {"creationTimestamp", created},
              {"labels", {{"envgate.dev/gate", gate}, {"envgate.dev/environment", "gprd"}}},
              {"annotations", annotations}}},
            {"status",
             {{"conditions",
               {{{"type", "Failed"},
                 {"status", "True"},
                 {"lastTransitionTime", "2026-05-01T10:05:00Z"}}}}}}};
    };
    std::vector<nlohmann::json> jobs{job("old", "pre-migrations", "2026-04-01T10:00:00Z", {}),
                                     job("new", "pre-migrations", "2026-05-01T10:00:00Z", failed),
                                     job("post", "post-migrations", "2026-05-01T10:10:00Z", {})};
    jobs[2]["status"] = nlohmann::json::object();
    auto runs = last_gate_runs("gprd", jobs, k_t0 + std::chrono::minutes(30));
    BOOST_REQUIRE(runs.size() == 2u);
    const GateRunStatus& pre = runs[1].gate == "pre-migrations" ? runs[1] : runs[0];
    BOOST_TEST(pre.job == "new");
    BOOST_TEST(pre.result == "failed");
    BOOST_TEST(pre.retries == 2);
    BOOST_TEST((pre.duration == std::chrono::minutes(5)));
    std::vector<GateRuns> gates{{"gprd", runs, ""}, {"gstg", {}, "no cluster"}};
    std::string text = render_status_prometheus({}, gates, k_t0 + std::chrono::minutes(30));
    auto has = [&](const std::string& line) {
        BOOST_TEST(text.find(line + "\n") != std::string::npos, line);
    };
    const std::string pre_labels = "environment=\"gprd\",gate=\"pre-migrations\"";
    has("envgate_gate_last_run_result{" + pre_labels + ",result=\"failed\"} 1");
    has("envgate_gate_last_run_result{" + pre_labels + ",result=\"succeeded\"} 0");
    has("envgate_gate_last_run_result{environment=\"gprd\",gate=\"post-migrations\","
        "result=\"running\"} 1");
    has("envgate_gate_last_run_duration_seconds{" + pre_labels + "} 300");
    has("envgate_gate_last_run_duration_seconds{environment=\"gprd\",gate=\"post-migrations\"} "
        "1200");
    has("envgate_gate_last_run_retries{" + pre_labels + "} 2");
    has("envgate_gate_last_run_start_timestamp_seconds{" + pre_labels + "} 1777629600");
    has("envgate_gate_read_success{environment=\"gstg\"} 0");
}

BOOST_AUTO_TEST_CASE(status_reads_a_gate_s_result_from_the_job_s_conditions) {
    // Given: Jobs whose annotations hold the counts only (the gate does not write what
    // the Job's conditions show), one Failed, one Complete.
    gates::GateMemory counted;
    counted.observed_failures = 2;
    counted.attempts = 2;
    nlohmann::json annotations = nlohmann::json::object();
    for (const auto& [k, v] : gates::memory_annotations(counted)) {
        annotations[k] = v;
    }
    auto job = [&](const std::string& gate, const std::string& condition) {
        return nlohmann::json{
            {"metadata",
             {{"name", gate + "-job"},
              {"creationTimestamp", "2026-05-01T10:00:00Z"},
              {"labels", {{"envgate.dev/gate", gate}, {"envgate.dev/environment", "gprd"}}},
              {"annotations", annotations}}},
            {"status",
             {{"conditions",
               {{{"type", condition},
                 {"status", "True"},
                 {"lastTransitionTime", "2026-05-01T10:05:00Z"}}}}}}};
    };
    auto runs = last_gate_runs("gprd",
                               {job("pre-migrations", "Failed"), job("post-migrations", "Complete"),
                                job("batched-migrations-check", "FailureTarget")},
                               k_t0 + std::chrono::minutes(30));
    BOOST_REQUIRE(runs.size() == 3u);
    std::map<std::string, std::string> result;
    for (const auto& r : runs) {
        result[r.gate] = r.result;
        BOOST_TEST(r.retries == 2);
    }
    BOOST_TEST(result["pre-migrations"] == "failed");
    BOOST_TEST(result["post-migrations"] == "succeeded");
    BOOST_TEST(result["batched-migrations-check"] == "running");  // failing: not ended yet
}

BOOST_AUTO_TEST_CASE(status_reads_a_running_gate_s_retries_from_the_job_when_not_yet_written) {
    // Given: a restartPolicy Never Job crash-looping, three pods failed, whose memory
    // the gate has not written yet (its pods show it), and one whose memory says more.
    auto job = [](const std::string& gate, int failed, std::optional<int> attempts) {
        nlohmann::json j{
            {"metadata",
             {{"name", gate + "-job"},
              {"creationTimestamp", "2026-05-01T10:00:00Z"},
              {"labels", {{"envgate.dev/gate", gate}, {"envgate.dev/environment", "gprd"}}}}},
            {"status", {{"failed", failed}, {"active", 1}}}};
        if (attempts) {
            gates::GateMemory m;
            m.observed_failures = *attempts;
            m.attempts = *attempts;
            for (const auto& [k, v] : gates::memory_annotations(m)) {
                j["metadata"]["annotations"][k] = v;
            }
        }
        return j;
    };
    auto runs = last_gate_runs(
        "gprd", {job("pre-migrations", 3, std::nullopt), job("post-migrations", 1, 4)},
        k_t0 + std::chrono::minutes(30));
    BOOST_REQUIRE(runs.size() == 2u);
    for (const auto& r : runs) {
        BOOST_TEST(r.result == "running");
        BOOST_TEST(r.retries == (r.gate == "pre-migrations" ? 3 : 4));
    }
}

BOOST_AUTO_TEST_CASE(a_rerun_in_the_same_second_is_the_last_run_in_either_list_order) {
    // Given: a pre-migrations Job that failed and its rerun after the unlock, created in
    // the same second (creationTimestamp has whole seconds); the rerun was made under the
    // next hold of the lock (fence 8) after unlock 12. Then the rerun is the last run,
    // whichever the list gives first; Jobs without those labels are ordered by name.
    auto job = [](const std::string& name, const nlohmann::json& labels, bool failed) {
        nlohmann::json j{
            {"metadata",
             {{"name", name},
              {"creationTimestamp", "2026-05-01T10:00:00Z"},
              {"labels",
               {{"envgate.dev/gate", "pre-migrations"}, {"envgate.dev/environment", "gprd"}}}}},
            {"status", nlohmann::json::object()}};
        if (labels.is_object()) {
            j["metadata"]["labels"].update(labels);
        }
        if (failed) {
            j["status"]["conditions"] = {{{"type", "Failed"},
                                          {"status", "True"},
                                          {"lastTransitionTime", "2026-05-01T10:00:00Z"}}};
        }
        return j;
    };
    // The rerun's name sorts first, so neither the list's order nor the name decides.
    const nlohmann::json first = job("migrate-f1e2d3c4", {{"envgate.dev/fence", "7"}}, true);
    const nlohmann::json rerun =
        job("migrate-0a1b2c3d", {{"envgate.dev/fence", "8"}, {"envgate.dev/unlock", "12"}}, false);
    const nlohmann::json later_unlock =
        job("migrate-99999999", {{"envgate.dev/fence", "8"}, {"envgate.dev/unlock", "13"}}, false);
    struct Case {
        const char* name;
        std::vector<nlohmann::json> jobs;
        std::string want;
    };
    const Case cases[] = {
        {"failed run listed first", {first, rerun}, "migrate-0a1b2c3d"},
        {"rerun listed first", {rerun, first}, "migrate-0a1b2c3d"},
        {"a later unlock in the same hold", {later_unlock, rerun}, "migrate-99999999"},
        {"the same, reversed", {rerun, later_unlock}, "migrate-99999999"},
        {"no labels: by name", {job("b", {}, false), job("a", {}, true)}, "b"},
        {"no labels, reversed", {job("a", {}, true), job("b", {}, false)}, "b"},
        {"a label that is not a number counts as none",
         {job("z", {{"envgate.dev/fence", "x"}}, false),
          job("y", {{"envgate.dev/fence", "1"}}, true)},
         "y"},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            auto runs = last_gate_runs("gprd", c.jobs, k_t0 + std::chrono::minutes(30));
            BOOST_REQUIRE(runs.size() == 1u);
            BOOST_TEST(runs[0].job == c.want);
        }
    }
    auto runs = last_gate_runs("gprd", {rerun, first}, k_t0 + std::chrono::minutes(30));
    std::vector<GateRuns> gates{{"gprd", runs, ""}};
    std::string text = render_status_prometheus({}, gates, k_t0 + std::chrono::minutes(30));
    BOOST_TEST(
        text.find("envgate_gate_last_run_result{environment=\"gprd\",gate=\"pre-migrations\","
                  "result=\"running\"} 1\n") != std::string::npos,
        text);
}

BOOST_AUTO_TEST_CASE(only_listed_logins_may_unlock_from_ci) {
    std::vector<std::string> unlockers{"alice", "@sre-oncall"};
    BOOST_TEST(may_unlock("alice", unlockers));
    BOOST_TEST(!may_unlock("bob", unlockers));
    BOOST_TEST(!may_unlock("@sre-oncall", unlockers));
    BOOST_TEST(!may_unlock("", unlockers));
}

BOOST_AUTO_TEST_SUITE_END()
