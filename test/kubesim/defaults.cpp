// Create/update defaulting and validation (the API server's strategy for each kind):
// see resources.h. Messages follow the API server's wording.
#include <algorithm>
#include <regex>
#include <set>

#include "test/kubesim/resources.h"
#include "test/kubesim/store.h"

namespace kubesim {

using nlohmann::json;

namespace {

Status invalid(const ResourceInfo& info, const json& obj, const std::string& field,
               const std::string& what) {
    std::string name = obj["metadata"].value("name", "");
    std::string kind = info.group.empty() ? info.kind : info.kind + "." + info.group;
    return Status(Code::invalid, kind + " \"" + name + "\" is invalid: " + field + ": " + what);
}

Status unknown_fields(const json& obj, const std::set<std::string>& known,
                      const std::string& prefix) {
    if (!obj.is_object()) {
        return Status::ok();
    }
    for (auto& [k, v] : obj.items()) {
        if (known.count(k) == 0) {
            return Status(Code::failed,
                          "strict decoding error: unknown field \"" + prefix + k + "\"");
        }
    }
    return Status::ok();
}

Status check_strict(const ResourceInfo& info, const json& obj) {
    if (info.kind == "Event") {
        return Status::ok();
    }
    TRY(unknown_fields(obj, {"apiVersion", "kind", "metadata", "spec", "status"}, ""));
    if (info.kind == "Job") {
        TRY(unknown_fields(
            obj.value("spec", json::object()),
            {"parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy",
             "successPolicy", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes",
             "selector", "manualSelector", "template", "ttlSecondsAfterFinished", "completionMode",
             "suspend", "podReplacementPolicy", "managedBy"},
            "spec."));
    }
    if (info.kind == "Lease") {
        TRY(unknown_fields(obj.value("spec", json::object()),
                           {"holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime",
                            "leaseTransitions", "strategy", "preferredHolder"},
                           "spec."));
    }
    return Status::ok();
}

// The Lease spec rules of the API server's validation (coordination/validation):
// durations and transition counts are positive, a bad one is a 422.
Status validate_lease(const ResourceInfo& info, const json& obj) {
    const json spec = obj.value("spec", json::object());
    auto number = [&](const char* key, std::int64_t min, const char* rule) -> Status {
        if (!spec.contains(key) || spec[key].is_null()) {
            return Status::ok();
        }
        if (!spec[key].is_number_integer() || spec[key].get<std::int64_t>() < min) {
            return invalid(info, obj, std::string("spec.") + key,
                           "Invalid value: " + spec[key].dump() + ": " + rule);
        }
        return Status::ok();
    };
    TRY(number("leaseDurationSeconds", 1, "must be greater than 0"));
    return number("leaseTransitions", 0, "must be greater than or equal to 0");
}

void default_container(json& c) {
    if (!c.contains("terminationMessagePath")) {
        c["terminationMessagePath"] = "/dev/termination-log";
    }
    if (!c.contains("terminationMessagePolicy")) {
        c["terminationMessagePolicy"] = "File";
    }
    if (!c.contains("imagePullPolicy")) {
        std::string image = c.value("image", "");
        bool latest =
            image.find(':') == std::string::npos || image.substr(image.rfind(':')) == ":latest";
        c["imagePullPolicy"] = latest ? "Always" : "IfNotPresent";
    }
    if (!c.contains("resources")) {
        c["resources"] = json::object();
    }
}

Status default_pod_spec(const ResourceInfo& info, const json& obj, json& spec,
                        const std::string& field) {
    if (!spec.contains("containers") || !spec["containers"].is_array() ||
        spec["containers"].empty()) {
        return invalid(info, obj, field + ".containers", "Required value");
    }
    for (const char* list : {"initContainers", "containers"}) {
        if (spec.contains(list)) {
            for (auto& c : spec[list]) {
                if (c.value("name", "").empty()) {
                    return invalid(info, obj, field + "." + list + "[0].name", "Required value");
                }
                default_container(c);
            }
        }
    }
    if (!spec.contains("restartPolicy")) {
        spec["restartPolicy"] = "Always";
    }
    if (!spec.contains("terminationGracePeriodSeconds")) {
        spec["terminationGracePeriodSeconds"] = 30;
    }
    const json defaults = {{"dnsPolicy", "ClusterFirst"},
                           {"schedulerName", "default-scheduler"},
                           {"securityContext", json::object()}};
    for (auto& [k, v] : defaults.items()) {
        if (!spec.contains(k)) {
            spec[k] = v;
        }
    }
    return Status::ok();
}

Status check_types(const ResourceInfo& info, const json& obj) {
    const json& spec = obj.value("spec", json::object());
    if (!spec.is_object()) {
        return invalid(info, obj, "spec", "Invalid value: must be an object");
    }
    for (const char* f : {"backoffLimit", "completions", "parallelism", "activeDeadlineSeconds",
                          "ttlSecondsAfterFinished"}) {
        if (spec.contains(f) && (!spec[f].is_number_integer() || spec[f].get<int64_t>() < 0)) {
            return invalid(info, obj, std::string("spec.") + f,
                           "Invalid value: must be a non-negative integer");
        }
    }
    const json& tmpl = spec.value("template", json::object());
    const json& pod_spec = tmpl.is_object() ? tmpl.value("spec", json::object()) : json();
    if (!pod_spec.is_object()) {
        return invalid(info, obj, "spec.template.spec", "Required value");
    }
    for (const char* list : {"initContainers", "containers"}) {
        for (const auto& c : pod_spec.value(list, json::array())) {
            for (const char* f : {"command", "args"}) {
                if (c.contains(f) && (!c[f].is_array() ||
                                      !std::all_of(c[f].begin(), c[f].end(),
                                                   [](const json& a) { return a.is_string(); }))) {
                    return invalid(info, obj, std::string("spec.template.spec.") + list + "." + f,
                                   "Invalid value: must be a list of strings");
                }
            }
        }
    }
    return Status::ok();
}

Status prepare_job(const ResourceInfo& info, json& obj) {
    TRY(check_types(info, obj));
    json& meta = obj["metadata"];
    std::string uid = new_uid();
    meta["uid"] = uid;
    json& spec = obj["spec"];
    json& tmpl = spec["template"];
    TRY(default_pod_spec(info, obj, tmpl["spec"], "spec.template.spec"));
    std::string rp = tmpl["spec"].value("restartPolicy", "");
    if (rp == "Always") {
        return invalid(info, obj, "spec.template.spec.restartPolicy",
                       "Unsupported value: \"Always\": supported values: \"OnFailure\", "
                       "\"Never\"");
    }
    if (spec.contains("podFailurePolicy") && rp != "Never") {
        return invalid(info, obj, "spec.template.spec.restartPolicy",
                       "Invalid value: \"" + rp +
                           "\": only \"Never\" is supported when podFailurePolicy is specified");
    }
    std::string name = meta.value("name", "");
    json labels = {{"batch.kubernetes.io/controller-uid", uid},
                   {"batch.kubernetes.io/job-name", name},
                   {"controller-uid", uid},
                   {"job-name", name}};
    json& tl = tmpl["metadata"]["labels"];
    for (auto& [k, v] : labels.items()) {
        tl[k] = v;
    }
    if (!meta.contains("labels")) {
        meta["labels"] = tl;
    }
    spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
    if (!spec.contains("backoffLimit") && spec.contains("backoffLimitPerIndex")) {
        spec["backoffLimit"] = 2147483647;  // SetDefaults_Job: the per-index limit rules
    }
    const json defaults = {{"backoffLimit", 6}, {"completions", 1},
                           {"parallelism", 1},  {"completionMode", "NonIndexed"},
                           {"suspend", false},  {"manualSelector", false}};
    for (auto& [k, v] : defaults.items()) {
        if (!spec.contains(k)) {
            spec[k] = v;
        }
    }
    spec.erase("manualSelector");
    if (!spec.contains("podReplacementPolicy")) {
        spec["podReplacementPolicy"] =
            spec.contains("podFailurePolicy") ? "Failed" : "TerminatingOrFailed";
    }
    obj["status"] = json::object();
    return Status::ok();
}

}  // namespace

Status prepare_create(const ResourceInfo& info, const std::string& ns, bool strict, json& obj) {
    if (!obj.is_object()) {
        return Status(Code::failed, "the body of the request was not a JSON object");
    }
    if (obj.contains("kind") && obj["kind"] != info.kind) {
        return Status(Code::failed, "the API version in the data (" + obj.value("apiVersion", "") +
                                        ") and kind (" + obj.value("kind", "") + ") do not match " +
                                        info.kind);
    }
    if (strict) {
        TRY(check_strict(info, obj));
    }
    obj["apiVersion"] = info.api_version();
    obj["kind"] = info.kind;
    json& meta = obj["metadata"];
    if (!meta.is_object()) {
        meta = json::object();
    }
    if (!meta.contains("name") && meta.contains("generateName")) {
        meta["name"] = meta["generateName"].get<std::string>() + new_uid().substr(0, 5);
    }
    std::string name = meta.value("name", "");
    static const std::regex k_dns(R"([a-z0-9]([-a-z0-9.]*[a-z0-9])?)");
    if (name.empty()) {
        return invalid(info, obj, "metadata.name",
                       "Required value: name or generateName is required");
    }
    if (!std::regex_match(name, k_dns) || name.size() > 253) {
        return invalid(info, obj, "metadata.name",
                       "Invalid value: \"" + name +
                           "\": a lowercase RFC 1123 subdomain must consist of lower case "
                           "alphanumeric characters, '-' or '.', and must start and end with an "
                           "alphanumeric character");
    }
    if (info.namespaced) {
        if (meta.contains("namespace") && meta["namespace"] != ns) {
            return Status(Code::failed,
                          "the namespace of the provided object does not match the namespace "
                          "sent on the request");
        }
        meta["namespace"] = ns;
    }
    for (const char* f : {"resourceVersion", "uid", "creationTimestamp", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "generation"}) {
        meta.erase(f);
    }
    if (info.kind == "Job") {
        return prepare_job(info, obj);
    }
    if (info.kind == "Pod") {
        TRY(default_pod_spec(info, obj, obj["spec"], "spec"));
        obj["spec"]["nodeName"] = obj["spec"].value("nodeName", "kubesim-node");
        obj["status"] = {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
    }
    if (info.kind == "Lease") {
        TRY(validate_lease(info, obj));
    }
    if (info.kind == "Namespace") {
        obj["spec"] = {{"finalizers", {"kubernetes"}}};
        obj["status"] = {{"phase", "Active"}};
    }
    return Status::ok();
}

Status prepare_update(const ResourceInfo& info, const json& old, json& obj) {
    if (!obj.is_object()) {
        return Status(Code::failed, "the body of the request was not a JSON object");
    }
    obj["apiVersion"] = info.api_version();
    obj["kind"] = info.kind;
    if (info.kind == "Lease") {
        TRY(validate_lease(info, obj));
    }
    if (info.kind == "Job") {
        obj["spec"]["selector"] = old["spec"]["selector"];
        if (obj["spec"].value("template", json()) != old["spec"]["template"]) {
            return invalid(info, obj, "spec.template", "Invalid value: field is immutable");
        }
    }
    if (info.kind == "Pod") {
        json a = obj.value("spec", json::object());
        json b = old["spec"];
        for (auto* s : {&a, &b}) {
            for (auto& c : (*s)["containers"]) {
                c.erase("image");
            }
        }
        if (a != b) {
            return invalid(info, obj, "spec",
                           "Forbidden: pod updates may not change fields other than "
                           "`spec.containers[*].image`, `spec.activeDeadlineSeconds` and "
                           "`spec.tolerations`");
        }
    }
    return Status::ok();
}

}  // namespace kubesim
