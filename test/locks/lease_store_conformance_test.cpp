// The shared LockStore conformance suite (store_conformance_test.cpp) instantiated once
// more, for the Kubernetes Lease store over FakeKubeApi: the same test bodies, compiled
// here with the factory list and the suite name replaced, so the suite file stays the
// single source of the rules. Run: --run_test=lease_store_conformance_suite.
#include "test/locks/lease_store_factory.h"
#include "test/locks/store_factories.h"

namespace envgate::test {
using LeaseStoreFactories = boost::mpl::list<LeaseStoreFactory>;
}  // namespace envgate::test

#define StoreFactories LeaseStoreFactories
#define lock_store_conformance_suite lease_store_conformance_suite

#include "test/locks/store_conformance_test.cpp"

#undef lock_store_conformance_suite
#undef StoreFactories
