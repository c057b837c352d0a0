// Internals shared by the two halves of the lock policy (policy.cpp: acquire and
// observations; policy_ops.cpp: the holder's and the administrator's operations).
#pragma once

#include <string>

#include "locks/policy.h"

namespace envgate::locks::detail {

Decision refuse(Refusal why, std::string message);
Decision with_write(Outcome outcome, LockRecord next, std::string message);
std::string holder_id(const LockRecord& r);

Decision decide_holder_op(const LockRecord& record, const Request& rq, TimePoint now);
Decision decide_admin_op(const LockRecord& record, const Request& rq, TimePoint now);

}  // namespace envgate::locks::detail
