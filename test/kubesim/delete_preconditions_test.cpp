// kubesim checks DeleteOptions.preconditions as the API server does: the uid first, then
// the resourceVersion; either mismatch is 409 Conflict with the same Status body as
// kube-apiserver v1.37.2 (taken from the test control plane, test/controlplane/: the
// message names the Kind, e.g. Lease.coordination.k8s.io, and so do the details), and
// the object stays. envgate's Lease store deletes a waiter's Lease it judged dead only
// at the resourceVersion it read (locks/kubernetes_lease_store.cpp).
#include <boost/test/unit_test.hpp>

#include "test/kubesim/sim_process.h"

namespace kubesim::testing {

using nlohmann::json;

namespace {

const std::string k_leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
const std::string k_name = "envgate-gstg-w-0123456789abcdef";

json delete_options(json preconditions) {
    return {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"preconditions", preconditions}};
}

json conflict(const std::string& why) {
    return {{"kind", "Status"},
            {"apiVersion", "v1"},
            {"metadata", json::object()},
            {"status", "Failure"},
            {"message", "Operation cannot be fulfilled on Lease.coordination.k8s.io \"" + k_name +
                            "\": " + why},
            {"reason", "Conflict"},
            {"details", {{"name", k_name}, {"group", "coordination.k8s.io"}, {"kind", "Lease"}}},
            {"code", 409}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_delete)

// Given a Lease renewed after it was read, when a DELETE carries the resourceVersion
// read (or another uid), then 409 with the API server's body and the Lease stays; at the
// current resourceVersion and uid it is deleted.
BOOST_AUTO_TEST_CASE(delete_preconditions_are_checked_as_the_api_server_does) {
    SimProcess sim({});
    SimClient c = sim.client();
    int code = 0;
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", k_name}}},
                  {"spec", {{"holderIdentity", "w1"}, {"leaseDurationSeconds", 60}}}};
    json read = send_json(c, "POST", k_leases, lease, &code);
    BOOST_REQUIRE_EQUAL(code, 201);
    const std::string read_rv = read["metadata"]["resourceVersion"];
    const std::string uid = read["metadata"]["uid"];
    read["spec"]["renewTime"] = "2026-05-01T10:00:20.000000Z";
    json renewed = send_json(c, "PUT", k_leases + "/" + k_name, read, &code);
    BOOST_REQUIRE_EQUAL(code, 200);
    const std::string rv = renewed["metadata"]["resourceVersion"];
    BOOST_REQUIRE(rv != read_rv);

    json answer = send_json(c, "DELETE", k_leases + "/" + k_name,
                            delete_options({{"resourceVersion", read_rv}}), &code);
    BOOST_TEST(code == 409);
    BOOST_TEST(answer == conflict("the ResourceVersion in the precondition (" + read_rv +
                                  ") does not match the ResourceVersion in record (" + rv +
                                  "). The object might have been modified"),
               answer.dump());
    answer = send_json(c, "DELETE", k_leases + "/" + k_name,
                       delete_options({{"uid", "00000000-0000-0000-0000-000000000000"},
                                       {"resourceVersion", read_rv}}),
                       &code);
    BOOST_TEST(code == 409);
    BOOST_TEST(answer == conflict("the UID in the precondition "
                                  "(00000000-0000-0000-0000-000000000000) does not match the "
                                  "UID in record (" +
                                  uid + "). The object might have been deleted and then recreated"),
               answer.dump());
    (void)get_json(c, k_leases + "/" + k_name, &code);
    BOOST_TEST(code == 200);  // still there

    answer = send_json(c, "DELETE", k_leases + "/" + k_name,
                       delete_options({{"uid", uid}, {"resourceVersion", rv}}), &code);
    BOOST_TEST(code == 200);
    BOOST_TEST(answer["status"] == "Success");
    (void)get_json(c, k_leases + "/" + k_name, &code);
    BOOST_TEST(code == 404);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kubesim::testing
