#include "runner/kube/exec_credential.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <Poco/Base64Encoder.h>
#include <Poco/Exception.h>
#include <Poco/Pipe.h>
#include <Poco/PipeStream.h>
#include <Poco/Process.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runner/base/secrets.h"
#include "runner/base/utf8.h"

namespace envgate::kube {
namespace {

constexpr std::size_t k_max_output = 1024 * 1024;  // an ExecCredential is a few kB
constexpr std::size_t k_max_stderr = 64 * 1024;    // of its stderr, the last 64 KiB are shown

std::string base64(const std::string& bytes) {
    std::ostringstream out;
    Poco::Base64Encoder encoder(out);
    encoder.rdbuf()->setLineLength(0);
    encoder << bytes;
    encoder.close();
    return out.str();
}

// client.authentication.k8s.io Cluster: `server` always, the rest only when set
// (omitempty); `config` is the extension's JSON as written.
nlohmann::json cluster_info(const ExecCluster& cluster) {
    nlohmann::json out = {{"server", cluster.server}};
    if (!cluster.tls_server_name.empty()) {
        out["tls-server-name"] = cluster.tls_server_name;
    }
    if (cluster.insecure_skip_tls_verify) {
        out["insecure-skip-tls-verify"] = true;
    }
    if (!cluster.ca_pem.empty()) {
        out["certificate-authority-data"] = base64(cluster.ca_pem);
    }
    if (!cluster.proxy_url.empty()) {
        out["proxy-url"] = cluster.proxy_url;
    }
    if (cluster.disable_compression) {
        out["disable-compression"] = true;
    }
    if (!cluster.config_json.empty()) {
        out["config"] = nlohmann::json::parse(cluster.config_json);
    }
    return out;
}

// Where `command` runs from: as given when it has a '/', else the first executable of
// that name on our PATH (as client-go's exec.LookPath); nullopt when there is none.
std::optional<std::string> find_command(const std::string& command) {
    auto executable = [](const std::string& path) {
        struct stat st {};
        return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
               ::access(path.c_str(), X_OK) == 0;
    };
    if (command.find('/') != std::string::npos) {
        return executable(command) ? std::optional(command) : std::nullopt;
    }
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
        if (executable(candidate)) {
            return candidate;
        }
    }
    return std::nullopt;
}

// What the plugin wrote to stderr, up to its last k_max_stderr bytes: a plugin that
// writes without end fills neither memory nor the job log.
struct StderrTail {
    std::string kept;
    std::size_t dropped = 0;
    void add(const char* data, std::size_t n) {
        kept.append(data, n);
        if (kept.size() > k_max_stderr) {
            dropped += kept.size() - k_max_stderr;
            kept.erase(0, kept.size() - k_max_stderr);
        }
    }
};

// Reads what is ready on `fd` into `sink`; false at EOF or on an error.
template <typename Sink>
bool read_ready(int fd, Sink&& sink) {
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
        sink(buf, static_cast<std::size_t>(n));
        return true;
    }
    return n < 0 && errno == EINTR;
}

// Our stderr gets the plugin's (warnings, hints), as kubectl shows them, once it ends;
// through std::cerr, so the process's masking applies.
void show_stderr(const std::string& who, const StderrTail& tail) {
    if (tail.dropped > 0) {
        std::cerr << who << ": " << tail.dropped << " bytes of its stderr dropped, the last "
                  << tail.kept.size() / 1024 << " KiB follow\n";
    }
    if (!tail.kept.empty()) {
        std::cerr << tail.kept << (tail.kept.back() == '\n' ? "" : "\n") << std::flush;
    }
}

// Reads the plugin's stdout and stderr until it closes its stdout and exits, the
// timeout passes or a SIGTERM/SIGINT arrives; the last two kill it. Both pipes are
// drained all along, so a plugin blocked on a full stderr pipe never hangs the read.
Result<std::string> run_and_capture(const ExecConfig& exec, int& exit_code,
                                    const std::function<int()>& pending_signal) {
    Poco::Process::Env env(exec.env.begin(), exec.env.end());
    env["KUBERNETES_EXEC_INFO"] = exec_info_json(exec);
    const std::string who = fmt::format("exec credential plugin {}", exec.command);
    const std::optional<std::string> command = find_command(exec.command);
    if (!command) {
        return Status(Code::unauthorized, exec_not_found_message(exec));
    }
    StderrTail tail;
    try {
        Poco::Pipe out;
        Poco::Pipe err;
        Poco::ProcessHandle handle =
            Poco::Process::launch(*command, exec.args, nullptr, &out, &err, env);
        out.close(Poco::Pipe::CLOSE_WRITE);
        err.close(Poco::Pipe::CLOSE_WRITE);
        const auto deadline = std::chrono::steady_clock::now() + exec.timeout;
        std::string output;
        bool out_open = true;
        bool err_open = true;
        int exited = -1;
        auto keep_out = [&output](const char* data, std::size_t n) {
            if (output.size() < k_max_output) {
                output.append(data, n);
            }
        };
        auto keep_err = [&tail](const char* data, std::size_t n) { tail.add(data, n); };
        // Until stdout ends and then until the plugin exits (a child it left behind may
        // keep stderr open), and what its stderr still holds after that.
        while (out_open || (err_open && (exited = handle.tryWait()) == -1)) {
            if (int sig = pending_signal ? pending_signal() : 0; sig != 0) {
                Poco::Process::kill(handle);
                (void)handle.wait();
                show_stderr(who, tail);
                return Status(Code::cancelled, fmt::format("{}: stopped by signal {}", who, sig));
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                Poco::Process::kill(handle);
                (void)handle.wait();
                show_stderr(who, tail);
                return Status(Code::unauthorized, fmt::format("{}: no answer within {}, killed",
                                                              who, format_duration(exec.timeout)));
            }
            pollfd p[2] = {{out_open ? out.readHandle() : -1, POLLIN, 0},
                           {err_open ? err.readHandle() : -1, POLLIN, 0}};
            if (::poll(p, 2, 50) <= 0) {
                continue;
            }
            if (out_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                out_open = read_ready(out.readHandle(), keep_out);
            }
            if (err_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                err_open = read_ready(err.readHandle(), keep_err);
            }
        }
        for (pollfd p{err.readHandle(), POLLIN, 0}; err_open && ::poll(&p, 1, 0) > 0;) {
            err_open = read_ready(err.readHandle(), keep_err);
        }
        exit_code = exited != -1 ? exited : handle.wait();
        show_stderr(who, tail);
        return output;
    } catch (const Poco::Exception& e) {
        show_stderr(who, tail);
        return Status(Code::unauthorized, fmt::format("{}: cannot run: {}", who, e.displayText()));
    }
}

