// extract_objects: the Kubernetes object shapes (apps/v1, batch/v1, v1,
// autoscaling/v2) read field by field from a document tree into model.h's structs.
#include "runner/lint/model.h"

#include <fmt/format.h>

#include <charconv>

namespace envgate::lint {
namespace {

const std::map<std::string, WorkloadKind> k_workload_kinds = {
    {"Deployment", WorkloadKind::deployment},
    {"StatefulSet", WorkloadKind::stateful_set},
    {"DaemonSet", WorkloadKind::daemon_set},
    {"ReplicaSet", WorkloadKind::replica_set},
    {"Pod", WorkloadKind::pod},
    {"Job", WorkloadKind::job},
    {"CronJob", WorkloadKind::cron_job},
};

// Reads fields of one object, remembering the first shape error.
class Reader {
  public:
    explicit Reader(const std::string& file) : m_file(file) {}

    Location loc(const Node* n) const { return {m_file, n != nullptr ? n->pos : Position{}}; }
    const Status& status() const { return m_status; }

    // Where `key` of `parent` is written (the key, not its value), else the parent.
    Location key_loc(const Node* parent, std::string_view key) const {
        for (std::size_t i = 0;
             parent != nullptr && parent->is_map() && i + 1 < parent->items.size(); i += 2) {
            if (parent->items[i]->is_scalar() && parent->items[i]->value == key) {
                return loc(parent->items[i]);
            }
        }
        return loc(parent);
    }

    void fail(const Node* n, const std::string& field, const std::string& message) {
        if (m_status.is_ok()) {
            Position p = n != nullptr ? n->pos : Position{};
            m_status = Status(Code::invalid, fmt::format("{}:{}:{}: {}: {}", m_file, p.line,
                                                         p.column, field, message));
        }
    }

    // The map (or list) at `key` of `parent`, or nullptr when absent or null; an
    // error when it is something else.
    const Node* map(const Node* parent, std::string_view key, const std::string& field) {
        return typed(parent, key, field, Node::Kind::map, "expected a mapping");
    }

    const Node* seq(const Node* parent, std::string_view key, const std::string& field) {
        return typed(parent, key, field, Node::Kind::sequence, "expected a list");
    }

    std::string str(const Node* parent, std::string_view key, const std::string& field) {
        const Node* n = parent != nullptr ? parent->get(key) : nullptr;
        if (n == nullptr || n->kind == Node::Kind::null) {
            return "";
        }
        if (!n->is_scalar()) {
            fail(n, field, "expected a string");
            return "";
        }
        return n->value;
    }

    IntField integer(const Node* parent, std::string_view key, const std::string& field) {
        IntField out{std::nullopt, loc(parent)};
        const Node* n = parent != nullptr ? parent->get(key) : nullptr;
        if (n == nullptr || n->kind == Node::Kind::null) {
            return out;
        }
        out.loc = loc(n);
        std::int64_t v = 0;
        const std::string& s = n->text();
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (!n->is_scalar() || n->quoted || ec != std::errc() || end != s.data() + s.size()) {
            fail(n, field, "expected an integer");
            return out;
        }
        out.value = v;
        return out;
    }

    Text text_of(const Node* n) const {
        return {n->text(), loc(n), n->literal_block, n->block_column};
    }

    std::vector<Text> strings(const Node* parent, std::string_view key, const std::string& field) {
        std::vector<Text> out;
        const Node* list = seq(parent, key, field);
        for (std::size_t i = 0; list != nullptr && i < list->items.size(); ++i) {
            const Node* item = list->items[i];
            if (!item->is_scalar()) {
                fail(item, fmt::format("{}[{}]", field, i), "expected a string");
                continue;
            }
            out.push_back(text_of(item));
        }
        return out;
    }

  private:
    const Node* typed(const Node* parent, std::string_view key, const std::string& field,
                      Node::Kind kind, const char* expected) {
        const Node* n = parent != nullptr ? parent->get(key) : nullptr;
        if (n == nullptr || n->kind == Node::Kind::null) {
            return nullptr;
        }
        if (n->kind != kind) {
            fail(n, field, expected);
            return nullptr;
        }
        return n;
    }

