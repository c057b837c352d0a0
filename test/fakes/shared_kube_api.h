// One FakeKubeApi behind several connections (ChangeWatch opens one per watch): each
// SharedKubeApi forwards every call to the fake; cancel_watches() makes its later
// watches fail with Code::cancelled and sets `stopping` (its own flag, or one the test
// shares between connections and reads in the fake's watch idle hook to end streams).
#pragma once

#include <atomic>
#include <string>

#include "test/fakes/fake_kube_api.h"

namespace envgate::test {

class SharedKubeApi : public kube::KubeApi {
  public:
    explicit SharedKubeApi(FakeKubeApi& fake, std::atomic<bool>* stopping = nullptr)
        : m_fake(fake), m_stopping(stopping != nullptr ? *stopping : m_own) {}
    Result<nlohmann::json> get(const kube::ResourceRef& r) override { return m_fake.get(r); }
    Result<kube::ObjectList> list(const kube::ResourceRef& c, const kube::ListOptions& o) override {
        return m_fake.list(c, o);
    }
    Result<nlohmann::json> create(const kube::ResourceRef& r, const nlohmann::json& o) override {
        return m_fake.create(r, o);
    }
    Result<nlohmann::json> update(const kube::ResourceRef& r, const nlohmann::json& o) override {
        return m_fake.update(r, o);
    }
    Result<nlohmann::json> patch(const kube::ResourceRef& r, const nlohmann::json& p) override {
        return m_fake.patch(r, p);
    }
    Status remove(const kube::ResourceRef& r, kube::Propagation p,
                  const kube::Preconditions& pre = {}) override {
        return m_fake.remove(r, p, pre);
    }
    Status watch(const kube::ResourceRef& c, const kube::WatchOptions& o,
                 const kube::WatchCallback& on_event) override {
        if (m_stopping) {
            return {Code::cancelled, "watch: cancelled"};
        }
        return m_fake.watch(c, o, on_event);
    }
    void cancel_watches() override { m_stopping = true; }
    Result<std::string> logs(const kube::ResourceRef& p, const kube::LogOptions& o) override {
        return m_fake.logs(p, o);
    }

  private:
    FakeKubeApi& m_fake;
    std::atomic<bool> m_own{false};
    std::atomic<bool>& m_stopping;
};

}  // namespace envgate::test
