// Given the pod sequences behind the runs that went wrong under load on the real control
// plane and the real kubelet (issue 23, test/bench/RESULTS.md "Runs under load"), then
// every line names the run it is about, once: an eviction the kubelet publishes in two
// writes is one failure; a pod deleted while its status lags says how many of its runs
// stop counting; an Indexed Job's ending line counts the index of the pod it names and
// is said once.
#include <boost/test/unit_test.hpp>

#include "gates/evaluate.h"
#include "test/gates/builders.h"

using namespace envgate::gates;
using namespace envgate::gates::test;

namespace {

// The passes of one gate over `steps`, each with the memory the one before left.
std::vector<Verdict> passes(const std::vector<std::pair<Job, std::vector<Pod>>>& steps) {
    std::vector<Verdict> out;
    GateMemory memory;
    for (const auto& [j, pods] : steps) {
        out.push_back(evaluate(Gate::pre_migrations, j, pods, memory, k_now));
        memory = out.back().memory;
    }
    return out;
}

struct Said {
    std::vector<std::string> lines;   // each counted run's words
    std::vector<std::string> events;  // each Retrying event's words
};

Said said(const std::vector<Verdict>& vs) {
    Said s;
    for (const Verdict& v : vs) {
        for (const SeenRun& run : v.runs) {
            if (run.counted) {
                s.lines.push_back(run.message);
            }
            if (run.event) {
                s.events.push_back(run.event->message);
            }
        }
    }
    return s;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

Pod not_ready(Pod p) {
    p.conditions.push_back(
        Condition{"Ready", "False", "PodFailed", "", at("2025-05-29T07:59:30Z")});
    return p;
}

// The kubelet's eviction of a running OnFailure pod (local storage past its limit: no
// DisruptionTarget), as it publishes it: the container killed first, the pod still
// Running (its status manager holds the terminal phase back while containers may run),
// then the phase Failed with reason Evicted.
Pod killed(int exit_code) {
    return not_ready(with_containers(
        pod("p"),
        {terminated("migrations", term(exit_code, "Error", "", "2025-05-29T07:59:30Z"))}));
}

Pod evicted(Pod p) {
    p.phase = "Failed";
    p.reason = "Evicted";
    p.message = "Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. ";
    return p;
}

Pod running_pod() {
    return with_containers(pod("p"), {running("migrations")});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_runs_suite)

// Given the kubelet's two writes of an eviction (the kill, then phase Failed/Evicted),
// each seen by a pass of its own, then one failure is said and recorded once: the pod's,
// against the pod limit; the kill is no container run of its own ("attempt 1 of 6").
// The Job controller counts the same: restartCount never rose, and the pod is failed.
BOOST_AUTO_TEST_CASE(a_kubelet_eviction_in_two_writes_is_one_failure) {
    for (int code : {137, 143}) {
        BOOST_TEST_CONTEXT("exit " << code) {
            std::vector<Verdict> vs = passes({{job(), {running_pod()}},
                                              {job(), {killed(code)}},
                                              {job(), {evicted(killed(code))}}});
            Said s = said(vs);
            BOOST_TEST(s.lines.size() == 1u);
            BOOST_REQUIRE(s.events.size() == 1u);
            BOOST_TEST(has(s.events[0], "pod 1 of 7 failed, 6 left: pod p was evicted (Evicted)"),
                       s.events[0]);
            BOOST_TEST(
                has(s.events[0], "exit code " + std::to_string(code) + " comes from the kill"),
                s.events[0]);
            BOOST_TEST(vs[1].runs.empty());
            BOOST_TEST(vs.back().counts.restarts == 0);
            BOOST_TEST(vs.back().counts.failed_pods == 1);
            BOOST_TEST(vs.back().memory.observed_failures == 1);
        }
    }
}

// Given the same eviction with its two writes the other way round (phase Failed while
// the container still shows running, the kill after), then the same: one line, one event.
BOOST_AUTO_TEST_CASE(an_eviction_told_before_its_kill_is_one_failure) {
    Pod failed_first = evicted(not_ready(running_pod()));
    std::vector<Verdict> vs = passes(
        {{job(), {running_pod()}}, {job(), {failed_first}}, {job(), {evicted(killed(137))}}});
    Said s = said(vs);
    BOOST_TEST(s.lines.size() == 1u);
    BOOST_TEST(s.events.size() == 1u);
    BOOST_TEST(vs.back().memory.observed_failures == 1);
}

// Given a container killed (137, not OOMKilled) that the kubelet then restarts, then
// that run is a failed run as soon as it restarted: counted once, named run 1.
BOOST_AUTO_TEST_CASE(a_killed_run_that_restarts_is_a_failed_run) {
    ContainerStatus restarted = running("migrations", 1);
    restarted.last_state.terminated = term(137, "Error", "", "2025-05-29T07:59:30Z");
    std::vector<Verdict> vs = passes({{job(), {running_pod()}},
                                      {job(), {killed(137)}},
                                      {job(), {with_containers(pod("p"), {restarted})}}});
    Said s = said(vs);
    BOOST_REQUIRE(s.events.size() == 1u);
    BOOST_TEST(has(s.events[0], "attempt 1 of 6 failed, 5 left: container migrations"),
               s.events[0]);
    BOOST_REQUIRE(vs.back().runs.size() == 1u);
    BOOST_TEST(vs.back().runs[0].key == "p-uid/migrations/1");
    BOOST_TEST(vs.back().counts.restarts == 1);
}

namespace {

// The eviction's kill restarted before the pod's failure is published (the real kubelet
// under load): the run the eviction killed is in lastState, restartCount 1, the pod still
// Running with its Ready condition False for PodFailed (the kubelet failed the pod; its
// status manager holds the phase back while a container may run).
Pod restarted_after_kill() {
    ContainerStatus c = running("migrations", 1);
    c.last_state.terminated = term(137, "Error", "", "2025-05-29T07:59:30Z");
    return not_ready(with_containers(pod("p"), {c}));
}

// The pod as the kubelet then publishes it Failed/Evicted: the restarted run killed too
// (`restarted_run_ended`), or, as the API may show it, still running.
Pod evicted_after_restart(bool restarted_run_ended) {
    Pod p = evicted(restarted_after_kill());
    if (restarted_run_ended) {
        ContainerStatus& c = p.containers[0];
        c.state.running = false;
        c.state.terminated = term(137, "Error", "", "2025-05-29T07:59:31Z");
    }
    return p;
}

}  // namespace

// Given the kubelet's writes of an eviction whose kill it restarted before it published
// the pod's failure (container killed → restarted, restartCount 1, the killed run in
// lastState → phase Failed/Evicted, the restarted run ended or still running), seen by a
// pass each or only some of them, then the pod's failure is said and recorded once:
// "pod 1 of 7", the runs the eviction cut fold into it (no "attempt 1 of 6", no "its run
// 1"), as the Job controller counts it once the pod is Failed.
BOOST_AUTO_TEST_CASE(an_eviction_whose_kill_restarted_is_one_failure) {
    for (bool ended : {true, false}) {
        const Pod kill = killed(137);
        const Pod restart = restarted_after_kill();
        const Pod failed = evicted_after_restart(ended);
        const std::vector<std::pair<std::string, std::vector<Pod>>> seen{
            {"every write", {kill, restart, failed}},
            {"the kill, then the failure", {kill, failed}},
            {"the restart, then the failure", {restart, failed}},
            {"the failure alone", {failed}},
        };
        for (const auto& [name, writes] : seen) {
            BOOST_TEST_CONTEXT((ended ? "restarted run ended; " : "restarted run running; ")
                               << name) {
                std::vector<std::pair<Job, std::vector<Pod>>> steps{{job(), {running_pod()}}};
                for (const Pod& p : writes) {
                    steps.push_back({job(), {p}});
                }
                std::vector<Verdict> vs = passes(steps);
                Said s = said(vs);
                BOOST_TEST(s.lines.size() == 1u);
                BOOST_TEST(s.events.size() == 1u);
                for (const std::string& event : s.events) {
                    BOOST_TEST(has(event, "pod 1 of 7 failed, 6 left: pod p was evicted (Evicted)"),
                               event);
                }
                for (const std::string& line : s.lines) {
                    BOOST_TEST(!has(line, "attempt 1 of 6"), line);
                    BOOST_TEST(!has(line, "its run 1"), line);
                }
                BOOST_TEST(vs.back().counts.restarts == 0);
                BOOST_TEST(vs.back().counts.failed_pods == 1);
                BOOST_TEST(vs.back().memory.observed_failures == 1);
            }
        }
    }
}

namespace {

// What the kubelet writes of a container it can no longer locate (its eviction removes
// the pod's exited containers at once): the run its old status showed running, ended
// with no exit time (convertToAPIContainerStatuses).
ContainerTerminated not_located(const char* message) {
    return ContainerTerminated{137, "ContainerStatusUnknown", message, std::nullopt};
}

// The evicted pod's writes when the kubelet removed the killed container before it
// read it back (under load): the pod Failed/Evicted (or its phase still held back as
// Running), the container waiting with restartCount 1, the run before in lastState, no
// restart having happened; then, once terminated (TerminatePod), that waiting state
// turned into a terminated one.
Pod evicted_container_gone(const std::string& phase, bool terminated) {
    ContainerStatus c = waiting("migrations", "ContainerCreating", "");
    c.restart_count = 1;
    c.last_state.terminated = not_located(
        "The container could not be located when the pod was deleted.  The container used to "
        "be Running");
    if (terminated) {
        c.state.waiting.reset();
        c.state.terminated =
            not_located("The container could not be located when the pod was terminated");
    }
    Pod p = evicted(not_ready(with_containers(pod("p"), {c})));
    p.phase = phase;
    return p;
}

}  // namespace

// Given the kubelet's writes of an eviction whose killed container it removed before it
// read it back (issue 23: restartCount 1 on the evicted pod, no restart having
// happened; the container waiting, then terminated, both runs ContainerStatusUnknown),
// seen by a pass each or only some of them, then the pod's failure is said and recorded
// once: "pod 1 of 7", its container's exit code 137 from the kill, no second line
// "container migrations ... (its run 1)", no "its 1 restart(s) no longer count".
BOOST_AUTO_TEST_CASE(an_eviction_whose_container_was_removed_is_one_failure) {
    const Pod held = evicted_container_gone("Running", false);
    const Pod failed = evicted_container_gone("Failed", false);
    const Pod done = evicted_container_gone("Failed", true);
    const Pod failing = not_ready(running_pod());
    const std::vector<std::pair<std::string, std::vector<Pod>>> seen{
        {"every write", {failing, held, failed, done}},
        {"the failure, then its end", {failing, failed, done}},
        {"the held phase, then the end", {held, done}},
        {"the failure alone", {failed}},
        {"the failure, the pod still Running", {held}},
        {"the end alone", {done}},
    };
    for (const auto& [name, writes] : seen) {
        BOOST_TEST_CONTEXT(name) {
            std::vector<std::pair<Job, std::vector<Pod>>> steps{{job(), {running_pod()}}};
            for (const Pod& p : writes) {
                steps.push_back({job(), {p}});
            }
            std::vector<Verdict> vs = passes(steps);
            Said s = said(vs);
            BOOST_TEST(vs.back().counts.restarts == 0);
            for (const std::string& line : s.lines) {
                BOOST_TEST(!has(line, "attempt 1 of 6"), line);
                BOOST_TEST(!has(line, "its run 1"), line);
                BOOST_TEST(!has(line, "restart(s) no longer count"), line);
            }
            // The phase still held back (Running) is no failure yet: nothing said.
            const int said_once = vs.back().counts.failed_pods == 0 ? 0 : 1;
            BOOST_TEST(static_cast<int>(s.lines.size()) == said_once);
            BOOST_TEST(static_cast<int>(s.events.size()) == said_once);
            // The run the eviction ended is named, as when the kubelet read it back.
            for (const std::string& event : s.events) {
                BOOST_TEST(has(event, "pod 1 of 7 failed, 6 left: pod p was evicted (Evicted)"),
                           event);
                BOOST_TEST(has(event, "container migrations exit code 137 comes from the kill"),
                           event);
            }
            BOOST_TEST(vs.back().memory.observed_failures == said_once);
        }
    }
}

// Given a run killed (a liveness probe, 137) and restarted a minute before the kubelet
// evicted its pod, both first seen by the pass that sees the pod Failed/Evicted, then that
// run ended before the pod's failure began: a failed run of its own, said before the pod's.
BOOST_AUTO_TEST_CASE(a_kill_restarted_before_the_pod_failed_is_a_run_of_its_own) {
    ContainerStatus c = running("migrations", 1);
    c.last_state.terminated = term(137, "Error", "", "2025-05-29T07:58:30Z");
    Pod failed = evicted(not_ready(with_containers(pod("p"), {c})));
    std::vector<Verdict> vs = passes({{job(), {running_pod()}}, {job(), {failed}}});
    Said s = said(vs);
    BOOST_REQUIRE(s.lines.size() == 2u);
    BOOST_TEST(has(s.lines[0], "container migrations exited 137"), s.lines[0]);
    BOOST_TEST(has(s.lines[1], "pod 1 of 7 failed, 6 left: pod p was evicted"), s.lines[1]);
    BOOST_TEST(s.events.size() == 2u);
    BOOST_TEST(vs.back().memory.observed_failures == 2);
}

// Given an OnFailure pod (backoffLimit 3) whose runs 1 and 2 failed, deleted by hand
// while its published status still shows run 2 terminated (restartCount 1) or already
// run 3 running (restartCount 2), then either way the deletion's line is the pod limit's
// "pod 1 of 4 failed, 3 left" and says that both counted runs no longer count.
BOOST_AUTO_TEST_CASE(a_pod_deleted_while_its_status_lags_drops_every_counted_run) {
    Pod run1 = with_containers(pod("p"), {crashloop("migrations", 0, 3)});
    Pod run2 = with_containers(pod("p"), {terminated("migrations", term(3), 1)});
    ContainerStatus third = running("migrations", 2);
    third.last_state.terminated = term(3);
    for (const Pod& at_delete : {run2, with_containers(pod("p"), {third})}) {
        BOOST_TEST_CONTEXT("restartCount " << at_delete.containers[0].restart_count) {
            std::vector<Verdict> vs = passes({{job("OnFailure", 3), {run1}},
                                              {job("OnFailure", 3), {run2}},
                                              {job("OnFailure", 3), {deleting(at_delete)}}});
            Said s = said(vs);
            BOOST_REQUIRE(s.lines.size() == 3u);
            BOOST_TEST(has(s.lines[1], "attempt 2 of 3 failed, 1 left"), s.lines[1]);
            BOOST_TEST(s.lines[2].find("pod 1 of 4 failed, 3 left: pod p was deleted") == 0u,
                       s.lines[2]);
            BOOST_TEST(has(s.lines[2], "its 2 restart(s) no longer count"), s.lines[2]);
            BOOST_TEST(s.events.size() == 3u);
        }
    }
}

namespace {

Job indexed_job() {
    Job j = job("Never", 2147483647);
    j.indexed = true;
    j.completions = 3;
    j.backoff_limit_per_index = 1;
    j.max_failed_indexes = 1;
    j.active = 3;
    return j;
}

// A pod of `index` whose container failed at `finished`, after `before` failures of its
// index.
Pod failed_index_pod(const std::string& name, int index, int before, const char* finished) {
    Pod p = with_containers(pod(name, "Failed"),
                            {terminated("migrations", term(1, "Error", "", finished))});
    p.completion_index = index;
    p.index_failure_count = before;
    return p;
}

// The pod once the controller counted it in status.failed (its tracking finalizer gone).
Pod counted(Pod p) {
    p.finalizers.clear();
    return p;
}

Pod running_index_pod(const std::string& name, int index, int before) {
    Pod p = with_containers(pod(name), {running("migrations")});
    p.completion_index = index;
    p.index_failure_count = before;
    return p;
}

}  // namespace

// Given an Indexed Job (backoffLimitPerIndex 1, maxFailedIndexes 1) whose indexes 0 and
// 1 each fail twice, index 1's second failure last, then the failing line names that
// pod and counts its index, 1, not index 0 (equally near its limit); and once the
// controller writes failedIndexes 0,1 and FailureTarget, the line says the same (no second
// line for the same run).
BOOST_AUTO_TEST_CASE(an_indexed_ending_line_counts_the_index_of_the_pod_it_names) {
    Pod a0 = failed_index_pod("a0", 0, 0, "2025-05-29T07:59:01Z");
    Pod a1 = failed_index_pod("a1", 1, 0, "2025-05-29T07:59:02Z");
    Pod b0 = failed_index_pod("b0", 0, 1, "2025-05-29T07:59:10Z");
    Pod b1 = failed_index_pod("b1", 1, 1, "2025-05-29T07:59:11Z");
    Pod c2 = running_index_pod("c2", 2, 0);
    Job written = indexed_job();
    written.failed = 4;
    written.failed_indexes = "0,1";
    written = with_condition(written, cond("FailureTarget", "MaxFailedIndexesExceeded",
                                           "Job has exceeded the specified maximal number of "
                                           "failed indexes"));
    std::vector<Verdict> vs =
        passes({{indexed_job(), {a0, a1, c2}},
                {indexed_job(), {a0, a1, b0, c2}},
                {indexed_job(), {a0, a1, b0, b1, c2}},
                {written, {counted(a0), counted(a1), counted(b0), counted(b1), c2}}});
    const Verdict& failing = vs[2];
    BOOST_TEST(state_name(failing.state) == "failing");
    BOOST_REQUIRE(failing.last_failure);
    BOOST_TEST(failing.last_failure->pod == "b1");
    BOOST_REQUIRE(failing.counts.index);
    BOOST_TEST(*failing.counts.index == 1);
    BOOST_TEST(has(failing.progressing.message, "(index 1: attempt 2 of 2 failed, 0 left)"),
               failing.progressing.message);
    BOOST_TEST(has(failing.progressing.message, "failed indexes: 0,1 (maxFailedIndexes 1)"),
               failing.progressing.message);
    BOOST_TEST(state_name(vs[3].state) == "failing");
    BOOST_TEST(vs[3].progressing.message == failing.progressing.message);
    // Every retry line before names the index of the pod it names.
    for (const Verdict& v : vs) {
        for (const SeenRun& run : v.runs) {
            if (run.event) {
                const std::string index =
                    run.failure.pod == "a0" || run.failure.pod == "b0" ? "0" : "1";
                BOOST_TEST(run.message.find("index " + index + ":") == 0u, run.message);
            }
        }
    }
}

namespace {

Job never_job(int failed) {
    Job j = job("Never", 3);
    j.failed = failed;
    return j;
}

// A Never pod deleted by hand: its container stopped by the kill, the pod Failed and
// being deleted, its tracking finalizer still there (the controller has not counted it).
Pod deleted_by_hand(const std::string& name) {
    return deleting(with_containers(
        pod(name, "Failed"),
        {terminated("migrations", term(137, "Error", "", "2025-05-29T07:59:40Z"))}));
}

}  // namespace

// Given a Never Job (backoffLimit 3) whose running pod p is deleted by hand, the Job's
// count of it (status.failed 1) and the pod's own status reaching the passes in either
// order (a pod list taken once p was gone, before the pod watch delivered its deletion,
// shows the count first: a failed pod no pass listed), then p is one run: one line, one
// event, whichever pass describes it; and the pass that shows p after its count adds none.
BOOST_AUTO_TEST_CASE(a_deleted_pod_counted_before_it_is_listed_is_one_run) {
    const Pod p = with_containers(pod("p"), {running("migrations")});
    const Pod q = with_containers(pod("q"), {running("migrations")});
    const Pod gone = deleted_by_hand("p");
    const std::vector<std::pair<std::string, std::vector<std::pair<Job, std::vector<Pod>>>>> orders{
        {"the pod, then the count",
         {{never_job(0), {p}}, {never_job(0), {gone, q}}, {never_job(1), {counted(gone), q}}}},
        {"the count, then the pod",
         {{never_job(0), {p}}, {never_job(1), {q}}, {never_job(1), {counted(gone), q}}}},
    };
    for (const auto& [name, steps] : orders) {
        BOOST_TEST_CONTEXT(name) {
            std::vector<Verdict> vs = passes(steps);
            Said s = said(vs);
            BOOST_TEST(s.lines.size() == 1u);
            BOOST_TEST(s.events.size() == 1u);
            for (const std::string& event : s.events) {
                BOOST_TEST(has(event, "pod 1 of 4 failed, 3 left"), event);
            }
            BOOST_TEST(vs.back().runs.empty());
            BOOST_TEST(vs.back().counts.failed_pods == 1);
            BOOST_TEST(vs.back().memory.observed_failures == 1);
        }
    }
}

// Given a failed pod the Job counts that no pass listed (its run told as such), then a
// second pod failing and first seen counted, then that second pod is a run of its own:
// the count rose for it.
BOOST_AUTO_TEST_CASE(a_pod_counted_after_an_unlisted_one_is_a_run_of_its_own) {
    const Pod q = with_containers(pod("q"), {running("migrations")});
    Pod q_failed = counted(
        with_containers(pod("q", "Failed"),
                        {terminated("migrations", term(3, "Error", "", "2025-05-29T07:59:50Z"))}));
    std::vector<Verdict> vs =
        passes({{never_job(0), {}}, {never_job(1), {q}}, {never_job(2), {q_failed}}});
    Said s = said(vs);
    BOOST_REQUIRE(s.lines.size() == 2u);
    BOOST_TEST(has(s.lines[0], "pod 1 of 4 failed, 3 left: a pod of the Job failed"), s.lines[0]);
    BOOST_TEST(has(s.lines[1], "pod 2 of 4 failed, 2 left: pod q"), s.lines[1]);
    BOOST_TEST(s.events.size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
