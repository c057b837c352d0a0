// Given a lock taken with a 60 s lease, then the holder can prove it holds the lock
// until 40 s (2/3 of the lease, client-go's renewDeadline rule) after its last
// successful renewal, never after; a renewal that the store refused ends it for good.
#include <boost/test/unit_test.hpp>

#include "runner/run/fence.h"
#include "test/fakes/fake_clock.h"

using namespace envgate;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(fence_suite)

BOOST_AUTO_TEST_CASE(holds_until_the_renew_deadline_after_the_last_proof) {
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:00:00Z"));
    LockFence fence(clock, 60s, 7, clock.now());
    BOOST_TEST(fence.token() == 7);
    BOOST_TEST((fence.renew_deadline() == 40s));
    clock.advance(39s);
    BOOST_TEST(!fence.doubt().has_value());
    clock.advance(1s);
    BOOST_REQUIRE(fence.doubt().has_value());
    BOOST_TEST(fence.doubt()->find("no renewal of the lock succeeded for 40s") != std::string::npos,
               *fence.doubt());
    // A renewal sent 5 s ago proves it again, from when it was sent.
    fence.proven(clock.now() - 5s);
    BOOST_TEST(!fence.doubt().has_value());
    clock.advance(35s);
    BOOST_TEST(fence.doubt().has_value());
    // An older proof never moves the last one back.
    fence.proven(clock.now());
    fence.proven(clock.now() - 50s);
    BOOST_TEST(!fence.doubt().has_value());
}

BOOST_AUTO_TEST_CASE(a_refused_renewal_ends_holding_for_good) {
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:00:00Z"));
    LockFence fence(clock, 60s, 1, clock.now());
    fence.lost("held by grp/app#8 since 00:01");
    fence.proven(clock.now());
    BOOST_REQUIRE(fence.doubt().has_value());
    BOOST_TEST(*fence.doubt() ==
               "the lock is no longer held by this run: held by grp/app#8 since 00:01");
}

BOOST_AUTO_TEST_SUITE_END()
