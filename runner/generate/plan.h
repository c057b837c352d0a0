// What the generator decides before it writes anything: which environments a set
// of changed paths touches, in promotion order, and the jobs each one gets. Pure:
// the git diff (git_diff.h) and the YAML rendering (render_child.h) sit apart.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/status.h"
#include "runner/config/config.h"

namespace envgate {

// Deploy pipelines lock and change environments; merge-request pipelines only
// diff, take no lock, and warn when the environment is held or failed.
enum class PipelineMode { deploy, merge_request };

// `split`: lock acquire, diff, gates and steps as separate jobs per environment;
// `run`: one `envgate run --env X` job per environment.
enum class JobStyle { split, run };

// What a pipeline says of its branch, from GitLab's predefined variables.
struct BranchFacts {
    std::optional<std::string> branch;  // CI_COMMIT_BRANCH: unset on tag and MR pipelines
    std::string default_branch;         // CI_DEFAULT_BRANCH
    bool ref_protected = false;         // CI_COMMIT_REF_PROTECTED is "true"
    bool in_pipeline = false;           // GITLAB_CI is "true"
};

struct ModeChoice {
    PipelineMode mode = PipelineMode::deploy;
    std::string why;  // why a pipeline that is no merge request's only diffs; "" if it deploys
};

// Whether a pipeline that is no merge request's deploys: one on a branch that `ci`
// lets deploy (`deploy_branches`; by default the default branch alone) does; one on
// any other branch, or in a pipeline without a branch (a tag's), only diffs. Outside
// a pipeline, with no branch given, it deploys: a person writing the file to read it.
ModeChoice deploy_or_diff(const CiSettings& ci, const BranchFacts& facts);

struct PlannedEnvironment {
    std::string name;
    std::vector<std::string> matched_paths;  // the changed paths its globs matched
};

// One gate or step of each environment's run, after diff (runner/config/run_order.h).
struct PlannedStep {
    std::string name;   // pre-migrations, deploy, seed-check, ...
    bool gate = false;  // each runs as `envgate run --only NAME`, which reads the config
};

// Where a plan comes from and how its jobs run: what the request asks and the plan
// carries unchanged to the child pipeline (its header comment, its jobs' commands).
struct PlanHeader {
    std::string config_path;  // as the generated jobs pass it to `--config`
    std::string base;         // the commit diffed from ("" when every environment)
    std::string head;
    std::string note;  // how the base was chosen, one line
    PipelineMode mode = PipelineMode::deploy;
    std::string mode_reason;  // why a pipeline that is no merge request's only diffs
    JobStyle style = JobStyle::split;
};

struct Plan : PlanHeader {
    std::vector<PlannedEnvironment> environments;  // promotion order; empty: no change
    std::optional<std::string> diff_step;          // envgate.yml `steps.diff`
    std::vector<PlannedStep> sequence;             // every other gate and step, in run order
    CiSettings ci;  // envgate.yml `ci:`: the child's `default:` and deployment tiers
};

struct PlanRequest : PlanHeader {  // the header is copied to the Plan
    std::vector<std::string> changed_paths;
    bool all_environments = false;  // no usable base: every environment counts as changed
    std::vector<std::string> only;  // if not empty, keep only these environments
};

// The names of every environment of `config`, each after those it lists in
// `after`: a topological order that keeps the config's order among independent
// environments (stable). An unknown name in `after` or a cycle is `invalid`.
Result<std::vector<std::string>> promotion_order(const Config& config);

// The environments whose `paths` match a changed path (or all of them), filtered by
// `request.only`, in promotion order, with the gates and steps of `config`. An
// unknown name in `only` is `invalid`.
Result<Plan> make_plan(const Config& config, const PlanRequest& request);

}  // namespace envgate
