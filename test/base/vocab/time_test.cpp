// Given RFC 3339 and duration strings as Kubernetes and people write them, then
// they parse to the same instants and print back in Kubernetes' form.
#include <boost/test/unit_test.hpp>

#include "runner/base/vocab/time.h"

using namespace envgate;
using namespace std::chrono;

BOOST_AUTO_TEST_SUITE(time_suite)

BOOST_AUTO_TEST_CASE(parses_kubernetes_time_and_microtime) {
    auto t = parse_rfc3339("2025-05-29T07:12:38Z");
    BOOST_REQUIRE(t);
    BOOST_TEST(format_rfc3339(*t) == "2025-05-29T07:12:38Z");
    auto m = parse_rfc3339("2025-05-29T07:12:38.123456Z");
    BOOST_REQUIRE(m);
    BOOST_TEST(format_rfc3339_micro(*m) == "2025-05-29T07:12:38.123456Z");
    BOOST_TEST((*m - *t).count() == 123456);
}

BOOST_AUTO_TEST_CASE(applies_numeric_offsets) {
    auto a = parse_rfc3339("2025-05-29T09:12:38+02:00");
    BOOST_REQUIRE(a);
    BOOST_TEST(format_rfc3339(*a) == "2025-05-29T07:12:38Z");
}

BOOST_AUTO_TEST_CASE(rejects_malformed_times) {
    for (const char* bad : {"", "2025-05-29", "2025-13-01T00:00:00Z", "2025-05-29T07:12:38",
                            "2025-05-29T07:12:38.Z", "2025-02-30T00:00:00Z", "garbage"}) {
        BOOST_TEST_CONTEXT(bad) {
            BOOST_TEST(!parse_rfc3339(bad));
        }
    }
}

BOOST_AUTO_TEST_CASE(parses_and_formats_durations) {
    BOOST_TEST(parse_duration("90s")->count() == 90'000'000);
    BOOST_TEST(parse_duration("1h30m")->count() == 5'400'000'000);
    BOOST_TEST(parse_duration("250ms")->count() == 250'000);
    BOOST_TEST(parse_duration("7")->count() == 7'000'000);
    BOOST_TEST(!parse_duration("5x"));
    BOOST_TEST(!parse_duration(""));
    BOOST_TEST(format_duration(seconds(250)) == "4m10s");
    BOOST_TEST(format_duration(hours(2) + seconds(5)) == "2h0m5s");
    BOOST_TEST(format_duration(milliseconds(850)) == "850ms");
}

BOOST_AUTO_TEST_SUITE_END()
