// Given a gate blocking on a Job of an in-memory API, with the Job controller and the
// kubelet played by the test at chosen moments, then the gate reports each failed run
// as the pods showed it, whatever the watches delivered together.
#include <fmt/format.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "runner/base/exit_status.h"
#include "runner/base/real_clock.h"
#include "runner/gating/gate_runner.h"
#include "test/fakes/fake_kube_api.h"
#include "test/fakes/shared_kube_api.h"

using namespace envgate;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// The gate's Job: restartPolicy `policy`, with backoffLimit `limit`.
std::string job_manifest(int limit, const std::string& policy = "OnFailure") {
    return fmt::format(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: migrations
spec:
  backoffLimit: {}
  template:
    spec:
      restartPolicy: {}
      containers:
        - name: migrations
          image: registry.example.com/migrations:1.0
          command: ["db-migrate"]
)",
                       limit, policy);
}

std::uint64_t rv(const json& object) {
    return std::stoull(object["metadata"].value("resourceVersion", "0"));
}

// The newest resourceVersion each watched collection has delivered to its caller.
struct Delivered {
    std::mutex mutex;
    std::condition_variable cv;
    std::map<std::string, std::uint64_t> newest;  // by resource (jobs, pods)

    void saw(const std::string& resource, std::uint64_t version) {
        std::lock_guard lock(mutex);
        newest[resource] = std::max(newest[resource], version);
        cv.notify_all();
    }
    bool wait_for(const std::string& resource, std::uint64_t version) {
        std::unique_lock lock(mutex);
        return cv.wait_for(lock, 30s, [&] { return newest[resource] >= version; });
    }

    // While `held` names a resource, its watches deliver nothing (a slow stream).
    std::string held;
    void hold(const std::string& resource) {
        std::lock_guard lock(mutex);
        held = resource;
    }
    void release() {
        std::lock_guard lock(mutex);
        held.clear();
        cv.notify_all();
    }
    void hold_while_held(const std::string& resource) {
        std::unique_lock lock(mutex);
        cv.wait_for(lock, 30s, [&] { return held != resource; });
    }
};

// The fake as one watch connection sees it: what its watches delivered is told to
// `delivered` (and a held resource delivers nothing until released); cancel_watches()
// ends every stream of the fake (`stopping`, which its idle hook reads).
class WatchConnection : public test::SharedKubeApi {
  public:
    WatchConnection(test::FakeKubeApi& fake, Delivered& delivered, std::atomic<bool>& stopping)
        : SharedKubeApi(fake, &stopping), m_delivered(delivered) {}
    Status watch(const kube::ResourceRef& c, const kube::WatchOptions& o,
                 const kube::WatchCallback& on_event) override {
        return SharedKubeApi::watch(c, o, [&](const kube::WatchEvent& event) {
            m_delivered.hold_while_held(c.resource);
            kube::WatchNext next = on_event(event);
            m_delivered.saw(c.resource, rv(event.object));
            return next;
        });
    }

  private:
    Delivered& m_delivered;
};

// The gate's own connection: creating the Job starts its pod (as the API server's
// defaults, the Job controller and the kubelet would), and each write of the gate's
// memory is answered by `on_memory_write` (the n-th write, from 1).
class GateConnection : public WatchConnection {
  public:
    GateConnection(test::FakeKubeApi& fake, Delivered& delivered, std::atomic<bool>& stopping)
        : WatchConnection(fake, delivered, stopping), m_fake(fake) {}
    std::function<void(const json& job)> on_created;
    // The Job's pod selector names its uid, as the API server's defaults make it (else
    // its name, which a pod made before the Job could carry too).
    bool select_by_uid = false;
    std::function<void(int n, const json& job)> on_memory_write;
    std::function<void(const json& event)> on_event;
    std::function<void()> on_job_read;
    std::function<void()> on_logs;  // after each read of a log

    Result<json> get(const kube::ResourceRef& r) override {
        auto got = WatchConnection::get(r);
        if (r.resource == "jobs" && on_job_read) {
            on_job_read();
        }
        return got;
    }

    Result<std::string> logs(const kube::ResourceRef& p, const kube::LogOptions& o) override {
        auto text = WatchConnection::logs(p, o);
        if (on_logs) {
            on_logs();
        }
        return text;
    }

