#include "gates/decode.h"

#include <charconv>

#include "gates/decode_json.h"
#include "gates/json_reader.h"

namespace envgate::gates {
namespace {

using namespace json_read;

Status read_kind(const json& j, const std::string& want) {
    std::string kind;
    TRY(read_string(j, "kind", "", kind));
    if (!kind.empty() && kind != want) {
        return {Code::invalid,
                ".kind: expected \"" + want + "\", got \"" + kind.substr(0, 40) + "\""};
    }
    return Status::ok();
}

// A Job's or a pod's condition.
constexpr auto k_condition_fields = std::tuple{
    field("type", &Condition::type, read_string), field("status", &Condition::status, read_string),
    field("reason", &Condition::reason, read_string),
    field("message", &Condition::message, read_string),
    field("lastTransitionTime", &Condition::last_transition_time, read_time)};

Status read_conditions(const json& obj, const std::string& path, std::vector<Condition>& out) {
    return read_array(obj, "conditions", path, [&](const json& item, const std::string& p) {
        Condition c;
        TRY(read_fields(item, p, k_condition_fields, c));
        out.push_back(std::move(c));
        return Status::ok();
    });
}

Status read_state(const json& obj, std::string_view key, const std::string& path,
                  ContainerState& s) {
    return read_object(obj, key, path, [&](const json& j, const std::string& p) {
        TRY(read_object(j, "waiting", p, [&](const json& w, const std::string& wp) {
            ContainerWaiting waiting;
            TRY(read_string(w, "reason", wp, waiting.reason));
            TRY(read_string(w, "message", wp, waiting.message));
            s.waiting = waiting;
            return Status::ok();
        }));
        TRY(read_object(j, "running", p, [&](const json&, const std::string&) {
            s.running = true;
            return Status::ok();
        }));
        return read_object(j, "terminated", p, [&](const json& t, const std::string& tp) {
            ContainerTerminated term;
            TRY(read_int(t, "exitCode", tp, term.exit_code));
            TRY(read_string(t, "reason", tp, term.reason));
            TRY(read_string(t, "message", tp, term.message));
            TRY(read_time(t, "finishedAt", tp, term.finished_at));
            s.terminated = term;
            return Status::ok();
        });
    });
}

Status read_container_statuses(const json& obj, std::string_view key, const std::string& path,
                               std::vector<ContainerStatus>& out) {
    return read_array(obj, key, path, [&](const json& item, const std::string& p) {
        TRY(expect_object(item, p));
        ContainerStatus c;
        TRY(read_string(item, "name", p, c.name));
        TRY(read_count(item, "restartCount", p, c.restart_count));
        TRY(read_state(item, "state", p, c.state));
        TRY(read_state(item, "lastState", p, c.last_state));
        out.push_back(std::move(c));
        return Status::ok();
    });
}

Status read_owner(const json& meta, const std::string& path, std::string& owner_uid) {
    return read_array(meta, "ownerReferences", path, [&](const json& item, const std::string& p) {
        TRY(expect_object(item, p));
        bool controller = false;
        std::string uid;
        TRY(read_bool(item, "controller", p, controller));
        TRY(read_string(item, "uid", p, uid));
        if (controller) {
            owner_uid = uid;
        }
        return Status::ok();
    });
}

// The controller reads these annotations leniently (a bad value is "unknown" or 0), so
// does the gate: they are written by the controller, but anyone may edit them.
Status read_index_annotations(const json& meta, const std::string& p, Pod& pod) {
    const json* a = field(meta, "annotations");
    if (a == nullptr) {
        return Status::ok();
    }
    TRY(expect_object(*a, child(p, "annotations")));
    auto number = [&](const char* key) -> std::optional<int> {
        const json* v = field(*a, key);
        if (v == nullptr || !v->is_string()) {
            return std::nullopt;
        }
        const std::string& text = v->get_ref<const std::string&>();
        int out = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        if (ec != std::errc() || end != text.data() + text.size() || out < 0) {
            return std::nullopt;
        }
        return out;
    };
    pod.completion_index = number("batch.kubernetes.io/job-completion-index");
    pod.index_failure_count = number("batch.kubernetes.io/job-index-failure-count").value_or(0);
    return Status::ok();
}

// metadata.resourceVersion as a number; 0 when absent or not decimal digits (the API
// server's versions are etcd revisions, one counter for every resource).
std::uint64_t resource_version_number(const json& meta) {
    const json* rv = field(meta, "resourceVersion");
    if (rv == nullptr || !rv->is_string()) {
        return 0;
    }
    const std::string& text = rv->get_ref<const std::string&>();
    std::uint64_t n = 0;
    auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
    return err == std::errc() && end == text.data() + text.size() ? n : 0;
}

Status read_pod(const json& j, const std::string& path, Pod& pod) {
    TRY(expect_object(j, path));
    TRY(read_object(j, "metadata", path, [&](const json& meta, const std::string& p) {
        TRY(read_string(meta, "name", p, pod.name));
        TRY(read_string(meta, "namespace", p, pod.namespace_));
        TRY(read_string(meta, "uid", p, pod.uid));
        pod.resource_version = resource_version_number(meta);
        TRY(read_string_map(meta, "labels", p, pod.labels));
        TRY(read_string_list(meta, "finalizers", p, pod.finalizers));
        TRY(read_time(meta, "deletionTimestamp", p, pod.deletion_timestamp));
        TRY(read_count(meta, "deletionGracePeriodSeconds", p, pod.deletion_grace_period_seconds));
        TRY(read_owner(meta, p, pod.owner_uid));
        return read_index_annotations(meta, p, pod);
    }));
    return read_object(j, "status", path, [&](const json& st, const std::string& p) {
        TRY(read_string(st, "phase", p, pod.phase));
        TRY(read_string(st, "reason", p, pod.reason));
        TRY(read_string(st, "message", p, pod.message));
        TRY(read_conditions(st, p, pod.conditions));
        TRY(read_container_statuses(st, "initContainerStatuses", p, pod.init_containers));
        return read_container_statuses(st, "containerStatuses", p, pod.containers);
    });
}

Status read_exit_rule(const json& j, const std::string& p, ExitCodeRule& rule) {
    TRY(expect_object(j, p));
    TRY(read_string(j, "containerName", p, rule.container_name));
    TRY(read_string(j, "operator", p, rule.op));
    return read_array(j, "values", p, [&](const json& item, const std::string& ip) {
        if (!item.is_number_integer()) {
            return type_error(ip, "an integer", item);
        }
        rule.values.push_back(item.get<int>());
        return Status::ok();
    });
}

Status read_failure_rule(const json& j, const std::string& p, PodFailureRule& rule) {
    TRY(expect_object(j, p));
    TRY(read_string(j, "action", p, rule.action));
    if (const json* e = field(j, "onExitCodes")) {
        rule.on_exit_codes.emplace();
        TRY(read_exit_rule(*e, child(p, "onExitCodes"), *rule.on_exit_codes));
    }
    return read_array(j, "onPodConditions", p, [&](const json& item, const std::string& ip) {
        TRY(expect_object(item, ip));
        PodConditionPattern c;
        TRY(read_string(item, "type", ip, c.type));
        TRY(read_string(item, "status", ip, c.status));
        rule.on_pod_conditions.push_back(std::move(c));
        return Status::ok();
    });
}

Status read_job_spec(const json& spec, const std::string& p, Job& job) {
    TRY(expect_object(spec, p));
    TRY(read_count(spec, "backoffLimit", p, job.backoff_limit));
    TRY(read_string(spec, "podReplacementPolicy", p, job.pod_replacement_policy));
    TRY(read_bool(spec, "suspend", p, job.suspend));
    TRY(read_string(spec, "managedBy", p, job.managed_by));
    std::string mode;
    TRY(read_string(spec, "completionMode", p, mode));
    job.indexed = mode == "Indexed";
    TRY(read_count(spec, "completions", p, job.completions));
    TRY(read_count(spec, "backoffLimitPerIndex", p, job.backoff_limit_per_index));
    TRY(read_count(spec, "maxFailedIndexes", p, job.max_failed_indexes));
    TRY(read_count(spec, "activeDeadlineSeconds", p, job.active_deadline_seconds));
    TRY(read_count(spec, "ttlSecondsAfterFinished", p, job.ttl_seconds_after_finished));
    TRY(read_object(spec, "selector", p, [&](const json& sel, const std::string& sp) {
        return read_string_map(sel, "matchLabels", sp, job.selector);
    }));
    TRY(read_object(spec, "template", p, [&](const json& tmpl, const std::string& tp) {
        return read_object(tmpl, "spec", tp, [&](const json& ps, const std::string& psp) {
            return read_string(ps, "restartPolicy", psp, job.restart_policy);
        });
    }));
    return read_object(spec, "podFailurePolicy", p, [&](const json& pfp, const std::string& pp) {
        job.pod_failure_policy.emplace();
        return read_array(pfp, "rules", pp, [&](const json& item, const std::string& ip) {
            PodFailureRule rule;
            TRY(read_failure_rule(item, ip, rule));
            job.pod_failure_policy->push_back(std::move(rule));
            return Status::ok();
        });
    });
}

Status read_job_status(const json& st, const std::string& p, Job& job) {
    TRY(expect_object(st, p));
    TRY(read_conditions(st, p, job.conditions));
    TRY(read_count(st, "active", p, job.active));
    TRY(read_count(st, "failed", p, job.failed));
    TRY(read_count(st, "succeeded", p, job.succeeded));
    TRY(read_string(st, "failedIndexes", p, job.failed_indexes));
    TRY(read_time(st, "startTime", p, job.start_time));
    return read_object(st, "uncountedTerminatedPods", p, [&](const json& u, const std::string& up) {
        return read_string_list(u, "failed", up, job.uncounted_failed);
    });
}

Status read_job(const json& j, Job& job) {
    TRY(expect_object(j, ""));
    TRY(read_kind(j, "Job"));
    TRY(read_object(j, "metadata", "", [&](const json& meta, const std::string& p) {
        TRY(read_string(meta, "name", p, job.name));
        TRY(read_string(meta, "namespace", p, job.namespace_));
        TRY(read_string(meta, "uid", p, job.uid));
        return read_string_map(meta, "annotations", p, job.annotations);
    }));
    if (const json* spec = field(j, "spec")) {
        TRY(read_job_spec(*spec, ".spec", job));
    }
    if (const json* st = field(j, "status")) {
        TRY(read_job_status(*st, ".status", job));
    }
    return Status::ok();
}

Status with_source(const Status& s, std::string_view source) {
    return s.is_ok() ? s : s.with_context(std::string(source));
}

}  // namespace

Result<Job> decode_job_json(const nlohmann::json& j, std::string_view source) {
    Job job;
    TRY(with_source(read_job(j, job), source));
    return job;
}

Result<Pod> decode_pod_json(const nlohmann::json& j, std::string_view source) {
    Pod pod;
    Status s = j.is_object() ? read_kind(j, "Pod") : Status::ok();
    if (s.is_ok()) {
        s = read_pod(j, "", pod);
    }
    TRY(with_source(s, source));
    return pod;
}

Result<std::vector<Pod>> decode_pods_json(const nlohmann::json& j, std::string_view source) {
    std::vector<Pod> pods;
    auto each = [&](const json& item, const std::string& p) {
        Pod pod;
        TRY(read_pod(item, p, pod));
        pods.push_back(std::move(pod));
        return Status::ok();
    };
    Status s;
    if (j.is_array()) {
        for (std::size_t i = 0; i < j.size() && s.is_ok(); ++i) {
            s = each(j[i], element("", i));
        }
    } else if (j.is_object()) {
        s = read_kind(j, "PodList");
        if (s.is_ok()) {
            s = read_array(j, "items", "", each);
        }
    } else {
        s = type_error("", "a PodList or an array of pods", j);
    }
    TRY(with_source(s, source));
    return pods;
}

Result<Job> decode_job(std::string_view text, std::string_view source) {
    TRY_ASSIGN(json j, parse(text, source));
    return decode_job_json(j, source);
}

Result<std::vector<Pod>> decode_pods(std::string_view text, std::string_view source) {
    TRY_ASSIGN(json j, parse(text, source));
    return decode_pods_json(j, source);
}

}  // namespace envgate::gates
