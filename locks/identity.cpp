#include "locks/identity.h"

#include <pwd.h>
#include <unistd.h>

#include <charconv>

namespace envgate::locks {
namespace {

std::string env_or(const GetEnv& getenv, const char* name, std::string fallback = {}) {
    auto v = getenv(name);
    return v && !v->empty() ? *v : fallback;
}

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') {
        return "localhost";
    }
    return buf;
}

std::string os_user(const GetEnv& getenv) {
    std::string name = env_or(getenv, "USER", env_or(getenv, "LOGNAME"));
    if (name.empty()) {
        const passwd* pw = ::getpwuid(::getuid());
        name = pw != nullptr && pw->pw_name != nullptr ? pw->pw_name : "unknown";
    }
    return name;
}

}  // namespace

bool in_ci(const GetEnv& getenv) {
    return env_or(getenv, "CI") == "true";
}

Holder holder_from_env(const GetEnv& getenv, const std::optional<std::string>& override_id) {
    Holder h;
    std::string project = env_or(getenv, "CI_PROJECT_PATH");
    std::string pipeline = env_or(getenv, "CI_PIPELINE_ID");
    if (in_ci(getenv) && !project.empty() && !pipeline.empty()) {
        h.id = project + "#" + pipeline;
        h.project = project;
        h.pipeline_url = env_or(getenv, "CI_PIPELINE_URL");
        h.job_url = env_or(getenv, "CI_JOB_URL");
        h.user = env_or(getenv, "GITLAB_USER_LOGIN");
        std::int64_t id = 0;
        auto [ptr, ec] = std::from_chars(pipeline.data(), pipeline.data() + pipeline.size(), id);
        if (ec == std::errc() && ptr == pipeline.data() + pipeline.size()) {
            h.pipeline_id = id;
        }
        if (auto created = parse_rfc3339(env_or(getenv, "CI_PIPELINE_CREATED_AT"))) {
            h.created_at = *created;
        }
    } else {
        h.user = os_user(getenv);
        h.id = "local:" + h.user + "@" + host_name();
    }
    if (override_id && !override_id->empty()) {
        h.id = *override_id;
    }
    return h;
}

Status check_holder_override(const GetEnv& getenv, const std::optional<std::string>& override_id) {
    if (!override_id || !in_ci(getenv)) {
        return Status::ok();
    }
    std::string project = env_or(getenv, "CI_PROJECT_PATH");
    std::string pipeline = env_or(getenv, "CI_PIPELINE_ID");
    std::string self = project.empty() || pipeline.empty() ? std::string("this pipeline")
                                                           : project + "#" + pipeline;
    return Status(Code::invalid,
                  "--holder \"" + *override_id +
                      "\" is refused in GitLab CI: a job acts only as its own pipeline (" + self +
                      "); drop --holder (to free another pipeline's lock, use envgate unlock "
                      "with a reason)");
}

std::string acting_user(const GetEnv& getenv) {
    if (in_ci(getenv)) {
        return env_or(getenv, "GITLAB_USER_LOGIN", "unknown");
    }
    return os_user(getenv);
}

}  // namespace envgate::locks