    Result<json> create(const kube::ResourceRef& r, const json& o) override {
        if (r.resource != "jobs") {
            auto created = WatchConnection::create(r, o);
            if (created.is_ok() && r.resource == "events" && on_event) {
                on_event(*created);
            }
            return created;
        }
        json job = o;
        const std::string name = job["metadata"].value("name", "");
        job["spec"]["selector"]["matchLabels"] = {{"job-name", name}};
        job["spec"]["template"]["metadata"]["labels"]["job-name"] = name;
        auto created = WatchConnection::create(r, job);
        if (created.is_ok() && select_by_uid) {
            json defaulted = *created;
            const json uid = defaulted["metadata"]["uid"];
            defaulted["spec"]["selector"]["matchLabels"] = {
                {"batch.kubernetes.io/controller-uid", uid}};
            defaulted["spec"]["template"]["metadata"]["labels"]
                     ["batch.kubernetes.io/controller-uid"] = uid;
            created = m_fake.seed(kube::jobs(r.namespace_name, name), defaulted);
        }
        if (created.is_ok() && on_created) {
            on_created(*created);
        }
        return created;
    }
    Result<json> patch(const kube::ResourceRef& r, const json& p) override {
        auto patched = WatchConnection::patch(r, p);
        if (patched.is_ok() && r.resource == "jobs" && on_memory_write) {
            on_memory_write(++m_writes, *patched);
        }
        return patched;
    }

  private:
    test::FakeKubeApi& m_fake;
    int m_writes = 0;
};

// The Job's one pod: its container has restarted `restarts` times; `run` is the failed
// run its lastState shows (exit 7), and `waiting` whether it waits in back-off now.
json pod_of(const json& job, int restarts, int run, bool waiting) {
    json last = {{"terminated",
                  {{"exitCode", 7},
                   {"reason", "Error"},
                   {"message", "relation users missing (run " + std::to_string(run) + ")"},
                   {"startedAt", fmt::format("2026-12-01T10:00:{:02}Z", 2 * run)},
                   {"finishedAt", fmt::format("2026-12-01T10:00:{:02}Z", 2 * run + 1)}}}};
    json state = waiting
                     ? json{{"waiting", {{"reason", "CrashLoopBackOff"}}}}
                     : json{{"running",
                             {{"startedAt", fmt::format("2026-12-01T10:00:{:02}Z", 2 * run + 2)}}}};
    const json& meta = job["metadata"];
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", "migrations-a1b2c"},
              {"namespace", meta["namespace"]},
              {"uid", "pod-uid-a1b2c"},
              {"labels",
               {{"job-name", meta["name"]}, {"batch.kubernetes.io/controller-uid", meta["uid"]}}},
              {"ownerReferences",
               {{{"apiVersion", "batch/v1"},
                 {"kind", "Job"},
                 {"name", meta["name"]},
                 {"uid", meta["uid"]},
                 {"controller", true}}}}}},
            {"spec", {{"restartPolicy", "OnFailure"}, {"containers", {{{"name", "migrations"}}}}}},
            {"status",
             {{"phase", "Running"},
              {"containerStatuses",
               {{{"name", "migrations"},
                 {"restartCount", restarts},
                 {"state", state},
                 {"lastState", last}}}}}}};
}

// A clock that stands still: a wait the gate bounds by it ends only when what it waits
// for comes (or a signal), so a test sees whether the gate waited at all. Read from
// every thread, never written; its sleeps only yield.
class StoppedClock : public Clock {
  public:
    TimePoint now() override { return m_at; }
    void sleep_until(TimePoint) override { std::this_thread::sleep_for(1ms); }

  private:
    const TimePoint m_at = *parse_rfc3339("2026-12-01T10:00:00Z");
};

// The gate on the fake, the kubelet and the Job controller played by the hooks of `api`.
struct GateBench {
    test::FakeKubeApi fake;
    std::atomic<bool> stopping{false};
    Delivered delivered;
    std::atomic<bool> gate_stopping{false};  // the gate's own connection watches nothing
    GateConnection api{fake, delivered, gate_stopping};
    std::atomic<int> signal{0};
    const kube::ResourceRef pod_ref = kube::pods("gitlab", "migrations-a1b2c");
    std::ostringstream out;

    // The gate's events recorded so far (when events_told() set the hook).
    std::atomic<int> events{0};

