// Given bad input — a lock name that is not a DNS-1123 label, a lock file or a Lease
// that is not a record envgate understands — then every store call and every lock
// operation (acquire, release, fail, unlock, renew) ends with an `invalid` error that
// names the file or namespace/Lease and the field, and nothing is overwritten: the
// file's bytes and the Lease's resourceVersion stay as they were.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "locks/file_store.h"
#include "locks/lock_manager.h"
#include "locks/record_json.h"
#include "test/fakes/fake_clock.h"
#include "test/locks/lease_store_factory.h"
#include "test/locks/store_factories.h"

using namespace envgate;
using namespace envgate::locks;
using nlohmann::json;

namespace {

const TimePoint k_t0 = *parse_rfc3339("2026-05-01T10:00:00Z");
const kube::ResourceRef k_lease = kube::leases(test::k_lease_namespace, "envgate-gstg");

Holder pipeline(const std::string& id) {
    Holder h;
    h.id = id;
    return h;
}

LockRecord held_record() {
    LockRecord r;
    r.name = "gstg";
    r.state = LockState::held;
    r.holder = pipeline("grp/app#7");
    r.acquired_at = k_t0;
    r.renewed_at = k_t0;
    r.lease_duration = std::chrono::hours(2);
    r.record("acquire", "grp/app#7", k_t0, "was free");
    return r;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// Every operation that may write, as the holder "grp/app#7"; each returns its Status.
std::vector<std::pair<std::string, Status>> every_writing_operation(LockStore& store) {
    test::FakeClock clock(k_t0 + std::chrono::minutes(1));
    std::ostringstream log;
    LockManager manager(store, clock, log, [] { return 0; });
    LockSpec spec;
    spec.name = "gstg";
    spec.wait = Wait::no;
    const Holder me = pipeline("grp/app#7");
    auto status_of = [](const auto& result) {
        return result.is_ok() ? Status::ok() : result.status();
    };
    return {
        {"acquire", status_of(manager.acquire(spec, me))},
        {"renew", status_of(manager.renew(spec, me))},
        {"release", status_of(manager.release("gstg", me))},
        {"fail", status_of(manager.fail(spec, me, Failure{"deploy", "Failed", "x", {}}))},
        {"unlock", status_of(manager.unlock("gstg", "alice", "stuck", std::nullopt))},
    };
}

void check_all_refused(LockStore& store, const std::vector<std::string>& wanted) {
    for (const auto& [op, status] : every_writing_operation(store)) {
        BOOST_TEST_CONTEXT(op) {
            BOOST_TEST((status.code() == Code::invalid));
            for (const auto& w : wanted) {
                BOOST_TEST(status.message().find(w) != std::string::npos, status.message()
                                                                              << " lacks " << w);
            }
        }
    }
}

json valid_record_json() {
    return to_json(held_record());
}

struct Corruption {
    const char* name;
    std::function<void(json&)> edit;  // applied to a valid record's JSON
    const char* want;                 // the field the error names
};

const std::vector<Corruption>& corruptions() {
    static const std::vector<Corruption> k_cases = {
        {"holder of the wrong type", [](json& j) { j["holder"] = "bob"; },
         "holder: expected an object or null"},
        {"held without a holder", [](json& j) { j["holder"] = nullptr; },
         "state is held but holder is null"},
        {"free with a holder", [](json& j) { j["state"] = "free"; },
         "state is free but holder is grp/app#7"},
        {"failed without a failure", [](json& j) { j["state"] = "failed"; },
         "state is failed but failure is null"},
        {"unknown state", [](json& j) { j["state"] = "locked"; }, "state: \"locked\""},
        {"state of the wrong type", [](json& j) { j["state"] = 5; }, "state: expected a string"},
        {"a newer schema", [](json& j) { j["schema"] = "envgate.dev/lock/v2"; },
         "schema: \"envgate.dev/lock/v2\", expected \"envgate.dev/lock/v1\""},
        {"no schema", [](json& j) { j.erase("schema"); }, "schema: missing"},
        {"a bad time", [](json& j) { j["renewed_at"] = "yesterday"; },
         "renewed_at: \"yesterday\" is not RFC 3339"},
        {"waiters not a list", [](json& j) { j["waiters"] = json::object(); },
         "waiters: expected an array or null"},
        {"a history entry not an object", [](json& j) { j["history"][0] = 3; },
         "history[0]: expected an object"},
        {"a holder without id", [](json& j) { j["holder"].erase("id"); }, "holder.id: missing"},
        {"the record of another lock", [](json& j) { j["name"] = "gprd"; },
         "record of lock \"gprd\", not \"gstg\""},
        {"a negative lease", [](json& j) { j["lease_duration_seconds"] = -5; },
         "lease_duration_seconds: negative"},
    };
    return k_cases;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_bad_input_suite)

BOOST_AUTO_TEST_CASE(lock_names_are_dns_labels_in_both_stores_and_the_error_says_the_rule) {
    test::TempDir dir;
    FileStore files(dir.path());
    test::LeaseStoreFactory leases;
    auto lease_store = leases.make();
    for (LockStore* store : {static_cast<LockStore*>(&files), lease_store.get()}) {
        for (const std::string& bad :
             std::vector<std::string>{"", "Prod_1", "-gstg", "gstg-", "a.b", "../x", "GSTG",
                                      std::string(64, 'a'), std::string("g\xc3\xa9")}) {
            BOOST_TEST_CONTEXT(store->describe() << " name " << bad) {
                auto read = store->read(bad);
                BOOST_TEST((read.status().code() == Code::invalid));
                BOOST_TEST(read.status().message().find("\"" + bad +
                                                        "\" is not a DNS-1123 label (1-63 "
                                                        "characters: lowercase letters") !=
                           std::string::npos);
                BOOST_TEST((store->write(bad, held_record(), "").status().code() == Code::invalid));
            }
        }
        for (const std::string& good :
             std::vector<std::string>{"a", "gstg", "pre-prod-2", std::string(63, 'a')}) {
            BOOST_TEST_CONTEXT(store->describe() << " name " << good) {
                BOOST_TEST(store->read(good).is_ok());
            }
        }
    }
    // Only the good names reached the API: a GET of the lock's Lease, a list of its queue.
    BOOST_TEST(leases.api->calls_made.size() == 8u);
    BOOST_TEST(std::filesystem::is_empty(dir.path()));
}

BOOST_AUTO_TEST_CASE(the_decoder_names_the_field_that_is_wrong) {
    for (const auto& c : corruptions()) {
        BOOST_TEST_CONTEXT(c.name) {
            json j = valid_record_json();
            c.edit(j);
            auto r = record_from_json(j, "gstg");
            BOOST_REQUIRE(!r.is_ok());
            BOOST_TEST((r.status().code() == Code::invalid));
            BOOST_TEST(r.status().message().find(c.want) != std::string::npos,
                       r.status().message());
        }
    }
    auto round_trip = record_from_json(valid_record_json(), "gstg");
    BOOST_REQUIRE(round_trip.is_ok());
    BOOST_TEST(to_json(*round_trip) == valid_record_json());
}

BOOST_AUTO_TEST_CASE(a_corrupt_lock_file_is_refused_by_every_operation_and_left_as_it_was) {
    struct Case {
        const char* name;
        std::string bytes;
        const char* want;
    };
    std::vector<Case> cases = {
        {"not JSON", "{\"schema\": \"envgate.dev/lo", "not JSON: parse error at line 1"},
        {"empty", "", "empty"},
        {"a revision of the wrong type",
         [] {
             json j = valid_record_json();
             j["revision"] = "7";
             return j.dump(2);
         }(),
         "revision: expected a whole number"},
    };
    for (const auto& c : corruptions()) {
        json j = valid_record_json();
        c.edit(j);
        j["revision"] = 3;
        cases.push_back({c.name, j.dump(2), c.want});
    }
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            test::TempDir dir;
            const std::string path = dir.path() + "/gstg.json";
            std::ofstream(path, std::ios::binary) << c.bytes;
            FileStore store(dir.path());
            check_all_refused(store, {path + ": not a lock record: ", c.want});
            BOOST_TEST((store.write("gstg", held_record(), "3").status().code() == Code::invalid));
            BOOST_TEST((store.write("gstg", held_record(), "").status().code() == Code::invalid));
            BOOST_TEST(slurp(path) == c.bytes);  // byte for byte
        }
    }
}

