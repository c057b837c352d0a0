// `envgate unlock ENV --reason TEXT [--expect-holder ID]`: the manual unlock of a
// held or failed lock, recording who and why. In CI only `unlockers` may run it:
// listed logins, and active members of listed `@group` entries (GitLab API), the user
// vouched for by the GitLab server envgate.yml pins (`gitlab:`), never by one a job
// variable names: a verified ID token, or that server's answer for the job token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/connect/context.h"

namespace envgate {

struct UnlockOptions {
    std::string env;
    std::string reason;
    std::optional<std::string> expect_holder;
    std::string config_path = "envgate.yml";
    std::optional<std::string> kubeconfig;  // the kubernetes lock store's cluster
    std::optional<std::string> context;     // --context: instead of the environment's
    std::optional<std::string> namespace_;  // -n: the Leases' namespace, instead of the config's
    std::string output = "text";            // -o text | json
};

int run_unlock(const UnlockOptions& options, Context& ctx);

// Whether `login` is listed by name in `unlockers` (group entries never match here).
bool may_unlock(const std::string& login, const std::vector<std::string>& unlockers);

class GroupMembers;

// The verdict of the CI unlock rule.
struct UnlockerCheck {
    bool allowed = false;
    std::string how;      // allowed: "listed in unlockers", "a member of @sre-oncall"
    std::string refusal;  // refused: why, and who may
    int exit = 1;         // refused: 1, or 4 when GitLab could not be asked
};

// In CI: may `login` (GitLab user `user_id`) unlock? Logins match exactly; each
// `@group` entry asks `members` in turn (null: no token, so groups cannot be checked
// and the refusal says how to enable them). Fails closed: a membership GitLab could
// not confirm does not count.
UnlockerCheck check_unlocker(const std::string& login, std::optional<std::int64_t> user_id,
                             const std::vector<std::string>& unlockers, GroupMembers* members);

struct Config;
// What to run when the record of lock `name` cannot be read: the command that shows
// it and the one that clears it by hand (envgate never overwrites what it cannot read).
std::string repair_instructions(const Config& config, const std::string& name);

}  // namespace envgate