    // Creating the Job stores it running with its pod Ready (status active and ready),
    // and the pod watch delivers the pod's every change (the selector names the Job's
    // uid). Call before run(); created_job() then answers.
    void job_runs_when_created() {
        api.select_by_uid = true;
        api.on_created = [this](const json& job) {
            json running = job;
            running["status"] = {
                {"active", 1}, {"ready", 1}, {"startTime", "2026-12-01T10:00:00Z"}};
            m_created.set_value(fake.seed(kube::jobs("gitlab", job["metadata"]["name"]), running));
        };
    }
    // The Job as stored at its creation (job_runs_when_created); off the test's thread.
    // Nullopt, and the gate signalled to end, when it was not created within 30 s.
    std::optional<json> created_job() {
        auto made = m_created.get_future();
        if (made.wait_for(30s) != std::future_status::ready) {
            signal = 15;
            return std::nullopt;
        }
        return made.get();
    }
    // The created Job (created_job()) once the Job and its pod, `pod_for(job)` as the
    // kubelet writes it, were both delivered by their watches; off the test's thread.
    // Nullopt, and the gate signalled to end, when they were not.
    std::optional<json> job_with_pod(const std::function<json(const json& job)>& pod_for) {
        std::optional<json> job = created_job();
        if (!job) {
            return std::nullopt;
        }
        json pod = fake.seed(pod_ref, pod_for(*job));
        if (!delivered.wait_for("jobs", rv(*job)) || !delivered.wait_for("pods", rv(pod))) {
            signal = 15;
            return std::nullopt;
        }
        return job;
    }
    // Counts the gate's events; the future is ready once there were `n`.
    std::future<void> events_told(int n) {
        api.on_event = [this, n](const json&) {
            if (++events == n) {
                m_told.set_value();
            }
        };
        return m_told.get_future();
    }

    GateBench() {
        fake.set_watch_idle_hook([this] {
            std::this_thread::sleep_for(1ms);
            return !stopping.load();
        });
    }

    // Seeds the pod, and waits until the pod watch delivered it.
    json kubelet(const json& pod) {
        json stored = fake.seed(pod_ref, pod);
        BOOST_REQUIRE(delivered.wait_for("pods", rv(stored)));
        return stored;
    }

    // `stopped`: the gate's clock stands still (StoppedClock) instead of the real one.
    GateResult run(int limit, const std::string& policy = "OnFailure", bool stopped = false) {
        RealClock real;
        StoppedClock still;
        Clock& clock = stopped ? static_cast<Clock&>(still) : real;
        JobLog log(out, clock, LogSettings{false, false, {}});
        GateRunner runner(
            api,
            [&]() -> Result<std::unique_ptr<kube::KubeApi>> {
                return std::unique_ptr<kube::KubeApi>(
                    std::make_unique<WatchConnection>(fake, delivered, stopping));
            },
            clock, log);
        GateRunSettings settings;
        settings.timeout = 10s;  // a bound: each test ends the gate well before
        settings.pending_signal = [&] { return signal.load(); };
        auto rendered = render_job_manifest(
            {job_manifest(limit, policy), "job.yaml", "gprd", "pre-migrations", "gitlab", "1"},
            [](const std::string&) { return std::nullopt; });
        BOOST_REQUIRE(rendered.is_ok());
        return runner.run(settings, *rendered);
    }

    // run() on a clock that stands still, beside `player` (the thread that plays the
    // kubelet and the controller and ends the gate with signal 15), which is joined
    // before this returns: the gate's log.
    std::string run_until_signalled(std::thread& player, int limit, const std::string& policy) {
        GateResult result = run(limit, policy, true);
        player.join();
        BOOST_TEST(result.exit_code == exit_for_signal(15));
        return out.str();
    }

    // The gate's memory writes: its patches of the Job, as sent.
    std::vector<json> memory_writes() const {
        std::vector<json> writes;
        for (const auto& call : fake.calls) {
            if (call.verb == "patch" && call.ref.resource == "jobs") {
                writes.push_back(call.body);
            }
        }
        return writes;
    }

  private:
    std::promise<json> m_created;
    std::promise<void> m_told;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_runner)