BOOST_AUTO_TEST_CASE(a_lease_envgate_does_not_understand_is_refused_and_never_updated) {
    struct Case {
        const char* name;
        std::function<void(json&)> edit;  // of the stored Lease
        const char* want;
    };
    const std::string annotation = k_record_annotation;
    auto set_record = [annotation](std::function<void(json&)> edit) {
        return [annotation, edit](json& lease) {
            json j = json::parse(lease["metadata"]["annotations"][annotation].get<std::string>());
            edit(j);
            lease["metadata"]["annotations"][annotation] = j.dump();
        };
    };
    std::vector<Case> cases = {
        {"annotation not JSON",
         [annotation](json& l) { l["metadata"]["annotations"][annotation] = "{\"state\": "; },
         "annotation envgate.dev/record: not JSON: parse error"},
        {"annotation of the wrong type", set_record([](json& j) { j["state"] = 5; }),
         "annotation envgate.dev/record: state: expected a string"},
        {"annotation with a holder of the wrong type",
         set_record([](json& j) { j["holder"] = json::array(); }),
         "annotation envgate.dev/record: holder: expected an object or null"},
        {"spec holder contradicts the annotation",
         [](json& l) { l["spec"]["holderIdentity"] = "kube-scheduler-7f9c"; },
         "spec.holderIdentity \"kube-scheduler-7f9c\" contradicts annotation "
         "envgate.dev/record (held, held by \"grp/app#7\")"},
        {"spec without the annotation's holder", [](json& l) { l["spec"].erase("holderIdentity"); },
         "spec.holderIdentity unset contradicts annotation envgate.dev/record"},
        {"spec field of the wrong type", [](json& l) { l["spec"]["leaseDurationSeconds"] = "15"; },
         "spec.leaseDurationSeconds: expected an integer"},
        {"spec time that is not a time", [](json& l) { l["spec"]["renewTime"] = 12; },
         "spec.renewTime: expected an RFC 3339 time"},
        {"a Lease another program made",
         [annotation](json& l) {
             l["metadata"]["annotations"].erase(annotation);
             l["spec"]["holderIdentity"] = "kube-scheduler-7f9c";
         },
         "not made by envgate: it has no annotation envgate.dev/record but "
         "spec.holderIdentity \"kube-scheduler-7f9c\""},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            test::LeaseStoreFactory f;
            auto store = f.make();
            BOOST_REQUIRE(store->write("gstg", held_record(), "").is_ok());
            BOOST_REQUIRE(f.api->mutate(k_lease, c.edit));
            const json before = f.api->object(k_lease).value();
            const std::size_t calls = f.api->calls.size();
            check_all_refused(*store, {"Lease envgate-locks/envgate-gstg: ", c.want});
            const json after = f.api->object(k_lease).value();
            BOOST_TEST(after["metadata"]["resourceVersion"] ==
                       before["metadata"]["resourceVersion"]);
            BOOST_TEST(after == before);
            for (std::size_t i = calls; i < f.api->calls.size(); ++i) {
                BOOST_TEST((f.api->calls[i].verb == "get" || f.api->calls[i].verb == "list"),
                           f.api->calls_made[i]);  // reads only
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
