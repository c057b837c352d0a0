// The exit codes of every envgate command, in one place. ci-templates/README.md
// documents them so pipelines can key `allow_failure: exit_codes:` on them.
#pragma once

namespace envgate {

enum ExitStatus : int {
    k_exit_success = 0,            // the command did what was asked
    k_exit_failed = 1,             // the upgrade failed: a gate or a step failed, or a refusal
    k_exit_usage = 2,              // usage or configuration error; nothing was touched
    k_exit_lock_not_obtained = 3,  // lock held (or held after a failure) past the wait
    k_exit_infra = 4,              // the API stayed unreachable or refusing after retries
};

// 128 + N: ended by signal N, after reports and the failure policy ran.
constexpr int exit_for_signal(int signal_number) {
    return 128 + signal_number;
}

}  // namespace envgate