// Given an OnFailure Job whose container failed once before the gate first looked,
// when it fails twice more while the gate writes its memory for the first failure (the
// pod watch delivers both changes before the gate looks again, and nothing writes the
// Job meanwhile), then the gate reports failed run 2 and failed run 3 on lines of their
// own, as the pod showed them in turn: the Job read it makes then shows the Job unchanged
// across both, so each pod change is paired with it. It records one event per run.
BOOST_AUTO_TEST_CASE(two_failures_delivered_together_are_reported_one_by_one) {
    GateBench bench;
    bench.api.on_created = [&](const json& job) {
        json running = job;
        running["status"] = {{"active", 1}, {"startTime", "2026-12-01T10:00:00Z"}};
        bench.fake.seed(kube::jobs("gitlab", job["metadata"]["name"]), running);
        bench.fake.seed(bench.pod_ref, pod_of(job, 1, 1, false));  // run 1 failed, run 2 runs
    };
    bench.api.on_memory_write = [&](int n, const json& job) {
        if (n == 1) {
            // The gate's write is in the Job's cache before the pod changes come.
            BOOST_REQUIRE(bench.delivered.wait_for("jobs", rv(job)));
            bench.fake.seed(bench.pod_ref, pod_of(job, 1, 2, true));  // run 2 failed: back-off
            bench.kubelet(pod_of(job, 2, 3, true));                   // run 3 failed too
        } else if (n == 3) {
            bench.signal = 15;  // every run is told: end the gate
        }
    };

    GateResult result = bench.run(6);

    const std::string text = bench.out.str();
    BOOST_TEST_INFO(text);
    BOOST_TEST(result.exit_code == exit_for_signal(15));
    for (const char* line : {"attempt 1 of 6 failed, 5 left: container migrations exited 7",
                             "attempt 2 of 6 failed, 4 left: container migrations exited 7",
                             "attempt 3 of 6 failed, 3 left: container migrations exited 7"}) {
        BOOST_TEST(text.find(line) != std::string::npos, line);
    }
    BOOST_TEST(text.find("relation users missing (run 2)") != std::string::npos);
    int events = 0;
    for (const auto& call : bench.fake.calls) {
        if (call.verb == "create" && call.ref.resource == "events") {
            ++events;
            // None says it was seen together with the next (one event for two runs).
            BOOST_TEST(call.body.dump().find("seen together") == std::string::npos);
        }
    }
    BOOST_TEST(events == 3);
}

// Given the same two failures, when the Job controller also writes the Job (its tallies)
// between them and the Job's watch is slow to deliver that write, then the gate's Job
// read shows a Job newer than its cache: the gate waits for the watch to deliver it and
// then reports each run on its own line, rather than the pair of that read (the newest
// pods) alone.
BOOST_AUTO_TEST_CASE(a_job_newer_than_its_cache_is_waited_for_before_each_change) {
    GateBench bench;
    std::string name;
    bench.api.on_created = [&](const json& job) {
        name = job["metadata"]["name"];
        json running = job;
        running["status"] = {{"active", 1}, {"startTime", "2026-12-01T10:00:00Z"}};
        bench.fake.seed(kube::jobs("gitlab", name), running);
        bench.fake.seed(bench.pod_ref, pod_of(job, 1, 1, false));
    };
    bench.api.on_memory_write = [&](int n, const json& job) {
        if (n == 1) {
            BOOST_REQUIRE(bench.delivered.wait_for("jobs", rv(job)));
            bench.delivered.hold("jobs");
            bench.fake.seed(bench.pod_ref, pod_of(job, 1, 2, true));
            json tallied = *bench.fake.get(kube::jobs("gitlab", name));
            tallied["status"]["ready"] = 0;  // the controller's write, not yet delivered
            bench.fake.seed(kube::jobs("gitlab", name), tallied);
            bench.kubelet(pod_of(job, 2, 3, true));
        } else if (n == 3) {
            bench.signal = 15;
        }
    };
    bench.api.on_job_read = [&] { bench.delivered.release(); };

    GateResult result = bench.run(6);

    const std::string text = bench.out.str();
    BOOST_TEST_INFO(text);
    BOOST_TEST(result.exit_code == exit_for_signal(15));
    for (const char* line : {"attempt 1 of 6 failed, 5 left", "attempt 2 of 6 failed, 4 left",
                             "attempt 3 of 6 failed, 3 left"}) {
        BOOST_TEST(text.find(line) != std::string::npos, line);
    }
}

