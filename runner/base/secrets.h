// The one place secrets are known and masked. Every byte envgate sends out passes
// mask_secrets(): the job log and stderr (a masking stream buffer around std::cout
// and std::cerr), report files (write_file_atomic), lock records (record_json, for
// both stores) and every object written to the cluster (HttpKubeApi's bodies). The
// secrets are the values of ENVGATE_GITLAB_TOKEN, GitLab's own credentials
// (CI_JOB_TOKEN, CI_REGISTRY_PASSWORD, ...), the variables named in
// ENVGATE_SECRET_VARS, and the credentials read from a kubeconfig.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <streambuf>
#include <string>
#include <vector>

namespace envgate {

inline constexpr const char* k_masked = "[MASKED]";
// What the Kubernetes client writes for its own bearer token in error messages (its
// tests and users know this word; the token is also registered, so [MASKED] is what
// anything else that leaves the process says).
inline constexpr const char* k_redacted = "[redacted]";
// GitLab refuses to mask a variable shorter than this; a shorter value would mask
// common words all over the output, so it is not treated as a secret.
inline constexpr std::size_t k_min_secret_length = 8;

// GitLab's predefined variables that hold credentials (or embed one, as
// CI_REPOSITORY_URL embeds the job token), plus envgate's own token.
const std::vector<std::string>& builtin_secret_variables();

// The names in ENVGATE_SECRET_VARS (comma or space separated) and the built-in ones.
std::vector<std::string> secret_variable_names(
    const std::function<std::optional<std::string>(const std::string&)>& getenv);

// Registers `value` (each of its lines, for a multi-line key) as a secret. Values
// shorter than k_min_secret_length are ignored. Thread-safe.
void add_secret(const std::string& value);

// Registers the values of every secret_variable_names() variable that is set.
void add_secrets_from_environment(
    const std::function<std::optional<std::string>(const std::string&)>& getenv);

// `text` with every registered secret replaced by [MASKED].
std::string mask_secrets(std::string text);

// `text` with every occurrence of `secret` replaced by `mark` (no-op if `secret` is
// empty). The one replacing loop: mask_secrets() and the clients that mask a credential
// they hold before it is registered (GitLab, Kubernetes) all use it. The search goes on
// after each mark, so a secret found inside the mark itself is not replaced forever.
std::string replace_secret(std::string text, const std::string& secret,
                           const char* mark = k_masked);

// True when `text` holds a registered secret.
bool holds_secret(const std::string& text);

// Masks every string (keys included) of `value` in place.
void mask_json_strings(nlohmann::json& value);

// For tests: forget every registered secret.
void clear_secrets();

// A stream buffer that masks whole lines before passing them to `target`. A line
// is written once it ends (or at flush / destruction), so a secret that arrives in
// pieces is masked all the same.
class MaskingStreambuf : public std::streambuf {
  public:
    explicit MaskingStreambuf(std::streambuf* target) : m_target(target) {}
    ~MaskingStreambuf() override;

  protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

  private:
    void emit(bool everything);
    std::streambuf* m_target;
    std::string m_pending;
};

}  // namespace envgate
