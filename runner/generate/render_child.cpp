#include "runner/generate/render_child.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "runner/base/vocab/shell_quote.h"
#include "runner/config/config_ci.h"
#include "runner/generate/plain_scalar.h"

namespace envgate {
namespace {

// Exit code of a merge-request diff job whose environment is locked: it is listed
// in the job's `allow_failure: exit_codes`, so the job passes with a warning.
constexpr int k_locked_warning_exit = 3;

// What `envgate lock fail` records when a job of the environment failed: the job
// that failed is in the pipeline the holder links to.
constexpr const char* k_fail_details =
    " --reason PipelineJobFailed --message \"a job of this environment failed in "
    "$CI_PIPELINE_URL\"";

// One job, as the renderer builds it before emitting.
struct Job {
    std::string name;
    std::string stage;
    std::string env;
    std::string action;  // environment:action
    std::string tier;    // environment:deployment_tier ("" = GitLab's guess from the name)
    std::vector<std::string> needs;
    std::vector<std::string> script;
    std::vector<std::string> after_script;
    std::string when;  // "" = default (on_success)
    bool reports = false;
    bool codequality = false;  // uploads k_lint_report as the Code Quality report
    bool warn_on_lock_exit = false;
};

constexpr const char* k_lint_report = "gl-code-quality-report.json";

std::string job_name(const std::string& env, const std::string& what) {
    return env + ":" + what;
}

std::string config_arg(const Plan& plan) {
    return "--config " + shell_quote(plan.config_path);
}

std::string lock_command(const Plan& plan, const std::string& verb, const std::string& lock) {
    return fmt::format("envgate lock {} {} {}", verb, lock, config_arg(plan));
}

// One gate or step of the environment's upgrade as one job: `envgate run --only` takes
// the lock (diff) or re-enters the pipeline's hold (the rest), renews it while the job
// runs, records a failure in the lock itself (so no later job is needed for that) and,
// on success, keeps the lock for the next job.
std::string run_only(const Plan& plan, const std::string& env, const std::string& step) {
    return fmt::format("envgate run --env {} --only {} {}", env, step, config_arg(plan));
}

// A job that did not succeed (cancelled, killed, timed out: envgate may not have settled
// the lock itself) fails the lock at once, as the environment's policy says. GitLab runs
// after_script on a cancel since 17.0 (CI_JOB_STATUS=canceled since runner 17.1) and
// never for a job cancelled before it started; a lock already failed by this pipeline,
// or not held by it, is left as it is.
std::string fail_unless_success(const Plan& plan, const std::string& env, const std::string& step) {
    return fmt::format(
        "if [ \"$CI_JOB_STATUS\" != \"success\" ]; then {} --step {} --reason "
        "JobNotSucceeded --message \"job $CI_JOB_NAME ended $CI_JOB_STATUS in $CI_JOB_URL\" "
        "|| true; fi",
        lock_command(plan, "fail", env), step);
}

std::string no_step(const std::string& step) {
    return fmt::format("echo \"envgate: no '{}' step in the config; nothing to run\"", step);
}

void emit_reports(YAML::Emitter& out) {
    out << YAML::Key << Text{"artifacts"} << YAML::Value << YAML::BeginMap;
    out << YAML::Key << Text{"when"} << YAML::Value << Text{"always"};
    out << YAML::Key << Text{"paths"} << YAML::Value << YAML::Flow << YAML::BeginSeq
        << "envgate-report/" << YAML::EndSeq;
    out << YAML::Key << Text{"reports"} << YAML::Value << YAML::BeginMap;
    out << YAML::Key << Text{"junit"} << YAML::Value << Text{"envgate-report/junit.xml"};
    out << YAML::Key << Text{"dotenv"} << YAML::Value << Text{"envgate-report/envgate.env"};
    out << YAML::Key << Text{"annotations"} << YAML::Value
        << Text{"envgate-report/annotations.json"};
    out << YAML::EndMap << YAML::EndMap;
}

void emit_lines(YAML::Emitter& out, const char* key, const std::vector<std::string>& lines) {
    out << YAML::Key << Text{key} << YAML::Value << YAML::BeginSeq;
    for (const auto& line : lines) {
        if (line.find('\n') != std::string::npos) {
            out << YAML::Literal << line;
        } else {
            out << Text{line};
        }
    }
    out << YAML::EndSeq;
}

void emit_job(YAML::Emitter& out, const Job& job) {
    // Job names hold ':'; quoting them keeps every YAML 1.1 parser from misreading.
    out << YAML::Key << YAML::DoubleQuoted << job.name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << Text{"stage"} << YAML::Value << Text{job.stage};
    if (!job.needs.empty()) {
        out << YAML::Key << Text{"needs"} << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& need : job.needs) {
            out << YAML::DoubleQuoted << need;
        }
        out << YAML::EndSeq;
    }
    if (!job.when.empty()) {
        out << YAML::Key << Text{"when"} << YAML::Value << Text{job.when};
    }
    if (job.warn_on_lock_exit) {
        out << YAML::Key << Text{"allow_failure"} << YAML::Value << YAML::BeginMap;
        out << YAML::Key << Text{"exit_codes"} << YAML::Value << YAML::Flow << YAML::BeginSeq
            << k_locked_warning_exit << YAML::EndSeq << YAML::EndMap;
    }
    if (!job.env.empty()) {
        out << YAML::Key << Text{"variables"} << YAML::Value << YAML::BeginMap;
        out << YAML::Key << Text{"ENVGATE_ENV"} << YAML::Value << Text{job.env} << YAML::EndMap;
        out << YAML::Key << Text{"environment"} << YAML::Value << YAML::BeginMap;
        out << YAML::Key << Text{"name"} << YAML::Value << Text{job.env};
        out << YAML::Key << Text{"action"} << YAML::Value << Text{job.action};
        if (!job.tier.empty()) {
            out << YAML::Key << Text{"deployment_tier"} << YAML::Value << Text{job.tier};
        }
        out << YAML::EndMap;
    }
    emit_lines(out, "script", job.script);
    if (!job.after_script.empty()) {
        emit_lines(out, "after_script", job.after_script);
    }
    if (job.reports) {
        emit_reports(out);
    }
    if (job.codequality) {
        out << YAML::Key << Text{"artifacts"} << YAML::Value << YAML::BeginMap;
        out << YAML::Key << Text{"when"} << YAML::Value << Text{"always"};
        out << YAML::Key << Text{"reports"} << YAML::Value << YAML::BeginMap;
        out << YAML::Key << Text{"codequality"} << YAML::Value << Text{k_lint_report}
            << YAML::EndMap;
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
}

Job env_job(const std::string& env, const std::string& what, const std::string& stage) {
    Job job;
    job.name = job_name(env, what);
    job.stage = stage;
    job.env = env;
    job.action = "prepare";
    return job;
}

// A job of the environment's chain that runs one gate or step with `envgate run --only`.
Job chain_job(const Plan& plan, const std::string& env, const std::string& name,
              const std::string& stage) {
    Job job = env_job(env, name, stage);
    job.script = {run_only(plan, env, name)};
    job.after_script = {fail_unless_success(plan, env, name)};
    job.reports = true;
    return job;
}

// The job of one gate or step after diff. Stages only move forward (a job may not need
// one of a later stage): what follows qa stays in its stage.
Job sequence_job(const Plan& plan, const std::string& env, const PlannedStep& s,
                 std::string& stage) {
    if (s.name == "qa") {
        stage = env + "-qa";  // `envgate run --only qa` takes the global qa lock too
    } else if (stage == env + "-diff") {
        stage = env + "-deploy";
    }
    Job job = chain_job(plan, env, s.name, stage);
    if (s.name == "qa") {  // and a qa job that did not succeed fails that lock too
        job.after_script.push_back(fail_unless_success(plan, "qa", "qa"));
    }
    job.action = s.name == "deploy" ? "start" : "prepare";
    return job;
}

// diff (takes the lock) -> each gate and step in run order (pre gates, deploy, post
// gates, qa and those envgate.yml adds), each needing the one before; then release on
// success and fail on any failure of those jobs.
std::vector<Job> split_jobs(const Plan& plan, const std::string& env) {
    std::vector<Job> jobs;
    auto chain = [&jobs](Job job) {
        job.needs = {jobs.back().name};
        jobs.push_back(std::move(job));
    };
    std::string stage = env + "-diff";
    jobs.push_back(chain_job(plan, env, "diff", stage));
    for (const auto& s : plan.sequence) {
        chain(sequence_job(plan, env, s, stage));
    }
    std::vector<std::string> all;
    for (const auto& job : jobs) {
        all.push_back(job.name);
    }
    Job release = env_job(env, "release", env + "-qa");
    release.script = {lock_command(plan, "release", env)};
    chain(std::move(release));
    Job fail = env_job(env, "fail", env + "-qa");
    fail.when = "on_failure";
    fail.needs = all;
    fail.script = {lock_command(plan, "fail", env) + k_fail_details};
    jobs.push_back(std::move(fail));
    return jobs;
}

std::vector<Job> run_jobs(const Plan& plan, const std::string& env) {
    Job run = env_job(env, "run", env + "-deploy");
    run.action = "start";
    run.script = {fmt::format("envgate run --env {} {}", env, config_arg(plan))};
    run.reports = true;
    return {run};
}

std::string locked_check(const Plan& plan, const std::string& env) {
    return fmt::format(
        "if envgate status {0} {1} --output json | grep -Eq '\"state\": *\"(held|failed)\"'; "
        "then\n"
        "  printf '\\033[1;33m%s\\033[0m\\n' \"WARNING: environment {0} is LOCKED (held or "
        "failed): a pipeline is changing it or failed on it.\"\n"
        "  printf '\\033[1;33m%s\\033[0m\\n' \"WARNING: this diff may include merged changes "
        "that are not applied yet.\"\n"
        "  touch .envgate-{0}-locked\n"
        "fi",
        env, config_arg(plan));
}

std::vector<Job> merge_request_jobs(const Plan& plan, const std::string& env) {
    Job job = env_job(env, "diff", "envgate-diff");
    job.warn_on_lock_exit = true;
    job.script = {fmt::format("envgate status {} {} || true", env, config_arg(plan)),
                  locked_check(plan, env), plan.diff_step.value_or(no_step("diff")),
                  fmt::format("if [ -e .envgate-{0}-locked ]; then echo \"envgate: {0} is locked; "
                              "ending with exit code {1} to flag this diff\"; exit {1}; fi",
                              env, k_locked_warning_exit)};
    return {job};
}

// Merge requests: `envgate lint` over the changed manifests the environments' paths
// matched (those still present), its findings in the merge request's Code Quality
// widget. nullopt when no changed path is a manifest.
std::optional<Job> lint_job(const Plan& plan) {
    std::vector<std::string> files;
    for (const auto& env : plan.environments) {
        for (const auto& p : env.matched_paths) {
            bool manifest = p.ends_with(".yaml") || p.ends_with(".yml") || p.ends_with(".json");
            if (manifest && std::find(files.begin(), files.end(), p) == files.end()) {
                files.push_back(p);
            }
        }
    }
    if (files.empty()) {
        return std::nullopt;
    }
    std::string list;
    for (const auto& f : files) {
        list += " " + shell_quote(f);
    }
    Job job;
    job.name = "envgate:lint";
    job.stage = "envgate-lint";
    job.script = {
        "set --; for f in" + list + "; do if [ -f \"$f\" ]; then set -- \"$@\" \"$f\"; fi; done",
        "if [ $# -eq 0 ]; then echo \"envgate: the changed manifests were deleted; "
        "nothing to lint\"; exit 0; fi",
        fmt::format("envgate lint \"$@\" {} --codequality {}", config_arg(plan), k_lint_report)};
    job.codequality = true;
    return job;
}

std::vector<Job> jobs_of(const Plan& plan, const std::string& env) {
    std::vector<Job> jobs = plan.mode == PipelineMode::merge_request ? merge_request_jobs(plan, env)
                            : plan.style == JobStyle::run            ? run_jobs(plan, env)
                                                                     : split_jobs(plan, env);
    auto tier = plan.ci.deployment_tiers.find(env);
    for (Job& job : jobs) {
        job.tier = tier == plan.ci.deployment_tiers.end() ? "" : tier->second;
    }
    return jobs;
}

// The child's image has one source, the generate job's own image (the component's
// `image` input): its trigger job forwards it as this variable, which GitLab expands
// in `image:name`. Unset (a trigger job of another making): the runner's image.
constexpr const char* k_child_image = "$ENVGATE_CHILD_IMAGE";

// `default:`: a child pipeline does not inherit the parent's. The image as above,
// the rest from envgate.yml `ci:`.
void emit_defaults(YAML::Emitter& out, const CiSettings& ci) {
    out << YAML::Key << Text{"default"} << YAML::Value << YAML::BeginMap;
    // The job's script needs a shell: an image's ENTRYPOINT (envgate's is envgate)
    // would be handed the script instead.
    out << YAML::Key << Text{"image"} << YAML::Value << YAML::BeginMap;
    out << YAML::Key << Text{"name"} << YAML::Value << Text{k_child_image};
    out << YAML::Key << Text{"entrypoint"} << YAML::Value << YAML::Flow << YAML::BeginSeq
        << YAML::DoubleQuoted << "" << YAML::EndSeq;
    out << YAML::EndMap;
    if (!ci.tags.empty()) {
        out << YAML::Key << Text{"tags"} << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& tag : ci.tags) {
            if (reads_as_non_string(tag)) {  // a runner tag `on` or `2` stays a string
                out << YAML::DoubleQuoted;
            }
            out << tag;
        }
        out << YAML::EndSeq;
    }
    if (ci.interruptible) {
        out << YAML::Key << Text{"interruptible"} << YAML::Value << *ci.interruptible;
    }
    if (ci.timeout) {
        out << YAML::Key << Text{"timeout"} << YAML::Value << Text{gitlab_duration(*ci.timeout)};
    }
    out << YAML::EndMap;
}

// Every stage a job uses, in the order the jobs come.
std::vector<std::string> stages_of(const std::vector<Job>& jobs) {
    std::vector<std::string> stages;
    for (const auto& job : jobs) {
        if (std::find(stages.begin(), stages.end(), job.stage) == stages.end()) {
            stages.push_back(job.stage);
        }
    }
    return stages;
}

Job nothing_changed(const Plan& plan) {
    Job job;
    job.name = "envgate:nothing-changed";
    job.stage = "envgate";
    std::string range = plan.base.empty() ? plan.head : plan.base + ".." + plan.head;
    job.script = {fmt::format(
        "echo \"envgate: no environment's paths match the changes of {}; nothing to do\"", range)};
    return job;
}

void emit_header(YAML::Emitter& out, const Plan& plan) {
    std::string envs;
    for (const auto& env : plan.environments) {
        envs += (envs.empty() ? "" : ", ") + env.name;
    }
    out << YAML::Comment(fmt::format(
        "Generated by `envgate generate` ({} pipeline); do not edit.\n{}base: {}\nhead: {}\n{}\n"
        "environments: {}",
        plan.mode == PipelineMode::deploy ? "deploy"
        : plan.mode_reason.empty()        ? "merge-request"
                                          : "diff-only",
        plan.mode_reason.empty() ? "" : "diff only, no lock: " + plan.mode_reason + "\n",
        plan.base.empty() ? "(none)" : plan.base, plan.head, plan.note,
        envs.empty() ? "(none)" : envs));
}

}  // namespace

std::string shell_quote(const std::string& word) {
    return quote_for_shell(
        word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:@%+=,-");
}

std::string render_child_pipeline(const Plan& plan) {
    std::vector<Job> jobs;
    for (const auto& env : plan.environments) {
        for (auto& job : jobs_of(plan, env.name)) {
            jobs.push_back(std::move(job));
        }
    }
    if (jobs.empty()) {
        jobs.push_back(nothing_changed(plan));
    } else if (auto lint =
                   plan.mode == PipelineMode::merge_request ? lint_job(plan) : std::nullopt) {
        jobs.push_back(std::move(*lint));
    }
    YAML::Emitter out;
    emit_header(out, plan);
    out << YAML::BeginMap;
    out << YAML::Key << Text{"stages"} << YAML::Value << YAML::BeginSeq;
    for (const auto& stage : stages_of(jobs)) {
        out << Text{stage};
    }
    out << YAML::EndSeq;
    emit_defaults(out, plan.ci);
    for (const auto& job : jobs) {
        emit_job(out, job);
    }
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace envgate
