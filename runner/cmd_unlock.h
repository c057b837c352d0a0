// `envgate unlock ENV --reason TEXT [--expect-holder ID]`: the manual unlock of a
// held or failed lock, recording who and why. In CI only `unlockers` may run it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/context.h"

namespace envgate {

struct UnlockOptions {
    std::string env;
    std::string reason;
    std::optional<std::string> expect_holder;
    std::string config_path = "envgate.yml";
};

int run_unlock(const UnlockOptions& options, Context& ctx);

// In CI: whether `login` may unlock, given `unlockers`. Logins match exactly;
// group entries ("@sre-oncall") cannot be checked offline and match nobody (a
// membership check through the GitLab API with CI_JOB_TOKEN is future work).
bool may_unlock(const std::string& login, const std::vector<std::string>& unlockers);

}  // namespace envgate
