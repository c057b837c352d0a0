#!/usr/bin/env python3
"""A tiny HTTP CONNECT proxy for the tests: tunnels each CONNECT host:port, appends
"CONNECT host:port" and the Proxy-Authorization it was given (or "-") to LOG, and
answers 407 when --user USER:PASSWORD is set and the request lacks it. With
--upstream HOST:PORT every tunnel goes there, whatever host was asked for (so a
client can ask for a name that does not resolve here). Prints its port on stdout.
Usage: connect_proxy.py LOG [--user USER:PASSWORD] [--upstream HOST:PORT]"""
import base64
import socket
import socketserver
import sys
import threading


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        request = self.rfile.readline().decode("latin-1").strip()
        headers = {}
        while True:
            line = self.rfile.readline().decode("latin-1").strip()
            if not line:
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        method, target, _ = (request.split(" ") + ["", "", ""])[:3]
        auth = headers.get("proxy-authorization", "-")
        with open(LOG, "a") as log:
            log.write(f"{method} {target} {auth}\n")
        if method != "CONNECT":
            self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        if WANT_AUTH and auth != WANT_AUTH:
            self.wfile.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                             b"Proxy-Authenticate: Basic realm=\"test\"\r\n"
                             b"Content-Length: 0\r\n\r\n")
            return
        host, _, port = (UPSTREAM or target).rpartition(":")
        upstream = socket.create_connection((host, int(port)))
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.wfile.flush()
        pump = threading.Thread(target=copy, args=(upstream, self.connection), daemon=True)
        pump.start()
        copy(self.connection, upstream)
        pump.join()


def copy(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


LOG = sys.argv[1]
WANT_AUTH = None
UPSTREAM = None
args = sys.argv[2:]
while args:
    if args[0] == "--user":
        WANT_AUTH = "Basic " + base64.b64encode(args[1].encode()).decode()
    elif args[0] == "--upstream":
        UPSTREAM = args[1]
    else:
        sys.exit(f"connect_proxy.py: unknown argument {args[0]}")
    args = args[2:]
with Server(("127.0.0.1", 0), Handler) as server:
    print(server.server_address[1], flush=True)
    server.serve_forever()
