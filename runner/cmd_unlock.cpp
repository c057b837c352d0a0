#include "runner/cmd_unlock.h"

#include <algorithm>
#include <ostream>

#include "locks/describe.h"
#include "locks/identity.h"
#include "locks/policy.h"
#include "runner/base/exit_code.h"
#include "runner/base/secrets.h"
#include "runner/config/config.h"
#include "runner/config/config_gitlab.h"
#include "runner/connect/gitlab_identity.h"
#include "runner/connect/gitlab_members.h"
#include "runner/connect/lock_target.h"

namespace envgate {
namespace {

constexpr const char* k_token_variable = "ENVGATE_GITLAB_TOKEN";

std::vector<std::string> groups_of(const std::vector<std::string>& unlockers) {
    std::vector<std::string> groups;
    for (const auto& u : unlockers) {
        if (u.starts_with("@") && u.size() > 1) {
            groups.push_back(u);
        }
    }
    return groups;
}

std::string joined(const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) {
        text += (text.empty() ? "" : ", ") + item;
    }
    return text;
}

// "alice, bob, or an active member of @sre-oncall", for refusals.
std::string who_may(const std::vector<std::string>& unlockers) {
    std::vector<std::string> users;
    for (const auto& u : unlockers) {
        if (!u.starts_with("@")) {
            users.push_back(u);
        }
    }
    std::vector<std::string> groups = groups_of(unlockers);
    if (users.empty() && groups.empty()) {
        return "nobody: unlockers is empty";
    }
    std::string text = joined(users);
    if (!groups.empty()) {
        text +=
            (text.empty() ? "" : ", or ") + std::string("an active member of ") + joined(groups);
    }
    return text;
}

std::string env_value(const Context& ctx, const char* name) {
    auto v = ctx.getenv(name);
    return v ? *v : std::string();
}

// A GitLab CI job, by any variable the runner sets: a job that unsets or changes CI is
// still a job, and is held to the CI rule.
bool in_gitlab_job(const Context& ctx) {
    for (const char* name :
         {"CI", "GITLAB_CI", "CI_JOB_ID", "CI_JOB_TOKEN", "CI_SERVER_URL", "GITLAB_USER_LOGIN"}) {
        if (ctx.getenv(name)) {
            return true;
        }
    }
    return false;
}

// Who runs this job, as GitLab says (GET /api/v4/job with CI_JOB_TOKEN, to the pinned
// server only), not as the job's own GITLAB_USER_LOGIN says. Returns 0 and sets
// `user`, else the exit status.
int verified_job_user(const std::string& env, GroupMembers& gitlab, JobUser& user, Context& ctx) {
    const std::string job_token = env_value(ctx, "CI_JOB_TOKEN");
    if (job_token.empty()) {
        ctx.err << "envgate unlock: may not unlock " << env
                << " from CI: CI_JOB_TOKEN is not set, so GitLab cannot say who runs this job "
                   "(GITLAB_USER_LOGIN is the job's own variable, not proof)\n";
        return k_exit_failed;
    }
    auto asked = gitlab.job_user(job_token);
    if (!asked.is_ok()) {
        ctx.err << "envgate unlock: may not unlock " << env
                << " from CI: GitLab could not say who runs this job: " << asked.status().message()
                << "\n";
        return exit_for(asked.status(), Stage::permission);
    }
    user = std::move(asked).value();
    return 0;
}

// Who runs this job, as the GitLab ID token in `settings.variable` says: a JWT whose
// signature the pinned server's keys verify. No job token is sent anywhere. Returns 0
// and sets `user`, else the exit status.
int id_token_user(const std::string& env, const GitLabServer& pinned, GroupMembers& gitlab,
                  JobUser& user, Context& ctx) {
    const IdTokenSettings& settings = *pinned.id_token;
    const std::string jwt = env_value(ctx, settings.variable.c_str());
    if (jwt.empty()) {
        ctx.err << "envgate unlock: may not unlock " << env << " from CI: " << settings.variable
                << " is not set: give the job an ID token (id_tokens: { " << settings.variable
                << ": { aud: " << settings.audience
                << " } }; the unlock component does), as gitlab.id_token in envgate.yml says\n";
        return k_exit_failed;
    }
    add_secret(jwt);
    auto keys = gitlab.signing_keys();
    if (!keys.is_ok()) {
        ctx.err << "envgate unlock: may not unlock " << env
                << " from CI: the GitLab server's signing keys could not be read: "
                << keys.status().message() << "\n";
        return exit_for(keys.status(), Stage::permission);
    }
    IdTokenPolicy policy{pinned.url, settings.audience, settings.require_protected_ref,
                         settings.require_protected_environment};
    auto claims = verify_id_token(jwt, *keys, policy, ctx.clock.now());
    if (!claims.is_ok()) {
        ctx.err << "envgate unlock: may not unlock " << env << " from CI: " << settings.variable
                << ": " << claims.status().message() << "\n";
        return k_exit_failed;
    }
    user.username = claims->user_login;
    user.id = claims->user_id.value_or(0);
    ctx.err << "envgate unlock: the ID token of " << pinned.url << " names " << user.username
            << (claims->project_path.empty() ? "" : " in " + claims->project_path)
            << (claims->ref.empty() ? "" : " on " + claims->ref)
            << (claims->ref_protected ? " (protected)" : "")
            << (claims->environment.empty() ? "" : ", environment " + claims->environment)
            << (claims->environment_protected ? " (protected)" : "") << "\n";
    return 0;
}

// The GitLab server this job may ask: envgate.yml's, never the job's CI_SERVER_URL,
// which only has to agree with it. Returns 0, else the exit status.
int check_pinned_server(const std::string& env, const GitLabServer& pinned, Context& ctx) {
    if (pinned.url.empty()) {
        ctx.err << "envgate unlock: may not unlock " << env
                << " from CI: envgate.yml does not name the GitLab server to ask who runs this "
                   "job (a job can point CI_SERVER_URL at a server of its own). Add:\n"
                   "  gitlab:\n"
                   "    url: https://gitlab.example.com   # your GitLab\n";
        return k_exit_usage;
    }
    const std::string claimed = env_value(ctx, "CI_SERVER_URL");
    if (!claimed.empty()) {
        auto url = normalized_gitlab_url(claimed);
        if (!url.is_ok() || *url != pinned.url) {
            ctx.err << "envgate unlock: may not unlock " << env << " from CI: this job's "
                    << "CI_SERVER_URL is " << claimed << ", but envgate.yml names gitlab.url "
                    << pinned.url << "; envgate asks only the GitLab envgate.yml names\n";
            return k_exit_failed;
        }
    }
    return 0;
}

// The CI rule. Returns 0 when allowed (and `actor` is the login GitLab named), else the
// exit status.
int authorize_in_ci(const std::string& env, std::string& actor,
                    const std::vector<std::string>& unlockers, const GitLabServer& pinned,
                    Context& ctx) {
    if (int refused = check_pinned_server(env, pinned, ctx)) {
        return refused;
    }
    const std::string token = env_value(ctx, k_token_variable);
    auto made = ctx.env.gitlab({pinned.url, token, pinned.ca_file});
    if (!made.is_ok()) {
        ctx.err << "envgate unlock: may not unlock " << env
                << " from CI: " << made.status().message() << "\n";
        return k_exit_usage;
    }
    JobUser user;
    int refused = pinned.id_token ? id_token_user(env, pinned, **made, user, ctx)
                                  : verified_job_user(env, **made, user, ctx);
    if (refused != 0) {
        return refused;
    }
    const std::string claimed = env_value(ctx, "GITLAB_USER_LOGIN");
    if (!claimed.empty() && claimed != user.username) {
        ctx.err << "envgate unlock: GITLAB_USER_LOGIN says " << claimed
                << ", GitLab says this job runs as " << user.username << ": " << user.username
                << " is checked\n";
    }
    actor = user.username;
    GroupMembers* members = token.empty() ? nullptr : made->get();
    std::optional<std::int64_t> id;
    if (user.id != 0) {
        id = user.id;
    }
    UnlockerCheck check = check_unlocker(actor, id, unlockers, members);
    if (!check.allowed) {
        ctx.err << "envgate unlock: " << actor << " may not unlock " << env
                << " from CI: " << check.refusal << "\n";
        return check.exit;
    }
    ctx.err << "envgate unlock: " << actor << " may unlock " << env << ": " << check.how << "\n";
    return 0;
}

}  // namespace

