// Given the memory an earlier run of a gate left on its Job, then a rerun lists every
// failed run it remembers once, in the order the earlier run listed them: those the pods
// still show read from them, those whose pod is gone from the memory's records, saying
// where their log tails are kept.
#include <boost/test/unit_test.hpp>
#include <sstream>

#include "runner/gating/kept_logs.h"
#include "runner/gating/remembered.h"
#include "runner/report/render.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_api.h"

using namespace envgate;

namespace {

const JobIdentity k_job{"mig", "gitlab", "job-uid"};
const char* k_first_job = "https://gitlab.example/acme/app/-/jobs/101";

gates::Job onfailure_job() {
    gates::Job j;
    j.name = "mig";
    j.namespace_ = "gitlab";
    j.uid = "job-uid";
    j.restart_policy = "OnFailure";
    return j;
}

// The replacement pod "b": its container's first run failed, the second runs.
gates::Pod replacement() {
    gates::Pod pod;
    pod.name = "mig-b";
    pod.namespace_ = "gitlab";
    pod.uid = "b-uid";
    pod.phase = "Running";
    gates::ContainerStatus c;
    c.name = "migrations";
    c.restart_count = 1;
    c.state.running = true;
    c.last_state.terminated = gates::ContainerTerminated{3, "Error", "run 4 failed",
                                                         parse_rfc3339("2026-01-01T00:00:40Z")};
    pod.containers.push_back(c);
    return pod;
}

gates::RememberedRun record(std::string key, std::string pod, int number, int attempt,
                            std::string text, const char* at) {
    gates::RememberedRun r;
    r.key = std::move(key);
    r.pod = std::move(pod);
    r.container = "migrations";
    r.number = number;
    r.attempt = attempt;
    r.limit = 6;
    r.text = std::move(text);
    r.at = parse_rfc3339(at);
    r.seen_by = k_first_job;
    r.tail_kept = true;
    return r;
}

// Runs 1-2 of pod "a" (gone), pod "a"'s deletion, then run 1 of pod "b", as the first
// run listed them.
gates::GateMemory memory() {
    gates::GateMemory m;
    m.job_uid = "job-uid";
    m.failed_runs = {{"a-uid/migrations", 2}, {"b-uid/migrations", 1}};
    m.pods_failed = {"a-uid"};
    m.runs = std::vector<gates::RememberedRun>{
        record("a-uid/migrations/1", "mig-a", 1, 1, "container migrations exited 3: run 1",
               "2026-01-01T00:00:10Z"),
        record("a-uid/migrations/2", "mig-a", 2, 2, "container migrations exited 3: run 2",
               "2026-01-01T00:00:20Z"),
        record("a-uid", "mig-a", 0, 1, "pod mig-a was deleted", "2026-01-01T00:00:30Z"),
        record("b-uid/migrations/1", "mig-b", 1, 1, "container migrations exited 3: run 4",
               "2026-01-01T00:00:40Z")};
    gates::RememberedRun& deletion = m.runs.edit()[2];
    deletion.container.reset();
    deletion.tail_kept = false;  // its log was gone before the first job could read it
    deletion.limit = 7;
    return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(remembered_suite)

// Given three remembered runs whose pod is gone and one the replacement pod shows, then
// the listing holds the four once each in the first run's order: the first three from
// memory, the fourth as the pod shows it, with the counts the first run told.
BOOST_AUTO_TEST_CASE(runs_of_a_gone_pod_are_listed_from_memory_in_order) {
    auto listed = remembered_listing(onfailure_job(), {replacement()}, memory());
    BOOST_REQUIRE(listed.size() == 4U);
    const char* keys[] = {"a-uid/migrations/1", "a-uid/migrations/2", "a-uid",
                          "b-uid/migrations/1"};
    for (std::size_t i = 0; i < 4; ++i) {
        BOOST_TEST(listed[i].run.key == keys[i]);
    }
    BOOST_TEST((!listed[0].shown && !listed[1].shown && !listed[2].shown));
    BOOST_TEST(!listed[0].pod_listed);
    BOOST_TEST(listed[3].shown);
    BOOST_TEST(listed[3].run.failure.message == "run 4 failed");
    BOOST_TEST(listed[1].run.counts.attempt == 2);
    BOOST_TEST(listed[3].run.counts.limit == 6);
}

// Given memory without records (written before runs were remembered), then the listing
// is what the pods show, as before.
BOOST_AUTO_TEST_CASE(memory_without_records_lists_what_the_pods_show) {
    gates::GateMemory old = memory();
    old.runs = {};
    auto listed = remembered_listing(onfailure_job(), {replacement()}, old);
    BOOST_REQUIRE(listed.size() == 1U);
    BOOST_TEST(listed[0].run.key == "b-uid/migrations/1");
    BOOST_TEST(listed[0].shown);
    BOOST_TEST(!listed[0].record.has_value());
}

// Given the listing kept in a step, then the gone runs say where their tails are (the
// first job's URL), read no log, and every run is kept once, numbered in order.
BOOST_AUTO_TEST_CASE(remembered_runs_are_kept_once_saying_where_their_tails_are) {
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:01:00Z"));
    test::FakeKubeApi api;
    api.set_logs(kube::pods("gitlab", "mig-b"), "migrations", true, "run 4: migrating\n");
    std::ostringstream out;
    JobLog log(out, clock, {});
    StepReport step;
    step.name = "pre-migrations";
    const std::vector<gates::Pod> pods{replacement()};
    for (int pass = 0; pass < 2; ++pass) {
        for (const RememberedListing& l : remembered_listing(onfailure_job(), pods, memory())) {
            if (l.shown) {
                keep_run(api, log, k_job, pods, l.run, step);
            } else {
                keep_remembered_run(log, l, step);
            }
        }
    }
    BOOST_REQUIRE(step.failed_runs.size() == 4U);
    const std::string gone = std::string(
                                 "pod gone; its log tail is in the report of the job "
                                 "that saw it: ") +
                             k_first_job;
    const std::string no_tail =
        std::string("pod gone; the job that saw it kept no log tail of it: ") + k_first_job;
    for (int i = 0; i < 3; ++i) {
        const FailedRun& r = step.failed_runs[i];
        BOOST_TEST(r.run == i + 1);
        BOOST_TEST(r.remembered);
        BOOST_TEST(r.seen_by == k_first_job);
        BOOST_TEST(r.log_note == (i < 2 ? gone : no_tail));
        BOOST_TEST(r.log_tail.empty());
        BOOST_TEST(r.log_command.empty());
    }
    BOOST_TEST(step.failed_runs[0].description == "container migrations exited 3: run 1");
    BOOST_TEST(step.failed_runs[2].limit == 7);
    BOOST_TEST(step.failed_runs[2].container.empty());
    BOOST_TEST(!step.failed_runs[3].remembered);
    BOOST_TEST(step.failed_runs[3].log_tail == "run 4: migrating");
    const std::string text = out.str();
    BOOST_TEST(
        text.find("failed run 1 (pod mig-a, container migrations): " + gone) != std::string::npos,
        text);
    BOOST_TEST(text.find("failed run 3 (pod mig-a): " + no_tail) != std::string::npos, text);
}

// Given a rerun whose memory dropped older runs, then summary.md says so above the runs.
BOOST_AUTO_TEST_CASE(summary_says_when_older_runs_are_no_longer_remembered) {
    RunReport r;
    r.environment = "gprd";
    StepReport step;
    step.name = "pre-migrations";
    step.kind = "gate";
    step.failed_runs_forgotten = 7;
    r.steps.push_back(step);
    const std::string md = render_markdown(r);
    BOOST_TEST(md.find("### Failed runs\n\n7 older failed run(s) of pre-migrations are no longer "
                       "remembered") != std::string::npos,
               md);
    r.steps[0].failed_runs_forgotten = 0;
    BOOST_TEST(render_markdown(r).find("no longer remembered") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
