// Start-up credentials for `kubesim --tls`: a fresh CA and a server certificate for
// 127.0.0.1/localhost (made with the openssl CLI), a random bearer token, and the
// kubeconfig that hands them to kubectl and envgate.
#pragma once

#include <string>

#include "runner/base/vocab/status.h"
#include "test/kubesim/server.h"

namespace kubesim {

// Writes ca.crt, server.crt and server.key into `dir`.
envgate::Result<TlsFiles> generate_tls(const std::string& dir);
std::string random_token();
// Writes a kubeconfig (mode 0600) whose current context points at `server`.
envgate::Status write_kubeconfig(const std::string& path, const std::string& server,
                                 const std::string& ca_cert_file, const std::string& token);

}  // namespace kubesim