bool may_unlock(const std::string& login, const std::vector<std::string>& unlockers) {
    return !login.empty() && !login.starts_with("@") &&
           std::find(unlockers.begin(), unlockers.end(), login) != unlockers.end();
}

UnlockerCheck check_unlocker(const std::string& login, std::optional<std::int64_t> user_id,
                             const std::vector<std::string>& unlockers, GroupMembers* members) {
    UnlockerCheck c;
    if (may_unlock(login, unlockers)) {
        c.allowed = true;
        c.how = "listed in unlockers";
        return c;
    }
    const std::vector<std::string> groups = groups_of(unlockers);
    const std::string may = " Who may: " + who_may(unlockers) + ".";
    if (login.empty() || login.starts_with("@")) {
        c.refusal = "GITLAB_USER_LOGIN is not a GitLab login." + may;
        return c;
    }
    if (groups.empty()) {
        c.refusal = "not listed in unlockers." + may;
        return c;
    }
    if (members == nullptr) {
        c.refusal = std::string("not listed by login, and group entries (") + joined(groups) +
                    ") are checked through the GitLab API, which needs " + k_token_variable +
                    ": a token with the read_api scope, as a masked CI/CD variable." + may;
        return c;
    }
    if (!user_id) {
        c.refusal = "GITLAB_USER_ID is not set, so group membership cannot be checked." + may;
        return c;
    }
    std::string errors;
    for (const auto& group : groups) {
        auto member = members->is_member(group.substr(1), *user_id);
        if (member.is_ok() && *member) {
            c.allowed = true;
            c.how = "an active member of " + group;
            return c;
        }
        if (!member.is_ok()) {
            errors += (errors.empty() ? "" : "; ") + member.status().message();
        }
    }
    if (!errors.empty()) {
        c.exit = k_exit_infra;
        c.refusal = "group membership could not be checked (" + errors +
                    "), and a membership GitLab does not confirm does not count." + may;
        return c;
    }
    c.refusal = "not listed by login and not an active member of " + joined(groups) + "." + may;
    return c;
}

