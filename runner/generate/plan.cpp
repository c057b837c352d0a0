#include "runner/generate/plan.h"

#include <algorithm>
#include <map>

#include "runner/config/glob.h"
#include "runner/config/run_order.h"

namespace envgate {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) {
        out += (out.empty() ? "" : ", ") + s;
    }
    return out;
}

// The changed paths any of `env`'s globs match, in the order of `index`'s paths.
std::vector<std::string> matching_paths(const Environment& env, PathIndex& index,
                                        const std::vector<std::string>& changed) {
    std::vector<std::size_t> hits;
    for (const auto& glob : env.paths) {
        std::vector<std::size_t> more = index.matching(Glob(glob));
        hits.insert(hits.end(), more.begin(), more.end());
    }
    std::sort(hits.begin(), hits.end());
    hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
    std::vector<std::string> out;
    out.reserve(hits.size());
    for (std::size_t i : hits) {
        out.push_back(changed[i]);
    }
    return out;
}

// Each gate and step of `config` but diff, in the order a run takes them.
std::vector<PlannedStep> sequence_of(const Config& config) {
    std::vector<PlannedStep> out;
    for (const RunEntry& e : run_order(config)) {
        if (e.name == "diff") {
            continue;
        }
        out.push_back({e.name, e.kind == EntryKind::gate});
    }
    return out;
}

}  // namespace

Result<std::vector<std::string>> promotion_order(const Config& config) {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < config.environments.size(); ++i) {
        index[config.environments[i].name] = i;
    }
    for (const auto& env : config.environments) {
        for (const auto& dep : env.after) {
            if (index.count(dep) == 0) {
                return Status(Code::invalid, "environment " + env.name + ": `after` names " + dep +
                                                 ", which is not an environment");
            }
        }
    }
    std::vector<std::string> order;
    std::vector<bool> done(config.environments.size(), false);
    while (order.size() < config.environments.size()) {
        bool progressed = false;
        for (std::size_t i = 0; i < config.environments.size() && !progressed; ++i) {
            const Environment& env = config.environments[i];
            bool ready =
                !done[i] && std::all_of(env.after.begin(), env.after.end(),
                                        [&](const std::string& d) { return done[index[d]]; });
            if (ready) {
                done[i] = true;
                order.push_back(env.name);
                progressed = true;
            }
        }
        if (!progressed) {
            std::vector<std::string> left;
            for (std::size_t i = 0; i < done.size(); ++i) {
                if (!done[i]) {
                    left.push_back(config.environments[i].name);
                }
            }
            return Status(Code::invalid, "the `after` lists form a cycle among: " + join(left));
        }
    }
    return order;
}

ModeChoice deploy_or_diff(const CiSettings& ci, const BranchFacts& facts) {
    auto diff_only = [](std::string why) { return ModeChoice{PipelineMode::merge_request, why}; };
    if (!facts.branch) {
        return facts.in_pipeline ? diff_only("not a branch pipeline (CI_COMMIT_BRANCH is not set)")
                                 : ModeChoice{};
    }
    const std::string& branch = *facts.branch;
    if (ci.deploy_protected) {
        return facts.ref_protected ? ModeChoice{}
                                   : diff_only("branch \"" + branch +
                                               "\" is not protected (ci.deploy_branches: "
                                               "protected)");
    }
    if (ci.deploy_branches.empty()) {
        return branch == facts.default_branch
                   ? ModeChoice{}
                   : diff_only("branch \"" + branch + "\" is not the default branch \"" +
                               facts.default_branch +
                               "\"; ci.deploy_branches in envgate.yml names the branches "
                               "that deploy");
    }
    for (const auto& pattern : ci.deploy_branches) {
        if (glob_match(pattern, branch)) {
            return {};
        }
    }
    return diff_only("branch \"" + branch + "\" matches none of ci.deploy_branches (" +
                     join(ci.deploy_branches) + ")");
}

Result<Plan> make_plan(const Config& config, const PlanRequest& request) {
    for (const auto& name : request.only) {
        if (config.find_environment(name) == nullptr) {
            return Status(Code::invalid, "--env " + name + ": no such environment in " +
                                             config.path + unknown_environment_hint(config, name));
        }
    }
    TRY_ASSIGN(std::vector<std::string> order, promotion_order(config));
    Plan plan;
    static_cast<PlanHeader&>(plan) = request;
    PathIndex index(request.changed_paths);
    for (const auto& name : order) {
        if (!request.only.empty() && !contains(request.only, name)) {
            continue;
        }
        const Environment& env = *config.find_environment(name);
        std::vector<std::string> matched = matching_paths(env, index, request.changed_paths);
        if (request.all_environments || !matched.empty()) {
            plan.environments.push_back({name, std::move(matched)});
        }
    }
    if (auto diff = config.steps.find("diff"); diff != config.steps.end()) {
        plan.diff_step = diff->second.run;
    }
    plan.sequence = sequence_of(config);
    plan.ci = config.ci;
    return plan;
}

}  // namespace envgate
