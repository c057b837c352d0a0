// Given a lock unlocked by a person, then the runs after it name their gates' Jobs
// after that unlock (new Jobs, not the failed ones before it), while runs under the
// same unlock, or with none, keep the Job names of the spec (a retry re-attaches).
#include <boost/test/unit_test.hpp>

#include "runner/run/reruns.h"

using namespace envgate;

namespace {

RenderedJob rendered() {
    ManifestInput in{
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\nspec:\n"
        "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        "        - {name: m, image: registry.example.com/m:1}\n",
        "job.yaml",
        "gprd",
        "pre-migrations",
        "gitlab",
        "1234"};
    auto job = render_job_manifest(in, [](const std::string&) { return std::nullopt; });
    BOOST_REQUIRE(job.is_ok());
    return *job;
}

locks::LockRecord unlocked_twice() {
    locks::LockRecord r;
    TimePoint t = *parse_rfc3339("2026-01-01T03:00:00Z");
    r.record("acquire", "ops/deploy#1", t, "");
    r.record("fail", "ops/deploy#1", t, "post-migrations failed");
    r.record("unlock", "alice", t, "fixed by hand");
    r.record("acquire", "ops/deploy#2", t, "");
    r.record("fail", "ops/deploy#2", t, "post-migrations failed");
    r.record("unlock", "bob", t + std::chrono::minutes(5), "index dropped");
    r.record("acquire", "ops/deploy#3", t, "");
    return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reruns_suite)

BOOST_AUTO_TEST_CASE(latest_unlock_is_the_newest_in_the_history) {
    auto u = latest_unlock(unlocked_twice());
    BOOST_REQUIRE(u.has_value());
    BOOST_TEST(u->who == "bob");
    BOOST_TEST(u->seq == 6);
    BOOST_TEST(!latest_unlock(locks::LockRecord{}).has_value());
}

// Given 30 pipelines after the unlock (more than the history keeps), then the latest
// unlock still names the Jobs: it is read from the record's own unlock list.
BOOST_AUTO_TEST_CASE(latest_unlock_outlives_the_rotating_history) {
    locks::LockRecord r = unlocked_twice();
    TimePoint t = *parse_rfc3339("2026-01-01T04:00:00Z");
    for (int i = 0; i < 30; ++i) {
        r.record("release", "ops/deploy#" + std::to_string(i + 3), t, "");
        r.record("acquire", "ops/deploy#" + std::to_string(i + 4), t, "");
    }
    auto u = latest_unlock(r);
    BOOST_REQUIRE(u.has_value());
    BOOST_TEST(u->who == "bob");
    BOOST_TEST(u->seq == 6);
}

BOOST_AUTO_TEST_CASE(jobs_after_an_unlock_have_new_names_stable_for_that_unlock) {
    RenderedJob job = rendered();
    auto bob = *latest_unlock(unlocked_twice());
    RenderedJob after = after_unlock(job, bob);
    BOOST_TEST(after.name != job.name);
    BOOST_TEST(after.name.rfind("migrate-", 0) == 0U, after.name);
    BOOST_TEST(after.name.size() == job.name.size());
    BOOST_TEST(after.object["metadata"]["name"] == after.name);
    BOOST_TEST(after.object["metadata"]["labels"][k_label_spec_hash] == after.spec_hash);
    BOOST_TEST(after.object["metadata"]["labels"][k_label_unlock] == "6");
    // A retry under the same unlock finds the same Job; another unlock does not.
    BOOST_TEST(after_unlock(job, bob).name == after.name);
    locks::Transition alice = unlocked_twice().history[2];
    BOOST_TEST(after_unlock(job, alice).name != after.name);
    BOOST_TEST(after_unlock_text(bob) ==
               "new Job after the unlock by bob at 2026-01-01T03:05:00Z; runs after an unlock do "
               "not re-attach to the Jobs before it");
}

BOOST_AUTO_TEST_SUITE_END()
