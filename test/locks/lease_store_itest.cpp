// The LockStore conformance suite over HTTP against a real kubesim: each factory starts
// its own kubesim, and every store object it makes has its own HttpKubeApi (as separate
// processes would). Same test bodies as store_conformance_test.cpp, compiled here with
// this factory list. Contention and kill -9 are in lease_contention.py.
#define BOOST_TEST_MODULE lease_store_itest
#include <boost/test/unit_test.hpp>
#include <thread>

#include "locks/kubernetes_lease_store.h"
#include "runner/kube/http_kube_api.h"
#include "runner/kube/kubeconfig.h"
#include "test/kubesim/sim_process.h"
#include "test/locks/store_factories.h"

namespace envgate::test {

class SystemClock : public Clock {
  public:
    TimePoint now() override {
        return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
    }
    void sleep_until(TimePoint deadline) override { std::this_thread::sleep_until(deadline); }
};

struct KubesimLeaseFactory {
    static constexpr const char* k_name = "lease-kubesim";
    kubesim::testing::SimProcess sim{{}};
    SystemClock clock;
    std::shared_ptr<locks::LockStore> make() {
        kube::KubeconfigSources sources;
        sources.explicit_path = sim.kubeconfig();
        auto config = kube::load_rest_config(sources);
        BOOST_REQUIRE(config.is_ok());
        auto api = kube::HttpKubeApi::create(*config, clock);
        BOOST_REQUIRE(api.is_ok());
        std::shared_ptr<kube::KubeApi> shared = std::move(api.value());
        return std::make_shared<locks::KubernetesLeaseStore>(shared, "envgate-locks");
    }
};

using KubesimLeaseFactories = boost::mpl::list<KubesimLeaseFactory>;

}  // namespace envgate::test

#define StoreFactories KubesimLeaseFactories
#define lock_store_conformance_suite lease_store_kubesim_suite

#include "test/locks/store_conformance_test.cpp"

#undef lock_store_conformance_suite
#undef StoreFactories
