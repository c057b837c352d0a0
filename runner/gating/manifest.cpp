#include "runner/gating/manifest.h"

#include <Poco/DigestEngine.h>
#include <Poco/SHA2Engine.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "runner/base/secrets.h"
#include "runner/base/yaml_bounded.h"
#include "runner/base/yaml_json.h"

namespace envgate {
namespace {

using nlohmann::json;

std::string where(const ManifestInput& in, const YAML::Mark& mark, const std::string& field) {
    return yaml_where(in.origin, mark, field);
}

// A scalar of the manifest: ${VAR} expanded first, then typed as kubectl reads it.
YamlScalarToJson expanding_scalar(const ManifestInput& input, const Getenv& getenv) {
    return [&input, &getenv](const YAML::Node& node, const std::string& field) -> Result<json> {
        TRY_ASSIGN(std::string text,
                   expand_variables(node.Scalar(), where(input, node.Mark(), field), getenv));
        return yaml_scalar_value(node, text);
    };
}

std::string hash8(const std::string& text) {
    Poco::SHA2Engine engine(Poco::SHA2Engine::SHA_256);
    engine.update(text);
    return Poco::DigestEngine::digestToHex(engine.digest()).substr(0, 8);
}

// Kubernetes names of Jobs must stay short enough for the job-name pod label (63).
std::string job_name(std::string base, const std::string& hash) {
    if (base.size() > 54) {
        base.resize(54);
    }
    while (!base.empty() && (base.back() == '-' || base.back() == '.')) {
        base.pop_back();
    }
    return base + "-" + hash;
}

Result<YAML::Node> find_job(const ManifestInput& in) {
    TRY_ASSIGN(auto docs, load_yaml_bounded(in.text, in.origin));
    std::optional<YAML::Node> found;
    for (const auto& d : docs) {
        if (!d.IsMap() || !d["kind"] || !d["kind"].IsScalar() || d["kind"].Scalar() != "Job") {
            continue;
        }
        if (found) {
            return Status(Code::invalid, where(in, d.Mark(), "kind") +
                                             ": more than one Job in the manifest; give one "
                                             "(e.g. helm template --show-only FILE)");
        }
        found = d;
    }
    if (!found) {
        return Status(Code::invalid, in.origin + ": no document with kind: Job");
    }
    return *found;
}

// The namespace a Job of `in` runs in when its manifest names none.
std::string environment_namespace(const ManifestInput& in) {
    return in.namespace_.empty() ? "default" : in.namespace_;
}

// envgate's own variables describe this gate; the rest come from the process.
Getenv gate_variables(const ManifestInput& in, const Getenv& process_env) {
    return [&in, process_env](const std::string& name) -> std::optional<std::string> {
        if (name == "ENVGATE_ENV") {
            return in.environment;
        }
        if (name == "ENVGATE_GATE") {
            return in.gate;
        }
        if (name == "ENVGATE_NAMESPACE") {
            return environment_namespace(in);
        }
        return process_env(name);
    };
}

// Where the Job's `metadata.namespace` is written, or the document when it is not there.
YAML::Mark namespace_mark(const YAML::Node& doc) {
    const YAML::Node& d = doc;
    const YAML::Node meta = d["metadata"];
    const YAML::Node ns = meta.IsMap() ? meta["namespace"] : YAML::Node();
    return ns.IsDefined() ? ns.Mark() : doc.Mark();
}

// The lock held is the environment's: a Job in another namespace would change what
// another lock guards. `named` is the manifest's namespace after expansion.
Status check_namespace(const ManifestInput& in, const YAML::Node& doc, const std::string& named) {
    if (in.namespace_.empty() || named.empty() || named == in.namespace_) {
        return Status::ok();
    }
    return Status(Code::invalid,
                  where(in, namespace_mark(doc), "metadata.namespace") + ": \"" + named +
                      "\" is not the namespace of environment \"" + in.environment + "\" (\"" +
                      in.namespace_ +
                      "\"): a gate's Job runs only in its environment's namespace; leave "
                      "metadata.namespace out or write ${ENVGATE_NAMESPACE}");
}

bool is_secret_variable(const std::string& name, const Getenv& getenv) {
    auto names = secret_variable_names(getenv);
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool variable_allowed(const std::string& name) {
    return name.starts_with("ENVGATE_") || name.starts_with("CI_");
}

Result<std::string> expand_variables(const std::string& text, const std::string& at,
                                     const Getenv& getenv) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '$' || i + 1 >= text.size()) {
            out.push_back(text[i]);
        } else if (text[i + 1] == '$') {
            out.push_back('$');
            ++i;
        } else if (text[i + 1] == '{') {
            size_t close = text.find('}', i + 2);
            if (close == std::string::npos) {
                return Status(Code::invalid, at + ": unterminated ${ in \"" + text + "\"");
            }
            std::string name = text.substr(i + 2, close - i - 2);
            if (!variable_allowed(name)) {
                return Status(Code::invalid, at + ": ${" + name +
                                                 "} is not expanded: only ENVGATE_* and CI_* "
                                                 "variables are (write $${" +
                                                 name + "} for a literal)");
            }
            auto value = getenv(name);
            if (is_secret_variable(name, getenv) || (value && holds_secret(*value))) {
                return Status(Code::invalid,
                              at + ": ${" + name +
                                  "} holds a secret and is never expanded into a Job (the "
                                  "cluster would store it in plain text); give the container "
                                  "a Kubernetes Secret (env[].valueFrom.secretKeyRef)");
            }
            if (!value) {
                return Status(Code::invalid, at + ": ${" + name + "} is not set");
            }
            out += *value;
            i = close;
        } else {
            out.push_back('$');
        }
    }
    return out;
}

