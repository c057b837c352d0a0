#include "runner/cmd_unlock.h"

#include <algorithm>
#include <ostream>

#include "locks/identity.h"
#include "runner/cmd_lock.h"
#include "runner/exit_status.h"

namespace envgate {
namespace {

// "alice, bob; groups @sre-oncall are not checked yet", for the refusal message.
std::string who_may(const std::vector<std::string>& unlockers) {
    std::string users;
    std::string groups;
    for (const auto& u : unlockers) {
        std::string& list = u.starts_with("@") ? groups : users;
        list += (list.empty() ? "" : ", ") + u;
    }
    std::string text = users.empty() ? "no GitLab login is listed in unlockers" : users;
    if (!groups.empty()) {
        text += " (group entries " + groups +
                " cannot be checked from a job yet; list the logins themselves)";
    }
    return text;
}

}  // namespace

bool may_unlock(const std::string& login, const std::vector<std::string>& unlockers) {
    return !login.empty() && !login.starts_with("@") &&
           std::find(unlockers.begin(), unlockers.end(), login) != unlockers.end();
}

int run_unlock(const UnlockOptions& o, Context& ctx) {
    if (o.reason.empty()) {
        ctx.err << "envgate unlock: --reason TEXT is required (it is kept in the lock history)\n";
        return k_exit_usage;
    }
    int exit = k_exit_usage;
    auto target = resolve_lock(o.config_path, o.env, ctx, exit);
    if (!target) {
        return exit;
    }
    std::string actor = locks::acting_user(ctx.getenv);
    if (locks::in_ci(ctx.getenv) && !may_unlock(actor, target->unlockers)) {
        ctx.err << "envgate unlock: " << actor << " may not unlock " << o.env
                << " from CI. Who may: " << who_may(target->unlockers) << "\n";
        return k_exit_failed;
    }
    locks::LockManager manager(*target->store, ctx.clock, ctx.err, ctx.pending_signal);
    auto d = manager.unlock(o.env, actor, o.reason, o.expect_holder);
    if (!d.is_ok()) {
        ctx.err << "envgate unlock: " << d.status().message() << "\n";
        return exit_for(d.status());
    }
    if (d->outcome == locks::Outcome::refused) {
        ctx.err << "envgate unlock: lock " << o.env << " not unlocked: " << d->message << "\n";
        return d->refusal == locks::Refusal::reason_required ? k_exit_usage : k_exit_failed;
    }
    ctx.out << "lock " << o.env << ": " << d->message << "; recorded as " << actor << ": "
            << o.reason << "\n";
    return k_exit_success;
}

}  // namespace envgate
