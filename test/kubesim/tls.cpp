// TLS credentials and kubeconfig: see tls.h.
#include "test/kubesim/tls.h"

#include <Poco/Base64Encoder.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace kubesim {

using envgate::Code;
using envgate::Result;
using envgate::Status;

namespace {

Status run(const std::string& command) {
    int rc = std::system((command + " >/dev/null 2>&1").c_str());
    if (rc != 0) {
        return Status(Code::io, "openssl failed (exit " + std::to_string(rc) + "): " + command);
    }
    return Status::ok();
}

std::string base64_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    Poco::Base64Encoder enc(out);
    enc.rdbuf()->setLineLength(0);
    enc << in.rdbuf();
    enc.close();
    return out.str();
}

}  // namespace

Result<TlsFiles> generate_tls(const std::string& dir) {
    TlsFiles files{dir + "/ca.crt", dir + "/server.crt", dir + "/server.key"};
    std::string ext = dir + "/server.ext";
    std::ofstream(ext) << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                          "extendedKeyUsage=serverAuth\n"
                          "keyUsage=critical,digitalSignature,keyEncipherment\n";
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    TRY(run("openssl req -x509 " + ec + " -keyout " + dir + "/ca.key -out " + files.ca_cert +
            " -days 30 -subj /CN=kubesim-ca"));
    TRY(run("openssl req " + ec + " -keyout " + files.server_key + " -out " + dir +
            "/server.csr -subj /CN=kubesim"));
    TRY(run("openssl x509 -req -in " + dir + "/server.csr -CA " + files.ca_cert + " -CAkey " + dir +
            "/ca.key -CAcreateserial -out " + files.server_cert + " -days 30 -extfile " + ext));
    return files;
}

std::string random_token() {
    std::random_device rd;
    std::string token;
    const char* hex = "0123456789abcdef";
    for (int i = 0; i < 40; ++i) {
        token += hex[rd() % 16];
    }
    return token;
}

Status write_kubeconfig(const std::string& path, const std::string& server,
                        const std::string& ca_cert_file, const std::string& token) {
    std::ostringstream y;
    y << "apiVersion: v1\nkind: Config\nclusters:\n- name: kubesim\n  cluster:\n"
      << "    server: " << server << "\n";
    if (!ca_cert_file.empty()) {
        y << "    certificate-authority-data: " << base64_file(ca_cert_file) << "\n";
    }
    y << "contexts:\n- name: kubesim\n  context:\n    cluster: kubesim\n    user: kubesim\n"
      << "    namespace: default\ncurrent-context: kubesim\npreferences: {}\nusers:\n"
      << "- name: kubesim\n  user:";
    if (token.empty()) {
        y << " {}\n";
    } else {
        y << "\n    token: " << token << "\n";
    }
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) {
            return Status(Code::io, "cannot write kubeconfig " + path);
        }
        ::chmod(tmp.c_str(), 0600);
        out << y.str();
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        return Status(Code::io, "cannot write kubeconfig " + path);
    }
    return Status::ok();
}

}  // namespace kubesim