// Given an OnFailure Job with backoffLimit 2, when its second failed run and the
// restart after it (which reaches the limit) come while the gate writes its memory for
// the first, then the pass that reports the second run, paired with the Job at that
// run, does not write the memory: the newest pods show the limit reached and the Job
// controller has not recorded it yet (a write then would make the controller's
// FailureTarget write conflict). The pass that sees the Job failed writes it.
BOOST_AUTO_TEST_CASE(no_memory_write_once_the_newest_pods_reach_the_restart_limit) {
    GateBench bench;
    json created;
    bench.api.on_created = [&](const json& job) {
        created = job;
        json running = job;
        running["status"] = {{"active", 1}, {"startTime", "2026-12-01T10:00:00Z"}};
        bench.fake.seed(kube::jobs("gitlab", job["metadata"]["name"]), running);
        bench.fake.seed(bench.pod_ref, pod_of(job, 1, 1, false));
    };
    bench.api.on_memory_write = [&](int n, const json& job) {
        if (n == 1) {
            BOOST_REQUIRE(bench.delivered.wait_for("jobs", rv(job)));
            bench.fake.seed(bench.pod_ref, pod_of(job, 1, 2, true));  // run 2 failed
            bench.kubelet(pod_of(job, 2, 2, false));  // restarted: 2 restarts, the limit
        }
    };
    int retries = 0;
    bench.api.on_event = [&](const json& event) {
        if (event.value("reason", "") == "MigrationsRetrying" && ++retries == 2) {
            // The controller records the limit (after this event, before the next pass).
            const std::string name = created["metadata"]["name"];
            json job = *bench.fake.get(kube::jobs("gitlab", name));
            job["status"] = {{"active", 0},
                             {"failed", 1},
                             {"startTime", "2026-12-01T10:00:00Z"},
                             {"conditions",
                              {{{"type", "FailureTarget"},
                                {"status", "True"},
                                {"reason", "BackoffLimitExceeded"},
                                {"message", "Job has reached the specified backoff limit"}},
                               {{"type", "Failed"},
                                {"status", "True"},
                                {"reason", "BackoffLimitExceeded"},
                                {"message", "Job has reached the specified backoff limit"}}}}};
            bench.fake.seed(kube::jobs("gitlab", name), job);
        }
    };

    GateResult result = bench.run(2);

    const std::string text = bench.out.str();
    BOOST_TEST_INFO(text);
    BOOST_TEST(result.exit_code == k_exit_failed);
    BOOST_TEST(text.find("attempt 2 of 2 failed, 0 left") != std::string::npos);
    BOOST_TEST(text.find("failed (MigrationsJobFailed)") != std::string::npos);
    // The first failure's write, then the end's: none in between.
    BOOST_TEST(bench.memory_writes().size() == 2u);
}

// Given a Job the gate created, whose pod selector names its uid, when its container
// fails before the gate's watches start, then both watches start from the Job's
// creation, without a list of either collection: the pod watch delivers that pod, and
// the gate reports the failed run.
BOOST_AUTO_TEST_CASE(a_created_job_is_watched_from_its_creation_without_a_list) {
    GateBench bench;
    bench.api.select_by_uid = true;
    std::string created_at;
    bench.api.on_created = [&](const json& job) {
        created_at = job["metadata"]["resourceVersion"];
        json running = job;
        running["status"] = {{"active", 1}, {"startTime", "2026-12-01T10:00:00Z"}};
        bench.fake.seed(kube::jobs("gitlab", job["metadata"]["name"]), running);
        bench.fake.seed(bench.pod_ref, pod_of(job, 0, 1, true));  // run 1 failed: back-off
    };
    bench.api.on_event = [&](const json&) { bench.signal = 15; };

    GateResult result = bench.run(6);

    const std::string text = bench.out.str();
    BOOST_TEST_INFO(text);
    BOOST_TEST(result.exit_code == exit_for_signal(15));
    BOOST_TEST(text.find("attempt 1 of 6 failed, 5 left: container migrations exited 7") !=
               std::string::npos);
    int watches = 0;
    for (const auto& call : bench.fake.calls) {
        BOOST_TEST(call.verb != "list", call.verb << " " << call.ref.describe());
        if (call.verb == "watch" && watches++ < 2) {
            BOOST_TEST(call.resource_version == created_at, call.ref.describe());
        }
    }
    BOOST_TEST(watches >= 2);
}

