#!/usr/bin/env python3
"""A git server over HTTPS for release_test.sh, as GitLab serves a project to a job:
git's smart HTTP protocol (Git's own `git http-backend` behind it, as a CGI), TLS
from the given certificate, and HTTP Basic authentication that accepts one user and
one token only (GitLab's `oauth2` and a project access token).

Usage: git_https_server.py ROOT CERT KEY USER TOKEN LOG
Prints "listening on 127.0.0.1:PORT" on stdout once it serves ROOT (the parent of
the bare repositories). LOG gets one line per request: method, path, the user it
authenticated as (or "-"), the status. The token itself is never written.
"""
import base64
import hmac
import http.server
import os
import ssl
import subprocess
import sys


def read_body(handler):
    """The request body: by Content-Length, or chunk by chunk (git sends large pushes
    with Transfer-Encoding: chunked)."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(parts)
            parts.append(handler.rfile.read(size))
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length", "0")))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # the request log is ours, below
        pass

    def note(self, user, status):
        with open(self.server.log_path, "a", encoding="utf-8") as log:
            log.write(f"{self.command} {self.path} {user or '-'} {status}\n")

    def authenticated(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None
        try:
            user, _, token = base64.b64decode(header[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        ok = hmac.compare_digest(user, self.server.user) and hmac.compare_digest(
            token, self.server.token
        )
        return user if ok else None

    def refuse(self):
        self.note(None, 401)
        body = b"HTTP Basic: Access denied\n"
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="release-test"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def serve(self):
        user = self.authenticated()
        if user is None:
            read_body(self)
            self.refuse()
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ["PATH"],
            "GIT_PROJECT_ROOT": self.server.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REMOTE_USER": user,  # http-backend allows a push for an authenticated user
            "REMOTE_ADDR": self.client_address[0],
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        body = read_body(self) if self.command == "POST" else b""
        env["CONTENT_LENGTH"] = str(len(body))
        out = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
        ).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.note(user, status)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = serve
    do_POST = serve


def main():
    root, cert, key, user, token, log_path = sys.argv[1:7]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.root, server.user, server.token, server.log_path = root, user, token, log_path
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
