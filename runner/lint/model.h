// What the checks look at: the workloads, ConfigMaps and HorizontalPodAutoscalers of
// the input as plain structs with the file position of every field a finding can
// point at. Built from the YAML tree by extract_objects (model.cpp); checks never
// see YAML.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/lint/yaml_tree.h"

namespace envgate::lint {

// A place in the input: file and position.
struct Location {
    std::string file;
    Position pos;
};

// A string from the manifest and where it is.
struct Text {
    std::string value;
    Location loc;
    bool literal_block = false;  // a `|` block: line N of value is at loc.pos.line + 1 + N
    int block_column = 0;        // and its content starts in this column

    // Where the character at `offset` of `value` is: exact inside a `|` block, else
    // the string's own position.
    Location at(std::size_t offset) const;
};

// An integer field, present or not, and where it (or, when absent, its parent) is.
struct IntField {
    std::optional<std::int64_t> value;
    Location loc;
};

struct EnvVar {
    std::string name;
    std::optional<std::string> value;  // nullopt for valueFrom
    Location loc;
};

struct Probe {
    std::string kind;  // startupProbe, readinessProbe, livenessProbe
    IntField initial_delay;
    IntField period;
    IntField failure_threshold;
    Location loc;
};

struct VolumeMount {
    std::string volume;
    std::string mount_path;
    std::string sub_path;
};

struct Container {
    std::string name;
    bool init = false;
    std::string image;
    std::vector<Text> command;
    std::vector<Text> args;
    std::vector<EnvVar> env;
    std::vector<Probe> probes;
    std::vector<VolumeMount> mounts;
    Location loc;
};

// A pod volume backed by a ConfigMap: its name and the key -> path items, if any.
struct ConfigMapVolume {
    std::string volume;
    std::string config_map;
    std::map<std::string, std::string> items;  // path -> key
};

// Kinds with a pod template, and the Pod itself.
enum class WorkloadKind { deployment, stateful_set, daemon_set, replica_set, pod, job, cron_job };

struct Workload {
    WorkloadKind kind = WorkloadKind::pod;
    std::string kind_name;  // as written: Deployment, CronJob, ...
    std::string name;
    std::string namespace_;
    Location loc;  // the object (its first line)
    std::map<std::string, Text> annotations;
    IntField replicas;  // absent: one (a DaemonSet has no such field)
    IntField progress_deadline;
    // Jobs (and a CronJob's jobTemplate).
    IntField backoff_limit;
    IntField parallelism;
    IntField completions;
    IntField active_deadline;
    IntField ttl_after_finished;
    bool pod_failure_policy = false;
    Location job_spec;     // the Job spec's `spec:` key: where a missing Job field is reported
    Location object_spec;  // a CronJob's own `spec:` key
    std::optional<Text> concurrency_policy;  // CronJob
    std::vector<Container> containers;       // initContainers first, then containers
    std::vector<ConfigMapVolume> config_map_volumes;

    bool long_running() const {
        return kind != WorkloadKind::job && kind != WorkloadKind::cron_job;
    }
    bool is_job() const { return !long_running(); }
};

struct ConfigMapObject {
    std::string name;
    std::string namespace_;
    std::string file;
    std::map<std::string, Text> data;
};

struct HpaObject {
    std::string target_kind;
    std::string target_name;
    std::string namespace_;
    IntField max_replicas;
    Location loc;
};

struct Objects {
    std::vector<Workload> workloads;
    std::vector<ConfigMapObject> config_maps;
    std::vector<HpaObject> hpas;
};

// Adds what `doc` holds (one object, or a List's items) to `out`. Objects of other
// kinds are skipped; a workload whose fields have the wrong type is an `invalid`
// error naming file:line:column and the field.
Status extract_objects(const Document& doc, const std::string& file, Objects& out);

}  // namespace envgate::lint
