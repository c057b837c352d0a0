// KubernetesLeaseStore specifics over FakeKubeApi (the shared behaviour is in
// lease_store_conformance_test.cpp): the Lease's spec mirrors the record, 409s of
// create and PUT are conflicts, foreign metadata survives a write, list() sees only
// labelled Leases, and every transition becomes an Event, best effort.
#include <boost/test/unit_test.hpp>

#include "locks/record_json.h"
#include "test/locks/lease_store_factory.h"

using namespace envgate;
using namespace envgate::locks;
using namespace std::chrono;
using nlohmann::json;

namespace {

const TimePoint k_t0 = *parse_rfc3339("2026-05-01T10:00:00Z");
const kube::ResourceRef k_lease = kube::leases(test::k_lease_namespace, "envgate-gstg");

LockRecord held_record() {
    LockRecord r;
    r.name = "gstg";
    r.state = LockState::held;
    r.holder = Holder{};
    r.holder->id = "grp/app#7";
    r.holder->job_url = "https://gitlab.example/jobs/70";
    r.acquired_at = k_t0;
    r.renewed_at = k_t0 + seconds(3) + microseconds(42);
    r.lease_duration = hours(2);
    r.lease_transitions = 4;
    r.step = "deploy";
    r.record("acquire", "grp/app#7", k_t0, "");
    return r;
}

std::vector<json> events(test::FakeKubeApi& api) {
    return api.list(kube::core_events(test::k_lease_namespace), {}).value().items;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lease_store_suite)

BOOST_AUTO_TEST_CASE(the_lease_spec_mirrors_the_record_and_the_annotation_holds_it_all) {
    test::LeaseStoreFactory f;
    auto store = f.make();
    LockRecord r = held_record();
    std::string version = store->write("gstg", r, "").value();
    json lease = f.api->object(k_lease).value();
    BOOST_TEST(lease["metadata"]["resourceVersion"] == version);
    BOOST_TEST(lease["metadata"]["labels"][k_lock_label] == "true");
    const json& spec = lease["spec"];
    BOOST_TEST(spec["holderIdentity"] == "grp/app#7");
    BOOST_TEST(spec["acquireTime"] == "2026-05-01T10:00:00.000000Z");
    BOOST_TEST(spec["renewTime"] == "2026-05-01T10:00:03.000042Z");  // MicroTime
    BOOST_TEST(spec["leaseDurationSeconds"] == 7200);
    BOOST_TEST(spec["leaseTransitions"] == 4);
    json annotation =
        json::parse(lease["metadata"]["annotations"][k_record_annotation].get<std::string>());
    BOOST_TEST(annotation == to_json(r));  // the file store's JSON, unchanged
    BOOST_TEST(store->describe() == "kubernetes store (Leases in namespace envgate-locks)");
    // Freed: no holderIdentity, no times; the Lease (and its history) stays.
    LockRecord freed;
    freed.name = "gstg";
    freed.history = r.history;
    BOOST_REQUIRE(store->write("gstg", freed, version).is_ok());
    json spec2 = f.api->object(k_lease).value()["spec"];
    BOOST_TEST(!spec2.contains("holderIdentity"));
    BOOST_TEST(!spec2.contains("renewTime"));
    BOOST_TEST(!spec2.contains("leaseDurationSeconds"));  // the API server refuses 0
    BOOST_TEST(store->read("gstg")->record.history.size() == 1u);
}

BOOST_AUTO_TEST_CASE(create_races_stale_versions_and_deleted_leases_are_conflicts) {
    test::LeaseStoreFactory f;
    LockRecord r = held_record();
    std::string v1 = f.make()->write("gstg", r, "").value();
    auto again = f.make()->write("gstg", r, "");  // 409 AlreadyExists
    BOOST_TEST((again.status().code() == Code::conflict));
    BOOST_TEST(again.status().message().find("AlreadyExists") != std::string::npos);
    std::string v2 = f.make()->write("gstg", r, v1).value();
    BOOST_TEST(v2 != v1);
    auto stale = f.make()->write("gstg", r, v1);  // 409 Conflict
    BOOST_TEST((stale.status().code() == Code::conflict));
    f.api->fail_next(Code::transient, "update");  // other failures pass through
    BOOST_TEST((f.make()->write("gstg", r, v2).status().code() == Code::transient));
    BOOST_REQUIRE(f.api->erase(k_lease));  // kubectl delete lease: re-read and re-decide
    BOOST_TEST((f.make()->write("gstg", r, v2).status().code() == Code::conflict));
    auto gone = f.make()->read("gstg").value();
    BOOST_TEST(gone.version.empty());
    BOOST_TEST((gone.record.state == LockState::free));
    BOOST_TEST((f.make()->read("Not_A_Label").status().code() == Code::invalid));
}

// Given a waiter's Lease read at one resourceVersion and renewed since, then a removal
// at the version read sends it as DELETE's resourceVersion precondition: 409, the Lease
// stays; at the current version, or without one (the waiter's own), it goes.
BOOST_AUTO_TEST_CASE(another_waiters_lease_is_deleted_only_at_the_version_read) {
    test::LeaseStoreFactory f;
    auto store = f.make();
    Waiter w;
    w.who.id = "grp/app#8";
    w.since = k_t0;
    w.last_seen = k_t0;
    w.ttl = seconds(60);
    const std::string read = store->write_waiter("gstg", w, "").value();
    w.last_seen = k_t0 + seconds(20);
    const std::string renewed = store->write_waiter("gstg", w, read).value();
    const kube::ResourceRef lease =
        kube::leases(test::k_lease_namespace, waiter_lease_name("gstg", w.who.id));

    Status stale = f.make()->remove_waiter("gstg", w.who.id, read);
    BOOST_TEST((stale.code() == Code::conflict));
    BOOST_TEST(stale.message().find("the ResourceVersion in the precondition (" + read + ")") !=
               std::string::npos);
    BOOST_TEST(f.api->object(lease).has_value());
    BOOST_TEST(f.api->calls.back().verb == "remove");
    BOOST_TEST(f.api->calls.back().preconditions.resource_version == read);

    BOOST_TEST(f.make()->remove_waiter("gstg", w.who.id, renewed).is_ok());
    BOOST_TEST(!f.api->object(lease).has_value());
    BOOST_TEST(f.make()->remove_waiter("gstg", w.who.id, renewed).is_ok());  // absent: done
    (void)store->write_waiter("gstg", w, "").value();
    BOOST_TEST(store->remove_waiter("gstg", w.who.id).is_ok());  // its own: no precondition
    BOOST_TEST(f.api->calls.back().preconditions.empty());
    BOOST_TEST(!f.api->object(lease).has_value());
}

BOOST_AUTO_TEST_CASE(spec_fields_win_and_foreign_leases_are_refused) {
    test::LeaseStoreFactory f;
    auto store = f.make();
    (void)store->write("gstg", held_record(), "").value();
    f.api->mutate(k_lease, [](json& l) {
        l["spec"]["renewTime"] = "2026-05-01T11:00:00.500000Z";
        l["spec"]["leaseTransitions"] = 9;
    });
    LockRecord r = store->read("gstg")->record;
    BOOST_TEST((r.renewed_at == k_t0 + hours(1) + milliseconds(500)));
    BOOST_TEST(r.lease_transitions == 9);
    BOOST_TEST(r.holder->job_url == "https://gitlab.example/jobs/70");
    f.api->seed(kube::leases(test::k_lease_namespace, "envgate-qa"),
                {{"metadata", {{"name", "envgate-qa"}, {"namespace", test::k_lease_namespace}}},
                 {"spec", {{"holderIdentity", "someone-else"}, {"leaseDurationSeconds", 15}}}});
    // Another program's Lease: not understood, so not read as free or as held.
    auto foreign = store->read("qa");
    BOOST_TEST((foreign.status().code() == Code::invalid));
    BOOST_TEST(foreign.status().message().find("not made by envgate") != std::string::npos);
    f.api->mutate(k_lease,
                  [](json& l) { l["metadata"]["annotations"][k_record_annotation] = "{not json"; });
    BOOST_TEST((store->read("gstg").status().code() == Code::invalid));
}

BOOST_AUTO_TEST_CASE(a_write_keeps_labels_and_annotations_others_added) {
    test::LeaseStoreFactory f;
    auto store = f.make();
    (void)store->write("gstg", held_record(), "").value();
    f.api->mutate(k_lease, [](json& l) {
        l["metadata"]["annotations"]["team"] = "sre";
        l["metadata"]["labels"]["tier"] = "prod";
    });
    auto current = store->read("gstg").value();
    current.record.step = "qa";
    BOOST_REQUIRE(store->write("gstg", current.record, current.version).is_ok());
    json lease = f.api->object(k_lease).value();
    BOOST_TEST(lease["metadata"]["annotations"]["team"] == "sre");
    BOOST_TEST(lease["metadata"]["labels"]["tier"] == "prod");
    BOOST_TEST(store->read("gstg")->record.step == "qa");
}

BOOST_AUTO_TEST_CASE(list_sees_only_labelled_envgate_leases) {
    test::LeaseStoreFactory f;
    auto store = f.make();
    BOOST_TEST(store->list().value().empty());
    LockRecord r = held_record();
    (void)store->write("gstg", r, "").value();
    r.name = "gprd";
    (void)store->write("gprd", r, "").value();
    f.api->seed(kube::leases(test::k_lease_namespace, "kube-controller-manager"),
                {{"metadata", {{"name", "kube-controller-manager"}}}, {"spec", json::object()}});
    BOOST_TEST(store->list().value() == (std::vector<std::string>{"gprd", "gstg"}));
    BOOST_TEST(f.api->calls.back().label_selector == "envgate.dev/lock=true");
}

BOOST_AUTO_TEST_CASE(each_new_transition_becomes_an_event_on_the_lease) {
    test::LeaseStoreFactory f;
    auto store = f.make();
    LockRecord r = held_record();  // history: acquire
    std::string v = store->write("gstg", r, "").value();
    auto renew = store->read("gstg").value();
    renew.record.renewed_at += seconds(20);  // a renewal: no new transition, no event
    v = store->write("gstg", renew.record, v).value();
    r = store->read("gstg")->record;
    r.state = LockState::failed;
    r.failure = Failure{"deploy", "HolderVanished", "no renewal for 2h", k_t0 + hours(2)};
    r.record("vanished", "grp/app#8", k_t0 + hours(2), "HolderVanished: no renewal seen");
    (void)store->write("gstg", r, v).value();
    auto list = events(*f.api);
    BOOST_REQUIRE(list.size() == 2u);
    BOOST_TEST(list[0]["type"] == "Normal");
    BOOST_TEST(list[0]["reason"] == "Acquired");
    BOOST_TEST(list[1]["type"] == "Warning");
    BOOST_TEST(list[1]["reason"] == "HolderVanished");
    BOOST_TEST(list[1]["involvedObject"]["kind"] == "Lease");
    BOOST_TEST(list[1]["involvedObject"]["name"] == "envgate-gstg");
    BOOST_TEST(list[1]["message"].get<std::string>().find("vanished by grp/app#8") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_event_that_cannot_be_posted_never_fails_the_write) {
    test::LeaseStoreFactory f;
    auto store = f.make();
    LockRecord r = held_record();
    std::string v = store->write("gstg", r, "").value();
    r = store->read("gstg")->record;
    r.state = LockState::free;
    r.holder.reset();
    r.record("release", "grp/app#7", k_t0 + minutes(5), "");
    f.api->fail_next(Code::forbidden, "create");  // RBAC without events: create
    auto written = store->write("gstg", r, v);
    BOOST_REQUIRE(written.is_ok());
    BOOST_TEST((store->read("gstg")->record.state == LockState::free));
    BOOST_TEST(events(*f.api).size() == 1u);  // only the acquire's
}

// Given a failure message that is not UTF-8, then the Lease's record annotation is
// JSON text with U+FFFD in place of the bad bytes, and the record reads back.
BOOST_AUTO_TEST_CASE(a_record_with_text_that_is_not_utf8_is_written_replaced) {
    test::LeaseStoreFactory f;
    auto store = f.make();
    LockRecord r = held_record();
    r.state = LockState::failed;
    r.failure = Failure{"deploy", "StepFailed", "exit 1: \xff\xfe", k_t0};
    auto written = store->write("gstg", r, "");
    BOOST_REQUIRE_MESSAGE(written.is_ok(), (written.is_ok() ? "" : written.status().message()));
    json lease = f.api->object(k_lease).value();
    json annotation =
        json::parse(lease["metadata"]["annotations"][k_record_annotation].get<std::string>());
    BOOST_TEST(annotation["failure"]["message"] == "exit 1: \uFFFD\uFFFD");
    auto read = store->read("gstg");
    BOOST_REQUIRE_MESSAGE(read.is_ok(), (read.is_ok() ? "" : read.status().message()));
    BOOST_TEST(read->record.failure->message == "exit 1: \uFFFD\uFFFD");
}

BOOST_AUTO_TEST_SUITE_END()
