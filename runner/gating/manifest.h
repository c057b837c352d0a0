// A gate's Job manifest made ready to create: read (YAML or JSON, one document or
// many as `helm template` prints them), ${VAR} expanded from an allow-list, named
// `<name>-<hash8>` after a hash of the rendered spec, and labelled for envgate.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "runner/base/vocab/cluster_keys.h"
#include "runner/base/vocab/status.h"

namespace envgate {

using Getenv = std::function<std::optional<std::string>(const std::string&)>;

struct RenderedJob {
    std::string name;       // `<manifest name>-<hash8>`, at most 63 characters
    std::string spec_hash;  // hash8 of environment, gate and the rendered spec
    std::string namespace_;
    nlohmann::json object;  // the Job to create
};

struct ManifestInput {
    std::string text;
    std::string origin;  // file name for messages ("-" is standard input)
    std::string environment;
    std::string gate;
    // The environment's namespace: the Job's, and a manifest naming another is refused.
    // Empty when no environment names one (`envgate gate --manifest` without a config):
    // then the manifest's namespace, or "default".
    std::string namespace_;
    std::string pipeline;  // CI_PIPELINE_ID, or "local"
};

// True for the variables a manifest may use: ENVGATE_* and CI_*.
bool variable_allowed(const std::string& name);

// Expands `${NAME}` in `text` (and `$$` to `$`). A name outside the allow-list, one
// that is not set, or one that holds a secret (runner/secrets.h: CI_JOB_TOKEN,
// ENVGATE_SECRET_VARS, ...) is an error naming `where` and the variable.
Result<std::string> expand_variables(const std::string& text, const std::string& where,
                                     const Getenv& getenv);

// Parses, expands, validates (kind Job, batch/v1, a name), names and labels.
// ENVGATE_ENV, ENVGATE_GATE and ENVGATE_NAMESPACE expand to this gate's values.
// A `metadata.namespace` other than `input.namespace_` is `invalid`, naming both: the
// lock held is the environment's, so its Job runs nowhere else.
Result<RenderedJob> render_job_manifest(const ManifestInput& input, const Getenv& getenv);

// What `envgate config check` can tell without the pipeline's variables: an error when
// the manifest's `metadata.namespace` names a namespace other than `input.namespace_`.
// A namespace made of variables that are not set here, or a manifest that does not
// parse, is no error of this check (`run` and `gate` render it in full).
Status check_manifest_namespace(const ManifestInput& input, const Getenv& getenv);

// `job` with a spec hash that also hashes `salt`: a new name (same base) and spec-hash
// label, so it is not taken for the Job made from the same spec without it.
// REQUIRES: `job` came from render_job_manifest.
RenderedJob salted_job(RenderedJob job, const std::string& salt);

}  // namespace envgate
