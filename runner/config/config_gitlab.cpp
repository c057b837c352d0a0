#include "runner/config/config_gitlab.h"

#include <algorithm>
#include <cctype>

#include "runner/config/config_steps.h"

namespace envgate {
namespace {

const std::vector<std::string> k_gitlab_keys = {"url", "ca_file", "id_token"};
const std::vector<std::string> k_id_token_keys = {"variable", "audience", "require"};

bool is_loopback(const std::string& host) {
    return host == "127.0.0.1" || host == "localhost" || host == "[::1]";
}

// A POSIX shell variable name: what a job's `id_tokens:` entry can be.
bool is_variable_name(const std::string& name) {
    return !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
           std::all_of(name.begin(), name.end(),
                       [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

void read_url(const YAML::Node& node, YamlFields& f, GitLabServer& out) {
    auto s = f.read_string(node, "gitlab.url");
    if (!s) {
        return;
    }
    auto url = normalized_gitlab_url(*s);
    if (!url.is_ok()) {
        f.error(f.where(node), "gitlab.url", url.status().message());
        return;
    }
    out.url = *url;
}

void read_id_token(const YAML::Node& node, YamlFields& f, IdTokenSettings& out) {
    const std::string field = "gitlab.id_token";
    if (!f.expect_map(node, field)) {
        return;
    }
    f.check_keys(node, field, k_id_token_keys);
    if (auto n = node["variable"]) {
        auto s = f.read_string(n, field + ".variable");
        if (s && !is_variable_name(*s)) {
            f.error(f.where(n), field + ".variable",
                    "\"" + *s + "\" is not a variable name (letters, digits and '_')");
        } else if (s) {
            out.variable = *s;
        }
    }
    if (auto n = node["audience"]) {
        if (auto s = f.read_non_empty(n, field + ".audience")) {
            out.audience = *s;
        }
    } else {
        f.error(f.where(node), field + ".audience",
                "missing; write the `aud:` of the job's id_tokens: entry, e.g. envgate");
    }
    if (auto n = node["require"]) {
        auto claims = f.read_string_list(n, field + ".require");
        for (size_t i = 0; claims && i < claims->size(); ++i) {
            const std::string& claim = (*claims)[i];
            const auto& known = id_token_required_claims();
            if (std::find(known.begin(), known.end(), claim) == known.end()) {
                f.error(f.where(n[i]), field + ".require[" + std::to_string(i) + "]",
                        "\"" + claim + "\" is not one of ref_protected, environment_protected");
            }
            out.require_protected_ref = out.require_protected_ref || claim == "ref_protected";
            out.require_protected_environment =
                out.require_protected_environment || claim == "environment_protected";
        }
    }
}

}  // namespace

const std::vector<std::string>& id_token_required_claims() {
    static const std::vector<std::string> claims = {"ref_protected", "environment_protected"};
    return claims;
}

Result<std::string> normalized_gitlab_url(const std::string& text) {
    const bool https = text.starts_with("https://");
    if (!https && !text.starts_with("http://")) {
        return Status(Code::invalid, "\"" + text + "\" is not an http(s) URL");
    }
    std::string url = text;
    while (url.size() > (https ? 8u : 7u) && url.back() == '/') {
        url.pop_back();
    }
    const std::string rest = url.substr(https ? 8 : 7);
    const std::string authority = rest.substr(0, rest.find('/'));
    if (url.find_first_of("?#") != std::string::npos || authority.find('@') != std::string::npos) {
        return Status(Code::invalid, "\"" + text +
                                         "\": write the server's address only, without a "
                                         "user, query or fragment");
    }
    std::string host = authority.starts_with("[") ? authority.substr(0, authority.find(']') + 1)
                                                  : authority.substr(0, authority.find(':'));
    if (host.empty()) {
        return Status(Code::invalid, "\"" + text + "\" names no host");
    }
    std::transform(host.begin(), host.end(), host.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!https && !is_loopback(host)) {
        return Status(Code::invalid, "\"" + text +
                                         "\" is plain http: the job token and "
                                         "ENVGATE_GITLAB_TOKEN go only over https (or to a "
                                         "loopback address)");
    }
    return url;
}

void read_gitlab_section(const YAML::Node& node, const std::filesystem::path& dir, YamlFields& f,
                         GitLabServer& out) {
    if (!node.IsDefined() || !f.expect_map(node, "gitlab")) {
        return;
    }
    f.check_keys(node, "gitlab", k_gitlab_keys);
    if (node["url"]) {
        read_url(node["url"], f, out);
    } else {
        f.error(f.where(node), "gitlab.url",
                "missing; write your GitLab's address, e.g. https://gitlab.example.com");
    }
    if (auto n = node["ca_file"]) {
        if (auto s = f.read_non_empty(n, "gitlab.ca_file",
                                      "must not be empty; leave it out for the system's CAs")) {
            out.ca_file = resolve_config_path(dir, *s);
        }
    }
    if (node["id_token"]) {
        out.id_token.emplace();
        read_id_token(node["id_token"], f, *out.id_token);
    }
}

}  // namespace envgate
