// Given random but seeded histories of one Job (crash loops, evictions, preemptions, the
// controller's finalizer bookkeeping, then FailureTarget and Failed), observed in random
// order-preserving samples with repeats and skips and with envgate restarting (memory
// reloaded from the Job annotations), then no count goes down, each rise of the failed
// count records exactly one Retrying event, a failure exactly one Failed event, and
// evaluating any snapshot twice changes nothing. Two more generators: the controller's
// failed-pod writes read as consistent snapshots (each failed pod counts exactly once),
// and OnFailure pods evicted as a whole (each eviction counts once).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gates/evaluate.h"
#include "gates/memory_json.h"
#include "test/gates/builders.h"

using namespace envgate::gates;
using namespace envgate::gates::test;

namespace {

struct Snapshot {
    Job job;
    std::vector<Pod> pods;
    int pod_failures = 0;  // pods that left Pending/Running so far (their restarts leave the sum)
};

class JobSim {
  public:
    JobSim(unsigned seed, bool on_failure)
        : m_rng(seed), m_job(job(on_failure ? "OnFailure" : "Never", seed % 4)) {
        m_pods.push_back(new_pod());
    }

    std::vector<Snapshot> history(int steps) {
        std::vector<Snapshot> out{{m_job, m_pods, m_failures}};
        for (int i = 0; i < steps && !m_done; ++i) {
            step();
            out.push_back({m_job, m_pods, m_failures});
        }
        return out;
    }

  private:
    Pod new_pod() {
        std::string name = "p" + std::to_string(m_next++);
        return with_containers(pod(name), {running("migrations")});
    }

    Pod* active() {
        for (Pod& p : m_pods) {
            if (p.phase == "Running" && !p.deletion_timestamp) {
                return &p;
            }
        }
        return nullptr;
    }

    void crash_or_restart(Pod& p) {
        ContainerStatus& c = p.containers[0];
        if (m_job.restart_policy == "Never") {
            c = terminated("migrations", term(1));
            p.phase = "Failed";
            ++m_failures;
        } else if (c.state.running) {
            c = crashloop("migrations", c.restart_count);
        } else {
            c = running("migrations", c.restart_count + 1);
        }
    }

    void disrupt(Pod& p) {
        if (m_rng() % 2 == 0) {
            ++m_failures;
            p = disrupted(p, "TerminationByKubelet", "The node was low on resource: memory.");
            p.phase = "Failed";
            p.reason = "Evicted";
        } else {
            p = deleting(disrupted(p, "PreemptionByScheduler", "default-scheduler: preempting"));
        }
    }

    // The controller: finalizer -> uncounted -> status.failed, then the pod may go.
    void account() {
        for (Pod& p : m_pods) {
            bool failed = p.phase == "Failed" || p.deletion_timestamp;
            auto& u = m_job.uncounted_failed;
            if (!failed || p.finalizers.empty()) {
                continue;
            }
            if (std::find(u.begin(), u.end(), p.uid) == u.end()) {
                u.push_back(p.uid);
                return;
            }
            p.finalizers.clear();
            u.erase(std::find(u.begin(), u.end(), p.uid));
            ++m_job.failed;
            return;
        }
        m_failures += static_cast<int>(std::erase_if(
            m_pods, [](const Pod& p) { return p.deletion_timestamp && p.finalizers.empty(); }));
        if (active() == nullptr && !m_ending) {
            m_pods.push_back(new_pod());
        }
    }

    bool past_limit() {
        int limit = *m_job.backoff_limit;
        int restarts = 0;
        for (const Pod& p : m_pods) {
            if (p.phase == "Running" && m_job.restart_policy == "OnFailure") {
                restarts += p.containers[0].restart_count;
            }
        }
        int failed = m_job.failed + static_cast<int>(m_job.uncounted_failed.size());
        for (const Pod& p : m_pods) {
            bool counted = std::find(m_job.uncounted_failed.begin(), m_job.uncounted_failed.end(),
                                     p.uid) != m_job.uncounted_failed.end();
            failed +=
                (p.phase == "Failed" || p.deletion_timestamp) && !p.finalizers.empty() && !counted;
        }
        return failed > limit || (limit == 0 ? restarts > 0 : restarts >= limit);
    }