// Given a Job the gate created whose one pod runs without a failure, when the Job is
// deleted and its pod is killed and deleted after it (the garbage collector: exit 143),
// then the gate fails with JobDeleted and no last failure: the pod's kill came after the
// Job was gone, and the passes that take the caches back to revisions before its
// deletion do not pair the pod's last state with a Job that was still there.
BOOST_AUTO_TEST_CASE(a_pod_killed_after_its_job_was_deleted_is_no_failure_of_the_job) {
    GateBench bench;
    bench.api.select_by_uid = true;
    std::thread collector;
    bool collected = false;  // set by `collector`, read once it is joined
    bench.api.on_created = [&](const json& job) {
        const std::string name = job["metadata"]["name"];
        json running = job;
        running["status"] = {{"active", 1}, {"startTime", "2026-12-01T10:00:00Z"}};
        bench.fake.seed(kube::jobs("gitlab", name), running);
        json pod = pod_of(job, 0, 0, false);
        pod["status"]["containerStatuses"][0].erase("lastState");
        json seeded = bench.fake.seed(bench.pod_ref, pod);
        collector = std::thread([&bench, &collected, name, seeded] {
            // No assertion here (Boost.Test's are for the test's thread): `collected`.
            if (!bench.delivered.wait_for("pods", rv(seeded)) ||
                !bench.fake.remove(kube::jobs("gitlab", name), {}).is_ok()) {
                return;
            }
            json killed = seeded;
            killed["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:09Z";
            killed["status"]["phase"] = "Failed";
            killed["status"]["containerStatuses"][0]["state"] = {
                {"terminated",
                 {{"exitCode", 143},
                  {"reason", "Error"},
                  {"startedAt", "2026-12-01T10:00:02Z"},
                  {"finishedAt", "2026-12-01T10:00:10Z"}}}};
            bench.fake.seed(bench.pod_ref, killed);
            collected = bench.fake.remove(bench.pod_ref, {}).is_ok();
        });
    };

    GateResult result = bench.run(6);
    if (collector.joinable()) {
        collector.join();
    }
    BOOST_TEST(collected);

    const std::string text = bench.out.str();
    BOOST_TEST_INFO(text);
    BOOST_TEST(result.exit_code == k_exit_failed);
    BOOST_TEST(text.find("failed (JobDeleted)") != std::string::npos);
    BOOST_TEST(text.find("Last failure: none observed") != std::string::npos);
    BOOST_TEST(text.find("143") == std::string::npos);
}

// Given a Job manifest the API refuses as invalid (422 Unprocessable Entity), the gate
// ends with exit 2 (a configuration error, as `run`'s preflight says), not 4.
BOOST_AUTO_TEST_CASE(a_job_the_api_refuses_as_invalid_is_a_usage_error) {
    GateBench bench;
    bench.fake.fail_next(Code::invalid, "create");
    GateResult result = bench.run(6);
    BOOST_TEST_INFO(bench.out.str());
    BOOST_TEST(result.exit_code == k_exit_usage);
}

// A restartPolicy Never pod of `job`: running (Ready), or failed with exit 1. The Job
// controller's tracking finalizer is on it until `counted`.
json never_pod(const json& job, bool failed, bool counted = false) {
    const json& meta = job["metadata"];
    json state = failed ? json{{"terminated",
                                {{"exitCode", 1},
                                 {"reason", "Error"},
                                 {"message", "relation users missing"},
                                 {"startedAt", "2026-12-01T10:00:01Z"},
                                 {"finishedAt", "2026-12-01T10:00:02Z"}}}}
                        : json{{"running", {{"startedAt", "2026-12-01T10:00:01Z"}}}};
    json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", "migrations-a1b2c"},
          {"namespace", meta["namespace"]},
          {"uid", "pod-uid-a1b2c"},
          {"labels",
           {{"job-name", meta["name"]}, {"batch.kubernetes.io/controller-uid", meta["uid"]}}},
          {"ownerReferences",
           {{{"apiVersion", "batch/v1"},
             {"kind", "Job"},
             {"name", meta["name"]},
             {"uid", meta["uid"]},
             {"controller", true}}}}}},
        {"spec", {{"restartPolicy", "Never"}, {"containers", {{{"name", "migrations"}}}}}},
        {"status",
         {{"phase", failed ? "Failed" : "Running"},
          {"conditions", {{{"type", "Ready"}, {"status", failed ? "False" : "True"}}}},
          {"containerStatuses",
           {{{"name", "migrations"}, {"restartCount", 0}, {"state", state}}}}}}};
    if (!counted) {
        pod["metadata"]["finalizers"] = {"batch.kubernetes.io/job-tracking"};
    }
    return pod;
}