Result<RenderedJob> render_job_manifest(const ManifestInput& in, const Getenv& process_env) {
    TRY_ASSIGN(YAML::Node doc, find_job(in));
    Getenv getenv = gate_variables(in, process_env);
    TRY_ASSIGN(json job, yaml_to_json(doc, in.origin, expanding_scalar(in, getenv)));
    try {
        (void)job.dump();  // the API takes UTF-8 only; say so here, not when sending
    } catch (const json::type_error&) {
        return Status(Code::invalid, where(in, doc.Mark(), "") + ": text is not valid UTF-8");
    }
    std::string api_version =
        job["apiVersion"].is_string() ? job["apiVersion"].get<std::string>() : "";
    if (api_version != "batch/v1") {
        return Status(Code::invalid, where(in, doc.Mark(), "apiVersion") + ": \"" + api_version +
                                         "\" is not batch/v1");
    }
    if (!job.contains("spec") || !job["spec"].is_object()) {
        return Status(Code::invalid, where(in, doc.Mark(), "spec") + ": a Job needs a spec");
    }
    if (job.contains("metadata") && !job["metadata"].is_object()) {
        return Status(Code::invalid, where(in, doc.Mark(), "metadata") + ": must be a map");
    }
    json& meta = job["metadata"];
    if (meta.is_null()) {
        meta = json::object();
    }
    auto text_of = [&meta](const char* key) {
        return meta.contains(key) && meta[key].is_string() ? meta[key].get<std::string>() : "";
    };
    std::string base = text_of("name");
    if (base.empty()) {
        base = text_of("generateName");
        while (!base.empty() && base.back() == '-') {
            base.pop_back();
        }
    }
    if (base.empty()) {
        return Status(Code::invalid,
                      where(in, doc.Mark(), "metadata.name") + ": the Job needs a name");
    }
    if (meta.contains("labels") && !meta["labels"].is_null() && !meta["labels"].is_object()) {
        const YAML::Node& d = doc;
        const YAML::Node labels = d["metadata"].IsMap() ? d["metadata"]["labels"] : YAML::Node();
        // A duplicated key may leave the first `metadata` without the `labels` that won.
        YAML::Mark at = labels.IsDefined() ? labels.Mark() : doc.Mark();
        return Status(Code::invalid, where(in, at, "metadata.labels") +
                                         ": must be a map of label names to values");
    }
    RenderedJob out;
    out.spec_hash = hash8(in.environment + "\n" + in.gate + "\n" + job["spec"].dump());
    out.name = job_name(base, out.spec_hash);
    TRY(check_namespace(in, doc, text_of("namespace")));
    out.namespace_ =
        text_of("namespace").empty() ? environment_namespace(in) : text_of("namespace");
    job.erase("status");
    for (const char* k : {"generateName", "resourceVersion", "uid", "creationTimestamp"}) {
        meta.erase(k);
    }
    meta["name"] = out.name;
    meta["namespace"] = out.namespace_;
    meta["labels"][k_label_environment] = in.environment;
    meta["labels"][k_label_gate] = in.gate;
    meta["labels"][k_label_spec_hash] = out.spec_hash;
    meta["labels"][k_label_pipeline] = in.pipeline;
    out.object = std::move(job);
    return out;
}

Status check_manifest_namespace(const ManifestInput& in, const Getenv& process_env) {
    auto doc = find_job(in);
    if (!doc) {
        return Status::ok();
    }
    const YAML::Node& d = *doc;
    const YAML::Node meta = d["metadata"];
    const YAML::Node ns = meta.IsMap() ? meta["namespace"] : YAML::Node();
    if (!ns.IsDefined() || !ns.IsScalar()) {
        return Status::ok();
    }
    auto named = expand_variables(ns.Scalar(), "", gate_variables(in, process_env));
    return named ? check_namespace(in, *doc, *named) : Status::ok();
}

RenderedJob salted_job(RenderedJob job, const std::string& salt) {
    std::string base = job.name.substr(0, job.name.size() - job.spec_hash.size() - 1);
    job.spec_hash = hash8(job.spec_hash + "\n" + salt);
    job.name = job_name(base, job.spec_hash);
    job.object["metadata"]["name"] = job.name;
    job.object["metadata"]["labels"][k_label_spec_hash] = job.spec_hash;
    return job;
}

}  // namespace envgate
