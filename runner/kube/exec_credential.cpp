#include "runner/kube/exec_credential.h"

#include <Poco/Exception.h>
#include <Poco/Pipe.h>
#include <Poco/PipeStream.h>
#include <Poco/Process.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace envgate::kube {
namespace {

// What client-go passes in KUBERNETES_EXEC_INFO for a non-interactive run.
std::string exec_info(const ExecConfig& exec) {
    nlohmann::json info = {{"apiVersion", exec.api_version},
                           {"kind", "ExecCredential"},
                           {"spec", {{"interactive", false}}}};
    return info.dump();
}

Result<std::string> run_and_capture(const ExecConfig& exec, int& exit_code) {
    Poco::Process::Env env(exec.env.begin(), exec.env.end());
    env["KUBERNETES_EXEC_INFO"] = exec_info(exec);
    try {
        Poco::Pipe out;
        Poco::ProcessHandle handle =
            Poco::Process::launch(exec.command, exec.args, nullptr, &out, nullptr, env);
        Poco::PipeInputStream stream(out);
        std::string output((std::istreambuf_iterator<char>(stream)),
                           std::istreambuf_iterator<char>());
        exit_code = handle.wait();
        return output;
    } catch (const Poco::Exception& e) {
        return Status(Code::unauthorized, fmt::format("exec credential plugin {}: cannot run: {}",
                                                      exec.command, e.displayText()));
    }
}

}  // namespace

Result<ExecCredentials> run_exec_plugin(const ExecConfig& exec) {
    int exit_code = 0;
    TRY_ASSIGN(std::string output, run_and_capture(exec, exit_code));
    const std::string who = fmt::format("exec credential plugin {}", exec.command);
    if (exit_code != 0) {
        return Status(Code::unauthorized, fmt::format("{}: exited with status {}", who, exit_code));
    }
    nlohmann::json credential;
    try {
        credential = nlohmann::json::parse(output);
    } catch (const nlohmann::json::exception&) {
        return Status(Code::unauthorized, who + ": output is not an ExecCredential JSON object");
    }
    if (!credential.is_object() || credential.value("kind", "") != "ExecCredential" ||
        !credential.contains("status") || !credential["status"].is_object()) {
        return Status(Code::unauthorized, who + ": output is not an ExecCredential with a status");
    }
    const auto& status = credential["status"];
    ExecCredentials out;
    out.token = SecretString(status.value("token", ""));
    out.client_cert_pem = status.value("clientCertificateData", "");
    out.client_key_pem = SecretString(status.value("clientKeyData", ""));
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
    if (m_cached && (!m_cached->expires || m_clock.now() < *m_cached->expires)) {
        return *m_cached;
    }
    ++m_runs;
    TRY_ASSIGN(ExecCredentials fresh, run_exec_plugin(m_exec));
    m_cached = fresh;
    return fresh;
}

}  // namespace envgate::kube