// Given a restartPolicy Never Job whose pod fails while the Job controller has not yet
// written the Job (it batches a Job's pod events for 1 s), and a gate clock that stands
// still (a wait for that write would never end), then the gate reports the failed run at
// once from the pod's own status (phase Failed), with one line and one event; when the
// controller then counts the pod (status.uncountedTerminatedPods, the finalizer's
// removal, status.failed), the gate's count agrees and it says nothing more.
BOOST_AUTO_TEST_CASE(a_never_pods_failure_is_reported_from_the_pod_before_the_job_write) {
    GateBench bench;
    bench.job_runs_when_created();
    std::future<void> reported = bench.events_told(1);
    // Set by the thread that plays the kubelet and the controller (Boost.Test checks
    // stay on the test's thread).
    bool played = false;
    bool before_the_job_write = false;
    std::thread kubelet_and_controller([&] {
        // The pod runs, then fails, after the Job's cache holds the Job as created.
        std::optional<json> made =
            bench.job_with_pod([](const json& job) { return never_pod(job, false); });
        if (!made) {
            return;
        }
        json job = *made;
        const kube::ResourceRef job_ref = kube::jobs("gitlab", job["metadata"]["name"]);
        bench.fake.seed(bench.pod_ref, never_pod(job, true));
        before_the_job_write = reported.wait_for(30s) == std::future_status::ready;
        // The controller's three writes, as it counts a failed pod.
        job["status"]["active"] = 0;
        job["status"]["ready"] = 0;
        job["status"]["uncountedTerminatedPods"] = {{"failed", {"pod-uid-a1b2c"}}};
        bench.fake.seed(job_ref, job);
        bench.fake.seed(bench.pod_ref, never_pod(job, true, true));
        job["status"].erase("uncountedTerminatedPods");
        job["status"]["failed"] = 1;
        json counted = bench.fake.seed(job_ref, job);
        played = bench.delivered.wait_for("jobs", rv(counted));
        bench.signal = 15;
    });

    const std::string text = bench.run_until_signalled(kubelet_and_controller, 2, "Never");
    BOOST_TEST_INFO(text);
    BOOST_TEST(played);
    BOOST_TEST(before_the_job_write);
    BOOST_TEST(text.find("pod 1 of 3 failed, 2 left") != std::string::npos);
    std::size_t lines = 0;
    for (std::size_t at = text.find("retrying ("); at != std::string::npos;
         at = text.find("retrying (", at + 1)) {
        ++lines;
    }
    BOOST_TEST(lines == 1u);
    BOOST_TEST(bench.events.load() == 1);
}

// An OnFailure Job's pod as the kubelet shows it while its container's run `run` (from
// 1) runs, or has just failed (`ended`: exit 7, not yet restarted); the run before it,
// if any, is its lastState. Ready only while it runs and `ready` (a readiness probe has
// passed).
json onfailure_pod(const json& job, int run, bool ended, bool ready) {
    json pod = pod_of(job, run - 1, run - 1, false);
    json& c = pod["status"]["containerStatuses"][0];
    if (run == 1) {
        c.erase("lastState");
    }
    if (ended) {
        c["state"] = {{"terminated",
                       {{"exitCode", 7},
                        {"reason", "Error"},
                        {"message", "relation users missing (run " + std::to_string(run) + ")"},
                        {"startedAt", fmt::format("2026-12-01T10:00:{:02}Z", 2 * run)},
                        {"finishedAt", fmt::format("2026-12-01T10:00:{:02}Z", 2 * run + 1)}}}};
    }
    const bool is_ready = ready && !ended;
    pod["status"]["conditions"] = {{{"type", "Ready"}, {"status", is_ready ? "True" : "False"}}};
    return pod;
}

// Given an OnFailure Job whose container's run 1 fails while the Job controller owes
// the Job its write (status.ready counts the pod, which is no longer Ready), and a gate
// clock that stands still (the pass that counts the run waits for that write), then the
// gate reads run 1's log as soon as it sees the run end and its container restarted
// (--previous): when run 2 has failed too and run 3 runs before the write comes (its log
// and --previous show runs 3 and 2 by then), the kept tail is still run 1's. (Found on
// the real control plane under load: run 1's log was "replaced" before the pass that
// counted it read it.)
BOOST_AUTO_TEST_CASE(a_failed_runs_log_is_read_when_the_gate_sees_it_end) {
    GateBench bench;
    bench.job_runs_when_created();
    std::future<void> reported = bench.events_told(2);
    std::atomic<bool> read_at_once{false};
    bench.api.on_logs = [&] { read_at_once = true; };
    bool played = false;
    bool read_before_the_write = false;
    std::thread kubelet_and_controller([&] {
        auto logs = [&](int current) {
            for (int run : {current, current - 1}) {
                if (run > 0) {
                    bench.fake.set_logs(bench.pod_ref, "migrations", run != current,
                                        fmt::format("run {}: relation users missing\n", run));
                }
            }
        };
        logs(1);
        std::optional<json> made =
            bench.job_with_pod([](const json& job) { return onfailure_pod(job, 1, false, true); });
        if (!made) {
            return;
        }
        json job = *made;
        const kube::ResourceRef job_ref = kube::jobs("gitlab", job["metadata"]["name"]);
        // Seeds a pod as the kubelet writes it, and waits until the pod watch delivered
        // it (bench.kubelet, off the test's thread).
        auto kubelet = [&](const json& pod) {
            return bench.delivered.wait_for("pods", rv(bench.fake.seed(bench.pod_ref, pod)));
        };
        kubelet(onfailure_pod(job, 1, true, false));  // run 1 failed: the Job owes a write
        logs(2);
        kubelet(onfailure_pod(job, 2, false, false));  // restarted, not Ready yet
        for (int i = 0; i < 3000 && !read_at_once; ++i) {
            std::this_thread::sleep_for(1ms);
        }
        read_before_the_write = read_at_once;
        // Run 2 fails too and the kubelet runs run 3, before the controller's write.
        kubelet(onfailure_pod(job, 2, true, false));
        logs(3);
        kubelet(onfailure_pod(job, 3, false, false));
        job["status"]["ready"] = 0;
        json written = bench.fake.seed(job_ref, job);
        played = bench.delivered.wait_for("jobs", rv(written)) &&
                 reported.wait_for(30s) == std::future_status::ready;
        bench.signal = 15;
    });

    const std::string text = bench.run_until_signalled(kubelet_and_controller, 6, "OnFailure");
    BOOST_TEST_INFO(text);
    BOOST_TEST(played);
    // Read as the pod watch showed the restart, before the Job's write: run 1's log.
    BOOST_TEST(read_before_the_write);
    BOOST_TEST(text.find("attempt 1 of 6 failed, 5 left") != std::string::npos);
    BOOST_TEST(text.find("\n    run 1: relation users missing\n") != std::string::npos);
    BOOST_TEST(text.find("\n    run 2: relation users missing\n") != std::string::npos);
}

