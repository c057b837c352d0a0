// A LockStore factory for the conformance suite: KubernetesLeaseStore objects over one
// shared FakeKubeApi (one cluster, many processes). The integration test has the same
// over a real kubesim (lease_store_itest.cpp).
#pragma once

#include <memory>

#include "locks/kubernetes_lease_store.h"
#include "test/fakes/fake_kube_api.h"

namespace envgate::test {

inline constexpr const char* k_lease_namespace = "envgate-locks";

struct LeaseStoreFactory {
    static constexpr const char* k_name = "lease";
    std::shared_ptr<FakeKubeApi> api = std::make_shared<FakeKubeApi>();
    std::shared_ptr<locks::LockStore> make() {
        return std::make_shared<locks::KubernetesLeaseStore>(api, k_lease_namespace);
    }
};

}  // namespace envgate::test
