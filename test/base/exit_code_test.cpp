// The one Status -> exit code table (runner/base/exit_code.h) against the rules each
// command had before it (cmd_lock's and cmd_generate's exit_for, the session checks of
// cmd_gate and upgrade, upgrade's is_infra, gate_runner's, unlock's GitLab checks): the
// table changed no command's exit code.
#include <boost/test/unit_test.hpp>

#include "runner/base/exit_code.h"

using namespace envgate;

namespace {

const Code k_all[] = {Code::invalid, Code::not_found,    Code::conflict,  Code::already_exists,
                      Code::gone,    Code::unauthorized, Code::forbidden, Code::transient,
                      Code::timeout, Code::cancelled,    Code::failed,    Code::io};

bool was_infra(Code c) {
    return c == Code::transient || c == Code::timeout || c == Code::io || c == Code::cancelled;
}

// Each stage's rule as its command wrote it before the table.
int before(Code c, Stage stage) {
    switch (stage) {
        case Stage::input:
            return c == Code::invalid || c == Code::not_found ? k_exit_usage : k_exit_infra;
        case Stage::connect:
            return c == Code::invalid ? k_exit_usage : k_exit_infra;
        case Stage::preflight:
            return was_infra(c) ? k_exit_infra : k_exit_usage;
        case Stage::gate:
            return c == Code::conflict  ? k_exit_failed
                   : c == Code::invalid ? k_exit_usage
                                        : k_exit_infra;
        case Stage::permission:
            return c == Code::transient ? k_exit_infra : k_exit_failed;
    }
    return -1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(exit_code)

// Given every code in every stage, then the table says what that stage's command said.
BOOST_AUTO_TEST_CASE(table_keeps_each_commands_exit_codes) {
    for (Stage stage :
         {Stage::input, Stage::connect, Stage::preflight, Stage::gate, Stage::permission}) {
        for (Code c : k_all) {
            BOOST_TEST_CONTEXT("code " << code_name(c) << ", stage " << static_cast<int>(stage)) {
                BOOST_TEST(exit_for(c, stage) == before(c, stage));
                BOOST_TEST(exit_for(Status(c, "x"), stage) == before(c, stage));
            }
        }
    }
}

// Given a Status without a stage, then it is read as input (the lock commands' rule).
BOOST_AUTO_TEST_CASE(default_stage_is_input) {
    BOOST_TEST(exit_for(Status(Code::not_found, "no such file")) == k_exit_usage);
    BOOST_TEST(exit_for(Status(Code::forbidden, "RBAC")) == k_exit_infra);
}

// Given the codes that say the infrastructure failed, then preflight is infra exactly
// for them (upgrade names the cluster for the same codes).
BOOST_AUTO_TEST_CASE(infrastructure_codes_match_preflight_column) {
    for (Code c : k_all) {
        BOOST_TEST_CONTEXT("code " << code_name(c)) {
            BOOST_TEST(is_infrastructure(c) == (exit_for(c, Stage::preflight) == k_exit_infra));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
