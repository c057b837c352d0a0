#include "runner/base/secrets.h"

#include <algorithm>
#include <mutex>

namespace envgate {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_secrets;  // longest first, so a secret inside another goes too

void add_locked(const std::string& value) {
    if (value.size() < k_min_secret_length ||
        std::find(g_secrets.begin(), g_secrets.end(), value) != g_secrets.end()) {
        return;
    }
    g_secrets.push_back(value);
    std::stable_sort(
        g_secrets.begin(), g_secrets.end(),
        [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

}  // namespace

const std::vector<std::string>& builtin_secret_variables() {
    static const std::vector<std::string> k_names = {"CI_JOB_TOKEN",
                                                     "CI_JOB_JWT",
                                                     "CI_JOB_JWT_V1",
                                                     "CI_JOB_JWT_V2",
                                                     "CI_REGISTRY_PASSWORD",
                                                     "CI_DEPLOY_PASSWORD",
                                                     "CI_DEPENDENCY_PROXY_PASSWORD",
                                                     "CI_REPOSITORY_URL",
                                                     "ENVGATE_GITLAB_TOKEN"};
    return k_names;
}

std::vector<std::string> secret_variable_names(
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
    std::vector<std::string> out = builtin_secret_variables();
    if (auto names = getenv("ENVGATE_SECRET_VARS")) {
        std::string name;
        for (char c : *names + ",") {
            if (c == ',' || c == ' ' || c == '\t' || c == '\n') {
                if (!name.empty()) {
                    out.push_back(name);
                }
                name.clear();
            } else {
                name.push_back(c);
            }
        }
    }
    return out;
}

void add_secret(const std::string& value) {
    std::lock_guard<std::mutex> lock(g_mutex);
    add_locked(value);
    if (value.find('\n') == std::string::npos) {
        return;
    }
    std::size_t start = 0;
    while (start < value.size()) {
        std::size_t end = value.find('\n', start);
        std::string line = value.substr(start, end == std::string::npos ? end : end - start);
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        add_locked(line);
        start = end == std::string::npos ? value.size() : end + 1;
    }
}

void add_secrets_from_environment(
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
    for (const std::string& name : secret_variable_names(getenv)) {
        if (auto value = getenv(name)) {
            add_secret(*value);
        }
    }
}

std::string mask_secrets(std::string text) {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& secret : g_secrets) {
        text = replace_secret(std::move(text), secret);
    }
    return text;
}

std::string replace_secret(std::string text, const std::string& secret, const char* mark) {
    if (secret.empty()) {
        return text;
    }
    const std::size_t mark_size = std::char_traits<char>::length(mark);
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + mark_size)) {
        text.replace(at, secret.size(), mark);
    }
    return text;
}

bool holds_secret(const std::string& text) {
    std::lock_guard<std::mutex> lock(g_mutex);
    return std::any_of(g_secrets.begin(), g_secrets.end(),
                       [&](const std::string& s) { return text.find(s) != std::string::npos; });
}

void mask_json_strings(nlohmann::json& value) {
    if (value.is_string()) {
        value = mask_secrets(value.get<std::string>());
    } else if (value.is_array()) {
        for (auto& item : value) {
            mask_json_strings(item);
        }
    } else if (value.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (auto& [key, item] : value.items()) {
            mask_json_strings(item);
            out[mask_secrets(key)] = std::move(item);
        }
        value = std::move(out);
    }
}

void clear_secrets() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_secrets.clear();
}

MaskingStreambuf::~MaskingStreambuf() {
    emit(true);
    m_target->pubsync();
}

void MaskingStreambuf::emit(bool everything) {
    std::size_t n = m_pending.size();
    if (!everything) {
        std::size_t newline = m_pending.rfind('\n');
        if (newline == std::string::npos) {
            return;
        }
        n = newline + 1;
    }
    if (n == 0) {
        return;
    }
    std::string out = mask_secrets(m_pending.substr(0, n));
    m_target->sputn(out.data(), static_cast<std::streamsize>(out.size()));
    m_pending.erase(0, n);
}

MaskingStreambuf::int_type MaskingStreambuf::overflow(int_type c) {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
        m_pending.push_back(traits_type::to_char_type(c));
        if (c == '\n') {
            emit(false);
        }
    }
    return traits_type::not_eof(c);
}

std::streamsize MaskingStreambuf::xsputn(const char* s, std::streamsize n) {
    m_pending.append(s, static_cast<std::size_t>(n));
    if (m_pending.find('\n') != std::string::npos) {
        emit(false);
    }
    return n;
}

int MaskingStreambuf::sync() {
    emit(true);
    return m_target->pubsync();
}

}  // namespace envgate
