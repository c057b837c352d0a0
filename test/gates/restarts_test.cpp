// Given pods as the API shows them, then their restart counts are read as the Job
// controller reads them: every container's restarts add up, only running and pending
// pods count against an OnFailure Job's backoffLimit, and a failed run's number follows
// its container's restartCount.
#include <boost/test/unit_test.hpp>

#include "gates/restarts.h"

using namespace envgate;
using gates::restart_limit_unrecorded;

namespace {

gates::Job on_failure_job(int backoff_limit) {
    gates::Job job;
    job.restart_policy = "OnFailure";
    job.backoff_limit = backoff_limit;
    return job;
}

gates::Pod pod(const std::string& phase, int restarts, int init_restarts = 0) {
    gates::Pod p;
    p.phase = phase;
    p.containers.push_back({"migrations", restarts, {}, {}});
    if (init_restarts > 0) {
        p.init_containers.push_back({"wait-for-db", init_restarts, {}, {}});
    }
    return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(restarts_suite)

// Found on the real control plane: the gate's memory patch landed between the Job
// controller's read and its status write at the restart limit; the write conflicted,
// the next sync no longer counted the stopped pod's restarts, and a replacement pod ran
// the migration 5 more times.
BOOST_AUTO_TEST_CASE(the_restart_limit_is_unrecorded_until_the_job_carries_its_condition) {
    gates::Job job = on_failure_job(4);
    BOOST_TEST(!restart_limit_unrecorded(job, {pod("Running", 3)}));
    BOOST_TEST(restart_limit_unrecorded(job, {pod("Running", 4)}));
    BOOST_TEST(restart_limit_unrecorded(job, {pod("Running", 2, 2)}));  // init containers count
    BOOST_TEST(restart_limit_unrecorded(job, {pod("Pending", 5)}));
    job.conditions.push_back({"FailureTarget", "True", "BackoffLimitExceeded", "", {}});
    BOOST_TEST(!restart_limit_unrecorded(job, {pod("Running", 4)}));
    job.conditions.back().type = "Failed";
    BOOST_TEST(!restart_limit_unrecorded(job, {pod("Running", 4)}));
    job.conditions.back().status = "False";
    BOOST_TEST(restart_limit_unrecorded(job, {pod("Running", 4)}));
}

BOOST_AUTO_TEST_CASE(the_restart_limit_counts_as_the_controller_does) {
    gates::Job job = on_failure_job(4);
    // A pod that ended no longer counts its restarts (pastBackoffLimitOnFailure).
    BOOST_TEST(!restart_limit_unrecorded(job, {pod("Failed", 4)}));
    BOOST_TEST(!restart_limit_unrecorded(job, {pod("Succeeded", 9)}));
    BOOST_TEST(restart_limit_unrecorded(job, {pod("Running", 2), pod("Running", 2)}));
    // backoffLimit 0: any restart; absent: the API's default of 6.
    BOOST_TEST(restart_limit_unrecorded(on_failure_job(0), {pod("Running", 1)}));
    BOOST_TEST(!restart_limit_unrecorded(on_failure_job(0), {pod("Running", 0)}));
    job.backoff_limit.reset();
    BOOST_TEST(!restart_limit_unrecorded(job, {pod("Running", 5)}));
    BOOST_TEST(restart_limit_unrecorded(job, {pod("Running", 6)}));
    // Another controller's Job (spec.managedBy): nothing known to wait for.
    job.managed_by = "kueue.x-k8s.io/multikueue";
    BOOST_TEST(!restart_limit_unrecorded(job, {pod("Running", 6)}));
    job.managed_by = "kubernetes.io/job-controller";
    BOOST_TEST(restart_limit_unrecorded(job, {pod("Running", 6)}));
    // Never: the controller counts failed pods in its status; nothing to hold.
    job.restart_policy = "Never";
    BOOST_TEST(!restart_limit_unrecorded(job, {pod("Running", 9)}));
}

BOOST_AUTO_TEST_CASE(a_pods_restarts_add_up_over_its_containers_and_init_containers) {
    BOOST_TEST(gates::pod_restarts(pod("Running", 0)) == 0);
    BOOST_TEST(gates::pod_restarts(pod("Running", 3)) == 3);
    BOOST_TEST(gates::pod_restarts(pod("Failed", 3, 2)) == 5);
    gates::Pod two = pod("Running", 2147483647);
    two.containers.push_back({"sidecar", 2147483647, {}, {}});
    BOOST_TEST(gates::pod_restarts(two) == 2LL * 2147483647);  // no int overflow
}

// Given a failure of container `migrations` of pod `p`, then its run number is the
// container's restartCount + 1 while it is the current (or backed-off) run, and
// restartCount for the run --previous shows; a pod that failed as a whole is run 0, a
// pod or container not listed -1.
BOOST_AUTO_TEST_CASE(a_failed_runs_number_follows_its_containers_restart_count) {
    gates::Pod p = pod("Running", 2);
    p.name = "p";
    gates::Failure failure;
    failure.pod = "p";
    failure.container = "migrations";
    BOOST_TEST(gates::container_run({p}, failure, gates::Run::current) == 3);
    BOOST_TEST(gates::container_run({p}, failure, gates::Run::previous) == 2);
    p.containers[0].state.waiting = gates::ContainerWaiting{};  // back-off: no current run
    BOOST_TEST(gates::container_run({p}, failure, gates::Run::previous) == 3);
    failure.kind = gates::FailureKind::pod;
    BOOST_TEST(gates::container_run({p}, failure, gates::Run::previous) == 0);
    failure.kind = gates::FailureKind::restart;
    failure.container = "other";
    BOOST_TEST(gates::container_run({p}, failure, gates::Run::current) == -1);
    failure.pod = "gone";
    failure.container = "migrations";
    BOOST_TEST(gates::container_run({p}, failure, gates::Run::current) == -1);
}

BOOST_AUTO_TEST_SUITE_END()
