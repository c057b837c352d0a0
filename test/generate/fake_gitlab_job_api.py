#!/usr/bin/env python3
"""A stand-in for GitLab's GET /api/v4/job on 127.0.0.1, for the gitlab-ci-local test:
answers the job's user for the one JOB-TOKEN it was given (401 for any other), prints
its port on stdout, and logs each request (path and user answered) to stderr.
Usage: fake_gitlab_job_api.py TOKEN USERNAME USER_ID"""
import http.server
import json
import sys

TOKEN, USERNAME, USER_ID = sys.argv[1], sys.argv[2], int(sys.argv[3])


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path.endswith("/api/v4/job") and self.headers.get("JOB-TOKEN") == TOKEN:
            code, body = 200, {"id": 1302, "status": "running",
                               "user": {"id": USER_ID, "username": USERNAME, "state": "active"}}
        elif path.endswith("/api/v4/job"):
            code, body = 401, {"message": "401 Unauthorized"}
        else:
            code, body = 404, {"message": "404 Not found"}
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        print(f"GET {path} -> {code} {body.get('user', {}).get('username', '')}", file=sys.stderr,
              flush=True)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