int run_unlock(const UnlockOptions& o, Context& ctx) {
    if (locks::is_blank_text(o.reason)) {
        ctx.err << "envgate unlock: --reason TEXT is required, and not blank (it is kept in the "
                   "lock history)\n";
        return k_exit_usage;
    }
    if (o.output != "text" && o.output != "json") {
        ctx.err << "envgate unlock: --output must be text or json\n";
        return k_exit_usage;
    }
    auto config = load_config_or_say(o.config_path, ctx.err);
    if (!config) {
        return k_exit_usage;
    }
    int exit = k_exit_usage;
    auto target = lock_target(*config, o.env, ctx, exit,
                              {o.kubeconfig, std::nullopt, o.context, o.namespace_});
    if (!target) {
        return exit;
    }
    std::string actor = locks::acting_user(ctx.getenv);
    if (in_gitlab_job(ctx)) {
        if (int refused = authorize_in_ci(o.env, actor, target->unlockers, config->gitlab, ctx)) {
            return refused;
        }
    } else if (!target->local_unlock) {
        ctx.err << "envgate unlock: " << o.env
                << " is unlocked from GitLab CI (its manual unlock job), where GitLab says who "
                   "runs it. To unlock it from here, with the lock store's credentials, set "
                   "lock: { local_unlock: true } for it in envgate.yml\n";
        return k_exit_failed;
    }
    locks::LockManager manager(*target->store, ctx.clock, ctx.err, ctx.pending_signal);
    auto d = manager.unlock(o.env, actor, o.reason, o.expect_holder);
    if (!d.is_ok()) {
        auto current = target->store->read(o.env);
        if (!current.is_ok() && current.status().code() == Code::invalid) {
            ctx.err << "envgate unlock: lock " << o.env
                    << " not unlocked: its record cannot be read: " << current.status().message()
                    << "\n"
                    << repair_instructions(*config, o.env);
        } else {
            ctx.err << "envgate unlock: " << d.status().message() << "\n";
        }
        return exit_for(d.status());
    }
    if (d->outcome == locks::Outcome::refused) {
        ctx.err << "envgate unlock: lock " << o.env << " not unlocked: " << d->message << "\n";
        return d->refusal == locks::Refusal::reason_required ? k_exit_usage : k_exit_failed;
    }
    print_lock_result(
        ctx, *target, "unlock",
        "lock " + o.env + ": " + d->message + "; recorded as " + actor + ": " + o.reason,
        o.output == "json");
    return k_exit_success;
}

}  // namespace envgate
