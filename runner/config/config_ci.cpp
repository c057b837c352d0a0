#include "runner/config/config_ci.h"

#include <fmt/format.h>

#include <algorithm>

#include "runner/config/glob.h"

namespace envgate {
namespace {

const std::vector<std::string> k_ci_keys = {
    "image", "tags", "interruptible", "timeout", "deployment_tiers", "deploy_branches"};

// The child pipeline's image is the generate job's (the component's `image` input),
// so that the two cannot differ; an old `ci.image` is named, not ignored.
void reject_image(const YAML::Node& node, YamlFields& f) {
    f.error(f.where(node), "ci.image",
            "no longer read: the child pipeline runs in the generate job's image, the "
            "component's `image` input; remove this line");
}

void read_tags(const YAML::Node& node, YamlFields& f, CiSettings& out) {
    auto tags = f.read_string_list(node, "ci.tags");
    for (size_t i = 0; tags && i < tags->size(); ++i) {
        if ((*tags)[i].empty()) {
            f.error(f.where(node[i]), fmt::format("ci.tags[{}]", i), "must not be empty");
            return;
        }
    }
    out.tags = tags.value_or(out.tags);
}

void read_interruptible(const YAML::Node& node, YamlFields& f, CiSettings& out) {
    const std::string text = node.IsScalar() ? node.Scalar() : "";
    if (text == "true" || text == "false") {
        out.interruptible = text == "true";
        return;
    }
    f.error(
        f.where(node), "ci.interruptible",
        "expected true or false, got " + (node.IsScalar() ? "\"" + text + "\"" : node_kind(node)));
}

void read_tiers(const YAML::Node& node, const std::vector<Environment>& environments, YamlFields& f,
                CiSettings& out) {
    if (!f.expect_map(node, "ci.deployment_tiers")) {
        return;
    }
    std::vector<std::string> names;
    for (const auto& env : environments) {
        names.push_back(env.name);
    }
    f.check_keys(node, "ci.deployment_tiers", names);
    for (const auto& kv : node) {
        const std::string env = kv.first.Scalar();
        if (std::find(names.begin(), names.end(), env) == names.end()) {
            continue;  // reported by check_keys
        }
        const std::string field = "ci.deployment_tiers." + env;
        if (auto i = f.read_choice(kv.second, field, deployment_tier_names())) {
            out.deployment_tiers[env] = deployment_tier_names()[*i];
        }
    }
}

// `protected`, or a list of branch globs (glob.h: `*` stays within one '/' segment).
void read_deploy_branches(const YAML::Node& node, YamlFields& f, CiSettings& out) {
    const char* field = "ci.deploy_branches";
    if (node.IsScalar()) {
        if (node.Scalar() == "protected") {
            out.deploy_protected = true;
        } else {
            f.error(f.where(node), field,
                    "\"" + node.Scalar() +
                        "\": expected protected or a list of branches, e.g. [main, \"release/*\"]");
        }
        return;
    }
    auto branches = f.read_string_list(node, field);
    if (!branches) {
        return;
    }
    if (branches->empty()) {
        f.error(f.where(node), field,
                "must not be empty; leave it out to deploy from the default branch alone");
        return;
    }
    for (size_t i = 0; i < branches->size(); ++i) {
        const std::string& b = (*branches)[i];
        std::string why = b.empty() ? "must not be empty" : glob_error(b);
        if (!why.empty()) {
            f.error(f.where(node[i]), fmt::format("{}[{}]", field, i),
                    b.empty() ? why : "\"" + b + "\": " + why);
            return;
        }
    }
    out.deploy_branches = *branches;
}

}  // namespace

const std::vector<std::string>& deployment_tier_names() {
    static const std::vector<std::string> names = {"production", "staging", "testing",
                                                   "development", "other"};
    return names;
}

void read_ci_section(const YAML::Node& node, const std::vector<Environment>& environments,
                     YamlFields& f, CiSettings& out) {
    if (!node.IsDefined() || !f.expect_map(node, "ci")) {
        return;
    }
    f.check_keys(node, "ci", k_ci_keys);
    if (node["image"]) {
        reject_image(node["image"], f);
    }
    if (node["tags"]) {
        read_tags(node["tags"], f, out);
    }
    if (node["interruptible"]) {
        read_interruptible(node["interruptible"], f, out);
    }
    if (node["timeout"]) {
        if (auto d = f.read_duration(node["timeout"], "ci.timeout", std::chrono::minutes(1))) {
            out.timeout = *d;
        }
    }
    if (node["deployment_tiers"]) {
        read_tiers(node["deployment_tiers"], environments, f, out);
    }
    if (node["deploy_branches"]) {
        read_deploy_branches(node["deploy_branches"], f, out);
    }
}

std::string gitlab_duration(Duration d) {
    using namespace std::chrono;
    const long total = static_cast<long>(duration_cast<seconds>(d).count());
    const long parts[] = {total / 3600, total % 3600 / 60, total % 60};
    const char* units[] = {"h", "m", "s"};
    std::string out;
    for (size_t i = 0; i < 3; ++i) {
        if (parts[i] != 0) {
            out += (out.empty() ? "" : " ") + std::to_string(parts[i]) + units[i];
        }
    }
    return out.empty() ? "0s" : out;
}

}  // namespace envgate
