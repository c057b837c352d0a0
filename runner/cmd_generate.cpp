#include "runner/cmd_generate.h"

#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/base/files.h"
#include "runner/config/config.h"
#include "runner/generate/git_diff.h"
#include "runner/generate/plan.h"
#include "runner/generate/render_child.h"

namespace envgate {
namespace {

int fail(Context& ctx, const Status& status) {
    ctx.err << "envgate generate: " << status.message() << "\n";
    return exit_for(status);
}

std::string env_or(Context& ctx, const std::string& name, const std::string& fallback) {
    auto v = ctx.getenv(name);
    return v && !v->empty() ? *v : fallback;
}

// --mode deploy and merge-request are taken as given; auto diffs only in merge-request
// pipelines and on branches that `ci` does not let deploy (plan.h: deploy_or_diff).
Result<ModeChoice> pipeline_mode(const GenerateOptions& o, const CiSettings& ci,
                                 const std::string& default_branch, Context& ctx) {
    if (o.mode == "deploy") {
        return ModeChoice{PipelineMode::deploy, ""};
    }
    if (o.mode == "merge-request") {
        return ModeChoice{PipelineMode::merge_request, ""};
    }
    if (o.mode != "auto") {
        return Status(Code::invalid, "--mode " + o.mode + ": use auto, deploy or merge-request");
    }
    if (ctx.getenv("CI_PIPELINE_SOURCE").value_or("") == "merge_request_event") {
        return ModeChoice{PipelineMode::merge_request, ""};
    }
    BranchFacts facts;
    if (auto branch = ctx.getenv("CI_COMMIT_BRANCH"); branch && !branch->empty()) {
        facts.branch = *branch;
    }
    facts.default_branch = default_branch;
    facts.ref_protected = ctx.getenv("CI_COMMIT_REF_PROTECTED").value_or("") == "true";
    facts.in_pipeline = ctx.getenv("GITLAB_CI").value_or("") == "true";
    return deploy_or_diff(ci, facts);
}

Result<JobStyle> job_style(const GenerateOptions& o) {
    if (o.jobs == "split") {
        return JobStyle::split;
    }
    if (o.jobs == "run") {
        return JobStyle::run;
    }
    return Status(Code::invalid, "--jobs " + o.jobs + ": use split or run");
}

// Also sets `changed` to the number of changed paths found.
Result<Plan> plan_for(const GenerateOptions& o, Context& ctx, std::size_t& changed) {
    TRY_ASSIGN(JobStyle style, job_style(o));
    TRY_ASSIGN(Config config, load_config(o.config_path));
    DiffRequest diff;
    diff.repo_dir = o.repo_dir;
    diff.base = o.base.value_or(env_or(ctx, "CI_COMMIT_BEFORE_SHA", ""));
    diff.head = o.head.value_or(env_or(ctx, "CI_COMMIT_SHA", "HEAD"));
    diff.default_branch = o.default_branch.value_or(env_or(ctx, "CI_DEFAULT_BRANCH", "main"));
    TRY_ASSIGN(ModeChoice mode, pipeline_mode(o, config.ci, diff.default_branch, ctx));
    if (!mode.why.empty()) {
        ctx.err << "envgate generate: diff only, no lock: " << mode.why << "\n";
    }
    TRY_ASSIGN(ChangeSet change, diff_changed_paths(diff));
    ctx.err << "envgate generate: " << change.note << "\n";
    for (const auto& [from, to] : change.renamed) {
        ctx.err << "envgate generate: renamed " << from << " -> " << to << " (both count)\n";
    }
    changed = change.paths.size();
    const PlanHeader header{.config_path = o.config_path,
                            .base = change.base,
                            .head = change.head,
                            .note = change.note,
                            .mode = mode.mode,
                            .mode_reason = mode.why,
                            .style = style};
    return make_plan(config, {header, change.paths, change.all_environments, o.environments});
}

void describe(const Plan& plan, std::size_t changed, Context& ctx) {
    if (plan.environments.empty()) {
        ctx.err << "envgate generate: " << changed
                << " changed path(s), no environment affected: a no-op child pipeline\n";
        return;
    }
    for (const auto& env : plan.environments) {
        ctx.err << "envgate generate: " << env.name << ": "
                << (env.matched_paths.empty()
                        ? std::string("counts as changed (no usable base)")
                        : std::to_string(env.matched_paths.size()) + " changed path(s), e.g. " +
                              env.matched_paths.front())
                << "\n";
    }
}

}  // namespace

int run_generate(const GenerateOptions& options, Context& ctx) {
    std::size_t changed = 0;
    auto plan = plan_for(options, ctx, changed);
    if (!plan) {
        return fail(ctx, plan.status());
    }
    describe(*plan, changed, ctx);
    Status written = write_file_atomic(options.out_path, render_child_pipeline(*plan));
    if (!written.is_ok()) {
        return fail(ctx, written);
    }
    ctx.err << "envgate generate: wrote " << options.out_path << "\n";
    return k_exit_success;
}

}  // namespace envgate
