// envgate_lock_holder: a process that takes a file-store lock and keeps renewing it
// every lease/3 (as `envgate run` will) until it is killed. The kill -9 test uses
// it as the holder that vanishes.
// Usage: envgate_lock_holder DIR LOCK HOLDER LEASE_SECONDS
#include <iostream>
#include <string>
#include <thread>

#include "locks/file_store.h"
#include "locks/heartbeat.h"
#include "locks/lock_manager.h"

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
    if (argc != 5) {
        std::cerr << "usage: envgate_lock_holder DIR LOCK HOLDER LEASE_SECONDS\n";
        return 2;
    }
    FileStore store(argv[1]);
    SystemClock clock;
    LockManager manager(store, clock, std::cerr, [] { return 0; });
    LockSpec spec;
    spec.name = argv[2];
    spec.lease_duration = std::chrono::seconds(std::stoi(argv[4]));
    spec.step = "deploy";
    Holder me;
    me.id = argv[3];
    auto got = manager.acquire(spec, me);
    if (!got.is_ok() || got->end != AcquireEnd::acquired) {
        std::cerr << "envgate_lock_holder: lock not obtained\n";
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
    std::cerr << "envgate_lock_holder: lost the lock\n";
    return 1;
}
