#include "runner/run/access_review.h"

#include <nlohmann/json.hpp>

namespace envgate {

std::vector<AccessNeed> run_access_needs(const std::string& gate_namespace,
                                         const std::optional<std::string>& lease_namespace) {
    std::vector<AccessNeed> needs;
    for (const char* verb : {"create", "get", "list", "watch", "patch"}) {
        needs.push_back({verb, "batch", "jobs", "", gate_namespace, true});
    }
    for (const char* verb : {"list", "watch"}) {
        needs.push_back({verb, "", "pods", "", gate_namespace, true});
    }
    needs.push_back({"get", "", "pods", "log", gate_namespace, true});
    needs.push_back({"create", "events.k8s.io", "events", "", gate_namespace, false});
    if (lease_namespace) {
        for (const char* verb : {"get", "create", "update", "watch"}) {
            needs.push_back({verb, "coordination.k8s.io", "leases", "", *lease_namespace, true});
        }
    }
    return needs;
}

std::string describe_need(const AccessNeed& need) {
    std::string resource = need.resource + (need.group.empty() ? "" : "." + need.group);
    if (!need.subresource.empty()) {
        resource = need.resource + "/" + need.subresource;
    }
    return need.verb + " " + resource + " in namespace " + need.namespace_;
}

Result<std::vector<AccessNeed>> denied_needs(kube::KubeApi& api,
                                             const std::vector<AccessNeed>& needs) {
    const kube::ResourceRef reviews{"authorization.k8s.io/v1", "selfsubjectaccessreviews", "", ""};
    std::vector<AccessNeed> denied;
    for (const AccessNeed& need : needs) {
        nlohmann::json attributes = {{"namespace", need.namespace_},
                                     {"verb", need.verb},
                                     {"group", need.group},
                                     {"resource", need.resource}};
        if (!need.subresource.empty()) {
            attributes["subresource"] = need.subresource;
        }
        nlohmann::json review = {{"apiVersion", "authorization.k8s.io/v1"},
                                 {"kind", "SelfSubjectAccessReview"},
                                 {"spec", {{"resourceAttributes", attributes}}}};
        auto answer = api.create(reviews, review);
        if (!answer.is_ok()) {
            if (answer.status().code() == Code::not_found) {
                return denied;  // no authorization API on this server: nothing to ask
            }
            return answer.status();
        }
        const nlohmann::json* status = answer->contains("status") ? &(*answer)["status"] : nullptr;
        if (status != nullptr && status->is_object() && status->contains("allowed") &&
            (*status)["allowed"].is_boolean() && !(*status)["allowed"].get<bool>()) {
            denied.push_back(need);
        }
    }
    return denied;
}

}  // namespace envgate
