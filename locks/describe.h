// Sentences about a lock for people: who holds it and since when, the failure, and
// the exact unlock command. Shared by LockManager's wait lines and `envgate status`.
#pragma once

#include <string>

#include "locks/lock_record.h"

namespace envgate::locks {

// `envgate unlock NAME --reason "..." --expect-holder ID`, ready to paste.
std::string unlock_command(const LockRecord& record);

// "held by ID since T (4m10s ago), step deploy, job URL" or "free".
std::string describe_holder(const LockRecord& record, TimePoint now);

// "step deploy: MigrationsJobFailed: message (at T)"; empty when not failed.
std::string describe_failure(const LockRecord& record);

// "deploy: MigrationsJobFailed: message": the words the history keeps for a failure.
std::string failure_text(const Failure& failure);

// The failure a history entry quotes, as the policy wrote it: a `fail` entry's (without
// the note of policy release), a `vanished` one's, the one an `unlock` freed the lock
// from; empty for any other entry.
std::string failure_in(const Transition& transition);

// Quotes `text` for a POSIX shell when it needs it.
std::string shell_quote(const std::string& text);

}  // namespace envgate::locks