// A string of the ExecCredential status; absent and null read as empty (client-go's
// decoder does the same), any other type is refused without quoting the value.
Result<std::string> string_field(const nlohmann::json& status, const char* key,
                                 const std::string& who) {
    auto it = status.find(key);
    if (it == status.end() || it->is_null()) {
        return std::string();
    }
    if (!it->is_string()) {
        return Status(Code::unauthorized, fmt::format("{}: status.{} must be a string, not {}", who,
                                                      key, it->type_name()));
    }
    return it->get<std::string>();
}

}  // namespace

std::string exec_info_json(const ExecConfig& exec) {
    nlohmann::json spec = {{"interactive", false}};
    if (exec.cluster) {
        spec["cluster"] = cluster_info(*exec.cluster);
    }
    nlohmann::json info = {
        {"apiVersion", exec.api_version}, {"kind", "ExecCredential"}, {"spec", spec}};
    return dump_json(info);
}

std::string exec_not_found_message(const ExecConfig& exec) {
    std::string out =
        fmt::format("exec credential plugin {}: {}", exec.command,
                    exec.command.find('/') == std::string::npos ? "not found on PATH"
                                                                : "no such executable file");
    if (!exec.field.empty()) {
        out += fmt::format(" ({}.command)", exec.field);
    }
    std::string hint = exec.install_hint;  // a YAML block scalar ends in a newline
    hint.erase(hint.find_last_not_of(" \t\r\n") + 1);
    if (!hint.empty()) {
        out += "\n\n" + hint;
    }
    return out;
}

Result<ExecCredentials> run_exec_plugin(const ExecConfig& exec,
                                        const std::function<int()>& pending_signal) {
    int exit_code = 0;
    TRY_ASSIGN(std::string output, run_and_capture(exec, exit_code, pending_signal));
    const std::string who = fmt::format("exec credential plugin {}", exec.command);
    if (exit_code != 0) {
        return Status(Code::unauthorized, fmt::format("{}: exited with status {}", who, exit_code));
    }
    return parse_exec_credential(output, who);
}

Result<ExecCredentials> parse_exec_credential(const std::string& output, const std::string& who) {
    nlohmann::json credential;
    try {
        credential = nlohmann::json::parse(output);
    } catch (const nlohmann::json::exception&) {
        return Status(Code::unauthorized, who + ": output is not an ExecCredential JSON object");
    }
    auto kind = credential.is_object() ? credential.find("kind") : credential.end();
    if (!credential.is_object() || kind == credential.end() || *kind != "ExecCredential" ||
        !credential.contains("status") || !credential["status"].is_object()) {
        return Status(Code::unauthorized, who + ": output is not an ExecCredential with a status");
    }
    const auto& status = credential["status"];
    ExecCredentials out;
    TRY_ASSIGN(std::string token, string_field(status, "token", who));
    TRY_ASSIGN(out.client_cert_pem, string_field(status, "clientCertificateData", who));
    TRY_ASSIGN(std::string key, string_field(status, "clientKeyData", who));
    out.token = SecretString(std::move(token));
    out.client_key_pem = SecretString(std::move(key));
    if (out.token.empty() && out.client_cert_pem.empty()) {
        return Status(Code::unauthorized,
                      who + ": ExecCredential has neither token nor certificate");
    }
    if (status.contains("expirationTimestamp") && status["expirationTimestamp"].is_string()) {
        out.expires = parse_rfc3339(status["expirationTimestamp"].get<std::string>());
        if (!out.expires) {
            return Status(Code::unauthorized, who + ": bad status.expirationTimestamp");
        }
    }
    return out;
}

Result<ExecCredentials> ExecCredentialProvider::get() {
    MutexLock lock(m_mutex);
    if (m_cached && (!m_cached->expires || m_clock.now() < *m_cached->expires)) {
        return *m_cached;
    }
    ++m_runs;
    TRY_ASSIGN(ExecCredentials fresh, run_exec_plugin(m_exec, m_pending_signal));
    fresh.generation = static_cast<std::uint64_t>(m_runs);
    add_secret(fresh.token.reveal());  // never printed, whoever prints what
    add_secret(fresh.client_key_pem.reveal());
    m_cached = fresh;
    return fresh;
}

void ExecCredentialProvider::invalidate(std::uint64_t generation) {
    MutexLock lock(m_mutex);
    if (m_cached && m_cached->generation == generation) {
        m_cached.reset();
    }
}

int ExecCredentialProvider::runs() const {
    MutexLock lock(m_mutex);
    return m_runs;
}

}  // namespace envgate::kube
