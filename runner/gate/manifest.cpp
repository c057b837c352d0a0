#include "runner/gate/manifest.h"

#include <Poco/DigestEngine.h>
#include <Poco/SHA2Engine.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <utility>

#include "runner/secrets.h"
#include "runner/yaml_bounded.h"

namespace envgate {
namespace {

using nlohmann::json;

std::string where(const ManifestInput& in, const YAML::Mark& mark, const std::string& field) {
    std::string out = in.origin;
    if (!mark.is_null()) {
        out += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    return field.empty() ? out : out + ": " + field;
}

// Plain YAML scalars become JSON values the way kubectl reads them (YAML 1.1 as in
// sigs.k8s.io/yaml: yes/no/on/off are booleans); quoted ones stay strings.
json plain_scalar(const std::string& s) {
    static const std::regex k_int("[-+]?(0|[1-9][0-9]*)");
    static const std::regex k_float("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
    static const char* k_true[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                   "True", "TRUE", "on",  "On",  "ON"};
    static const char* k_false[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                    "False", "FALSE", "off", "Off", "OFF"};
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
        return nullptr;
    }
    for (const char* t : k_true) {
        if (s == t) {
            return true;
        }
    }
    for (const char* f : k_false) {
        if (s == f) {
            return false;
        }
    }
    if (std::regex_match(s, k_int)) {
        try {
            return std::stoll(s);
        } catch (const std::out_of_range&) {
            return s;
        }
    }
    if (std::regex_match(s, k_float)) {
        return std::stod(s);
    }
    return s;
}

struct Converter {
    const ManifestInput& input;
    const Getenv& getenv;

    Result<json> convert(const YAML::Node& node, const std::string& field) {
        switch (node.Type()) {
            case YAML::NodeType::Null:
            case YAML::NodeType::Undefined:
                return json(nullptr);
            case YAML::NodeType::Scalar:
                return scalar(node, field);
            case YAML::NodeType::Sequence:
                return sequence(node, field);
            case YAML::NodeType::Map:
                return map(node, field);
        }
        return json(nullptr);
    }

    Result<json> scalar(const YAML::Node& node, const std::string& field) {
        TRY_ASSIGN(std::string text,
                   expand_variables(node.Scalar(), where(input, node.Mark(), field), getenv));
        if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
            return json(text);
        }
        return plain_scalar(text);
    }

    Result<json> sequence(const YAML::Node& node, const std::string& field) {
        json out = json::array();
        size_t i = 0;
        for (const auto& item : node) {
            TRY_ASSIGN(json v, convert(item, field + "[" + std::to_string(i++) + "]"));
            out.push_back(std::move(v));
        }
        return out;
    }

    Result<json> map(const YAML::Node& node, const std::string& field) {
        json out = json::object();
        for (const auto& kv : node) {
            if (!kv.first.IsScalar()) {
                return Status(Code::invalid,
                              where(input, kv.first.Mark(), field) + ": keys must be strings");
            }
            std::string key = kv.first.Scalar();
            TRY_ASSIGN(json v, convert(kv.second, field.empty() ? key : field + "." + key));
            out[key] = std::move(v);
        }
        return out;
    }
};

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
    // envgate's own variables describe this gate; the rest come from the process.
    Getenv getenv = [&](const std::string& name) -> std::optional<std::string> {
        if (name == "ENVGATE_ENV") {
            return in.environment;
        }
        if (name == "ENVGATE_GATE") {
            return in.gate;
        }
        if (name == "ENVGATE_NAMESPACE") {
            return in.namespace_;
        }
        return process_env(name);
    };
    Converter converter{in, getenv};
    TRY_ASSIGN(json job, converter.convert(doc, ""));
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
    out.namespace_ = text_of("namespace").empty() ? in.namespace_ : text_of("namespace");
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

RenderedJob salted_job(RenderedJob job, const std::string& salt) {
    std::string base = job.name.substr(0, job.name.size() - job.spec_hash.size() - 1);
    job.spec_hash = hash8(job.spec_hash + "\n" + salt);
    job.name = job_name(base, job.spec_hash);
    job.object["metadata"]["name"] = job.name;
    job.object["metadata"]["labels"][k_label_spec_hash] = job.spec_hash;
    return job;
}

}  // namespace envgate