    void end_step() {
        if (!m_ending) {
            m_ending = true;
            m_job.conditions.push_back(cond("FailureTarget", "BackoffLimitExceeded", "limit"));
            for (Pod& p : m_pods) {
                if (p.phase == "Running") {
                    p = deleting(p);
                }
            }
        } else if (!m_job.uncounted_failed.empty() ||
                   std::any_of(m_pods.begin(), m_pods.end(),
                               [](const Pod& p) { return !p.finalizers.empty(); })) {
            account();
        } else {
            m_failures += static_cast<int>(std::erase_if(
                m_pods, [](const Pod& p) { return p.deletion_timestamp.has_value(); }));
            m_job.conditions.push_back(cond("Failed", "BackoffLimitExceeded", "limit"));
            m_done = true;
        }
    }

    void step() {
        if (m_ending || past_limit()) {
            end_step();
            return;
        }
        unsigned r = m_rng() % 10;
        Pod* p = active();
        if (r < 5 && p != nullptr) {
            crash_or_restart(*p);
        } else if (r < 7 && p != nullptr) {
            disrupt(*p);
        } else {
            account();
        }
    }

    std::mt19937 m_rng;
    Job m_job;
    std::vector<Pod> m_pods;
    int m_next = 0;
    int m_failures = 0;
    bool m_ending = false;
    bool m_done = false;
};

// An order-preserving sample of `n` indices into a history, with repeats and skips.
std::vector<std::size_t> sample(std::mt19937& rng, std::size_t size, std::size_t n) {
    std::vector<std::size_t> idx(n);
    for (std::size_t& i : idx) {
        i = rng() % size;
    }
    std::sort(idx.begin(), idx.end());
    idx.push_back(size - 1);
    return idx;
}

void check_sequence(const std::vector<Snapshot>& h, const std::vector<std::size_t>& idx,
                    std::mt19937& rng) {
    GateMemory memory;
    std::optional<Verdict> prev;
    int prev_failures = 0;
    int failed_events = 0;
    std::set<std::string> seen_keys;
    for (std::size_t i : idx) {
        const Snapshot& s = h[i];
        Verdict v = evaluate(Gate::pre_migrations, s.job, s.pods, memory, k_now);
        bool rose = v.memory.observed_failures > memory.observed_failures;
        // One Retrying event per counted run first seen, none without one; each run once.
        BOOST_TEST(!(v.event && v.event->reason == "MigrationsRetrying"));
        int run_events = 0;
        for (const SeenRun& run : v.runs) {
            run_events += run.event ? 1 : 0;
            BOOST_TEST(seen_keys.insert(run.key).second, run.key);
        }
        BOOST_TEST(run_events <= static_cast<int>(v.runs.size()));
        if (rose && v.state == State::retrying) {
            BOOST_TEST(run_events > 0);
        }
        failed_events += v.event && v.event->reason == "MigrationsFailed";
        if (prev) {
            BOOST_TEST(v.memory.observed_failures >= prev->memory.observed_failures);
            BOOST_TEST(v.counts.failed_pods >= prev->counts.failed_pods);
            if (s.pod_failures == prev_failures) {
                BOOST_TEST(v.counts.restarts >= prev->counts.restarts);
            }
        }
        Verdict again = evaluate(Gate::pre_migrations, s.job, s.pods, v.memory, k_now);
        BOOST_TEST(!again.event);
        BOOST_TEST(again.runs.empty());
        BOOST_TEST((again.memory == v.memory));
        BOOST_TEST((again.counts == v.counts));
        BOOST_TEST((again.last_failure == v.last_failure));
        memory = v.memory;
        if (rng() % 4 == 0) {  // envgate restarted: memory comes back from the annotations
            memory = *memory_from_annotations(memory_annotations(memory));
        }
        prev = v;
        prev_failures = s.pod_failures;
    }
    bool ends_failed = prev && prev->state == State::failed;
    BOOST_TEST(failed_events == (ends_failed ? 1 : 0));
}

// The controller's bookkeeping of failed pods of a Never Job, one write per step: the pod
// fails (finalizer on), its UID goes into uncountedTerminatedPods, its finalizer goes,
// then status.failed takes the UID over. `truth[i]` is how many pods had failed by step i.
struct Writes {
    std::vector<Job> jobs;
    std::vector<std::vector<Pod>> pods;
    std::vector<int> truth;
};

Writes controller_writes(std::mt19937& rng, int failures) {
    Writes w;
    Job j = job("Never", 100);
    std::vector<Pod> pods;
    int failed = 0;
    auto keep = [&] {
        w.jobs.push_back(j);
        w.pods.push_back(pods);
        w.truth.push_back(failed);
    };
    for (int i = 0; i < failures; ++i) {
        pods.push_back(with_containers(pod("p" + std::to_string(i)), {running("migrations")}));
        keep();
        Pod& p = pods.back();
        if (rng() % 2 == 0) {
            p = with_containers(p, {terminated("migrations", term(1))});
            p.phase = "Failed";
        } else {
            p = disrupted(p, "TerminationByKubelet", "The node was low on resource: memory.");
            p.phase = "Failed";
        }
        ++failed;
        keep();
        j.uncounted_failed.push_back(p.uid);
        keep();
        p.finalizers.clear();
        keep();
        j.uncounted_failed.clear();
        ++j.failed;
        keep();
    }
    return w;
}

// An OnFailure Job whose pods crash and restart in place and are sometimes evicted
// while running (phase Failed, 137 ContainerStatusUnknown, not deleted), in one write or,
// as the real kubelet may publish it, the kill first, or (its killed container removed
// before it read it back) the container waiting with one restart more that never
// happened; every pod stays listed. `failures`
// counts crashes plus evictions, as they happen (an eviction when its pod is Failed).
struct EvictionHistory {
    std::vector<std::vector<Pod>> pods;
    std::vector<int> failures;
};

EvictionHistory eviction_history(std::mt19937& rng, int steps) {
    EvictionHistory h;
    std::vector<Pod> pods{with_containers(pod("p0"), {running("migrations")})};
    int failures = 0;
    for (int i = 0; i < steps; ++i) {
        Pod& p = pods.back();
        ContainerStatus& c = p.containers[0];
        unsigned r = rng() % 6;
        if (c.state.running && r < 3) {
            c = crashloop("migrations", c.restart_count);
            ++failures;
        } else if (!c.state.running) {
            c = running("migrations", c.restart_count + 1);
        } else if (r == 3) {
            const unsigned how = rng() % 3;
            if (how == 0) {
                // The real kubelet's first write of an eviction: the container killed,
                // the pod still Running (the terminal phase held back until it stopped).
                c = terminated("migrations", term(137, "Error", ""), c.restart_count);
                h.pods.push_back(pods);
                h.failures.push_back(failures);
            }
            const int restarts = c.restart_count;
            p = disrupted(p, "TerminationByKubelet", "The node was low on resource: memory.");
            p.phase = "Failed";
            p.reason = "Evicted";
            ++failures;
            ContainerStatus& ended = p.containers[0];  // `c` went with the pod's old value
            if (how == 1) {
                // Or, under load, the killed container removed before the kubelet read it
                // back: the run it showed running not located, added to restartCount
                // (nothing restarted), the container waiting until the pod is terminated.
                ended = waiting("migrations", "ContainerCreating", "");
                ended.restart_count = restarts + 1;
                ended.last_state.terminated = term(137, "ContainerStatusUnknown", "");
                ended.last_state.terminated->finished_at.reset();
                h.pods.push_back(pods);
                h.failures.push_back(failures);
                // Then terminated (TerminatePod), that run still in lastState.
                ended.state = ContainerState{};
                ended.state.terminated = *ended.last_state.terminated;
            } else {
                ended = terminated("migrations", term(137, "ContainerStatusUnknown", ""),
                                   ended.restart_count);
            }
            pods.push_back(
                with_containers(pod("p" + std::to_string(pods.size())), {running("migrations")}));
        }
        h.pods.push_back(pods);
        h.failures.push_back(failures);
    }
    return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_property_suite)

// Given the controller's writes for random failures, then a Job and the pods of the same
// moment (what the runner's consistent snapshot yields) count exactly the pods failed so
// far, also along random samples with memory; and a Job read one write before its pods
// (what the runner no longer evaluates) miscounts in some history, so the property has
// teeth.
BOOST_AUTO_TEST_CASE(consistent_snapshots_count_every_failed_pod_exactly_once) {
    std::mt19937 rng(1100);
    int miscounted_when_mixed = 0;
    for (int history = 0; history < 200; ++history) {
        Writes w = controller_writes(rng, 1 + static_cast<int>(rng() % 6));
        GateMemory memory;
        for (std::size_t i : sample(rng, w.jobs.size(), 1 + rng() % 20)) {
            BOOST_TEST_CONTEXT("history " << history << " step " << i) {
                Verdict v = evaluate(Gate::pre_migrations, w.jobs[i], w.pods[i], memory, k_now);
                BOOST_TEST(v.counts.failed_pods == w.truth[i]);
                BOOST_TEST(v.memory.observed_failures == w.truth[i]);
                memory = v.memory;
            }
        }
        // The Job read before the uncounted write, the pods listed after the finalizer
        // went: the defect the consistent snapshot prevents.
        for (std::size_t i = 0; i + 2 < w.jobs.size(); ++i) {
            Verdict mixed = evaluate(Gate::pre_migrations, w.jobs[i], w.pods[i + 2], {}, k_now);
            miscounted_when_mixed += mixed.counts.failed_pods != w.truth[i + 2];
        }
    }
    BOOST_TEST(miscounted_when_mixed > 0);
}

// Given OnFailure pods that crash in place and get evicted as a whole, observed in random
// samples with memory (and envgate restarts), then the failed count is exactly the
// crashes plus the evictions at the last pass, never more at any pass, and each failed
// run records one event (a pass that sees two records two).
BOOST_AUTO_TEST_CASE(on_failure_evictions_count_once) {
    std::mt19937 rng(1102);
    for (int history = 0; history < 200; ++history) {
        EvictionHistory h = eviction_history(rng, 10 + static_cast<int>(rng() % 30));
        GateMemory memory;
        int events = 0;
        for (std::size_t i : sample(rng, h.pods.size(), 1 + rng() % 15)) {
            BOOST_TEST_CONTEXT("history " << history << " step " << i) {
                Verdict v =
                    evaluate(Gate::pre_migrations, job("OnFailure", 100), h.pods[i], memory, k_now);
                BOOST_TEST(v.memory.observed_failures <= h.failures[i]);
                // One event per failed run: as many as the count rose by.
                int rose = v.memory.observed_failures - memory.observed_failures;
                int run_events = 0;
                for (const SeenRun& run : v.runs) {
                    run_events += run.event ? 1 : 0;
                }
                BOOST_TEST(!v.event);
                BOOST_TEST(run_events == rose);
                events += run_events;
                memory = rng() % 4 == 0 ? *memory_from_annotations(memory_annotations(v.memory))
                                        : v.memory;
            }
        }
        BOOST_TEST(memory.observed_failures == h.failures.back(), "history " << history);
        BOOST_TEST(events == memory.observed_failures);
    }
}

BOOST_AUTO_TEST_CASE(random_histories_never_lower_counts_and_record_each_rise_once) {
    std::mt19937 rng(20250529);
    int failed_histories = 0;
    for (unsigned seed = 1; seed <= 300; ++seed) {
        std::vector<Snapshot> h = JobSim(seed, seed % 3 != 0).history(60);
        failed_histories += h.back().job.conditions.size() == 2;
        for (int round = 0; round < 3; ++round) {
            BOOST_TEST_CONTEXT("seed " << seed << " round " << round) {
                check_sequence(h, sample(rng, h.size(), 1 + rng() % 25), rng);
            }
        }
    }
    BOOST_TEST(failed_histories > 100);  // the histories do reach Failed
}

BOOST_AUTO_TEST_SUITE_END()
