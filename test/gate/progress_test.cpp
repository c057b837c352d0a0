// Given a gate that prints nothing for a while, then a progress line comes at most every
// `every`: time waited, each pod with its phase, waiting reason and restarts, the time
// left before activeDeadlineSeconds and the gate's timeout; a verdict line resets it.
#include <boost/test/unit_test.hpp>
#include <sstream>

#include "runner/gating/progress.h"
#include "test/fakes/fake_clock.h"

using namespace envgate;
using namespace std::chrono_literals;

namespace {

const TimePoint k_t0 = *parse_rfc3339("2026-01-01T00:00:00Z");

gates::Pod pod(const char* name, const char* phase, int restarts, const char* waiting = "") {
    gates::Pod p;
    p.name = name;
    p.phase = phase;
    gates::ContainerStatus c;
    c.name = "migrations";
    c.restart_count = restarts;
    if (*waiting != '\0') {
        c.state.waiting = gates::ContainerWaiting{waiting, ""};
    }
    p.containers.push_back(c);
    return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(progress_suite)

BOOST_AUTO_TEST_CASE(line_names_pods_restarts_and_time_left) {
    gates::Job job;
    job.active_deadline_seconds = 600;
    job.start_time = k_t0;
    gates::Pod unscheduled = pod("m-2", "Pending", 0);
    unscheduled.conditions.push_back({"PodScheduled", "False", "Unschedulable", "", {}});
    std::string line = progress_line(
        "pre-migrations", job,
        {pod("m-1", "Running", 2), pod("m-3", "Pending", 0, "ImagePullBackOff"), unscheduled}, k_t0,
        k_t0 + 90s, k_t0 + 1h);
    BOOST_TEST(line ==
                   "pre-migrations: still running after 1m30s: pod m-1 Running, 2 restarts; "
                   "pod m-3 Pending (ImagePullBackOff); pod m-2 Pending (Unschedulable); 8m30s "
                   "left before activeDeadlineSeconds (600s); 58m30s left before the gate's "
                   "timeout",
               line);
    std::string none =
        progress_line("post-migrations", gates::Job{}, {}, k_t0, k_t0 + 2h, k_t0 + 1h);
    BOOST_TEST(none ==
                   "post-migrations: still running after 2h0m0s: no pod yet; the gate's "
                   "timeout passed",
               none);
}

BOOST_AUTO_TEST_CASE(prints_at_most_every_interval_and_verdict_lines_reset_it) {
    test::FakeClock clock(k_t0);
    std::ostringstream out;
    JobLog log(out, clock, {});
    ProgressReporter progress(log, 30s, k_t0, k_t0 + 1h);
    std::vector<gates::Pod> pods{pod("m-1", "Running", 0)};
    BOOST_TEST((progress.next() == k_t0 + 30s));
    progress.after_pass(k_t0 + 10s, false, "pre-migrations", gates::Job{}, pods);
    BOOST_TEST(out.str().empty());
    progress.after_pass(k_t0 + 30s, false, "pre-migrations", gates::Job{}, pods);
    BOOST_TEST(out.str() ==
               "pre-migrations: still running after 30s: pod m-1 Running; 59m30s left before "
               "the gate's timeout\n");
    progress.after_pass(k_t0 + 45s, true, "pre-migrations", gates::Job{}, pods);  // a verdict line
    BOOST_TEST((progress.next() == k_t0 + 75s));
    out.str("");
    progress.after_pass(k_t0 + 70s, false, "pre-migrations", gates::Job{}, pods);
    BOOST_TEST(out.str().empty());
    progress.after_pass(k_t0 + 75s, false, "pre-migrations", gates::Job{}, pods);
    BOOST_TEST(out.str().find("still running after 1m15s") != std::string::npos, out.str());
}

BOOST_AUTO_TEST_SUITE_END()
