// Given a pass evaluated from the watch caches alone, then it stands only when it
// concludes what the last pass did: the same counts, the same state, the same memory,
// no event and no end; otherwise the gate reads a fresh snapshot.
#include <boost/test/unit_test.hpp>

#include "runner/gate/gate_pass.h"

using namespace envgate;

namespace {

gates::Verdict verdict(gates::State state, int failed_pods) {
    gates::Verdict v;
    v.state = state;
    v.counts.failed_pods = failed_pods;
    v.counts.failed_pod_limit = 5;
    v.counts.attempt = failed_pods;
    v.counts.limit = 5;
    v.counts.left = 5 - failed_pods;
    v.counts.nearer = gates::FailureKind::pod;
    v.memory.job_uid = "uid-1";
    return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_pass_suite)

BOOST_AUTO_TEST_CASE(a_cached_pass_that_concludes_what_the_last_did_stands) {
    gates::Verdict v = verdict(gates::State::retrying, 1);
    BOOST_TEST(cached_pass_stands(v, true, v.memory, LastPass{v.counts, gates::State::retrying}));
}

// Found on the real control plane (1 run in 15): between two retries the pod cache had
// the failed pod without its tracking finalizer while the Job cache did not count it
// yet; the cached pass said "running", and the next pass reported the retry again.
BOOST_AUTO_TEST_CASE(a_cached_pass_with_a_state_of_its_own_does_not_stand) {
    gates::Verdict v = verdict(gates::State::running, 1);
    BOOST_TEST(!cached_pass_stands(v, true, v.memory, LastPass{v.counts, gates::State::retrying}));
}

BOOST_AUTO_TEST_CASE(a_first_cached_pass_stands_only_running_with_nothing_failed) {
    gates::Verdict running = verdict(gates::State::running, 0);
    BOOST_TEST(cached_pass_stands(running, true, running.memory, std::nullopt));
    gates::Verdict suspended = verdict(gates::State::suspended, 0);
    BOOST_TEST(!cached_pass_stands(suspended, true, suspended.memory, std::nullopt));
    gates::Verdict retrying = verdict(gates::State::retrying, 1);
    BOOST_TEST(!cached_pass_stands(retrying, true, retrying.memory, std::nullopt));
}

BOOST_AUTO_TEST_CASE(a_cached_pass_that_changes_counts_or_ends_does_not_stand) {
    gates::Verdict v = verdict(gates::State::retrying, 2);
    BOOST_TEST(!cached_pass_stands(
        v, true, v.memory,
        LastPass{verdict(gates::State::retrying, 1).counts, gates::State::retrying}));
    gates::Verdict failed = verdict(gates::State::failed, 1);
    BOOST_TEST(!cached_pass_stands(failed, true, failed.memory,
                                   LastPass{failed.counts, gates::State::failed}));
    BOOST_TEST(!cached_pass_stands(v, false, v.memory, LastPass{v.counts, v.state}));
}

BOOST_AUTO_TEST_SUITE_END()
