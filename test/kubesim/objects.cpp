// Shared object operations: see objects.h.
#include "test/kubesim/objects.h"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "runner/base/vocab/time.h"

namespace kubesim {

namespace {

std::string time_after(int64_t seconds) {
    auto t = std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    return envgate::format_rfc3339(t);
}

bool is_terminal(const json& pod) {
    std::string phase = pod["status"].value("phase", "");
    return phase == "Succeeded" || phase == "Failed";
}

// The API server's check before a delete (apiserver rest.BeforeDelete): the uid first,
// then the resourceVersion, each a Conflict in these words. The caller names the object.
Status check_preconditions(const json& meta, const DeleteOptions& options) {
    const std::string uid = meta.value("uid", "");
    if (!options.precondition_uid.empty() && options.precondition_uid != uid) {
        return Status(Code::conflict, "the UID in the precondition (" + options.precondition_uid +
                                          ") does not match the UID in record (" + uid +
                                          "). The object might have been deleted and then "
                                          "recreated");
    }
    const std::string rv = meta.value("resourceVersion", "");
    if (!options.precondition_rv.empty() && options.precondition_rv != rv) {
        return Status(Code::conflict, "the ResourceVersion in the precondition (" +
                                          options.precondition_rv +
                                          ") does not match the ResourceVersion in record (" + rv +
                                          "). The object might have been modified");
    }
    return Status::ok();
}

}  // namespace

Result<json> delete_object(Store& store, const std::string& resource, const std::string& ns,
                           const std::string& name, const DeleteOptions& options) {
    // Checked inside the store's one mutation, so no write comes between check and delete.
    return store.mutate(resource, ns, name, "", [&](json& obj) {
        json& meta = obj["metadata"];
        TRY(check_preconditions(meta, options));
        if (resource != "pods") {
            if (!meta.contains("deletionTimestamp")) {
                meta["deletionTimestamp"] = now_rfc3339();
                meta["deletionGracePeriodSeconds"] = 0;
            }
            return Status::ok();
        }
        int64_t grace = options.grace_seconds.value_or(
            obj["spec"].value("terminationGracePeriodSeconds", int64_t{30}));
        if (is_terminal(obj) || grace < 0) {
            grace = 0;
        }
        if (meta.contains("deletionGracePeriodSeconds") &&
            meta["deletionGracePeriodSeconds"].get<int64_t>() <= grace) {
            return Status::ok();  // a deletion already in progress is only ever shortened
        }
        meta["deletionTimestamp"] = time_after(grace);
        meta["deletionGracePeriodSeconds"] = grace;
        return Status::ok();
    });
}

Result<json> disrupt_pod(Store& store, const std::string& ns, const std::string& name,
                         const std::string& reason, const std::string& message) {
    auto st = store.mutate("pods", ns, name, "", [&](json& pod) {
        if (pod["metadata"].contains("deletionTimestamp")) {
            return Status::ok();
        }
        set_condition(pod["status"]["conditions"], {{"type", "DisruptionTarget"},
                                                    {"status", "True"},
                                                    {"reason", reason},
                                                    {"message", message}});
        return Status::ok();
    });
    if (!st) {
        return st;
    }
    return delete_object(store, "pods", ns, name, {});
}

void record_event(Store& store, const json& involved, const std::string& type,
                  const std::string& reason, const std::string& message,
                  const std::string& component) {
    const json& meta = involved["metadata"];
    std::string now = now_rfc3339();
    // The recorder names events "<object>.<UnixNano in hex>", so names sort by time.
    static std::atomic<uint64_t> last{0};
    auto nanos = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
    uint64_t prev = last.load();
    while (!last.compare_exchange_weak(prev, std::max(nanos, prev + 1))) {
    }
    char suffix[32];
    snprintf(suffix, sizeof suffix, "%llx",
             static_cast<unsigned long long>(std::max(nanos, prev + 1)));
    json ev = {{"apiVersion", "v1"},
               {"kind", "Event"},
               {"metadata",
                {{"name", meta.value("name", "") + "." + std::string(suffix)},
                 {"namespace", meta.value("namespace", "default")}}},
               {"involvedObject",
                {{"kind", involved.value("kind", "")},
                 {"namespace", meta.value("namespace", "")},
                 {"name", meta.value("name", "")},
                 {"uid", meta.value("uid", "")},
                 {"apiVersion", involved.value("apiVersion", "")},
                 {"resourceVersion", meta.value("resourceVersion", "")}}},
               {"reason", reason},
               {"message", message},
               {"source", {{"component", component}}},
               {"firstTimestamp", now},
               {"lastTimestamp", now},
               {"count", 1},
               {"type", type},
               {"eventTime", nullptr},
               {"reportingComponent", component},
               {"reportingInstance", ""}};
    if (component == "kubelet") {
        ev["source"]["host"] = "kubesim-node";
        ev["reportingInstance"] = "kubesim-node";
    }
    (void)store.create("events", std::move(ev));
}

void set_condition(json& conditions, const json& condition) {
    if (!conditions.is_array()) {
        conditions = json::array();
    }
    json c = condition;
    std::string now = now_rfc3339();
    for (auto& existing : conditions) {
        if (existing["type"] == c["type"]) {
            if (existing.value("status", "") == c.value("status", "")) {
                c["lastTransitionTime"] = existing.value("lastTransitionTime", now);
            } else {
                c["lastTransitionTime"] = now;
            }
            if (existing.contains("lastProbeTime")) {
                c["lastProbeTime"] = existing["lastProbeTime"];
            }
            existing = c;
            return;
        }
    }
    c["lastTransitionTime"] = now;
    conditions.push_back(c);
}

}  // namespace kubesim
