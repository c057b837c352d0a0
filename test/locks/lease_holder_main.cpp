// envgate_lease_holder: takes a lock in the Kubernetes Lease store and renews it every
// lease/3 (as `envgate run` does) until it is killed: the holder that vanishes in the
// Lease store's kill -9 test (lease_contention.py --kill).
// Usage: envgate_lease_holder KUBECONFIG NAMESPACE LOCK HOLDER LEASE_SECONDS
#include <iostream>
#include <string>
#include <thread>

#include "locks/heartbeat.h"
#include "locks/kubernetes_lease_store.h"
#include "locks/lock_manager.h"
#include "runner/kube/http_kube_api.h"
#include "runner/kube/kubeconfig.h"

using namespace envgate;
using namespace envgate::locks;

namespace {

class SystemClock : public Clock {
  public:
    TimePoint now() override {
        return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
    }
    void sleep_until(TimePoint deadline) override { std::this_thread::sleep_until(deadline); }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::cerr << "usage: envgate_lease_holder KUBECONFIG NAMESPACE LOCK HOLDER LEASE_SECONDS\n";
        return 2;
    }
    SystemClock clock;
    kube::KubeconfigSources sources;
    sources.explicit_path = argv[1];
    auto config = kube::load_rest_config(sources);
    auto api = config.is_ok() ? kube::HttpKubeApi::create(*config, clock)
                              : Result<std::unique_ptr<kube::HttpKubeApi>>(config.status());
    if (!api.is_ok()) {
        std::cerr << "envgate_lease_holder: " << api.status().message() << "\n";
        return 4;
    }
    KubernetesLeaseStore store(std::move(api.value()), argv[2]);
    LockManager manager(store, clock, std::cerr, [] { return 0; });
    LockSpec spec;
    spec.name = argv[3];
    spec.lease_duration = std::chrono::seconds(std::stoi(argv[5]));
    spec.step = "deploy";
    Holder me;
    me.id = argv[4];
    auto got = manager.acquire(spec, me);
    if (!got.is_ok() || got->end != AcquireEnd::acquired) {
        std::cerr << "envgate_lease_holder: lock not obtained\n";
        return 3;
    }
    Heartbeat heartbeat(spec.lease_duration / 3, [&] {
        auto renewed = manager.renew(spec, me);
        return renewed.is_ok() && renewed->outcome == Outcome::renewed;
    });
    std::cout << "held" << std::endl;
    while (!heartbeat.lost()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::cerr << "envgate_lease_holder: lost the lock\n";
    return 1;
}
