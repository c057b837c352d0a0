// kubesim validates a Lease's spec as the API server does: the real one refuses
// leaseDurationSeconds 0 (found when envgate's unlock wrote one to the control plane),
// so kubesim must too, on create and on update.
#include <boost/test/unit_test.hpp>

#include "test/kubesim/resources.h"

using nlohmann::json;

namespace {

json lease(json spec) {
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", "envgate-gstg"}}},
            {"spec", std::move(spec)}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_lease_validation)

BOOST_AUTO_TEST_CASE(a_lease_duration_of_zero_is_refused_as_the_api_server_does) {
    const auto* info = kubesim::find_resource("coordination.k8s.io", "v1", "leases");
    BOOST_REQUIRE(info != nullptr);
    struct Case {
        json spec;
        std::string want;  // "" when valid
    };
    const Case cases[] = {
        {{{"leaseDurationSeconds", 15}, {"leaseTransitions", 2}}, ""},
        {{{"leaseTransitions", 0}}, ""},
        {{{"leaseDurationSeconds", 0}},
         "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"},
        {{{"leaseDurationSeconds", -3}},
         "spec.leaseDurationSeconds: Invalid value: -3: must be greater than 0"},
        {{{"leaseTransitions", -1}},
         "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.spec.dump()) {
            json created = lease(c.spec);
            auto st = kubesim::prepare_create(*info, "locks", true, created);
            json updated = lease(c.spec);
            auto up =
                kubesim::prepare_update(*info, lease({{"leaseDurationSeconds", 15}}), updated);
            if (c.want.empty()) {
                BOOST_TEST(st.is_ok());
                BOOST_TEST(up.is_ok());
            } else {
                BOOST_TEST((st.code() == envgate::Code::invalid));
                BOOST_TEST(st.message().find(c.want) != std::string::npos, st.message());
                BOOST_TEST(up.message().find(c.want) != std::string::npos, up.message());
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