    const std::string& m_file;
    Status m_status;
};

std::vector<EnvVar> read_env(Reader& r, const Node* c, const std::string& field) {
    std::vector<EnvVar> out;
    const Node* list = r.seq(c, "env", field + ".env");
    for (std::size_t i = 0; list != nullptr && i < list->items.size(); ++i) {
        const Node* e = list->items[i];
        std::string f = fmt::format("{}.env[{}]", field, i);
        if (!e->is_map()) {
            r.fail(e, f, "expected a mapping with name and value");
            continue;
        }
        EnvVar v{r.str(e, "name", f + ".name"), std::nullopt, r.loc(e)};
        if (e->get("value") != nullptr) {
            v.value = r.str(e, "value", f + ".value");
        }
        out.push_back(std::move(v));
    }
    return out;
}

void read_probes(Reader& r, const Node* c, const std::string& field, Container& out) {
    for (const char* kind : {"startupProbe", "readinessProbe", "livenessProbe"}) {
        std::string f = field + "." + kind;
        if (const Node* p = r.map(c, kind, f)) {
            out.probes.push_back(
                {kind, r.integer(p, "initialDelaySeconds", f + ".initialDelaySeconds"),
                 r.integer(p, "periodSeconds", f + ".periodSeconds"),
                 r.integer(p, "failureThreshold", f + ".failureThreshold"), r.loc(c->get(kind))});
        }
    }
}

void read_containers(Reader& r, const Node* pod_spec, const std::string& field, bool init,
                     Workload& w) {
    const char* key = init ? "initContainers" : "containers";
    const Node* list = r.seq(pod_spec, key, field + "." + key);
    for (std::size_t i = 0; list != nullptr && i < list->items.size(); ++i) {
        const Node* c = list->items[i];
        std::string f = fmt::format("{}.{}[{}]", field, key, i);
        if (!c->is_map()) {
            r.fail(c, f, "expected a mapping");
            continue;
        }
        Container out{r.str(c, "name", f + ".name"),
                      init,
                      r.str(c, "image", f + ".image"),
                      r.strings(c, "command", f + ".command"),
                      r.strings(c, "args", f + ".args"),
                      read_env(r, c, f),
                      {},
                      {},
                      r.loc(c)};
        read_probes(r, c, f, out);
        const Node* mounts = r.seq(c, "volumeMounts", f + ".volumeMounts");
        for (std::size_t j = 0; mounts != nullptr && j < mounts->items.size(); ++j) {
            const Node* m = mounts->items[j];
            std::string mf = fmt::format("{}.volumeMounts[{}]", f, j);
            out.mounts.push_back({r.str(m, "name", mf + ".name"),
                                  r.str(m, "mountPath", mf + ".mountPath"),
                                  r.str(m, "subPath", mf + ".subPath")});
        }
        w.containers.push_back(std::move(out));
    }
}

void read_volumes(Reader& r, const Node* pod_spec, const std::string& field, Workload& w) {
    const Node* list = r.seq(pod_spec, "volumes", field + ".volumes");
    for (std::size_t i = 0; list != nullptr && i < list->items.size(); ++i) {
        std::string f = fmt::format("{}.volumes[{}]", field, i);
        const Node* cm = r.map(list->items[i], "configMap", f + ".configMap");
        if (cm == nullptr) {
            continue;
        }
        ConfigMapVolume v{r.str(list->items[i], "name", f + ".name"),
                          r.str(cm, "name", f + ".configMap.name"),
                          {}};
        const Node* items = r.seq(cm, "items", f + ".configMap.items");
        for (std::size_t j = 0; items != nullptr && j < items->items.size(); ++j) {
            std::string itf = fmt::format("{}.configMap.items[{}]", f, j);
            v.items[r.str(items->items[j], "path", itf + ".path")] =
                r.str(items->items[j], "key", itf + ".key");
        }
        w.config_map_volumes.push_back(std::move(v));
    }
}

void read_pod_spec(Reader& r, const Node* pod_spec, const std::string& field, Workload& w) {
    if (pod_spec == nullptr) {
        return;
    }
    read_containers(r, pod_spec, field, true, w);
    read_containers(r, pod_spec, field, false, w);
    read_volumes(r, pod_spec, field, w);
}

void read_job_spec(Reader& r, const Node* parent, const Node* spec, const std::string& field,
                   Workload& w) {
    w.job_spec = r.key_loc(parent, "spec");
    w.backoff_limit = r.integer(spec, "backoffLimit", field + ".backoffLimit");
    w.parallelism = r.integer(spec, "parallelism", field + ".parallelism");
    w.completions = r.integer(spec, "completions", field + ".completions");
    w.active_deadline = r.integer(spec, "activeDeadlineSeconds", field + ".activeDeadlineSeconds");
    w.ttl_after_finished =
        r.integer(spec, "ttlSecondsAfterFinished", field + ".ttlSecondsAfterFinished");
    w.pod_failure_policy = r.map(spec, "podFailurePolicy", field + ".podFailurePolicy") != nullptr;
    const Node* tmpl = r.map(spec, "template", field + ".template");
    read_pod_spec(r, r.map(tmpl, "spec", field + ".template.spec"), field + ".template.spec", w);
}

void read_metadata(Reader& r, const Node* obj, std::string& name, std::string& ns,
                   std::map<std::string, Text>* annotations) {
    const Node* meta = r.map(obj, "metadata", "metadata");
    name = r.str(meta, "name", "metadata.name");
    ns = r.str(meta, "namespace", "metadata.namespace");
    const Node* ann =
        annotations != nullptr ? r.map(meta, "annotations", "metadata.annotations") : nullptr;
    for (std::size_t i = 0; ann != nullptr && i + 1 < ann->items.size(); i += 2) {
        const Node* v = ann->items[i + 1];
        (*annotations)[ann->items[i]->text()] = r.text_of(v);
    }
}

void read_workload(Reader& r, const Node* obj, WorkloadKind kind, Workload& w) {
    w.kind = kind;
    w.loc = r.loc(obj);
    read_metadata(r, obj, w.name, w.namespace_, &w.annotations);
    const Node* spec = r.map(obj, "spec", "spec");
    switch (kind) {
        case WorkloadKind::pod:
            read_pod_spec(r, spec, "spec", w);
            return;
        case WorkloadKind::job:
            read_job_spec(r, obj, spec, "spec", w);
            return;
        case WorkloadKind::cron_job: {
            if (const Node* p = spec != nullptr ? spec->get("concurrencyPolicy") : nullptr) {
                w.concurrency_policy = Text{p->text(), r.loc(p), false};
            }
            const Node* jt = r.map(spec, "jobTemplate", "spec.jobTemplate");
            w.object_spec = r.key_loc(obj, "spec");
            read_job_spec(r, jt, r.map(jt, "spec", "spec.jobTemplate.spec"),
                          "spec.jobTemplate.spec", w);
            return;
        }
        default:
            break;
    }
    if (kind != WorkloadKind::daemon_set) {
        w.replicas = r.integer(spec, "replicas", "spec.replicas");
    }
    w.progress_deadline =
        r.integer(spec, "progressDeadlineSeconds", "spec.progressDeadlineSeconds");
    const Node* tmpl = r.map(spec, "template", "spec.template");
    read_pod_spec(r, r.map(tmpl, "spec", "spec.template.spec"), "spec.template.spec", w);
}

void read_config_map(Reader& r, const Node* obj, Objects& out) {
    ConfigMapObject cm;
    read_metadata(r, obj, cm.name, cm.namespace_, nullptr);
    cm.file = r.loc(obj).file;
    const Node* data = r.map(obj, "data", "data");
    for (std::size_t i = 0; data != nullptr && i + 1 < data->items.size(); i += 2) {
        const Node* v = data->items[i + 1];
        cm.data[data->items[i]->text()] = r.text_of(v);
    }
    out.config_maps.push_back(std::move(cm));
}

void read_hpa(Reader& r, const Node* obj, Objects& out) {
    HpaObject h;
    std::string name;
    read_metadata(r, obj, name, h.namespace_, nullptr);
    const Node* spec = r.map(obj, "spec", "spec");
    const Node* ref = r.map(spec, "scaleTargetRef", "spec.scaleTargetRef");
    h.target_kind = r.str(ref, "kind", "spec.scaleTargetRef.kind");
    h.target_name = r.str(ref, "name", "spec.scaleTargetRef.name");
    h.max_replicas = r.integer(spec, "maxReplicas", "spec.maxReplicas");
    h.loc = r.loc(obj);
    out.hpas.push_back(std::move(h));
}

Status extract_one(const Node* obj, const std::string& file, Objects& out, int depth);

Status extract_list(const Node* obj, const std::string& file, Objects& out, int depth) {
    const Node* items = obj->get("items");
    if (items == nullptr || items->kind == Node::Kind::null) {
        return Status::ok();
    }
    if (!items->is_seq()) {
        Position p = items->pos;
        return Status(Code::invalid,
                      fmt::format("{}:{}:{}: items: expected a list", file, p.line, p.column));
    }
    for (const Node* item : items->items) {
        TRY(extract_one(item, file, out, depth + 1));
    }
    return Status::ok();
}

Status extract_one(const Node* obj, const std::string& file, Objects& out, int depth) {
    if (!obj->is_map()) {
        return Status::ok();  // a comment-only document, or not an object at all
    }
    const Node* kind_node = obj->get("kind");
    const std::string& kind = kind_node != nullptr ? kind_node->text() : std::string();
    Reader r(file);
    if (kind.ends_with("List") && depth < 4) {
        return extract_list(obj, file, out, depth);
    }
    if (auto it = k_workload_kinds.find(kind); it != k_workload_kinds.end()) {
        Workload w;
        w.kind_name = kind;
        read_workload(r, obj, it->second, w);
        TRY(r.status());
        out.workloads.push_back(std::move(w));
    } else if (kind == "ConfigMap") {
        read_config_map(r, obj, out);
    } else if (kind == "HorizontalPodAutoscaler") {
        read_hpa(r, obj, out);
    }
    return r.status();
}

}  // namespace

Location Text::at(std::size_t offset) const {
    if (!literal_block) {
        return loc;
    }
    std::size_t line_start = value.rfind('\n', offset == 0 ? 0 : offset - 1);
    line_start = line_start == std::string::npos || offset == 0 ? 0 : line_start + 1;
    int lines = 0;
    for (std::size_t i = 0; i < line_start && i < value.size(); ++i) {
        lines += value[i] == '\n' ? 1 : 0;
    }
    return {loc.file,
            {loc.pos.line + 1 + lines, block_column + static_cast<int>(offset - line_start)}};
}

Status extract_objects(const Document& doc, const std::string& file, Objects& out) {
    return extract_one(doc.root, file, out, 0);
}

}  // namespace envgate::lint