// Given a restartPolicy Never Job whose pod fails after the Job controller already wrote
// the Job (the GET beside the cached pods shows a Job newer than them, and its watch is
// slow to deliver that write), then the gate waits for the watch; when another pod
// change (the tracking finalizer's removal) wakes it first, it waits on rather than
// reading the Job again: the read would show the same write. It reports the failure
// once the watch delivers the Job.
BOOST_AUTO_TEST_CASE(a_job_written_since_is_awaited_not_read_again) {
    GateBench bench;
    bench.job_runs_when_created();
    std::future<void> reported = bench.events_told(1);
    std::atomic<bool> counting{false};
    std::atomic<int> job_reads{0};
    bench.api.on_job_read = [&] {
        if (counting) {
            ++job_reads;
        }
    };
    bool played = false;
    int reads_while_held = -1;
    std::thread kubelet_and_controller([&] {
        std::optional<json> made =
            bench.job_with_pod([](const json& job) { return never_pod(job, false); });
        if (!made) {
            return;
        }
        json job = *made;
        const kube::ResourceRef job_ref = kube::jobs("gitlab", job["metadata"]["name"]);
        // The pod fails, and the controller records it on the Job, before either watch
        // delivers: the Job's watch then holds its write back.
        bench.delivered.hold("pods");
        counting = true;
        bench.fake.seed(bench.pod_ref, never_pod(job, true));
        job["status"]["active"] = 0;
        job["status"]["ready"] = 0;
        job["status"]["uncountedTerminatedPods"] = {{"failed", {"pod-uid-a1b2c"}}};
        json uncounted = bench.fake.seed(job_ref, job);
        bench.delivered.hold("jobs");  // releases the pods
        for (int i = 0; i < 3000 && job_reads < 2; ++i) {
            std::this_thread::sleep_for(1ms);  // the GET, then the snapshot's list and GET
        }
        json finalized = bench.fake.seed(bench.pod_ref, never_pod(job, true, true));
        bench.delivered.wait_for("pods", rv(finalized));
        std::this_thread::sleep_for(200ms);  // time for a read the wake-up would make
        reads_while_held = job_reads;
        bench.delivered.release();
        bench.delivered.wait_for("jobs", rv(uncounted));
        const bool told = reported.wait_for(30s) == std::future_status::ready;
        job["status"].erase("uncountedTerminatedPods");
        job["status"]["failed"] = 1;
        played = told && bench.delivered.wait_for("jobs", rv(bench.fake.seed(job_ref, job)));
        bench.signal = 15;
    });

    const std::string text = bench.run_until_signalled(kubelet_and_controller, 2, "Never");
    BOOST_TEST_INFO(text);
    BOOST_TEST(played);
    // The GET, then the snapshot's list and GET; none on the wake-up before the Job's.
    BOOST_TEST(reads_while_held == 2);
    BOOST_TEST(text.find("pod 1 of 3 failed, 2 left") != std::string::npos);
    BOOST_TEST(bench.events.load() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
