// Status -> exit code, in one table (runner/base/exit_code.cpp). Every command that ends
// on a Status asks exit_for(); no other file maps a Code to an exit status
// (scripts/check-layers fails on one that does). The stage says what the command was
// doing, because one code means different things there: a missing lock store path is
// the caller's mistake (2), a Job conflicting with ours in the middle of a gate is a
// failed upgrade (1), an unreachable GitLab while checking who may unlock is a refusal
// unless it is the network's fault (4).
#pragma once

#include "runner/base/exit_status.h"
#include "runner/base/vocab/status.h"

namespace envgate {

enum class Stage {
    input,       // arguments, envgate.yml, a lock store: invalid and not_found are usage (2)
    connect,     // opening the cluster session: only a bad kubeconfig (invalid) is usage
    preflight,   // before the lock (dry run, access review): an answer is usage, none is infra
    gate,        // a gate's API call: a conflicting Job is a failed upgrade (1)
    permission,  // asking GitLab who may unlock: a refusal (1), or infra when unreachable
};

// The exit status for a command that ends on `status` (not ok) during `stage`.
int exit_for(const Status& status, Stage stage = Stage::input);
int exit_for(Code code, Stage stage);

// Whether `code` says the infrastructure failed (unreachable, timed out, cut off), not
// that it answered: errors of this kind name the cluster they could not reach.
bool is_infrastructure(Code code);

}  // namespace envgate
