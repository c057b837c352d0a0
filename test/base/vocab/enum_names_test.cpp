// Given an EnumName table, then name_of and value_of read it both ways, with the
// caller's word for a value it does not list; given each table the product reads both
// ways, then every value's word reads back as that value (a value left out of a table
// comes back as another value, or as none, and fails here).
#include "runner/base/vocab/enum_names.h"

#include <boost/test/unit_test.hpp>
#include <string>

#include "locks/lock_record.h"
#include "runner/kube/kube_api.h"
#include "runner/lint/check.h"
#include "runner/report/run_report.h"

using namespace envgate;

namespace {

enum class Colour { red, green, blue };

// blue is left out on purpose; "verde" is a second word for green.
constexpr EnumName<Colour> k_colours[] = {
    {Colour::red, "red"}, {Colour::green, "green"}, {Colour::green, "verde"}};

}  // namespace

BOOST_AUTO_TEST_SUITE(enum_names_suite)

BOOST_AUTO_TEST_CASE(reads_a_table_both_ways) {
    BOOST_TEST(std::string(name_of(k_colours, Colour::red, "?")) == "red");
    BOOST_TEST(std::string(name_of(k_colours, Colour::green, "?")) == "green");  // the first
    BOOST_TEST(std::string(name_of(k_colours, Colour::blue, "?")) == "?");
    BOOST_TEST((value_of(k_colours, "verde") == Colour::green));
    BOOST_TEST((value_of(k_colours, "red") == Colour::red));
    BOOST_TEST(!value_of(k_colours, "blue").has_value());
    BOOST_TEST(!value_of(k_colours, "").has_value());
    BOOST_TEST(!value_of(k_colours, "Red").has_value());  // words are matched exactly
    // Usable at compile time, as the tables are constexpr.
    static_assert(value_of(k_colours, "green") == Colour::green);
    static_assert(name_of(k_colours, Colour::blue, nullptr) == nullptr);
}

BOOST_AUTO_TEST_CASE(every_word_the_product_parses_reads_back) {
    using locks::LockState;
    for (LockState s : {LockState::free, LockState::held, LockState::failed}) {
        BOOST_TEST_CONTEXT(locks::state_name(s)) {
            BOOST_TEST((locks::parse_state(locks::state_name(s)) == s));
        }
    }
    for (StepState s : {StepState::passed, StepState::failed, StepState::skipped,
                        StepState::cancelled, StepState::running}) {
        BOOST_TEST_CONTEXT(step_state_name(s)) {
            BOOST_TEST((parse_step_state(step_state_name(s)) == s));
        }
    }
    for (RunResult r : {RunResult::success, RunResult::failed, RunResult::cancelled}) {
        BOOST_TEST_CONTEXT(run_result_name(r)) {
            BOOST_TEST((parse_run_result(run_result_name(r)) == r));
        }
    }
    using kube::EventType;
    for (EventType t :
         {EventType::added, EventType::modified, EventType::deleted, EventType::bookmark}) {
        BOOST_TEST_CONTEXT(kube::event_type_name(t)) {
            BOOST_TEST((kube::parse_event_type(kube::event_type_name(t)) == t));
        }
    }
    BOOST_TEST(!kube::parse_event_type("ERROR").has_value());
    using lint::Severity;
    for (Severity s : {Severity::info, Severity::warning, Severity::error, Severity::critical}) {
        BOOST_TEST_CONTEXT(lint::severity_name(s)) {
            BOOST_TEST((lint::parse_severity(lint::severity_name(s)) == s));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
