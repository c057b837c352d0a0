// Who is asking for a lock: in GitLab CI the pipeline (CI_PROJECT_PATH and
// CI_PIPELINE_ID, so every job of one pipeline re-enters), else `local:USER@HOST`.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "locks/lock_record.h"

namespace envgate::locks {

using GetEnv = std::function<std::optional<std::string>(const std::string&)>;

bool in_ci(const GetEnv& getenv);

// The holder for this process; `override_id` (--holder) replaces the id only. Callers
// first ask check_holder_override: in CI no flag may name another holder.
Holder holder_from_env(const GetEnv& getenv, const std::optional<std::string>& override_id);

// Code::invalid when `override_id` (--holder) is given inside GitLab CI: there the
// holder is always the pipeline, so a job cannot act as another pipeline's holder.
Status check_holder_override(const GetEnv& getenv, const std::optional<std::string>& override_id);

// The person acting (unlock): GITLAB_USER_LOGIN in CI, else the OS user.
std::string acting_user(const GetEnv& getenv);

}  // namespace envgate::locks
