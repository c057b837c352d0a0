#!/usr/bin/env python3
"""A stand-in GitLab on 127.0.0.1 for the unlock end-to-end test, in two roles:

  serve JWKS_FILE USERNAME   answers GET /oauth/discovery/keys with JWKS_FILE and
                             GET /api/v4/job with USERNAME for ANY JOB-TOKEN (as a
                             server a job set up itself would); prints its port on
                             stdout and logs each request to stderr as
                             "GET <path> job-token=<yes|no>", so a test can tell
                             whether a job token ever reached it.
  jwks KEY.pem KID           prints the JSON Web Key Set of that RSA key.
  sign KEY.pem KID CLAIMS    prints an RS256 JWT of the CLAIMS JSON, signed by
                             `openssl dgst -sha256 -sign` (no crypto written here).

The claims' shape follows GitLab's ID token docs (ci/secrets/id_token_authentication)."""
import base64
import http.server
import json
import re
import subprocess
import sys


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwks(key, kid):
    text = subprocess.run(["openssl", "rsa", "-in", key, "-noout", "-text"], check=True,
                          capture_output=True, text=True).stdout
    modulus = subprocess.run(["openssl", "rsa", "-in", key, "-noout", "-modulus"], check=True,
                             capture_output=True, text=True).stdout.strip().split("=", 1)[1]
    exponent = int(re.search(r"publicExponent: (\d+)", text).group(1))
    e = exponent.to_bytes((exponent.bit_length() + 7) // 8, "big")
    return json.dumps({"keys": [{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                                 "n": b64url(bytes.fromhex(modulus)), "e": b64url(e)}]})


def sign(key, kid, claims):
    header = {"alg": "RS256", "typ": "JWT", "kid": kid}
    signed = (b64url(json.dumps(header).encode()) + "." +
              b64url(json.dumps(json.loads(claims)).encode()))
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key],
                               input=signed.encode(), check=True, capture_output=True).stdout
    return signed + "." + b64url(signature)


def serve(jwks_file, username):
    with open(jwks_file, "rb") as f:
        keys = f.read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?", 1)[0]
            has_token = self.headers.get("JOB-TOKEN") is not None
            if path.endswith("/oauth/discovery/keys"):
                code, body = 200, keys
            elif path.endswith("/api/v4/job") and has_token:
                code, body = 200, json.dumps({"id": 1302, "status": "running", "user": {
                    "id": 1, "username": username, "state": "active"}}).encode()
            else:
                code, body = 404, b'{"message": "404 Not found"}'
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            print(f"GET {path} job-token={'yes' if has_token else 'no'}", file=sys.stderr,
                  flush=True)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "serve":
        serve(*args)
    elif command == "jwks":
        print(jwks(*args))
    elif command == "sign":
        print(sign(*args))
    else:
        sys.exit(f"unknown command {command}")
