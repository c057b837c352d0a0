#include "runner/base/exit_code.h"

#include <array>
#include <cstddef>

namespace envgate {
namespace {

constexpr int U = k_exit_usage;
constexpr int F = k_exit_failed;
constexpr int I = k_exit_infra;

constexpr std::size_t k_codes = static_cast<std::size_t>(Code::io) + 1;
constexpr std::size_t k_stages = static_cast<std::size_t>(Stage::permission) + 1;

// One row per Code, one column per Stage. Where two stages differ, each column keeps
// the exit codes its commands had before the table (and their tests assert).
//                                                input connect preflight gate permission
constexpr std::array<std::array<int, k_stages>, k_codes> k_table{{
    /* ok             */ {k_exit_success, k_exit_success, k_exit_success, k_exit_success,
                          k_exit_success},
    /* invalid        */ {U, U, U, U, F},
    /* not_found      */ {U, I, U, I, F},
    /* conflict       */ {I, I, U, F, F},
    /* already_exists */ {I, I, U, I, F},
    /* gone           */ {I, I, U, I, F},
    /* unauthorized   */ {I, I, U, I, F},
    /* forbidden      */ {I, I, U, I, F},
    /* transient      */ {I, I, I, I, I},
    /* timeout        */ {I, I, I, I, F},
    /* cancelled      */ {I, I, I, I, F},
    /* failed         */ {I, I, U, I, F},
    /* io             */ {I, I, I, I, F},
}};

}  // namespace

int exit_for(Code code, Stage stage) {
    return k_table[static_cast<std::size_t>(code)][static_cast<std::size_t>(stage)];
}

int exit_for(const Status& status, Stage stage) {
    return exit_for(status.code(), stage);
}

bool is_infrastructure(Code code) {
    return code == Code::transient || code == Code::timeout || code == Code::io ||
           code == Code::cancelled;
}

}  // namespace envgate
