// The fake KubeApi behaves like the API server where lock-store and gate-runner tests
// rely on it: resourceVersion compare-and-swap, AlreadyExists, merge patch, selectors,
// watch history with 410 after compaction, recorded calls and injected failures.
#include <boost/test/unit_test.hpp>

#include "test/fakes/fake_kube_api.h"

namespace envgate::test {
namespace {

using kube::EventType;
using kube::WatchNext;

const kube::ResourceRef k_lease = kube::leases("locks", "envgate-gprd");

nlohmann::json lease(const std::string& holder) {
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", "envgate-gprd"}}},
            {"spec", {{"holderIdentity", holder}}}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kube_fake_api)

BOOST_AUTO_TEST_CASE(lease_compare_and_swap_like_the_api_server) {
    FakeKubeApi api;
    // Given: a created Lease, read twice by two contenders.
    auto created = api.create(kube::leases("locks"), lease("a"));
    BOOST_REQUIRE(created.is_ok());
    const std::string rv = (*created)["metadata"]["resourceVersion"];
    BOOST_TEST(api.create(kube::leases("locks"), lease("b")).status().code() ==
               Code::already_exists);
    // When: the first update wins, the second (same stale RV) loses with Conflict.
    nlohmann::json mine = *created;
    mine["spec"]["holderIdentity"] = "b";
    auto won = api.update(k_lease, mine);
    BOOST_REQUIRE(won.is_ok());
    BOOST_TEST((*won)["metadata"]["resourceVersion"] != rv);
    BOOST_TEST((*won)["metadata"]["uid"] == (*created)["metadata"]["uid"]);
    auto lost = api.update(k_lease, mine);
    BOOST_REQUIRE(!lost.is_ok());
    BOOST_TEST(lost.status().code() == Code::conflict);
    BOOST_TEST(
        lost.status().message().find("PUT leases/envgate-gprd: 409 Conflict: Operation cannot "
                                     "be fulfilled") == 0u);
    // Then: the calls were recorded in order.
    BOOST_TEST((api.calls_made == std::vector<std::string>{
                                      "create leases/envgate-gprd", "create leases/envgate-gprd",
                                      "update leases/envgate-gprd", "update leases/envgate-gprd"}));
}

BOOST_AUTO_TEST_CASE(fails_on_demand_by_verb_in_order) {
    FakeKubeApi api;
    api.seed(k_lease, lease("a"));
    api.fail_next(Code::transient, "update");
    api.fail_next(Code::forbidden);
    auto first = api.get(k_lease);  // matches the verb-less failure
    BOOST_TEST(first.status().code() == Code::forbidden);
    BOOST_TEST(first.status().message() == "get leases/envgate-gprd: injected Forbidden");
    BOOST_TEST(api.get(k_lease).is_ok());
    BOOST_TEST(api.update(k_lease, lease("b")).status().code() == Code::transient);
    BOOST_TEST(api.update(k_lease, lease("b")).is_ok());  // no RV sent: unconditional
    BOOST_TEST(api.object(k_lease).value()["spec"]["holderIdentity"] == "b");
}

BOOST_AUTO_TEST_CASE(merge_patch_remove_and_logs) {
    FakeKubeApi api;
    api.seed(kube::jobs("gitlab", "migrate"),
             {{"metadata", {{"annotations", {{"a", "1"}, {"b", "2"}}}}}});
    auto patched = api.patch(kube::jobs("gitlab", "migrate"),
                             {{"metadata", {{"annotations", {{"a", nullptr}, {"c", "3"}}}}}});
    BOOST_REQUIRE(patched.is_ok());
    BOOST_TEST((*patched)["metadata"]["annotations"] == (nlohmann::json{{"b", "2"}, {"c", "3"}}));
    BOOST_TEST(api.remove(kube::jobs("gitlab", "migrate"), kube::Propagation::background).is_ok());
    BOOST_TEST(api.get(kube::jobs("gitlab", "migrate")).status().code() == Code::not_found);
    api.set_logs(kube::pods("gitlab", "p"), "migrations", true, "boom\n");
    BOOST_TEST(api.logs(kube::pods("gitlab", "p"), {"migrations", true, std::nullopt}).value() ==
               "boom\n");
    BOOST_TEST(
        api.logs(kube::pods("gitlab", "p"), {"migrations", false, std::nullopt}).status().code() ==
        Code::not_found);
}

BOOST_AUTO_TEST_CASE(selects_by_labels_and_fields) {
    FakeKubeApi api;
    auto pod = [](const std::string& name, const std::string& uid, const std::string& phase) {
        return nlohmann::json{{"metadata", {{"name", name}, {"labels", {{"controller-uid", uid}}}}},
                              {"status", {{"phase", phase}}}};
    };
    api.seed(kube::pods("gitlab", "p1"), pod("p1", "u1", "Running"));
    api.seed(kube::pods("gitlab", "p2"), pod("p2", "u1", "Failed"));
    api.seed(kube::pods("gitlab", "p3"), pod("p3", "u2", "Running"));
    api.seed(kube::pods("other", "p4"), pod("p4", "u1", "Running"));
    struct Case {
        std::string labels, fields;
        std::size_t want;
    };
    for (const auto& c : std::vector<Case>{{"controller-uid=u1", "", 2},
                                           {"controller-uid in (u1,u2)", "", 3},
                                           {"controller-uid!=u1", "", 1},
                                           {"!controller-uid", "", 0},
                                           {"", "metadata.name=p3", 1},
                                           {"controller-uid==u1", "status.phase!=Failed", 1}}) {
        BOOST_TEST_CONTEXT(c.labels << " | " << c.fields) {
            auto list = api.list(kube::pods("gitlab"), {c.labels, c.fields});
            BOOST_REQUIRE(list.is_ok());
            BOOST_TEST(list->items.size() == c.want);
        }
    }
    BOOST_TEST(api.list(kube::pods(""), {"controller-uid=u1", ""})->items.size() == 3u);
}

BOOST_AUTO_TEST_CASE(watch_replays_history_and_expires_after_compaction) {
    FakeKubeApi api;
    const auto ref = kube::jobs("gitlab", "migrate");
    api.seed(ref, {{"metadata", nlohmann::json::object()}});
    const std::string start = api.resource_version();
    api.mutate(ref, [](nlohmann::json& j) { j["status"]["active"] = 1; });
    api.erase(ref);
    std::vector<EventType> types;
    auto collect = [&](const kube::WatchEvent& e) {
        types.push_back(e.type);
        return WatchNext::proceed;
    };
    kube::WatchOptions options;
    options.resource_version = start;
    BOOST_REQUIRE(api.watch(kube::jobs("gitlab"), options, collect).is_ok());
    BOOST_TEST((types == std::vector<EventType>{EventType::modified, EventType::deleted}));
    api.compact();
    Status expired = api.watch(kube::jobs("gitlab"), options, collect);
    BOOST_TEST(expired.code() == Code::gone);
    BOOST_TEST(expired.message().find("410 Expired") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
