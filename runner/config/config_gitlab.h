// envgate.yml's `gitlab:` section: the GitLab server `envgate unlock` trusts in CI, read
// with the same file:line:column: field errors as the rest of the config.
//
// gitlab:
//   url: https://gitlab.example.com          # the only server a job token is sent to
//   ca_file: /etc/ssl/certs/internal-ca.pem  # optional: verify it with this CA bundle
//   id_token:                                # optional: the unlocker from a signed JWT
//     variable: ENVGATE_ID_TOKEN             # the job's id_tokens: entry
//     audience: envgate                      # its aud:
//     require: [ref_protected, environment_protected]
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runner/config/config.h"
#include "runner/config/config_yaml.h"

namespace envgate {

// The claims `gitlab.id_token.require` may name.
const std::vector<std::string>& id_token_required_claims();

// Reads `node` (the value of `gitlab`, possibly undefined) into `out`; a relative
// `ca_file` is resolved against `dir`, the config file's directory. Records any error in
// `fields`.
void read_gitlab_section(const YAML::Node& node, const std::filesystem::path& dir,
                         YamlFields& fields, GitLabServer& out);

// `text` without trailing '/', when it is an http(s) URL with a host and no user, query
// or fragment, and https unless the host is a loopback address; else an `invalid`
// Status saying why. The form CI_SERVER_URL and an ID token's `iss` are compared in.
Result<std::string> normalized_gitlab_url(const std::string& text);

}  // namespace envgate
