// A recording fake of the Env (leveldb's SpecialEnv, ninja's fakes): a FakeClock, a
// signal the test raises, one in-memory Kubernetes API (FakeKubeApi) behind every
// connection, lock stores (the file store in the test's folder, or Leases on the fake
// API), a FakeProcessRunner, and the GitLab client the test chooses. It records what
// was asked of it (`calls`) and fails on demand (`fail_next_connect`), so a command
// runs in-process, without a cluster, a process or a network.
//
// The fake API refuses the extra connections a gate opens for its watches: the gate then
// polls, in the test's thread. Its waits between passes compare the fake clock's now()
// with their end in real-time slices, and nothing moves the fake clock meanwhile, so
// `on_job_created` (the Job controller) should end each Job at once, a failed one with its
// pods, for the gate to decide on its first pass (the watch path and waiting gates have
// their own tests, in test/gate/).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "locks/file_store.h"
#include "locks/kubernetes_lease_store.h"
#include "runner/connect/env.h"
#include "runner/connect/kube_session.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_api.h"
#include "test/fakes/fake_process_runner.h"
#include "test/fakes/shared_kube_api.h"

namespace envgate::test {

class FakeEnv : public Env {
  public:
    explicit FakeEnv(TimePoint start = TimePoint{}) : fake_clock(start), kube(&fake_clock) {}

    Clock& clock() override { return fake_clock; }
    int pending_signal() override { return signal.load(); }
    bool real_time() const override { return false; }

    Result<KubeSession> connect_kube(const KubeTarget& target, const GetenvFn& getenv,
                                     JobLog& log) override {
        calls.push_back("connect_kube " + target.context.value_or("(current context)"));
        if (!m_connect_failures.empty()) {
            Status failure = m_connect_failures.front();
            m_connect_failures.pop_front();
            return failure;
        }
        if (real_kube) {
            return open_kube_session(
                target, getenv, fake_clock, [this] { return signal.load(); }, log);
        }
        KubeSession session;
        session.config.context_name = target.context.value_or("fake");
        session.config.server = "https://fake-cluster.invalid";
        session.api = std::make_unique<Connection>(*this);
        session.connect = []() -> Result<std::unique_ptr<kube::KubeApi>> {
            return Status(Code::unauthorized, "watch connections: the fake takes none");
        };
        return session;
    }

    Result<std::unique_ptr<locks::LockStore>> open_lock_store(const LockStoreTarget& target,
                                                              const GetenvFn& getenv,
                                                              JobLog& log) override {
        if (target.kind == LockStoreKind::file) {
            calls.push_back("open_lock_store file " + target.path);
            return std::unique_ptr<locks::LockStore>(
                std::make_unique<locks::FileStore>(target.path));
        }
        calls.push_back("open_lock_store kubernetes " + target.namespace_);
        TRY_ASSIGN(KubeSession session, connect_kube(target.kube, getenv, log));
        std::shared_ptr<kube::KubeApi> api = std::move(session.api);
        return std::unique_ptr<locks::LockStore>(
            std::make_unique<locks::KubernetesLeaseStore>(api, target.namespace_));
    }

    ProcessRunner& processes() override { return steps; }

    Result<std::unique_ptr<GroupMembers>> gitlab(const GitLabSettings& settings) override {
        calls.push_back("gitlab " + settings.server_url);
        if (!gitlab_factory) {
            return Status(Code::invalid, "the fake env has no GitLab");
        }
        return gitlab_factory(settings);
    }

    // The next connect_kube fails with `status` (queued in order).
    void fail_next_connect(Status status) { m_connect_failures.push_back(std::move(status)); }

    FakeClock fake_clock;
    FakeKubeApi kube;
    FakeProcessRunner steps;
    std::atomic<int> signal{0};
    // Connections go to the real client instead of `kube` (the kubeconfig read as kubectl
    // would, HTTPS, retries on the fake clock): for tests of kubeconfig contexts and of
    // servers that cannot be reached.
    bool real_kube = false;
    // Called with each Job created through a connection, as stored (plays the Job
    // controller: the test may mutate() it to Complete or Failed).
    std::function<void(const nlohmann::json& job)> on_job_created;
    // The server-side dry run of the preflight; unset: every object is admitted.
    std::function<Status(const nlohmann::json& object)> dry_run;
    // Makes the GitLab client; unset: gitlab() fails with `invalid`.
    std::function<Result<std::unique_ptr<GroupMembers>>(const GitLabSettings&)> gitlab_factory;
    std::vector<std::string> calls;  // "connect_kube CONTEXT", "open_lock_store file PATH", ...

  private:
    // One connection to the fake API; creating a Job calls on_job_created.
    class Connection : public SharedKubeApi {
      public:
        explicit Connection(FakeEnv& env) : SharedKubeApi(env.kube), m_env(env) {}
        Result<nlohmann::json> create(const kube::ResourceRef& r,
                                      const nlohmann::json& o) override {
            if (r.resource == "selfsubjectaccessreviews") {  // answered, never stored
                nlohmann::json review = o;
                review["status"] = {{"allowed", true}};
                return review;
            }
            nlohmann::json object = o;
            if (r.resource == "jobs") {  // the API server's defaults: a selector of its pods
                const std::string name = object["metadata"].value("name", "");
                object["spec"]["selector"]["matchLabels"] = {{"job-name", name}};
                object["spec"]["template"]["metadata"]["labels"]["job-name"] = name;
            }
            auto made = SharedKubeApi::create(r, object);
            if (made && r.resource == "jobs" && m_env.on_job_created) {
                m_env.on_job_created(*made);
            }
            return made;
        }
        Status create_dry_run(const kube::ResourceRef&, const nlohmann::json& o) override {
            return m_env.dry_run ? m_env.dry_run(o) : Status::ok();
        }

      private:
        FakeEnv& m_env;
    };

    std::deque<Status> m_connect_failures;
};

}  // namespace envgate::test
